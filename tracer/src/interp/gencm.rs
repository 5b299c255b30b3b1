//! `@contextlib.contextmanager` context managers, traced as torch.compile traces them: calling
//! the decorated function makes a [`Var::GenCm`] (nothing runs yet); `with cm as v:` runs its
//! generator in the tracer up to its `yield` (`v` is the yielded value), keeps the generator's
//! frame suspended, and the block's exit resumes it: to its end on a normal exit, or with the
//! block's exception thrown in at the `yield` (its `try`/`finally`/`except` run traced; the
//! exception suppressed when the generator returns, re-raised when it re-raises it).
//!
//! What `contextlib._GeneratorContextManager` would do otherwise (a generator that yields twice,
//! one that raises another exception, entering twice) is left to run natively: the graph breaks
//! before it.

use std::cell::RefCell;
use std::rc::Rc;

use pyo3::prelude::*;

use super::inline::bind_arguments;
use super::vars::{FunctionVar, GenCmVar, SavedFrame};
use super::{Frame, FrameCtx, Var};
use crate::error::TraceError;

/// `co_qualname` of the function `contextlib.contextmanager` returns.
const HELPER: &str = "contextmanager.<locals>.helper";

impl<'a, 'py> Frame<'a, 'py> {
    /// A call of a `@contextlib.contextmanager` function: the manager, its generator not
    /// started (as `helper` makes a `_GeneratorContextManager`, whose generator starts on
    /// `__enter__`... the generator object is made at once, but runs no code until then).
    pub(super) fn generator_cm_call(
        &mut self,
        f: &Bound<'_, PyAny>,
        src: Option<&crate::source::Source>,
        args: &[Var],
        kwargs: &[(String, Var)],
    ) -> Result<Option<Var>, TraceError> {
        let py = self.tx.py;
        // `contextlib.contextmanager(f)` of a generator function the frame made.
        if let [Var::Function(func)] = args {
            let cm = py.import("contextlib")?.getattr("contextmanager")?;
            if f.is(&cm) && kwargs.is_empty() && is_generator_function(py, func)? {
                return Ok(Some(Var::GenCmFunction(func.clone())));
            }
        }
        let Ok(code) = f.getattr("__code__") else {
            return Ok(None);
        };
        let qualname: String = code.getattr("co_qualname")?.extract().unwrap_or_default();
        let filename: String = code.getattr("co_filename")?.extract().unwrap_or_default();
        if qualname != HELPER || !filename.ends_with("/contextlib.py") {
            return Ok(None);
        }
        let Ok(wrapped) = f.getattr("__wrapped__") else {
            return Ok(None);
        };
        let wrapped_src = src.map(|s| s.attr(py, "__wrapped__"));
        let wrapped = wrapped.unbind().into_bound(py);
        if !self.inlinable(&wrapped)? {
            return Ok(None);
        }
        let func = self.function_of(&wrapped, wrapped_src.as_ref())?;
        if !is_generator_function(py, &func)? {
            return Ok(None);
        }
        Ok(Some(generator_cm(func, args, kwargs, self.tx.root_index)))
    }

    /// `__enter__`: runs the generator to its first `yield` and returns the yielded value.
    pub(super) fn generator_cm_enter(
        &mut self,
        g: &Rc<RefCell<GenCmVar>>,
    ) -> Result<Var, TraceError> {
        let py = self.tx.py;
        let (func, args, kwargs) = {
            let mut g = g.borrow_mut();
            if g.entered {
                return Err(TraceError::unsupported(
                    "entering a @contextmanager context manager twice (the call raises)",
                ));
            }
            g.entered = true;
            (g.func.clone(), g.args.clone(), g.kwargs.clone())
        };
        let code = func.code.bind(py).clone();
        let info = self.tx.code_info(&code)?;
        let locals = bind_arguments(py, &func, &code, &info.localsplus, args, kwargs)?;
        let mut all_locals: Vec<Option<Var>> = vec![None; info.localsplus.len()];
        for (i, v) in locals.into_iter().enumerate() {
            all_locals[i] = v;
        }
        let globals = func.globals.bind(py).clone();
        let saved = SavedFrame {
            code: info,
            foreign_globals: !globals.is(&self.tx.globals),
            globals: globals.unbind(),
            closure: func.closure.clone(),
            cells: func.cells.clone(),
            stack: Vec::new(),
            locals: all_locals,
            pc: 0,
        };
        match self.resume_generator(saved, None)? {
            Resumed::Yielded(v, frame) => {
                g.borrow_mut().frame = Some(*frame);
                Ok(v)
            }
            Resumed::Returned(_) => Err(TraceError::unsupported(
                "a @contextmanager generator that does not yield (its __enter__ raises)",
            )),
        }
    }

    /// `__exit__(type, value, traceback)`: resumes the generator, with the block's exception
    /// thrown in at its `yield` when there is one. Returns whether the exception is suppressed.
    pub(super) fn generator_cm_exit(
        &mut self,
        g: &Rc<RefCell<GenCmVar>>,
        args: &[Var],
    ) -> Result<Var, TraceError> {
        let py = self.tx.py;
        let Some(frame) = g.borrow_mut().frame.take() else {
            return Err(TraceError::unsupported(
                "__exit__ of a @contextmanager context manager that is not suspended",
            ));
        };
        let exc = match args {
            [_, Var::Py(o, _), _] if o.is_none(py) => None,
            [_, v, _] => Some(
                v.as_py(py)
                    .ok_or_else(|| TraceError::unsupported("__exit__ with a tracked exception"))?,
            ),
            _ => {
                return Err(TraceError::unsupported(
                    "__exit__ of a @contextmanager context manager called without 3 arguments",
                ))
            }
        };
        match (self.resume_generator(frame, exc.clone()), exc) {
            (Ok(Resumed::Returned(_)), None) => Ok(Var::py_const(py, false)),
            // The generator swallowed the exception: the `with` statement goes on.
            (Ok(Resumed::Returned(_)), Some(_)) => Ok(Var::py_const(py, true)),
            // Yielded again on a normal exit: contextlib raises RuntimeError (3.12 also closes
            // the generator, a no-op where no `try` encloses the `yield`; 3.11 leaves it to the
            // garbage collector). Raised here as a traced exception the frame may catch.
            (Ok(Resumed::Yielded(_, saved)), None) if !handler_around_yield(&saved) => {
                let exc = py
                    .import("builtins")?
                    .getattr("RuntimeError")?
                    .call1(("generator didn't stop",))?;
                let fallback = self.uncaught(&exc);
                Err(TraceError::Raised {
                    exc: exc.unbind(),
                    fallback: Box::new(fallback),
                })
            }
            (Ok(Resumed::Yielded(..)), _) => Err(TraceError::unsupported(
                "a @contextmanager generator that yields twice inside a `try` or after a thrown \
                 exception (its __exit__ raises RuntimeError)",
            )),
            // The same exception re-raised: `__exit__` returns False and the `with` statement
            // re-raises it.
            (Err(TraceError::Raised { exc: e, .. }), Some(thrown)) if e.bind(py).is(&thrown) => {
                Ok(Var::py_const(py, false))
            }
            (Err(e @ TraceError::Raised { .. }), _) => {
                // Another exception (or one raised on a normal exit): contextlib adjusts
                // StopIteration and chains; left to run natively.
                let fallback = match e {
                    TraceError::Raised { fallback, .. } => *fallback,
                    e => e,
                };
                Err(fallback)
            }
            (Err(e), _) => Err(e),
        }
    }

    /// Runs a generator frame from where it stopped (with `throw` raised at its `yield`) to its
    /// next `yield` or its end.
    pub(super) fn resume_generator(
        &mut self,
        saved: SavedFrame,
        throw: Option<Bound<'py, PyAny>>,
    ) -> Result<Resumed, TraceError> {
        let py = self.tx.py;
        if self.tx.depth >= super::MAX_INLINE_DEPTH {
            return Err(TraceError::unsupported(
                "inlining too deep (a @contextmanager)",
            ));
        }
        self.tx.depth += 1;
        let site = self.site();
        self.tx.callers.push(site);
        let caught = self.caught_here();
        self.tx.caught_by_callers += usize::from(caught);
        let r = {
            let mut child = Frame {
                tx: &mut *self.tx,
                code: saved.code,
                ctx: FrameCtx {
                    root: false,
                    globals: saved.globals.into_bound(py),
                    foreign_globals: saved.foreign_globals,
                    closure: saved.closure,
                    cells: saved.cells,
                },
                stack: saved.stack,
                locals: saved.locals,
                kw_names: None,
                pc: saved.pc,
                yields: Some(Vec::new()),
                stop_at_yield: true,
            };
            let started = match throw {
                None => Ok(()),
                Some(exc) => {
                    // Thrown at the `yield` the frame stopped after.
                    let at = (0..child.pc)
                        .rev()
                        .find(|&i| child.code.ins[i].op == crate::decode::Op::YieldValue)
                        .ok_or_else(|| TraceError::internal("a suspended generator off a yield"))?;
                    let fallback = child.uncaught(&exc);
                    let e = TraceError::Raised {
                        exc: exc.unbind(),
                        fallback: Box::new(fallback),
                    };
                    child.unwind(e, at)
                }
            };
            started.and_then(|()| {
                let ret = child.run()?;
                Ok(match child.yields.take().and_then(|mut y| y.pop()) {
                    Some(v) if matches!(ret, Var::Null) => Resumed::Yielded(
                        v,
                        Box::new(SavedFrame {
                            code: child.code.clone(),
                            globals: child.ctx.globals.clone().unbind(),
                            foreign_globals: child.ctx.foreign_globals,
                            closure: std::mem::take(&mut child.ctx.closure),
                            cells: child.ctx.cells.clone(),
                            stack: std::mem::take(&mut child.stack),
                            locals: std::mem::take(&mut child.locals),
                            pc: child.pc,
                        }),
                    ),
                    _ => Resumed::Returned(ret),
                })
            })
        };
        self.tx.caught_by_callers -= usize::from(caught);
        self.tx.callers.pop();
        self.tx.depth -= 1;
        r
    }
}

/// A manager of `func(*args, **kwargs)`, not entered yet.
pub(super) fn generator_cm(
    func: Rc<FunctionVar>,
    args: &[Var],
    kwargs: &[(String, Var)],
    made_at: usize,
) -> Var {
    Var::GenCm(Rc::new(RefCell::new(GenCmVar {
        func,
        args: args.to_vec(),
        kwargs: kwargs.to_vec(),
        frame: None,
        entered: false,
        made_at,
    })))
}

/// Where the graph must break instead of `at` so that no generator context manager of the
/// root frame is live at the break: before the earliest call that made one.
pub(super) fn break_before_generator_cms(stack: &[Var], locals: &[Option<Var>]) -> Option<usize> {
    stack
        .iter()
        .chain(locals.iter().flatten())
        .filter_map(|v| match v {
            Var::GenCm(g) | Var::GenCmExit(g) => Some(g.borrow().made_at),
            _ => None,
        })
        .min()
}

/// A plain generator function (not a coroutine or an async generator).
fn is_generator_function(py: Python<'_>, func: &FunctionVar) -> Result<bool, TraceError> {
    let flags: u32 = func.code.bind(py).getattr("co_flags")?.extract()?;
    Ok(flags & 0x20 != 0 && flags & (0x80 | 0x100 | 0x200) == 0)
}

pub(super) enum Resumed {
    Yielded(Var, Box<SavedFrame>),
    /// With the generator's return value (`StopIteration.value`, what `yield from` gives).
    Returned(Var),
}

/// The generator function, positional and keyword arguments of an unentered manager.
pub(crate) type UnenteredCm = (Var, Vec<Var>, Vec<(String, Var)>);

/// The generator function and the call's arguments of a manager never entered: it can be made
/// again after the graph (`contextlib._GeneratorContextManager(func, args, kwds)`, what the
/// decorator's wrapper does), since its generator has not started.
pub(crate) fn unentered_parts(v: &Var) -> Option<UnenteredCm> {
    let Var::GenCm(g) = v else {
        return None;
    };
    let g = g.borrow();
    if g.entered || g.frame.is_some() {
        return None;
    }
    Some((
        Var::Function(g.func.clone()),
        g.args.clone(),
        g.kwargs.clone(),
    ))
}

/// Whether a `try` (or `with`) of the generator encloses the `yield` its frame is suspended
/// at, so closing the generator would run code (3.12's own wrapper, which turns a
/// `StopIteration` into `RuntimeError`, runs nothing on close and does not count; nor does a
/// `yield from`'s `CLEANUP_THROW`, which passes the close on to the inner iterator, itself
/// checked when it is a generator: 3.12's `chain` stand-in left suspended broke the frame).
pub(super) fn handler_around_yield(saved: &SavedFrame) -> bool {
    let code = &saved.code;
    if code.exception_table.is_empty() {
        return false;
    }
    let Some(at) = (0..saved.pc)
        .rev()
        .find(|&i| code.ins[i].op == crate::decode::Op::YieldValue)
    else {
        return true;
    };
    let offset = code.ins[at].offset;
    let Ok(entries) = bytecode::exception_table::parse(&code.exception_table) else {
        return true;
    };
    entries
        .iter()
        .filter(|e| (e.start as usize) <= offset && offset < e.end as usize)
        .any(|e| {
            code.ins
                .iter()
                .find(|i| i.offset == e.target as usize)
                .is_none_or(|i| i.name != "CALL_INTRINSIC_1" && i.name != "CLEANUP_THROW")
        })
}
