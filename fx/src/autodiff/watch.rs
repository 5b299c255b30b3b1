//! Which inputs and outputs of a training graph eager's autograd would have saved, so that a
//! write to one of them between the call and `.backward()` raises eager's "modified by an
//! inplace operation" error instead of yielding a gradient of other values.
//!
//! The partition ([`super::partition`]) saves what is cheapest, not what eager saves: `tanh(h)`
//! returned to the caller is recomputed from `h` in the backward, so the caller's
//! `y.add_(1)` before `y.sum().backward()` goes unnoticed where eager (whose `tanh` saved its
//! result) raises. The derivation's first pass saves every forward value a rule reads, and the
//! rules read what `derivatives.yaml` saves: those values, followed back through views to the
//! tensor whose version counter they share, are the inputs and outputs eager's backward checks.
//! The runtime hands them to `ctx.save_for_backward` beside the values it really reads, so
//! autograd checks their versions at `.backward()` exactly as it checks eager's saved tensors.

use std::collections::{HashMap, HashSet};

use crate::graph::{Arg, Graph, NodeId, NodeKind};
use crate::ops;

/// The tensor whose storage (and version counter) `n` shares: `n` followed back through view
/// ops (`view`, `t`, `x[0]`, an item of `split`, a same-dtype `to`/`contiguous`/`reshape`).
pub fn storage_root(f: &Graph, mut n: NodeId) -> NodeId {
    loop {
        let Some((target, args, kwargs)) = super::call_parts(f, n) else {
            return n;
        };
        if let Some((tuple, _)) = super::rules::tuple_item(f, target, args) {
            n = tuple;
            continue;
        }
        let Some(Arg::Node(base)) = args.first() else {
            return n;
        };
        let Some(canon) = ops::canonical(target, args, kwargs) else {
            return n;
        };
        if !ops::may_alias(&canon.name) || canon.inplace {
            return n;
        }
        // A cast to another dtype is a copy.
        let same_dtype = match (f.node(n).meta.tensor(), f.node(*base).meta.tensor()) {
            (Some(a), Some(b)) => a.dtype == b.dtype,
            // A tuple of views (`split`): its items are views of the base.
            _ => f.node(*base).meta.tensor().is_some(),
        };
        if !same_dtype {
            return n;
        }
        n = *base;
    }
}

/// The storage roots of the values eager's backward keeps (`kept`, [`super::Joint::eager_kept`]
/// of the first derivation): what it checks the versions of.
pub fn saved_roots(f: &Graph, kept: &[NodeId]) -> HashSet<NodeId> {
    kept.iter().map(|&n| storage_root(f, n)).collect()
}

/// Tensor inputs eager's backward does not save. The caller may write them between the call
/// and `.backward()` (eager's backward, holding its own values, still gives a gradient: a BN
/// bias, `exp(x)` of a leaf), so a value the partition saves that shares storage with one is
/// saved as a copy ([`copied`]), which the partition counts ([`super::partition::min_cut`]).
///
/// Returned tensors eager does not keep are not copied: returned logits beside a
/// `cross_entropy` loss (eager keeps its `log_softmax`) would cost a logits-sized copy on every
/// training step of a transformers model. Those the backward reads are watched instead
/// ([`read_outputs`]): a write to one before `.backward()` raises autograd's error, never a
/// gradient of other values.
pub fn unsaved(f: &Graph, roots: &HashSet<NodeId>) -> HashSet<NodeId> {
    f.placeholders()
        .into_iter()
        .filter(|p| !roots.contains(p) && f.node(*p).meta.tensor().is_some())
        .collect()
}

/// The storage roots of returned tensors (not inputs) that the backward reads, saved as they
/// are (see [`unsaved`]): their versions are checked as eager's saved tensors'.
pub fn read_outputs(f: &Graph, saved: &[NodeId], user_outputs: &[Arg]) -> HashSet<NodeId> {
    let read = saved_roots(f, saved);
    user_outputs
        .iter()
        .filter_map(|v| match v {
            Arg::Node(n) if f.node(*n).meta.tensor().is_some() => Some(storage_root(f, *n)),
            _ => None,
        })
        .filter(|r| read.contains(r) && !matches!(f.node(*r).kind, NodeKind::Placeholder { .. }))
        .collect()
}

/// The placeholders (by index) and user outputs (by position) whose version counters eager's
/// backward would check: tensors sharing storage with a saved root ([`saved_roots`]). A
/// symbolic int input a rule reads (a size) has no version counter.
pub fn watched(
    f: &Graph,
    roots: &HashSet<NodeId>,
    user_outputs: &[Arg],
) -> (Vec<usize>, Vec<usize>) {
    let mut inputs = Vec::new();
    for p in f.placeholders() {
        if let NodeKind::Placeholder { index } = f.node(p).kind {
            if roots.contains(&p) && f.node(p).meta.tensor().is_some() {
                inputs.push(index);
            }
        }
    }
    let outputs = user_outputs
        .iter()
        .enumerate()
        .filter_map(|(k, v)| match v {
            Arg::Node(n) => {
                let root = storage_root(f, *n);
                let is_input = matches!(f.node(root).kind, NodeKind::Placeholder { .. });
                let tensor = f.node(*n).meta.tensor().is_some();
                (tensor && !is_input && roots.contains(&root)).then_some(k)
            }
            _ => None,
        })
        .collect();
    (inputs, outputs)
}

/// For each saved forward value, whether it is saved as a copy: it shares storage with an input
/// eager's backward does not save ([`unsaved`]).
pub fn copied(f: &Graph, saved: &[NodeId], pinned: &HashSet<NodeId>) -> Vec<bool> {
    saved
        .iter()
        .map(|&n| pinned.contains(&storage_root(f, n)))
        .collect()
}

/// For each input the graph writes, the earliest of its versions (writes before it) that
/// eager's backward keeps: `roots` are the storage roots of what eager keeps
/// ([`saved_roots`]), `versions` the functional graph's values of written inputs (node →
/// (placeholder index, version), `functionalize::Functionalized::input_versions`).
///
/// Eager's op saved the input tensor itself at that version; every later in-place write moves
/// its version counter, so a version before the graph's last write makes eager's
/// `.backward()` raise "modified by an inplace operation" (`r = w * s` then
/// `s.mul_(3)` under `no_grad`, in one compiled function), and the last version raises where
/// the caller writes the input before `.backward()`. The functional graph reads each version
/// as a value of its own (the input is written back after the call), so without this nothing
/// checked, and the backward silently used the value read.
pub fn written_kept(
    roots: &HashSet<NodeId>,
    versions: &HashMap<NodeId, (usize, u32)>,
) -> HashMap<usize, u32> {
    let mut out: HashMap<usize, u32> = HashMap::new();
    for r in roots {
        if let Some(&(input, v)) = versions.get(r) {
            let e = out.entry(input).or_insert(v);
            *e = (*e).min(v);
        }
    }
    out
}

/// Eager's version check of the graph's own tensors: the first value eager's backward keeps
/// (`kept_by`: (op, value), [`super::Joint::eager_kept_by`]) that a later in-place write in the
/// graph replaced (`overwritten`, `functionalize::Functionalized::overwritten`): `h =
/// torch.sigmoid(z)` saved by sigmoid, then `h.fill_(1)`. Eager's `.backward()` raises
/// "modified by an inplace operation"; the functional graph reads the value as of the save, so
/// the compiled backward trained on (session 33). The caller runs such a graph through torch's
/// autograd, which raises eager's error; `Some` describes the value for the fallback reason.
///
/// An in-place op's own read of the tensor it writes is no such keep: eager saves the value
/// before the write apart (`original_self`; `h.sin_()`, `h.mul_(w)` train in eager). `writes`
/// maps the functional nodes standing for in-place ops to the value they wrote
/// (`functionalize::Functionalized::writes`).
pub fn kept_then_overwritten(
    f: &Graph,
    kept_by: &[(NodeId, NodeId)],
    overwritten: &HashSet<NodeId>,
    writes: &HashMap<NodeId, NodeId>,
) -> Option<String> {
    kept_by
        .iter()
        .find(|&&(op, v)| {
            let root = storage_root(f, v);
            if !overwritten.contains(&root) {
                return false;
            }
            // The op's own read of the tensor it writes (`writes`: the twin of a widened
            // write reads it too).
            let own = writes
                .get(&op)
                .is_some_and(|&w| storage_root(f, w) == root);
            !own
        })
        .map(|&(_, v)| {
            format!(
                "the backward keeps {}, which a later in-place write changed (eager raises at backward)",
                f.node(v).name
            )
        })
}

/// The first input eager's backward keeps ([`written_kept`]: input → earliest kept version) at
/// a version before the graph's own last write of it (`written`: the graph's written inputs and
/// how many writes each gets, `Functionalized::mutated_inputs`/`input_writes`), described for
/// the fallback reason. Eager's `.backward()` is then certain to raise, but only when the
/// engine reaches the node that kept it: the nodes it ran before have accumulated their
/// gradients (an output layer's, behind a product that kept a buffer the step rescaled). The
/// compiled backward is one autograd node, which raised before accumulating anything; torch's
/// autograd over the traced graph accumulates as eager's nodes do (session 33).
pub fn kept_input_overwritten(
    kept: &HashMap<usize, u32>,
    (mutated, writes): (&[usize], &[u32]),
) -> Option<String> {
    mutated.iter().zip(writes).find_map(|(i, &w)| {
        kept.get(i).filter(|&&v| v < w).map(|v| {
            format!(
                "the backward keeps input {i} at version {v}, which the graph's later writes change (eager raises at backward)"
            )
        })
    })
}
