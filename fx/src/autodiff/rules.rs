//! One vector-Jacobian product per catalog op, in the catalog's vocabulary (tensor methods the
//! inductor lowers). The formulas are the facts of torch's `derivatives.yaml`
//! (`torchgen/packaged/autograd/derivatives.yaml`): e.g. `mul: self: grad * other`,
//! `tanh: self: tanh_backward(grad, result)` = `grad * (1 - result²)`, `_softmax: self:
//! _softmax_backward_data(grad, result, dim)` = `result * (grad - (grad * result).sum(dim))`.
//! A form a rule does not model answers [`AutodiffError::NoRule`], never a guess.

use std::collections::HashMap;

use super::{ints, AutodiffError, Bw, Result};
use crate::graph::{Arg, Graph, Node, NodeId, NodeKind, Target};
use crate::meta::{DType, NodeMeta, TensorMeta};
use crate::ops::{self, Spelling};

mod elementary;
mod embedding_bag;
mod index;
mod kept;
mod losses;
mod nn;
mod pointwise;
mod shape;
mod train;

pub use kept::kept_by_eager;
pub use train::MAX_POOL2D_BACKWARD;

/// One call being differentiated, as the rule families read it.
#[derive(Clone, Copy)]
struct Call<'a> {
    /// The forward node (its result).
    out: NodeId,
    /// The canonical op name.
    name: &'a str,
    sp: Spelling,
    args: &'a [Arg],
    kwargs: &'a [(String, Arg)],
    /// The gradient of the result.
    g: NodeId,
}

/// (forward input, its gradient contribution in the backward).
type Grads = Vec<(NodeId, NodeId)>;

fn no_rule<T>(what: impl Into<String>) -> Result<T> {
    Err(AutodiffError::NoRule(what.into()))
}

/// Layer norm's backward on a 16-bit input runs in float32 (as batch norm's, through
/// [`Bw::float32`]): eager's fused kernels accumulate in float32 and round the input's gradient
/// once. Written in 16-bit, the centring, the reductions and the cancellation in `g - mean(g) -
/// xhat * mean(g * xhat)` each round: a bfloat16 layer norm's weight gradient came out 3.5% off
/// the exact one (eager's 1.5%) in a generated autocast training step's check.
struct Upcast {
    low: bool,
}

impl Upcast {
    /// `xb` and `g` (the saved input and the output's gradient) in float32 where `x` is 16-bit.
    fn new(b: &mut Bw, x: NodeId, xb: NodeId, g: NodeId) -> Result<(Self, NodeId, NodeId)> {
        let low = matches!(b.fmeta(x)?.dtype, DType::BFloat16 | DType::Float16);
        Ok((Upcast { low }, b.float32(xb)?, b.float32(g)?))
    }

    /// A gradient computed in float32 (`r`) back in the dtype of its tensor `of`.
    fn back(&self, b: &mut Bw, r: NodeId, of: NodeId) -> Result<NodeId> {
        let dt = b.fmeta(of)?.dtype;
        if self.low && dt != DType::Float32 {
            b.m("to", r, vec![Arg::DType(dt)])
        } else {
            Ok(r)
        }
    }
}

/// Ops whose result carries no gradient (comparisons, integer results, index queries, factories
/// of a tensor's shape). Ops whose derivative is zero but whose result does require grad in
/// eager (`floor`, `round`, `sign`, `bernoulli`: `zeros_like(grad)` in `derivatives.yaml`) are
/// not among them: eager's autograd graph keeps their edge, so a loss through them still
/// requires grad and the input gets a zero gradient, not `None` ([`zero_derivative`]).
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
            | "detach"
            | "isnan"
            | "isinf"
            | "isfinite"
            | "logical_not"
            | "logical_and"
            | "logical_or"
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
    /// Binds to the catalog's signature of `name` (the one `fx::infer` and the inductor's
    /// lowering bind).
    fn catalog(name: &str, args: &'a [Arg], kwargs: &'a [(String, Arg)]) -> Result<B<'a>> {
        let sig = ops::signature(name).ok_or_else(|| AutodiffError::NoRule(name.into()))?;
        B::new(sig, args, kwargs, name)
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
    if let Some(r) = index::functional_write(b, id, target, args, kwargs, g) {
        return r;
    }
    if target.name() == nn::WEIGHT_NORM {
        return nn::weight_norm(b, args, kwargs, g);
    }
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
    let call = Call {
        out: id,
        name: &name,
        sp,
        args,
        kwargs,
        g,
    };
    match by_family(b, &call)? {
        Some(r) => Ok(r),
        None => no_rule(match sp {
            Spelling::Method => format!("Tensor.{name}"),
            _ => target.name().to_string(),
        }),
    }
}

/// The rule of an in-place method functionalization left as `on_clone(path, x, *args)`
/// (`x.name_(*args)` on a clone of `x`) whose catalog op has an out-of-place twin: `on_clone`
/// computes what `x.name(*args)` computes, so the twin's rule is the write's, `x` its `input`.
/// Random ops are not taken (`x.normal_(m, s)` is no `torch.normal(x, ...)`). `None`: no such
/// twin; `Ok(None)`: a twin without a rule.
pub(super) fn twin_of_write(
    b: &mut Bw,
    id: NodeId,
    path: &str,
    args: &[Arg],
    kwargs: &[(String, Arg)],
    g: NodeId,
) -> Option<Result<Option<Grads>>> {
    let core = path.strip_prefix("torch.Tensor.")?.strip_suffix('_')?;
    let twin = ops::op(core).is_some_and(|o| o.flags & ops::flag::FUNCTIONAL_TWIN != 0);
    if !twin || core.ends_with('_') || ops::is_random(&Target::Method(core.into())) {
        return None;
    }
    let name = ops::unalias(core).to_string();
    Some(by_family(
        b,
        &Call {
            out: id,
            name: &name,
            sp: Spelling::Method,
            args,
            kwargs,
            g,
        },
    ))
}

/// The rule of the first family that knows `call`'s op.
fn by_family(b: &mut Bw, call: &Call) -> Result<Option<Grads>> {
    for family in [
        pointwise::rule,
        elementary::rule,
        shape::rule,
        nn::rule,
        losses::rule,
        train::rule,
        index::rule,
        embedding_bag::rule,
    ] {
        if let Some(r) = family(b, call)? {
            return Ok(Some(r));
        }
    }
    Ok(None)
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
    if matches!(
        target.name(),
        super::fused_attention::FLASH_CPU | super::fused_attention::CUDA_FORWARD
    ) {
        return train::sdpa_fused_backward(b, id, args, kwargs, parts);
    }
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
        "topk" | "sort" | "max" | "min" | "kthvalue" | "median" | "mode" => {
            value_selecting(b, id, name, args, kwargs, parts)
        }
        _ => no_rule(target.name()),
    }
}

/// The ops that return values picked from their input with the indices they were picked at
/// (`derivatives.yaml`: `value_selecting_reduction_backward(grad, dim, indices, sizes,
/// keepdim)` = zeros of the input's sizes with `grad` scattered to `indices` along `dim`; for
/// `topk`/`sort` the indices keep the dim). Only the values carry a gradient; the indices are
/// the forward's own item 1 where the trace took it, else the same call again.
fn value_selecting(
    b: &mut Bw,
    id: NodeId,
    name: &str,
    args: &[Arg],
    kwargs: &[(String, Arg)],
    parts: &HashMap<usize, NodeId>,
) -> Result<Grads> {
    let sig: &[&'static str] = match name {
        "topk" => &["input", "k", "dim", "largest", "sorted"],
        "sort" => &["input", "dim", "descending", "*", "stable"],
        "kthvalue" => &["input", "k", "dim", "keepdim"],
        "mode" => &["input", "dim", "keepdim"],
        _ => &["input", "dim", "keepdim"],
    };
    let p = B::new(sig, args, kwargs, name)?;
    let Some(x) = p.node("input") else {
        return no_rule(name);
    };
    let Some(&gv) = parts.get(&0) else {
        return Ok(Vec::new());
    };
    let dim = match p.int("dim") {
        Some(d) => d,
        None if matches!(name, "topk" | "sort" | "kthvalue" | "mode") => -1,
        None => return no_rule(format!("{name} without dim")),
    };
    let xs = b.fsizes(x)?;
    let d = wrap(dim, xs.len().max(1))? as i64;
    let keeps = matches!(name, "topk" | "sort") || p.boolean("keepdim", false);
    let found = b.f.nodes().find_map(|(n, node)| match &node.kind {
        NodeKind::Call { target, args, .. } => {
            (tuple_item(b.f, target, args) == Some((id, 1))).then_some(n)
        }
        _ => None,
    });
    let idx = match found {
        Some(n) => b.fwd(n),
        None => {
            let NodeKind::Call {
                target,
                args,
                kwargs,
            } = &b.f.node(id).kind
            else {
                return no_rule(name);
            };
            let (target, args, kwargs) = (target.clone(), args.clone(), kwargs.clone());
            let args: Vec<Arg> = args.iter().map(|a| b.map_arg(a)).collect();
            let kwargs: Vec<(String, Arg)> = kwargs
                .iter()
                .map(|(k, a)| (k.clone(), b.map_arg(a)))
                .collect();
            let meta = b.f.node(id).meta.clone();
            let NodeMeta::Tuple(items) = &meta else {
                return no_rule(name);
            };
            let Some(im) = items.get(1).cloned() else {
                return no_rule(name);
            };
            let t = b.g.call(name, target, args, kwargs, meta.clone());
            b.raw(
                "indices",
                Target::Function("operator.getitem".into()),
                vec![Arg::Node(t), Arg::Int(1)],
                im,
            )
        }
    };
    let (mut gv, mut idx) = (gv, idx);
    if !keeps && !xs.is_empty() {
        gv = b.m("unsqueeze", gv, vec![Arg::Int(d)])?;
        idx = b.m("unsqueeze", idx, vec![Arg::Int(d)])?;
    }
    let z = zeros(b, gv, &xs)?;
    let r = b.m(
        "scatter",
        z,
        vec![Arg::Int(d), Arg::Node(idx), Arg::Node(gv)],
    )?;
    Ok(vec![(x, r)])
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

/// The gradient of an input whose derivative is zero (`zeros_like(grad)` in
/// `derivatives.yaml`: `floor`, `sign`, a tensor overwritten whole by `fill_`/`zero_`/`copy_`):
/// zeros of `x`'s sizes where `x` carries a gradient. Eager's graph keeps the edge, so the input
/// is reached and its gradient is zeros; left out, the input got `None` (an optimizer with weight
/// decay then skipped it) or, where it was the only path, the output required no grad at all.
fn zero_derivative(b: &mut Bw, x: NodeId, g: NodeId) -> Result<Grads> {
    if !b.needs(x) {
        return Ok(Vec::new());
    }
    let xs = b.fsizes(x)?;
    Ok(vec![(x, zeros(b, g, &xs)?)])
}

/// Zeros of `sizes` in `like`'s dtype and device.
fn zeros(b: &mut Bw, like: NodeId, sizes: &[i64]) -> Result<NodeId> {
    b.m("new_zeros", like, vec![ints(sizes)])
}

fn contiguous_like(b: &Bw, like: NodeId, sizes: &[i64]) -> Result<TensorMeta> {
    let m = b.bmeta(like)?;
    Ok(TensorMeta::contiguous(m.dtype, m.device, sizes))
}

/// `1 - x`, as `-x + 1` (the same value in IEEE arithmetic).
fn one_minus(b: &mut Bw, x: NodeId) -> Result<NodeId> {
    let n = b.m("neg", x, vec![])?;
    b.m("add", n, vec![Arg::Float(1.0)])
}
