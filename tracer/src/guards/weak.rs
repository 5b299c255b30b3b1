//! Identity guards that do not keep their object alive.
//!
//! An `ID_MATCH` guard on a user object (a model, a function, a class) used to hold a strong
//! reference, so a compiled entry kept every model it was compiled for alive, with its
//! parameters, until `reset()`. A guard now holds a weak reference where the object's type
//! allows one: the entry cannot match once the object is gone (a new object at the same address
//! is not the same object), and the weak reference's callback drops such dead entries from
//! every code cache, freeing their graphs and kept buffers and giving their slots back to the
//! recompile limit.

use std::sync::OnceLock;

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyCFunction, PyWeakrefReference};

/// A weak reference to the object an identity guard expects.
pub struct WeakTarget {
    wr: Py<PyWeakrefReference>,
}

impl WeakTarget {
    /// A weak target for `obj`, or `None` if its type takes no weak references (builtin
    /// functions, dtypes, ints): those are held strongly, so their address is never reused.
    pub fn new(obj: &Bound<'_, PyAny>) -> Option<WeakTarget> {
        let py = obj.py();
        let callback = died_callback(py)?;
        match PyWeakrefReference::new_with(obj, callback.bind(py)) {
            Ok(wr) => Some(WeakTarget { wr: wr.unbind() }),
            Err(_) => None,
        }
    }

    /// The object, borrowed, or NULL once it was collected.
    fn target(&self) -> *mut ffi::PyObject {
        // SAFETY: `wr` is a live weakref object and the GIL is held by every caller (they hold
        // a `Python` token or a `Bound`). On 3.11/3.12 this returns a borrowed reference, or
        // `None` once the referent died.
        let p = unsafe { ffi::PyWeakref_GetObject(self.wr.as_ptr()) };
        // SAFETY: reading the address of the `None` singleton.
        if p.is_null() || p == unsafe { ffi::Py_None() } {
            std::ptr::null_mut()
        } else {
            p
        }
    }

    /// `v is <target>`; false once the target died.
    pub fn is(&self, v: &Bound<'_, PyAny>) -> bool {
        let t = self.target();
        !t.is_null() && t == v.as_ptr()
    }

    pub fn is_dead(&self) -> bool {
        self.target().is_null()
    }

    /// The target, if alive.
    pub fn object<'py>(&self, py: Python<'py>) -> Option<Bound<'py, PyAny>> {
        let t = self.target();
        if t.is_null() {
            return None;
        }
        // SAFETY: `t` is a live object (a borrowed reference from the weakref); we take our own.
        Some(unsafe { Bound::from_borrowed_ptr(py, t) })
    }
}

/// What drops the dead entries when a guarded object dies: the code cache's pruner, set by the
/// code cache when it makes its first slot (guards sit below the cache and do not import it).
static ON_DEATH: OnceLock<fn(Python<'_>)> = OnceLock::new();

/// Sets what runs when an object an identity guard expects dies (the first setting stays).
pub fn on_target_death(f: fn(Python<'_>)) {
    let _ = ON_DEATH.set(f);
}

/// The callback of every guard's weak reference: an object a compiled entry was guarded on died,
/// so that entry can never match again; drop the dead entries.
fn died_callback(py: Python<'_>) -> Option<&'static Py<PyCFunction>> {
    static F: OnceLock<Option<Py<PyCFunction>>> = OnceLock::new();
    if let Some(f) = F.get() {
        return f.as_ref();
    }
    // Made outside `get_or_init`: allocating can run the garbage collector, whose finalizers
    // run Python and can let another thread take the GIL and block on the cell (a deadlock).
    let made = PyCFunction::new_closure(py, None, None, |args, _kwargs| -> PyResult<()> {
        if let Some(prune) = ON_DEATH.get() {
            prune(args.py());
        }
        Ok(())
    })
    .ok()
    .map(Bound::unbind);
    F.get_or_init(|| made).as_ref()
}
