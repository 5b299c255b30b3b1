//! TorchDynamo's filter before tracing a frame (its `has_tensor_in_frame`): a frame whose code
//! names no torch or numpy module among its globals and whose arguments and closure hold no
//! tensor or `nn.Module` (looked for inside exact lists, tuples, dicts and named tuples) is not
//! traced at all on this call; it runs natively. Without the filter such frames (config
//! methods that `copy.deepcopy` or `setattr` run natively after a graph break) are traced and
//! break again on the very call that broke their caller, each break a record torch.compile
//! never makes.

use std::collections::HashSet;

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyModule, PyTuple, PyType};

use crate::code::CodeInfo;
use crate::source::{resolve, Scope, Source};

/// Whether the frame may touch torch: `false` only when neither its code's global names nor
/// its argument and closure values lead to torch (see the module comment).
pub fn frame_may_use_torch(
    py: Python<'_>,
    info: &CodeInfo,
    globals: &Bound<'_, PyDict>,
    scope: &Scope,
) -> PyResult<bool> {
    may_use_torch(py, info, globals, scope, None)
}

/// [`frame_may_use_torch`] for a resume function: only the arguments its code may read count.
/// Ours take every local of the frame they continue (torch's take the live ones), so a module
/// the frame read before the break (`model.state_dict()`) would otherwise count.
pub fn resume_may_use_torch(
    py: Python<'_>,
    info: &CodeInfo,
    globals: &Bound<'_, PyDict>,
    scope: &Scope,
) -> PyResult<bool> {
    let read = slots_read(info);
    may_use_torch(py, info, globals, scope, read.as_deref())
}

/// The localsplus slots an instruction reachable from the code's entry reads (`LOAD_FAST` and
/// its forms, `LOAD_CLOSURE`, `LOAD_DEREF`), following jumps, fall-throughs and every exception
/// handler. An over-approximation of the slots live at entry (a store before the read is not
/// taken into account). `None` (every slot) where the code may read its locals by name
/// (`locals()`, `vars()`, `eval`, `exec`).
fn slots_read(info: &CodeInfo) -> Option<Vec<bool>> {
    if info
        .names
        .iter()
        .any(|n| matches!(n.as_str(), "locals" | "vars" | "eval" | "exec"))
    {
        return None;
    }
    let index_of = |offset: usize| info.ins.iter().position(|i| i.offset == offset);
    let mut todo: Vec<usize> = vec![0];
    if let Ok(entries) = bytecode::exception_table::parse(&info.exception_table) {
        todo.extend(entries.iter().filter_map(|e| index_of(e.target as usize)));
    }
    let mut seen = vec![false; info.ins.len()];
    let mut read = vec![false; info.localsplus.len()];
    while let Some(i) = todo.pop() {
        let Some(ins) = info.ins.get(i) else { continue };
        if std::mem::replace(&mut seen[i], true) {
            continue;
        }
        let name = ins.name.as_str();
        if matches!(
            name,
            "LOAD_FAST"
                | "LOAD_FAST_CHECK"
                | "LOAD_FAST_AND_CLEAR"
                | "LOAD_CLOSURE"
                | "LOAD_DEREF"
                | "LOAD_CLASSDEREF"
                | "LOAD_FROM_DICT_OR_DEREF"
        ) {
            if let Some(r) = read.get_mut(ins.arg as usize) {
                *r = true;
            }
        }
        todo.extend(ins.target);
        todo.extend(ins.loop_exit);
        let stops = matches!(
            name,
            "JUMP_FORWARD"
                | "JUMP_BACKWARD"
                | "JUMP_BACKWARD_NO_INTERRUPT"
                | "JUMP"
                | "JUMP_NO_INTERRUPT"
                | "RETURN_VALUE"
                | "RETURN_CONST"
                | "RAISE_VARARGS"
                | "RERAISE"
        );
        if !stops {
            todo.push(i + 1);
        }
    }
    Some(read)
}

fn may_use_torch(
    py: Python<'_>,
    info: &CodeInfo,
    globals: &Bound<'_, PyDict>,
    scope: &Scope,
    read: Option<&[bool]>,
) -> PyResult<bool> {
    let reads = |slot: usize| read.is_none_or(|r| r.get(slot).copied().unwrap_or(true));
    for name in &info.names {
        if let Some(v) = globals.get_item(name)? {
            if let Ok(m) = v.cast::<PyModule>() {
                let n = m.name()?.to_string();
                if is_torch_module(&n) {
                    return Ok(true);
                }
            }
        }
    }
    let torch = py.import("torch")?;
    let kinds = Kinds {
        tensor: torch.getattr("Tensor")?.cast_into::<PyType>()?,
        module: torch
            .getattr("nn")?
            .getattr("Module")?
            .cast_into::<PyType>()?,
        ndarray: numpy_types(py)?,
    };
    let mut seen = HashSet::new();
    for (i, name) in info.localsplus.iter().enumerate().take(scope.nlocals) {
        if !reads(i) {
            continue;
        }
        if let Some(v) = resolve(py, scope, &Source::local(i, name)) {
            if kinds.holds_tensor(&v, &mut seen)? {
                return Ok(true);
            }
        }
    }
    let first_free = info.localsplus.len().saturating_sub(scope.ncells);
    for j in 0..scope.ncells {
        let name = info
            .localsplus
            .get(first_free + j)
            .map_or("", String::as_str);
        if !reads(first_free + j) {
            continue;
        }
        if let Some(v) = resolve(py, scope, &Source::cell(j, name)) {
            if kinds.holds_tensor(&v, &mut seen)? {
                return Ok(true);
            }
        }
    }
    Ok(false)
}

fn is_torch_module(name: &str) -> bool {
    name == "torch" || name.starts_with("torch.") || name == "numpy" || name.starts_with("numpy.")
}

/// numpy's `ndarray` and `generic`, where numpy is already imported (never imported here).
fn numpy_types(py: Python<'_>) -> PyResult<Option<(Bound<'_, PyType>, Bound<'_, PyType>)>> {
    let modules = py.import("sys")?.getattr("modules")?;
    let Ok(np) = modules.get_item("numpy") else {
        return Ok(None);
    };
    Ok(Some((
        np.getattr("ndarray")?.cast_into::<PyType>()?,
        np.getattr("generic")?.cast_into::<PyType>()?,
    )))
}

struct Kinds<'py> {
    tensor: Bound<'py, PyType>,
    module: Bound<'py, PyType>,
    ndarray: Option<(Bound<'py, PyType>, Bound<'py, PyType>)>,
}

impl<'py> Kinds<'py> {
    fn holds_tensor(&self, v: &Bound<'py, PyAny>, seen: &mut HashSet<usize>) -> PyResult<bool> {
        if !seen.insert(v.as_ptr() as usize) {
            return Ok(false);
        }
        if v.is_instance(&self.tensor)? || v.is_instance(&self.module)? {
            return Ok(true);
        }
        if let Ok(t) = v.cast::<PyType>() {
            if t.is_subclass(&self.module)? {
                return Ok(true);
            }
        }
        if let Some((ndarray, generic)) = &self.ndarray {
            if v.get_type().is(ndarray) || v.is_instance(generic)? {
                return Ok(true);
            }
        }
        let ty = v.get_type();
        if ty.is(py_type::<PyList>(v.py())) || ty.is(py_type::<PyTuple>(v.py())) {
            for item in v.try_iter()? {
                if self.holds_tensor(&item?, seen)? {
                    return Ok(true);
                }
            }
            return Ok(false);
        }
        if ty.is(py_type::<PyDict>(v.py())) {
            let values: Vec<_> = v.cast::<PyDict>()?.values().iter().collect();
            for item in values {
                if self.holds_tensor(&item, seen)? {
                    return Ok(true);
                }
            }
            return Ok(false);
        }
        // A named tuple: a tuple subclass with `_fields`.
        if v.is_instance_of::<PyTuple>() {
            if let Ok(fields) = v.getattr("_fields") {
                for f in fields.try_iter()? {
                    let f = f?;
                    if let Ok(item) = v.getattr(f.cast::<pyo3::types::PyString>()?) {
                        if self.holds_tensor(&item, seen)? {
                            return Ok(true);
                        }
                    }
                }
            }
        }
        Ok(false)
    }
}

fn py_type<T: pyo3::type_object::PyTypeInfo>(py: Python<'_>) -> Bound<'_, PyType> {
    T::type_object(py)
}
