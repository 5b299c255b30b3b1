//! Settings read from the Python package (`torchferro.config`) and per-compile configuration.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use pyo3::prelude::*;

static RECOMPILE_LIMIT: AtomicUsize = AtomicUsize::new(8);
static STANCE: AtomicUsize = AtomicUsize::new(0);

/// `torchferro.compiler.set_stance(...)`: how compiled functions behave.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stance {
    Default = 0,
    /// Run every frame eagerly, ignoring compiled entries.
    ForceEager = 1,
    /// Use compiled entries, but run eagerly instead of recompiling.
    EagerOnRecompile = 2,
    /// Raise `torchferro.RecompileError` instead of recompiling.
    FailOnRecompile = 3,
}

impl Stance {
    pub fn parse(s: &str) -> Option<Stance> {
        Some(match s {
            "default" => Stance::Default,
            "force_eager" => Stance::ForceEager,
            "eager_on_recompile" => Stance::EagerOnRecompile,
            "fail_on_recompile" => Stance::FailOnRecompile,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            Stance::Default => "default",
            Stance::ForceEager => "force_eager",
            Stance::EagerOnRecompile => "eager_on_recompile",
            Stance::FailOnRecompile => "fail_on_recompile",
        }
    }
}

pub fn stance() -> Stance {
    match STANCE.load(Ordering::Relaxed) {
        1 => Stance::ForceEager,
        2 => Stance::EagerOnRecompile,
        3 => Stance::FailOnRecompile,
        _ => Stance::Default,
    }
}

pub fn set_stance(s: Stance) {
    STANCE.store(s as usize, Ordering::Relaxed)
}
static DIRECT_CALL: AtomicBool = AtomicBool::new(true);

pub fn recompile_limit() -> usize {
    RECOMPILE_LIMIT.load(Ordering::Relaxed)
}

pub fn set_recompile_limit(n: usize) {
    RECOMPILE_LIMIT.store(n, Ordering::Relaxed)
}

/// When true, a cache hit calls the compiled graph straight from the hook instead of running the
/// transformed code, which only tail-calls it (same result, one Python frame less).
pub fn direct_call() -> bool {
    DIRECT_CALL.load(Ordering::Relaxed)
}

pub fn set_direct_call(v: bool) {
    DIRECT_CALL.store(v, Ordering::Relaxed)
}

/// Automatic dynamic shapes for `dynamic=None` (torch's `automatic_dynamic_shapes`, on by
/// default as in torch): a dimension whose size changed at a recompile becomes dynamic.
/// Turning it off recompiles per size (until the recompile limit); `dynamic=True` and
/// `mark_dynamic` work either way.
static AUTOMATIC_DYNAMIC: AtomicBool = AtomicBool::new(true);

pub fn automatic_dynamic() -> bool {
    AUTOMATIC_DYNAMIC.load(Ordering::Relaxed)
}

pub fn set_automatic_dynamic(v: bool) {
    AUTOMATIC_DYNAMIC.store(v, Ordering::Relaxed)
}

/// The whole-tensor rule of automatic dynamic (`dynamic=None`, on by default; torch has no
/// such rule): at a recompile, a tensor with a changed dimension becomes dynamic in every
/// dimension of size at least 2, not only the changed ones. A batch size and a sequence length
/// that start changing at different calls then cost one recompile instead of two (issue 18's
/// "at most 2 compiles"); a dimension the trace ties to a constant (a weight's width) is still
/// a guarded constant there. Off: torch's rule, only the changed dimensions.
static AUTOMATIC_DYNAMIC_WHOLE_TENSOR: AtomicBool = AtomicBool::new(true);

pub fn automatic_dynamic_whole_tensor() -> bool {
    AUTOMATIC_DYNAMIC_WHOLE_TENSOR.load(Ordering::Relaxed)
}

pub fn set_automatic_dynamic_whole_tensor(v: bool) {
    AUTOMATIC_DYNAMIC_WHOLE_TENSOR.store(v, Ordering::Relaxed)
}

/// Size-oblivious symbols for automatic dynamic (`dynamic=None`, on by default; torch's
/// `backed_size_oblivious`, which torch leaves off): a dimension automatic dynamic makes
/// dynamic may be 1 in the same graph (lower bound 1 instead of 0/1 specialization), unless
/// an op's answer at 1 differs (then the symbol is guarded at least 2, or pinned to 1 where it
/// was traced at 1). Off: sizes 0 and 1 specialize, as torch's default.
static AUTOMATIC_DYNAMIC_SIZE_OBLIVIOUS: AtomicBool = AtomicBool::new(true);

pub fn automatic_dynamic_size_oblivious() -> bool {
    AUTOMATIC_DYNAMIC_SIZE_OBLIVIOUS.load(Ordering::Relaxed)
}

pub fn set_automatic_dynamic_size_oblivious(v: bool) {
    AUTOMATIC_DYNAMIC_SIZE_OBLIVIOUS.store(v, Ordering::Relaxed)
}

/// Which compiler a compiled region uses.
pub enum Backend {
    Eager,
    /// The Rust inductor (`backend="inductor"`, the default).
    Inductor,
    /// `backend="aot_eager"`: like `Eager`, but a training graph gets its backward derived
    /// here, both halves replayed by the eager runner (`backend::aot`).
    AotEager,
    /// A Python callable `backend(gm, example_inputs) -> callable`.
    Python(Py<PyAny>),
}

pub struct CompileConfig {
    pub backend: Backend,
    pub fullgraph: bool,
    /// `dynamic=` (None: automatic dynamic).
    pub dynamic: crate::guards::DynamicPolicy,
}

impl CompileConfig {
    /// Entries are reused only by the backend that made them.
    pub fn backend_key(&self) -> usize {
        match &self.backend {
            Backend::Eager => 1,
            Backend::Inductor => 2,
            Backend::AotEager => 3,
            Backend::Python(f) => f.as_ptr() as usize,
        }
    }
}
