//! `super()` and the pure-Python library helpers that model code calls on the way to its
//! tensors: `dataclasses.fields`, `inspect.signature`. These are answered at trace time from
//! facts the guards already pin (the type of an object, the identity of a function) instead of
//! tracing the library's own code.

use pyo3::prelude::*;
use pyo3::types::PyType;

use crate::error::TraceError;
use crate::guards::Check;
use crate::interp::vars::Var;
use crate::interp::Frame;
use crate::source::Source;

/// Read-only methods of builtin bases (`dict`, `object`) that `super().name(...)` may run for
/// real on a known object.
const PURE_BUILTIN_METHODS: &[&str] = &[
    "get",
    "__getitem__",
    "__contains__",
    "__len__",
    "keys",
    "values",
    "items",
    "__repr__",
    "__str__",
    "__hash__",
    "__eq__",
];

impl Frame<'_, '_> {
    /// `super()` (zero arguments: the enclosing method's `__class__` cell and first argument,
    /// as the compiler arranges it) or `super(cls, obj)`.
    pub(in crate::interp) fn make_super(&mut self, args: Vec<Var>) -> Result<Var, TraceError> {
        let py = self.tx.py;
        let (cls, obj) = match args.as_slice() {
            [cls, obj] => (cls.clone(), obj.clone()),
            [] => {
                let Some(i) = self.code.localsplus.iter().rposition(|n| n == "__class__") else {
                    return Err(TraceError::unsupported(
                        "super() outside a method (no __class__ cell)",
                    ));
                };
                let first_free = self.code.localsplus.len() - self.code.nfree;
                if i < first_free || self.code.nargs == 0 {
                    return Err(TraceError::unsupported("super() without a first argument"));
                }
                let cls = self.load_deref(i)?;
                let obj = match self.load_local(0)? {
                    Var::Cell(c) => c.borrow().clone().ok_or_else(|| {
                        TraceError::unsupported("super() with an unassigned first argument")
                    })?,
                    v => v,
                };
                (cls, obj)
            }
            _ => return Err(TraceError::unsupported("super() with one argument")),
        };
        let cls = cls
            .as_py(py)
            .filter(|c| c.is_instance_of::<PyType>())
            .ok_or_else(|| TraceError::unsupported("super() of something that is not a class"))?;
        Ok(Var::Super {
            cls: cls.unbind(),
            obj: Box::new(obj),
        })
    }

    /// `super(cls, obj).name`: the attribute found past `cls` in the MRO of `type(obj)`. Python
    /// methods bind to the tracked `obj` (so they are inlined on it); read-only methods of
    /// builtin bases run for real.
    pub(in crate::interp) fn super_attr(
        &mut self,
        cls: Py<PyAny>,
        obj: Var,
        name: &str,
    ) -> Result<Var, TraceError> {
        let py = self.tx.py;
        if let Some(v) = self.user_container_super_attr(cls.bind(py), &obj, name)? {
            return Ok(v);
        }
        if let Var::Object(o) = &obj {
            if name != "__getattribute__" && name != "__getattr__" {
                return self.tracked_super_attr(cls.bind(py), &o.clone(), name);
            }
        }
        let real = obj
            .as_py(py)
            .ok_or_else(|| TraceError::unsupported(format!("super().{name} on a traced value")))?;
        if name == "__getattribute__" || name == "__getattr__" {
            // `super().__getattribute__(n)` reads the attribute without the class's own hook:
            // the plain attribute read of the tracker.
            return Ok(Var::Method {
                recv: Box::new(Var::Super {
                    cls,
                    obj: Box::new(obj),
                }),
                name: name.to_string(),
            });
        }
        let sup = py
            .import("builtins")?
            .getattr("super")?
            .call1((cls.bind(py), &real))?;
        let v = sup.getattr(name).map_err(|e| TraceError::UserError {
            call: format!("super().{name}"),
            message: e.to_string(),
            error: e,
        })?;
        let types = py.import("types")?;
        if v.is_instance(&types.getattr("MethodType")?)?
            && v.getattr("__self__").map(|s| s.is(&real)).unwrap_or(false)
        {
            // The function is fixed by `cls` and the type of `obj`, both guarded.
            let func = v.getattr("__func__")?;
            return Ok(Var::BoundMethod {
                func: Box::new(Var::Py(func.unbind(), None)),
                self_: Box::new(obj),
            });
        }
        let bound_builtin = v.getattr("__self__").map(|s| s.is(&real)).unwrap_or(false);
        if bound_builtin {
            // An exception object the trace made is private to it: `super().__init__(...)` of
            // its builtin base runs on it when called (`made_exception_super_call`).
            // `object.__init_subclass__` (reached from a class's own `__init_subclass__`) does
            // nothing but refuse keywords.
            let object_init_subclass =
                name == "__init_subclass__" && defined_in_object(py, cls.bind(py), &real, name)?;
            if !PURE_BUILTIN_METHODS.contains(&name)
                && !object_init_subclass
                && !self.is_made_exception(&real)
            {
                return Err(TraceError::unsupported(format!(
                    "super().{name} (a builtin method that may mutate the object)"
                )));
            }
            // Called later on the real object (`super_builtin_call`).
            return Ok(Var::Method {
                recv: Box::new(Var::Super {
                    cls,
                    obj: Box::new(obj),
                }),
                name: name.to_string(),
            });
        }
        if v.is_instance(&types.getattr("FunctionType")?)? || v.is_instance_of::<PyType>() {
            return Ok(Var::Py(v.unbind(), None));
        }
        Err(TraceError::unsupported(format!(
            "super().{name}, a {}",
            v.get_type().name()?
        )))
    }

    /// `super().name(*args)` for a read-only method of a builtin base: run for real.
    pub(super) fn super_builtin_call(
        &mut self,
        cls: Py<PyAny>,
        obj: Var,
        name: &str,
        args: &[Var],
        kwargs: &[(String, Var)],
    ) -> Result<Var, TraceError> {
        let py = self.tx.py;
        // Runs on the real object: its identity now matters.
        self.tx.realize_identity(&obj);
        let real = obj
            .as_py(py)
            .ok_or_else(|| TraceError::unsupported(format!("super().{name} on a traced value")))?;
        let m = py
            .import("builtins")?
            .getattr("super")?
            .call1((cls.bind(py), &real))?
            .getattr(name)?;
        self.fold(&m, args, kwargs)?
            .ok_or_else(|| TraceError::unsupported(format!("super().{name} with these arguments")))
    }

    /// `super().__getattribute__(name)` called: the attribute read without the overriding hook.
    pub(super) fn super_getattribute(&mut self, obj: Var, args: &[Var]) -> Result<Var, TraceError> {
        let py = self.tx.py;
        let [name] = args else {
            return Err(TraceError::unsupported(
                "super().__getattribute__ arguments",
            ));
        };
        let name: String = name
            .as_py(py)
            .and_then(|n| n.extract().ok())
            .ok_or_else(|| {
                TraceError::unsupported("super().__getattribute__ of a computed name")
            })?;
        self.getattr(obj, &name)
    }

    /// Library helpers answered at trace time; `None` when `f` is none of them.
    pub(super) fn library_call(
        &mut self,
        f: &Bound<'_, PyAny>,
        module: &str,
        name: &str,
        args: &[Var],
        kwargs: &[(String, Var)],
    ) -> Result<Option<Var>, TraceError> {
        let py = self.tx.py;
        match (module, name, args) {
            ("dataclasses", "fields" | "is_dataclass", [obj]) if kwargs.is_empty() => {
                // Both depend only on the class: a type guard on an instance is enough.
                let target = match obj {
                    Var::Py(o, src) => {
                        let o = o.bind(py).clone();
                        if let Some(s) = src {
                            if !o.is_instance_of::<PyType>() {
                                self.tx
                                    .guards
                                    .add(py, s, Check::Type(o.get_type().unbind()));
                            }
                        }
                        o
                    }
                    Var::Object(o) => o.cls.bind(py).clone(),
                    // A user container made in the frame (a dataclass over `OrderedDict`).
                    other if crate::interp::user_container_class(py, other).is_some() => {
                        crate::interp::user_container_class(py, other)
                            .map(|(cls, _)| cls.bind(py).clone())
                            .ok_or_else(|| TraceError::internal("user container class"))?
                    }
                    other => match other.as_py(py) {
                        Some(o) => o,
                        None => return Ok(None),
                    },
                };
                let cls = if target.is_instance_of::<PyType>() {
                    target
                } else {
                    target.get_type().into_any()
                };
                let r = f.call1((cls,)).map_err(|e| TraceError::UserError {
                    call: format!("dataclasses.{name}"),
                    message: e.to_string(),
                    error: e,
                })?;
                Ok(Some(self.tx.wrap(r, None)?))
            }
            // `typing.get_origin(List[int])`, `get_args(...)`: pure functions of a type
            // object (a constant: annotations read in `forward` to pick a code path).
            ("typing", "get_origin" | "get_args", [t]) if kwargs.is_empty() => {
                let Some(t) = t.as_py(py) else {
                    return Ok(None);
                };
                let r = f.call1((t,)).map_err(|e| TraceError::UserError {
                    call: format!("typing.{name}"),
                    message: e.to_string(),
                    error: e,
                })?;
                Ok(Some(Var::Py(r.unbind(), None)))
            }
            ("inspect", "signature", [func]) => {
                // A signature depends on the function object (guarded by identity where it was
                // read) and its `__signature__`/`__wrapped__`, fixed once defined.
                let func = match func {
                    // A method bound to a tracked object (`inspect.signature(proc.__call__)` in
                    // transformers' `LogitsProcessorList`): the signature never depends on the
                    // receiver, so CPython's answer for the function bound to a stand-in object
                    // is the answer (its first parameter dropped).
                    Var::BoundMethod { func, .. } => {
                        let Some(f) = func.as_py(py) else {
                            return Ok(None);
                        };
                        let stand_in = py.import("builtins")?.getattr("object")?.call0()?;
                        py.import("types")?
                            .getattr("MethodType")?
                            .call1((f, stand_in))?
                    }
                    _ => match func.as_py(py) {
                        Some(f) => f,
                        None => return Ok(None),
                    },
                };
                let r = f.call1((func,)).map_err(|e| TraceError::UserError {
                    call: "inspect.signature".into(),
                    message: e.to_string(),
                    error: e,
                })?;
                Ok(Some(Var::Py(r.unbind(), None)))
            }
            ("dataclasses", "replace", [obj]) => self.dataclass_replace(obj, kwargs),
            ("dataclasses", "asdict" | "astuple", [obj]) if kwargs.is_empty() => {
                self.dataclass_items(obj, name == "astuple")
            }
            ("functools" | "_functools", "reduce", [func, seq, ..]) if kwargs.is_empty() => {
                let Some(items) = seq.items(py) else {
                    return Ok(None);
                };
                let mut items = items.into_iter();
                let mut acc = match args.get(2) {
                    Some(init) => init.clone(),
                    None => items.next().ok_or_else(|| {
                        TraceError::unsupported(
                            "reduce() of an empty sequence (the frame raises TypeError)",
                        )
                    })?,
                };
                for i in items {
                    acc = self.call(func.clone(), vec![acc, i], vec![])?;
                }
                Ok(Some(acc))
            }
            _ => Ok(None),
        }
    }

    /// `Color("red")`: an `enum.Enum` class called with a known value looks its member up (the
    /// members are fixed when the class is made, and the class is guarded where it was read).
    /// The lookup runs now; a value with no member raises from the real call (the frame then
    /// runs eagerly and raises the same `ValueError`). `None` for any other call.
    pub(super) fn enum_member_by_value(
        &mut self,
        f: &Bound<'_, PyAny>,
        args: &[Var],
        kwargs: &[(String, Var)],
    ) -> Result<Option<Var>, TraceError> {
        let py = self.tx.py;
        let [value] = args else {
            return Ok(None);
        };
        if !kwargs.is_empty() || !f.is_instance_of::<pyo3::types::PyType>() {
            return Ok(None);
        }
        let meta = py.import("enum")?.getattr("EnumMeta")?;
        if !f.is_instance(&meta)? {
            return Ok(None);
        }
        let Some(v) = value.as_py(py) else {
            return Ok(None);
        };
        if !crate::interp::pyobj::is_immutable_const(&v) {
            return Ok(None);
        }
        let member = f.call1((v,)).map_err(|e| TraceError::UserError {
            call: "an enum lookup by value".into(),
            message: e.to_string(),
            error: e,
        })?;
        Ok(Some(Var::Py(member.unbind(), None)))
    }

    /// The class of an instance (a tracked object, or a Python value whose type is guarded),
    /// with the tracked object's class source; `None` for a class or any other value.
    fn instance_class(&mut self, obj: &Var) -> Option<(Py<PyAny>, Option<Source>)> {
        let py = self.tx.py;
        match obj {
            Var::Object(o) => Some((o.cls.clone_ref(py).into_any(), o.cls_src.clone())),
            Var::Py(o, src) => {
                let o = o.bind(py);
                if o.is_instance_of::<PyType>() {
                    return None;
                }
                if let Some(s) = src {
                    self.tx
                        .guards
                        .add(py, s, Check::Type(o.get_type().unbind()));
                }
                Some((o.get_type().into_any().unbind(), None))
            }
            _ => None,
        }
    }

    /// `dataclasses.asdict(obj)` / `astuple(obj)` of a dataclass instance, as the library builds
    /// them: each field read (guarded as any attribute read), a nested dataclass, list, tuple or
    /// dict converted in turn, an immutable value kept (the library's `copy.deepcopy` of it is
    /// itself). A tensor or another mutable value (deep-copied by the library) breaks. `None`
    /// where `obj` is no dataclass instance.
    fn dataclass_items(&mut self, obj: &Var, as_tuple: bool) -> Result<Option<Var>, TraceError> {
        let py = self.tx.py;
        let Some((cls, _)) = self.instance_class(obj) else {
            return Ok(None);
        };
        let cls = cls.bind(py);
        if !cls.hasattr("__dataclass_fields__")? {
            return Ok(None);
        }
        let fields = py
            .import("dataclasses")?
            .getattr("fields")?
            .call1((&cls,))?;
        let mut items: Vec<(String, Var)> = Vec::new();
        for f in fields.try_iter()? {
            let name: String = f?.getattr("name")?.extract()?;
            let v = self.getattr(obj.clone(), &name)?;
            let v = self.dataclass_value(v, as_tuple)?;
            items.push((name, v));
        }
        if as_tuple {
            return Ok(Some(Var::Tuple(
                items.into_iter().map(|(_, v)| v).collect::<Vec<_>>().into(),
            )));
        }
        let mut out = Vec::new();
        for (k, v) in items {
            out.push(Var::Tuple(vec![Var::py_const(py, k), v].into()));
        }
        self.call_builtin(
            &py.import("builtins")?.getattr("dict")?,
            "dict",
            vec![Var::list(out)],
            vec![],
        )
        .map(Some)
    }

    /// One field's value as `asdict`/`astuple` copies it (see [`Frame::dataclass_items`]).
    fn dataclass_value(&mut self, v: Var, as_tuple: bool) -> Result<Var, TraceError> {
        let py = self.tx.py;
        if let Some(r) = self.dataclass_items(&v, as_tuple)? {
            return Ok(r);
        }
        let deep = |what: &str| {
            TraceError::unsupported(format!(
                "dataclasses.{} of a field holding {what} (the library deep-copies it)",
                if as_tuple { "astuple" } else { "asdict" }
            ))
        };
        match v {
            Var::SymInt(..) => Ok(v),
            Var::Py(ref o, _) if crate::interp::pyobj::is_immutable_const(o.bind(py)) => Ok(v),
            Var::Tuple(items) => Ok(Var::Tuple(
                items
                    .iter()
                    .cloned()
                    .map(|i| self.dataclass_value(i, as_tuple))
                    .collect::<Result<Vec<_>, _>>()?
                    .into(),
            )),
            Var::List(ref l) if crate::interp::vars::list_kind(l).is_none() => {
                let items = v.items(py).unwrap_or_default();
                Ok(Var::list(
                    items
                        .into_iter()
                        .map(|i| self.dataclass_value(i, as_tuple))
                        .collect::<Result<_, _>>()?,
                ))
            }
            Var::Tensor(_) => Err(deep("a tensor")),
            other => Err(deep(&format!("a {}", other.type_name(py)))),
        }
    }

    /// `dataclasses.replace(obj, **changes)`, as the library does it: every `init` field not
    /// changed is read from `obj`, then the class is called with them all (traced like any
    /// construction). `InitVar`s and fields with `init=False` that are changed break.
    fn dataclass_replace(
        &mut self,
        obj: &Var,
        changes: &[(String, Var)],
    ) -> Result<Option<Var>, TraceError> {
        let py = self.tx.py;
        let Some((cls, cls_src)) = self.instance_class(obj) else {
            return Ok(None);
        };
        let cls = cls.bind(py);
        let Ok(fields) = cls.getattr("__dataclass_fields__") else {
            return Ok(None);
        };
        let dataclasses = py.import("dataclasses")?;
        let plain_field = dataclasses.getattr("_FIELD")?;
        let mut kwargs: Vec<(String, Var)> = changes.to_vec();
        for f in fields.call_method0("values")?.try_iter()? {
            let f = f?;
            let name: String = f.getattr("name")?.extract()?;
            let changed = changes.iter().any(|(k, _)| *k == name);
            if !f.getattr("_field_type")?.is(&plain_field) {
                return Err(TraceError::unsupported(format!(
                    "dataclasses.replace of a dataclass with the InitVar or ClassVar '{name}'"
                )));
            }
            let init: bool = f.getattr("init")?.extract()?;
            if !init {
                if changed {
                    return Err(TraceError::unsupported(format!(
                        "dataclasses.replace changing the init=False field '{name}' (it raises \
                         ValueError)"
                    )));
                }
                continue;
            }
            if !changed {
                let v = self.getattr(obj.clone(), &name)?;
                kwargs.push((name, v));
            }
        }
        let cls_var = Var::Py(cls.clone().unbind(), cls_src);
        Ok(Some(self.call(cls_var, vec![], kwargs)?))
    }

    /// `Point(a, b=...)` for a namedtuple class whose `__new__` is the one namedtuple generated:
    /// the fields bound like its signature, missing ones from `_field_defaults`.
    pub(super) fn construct_named_tuple(
        &mut self,
        f: &Bound<'_, PyAny>,
        args: &[Var],
        kwargs: &[(String, Var)],
    ) -> Result<Option<Var>, TraceError> {
        let Ok(ty) = f.cast::<PyType>() else {
            return Ok(None);
        };
        if !ty.is_subclass_of::<pyo3::types::PyTuple>()? || !ty.hasattr("_make")? {
            return Ok(None);
        }
        // The class in the MRO that namedtuple made (it holds `_fields` and the `__new__`).
        let mut base = None;
        for k in ty.getattr("__mro__")?.try_iter()? {
            let k = k?;
            let d = k.getattr("__dict__")?;
            if d.contains("_fields")? {
                base = Some(k);
                break;
            }
        }
        let Some(base) = base else { return Ok(None) };
        if !base.getattr("__dict__")?.contains("__new__")?
            || !ty.getattr("__new__")?.is(&base.getattr("__new__")?)
        {
            return Ok(None);
        }
        let fields = super::super::pyobj::named_tuple_fields(ty.as_any());
        let defaults = ty.getattr("_field_defaults")?;
        let mut items: Vec<Option<Var>> = vec![None; fields.len()];
        if args.len() > fields.len() {
            return Err(TraceError::unsupported(format!(
                "{}() with too many arguments (the call raises TypeError)",
                ty.name()?
            )));
        }
        for (i, a) in args.iter().enumerate() {
            items[i] = Some(a.clone());
        }
        for (k, v) in kwargs {
            let Some(i) = fields.iter().position(|f| f == k) else {
                return Err(TraceError::unsupported(format!(
                    "{}() with an unexpected keyword argument '{k}' (the call raises TypeError)",
                    ty.name()?
                )));
            };
            if items[i].is_some() {
                return Err(TraceError::unsupported(format!(
                    "{}() with two values for '{k}' (the call raises TypeError)",
                    ty.name()?
                )));
            }
            items[i] = Some(v.clone());
        }
        let mut out = Vec::new();
        for (i, it) in items.into_iter().enumerate() {
            match it {
                Some(v) => out.push(v),
                None => match defaults.get_item(fields[i].as_str()) {
                    Ok(d) => out.push(self.tx.wrap(d, None)?),
                    Err(_) => {
                        return Err(TraceError::unsupported(format!(
                            "{}() missing '{}' (the call raises TypeError)",
                            ty.name()?,
                            fields[i]
                        )))
                    }
                },
            }
        }
        Ok(Some(Var::NamedTuple {
            ty: ty.clone().into_any().unbind(),
            items: out.into(),
        }))
    }

    /// `_replace`, `_asdict`, `count` and `index` of a namedtuple made or read by the trace.
    pub(super) fn named_tuple_method(
        &mut self,
        ty: Py<PyAny>,
        items: Vec<Var>,
        name: &str,
        args: Vec<Var>,
        kwargs: Vec<(String, Var)>,
    ) -> Result<Var, TraceError> {
        let py = self.tx.py;
        let fields = super::super::pyobj::named_tuple_fields(ty.bind(py));
        match (name, args.as_slice()) {
            ("_replace", []) => {
                let mut items = items;
                for (k, v) in kwargs {
                    let i = fields.iter().position(|f| *f == k).ok_or_else(|| {
                        TraceError::unsupported(format!(
                            "_replace of an unknown field '{k}' (the call raises ValueError)"
                        ))
                    })?;
                    items[i] = v;
                }
                Ok(Var::NamedTuple {
                    ty,
                    items: items.into(),
                })
            }
            ("_asdict", []) if kwargs.is_empty() => {
                let mut out = Vec::new();
                for (f, v) in fields.iter().zip(items) {
                    out.push((pyo3::types::PyString::new(py, f).into_any().unbind(), v));
                }
                Ok(Var::Dict(std::rc::Rc::new(std::cell::RefCell::new(out))))
            }
            _ => {
                let obj = Var::NamedTuple {
                    ty,
                    items: items.into(),
                }
                .as_py(py)
                .ok_or_else(|| {
                    TraceError::unsupported(format!("{name}() of a namedtuple of tensors"))
                })?;
                let m = obj.getattr(name)?;
                self.fold(&m, &args, &kwargs)?.ok_or_else(|| {
                    TraceError::unsupported(format!("{name}() with these arguments"))
                })
            }
        }
    }
}

/// Whether `super(cls, obj).name` finds `name` in `object` itself: the first class past `cls` in
/// the MRO of `obj` (of `type(obj)` for an instance) whose own dict holds it.
fn defined_in_object(
    py: Python<'_>,
    cls: &Bound<'_, PyAny>,
    obj: &Bound<'_, PyAny>,
    name: &str,
) -> PyResult<bool> {
    let owner = if obj.is_instance_of::<PyType>() {
        obj.clone()
    } else {
        obj.get_type().into_any()
    };
    let object = py.import("builtins")?.getattr("object")?;
    let mut past = false;
    for c in owner.getattr("__mro__")?.try_iter()? {
        let c = c?;
        if !past {
            past = c.is(cls);
            continue;
        }
        if c.getattr("__dict__")?.contains(name)? {
            return Ok(c.is(&object));
        }
    }
    Ok(false)
}
