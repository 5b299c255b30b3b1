//! Training graphs compiled forward and backward (issue 17): a graph whose inputs require grad
//! is functionalized (`functional::for_inductor`), differentiated in Rust
//! (`fx::autodiff::joint`), its forward runs on the inductor (or the eager runner for
//! `backend="aot_eager"`) inside one `torch.autograd.Function` (`python/torchferro/_aot.py`),
//! and its backward graph is compiled on the first `.backward()` from the layouts the forward
//! actually produced. Parameters stay leaves: the Function returns their gradients and autograd
//! accumulates `.grad` as in eager.
//!
//! Around the Function, as AOTAutograd does: inputs the graph writes get their new values copied
//! in after it (`_aot.apply`, with eager's version-counter bumps), and outputs that alias an input
//! or another output are rebuilt as views of their base, so autograd records the views
//! (`AotProgram::run`). See `docs/training.md`.
//!
//! What this does not handle runs the traced graph on the eager runner (torch records autograd
//! per op, correct by construction) and the `aot` log says why: an op without a derivative rule,
//! an `out=` write under `no_grad` to a tensor that requires grad, a backward that reads a value
//! a `no_grad` write overwrote (eager raises), an output that is not a tensor.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Instant;

use pyo3::prelude::*;
use pyo3::types::{PyList, PyTuple};

use fx::autodiff::{self, Joint, Saved};
use fx::{Graph, NodeId, NodeKind, Target, TensorMeta};

use super::eager::EagerProgram;
use super::inductor::InductorProgram;
use crate::code::CodeInfo;
use crate::error::TraceError;

/// One compiled half: the inductor's kernels or the eager runner.
enum Half {
    Eager(EagerProgram),
    Inductor(Box<InductorProgram>),
}

impl Half {
    /// `free_outputs`: output positions only the backward reads (see
    /// `inductor::Options::free_outputs`).
    fn build(
        py: Python<'_>,
        graph: &Graph,
        callables: &[(NodeId, Py<PyAny>)],
        inductor: bool,
        what: &str,
        name: &str,
        free_outputs: Vec<usize>,
    ) -> Result<Half, TraceError> {
        if inductor {
            match InductorProgram::try_new_with(graph, callables, false, free_outputs) {
                Ok(Some(p)) => {
                    let reasons = p.fallback_reasons();
                    if !reasons.is_empty() {
                        tracing::info!(target: "torchferro::aot", "aot: {name}: {what}: {} op(s) run through torch: {}", reasons.len(), reasons.join("; "));
                    }
                    tracing::debug!(target: "torchferro::aot", "aot: {name}: {what} kernels:\n{}", p.source());
                    return Ok(Half::Inductor(Box::new(p)));
                }
                Ok(None) => {}
                Err(why) => {
                    tracing::info!(target: "torchferro::aot", "aot: {name}: {what} runs on the eager runner: {why}");
                }
            }
        }
        Ok(Half::Eager(EagerProgram::new(
            py,
            graph,
            callables,
            &crate::traceback::Sites::default(),
        )?))
    }

    fn release_kept(&self) {
        if let Half::Inductor(p) = self {
            p.release_kept();
        }
    }

    fn run<'py>(
        &self,
        py: Python<'py>,
        inputs: Vec<Bound<'py, PyAny>>,
    ) -> PyResult<Vec<Bound<'py, PyAny>>> {
        match self {
            Half::Eager(p) => p.run(py, inputs),
            Half::Inductor(p) => p.run(py, inputs, false),
        }
    }
}

/// The backward, compiled on first use (one per set of absent tangents).
struct Backward {
    half: Half,
    /// The saved values it reads, as positions in the forward's saved list (all of them, in
    /// order, when every tangent is present).
    pick: Option<Vec<usize>>,
    /// For each input of `layout[3]`, its gradient's position among this backward's outputs;
    /// `None` in a backward for absent tangents where no gradient reaches that input (an input
    /// the graph returns as itself gets its gradient only through that output, outside the
    /// Function). `None` when every input of `layout[3]` gets one, in order.
    spread: Option<Vec<Option<usize>>>,
}

/// The compiled backwards of a graph by the positions of their absent tangents.
type Backwards = HashMap<Vec<usize>, std::sync::Arc<Backward>>;

/// A compiled training graph: what `_aot.Compiled.apply` calls.
#[pyclass(frozen, module = "torchferro._C")]
pub struct AotCore {
    forward: Half,
    /// The functional graph the joint was derived from (the backward is derived again on first
    /// use, with the saved values' real layouts).
    graph: Graph,
    requires_grad: Vec<bool>,
    /// In-place writes under `no_grad` to tensors that carry a gradient (`autodiff::writes`).
    kept: autodiff::writes::Kept,
    inductor: bool,
    name: String,
    backward: Mutex<Backwards>,
    /// The forward's partition (`Joint::recompute_set`): a backward for absent tangents
    /// recomputes the same values.
    recompute: std::collections::HashSet<NodeId>,
    /// (user outputs, differentiable outputs, saved values as (0: input / 1: forward output,
    /// index), inputs that get a gradient, number of inputs, inputs written in place as (index,
    /// writes in the traced graph, written only under `no_grad`: copied in outside autograd),
    /// inputs and outputs whose versions `.backward()` checks as (0: input / 1: user output,
    /// index): those eager's backward would have saved, `autodiff::watch`; positions in the
    /// saved values of those saved as a copy taken at the call).
    /// The last `len(layout[5])` user outputs are the written inputs' new values, in that order.
    #[pyo3(get)]
    layout: Py<PyTuple>,
    /// Forward node of each saved value, in the backward's input order after the tangents.
    saved_nodes: Vec<NodeId>,
    differentiable: usize,
    /// The forward graph's callables (recomputed ops in the backward call the same).
    forward_callables: Vec<(NodeId, Py<PyAny>)>,
    /// The traced graph on the eager runner, with the user's frames: a forward that fails is
    /// run again there, so the error is eager's own (message and traceback), as for inference
    /// graphs. Only where the failed run left nothing visible and a rerun draws nothing new: no
    /// input is written and no op is random.
    eager_errors: Option<EagerProgram>,
}

#[pymethods]
impl AotCore {
    /// Runs the forward: the user outputs, then the saved values that are not inputs.
    fn forward<'py>(
        &self,
        py: Python<'py>,
        inputs: Vec<Bound<'py, PyAny>>,
    ) -> PyResult<Vec<Bound<'py, PyAny>>> {
        let Some(eager) = &self.eager_errors else {
            return self.forward.run(py, inputs);
        };
        let again = inputs.clone();
        match self.forward.run(py, inputs) {
            Err(e) if e.is_instance_of::<pyo3::exceptions::PyException>(py) => {
                // Eager's error where eager raises one; ours where only the kernels failed.
                eager.run(py, again).and(Err(e))
            }
            r => r,
        }
    }

    /// Runs the backward on the saved values and the output tangents: one gradient per input
    /// of `layout[3]`. `absent`: positions (among the differentiable outputs) whose tangent is
    /// `None` (an output nothing used), left out of `tangents`. Compiled on the first call for
    /// each set of absent tangents. `None` where the backward without them would read a value
    /// the forward did not save (the caller then passes zeros).
    #[pyo3(signature = (saved, tangents, absent = Vec::new()))]
    fn backward<'py>(
        &self,
        py: Python<'py>,
        saved: Vec<Bound<'py, PyAny>>,
        tangents: Vec<Bound<'py, PyAny>>,
        absent: Vec<usize>,
    ) -> PyResult<Option<Vec<Bound<'py, PyAny>>>> {
        let existing = self
            .backward
            .lock()
            .ok()
            .and_then(|b| b.get(&absent).cloned());
        let bw = match existing {
            Some(b) => b,
            None => {
                let t0 = Instant::now();
                let Some(b) = self.compile_backward(py, &saved, &tangents, &absent)? else {
                    return Ok(None);
                };
                let b = std::sync::Arc::new(b);
                let ms = t0.elapsed().as_secs_f64() * 1e3;
                tracing::info!(target: "torchferro::aot", "aot: {}: backward compiled in {ms:.1} ms ({} absent tangents)", self.name, absent.len());
                if let Ok(mut slot) = self.backward.lock() {
                    slot.insert(absent, b.clone());
                }
                b
            }
        };
        let mut inputs = tangents;
        match &bw.pick {
            None => inputs.extend(saved),
            Some(pick) => inputs.extend(pick.iter().map(|&i| saved[i].clone())),
        }
        let computed = bw.half.run(py, inputs)?;
        Ok(Some(match &bw.spread {
            None => computed,
            Some(spread) => spread
                .iter()
                .map(|k| match k {
                    Some(k) => computed[*k].clone(),
                    None => py.None().into_bound(py),
                })
                .collect(),
        }))
    }
}

/// A tensor's metadata read from the live tensor.
fn live_meta(t: &Bound<'_, PyAny>) -> PyResult<Option<TensorMeta>> {
    Ok(crate::output::tensor_meta_of(t.py(), t).ok())
}

impl AotCore {
    fn release_kept(&self) {
        self.forward.release_kept();
        let backwards: Vec<_> = self
            .backward
            .lock()
            .map(|b| b.values().cloned().collect())
            .unwrap_or_default();
        for b in backwards {
            b.half.release_kept();
        }
    }

    fn compile_backward(
        &self,
        py: Python<'_>,
        saved: &[Bound<'_, PyAny>],
        tangents: &[Bound<'_, PyAny>],
        absent: &[usize],
    ) -> PyResult<Option<Backward>> {
        let mut overrides = HashMap::new();
        for (n, t) in self.saved_nodes.iter().zip(saved) {
            if let Some(m) = live_meta(t)? {
                overrides.insert(*n, m);
            }
        }
        let mut tmetas = HashMap::new();
        let present = (0..self.differentiable).filter(|k| !absent.contains(k));
        for (k, t) in present.zip(tangents) {
            if let Some(m) = live_meta(t)? {
                tmetas.insert(k, m);
            }
        }
        let err = |e: autodiff::AutodiffError| {
            pyo3::exceptions::PyRuntimeError::new_err(format!("torchferro aot: {e}"))
        };
        let (joint, pick) = if absent.is_empty() {
            let joint = autodiff::joint_with(
                &self.graph,
                &self.requires_grad,
                &overrides,
                &tmetas,
                self.inductor,
                &self.kept,
            )
            .map_err(err)?;
            (joint, None)
        } else {
            let joint = autodiff::joint_without_tangents(
                &self.graph,
                &self.requires_grad,
                &overrides,
                &tmetas,
                self.inductor,
                &self.kept,
                &absent.iter().copied().collect(),
                &self.recompute,
            )
            .map_err(err)?;
            let pick: Option<Vec<usize>> = joint
                .saved_nodes
                .iter()
                .map(|n| self.saved_nodes.iter().position(|m| m == n))
                .collect();
            let Some(pick) = pick else {
                tracing::info!(target: "torchferro::aot", "aot: {}: the backward without {} tangent(s) reads a value the forward did not save; zeros are passed instead", self.name, absent.len());
                return Ok(None);
            };
            (joint, Some(pick))
        };
        let all: Vec<usize> = self.layout.bind(py).get_item(3)?.extract()?;
        let spread = (joint.grad_inputs != all).then(|| {
            all.iter()
                .map(|i| joint.grad_inputs.iter().position(|j| j == i))
                .collect()
        });
        let mut callables = Vec::new();
        for (id, n) in joint.backward.nodes() {
            if let NodeKind::Call {
                target: Target::Function(path),
                ..
            } = &n.kind
            {
                // A recomputed forward op calls what the forward called (the traced path may
                // not be importable: `torch.gelu` is `torch._C._nn.gelu`).
                let known = joint
                    .recomputed_from
                    .iter()
                    .find(|(b, _)| *b == id)
                    .and_then(|(_, f)| self.forward_callables.iter().find(|(k, _)| k == f))
                    .map(|(_, c)| c.clone_ref(py));
                let c = match known {
                    Some(c) => c,
                    None => super::functional::resolve_path(py, path)?.unbind(),
                };
                callables.push((id, c));
            }
        }
        tracing::debug!(target: "torchferro::aot", "aot: {}: backward graph:\n{}", self.name, joint.backward.python_code("backward"));
        let half = Half::build(
            py,
            &joint.backward,
            &callables,
            self.inductor,
            "backward",
            &self.name,
            Vec::new(),
        )
        .map_err(|e| pyo3::exceptions::PyRuntimeError::new_err(e.to_string()))?;
        Ok(Some(Backward { half, pick, spread }))
    }
}

/// The runner of a training graph.
pub struct AotProgram {
    core: Py<AotCore>,
    apply: Py<PyAny>,
    /// What a call of the functional graph needs around it: outputs that alias an input or
    /// another output are rebuilt as views of their base *outside* the `autograd.Function`
    /// (autograd then records the view as eager does), and two inputs sharing a storage in a
    /// graph that writes an input run the traced graph on the eager runner.
    run: super::functional::FunctionalRun,
    /// `run` has nothing to do.
    trivial: bool,
    /// (output, input): graph outputs that are an input object itself in eager (`return x`),
    /// handed back as that object rather than the Function's output (a new view of it).
    identities: Vec<(usize, usize)>,
    /// Grad mode as the traced code leaves it (a graph that ends inside a `no_grad` block):
    /// the forward ran without the switches, so it is set after the call.
    grad_mode_at_end: bool,
}

impl AotProgram {
    pub fn run<'py>(
        &self,
        py: Python<'py>,
        inputs: Vec<Bound<'py, PyAny>>,
    ) -> PyResult<Vec<Bound<'py, PyAny>>> {
        if !self.trivial {
            if let Some(outs) = self.run.eager_instead(py, &inputs)? {
                return Ok(outs);
            }
        }
        let mut args = vec![self.core.bind(py).clone().into_any()];
        args.extend(inputs.iter().cloned());
        let r = self.apply.bind(py).call1(PyTuple::new(py, args)?)?;
        let mut outs: Vec<Bound<'py, PyAny>> = r.extract()?;
        for &(o, i) in &self.identities {
            outs[o] = inputs[i].clone();
        }
        if !self.trivial {
            self.run.rebuild(py, &inputs, &mut outs)?;
        }
        if !self.grad_mode_at_end {
            py.import("torch")?
                .getattr("_C")?
                .call_method1("_set_grad_enabled", (false,))?;
        }
        Ok(outs)
    }

    /// Frees what the compiled forward and backward keep between calls (their inductor
    /// workspaces), as `CompiledGraph::release_kept` does for an inference graph: run when the
    /// compiled function or module that made the graph is freed. The kernels stay with the
    /// cache entry; autograd graphs still alive keep the core and allocate again if run.
    pub fn release_kept(&self) {
        self.core.get().release_kept();
    }
}

/// Why a training graph runs through torch's autograd instead (logged and counted).
fn fallback(py: Python<'_>, info: &Origin, why: &str) -> PyResult<()> {
    tracing::info!(target: "torchferro::aot", "aot: {} ({}:{}): the graph runs through torch's autograd on the eager runner: {why}", info.name, info.filename, info.firstlineno);
    py.import("torchferro._aot")?
        .call_method1("note_fallback", (why,))?;
    Ok(())
}

/// Whether CUDA training graphs take the compiled path (on unless `TORCHFERRO_AOT_CUDA=0`, read
/// at each compile), as torch.compile compiles CUDA training. Opt-in until session 33: a GPT-2
/// 124M bf16 step ran 2.65x slower than eager in session 15; in session 32 (H100) it ran 2.0x
/// faster than eager (33.65 against 67.53 ms; torch.compile 31.29) and resnet50's bf16 step
/// level with torch.compile (docs/cuda.md), with the CUDA set passing with it on.
fn cuda_training_enabled() -> bool {
    std::env::var("TORCHFERRO_AOT_CUDA").map_or(true, |v| v != "0")
}

/// Whether a graph needs the training path: grad mode on and an input that requires grad.
/// Ops that only write such inputs under `no_grad` (an optimizer's update) need no gradient:
/// the graph is an inference graph (`fx::autodiff::modes::differentiates`).
pub fn wants_grad(py: Python<'_>, graph: &Graph) -> bool {
    if !crate::guards::grad_enabled(py) {
        return false;
    }
    let requires_grad: Vec<bool> = graph
        .placeholders()
        .iter()
        .map(|&p| graph.node(p).meta.tensor().is_some_and(|t| t.requires_grad))
        .collect();
    requires_grad.iter().any(|&r| r) && fx::autodiff::modes::differentiates(graph, &requires_grad)
}

/// An inference graph (not [`wants_grad`]) entered in grad mode whose inputs require grad and
/// whose grad-mode switches only bracket its work under `no_grad` (an optimizer's traced
/// update: `set_grad_enabled(False)` ... `set_grad_enabled(True)`): the graph without the
/// switches, for the inductor. Nothing in it carries a gradient, and it ends in the mode it
/// started in, so dropping the switches changes no value and no mode the caller sees.
pub fn without_no_grad_switches(py: Python<'_>, graph: &Graph) -> Option<Graph> {
    no_grad_switches_dropped(graph, crate::guards::grad_enabled(py))
}

/// [`without_no_grad_switches`] for a graph entered with grad mode `grad_enabled`: a
/// precompiled graph is rebuilt in the mode it was captured in, not the loader's, so that it
/// lowers to the very kernels the capture compiled.
pub fn no_grad_switches_dropped(graph: &Graph, grad_enabled: bool) -> Option<Graph> {
    if !grad_enabled {
        return None;
    }
    let requires_grad: Vec<bool> = graph
        .placeholders()
        .iter()
        .map(|&p| graph.node(p).meta.tensor().is_some_and(|t| t.requires_grad))
        .collect();
    let (_, switches, at_end) = fx::autodiff::modes::grad_mode_regions(graph);
    if switches.is_empty()
        || !at_end
        || !requires_grad.iter().any(|&r| r)
        || fx::autodiff::modes::differentiates(graph, &requires_grad)
    {
        return None;
    }
    let mut g = graph.clone();
    for s in switches {
        g.remove(s);
    }
    Some(g)
}

/// Where a training graph comes from, for the `aot` log.
#[derive(Clone)]
pub struct Origin {
    pub name: String,
    pub filename: String,
    pub firstlineno: u32,
}

impl Origin {
    pub fn of(info: &CodeInfo) -> Origin {
        Origin {
            name: info.name.clone(),
            filename: info.filename.clone(),
            firstlineno: info.firstlineno,
        }
    }
}

/// The training program of `output`'s graph, or `None` to run it on the eager runner.
pub fn build(
    py: Python<'_>,
    info: &CodeInfo,
    output: &crate::output::OutputGraph,
    inductor: bool,
) -> Result<Option<AotProgram>, TraceError> {
    build_parts(
        py,
        &Origin::of(info),
        &output.graph,
        &output.callables,
        &output.sites,
        inductor,
    )
}

/// [`build`] of a traced graph, its callables and their user frames (a dynamic graph's
/// specialization to one assignment of its sizes, `aot_dynamic`).
pub fn build_parts(
    py: Python<'_>,
    info: &Origin,
    graph: &Graph,
    traced_callables: &[(NodeId, Py<PyAny>)],
    sites: &crate::traceback::Sites,
    inductor: bool,
) -> Result<Option<AotProgram>, TraceError> {
    // Autocast regions become explicit casts (`autodiff::autocast`): the graph then means the
    // same without autocast, and its backward runs in the dtypes eager's does. Both halves of
    // such a graph run on the eager runner (as `aot_eager`): the inductor computes fused 16-bit
    // pointwise work in float32 and rounds once, where eager rounds after every op, and an
    // autocast graph keeps eager's values (as the inference path keeps it on the eager runner).
    let had_autocast = autodiff::autocast::has_autocast(graph);
    let inductor = inductor && !had_autocast;
    let cast;
    let graph = if had_autocast {
        match autodiff::autocast::explicit_casts(graph) {
            Ok(g) => {
                cast = g;
                &cast
            }
            Err(why) => {
                fallback(py, info, &format!("autocast: {why}"))?;
                return Ok(None);
            }
        }
    } else {
        graph
    };
    for (_, n) in graph.nodes() {
        if let NodeKind::Call { target, .. } = &n.kind {
            // Grad-mode regions are part of the joint (`autodiff::modes`).
            if target.name() == autodiff::modes::SET_GRAD_ENABLED {
                continue;
            }
            if fx::ops::is_effect(target) || target.name().starts_with("torchferro.") {
                fallback(
                    py,
                    info,
                    &format!("{} (an effect or mode switch in the graph)", target.name()),
                )?;
                return Ok(None);
            }
        }
        // CPU and CUDA graphs are differentiated alike; each half then goes where its tensors
        // are (`InductorProgram::try_new` picks the CPU or the CUDA inductor, or the eager
        // runner where CUDA cannot run); CUDA unless `TORCHFERRO_AOT_CUDA=0`. Other devices
        // keep torch's autograd.
        if let Some(t) = n.meta.tensor() {
            let cuda_on = t.device.kind == "cuda" && cuda_training_enabled();
            if t.device.kind != "cpu" && !cuda_on {
                fallback(py, info, &format!("a tensor on {}", t.device))?;
                return Ok(None);
            }
        }
    }
    let traced_requires_grad: Vec<bool> = graph
        .placeholders()
        .iter()
        .map(|&p| graph.node(p).meta.tensor().is_some_and(|t| t.requires_grad))
        .collect();
    if let Some(why) = autodiff::modes::no_grad_write(graph, &traced_requires_grad) {
        fallback(py, info, &why)?;
        return Ok(None);
    }
    // The functional graph (`functional::for_inductor`: canonical, no op writes a tensor,
    // written inputs get one `copy_` at the end, outputs that alias an input or another
    // output are listed to be rebuilt as views). The write-backs are taken out of the graph:
    // their values become extra forward outputs, copied into the inputs after the
    // `autograd.Function` ran (`_aot.apply`), as AOTAutograd applies input mutations.
    let Some(functional) = super::functional::for_inductor(py, graph, traced_callables, sites)?
    else {
        fallback(
            py,
            info,
            "the graph writes a tensor in a way functionalization does not model",
        )?;
        return Ok(None);
    };
    let mut fgraph = functional.graph.clone();
    let mutated = functional.mutated_inputs.clone();
    let Some(out_id) = fgraph.output_node() else {
        fallback(py, info, "a graph without an output")?;
        return Ok(None);
    };
    let mut values = match &fgraph.node(out_id).kind {
        NodeKind::Output { values } => values.clone(),
        _ => unreachable!(),
    };
    let fg_outputs = values.len();
    {
        let placeholders = fgraph.placeholders();
        let mut new_values: Vec<(usize, fx::Arg)> = Vec::new();
        let copies: Vec<NodeId> = fgraph
            .nodes()
            .filter_map(|(id, n)| match &n.kind {
                NodeKind::Call {
                    target: Target::Method(m),
                    args,
                    ..
                } if m == "copy_" => match args.first() {
                    Some(fx::Arg::Node(p)) if placeholders.contains(p) => {
                        let NodeKind::Placeholder { index } = fgraph.node(*p).kind else {
                            return None;
                        };
                        (mutated.contains(&index) && fgraph.users(id).is_empty())
                            .then(|| (id, index, args.get(1).cloned()))
                    }
                    _ => None,
                },
                _ => None,
            })
            .map(|(id, index, v)| {
                if let Some(v) = v {
                    new_values.push((index, v));
                }
                id
            })
            .collect();
        for id in copies {
            fgraph.remove(id);
        }
        for &i in &mutated {
            match new_values.iter().find(|(k, _)| *k == i) {
                Some((_, v)) => values.push(v.clone()),
                None => {
                    fallback(
                        py,
                        info,
                        "an input write the functional graph does not expose",
                    )?;
                    return Ok(None);
                }
            }
        }
        fgraph.set_output_values(out_id, values.clone());
    }
    // One target per op again: out-of-place twins of in-place ops keep their traced spelling.
    let canon = fx::passes::canonicalize::canonicalize(&fgraph);
    let retargeted = canon.retargeted.clone();
    let fgraph = canon.graph;
    // Writes under `no_grad` to tensors that carry a gradient keep the tensor's history.
    let off = autodiff::modes::grad_mode_regions(&fgraph).0;
    let kept = autodiff::writes::candidates(&fgraph, &off, &functional.writes);
    let placeholders = fgraph.placeholders();
    let keeps_history: Vec<bool> = mutated
        .iter()
        .zip(&values[fg_outputs..])
        .map(|(&i, v)| match v {
            fx::Arg::Node(n) => autodiff::writes::only_kept_writes(&kept, placeholders[i], *n),
            _ => false,
        })
        .collect();
    let mut requires_grad = Vec::new();
    for p in fgraph.placeholders() {
        let n = fgraph.node(p);
        requires_grad.push(n.meta.tensor().is_some_and(|t| t.requires_grad));
    }
    for v in &values[..fg_outputs] {
        let tensor = matches!(v, fx::Arg::Node(n) if fgraph.node(*n).meta.tensor().is_some());
        if !tensor {
            fallback(py, info, "a graph output that is not a tensor")?;
            return Ok(None);
        }
    }
    let identities: Vec<(usize, usize)> = values[..fg_outputs]
        .iter()
        .enumerate()
        .filter_map(|(o, v)| match v {
            fx::Arg::Node(n) => match fgraph.node(*n).kind {
                NodeKind::Placeholder { index } => Some((o, index)),
                _ => None,
            },
            _ => None,
        })
        .collect();
    let t0 = Instant::now();
    let joint: Joint = match autodiff::joint_with(
        &fgraph,
        &requires_grad,
        &HashMap::new(),
        &HashMap::new(),
        inductor,
        &kept,
    ) {
        Ok(j) => j,
        Err(e) => {
            fallback(py, info, &e.to_string())?;
            return Ok(None);
        }
    };
    if !kept.is_empty() {
        let needs = autodiff::writes::needs_keeping(&fgraph, &requires_grad, &off, &kept);
        let why = autodiff::writes::reads_overwritten(&fgraph, &kept, &needs, &joint);
        if let Some(why) = why {
            fallback(py, info, &why)?;
            return Ok(None);
        }
    }
    // A value eager's backward keeps that a later in-place write of the graph replaced (in grad
    // mode too; a `no_grad` one is named above): eager raises at `.backward()`, which torch's
    // autograd over the traced graph reproduces.
    let overwritten = &functional.overwritten;
    let kept_by = &joint.eager_kept_by;
    let stale = autodiff::watch::kept_then_overwritten(
        &joint.forward,
        kept_by,
        overwritten,
        &functional.writes,
    );
    if let Some(why) = stale {
        fallback(py, info, &why)?;
        return Ok(None);
    }
    // Written inputs eager's backward keeps, at the version it keeps (`watch::written_kept`):
    // `_aot` saves the input itself at that version, so a later write raises as in eager.
    let kept_version =
        autodiff::watch::written_kept(&joint.eager_roots, &functional.input_versions);
    // One kept at a version before the graph's own last write of it: eager's `.backward()` is
    // certain to raise, after its nodes before the keeping one accumulated their gradients.
    let mutated_writes = (&mutated[..], &functional.input_writes[..]);
    if let Some(why) = autodiff::watch::kept_input_overwritten(&kept_version, mutated_writes) {
        fallback(py, info, &why)?;
        return Ok(None);
    }
    let derive_ms = t0.elapsed().as_secs_f64() * 1e3;
    // A written input whose new value carries a gradient (`x.add_(1)` on an input that requires
    // grad, `buf.copy_(x * w)`): the new value is a differentiable output of the Function and
    // `_aot.apply` copies it in with grad mode on, so autograd records the write (the input's
    // history then runs through the Function, as eager's in-place op rebased it).
    let mut callables: Vec<(NodeId, Py<PyAny>)> = Vec::new();
    for (id, n) in joint.forward.nodes() {
        if let NodeKind::Call {
            target: Target::Function(path),
            ..
        } = &n.kind
        {
            let c = if retargeted.contains(&id) || joint.rewritten.contains(&id) {
                super::functional::resolve_path(py, path)?.unbind()
            } else {
                match functional.callables.iter().rev().find(|(k, _)| *k == id) {
                    Some((_, c)) => c.clone_ref(py),
                    None => super::functional::resolve_path(py, path)?.unbind(),
                }
            };
            callables.push((id, c));
        }
    }
    // Values only the backward reads keep the layout the forward's kernels give them (a
    // padded-row buffer on CUDA is not copied out to eager's dense strides): the backward is
    // derived from the layouts the saved tensors come in.
    let saved_only: Vec<usize> = joint
        .saved
        .iter()
        .filter_map(|s| match s {
            Saved::Output(j) if *j >= joint.user_outputs => Some(*j),
            _ => None,
        })
        .collect();
    let forward = Half::build(
        py,
        &joint.forward,
        &callables,
        inductor,
        "forward",
        &info.name,
        saved_only,
    )?;
    let saved_nodes: Vec<NodeId> = {
        // The backward's saved inputs in order: forward nodes.
        let placeholders = fgraph.placeholders();
        let NodeKind::Output { values } = &joint
            .forward
            .node(joint.forward.output_node().unwrap())
            .kind
        else {
            unreachable!()
        };
        joint
            .saved
            .iter()
            .map(|s| match s {
                Saved::Input(i) => placeholders[*i],
                Saved::Output(j) => match &values[*j] {
                    fx::Arg::Node(n) => *n,
                    _ => unreachable!(),
                },
            })
            .collect()
    };
    let saved = PyList::empty(py);
    for s in &joint.saved {
        let t = match s {
            Saved::Input(i) => (0usize, *i),
            Saved::Output(j) => (1usize, *j),
        };
        saved.append(t)?;
    }
    // Inputs and outputs eager's backward would have saved: their versions are checked at
    // `.backward()` (`autodiff::watch`). A written input is left out here: `_aot.apply` writes
    // it after the Function, and the backward reads the copy saved before that write; its
    // version is checked through `kept_version` below, at the version eager's backward kept.
    let watched: Vec<(usize, usize)> = joint
        .watched_inputs
        .iter()
        .filter(|&&i| !mutated.contains(&i))
        .map(|&i| (0, i))
        .chain(joint.watched_outputs.iter().map(|&k| (1, k)))
        .collect();
    // Inputs that require grad but get no gradient through an op of the graph (read under
    // `no_grad` or through `detach()`, or only handed back as they are: a loss of an earlier
    // graph passed through a graph break): `_aot.apply` hands them to the Function detached.
    // As an input of the Function such a tensor is an edge of its node that eager's graph does
    // not have: the engine runs the tensor's own node with no gradient, which frees what that
    // node saved (a GAN's `fake`, read through `detach()` by the discriminator's loss, could
    // no longer be differentiated after `ld.backward()`).
    let unlinked: Vec<usize> = fgraph
        .placeholders()
        .into_iter()
        .filter_map(|p| match fgraph.node(p).kind {
            NodeKind::Placeholder { index } => Some((p, index)),
            _ => None,
        })
        .filter(|&(p, index)| {
            let linked = joint.grad_inputs.contains(&index)
                && fgraph.users(p).iter().any(|&u| {
                    let n = fgraph.node(u);
                    // A call whose result carries a gradient (a tuple: assumed to).
                    matches!(n.kind, NodeKind::Call { .. })
                        && n.meta.tensor().is_none_or(|t| t.requires_grad)
                });
            requires_grad.get(index).copied().unwrap_or(false) && !linked
        })
        .map(|(_, index)| index)
        .collect();
    // Backward components of the differentiable outputs (`autodiff::components`): one autograd
    // node each. An output that is an input itself is handed back as the input object
    // (`identities`): its node's output is dropped, so it joins another component rather than
    // make a node of its own.
    let identity = |o: usize| identities.iter().any(|&(io, _)| io == o);
    let shared_part = joint
        .differentiable
        .iter()
        .zip(&joint.components)
        .find(|(&o, _)| !identity(o))
        .map(|(_, &c)| c);
    let parts: Vec<usize> = joint
        .differentiable
        .iter()
        .zip(&joint.components)
        .map(|(&o, &c)| match shared_part {
            Some(p) if identity(o) => p,
            _ => c,
        })
        .collect();
    let layout = PyTuple::new(
        py,
        [
            joint.user_outputs.into_pyobject(py)?.into_any(),
            PyList::new(py, &joint.differentiable)?.into_any(),
            saved.into_any(),
            PyList::new(py, &joint.grad_inputs)?.into_any(),
            requires_grad.len().into_pyobject(py)?.into_any(),
            PyList::new(
                py,
                mutated
                    .iter()
                    .zip(&functional.input_writes)
                    .zip(&keeps_history)
                    .map(|((&i, &w), &k)| (i, w, k, kept_version.get(&i).copied())),
            )?
            .into_any(),
            PyList::new(py, watched)?.into_any(),
            PyList::new(
                py,
                joint
                    .copied
                    .iter()
                    .enumerate()
                    .filter_map(|(k, &c)| c.then_some(k)),
            )?
            .into_any(),
            PyList::new(py, parts)?.into_any(),
            PyList::new(py, unlinked)?.into_any(),
        ],
    )?;
    tracing::info!(
        target: "torchferro::aot",
        "aot: {} ({}:{}): forward {} ops, backward {} ops derived in {derive_ms:.2} ms; {} saved values, {} bytes of activations saved for backward, {} values recomputed",
        info.name,
        info.filename,
        info.firstlineno,
        joint.forward.op_count(),
        joint.backward.op_count(),
        joint.saved.len(),
        joint.saved_bytes,
        joint.recomputed
    );
    let aot = py.import("torchferro._aot")?;
    aot.call_method1("note_compiled", (joint.saved_bytes,))?;
    let core = AotCore {
        forward,
        graph: fgraph,
        requires_grad,
        kept,
        inductor,
        name: info.name.clone(),
        backward: Mutex::new(HashMap::new()),
        recompute: joint.recompute_set.clone(),
        layout: layout.unbind(),
        saved_nodes,
        differentiable: joint.differentiable.len(),
        forward_callables: callables,
        eager_errors: if mutated.is_empty() && !super::reruns_differ(graph) {
            Some(EagerProgram::new(py, graph, traced_callables, sites)?)
        } else {
            None
        },
    };
    let run = functional.run;
    Ok(Some(AotProgram {
        core: Py::new(py, core)?,
        apply: aot.getattr("apply")?.unbind(),
        trivial: run.is_trivial(fg_outputs),
        identities,
        run,
        grad_mode_at_end: joint.grad_mode_at_end,
    }))
}
