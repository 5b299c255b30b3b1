//! The per-thread mode that drives the eval-frame hook (off, run cached entries only, compile),
//! and the frames that always run with the hook off. Installing the hook itself is `hook`'s job:
//! this module only counts the threads inside compiled regions.

use std::cell::Cell;
use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};
use std::sync::Arc;

use pyo3::ffi;
use pyo3::prelude::*;

use crate::config::CompileConfig;

/// What the hook does on this thread.
#[derive(Clone)]
pub enum Mode {
    Off,
    /// Use cached entries, never compile (`torchferro.compiler` stances, after errors).
    RunOnly,
    Compile(Arc<CompileConfig>),
}

thread_local! {
    static MODE: std::cell::RefCell<Mode> = const { std::cell::RefCell::new(Mode::Off) };
    /// Fast check for `Mode::Off` without borrowing the RefCell.
    static ACTIVE: Cell<bool> = const { Cell::new(false) };
    /// Whether this thread is counted in `ACTIVE_THREADS`.
    static COUNTED: Cell<bool> = const { Cell::new(false) };
}

/// Threads currently inside a compiled region.
static ACTIVE_THREADS: AtomicUsize = AtomicUsize::new(0);

/// How the count of threads inside compiled regions changed with a mode switch.
pub(crate) enum Crossing {
    /// The first thread entered: the hook must be installed.
    FirstIn,
    /// The last thread left: the hook can be removed.
    LastOut,
    Unchanged,
}

/// Sets this thread's mode, counting the thread in or out of the active threads; returns the
/// previous mode and whether the count crossed zero. Call with the GIL held.
pub(crate) fn set_mode_counted(mode: Mode) -> (Mode, Crossing) {
    let now_active = !matches!(mode, Mode::Off);
    let old = set_mode_quiet(mode);
    let was_counted = COUNTED.with(|c| c.replace(now_active));
    let crossing = if now_active && !was_counted {
        if ACTIVE_THREADS.fetch_add(1, Ordering::AcqRel) == 0 {
            Crossing::FirstIn
        } else {
            Crossing::Unchanged
        }
    } else if !now_active && was_counted && ACTIVE_THREADS.fetch_sub(1, Ordering::AcqRel) == 1 {
        Crossing::LastOut
    } else {
        Crossing::Unchanged
    };
    (old, crossing)
}

/// Changes the mode without touching the install count: a temporary switch inside one hook call
/// (guards and compiles run with the hook off, then the mode is put back).
pub(crate) fn set_mode_quiet(mode: Mode) -> Mode {
    ACTIVE.with(|a| a.set(!matches!(mode, Mode::Off)));
    MODE.with(|m| m.replace(mode))
}

/// Runs `f` with the hook off on this thread: compiled graphs and backends run this way, so their
/// own Python code is never traced.
pub fn with_hook_off<R>(f: impl FnOnce() -> R) -> R {
    if !ACTIVE.with(|a| a.get()) {
        return f();
    }
    let prev = set_mode_quiet(Mode::Off);
    let r = f();
    set_mode_quiet(prev);
    r
}

/// Whether the hook acts on this thread (the mode is not `Off`).
pub(crate) fn is_active() -> bool {
    ACTIVE.with(|a| a.get())
}

/// Code objects of `torch.compiler.disable` / `torch._dynamo.disable` wrappers (recursive ones):
/// their frames run with the hook off, so neither the wrapped function nor anything it calls is
/// compiled, as under torch.compile. Registered by the tracer when it meets such a wrapper (the
/// call is a graph break, so the wrapper's frame comes here next); a few slots suffice (one
/// wrapper code per torch version).
static DISABLED_WRAPPERS: [AtomicPtr<ffi::PyObject>; 4] = [
    AtomicPtr::new(std::ptr::null_mut()),
    AtomicPtr::new(std::ptr::null_mut()),
    AtomicPtr::new(std::ptr::null_mut()),
    AtomicPtr::new(std::ptr::null_mut()),
];

/// Records `code` as a disable wrapper's code (kept alive for the life of the process).
pub fn register_disabled_wrapper(code: Bound<'_, PyAny>) {
    let ptr = code.as_ptr();
    for slot in &DISABLED_WRAPPERS {
        let cur = slot.load(Ordering::Acquire);
        if cur == ptr {
            return;
        }
        if cur.is_null()
            && slot
                .compare_exchange(
                    std::ptr::null_mut(),
                    ptr,
                    Ordering::AcqRel,
                    Ordering::Acquire,
                )
                .is_ok()
        {
            // The slot holds the pointer from now on: keep the object alive with it.
            std::mem::forget(code.unbind());
            return;
        }
    }
}

pub(crate) fn is_disabled_wrapper(code: *mut ffi::PyObject) -> bool {
    DISABLED_WRAPPERS.iter().any(|s| {
        let p = s.load(Ordering::Relaxed);
        !p.is_null() && p == code
    })
}
