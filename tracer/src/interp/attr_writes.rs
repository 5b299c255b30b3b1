//! Attribute writes the tracer models without breaking the graph, and the reads that must see
//! them: a module member stored back as itself or a buffer rebound, writes through a tracked
//! dict (an instance `__dict__`, `globals()`), and the source of a user class reached without
//! one (`type(self)`), whose attributes are state.

use pyo3::prelude::*;

use crate::error::TraceError;

use super::vars::{self, Var};
use super::{Frame, Tracer};

impl Frame<'_, '_> {
    /// Whether `module.name = v` stores a parameter or buffer back as the very tensor it holds
    /// (`self.steps += 1`, `self.w -= lr * g` under `no_grad`: the in-place op returns the
    /// tensor it mutated). `Module.__setattr__` then puts the same object back in its dict, a
    /// no-op. A tensor is the same object as another when both trace to one node through
    /// in-place results (the tracer makes one node per tensor object).
    pub(super) fn stores_member_back(
        &mut self,
        obj: &Var,
        name: &str,
        v: &Var,
    ) -> Result<bool, TraceError> {
        let py = self.tx.py;
        let (Var::Py(o, _), Var::Tensor(new)) = (obj, v) else {
            return Ok(false);
        };
        let ob = o.bind(py);
        let member = ["_parameters", "_buffers"].iter().any(|d| {
            ob.getattr(*d)
                .and_then(|d| d.contains(name))
                .unwrap_or(false)
        });
        if !member {
            return Ok(false);
        }
        let Var::Tensor(cur) = self.getattr(obj.clone(), name)? else {
            return Ok(false);
        };
        let out = &self.tx.output;
        Ok(out.alias_root(cur.node) == out.alias_root(new.node))
    }

    /// Whether `module.name = v` rebinds a registered buffer to a tensor the graph computes
    /// (`self.acc = self.acc + x`) or to `None`: `Module.__setattr__` then only stores `v` in
    /// `_buffers`. A tensor computed by the graph (its in-place chain starts at a graph op) is
    /// a plain tensor, never a `Parameter`, which `Module.__setattr__` would register instead.
    pub(super) fn rebinds_buffer(
        &mut self,
        ob: &Bound<'_, PyAny>,
        name: &str,
        v: &Var,
    ) -> Result<bool, TraceError> {
        let py = self.tx.py;
        let in_dict = |d: &str| ob.getattr(d).and_then(|d| d.contains(name)).unwrap_or(true);
        if !in_dict("_buffers") || in_dict("_parameters") || in_dict("_modules") {
            return Ok(false);
        }
        Ok(match v {
            Var::Tensor(t) => {
                let out = &self.tx.output;
                matches!(
                    out.graph.node(out.alias_root(t.node)).kind,
                    fx::NodeKind::Call { .. }
                )
            }
            Var::Py(o, _) => o.bind(py).is_none(),
            _ => false,
        })
    }
}

impl Tracer<'_> {
    /// The tracker of a real dict the traced code reached (an instance's `__dict__`, the
    /// globals from `globals()`), if it did.
    pub fn dict_tracker_of(&self, d: &Bound<'_, PyAny>) -> Option<vars::DictItems> {
        self.external_dicts
            .iter()
            .find(|(_, _, o)| o.bind(self.py).is(d))
            .map(|(t, _, _)| t.clone())
    }

    /// `d[name]` as the traced code sees it when it tracks the real dict `d`: writes through
    /// the dict (`self.__dict__[k] = v`, `globals()[k] = v`) must be seen by attribute and
    /// global reads, which otherwise read the real, stale object. `None` where `d` is not
    /// tracked or the name is not in it; a name the traced code deleted breaks the graph.
    pub fn tracked_dict_item(
        &self,
        d: &Bound<'_, PyAny>,
        name: &str,
    ) -> Result<Option<Var>, TraceError> {
        let Some(tracker) = self.dict_tracker_of(d) else {
            return Ok(None);
        };
        let py = self.py;
        let key = pyo3::types::PyString::new(py, name);
        let found = tracker
            .borrow()
            .iter()
            .find(|(k, _)| k.bind(py).eq(&key).unwrap_or(false))
            .map(|(_, v)| v.clone());
        match found {
            Some(v) => Ok(Some(v)),
            None if d.contains(name)? => Err(TraceError::unsupported(format!(
                "reading '{name}' after the traced code deleted it from its dict"
            ))),
            None => Ok(None),
        }
    }
}

/// `sys.modules[cls.__module__].<cls.__qualname__>` as a source for a user class defined at
/// module level (the global must be the class itself); `None` for other objects, nested or
/// local classes, and the classes of builtins and torch, whose attributes are not user state.
pub(super) fn class_source(
    py: Python<'_>,
    ob: &Bound<'_, PyAny>,
) -> PyResult<Option<crate::source::Source>> {
    if !ob.is_instance_of::<pyo3::types::PyType>() {
        return Ok(None);
    }
    let (Ok(module), Ok(qualname)) = (
        ob.getattr("__module__").and_then(|m| m.extract::<String>()),
        ob.getattr("__qualname__")
            .and_then(|q| q.extract::<String>()),
    ) else {
        return Ok(None);
    };
    if module == "builtins"
        || module == "torch"
        || module.starts_with("torch.")
        || qualname.contains('.')
        || qualname.contains('<')
    {
        return Ok(None);
    }
    let Ok(m) = py.import("sys")?.getattr("modules")?.get_item(&module) else {
        return Ok(None);
    };
    match m.getattr(qualname.as_str()) {
        Ok(g) if g.is(ob) => {
            let globals = m.getattr("__dict__")?;
            Ok(Some(crate::source::Source::module_global(
                py, &globals, &qualname,
            )))
        }
        _ => Ok(None),
    }
}
