//! One bytecode instruction over variable trackers.

use std::cell::RefCell;
use std::rc::Rc;

use pyo3::prelude::*;

use crate::decode::{Ins, Op};
use crate::error::TraceError;

use super::vars::Var;
use super::Frame;

impl Frame<'_, '_> {
    /// Executes one instruction. `Ok(Some(v))` is a return.
    pub(super) fn step(&mut self, ins: &Ins) -> Result<Option<Var>, TraceError> {
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
                // Storing NULL unbinds the local: 3.12's inlined comprehensions save a local
                // with `LOAD_FAST_AND_CLEAR` (NULL when it was unbound) and restore it so.
                match self.pop_unused()? {
                    Var::Null => self.unbind_local(arg),
                    v => self.locals[arg] = Some(v),
                }
            }
            Op::DeleteFast => self.unbind_local(arg),
            Op::LoadDeref => {
                let v = self.load_deref(arg)?;
                self.stack.push(v);
            }
            Op::LoadClosure => {
                let v = match self.load_cell(arg)? {
                    Var::Cell(c) => Var::Cell(c),
                    v => {
                        // A cell the prefix has not made yet: make it now. One over a free
                        // variable of the root frame stands for the real closure cell.
                        let rc = Rc::new(RefCell::new(Some(v)));
                        let first_free = self.code.localsplus.len() - self.code.nfree;
                        if self.ctx.root && arg >= first_free {
                            self.tx.free_cells.push((rc.clone(), arg - first_free));
                        }
                        let c = Var::Cell(rc);
                        self.locals[arg] = Some(c.clone());
                        c
                    }
                };
                self.stack.push(v);
            }
            Op::MakeCell => {
                let first_free = self.code.localsplus.len() - self.code.nfree;
                if arg < first_free {
                    let current = match self.locals[arg].take() {
                        Some(v) => Some(v),
                        None if self.ctx.root && arg < self.code.nargs => {
                            Some(self.load_local(arg)?)
                        }
                        None => None,
                    };
                    self.locals[arg] = Some(Var::Cell(Rc::new(RefCell::new(current))));
                }
            }
            Op::StoreDeref => {
                let v = self.pop()?;
                self.store_deref(arg, v)?;
            }
            Op::MakeFunction => {
                let code = self.pop()?;
                let f = self.make_function(arg, code)?;
                self.stack.push(f);
            }
            Op::LoadConst => {
                let c = self.code.consts[arg].bind(py).clone();
                let v = self.tx.wrap_const(c)?;
                self.stack.push(v);
            }
            Op::ReturnConst => {
                let c = self.code.consts[arg].bind(py).clone();
                return Ok(Some(self.tx.wrap_const(c)?));
            }
            Op::LoadGlobal => {
                let name = self.code.names[name_index(ins)?].clone();
                let v = self.load_global(&name)?;
                if ins.pushes_null {
                    self.stack.push(Var::Null);
                }
                self.stack.push(v);
            }
            Op::LoadAttr => {
                let name = self.code.names[name_index(ins)?].clone();
                let obj = self.pop()?;
                if ins.pushes_null {
                    let m = self.load_method(obj, &name)?;
                    self.stack.push(Var::Null);
                    self.stack.push(m);
                } else {
                    let v = self.getattr(obj, &name)?;
                    self.stack.push(v);
                }
            }
            Op::LoadSuperAttr => {
                // Bit 1 of the oparg: the two-argument form.
                let two_args = arg & 2 != 0;
                let name = self.code.names[name_index(ins)?].clone();
                let obj = self.pop()?;
                let cls = self.pop()?;
                let global_super = self.pop()?;
                let builtin_super = py.import("builtins")?.getattr("super")?;
                // The compiler pushes what a zero-argument `super()` would find (the `__class__`
                // cell and the first argument), so the builtin is called with both either way.
                let sup = if global_super.as_py(py).is_some_and(|f| f.is(&builtin_super)) {
                    self.make_super(vec![cls, obj])?
                } else {
                    let args = if two_args { vec![cls, obj] } else { vec![] };
                    self.call(global_super, args, vec![])?
                };
                if ins.pushes_null {
                    let m = self.load_method(sup, &name)?;
                    self.stack.push(Var::Null);
                    self.stack.push(m);
                } else {
                    let v = self.getattr(sup, &name)?;
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
                self.pop_unused()?;
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
                let mut args = self.popn_unused(arg)?;
                let callable = self.pop()?;
                // `len` of a tracked container uses its length alone (guarded with the
                // container), not its items' values.
                if !(kw.is_empty()
                    && args.len() == 1
                    && is_len_of_container(py, &callable, &args[0]))
                {
                    args.iter().for_each(|a| self.tx.realize(a));
                }
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
                let kwargs: Vec<(String, Var)> = kw
                    .into_iter()
                    .zip(args.split_off(args.len() - nkw))
                    .collect();
                let r = self.call(callable, args, kwargs)?;
                self.stack.push(r);
            }
            Op::CallFunctionEx => {
                let kwargs = if arg & 1 == 1 {
                    Some(self.pop()?)
                } else {
                    None
                };
                let args = self.pop()?;
                let callable = self.pop()?;
                if let Ok(Var::Null) = self.peek(0).cloned() {
                    self.pop()?;
                }
                let args = self.take_items_of(&args)?.ok_or_else(|| {
                    TraceError::unsupported("f(*args) with args that are not a sequence")
                })?;
                let mut kw = Vec::new();
                if let Some(Var::Dict(d)) = kwargs {
                    for (k, v) in d.borrow().iter() {
                        kw.push((k.bind(py).extract::<String>()?, v.clone()));
                    }
                } else if kwargs.is_some() {
                    return Err(TraceError::unsupported(
                        "f(**kwargs) with kwargs that are not a dict",
                    ));
                }
                let r = self.call(callable, args, kw)?;
                self.stack.push(r);
            }
            Op::BinaryOp => {
                let rhs = self.pop()?;
                let lhs = self.pop()?;
                // `s |= t` and the other in-place operators (13 and up) change a set's copy.
                if let (Var::Set(s), true) = (&lhs, arg >= 13) {
                    self.tx.note_set_mutation(s);
                }
                let r = self.binary_op(arg, lhs, rhs)?;
                self.stack.push(r);
            }
            Op::CompareOp => {
                let rhs = self.pop()?;
                let lhs = self.pop()?;
                let cmp = ins
                    .comparison
                    .ok_or_else(|| TraceError::internal("COMPARE_OP without a comparison"))?;
                let r = self.compare_op(cmp as usize, lhs, rhs)?;
                self.stack.push(r);
            }
            Op::IsOp => {
                // An undecided comparison of sizes is a bool here (`(a == b) is True`).
                let rhs = self.pop()?;
                let rhs = self.decide_bools(rhs)?;
                let lhs = self.pop()?;
                let lhs = self.decide_bools(lhs)?;
                let r = self.is_op(lhs, rhs, arg == 1)?;
                self.stack.push(r);
            }
            Op::ContainsOp => {
                let rhs = self.pop()?;
                let rhs = self.decide_bools(rhs)?;
                let lhs = self.pop()?;
                let lhs = self.decide_bools(lhs)?;
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
            Op::StoreSubscr => {
                let key = self.pop()?;
                let obj = self.pop()?;
                let value = self.pop()?;
                self.store_subscript(obj, key, value)?;
            }
            Op::BinarySlice => {
                let end = self.pop()?;
                let start = self.pop()?;
                let obj = self.pop()?;
                let r = self.subscript(obj, Var::Slice(Box::new([start, end, Var::none(py)])))?;
                self.stack.push(r);
            }
            Op::StoreSlice => {
                let end = self.pop()?;
                let start = self.pop()?;
                let obj = self.pop()?;
                let value = self.pop()?;
                self.store_subscript(
                    obj,
                    Var::Slice(Box::new([start, end, Var::none(py)])),
                    value,
                )?;
            }
            Op::BuildSlice => {
                let parts = self.popn(arg)?;
                let mut it = parts.into_iter();
                let a = it.next().unwrap();
                let b = it.next().unwrap();
                let c = it.next().unwrap_or(Var::none(py));
                self.stack.push(Var::Slice(Box::new([a, b, c])));
            }
            // Building a tuple or list only moves its items: their checks wait for a use of the
            // container, which realizes its items (`realize_in`).
            Op::BuildTuple => {
                let items = self.popn_unused(arg)?;
                self.stack.push(super::vars::fresh_tuple(items));
            }
            Op::BuildList => {
                let items = self.popn_unused(arg)?;
                self.stack.push(Var::list(items));
            }
            Op::BuildMap => {
                let kv = self.popn(arg * 2)?;
                let mut items = Vec::new();
                for pair in kv.chunks(2) {
                    let k = self.dict_key(&pair[0])?;
                    put_key(py, &mut items, k, pair[1].clone());
                }
                self.stack.push(Var::Dict(Rc::new(RefCell::new(items))));
            }
            Op::BuildConstKeyMap => {
                let keys = self.pop()?;
                let values = self.popn(arg)?;
                let keys = keys
                    .items(py)
                    .ok_or_else(|| TraceError::internal("BUILD_CONST_KEY_MAP keys"))?;
                let mut items = Vec::new();
                for (k, v) in keys.iter().zip(values) {
                    let k = self.dict_key(k)?;
                    put_key(py, &mut items, k, v);
                }
                self.stack.push(Var::Dict(Rc::new(RefCell::new(items))));
            }
            Op::ListAppend => {
                // The list may come from outside the trace (a resume function's stack
                // argument: a 3.12 inlined comprehension broken in its body), so the append is
                // a mutation like `list.append`'s.
                let v = self.pop()?;
                let Var::List(l) = self.peek(arg - 1)?.clone() else {
                    return Err(TraceError::internal("LIST_APPEND on a non-list"));
                };
                self.tx.note_list_mutation(&l);
                l.borrow_mut().push(v);
            }
            Op::ListExtend => {
                let v = self.pop()?;
                let items = self.take_items_of(&v)?.ok_or_else(|| {
                    TraceError::unsupported("extending a list with a non-sequence")
                })?;
                let Var::List(l) = self.peek(arg - 1)?.clone() else {
                    return Err(TraceError::internal("LIST_EXTEND on a non-list"));
                };
                self.tx.note_list_mutation(&l);
                l.borrow_mut().extend(items);
            }
            Op::ListToTuple => {
                let v = self.pop()?;
                let items = v
                    .items(py)
                    .ok_or_else(|| TraceError::internal("LIST_TO_TUPLE"))?;
                self.stack.push(super::vars::fresh_tuple(items));
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
                            if let Some(slot) = d
                                .iter_mut()
                                .find(|(k2, _)| k2.bind(py).eq(k.bind(py)).unwrap_or(false))
                            {
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
                    return Err(TraceError::unsupported(
                        "starred unpacking of too few values",
                    ));
                }
                let mut out = items[..before].to_vec();
                out.push(Var::list(items[before..items.len() - after].to_vec()));
                out.extend(items[items.len() - after..].iter().cloned());
                self.stack.extend(out.into_iter().rev());
            }
            Op::GetIter => {
                // An iterator is its own iterator: `for` over it advances the same cursor.
                let v = self.pop()?;
                let it = self.get_iter(v)?;
                self.stack.push(it);
            }
            Op::ForIter => {
                let it = self.peek(0)?.clone();
                let next = self.iter_next(&it)?;
                match next {
                    Some(v) => self.stack.push(v),
                    None => {
                        self.pop()?;
                        self.jump(ins.loop_exit)?;
                    }
                }
            }
            Op::EndFor => {
                self.popn(2)?;
            }
            Op::Jump => self.jump(ins.target)?,
            Op::PopJumpIfTrue | Op::PopJumpIfFalse => {
                let v = self.pop()?;
                let t = self.truth(&v)?;
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
                let top = self.peek(0)?.clone();
                self.tx.realize(&top);
                let t = self.truth(&top)?;
                if t == (ins.op == Op::JumpIfTrueOrPop) {
                    self.jump(ins.target)?;
                } else {
                    self.pop()?;
                }
            }
            Op::BeforeWith => {
                let ctx = self.pop()?;
                if let Some(exit) = self.enter_mode(&ctx)? {
                    let entered = match ctx {
                        Var::Autocast { .. } => ctx.clone(),
                        _ => Var::none(py),
                    };
                    self.stack.push(exit);
                    self.stack.push(entered);
                    return Ok(None);
                }
                if self.enter_object(&ctx)? {
                    return Ok(None);
                }
                if let Var::GenCm(g) = &ctx {
                    self.stack.push(Var::GenCmExit(g.clone()));
                    let v = self.generator_cm_enter(g)?;
                    self.stack.push(v);
                    return Ok(None);
                }
                return Err(TraceError::unsupported(format!(
                    "a `with` block over a {}",
                    ctx.type_name(py)
                )));
            }
            Op::FormatValue => {
                let spec = if arg & 0x04 != 0 {
                    Some(self.pop()?)
                } else {
                    None
                };
                let v = self.pop()?;
                let v = self.decide_bools(v)?;
                // The text comes from the object's state: guarded (`realize_text`).
                self.tx.realize_text(&v);
                let Some(v) = v.as_py(py) else {
                    // A tensor, or a symbolic int whose text would pin its value.
                    let what = match &v {
                        Var::SymInt(..) => "symbolic int".to_string(),
                        other => other.type_name(py),
                    };
                    return Err(TraceError::unsupported(format!(
                        "formatting a {what} into a string"
                    )));
                };
                let v = match arg & 0x03 {
                    1 => v.str()?.into_any(),
                    2 => v.repr()?.into_any(),
                    3 => py.import("builtins")?.getattr("ascii")?.call1((v,))?,
                    _ => v,
                };
                let spec = match spec {
                    Some(s) => s
                        .as_py(py)
                        .ok_or_else(|| TraceError::internal("format spec"))?,
                    None => "".into_pyobject(py)?.into_any(),
                };
                let r = py.import("builtins")?.getattr("format")?.call1((v, spec))?;
                self.stack.push(Var::Py(r.unbind(), None));
            }
            Op::BuildString => {
                let parts = self.popn(arg)?;
                let mut s = String::new();
                for p in parts {
                    let p = p
                        .as_py(py)
                        .ok_or_else(|| TraceError::internal("BUILD_STRING part"))?;
                    s.push_str(&p.extract::<String>()?);
                }
                self.stack.push(Var::py_const(py, s));
            }
            Op::ImportName => {
                let fromlist = self.pop()?;
                let level = self.pop()?;
                let name = self.code.names[arg].clone();
                let level: i64 = level.as_py(py).and_then(|l| l.extract().ok()).unwrap_or(1);
                if level != 0 {
                    return Err(TraceError::unsupported("a relative import"));
                }
                // Only modules already imported: importing for real would run code while tracing.
                let modules = py.import("sys")?.getattr("modules")?;
                let Ok(m) = modules.get_item(&name) else {
                    return Err(TraceError::unsupported(format!(
                        "importing {name}, which is not imported yet"
                    )));
                };
                let has_fromlist = fromlist.as_py(py).map(|f| !f.is_none()).unwrap_or(false);
                let top = if has_fromlist {
                    m
                } else {
                    modules.get_item(name.split('.').next().unwrap_or(&name))?
                };
                self.stack.push(Var::Py(top.unbind(), None));
            }
            Op::ImportFrom => {
                let name = self.code.names[arg].clone();
                let m = self.peek(0)?.clone();
                let v = self.getattr(m, &name)?;
                self.stack.push(v);
            }
            Op::ReturnValue => {
                let v = self.pop_unused()?;
                return Ok(Some(v));
            }
            Op::BuildSet => {
                let items = self.popn(arg)?;
                let set = self.tx.new_set(&items)?;
                self.stack.push(set);
            }
            Op::SetAdd | Op::SetUpdate => {
                let v = self.pop()?;
                let Var::Set(set) = self.peek(arg - 1)?.clone() else {
                    return Err(TraceError::internal("SET_ADD on a non-set"));
                };
                let items = if ins.op == Op::SetAdd {
                    vec![v]
                } else {
                    self.take_items_of(&v)?.ok_or_else(|| {
                        TraceError::unsupported("updating a set from a non-sequence")
                    })?
                };
                self.tx.set_add(&set, &items)?;
            }
            Op::MapAdd => {
                let value = self.pop()?;
                let key = self.pop()?;
                let d = self.peek(arg - 1)?.clone();
                self.store_subscript(d, key, value)?;
            }
            Op::ReturnGenerator => {
                if self.yields.is_none() {
                    return Err(TraceError::unsupported("a generator frame"));
                }
                // Popped by the POP_TOP that follows, as the value `send` starts it with.
                self.stack.push(Var::none(py));
            }
            Op::YieldValue => {
                let v = self.pop()?;
                let Some(ys) = self.yields.as_mut() else {
                    return Err(TraceError::unsupported(
                        "yield outside a generator expression",
                    ));
                };
                ys.push(v);
                // The value sent back in: iteration sends None.
                self.stack.push(Var::none(py));
                if self.stop_at_yield {
                    return Ok(Some(Var::Null));
                }
            }
            // `yield from`: the sub-iterator (a generator is its own) pulled by `SEND`.
            Op::Unsupported if ins.name == "GET_YIELD_FROM_ITER" => {
                let v = self.pop()?;
                let it = self.get_iter(v)?;
                self.stack.push(it);
            }
            Op::Unsupported if ins.name == "SEND" && self.yields.is_some() => {
                self.yield_from_send(ins.target)?;
            }
            Op::Unsupported if ins.name == "END_SEND" => {
                let v = self.pop()?;
                self.pop()?;
                self.stack.push(v);
            }
            Op::Unsupported if ins.name == "STORE_ATTR" => {
                let obj = self.pop()?;
                let v = self.pop()?;
                let name = self.code.names[arg].clone();
                self.store_attr(obj, &name, v)?;
            }
            Op::Unsupported if ins.name == "DELETE_SUBSCR" => {
                let key = self.pop()?;
                let container = self.pop()?;
                self.delete_subscript(container, key)?;
            }
            Op::Unsupported if ins.name == "STORE_GLOBAL" => {
                let v = self.pop()?;
                let name = self.code.names[arg].clone();
                self.store_global(&name, v)?;
            }
            Op::Unsupported if ins.name == "LOAD_BUILD_CLASS" => {
                // A `class` statement: the call of `__build_class__` breaks the graph (it runs
                // the class body), where the frame can resume.
                let build = py.import("builtins")?.getattr("__build_class__")?;
                self.stack.push(Var::Py(build.unbind(), None));
            }
            Op::Unsupported if self.step_statement(ins)? => {}
            Op::Unsupported => {
                return Err(TraceError::unsupported(format!(
                    "the instruction {}",
                    ins.name
                )));
            }
        }
        Ok(None)
    }
}

/// The `co_names` index of an instruction that names something.
fn name_index(ins: &Ins) -> Result<usize, TraceError> {
    ins.name_index
        .map(|i| i as usize)
        .ok_or_else(|| TraceError::internal(format!("{} names nothing", ins.name)))
}

impl Frame<'_, '_> {
    /// Unbinds local `i` (`del x`, or a 3.12 comprehension restoring a variable that was
    /// unbound): a root argument then no longer reads from the frame (`locals()` leaves it out).
    fn unbind_local(&mut self, i: usize) {
        self.locals[i] = None;
        if self.ctx.root && i < self.code.nargs && !self.tx.deleted_args.contains(&i) {
            self.tx.deleted_args.push(i);
        }
    }
}

/// `len(c)` with `c` a tracked list, tuple or dict: the call reads the container's length only.
fn is_len_of_container(py: Python<'_>, callable: &Var, arg: &Var) -> bool {
    let Var::Py(f, _) = callable else {
        return false;
    };
    matches!(arg, Var::List(_) | Var::Tuple(_) | Var::Dict(_))
        && py
            .import("builtins")
            .and_then(|b| b.getattr("len"))
            .is_ok_and(|len| f.bind(py).is(&len))
}

impl Frame<'_, '_> {
    /// Enters a traced mode context (grad mode, autocast, inference mode): switches the traced
    /// state and returns the tracker of its `__exit__`; `None` for any other value.
    pub(super) fn enter_mode(&mut self, ctx: &Var) -> Result<Option<Var>, TraceError> {
        let py = self.tx.py;
        Ok(Some(match ctx {
            Var::Autocast {
                device,
                enabled,
                dtype,
            } => {
                let (was, was_dtype) = self.tx.output.autocast(*device);
                self.tx
                    .output
                    .set_autocast(py, *device, *enabled, dtype.bind(py), 1)?;
                Var::AutocastExit {
                    device: *device,
                    enabled: was,
                    dtype: was_dtype,
                }
            }
            Var::InferenceMode { mode } => {
                let prev_grad = self.tx.output.grad_enabled();
                let prev_inference = self.tx.output.inference_mode();
                if prev_inference.is_none() {
                    // Leaving the level restores the frame's entry state, which a graph break
                    // bakes into the `__exit__` it hands over: guarded.
                    let query = py.import("torch")?.getattr("is_inference_mode_enabled")?;
                    let value = query.call0()?;
                    let origin = self.tx.guards.origin.clone();
                    self.tx.guards.global.value(
                        &query,
                        &value,
                        "torch.is_inference_mode_enabled()",
                        origin,
                    );
                }
                self.tx.output.enter_inference_mode(py, *mode)?;
                Var::InferenceModeExit {
                    prev_grad,
                    prev_inference,
                }
            }
            Var::GradMode { enabled, prev } => {
                let restore = match prev {
                    Some(p) => *p,
                    None => {
                        let p = self.tx.output.grad_enabled();
                        self.tx.output.set_grad_mode(py, *enabled)?;
                        p
                    }
                };
                Var::GradModeExit { restore }
            }
            _ => return Ok(None),
        }))
    }
}

/// A display's `key: value` as Python stores it: a key equal to an earlier one (`{T: a, C: b}`
/// with `T == C`, or a literal repeated) replaces that entry's value and keeps its key and
/// place.
fn put_key(py: Python<'_>, items: &mut Vec<(Py<PyAny>, Var)>, key: Py<PyAny>, value: Var) {
    let k = key.bind(py);
    match items
        .iter_mut()
        .find(|(e, _)| e.bind(py).is(k) || e.bind(py).eq(k).unwrap_or(false))
    {
        Some(entry) => entry.1 = value,
        None => items.push((key, value)),
    }
}
