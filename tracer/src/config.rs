//! Settings read from the Python package (`torchferro.config`) and per-compile configuration.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

static RECOMPILE_LIMIT: AtomicUsize = AtomicUsize::new(8);
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
