//! The recursion limit counts the user's frames only.
//!
//! Eager Python spends one level of `sys.getrecursionlimit()` per frame. A compiled call spends
//! more on 3.11: the call of a `CompiledFunction` goes through its C `tp_call` (CPython counts
//! one level there), and each graph break leaves the transformed frame on the stack below the
//! resume function it tail-calls (bytecode has no real tail call). A recursive function near the
//! limit then raised `RecursionError` where eager did not. These levels are given back around
//! the calls that spend them, so the user's code sees eager's budget exactly. On 3.12 C calls
//! count against a separate C budget instead, which the hook itself spends (every hooked call
//! enters the evaluator from C); `frame::c_recursion_nearly_spent` and
//! `hook::evaluate_unhooked` deal with that, so nothing is given back here.

use pyo3::ffi;

/// Runs `f` with one level of the current thread's recursion budget given back: the level the
/// caller spent on something eager does not have (a C call, a frame that only tail-calls).
///
/// `Py_LeaveRecursiveCall` raises the remaining budget by one, `Py_EnterRecursiveCall` takes it
/// again. The take cannot fail: `f` leaves the budget as it found it, so it is one above the
/// (non-negative) level at entry.
pub fn give_back_one_level<R>(f: impl FnOnce() -> R) -> R {
    if cfg!(Py_3_12) {
        return f();
    }
    /// Takes the level back when dropped, also when `f` panics.
    struct TakeBack;
    impl Drop for TakeBack {
        fn drop(&mut self) {
            // SAFETY: the GIL is held (see below); see the function's comment for why this
            // returns 0.
            let failed = unsafe { ffi::Py_EnterRecursiveCall(c"".as_ptr()) } != 0;
            debug_assert!(!failed, "taking back a recursion level cannot fail");
        }
    }
    // SAFETY: called with the GIL held (every caller runs Python code); `TakeBack` keeps the
    // thread's recursion count balanced.
    unsafe { ffi::Py_LeaveRecursiveCall() };
    let _take_back = TakeBack;
    f()
}
