//! The eager backend: the graph replayed as a straight list of torch calls over registers, in
//! graph order (also the fallback of the other backends, and the runner of empty graphs).

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyList, PyString, PyTuple};

use fx::{Arg, Graph, NodeId, NodeKind, Target};

use crate::error::TraceError;
use crate::output::arg_to_py;

/// An argument slot of an eager step.
enum Slot {
    Reg(usize),
    Const(Py<PyAny>),
    Tuple(Vec<Slot>),
    List(Vec<Slot>),
    /// `slice(a, b, c)` with a graph value among its bounds (a symbolic size: dynamic shapes).
    Slice(Box<[Slot; 3]>),
}

impl Slot {
    fn value<'py>(
        &self,
        py: Python<'py>,
        regs: &[Option<Bound<'py, PyAny>>],
    ) -> PyResult<Bound<'py, PyAny>> {
        Ok(match self {
            Slot::Reg(r) => regs[*r].clone().ok_or_else(|| {
                pyo3::exceptions::PyRuntimeError::new_err(
                    "torchferro: a graph value was freed too early",
                )
            })?,
            Slot::Const(c) => c.bind(py).clone(),
            Slot::Tuple(items) => PyTuple::new(
                py,
                items
                    .iter()
                    .map(|s| s.value(py, regs))
                    .collect::<PyResult<Vec<_>>>()?,
            )?
            .into_any(),
            Slot::List(items) => PyList::new(
                py,
                items
                    .iter()
                    .map(|s| s.value(py, regs))
                    .collect::<PyResult<Vec<_>>>()?,
            )?
            .into_any(),
            Slot::Slice(parts) => py.get_type::<pyo3::types::PySlice>().call1((
                parts[0].value(py, regs)?,
                parts[1].value(py, regs)?,
                parts[2].value(py, regs)?,
            ))?,
        })
    }
}

enum Callee {
    Function(Py<PyAny>),
    Method(Py<PyString>),
}

struct Step {
    callee: Callee,
    args: Vec<Slot>,
    kwnames: Option<Py<PyTuple>>,
    out: usize,
    /// Registers whose last use is this step: freed right after it, so memory is released as
    /// early as eager would.
    free: Vec<usize>,
    /// The user's frames that made this op: added to the traceback of an error it raises.
    site: Option<crate::traceback::UserStack>,
}

/// The `eager` backend: the graph's torch calls, replayed from Rust.
pub struct EagerProgram {
    nregs: usize,
    inputs: Vec<usize>,
    steps: Vec<Step>,
    outputs: Vec<usize>,
}

impl EagerProgram {
    pub fn new(
        py: Python<'_>,
        graph: &Graph,
        callables: &[(NodeId, Py<PyAny>)],
        sites: &crate::traceback::Sites,
    ) -> Result<EagerProgram, TraceError> {
        let mut reg_of = std::collections::HashMap::new();
        for (i, (id, _)) in graph.nodes().enumerate() {
            reg_of.insert(id, i);
        }
        let mut inputs = Vec::new();
        let mut steps = Vec::new();
        let mut outputs = Vec::new();
        let mut last_use = std::collections::HashMap::new();
        for (id, node) in graph.nodes() {
            let r = reg_of[&id];
            match &node.kind {
                NodeKind::Placeholder { .. } => inputs.push(r),
                NodeKind::Call {
                    target,
                    args,
                    kwargs,
                } => {
                    let callee = match target {
                        Target::Function(_) => Callee::Function(
                            // The latest registration: a node removed while tracing frees
                            // its id for a later node, and its stale entry stays earlier.
                            callables
                                .iter()
                                .rev()
                                .find(|(n, _)| *n == id)
                                .map(|(_, c)| c.clone_ref(py))
                                .ok_or_else(|| {
                                    TraceError::internal("a function node without its callable")
                                })?,
                        ),
                        Target::Method(m) => Callee::Method(PyString::intern(py, m).unbind()),
                    };
                    let mut slots = Vec::new();
                    for a in args {
                        slots.push(slot(py, a, &reg_of)?);
                    }
                    let mut names = Vec::new();
                    for (k, a) in kwargs {
                        names.push(k.clone());
                        slots.push(slot(py, a, &reg_of)?);
                    }
                    let kwnames = if names.is_empty() {
                        None
                    } else {
                        Some(PyTuple::new(py, names)?.unbind())
                    };
                    let mut used = Vec::new();
                    args.iter()
                        .chain(kwargs.iter().map(|(_, a)| a))
                        .for_each(|a| a.nodes(&mut used));
                    for u in used {
                        last_use.insert(reg_of[&u], steps.len());
                    }
                    steps.push(Step {
                        callee,
                        args: slots,
                        kwnames,
                        out: r,
                        free: Vec::new(),
                        site: sites.of(id),
                    });
                }
                NodeKind::Output { values } => {
                    for v in values {
                        match v {
                            Arg::Node(n) => outputs.push(reg_of[n]),
                            _ => return Err(TraceError::internal("a non-node graph output")),
                        }
                    }
                }
            }
        }
        for (reg, step) in last_use {
            if !outputs.contains(&reg) {
                steps[step].free.push(reg);
            }
        }
        Ok(EagerProgram {
            nregs: reg_of.len(),
            inputs,
            steps,
            outputs,
        })
    }

    pub(crate) fn run<'py>(
        &self,
        py: Python<'py>,
        inputs: Vec<Bound<'py, PyAny>>,
    ) -> PyResult<Vec<Bound<'py, PyAny>>> {
        self.run_steps(py, inputs).map_err(|(e, step)| {
            match step.and_then(|s| self.steps[s].site.as_ref()) {
                Some(site) => crate::traceback::add_user_frames(py, e, site),
                None => e,
            }
        })
    }

    /// Runs the graph to find where it raises: the error and the user frames of the op that
    /// raised it (`None` if it ran through). For a backend whose own error names no op.
    pub(crate) fn failing_site<'py>(
        &self,
        py: Python<'py>,
        inputs: Vec<Bound<'py, PyAny>>,
    ) -> Option<(PyErr, Option<crate::traceback::UserStack>)> {
        match self.run_steps(py, inputs) {
            Ok(_) => None,
            Err((e, step)) => Some((e, step.and_then(|s| self.steps[s].site.clone()))),
        }
    }

    /// Runs the steps; an error comes with the index of the step that raised.
    fn run_steps<'py>(
        &self,
        py: Python<'py>,
        inputs: Vec<Bound<'py, PyAny>>,
    ) -> Result<Vec<Bound<'py, PyAny>>, (PyErr, Option<usize>)> {
        let mut regs: Vec<Option<Bound<'py, PyAny>>> = vec![None; self.nregs];
        for (r, v) in self.inputs.iter().zip(inputs) {
            regs[*r] = Some(v);
        }
        let mut argv: Vec<Bound<'py, PyAny>> = Vec::with_capacity(8);
        for (i, step) in self.steps.iter().enumerate() {
            argv.clear();
            for s in &step.args {
                argv.push(s.value(py, &regs).map_err(|e| (e, None))?);
            }
            let nkw = step.kwnames.as_ref().map(|k| k.bind(py).len()).unwrap_or(0);
            let npos = argv.len() - nkw;
            let ptrs: Vec<*mut ffi::PyObject> = argv.iter().map(|a| a.as_ptr()).collect();
            let kwnames = step
                .kwnames
                .as_ref()
                .map(|k| k.as_ptr())
                .unwrap_or(std::ptr::null_mut());
            // SAFETY: `ptrs` borrows objects kept alive by `argv` for the duration of the call;
            // vectorcall does not steal references and returns a new reference or NULL.
            let r = unsafe {
                match &step.callee {
                    Callee::Function(f) => {
                        ffi::PyObject_Vectorcall(f.as_ptr(), ptrs.as_ptr(), npos, kwnames)
                    }
                    Callee::Method(name) => ffi::PyObject_VectorcallMethod(
                        name.as_ptr(),
                        ptrs.as_ptr(),
                        npos | ffi::PY_VECTORCALL_ARGUMENTS_OFFSET,
                        kwnames,
                    ),
                }
            };
            if r.is_null() {
                return Err((PyErr::fetch(py), Some(i)));
            }
            // SAFETY: a new reference returned by vectorcall.
            regs[step.out] = Some(unsafe { Bound::from_owned_ptr(py, r) });
            for f in &step.free {
                regs[*f] = None;
            }
        }
        self.outputs
            .iter()
            .map(|r| {
                regs[*r].clone().ok_or_else(|| {
                    (
                        pyo3::exceptions::PyRuntimeError::new_err(
                            "torchferro: missing graph output",
                        ),
                        None,
                    )
                })
            })
            .collect()
    }
}

fn slot(
    py: Python<'_>,
    a: &Arg,
    reg_of: &std::collections::HashMap<NodeId, usize>,
) -> Result<Slot, TraceError> {
    let mut nodes = Vec::new();
    a.nodes(&mut nodes);
    if nodes.is_empty() {
        let v = arg_to_py(py, a, &mut |_, _| {
            Err(TraceError::internal("no nodes here"))
        })?;
        return Ok(Slot::Const(v.unbind()));
    }
    Ok(match a {
        Arg::Node(n) => Slot::Reg(reg_of[n]),
        Arg::Tuple(items) => Slot::Tuple(
            items
                .iter()
                .map(|i| slot(py, i, reg_of))
                .collect::<Result<_, _>>()?,
        ),
        Arg::List(items) => Slot::List(
            items
                .iter()
                .map(|i| slot(py, i, reg_of))
                .collect::<Result<_, _>>()?,
        ),
        Arg::Slice(a, b, c) => Slot::Slice(Box::new([
            slot(py, a, reg_of)?,
            slot(py, b, reg_of)?,
            slot(py, c, reg_of)?,
        ])),
        _ => {
            return Err(TraceError::unsupported(
                "a graph value inside this argument",
            ))
        }
    })
}
