//! `torch.utils._pytree`'s `tree_flatten`, `tree_unflatten`, `tree_leaves` and `tree_map` over
//! traced values (torchvision's transforms v2 flatten their inputs in every `forward`; user code
//! maps over batches). torch.compile inlines the Python pytree module; here its structure is
//! computed by torch's own functions on a skeleton: each traced container is rebuilt as a Python
//! container of the same type whose leaves are fresh sentinel objects, torch flattens or
//! unflattens that, and the sentinels are mapped back to the traced leaves. The `TreeSpec` that
//! comes out is a constant of the trace: it depends only on the containers' structure, which the
//! trace already knows (a container read from the frame has its length and keys guarded where
//! it was read). Anything the skeleton cannot stand for (a registered node type the tracer keeps
//! as its own tracker, an `is_leaf` callback, several trees for `tree_map`) is left to the
//! generic call path (a graph break).

use std::cell::RefCell;
use std::rc::Rc;

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};

use crate::error::TraceError;
use crate::interp::vars::{dict_kind, fresh_tuple, list_kind, Var};
use crate::interp::Frame;

/// The sentinels standing for the leaves of one skeleton, in the order they were made.
struct Leaves {
    sentinels: Vec<Py<PyAny>>,
    vars: Vec<Var>,
}

impl Leaves {
    fn new() -> Leaves {
        Leaves {
            sentinels: Vec::new(),
            vars: Vec::new(),
        }
    }

    /// A fresh sentinel standing for `v`.
    fn leaf(&mut self, py: Python<'_>, v: Var) -> PyResult<Py<PyAny>> {
        let s = py.import("builtins")?.getattr("object")?.call0()?.unbind();
        self.sentinels.push(s.clone_ref(py));
        self.vars.push(v);
        Ok(s)
    }

    /// The traced leaf a sentinel stands for.
    fn var_of(&self, py: Python<'_>, o: &Bound<'_, PyAny>) -> Option<Var> {
        let i = self.sentinels.iter().position(|s| s.bind(py).is(o))?;
        Some(self.vars[i].clone())
    }
}

/// Whether objects of `ty` are pytree nodes (`SUPPORTED_NODES`, namedtuples included).
fn is_node_type(py: Python<'_>, ty: &Bound<'_, PyAny>) -> PyResult<bool> {
    let pytree = py.import("torch.utils._pytree")?;
    if pytree.getattr("SUPPORTED_NODES")?.contains(ty)? {
        return Ok(true);
    }
    pytree
        .getattr("is_namedtuple_class")
        .and_then(|f| f.call1((ty,)))
        .and_then(|r| r.is_truthy())
}

/// The skeleton of `v`: its containers rebuilt with a sentinel for each leaf; `None` where a
/// part of it has no skeleton (a node type kept as another tracker, a user container class).
fn skeleton(py: Python<'_>, v: &Var, leaves: &mut Leaves) -> PyResult<Option<Py<PyAny>>> {
    let parts = |items: &[Var], leaves: &mut Leaves| -> PyResult<Option<Vec<Py<PyAny>>>> {
        let mut out = Vec::with_capacity(items.len());
        for i in items {
            match skeleton(py, i, leaves)? {
                Some(s) => out.push(s),
                None => return Ok(None),
            }
        }
        Ok(Some(out))
    };
    Ok(match v {
        Var::Tuple(items) => {
            { parts(items, leaves)?.map(|p| PyTuple::new(py, p).map(|t| t.into_any().unbind())) }
                .transpose()?
        }
        Var::List(l) if list_kind(l).is_none() => {
            let items = l.borrow().clone();
            parts(&items, leaves)?
                .map(|p| PyList::new(py, p).map(|t| t.into_any().unbind()))
                .transpose()?
        }
        Var::Dict(d) if dict_kind(d).is_none() => {
            let items: Vec<(Py<PyAny>, Var)> = d.borrow().clone();
            let out = PyDict::new(py);
            for (k, item) in items {
                match skeleton(py, &item, leaves)? {
                    Some(s) => out.set_item(k.bind(py), s)?,
                    None => return Ok(None),
                }
            }
            Some(out.into_any().unbind())
        }
        Var::NamedTuple { ty, items } => match parts(items, leaves)? {
            Some(p) => {
                let t = PyTuple::new(py, p)?;
                Some(crate::interp::pyobj::build_named_tuple(ty.bind(py), t)?.unbind())
            }
            None => None,
        },
        // `None` is a node with no children where torch registers it so, else a leaf (torch
        // 2.11's Python pytree maps a function over it).
        Var::Py(o, _) if o.is_none(py) && is_node_type(py, &py.None().bind(py).get_type())? => {
            Some(py.None())
        }
        Var::Py(o, _) if o.is_none(py) => Some(leaves.leaf(py, v.clone())?),
        Var::Py(o, _) if is_node_type(py, &o.bind(py).get_type().into_any())? => None,
        Var::Object(o) if is_node_type(py, o.cls.bind(py))? => None,
        Var::Tensor(_) | Var::SymInt(..) | Var::Py(..) | Var::Object(_) => {
            Some(leaves.leaf(py, v.clone())?)
        }
        _ => None,
    })
}

/// The traced value of a structure torch's `tree_unflatten` built over sentinels: new
/// containers (a tuple, list or dict the call made), the traced leaves for the sentinels;
/// `None` for a container type the tracer would not make so.
fn from_skeleton(py: Python<'_>, o: &Bound<'_, PyAny>, leaves: &Leaves) -> PyResult<Option<Var>> {
    if let Some(v) = leaves.var_of(py, o) {
        return Ok(Some(v));
    }
    let items = |seq: &Bound<'_, PyAny>| -> PyResult<Option<Vec<Var>>> {
        let mut out = Vec::new();
        for i in seq.try_iter()? {
            match from_skeleton(py, &i?, leaves)? {
                Some(v) => out.push(v),
                None => return Ok(None),
            }
        }
        Ok(Some(out))
    };
    let ty = o.get_type();
    // A key or context value the structure holds (never a container: those come below).
    if crate::interp::pyobj::is_const_type(o) {
        return Ok(Some(Var::Py(o.clone().unbind(), None)));
    }
    if ty.is(py.get_type::<PyTuple>()) {
        return Ok(items(o)?.map(fresh_tuple));
    }
    if ty.is(py.get_type::<PyList>()) {
        return Ok(items(o)?.map(Var::list));
    }
    if ty.is(py.get_type::<PyDict>()) {
        let mut out = Vec::new();
        for (k, item) in o.cast::<PyDict>()?.iter() {
            match from_skeleton(py, &item, leaves)? {
                Some(v) => out.push((k.unbind(), v)),
                None => return Ok(None),
            }
        }
        return Ok(Some(Var::Dict(Rc::new(RefCell::new(out)))));
    }
    if o.is_instance_of::<PyTuple>()
        && py
            .import("torch.utils._pytree")?
            .getattr("is_namedtuple_class")?
            .call1((&ty,))?
            .is_truthy()?
    {
        return Ok(items(o)?.map(|items| Var::NamedTuple {
            ty: ty.into_any().unbind(),
            items: Rc::new(items),
        }));
    }
    Ok(None)
}

/// `tree_flatten(tree)` over a traced value: its leaves in torch's order and the `TreeSpec`;
/// `None` where the value has no skeleton.
fn flatten<'py>(
    pytree: &Bound<'py, PyModule>,
    tree: &Var,
) -> PyResult<Option<(Vec<Var>, Bound<'py, PyAny>)>> {
    let py = pytree.py();
    let mut leaves = Leaves::new();
    let Some(s) = skeleton(py, tree, &mut leaves)? else {
        return Ok(None);
    };
    let r = pytree.getattr("tree_flatten")?.call1((s,))?;
    let (flat, spec): (Bound<'py, PyAny>, Bound<'py, PyAny>) = r.extract()?;
    let mut out = Vec::new();
    for item in flat.try_iter()? {
        match leaves.var_of(py, &item?) {
            Some(v) => out.push(v),
            None => return Ok(None),
        }
    }
    Ok(Some((out, spec)))
}

impl Frame<'_, '_> {
    /// `tree_flatten`/`tree_unflatten`/`tree_leaves`/`tree_map` of `torch.utils._pytree` on
    /// traced values (see the module docs); `None` for any other call, or one left to run
    /// natively.
    pub(super) fn pytree_call(
        &mut self,
        f: &Bound<'_, PyAny>,
        module: &str,
        name: &str,
        args: &[Var],
        kwargs: &[(String, Var)],
    ) -> Result<Option<Var>, TraceError> {
        let py = self.tx.py;
        if module != "torch.utils._pytree" || !kwargs.is_empty() {
            return Ok(None);
        }
        let pytree = py.import("torch.utils._pytree")?;
        // The very function of the module (a same-named wrapper elsewhere is not it).
        match pytree.getattr(name) {
            Ok(g) if g.is(f) => {}
            _ => return Ok(None),
        }
        match (name, args) {
            ("tree_flatten" | "tree_leaves", [tree]) => {
                let Some((out, spec)) = flatten(&pytree, tree)? else {
                    return Ok(None);
                };
                if name == "tree_leaves" {
                    return Ok(Some(Var::list(out)));
                }
                Ok(Some(fresh_tuple(vec![
                    Var::list(out),
                    Var::Py(spec.unbind(), None),
                ])))
            }
            ("tree_unflatten", [values, spec]) => {
                let items = match values {
                    Var::List(l) => l.borrow().clone(),
                    Var::Tuple(t) => t.to_vec(),
                    _ => return Ok(None),
                };
                let Some(spec) = spec.as_py(py) else {
                    return Ok(None);
                };
                if !spec.is_instance(&pytree.getattr("TreeSpec")?)? {
                    return Ok(None);
                }
                self.unflatten(&pytree, items, &spec)
            }
            ("tree_map", [func, tree]) => {
                let Some((order, spec)) = flatten(&pytree, tree)? else {
                    return Ok(None);
                };
                // The function runs on each leaf in the flattened order, as `tree_map` calls it.
                let mut mapped = Vec::with_capacity(order.len());
                for leaf in order {
                    mapped.push(self.call(func.clone(), vec![leaf], vec![])?);
                }
                self.unflatten(&pytree, mapped, &spec)
            }
            _ => Ok(None),
        }
    }

    /// `tree_unflatten(items, spec)` over traced items: torch builds the structure over
    /// sentinels, which are then the items again.
    fn unflatten(
        &mut self,
        pytree: &Bound<'_, PyModule>,
        items: Vec<Var>,
        spec: &Bound<'_, PyAny>,
    ) -> Result<Option<Var>, TraceError> {
        let py = self.tx.py;
        let mut leaves = Leaves::new();
        let mut sentinels = Vec::with_capacity(items.len());
        for v in items {
            sentinels.push(leaves.leaf(py, v)?);
        }
        let built = match pytree
            .getattr("tree_unflatten")?
            .call1((PyList::new(py, sentinels)?, spec))
        {
            Ok(b) => b,
            // A count that does not fit the spec: the call raises natively.
            Err(_) => return Ok(None),
        };
        Ok(from_skeleton(py, &built, &leaves)?)
    }
}
