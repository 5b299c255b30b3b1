//! Builtins (`len`, `getattr`, `isinstance`, `zip`, ...) over tracked values, folded at trace time.

use pyo3::prelude::*;
use pyo3::types::PyType;

use crate::guards::Check;

use crate::error::TraceError;

use crate::interp::vars::Var;
use crate::interp::Frame;

/// Builtins that are pure functions of their (known) arguments.
pub(super) const FOLDABLE_BUILTINS: &[&str] = &[
    "len",
    "abs",
    "min",
    "max",
    "sum",
    "int",
    "float",
    "bool",
    "str",
    "round",
    "isinstance",
    "issubclass",
    "range",
    "tuple",
    "list",
    "divmod",
    "pow",
    "type",
    "hasattr",
    "getattr",
    "slice",
    "callable",
    "repr",
    "all",
    "any",
    "sorted",
    "reversed",
    "enumerate",
    "zip",
    "dict",
    "frozenset",
    "set",
    "hash",
    "chr",
    "ord",
    "iter",
    "next",
    "map",
    "filter",
    "id",
];

/// Builtins that read only the type, length or items of a container, never an item's value:
/// a tuple or `torch.Size` holding symbolic ints passes through them unspecialized.
const STRUCTURAL_BUILTINS: &[&str] = &[
    "len",
    "isinstance",
    "type",
    "tuple",
    "list",
    "iter",
    "enumerate",
    "zip",
    "reversed",
    "callable",
];

/// Builtins that consume an iterable argument to its end: an iterator of the traced code given
/// to them is drained (its cursor moves to the end, as the builtin leaves it).
const CONSUMING_BUILTINS: &[&str] = &[
    "list",
    "tuple",
    "sum",
    "any",
    "all",
    "min",
    "max",
    "sorted",
    "set",
    "frozenset",
    "dict",
];

impl Frame<'_, '_> {
    pub(super) fn call_builtin(
        &mut self,
        f: &Bound<'_, PyAny>,
        name: &str,
        args: Vec<Var>,
        kwargs: Vec<(String, Var)>,
    ) -> Result<Var, TraceError> {
        let py = self.tx.py;
        // Symbolic ints (dynamic shapes): `int(T)` is `T`; `isinstance` reads the type only;
        // builtins that read a container's structure (`len(x.shape)`, `tuple(x.shape)`,
        // `enumerate`) leave its items as they are; other builtins need the value and
        // specialize it (guarded).
        let any_sym = |v: &Var| match v {
            Var::SymInt(..) | Var::SymFloat(..) => true,
            Var::Tuple(_) | Var::Size(_) => v.holds_sym_int(),
            _ => false,
        };
        let structural = STRUCTURAL_BUILTINS.contains(&name)
            && !args.iter().any(|a| matches!(a, Var::SymInt(..)));
        if !structural
            && args
                .iter()
                .chain(kwargs.iter().map(|(_, v)| v))
                .any(any_sym)
        {
            if let ("int", [v @ Var::SymInt(..)]) = (name, args.as_slice()) {
                return Ok(v.clone());
            }
            // `int(n / 2)`: the ints' division (`symfloat.rs`).
            if let ("int", [v @ Var::SymFloat(..)], []) = (name, args.as_slice(), kwargs.as_slice())
            {
                let round = crate::interp::symfloat::Round::Trunc;
                if let Some(r) = self.sym_float_to_int("int", f, v, round)? {
                    return Ok(r);
                }
            }
            // `round(n / 2)`: the float's rounding, an int atom; `round(n)` of an int is `n`.
            if let ("round", [v], []) = (name, args.as_slice(), kwargs.as_slice()) {
                if matches!(v, Var::SymInt(..)) {
                    return Ok(v.clone());
                }
                let round = crate::interp::symfloat::Round::Half;
                if let Some(r) = self.sym_float_to_int("round", f, v, round)? {
                    return Ok(r);
                }
            }
            if let ("abs", [v], []) = (name, args.as_slice(), kwargs.as_slice()) {
                if let Some(r) = self.sym_abs(v)? {
                    return Ok(r);
                }
            }
            // `divmod(a, b)` of symbolic numbers: `(a // b, a % b)`, each as its operator.
            if let ("divmod", [a, b], []) = (name, args.as_slice(), kwargs.as_slice()) {
                let (a, b) = (a.clone(), b.clone());
                let q = self.operator("floordiv", vec![a.clone(), b.clone()])?;
                let r = self.operator("mod", vec![a, b])?;
                return Ok(Var::Tuple(vec![q, r].into()));
            }
            // `float(T)`: a symbolic float (torch's `sym_float`), not a specialized size.
            match (name, args.as_slice()) {
                ("float", [v @ Var::SymInt(..)]) if kwargs.is_empty() => {
                    return self.sym_float(v);
                }
                ("float", [v @ Var::SymFloat(..)]) if kwargs.is_empty() => return Ok(v.clone()),
                _ => {}
            }
            if name == "isinstance" {
                if let [Var::SymInt(..), ty] = args.as_slice() {
                    let ty = ty.clone();
                    return self.call_builtin(f, name, vec![Var::py_const(py, 2i64), ty], kwargs);
                }
            }
            // `max(T - w + 1, 0)` over ints: the comparisons are decided and guarded, and the
            // result is the chosen operand, still symbolic (specializing the value would guard
            // it equal to its hint: a recompile per value).
            if let Some(v) = self.sym_min_max(name, &args, &kwargs)? {
                return Ok(v);
            }
            let (args, kwargs) = self.specialize_args(args, kwargs)?;
            return self.call_builtin(f, name, args, kwargs);
        }
        // Module containers iterate as their children (with sources), so builtins see a list.
        let args: Vec<Var> = if matches!(
            name,
            "enumerate"
                | "zip"
                | "reversed"
                | "list"
                | "tuple"
                | "len"
                | "sum"
                | "any"
                | "all"
                | "min"
                | "max"
                | "sorted"
        ) {
            let mut out = Vec::new();
            for a in args {
                match &a {
                    Var::Py(o, Some(src))
                        if crate::interp::pyobj::is_nn_module(py, o.bind(py))? && name != "len" =>
                    {
                        let items = self.module_children(o.bind(py).clone(), src.clone())?;
                        out.push(Var::list(items));
                    }
                    // A user object iterates through its class's protocol (`abc_mixins.rs`).
                    Var::Object(_) | Var::Py(_, _) if name != "len" && a.items(py).is_none() => {
                        match self.object_items(&a)? {
                            Some(items) => out.push(Var::list(items)),
                            None => out.push(a),
                        }
                    }
                    _ => out.push(a),
                }
            }
            out
        } else {
            args
        };
        if let Some(r) = self.iterator_builtin(name, &args, &kwargs)? {
            return Ok(r);
        }
        let args = if CONSUMING_BUILTINS.contains(&name) {
            let mut out = Vec::new();
            for a in args {
                match a {
                    Var::Iter(_) | Var::Library(_) | Var::Generator(_) => {
                        out.push(Var::Tuple(self.drain(a)?.into()))
                    }
                    a => out.push(a),
                }
            }
            out
        } else {
            args
        };
        if let Some(r) = self.numeric_builtin(name, &args, &kwargs)? {
            return Ok(r);
        }
        match (name, args.as_slice()) {
            // `hash(cfg)` of an object whose class defines `__hash__` in Python (a frozen
            // dataclass's, hashing its fields): that method, traced, so the hash depends on the
            // fields read (guarded by value), not on the object's identity (a new config per
            // call would recompile).
            ("hash", [v @ (Var::Py(_, Some(_)) | Var::Object(_))]) if kwargs.is_empty() => {
                let cls = match v {
                    Var::Object(o) => o.cls.bind(py).clone(),
                    Var::Py(o, src) => {
                        let o = o.bind(py);
                        if let Some(s) = src {
                            self.tx
                                .guards
                                .add(py, s, Check::Type(o.get_type().unbind()));
                        }
                        o.get_type().into_any()
                    }
                    _ => unreachable!(),
                };
                let h = cls.getattr("__hash__")?;
                if h.is_instance(&py.import("types")?.getattr("FunctionType")?)? {
                    return self.call(Var::Py(h.unbind(), None), vec![v.clone()], vec![]);
                }
            }
            // Values that exist only in the tracker: functions and methods made or bound by
            // the traced code are callable, containers and tensors are not, and a user object
            // is callable when its class defines `__call__` (as `callable` itself decides).
            ("callable", [v]) if kwargs.is_empty() && v.as_py(py).is_none() => {
                let yes = match v {
                    Var::Function(_) | Var::BoundMethod { .. } | Var::Method { .. } => Some(true),
                    Var::Library(l) => Some(!l.borrow().is_iterator()),
                    Var::Tensor(_)
                    | Var::Tuple(_)
                    | Var::List(_)
                    | Var::Dict(_)
                    | Var::Size(_)
                    | Var::Slice(_)
                    | Var::Iter(_)
                    | Var::NamedTuple { .. }
                    | Var::Set(_) => Some(false),
                    Var::Object(o) => {
                        // `hasattr(cls, "__call__")` would find `type.__call__` on every class.
                        let mut defines = false;
                        for c in o.cls.bind(py).getattr("__mro__")?.try_iter()? {
                            defines |= c?.getattr("__dict__")?.contains("__call__")?;
                        }
                        Some(defines)
                    }
                    _ => None,
                };
                if let Some(yes) = yes {
                    return Ok(Var::py_const(py, yes));
                }
            }
            ("getattr", [obj, name]) | ("getattr", [obj, name, _]) => {
                let n: String = name
                    .as_py(py)
                    .and_then(|n| n.extract().ok())
                    .ok_or_else(|| {
                        TraceError::unsupported("getattr with a name that is not a str")
                    })?;
                return match self.getattr(obj.clone(), &n) {
                    Ok(v) => Ok(v),
                    // A traced `__getattr__` (or property) raised AttributeError: `getattr`
                    // catches it and answers the default, as eager does.
                    Err(TraceError::Raised { exc, .. })
                        if args.len() == 3
                            && exc
                                .bind(py)
                                .is_instance_of::<pyo3::exceptions::PyAttributeError>() =>
                    {
                        Ok(args[2].clone())
                    }
                    Err(_) if args.len() == 3 && has_no_attr(py, obj, &n) => {
                        // The default is used: guard that the attribute is still missing.
                        self.guard_hasattr(obj, &n, false);
                        Ok(args[2].clone())
                    }
                    Err(e) => Err(e),
                };
            }
            ("hasattr", [obj, name]) => {
                let n: String = name
                    .as_py(py)
                    .and_then(|n| n.extract().ok())
                    .ok_or_else(|| {
                        TraceError::unsupported("hasattr with a name that is not a str")
                    })?;
                if let Var::Tensor(_) = obj {
                    let t = py.import("torch")?.getattr("Tensor")?;
                    return Ok(Var::py_const(py, t.hasattr(n.as_str())?));
                }
                if let Var::Object(o) = obj {
                    return match crate::interp::object_has_attr(py, o, &n)? {
                        Some(has) => Ok(Var::py_const(py, has)),
                        // A property (`Cache.is_sliding`) or a miss that goes to a Python
                        // `__getattr__`: `hasattr` runs the code, and only an `AttributeError`
                        // from it (folded, or raised by the traced code) answers false.
                        None if crate::interp::object_attr_is_property(py, o, &n)?
                            || crate::interp::object_attr_misses_to_getattr(py, o, &n)? =>
                        {
                            let attribute_error = |e: &Bound<'_, PyAny>| {
                                e.is_instance_of::<pyo3::exceptions::PyAttributeError>()
                            };
                            match self.object_attr(&o.clone(), &n) {
                                Ok(_) => Ok(Var::py_const(py, true)),
                                Err(TraceError::UserError { error, .. })
                                    if error
                                        .is_instance_of::<pyo3::exceptions::PyAttributeError>(
                                            py,
                                        ) =>
                                {
                                    Ok(Var::py_const(py, false))
                                }
                                Err(TraceError::Raised { exc, .. })
                                    if attribute_error(exc.bind(py)) =>
                                {
                                    Ok(Var::py_const(py, false))
                                }
                                Err(e) => Err(e),
                            }
                        }
                        None => Err(TraceError::unsupported(format!(
                            "hasattr on '{n}' (a descriptor) of a {}",
                            obj.type_name(py)
                        ))),
                    };
                }
                // A model output has its fields (a dataclass's, set or not) and its class's
                // attributes; no other (`hasattr(outputs, "vision_hidden_states")`).
                if let Var::ModelOutput(o) = obj {
                    let has = o.field(&n).is_some() || o.cls.bind(py).hasattr(n.as_str())?;
                    return Ok(Var::py_const(py, has));
                }
                if let Var::NamedTuple { ty, .. } = obj {
                    let fields = crate::interp::pyobj::named_tuple_fields(ty.bind(py));
                    let has = fields.contains(&n) || ty.bind(py).hasattr(n.as_str())?;
                    return Ok(Var::py_const(py, has));
                }
                if let Var::Py(o, _) = obj {
                    if self.tx.effects.attr(py, o, &n).is_some() {
                        return Ok(Var::py_const(py, true));
                    }
                }
                let has = !has_no_attr(py, obj, &n);
                self.guard_hasattr(obj, &n, has);
                return Ok(Var::py_const(py, has));
            }
            ("set", [v]) if kwargs.is_empty() && v.items(py).is_some() => {
                let items = v.items(py).unwrap();
                return self.tx.new_set(&items);
            }
            ("set", []) if kwargs.is_empty() => return self.tx.new_set(&[]),
            // Empty containers made by calling the type (a dataclass's `default_factory=list`,
            // `collections.defaultdict(list)`'s factory, `fac()` of a stored type) are the
            // traced code's own, as `[]` and `{}` are: folding them would make a constant the
            // code cannot put a tensor in.
            ("list", []) if kwargs.is_empty() => return Ok(Var::list(vec![])),
            ("dict", []) if kwargs.is_empty() => return self.dict_builtin(None, &[]),
            // A frozenset of known values (a symbolic int specialized) is a constant.
            ("frozenset", [v]) if kwargs.is_empty() && v.items(py).is_some() => {
                if let Var::Set(s) = self.tx.new_set(&v.items(py).unwrap())? {
                    let f = py.import("builtins")?.getattr("frozenset")?.call1((s,))?;
                    return Ok(Var::Py(f.unbind(), None));
                }
            }
            ("type", [v]) if kwargs.is_empty() => {
                if let Some(t) = self.type_of(v)? {
                    return Ok(Var::Py(t.into_any(), None));
                }
            }
            ("isinstance", [v, cls]) | ("issubclass", [v, cls])
                if kwargs.is_empty() && (name == "isinstance" || matches!(v, Var::Py(..))) =>
            {
                // Both depend on the type alone (guarded), not on which object it is.
                let cls = cls
                    .as_py(py)
                    .ok_or_else(|| TraceError::unsupported("isinstance with an unknown class"))?;
                let ty = if name == "isinstance" {
                    self.type_of(v)?.map(|t| t.into_any().into_bound(py))
                } else {
                    v.as_py(py)
                };
                if let Some(ty) = ty {
                    let r = py
                        .import("builtins")?
                        .getattr("issubclass")?
                        .call1((ty, cls))
                        .map_err(|e| TraceError::UserError {
                            call: name.to_string(),
                            message: e.to_string(),
                            error: e,
                        })?;
                    return self.tx.wrap(r, None);
                }
            }
            ("len", [Var::Tensor(t)]) => {
                if t.meta.sizes.is_empty() {
                    return Err(TraceError::unsupported("len() of a 0-d tensor"));
                }
                let t = t.clone();
                return self.size_of(&t, 0);
            }
            ("len", [Var::Py(o, Some(src))])
                if o.bind(py).is_instance_of::<pyo3::types::PyDict>() =>
            {
                return self.py_dict_method(o.clone_ref(py), src.clone(), "__len__", vec![]);
            }
            ("bool", [v @ Var::Object(_)]) if kwargs.is_empty() => {
                let t = self.truth(v)?;
                return Ok(Var::py_const(py, t));
            }
            ("bool", [v @ Var::ModelOutput(_)]) if kwargs.is_empty() => {
                return Ok(Var::py_const(py, v.truthy(py)?));
            }
            ("len", [v @ Var::Py(_, Some(_))]) if kwargs.is_empty() && v.items(py).is_none() => {
                if let Some(n) = self.user_len(v)? {
                    return Ok(n);
                }
            }
            ("len", [Var::Object(o)]) => {
                let o = o.clone();
                return self.object_operator(&o, "len", vec![]);
            }
            // (An iterator has no length: `len(it)` raises, as eager's does.)
            ("len", [v]) if !matches!(v, Var::Iter(_)) && v.items(py).is_some() => {
                return Ok(Var::py_const(py, v.items(py).unwrap().len() as i64))
            }
            // `tuple(t)` of a plain tuple is `t` itself in CPython.
            ("tuple", [Var::Tuple(t)]) => return Ok(Var::Tuple(t.clone())),
            ("tuple", [v]) | ("list", [v]) if v.items(py).is_some() => {
                let items = v.items(py).unwrap();
                return Ok(if name == "tuple" {
                    Var::Tuple(items.into())
                } else {
                    Var::list(items)
                });
            }
            _ => {}
        }
        if let Some(r) = self.reduce_builtin(name, &args, &kwargs)? {
            return Ok(r);
        }
        if let Some(r) = self.fold(f, &args, &kwargs)? {
            // `dict(pairs)` and `sorted(xs)` folded on constants return a new container: the
            // traced code's own, as `[]` and `{}` are, so that it can write it (a constant
            // broke the graph at `d[k] = v` or `l.append(v)`).
            if matches!(name, "dict" | "sorted") {
                return self.own_container(r);
            }
            return Ok(r);
        }
        Err(TraceError::unsupported(format!(
            "builtin {name}() on these arguments"
        )))
    }
}

impl Frame<'_, '_> {
    /// A new list or dict computed at trace time (`Var::Py` with no source) as a tracked
    /// container of its items; anything else as it is.
    fn own_container(&mut self, v: Var) -> Result<Var, TraceError> {
        let py = self.tx.py;
        let Var::Py(o, None) = &v else {
            return Ok(v);
        };
        let o = o.bind(py).clone();
        if o.get_type().is(py.get_type::<pyo3::types::PyList>()) {
            let items = o
                .try_iter()?
                .map(|x| self.tx.wrap(x?, None))
                .collect::<Result<Vec<_>, TraceError>>()?;
            return Ok(Var::list(items));
        }
        if let Ok(d) = o.cast_exact::<pyo3::types::PyDict>() {
            let mut items = Vec::with_capacity(d.len());
            for (k, x) in d.iter() {
                items.push((k.unbind(), self.tx.wrap(x, None)?));
            }
            return Ok(Var::Dict(std::rc::Rc::new(std::cell::RefCell::new(items))));
        }
        Ok(v)
    }

    /// `abs`, `round`, `divmod` and `pow` of a tensor (its dunder methods: graph ops), and `id`
    /// of an object read from the frame (its identity is then guarded). `None` otherwise.
    fn numeric_builtin(
        &mut self,
        name: &str,
        args: &[Var],
        kwargs: &[(String, Var)],
    ) -> Result<Option<Var>, TraceError> {
        let py = self.tx.py;
        if !kwargs.is_empty() {
            return Ok(None);
        }
        let r = match (name, args) {
            ("abs", [t @ Var::Tensor(_)]) => self.operator("abs", vec![t.clone()])?,
            ("round", [Var::Tensor(t)]) => {
                self.tensor_method(t.clone(), "round", vec![], vec![])?
            }
            ("round", [Var::Tensor(t), d]) if !matches!(d, Var::Py(o, _) if o.is_none(py)) => {
                let kw = vec![("decimals".to_string(), d.clone())];
                self.tensor_method(t.clone(), "round", vec![], kw)?
            }
            ("divmod", [a, b]) if matches!(a, Var::Tensor(_)) || matches!(b, Var::Tensor(_)) => {
                let q = self.operator("floordiv", vec![a.clone(), b.clone()])?;
                let r = self.operator("mod", vec![a.clone(), b.clone()])?;
                Var::Tuple(vec![q, r].into())
            }
            ("pow", [a, b]) if matches!(a, Var::Tensor(_)) || matches!(b, Var::Tensor(_)) => {
                self.operator("pow", vec![a.clone(), b.clone()])?
            }
            ("id", [v @ Var::Py(o, _)]) => {
                self.tx.realize_identity(v);
                let id = o.bind(py).as_ptr() as usize;
                Var::py_const(py, id)
            }
            // A tensor or a value made by the traced code has no identity before the graph
            // runs: the call breaks as any unknown call does.
            ("id", [_]) => return Err(TraceError::unsupported("call to builtins.id")),
            _ => return Ok(None),
        };
        Ok(Some(r))
    }

    /// Builtins that consume a sequence whose items are not all Python values (tensors, or a
    /// generator expression's results): `sum`, `any`, `all`, `min`/`max` of known items,
    /// `sorted` with a traced key, `dict` of pairs. `None` leaves the call to folding.
    fn reduce_builtin(
        &mut self,
        name: &str,
        args: &[Var],
        kwargs: &[(String, Var)],
    ) -> Result<Option<Var>, TraceError> {
        let py = self.tx.py;
        // `min(a, b, key=...)`: the arguments are the items.
        if matches!(name, "min" | "max")
            && args.len() > 1
            && args
                .iter()
                .chain(kwargs.iter().map(|(_, v)| v))
                .any(|a| a.as_py(py).is_none())
        {
            let items = Var::Tuple(args.to_vec().into());
            return self.reduce_builtin(name, &[items], kwargs);
        }
        if name == "dict" && args.len() <= 1 && !kwargs.is_empty() {
            return self.dict_builtin(args.first(), kwargs).map(Some);
        }
        if name == "dict"
            && args.len() == 1
            && matches!(&args[0], Var::Py(o, Some(_)) if o.bind(py).is_instance_of::<pyo3::types::PyDict>())
        {
            return self.dict_builtin(args.first(), kwargs).map(Some);
        }
        let Some(seq) = args.first() else {
            return Ok(None);
        };
        // Plain Python values fold as they are.
        if seq.as_py(py).is_some() && kwargs.iter().all(|(_, v)| v.as_py(py).is_some()) {
            return Ok(None);
        }
        let Some(items) = seq.items(py) else {
            return Ok(None);
        };
        let kw = |k: &str| kwargs.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
        match (name, args.len()) {
            ("sum", 1 | 2) if kwargs.iter().all(|(k, _)| k == "start") => {
                let mut acc = args
                    .get(1)
                    .cloned()
                    .or_else(|| kw("start"))
                    .unwrap_or_else(|| Var::py_const(py, 0i64));
                for i in items {
                    acc = self.operator("add", vec![acc, i])?;
                }
                Ok(Some(acc))
            }
            ("any" | "all", 1) if kwargs.is_empty() => {
                let want = name == "any";
                for i in &items {
                    if i.truthy(py)? == want {
                        return Ok(Some(Var::py_const(py, want)));
                    }
                }
                Ok(Some(Var::py_const(py, !want)))
            }
            ("min" | "max" | "sorted", 1) => {
                let key = kw("key");
                let default = kw("default");
                let reverse = match kw("reverse") {
                    Some(r) => r
                        .as_py(py)
                        .ok_or_else(|| TraceError::unsupported("sorted(reverse=) of a tensor"))?
                        .is_truthy()?,
                    None => false,
                };
                let allowed: &[&str] = if name == "sorted" {
                    &["key", "reverse"]
                } else {
                    &["key", "default"]
                };
                if kwargs.iter().any(|(k, _)| !allowed.contains(&k.as_str())) {
                    return Ok(None);
                }
                if items.is_empty() {
                    if let Some(d) = default {
                        return Ok(Some(d));
                    }
                }
                // The keys must be Python values: comparing tensors is data-dependent.
                let mut keys = Vec::new();
                for i in &items {
                    let k = match &key {
                        Some(f) if !matches!(f, Var::Py(o, _) if o.is_none(py)) => {
                            self.call(f.clone(), vec![i.clone()], vec![])?
                        }
                        _ => i.clone(),
                    };
                    keys.push(k);
                }
                let Some(keys) = python_keys(py, &keys) else {
                    // Keys that are not Python values (user objects with `__lt__`): compared
                    // in the traced code, in the order CPython compares them.
                    return self.order_traced(name, items, keys, reverse).map(Some);
                };
                let keys = pyo3::types::PyList::new(py, keys)?;
                let order = py.import("builtins")?.getattr("sorted")?.call(
                    (py.import("builtins")?
                        .getattr("range")?
                        .call1((items.len(),))?,),
                    Some(&{
                        let d = pyo3::types::PyDict::new(py);
                        d.set_item("key", keys.getattr("__getitem__")?)?;
                        d.set_item("reverse", reverse)?;
                        d
                    }),
                )?;
                let order: Vec<usize> = order.extract()?;
                if name == "sorted" {
                    return Ok(Some(Var::list(
                        order.into_iter().map(|j| items[j].clone()).collect(),
                    )));
                }
                if items.is_empty() {
                    return Err(TraceError::unsupported(format!(
                        "{name}() of an empty sequence (the frame raises ValueError)"
                    )));
                }
                // min/max return the first of equal extremes: pick by a stable scan.
                let mut best = 0;
                for j in 1..items.len() {
                    let op = if name == "min" { "lt" } else { "gt" };
                    let better = keys
                        .get_item(j)?
                        .rich_compare(
                            keys.get_item(best)?,
                            if op == "lt" {
                                pyo3::basic::CompareOp::Lt
                            } else {
                                pyo3::basic::CompareOp::Gt
                            },
                        )?
                        .is_truthy()?;
                    if better {
                        best = j;
                    }
                }
                Ok(Some(items[best].clone()))
            }
            ("dict", 1) if kwargs.is_empty() => {
                if let Var::Dict(d) = seq {
                    let copy = d.borrow().clone();
                    return Ok(Some(Var::Dict(std::rc::Rc::new(std::cell::RefCell::new(
                        copy,
                    )))));
                }
                let mut out: Vec<(Py<PyAny>, Var)> = Vec::new();
                for pair in items {
                    let kv = pair.items(py).filter(|kv| kv.len() == 2).ok_or_else(|| {
                        TraceError::unsupported("dict() of items that are not pairs")
                    })?;
                    let k = self.hash_key(&kv[0])?.into_bound(py);
                    match out
                        .iter()
                        .position(|(k2, _)| k2.bind(py).eq(&k).unwrap_or(false))
                    {
                        Some(i) => out[i].1 = kv[1].clone(),
                        None => out.push((k.unbind(), kv[1].clone())),
                    }
                }
                Ok(Some(Var::Dict(std::rc::Rc::new(std::cell::RefCell::new(
                    out,
                )))))
            }
            _ => Ok(None),
        }
    }

    /// `dict(mapping_or_pairs, **kwargs)` as a new tracked dict: a mapping's values are read
    /// through subscripts (so an input dict's values keep their sources), then the keywords.
    fn dict_builtin(
        &mut self,
        first: Option<&Var>,
        kwargs: &[(String, Var)],
    ) -> Result<Var, TraceError> {
        let py = self.tx.py;
        let mut out: Vec<(Py<PyAny>, Var)> = Vec::new();
        let put = |k: Bound<'_, PyAny>, v: Var, out: &mut Vec<(Py<PyAny>, Var)>| match out
            .iter()
            .position(|(k2, _)| k2.bind(py).eq(&k).unwrap_or(false))
        {
            Some(i) => out[i].1 = v,
            None => out.push((k.unbind(), v)),
        };
        match first {
            None => {}
            Some(Var::Dict(d)) => out = d.borrow().clone(),
            Some(m @ Var::Py(o, Some(_))) if o.bind(py).is_instance_of::<pyo3::types::PyDict>() => {
                let keys: Vec<Bound<'_, PyAny>> = o
                    .bind(py)
                    .call_method0("keys")?
                    .try_iter()?
                    .collect::<PyResult<_>>()?;
                for k in keys {
                    let v = self.subscript(m.clone(), Var::Py(k.clone().unbind(), None))?;
                    put(k, v, &mut out);
                }
            }
            Some(seq) => {
                let items = self.drain(seq.clone())?;
                for pair in items {
                    let kv = pair.items(py).filter(|kv| kv.len() == 2).ok_or_else(|| {
                        TraceError::unsupported("dict() of items that are not pairs")
                    })?;
                    let k = self.hash_key(&kv[0])?.into_bound(py);
                    put(k, kv[1].clone(), &mut out);
                }
            }
        }
        for (k, v) in kwargs {
            put(
                pyo3::types::PyString::new(py, k).into_any(),
                v.clone(),
                &mut out,
            );
        }
        Ok(Var::Dict(std::rc::Rc::new(std::cell::RefCell::new(out))))
    }

    /// Guards `hasattr(obj, name) == present` where `obj` was read from the frame.
    fn guard_hasattr(&mut self, obj: &Var, name: &str, present: bool) {
        if let Var::Py(o, Some(src)) = obj {
            let py = self.tx.py;
            // Attributes of constant modules and of immutable values do not come and go.
            if !crate::interp::pyobj::is_constant_module(o.bind(py)) {
                self.tx
                    .guards
                    .add(py, src, Check::HasAttr(name.to_string(), present));
            }
        }
    }

    /// `type(v)` for a tracked value, when it is known (a tensor input's exact class is guarded;
    /// tensors made by the graph are `torch.Tensor`).
    pub(in crate::interp) fn type_of(&self, v: &Var) -> Result<Option<Py<PyType>>, TraceError> {
        Ok(self.type_of_bound(v)?.map(|t| t.unbind()))
    }

    fn type_of_bound(&self, v: &Var) -> Result<Option<Bound<'_, PyType>>, TraceError> {
        let py = self.tx.py;
        let builtins = py.import("builtins")?;
        let named = |n: &str| -> Result<Option<Bound<'_, PyType>>, TraceError> {
            Ok(Some(
                builtins
                    .getattr(n)?
                    .cast_into::<PyType>()
                    .map_err(PyErr::from)?,
            ))
        };
        Ok(match v {
            Var::Tensor(t) => {
                let inputs = self.tx.output.graph.placeholders();
                let ty = match inputs.iter().position(|n| *n == t.node) {
                    Some(i) => self.tx.output.example_inputs[i].bind(py).get_type(),
                    None => py
                        .import("torch")?
                        .getattr("Tensor")?
                        .cast_into::<PyType>()
                        .map_err(PyErr::from)?,
                };
                Some(ty)
            }
            Var::Py(o, _) => Some(o.bind(py).get_type()),
            Var::Tuple(_) => named("tuple")?,
            Var::List(l) => match crate::interp::vars::list_kind(l) {
                Some(c) => Some(
                    c.into_bound(py)
                        .cast_into::<PyType>()
                        .map_err(PyErr::from)?,
                ),
                None => named("list")?,
            },
            Var::Dict(d) => match super::collections::dict_class(py, d) {
                Some(c) => Some(c.cast_into::<PyType>().map_err(PyErr::from)?),
                None => named("dict")?,
            },
            Var::Deque(_) => Some(
                py.import("collections")?
                    .getattr("deque")?
                    .cast_into::<PyType>()
                    .map_err(PyErr::from)?,
            ),
            Var::Slice(_) => named("slice")?,
            Var::Super { .. } => named("super")?,
            Var::GenCm(_) => Some(
                py.import("contextlib")?
                    .getattr("_GeneratorContextManager")?
                    .cast_into::<PyType>()
                    .map_err(PyErr::from)?,
            ),
            Var::Set(_) => named("set")?,
            Var::Library(l) => {
                let (module, name) = l.borrow().py_type();
                Some(
                    py.import(module)?
                        .getattr(name)?
                        .cast_into::<PyType>()
                        .map_err(PyErr::from)?,
                )
            }
            Var::ModelOutput(o) => Some(as_type(py, &o.cls)?),
            Var::Object(o) => Some(as_type(py, &o.cls)?),
            Var::NamedTuple { ty, .. } => Some(
                ty.bind(py)
                    .clone()
                    .cast_into::<PyType>()
                    .map_err(PyErr::from)?,
            ),
            Var::Size(_) => Some(
                py.import("torch")?
                    .getattr("Size")?
                    .cast_into::<PyType>()
                    .map_err(PyErr::from)?,
            ),
            Var::Function(_) => Some(
                py.import("types")?
                    .getattr("FunctionType")?
                    .cast_into::<PyType>()
                    .map_err(PyErr::from)?,
            ),
            Var::BoundMethod { .. } => Some(
                py.import("types")?
                    .getattr("MethodType")?
                    .cast_into::<PyType>()
                    .map_err(PyErr::from)?,
            ),
            _ => None,
        })
    }
}

/// The Python values to compare `keys` by: the keys themselves, or, for tuples whose first items
/// are Python values that all differ (`sorted(d.items())` with tensor values), those first
/// items, since a tuple comparison decided there never looks further. `None` when comparing
/// them would compare tensors.
impl Frame<'_, '_> {
    /// `min`/`max`/`sorted` over keys compared by their own operators (user `__lt__`, inlined):
    /// each comparison is traced, and its truth must be known at trace time (a tensor's is
    /// data-dependent: the graph breaks). The comparisons are CPython's, in its order, so a
    /// `__lt__` with side effects runs as in eager: `min`/`max` compare each item with the best
    /// so far (`item < best`, `item > best`); `sorted` is list.sort's binary insertion after its
    /// first run (the lists a trace meets are shorter than its 64-item merge threshold), with
    /// `reverse` done by reversing before and after.
    fn order_traced(
        &mut self,
        name: &str,
        items: Vec<Var>,
        keys: Vec<Var>,
        reverse: bool,
    ) -> Result<Var, TraceError> {
        let lt = |f: &mut Self, a: &Var, b: &Var, op: &str| -> Result<bool, TraceError> {
            let r = f.operator(op, vec![a.clone(), b.clone()])?;
            f.truth(&r)
        };
        if name != "sorted" {
            if items.is_empty() {
                return Err(TraceError::unsupported(format!(
                    "{name}() of an empty sequence (the frame raises ValueError)"
                )));
            }
            let op = if name == "min" { "lt" } else { "gt" };
            let mut best = 0;
            for j in 1..items.len() {
                if lt(self, &keys[j], &keys[best], op)? {
                    best = j;
                }
            }
            return Ok(items[best].clone());
        }
        if items.len() >= 64 {
            return Err(TraceError::unsupported(
                "sorted() of 64 or more items compared by their own operators",
            ));
        }
        let mut order: Vec<usize> = (0..items.len()).collect();
        if reverse {
            order.reverse();
        }
        let n = order.len();
        if n > 1 {
            // The first run: ascending, or strictly descending (then reversed in place).
            let mut run = 2;
            if lt(self, &keys[order[1]], &keys[order[0]], "lt")? {
                while run < n && lt(self, &keys[order[run]], &keys[order[run - 1]], "lt")? {
                    run += 1;
                }
                order[..run].reverse();
            } else {
                while run < n && !lt(self, &keys[order[run]], &keys[order[run - 1]], "lt")? {
                    run += 1;
                }
            }
            // Binary insertion of the rest.
            for start in run..n {
                let pivot = order[start];
                let (mut l, mut r) = (0, start);
                while l < r {
                    let p = l + ((r - l) >> 1);
                    if lt(self, &keys[pivot], &keys[order[p]], "lt")? {
                        r = p;
                    } else {
                        l = p + 1;
                    }
                }
                order[l..=start].rotate_right(1);
            }
        }
        if reverse {
            order.reverse();
        }
        Ok(Var::list(
            order.into_iter().map(|j| items[j].clone()).collect(),
        ))
    }
}

fn python_keys<'py>(py: Python<'py>, keys: &[Var]) -> Option<Vec<Bound<'py, PyAny>>> {
    if let Some(all) = keys.iter().map(|k| k.as_py(py)).collect::<Option<Vec<_>>>() {
        return Some(all);
    }
    let firsts: Vec<Bound<'py, PyAny>> = keys
        .iter()
        .map(|k| match k {
            Var::Tuple(items) => items.first().and_then(|f| f.as_py(py)),
            _ => None,
        })
        .collect::<Option<Vec<_>>>()?;
    for (i, a) in firsts.iter().enumerate() {
        for b in &firsts[..i] {
            if a.eq(b).unwrap_or(true) {
                return None;
            }
        }
    }
    Some(firsts)
}

/// Whether reading `name` from a known object fails (for `getattr` defaults and `hasattr`).
fn has_no_attr(py: Python<'_>, obj: &Var, name: &str) -> bool {
    if let Var::Object(o) = obj {
        return matches!(crate::interp::object_has_attr(py, o, name), Ok(Some(false)));
    }
    match obj.as_py(py) {
        Some(o) => !o.hasattr(name).unwrap_or(false),
        None => false,
    }
}

/// A tracked value's class as a type object.
fn as_type<'py>(py: Python<'py>, cls: &Py<PyAny>) -> PyResult<Bound<'py, PyType>> {
    Ok(cls.bind(py).clone().cast_into::<PyType>()?)
}

/// Calls that look at the calling frame itself, by `(module, name)`: a frame object, the
/// call stack, a debugger or a trace function. No graph break can hand them the frame they
/// expect (the code that would run them is torchferro's, whose locals are not the user's), so
/// the frame that makes them runs eagerly.
const FRAME_INTROSPECTION: &[(&str, &str)] = &[
    ("sys", "_getframe"),
    ("sys", "_current_frames"),
    ("sys", "settrace"),
    ("sys", "setprofile"),
    ("inspect", "currentframe"),
    ("inspect", "stack"),
    ("inspect", "trace"),
    ("inspect", "getouterframes"),
    ("inspect", "getframeinfo"),
    ("traceback", "extract_stack"),
    ("traceback", "format_stack"),
    ("traceback", "print_stack"),
    ("traceback", "walk_stack"),
    ("pdb", "set_trace"),
    ("pdb", "post_mortem"),
    ("ipdb", "set_trace"),
    ("builtins", "breakpoint"),
    ("threading", "settrace"),
    ("threading", "setprofile"),
];

impl Frame<'_, '_> {
    /// `locals()`, `vars()` and `dir()` without arguments, and calls that inspect the frame.
    /// The first two become a new dict of the frame's bound variables (as eager's frame shows
    /// them: plain locals, then cells' and free variables' contents, in slot order), so no
    /// generated code is ever asked for its locals. `eval`/`exec` without their own namespace,
    /// and the calls in [`FRAME_INTROSPECTION`], make the frame run eagerly.
    pub(super) fn frame_builtin(
        &mut self,
        module: &str,
        name: &str,
        args: &[Var],
        kwargs: &[(String, Var)],
    ) -> Result<Option<Var>, TraceError> {
        let py = self.tx.py;
        let no_args = args.is_empty() && kwargs.is_empty();
        let introspects = FRAME_INTROSPECTION.contains(&(module, name))
            || module == "builtins"
                && (matches!(name, "eval" | "exec")
                    && args.len() < 2
                    && !kwargs.iter().any(|(k, _)| k == "globals" || k == "locals")
                    || name == "dir" && no_args);
        if introspects {
            return Err(TraceError::Introspects(format!(
                "{module}.{name}() inspects the calling frame (at {})",
                self.location()
            )));
        }
        if module != "builtins" || !matches!(name, "locals" | "vars") || !no_args {
            return Ok(None);
        }
        let first_free = self.code.localsplus.len() - self.code.nfree;
        let mut items: Vec<(Py<PyAny>, Var)> = Vec::new();
        let mut names: Vec<String> = Vec::new();
        for i in 0..self.code.localsplus.len() {
            let v = if i >= first_free {
                match self.load_cell(i) {
                    Ok(Var::Cell(c)) => c.borrow().clone(),
                    Ok(v) => Some(v),
                    // An empty free variable is not in eager's `locals()` either.
                    Err(TraceError::Unsupported { .. }) => None,
                    Err(e) => return Err(e),
                }
            } else {
                match &self.locals[i] {
                    Some(Var::Cell(c)) => c.borrow().clone(),
                    Some(v) => Some(v.clone()),
                    None if self.ctx.root
                        && i < self.code.nargs
                        && !self.tx.deleted_args.contains(&i) =>
                    {
                        Some(self.load_local(i)?)
                    }
                    None => None,
                }
            };
            // A name seen twice (an argument that is also a cell, in a resume function's code:
            // the argument slot, then the free variable) keeps its first place and takes the
            // later slot's value, or goes if that one is empty, as eager's `locals()` builds it.
            let name = &self.code.localsplus[i];
            let seen = names.iter().position(|n| n == name);
            match (v, seen) {
                (Some(v), Some(p)) => items[p].1 = v,
                (Some(v), None) => {
                    let key = pyo3::types::PyString::new(py, name);
                    items.push((key.into_any().unbind(), v));
                    names.push(name.clone());
                }
                (None, Some(p)) => {
                    items.remove(p);
                    names.remove(p);
                }
                (None, None) => {}
            }
        }
        Ok(Some(Var::Dict(std::rc::Rc::new(std::cell::RefCell::new(
            items,
        )))))
    }
}
