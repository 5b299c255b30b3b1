//! transformers' `ModelOutput` dataclasses made by the traced code (every transformers model
//! returns one). The class is an `OrderedDict` whose `__post_init__`, `__setattr__` and
//! `__setitem__` keep the dict and the attributes in step, so it is not a plain object the tracker
//! can build field by field. Its behaviour is simple, though: the keys are the fields that are
//! not `None`, in declaration order; `out.name` is a field; `out[i]` and `out.to_tuple()` index
//! the non-`None` values; `out["name"]` is a key's value; writing a field (as item or attribute)
//! sets both, a new key going last. The tracker keeps the field values and the key order, and
//! the graph's caller builds the instance again by calling the class with the fields, as the
//! traced code did (TorchDynamo special-cases these classes too).

use std::cell::RefCell;
use std::rc::Rc;

use pyo3::prelude::*;

use crate::error::TraceError;

use super::vars::{ModelOutputVar, Var};
use super::Frame;

impl ModelOutputVar {
    fn is_none(py: Python<'_>, v: &Var) -> bool {
        matches!(v, Var::Py(o, _) if o.is_none(py))
    }

    /// As `__post_init__` leaves it: the fields that are not `None` are the keys, in order.
    fn new(py: Python<'_>, cls: Py<PyAny>, fields: Vec<(String, Var)>) -> ModelOutputVar {
        let keys = fields
            .iter()
            .filter(|(_, v)| !Self::is_none(py, v))
            .map(|(n, _)| n.clone())
            .collect();
        ModelOutputVar {
            cls,
            fields: RefCell::new(fields),
            keys: RefCell::new(keys),
        }
    }

    /// The dict's items, in key order.
    pub fn items(&self) -> Vec<(String, Var)> {
        self.keys
            .borrow()
            .iter()
            .filter_map(|k| self.field(k).map(|v| (k.clone(), v)))
            .collect()
    }

    /// `key in out` (with the old cache names).
    pub fn has_key(&self, key: &str) -> bool {
        let key = self.canonical(key);
        self.keys.borrow().iter().any(|k| k == key)
    }

    pub fn field(&self, name: &str) -> Option<Var> {
        let name = self.canonical(name);
        self.fields
            .borrow()
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
    }

    /// transformers renamed the `past_key_values` / `cache_params` field to `cache` and keeps
    /// the old names working for attribute, item and keyword access.
    fn canonical<'a>(&self, name: &'a str) -> &'a str {
        let fields = self.fields.borrow();
        canonical_name(fields.iter().map(|(n, _)| n.as_str()), name)
    }

    /// `out[name] = v` (`item`) or `out.name = v`: both set the field and the dict entry (a new
    /// key goes last). Writing `None`, or a name that is not a field, leaves dict and attribute
    /// apart in ways not modelled.
    pub fn assign(&self, py: Python<'_>, name: &str, v: Var, item: bool) -> Result<(), TraceError> {
        let name = self.canonical(name).to_string();
        let what = if item { "an item" } else { "an attribute" };
        if Self::is_none(py, &v) {
            return Err(TraceError::unsupported(format!(
                "setting {what} of a ModelOutput to None"
            )));
        }
        let mut fields = self.fields.borrow_mut();
        let Some(slot) = fields.iter_mut().find(|(n, _)| *n == name) else {
            return Err(TraceError::unsupported(format!(
                "setting {what} '{name}' of a ModelOutput that is not one of its fields"
            )));
        };
        slot.1 = v;
        let mut keys = self.keys.borrow_mut();
        if !keys.contains(&name) {
            keys.push(name);
        }
        Ok(())
    }

    /// The arguments that build this instance again: the fields in declaration order, which
    /// give the same dict only while its keys are in declaration order too.
    pub fn rebuild_args(&self) -> Result<Vec<Var>, TraceError> {
        let fields = self.fields.borrow();
        let order: Vec<&String> = fields
            .iter()
            .map(|(n, _)| n)
            .filter(|n| self.keys.borrow().contains(*n))
            .collect();
        if order
            .iter()
            .map(|n| n.as_str())
            .ne(self.keys.borrow().iter().map(|k| k.as_str()))
        {
            return Err(TraceError::unsupported(
                "a ModelOutput whose keys were set out of field order leaves the graph",
            ));
        }
        Ok(fields.iter().map(|(_, v)| v.clone()).collect())
    }
}

/// `cache` for the old names `past_key_values` / `cache_params` where the class has a `cache`
/// field (transformers' renaming, honoured for keywords, attributes, items and `in`).
fn canonical_name<'a, 'f>(mut fields: impl Iterator<Item = &'f str>, name: &'a str) -> &'a str {
    if matches!(name, "past_key_values" | "cache_params") && fields.any(|n| n == "cache") {
        "cache"
    } else {
        name
    }
}

/// The field names of `cls` if it is a `ModelOutput` dataclass whose dict behaviour is
/// `ModelOutput`'s own (no overridden `__post_init__`, item or attribute access), with the
/// dataclass's generated `__init__` taking every field.
fn model_output_fields(
    py: Python<'_>,
    cls: &Bound<'_, PyAny>,
) -> PyResult<Option<Vec<(String, bool)>>> {
    // Never import transformers: only a class from a loaded transformers qualifies.
    let sys = py.import("sys")?;
    let Ok(generic) = sys
        .getattr("modules")?
        .get_item("transformers.utils.generic")
    else {
        return Ok(None);
    };
    let base = generic.getattr("ModelOutput")?;
    let builtins = py.import("builtins")?;
    let is_type = cls.is_instance(&builtins.getattr("type")?)?;
    if !is_type
        || cls.is(&base)
        || !builtins
            .getattr("issubclass")?
            .call1((cls, &base))?
            .is_truthy()?
    {
        return Ok(None);
    }
    let dataclasses = py.import("dataclasses")?;
    if !dataclasses
        .getattr("is_dataclass")?
        .call1((cls,))?
        .is_truthy()?
    {
        return Ok(None);
    }
    for name in [
        "__post_init__",
        "__getitem__",
        "__setitem__",
        "__setattr__",
        "__getattribute__",
        "to_tuple",
        "keys",
        "values",
        "items",
        "get",
        "__contains__",
    ] {
        if !cls.getattr(name)?.is(base.getattr(name)?) {
            return Ok(None);
        }
    }
    if !cls.getattr("__dict__")?.contains("__init__")? {
        return Ok(None);
    }
    let missing = dataclasses.getattr("MISSING")?;
    let mut out = Vec::new();
    for f in dataclasses.getattr("fields")?.call1((cls,))?.try_iter()? {
        let f = f?;
        if !f.getattr("init")?.is_truthy()? {
            return Ok(None);
        }
        let default = f.getattr("default")?;
        let has_default = if default.is(&missing) {
            if !f.getattr("default_factory")?.is(&missing) {
                return Ok(None);
            }
            false
        } else if default.is_none() {
            true
        } else {
            return Ok(None);
        };
        out.push((f.getattr("name")?.extract::<String>()?, has_default));
    }
    Ok((!out.is_empty()).then_some(out))
}

impl Frame<'_, '_> {
    /// `cls(*args, **kwargs)` for a `ModelOutput` dataclass; `None` for any other callable.
    pub(super) fn construct_model_output(
        &mut self,
        cls: &Bound<'_, PyAny>,
        args: &[Var],
        kwargs: &[(String, Var)],
    ) -> Result<Option<Var>, TraceError> {
        let py = self.tx.py;
        let Some(decl) = model_output_fields(py, cls)? else {
            return Ok(None);
        };
        let name = cls.getattr("__name__")?.to_string();
        if args.len() > decl.len() {
            return Err(TraceError::unsupported(format!(
                "{name}() with more positional arguments than fields (the call raises TypeError)"
            )));
        }
        let mut values: Vec<Option<Var>> = vec![None; decl.len()];
        for (i, a) in args.iter().enumerate() {
            values[i] = Some(a.clone());
        }
        for (k, v) in kwargs {
            // The metaclass's `__init__` wrapper renames the old keywords to `cache`.
            let k = canonical_name(decl.iter().map(|(n, _)| n.as_str()), k);
            let Some(i) = decl.iter().position(|(n, _)| n == k) else {
                return Err(TraceError::unsupported(format!(
                    "{name}() with keyword {k} that is not a field (the call raises TypeError)"
                )));
            };
            if values[i].is_some() {
                return Err(TraceError::unsupported(format!(
                    "{name}() given {k} twice (the call raises TypeError)"
                )));
            }
            values[i] = Some(v.clone());
        }
        let mut fields = Vec::new();
        for ((n, has_default), v) in decl.into_iter().zip(values) {
            let v = match v {
                Some(v) => v,
                None if has_default => Var::none(py),
                None => {
                    return Err(TraceError::unsupported(format!(
                        "{name}() without its required field {n} (the call raises TypeError)"
                    )))
                }
            };
            fields.push((n, v));
        }
        // `__post_init__` treats a lone first field that is not a tensor as an iterator of
        // (key, value) pairs; only the plain case is modelled.
        let (first, rest) = fields.split_first().expect("at least one field");
        let rest_none = rest.iter().all(|(_, v)| ModelOutputVar::is_none(py, v));
        if rest_none && !matches!(first.1, Var::Tensor(_)) && !ModelOutputVar::is_none(py, &first.1)
        {
            return Err(TraceError::unsupported(format!(
                "{name}() whose only field is not a tensor (its __post_init__ iterates it)"
            )));
        }
        let out = ModelOutputVar::new(py, cls.clone().unbind(), fields);
        Ok(Some(Var::ModelOutput(Rc::new(out))))
    }

    /// `out.name`: a field's value, or one of the dict methods as a method to call.
    pub(super) fn model_output_attr(
        &mut self,
        o: &Rc<ModelOutputVar>,
        name: &str,
    ) -> Result<Var, TraceError> {
        let py = self.tx.py;
        if let Some(v) = o.field(name) {
            return Ok(v);
        }
        if matches!(name, "to_tuple" | "keys" | "values" | "items" | "get") {
            return Ok(Var::Method {
                recv: Box::new(Var::ModelOutput(o.clone())),
                name: name.to_string(),
            });
        }
        let cls = o.cls.bind(py);
        match cls.getattr(name) {
            // Class-level constants (not functions, which would see the instance).
            Ok(v) if !v.hasattr("__get__")? => Ok(Var::Py(v.unbind(), None)),
            Ok(_) => Err(TraceError::unsupported(format!(
                "attribute {name} of a {} (a method or descriptor)",
                cls.getattr("__name__")?
            ))),
            Err(e) => Err(TraceError::UserError {
                call: format!("getattr(.., '{name}')"),
                message: e.to_string(),
                error: e,
            }),
        }
    }

    pub(super) fn model_output_method(
        &mut self,
        o: Rc<ModelOutputVar>,
        name: &str,
        args: Vec<Var>,
        kwargs: Vec<(String, Var)>,
    ) -> Result<Var, TraceError> {
        let py = self.tx.py;
        let items = o.items();
        let key = |v: &Var| -> Option<String> { v.as_py(py)?.extract::<String>().ok() };
        match (name, args.as_slice()) {
            _ if !kwargs.is_empty() => Err(TraceError::unsupported(format!(
                "ModelOutput.{name} with keyword arguments"
            ))),
            ("to_tuple", []) => Ok(Var::Tuple(
                items.into_iter().map(|(_, v)| v).collect::<Vec<_>>().into(),
            )),
            ("keys", []) => Ok(Var::list(
                items
                    .into_iter()
                    .map(|(k, _)| Var::py_const(py, k))
                    .collect(),
            )),
            ("values", []) => Ok(Var::list(items.into_iter().map(|(_, v)| v).collect())),
            ("items", []) => Ok(Var::list(
                items
                    .into_iter()
                    .map(|(k, v)| Var::Tuple(vec![Var::py_const(py, k), v].into()))
                    .collect(),
            )),
            ("get", [k]) | ("get", [k, _]) => {
                let k = key(k)
                    .ok_or_else(|| TraceError::unsupported("ModelOutput.get of a non-str key"))?;
                let k = o.canonical(&k).to_string();
                Ok(match items.into_iter().find(|(n, _)| *n == k) {
                    Some((_, v)) => v,
                    None => args.get(1).cloned().unwrap_or_else(|| Var::none(py)),
                })
            }
            _ => Err(TraceError::unsupported(format!(
                "ModelOutput.{name} with these arguments"
            ))),
        }
    }

    /// `out[k]`: by position or slice over the non-`None` values, by name over the keys.
    pub(super) fn model_output_item(
        &mut self,
        o: &Rc<ModelOutputVar>,
        idx: &Var,
    ) -> Result<Var, TraceError> {
        let py = self.tx.py;
        let items = o.items();
        let k = idx
            .as_py(py)
            .ok_or_else(|| TraceError::unsupported("indexing a ModelOutput with a tensor"))?;
        if let Ok(name) = k.extract::<String>() {
            let name = o.canonical(&name).to_string();
            return match items.into_iter().find(|(n, _)| *n == name) {
                Some((_, v)) => Ok(v),
                None => Err(TraceError::unsupported(format!(
                    "ModelOutput[{name:?}], not a key (the frame raises KeyError)"
                ))),
            };
        }
        let values = Var::Tuple(items.into_iter().map(|(_, v)| v).collect::<Vec<_>>().into());
        self.subscript(values, idx.clone())
    }
}
