//! The partition handed to the runtime: the forward half compiled (its callables resolved),
//! the saved values named by forward node, and the layout tuple `python/torchferro/_aot.py`
//! reads (which outputs are differentiable, what is saved, which inputs get gradients, the
//! written inputs and their versions, what `.backward()` checks, the backward components).

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;

use pyo3::prelude::*;
use pyo3::types::{PyList, PyTuple};

use fx::autodiff::{self, Joint, Saved};
use fx::{Graph, NodeId, NodeKind, Target};

use super::core::AotCore;
use super::half::Half;
use super::log::Origin;
use super::program::AotProgram;
use crate::backend::eager::EagerProgram;
use crate::backend::functional::FunctionalGraph;
use crate::error::TraceError;

/// The traced graph a training program was derived from: a forward that fails is run again
/// there, so the error is eager's own ([`AotCore`]'s `eager_errors`).
pub(super) struct Traced<'a> {
    pub graph: &'a Graph,
    pub callables: &'a [(NodeId, Py<PyAny>)],
    pub sites: &'a crate::traceback::Sites,
}

/// What [`super::build`] derived from it.
pub(super) struct Derived {
    pub joint: Joint,
    /// The functional graph the joint was derived from (canonical, write-backs taken out).
    pub graph: Graph,
    pub functional: FunctionalGraph,
    /// Nodes `canonicalize` gave another target (their callables are resolved anew).
    pub retargeted: HashSet<NodeId>,
    /// Inputs the graph writes, and whether each write keeps the input's history (only kept
    /// writes under `no_grad`: copied in outside autograd).
    pub mutated: Vec<usize>,
    pub keeps_history: Vec<bool>,
    pub kept: autodiff::writes::Kept,
    /// Written inputs eager's backward keeps, at the version it keeps (`watch::written_kept`).
    pub kept_version: HashMap<usize, u32>,
    pub requires_grad: Vec<bool>,
    /// (output, input): outputs that are an input object itself.
    pub identities: Vec<(usize, usize)>,
    /// The functional graph's own outputs (the written inputs' new values follow).
    pub fg_outputs: usize,
    pub derive_ms: f64,
    pub inductor: bool,
}

/// The training program of a derived graph.
pub(super) fn program(
    py: Python<'_>,
    info: &Origin,
    traced: Traced<'_>,
    d: Derived,
) -> Result<AotProgram, TraceError> {
    let Traced {
        graph,
        callables: traced_callables,
        sites,
    } = traced;
    // A written input whose new value carries a gradient (`x.add_(1)` on an input that requires
    // grad, `buf.copy_(x * w)`): the new value is a differentiable output of the Function and
    // `_aot.apply` copies it in with grad mode on, so autograd records the write (the input's
    // history then runs through the Function, as eager's in-place op rebased it).
    let mut callables: Vec<(NodeId, Py<PyAny>)> = Vec::new();
    for (id, n) in d.joint.forward.nodes() {
        if let NodeKind::Call {
            target: Target::Function(path),
            ..
        } = &n.kind
        {
            let c = if d.retargeted.contains(&id) || d.joint.rewritten.contains(&id) {
                crate::backend::functional::resolve_path(py, path)?.unbind()
            } else {
                match d.functional.callables.iter().rev().find(|(k, _)| *k == id) {
                    Some((_, c)) => c.clone_ref(py),
                    None => crate::backend::functional::resolve_path(py, path)?.unbind(),
                }
            };
            callables.push((id, c));
        }
    }
    // Values only the backward reads keep the layout the forward's kernels give them (a
    // padded-row buffer on CUDA is not copied out to eager's dense strides): the backward is
    // derived from the layouts the saved tensors come in.
    let saved_only: Vec<usize> = d
        .joint
        .saved
        .iter()
        .filter_map(|s| match s {
            Saved::Output(j) if *j >= d.joint.user_outputs => Some(*j),
            _ => None,
        })
        .collect();
    let forward = Half::build(
        py,
        &d.joint.forward,
        &callables,
        d.inductor,
        "forward",
        &info.name,
        saved_only,
    )?;
    let saved_nodes: Vec<NodeId> = {
        // The backward's saved inputs in order: forward nodes.
        let placeholders = d.graph.placeholders();
        let NodeKind::Output { values } = &d
            .joint
            .forward
            .node(d.joint.forward.output_node().unwrap())
            .kind
        else {
            unreachable!()
        };
        d.joint
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
    for s in &d.joint.saved {
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
    let watched: Vec<(usize, usize)> = d
        .joint
        .watched_inputs
        .iter()
        .filter(|&&i| !d.mutated.contains(&i))
        .map(|&i| (0, i))
        .chain(d.joint.watched_outputs.iter().map(|&k| (1, k)))
        .collect();
    // Inputs that require grad but get no gradient through an op of the graph (read under
    // `no_grad` or through `detach()`, or only handed back as they are: a loss of an earlier
    // graph passed through a graph break): `_aot.apply` hands them to the Function detached.
    // As an input of the Function such a tensor is an edge of its node that eager's graph does
    // not have: the engine runs the tensor's own node with no gradient, which frees what that
    // node saved (a GAN's `fake`, read through `detach()` by the discriminator's loss, could
    // no longer be differentiated after `ld.backward()`).
    let unlinked: Vec<usize> = d
        .graph
        .placeholders()
        .into_iter()
        .filter_map(|p| match d.graph.node(p).kind {
            NodeKind::Placeholder { index } => Some((p, index)),
            _ => None,
        })
        .filter(|&(p, index)| {
            let linked = d.joint.grad_inputs.contains(&index)
                && d.graph.users(p).iter().any(|&u| {
                    let n = d.graph.node(u);
                    // A call whose result carries a gradient (a tuple: assumed to).
                    matches!(n.kind, NodeKind::Call { .. })
                        && n.meta.tensor().is_none_or(|t| t.requires_grad)
                });
            d.requires_grad.get(index).copied().unwrap_or(false) && !linked
        })
        .map(|(_, index)| index)
        .collect();
    // Backward components of the differentiable outputs (`autodiff::components`): one autograd
    // node each. An output that is an input itself is handed back as the input object
    // (`identities`): its node's output is dropped, so it joins another component rather than
    // make a node of its own.
    let identity = |o: usize| d.identities.iter().any(|&(io, _)| io == o);
    let shared_part = d
        .joint
        .differentiable
        .iter()
        .zip(&d.joint.components)
        .find(|(&o, _)| !identity(o))
        .map(|(_, &c)| c);
    let parts: Vec<usize> = d
        .joint
        .differentiable
        .iter()
        .zip(&d.joint.components)
        .map(|(&o, &c)| match shared_part {
            Some(p) if identity(o) => p,
            _ => c,
        })
        .collect();
    let layout = PyTuple::new(
        py,
        [
            d.joint.user_outputs.into_pyobject(py)?.into_any(),
            PyList::new(py, &d.joint.differentiable)?.into_any(),
            saved.into_any(),
            PyList::new(py, &d.joint.grad_inputs)?.into_any(),
            d.requires_grad.len().into_pyobject(py)?.into_any(),
            PyList::new(
                py,
                d.mutated
                    .iter()
                    .zip(&d.functional.input_writes)
                    .zip(&d.keeps_history)
                    .map(|((&i, &w), &k)| (i, w, k, d.kept_version.get(&i).copied())),
            )?
            .into_any(),
            PyList::new(py, watched)?.into_any(),
            PyList::new(
                py,
                d.joint
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
        d.joint.forward.op_count(),
        d.joint.backward.op_count(),
        d.joint.saved.len(),
        d.joint.saved_bytes,
        d.joint.recomputed,
        derive_ms = d.derive_ms
    );
    let aot = py.import("torchferro._aot")?;
    aot.call_method1("note_compiled", (d.joint.saved_bytes,))?;
    let core = AotCore {
        forward,
        graph: d.graph,
        requires_grad: d.requires_grad,
        kept: d.kept,
        inductor: d.inductor,
        name: info.name.clone(),
        backward: Mutex::new(HashMap::new()),
        recompute: d.joint.recompute_set.clone(),
        layout: layout.unbind(),
        saved_nodes,
        differentiable: d.joint.differentiable.len(),
        forward_callables: callables,
        eager_errors: if d.mutated.is_empty() && !crate::backend::reruns_differ(graph) {
            Some(EagerProgram::new(py, graph, traced_callables, sites)?)
        } else {
            None
        },
    };
    let run = d.functional.run;
    Ok(AotProgram {
        core: Py::new(py, core)?,
        apply: aot.getattr("apply")?.unbind(),
        trivial: run.is_trivial(d.fg_outputs),
        identities: d.identities,
        run,
        grad_mode_at_end: d.joint.grad_mode_at_end,
    })
}
