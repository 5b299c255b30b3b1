//! The symbolic interpreter: runs a frame's bytecode over variable trackers, building the graph
//! and the guards. It never executes the user's function body; it reads the frame's inputs and
//! runs torch ops on `meta` tensors to learn result metadata.

mod calls;
mod ops;
pub mod vars;

use std::cell::RefCell;
use std::rc::Rc;

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};

use crate::decode::{Ins, Op};
use crate::error::TraceError;
use crate::guards::GuardTree;
use crate::output::OutputGraph;
use crate::source::{Scope, Source};

pub use vars::Var;

/// Static facts about the code object being traced.
pub struct CodeInfo {
    pub name: String,
    pub filename: String,
    pub firstlineno: u32,
    pub consts: Vec<Py<PyAny>>,
    pub names: Vec<String>,
    /// Names of all localsplus slots (locals, then cells that are not arguments, then free vars).
    pub localsplus: Vec<String>,
    /// Number of argument slots (positional, keyword-only, *args, **kwargs).
    pub nargs: usize,
    /// Number of free variables (the last slots of localsplus).
    pub nfree: usize,
    pub ins: Vec<Ins>,
}

impl CodeInfo {
    pub fn from_code(py: Python<'_>, code: &Bound<'_, PyAny>) -> Result<CodeInfo, TraceError> {
        let get = |n: &str| code.getattr(n);
        let varnames: Vec<String> = get("co_varnames")?.extract()?;
        let cellvars: Vec<String> = get("co_cellvars")?.extract()?;
        let freevars: Vec<String> = get("co_freevars")?.extract()?;
        let mut localsplus = varnames.clone();
        for c in &cellvars {
            if !varnames.contains(c) {
                localsplus.push(c.clone());
            }
        }
        localsplus.extend(freevars.iter().cloned());
        let flags: u32 = get("co_flags")?.extract()?;
        let argcount: usize = get("co_argcount")?.extract()?;
        let kwonly: usize = get("co_kwonlyargcount")?.extract()?;
        let nargs = argcount + kwonly + usize::from(flags & 0x04 != 0) + usize::from(flags & 0x08 != 0);
        let consts: Vec<Py<PyAny>> = get("co_consts")?
            .cast::<PyTuple>()
            .map_err(PyErr::from)?
            .iter()
            .map(|c| c.unbind())
            .collect();
        Ok(CodeInfo {
            name: get("co_name")?.extract()?,
            filename: get("co_filename")?.extract()?,
            firstlineno: get("co_firstlineno")?.extract()?,
            consts,
            names: get("co_names")?.extract()?,
            localsplus,
            nargs,
            nfree: freevars.len(),
            ins: crate::decode::decode(py, code)?,
        })
    }
}

/// Shared state of one compile: the graph, the guards and the frame being traced.
pub struct Tracer<'py> {
    pub py: Python<'py>,
    pub output: OutputGraph,
    pub guards: GuardTree,
    pub scope: Scope,
    pub globals: Bound<'py, PyDict>,
    pub builtins: Bound<'py, PyDict>,
    pub(crate) external_lists: Vec<Rc<RefCell<Vec<Var>>>>,
}

/// How the traced frame ends.
pub struct Traced {
    pub output: OutputGraph,
    pub guards: GuardTree,
    pub ret: Var,
}

/// Interprets one frame.
pub struct Frame<'a, 'py> {
    tx: &'a mut Tracer<'py>,
    code: &'a CodeInfo,
    stack: Vec<Var>,
    locals: Vec<Option<Var>>,
    kw_names: Option<Vec<String>>,
    pc: usize,
}

/// Instructions executed before the tracer gives up (loops are unrolled, so this bounds them).
const MAX_STEPS: usize = 200_000;

pub fn trace<'py>(
    py: Python<'py>,
    code: &CodeInfo,
    scope: Scope,
    globals: Bound<'py, PyDict>,
    builtins: Bound<'py, PyDict>,
) -> Result<Traced, TraceError> {
    let mut tx = Tracer {
        py,
        output: OutputGraph::new(),
        guards: GuardTree::new(globals.clone().into_any().unbind()),
        scope,
        globals,
        builtins,
        external_lists: Vec::new(),
    };
    let ret = {
        let mut frame = Frame {
            tx: &mut tx,
            code,
            stack: Vec::new(),
            locals: vec![None; code.localsplus.len()],
            kw_names: None,
            pc: 0,
        };
        frame.bind_arguments()?;
        frame.run()?
    };
    Ok(Traced {
        output: tx.output,
        guards: tx.guards,
        ret,
    })
}

impl<'a, 'py> Frame<'a, 'py> {
    /// Reads the argument slots from the frame (wrapping them lazily would be cheaper, but every
    /// argument of a compiled function is almost always used).
    fn bind_arguments(&mut self) -> Result<(), TraceError> {
        for i in 0..self.code.nargs {
            let ptr = self.tx.scope.root(&crate::source::Step::Local {
                index: i,
                name: String::new(),
            });
            if ptr.is_null() {
                continue;
            }
            // Arguments are wrapped on first use; store a marker that defers to the frame.
            self.locals[i] = None;
        }
        Ok(())
    }

    fn location(&self) -> String {
        let line = self.code.ins.get(self.pc).and_then(|i| i.line).unwrap_or(self.code.firstlineno);
        format!("{}:{}", self.code.filename, line)
    }

    fn run(&mut self) -> Result<Var, TraceError> {
        let mut steps = 0usize;
        loop {
            steps += 1;
            if steps > MAX_STEPS {
                return Err(TraceError::unsupported(format!(
                    "a loop that runs more than {MAX_STEPS} instructions"
                ))
                .at(&self.location()));
            }
            let Some(ins) = self.code.ins.get(self.pc).cloned() else {
                return Err(TraceError::internal("ran off the end of the bytecode"));
            };
            let loc = self.location();
            match self.step(&ins) {
                Ok(Some(ret)) => return Ok(ret),
                Ok(None) => {}
                Err(e) => return Err(e.at(&loc)),
            }
        }
    }

    fn pop(&mut self) -> Result<Var, TraceError> {
        self.stack.pop().ok_or_else(|| TraceError::internal("stack underflow"))
    }

    fn popn(&mut self, n: usize) -> Result<Vec<Var>, TraceError> {
        if self.stack.len() < n {
            return Err(TraceError::internal("stack underflow"));
        }
        Ok(self.stack.split_off(self.stack.len() - n))
    }

    fn peek(&self, depth: usize) -> Result<&Var, TraceError> {
        self.stack
            .len()
            .checked_sub(depth + 1)
            .and_then(|i| self.stack.get(i))
            .ok_or_else(|| TraceError::internal("stack underflow"))
    }

    fn jump(&mut self, target: Option<usize>) -> Result<(), TraceError> {
        self.pc = target.ok_or_else(|| TraceError::internal("jump without a target"))?;
        Ok(())
    }

    /// Reads local slot `i`, wrapping the frame's argument on first use.
    fn load_local(&mut self, i: usize) -> Result<Var, TraceError> {
        if let Some(v) = &self.locals[i] {
            return Ok(v.clone());
        }
        if i < self.code.nargs {
            let name = self.code.localsplus[i].clone();
            let ptr = self.tx.scope.root(&crate::source::Step::Local { index: i, name: name.clone() });
            if !ptr.is_null() {
                // SAFETY: a borrowed pointer into the live frame; we take our own reference.
                let value = unsafe { Bound::from_borrowed_ptr(self.tx.py, ptr) };
                let v = self.tx.wrap(value, Some(Source::local(i, &name)))?;
                self.locals[i] = Some(v.clone());
                return Ok(v);
            }
        }
        Err(TraceError::unsupported(format!(
            "reading local '{}' before it is assigned",
            self.code.localsplus[i]
        )))
    }

    fn load_free(&mut self, i: usize) -> Result<Var, TraceError> {
        let nlocalsplus = self.code.localsplus.len();
        let first_free = nlocalsplus - self.code.nfree;
        if i < first_free {
            // A cell variable of this frame: we track its value directly.
            return self.load_local(i);
        }
        if let Some(v) = &self.locals[i] {
            return Ok(v.clone());
        }
        let j = i - first_free;
        let name = self.code.localsplus[i].clone();
        let ptr = self.tx.scope.root(&crate::source::Step::Cell { index: j, name: name.clone() });
        if ptr.is_null() {
            return Err(TraceError::unsupported(format!("free variable '{name}' is empty")));
        }
        // SAFETY: a borrowed pointer to a live cell's contents; we take our own reference.
        let value = unsafe { Bound::from_borrowed_ptr(self.tx.py, ptr) };
        let v = self.tx.wrap(value, Some(Source::cell(j, &name)))?;
        self.locals[i] = Some(v.clone());
        Ok(v)
    }

    /// Executes one instruction. `Ok(Some(v))` is a return.
    fn step(&mut self, ins: &Ins) -> Result<Option<Var>, TraceError> {
        let py = self.tx.py;
        let arg = ins.arg as usize;
        self.pc += 1;
        match ins.op {
            Op::Nop => {}
            Op::LoadFast => {
                let v = self.load_local(arg)?;
                self.stack.push(v);
            }
            Op::LoadFastAndClear => {
                let v = self.locals[arg].take().unwrap_or(Var::Null);
                self.stack.push(v);
            }
            Op::StoreFast => {
                let v = self.pop()?;
                self.locals[arg] = Some(v);
            }
            Op::DeleteFast => self.locals[arg] = None,
            Op::LoadDeref => {
                let v = self.load_free(arg)?;
                self.stack.push(v);
            }
            Op::StoreDeref => {
                let first_free = self.code.localsplus.len() - self.code.nfree;
                if arg >= first_free {
                    return Err(TraceError::unsupported("assigning to a nonlocal variable"));
                }
                let v = self.pop()?;
                self.locals[arg] = Some(v);
            }
            Op::LoadConst => {
                let c = self.code.consts[arg].bind(py).clone();
                let v = self.tx.wrap(c, None)?;
                self.stack.push(v);
            }
            Op::ReturnConst => {
                let c = self.code.consts[arg].bind(py).clone();
                return Ok(Some(self.tx.wrap(c, None)?));
            }
            Op::LoadGlobal => {
                let (idx, push_null) = (arg >> 1, arg & 1 == 1);
                let name = self.code.names[idx].clone();
                let v = self.load_global(&name)?;
                if push_null {
                    self.stack.push(Var::Null);
                }
                self.stack.push(v);
            }
            Op::LoadAttr => {
                let (idx, method) = if ins.attr_method_bit { (arg >> 1, arg & 1 == 1) } else { (arg, false) };
                let name = self.code.names[idx].clone();
                let obj = self.pop()?;
                if method {
                    let m = self.load_method(obj, &name)?;
                    self.stack.push(Var::Null);
                    self.stack.push(m);
                } else {
                    let v = self.getattr(obj, &name)?;
                    self.stack.push(v);
                }
            }
            Op::LoadMethod => {
                let name = self.code.names[arg].clone();
                let obj = self.pop()?;
                let m = self.load_method(obj, &name)?;
                self.stack.push(Var::Null);
                self.stack.push(m);
            }
            Op::PushNull => self.stack.push(Var::Null),
            Op::PopTop => {
                self.pop()?;
            }
            Op::Copy => {
                let v = self.peek(arg - 1)?.clone();
                self.stack.push(v);
            }
            Op::Swap => {
                let n = self.stack.len();
                if arg > n || arg < 1 {
                    return Err(TraceError::internal("bad SWAP"));
                }
                self.stack.swap(n - 1, n - arg);
            }
            Op::KwNames => {
                let names: Vec<String> = self.code.consts[arg].bind(py).extract()?;
                self.kw_names = Some(names);
            }
            Op::Precall => {}
            Op::Call => {
                let kw = self.kw_names.take().unwrap_or_default();
                let mut args = self.popn(arg)?;
                let callable = self.pop()?;
                let first = self.pop()?;
                let callable = match first {
                    Var::Null => callable,
                    // 3.11 LOAD_METHOD fast path: [method, self, args...]
                    method => {
                        args.insert(0, callable);
                        method
                    }
                };
                let nkw = kw.len();
                let kwargs: Vec<(String, Var)> = kw.into_iter().zip(args.split_off(args.len() - nkw)).collect();
                let r = self.call(callable, args, kwargs)?;
                self.stack.push(r);
            }
            Op::CallFunctionEx => {
                let kwargs = if arg & 1 == 1 { Some(self.pop()?) } else { None };
                let args = self.pop()?;
                let callable = self.pop()?;
                if let Ok(Var::Null) = self.peek(0).cloned() {
                    self.pop()?;
                }
                let args = args
                    .items(py)
                    .ok_or_else(|| TraceError::unsupported("f(*args) with args that are not a sequence"))?;
                let mut kw = Vec::new();
                if let Some(Var::Dict(d)) = kwargs {
                    for (k, v) in d.borrow().iter() {
                        kw.push((k.bind(py).extract::<String>()?, v.clone()));
                    }
                } else if kwargs.is_some() {
                    return Err(TraceError::unsupported("f(**kwargs) with kwargs that are not a dict"));
                }
                let r = self.call(callable, args, kw)?;
                self.stack.push(r);
            }
            Op::BinaryOp => {
                let rhs = self.pop()?;
                let lhs = self.pop()?;
                let r = self.binary_op(arg, lhs, rhs)?;
                self.stack.push(r);
            }
            Op::CompareOp => {
                let rhs = self.pop()?;
                let lhs = self.pop()?;
                let cmp = if ins.compare_shift { arg >> 4 } else { arg };
                let r = self.compare_op(cmp, lhs, rhs)?;
                self.stack.push(r);
            }
            Op::IsOp => {
                let rhs = self.pop()?;
                let lhs = self.pop()?;
                let r = self.is_op(lhs, rhs, arg == 1)?;
                self.stack.push(r);
            }
            Op::ContainsOp => {
                let rhs = self.pop()?;
                let lhs = self.pop()?;
                let r = self.contains_op(lhs, rhs, arg == 1)?;
                self.stack.push(r);
            }
            Op::UnaryNegative | Op::UnaryPositive | Op::UnaryInvert | Op::UnaryNot => {
                let v = self.pop()?;
                let r = self.unary_op(ins.op, v)?;
                self.stack.push(r);
            }
            Op::BinarySubscr => {
                let idx = self.pop()?;
                let obj = self.pop()?;
                let r = self.subscript(obj, idx)?;
                self.stack.push(r);
            }
            Op::BinarySlice => {
                let end = self.pop()?;
                let start = self.pop()?;
                let obj = self.pop()?;
                let r = self.subscript(obj, Var::Slice(Box::new([start, end, Var::none(py)])))?;
                self.stack.push(r);
            }
            Op::BuildSlice => {
                let parts = self.popn(arg)?;
                let mut it = parts.into_iter();
                let a = it.next().unwrap();
                let b = it.next().unwrap();
                let c = it.next().unwrap_or(Var::none(py));
                self.stack.push(Var::Slice(Box::new([a, b, c])));
            }
            Op::BuildTuple => {
                let items = self.popn(arg)?;
                self.stack.push(Var::Tuple(items));
            }
            Op::BuildList => {
                let items = self.popn(arg)?;
                self.stack.push(Var::list(items));
            }
            Op::BuildMap => {
                let kv = self.popn(arg * 2)?;
                let mut items = Vec::new();
                for pair in kv.chunks(2) {
                    items.push((self.dict_key(&pair[0])?, pair[1].clone()));
                }
                self.stack.push(Var::Dict(Rc::new(RefCell::new(items))));
            }
            Op::BuildConstKeyMap => {
                let keys = self.pop()?;
                let values = self.popn(arg)?;
                let keys = keys.items(py).ok_or_else(|| TraceError::internal("BUILD_CONST_KEY_MAP keys"))?;
                let mut items = Vec::new();
                for (k, v) in keys.iter().zip(values) {
                    items.push((self.dict_key(k)?, v));
                }
                self.stack.push(Var::Dict(Rc::new(RefCell::new(items))));
            }
            Op::ListAppend => {
                let v = self.pop()?;
                match self.peek(arg - 1)? {
                    Var::List(l) => l.borrow_mut().push(v),
                    _ => return Err(TraceError::internal("LIST_APPEND on a non-list")),
                }
            }
            Op::ListExtend => {
                let v = self.pop()?;
                let items = v.items(py).ok_or_else(|| TraceError::unsupported("extending a list with a non-sequence"))?;
                match self.peek(arg - 1)? {
                    Var::List(l) => l.borrow_mut().extend(items),
                    _ => return Err(TraceError::internal("LIST_EXTEND on a non-list")),
                }
            }
            Op::ListToTuple => {
                let v = self.pop()?;
                let items = v.items(py).ok_or_else(|| TraceError::internal("LIST_TO_TUPLE"))?;
                self.stack.push(Var::Tuple(items));
            }
            Op::DictUpdate | Op::DictMerge => {
                let v = self.pop()?;
                let Var::Dict(src) = v else {
                    return Err(TraceError::unsupported("merging a non-dict into a dict"));
                };
                match self.peek(arg - 1)? {
                    Var::Dict(d) => {
                        let src = src.borrow().clone();
                        let mut d = d.borrow_mut();
                        for (k, v) in src {
                            if let Some(slot) = d.iter_mut().find(|(k2, _)| k2.bind(py).eq(k.bind(py)).unwrap_or(false)) {
                                slot.1 = v;
                            } else {
                                d.push((k, v));
                            }
                        }
                    }
                    _ => return Err(TraceError::internal("DICT_UPDATE on a non-dict")),
                }
            }
            Op::UnpackSequence => {
                let v = self.pop()?;
                let items = self.unpack(v)?;
                if items.len() != arg {
                    return Err(TraceError::unsupported(format!(
                        "unpacking {} values into {arg} names",
                        items.len()
                    )));
                }
                self.stack.extend(items.into_iter().rev());
            }
            Op::UnpackEx => {
                let v = self.pop()?;
                let items = self.unpack(v)?;
                let (before, after) = (arg & 0xff, arg >> 8);
                if items.len() < before + after {
                    return Err(TraceError::unsupported("starred unpacking of too few values"));
                }
                let mut out = items[..before].to_vec();
                out.push(Var::list(items[before..items.len() - after].to_vec()));
                out.extend(items[items.len() - after..].iter().cloned());
                self.stack.extend(out.into_iter().rev());
            }
            Op::GetIter => {
                let v = self.pop()?;
                let items = self.iterate(v)?;
                self.stack.push(Var::Iter(Rc::new(RefCell::new((items, 0)))));
            }
            Op::ForIter => {
                let Var::Iter(it) = self.peek(0)?.clone() else {
                    return Err(TraceError::internal("FOR_ITER on a non-iterator"));
                };
                let next = {
                    let mut it = it.borrow_mut();
                    let (items, pos) = &mut *it;
                    let n = items.get(*pos).cloned();
                    *pos += 1;
                    n
                };
                match next {
                    Some(v) => self.stack.push(v),
                    None => {
                        self.pop()?;
                        self.jump(ins.target)?;
                        if ins.for_iter_skips_end_for {
                            self.pc += 1;
                        }
                    }
                }
            }
            Op::EndFor => {
                self.popn(2)?;
            }
            Op::Jump => self.jump(ins.target)?,
            Op::PopJumpIfTrue | Op::PopJumpIfFalse => {
                let v = self.pop()?;
                let t = v.truthy(py)?;
                if t == (ins.op == Op::PopJumpIfTrue) {
                    self.jump(ins.target)?;
                }
            }
            Op::PopJumpIfNone | Op::PopJumpIfNotNone => {
                let v = self.pop()?;
                let is_none = matches!(&v, Var::Py(o, _) if o.is_none(py));
                if is_none == (ins.op == Op::PopJumpIfNone) {
                    self.jump(ins.target)?;
                }
            }
            Op::JumpIfTrueOrPop | Op::JumpIfFalseOrPop => {
                let t = self.peek(0)?.truthy(py)?;
                if t == (ins.op == Op::JumpIfTrueOrPop) {
                    self.jump(ins.target)?;
                } else {
                    self.pop()?;
                }
            }
            Op::ReturnValue => {
                let v = self.pop()?;
                return Ok(Some(v));
            }
            Op::Unsupported => {
                return Err(TraceError::unsupported(format!("the instruction {}", ins.name)));
            }
        }
        Ok(None)
    }

    fn load_global(&mut self, name: &str) -> Result<Var, TraceError> {
        let py = self.tx.py;
        let value = match self.tx.globals.get_item(name)? {
            Some(v) => v,
            None => match self.tx.builtins.get_item(name)? {
                Some(v) => v,
                None => {
                    return Err(TraceError::unsupported(format!(
                        "name '{name}' is not defined (the frame raises NameError)"
                    )))
                }
            },
        };
        let source = Source::global(py, name);
        self.tx.wrap(value, Some(source))
    }

    fn dict_key(&self, k: &Var) -> Result<Py<PyAny>, TraceError> {
        match k {
            Var::Py(o, _) => Ok(o.clone_ref(self.tx.py)),
            other => Err(TraceError::unsupported(format!(
                "a dict key of type {}",
                other.type_name(self.tx.py)
            ))),
        }
    }

    fn unpack(&mut self, v: Var) -> Result<Vec<Var>, TraceError> {
        if let Var::Tensor(t) = &v {
            let n = t.meta.sizes.first().and_then(|d| d.known()).ok_or_else(|| {
                TraceError::unsupported("unpacking a 0-d tensor")
            })?;
            let mut out = Vec::new();
            for i in 0..n {
                let idx = Var::py_const(self.tx.py, i);
                out.push(self.subscript(v.clone(), idx)?);
            }
            return Ok(out);
        }
        v.items(self.tx.py).ok_or_else(|| {
            TraceError::unsupported(format!("unpacking a {}", v.type_name(self.tx.py)))
        })
    }

    /// Iterating a `Sequential` or `ModuleList` yields its children (a `ModuleDict`, its keys),
    /// each read through `_modules` so guards stay plain dict reads.
    fn module_children(&mut self, m: Bound<'py, PyAny>, src: Source) -> Result<Vec<Var>, TraceError> {
        let py = self.tx.py;
        let tyname = m.get_type().name()?.to_string();
        if !matches!(tyname.as_str(), "Sequential" | "ModuleList" | "ModuleDict") {
            return Err(TraceError::unsupported(format!("iterating a {tyname}")));
        }
        let modules = m.getattr("_modules")?;
        let keys: Vec<String> = modules.call_method0("keys")?.try_iter()?.map(|k| k.and_then(|k| k.extract())).collect::<PyResult<_>>()?;
        // The set of children is part of what the trace relies on.
        self.tx.guards.add(py, &src.attr(py, "_modules"), crate::guards::Check::Len(keys.len()));
        let mut out = Vec::new();
        for k in keys {
            if tyname == "ModuleDict" {
                out.push(Var::py_const(py, k));
                continue;
            }
            let child = modules.get_item(&k)?;
            let s = src.attr(py, "_modules").item(pyo3::types::PyString::new(py, &k).into_any());
            out.push(self.tx.wrap(child, Some(s))?);
        }
        Ok(out)
    }

    fn iterate(&mut self, v: Var) -> Result<Vec<Var>, TraceError> {
        match &v {
            Var::Iter(it) => {
                let it = it.borrow();
                Ok(it.0[it.1..].to_vec())
            }
            Var::Py(o, Some(src)) if ops::is_nn_module(self.tx.py, o.bind(self.tx.py))? => {
                self.module_children(o.bind(self.tx.py).clone(), src.clone())
            }
            _ => self.unpack(v),
        }
    }
}
