//! Grad-mode regions of a training graph (`with torch.no_grad():`, `@torch.no_grad()` helpers
//! such as transformers' rotary embeddings, `enable_grad` inside them): the traced graph carries
//! `torch._C._set_grad_enabled` switches. Values computed with grad mode off do not require
//! grad in eager: no derivative flows through them, and the backward reads them as constants.
//! The forward runs them as they are (inside the `autograd.Function` grad mode is off anyway).
//!
//! An in-place write under `no_grad` to a tensor that requires grad (`with torch.no_grad():
//! w.clamp_(-1, 1)`, or through a view of it) changes the value but not the autograd history:
//! [`super::writes`] keeps that history in the joint graph. The one form it cannot follow is an
//! `out=` write (the written tensor is no argument of the functional twin): [`no_grad_write`]
//! finds it and the caller runs the graph through torch's autograd instead.

use std::collections::{HashMap, HashSet};

use super::needs_grad;
use crate::graph::{Arg, Graph, NodeId, NodeKind};
use crate::ops::{self, Mutated};

/// The target of a grad-mode switch in a traced graph (`no_grad`, `enable_grad` regions).
pub const SET_GRAD_ENABLED: &str = "torch._C._set_grad_enabled";

/// Grad-mode regions of `graph`, which starts in grad mode: the call nodes that run with grad
/// mode off (their values never require grad: no derivative flows through them, the backward
/// reads them as constants), the switch nodes, and the mode after the graph. A call of a
/// library function that makes its write under `no_grad` itself ([`writes_under_no_grad`]) runs
/// with grad mode off too, whatever the mode around it.
pub fn grad_mode_regions(graph: &Graph) -> (HashSet<NodeId>, Vec<NodeId>, bool) {
    let mut off = HashSet::new();
    let mut switches = Vec::new();
    let mut enabled = true;
    for (id, node) in graph.nodes() {
        let NodeKind::Call { target, args, .. } = &node.kind else {
            continue;
        };
        if target.name() == SET_GRAD_ENABLED {
            if let Some(Arg::Bool(b)) = args.first() {
                enabled = *b;
            }
            switches.push(id);
        } else if !enabled || writes_under_no_grad(target, args) {
            off.insert(id);
        }
    }
    (off, switches, enabled)
}

/// Whether a call is one of `torch.nn.init`'s in-place initializers (`zeros_`, `ones_`,
/// `constant_`, `uniform_`, `kaiming_normal_`, ...), traced as one call (`torch.nn.init.zeros_`)
/// or functionalized as a write to a clone (`on_clone("torch.nn.init.zeros_", x, ...)`). Each
/// writes its tensor inside `with torch.no_grad():` (torch/nn/init.py), so in eager the write
/// changes the value and not the autograd history, as a `no_grad` write in the user's code
/// does ([`super::writes`]): an intermediate that required grad still does, and differentiates
/// into what it was computed from.
pub fn writes_under_no_grad(target: &crate::graph::Target, args: &[Arg]) -> bool {
    let path = match (target.name(), args.first()) {
        (crate::passes::functionalize::ON_CLONE, Some(Arg::Str(p))) => p.as_str(),
        (name, _) => name,
    };
    path.strip_prefix("torch.nn.init.")
        .is_some_and(|f| f.ends_with('_') && !f.starts_with('_'))
}

/// Whether an op that runs in grad mode computes a value carrying a gradient: the graph needs
/// the training path. A graph whose every op on such values runs under `no_grad` (an
/// optimizer's traced update, a manual SGD step) is an inference graph although its inputs
/// require grad: its writes change values, not autograd history, as eager's do, and the
/// inductor makes them in place (the training path would write new buffers and copy them back).
/// `requires_grad` per placeholder.
pub fn differentiates(graph: &Graph, requires_grad: &[bool]) -> bool {
    let (off, switches, _) = grad_mode_regions(graph);
    let needs = needs_grad(graph, requires_grad, &off);
    graph.nodes().any(|(id, node)| {
        matches!(node.kind, NodeKind::Call { .. })
            && !off.contains(&id)
            && !switches.contains(&id)
            && needs.contains(&id)
    })
}

/// The first `out=` write made under `no_grad` to a tensor that carries a gradient (directly
/// or through views of it), described for the fallback reason; `None` if there is none.
/// `graph` is the traced graph (before functionalization), `requires_grad` per placeholder.
pub fn no_grad_write(graph: &Graph, requires_grad: &[bool]) -> Option<String> {
    let (off, _, _) = grad_mode_regions(graph);
    let needs = needs_grad(graph, requires_grad, &off);
    // The tensor each value shares storage with, followed through views and in-place results.
    let mut root: HashMap<NodeId, NodeId> = HashMap::new();
    for (id, node) in graph.nodes() {
        let NodeKind::Call {
            target,
            args,
            kwargs,
        } = &node.kind
        else {
            continue;
        };
        let aliases = ops::canonical(target, args, kwargs).is_some_and(|c| c.may_alias);
        if let (true, Some(Arg::Node(x))) = (aliases, args.first()) {
            let r = root.get(x).copied().unwrap_or(*x);
            root.insert(id, r);
        }
        if !off.contains(&id) {
            continue;
        }
        let written = match ops::mutated_arg(target, args, kwargs) {
            // Written arguments are kept (`writes`): the functional twin reads them.
            Some(Mutated::Arg(_)) => None,
            Some(Mutated::Out) => kwargs.iter().find(|(k, _)| k == "out").map(|(_, v)| v),
            None => None,
        };
        if let Some(Arg::Node(w)) = written {
            let r = root.get(w).copied().unwrap_or(*w);
            if needs.contains(&r) || needs.contains(w) {
                return Some(format!(
                    "{} under no_grad writes (out=) a tensor that requires grad",
                    target.name()
                ));
            }
        }
    }
    None
}
