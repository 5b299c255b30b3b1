//! The per-thread mode that drives the eval-frame hook (off, run cached entries only, compile),
//! and the frames that always run with the hook off. Installing the hook itself is `hook`'s job:
//! this module only counts the threads inside compiled regions.

use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};
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
        return untraced(f);
    }
    let prev = set_mode_quiet(Mode::Off);
    let r = untraced(f);
    set_mode_quiet(prev);
    r
}

/// Runs `f` unseen by the thread's trace and profile functions (`sys.settrace`,
/// `sys.setprofile`): the Python code torchferro runs for its own purposes (guards, the
/// compiler, `torchferro._amp`, the graph's runner) is not part of the user's program, and a
/// debugger stepping into a compiled call must not land in it. CPython's own mechanism for
/// this (the `tracing` depth that also keeps a trace function from tracing itself).
pub fn untraced<R>(f: impl FnOnce() -> R) -> R {
    /// Leaves the tracing depth again, also when `f` unwinds.
    struct Leave(*mut ffi::PyThreadState);
    impl Drop for Leave {
        fn drop(&mut self) {
            // SAFETY: pairs the one `PyThreadState_EnterTracing` below, on the same thread
            // state, with the GIL still held.
            unsafe { ffi::PyThreadState_LeaveTracing(self.0) };
        }
    }
    // SAFETY: called with the GIL held (every caller runs inside the hook or a call from
    // Python), so the current thread state is this thread's and live.
    let _leave = unsafe {
        let tstate = ffi::PyThreadState_Get();
        ffi::PyThreadState_EnterTracing(tstate);
        Leave(tstate)
    };
    f()
}

/// Whether some thread is inside a compiled region (the hook is meant to be installed).
pub(crate) fn any_thread_active() -> bool {
    ACTIVE_THREADS.load(Ordering::Acquire) > 0
}

/// Whether the hook acts on this thread (the mode is not `Off`).
pub(crate) fn is_active() -> bool {
    ACTIVE.with(|a| a.get())
}

thread_local! {
    /// The `nn.Module` the innermost compiled call on this thread was made on (NULL for a call
    /// of anything else): the one module whose torch.nn `forward` the hook traces as a top-level
    /// frame (see [`entry_module_of`]). Borrowed: the call holds it alive while it is set.
    static ENTRY_MODULE: Cell<*mut ffi::PyObject> = const { Cell::new(std::ptr::null_mut()) };
}

/// The module a compiled call of `f` enters: `f` itself when it is an `nn.Module`
/// (`torchferro.compile(module)`), the instance of a method bound to one (a compiled class's
/// `__call__`, `torchferro.compile(model.forward)`), else NULL. torch.compile traces torch.nn's
/// own code only where traced code calls it, or as the compiled callable itself; a torch.nn
/// `forward` reached natively (from a comprehension run natively after a break, from a call a
/// graph break left to the interpreter) runs as it is.
pub(crate) fn entry_module_of(py: Python<'_>, f: &Bound<'_, PyAny>) -> *mut ffi::PyObject {
    // SAFETY: type checks on a live object, GIL held.
    if unsafe { ffi::PyFunction_Check(f.as_ptr()) } != 0 {
        return std::ptr::null_mut();
    }
    static MODULE: pyo3::sync::PyOnceLock<Py<PyAny>> = pyo3::sync::PyOnceLock::new();
    let Ok(module) = MODULE.get_or_try_init(py, || -> PyResult<Py<PyAny>> {
        Ok(py.import("torch.nn")?.getattr("Module")?.unbind())
    }) else {
        return std::ptr::null_mut();
    };
    let module = module.bind(py);
    if f.is_instance(module).unwrap_or(false) {
        return f.as_ptr();
    }
    if f.get_type().name().is_ok_and(|n| n == "method") {
        if let Ok(owner) = f.getattr(pyo3::intern!(py, "__self__")) {
            if owner.is_instance(module).unwrap_or(false) {
                return owner.as_ptr();
            }
        }
    }
    std::ptr::null_mut()
}

/// Sets this thread's entry module (see [`entry_module_of`]); returns the previous one.
pub(crate) fn set_entry_module(m: *mut ffi::PyObject) -> *mut ffi::PyObject {
    ENTRY_MODULE.with(|e| e.replace(m))
}

/// Whether `obj` is the module the innermost compiled call on this thread was made on.
pub(crate) fn is_entry_module(obj: *mut ffi::PyObject) -> bool {
    !obj.is_null() && ENTRY_MODULE.with(|e| e.get()) == obj
}

thread_local! {
    /// An interrupt that reached Python code torchferro called at a point that cannot raise
    /// (see [`keep_interrupt`]), waiting to be raised into the user's program.
    static PENDING_INTERRUPT: std::cell::RefCell<Option<PyErr>> =
        const { std::cell::RefCell::new(None) };
}

/// For the sites that must carry on after a failed Python call (a logging handler, a guard's
/// comparison, the skip-file lookup): an error that is not an `Exception` (a `KeyboardInterrupt`
/// a signal handler raised inside that call, `SystemExit`) is the user's, not the call's, and
/// must not be dropped: it is kept and raised at the next point the hook returns to Python
/// ([`take_interrupt`]). Returns the error back when it is an ordinary `Exception`.
pub fn keep_interrupt(py: Python<'_>, err: PyErr) -> Option<PyErr> {
    if err.is_instance_of::<pyo3::exceptions::PyException>(py) {
        return Some(err);
    }
    PENDING_INTERRUPT.with(|p| {
        let mut p = p.borrow_mut();
        // The first one wins: it is the one eager would have raised.
        if p.is_none() {
            *p = Some(err);
        }
    });
    None
}

/// The interrupt kept by [`keep_interrupt`], if any (taken: raise it).
pub fn take_interrupt() -> Option<PyErr> {
    PENDING_INTERRUPT.with(|p| p.try_borrow_mut().ok().and_then(|mut p| p.take()))
}
