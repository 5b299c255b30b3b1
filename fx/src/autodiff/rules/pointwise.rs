//! Pointwise ops: arithmetic with broadcasting (gradients summed back to each input's
//! shape), activations, `where`/`masked_fill`/`clamp`.

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
        "add" | "sub" => {
            let p = B::new(&["input", "other", "*", "alpha"], args, kwargs, &name)?;
            let alpha = p.float("alpha").unwrap_or(1.0);
            let mut r = Vec::new();
            if let Some(x) = p.node("input") {
                if b.needs(x) {
                    let s = b.fsizes(x)?;
                    r.push((x, b.reduce_to(g, &s)?));
                }
            }
            if let Some(y) = p.node("other") {
                if b.needs(y) {
                    let k = if name == "sub" { -alpha } else { alpha };
                    let gy = b.scale(g, k)?;
                    let s = b.fsizes(y)?;
                    r.push((y, b.reduce_to(gy, &s)?));
                }
            }
            Ok(r)
        }
        "mul" | "div" => {
            let p = B::new(
                &["input", "other", "*", "rounding_mode"],
                args,
                kwargs,
                &name,
            )?;
            if p.get("rounding_mode").is_some() {
                if name != "div" {
                    return no_rule(format!("{name} with rounding_mode"));
                }
                // A rounded quotient is piecewise constant: both operands get zeros.
                let mut r = Vec::new();
                for n in [p.node("input"), p.node("other")].into_iter().flatten() {
                    r.extend(zero_derivative(b, n, g)?);
                }
                return Ok(Some(r));
            }
            let (x, y) = (p.get("input").cloned(), p.get("other").cloned());
            let mut r = Vec::new();
            let operand = |b: &mut Bw, a: &Arg| -> Result<Arg> {
                Ok(match a {
                    Arg::Node(n) => Arg::Node(b.fwd(*n)),
                    other => other.clone(),
                })
            };
            if let Some(Arg::Node(xn)) = &x {
                if b.needs(*xn) {
                    let yv = operand(b, y.as_ref().unwrap())?;
                    let gx = b.m(&name, g, vec![yv])?;
                    let s = b.fsizes(*xn)?;
                    r.push((*xn, b.reduce_to(gx, &s)?));
                }
            }
            if let Some(Arg::Node(yn)) = &y {
                if b.needs(*yn) {
                    let gy = if name == "mul" {
                        let xv = operand(b, x.as_ref().unwrap())?;
                        b.m("mul", g, vec![xv])?
                    } else {
                        // d(x/y)/dy = -x/y², from the operands as eager's
                        // `div_tensor_other_backward` (`-grad * ((x / y) / y)`), never from the
                        // result: eager keeps `x` and `y`, so a caller's write to the returned
                        // quotient leaves its gradient alone. `c / y` with a number `c` is
                        // `y.reciprocal() * c` in eager: `-(grad * c) * (r * r)`.
                        let yb = b.fwd(*yn);
                        let t = match x.as_ref().unwrap() {
                            Arg::Node(xn) => {
                                let xb = b.fwd(*xn);
                                let q = b.m("div", xb, vec![Arg::Node(yb)])?;
                                let q = b.m("div", q, vec![Arg::Node(yb)])?;
                                b.m("mul", g, vec![Arg::Node(q)])?
                            }
                            c => {
                                let r = b.m("reciprocal", yb, vec![])?;
                                let rr = b.m("mul", r, vec![Arg::Node(r)])?;
                                let gc = b.m("mul", g, vec![c.clone()])?;
                                b.m("mul", gc, vec![Arg::Node(rr)])?
                            }
                        };
                        b.m("neg", t, vec![])?
                    };
                    let s = b.fsizes(*yn)?;
                    r.push((*yn, b.reduce_to(gy, &s)?));
                }
            }
            Ok(r)
        }
        "neg" => Ok(vec![(self_of(args)?, b.m("neg", g, vec![])?)]),
        // Piecewise constant (or a draw): the derivative is zero, the edge stays.
        "floor" | "ceil" | "round" | "trunc" | "fix" | "sign" | "bernoulli" => {
            zero_derivative(b, self_of(args)?, g)
        }
        "square" => {
            // derivatives.yaml has no entry of its own: `square` is `pow(self, 2)`, whose
            // `pow_backward` is `grad * 2 * self`.
            let x = self_of(args)?;
            let xb = b.fwd(x);
            let t = b.m("mul", xb, vec![Arg::Float(2.0)])?;
            Ok(vec![(x, b.m("mul", g, vec![Arg::Node(t)])?)])
        }
        "exp" => {
            let o = b.fwd(out);
            Ok(vec![(self_of(args)?, b.m("mul", g, vec![Arg::Node(o)])?)])
        }
        "log" => {
            let x = self_of(args)?;
            let xb = b.fwd(x);
            Ok(vec![(x, b.m("div", g, vec![Arg::Node(xb)])?)])
        }
        "sqrt" => {
            let o = b.fwd(out);
            let t = b.m("mul", o, vec![Arg::Float(2.0)])?;
            Ok(vec![(self_of(args)?, b.m("div", g, vec![Arg::Node(t)])?)])
        }
        "rsqrt" => {
            // -0.5 * out³.
            let o = b.fwd(out);
            let t = b.m("pow", o, vec![Arg::Int(3)])?;
            let t = b.m("mul", t, vec![Arg::Float(-0.5)])?;
            Ok(vec![(self_of(args)?, b.m("mul", g, vec![Arg::Node(t)])?)])
        }
        // `tanh_backward`/`sigmoid_backward`/`silu_backward`/`gelu_backward` are fused kernels
        // in eager: a 16-bit tensor's derivative is computed in float32 and rounded once
        // ([`Upcast`]); written as a chain of 16-bit ops (where the eager runner runs the
        // backward: a graph under autocast) every op rounded, and a bfloat16 step's weights
        // drifted off eager's by a unit in the last place.
        "tanh" => {
            let x = self_of(args)?;
            let o = b.fwd(out);
            let (up, o, g) = Upcast::new(b, x, o, g)?;
            let sq = b.m("mul", o, vec![Arg::Node(o)])?;
            let t = one_minus(b, sq)?;
            let r = b.m("mul", g, vec![Arg::Node(t)])?;
            Ok(vec![(x, up.back(b, r, x)?)])
        }
        "sigmoid" => {
            let x = self_of(args)?;
            let o = b.fwd(out);
            let (up, o, g) = Upcast::new(b, x, o, g)?;
            let t = one_minus(b, o)?;
            let t = b.m("mul", t, vec![Arg::Node(o)])?;
            let r = b.m("mul", g, vec![Arg::Node(t)])?;
            Ok(vec![(x, up.back(b, r, x)?)])
        }
        "relu" => {
            // threshold_backward(grad, result, 0): grad where result > 0, else 0.
            let o = b.fwd(out);
            let m = b.m("le", o, vec![Arg::Int(0)])?;
            Ok(vec![(
                self_of(args)?,
                b.m("masked_fill", g, vec![Arg::Node(m), Arg::Int(0)])?,
            )])
        }
        "leaky_relu" => {
            // leaky_relu_backward(grad, self, negative_slope): grad where self > 0, else
            // grad * negative_slope (the in-place form reads the input before the write).
            let p = B::new(&["input", "negative_slope", "inplace"], args, kwargs, &name)?;
            let x = p
                .node("input")
                .ok_or_else(|| AutodiffError::NoRule("leaky_relu".into()))?;
            let slope = p.float("negative_slope").unwrap_or(0.01);
            let xb = b.fwd(x);
            let neg = b.m("le", xb, vec![Arg::Int(0)])?;
            let pos = b.m("gt", xb, vec![Arg::Int(0)])?;
            let kept = b.m("masked_fill", g, vec![Arg::Node(neg), Arg::Int(0)])?;
            let scaled = b.m("mul", g, vec![Arg::Float(slope)])?;
            let scaled = b.m("masked_fill", scaled, vec![Arg::Node(pos), Arg::Int(0)])?;
            Ok(vec![(x, b.m("add", kept, vec![Arg::Node(scaled)])?)])
        }
        "silu" => {
            let x = self_of(args)?;
            let xb = b.fwd(x);
            let (up, xb, g) = Upcast::new(b, x, xb, g)?;
            let s = b.m("sigmoid", xb, vec![])?;
            let om = one_minus(b, s)?;
            let t = b.m("mul", xb, vec![Arg::Node(om)])?;
            let t = b.m("add", t, vec![Arg::Float(1.0)])?;
            let t = b.m("mul", s, vec![Arg::Node(t)])?;
            let r = b.m("mul", g, vec![Arg::Node(t)])?;
            Ok(vec![(x, up.back(b, r, x)?)])
        }
        "gelu" => {
            let p = B::new(&["input", "approximate"], args, kwargs, &name)?;
            let x = p
                .node("input")
                .ok_or_else(|| AutodiffError::NoRule("gelu".into()))?;
            let approx = p.str("approximate").unwrap_or("none");
            let xb = b.fwd(x);
            let (up, xb, g) = Upcast::new(b, x, xb, g)?;
            let d = match approx {
                "none" => {
                    // cdf + x * pdf, cdf = (1 + erf(x/√2))/2, pdf = exp(-x²/2)/√(2π).
                    let t = b.m("mul", xb, vec![Arg::Float(1.0 / SQRT_2)])?;
                    let t = b.m("erf", t, vec![])?;
                    let t = b.m("add", t, vec![Arg::Float(1.0)])?;
                    let cdf = b.m("mul", t, vec![Arg::Float(0.5)])?;
                    let sq = b.m("mul", xb, vec![Arg::Node(xb)])?;
                    let e = b.m("mul", sq, vec![Arg::Float(-0.5)])?;
                    let e = b.m("exp", e, vec![])?;
                    let pdf = b.m(
                        "mul",
                        e,
                        vec![Arg::Float(1.0 / (2.0 * std::f64::consts::PI).sqrt())],
                    )?;
                    let t = b.m("mul", xb, vec![Arg::Node(pdf)])?;
                    b.m("add", cdf, vec![Arg::Node(t)])?
                }
                "tanh" => {
                    let beta = SQRT_2 * std::f64::consts::FRAC_2_SQRT_PI * 0.5;
                    let kappa = 0.044715;
                    let sq = b.m("mul", xb, vec![Arg::Node(xb)])?;
                    let cube = b.m("mul", sq, vec![Arg::Node(xb)])?;
                    let inner = b.m("mul", cube, vec![Arg::Float(kappa)])?;
                    let inner = b.m("add", xb, vec![Arg::Node(inner)])?;
                    let inner = b.m("mul", inner, vec![Arg::Float(beta)])?;
                    let th = b.m("tanh", inner, vec![])?;
                    let right = b.m("add", th, vec![Arg::Float(1.0)])?;
                    let left_d = b.m("mul", right, vec![Arg::Float(0.5)])?;
                    let left = b.m("mul", xb, vec![Arg::Float(0.5)])?;
                    let th2 = b.m("mul", th, vec![Arg::Node(th)])?;
                    let one_m = one_minus(b, th2)?;
                    let poly = b.m("mul", sq, vec![Arg::Float(3.0 * kappa)])?;
                    let poly = b.m("add", poly, vec![Arg::Float(1.0)])?;
                    let poly = b.m("mul", poly, vec![Arg::Float(beta)])?;
                    let right_d = b.m("mul", left, vec![Arg::Node(one_m)])?;
                    let right_d = b.m("mul", right_d, vec![Arg::Node(poly)])?;
                    b.m("add", left_d, vec![Arg::Node(right_d)])?
                }
                other => return no_rule(format!("gelu(approximate={other:?})")),
            };
            let r = b.m("mul", g, vec![Arg::Node(d)])?;
            Ok(vec![(x, up.back(b, r, x)?)])
        }
        "pow" => {
            let p = B::new(&["input", "exponent"], args, kwargs, &name)?;
            let (Some(x), Some(e)) = (p.node("input"), p.float("exponent")) else {
                return no_rule("pow with a tensor exponent or base");
            };
            if matches!(p.get("exponent"), Some(Arg::Bool(_))) {
                return no_rule("pow with a bool exponent");
            }
            let xb = b.fwd(x);
            let gx = if e == 0.0 {
                b.m("mul", g, vec![Arg::Float(0.0)])?
            } else {
                let ex = match p.get("exponent") {
                    Some(Arg::Int(i)) => Arg::Int(i - 1),
                    _ => Arg::Float(e - 1.0),
                };
                let t = b.m("pow", xb, vec![ex])?;
                let t = b.m("mul", t, vec![Arg::Float(e)])?;
                b.m("mul", g, vec![Arg::Node(t)])?
            };
            Ok(vec![(x, gx)])
        }
        "abs" => {
            let x = self_of(args)?;
            let xb = b.fwd(x);
            let s = b.m("sgn", xb, vec![])?;
            Ok(vec![(x, b.m("mul", g, vec![Arg::Node(s)])?)])
        }
        "clamp" | "clamp_min" | "clamp_max" => {
            let sig: &[&'static str] = match name.as_str() {
                "clamp_min" => &["input", "min"],
                "clamp_max" => &["input", "max"],
                _ => &["input", "min", "max"],
            };
            let p = B::new(sig, args, kwargs, &name)?;
            let x = p
                .node("input")
                .ok_or_else(|| AutodiffError::NoRule("clamp".into()))?;
            if p.node("min").is_some() || p.node("max").is_some() {
                return clamp_tensor_bounds(b, x, p.get("min"), p.get("max"), g).map(Some);
            }
            let xb = b.fwd(x);
            let mut gx = g;
            // Gradient flows where min <= x <= max (derivatives.yaml: clamp_backward).
            if let Some(lo) = p.get("min") {
                let m = b.m("lt", xb, vec![lo.clone()])?;
                gx = b.m("masked_fill", gx, vec![Arg::Node(m), Arg::Int(0)])?;
            }
            if let Some(hi) = p.get("max") {
                let m = b.m("gt", xb, vec![hi.clone()])?;
                gx = b.m("masked_fill", gx, vec![Arg::Node(m), Arg::Int(0)])?;
            }
            Ok(vec![(x, gx)])
        }
        "where" => {
            let p = match sp {
                Spelling::Method => B::new(&["input", "condition", "other"], args, kwargs, &name)?,
                _ => B::new(&["condition", "input", "other"], args, kwargs, &name)?,
            };
            let cond = p
                .node("condition")
                .ok_or_else(|| AutodiffError::NoRule("where".into()))?;
            let cb = b.fwd(cond);
            let mut r = Vec::new();
            if let Some(x) = p.node("input").filter(|x| b.needs(*x)) {
                let nc = b.m("logical_not", cb, vec![])?;
                let gx = b.m("masked_fill", g, vec![Arg::Node(nc), Arg::Int(0)])?;
                let s = b.fsizes(x)?;
                r.push((x, b.reduce_to(gx, &s)?));
            }
            if let Some(y) = p.node("other").filter(|y| b.needs(*y)) {
                let gy = b.m("masked_fill", g, vec![Arg::Node(cb), Arg::Int(0)])?;
                let s = b.fsizes(y)?;
                r.push((y, b.reduce_to(gy, &s)?));
            }
            Ok(r)
        }
        "masked_fill" => {
            let p = B::new(&["input", "mask", "value"], args, kwargs, &name)?;
            let x = p
                .node("input")
                .ok_or_else(|| AutodiffError::NoRule("masked_fill".into()))?;
            let mk = p
                .node("mask")
                .ok_or_else(|| AutodiffError::NoRule("masked_fill".into()))?;
            let mb = b.fwd(mk);
            let mut r = Vec::new();
            if b.needs(x) {
                let gx = b.m("masked_fill", g, vec![Arg::Node(mb), Arg::Int(0)])?;
                let s = b.fsizes(x)?;
                r.push((x, b.reduce_to(gx, &s)?));
            }
            // A 0-dim tensor value (`masked_fill.Tensor`, `value: masked_fill_backward(grad,
            // mask)`): the sum of `grad` where the mask holds, in the value's dtype.
            if let Some(v) = p.node("value").filter(|v| b.needs(*v)) {
                if !b.fsizes(v)?.is_empty() {
                    return no_rule("masked_fill with a value that is not 0-dim");
                }
                let keep = b.m("logical_not", mb, vec![])?;
                let filled = b.m("masked_fill", g, vec![Arg::Node(keep), Arg::Int(0)])?;
                let gv = b.reduce_to(filled, &[])?;
                r.push((v, b.cast_like(gv, v)?));
            }
            Ok(r)
        }
        _ => return Ok(None),
    };
    r.map(Some)
}

/// `clamp` with a tensor bound (`derivatives.yaml`, `clamp_backward_min_max`): `self` gets
/// `grad` where `min <= self <= max`; `min` where `self < min` (and `min < max` when both are
/// given); `max` where `self > max` (or `max < min`); each summed to its own shape.
fn clamp_tensor_bounds(
    b: &mut Bw,
    x: NodeId,
    lo: Option<&Arg>,
    hi: Option<&Arg>,
    g: NodeId,
) -> Result<Grads> {
    let xb = b.fwd(x);
    let mut bound = |a: Option<&Arg>| match a {
        Some(Arg::Node(n)) => Some(Arg::Node(b.fwd(*n))),
        other => other.cloned(),
    };
    let (lob, hib) = (bound(lo), bound(hi));
    // `grad` where `keep` holds, zero elsewhere.
    let only = |b: &mut Bw, keep: NodeId| -> Result<NodeId> {
        let drop = b.m("logical_not", keep, vec![])?;
        b.m("masked_fill", g, vec![Arg::Node(drop), Arg::Int(0)])
    };
    let mut r = Vec::new();
    if b.needs(x) {
        let mut keep = None;
        if let Some(l) = &lob {
            keep = Some(b.m("ge", xb, vec![l.clone()])?);
        }
        if let Some(h) = &hib {
            let le = b.m("le", xb, vec![h.clone()])?;
            keep = Some(match keep {
                Some(k) => b.m("logical_and", k, vec![Arg::Node(le)])?,
                None => le,
            });
        }
        let gx = match keep {
            Some(k) => only(b, k)?,
            None => g,
        };
        let s = b.fsizes(x)?;
        r.push((x, b.reduce_to(gx, &s)?));
    }
    if let (Some(Arg::Node(ln)), Some(l)) = (lo, &lob) {
        if b.needs(*ln) {
            let mut keep = b.m("lt", xb, vec![l.clone()])?;
            if let Some(h) = &hib {
                let Arg::Node(lb) = l else { unreachable!() };
                let lt = b.m("lt", *lb, vec![h.clone()])?;
                keep = b.m("logical_and", keep, vec![Arg::Node(lt)])?;
            }
            let gl = only(b, keep)?;
            let s = b.fsizes(*ln)?;
            r.push((*ln, b.reduce_to(gl, &s)?));
        }
    }
    if let (Some(Arg::Node(hn)), Some(h)) = (hi, &hib) {
        if b.needs(*hn) {
            let mut keep = b.m("gt", xb, vec![h.clone()])?;
            if let Some(l) = &lob {
                let Arg::Node(hb) = h else { unreachable!() };
                let lt = b.m("lt", *hb, vec![l.clone()])?;
                keep = b.m("logical_or", keep, vec![Arg::Node(lt)])?;
            }
            let gh = only(b, keep)?;
            let s = b.fsizes(*hn)?;
            r.push((*hn, b.reduce_to(gh, &s)?));
        }
    }
    Ok(r)
}
