//! Iterators: `iter`/`next`, `map`, `filter`, `zip`, `enumerate`, `reversed` and `itertools`.
//!
//! A finite iterator made by the traced code is a `Var::Iter` of its items, computed when it is
//! made (the functions it calls are traced then); iterating one advances the one shared cursor,
//! so `it = iter(xs); next(it); for x in it: ...` and `zip(it, it)` see what eager sees. The
//! endless ones (`count`, `cycle`, `repeat` without `times`) are `Var::Library` objects that
//! yield one item per pull, for the consumers that stop on their own (`zip`, `islice`,
//! `takewhile`, a `for` loop that breaks); consuming one to its end is refused.

use std::cell::RefCell;
use std::rc::Rc;

use pyo3::prelude::*;

use crate::error::TraceError;
use crate::interp::vars::LibObj;
use crate::interp::vars::Var;
use crate::interp::Frame;

/// A new iterator over `items`.
pub(in crate::interp) fn new_iter(items: Vec<Var>) -> Var {
    Var::Iter(Rc::new(RefCell::new((items, 0))))
}

/// Where the items of one argument come from while a consumer pulls them.
enum Pull {
    /// An iterator of the traced code: pulling advances it for everyone holding it.
    Shared(Rc<RefCell<(Vec<Var>, usize)>>),
    /// A fresh iteration of a sequence.
    Owned(std::vec::IntoIter<Var>),
    Endless(Rc<RefCell<LibObj>>),
    /// A lazy generator (`generators.rs`): pulling resumes it.
    Lazy(Var),
}

/// Whether pulling from `v` (or from an iterable it holds, as `chain.from_iterable` does)
/// resumes a lazy generator.
fn holds_lazy(v: &Var) -> bool {
    match v {
        Var::Generator(_) => true,
        Var::Iter(i) => i.borrow().0.iter().any(|x| matches!(x, Var::Generator(_))),
        Var::Tuple(items) => items.iter().any(|x| matches!(x, Var::Generator(_))),
        Var::List(items) => items
            .borrow()
            .iter()
            .any(|x| matches!(x, Var::Generator(_))),
        _ => false,
    }
}

fn unsupported(reason: impl Into<String>) -> TraceError {
    TraceError::unsupported(reason)
}

impl Frame<'_, '_> {
    /// `GET_ITER`: an iterator is its own iterator; anything else iterates its items.
    pub(in crate::interp) fn get_iter(&mut self, v: Var) -> Result<Var, TraceError> {
        match v {
            Var::Iter(_) | Var::Generator(_) => Ok(v),
            Var::Library(ref l) if l.borrow().is_iterator() => Ok(v),
            Var::Object(ref o) => match self.lazy_object_iter(o)? {
                Some(it) => Ok(it),
                None => Ok(new_iter(self.iterate(v)?)),
            },
            // A list's iterator reads the list at its index on each pull (eager's
            // `list_iterator`): a loop that appends to the list it walks sees the new items.
            Var::List(l) => {
                let it = Rc::new(RefCell::new((l.borrow().clone(), 0)));
                self.tx.list_iters.retain(|e| e.iter.strong_count() > 0);
                self.tx.list_iters.push(crate::interp::vars::ListIter {
                    list: Rc::downgrade(&l),
                    iter: Rc::downgrade(&it),
                    synced: self.tx.list_mutations,
                });
                Ok(Var::Iter(it))
            }
            // A dict's iterator raises on a pull after the dict changed size, as eager's does.
            Var::Dict(d) => {
                let len = d.borrow().len();
                let it = Rc::new(RefCell::new((self.iterate(Var::Dict(d.clone()))?, 0)));
                self.tx.dict_iters.retain(|e| e.iter.strong_count() > 0);
                self.tx.dict_iters.push(crate::interp::vars::DictIter {
                    dict: Rc::downgrade(&d),
                    iter: Rc::downgrade(&it),
                    len,
                });
                Ok(Var::Iter(it))
            }
            other => Ok(new_iter(self.iterate(other)?)),
        }
    }

    /// A user object taken by a consumer that pulls item by item (a `for` loop, `next`,
    /// `zip`): its iterator's `__next__` (or the old `__getitem__` protocol) is called once
    /// per pull through a lazy stand-in, as CPython calls it. Computing every item at
    /// `GET_ITER` would run all the `__next__` calls before the loop body's first pass, so
    /// their effects and the body's would interleave differently from eager's (a wrong
    /// value when the body reads what `__next__` writes). `None`: the object's items are
    /// computed whole as before (`collections.abc` mixins, builtin `__iter__`s).
    fn lazy_object_iter(
        &mut self,
        o: &Rc<crate::interp::vars::ObjectVar>,
    ) -> Result<Option<Var>, TraceError> {
        let py = self.tx.py;
        let cls = o.cls.bind(py).clone();
        let Some(iter_fn) = crate::interp::objects::static_lookup(&cls, "__iter__")? else {
            if cls.hasattr("__getitem__")? {
                let obj = Var::Object(o.clone());
                return self
                    .lazy_polyfill("sequence_protocol", vec![obj], vec![])
                    .map(Some);
            }
            return Ok(None);
        };
        let function_type = py.import("types")?.getattr("FunctionType")?;
        let sequence_iter = py
            .import("collections.abc")?
            .getattr("Sequence")?
            .getattr("__dict__")?
            .get_item("__iter__")?;
        if !iter_fn.is_instance(&function_type)? || iter_fn.is(&sequence_iter) {
            return Ok(None);
        }
        let it = self.object_operator(o, "iter", vec![])?;
        match &it {
            Var::Object(i) if i.cls.bind(py).hasattr("__next__")? => self
                .lazy_polyfill("user_iterator", vec![it.clone()], vec![])
                .map(Some),
            _ => self.get_iter(it).map(Some),
        }
    }

    /// Whether the dict iterator `it` (if it is one) walks a dict whose size changed since.
    fn dict_changed_size(&self, it: &Rc<RefCell<(Vec<Var>, usize)>>) -> bool {
        self.tx.dict_iters.iter().any(|e| {
            std::ptr::eq(e.iter.as_ptr(), Rc::as_ptr(it))
                && e.dict.upgrade().is_some_and(|d| d.borrow().len() != e.len)
        })
    }

    /// Copies a list iterator's list into its items again if some list changed since it last
    /// did (the position stays: eager's iterator holds an index into the list).
    pub(in crate::interp) fn sync_list_iter(&mut self, it: &Rc<RefCell<(Vec<Var>, usize)>>) {
        let now = self.tx.list_mutations;
        let Some(e) = self
            .tx
            .list_iters
            .iter_mut()
            .find(|e| std::ptr::eq(e.iter.as_ptr(), Rc::as_ptr(it)))
        else {
            return;
        };
        if e.synced == now {
            return;
        }
        e.synced = now;
        if let Some(list) = e.list.upgrade() {
            it.borrow_mut().0 = list.borrow().clone();
        }
    }

    /// `FOR_ITER` and `next()`: the next item, `None` at the end.
    pub(in crate::interp) fn iter_next(&mut self, it: &Var) -> Result<Option<Var>, TraceError> {
        match it {
            Var::Iter(i) => {
                if !self.tx.list_iters.is_empty() {
                    self.sync_list_iter(i);
                }
                if !self.tx.dict_iters.is_empty() && self.dict_changed_size(i) {
                    let msg = "dictionary changed size during iteration";
                    return Err(self.raise_new("RuntimeError", (msg,), unsupported(msg)));
                }
                let mut i = i.borrow_mut();
                let (items, pos) = &mut *i;
                let n = items.get(*pos).cloned();
                if n.is_some() {
                    *pos += 1;
                }
                Ok(n)
            }
            Var::Library(l) if l.borrow().is_iterator() => {
                let l = l.clone();
                self.endless_next(&l).map(Some)
            }
            Var::Generator(g) => {
                let g = g.clone();
                self.generator_next(&g)
            }
            _ => Err(unsupported("iterating a Python iterator object")),
        }
    }

    fn endless_next(&mut self, l: &Rc<RefCell<LibObj>>) -> Result<Var, TraceError> {
        let py = self.tx.py;
        let mut o = l.borrow_mut();
        match &mut *o {
            LibObj::Count { next, step } => {
                let v = next.clone_ref(py);
                let n = v.bind(py).add(step.bind(py))?;
                *next = n.unbind();
                Ok(Var::Py(v, None))
            }
            LibObj::Cycle { items, pos } => {
                let v = items[*pos % items.len()].clone();
                *pos += 1;
                Ok(v)
            }
            LibObj::Repeat(v) => Ok(v.clone()),
            LibObj::Partial { .. } | LibObj::MethodCaller { .. } => {
                Err(TraceError::internal("next() of a callable"))
            }
        }
    }

    fn puller(&mut self, v: Var) -> Result<Pull, TraceError> {
        Ok(match v {
            Var::Iter(i) => Pull::Shared(i),
            Var::Library(l) if l.borrow().is_iterator() => Pull::Endless(l),
            Var::Generator(_) => Pull::Lazy(v),
            other => Pull::Owned(self.iterate(other)?.into_iter()),
        })
    }

    fn pull(&mut self, p: &mut Pull) -> Result<Option<Var>, TraceError> {
        match p {
            Pull::Shared(i) => self.iter_next(&Var::Iter(i.clone())),
            Pull::Owned(it) => Ok(it.next()),
            Pull::Lazy(g) => {
                let g = g.clone();
                self.iter_next(&g)
            }
            Pull::Endless(l) => {
                let l = l.clone();
                self.endless_next(&l).map(Some)
            }
        }
    }

    /// All the items of an iterable, consuming it if it is an iterator.
    pub(in crate::interp) fn drain(&mut self, v: Var) -> Result<Vec<Var>, TraceError> {
        let mut p = self.puller(v)?;
        if let Pull::Endless(l) = &p {
            return Err(unsupported(format!(
                "consuming an endless {} to its end",
                l.borrow().type_name()
            )));
        }
        let mut out = Vec::new();
        while let Some(x) = self.pull(&mut p)? {
            out.push(x);
        }
        Ok(out)
    }

    /// The rows `zip(*args)` yields, pulling round-robin as it does (an argument before the
    /// first exhausted one gives up one more item).
    fn zip_rows(&mut self, args: Vec<Var>, strict: bool) -> Result<Vec<Vec<Var>>, TraceError> {
        let mut ps = Vec::new();
        for a in args {
            ps.push(self.puller(a)?);
        }
        if !ps.is_empty() && ps.iter().all(|p| matches!(p, Pull::Endless(_))) {
            return Err(unsupported("zip() of endless iterators only"));
        }
        let mut rows = Vec::new();
        'rows: loop {
            let mut row = Vec::new();
            for k in 0..ps.len() {
                match self.pull(&mut ps[k])? {
                    Some(v) => row.push(v),
                    None => {
                        if strict {
                            let mut longer = k > 0;
                            for p in ps.iter_mut().skip(1) {
                                if !longer {
                                    longer = self.pull(p)?.is_some();
                                }
                            }
                            if longer {
                                return Err(unsupported(
                                    "zip(strict=True) of iterables of different lengths (the \
                                     frame raises ValueError)",
                                ));
                            }
                        }
                        break 'rows;
                    }
                }
            }
            if ps.is_empty() {
                break;
            }
            rows.push(row);
        }
        Ok(rows)
    }

    fn const_arg(&self, v: &Var, what: &str) -> Result<Py<PyAny>, TraceError> {
        v.as_py(self.tx.py)
            .map(|b| b.unbind())
            .ok_or_else(|| unsupported(format!("{what} that is a traced value")))
    }

    fn int_arg(&self, v: &Var, what: &str) -> Result<Option<i64>, TraceError> {
        let py = self.tx.py;
        let o = v
            .as_py(py)
            .ok_or_else(|| unsupported(format!("{what} that is a tensor")))?;
        if o.is_none() {
            return Ok(None);
        }
        Ok(Some(o.extract::<i64>().map_err(|e| {
            TraceError::UserError {
                call: what.to_string(),
                message: e.to_string(),
                error: e,
            }
        })?))
    }

    /// The builtins that make or advance iterators; `None` for other names.
    pub(in crate::interp) fn iterator_builtin(
        &mut self,
        name: &str,
        args: &[Var],
        kwargs: &[(String, Var)],
    ) -> Result<Option<Var>, TraceError> {
        let py = self.tx.py;
        let kw = |k: &str| kwargs.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
        let no_kw = kwargs.is_empty();
        if matches!(name, "zip" | "map") && no_kw {
            if let Some(lazy) = self.lazy_combinator(name, args, 0)? {
                return Ok(Some(lazy));
            }
        }
        // `filter` pulls one item per item it yields: over a lazy generator, or with a traced
        // predicate (which may have effects between the consumer's items), it is lazy too.
        if name == "filter" && no_kw {
            if let [f, it] = args {
                if holds_lazy(it) || matches!(f, Var::Function(_)) {
                    return self
                        .lazy_polyfill("filter", args.to_vec(), vec![])
                        .map(Some);
                }
            }
        }
        let r = match (name, args) {
            ("iter", [v]) if no_kw => self.get_iter(v.clone())?,
            ("next", [it]) | ("next", [it, _]) if no_kw => {
                if !matches!(it, Var::Iter(_) | Var::Library(_) | Var::Generator(_)) {
                    return Err(unsupported(format!(
                        "next() of a {} (not an iterator of the traced code)",
                        it.type_name(py)
                    )));
                }
                match self.iter_next(it)? {
                    Some(v) => v,
                    None => match args.get(1) {
                        Some(d) => d.clone(),
                        None => {
                            let e = unsupported(
                                "next() of an exhausted iterator (the frame raises StopIteration)",
                            );
                            // Raised in the traced code, so its own `except StopIteration`
                            // catches it; in a generator's body Python turns it into a
                            // RuntimeError instead (PEP 479), left to the program.
                            if self.code.flags & 0x20 != 0 {
                                return Err(e);
                            }
                            return Err(self.raise_new("StopIteration", (), e));
                        }
                    },
                }
            }
            ("map", [f, its @ ..]) if no_kw && !its.is_empty() => {
                let rows = self.zip_rows(its.to_vec(), false)?;
                let mut out = Vec::new();
                for row in rows {
                    out.push(self.call(f.clone(), row, vec![])?);
                }
                new_iter(out)
            }
            ("filter", [f, it]) if no_kw => {
                let items = self.drain(it.clone())?;
                let keep_truthy = !matches!(f, Var::Py(o, _) if o.is_none(py));
                let mut out = Vec::new();
                for i in items {
                    let test = if keep_truthy {
                        self.call(f.clone(), vec![i.clone()], vec![])?
                    } else {
                        i.clone()
                    };
                    if self.truth(&test)? {
                        out.push(i);
                    }
                }
                new_iter(out)
            }
            ("zip", its) => {
                let mut strict = false;
                for (k, v) in kwargs {
                    if k != "strict" {
                        return Err(unsupported(format!("zip() with keyword {k}")));
                    }
                    strict = self.truth(v)?;
                }
                let rows = self.zip_rows(its.to_vec(), strict)?;
                new_iter(rows.into_iter().map(|r| Var::Tuple(r.into())).collect())
            }
            ("enumerate", [it]) | ("enumerate", [it, _]) => {
                let start = match args.get(1).cloned().or_else(|| kw("start")) {
                    Some(s) => self.int_arg(&s, "enumerate(start=)")?.unwrap_or(0),
                    None => 0,
                };
                if let Some(lazy) = self.lazy_combinator(name, &args[..1], start)? {
                    return Ok(Some(lazy));
                }
                let items = self.drain(it.clone())?;
                new_iter(
                    items
                        .into_iter()
                        .enumerate()
                        .map(|(i, x)| {
                            Var::Tuple(vec![Var::py_const(py, start + i as i64), x].into())
                        })
                        .collect(),
                )
            }
            ("reversed", [v]) if no_kw => {
                if matches!(v, Var::Iter(_) | Var::Library(_) | Var::Generator(_)) {
                    return Err(unsupported(
                        "reversed() of an iterator (the frame raises TypeError)",
                    ));
                }
                let mut items = self.iterate(v.clone())?;
                items.reverse();
                new_iter(items)
            }
            _ => return Ok(None),
        };
        Ok(Some(r))
    }

    /// `itertools` functions; `None` when `f` is none of them.
    pub(in crate::interp) fn itertools_call(
        &mut self,
        f: &Bound<'_, PyAny>,
        module: &str,
        name: &str,
        args: &[Var],
        kwargs: &[(String, Var)],
    ) -> Result<Option<Var>, TraceError> {
        let py = self.tx.py;
        let itertools = py.import("itertools")?;
        let chain = itertools.getattr("chain")?;
        let from_iterable =
            name == "from_iterable" && f.getattr("__self__").map(|s| s.is(chain)).unwrap_or(false);
        let listed =
            module == "itertools" && itertools.getattr(name).map(|g| f.is(g)).unwrap_or(false);
        if !from_iterable && !listed {
            return Ok(None);
        }
        // Over a lazy generator, the functions that CPython runs one pull at a time run as
        // lazy stand-ins (`lazy_polyfills.py`): the generator's body then interleaves with the
        // consumer as in eager. `product`, `permutations` and the `combinations` take their
        // arguments whole when made, as CPython does; `tee` shares one pull among its branches,
        // `groupby` among its groups.
        // A user iterator object (or old-protocol sequence) in an iterable position pulls one
        // `__next__` per item, as a `for` loop over it does (`lazy_object_iter`).
        let iterable_at: &[usize] = match name {
            "chain" | "zip_longest" => &[0, 1, 2, 3, 4, 5, 6, 7],
            "islice" | "groupby" | "pairwise" | "accumulate" | "cycle" | "tee" => &[0],
            "filterfalse" | "takewhile" | "dropwhile" | "starmap" => &[1],
            "compress" => &[0, 1],
            _ => &[],
        };
        let mut args = args.to_vec();
        for &i in iterable_at {
            if let Some(Var::Object(o)) = args.get(i) {
                let o = o.clone();
                if let Some(g) = self.lazy_object_iter(&o)? {
                    args[i] = g;
                }
            }
        }
        let args = &args[..];
        let lazy = args
            .iter()
            .chain(kwargs.iter().map(|(_, v)| v))
            .any(holds_lazy);
        if lazy {
            let polyfill = match name {
                "from_iterable" if from_iterable => Some("chain_from_iterable"),
                "accumulate" if args.len() > 2 => None,
                "chain" | "filterfalse" | "takewhile" | "dropwhile" | "accumulate" | "pairwise"
                | "starmap" | "compress" | "zip_longest" | "cycle" => Some(name),
                _ => None,
            };
            if name == "groupby"
                && !args.is_empty()
                && args.len() <= 2
                && kwargs.iter().all(|(k, _)| k == "key")
            {
                return self
                    .lazy_polyfill("groupby", args.to_vec(), kwargs.to_vec())
                    .map(Some);
            }
            if name == "tee" && kwargs.is_empty() && args.len() <= 2 {
                return self.polyfill_call("tee", args.to_vec(), vec![]).map(Some);
            }
            if let Some(p) = polyfill {
                return self
                    .lazy_polyfill(p, args.to_vec(), kwargs.to_vec())
                    .map(Some);
            }
        }
        let kw = |k: &str| kwargs.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
        let only_kw = |allowed: &[&str]| kwargs.iter().all(|(k, _)| allowed.contains(&k.as_str()));
        let arg = |i: usize, k: &str| args.get(i).cloned().or_else(|| kw(k));
        let bad = || unsupported(format!("itertools.{name} with these arguments"));
        let r = match name {
            "from_iterable" if args.len() == 1 && kwargs.is_empty() => {
                let outer = self.drain(args[0].clone())?;
                let mut out = Vec::new();
                for inner in outer {
                    out.extend(self.drain(inner)?);
                }
                new_iter(out)
            }
            "chain" if kwargs.is_empty() => {
                let mut out = Vec::new();
                for a in args {
                    out.extend(self.drain(a.clone())?);
                }
                new_iter(out)
            }
            "product" if only_kw(&["repeat"]) => {
                let repeat = match kw("repeat") {
                    Some(r) => self.int_arg(&r, "product(repeat=)")?.unwrap_or(1).max(0) as usize,
                    None => 1,
                };
                let mut pools = Vec::new();
                for a in args {
                    pools.push(self.drain(a.clone())?);
                }
                let pools: Vec<Vec<Var>> = (0..repeat).flat_map(|_| pools.clone()).collect();
                let mut rows: Vec<Vec<Var>> = vec![Vec::new()];
                for pool in &pools {
                    let mut next = Vec::new();
                    for r in &rows {
                        for x in pool {
                            let mut r = r.clone();
                            r.push(x.clone());
                            next.push(r);
                        }
                    }
                    rows = next;
                }
                new_iter(rows.into_iter().map(|r| Var::Tuple(r.into())).collect())
            }
            "permutations" | "combinations" | "combinations_with_replacement"
                if !args.is_empty() && only_kw(&["r"]) =>
            {
                let items = self.drain(args[0].clone())?;
                let r = match arg(1, "r") {
                    Some(r) => self.int_arg(&r, &format!("{name}(r=)"))?,
                    None => None,
                };
                if r.is_none() && name != "permutations" {
                    return Err(bad());
                }
                // The index patterns are the real function's over 0..n.
                let range = py
                    .import("builtins")?
                    .getattr("range")?
                    .call1((items.len(),))?;
                let idx = f.call1((range, r))?;
                let mut out = Vec::new();
                for t in idx.try_iter()? {
                    let t: Vec<usize> = t?.extract()?;
                    out.push(Var::Tuple(
                        t.into_iter()
                            .map(|j| items[j].clone())
                            .collect::<Vec<_>>()
                            .into(),
                    ));
                }
                new_iter(out)
            }
            "pairwise" if args.len() == 1 && kwargs.is_empty() => {
                let items = self.drain(args[0].clone())?;
                new_iter(
                    items
                        .windows(2)
                        .map(|w| Var::Tuple(w.to_vec().into()))
                        .collect(),
                )
            }
            "filterfalse" if args.len() == 2 && kwargs.is_empty() => {
                let items = self.drain(args[1].clone())?;
                let pred = &args[0];
                let call = !matches!(pred, Var::Py(o, _) if o.is_none(py));
                let mut out = Vec::new();
                for i in items {
                    let t = if call {
                        self.call(pred.clone(), vec![i.clone()], vec![])?
                    } else {
                        i.clone()
                    };
                    if !self.truth(&t)? {
                        out.push(i);
                    }
                }
                new_iter(out)
            }
            "compress" if args.len() == 2 && kwargs.is_empty() => {
                let rows = self.zip_rows(args.to_vec(), false)?;
                let mut out = Vec::new();
                for row in rows {
                    if self.truth(&row[1])? {
                        out.push(row[0].clone());
                    }
                }
                new_iter(out)
            }
            "accumulate"
                if !args.is_empty() && args.len() <= 2 && only_kw(&["func", "initial"]) =>
            {
                let items = self.drain(args[0].clone())?;
                let func = arg(1, "func").filter(|f| !matches!(f, Var::Py(o, _) if o.is_none(py)));
                let mut acc =
                    kw("initial").filter(|v| !matches!(v, Var::Py(o, _) if o.is_none(py)));
                let mut out: Vec<Var> = acc.iter().cloned().collect();
                for i in items {
                    let next = match acc.take() {
                        None => i,
                        Some(a) => match &func {
                            Some(f) => self.call(f.clone(), vec![a, i], vec![])?,
                            None => self.operator("add", vec![a, i])?,
                        },
                    };
                    out.push(next.clone());
                    acc = Some(next);
                }
                new_iter(out)
            }
            "islice" if (2..=4).contains(&args.len()) && kwargs.is_empty() => {
                let (start, stop, step) = if args.len() == 2 {
                    (0, self.int_arg(&args[1], "islice(stop)")?, 1)
                } else {
                    let start = self.int_arg(&args[1], "islice(start)")?.unwrap_or(0);
                    let stop = self.int_arg(&args[2], "islice(stop)")?;
                    let step = match args.get(3) {
                        Some(s) => self.int_arg(s, "islice(step)")?.unwrap_or(1),
                        None => 1,
                    };
                    (start, stop, step)
                };
                if start < 0 || step < 1 || stop.is_some_and(|s| s < 0) {
                    return Err(unsupported(
                        "islice() with negative or zero bounds (the frame raises ValueError)",
                    ));
                }
                if lazy {
                    let stop = stop.map_or_else(|| Var::none(py), |s| Var::py_const(py, s));
                    let bounds = vec![
                        args[0].clone(),
                        Var::py_const(py, start),
                        stop,
                        Var::py_const(py, step),
                    ];
                    return self.lazy_polyfill("islice", bounds, vec![]).map(Some);
                }
                let mut p = self.puller(args[0].clone())?;
                if stop.is_none() && matches!(p, Pull::Endless(_)) {
                    return Err(unsupported(
                        "islice() of an endless iterator without a stop",
                    ));
                }
                let mut out = Vec::new();
                let mut want = start;
                let mut i = 0i64;
                loop {
                    if stop.is_some_and(|s| want >= s) {
                        break;
                    }
                    let Some(v) = self.pull(&mut p)? else { break };
                    if i == want {
                        out.push(v);
                        want += step;
                    }
                    i += 1;
                }
                new_iter(out)
            }
            "count" if args.len() <= 2 && only_kw(&["start", "step"]) => {
                let start = match arg(0, "start") {
                    Some(s) => self.const_arg(&s, "count(start)")?,
                    None => 0i64.into_pyobject(py)?.into_any().unbind(),
                };
                let step = match arg(1, "step") {
                    Some(s) => self.const_arg(&s, "count(step)")?,
                    None => 1i64.into_pyobject(py)?.into_any().unbind(),
                };
                Var::Library(Rc::new(RefCell::new(LibObj::Count { next: start, step })))
            }
            "repeat" if !args.is_empty() && args.len() <= 2 && only_kw(&["times"]) => {
                match arg(1, "times") {
                    Some(t) => {
                        let n = self.int_arg(&t, "repeat(times)")?.unwrap_or(0).max(0) as usize;
                        new_iter(vec![args[0].clone(); n])
                    }
                    None => Var::Library(Rc::new(RefCell::new(LibObj::Repeat(args[0].clone())))),
                }
            }
            "cycle" if args.len() == 1 && kwargs.is_empty() => {
                let items = self.drain(args[0].clone())?;
                if items.is_empty() {
                    new_iter(items)
                } else {
                    Var::Library(Rc::new(RefCell::new(LibObj::Cycle { items, pos: 0 })))
                }
            }
            "zip_longest" if only_kw(&["fillvalue"]) => {
                let fill = kw("fillvalue").unwrap_or_else(|| Var::none(py));
                let mut cols = Vec::new();
                for a in args {
                    cols.push(self.drain(a.clone())?);
                }
                let n = cols.iter().map(|c| c.len()).max().unwrap_or(0);
                new_iter(
                    (0..n)
                        .map(|i| {
                            Var::Tuple(
                                cols.iter()
                                    .map(|c| c.get(i).cloned().unwrap_or_else(|| fill.clone()))
                                    .collect::<Vec<_>>()
                                    .into(),
                            )
                        })
                        .collect(),
                )
            }
            "groupby" if !args.is_empty() && args.len() <= 2 && only_kw(&["key"]) => {
                let items = self.drain(args[0].clone())?;
                let key = arg(1, "key").filter(|f| !matches!(f, Var::Py(o, _) if o.is_none(py)));
                let mut groups: Vec<(Var, Bound<'_, PyAny>, Vec<Var>)> = Vec::new();
                for i in items {
                    let k = match &key {
                        Some(f) => self.call(f.clone(), vec![i.clone()], vec![])?,
                        None => i.clone(),
                    };
                    let kp = k
                        .as_py(py)
                        .ok_or_else(|| unsupported("groupby() comparing keys that are tensors"))?;
                    let same = match groups.last() {
                        Some((_, last, _)) => last.eq(&kp)?,
                        None => false,
                    };
                    if same {
                        groups.last_mut().unwrap().2.push(i);
                    } else {
                        groups.push((k, kp, vec![i]));
                    }
                }
                new_iter(
                    groups
                        .into_iter()
                        .map(|(k, _, g)| Var::Tuple(vec![k, new_iter(g)].into()))
                        .collect(),
                )
            }
            "starmap" if args.len() == 2 && kwargs.is_empty() => {
                let items = self.drain(args[1].clone())?;
                let mut out = Vec::new();
                for i in items {
                    let a = self.iterate(i)?;
                    out.push(self.call(args[0].clone(), a, vec![])?);
                }
                new_iter(out)
            }
            "tee" if !args.is_empty() && args.len() <= 2 && kwargs.is_empty() => {
                let n = match args.get(1) {
                    Some(n) => self.int_arg(n, "tee(n)")?.unwrap_or(2).max(0) as usize,
                    None => 2,
                };
                let items = self.drain(args[0].clone())?;
                Var::Tuple(
                    (0..n)
                        .map(|_| new_iter(items.clone()))
                        .collect::<Vec<_>>()
                        .into(),
                )
            }
            "takewhile" | "dropwhile" if args.len() == 2 && kwargs.is_empty() => {
                let mut p = self.puller(args[1].clone())?;
                let mut out = Vec::new();
                let take = name == "takewhile";
                let mut dropping = true;
                loop {
                    if !take && !dropping {
                        if matches!(p, Pull::Endless(_)) {
                            return Err(unsupported("dropwhile() of an endless iterator"));
                        }
                        while let Some(v) = self.pull(&mut p)? {
                            out.push(v);
                        }
                        break;
                    }
                    let Some(v) = self.pull(&mut p)? else { break };
                    let t = self.call(args[0].clone(), vec![v.clone()], vec![])?;
                    let holds = self.truth(&t)?;
                    match (take, holds) {
                        (true, true) => out.push(v),
                        (true, false) => break,
                        (false, true) => {}
                        (false, false) => {
                            out.push(v);
                            dropping = false;
                        }
                    }
                }
                new_iter(out)
            }
            _ => return Err(bad()),
        };
        Ok(Some(r))
    }
}
