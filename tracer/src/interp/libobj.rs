//! Objects of `itertools` and `functools` made by the traced code that cannot be built as a
//! finite list of items at once: the endless iterators (`count`, `cycle`, `repeat` without
//! `times`), pulled one item at a time by whatever consumes them (`zip`, `islice`, a `for` loop
//! that breaks), and a `functools.partial` whose bound arguments are traced values (tensors).
//! Finite iterators (`map`, `zip`, `chain`, ...) are a `Var::Iter` of their items instead.

use pyo3::prelude::*;
use pyo3::types::PyDict;

use super::vars::{LibObj, Var};

impl LibObj {
    /// Its Python type's qualified name, for messages.
    pub fn type_name(&self) -> &'static str {
        match self {
            LibObj::Count { .. } => "itertools.count",
            LibObj::Cycle { .. } => "itertools.cycle",
            LibObj::Repeat(_) => "itertools.repeat",
            LibObj::Partial { .. } => "functools.partial",
            LibObj::MethodCaller { .. } => "operator.methodcaller",
        }
    }

    /// Whether it is an (endless) iterator, as opposed to a callable.
    pub fn is_iterator(&self) -> bool {
        !matches!(self, LibObj::Partial { .. } | LibObj::MethodCaller { .. })
    }

    /// Its Python type: `(module, name)`.
    pub fn py_type(&self) -> (&'static str, &'static str) {
        match self {
            LibObj::Count { .. } => ("itertools", "count"),
            LibObj::Cycle { .. } => ("itertools", "cycle"),
            LibObj::Repeat(_) => ("itertools", "repeat"),
            LibObj::Partial { .. } => ("functools", "partial"),
            LibObj::MethodCaller { .. } => ("operator", "methodcaller"),
        }
    }
}

/// How to make a [`LibObj`] again after the graph: `callable(*args, **kwargs)`.
pub struct Rebuild {
    pub callable: Py<PyAny>,
    pub args: Vec<Var>,
    pub kwargs: Vec<(String, Var)>,
}

/// The call that makes `o` again in its current state (a `cycle` resumes where it was).
pub fn rebuild(py: Python<'_>, o: &LibObj) -> PyResult<Rebuild> {
    let (module, name) = o.py_type();
    let callable = py.import(module)?.getattr(name)?.unbind();
    let (args, kwargs) = match o {
        LibObj::Count { next, step } => (
            vec![
                Var::Py(next.clone_ref(py), None),
                Var::Py(step.clone_ref(py), None),
            ],
            Vec::new(),
        ),
        LibObj::Cycle { items, pos } => {
            let k = pos % items.len();
            let rotated: Vec<Var> = items[k..].iter().chain(&items[..k]).cloned().collect();
            (vec![Var::Tuple(rotated.into())], Vec::new())
        }
        LibObj::Repeat(v) => (vec![v.clone()], Vec::new()),
        LibObj::Partial { func, args, kwargs } => {
            let mut all = vec![func.clone()];
            all.extend(args.iter().cloned());
            (all, kwargs.clone())
        }
        LibObj::MethodCaller { name, args, kwargs } => {
            let mut all = vec![Var::py_const(py, name.as_str())];
            all.extend(args.iter().cloned());
            (all, kwargs.clone())
        }
    };
    Ok(Rebuild {
        callable,
        args,
        kwargs,
    })
}

/// `with_attrs(f, attrs)`: `f` with `attrs` set in its `__dict__`, returned (a function the
/// trace made and gave attributes, rebuilt after the graph).
pub fn with_attrs(py: Python<'_>) -> PyResult<Py<PyAny>> {
    let ns = PyDict::new(py);
    py.run(
        c"def with_attrs(f, attrs):\n    f.__dict__.update(attrs)\n    return f\n",
        Some(&ns),
        None,
    )?;
    Ok(ns
        .get_item("with_attrs")?
        .ok_or_else(|| pyo3::exceptions::PyRuntimeError::new_err("with_attrs"))?
        .unbind())
}

/// `call(f, args, kwargs)` = `f(*args, **kwargs)`, for output templates that rebuild objects
/// taking keywords.
pub fn call_with_keywords(py: Python<'_>) -> PyResult<Py<PyAny>> {
    let ns = PyDict::new(py);
    py.run(
        c"def call(f, args, kwargs):\n    return f(*args, **kwargs)\n",
        Some(&ns),
        None,
    )?;
    Ok(ns
        .get_item("call")?
        .ok_or_else(|| pyo3::exceptions::PyRuntimeError::new_err("call"))?
        .unbind())
}
