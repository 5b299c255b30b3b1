//! User generators consumed lazily, as torch.compile traces them: calling a generator function
//! whose consumer is not a builtin that drains it at once (a `for` loop, `zip`, `enumerate`, a
//! generator expression) makes a [`Var::Generator`] holding the function's frame, not started.
//! Each pull (`FOR_ITER`, `next`) resumes that frame in the tracer to its next `yield`, so the
//! generator's body and its consumer's run interleaved as in eager (their ops, prints and
//! other effects in eager's order). `zip`, `enumerate` and `map` over such a generator are
//! lazy too, pulling their arguments one row at a time.
//!
//! A generator cannot be rebuilt after the graph: one live at a graph break makes the graph
//! break before the call that made it instead (the generator then runs natively), and so does
//! one returned by the frame, or left suspended inside a `try`/`with` (closing it would run
//! code when eager drops it).

use std::cell::RefCell;
use std::rc::Rc;

use pyo3::prelude::*;

use super::gencm::{handler_around_yield, Resumed};
use super::inline::bind_arguments;
use super::vars::{FunctionVar, LazyIter, SavedFrame, Var};
use super::Frame;
use crate::error::TraceError;

impl LazyIter {
    pub fn type_name(&self) -> &'static str {
        match self {
            LazyIter::Frame { .. } => "generator",
            LazyIter::Zip(_) => "zip",
            LazyIter::Enumerate(..) => "enumerate",
            LazyIter::Map(..) => "map",
        }
    }

    /// The earliest root instruction that made a generator this iterator pulls from.
    fn made_at(&self) -> Option<usize> {
        match self {
            LazyIter::Frame { made_at, .. } => Some(*made_at),
            LazyIter::Zip(its) | LazyIter::Map(_, its) => its.iter().filter_map(made_at).min(),
            LazyIter::Enumerate(it, _) => made_at(it),
        }
    }
}

/// Where the graph must break instead so that the lazy generator `v` (if it is one) is not
/// live across the break or after the frame: before the call that made it.
pub(super) fn made_at(v: &Var) -> Option<usize> {
    match v {
        Var::Generator(g) => g.borrow().made_at(),
        _ => None,
    }
}

/// The earliest instruction that made a lazy generator held on `stack` or in `locals`.
pub(super) fn break_before_generators(stack: &[Var], locals: &[Option<Var>]) -> Option<usize> {
    stack
        .iter()
        .chain(locals.iter().flatten())
        .filter_map(made_at)
        .min()
}

/// The module of lazy stand-ins (`lazy_polyfills.py`), made once per process.
fn polyfills(py: Python<'_>) -> PyResult<Bound<'_, PyModule>> {
    static M: pyo3::sync::PyOnceLock<Py<PyModule>> = pyo3::sync::PyOnceLock::new();
    let m = M.get_or_try_init(py, || -> PyResult<Py<PyModule>> {
        let code = std::ffi::CString::new(include_str!("lazy_polyfills.py"))
            .expect("no NUL in the polyfill source");
        Ok(PyModule::from_code(
            py,
            &code,
            c"<torchferro lazy_polyfills>",
            c"torchferro._lazy_polyfills",
        )?
        .unbind())
    })?;
    Ok(m.bind(py).clone())
}

impl Frame<'_, '_> {
    /// A call of a plain generator function that no draining builtin consumes: its frame,
    /// arguments bound, not started (`args` are bound as the call binds them).
    pub(super) fn lazy_generator(&mut self, f: &FunctionVar, locals: Vec<Option<Var>>) -> Var {
        let py = self.tx.py;
        let globals = f.globals.bind(py).clone();
        let code = f.code.bind(py).clone();
        let info = self
            .tx
            .code_info(&code)
            .expect("decoded by the call that binds its arguments");
        let g = Rc::new(RefCell::new(LazyIter::Frame {
            frame: Some(SavedFrame {
                code: info,
                foreign_globals: !globals.is(&self.tx.globals),
                globals: globals.unbind(),
                closure: f.closure.clone(),
                cells: f.cells.clone(),
                stack: Vec::new(),
                locals,
                pc: 0,
            }),
            running: false,
            made_at: self.tx.root_index,
            result: None,
        }));
        self.tx.generators.push(g.clone());
        Var::Generator(g)
    }

    /// The next item of a lazy generator, `None` at its end.
    pub(super) fn generator_next(
        &mut self,
        g: &Rc<RefCell<LazyIter>>,
    ) -> Result<Option<Var>, TraceError> {
        let py = self.tx.py;
        // Each kind is read out before pulling: the pull runs traced code that may reach `g`.
        enum Step {
            Resume(SavedFrame),
            Row(Vec<Var>, Option<Var>),
            Count(Var, i64),
        }
        let step = match &mut *g.borrow_mut() {
            LazyIter::Frame { frame, running, .. } => {
                if *running {
                    return Err(TraceError::unsupported(
                        "a generator that pulls from itself (the frame raises ValueError)",
                    ));
                }
                match frame.take() {
                    None => return Ok(None),
                    Some(f) => {
                        *running = true;
                        Step::Resume(f)
                    }
                }
            }
            LazyIter::Zip(its) => Step::Row(its.clone(), None),
            LazyIter::Map(f, its) => Step::Row(its.clone(), Some(f.clone())),
            LazyIter::Enumerate(it, n) => {
                let r = Step::Count(it.clone(), *n);
                *n += 1;
                r
            }
        };
        match step {
            Step::Resume(f) => {
                let r = self.resume_generator(f, None);
                let mut b = g.borrow_mut();
                let LazyIter::Frame {
                    frame,
                    running,
                    result,
                    ..
                } = &mut *b
                else {
                    return Err(TraceError::internal("a generator changed kind"));
                };
                *running = false;
                match r? {
                    Resumed::Yielded(v, f) => {
                        *frame = Some(*f);
                        Ok(Some(v))
                    }
                    Resumed::Returned(v) => {
                        *result = Some(v);
                        Ok(None)
                    }
                }
            }
            Step::Row(its, f) => {
                let mut row = Vec::new();
                for it in &its {
                    match self.iter_next(it)? {
                        Some(v) => row.push(v),
                        None => return Ok(None),
                    }
                }
                match f {
                    Some(f) => self.call(f, row, vec![]).map(Some),
                    None => Ok(Some(Var::Tuple(row.into()))),
                }
            }
            Step::Count(it, n) => {
                let item = self.iter_next(&it)?;
                if item.is_none() {
                    // Not counted: enumerate's count moves only with an item.
                    if let LazyIter::Enumerate(_, next) = &mut *g.borrow_mut() {
                        *next -= 1;
                    }
                }
                Ok(item.map(|v| Var::Tuple(vec![Var::py_const(py, n), v].into())))
            }
        }
    }

    /// `g.send(v)` of a lazy generator: `v` becomes the value of the `yield` the frame stopped
    /// at (the `None` that `YIELD_VALUE` left on its stack for `next`), then the frame runs to
    /// its next `yield`, whose value is the result; at its end `StopIteration` carrying the
    /// return value is raised in the traced code. Sending a value to a generator that has not
    /// started raises `TypeError` in eager: left to the frame (a break). Before, `send` broke
    /// the graph and the whole function ran eagerly (session 26).
    pub(super) fn generator_send(
        &mut self,
        g: &Rc<RefCell<LazyIter>>,
        v: Var,
    ) -> Result<Var, TraceError> {
        let py = self.tx.py;
        if !matches!(&v, Var::Py(o, _) if o.is_none(py)) {
            let mut b = g.borrow_mut();
            let LazyIter::Frame {
                frame: Some(f),
                running: false,
                ..
            } = &mut *b
            else {
                return Err(TraceError::unsupported(
                    "generator.send() of a value to a generator not suspended at a yield",
                ));
            };
            match f.stack.last_mut() {
                Some(top) if f.pc > 0 => *top = v,
                _ => {
                    return Err(TraceError::unsupported(
                        "generator.send() of a value to a generator that has not started \
                         (the frame raises TypeError)",
                    ))
                }
            }
        }
        match self.generator_next(g)? {
            Some(item) => Ok(item),
            None => {
                let value = match &*g.borrow() {
                    LazyIter::Frame {
                        result: Some(r), ..
                    } => r.clone(),
                    _ => Var::none(py),
                };
                let fallback = TraceError::unsupported(
                    "generator.send() at the generator's end (the frame raises StopIteration)",
                );
                // The exception is a real object: a return value the graph computes (a tensor)
                // cannot be its `value` at trace time.
                let Some(value) = value.as_py(py) else {
                    return Err(TraceError::unsupported(
                        "generator.send() at the generator's end, returning a value the graph \
                         computes (StopIteration.value)",
                    ));
                };
                Err(self.raise_new("StopIteration", (value,), fallback))
            }
        }
    }

    /// `SEND` of `yield from` (iteration sends only `None`): the sub-iterator's next item, or
    /// at its end its return value, with the jump past the loop. 3.11 pops the sub-iterator
    /// there; 3.12 leaves it to the `END_SEND` the jump lands on.
    pub(super) fn yield_from_send(&mut self, target: Option<usize>) -> Result<(), TraceError> {
        let py = self.tx.py;
        let sent = self.pop()?;
        if !matches!(&sent, Var::Py(o, _) if o.is_none(py)) {
            return Err(TraceError::unsupported(
                "generator.send() of a value through yield from",
            ));
        }
        let it = self.peek(0)?.clone();
        if let Some(v) = self.iter_next(&it)? {
            self.stack.push(v);
            return Ok(());
        }
        let value = match &it {
            Var::Generator(g) => match &*g.borrow() {
                LazyIter::Frame {
                    result: Some(v), ..
                } => v.clone(),
                _ => Var::none(py),
            },
            _ => Var::none(py),
        };
        let to = target.ok_or_else(|| TraceError::internal("SEND without a target"))?;
        if self.code.ins.get(to).map(|i| i.name.as_str()) != Some("END_SEND") {
            self.pop()?;
        }
        self.stack.push(value);
        self.pc = to;
        Ok(())
    }

    /// The items of an iterable something takes whole (`Var::take_items`), a lazy generator
    /// run to its end.
    pub(super) fn take_items_of(&mut self, v: &Var) -> Result<Option<Vec<Var>>, TraceError> {
        match v {
            Var::Generator(_) => self.drain(v.clone()).map(Some),
            v => Ok(v.take_items(self.tx.py)),
        }
    }

    /// `itertools.<name>` (or `filter`) made lazy: its stand-in in `lazy_polyfills.py` called
    /// with `args` and `kwargs` as a lazy user generator, pulled one item at a time.
    pub(super) fn lazy_polyfill(
        &mut self,
        name: &str,
        args: Vec<Var>,
        kwargs: Vec<(String, Var)>,
    ) -> Result<Var, TraceError> {
        let py = self.tx.py;
        let f = polyfills(py)?.getattr(name)?;
        let fv = self.function_of(&f, None)?;
        let code = fv.code.bind(py).clone();
        let info = self.tx.code_info(&code)?;
        let locals = bind_arguments(py, &fv, &code, &info.localsplus, args, kwargs)?;
        let mut all_locals: Vec<Option<Var>> = vec![None; info.localsplus.len()];
        for (i, v) in locals.into_iter().enumerate() {
            all_locals[i] = v;
        }
        Ok(self.lazy_generator(&fv, all_locals))
    }

    /// A plain function of `lazy_polyfills.py` (one that makes lazy generators, `tee`) called
    /// as traced code.
    pub(super) fn polyfill_call(
        &mut self,
        name: &str,
        args: Vec<Var>,
        kwargs: Vec<(String, Var)>,
    ) -> Result<Var, TraceError> {
        let f = polyfills(self.tx.py)?.getattr(name)?;
        let fv = self.function_of(&f, None)?;
        self.inline_call(&fv, args, kwargs)
    }

    /// `zip`, `enumerate` or `map` made lazy because an argument is a lazy generator or a
    /// user object (whose `__next__` may have effects: `get_iter` pulls it one item at a time);
    /// `None` when none is (their items are then computed when they are made, as before).
    pub(super) fn lazy_combinator(
        &mut self,
        name: &str,
        args: &[Var],
        start: i64,
    ) -> Result<Option<Var>, TraceError> {
        let lazy = |v: &Var| matches!(v, Var::Generator(_) | Var::Object(_));
        let it = match (name, args) {
            ("zip", its) if its.iter().any(lazy) => {
                let its = its
                    .iter()
                    .map(|v| self.get_iter(v.clone()))
                    .collect::<Result<Vec<_>, _>>()?;
                LazyIter::Zip(its)
            }
            ("enumerate", [it]) if lazy(it) => {
                LazyIter::Enumerate(self.get_iter(it.clone())?, start)
            }
            // A traced function may have effects between the consumer's items: lazy too.
            ("map", [f, its @ ..])
                if its.iter().any(lazy) || (matches!(f, Var::Function(_)) && !its.is_empty()) =>
            {
                let its = its
                    .iter()
                    .map(|v| self.get_iter(v.clone()))
                    .collect::<Result<Vec<_>, _>>()?;
                LazyIter::Map(f.clone(), its)
            }
            _ => return Ok(None),
        };
        Ok(Some(Var::Generator(Rc::new(RefCell::new(it)))))
    }

    /// At the root frame's return or graph break: a generator left suspended inside a `try`
    /// or `with` block would run code when eager drops it (its `finally`, an `__exit__`), so
    /// the graph breaks before the call that made it instead.
    pub(super) fn check_suspended_generators(&self) -> Result<(), TraceError> {
        for g in &self.tx.generators {
            if let LazyIter::Frame {
                frame: Some(f),
                made_at,
                ..
            } = &*g.borrow()
            {
                if f.pc > 0 && handler_around_yield(f) {
                    return Err(TraceError::unsupported(
                        "a generator left suspended inside a try or with block (closing it \
                         runs code)",
                    )
                    .in_root_instruction(*made_at));
                }
            }
        }
        Ok(())
    }
}
