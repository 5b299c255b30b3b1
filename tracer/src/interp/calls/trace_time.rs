//! Which torch calls without a tensor argument may run at trace time.
//!
//! A call that runs while tracing runs once, not on every call of the compiled code: only
//! functions that are pure on their (constant) arguments may fold. Everything else that torch
//! offers without a tensor argument (`opt.step()`, `torch.manual_seed`, `torch.set_rng_state`,
//! `torch.randperm`'s siblings outside the factories, `clip_grad_norm_` over a generator) ends
//! the graph and runs natively on every call. Queries of global state fold only where the value
//! they read is guarded (`GlobalGuards::value`) or is the traced region's own state (autocast).

use std::sync::OnceLock;

use pyo3::prelude::*;

/// How a torch callable is treated when no argument is a tensor.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum TraceTime {
    /// Pure on its arguments: call it now, the result is a constant of the trace.
    Pure,
    /// Reads process-wide state that the traced code cannot change: call it now and guard that
    /// it returns the same object on later calls.
    Guarded,
    /// An autocast query: answered from the autocast state at this point of the traced code
    /// for the CPU (regions are traced, not entered), else read and covered by the autocast
    /// guard of every entry.
    Autocast,
}

/// Pure functions and classes of torch, by path. Reviewed one by one: each depends only on its
/// arguments (or on facts fixed for the life of the process, such as whether CUDA exists).
const PURE: &[&str] = &[
    "torch.is_tensor",
    "torch.is_storage",
    "torch.is_floating_point",
    "torch.is_complex",
    "torch.finfo",
    "torch.iinfo",
    "torch.device",
    "torch.Size",
    "torch.promote_types",
    "torch.can_cast",
    "torch.result_type",
    "torch.broadcast_shapes",
    "torch.typename",
    "torch.sym_int",
    "torch.sym_float",
    "torch.sym_max",
    "torch.sym_min",
    "torch.sym_not",
    "torch._assert",
    "torch._check",
    "torch._check_index",
    "torch._check_value",
    "torch._check_type",
    "torch._check_with",
    "torch.jit.is_scripting",
    "torch.jit.annotate",
    "torch.overrides.has_torch_function",
    "torch.overrides.has_torch_function_unary",
    "torch.overrides.has_torch_function_variadic",
    "torch.overrides.is_tensor_like",
    "torch._C._has_torch_function",
    "torch._C._has_torch_function_unary",
    "torch._C._has_torch_function_variadic",
    "torch._C._get_privateuse1_backend_name",
    "torch.nn.functional._Reduction.get_enum",
    "torch.nn.functional._verify_batch_size",
    "torch.nn.functional._verify_spatial_size",
    "torch.nn.functional._get_softmax_dim",
    "torch.nn.functional._none_or_dtype",
    "torch.nn.functional._canonical_mask",
    "torch._C._log_api_usage_once",
    "torch.cuda.is_current_stream_capturing",
    "torch.cuda.is_available",
    "torch.cuda.device_count",
    "torch.backends.mps.is_available",
    "torch.backends.cudnn.is_available",
    "torch.distributed.is_available",
    "torch.compiler.is_exporting",
];

/// Queries of process-wide state, folded under a guard on their result. The jit tracer and the
/// fx tracer are not run with compiled code inside, but the guard keeps that honest too.
const GUARDED: &[&str] = &[
    "torch.get_default_dtype",
    "torch.are_deterministic_algorithms_enabled",
    "torch.is_deterministic_algorithms_warn_only_enabled",
    "torch.is_inference_mode_enabled",
    "torch.jit.is_tracing",
    "torch._C._get_tracing_state",
    "torch.fx._symbolic_trace.is_fx_tracing",
    "torch.backends.mha.get_fastpath_enabled",
    "torch.distributed.is_initialized",
    "torch.utils._python_dispatch._get_current_dispatch_mode_stack",
];

/// Guarded queries folded only when their answer is an empty list: the guard holds the list's
/// length, which says nothing of which objects a longer list holds. The dispatch-mode stack is
/// read by `nn.MultiheadAttention`'s inference fast path (is a make_fx tracer running?); with no
/// mode active the fast path is traced into the graph, as eager runs it.
pub(super) const EMPTY_ONLY: &[&str] =
    &["torch.utils._python_dispatch._get_current_dispatch_mode_stack"];

const AUTOCAST: &[&str] = &[
    "torch.is_autocast_enabled",
    "torch.is_autocast_cpu_enabled",
    "torch.get_autocast_dtype",
    "torch.get_autocast_cpu_dtype",
    "torch._C._is_any_autocast_enabled",
];

/// The objects behind the paths above, resolved once (a path that does not resolve in this
/// torch version is skipped).
fn table(py: Python<'_>) -> &'static [(Py<PyAny>, TraceTime, &'static str)] {
    static TABLE: OnceLock<Vec<(Py<PyAny>, TraceTime, &'static str)>> = OnceLock::new();
    if let Some(t) = TABLE.get() {
        return t;
    }
    // Built outside `get_or_init`: resolving imports modules, which can let another thread
    // take the GIL; that thread, blocked on the cell with the GIL held, would deadlock both
    // (concurrent first compiles). Two threads may both build it; the first one stored wins.
    let mut out = Vec::new();
    for (paths, kind) in [
        (PURE, TraceTime::Pure),
        (GUARDED, TraceTime::Guarded),
        (AUTOCAST, TraceTime::Autocast),
    ] {
        for path in paths {
            if let Some(obj) = resolve(py, path) {
                out.push((obj.unbind(), kind, *path));
            }
        }
    }
    TABLE.get_or_init(|| out)
}

/// `a.b.c.d`: the longest importable module prefix, then attributes.
fn resolve<'py>(py: Python<'py>, path: &str) -> Option<Bound<'py, PyAny>> {
    let parts: Vec<&str> = path.split('.').collect();
    for split in (1..parts.len()).rev() {
        let Ok(mut obj) = py.import(parts[..split].join(".")).map(|m| m.into_any()) else {
            continue;
        };
        let mut ok = true;
        for attr in &parts[split..] {
            match obj.getattr(*attr) {
                Ok(v) => obj = v,
                Err(_) => {
                    ok = false;
                    break;
                }
            }
        }
        if ok {
            return Some(obj);
        }
    }
    None
}

/// How `f` may run at trace time, with the path it is known by; `None`: it may not (the call
/// ends the graph).
pub(super) fn trace_time_kind(
    py: Python<'_>,
    f: &Bound<'_, PyAny>,
) -> Option<(TraceTime, &'static str)> {
    table(py)
        .iter()
        .find(|(o, _, _)| f.is(o.bind(py)))
        .map(|(_, k, p)| (*k, *p))
}

/// Modules of torch whose functions act on process or object state even when given tensors
/// (`torch.set_rng_state(t)`, an optimizer's `step`, `torch.save`): never graph nodes, whose
/// meta run would perform the effect on metadata at trace time. They run natively.
const EFFECT_MODULES: &[&str] = &[
    "torch.random",
    "torch.cuda.random",
    "torch.optim",
    "torch.serialization",
    "torch.distributed",
    "torch.utils.data",
    "torch.utils.hooks",
];

/// Whether a torch callable from `module` must run outside the graph even with tensor arguments.
pub(super) fn has_state_effects(module: &str) -> bool {
    EFFECT_MODULES
        .iter()
        .any(|m| module == *m || module.strip_prefix(m).is_some_and(|r| r.starts_with('.')))
}

/// Guarded queries whose answer is a flag kept in a module global: guarded through that
/// module's dict version (free on a hit) instead of calling the query on every call.
const FLAG_GLOBALS: &[(&str, &str, &str)] = &[
    (
        "torch.backends.mha.get_fastpath_enabled",
        "torch.backends.mha",
        "_is_fastpath_enabled",
    ),
    (
        "torch.fx._symbolic_trace.is_fx_tracing",
        "torch.fx._symbolic_trace",
        "_is_fx_tracing_flag",
    ),
];

/// Guarded queries answered by a cheaper builtin that reads the same state.
const CHEAPER_QUERY: &[(&str, &str)] = &[
    ("torch.jit.is_tracing", "torch._C._is_tracing"),
    // A new list on every call: its length (a cached small int) is what can be held by `is`.
    (
        "torch.utils._python_dispatch._get_current_dispatch_mode_stack",
        "torch._C._len_torch_dispatch_stack",
    ),
];

/// How to guard the result of the query at `path`: the module global that holds it, or the
/// builtin to call (the query itself if none is cheaper).
pub(super) enum GuardVia<'py> {
    Global(Bound<'py, PyAny>, &'static str),
    Call(Bound<'py, PyAny>),
}

pub(super) fn guard_via<'py>(py: Python<'py>, path: &str, f: &Bound<'py, PyAny>) -> GuardVia<'py> {
    if let Some((_, module, name)) = FLAG_GLOBALS.iter().find(|(p, _, _)| *p == path) {
        if let Ok(m) = py.import(*module) {
            if m.hasattr(*name).unwrap_or(false) {
                return GuardVia::Global(m.into_any(), name);
            }
        }
    }
    if let Some((_, q)) = CHEAPER_QUERY.iter().find(|(p, _)| *p == path) {
        if let Some(q) = resolve(py, q) {
            return GuardVia::Call(q);
        }
    }
    GuardVia::Call(f.clone())
}
