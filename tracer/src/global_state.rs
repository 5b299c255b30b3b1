//! Guards on process-wide state that a trace read without a source of its own: the value of a
//! global-state query folded at trace time (`torch.get_default_dtype()`,
//! `torch.are_deterministic_algorithms_enabled()`), a default dtype that decided the dtype of a
//! graph value, and the functions and constants read as attributes of torch's modules
//! (`torch.sigmoid`) and the methods of torch's classes (`torch.Tensor.relu`), which a program
//! may replace between calls.
//!
//! They must cost next to nothing on a hit: a module's or class's attributes are checked through
//! the version tag of its dict (one integer compare while nothing in it changed; the attributes
//! themselves are compared only after it did), and a global-state query is installed only on
//! entries whose trace used it.

use std::sync::atomic::{AtomicU64, Ordering};

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString, PyType};

use crate::event::{FailedCheck, GuardRecord, Location};
use crate::guards::short_repr;

/// A query of global state, `f()`, that must return the object it returned while tracing.
struct GlobalValue {
    f: Py<PyAny>,
    expected: Py<PyAny>,
    /// How the query reads in logs (`torch.get_default_dtype()`).
    label: String,
    origin: Option<Location>,
}

/// Attributes read from one module's or class's dict: `name` is `value` (or is absent, where a
/// class lookup went past it) for each, checked only when the dict changed since the last time
/// they all held.
struct DictAttrs {
    /// `MODULE_ATTRS` or `CLASS_ATTRS`, for logs.
    kind: &'static str,
    /// `torch` or `Tensor`, for logs.
    owner: String,
    dict: Py<PyDict>,
    /// The dict's version tag when every attribute last matched.
    tag: AtomicU64,
    attrs: Vec<AttrRead>,
}

/// One attribute read: its name, the object it was (`None`: absent) and the user line.
type AttrRead = (Py<PyString>, Option<Py<PyAny>>, Option<Location>);

/// The global-state guards of one cache entry (see the module documentation).
#[derive(Default)]
pub struct GlobalGuards {
    values: Vec<GlobalValue>,
    dicts: Vec<DictAttrs>,
}

/// The version tag of a dict: CPython gives a dict a new one on every change (PEP 509).
pub(crate) fn dict_version(d: &Bound<'_, PyDict>) -> u64 {
    // SAFETY: `d` is a live, exact or subclassed `dict` (the cast to `PyDict` checked it), whose
    // C layout starts with `PyDictObject`; the tag is a plain integer field read under the GIL.
    #[allow(deprecated)]
    unsafe {
        (*(d.as_ptr() as *const pyo3::ffi::PyDictObject)).ma_version_tag
    }
}

/// One global-state guard as data (read-only, for `crate::precompile`).
pub enum GlobalFact<'py> {
    /// `f() is expected`, shown as `label`.
    Value(Bound<'py, PyAny>, Bound<'py, PyAny>, String),
    /// `owner_dict.get(name)` is the object (`None`: absent).
    Attr(Bound<'py, PyDict>, String, Option<Bound<'py, PyAny>>),
}

impl GlobalGuards {
    /// Every guard as a [`GlobalFact`].
    pub fn facts<'py>(&self, py: Python<'py>) -> Vec<GlobalFact<'py>> {
        let mut out: Vec<GlobalFact<'py>> = self
            .values
            .iter()
            .map(|v| {
                GlobalFact::Value(
                    v.f.bind(py).clone(),
                    v.expected.bind(py).clone(),
                    v.label.clone(),
                )
            })
            .collect();
        for d in &self.dicts {
            for (name, value, _) in &d.attrs {
                out.push(GlobalFact::Attr(
                    d.dict.bind(py).clone(),
                    name.bind(py).to_string(),
                    value.as_ref().map(|v| v.bind(py).clone()),
                ));
            }
        }
        out
    }

    /// Guards `f() is value` (a singleton: a dtype, a bool), read at trace time as `label`.
    pub fn value(
        &mut self,
        f: &Bound<'_, PyAny>,
        value: &Bound<'_, PyAny>,
        label: &str,
        origin: Option<Location>,
    ) {
        if self.values.iter().any(|v| v.f.is(f)) {
            return;
        }
        self.values.push(GlobalValue {
            f: f.clone().unbind(),
            expected: value.clone().unbind(),
            label: label.to_string(),
            origin,
        });
    }

    /// Guards that `module.name` stays `value`. Only attributes that live in the module's dict
    /// are guarded (a lazy `__getattr__` result is computed again on each read anyway).
    pub fn module_attr(
        &mut self,
        module: &Bound<'_, PyAny>,
        name: &str,
        value: &Bound<'_, PyAny>,
        origin: Option<Location>,
    ) {
        let py = module.py();
        let Ok(dict) = module.getattr(pyo3::intern!(py, "__dict__")) else {
            return;
        };
        let Ok(dict) = dict.cast_into::<PyDict>() else {
            return;
        };
        match dict.get_item(name) {
            Ok(Some(v)) if v.is(value) => {}
            _ => return,
        }
        let owner = module
            .getattr(pyo3::intern!(py, "__name__"))
            .and_then(|n| n.extract::<String>())
            .unwrap_or_else(|_| "?".into());
        self.dict_attr("MODULE_ATTRS", &owner, dict, name, Some(value), origin);
    }

    /// Guards that `cls.__dict__[name]` stays `value`, or stays absent (`None`: a lookup
    /// through the class's MRO went past it). Returns false where the class's dict cannot be
    /// reached, so that the caller does not rely on the read.
    pub fn class_attr(
        &mut self,
        cls: &Bound<'_, PyType>,
        name: &str,
        value: Option<&Bound<'_, PyAny>>,
        origin: Option<Location>,
    ) -> bool {
        let Some(dict) = class_dict(cls) else {
            return false;
        };
        let owner = cls
            .getattr(pyo3::intern!(cls.py(), "__qualname__"))
            .and_then(|n| n.extract::<String>())
            .unwrap_or_else(|_| "?".into());
        self.dict_attr("CLASS_ATTRS", &owner, dict, name, value, origin);
        true
    }

    /// Guards that `name` stays absent from `dict` (a module's globals or builtins, where a
    /// name lookup that raised `NameError` went past it).
    pub fn dict_absent(
        &mut self,
        dict: &Bound<'_, PyDict>,
        owner: &str,
        name: &str,
        origin: Option<Location>,
    ) {
        self.dict_attr("MODULE_ATTRS", owner, dict.clone(), name, None, origin);
    }

    fn dict_attr(
        &mut self,
        kind: &'static str,
        owner: &str,
        dict: Bound<'_, PyDict>,
        name: &str,
        value: Option<&Bound<'_, PyAny>>,
        origin: Option<Location>,
    ) {
        let py = dict.py();
        let i = match self.dicts.iter().position(|m| m.dict.is(&dict)) {
            Some(i) => i,
            None => {
                self.dicts.push(DictAttrs {
                    kind,
                    owner: owner.to_string(),
                    tag: AtomicU64::new(dict_version(&dict)),
                    dict: dict.unbind(),
                    attrs: Vec::new(),
                });
                self.dicts.len() - 1
            }
        };
        let m = &mut self.dicts[i];
        if m.attrs
            .iter()
            .any(|(n, _, _)| n.bind(py).to_str().ok() == Some(name))
        {
            return;
        }
        m.attrs.push((
            PyString::new(py, name).unbind(),
            value.map(|v| v.clone().unbind()),
            origin,
        ));
    }

    /// The fast path: true when every global-state guard holds.
    pub fn check(&self, py: Python<'_>) -> bool {
        self.dicts.iter().all(|m| m.check(py))
            && self.values.iter().all(|v| {
                v.f.bind(py)
                    .call0()
                    .map(|r| r.is(v.expected.bind(py)))
                    .unwrap_or(false)
            })
    }

    /// Every failing guard, as recompile-log reasons with the user line that made it.
    pub fn failures(&self, py: Python<'_>, out: &mut Vec<FailedCheck>) {
        for v in &self.values {
            let actual = v.f.bind(py).call0();
            let ok = actual
                .as_ref()
                .map(|r| r.is(v.expected.bind(py)))
                .unwrap_or(false);
            if !ok {
                let actual = match &actual {
                    Ok(r) => short_repr(r),
                    Err(e) => format!("an error ({e})"),
                };
                out.push(FailedCheck {
                    origin: v.origin.clone(),
                    ..FailedCheck::global(
                        "GLOBAL_STATE",
                        format!(
                            "{} changed. expected {}, actual {actual}",
                            v.label,
                            short_repr(v.expected.bind(py))
                        ),
                    )
                });
            }
        }
        for m in &self.dicts {
            let dict = m.dict.bind(py);
            for (name, expected, origin) in &m.attrs {
                let actual = dict.get_item(name.bind(py)).ok().flatten();
                if !same_entry(actual.as_ref(), expected, py) {
                    let show = |v: Option<&Bound<'_, PyAny>>| {
                        v.map(short_repr).unwrap_or_else(|| "missing".into())
                    };
                    let attr = format!("{}.{}", m.owner, name.bind(py));
                    out.push(FailedCheck {
                        source: Some(attr.clone()),
                        expr: Some(attr.clone()),
                        origin: origin.clone(),
                        ..FailedCheck::global(
                            m.kind,
                            format!(
                                "{attr} is not the same object. expected {}, actual {}",
                                show(expected.as_ref().map(|e| e.bind(py))),
                                show(actual.as_ref())
                            ),
                        )
                    });
                }
            }
        }
    }

    /// One line per guard, for logs and `cache_entries`.
    pub fn describe(&self, py: Python<'_>, out: &mut Vec<GuardRecord>) {
        for v in &self.values {
            let text = format!(
                "GLOBAL_STATE {} is {}",
                v.label,
                short_repr(v.expected.bind(py))
            );
            out.push(GuardRecord {
                kind: "GLOBAL_STATE",
                source: None,
                text,
                origin: v.origin.clone(),
            });
        }
        for m in &self.dicts {
            let names: Vec<String> = m
                .attrs
                .iter()
                .map(|(n, v, _)| match v {
                    Some(_) => n.bind(py).to_string(),
                    None => format!("{} (absent)", n.bind(py)),
                })
                .collect();
            out.push(GuardRecord {
                kind: m.kind,
                source: Some(m.owner.clone()),
                text: format!(
                    "{} {}: {} are the objects read (checked when its dict changes)",
                    m.kind,
                    m.owner,
                    names.join(", ")
                ),
                origin: None,
            });
        }
    }
}

/// Whether a dict entry is the one a guard expects (`None`: no entry).
fn same_entry(
    actual: Option<&Bound<'_, PyAny>>,
    expected: &Option<Py<PyAny>>,
    py: Python<'_>,
) -> bool {
    match (actual, expected) {
        (Some(a), Some(e)) => a.is(e.bind(py)),
        (None, None) => true,
        _ => false,
    }
}

/// The dict behind a class's `__dict__` mapping proxy, where its attributes live.
fn class_dict<'py>(cls: &Bound<'py, PyType>) -> Option<Bound<'py, PyDict>> {
    // SAFETY: `cls` is a live type object held for the duration of the call; `tp_dict` is a
    // plain field of `PyTypeObject`, either NULL or a borrowed reference to the type's dict
    // (CPython keeps it alive as long as the type), which we take our own reference to.
    let d = unsafe {
        let p = (*cls.as_type_ptr()).tp_dict;
        if p.is_null() {
            return None;
        }
        Bound::from_borrowed_ptr(cls.py(), p)
    };
    d.cast_into::<PyDict>().ok()
}

impl DictAttrs {
    fn check(&self, py: Python<'_>) -> bool {
        let dict = self.dict.bind(py);
        let tag = dict_version(dict);
        if tag == self.tag.load(Ordering::Relaxed) {
            return true;
        }
        // The dict changed (an attribute set, a submodule imported): compare what was read.
        let same = self.attrs.iter().all(|(name, expected, _)| {
            let actual = dict.get_item(name.bind(py)).ok().flatten();
            same_entry(actual.as_ref(), expected, py)
        });
        if same {
            self.tag.store(tag, Ordering::Relaxed);
        }
        same
    }
}
