//! Structural pattern matching (`match`): MATCH_MAPPING, MATCH_SEQUENCE, MATCH_KEYS,
//! COPY_DICT_WITHOUT_KEYS and MATCH_CLASS over tracked values, answered at trace time from what
//! the tracker knows (a tracked dict's keys, a tuple's length, a tracked object's class and
//! attributes), as the interpreter answers them. The instructions are dispatched from
//! `exceptions.rs` `step_statement`.

use pyo3::prelude::*;
use pyo3::types::PyType;

use crate::error::TraceError;

use super::vars::Var;
use super::Frame;

/// Builtin classes whose instances `case C(x)` matches against themselves.
const SELF_MATCHING: &[&str] = &[
    "bool",
    "bytearray",
    "bytes",
    "dict",
    "float",
    "frozenset",
    "int",
    "list",
    "set",
    "str",
    "tuple",
];

impl Frame<'_, '_> {
    /// MATCH_MAPPING / MATCH_SEQUENCE: whether the subject's type is a mapping / a sequence
    /// (`Py_TPFLAGS_MAPPING`/`Py_TPFLAGS_SEQUENCE`, as the interpreter decides).
    pub(super) fn match_kind(&mut self, v: &Var, mapping: bool) -> Result<bool, TraceError> {
        let py = self.tx.py;
        const SEQUENCE: u64 = 1 << 5;
        const MAPPING: u64 = 1 << 6;
        let flag = if mapping { MAPPING } else { SEQUENCE };
        let ty = match v {
            Var::Dict(_) => return Ok(mapping),
            Var::Tuple(_) | Var::List(_) | Var::Size(_) | Var::NamedTuple { .. } => {
                return Ok(!mapping)
            }
            Var::Tensor(_) => py.import("torch")?.getattr("Tensor")?,
            Var::Object(o) => o.cls.bind(py).clone(),
            other => match other.as_py(py) {
                Some(o) => {
                    self.tx.realize(other);
                    o.get_type().into_any()
                }
                None => {
                    return Err(TraceError::unsupported(format!(
                        "a `match` over a {}",
                        other.type_name(py)
                    )))
                }
            },
        };
        let flags: u64 = ty.getattr("__flags__")?.extract()?;
        Ok(flags & flag != 0)
    }

    /// MATCH_KEYS: the values of `keys` in the mapping `subject` (a tuple), or None when one
    /// is missing.
    pub(super) fn match_keys(&mut self, subject: Var, keys: Var) -> Result<Var, TraceError> {
        let py = self.tx.py;
        let keys = keys
            .items(py)
            .ok_or_else(|| TraceError::internal("MATCH_KEYS keys"))?;
        let mut out = Vec::new();
        for k in keys {
            let found = match &subject {
                Var::Dict(d) => {
                    let key = self.dict_key(&k)?;
                    d.borrow()
                        .iter()
                        .find(|(k2, _)| k2.bind(py).eq(key.bind(py)).unwrap_or(false))
                        .map(|(_, v)| v.clone())
                }
                other => {
                    let contains = self.contains_op(k.clone(), other.clone(), false)?;
                    if self.truth(&contains)? {
                        Some(self.subscript(other.clone(), k)?)
                    } else {
                        None
                    }
                }
            };
            match found {
                Some(v) => out.push(v),
                None => return Ok(Var::none(py)),
            }
        }
        Ok(Var::Tuple(out.into()))
    }

    /// COPY_DICT_WITHOUT_KEYS: `**rest` of a mapping pattern.
    pub(super) fn dict_without_keys(&mut self, subject: Var, keys: Var) -> Result<Var, TraceError> {
        let py = self.tx.py;
        let keys = keys
            .items(py)
            .ok_or_else(|| TraceError::internal("COPY_DICT_WITHOUT_KEYS keys"))?;
        let Var::Dict(d) = &subject else {
            return Err(TraceError::unsupported(format!(
                "`**rest` of a {}",
                subject.type_name(py)
            )));
        };
        let mut items = d.borrow().clone();
        for k in keys {
            let key = self.dict_key(&k)?;
            items.retain(|(k2, _)| !k2.bind(py).eq(key.bind(py)).unwrap_or(false));
        }
        Ok(Var::Dict(std::rc::Rc::new(std::cell::RefCell::new(items))))
    }

    /// MATCH_CLASS: `case cls(p1, p2, k=p3)`: the tuple of the subject's attributes named by
    /// `cls.__match_args__` (positional) and `names`, or None when it does not match.
    pub(super) fn match_class(
        &mut self,
        subject: Var,
        cls: Var,
        names: Var,
        npos: usize,
    ) -> Result<Var, TraceError> {
        let py = self.tx.py;
        let cls_obj = cls
            .as_py(py)
            .ok_or_else(|| TraceError::unsupported("a class pattern over a tracked value"))?;
        let Ok(ty) = cls_obj.cast::<PyType>() else {
            return Err(TraceError::unsupported(
                "a class pattern whose class is not a type (the frame raises TypeError)",
            ));
        };
        let is_instance = match &subject {
            Var::Object(o) => o
                .cls
                .bind(py)
                .cast::<PyType>()
                .map_err(PyErr::from)?
                .is_subclass(ty)?,
            Var::Tensor(_) => py
                .import("torch")?
                .getattr("Tensor")?
                .cast::<PyType>()
                .map_err(PyErr::from)?
                .is_subclass(ty)?,
            other => match other.as_py(py) {
                Some(o) => {
                    self.tx.realize(other);
                    o.is_instance(ty)?
                }
                // A tracked value (a namedtuple, a list or dict subclass made in the frame)
                // whose class is known: MATCH_CLASS checks `isinstance`, which for a class
                // without `__instancecheck__` overrides is the subclass test of its type
                // (`PyObject_IsSubclass` honours an ABC's `__subclasscheck__`).
                None => match self.type_of(other)? {
                    Some(t) => t.bind(py).is_subclass(ty)?,
                    None => {
                        return Err(TraceError::unsupported(format!(
                            "a class pattern over a {}",
                            other.type_name(py)
                        )))
                    }
                },
            },
        };
        if !is_instance {
            return Ok(Var::none(py));
        }
        let mut attr_names: Vec<String> = Vec::new();
        let mut out = Vec::new();
        if npos > 0 {
            match ty.getattr("__match_args__") {
                Ok(m) => {
                    let m: Vec<String> = m.extract().map_err(|_| {
                        TraceError::unsupported("__match_args__ that is not a tuple of strings")
                    })?;
                    if m.len() < npos {
                        return Err(TraceError::unsupported(
                            "too many positional sub-patterns (the frame raises TypeError)",
                        ));
                    }
                    attr_names.extend(m.into_iter().take(npos));
                }
                Err(_) => {
                    let builtin = ty.module().map(|m| m == "builtins").unwrap_or(false)
                        && SELF_MATCHING.contains(&ty.name()?.to_string().as_str());
                    if !(builtin && npos == 1) {
                        return Err(TraceError::unsupported(
                            "positional sub-patterns of a class without __match_args__",
                        ));
                    }
                    out.push(subject.clone());
                }
            }
        }
        let kw: Vec<String> = names
            .as_py(py)
            .and_then(|n| n.extract().ok())
            .ok_or_else(|| TraceError::internal("MATCH_CLASS names"))?;
        attr_names.extend(kw);
        for name in attr_names {
            match self.getattr(subject.clone(), &name) {
                Ok(v) => out.push(v),
                Err(TraceError::Raised { exc, .. })
                    if exc
                        .bind(py)
                        .is_instance_of::<pyo3::exceptions::PyAttributeError>() =>
                {
                    return Ok(Var::none(py))
                }
                Err(e) => return Err(e),
            }
        }
        Ok(Var::Tuple(out.into()))
    }
}
