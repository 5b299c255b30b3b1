//! `opt.step()` of torch.optim's SGD, Adam and AdamW traced into the graph, as torch.compile
//! traces it: their Python (`step`, the functional `adam` / `sgd` and its foreach or per-tensor
//! update) is inlined like user code, with torch's compile-time branches
//! (`torch.compiler.is_compiling()`: step counters stay tensors, no device grouping), and the
//! `_foreach_*` ops written out per tensor (`foreach.rs`). Three calls are answered here:
//!
//! - `_init_group` runs for real at trace time (torch.compile does the same): it fills the step's
//!   lists and lazily creates the optimizer state (`exp_avg`, the `step` counter) on the first
//!   call, an effect the compiled step would make anyway. Its results become graph inputs read
//!   from where they live: a parameter as `opt.param_groups[g]['params'][i]`, its gradient as
//!   that `.grad`, a state tensor as `opt.state[<param>][name]`. Each parameter's gradient
//!   (tensor or None) and each state dict's keys are guarded, so a parameter that gains a
//!   gradient or state later recompiles.
//! - `torch.autograd.profiler.record_function(name)` (around `step` and `zero_grad`) is a
//!   `contextlib.nullcontext()`, as torch.compile ignores it.
//! - `torch._dynamo.graph_break()` in torch.optim's own code is ignored: torch puts it around the
//!   step so that AOTAutograd sees the update as an inference graph; here the step's `no_grad`
//!   region already carries no gradient (`fx::autodiff::modes`), and the graph count is
//!   torch.compile's (the break splits off nothing with a tensor op).
//!
//! Other optimizers' files are not inlined: their `step` runs natively (a graph break).

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use crate::error::TraceError;
use crate::guards::Check;
use crate::interp::vars::Var;
use crate::interp::Frame;
use crate::source::Source;

/// torch.optim files whose Python is traced.
const TRACED: &[&str] = &[
    "/torch/optim/optimizer.py",
    "/torch/optim/adam.py",
    "/torch/optim/adamw.py",
    "/torch/optim/sgd.py",
];

/// Whether code in `filename` is one of torch.optim's traced files.
pub(crate) fn traced_file(filename: &str) -> bool {
    TRACED.iter().any(|s| filename.ends_with(s))
}

/// Whether `f` is a Python function (or method) of a traced torch.optim file.
pub(super) fn is_traced_function(f: &Bound<'_, PyAny>) -> bool {
    f.getattr("__code__")
        .and_then(|c| c.getattr("co_filename"))
        .and_then(|s| s.extract::<String>())
        .map(|s| traced_file(&s))
        .unwrap_or(false)
}

/// The name of a dict key that is an object hashed by identity (a parameter keying an
/// optimizer's state): its type and address, distinct for distinct live objects (the guard
/// holds the key, so the address is not reused while it lives).
pub(crate) fn object_key_repr(key: &Bound<'_, PyAny>) -> String {
    let ty = key
        .get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_default();
    format!("<{ty} at {:#x}>", key.as_ptr() as usize)
}

impl<'py> Frame<'_, 'py> {
    /// The calls answered here (see the module comment); `None` for any other.
    pub(super) fn optim_call(
        &mut self,
        f: &Bound<'_, PyAny>,
        module: &str,
        name: &str,
        args: &[Var],
        kwargs: &[(String, Var)],
    ) -> Result<Option<Var>, TraceError> {
        let py = self.tx.py;
        // `typing.cast(T, v)` is `v` (the optimizers' wrappers cast their `self`).
        if name == "cast" && module == "typing" && args.len() == 2 && kwargs.is_empty() {
            return Ok(Some(args[1].clone()));
        }
        if name == "record_function"
            && (module == "torch.autograd.profiler" || module == "torch.profiler")
            && traced_file(&self.code.filename)
        {
            let nc = py.import("contextlib")?.getattr("nullcontext")?;
            return Ok(Some(self.call_py(&nc, None, vec![], vec![])?));
        }
        if name == "graph_break"
            && module.starts_with("torch._dynamo")
            && traced_file(&self.code.filename)
        {
            return Ok(Some(Var::none(py)));
        }
        // Pure queries of torch's device lists (`_default_to_fused_or_foreach`).
        if module == "torch.utils._foreach_utils"
            && (name == "_get_foreach_kernels_supported_devices"
                || name == "_get_fused_kernels_supported_devices")
            && args.is_empty()
            && kwargs.is_empty()
            && traced_file(&self.code.filename)
        {
            return Ok(Some(Var::Py(f.call0()?.unbind(), None)));
        }
        if name == "_init_group" && kwargs.is_empty() {
            // torch.compile, once run in the process, wraps every optimizer class's
            // `_init_group` in `torch._dynamo.disable` (`eval_frame.py`); the wrapped function
            // is the one to run.
            let mut inner = f.clone();
            for _ in 0..4 {
                if is_traced_function(&inner) {
                    return self.init_group(&inner, args).map(Some);
                }
                match inner.getattr("__wrapped__") {
                    Ok(w) => inner = w,
                    Err(_) => break,
                }
            }
        }
        Ok(None)
    }

    /// The object a value read from the frame's inputs stands for, and where it was read: a
    /// sourced object, or a dict read from the inputs (tracked as a copy).
    fn live_object(&self, v: &Var) -> Option<(Bound<'py, PyAny>, Source)> {
        let py = self.tx.py;
        match v {
            Var::Py(o, Some(src)) => Some((o.bind(py).clone(), src.clone())),
            Var::Dict(d) => self
                .tx
                .external_dicts
                .iter()
                .find(|(e, _, _)| std::rc::Rc::ptr_eq(e, d))
                .map(|(_, src, o)| (o.bind(py).clone(), src.clone())),
            _ => None,
        }
    }

    fn init_group(&mut self, f: &Bound<'_, PyAny>, args: &[Var]) -> Result<Var, TraceError> {
        let py = self.tx.py;
        let (Some((opt, opt_src)), Some((group, group_src))) = (
            args.first().and_then(|a| self.live_object(a)),
            args.get(1).and_then(|a| self.live_object(a)),
        ) else {
            return Err(TraceError::unsupported(
                "an optimizer's _init_group on an optimizer or group read from no source",
            ));
        };
        let optimizer = py.import("torch.optim")?.getattr("Optimizer")?;
        if !opt.is_instance(&optimizer)? || !group.is_instance_of::<PyDict>() {
            return Err(TraceError::unsupported("_init_group of a non-optimizer"));
        }
        let mut lists = Vec::new();
        for a in &args[2..] {
            match a {
                Var::List(l) if l.borrow().is_empty() => lists.push(l.clone()),
                _ => {
                    return Err(TraceError::unsupported(
                        "an optimizer's _init_group with arguments other than empty lists",
                    ))
                }
            }
        }
        let params = group.get_item("params")?;
        let params = params
            .cast::<PyList>()
            .map_err(|_| TraceError::unsupported("an optimizer group whose params is no list"))?
            .clone();
        let params_src = group_src.item(pyo3::types::PyString::new(py, "params").into_any());
        // Where each tensor the call may hand out lives. Gradients first: the tracer's own
        // `p.grad` read, guarded (a tensor, or None).
        let mut origin: Vec<(usize, Source)> = Vec::new();
        let mut param_srcs = Vec::new();
        for (i, p) in params.iter().enumerate() {
            let p_src = params_src.item(pyo3::types::PyInt::new(py, i as i64).into_any());
            let grad = p.getattr("grad")?;
            let g_src = p_src.attr(py, "grad");
            self.tx.wrap(grad.clone(), Some(g_src.clone()))?;
            origin.push((p.as_ptr() as usize, p_src.clone()));
            if !grad.is_none() {
                origin.push((grad.as_ptr() as usize, g_src));
            }
            param_srcs.push(p_src);
        }
        // Run it: the real lists are filled, the state made where it is missing.
        let real: Vec<Bound<'_, PyList>> = lists.iter().map(|_| PyList::empty(py)).collect();
        let mut call_args: Vec<Bound<'_, PyAny>> = vec![opt.clone(), group.clone()];
        call_args.extend(real.iter().map(|l| l.clone().into_any()));
        let ret = f.call1(pyo3::types::PyTuple::new(py, call_args)?)?;
        let state = opt.getattr("state")?;
        let state = state
            .cast::<PyDict>()
            .map_err(|_| TraceError::unsupported("an optimizer state that is not a dict"))?
            .clone();
        for p in params.iter() {
            let Some(st) = state.get_item(&p)? else {
                continue;
            };
            let Ok(st) = st.cast::<PyDict>() else {
                return Err(TraceError::unsupported(
                    "optimizer state that is not a dict",
                ));
            };
            // A state dict is keyed by the parameter object; the step names it by its path.
            let st_src = opt_src
                .attr(py, "state")
                .item_named(p.clone(), object_key_repr(&p));
            let keys: Vec<Py<PyAny>> = st.keys().iter().map(Bound::unbind).collect();
            self.tx.guards.add(py, &st_src, Check::DictKeys(keys));
            for (k, v) in st.iter() {
                if crate::output::is_tensor(py, &v)? {
                    origin.push((v.as_ptr() as usize, st_src.item(k)));
                }
            }
        }
        for (l, r) in lists.iter().zip(&real) {
            let mut items = Vec::with_capacity(r.len());
            for v in r.iter() {
                if v.is_none() {
                    items.push(Var::none(py));
                    continue;
                }
                let id = v.as_ptr() as usize;
                let Some((_, src)) = origin.iter().find(|(o, _)| *o == id) else {
                    return Err(TraceError::unsupported(
                        "an optimizer's _init_group handed out a value of unknown origin",
                    ));
                };
                items.push(self.tx.wrap(v, Some(src.clone()))?);
            }
            self.tx.note_list_mutation(l);
            l.borrow_mut().extend(items);
        }
        if ret.is_none() || ret.is_instance_of::<pyo3::types::PyBool>() {
            return Ok(Var::Py(ret.unbind(), None));
        }
        Err(TraceError::unsupported(
            "an optimizer's _init_group returned a value other than a bool",
        ))
    }
}
