//! Metadata inference over symbolic sizes (dynamic shapes).
//!
//! The concrete rules of this module compute on numbers. A call whose inputs have symbolic sizes
//! is answered in two parts:
//!
//! - **Concrete evaluation at several points.** The concrete rules run with every symbol
//!   replaced by its hint (the size seen at trace time) and by two probe assignments (each hint
//!   times a different small prime per symbol, so relations between hints and constants, such
//!   as divisibility, survive). The hint run decides dtype, device, `requires_grad` and
//!   validity, exactly as a static trace would.
//! - **Symbolic sizes.** Ops whose result sizes are selections (each result size is an input
//!   size, an int argument or a constant: pointwise ops with broadcasting, reductions, matmul,
//!   softmax, layer norm, permutes, conversions, factories) get their sizes *fitted*: each result
//!   size is matched to the candidate expression that agrees with all three concrete runs. Ops
//!   whose sizes are computed (`cat`, `view(-1)`, `flatten`, slicing) have explicit rules here.
//!   Strides are the symbolic contiguous strides or fitted the same way.
//!
//! Every answer is then checked at the three points against the concrete rules; a mismatch is
//! `Unsupported`, never a guess. Decisions that depend on the sizes' values (a slice bound
//! clamped to the size, `cat`'s and broadcasting's equal sizes, a `view`'s divisibility) are
//! returned as [`Relation`]s that held at the hints: the tracer installs them as guards.
//! Convolutions and pooling (`symbolic/windows.rs`) and `narrow`/`split`/`chunk` along a
//! symbolic dimension (`symbolic/cuts.rs`) have explicit rules too; `unbind` of a symbolic
//! dimension (a piece per element) answers `Unsupported`.

use std::cell::RefCell;

mod computed;
mod cuts;
mod windows;

use super::{run_handlers, InferCtx, InferError};
use crate::graph::{Arg, Graph, Target};
use crate::meta::{DType, Dim, NodeMeta, TensorMeta};
use crate::sym::{RelOp, Relation, SymExpr};

thread_local! {
    /// The assignment the concrete rules see symbols with, while [`infer_symbolic`] runs them.
    static ASSIGNMENT: RefCell<Option<Vec<i64>>> = const { RefCell::new(None) };
}

/// A dimension as a number: known, or symbolic under the current assignment.
pub(crate) fn concrete(d: &Dim) -> Option<i64> {
    match d {
        Dim::Known(v) => Some(*v),
        Dim::Sym(e) => ASSIGNMENT.with(|a| {
            let a = a.borrow();
            let a = a.as_ref()?;
            e.eval(&|k| a.get(k as usize).copied().unwrap_or(i64::MIN))
        }),
    }
}

fn with_assignment<R>(values: &[i64], f: impl FnOnce() -> R) -> R {
    let prev = ASSIGNMENT.with(|a| a.replace(Some(values.to_vec())));
    let r = f();
    ASSIGNMENT.with(|a| *a.borrow_mut() = prev);
    r
}

/// Whether any argument is a node with symbolic metadata.
pub fn has_symbolic_arg(graph: &Graph, args: &[Arg], kwargs: &[(String, Arg)]) -> bool {
    let mut nodes = Vec::new();
    args.iter().for_each(|a| a.nodes(&mut nodes));
    kwargs.iter().for_each(|(_, a)| a.nodes(&mut nodes));
    nodes.iter().any(|&n| graph.node(n).meta.is_symbolic())
}

const PRIMES: [i64; 5] = [2, 3, 5, 7, 11];

/// Ops the native rules do not know whose result sizes are selections of input sizes and int
/// arguments: fitted from an external evaluator (the tracer runs them on meta tensors).
const EXTERNAL_FITTED: &[&str] = &[
    "triu",
    "tril",
    "embedding",
    "scaled_dot_product_attention",
    "gelu",
    "silu",
    "mish",
    "softplus",
    "elu",
    "leaky_relu",
    "hardtanh",
    "rms_norm",
    "group_norm",
    "cumsum",
    "cumprod",
    "flip",
    "roll",
    "baddbmm",
    "addmm",
    "bmm",
    "einsum",
    "masked_fill",
    "where",
    "repeat",
    "expand",
    "type_as",
    "tanh",
    "log_softmax",
    "softmax",
    "dropout",
    "layer_norm",
    "normalize",
    "clone",
    "contiguous",
    "to",
    "float",
    "half",
    "bfloat16",
    "detach",
    "new_zeros",
    "new_ones",
    "new_empty",
    "new_full",
    "zeros_like",
    "ones_like",
    "full_like",
    "empty_like",
    "rand_like",
    "randn_like",
    "argmax",
    "argmin",
    "topk",
    "sort",
    "argsort",
    // Losses: a scalar, or the input's sizes with `reduction="none"`; the input and target
    // sizes torch requires equal fail the probes when they are not one symbol.
    "cross_entropy",
    "nll_loss",
    "mse_loss",
    "l1_loss",
    "smooth_l1_loss",
    "huber_loss",
    "binary_cross_entropy",
    "binary_cross_entropy_with_logits",
    "kl_div",
];

/// A concrete evaluator of one call at an assignment of the symbols.
pub type Evaluate<'a> = &'a dyn Fn(&[i64]) -> Result<NodeMeta, InferError>;

/// Whether an assignment of the symbols is one the trace admits.
pub type Admits<'a> = &'a dyn Fn(&[i64]) -> bool;

/// What [`infer_symbolic`] knows of the symbols.
#[derive(Clone, Copy)]
pub struct Symbols<'a> {
    /// `hints[k]`: symbol `k`'s size at trace time.
    pub hints: &'a [i64],
    /// Evaluates the call concretely where the native rules do not know it (ops of
    /// [`EXTERNAL_FITTED`], or any op when all its symbols are pinned).
    pub external: Option<Evaluate<'a>>,
    /// Symbols the caller guards equal to their hints.
    pub pinned: &'a [u32],
    /// `same[k]`: the symbol `k` is guarded equal to (torch's replacements: an op needed
    /// `s1 == s0`); every probe point gives `k` that symbol's value. Empty: each its own.
    pub same: &'a [u32],
    /// Whether a probe point is one the trace admits (the shape environment's relations so
    /// far: after `view(n, -1)` guarded `s0 % n == 0`, a point breaking it is no size the
    /// graph runs at, and an op's concrete rules there say nothing). `None`: every point.
    pub admits: Option<Admits<'a>>,
    /// The call runs under autocast: the native rules see the dtypes before autocast's casts
    /// (`addmm` of a bfloat16 activation and a float32 weight), so their dtype checks say
    /// nothing, and where they refuse, the external evaluator (run under the state) answers.
    pub autocast: bool,
}

impl<'a> Symbols<'a> {
    pub fn hints(hints: &'a [i64]) -> Symbols<'a> {
        Symbols {
            hints,
            external: None,
            pinned: &[],
            same: &[],
            admits: None,
            autocast: false,
        }
    }
}

/// The metadata of a call with symbolic inputs, with the relations between sizes it relies on.
pub fn infer_symbolic(
    ctx: &InferCtx,
    graph: &Graph,
    target: &Target,
    args: &[Arg],
    kwargs: &[(String, Arg)],
    shapes: Symbols<'_>,
) -> Result<(NodeMeta, Vec<Relation>), InferError> {
    let Symbols {
        hints,
        external,
        pinned,
        same,
        admits,
        autocast,
    } = shapes;
    let name = super::split_target(target).map(|(_, n)| n).unwrap_or("");
    let native = |p: &[i64]| with_assignment(p, || run_handlers(ctx, graph, target, args, kwargs));
    let (mut family, mut first) = native(hints);
    let cx = Sym {
        graph,
        hints,
        pinned,
    };
    // What the op requires of its input sizes whatever they are (broadcasting's aligned sizes,
    // a matrix product's contracted ones) shapes the probe points, as torch's rule decides it
    // (`_broadcast_shapes`: two sizes that are not 1 are checked equal, and the check becomes a
    // guard and a replacement): two symbols it needs equal take one value at every point, and
    // one it needs equal to a constant keeps its hint. The relations are returned with the
    // answer; the shape environment guards them and writes the two symbols as one from then
    // on. (Probing them apart would break the op at the probes, so the op would specialize.)
    let (same, pinned) = required_classes(
        &cx.required(family, name, args, kwargs),
        hints,
        same,
        pinned,
    );
    let (same, pinned) = (&same[..], &pinned[..]);
    // The hints, two assignments above them (each symbol times its own prime, which keeps
    // divisibility by constants) and one below them (small distinct sizes: a result size that
    // depends on a threshold, such as a bound clamped to the size, shows there). A pinned
    // symbol (the caller guards it equal to its hint) keeps its hint everywhere.
    // Symbols guarded equal (`same`) take one value at every point.
    let at = |f: &dyn Fn(usize, i64) -> i64| -> Vec<i64> {
        let p: Vec<i64> = hints
            .iter()
            .enumerate()
            .map(|(k, h)| {
                if pinned.contains(&(k as u32)) {
                    *h
                } else {
                    f(k, *h)
                }
            })
            .collect();
        (0..p.len())
            .map(|k| same.get(k).map_or(p[k], |&r| p[r as usize]))
            .collect()
    };
    let points: Vec<Vec<i64>> = vec![
        hints.to_vec(),
        at(&|k, h| h * PRIMES[k % 5]),
        at(&|k, h| h * PRIMES[(k + 2) % 5]),
        at(&|k, _| 2 + k as i64),
    ];
    let mut arg_nodes = Vec::new();
    args.iter().for_each(|a| a.nodes(&mut arg_nodes));
    kwargs.iter().for_each(|(_, a)| a.nodes(&mut arg_nodes));
    // Every symbol the call reads is pinned: its result is the one at the hints, whatever the
    // op (then any op may be evaluated externally and fitted).
    let all_pinned = arg_nodes.iter().all(|&n| {
        meta_symbols(&graph.node(n).meta)
            .iter()
            .all(|k| pinned.contains(k))
    });
    let autocast_retry =
        autocast && external.is_some() && matches!(first, Err(InferError::Invalid(_)));
    if autocast_retry {
        first = Err(InferError::Unsupported);
    }
    // Ops with an explicit symbolic rule below (`cat`, `view`, ...) whose native rule leaves a
    // case to torch (`cat` of non-contiguous 4-d inputs, whose layout torch picks) take their
    // concrete values from the external evaluator too: the rule gives the sizes, the strides
    // are fitted to what torch computed.
    // Advanced indexing (`x[i, j]` with index tensors): the result sizes are the index
    // tensors' broadcast sizes and the sizes not indexed, all selections: fitted, from meta
    // tensors where the native rule has no answer.
    let advanced = family == "index" && cx.has_tensor_index(args);
    // A cut along a symbolic dimension none of whose symbols is pinned (else it is a
    // selection, fitted).
    let cuts_symbolic = cuts::is_cut(name)
        && matches!(family, "view" | "")
        && cx.cuts_static_dim(name, args, kwargs) == Some(false);
    let explicit_rule = advanced
        || cuts_symbolic
        || (matches!(family, "conv" | "") && windows::window_rank(name).is_some())
        || matches!(
            (family, name),
            ("join", "cat" | "concat" | "concatenate" | "stack")
                | ("view", "view" | "reshape")
                | ("", "diff" | "pad")
        );
    let use_external = first == Err(InferError::Unsupported)
        && external.is_some()
        && (explicit_rule
            || (family.is_empty() && (all_pinned || EXTERNAL_FITTED.contains(&name)))
            // An `nn` rule leaves some cases to torch (`layer_norm` of a bfloat16 input with
            // float32 parameters, as autocast runs it): fitted from torch's answers as well.
            || family == "nn"
            || autocast_retry);
    if use_external && !explicit_rule {
        family = "external";
    }
    let run = |p: &[i64]| -> Result<NodeMeta, InferError> {
        match external {
            Some(f) if use_external => f(p),
            _ => native(p).1,
        }
    };
    let at_hint = if use_external { run(&points[0]) } else { first }?;
    // An item of a tuple result (`x.max(1).values`, a `split` piece): the item's metadata.
    if let ("index", [Arg::Node(n), Arg::Int(i)]) = (family, args) {
        if let NodeMeta::Tuple(items) = &graph.node(*n).meta {
            let i = usize::try_from(*i)
                .ok()
                .or_else(|| usize::try_from(items.len() as i64 + *i).ok());
            return match i.and_then(|i| items.get(i)) {
                Some(m) => Ok((m.clone(), Vec::new())),
                None => Err(InferError::Unsupported),
            };
        }
    }
    let mut rels = Vec::new();
    let explicit = match (family, name) {
        ("index", _) if advanced => None,
        ("join", "cat" | "concat" | "concatenate") => Some(cx.cat(args, kwargs, &mut rels)?),
        ("join", "stack") => Some(cx.stack(args, kwargs)?),
        ("view", "view" | "reshape") => cx.reshape(args, &mut rels)?,
        ("view", "flatten") => Some(cx.flatten(args, kwargs)?),
        ("index", _) => Some(cx.getitem(args, &mut rels)?),
        ("", "diff") => Some(cx.diff(args, kwargs, &mut rels)?),
        ("", "pad") => Some(cx.pad(args, kwargs, &mut rels)?),
        // A window op the rule does not model (`return_indices`, a symbolic kernel size)
        // is a selection when every symbol it reads is pinned (fitted below).
        ("conv" | "", _) if windows::window_rank(name).is_some() => {
            let mut own = Vec::new();
            match cx.window(name, args, kwargs, &mut own) {
                Ok(sizes) => {
                    rels.extend(own);
                    Some(sizes)
                }
                Err(_) if all_pinned => None,
                Err(e) => return Err(e),
            }
        }
        _ => None,
    };
    // Cuts give their whole result (each piece keeps the input's strides): nothing to fit.
    let whole = if cuts_symbolic {
        cx.cut(name, args, kwargs, pinned, &mut rels)?
    } else {
        None
    };
    let fitted_family = matches!(
        family,
        "pointwise" | "reduce" | "matmul" | "nn" | "convert" | "factory" | "external"
    ) || (family == "view"
        && matches!(
            name,
            "contiguous"
                | "expand"
                | "expand_as"
                | "permute"
                | "swapaxes"
                | "swapdims"
                | "t"
                | "transpose"
                | "unsqueeze"
                | "squeeze"
                | "view_as"
                | "reshape_as"
                | "select"
        ));
    // Ops whose result depends on the size of the dimension they cut (`split`, `chunk`,
    // `narrow`, `unbind`) are selections when that dimension is static.
    let fitted_family = fitted_family
        || advanced
        || all_pinned
        || (family == "view" && cx.cuts_static_dim(name, args, kwargs).unwrap_or(false));
    // Above the hints every point must evaluate (or nothing is verified); below them an op
    // may refuse small sizes (it raises for them at run time too, as in eager).
    // A point where the explicit rule's relations fail (`view(n, -1)` of `[s0]` needs
    // `s0 % n == 0`, which the primes break) is outside what the call admits: the hints scaled
    // alike (which keeps such divisibility and every homogeneous relation) verify instead.
    let admitted = |p: &[i64]| admits.is_none_or(|a| a(p));
    let holds_at = |p: &[i64]| {
        rels.iter()
            .all(|r| r.eval(&|k| p[k as usize]) == Some(true))
            && admitted(p)
    };
    let mut others: Vec<Option<NodeMeta>> = Vec::new();
    let mut probes: Vec<Vec<i64>> = Vec::new();
    for (i, p) in points[1..].iter().enumerate() {
        if !admitted(p) {
            // Outside the admitted sizes: the point below is dropped, one above is replaced
            // by the hints scaled alike when that is admitted (else kept, as before).
            if i == 2 {
                others.push(None);
                probes.push(p.clone());
                continue;
            }
            let q = at(&|_, h| h * (i as i64 + 2));
            if admitted(&q) {
                others.push(Some(run(&q)?));
                probes.push(q);
                continue;
            }
        }
        match run(p) {
            Ok(m) => others.push(Some(m)),
            Err(_) if i == 2 => others.push(None),
            Err(_) if (explicit.is_some() || whole.is_some()) && !holds_at(p) => {
                let q = at(&|_, h| h * (i as i64 + 2));
                if !holds_at(&q) {
                    return Err(InferError::Unsupported);
                }
                others.push(Some(run(&q)?));
                probes.push(q);
                continue;
            }
            Err(_) => return Err(InferError::Unsupported),
        }
        probes.push(p.clone());
    }
    let used: Vec<Vec<i64>> = std::iter::once(points[0].clone())
        .chain(
            probes
                .iter()
                .zip(&others)
                .filter(|(_, o)| o.is_some())
                .map(|(p, _)| p.clone()),
        )
        .collect();
    let others: Vec<NodeMeta> = others.into_iter().flatten().collect();
    let mut candidates = cx.candidates(args, kwargs);
    if (family, name) == ("view", "unsqueeze") {
        // The new dimension strides by the size times the stride of the one it precedes
        // (torch's rule): on a non-contiguous input (a slice of a `cat`) that product is no
        // input stride and no contiguous one.
        candidates.strides.extend(cx.size_stride_products(args));
    }
    let symbolic = match (whole, explicit) {
        (Some(m), _) => m,
        (None, Some(sizes)) => {
            let NodeMeta::Tensor(t) = &at_hint else {
                return Err(InferError::Unsupported);
            };
            let all: Vec<&NodeMeta> = std::iter::once(&at_hint).chain(&others).collect();
            let mut stride_cands = candidates.strides.clone();
            if family == "index" {
                // A slice with a step strides its dimension by step times the input's.
                stride_cands.extend(cx.stepped_strides(args));
            }
            if family == "view" {
                // A view that splits a strided dimension strides its parts by the input's
                // stride times the sizes after them: `[2, 2, s]` of strides `[4*s, 2*s, 1]`
                // viewed as `[4, s]` and back.
                stride_cands.extend(cx.split_strides(args, &sizes));
            }
            let strides = fit_strides(&sizes, &all, &[], &used, &stride_cands, &candidates.orders)?;
            NodeMeta::Tensor(TensorMeta {
                sizes,
                strides,
                ..t.clone()
            })
        }
        (None, None) if fitted_family => {
            if family == "pointwise" {
                cx.broadcast_relations(args, kwargs, &mut rels);
            }
            if family == "matmul" {
                cx.matmul_relations(name, args, &mut rels);
            }
            fit(&at_hint, &others, &[], &used, &candidates)?
        }
        (None, None) => return Err(InferError::Unsupported),
    };
    // The answer must agree with the concrete rules at every point, the relations it relies on
    // included where they hold.
    for (p, concrete) in used.iter().zip(std::iter::once(&at_hint).chain(&others)) {
        let holds = rels
            .iter()
            .all(|r| r.eval(&|k| p[k as usize]) == Some(true));
        if holds && evaluate(&symbolic, p).as_ref() != Some(concrete) {
            return Err(InferError::Unsupported);
        }
    }
    rels.retain(|r| r.decided() != Some(true));
    if rels
        .iter()
        .any(|r| r.eval(&|k| hints[k as usize]) != Some(true))
    {
        return Err(InferError::Unsupported);
    }
    Ok((symbolic, rels))
}

/// The probe classes under an op's required relations ([`Sym::required`]): `same` (each
/// symbol's representative) with the symbols an equality `a == b` joins merged (equal hints
/// only: otherwise the op is invalid at the hints, and eager raises), and `pinned` with every
/// symbol an equality `a == c` fixes at its hint, and every symbol in a class with a pinned one.
fn required_classes(
    required: &[Relation],
    hints: &[i64],
    same: &[u32],
    pinned: &[u32],
) -> (Vec<u32>, Vec<u32>) {
    let mut reps: Vec<u32> = (0..hints.len() as u32)
        .map(|k| same.get(k as usize).copied().unwrap_or(k))
        .collect();
    let root = |reps: &[u32], mut k: u32| {
        while reps[k as usize] != k {
            k = reps[k as usize];
        }
        k
    };
    let mut pinned = pinned.to_vec();
    let hint = |k: u32| hints.get(k as usize).copied();
    for r in required.iter().filter(|r| r.op == RelOp::Eq) {
        match (r.lhs.as_symbol(), r.rhs.as_symbol()) {
            (Some(a), Some(b)) if hint(a).is_some() && hint(a) == hint(b) => {
                let (ra, rb) = (root(&reps, a), root(&reps, b));
                reps[ra.max(rb) as usize] = ra.min(rb);
            }
            (Some(k), None) | (None, Some(k)) => {
                let c = r.lhs.as_const().or(r.rhs.as_const());
                if c.is_some() && hint(k) == c {
                    pinned.push(k);
                }
            }
            _ => {}
        }
    }
    let reps: Vec<u32> = (0..reps.len() as u32).map(|k| root(&reps, k)).collect();
    let pinned_reps: Vec<u32> = pinned
        .iter()
        .filter_map(|&k| reps.get(k as usize).copied())
        .collect();
    let pinned = (0..reps.len() as u32)
        .filter(|&k| pinned.contains(&k) || pinned_reps.contains(&reps[k as usize]))
        .collect();
    (reps, pinned)
}

/// The symbols a node's metadata reads.
pub fn meta_symbols(meta: &NodeMeta) -> Vec<u32> {
    let mut out = Vec::new();
    match meta {
        NodeMeta::Tensor(t) => {
            for d in t.sizes.iter().chain(&t.strides) {
                if let Dim::Sym(e) = d {
                    out.extend(e.symbols());
                }
            }
        }
        NodeMeta::Tuple(items) => items.iter().for_each(|m| out.extend(meta_symbols(m))),
        NodeMeta::SymInt(e) => out.extend(e.symbols()),
        _ => {}
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// `meta` with each symbol `k` replaced by `f(k)` where it gives an expression (the shape
/// environment's replacements: a symbol guarded equal to another is written as that one).
pub fn substitute_meta(meta: &NodeMeta, f: &dyn Fn(u32) -> Option<SymExpr>) -> NodeMeta {
    let dim = |d: &Dim| -> Dim {
        match d {
            Dim::Known(v) => Dim::Known(*v),
            Dim::Sym(e) => {
                let e = e.substitute(f);
                match e.as_const() {
                    Some(c) => Dim::Known(c),
                    None => Dim::Sym(e),
                }
            }
        }
    };
    match meta {
        NodeMeta::Tensor(t) => NodeMeta::Tensor(TensorMeta {
            sizes: t.sizes.iter().map(dim).collect(),
            strides: t.strides.iter().map(dim).collect(),
            ..t.clone()
        }),
        NodeMeta::Tuple(items) => {
            NodeMeta::Tuple(items.iter().map(|m| substitute_meta(m, f)).collect())
        }
        NodeMeta::SymInt(e) => match e.substitute(f) {
            e if e.is_const() => NodeMeta::Int(e.as_const().unwrap_or_default()),
            e => NodeMeta::SymInt(e),
        },
        other => other.clone(),
    }
}

/// `meta` with every symbol replaced by `point`'s value.
pub fn evaluate(meta: &NodeMeta, point: &[i64]) -> Option<NodeMeta> {
    let dim = |d: &Dim| -> Option<Dim> {
        Some(Dim::Known(match d {
            Dim::Known(v) => *v,
            Dim::Sym(e) => e.eval(&|k| point[k as usize])?,
        }))
    };
    Some(match meta {
        NodeMeta::Tensor(t) => NodeMeta::Tensor(TensorMeta {
            sizes: t.sizes.iter().map(dim).collect::<Option<_>>()?,
            strides: t.strides.iter().map(dim).collect::<Option<_>>()?,
            ..t.clone()
        }),
        NodeMeta::Tuple(items) => NodeMeta::Tuple(
            items
                .iter()
                .map(|m| evaluate(m, point))
                .collect::<Option<_>>()?,
        ),
        NodeMeta::SymInt(e) => NodeMeta::Int(e.eval(&|k| point[k as usize])?),
        other => other.clone(),
    })
}

/// Symbolic expressions a result size or stride may be.
struct Candidates {
    sizes: Vec<SymExpr>,
    strides: Vec<SymExpr>,
    /// Each tensor input's dimensions from outermost to innermost (by stride at the hints):
    /// a result laid out densely in that order (a pointwise op on a transposed input) has
    /// strides that are products of the *result's* sizes in that order.
    orders: Vec<Vec<usize>>,
}

/// The value of one concrete size at each point.
fn values_at(all: &[&NodeMeta], path: &[usize], dim: usize, stride: bool) -> Option<Vec<i64>> {
    all.iter()
        .map(|m| {
            let mut m = *m;
            for &i in path {
                let NodeMeta::Tuple(items) = m else {
                    return None;
                };
                m = items.get(i)?;
            }
            let t = m.tensor()?;
            let d = if stride { &t.strides } else { &t.sizes }.get(dim)?;
            d.known()
        })
        .collect()
}

/// The first candidate whose value at every point is `values` (symbolic ones first), or the
/// constant when the values agree.
fn pick(values: &[i64], points: &[Vec<i64>], cands: &[SymExpr]) -> Option<Dim> {
    for c in cands {
        let ok = points
            .iter()
            .zip(values)
            .all(|(p, v)| c.eval(&|k| p[k as usize]) == Some(*v));
        if ok {
            return Some(Dim::from_expr(c.clone()));
        }
    }
    values
        .iter()
        .all(|v| *v == values[0])
        .then(|| Dim::Known(values[0]))
}

fn fit(
    at_hint: &NodeMeta,
    others: &[NodeMeta],
    path: &[usize],
    points: &[Vec<i64>],
    cands: &Candidates,
) -> Result<NodeMeta, InferError> {
    let mut all: Vec<&NodeMeta> = vec![at_hint];
    all.extend(others.iter());
    let mut node = at_hint;
    for &i in path {
        let NodeMeta::Tuple(items) = node else {
            return Err(InferError::Unsupported);
        };
        node = &items[i];
    }
    match node {
        NodeMeta::Tensor(t) => {
            let mut sizes = Vec::new();
            for d in 0..t.sizes.len() {
                let values = values_at(&all, path, d, false).ok_or(InferError::Unsupported)?;
                sizes.push(pick(&values, points, &cands.sizes).ok_or(InferError::Unsupported)?);
            }
            let strides = fit_strides(&sizes, &all, path, points, &cands.strides, &cands.orders)?;
            Ok(NodeMeta::Tensor(TensorMeta {
                sizes,
                strides,
                ..t.clone()
            }))
        }
        NodeMeta::Tuple(items) => {
            let mut out = Vec::new();
            for i in 0..items.len() {
                let mut p = path.to_vec();
                p.push(i);
                out.push(fit(at_hint, others, &p, points, cands)?);
            }
            Ok(NodeMeta::Tuple(out))
        }
        // A Python number computed from symbolic sizes would be a baked constant.
        NodeMeta::Int(_) | NodeMeta::Float(_) | NodeMeta::Bool(_) | NodeMeta::SymInt(_) => {
            Err(InferError::Unsupported)
        }
        NodeMeta::None => Ok(NodeMeta::None),
    }
}

/// Contiguous strides of symbolic sizes (a size of 1 or 0 counts as 1, as in
/// `layout::contiguous_strides`; symbols are never 0 or 1).
pub fn contiguous(sizes: &[Dim]) -> Vec<Dim> {
    let mut strides = vec![Dim::Known(0); sizes.len()];
    let mut acc = SymExpr::constant(1);
    for i in (0..sizes.len()).rev() {
        strides[i] = Dim::from_expr(acc.clone());
        acc = match &sizes[i] {
            Dim::Known(v) => acc.mul_const((*v).max(1)),
            Dim::Sym(e) => acc.mul(e),
        };
    }
    strides
}

/// Strides for `sizes`: the contiguous ones when they agree at every point, else each stride
/// fitted to the candidates (input strides and products of result sizes).
fn fit_strides(
    sizes: &[Dim],
    all: &[&NodeMeta],
    path: &[usize],
    points: &[Vec<i64>],
    input_strides: &[SymExpr],
    orders: &[Vec<usize>],
) -> Result<Vec<Dim>, InferError> {
    let contig = contiguous(sizes);
    let mut cands: Vec<SymExpr> = contig.iter().map(Dim::expr).collect();
    cands.extend(input_strides.iter().cloned());
    for order in orders.iter().filter(|o| o.len() == sizes.len()) {
        cands.extend(dense_in_order(sizes, order));
    }
    let mut out = Vec::new();
    for d in 0..sizes.len() {
        let values = values_at(all, path, d, true).ok_or(InferError::Unsupported)?;
        let first = std::slice::from_ref(&cands[d]);
        let s = pick(&values, points, first)
            .or_else(|| pick(&values, points, &cands))
            .ok_or(InferError::Unsupported)?;
        out.push(s);
    }
    Ok(out)
}

/// The strides of a dense tensor of `sizes` whose dimensions go from outermost to innermost
/// in `order` (torch lays out a pointwise result so, following its input's strides).
fn dense_in_order(sizes: &[Dim], order: &[usize]) -> Vec<SymExpr> {
    let mut out = vec![SymExpr::constant(0); sizes.len()];
    let mut acc = SymExpr::constant(1);
    for &d in order.iter().rev() {
        out[d] = acc.clone();
        acc = match &sizes[d] {
            Dim::Known(v) => acc.mul_const((*v).max(1)),
            Dim::Sym(e) => acc.mul(e),
        };
    }
    out
}

/// Reading symbolic arguments.
struct Sym<'a> {
    graph: &'a Graph,
    hints: &'a [i64],
    /// Symbols the caller guards equal to their hints (constant at every probe point).
    pinned: &'a [u32],
}

impl Sym<'_> {
    fn tensor(&self, a: &Arg) -> Option<&TensorMeta> {
        match a {
            Arg::Node(n) => self.graph.node(*n).meta.tensor(),
            _ => None,
        }
    }

    /// An int argument as an expression: a constant or a symbolic int node.
    fn int(&self, a: &Arg) -> Option<SymExpr> {
        match a {
            Arg::Int(v) => Some(SymExpr::constant(*v)),
            Arg::Node(n) => match &self.graph.node(*n).meta {
                NodeMeta::SymInt(e) => Some(e.clone()),
                NodeMeta::Int(v) => Some(SymExpr::constant(*v)),
                _ => None,
            },
            _ => None,
        }
    }

    fn hint(&self, e: &SymExpr) -> Option<i64> {
        e.eval(&|k| self.hints[k as usize])
    }

    fn candidates(&self, args: &[Arg], kwargs: &[(String, Arg)]) -> Candidates {
        let mut c = Candidates {
            sizes: Vec::new(),
            strides: Vec::new(),
            orders: Vec::new(),
        };
        fn walk(cx: &Sym<'_>, a: &Arg, c: &mut Candidates) {
            match a {
                Arg::Node(n) => match &cx.graph.node(*n).meta {
                    NodeMeta::Tensor(t) => {
                        c.sizes.extend(t.sizes.iter().map(Dim::expr));
                        c.strides.extend(t.strides.iter().map(Dim::expr));
                        let at_hints: Option<Vec<i64>> = t
                            .strides
                            .iter()
                            .map(|d| d.expr().eval(&|k| cx.hints[k as usize]))
                            .collect();
                        if let Some(st) = at_hints {
                            let mut order: Vec<usize> = (0..st.len()).collect();
                            order.sort_by_key(|&d| std::cmp::Reverse(st[d]));
                            if !c.orders.contains(&order) {
                                c.orders.push(order);
                            }
                        }
                    }
                    NodeMeta::SymInt(e) => c.sizes.push(e.clone()),
                    _ => {}
                },
                Arg::Tuple(items) | Arg::List(items) => {
                    items.iter().for_each(|i| walk(cx, i, c));
                }
                _ => {}
            }
        }
        args.iter()
            .chain(kwargs.iter().map(|(_, a)| a))
            .for_each(|a| walk(self, a, &mut c));
        // Symbolic candidates first, so a size equal to a constant at every point is still
        // read as the symbol it came from only when it is one.
        c.sizes.sort_by_key(|e| e.is_const());
        c
    }

    /// Each dimension's size times its stride, of the first argument (a tensor).
    fn size_stride_products(&self, args: &[Arg]) -> Vec<SymExpr> {
        let Some(t) = args.first().and_then(|a| self.tensor(a)) else {
            return Vec::new();
        };
        t.sizes
            .iter()
            .zip(&t.strides)
            .map(|(s, st)| s.expr().mul(&st.expr()))
            .collect()
    }

    /// The relations an op of `family` requires of its input sizes, known before its sizes
    /// are probed: broadcasting's (pointwise ops) and a matrix product's.
    fn required(
        &self,
        family: &str,
        name: &str,
        args: &[Arg],
        kwargs: &[(String, Arg)],
    ) -> Vec<Relation> {
        let mut rels = Vec::new();
        match family {
            "pointwise" => self.broadcast_relations(args, kwargs, &mut rels),
            "matmul" => self.matmul_relations(name, args, &mut rels),
            _ => {}
        }
        rels
    }

    /// Broadcasting requires aligned sizes other than 1 to be equal.
    fn broadcast_relations(
        &self,
        args: &[Arg],
        kwargs: &[(String, Arg)],
        rels: &mut Vec<Relation>,
    ) {
        let tensors: Vec<&TensorMeta> = args
            .iter()
            .chain(kwargs.iter().map(|(_, a)| a))
            .filter_map(|a| self.tensor(a))
            .collect();
        let rank = tensors.iter().map(|t| t.ndim()).max().unwrap_or(0);
        // A binary op (two tensors, or a tensor and a number) asks of each size whether it is
        // 1 (torch's `infer_size`, on the hint, guarded): a size that is an expression the
        // symbols' lower bounds do not keep from 1 (`s0 - 6`, a `chunk` piece `(s0 + 1) // 2`)
        // is guarded `!= 1`, or `== 1` (a replacement by a constant) when it is 1 at the
        // hints. So `x[:, 6:] + 1` and `x.split(3, 1)[-1] + 1` recompile when the piece
        // reaches 1, as torch.compile.
        let operand = |a: &Arg| {
            self.tensor(a).is_some()
                || matches!(a, Arg::Int(_) | Arg::Float(_) | Arg::Bool(_))
                || matches!(a, Arg::Node(n) if matches!(self.graph.node(*n).meta, NodeMeta::SymInt(_) | NodeMeta::Int(_) | NodeMeta::Float(_)))
        };
        if args.len() >= 2 && args[..2].iter().all(operand) {
            let one = SymExpr::constant(1);
            for t in &tensors {
                for d in &t.sizes {
                    let e = d.expr();
                    let ne = Relation::new(e.clone(), RelOp::Ne, one.clone());
                    if e.is_const() || ne.implied(&|_| 2) {
                        continue;
                    }
                    match self.hint(&e) {
                        Some(1) => rels.push(Relation::new(e, RelOp::Eq, one.clone())),
                        Some(_) => rels.push(ne),
                        None => {}
                    }
                }
            }
        }
        for i in 0..rank {
            let dims: Vec<SymExpr> = tensors
                .iter()
                .filter_map(|t| t.ndim().checked_sub(rank - i).map(|j| t.sizes[j].expr()))
                .filter(|e| e.as_const() != Some(1))
                .collect();
            for d in dims.iter().skip(1) {
                rels.push(Relation::new(dims[0].clone(), RelOp::Eq, d.clone()));
            }
        }
    }

    /// A matrix product requires the contracted sizes to be equal: the last of the first
    /// operand and the second-to-last of the second (`linear`: the weight's last).
    fn matmul_relations(&self, name: &str, args: &[Arg], rels: &mut Vec<Relation>) {
        let (Some(a), Some(b)) = (
            args.first().and_then(|a| self.tensor(a)),
            args.get(1).and_then(|a| self.tensor(a)),
        ) else {
            return;
        };
        let k2 = match name {
            "linear" => b.sizes.last(),
            "matmul" | "mm" | "bmm" | "__matmul__" if b.ndim() >= 2 => b.sizes.get(b.ndim() - 2),
            _ => None,
        };
        if let (Some(k), Some(k2)) = (a.sizes.last(), k2) {
            rels.push(Relation::new(k.expr(), RelOp::Eq, k2.expr()));
        }
    }

    /// Whether the dimension `split`/`chunk`/`narrow`/`unbind` cuts has a static size (known,
    /// or every symbol of it pinned).
    fn cuts_static_dim(&self, name: &str, args: &[Arg], kwargs: &[(String, Arg)]) -> Option<bool> {
        let pos = match name {
            "split" | "split_with_sizes" | "chunk" | "tensor_split" => 2,
            "narrow" | "unbind" => 1,
            _ => return Some(false),
        };
        let x = self.tensor(args.first()?)?;
        let dim = self.dim_arg(args, kwargs, pos, &["dim"])?;
        let dim = super::wrap_dim(dim, x.ndim()).ok()?;
        let d = &x.sizes[dim];
        Some(d.known().is_some() || d.expr().symbols().iter().all(|k| self.pinned.contains(k)))
    }

    fn dim_arg(
        &self,
        args: &[Arg],
        kwargs: &[(String, Arg)],
        pos: usize,
        names: &[&str],
    ) -> Option<i64> {
        kwargs
            .iter()
            .find(|(k, _)| names.contains(&k.as_str()))
            .map(|(_, a)| a)
            .or(args.get(pos))
            .map(|a| match a {
                Arg::Int(v) => Some(*v),
                _ => None,
            })
            .unwrap_or(Some(0))
    }

    fn tensor_list(&self, args: &[Arg], kwargs: &[(String, Arg)]) -> Option<Vec<&TensorMeta>> {
        let list = kwargs
            .iter()
            .find(|(k, _)| k == "tensors")
            .map(|(_, a)| a)
            .or(args.first())?;
        match list {
            Arg::Tuple(items) | Arg::List(items) => items.iter().map(|a| self.tensor(a)).collect(),
            _ => None,
        }
    }

    fn cat(
        &self,
        args: &[Arg],
        kwargs: &[(String, Arg)],
        rels: &mut Vec<Relation>,
    ) -> Result<Vec<Dim>, InferError> {
        let ts = self
            .tensor_list(args, kwargs)
            .ok_or(InferError::Unsupported)?;
        // Legacy empty 1-d tensors take no part.
        let ts: Vec<&TensorMeta> = ts
            .into_iter()
            .filter(|t| !(t.ndim() == 1 && t.sizes[0] == Dim::Known(0)))
            .collect();
        let first = ts.first().ok_or(InferError::Unsupported)?;
        let dim = self
            .dim_arg(args, kwargs, 1, &["dim", "axis"])
            .ok_or(InferError::Unsupported)?;
        let dim = super::wrap_dim(dim, first.ndim())?;
        let mut sizes = Vec::new();
        for d in 0..first.ndim() {
            if d == dim {
                let total = ts
                    .iter()
                    .fold(SymExpr::constant(0), |acc, t| acc.add(&t.sizes[d].expr()));
                sizes.push(Dim::from_expr(total));
            } else {
                for t in &ts[1..] {
                    rels.push(Relation::new(
                        first.sizes[d].expr(),
                        RelOp::Eq,
                        t.sizes[d].expr(),
                    ));
                }
                sizes.push(first.sizes[d].clone());
            }
        }
        Ok(sizes)
    }

    fn stack(&self, args: &[Arg], kwargs: &[(String, Arg)]) -> Result<Vec<Dim>, InferError> {
        let ts = self
            .tensor_list(args, kwargs)
            .ok_or(InferError::Unsupported)?;
        let first = ts.first().ok_or(InferError::Unsupported)?;
        let dim = self
            .dim_arg(args, kwargs, 1, &["dim", "axis"])
            .ok_or(InferError::Unsupported)?;
        let dim = super::wrap_dim(dim, first.ndim() + 1)?;
        if ts.iter().any(|t| t.sizes != first.sizes) {
            return Err(InferError::Unsupported);
        }
        let mut sizes = first.sizes.clone();
        sizes.insert(dim, Dim::Known(ts.len() as i64));
        Ok(sizes)
    }

    /// `view`/`reshape`: the sizes are the arguments, a `-1` the element count over the others.
    fn reshape(
        &self,
        args: &[Arg],
        rels: &mut Vec<Relation>,
    ) -> Result<Option<Vec<Dim>>, InferError> {
        let x = args
            .first()
            .and_then(|a| self.tensor(a))
            .ok_or(InferError::Unsupported)?;
        let shape: Vec<&Arg> = match &args[1..] {
            [Arg::Tuple(items) | Arg::List(items)] => items.iter().collect(),
            rest => rest.iter().collect(),
        };
        let exprs: Vec<SymExpr> = shape
            .iter()
            .map(|a| self.int(a))
            .collect::<Option<_>>()
            .ok_or(InferError::Unsupported)?;
        let numel = x
            .sizes
            .iter()
            .fold(SymExpr::constant(1), |acc, d| acc.mul(&d.expr()));
        let Some(infer_at) = exprs.iter().position(|e| e.as_const() == Some(-1)) else {
            // The sizes are the arguments; their product must be the element count.
            let total = exprs.iter().fold(SymExpr::constant(1), |acc, e| acc.mul(e));
            rels.push(Relation::new(total, RelOp::Eq, numel));
            return Ok(Some(exprs.into_iter().map(Dim::from_expr).collect()));
        };
        let known = exprs
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != infer_at)
            .fold(SymExpr::constant(1), |acc, (_, e)| acc.mul(e));
        if self.hint(&known) == Some(0) {
            return Err(InferError::Unsupported);
        }
        let rem = numel.modulo(&known);
        if rem.as_const() != Some(0) {
            rels.push(Relation::new(rem, RelOp::Eq, SymExpr::constant(0)));
        }
        let mut sizes: Vec<Dim> = exprs.into_iter().map(Dim::from_expr).collect();
        sizes[infer_at] = Dim::from_expr(numel.floordiv(&known));
        Ok(Some(sizes))
    }

    fn flatten(&self, args: &[Arg], kwargs: &[(String, Arg)]) -> Result<Vec<Dim>, InferError> {
        let x = args
            .first()
            .and_then(|a| self.tensor(a))
            .ok_or(InferError::Unsupported)?;
        if x.ndim() == 0 {
            return Ok(vec![Dim::Known(1)]);
        }
        let start = self
            .dim_arg(args, kwargs, 1, &["start_dim"])
            .ok_or(InferError::Unsupported)?;
        let end = kwargs
            .iter()
            .find(|(k, _)| k == "end_dim")
            .map(|(_, a)| a)
            .or(args.get(2))
            .map(|a| match a {
                Arg::Int(v) => Ok(*v),
                _ => Err(InferError::Unsupported),
            })
            .unwrap_or(Ok(-1))?;
        let start = super::wrap_dim(start, x.ndim())?;
        let end = super::wrap_dim(end, x.ndim())?;
        let mut sizes: Vec<Dim> = x.sizes[..start].to_vec();
        let prod = x.sizes[start..=end]
            .iter()
            .fold(SymExpr::constant(1), |acc, d| acc.mul(&d.expr()));
        sizes.push(Dim::from_expr(prod));
        sizes.extend(x.sizes[end + 1..].iter().cloned());
        Ok(sizes)
    }

    /// Whether the index of `x[index]` holds a tensor (advanced indexing).
    fn has_tensor_index(&self, args: &[Arg]) -> bool {
        let is_tensor = |a: &Arg| self.tensor(a).is_some();
        match args.get(1) {
            Some(Arg::Tuple(items) | Arg::List(items)) => items.iter().any(is_tensor),
            Some(a) => is_tensor(a),
            None => false,
        }
    }

    /// `x[...]` with ints, slices, `None`, `...` and integer tensors. Slice bounds are clamped
    /// to the size as Python does; which way each clamp went at the hints becomes a relation.
    /// Integer tensor indices (advanced indexing, e.g. transformers' `position_ids[b, q]` in
    /// its mask functions) each consume one dimension; their broadcast shape (equal sizes
    /// other than 1 are relations) replaces the first of them when they are adjacent after
    /// the ints are applied (torch selects ints first), and goes in front otherwise. Bool
    /// masks give a data-dependent size: `Unsupported`. The native rule leaves advanced
    /// indexing to torch, whose values at each point check this answer.
    fn getitem(&self, args: &[Arg], rels: &mut Vec<Relation>) -> Result<Vec<Dim>, InferError> {
        let x = args
            .first()
            .and_then(|a| self.tensor(a))
            .ok_or(InferError::Unsupported)?;
        let index: Vec<&Arg> = match args.get(1) {
            Some(Arg::Tuple(items)) => items.iter().collect(),
            Some(a) => vec![a],
            None => return Err(InferError::Unsupported),
        };
        let consumed = index
            .iter()
            .filter(|a| !matches!(a, Arg::None | Arg::Ellipsis))
            .count();
        if consumed > x.ndim() || index.iter().filter(|a| matches!(a, Arg::Ellipsis)).count() > 1 {
            return Err(InferError::Unsupported);
        }
        let mut sizes = Vec::new();
        let mut d = 0usize;
        // The integer tensor indices, where the first one's result dimensions go, and whether
        // they are adjacent in the result (nothing pushed between two of them).
        let mut advanced: Vec<&TensorMeta> = Vec::new();
        let mut first_at: Option<usize> = None;
        let mut last_at: Option<usize> = None;
        let mut adjacent = true;
        for a in &index {
            match a {
                Arg::None => sizes.push(Dim::Known(1)),
                a if self.tensor(a).is_some() => {
                    let t = self.tensor(a).ok_or(InferError::Unsupported)?;
                    // uint8 and bool tensors are masks.
                    if !matches!(
                        t.dtype,
                        DType::Int8 | DType::Int16 | DType::Int32 | DType::Int64
                    ) {
                        return Err(InferError::Unsupported);
                    }
                    match last_at {
                        None => first_at = Some(sizes.len()),
                        Some(l) if l != sizes.len() => adjacent = false,
                        Some(_) => {}
                    }
                    last_at = Some(sizes.len());
                    advanced.push(t);
                    d += 1;
                }
                Arg::Ellipsis => {
                    let skip = x.ndim() - consumed;
                    sizes.extend(x.sizes[d..d + skip].iter().cloned());
                    d += skip;
                }
                Arg::Slice(start, stop, step) => {
                    let n = x.sizes[d].expr();
                    let step = match &**step {
                        Arg::None => 1,
                        Arg::Int(s) if *s > 0 => *s,
                        _ => return Err(InferError::Unsupported),
                    };
                    let start = self.bound(start, &n, SymExpr::constant(0), rels)?;
                    let stop = self.bound(stop, &n, n.clone(), rels)?;
                    let (sh, eh) = (
                        self.hint(&start).ok_or(InferError::Unsupported)?,
                        self.hint(&stop).ok_or(InferError::Unsupported)?,
                    );
                    let len = if eh > sh {
                        rels.push(Relation::new(stop.clone(), RelOp::Gt, start.clone()));
                        stop.sub(&start).add_const(step - 1).floordiv(&step.into())
                    } else {
                        rels.push(Relation::new(stop.clone(), RelOp::Le, start.clone()));
                        SymExpr::constant(0)
                    };
                    sizes.push(Dim::from_expr(len));
                    d += 1;
                }
                // An integer index drops the dimension (out of range raises at run time).
                a if self.int(a).is_some() => d += 1,
                _ => return Err(InferError::Unsupported),
            }
        }
        sizes.extend(x.sizes[d..].iter().cloned());
        if let Some(f) = first_at {
            let rank = advanced.iter().map(|t| t.ndim()).max().unwrap_or(0);
            let mut shape = Vec::with_capacity(rank);
            for i in 0..rank {
                let dims: Vec<SymExpr> = advanced
                    .iter()
                    .filter_map(|t| t.ndim().checked_sub(rank - i).map(|j| t.sizes[j].expr()))
                    .filter(|e| e.as_const() != Some(1))
                    .collect();
                match dims.first() {
                    None => shape.push(Dim::Known(1)),
                    Some(first) => {
                        for other in &dims[1..] {
                            rels.push(Relation::new(first.clone(), RelOp::Eq, other.clone()));
                        }
                        shape.push(Dim::from_expr(first.clone()));
                    }
                }
            }
            let at = if adjacent { f } else { 0 };
            sizes.splice(at..at, shape);
        }
        Ok(sizes)
    }

    /// A slice bound as Python resolves it against size `n`: negative counts from the end,
    /// then clamped to `[0, n]`.
    fn bound(
        &self,
        a: &Arg,
        n: &SymExpr,
        default: SymExpr,
        rels: &mut Vec<Relation>,
    ) -> Result<SymExpr, InferError> {
        if matches!(a, Arg::None) {
            return Ok(default);
        }
        let b = self.int(a).ok_or(InferError::Unsupported)?;
        let bh = self.hint(&b).ok_or(InferError::Unsupported)?;
        let nh = self.hint(n).ok_or(InferError::Unsupported)?;
        let zero = SymExpr::constant(0);
        // From the end: b + n, clamped at 0.
        let b = if bh < 0 {
            rels.push(Relation::new(b.clone(), RelOp::Lt, zero.clone()));
            let from_end = b.add(n);
            if bh + nh < 0 {
                rels.push(Relation::new(from_end, RelOp::Lt, zero.clone()));
                return Ok(zero);
            }
            rels.push(Relation::new(from_end.clone(), RelOp::Ge, zero));
            return Ok(from_end);
        } else {
            rels.push(Relation::new(b.clone(), RelOp::Ge, zero));
            b
        };
        if bh <= nh {
            rels.push(Relation::new(b.clone(), RelOp::Le, n.clone()));
            Ok(b)
        } else {
            rels.push(Relation::new(b, RelOp::Gt, n.clone()));
            Ok(n.clone())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::meta::{DType, Device};

    /// A float32 CPU placeholder of `sizes` (symbolic or known), contiguous unless `strides`
    /// says otherwise; shared with `computed`'s tests.
    pub(super) fn strided_input(
        g: &mut Graph,
        sizes: Vec<Dim>,
        strides: Option<Vec<Dim>>,
    ) -> crate::graph::NodeId {
        let strides = strides.unwrap_or_else(|| contiguous(&sizes));
        g.placeholder(
            "x",
            NodeMeta::Tensor(TensorMeta {
                dtype: DType::Float32,
                device: Device::cpu(),
                sizes,
                strides,
                requires_grad: false,
            }),
        )
    }

    fn sym_input(g: &mut Graph, sizes: Vec<Dim>) -> crate::graph::NodeId {
        strided_input(g, sizes, None)
    }

    /// The size symbol `s{k}` as a dimension.
    pub(super) fn s(k: u32) -> Dim {
        Dim::Sym(SymExpr::symbol(k))
    }

    fn sizes(m: &NodeMeta) -> Vec<String> {
        m.tensor()
            .unwrap()
            .sizes
            .iter()
            .map(|d| d.to_string())
            .collect()
    }

    fn run(g: &Graph, t: &str, args: Vec<Arg>, hints: &[i64]) -> (NodeMeta, Vec<Relation>) {
        let target = if let Some(m) = t.strip_prefix('.') {
            Target::Method(m.into())
        } else {
            Target::Function(t.into())
        };
        infer_symbolic(
            &InferCtx::default(),
            g,
            &target,
            &args,
            &[],
            Symbols::hints(hints),
        )
        .unwrap()
    }

    #[test]
    fn pointwise_reduction_and_views_keep_symbols() {
        let mut g = Graph::new();
        let x = sym_input(&mut g, vec![s(0), s(1), Dim::Known(64)]);
        let (m, _) = run(&g, "torch.relu", vec![Arg::Node(x)], &[4, 8]);
        assert_eq!(sizes(&m), ["s0", "s1", "64"]);
        assert_eq!(m.tensor().unwrap().strides[0].to_string(), "s1*64");
        let (m, _) = run(&g, ".sum", vec![Arg::Node(x), Arg::Int(1)], &[4, 8]);
        assert_eq!(sizes(&m), ["s0", "64"]);
        let (m, _) = run(
            &g,
            ".transpose",
            vec![Arg::Node(x), Arg::Int(0), Arg::Int(1)],
            &[4, 8],
        );
        assert_eq!(sizes(&m), ["s1", "s0", "64"]);
        assert_eq!(m.tensor().unwrap().strides[0].to_string(), "64");
        let (m, _) = run(
            &g,
            ".view",
            vec![Arg::Node(x), Arg::Int(-1), Arg::Int(16)],
            &[4, 8],
        );
        assert_eq!(sizes(&m), ["s0*s1*4", "16"]);
        let (m, _) = run(&g, ".flatten", vec![Arg::Node(x), Arg::Int(1)], &[4, 8]);
        assert_eq!(sizes(&m), ["s0", "s1*64"]);
        let (m, _) = run(
            &g,
            "torch.cat",
            vec![Arg::List(vec![Arg::Node(x), Arg::Node(x)]), Arg::Int(1)],
            &[4, 8],
        );
        assert_eq!(sizes(&m), ["s0", "s1*2", "64"]);
    }

    #[test]
    fn slices_clamp_with_relations() {
        let mut g = Graph::new();
        let x = sym_input(&mut g, vec![s(0), s(1)]);
        let idx = Arg::Tuple(vec![
            Arg::Slice(
                Box::new(Arg::None),
                Box::new(Arg::None),
                Box::new(Arg::None),
            ),
            Arg::Slice(
                Box::new(Arg::Int(1)),
                Box::new(Arg::None),
                Box::new(Arg::None),
            ),
        ]);
        let (m, rels) = run(&g, "operator.getitem", vec![Arg::Node(x), idx], &[4, 8]);
        assert_eq!(sizes(&m), ["s0", "s1 - 1"]);
        assert!(rels.iter().any(|r| r.to_string() == "1 <= s1"), "{rels:?}");
        let idx = Arg::Slice(
            Box::new(Arg::None),
            Box::new(Arg::Int(3)),
            Box::new(Arg::None),
        );
        let (m, rels) = run(&g, "operator.getitem", vec![Arg::Node(x), idx], &[4, 8]);
        assert_eq!(sizes(&m), ["3", "s1"]);
        assert!(rels.iter().any(|r| r.to_string() == "3 <= s0"), "{rels:?}");
    }

    /// Two symbols meeting in a broadcast (torch's `_broadcast_shapes`): equal at the hints,
    /// the op requires them equal, so the answer relies on `s0 == s1` (a guard, and one symbol
    /// from then on in the tracer's shape environment); one that must equal a constant is
    /// required equal to it (the tracer replaces it by the constant). Unequal at the hints,
    /// the op is invalid, as in eager.
    #[test]
    fn broadcast_of_two_symbols_requires_them_equal() {
        let mut g = Graph::new();
        let x = sym_input(&mut g, vec![s(0)]);
        let y = sym_input(&mut g, vec![s(1)]);
        let (m, rels) = run(&g, "torch.add", vec![Arg::Node(x), Arg::Node(y)], &[4, 4]);
        assert_eq!(sizes(&m), ["s0"]);
        let rels: Vec<String> = rels.iter().map(|r| r.to_string()).collect();
        assert_eq!(rels, ["s0 == s1"]);
        let target = Target::Function("torch.add".into());
        let r = infer_symbolic(
            &InferCtx::default(),
            &g,
            &target,
            &[Arg::Node(x), Arg::Node(y)],
            &[],
            Symbols::hints(&[4, 5]),
        );
        assert!(matches!(r, Err(InferError::Invalid(_))), "{r:?}");
        // One symbol twice: nothing to require.
        let (m, rels) = run(&g, "torch.add", vec![Arg::Node(x), Arg::Node(x)], &[4, 5]);
        assert_eq!(sizes(&m), ["s0"]);
        assert!(rels.is_empty());
        // `[s0, 3] - [s1, s2]` (an MLP's output less its target): `s0 == s1`, `s2 == 3`.
        let mut g = Graph::new();
        let y = sym_input(&mut g, vec![s(0), Dim::Known(3)]);
        let t = sym_input(&mut g, vec![s(1), s(2)]);
        let (m, rels) = run(
            &g,
            "torch.sub",
            vec![Arg::Node(y), Arg::Node(t)],
            &[5, 5, 3],
        );
        // (`s2` stands for 3 under the relations: the tracer's replacement writes it so.)
        assert_eq!(sizes(&m), ["s0", "s2"]);
        let mut rels: Vec<String> = rels.iter().map(|r| r.to_string()).collect();
        rels.sort();
        assert_eq!(rels, ["3 == s2", "s0 == s1"]);
    }
}

#[cfg(test)]
mod more_tests {
    use super::*;
    use crate::meta::{DType, Device};

    #[test]
    fn linear_over_a_symbolic_sequence() {
        let mut g = Graph::new();
        let sizes = vec![Dim::Known(1), Dim::Sym(SymExpr::symbol(0)), Dim::Known(32)];
        let strides = contiguous(&sizes);
        let x = g.placeholder(
            "x",
            NodeMeta::Tensor(TensorMeta {
                dtype: DType::Float32,
                device: Device::cpu(),
                sizes,
                strides,
                requires_grad: false,
            }),
        );
        let w = g.placeholder(
            "w",
            NodeMeta::Tensor(TensorMeta::contiguous(
                DType::Float32,
                Device::cpu(),
                &[96, 32],
            )),
        );
        let target = Target::Function("torch._C._nn.linear".into());
        let concrete = with_assignment(&[9], || {
            run_handlers(
                &InferCtx::default(),
                &g,
                &target,
                &[Arg::Node(x), Arg::Node(w)],
                &[],
            )
        });
        eprintln!("{concrete:?}");
        let r = infer_symbolic(
            &InferCtx::default(),
            &g,
            &target,
            &[Arg::Node(x), Arg::Node(w)],
            &[],
            Symbols::hints(&[9]),
        );
        assert!(r.is_ok(), "{r:?}");
    }
}
