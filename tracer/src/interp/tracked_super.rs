//! `super(cls, obj).name` where `obj` is a tracked user object (`Var::Object`, made by the
//! traced code, so no real instance exists to ask): the attribute is looked up statically in
//! the MRO of the object's class after `cls`, and Python functions bind to the tracker, so a
//! subclass's `__init__` calling `super().__init__(...)` (transformers' `DynamicCache` into
//! `Cache`) is inlined on the same object.

use std::rc::Rc;

use pyo3::prelude::*;

use crate::error::TraceError;

use super::vars::{ObjectVar, Var};
use super::Frame;

impl Frame<'_, '_> {
    /// The attribute `name` of `super(cls, o)`, or an unsupported error naming what was found.
    pub(super) fn tracked_super_attr(
        &mut self,
        cls: &Bound<'_, PyAny>,
        o: &Rc<ObjectVar>,
        name: &str,
    ) -> Result<Var, TraceError> {
        let py = self.tx.py;
        let this = Var::Object(o.clone());
        let mro = o.cls.bind(py).getattr("__mro__")?;
        let mut past = false;
        let mut found = None;
        for c in mro.try_iter()? {
            let c = c?;
            if !past {
                past = c.is(cls);
                continue;
            }
            if let Ok(v) = c.getattr("__dict__")?.get_item(name) {
                found = Some((c, v));
                break;
            }
        }
        let Some((owner, raw)) = found else {
            return Err(TraceError::unsupported(format!(
                "super().{name} of a {}: no such attribute past {} (the frame raises AttributeError)",
                this.type_name(py),
                cls.getattr("__name__")?
            )));
        };
        let builtins = py.import("builtins")?;
        let types = py.import("types")?;
        if raw.is_instance(&types.getattr("FunctionType")?)? {
            // The function is fixed by `cls` and the object's class, both known at trace time.
            return Ok(Var::BoundMethod {
                func: Box::new(Var::Py(raw.unbind(), None)),
                self_: Box::new(this),
            });
        }
        if matches!(name, "__init__" | "__setattr__" | "__delattr__")
            && owner.is(builtins.getattr("object")?)
        {
            // `object.__init__`, `object.__setattr__` and `object.__delattr__` (what
            // `nn.Module.__init__` writes its dicts through), called on the tracker
            // (`object_setattr_call` answers them).
            return Ok(Var::BoundMethod {
                func: Box::new(Var::Py(raw.unbind(), None)),
                self_: Box::new(this),
            });
        }
        if raw.is_instance(&builtins.getattr("staticmethod")?)? {
            return Ok(Var::Py(raw.getattr("__func__")?.unbind(), None));
        }
        if raw.is_instance(&builtins.getattr("classmethod")?)? {
            return Ok(Var::BoundMethod {
                func: Box::new(Var::Py(raw.getattr("__func__")?.unbind(), None)),
                self_: Box::new(Var::Py(o.cls.clone_ref(py), o.cls_src.clone())),
            });
        }
        if raw.is_instance(&builtins.getattr("property")?)? {
            let fget = raw.getattr("fget")?;
            if !fget.is_none() {
                return self.call(Var::Py(fget.unbind(), None), vec![this], vec![]);
            }
        }
        Err(TraceError::unsupported(format!(
            "super().{name} of a {}: a {} of {}",
            this.type_name(py),
            raw.get_type().name()?,
            owner.getattr("__name__")?
        )))
    }
}
