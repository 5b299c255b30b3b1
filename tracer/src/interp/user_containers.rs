//! Instances of user subclasses of `dict`, `collections.OrderedDict` and `list` made by the
//! traced code (`class Registry(OrderedDict): def __setitem__(...)`). They are tracked as the
//! container they derive from (`Var::Dict` / `Var::List`, with the class in the kind registry
//! beside `Var`), and the class decides which behaviour is the user's:
//! - methods, properties and class attributes found in a user class of the MRO are read from
//!   it (methods bind to the tracker and are inlined), the rest are the builtin's;
//! - `d[k]`, `d[k] = v`, `del d[k]`, attribute writes (`__setattr__`) and attribute misses
//!   (`__getattr__`) go through the class's own override when it has one;
//! - `super().__setitem__(k, v)` (and `__getitem__`, `__delitem__`, `__init__`, any builtin
//!   method) reached past the user classes is the builtin operation on the tracker, never the
//!   override again.
//!
//! - instance attributes (`self.writes = 0`, a dataclass field) live beside the items, in the
//!   container's `__dict__` (`vars::container_attrs`: a tracked dict per tracker; an input's is
//!   its real `__dict__`, written back after the graph); reads look there first, but for data
//!   descriptors of the class (a property's setter runs in the trace);
//! - `==`/`!=` go through a Python `__eq__`/`__ne__` of the class (a dataclass's generated one);
//! - calling the instance runs the class's `__call__` on the tracker (transformers'
//!   `LogitsProcessorList` and `StoppingCriteriaList`, `list` subclasses that call their items).
//!
//! A class that overrides another dunder (`__iter__`, `__len__`, `__contains__`, ...),
//! `__new__`, has a metaclass or slots, or derives from another builtin, is refused at the
//! call that makes the instance: the builtins that read such a container would not see the
//! override. One that escapes is rebuilt after the graph without running user code: the
//! builtin base's `__new__`, then its own item setter, then its `__dict__` filled.

use pyo3::prelude::*;
use pyo3::types::PyType;

use crate::error::TraceError;

use super::pyobj::{container_base, is_user_class};
use super::vars::{
    container_attrs, container_attrs_or_new, dict_kind, dict_set, list_kind, set_dict_kind,
    set_list_kind, DictItems, Var,
};
use super::Frame;

/// The user class of a tracked container, when it was made as one.
fn user_class(py: Python<'_>, obj: &Var) -> Option<Py<PyAny>> {
    let cls = match obj {
        Var::Dict(d) => dict_kind(d).and_then(|(c, f)| f.is_none().then_some(c))?,
        Var::List(l) => list_kind(l)?,
        _ => return None,
    };
    container_base(py, cls.bind(py)).ok().flatten().map(|_| cls)
}

/// The Python function `func` bound to the tracked container `obj` (a method of its class).
fn bound_to(func: Bound<'_, PyAny>, obj: &Var) -> Var {
    Var::BoundMethod {
        func: Box::new(Var::Py(func.unbind(), None)),
        self_: Box::new(obj.clone()),
    }
}

/// Whether `v` is a plain Python function (what a class body's `def` stores): the one kind of
/// class attribute bound to the tracked container rather than read as a value.
fn is_function(v: &Bound<'_, PyAny>) -> PyResult<bool> {
    v.is_instance(&v.py().import("types")?.getattr("FunctionType")?)
}

/// `name` found statically in the MRO of `cls`: the value and whether its owner is a user
/// class (rather than the builtin base or `object`).
fn lookup<'py>(
    py: Python<'py>,
    cls: &Bound<'py, PyAny>,
    name: &str,
) -> PyResult<Option<(Bound<'py, PyAny>, bool)>> {
    for c in cls.getattr("__mro__")?.try_iter()? {
        let c = c?;
        let d = c.getattr("__dict__")?;
        if let Ok(v) = d.get_item(name) {
            return Ok(Some((v, is_user_class(py, &c)?)));
        }
    }
    Ok(None)
}

impl Frame<'_, '_> {
    /// `Cls(*args, **kwargs)` for a user subclass of a builtin container: a tracked container of
    /// that class, its `__init__` inlined (or the builtin's run on the tracker).
    pub(super) fn construct_user_container(
        &mut self,
        f: &Bound<'_, PyAny>,
        args: &[Var],
        kwargs: &[(String, Var)],
    ) -> Result<Option<Var>, TraceError> {
        let py = self.tx.py;
        let Some(base) = container_base(py, f)? else {
            return Ok(None);
        };
        let obj = if base.is(py.import("builtins")?.getattr("list")?) {
            let l = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
            set_list_kind(&l, f.clone().unbind());
            Var::List(l)
        } else {
            let d = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
            set_dict_kind(&d, (f.clone().unbind(), None));
            Var::Dict(d)
        };
        match lookup(py, f, "__init__")? {
            Some((init, true)) => {
                self.call(bound_to(init, &obj), args.to_vec(), kwargs.to_vec())?;
            }
            _ => self.builtin_container_init(&obj, args, kwargs)?,
        }
        Ok(Some(obj))
    }

    /// The builtin base's `__init__` on a tracked container: a dict takes a mapping or pairs
    /// and keywords (an `OrderedDict` stores each through the class's `__setitem__`, as its
    /// `update` does), a list an iterable.
    fn builtin_container_init(
        &mut self,
        obj: &Var,
        args: &[Var],
        kwargs: &[(String, Var)],
    ) -> Result<(), TraceError> {
        let py = self.tx.py;
        match obj {
            Var::List(l) => {
                if !kwargs.is_empty() || args.len() > 1 {
                    return Err(TraceError::unsupported(
                        "list.__init__ with these arguments",
                    ));
                }
                if let Some(it) = args.first() {
                    let items = self.drain(it.clone())?;
                    self.tx.note_list_mutation(l);
                    l.borrow_mut().extend(items);
                }
                Ok(())
            }
            Var::Dict(d) => {
                let pairs = self.dict_init_pairs(args, kwargs)?;
                let ordered = dict_kind(d).is_some_and(|(c, _)| {
                    py.import("collections")
                        .and_then(|m| m.getattr("OrderedDict"))
                        .and_then(|od| {
                            c.bind(py)
                                .cast::<PyType>()
                                .map_err(PyErr::from)?
                                .is_subclass(&od)
                        })
                        .unwrap_or(false)
                });
                for (k, v) in pairs {
                    if ordered {
                        self.store_subscript(obj.clone(), Var::Py(k, None), v)?;
                    } else {
                        self.builtin_dunder(obj, "__setitem__", vec![Var::Py(k, None), v], vec![])?;
                    }
                }
                Ok(())
            }
            _ => Err(TraceError::internal("builtin_container_init")),
        }
    }

    /// The class's own override of `name` for a tracked user container: the method bound to the
    /// tracker. `None` when the class has none (or the value is no user container).
    pub(super) fn user_container_override(
        &mut self,
        obj: &Var,
        name: &str,
    ) -> Result<Option<Var>, TraceError> {
        let py = self.tx.py;
        let Some(cls) = user_class(py, obj) else {
            return Ok(None);
        };
        match lookup(py, cls.bind(py), name)? {
            Some((f, true)) if is_function(&f)? => Ok(Some(bound_to(f, obj))),
            _ => Ok(None),
        }
    }

    /// `obj.name` of a tracked user container: what a user class of its MRO defines (a method
    /// bound to the tracker, a property's value, a class attribute), the builtin's method, or
    /// the class's `__getattr__` for a miss. `None`: a builtin attribute, read as for the base.
    pub(super) fn user_container_attr(
        &mut self,
        obj: &Var,
        name: &str,
    ) -> Result<Option<Var>, TraceError> {
        let py = self.tx.py;
        let Some(cls) = user_class(py, obj) else {
            return Ok(None);
        };
        let cls = cls.bind(py).clone();
        let found = lookup(py, &cls, name)?;
        if name == "__class__" {
            // The class itself (guarded where the instance was made or read).
            return Ok(Some(Var::Py(cls.unbind(), None)));
        }
        if name == "__dict__" {
            return Err(TraceError::unsupported(
                "the instance `__dict__` of a user container made in the frame",
            ));
        }
        // The instance's own attributes come before the class's, but for data descriptors
        // (properties, slots), as `object.__getattribute__` orders them.
        let data_descriptor = match &found {
            Some((v, _)) => is_data_descriptor(v)?,
            None => false,
        };
        if !data_descriptor {
            if let Some(v) = container_attrs(obj).and_then(|a| dict_get_str(py, &a, name)) {
                return Ok(Some(v));
            }
        }
        match found {
            Some((v, true)) => {
                let builtins = py.import("builtins")?;
                if is_function(&v)? {
                    return Ok(Some(bound_to(v, obj)));
                }
                if v.is_instance(&builtins.getattr("property")?)? {
                    let fget = v.getattr("fget")?.unbind();
                    return self
                        .call(Var::Py(fget, None), vec![obj.clone()], vec![])
                        .map(Some);
                }
                if v.get_type().hasattr("__get__")? {
                    // staticmethod/classmethod and other descriptors: as the class binds them.
                    let bound = v.call_method1("__get__", (py.None(), &cls))?;
                    return self.tx.wrap(bound, None).map(Some);
                }
                self.tx.wrap(v, None).map(Some)
            }
            Some((_, false)) => Ok(None),
            None => match self.user_container_override(obj, "__getattr__")? {
                Some(hook) => self
                    .call(hook, vec![Var::py_const(py, name)], vec![])
                    .map(Some),
                None => Err(TraceError::unsupported(format!(
                    "attribute '{name}' of a {} (the frame raises AttributeError)",
                    cls.getattr("__name__")?
                ))),
            },
        }
    }

    /// `obj.name = v` on a tracked user container by `object.__setattr__` (no override, or the
    /// override's `super().__setattr__`): a property's setter runs, another data descriptor
    /// breaks, anything else is an entry of the instance's `__dict__` (`container_attrs`).
    /// `false`: the value is no user container.
    pub(super) fn user_container_setattr(
        &mut self,
        obj: &Var,
        name: &str,
        v: Var,
    ) -> Result<bool, TraceError> {
        let py = self.tx.py;
        let Some(cls) = user_class(py, obj) else {
            return Ok(false);
        };
        if let Some((d, _)) = lookup(py, cls.bind(py), name)? {
            if d.is_instance(&py.import("builtins")?.getattr("property")?)? {
                let fset = d.getattr("fset")?;
                if fset.is_none() {
                    return Err(TraceError::unsupported(format!(
                        "assigning the read-only property '{name}' of a user container"
                    )));
                }
                self.call(Var::Py(fset.unbind(), None), vec![obj.clone(), v], vec![])?;
                return Ok(true);
            }
            if is_data_descriptor(&d)? {
                return Err(TraceError::unsupported(format!(
                    "assigning attribute '{name}' (a descriptor) of a user container"
                )));
            }
        }
        if name == "__dict__" || name == "__class__" {
            return Err(TraceError::unsupported(format!(
                "assigning '{name}' of a user container"
            )));
        }
        let attrs = container_attrs_or_new(obj)
            .ok_or_else(|| TraceError::internal("user_container_setattr"))?;
        // An input's `__dict__` is the real one, written back after the graph.
        self.tx.note_dict_mutation(&attrs);
        dict_set(py, &attrs, name, v);
        Ok(true)
    }

    /// `del obj.name` of an instance attribute of a tracked user container; `false` where
    /// it is none (the caller breaks).
    pub(super) fn user_container_delattr(&mut self, obj: &Var, name: &str) -> bool {
        let py = self.tx.py;
        let Some(attrs) = container_attrs(obj) else {
            return false;
        };
        self.tx.note_dict_mutation(&attrs);
        let mut a = attrs.borrow_mut();
        let before = a.len();
        a.retain(|(k, _)| k.bind(py).extract::<String>().map_or(true, |k| k != name));
        a.len() != before
    }

    /// `a == b` / `a != b` where `a` is a tracked user container whose class overrides
    /// `__eq__` or `__ne__` (a dataclass's generated `__eq__`): the override inlined, `!=`
    /// answered by `__eq__` negated where only `__eq__` is the user's, as `object.__ne__`
    /// does. A user `__eq__` on the right only, or a `NotImplemented` result (Python would go
    /// on to the reflection and the base's equality), breaks. `None`: no such override.
    pub(super) fn user_container_equality(
        &mut self,
        name: &str,
        args: &[Var],
    ) -> Result<Option<Var>, TraceError> {
        let py = self.tx.py;
        let ([lhs, rhs], "eq" | "ne") = (args, name) else {
            return Ok(None);
        };
        let own = |this: &mut Self, v: &Var| -> Result<bool, TraceError> {
            Ok(this.user_container_override(v, "__eq__")?.is_some()
                || this.user_container_override(v, "__ne__")?.is_some())
        };
        let (left, right) = (own(self, lhs)?, own(self, rhs)?);
        if !left && !right {
            return Ok(None);
        }
        let same_class = match (user_class(py, lhs), user_class(py, rhs)) {
            (Some(a), Some(b)) => a.bind(py).is(b.bind(py)),
            _ => false,
        };
        if !left || (right && !same_class) {
            return Err(TraceError::unsupported(
                "== with a user container whose class overrides __eq__ on the right",
            ));
        }
        let (method, negate) = match (name, self.user_container_override(lhs, "__ne__")?) {
            ("ne", Some(m)) => (m, false),
            _ => match self.user_container_override(lhs, "__eq__")? {
                Some(m) => (m, name == "ne"),
                None => return Ok(None),
            },
        };
        let r = self.call(method, vec![rhs.clone()], vec![])?;
        if matches!(&r, Var::Py(v, _) if v.bind(py).is(py.NotImplemented().bind(py))) {
            return Err(TraceError::unsupported(
                "__eq__ of a user container returned NotImplemented",
            ));
        }
        if !negate {
            return Ok(Some(r));
        }
        let t = self.truth(&r)?;
        Ok(Some(Var::py_const(py, !t)))
    }

    /// `super(cls, obj).name` for a tracked user container: past `cls` in the MRO, a user
    /// class's function binds to the tracker; the builtin base's attribute is its builtin
    /// operation on the tracker (never the override again). `None`: not such a container.
    pub(super) fn user_container_super_attr(
        &mut self,
        cls: &Bound<'_, PyAny>,
        obj: &Var,
        name: &str,
    ) -> Result<Option<Var>, TraceError> {
        let py = self.tx.py;
        let Some(own) = user_class(py, obj) else {
            return Ok(None);
        };
        let mut past = false;
        for c in own.bind(py).getattr("__mro__")?.try_iter()? {
            let c = c?;
            if !past {
                past = c.is(cls);
                continue;
            }
            let Ok(v) = c.getattr("__dict__")?.get_item(name) else {
                continue;
            };
            if is_user_class(py, &c)? {
                if is_function(&v)? {
                    return Ok(Some(bound_to(v, obj)));
                }
                return Err(TraceError::unsupported(format!(
                    "super().{name} of a user container, a {}",
                    v.get_type().name()?
                )));
            }
            return Ok(Some(Var::Method {
                recv: Box::new(obj.clone()),
                name: format!("{BUILTIN_PREFIX}{name}"),
            }));
        }
        Err(TraceError::unsupported(format!(
            "super().{name} of a user container: no such attribute"
        )))
    }

    /// `dict.__setitem__(self, k, v)`, `list.append(self, v)`: a builtin container's method
    /// called unbound on a tracked user container is its builtin operation (as `super()` gives).
    pub(super) fn unbound_builtin_on_user_container(
        &mut self,
        f: &Bound<'_, PyAny>,
        args: &[Var],
        kwargs: &[(String, Var)],
    ) -> Result<Option<Var>, TraceError> {
        let py = self.tx.py;
        let Some(first) = args.first() else {
            return Ok(None);
        };
        if user_class(py, first).is_none() {
            return Ok(None);
        }
        let Ok(owner) = f.getattr("__objclass__") else {
            return Ok(None);
        };
        let builtins = py.import("builtins")?;
        let ordered = py.import("collections")?.getattr("OrderedDict")?;
        if !(owner.is(builtins.getattr("dict")?)
            || owner.is(builtins.getattr("list")?)
            || owner.is(&ordered))
        {
            return Ok(None);
        }
        let name: String = f.getattr("__name__")?.extract()?;
        self.builtin_dunder(first, &name, args[1..].to_vec(), kwargs.to_vec())
            .map(Some)
    }

    /// A builtin method of the base reached through `super()` (its name carries
    /// [`BUILTIN_PREFIX`]): the dunders are the raw operations, the rest the builtin methods.
    pub(super) fn builtin_dunder(
        &mut self,
        obj: &Var,
        name: &str,
        args: Vec<Var>,
        kwargs: Vec<(String, Var)>,
    ) -> Result<Var, TraceError> {
        let py = self.tx.py;
        if name == "__init__" {
            self.builtin_container_init(obj, &args, &kwargs)?;
            return Ok(Var::none(py));
        }
        if !kwargs.is_empty() && name.starts_with("__") {
            return Err(TraceError::unsupported(format!(
                "{name} of a user container with keywords"
            )));
        }
        match (name, args.as_slice()) {
            ("__setitem__", [k, v]) => {
                self.store_subscript_raw(obj.clone(), k.clone(), v.clone())?;
                Ok(Var::none(py))
            }
            ("__getitem__", [k]) => self.subscript_raw(obj.clone(), k.clone()),
            // `object`'s attribute slots, reached by `super()` from an override.
            ("__setattr__", [k, v]) => {
                let k = attr_name(py, k)?;
                self.user_container_setattr(obj, &k, v.clone())?;
                Ok(Var::none(py))
            }
            ("__delattr__", [k]) => {
                let k = attr_name(py, k)?;
                if !self.user_container_delattr(obj, &k) {
                    return Err(TraceError::unsupported(format!(
                        "super().__delattr__('{k}') of a user container"
                    )));
                }
                Ok(Var::none(py))
            }
            ("__getattribute__", [k]) => {
                let k = attr_name(py, k)?;
                match self.user_container_attr(obj, &k)? {
                    Some(v) => Ok(v),
                    None => self.getattr(obj.clone(), &k),
                }
            }
            ("__delitem__", [k]) => {
                self.delete_subscript_raw(obj.clone(), k.clone())?;
                Ok(Var::none(py))
            }
            (n, _) if n.starts_with("__") => Err(TraceError::unsupported(format!(
                "super().{n} of a user container"
            ))),
            (n, _) => {
                let m = Var::Method {
                    recv: Box::new(obj.clone()),
                    name: n.to_string(),
                };
                self.call(m, args, kwargs)
            }
        }
    }
}

/// A data descriptor (its type defines `__set__` or `__delete__`): found on the class, it comes
/// before the instance's `__dict__`.
fn is_data_descriptor(v: &Bound<'_, PyAny>) -> PyResult<bool> {
    let ty = v.get_type();
    Ok(ty.hasattr("__set__")? || ty.hasattr("__delete__")?)
}

/// The value of the string key `name` in a tracked dict.
fn dict_get_str(py: Python<'_>, d: &DictItems, name: &str) -> Option<Var> {
    let key = pyo3::types::PyString::new(py, name);
    d.borrow()
        .iter()
        .find(|(k, _)| k.bind(py).eq(&key).unwrap_or(false))
        .map(|(_, v)| v.clone())
}

/// An attribute name passed to `__setattr__`/`__getattribute__`/`__delattr__`: a known str.
fn attr_name(py: Python<'_>, k: &Var) -> Result<String, TraceError> {
    match k {
        Var::Py(o, _) => o
            .bind(py)
            .extract::<String>()
            .map_err(|_| TraceError::unsupported("an attribute name that is not a str")),
        _ => Err(TraceError::unsupported(
            "an attribute name not known when tracing",
        )),
    }
}

/// Marks a `Var::Method` name as the builtin base's method reached through `super()`.
pub(super) const BUILTIN_PREFIX: &str = "\u{0}builtin:";

/// `(cls, base)` of a tracked container made as a user subclass, for its rebuild.
pub(crate) fn rebuild_class(py: Python<'_>, obj: &Var) -> Option<(Py<PyAny>, Py<PyAny>)> {
    super::vars::user_container_class(py, obj)
}
