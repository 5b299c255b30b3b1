//! Methods of lists and dicts made or read by the traced code.

use pyo3::prelude::*;

use crate::error::TraceError;

use crate::interp::vars::{Var, ViewKind};
use crate::interp::Frame;

impl Frame<'_, '_> {
    pub(super) fn dict_method(
        &mut self,
        d: crate::interp::vars::DictItems,
        name: &str,
        args: Vec<Var>,
        kwargs: Vec<(String, Var)>,
    ) -> Result<Var, TraceError> {
        let py = self.tx.py;
        let find = |d: &[(Py<PyAny>, Var)], k: &Bound<'_, PyAny>| {
            d.iter()
                .position(|(k2, _)| k2.bind(py).eq(k).unwrap_or(false))
        };
        let mutating = matches!(
            name,
            "pop" | "update" | "setdefault" | "clear" | "popitem" | "move_to_end"
        );
        if mutating {
            self.tx.note_dict_mutation(&d);
        }
        if let Some(r) = self.dict_kind_method(&d, name, &args, &kwargs)? {
            return Ok(r);
        }
        match (name, args.as_slice()) {
            ("get", [k]) | ("get", [k, _]) => {
                let k = self.hash_key(k)?.into_bound(py);
                let b = d.borrow();
                Ok(match find(&b, &k) {
                    Some(i) => b[i].1.clone(),
                    None => args.get(1).cloned().unwrap_or_else(|| Var::none(py)),
                })
            }
            ("pop", [k]) | ("pop", [k, _]) => {
                let k = self.hash_key(k)?.into_bound(py);
                let mut b = d.borrow_mut();
                match find(&b, &k) {
                    Some(i) => Ok(b.remove(i).1),
                    None => args.get(1).cloned().ok_or_else(|| {
                        TraceError::unsupported(
                            "dict.pop of a missing key (the frame raises KeyError)",
                        )
                    }),
                }
            }
            ("setdefault", [k, v]) => {
                let key = self.hash_key(k)?.into_bound(py);
                let mut b = d.borrow_mut();
                match find(&b, &key) {
                    Some(i) => Ok(b[i].1.clone()),
                    None => {
                        b.push((key.unbind(), v.clone()));
                        Ok(v.clone())
                    }
                }
            }
            ("keys", []) | ("values", []) | ("items", []) => {
                let kind = match name {
                    "keys" => ViewKind::Keys,
                    "values" => ViewKind::Values,
                    _ => ViewKind::Items,
                };
                Ok(Var::DictView(d.clone(), kind))
            }
            ("popitem", []) => d
                .borrow_mut()
                .pop()
                .map(|(k, v)| Var::Tuple(vec![Var::Py(k, None), v].into()))
                .ok_or_else(|| {
                    TraceError::unsupported("popitem of an empty dict (the frame raises KeyError)")
                }),
            ("clear", []) => {
                d.borrow_mut().clear();
                Ok(Var::none(py))
            }
            ("copy", []) => Ok(Var::Dict(std::rc::Rc::new(std::cell::RefCell::new(
                d.borrow().clone(),
            )))),
            ("update", []) | ("update", [_]) => {
                let mut other: Vec<(Py<PyAny>, Var)> = match args.first() {
                    Some(m) => self.mapping_pairs(m)?,
                    None => Vec::new(),
                };
                for (k, v) in &kwargs {
                    other.push((k.as_str().into_pyobject(py)?.into_any().unbind(), v.clone()));
                }
                let mut b = d.borrow_mut();
                for (k, v) in other {
                    match find(&b, k.bind(py)) {
                        Some(i) => b[i].1 = v,
                        None => b.push((k, v)),
                    }
                }
                Ok(Var::none(py))
            }
            _ => Err(TraceError::unsupported(format!(
                "dict.{name} with these arguments"
            ))),
        }
    }

    pub(super) fn list_method(
        &mut self,
        l: std::rc::Rc<std::cell::RefCell<Vec<Var>>>,
        name: &str,
        args: Vec<Var>,
        kwargs: Vec<(String, Var)>,
    ) -> Result<Var, TraceError> {
        let py = self.tx.py;
        if !kwargs.is_empty()
            || !matches!(
                (name, args.len()),
                ("append" | "extend", 1) | ("pop", 0) | ("insert", 2) | ("reverse", 0)
            )
        {
            let seq = Var::List(l.clone());
            if let Some(r) = self.sequence_method(&seq, name, &args, &kwargs)? {
                return Ok(r);
            }
        }
        let mutating = matches!(
            name,
            "append" | "extend" | "insert" | "pop" | "clear" | "reverse" | "remove" | "sort"
        );
        if mutating {
            self.tx.note_list_mutation(&l);
        }
        match (name, args.as_slice()) {
            ("append", [v]) => {
                l.borrow_mut().push(v.clone());
                Ok(Var::none(py))
            }
            ("extend", [v]) => {
                let items = self
                    .take_items_of(v)?
                    .ok_or_else(|| TraceError::unsupported("list.extend with a non-sequence"))?;
                l.borrow_mut().extend(items);
                Ok(Var::none(py))
            }
            ("pop", []) => l
                .borrow_mut()
                .pop()
                .ok_or_else(|| TraceError::unsupported("pop from an empty list")),
            ("insert", [i, v]) => {
                let i: i64 = i
                    .as_py(py)
                    .ok_or_else(|| TraceError::unsupported("list.insert index"))?
                    .extract()?;
                let mut b = l.borrow_mut();
                let n = b.len() as i64;
                let i = if i < 0 { (i + n).max(0) } else { i.min(n) };
                b.insert(i as usize, v.clone());
                Ok(Var::none(py))
            }
            ("reverse", []) => {
                l.borrow_mut().reverse();
                Ok(Var::none(py))
            }
            _ => {
                let obj = Var::List(l.clone()).as_py(py).ok_or_else(|| {
                    TraceError::unsupported(format!("list.{name} on a list of tensors"))
                })?;
                if mutating {
                    return Err(TraceError::unsupported(format!("list.{name}")));
                }
                if name == "copy" && args.is_empty() {
                    return Ok(Var::list(l.borrow().clone()));
                }
                // Read-only methods (`index`, `count`) of a list of known values fold.
                let m = obj.getattr(name)?;
                match self.fold(&m, &args, &[])? {
                    Some(r) => Ok(r),
                    None => Err(TraceError::unsupported(format!(
                        "list.{name} with these arguments"
                    ))),
                }
            }
        }
    }

    /// Methods of a set made by the traced code run on its private Python set.
    pub(super) fn set_method(
        &mut self,
        set: Py<PyAny>,
        name: &str,
        args: Vec<Var>,
        kwargs: Vec<(String, Var)>,
    ) -> Result<Var, TraceError> {
        let py = self.tx.py;
        let mut vals = Vec::new();
        for a in args {
            // An element (`add`, `discard`, `remove`) is hashed as a set display's is: a
            // frozen dataclass by its fields, an argument guarded, a symbolic int specialized.
            if matches!(name, "add" | "discard" | "remove") {
                vals.push(self.hash_key(&a)?.into_bound(py));
                continue;
            }
            // Sets and other iterables of known values become Python values; an element is
            // hashed by its value (a symbolic int is specialized).
            let a = self.specialize(a)?;
            let v = match a.as_py(py) {
                Some(v) => v,
                None => match a.items(py) {
                    Some(items) => {
                        let t = self.tx.new_set(&items)?;
                        t.as_py(py).expect("a set has a value")
                    }
                    None => {
                        return Err(TraceError::unsupported(format!(
                            "set.{name} with a tensor argument"
                        )))
                    }
                },
            };
            vals.push(v);
        }
        if !kwargs.is_empty() {
            return Err(TraceError::unsupported(format!("set.{name} with keywords")));
        }
        let reads = [
            "copy",
            "difference",
            "intersection",
            "isdisjoint",
            "issubset",
            "issuperset",
            "symmetric_difference",
            "union",
        ];
        if !reads.contains(&name) && !name.starts_with("__") {
            self.tx.note_set_mutation(&set);
        }
        let r = set
            .bind(py)
            .call_method1(name, pyo3::types::PyTuple::new(py, vals)?)
            .map_err(|e| TraceError::UserError {
                call: format!("set.{name}"),
                message: e.to_string(),
                error: e,
            })?;
        self.tx.wrap(r, None)
    }

    /// Read-only methods of a dict subclass object read from the frame (a ModelOutput, a
    /// registry): answered from its keys (guarded) and its items (each read through its source),
    /// so the object's identity is not needed.
    pub(super) fn py_dict_method(
        &mut self,
        o: Py<PyAny>,
        src: crate::source::Source,
        name: &str,
        args: Vec<Var>,
    ) -> Result<Var, TraceError> {
        let py = self.tx.py;
        let d = o
            .bind(py)
            .cast::<pyo3::types::PyDict>()
            .map_err(PyErr::from)?
            .clone();
        // The keys in the order the object's own `keys()` gives (an OrderedDict's may differ
        // from the underlying dict's after `move_to_end`); the guard pins the dict's keys.
        let keys: Vec<Bound<'_, PyAny>> = d
            .call_method0("keys")?
            .try_iter()?
            .collect::<PyResult<_>>()?;
        self.tx.guards.add(
            py,
            &src,
            crate::guards::Check::DictKeys(keys.iter().map(|k| k.clone().unbind()).collect()),
        );
        let value = |s: &mut Self, k: &Bound<'_, PyAny>| -> Result<Var, TraceError> {
            let v = d
                .get_item(k)?
                .ok_or_else(|| TraceError::internal("a key vanished"))?;
            s.tx.wrap(v, Some(src.item(k.clone())))
        };
        let key_var = |k: &Bound<'_, PyAny>| Var::Py(k.clone().unbind(), None);
        match (name, args.as_slice()) {
            ("keys", []) => Ok(Var::list(keys.iter().map(key_var).collect())),
            ("values", []) => {
                let mut out = Vec::new();
                for k in &keys {
                    out.push(value(self, k)?);
                }
                Ok(Var::list(out))
            }
            ("items", []) => {
                let mut out = Vec::new();
                for k in &keys {
                    out.push(Var::Tuple(vec![key_var(k), value(self, k)?].into()));
                }
                Ok(Var::list(out))
            }
            ("__len__", []) => Ok(Var::py_const(py, keys.len() as i64)),
            ("__contains__", [k]) | ("get", [k]) | ("get", [k, _]) | ("__getitem__", [k]) => {
                let k = self.hash_key(k)?.into_bound(py);
                let found = keys.iter().find(|k2| k2.eq(&k).unwrap_or(false)).cloned();
                match (name, found) {
                    ("__contains__", f) => Ok(Var::py_const(py, f.is_some())),
                    (_, Some(k)) => value(self, &k),
                    ("get", None) => Ok(args.get(1).cloned().unwrap_or_else(|| Var::none(py))),
                    _ => Err(TraceError::unsupported(
                        "a missing key (the frame raises KeyError)",
                    )),
                }
            }
            _ => Err(TraceError::unsupported(format!(
                "dict.{name} with these arguments"
            ))),
        }
    }
}
