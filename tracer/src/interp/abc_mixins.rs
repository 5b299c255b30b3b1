//! The `collections.abc` mixin methods of user objects (tracked `Var::Object`s, and real objects
//! read from the frame), modelled through the class's own abstract methods.
//!
//! Iteration, so `for x in obj`, unpacking and the builtins that consume an iterable (`zip`,
//! `enumerate`, `list`, ...) see the values Python's `iter(obj)` would yield. Two protocols:
//! - the class's `__iter__` is the `collections.abc.Sequence` mixin (transformers'
//!   `_PerLayerConfigView`, built by `config.per_layer_config` when a cache is made): the mixin
//!   calls `self[0]`, `self[1]`, ... until one raises `IndexError`. The tracer cannot follow a
//!   raise yet, so it reads `len(self)` and inlines `self[i]` below it: the `Sequence` contract
//!   the ABC's own `__reversed__` and `index` rely on (indices below `len` are items, and the
//!   class's `__getitem__` is what bounds them);
//! - the class's `__iter__` is a plain Python function (not a generator): it is inlined and its
//!   result iterated as any other value.
//!
//! Anything else (a generator `__iter__`, the old `__getitem__`-only protocol, builtin bases)
//! is left to the caller, which breaks the graph as before.
//!
//! `Mapping.get(key, default)` (the mixin `os.environ.get` runs, as transformers' attention
//! helpers do): the class's `__getitem__` inlined, and a `KeyError` it raises (at trace time,
//! or traced: a missing key of a dict it holds) answers `default`, as the mixin's own
//! `try`/`except KeyError` does. A missing key is not
//! guarded (no guard checks absence from an arbitrary mapping yet): setting the variable after
//! the compile is not seen. A library mapping whose `__getitem__` the tracer does not inline
//! (`os.environ`'s, in `os.py`) is read for real at trace time, the value unguarded likewise.

use std::rc::Rc;

use pyo3::prelude::*;

use crate::error::TraceError;

use super::objects::static_lookup as class_lookup;
use super::vars::Var;
use super::Frame;

/// CO_GENERATOR | CO_COROUTINE | CO_ITERABLE_COROUTINE | CO_ASYNC_GENERATOR.
const GENERATOR_FLAGS: u32 = 0x20 | 0x80 | 0x100 | 0x200;

impl Frame<'_, '_> {
    /// The values `iter(v)` yields for a user object (tracked, or a real one read from the
    /// frame, not an `nn.Module`), or `None` when its class iterates in a way the tracer does
    /// not model (the caller then reports the value as not iterable).
    pub(super) fn object_items(&mut self, v: &Var) -> Result<Option<Vec<Var>>, TraceError> {
        let py = self.tx.py;
        let cls = match v {
            Var::Object(o) => o.cls.bind(py).clone(),
            Var::Py(o, _) if !super::pyobj::is_nn_module(py, o.bind(py))? => {
                o.bind(py).get_type().into_any()
            }
            _ => return Ok(None),
        };
        let Some(iter_fn) = class_lookup(&cls, "__iter__")? else {
            return Ok(None);
        };
        let types = py.import("types")?;
        if !iter_fn.is_instance(&types.getattr("FunctionType")?)? {
            return Ok(None);
        }
        let sequence_iter = py
            .import("collections.abc")?
            .getattr("Sequence")?
            .getattr("__dict__")?
            .get_item("__iter__")?;
        if iter_fn.is(&sequence_iter) {
            return self.sequence_items(v, &cls).map(Some);
        }
        let flags: u32 = iter_fn
            .getattr("__code__")?
            .getattr("co_flags")?
            .extract()?;
        if flags & GENERATOR_FLAGS != 0 {
            return Ok(None);
        }
        let it = self.call_dunder(v, &cls, "__iter__", vec![])?;
        let returns_self = match (&it, v) {
            (Var::Object(a), Var::Object(b)) => Rc::ptr_eq(a, b),
            (Var::Py(a, _), Var::Py(b, _)) => a.bind(py).is(b.bind(py)),
            _ => false,
        };
        if returns_self {
            // `__iter__` returning `self` makes an iterator driven by `__next__`.
            return Ok(None);
        }
        self.iterate(it).map(Some)
    }

    /// `collections.abc.Sequence.__iter__`: `self[i]` for every `i` below `len(self)`, with
    /// the class's `__len__` and `__getitem__` inlined.
    fn sequence_items(&mut self, v: &Var, cls: &Bound<'_, PyAny>) -> Result<Vec<Var>, TraceError> {
        let py = self.tx.py;
        let n = self.call_dunder(v, cls, "__len__", vec![])?;
        let n: i64 = n
            .as_py(py)
            .and_then(|n| n.extract().ok())
            .ok_or_else(|| TraceError::unsupported("__len__ returned a value not an int"))?;
        let mut out = Vec::with_capacity(n.max(0) as usize);
        for i in 0..n {
            out.push(self.call_dunder(v, cls, "__getitem__", vec![Var::py_const(py, i)])?);
        }
        Ok(out)
    }

    /// `len(v)` of a real user object read from the frame whose class's `__len__` is Python
    /// code the tracer inlines: inlined, so what it reads is guarded through its own source and
    /// the object's identity stays unguarded (a view made afresh on every call, such as
    /// `config.per_layer_config`, does not recompile). `None` otherwise (folded as before).
    pub(super) fn user_len(&mut self, v: &Var) -> Result<Option<Var>, TraceError> {
        let py = self.tx.py;
        let Var::Py(o, Some(_)) = v else {
            return Ok(None);
        };
        let o = o.bind(py);
        if super::pyobj::is_nn_module(py, o)? {
            return Ok(None);
        }
        let cls = o.get_type().into_any();
        let function_type = py.import("types")?.getattr("FunctionType")?;
        match class_lookup(&cls, "__len__")? {
            Some(f) if f.is_instance(&function_type)? && self.inlinable(&f)? => {
                self.call_dunder(v, &cls, "__len__", vec![]).map(Some)
            }
            _ => Ok(None),
        }
    }

    /// `collections.abc.Mapping.get(v, key, default=None)` (see the module documentation);
    /// `None` when `func` is not that mixin.
    pub(super) fn mapping_get(
        &mut self,
        func: &Var,
        v: &Var,
        args: &[Var],
        kwargs: &[(String, Var)],
    ) -> Result<Option<Var>, TraceError> {
        let py = self.tx.py;
        let Some(f) = func.as_py(py) else {
            return Ok(None);
        };
        let mixin = py
            .import("collections.abc")?
            .getattr("Mapping")?
            .getattr("__dict__")?
            .get_item("get")?;
        if !f.is(&mixin) || !kwargs.is_empty() || args.is_empty() || args.len() > 2 {
            return Ok(None);
        }
        let cls = match v {
            Var::Object(o) => o.cls.bind(py).clone(),
            Var::Py(o, _) => o.bind(py).get_type().into_any(),
            _ => return Ok(None),
        };
        if let (Var::Py(real, _), Some(key)) = (v, args[0].as_py(py)) {
            let getitem = class_lookup(&cls, "__getitem__")?;
            let library = match &getitem {
                Some(g) if g.hasattr("__code__")? => !self.inlinable(g)?,
                _ => true,
            };
            if library {
                // A library mapping (`os.environ`): its item read runs for real on this very
                // object, as the tracer does not inline library code.
                self.tx.realize_identity(v);
                return match real.bind(py).get_item(&key) {
                    Ok(x) => self.tx.wrap(x, None).map(Some),
                    Err(e) if e.is_instance_of::<pyo3::exceptions::PyKeyError>(py) => {
                        Ok(Some(args.get(1).cloned().unwrap_or_else(|| Var::none(py))))
                    }
                    Err(e) => Err(e.into()),
                };
            }
        }
        match self.call_dunder(v, &cls, "__getitem__", vec![args[0].clone()]) {
            Err(TraceError::UserError { error, .. })
                if error.is_instance_of::<pyo3::exceptions::PyKeyError>(py) =>
            {
                Ok(Some(args.get(1).cloned().unwrap_or_else(|| Var::none(py))))
            }
            // Raised by the traced `__getitem__` (a missing key of a dict it holds, whose keys
            // the trace guards): the mixin's `except KeyError` answers `default`.
            Err(TraceError::Raised { exc, .. })
                if exc
                    .bind(py)
                    .is_instance_of::<pyo3::exceptions::PyKeyError>() =>
            {
                Ok(Some(args.get(1).cloned().unwrap_or_else(|| Var::none(py))))
            }
            r => r.map(Some),
        }
    }

    /// `type(v).<dunder>(v, *args)`, the class's Python function inlined. A tracked object
    /// goes through `object_operator` (methods guarded through the class's source); a real
    /// object's method is read through `v.__class__`, which its type guard already pins.
    fn call_dunder(
        &mut self,
        v: &Var,
        cls: &Bound<'_, PyAny>,
        dunder: &str,
        args: Vec<Var>,
    ) -> Result<Var, TraceError> {
        let py = self.tx.py;
        if let Var::Object(o) = v {
            let op = dunder.trim_start_matches("__").trim_end_matches("__");
            return self.object_operator(&o.clone(), op, args);
        }
        let function_type = py.import("types")?.getattr("FunctionType")?;
        let f = match class_lookup(cls, dunder)? {
            Some(f) if f.is_instance(&function_type)? => f,
            _ => {
                return Err(TraceError::unsupported(format!(
                    "{dunder} of a {} (not a Python function)",
                    v.type_name(py)
                )))
            }
        };
        let func = self.tx.wrap(f, None)?;
        let method = Var::BoundMethod {
            func: Box::new(func),
            self_: Box::new(v.clone()),
        };
        self.call(method, args, vec![])
    }
}

/// Whether `name` on a tracked object is a property with a getter (`hasattr` then runs it).
pub(crate) fn object_attr_is_property(
    py: Python<'_>,
    o: &super::vars::ObjectVar,
    name: &str,
) -> PyResult<bool> {
    match class_lookup(o.cls.bind(py), name)? {
        Some(raw) => Ok(
            raw.is_instance(&py.import("builtins")?.getattr("property")?)?
                && !raw.getattr("fget")?.is_none(),
        ),
        None => Ok(false),
    }
}
