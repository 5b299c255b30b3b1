//! Elementary functions and the fused pointwise ops optimizers and user code call: facts of
//! `derivatives.yaml` written in catalog methods. `sin: grad * self.cos()`, `cos: grad *
//! -self.sin()`, `tan: grad * (1 + result²)`, `sinh`/`cosh` each other's, `asin: grad * (1 -
//! self²)^-½`, `acos` its negation, `atan: grad / (self² + 1)`, `erf: 2/√π · exp(-self²) ·
//! grad`, `erfc` its negation, `log1p: grad / (self + 1)`, `expm1: grad * (result + 1)`,
//! `log2`/`log10: grad / (self · ln b)`, `exp2: grad * result · ln 2`, `reciprocal: -grad *
//! result²`, `frac: grad`; `addcmul: self: grad, tensor1: grad * tensor2 * value, tensor2: grad *
//! tensor1 * value`; `addcdiv: tensor1: grad * value / tensor2, tensor2: -grad * value * tensor1
//! / tensor2²`; `lerp: self: grad * (1 - weight), end: grad * weight, weight: grad * (end -
//! self)`; `atan2: self: grad * other / (self² + other²), other: -grad * self / (self² +
//! other²)`. Each gradient is summed back to its input's shape (the fused ops broadcast).

use super::*;

pub(super) fn rule(b: &mut Bw, c: &Call) -> Result<Option<Grads>> {
    let Call {
        out,
        args,
        kwargs,
        g,
        ..
    } = *c;
    let name = c.name;
    let r: Result<Grads> = match name {
        "sin" | "cos" | "sinh" | "cosh" | "asin" | "acos" | "atan" | "erf" | "erfc" | "log1p"
        | "log2" | "log10" => {
            let x = self_of(args)?;
            let xb = b.fwd(x);
            // `grad * f'(x)`, or `grad / d` where eager's formula divides (`atan`, `log1p`,
            // `log2`, `log10`): the same ops as eager's, so a 16-bit tensor rounds as there.
            let (d, divides) = unary_derivative(b, name, xb)?;
            let op = if divides { "div" } else { "mul" };
            Ok(vec![(x, b.m(op, g, vec![Arg::Node(d)])?)])
        }
        "tan" | "expm1" | "exp2" | "reciprocal" => {
            let x = self_of(args)?;
            let o = b.fwd(out);
            let d = match name {
                "tan" => {
                    let sq = b.m("mul", o, vec![Arg::Node(o)])?;
                    b.m("add", sq, vec![Arg::Float(1.0)])?
                }
                "expm1" => b.m("add", o, vec![Arg::Float(1.0)])?,
                "exp2" => {
                    // `grad * result * ln 2`, in that order.
                    let go = b.m("mul", g, vec![Arg::Node(o)])?;
                    return Ok(Some(vec![(
                        x,
                        b.m("mul", go, vec![Arg::Float(std::f64::consts::LN_2)])?,
                    )]));
                }
                _ => {
                    let sq = b.m("mul", o, vec![Arg::Node(o)])?;
                    b.m("neg", sq, vec![])?
                }
            };
            Ok(vec![(x, b.m("mul", g, vec![Arg::Node(d)])?)])
        }
        "frac" => Ok(vec![(self_of(args)?, g)]),
        "addcmul" | "addcdiv" => addc(b, name, args, kwargs, g),
        "lerp" => lerp(b, args, kwargs, g),
        "atan2" => atan2(b, args, kwargs, g),
        _ => return Ok(None),
    };
    r.map(Some)
}

/// `f'(x)` of a unary function read from its input `xb` (a backward value), or (`true`) the
/// divisor `1 / f'(x)` where eager's formula divides by it.
fn unary_derivative(b: &mut Bw, name: &str, xb: NodeId) -> Result<(NodeId, bool)> {
    let two_over_sqrt_pi = std::f64::consts::FRAC_2_SQRT_PI;
    let divisor = match name {
        "atan" => {
            let sq = b.m("mul", xb, vec![Arg::Node(xb)])?;
            Some(b.m("add", sq, vec![Arg::Float(1.0)])?)
        }
        "log1p" => Some(b.m("add", xb, vec![Arg::Float(1.0)])?),
        "log2" => Some(b.m("mul", xb, vec![Arg::Float(std::f64::consts::LN_2)])?),
        "log10" => Some(b.m("mul", xb, vec![Arg::Float(std::f64::consts::LN_10)])?),
        _ => None,
    };
    if let Some(d) = divisor {
        return Ok((d, true));
    }
    let d = match name {
        "sin" => b.m("cos", xb, vec![])?,
        "cos" => {
            let s = b.m("sin", xb, vec![])?;
            b.m("neg", s, vec![])?
        }
        "sinh" => b.m("cosh", xb, vec![])?,
        "cosh" => b.m("sinh", xb, vec![])?,
        "asin" | "acos" => {
            let sq = b.m("mul", xb, vec![Arg::Node(xb)])?;
            let r = one_minus(b, sq)?;
            let r = b.m("rsqrt", r, vec![])?;
            if name == "acos" {
                b.m("neg", r, vec![])?
            } else {
                r
            }
        }
        "erf" | "erfc" => {
            let sq = b.m("mul", xb, vec![Arg::Node(xb)])?;
            let e = b.m("neg", sq, vec![])?;
            let e = b.m("exp", e, vec![])?;
            let k = if name == "erf" {
                two_over_sqrt_pi
            } else {
                -two_over_sqrt_pi
            };
            b.m("mul", e, vec![Arg::Float(k)])?
        }
        _ => return no_rule(name),
    };
    Ok((d, false))
}

/// A gradient contribution `g` of forward input `n` (when it carries one), summed to its shape.
fn push(b: &mut Bw, r: &mut Grads, n: NodeId, g: NodeId) -> Result<()> {
    let s = b.fsizes(n)?;
    r.push((n, b.reduce_to(g, &s)?));
    Ok(())
}

fn addc(
    b: &mut Bw,
    name: &str,
    args: &[Arg],
    kwargs: &[(String, Arg)],
    g: NodeId,
) -> Result<Grads> {
    let p = B::new(
        &["input", "tensor1", "tensor2", "*", "value"],
        args,
        kwargs,
        name,
    )?;
    let (Some(t1), Some(t2)) = (p.node("tensor1"), p.node("tensor2")) else {
        return no_rule(name);
    };
    if p.get("value").is_some() && p.float("value").is_none() {
        return no_rule(format!("{name} with a tensor value"));
    }
    let value = p.float("value").unwrap_or(1.0);
    let mut r = Vec::new();
    if let Some(x) = p.node("input").filter(|x| b.needs(*x)) {
        push(b, &mut r, x, g)?;
    }
    let gv = b.scale(g, value)?;
    if b.needs(t1) {
        let t2b = b.fwd(t2);
        let d = if name == "addcmul" {
            // `grad * (tensor2 * value)`, eager's order.
            let f = b.scale(t2b, value)?;
            b.m("mul", g, vec![Arg::Node(f)])?
        } else {
            b.m("div", gv, vec![Arg::Node(t2b)])?
        };
        push(b, &mut r, t1, d)?;
    }
    if b.needs(t2) {
        let t1b = b.fwd(t1);
        let d = if name == "addcmul" {
            let f = b.scale(t1b, value)?;
            b.m("mul", g, vec![Arg::Node(f)])?
        } else {
            let t2b = b.fwd(t2);
            let q = b.m("div", t1b, vec![Arg::Node(t2b)])?;
            let q = b.m("div", q, vec![Arg::Node(t2b)])?;
            let d = b.m("mul", gv, vec![Arg::Node(q)])?;
            b.m("neg", d, vec![])?
        };
        push(b, &mut r, t2, d)?;
    }
    Ok(r)
}

fn lerp(b: &mut Bw, args: &[Arg], kwargs: &[(String, Arg)], g: NodeId) -> Result<Grads> {
    let p = B::new(&["input", "end", "weight"], args, kwargs, "lerp")?;
    let (Some(x), Some(end), Some(w)) = (p.node("input"), p.node("end"), p.get("weight")) else {
        return no_rule("lerp");
    };
    let mut r = Vec::new();
    let w = match w {
        Arg::Node(n) => Arg::Node(b.fwd(*n)),
        Arg::Float(_) | Arg::Int(_) => w.clone(),
        _ => return no_rule("lerp weight"),
    };
    if b.needs(x) {
        // `grad * (1 - weight)`, the factor first (a number weight: one product).
        let keep = match &w {
            Arg::Node(wn) => Arg::Node(one_minus(b, *wn)?),
            Arg::Int(i) => Arg::Float(1.0 - *i as f64),
            Arg::Float(f) => Arg::Float(1.0 - f),
            _ => return no_rule("lerp weight"),
        };
        let d = b.m("mul", g, vec![keep])?;
        push(b, &mut r, x, d)?;
    }
    if b.needs(end) {
        let d = b.m("mul", g, vec![w])?;
        push(b, &mut r, end, d)?;
    }
    if let Some(wn) = p.node("weight").filter(|n| b.needs(*n)) {
        let (xb, eb) = (b.fwd(x), b.fwd(end));
        let diff = b.m("sub", eb, vec![Arg::Node(xb)])?;
        let d = b.m("mul", g, vec![Arg::Node(diff)])?;
        push(b, &mut r, wn, d)?;
    }
    Ok(r)
}

fn atan2(b: &mut Bw, args: &[Arg], kwargs: &[(String, Arg)], g: NodeId) -> Result<Grads> {
    let p = B::new(&["input", "other"], args, kwargs, "atan2")?;
    let (Some(x), Some(y)) = (p.node("input"), p.node("other")) else {
        return no_rule("atan2");
    };
    let (xb, yb) = (b.fwd(x), b.fwd(y));
    let xx = b.m("mul", xb, vec![Arg::Node(xb)])?;
    let yy = b.m("mul", yb, vec![Arg::Node(yb)])?;
    let den = b.m("add", xx, vec![Arg::Node(yy)])?;
    let gd = b.m("div", g, vec![Arg::Node(den)])?;
    let mut r = Vec::new();
    if b.needs(x) {
        let d = b.m("mul", gd, vec![Arg::Node(yb)])?;
        push(b, &mut r, x, d)?;
    }
    if b.needs(y) {
        let d = b.m("mul", gd, vec![Arg::Node(xb)])?;
        let d = b.m("neg", d, vec![])?;
        push(b, &mut r, y, d)?;
    }
    Ok(r)
}
