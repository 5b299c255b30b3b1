//! One vector-Jacobian product per catalog op, in the catalog's vocabulary (tensor methods the
//! inductor lowers). The formulas are the facts of torch's `derivatives.yaml`
//! (`torchgen/packaged/autograd/derivatives.yaml`): e.g. `mul: self: grad * other`,
//! `tanh: self: tanh_backward(grad, result)` = `grad * (1 - result²)`, `_softmax: self:
//! _softmax_backward_data(grad, result, dim)` = `result * (grad - (grad * result).sum(dim))`.
//! A form a rule does not model answers [`AutodiffError::NoRule`], never a guess.

use std::collections::HashMap;

use super::{ints, AutodiffError, Bw, Result};
use crate::graph::{Arg, Graph, Node, NodeId, NodeKind, Target};
use crate::meta::TensorMeta;
use crate::ops::{self, Spelling};

/// (forward input, its gradient contribution in the backward).
type Grads = Vec<(NodeId, NodeId)>;

fn no_rule<T>(what: impl Into<String>) -> Result<T> {
    Err(AutodiffError::NoRule(what.into()))
}

/// Ops whose result carries no gradient (comparisons, integer results, index queries).
pub fn is_nondifferentiable(node: &Node) -> bool {
    let NodeKind::Call { target, .. } = &node.kind else {
        return false;
    };
    let name = target.name().rsplit('.').next().unwrap_or("");
    matches!(
        name,
        "eq" | "ne"
            | "lt"
            | "le"
            | "gt"
            | "ge"
            | "argmax"
            | "argmin"
            | "sign"
            | "floor"
            | "ceil"
            | "round"
            | "trunc"
            | "detach"
            | "isnan"
            | "isinf"
            | "isfinite"
            | "logical_not"
            | "logical_and"
            | "logical_or"
            | "bernoulli"
            | "rand_like"
            | "randn_like"
            | "zeros_like"
            | "ones_like"
            | "empty_like"
            | "new_zeros"
            | "new_ones"
            | "new_empty"
            | "new_full"
            | "full_like"
            | "size"
            | "dim"
            | "numel"
    )
}

/// `operator.getitem(t, i)` of a tuple-producing node: (the tuple node, i).
pub fn tuple_item(f: &Graph, target: &Target, args: &[Arg]) -> Option<(NodeId, usize)> {
    if target.name() != "operator.getitem" && target.name() != "_operator.getitem" {
        return None;
    }
    match (args.first(), args.get(1)) {
        (Some(Arg::Node(t)), Some(Arg::Int(i)))
            if matches!(f.node(*t).meta, crate::meta::NodeMeta::Tuple(_)) =>
        {
            Some((*t, *i as usize))
        }
        _ => None,
    }
}

/// Binds a call to `sig` (names; `"*"` starts keyword-only ones).
struct B<'a> {
    names: Vec<&'static str>,
    slots: Vec<Option<&'a Arg>>,
}

impl<'a> B<'a> {
    fn new(
        sig: &[&'static str],
        args: &'a [Arg],
        kwargs: &'a [(String, Arg)],
        op: &str,
    ) -> Result<B<'a>> {
        let slots = ops::bind(sig, args, kwargs)
            .map_err(|e| AutodiffError::NoRule(format!("{op} ({e})")))?;
        Ok(B {
            names: ops::schema::param_names(sig),
            slots,
        })
    }
    fn get(&self, name: &str) -> Option<&'a Arg> {
        let i = self.names.iter().position(|n| *n == name)?;
        self.slots[i].filter(|a| !matches!(a, Arg::None))
    }
    fn node(&self, name: &str) -> Option<NodeId> {
        match self.get(name) {
            Some(Arg::Node(n)) => Some(*n),
            _ => None,
        }
    }
    fn float(&self, name: &str) -> Option<f64> {
        match self.get(name) {
            Some(Arg::Float(f)) => Some(*f),
            Some(Arg::Int(i)) => Some(*i as f64),
            Some(Arg::Bool(b)) => Some(*b as i64 as f64),
            _ => None,
        }
    }
    fn int(&self, name: &str) -> Option<i64> {
        match self.get(name) {
            Some(Arg::Int(i)) => Some(*i),
            _ => None,
        }
    }
    fn boolean(&self, name: &str, default: bool) -> bool {
        match self.get(name) {
            Some(Arg::Bool(b)) => *b,
            _ => default,
        }
    }
    fn str(&self, name: &str) -> Option<&'a str> {
        match self.get(name) {
            Some(Arg::Str(s)) => Some(s),
            _ => None,
        }
    }
    /// A list/tuple of ints or a single int (`dim`), `None` when absent.
    fn int_list(&self, name: &str) -> Option<Vec<i64>> {
        match self.get(name) {
            Some(Arg::Int(i)) => Some(vec![*i]),
            Some(Arg::List(v)) | Some(Arg::Tuple(v)) => v
                .iter()
                .map(|a| match a {
                    Arg::Int(i) => Some(*i),
                    _ => None,
                })
                .collect(),
            _ => None,
        }
    }
}

/// Every positional argument after `self` as a list of ints (`x.view(2, 3)` or `x.view((2, 3))`).
fn varargs_ints(args: &[Arg]) -> Option<Vec<i64>> {
    let rest = &args[1..];
    if let [Arg::List(v) | Arg::Tuple(v)] = rest {
        return v
            .iter()
            .map(|a| match a {
                Arg::Int(i) => Some(*i),
                _ => None,
            })
            .collect();
    }
    rest.iter()
        .map(|a| match a {
            Arg::Int(i) => Some(*i),
            _ => None,
        })
        .collect()
}

fn wrap(d: i64, n: usize) -> Result<usize> {
    crate::ops::schema::wrap_dim(d, n).map_err(|e| AutodiffError::Unsupported(e.to_string()))
}

const SQRT_2: f64 = std::f64::consts::SQRT_2;

/// The gradient rule of one call: its inputs' gradient contributions given its output's `g`.
pub fn rule(
    b: &mut Bw,
    id: NodeId,
    target: &Target,
    args: &[Arg],
    kwargs: &[(String, Arg)],
    g: NodeId,
) -> Result<Grads> {
    let Some(c) = ops::canonical(target, args, kwargs) else {
        return no_rule(target.name());
    };
    if c.inplace {
        return no_rule(format!("{} (in place)", target.name()));
    }
    let name = ops::unalias(&c.name).to_string();
    let mut args = args.to_vec();
    if c.reflected && args.len() == 2 {
        args.swap(0, 1);
    }
    let args = &args[..];
    let sp = c.spelling;
    let out = id;
    match name.as_str() {
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
                return no_rule(format!("{name} with rounding_mode"));
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
                        // d(x/y)/dy = -x/y² = -out/y.
                        let o = b.fwd(out);
                        let yb = b.fwd(*yn);
                        let t = b.m("div", o, vec![Arg::Node(yb)])?;
                        let t = b.m("mul", g, vec![Arg::Node(t)])?;
                        b.m("neg", t, vec![])?
                    };
                    let s = b.fsizes(*yn)?;
                    r.push((*yn, b.reduce_to(gy, &s)?));
                }
            }
            Ok(r)
        }
        "neg" => Ok(vec![(self_of(args)?, b.m("neg", g, vec![])?)]),
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
        "tanh" => {
            let o = b.fwd(out);
            let sq = b.m("mul", o, vec![Arg::Node(o)])?;
            let t = one_minus(b, sq)?;
            Ok(vec![(self_of(args)?, b.m("mul", g, vec![Arg::Node(t)])?)])
        }
        "sigmoid" => {
            let o = b.fwd(out);
            let t = one_minus(b, o)?;
            let t = b.m("mul", t, vec![Arg::Node(o)])?;
            Ok(vec![(self_of(args)?, b.m("mul", g, vec![Arg::Node(t)])?)])
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
        "silu" => {
            let x = self_of(args)?;
            let xb = b.fwd(x);
            let s = b.m("sigmoid", xb, vec![])?;
            let om = one_minus(b, s)?;
            let t = b.m("mul", xb, vec![Arg::Node(om)])?;
            let t = b.m("add", t, vec![Arg::Float(1.0)])?;
            let t = b.m("mul", s, vec![Arg::Node(t)])?;
            Ok(vec![(x, b.m("mul", g, vec![Arg::Node(t)])?)])
        }
        "gelu" => {
            let p = B::new(&["input", "approximate"], args, kwargs, &name)?;
            let x = p
                .node("input")
                .ok_or_else(|| AutodiffError::NoRule("gelu".into()))?;
            let approx = p.str("approximate").unwrap_or("none");
            let xb = b.fwd(x);
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
            Ok(vec![(x, b.m("mul", g, vec![Arg::Node(d)])?)])
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
        "clamp" => {
            let p = B::new(&["input", "min", "max"], args, kwargs, &name)?;
            let x = p
                .node("input")
                .ok_or_else(|| AutodiffError::NoRule("clamp".into()))?;
            if p.node("min").is_some() || p.node("max").is_some() {
                return no_rule("clamp with tensor bounds");
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
            if p.node("value").is_some() {
                return no_rule("masked_fill with a tensor value");
            }
            let mk = p
                .node("mask")
                .ok_or_else(|| AutodiffError::NoRule("masked_fill".into()))?;
            let mb = b.fwd(mk);
            let gx = b.m("masked_fill", g, vec![Arg::Node(mb), Arg::Int(0)])?;
            let s = b.fsizes(x)?;
            Ok(vec![(x, b.reduce_to(gx, &s)?)])
        }
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
        "view" | "reshape" | "flatten" | "unflatten" | "squeeze" | "unsqueeze" | "view_as"
        | "reshape_as" | "contiguous" | "clone" => {
            let x = self_of(args)?;
            let s = b.fsizes(x)?;
            let gs = b.bsizes(g)?;
            if gs == s {
                return Ok(vec![(x, g)]);
            }
            Ok(vec![(x, b.m("reshape", g, vec![ints(&s)])?)])
        }
        "to" | "float" | "double" | "half" | "bfloat16" | "type_as" => {
            // A dtype cast: the gradient is cast back (by `accumulate`); a device move has no
            // rule here.
            let x = self_of(args)?;
            if b.fmeta(x)?.device != b.fmeta(out)?.device {
                return no_rule("to (a device move)");
            }
            Ok(vec![(x, g)])
        }
        "permute" => {
            let x = self_of(args)?;
            let n = b.fsizes(x)?.len();
            let dims = varargs_ints(args).ok_or_else(|| AutodiffError::NoRule("permute".into()))?;
            let mut inv = vec![0i64; n];
            for (i, &d) in dims.iter().enumerate() {
                inv[wrap(d, n)?] = i as i64;
            }
            Ok(vec![(x, b.m("permute", g, vec![ints(&inv)])?)])
        }
        "transpose" => {
            let p = B::new(&["input", "dim0", "dim1"], args, kwargs, &name)?;
            let x = p
                .node("input")
                .ok_or_else(|| AutodiffError::NoRule("transpose".into()))?;
            let (d0, d1) = (p.int("dim0").unwrap_or(0), p.int("dim1").unwrap_or(1));
            Ok(vec![(
                x,
                b.m("transpose", g, vec![Arg::Int(d0), Arg::Int(d1)])?,
            )])
        }
        "t" => Ok(vec![(self_of(args)?, b.m("t", g, vec![])?)]),
        "expand" | "expand_as" | "broadcast_to" => {
            let x = self_of(args)?;
            let s = b.fsizes(x)?;
            Ok(vec![(x, b.reduce_to(g, &s)?)])
        }
        "narrow" => {
            let p = B::new(&["input", "dim", "start", "length"], args, kwargs, &name)?;
            let x = p
                .node("input")
                .ok_or_else(|| AutodiffError::NoRule("narrow".into()))?;
            let (Some(d), Some(st), Some(len)) = (p.int("dim"), p.int("start"), p.int("length"))
            else {
                return no_rule("narrow");
            };
            let xs = b.fsizes(x)?;
            let d = wrap(d, xs.len())?;
            let st = if st < 0 { st + xs[d] } else { st };
            Ok(vec![(x, slice_back(b, g, &xs, d, st, st + len, 1)?)])
        }
        "select" => {
            let p = B::new(&["input", "dim", "index"], args, kwargs, &name)?;
            let x = p
                .node("input")
                .ok_or_else(|| AutodiffError::NoRule("select".into()))?;
            let (Some(d), Some(i)) = (p.int("dim"), p.int("index")) else {
                return no_rule("select");
            };
            let xs = b.fsizes(x)?;
            let d = wrap(d, xs.len())?;
            let z = zeros(b, g, &xs)?;
            let meta = contiguous_like(b, g, &xs)?;
            let r = b.call_with_meta(
                Target::Method("select_scatter".into()),
                vec![Arg::Node(z), Arg::Node(g), Arg::Int(d as i64), Arg::Int(i)],
                meta,
            );
            Ok(vec![(x, r)])
        }
        "getitem" => getitem(b, args, g),
        "cat" => {
            let p = B::new(&["tensors", "dim"], args, kwargs, &name)?;
            let d = p.int("dim").unwrap_or(0);
            let Some(Arg::List(ts) | Arg::Tuple(ts)) = p.get("tensors") else {
                return no_rule("cat");
            };
            let ts = ts.clone();
            let os = b.fsizes(out)?;
            let d = wrap(d, os.len())?;
            let mut off = 0i64;
            let mut r = Vec::new();
            for t in ts {
                let Arg::Node(t) = t else {
                    return no_rule("cat");
                };
                let s = b.fsizes(t)?;
                if s.len() == 1 && s[0] == 0 && os.len() != 1 {
                    continue; // a legacy empty tensor takes no part
                }
                if b.needs(t) {
                    r.push((
                        t,
                        b.m(
                            "narrow",
                            g,
                            vec![Arg::Int(d as i64), Arg::Int(off), Arg::Int(s[d])],
                        )?,
                    ));
                }
                off += s[d];
            }
            Ok(r)
        }
        "stack" => {
            let p = B::new(&["tensors", "dim"], args, kwargs, &name)?;
            let d = p.int("dim").unwrap_or(0);
            let Some(Arg::List(ts) | Arg::Tuple(ts)) = p.get("tensors") else {
                return no_rule("stack");
            };
            let ts = ts.clone();
            let os = b.fsizes(out)?;
            let d = wrap(d, os.len())?;
            let mut r = Vec::new();
            for (i, t) in ts.into_iter().enumerate() {
                let Arg::Node(t) = t else {
                    return no_rule("stack");
                };
                if b.needs(t) {
                    r.push((
                        t,
                        b.m("select", g, vec![Arg::Int(d as i64), Arg::Int(i as i64)])?,
                    ));
                }
            }
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
            let o = b.fwd(out);
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
            Ok(vec![(x, gx)])
        }
        "layer_norm" => layer_norm(b, args, kwargs, g),
        "dropout" => {
            // What `random::rewrite_dropout` left: no draw (eval mode, or p = 0), the identity.
            let p = match sp {
                Spelling::Functional => {
                    B::new(&["input", "p", "training", "inplace"], args, kwargs, &name)?
                }
                _ => B::new(&["input", "p", "train"], args, kwargs, &name)?,
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
        "cross_entropy" | "nll_loss" => loss(b, &name, args, kwargs, g),
        "conv1d" | "conv2d" => conv(b, &name, args, kwargs, g),
        _ => no_rule(match sp {
            Spelling::Method => format!("Tensor.{name}"),
            _ => target.name().to_string(),
        }),
    }
}

/// The rule of a multi-output op given the gradients of the items taken from it.
pub fn tuple_rule(
    b: &mut Bw,
    id: NodeId,
    target: &Target,
    args: &[Arg],
    kwargs: &[(String, Arg)],
    parts: &HashMap<usize, NodeId>,
) -> Result<Grads> {
    let name = target.name().rsplit('.').next().unwrap_or("");
    match name {
        "split" | "chunk" | "unbind" => {
            let x = self_of(args)?;
            let dim_pos = if name == "unbind" { 1 } else { 2 };
            let d = match (args.get(dim_pos), kwargs.iter().find(|(k, _)| k == "dim")) {
                (_, Some((_, Arg::Int(d)))) => *d,
                (Some(Arg::Int(d)), None) => *d,
                _ => 0,
            };
            let xs = b.fsizes(x)?;
            let d = wrap(d, xs.len())?;
            let crate::meta::NodeMeta::Tuple(items) = &b.f.node(id).meta else {
                return no_rule(name);
            };
            let items = items.clone();
            let mut pieces = Vec::new();
            let mut any = None;
            for (i, m) in items.iter().enumerate() {
                let Some(t) = m.tensor() else {
                    return no_rule(name);
                };
                let s = t
                    .known_sizes()
                    .ok_or_else(|| AutodiffError::Unsupported("symbolic sizes".into()))?;
                pieces.push((parts.get(&i).copied(), s));
                any = any.or(parts.get(&i).copied());
            }
            let any = any.unwrap();
            let mut list = Vec::new();
            for (gi, s) in pieces {
                let v = match gi {
                    Some(v) => v,
                    None => zeros(b, any, &s)?,
                };
                let v = if name == "unbind" {
                    b.m("unsqueeze", v, vec![Arg::Int(d as i64)])?
                } else {
                    v
                };
                list.push(Arg::Node(v));
            }
            let r = b.call(
                Target::Function("torch.cat".into()),
                vec![Arg::List(list), Arg::Int(d as i64)],
                vec![],
            )?;
            Ok(vec![(x, r)])
        }
        _ => no_rule(target.name()),
    }
}

fn self_of(args: &[Arg]) -> Result<NodeId> {
    match args.first() {
        Some(Arg::Node(n)) => Ok(*n),
        _ => no_rule("an op on a non-tensor"),
    }
}

fn norm_dims(dims: Vec<i64>, n: usize) -> Result<Vec<usize>> {
    let mut v = dims
        .into_iter()
        .map(|d| wrap(d, n))
        .collect::<Result<Vec<_>>>()?;
    v.sort();
    v.dedup();
    Ok(v)
}

/// `g` with the reduced `dims` put back as size 1 (when the reduction dropped them).
fn restore_dims(b: &mut Bw, g: NodeId, dims: &[usize], keep: bool) -> Result<NodeId> {
    let mut r = g;
    if !keep {
        for &d in dims {
            r = b.m("unsqueeze", r, vec![Arg::Int(d as i64)])?;
        }
    }
    Ok(r)
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
    if b.needs(y) {
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

/// Zeros of `sizes` in `like`'s dtype and device.
fn zeros(b: &mut Bw, like: NodeId, sizes: &[i64]) -> Result<NodeId> {
    b.m("new_zeros", like, vec![ints(sizes)])
}

fn contiguous_like(b: &Bw, like: NodeId, sizes: &[i64]) -> Result<TensorMeta> {
    let m = b.bmeta(like)?;
    Ok(TensorMeta::contiguous(m.dtype, m.device, sizes))
}

/// The gradient of `x[start:end:step]` along `dim`: `g` scattered into zeros of `xs`.
fn slice_back(
    b: &mut Bw,
    g: NodeId,
    xs: &[i64],
    dim: usize,
    start: i64,
    end: i64,
    step: i64,
) -> Result<NodeId> {
    let z = zeros(b, g, xs)?;
    let meta = contiguous_like(b, g, xs)?;
    Ok(b.call_with_meta(
        Target::Method("slice_scatter".into()),
        vec![
            Arg::Node(z),
            Arg::Node(g),
            Arg::Int(dim as i64),
            Arg::Int(start),
            Arg::Int(end),
            Arg::Int(step),
        ],
        meta,
    ))
}

/// `x[index]` with ints, slices, `None` and `...`: the gradient is `g` written into zeros at
/// the same index (`torchferro._aot.index_backward`, one extern call).
fn getitem(b: &mut Bw, args: &[Arg], g: NodeId) -> Result<Grads> {
    let x = self_of(args)?;
    let idx = args
        .get(1)
        .cloned()
        .ok_or_else(|| AutodiffError::NoRule("getitem".into()))?;
    fn basic(a: &Arg) -> bool {
        match a {
            Arg::Int(_) | Arg::None | Arg::Ellipsis => true,
            Arg::Slice(a, b, c) => [a, b, c]
                .iter()
                .all(|v| matches!(***v, Arg::Int(_) | Arg::None)),
            Arg::Tuple(items) => items.iter().all(basic),
            _ => false,
        }
    }
    if !basic(&idx) {
        return no_rule("getitem with a tensor or list index");
    }
    let xs = b.fsizes(x)?;
    let meta = contiguous_like(b, g, &xs)?;
    let r = b.call_with_meta(
        Target::Function("torchferro._aot.index_backward".into()),
        vec![Arg::Node(g), ints(&xs), idx],
        meta,
    );
    Ok(vec![(x, r)])
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
    // Mean and 1/std recomputed from the saved input (the forward keeps neither).
    let xb = b.fwd(x);
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
        r.push((wn, t));
    }
    if let Some(bn) = p.node("bias").filter(|n| b.needs(*n)) {
        let t = if batch.is_empty() {
            g
        } else {
            b.m("sum", g, vec![ints(&batch), Arg::Bool(false)])?
        };
        r.push((bn, t));
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
        r.push((x, b.m("mul", d, vec![Arg::Node(rstd)])?));
    }
    Ok(r)
}

/// `cross_entropy`/`nll_loss` with class-index targets, no class weights, no label smoothing.
fn loss(
    b: &mut Bw,
    name: &str,
    args: &[Arg],
    kwargs: &[(String, Arg)],
    g: NodeId,
) -> Result<Grads> {
    let p = B::new(
        &[
            "input",
            "target",
            "weight",
            "size_average",
            "ignore_index",
            "reduce",
            "reduction",
            "label_smoothing",
        ],
        args,
        kwargs,
        name,
    )?;
    if p.get("weight").is_some()
        || p.get("size_average").is_some()
        || p.get("reduce").is_some()
        || p.float("label_smoothing").is_some_and(|l| l != 0.0)
    {
        return no_rule(format!(
            "{name} with weight, label smoothing or legacy reduction"
        ));
    }
    let (Some(x), Some(t)) = (p.node("input"), p.node("target")) else {
        return no_rule(name);
    };
    let xs = b.fsizes(x)?;
    let tm = b.fmeta(t)?;
    if xs.len() != 2 || tm.dtype.is_floating_point() {
        return no_rule(format!(
            "{name} on other than (N, C) logits and class indices"
        ));
    }
    let ignore = p.int("ignore_index").unwrap_or(-100);
    let reduction = p.str("reduction").unwrap_or("mean");
    let tb = b.fwd(t);
    let keep = b.m("ne", tb, vec![Arg::Int(ignore)])?;
    let drop = b.m("logical_not", keep, vec![])?;
    let safe = b.m("masked_fill", tb, vec![Arg::Node(drop), Arg::Int(0)])?;
    let safe = b.m("unsqueeze", safe, vec![Arg::Int(1)])?;
    let xb = b.fwd(x);
    let z = zeros(b, xb, &xs)?;
    let zm = b.bmeta(z)?;
    let onehot = b.call_with_meta(
        Target::Method("scatter".into()),
        vec![Arg::Node(z), Arg::Int(1), Arg::Node(safe), Arg::Float(1.0)],
        zm,
    );
    // d loss_i / d input_i = softmax(input_i) - onehot(t_i) (cross_entropy) or -onehot (nll).
    let d = if name == "cross_entropy" {
        let sm = b.m("softmax", xb, vec![Arg::Int(1)])?;
        b.m("sub", sm, vec![Arg::Node(onehot)])?
    } else {
        b.m("neg", onehot, vec![])?
    };
    let k = b.m("unsqueeze", keep, vec![Arg::Int(1)])?;
    let nk = b.m("logical_not", k, vec![])?;
    let d = b.m("masked_fill", d, vec![Arg::Node(nk), Arg::Int(0)])?;
    let gx = match reduction {
        "none" => {
            let gu = b.m("unsqueeze", g, vec![Arg::Int(1)])?;
            b.m("mul", d, vec![Arg::Node(gu)])?
        }
        "sum" => b.m("mul", d, vec![Arg::Node(g)])?,
        "mean" => {
            let cnt = b.m("sum", keep, vec![])?;
            let t = b.m("div", g, vec![Arg::Node(cnt)])?;
            b.m("mul", d, vec![Arg::Node(t)])?
        }
        other => return no_rule(format!("{name}(reduction={other:?})")),
    };
    Ok(vec![(x, gx)])
}

/// `1 - x`, as `-x + 1` (the same value in IEEE arithmetic).
fn one_minus(b: &mut Bw, x: NodeId) -> Result<NodeId> {
    let n = b.m("neg", x, vec![])?;
    b.m("add", n, vec![Arg::Float(1.0)])
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
    let meta = |b: &Bw, n: NodeId| -> Result<crate::meta::NodeMeta> {
        let m = b.fmeta(n)?;
        let s = m.known_sizes().unwrap_or_default();
        Ok(crate::meta::NodeMeta::Tensor(TensorMeta::contiguous(
            m.dtype,
            m.device.clone(),
            &s,
        )))
    };
    let bmeta = match bias {
        Some(n) => meta(b, n)?,
        None => crate::meta::NodeMeta::None,
    };
    let tuple = crate::meta::NodeMeta::Tuple(vec![meta(b, x)?, meta(b, w)?, bmeta]);
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
    let mut out = Vec::new();
    for (i, input) in [Some(x), Some(w), bias].into_iter().enumerate() {
        let (Some(input), true) = (input, mask[i]) else {
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
    Ok(out)
}
