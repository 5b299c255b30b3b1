//! Tensor methods: metadata queries fold at trace time, other methods become graph nodes.

use pyo3::prelude::*;
use pyo3::types::PyType;

use fx::{Arg, Target};

use crate::error::TraceError;
use crate::output::TensorValue;

use crate::interp::vars::Var;
use crate::interp::Frame;

/// Torch functions that create tensors without a tensor argument: the op catalog's factories
/// (`fx::ops`). A value with `contains`, so callers read it as the list it replaced.
pub(super) const FACTORIES: Factories = Factories;

pub(super) struct Factories;

impl Factories {
    pub(super) fn contains(&self, name: &&str) -> bool {
        fx::ops::is_factory(name)
    }
}

/// Tensor methods that read data into Python: their result depends on values, not metadata
/// (the catalog's `DATA_DEPENDENT` rows).
fn data_dependent(name: &str) -> bool {
    fx::ops::op(name).is_some_and(|o| o.flags & fx::ops::flag::DATA_DEPENDENT != 0)
}

impl Frame<'_, '_> {
    pub(super) fn tensor_method(
        &mut self,
        t: TensorValue,
        name: &str,
        args: Vec<Var>,
        kwargs: Vec<(String, Var)>,
    ) -> Result<Var, TraceError> {
        if let Some(r) = self.addc_with_tensor_value(&t, name, &args, &kwargs)? {
            return Ok(r);
        }
        let py = self.tx.py;
        let meta = &t.meta;
        let int_arg = |v: Option<&Var>| -> Result<Option<i64>, TraceError> {
            match v {
                None => Ok(None),
                Some(v) => Ok(Some(
                    v.as_py(py)
                        .ok_or_else(|| TraceError::unsupported("a tensor dim argument"))?
                        .extract()?,
                )),
            }
        };
        let dim_kw = kwargs.iter().find(|(k, _)| k == "dim").map(|(_, v)| v);
        let norm = |d: i64, n: usize| -> Result<usize, TraceError> {
            let n = n as i64;
            let r = if d < 0 { d + n } else { d };
            if r < 0 || r >= n.max(1) {
                return Err(TraceError::unsupported(
                    "a dim out of range (the frame raises IndexError)",
                ));
            }
            Ok(r as usize)
        };
        match name {
            "untyped_storage" if args.is_empty() && kwargs.is_empty() => {
                return Ok(Var::Storage(t));
            }
            "size" if meta.known_sizes().is_none() => {
                return match int_arg(args.first().or(dim_kw))? {
                    Some(d) => {
                        let d = norm(d, meta.ndim())?;
                        self.size_of(&t, d)
                    }
                    None => self.shape_of(&t),
                };
            }
            "numel" | "nelement" if meta.known_sizes().is_none() => return self.numel_of(&t),
            // Symbolic strides are symbolic ints (a tuple of them for `stride()`); in a graph
            // with size symbols a size-1 dimension's stride is refused (`stride_of`).
            "stride" if meta.known_strides().is_none() || self.tx.output.is_dynamic() => {
                return match int_arg(args.first().or(dim_kw))? {
                    Some(d) => {
                        let d = norm(d, meta.ndim())?;
                        self.stride_of(&t, d)
                    }
                    None => Ok(Var::Tuple(
                        (0..meta.ndim())
                            .map(|d| self.stride_of(&t, d))
                            .collect::<Result<Vec<_>, _>>()?
                            .into(),
                    )),
                };
            }
            "size" | "stride" => {
                let vals = if name == "size" {
                    meta.known_sizes()
                } else {
                    meta.known_strides()
                };
                let vals = vals.ok_or_else(|| TraceError::unsupported("symbolic shapes"))?;
                return match int_arg(args.first().or(dim_kw))? {
                    Some(d) => Ok(Var::py_const(py, vals[norm(d, vals.len())?])),
                    None if name == "size" => Ok(Var::size_const(py, &vals)),
                    None => Ok(Var::Tuple(
                        vals.into_iter()
                            .map(|v| Var::py_const(py, v))
                            .collect::<Vec<_>>()
                            .into(),
                    )),
                };
            }
            "dim" | "ndimension" => return Ok(Var::py_const(py, meta.ndim() as i64)),
            "numel" | "nelement" => {
                let s = meta
                    .known_sizes()
                    .ok_or_else(|| TraceError::unsupported("symbolic shapes"))?;
                return Ok(Var::py_const(py, s.iter().product::<i64>()));
            }
            "element_size" => return Ok(Var::py_const(py, meta.dtype.itemsize() as i64)),
            "is_floating_point" => return Ok(Var::py_const(py, meta.dtype.is_floating_point())),
            "is_complex" => return Ok(Var::py_const(py, meta.dtype.is_complex())),
            "is_contiguous" if args.is_empty() && kwargs.is_empty() => {
                let ok = known_contiguous(meta)
                    .ok_or_else(|| TraceError::unsupported("symbolic shapes"))?;
                return Ok(Var::py_const(py, ok));
            }
            "get_device" => return Ok(Var::py_const(py, meta.device.index.unwrap_or(-1))),
            // Whether a tensor is an inference tensor is not in its metadata (a `meta` tensor
            // never is one): it runs natively, where torch.compile breaks the graph too.
            "is_inference" => {
                return Err(TraceError::unsupported(
                    "Tensor.is_inference() (known only on the real tensor)",
                ))
            }
            "numpy" => return self.tensor_numpy(t, &args, &kwargs),
            // `t.__setitem__(i, v)` is the item store `t[i] = v` spelled as a call: traced as
            // the subscript store (`operator.setitem`), which functionalization and the
            // derivative rules know, not as a method call the graph can only run as an effect.
            "__setitem__" if args.len() == 2 && kwargs.is_empty() => {
                let mut a = args.into_iter();
                let (key, value) = (a.next().unwrap(), a.next().unwrap());
                self.store_subscript_raw(Var::Tensor(t), key, value)?;
                return Ok(Var::none(py));
            }
            "register_hook" => {
                if let Some(r) = self.traced_tensor_hook(&t, &args, &kwargs)? {
                    return Ok(r);
                }
            }
            _ => {}
        }
        // Those that also change the storage (`resize_`, `set_`, `as_strided_`) run natively;
        // the views of the tensor's own storage are traced (`meta_inplace.rs`).
        if fx::ops::changes_shape_in_place(name) && !super::super::meta_inplace::traced(name) {
            return Err(TraceError::unsupported(format!(
                "Tensor.{name}() (it changes the tensor's shape in place)"
            )));
        }
        if data_dependent(name) {
            return Err(TraceError::unsupported(format!(
                "Tensor.{name}() (its result depends on tensor data)"
            )));
        }
        // `requires_grad_(flag)` that changes the flag runs natively, where torch.compile breaks
        // the graph too; `detach_()` is traced (`meta_inplace.rs`).
        let new_flag = match name {
            "requires_grad_" => match args.first().or_else(|| {
                kwargs
                    .iter()
                    .find(|(k, _)| k == "requires_grad")
                    .map(|(_, v)| v)
            }) {
                None => Some(true),
                Some(v) => v.as_py(py).and_then(|o| o.is_truthy().ok()),
            },
            _ => None,
        };
        if name == "requires_grad_" && new_flag != Some(meta.requires_grad) {
            return Err(TraceError::unsupported(format!(
                "Tensor.{name}() (it changes the tensor's requires_grad in place)"
            )));
        }
        let mut gargs = vec![Arg::Node(t.node)];
        for a in &args {
            gargs.push(a.to_arg(py)?);
        }
        let gkw = kwargs
            .iter()
            .map(|(k, v)| Ok((k.clone(), v.to_arg(py)?)))
            .collect::<Result<Vec<_>, TraceError>>()?;
        let r = self.graph_call(name, Target::Method(name.to_string()), None, gargs, gkw)?;
        if let Var::Tensor(now) = &r {
            if returns_receiver(py, name, meta, &now.meta, &args, &kwargs)?
                || super::identity::returns_input(py, name, meta, &now.meta, &args, &kwargs)
            {
                // Eager hands back the tensor itself (`x.to(x.device) is x`); the node made
                // for it is dead and dropped with the graph's dead code.
                return Ok(Var::Tensor(t));
            }
        }
        if super::super::meta_inplace::traced(name) {
            if let Var::Tensor(now) = &r {
                self.tx.record_meta_change(now);
            }
        }
        Ok(r)
    }
}

impl Frame<'_, '_> {
    /// `t.register_hook(hook)` on a tensor the graph computes, its handle discarded: a graph
    /// node that registers `hook` on the real tensor when the graph runs (`TENSOR_HOOK_TARGET`),
    /// as torch.compile keeps such a hook in its graph instead of breaking there. Registered on
    /// the tensor itself, the hook sees its whole gradient, uses traced before the registration
    /// included. The hook must be one Python object for every call: a function or bound method
    /// read from a guarded source, or a function made in the frame whose defaults and free
    /// variables are known Python values (rebuilt once here; each call of eager makes an equal
    /// one). `None`: not such a call (an input's hook, a closure over a tensor, a kept handle),
    /// which runs natively.
    fn traced_tensor_hook(
        &mut self,
        t: &TensorValue,
        args: &[Var],
        kwargs: &[(String, Var)],
    ) -> Result<Option<Var>, TraceError> {
        let py = self.tx.py;
        let hook_var = match (args, kwargs) {
            ([h], []) => h,
            ([], [(k, h)]) if k == "hook" => h,
            _ => return Ok(None),
        };
        // Eager raises for a tensor that does not require grad; a graph input's hook stays on
        // the input past the call (a side effect the graph does not replay).
        if !t.meta.requires_grad || self.tx.output.graph.placeholders().contains(&t.node) {
            return Ok(None);
        }
        // The handle is dropped at once (`POP_TOP`): the node has no handle to give back.
        let discarded = self
            .code
            .ins
            .get(self.pc)
            .is_some_and(|i| i.op == crate::decode::Op::PopTop);
        if !discarded {
            return Ok(None);
        }
        let Some(hook) = self.stable_hook(hook_var)? else {
            return Ok(None);
        };
        // The graph holds the very objects read: their identity (and a closure's values) is
        // what later calls must have.
        self.tx.realize_identity(hook_var);
        if let Var::Function(f) = hook_var {
            for c in &f.closure {
                self.tx.realize_identity(c);
            }
        }
        let registrar = py
            .import("torchferro._autograd")?
            .getattr("hook_registrar")?
            .call1((hook.bind(py),))?;
        self.opaque_call(
            &registrar,
            crate::output::TENSOR_HOOK_TARGET.to_string(),
            "register_hook",
            &[Var::Tensor(t.clone())],
            &[],
        )?;
        Ok(Some(Var::none(py)))
    }

    /// The Python callable `hook` is on every call of this graph, if it is one object (see
    /// `traced_tensor_hook`).
    fn stable_hook(&self, hook: &Var) -> Result<Option<Py<PyAny>>, TraceError> {
        let py = self.tx.py;
        match hook {
            Var::Py(o, Some(_)) if o.bind(py).is_callable() => Ok(Some(o.clone_ref(py))),
            Var::BoundMethod { func, self_ } => match (func.as_ref(), self_.as_ref()) {
                (Var::Py(f, Some(_)), Var::Py(o, Some(_))) => Ok(Some(
                    py.import("types")?
                        .getattr("MethodType")?
                        .call1((f.bind(py), o.bind(py)))?
                        .unbind(),
                )),
                _ => Ok(None),
            },
            Var::Method { recv, name } => match recv.as_ref() {
                Var::Py(o, Some(_)) => {
                    Ok(o.bind(py).getattr(name.as_str()).ok().map(|m| m.unbind()))
                }
                _ => Ok(None),
            },
            Var::Function(f) => {
                if !f.attrs.borrow().is_empty() {
                    return Ok(None);
                }
                // Free variables holding known Python values (a float, a module, a list read
                // from a guarded source) become real cells holding them: what the graph's
                // guards fix. A tensor or a tracked container is the call's own: not baked.
                // As torch.compile traces the hook where it is registered, a later rebinding
                // of the variable in the frame is not seen by the hook.
                let cell_type = py.import("types")?.getattr("CellType")?;
                let mut cells = Vec::new();
                for c in &f.closure {
                    let content = match c {
                        Var::Cell(cell) => cell.borrow().clone(),
                        other => Some(other.clone()),
                    };
                    let Some(Var::Py(o, _)) = content else {
                        return Ok(None);
                    };
                    cells.push(cell_type.call1((o.bind(py),))?);
                }
                let closure = if cells.is_empty() {
                    py.None().into_bound(py)
                } else {
                    pyo3::types::PyTuple::new(py, cells)?.into_any()
                };
                let Some(defaults) = f
                    .defaults
                    .iter()
                    .map(|d| d.as_py(py))
                    .collect::<Option<Vec<_>>>()
                else {
                    return Ok(None);
                };
                let kwdefaults = pyo3::types::PyDict::new(py);
                for (k, v) in &f.kwdefaults {
                    let Some(v) = v.as_py(py) else {
                        return Ok(None);
                    };
                    kwdefaults.set_item(k, v)?;
                }
                let defaults = if defaults.is_empty() {
                    py.None().into_bound(py)
                } else {
                    pyo3::types::PyTuple::new(py, defaults)?.into_any()
                };
                let function = py.import("types")?.getattr("FunctionType")?.call1((
                    f.code.bind(py),
                    f.globals.bind(py),
                    f.name.as_str(),
                    defaults,
                    closure,
                ))?;
                if !f.kwdefaults.is_empty() {
                    function.setattr("__kwdefaults__", kwdefaults)?;
                }
                Ok(Some(function.unbind()))
            }
            _ => Ok(None),
        }
    }
}

/// Whether a tensor with `meta` is contiguous (size-1 dims' strides do not count, as in
/// torch); `None` for symbolic sizes or strides.
fn known_contiguous(meta: &fx::TensorMeta) -> Option<bool> {
    let (sizes, strides) = (meta.known_sizes()?, meta.known_strides()?);
    let mut expected = 1i64;
    let mut ok = true;
    for i in (0..sizes.len()).rev() {
        if sizes[i] != 1 && strides[i] != expected {
            ok = false;
        }
        expected *= sizes[i];
    }
    Some(ok || sizes.contains(&0))
}

/// The memory format torch suggests for a tensor's strides (`Tensor.suggest_memory_format`):
/// channels-last where the strides order the dims as one (at 4 or 5 dims, size-1 dims and an
/// ambiguous batch stride resolved to channels-first as torch resolves them), else contiguous.
/// `None` for symbolic sizes or strides.
fn suggested_format(meta: &fx::TensorMeta) -> Option<&'static str> {
    let (sizes, strides) = (meta.known_sizes()?, meta.known_strides()?);
    let (order, name): (&[usize], _) = match sizes.len() {
        4 => (&[1, 3, 2, 0], "channels_last"),
        5 => (&[1, 4, 3, 2, 0], "channels_last_3d"),
        _ => return Some("contiguous_format"),
    };
    let channels_last = strides[1] != 0 && {
        let mut min = 0i64;
        order.iter().all(|&d| {
            let ok = sizes[d] != 0 && strides[d] >= min && !(d == 0 && min == strides[1]);
            min = if sizes[d] > 1 {
                strides[d] * sizes[d]
            } else {
                strides[d]
            };
            ok
        })
    };
    Some(if channels_last {
        name
    } else {
        "contiguous_format"
    })
}

/// Whether eager's `tensor.name(*args, **kwargs)` returns the tensor itself: a conversion
/// (`to`, `type`, `float`, `cpu`, ...) to the dtype and device it has, without `copy=True` or
/// a memory format other than `preserve_format` or the one torch suggests for the tensor,
/// and `contiguous()` of a contiguous tensor.
/// A positional `True` may be `copy` (`to(dtype, non_blocking, copy)`): such a call keeps its
/// own result, as does anything this does not recognise.
fn returns_receiver(
    py: Python<'_>,
    name: &str,
    before: &fx::TensorMeta,
    after: &fx::TensorMeta,
    args: &[Var],
    kwargs: &[(String, Var)],
) -> Result<bool, TraceError> {
    const CONVERSIONS: &[&str] = &[
        "to", "type", "float", "double", "half", "bfloat16", "int", "long", "short", "bool",
        "byte", "char", "cpu", "cuda",
    ];
    let truthy = |v: &Var| -> bool {
        v.as_py(py).is_some_and(|o| {
            o.is_instance_of::<pyo3::types::PyBool>() && o.is_truthy().unwrap_or(true)
        })
    };
    if name == "contiguous" {
        let default_format = kwargs.iter().all(|(k, v)| {
            k == "memory_format"
                && v.as_py(py).is_some_and(|o| {
                    py.import("torch")
                        .and_then(|t| t.getattr("contiguous_format"))
                        .is_ok_and(|f| f.is(&o))
                })
        });
        return Ok(args.is_empty() && default_format && known_contiguous(before) == Some(true));
    }
    if !CONVERSIONS.contains(&name) || args.iter().any(truthy) {
        return Ok(false);
    }
    for (k, v) in kwargs {
        match k.as_str() {
            "non_blocking" | "dtype" | "device" => {}
            "copy" if !truthy(v) => {}
            "memory_format" => {
                // Eager aliases when the format asked for is the one torch suggests for the
                // tensor's strides.
                let torch = py.import("torch")?;
                let Some(o) = v.as_py(py) else {
                    return Ok(false);
                };
                let kept = o.is(&torch.getattr("preserve_format")?)
                    || suggested_format(before)
                        .is_some_and(|f| torch.getattr(f).is_ok_and(|f| o.is(&f)));
                if !kept {
                    return Ok(false);
                }
            }
            _ => return Ok(false),
        }
    }
    Ok(before.dtype == after.dtype && before.device == after.device)
}

/// A Python path that names `f` (`torch.relu`, `torch.nn.functional.linear`), for printing.
pub(super) fn callable_path(
    py: Python<'_>,
    f: &Bound<'_, PyAny>,
    module: &str,
    name: &str,
) -> String {
    // A wrapper torch makes around a torch function (`torch.func.vmap(torch.outer)`) carries
    // the wrapped function's name: its path names its own code and object, so that the
    // inductor does not lower it as the function it wraps, and two such wrappers in one graph
    // (their callables are looked up by path) stay apart.
    if let Some((globals, qualname)) = wrapper_code(py, f) {
        if globals != module {
            return format!("{globals}.{qualname}@{:x}", f.as_ptr() as usize);
        }
    }
    let module = if module.starts_with("torch._C") {
        "torch"
    } else {
        module
    };
    format!("{module}.{name}")
}

/// For a Python function made by `functools.wraps` (it has `__wrapped__`): the module its code
/// was written in (its globals' `__name__`) and its code's qualified name.
fn wrapper_code(py: Python<'_>, f: &Bound<'_, PyAny>) -> Option<(String, String)> {
    if !f.is_instance_of::<pyo3::types::PyFunction>() || !f.hasattr("__wrapped__").ok()? {
        return None;
    }
    let globals: String = f
        .getattr(pyo3::intern!(py, "__globals__"))
        .ok()?
        .get_item("__name__")
        .ok()?
        .extract()
        .ok()?;
    let qualname: String = f
        .getattr(pyo3::intern!(py, "__code__"))
        .ok()?
        .getattr("co_qualname")
        .ok()?
        .extract()
        .ok()?;
    Some((globals, qualname))
}

/// The module a user's `functools.wraps` wrapper of a torch function was written in, where its
/// `__module__` (copied from the wrapped function) names torch but its code is not a library's
/// (`skipfiles`); `None` for any other callable.
pub(super) fn dressed_user_wrapper(py: Python<'_>, f: &Bound<'_, PyAny>) -> Option<String> {
    let (globals, _) = wrapper_code(py, f)?;
    let module: String = f.getattr("__module__").ok()?.extract().ok()?;
    if !(module == "torch" || module.starts_with("torch.")) || globals == module {
        return None;
    }
    let file: String = f
        .getattr("__code__")
        .ok()?
        .getattr("co_filename")
        .ok()?
        .extract()
        .ok()?;
    (!crate::skipfiles::is_skipped(py, &file)).then_some(globals)
}

impl<'py> Frame<'_, 'py> {
    /// The callable `tensor.name` resolves to when the program replaced it on `torch.Tensor` (or
    /// its C base), `None` for torch's own method. The lookup through the classes' dicts is
    /// guarded (their version tags: one compare each per call), so a method replaced or restored
    /// between calls is seen.
    pub(super) fn replaced_tensor_method(
        &mut self,
        name: &str,
    ) -> Result<Option<Bound<'py, PyAny>>, TraceError> {
        let py = self.tx.py;
        let tensor = py.import("torch")?.getattr("Tensor")?;
        let tensor = tensor.cast_into::<PyType>().map_err(PyErr::from)?;
        let origin = self.tx.guards.origin.clone();
        for cls in tensor.mro().iter() {
            let cls = cls.cast_into::<PyType>().map_err(PyErr::from)?;
            let found = cls.getattr("__dict__")?.get_item(name).ok();
            if !self
                .tx
                .guards
                .global
                .class_attr(&cls, name, found.as_ref(), origin.clone())
            {
                // A class whose dict cannot be watched: its methods are taken as torch's.
                return Ok(None);
            }
            if let Some(v) = found {
                return Ok(if is_torch_tensor_method(py, &v, name)? {
                    None
                } else {
                    Some(v)
                });
            }
        }
        Ok(None)
    }
}

/// Whether `v`, found as `name` in the dict of `torch.Tensor` or a base class, is torch's own:
/// a C method of the base class under its own name (or a dunder alias such as `__abs__`), or a
/// Python function whose code is torch's. A replacement made with `functools.wraps` copies the
/// name but not the code.
fn is_torch_tensor_method(py: Python<'_>, v: &Bound<'_, PyAny>, name: &str) -> PyResult<bool> {
    if let Ok(code) = v.getattr("__code__") {
        let file: String = code.getattr("co_filename")?.extract()?;
        return Ok(torch_dir(py)?.is_some_and(|d| file.starts_with(d.as_str())));
    }
    if v.hasattr("__objclass__")? {
        let own = v
            .getattr("__name__")
            .and_then(|n| n.extract::<String>())
            .is_ok_and(|n| n == name);
        return Ok(own || (name.starts_with("__") && name.ends_with("__")));
    }
    // Properties, class and static methods, attributes: not a method a program replaces with
    // a function; anything callable other than these is a replacement.
    let types = py.import("builtins")?;
    for kind in ["property", "classmethod", "staticmethod"] {
        if v.is_instance(&types.getattr(kind)?)? {
            return Ok(true);
        }
    }
    Ok(!v.is_callable())
}

/// torch's package directory (with a trailing separator), looked up once.
fn torch_dir(py: Python<'_>) -> PyResult<Option<&'static String>> {
    static DIR: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    if let Some(d) = DIR.get() {
        return Ok(d.as_ref());
    }
    let file: String = py.import("torch")?.getattr("__file__")?.extract()?;
    let dir = std::path::Path::new(&file)
        .parent()
        .map(|p| format!("{}{}", p.display(), std::path::MAIN_SEPARATOR));
    Ok(DIR.get_or_init(|| dir).as_ref())
}
