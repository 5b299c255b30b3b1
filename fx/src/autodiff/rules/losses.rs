//! The losses of `torch.nn.functional`: class losses (`cross_entropy` with weights, label
//! smoothing, ignored rows or class probabilities; `nll_loss`), the regression losses (`mse_loss`,
//! `l1_loss`, `smooth_l1_loss`, `huber_loss`), the binary ones (`binary_cross_entropy`,
//! `binary_cross_entropy_with_logits` with `weight`/`pos_weight`), `kl_div`, and the pair losses
//! (`margin_ranking_loss`, `cosine_embedding_loss`, `triplet_margin_loss`).
//!
//! Each gradient is derivatives.yaml's formula (or, for the losses torch writes as a composite
//! of other ops, the chain rule through that composite's ops) in the catalog's vocabulary, so the
//! inductor fuses it into the kernels around it; the forward call stays one op (a host call on
//! the inductor, as `mse_loss` was). A form a rule does not model (legacy `size_average`/
//! `reduce`, an elementwise `weight` on the regression losses, a target that takes a gradient
//! where torch's own gradient is not a closed form here) answers no rule: the graph runs through
//! torch's autograd, never with a wrong gradient.

use super::*;

pub(super) fn rule(b: &mut Bw, c: &Call) -> Result<Option<Grads>> {
    let Call {
        name,
        sp,
        args,
        kwargs,
        g,
        ..
    } = *c;
    let r = match name {
        "cross_entropy" | "nll_loss" => class_loss(b, name, args, kwargs, g),
        "mse_loss" => mse_loss(b, args, kwargs, g),
        // `torch.l1_loss` and friends take an int reduction: only the functional spellings bind.
        _ if sp != Spelling::Functional => return Ok(None),
        "l1_loss" | "smooth_l1_loss" | "huber_loss" => regression(b, name, args, kwargs, g),
        "binary_cross_entropy" => bce(b, args, kwargs, g),
        "binary_cross_entropy_with_logits" => bce_with_logits(b, args, kwargs, g),
        "kl_div" => kl_div(b, args, kwargs, g),
        "margin_ranking_loss" => margin_ranking(b, args, kwargs, g),
        "cosine_embedding_loss" => cosine_embedding(b, args, kwargs, g),
        "triplet_margin_loss" => triplet_margin(b, args, kwargs, g),
        _ => return Ok(None),
    };
    r.map(Some)
}

/// The legacy `size_average`/`reduce` arguments (any value) are not modelled.
fn legacy(p: &B, name: &str) -> Result<()> {
    if p.get("size_average").is_some() || p.get("reduce").is_some() {
        return no_rule(format!("{name} with legacy size_average/reduce"));
    }
    Ok(())
}

/// `d` (the derivative of each element of the unreduced loss) times the output's gradient:
/// `g` itself for `none` (one per element) and `sum`, `g / n` for `mean` over `d`'s `n`
/// elements (`apply_loss_reduction`'s mean is a mean of the broadcast elementwise loss).
fn times_grad(b: &mut Bw, d: NodeId, g: NodeId, reduction: &str, name: &str) -> Result<NodeId> {
    let gs = match reduction {
        "none" | "sum" => g,
        "mean" => {
            let n: i64 = b.bsizes(d)?.iter().product();
            b.m("div", g, vec![Arg::Int(n)])?
        }
        other => return no_rule(format!("{name}(reduction={other:?})")),
    };
    b.m("mul", d, vec![Arg::Node(gs)])
}

/// The input's gradient of a binary cross entropy from its pointwise derivative `d`: times the
/// elementwise `weight` (if any) and the reduced grad `g`, summed back over broadcasting.
fn weighted_input_grad(
    b: &mut Bw,
    x: NodeId,
    mut d: NodeId,
    weight: Option<NodeId>,
    g: NodeId,
    reduction: &str,
    name: &str,
) -> Result<Grads> {
    if let Some(w) = weight {
        let wb = b.fwd(w);
        d = b.m("mul", d, vec![Arg::Node(wb)])?;
    }
    let gd = times_grad(b, d, g, reduction, name)?;
    if !b.needs(x) {
        return Ok(vec![]);
    }
    let xs = b.fsizes(x)?;
    Ok(vec![(x, b.reduce_to(gd, &xs)?)])
}

/// The gradients of a loss of `x - t`: `gd` for `x` and `-gd` for `t`, each summed back over
/// broadcasting (the regression losses are odd in `x - t`: derivatives.yaml gives the target
/// the same backward with `self` and `target` swapped).
fn of_difference(b: &mut Bw, x: NodeId, t: NodeId, gd: NodeId) -> Result<Grads> {
    let mut r = Vec::new();
    if b.needs(x) {
        let xs = b.fsizes(x)?;
        r.push((x, b.reduce_to(gd, &xs)?));
    }
    if b.needs(t) {
        let ts = b.fsizes(t)?;
        let neg = b.m("neg", gd, vec![])?;
        r.push((t, b.reduce_to(neg, &ts)?));
    }
    Ok(r)
}

/// A target that takes a gradient where the rule gives none: no rule (never a missing one).
fn target_without_rule(b: &Bw, t: NodeId, name: &str) -> Result<()> {
    if b.needs(t) {
        return no_rule(format!("{name} with a target that requires grad"));
    }
    Ok(())
}

/// `mse_loss(input, target, reduction)`: `d = 2 (input - target)`, scaled by the output's
/// gradient (divided by the element count for `mean`); the target gets `-d` (both summed back
/// over broadcasting).
fn mse_loss(b: &mut Bw, args: &[Arg], kwargs: &[(String, Arg)], g: NodeId) -> Result<Grads> {
    let p = B::new(
        &[
            "input",
            "target",
            "size_average",
            "reduce",
            "reduction",
            "weight",
        ],
        args,
        kwargs,
        "mse_loss",
    )?;
    legacy(&p, "mse_loss")?;
    if p.get("weight").is_some() {
        return no_rule("mse_loss with weight");
    }
    let (Some(x), Some(t)) = (p.node("input"), p.node("target")) else {
        return no_rule("mse_loss");
    };
    let xb = b.fwd(x);
    let tb = b.fwd(t);
    let diff = b.m("sub", xb, vec![Arg::Node(tb)])?;
    let n: i64 = b.bsizes(diff)?.iter().product();
    let d = match p.str("reduction").unwrap_or("mean") {
        "mean" => b.scale(diff, 2.0 / n.max(1) as f64)?,
        "sum" | "none" => b.scale(diff, 2.0)?,
        other => return no_rule(format!("mse_loss(reduction={other:?})")),
    };
    let gd = b.m("mul", d, vec![Arg::Node(g)])?;
    of_difference(b, x, t, gd)
}

/// `l1_loss` (torch's composite `|x - t|`: `sgn(x - t)`), `smooth_l1_loss`
/// (`smooth_l1_loss_backward`: `(x - t) / beta` where `|x - t| < beta`, else `sgn(x - t)`;
/// `beta = 0` is `l1_loss`) and `huber_loss` (`huber_loss_backward`: `x - t` clamped to
/// `[-delta, delta]`).
fn regression(
    b: &mut Bw,
    name: &str,
    args: &[Arg],
    kwargs: &[(String, Arg)],
    g: NodeId,
) -> Result<Grads> {
    let sig: &[&'static str] = match name {
        "l1_loss" => &[
            "input",
            "target",
            "size_average",
            "reduce",
            "reduction",
            "weight",
        ],
        "smooth_l1_loss" => &[
            "input",
            "target",
            "size_average",
            "reduce",
            "reduction",
            "beta",
        ],
        _ => &["input", "target", "reduction", "delta", "weight"],
    };
    let p = B::new(sig, args, kwargs, name)?;
    legacy(&p, name)?;
    if p.get("weight").is_some() {
        return no_rule(format!("{name} with weight"));
    }
    let (Some(x), Some(t)) = (p.node("input"), p.node("target")) else {
        return no_rule(name);
    };
    let xb = b.fwd(x);
    let tb = b.fwd(t);
    let diff = b.m("sub", xb, vec![Arg::Node(tb)])?;
    let d = match name {
        "huber_loss" => {
            let delta = p.float("delta").unwrap_or(1.0);
            b.m("clamp", diff, vec![Arg::Float(-delta), Arg::Float(delta)])?
        }
        _ => {
            let sign = b.m("sgn", diff, vec![])?;
            let beta = if name == "smooth_l1_loss" {
                p.float("beta").unwrap_or(1.0)
            } else {
                0.0
            };
            if beta == 0.0 {
                sign
            } else {
                let abs = b.m("abs", diff, vec![])?;
                let inner = b.m("lt", abs, vec![Arg::Float(beta)])?;
                let lin = b.m("div", diff, vec![Arg::Float(beta)])?;
                b.m("where", lin, vec![Arg::Node(inner), Arg::Node(sign)])?
            }
        }
    };
    let gd = times_grad(b, d, g, p.str("reduction").unwrap_or("mean"), name)?;
    of_difference(b, x, t, gd)
}

/// `binary_cross_entropy_backward`: `(x - t) / max((1 - x) x, 1e-12) * weight`.
fn bce(b: &mut Bw, args: &[Arg], kwargs: &[(String, Arg)], g: NodeId) -> Result<Grads> {
    const NAME: &str = "binary_cross_entropy";
    let p = B::new(
        &[
            "input",
            "target",
            "weight",
            "size_average",
            "reduce",
            "reduction",
        ],
        args,
        kwargs,
        NAME,
    )?;
    legacy(&p, NAME)?;
    let (Some(x), Some(t)) = (p.node("input"), p.node("target")) else {
        return no_rule(NAME);
    };
    target_without_rule(b, t, NAME)?;
    let weight = p.node("weight");
    if weight.is_some_and(|w| b.needs(w)) {
        return no_rule(format!("{NAME} with a weight that requires grad"));
    }
    let xb = b.fwd(x);
    let tb = b.fwd(t);
    let num = b.m("sub", xb, vec![Arg::Node(tb)])?;
    let one_minus_x = one_minus(b, xb)?;
    let den = b.m("mul", one_minus_x, vec![Arg::Node(xb)])?;
    let den = b.m("clamp_min", den, vec![Arg::Float(1e-12)])?;
    let d = b.m("div", num, vec![Arg::Node(den)])?;
    weighted_input_grad(
        b,
        x,
        d,
        weight,
        g,
        p.str("reduction").unwrap_or("mean"),
        NAME,
    )
}

/// `binary_cross_entropy_with_logits_backward`: `(sigmoid(x) (pw t + 1 - t) - pw t) * weight`
/// with a `pos_weight` `pw`, `(sigmoid(x) - t) * weight` without.
fn bce_with_logits(b: &mut Bw, args: &[Arg], kwargs: &[(String, Arg)], g: NodeId) -> Result<Grads> {
    const NAME: &str = "binary_cross_entropy_with_logits";
    let p = B::new(
        &[
            "input",
            "target",
            "weight",
            "size_average",
            "reduce",
            "reduction",
            "pos_weight",
        ],
        args,
        kwargs,
        NAME,
    )?;
    legacy(&p, NAME)?;
    let (Some(x), Some(t)) = (p.node("input"), p.node("target")) else {
        return no_rule(NAME);
    };
    target_without_rule(b, t, NAME)?;
    let weight = p.node("weight");
    let pos = p.node("pos_weight");
    if weight.into_iter().chain(pos).any(|w| b.needs(w)) {
        return no_rule(format!("{NAME} with a weight that requires grad"));
    }
    let xb = b.fwd(x);
    let tb = b.fwd(t);
    let s = b.m("sigmoid", xb, vec![])?;
    let d = match pos {
        None => b.m("sub", s, vec![Arg::Node(tb)])?,
        Some(pw) => {
            let pwb = b.fwd(pw);
            let pt = b.m("mul", pwb, vec![Arg::Node(tb)])?;
            let f = b.m("sub", pt, vec![Arg::Node(tb)])?;
            let f = b.m("add", f, vec![Arg::Float(1.0)])?;
            let sf = b.m("mul", s, vec![Arg::Node(f)])?;
            b.m("sub", sf, vec![Arg::Node(pt)])?
        }
    };
    weighted_input_grad(
        b,
        x,
        d,
        weight,
        g,
        p.str("reduction").unwrap_or("mean"),
        NAME,
    )
}

/// `kl_div` (torch's composite: `target * (log(target) - input)`, or `exp(target) * (target -
/// input)` with `log_target`): the input's gradient is `-target` (`-exp(target)`); with
/// `log_target` the target's is `exp(target) * (target - input + 1)`. `batchmean` is the sum
/// divided by the input's first size, as `F.kl_div` computes it.
fn kl_div(b: &mut Bw, args: &[Arg], kwargs: &[(String, Arg)], g: NodeId) -> Result<Grads> {
    const NAME: &str = "kl_div";
    let p = B::new(
        &[
            "input",
            "target",
            "size_average",
            "reduce",
            "reduction",
            "log_target",
        ],
        args,
        kwargs,
        NAME,
    )?;
    legacy(&p, NAME)?;
    let (Some(x), Some(t)) = (p.node("input"), p.node("target")) else {
        return no_rule(NAME);
    };
    let log_target = p.boolean("log_target", false);
    if !log_target {
        // `xlogy(t, t)`'s gradient is NaN at t = 0 in eager; not modelled.
        target_without_rule(b, t, NAME)?;
    }
    let xs = b.fsizes(x)?;
    let tb = b.fwd(t);
    let et = if log_target {
        b.m("exp", tb, vec![])?
    } else {
        tb
    };
    let bs = broadcast(&xs, &b.fsizes(t)?);
    let gs = match p.str("reduction").unwrap_or("mean") {
        "batchmean" => b.m("div", g, vec![Arg::Int(xs.first().copied().unwrap_or(1))])?,
        "mean" => b.m("div", g, vec![Arg::Int(bs.iter().product())])?,
        "sum" | "none" => g,
        other => return no_rule(format!("{NAME}(reduction={other:?})")),
    };
    let mut r = Vec::new();
    if b.needs(x) {
        let gx = b.m("mul", et, vec![Arg::Node(gs)])?;
        let gx = b.m("neg", gx, vec![])?;
        // `-target * g` has the target's shape (or `g`'s, the broadcast one, for `none`): made
        // the broadcast shape, then summed back to the input's.
        let gx = b.m("expand", gx, vec![ints(&bs)])?;
        r.push((x, b.reduce_to(gx, &xs)?));
    }
    if b.needs(t) {
        let xb = b.fwd(x);
        let diff = b.m("sub", tb, vec![Arg::Node(xb)])?;
        let diff = b.m("add", diff, vec![Arg::Float(1.0)])?;
        let gt = b.m("mul", et, vec![Arg::Node(diff)])?;
        let gt = b.m("mul", gt, vec![Arg::Node(gs)])?;
        let ts = b.fsizes(t)?;
        r.push((t, b.reduce_to(gt, &ts)?));
    }
    Ok(r)
}

/// The broadcast of two shapes (both are valid operands of one op: the forward ran).
fn broadcast(a: &[i64], c: &[i64]) -> Vec<i64> {
    let n = a.len().max(c.len());
    (0..n)
        .map(|i| {
            let x = (i + a.len()).checked_sub(n).map_or(1, |j| a[j]);
            let y = (i + c.len()).checked_sub(n).map_or(1, |j| c[j]);
            if x == 1 {
                y
            } else {
                x
            }
        })
        .collect()
}

/// `margin_ranking_loss` (torch's composite `clamp_min(-y (x1 - x2) + margin, 0)`): where the
/// hinge is active (`>= 0`, clamp_min's mask), `x1` gets `-y` and `x2` gets `y`.
fn margin_ranking(b: &mut Bw, args: &[Arg], kwargs: &[(String, Arg)], g: NodeId) -> Result<Grads> {
    const NAME: &str = "margin_ranking_loss";
    let p = B::new(
        &[
            "input1",
            "input2",
            "target",
            "margin",
            "size_average",
            "reduce",
            "reduction",
        ],
        args,
        kwargs,
        NAME,
    )?;
    legacy(&p, NAME)?;
    let (Some(x1), Some(x2), Some(y)) = (p.node("input1"), p.node("input2"), p.node("target"))
    else {
        return no_rule(NAME);
    };
    target_without_rule(b, y, NAME)?;
    let margin = p.float("margin").unwrap_or(0.0);
    let (x1b, x2b, yb) = (b.fwd(x1), b.fwd(x2), b.fwd(y));
    let diff = b.m("sub", x1b, vec![Arg::Node(x2b)])?;
    let h = b.m("mul", diff, vec![Arg::Node(yb)])?;
    let h = b.m("neg", h, vec![])?;
    let h = b.m("add", h, vec![Arg::Float(margin)])?;
    let active = b.m("ge", h, vec![Arg::Int(0)])?;
    let ny = b.m("neg", yb, vec![])?;
    // `-y` broadcast to the loss's shape (`h`'s) where active, 0 elsewhere.
    let zero = b.m("mul", h, vec![Arg::Float(0.0)])?;
    let d = b.m("where", ny, vec![Arg::Node(active), Arg::Node(zero)])?;
    let gd = times_grad(b, d, g, p.str("reduction").unwrap_or("mean"), NAME)?;
    of_difference(b, x1, x2, gd)
}

/// `cosine_embedding_loss` (torch's composite over the last dim of (N, D) inputs: `cos =
/// <x1, x2> / sqrt((|x1|² + 1e-12)(|x2|² + 1e-12))`, loss `1 - cos` where `y == 1`,
/// `clamp_min(cos - margin, 0)` where `y == -1`): `dL/dcos` is `-1`, `1` where the hinge is
/// active (`>= 0`), or 0; `dcos/dx1 = x2 / denom - cos x1 / m1` (and symmetrically for `x2`).
fn cosine_embedding(
    b: &mut Bw,
    args: &[Arg],
    kwargs: &[(String, Arg)],
    g: NodeId,
) -> Result<Grads> {
    const NAME: &str = "cosine_embedding_loss";
    let p = B::new(
        &[
            "input1",
            "input2",
            "target",
            "margin",
            "size_average",
            "reduce",
            "reduction",
        ],
        args,
        kwargs,
        NAME,
    )?;
    legacy(&p, NAME)?;
    let (Some(x1), Some(x2), Some(y)) = (p.node("input1"), p.node("input2"), p.node("target"))
    else {
        return no_rule(NAME);
    };
    let (s1, s2) = (b.fsizes(x1)?, b.fsizes(x2)?);
    if s1.len() != 2 || s1 != s2 || b.fsizes(y)? != [s1[0]] {
        return no_rule(format!(
            "{NAME} on other than (N, D) inputs and (N,) targets"
        ));
    }
    target_without_rule(b, y, NAME)?;
    let margin = p.float("margin").unwrap_or(0.0);
    let (x1b, x2b, yb) = (b.fwd(x1), b.fwd(x2), b.fwd(y));
    let row_sum = |b: &mut Bw, v: NodeId| b.m("sum", v, vec![ints(&[1])]);
    let prod = b.m("mul", x1b, vec![Arg::Node(x2b)])?;
    let prod = row_sum(b, prod)?;
    let sq1 = b.m("mul", x1b, vec![Arg::Node(x1b)])?;
    let m1 = row_sum(b, sq1)?;
    let m1 = b.m("add", m1, vec![Arg::Float(1e-12)])?;
    let sq2 = b.m("mul", x2b, vec![Arg::Node(x2b)])?;
    let m2 = row_sum(b, sq2)?;
    let m2 = b.m("add", m2, vec![Arg::Float(1e-12)])?;
    let den = b.m("mul", m1, vec![Arg::Node(m2)])?;
    let den = b.m("sqrt", den, vec![])?;
    let cos = b.m("div", prod, vec![Arg::Node(den)])?;
    // dL/dcos per row.
    let pos = b.m("eq", yb, vec![Arg::Int(1)])?;
    let neg = b.m("eq", yb, vec![Arg::Int(-1)])?;
    let hinge = b.m("sub", cos, vec![Arg::Float(margin)])?;
    let active = b.m("ge", hinge, vec![Arg::Int(0)])?;
    let neg_active = b.m("logical_and", neg, vec![Arg::Node(active)])?;
    let dcos = b.m("to", neg_active, vec![Arg::DType(b.bdtype(cos)?)])?;
    let minus_one = b.m("sub", dcos, vec![Arg::Float(1.0)])?;
    let dcos = b.m("where", minus_one, vec![Arg::Node(pos), Arg::Node(dcos)])?;
    let gc = times_grad(b, dcos, g, p.str("reduction").unwrap_or("mean"), NAME)?;
    let gc = b.m("unsqueeze", gc, vec![Arg::Int(1)])?;
    let cos_c = b.m("unsqueeze", cos, vec![Arg::Int(1)])?;
    let den_c = b.m("unsqueeze", den, vec![Arg::Int(1)])?;
    let mut r = Vec::new();
    for (x, xb, ob, m) in [(x1, x1b, x2b, m1), (x2, x2b, x1b, m2)] {
        if !b.needs(x) {
            continue;
        }
        let a = b.m("div", ob, vec![Arg::Node(den_c)])?;
        let m_c = b.m("unsqueeze", m, vec![Arg::Int(1)])?;
        let c = b.m("div", cos_c, vec![Arg::Node(m_c)])?;
        let c = b.m("mul", c, vec![Arg::Node(xb)])?;
        let d = b.m("sub", a, vec![Arg::Node(c)])?;
        r.push((x, b.m("mul", d, vec![Arg::Node(gc)])?));
    }
    Ok(r)
}

/// `triplet_margin_loss` with `p = 2`, no swap (torch's composite: `clamp_min(margin + d(a, p) -
/// d(a, n), 0)` with `d(u, v) = |u - v + eps|` over the last dim, `pairwise_distance`): each
/// distance's gradient is `(u - v + eps) / d` (0 where `d == 0`, `norm_backward`'s mask).
fn triplet_margin(b: &mut Bw, args: &[Arg], kwargs: &[(String, Arg)], g: NodeId) -> Result<Grads> {
    const NAME: &str = "triplet_margin_loss";
    let p = B::new(
        &[
            "anchor",
            "positive",
            "negative",
            "margin",
            "p",
            "eps",
            "swap",
            "size_average",
            "reduce",
            "reduction",
        ],
        args,
        kwargs,
        NAME,
    )?;
    legacy(&p, NAME)?;
    if p.float("p").unwrap_or(2.0) != 2.0 || p.boolean("swap", false) {
        return no_rule(format!("{NAME} with p != 2 or swap"));
    }
    let (Some(a), Some(pp), Some(n)) = (p.node("anchor"), p.node("positive"), p.node("negative"))
    else {
        return no_rule(NAME);
    };
    let (sa, sp, sn) = (b.fsizes(a)?, b.fsizes(pp)?, b.fsizes(n)?);
    if sa.len() != 2 || sa != sp || sa != sn {
        return no_rule(format!("{NAME} on other than three (N, D) inputs"));
    }
    let margin = p.float("margin").unwrap_or(1.0);
    let eps = p.float("eps").unwrap_or(1e-6);
    let (ab, pb, nb) = (b.fwd(a), b.fwd(pp), b.fwd(n));
    // (u - v + eps) / |u - v + eps| per row, and the distance.
    let unit = |b: &mut Bw, u: NodeId, v: NodeId| -> Result<(NodeId, NodeId)> {
        let diff = b.m("sub", u, vec![Arg::Node(v)])?;
        let diff = b.m("add", diff, vec![Arg::Float(eps)])?;
        let sq = b.m("mul", diff, vec![Arg::Node(diff)])?;
        let s = b.m("sum", sq, vec![ints(&[1]), Arg::Bool(true)])?;
        let d = b.m("sqrt", s, vec![])?;
        let u = b.m("div", diff, vec![Arg::Node(d)])?;
        let zero = b.m("eq", d, vec![Arg::Int(0)])?;
        let u = b.m("masked_fill", u, vec![Arg::Node(zero), Arg::Int(0)])?;
        Ok((u, d))
    };
    let (up, dp) = unit(b, ab, pb)?;
    let (un, dn) = unit(b, ab, nb)?;
    let h = b.m("sub", dp, vec![Arg::Node(dn)])?;
    let h = b.m("add", h, vec![Arg::Float(margin)])?;
    let h = b.m("squeeze", h, vec![Arg::Int(1)])?;
    let active = b.m("ge", h, vec![Arg::Int(0)])?;
    let dh = b.m("to", active, vec![Arg::DType(b.bdtype(h)?)])?;
    let gh = times_grad(b, dh, g, p.str("reduction").unwrap_or("mean"), NAME)?;
    let gh = b.m("unsqueeze", gh, vec![Arg::Int(1)])?;
    let gp = b.m("mul", up, vec![Arg::Node(gh)])?;
    let gn = b.m("mul", un, vec![Arg::Node(gh)])?;
    let mut r = Vec::new();
    if b.needs(a) {
        r.push((a, b.m("sub", gp, vec![Arg::Node(gn)])?));
    }
    if b.needs(pp) {
        r.push((pp, b.m("neg", gp, vec![])?));
    }
    if b.needs(n) {
        r.push((n, gn));
    }
    Ok(r)
}

/// `cross_entropy` / `nll_loss` over (N, C) logits (log-probabilities for `nll_loss`).
///
/// Class indices: with `a_ic = keep_i ((1 - ε) w[t_i] onehot_ic + (ε / C) w_c)` (`keep` the rows
/// whose target is not `ignore_index`, `w` the class weights or ones, `ε` the label smoothing),
/// the loss's gradient with respect to the log-probabilities is `-a * s`, `s` the output's
/// gradient per row (`g / Σ_i keep_i w[t_i]` for `mean`: nll_loss's total weight, which the
/// smoothing term is divided by too). Through `log_softmax` the logits get `s (softmax Σ_c a_ic
/// - a_ic)`; `Σ_c a_ic = keep_i ((1 - ε) w[t_i] + (ε / C) Σ_c w_c)`, `keep_i` without weights.
///
/// Class probabilities (`cross_entropy` only, the target as large as the input): the smoothed
/// target `t' = t (1 - ε) + ε / C` times `w_c` is `a`, `mean` divides by N.
fn class_loss(
    b: &mut Bw,
    name: &str,
    args: &[Arg],
    kwargs: &[(String, Arg)],
    g: NodeId,
) -> Result<Grads> {
    let p = B::new(crate::ops::CROSS_ENTROPY_PARAMS, args, kwargs, name)?;
    legacy(&p, name)?;
    let (Some(x), Some(t)) = (p.node("input"), p.node("target")) else {
        return no_rule(name);
    };
    let weight = p.node("weight");
    if weight.is_some_and(|w| b.needs(w)) {
        return no_rule(format!("{name} with a weight that requires grad"));
    }
    let xs = b.fsizes(x)?;
    let tm = b.fmeta(t)?;
    if xs.len() != 2 {
        return no_rule(format!("{name} on other than (N, C) logits"));
    }
    let eps = p.float("label_smoothing").unwrap_or(0.0);
    let reduction = p.str("reduction").unwrap_or("mean");
    let c = xs[1];
    let xb = b.fwd(x);
    let xm = b.bmeta(xb)?;
    let wb = weight.map(|w| b.fwd(w));
    if tm.dtype.is_floating_point() {
        if name != "cross_entropy" {
            return no_rule(format!("{name} with a floating-point target"));
        }
        return prob_target(b, x, t, xb, wb, eps, reduction, g);
    }
    let ignore = p.int("ignore_index").unwrap_or(-100);
    let tb = b.fwd(t);
    let keep = b.m("ne", tb, vec![Arg::Int(ignore)])?;
    // onehot(t_i) as a comparison of each column's class with the target: a pointwise value
    // the kernel computing the gradient fuses (a scatter into zeros would fill, copy and read
    // an (N, C) tensor more: 3 x 103 MB for GPT-2's logits). An ignored row's target matches
    // no class only by chance, so those rows are zeroed below whatever they compare to.
    let classes = b.call(
        Target::Function("torch.arange".into()),
        vec![Arg::Int(c)],
        vec![
            ("dtype".into(), Arg::DType(tm.dtype)),
            ("device".into(), Arg::Device(xm.device.clone())),
        ],
    )?;
    let tcol = b.m("unsqueeze", tb, vec![Arg::Int(1)])?;
    let hit = b.m("eq", tcol, vec![Arg::Node(classes)])?;
    let onehot = b.m("to", hit, vec![Arg::DType(xm.dtype)])?;
    let k = b.m("unsqueeze", keep, vec![Arg::Int(1)])?;
    let nk = b.m("logical_not", k, vec![])?;
    let keepf = b.m("to", keep, vec![Arg::DType(xm.dtype)])?;
    // Per row: w[t_i] (0 on an ignored row, whose target may be out of range).
    let wt = match wb {
        None => keepf,
        Some(wb) => {
            let nkeep = b.m("logical_not", keep, vec![])?;
            let safe = b.m("masked_fill", tb, vec![Arg::Node(nkeep), Arg::Int(0)])?;
            // `fx::infer` has no rule for `index_select`: its result is (N,) of w's dtype.
            let wm = b.bmeta(wb)?;
            let n = b.bsizes(safe)?;
            let sel = b.call_with_meta(
                Target::Method("index_select".into()),
                vec![Arg::Node(wb), Arg::Int(0), Arg::Node(safe)],
                TensorMeta::contiguous(wm.dtype, wm.device, &n),
            );
            b.m("mul", sel, vec![Arg::Node(keepf)])?
        }
    };
    let s = match reduction {
        "none" => b.m("unsqueeze", g, vec![Arg::Int(1)])?,
        "sum" => g,
        "mean" => {
            let total = b.m("sum", wt, vec![])?;
            b.m("div", g, vec![Arg::Node(total)])?
        }
        other => return no_rule(format!("{name}(reduction={other:?})")),
    };
    let d = match (name, wb) {
        ("nll_loss", _) => {
            // d loss_i / d input_ic = -w[t_i] onehot_ic.
            let wtc = b.m("unsqueeze", wt, vec![Arg::Int(1)])?;
            let a = b.m("mul", onehot, vec![Arg::Node(wtc)])?;
            b.m("neg", a, vec![])?
        }
        (_, None) => {
            // Σ_c a_ic = keep_i: d = keep_i (softmax_i - (1 - ε) onehot_i - ε / C).
            let target = smoothed(b, onehot, eps, c)?;
            let sm = b.m("softmax", xb, vec![Arg::Int(1)])?;
            let d = b.m("sub", sm, vec![Arg::Node(target)])?;
            b.m("masked_fill", d, vec![Arg::Node(nk), Arg::Int(0)])?
        }
        (_, Some(wb)) => {
            let wtc = b.m("unsqueeze", wt, vec![Arg::Int(1)])?;
            let mut a = b.m("mul", onehot, vec![Arg::Node(wtc)])?;
            let mut rs = wt;
            if eps != 0.0 {
                a = b.scale(a, 1.0 - eps)?;
                let kc = b.m("unsqueeze", keepf, vec![Arg::Int(1)])?;
                let sw = b.m("mul", kc, vec![Arg::Node(wb)])?;
                let sw = b.scale(sw, eps / c as f64)?;
                a = b.m("add", a, vec![Arg::Node(sw)])?;
                let total_w = b.m("sum", wb, vec![])?;
                let smooth = b.m("mul", keepf, vec![Arg::Node(total_w)])?;
                let smooth = b.scale(smooth, eps / c as f64)?;
                let hard = b.scale(wt, 1.0 - eps)?;
                rs = b.m("add", hard, vec![Arg::Node(smooth)])?;
            }
            let sm = b.m("softmax", xb, vec![Arg::Int(1)])?;
            let rsc = b.m("unsqueeze", rs, vec![Arg::Int(1)])?;
            let p = b.m("mul", sm, vec![Arg::Node(rsc)])?;
            b.m("sub", p, vec![Arg::Node(a)])?
        }
    };
    let gx = b.m("mul", d, vec![Arg::Node(s)])?;
    Ok(vec![(x, gx)])
}

/// `t (1 - ε) + ε / C` (`t` itself without smoothing).
fn smoothed(b: &mut Bw, t: NodeId, eps: f64, c: i64) -> Result<NodeId> {
    if eps == 0.0 {
        return Ok(t);
    }
    let t = b.scale(t, 1.0 - eps)?;
    b.m("add", t, vec![Arg::Float(eps / c as f64)])
}

/// `cross_entropy` against class probabilities (see [`class_loss`]); the target's gradient is
/// `-s w log_softmax(x) (1 - ε)`.
#[allow(clippy::too_many_arguments)]
fn prob_target(
    b: &mut Bw,
    x: NodeId,
    t: NodeId,
    xb: NodeId,
    wb: Option<NodeId>,
    eps: f64,
    reduction: &str,
    g: NodeId,
) -> Result<Grads> {
    let xs = b.fsizes(x)?;
    if b.fsizes(t)? != xs {
        return no_rule("cross_entropy with probabilities of another shape");
    }
    let c = xs[1];
    let s = match reduction {
        "none" => b.m("unsqueeze", g, vec![Arg::Int(1)])?,
        "sum" => g,
        "mean" => b.m("div", g, vec![Arg::Int(xs[0])])?,
        other => return no_rule(format!("cross_entropy(reduction={other:?})")),
    };
    let tb = b.fwd(t);
    let mut r = Vec::new();
    if b.needs(x) {
        let mut a = smoothed(b, tb, eps, c)?;
        if let Some(wb) = wb {
            a = b.m("mul", a, vec![Arg::Node(wb)])?;
        }
        let rs = b.m("sum", a, vec![ints(&[1]), Arg::Bool(true)])?;
        let sm = b.m("softmax", xb, vec![Arg::Int(1)])?;
        let p = b.m("mul", sm, vec![Arg::Node(rs)])?;
        let d = b.m("sub", p, vec![Arg::Node(a)])?;
        r.push((x, b.m("mul", d, vec![Arg::Node(s)])?));
    }
    if b.needs(t) {
        let lsm = b.m("log_softmax", xb, vec![Arg::Int(1)])?;
        let mut d = b.scale(lsm, -(1.0 - eps))?;
        if let Some(wb) = wb {
            d = b.m("mul", d, vec![Arg::Node(wb)])?;
        }
        r.push((t, b.m("mul", d, vec![Arg::Node(s)])?));
    }
    Ok(r)
}
