//! `nn.Module` calls: standard layers as their functional form, other modules inlined.

use pyo3::prelude::*;

use crate::error::TraceError;
use crate::guards::Check;

use crate::interp::vars::Var;
use crate::interp::Frame;

impl Frame<'_, '_> {
    /// Calls a standard torch.nn layer as its functional form, with parameters lifted as graph
    /// inputs; containers are iterated and other modules (user-defined ones included) have their
    /// `forward` inlined.
    pub(super) fn call_module(
        &mut self,
        m: &Bound<'_, PyAny>,
        src: Option<crate::source::Source>,
        args: Vec<Var>,
        kwargs: Vec<(String, Var)>,
    ) -> Result<Var, TraceError> {
        let py = self.tx.py;
        if let Some(r) = self.call_module_override(m, src.clone(), &args, &kwargs)? {
            return Ok(r);
        }
        if has_hooks(py, m)? {
            return self.call_module_with_hooks(m, src, args, kwargs);
        }
        // A module is guarded by its type, not its identity: another instance must have no
        // hooks either.
        if let Some(s) = &src {
            for store in MODULE_HOOKS {
                self.tx.guards.add(py, &s.attr(py, store), Check::Len(0));
            }
        }
        self.call_module_body(m, src, args, kwargs)
    }

    /// `module(*args)` of a module with forward pre-hooks or forward hooks, as
    /// `Module._call_impl` runs them (and torch.compile inlines them): each pre-hook called
    /// with `(module, args)` (a result that is not `None` replaces the arguments, a non-tuple
    /// as a 1-tuple), then the forward, then each forward hook with `(module, args, result)`
    /// (a result that is not `None` replaces the output); a hook registered `with_kwargs=True`
    /// also gets (and a pre-hook may replace) the keyword arguments. The hook dicts are read
    /// through their sources (their keys guarded); backward hooks and global hooks break the
    /// graph.
    fn call_module_with_hooks(
        &mut self,
        m: &Bound<'_, PyAny>,
        src: Option<crate::source::Source>,
        args: Vec<Var>,
        kwargs: Vec<(String, Var)>,
    ) -> Result<Var, TraceError> {
        let py = self.tx.py;
        let tyname = m.get_type().name()?.to_string();
        let refuse = || {
            Err(TraceError::unsupported(format!(
                "calling {tyname}, which has hooks"
            )))
        };
        let Some(src) = src else { return refuse() };
        if has_global_hooks(py)? {
            return refuse();
        }
        for store in ["_backward_hooks", "_backward_pre_hooks"] {
            match m.getattr(store) {
                Ok(d) if d.len().unwrap_or(1) == 0 => {
                    self.tx.guards.add(py, &src.attr(py, store), Check::Len(0));
                }
                _ => return refuse(),
            }
        }
        let mvar = Var::Py(m.clone().unbind(), Some(src.clone()));
        // The ids of a dict's hooks, in order, guarded.
        let keys_of = |s: &mut Self, store: &str| -> Result<Vec<Py<PyAny>>, TraceError> {
            let d = m.getattr(store)?;
            let d = d.cast::<pyo3::types::PyDict>().map_err(PyErr::from)?;
            let keys = crate::guards::dict_keys_in_order(py, d)?;
            s.tx.guards.add(
                py,
                &src.attr(py, store),
                Check::DictKeys(keys.iter().map(|k| k.clone().unbind()).collect()),
            );
            Ok(keys.into_iter().map(Bound::unbind).collect())
        };
        // Each hook with whether it takes the call's keyword arguments (its id is in the
        // `*_with_kwargs` dict of the same kind).
        let hooks = |s: &mut Self,
                     store: &str,
                     with_kwargs: &str|
         -> Result<Vec<(Var, bool)>, TraceError> {
            let kw_ids = keys_of(s, with_kwargs)?;
            let d = m.getattr(store)?;
            let d = d.cast::<pyo3::types::PyDict>().map_err(PyErr::from)?;
            let store_src = src.attr(py, store);
            let mut out = Vec::new();
            for k in keys_of(s, store)? {
                let k = k.into_bound(py);
                let hook = d
                    .get_item(&k)?
                    .ok_or_else(|| TraceError::internal("a dict key without its item"))?;
                let takes_kwargs = kw_ids.iter().any(|i| i.bind(py).eq(&k).unwrap_or(false));
                out.push((s.tx.wrap(hook, Some(store_src.item(k)))?, takes_kwargs));
            }
            Ok(out)
        };
        let pre = hooks(self, "_forward_pre_hooks", "_forward_pre_hooks_with_kwargs")?;
        let post = hooks(self, "_forward_hooks", "_forward_hooks_with_kwargs")?;
        let is_none = |v: &Var| matches!(v, Var::Py(o, _) if o.bind(py).is_none());
        let kwargs_dict = |kwargs: &[(String, Var)]| {
            let items = kwargs
                .iter()
                .map(|(k, v)| {
                    (
                        pyo3::types::PyString::new(py, k).into_any().unbind(),
                        v.clone(),
                    )
                })
                .collect();
            Var::Dict(std::rc::Rc::new(std::cell::RefCell::new(items)))
        };
        let mut args = args;
        let mut kwargs = kwargs;
        for (hook, takes_kwargs) in pre {
            if takes_kwargs {
                let call_args = vec![
                    mvar.clone(),
                    Var::Tuple(args.clone().into()),
                    kwargs_dict(&kwargs),
                ];
                let r = self.call(hook, call_args, vec![])?;
                if is_none(&r) {
                    continue;
                }
                // `(args, kwargs)`, as `Module._call_impl` requires of such a hook.
                let (new_args, new_kwargs) = match r {
                    Var::Tuple(items) if items.len() == 2 => match (&items[0], &items[1]) {
                        (Var::Tuple(a), Var::Dict(d)) => (a.to_vec(), d.clone()),
                        _ => return refuse(),
                    },
                    _ => return refuse(),
                };
                args = new_args;
                kwargs = new_kwargs
                    .borrow()
                    .iter()
                    .map(|(k, v)| Ok((k.bind(py).extract::<String>()?, v.clone())))
                    .collect::<PyResult<_>>()?;
            } else {
                let r = self.call(
                    hook,
                    vec![mvar.clone(), Var::Tuple(args.clone().into())],
                    vec![],
                )?;
                if !is_none(&r) {
                    args = match r {
                        Var::Tuple(items) => std::rc::Rc::unwrap_or_clone(items),
                        other => vec![other],
                    };
                }
            }
        }
        let mut result =
            self.call_module_body(m, Some(src.clone()), args.clone(), kwargs.clone())?;
        for (hook, takes_kwargs) in post {
            let mut hook_args = vec![mvar.clone(), Var::Tuple(args.clone().into())];
            if takes_kwargs {
                hook_args.push(kwargs_dict(&kwargs));
            }
            hook_args.push(result.clone());
            let r = self.call(hook, hook_args, vec![])?;
            if !is_none(&r) {
                result = r;
            }
        }
        Ok(result)
    }

    /// `module(*args)` past its hooks: a torch.nn layer's functional form, or its forward.
    /// The lowered layers read their settings (`training`, `p`, `eps`) from the module object
    /// itself; an attribute the traced code wrote to it (`self.eval()` sets `training` on every
    /// child) is a pending side effect that only `getattr` sees, so such a module has its
    /// forward inlined, where every read goes through `getattr`.
    fn call_module_body(
        &mut self,
        m: &Bound<'_, PyAny>,
        src: Option<crate::source::Source>,
        args: Vec<Var>,
        kwargs: Vec<(String, Var)>,
    ) -> Result<Var, TraceError> {
        let py = self.tx.py;
        if let Some(forward) = self.instance_forward(m, src.as_ref())? {
            return self.call(forward, args, kwargs);
        }
        if self.tx.effects.has_attrs(py, &m.clone().unbind()) {
            return self.inline_forward(m, src, args, kwargs);
        }
        let ty = m.get_type();
        let tyname = ty.name()?.to_string();
        let tymod: String = ty.getattr("__module__")?.extract()?;
        if !tymod.starts_with("torch.nn.modules") || src.is_none() {
            // A user module, or a torch layer built by the traced code itself (a constant with
            // no source: `torch_api.rs`), whose forward reads its settings as constants.
            return self.inline_forward(m, src, args, kwargs);
        }
        let Some(src) = src else {
            return Err(TraceError::unsupported(format!(
                "calling a {tyname} with no source"
            )));
        };
        let mvar = Var::Py(m.clone().unbind(), Some(src));
        let attr = |s: &mut Self, n: &str| s.getattr(mvar.clone(), n);
        let f = py.import("torch.nn.functional")?;
        // Layers with their own lowering below take one input; any other call of a torch.nn
        // layer (MultiheadAttention's query/key/value, keyword arguments) inlines its forward.
        const LOWERED: &[&str] = &[
            "Linear",
            "LayerNorm",
            "ReLU",
            "GELU",
            "SiLU",
            "Sigmoid",
            "Tanh",
            "Identity",
            "Dropout",
            "Softmax",
            "LogSoftmax",
        ];
        let single = args.len() == 1 && kwargs.is_empty();
        let sequential = tyname == "Sequential";
        if !sequential && (!single || !LOWERED.contains(&tyname.as_str())) {
            return self.inline_forward(m, Some(mvar_source(&mvar)), args, kwargs);
        }
        let x = args
            .first()
            .cloned()
            .ok_or_else(|| TraceError::unsupported(format!("calling {tyname} with no input")))?;
        let fcall = |s: &mut Self,
                     fname: &str,
                     fargs: Vec<Var>,
                     fkw: Vec<(&str, Var)>|
         -> Result<Var, TraceError> {
            let func = s.guarded_attr(f.as_any(), fname)?;
            let kw = fkw.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
            s.call_py(&func, None, fargs, kw)
        };
        // A constant of the layer (eps, p, dim, ...), guarded by value: another instance of the
        // class may have another.
        let msrc = mvar_source(&mvar);
        let c = |s: &mut Self, n: &str| -> Result<Var, TraceError> {
            s.tx.wrap(m.getattr(n)?, Some(msrc.attr(py, n)))
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
            "Sigmoid" | "Tanh" => {
                let f = self.guarded_attr(py.import("torch")?.as_any(), &tyname.to_lowercase())?;
                self.call_py(&f, None, vec![x], vec![])
            }
            "Identity" => Ok(x),
            "Dropout" => {
                // Of the layers lowered here only dropout reads the training flag: guard it
                // here, not for every layer, so a fresh (training) Linear swapped into an
                // eval model is no reason to recompile. Inlined forwards read `self.training`
                // through their own guarded attribute reads.
                let training = m.getattr("training")?;
                self.tx.guards.add(
                    py,
                    &msrc.attr(py, "training"),
                    Check::Equals(training.clone().unbind()),
                );
                let training: bool = training.extract()?;
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
                let modules = m.getattr("_modules")?;
                let keys: Vec<Py<PyAny>> = modules
                    .call_method0("keys")?
                    .try_iter()?
                    .map(|k| k.map(Bound::unbind))
                    .collect::<PyResult<_>>()?;
                // Which children run, in order: another instance may hold others.
                self.tx.guards.add(
                    py,
                    &msrc.attr(py, "_modules"),
                    Check::DictKeys(keys.iter().map(|k| k.clone_ref(py)).collect()),
                );
                let children: Vec<String> = keys
                    .iter()
                    .map(|k| k.bind(py).extract())
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

    /// `Module._call_impl` runs `self.forward`, so a function stored on the instance (a wrapper
    /// patched in with `module.forward = ...`, as accelerate's hooks and PEFT do) runs instead
    /// of the class's `forward`: read through the module's source (guarded as any attribute
    /// read), it is what is called. Without one, the instance dict is guarded to stay without
    /// one, so patching the module after the first call recompiles.
    fn instance_forward(
        &mut self,
        m: &Bound<'_, PyAny>,
        src: Option<&crate::source::Source>,
    ) -> Result<Option<Var>, TraceError> {
        let py = self.tx.py;
        let name = pyo3::intern!(py, "forward");
        let shadowed = match m.getattr(pyo3::intern!(py, "__dict__")) {
            Ok(d) => d
                .cast::<pyo3::types::PyDict>()
                .map_or(Ok(false), |d| d.contains(name))?,
            Err(_) => false,
        };
        if !shadowed {
            if let Some(s) = src {
                self.tx
                    .guards
                    .add(py, s, Check::NotInDict("forward".to_string()));
            }
            return Ok(None);
        }
        let this = match src {
            Some(s) => self
                .tx
                .wrap(m.clone().unbind().into_bound(py), Some(s.clone()))?,
            None => Var::Py(m.clone().unbind(), None),
        };
        Ok(Some(self.getattr(this, "forward")?))
    }

    /// `module(*args)` of a module whose class overrides `nn.Module.__call__`: the override
    /// runs (inlined with the module as `self`), as in eager; the module's type is guarded
    /// where it was read, which pins the class and so its `__call__`.
    pub(super) fn call_module_override(
        &mut self,
        m: &Bound<'_, PyAny>,
        src: Option<crate::source::Source>,
        args: &[Var],
        kwargs: &[(String, Var)],
    ) -> Result<Option<Var>, TraceError> {
        let py = self.tx.py;
        let call = m.get_type().getattr(pyo3::intern!(py, "__call__"))?;
        let module_call = py
            .import("torch.nn")?
            .getattr("Module")?
            .getattr(pyo3::intern!(py, "__call__"))?;
        if call.is(&module_call) {
            return Ok(None);
        }
        if !call.is_instance(&py.import("types")?.getattr("FunctionType")?)? {
            return Err(TraceError::unsupported(format!(
                "calling a {} whose __call__ is not a Python function",
                m.get_type().name()?
            )));
        }
        let this = match src {
            Some(s) => self.tx.wrap(m.clone().unbind().into_bound(py), Some(s))?,
            None => Var::Py(m.clone().unbind(), None),
        };
        let fv = self.function_of(&call.unbind().into_bound(py), None)?;
        let mut all = vec![this];
        all.extend(args.iter().cloned());
        Ok(Some(self.inline_call(&fv, all, kwargs.to_vec())?))
    }

    /// `module.name` (a function of `torch` or `torch.nn.functional`) as a layer's forward reads
    /// it when it runs: a program that replaced it (`F.linear = wrapper`) gets the replacement,
    /// and the read is guarded through the module dict's version tag.
    fn guarded_attr<'py>(
        &mut self,
        module: &Bound<'py, PyAny>,
        name: &str,
    ) -> PyResult<Bound<'py, PyAny>> {
        let v = module.getattr(name)?;
        let origin = self.tx.guards.origin.clone();
        self.tx.guards.global.module_attr(module, name, &v, origin);
        Ok(v)
    }

    /// `module(*args)` without hooks is `type(module).forward(module, *args)`: inline it.
    pub(super) fn inline_forward(
        &mut self,
        m: &Bound<'_, PyAny>,
        src: Option<crate::source::Source>,
        args: Vec<Var>,
        kwargs: Vec<(String, Var)>,
    ) -> Result<Var, TraceError> {
        let py = self.tx.py;
        let forward = m.get_type().getattr("forward")?;
        self.guard_class_forward(m)?;
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

impl Frame<'_, '_> {
    /// Guards the lookup of `forward` through the classes of `m`'s MRO, up to the one that
    /// defines it (their dicts' version tags: one compare each per call). The module's type
    /// guard pins the class, not what its dict holds: without this, `forward` replaced on the
    /// class (or set on a class before it in the MRO) between calls kept running the old one.
    fn guard_class_forward(&mut self, m: &Bound<'_, PyAny>) -> Result<(), TraceError> {
        let origin = self.tx.guards.origin.clone();
        for cls in m.get_type().mro().iter() {
            let cls = cls
                .cast_into::<pyo3::types::PyType>()
                .map_err(PyErr::from)?;
            let found = cls.getattr("__dict__")?.get_item("forward").ok();
            let watched =
                self.tx
                    .guards
                    .global
                    .class_attr(&cls, "forward", found.as_ref(), origin.clone());
            if !watched || found.is_some() {
                break;
            }
        }
        Ok(())
    }
}

fn mvar_source(v: &Var) -> crate::source::Source {
    match v {
        Var::Py(_, Some(s)) => s.clone(),
        _ => unreachable!("module calls carry their source"),
    }
}

/// The hook dicts of a module instance that `Module.__call__` runs.
const MODULE_HOOKS: [&str; 4] = [
    "_forward_hooks",
    "_forward_pre_hooks",
    "_backward_hooks",
    "_backward_pre_hooks",
];

fn has_hooks(py: Python<'_>, m: &Bound<'_, PyAny>) -> PyResult<bool> {
    for attr in MODULE_HOOKS {
        if let Ok(d) = m.getattr(attr) {
            if d.len().unwrap_or(0) > 0 {
                return Ok(true);
            }
        }
    }
    has_global_hooks(py)
}

/// Whether hooks registered for every module (`register_module_forward_hook`, ...) exist.
fn has_global_hooks(py: Python<'_>) -> PyResult<bool> {
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

/// Iterating a `ParameterList` yields its parameters in order, each read through `_parameters`
/// (keys "0", "1", ...) so it is lifted as an input; a `ParameterDict` yields its keys (`_keys`
/// order). The keys are guarded.
pub(in crate::interp) fn parameter_container_items(
    tx: &mut crate::interp::Tracer<'_>,
    m: &Bound<'_, PyAny>,
    src: &crate::source::Source,
) -> Result<Vec<Var>, TraceError> {
    let py = tx.py;
    let is_dict = m.is_instance(&py.import("torch.nn")?.getattr("ParameterDict")?)?;
    let store = if is_dict { "_keys" } else { "_parameters" };
    let keys_obj = m.getattr(store)?;
    let keys: Vec<Py<PyAny>> = keys_obj
        .call_method0("keys")?
        .try_iter()?
        .map(|k| k.map(|k| k.unbind()))
        .collect::<PyResult<_>>()?;
    tx.guards.add(
        py,
        &src.attr(py, store),
        Check::DictKeys(keys.iter().map(|k| k.clone_ref(py)).collect()),
    );
    if is_dict {
        return Ok(keys.into_iter().map(|k| Var::Py(k, None)).collect());
    }
    let params = m.getattr("_parameters")?;
    let mut out = Vec::new();
    for k in keys {
        let p = params.get_item(k.bind(py))?;
        let s = src.attr(py, "_parameters").item(k.into_bound(py));
        out.push(tx.wrap(p, Some(s))?);
    }
    Ok(out)
}
