//! Signal handlers held back while torchferro compiles a frame.
//!
//! CPython runs a Python signal handler (`KeyboardInterrupt` for SIGINT) at the next point the
//! main thread checks for signals: inside any Python code, or any C function that checks. A
//! compile runs a great deal of both on the user's behalf (imports, `logging`, `isinstance`
//! against ABCs in pyo3's conversions, torch's metadata functions), and much of it treats an
//! error as "not this" and carries on; a `KeyboardInterrupt` raised there was lost (issue 13:
//! 3 of 60 interrupts). Instead, while a frame compiles on the main thread, each Python-level
//! handler is replaced by a recorder; afterwards the handlers are put back and every signal
//! that arrived meanwhile is re-delivered with `PyErr_SetInterruptEx`, so its handler runs at
//! the next check, in the user's code, as if the signal had arrived just then.

use std::cell::RefCell;

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::PyCFunction;

thread_local! {
    /// Signals that arrived while handlers were held back, in arrival order.
    static ARRIVED: RefCell<Vec<i32>> = const { RefCell::new(Vec::new()) };
    /// Nesting depth of [`held_back`] on this thread (only the outermost swaps handlers).
    static DEPTH: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

/// Runs `f` (a compile) with the process's Python signal handlers held back (see the module
/// doc). Off the main thread, which never runs Python signal handlers, it just runs `f`.
pub fn held_back<R>(py: Python<'_>, f: impl FnOnce() -> R) -> R {
    if DEPTH.with(|d| d.get()) > 0 {
        return f();
    }
    let saved = match hold_back(py) {
        Ok(Some(s)) => s,
        // Not the main thread, or the signal module refused: nothing is held back.
        _ => return f(),
    };
    DEPTH.with(|d| d.set(d.get() + 1));
    let r = f();
    DEPTH.with(|d| d.set(d.get() - 1));
    restore(py, saved);
    r
}

type Saved = Vec<(i32, Py<PyAny>)>;

fn hold_back(py: Python<'_>) -> PyResult<Option<Saved>> {
    let threading = py.import("threading")?;
    let main = threading.call_method0("main_thread")?;
    if !main.is(&threading.call_method0("current_thread")?) {
        return Ok(None);
    }
    // `_signal`, the C module: `signal`'s wrappers run Python (enum conversions), where a
    // signal's handler could run and raise before anything is held back.
    let signal = py.import("_signal")?;
    let getsignal = signal.getattr("getsignal")?;
    let set = signal.getattr("signal")?;
    let nsig: i32 = signal.getattr("NSIG")?.extract()?;
    let recorder = PyCFunction::new_closure(py, None, None, |args, _kwargs| -> PyResult<()> {
        let signum: i32 = args.get_item(0)?.extract()?;
        ARRIVED.with(|a| a.borrow_mut().push(signum));
        Ok(())
    })?;
    let mut saved: Saved = Vec::new();
    for signum in 1..nsig {
        let h = match getsignal.call1((signum,)) {
            Ok(h) => h,
            Err(e) => {
                crate::mode::keep_interrupt(py, e);
                continue;
            }
        };
        // SIG_DFL / SIG_IGN (ints, not callable) and None (installed from C) stay.
        if !h.is_callable() {
            continue;
        }
        // `signal()` runs pending handlers itself: one may raise (kept for the user) after
        // the recorder is in place, so whether it is in place is read back.
        if let Err(e) = set.call1((signum, &recorder)) {
            crate::mode::keep_interrupt(py, e);
        }
        if getsignal
            .call1((signum,))
            .is_ok_and(|now| now.is(&recorder))
        {
            saved.push((signum, h.unbind()));
        }
    }
    Ok(Some(saved))
}

fn restore(py: Python<'_>, saved: Saved) {
    if let Ok(set) = py.import("_signal").and_then(|s| s.getattr("signal")) {
        for (signum, h) in &saved {
            // Pending signals run their (recorder) handler here, which cannot raise.
            if let Err(e) = set.call1((*signum, h.bind(py))) {
                crate::mode::keep_interrupt(py, e);
            }
        }
    }
    let arrived = ARRIVED.with(|a| std::mem::take(&mut *a.borrow_mut()));
    for signum in arrived {
        // SAFETY: GIL held; PyErr_SetInterruptEx only marks the signal as tripped (no handler
        // runs here) and rejects numbers out of range by returning -1, which leaves no error.
        unsafe {
            ffi::PyErr_SetInterruptEx(signum);
        }
    }
}
