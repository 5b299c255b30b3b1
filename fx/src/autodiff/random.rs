//! Random ops in a training graph: the backward must reuse the forward's draws, never draw
//! again (upstream's partitioner bugs #190717/#190758 recomputed dropout with fresh
//! randomness).
//!
//! On CPU eager's `dropout(x, p, train=True)` draws `noise = bernoulli(1 - p) / (1 - p)` of
//! `x`'s shape and returns `x * noise`; its backward is `grad * noise`. The pass rewrites the
//! node into that product with the noise made by the same call on ones: `dropout(ones, p,
//! True)` draws exactly what `dropout(x, p, True)` draws (same shape, dtype and generator
//! calls) and equals `noise`, so the forward's values and random stream are eager's, and the
//! noise is an ordinary forward value that the `mul` rule saves for the backward.

use crate::graph::{Arg, Graph, NodeId, NodeKind, Target};
use crate::meta::NodeMeta;
use crate::ops::{self, Spelling};

/// Parameters of F.dropout and torch.dropout.
const F_DROPOUT: &[&str] = &["input", "p", "training", "inplace"];
const DROPOUT: &[&str] = &["input", "p", "train"];

/// Rewrites every training-mode `dropout` whose input is in `needs` (see the module doc);
/// returns the nodes whose target is new (their callables are resolved by path).
pub fn rewrite_dropout(g: &mut Graph, needs: &dyn Fn(NodeId) -> bool) -> Vec<NodeId> {
    let mut changed = Vec::new();
    let ids: Vec<NodeId> = g.nodes().map(|(id, _)| id).collect();
    for id in ids {
        let NodeKind::Call {
            target,
            args,
            kwargs,
        } = g.node(id).kind.clone()
        else {
            continue;
        };
        let Some(c) = ops::canonical(&target, &args, &kwargs) else {
            continue;
        };
        if c.name != "dropout" || c.inplace {
            continue;
        }
        let sig = match c.spelling {
            Spelling::Functional => F_DROPOUT,
            Spelling::Torch => DROPOUT,
            _ => continue,
        };
        let Ok(slots) = ops::bind(sig, &args, &kwargs) else {
            continue;
        };
        let Some(Arg::Node(x)) = slots[0].cloned() else {
            continue;
        };
        // Only a draw: a constant p in (0, 1], training on (F.dropout's default).
        let p = match slots[1] {
            Some(Arg::Float(p)) => *p,
            Some(Arg::Int(p)) => *p as f64,
            None if c.spelling == Spelling::Functional => 0.5,
            _ => continue,
        };
        let training = match slots[2] {
            Some(Arg::Bool(t)) => *t,
            None if c.spelling == Spelling::Functional => true,
            _ => continue,
        };
        if !training || p <= 0.0 {
            continue;
        }
        if !needs(x) {
            continue;
        }
        let Some(xm) = g.node(x).meta.tensor().cloned() else {
            continue;
        };
        let Some(sizes) = xm.known_sizes() else {
            continue;
        };
        let mut ones_meta =
            crate::meta::TensorMeta::contiguous(xm.dtype, xm.device.clone(), &sizes);
        ones_meta.requires_grad = false;
        let ones = g.call_before(
            id,
            "ones",
            Target::Method("new_ones".into()),
            vec![
                Arg::Node(x),
                Arg::List(sizes.iter().map(|&s| Arg::Int(s)).collect()),
            ],
            vec![],
            NodeMeta::Tensor(ones_meta.clone()),
        );
        let mut nargs = args.clone();
        nargs[0] = Arg::Node(ones);
        let nkwargs: Vec<(String, Arg)> = kwargs
            .iter()
            .filter(|(k, _)| k != "inplace")
            .cloned()
            .collect();
        let noise = g.call_before(
            id,
            "noise",
            target.clone(),
            nargs,
            nkwargs,
            NodeMeta::Tensor(ones_meta),
        );
        g.set_call(
            id,
            Target::Method("mul".into()),
            vec![Arg::Node(x), Arg::Node(noise)],
            vec![],
        );
        changed.extend([ones, noise, id]);
    }
    changed
}
