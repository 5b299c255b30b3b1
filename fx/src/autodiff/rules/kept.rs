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

use super::*;

/// The graph values eager's backward keeps for node `id` (the argument tensors the caller can
/// reach), where they differ from what the rule of `id` reads; `None` where they do not.
pub fn kept_by_eager(f: &Graph, id: NodeId) -> Option<Vec<NodeId>> {
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
