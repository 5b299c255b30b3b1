//! Autocast regions of a training graph written out as explicit casts.
//!
//! The tracer keeps `with torch.autocast(...)` as two `set_autocast` nodes, and the metadata of
//! each op inside comes from a run under the same autocast state, so it holds the dtype eager
//! computes in (`linear` → bfloat16 on CPU). What autocast does to an op is a cast of its
//! floating-point tensor arguments: to the lower precision (matmuls, convolutions), to float32
//! (the ops it keeps in full precision), or to the widest of them (ops it promotes). In every
//! case the op's result then has the cast dtype. So an op whose autocast dtype differs from the
//! dtype it computes without autocast (`fx::infer`) gets its floating-point tensor arguments cast
//! to its result's dtype with `Tensor.to`, and the region's switches are taken out: the graph
//! means the same without autocast, and differentiating it gives eager's backward dtypes (the
//! backward of a bfloat16 matmul runs in bfloat16; the cast's gradient goes back to float32).
//!
//! Eager caches, within one region, the cast of a leaf that requires grad (a parameter used by
//! several ops is cast once, and its gradients are summed in the low precision before the cast
//! back); placeholders that require grad get one cast per region and dtype here too.
//!
//! A form the rewrite cannot prove refuses with a reason: an op whose arguments cast to its
//! result's dtype do not give that dtype (or whose metadata `fx::infer` does not know), a tuple
//! result whose dtypes autocast changed, a graph that starts or ends inside a region.

use std::collections::HashMap;

use crate::graph::{Arg, Graph, NodeId, NodeKind, Target};
use crate::infer::{infer_in, InferCtx};
use crate::meta::{DType, NodeMeta};

/// The target of the tracer's autocast switch (`torchferro._amp.set_autocast(device, enabled,
/// dtype)`).
pub const SET_AUTOCAST: &str = "torchferro._amp.set_autocast";

/// Whether `graph` has autocast switches.
pub fn has_autocast(graph: &Graph) -> bool {
    graph.nodes().any(
        |(_, n)| matches!(&n.kind, NodeKind::Call { target, .. } if target.name() == SET_AUTOCAST),
    )
}

/// Ops autocast runs in its lower-precision dtype on every device (torch's autocast lists:
/// convolutions and matrix products).
fn runs_in_lower_precision(target: &Target) -> bool {
    const OPS: &[&str] = &[
        "conv1d",
        "conv2d",
        "conv3d",
        "conv_transpose1d",
        "conv_transpose2d",
        "conv_transpose3d",
        "convolution",
        "linear",
        "matmul",
        "mm",
        "bmm",
        "addmm",
        "addbmm",
        "baddbmm",
    ];
    crate::infer::split_target(target).is_some_and(|(_, name)| OPS.contains(&name))
}

/// Losses autocast runs in float32 on every device (torch's float32 lists): every floating
/// argument is cast to float32 (a float64 one stays), and a loss computes in the dtype of its
/// arguments.
fn runs_in_float32(target: &Target) -> bool {
    const OPS: &[&str] = &[
        "mse_loss",
        "l1_loss",
        "smooth_l1_loss",
        "huber_loss",
        "nll_loss",
        "kl_div",
        "binary_cross_entropy_with_logits",
        "soft_margin_loss",
        "margin_ranking_loss",
        "hinge_embedding_loss",
        "poisson_nll_loss",
        "cosine_embedding_loss",
        "triplet_margin_loss",
        "multilabel_margin_loss",
        "multi_margin_loss",
    ];
    crate::infer::split_target(target).is_some_and(|(_, name)| OPS.contains(&name))
}

/// Ops in none of autocast's lists (torch's `autocast_mode.cpp`: lower precision, float32,
/// promote), so autocast runs them as they are on every device. Only ops whose native rules
/// may not answer on some device are named.
fn untouched_by_autocast(target: &Target) -> bool {
    const OPS: &[&str] = &[
        "batch_norm",
        "max_pool2d",
        "avg_pool2d",
        "adaptive_avg_pool2d",
        "adaptive_max_pool2d",
        "relu",
        "dropout",
        "flatten",
    ];
    crate::infer::split_target(target).is_some_and(|(_, name)| OPS.contains(&name))
}

/// `graph` with its autocast regions written out as casts (see the module doc), or why not.
pub fn explicit_casts(graph: &Graph) -> Result<Graph, String> {
    let mut g = graph.clone();
    let order: Vec<NodeId> = g.nodes().map(|(id, _)| id).collect();
    let ctx = InferCtx::default();
    let mut region = 0usize;
    let mut on = false;
    // The lower-precision dtype of the region in force (`set_autocast`'s third argument).
    let mut low: Option<DType> = None;
    let mut first = true;
    let mut switches = Vec::new();
    // (placeholder, dtype, region) → its cast.
    let mut cached: HashMap<(NodeId, DType, usize), NodeId> = HashMap::new();
    for id in order {
        let node = g.node(id).clone();
        let NodeKind::Call {
            target,
            args,
            kwargs,
        } = &node.kind
        else {
            continue;
        };
        if target.name() == SET_AUTOCAST {
            let enabled = matches!(args.get(1), Some(Arg::Bool(true)));
            if first && !enabled {
                return Err("the graph starts inside an autocast region".into());
            }
            first = false;
            on = enabled;
            low = match args.get(2) {
                Some(Arg::DType(d)) if enabled => Some(*d),
                _ => None,
            };
            region += 1;
            switches.push(id);
            continue;
        }
        if !on {
            continue;
        }
        // Without autocast the call may be invalid (`bf16 @ f32`): autocast made it valid by
        // casting its arguments, which the check after the casts confirms.
        let plain = infer_in(&ctx, &g, target, args, kwargs).ok();
        // An op autocast leaves alone computes as traced, whether or not the native rules
        // know it on this device (a CUDA `batch_norm` of a bfloat16 input and float32
        // statistics).
        if plain.is_none() && untouched_by_autocast(target) {
            continue;
        }
        let want = match (&node.meta, &plain) {
            (NodeMeta::Tensor(a), Some(NodeMeta::Tensor(p))) if a.dtype != p.dtype => a.dtype,
            (NodeMeta::Tensor(_), Some(NodeMeta::Tensor(_))) => continue,
            (NodeMeta::Tensor(a), None) => a.dtype,
            (a, Some(p)) if dtypes(a) == dtypes(p) => continue,
            // No tensor in the result (`x.size()` over symbolic sizes, which `infer_in`
            // leaves to the tracer): nothing for autocast to change.
            (a, _) if dtypes(a).iter().all(Option::is_none) => continue,
            // A tuple over symbolic sizes that the native rules leave to the tracer (`split`,
            // `chunk`): pieces in the dtype of the tensor they come from are not autocast's.
            (NodeMeta::Tuple(_), None)
                if symbolic(&g, args, kwargs)
                    && first_tensor_dtype(&g, args).is_some_and(|d| {
                        dtypes(&node.meta).iter().all(|x| x.is_none_or(|x| x == d))
                    }) =>
            {
                continue
            }
            _ => {
                return Err(format!(
                    "{} under autocast changes the dtypes of a non-tensor result",
                    target.name()
                ))
            }
        };
        let mut cast = |g: &mut Graph, a: &Arg| -> Arg {
            let Arg::Node(n) = a else { return a.clone() };
            let Some(t) = g.node(*n).meta.tensor().cloned() else {
                return a.clone();
            };
            if !t.dtype.is_floating_point() || t.dtype == want {
                return a.clone();
            }
            let leaf = t.requires_grad && matches!(g.node(*n).kind, NodeKind::Placeholder { .. });
            if leaf {
                if let Some(&c) = cached.get(&(*n, want, region)) {
                    return Arg::Node(c);
                }
            }
            // `Tensor.to` keeps a dense layout's strides.
            let mut m = t.clone();
            m.dtype = want;
            let c = g.call_before(
                id,
                "autocast",
                Target::Method("to".into()),
                vec![Arg::Node(*n), Arg::DType(want)],
                vec![],
                NodeMeta::Tensor(m),
            );
            if leaf {
                cached.insert((*n, want, region), c);
            }
            Arg::Node(c)
        };
        let new_args: Vec<Arg> = args
            .iter()
            .map(|a| map_tensors(&mut g, a, &mut cast))
            .collect();
        let new_kwargs: Vec<(String, Arg)> = kwargs
            .iter()
            .map(|(k, a)| (k.clone(), map_tensors(&mut g, a, &mut cast)))
            .collect();
        // Every floating-point argument already has the dtype autocast casts to: autocast
        // does nothing to this call, and its metadata (torch's answer) stands as traced,
        // whether or not `fx::infer` knows the op (`embedding` of a float32 weight).
        if new_args == *args && new_kwargs == *kwargs {
            continue;
        }
        let again = match infer_in(&ctx, &g, target, &new_args, &new_kwargs) {
            Ok(m) => m.tensor().map(|t| t.dtype),
            // Over symbolic sizes the native rules may not answer (`addmm` of `[s0*2, 64]`):
            // the result's dtype is then the traced one, which torch's own run under the
            // state gave at the hints, and a cast of every floating argument to it is what
            // autocast does.
            Err(crate::infer::InferError::Unsupported) if symbolic(&g, &new_args, &new_kwargs) => {
                Some(want)
            }
            // An op autocast runs in its lower precision (a convolution or matrix product,
            // whose CUDA layouts the native rules leave to torch): autocast casts every
            // floating argument to that dtype and the op computes in it, so with the casts
            // written out the result has it.
            Err(crate::infer::InferError::Unsupported)
                if Some(want) == low && runs_in_lower_precision(target) =>
            {
                Some(want)
            }
            // A loss autocast runs in float32, which the native rules do not know (`mse_loss`):
            // its arguments now have the dtype it computes in (found by the autocast training
            // generator: a loss taken inside the region sent the step to eager).
            Err(crate::infer::InferError::Unsupported)
                if matches!(want, DType::Float32 | DType::Float64) && runs_in_float32(target) =>
            {
                Some(want)
            }
            Err(e) => return Err(format!("{} under autocast: {e}", target.name())),
        };
        if again != Some(want) {
            return Err(format!(
                "{} under autocast: casting its arguments to {want:?} does not give its dtype",
                target.name()
            ));
        }
        g.set_call(id, target.clone(), new_args, new_kwargs);
    }
    if on {
        return Err("the graph ends inside an autocast region".into());
    }
    for s in switches {
        if !g.users(s).is_empty() {
            return Err("an autocast switch whose result is used".into());
        }
        g.remove(s);
    }
    Ok(g)
}

/// The dtype of a call's first tensor argument.
fn first_tensor_dtype(g: &Graph, args: &[Arg]) -> Option<DType> {
    let mut nodes = Vec::new();
    args.iter().for_each(|a| a.nodes(&mut nodes));
    nodes
        .iter()
        .find_map(|&n| g.node(n).meta.tensor().map(|t| t.dtype))
}

/// Whether a call's tensor arguments have symbolic sizes.
fn symbolic(g: &Graph, args: &[Arg], kwargs: &[(String, Arg)]) -> bool {
    let mut nodes = Vec::new();
    args.iter().for_each(|a| a.nodes(&mut nodes));
    kwargs.iter().for_each(|(_, a)| a.nodes(&mut nodes));
    nodes
        .iter()
        .any(|&n| !crate::infer::meta_symbols(&g.node(n).meta).is_empty())
}

fn dtypes(m: &NodeMeta) -> Vec<Option<DType>> {
    match m {
        NodeMeta::Tensor(t) => vec![Some(t.dtype)],
        NodeMeta::Tuple(items) => items.iter().flat_map(dtypes).collect(),
        _ => vec![None],
    }
}

fn map_tensors(g: &mut Graph, a: &Arg, f: &mut dyn FnMut(&mut Graph, &Arg) -> Arg) -> Arg {
    match a {
        Arg::Node(_) => f(g, a),
        Arg::List(v) => Arg::List(v.iter().map(|x| map_tensors(g, x, f)).collect()),
        Arg::Tuple(v) => Arg::Tuple(v.iter().map(|x| map_tensors(g, x, f)).collect()),
        other => other.clone(),
    }
}
