//! What eager's autograd keeps for an op's backward where that is not what our rule reads.
//!
//! [`super::super::watch`] takes the values a rule reads as the ones eager saved (the rules
//! read what `derivatives.yaml` saves). A few ops are composites in eager whose parts keep
//! tensors the caller never sees, while our rule reads the op's arguments or its result:
//!
//! - `cross_entropy` is `log_softmax` then `nll_loss`: the log-probabilities (a fresh tensor)
//!   and the target and class weights are kept, never the logits. Our rule (and the written-out
//!   form, [`super::super::decompose`]) reads the logits, so a caller's write to returned logits
//!   before `.backward()` must neither raise (eager trains on) nor reach the gradient.
//! - `l1_loss` is `(input - target).abs()` reduced: `abs` keeps the difference, a fresh tensor.
//! - `c / t` with a number `c` is `t.reciprocal() * c`: the reciprocal (fresh) is kept.
//!
//! For those, the values listed here name what eager checks; whatever else the rule reads is
//! saved so that the caller cannot change it (a copy where it shares storage with an input or
//! a returned output, [`super::super::watch::copied`]).
//!
//! And one op keeps more than the rule reads: `batch_norm` is `native_batch_norm`, whose
//! backward node keeps the running statistics beside the input and weight even in training
//! (where the gradient is computed from the batch's statistics and never reads them), so a
//! caller's write to `running_mean` between the call and `.backward()` raises in eager.

use super::*;

/// The graph values eager's backward keeps for node `id` (the argument tensors the caller can
/// reach), given `reads`, the forward values the rule of `id` read.
pub fn kept_by_eager(f: &Graph, id: NodeId, reads: &[NodeId]) -> Vec<NodeId> {
    kept_instead(f, id).unwrap_or_else(|| {
        let mut kept = reads.to_vec();
        kept.extend(kept_also(f, id));
        kept
    })
}

/// What eager keeps for `id` in place of what its rule reads, where the two differ.
fn kept_instead(f: &Graph, id: NodeId) -> Option<Vec<NodeId>> {
    let (target, args, kwargs) = super::super::call_parts(f, id)?;
    let c = ops::canonical(target, args, kwargs)?;
    let nodes = |p: &B, names: &[&str]| names.iter().filter_map(|n| p.node(n)).collect();
    match ops::unalias(&c.name) {
        "cross_entropy" if c.spelling == Spelling::Functional => {
            let p = B::new(ops::CROSS_ENTROPY_PARAMS, args, kwargs, "cross_entropy").ok()?;
            Some(nodes(&p, &["target", "weight"]))
        }
        "l1_loss" if c.spelling == Spelling::Functional => Some(Vec::new()),
        // `torch.div(c, t)` wraps `c` in a tensor and keeps `t`, as the rule reads it.
        "div" if c.spelling == Spelling::Operator => {
            let mut args = args.to_vec();
            if c.reflected && args.len() == 2 {
                args.swap(0, 1);
            }
            (!matches!(args.first(), Some(Arg::Node(_)))).then(Vec::new)
        }
        _ => None,
    }
}

/// What eager keeps for `id` besides what its rule reads: a `batch_norm`'s running statistics
/// (`native_batch_norm` keeps them in training too; a written-out one lists them in its group,
/// [`super::super::decompose::BatchNorm::running`]).
fn kept_also(f: &Graph, id: NodeId) -> Vec<NodeId> {
    let Some((target, args, kwargs)) = super::super::call_parts(f, id) else {
        return Vec::new();
    };
    let Some(c) = ops::canonical(target, args, kwargs) else {
        return Vec::new();
    };
    if c.name != "batch_norm" {
        return Vec::new();
    }
    let sig = match c.spelling {
        Spelling::Functional => ops::schema::F_BATCH_NORM,
        Spelling::Torch => ops::schema::BATCH_NORM,
        _ => return Vec::new(),
    };
    match B::new(sig, args, kwargs, "batch_norm") {
        Ok(p) => ["running_mean", "running_var"]
            .iter()
            .filter_map(|n| p.node(n))
            .collect(),
        Err(_) => Vec::new(),
    }
}
