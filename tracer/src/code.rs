//! Static facts about a code object: names, slots, constants, raw tables and the decoded
//! instructions, read once per code object and shared by the interpreter, the resume-code
//! generator and the logs.

use pyo3::prelude::*;
use pyo3::types::PyTuple;

use crate::decode::Ins;
use crate::error::TraceError;

/// Argument slots of a code object: positional, keyword-only, *args, **kwargs.
pub fn arg_slot_count(code: &Bound<'_, PyAny>) -> PyResult<usize> {
    let flags: u32 = code.getattr("co_flags")?.extract()?;
    let argcount: usize = code.getattr("co_argcount")?.extract()?;
    let kwonly: usize = code.getattr("co_kwonlyargcount")?.extract()?;
    Ok(argcount + kwonly + usize::from(flags & 0x04 != 0) + usize::from(flags & 0x08 != 0))
}

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
    /// Number of cell variables (closures made by this code).
    pub ncells: usize,
    /// `co_cellvars`: a name that is also in `varnames` is an argument kept in a cell.
    pub cellvars: Vec<String>,
    /// `co_varnames` length: the plain locals, arguments first.
    pub nlocals: usize,
    pub varnames: Vec<String>,
    pub co_code: Vec<u8>,
    pub exception_table: Vec<u8>,
    pub line_table: Vec<u8>,
    pub flags: u32,
    pub ins: Vec<Ins>,
}

impl CodeInfo {
    pub fn from_code(py: Python<'_>, code: &Bound<'_, PyAny>) -> Result<CodeInfo, TraceError> {
        let get = |n: &str| code.getattr(n);
        let varnames: Vec<String> = get("co_varnames")?.extract()?;
        let cellvars: Vec<String> = get("co_cellvars")?.extract()?;
        let freevars: Vec<String> = get("co_freevars")?.extract()?;
        let varnames: Vec<String> = varnames;
        let mut localsplus = varnames.clone();
        for c in &cellvars {
            if !varnames.contains(c) {
                localsplus.push(c.clone());
            }
        }
        localsplus.extend(freevars.iter().cloned());
        let flags: u32 = get("co_flags")?.extract()?;
        let nargs = arg_slot_count(code)?;
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
            ncells: cellvars.len(),
            cellvars,
            nlocals: varnames.len(),
            varnames,
            co_code: get("co_code")?.extract()?,
            exception_table: get("co_exceptiontable")?.extract()?,
            line_table: get("co_linetable")?.extract()?,
            flags,
            ins: crate::decode::decode(py, code)?,
        })
    }
}

/// Names of generated resume functions start with this.
pub const RESUME_PREFIX: &str = "torchferro_resume_in_";

/// The name eager shows for a frame of code named `name`: a resume function's
/// (`torchferro_resume_in_f_at_12`, of any depth) is the function it continues.
pub fn user_function_name(name: &str) -> &str {
    let mut n = name;
    while let Some(rest) = n.strip_prefix(RESUME_PREFIX) {
        match rest.rsplit_once("_at_") {
            Some((f, line)) if !line.is_empty() && line.bytes().all(|b| b.is_ascii_digit()) => {
                n = f
            }
            _ => break,
        }
    }
    n
}
