//! Rules the model zoo's training steps need beyond the basic families: `batch_norm` (batch
//! statistics in training, running statistics otherwise), `max_pool2d` (its indices computed again
//! in the backward), `adaptive_avg_pool2d`, `hardsigmoid`/`hardswish`, and
//! `scaled_dot_product_attention` through its math decomposition (softmax(q kᵀ·scale + mask) v).
//! Facts from `derivatives.yaml`: `native_batch_norm`'s `batch_norm_backward`,
//! `max_pool2d_with_indices_backward`, `_adaptive_avg_pool2d_backward`, `hardsigmoid_backward`
//! (grad/6 strictly inside (-3, 3)), `hardswish_backward` (0 below -3, grad·(x/3 + ½) up to 3,
//! grad above).

use super::*;
use crate::meta::{DType, NodeMeta};

pub(super) fn rule(b: &mut Bw, c: &Call) -> Result<Option<Grads>> {
    let Call {
        out,
        sp,
        args,
        kwargs,
        g,
        ..
    } = *c;
    let name = c.name.to_string();
    let r: Result<Grads> = match name.as_str() {
        "hardsigmoid" => {
            let x = self_of(args)?;
            let xb = b.fwd(x);
            let a = b.m("abs", xb, vec![])?;
            let outside = b.m("ge", a, vec![Arg::Float(3.0)])?;
            let t = b.m("div", g, vec![Arg::Float(6.0)])?;
            Ok(vec![(
                x,
                b.m("masked_fill", t, vec![Arg::Node(outside), Arg::Int(0)])?,
            )])
        }
        "hardswish" => {
            let x = self_of(args)?;
            let xb = b.fwd(x);
            let t = b.m("div", xb, vec![Arg::Float(3.0)])?;
            let t = b.m("add", t, vec![Arg::Float(0.5)])?;
            let hi = b.m("gt", xb, vec![Arg::Float(3.0)])?;
            let t = b.m("masked_fill", t, vec![Arg::Node(hi), Arg::Float(1.0)])?;
            let lo = b.m("lt", xb, vec![Arg::Float(-3.0)])?;
            let t = b.m("masked_fill", t, vec![Arg::Node(lo), Arg::Float(0.0)])?;
            Ok(vec![(x, b.m("mul", g, vec![Arg::Node(t)])?)])
        }
        "adaptive_avg_pool2d" => {
            let p = B::new(&["input", "output_size"], args, kwargs, &name)?;
            let x = p
                .node("input")
                .ok_or_else(|| AutodiffError::NoRule(name.clone()))?;
            let xs = b.fsizes(x)?;
            let os = b.fsizes(out)?;
            let n = xs.len();
            if n < 3 {
                return no_rule("adaptive_avg_pool2d of a 1-d input");
            }
            if os[n - 2] == 1 && os[n - 1] == 1 {
                // One window covering the whole plane: each element gets g / (H·W).
                let e = b.m("expand", g, vec![ints(&xs)])?;
                let hw = (xs[n - 2] * xs[n - 1]) as f64;
                Ok(vec![(x, b.m("div", e, vec![Arg::Float(hw)])?)])
            } else {
                let xb = b.fwd(x);
                let meta = contiguous_like(b, xb, &xs)?;
                let r = b.call_with_meta(
                    Target::Function("torch.ops.aten._adaptive_avg_pool2d_backward.default".into()),
                    vec![Arg::Node(g), Arg::Node(xb)],
                    meta,
                );
                Ok(vec![(x, r)])
            }
        }
        "max_pool2d" => max_pool2d(b, out, args, kwargs, g),
        "batch_norm" => batch_norm(b, sp, args, kwargs, g),
        "scaled_dot_product_attention" => sdpa(b, args, kwargs, g),
        _ => return Ok(None),
    };
    r.map(Some)
}

/// A per-dimension argument of a 2-d pooling (one int or two), `default` when absent or empty.
fn pair(v: Option<Vec<i64>>, default: &[i64]) -> Result<Vec<i64>> {
    match v {
        None => Ok(default.to_vec()),
        Some(v) if v.is_empty() => Ok(default.to_vec()),
        Some(v) if v.len() == 1 => Ok(vec![v[0], v[0]]),
        Some(v) if v.len() == 2 => Ok(v),
        Some(_) => no_rule("max_pool2d arguments"),
    }
}

fn max_pool2d(
    b: &mut Bw,
    out: NodeId,
    args: &[Arg],
    kwargs: &[(String, Arg)],
    g: NodeId,
) -> Result<Grads> {
    let p = B::new(
        &[
            "input",
            "kernel_size",
            "stride",
            "padding",
            "dilation",
            "ceil_mode",
            "return_indices",
        ],
        args,
        kwargs,
        "max_pool2d",
    )?;
    if p.boolean("return_indices", false) {
        return no_rule("max_pool2d with return_indices");
    }
    let x = p
        .node("input")
        .ok_or_else(|| AutodiffError::NoRule("max_pool2d".into()))?;
    let k = pair(p.int_list("kernel_size"), &[])?;
    if k.len() != 2 {
        return no_rule("max_pool2d without kernel_size");
    }
    let s = pair(p.int_list("stride"), &k)?;
    let pad = pair(p.int_list("padding"), &[0, 0])?;
    let dil = pair(p.int_list("dilation"), &[1, 1])?;
    let ceil = p.boolean("ceil_mode", false);
    let xs = b.fsizes(x)?;
    let os = b.fsizes(out)?;
    let xb = b.fwd(x);
    let xm = b.bmeta(xb)?;
    let om = TensorMeta::contiguous(xm.dtype, xm.device.clone(), &os);
    let im = TensorMeta::contiguous(DType::Int64, xm.device.clone(), &os);
    let common = vec![ints(&k), ints(&s), ints(&pad), ints(&dil), Arg::Bool(ceil)];
    // The indices are computed again from the saved input rather than saved: the forward graph
    // ran `max_pool2d` (no indices).
    let mut a = vec![Arg::Node(xb)];
    a.extend(common.iter().cloned());
    let both = b.raw(
        "max_pool2d_with_indices",
        Target::Function("torch.ops.aten.max_pool2d_with_indices.default".into()),
        a,
        NodeMeta::Tuple(vec![NodeMeta::Tensor(om), NodeMeta::Tensor(im.clone())]),
    );
    let idx = b.raw(
        "getitem",
        Target::Function("operator.getitem".into()),
        vec![Arg::Node(both), Arg::Int(1)],
        NodeMeta::Tensor(im),
    );
    let mut a = vec![Arg::Node(g), Arg::Node(xb)];
    a.extend(common);
    a.push(Arg::Node(idx));
    let meta = TensorMeta::contiguous(xm.dtype, xm.device.clone(), &xs);
    let r = b.call_with_meta(
        Target::Function("torch.ops.aten.max_pool2d_with_indices_backward.default".into()),
        a,
        meta,
    );
    Ok(vec![(x, r)])
}

fn batch_norm(
    b: &mut Bw,
    sp: Spelling,
    args: &[Arg],
    kwargs: &[(String, Arg)],
    g: NodeId,
) -> Result<Grads> {
    // `torch.nn.functional.batch_norm` orders the running statistics before the affine
    // parameters; `torch.batch_norm` after.
    let sig: &[&'static str] = if sp == Spelling::Functional {
        &[
            "input",
            "running_mean",
            "running_var",
            "weight",
            "bias",
            "training",
            "momentum",
            "eps",
        ]
    } else {
        &[
            "input",
            "weight",
            "bias",
            "running_mean",
            "running_var",
            "training",
            "momentum",
            "eps",
            "cudnn_enabled",
        ]
    };
    let p = B::new(sig, args, kwargs, "batch_norm")?;
    let x = p
        .node("input")
        .ok_or_else(|| AutodiffError::NoRule("batch_norm".into()))?;
    let (rm, rv) = (p.node("running_mean"), p.node("running_var"));
    let training = p.boolean("training", false);
    let eps = p.float("eps").unwrap_or(1e-5);
    let (w, bias) = (p.node("weight"), p.node("bias"));
    let xs = b.fsizes(x)?;
    if xs.len() < 2 {
        return no_rule("batch_norm of a 1-d input");
    }
    let c = xs[1];
    let dims: Vec<i64> = (0..xs.len() as i64).filter(|&d| d != 1).collect();
    let mut chan = vec![1i64; xs.len()];
    chan[1] = c;
    let xb = b.fwd(x);
    let batch_stats = training || rm.is_none() || rv.is_none();
    let (xc, invstd) = if batch_stats {
        let mean = b.m("mean", xb, vec![ints(&dims), Arg::Bool(true)])?;
        let xc = b.m("sub", xb, vec![Arg::Node(mean)])?;
        let sq = b.m("mul", xc, vec![Arg::Node(xc)])?;
        let var = b.m("mean", sq, vec![ints(&dims), Arg::Bool(true)])?;
        let ve = b.m("add", var, vec![Arg::Float(eps)])?;
        (xc, b.m("rsqrt", ve, vec![])?)
    } else {
        let (rm, rv) = (rm.unwrap(), rv.unwrap());
        let (rmb, rvb) = (b.fwd(rm), b.fwd(rv));
        let rmb = b.m("reshape", rmb, vec![ints(&chan)])?;
        let rvb = b.m("reshape", rvb, vec![ints(&chan)])?;
        let xc = b.m("sub", xb, vec![Arg::Node(rmb)])?;
        let ve = b.m("add", rvb, vec![Arg::Float(eps)])?;
        (xc, b.m("rsqrt", ve, vec![])?)
    };
    let xhat = b.m("mul", xc, vec![Arg::Node(invstd)])?;
    let mut r = Vec::new();
    if b.needs(x) {
        let scale = match w {
            Some(w) => {
                let wb = b.fwd(w);
                let wb = b.m("reshape", wb, vec![ints(&chan)])?;
                b.m("mul", invstd, vec![Arg::Node(wb)])?
            }
            None => invstd,
        };
        let gx = if batch_stats {
            // invstd·w·(g − mean(g) − x̂·mean(g·x̂)), the means over every dim but channels.
            let mg = b.m("mean", g, vec![ints(&dims), Arg::Bool(true)])?;
            let gxh = b.m("mul", g, vec![Arg::Node(xhat)])?;
            let mgx = b.m("mean", gxh, vec![ints(&dims), Arg::Bool(true)])?;
            let t = b.m("mul", xhat, vec![Arg::Node(mgx)])?;
            let d = b.m("sub", g, vec![Arg::Node(mg)])?;
            b.m("sub", d, vec![Arg::Node(t)])?
        } else {
            g
        };
        r.push((x, b.m("mul", gx, vec![Arg::Node(scale)])?));
    }
    if let Some(w) = w.filter(|n| b.needs(*n)) {
        let gxh = b.m("mul", g, vec![Arg::Node(xhat)])?;
        r.push((w, b.m("sum", gxh, vec![ints(&dims)])?));
    }
    if let Some(bn) = bias.filter(|n| b.needs(*n)) {
        r.push((bn, b.m("sum", g, vec![ints(&dims)])?));
    }
    for s in [rm, rv].into_iter().flatten() {
        if b.needs(s) {
            return no_rule("batch_norm with running statistics that require grad");
        }
    }
    Ok(r)
}

fn sdpa(b: &mut Bw, args: &[Arg], kwargs: &[(String, Arg)], g: NodeId) -> Result<Grads> {
    let p = B::new(
        &[
            "query",
            "key",
            "value",
            "attn_mask",
            "dropout_p",
            "is_causal",
            "*",
            "scale",
            "enable_gqa",
        ],
        args,
        kwargs,
        "scaled_dot_product_attention",
    )?;
    let (Some(q), Some(k), Some(v)) = (p.node("query"), p.node("key"), p.node("value")) else {
        return no_rule("scaled_dot_product_attention");
    };
    if p.float("dropout_p").unwrap_or(0.0) != 0.0 {
        return no_rule("scaled_dot_product_attention with dropout");
    }
    let mask = p.node("attn_mask");
    if mask.is_some_and(|m| b.needs(m)) {
        return no_rule("scaled_dot_product_attention with a mask that requires grad");
    }
    let causal = p.boolean("is_causal", false);
    let (qs, ks, vs) = (b.fsizes(q)?, b.fsizes(k)?, b.fsizes(v)?);
    let n = qs.len();
    if n < 2 || ks.len() != n || vs.len() != n {
        return no_rule("scaled_dot_product_attention of mixed ranks");
    }
    let e = qs[n - 1];
    let scale = p.float("scale").unwrap_or(1.0 / (e as f64).sqrt());
    let (qb, mut kb, mut vb) = (b.fwd(q), b.fwd(k), b.fwd(v));
    // Grouped-query attention: each key/value head serves `rep` query heads.
    let rep = if p.boolean("enable_gqa", false) && n >= 3 && ks[n - 3] != qs[n - 3] {
        if n != 4 || qs[1] % ks[1] != 0 {
            return no_rule("scaled_dot_product_attention with this grouping");
        }
        let r = qs[1] / ks[1];
        let grow = |b: &mut Bw, t: NodeId, s: &[i64]| -> Result<NodeId> {
            let u = b.m("unsqueeze", t, vec![Arg::Int(2)])?;
            let u = b.m("expand", u, vec![ints(&[s[0], s[1], r, s[2], s[3]])])?;
            b.m("reshape", u, vec![ints(&[s[0], s[1] * r, s[2], s[3]])])
        };
        kb = grow(b, kb, &ks)?;
        vb = grow(b, vb, &vs)?;
        Some(r)
    } else {
        None
    };
    let kt = b.m("transpose", kb, vec![Arg::Int(-2), Arg::Int(-1)])?;
    let sc = b.m("matmul", qb, vec![Arg::Node(kt)])?;
    let mut sc = b.m("mul", sc, vec![Arg::Float(scale)])?;
    if causal {
        let (l, s) = (qs[n - 2], ks[n - 2]);
        let ones = b.m("new_ones", qb, vec![ints(&[l, s])])?;
        // `fx::infer` has no native `tril`; its result is laid out as its input.
        let om = b.bmeta(ones)?;
        let keep = b.call_with_meta(Target::Method("tril".into()), vec![Arg::Node(ones)], om);
        let hide = b.m("eq", keep, vec![Arg::Int(0)])?;
        sc = b.m(
            "masked_fill",
            sc,
            vec![Arg::Node(hide), Arg::Float(f64::NEG_INFINITY)],
        )?;
    }
    if let Some(m) = mask {
        let mb = b.fwd(m);
        sc = if b.bdtype(mb)? == DType::Bool {
            let hide = b.m("logical_not", mb, vec![])?;
            b.m(
                "masked_fill",
                sc,
                vec![Arg::Node(hide), Arg::Float(f64::NEG_INFINITY)],
            )?
        } else {
            b.m("add", sc, vec![Arg::Node(mb)])?
        };
    }
    let pr = b.m("softmax", sc, vec![Arg::Int(-1)])?;
    let mut r = Vec::new();
    let fold = |b: &mut Bw, t: NodeId, s: &[i64]| -> Result<NodeId> {
        match rep {
            Some(r) => {
                let u = b.m("reshape", t, vec![ints(&[s[0], s[1], r, s[2], s[3]])])?;
                b.m("sum", u, vec![ints(&[2])])
            }
            None => b.reduce_to(t, s),
        }
    };
    if b.needs(v) {
        let pt = b.m("transpose", pr, vec![Arg::Int(-2), Arg::Int(-1)])?;
        let gv = b.m("matmul", pt, vec![Arg::Node(g)])?;
        r.push((v, fold(b, gv, &vs)?));
    }
    if b.needs(q) || b.needs(k) {
        let vt = b.m("transpose", vb, vec![Arg::Int(-2), Arg::Int(-1)])?;
        let gp = b.m("matmul", g, vec![Arg::Node(vt)])?;
        let t = b.m("mul", gp, vec![Arg::Node(pr)])?;
        let s = b.m("sum", t, vec![ints(&[-1]), Arg::Bool(true)])?;
        let d = b.m("sub", gp, vec![Arg::Node(s)])?;
        let gs = b.m("mul", pr, vec![Arg::Node(d)])?;
        let gs = b.m("mul", gs, vec![Arg::Float(scale)])?;
        if b.needs(q) {
            let gq = b.m("matmul", gs, vec![Arg::Node(kb)])?;
            r.push((q, b.reduce_to(gq, &qs)?));
        }
        if b.needs(k) {
            let gst = b.m("transpose", gs, vec![Arg::Int(-2), Arg::Int(-1)])?;
            let gk = b.m("matmul", gst, vec![Arg::Node(qb)])?;
            r.push((k, fold(b, gk, &ks)?));
        }
    }
    Ok(r)
}
