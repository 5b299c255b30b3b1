//! What runs on every call of a compiled entry: fetch the graph inputs from the frame's
//! arguments, run the graph with the chosen backend, and rebuild the Python return value.

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::PyTuple;

use crate::backend::Runner;
use crate::reconstruct::OutputTemplate;
use crate::source::{Scope, Source};

mod inputs;
pub use inputs::InputTree;

/// A compiled graph bound to the frame layout it was traced from.
#[pyclass(frozen, module = "torchferro._C")]
pub struct CompiledGraph {
    pub inputs: Vec<Source>,
    /// `inputs` merged into a trie: what a call walks to fetch them (see [`InputTree`]).
    pub input_tree: InputTree,
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
    pub functional: Option<crate::backend::functional::FunctionalRun>,
    /// The traced graph, kept only while a precompile capture records (`crate::precompile`).
    pub recorded: Option<Box<crate::precompile::Recorded>>,
}

/// Which global modes a graph switches (see [`CompiledGraph::switches_modes`]).
#[derive(Clone, Copy, Default, Debug)]
pub struct ModeSwitches {
    pub grad: bool,
    pub autocast: bool,
    pub inference: bool,
}

/// Grad mode and the autocast state of the traced devices, read before a graph that switches
/// them runs.
struct Modes<'py> {
    grad: Option<bool>,
    autocast: Option<Bound<'py, PyAny>>,
    /// How many inference-mode levels `torchferro._amp` held before the graph ran.
    inference_depth: Option<usize>,
}

impl<'py> Modes<'py> {
    /// Reads only the modes the graph switches (grad mode through the guards' cached
    /// `torch.is_grad_enabled`, one call).
    fn save(py: Python<'py>, which: ModeSwitches) -> PyResult<Modes<'py>> {
        Ok(Modes {
            grad: which.grad.then(|| crate::guards::grad_enabled(py)),
            autocast: if which.autocast {
                Some(py.import("torchferro._amp")?.call_method0("save_states")?)
            } else {
                None
            },
            inference_depth: if which.inference {
                Some(
                    py.import("torchferro._amp")?
                        .call_method0("inference_depth")?
                        .extract()?,
                )
            } else {
                None
            },
        })
    }

    fn restore(&self, py: Python<'py>) -> PyResult<()> {
        // The levels restore the grad mode they found: left first, then the saved modes set.
        if let Some(depth) = self.inference_depth {
            py.import("torchferro._amp")?
                .call_method1("unwind_inference", (depth,))?;
        }
        if let Some(g) = self.grad {
            py.import("torch")?
                .getattr("_C")?
                .call_method1("_set_grad_enabled", (g,))?;
        }
        if let Some(a) = &self.autocast {
            py.import("torchferro._amp")?
                .call_method1("restore_states", (a,))?;
        }
        Ok(())
    }
}

impl CompiledGraph {
    /// Frees the memory the graph keeps between calls (see `InductorProgram::release_kept`).
    pub fn release_kept(&self) {
        match &self.runner {
            Runner::Inductor(p) => p.release_kept(),
            // A training graph's compiled forward and backward keep workspaces too.
            Runner::Aot(p) => p.release_kept(),
            Runner::Eager(_) | Runner::Python(_) => {}
        }
    }

    /// Runs on `argv` = the frame's argument slots followed by its closure cells, which the
    /// entry's guards have just accepted (the hook's direct call after a guard hit): compiled
    /// kernels skip re-checking the input layouts the tensor guards already compared.
    /// `fetched`: the graph inputs, as the guard check that accepted `argv` fetched them on
    /// its walk (`GuardTree::check_fetching`); `None`: read them here.
    pub fn run_raw<'py>(
        &self,
        py: Python<'py>,
        argv: &[*mut ffi::PyObject],
        fetched: Option<&[Py<PyAny>]>,
    ) -> PyResult<Bound<'py, PyAny>> {
        crate::mode::with_hook_off(|| self.run_inner(py, argv, fetched, true))
    }

    /// `guarded`: see [`Self::run_raw`]; false for calls from Python, which anyone holding the
    /// object can make with any arguments.
    fn run_inner<'py>(
        &self,
        py: Python<'py>,
        argv: &[*mut ffi::PyObject],
        fetched: Option<&[Py<PyAny>]>,
        guarded: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let scope = Scope::from_argv(
            argv,
            self.nargs,
            self.globals.as_ptr(),
            self.builtins.as_ptr(),
        );
        let inputs = match fetched {
            Some(f) if f.len() == self.inputs.len() => {
                f.iter().map(|v| v.bind(py).clone()).collect::<Vec<_>>()
            }
            _ => self.input_tree.fetch(py, &scope).map_err(|i| {
                pyo3::exceptions::PyRuntimeError::new_err(format!(
                    "torchferro: graph input {} could not be read",
                    self.inputs[i]
                ))
            })?,
        };
        let kept: Vec<(usize, Bound<'py, PyAny>)> = self
            .passthrough
            .iter()
            .map(|&(o, i)| (o, inputs[i].clone()))
            .collect();
        let modes = if self.switches_modes.grad
            || self.switches_modes.autocast
            || self.switches_modes.inference
        {
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
                        f.bump_versions(py, &inputs)?;
                        outs
                    }
                },
            },
            Runner::Python(p) => p.run(py, inputs)?,
            Runner::Aot(p) => p.run(py, inputs)?,
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
        crate::mode::with_hook_off(|| self.run_inner(py, &ptrs, None, false))
    }
}
