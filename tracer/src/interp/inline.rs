//! Inlining: a call to a user function (or method, lambda, closure, `functools.partial`, or a
//! user `nn.Module`'s forward) runs its bytecode in a child frame of the same trace, so its ops
//! land in the same graph.

use std::cell::RefCell;
use std::rc::Rc;

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};

use crate::error::TraceError;
use crate::source::Source;

use super::vars::{FunctionVar, Var};
use super::{Frame, FrameCtx, MAX_INLINE_DEPTH};

const CO_VARARGS: u32 = 0x04;
const CO_VARKEYWORDS: u32 = 0x08;

impl<'a, 'py> Frame<'a, 'py> {
    /// MAKE_FUNCTION: a function object made by the traced code.
    pub(super) fn make_function(&mut self, flags: usize, code: Var) -> Result<Var, TraceError> {
        let py = self.tx.py;
        let Var::Py(code, _) = code else {
            return Err(TraceError::internal("MAKE_FUNCTION without a code object"));
        };
        let closure = if flags & 0x08 != 0 {
            self.pop()?
                .items(py)
                .ok_or_else(|| TraceError::internal("closure is not a tuple"))?
        } else {
            Vec::new()
        };
        if flags & 0x04 != 0 {
            self.pop()?; // annotations
        }
        let kwdefaults = if flags & 0x02 != 0 {
            match self.pop()? {
                Var::Dict(d) => d
                    .borrow()
                    .iter()
                    .map(|(k, v)| Ok((k.bind(py).extract::<String>()?, v.clone())))
                    .collect::<Result<Vec<_>, TraceError>>()?,
                _ => return Err(TraceError::internal("kwdefaults is not a dict")),
            }
        } else {
            Vec::new()
        };
        let defaults = if flags & 0x01 != 0 {
            self.pop()?
                .items(py)
                .ok_or_else(|| TraceError::internal("defaults is not a tuple"))?
        } else {
            Vec::new()
        };
        let name: String = code.bind(py).getattr("co_name")?.extract()?;
        Ok(Var::Function(Rc::new(FunctionVar {
            code,
            name,
            globals: self.ctx.globals.clone().unbind(),
            defaults,
            kwdefaults,
            closure,
            cells: Rc::from([]),
            attrs: RefCell::new(Vec::new()),
        })))
    }

    /// A live Python function object as an inlinable function. Its defaults and closure contents
    /// are read through `source` (when known) so they are guarded like any other input.
    pub(super) fn function_of(
        &mut self,
        f: &Bound<'py, PyAny>,
        source: Option<&Source>,
    ) -> Result<Rc<FunctionVar>, TraceError> {
        let py = self.tx.py;
        let code = f.getattr("__code__")?;
        let globals = f
            .getattr("__globals__")?
            .cast_into::<PyDict>()
            .map_err(PyErr::from)?;
        let name: String = f.getattr("__name__")?.extract()?;
        let mut defaults = Vec::new();
        let d = f.getattr("__defaults__")?;
        if !d.is_none() {
            for (i, v) in d.cast::<PyTuple>().map_err(PyErr::from)?.iter().enumerate() {
                let s = source.map(|s| {
                    s.attr(py, "__defaults__")
                        .item(i.into_pyobject(py).unwrap().into_any())
                });
                defaults.push(self.tx.wrap(v, s)?);
            }
        }
        let mut kwdefaults = Vec::new();
        let kd = f.getattr("__kwdefaults__")?;
        if !kd.is_none() {
            for (k, v) in kd.cast::<PyDict>().map_err(PyErr::from)?.iter() {
                let key: String = k.extract()?;
                let s = source.map(|s| s.attr(py, "__kwdefaults__").item(k.clone()));
                kwdefaults.push((key, self.tx.wrap(v, s)?));
            }
        }
        let mut closure = Vec::new();
        let mut cells = Vec::new();
        let c = f.getattr("__closure__")?;
        if !c.is_none() {
            for (i, cell) in c.cast::<PyTuple>().map_err(PyErr::from)?.iter().enumerate() {
                let cell_src = source.map(|s| {
                    s.attr(py, "__closure__")
                        .item(i.into_pyobject(py).unwrap().into_any())
                });
                cells.push(cell_src.clone().map(|s| (cell.clone().unbind(), s)));
                if let Some(v) = self.written_root_cell(&cell) {
                    closure.push(v);
                    continue;
                }
                // Written earlier in this trace through another function over the same cell.
                if let Some(v) = self
                    .tx
                    .effects
                    .attr(py, &cell.clone().unbind(), "cell_contents")
                {
                    closure.push(v);
                    continue;
                }
                match cell.getattr("cell_contents") {
                    Ok(v) => {
                        let s = cell_src.map(|s| s.attr(py, "cell_contents"));
                        closure.push(self.tx.wrap(v, s)?);
                    }
                    Err(_) => closure.push(Var::Cell(Rc::new(RefCell::new(None)))),
                }
            }
        }
        Ok(Rc::new(FunctionVar {
            code: code.unbind(),
            name,
            globals: globals.unbind(),
            defaults,
            kwdefaults,
            closure,
            cells: cells.into(),
            attrs: RefCell::new(Vec::new()),
        }))
    }

    /// Runs `f(*args, **kwargs)` in a child frame and returns its result.
    pub(super) fn inline_call(
        &mut self,
        f: &FunctionVar,
        args: Vec<Var>,
        kwargs: Vec<(String, Var)>,
    ) -> Result<Var, TraceError> {
        let py = self.tx.py;
        if self.tx.depth >= MAX_INLINE_DEPTH {
            return Err(TraceError::unsupported(format!(
                "inlining deeper than {MAX_INLINE_DEPTH} calls (recursion) at {}",
                f.name
            )));
        }
        let code = f.code.bind(py).clone();
        let flags: u32 = code.getattr("co_flags")?.extract()?;
        // A generator expression passed straight to a call is run to its end when made: its
        // consumer (`tuple`, `sum`, `"".join`, a torch function) gets the values it yields. A
        // user generator function is run the same way where its call is the first argument of
        // a builtin that drains it (`list`, `sum`, `sorted`, ...) or stops at the deciding item
        // (`any`, `all`, `next`): nothing runs between its items then, as in eager. Elsewhere
        // (a `for` loop, `zip`, `enumerate`, a generator stored and pulled later, whose
        // consumer runs code between its items) it is made lazy: its frame runs to one `yield`
        // per pull (`generators.rs`), so each item sees the state the consumer left (a closure
        // variable it rebound, a list it appended to).
        let plain_generator = flags & 0x20 != 0 && flags & (0x80 | 0x100 | 0x200) == 0;
        let generator = plain_generator
            && ((f.name == "<genexpr>" && !self.result_outlives_call())
                || self.short_circuit_consumer()?.is_some()
                || self.draining_consumer()?);
        if flags & (0x80 | 0x100 | 0x200) != 0 {
            return Err(TraceError::unsupported(format!(
                "calling the coroutine or async generator function {}",
                f.name
            )));
        }
        let info = self.tx.code_info(&code)?;
        let locals = bind_arguments(py, f, &code, &info.localsplus, args, kwargs)?;
        let globals = f.globals.bind(py).clone();
        let foreign_globals = !globals.is(&self.tx.globals);
        let mut all_locals: Vec<Option<Var>> = vec![None; info.localsplus.len()];
        for (i, v) in locals.into_iter().enumerate() {
            all_locals[i] = v;
        }
        if plain_generator && !generator {
            return Ok(self.lazy_generator(f, all_locals));
        }
        let short = if generator {
            self.short_circuit_consumer()?
        } else {
            None
        };
        self.tx.depth += 1;
        let site = self.site();
        self.tx.callers.push(site);
        let caught = self.caught_here();
        self.tx.caught_by_callers += usize::from(caught);
        let r = {
            let mut child = Frame {
                tx: &mut *self.tx,
                code: info,
                ctx: FrameCtx {
                    root: false,
                    globals,
                    foreign_globals,
                    closure: f.closure.clone(),
                    cells: f.cells.clone(),
                },
                stack: Vec::new(),
                locals: all_locals,
                kw_names: None,
                pc: 0,
                yields: generator.then(Vec::new),
                stop_at_yield: short.is_some(),
            };
            match short {
                Some(consumer) => child.run_until_decided(consumer),
                None => child.run().map(|ret| match child.yields.take() {
                    Some(items) => Var::Iter(Rc::new(RefCell::new((items, 0)))),
                    None => ret,
                }),
            }
        };
        self.tx.caught_by_callers -= usize::from(caught);
        self.tx.callers.pop();
        self.tx.depth -= 1;
        r
    }
}

/// A builtin that stops pulling from its argument once the answer is known.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum ShortCircuit {
    Any,
    All,
    Next,
}

impl Frame<'_, '_> {
    /// The short-circuiting builtin (`any`, `all`, `next`) a generator expression being called
    /// is the first argument of: the stack then holds `NULL, builtin` just below the call. Its
    /// items past the deciding one are never produced in eager (no side effects, no ops).
    fn short_circuit_consumer(&self) -> Result<Option<ShortCircuit>, TraceError> {
        let py = self.tx.py;
        let n = self.stack.len();
        if n < 2 || !matches!(self.stack[n - 2], Var::Null) {
            return Ok(None);
        }
        let Var::Py(f, _) = &self.stack[n - 1] else {
            return Ok(None);
        };
        let builtins = py.import("builtins")?;
        let f = f.bind(py);
        Ok(if f.is(builtins.getattr("any")?) {
            Some(ShortCircuit::Any)
        } else if f.is(builtins.getattr("all")?) {
            Some(ShortCircuit::All)
        } else if f.is(builtins.getattr("next")?) {
            Some(ShortCircuit::Next)
        } else {
            None
        })
    }

    /// Whether the result of the call being made is kept or looped over rather than passed to
    /// a call: the next instruction stores it (`g = (... for ...)`) or takes its iterator (a
    /// `for` loop over it), so code runs between its items.
    fn result_outlives_call(&self) -> bool {
        self.code.ins.get(self.pc).is_some_and(|i| {
            matches!(
                i.name.as_str(),
                "GET_ITER" | "STORE_FAST" | "STORE_DEREF" | "STORE_NAME"
            )
        })
    }

    /// Whether the generator being called is the first argument of a builtin that takes every
    /// item before anything else runs (`list(gen(...))`, `sum(gen(...))`): the stack then holds
    /// `NULL, builtin` just below the call.
    fn draining_consumer(&self) -> Result<bool, TraceError> {
        let py = self.tx.py;
        let n = self.stack.len();
        if n < 2 || !matches!(self.stack[n - 2], Var::Null) {
            return Ok(false);
        }
        let Var::Py(f, _) = &self.stack[n - 1] else {
            return Ok(false);
        };
        let builtins = py.import("builtins")?;
        let f = f.bind(py);
        for name in [
            "list",
            "tuple",
            "set",
            "frozenset",
            "dict",
            "sum",
            "sorted",
            "min",
            "max",
        ] {
            if f.is(builtins.getattr(name)?) {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Runs a generator expression one yield at a time until `consumer` has its answer; its
    /// result is an iterator over the items produced, which the consumer then reads. An item
    /// whose truth is not known at trace time (a tensor) makes it run to its end as before, so
    /// the consumer breaks the graph where it did.
    fn run_until_decided(&mut self, consumer: ShortCircuit) -> Result<Var, TraceError> {
        let mut decided_by_truth = true;
        loop {
            let before = self.yields.as_ref().map_or(0, |y| y.len());
            self.run()?;
            let Some(item) = self.yields.as_ref().and_then(|y| y.get(before).cloned()) else {
                break;
            };
            let stop = match consumer {
                ShortCircuit::Next => true,
                _ if !decided_by_truth => false,
                _ => match self.truth(&item) {
                    Ok(t) => t == (consumer == ShortCircuit::Any),
                    Err(TraceError::Unsupported { .. }) => {
                        decided_by_truth = false;
                        false
                    }
                    Err(e) => return Err(e),
                },
            };
            if stop {
                break;
            }
        }
        let items = self.yields.take().unwrap_or_default();
        Ok(Var::Iter(Rc::new(RefCell::new((items, 0)))))
    }
}

/// Binds call arguments to a code object's parameters, as Python does; a call Python would
/// reject (missing or unexpected arguments) is left to run eagerly, where it raises.
pub(super) fn bind_arguments(
    py: Python<'_>,
    f: &FunctionVar,
    code: &Bound<'_, PyAny>,
    names: &[String],
    args: Vec<Var>,
    kwargs: Vec<(String, Var)>,
) -> Result<Vec<Option<Var>>, TraceError> {
    let argcount: usize = code.getattr("co_argcount")?.extract()?;
    let posonly: usize = code.getattr("co_posonlyargcount")?.extract()?;
    let kwonly: usize = code.getattr("co_kwonlyargcount")?.extract()?;
    let flags: u32 = code.getattr("co_flags")?.extract()?;
    let has_varargs = flags & CO_VARARGS != 0;
    let has_varkw = flags & CO_VARKEYWORDS != 0;
    let nslots = argcount + kwonly + usize::from(has_varargs) + usize::from(has_varkw);
    let mut slots: Vec<Option<Var>> = vec![None; nslots];
    let bad = |msg: String| TraceError::unsupported(format!("{msg} (the call raises TypeError)"));
    let mut extra = Vec::new();
    for (i, a) in args.into_iter().enumerate() {
        if i < argcount {
            slots[i] = Some(a);
        } else {
            extra.push(a);
        }
    }
    if !extra.is_empty() && !has_varargs {
        return Err(bad(format!(
            "{}() takes {argcount} positional arguments",
            f.name
        )));
    }
    if has_varargs {
        slots[argcount + kwonly] = Some(Var::Tuple(extra.into()));
    }
    let mut varkw = Vec::new();
    for (k, v) in kwargs {
        let pos = names[..argcount + kwonly]
            .iter()
            .position(|n| *n == k)
            .filter(|&i| i >= posonly);
        match pos {
            Some(i) if slots[i].is_none() => slots[i] = Some(v),
            Some(_) => {
                return Err(bad(format!(
                    "{}() got multiple values for argument '{k}'",
                    f.name
                )))
            }
            None if has_varkw => varkw.push((k.into_pyobject(py)?.into_any().unbind(), v)),
            None => {
                return Err(bad(format!(
                    "{}() got an unexpected keyword argument '{k}'",
                    f.name
                )))
            }
        }
    }
    if has_varkw {
        slots[argcount + kwonly + usize::from(has_varargs)] =
            Some(Var::Dict(Rc::new(RefCell::new(varkw))));
    }
    let ndef = f.defaults.len();
    for i in 0..argcount {
        if slots[i].is_none() && i + ndef >= argcount {
            slots[i] = Some(f.defaults[i + ndef - argcount].clone());
        }
        if slots[i].is_none() {
            return Err(bad(format!("{}() missing argument '{}'", f.name, names[i])));
        }
    }
    for i in argcount..argcount + kwonly {
        if slots[i].is_none() {
            slots[i] = f
                .kwdefaults
                .iter()
                .find(|(k, _)| *k == names[i])
                .map(|(_, v)| v.clone());
        }
        if slots[i].is_none() {
            return Err(bad(format!(
                "{}() missing keyword-only argument '{}'",
                f.name, names[i]
            )));
        }
    }
    Ok(slots)
}
