//! The transformed code: what a frame runs instead of its original bytecode on a cache hit.
//!
//! For a whole-frame graph it is a trampoline, `return __compiled_graph(args..., cells...)`,
//! taking the frame's argument slots and closure cells as plain positional parameters (so a
//! function with `*args`/`**kwargs` or free variables needs no special calling convention).

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyTuple};

use bytecode::{Assembler, Version};

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
        asm.emit(name, arg).map_err(|e| TraceError::internal(format!("assembling {name}: {e}")))
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
    let kw = PyDict::new(py);
    kw.set_item("co_code", PyBytes::new(py, &out.code))?;
    kw.set_item("co_consts", PyTuple::new(py, [graph])?)?;
    kw.set_item("co_names", PyTuple::empty(py))?;
    kw.set_item("co_varnames", PyTuple::new(py, &names)?)?;
    kw.set_item("co_argcount", nparams)?;
    kw.set_item("co_posonlyargcount", 0)?;
    kw.set_item("co_kwonlyargcount", 0)?;
    kw.set_item("co_nlocals", nparams)?;
    kw.set_item("co_flags", CO_OPTIMIZED | CO_NEWLOCALS)?;
    kw.set_item("co_stacksize", out.stack_size)?;
    kw.set_item("co_freevars", PyTuple::empty(py))?;
    kw.set_item("co_cellvars", PyTuple::empty(py))?;
    kw.set_item("co_linetable", PyBytes::new(py, &out.line_table))?;
    kw.set_item("co_exceptiontable", PyBytes::new(py, &out.exception_table))?;
    Ok(code.call_method("replace", (), Some(&kw))?)
}
