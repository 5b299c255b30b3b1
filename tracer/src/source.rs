//! Sources: where a value the tracer saw came from, as a path of accessor steps from the frame.
//!
//! The same path serves three purposes: naming a value in messages (`L['self'].fc.weight`),
//! guarding it (the guard tree is a trie over these paths), and fetching graph inputs on every call.

use std::fmt;
use std::sync::Arc;

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::PyString;

/// One accessor step. The first step of a path is a root (`Local`, `Cell`, `Global`); the rest are
/// `Attr` or `Item`.
#[derive(Debug)]
pub enum Step {
    /// Fast-local slot `index` of the frame (an argument, at hook time).
    Local {
        index: usize,
        name: String,
    },
    /// Free variable `index` of the function's closure, read through its cell.
    Cell {
        index: usize,
        name: String,
    },
    /// Module global, falling back to builtins as `LOAD_GLOBAL` does.
    Global {
        name: Py<PyString>,
    },
    /// A global of another module (a function inlined from there reads it): that module's
    /// globals dict is held directly, with builtins as the fallback.
    ModuleGlobal {
        globals: Py<PyAny>,
        module: String,
        name: Py<PyString>,
    },
    Attr {
        name: Py<PyString>,
    },
    /// `obj[key]` with a constant key (int or str).
    Item {
        key: Py<PyAny>,
        repr: String,
        /// How a dict (a subclass too) is read: `false`, raw, as the tracer reads the items of
        /// a dict it wraps; `true`, by subscription (`PyObject_GetItem`, a subclass's
        /// `__getitem__` override included), as the trace read an object it holds only as a
        /// Python value (a transformers `ModelOutput` returned across a graph break, whose
        /// `out[0]` is its first non-`None` field, not a key). Other objects are always read
        /// by subscription.
        subscript: bool,
    },
    /// `torch.from_numpy(obj)`: a numpy array input seen by the graph as the tensor sharing its
    /// memory (`interp/numpy.rs`); a fresh tensor object on every fetch.
    FromNumpy,
    /// `tensor.untyped_storage().nbytes()`: the size in bytes of the storage behind a tensor
    /// input, an int the trace may read as a symbol (`interp/storage.rs`). Only a tensor has
    /// one: any other object fails the step.
    StorageBytes,
    /// `ref()`: the object a `weakref.ref` refers to (`None` once it died), as `nn.RNNBase`'s
    /// `_weights_have_changed` reads its `_flat_weight_refs`. Only an exact `weakref.ref`: any
    /// other object fails the step (a subclass's `__call__` could answer anything).
    WeakRefCall,
}

impl Step {
    /// The same step: same slot, or same name (compared by pointer first: names are interned)
    /// in the same globals, or the same constant key.
    pub(crate) fn same(&self, other: &Step) -> bool {
        match (self, other) {
            (Step::Local { index: a, .. }, Step::Local { index: b, .. }) => a == b,
            (Step::Cell { index: a, .. }, Step::Cell { index: b, .. }) => a == b,
            (Step::Global { name: a }, Step::Global { name: b })
            | (Step::Attr { name: a }, Step::Attr { name: b }) => {
                a.as_ptr() == b.as_ptr()
                    || Python::attach(|py| a.bind(py).to_str().ok() == b.bind(py).to_str().ok())
            }
            (
                Step::Item {
                    repr: a,
                    subscript: x,
                    ..
                },
                Step::Item {
                    repr: b,
                    subscript: y,
                    ..
                },
            ) => a == b && x == y,
            (Step::FromNumpy, Step::FromNumpy)
            | (Step::StorageBytes, Step::StorageBytes)
            | (Step::WeakRefCall, Step::WeakRefCall) => true,
            (
                Step::ModuleGlobal {
                    globals: g1,
                    name: a,
                    ..
                },
                Step::ModuleGlobal {
                    globals: g2,
                    name: b,
                    ..
                },
            ) => {
                g1.as_ptr() == g2.as_ptr()
                    && Python::attach(|py| a.bind(py).to_str().ok() == b.bind(py).to_str().ok())
            }
            _ => false,
        }
    }
}

/// A path from a frame root to a value. Cheap to clone and to extend.
#[derive(Clone, Debug)]
pub struct Source {
    steps: Arc<Vec<Step>>,
}

impl Source {
    pub fn local(index: usize, name: &str) -> Source {
        Source::root(Step::Local {
            index,
            name: name.to_string(),
        })
    }

    pub fn cell(index: usize, name: &str) -> Source {
        Source::root(Step::Cell {
            index,
            name: name.to_string(),
        })
    }

    pub fn global(py: Python<'_>, name: &str) -> Source {
        Source::root(Step::Global {
            name: PyString::intern(py, name).unbind(),
        })
    }

    pub fn module_global(py: Python<'_>, globals: &Bound<'_, PyAny>, name: &str) -> Source {
        let module = globals
            .get_item("__name__")
            .and_then(|n| n.extract::<String>())
            .unwrap_or_else(|_| "?".into());
        Source::root(Step::ModuleGlobal {
            globals: globals.clone().unbind(),
            module,
            name: PyString::intern(py, name).unbind(),
        })
    }

    fn root(step: Step) -> Source {
        Source {
            steps: Arc::new(vec![step]),
        }
    }

    fn with(&self, step: Step) -> Source {
        let mut steps: Vec<Step> = Vec::with_capacity(self.steps.len() + 1);
        Python::attach(|py| {
            for s in self.steps.iter() {
                steps.push(s.clone_ref(py));
            }
        });
        steps.push(step);
        Source {
            steps: Arc::new(steps),
        }
    }

    /// `torch.from_numpy(<this>)`: a numpy array input as a tensor.
    pub fn from_numpy(&self) -> Source {
        self.with(Step::FromNumpy)
    }

    /// `<this>.untyped_storage().nbytes()`: the storage size of a tensor input.
    pub fn storage_bytes(&self) -> Source {
        self.with(Step::StorageBytes)
    }

    /// `<this>()`: the referent of a `weakref.ref`.
    pub fn weakref_call(&self) -> Source {
        self.with(Step::WeakRefCall)
    }

    /// The array a `from_numpy` source views, if this is one.
    pub fn numpy_array(&self) -> Option<Source> {
        match self.steps.last() {
            Some(Step::FromNumpy) if self.steps.len() > 1 => Python::attach(|py| {
                Some(Source {
                    steps: Arc::new(
                        self.steps[..self.steps.len() - 1]
                            .iter()
                            .map(|s| s.clone_ref(py))
                            .collect(),
                    ),
                })
            }),
            _ => None,
        }
    }

    pub fn attr(&self, py: Python<'_>, name: &str) -> Source {
        self.with(Step::Attr {
            name: PyString::intern(py, name).unbind(),
        })
    }

    pub fn item(&self, key: Bound<'_, PyAny>) -> Source {
        let repr = key
            .repr()
            .map(|r| r.to_string())
            .unwrap_or_else(|_| "?".into());
        self.with(Step::Item {
            key: key.unbind(),
            repr,
            subscript: false,
        })
    }

    /// `obj[key]` read by subscription even where `obj` is a dict: the value the object's own
    /// `__getitem__` answers (see `Step::Item`), for a read the trace made the same way.
    pub fn subscript(&self, key: Bound<'_, PyAny>) -> Source {
        let repr = key
            .repr()
            .map(|r| r.to_string())
            .unwrap_or_else(|_| "?".into());
        self.with(Step::Item {
            key: key.unbind(),
            repr,
            subscript: true,
        })
    }

    /// `obj[key]` with a key named by `repr` (which must tell distinct keys apart): a dict keyed
    /// by an object, such as an optimizer's state keyed by its parameters, named by their paths.
    pub fn item_named(&self, key: Bound<'_, PyAny>, repr: String) -> Source {
        self.with(Step::Item {
            key: key.unbind(),
            repr,
            subscript: false,
        })
    }

    pub fn steps(&self) -> &[Step] {
        &self.steps
    }

    pub fn same_as(&self, other: &Source) -> bool {
        self.steps.len() == other.steps.len()
            && self
                .steps
                .iter()
                .zip(other.steps.iter())
                .all(|(a, b)| a.same(b))
    }

    /// The name used for a tensor in guard messages: the bare local name for a frame argument
    /// (`'x'`, as torch users know it), the full path otherwise.
    pub fn short_name(&self) -> String {
        match &self.steps[..] {
            [Step::Local { name, .. }] | [Step::Cell { name, .. }] => name.clone(),
            _ => self.to_string(),
        }
    }

    /// The root local slot, if this path starts at a fast local.
    pub fn root_local(&self) -> Option<usize> {
        match self.steps.first() {
            Some(Step::Local { index, .. }) => Some(*index),
            _ => None,
        }
    }
}

impl Step {
    pub fn clone_ref(&self, py: Python<'_>) -> Step {
        match self {
            Step::Local { index, name } => Step::Local {
                index: *index,
                name: name.clone(),
            },
            Step::Cell { index, name } => Step::Cell {
                index: *index,
                name: name.clone(),
            },
            Step::Global { name } => Step::Global {
                name: name.clone_ref(py),
            },
            Step::ModuleGlobal {
                globals,
                module,
                name,
            } => Step::ModuleGlobal {
                globals: globals.clone_ref(py),
                module: module.clone(),
                name: name.clone_ref(py),
            },
            Step::Attr { name } => Step::Attr {
                name: name.clone_ref(py),
            },
            Step::Item {
                key,
                repr,
                subscript,
            } => Step::Item {
                key: key.clone_ref(py),
                repr: repr.clone(),
                subscript: *subscript,
            },
            Step::FromNumpy => Step::FromNumpy,
            Step::StorageBytes => Step::StorageBytes,
            Step::WeakRefCall => Step::WeakRefCall,
        }
    }
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for step in self.steps.iter() {
            match step {
                Step::Local { name, .. } | Step::Cell { name, .. } => write!(f, "L['{name}']")?,
                Step::Global { name } => write!(f, "G['{name}']")?,
                Step::ModuleGlobal { module, name, .. } => write!(f, "G[{module}]['{name}']")?,
                Step::Attr { name } => write!(f, ".{name}")?,
                Step::Item { repr, .. } => write!(f, "[{repr}]")?,
                Step::FromNumpy => write!(f, ".from_numpy()")?,
                Step::StorageBytes => write!(f, ".untyped_storage().nbytes()")?,
                Step::WeakRefCall => write!(f, "()")?,
            }
        }
        Ok(())
    }
}

/// The roots a path is resolved against: a frame at hook time, or the arguments of a compiled
/// function at run time. Both are borrowed arrays of object pointers.
#[derive(Clone, Copy)]
pub struct Scope {
    /// Fast-local slots (at hook time, arguments hold plain values).
    pub locals: *const *mut ffi::PyObject,
    pub nlocals: usize,
    /// Closure cells, in `co_freevars` order.
    pub cells: *const *mut ffi::PyObject,
    pub ncells: usize,
    pub globals: *mut ffi::PyObject,
    pub builtins: *mut ffi::PyObject,
}

impl Scope {
    /// The scope of a call's argument array: `argv` holds the `nargs` argument slots followed by
    /// the closure cells (in `co_freevars` order), as both the hook (from the frame) and a
    /// compiled graph (from its vectorcall arguments) lay them out. The scope borrows `argv`,
    /// `globals` and `builtins`: they must outlive every use of it. An `nargs` above
    /// `argv.len()` is clamped.
    pub fn from_argv(
        argv: &[*mut ffi::PyObject],
        nargs: usize,
        globals: *mut ffi::PyObject,
        builtins: *mut ffi::PyObject,
    ) -> Scope {
        let nargs = nargs.min(argv.len());
        Scope {
            locals: argv.as_ptr(),
            nlocals: nargs,
            // SAFETY: nargs <= argv.len(), so the pointer stays within (or one past) the array.
            cells: unsafe { argv.as_ptr().add(nargs) },
            ncells: argv.len() - nargs,
            globals,
            builtins,
        }
    }

    /// Resolves a root step to a borrowed pointer (NULL if absent; no Python error is left set).
    /// Closure cell object `index` (not its contents), or null out of range.
    pub fn cell_object(&self, index: usize) -> *mut ffi::PyObject {
        if index >= self.ncells {
            return std::ptr::null_mut();
        }
        // SAFETY: as in `root`: `cells` holds `ncells` pointers borrowed for the Scope's life.
        unsafe { *self.cells.add(index) }
    }

    pub fn root(&self, step: &Step) -> *mut ffi::PyObject {
        // SAFETY: the arrays and dicts in a Scope are borrowed from a live frame or a live
        // vectorcall argument array for the duration of the call that built the Scope, and
        // indices are bounds-checked against the recorded lengths.
        unsafe {
            match step {
                Step::Local { index, .. } => {
                    if *index < self.nlocals {
                        *self.locals.add(*index)
                    } else {
                        std::ptr::null_mut()
                    }
                }
                Step::Cell { index, .. } => {
                    if *index < self.ncells {
                        let cell = *self.cells.add(*index);
                        if cell.is_null() || ffi::PyCell_Check(cell) == 0 {
                            std::ptr::null_mut()
                        } else {
                            (*(cell as *mut ffi::PyCellObject)).ob_ref
                        }
                    } else {
                        std::ptr::null_mut()
                    }
                }
                Step::Global { .. } | Step::ModuleGlobal { .. } => {
                    let (dict, key) = match step {
                        Step::Global { name } => (self.globals, name.as_ptr()),
                        Step::ModuleGlobal { globals, name, .. } => {
                            (globals.as_ptr(), name.as_ptr())
                        }
                        _ => unreachable!(),
                    };
                    let mut v = ffi::PyDict_GetItemWithError(dict, key);
                    if v.is_null() && ffi::PyErr_Occurred().is_null() && !self.builtins.is_null() {
                        v = ffi::PyDict_GetItemWithError(self.builtins, key);
                    }
                    if v.is_null() {
                        ffi::PyErr_Clear();
                    }
                    v
                }
                Step::Attr { .. }
                | Step::Item { .. }
                | Step::FromNumpy
                | Step::StorageBytes
                | Step::WeakRefCall => std::ptr::null_mut(),
            }
        }
    }
}

/// Applies a non-root step to a value; `None` (with the error cleared) if it fails, so guards
/// read a failure as a plain mismatch.
pub fn apply_step<'py>(base: &Bound<'py, PyAny>, step: &Step) -> Option<Bound<'py, PyAny>> {
    let py = base.py();
    if let Step::FromNumpy = step {
        // Only an exact ndarray: a subclass could answer differently between calls.
        let np = py.import("numpy").ok()?;
        if !base.get_type().is(np.getattr("ndarray").ok()?) {
            return None;
        }
        let f = py.import("torch").ok()?.getattr("from_numpy").ok()?;
        return f.call1((base,)).ok();
    }
    if let Step::WeakRefCall = step {
        return weakref_referent(base);
    }
    if let Step::StorageBytes = step {
        let tensor = py.import("torch").ok()?.getattr("Tensor").ok()?;
        if !base.is_instance(&tensor).ok()? {
            return None;
        }
        let r = base
            .call_method0("untyped_storage")
            .and_then(|s| s.call_method0("nbytes"));
        return r.ok();
    }
    // SAFETY: `base` is a live object (we hold a Bound); the C API calls return new references
    // or NULL with an error set, which is cleared.
    unsafe {
        let r = match step {
            // A transformers config's attributes are read without running its Python
            // `__getattribute__` (same result, see `aliased_getattr`).
            Step::Attr { name } => match crate::aliased_getattr::read(base, name.bind(py), false) {
                Some(Ok(Some(v))) => return Some(v),
                Some(_) => return None,
                None => ffi::PyObject_GetAttr(base.as_ptr(), name.as_ptr()),
            },
            // A dict (a user subclass too) is read as the tracer read it when it wrapped the
            // items: raw, never through a `__getitem__` override (which would answer another
            // value than the one the graph was traced with).
            Step::Item {
                key,
                subscript: false,
                ..
            } if ffi::PyDict_Check(base.as_ptr()) != 0 => {
                let r = ffi::PyDict_GetItemWithError(base.as_ptr(), key.as_ptr());
                if !r.is_null() {
                    ffi::Py_INCREF(r);
                }
                r
            }
            Step::Item { key, .. } => ffi::PyObject_GetItem(base.as_ptr(), key.as_ptr()),
            _ => std::ptr::null_mut(),
        };
        if r.is_null() {
            ffi::PyErr_Clear();
            None
        } else {
            Some(Bound::from_owned_ptr(py, r))
        }
    }
}

/// Resolves a whole path. Returns a new reference or `None`.
pub fn resolve<'py>(py: Python<'py>, scope: &Scope, source: &Source) -> Option<Bound<'py, PyAny>> {
    let steps = source.steps();
    let root = scope.root(&steps[0]);
    if root.is_null() {
        return None;
    }
    // SAFETY: `root` is a borrowed, live object; we take a new reference to own it.
    let mut cur = unsafe { Bound::from_borrowed_ptr(py, root) };
    for step in &steps[1..] {
        cur = apply_step(&cur, step)?;
    }
    Some(cur)
}

/// The referent of `base` if it is exactly a `weakref.ref` (`None` once the referent died),
/// else `None` (the step fails).
pub fn weakref_referent<'py>(base: &Bound<'py, PyAny>) -> Option<Bound<'py, PyAny>> {
    // SAFETY: `base` is live; `PyWeakref_GetObject` returns a borrowed reference (Py_None for
    // a dead referent), which is taken as our own at once.
    unsafe {
        if ffi::PyWeakref_CheckRefExact(base.as_ptr()) == 0 {
            return None;
        }
        let p = ffi::PyWeakref_GetObject(base.as_ptr());
        if p.is_null() {
            ffi::PyErr_Clear();
            return None;
        }
        Some(Bound::from_borrowed_ptr(base.py(), p))
    }
}
