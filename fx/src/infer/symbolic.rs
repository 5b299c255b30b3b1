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
mod fitted;
mod relations;
mod rules;
mod shaped;
#[cfg(test)]
mod tests;
mod windows;

use super::{run_handlers, InferCtx, InferError};
use crate::graph::{Arg, Graph, Target};
use crate::meta::{DType, Dim, NodeMeta, TensorMeta};
use crate::sym::{RelOp, Relation, SymExpr};
use fitted::EXTERNAL_FITTED;

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

/// A symbolic float's value at the assignment under way, as [`concrete`].
pub(crate) fn concrete_float(f: &crate::FloatExpr) -> Option<f64> {
    ASSIGNMENT.with(|a| {
        let a = a.borrow();
        let a = a.as_ref()?;
        f.eval(&|k| a.get(k as usize).copied().unwrap_or(i64::MIN))
    })
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
    /// `shift[k]`: symbol `k` is guarded equal to `same[k]` plus this constant (torch's
    /// replacement `s1 = s0 - 6`, from a slice broadcast against another input); every probe
    /// point gives `k` that value. Empty: no shifts.
    pub shift: &'a [i64],
    /// Whether a probe point is one the trace admits (the shape environment's relations so
    /// far: after `view(n, -1)` guarded `s0 % n == 0`, a point breaking it is no size the
    /// graph runs at, and an op's concrete rules there say nothing). `None`: every point.
    pub admits: Option<Admits<'a>>,
    /// The call runs under autocast: the native rules see the dtypes before autocast's casts
    /// (`addmm` of a bfloat16 activation and a float32 weight), so their dtype checks say
    /// nothing, and where they refuse, the external evaluator (run under the state) answers.
    pub autocast: bool,
    /// Size-oblivious symbols (automatic dynamic's, lower bound 1): they may be 1 at run time
    /// in the same graph, so the point below the hints gives them 1 and must verify the answer
    /// there (`squeeze`, or a broadcast of such a size against another, answers differently at
    /// 1: `Unsupported`, and the caller keeps the symbol at least 2 or pins it).
    pub oblivious: &'a [u32],
}

impl<'a> Symbols<'a> {
    pub fn hints(hints: &'a [i64]) -> Symbols<'a> {
        Symbols {
            hints,
            external: None,
            pinned: &[],
            same: &[],
            shift: &[],
            admits: None,
            autocast: false,
            oblivious: &[],
        }
    }
}

/// The bare name of a call's op, for the rules here ([`super::split_target`]'s: a call of
/// `torch.einsum` is recorded as `torch.functional.einsum`, which it maps to `einsum`); `""`
/// for any other path.
fn op_name(target: &Target) -> &str {
    super::split_target(target).map_or("", |(_, name)| name)
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
        shift,
        admits,
        autocast,
        oblivious,
    } = shapes;
    let name = op_name(target);
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
    let (same, shift, pinned) = required_classes(
        &cx.required(family, name, args, kwargs),
        hints,
        same,
        shift,
        pinned,
    );
    let (same, shift, pinned) = (&same[..], &shift[..], &pinned[..]);
    // The hints, two assignments above them (each symbol times its own prime, which keeps
    // divisibility by constants) and one below them (small distinct sizes: a result size that
    // depends on a threshold, such as a bound clamped to the size, shows there). A pinned
    // symbol (the caller guards it equal to its hint) keeps its hint everywhere.
    // Symbols guarded equal (`same`) take one value at every point, a shifted one that value
    // plus its shift (a representative is raised where a member would fall below 2).
    let at = |f: &dyn Fn(usize, i64) -> i64| -> Vec<i64> {
        let mut p: Vec<i64> = hints
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
        let shift_of = |k: usize| shift.get(k).copied().unwrap_or(0);
        // A size-oblivious member may be 1 (the representative is then 1 too, unshifted).
        let low = |k: usize| {
            if oblivious.contains(&(k as u32)) && shift_of(k) == 0 {
                1
            } else {
                2
            }
        };
        for (k, &r) in same.iter().enumerate() {
            let r = r as usize;
            if r < p.len() && p[r] + shift_of(k) < low(k) && !pinned.contains(&(r as u32)) {
                p[r] = 2 - shift_of(k);
            }
        }
        (0..p.len())
            .map(|k| same.get(k).map_or(p[k], |&r| p[r as usize] + shift_of(k)))
            .collect()
    };
    let points: Vec<Vec<i64>> = vec![
        hints.to_vec(),
        at(&|k, h| h * PRIMES[k % 5]),
        at(&|k, h| h * PRIMES[(k + 2) % 5]),
        at(&|k, _| {
            if oblivious.contains(&(k as u32)) {
                1
            } else {
                2 + k as i64
            }
        }),
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
    // Ops whose sizes are products, quotients or minima (`repeat`, `unfold`, `diagonal`, ...).
    let shaped = shaped::Shaped::of(target);
    let explicit_rule = advanced
        || shaped.is_some()
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
            || (family.is_empty()
                && (all_pinned
                    || EXTERNAL_FITTED.contains(&name)
                    || rules::BROADCASTING.contains(&name)))
            // An `nn` rule leaves some cases to torch (`layer_norm` of a bfloat16 input with
            // float32 parameters, as autocast runs it): fitted from torch's answers as well.
            || family == "nn"
            || autocast_retry);
    // (A shaped op's rule may decline a case: its result is then fitted, as before the rule.)
    if use_external && (!explicit_rule || shaped.is_some()) {
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
        // A case the rule does not model (a float bound, a scale factor that rounds) keeps
        // the answer fitting or pinning gave before the rule existed.
        _ => match shaped {
            Some(op) => {
                let mut own = Vec::new();
                match cx.shaped(op, args, kwargs, &mut own) {
                    Ok(sizes) => {
                        rels.extend(own);
                        Some(sizes)
                    }
                    Err(_) => None,
                }
            }
            None => None,
        },
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
    // The op reads a size-oblivious symbol: the point below must verify it at 1 (or, where
    // the relations so far exclude that point, the hints with those symbols at 1 must, unless
    // the relations exclude 1 there as well).
    let reads_oblivious = !oblivious.is_empty()
        && arg_nodes.iter().any(|&n| {
            meta_symbols(&graph.node(n).meta)
                .iter()
                .any(|k| oblivious.contains(k) && !pinned.contains(k))
        });
    let mut others: Vec<Option<NodeMeta>> = Vec::new();
    let mut probes: Vec<Vec<i64>> = Vec::new();
    for (i, p) in points[1..].iter().enumerate() {
        if i == 2 && reads_oblivious {
            let q = if admitted(p) {
                p.clone()
            } else {
                at(&|k, h| {
                    if oblivious.contains(&(k as u32)) {
                        1
                    } else {
                        h
                    }
                })
            };
            if !admitted(&q) {
                others.push(None);
                probes.push(q);
                continue;
            }
            others.push(Some(run(&q).map_err(|_| InferError::Unsupported)?));
            probes.push(q);
            continue;
        }
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
            if let Some(op) = shaped {
                stride_cands.extend(cx.shaped_strides(op, args, kwargs, &sizes));
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
            rels.extend(cx.required(family, name, args, kwargs));
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
/// symbol's representative) and `shift` (its offset from it) with the symbols an equality
/// `b == a + c` joins merged (hints that agree only: otherwise the op is invalid at the hints,
/// and eager raises), and `pinned` with every symbol an equality of it alone fixes at its
/// hint (`a == c`, `a - 1 == 1`), and every symbol in a class with a pinned one.
fn required_classes(
    required: &[Relation],
    hints: &[i64],
    same: &[u32],
    shift: &[i64],
    pinned: &[u32],
) -> (Vec<u32>, Vec<i64>, Vec<u32>) {
    // `up[k] = (parent, offset)`: `s_k == s_parent + offset`.
    let mut up: Vec<(u32, i64)> = (0..hints.len() as u32)
        .map(|k| {
            let r = same.get(k as usize).copied().unwrap_or(k);
            (r, shift.get(k as usize).copied().unwrap_or(0))
        })
        .collect();
    let root = |up: &[(u32, i64)], mut k: u32| {
        let mut off = 0;
        while up[k as usize].0 != k {
            off += up[k as usize].1;
            k = up[k as usize].0;
        }
        (k, off)
    };
    let mut pinned = pinned.to_vec();
    let hint = |k: u32| hints.get(k as usize).copied();
    for r in required.iter().filter(|r| r.op == RelOp::Eq) {
        if let Some((b, a, c)) = r.shifted_equality() {
            if hint(a).is_some() && hint(b) == hint(a).map(|h| h + c) {
                // s_b = s_a + c; s_a = ra + oa, s_b = rb + ob: rb = ra + oa + c - ob.
                let ((ra, oa), (rb, ob)) = (root(&up, a), root(&up, b));
                if ra != rb {
                    let d = oa + c - ob;
                    if ra < rb {
                        up[rb as usize] = (ra, d);
                    } else {
                        up[ra as usize] = (rb, -d);
                    }
                }
            }
            continue;
        }
        // An equality of one symbol that holds at the hints (`s0 == 3`, or `s0 - 1 == 1` for
        // a slice broadcast as a 1) holds there alone: the symbol keeps its hint.
        if let [k] = r.symbols()[..] {
            if r.decided().is_none() && r.eval(&|j| hint(j).unwrap_or(0)) == Some(true) {
                pinned.push(k);
            }
        }
    }
    let roots: Vec<(u32, i64)> = (0..up.len() as u32).map(|k| root(&up, k)).collect();
    let pinned_reps: Vec<u32> = pinned
        .iter()
        .filter_map(|&k| roots.get(k as usize).map(|r| r.0))
        .collect();
    let pinned = (0..roots.len() as u32)
        .filter(|&k| pinned.contains(&k) || pinned_reps.contains(&roots[k as usize].0))
        .collect();
    (
        roots.iter().map(|r| r.0).collect(),
        roots.iter().map(|r| r.1).collect(),
        pinned,
    )
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
        NodeMeta::SymFloat(f) => out.extend(f.symbols()),
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
        NodeMeta::SymFloat(e) => match e.substitute(f) {
            crate::FloatExpr::Const(c) => NodeMeta::Float(c),
            e => NodeMeta::SymFloat(e),
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
        NodeMeta::SymFloat(e) => NodeMeta::Float(e.eval(&|k| point[k as usize])?),
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
        NodeMeta::Int(_)
        | NodeMeta::Float(_)
        | NodeMeta::Bool(_)
        | NodeMeta::SymInt(_)
        | NodeMeta::SymFloat(_) => Err(InferError::Unsupported),
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

/// Dense strides of symbolic sizes laid out in `order`, outermost first (as
/// `layout::dense_strides`): a transposed or channels-last input's strides as products of its
/// size symbols.
pub fn dense(sizes: &[Dim], order: &[usize]) -> Vec<Dim> {
    let mut strides = vec![Dim::Known(0); sizes.len()];
    let mut acc = SymExpr::constant(1);
    for &i in order.iter().rev() {
        strides[i] = Dim::from_expr(acc.clone());
        acc = match &sizes[i] {
            Dim::Known(v) => acc.mul_const((*v).max(1)),
            Dim::Sym(e) => acc.mul(e),
        };
    }
    strides
}

/// Strides of symbolic `sizes` written by `rules` (`layout::stride_rules` of the call's tensor):
/// a constant, a product of an earlier-written dimension's size and stride, or `free(i)`, the
/// symbol of stride `i` itself (made by the caller, read per call).
pub fn ruled(
    sizes: &[Dim],
    rules: &[super::layout::StrideRule],
    free: &mut dyn FnMut(usize) -> SymExpr,
) -> Vec<Dim> {
    use super::layout::StrideRule;
    let mut strides: Vec<Option<SymExpr>> = vec![None; rules.len()];
    // `Times(j)` names a dimension written before it (a smaller stride): write in that order.
    let mut left: Vec<usize> = (0..rules.len()).collect();
    while !left.is_empty() {
        let before = left.len();
        left.retain(|&i| {
            let e = match rules[i] {
                StrideRule::Const(c) => SymExpr::constant(c),
                StrideRule::Free => free(i),
                StrideRule::Times(j) => match &strides[j] {
                    Some(s) => sizes[j].expr().mul(s),
                    None => return true,
                },
            };
            strides[i] = Some(e);
            false
        });
        if left.len() == before {
            // (A cycle of products: no tensor's rules make one.)
            left.iter().for_each(|&i| strides[i] = Some(free(i)));
            break;
        }
    }
    strides
        .into_iter()
        .map(|e| Dim::from_expr(e.unwrap_or_else(|| SymExpr::constant(0))))
        .collect()
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
    // The result's own order at the hints, which no input need have (`einsum("bij,bkj->kbi")`
    // permutes its product): dense in it, checked at every point as any candidate.
    let at_hint: Option<Vec<i64>> = (0..sizes.len())
        .map(|d| values_at(all, path, d, true).and_then(|v| v.first().copied()))
        .collect();
    if let Some(st) = at_hint {
        let mut order: Vec<usize> = (0..st.len()).collect();
        order.sort_by_key(|&d| std::cmp::Reverse(st[d]));
        cands.extend(dense_in_order(sizes, &order));
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
