//! Everything that touches the interpreter: the eval-frame hook, the per-code cache, guards,
//! sources, the symbolic interpreter, the transformed code and backend dispatch.
//!
//! Unsafe code lives in `frame` (frame layout), `hook` (the evaluator), `code_cache` (co_extra) and
//! the small raw-pointer helpers of `source`, `runtime`, `reconstruct` (closure cells),
//! `backend` (vectorcall, kernels run on guarded inputs), `compile` and `interp` (borrowed frame
//! objects), `alloc_threshold`, `guards` and `global_state` (a dict's version tag); everything
//! else is safe.

pub mod aliased_getattr;
pub mod alloc_threshold;
pub mod backend;
pub mod code;
pub mod code_cache;
pub mod compile;
pub mod config;
pub mod decode;
pub mod error;
pub mod event;
pub mod frame;
pub mod global_state;
pub mod guards;
pub mod hook;
pub mod interp;
pub mod log;
pub mod mode;
pub mod output;
pub mod passes;
pub mod precompile;
pub mod reconstruct;
pub mod recursion;
pub mod resume;
pub mod runtime;
pub mod signals;
pub mod skipfiles;
pub mod source;
pub mod torch_free;
pub mod traceback;
pub mod version;

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};

pub use compile::Unsupported;
pub use config::{Backend, CompileConfig};
pub use runtime::CompiledGraph;

/// Calls `f` with this thread in `mode`, restoring the previous mode afterwards (also when `f`
/// raises).
pub fn call_in_mode<'py>(
    f: &Bound<'py, PyAny>,
    args: &Bound<'py, PyTuple>,
    kwargs: Option<&Bound<'py, PyDict>>,
    mode: mode::Mode,
) -> PyResult<Bound<'py, PyAny>> {
    let prev_entry = mode::set_entry_module(mode::entry_module_of(f.py(), f));
    let prev = hook::set_mode(mode);
    // The C call that got here spent a level eager's direct call of `f` does not.
    let r = recursion::give_back_one_level(|| f.call(args, kwargs));
    hook::set_mode(prev);
    mode::set_entry_module(prev_entry);
    // An interrupt kept while no frame of ours could raise it reaches the caller here.
    match mode::take_interrupt() {
        Some(e) => Err(e),
        None => r,
    }
}

/// Inductor statistics of an entry: (kernels, extern calls, fallbacks), fallback reasons, C source.
pub type InductorInfo = ((usize, usize, usize), Vec<String>, String);

/// Summary of one entry of a code object's cache, for tests and inspection.
pub struct EntryInfo {
    pub compile_id: (u32, u32),
    pub guards: Vec<String>,
    pub graph_code: String,
    /// Which runner the backend chose: "eager", "inductor" or "python".
    pub runner: &'static str,
    /// For the inductor: (kernels, extern calls, fallbacks), fallback reasons and the C source.
    pub inductor: Option<InductorInfo>,
}

pub fn cache_info(code: &Bound<'_, PyAny>) -> (String, Vec<EntryInfo>) {
    // SAFETY: `code` is a live object and we hold the GIL; `get` checks the slot index.
    let Some(slot) = (unsafe { code_cache::get(code.as_ptr()) }) else {
        return ("none".into(), Vec::new());
    };
    let Ok(c) = slot.try_borrow() else {
        return ("busy".into(), Vec::new());
    };
    let state = match &c.state {
        code_cache::CodeState::Normal => "normal".to_string(),
        code_cache::CodeState::Skip => "skip".to_string(),
        code_cache::CodeState::Region => "disable region".to_string(),
        code_cache::CodeState::EntryOnly => "entry only".to_string(),
        code_cache::CodeState::Eager(r) => format!("eager: {r}"),
        code_cache::CodeState::LimitHit => "recompile limit".to_string(),
    };
    let entries = c
        .entries
        .iter()
        .map(|e| EntryInfo {
            compile_id: e.compile_id,
            guards: e.guards.describe(),
            graph_code: e.graph_code.clone(),
            runner: match &e.graph.get().runner {
                backend::Runner::Eager(_) => "eager",
                backend::Runner::Inductor(_) => "inductor",
                backend::Runner::Python(_) => "python",
                backend::Runner::Aot(_) => "aot",
            },
            inductor: match &e.graph.get().runner {
                backend::Runner::Inductor(p) => {
                    Some((p.counts(), p.fallback_reasons(), p.source().to_string()))
                }
                _ => None,
            },
        })
        .collect();
    (state, entries)
}
