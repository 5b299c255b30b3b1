//! What runs on every call of a compiled entry: fetch the graph inputs from the frame's
//! arguments, run the graph with the chosen backend, and rebuild the Python return value.

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyList, PyString, PyTuple};

use fx::{Arg, Graph, NodeId, NodeKind, Target};

use crate::error::TraceError;
use crate::output::arg_to_py;
use crate::reconstruct::OutputTemplate;
use crate::source::{resolve, Scope, Source};

/// An argument slot of an eager step.
enum Slot {
    Reg(usize),
    Const(Py<PyAny>),
    Tuple(Vec<Slot>),
    List(Vec<Slot>),
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
        let mut regs: Vec<Option<Bound<'py, PyAny>>> = vec![None; self.nregs];
        for (r, v) in self.inputs.iter().zip(inputs) {
            regs[*r] = Some(v);
        }
        let mut argv: Vec<Bound<'py, PyAny>> = Vec::with_capacity(8);
        for step in &self.steps {
            argv.clear();
            for s in &step.args {
                argv.push(s.value(py, &regs)?);
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
                return Err(PyErr::fetch(py));
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
                    pyo3::exceptions::PyRuntimeError::new_err("torchferro: missing graph output")
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
        _ => {
            return Err(TraceError::unsupported(
                "a graph value inside a slice argument",
            ))
        }
    })
}

pub enum Runner {
    Eager(EagerProgram),
    /// Kernels generated by the Rust inductor.
    Inductor(Box<crate::inductor_host::InductorProgram>),
    /// What a Python backend returned for the FX GraphModule; called with the inputs.
    Python(Py<PyAny>),
}

/// A compiled graph bound to the frame layout it was traced from.
#[pyclass(frozen, module = "torchferro._C")]
pub struct CompiledGraph {
    pub inputs: Vec<Source>,
    pub nargs: usize,
    pub globals: Py<PyAny>,
    pub builtins: Py<PyAny>,
    pub runner: Runner,
    pub output: OutputTemplate,
    /// Graph outputs that are graph inputs unchanged: returned as the very input object.
    pub passthrough: Vec<(usize, usize)>,
    /// The graph switches grad mode or autocast (a `no_grad`/`autocast` region): if an op
    /// raises (or a KeyboardInterrupt lands) between the switch and its restore node, the modes
    /// are put back as eager's `with` block would leave them.
    pub switches_modes: ModeSwitches,
    /// With an inductor runner: what its functionalized graph needs around each call
    /// (aliasing outputs rebuilt, inputs sharing memory).
    pub functional: Option<crate::functional::FunctionalRun>,
}

/// Which global modes a graph switches (see [`CompiledGraph::switches_modes`]).
#[derive(Clone, Copy, Default, Debug)]
pub struct ModeSwitches {
    pub grad: bool,
    pub autocast: bool,
}

/// Grad mode and the CPU autocast state, read before a graph that switches them runs.
struct Modes<'py> {
    grad: Option<bool>,
    autocast: Option<Bound<'py, PyAny>>,
}

impl<'py> Modes<'py> {
    /// Reads only the modes the graph switches (grad mode through the guards' cached
    /// `torch.is_grad_enabled`, one call).
    fn save(py: Python<'py>, which: ModeSwitches) -> PyResult<Modes<'py>> {
        Ok(Modes {
            grad: which.grad.then(|| crate::guards::grad_enabled(py)),
            autocast: if which.autocast {
                Some(
                    py.import("torchferro._amp")?
                        .call_method1("state", ("cpu",))?,
                )
            } else {
                None
            },
        })
    }

    fn restore(&self, py: Python<'py>) -> PyResult<()> {
        if let Some(g) = self.grad {
            py.import("torch")?
                .getattr("_C")?
                .call_method1("_set_grad_enabled", (g,))?;
        }
        if let Some(a) = &self.autocast {
            let (enabled, dtype): (Bound<'py, PyAny>, Bound<'py, PyAny>) = a.extract()?;
            py.import("torchferro._amp")?
                .call_method1("set_autocast", ("cpu", enabled, dtype))?;
        }
        Ok(())
    }
}

impl CompiledGraph {
    /// Frees the memory the graph keeps between calls (see `InductorProgram::release_kept`).
    pub fn release_kept(&self) {
        if let Runner::Inductor(p) = &self.runner {
            p.release_kept();
        }
    }

    /// Runs on `argv` = the frame's argument slots followed by its closure cells, which the
    /// entry's guards have just accepted (the hook's direct call after a guard hit): compiled
    /// kernels skip re-checking the input layouts the tensor guards already compared.
    pub fn run_raw<'py>(
        &self,
        py: Python<'py>,
        argv: &[*mut ffi::PyObject],
    ) -> PyResult<Bound<'py, PyAny>> {
        crate::mode::with_hook_off(|| self.run_inner(py, argv, true))
    }

    /// `guarded`: see [`Self::run_raw`]; false for calls from Python, which anyone holding the
    /// object can make with any arguments.
    fn run_inner<'py>(
        &self,
        py: Python<'py>,
        argv: &[*mut ffi::PyObject],
        guarded: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let nargs = self.nargs.min(argv.len());
        let scope = Scope {
            locals: argv.as_ptr(),
            nlocals: nargs,
            // SAFETY: nargs <= argv.len(), so the pointer stays within (or one past) the array.
            cells: unsafe { argv.as_ptr().add(nargs) },
            ncells: argv.len() - nargs,
            globals: self.globals.as_ptr(),
            builtins: self.builtins.as_ptr(),
        };
        let mut inputs = Vec::with_capacity(self.inputs.len());
        for s in &self.inputs {
            let v = resolve(py, &scope, s).ok_or_else(|| {
                pyo3::exceptions::PyRuntimeError::new_err(format!(
                    "torchferro: graph input {s} could not be read"
                ))
            })?;
            inputs.push(v);
        }
        let kept: Vec<(usize, Bound<'py, PyAny>)> = self
            .passthrough
            .iter()
            .map(|&(o, i)| (o, inputs[i].clone()))
            .collect();
        let modes = if self.switches_modes.grad || self.switches_modes.autocast {
            Some(Modes::save(py, self.switches_modes)?)
        } else {
            None
        };
        let mut outs = match (self.run_backend(py, inputs, guarded), modes) {
            (Ok(o), _) => o,
            (Err(e), Some(m)) => {
                // The op's error is what the user sees; a failure to restore would be torch's.
                let _ = m.restore(py);
                return Err(e);
            }
            (Err(e), None) => return Err(e),
        };
        for (o, v) in kept {
            if o < outs.len() {
                outs[o] = v;
            }
        }
        self.output.build(py, &outs, &scope, &mut Vec::new())
    }

    fn run_backend<'py>(
        &self,
        py: Python<'py>,
        inputs: Vec<Bound<'py, PyAny>>,
        guarded: bool,
    ) -> PyResult<Vec<Bound<'py, PyAny>>> {
        Ok(match &self.runner {
            Runner::Eager(p) => p.run(py, inputs)?,
            Runner::Inductor(p) => match &self.functional {
                None => p.run(py, inputs, guarded)?,
                Some(f) => match f.eager_instead(py, &inputs)? {
                    Some(outs) => outs,
                    None => {
                        let mut outs = p.run(py, inputs.clone(), guarded)?;
                        f.rebuild(py, &inputs, &mut outs)?;
                        outs
                    }
                },
            },
            Runner::Python(f) => {
                let r = f.bind(py).call1(PyTuple::new(py, inputs)?)?;
                if let Ok(t) = r.cast::<PyTuple>() {
                    t.iter().collect()
                } else if let Ok(l) = r.cast::<PyList>() {
                    l.iter().collect()
                } else {
                    vec![r]
                }
            }
        })
    }
}

#[pymethods]
impl CompiledGraph {
    #[pyo3(signature = (*args))]
    fn __call__<'py>(
        &self,
        py: Python<'py>,
        args: &Bound<'py, PyTuple>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let ptrs: Vec<*mut ffi::PyObject> = args.iter().map(|a| a.as_ptr()).collect();
        // The tuple keeps every argument alive while the raw pointers are used.
        crate::mode::with_hook_off(|| self.run_inner(py, &ptrs, false))
    }
}
