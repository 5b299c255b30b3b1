//! The object a training graph's `autograd.Function` calls (`python/torchferro/_aot.py`): the
//! compiled forward, and the backward compiled on the first `.backward()` (one per set of absent
//! tangents) from the layouts the forward's saved values came in.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Instant;

use pyo3::prelude::*;
use pyo3::types::PyTuple;

use fx::autodiff;
use fx::{Graph, NodeId, NodeKind, Target, TensorMeta};

use super::half::Half;
use crate::backend::eager::EagerProgram;

/// The backward, compiled on first use (one per set of absent tangents).
pub(super) struct Backward {
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
pub(super) type Backwards = HashMap<Vec<usize>, std::sync::Arc<Backward>>;

/// A compiled training graph: what `_aot.Compiled.apply` calls.
#[pyclass(frozen, module = "torchferro._C")]
pub struct AotCore {
    pub(super) forward: Half,
    /// The functional graph the joint was derived from (the backward is derived again on first
    /// use, with the saved values' real layouts).
    pub(super) graph: Graph,
    pub(super) requires_grad: Vec<bool>,
    /// In-place writes under `no_grad` to tensors that carry a gradient (`autodiff::writes`).
    pub(super) kept: autodiff::writes::Kept,
    pub(super) inductor: bool,
    pub(super) name: String,
    pub(super) backward: Mutex<Backwards>,
    /// The forward's partition (`Joint::recompute_set`): a backward for absent tangents
    /// recomputes the same values.
    pub(super) recompute: std::collections::HashSet<NodeId>,
    /// (user outputs, differentiable outputs, saved values as (0: input / 1: forward output,
    /// index), inputs that get a gradient, number of inputs, inputs written in place as (index,
    /// writes in the traced graph, written only under `no_grad`: copied in outside autograd),
    /// inputs and outputs whose versions `.backward()` checks as (0: input / 1: user output,
    /// index): those eager's backward would have saved, `autodiff::watch`; positions in the
    /// saved values of those saved as a copy taken at the call).
    /// The last `len(layout[5])` user outputs are the written inputs' new values, in that order.
    #[pyo3(get)]
    pub(super) layout: Py<PyTuple>,
    /// Forward node of each saved value, in the backward's input order after the tangents.
    pub(super) saved_nodes: Vec<NodeId>,
    pub(super) differentiable: usize,
    /// The forward graph's callables (recomputed ops in the backward call the same).
    pub(super) forward_callables: Vec<(NodeId, Py<PyAny>)>,
    /// The traced graph on the eager runner, with the user's frames: a forward that fails is
    /// run again there, so the error is eager's own (message and traceback), as for inference
    /// graphs. Only where the failed run left nothing visible and a rerun draws nothing new: no
    /// input is written and no op is random.
    pub(super) eager_errors: Option<EagerProgram>,
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
    pub(super) fn release_kept(&self) {
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
                    None => crate::backend::functional::resolve_path(py, path)?.unbind(),
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
