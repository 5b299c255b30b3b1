//! Deriving a training graph: its autocast regions written out as casts, the gates (effects,
//! devices, `out=` writes under `no_grad`), the functional graph with its input write-backs
//! taken out as extra outputs, the joint graph (`fx::autodiff::joint_with`), and the version
//! checks whose failure eager raises at `.backward()`. What passes goes to [`super::handoff`];
//! what does not runs through torch's autograd ([`super::log::fallback`] says why).

use std::collections::HashMap;
use std::time::Instant;

use pyo3::prelude::*;

use fx::autodiff::{self, Joint};
use fx::{Graph, NodeId, NodeKind, Target};

use super::handoff::{self, Derived, Traced};
use super::log::{fallback, Origin};
use super::policy::cuda_training_enabled;
use super::program::AotProgram;
use crate::code::CodeInfo;
use crate::error::TraceError;

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
    let Some(functional) =
        crate::backend::functional::for_inductor(py, graph, traced_callables, sites)?
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
    let derived = Derived {
        joint,
        graph: fgraph,
        functional,
        retargeted,
        mutated,
        keeps_history,
        kept,
        kept_version,
        requires_grad,
        identities,
        fg_outputs,
        derive_ms,
        inductor,
    };
    let traced = Traced {
        graph,
        callables: traced_callables,
        sites,
    };
    handoff::program(py, info, traced, derived).map(Some)
}
