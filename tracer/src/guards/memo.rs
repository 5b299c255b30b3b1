//! What a guard walk may skip because the objects it would read did not change: a value
//! fetched through a dict whose PEP 509 version tag (and, through an attribute, whose owner's
//! type version tag) is the one seen last time is the object fetched last time, and a check
//! that is a pure function of that object's identity need not run again.
//!
//! A Llama decode step's trie is ~490 checks; most of them sit under the 31 modules
//! (`_modules[...]`, `_forward_hooks`, `training`, ...), which a step never changes. torch.compile
//! skips whole nn.Module subtrees while their dicts keep their tags, tensors included; we skip
//! only the *fetches* and the identity-pure checks, and keep every check that can change with
//! no dict changing: tensor checks (`requires_grad_()`, `.data =`, in-place resizes), the
//! exact type (`__class__` assignment), lengths of containers (read from the object itself,
//! as cheap as a tag), `hasattr`.
//!
//! Facts this rests on, for CPython 3.11 and 3.12 (`Objects/dictobject.c`, `typeobject.c`):
//! - a dict gets a fresh `ma_version_tag` from one process-wide counter when it is made and on
//!   every insert, replacement by another object, deletion, `clear`, `pop` and `popitem`,
//!   including the interpreter's specialised `STORE_ATTR_WITH_HINT`; an instance's attribute
//!   stored into its inline values never touches a dict, so the instance dict is read through
//!   `_PyObject_GetDictPtr`, which materialises it (after that every store goes to the dict).
//!   3.12 keeps the counter in the high bits (the low 8 are dict-watcher bits, which only make a
//!   watched dict's tag differ: a miss, never a false hit); no watcher is needed, the tag is
//!   read on every call. 3.13 dropped the per-mutation tag: the memo is off there (and on
//!   free-threaded builds), see [`SUPPORTED`].
//! - a type's `tp_version_tag` (valid while `Py_TPFLAGS_VALID_VERSION_TAG` is set) is reset by
//!   any change to the type or to a class in its MRO (`PyType_Modified`), and a new one comes
//!   from a global counter: an equal non-zero tag on the same type object means the same
//!   attribute lookups.
//! - an address and a tag seen before name the same dict in the same state (a new dict at a
//!   freed one's address gets a new tag), so the dict still holds the value it held then: the
//!   remembered value pointer is alive and is that object.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering::Relaxed};

use pyo3::ffi;
use pyo3::prelude::*;

use crate::source::Step;

extern "C" {
    /// The MRO lookup of a name on a type (borrowed result, no exception). Exported by libpython.
    fn _PyType_Lookup(t: *mut ffi::PyTypeObject, name: *mut ffi::PyObject) -> *mut ffi::PyObject;
    /// The address of an object's instance-dict slot (materialising a managed dict), or NULL.
    fn _PyObject_GetDictPtr(obj: *mut ffi::PyObject) -> *mut *mut ffi::PyObject;
}

/// Whether this interpreter's tags change on every mutation (see the module docs).
pub(super) const SUPPORTED: bool = cfg!(all(not(Py_3_13), not(Py_GIL_DISABLED)));

static ENABLED: AtomicBool = AtomicBool::new(SUPPORTED);

/// Turns the memo on or off (for measurements: the same process, with and without); answers
/// whether it is on. Always off where unsupported.
pub fn set_enabled(on: bool) -> bool {
    ENABLED.store(on && SUPPORTED, Relaxed);
    enabled()
}

/// Whether the memo is on.
pub fn enabled() -> bool {
    ENABLED.load(Relaxed)
}

/// Checks evaluated, checks skipped, values fetched and values reused by guard walks that
/// passed, since the last [`take_counts`] (process-wide).
static COUNTS: [AtomicU64; 4] = [
    AtomicU64::new(0),
    AtomicU64::new(0),
    AtomicU64::new(0),
    AtomicU64::new(0),
];

/// What one walk did, added to the process-wide counts when it passes.
#[derive(Default)]
pub(super) struct Counts {
    pub evaluated: u64,
    pub skipped: u64,
    pub fetched: u64,
    pub reused: u64,
}

impl Counts {
    pub(super) fn publish(&self) {
        for (c, n) in COUNTS
            .iter()
            .zip([self.evaluated, self.skipped, self.fetched, self.reused])
        {
            c.fetch_add(n, Relaxed);
        }
    }
}

/// `(evaluated, skipped, fetched, reused)` over the passing walks since the last call, reset.
pub fn take_counts() -> (u64, u64, u64, u64) {
    let [a, b, c, d] = COUNTS.each_ref().map(|c| c.swap(0, Relaxed));
    (a, b, c, d)
}

/// A dict's state: address and version tag (`None`: not a dict).
fn dict_state(d: *mut ffi::PyObject, exact: bool) -> Option<[u64; 2]> {
    // SAFETY: `d` is a live object (the caller holds it or its owner); the tag is a plain
    // field of `PyDictObject`, read under the GIL.
    unsafe {
        let is_dict = if exact {
            ffi::PyDict_CheckExact(d) != 0
        } else {
            ffi::PyDict_Check(d) != 0
        };
        if !is_dict {
            return None;
        }
        #[allow(deprecated)]
        let tag = (*(d as *const ffi::PyDictObject)).ma_version_tag;
        Some([d as usize as u64, tag])
    }
}

/// The state that decides every attribute read from `obj` that its instance dict answers:
/// its type ([`type_state`]) and its instance dict (an exact dict: address and tag). `None`
/// where there is no such state (no instance dict, a type without a valid tag).
fn object_state(obj: &Bound<'_, PyAny>) -> Option<[u64; 4]> {
    // SAFETY: `obj` is live; the type pointer and its fields are read under the GIL;
    // `_PyObject_GetDictPtr` returns the slot's address or NULL (clearing its own error).
    unsafe {
        let [tp, tag] = type_state(ffi::Py_TYPE(obj.as_ptr()))?;
        let slot = _PyObject_GetDictPtr(obj.as_ptr());
        if slot.is_null() {
            if !ffi::PyErr_Occurred().is_null() {
                ffi::PyErr_Clear();
            }
            return None;
        }
        let d = *slot;
        if d.is_null() {
            return None;
        }
        let [addr, dtag] = dict_state(d, true)?;
        Some([tp, tag, addr, dtag])
    }
}

/// The state that decides what `step` reads from `base`, if the memo covers the step: a raw
/// item read of a dict (its state), or an attribute that the instance dict answers (the
/// object's state; whether the dict answers it is verified when remembered, [`type_covers`]).
fn step_state(base: &Bound<'_, PyAny>, step: &Step) -> Option<[u64; 4]> {
    match step {
        Step::Item { subscript, .. } => {
            let [a, t] = dict_state(base.as_ptr(), *subscript)?;
            Some([a, t, 0, 0])
        }
        Step::Attr { .. } => object_state(base),
        _ => None,
    }
}

/// A type's address and version tag, where the tag is valid (`None`: no valid tag, which any
/// change to the type or a class in its MRO clears until the next lookup assigns a new one).
fn type_state(tp: *mut ffi::PyTypeObject) -> Option<[u64; 2]> {
    // SAFETY: `tp` is a live type (an object's type); its flags and tag are plain fields.
    unsafe {
        if ffi::PyType_GetFlags(tp) & ffi::Py_TPFLAGS_VALID_VERSION_TAG == 0 {
            return None;
        }
        let tag = (*tp).tp_version_tag;
        (tag != 0).then_some([tp as usize as u64, tag as u64])
    }
}

/// Whether an instance of `tp` answers `getattr(obj, name)` from its instance dict when the
/// dict has the name, by a lookup that runs no Python and that the type's state decides: the
/// type's `__getattribute__` is `object`'s (reached directly or through a class `__getattr__`
/// hook, which only runs when the lookup fails), and no class in the MRO defines `name` (a data
/// descriptor would win over the dict; a new one changes the type's tag).
fn type_covers(tp: *mut ffi::PyTypeObject, name: &Bound<'_, PyAny>) -> bool {
    let py = name.py();
    // SAFETY: `tp` is live; `_PyType_Lookup` returns a borrowed pointer or NULL without an
    // exception.
    unsafe {
        let generic = (*tp).tp_getattro.map(|f| f as usize)
            == Some(ffi::PyObject_GenericGetAttr as *const () as usize)
            || ffi::PyType_GetFlags(tp) & ffi::Py_TPFLAGS_HEAPTYPE != 0;
        if !generic {
            return false;
        }
        let ga = pyo3::intern!(py, "__getattribute__").as_ptr();
        let own = _PyType_Lookup(tp, ga);
        let object = _PyType_Lookup(std::ptr::addr_of_mut!(ffi::PyBaseObject_Type), ga);
        !own.is_null() && own == object && _PyType_Lookup(tp, name.as_ptr()).is_null()
    }
}

/// Whether `base`'s instance dict holds `value` under `name` (read without running Python).
fn dict_holds(base: &Bound<'_, PyAny>, name: &Bound<'_, PyAny>, value: &Bound<'_, PyAny>) -> bool {
    // SAFETY: live objects; the dict slot is read as in `object_state`.
    unsafe {
        let slot = _PyObject_GetDictPtr(base.as_ptr());
        if slot.is_null() || (*slot).is_null() {
            if !ffi::PyErr_Occurred().is_null() {
                ffi::PyErr_Clear();
            }
            return false;
        }
        let entry = ffi::PyDict_GetItemWithError(*slot, name.as_ptr());
        if entry.is_null() {
            ffi::PyErr_Clear();
            return false;
        }
        entry == value.as_ptr()
    }
}

/// One trie node's last fetch: the state of its parent that decided it and the value's address
/// (the parent's dict holds the value while that state lasts), and whether the value has since
/// passed the node's identity-pure checks.
#[derive(Default)]
pub(super) struct FetchMemo {
    /// All zero: nothing remembered (no state has a zero address).
    state: [AtomicU64; 4],
    value: AtomicUsize,
    passed: AtomicBool,
    /// The type state ([`type_state`]) under which [`type_covers`] said no for this node's
    /// attribute: its instances' reads are not remembered, and not tried again while it lasts.
    uncovered: [AtomicU64; 2],
}

/// A fetched value, and whether it is the remembered one that passed the pure checks.
pub(super) struct Fetch<'py> {
    pub value: Bound<'py, PyAny>,
    pub same: bool,
}

impl FetchMemo {
    /// `step` applied to `base`: the remembered value where `base`'s state is the remembered
    /// one, else read (and remembered, where the memo covers the step).
    ///
    /// Reads and writes of the memo run no Python code between them: under the GIL (the memo
    /// is off without one) no other walk interleaves, so a state is never paired with another
    /// state's value.
    pub(super) fn fetch<'py>(
        &self,
        base: &Bound<'py, PyAny>,
        step: &Step,
        counts: &mut Counts,
    ) -> Option<Fetch<'py>> {
        if !enabled() {
            counts.fetched += 1;
            return crate::source::apply_step(base, step).map(|value| Fetch { value, same: false });
        }
        if let Step::Attr { .. } = step {
            // SAFETY: `base` is live; its type pointer is read under the GIL.
            let tp = unsafe { ffi::Py_TYPE(base.as_ptr()) };
            if type_state(tp).is_some_and(|t| {
                self.uncovered
                    .iter()
                    .zip(t)
                    .all(|(a, b)| a.load(Relaxed) == b)
            }) {
                counts.fetched += 1;
                return crate::source::apply_step(base, step)
                    .map(|value| Fetch { value, same: false });
            }
        }
        let state = step_state(base, step);
        if let Some(s) = state {
            if self.state.iter().zip(s).all(|(a, b)| a.load(Relaxed) == b) {
                let p = self.value.load(Relaxed);
                if p != 0 {
                    counts.reused += 1;
                    // SAFETY: the state matched: the dict that held the value when it was
                    // remembered is unchanged and still holds it (module docs).
                    let value =
                        unsafe { Bound::from_borrowed_ptr(base.py(), p as *mut ffi::PyObject) };
                    return Some(Fetch {
                        value,
                        same: self.passed.load(Relaxed),
                    });
                }
            }
        }
        counts.fetched += 1;
        let value = crate::source::apply_step(base, step)?;
        // Read again: the fetch may have run Python (a property, `__getattr__`).
        self.remember(base, step, &value);
        Some(Fetch { value, same: false })
    }

    fn remember(&self, base: &Bound<'_, PyAny>, step: &Step, value: &Bound<'_, PyAny>) {
        let covered = match step {
            Step::Item { .. } => true,
            Step::Attr { name } => {
                let name = name.bind(base.py()).as_any();
                // SAFETY: `base` is live; its type pointer is read under the GIL.
                let tp = unsafe { ffi::Py_TYPE(base.as_ptr()) };
                if type_covers(tp, name) {
                    dict_holds(base, name, value)
                } else {
                    // Read after the lookups, which assign a tag where there was none.
                    if let Some(t) = type_state(tp) {
                        for (a, b) in self.uncovered.iter().zip(t) {
                            a.store(b, Relaxed);
                        }
                    }
                    false
                }
            }
            _ => false,
        };
        let state = if covered {
            step_state(base, step)
        } else {
            None
        };
        let state = state.unwrap_or([0; 4]);
        self.passed.store(false, Relaxed);
        for (a, b) in self.state.iter().zip(state) {
            a.store(b, Relaxed);
        }
        let p = if state[0] == 0 {
            0
        } else {
            value.as_ptr() as usize
        };
        self.value.store(p, Relaxed);
    }

    /// Records that `value`, the remembered value, passed the node's checks.
    pub(super) fn mark_passed(&self, value: &Bound<'_, PyAny>) {
        if self.value.load(Relaxed) == value.as_ptr() as usize {
            self.passed.store(true, Relaxed);
        }
    }
}

/// Whether a check that passed on an object passes on it again, whatever happened since: the
/// check reads only the object's identity or an immutable builtin value (`Equals` on an exact
/// `int`, `float`, `bool`, `str`, `bytes` or `None`, whose class cannot be reassigned).
pub(super) fn identity_pure(check: &super::Check, value: &Bound<'_, PyAny>) -> bool {
    use super::Check;
    match check {
        Check::Id(_) | Check::WeakId(_) | Check::IsNone => true,
        Check::Equals(_) => {
            // SAFETY: `value` is live; its type pointer is compared with static types.
            unsafe {
                let tp = ffi::Py_TYPE(value.as_ptr());
                [
                    std::ptr::addr_of_mut!(ffi::PyLong_Type),
                    std::ptr::addr_of_mut!(ffi::PyFloat_Type),
                    std::ptr::addr_of_mut!(ffi::PyBool_Type),
                    std::ptr::addr_of_mut!(ffi::PyUnicode_Type),
                    std::ptr::addr_of_mut!(ffi::PyBytes_Type),
                ]
                .contains(&tp)
                    || value.is_none()
            }
        }
        _ => false,
    }
}

/// A `name not in v.__dict__` check's last passing state: `v`'s type and instance dict (see
/// [`object_state`]); while they are unchanged the dict has the same keys.
#[derive(Default)]
pub(super) struct DictAbsence {
    state: [AtomicU64; 4],
}

impl DictAbsence {
    /// Whether `v`'s state is the one that passed last time.
    pub(super) fn same(&self, v: &Bound<'_, PyAny>) -> bool {
        enabled()
            && object_state(v)
                .is_some_and(|s| self.state.iter().zip(s).all(|(a, b)| a.load(Relaxed) == b))
    }

    /// Remembers `v`'s state after the check passed, where `v.__dict__` is the instance dict
    /// the state reads (a class could answer `__dict__` otherwise).
    pub(super) fn remember(&self, v: &Bound<'_, PyAny>) {
        if !enabled() {
            return;
        }
        let py = v.py();
        let Ok(d) = v.getattr(pyo3::intern!(py, "__dict__")) else {
            return;
        };
        let Some(s) = object_state(v) else {
            return;
        };
        if d.as_ptr() as usize as u64 != s[2] {
            return;
        }
        for (a, b) in self.state.iter().zip(s) {
            a.store(b, Relaxed);
        }
    }
}
