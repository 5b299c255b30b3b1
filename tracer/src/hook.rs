//! The PEP 523 eval-frame hook and the per-thread mode that drives it.
//!
//! The interpreter-wide hook is installed only while at least one thread is inside a compiled
//! region (installing it deoptimises every Python-to-Python call), and chains to whatever
//! evaluator was installed before it.

use std::sync::atomic::{AtomicPtr, Ordering};
use std::sync::Arc;

use pyo3::ffi;
use pyo3::prelude::*;

use crate::code_cache::{self, CodeState};
use crate::compile;
use crate::frame::FrameView;
use crate::mode::{self, set_mode_quiet, Crossing, Mode};
use crate::runtime::CompiledGraph;
use crate::source::Scope;

type EvalFn = unsafe extern "C" fn(
    *mut ffi::PyThreadState,
    *mut ffi::_PyInterpreterFrame,
    i32,
) -> *mut ffi::PyObject;
/// The evaluator we chain to (CPython's default unless someone else hooked first).
static PREVIOUS: AtomicPtr<()> = AtomicPtr::new(std::ptr::null_mut());

fn previous() -> EvalFn {
    let p = PREVIOUS.load(Ordering::Acquire);
    debug_assert!(!p.is_null());
    // SAFETY: PREVIOUS only ever holds a function pointer of type EvalFn obtained from
    // _PyInterpreterState_GetEvalFrameFunc, set before our hook can run.
    unsafe { std::mem::transmute::<*mut (), EvalFn>(p) }
}

/// Sets this thread's mode, returning the previous one. Installs or removes the interpreter-wide
/// hook as the count of active threads crosses zero. Call with the GIL held.
pub fn set_mode(mode: Mode) -> Mode {
    let (old, crossing) = mode::set_mode_counted(mode);
    match crossing {
        Crossing::FirstIn => install(),
        Crossing::LastOut => uninstall(),
        Crossing::Unchanged => {}
    }
    old
}

fn install() {
    // SAFETY: GIL held (set_mode's contract); reading and replacing the interpreter's evaluator
    // is what these functions exist for.
    unsafe {
        let interp = ffi::PyInterpreterState_Get();
        let cur = ffi::_PyInterpreterState_GetEvalFrameFunc(interp);
        if cur as usize != eval_frame as EvalFn as usize {
            PREVIOUS.store(cur as *mut (), Ordering::Release);
            ffi::_PyInterpreterState_SetEvalFrameFunc(interp, Some(eval_frame));
        }
    }
}

fn uninstall() {
    // SAFETY: as in `install`. We only restore if we are still the installed evaluator, so a
    // hook installed after ours is left alone.
    unsafe {
        let interp = ffi::PyInterpreterState_Get();
        let cur = ffi::_PyInterpreterState_GetEvalFrameFunc(interp);
        if cur as usize == eval_frame as EvalFn as usize {
            let prev = PREVIOUS.load(Ordering::Acquire);
            ffi::_PyInterpreterState_SetEvalFrameFunc(
                interp,
                Some(std::mem::transmute::<*mut (), EvalFn>(prev)),
            );
        }
    }
}

/// What the hook does with frames of `code`: skipped (code we never trace), traced only as a
/// compiled call's entry module (`CodeState::EntryOnly`), or traced.
fn code_state(py: Python<'_>, code: *mut ffi::PyObject) -> CodeState {
    if is_region(py, code) {
        return CodeState::Region;
    }
    if skipped_file(py, code) {
        return CodeState::Skip;
    }
    // SAFETY: code is the live code object of the frame being evaluated.
    let code = unsafe { Bound::from_borrowed_ptr(py, code) };
    let name: String = code
        .getattr("co_name")
        .and_then(|f| f.extract())
        .unwrap_or_default();
    let filename: String = code
        .getattr("co_filename")
        .and_then(|f| f.extract())
        .unwrap_or_default();
    if name == "forward" && filename.contains("/torch/nn/modules/") {
        CodeState::EntryOnly
    } else {
        // A resume function of a torch.nn `forward` (reached only by the tail call of that
        // entry's transformed code) is traced like the entry it continues.
        CodeState::Normal
    }
}

/// Whether frames of `code` run with the hook off for their extent ([`CodeState::Region`]):
/// - the `torch._dynamo.disable` wrapper (the `_fn` closure of `DisableContext.__call__`):
///   torch's own disable regions (`torch._disable_dynamo`, around custom-op kernels, the
///   optimizers' `_init_group` and others) build it lazily, on their first call, where no
///   traced code meets it; recognised here, nothing under such a region compiles from the
///   first call on, as under torch.compile;
/// - module bodies: an import inside a compiled region (torch's lazy `import torch._dynamo`
///   is one) would otherwise compile every function the imported modules call at import time
///   (decorators, registries), each once, against half-imported modules.
fn is_region(py: Python<'_>, code: *mut ffi::PyObject) -> bool {
    // SAFETY: code is the live code object of the frame being evaluated.
    let code = unsafe { Bound::from_borrowed_ptr(py, code) };
    let text = |attr: &str| -> String {
        code.getattr(attr)
            .and_then(|f| f.extract())
            .unwrap_or_default()
    };
    let name = text("co_name");
    if name == "<module>" {
        return true;
    }
    name == "_fn"
        && text("co_qualname").starts_with("DisableContext.__call__.")
        && text("co_filename").ends_with("/torch/_dynamo/eval_frame.py")
}

/// Whether `filename` belongs to code we never trace.
fn skipped_file(py: Python<'_>, code: *mut ffi::PyObject) -> bool {
    // SAFETY: code is the live code object of the frame being evaluated.
    let code = unsafe { Bound::from_borrowed_ptr(py, code) };
    let flags: u32 = code
        .getattr("co_flags")
        .and_then(|f| f.extract())
        .unwrap_or(0);
    // Generators, coroutines, async generators, iterable coroutines.
    if flags & (0x20 | 0x80 | 0x100 | 0x200) != 0 {
        return true;
    }
    // Code without CO_OPTIMIZED reads and writes a namespace dict (`LOAD_NAME`): a class body
    // or module code run by `exec`. It makes no tensors of its own and runs as it is.
    if flags & 0x1 == 0 {
        return true;
    }
    let name: String = code
        .getattr("co_name")
        .and_then(|f| f.extract())
        .unwrap_or_default();
    // Finalizers run wherever the last reference drops (or the garbage collector runs), not
    // where the program calls them: they run as they are.
    if name == "__del__" {
        return true;
    }
    let filename: String = code
        .getattr("co_filename")
        .and_then(|f| f.extract())
        .unwrap_or_default();
    if filename.starts_with("<frozen ")
        || filename.starts_with('<')
            && (name == "<module>" || filename == "<string>" && name.starts_with('<'))
    {
        return true;
    }
    // `forward` of torch.nn's own modules is traced where it is the compiled call's entry, so
    // compiling a `torch.nn.Sequential` (whose forward lives in torch) captures its layers
    // (`code_state`).
    if crate::code::user_function_name(&name) == "forward"
        && filename.contains("/torch/nn/modules/")
    {
        return false;
    }
    crate::skipfiles::is_skipped(py, &filename)
}

/// The evaluator CPython calls for every Python frame while the hook is installed.
///
/// # Safety
/// Called by CPython with the GIL held and a frame that has not started executing.
pub unsafe extern "C" fn eval_frame(
    tstate: *mut ffi::PyThreadState,
    frame: *mut ffi::_PyInterpreterFrame,
    throwflag: i32,
) -> *mut ffi::PyObject {
    let prev = previous();
    if throwflag != 0 || !mode::is_active() {
        // SAFETY: forwarding the interpreter's own arguments to the chained evaluator.
        return unsafe { prev(tstate, frame, throwflag) };
    }
    // Under a trace function (a debugger, coverage) every frame runs as it is: a debugger
    // stepping into a call, or stopping at a breakpoint, sees the user's frame and its lines,
    // as in eager; a compiled graph has neither.
    if crate::frame::thread_has_trace_function(tstate) {
        // SAFETY: forwarding the interpreter's own arguments to the chained evaluator.
        return unsafe { prev(tstate, frame, throwflag) };
    }
    // Deep in a recursion on 3.12 the frame runs with the hook out of the way, so that the
    // calls below it run inline and cost no more of the C budget than eager's do.
    if crate::frame::c_recursion_nearly_spent(tstate) {
        // SAFETY: the interpreter's own arguments, forwarded.
        return unsafe { evaluate_unhooked(tstate, frame, throwflag) };
    }
    // SAFETY: CPython holds the GIL while evaluating frames.
    let py = unsafe { Python::assume_attached() };
    if crate::config::stance() == crate::config::Stance::ForceEager {
        // SAFETY: forwarding the interpreter's own arguments to the chained evaluator.
        return unsafe { prev(tstate, frame, throwflag) };
    }
    // SAFETY: `frame` is the frame handed to this hook call.
    let fv = unsafe { FrameView::from_hook(frame) };
    // A frame the hook could not clear up after itself (3.12: not the thread's own, or not on
    // top of its stack) runs as it is.
    // SAFETY: `tstate` is the interpreter's own argument to this call.
    if !unsafe { fv.may_answer_for(tstate) } {
        // SAFETY: forwarding the interpreter's own arguments to the chained evaluator.
        return unsafe { prev(tstate, frame, throwflag) };
    }
    // The sizes a shape check read are handed to the runner of the entry that check admitted
    // (`shape_env::take_checked_sizes`, matched by the inputs' addresses). A check whose
    // runner did not take them (a counting or eager backend) must not leave them to the next
    // frame: a first call compiles without any check, and its runner would take the old
    // values wherever its inputs reuse the old objects' addresses (a tensor freed and another
    // allocated there, or one resized in place): a program for the old sizes, a wrong answer.
    crate::guards::shape_env::clear_checked_sizes();
    // The hook is off while we look at the code, check guards and compile.
    let mode = set_mode_quiet(Mode::Off);
    // A panic must not unwind into CPython (that aborts the process): a bug in torchferro runs
    // the frame eagerly instead, and says so.
    // Unseen by a profile function: guards and the compiler are not the user's program.
    let action = match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        mode::untraced(|| decide(py, fv, mode.clone()))
    })) {
        Ok(a) => a,
        Err(p) => {
            let what = p
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "a panic".into());
            crate::log::warn(
                py,
                &format!("torchferro internal error (running the frame eagerly): {what}"),
            );
            Action::Default
        }
    };
    set_mode_quiet(mode);
    // An interrupt that landed in Python code the guards or the compiler called, which could
    // not raise it there, is raised now, before the frame runs (eager would not have got
    // further either).
    if let Some(e) = mode::take_interrupt() {
        e.restore(py);
        // SAFETY: the frame was answerable (checked above) and nothing borrows its slots.
        unsafe { fv.release_unevaluated(tstate) };
        return std::ptr::null_mut();
    }
    match action {
        Action::Run(run, argv) => {
            // argv borrows the frame's argument slots and closure cells, which stay alive
            // while the frame exists (until after we return).
            let go = || match &run {
                Run::Graph(g, inputs) => g.get().run_raw(py, &argv, inputs.as_deref()),
                Run::Function(f) => call_function(py, f, &argv),
                Run::Eager(code) => call_twin(py, code, fv, &argv),
            };
            let r =
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(go)).unwrap_or_else(|_| {
                    Err(pyo3::exceptions::PyRuntimeError::new_err(
                        "torchferro internal error while running a compiled graph (a Rust panic)",
                    ))
                });
            let result = match r.and_then(|v| match mode::take_interrupt() {
                Some(e) => Err(e),
                None => Ok(v),
            }) {
                Ok(v) => v.into_ptr(),
                Err(e) => {
                    e.restore(py);
                    std::ptr::null_mut()
                }
            };
            drop(argv);
            // SAFETY: the frame was answerable (checked above), and the run that borrowed its
            // slots is over.
            unsafe { fv.release_unevaluated(tstate) };
            result
        }
        // SAFETY: forwarding the interpreter's own arguments to the chained evaluator.
        Action::Default => unsafe { prev(tstate, frame, throwflag) },
        Action::Region => {
            let mode = set_mode_quiet(Mode::Off);
            // SAFETY: forwarding the interpreter's own arguments to the chained evaluator.
            let r = unsafe { prev(tstate, frame, throwflag) };
            set_mode_quiet(mode);
            r
        }
        Action::DefaultExpectingError(slot, traced) => {
            // SAFETY: as for `Action::Default`.
            let r = unsafe { prev(tstate, frame, throwflag) };
            if !r.is_null() {
                let why = format!(
                    "{traced}, but the function ran without it: a torchferro bug; it runs \
                     eagerly from now on"
                );
                crate::log::warn(py, &why);
                if let Ok(mut c) = slot.try_borrow_mut() {
                    c.state = CodeState::Eager(why);
                }
            }
            r
        }
        Action::Raise(e) => {
            e.restore(py);
            // SAFETY: the frame was answerable (checked above) and nothing borrows its slots.
            unsafe { fv.release_unevaluated(tstate) };
            std::ptr::null_mut()
        }
    }
}

/// Evaluates a frame with the interpreter's evaluator set back to the one before ours, so the
/// frames it calls run inline (3.12 runs Python-to-Python calls inline only when no PEP 523
/// hook is installed); ours is put back afterwards unless someone replaced it meanwhile. The
/// hook is per interpreter: frames other threads start meanwhile run uncompiled (correct).
///
/// # Safety
/// Called from `eval_frame` with its own arguments, GIL held.
unsafe fn evaluate_unhooked(
    tstate: *mut ffi::PyThreadState,
    frame: *mut ffi::_PyInterpreterFrame,
    throwflag: i32,
) -> *mut ffi::PyObject {
    let prev = previous();
    // SAFETY: GIL held; the evaluator is swapped only while we are the installed one.
    unsafe {
        let interp = ffi::PyInterpreterState_Get();
        let ours = ffi::_PyInterpreterState_GetEvalFrameFunc(interp) as usize
            == eval_frame as EvalFn as usize;
        if ours {
            ffi::_PyInterpreterState_SetEvalFrameFunc(interp, Some(prev));
        }
        let r = prev(tstate, frame, throwflag);
        if ours
            && ffi::_PyInterpreterState_GetEvalFrameFunc(interp) as usize == prev as usize
            && mode::any_thread_active()
        {
            ffi::_PyInterpreterState_SetEvalFrameFunc(interp, Some(eval_frame));
        }
        r
    }
}

/// Runs the transformed code `f` on the frame's arguments, then the resume functions it hands
/// back (`resume::TailCall`), each after the frame before it has returned.
fn call_function<'py>(
    py: Python<'py>,
    f: &Py<PyAny>,
    argv: &[*mut ffi::PyObject],
) -> PyResult<Bound<'py, PyAny>> {
    // SAFETY: argv holds borrowed, live object pointers; vectorcall borrows them and returns a
    // new reference or NULL with an exception set.
    let r = unsafe {
        ffi::PyObject_Vectorcall(f.as_ptr(), argv.as_ptr(), argv.len(), std::ptr::null_mut())
    };
    if r.is_null() {
        let e = PyErr::fetch(py);
        crate::traceback::drop_transformed_entry(py, &e, f.bind(py));
        return Err(e);
    }
    // SAFETY: a new reference from vectorcall.
    let mut r = unsafe { Bound::from_owned_ptr(py, r) };
    while let Ok(tail) = r.cast::<crate::resume::TailCall>() {
        let call = tail.get().call.bind(py).clone();
        let (Ok(resume), Ok(args)) = (call.get_item(0), call.get_slice(1, call.len()).cast_into())
        else {
            return Err(pyo3::exceptions::PyRuntimeError::new_err(
                "torchferro: a tail call without its function",
            ));
        };
        // Called once the frame before it has returned, a resume function spends the one
        // recursion level (and shows the one frame) that eager's frame does.
        r = resume.call1(&args)?;
    }
    Ok(r)
}

fn decide(py: Python<'_>, fv: FrameView, mode: Mode) -> Action {
    let code = fv.code();
    // SAFETY: code is live for the duration of the frame; GIL held.
    let Some(slot) = (unsafe { code_cache::get_or_create(code, || code_state(py, code)) }) else {
        return Action::Default;
    };
    match decide_cached(py, fv, slot, mode) {
        a @ (Action::Default | Action::DefaultExpectingError(..)) => {
            match eager_twin(py, slot, code) {
                Some(twin) => {
                    let nargs = slot.try_borrow().map(|c| c.nargs).unwrap_or(0);
                    Action::Run(Run::Eager(twin), (0..nargs).map(|i| fv.local(i)).collect())
                }
                None => a,
            }
        }
        a => a,
    }
}

/// The code a resume function runs when its frame runs eagerly (given up, skipped, past the
/// recompile limit): its own code under the user's function name, kept in its cache and never
/// traced. Run as it is, the resume code would show its generated name
/// (`torchferro_resume_in_f_at_12`) in tracebacks and to `sys._getframe()`, where eager shows
/// the user's function; its transformed code carries the user's name for the same reason
/// (`resume::transformed_code`). `None` for every other code, and if the copy cannot be made
/// (the frame then runs as it is).
fn eager_twin(
    py: Python<'_>,
    slot: &code_cache::Slot,
    code: *mut ffi::PyObject,
) -> Option<Py<PyAny>> {
    match slot.try_borrow() {
        Ok(c) if !c.resume => return None,
        Ok(c) => {
            if let Some(t) = &c.eager_twin {
                return Some(t.clone_ref(py));
            }
        }
        Err(_) => return None,
    }
    // SAFETY: code is the live code object of the frame being evaluated; GIL held.
    let code = unsafe { Bound::from_borrowed_ptr(py, code) };
    let name: String = code.getattr("co_name").ok()?.extract().ok()?;
    let kw = pyo3::types::PyDict::new(py);
    kw.set_item("co_name", crate::code::user_function_name(&name))
        .ok()?;
    let twin = code.call_method("replace", (), Some(&kw)).ok()?;
    code_cache::mark_skip(&twin);
    let twin = twin.unbind();
    if let Ok(mut c) = slot.try_borrow_mut() {
        c.eager_twin = Some(twin.clone_ref(py));
    }
    Some(twin)
}

/// Runs `code` (a resume function's [`eager_twin`]) as a function of the frame's globals and
/// closure on its arguments.
fn call_twin<'py>(
    py: Python<'py>,
    code: &Py<PyAny>,
    fv: FrameView,
    argv: &[*mut ffi::PyObject],
) -> PyResult<Bound<'py, PyAny>> {
    // SAFETY: GIL held; code and the frame's globals are live; the new function (or NULL with
    // an exception set) is owned here.
    let f = unsafe {
        let f = ffi::PyFunction_NewWithQualName(code.as_ptr(), fv.globals(), std::ptr::null_mut());
        if f.is_null() {
            return Err(PyErr::fetch(py));
        }
        Bound::from_owned_ptr(py, f)
    };
    let closure = fv.closure();
    // SAFETY: f is a new function object and closure a live tuple of cells (the frame's own).
    if !closure.is_null() && unsafe { ffi::PyFunction_SetClosure(f.as_ptr(), closure) } != 0 {
        return Err(PyErr::fetch(py));
    }
    // SAFETY: argv holds borrowed, live object pointers; vectorcall borrows them and returns a
    // new reference or NULL with an exception set.
    let r = unsafe {
        ffi::PyObject_Vectorcall(f.as_ptr(), argv.as_ptr(), argv.len(), std::ptr::null_mut())
    };
    if r.is_null() {
        return Err(PyErr::fetch(py));
    }
    // SAFETY: a new reference from vectorcall.
    Ok(unsafe { Bound::from_owned_ptr(py, r) })
}

fn decide_cached(
    py: Python<'_>,
    fv: FrameView,
    slot: &'static code_cache::Slot,
    mode: Mode,
) -> Action {
    let (mut state, nargs, entry_only) = match slot.try_borrow() {
        Ok(c) => (c.state.clone(), c.nargs, c.entry_only),
        Err(_) => (CodeState::Skip, 0, false),
    };
    if state == CodeState::Region {
        return Action::Region;
    }
    if entry_only {
        // A torch.nn `forward` reached natively runs as it is; on the compiled module itself
        // (its `self`, the first argument) it is traced.
        if nargs == 0 || !mode::is_entry_module(fv.local(0)) {
            return Action::Default;
        }
        if state == CodeState::EntryOnly {
            state = CodeState::Normal;
        }
    }
    if state == CodeState::Skip
        || matches!(state, CodeState::Eager(_))
            && slot
                .try_borrow()
                .map(|c| c.entries.is_empty())
                .unwrap_or(true)
    {
        return Action::Default;
    }
    if entered_at_an_arbitrary_point(py, fv, nargs) || under_functorch_transform(py) {
        return Action::Default;
    }
    run_frame(py, fv, slot, &mode, state, nargs)
}

/// Whether the interpreter entered this frame on its own rather than because the calling code
/// called it: a signal handler (run by the eval breaker at a loop's back edge or a function's
/// start, and called with the interrupted frame), a trace or profile function (called with a
/// frame), a weakref callback (called with the dead reference), or any function run by a
/// reference count dropping to zero (`STORE_FAST`, `POP_TOP`, ...). Such frames run as they
/// are: compiling them would trace code at arbitrary points of the compiled program (a
/// `KeyboardInterrupt` handler recompiled on every signal until the limit).
fn entered_at_an_arbitrary_point(py: Python<'_>, fv: FrameView, nargs: usize) -> bool {
    if let Some(op) = crate::frame::executing_opcode() {
        if interrupt_points(py)[op as usize] {
            return true;
        }
    }
    for i in 0..nargs.min(2) {
        let a = fv.local(i);
        if a.is_null() {
            continue;
        }
        // SAFETY: a non-NULL argument slot of a frame that has not started holds a live object.
        let frame_or_weakref = unsafe {
            ffi::PyFrame_Check(a) != 0 || i == 0 && nargs == 1 && ffi::PyWeakref_CheckRef(a) != 0
        };
        if frame_or_weakref {
            return true;
        }
    }
    false
}

/// Whether a functorch transform (`torch.vmap`, `torch.func.grad`, `jacrev`, ...) run natively
/// is active: the frame's tensors are then the transform's wrappers (a `BatchedTensor` shows a
/// slice's sizes and has no storage of its own), which our guards do not tell from plain
/// tensors and a compiled kernel would read as memory (a crash). Such a frame runs as it is,
/// under the transform, as eager runs it.
fn under_functorch_transform(py: Python<'_>) -> bool {
    static PEEK: pyo3::sync::PyOnceLock<Option<Py<PyAny>>> = pyo3::sync::PyOnceLock::new();
    let peek = PEEK.get_or_init(py, || {
        py.import("torch._C._functorch")
            .and_then(|m| m.getattr("peek_interpreter_stack"))
            .map(Bound::unbind)
            .ok()
    });
    match peek {
        Some(f) => f.call0(py).map(|top| !top.is_none(py)).unwrap_or_else(|e| {
            crate::mode::keep_interrupt(py, e);
            false
        }),
        None => false,
    }
}

/// Opcodes (all specialized forms included) that never call Python code themselves: a frame
/// entered while the caller executes one of them was entered by the eval breaker (signal
/// handlers, pending calls) or by a deallocation (`__del__`, weakref callbacks).
fn interrupt_points(py: Python<'_>) -> &'static [bool; 256] {
    static TABLE: std::sync::OnceLock<[bool; 256]> = std::sync::OnceLock::new();
    if let Some(t) = TABLE.get() {
        return t;
    }
    // Built outside `get_or_init` (it runs Python; see `skipfiles::prefixes`).
    let mut table = [false; 256];
    let names: Vec<String> = py
        .import("dis")
        .and_then(|d| {
            d.getattr("_all_opname")
                .or_else(|_| d.getattr("opname"))?
                .extract()
        })
        .unwrap_or_default();
    for (i, n) in names.iter().enumerate().take(256) {
        // `STORE_FAST__LOAD_FAST` is both; `RESUME_QUICK` is `RESUME`.
        table[i] = n.split("__").all(|part| {
            matches!(
                part.trim_end_matches("_QUICK"),
                "RESUME"
                    | "JUMP_BACKWARD"
                    | "JUMP_BACKWARD_NO_INTERRUPT"
                    | "STORE_FAST"
                    | "DELETE_FAST"
                    | "LOAD_FAST"
                    | "LOAD_CONST"
                    | "POP_TOP"
                    | "NOP"
            )
        });
    }
    TABLE.get_or_init(|| table)
}

/// What a cache hit runs.
enum Run {
    /// The compiled graph, called straight from the hook, with the graph inputs the guard
    /// check fetched (`None` right after a compile: the graph reads them itself).
    Graph(Py<CompiledGraph>, Option<Vec<Py<PyAny>>>),
    /// The transformed code, as a function of (arguments..., cells...).
    Function(Py<PyAny>),
    /// A resume function's code under the user's name, run eagerly on the arguments.
    Eager(Py<PyAny>),
}

enum Action {
    /// The entry to run and the frame's arguments.
    Run(Run, Vec<*mut ffi::PyObject>),
    Default,
    /// Run natively with the hook off on this thread ([`CodeState::Region`]).
    Region,
    /// Run natively; if the frame returns normally, give its code up (the traced error it was
    /// run for did not happen: see `compile::Outcome::RunEagerlyExpectingError`).
    DefaultExpectingError(&'static code_cache::Slot, String),
    Raise(PyErr),
}

fn frame_scope(fv: FrameView, nargs: usize) -> (Scope, Vec<*mut ffi::PyObject>) {
    let closure = fv.closure();
    let mut argv: Vec<*mut ffi::PyObject> = (0..nargs).map(|i| fv.local(i)).collect();
    if !closure.is_null() {
        // SAFETY: func_closure is a tuple of cells owned by the function, alive with the frame.
        unsafe {
            for i in 0..ffi::PyTuple_GET_SIZE(closure) {
                argv.push(ffi::PyTuple_GET_ITEM(closure, i));
            }
        }
    }
    let scope = Scope::from_argv(&argv, nargs, fv.globals(), fv.builtins());
    (scope, argv)
}

fn run_frame(
    py: Python<'_>,
    fv: FrameView,
    slot: &'static code_cache::Slot,
    mode: &Mode,
    state: CodeState,
    nargs: usize,
) -> Action {
    let (scope, argv) = frame_scope(fv, nargs);
    let backend_key = match mode {
        Mode::Compile(cfg) => Some(cfg.backend_key()),
        _ => None,
    };
    // Lookup, most recent first; a hit moves to the front.
    let n = slot.try_borrow().map(|c| c.entries.len()).unwrap_or(0);
    for i in 0..n {
        let entry = match slot.try_borrow() {
            Ok(c) => match c.entries.get(i) {
                Some(e) => e.clone(),
                None => break,
            },
            Err(_) => break,
        };
        if backend_key.is_some_and(|k| k != entry.backend_key) {
            continue;
        }
        if let Some(inputs) = entry.guards.check_fetching(py, &scope) {
            if i > 0 {
                if let Ok(mut c) = slot.try_borrow_mut() {
                    if i < c.entries.len() {
                        let e = c.entries.remove(i);
                        c.entries.insert(0, e);
                    }
                }
            }
            let inputs = inputs.into_iter().map(Bound::unbind).collect();
            return hit(entry, argv, Some(inputs));
        }
    }
    let Mode::Compile(cfg) = mode else {
        return Action::Default;
    };
    if state != CodeState::Normal {
        return Action::Default;
    }
    // Signals that arrive while compiling are handled after it, in the user's code.
    match crate::signals::held_back(py, || compile::compile_frame(py, fv, &scope, slot, cfg)) {
        compile::Outcome::Compiled(entry) => hit(entry, argv, None),
        compile::Outcome::RunEagerly => Action::Default,
        compile::Outcome::RunEagerlyExpectingError(m) => Action::DefaultExpectingError(slot, m),
        compile::Outcome::Raise(e) => Action::Raise(e),
    }
}

fn hit(
    entry: Arc<code_cache::CacheEntry>,
    argv: Vec<*mut ffi::PyObject>,
    inputs: Option<Vec<Py<PyAny>>>,
) -> Action {
    let run = if entry.direct && crate::config::direct_call() {
        Run::Graph(entry.graph.clone(), inputs)
    } else {
        Run::Function(entry.function.clone())
    };
    Action::Run(run, argv)
}
