//! In-place writes made under `no_grad` to tensors that carry a gradient (`with torch.no_grad():
//! w.mul_(0.9)`, `p.copy_(...)`, `w.div_(w.norm())`, `w[:, 0] = 0`).
//!
//! Eager changes the tensor's value but not its autograd history: later uses read the new value
//! and still differentiate into the tensor as if it had not been written (the write itself has no
//! derivative). Functionalized, the write is a new value computed under `no_grad`, which would
//! cut that path. Such a value is *kept*: it carries a gradient when the tensor it wrote does,
//! and its gradient goes to that tensor unchanged (identity), none to the write's other
//! arguments. Eager's version counter check (a value saved for backward and written afterwards
//! raises at `.backward()`) is [`reads_overwritten`]: the caller runs such a graph through
//! torch's autograd, which raises eager's error.

use std::collections::{HashMap, HashSet};

use super::rules;
use crate::graph::{Arg, Graph, NodeId, NodeKind};
use crate::meta::NodeMeta;
use crate::passes::functionalize::VIEW_SCATTER;

/// Kept writes: functional node → the value it wrote (its gradient goes there).
pub type Kept = HashMap<NodeId, NodeId>;

/// The candidate kept writes of a functional graph: nodes in a `no_grad` region (`off`) that
/// stand for an in-place write (`writes`: node → the value it wrote,
/// `functionalize::Functionalized::writes`; an `out=` write is none: the written tensor is no
/// argument of the twin), or that scatter a written view back into its base ([`VIEW_SCATTER`]).
/// [`needs_keeping`] decides which of them carry a gradient.
///
/// A write computed in a wider dtype is its twin and a cast back, both standing for the write:
/// the cast (the new value) sends its gradient to the written tensor, and the twin, read only
/// by the cast, gets none.
///
/// A write through a detached alias (`x.detach().mul_(3)`, `x.detach()[0].zero_()`) is one in
/// grad mode too: eager records nothing for it (the alias requires no grad) and `x` keeps its
/// autograd node with the new values, as under `no_grad`. Functionalized, `x`'s new value was a
/// scatter of the detached source, and the gradient through `x` was lost (session 32).
pub fn candidates(graph: &Graph, off: &HashSet<NodeId>, writes: &HashMap<NodeId, NodeId>) -> Kept {
    let mut kept = Kept::new();
    for (id, node) in graph.nodes() {
        let NodeKind::Call { target, args, .. } = &node.kind else {
            continue;
        };
        let scatter = target.name() == VIEW_SCATTER;
        let detached = scatter && args.iter().skip(2).any(is_detach_step);
        if !off.contains(&id) && !detached {
            continue;
        }
        if scatter {
            if let Some(Arg::Node(base)) = args.first() {
                kept.insert(id, *base);
            }
        } else if let Some(&w) = writes.get(&id) {
            kept.insert(id, w);
        }
    }
    kept
}

/// Whether a [`VIEW_SCATTER`] step ([`crate::passes::functionalize::step_arg`]) is `detach`.
fn is_detach_step(step: &Arg) -> bool {
    match step {
        Arg::Tuple(parts) => match parts.get(1) {
            Some(Arg::Str(name)) => name.rsplit('.').next() == Some("detach"),
            _ => false,
        },
        _ => false,
    }
}

/// Values that carry a gradient: float tensors reached from an input that requires grad by
/// ops that ran in grad mode (`no_grad`: the calls of a `no_grad` region), and kept writes
/// (`kept`) whose written tensor carries one.
pub fn needs_keeping(
    graph: &Graph,
    requires_grad: &[bool],
    no_grad: &HashSet<NodeId>,
    kept: &Kept,
) -> HashSet<NodeId> {
    let mut needs: HashSet<NodeId> = HashSet::new();
    for (id, node) in graph.nodes() {
        let float = node
            .meta
            .tensor()
            .is_some_and(|t| t.dtype.is_floating_point());
        let tuple = matches!(node.meta, NodeMeta::Tuple(_));
        let reached = match &node.kind {
            NodeKind::Placeholder { index } => requires_grad.get(*index).copied().unwrap_or(false),
            NodeKind::Call { .. } => match kept.get(&id) {
                Some(w) => needs.contains(w),
                None => !no_grad.contains(&id) && node.inputs().iter().any(|i| needs.contains(i)),
            },
            NodeKind::Output { .. } => false,
        };
        if reached && (float || tuple) && !rules::is_nondifferentiable(node) {
            needs.insert(id);
        }
    }
    needs
}

/// The tensor a kept write wrote (its gradient goes there), if `id` is a kept write that
/// carries a gradient.
pub fn written(kept: &Kept, needs: &HashSet<NodeId>, id: NodeId) -> Option<NodeId> {
    kept.get(&id).copied().filter(|_| needs.contains(&id))
}

/// Eager's version counter check: a forward value a derivative rule reads that a kept write
/// overwrote afterwards. Eager raises at `.backward()` ("modified by an inplace operation");
/// `Some` describes it for the fallback reason. What a rule reads is what the backward reads
/// other than to recompute a value (`joint.recomputed_from`), plus the recomputed values
/// themselves: a value recomputed from the old state of a written input is no error (eager
/// saved the new value; the Function saves the input as it was before the write-back).
pub fn reads_overwritten(
    graph: &Graph,
    kept: &Kept,
    needs: &HashSet<NodeId>,
    joint: &super::Joint,
) -> Option<String> {
    let overwritten: HashSet<NodeId> = kept
        .keys()
        .filter_map(|&k| written(kept, needs, k))
        .collect();
    if overwritten.is_empty() {
        return None;
    }
    let recomputing: HashSet<NodeId> = joint.recomputed_from.iter().map(|(b, _)| *b).collect();
    let bw_inputs = joint.backward.placeholders();
    let tangents = joint.differentiable.len();
    let saved = joint
        .saved_nodes
        .iter()
        .enumerate()
        .filter_map(|(k, &f)| bw_inputs.get(tangents + k).map(|&b| (b, f)));
    let read: Vec<NodeId> = saved
        .chain(joint.recomputed_from.iter().copied())
        .filter(|(b, _)| {
            joint
                .backward
                .users(*b)
                .iter()
                .any(|u| !recomputing.contains(u))
        })
        .map(|(_, f)| f)
        .collect();
    read.iter().find(|n| overwritten.contains(n)).map(|n| {
        format!(
            "the backward reads {} saved before a no_grad write changed it (eager raises at backward)",
            graph.node(*n).name
        )
    })
}

/// Whether the write-back value `v` of an input (placeholder `p`) comes only from kept writes
/// of it: the input was written under `no_grad` alone, so it is copied in outside autograd and
/// keeps its history (a leaf stays a leaf), as eager's writes left it.
pub fn only_kept_writes(kept: &Kept, p: NodeId, v: NodeId) -> bool {
    let mut n = v;
    let mut any = false;
    while let Some(&w) = kept.get(&n) {
        any = true;
        n = w;
    }
    any && n == p
}
