//! Raw access to CPython's `_PyInterpreterFrame`, the only place that knows its layout.
//!
//! The hook is handed a frame *before* it has run a single instruction: on 3.11 and 3.12 the
//! `MAKE_CELL` / `COPY_FREE_VARS` prefix has not executed, so argument slots hold plain values (not
//! cells) and free variables still live only in the function's closure tuple. Everything here
//! relies on that.
//!
//! Layouts (64-bit), from CPython's `Include/internal/pycore_frame.h`:
//! 3.11: f_func@0 f_globals@8 f_builtins@16 f_locals@24 f_code@32 frame_obj@40 previous@48
//!       prev_instr@56 stacktop@64 is_entry@68 owner@69 localsplus@72
//! 3.12: f_code@0 previous@8 f_funcobj@16 f_globals@24 f_builtins@32 f_locals@40 frame_obj@48
//!       prev_instr@56 stacktop@64 return_offset@68 owner@70 localsplus@72

use pyo3::ffi;

#[repr(C)]
#[cfg(not(Py_3_12))]
struct RawFrame {
    f_func: *mut ffi::PyObject,
    f_globals: *mut ffi::PyObject,
    f_builtins: *mut ffi::PyObject,
    f_locals: *mut ffi::PyObject,
    f_code: *mut ffi::PyObject,
    frame_obj: *mut ffi::PyObject,
    previous: *mut RawFrame,
    prev_instr: *mut u16,
    stacktop: i32,
    is_entry: bool,
    owner: i8,
    localsplus: [*mut ffi::PyObject; 1],
}

#[repr(C)]
#[cfg(Py_3_12)]
struct RawFrame {
    f_code: *mut ffi::PyObject,
    previous: *mut RawFrame,
    f_func: *mut ffi::PyObject,
    f_globals: *mut ffi::PyObject,
    f_builtins: *mut ffi::PyObject,
    f_locals: *mut ffi::PyObject,
    frame_obj: *mut ffi::PyObject,
    prev_instr: *mut u16,
    stacktop: i32,
    return_offset: u16,
    owner: i8,
    localsplus: [*mut ffi::PyObject; 1],
}

const _: () = assert!(std::mem::offset_of!(RawFrame, localsplus) == 72);

/// A borrowed view of a frame that the interpreter handed to the hook. Every pointer it returns is
/// borrowed from the frame and valid for as long as the hook call lasts.
#[derive(Clone, Copy)]
pub struct FrameView {
    raw: *mut RawFrame,
}

impl FrameView {
    /// # Safety
    /// `ptr` must be the `_PyInterpreterFrame*` passed to the eval-frame hook of this interpreter
    /// version, used only during that hook call.
    pub unsafe fn from_hook(ptr: *mut ffi::_PyInterpreterFrame) -> FrameView {
        FrameView {
            raw: ptr as *mut RawFrame,
        }
    }

    pub fn as_ptr(self) -> *mut ffi::_PyInterpreterFrame {
        self.raw as *mut ffi::_PyInterpreterFrame
    }

    // SAFETY (all accessors below): `raw` points at a live frame for the duration of the hook
    // call (guaranteed by `from_hook`'s contract) and the fields read are plain pointers whose
    // offsets are fixed by the layout above (checked by the const assertion).
    pub fn code(self) -> *mut ffi::PyObject {
        unsafe { (*self.raw).f_code }
    }

    pub fn func(self) -> *mut ffi::PyObject {
        unsafe { (*self.raw).f_func }
    }

    pub fn globals(self) -> *mut ffi::PyObject {
        unsafe { (*self.raw).f_globals }
    }

    pub fn builtins(self) -> *mut ffi::PyObject {
        unsafe { (*self.raw).f_builtins }
    }

    /// Slot `i` of `localsplus` (may be NULL). The caller keeps `i < co_nlocalsplus`.
    pub fn local(self, i: usize) -> *mut ffi::PyObject {
        unsafe {
            let base = std::ptr::addr_of!((*self.raw).localsplus) as *const *mut ffi::PyObject;
            *base.add(i)
        }
    }

    /// The function's closure tuple (NULL when it has none).
    pub fn closure(self) -> *mut ffi::PyObject {
        let func = self.func();
        if func.is_null() {
            return std::ptr::null_mut();
        }
        // SAFETY: f_func / f_funcobj of a function frame is a PyFunctionObject.
        unsafe { (*(func as *mut ffi::PyFunctionObject)).func_closure }
    }
}

/// The opcode byte of the instruction the thread's executing frame is at: called from the hook,
/// that is the frame that caused the new one to be evaluated (the new frame's own `previous`
/// field is not set until evaluation starts, so it cannot be used). `None` when no Python frame
/// is executing (a thread's entry function, a call from C).
///
/// Layout (3.11 and 3.12): `PyFrameObject` is `PyObject_HEAD` (16 bytes), `f_back`@16,
/// `f_frame`@24 (the `_PyInterpreterFrame` it views).
pub fn executing_opcode() -> Option<u8> {
    // SAFETY: called with the GIL held (from the hook). `PyEval_GetFrame` returns a borrowed
    // reference to the executing frame's object (or NULL), alive while that frame runs, which
    // outlasts this call; `f_frame` at offset 24 points to its live interpreter frame, whose
    // `prev_instr` points into its code's bytecode (a 16-bit unit, opcode in the low byte).
    unsafe {
        let f = ffi::PyEval_GetFrame() as *const u8;
        if f.is_null() {
            return None;
        }
        let iframe = *(f.add(24) as *const *const RawFrame);
        if iframe.is_null() {
            return None;
        }
        let instr = (*iframe).prev_instr;
        if instr.is_null() {
            return None;
        }
        Some((*instr).to_le_bytes()[0])
    }
}

/// Whether the thread has a trace function (`sys.settrace`: a debugger, coverage), read from
/// its thread state: `c_tracefunc`, the C function `PyEval_SetTrace` installs (for a Python
/// trace function, CPython's trampoline), NULL when none.
///
/// Layout (3.11 and 3.12, 64-bit): three pointers (`prev`, `next`, `interp`), then seven 32-bit
/// fields on 3.11 (`_initialized`, `_static`, the three recursion counters, `tracing`,
/// `tracing_what`) or a 32-bit status word and six 32-bit fields on 3.12, padded to 56;
/// `cframe`@56, `c_profilefunc`@64, `c_tracefunc`@72 (`tests/test_probes.py` checks these
/// offsets against `sys.settrace`/`sys.setprofile` through ctypes).
pub fn thread_has_trace_function(tstate: *mut ffi::PyThreadState) -> bool {
    if tstate.is_null() {
        return false;
    }
    // SAFETY: `tstate` is the live thread state the interpreter passed to the hook (GIL held);
    // offset 72 is the `c_tracefunc` pointer field in both supported layouts (see above).
    unsafe { !(*((tstate as *const u8).add(72) as *const *const ())).is_null() }
}
