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
//!
//! `cross_entropy` over (N, C) logits with class indices is written out the same way: one
//! per-row `logsumexp` (saved, N values), the target's logit read from memory where the logits
//! are stored (one read per row) or else picked by a masked row sum (a comparison with the
//! class index, fused), `loss_i = lse_i - x[i, t_i]` with ignored rows
//! zeroed and eager's reduction. Eager's op writes the whole `log_softmax` (103 MB for GPT-2's
//! logits) to read one value per row; the backward rule ([`ce_backward`]) is one pass over the
//! logits, `(exp(x - lse) - onehot(t)) * scale`, instead of a softmax computed again.

use std::collections::HashMap;

use super::{ints, Bw, Result};
use crate::graph::{Arg, Graph, NodeId, NodeKind, Target};
use crate::infer::{infer_in, InferCtx};
use crate::meta::{DType, NodeMeta, TensorMeta};
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
    /// The running mean and variance (empty without them): eager's `native_batch_norm` keeps
    /// them for its backward in training too, so a write between the call and `.backward()`
    /// raises there ([`kept_by_eager`]).
    pub running: Vec<NodeId>,
}

/// One written-out `cross_entropy`: what its backward rule reads.
#[derive(Clone, Debug)]
pub struct CrossEntropy {
    /// The (N, C) logits and the N class indices.
    pub x: NodeId,
    pub target: NodeId,
    /// Per-row `logsumexp` of the logits, shaped (N, 1).
    pub lse: NodeId,
    pub ignore_index: i64,
    /// `"none"`, `"sum"` or `"mean"`.
    pub reduction: String,
}

/// A forward op written out as several, with one backward rule for the whole.
#[derive(Clone, Debug)]
pub enum Group {
    BatchNorm(BatchNorm),
    CrossEntropy(CrossEntropy),
}

/// Writes out what [`batch_norm`] and [`cross_entropy`] take; returns the groups by their
/// output node (which keeps its id: its users are unchanged), and the new nodes whose target
/// is a function (their callables are resolved by path).
pub fn rewrite(g: &mut Graph) -> (HashMap<NodeId, Group>, Vec<NodeId>) {
    let mut groups = HashMap::new();
    let mut functions = Vec::new();
    let ids: Vec<NodeId> = g.nodes().map(|(id, _)| id).collect();
    for id in ids {
        if let Some(bn) = batch_norm(g, id) {
            groups.insert(id, Group::BatchNorm(bn));
        } else if let Some((ce, calls)) = cross_entropy(g, id) {
            groups.insert(id, Group::CrossEntropy(ce));
            functions.extend(calls);
        }
    }
    (groups, functions)
}

/// The gradients of a group's inputs given `g`, the gradient of its output.
pub fn backward(b: &mut Bw, group: &Group, g: NodeId) -> Result<Vec<(NodeId, NodeId)>> {
    match group {
        Group::BatchNorm(bn) => bn_backward(b, bn, g),
        Group::CrossEntropy(ce) => ce_backward(b, ce, g),
    }
}

/// What eager's autograd keeps for a group's backward, given `reads`, what the group's rule
/// read: a `cross_entropy` keeps its `log_softmax` result (a fresh tensor) and the target,
/// never the logits the rule reads ([`super::rules::kept_by_eager`]); a `batch_norm` keeps
/// the running statistics besides.
pub fn kept_by_eager(group: &Group, reads: &[NodeId]) -> Vec<NodeId> {
    match group {
        Group::BatchNorm(bn) => reads.iter().chain(&bn.running).copied().collect(),
        Group::CrossEntropy(ce) => vec![ce.target],
    }
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

/// A training-mode `batch_norm` written out where it can be (float32/float64 input and
/// parameters, or a float16/bfloat16 input beside float32 ones; known sizes, constant momentum
/// and eps, running statistics read by no other op).
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
    // Half-precision activations (a convolution's output under autocast) beside float32
    // parameters and statistics, as eager's mixed kernels take them: the statistics and the
    // normalization in float32, the output rounded to the input's dtype.
    let half = matches!(xm.dtype, DType::Float16 | DType::BFloat16);
    if !half && !matches!(xm.dtype, DType::Float32 | DType::Float64) {
        return None;
    }
    let cdt = if half { DType::Float32 } else { xm.dtype };
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
    let weight = per_channel(g, get("weight"), ch, cdt)?;
    let bias = per_channel(g, get("bias"), ch, cdt)?;
    let rm = per_channel(g, get("running_mean"), ch, cdt)?;
    let rv = per_channel(g, get("running_var"), ch, cdt)?;
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
    let xs = if half {
        method_before(g, id, "to", x, vec![Arg::DType(cdt)])?
    } else {
        x
    };
    let mean = method_before(g, id, "mean", xs, vec![d(), Arg::Bool(true)])?;
    let xc = method_before(g, id, "sub", xs, vec![Arg::Node(mean)])?;
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
    if half {
        let y = method_before(g, id, last.1, last.0, vec![last.2])?;
        last = (y, "to", Arg::DType(xm.dtype));
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
        running: stats.map_or(Vec::new(), |(m, v, _)| vec![m, v]),
    })
}

/// The gradients of a written-out `batch_norm` (see the module doc) given `g`, the gradient of
/// its output: the normalized input is computed again from the saved input and statistics.
fn bn_backward(b: &mut Bw, bn: &BatchNorm, g: NodeId) -> Result<Vec<(NodeId, NodeId)>> {
    // A half-precision input and gradient are read in float32 (the statistics are float32);
    // the input's gradient is cast back where it is accumulated.
    let xb = b.fwd(bn.x);
    let xb = b.float32(xb)?;
    let g = b.float32(g)?;
    let mean = b.fwd(bn.mean);
    let rstd = b.fwd(bn.rstd);
    let xc = b.m("sub", xb, vec![Arg::Node(mean)])?;
    let xhat = b.m("mul", xc, vec![Arg::Node(rstd)])?;
    let norm = Normalized {
        x: bn.x,
        weight: bn.weight,
        bias: bn.bias,
        dims: &bn.dims,
        bshape: &bn.bshape,
        count: bn.count,
        batch_stats: true,
    };
    normalized_grads(b, &norm, g, xhat, rstd)
}

/// What the gradients of a batch normalization read besides `g`, `x̂` and `1/σ`: the one
/// formula for the written-out group ([`bn_backward`]) and the generic rule
/// (`rules/train.rs::batch_norm`, running statistics or an unwritten op).
pub(crate) struct Normalized<'a> {
    pub x: NodeId,
    pub weight: Option<NodeId>,
    pub bias: Option<NodeId>,
    /// The reduced dims and the per-channel broadcast shape `(1, C, 1, ...)`.
    pub dims: &'a [i64],
    pub bshape: &'a [i64],
    /// Elements per channel.
    pub count: i64,
    /// Batch statistics (their gradient flows into `x`) or fixed running ones.
    pub batch_stats: bool,
}

/// `native_batch_norm_backward`'s form: per channel `Σg` and `Σg·x̂` (the bias and weight
/// gradients), and `gx = (g - Σg/n - x̂·Σg·x̂/n)·w/σ` with batch statistics (`g·w/σ` without),
/// so the backward reads the activation and its gradient in one reduction pass and one
/// pointwise pass. `g` and `x̂` are float32 (or float64); gradients are cast back to each
/// input's dtype where they are accumulated.
pub(crate) fn normalized_grads(
    b: &mut Bw,
    n: &Normalized,
    g: NodeId,
    xhat: NodeId,
    rstd: NodeId,
) -> Result<Vec<(NodeId, NodeId)>> {
    let want_w = n.weight.filter(|w| b.needs(*w));
    let want_b = n.bias.filter(|x| b.needs(*x));
    let want_x = b.needs(n.x);
    let ch = n.bshape[1];
    let sum = |b: &mut Bw, t: NodeId| b.m("sum", t, vec![ints(n.dims), Arg::Bool(true)]);
    let sg = if want_b.is_some() || (want_x && n.batch_stats) {
        Some(sum(b, g)?)
    } else {
        None
    };
    let sgx = if want_w.is_some() || (want_x && n.batch_stats) {
        let t = b.m("mul", g, vec![Arg::Node(xhat)])?;
        Some(sum(b, t)?)
    } else {
        None
    };
    let mut r = Vec::new();
    if let (Some(wn), Some(sgx)) = (want_w, sgx) {
        r.push((wn, b.m("reshape", sgx, vec![ints(&[ch])])?));
    }
    if let (Some(bn), Some(sg)) = (want_b, sg) {
        r.push((bn, b.m("reshape", sg, vec![ints(&[ch])])?));
    }
    if want_x {
        // The per-channel factor `w/σ`, then the per-element terms.
        let scale = match n.weight {
            Some(wn) => {
                let wb = b.fwd(wn);
                let wb = b.float32(wb)?;
                let wb = b.m("reshape", wb, vec![ints(n.bshape)])?;
                b.m("mul", rstd, vec![Arg::Node(wb)])?
            }
            None => rstd,
        };
        let gx = match (n.batch_stats, sg, sgx) {
            (true, Some(sg), Some(sgx)) => {
                let inv_n = 1.0 / n.count.max(1) as f64;
                let mg = b.m("mul", sg, vec![Arg::Float(inv_n)])?;
                let mgx = b.m("mul", sgx, vec![Arg::Float(inv_n)])?;
                let d = b.m("sub", g, vec![Arg::Node(mg)])?;
                let t = b.m("mul", xhat, vec![Arg::Node(mgx)])?;
                let d = b.m("sub", d, vec![Arg::Node(t)])?;
                b.m("mul", d, vec![Arg::Node(scale)])?
            }
            _ => b.m("mul", g, vec![Arg::Node(scale)])?,
        };
        r.push((n.x, gx));
    }
    Ok(r)
}

/// `torch.arange(n)` of `dtype` on `like`'s device, placed before `before`.
fn classes_before(
    g: &mut Graph,
    before: NodeId,
    n: i64,
    dtype: DType,
    like: NodeId,
) -> Option<NodeId> {
    let device = g.node(like).meta.tensor()?.device.clone();
    let target = Target::Function("torch.arange".into());
    let args = vec![Arg::Int(n)];
    let kwargs = vec![
        ("dtype".to_string(), Arg::DType(dtype)),
        ("device".to_string(), Arg::Device(device)),
    ];
    let meta = infer_in(&InferCtx::default(), g, &target, &args, &kwargs).ok()?;
    Some(g.call_before(before, "classes", target, args, kwargs, meta))
}

/// `torch.where(cond, x, zero)` placed before `before` (the function spelling: the method's
/// receiver is the value, not the condition).
fn where_before(
    g: &mut Graph,
    before: NodeId,
    cond: NodeId,
    x: NodeId,
    zero: Arg,
) -> Option<NodeId> {
    let target = Target::Function("torch.where".into());
    let args = vec![Arg::Node(cond), Arg::Node(x), zero];
    let meta = infer_in(&InferCtx::default(), g, &target, &args, &[]).ok()?;
    Some(g.call_before(before, "where", target, args, vec![], meta))
}

/// `F.cross_entropy(x, t)` over (N, C) float32/float64 logits and int64 class indices, without
/// class weights, label smoothing or the legacy reduction arguments. Returns the group and
/// the new function calls.
fn cross_entropy(g: &mut Graph, id: NodeId) -> Option<(CrossEntropy, Vec<NodeId>)> {
    let NodeKind::Call {
        target,
        args,
        kwargs,
    } = g.node(id).kind.clone()
    else {
        return None;
    };
    let c = ops::canonical(&target, &args, &kwargs)?;
    if c.name != "cross_entropy" || c.spelling != Spelling::Functional {
        return None;
    }
    let sig = ops::CROSS_ENTROPY_PARAMS;
    let slots = ops::bind(sig, &args, &kwargs).ok()?;
    let get = |name: &str| {
        let i = sig.iter().position(|n| *n == name)?;
        slots[i].filter(|a| !matches!(a, Arg::None))
    };
    if get("weight").is_some() || get("size_average").is_some() || get("reduce").is_some() {
        return None;
    }
    match get("label_smoothing") {
        None => {}
        Some(Arg::Float(f)) if *f == 0.0 => {}
        Some(Arg::Int(0)) => {}
        _ => return None,
    }
    let ignore_index = match get("ignore_index") {
        None => -100,
        Some(Arg::Int(i)) => *i,
        _ => return None,
    };
    let reduction = match get("reduction") {
        None => "mean".to_string(),
        Some(Arg::Str(r)) if matches!(r.as_str(), "none" | "sum" | "mean") => r.clone(),
        _ => return None,
    };
    let (Some(Arg::Node(x)), Some(Arg::Node(t))) = (get("input"), get("target")) else {
        return None;
    };
    let (x, t) = (*x, *t);
    let xm = g.node(x).meta.tensor()?.clone();
    let tm = g.node(t).meta.tensor()?.clone();
    if !matches!(xm.dtype, DType::Float32 | DType::Float64) || tm.dtype != DType::Int64 {
        return None;
    }
    let xs = xm.known_sizes()?;
    if xs.len() != 2 || tm.known_sizes()? != [xs[0]] || xs[1] == 0 {
        return None;
    }
    let lse = method_before(g, id, "logsumexp", x, vec![Arg::Int(1), Arg::Bool(true)])?;
    // Eager's `log_softmax` subtracts the row's maximum first, so a row holding `+inf` is
    // `inf - inf = nan` at that class and NaN throughout once summed: its loss and its
    // gradient row are NaN. `logsumexp` answers `+inf` there instead (and `lse - x[t]` would be
    // `inf`, a finite-looking class's gradient `exp(x - inf) = 0`): `lse + (lse - lse)` is NaN
    // exactly where `lse` is not finite (an all `-inf` row is already NaN in both), the loss
    // and the backward rule, which reads this `lse`, then see eager's NaN.
    let spread = method_before(g, id, "sub", lse, vec![Arg::Node(lse)])?;
    let lse = method_before(g, id, "add", lse, vec![Arg::Node(spread)])?;
    let keep = method_before(g, id, "ne", t, vec![Arg::Int(ignore_index)])?;
    let mut calls = Vec::new();
    let picked = match stored_source(g, x, xs[0] * xs[1]) {
        // The logits are in memory (a matmul's product, through views and a widening cast):
        // the target's logit is one read per row, `src.reshape(N, C)[arange(N), t]` (an
        // ignored row reads class 0; its loss is zeroed below), cast as `x` is. The masked
        // row sum below reads every logit once more: for GPT-2's `[8192, 50257]` bf16 logits
        // a full pass (823 MB) of the forward.
        Some(src) => {
            let safe = where_before(g, id, keep, t, Arg::Int(0))?;
            let rows = classes_before(g, id, xs[0], DType::Int64, x)?;
            let flat = method_before(
                g,
                id,
                "reshape",
                src,
                vec![Arg::Int(xs[0]), Arg::Int(xs[1])],
            )?;
            let got = getitem_before(g, id, flat, rows, safe, xs[0])?;
            calls.extend([safe, rows, got]);
            let got = if g.node(got).meta.tensor()?.dtype == xm.dtype {
                got
            } else {
                method_before(g, id, "to", got, vec![Arg::DType(xm.dtype)])?
            };
            method_before(g, id, "unsqueeze", got, vec![Arg::Int(1)])?
        }
        // A value computed pointwise: a gather would make it realized in memory; the masked
        // row sum fuses with the computation instead. A selection, not a product with the
        // onehot: a -inf logit of another class stays out.
        None => {
            let classes = classes_before(g, id, xs[1], DType::Int64, x)?;
            let tcol = method_before(g, id, "unsqueeze", t, vec![Arg::Int(1)])?;
            let hit = method_before(g, id, "eq", tcol, vec![Arg::Node(classes)])?;
            let at = where_before(g, id, hit, x, Arg::Float(0.0))?;
            calls.extend([classes, at]);
            method_before(g, id, "sum", at, vec![Arg::Int(1), Arg::Bool(true)])?
        }
    };
    let per = method_before(g, id, "sub", lse, vec![Arg::Node(picked)])?;
    let per = method_before(g, id, "squeeze", per, vec![Arg::Int(1)])?;
    let per = where_before(g, id, keep, per, Arg::Float(0.0))?;
    calls.push(per);
    match reduction.as_str() {
        "none" => g.set_call(
            id,
            Target::Method("mul".into()),
            vec![Arg::Node(per), Arg::Float(1.0)],
            vec![],
        ),
        "sum" => g.set_call(
            id,
            Target::Method("sum".into()),
            vec![Arg::Node(per)],
            vec![],
        ),
        _ => {
            let total = method_before(g, id, "sum", per, vec![])?;
            let count = method_before(g, id, "sum", keep, vec![])?;
            let count = method_before(g, id, "to", count, vec![Arg::DType(xm.dtype)])?;
            g.set_call(
                id,
                Target::Method("div".into()),
                vec![Arg::Node(total), Arg::Node(count)],
                vec![],
            )
        }
    }
    Some((
        CrossEntropy {
            x,
            target: t,
            lse,
            ignore_index,
            reduction,
        },
        calls,
    ))
}

/// Where the elements of `x` (of `numel` elements) are stored: `x` through views (`view`,
/// `reshape`, `contiguous`, which keep the row-major order of the elements) and casts between
/// floating-point dtypes (exact per element) back to a graph input or a product that writes
/// memory (`mm`, `matmul`, `bmm`, `addmm`, `linear` without a bias). `None` for a value
/// computed pointwise (the inductor would realize it for a gather) or anything else.
fn stored_source(g: &Graph, x: NodeId, numel: i64) -> Option<NodeId> {
    let mut cur = x;
    loop {
        let m = g.node(cur).meta.tensor()?;
        if !m.dtype.is_floating_point() || m.known_sizes()?.iter().product::<i64>() != numel {
            return None;
        }
        let Some((target, args, kwargs)) = super::call_parts(g, cur) else {
            return matches!(g.node(cur).kind, NodeKind::Placeholder { .. }).then_some(cur);
        };
        let c = ops::canonical(target, args, kwargs)?;
        match c.name.as_str() {
            "view" | "reshape" | "contiguous" | "float" | "double" | "half" | "bfloat16" => {}
            "to" if kwargs.is_empty()
                && args.len() == 2
                && matches!(args[1], Arg::DType(d) if d.is_floating_point()) => {}
            "mm" | "matmul" | "bmm" | "addmm" => return Some(cur),
            "linear"
                if kwargs.iter().all(|(k, _)| k != "bias")
                    && matches!(args.get(2), None | Some(Arg::None)) =>
            {
                return Some(cur)
            }
            _ => return None,
        }
        let Some(Arg::Node(a)) = args.first() else {
            return None;
        };
        cur = *a;
    }
}

/// `x[rows, cols]` (`operator.getitem` with a tuple of two index tensors of `n` elements)
/// placed before `before`: `n` elements of `x`'s dtype. (`fx::infer` leaves advanced indexing
/// to the tracer's fake tensors; its result here is a fresh contiguous vector.)
fn getitem_before(
    g: &mut Graph,
    before: NodeId,
    x: NodeId,
    rows: NodeId,
    cols: NodeId,
    n: i64,
) -> Option<NodeId> {
    let xm = g.node(x).meta.tensor()?;
    let mut meta = TensorMeta::contiguous(xm.dtype, xm.device.clone(), &[n]);
    meta.requires_grad = xm.requires_grad;
    let target = Target::Function("operator.getitem".into());
    let args = vec![
        Arg::Node(x),
        Arg::Tuple(vec![Arg::Node(rows), Arg::Node(cols)]),
    ];
    Some(g.call_before(
        before,
        "picked",
        target,
        args,
        vec![],
        NodeMeta::Tensor(meta),
    ))
}

/// The gradient of a written-out `cross_entropy`'s logits: `(exp(x - lse) - onehot(t)) *
/// scale` on kept rows, one pass over the saved logits.
fn ce_backward(b: &mut Bw, ce: &CrossEntropy, g: NodeId) -> Result<Vec<(NodeId, NodeId)>> {
    if !b.needs(ce.x) {
        return Ok(vec![]);
    }
    let c = b.fsizes(ce.x)?[1];
    let xb = b.fwd(ce.x);
    let lse = b.fwd(ce.lse);
    let tb = b.fwd(ce.target);
    let dtype = b.bdtype(xb)?;
    let device = b.bmeta(xb)?.device;
    let classes = b.call(
        Target::Function("torch.arange".into()),
        vec![Arg::Int(c)],
        vec![
            ("dtype".into(), Arg::DType(DType::Int64)),
            ("device".into(), Arg::Device(device)),
        ],
    )?;
    let tcol = b.m("unsqueeze", tb, vec![Arg::Int(1)])?;
    let hit = b.m("eq", tcol, vec![Arg::Node(classes)])?;
    let onehot = b.m("to", hit, vec![Arg::DType(dtype)])?;
    let z = b.m("sub", xb, vec![Arg::Node(lse)])?;
    let sm = b.m("exp", z, vec![])?;
    let d = b.m("sub", sm, vec![Arg::Node(onehot)])?;
    let scaled = match ce.reduction.as_str() {
        "none" => {
            let gu = b.m("unsqueeze", g, vec![Arg::Int(1)])?;
            b.m("mul", d, vec![Arg::Node(gu)])?
        }
        "sum" => b.m("mul", d, vec![Arg::Node(g)])?,
        _ => {
            let kept = b.m("ne", tb, vec![Arg::Int(ce.ignore_index)])?;
            let count = b.m("sum", kept, vec![])?;
            let count = b.m("to", count, vec![Arg::DType(dtype)])?;
            let scale = b.m("div", g, vec![Arg::Node(count)])?;
            b.m("mul", d, vec![Arg::Node(scale)])?
        }
    };
    // Ignored rows last: with every row ignored the mean's scale is 1/0, and eager's gradient
    // is still 0 there.
    let keep = b.m("ne", tcol, vec![Arg::Int(ce.ignore_index)])?;
    let gx = b.call(
        Target::Function("torch.where".into()),
        vec![Arg::Node(keep), Arg::Node(scaled), Arg::Float(0.0)],
        vec![],
    )?;
    Ok(vec![(ce.x, gx)])
}
