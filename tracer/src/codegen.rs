//! The transformed code: what a frame runs instead of its original bytecode on a cache hit.
//!
//! For a whole-frame graph it is a trampoline, `return __compiled_graph(args..., cells...)`,
//! taking the frame's argument slots and closure cells as plain positional parameters (so a
//! function with `*args`/`**kwargs` or free variables needs no special calling convention).

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyTuple};

use bytecode::{Assembler, Version};

use crate::decode::Op;
use crate::error::TraceError;
use crate::interp::CodeInfo;

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
    asm.set_position(bytecode::Position::line(info.firstlineno as i32));
    let emit = |asm: &mut Assembler, name: &str, arg: u32| -> Result<(), TraceError> {
        asm.emit(name, arg)
            .map_err(|e| TraceError::internal(format!("assembling {name}: {e}")))
    };
    emit(&mut asm, "RESUME", 0)?;
    emit(&mut asm, "PUSH_NULL", 0)?;
    emit(&mut asm, "LOAD_CONST", 0)?;
    for i in 0..nparams {
        emit(&mut asm, "LOAD_FAST", i as u32)?;
    }
    if version == Version::V3_11 {
        emit(&mut asm, "PRECALL", nparams as u32)?;
    }
    emit(&mut asm, "CALL", nparams as u32)?;
    emit(&mut asm, "RETURN_VALUE", 0)?;
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
    /// For each stack slot at the break, bottom first: whether it holds a NULL.
    pub null_mask: Vec<bool>,
    /// Locals assigned at the break, by `co_varnames` index. The compiled graph returns the
    /// non-NULL stack values followed by these locals' values.
    pub assigned: Vec<usize>,
}

/// Instructions after which execution can continue in a resume function: their effect on the
/// stack is known, they push no NULL, and they do not touch the block stack.
fn breakable(op: Op) -> bool {
    matches!(
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
            | Op::ContainsOp
            | Op::UnaryNegative
            | Op::UnaryPositive
            | Op::UnaryInvert
            | Op::UnaryNot
            | Op::Unsupported
    )
}

/// Why a graph break cannot be placed at root instruction `index` (the whole frame then runs
/// eagerly), or `None` when it can.
pub fn why_no_break_at(info: &CodeInfo, index: usize) -> Option<String> {
    let Some(ins) = info.ins.get(index) else {
        return Some("no such instruction".into());
    };
    // Resume functions receive plain locals: frames with closures run eagerly for now.
    if info.ncells > 0 || info.nfree > 0 {
        return Some("a graph break in a function with closure variables cannot resume yet".into());
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
    if !(breakable(ins.op) && ins.op != Op::Unsupported || supported_unsupported) {
        return Some(format!("a graph break at {} cannot resume yet", ins.name));
    }
    // Inside a try/with block the handler's stack would have to be rebuilt too.
    match bytecode::exception_table::parse(&info.exception_table) {
        Ok(entries)
            if entries
                .iter()
                .any(|e| (e.start as usize) <= ins.offset && ins.offset < e.end as usize) =>
        {
            Some("a graph break inside a try or with block cannot resume yet".into())
        }
        Ok(_) => None,
        Err(e) => Some(format!("unreadable exception table: {e}")),
    }
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

fn call(asm: &mut Assembler, version: Version, n: u32) -> Result<(), TraceError> {
    if version == Version::V3_11 {
        asm.emit("PRECALL", n).map_err(asm_err)?;
    }
    asm.emit("CALL", n).map_err(asm_err)
}

/// The transformed code of a frame that breaks its graph at `plan.index`: run the graph, rebuild
/// the stack and locals, run the breaking instruction natively, and tail-call a resume function
/// for each way execution continues.
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
    let mut varnames = info.varnames.clone();
    let tmp = varnames.len() as u32;
    varnames.push("___graph_out".into());
    let stk = varnames.len() as u32;
    varnames.push("___stack".into());

    let mut asm = Assembler::new(version);
    asm.set_position(bytecode::Position::line(line));
    let e = |asm: &mut Assembler, name: &str, arg: u32| asm.emit(name, arg).map_err(asm_err);
    e(&mut asm, "RESUME", 0)?;
    e(&mut asm, "PUSH_NULL", 0)?;
    let g = consts.add(graph.clone());
    e(&mut asm, "LOAD_CONST", g)?;
    for i in 0..info.nargs {
        e(&mut asm, "LOAD_FAST", i as u32)?;
    }
    call(&mut asm, version, info.nargs as u32)?;
    e(&mut asm, "STORE_FAST", tmp)?;
    let mut k = 0i64;
    for &is_null in &plan.null_mask {
        if is_null {
            e(&mut asm, "PUSH_NULL", 0)?;
        } else {
            e(&mut asm, "LOAD_FAST", tmp)?;
            let c = consts.int(py, k);
            e(&mut asm, "LOAD_CONST", c)?;
            e(&mut asm, "BINARY_SUBSCR", 0)?;
            k += 1;
        }
    }
    for &j in &plan.assigned {
        e(&mut asm, "LOAD_FAST", tmp)?;
        let c = consts.int(py, k);
        e(&mut asm, "LOAD_CONST", c)?;
        e(&mut asm, "BINARY_SUBSCR", 0)?;
        e(&mut asm, "STORE_FAST", j as u32)?;
        k += 1;
    }

    // The breaking instruction itself, with what it needs just before it.
    let depth = plan.null_mask.len() as i64;
    let opcode = version.opcode(&ins.name).map_err(asm_err)?;
    let after_depth;
    let mut jump_label = None;
    match ins.op {
        Op::Call => {
            if let Some(kw) = kw_names_before(info, plan.index) {
                e(&mut asm, "KW_NAMES", kw)?;
            }
            call(&mut asm, version, ins.arg)?;
            after_depth = depth - ins.arg as i64 - 1;
        }
        Op::PopJumpIfTrue | Op::PopJumpIfFalse | Op::PopJumpIfNone | Op::PopJumpIfNotNone => {
            let l = asm.new_label();
            // 3.11 names the direction; the assembler picks it from where the label lands.
            asm.emit_jump(&ins.name, l).map_err(asm_err)?;
            jump_label = Some(l);
            after_depth = depth - 1;
        }
        _ => {
            e(&mut asm, &ins.name, ins.arg)?;
            after_depth = depth + opcode.stack_effect(ins.arg, false).map_err(asm_err)?;
        }
    }
    // Values the instruction pushes sit on top of the slots it left untouched; a NULL among
    // those would have to go into the resume function's arguments, which cannot hold one.
    let pushed = match ins.op {
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
    let untouched = (after_depth - pushed).max(0) as usize;
    if plan
        .null_mask
        .iter()
        .take(untouched.min(plan.null_mask.len()))
        .any(|&n| n)
    {
        return Err(TraceError::unsupported(
            "a graph break with a pending call below it on the stack",
        ));
    }
    if ins.name == "RAISE_VARARGS" {
        // Nothing follows a raise.
    } else {
        let next = plan.index + 1;
        resume_call(
            py,
            &mut asm,
            info,
            code,
            globals,
            &mut consts,
            next,
            after_depth as usize,
            &plan.assigned,
            tmp,
            stk,
        )?;
        if let (Some(l), Some(target)) = (jump_label, ins.target) {
            asm.bind(l).map_err(asm_err)?;
            resume_call(
                py,
                &mut asm,
                info,
                code,
                globals,
                &mut consts,
                target,
                after_depth as usize,
                &plan.assigned,
                tmp,
                stk,
            )?;
        }
    }
    let out = asm.assemble(info.firstlineno as i32).map_err(asm_err)?;
    let kw = code_fields(
        py,
        &out,
        &varnames,
        info.nargs,
        info.flags & !(CO_VARARGS | CO_VARKEYWORDS),
    )?;
    kw.set_item("co_consts", PyTuple::new(py, &consts.items)?)?;
    Ok(code.call_method("replace", (), Some(&kw))?)
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

/// Packs the `nstack` values on the stack, then returns `resume(locals..., stack...)`.
#[allow(clippy::too_many_arguments)]
fn resume_call<'py>(
    py: Python<'py>,
    asm: &mut Assembler,
    info: &CodeInfo,
    code: &Bound<'py, PyAny>,
    globals: &Bound<'py, PyAny>,
    consts: &mut Consts<'py>,
    target: usize,
    nstack: usize,
    assigned: &[usize],
    tmp: u32,
    stk: u32,
) -> Result<(), TraceError> {
    let version = asm.version();
    let e = |asm: &mut Assembler, name: &str, arg: u32| asm.emit(name, arg).map_err(asm_err);
    let resume = resume_function(py, info, code, globals, target, nstack)?;
    e(asm, "BUILD_TUPLE", nstack as u32)?;
    e(asm, "STORE_FAST", stk)?;
    e(asm, "PUSH_NULL", 0)?;
    let r = consts.add(resume);
    e(asm, "LOAD_CONST", r)?;
    let none = consts.add(py.None().into_bound(py));
    for j in 0..info.nlocals {
        if assigned.contains(&j) {
            e(asm, "LOAD_FAST", j as u32)?;
        } else {
            e(asm, "LOAD_CONST", none)?;
        }
    }
    for i in 0..nstack {
        e(asm, "LOAD_FAST", stk)?;
        let c = consts.int(py, i as i64);
        e(asm, "LOAD_CONST", c)?;
        e(asm, "BINARY_SUBSCR", 0)?;
    }
    call(asm, version, (info.nlocals + nstack) as u32)?;
    e(asm, "RETURN_VALUE", 0)?;
    let _ = tmp;
    Ok(())
}

/// Resume functions already made, by (original code, globals, target, stack depth): the same
/// resume point reuses one code object, so its compiled entries survive recompiles of the frame
/// that breaks into it. Holds the original code so its address stays unique.
type ResumeKey = (usize, usize, usize, usize);
/// (key, the original code kept alive, the resume function).
type ResumeEntry = (ResumeKey, Py<PyAny>, Py<PyAny>);
static RESUMES: std::sync::Mutex<Vec<ResumeEntry>> = std::sync::Mutex::new(Vec::new());

/// A function that continues the original code at instruction `target`, taking every local
/// of the original frame and then the `nstack` values that were on its stack.
fn resume_function<'py>(
    py: Python<'py>,
    info: &CodeInfo,
    code: &Bound<'py, PyAny>,
    globals: &Bound<'py, PyAny>,
    target: usize,
    nstack: usize,
) -> Result<Bound<'py, PyAny>, TraceError> {
    let key = (
        code.as_ptr() as usize,
        globals.as_ptr() as usize,
        target,
        nstack,
    );
    if let Ok(cache) = RESUMES.lock() {
        if let Some((_, _, f)) = cache.iter().find(|(k, _, _)| *k == key) {
            return Ok(f.bind(py).clone());
        }
    }
    let f = make_resume_function(py, info, code, globals, target, nstack)?;
    if let Ok(mut cache) = RESUMES.lock() {
        cache.push((key, code.clone().unbind(), f.clone().unbind()));
    }
    Ok(f)
}

fn make_resume_function<'py>(
    py: Python<'py>,
    info: &CodeInfo,
    code: &Bound<'py, PyAny>,
    globals: &Bound<'py, PyAny>,
    target: usize,
    nstack: usize,
) -> Result<Bound<'py, PyAny>, TraceError> {
    let version = crate::version::current(py)?;
    let line = info
        .ins
        .get(target)
        .and_then(|i| i.line)
        .unwrap_or(info.firstlineno);
    let mut asm = Assembler::new(version);
    asm.set_position(bytecode::Position::line(line as i32));
    asm.emit("RESUME", 0).map_err(asm_err)?;
    for i in 0..nstack {
        asm.emit("LOAD_FAST", (info.nlocals + i) as u32)
            .map_err(asm_err)?;
    }
    let start = asm.new_label();
    asm.emit_jump("JUMP_FORWARD", start).map_err(asm_err)?;
    let labels = asm
        .append_code(bytecode::RawCode {
            code: &info.co_code,
            exception_table: &info.exception_table,
            line_table: &info.line_table,
            first_lineno: info.firstlineno as i32,
        })
        .map_err(asm_err)?;
    asm.bind_to(start, labels[target]).map_err(asm_err)?;
    let out = asm.assemble(info.firstlineno as i32).map_err(asm_err)?;
    let mut varnames = info.varnames.clone();
    for i in 0..nstack {
        varnames.push(format!("___stack{i}"));
    }
    let name = format!("torchferro_resume_in_{}_at_{}", info.name, line);
    let kw = code_fields(
        py,
        &out,
        &varnames,
        varnames.len(),
        info.flags & !(CO_VARARGS | CO_VARKEYWORDS),
    )?;
    kw.set_item("co_name", name.as_str())?;
    kw.set_item("co_qualname", name.as_str())?;
    let new_code = code.call_method("replace", (), Some(&kw))?;
    Ok(py
        .import("types")?
        .getattr("FunctionType")?
        .call1((new_code, globals, name.as_str()))?)
}
