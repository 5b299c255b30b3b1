//! Instances of plain user classes made by the traced code (TorchDynamo's tracked user objects).
//! `cls(...)` makes a `Var::Object` whose `__dict__` lives in the tracker and inlines `__init__`
//! on it; attribute reads and writes and method calls work on the tracker. An object that escapes
//! (returned, stored somewhere that outlives the frame, live at a graph break) is rebuilt after
//! the graph by `reconstruct/mod.rs`: `object.__new__(cls)`, then its `__dict__` filled in order.
//!
//! Only classes whose instances are nothing but a `__dict__` qualify: metaclass `type` (or
//! `abc.ABCMeta` with no abstract method left), every
//! class in the MRO a Python class without `__slots__`, `object.__new__`, and attribute access
//! that runs no code (`object`'s `__getattribute__`/`__setattr__`/`__delattr__`, or a frozen
//! dataclass, whose `__init__` writes through `object.__setattr__`). Anything else still breaks.

use std::rc::Rc;

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyType};

use crate::error::TraceError;
use crate::source::Source;

use super::vars::{ObjectVar, Var};
use super::Frame;

/// Py_TPFLAGS_HEAPTYPE: a class made by a `class` statement.
const HEAPTYPE: u64 = 1 << 9;

/// Whether instances of `cls` are plain `__dict__` objects the tracer can make and rebuild.
fn is_plain_class(py: Python<'_>, cls: &Bound<'_, PyAny>) -> PyResult<bool> {
    let Ok(ty) = cls.cast::<PyType>() else {
        return Ok(false);
    };
    let type_ty = py.get_type::<PyType>();
    // `abc.ABCMeta` makes instances as `type` does once no abstract method is left.
    let abc_meta = py.import("abc")?.getattr("ABCMeta")?;
    let meta_ok = |c: &Bound<'_, PyAny>| c.get_type().is(&type_ty) || c.get_type().is(&abc_meta);
    if !meta_ok(cls) {
        return Ok(false);
    }
    if let Ok(abstract_methods) = cls.getattr("__abstractmethods__") {
        if abstract_methods.len()? != 0 {
            return Ok(false);
        }
    }
    let object = py.import("builtins")?.getattr("object")?;
    let mro = ty.getattr("__mro__")?;
    for c in mro.try_iter()? {
        let c = c?;
        if c.is(&object) {
            continue;
        }
        if !meta_ok(&c) {
            return Ok(false);
        }
        let flags: u64 = c.getattr("__flags__")?.extract()?;
        let d = c.getattr("__dict__")?;
        // An empty `__slots__` (as `abc.ABC` has) adds no storage.
        let slots = match d.get_item("__slots__") {
            Ok(s) => s.len().map_or(true, |n| n != 0),
            Err(_) => false,
        };
        if flags & HEAPTYPE == 0 || slots || d.contains("__del__")? {
            return Ok(false);
        }
    }
    // A Python class whose only builtin base is `object` has `object`'s instance layout.
    let basicsize: usize = ty.getattr("__basicsize__")?.extract()?;
    let plain_size: usize = py
        .eval(c"type('_', (), {}).__basicsize__", None, None)?
        .extract()?;
    let dictoffset: isize = ty.getattr("__dictoffset__")?.extract()?;
    if basicsize != plain_size || dictoffset == 0 {
        return Ok(false);
    }
    let same = |name: &str| -> PyResult<bool> { Ok(ty.getattr(name)?.is(object.getattr(name)?)) };
    // Hooks written in Python are inlined where Python would call them.
    let function = py.import("types")?.getattr("FunctionType")?;
    let python_hook = |name: &str| -> PyResult<bool> { ty.getattr(name)?.is_instance(&function) };
    let frozen = is_frozen_dataclass(cls)?;
    Ok(same("__new__")?
        && same("__getattribute__")?
        && (!ty.hasattr("__getattr__")? || python_hook("__getattr__")?)
        && (((same("__setattr__")? || python_hook("__setattr__")?)
            && (same("__delattr__")? || python_hook("__delattr__")?))
            || frozen))
}

fn is_frozen_dataclass(cls: &Bound<'_, PyAny>) -> PyResult<bool> {
    match cls.getattr("__dataclass_params__") {
        Ok(p) => p.getattr("frozen")?.is_truthy(),
        Err(_) => Ok(false),
    }
}

/// The attribute `name` as found in the class's MRO dicts, unbound (`inspect.getattr_static`).
pub(super) fn static_lookup<'py>(
    cls: &Bound<'py, PyAny>,
    name: &str,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    for c in cls.getattr("__mro__")?.try_iter()? {
        let d = c?.getattr("__dict__")?;
        if let Ok(v) = d.get_item(name) {
            return Ok(Some(v));
        }
    }
    Ok(None)
}

/// Where `name` is stored for a class at `cls_src`: the `__dict__` entry of the first class of
/// its MRO that holds it (`G['C'].__mro__[1].__dict__['p']`). A descriptor read through the
/// class (`G['C'].p`) runs its `__get__`, which may make a new object on every read
/// (`torch.distributions`' `lazy_property`), so its identity is guarded where it lives.
fn class_dict_source(
    cls: &Bound<'_, PyAny>,
    cls_src: Option<&Source>,
    name: &str,
) -> PyResult<Option<Source>> {
    let py = cls.py();
    let Some(cls_src) = cls_src else {
        return Ok(None);
    };
    for (i, c) in cls.getattr("__mro__")?.try_iter()?.enumerate() {
        let d = c?.getattr("__dict__")?;
        if d.get_item(name).is_ok() {
            let owner = if i == 0 {
                cls_src.clone()
            } else {
                cls_src
                    .attr(py, "__mro__")
                    .item(pyo3::types::PyInt::new(py, i).into_any())
            };
            let key = pyo3::types::PyString::new(py, name).into_any();
            return Ok(Some(owner.attr(py, "__dict__").item(key)));
        }
    }
    Ok(None)
}

impl Frame<'_, '_> {
    /// `cls(*args, **kwargs)` for a plain user class: a tracked object with `__init__` inlined
    /// on it; `None` if `cls` is not such a class.
    pub(super) fn construct_object(
        &mut self,
        cls: &Bound<'_, PyAny>,
        src: Option<&Source>,
        args: &[Var],
        kwargs: &[(String, Var)],
    ) -> Result<Option<Var>, TraceError> {
        let py = self.tx.py;
        if !is_plain_class(py, cls)? {
            return Ok(None);
        }
        let object = py.import("builtins")?.getattr("object")?;
        let init = cls.getattr("__init__")?;
        let obj = Var::Object(Rc::new(ObjectVar::new(cls.clone().unbind(), src.cloned())));
        if init.is(object.getattr("__init__")?) {
            if !args.is_empty() || !kwargs.is_empty() {
                return Err(TraceError::unsupported(format!(
                    "{}() takes no arguments (the call raises TypeError)",
                    obj.type_name(py)
                )));
            }
            return Ok(Some(obj));
        }
        let types = py.import("types")?;
        let init = cls.getattr("__init__")?.unbind().into_bound(py);
        // TorchDynamo's wrapper of `nn.Module.__init__`: the original runs (see
        // `dynamo_patched_init`), reached through no source.
        let (init, init_src) = match super::pyobj::dynamo_patched_init(&init) {
            Some(original) => (original, None),
            None => (init, src.map(|s| s.attr(py, "__init__"))),
        };
        if !init.is_instance(&types.getattr("FunctionType")?)? || !self.inlinable(&init)? {
            return Ok(None);
        }
        let f = self.function_of(&init, init_src.as_ref())?;
        let mut all = vec![obj.clone()];
        all.extend(args.iter().cloned());
        let r = self.inline_call(&f, all, kwargs.to_vec())?;
        if !matches!(&r, Var::Py(o, _) if o.is_none(py)) {
            return Err(TraceError::unsupported(
                "__init__ returned a value (the call raises TypeError)",
            ));
        }
        Ok(Some(obj))
    }

    /// `obj.name` on a tracked object: data descriptors of the class first, then the instance
    /// dict, then the class (methods bind to the tracked object).
    pub(super) fn object_attr(&mut self, o: &Rc<ObjectVar>, name: &str) -> Result<Var, TraceError> {
        let py = self.tx.py;
        let this = Var::Object(o.clone());
        let cls = o.cls.bind(py).clone();
        if name == "__class__" {
            return Ok(Var::Py(o.cls.clone_ref(py), o.cls_src.clone()));
        }
        let raw = static_lookup(&cls, name)?;
        // The instance dict itself, through `object`'s own `__dict__` descriptor: the tracker's
        // dict, so reads and writes through it are the object's attributes.
        if name == "__dict__"
            && raw
                .as_ref()
                .is_some_and(|r| r.get_type().name().is_ok_and(|n| n == "getset_descriptor"))
        {
            return Ok(Var::Dict(o.attrs.clone()));
        }
        let builtins = py.import("builtins")?;
        let types = py.import("types")?;
        if let Some(raw) = &raw {
            if raw.is_instance(&builtins.getattr("property")?)? {
                let fget = raw.getattr("fget")?;
                if fget.is_none() {
                    return Err(TraceError::unsupported(format!(
                        "reading the write-only property '{name}'"
                    )));
                }
                let s = o
                    .cls_src
                    .as_ref()
                    .map(|s| s.attr(py, name).attr(py, "fget"));
                let fget = self.tx.wrap(fget, s)?;
                return self.call(fget, vec![this], vec![]);
            }
            if raw.get_type().hasattr("__set__")? || raw.get_type().hasattr("__delete__")? {
                if let Some(v) = self.descriptor_get(o, name, raw)? {
                    return Ok(v);
                }
                return Err(TraceError::unsupported(format!(
                    "reading attribute '{name}' (a descriptor) of a {}",
                    this.type_name(py)
                )));
            }
        }
        if let Some(v) = o.attr(py, name) {
            return Ok(v);
        }
        if raw.is_none() {
            if let Some(hook) = static_lookup(&cls, "__getattr__")? {
                // Python calls `__getattr__` when the normal lookup fails.
                let s = o.cls_src.as_ref().map(|s| s.attr(py, "__getattr__"));
                let hook = self.tx.wrap(hook, s)?;
                return self.call(hook, vec![this, Var::py_const(py, name)], vec![]);
            }
        }
        let Some(raw) = raw else {
            let msg = format!("'{}' object has no attribute '{name}'", this.type_name(py));
            let fallback =
                TraceError::unsupported(format!("{msg} (the frame raises AttributeError)"));
            return Err(self.raise_new("AttributeError", (msg,), fallback));
        };
        // Methods are guarded where the class hands them out (`cls.name`), so replacing one
        // after the trace is seen.
        let class_src = o.cls_src.as_ref().map(|s| s.attr(py, name));
        if raw.is_instance(&types.getattr("FunctionType")?)? {
            let func = self.tx.wrap(raw, class_src)?;
            return Ok(Var::BoundMethod {
                func: Box::new(func),
                self_: Box::new(this),
            });
        }
        if raw.is_instance(&builtins.getattr("staticmethod")?)? {
            return self.tx.wrap(raw.getattr("__func__")?, class_src);
        }
        if raw.is_instance(&builtins.getattr("classmethod")?)? {
            let s = class_src.map(|s| s.attr(py, "__func__"));
            let func = self.tx.wrap(raw.getattr("__func__")?, s)?;
            return Ok(Var::BoundMethod {
                func: Box::new(func),
                self_: Box::new(Var::Py(o.cls.clone_ref(py), o.cls_src.clone())),
            });
        }
        if raw.is_instance(&py.import("functools")?.getattr("cached_property")?)? {
            // `functools.cached_property`: computed on the first read and stored in the
            // instance `__dict__` (under `attrname`), which later reads find first.
            let func = self
                .tx
                .wrap(raw.getattr("func")?, class_src.map(|s| s.attr(py, "func")))?;
            let v = self.call(func, vec![this], vec![])?;
            let key: String = raw
                .getattr("attrname")?
                .extract()
                .unwrap_or_else(|_| name.to_string());
            o.set_attr(py, &key, v.clone());
            return Ok(v);
        }
        if raw.get_type().hasattr("__get__")? {
            if let Some(v) = self.descriptor_get(o, name, &raw)? {
                return Ok(v);
            }
            return Err(TraceError::unsupported(format!(
                "reading attribute '{name}' (a descriptor) of a {}",
                this.type_name(py)
            )));
        }
        // A plain class attribute, read through the class so it is guarded like one.
        let v = cls.getattr(name)?;
        self.tx.wrap(v, class_src)
    }

    /// `obj.name = v` on a tracked object: an entry of its tracked `__dict__`.
    pub(super) fn object_setattr(
        &mut self,
        o: &Rc<ObjectVar>,
        name: &str,
        v: Var,
        via_object: bool,
    ) -> Result<(), TraceError> {
        let py = self.tx.py;
        let cls = o.cls.bind(py).clone();
        let object = py.import("builtins")?.getattr("object")?;
        let setattr = cls.getattr("__setattr__")?;
        if !via_object && !setattr.is(object.getattr("__setattr__")?) {
            let function = py.import("types")?.getattr("FunctionType")?;
            if setattr.is_instance(&function)? {
                // A `__setattr__` override, inlined.
                let s = o.cls_src.as_ref().map(|s| s.attr(py, "__setattr__"));
                let hook = self.tx.wrap(setattr, s)?;
                let args = vec![Var::Object(o.clone()), Var::py_const(py, name), v];
                self.call(hook, args, vec![])?;
                return Ok(());
            }
            return Err(TraceError::unsupported(format!(
                "assigning attribute '{name}' of a {} (its attribute writes run code)",
                Var::Object(o.clone()).type_name(py)
            )));
        }
        if let Some(raw) = static_lookup(&cls, name)? {
            if self.descriptor_set(o, name, &raw, &v)? {
                return Ok(());
            }
            if raw.get_type().hasattr("__set__")? || raw.get_type().hasattr("__delete__")? {
                return Err(TraceError::unsupported(format!(
                    "assigning attribute '{name}' (a descriptor) of a {}",
                    Var::Object(o.clone()).type_name(py)
                )));
            }
        }
        o.set_attr(py, name, v);
        Ok(())
    }

    /// `del obj.name` on a tracked object: a Python `__delattr__` of its class inlined (unless
    /// `via_object`, `object.__delattr__` called by hand), else the entry removed from its
    /// tracked `__dict__` (`AttributeError` where there is none).
    pub(super) fn object_delattr(
        &mut self,
        o: &Rc<ObjectVar>,
        name: &str,
        via_object: bool,
    ) -> Result<(), TraceError> {
        let py = self.tx.py;
        let this = Var::Object(o.clone());
        let object = py.import("builtins")?.getattr("object")?;
        let hook = o.cls.bind(py).getattr("__delattr__")?;
        if !via_object && !hook.is(object.getattr("__delattr__")?) {
            if !hook.is_instance(&py.import("types")?.getattr("FunctionType")?)? {
                return Err(TraceError::unsupported(format!(
                    "deleting attribute '{name}' of a {} (its __delattr__ runs code)",
                    this.type_name(py)
                )));
            }
            let s = o.cls_src.as_ref().map(|s| s.attr(py, "__delattr__"));
            let hook = self.tx.wrap(hook, s)?;
            self.call(hook, vec![this, Var::py_const(py, name)], vec![])?;
            return Ok(());
        }
        if let Some(raw) = static_lookup(o.cls.bind(py), name)? {
            if raw.get_type().hasattr("__set__")? || raw.get_type().hasattr("__delete__")? {
                return Err(TraceError::unsupported(format!(
                    "deleting attribute '{name}' (a descriptor) of a {}",
                    this.type_name(py)
                )));
            }
        }
        if o.remove_attr(py, name) {
            return Ok(());
        }
        let msg = format!("'{}' object has no attribute '{name}'", this.type_name(py));
        let fallback = TraceError::unsupported(format!("{msg} (the frame raises AttributeError)"));
        Err(self.raise_new("AttributeError", (msg,), fallback))
    }

    /// `operator.<name>(obj, *rest)` with a tracked object first: its class's dunder method,
    /// inlined (an in-place operator falls back to the plain one, as Python does). Reflected
    /// operators and `NotImplemented` results break.
    pub(super) fn object_operator(
        &mut self,
        o: &Rc<ObjectVar>,
        name: &str,
        rest: Vec<Var>,
    ) -> Result<Var, TraceError> {
        let py = self.tx.py;
        let base = name.trim_end_matches('_');
        let mut candidates = vec![format!("__{base}__")];
        if let Some(plain) = base.strip_prefix('i').filter(|p| {
            [
                "add", "and", "floordiv", "lshift", "matmul", "mul", "mod", "or", "pow",
            ]
            .contains(p)
                || ["rshift", "sub", "truediv", "xor"].contains(p)
        }) {
            candidates.push(format!("__{plain}__"));
        }
        let types = py.import("types")?;
        let function = types.getattr("FunctionType")?;
        // `!=` with `object`'s `__ne__` and a Python `__eq__` (a dataclass's): the inverted
        // truth of `__eq__`, as `object.__ne__` answers.
        if base == "ne" {
            let own_ne = static_lookup(o.cls.bind(py), "__ne__")?
                .is_some_and(|raw| raw.is_instance(&function).unwrap_or(false));
            let eq = static_lookup(o.cls.bind(py), "__eq__")?
                .filter(|raw| raw.is_instance(&function).unwrap_or(false));
            if !own_ne && eq.is_some() {
                let m = self.object_attr(o, "__eq__")?;
                let r = self.call(m, rest.clone(), vec![])?;
                let r = self.equality_fallback(o, "eq", rest, r)?;
                let t = self.truth(&r)?;
                return Ok(Var::py_const(py, !t));
            }
        }
        for dunder in candidates {
            let Some(raw) = static_lookup(o.cls.bind(py), &dunder)? else {
                continue;
            };
            // Slots of `object` (`__eq__`, `__ne__`, ...) and other builtins: left to Python.
            if !raw.is_instance(&function)? {
                break;
            }
            let m = self.object_attr(o, &dunder)?;
            let r = self.call(m, rest.clone(), vec![])?;
            let r = if matches!(base, "eq" | "ne") {
                self.equality_fallback(o, base, rest, r)?
            } else {
                r
            };
            if matches!(&r, Var::Py(v, _) if v.bind(py).is(py.NotImplemented().bind(py))) {
                return Err(TraceError::unsupported(format!(
                    "{dunder} of a {} returned NotImplemented",
                    Var::Object(o.clone()).type_name(py)
                )));
            }
            return Ok(r);
        }
        Err(TraceError::unsupported(format!(
            "operator.{name} on a {}",
            Var::Object(o.clone()).type_name(py)
        )))
    }

    /// `a == b` / `a != b` (`name`) of tracked objects whose own method answered `r`: where
    /// that is `NotImplemented`, the other object's reflected method (`b.__eq__(a)`), and where
    /// that declines too, identity, as CPython's rich comparison falls back (a frozen
    /// dataclass compared with an instance of another class). Other answers pass through.
    fn equality_fallback(
        &mut self,
        o: &Rc<ObjectVar>,
        name: &str,
        rest: Vec<Var>,
        r: Var,
    ) -> Result<Var, TraceError> {
        let py = self.tx.py;
        let declined =
            |r: &Var| matches!(r, Var::Py(v, _) if v.bind(py).is(py.NotImplemented().bind(py)));
        if !declined(&r) {
            return Ok(r);
        }
        let [Var::Object(other)] = rest.as_slice() else {
            return Ok(r);
        };
        let other = other.clone();
        let dunder = format!("__{name}__");
        let function = py.import("types")?.getattr("FunctionType")?;
        if static_lookup(other.cls.bind(py), &dunder)?
            .is_some_and(|raw| raw.is_instance(&function).unwrap_or(false))
        {
            let m = self.object_attr(&other, &dunder)?;
            let r = self.call(m, vec![Var::Object(o.clone())], vec![])?;
            if !declined(&r) {
                return Ok(r);
            }
        }
        let same = Rc::ptr_eq(o, &other);
        Ok(Var::py_const(py, same == (name == "eq")))
    }

    /// `obj.name` through a descriptor of the class whose getter is Python (a property's
    /// `fget` is handled by the caller): `type(d).__get__(d, obj, cls)`, inlined.
    fn descriptor_get(
        &mut self,
        o: &Rc<ObjectVar>,
        name: &str,
        raw: &Bound<'_, PyAny>,
    ) -> Result<Option<Var>, TraceError> {
        let py = self.tx.py;
        let function = py.import("types")?.getattr("FunctionType")?;
        let Ok(get) = raw.get_type().getattr("__get__") else {
            return Ok(None);
        };
        if !get.is_instance(&function)? {
            return Ok(None);
        }
        let s = class_dict_source(o.cls.bind(py), o.cls_src.as_ref(), name)?;
        let d = self.tx.wrap(raw.clone().unbind().into_bound(py), s)?;
        let get = self.tx.wrap(get.unbind().into_bound(py), None)?;
        let cls = Var::Py(o.cls.clone_ref(py), o.cls_src.clone());
        self.call(get, vec![d, Var::Object(o.clone()), cls], vec![])
            .map(Some)
    }

    /// `obj.name = v` through a property with a setter or a descriptor whose `__set__` is
    /// Python: inlined; `false` if `raw` is neither.
    fn descriptor_set(
        &mut self,
        o: &Rc<ObjectVar>,
        name: &str,
        raw: &Bound<'_, PyAny>,
        v: &Var,
    ) -> Result<bool, TraceError> {
        let py = self.tx.py;
        let function = py.import("types")?.getattr("FunctionType")?;
        let this = Var::Object(o.clone());
        let s = o.cls_src.as_ref().map(|s| s.attr(py, name));
        if raw.is_instance(&py.import("builtins")?.getattr("property")?)? {
            let fset = raw.getattr("fset")?;
            if fset.is_none() {
                return Ok(false);
            }
            let fset = self
                .tx
                .wrap(fset.unbind().into_bound(py), s.map(|s| s.attr(py, "fset")))?;
            self.call(fset, vec![this, v.clone()], vec![])?;
            return Ok(true);
        }
        let Ok(set) = raw.get_type().getattr("__set__") else {
            return Ok(false);
        };
        if !set.is_instance(&function)? {
            return Ok(false);
        }
        let d = self.tx.wrap(raw.clone().unbind().into_bound(py), s)?;
        let set = self.tx.wrap(set.unbind().into_bound(py), None)?;
        self.call(set, vec![d, this, v.clone()], vec![])?;
        Ok(true)
    }

    /// `lhs <op> obj` where only the tracked object on the right defines the operator: its
    /// reflected dunder (`__radd__`, ...), inlined; `None` when it has none.
    pub(super) fn object_reflected(
        &mut self,
        o: &Rc<ObjectVar>,
        name: &str,
        lhs: Var,
    ) -> Result<Option<Var>, TraceError> {
        let py = self.tx.py;
        const REFLECTED: &[&str] = &[
            "add", "sub", "mul", "matmul", "truediv", "floordiv", "mod", "pow", "lshift", "rshift",
            "and", "xor", "or",
        ];
        let base = name.trim_end_matches('_');
        let base = match base.strip_prefix('i') {
            Some(p) if REFLECTED.contains(&p) => p,
            _ => base,
        };
        if !REFLECTED.contains(&base) {
            return Ok(None);
        }
        let dunder = format!("__r{base}__");
        let function = py.import("types")?.getattr("FunctionType")?;
        match static_lookup(o.cls.bind(py), &dunder)? {
            Some(raw) if raw.is_instance(&function)? => {}
            _ => return Ok(None),
        }
        let m = self.object_attr(o, &dunder)?;
        let r = self.call(m, vec![lhs], vec![])?;
        if matches!(&r, Var::Py(v, _) if v.bind(py).is(py.NotImplemented().bind(py))) {
            return Err(TraceError::unsupported(format!(
                "{dunder} of a {} returned NotImplemented",
                Var::Object(o.clone()).type_name(py)
            )));
        }
        Ok(Some(r))
    }

    /// Whether the class of `o` defines `__<name>__` as a Python function (a dunder that
    /// `object_operator` inlines).
    pub(super) fn object_has_dunder(
        &mut self,
        o: &Rc<ObjectVar>,
        name: &str,
    ) -> Result<bool, TraceError> {
        let py = self.tx.py;
        let function = py.import("types")?.getattr("FunctionType")?;
        Ok(
            match static_lookup(o.cls.bind(py), &format!("__{name}__"))? {
                Some(raw) => raw.is_instance(&function)?,
                None => false,
            },
        )
    }

    /// `bool(obj)`: its `__bool__`, else `__len__() != 0`, else true, as Python decides.
    pub(super) fn object_truth(&mut self, o: &Rc<ObjectVar>) -> Result<bool, TraceError> {
        let py = self.tx.py;
        let cls = o.cls.bind(py).clone();
        let r = if static_lookup(&cls, "__bool__")?.is_some() {
            self.object_operator(o, "bool", vec![])?
        } else if static_lookup(&cls, "__len__")?.is_some() {
            let n = self.object_operator(o, "len", vec![])?;
            let n: i64 = n
                .as_py(py)
                .and_then(|n| n.extract().ok())
                .ok_or_else(|| TraceError::unsupported("__len__ returned a value not an int"))?;
            Var::py_const(py, n != 0)
        } else {
            return Ok(true);
        };
        match r.as_py(py).and_then(|b| b.extract::<bool>().ok()) {
            Some(b) => Ok(b),
            None => Err(TraceError::unsupported(format!(
                "the truth of a {} that is not a bool",
                Var::Object(o.clone()).type_name(py)
            ))),
        }
    }

    /// `object.__setattr__(obj, name, v)` on a tracked object (a frozen dataclass's `__init__`).
    pub(super) fn object_setattr_call(
        &mut self,
        f: &Bound<'_, PyAny>,
        args: &[Var],
    ) -> Result<Option<Var>, TraceError> {
        let py = self.tx.py;
        let builtins = py.import("builtins")?;
        // `object.__init__(obj)` (the end of a `super().__init__()` chain) does nothing when given
        // no further arguments.
        if let [Var::Object(_)] = args {
            if f.is(builtins.getattr("object")?.getattr("__init__")?) {
                return Ok(Some(Var::none(py)));
            }
        }
        // `object.__new__(C)` / `C.__new__(C)` for a plain class: a new tracked object whose
        // `__init__` is not run (`torch.distributions`' `_get_checked_instance`).
        if let [cls] = args {
            if f.is(builtins.getattr("object")?.getattr("__new__")?) {
                if let Some(c) = cls.as_py(py) {
                    if is_plain_class(py, &c)? {
                        let cls_src = match cls {
                            Var::Py(_, s) => s.clone(),
                            _ => None,
                        };
                        return Ok(Some(Var::Object(Rc::new(ObjectVar::new(
                            c.unbind(),
                            cls_src,
                        )))));
                    }
                }
            }
        }
        // `object.__delattr__(obj, name)` (the end of `nn.Module.__delattr__`): the entry
        // removed from the tracked `__dict__`.
        if let [Var::Object(o), name] = args {
            if f.is(builtins.getattr("object")?.getattr("__delattr__")?) {
                if let Some(name) = name.as_py(py).and_then(|n| n.extract::<String>().ok()) {
                    self.object_delattr(o, &name, true)?;
                    return Ok(Some(Var::none(py)));
                }
            }
        }
        // `setattr(obj, name, v)` is `obj.name = v`, hooks included.
        let via_object = f.is(builtins.getattr("object")?.getattr("__setattr__")?);
        if !via_object && !f.is(builtins.getattr("setattr")?) {
            return Ok(None);
        }
        let [Var::Object(o), name, v] = args else {
            return Ok(None);
        };
        let Some(name) = name.as_py(py).and_then(|n| n.extract::<String>().ok()) else {
            return Ok(None);
        };
        self.object_setattr(o, &name, v.clone(), via_object)?;
        Ok(Some(Var::none(py)))
    }
}

/// Whether `hasattr(obj, name)` holds for a tracked object; `None` when finding out runs code
/// (a property or other data descriptor, whose getter may raise `AttributeError`).
pub(crate) fn object_has_attr(py: Python<'_>, o: &ObjectVar, name: &str) -> PyResult<Option<bool>> {
    let raw = static_lookup(o.cls.bind(py), name)?;
    if let Some(raw) = &raw {
        if raw.get_type().hasattr("__set__")? || raw.get_type().hasattr("__delete__")? {
            return Ok(None);
        }
    }
    let found = raw.is_some() || o.has_attr(py, name);
    // A miss goes to `__getattr__`, which runs code.
    if !found && name != "__class__" && static_lookup(o.cls.bind(py), "__getattr__")?.is_some() {
        return Ok(None);
    }
    Ok(Some(
        name == "__class__" || raw.is_some() || o.has_attr(py, name),
    ))
}

/// Whether reading `name` from `o` misses the normal lookup and runs the class's Python
/// `__getattr__` (so `hasattr` runs it, and only an `AttributeError` answers false).
pub(crate) fn object_attr_misses_to_getattr(
    py: Python<'_>,
    o: &ObjectVar,
    name: &str,
) -> PyResult<bool> {
    let cls = o.cls.bind(py);
    Ok(name != "__class__"
        && static_lookup(cls, name)?.is_none()
        && !o.has_attr(py, name)
        && static_lookup(cls, "__getattr__")?.is_some())
}

/// The function the rebuilt object's `__dict__` is filled by: `fill(obj, names, values)`.
pub(crate) fn fill_function(py: Python<'_>) -> PyResult<Py<PyAny>> {
    let ns = PyDict::new(py);
    py.run(
        c"def fill(obj, names, values):\n    obj.__dict__.update(zip(names, values))\n    return obj\n",
        Some(&ns),
        None,
    )?;
    Ok(ns
        .get_item("fill")?
        .ok_or_else(|| pyo3::exceptions::PyRuntimeError::new_err("fill"))?
        .unbind())
}
