//! The decorators of `torch.compiler` / `torch._dynamo` (and `torchferro.compiler`, which
//! registers through them) that change how a call is traced:
//!
//! - `allow_in_graph(fn)`: the call becomes one graph node calling `fn` (its body is never
//!   traced, so it may be any Python over tensors; its result's metadata comes from running it
//!   on meta tensors).
//! - `substitute_in_graph(original)(polyfill)`: a call to `original` traces `polyfill` instead.
//! - `assume_constant_result(fn)`: called at trace time and its result taken as a constant,
//!   unguarded, as torch.compile takes it (the user promises it does not change).
//!
//! The registries are torch's own (`torch._dynamo.trace_rules._allowed_callable_ids`, the
//! polyfill handlers of `PolyfilledFunctionVariable`), read only when torch has loaded them: a
//! process that never imported `torch._dynamo` registered nothing.

use pyo3::intern;
use pyo3::prelude::*;

use fx::Target;

use crate::error::TraceError;
use crate::interp::vars::Var;
use crate::interp::Frame;

/// A loaded module by name, without importing it.
fn loaded<'py>(py: Python<'py>, name: &str) -> Option<Bound<'py, PyAny>> {
    let modules = py.import("sys").ok()?.getattr("modules").ok()?;
    modules.get_item(name).ok().filter(|m| !m.is_none())
}

/// Whether `f` was registered with `allow_in_graph`.
fn allowed_in_graph(py: Python<'_>, f: &Bound<'_, PyAny>) -> PyResult<bool> {
    let Some(rules) = loaded(py, "torch._dynamo.trace_rules") else {
        return Ok(false);
    };
    // A function registered with torch's own `allow_in_graph` list of torch functions is a torch
    // op, handled as one already; this is the user's registry.
    let ids = rules.getattr("_allowed_callable_ids")?;
    let id = f.as_ptr() as usize;
    ids.call_method1(intern!(py, "__contains__"), (id,))?
        .is_truthy()
}

/// The polyfill registered for `f` with `substitute_in_graph`, if any.
fn polyfill_of(py: Python<'_>, f: &Bound<'_, PyAny>) -> PyResult<Option<Py<PyAny>>> {
    let Some(functions) = loaded(py, "torch._dynamo.variables.functions") else {
        return Ok(None);
    };
    let handlers = functions
        .getattr("PolyfilledFunctionVariable")?
        .call_method0("_get_polyfill_handlers")?;
    if f.hash().is_err() {
        return Ok(None);
    }
    let Ok(wrapped) = handlers.get_item(f) else {
        return Ok(None);
    };
    Ok(wrapped
        .getattr("__torch_dynamo_polyfill__")
        .ok()
        .map(Bound::unbind))
}

impl Frame<'_, '_> {
    /// A call to a function marked by one of the decorators above; `None` for any other.
    pub(super) fn compiler_api_call(
        &mut self,
        f: &Bound<'_, PyAny>,
        module: &str,
        name: &str,
        args: &[Var],
        kwargs: &[(String, Var)],
    ) -> Result<Option<Var>, TraceError> {
        let py = self.tx.py;
        if f.getattr(intern!(py, "_dynamo_marked_constant"))
            .is_ok_and(|m| m.is_truthy().unwrap_or(false))
        {
            if let Some(r) = self.assumed_constant(f, args, kwargs)? {
                return Ok(Some(r));
            }
        }
        if let Some(polyfill) = polyfill_of(py, f)? {
            let polyfill = polyfill.into_bound(py);
            // Only a polyfill written as user code is traced: torch's own polyfills stand in
            // for builtins the tracer models itself.
            if self.inlinable(&polyfill)? {
                let fv = self.function_of(&polyfill, None)?;
                return Ok(Some(self.inline_call(
                    &fv,
                    args.to_vec(),
                    kwargs.to_vec(),
                )?));
            }
        }
        if allowed_in_graph(py, f)? {
            let qualname: String = f
                .getattr(intern!(py, "__qualname__"))
                .and_then(|q| q.extract())
                .unwrap_or_else(|_| name.to_string());
            let path = format!("{module}.{qualname}");
            let hint = name.trim_start_matches('_');
            let hint = if hint.is_empty() { "allowed" } else { hint };
            return self.opaque_call(f, path, hint, args, kwargs).map(Some);
        }
        if let Some(r) = self.autograd_function_apply(f, args, kwargs)? {
            return Ok(Some(r));
        }
        Ok(None)
    }

    /// One graph node calling `f` as it is (its metadata from running it on meta tensors).
    pub(super) fn opaque_call(
        &mut self,
        f: &Bound<'_, PyAny>,
        path: String,
        hint: &str,
        args: &[Var],
        kwargs: &[(String, Var)],
    ) -> Result<Var, TraceError> {
        let py = self.tx.py;
        let gargs = args
            .iter()
            .map(|a| a.to_arg(py))
            .collect::<Result<Vec<_>, _>>()?;
        let gkw = kwargs
            .iter()
            .map(|(k, v)| Ok((k.clone(), v.to_arg(py)?)))
            .collect::<Result<Vec<_>, TraceError>>()?;
        self.graph_call(hint, Target::Function(path), Some(f), gargs, gkw)
    }

    /// `MyFunction.apply(*args)` of a `torch.autograd.Function` subclass: one graph node calling
    /// `apply`, as torch.compile puts the function in its graph (its own higher-order op). The
    /// node runs the user's `forward` and records the user's `backward` in autograd, so values
    /// and gradients are eager's; the class is guarded where it was read.
    fn autograd_function_apply(
        &mut self,
        f: &Bound<'_, PyAny>,
        args: &[Var],
        kwargs: &[(String, Var)],
    ) -> Result<Option<Var>, TraceError> {
        let py = self.tx.py;
        let [Var::Py(cls, _), rest @ ..] = args else {
            return Ok(None);
        };
        let function = py.import("torch.autograd")?.getattr("Function")?;
        let apply = function.getattr("apply")?.getattr("__func__")?;
        if !f.is(&apply) || !kwargs.is_empty() {
            return Ok(None);
        }
        let cls = cls.bind(py);
        let is_subclass = cls.is_instance_of::<pyo3::types::PyType>()
            && cls
                .cast::<pyo3::types::PyType>()
                .map_err(PyErr::from)?
                .is_subclass(&function)?
            && !cls.is(&function);
        if !is_subclass {
            return Ok(None);
        }
        let module: String = cls.getattr("__module__")?.extract().unwrap_or_default();
        let qualname: String = cls.getattr("__qualname__")?.extract().unwrap_or_default();
        let node_fn = py
            .import("torchferro._autograd")?
            .getattr("apply_of")?
            .call1((cls,))?;
        self.opaque_call(
            &node_fn,
            format!("{module}.{qualname}.apply"),
            "apply",
            rest,
            &[],
        )
        .map(Some)
    }

    /// `assume_constant_result`: the function runs now on the known arguments and its result
    /// is a constant of the graph. Arguments that are not known values (tensors) leave the call
    /// to ordinary tracing.
    fn assumed_constant(
        &mut self,
        f: &Bound<'_, PyAny>,
        args: &[Var],
        kwargs: &[(String, Var)],
    ) -> Result<Option<Var>, TraceError> {
        let py = self.tx.py;
        let Some(vals) = args.iter().map(|a| a.as_py(py)).collect::<Option<Vec<_>>>() else {
            return Ok(None);
        };
        let kw = pyo3::types::PyDict::new(py);
        for (k, v) in kwargs {
            let Some(v) = v.as_py(py) else {
                return Ok(None);
            };
            kw.set_item(k, v)?;
        }
        let r = match f.call(pyo3::types::PyTuple::new(py, vals)?, Some(&kw)) {
            Ok(r) => r,
            Err(e) => {
                let fallback = TraceError::UserError {
                    call: f.repr().map(|r| r.to_string()).unwrap_or_default(),
                    message: e.to_string(),
                    error: e.clone_ref(py),
                };
                return Err(self.python_raised(e, fallback));
            }
        };
        if crate::output::is_tensor(py, &r)? {
            return Err(TraceError::unsupported(
                "assume_constant_result of a function returning a tensor",
            ));
        }
        // No source: the value is a constant of this graph, unguarded, as torch takes it.
        Ok(Some(self.tx.wrap(r, None)?))
    }
}
