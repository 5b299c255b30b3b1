//! Calls: torch functions and tensor methods become graph nodes, standard `nn.Module`s become
//! their functional form over lifted parameters, and builtins on known values fold at trace time.

use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};

use fx::{Arg, Target};

use crate::error::TraceError;
use crate::guards::Check;
use crate::output::TensorValue;

use super::ops::is_nn_module;
use super::vars::Var;
use super::Frame;

/// Torch functions that create tensors without a tensor argument.
const FACTORIES: &[&str] = &[
    "zeros",
    "ones",
    "empty",
    "full",
    "rand",
    "randn",
    "randint",
    "arange",
    "linspace",
    "logspace",
    "eye",
    "tensor",
    "as_tensor",
    "zeros_like",
    "ones_like",
    "empty_like",
    "full_like",
    "rand_like",
    "randn_like",
    "scalar_tensor",
    "empty_strided",
    "tril_indices",
    "triu_indices",
];

/// Tensor methods that read data into Python: their result depends on values, not metadata.
const DATA_DEPENDENT: &[&str] = &[
    "item",
    "tolist",
    "numpy",
    "__bool__",
    "__int__",
    "__float__",
    "__index__",
    "nonzero",
    "data_ptr",
    "untyped_storage",
    "storage",
    "backward",
    "register_hook",
    "retain_grad",
    "unique",
];

/// In-place ops that change a tensor's sizes or strides: every tracker of that tensor would
/// have to learn the new metadata, so they are left to run natively.
const SHAPE_IN_PLACE: &[&str] = &[
    "unsqueeze_",
    "squeeze_",
    "transpose_",
    "t_",
    "swapdims_",
    "swapaxes_",
    "resize_",
    "resize_as_",
    "as_strided_",
    "set_",
    "squeeze_",
    "permute_",
];

/// Builtins that are pure functions of their (known) arguments.
const FOLDABLE_BUILTINS: &[&str] = &[
    "len",
    "abs",
    "min",
    "max",
    "sum",
    "int",
    "float",
    "bool",
    "str",
    "round",
    "isinstance",
    "issubclass",
    "range",
    "tuple",
    "list",
    "divmod",
    "pow",
    "type",
    "hasattr",
    "callable",
    "repr",
    "all",
    "any",
    "sorted",
    "reversed",
    "enumerate",
    "zip",
    "dict",
    "frozenset",
    "set",
    "hash",
    "chr",
    "ord",
];

impl Frame<'_, '_> {
    pub(super) fn call(
        &mut self,
        f: Var,
        args: Vec<Var>,
        kwargs: Vec<(String, Var)>,
    ) -> Result<Var, TraceError> {
        let py = self.tx.py;
        match f {
            Var::Method { recv, name } => match *recv {
                Var::Tensor(t) => self.tensor_method(t, &name, args, kwargs),
                Var::List(l) => self.list_method(l, &name, args),
                Var::Dict(d) => self.dict_method(d, &name, args, kwargs),
                other => {
                    // Methods of tuples, dicts and sizes are pure: fold on the Python value.
                    let obj = other.as_py(py).ok_or_else(|| {
                        TraceError::unsupported(format!(
                            "method {name} of a {}",
                            other.type_name(py)
                        ))
                    })?;
                    let m = obj.getattr(name.as_str())?;
                    self.call_py(&m, None, args, kwargs)
                }
            },
            Var::Py(obj, src) => {
                let obj = obj.bind(py).clone();
                self.call_py(&obj, src, args, kwargs)
            }
            Var::Function(f) => self.inline_call(&f, args, kwargs),
            Var::GradModeExit { restore } => {
                self.tx.output.set_grad_mode(py, restore)?;
                Ok(Var::none(py))
            }
            Var::BoundMethod { func, self_ } => {
                let mut all = vec![*self_];
                all.extend(args);
                self.call(*func, all, kwargs)
            }
            other => Err(TraceError::unsupported(format!(
                "calling a {}",
                other.type_name(py)
            ))),
        }
    }

    fn call_py(
        &mut self,
        f: &Bound<'_, PyAny>,
        src: Option<crate::source::Source>,
        args: Vec<Var>,
        kwargs: Vec<(String, Var)>,
    ) -> Result<Var, TraceError> {
        let py = self.tx.py;
        if is_nn_module(py, f)? {
            return self.call_module(f, src, args, kwargs);
        }
        let module: String = f
            .getattr(intern!(py, "__module__"))
            .ok()
            .and_then(|m| m.extract().ok())
            .unwrap_or_default();
        let name: String = f
            .getattr(intern!(py, "__name__"))
            .ok()
            .and_then(|m| m.extract().ok())
            .unwrap_or_default();
        let has_tensor = args
            .iter()
            .chain(kwargs.iter().map(|(_, v)| v))
            .any(contains_tensor);
        if name == "is_compiling"
            && (module == "torchferro.compiler"
                || module.starts_with("torch.compiler")
                || module.starts_with("torch._dynamo"))
        {
            return Ok(Var::py_const(py, true));
        }
        if f.hasattr(intern!(py, "_torchferro_graph_break"))
            .unwrap_or(false)
        {
            return Err(TraceError::unsupported("torchferro.graph_break()"));
        }
        if f.hasattr(intern!(py, "_torchferro_disabled"))
            .unwrap_or(false)
        {
            return Err(TraceError::unsupported(format!(
                "call to {name}, disabled with torchferro.compiler.disable"
            )));
        }

        // Unbound tensor methods (`torch.Tensor.add(x, y)`) are method calls.
        let tensor_type = py.import("torch")?.getattr("Tensor")?;
        if let Ok(owner) = f.getattr(intern!(py, "__objclass__")) {
            if owner.is(&tensor_type) {
                if let Some(Var::Tensor(t)) = args.first().cloned() {
                    return self.tensor_method(t, &name, args[1..].to_vec(), kwargs);
                }
            }
        }
        if let Ok(owner) = f.getattr(intern!(py, "__self__")) {
            if !owner.is_none()
                && super::ops::is_immutable_const(&owner)
                && f.get_type()
                    .name()
                    .map(|n| n == "builtin_function_or_method")
                    .unwrap_or(false)
            {
                if let Some(r) = self.fold(f, &args, &kwargs)? {
                    return Ok(r);
                }
            }
        }
        if let Some(v) = self.grad_mode_call(f, &args)? {
            return Ok(v);
        }
        if (module == "_operator" || module == "operator") && kwargs.is_empty() && !name.is_empty()
        {
            return self.operator(name.trim_start_matches("__").trim_end_matches("__"), args);
        }
        let is_torch =
            (module == "torch" || module.starts_with("torch.") || module.starts_with("torch._C"))
                && !module.starts_with("torch.nn.modules");
        if is_torch && (has_tensor || FACTORIES.contains(&name.as_str())) {
            if module.starts_with("torch._dynamo")
                || module.starts_with("torch.compiler")
                || name == "compile"
            {
                return Err(TraceError::unsupported(format!("calling {module}.{name}")));
            }
            let path = callable_path(py, f, &module, &name);
            let gargs = args
                .iter()
                .map(|a| a.to_arg(py))
                .collect::<Result<Vec<_>, _>>()?;
            let gkw = kwargs
                .iter()
                .map(|(k, v)| Ok((k.clone(), v.to_arg(py)?)))
                .collect::<Result<Vec<_>, TraceError>>()?;
            return self.graph_call(&name, Target::Function(path), Some(f), gargs, gkw);
        }
        if module == "builtins" && FOLDABLE_BUILTINS.contains(&name.as_str()) {
            return self.call_builtin(f, &name, args, kwargs);
        }
        if (module == "math" || is_torch) && !has_tensor {
            if let Some(r) = self.fold(f, &args, &kwargs)? {
                return Ok(r);
            }
        }
        if let Some(r) = self.call_user_callable(f, src.as_ref(), &args, &kwargs)? {
            return Ok(r);
        }
        let what = if module.is_empty() {
            name.clone()
        } else {
            format!("{module}.{name}")
        };
        let kind = if f
            .get_type()
            .name()
            .map(|n| n == "function")
            .unwrap_or(false)
        {
            "call to the user function"
        } else {
            "call to"
        };
        Err(TraceError::unsupported(format!("{kind} {what}")))
    }

    /// `torch.no_grad()`, `torch.enable_grad()` and `torch.set_grad_enabled(b)` become grad-mode
    /// regions of the graph instead of being run (constructing `set_grad_enabled` changes the
    /// global mode, which tracing must never do for real).
    fn grad_mode_call(
        &mut self,
        f: &Bound<'_, PyAny>,
        args: &[Var],
    ) -> Result<Option<Var>, TraceError> {
        let py = self.tx.py;
        let torch = py.import("torch")?;
        if f.is(&torch.getattr("no_grad")?) && args.is_empty() {
            return Ok(Some(Var::GradMode {
                enabled: false,
                prev: None,
            }));
        }
        // The traced region's grad mode, not the tracer's own.
        if f.is(&torch.getattr("is_grad_enabled")?) && args.is_empty() {
            return Ok(Some(Var::py_const(py, self.tx.output.grad_enabled())));
        }
        if f.is(&torch.getattr("enable_grad")?) && args.is_empty() {
            return Ok(Some(Var::GradMode {
                enabled: true,
                prev: None,
            }));
        }
        if f.is(&torch.getattr("set_grad_enabled")?) {
            let [mode] = args else {
                return Err(TraceError::unsupported(
                    "torch.set_grad_enabled with these arguments",
                ));
            };
            let enabled: bool = mode
                .as_py(py)
                .ok_or_else(|| TraceError::unsupported("a grad mode that is a tensor"))?
                .extract()?;
            let prev = self.tx.output.grad_enabled();
            self.tx.output.set_grad_mode(py, enabled)?;
            return Ok(Some(Var::GradMode {
                enabled,
                prev: Some(prev),
            }));
        }
        Ok(None)
    }

    /// Inlines user functions, bound methods and `functools.partial` objects; `None` if `f` is
    /// none of these.
    fn call_user_callable(
        &mut self,
        f: &Bound<'_, PyAny>,
        src: Option<&crate::source::Source>,
        args: &[Var],
        kwargs: &[(String, Var)],
    ) -> Result<Option<Var>, TraceError> {
        let py = self.tx.py;
        let f = f.clone().unbind().into_bound(py);
        let types = py.import("types")?;
        if f.is_instance(&types.getattr("FunctionType")?)? {
            if !self.inlinable(&f)? {
                return Ok(None);
            }
            let fv = self.function_of(&f, src)?;
            return Ok(Some(self.inline_call(
                &fv,
                args.to_vec(),
                kwargs.to_vec(),
            )?));
        }
        if f.is_instance(&types.getattr("MethodType")?)? {
            let func = f.getattr("__func__")?;
            let this = f.getattr("__self__")?;
            let this = self.tx.wrap(this, src.map(|s| s.attr(py, "__self__")))?;
            let func = self.tx.wrap(func, src.map(|s| s.attr(py, "__func__")))?;
            let mut all = vec![this];
            all.extend(args.iter().cloned());
            return Ok(Some(self.call(func, all, kwargs.to_vec())?));
        }
        if f.is_instance(&py.import("functools")?.getattr("partial")?)? {
            let func = self
                .tx
                .wrap(f.getattr("func")?, src.map(|s| s.attr(py, "func")))?;
            let pargs = self
                .tx
                .wrap(f.getattr("args")?, src.map(|s| s.attr(py, "args")))?;
            let pkw = self
                .tx
                .wrap(f.getattr("keywords")?, src.map(|s| s.attr(py, "keywords")))?;
            let mut all = pargs
                .items(py)
                .ok_or_else(|| TraceError::internal("partial args"))?;
            all.extend(args.iter().cloned());
            let mut kw: Vec<(String, Var)> = match pkw {
                Var::Dict(d) => d
                    .borrow()
                    .iter()
                    .map(|(k, v)| Ok((k.bind(py).extract::<String>()?, v.clone())))
                    .collect::<Result<_, TraceError>>()?,
                _ => Vec::new(),
            };
            for (k, v) in kwargs {
                kw.retain(|(k2, _)| k2 != k);
                kw.push((k.clone(), v.clone()));
            }
            return Ok(Some(self.call(func, all, kw)?));
        }
        Ok(None)
    }

    /// User code is inlined; torch's and the standard library's Python functions are not.
    fn inlinable(&self, f: &Bound<'_, PyAny>) -> Result<bool, TraceError> {
        let py = self.tx.py;
        let filename: String = f.getattr("__code__")?.getattr("co_filename")?.extract()?;
        // torch.nn's own module code is inlined like user code (its helpers call torch ops).
        Ok((!crate::skipfiles::is_skipped(py, &filename)
            || filename.contains("/torch/nn/modules/"))
            && !filename.starts_with("<frozen"))
    }

    /// Calls `f` for real on known Python values (pure functions only).
    fn fold(
        &mut self,
        f: &Bound<'_, PyAny>,
        args: &[Var],
        kwargs: &[(String, Var)],
    ) -> Result<Option<Var>, TraceError> {
        let py = self.tx.py;
        // An iterator or generator would be consumed at trace time, not by the program.
        if args
            .iter()
            .any(|a| matches!(a, Var::Py(o, _) if o.bind(py).hasattr("__next__").unwrap_or(false)))
        {
            return Ok(None);
        }
        let vals: Option<Vec<_>> = args.iter().map(|a| a.as_py(py)).collect();
        let Some(vals) = vals else { return Ok(None) };
        let kw = PyDict::new(py);
        for (k, v) in kwargs {
            let Some(v) = v.as_py(py) else {
                return Ok(None);
            };
            kw.set_item(k, v)?;
        }
        let r = f
            .call(PyTuple::new(py, vals)?, Some(&kw))
            .map_err(|e| TraceError::UserError {
                call: f.repr().map(|r| r.to_string()).unwrap_or_default(),
                message: e.to_string(),
                error: e,
            })?;
        Ok(Some(self.tx.wrap(r, None)?))
    }

    fn call_builtin(
        &mut self,
        f: &Bound<'_, PyAny>,
        name: &str,
        args: Vec<Var>,
        kwargs: Vec<(String, Var)>,
    ) -> Result<Var, TraceError> {
        let py = self.tx.py;
        // Module containers iterate as their children (with sources), so builtins see a list.
        let args: Vec<Var> = if matches!(
            name,
            "enumerate" | "zip" | "reversed" | "list" | "tuple" | "len"
        ) {
            let mut out = Vec::new();
            for a in args {
                match &a {
                    Var::Py(o, Some(src))
                        if super::ops::is_nn_module(py, o.bind(py))? && name != "len" =>
                    {
                        let items = self.module_children(o.bind(py).clone(), src.clone())?;
                        out.push(Var::list(items));
                    }
                    _ => out.push(a),
                }
            }
            out
        } else {
            args
        };
        match (name, args.as_slice()) {
            ("getattr", [obj, name]) | ("getattr", [obj, name, _]) => {
                let n: String = name
                    .as_py(py)
                    .ok_or_else(|| TraceError::unsupported("getattr with a computed name"))?
                    .extract()?;
                return match self.getattr(obj.clone(), &n) {
                    Ok(v) => Ok(v),
                    Err(e) if args.len() == 3 && has_no_attr(py, obj, &n) => {
                        let _ = e;
                        Ok(args[2].clone())
                    }
                    Err(e) => Err(e),
                };
            }
            ("hasattr", [obj, name]) => {
                let n: String = name
                    .as_py(py)
                    .ok_or_else(|| TraceError::unsupported("hasattr with a computed name"))?
                    .extract()?;
                if let Var::Tensor(_) = obj {
                    let t = py.import("torch")?.getattr("Tensor")?;
                    return Ok(Var::py_const(py, t.hasattr(n.as_str())?));
                }
                if let Var::Py(o, _) = obj {
                    if self.tx.effects.attr(py, o, &n).is_some() {
                        return Ok(Var::py_const(py, true));
                    }
                }
                return Ok(Var::py_const(py, !has_no_attr(py, obj, &n)));
            }
            ("len", [Var::Tensor(t)]) => {
                let n = t
                    .meta
                    .sizes
                    .first()
                    .and_then(|d| d.known())
                    .ok_or_else(|| TraceError::unsupported("len() of a 0-d tensor"))?;
                return Ok(Var::py_const(py, n));
            }
            ("len", [v]) if v.items(py).is_some() => {
                return Ok(Var::py_const(py, v.items(py).unwrap().len() as i64))
            }
            ("isinstance", [Var::Tensor(_), cls]) => {
                let tensor = py.import("torch")?.getattr("Tensor")?;
                let cls = cls
                    .as_py(py)
                    .ok_or_else(|| TraceError::unsupported("isinstance with an unknown class"))?;
                let r = py
                    .import("builtins")?
                    .getattr("issubclass")?
                    .call1((tensor, cls))?;
                return self.tx.wrap(r, None);
            }
            ("tuple", [v]) | ("list", [v]) if v.items(py).is_some() => {
                let items = v.items(py).unwrap();
                return Ok(if name == "tuple" {
                    Var::Tuple(items)
                } else {
                    Var::list(items)
                });
            }
            ("reversed", [v]) if kwargs.is_empty() && v.items(py).is_some() => {
                return Ok(Var::list(v.items(py).unwrap().into_iter().rev().collect()));
            }
            ("enumerate", [v]) | ("enumerate", [v, _]) if v.items(py).is_some() => {
                let start = args
                    .get(1)
                    .or_else(|| kwargs.iter().find(|(k, _)| k == "start").map(|(_, v)| v))
                    .map(|s| {
                        s.as_py(py)
                            .ok_or_else(|| TraceError::unsupported("enumerate with a tensor start"))
                    })
                    .transpose()?
                    .map(|s| s.extract::<i64>())
                    .transpose()?
                    .unwrap_or(0);
                let items = v.items(py).unwrap();
                return Ok(Var::list(
                    items
                        .into_iter()
                        .enumerate()
                        .map(|(i, x)| Var::Tuple(vec![Var::py_const(py, start + i as i64), x]))
                        .collect(),
                ));
            }
            ("zip", seqs) if !seqs.is_empty() && seqs.iter().all(|s| s.items(py).is_some()) => {
                let lists: Vec<Vec<Var>> = seqs.iter().map(|s| s.items(py).unwrap()).collect();
                let n = lists.iter().map(|l| l.len()).min().unwrap_or(0);
                return Ok(Var::list(
                    (0..n)
                        .map(|i| Var::Tuple(lists.iter().map(|l| l[i].clone()).collect()))
                        .collect(),
                ));
            }
            _ => {}
        }
        if let Some(r) = self.fold(f, &args, &kwargs)? {
            return Ok(r);
        }
        Err(TraceError::unsupported(format!(
            "builtin {name}() on these arguments"
        )))
    }

    fn dict_method(
        &mut self,
        d: super::vars::DictItems,
        name: &str,
        args: Vec<Var>,
        kwargs: Vec<(String, Var)>,
    ) -> Result<Var, TraceError> {
        let py = self.tx.py;
        let key_of = |v: &Var| -> Result<Bound<'_, PyAny>, TraceError> {
            v.as_py(py)
                .ok_or_else(|| TraceError::unsupported("a dict key that is a tensor"))
        };
        let find = |d: &[(Py<PyAny>, Var)], k: &Bound<'_, PyAny>| {
            d.iter()
                .position(|(k2, _)| k2.bind(py).eq(k).unwrap_or(false))
        };
        let mutating = matches!(name, "pop" | "update" | "setdefault" | "clear" | "popitem");
        if mutating {
            self.tx.note_dict_mutation(&d);
        }
        match (name, args.as_slice()) {
            ("get", [k]) | ("get", [k, _]) => {
                let k = key_of(k)?;
                let b = d.borrow();
                Ok(match find(&b, &k) {
                    Some(i) => b[i].1.clone(),
                    None => args.get(1).cloned().unwrap_or_else(|| Var::none(py)),
                })
            }
            ("pop", [k]) | ("pop", [k, _]) => {
                let k = key_of(k)?;
                let mut b = d.borrow_mut();
                match find(&b, &k) {
                    Some(i) => Ok(b.remove(i).1),
                    None => args.get(1).cloned().ok_or_else(|| {
                        TraceError::unsupported(
                            "dict.pop of a missing key (the frame raises KeyError)",
                        )
                    }),
                }
            }
            ("setdefault", [k, v]) => {
                let key = key_of(k)?;
                let mut b = d.borrow_mut();
                match find(&b, &key) {
                    Some(i) => Ok(b[i].1.clone()),
                    None => {
                        b.push((key.unbind(), v.clone()));
                        Ok(v.clone())
                    }
                }
            }
            ("keys", []) => Ok(Var::list(
                d.borrow()
                    .iter()
                    .map(|(k, _)| Var::Py(k.clone_ref(py), None))
                    .collect(),
            )),
            ("values", []) => Ok(Var::list(
                d.borrow().iter().map(|(_, v)| v.clone()).collect(),
            )),
            ("items", []) => Ok(Var::list(
                d.borrow()
                    .iter()
                    .map(|(k, v)| Var::Tuple(vec![Var::Py(k.clone_ref(py), None), v.clone()]))
                    .collect(),
            )),
            ("copy", []) => Ok(Var::Dict(std::rc::Rc::new(std::cell::RefCell::new(
                d.borrow().clone(),
            )))),
            ("update", [Var::Dict(_)]) | ("update", []) => {
                let mut other: Vec<(Py<PyAny>, Var)> = match args.first() {
                    Some(Var::Dict(o)) => o.borrow().clone(),
                    _ => Vec::new(),
                };
                for (k, v) in &kwargs {
                    other.push((k.as_str().into_pyobject(py)?.into_any().unbind(), v.clone()));
                }
                let mut b = d.borrow_mut();
                for (k, v) in other {
                    match find(&b, k.bind(py)) {
                        Some(i) => b[i].1 = v,
                        None => b.push((k, v)),
                    }
                }
                Ok(Var::none(py))
            }
            _ => Err(TraceError::unsupported(format!(
                "dict.{name} with these arguments"
            ))),
        }
    }

    fn list_method(
        &mut self,
        l: std::rc::Rc<std::cell::RefCell<Vec<Var>>>,
        name: &str,
        args: Vec<Var>,
    ) -> Result<Var, TraceError> {
        let py = self.tx.py;
        let mutating = matches!(
            name,
            "append" | "extend" | "insert" | "pop" | "clear" | "reverse" | "remove" | "sort"
        );
        if mutating {
            self.tx.note_list_mutation(&l);
        }
        match (name, args.as_slice()) {
            ("append", [v]) => {
                l.borrow_mut().push(v.clone());
                Ok(Var::none(py))
            }
            ("extend", [v]) => {
                let items = v
                    .items(py)
                    .ok_or_else(|| TraceError::unsupported("list.extend with a non-sequence"))?;
                l.borrow_mut().extend(items);
                Ok(Var::none(py))
            }
            ("pop", []) => l
                .borrow_mut()
                .pop()
                .ok_or_else(|| TraceError::unsupported("pop from an empty list")),
            ("insert", [i, v]) => {
                let i: i64 = i
                    .as_py(py)
                    .ok_or_else(|| TraceError::unsupported("list.insert index"))?
                    .extract()?;
                let mut b = l.borrow_mut();
                let n = b.len() as i64;
                let i = if i < 0 { (i + n).max(0) } else { i.min(n) };
                b.insert(i as usize, v.clone());
                Ok(Var::none(py))
            }
            ("reverse", []) => {
                l.borrow_mut().reverse();
                Ok(Var::none(py))
            }
            _ => {
                let obj = Var::List(l.clone()).as_py(py).ok_or_else(|| {
                    TraceError::unsupported(format!("list.{name} on a list of tensors"))
                })?;
                if mutating {
                    return Err(TraceError::unsupported(format!("list.{name}")));
                }
                let m = obj.getattr(name)?;
                self.call_py(&m, None, args, vec![])
            }
        }
    }

    pub(super) fn tensor_method(
        &mut self,
        t: TensorValue,
        name: &str,
        args: Vec<Var>,
        kwargs: Vec<(String, Var)>,
    ) -> Result<Var, TraceError> {
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
            "size" | "stride" => {
                let vals = if name == "size" {
                    meta.known_sizes()
                } else {
                    meta.known_strides()
                };
                let vals = vals.ok_or_else(|| TraceError::unsupported("symbolic shapes"))?;
                return match int_arg(args.first().or(dim_kw))? {
                    Some(d) => Ok(Var::py_const(py, vals[norm(d, vals.len())?])),
                    None if name == "size" => Ok(Var::Size(vals)),
                    None => Ok(Var::Tuple(
                        vals.into_iter().map(|v| Var::py_const(py, v)).collect(),
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
                let (Some(sizes), Some(strides)) = (meta.known_sizes(), meta.known_strides())
                else {
                    return Err(TraceError::unsupported("symbolic shapes"));
                };
                let mut expected = 1i64;
                let mut ok = true;
                for i in (0..sizes.len()).rev() {
                    if sizes[i] != 1 && strides[i] != expected {
                        ok = false;
                    }
                    expected *= sizes[i];
                }
                return Ok(Var::py_const(py, ok || sizes.contains(&0)));
            }
            "get_device" => return Ok(Var::py_const(py, meta.device.index.unwrap_or(-1))),
            _ => {}
        }
        if SHAPE_IN_PLACE.contains(&name) {
            return Err(TraceError::unsupported(format!(
                "Tensor.{name}() (it changes the tensor's shape in place)"
            )));
        }
        if DATA_DEPENDENT.contains(&name) {
            return Err(TraceError::unsupported(format!(
                "Tensor.{name}() (its result depends on tensor data)"
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
        self.graph_call(name, Target::Method(name.to_string()), None, gargs, gkw)
    }

    /// Calls a standard torch.nn layer as its functional form, with parameters lifted as graph
    /// inputs. User-defined modules are inlined in issue 3; until then they are unsupported.
    fn call_module(
        &mut self,
        m: &Bound<'_, PyAny>,
        src: Option<crate::source::Source>,
        args: Vec<Var>,
        kwargs: Vec<(String, Var)>,
    ) -> Result<Var, TraceError> {
        let py = self.tx.py;
        let ty = m.get_type();
        let tyname = ty.name()?.to_string();
        let tymod: String = ty.getattr("__module__")?.extract()?;
        if has_hooks(py, m)? {
            return Err(TraceError::unsupported(format!(
                "calling {tyname}, which has hooks"
            )));
        }
        if !tymod.starts_with("torch.nn.modules") {
            return self.inline_forward(m, src, args, kwargs);
        }
        let Some(src) = src else {
            return Err(TraceError::unsupported(format!(
                "calling a {tyname} with no source"
            )));
        };
        // The training flag changes what several layers compute: guard it.
        let training = m.getattr("training")?;
        self.tx.guards.add(
            py,
            &src.attr(py, "training"),
            Check::Equals(training.clone().unbind()),
        );
        let training: bool = training.extract()?;
        let mvar = Var::Py(m.clone().unbind(), Some(src));
        let attr = |s: &mut Self, n: &str| s.getattr(mvar.clone(), n);
        let f = py.import("torch.nn.functional")?;
        let x = args
            .first()
            .cloned()
            .ok_or_else(|| TraceError::unsupported(format!("calling {tyname} with no input")))?;
        if (args.len() != 1 || !kwargs.is_empty()) && tyname != "Sequential" {
            return Err(TraceError::unsupported(format!(
                "calling {tyname} with these arguments"
            )));
        }
        let fcall = |s: &mut Self,
                     fname: &str,
                     fargs: Vec<Var>,
                     fkw: Vec<(&str, Var)>|
         -> Result<Var, TraceError> {
            let func = f.getattr(fname)?;
            let kw = fkw.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
            s.call_py(&func, None, fargs, kw)
        };
        let c = |_: &Self, n: &str| -> Result<Var, TraceError> {
            Ok(Var::Py(m.getattr(n)?.unbind(), None))
        };
        match tyname.as_str() {
            "Linear" => {
                let w = attr(self, "weight")?;
                let b = attr(self, "bias")?;
                fcall(self, "linear", vec![x, w, b], vec![])
            }
            "LayerNorm" => {
                let w = attr(self, "weight")?;
                let b = attr(self, "bias")?;
                let shape = c(self, "normalized_shape")?;
                let eps = c(self, "eps")?;
                fcall(self, "layer_norm", vec![x, shape, w, b, eps], vec![])
            }
            "ReLU" => fcall(self, "relu", vec![x], vec![]),
            "GELU" => {
                let a = c(self, "approximate")?;
                fcall(self, "gelu", vec![x], vec![("approximate", a)])
            }
            "SiLU" => fcall(self, "silu", vec![x], vec![]),
            "Sigmoid" => self.call_py(
                &py.import("torch")?.getattr("sigmoid")?,
                None,
                vec![x],
                vec![],
            ),
            "Tanh" => self.call_py(&py.import("torch")?.getattr("tanh")?, None, vec![x], vec![]),
            "Identity" => Ok(x),
            "Dropout" => {
                let p = c(self, "p")?;
                fcall(
                    self,
                    "dropout",
                    vec![x, p, Var::py_const(py, training)],
                    vec![],
                )
            }
            "Softmax" | "LogSoftmax" => {
                let dim = c(self, "dim")?;
                fcall(
                    self,
                    if tyname == "Softmax" {
                        "softmax"
                    } else {
                        "log_softmax"
                    },
                    vec![x],
                    vec![("dim", dim)],
                )
            }
            "Sequential" => {
                let children: Vec<String> = m
                    .getattr("_modules")?
                    .call_method0("keys")?
                    .try_iter()?
                    .map(|k| k.and_then(|k| k.extract()))
                    .collect::<PyResult<_>>()?;
                let mut cur = x;
                let mut first = true;
                for name in children {
                    let child = attr(self, &name)?;
                    cur = if first {
                        self.call(child, args.clone(), kwargs.clone())?
                    } else {
                        self.call(child, vec![cur], vec![])?
                    };
                    first = false;
                }
                Ok(cur)
            }
            _ => self.inline_forward(m, Some(mvar_source(&mvar)), args, kwargs),
        }
    }

    /// `module(*args)` without hooks is `type(module).forward(module, *args)`: inline it.
    fn inline_forward(
        &mut self,
        m: &Bound<'_, PyAny>,
        src: Option<crate::source::Source>,
        args: Vec<Var>,
        kwargs: Vec<(String, Var)>,
    ) -> Result<Var, TraceError> {
        let py = self.tx.py;
        let forward = m.get_type().getattr("forward")?;
        let types = py.import("types")?;
        if !forward.is_instance(&types.getattr("FunctionType")?)? {
            return Err(TraceError::unsupported(format!(
                "calling a {} whose forward is not a Python function",
                m.get_type().name()?
            )));
        }
        let this = match &src {
            Some(s) => self
                .tx
                .wrap(m.clone().unbind().into_bound(py), Some(s.clone()))?,
            None => Var::Py(m.clone().unbind(), None),
        };
        let fv = self.function_of(&forward.unbind().into_bound(py), None)?;
        let mut all = vec![this];
        all.extend(args);
        self.inline_call(&fv, all, kwargs)
    }
}

/// Whether reading `name` from a known object fails (for `getattr` defaults and `hasattr`).
fn has_no_attr(py: Python<'_>, obj: &Var, name: &str) -> bool {
    match obj.as_py(py) {
        Some(o) => !o.hasattr(name).unwrap_or(false),
        None => false,
    }
}

fn mvar_source(v: &Var) -> crate::source::Source {
    match v {
        Var::Py(_, Some(s)) => s.clone(),
        _ => unreachable!("module calls carry their source"),
    }
}

fn contains_tensor(v: &Var) -> bool {
    match v {
        Var::Tensor(_) => true,
        Var::Tuple(items) => items.iter().any(contains_tensor),
        Var::List(items) => items.borrow().iter().any(contains_tensor),
        _ => false,
    }
}

fn has_hooks(py: Python<'_>, m: &Bound<'_, PyAny>) -> PyResult<bool> {
    for attr in [
        "_forward_hooks",
        "_forward_pre_hooks",
        "_backward_hooks",
        "_backward_pre_hooks",
    ] {
        if let Ok(d) = m.getattr(attr) {
            if d.len().unwrap_or(0) > 0 {
                return Ok(true);
            }
        }
    }
    let hooks = py.import("torch.nn.modules.module")?;
    for g in [
        "_global_forward_hooks",
        "_global_forward_pre_hooks",
        "_global_backward_hooks",
    ] {
        if let Ok(d) = hooks.getattr(g) {
            if d.len().unwrap_or(0) > 0 {
                return Ok(true);
            }
        }
    }
    Ok(false)
}

/// A Python path that names `f` (`torch.relu`, `torch.nn.functional.linear`), for printing.
fn callable_path(py: Python<'_>, f: &Bound<'_, PyAny>, module: &str, name: &str) -> String {
    let _ = (py, f);
    let module = if module.starts_with("torch._C") {
        "torch"
    } else {
        module
    };
    format!("{module}.{name}")
}
