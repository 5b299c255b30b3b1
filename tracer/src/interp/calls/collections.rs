//! Calls into `collections` that the traced code makes: `namedtuple(...)` with known
//! arguments, and `deque`s made in the frame, tracked item by item like lists.
//!
//! `namedtuple(...)` builds a class from strings alone: folded at trace time, the frame gets
//! one class per compiled entry instead of one per call (their instances are the same tuples;
//! only the class objects' identity across calls differs, as under torch.compile).

use std::cell::RefCell;
use std::rc::Rc;

use pyo3::prelude::*;

use crate::error::TraceError;
use crate::interp::vars::{dict_kind, set_dict_kind, DequeVar, DictItems, Var};
use crate::interp::Frame;

/// `type(d)` of a tracked dict made as an `OrderedDict`/`defaultdict`.
pub(in crate::interp) fn dict_class<'py>(
    py: Python<'py>,
    d: &DictItems,
) -> Option<Bound<'py, PyAny>> {
    dict_kind(d).map(|(c, _)| c.into_bound(py))
}

/// Drops items from the end opposite to the one just added, as a bounded deque does.
fn trim(q: &DequeVar, items: &mut Vec<Var>, from_left: bool) {
    if let Some(m) = q.maxlen {
        while items.len() > m {
            if from_left {
                items.remove(0);
            } else {
                items.pop();
            }
        }
    }
}

impl Frame<'_, '_> {
    /// `None`: not a call this handles.
    pub(super) fn collections_call(
        &mut self,
        f: &Bound<'_, PyAny>,
        module: &str,
        name: &str,
        args: &[Var],
        kwargs: &[(String, Var)],
    ) -> Result<Option<Var>, TraceError> {
        if name == "fromkeys" {
            if let Some(r) = self.dict_fromkeys(f, args, kwargs)? {
                return Ok(Some(r));
            }
        }
        if module != "collections" {
            return Ok(None);
        }
        let py = self.tx.py;
        let coll = py.import("collections")?;
        if name == "deque" && f.is(&coll.getattr("deque")?) {
            return self.make_deque(args, kwargs).map(Some);
        }
        if name == "Counter" && f.is(&coll.getattr("Counter")?) {
            // Counting known values: the Counter the call makes, tracked as a dict of its counts.
            // The items of a sequence are hashed by value (a symbolic int is specialized).
            let counted = match args {
                [seq @ (Var::List(_) | Var::Tuple(_))] if kwargs.is_empty() => {
                    let items = seq.items(py).unwrap_or_default();
                    let items = items
                        .into_iter()
                        .map(|i| self.specialize(i))
                        .collect::<Result<Vec<_>, _>>()?;
                    vec![Var::Tuple(items.into())]
                }
                _ => args.to_vec(),
            };
            let Some(Var::Py(c, None)) = self.fold(f, &counted, kwargs)? else {
                return Err(TraceError::unsupported(
                    "Counter() of values that are tensors",
                ));
            };
            return self.track_counter(c.bind(py)).map(Some);
        }
        if name == "OrderedDict" && f.is(&coll.getattr("OrderedDict")?) {
            let d = self.make_dict(args, kwargs)?;
            set_dict_kind(&d, (f.clone().unbind(), None));
            return Ok(Some(Var::Dict(d)));
        }
        if name == "defaultdict" && f.is(&coll.getattr("defaultdict")?) {
            let factory = args.first().cloned().unwrap_or_else(|| Var::none(py));
            let d = self.make_dict(args.get(1..).unwrap_or(&[]), kwargs)?;
            set_dict_kind(&d, (f.clone().unbind(), Some(factory)));
            return Ok(Some(Var::Dict(d)));
        }
        if name != "namedtuple" || !f.is(&coll.getattr("namedtuple")?) {
            return Ok(None);
        }
        // Field names and defaults that are constants; a default that is a tensor would be
        // baked into the class.
        let known = args.iter().chain(kwargs.iter().map(|(_, v)| v)).all(|a| {
            matches!(a, Var::Py(..) | Var::Tuple(_) | Var::List(_)) && a.as_py(py).is_some()
        });
        if !known {
            return Ok(None);
        }
        self.fold(f, args, kwargs)
    }

    /// `dict.fromkeys(iterable, value=None)` (and `OrderedDict.fromkeys`) as a new tracked
    /// dict: the keys are hashed by value (a symbolic int is specialized), every key maps to
    /// the one `value` object, as in eager. `None` for any other `fromkeys`.
    fn dict_fromkeys(
        &mut self,
        f: &Bound<'_, PyAny>,
        args: &[Var],
        kwargs: &[(String, Var)],
    ) -> Result<Option<Var>, TraceError> {
        let py = self.tx.py;
        let Ok(owner) = f.getattr("__self__") else {
            return Ok(None);
        };
        let dict = py.import("builtins")?.getattr("dict")?;
        let ordered = py.import("collections")?.getattr("OrderedDict")?;
        if !(owner.is(&dict) || owner.is(&ordered)) || !kwargs.is_empty() || args.is_empty() {
            return Ok(None);
        }
        let [keys, rest @ ..] = args else {
            return Ok(None);
        };
        if rest.len() > 1 {
            return Ok(None);
        }
        let value = rest.first().cloned().unwrap_or_else(|| Var::none(py));
        let mut items: Vec<(Py<PyAny>, Var)> = Vec::new();
        for k in self.drain(keys.clone())? {
            let k = self.hash_key(&k)?;
            if !items
                .iter()
                .any(|(k2, _)| k2.bind(py).eq(k.bind(py)).unwrap_or(false))
            {
                items.push((k, value.clone()));
            }
        }
        let d = Rc::new(RefCell::new(items));
        if owner.is(&ordered) {
            set_dict_kind(&d, (owner.unbind(), None));
        }
        Ok(Some(Var::Dict(d)))
    }

    /// `deque(iterable=(), maxlen=None)`.
    fn make_deque(&mut self, args: &[Var], kwargs: &[(String, Var)]) -> Result<Var, TraceError> {
        let py = self.tx.py;
        let mut iterable = args.first().cloned();
        let mut maxlen = args.get(1).cloned();
        for (k, v) in kwargs {
            match k.as_str() {
                "iterable" => iterable = Some(v.clone()),
                "maxlen" => maxlen = Some(v.clone()),
                _ => return Err(TraceError::unsupported(format!("deque() with keyword {k}"))),
            }
        }
        if args.len() > 2 {
            return Err(TraceError::unsupported(
                "deque() with more than two arguments",
            ));
        }
        let maxlen = match maxlen {
            None => None,
            Some(Var::Py(o, _)) if o.is_none(py) => None,
            Some(m) => {
                let n: i64 = m
                    .as_py(py)
                    .and_then(|m| m.extract().ok())
                    .ok_or_else(|| TraceError::unsupported("deque(maxlen=) that is not an int"))?;
                if n < 0 {
                    return Err(TraceError::unsupported(
                        "deque(maxlen=) negative (the call raises ValueError)",
                    ));
                }
                Some(n as usize)
            }
        };
        let items = match iterable {
            None => Vec::new(),
            Some(Var::Py(o, _)) if o.is_none(py) => Vec::new(),
            Some(it) => it
                .items(py)
                .ok_or_else(|| TraceError::unsupported("deque() of this iterable"))?,
        };
        let q = DequeVar {
            items: RefCell::new(Vec::new()),
            maxlen,
        };
        let mut items = items;
        trim(&q, &mut items, true);
        *q.items.borrow_mut() = items;
        Ok(Var::Deque(Rc::new(q)))
    }

    /// `q[i]` (and `q[i] = value`): deques index by int only.
    pub(in crate::interp) fn deque_index(
        &mut self,
        q: &Rc<DequeVar>,
        idx: &Var,
        value: Option<Var>,
    ) -> Result<Var, TraceError> {
        let py = self.tx.py;
        let i: isize = idx
            .as_py(py)
            .and_then(|i| i.extract().ok())
            .ok_or_else(|| TraceError::unsupported("a deque index that is not an int"))?;
        let mut items = q.items.borrow_mut();
        let n = items.len() as isize;
        let j = if i < 0 { i + n } else { i };
        if j < 0 || j >= n {
            return Err(TraceError::unsupported(
                "a deque index out of range (the frame raises IndexError)",
            ));
        }
        match value {
            Some(v) => {
                items[j as usize] = v;
                drop(items);
                self.tx.note_deque_mutation(q);
                Ok(Var::none(py))
            }
            None => Ok(items[j as usize].clone()),
        }
    }

    /// Methods of a deque made by the traced code.
    pub(super) fn deque_method(
        &mut self,
        q: Rc<DequeVar>,
        name: &str,
        args: Vec<Var>,
        kwargs: Vec<(String, Var)>,
    ) -> Result<Var, TraceError> {
        let py = self.tx.py;
        if !kwargs.is_empty() {
            return Err(TraceError::unsupported(format!(
                "deque.{name} with keywords"
            )));
        }
        let none = Var::none(py);
        let empty = |what: &str| {
            TraceError::unsupported(format!(
                "{what} from an empty deque (the frame raises IndexError)"
            ))
        };
        let iterable = |v: &Var| {
            v.items(py)
                .ok_or_else(|| TraceError::unsupported(format!("deque.{name} of this iterable")))
        };
        // Every method but these changes the deque (a deque from the frame is then written
        // back after the graph; a failed call changes nothing and breaks the graph).
        if !matches!(name, "copy" | "index" | "count") {
            self.tx.note_deque_mutation(&q);
        }
        match (name, args.as_slice()) {
            ("append", [v]) => {
                let mut items = q.items.borrow_mut();
                items.push(v.clone());
                trim(&q, &mut items, true);
                Ok(none)
            }
            ("appendleft", [v]) => {
                let mut items = q.items.borrow_mut();
                items.insert(0, v.clone());
                trim(&q, &mut items, false);
                Ok(none)
            }
            ("extend", [v]) => {
                let new = iterable(v)?;
                let mut items = q.items.borrow_mut();
                items.extend(new);
                trim(&q, &mut items, true);
                Ok(none)
            }
            ("extendleft", [v]) => {
                let new = iterable(v)?;
                let mut items = q.items.borrow_mut();
                for x in new {
                    items.insert(0, x);
                }
                trim(&q, &mut items, false);
                Ok(none)
            }
            ("pop", []) => q.items.borrow_mut().pop().ok_or_else(|| empty("pop")),
            ("popleft", []) => {
                let mut items = q.items.borrow_mut();
                if items.is_empty() {
                    return Err(empty("pop"));
                }
                Ok(items.remove(0))
            }
            ("rotate", []) | ("rotate", [_]) => {
                let k: i64 = match args.first() {
                    Some(k) => k
                        .as_py(py)
                        .and_then(|k| k.extract().ok())
                        .ok_or_else(|| TraceError::unsupported("deque.rotate of a non-int"))?,
                    None => 1,
                };
                let mut items = q.items.borrow_mut();
                let n = items.len() as i64;
                if n > 0 {
                    let k = k.rem_euclid(n) as usize;
                    items.rotate_right(k);
                }
                Ok(none)
            }
            ("clear", []) => {
                q.items.borrow_mut().clear();
                Ok(none)
            }
            ("reverse", []) => {
                q.items.borrow_mut().reverse();
                Ok(none)
            }
            ("copy", []) => Ok(Var::Deque(Rc::new(DequeVar {
                items: RefCell::new(q.items.borrow().clone()),
                maxlen: q.maxlen,
            }))),
            ("index" | "count" | "remove" | "insert", _) => {
                // List semantics on the items, then back into the deque.
                let l = Rc::new(RefCell::new(q.items.borrow().clone()));
                if name == "insert" && q.maxlen.is_some_and(|m| l.borrow().len() >= m) {
                    return Err(TraceError::unsupported(
                        "deque.insert into a full bounded deque (the frame raises IndexError)",
                    ));
                }
                let r = self.list_method(l.clone(), name, args, kwargs)?;
                *q.items.borrow_mut() = l.borrow().clone();
                Ok(r)
            }
            _ => Err(TraceError::unsupported(format!(
                "deque.{name} with these arguments"
            ))),
        }
    }

    /// The key/value pairs `dict(mapping_or_pairs, **kwargs)` (and a dict subclass's builtin
    /// `__init__`) stores, in order, repeated keys included.
    pub(in crate::interp) fn dict_init_pairs(
        &mut self,
        args: &[Var],
        kwargs: &[(String, Var)],
    ) -> Result<Vec<(Py<PyAny>, Var)>, TraceError> {
        let py = self.tx.py;
        if args.len() > 1 {
            return Err(TraceError::unsupported(
                "a dict made from more than one argument",
            ));
        }
        let mut pairs = match args.first() {
            Some(m) => self.mapping_pairs(m)?,
            None => Vec::new(),
        };
        for (k, v) in kwargs {
            pairs.push((
                pyo3::types::PyString::new(py, k).into_any().unbind(),
                v.clone(),
            ));
        }
        Ok(pairs)
    }

    /// The items of `dict(mapping_or_pairs, **kwargs)`.
    fn make_dict(
        &mut self,
        args: &[Var],
        kwargs: &[(String, Var)],
    ) -> Result<DictItems, TraceError> {
        let py = self.tx.py;
        let mut items: Vec<(Py<PyAny>, Var)> = Vec::new();
        for (k, v) in self.dict_init_pairs(args, kwargs)? {
            match items
                .iter()
                .position(|(k2, _)| k2.bind(py).eq(k.bind(py)).unwrap_or(false))
            {
                Some(i) => items[i].1 = v,
                None => items.push((k, v)),
            }
        }
        Ok(Rc::new(RefCell::new(items)))
    }

    /// `d[key]` of a missing key: a `defaultdict` inserts `factory()`; any other dict raises.
    /// Whether a missing key of this tracked dict answers a value (`Counter`, a `defaultdict`
    /// with a factory) rather than raising `KeyError`.
    pub(in crate::interp) fn dict_has_missing(&self, d: &DictItems) -> bool {
        let py = self.tx.py;
        match dict_kind(d) {
            Some((_, Some(f))) if !matches!(&f, Var::Py(o, _) if o.is_none(py)) => true,
            Some((cls, _)) => py
                .import("collections")
                .and_then(|c| c.getattr("Counter"))
                .is_ok_and(|c| cls.bind(py).is(&c)),
            None => false,
        }
    }

    pub(in crate::interp) fn dict_missing(
        &mut self,
        d: &DictItems,
        key: Py<PyAny>,
    ) -> Result<Var, TraceError> {
        let py = self.tx.py;
        if let Some((cls, _)) = dict_kind(d) {
            // `Counter.__missing__`: zero, and the key is not inserted.
            if cls
                .bind(py)
                .is(&py.import("collections")?.getattr("Counter")?)
            {
                return Ok(Var::py_const(py, 0i64));
            }
        }
        let factory = match dict_kind(d) {
            Some((_, Some(f))) if !matches!(&f, Var::Py(o, _) if o.is_none(py)) => f,
            _ => {
                return Err(TraceError::unsupported(
                    "a missing dict key (the frame raises KeyError)",
                ))
            }
        };
        let v = self.call(factory, vec![], vec![])?;
        // `list()`/`dict()` fold to a fresh empty object: tracked, so that `d[k].append(x)`
        // mutates the value the dict holds.
        let v = match &v {
            Var::Py(o, None) if o.bind(py).is_exact_instance_of::<pyo3::types::PyList>() => {
                Var::list(v.items(py).unwrap_or_default())
            }
            Var::Py(o, None)
                if o.bind(py).is_exact_instance_of::<pyo3::types::PyDict>()
                    && o.bind(py).len()? == 0 =>
            {
                Var::Dict(Rc::new(RefCell::new(Vec::new())))
            }
            _ => v,
        };
        self.tx.note_dict_mutation(d);
        d.borrow_mut().push((key, v.clone()));
        Ok(v)
    }

    /// Methods that an `OrderedDict`/`defaultdict` made by the traced code answers otherwise
    /// than a dict: `move_to_end`, `popitem(last=)`, `copy` (same class). `None`: as a dict.
    pub(super) fn dict_kind_method(
        &mut self,
        d: &DictItems,
        name: &str,
        args: &[Var],
        kwargs: &[(String, Var)],
    ) -> Result<Option<Var>, TraceError> {
        let py = self.tx.py;
        let Some(kind) = dict_kind(d) else {
            return Ok(None);
        };
        let coll = py.import("collections")?;
        // A user subclass of `OrderedDict` (made in the frame or an input) orders as one.
        let od = coll.getattr("OrderedDict")?;
        let ordered = kind
            .0
            .bind(py)
            .cast::<pyo3::types::PyType>()
            .is_ok_and(|c| c.is_subclass(&od).unwrap_or(false));
        let counter = kind.0.bind(py).is(&coll.getattr("Counter")?);
        if counter
            && !matches!(
                name,
                "copy" | "get" | "keys" | "values" | "items" | "pop" | "setdefault"
            )
        {
            return self.counter_method(d, name, args, kwargs).map(Some);
        }
        let flag = |i: usize, kw: &str, default: bool| -> Result<bool, TraceError> {
            let v = args
                .get(i)
                .or_else(|| kwargs.iter().find(|(k, _)| k == kw).map(|(_, v)| v));
            match v {
                None => Ok(default),
                Some(v) => Ok(v
                    .as_py(py)
                    .ok_or_else(|| TraceError::unsupported(format!("{name}({kw}=) of a tensor")))?
                    .is_truthy()?),
            }
        };
        match name {
            "copy" if args.is_empty() && kwargs.is_empty() => {
                let c = Rc::new(RefCell::new(d.borrow().clone()));
                set_dict_kind(&c, kind);
                Ok(Some(Var::Dict(c)))
            }
            "move_to_end" if ordered && !args.is_empty() => {
                let key = self.hash_key(&args[0])?.into_bound(py);
                let last = flag(1, "last", true)?;
                let mut b = d.borrow_mut();
                let i = b
                    .iter()
                    .position(|(k, _)| k.bind(py).eq(&key).unwrap_or(false))
                    .ok_or_else(|| {
                        TraceError::unsupported(
                            "move_to_end of a missing key (the frame raises KeyError)",
                        )
                    })?;
                let item = b.remove(i);
                if last {
                    b.push(item);
                } else {
                    b.insert(0, item);
                }
                Ok(Some(Var::none(py)))
            }
            "popitem" if ordered => {
                let last = flag(0, "last", true)?;
                let mut b = d.borrow_mut();
                if b.is_empty() {
                    return Err(TraceError::unsupported(
                        "popitem of an empty dict (the frame raises KeyError)",
                    ));
                }
                let (k, v) = if last { b.pop().unwrap() } else { b.remove(0) };
                Ok(Some(Var::Tuple(vec![Var::Py(k, None), v].into())))
            }
            _ => Ok(None),
        }
    }

    /// A Counter computed at trace time, as a tracked dict of kind `Counter`.
    fn track_counter(&mut self, c: &Bound<'_, PyAny>) -> Result<Var, TraceError> {
        let py = self.tx.py;
        let d = c.cast::<pyo3::types::PyDict>().map_err(PyErr::from)?;
        let mut items = Vec::new();
        for (k, v) in d.iter() {
            items.push((k.unbind(), self.tx.wrap(v, None)?));
        }
        let items = Rc::new(RefCell::new(items));
        let cls = py.import("collections")?.getattr("Counter")?.unbind();
        set_dict_kind(&items, (cls, None));
        Ok(Var::Dict(items))
    }

    /// Other methods of a Counter made by the traced code (`update`, `subtract`, `most_common`,
    /// `elements`, `total`, ...): its counts are known, so the method runs on a Python copy and
    /// a mutation is copied back into the tracker.
    fn counter_method(
        &mut self,
        d: &DictItems,
        name: &str,
        args: &[Var],
        kwargs: &[(String, Var)],
    ) -> Result<Var, TraceError> {
        let py = self.tx.py;
        let copy = Var::Dict(d.clone())
            .as_py(py)
            .ok_or_else(|| TraceError::unsupported("a Counter whose counts are tensors"))?;
        let m = copy.getattr(name).map_err(|e| TraceError::UserError {
            call: format!("Counter.{name}"),
            message: e.to_string(),
            error: e,
        })?;
        let r = self.fold(&m, args, kwargs)?.ok_or_else(|| {
            TraceError::unsupported(format!("Counter.{name} with these arguments"))
        })?;
        let after = copy.cast::<pyo3::types::PyDict>().map_err(PyErr::from)?;
        let mut items = Vec::new();
        for (k, v) in after.iter() {
            items.push((k.unbind(), self.tx.wrap(v, None)?));
        }
        self.tx.note_dict_mutation(d);
        *d.borrow_mut() = items;
        // `elements()` gives an iterator: a constant one would be exhausted by the first call.
        if let Var::Py(o, None) = &r {
            if o.bind(py).hasattr("__next__")? {
                let mut out = Vec::new();
                for x in o.bind(py).try_iter()? {
                    out.push(self.tx.wrap(x?, None)?);
                }
                return Ok(Var::Iter(Rc::new(RefCell::new((out, 0)))));
            }
        }
        Ok(r)
    }
}
