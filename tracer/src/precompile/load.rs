//! [`PrecompiledGraph`]: one graph of a precompiled artifact, rebuilt in a fresh process from its
//! serialized form. The eager runner replays it through torch; the inductor's lowering runs
//! again (Rust, deterministic) to rebuild the call plan, but its kernels come only from the
//! library bytes the loader verified against the cache's manifest
//! (`inductor::cache::with_prebuilt`, which opens a sealed copy of those very bytes): no C
//! compiler runs, and a graph whose kernels are missing is an error, never a compile. A
//! symbolic graph (issue 18: one library, the sizes as arguments) is rebuilt the same way at
//! the capture's sizes and serves every size in range; one that cannot be rebuilt on its
//! library replays torch's calls instead (its replay serves every size too).

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyTuple};

use crate::backend::aot::no_grad_switches_dropped;
use crate::backend::eager::EagerProgram;
use crate::backend::functional::{for_inductor, FunctionalRun};
use crate::backend::inductor::dynamic::SymbolicExport;
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

/// The member's `symbolic` field: a dynamic graph whose kernels take the size symbols as
/// arguments, as `[hints, [[min, max or null], ...]]` per symbol id (`None`: a static graph).
fn symbolic_sizes(meta: &serde_json::Value) -> PyResult<Option<SymbolicExport>> {
    let Some(v) = meta.get("symbolic").filter(|v| !v.is_null()) else {
        return Ok(None);
    };
    let bad = || err("a malformed symbolic field");
    let [hints, bounds] = v.as_array().map(|a| a.as_slice()).ok_or_else(bad)? else {
        return Err(bad());
    };
    let hints = hints
        .as_array()
        .ok_or_else(bad)?
        .iter()
        .map(|h| h.as_i64().ok_or_else(bad))
        .collect::<PyResult<Vec<_>>>()?;
    let bounds = bounds
        .as_array()
        .ok_or_else(bad)?
        .iter()
        .map(|b| match b.as_array().map(|a| a.as_slice()) {
            Some([lo, hi]) => Ok((
                lo.as_i64().ok_or_else(bad)?,
                if hi.is_null() {
                    None
                } else {
                    Some(hi.as_i64().ok_or_else(bad)?)
                },
            )),
            _ => Err(bad()),
        })
        .collect::<PyResult<Vec<_>>>()?;
    if hints.len() != bounds.len() {
        return Err(bad());
    }
    Ok(Some(SymbolicExport { hints, bounds }))
}

#[pymethods]
impl PrecompiledGraph {
    /// `member`: a cache's `graphs/graph_N.json` (verified by the caller): `graph` (the graph
    /// as `graph_json::to_json` wrote it), `runner` (`"eager"` or `"inductor"`),
    /// `grad_enabled` (grad mode at capture), `passthrough`, `functional`, `symbolic` (a
    /// dynamic inductor graph: the capture's first sizes and the symbols' ranges, see
    /// `symbolic_sizes`); `callables`: `(position, f)` for every function node; `kernels`:
    /// `(file name, bytes)` of the cache's libraries this graph may use, already checked against the manifest (what is loaded is
    /// these bytes, never a second read of the cache's files).
    #[new]
    #[pyo3(signature = (member, callables, kernels))]
    fn new(
        py: Python<'_>,
        member: &str,
        callables: Vec<(usize, Py<PyAny>)>,
        kernels: Option<Vec<(String, Bound<'_, PyBytes>)>>,
    ) -> PyResult<PrecompiledGraph> {
        let meta: serde_json::Value = serde_json::from_str(member)
            .map_err(|e| err(format!("a malformed graph member: {e}")))?;
        let field = |k: &str| {
            meta.get(k)
                .ok_or_else(|| err(format!("the graph member has no {k}")))
        };
        let graph_json = field("graph")?
            .as_str()
            .ok_or_else(|| err("graph is not text"))?;
        let runner = field("runner")?
            .as_str()
            .ok_or_else(|| err("runner is not text"))?;
        let grad_enabled = field("grad_enabled")?.as_bool().unwrap_or(true);
        let functional = field("functional")?.as_bool().unwrap_or(false);
        let passthrough: Vec<(usize, usize)> = field("passthrough")?
            .as_array()
            .ok_or_else(|| err("passthrough is not a list"))?
            .iter()
            .map(|p| match p.as_array().map(|a| a.as_slice()) {
                Some([o, i]) => match (o.as_u64(), i.as_u64()) {
                    (Some(o), Some(i)) => Ok((o as usize, i as usize)),
                    _ => Err(err("a malformed passthrough pair")),
                },
                _ => Err(err("a malformed passthrough pair")),
            })
            .collect::<PyResult<_>>()?;
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
                let libs = kernels.ok_or_else(|| err("an inductor graph without kernels"))?;
                let libs = inductor::cache::Prebuilt::new(
                    libs.into_iter().map(|(n, b)| (n, b.as_bytes().to_vec())),
                );
                // As the live build (`backend::build`): an update made under `no_grad` of
                // inputs that require grad (an EMA, an optimizer step) was compiled without its
                // grad-mode switches; rebuilt with them it would not lower (an input that
                // requires grad in grad mode), and the load failed.
                let stripped = no_grad_switches_dropped(&graph, grad_enabled);
                let grad_enabled = stripped.is_none() && grad_enabled;
                let traced = stripped.as_ref().unwrap_or(&graph);
                let fg =
                    for_inductor(py, traced, &callables, &sites).map_err(|e| err(e.to_string()))?;
                let (g, c) = match &fg {
                    Some(f) => (&f.graph, &f.callables[..]),
                    None => (traced, &callables[..]),
                };
                let symbolic = symbolic_sizes(&meta)?;
                let built = inductor::cache::with_prebuilt(libs, || match &symbolic {
                    Some(s) => {
                        InductorProgram::try_new_symbolic_prebuilt(g, c, grad_enabled, s).map(Some)
                    }
                    None => InductorProgram::try_new(g, c, grad_enabled),
                });
                let mut p = match built {
                    Ok(Some(p)) => p,
                    // A symbolic graph has a replay that serves every size (what the cache held
                    // for it before its kernels were kept): a library this process cannot
                    // rebuild it on (another library's bytes under its name, the symbolic
                    // lowering switched off here) is never loaded, and the graph replays.
                    Err(why) if symbolic.is_some() => {
                        tracing::warn!(
                            target: "torchferro::inductor",
                            "precompile: the symbolic graph was not rebuilt on its kernels \
                             ({why}); it replays torch's calls"
                        );
                        return Ok(PrecompiledGraph {
                            runner: Runner::Eager(eager(py)?),
                            functional: None,
                            passthrough,
                            switches_grad,
                        });
                    }
                    Ok(None) => return Err(err("the graph no longer lowers to the inductor")),
                    Err(why) => {
                        return Err(err(format!(
                            "the inductor graph could not be rebuilt: {why}"
                        )))
                    }
                };
                let f = fg
                    .map(|f| (f.outputs, f.run))
                    .filter(|(n, r)| !r.is_trivial(*n) || r.writes_inputs());
                // A cache written before written inputs' version counters were moved kept no
                // run for a graph whose only work around the kernels is that move.
                let structural = f.as_ref().is_some_and(|(n, r)| !r.is_trivial(*n));
                let f = f.map(|(_, r)| r);
                if (functional && f.is_none()) || (!functional && structural) {
                    return Err(err(
                        "the functionalized graph differs from the captured one",
                    ));
                }
                if f.is_none() && !crate::backend::reruns_differ(&graph) {
                    p.set_eager_errors(eager(py)?);
                }
                if stripped.is_some() {
                    p.set_without_grad();
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

    /// What rebuilding this graph at load cost, phase by phase (`lowering`, `scheduling`,
    /// `codegen`, `cache_load`: opening the verified library), in seconds; empty for an eager
    /// graph. The load re-lowers every inductor graph to rebuild its call plan; this says how
    /// much of a load that is.
    #[getter]
    fn rebuild_times(&self) -> Vec<(&'static str, f64)> {
        match &self.runner {
            Runner::Inductor(p) => p.phase_times().phases(),
            _ => Vec::new(),
        }
    }

    /// How the loaded graph runs: `"eager"` (torch's calls replayed), `"inductor"` (the
    /// cache's kernels) or `"symbolic"` (the cache's kernels with the size symbols as
    /// arguments, for every size in range).
    #[getter]
    fn kind(&self) -> &'static str {
        match &self.runner {
            Runner::Inductor(p) if p.is_dynamic() => "symbolic",
            Runner::Inductor(_) => "inductor",
            _ => "eager",
        }
    }

    /// A symbolic graph's assignments run so far besides the capture's,
    /// `(on its kernels, on the eager runner)`; `(0, 0)` for other graphs.
    #[getter]
    fn assignments_run(&self) -> (usize, usize) {
        match &self.runner {
            Runner::Inductor(p) => p.assignments_run(),
            _ => (0, 0),
        }
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
                            f.bump_versions(py, &inputs)?;
                            outs
                        }
                    },
                },
                Runner::Python(_) => return Err(err("a Python backend graph cannot be loaded")),
                Runner::Aot(_) => {
                    return Err(err("a graph with a compiled backward cannot be loaded"))
                }
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
