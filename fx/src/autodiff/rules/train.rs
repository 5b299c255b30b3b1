//! The ops real training steps need beyond `nn.rs`: `batch_norm` (training and eval),
//! `adaptive_avg_pool2d`, `max_pool2d`, `scaled_dot_product_attention`, `hardswish`/
//! `hardsigmoid`/`relu6`. Facts of `derivatives.yaml`: `native_batch_norm` →
//! `native_batch_norm_backward` (from the batch's mean and 1/std, never from the running
//! stats in training), `_adaptive_avg_pool2d` → `_adaptive_avg_pool2d_backward(grad, self)`,
//! `max_pool2d_with_indices` → `max_pool2d_with_indices_backward(grad, self, ..., indices)`
//! (the indices taken again from the saved input, in one call: [`max_pool2d`]),
//! `hardswish` → `grad * (x <= -3 ? 0 : x < 3 ? x/3 + 1/2 : 1)`, `hardsigmoid` →
//! `grad / 6 where -3 < x < 3`, `hardtanh` → `grad where min < x < max`.

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
        "batch_norm" => batch_norm(b, sp, args, kwargs, g),
        "adaptive_avg_pool2d" => {
            let p = B::new(&["input", "output_size"], args, kwargs, &name)?;
            let x = p
                .node("input")
                .ok_or_else(|| AutodiffError::NoRule(name.clone()))?;
            let xs = b.fsizes(x)?;
            // A global average (output 1x1, as every torchvision classifier's head): each
            // input element's gradient is its window's gradient over the window's size, a
            // broadcast the inductor fuses into the next backward kernel (torch's backward
            // kernel took 0.75 ms of resnet50's bf16 step on the H100, session 24).
            let global = matches!(
                p.int_list("output_size").as_deref(),
                Some([1]) | Some([1, 1])
            );
            if global && xs.len() >= 2 {
                let area: i64 = xs[xs.len() - 2..].iter().product();
                let gs = b.m("div", g, vec![Arg::Float(area as f64)])?;
                return Ok(Some(vec![(x, b.m("expand", gs, vec![ints(&xs)])?)]));
            }
            let xb = b.fwd(x);
            let m = contiguous_like(b, xb, &xs)?;
            let r = b.raw(
                "adaptive_avg_pool2d_backward",
                Target::Function("torch.ops.aten._adaptive_avg_pool2d_backward.default".into()),
                vec![Arg::Node(g), Arg::Node(xb)],
                NodeMeta::Tensor(m),
            );
            Ok(vec![(x, r)])
        }
        "max_pool2d" => max_pool2d(b, args, kwargs, g),
        "scaled_dot_product_attention" => sdpa(b, args, kwargs, g),
        "hardswish" | "hardsigmoid" | "relu6" => {
            let x = self_of(args)?;
            let xb = b.fwd(x);
            let gx = match name.as_str() {
                "hardswish" => {
                    let d = b.m("div", xb, vec![Arg::Float(3.0)])?;
                    let d = b.m("add", d, vec![Arg::Float(0.5)])?;
                    let lo = b.m("le", xb, vec![Arg::Float(-3.0)])?;
                    let d = b.m("masked_fill", d, vec![Arg::Node(lo), Arg::Float(0.0)])?;
                    let hi = b.m("ge", xb, vec![Arg::Float(3.0)])?;
                    let d = b.m("masked_fill", d, vec![Arg::Node(hi), Arg::Float(1.0)])?;
                    b.m("mul", g, vec![Arg::Node(d)])?
                }
                other => {
                    let (lo, hi) = if other == "relu6" {
                        (0.0, 6.0)
                    } else {
                        (-3.0, 3.0)
                    };
                    let gs = if other == "relu6" {
                        g
                    } else {
                        b.m("mul", g, vec![Arg::Float(1.0 / 6.0)])?
                    };
                    let ml = b.m("le", xb, vec![Arg::Float(lo)])?;
                    let gs = b.m("masked_fill", gs, vec![Arg::Node(ml), Arg::Float(0.0)])?;
                    let mh = b.m("ge", xb, vec![Arg::Float(hi)])?;
                    b.m("masked_fill", gs, vec![Arg::Node(mh), Arg::Float(0.0)])?
                }
            };
            Ok(vec![(x, gx)])
        }
        _ => return Ok(None),
    };
    let _ = out;
    r.map(Some)
}

/// `torch.batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps,
/// cudnn_enabled)` or `F.batch_norm(input, running_mean, running_var, weight, bias, training,
/// momentum, eps)`. With batch statistics (training, or no running stats) the mean and 1/std
/// are computed again from the saved input, as the forward did; the running-stat update is
/// the forward's (an input write), never repeated here.
///
/// `native_batch_norm_backward`'s form: per channel the two sums `Σg` and `Σg·x̂` (the bias and
/// weight gradients) and the input's gradient `(g - Σg/n - x̂·Σg·x̂/n)·w/σ` from them, so the
/// backward reads the activation and its gradient in one reduction pass and one pointwise
/// pass (the means of `g·w` and `g·w·x̂` it took before were the same sums again, two more
/// passes). A half-precision input is computed in float32, as torch's kernels accumulate; the
/// gradients are cast back to each input's dtype where they are accumulated.
fn batch_norm(
    b: &mut Bw,
    sp: Spelling,
    args: &[Arg],
    kwargs: &[(String, Arg)],
    g: NodeId,
) -> Result<Grads> {
    let sig = if sp == Spelling::Functional {
        crate::ops::schema::F_BATCH_NORM
    } else {
        crate::ops::schema::BATCH_NORM
    };
    let p = B::new(sig, args, kwargs, "batch_norm")?;
    let x = p
        .node("input")
        .ok_or_else(|| AutodiffError::NoRule("batch_norm".into()))?;
    let eps = p.float("eps").unwrap_or(1e-5);
    let xs = b.fsizes(x)?;
    if xs.len() < 2 {
        return no_rule("batch_norm on a 1-d input");
    }
    let n = xs.len();
    let c = xs[1];
    // Elements per channel (a zero-size batch has no statistics; torch raises in the forward).
    let per_channel = (xs.iter().product::<i64>() / c.max(1)).max(1);
    // Per-channel values broadcast as (1, C, 1, ...).
    let mut bshape = vec![1i64; n];
    bshape[1] = c;
    let dims: Vec<i64> = std::iter::once(0).chain(2..n as i64).collect();
    let (rm, rv) = (p.node("running_mean"), p.node("running_var"));
    let batch_stats = p.boolean("training", false) || rm.is_none() || rv.is_none();
    let xb = b.fwd(x);
    let xb = b.float32(xb)?;
    let g32 = b.float32(g)?;
    let (xhat, rstd) = if batch_stats {
        let mean = b.m("mean", xb, vec![ints(&dims), Arg::Bool(true)])?;
        let xc = b.m("sub", xb, vec![Arg::Node(mean)])?;
        let sq = b.m("mul", xc, vec![Arg::Node(xc)])?;
        let var = b.m("mean", sq, vec![ints(&dims), Arg::Bool(true)])?;
        let var = b.m("add", var, vec![Arg::Float(eps)])?;
        let rstd = b.m("rsqrt", var, vec![])?;
        (b.m("mul", xc, vec![Arg::Node(rstd)])?, rstd)
    } else {
        let (rm, rv) = (rm.unwrap(), rv.unwrap());
        let rmb = b.fwd(rm);
        let rvb = b.fwd(rv);
        let rmb = b.m("reshape", rmb, vec![ints(&bshape)])?;
        let rvb = b.m("reshape", rvb, vec![ints(&bshape)])?;
        let var = b.m("add", rvb, vec![Arg::Float(eps)])?;
        let rstd = b.m("rsqrt", var, vec![])?;
        let xc = b.m("sub", xb, vec![Arg::Node(rmb)])?;
        (b.m("mul", xc, vec![Arg::Node(rstd)])?, rstd)
    };
    let norm = crate::autodiff::decompose::Normalized {
        x,
        weight: p.node("weight"),
        bias: p.node("bias"),
        dims: &dims,
        bshape: &bshape,
        count: per_channel,
        batch_stats,
    };
    crate::autodiff::decompose::normalized_grads(b, &norm, g32, xhat, rstd)
}

/// `max_pool2d`: the forward keeps no indices, so the backward takes the argmax again from the
/// saved input (the same windows) and routes each window's gradient to it:
/// `torchferro._aot_helpers.max_pool2d_backward(grad, self, kernel, stride, padding, dilation,
/// ceil_mode)`, torch's `max_pool2d_with_indices` then `max_pool2d_with_indices_backward` on
/// the host. One call rather than the two aten ops: the inductor lowers it as a gather over
/// the windows holding each input position (`lower::pool::max_pool_backward`), so neither
/// the indices nor the forward pool run again (resnet50's backward spent 0.68 ms of its
/// channels-last bf16 step in torch's two kernels, H100, session 33).
fn max_pool2d(b: &mut Bw, args: &[Arg], kwargs: &[(String, Arg)], g: NodeId) -> Result<Grads> {
    let p = B::new(crate::ops::schema::F_MAX_POOL2D, args, kwargs, "max_pool2d")?;
    if p.boolean("return_indices", false) {
        return no_rule("max_pool2d with return_indices");
    }
    let x = p
        .node("input")
        .ok_or_else(|| AutodiffError::NoRule("max_pool2d".into()))?;
    let bad = || AutodiffError::NoRule("max_pool2d arguments".into());
    let k = super::index::pair(p.int_list("kernel_size")).ok_or_else(bad)?;
    let s = match p.int_list("stride") {
        None => k.clone(),
        Some(v) if v.is_empty() => k.clone(),
        v => super::index::pair(v).ok_or_else(bad)?,
    };
    let pad = super::index::pair(p.int_list("padding")).unwrap_or(vec![0, 0]);
    let dil = super::index::pair(p.int_list("dilation")).unwrap_or(vec![1, 1]);
    let ceil = p.boolean("ceil_mode", false);
    let xb = b.fwd(x);
    let xm = contiguous_like(b, xb, &b.fsizes(x)?)?;
    let a = vec![
        Arg::Node(g),
        Arg::Node(xb),
        ints(&k),
        ints(&s),
        ints(&pad),
        ints(&dil),
        Arg::Bool(ceil),
    ];
    let gx = b.raw(
        "max_pool2d_backward",
        Target::Function(MAX_POOL2D_BACKWARD.into()),
        a,
        NodeMeta::Tensor(xm),
    );
    Ok(vec![(x, gx)])
}

/// The host call [`max_pool2d`]'s backward is (the inductor lowers it by this name).
pub const MAX_POOL2D_BACKWARD: &str = "torchferro._aot_helpers.max_pool2d_backward";

/// `scaled_dot_product_attention` by its math form `softmax(q kᵀ · scale + mask) v`: the
/// probabilities are computed again from the saved q, k (and mask), then
/// `gv = pᵀ g`, `gp = g vᵀ`, `gs = p (gp - Σ gp·p)`, `gq = gs k · scale`, `gk = gsᵀ q · scale`.
/// With `enable_gqa` the key/value heads are repeated as the forward repeated them. Dropout
/// in attention never reaches this rule: `random::rewrite_sdpa_dropout` writes the op out.
fn sdpa(b: &mut Bw, args: &[Arg], kwargs: &[(String, Arg)], g: NodeId) -> Result<Grads> {
    let p = B::catalog("scaled_dot_product_attention", args, kwargs)?;
    if p.float("dropout_p").is_some_and(|d| d != 0.0) {
        // `random::rewrite_sdpa_dropout` writes these out in math form; one left is a form
        // it does not model.
        return no_rule("scaled_dot_product_attention with dropout_p > 0");
    }
    let (Some(q), Some(k), Some(v)) = (p.node("query"), p.node("key"), p.node("value")) else {
        return no_rule("scaled_dot_product_attention");
    };
    let gqa = gqa_repeats(
        b.fsizes(q)?.as_slice(),
        &b.fsizes(k)?,
        p.boolean("enable_gqa", false),
    )?;
    if p.get("attn_mask").is_some() && p.node("attn_mask").is_none() {
        return no_rule("scaled_dot_product_attention with a non-tensor mask");
    }
    let qs = b.fsizes(q)?;
    let ks = b.fsizes(k)?;
    let vs = b.fsizes(v)?;
    if qs.len() < 2 || ks.len() != qs.len() || vs.len() != qs.len() {
        return no_rule("scaled_dot_product_attention of mixed ranks");
    }
    let e = qs[qs.len() - 1];
    let scale = p.float("scale").unwrap_or(1.0 / (e as f64).sqrt());
    let (l, s) = (qs[qs.len() - 2], ks[ks.len() - 2]);
    let qb = b.fwd(q);
    let mut kb = b.fwd(k);
    let mut vb = b.fwd(v);
    // Grouped-query attention: each key/value head serves `r` query heads; the math form runs
    // on the repeated heads and their gradients are summed back per group.
    let (ks_rep, vs_rep) = match gqa {
        Some(r) => {
            kb = repeat_heads(b, kb, &ks, r)?;
            vb = repeat_heads(b, vb, &vs, r)?;
            (b.bsizes(kb)?, b.bsizes(vb)?)
        }
        None => (ks.clone(), vs.clone()),
    };
    let heads = qs.len().saturating_sub(3);
    let kt = b.m("transpose", kb, vec![Arg::Int(-2), Arg::Int(-1)])?;
    let sc = b.m("matmul", qb, vec![Arg::Node(kt)])?;
    let mut sc = b.m("mul", sc, vec![Arg::Float(scale)])?;
    if p.boolean("is_causal", false) {
        let ones = b.mk(
            "new_ones",
            qb,
            vec![ints(&[l, s])],
            vec![("dtype", Arg::DType(DType::Bool))],
        )?;
        // `fx::infer` has no shape rule for `tril`: its result is laid out as its input.
        let om = b.bmeta(ones)?;
        let keep = b.call_with_meta(
            Target::Method("tril".into()),
            vec![Arg::Node(ones)],
            TensorMeta::contiguous(DType::Bool, om.device.clone(), &[l, s]),
        );
        let drop = b.m("logical_not", keep, vec![])?;
        sc = b.m(
            "masked_fill",
            sc,
            vec![Arg::Node(drop), Arg::Float(f64::NEG_INFINITY)],
        )?;
    }
    let mask = p.node("attn_mask");
    let float_mask = match mask {
        Some(m) => {
            let mb = b.fwd(m);
            if b.fmeta(m)?.dtype == DType::Bool {
                let drop = b.m("logical_not", mb, vec![])?;
                sc = b.m(
                    "masked_fill",
                    sc,
                    vec![Arg::Node(drop), Arg::Float(f64::NEG_INFINITY)],
                )?;
                None
            } else {
                // Eager's math form adds the mask into the scores in place: the sum keeps the
                // scores' dtype (a float32 mask beside bfloat16 queries is rounded to it).
                let sd = b.bmeta(sc)?.dtype;
                let mb = if b.fmeta(m)?.dtype == sd {
                    mb
                } else {
                    b.m("to", mb, vec![Arg::DType(sd)])?
                };
                sc = b.m("add", sc, vec![Arg::Node(mb)])?;
                Some(m)
            }
        }
        None => None,
    };
    let pr = b.m("softmax", sc, vec![Arg::Int(-1)])?;
    let mut r = Vec::new();
    if b.needs(v) {
        let pt = b.m("transpose", pr, vec![Arg::Int(-2), Arg::Int(-1)])?;
        let gv = b.m("matmul", pt, vec![Arg::Node(g)])?;
        let gv = b.reduce_to(gv, &vs_rep)?;
        let gv = match gqa {
            Some(r) => super::index::unrepeat(b, gv, &vs, heads, r)?,
            None => gv,
        };
        r.push((v, gv));
    }
    let needs_s = b.needs(q) || b.needs(k) || float_mask.is_some_and(|m| b.needs(m));
    if needs_s {
        let vt = b.m("transpose", vb, vec![Arg::Int(-2), Arg::Int(-1)])?;
        let gp = b.m("matmul", g, vec![Arg::Node(vt)])?;
        let t = b.m("mul", gp, vec![Arg::Node(pr)])?;
        let sm = b.m("sum", t, vec![ints(&[-1]), Arg::Bool(true)])?;
        let d = b.m("sub", gp, vec![Arg::Node(sm)])?;
        let gs = b.m("mul", pr, vec![Arg::Node(d)])?;
        if let Some(m) = float_mask.filter(|m| b.needs(*m)) {
            let ms = b.fsizes(m)?;
            r.push((m, b.reduce_to(gs, &ms)?));
        }
        let gsc = b.m("mul", gs, vec![Arg::Float(scale)])?;
        if b.needs(q) {
            let gq = b.m("matmul", gsc, vec![Arg::Node(kb)])?;
            r.push((q, b.reduce_to(gq, &qs)?));
        }
        if b.needs(k) {
            let gt = b.m("transpose", gsc, vec![Arg::Int(-2), Arg::Int(-1)])?;
            let gk = b.m("matmul", gt, vec![Arg::Node(qb)])?;
            let gk = b.reduce_to(gk, &ks_rep)?;
            let gk = match gqa {
                Some(r) => super::index::unrepeat(b, gk, &ks, heads, r)?,
                None => gk,
            };
            r.push((k, gk));
        }
    }
    Ok(r)
}

/// `enable_gqa` with fewer key heads than query heads (dim -3): how many query heads share
/// one key/value head; `None` when the heads are not grouped.
fn gqa_repeats(qs: &[i64], ks: &[i64], enabled: bool) -> Result<Option<i64>> {
    if !enabled || qs.len() < 3 || ks.len() < 3 {
        return Ok(None);
    }
    let (hq, hk) = (qs[qs.len() - 3], ks[ks.len() - 3]);
    if hq == hk {
        return Ok(None);
    }
    if hk == 0 || hq % hk != 0 {
        return no_rule("scaled_dot_product_attention with enable_gqa and unequal head groups");
    }
    Ok(Some(hq / hk))
}

/// `x.repeat_interleave(r, dim=-3)` in the backward (the heads of grouped-query attention).
fn repeat_heads(b: &mut Bw, x: NodeId, xs: &[i64], r: i64) -> Result<NodeId> {
    let mut sizes = xs.to_vec();
    let d = sizes.len() - 3;
    sizes[d] *= r;
    let m = contiguous_like(b, x, &sizes)?;
    Ok(b.call_with_meta(
        Target::Method("repeat_interleave".into()),
        vec![Arg::Node(x), Arg::Int(r), Arg::Int(-3)],
        m,
    ))
}

/// The fused CPU attention (`fused_attention::rewrite_sdpa_fused`): torch's fused backward
/// `_scaled_dot_product_flash_attention_for_cpu_backward(grad, q, k, v, out, logsumexp,
/// dropout_p, is_causal, attn_mask=, scale=)` on the saved output and `logsumexp`, one call
/// for the three gradients (derivatives.yaml's rule of the fused op; grouped heads come back
/// per key/value head from the kernel).
pub(super) fn sdpa_fused_backward(
    b: &mut Bw,
    id: NodeId,
    args: &[Arg],
    kwargs: &[(String, Arg)],
    parts: &std::collections::HashMap<usize, NodeId>,
) -> Result<Grads> {
    use crate::autodiff::fused_attention::{
        cuda_grad_meta, grad_meta, CUDA_BACKWARD, FLASH_CPU_BACKWARD,
    };
    let NodeKind::Call { target, .. } = &b.f.node(id).kind else {
        return no_rule("fused attention");
    };
    let cpu = target.name() != crate::autodiff::fused_attention::CUDA_FORWARD;
    let Some(&g) = parts.get(&0) else {
        // Only the logsumexp was read: it carries no gradient.
        return Ok(vec![]);
    };
    let node = |a: Option<&Arg>| match a {
        Some(Arg::Node(n)) => Some(*n),
        _ => None,
    };
    let (Some(q), Some(k), Some(v)) = (node(args.first()), node(args.get(1)), node(args.get(2)))
    else {
        return no_rule("fused attention without tensor operands");
    };
    // The forward's items: `fused[0]` (the attention's result), `fused[1]` (logsumexp).
    let item = |i: usize| {
        b.f.users(id)
            .into_iter()
            .find(|&u| match &b.f.node(u).kind {
                crate::graph::NodeKind::Call { target, args, .. } => {
                    super::tuple_item(b.f, target, args) == Some((id, i))
                }
                _ => false,
            })
    };
    let (Some(out), Some(lse)) = (item(0), item(1)) else {
        return no_rule("fused attention without its output and logsumexp items");
    };
    // The CPU kernel's gradient layout is known; the CUDA host call's result is copied into
    // the layout declared here where its backend gives another.
    let metas = [q, k, v]
        .iter()
        .map(|&n| {
            let m = b.fmeta(n).ok()?;
            if cpu {
                grad_meta(m)
            } else {
                let mut c = cuda_grad_meta(m)?;
                c.requires_grad = false;
                Some(c)
            }
        })
        .collect::<Option<Vec<_>>>()
        .ok_or_else(|| AutodiffError::Unsupported("fused attention of symbolic sizes".into()))?;
    let mut a = vec![Arg::Node(g)];
    for n in [q, k, v, out, lse] {
        a.push(Arg::Node(b.fwd(n)));
    }
    if cpu {
        // (dropout_p, is_causal) of the forward call.
        a.push(args.get(3).cloned().unwrap_or(Arg::Float(0.0)));
        a.push(args.get(4).cloned().unwrap_or(Arg::Bool(false)));
    } else {
        // (attn_mask, is_causal, scale) of the forward host call.
        a.push(match args.get(3) {
            Some(Arg::Node(m)) => Arg::Node(b.fwd(*m)),
            _ => Arg::None,
        });
        a.push(args.get(4).cloned().unwrap_or(Arg::Bool(false)));
        a.push(args.get(5).cloned().unwrap_or(Arg::None));
    }
    let mut kw = Vec::new();
    for (key, val) in kwargs {
        let val = match val {
            Arg::Node(n) => Arg::Node(b.fwd(*n)),
            other => other.clone(),
        };
        kw.push((key.clone(), val));
    }
    let t = b.g.call(
        "sdpa_backward",
        Target::Function(
            if cpu {
                FLASH_CPU_BACKWARD
            } else {
                CUDA_BACKWARD
            }
            .into(),
        ),
        a,
        kw,
        NodeMeta::Tuple(metas.iter().cloned().map(NodeMeta::Tensor).collect()),
    );
    let mut r = Vec::new();
    for (i, (x, m)) in [q, k, v].into_iter().zip(metas).enumerate() {
        if b.needs(x) {
            let gi = b.raw(
                "getitem",
                Target::Function("operator.getitem".into()),
                vec![Arg::Node(t), Arg::Int(i as i64)],
                NodeMeta::Tensor(m),
            );
            r.push((x, gi));
        }
    }
    Ok(r)
}
