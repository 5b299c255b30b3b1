//! `F.embedding_bag` (what `nn.EmbeddingBag` calls). Facts of `derivatives.yaml`: the op is
//! `_embedding_bag`, whose `weight` gradient is `_embedding_bag_backward(grad, indices, offsets,
//! offset2bag, bag_size, maximum_indices, num_weights, scale_grad_by_freq, mode, sparse,
//! per_sample_weights, padding_idx)` and whose `per_sample_weights` gradient is
//! `_embedding_bag_per_sample_weights_backward(grad, weight, indices, offsets, offset2bag, mode,
//! padding_idx)`.
//!
//! `offset2bag`, `bag_size` and `maximum_indices` are data-dependent results whose sizes torch's
//! meta kernel does not give (the inductor refuses graphs that read them, `META_DIFFERS`), so the
//! forward keeps only the bags and the backward is one host call
//! (`torchferro._aot_helpers.embedding_bag_backward`) that takes them again from the saved
//! indices and offsets and hands them to those two backward kernels: eager's own gradients,
//! sizes known (the weight's and the per-sample weights'). `max_norm` (renormalizes the weight in
//! place under `no_grad` before the lookup) and `sparse=True` (a sparse gradient) have no rule.

use super::*;
use crate::meta::NodeMeta;

pub(super) fn rule(b: &mut Bw, c: &Call) -> Result<Option<Grads>> {
    if c.name != "embedding_bag" {
        return Ok(None);
    }
    if c.sp != Spelling::Functional {
        // `torch.embedding_bag` returns the four-tensor tuple (no tuple rule yet).
        return Ok(Some(no_rule::<Grads>("torch.embedding_bag")?));
    }
    embedding_bag(b, c.args, c.kwargs, c.g).map(Some)
}

fn embedding_bag(b: &mut Bw, args: &[Arg], kwargs: &[(String, Arg)], g: NodeId) -> Result<Grads> {
    let p = B::new(
        &[
            "input",
            "weight",
            "offsets",
            "max_norm",
            "norm_type",
            "scale_grad_by_freq",
            "mode",
            "sparse",
            "per_sample_weights",
            "include_last_offset",
            "padding_idx",
        ],
        args,
        kwargs,
        "embedding_bag",
    )?;
    if p.get("max_norm").is_some() {
        return no_rule("embedding_bag with max_norm (renormalizes the weight in place)");
    }
    if p.boolean("sparse", false) {
        return no_rule("embedding_bag with sparse=True (a sparse gradient)");
    }
    let (Some(input), Some(w)) = (p.node("input"), p.node("weight")) else {
        return no_rule("embedding_bag");
    };
    let mode = match p.str("mode").unwrap_or("mean") {
        "sum" => 0,
        "mean" => 1,
        "max" => 2,
        other => return no_rule(format!("embedding_bag(mode={other:?})")),
    };
    let ws = b.fsizes(w)?;
    if ws.len() != 2 {
        return no_rule("embedding_bag with a weight that is not 2-D");
    }
    // F.embedding_bag's normalization: a negative padding index counts from the end, none is -1.
    let padding_idx = match p.get("padding_idx") {
        None => -1,
        Some(Arg::Int(i)) if *i < 0 => ws[0] + i,
        Some(Arg::Int(i)) => *i,
        Some(_) => return no_rule("embedding_bag with a non-constant padding_idx"),
    };
    let psw = p.node("per_sample_weights");
    let need_w = b.needs(w);
    let need_psw = psw.is_some_and(|n| b.needs(n));
    let wb = b.fwd(w);
    let ib = b.fwd(input);
    let offsets = match p.node("offsets") {
        Some(o) => Arg::Node(b.fwd(o)),
        None => Arg::None,
    };
    let psw_b = match psw {
        Some(n) => Arg::Node(b.fwd(n)),
        None => Arg::None,
    };
    let dense = |m: &TensorMeta| {
        NodeMeta::Tensor(TensorMeta::contiguous(
            m.dtype,
            m.device.clone(),
            &m.known_sizes().unwrap_or_default(),
        ))
    };
    let wmeta = if need_w {
        dense(b.fmeta(w)?)
    } else {
        NodeMeta::None
    };
    let pmeta = match psw {
        Some(n) if need_psw => dense(b.fmeta(n)?),
        _ => NodeMeta::None,
    };
    let items = vec![wmeta, pmeta];
    let r = b.raw(
        "embedding_bag_backward",
        Target::Function("torchferro._aot_helpers.embedding_bag_backward".into()),
        vec![
            Arg::Node(g),
            Arg::Node(wb),
            Arg::Node(ib),
            offsets,
            psw_b,
            Arg::Int(mode),
            Arg::Bool(p.boolean("scale_grad_by_freq", false)),
            Arg::Bool(p.boolean("include_last_offset", false)),
            Arg::Int(padding_idx),
            Arg::Bool(need_w),
            Arg::Bool(need_psw),
        ],
        NodeMeta::Tuple(items.clone()),
    );
    let inputs = [(Some(w), need_w), (psw, need_psw)];
    Ok(super::nn::tuple_grads(b, r, &items, inputs))
}
