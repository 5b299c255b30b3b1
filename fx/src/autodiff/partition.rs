//! The partition between forward and backward: which forward values the backward reads from
//! memory (saved) and which it computes again (recomputed).
//!
//! The derivation saves every forward value a rule reads. This pass then recomputes, in the
//! backward, a saved value made by a cheap pointwise op whose tensor inputs the backward has
//! anyway (forward inputs, or values saved for another rule): its bytes are no longer kept
//! between forward and backward, at the cost of one fused pointwise pass (AOTAutograd's
//! min-cut does this for `gelu(x)` next to a saved `x`). Matmuls, convolutions, reductions and
//! random ops are never recomputed: the first three cost more than their memory, and a random
//! op would draw again (upstream #190717). A dropout's noise is a saved value, never a recompute.

use std::collections::HashSet;

use crate::graph::{Graph, NodeId, NodeKind};
use crate::ops;

/// Pointwise ops cheap enough to compute again in the backward (none draws random numbers).
const RECOMPUTABLE: &[&str] = &[
    "add",
    "sub",
    "mul",
    "div",
    "neg",
    "exp",
    "log",
    "tanh",
    "sigmoid",
    "relu",
    "gelu",
    "silu",
    "sqrt",
    "rsqrt",
    "pow",
    "abs",
    "where",
    "masked_fill",
    "clamp",
];

/// Whether forward node `n` is a recomputable op (see [`RECOMPUTABLE`]).
fn cheap(f: &Graph, n: NodeId) -> bool {
    let NodeKind::Call {
        target,
        args,
        kwargs,
    } = &f.node(n).kind
    else {
        return false;
    };
    if ops::is_random(target) || ops::mutated_arg(target, args, kwargs).is_some() {
        return false;
    }
    ops::canonical(target, args, kwargs)
        .is_some_and(|c| !c.inplace && RECOMPUTABLE.contains(&ops::unalias(&c.name)))
}

/// The saved values to recompute instead: cheap pointwise ops whose tensor inputs are forward
/// inputs or values that stay saved.
pub fn recomputable(f: &Graph, saved: &[NodeId]) -> HashSet<NodeId> {
    let kept: HashSet<NodeId> = saved.iter().copied().collect();
    let mut recompute = HashSet::new();
    for &n in saved {
        if !cheap(f, n) || f.node(n).meta.tensor().is_none() {
            continue;
        }
        let inputs = f.node(n).inputs();
        let available = inputs.iter().all(|&i| {
            let node = f.node(i);
            matches!(node.kind, NodeKind::Placeholder { .. })
                || (kept.contains(&i) && !recompute.contains(&i) && node.meta.tensor().is_some())
        });
        if available {
            recompute.insert(n);
        }
    }
    recompute
}
