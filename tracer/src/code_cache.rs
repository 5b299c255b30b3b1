//! The per-code cache, kept in the code object's `co_extra` slot so that looking it up costs a
//! pointer read and it is freed together with the code.

use std::cell::RefCell;
use std::collections::HashSet;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use pyo3::ffi;
use pyo3::prelude::*;

use crate::guards::GuardTree;
use crate::runtime::CompiledGraph;

/// What the hook does with frames of one code object.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CodeState {
    /// Look up entries; compile on a miss.
    Normal,
    /// Never touch (torch, the standard library, torchferro, generated code, generators).
    Skip,
    /// `forward` of torch.nn's own modules: traced (as `Normal`) only on the module a compiled
    /// call was made on (`mode::is_entry_module`), skipped everywhere else, as torch.compile
    /// skips torch.nn code that no traced code calls.
    EntryOnly,
    /// Runs with the hook off on this thread for its extent, so nothing it calls compiles:
    /// `torch._dynamo.disable` wrappers (recursive ones) and module bodies (import-time code,
    /// run once, gains nothing from compiling and may see half-imported modules).
    Region,
    /// Tracing failed in a way that does not depend on inputs: run eagerly from now on.
    Eager(String),
    /// The recompile limit was hit: use existing entries, run misses eagerly.
    LimitHit,
}

pub struct CacheEntry {
    pub guards: GuardTree,
    /// The transformed code as a function taking (arguments..., closure cells...).
    pub function: Py<PyAny>,
    /// The compiled graph the transformed code tail-calls; the hook may call it directly.
    pub graph: Py<CompiledGraph>,
    /// `frame_id/compile_index`, as logs name entries.
    pub compile_id: (u32, u32),
    /// The backend the entry was compiled for (entries are only reused by the same backend).
    pub backend_key: usize,
    /// Keeps a Python backend alive, so its address (the key) cannot be reused by another.
    pub backend: Option<Py<PyAny>>,
    /// Readable forms for inspection.
    pub graph_code: String,
    pub transformed_code: Py<PyAny>,
    /// The transformed code only tail-calls the graph, so the hook may call the graph itself.
    pub direct: bool,
}

pub struct CodeCache {
    pub state: CodeState,
    /// Most recently used first.
    pub entries: Vec<Arc<CacheEntry>>,
    pub frame_id: Option<u32>,
    /// Number of entries ever compiled (compile ids keep counting after resets of the list).
    pub compiles: u32,
    pub limit_warned: bool,
    /// Dimensions automatic dynamic made dynamic (dynamic shapes): source text, dimension.
    pub automatic_dynamic: Vec<(String, usize)>,
    /// Int sources (text) automatic dynamic made symbolic ints.
    pub automatic_dynamic_ints: Vec<String>,
    /// Argument slots of the code (positional, keyword-only, *args, **kwargs), read once.
    pub nargs: usize,
    /// Made as `CodeState::EntryOnly` (a torch.nn `forward`): kept across the state changes a
    /// failed compile or `reset_all` makes, so its frames stay skipped off the entry module.
    pub entry_only: bool,
    /// A generated resume function (its name starts with `RESUME_PREFIX`), read once.
    pub resume: bool,
    /// For a resume function: its code under the user's function name, which runs whenever
    /// the frame runs eagerly (`hook::eager_twin`), made on first need.
    pub eager_twin: Option<Py<PyAny>>,
}

impl CodeCache {
    fn new(state: CodeState, nargs: usize, resume: bool) -> CodeCache {
        CodeCache {
            nargs,
            resume,
            eager_twin: None,
            entry_only: state == CodeState::EntryOnly,
            state,
            entries: Vec::new(),
            frame_id: None,
            compiles: 0,
            limit_warned: false,
            automatic_dynamic: Vec::new(),
            automatic_dynamic_ints: Vec::new(),
        }
    }
}

/// The co_extra payload. A RefCell because the GIL serialises access, but our own code may be
/// re-entered (another thread can run while Python code called from the hook releases the GIL);
/// borrows are kept short and never held across calls into Python.
pub type Slot = RefCell<CodeCache>;

static EXTRA_INDEX: OnceLock<isize> = OnceLock::new();
/// Code objects that carry a cache, so `reset()` can find them. Raw addresses, removed when the
/// payload is freed.
static REGISTRY: OnceLock<Mutex<HashSet<usize>>> = OnceLock::new();

fn registry() -> &'static Mutex<HashSet<usize>> {
    REGISTRY.get_or_init(|| Mutex::new(HashSet::new()))
}

unsafe extern "C" fn free_slot(ptr: *mut std::ffi::c_void) {
    if ptr.is_null() {
        return;
    }
    // SAFETY: every non-NULL payload in our co_extra index was made by Box::into_raw in
    // `get_or_create`, and CPython calls this exactly once per payload (on SetExtra or dealloc).
    let slot = unsafe { Box::from_raw(ptr as *mut Slot) };
    if let Ok(mut set) = registry().lock() {
        set.remove(&(ptr as usize));
    }
    drop(slot);
}

fn extra_index() -> isize {
    *EXTRA_INDEX.get_or_init(|| {
        // Every slot is made through this index, so the pruner is in place before any entry
        // (and any identity guard's weak reference) exists.
        crate::guards::on_target_death(prune_dead);
        // SAFETY: requesting an index only registers our free function; called with the GIL held.
        unsafe { ffi::PyUnstable_Eval_RequestCodeExtraIndex(free_slot) }
    })
}

/// The cache of `code`, if it has one.
///
/// # Safety
/// `code` must be a live code object and the GIL held; the reference is valid until the code
/// object dies or its slot is replaced (only `reset` does that, never while a borrow is live).
pub unsafe fn get(code: *mut ffi::PyObject) -> Option<&'static Slot> {
    let mut p: *mut std::ffi::c_void = std::ptr::null_mut();
    // SAFETY: code is a live code object (caller contract); the index came from CPython.
    let rc = unsafe { ffi::PyUnstable_Code_GetExtra(code, extra_index(), &mut p) };
    if rc != 0 || p.is_null() {
        if rc != 0 {
            // SAFETY: GIL held.
            unsafe { ffi::PyErr_Clear() };
        }
        return None;
    }
    // SAFETY: non-NULL payloads at our index are `Slot`s we allocated.
    Some(unsafe { &*(p as *const Slot) })
}

/// The cache of `code`, creating it with `state` if absent.
///
/// # Safety
/// As for [`get`].
pub unsafe fn get_or_create(
    code: *mut ffi::PyObject,
    state: impl FnOnce() -> CodeState,
) -> Option<&'static Slot> {
    // SAFETY: forwarded caller contract.
    if let Some(s) = unsafe { get(code) } {
        return Some(s);
    }
    // `state` can run Python (the skip-file checks), and the interpreter may hand the GIL to
    // another thread there, which can make this code's slot first. Setting ours after that
    // would free theirs under them (`SetExtra` frees the value it replaces): a use after free
    // seen as a crash when eight threads made their first call at once. So look again after
    // the Python has run; from here to `SetExtra` no Python runs.
    let cache = CodeCache::new(state(), nargs(code), is_resume(code));
    // SAFETY: forwarded caller contract.
    if let Some(s) = unsafe { get(code) } {
        return Some(s);
    }
    let raw = Box::into_raw(Box::new(RefCell::new(cache))) as *mut std::ffi::c_void;
    // SAFETY: code is live, the GIL is held, and ownership of `raw` passes to the code object.
    let rc = unsafe { ffi::PyUnstable_Code_SetExtra(code, extra_index(), raw) };
    if rc != 0 {
        // SAFETY: the slot was not stored, so we still own it.
        unsafe {
            ffi::PyErr_Clear();
            drop(Box::from_raw(raw as *mut Slot));
        }
        return None;
    }
    if let Ok(mut set) = registry().lock() {
        set.insert(raw as usize);
    }
    // SAFETY: just stored; lives as long as the code object.
    Some(unsafe { &*(raw as *const Slot) })
}

/// Argument slots of a code object (read once per code, when its cache is made).
fn nargs(code: *mut ffi::PyObject) -> usize {
    // SAFETY: callers hold the GIL and `code` is a live code object.
    let py = unsafe { Python::assume_attached() };
    // SAFETY: as above; we take our own reference for the duration of the call.
    let code = unsafe { Bound::from_borrowed_ptr(py, code) };
    crate::code::arg_slot_count(&code).unwrap_or(0)
}

/// Whether `code` is a generated resume function (read once per code, with [`nargs`]).
fn is_resume(code: *mut ffi::PyObject) -> bool {
    // SAFETY: callers hold the GIL and `code` is a live code object.
    let py = unsafe { Python::assume_attached() };
    // SAFETY: as above; we take our own reference for the duration of the call.
    let code = unsafe { Bound::from_borrowed_ptr(py, code) };
    code.getattr(pyo3::intern!(py, "co_name"))
        .and_then(|n| n.extract::<String>())
        .is_ok_and(|n| n.starts_with(crate::code::RESUME_PREFIX))
}

/// Marks code we generated so the hook never traces it.
pub fn mark_skip(code: &Bound<'_, PyAny>) {
    // SAFETY: `code` is a live code object and we hold the GIL (we have a Bound).
    if let Some(slot) = unsafe { get_or_create(code.as_ptr(), || CodeState::Skip) } {
        if let Ok(mut c) = slot.try_borrow_mut() {
            c.state = CodeState::Skip;
        }
    }
}

/// Marks `code` as a disable region's (see [`CodeState::Region`]).
pub fn mark_region(code: &Bound<'_, PyAny>) {
    // SAFETY: `code` is a live code object and we hold the GIL (we have a Bound).
    if let Some(slot) = unsafe { get_or_create(code.as_ptr(), || CodeState::Region) } {
        if let Ok(mut c) = slot.try_borrow_mut() {
            c.state = CodeState::Region;
        }
    }
}

/// Calls `f` on every live code cache. `Python` proves the GIL is held: payloads are freed only
/// under the GIL (and leave the registry first), so none goes away during the walk. `f` must not
/// drop Python objects (that can run code that frees payloads): it collects them instead.
fn for_each_slot(_py: Python<'_>, mut f: impl FnMut(&Slot)) {
    let slots: Vec<usize> = registry()
        .lock()
        .map(|s| s.iter().copied().collect())
        .unwrap_or_default();
    for p in slots {
        // SAFETY: addresses in the registry are live payloads (removed when freed), and the GIL
        // is held (the caller has a token), so none can be freed while we use it.
        f(unsafe { &*(p as *const Slot) });
    }
}

/// Drops every compiled entry and every remembered decision (`torchferro.compiler.reset()`).
pub fn reset_all(py: Python<'_>) {
    // Dropping entries can free code objects (and their payloads); do it after the walk.
    let mut graveyard = Vec::new();
    for_each_slot(py, |slot| {
        if let Ok(mut c) = slot.try_borrow_mut() {
            graveyard.append(&mut c.entries);
            c.limit_warned = false;
            c.automatic_dynamic.clear();
            c.automatic_dynamic_ints.clear();
            c.compiles = 0;
            c.frame_id = None;
            if !matches!(c.state, CodeState::Skip | CodeState::Region) {
                c.state = CodeState::Normal;
            }
        }
    });
    drop(graveyard);
    reset_frame_ids();
}

/// Drops, from every code cache, the entries guarded on an object that was collected (they can
/// never match again): their graphs and kept buffers are freed, and they stop counting against
/// the recompile limit (a code that hit it compiles again while it has room). Called by the weak
/// references of identity guards when their object dies (`guards::WeakTarget`).
pub fn prune_dead(py: Python<'_>) {
    // Dropping entries can run Python code and free code objects: do it after the walk.
    let mut graveyard = Vec::new();
    for_each_slot(py, |slot| {
        // A cache borrowed now (this runs from a weakref callback, at any point) is left for
        // the next death or compile.
        let Ok(mut c) = slot.try_borrow_mut() else {
            return;
        };
        if !c.entries.iter().any(|e| e.guards.is_dead()) {
            return;
        }
        let (dead, live): (Vec<_>, Vec<_>) = c.entries.drain(..).partition(|e| e.guards.is_dead());
        c.entries = live;
        graveyard.extend(dead);
        if c.state == CodeState::LimitHit && c.entries.len() < crate::config::recompile_limit() {
            c.state = CodeState::Normal;
        }
    });
    drop(graveyard);
}

/// Frees the memory every compiled graph keeps between calls (inductor workspaces); entries
/// stay and allocate again when next called. Run when a compiled function or module the user
/// made is freed, so that what it kept goes with it.
pub fn release_kept_all(py: Python<'_>) {
    let mut graphs = Vec::new();
    for_each_slot(py, |slot| {
        if let Ok(c) = slot.try_borrow() {
            graphs.extend(c.entries.iter().cloned());
        }
    });
    // Outside the borrows: releasing frees Python objects, which can run Python code.
    for e in &graphs {
        e.graph.get().release_kept();
    }
}

/// The first number of the next compile id (`frame/compile`), one per code object.
static NEXT_FRAME_ID: AtomicU32 = AtomicU32::new(0);

/// Frame ids restart from 0 after `torchferro.compiler.reset()`, as torch's do.
pub fn reset_frame_ids() {
    NEXT_FRAME_ID.store(0, Ordering::Relaxed);
}

/// A new frame id, given to a code object at its first compile.
pub fn next_frame_id() -> u32 {
    NEXT_FRAME_ID.fetch_add(1, Ordering::Relaxed)
}
