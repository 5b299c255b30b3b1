//! Exceptions raised and caught inside the traced code (`raise`, `try`/`except`/`else`/
//! `finally`, `assert`, user context managers whose `__exit__` sees the exception).
//!
//! An exception the traced code raises is a real Python exception object made at trace time
//! (`ValueError("bad")` with known arguments; a user exception class whose `__init__` is
//! inlined on the new object; the error a folded Python operation raised). It travels up as
//! [`TraceError::Raised`]: each frame's run loop looks the raising instruction up in its code's
//! exception table and, where an entry covers it, unwinds as CPython does (the stack cut to the
//! entry's depth, the offset pushed when it asks for `lasti`, then the exception) and continues
//! at the handler; its `PUSH_EXC_INFO`/`CHECK_EXC_MATCH`/`POP_EXCEPT`/`RERAISE` run over the
//! tracer's "exception being handled" (`Tracer::handling`). A frame with no entry passes the
//! error to the frame that inlined it, whose `CALL` is the raising instruction there.
//!
//! Pattern matching's instructions are in `patterns.rs`.
//!
//! Not caught by any traced frame, the exception must reach the user from the program itself:
//! the root frame runs eagerly ([`escaped`]), as torch.compile gives up on a frame whose
//! exception reaches its top (no graph for the code before the `raise`, and the code is not
//! compiled again). Inside the trace the error keeps its `fallback` (a graph break before the
//! root instruction that made the exception object, so the object is made by the program), for
//! the places that give an exception up before it reaches the top (`gencm.rs`: a
//! `@contextmanager` that chains another exception).
//! Exception objects made by the trace are private to it until they escape; attribute writes
//! of an inlined `__init__` go straight to them.

use pyo3::prelude::*;
use pyo3::types::{PyTuple, PyType};

use crate::decode::Ins;
use crate::error::TraceError;

use super::vars::Var;
use super::Frame;

/// An exception the traced code raised reached the top of the root frame with nothing to catch
/// it: the frame runs eagerly, `fallback`'s reason kept. torch.compile (2.11) does the same: an
/// exception observed at the top-level frame ends the trace with no graph (none for the code
/// before the `raise` either) and the frame runs natively from then on, so a graph break before
/// the `raise` would compile a graph torch.compile does not make.
pub(super) fn escaped(fallback: TraceError) -> TraceError {
    match fallback {
        TraceError::Unsupported {
            reason,
            location,
            frames,
            ..
        } => TraceError::Unsupported {
            reason: format!(
                "{reason} (it leaves the frame, which runs eagerly as torch.compile runs it)"
            ),
            location,
            instruction: None,
            frames,
        },
        other => other,
    }
}

/// A root instruction index no graph break can stop before.
const NO_BREAK: usize = usize::MAX;

impl<'py> Frame<'_, 'py> {
    /// Instructions of exception handling and pattern matching (mapped to `Op::Unsupported` by
    /// `decode.rs`); `Ok(false)` when `ins` is none of them.
    pub(super) fn step_statement(&mut self, ins: &Ins) -> Result<bool, TraceError> {
        let py = self.tx.py;
        let arg = ins.arg as usize;
        match ins.name.as_str() {
            "RAISE_VARARGS" => return Err(self.raise_varargs(arg)),
            // 3.12's handler around a generator's body (INTRINSIC_STOPITERATION_ERROR): an
            // exception leaving the generator is unchanged, unless it is a StopIteration (then
            // a RuntimeError, left to run natively).
            "CALL_INTRINSIC_1" if arg == 3 => {
                let exc = self.peek(0)?.clone();
                let stop = py.get_type::<pyo3::exceptions::PyStopIteration>();
                let stop_async = py.get_type::<pyo3::exceptions::PyStopAsyncIteration>();
                match exc.as_py(py) {
                    Some(e) if !e.is_instance(&stop)? && !e.is_instance(&stop_async)? => {}
                    _ => {
                        return Err(TraceError::unsupported(
                            "a StopIteration leaving a generator (it becomes a RuntimeError)",
                        ))
                    }
                }
            }
            "PUSH_EXC_INFO" => {
                let exc = self.pop_unused()?;
                let prev = self.tx.handling.take().unwrap_or_else(|| Var::none(py));
                self.stack.push(prev);
                self.stack.push(exc.clone());
                self.tx.handling = Some(exc);
                if self.ctx.root {
                    self.tx.root_handlers += 1;
                }
            }
            "POP_EXCEPT" => {
                let prev = self.pop_unused()?;
                if self.ctx.root {
                    self.tx.root_handlers = self.tx.root_handlers.saturating_sub(1);
                }
                self.tx.handling = match &prev {
                    Var::Py(o, _) if o.is_none(py) => None,
                    _ => Some(prev),
                };
            }
            "CHECK_EXC_MATCH" => {
                let cls = self.pop()?;
                let exc = self.peek(0)?.clone();
                let cls = cls.as_py(py).ok_or_else(|| {
                    TraceError::unsupported("an `except` clause over a tracked value")
                })?;
                let exc = exc
                    .as_py(py)
                    .ok_or_else(|| TraceError::internal("CHECK_EXC_MATCH on a tracked value"))?;
                let m = exc.is_instance(&cls)?;
                self.stack.push(Var::py_const(py, m));
            }
            "RERAISE" => {
                let exc = self.pop_unused()?;
                if arg != 0 {
                    self.pop_unused()?;
                }
                self.tx.realize_identity(&exc);
                let obj = exc
                    .as_py(py)
                    .ok_or_else(|| TraceError::internal("RERAISE of a tracked value"))?;
                let fallback = self.uncaught(&obj);
                return Err(TraceError::Raised {
                    exc: obj.unbind(),
                    fallback: Box::new(fallback),
                });
            }
            "LOAD_ASSERTION_ERROR" => {
                let cls = py.import("builtins")?.getattr("AssertionError")?;
                self.stack.push(Var::Py(cls.unbind(), None));
            }
            "WITH_EXCEPT_START" => {
                // [.., __exit__, lasti, previous exception, exception]
                let exc = self.peek(0)?.clone();
                let exit = self.peek(3)?.clone();
                let ty = exc
                    .as_py(py)
                    .ok_or_else(|| TraceError::internal("WITH_EXCEPT_START"))?
                    .get_type()
                    .into_any()
                    .unbind();
                let r = self.call(exit, vec![Var::Py(ty, None), exc, Var::none(py)], vec![])?;
                self.stack.push(r);
            }
            "DELETE_ATTR" => {
                let obj = self.pop()?;
                let name = self.code.names[arg].clone();
                self.delete_attr(obj, &name)?;
            }
            "MATCH_MAPPING" | "MATCH_SEQUENCE" => {
                let v = self.peek(0)?.clone();
                let r = self.match_kind(&v, ins.name == "MATCH_MAPPING")?;
                self.stack.push(Var::py_const(py, r));
            }
            "GET_LEN" => {
                let v = self.peek(0)?.clone();
                let len = py.import("builtins")?.getattr("len")?;
                let n = self.call(Var::Py(len.unbind(), None), vec![v], vec![])?;
                self.stack.push(n);
            }
            "MATCH_KEYS" => {
                let keys = self.peek(0)?.clone();
                let subject = self.peek(1)?.clone();
                let r = self.match_keys(subject, keys)?;
                self.stack.push(r);
            }
            "COPY_DICT_WITHOUT_KEYS" => {
                let keys = self.pop()?;
                let subject = self.peek(0)?.clone();
                let r = self.dict_without_keys(subject, keys)?;
                self.stack.push(r);
            }
            "MATCH_CLASS" => {
                let names = self.pop()?;
                let cls = self.pop()?;
                let subject = self.pop()?;
                let r = self.match_class(subject, cls, names, arg)?;
                self.stack.push(r);
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// RAISE_VARARGS: `raise` (re-raise what is being handled), `raise exc`, `raise exc from
    /// cause`. The exception object gets the `__context__`/`__cause__` Python would give it.
    fn raise_varargs(&mut self, argc: usize) -> TraceError {
        match self.raise_value(argc) {
            Ok(e) | Err(e) => e,
        }
    }

    fn raise_value(&mut self, argc: usize) -> Result<TraceError, TraceError> {
        let py = self.tx.py;
        if argc == 0 {
            let Some(exc) = self.tx.handling.clone() else {
                return Err(TraceError::unsupported(
                    "a bare `raise` with no exception being handled in the traced code",
                ));
            };
            // The very object travels on (caught again, it is read as a constant).
            self.tx.realize_identity(&exc);
            let obj = exc
                .as_py(py)
                .ok_or_else(|| TraceError::internal("re-raising a tracked value"))?;
            let fallback = self.uncaught(&obj);
            return Ok(TraceError::Raised {
                exc: obj.unbind(),
                fallback: Box::new(fallback),
            });
        }
        let cause = if argc == 2 { Some(self.pop()?) } else { None };
        let exc = self.pop()?;
        let obj = self.exception_instance(exc)?.into_bound(py);
        if self.is_made_exception(&obj) {
            if let Some(cause) = cause {
                let c = match cause.as_py(py) {
                    Some(c) if c.is_none() => c,
                    Some(c) => self
                        .exception_instance(Var::Py(c.unbind(), None))?
                        .into_bound(py),
                    None => {
                        return Err(TraceError::unsupported("`raise ... from` a tracked value"))
                    }
                };
                obj.setattr("__cause__", c)?;
            }
            if let Some(ctx) = self.tx.handling.as_ref().and_then(|h| h.as_py(py)) {
                if !ctx.is(&obj) {
                    obj.setattr("__context__", ctx)?;
                }
            }
        } else if cause.is_some() {
            return Err(TraceError::unsupported(
                "`raise ... from` on an exception the traced code did not make",
            ));
        }
        let fallback = self.uncaught(&obj);
        Ok(TraceError::Raised {
            exc: obj.unbind(),
            fallback: Box::new(fallback),
        })
    }

    /// `raise X` accepts a class (instantiated with no arguments) or an instance.
    fn exception_instance(&mut self, exc: Var) -> Result<Py<PyAny>, TraceError> {
        let py = self.tx.py;
        let base = py.get_type::<pyo3::exceptions::PyBaseException>();
        // The object raised is the program's (a handler catching it reads it as a constant).
        self.tx.realize_identity(&exc);
        let Some(obj) = exc.as_py(py) else {
            return Err(TraceError::unsupported(format!(
                "raising a {}",
                exc.type_name(py)
            )));
        };
        if let Ok(cls) = obj.cast::<PyType>() {
            if cls.is_subclass(&base)? {
                let made = self.call(exc.clone(), vec![], vec![])?;
                return made.as_py(py).map(Bound::unbind).ok_or_else(|| {
                    TraceError::internal("an exception class made a tracked value")
                });
            }
        }
        if !obj.is_instance(&base)? {
            return Err(TraceError::unsupported(
                "raising an object that is not an exception (the frame raises TypeError)",
            ));
        }
        Ok(obj.unbind())
    }

    /// The error an exception becomes if no traced frame catches it.
    pub(super) fn uncaught(&self, exc: &Bound<'_, PyAny>) -> TraceError {
        let py = self.tx.py;
        let what = exc
            .repr()
            .map(|r| r.to_string())
            .unwrap_or_else(|_| "an exception".into());
        let e = TraceError::unsupported(format!(
            "{what} is raised and not caught in the traced code"
        ));
        match self
            .tx
            .made_exceptions
            .iter()
            .find(|(o, _)| o.bind(py).is(exc))
        {
            // Made by the trace: the program makes it again after a break before that point.
            Some((_, at)) => e.in_root_instruction(*at),
            None => e,
        }
    }

    /// The root instruction a graph break would stop before to let the program make an
    /// exception object itself: none inside a root handler (`NO_BREAK`).
    fn made_at(&self) -> usize {
        if self.tx.root_handlers > 0 {
            NO_BREAK
        } else {
            self.tx.root_index
        }
    }

    /// The root frame stops at instruction `index` with `e`: a graph break there, except inside
    /// one of the root frame's exception handlers (the frame then runs eagerly).
    pub(super) fn root_break(&self, e: TraceError, index: usize) -> TraceError {
        match e {
            TraceError::Unsupported {
                reason,
                location,
                instruction,
                frames,
            } if self.tx.root_handlers > 0 || instruction == Some(NO_BREAK) => {
                // The exception being handled was made by the trace before its handler ran:
                // the graph breaks where it is made, and the program raises it for real.
                if let Some(at) = self.handled_origin() {
                    return TraceError::Unsupported {
                        reason: format!(
                            "{reason} (in the handler of an exception the traced code raised: \
                             the graph breaks where it is raised)"
                        ),
                        location,
                        instruction: Some(at),
                        frames,
                    };
                }
                TraceError::Unsupported {
                    reason: format!(
                        "{reason} (inside an exception handler, where the frame cannot resume)"
                    ),
                    location,
                    instruction: None,
                    frames,
                }
            }
            e => e.in_root_instruction(index),
        }
    }

    /// A value the root frame returns may not hold an exception object the trace made: the
    /// compiled entry would hand that one object to every call. The frame breaks before the
    /// object is made instead, so the program makes it.
    pub(super) fn check_escape(&self, v: &Var) -> Result<(), TraceError> {
        let py = self.tx.py;
        let mut todo = vec![v.clone()];
        let mut seen = 0usize;
        while let Some(v) = todo.pop() {
            seen += 1;
            if seen > 10_000 {
                break;
            }
            match &v {
                Var::Py(o, None) => {
                    if let Some((_, at)) = self
                        .tx
                        .made_exceptions
                        .iter()
                        .find(|(e, _)| e.bind(py).is(o.bind(py)))
                    {
                        let e = TraceError::unsupported(
                            "an exception object made by the traced code is returned",
                        );
                        return Err(e.in_root_instruction(*at));
                    }
                }
                Var::Tuple(items) | Var::NamedTuple { items, .. } => {
                    todo.extend(items.iter().cloned())
                }
                Var::List(items) => todo.extend(items.borrow().iter().cloned()),
                Var::Dict(items) => todo.extend(items.borrow().iter().map(|(_, v)| v.clone())),
                Var::Object(o) => todo.extend(o.attrs.borrow().iter().map(|(_, v)| v.clone())),
                Var::Generator(_) => {
                    let at = super::generators::made_at(&v).unwrap_or(self.tx.root_index);
                    let e = TraceError::unsupported("a generator made by the traced code escapes");
                    return Err(e.in_root_instruction(at));
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// Where the exception the root frame is handling was made, when the trace made it outside
    /// a handler.
    fn handled_origin(&self) -> Option<usize> {
        let py = self.tx.py;
        let exc = self.tx.handling.as_ref()?.as_py(py)?;
        self.tx
            .made_exceptions
            .iter()
            .find(|(o, _)| o.bind(py).is(&exc))
            .map(|(_, at)| *at)
            .filter(|&at| at != NO_BREAK)
    }

    pub(super) fn is_made_exception(&self, obj: &Bound<'_, PyAny>) -> bool {
        self.tx
            .made_exceptions
            .iter()
            .any(|(o, _)| o.bind(self.tx.py).is(obj))
    }

    /// A Python operation folded at trace time raised `err`: the program raises it there.
    /// Caught by a traced handler it is handled there; otherwise `fallback` (the frame runs
    /// eagerly and raises it for real).
    pub(super) fn python_raised(&mut self, err: PyErr, fallback: TraceError) -> TraceError {
        let py = self.tx.py;
        if !err.is_instance_of::<pyo3::exceptions::PyException>(py) {
            return fallback;
        }
        let exc = err.value(py).clone().into_any();
        self.tx
            .made_exceptions
            .push((exc.clone().unbind(), self.made_at()));
        TraceError::Raised {
            exc: exc.unbind(),
            fallback: Box::new(fallback),
        }
    }

    /// Raises a new exception of builtin class `cls` with `args` from traced code; not caught, it
    /// is `fallback`.
    pub(super) fn raise_new<
        A: IntoPyObject<'py, Target = PyTuple, Output = Bound<'py, PyTuple>>,
    >(
        &mut self,
        cls: &str,
        args: A,
        fallback: TraceError,
    ) -> TraceError {
        let py = self.tx.py;
        let made = (|| -> PyResult<Bound<'py, PyAny>> {
            let args = args.into_pyobject(py).map_err(Into::into)?;
            py.import("builtins")?.getattr(cls)?.call1(args)
        })();
        match made {
            Ok(exc) => {
                self.tx
                    .made_exceptions
                    .push((exc.clone().unbind(), self.made_at()));
                TraceError::Raised {
                    exc: exc.unbind(),
                    fallback: Box::new(fallback),
                }
            }
            Err(e) => e.into(),
        }
    }

    /// An error from the instruction at `index`: an exception the traced code raised goes to
    /// this frame's handler when one covers the instruction (the stack unwound as CPython does).
    pub(super) fn unwind(&mut self, e: TraceError, index: usize) -> Result<(), TraceError> {
        let TraceError::Raised { exc, fallback } = e else {
            return Err(e);
        };
        let py = self.tx.py;
        let Some(entry) = self.handler_entry(index)? else {
            return Err(TraceError::Raised { exc, fallback });
        };
        let Some(target) = self
            .code
            .ins
            .iter()
            .position(|i| i.offset == entry.target as usize)
        else {
            return Err(TraceError::internal(
                "an exception handler off the bytecode",
            ));
        };
        self.stack.truncate(entry.depth as usize);
        if entry.lasti {
            let offset = self.code.ins[index].offset / 2;
            self.stack.push(Var::py_const(py, offset));
        }
        self.stack.push(Var::Py(exc, None));
        self.kw_names = None;
        self.pc = target;
        Ok(())
    }

    fn handler_entry(
        &self,
        index: usize,
    ) -> Result<Option<bytecode::exception_table::ExceptionTableEntry>, TraceError> {
        if self.code.exception_table.is_empty() {
            return Ok(None);
        }
        let offset = self.code.ins[index].offset;
        let entries = bytecode::exception_table::parse(&self.code.exception_table)
            .map_err(|e| TraceError::internal(format!("unreadable exception table: {e}")))?;
        Ok(entries
            .into_iter()
            .find(|e| (e.start as usize) <= offset && offset < e.end as usize))
    }

    /// `ExcClass(*args)` for an exception class: made at trace time when its construction runs
    /// no user code (all of `__new__`/`__init__` builtin), or with a user `__init__` inlined on
    /// a new instance; `None` if `cls` is not an exception class.
    pub(super) fn construct_exception(
        &mut self,
        cls: &Bound<'_, PyAny>,
        args: &[Var],
        kwargs: &[(String, Var)],
    ) -> Result<Option<Var>, TraceError> {
        let py = self.tx.py;
        let Ok(ty) = cls.cast::<PyType>() else {
            return Ok(None);
        };
        let base = py.get_type::<pyo3::exceptions::PyBaseException>();
        if !ty.is_subclass(&base)? {
            return Ok(None);
        }
        let types = py.import("types")?;
        let function = types.getattr("FunctionType")?;
        let init = ty.getattr("__init__")?;
        let user_new = ty.getattr("__new__")?.is_instance(&function)?;
        let user_init = init.is_instance(&function)?;
        if user_new || (user_init && !self.inlinable(&init)?) {
            return Ok(None);
        }
        let vals: Option<Vec<_>> = args.iter().map(|a| a.as_py(py)).collect();
        let Some(vals) = vals else {
            return Err(TraceError::unsupported(
                "an exception holding a tensor or a tracked object",
            ));
        };
        let pargs = PyTuple::new(py, vals)?;
        let obj = if user_init {
            // `BaseException.__new__` keeps the arguments as `args`; `__init__` runs inlined.
            ty.call_method1("__new__", {
                let mut all = vec![ty.clone().into_any()];
                all.extend(pargs.iter());
                PyTuple::new(py, all)?
            })?
        } else {
            if !kwargs.is_empty() {
                return Ok(None);
            }
            match ty.call1(pargs) {
                Ok(o) => o,
                Err(e) => {
                    let fallback = TraceError::UserError {
                        call: ty.name()?.to_string(),
                        message: e.to_string(),
                        error: e.clone_ref(py),
                    };
                    return Err(self.python_raised(e, fallback));
                }
            }
        };
        self.tx
            .made_exceptions
            .push((obj.clone().unbind(), self.made_at()));
        let v = Var::Py(obj.clone().unbind(), None);
        if user_init {
            let init = init.unbind().into_bound(py);
            let f = self.function_of(&init, None)?;
            let mut all = vec![v.clone()];
            all.extend(args.iter().cloned());
            self.inline_call(&f, all, kwargs.to_vec())?;
        }
        Ok(Some(v))
    }

    /// `obj.name = v` on an exception object the trace made: written to it directly (it is
    /// private to the trace).
    pub(super) fn made_exception_setattr(
        &mut self,
        obj: &Var,
        name: &str,
        v: &Var,
    ) -> Result<bool, TraceError> {
        let py = self.tx.py;
        let Var::Py(o, None) = obj else {
            return Ok(false);
        };
        if !self.is_made_exception(o.bind(py)) {
            return Ok(false);
        }
        let Some(value) = v.as_py(py) else {
            return Err(TraceError::unsupported(format!(
                "storing a {} on an exception",
                v.type_name(py)
            )));
        };
        o.bind(py).setattr(name, value)?;
        Ok(true)
    }

    /// `super().__init__(*args)` inside an inlined `__init__` of an exception class: the builtin
    /// initializer runs on the trace's own object.
    pub(super) fn made_exception_super_call(
        &mut self,
        cls: &Py<PyAny>,
        obj: &Var,
        name: &str,
        args: &[Var],
    ) -> Result<Option<Var>, TraceError> {
        let py = self.tx.py;
        let Var::Py(o, None) = obj else {
            return Ok(None);
        };
        if !self.is_made_exception(o.bind(py)) {
            return Ok(None);
        }
        let sup = py
            .import("builtins")?
            .getattr("super")?
            .call1((cls.bind(py), o.bind(py)))?;
        let m = sup.getattr(name)?;
        if m.is_instance(&py.import("types")?.getattr("MethodType")?)? {
            // A Python method of a user base class: inlined.
            let func = m.getattr("__func__")?;
            let f = self.function_of(&func, None)?;
            let mut all = vec![obj.clone()];
            all.extend(args.iter().cloned());
            return Ok(Some(self.inline_call(&f, all, vec![])?));
        }
        let vals: Option<Vec<_>> = args.iter().map(|a| a.as_py(py)).collect();
        let Some(vals) = vals else {
            return Err(TraceError::unsupported(
                "an exception holding a tensor or a tracked object",
            ));
        };
        let r = m.call1(PyTuple::new(py, vals)?)?;
        Ok(Some(self.tx.wrap(r, None)?))
    }

    /// `del obj.name`.
    fn delete_attr(&mut self, obj: Var, name: &str) -> Result<(), TraceError> {
        let py = self.tx.py;
        if self.user_container_delattr(&obj, name) {
            return Ok(());
        }
        if let Var::Object(o) = &obj {
            return self.object_delattr(&o.clone(), name, false);
        }
        if let Var::Py(o, None) = &obj {
            if self.is_made_exception(o.bind(py)) {
                o.bind(py).delattr(name)?;
                return Ok(());
            }
        }
        Err(TraceError::unsupported(format!(
            "deleting attribute '{name}' of a {}",
            obj.type_name(py)
        )))
    }

    /// BEFORE_WITH over a tracked user object: its `__enter__` is inlined, and its bound
    /// `__exit__` waits on the stack for the block's end (or WITH_EXCEPT_START).
    pub(super) fn enter_object(&mut self, ctx: &Var) -> Result<bool, TraceError> {
        let Var::Object(o) = ctx else {
            return Ok(false);
        };
        let exit = self.object_attr(o, "__exit__")?;
        let enter = self.object_attr(o, "__enter__")?;
        self.stack.push(exit);
        let r = self.call(enter, vec![], vec![])?;
        self.stack.push(r);
        Ok(true)
    }
}

impl super::Tracer<'_> {
    /// Guards what the text of `v` (`str`, `repr`, an f-string) depends on before the trace
    /// reads it. An exception object from the frame whose class keeps `BaseException`'s text
    /// methods reads as its type (guarded when wrapped) and its `args` (guarded by value here,
    /// when they are constants): a handler that logs `str(e)` then serves every exception with
    /// the same message instead of recompiling per exception object. Anything else: its
    /// identity.
    pub(crate) fn realize_text(&mut self, v: &Var) {
        if let Var::Py(o, Some(source)) = v {
            let py = self.py;
            let o = o.bind(py);
            if exception_text_is_args(o).unwrap_or(false) {
                if let Ok(args) = o.getattr(pyo3::intern!(py, "args")) {
                    if args
                        .cast::<PyTuple>()
                        .is_ok_and(|t| t.iter().all(|a| super::pyobj::is_immutable_const(&a)))
                    {
                        self.guards.add(
                            py,
                            &source.attr(py, "args"),
                            crate::guards::Check::Equals(args.unbind()),
                        );
                        return;
                    }
                }
            }
        }
        self.realize_identity(v);
    }
}

/// Whether `o` is an exception whose `str`/`repr`/`format` are `BaseException`'s (and
/// `object.__format__`): its text is a function of its type and `args` alone.
fn exception_text_is_args(o: &Bound<'_, PyAny>) -> PyResult<bool> {
    let py = o.py();
    let base = py.get_type::<pyo3::exceptions::PyBaseException>();
    if !o.is_instance(&base)? {
        return Ok(false);
    }
    let ty = o.get_type();
    let object = py.get_type::<pyo3::types::PyAny>();
    Ok(ty.getattr("__str__")?.is(base.getattr("__str__")?)
        && ty.getattr("__repr__")?.is(base.getattr("__repr__")?)
        && ty.getattr("__format__")?.is(object.getattr("__format__")?))
}
