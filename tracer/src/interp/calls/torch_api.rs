//! Torch's Python-level API that model code calls inside compiled frames and that is neither an
//! op nor pure enough to fold blindly:
//!
//! - `torch._check`, `_check_with`, `_check_index`, `_check_value`, `_check_type`,
//!   `_check_not_implemented` and `_check_is_size` on a condition known at trace time: a passing
//!   check is nothing (its message, often a lambda, is never called, as in eager); a failing one
//!   is left to run natively, which raises eager's error.
//! - `torch.nn` layers constructed inside the frame (`nn.Softmax(dim=1)(x)`): built at trace
//!   time when their arguments are known values and the layer holds no parameters or buffers
//!   and draws nothing from the RNG; the instance is then a constant of the graph and its
//!   `forward` is inlined. A layer with weights (`nn.Linear`) draws its initialisation from the
//!   global RNG on every call, which a trace-time constant cannot repeat: that breaks the graph.
//! - `torch.utils.checkpoint.checkpoint(fn, *args, use_reentrant=False)` with the default
//!   `context_fn`: `fn(*args)`
//!   traced in place, as torch.compile traces it into its graph. The values and gradients are
//!   eager's; which activations are saved for the backward is then the backend's choice (the
//!   memory saving of recomputation is not asked of it).

use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple, PyType};

use crate::error::TraceError;
use crate::interp::vars::Var;
use crate::interp::Frame;

/// The position of the condition among the arguments of each `torch._check*` function.
fn check_condition_index(name: &str) -> Option<usize> {
    match name {
        "_check" | "_check_index" | "_check_value" | "_check_type" | "_check_not_implemented" => {
            Some(0)
        }
        "_check_with" => Some(1),
        _ => None,
    }
}

impl Frame<'_, '_> {
    /// `torch.utils.checkpoint.checkpoint(fn, *args, **kwargs)`: `fn(*args, **kwargs)`, its own
    /// options dropped; `None` for any other call, or a custom `context_fn`.
    pub(super) fn checkpoint_call(
        &mut self,
        f: &Bound<'_, PyAny>,
        module: &str,
        name: &str,
        args: &[Var],
        kwargs: &[(String, Var)],
    ) -> Result<Option<Var>, TraceError> {
        let py = self.tx.py;
        if module != "torch.utils.checkpoint" || name != "checkpoint" {
            return Ok(None);
        }
        if !f.is(py.import("torch.utils.checkpoint")?.getattr("checkpoint")?) {
            return Ok(None);
        }
        let Some((func, rest)) = args.split_first() else {
            return Ok(None);
        };
        let options = [
            "use_reentrant",
            "preserve_rng_state",
            "determinism_check",
            "debug",
        ];
        // The reentrant variant gives an output that does not require grad when no argument
        // does (parameters used inside do not count), and its default differs across torch
        // versions: only the explicit non-reentrant call is traced.
        let non_reentrant = kwargs.iter().any(|(k, v)| {
            k == "use_reentrant"
                && v.as_py(py)
                    .is_some_and(|b| b.is(pyo3::types::PyBool::new(py, false).as_any()))
        });
        if !non_reentrant || kwargs.iter().any(|(k, _)| k == "context_fn") {
            return Ok(None);
        }
        let kw: Vec<(String, Var)> = kwargs
            .iter()
            .filter(|(k, _)| !options.contains(&k.as_str()))
            .cloned()
            .collect();
        self.call(func.clone(), rest.to_vec(), kw).map(Some)
    }

    /// `torch._check*(cond, ...)` with a condition known now; `None` when `f` is none of them or
    /// the check fails (the call then runs natively and raises).
    pub(super) fn torch_check_call(
        &mut self,
        f: &Bound<'_, PyAny>,
        module: &str,
        name: &str,
        args: &[Var],
        kwargs: &[(String, Var)],
    ) -> Result<Option<Var>, TraceError> {
        let py = self.tx.py;
        if module != "torch" || !name.starts_with("_check") {
            return Ok(None);
        }
        let torch = py.import("torch")?;
        if !torch.getattr(name).is_ok_and(|g| g.is(f)) {
            return Ok(None);
        }
        let passes = if name == "_check_is_size" {
            // `_check_is_size(i, message=None, *, max=None)`: `0 <= i (<= max)`.
            let Some(i) = args.first().and_then(|a| a.as_py(py)) else {
                return Ok(None);
            };
            let Ok(i) = i.extract::<i64>() else {
                return Ok(None);
            };
            let max = match kwargs.iter().find(|(k, _)| k == "max") {
                Some((_, v)) => match v.as_py(py).map(|m| m.extract::<Option<i64>>()) {
                    Some(Ok(m)) => m,
                    _ => return Ok(None),
                },
                None => None,
            };
            i >= 0 && max.is_none_or(|m| i <= m)
        } else {
            let Some(at) = check_condition_index(name) else {
                return Ok(None);
            };
            let cond = match args.get(at) {
                Some(c) => c,
                None => match kwargs.iter().find(|(k, _)| k == "cond") {
                    Some((_, c)) => c,
                    None => return Ok(None),
                },
            };
            let Some(cond) = cond.as_py(py) else {
                return Ok(None);
            };
            // Torch requires a bool (or SymBool); anything else raises natively.
            if !cond.is_instance_of::<pyo3::types::PyBool>() {
                return Ok(None);
            }
            cond.is_truthy()?
        };
        // A passing check is nothing (`_check_is_size`'s deprecation warning included, as
        // torch.compile drops it).
        Ok(passes.then(|| Var::none(py)))
    }

    /// `torch.nn.<Layer>(...)` called inside the frame: the layer built now (see the module
    /// docs); `None` when `f` is not a torch.nn layer class.
    pub(super) fn construct_torch_layer(
        &mut self,
        f: &Bound<'_, PyAny>,
        module: &str,
        args: &[Var],
        kwargs: &[(String, Var)],
    ) -> Result<Option<Var>, TraceError> {
        let py = self.tx.py;
        if !module.starts_with("torch.nn.modules") || !f.is_instance_of::<PyType>() {
            return Ok(None);
        }
        let base = py.import("torch.nn")?.getattr("Module")?;
        let cls = f.cast::<PyType>().map_err(PyErr::from)?;
        if !cls.is_subclass(&base)? {
            return Ok(None);
        }
        let name = cls.name()?.to_string();
        let refuse = |why: &str| {
            TraceError::unsupported(format!(
                "constructing torch.nn.{name} inside the frame ({why})"
            ))
        };
        // A container of modules the trace built or read from the frame
        // (`nn.Sequential(Swish(), m)`): a tracked object like any module class built in the
        // frame (`objects.rs`), its `__init__` registering the children (it holds no parameter
        // of its own). Built now, it would hold this call's objects for every call.
        let container = matches!(name.as_str(), "Sequential" | "ModuleList" | "ModuleDict");
        let constant = args
            .iter()
            .chain(kwargs.iter().map(|(_, v)| v))
            .all(|a| matches!(a, Var::Py(o, None) if crate::interp::pyobj::is_immutable_const(o.bind(py))));
        if container && !constant {
            return Ok(None);
        }
        let Some(vals) = args.iter().map(|a| a.as_py(py)).collect::<Option<Vec<_>>>() else {
            return Err(refuse("an argument is not a constant"));
        };
        let kw = PyDict::new(py);
        for (k, v) in kwargs {
            let Some(v) = v.as_py(py) else {
                return Err(refuse("an argument is not a constant"));
            };
            kw.set_item(k, v)?;
        }
        if vals
            .iter()
            .chain(kw.values().iter().collect::<Vec<_>>().iter())
            .any(|v| crate::interp::vars::is_mutable_container(py, v))
        {
            return Err(refuse("an argument is a mutable container"));
        }
        let torch = py.import("torch")?;
        let rng = torch.getattr("get_rng_state")?.call0()?;
        let made = f.call(PyTuple::new(py, vals)?, Some(&kw));
        let drew = !torch
            .getattr("equal")?
            .call1((&rng, torch.getattr("get_rng_state")?.call0()?))?
            .is_truthy()?;
        if drew {
            torch.getattr("set_rng_state")?.call1((&rng,))?;
        }
        let m = match made {
            Ok(m) => m,
            Err(e) => {
                let fallback = TraceError::UserError {
                    call: format!("torch.nn.{name}"),
                    message: e.to_string(),
                    error: e.clone_ref(py),
                };
                return Err(self.python_raised(e, fallback));
            }
        };
        if drew {
            return Err(refuse("it draws its initial weights from the RNG"));
        }
        let has_state = |attr: &Bound<'_, pyo3::types::PyString>| -> PyResult<bool> {
            let mut it = m.call_method0(attr)?.try_iter()?;
            Ok(it.next().is_some())
        };
        if has_state(intern!(py, "parameters"))? || has_state(intern!(py, "buffers"))? {
            return Err(refuse("it holds parameters or buffers"));
        }
        Ok(Some(Var::Py(m.unbind(), None)))
    }
}

impl Frame<'_, '_> {
    /// A function decorated with an autocast object (`@torch.autocast("cuda", dtype=...)`, or
    /// `torch.autocast(...)(fn)` made outside the frame): torch's wrapper
    /// (`autocast_decorator.<locals>.decorate_autocast`) runs `func` inside `with
    /// autocast_instance:`. Traced as that region: autocast switched on for the inlined body and
    /// back after it, as the `with` form is. `None` for any other callable.
    pub(super) fn autocast_decorated_call(
        &mut self,
        f: &Bound<'_, PyAny>,
        args: &[Var],
        kwargs: &[(String, Var)],
    ) -> Result<Option<Var>, TraceError> {
        let py = self.tx.py;
        let Ok(code) = f.getattr(intern!(py, "__code__")) else {
            return Ok(None);
        };
        let file: String = code.getattr("co_filename")?.extract()?;
        let sep = std::path::MAIN_SEPARATOR;
        if !file.ends_with(&format!("{sep}amp{sep}autocast_mode.py"))
            || code.getattr("co_name")?.extract::<String>()? != "decorate_autocast"
        {
            return Ok(None);
        }
        let freevars: Vec<String> = code.getattr("co_freevars")?.extract()?;
        let closure = f.getattr(intern!(py, "__closure__"))?;
        let cell = |name: &str| -> Result<Option<Bound<'_, PyAny>>, TraceError> {
            match freevars.iter().position(|v| v == name) {
                Some(i) => Ok(Some(
                    closure.get_item(i)?.getattr(intern!(py, "cell_contents"))?,
                )),
                None => Ok(None),
            }
        };
        let (Some(instance), Some(func)) = (cell("autocast_instance")?, cell("func")?) else {
            return Ok(None);
        };
        let Var::Autocast {
            device,
            enabled,
            dtype,
        } = super::autocast_var(py, &instance, "a function decorated with torch.autocast")?
        else {
            return Ok(None);
        };
        let (prev_enabled, prev_dtype) = self.tx.output.autocast(device);
        self.tx
            .output
            .set_autocast(py, device, enabled, dtype.bind(py), 1)?;
        let func = self.tx.wrap(func, None)?;
        let r = self.call(func, args.to_vec(), kwargs.to_vec())?;
        self.tx
            .output
            .set_autocast(py, device, prev_enabled, prev_dtype.bind(py), -1)?;
        Ok(Some(r))
    }
}
