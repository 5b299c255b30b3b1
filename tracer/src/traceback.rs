//! The user's frames in the traceback of an error that a compiled graph raises.
//!
//! Eager Python shows, for an op that raises, the frame of the function running it at the op's
//! line, under the frames of the functions that called it. A compiled graph runs no user frame:
//! the op's node is called from Rust (or from a backend's code), so without help the traceback
//! ends at the caller of the compiled function. The tracer records, for each node, the user's
//! call stack at the instruction that made it ([`UserStack`]: the root frame and the inlined
//! calls); a runner that knows which node raised hands that stack to [`add_user_frames`], which
//! appends one traceback entry per user frame, in eager's order. Entries are made the way
//! CPython's own C modules do it (`_PyTraceback_Add`: an empty code object and frame for the
//! function, file and line), so they own nothing of the program and die with the traceback.
//!
//! The transformed code's own entry at its graph call (an instruction without a line: it
//! stands for the user's frame, whose entry the graph adds) is removed by
//! [`drop_transformed_entry`]. A resume function runs after the transformed frame has returned
//! (`resume::TailCall`), so that frame has no entry in an error the resume function raises.

use std::collections::HashMap;
use std::ffi::{c_char, c_int, CString};
use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::PyTraceback;

use fx::NodeId;

use crate::event::FrameSite;

/// The user's frames active when a node was traced, outermost (the compiled frame) first.
pub type UserStack = Arc<[FrameSite]>;

/// Where each node of a traced graph came from in user code.
#[derive(Clone, Default)]
pub struct Sites {
    pub nodes: HashMap<NodeId, UserStack>,
    /// The compiled frame at its first line: for an error that no node can be blamed for (a
    /// kernel that fused several ops), as torch.compile shows it.
    pub root: Option<UserStack>,
}

impl Sites {
    /// The stack of `node`, or the frame's own first line where the node has none.
    pub fn of(&self, node: NodeId) -> Option<UserStack> {
        self.nodes.get(&node).or(self.root.as_ref()).cloned()
    }
}

extern "C" {
    /// CPython (3.11, 3.12): appends an entry for `funcname` in `filename` at `lineno` to the
    /// traceback of the exception being raised. Exported by libpython (`nm -D`), used by
    /// CPython's own C modules; it keeps the exception set, chaining an error of its own.
    fn _PyTraceback_Add(funcname: *const c_char, filename: *const c_char, lineno: c_int);
}

/// Returns `err` with the user's frames of `stack` added to its traceback: after any entry it
/// already has for the caller, the outermost first (entries are prepended, so the innermost is
/// added first).
pub fn add_user_frames(py: Python<'_>, err: PyErr, stack: &[FrameSite]) -> PyErr {
    err.restore(py);
    for site in stack.iter().rev() {
        let (Ok(function), Ok(filename)) = (
            CString::new(site.function.as_str()),
            CString::new(site.location.filename.as_str()),
        ) else {
            continue;
        };
        let line = c_int::try_from(site.location.lineno).unwrap_or(c_int::MAX);
        // SAFETY: the GIL is held and an exception is set (restored above); both strings are
        // NUL-terminated and outlive the call, which copies them into a new code object.
        unsafe { _PyTraceback_Add(function.as_ptr(), filename.as_ptr(), line) };
    }
    PyErr::fetch(py)
}

/// Removes the first entry of `err`'s traceback if it is a frame of `function`'s code (the
/// transformed code that just ran) stopped at an instruction without a line (the graph call,
/// for which the graph added the user's frames). An entry at a user instruction (the breaking
/// one) stays.
pub fn drop_transformed_entry(py: Python<'_>, err: &PyErr, function: &Bound<'_, PyAny>) {
    let Some(tb) = err.traceback(py) else {
        return;
    };
    let Ok(code) = function.getattr(pyo3::intern!(py, "__code__")) else {
        return;
    };
    let ours = tb
        .getattr(pyo3::intern!(py, "tb_frame"))
        .and_then(|f| f.getattr(pyo3::intern!(py, "f_code")))
        .is_ok_and(|c| c.is(&code));
    if !ours {
        return;
    }
    let no_line = tb
        .getattr(pyo3::intern!(py, "tb_lineno"))
        .is_ok_and(|l| l.is_none() || l.extract::<i64>().is_ok_and(|n| n < 0));
    if !no_line {
        return;
    }
    let next = tb
        .getattr(pyo3::intern!(py, "tb_next"))
        .ok()
        .and_then(|n| n.cast_into::<PyTraceback>().ok());
    err.set_traceback(py, next);
}
