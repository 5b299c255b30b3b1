//! Attribute reads through an *aliasing* `__getattribute__`, evaluated natively: the guards' path
//! steps and `hasattr` checks on a transformers config.
//!
//! transformers' `PreTrainedConfig` defines
//!
//! ```python
//! def __getattribute__(self, key):
//!     if key != "attribute_map" and key in super().__getattribute__("attribute_map"):
//!         key = super().__getattribute__("attribute_map")[key]
//!     return super().__getattribute__(key)
//! ```
//!
//! so every guard that reads a config attribute (`config._attn_implementation == 'sdpa'`) runs a
//! Python frame, and every `hasattr(config, "is_causal") is False` guard (a `getattr` default the
//! traced code used) also makes, raises through that frame and discards an `AttributeError`. A
//! Llama decode step has four such negative guards and about ten config reads per call.
//!
//! The answer is not cached (the attribute can appear at any time: set on the instance, on a
//! class, or as an `attribute_map` entry); the function's body is executed here instead, with the
//! same C calls Python makes for it: `object.__getattribute__(self, "attribute_map")`, the
//! `in` and `[]` on what that returns, and `object.__getattribute__(self, key)` (asked not to
//! build the `AttributeError` when the caller only wants to know whether the attribute exists,
//! as `hasattr` itself does for plain objects). Nothing is assumed beyond what is checked on
//! every read:
//! - the type's `__getattribute__` is a plain function whose code is, instruction for
//!   instruction, the one above (recognised by comparing its code with a reference compiled from
//!   that source, once per code object), wherever it is defined;
//! - no class in the type's MRO defines `__getattr__` (which Python calls after an
//!   `AttributeError`);
//! - `super()` in it means `super(__class__, self)` and its `__getattribute__` is `object`'s:
//!   `__class__` (the closure cell) is in the type's MRO, no class after it defines
//!   `__getattribute__`, and `super` is the builtin (not shadowed in the function's globals or
//!   builtins).
//!
//! transformers 5.24 chains a second one behind it: `super()` of `PreTrainedConfig` reaches
//! `HeterogeneousConfigMixin.__getattribute__`, which reads `self.__dict__.get(
//! "_heterogeneity_spec")` and, when that is not None, may warn or raise for per-layer names
//! before deferring to `object`'s. That function is recognised by a fingerprint of its code
//! (instructions, names, constants: [`HETEROGENEOUS_FINGERPRINT`]); its native form handles
//! only the homogeneous case (no spec: it just defers) and declines otherwise. The chain is
//! followed link by link (each link's `super()` starts after its own class in the MRO) until
//! `object.__getattribute__`; every link must be recognised.
//!
//! Anything else answers `None` and the caller reads the attribute through Python. A decline
//! after the first link has run (a heterogeneous config) repeats that link's reads in Python:
//! plain reads of `attribute_map` and `__dict__`.

use std::os::raw::c_int;

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::PyString;

extern "C" {
    /// CPython's `object.__getattribute__` with `suppress=1`: a missing attribute returns NULL
    /// with no exception set (what `hasattr` uses for plain objects). Exported by libpython.
    fn _PyObject_GenericGetAttrWithDict(
        obj: *mut ffi::PyObject,
        name: *mut ffi::PyObject,
        dict: *mut ffi::PyObject,
        suppress: c_int,
    ) -> *mut ffi::PyObject;
    /// The MRO lookup of a name on a type, through the type attribute cache; borrowed result.
    fn _PyType_Lookup(t: *mut ffi::PyTypeObject, name: *mut ffi::PyObject) -> *mut ffi::PyObject;
}

/// The aliasing `__getattribute__` as transformers writes it: the reference its candidates'
/// code is compared with.
const REFERENCE: &str = r#"
class _Reference:
    def __getattribute__(self, key):
        if key != "attribute_map" and key in super().__getattribute__("attribute_map"):
            key = super().__getattribute__("attribute_map")[key]
        return super().__getattribute__(key)
"#;

/// A recognised `__getattribute__` in the chain.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Link {
    /// transformers' `PreTrainedConfig.__getattribute__` ([`REFERENCE`]).
    Alias,
    /// transformers' `HeterogeneousConfigMixin.__getattribute__`, in its homogeneous case.
    Heterogeneous,
}

/// sha256 of `repr((co_code, co_names, co_varnames, co_freevars, co_cellvars, co_argcount,
/// co_posonlyargcount, co_kwonlyargcount, co_flags & 0xffff, tuple(map(repr, co_consts))))` of
/// transformers 5.24's `HeterogeneousConfigMixin.__getattribute__` on CPython 3.11 (see
/// [`FINGERPRINT`]). Another version of it simply is not recognised.
const HETEROGENEOUS_FINGERPRINT: &str =
    "45c3eca06cf1455b4c992439a24984dc96fd47b04f80fff2864da3f3a8a35457";

/// How a code object is fingerprinted (Python, run once per distinct code).
const FINGERPRINT: &str = r#"
def _fingerprint(c):
    import hashlib
    t = (c.co_code, c.co_names, c.co_varnames, c.co_freevars, c.co_cellvars, c.co_argcount,
         c.co_posonlyargcount, c.co_kwonlyargcount, c.co_flags & 0xffff,
         tuple(repr(x) for x in c.co_consts))
    return hashlib.sha256(repr(t).encode()).hexdigest()
"#;

/// The result of a native read: `Ok(Some(v))` the attribute, `Ok(None)` missing (only when the
/// caller asked to suppress the `AttributeError`; otherwise it is raised), `Err` any exception.
pub type Read<'py> = PyResult<Option<Bound<'py, PyAny>>>;

/// At most this many links are followed (transformers has two).
const MAX_LINKS: usize = 4;

/// `getattr(obj, name)` (`suppress=false`: a missing attribute is an `AttributeError`) or the
/// `hasattr`-style probe (`suppress=true`), when `type(obj)`'s attribute reads go through a
/// chain of recognised `__getattribute__`s under the conditions in the module doc; `None`
/// otherwise.
pub fn read<'py>(
    obj: &Bound<'py, PyAny>,
    name: &Bound<'py, PyString>,
    suppress: bool,
) -> Option<Read<'py>> {
    let py = obj.py();
    // SAFETY: every pointer below is read from live objects held by `obj` (its type, the type's
    // MRO tuple and dicts, the functions found there) while the GIL is held; borrowed results
    // are used before any call that could run Python code and free them.
    unsafe {
        let ty = ffi::Py_TYPE(obj.as_ptr());
        // Plain objects: nothing to do here (and the common case, so checked first).
        if (*ty).tp_getattro.map(|f| f as usize)
            == Some(ffi::PyObject_GenericGetAttr as *const () as usize)
        {
            return None;
        }
        let links = chain(py, ty)?;
        execute(obj, name, suppress, &links[..])
    }
}

/// The recognised links of `ty`'s `__getattribute__` chain, in call order; `None` when any
/// condition of the module doc fails.
unsafe fn chain(py: Python<'_>, ty: *mut ffi::PyTypeObject) -> Option<Vec<Link>> {
    if !_PyType_Lookup(ty, pyo3::intern!(py, "__getattr__").as_ptr()).is_null() {
        return None;
    }
    let mro = (*ty).tp_mro;
    if mro.is_null() || ffi::PyTuple_Check(mro) == 0 {
        return None;
    }
    let object = (&raw mut ffi::PyBaseObject_Type).cast::<ffi::PyObject>();
    let getattribute = pyo3::intern!(py, "__getattribute__").as_ptr();
    let n = ffi::PyTuple_GET_SIZE(mro);
    let mut links = Vec::new();
    let mut i = 0;
    while i < n {
        let cls = ffi::PyTuple_GET_ITEM(mro, i);
        i += 1;
        if cls == object {
            break;
        }
        let dict = (*cls.cast::<ffi::PyTypeObject>()).tp_dict;
        if dict.is_null() {
            return None;
        }
        let f = ffi::PyDict_GetItemWithError(dict, getattribute);
        if f.is_null() {
            if !ffi::PyErr_Occurred().is_null() {
                ffi::PyErr_Clear();
                return None;
            }
            continue;
        }
        if links.len() == MAX_LINKS {
            return None;
        }
        links.push(link(py, f, cls)?);
        // Its `super()` continues after `cls`: the loop goes on from the next class.
    }
    (!links.is_empty()).then_some(links)
}

/// The link `f` (found in `cls`'s dict) is, when it is a recognised plain function whose
/// `super()` means `super(cls, self)` with the builtin `super`.
unsafe fn link(py: Python<'_>, f: *mut ffi::PyObject, cls: *mut ffi::PyObject) -> Option<Link> {
    if ffi::PyFunction_Check(f) == 0 {
        return None;
    }
    let func = f as *mut ffi::PyFunctionObject;
    let globals = (*func).func_globals;
    let builtins = (*func).func_builtins;
    let super_name = pyo3::intern!(py, "super").as_ptr();
    if ffi::PyDict_Check(globals) == 0 || ffi::PyDict_Check(builtins) == 0 {
        return None;
    }
    if ffi::PyDict_Contains(globals, super_name) != 0 {
        ffi::PyErr_Clear();
        return None;
    }
    let sup = ffi::PyDict_GetItemWithError(builtins, super_name);
    if sup != (&raw mut ffi::PySuper_Type).cast::<ffi::PyObject>() {
        ffi::PyErr_Clear();
        return None;
    }
    // `__class__`, the one free variable, is the class the function was found in.
    let closure = (*func).func_closure;
    if closure.is_null() || ffi::PyTuple_Check(closure) == 0 || ffi::PyTuple_GET_SIZE(closure) != 1
    {
        return None;
    }
    let cell = ffi::PyTuple_GET_ITEM(closure, 0);
    if ffi::PyCell_Check(cell) == 0 {
        return None;
    }
    let owner = ffi::PyCell_Get(cell);
    if owner.is_null() {
        ffi::PyErr_Clear();
        return None;
    }
    ffi::Py_DECREF(owner); // the cell keeps it alive
    if owner != cls {
        return None;
    }
    recognise(py, (*func).func_code)
}

/// A code object compared with the known links, and which one it is.
type Seen = (Py<PyAny>, Option<Link>);

/// Code objects already compared: `(code, link)`. Strong references, so an address cannot be
/// reused by another code object. Few entries: one per distinct Python `__getattribute__`
/// whose instances appear in guards.
static SEEN: pyo3::sync::PyOnceLock<std::sync::Mutex<Vec<Seen>>> = pyo3::sync::PyOnceLock::new();

/// Past this many distinct codes, new ones are not compared (and not remembered): they read
/// through Python.
const SEEN_LIMIT: usize = 64;

/// Which link `code` is (compared once per code object, then remembered).
unsafe fn recognise(py: Python<'_>, code: *mut ffi::PyObject) -> Option<Link> {
    let seen = SEEN.get_or_init(py, || std::sync::Mutex::new(Vec::new()));
    {
        let seen = seen.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, link)) = seen.iter().find(|(c, _)| c.as_ptr() == code) {
            return *link;
        }
        if seen.len() >= SEEN_LIMIT {
            return None;
        }
    }
    let code = Bound::from_borrowed_ptr(py, code);
    let link = if same_code(py, &code).unwrap_or(false) {
        Some(Link::Alias)
    } else if fingerprint(py, &code).ok().as_deref() == Some(HETEROGENEOUS_FINGERPRINT) {
        Some(Link::Heterogeneous)
    } else {
        None
    };
    let mut seen = seen.lock().unwrap_or_else(|e| e.into_inner());
    seen.push((code.unbind(), link));
    link
}

fn fingerprint(py: Python<'_>, code: &Bound<'_, PyAny>) -> PyResult<String> {
    static FUNCTION: pyo3::sync::PyOnceLock<Py<PyAny>> = pyo3::sync::PyOnceLock::new();
    let f = FUNCTION.get_or_try_init(py, || -> PyResult<Py<PyAny>> {
        let ns = pyo3::types::PyDict::new(py);
        let src = std::ffi::CString::new(FINGERPRINT).expect("no NUL in the fingerprint");
        py.run(&src, Some(&ns), Some(&ns))?;
        Ok(ns.get_item("_fingerprint")?.expect("the function").unbind())
    })?;
    f.bind(py).call1((code,))?.extract()
}

/// Compares the parts of two code objects that decide what they do: the instructions and the
/// names, constants and variables they refer to.
fn same_code(py: Python<'_>, code: &Bound<'_, PyAny>) -> PyResult<bool> {
    static REFERENCE_CODE: pyo3::sync::PyOnceLock<Py<PyAny>> = pyo3::sync::PyOnceLock::new();
    let reference = REFERENCE_CODE.get_or_try_init(py, || -> PyResult<Py<PyAny>> {
        let ns = pyo3::types::PyDict::new(py);
        let src = std::ffi::CString::new(REFERENCE).expect("no NUL in the reference");
        py.run(&src, Some(&ns), Some(&ns))?;
        let cls = ns.get_item("_Reference")?.expect("the reference class");
        Ok(cls
            .getattr("__dict__")?
            .get_item("__getattribute__")?
            .getattr("__code__")?
            .unbind())
    })?;
    let reference = reference.bind(py);
    for attr in [
        "co_code",
        "co_names",
        "co_consts",
        "co_varnames",
        "co_freevars",
        "co_cellvars",
        "co_argcount",
        "co_posonlyargcount",
        "co_kwonlyargcount",
    ] {
        if !code.getattr(attr)?.eq(reference.getattr(attr)?)? {
            return Ok(false);
        }
    }
    // The flags that change how the code runs (optimized, new locals, varargs, generator...)
    // are the low 16 bits; above them are the `from __future__` flags of the defining module
    // (transformers' has `annotations`), which do not matter to this body.
    let flags = |c: &Bound<'_, PyAny>| -> PyResult<u32> {
        Ok(c.getattr("co_flags")?.extract::<u32>()? & 0xffff)
    };
    Ok(flags(code)? == flags(reference)?)
}

/// `object.__getattribute__(obj, name)`, with `suppress` as `hasattr` asks.
unsafe fn generic<'py>(
    obj: &Bound<'py, PyAny>,
    name: &Bound<'py, PyAny>,
    suppress: bool,
) -> Read<'py> {
    let py = obj.py();
    let r = _PyObject_GenericGetAttrWithDict(
        obj.as_ptr(),
        name.as_ptr(),
        std::ptr::null_mut(),
        c_int::from(suppress),
    );
    if r.is_null() {
        return match PyErr::take(py) {
            Some(e) => Err(e),
            None => Ok(None),
        };
    }
    Ok(Some(Bound::from_owned_ptr(py, r)))
}

/// The links' bodies, natively, in call order (see the module doc); `None` where a link
/// declines.
unsafe fn execute<'py>(
    obj: &Bound<'py, PyAny>,
    name: &Bound<'py, PyString>,
    suppress: bool,
    links: &[Link],
) -> Option<Read<'py>> {
    let py = obj.py();
    let mut key: Bound<'py, PyAny> = name.clone().into_any();
    for link in links {
        match link {
            Link::Alias => {
                // `key != "attribute_map"`: `key` is still the exact str asked for here (the
                // alias link comes first in transformers' chain; a later one would see a
                // mapped key, compared the same way).
                let is_map = match key.cast::<PyString>() {
                    Ok(k) => k.to_cow().map(|k| k == "attribute_map").unwrap_or(false),
                    Err(_) => !key.ne("attribute_map").unwrap_or(true),
                };
                if is_map {
                    continue;
                }
                let map = match generic(obj, pyo3::intern!(py, "attribute_map"), false) {
                    Ok(Some(m)) => m,
                    Ok(None) => return None,
                    Err(e) => return Some(Err(e)),
                };
                match map.contains(&key) {
                    Ok(true) => match map.get_item(&key) {
                        Ok(k) => key = k,
                        Err(e) => return Some(Err(e)),
                    },
                    Ok(false) => {}
                    Err(e) => return Some(Err(e)),
                }
            }
            Link::Heterogeneous => {
                // `super().__getattribute__("__dict__").get("_heterogeneity_spec")`: only an
                // exact dict is read here, and only "no spec" is handled.
                let d = match generic(obj, pyo3::intern!(py, "__dict__"), false) {
                    Ok(Some(d)) => d,
                    _ => return None,
                };
                let Ok(d) = d.cast_into_exact::<pyo3::types::PyDict>() else {
                    return None;
                };
                match d.get_item(pyo3::intern!(py, "_heterogeneity_spec")) {
                    Ok(None) => {}
                    Ok(Some(spec)) if spec.is_none() => {}
                    _ => return None,
                }
            }
        }
    }
    Some(generic(obj, &key, suppress))
}
