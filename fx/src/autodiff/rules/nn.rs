//! Reductions, products and the `torch.nn.functional` ops: `sum`/`mean`/`amax`, `matmul`/
//! `linear`/`addmm`, `softmax`/`log_softmax`, `layer_norm`, `embedding`, `dropout`,
//! convolution (the losses: `losses.rs`).

use super::*;

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
    let _ = (out, sp, kwargs);
    let r: Result<Grads> = match name.as_str() {
        "sum" | "mean" => reduce_sum(b, &name, args, kwargs, g),
        "amax" | "amin" => {
            let p = B::new(&["input", "dim", "keepdim"], args, kwargs, &name)?;
            let x = p
                .node("input")
                .ok_or_else(|| AutodiffError::NoRule(name.clone()))?;
            let xs = b.fsizes(x)?;
            let dims = norm_dims(p.int_list("dim").unwrap_or_default(), xs.len())?;
            let keep = p.boolean("keepdim", false);
            let o = b.fwd(out);
            let xb = b.fwd(x);
            let o = restore_dims(b, o, &dims, keep)?;
            let ge = restore_dims(b, g, &dims, keep)?;
            let mask = b.m("eq", xb, vec![Arg::Node(o)])?;
            let cnt = b.m(
                "sum",
                mask,
                vec![
                    ints(&dims.iter().map(|&d| d as i64).collect::<Vec<_>>()),
                    Arg::Bool(true),
                ],
            )?;
            let t = b.m("div", ge, vec![Arg::Node(cnt)])?;
            Ok(vec![(x, b.m("mul", t, vec![Arg::Node(mask)])?)])
        }
        "matmul" | "mm" | "bmm" => {
            let (x, y) = match (args.first(), args.get(1)) {
                (Some(Arg::Node(x)), Some(Arg::Node(y))) => (*x, *y),
                _ => return no_rule(name),
            };
            matmul_grads(b, x, y, g)
        }
        "linear" => {
            let p = B::new(&["input", "weight", "bias"], args, kwargs, &name)?;
            let (Some(x), Some(w)) = (p.node("input"), p.node("weight")) else {
                return no_rule("linear");
            };
            let mut r = Vec::new();
            let xs = b.fsizes(x)?;
            let ws = b.fsizes(w)?;
            if ws.len() != 2 {
                return no_rule("linear with a 1-d weight");
            }
            let (outf, inf) = (ws[0], ws[1]);
            if b.needs(x) {
                let wb = b.fwd(w);
                let gx = b.m("matmul", g, vec![Arg::Node(wb)])?;
                r.push((x, gx));
            }
            if b.needs(w) {
                let xb = b.fwd(x);
                let g2 = b.m("reshape", g, vec![ints(&[-1, outf])])?;
                let x2 = b.m("reshape", xb, vec![ints(&[-1, inf])])?;
                let gt = b.m("t", g2, vec![])?;
                r.push((w, b.m("mm", gt, vec![Arg::Node(x2)])?));
            }
            if let Some(bias) = p.node("bias").filter(|n| b.needs(*n)) {
                let s = b.fsizes(bias)?;
                r.push((bias, b.reduce_to(g, &s)?));
            }
            let _ = xs;
            Ok(r)
        }
        "addmm" => {
            let p = B::new(
                &["input", "mat1", "mat2", "*", "beta", "alpha"],
                args,
                kwargs,
                &name,
            )?;
            let (Some(m1), Some(m2)) = (p.node("mat1"), p.node("mat2")) else {
                return no_rule("addmm");
            };
            let beta = p.float("beta").unwrap_or(1.0);
            let alpha = p.float("alpha").unwrap_or(1.0);
            let mut r = Vec::new();
            if let Some(bias) = p.node("input").filter(|n| b.needs(*n)) {
                let gb = b.scale(g, beta)?;
                let s = b.fsizes(bias)?;
                r.push((bias, b.reduce_to(gb, &s)?));
            }
            let ga = b.scale(g, alpha)?;
            for (input, gi) in matmul_grads(b, m1, m2, ga)? {
                r.push((input, gi));
            }
            Ok(r)
        }
        "baddbmm" => {
            // derivatives.yaml: self: grad * beta (summed to `self`'s broadcast shape),
            // batch1: grad.bmm(batch2ᵀ) * alpha, batch2: batch1ᵀ.bmm(grad) * alpha.
            // `nn.MultiheadAttention` with a mask and `need_weights` adds the mask so.
            let p = B::new(
                &["input", "batch1", "batch2", "*", "beta", "alpha"],
                args,
                kwargs,
                &name,
            )?;
            let (Some(m1), Some(m2)) = (p.node("batch1"), p.node("batch2")) else {
                return no_rule("baddbmm");
            };
            let beta = p.float("beta").unwrap_or(1.0);
            let alpha = p.float("alpha").unwrap_or(1.0);
            let mut r = Vec::new();
            if let Some(input) = p.node("input").filter(|n| b.needs(*n)) {
                let gi = b.scale(g, beta)?;
                let s = b.fsizes(input)?;
                r.push((input, b.reduce_to(gi, &s)?));
            }
            let ga = b.scale(g, alpha)?;
            r.extend(matmul_grads(b, m1, m2, ga)?);
            Ok(r)
        }
        "softmax" | "log_softmax" => {
            let p = B::new(&["input", "dim", "dtype"], args, kwargs, &name)?;
            let x = p
                .node("input")
                .ok_or_else(|| AutodiffError::NoRule(name.clone()))?;
            let Some(d) = p.int("dim") else {
                return no_rule(format!("{name} without dim"));
            };
            // `_softmax_backward_data`/`_log_softmax_backward_data` compute a 16-bit input's
            // gradient in float32 and round once ([`Upcast`]).
            let o = b.fwd(out);
            let (up, o, g) = Upcast::new(b, x, o, g)?;
            let gx = if name == "softmax" {
                let go = b.m("mul", g, vec![Arg::Node(o)])?;
                let s = b.m("sum", go, vec![ints(&[d]), Arg::Bool(true)])?;
                let t = b.m("sub", g, vec![Arg::Node(s)])?;
                b.m("mul", o, vec![Arg::Node(t)])?
            } else {
                let s = b.m("sum", g, vec![ints(&[d]), Arg::Bool(true)])?;
                let e = b.m("exp", o, vec![])?;
                let t = b.m("mul", e, vec![Arg::Node(s)])?;
                b.m("sub", g, vec![Arg::Node(t)])?
            };
            Ok(vec![(x, up.back(b, gx, x)?)])
        }
        "layer_norm" => layer_norm(b, args, kwargs, g),
        "dropout" => {
            // What `random::rewrite_dropout` left: no draw (eval mode, or p = 0), the identity.
            let p = match sp {
                Spelling::Functional => B::new(crate::ops::schema::F_DROPOUT, args, kwargs, &name)?,
                _ => B::catalog("dropout", args, kwargs)?,
            };
            let x = p
                .node("input")
                .ok_or_else(|| AutodiffError::NoRule("dropout".into()))?;
            let training = match sp {
                Spelling::Functional => p.boolean("training", true),
                _ => p.boolean("train", true),
            };
            let prob = p.float("p").unwrap_or(0.5);
            if training && prob != 0.0 {
                return no_rule("dropout (a draw that was not rewritten)");
            }
            Ok(vec![(x, g)])
        }
        "embedding" => {
            // F.embedding(input, weight, padding_idx, max_norm, norm_type, scale_grad_by_freq,
            // sparse); torch.embedding(weight, indices, padding_idx, scale_grad_by_freq, sparse).
            let p = if sp == Spelling::Functional {
                B::new(
                    &[
                        "input",
                        "weight",
                        "padding_idx",
                        "max_norm",
                        "norm_type",
                        "scale_grad_by_freq",
                        "sparse",
                    ],
                    args,
                    kwargs,
                    &name,
                )?
            } else {
                B::new(
                    &[
                        "weight",
                        "input",
                        "padding_idx",
                        "scale_grad_by_freq",
                        "sparse",
                    ],
                    args,
                    kwargs,
                    &name,
                )?
            };
            if p.get("max_norm").is_some()
                || p.boolean("scale_grad_by_freq", false)
                || p.boolean("sparse", false)
            {
                return no_rule("embedding with max_norm, scale_grad_by_freq or sparse");
            }
            let (Some(idx), Some(w)) = (p.node("input"), p.node("weight")) else {
                return no_rule("embedding");
            };
            let ws = b.fsizes(w)?;
            if ws.len() != 2 {
                return no_rule("embedding");
            }
            let ib = b.fwd(idx);
            let mut gg = g;
            if let Some(pad) = p.int("padding_idx") {
                {
                    let pad = if pad < 0 { pad + ws[0] } else { pad };
                    let m = b.m("eq", ib, vec![Arg::Int(pad)])?;
                    let m = b.m("unsqueeze", m, vec![Arg::Int(-1)])?;
                    gg = b.m("masked_fill", gg, vec![Arg::Node(m), Arg::Int(0)])?;
                }
            }
            let flat_i = b.m("reshape", ib, vec![ints(&[-1])])?;
            let flat_g = b.m("reshape", gg, vec![ints(&[-1, ws[1]])])?;
            let z = zeros(b, g, &ws)?;
            let gw = b.m(
                "index_add",
                z,
                vec![Arg::Int(0), Arg::Node(flat_i), Arg::Node(flat_g)],
            )?;
            Ok(vec![(w, gw)])
        }
        "conv1d" | "conv2d" => conv(b, &name, args, kwargs, g),
        _ => return Ok(None),
    };
    r.map(Some)
}

fn reduce_sum(
    b: &mut Bw,
    name: &str,
    args: &[Arg],
    kwargs: &[(String, Arg)],
    g: NodeId,
) -> Result<Grads> {
    let p = B::new(
        &["input", "dim", "keepdim", "*", "dtype"],
        args,
        kwargs,
        name,
    )?;
    let x = p
        .node("input")
        .ok_or_else(|| AutodiffError::NoRule(name.into()))?;
    let xs = b.fsizes(x)?;
    let (dims, keep) = match p.get("dim") {
        None => ((0..xs.len()).collect::<Vec<_>>(), false),
        Some(_) => {
            let d = p
                .int_list("dim")
                .ok_or_else(|| AutodiffError::NoRule(format!("{name} dims")))?;
            let d = if d.is_empty() {
                (0..xs.len() as i64).collect()
            } else {
                d
            };
            (norm_dims(d, xs.len())?, p.boolean("keepdim", false))
        }
    };
    let mut r = restore_dims(b, g, &dims, keep)?;
    r = b.m("expand", r, vec![ints(&xs)])?;
    if name == "mean" {
        let count: i64 = dims.iter().map(|&d| xs[d]).product();
        r = b.m("div", r, vec![Arg::Int(count)])?;
    }
    Ok(vec![(x, r)])
}

/// Gradients of `x @ y` for inputs of rank ≥ 1 (batch dims broadcast).
fn matmul_grads(b: &mut Bw, x: NodeId, y: NodeId, g: NodeId) -> Result<Grads> {
    let xs = b.fsizes(x)?;
    let ys = b.fsizes(y)?;
    let mut r = Vec::new();
    // Rank-1 operands as matrices, the gradient as the product of matrices.
    let gm = match (xs.len(), ys.len()) {
        (1, 1) => return no_rule("matmul of two vectors"),
        (1, _) => b.m("unsqueeze", g, vec![Arg::Int(-2)])?,
        (_, 1) => b.m("unsqueeze", g, vec![Arg::Int(-1)])?,
        _ => g,
    };
    if b.needs(x) {
        let yb = b.fwd(y);
        let ym = if ys.len() == 1 {
            b.m("unsqueeze", yb, vec![Arg::Int(0)])? // (1, k): g (.., n=1) @ (1, k)
        } else {
            b.m("transpose", yb, vec![Arg::Int(-1), Arg::Int(-2)])?
        };
        let gx = b.m("matmul", gm, vec![Arg::Node(ym)])?;
        let gx = if xs.len() == 1 {
            b.m("squeeze", gx, vec![Arg::Int(-2)])?
        } else {
            gx
        };
        r.push((x, b.reduce_to(gx, &xs)?));
    }
    if b.needs(y) && ys.len() == 2 && xs.len() >= 3 {
        // A matrix applied over batch dims (`[B, T, K] @ [K, N]`): its gradient sums the batch,
        // so fold the batch into the rows as eager's autograd does, one `[K, B*T] @ [B*T, N]`
        // GEMM, not a batched product of `B` copies of the result then summed.
        let (k, n) = (ys[0], ys[1]);
        let xb = b.fwd(x);
        let x2 = b.m("reshape", xb, vec![ints(&[-1, k])])?;
        let g2 = b.m("reshape", g, vec![ints(&[-1, n])])?;
        let xt = b.m("t", x2, vec![])?;
        r.push((y, b.m("mm", xt, vec![Arg::Node(g2)])?));
    } else if b.needs(y) {
        let xb = b.fwd(x);
        let xm = if xs.len() == 1 {
            b.m("unsqueeze", xb, vec![Arg::Int(-1)])? // (k, 1)
        } else {
            b.m("transpose", xb, vec![Arg::Int(-1), Arg::Int(-2)])?
        };
        let gy = b.m("matmul", xm, vec![Arg::Node(gm)])?;
        let gy = if ys.len() == 1 {
            b.m("squeeze", gy, vec![Arg::Int(-1)])?
        } else {
            gy
        };
        r.push((y, b.reduce_to(gy, &ys)?));
    }
    Ok(r)
}

fn layer_norm(b: &mut Bw, args: &[Arg], kwargs: &[(String, Arg)], g: NodeId) -> Result<Grads> {
    let p = B::new(
        &[
            "input",
            "normalized_shape",
            "weight",
            "bias",
            "eps",
            "cudnn_enable",
        ],
        args,
        kwargs,
        "layer_norm",
    )?;
    let x = p
        .node("input")
        .ok_or_else(|| AutodiffError::NoRule("layer_norm".into()))?;
    let ns = p
        .int_list("normalized_shape")
        .ok_or_else(|| AutodiffError::NoRule("layer_norm".into()))?;
    let eps = p.float("eps").unwrap_or(1e-5);
    let xs = b.fsizes(x)?;
    let k = ns.len();
    let n = xs.len();
    let dims: Vec<i64> = ((n - k) as i64..n as i64).collect();
    let batch: Vec<i64> = (0..(n - k) as i64).collect();
    // Mean and 1/std recomputed from the saved input (the forward keeps neither); a 16-bit
    // input in float32 ([`Upcast`]).
    let xb = b.fwd(x);
    let (up, xb, g) = Upcast::new(b, x, xb, g)?;
    let mean = b.m("mean", xb, vec![ints(&dims), Arg::Bool(true)])?;
    let xc = b.m("sub", xb, vec![Arg::Node(mean)])?;
    let sq = b.m("mul", xc, vec![Arg::Node(xc)])?;
    let var = b.m("mean", sq, vec![ints(&dims), Arg::Bool(true)])?;
    let var = b.m("add", var, vec![Arg::Float(eps)])?;
    let rstd = b.m("rsqrt", var, vec![])?;
    let xhat = b.m("mul", xc, vec![Arg::Node(rstd)])?;
    let mut r = Vec::new();
    let w = p.node("weight");
    if let Some(wn) = w.filter(|w| b.needs(*w)) {
        let t = b.m("mul", g, vec![Arg::Node(xhat)])?;
        let t = if batch.is_empty() {
            t
        } else {
            b.m("sum", t, vec![ints(&batch), Arg::Bool(false)])?
        };
        r.push((wn, up.back(b, t, wn)?));
    }
    if let Some(bn) = p.node("bias").filter(|n| b.needs(*n)) {
        let t = if batch.is_empty() {
            g
        } else {
            b.m("sum", g, vec![ints(&batch), Arg::Bool(false)])?
        };
        r.push((bn, up.back(b, t, bn)?));
    }
    if b.needs(x) {
        let gh = match w {
            Some(wn) => {
                let wb = b.fwd(wn);
                b.m("mul", g, vec![Arg::Node(wb)])?
            }
            None => g,
        };
        let m1 = b.m("mean", gh, vec![ints(&dims), Arg::Bool(true)])?;
        let t = b.m("mul", gh, vec![Arg::Node(xhat)])?;
        let m2 = b.m("mean", t, vec![ints(&dims), Arg::Bool(true)])?;
        let t = b.m("mul", xhat, vec![Arg::Node(m2)])?;
        let d = b.m("sub", gh, vec![Arg::Node(m1)])?;
        let d = b.m("sub", d, vec![Arg::Node(t)])?;
        let gx = b.m("mul", d, vec![Arg::Node(rstd)])?;
        r.push((x, up.back(b, gx, x)?));
    }
    Ok(r)
}

/// `conv1d`/`conv2d`: derivatives.yaml's `convolution` entry is `convolution_backward(grad,
/// input, weight, bias sizes, stride, padding, dilation, transposed, output_padding, groups,
/// output_mask)`, one extern call whose outputs are taken apart by index.
fn conv(
    b: &mut Bw,
    name: &str,
    args: &[Arg],
    kwargs: &[(String, Arg)],
    g: NodeId,
) -> Result<Grads> {
    let p = B::new(
        &[
            "input", "weight", "bias", "stride", "padding", "dilation", "groups",
        ],
        args,
        kwargs,
        name,
    )?;
    let (Some(x), Some(w)) = (p.node("input"), p.node("weight")) else {
        return no_rule(name);
    };
    if matches!(p.get("padding"), Some(Arg::Str(_))) {
        return no_rule(format!("{name} with string padding"));
    }
    let k = if name == "conv1d" { 1 } else { 2 };
    let per_dim = |v: Option<Vec<i64>>, default: i64| -> Result<Vec<i64>> {
        match v {
            None => Ok(vec![default; k]),
            Some(v) if v.len() == 1 => Ok(vec![v[0]; k]),
            Some(v) if v.len() == k => Ok(v),
            Some(_) => no_rule(format!("{name} arguments")),
        }
    };
    let stride = per_dim(p.int_list("stride"), 1)?;
    let padding = per_dim(p.int_list("padding"), 0)?;
    let dilation = per_dim(p.int_list("dilation"), 1)?;
    let groups = p.int("groups").unwrap_or(1);
    let xs = b.fsizes(x)?;
    if xs.len() != k + 2 {
        return no_rule(format!("{name} on an unbatched input"));
    }
    let ws = b.fsizes(w)?;
    let bias = p.node("bias");
    let mask = [b.needs(x), b.needs(w), bias.is_some_and(|n| b.needs(n))];
    let xb = b.fwd(x);
    let wb = b.fwd(w);
    // Eager's convolution backward (cuDNN, oneDNN) returns its 4-d gradients in the
    // convolution's memory format: channels-last when the input or the weight suggests it, as
    // the forward result (`infer::conv`). Declared contiguous, a channels-last model's backward
    // wrote every gradient downstream of a convolution transposed, and its weight gradients
    // were copied back by `AccumulateGrad` (session 31, resnet50 on the H100).
    let cl = crate::infer::conv::meta_suggests_channels_last(b.fmeta(x)?)
        || crate::infer::conv::meta_suggests_channels_last(b.fmeta(w)?);
    let meta = |b: &Bw, n: NodeId| -> Result<crate::meta::NodeMeta> {
        let m = b.fmeta(n)?;
        let s = m.known_sizes().unwrap_or_default();
        let mut t = TensorMeta::contiguous(m.dtype, m.device.clone(), &s);
        if cl && s.len() == 4 && !s.contains(&0) {
            t.strides = crate::infer::layout::channels_last_strides(&s)
                .into_iter()
                .map(crate::meta::Dim::Known)
                .collect();
        }
        Ok(crate::meta::NodeMeta::Tensor(t))
    };
    // torch returns `None` for a gradient the output mask leaves out.
    let none = crate::meta::NodeMeta::None;
    let bmeta = match bias {
        Some(n) if mask[2] => meta(b, n)?,
        _ => none.clone(),
    };
    let xmeta = if mask[0] { meta(b, x)? } else { none.clone() };
    let wmeta = if mask[1] { meta(b, w)? } else { none };
    let tuple = crate::meta::NodeMeta::Tuple(vec![xmeta, wmeta, bmeta]);
    let r = b.raw(
        "convolution_backward",
        Target::Function("torch.ops.aten.convolution_backward.default".into()),
        vec![
            Arg::Node(g),
            Arg::Node(xb),
            Arg::Node(wb),
            if bias.is_some() {
                ints(&[ws[0]])
            } else {
                Arg::None
            },
            ints(&stride),
            ints(&padding),
            ints(&dilation),
            Arg::Bool(false),
            ints(&vec![0; k]),
            Arg::Int(groups),
            Arg::List(mask.iter().map(|&m| Arg::Bool(m)).collect()),
        ],
        tuple.clone(),
    );
    let crate::meta::NodeMeta::Tuple(items) = tuple else {
        unreachable!()
    };
    let inputs = [Some(x), Some(w), bias].into_iter().zip(mask);
    Ok(tuple_grads(b, r, &items, inputs))
}

/// The gradients a backward call returning a tuple gives (`r`, whose items' metas are
/// `items`): item `i` is the gradient of `inputs[i]`'s node, taken where that input exists and
/// its gradient is needed (`convolution_backward`'s output mask, `embedding_bag`'s weight and
/// per-sample weights).
pub(super) fn tuple_grads(
    b: &mut Bw,
    r: NodeId,
    items: &[crate::meta::NodeMeta],
    inputs: impl IntoIterator<Item = (Option<NodeId>, bool)>,
) -> Grads {
    let mut out = Vec::new();
    for (i, (input, need)) in inputs.into_iter().enumerate() {
        let (Some(input), true) = (input, need) else {
            continue;
        };
        let item = b.raw(
            "getitem",
            Target::Function("operator.getitem".into()),
            vec![Arg::Node(r), Arg::Int(i as i64)],
            items[i].clone(),
        );
        out.push((input, item));
    }
    out
}

/// `torch._weight_norm(v, g, dim)`, what `nn.utils.parametrizations.weight_norm` computes: `v *
/// (g / ‖v‖)`, the norm over every dim but `dim` (over all of `v` for `dim == -1`). Not a
/// catalog op (the forward runs torch's). `derivatives.yaml` (`_weight_norm_interface`,
/// `weight_norm_backward`): `g: sum(grad * v) / ‖v‖`, `v: (g / ‖v‖) * (grad - v * sum(grad * v)
/// / ‖v‖²)`, the sums over the norm's dims.
pub(super) const WEIGHT_NORM: &str = "torch._weight_norm";

pub(super) fn weight_norm(
    b: &mut Bw,
    args: &[Arg],
    kwargs: &[(String, Arg)],
    grad: NodeId,
) -> Result<Grads> {
    let p = B::new(&["v", "g", "dim"], args, kwargs, "_weight_norm")?;
    let (Some(v), Some(gn)) = (p.node("v"), p.node("g")) else {
        return no_rule("_weight_norm");
    };
    let vs = b.fsizes(v)?;
    let dim = p.int("dim").unwrap_or(0);
    let dims: Vec<i64> = if dim == -1 {
        (0..vs.len() as i64).collect()
    } else {
        let d = wrap(dim, vs.len())? as i64;
        (0..vs.len() as i64).filter(|i| *i != d).collect()
    };
    let (vb, gb) = (b.fwd(v), b.fwd(gn));
    let sum = |b: &mut Bw, t: NodeId| b.m("sum", t, vec![ints(&dims), Arg::Bool(true)]);
    let sq = b.m("mul", vb, vec![Arg::Node(vb)])?;
    let norm = sum(b, sq)?;
    let norm = b.m("sqrt", norm, vec![])?;
    let gv = b.m("mul", grad, vec![Arg::Node(vb)])?;
    let dots = sum(b, gv)?;
    let mut r = Vec::new();
    if b.needs(gn) {
        let gg = b.m("div", dots, vec![Arg::Node(norm)])?;
        let gs = b.fsizes(gn)?;
        r.push((gn, b.reduce_to(gg, &gs)?));
    }
    if b.needs(v) {
        let n2 = b.m("mul", norm, vec![Arg::Node(norm)])?;
        let k = b.m("div", dots, vec![Arg::Node(n2)])?;
        let vk = b.m("mul", vb, vec![Arg::Node(k)])?;
        let t = b.m("sub", grad, vec![Arg::Node(vk)])?;
        let scale = b.m("div", gb, vec![Arg::Node(norm)])?;
        let gvv = b.m("mul", scale, vec![Arg::Node(t)])?;
        r.push((v, b.reduce_to(gvv, &vs)?));
    }
    Ok(r)
}
