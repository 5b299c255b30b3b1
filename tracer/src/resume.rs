//! The transformed code: what a frame runs instead of its original bytecode on a cache hit.
//!
//! For a whole-frame graph it is a trampoline, `return __compiled_graph(args..., cells...)`,
//! taking the frame's argument slots and closure cells as plain positional parameters (so a
//! function with `*args`/`**kwargs` or free variables needs no special calling convention).

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyTuple};

use bytecode::{Assembler, FunctionParts, ResumeAt};

use crate::code::CodeInfo;
use crate::decode::Op;
use crate::error::TraceError;
use crate::interp::comprehension::Disposition;
use crate::interp::Var;
use crate::output::OutputGraph;

mod region;

const CO_OPTIMIZED: u32 = 0x1;
const CO_NEWLOCALS: u32 = 0x2;

pub fn trampoline<'py>(
    py: Python<'py>,
    info: &CodeInfo,
    code: &Bound<'py, PyAny>,
    graph: &Bound<'py, PyAny>,
) -> Result<Bound<'py, PyAny>, TraceError> {
    let version = crate::version::current(py)?;
    let nparams = info.nargs + info.nfree;
    let mut asm = Assembler::new(version);
    // No user line: the graph's error adds the user's frame itself, and the hook drops this
    // frame's entry from the traceback (`traceback::drop_transformed_entry`).
    asm.set_position(bytecode::Position::NONE);
    asm.resume(ResumeAt::Start).map_err(asm_err)?;
    asm.push_null().map_err(asm_err)?;
    asm.load_const(0).map_err(asm_err)?;
    for i in 0..nparams {
        asm.load_fast(i as u32).map_err(asm_err)?;
    }
    asm.call(nparams as u32).map_err(asm_err)?;
    asm.return_value().map_err(asm_err)?;
    let out = asm
        .assemble(info.firstlineno as i32)
        .map_err(|e| TraceError::internal(format!("assembling the transformed code: {e}")))?;

    let mut names: Vec<String> = info.localsplus[..info.nargs].to_vec();
    let nlocalsplus = info.localsplus.len();
    for name in &info.localsplus[nlocalsplus - info.nfree..] {
        names.push(format!("___cell_{name}"));
    }
    let kw = code_fields(py, &out, &names, nparams, CO_OPTIMIZED | CO_NEWLOCALS)?;
    kw.set_item("co_consts", PyTuple::new(py, [graph])?)?;
    kw.set_item("co_names", PyTuple::empty(py))?;
    kw.set_item("co_freevars", PyTuple::empty(py))?;
    kw.set_item("co_cellvars", PyTuple::empty(py))?;
    Ok(code.call_method("replace", (), Some(&kw))?)
}

/// The `code.replace(...)` fields every generated code object sets: bytecode, tables, stack
/// size, and a plain positional signature over `varnames[..argcount]`.
fn code_fields<'py>(
    py: Python<'py>,
    out: &bytecode::AssembledCode,
    varnames: &[String],
    argcount: usize,
    flags: u32,
) -> PyResult<Bound<'py, PyDict>> {
    let kw = PyDict::new(py);
    kw.set_item("co_code", PyBytes::new(py, &out.code))?;
    kw.set_item("co_varnames", PyTuple::new(py, varnames)?)?;
    kw.set_item("co_argcount", argcount)?;
    kw.set_item("co_posonlyargcount", 0)?;
    kw.set_item("co_kwonlyargcount", 0)?;
    kw.set_item("co_nlocals", varnames.len())?;
    kw.set_item("co_flags", flags)?;
    kw.set_item("co_stacksize", out.stack_size)?;
    kw.set_item("co_linetable", PyBytes::new(py, &out.line_table))?;
    kw.set_item("co_exceptiontable", PyBytes::new(py, &out.exception_table))?;
    Ok(kw)
}

/// What the transformed code of a graph break must rebuild before running the breaking
/// instruction natively.
pub struct BreakPlan {
    /// Root instruction the graph breaks at.
    pub index: usize,
    /// Each stack slot at the break, bottom first. The compiled graph returns the values of
    /// the non-NULL ones (an iterator as the list of its remaining items), then the assigned
    /// locals' values, then the cells.
    pub stack: Vec<StackSlot>,
    /// Locals assigned at the break, by `co_varnames` index. The compiled graph returns the
    /// non-NULL stack values followed by these locals' values.
    pub assigned: Vec<usize>,
    /// The graph returns, after the locals, one cell object per cell of the frame (in
    /// [`cell_slots`] order): new cells holding the values at the break, shared with the
    /// closures made before it that are rebuilt too.
    pub ncells: usize,
    /// The breaking instruction is a zero-argument `super()` call, which reads `__class__` and
    /// the first argument from the frame running it: the transformed code passes them instead.
    pub zero_arg_super: bool,
    /// Grad mode at the break when it differs from the mode the frame was entered with (inside a
    /// `with torch.no_grad()` block): the transformed code switches to it after the graph.
    pub grad_mode: Option<bool>,
    /// The inference-mode levels open at the break, outermost first (`mode`, grad mode when
    /// entered): the graph leaves them and the transformed code enters them again.
    pub inference_levels: Vec<(bool, bool)>,
}

impl BreakPlan {
    /// The plan for a trace that stopped before root instruction `index`, and the values the
    /// compiled graph returns for it: the non-NULL stack slots (an iterator as its remaining
    /// items), the assigned locals, then one cell per cell slot. Inside a grad-mode block the
    /// graph is made to end in the frame's entry mode (see [`BreakPlan::grad_mode`]).
    pub fn from_end(
        py: Python<'_>,
        info: &CodeInfo,
        index: usize,
        stack: &[Var],
        locals: &[Option<Var>],
        output: &mut OutputGraph,
    ) -> Result<(BreakPlan, Vec<Var>), TraceError> {
        let mut values: Vec<Var> = Vec::new();
        let mut slots = Vec::new();
        for v in stack {
            match v {
                Var::Null => slots.push(StackSlot::Null),
                Var::Iter(it) => {
                    // The loop goes on over a new iterator: a local naming the same one
                    // (`it = iter(xs); for x in it:`) would no longer see the loop advance it.
                    let aliased = locals
                        .iter()
                        .flatten()
                        .any(|l| matches!(l, Var::Iter(other) if std::rc::Rc::ptr_eq(other, it)));
                    if aliased {
                        return Err(TraceError::unsupported(
                            "an iterator that a for loop advances is also held by a local",
                        ));
                    }
                    let rest: Vec<Var> = {
                        let it = it.borrow();
                        it.0[it.1.min(it.0.len())..].to_vec()
                    };
                    values.push(Var::list(rest));
                    slots.push(StackSlot::Iter);
                }
                v => {
                    values.push(v.clone());
                    slots.push(StackSlot::Value);
                }
            }
        }
        let mut assigned = Vec::new();
        for (j, l) in locals.iter().enumerate().take(info.nlocals) {
            match l {
                // An argument kept in a cell: handed over with the cells below, and its value
                // in the plain slot too, where a zero-argument `super()` looks for it.
                Some(Var::Cell(c)) => {
                    if let Some(v) = c.borrow().clone() {
                        values.push(v);
                        assigned.push(j);
                    }
                }
                Some(v) => {
                    values.push(v.clone());
                    assigned.push(j);
                }
                None => {}
            }
        }
        let cell_slots = cell_slots(info);
        for &s in &cell_slots {
            values.push(match locals.get(s).cloned().flatten() {
                Some(Var::Cell(c)) => Var::Cell(c),
                other => Var::Cell(std::rc::Rc::new(std::cell::RefCell::new(other))),
            });
        }
        let first_free = info.localsplus.len() - info.nfree;
        let ins = &info.ins[index];
        let zero_arg_super = ins.op == Op::Call
            && ins.arg == 0
            && stack.last().is_some_and(|v| {
                matches!(v, Var::Py(o, _) if o.bind(py).is(py.get_type::<pyo3::types::PySuper>()))
            })
            && info.nargs > 0
            && info.localsplus[first_free..].iter().any(|n| n == "__class__");
        // Inside a grad-mode block the graph switches back to the frame's entry mode at its
        // end; the transformed code re-enters the block's mode natively.
        // Inference-mode levels are left the same way (innermost first) and entered again
        // natively; entering one sets grad mode, so the break's grad mode is then always set.
        let grad_at_break = output.grad_enabled();
        let inference_levels: Vec<(bool, bool)> = output
            .inference_levels
            .iter()
            .map(|l| (l.mode, l.prev_grad))
            .collect();
        while let Some(l) = output.inference_levels.last().copied() {
            output.exit_inference_mode(py, l.prev_grad, l.prev_inference)?;
        }
        let entry_mode = crate::guards::grad_enabled(py);
        let grad_mode =
            (grad_at_break != entry_mode || !inference_levels.is_empty()).then_some(grad_at_break);
        if output.grad_enabled() != entry_mode {
            output.set_grad_mode(py, entry_mode)?;
        }
        let plan = BreakPlan {
            index,
            stack: slots,
            assigned,
            ncells: cell_slots.len(),
            zero_arg_super,
            grad_mode,
            inference_levels,
        };
        Ok((plan, values))
    }
}

/// The frame's cell slots, as `localsplus` indices: cells that are not arguments (in slot
/// order), then arguments kept in cells (in `co_cellvars` order).
pub fn cell_slots(info: &CodeInfo) -> Vec<usize> {
    let first_free = info.localsplus.len() - info.nfree;
    let mut out: Vec<usize> = (info.nlocals..first_free).collect();
    for c in &info.cellvars {
        if let Some(a) = info.varnames.iter().position(|v| v == c) {
            out.push(a);
        }
    }
    out
}

/// The closure a resume function is made with, as `localsplus` indices of the original frame:
/// its cells that are not arguments, its free variables, then its argument cells. The resume
/// code's deref instructions are renumbered to these slots, placed after its plain locals.
fn closure_slots(info: &CodeInfo) -> Vec<usize> {
    let first_free = info.localsplus.len() - info.nfree;
    let mut out: Vec<usize> = (info.nlocals..info.localsplus.len()).collect();
    for s in cell_slots(info) {
        if s < first_free && s < info.nlocals {
            out.push(s);
        }
    }
    out
}

/// Instructions after which execution can continue in a resume function: their effect on the
/// stack is known, they push no NULL, and they do not touch the block stack; an attribute load
/// only where it loads no method. `FOR_ITER` is not one: a break there would resume in a new
/// function per iteration (a chain of graphs as long as the loop), where running the frame as it
/// is makes none.
fn breakable(ins: &crate::decode::Ins) -> bool {
    let op = ins.op;
    (op == Op::LoadAttr && !ins.pushes_null)
        || op == Op::IsOp
        || matches!(
            op,
            Op::Call
                | Op::CallFunctionEx
                | Op::PopJumpIfTrue
                | Op::PopJumpIfFalse
                | Op::PopJumpIfNone
                | Op::PopJumpIfNotNone
                | Op::BinaryOp
                | Op::CompareOp
                | Op::BinarySubscr
                | Op::StoreSubscr
                | Op::BinarySlice
                | Op::StoreSlice
                | Op::ContainsOp
                | Op::UnaryNegative
                | Op::UnaryPositive
                | Op::UnaryInvert
                | Op::UnaryNot
                | Op::Unsupported
        )
}

pub use crate::code::{user_function_name, RESUME_PREFIX};

/// Why a frame whose graph break lies inside a loop runs eagerly.
pub const BREAK_IN_LOOP: &str = "a graph break inside a for/while loop: the frame runs \
     eagerly, as torch.compile gives such frames up (the functions it calls are compiled as \
     frames of their own)";

/// Whether root instruction `index` lies inside a loop of the frame, as torch.compile decides
/// it: a jump back to before `index` comes before the next return, in code order. Resuming
/// there would trace the rest of the loop once per trip (its remaining items unrolled, a new
/// graph for each), where giving the frame up compiles only what it calls; this keeps the
/// graph count torch.compile's.
fn in_loop(info: &CodeInfo, index: usize) -> bool {
    for ins in &info.ins[index..] {
        if matches!(ins.name.as_str(), "RETURN_VALUE" | "RETURN_CONST") {
            return false;
        }
        if ins.target.is_some_and(|t| t < index) {
            return true;
        }
    }
    false
}

/// Why a frame whose break lies in a call inside a `try` block runs eagerly.
pub const BREAK_IN_TRY: &str = "a graph break in a call inside a try block: the frame runs \
     eagerly, as torch.compile gives such frames up (the functions it calls are compiled as \
     frames of their own)";

/// Whether root instruction `index` lies inside a `try` block (one whose handler is an
/// `except` or `finally` clause), looking through the `with` blocks and `except` bodies around
/// it, as torch.compile's block stack sees it: it restores `with` blocks at a break but no
/// `try`, and gives the frame up instead.
pub fn in_try_block(info: &CodeInfo, index: usize) -> bool {
    let Some(ins) = info.ins.get(index) else {
        return false;
    };
    let Ok(entries) = bytecode::exception_table::parse(&info.exception_table) else {
        return false;
    };
    let mut offset = ins.offset;
    // Each step moves to the handler of the entry covering `offset`; a chain ends in a few.
    for _ in 0..64 {
        let Some(e) = entries
            .iter()
            .find(|e| (e.start as usize) <= offset && offset < e.end as usize)
        else {
            return false;
        };
        let Some(h) = info.ins.iter().position(|i| i.offset == e.target as usize) else {
            return false;
        };
        let next = info.ins.get(h + 1).map(|i| i.name.as_str());
        match info.ins[h].name.as_str() {
            "PUSH_EXC_INFO" if next == Some("WITH_EXCEPT_START") => {}
            "PUSH_EXC_INFO" => return true,
            // The cleanup of an `except` body or a `with` exit: look at what encloses it.
            _ => {}
        }
        offset = info.ins[h].offset;
    }
    false
}

/// Why a graph break cannot be placed at root instruction `index` (the whole frame then runs
/// eagerly), or `None` when it can.
pub fn why_no_break_at(info: &CodeInfo, index: usize) -> Option<String> {
    let Some(ins) = info.ins.get(index) else {
        return Some("no such instruction".into());
    };
    if crate::interp::comprehension::region_at(info, index).is_some() {
        return None;
    }
    let supported_unsupported = matches!(
        ins.name.as_str(),
        "STORE_ATTR"
            | "STORE_GLOBAL"
            | "DELETE_ATTR"
            | "DELETE_SUBSCR"
            | "FORMAT_VALUE"
            | "BUILD_STRING"
            | "RAISE_VARARGS"
            | "PRINT_EXPR"
    );
    if !(breakable(ins) && ins.op != Op::Unsupported || supported_unsupported) {
        return Some(format!("a graph break at {} cannot resume yet", ins.name));
    }
    if in_loop(info, index) {
        return Some(BREAK_IN_LOOP.into());
    }
    match bytecode::exception_table::parse(&info.exception_table) {
        Ok(_) => None,
        Err(e) => Some(format!("unreadable exception table: {e}")),
    }
}

/// The exception-table entry that covers root instruction `index`, if any (3.11 tables are
/// flat: at most one entry covers an offset).
fn handler_of(
    info: &CodeInfo,
    index: usize,
) -> Result<Option<bytecode::exception_table::ExceptionTableEntry>, TraceError> {
    let offset = info.ins[index].offset;
    let entries = bytecode::exception_table::parse(&info.exception_table)
        .map_err(|e| TraceError::internal(format!("unreadable exception table: {e}")))?;
    Ok(entries
        .into_iter()
        .find(|e| (e.start as usize) <= offset && offset < e.end as usize))
}

/// Interns constants appended after the original ones (the breaking instruction may refer to
/// the original `co_consts` by index, so those keep their places).
struct Consts<'py> {
    items: Vec<Bound<'py, PyAny>>,
    ints: std::collections::HashMap<i64, u32>,
}

impl<'py> Consts<'py> {
    fn add(&mut self, v: Bound<'py, PyAny>) -> u32 {
        self.items.push(v);
        (self.items.len() - 1) as u32
    }

    fn int(&mut self, py: Python<'py>, i: i64) -> u32 {
        if let Some(&k) = self.ints.get(&i) {
            return k;
        }
        let k = self.add(i.into_pyobject(py).unwrap().into_any());
        self.ints.insert(i, k);
        k
    }
}

fn asm_err(e: bytecode::Error) -> TraceError {
    TraceError::internal(format!("assembling: {e}"))
}

/// The transformed code of a frame that breaks its graph at `plan.index`: run the graph, rebuild
/// what the breaking instruction consumes, the locals and the cells, run the instruction
/// natively, and tail-call a resume function for each way execution continues (including the
/// frame's exception handler, when the instruction raises inside a `try` or `with` block).
///
/// The stack slots the instruction leaves untouched are never pushed here: the resume function
/// gets them straight from the graph's outputs (it pushes their NULLs itself and turns loop
/// items back into iterators), so a pending call below the break or a loop in progress costs
/// nothing here.
///
/// Layout: the arguments, then the frame's free-variable cells (the hook passes them after the
/// arguments), then the other locals and one cell object per cell of the frame (no temporaries: the graph's outputs stay on the stack).
pub fn graph_break<'py>(
    py: Python<'py>,
    info: &CodeInfo,
    code: &Bound<'py, PyAny>,
    globals: &Bound<'py, PyAny>,
    graph: &Bound<'py, PyAny>,
    plan: &BreakPlan,
) -> Result<Bound<'py, PyAny>, TraceError> {
    let version = crate::version::current(py)?;
    let ins = &info.ins[plan.index];
    let line = ins.line.unwrap_or(info.firstlineno) as i32;
    let mut consts = Consts {
        items: info.consts.iter().map(|c| c.bind(py).clone()).collect(),
        ints: Default::default(),
    };
    let first_free = info.localsplus.len() - info.nfree;
    let mut varnames: Vec<String> = info.varnames[..info.nargs].to_vec();
    for name in &info.localsplus[first_free..] {
        varnames.push(format!("___free_{name}"));
    }
    varnames.extend(info.varnames[info.nargs..].iter().cloned());
    // The graph's output tuple and the values the instruction leaves are kept on the stack,
    // under the instruction's operands, never in named slots: the frame that runs the
    // instruction and tail-calls the resume function is visible to `locals()` of tracers,
    // debuggers and tracebacks, and must show the user's variables only.
    let cell_base = varnames.len();
    let cells = cell_slots(info);
    for &c in &cells {
        varnames.push(format!("___cell_{}", info.localsplus[c]));
    }
    // Where each stack slot's value sits in the graph's output tuple.
    let mut out_index = Vec::with_capacity(plan.stack.len());
    let mut k = 0i64;
    for slot in &plan.stack {
        out_index.push(k);
        if *slot != StackSlot::Null {
            k += 1;
        }
    }
    let lay = Layout {
        nargs: info.nargs,
        nfree: info.nfree,
        first_free,
        cells: cells.clone(),
        cell_base,
        assigned: plan.assigned.clone(),
        maybe: Vec::new(),
        out_index,
    };

    let depth = plan.stack.len();
    // A break at the start of a comprehension inlined by 3.12 runs the whole comprehension: it
    // takes the iterator and leaves the result (unless the region stores or drops it).
    let region = crate::interp::comprehension::region_at(info, plan.index);
    let region_pushes = usize::from(region.as_ref().map(|r| r.result) == Some(Disposition::Stack));
    let opcode = version.opcode(&ins.name).map_err(asm_err)?;
    let after_depth = match ins.op {
        _ if region.is_some() => depth as i64 - 1 + region_pushes as i64,
        Op::Call => depth as i64 - ins.arg as i64 - 1,
        Op::PopJumpIfTrue | Op::PopJumpIfFalse | Op::PopJumpIfNone | Op::PopJumpIfNotNone => {
            depth as i64 - 1
        }
        _ => depth as i64 + opcode.stack_effect(ins.arg, false).map_err(asm_err)?,
    };
    // What the instruction pushes sits on top of the slots it leaves untouched.
    let pushed: usize = match ins.op {
        _ if region.is_some() => region_pushes,
        Op::PopJumpIfTrue
        | Op::PopJumpIfFalse
        | Op::PopJumpIfNone
        | Op::PopJumpIfNotNone
        | Op::StoreSubscr => 0,
        _ if ins.name.starts_with("STORE_")
            || ins.name.starts_with("DELETE_")
            || ins.name == "RAISE_VARARGS"
            || ins.name == "PRINT_EXPR" =>
        {
            0
        }
        _ => 1,
    };
    let untouched = usize::try_from(after_depth - pushed as i64)
        .map_err(|_| TraceError::internal("the breaking instruction underflows the stack"))?
        .min(depth);

    let mut asm = Assembler::new(version);
    // Only the breaking instruction has the user's line. The graph call, the rebuilding of
    // values and the resume call have none: an error there comes with the user's frames from
    // the graph or the resume function, and the hook drops this frame's entry from the
    // traceback (`traceback::drop_transformed_entry`), as eager has one entry for the frame.
    asm.set_position(bytecode::Position::NONE);
    asm.resume(ResumeAt::Start).map_err(asm_err)?;
    asm.push_null().map_err(asm_err)?;
    let g = consts.add(graph.clone());
    asm.load_const(g).map_err(asm_err)?;
    for i in 0..info.nargs + info.nfree {
        asm.load_fast(i as u32).map_err(asm_err)?;
    }
    asm.call((info.nargs + info.nfree) as u32)
        .map_err(asm_err)?;
    // The output tuple stays at the bottom of the stack; `above` counts what lies over it.
    let mut above = 0usize;
    for i in untouched..depth {
        if plan.stack[i] == StackSlot::Null {
            asm.push_null().map_err(asm_err)?;
        } else {
            lay.out_item(&mut asm, py, &mut consts, above, lay.out_index[i])?;
            // An iterator the instruction consumes (a comprehension's argument).
            if plan.stack[i] == StackSlot::Iter {
                asm.get_iter().map_err(asm_err)?;
            }
        }
        above += 1;
    }
    let nstack_out = lay.out_index.last().copied().unwrap_or(0)
        + i64::from(plan.stack.last().is_some_and(|s| *s != StackSlot::Null));
    let mut k = nstack_out;
    for &j in &plan.assigned {
        lay.out_item(&mut asm, py, &mut consts, above, k)?;
        asm.store_fast(lay.local(j)).map_err(asm_err)?;
        k += 1;
    }
    for c in 0..plan.ncells {
        lay.out_item(&mut asm, py, &mut consts, above, k)?;
        asm.store_fast((lay.cell_base + c) as u32)
            .map_err(asm_err)?;
        k += 1;
    }
    if let (Some(mode), false) = (plan.grad_mode, plan.inference_levels.is_empty()) {
        // The graph left the inference-mode blocks: entered again, then the break's grad mode.
        asm.push_null().map_err(asm_err)?;
        let f = consts.add(py.import("torchferro._amp")?.getattr("reenter_inference")?);
        asm.load_const(f).map_err(asm_err)?;
        let levels = pyo3::types::PyTuple::new(py, plan.inference_levels.iter().copied())?;
        let levels = consts.add(levels.into_any());
        asm.load_const(levels).map_err(asm_err)?;
        let b = consts.add(pyo3::types::PyBool::new(py, mode).to_owned().into_any());
        asm.load_const(b).map_err(asm_err)?;
        asm.call(2).map_err(asm_err)?;
        asm.pop_top().map_err(asm_err)?;
    } else if let Some(mode) = plan.grad_mode {
        // The graph leaves grad mode as the frame found it; the rest of the block runs natively.
        asm.push_null().map_err(asm_err)?;
        let f = consts.add(
            py.import("torch")?
                .getattr("_C")?
                .getattr("_set_grad_enabled")?,
        );
        asm.load_const(f).map_err(asm_err)?;
        let b = consts.add(pyo3::types::PyBool::new(py, mode).to_owned().into_any());
        asm.load_const(b).map_err(asm_err)?;
        asm.call(1).map_err(asm_err)?;
        asm.pop_top().map_err(asm_err)?;
    }

    // The breaking instruction itself; inside a try/with block it is protected by a handler
    // that continues in the frame's own handler.
    asm.set_position(bytecode::Position::line(line));
    let handler = handler_of(info, plan.index)?;
    let protect = handler.as_ref().map(|h| {
        let (start, end, target) = (asm.label_here(), asm.new_label(), asm.new_label());
        (h, start, end, target)
    });
    let mut names: Vec<String> = info.names.clone();
    let mut jump_label = None;
    match ins.op {
        _ if region.is_some() => {
            let r = region.as_ref().expect("checked above");
            // The copy runs over the graph's output tuple instead of the untouched slots.
            let shift = 1 - untouched as i64;
            region::emit(&mut asm, info, r, shift, protect.is_some(), |j| {
                lay.local(j as usize)
            })?;
        }
        Op::Call if plan.zero_arg_super => {
            let class = info
                .localsplus
                .iter()
                .skip(first_free)
                .position(|n| n == "__class__")
                .ok_or_else(|| TraceError::internal("super() without a __class__ cell"))?;
            asm.load_fast((info.nargs + class) as u32)
                .map_err(asm_err)?;
            names.push("cell_contents".into());
            let attr = (names.len() - 1) as u32;
            asm.load_attr(attr, false).map_err(asm_err)?;
            match cells.iter().position(|&c| c == 0) {
                Some(k) => {
                    asm.load_fast((lay.cell_base + k) as u32).map_err(asm_err)?;
                    asm.load_attr(attr, false).map_err(asm_err)?;
                }
                None => asm.load_fast(0).map_err(asm_err)?,
            }
            asm.call(2).map_err(asm_err)?;
        }
        Op::Call => {
            match kw_names_before(info, plan.index) {
                Some(kw) => asm.call_kw(ins.arg, kw),
                None => asm.call(ins.arg),
            }
            .map_err(asm_err)?;
        }
        Op::PopJumpIfTrue | Op::PopJumpIfFalse | Op::PopJumpIfNone | Op::PopJumpIfNotNone => {
            let l = asm.new_label();
            // 3.11 names the direction; the assembler picks it from where the label lands.
            asm.emit_jump(&ins.name, l).map_err(asm_err)?;
            jump_label = Some(l);
        }
        // Any other breakable instruction is re-emitted as the frame spelled it.
        _ => asm.emit(&ins.name, ins.arg).map_err(asm_err)?,
    }
    if let Some((_, start, end, target)) = &protect {
        asm.bind(*end).map_err(asm_err)?;
        // Nothing of the frame's stack lies below the instruction's operands here.
        asm.add_exception_range(bytecode::ExceptionRange {
            start: *start,
            end: *end,
            handler: *target,
            // The output tuple lies below the instruction's operands.
            depth: 1,
            lasti: true,
        });
    }
    asm.set_position(bytecode::Position::NONE);
    // After a region, the local its result was stored into is bound too.
    let mut after_lay = lay.clone();
    if let Some(Disposition::Stored(v)) = region.as_ref().map(|r| r.result) {
        if !after_lay.assigned.contains(&(v as usize)) {
            after_lay.assigned.push(v as usize);
        }
    }
    // Locals its assignment expressions bind are bound after it only if the loop ran.
    for &v in region.as_ref().map_or(&[][..], |r| &r.walrus[..]) {
        let v = v as usize;
        if !after_lay.assigned.contains(&v) && !after_lay.maybe.contains(&v) {
            after_lay.maybe.push(v);
        }
    }
    let origin = origin_of(py, info, code, plan.index)?;
    let mut ctx = ResumeCtx {
        py,
        info,
        origin: &origin,
        globals,
        consts: &mut consts,
        lay: &after_lay,
    };
    let mut spec: Vec<StackSlot> = plan.stack[..untouched].to_vec();
    spec.extend(std::iter::repeat_n(StackSlot::Value, pushed));
    if ins.name == "RAISE_VARARGS" {
        // Nothing follows a raise (but its handler, below).
    } else {
        let next = region.as_ref().map_or(plan.index + 1, |r| r.end);
        ctx.resume_call(&mut asm, next, &spec, pushed)?;
        if region.is_some() && plan.stack[..untouched].contains(&StackSlot::Iter) {
            // A comprehension that breaks inside a `for` loop of the frame would break again on
            // every iteration, each time in a new resume function: as torch.compile does, the
            // graph so far is kept and the rest of the frame runs natively.
            let resume = ctx.resume_code(next, &spec)?;
            crate::code_cache::mark_skip(resume.code.bind(py));
        }
        if let (Some(l), Some(target)) = (jump_label, ins.target) {
            asm.bind(l).map_err(asm_err)?;
            ctx.resume_call(&mut asm, target, &plan.stack[..untouched], 0)?;
        }
    }
    if let Some((h, _, _, label)) = protect {
        // An exception leaves a region before its result is stored.
        ctx.lay = &lay;
        let hdepth = (h.depth as usize).min(untouched);
        let target = info
            .ins
            .iter()
            .position(|i| i.offset == h.target as usize)
            .ok_or_else(|| TraceError::internal("an exception handler at no instruction"))?;
        asm.bind(label).map_err(asm_err)?;
        let mut spec: Vec<StackSlot> = plan.stack[..hdepth].to_vec();
        // The stack here is [outputs, lasti, exception]: drop this code's lasti.
        asm.swap(2).map_err(asm_err)?;
        asm.pop_top().map_err(asm_err)?;
        if h.lasti {
            // The offset pushed is this code's; the resume function's RERAISE wants one of its
            // own (only tracebacks read it): the breaking instruction's offset there.
            let resume = ctx.resume_code(target, &{
                let mut s = spec.clone();
                s.extend([StackSlot::Value, StackSlot::Value]);
                s
            })?;
            let at = origin.index(plan.index)?;
            let lasti = resume.prefix_units + (origin.info().ins[at].offset / 2) as i64;
            let c = ctx.consts.int(py, lasti);
            asm.load_const(c).map_err(asm_err)?;
            asm.swap(2).map_err(asm_err)?;
            spec.push(StackSlot::Value);
        }
        spec.push(StackSlot::Value);
        let n = spec.len() - hdepth;
        ctx.resume_call(&mut asm, target, &spec, n)?;
    }
    let out = asm.assemble(info.firstlineno as i32).map_err(asm_err)?;
    let kw = code_fields(
        py,
        &out,
        &varnames,
        info.nargs + info.nfree,
        info.flags & !(CO_VARARGS | CO_VARKEYWORDS),
    )?;
    kw.set_item("co_consts", PyTuple::new(py, &consts.items)?)?;
    kw.set_item("co_names", PyTuple::new(py, &names)?)?;
    kw.set_item("co_freevars", PyTuple::empty(py))?;
    kw.set_item("co_cellvars", PyTuple::empty(py))?;
    // A traceback entry of this frame (the breaking instruction raised) names the user's
    // function, as eager's does, also in a resume function's transformed code.
    kw.set_item("co_name", user_function_name(&info.name))?;
    Ok(code.call_method("replace", (), Some(&kw))?)
}

/// What a resume function receives for one stack slot of the original frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StackSlot {
    /// The NULL of a pending call: pushed by the resume function itself.
    Null,
    Value,
    /// A `for` loop's iterator: handed over as the list of items it has not yielded yet, which
    /// the resume function turns back into an iterator.
    Iter,
}

/// Where the transformed code of a graph break keeps the frame's values.
#[derive(Clone)]
struct Layout {
    nargs: usize,
    nfree: usize,
    /// First free-variable slot of the original frame.
    first_free: usize,
    /// The original frame's cell slots ([`cell_slots`]); local `cell_base + k` of the
    /// transformed code holds the cell object that stands for `cells[k]`.
    cells: Vec<usize>,
    cell_base: usize,
    assigned: Vec<usize>,
    /// Locals that may or may not be bound here (assigned by a region's assignment
    /// expressions): handed to the resume function as themselves or as [`unbound_marker`].
    maybe: Vec<usize>,
    /// For each stack slot at the break, its index in the graph's output tuple.
    out_index: Vec<i64>,
}

impl Layout {
    /// The transformed code's slot for original local `j`.
    fn local(&self, j: usize) -> u32 {
        (if j < self.nargs { j } else { j + self.nfree }) as u32
    }

    /// Pushes item `k` of the graph's output tuple, which lies under `above` stack items.
    fn out_item<'py>(
        &self,
        asm: &mut Assembler,
        py: Python<'py>,
        consts: &mut Consts<'py>,
        above: usize,
        k: i64,
    ) -> Result<(), TraceError> {
        asm.copy((above + 1) as u32).map_err(asm_err)?;
        let c = consts.int(py, k);
        asm.load_const(c).map_err(asm_err)?;
        asm.binary_subscr().map_err(asm_err)
    }
}

struct ResumeCtx<'a, 'py> {
    py: Python<'py>,
    /// The frame's code, which the transformed code's layout follows.
    info: &'a CodeInfo,
    /// The code resume functions are built from (see [`Origin`]).
    origin: &'a Origin<'a, 'py>,
    globals: &'a Bound<'py, PyAny>,
    consts: &'a mut Consts<'py>,
    lay: &'a Layout,
}

impl<'py> ResumeCtx<'_, 'py> {
    /// The resume function that continues at the frame's instruction `target`.
    fn resume_code(&mut self, target: usize, spec: &[StackSlot]) -> Result<Resume, TraceError> {
        let origin = self.origin;
        // A resume function's own stack locals come after the original's locals, and are
        // unbound past its prefix: the original's locals are all a resume function takes.
        let nlocals = origin.info().nlocals;
        let unbound: Vec<usize> = (0..nlocals)
            .filter(|j| !self.lay.assigned.contains(j) && !self.lay.maybe.contains(j))
            .collect();
        let mut maybe: Vec<usize> = self
            .lay
            .maybe
            .iter()
            .copied()
            .filter(|j| *j < nlocals)
            .collect();
        maybe.sort_unstable();
        resume_function(
            self.py,
            origin.info(),
            &origin.code,
            self.globals,
            origin.index(target)?,
            spec,
            Unbound {
                unbound: &unbound,
                maybe: &maybe,
            },
        )
    }

    /// Returns `resume(locals..., stack...)` for a resume function at `target` whose stack is
    /// `spec`: its last `on_stack` slots are the values on top of this code's stack, the
    /// others come from the graph's outputs. A frame with cells or free variables makes the
    /// resume function as a closure over them first (the very cells, so writes stay shared with
    /// closures made before the break).
    fn resume_call(
        &mut self,
        asm: &mut Assembler,
        target: usize,
        spec: &[StackSlot],
        on_stack: usize,
    ) -> Result<(), TraceError> {
        let py = self.py;
        let resume = self.resume_code(target, spec)?;
        let lay = self.lay;
        // The stack is [outputs, on_stack values...]: the values become one tuple, and both are
        // read by depth (`above_out`, `above_top`: items over each) while the call is built.
        asm.build_tuple(on_stack as u32).map_err(asm_err)?;
        let (mut above_out, mut above_top) = (1usize, 0usize);
        asm.push_null().map_err(asm_err)?;
        // `TailCall(resume, args...)`: the hook makes the call once this frame is gone.
        let tail = self.consts.add(py.get_type::<TailCall>().into_any());
        asm.load_const(tail).map_err(asm_err)?;
        above_out += 2;
        above_top += 2;
        let slots = closure_slots(self.info);
        if slots.is_empty() {
            let r = self.consts.add(resume.function.bind(py).clone());
            asm.load_const(r).map_err(asm_err)?;
        } else {
            for &s in &slots {
                if s >= lay.first_free {
                    asm.load_fast((lay.nargs + s - lay.first_free) as u32)
                        .map_err(asm_err)?;
                } else {
                    let k =
                        lay.cells.iter().position(|&c| c == s).ok_or_else(|| {
                            TraceError::internal("a closure slot that is no cell")
                        })?;
                    asm.load_fast((lay.cell_base + k) as u32).map_err(asm_err)?;
                }
            }
            asm.build_tuple(slots.len() as u32).map_err(asm_err)?;
            let c = self.consts.add(resume.code.bind(py).clone());
            asm.load_const(c).map_err(asm_err)?;
            asm.make_function(FunctionParts::CLOSURE).map_err(asm_err)?;
        }
        above_out += 1;
        above_top += 1;
        let none = self.consts.add(py.None().into_bound(py));
        // Only code that hands over maybe-unbound locals holds the marker (precompile
        // marshals transformed code, and the marker is a private object).
        let marker = if lay.maybe.is_empty() {
            0
        } else {
            self.consts.add(unbound_marker(py)?)
        };
        let nlocals = self.origin.info().nlocals;
        for j in 0..nlocals {
            if lay.assigned.contains(&j) {
                asm.load_fast(lay.local(j)).map_err(asm_err)?;
            } else if lay.maybe.contains(&j) {
                // The local's value, or the marker where it is unbound: a checked load whose
                // `UnboundLocalError` is caught right here. Below it lie the outputs, the
                // values, NULL, `TailCall`, the resume function and the `j` locals before it.
                let (start, end, handler, join) = (
                    asm.new_label(),
                    asm.new_label(),
                    asm.new_label(),
                    asm.new_label(),
                );
                asm.bind(start).map_err(asm_err)?;
                asm.emit("LOAD_FAST_CHECK", lay.local(j)).map_err(asm_err)?;
                asm.bind(end).map_err(asm_err)?;
                asm.emit_jump("JUMP_FORWARD", join).map_err(asm_err)?;
                asm.bind(handler).map_err(asm_err)?;
                asm.pop_top().map_err(asm_err)?;
                asm.load_const(marker).map_err(asm_err)?;
                asm.bind(join).map_err(asm_err)?;
                asm.add_exception_range(bytecode::ExceptionRange {
                    start,
                    end,
                    handler,
                    depth: (5 + j) as u32,
                    lasti: false,
                });
            } else {
                asm.load_const(none).map_err(asm_err)?;
            }
            above_out += 1;
            above_top += 1;
        }
        let from_graph = spec.len() - on_stack;
        let mut nargs = nlocals;
        for (i, slot) in spec.iter().enumerate() {
            if *slot == StackSlot::Null {
                if i >= from_graph {
                    return Err(TraceError::internal(
                        "a NULL pushed by the breaking instruction",
                    ));
                }
                continue;
            }
            if i < from_graph {
                lay.out_item(asm, py, self.consts, above_out, lay.out_index[i])?;
            } else {
                asm.copy((above_top + 1) as u32).map_err(asm_err)?;
                let c = self.consts.int(py, (i - from_graph) as i64);
                asm.load_const(c).map_err(asm_err)?;
                asm.binary_subscr().map_err(asm_err)?;
            }
            above_out += 1;
            above_top += 1;
            nargs += 1;
        }
        asm.call(nargs as u32 + 1).map_err(asm_err)?;
        // [outputs, values, result] -> [result]
        asm.swap(3).map_err(asm_err)?;
        asm.pop_top().map_err(asm_err)?;
        asm.pop_top().map_err(asm_err)?;
        asm.return_value().map_err(asm_err)?;
        Ok(())
    }
}

/// What the transformed code of a graph break returns instead of calling its resume function:
/// the function (first) and its arguments. Bytecode has no tail call, so a frame that called its
/// resume function would stay on the stack under it, one frame per graph break: visible to
/// `sys._getframe`/`inspect.stack` (eager has one frame there) and spending a recursion level.
/// The hook makes the call after the transformed frame has returned (`hook::call_function`).
/// Only the hook runs transformed code, so no user code sees one.
#[pyclass(frozen, module = "torchferro._C")]
pub struct TailCall {
    pub call: Py<PyTuple>,
}

#[pymethods]
impl TailCall {
    #[new]
    #[pyo3(signature = (*call))]
    fn new(call: Bound<'_, PyTuple>) -> TailCall {
        TailCall {
            call: call.unbind(),
        }
    }
}

const CO_VARARGS: u32 = 0x04;
const CO_VARKEYWORDS: u32 = 0x08;

/// The `KW_NAMES` argument that applies to the CALL at `index`, if any.
fn kw_names_before(info: &CodeInfo, index: usize) -> Option<u32> {
    (index.saturating_sub(3)..index)
        .rev()
        .map(|i| &info.ins[i])
        .take_while(|i| matches!(i.op, Op::KwNames | Op::Precall | Op::Nop))
        .find(|i| i.op == Op::KwNames)
        .map(|i| i.arg)
}

/// Resume functions already made, by (original code, globals, target, stack depth): the same
/// resume point reuses one code object, so its compiled entries survive recompiles of the frame
/// that breaks into it. Holds the original code so its address stays unique.
type ResumeKey = (usize, usize, usize, Vec<StackSlot>, Vec<usize>, Vec<usize>);
static RESUMES: std::sync::Mutex<Vec<(ResumeKey, Py<PyAny>, Resume)>> =
    std::sync::Mutex::new(Vec::new());

/// A resume point: its code object, and a function of it for frames without a closure.
struct Resume {
    code: Py<PyAny>,
    function: Py<PyAny>,
    /// Code units before the appended original code starts.
    prefix_units: i64,
    /// Decoded instructions before the appended original code starts: instruction
    /// `prefix_ins + k` of the resume code is instruction `k` of the original.
    prefix_ins: usize,
}

impl Resume {
    fn clone_ref(&self, py: Python<'_>) -> Resume {
        Resume {
            code: self.code.clone_ref(py),
            function: self.function.clone_ref(py),
            prefix_units: self.prefix_units,
            prefix_ins: self.prefix_ins,
        }
    }
}

/// The code a frame's resume functions are built from, and where its instructions are.
///
/// A frame that is itself a resume function continues the ORIGINAL code: a break in it gets
/// a resume function built from the original code object at the matching instruction, not
/// from the resume code (which would nest one prefix per break). So the trips of a loop that
/// breaks at the same place share one resume code object and its compiled entries, instead
/// of making a new code object, and recompiling, on every trip.
struct Origin<'a, 'py> {
    /// The original code's facts where the frame is a resume function's, else none.
    owned: Option<CodeInfo>,
    frame: &'a CodeInfo,
    code: Bound<'py, PyAny>,
    /// The frame's instruction `i` is the origin's instruction `i - shift`.
    shift: usize,
}

impl Origin<'_, '_> {
    fn info(&self) -> &CodeInfo {
        self.owned.as_ref().unwrap_or(self.frame)
    }

    /// The origin's instruction for the frame's instruction `i`.
    fn index(&self, i: usize) -> Result<usize, TraceError> {
        i.checked_sub(self.shift)
            .filter(|k| *k <= self.info().ins.len())
            .ok_or_else(|| TraceError::internal("a resume point inside a resume prefix"))
    }
}

/// The origin of the frame running `code` (see [`Origin`]): the original code a resume
/// function continues, or `code` itself.
fn origin_of<'a, 'py>(
    py: Python<'py>,
    info: &'a CodeInfo,
    code: &Bound<'py, PyAny>,
    index: usize,
) -> Result<Origin<'a, 'py>, TraceError> {
    let found = RESUMES.lock().ok().and_then(|cache| {
        cache
            .iter()
            .find(|(_, _, r)| r.code.as_ptr() == code.as_ptr())
            .map(|(_, orig, r)| (orig.clone_ref(py), r.prefix_ins))
    });
    if let Some((orig, shift)) = found {
        // Only where the break lies in the appended original code, instruction for
        // instruction the same (the prefix never breaks; checked, not assumed).
        if index >= shift {
            let orig = orig.into_bound(py);
            let oinfo = CodeInfo::from_code(py, &orig)?;
            let same = oinfo.ins.len() + shift == info.ins.len()
                && oinfo
                    .ins
                    .iter()
                    .zip(&info.ins[shift..])
                    .all(|(a, b)| a.name == b.name);
            if same {
                return Ok(Origin {
                    owned: Some(oinfo),
                    frame: info,
                    code: orig,
                    shift,
                });
            }
        }
    }
    Ok(Origin {
        owned: None,
        frame: info,
        code: code.clone(),
        shift: 0,
    })
}

/// A function that continues the original code at instruction `target`, taking every local
/// of the original frame and then the values of the stack slots in `spec` (NULLs left out).
/// The locals in `unbound` were unbound at the break: they are passed as `None` and deleted by
/// the prefix, so the resumed frame raises `UnboundLocalError` on them and `locals()` or a
/// debugger sees exactly the user's bound variables.
fn resume_function(
    py: Python<'_>,
    info: &CodeInfo,
    code: &Bound<'_, PyAny>,
    globals: &Bound<'_, PyAny>,
    target: usize,
    spec: &[StackSlot],
    locals: Unbound<'_>,
) -> Result<Resume, TraceError> {
    let Unbound { unbound, maybe } = locals;
    let key = (
        code.as_ptr() as usize,
        globals.as_ptr() as usize,
        target,
        spec.to_vec(),
        unbound.to_vec(),
        maybe.to_vec(),
    );
    if let Ok(cache) = RESUMES.lock() {
        if let Some((_, _, r)) = cache.iter().find(|(k, _, _)| *k == key) {
            return Ok(r.clone_ref(py));
        }
    }
    let r = make_resume_function(py, info, code, globals, target, spec, locals)?;
    if let Ok(mut cache) = RESUMES.lock() {
        cache.push((key, code.clone().unbind(), r.clone_ref(py)));
    }
    Ok(r)
}

/// Deref instructions of 3.11/3.12, whose oparg is a `localsplus` index.
fn is_deref(name: &str) -> bool {
    matches!(
        name,
        "MAKE_CELL"
            | "LOAD_CLOSURE"
            | "LOAD_DEREF"
            | "STORE_DEREF"
            | "DELETE_DEREF"
            | "LOAD_CLASSDEREF"
            | "LOAD_FROM_DICT_OR_DEREF"
    )
}

/// The resume code: the original code entered at `target`, its locals first, then the stack
/// values as extra arguments (NULLs pushed and iterators rebuilt by its prefix). The frame's cells and free variables all become free variables
/// of the resume code (a closure made by the transformed code), so deref opargs are renumbered.
fn make_resume_function(
    py: Python<'_>,
    info: &CodeInfo,
    code: &Bound<'_, PyAny>,
    globals: &Bound<'_, PyAny>,
    target: usize,
    spec: &[StackSlot],
    locals: Unbound<'_>,
) -> Result<Resume, TraceError> {
    let Unbound { unbound, maybe } = locals;
    let nstack = spec.iter().filter(|s| **s != StackSlot::Null).count();
    let version = crate::version::current(py)?;
    let line = info
        .ins
        .get(target)
        .and_then(|i| i.line)
        .unwrap_or(info.firstlineno);
    let slots = closure_slots(info);
    let mut asm = Assembler::new(version);
    asm.set_position(bytecode::Position::line(line as i32));
    if !slots.is_empty() {
        asm.copy_free_vars(slots.len() as u32).map_err(asm_err)?;
    }
    asm.resume(ResumeAt::Start).map_err(asm_err)?;
    let mut p = 0;
    for slot in spec {
        if *slot == StackSlot::Null {
            asm.push_null().map_err(asm_err)?;
            continue;
        }
        asm.load_fast((info.nlocals + p) as u32).map_err(asm_err)?;
        p += 1;
        if *slot == StackSlot::Iter {
            asm.get_iter().map_err(asm_err)?;
        }
    }
    // The frame the user's code continues in holds the user's variables only: the stack
    // values now live on the stack, and locals unbound at the break are unbound again.
    for i in 0..nstack {
        asm.delete_fast((info.nlocals + i) as u32)
            .map_err(asm_err)?;
    }
    for &j in unbound {
        asm.delete_fast(j as u32).map_err(asm_err)?;
    }
    // A local handed over as the marker was unbound at the break. The marker is one more
    // constant after the code's own.
    let nconsts = code.getattr("co_consts")?.len()?;
    for &j in maybe {
        let bound = asm.new_label();
        asm.load_fast(j as u32).map_err(asm_err)?;
        asm.load_const(nconsts as u32).map_err(asm_err)?;
        asm.emit("IS_OP", 0).map_err(asm_err)?;
        asm.emit_jump("POP_JUMP_IF_FALSE", bound).map_err(asm_err)?;
        asm.delete_fast(j as u32).map_err(asm_err)?;
        asm.bind(bound).map_err(asm_err)?;
    }
    let start = asm.new_label();
    asm.emit_jump("JUMP_FORWARD", start).map_err(asm_err)?;
    let base = asm.instructions().len();
    let labels = asm
        .append_code(bytecode::RawCode {
            code: &info.co_code,
            exception_table: &info.exception_table,
            line_table: &info.line_table,
            first_lineno: info.firstlineno as i32,
        })
        .map_err(asm_err)?;
    if !slots.is_empty() {
        let new_base = info.nlocals + nstack;
        let mut bad = false;
        asm.map_args(base, |op, arg| {
            if !is_deref(op.name()) {
                return arg;
            }
            match slots.iter().position(|&s| s == arg as usize) {
                Some(p) => (new_base + p) as u32,
                None => {
                    bad = true;
                    arg
                }
            }
        });
        if bad {
            return Err(TraceError::internal("a deref instruction of no cell"));
        }
    }
    asm.bind_to(start, labels[target]).map_err(asm_err)?;
    let out = asm.assemble(info.firstlineno as i32).map_err(asm_err)?;
    let prefix_units = out.offsets.get(base).copied().unwrap_or(0) as i64 / 2;
    let prefix_ins = base;
    let mut varnames = info.varnames.clone();
    for i in 0..nstack {
        varnames.push(format!("___stack{i}"));
    }
    // An argument that is also a cell keeps its name as a free variable too: the frame then
    // shows (`locals()`, a debugger's `f_locals`) the user's variable under its own name, with
    // the cell's value (the free variable comes later in `localsplus`, so it wins), in the
    // argument's place.
    let freevars: Vec<String> = slots.iter().map(|&s| info.localsplus[s].clone()).collect();
    let name = format!("{RESUME_PREFIX}{}_at_{}", info.name, line);
    let kw = code_fields(
        py,
        &out,
        &varnames,
        varnames.len(),
        info.flags & !(CO_VARARGS | CO_VARKEYWORDS),
    )?;
    kw.set_item("co_name", name.as_str())?;
    // The user's qualified name: the generated name is the code's `co_name` (what logs and the
    // tracer go by), while eager's name shows wherever the frame is seen (the transformed code
    // and the eager twin, `hook::eager_twin`, rename only `co_name`).
    kw.set_item("co_qualname", code.getattr("co_qualname")?)?;
    kw.set_item("co_cellvars", PyTuple::empty(py))?;
    kw.set_item("co_freevars", PyTuple::new(py, &freevars)?)?;
    if !maybe.is_empty() {
        let consts = code.getattr("co_consts")?;
        let mut all: Vec<Bound<'_, PyAny>> = consts.try_iter()?.collect::<PyResult<_>>()?;
        all.push(unbound_marker(py)?);
        kw.set_item("co_consts", PyTuple::new(py, all)?)?;
    }
    let new_code = code.call_method("replace", (), Some(&kw))?;
    let function = if slots.is_empty() {
        py.import("types")?
            .getattr("FunctionType")?
            .call1((&new_code, globals, name.as_str()))?
            .unbind()
    } else {
        py.None()
    };
    Ok(Resume {
        code: new_code.unbind(),
        function,
        prefix_units,
        prefix_ins,
    })
}

/// The value a resume call passes for a local that was unbound at the break where it may or
/// may not be (`Layout::maybe`): one private object, never a user value.
fn unbound_marker(py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
    static M: pyo3::sync::PyOnceLock<Py<PyAny>> = pyo3::sync::PyOnceLock::new();
    let m = M.get_or_try_init(py, || -> PyResult<Py<PyAny>> {
        Ok(py.import("builtins")?.getattr("object")?.call0()?.unbind())
    })?;
    Ok(m.bind(py).clone())
}

/// The locals a resume function must unbind in its prefix: `unbound` always, `maybe` where the
/// transformed code passed [`unbound_marker`].
#[derive(Clone, Copy)]
struct Unbound<'a> {
    unbound: &'a [usize],
    maybe: &'a [usize],
}
