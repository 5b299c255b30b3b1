//! Training-mode `batch_norm` written out as reductions and pointwise ops in the joint graph,
//! so the partitioner can recompute the normalized output in the backward (from the saved
//! input and two per-channel statistics) and the inductor fuses the normalization with what
//! follows it (ReLU, a residual add) in both directions.
//!
//! As one op, `batch_norm` is a reduction: the minimum cut never recomputes it, so its output
//! and everything read from it (the ReLU output a convolution keeps) are saved next to its input.
//! Written out, the batch statistics `mean` and `rstd` are the only reductions; `xhat = (x -
//! mean) * rstd`, `y = xhat * w + b` and a following `relu(y)` are cheap pointwise chains.
//!
//! The values are eager's CPU kernel's (facts of `native_batch_norm`): the batch mean and biased
//! variance over every dim but the channel dim (1), `y = (x - mean) / sqrt(var + eps) * w + b`,
//! and, with running statistics, `running_mean = (1 - momentum) * running_mean + momentum *
//! mean`, `running_var = (1 - momentum) * running_var + momentum * var * n / (n - 1)` (the
//! unbiased variance). The running statistics are written back with a `copy_` into the input
//! (the inductor stores it at the end of the forward, as for a functional graph's write-back;
//! like eager's kernel it moves no version counter).
//!
//! The backward is one rule for the whole group ([`bn_backward`]), not the rules of its parts:
//! differentiating the parts one by one would chain the variance's gradient through a second
//! pass over the data. `native_batch_norm_backward`'s formula needs two per-channel sums:
//! `gx = (w * rstd) * (g - sum(g) / n - xhat * sum(g * xhat) / n)`, `gw = sum(g * xhat)`,
//! `gb = sum(g)`.

use std::collections::HashMap;

use super::{ints, Bw, Result};
use crate::graph::{Arg, Graph, NodeId, NodeKind, Target};
use crate::infer::{infer_in, InferCtx};
use crate::meta::DType;
use crate::ops::{self, Spelling};

/// One written-out training `batch_norm`: what its backward rule reads.
#[derive(Clone, Debug)]
pub struct BatchNorm {
    /// The normalized input.
    pub x: NodeId,
    /// Per-channel batch mean and `1 / sqrt(var + eps)`, shaped `(1, C, 1, ...)`.
    pub mean: NodeId,
    pub rstd: NodeId,
    pub weight: Option<NodeId>,
    pub bias: Option<NodeId>,
    /// The reduced dims (all but 1) and the per-channel broadcast shape `(1, C, 1, ...)`.
    pub dims: Vec<i64>,
    pub bshape: Vec<i64>,
    /// Elements per channel.
    pub count: i64,
}

/// `recv.method(*args)` placed before `before`, its metadata inferred.
fn method_before(
    g: &mut Graph,
    before: NodeId,
    method: &str,
    recv: NodeId,
    rest: Vec<Arg>,
) -> Option<NodeId> {
    let mut args = vec![Arg::Node(recv)];
    args.extend(rest);
    let target = Target::Method(method.into());
    let meta = infer_in(&InferCtx::default(), g, &target, &args, &[]).ok()?;
    Some(g.call_before(before, method, target, args, vec![], meta))
}

/// A per-channel parameter or running statistic: a graph value of sizes `[c]` and `dtype`.
fn per_channel(g: &Graph, a: Option<&Arg>, c: i64, dtype: DType) -> Option<Option<NodeId>> {
    match a {
        None | Some(Arg::None) => Some(None),
        Some(Arg::Node(n)) => {
            let m = g.node(*n).meta.tensor()?;
            (m.known_sizes()? == [c] && m.dtype == dtype).then_some(Some(*n))
        }
        _ => None,
    }
}

/// Writes out every training-mode `batch_norm` of `g` it can (float32/float64, known sizes,
/// constant momentum and eps, running statistics read by no other op); returns the groups by
/// their output node, which keeps its id (its users are unchanged).
pub fn batch_norms(g: &mut Graph) -> HashMap<NodeId, BatchNorm> {
    let mut groups = HashMap::new();
    let ids: Vec<NodeId> = g.nodes().map(|(id, _)| id).collect();
    for id in ids {
        if let Some(bn) = batch_norm(g, id) {
            groups.insert(id, bn);
        }
    }
    groups
}

fn batch_norm(g: &mut Graph, id: NodeId) -> Option<BatchNorm> {
    let NodeKind::Call {
        target,
        args,
        kwargs,
    } = g.node(id).kind.clone()
    else {
        return None;
    };
    let c = ops::canonical(&target, &args, &kwargs)?;
    if c.name != "batch_norm" || c.inplace {
        return None;
    }
    let sig = match c.spelling {
        Spelling::Functional => ops::schema::F_BATCH_NORM,
        Spelling::Torch => ops::schema::BATCH_NORM,
        _ => return None,
    };
    let names = ops::schema::param_names(sig);
    let slots = ops::bind(sig, &args, &kwargs).ok()?;
    let get = |name: &str| {
        let i = names.iter().position(|n| *n == name)?;
        slots[i]
    };
    let training = match get("training") {
        Some(Arg::Bool(t)) => *t,
        None if c.spelling == Spelling::Functional => false,
        _ => return None,
    };
    if !training {
        return None;
    }
    let num = |a: Option<&Arg>, default: Option<f64>| match a {
        Some(Arg::Float(f)) => Some(*f),
        Some(Arg::Int(i)) => Some(*i as f64),
        None => default,
        _ => None,
    };
    let eps = num(get("eps"), Some(1e-5))?;
    let Some(Arg::Node(x)) = get("input") else {
        return None;
    };
    let x = *x;
    let xm = g.node(x).meta.tensor()?.clone();
    if !matches!(xm.dtype, DType::Float32 | DType::Float64) {
        return None;
    }
    let sizes = xm.known_sizes()?;
    if sizes.len() < 2 {
        return None;
    }
    let ch = sizes[1];
    let count: i64 = sizes.iter().product::<i64>() / ch.max(1);
    // One value per channel has no unbiased variance (eager refuses it before the kernel).
    if count <= 1 {
        return None;
    }
    let weight = per_channel(g, get("weight"), ch, xm.dtype)?;
    let bias = per_channel(g, get("bias"), ch, xm.dtype)?;
    let rm = per_channel(g, get("running_mean"), ch, xm.dtype)?;
    let rv = per_channel(g, get("running_var"), ch, xm.dtype)?;
    let stats = match (rm, rv) {
        (None, None) => None,
        (Some(m), Some(v)) => {
            // Written back into a graph input that this op alone reads: a second reader (one
            // module called twice) would need the writes ordered between the two.
            let sole = |n: NodeId| {
                matches!(g.node(n).kind, NodeKind::Placeholder { .. }) && g.users(n) == [id]
            };
            if m == v || !sole(m) || !sole(v) {
                return None;
            }
            let momentum = num(get("momentum"), Some(0.1))?;
            Some((m, v, momentum))
        }
        _ => return None,
    };
    let n = sizes.len();
    let dims: Vec<i64> = std::iter::once(0).chain(2..n as i64).collect();
    let mut bshape = vec![1i64; n];
    bshape[1] = ch;
    let d = || ints(&dims);
    let mean = method_before(g, id, "mean", x, vec![d(), Arg::Bool(true)])?;
    let xc = method_before(g, id, "sub", x, vec![Arg::Node(mean)])?;
    let sq = method_before(g, id, "mul", xc, vec![Arg::Node(xc)])?;
    let var = method_before(g, id, "mean", sq, vec![d(), Arg::Bool(true)])?;
    let ve = method_before(g, id, "add", var, vec![Arg::Float(eps)])?;
    let rstd = method_before(g, id, "rsqrt", ve, vec![])?;
    if let Some((rm, rv, momentum)) = stats {
        let m1 = method_before(g, id, "reshape", mean, vec![ints(&[ch])])?;
        let m1 = method_before(g, id, "mul", m1, vec![Arg::Float(momentum)])?;
        let old = method_before(g, id, "mul", rm, vec![Arg::Float(1.0 - momentum)])?;
        let new_rm = method_before(g, id, "add", old, vec![Arg::Node(m1)])?;
        let v1 = method_before(g, id, "reshape", var, vec![ints(&[ch])])?;
        let unbiased = count as f64 / (count - 1) as f64;
        let v1 = method_before(g, id, "mul", v1, vec![Arg::Float(momentum * unbiased)])?;
        let old = method_before(g, id, "mul", rv, vec![Arg::Float(1.0 - momentum)])?;
        let new_rv = method_before(g, id, "add", old, vec![Arg::Node(v1)])?;
        method_before(g, id, "copy_", rm, vec![Arg::Node(new_rm)])?;
        method_before(g, id, "copy_", rv, vec![Arg::Node(new_rv)])?;
    }
    // The output keeps the op's node: its last step is set on it.
    let mut last: (NodeId, &str, Arg) = (xc, "mul", Arg::Node(rstd));
    if let Some(w) = weight {
        let xhat = method_before(g, id, last.1, last.0, vec![last.2])?;
        let w4 = method_before(g, id, "reshape", w, vec![ints(&bshape)])?;
        last = (xhat, "mul", Arg::Node(w4));
    }
    if let Some(b) = bias {
        let y = method_before(g, id, last.1, last.0, vec![last.2])?;
        let b4 = method_before(g, id, "reshape", b, vec![ints(&bshape)])?;
        last = (y, "add", Arg::Node(b4));
    }
    g.set_call(
        id,
        Target::Method(last.1.into()),
        vec![Arg::Node(last.0), last.2],
        vec![],
    );
    Some(BatchNorm {
        x,
        mean,
        rstd,
        weight,
        bias,
        dims,
        bshape,
        count,
    })
}

/// The gradients of a written-out `batch_norm` (see the module doc) given `g`, the gradient of
/// its output: the normalized input is computed again from the saved input and statistics.
pub fn bn_backward(b: &mut Bw, bn: &BatchNorm, g: NodeId) -> Result<Vec<(NodeId, NodeId)>> {
    let d = || ints(&bn.dims);
    let need_x = b.needs(bn.x);
    let need_w = bn.weight.is_some_and(|w| b.needs(w));
    let need_b = bn.bias.is_some_and(|n| b.needs(n));
    let ch = bn.bshape[1];
    let xb = b.fwd(bn.x);
    let mean = b.fwd(bn.mean);
    let rstd = b.fwd(bn.rstd);
    let xc = b.m("sub", xb, vec![Arg::Node(mean)])?;
    let xhat = b.m("mul", xc, vec![Arg::Node(rstd)])?;
    let mut r = Vec::new();
    let sgx = if need_x || need_w {
        let t = b.m("mul", g, vec![Arg::Node(xhat)])?;
        Some(b.m("sum", t, vec![d(), Arg::Bool(true)])?)
    } else {
        None
    };
    let sg = if need_x || need_b {
        Some(b.m("sum", g, vec![d(), Arg::Bool(true)])?)
    } else {
        None
    };
    if need_w {
        let gw = b.m("reshape", sgx.unwrap(), vec![ints(&[ch])])?;
        r.push((bn.weight.unwrap(), gw));
    }
    if need_b {
        let gb = b.m("reshape", sg.unwrap(), vec![ints(&[ch])])?;
        r.push((bn.bias.unwrap(), gb));
    }
    if need_x {
        let inv_n = 1.0 / bn.count as f64;
        let a = b.m("mul", sg.unwrap(), vec![Arg::Float(inv_n)])?;
        let c = b.m("mul", sgx.unwrap(), vec![Arg::Float(inv_n)])?;
        let t = b.m("mul", xhat, vec![Arg::Node(c)])?;
        let dd = b.m("sub", g, vec![Arg::Node(a)])?;
        let dd = b.m("sub", dd, vec![Arg::Node(t)])?;
        let scale = match bn.weight {
            Some(w) => {
                let wb = b.fwd(w);
                let w4 = b.m("reshape", wb, vec![ints(&bn.bshape)])?;
                b.m("mul", rstd, vec![Arg::Node(w4)])?
            }
            None => rstd,
        };
        r.push((bn.x, b.m("mul", dd, vec![Arg::Node(scale)])?));
    }
    Ok(r)
}
