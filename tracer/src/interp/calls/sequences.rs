//! Tuples and lists that hold tensors: `+`, `*`, `+=`, `*=`, slice assignment and deletion, and
//! the list/tuple methods that compare items (`index`, `count`, `remove`) or order them (`sort`).
//!
//! Sequences of known values fold through their Python form elsewhere; these run on the
//! tracked items so that a list keeps its identity (`xs += ...` extends the list every name for
//! it sees, an input list's mutation is written back after the graph) and tensors stay nodes.

use std::cell::RefCell;
use std::rc::Rc;

use pyo3::prelude::*;
use pyo3::types::{PySlice, PyTuple};

use crate::error::TraceError;
use crate::interp::vars::Var;
use crate::interp::Frame;

type ListItems = Rc<RefCell<Vec<Var>>>;

/// A repeat count `n` of `seq * n` (Python treats a negative count as zero).
fn repeat_count(py: Python<'_>, v: &Var) -> Option<usize> {
    let o = v.as_py(py)?;
    if o.is_instance_of::<pyo3::types::PyBool>() {
        return Some(o.extract::<bool>().ok()? as usize);
    }
    if !o.is_instance_of::<pyo3::types::PyInt>() {
        return None;
    }
    Some(o.extract::<i64>().ok()?.max(0) as usize)
}

/// Items of a plain tuple or list operand (a namedtuple or a size counts as its items: their
/// `+` is tuple's).
/// An int or a symbolic int (not a bool: `True == 1` is left to Python).
fn int_like(py: Python<'_>, v: &Var) -> bool {
    match v {
        Var::SymInt(..) => true,
        Var::Py(o, _) => {
            let o = o.bind(py);
            o.is_instance_of::<pyo3::types::PyInt>() && !o.is_instance_of::<pyo3::types::PyBool>()
        }
        _ => false,
    }
}

fn seq_items(v: &Var) -> Option<Vec<Var>> {
    match v {
        Var::Tuple(items) | Var::NamedTuple { items, .. } | Var::Size(items) => {
            Some(items.to_vec())
        }
        Var::List(l) => Some(l.borrow().clone()),
        _ => None,
    }
}

fn repeat(items: &[Var], n: usize) -> Vec<Var> {
    let mut out = Vec::with_capacity(items.len() * n);
    for _ in 0..n {
        out.extend(items.iter().cloned());
    }
    out
}

/// The positions a slice selects in a sequence of `len` items, in order.
fn slice_positions(s: &Bound<'_, PySlice>, len: usize) -> PyResult<(Vec<usize>, isize, isize)> {
    let ind = s.indices(len as isize)?;
    let mut out = Vec::new();
    let mut k = ind.start;
    while (ind.step > 0 && k < ind.stop) || (ind.step < 0 && k > ind.stop) {
        out.push(k as usize);
        k += ind.step;
    }
    Ok((out, ind.start, ind.step))
}

impl Frame<'_, '_> {
    /// `operator.<name>` on a tuple or list that holds tensors (or on a list, which must keep
    /// its identity through `+=`/`*=`). `None`: not a sequence operation this handles.
    pub(in crate::interp) fn sequence_operator(
        &mut self,
        name: &str,
        args: &[Var],
    ) -> Result<Option<Var>, TraceError> {
        let py = self.tx.py;
        let [a, b] = args else { return Ok(None) };
        let known = |v: &Var| v.as_py(py).is_some();
        match (name, a, b) {
            // `d |= other` updates the dict in place; `d | other` makes a new one.
            ("ior" | "or_", Var::Dict(d), Var::Dict(_) | Var::Py(..)) => {
                if let Var::Py(o, _) = b {
                    if !o.bind(py).is_exact_instance_of::<pyo3::types::PyDict>() {
                        return Ok(None);
                    }
                }
                let pairs = self.mapping_pairs(b)?;
                let target = if name == "ior" {
                    self.tx.note_dict_mutation(d);
                    d.clone()
                } else {
                    Rc::new(RefCell::new(d.borrow().clone()))
                };
                {
                    let mut t = target.borrow_mut();
                    for (k, v) in pairs {
                        match t
                            .iter()
                            .position(|(k2, _)| k2.bind(py).eq(k.bind(py)).unwrap_or(false))
                        {
                            Some(i) => t[i].1 = v,
                            None => t.push((k, v)),
                        }
                    }
                }
                Ok(Some(if name == "ior" {
                    a.clone()
                } else {
                    Var::Dict(target)
                }))
            }
            // In place on a list: the same list, extended (any iterable) or repeated.
            ("iadd", Var::List(l), _) => {
                let Some(items) = self.take_items_of(b)? else {
                    return Ok(None);
                };
                self.tx.note_list_mutation(l);
                l.borrow_mut().extend(items);
                Ok(Some(a.clone()))
            }
            ("imul", Var::List(l), _) => {
                let Some(n) = repeat_count(py, b) else {
                    return Ok(None);
                };
                self.tx.note_list_mutation(l);
                let items = repeat(&l.borrow(), n);
                *l.borrow_mut() = items;
                Ok(Some(a.clone()))
            }
            // A plain tuple concatenated with an empty one, or repeated once, is the tuple
            // itself in CPython (`t + () is t`).
            ("add" | "iadd", Var::Tuple(_), Var::Tuple(y)) if y.is_empty() => Ok(Some(a.clone())),
            ("add" | "iadd", Var::Tuple(x), Var::Tuple(_)) if x.is_empty() => Ok(Some(b.clone())),
            ("mul" | "imul", Var::Tuple(_), n) if repeat_count(py, n) == Some(1) => {
                Ok(Some(a.clone()))
            }
            ("mul", n, Var::Tuple(_)) if repeat_count(py, n) == Some(1) => Ok(Some(b.clone())),
            _ if known(a) && known(b) => Ok(None),
            ("add", Var::List(_), Var::List(_)) => {
                let (x, y) = (seq_items(a).unwrap(), seq_items(b).unwrap());
                Ok(Some(Var::list([x, y].concat())))
            }
            ("add" | "iadd", Var::Tuple(_) | Var::NamedTuple { .. }, Var::Tuple(_))
            | ("add" | "iadd", Var::Tuple(_), Var::NamedTuple { .. }) => {
                let (x, y) = (seq_items(a).unwrap(), seq_items(b).unwrap());
                Ok(Some(Var::Tuple([x, y].concat().into())))
            }
            // `torch.Size` concatenated with a tuple, on either side, is a `torch.Size` (its
            // `__radd__` wins over `tuple.__add__`).
            ("add" | "iadd", Var::Size(_), Var::Size(_) | Var::Tuple(_))
            | ("add" | "iadd", Var::Tuple(_), Var::Size(_)) => {
                let (x, y) = (seq_items(a).unwrap(), seq_items(b).unwrap());
                Ok(Some(Var::Size([x, y].concat().into())))
            }
            (
                "mul" | "imul",
                Var::List(_) | Var::Tuple(_) | Var::NamedTuple { .. } | Var::Size(_),
                n,
            )
            | ("mul", n, Var::List(_) | Var::Tuple(_) | Var::NamedTuple { .. } | Var::Size(_)) => {
                let seq = if seq_items(a).is_some() { a } else { b };
                let (Some(items), Some(n)) = (seq_items(seq), repeat_count(py, n)) else {
                    return Ok(None);
                };
                let out = repeat(&items, n);
                Ok(Some(match seq {
                    Var::List(_) => Var::list(out),
                    Var::Size(_) => Var::Size(out.into()),
                    _ => Var::Tuple(out.into()),
                }))
            }
            // `==`/`!=` of tuples (or sizes) holding symbolic ints: item by item, each
            // decided and guarded (`s0 == s1`), not every item specialized.
            ("eq" | "ne", Var::Tuple(x) | Var::Size(x), Var::Tuple(y) | Var::Size(y))
                if x.len() != y.len() =>
            {
                Ok(Some(Var::py_const(py, name == "ne")))
            }
            // Tuples holding tensors (a dataclass `__eq__` compares its fields as tuples): item
            // by item as CPython does, one object compared with itself equal without calling
            // its `__eq__` (`PyObject_RichCompareBool`'s identity rule); the first pair that
            // is not equal decides.
            ("eq" | "ne", Var::Tuple(x), Var::Tuple(y))
                if x.len() == y.len()
                    && x.iter()
                        .chain(y.iter())
                        .any(|i| matches!(i, Var::Tensor(_))) =>
            {
                let (x, y) = (x.to_vec(), y.to_vec());
                for (i, j) in x.into_iter().zip(y) {
                    let same = match (&i, &j) {
                        (Var::Tensor(a), Var::Tensor(b)) => {
                            let out = &self.tx.output;
                            out.alias_root(a.node) == out.alias_root(b.node)
                        }
                        (Var::Py(a, _), Var::Py(b, _)) => a.is(b),
                        _ => false,
                    };
                    if same {
                        continue;
                    }
                    let r = self.operator("eq", vec![i, j])?;
                    if !self.truth(&r)? {
                        return Ok(Some(Var::py_const(py, name == "ne")));
                    }
                }
                Ok(Some(Var::py_const(py, name == "eq")))
            }
            ("eq" | "ne", Var::Tuple(x) | Var::Size(x), Var::Tuple(y) | Var::Size(y))
                if x.iter().chain(y.iter()).all(|i| int_like(py, i)) =>
            {
                let (x, y) = (x.to_vec(), y.to_vec());
                let mut equal = true;
                for (i, j) in x.into_iter().zip(y) {
                    let r = self.operator("eq", vec![i, j])?;
                    if !self.truth(&r)? {
                        equal = false;
                        break;
                    }
                }
                Ok(Some(Var::py_const(py, equal == (name == "eq"))))
            }
            _ => Ok(None),
        }
    }

    /// `xs[i:j:k] = values` on a tracked list.
    pub(in crate::interp) fn list_store_slice(
        &mut self,
        l: &ListItems,
        slice: &Bound<'_, PySlice>,
        value: &Var,
    ) -> Result<(), TraceError> {
        let new = self
            .take_items_of(value)?
            .ok_or_else(|| TraceError::unsupported("assigning a non-sequence to a list slice"))?;
        let len = l.borrow().len();
        let (pos, start, step) = slice_positions(slice, len)?;
        self.tx.note_list_mutation(l);
        let mut b = l.borrow_mut();
        if step == 1 {
            let start = start.clamp(0, len as isize) as usize;
            let stop = pos.last().map(|p| p + 1).unwrap_or(start);
            b.splice(start..stop, new);
            return Ok(());
        }
        if pos.len() != new.len() {
            return Err(TraceError::unsupported(format!(
                "assigning {} items to an extended slice of {} (the frame raises ValueError)",
                new.len(),
                pos.len()
            )));
        }
        for (p, v) in pos.into_iter().zip(new) {
            b[p] = v;
        }
        Ok(())
    }

    /// `del xs[i:j:k]` on a tracked list.
    pub(in crate::interp) fn list_delete_slice(
        &mut self,
        l: &ListItems,
        slice: &Bound<'_, PySlice>,
    ) -> Result<(), TraceError> {
        let len = l.borrow().len();
        let (mut pos, _, _) = slice_positions(slice, len)?;
        self.tx.note_list_mutation(l);
        pos.sort_unstable();
        let mut b = l.borrow_mut();
        for p in pos.into_iter().rev() {
            b.remove(p);
        }
        Ok(())
    }

    /// `item == value` as `list.index`/`count`/`remove` test it: identity first, then `==`,
    /// which for a tensor would need its data (a multi-element tensor raises eagerly).
    fn sequence_item_eq(&mut self, item: &Var, value: &Var) -> Result<bool, TraceError> {
        let py = self.tx.py;
        let same = match (item, value) {
            (Var::Tensor(_), _) | (_, Var::Tensor(_)) | (Var::List(_), Var::List(_)) => {
                let r = self.is_op(item.clone(), value.clone(), false)?;
                r.as_py(py).map(|b| b.is_truthy().unwrap_or(false))
            }
            _ => None,
        };
        if same == Some(true) {
            return Ok(true);
        }
        // A symbolic int against an int: `==` decided at the hints and guarded (`C != 2`,
        // `C == T`), item by item as torch.compile's `index`/`count`, not specialized.
        if matches!(item, Var::SymInt(..)) || matches!(value, Var::SymInt(..)) {
            let eq = self.operator("eq", vec![item.clone(), value.clone()])?;
            return self.truth(&eq);
        }
        if matches!(item, Var::Tensor(_)) || matches!(value, Var::Tensor(_)) {
            return Err(TraceError::unsupported(
                "comparing a tensor with `==` to find it in a sequence (data-dependent)",
            ));
        }
        match (item.as_py(py), value.as_py(py)) {
            (Some(x), Some(y)) => Ok(x.eq(y)?),
            _ => Err(TraceError::unsupported(
                "comparing sequence items that are not Python values",
            )),
        }
    }

    /// `index`, `count`, `remove`, `pop(i)`, `clear` and `sort` of a list (and `index`/`count`
    /// of a tuple) whose items include tensors. `None`: not one of these.
    pub(in crate::interp) fn sequence_method(
        &mut self,
        seq: &Var,
        name: &str,
        args: &[Var],
        kwargs: &[(String, Var)],
    ) -> Result<Option<Var>, TraceError> {
        let py = self.tx.py;
        if let Var::Size(items) = seq {
            // A size's own methods are pure functions of its dims.
            if !matches!(name, "numel" | "index" | "count") {
                return Ok(None);
            }
            // `numel` of symbolic dims is their product (a graph value, as `x.numel()`).
            if name == "numel" && args.is_empty() && kwargs.is_empty() {
                let mut acc = Var::py_const(py, 1i64);
                for i in items.iter().cloned() {
                    acc = self.operator("mul", vec![acc, i])?;
                }
                return Ok(Some(acc));
            }
            // `index`/`count` of symbolic dims compare item by item (the tuple path below);
            // of known dims, fold on the size.
            if matches!(name, "index" | "count")
                && (items.iter().any(|i| matches!(i, Var::SymInt(..)))
                    || args.iter().any(|a| matches!(a, Var::SymInt(..))))
            {
                let tuple = Var::Tuple(items.clone());
                return self.sequence_method(&tuple, name, args, kwargs);
            }
            let seq = self.specialize(seq.clone())?;
            let (args, kwargs) = self.specialize_args(args.to_vec(), kwargs.to_vec())?;
            let m = seq
                .as_py(py)
                .expect("a known size has a value")
                .getattr(name)?;
            return self.fold(&m, &args, &kwargs);
        }
        let Some(items) = seq_items(seq) else {
            return Ok(None);
        };
        let list = match seq {
            Var::List(l) => Some(l.clone()),
            _ => None,
        };
        match (name, args, list) {
            ("index", [v, rest @ ..], _) if rest.len() <= 2 && kwargs.is_empty() => {
                let n = items.len() as isize;
                let bound = |i: usize, d: isize| -> Result<usize, TraceError> {
                    let Some(b) = rest.get(i) else {
                        return Ok(d as usize);
                    };
                    let b: isize = b
                        .as_py(py)
                        .and_then(|b| b.extract().ok())
                        .ok_or_else(|| TraceError::unsupported("index bounds that are not ints"))?;
                    Ok((if b < 0 { b + n } else { b }).clamp(0, n) as usize)
                };
                let (lo, hi) = (bound(0, 0)?, bound(1, n)?);
                for (i, item) in items.iter().enumerate().take(hi).skip(lo) {
                    if self.sequence_item_eq(item, v)? {
                        return Ok(Some(Var::py_const(py, i as i64)));
                    }
                }
                Err(TraceError::unsupported(
                    "index of a value not in the sequence (the frame raises ValueError)",
                ))
            }
            ("count", [v], _) if kwargs.is_empty() => {
                let mut n = 0i64;
                for item in &items {
                    n += self.sequence_item_eq(item, v)? as i64;
                }
                Ok(Some(Var::py_const(py, n)))
            }
            ("remove", [v], Some(l)) => {
                for (i, item) in items.iter().enumerate() {
                    if self.sequence_item_eq(item, v)? {
                        self.tx.note_list_mutation(&l);
                        l.borrow_mut().remove(i);
                        return Ok(Some(Var::none(py)));
                    }
                }
                Err(TraceError::unsupported(
                    "list.remove of a value not in the list (the frame raises ValueError)",
                ))
            }
            ("pop", [i], Some(l)) => {
                let i: isize = i
                    .as_py(py)
                    .and_then(|i| i.extract().ok())
                    .ok_or_else(|| TraceError::unsupported("list.pop of a non-int index"))?;
                let n = items.len() as isize;
                let j = if i < 0 { i + n } else { i };
                if j < 0 || j >= n {
                    return Err(TraceError::unsupported(
                        "list.pop index out of range (the frame raises IndexError)",
                    ));
                }
                self.tx.note_list_mutation(&l);
                Ok(Some(l.borrow_mut().remove(j as usize)))
            }
            ("clear", [], Some(l)) => {
                self.tx.note_list_mutation(&l);
                l.borrow_mut().clear();
                Ok(Some(Var::none(py)))
            }
            ("sort", [], Some(l)) => {
                self.list_sort(&l, kwargs)?;
                Ok(Some(Var::none(py)))
            }
            _ => Ok(None),
        }
    }

    /// `list.sort(key=..., reverse=...)`: the keys are computed by the traced code (a lambda
    /// inlined per item) and must be Python values; Python's own stable sort orders them.
    fn list_sort(&mut self, l: &ListItems, kwargs: &[(String, Var)]) -> Result<(), TraceError> {
        let py = self.tx.py;
        let mut key = None;
        let mut reverse = false;
        for (k, v) in kwargs {
            match k.as_str() {
                "key" if !matches!(v, Var::Py(o, _) if o.is_none(py)) => key = Some(v.clone()),
                "key" => {}
                "reverse" => {
                    reverse = v
                        .as_py(py)
                        .map(|r| r.is_truthy())
                        .transpose()?
                        .ok_or_else(|| TraceError::unsupported("sort(reverse=) of a tensor"))?;
                }
                _ => {
                    return Err(TraceError::unsupported(format!(
                        "list.sort with the keyword {k}"
                    )))
                }
            }
        }
        let items = l.borrow().clone();
        let mut keys = Vec::with_capacity(items.len());
        for item in &items {
            let k = match &key {
                Some(f) => self.call(f.clone(), vec![item.clone()], vec![])?,
                None => item.clone(),
            };
            let k = k.as_py(py).ok_or_else(|| {
                TraceError::unsupported("sorting by keys that are tensors (data-dependent)")
            })?;
            keys.push(k);
        }
        let keys = pyo3::types::PyList::new(py, keys)?;
        let kw = pyo3::types::PyDict::new(py);
        kw.set_item("key", keys.getattr("__getitem__")?)?;
        kw.set_item("reverse", reverse)?;
        let order = py
            .import("builtins")?
            .getattr("sorted")?
            .call(
                PyTuple::new(
                    py,
                    [pyo3::types::PyRange::new(py, 0, items.len() as isize)?],
                )?,
                Some(&kw),
            )
            .map_err(|e| TraceError::UserError {
                call: "list.sort".into(),
                message: e.to_string(),
                error: e,
            })?;
        let order: Vec<usize> = order.extract()?;
        self.tx.note_list_mutation(l);
        *l.borrow_mut() = order.into_iter().map(|i| items[i].clone()).collect();
        Ok(())
    }

    /// The (key, value) pairs of `dict.update`'s or `dict(...)`'s positional argument: a tracked
    /// dict, a dict known at trace time, or an iterable of pairs.
    pub(in crate::interp) fn mapping_pairs(
        &mut self,
        m: &Var,
    ) -> Result<Vec<(Py<PyAny>, Var)>, TraceError> {
        let py = self.tx.py;
        if let Var::Dict(o) = m {
            return Ok(o.borrow().clone());
        }
        if let Var::Py(o, _) = m {
            if let Ok(d) = o.bind(py).cast::<pyo3::types::PyDict>() {
                if d.get_type().is(py.get_type::<pyo3::types::PyDict>()) {
                    let mut out = Vec::new();
                    for (k, v) in d.iter() {
                        out.push((k.unbind(), self.tx.wrap(v, None)?));
                    }
                    return Ok(out);
                }
            }
        }
        let items = m
            .items(py)
            .ok_or_else(|| TraceError::unsupported("dict.update with a non-mapping argument"))?;
        let mut out = Vec::new();
        for pair in items {
            let kv = pair.items(py).filter(|kv| kv.len() == 2).ok_or_else(|| {
                TraceError::unsupported("dict.update with an item that is not a pair")
            })?;
            out.push((self.hash_key(&kv[0])?, kv[1].clone()));
        }
        Ok(out)
    }
}
