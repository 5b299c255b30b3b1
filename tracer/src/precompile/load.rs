//! [`PrecompiledGraph`]: one graph of a precompiled artifact, rebuilt in a fresh process from its
//! serialized form. The eager runner replays it through torch; the inductor's lowering runs
//! again (Rust, deterministic) to rebuild the call plan, but its kernels come only from the
//! cache's libraries (`inductor::cache::with_prebuilt`): no C compiler runs, and a graph whose
//! kernels are missing is an error, never a compile.

use std::path::PathBuf;

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::{PyList, PyTuple};

use crate::backend::eager::EagerProgram;
use crate::backend::functional::{for_inductor, FunctionalRun};
use crate::backend::inductor::InductorProgram;
use crate::backend::Runner;

use super::graph_json;

/// A graph of a precompiled artifact; called with its inputs, returns its outputs as a list.
#[pyclass(frozen, module = "torchferro._C")]
pub struct PrecompiledGraph {
    runner: Runner,
    functional: Option<FunctionalRun>,
    passthrough: Vec<(usize, usize)>,
    switches_grad: bool,
}

fn err(msg: impl std::fmt::Display) -> PyErr {
    PyRuntimeError::new_err(format!("torchferro precompile: {msg}"))
}

#[pymethods]
impl PrecompiledGraph {
    /// `graph_json`: the graph as `graph_json::to_json` wrote it; `callables`: `(position, f)`
    /// for every function node; `runner`: `"eager"` or `"inductor"`; `kernel_dir`: where the
    /// cache's verified libraries are; `grad_enabled`: grad mode the graph was captured under.
    #[new]
    #[pyo3(signature = (graph_json, callables, runner, kernel_dir, grad_enabled, passthrough, functional))]
    fn new(
        py: Python<'_>,
        graph_json: &str,
        callables: Vec<(usize, Py<PyAny>)>,
        runner: &str,
        kernel_dir: Option<PathBuf>,
        grad_enabled: bool,
        passthrough: Vec<(usize, usize)>,
        functional: bool,
    ) -> PyResult<PrecompiledGraph> {
        let (graph, ids) = graph_json::from_json(graph_json).map_err(|e| err(e.0))?;
        let callables: Vec<(fx::NodeId, Py<PyAny>)> = callables
            .into_iter()
            .map(|(i, c)| {
                ids.get(i)
                    .map(|id| (*id, c))
                    .ok_or_else(|| err("a callable for a node the graph does not have"))
            })
            .collect::<PyResult<_>>()?;
        let sites = crate::traceback::Sites::default();
        let eager = |py: Python<'_>| {
            EagerProgram::new(py, &graph, &callables, &sites).map_err(|e| err(e.to_string()))
        };
        let switches_grad = graph.nodes().any(|(_, n)| {
            matches!(&n.kind, fx::NodeKind::Call { target: fx::Target::Function(p), .. }
                if p == "torch._C._set_grad_enabled")
        });
        let (runner, functional_run) = match runner {
            "eager" => (Runner::Eager(eager(py)?), None),
            "inductor" => {
                let dir = kernel_dir.ok_or_else(|| err("an inductor graph without kernels"))?;
                let fg =
                    for_inductor(py, &graph, &callables, &sites).map_err(|e| err(e.to_string()))?;
                let (g, c) = match &fg {
                    Some(f) => (&f.graph, &f.callables[..]),
                    None => (&graph, &callables[..]),
                };
                let built = inductor::cache::with_prebuilt(&dir, || {
                    InductorProgram::try_new(g, c, grad_enabled)
                });
                let mut p = match built {
                    Ok(Some(p)) => p,
                    Ok(None) => return Err(err("the graph no longer lowers to the inductor")),
                    Err(why) => {
                        return Err(err(format!(
                            "the inductor graph could not be rebuilt: {why}"
                        )))
                    }
                };
                let f = fg
                    .map(|f| (f.outputs, f.run))
                    .filter(|(n, r)| !r.is_trivial(*n))
                    .map(|(_, r)| r);
                if f.is_some() != functional {
                    return Err(err(
                        "the functionalized graph differs from the captured one",
                    ));
                }
                if f.is_none() && !crate::backend::reruns_differ(&graph) {
                    p.set_eager_errors(eager(py)?);
                }
                (Runner::Inductor(Box::new(p)), f)
            }
            other => return Err(err(format!("runner {other} cannot be loaded"))),
        };
        Ok(PrecompiledGraph {
            runner,
            functional: functional_run,
            passthrough,
            switches_grad,
        })
    }

    /// Runs the graph on `inputs` (in placeholder order); returns its outputs.
    #[pyo3(signature = (*inputs))]
    fn __call__<'py>(
        &self,
        py: Python<'py>,
        inputs: &Bound<'py, PyTuple>,
    ) -> PyResult<Bound<'py, PyList>> {
        let inputs: Vec<Bound<'py, PyAny>> = inputs.iter().collect();
        let kept: Vec<(usize, Bound<'py, PyAny>)> = self
            .passthrough
            .iter()
            .filter_map(|&(o, i)| inputs.get(i).map(|v| (o, v.clone())))
            .collect();
        let grad = self.switches_grad.then(|| crate::guards::grad_enabled(py));
        let run = crate::mode::with_hook_off(|| -> PyResult<Vec<Bound<'py, PyAny>>> {
            Ok(match &self.runner {
                Runner::Eager(p) => p.run(py, inputs)?,
                Runner::Inductor(p) => match &self.functional {
                    None => p.run(py, inputs, false)?,
                    Some(f) => match f.eager_instead(py, &inputs)? {
                        Some(outs) => outs,
                        None => {
                            let mut outs = p.run(py, inputs.clone(), false)?;
                            f.rebuild(py, &inputs, &mut outs)?;
                            outs
                        }
                    },
                },
                Runner::Python(_) => return Err(err("a Python backend graph cannot be loaded")),
            })
        });
        let mut outs = match run {
            Ok(o) => o,
            Err(e) => {
                if let Some(g) = grad {
                    // The op's error is what the user sees, as in `runtime.rs`.
                    let _ = py
                        .import("torch")
                        .and_then(|t| t.getattr("_C")?.call_method1("_set_grad_enabled", (g,)));
                }
                return Err(e);
            }
        };
        for (o, v) in kept {
            if o < outs.len() {
                outs[o] = v;
            }
        }
        PyList::new(py, outs)
    }
}
