//! `functools` and `operator` objects: `partial` made in the frame (a `Var::Library`), `lru_cache`/`cache` wrappers traced
//! through `__wrapped__` (the cache is neither read nor filled: the traced call computes what the
//! cache would hold), `singledispatch` functions dispatched on the argument's (guarded) type,
//! `itemgetter`/`attrgetter`/`methodcaller` objects, and the `operator` functions that mutate or
//! read containers (`setitem`, `delitem`, `getitem`, `contains`, `truth`, `is_`, `iadd`, ...)
//! performed on the trackers as the statements they stand for.

use std::cell::RefCell;
use std::rc::Rc;

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};

use crate::error::TraceError;
use crate::interp::vars::LibObj;
use crate::interp::vars::Var;
use crate::interp::Frame;
use crate::source::Source;

fn unsupported(reason: impl Into<String>) -> TraceError {
    TraceError::unsupported(reason)
}

impl Frame<'_, '_> {
    /// `functools`/`operator` callables and objects; `None` when `f` is none of them.
    pub(in crate::interp) fn functools_call(
        &mut self,
        f: &Bound<'_, PyAny>,
        src: Option<&Source>,
        module: &str,
        name: &str,
        args: &[Var],
        kwargs: &[(String, Var)],
    ) -> Result<Option<Var>, TraceError> {
        let py = self.tx.py;
        let functools = py.import("functools")?;
        let operator = py.import("operator")?;
        let ty = f.get_type();
        if f.is(&functools.getattr("partial")?) {
            return self.make_partial(f, args, kwargs).map(Some);
        }
        // `lru_cache`/`cache`: the wrapped function, traced.
        if ty.is(&functools.getattr("_lru_cache_wrapper")?) {
            let inner = f.getattr("__wrapped__")?;
            let inner = self
                .tx
                .wrap(inner, src.map(|s| s.attr(py, "__wrapped__")))?;
            return self.call(inner, args.to_vec(), kwargs.to_vec()).map(Some);
        }
        if is_singledispatch(py, f)? {
            let Some(first) = args.first() else {
                return Err(unsupported(
                    "a singledispatch function called without arguments",
                ));
            };
            let cls = self.type_of(first)?.ok_or_else(|| {
                unsupported(format!(
                    "singledispatch on a {} (its type is not known)",
                    first.type_name(py)
                ))
            })?;
            let imp = f.call_method1("dispatch", (cls,))?;
            return self
                .call(Var::Py(imp.unbind(), None), args.to_vec(), kwargs.to_vec())
                .map(Some);
        }
        for getter in ["itemgetter", "attrgetter", "methodcaller"] {
            let cls = operator.getattr(getter)?;
            if f.is(&cls) {
                // Built from constants: the real object (it is immutable).
                if let Some(r) = self.fold(f, args, kwargs)? {
                    return Ok(Some(r));
                }
                let name = match args.first().and_then(|n| n.as_py(py)) {
                    Some(n) if getter == "methodcaller" => n.extract::<String>()?,
                    _ => return Err(unsupported(format!("operator.{getter} of traced values"))),
                };
                return Ok(Some(Var::Library(Rc::new(RefCell::new(
                    LibObj::MethodCaller {
                        name,
                        args: args[1..].to_vec(),
                        kwargs: kwargs.to_vec(),
                    },
                )))));
            }
            if ty.is(&cls) {
                return self.call_getter(f, getter, args, kwargs).map(Some);
            }
        }
        if module == "_operator" || module == "operator" {
            return self.operator_call(name, args, kwargs);
        }
        Ok(None)
    }

    /// `partial(func, *args, **kwargs)` made in the frame: a tracked one (the real object would
    /// hold the tracer's values, and bound methods of modules it cannot wrap again). A partial
    /// of a partial is flattened, as the real constructor does.
    fn make_partial(
        &mut self,
        f: &Bound<'_, PyAny>,
        args: &[Var],
        kwargs: &[(String, Var)],
    ) -> Result<Var, TraceError> {
        let py = self.tx.py;
        let Some((func, rest)) = args.split_first() else {
            return Err(unsupported("functools.partial() without a function"));
        };
        let (mut func, mut pargs, mut pkw) = (func.clone(), Vec::new(), Vec::new());
        let inner = match &func {
            Var::Library(l) => match &*l.borrow() {
                LibObj::Partial { func, args, kwargs } => {
                    Some((func.clone(), args.clone(), kwargs.clone()))
                }
                _ => None,
            },
            _ => None,
        };
        if let Some((f2, a, k)) = inner {
            pargs = a;
            pkw = k;
            func = f2;
        } else if let Var::Py(o, src) = &func {
            let o = o.bind(py).clone();
            if o.get_type().is(f) {
                let s = |a: &str| src.as_ref().map(|s| s.attr(py, a));
                let inner = self.tx.wrap(o.getattr("func")?, s("func"))?;
                let a = self.tx.wrap(o.getattr("args")?, s("args"))?;
                let k = self.tx.wrap(o.getattr("keywords")?, s("keywords"))?;
                pargs = a.items(py).unwrap_or_default();
                pkw = dict_pairs(py, &k)?;
                func = inner;
            }
        }
        pargs.extend(rest.iter().cloned());
        for (k, v) in kwargs {
            pkw.retain(|(k2, _)| k2 != k);
            pkw.push((k.clone(), v.clone()));
        }
        Ok(Var::Library(Rc::new(RefCell::new(LibObj::Partial {
            func,
            args: pargs,
            kwargs: pkw,
        }))))
    }

    /// Calling a tracked `Var::Library`: a partial calls its function.
    pub(in crate::interp) fn call_library(
        &mut self,
        l: &Rc<RefCell<LibObj>>,
        args: Vec<Var>,
        kwargs: Vec<(String, Var)>,
    ) -> Result<Var, TraceError> {
        let caller = match &*l.borrow() {
            LibObj::MethodCaller { name, args, kwargs } => {
                Some((name.clone(), args.clone(), kwargs.clone()))
            }
            _ => None,
        };
        if let Some((name, margs, mkw)) = caller {
            let [obj] = args.as_slice() else {
                return Err(unsupported(
                    "operator.methodcaller called with these arguments",
                ));
            };
            if !kwargs.is_empty() {
                return Err(unsupported("operator.methodcaller called with keywords"));
            }
            let m = self.load_method(obj.clone(), &name)?;
            return self.call(m, margs, mkw);
        }
        let (func, mut all, mut kw) = match &*l.borrow() {
            LibObj::Partial { func, args, kwargs } => (func.clone(), args.clone(), kwargs.clone()),
            other => {
                return Err(unsupported(format!(
                    "calling a {} (the frame raises TypeError)",
                    other.type_name()
                )))
            }
        };
        all.extend(args);
        for (k, v) in kwargs {
            kw.retain(|(k2, _)| *k2 != k);
            kw.push((k, v));
        }
        self.call(func, all, kw)
    }

    /// Attributes of a tracked `Var::Library`: `func`, `args`, `keywords` of a partial.
    pub(in crate::interp) fn library_attr(
        &mut self,
        l: &Rc<RefCell<LibObj>>,
        name: &str,
    ) -> Result<Var, TraceError> {
        let py = self.tx.py;
        let o = l.borrow();
        match (&*o, name) {
            (LibObj::Partial { func, .. }, "func") => Ok(func.clone()),
            (LibObj::Partial { args, .. }, "args") => Ok(Var::Tuple(args.clone().into())),
            (LibObj::Partial { kwargs, .. }, "keywords") => {
                let items = kwargs
                    .iter()
                    .map(|(k, v)| {
                        (
                            pyo3::types::PyString::new(py, k).into_any().unbind(),
                            v.clone(),
                        )
                    })
                    .collect();
                Ok(Var::Dict(Rc::new(RefCell::new(items))))
            }
            (o, _) => Err(unsupported(format!(
                "attribute '{name}' of a {}",
                o.type_name()
            ))),
        }
    }

    /// Calling an `itemgetter`/`attrgetter`/`methodcaller`, from what `__reduce__` says it
    /// holds (its items, names, or method name and arguments).
    fn call_getter(
        &mut self,
        g: &Bound<'_, PyAny>,
        kind: &str,
        args: &[Var],
        kwargs: &[(String, Var)],
    ) -> Result<Var, TraceError> {
        let py = self.tx.py;
        let [obj] = args else {
            return Err(unsupported(format!(
                "operator.{kind} called with these arguments"
            )));
        };
        if !kwargs.is_empty() {
            return Err(unsupported(format!("operator.{kind} called with keywords")));
        }
        let red = g.call_method0("__reduce__")?;
        let ctor = red.get_item(0)?;
        let held = red
            .get_item(1)?
            .cast_into::<PyTuple>()
            .map_err(PyErr::from)?;
        match kind {
            "itemgetter" => {
                let mut out = Vec::new();
                for k in held.iter() {
                    let k = self.tx.wrap(k, None)?;
                    out.push(self.subscript(obj.clone(), k)?);
                }
                Ok(if out.len() == 1 {
                    out.pop().unwrap()
                } else {
                    Var::Tuple(out.into())
                })
            }
            "attrgetter" => {
                let mut out = Vec::new();
                for n in held.iter() {
                    let n: String = n.extract()?;
                    let mut v = obj.clone();
                    for part in n.split('.') {
                        v = self.getattr(v, part)?;
                    }
                    out.push(v);
                }
                Ok(if out.len() == 1 {
                    out.pop().unwrap()
                } else {
                    Var::Tuple(out.into())
                })
            }
            _ => {
                // `methodcaller(name, *args)` reduces to `(methodcaller, (name, *args))`; with
                // keywords, to `(partial(methodcaller, name, **kw), args)`.
                let (name, margs, mkw) = if ctor.is_instance_of::<pyo3::types::PyType>() {
                    let name: String = held.get_item(0)?.extract()?;
                    let rest: Vec<_> = held.iter().skip(1).collect();
                    (name, rest, PyDict::new(py))
                } else {
                    let pargs = ctor
                        .getattr("args")?
                        .cast_into::<PyTuple>()
                        .map_err(PyErr::from)?;
                    let name: String = pargs.get_item(0)?.extract()?;
                    let kw = ctor
                        .getattr("keywords")?
                        .cast_into::<PyDict>()
                        .map_err(PyErr::from)?;
                    (name, held.iter().collect(), kw)
                };
                let m = self.load_method(obj.clone(), &name)?;
                let mut a = Vec::new();
                for x in margs {
                    a.push(self.tx.wrap(x, None)?);
                }
                let mut k = Vec::new();
                for (key, v) in mkw.iter() {
                    k.push((key.extract::<String>()?, self.tx.wrap(v, None)?));
                }
                self.call(m, a, k)
            }
        }
    }

    /// `operator` functions that stand for statements or tests on containers; the arithmetic
    /// ones are left to `Frame::operator` (`None`).
    fn operator_call(
        &mut self,
        name: &str,
        args: &[Var],
        kwargs: &[(String, Var)],
    ) -> Result<Option<Var>, TraceError> {
        let py = self.tx.py;
        if !kwargs.is_empty() {
            return Ok(None);
        }
        let name = name.trim_start_matches("__").trim_end_matches("__");
        let r = match (name, args) {
            ("setitem", [obj, key, value]) => {
                self.store_subscript(obj.clone(), key.clone(), value.clone())?;
                Var::none(py)
            }
            ("getitem", [obj, key]) => self.subscript(obj.clone(), key.clone())?,
            ("delitem", [obj, key]) => {
                self.delete_subscript(obj.clone(), key.clone())?;
                Var::none(py)
            }
            ("contains", [a, b]) => self.contains_op(b.clone(), a.clone(), false)?,
            ("truth", [v]) => Var::py_const(py, self.truth(v)?),
            ("not_", [v]) => Var::py_const(py, !self.truth(v)?),
            ("is_", [a, b]) => self.is_op(a.clone(), b.clone(), false)?,
            ("is_not", [a, b]) => self.is_op(a.clone(), b.clone(), true)?,
            ("call", [f, rest @ ..]) => self.call(f.clone(), rest.to_vec(), vec![])?,
            ("length_hint", [Var::Iter(it)]) | ("length_hint", [Var::Iter(it), _]) => {
                let it = it.borrow();
                Var::py_const(py, it.0.len().saturating_sub(it.1) as i64)
            }
            // `a += b` / `operator.iconcat` on a tracked list extends it in place.
            ("iadd" | "iconcat", [Var::List(l), other]) => {
                let items = self.drain(other.clone())?;
                // An input list's growth is replayed after the graph, as `xs += ys`'s is.
                self.tx.note_list_mutation(l);
                l.borrow_mut().extend(items);
                Var::List(l.clone())
            }
            ("add" | "concat", [Var::List(a), Var::List(b)]) => {
                let mut items = a.borrow().clone();
                items.extend(b.borrow().iter().cloned());
                Var::list(items)
            }
            ("add" | "concat", [Var::Tuple(a), Var::Tuple(b)]) => {
                Var::Tuple(a.iter().chain(b.iter()).cloned().collect::<Vec<_>>().into())
            }
            _ => return Ok(None),
        };
        Ok(Some(r))
    }
}

/// The `(name, value)` pairs of a tracked `keywords` dict.
pub(super) fn dict_pairs(py: Python<'_>, d: &Var) -> Result<Vec<(String, Var)>, TraceError> {
    match d {
        Var::Dict(d) => d
            .borrow()
            .iter()
            .map(|(k, v)| Ok((k.bind(py).extract::<String>()?, v.clone())))
            .collect(),
        Var::Py(o, _) => {
            let mut out = Vec::new();
            for (k, v) in o.bind(py).cast::<PyDict>().map_err(PyErr::from)?.iter() {
                out.push((k.extract::<String>()?, Var::Py(v.unbind(), None)));
            }
            Ok(out)
        }
        _ => Ok(Vec::new()),
    }
}

/// A `functools.singledispatch` function: the library's wrapper, with `dispatch` and `registry`.
fn is_singledispatch(py: Python<'_>, f: &Bound<'_, PyAny>) -> PyResult<bool> {
    if !f.is_instance(&py.import("types")?.getattr("FunctionType")?)? {
        return Ok(false);
    }
    let file: String = f.getattr("__code__")?.getattr("co_filename")?.extract()?;
    Ok(file.ends_with("functools.py") && f.hasattr("dispatch")? && f.hasattr("registry")?)
}
