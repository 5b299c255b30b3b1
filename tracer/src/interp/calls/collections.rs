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
use crate::interp::vars::{DequeVar, Var};
use crate::interp::Frame;

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
        if module != "collections" {
            return Ok(None);
        }
        let py = self.tx.py;
        let coll = py.import("collections")?;
        if name == "deque" && f.is(&coll.getattr("deque")?) {
            return self.make_deque(args, kwargs).map(Some);
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
}
