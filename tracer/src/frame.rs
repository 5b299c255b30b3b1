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

    /// Whether the hook may answer for this frame (return a value or raise) without handing it
    /// to CPython's evaluator. On 3.11 the caller (`_PyEval_Vector`) clears and pops the frame
    /// whatever the evaluator did, so always. On 3.12 the evaluator owns that job, so the hook
    /// must undo the frame itself ([`FrameView::release_unevaluated`]); that is only sound for a
    /// frame the thread owns (not a generator's), with no frame object (nobody has seen it), on
    /// top of the thread's frame stack. The last test also checks the layout constants of
    /// `py312` on every call: were they wrong for this interpreter, frames would run as they are.
    ///
    /// # Safety
    /// `tstate` is the thread state the interpreter passed to this hook call (or NULL).
    pub unsafe fn may_answer_for(self, tstate: *mut ffi::PyThreadState) -> bool {
        #[cfg(Py_3_12)]
        {
            if tstate.is_null() {
                return false;
            }
            // SAFETY: `raw` is the unstarted frame handed to this hook call and `tstate` the
            // live thread state evaluating it (GIL held); the fields read are at the 3.12
            // offsets documented on `py312`.
            unsafe {
                let raw = &*self.raw;
                raw.owner == py312::FRAME_OWNED_BY_THREAD
                    && raw.frame_obj.is_null()
                    && self.end_of_frame() == py312::datastack_top(tstate)
            }
        }
        #[cfg(not(Py_3_12))]
        {
            let _ = tstate;
            true
        }
    }

    /// Clears and pops a frame the hook answered for without evaluating it (3.12; nothing on
    /// 3.11, where the caller does it): drops the references the frame holds (its slots up to
    /// `stacktop`, `f_locals`, the function, the code) and gives its space back to the thread's
    /// frame stack, as CPython's evaluator does when a frame returns.
    ///
    /// # Safety
    /// `self` is the frame handed to this hook call, [`FrameView::may_answer_for`] held for it
    /// before anything ran, and everything that borrowed its slots is done with them. Call once.
    pub unsafe fn release_unevaluated(self, tstate: *mut ffi::PyThreadState) {
        #[cfg(Py_3_12)]
        // SAFETY: the caller's contract; see `py312::clear_and_pop`.
        unsafe {
            py312::clear_and_pop(self, tstate)
        }
        #[cfg(not(Py_3_12))]
        let _ = tstate;
    }

    /// One past the frame's last word: where the thread's stack top is while it is the top frame.
    #[cfg(Py_3_12)]
    fn end_of_frame(self) -> *mut *mut ffi::PyObject {
        // SAFETY: `f_code` of a live frame is its code object; `co_framesize` (the frame's size
        // in words, specials included) is the 32-bit field at byte 76 of a 3.12 `PyCodeObject`.
        unsafe {
            let framesize = *((*self.raw).f_code as *const u8).add(76).cast::<i32>();
            (self.raw as *mut *mut ffi::PyObject).add(framesize.max(0) as usize)
        }
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

/// Whether the thread's C recursion budget is nearly spent (3.12; never on 3.11). While a PEP 523
/// hook is installed, 3.12 enters its evaluator from C for every Python call and charges two
/// units of the C budget (`c_recursion_remaining`, 1500 units on release builds) each time,
/// where eager Python, with no hook, runs the calls inline at no C cost: a recursion eager runs
/// 950 deep would stop at about 750. The hook steps aside below this mark (see
/// `hook::eval_frame`), so deeper frames run inline, as eager runs them.
///
/// Layout (3.12, 64-bit): `c_recursion_remaining` is the 32-bit field at byte 36 of
/// `PyThreadState` (read from the 3.12 headers with `offsetof`).
pub fn c_recursion_nearly_spent(tstate: *mut ffi::PyThreadState) -> bool {
    #[cfg(Py_3_12)]
    {
        /// Units left below which the hook steps aside: room for the C calls the hook and the
        /// frames it still runs make.
        const LOW_WATER: i32 = 400;
        if tstate.is_null() {
            return false;
        }
        // SAFETY: `tstate` is the live thread state the interpreter passed to the hook (GIL
        // held); byte 36 is the 32-bit `c_recursion_remaining` in the 3.12 layout.
        unsafe { *((tstate as *const u8).add(36) as *const i32) < LOW_WATER }
    }
    #[cfg(not(Py_3_12))]
    {
        let _ = tstate;
        false
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

/// CPython 3.12's thread frame stack, as `Python/pystate.c` and `Python/frame.c` keep it.
/// Offsets (64-bit, read from the 3.12 headers with `offsetof`): `PyThreadState`
/// `datastack_chunk`@232, `datastack_top`@240, `datastack_limit`@248; `_PyStackChunk`
/// `previous`@0, `size`@8, `top`@16, `data`@24.
#[cfg(Py_3_12)]
mod py312 {
    use super::{FrameView, RawFrame};
    use pyo3::ffi;

    pub const FRAME_OWNED_BY_THREAD: i8 = 0;

    #[repr(C)]
    struct StackChunk {
        previous: *mut StackChunk,
        size: usize,
        top: isize,
        data: [*mut ffi::PyObject; 1],
    }

    /// # Safety
    /// `offset` is one of the `PyThreadState` offsets above and `tstate` is live.
    unsafe fn field<T>(tstate: *mut ffi::PyThreadState, offset: usize) -> *mut T {
        // SAFETY: the caller's contract: the offset lies inside the thread state.
        unsafe { (tstate as *mut u8).add(offset).cast::<T>() }
    }

    /// # Safety
    /// `tstate` is the live thread state of the calling thread, GIL held.
    pub unsafe fn datastack_top(tstate: *mut ffi::PyThreadState) -> *mut *mut ffi::PyObject {
        // SAFETY: the caller's contract; offset 240 is `datastack_top`.
        unsafe { *field::<*mut *mut ffi::PyObject>(tstate, 240) }
    }

    /// # Safety
    /// As [`FrameView::release_unevaluated`].
    pub unsafe fn clear_and_pop(fv: FrameView, tstate: *mut ffi::PyThreadState) {
        // SAFETY: the frame is unstarted, owned by the thread, has no frame object and was on
        // top of the thread's stack when the hook got it (checked by `may_answer_for`); what
        // ran since pushed and popped its own frames above it, which `top_ok` re-checks. Its
        // slots below `stacktop` hold owned references or NULL, as do `f_locals`, the function
        // and the code.
        unsafe {
            let raw: *mut RawFrame = fv.raw;
            let top_ok = fv.end_of_frame() == datastack_top(tstate);
            let base = std::ptr::addr_of_mut!((*raw).localsplus) as *mut *mut ffi::PyObject;
            let n = (*raw).stacktop.max(0) as usize;
            // Every reference is unlinked and the space given back before any is dropped: a
            // finalizer run by a drop may run Python code, which pushes frames of its own.
            let slots: Vec<*mut ffi::PyObject> = (0..n)
                .map(|i| std::mem::replace(&mut *base.add(i), std::ptr::null_mut()))
                .collect();
            (*raw).stacktop = 0;
            let f_locals = std::mem::replace(&mut (*raw).f_locals, std::ptr::null_mut());
            let func = std::mem::replace(&mut (*raw).f_func, std::ptr::null_mut());
            let code = (*raw).f_code;
            if top_ok {
                pop(tstate, raw as *mut *mut ffi::PyObject);
            }
            for o in slots {
                ffi::Py_XDECREF(o);
            }
            ffi::Py_XDECREF(f_locals);
            ffi::Py_XDECREF(func);
            ffi::Py_DECREF(code);
        }
    }

    /// Gives the frame's space back: the stack top moves down to the frame's base, or, when
    /// the frame opened a chunk, that chunk is freed and the previous one becomes current.
    ///
    /// # Safety
    /// `base` is the start of the top frame of `tstate`'s stack.
    unsafe fn pop(tstate: *mut ffi::PyThreadState, base: *mut *mut ffi::PyObject) {
        // SAFETY: the chunk fields are CPython's own bookkeeping, updated as
        // `_PyThreadState_PopFrame` does. A frame that starts a chunk is never in the root
        // chunk (its first slots are the entry frame's), so `previous` is non-NULL; the chunk
        // was allocated by CPython through the object arena allocator with `size` bytes.
        unsafe {
            let chunk_slot = field::<*mut StackChunk>(tstate, 232);
            let top_slot = field::<*mut *mut ffi::PyObject>(tstate, 240);
            let limit_slot = field::<*mut *mut ffi::PyObject>(tstate, 248);
            let chunk = *chunk_slot;
            let first = std::ptr::addr_of_mut!((*chunk).data) as *mut *mut ffi::PyObject;
            if base == first && !(*chunk).previous.is_null() {
                let previous = (*chunk).previous;
                let data = std::ptr::addr_of_mut!((*previous).data) as *mut *mut ffi::PyObject;
                *top_slot = data.offset((*previous).top);
                *chunk_slot = previous;
                *limit_slot = (previous as *mut u8).add((*previous).size).cast();
                let mut arena = ffi::PyObjectArenaAllocator {
                    ctx: std::ptr::null_mut(),
                    alloc: None,
                    free: None,
                };
                ffi::PyObject_GetArenaAllocator(&mut arena);
                if let Some(free) = arena.free {
                    free(arena.ctx, chunk.cast(), (*chunk).size);
                }
            } else {
                *top_slot = base;
            }
        }
    }
}
