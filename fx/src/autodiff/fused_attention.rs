//! Differentiated attention through torch's fused kernels, as torch.compile does it: the
//! forward of `scaled_dot_product_attention` becomes the fused op that also returns the rows'
//! `logsumexp`, and its backward is the fused backward op reading the saved output and
//! `logsumexp` (one extern call each; the `[.., L, S]` probabilities are never saved or
//! recomputed, where the math rule of `rules/train.rs` recomputes them and runs four batched
//! products and a softmax backward over them).
//!
//! torch's `scaled_dot_product_attention` picks a backend per call (`torch._fused_sdp_choice`).
//! On the CPU it takes `_scaled_dot_product_flash_attention_for_cpu` (whose autograd node is
//! `_scaled_dot_product_flash_attention_for_cpu_backward`) when q, k and v are 4-d, of one
//! floating dtype, with equal batch sizes, one head size `E` for q, k and v, unit last-dim
//! strides and no zero size; grouped heads (`enable_gqa`) are passed as they are; a mask is 2-d
//! or 4-d, boolean or of q's dtype, and carries no gradient; no dropout. Everything else runs
//! the math backend, and keeps the math rule here (the checks below are those facts, measured
//! against `torch._fused_sdp_choice` on torch 2.11). A boolean mask is handed to the kernel as
//! eager's SDPA converts it: `0` where True, `-inf` where False, in q's dtype.
//!
//! On CUDA torch picks among flash, memory-efficient and cuDNN kernels by device capability,
//! dtype, head size and alignment, which the fx graph does not see: there the forward is the
//! host call `torchferro._aot_helpers.sdpa_forward`, which asks `torch._fused_sdp_choice` on
//! the device (as eager's dispatch does) and runs that backend's forward, returning the output
//! and its logsumexp (`[B, H, L]` padded to a multiple of 32 rows, float32, the efficient
//! kernel's form), and the backward `sdpa_backward` runs the same backend's fused backward
//! (flash, memory-efficient or cuDNN; another backend, or a head size eager pads, takes
//! torch's autograd through the attention again).
//! On CUDA it takes attention with equal heads and no dropout (dropout is drawn inside CUDA's
//! kernels), with no mask or one that takes no gradient (handed to the memory-efficient
//! kernel as eager's dispatch prepares it: boolean converted to `0/-inf`, expanded, its rows
//! aligned to 16 elements).

use super::random::{rewrite_calls, CallSite};
use crate::graph::{Arg, Graph, NodeId, Target};
use crate::meta::{DType, Dim, NodeMeta, TensorMeta};
use crate::ops;

/// torch's fused CPU attention forward: `(output, logsumexp)`.
pub const FLASH_CPU: &str = "torch.ops.aten._scaled_dot_product_flash_attention_for_cpu.default";
/// Its backward: `(grad_query, grad_key, grad_value)`.
pub const FLASH_CPU_BACKWARD: &str =
    "torch.ops.aten._scaled_dot_product_flash_attention_for_cpu_backward.default";
/// The CUDA forward host call: `sdpa_forward(q, k, v, attn_mask, is_causal, scale) ->
/// (output, logsumexp)`.
pub const CUDA_FORWARD: &str = "torchferro._aot_helpers.sdpa_forward";
/// Its backward: `sdpa_backward(grad, q, k, v, output, logsumexp, attn_mask, is_causal,
/// scale) -> (grad_query, grad_key, grad_value)`.
pub const CUDA_BACKWARD: &str = "torchferro._aot_helpers.sdpa_backward";

/// Rewrites every attention torch runs on its fused CPU kernel whose q, k or v is in `needs`
/// into `fused = _scaled_dot_product_flash_attention_for_cpu(..)`, the attention node itself
/// becoming `fused[0]` and a `fused[1]` (logsumexp) added for the backward to save. Returns the
/// nodes whose target is new.
pub fn rewrite_sdpa_fused(g: &mut Graph, needs: &dyn Fn(NodeId) -> bool) -> Vec<NodeId> {
    rewrite_calls(g, "scaled_dot_product_attention", |g, site| {
        rewrite_one(g, site, needs)
    })
}

fn rewrite_one(
    g: &mut Graph,
    site: CallSite,
    needs: &dyn Fn(NodeId) -> bool,
) -> Option<Vec<NodeId>> {
    let CallSite {
        id, args, kwargs, ..
    } = site;
    let sig = ops::signature("scaled_dot_product_attention")?;
    let slots = ops::bind(sig, &args, &kwargs).ok()?;
    let slot = |i: usize| slots[i].filter(|a| !matches!(a, Arg::None));
    let node = |i: usize| match slot(i) {
        Some(Arg::Node(n)) => Some(*n),
        _ => None,
    };
    let (q, k, v) = (node(0)?, node(1)?, node(2)?);
    if ![q, k, v].into_iter().any(needs) {
        return None;
    }
    let dropout = match slot(4) {
        None => 0.0,
        Some(Arg::Float(p)) => *p,
        Some(Arg::Int(p)) => *p as f64,
        Some(_) => return None,
    };
    let is_causal = match slot(5) {
        None => false,
        Some(Arg::Bool(b)) => *b,
        Some(_) => return None,
    };
    let scale = match slot(6) {
        None => None,
        Some(Arg::Float(s)) => Some(*s),
        Some(Arg::Int(s)) => Some(*s as f64),
        Some(_) => return None,
    };
    let gqa = match slot(7) {
        None => false,
        Some(Arg::Bool(b)) => *b,
        Some(_) => return None,
    };
    if dropout != 0.0 {
        return None;
    }
    let meta = |n: NodeId| g.node(n).meta.tensor().cloned();
    let (qm, km, vm) = (meta(q)?, meta(k)?, meta(v)?);
    let out_meta = meta(id)?;
    if qm.device.kind == "cuda" {
        let mask = match slot(3) {
            None => None,
            Some(Arg::Node(m)) => {
                let mm = meta(*m)?;
                let ok = matches!(mm.ndim(), 2 | 4)
                    && (mm.dtype == DType::Bool || mm.dtype == qm.dtype)
                    && mm.device == qm.device
                    && !needs(*m);
                if !ok {
                    return None;
                }
                Some(*m)
            }
            Some(_) => return None,
        };
        if gqa {
            return None;
        }
        return rewrite_cuda(g, id, [q, k, v], mask, is_causal, scale);
    }
    if !fused_cpu_inputs(&qm, &km, &vm, gqa) {
        return None;
    }
    let mask = match slot(3) {
        None => None,
        Some(Arg::Node(m)) => {
            let mm = meta(*m)?;
            let ok = matches!(mm.ndim(), 2 | 4)
                && (mm.dtype == DType::Bool || mm.dtype == qm.dtype)
                && !needs(*m)
                && mm.known_sizes().is_some();
            if !ok {
                return None;
            }
            Some((*m, mm))
        }
        Some(_) => return None,
    };
    let mut new = Vec::new();
    // A boolean mask as eager's SDPA hands it to the kernel: 0 where True, -inf where False,
    // written `where(mask, 0-d zero, -inf)` so that the partitioner recomputes it from the
    // boolean mask in the backward (a `where` is cheap to recompute) instead of saving a float
    // copy per attention where one boolean mask serves every layer.
    let mask_arg = match mask {
        None => Arg::None,
        Some((m, mm)) if mm.dtype == DType::Bool => {
            let sizes = mm.known_sizes()?;
            let zero = g.call_before(
                id,
                "mask_zero",
                Target::Method("new_zeros".into()),
                vec![Arg::Node(q), super::ints(&[])],
                vec![],
                NodeMeta::Tensor(TensorMeta::contiguous(qm.dtype, qm.device.clone(), &[])),
            );
            let fill = g.call_before(
                id,
                "mask_bias",
                Target::Function("torch.where".into()),
                vec![Arg::Node(m), Arg::Node(zero), Arg::Float(f64::NEG_INFINITY)],
                vec![],
                NodeMeta::Tensor(TensorMeta::contiguous(qm.dtype, qm.device.clone(), &sizes)),
            );
            new.extend([zero, fill]);
            Arg::Node(fill)
        }
        Some((m, _)) => Arg::Node(m),
    };
    let lse = lse_meta(&qm)?;
    let fused = g.call_before(
        id,
        "sdpa_fused",
        Target::Function(FLASH_CPU.into()),
        vec![
            Arg::Node(q),
            Arg::Node(k),
            Arg::Node(v),
            Arg::Float(0.0),
            Arg::Bool(is_causal),
        ],
        vec![
            ("attn_mask".into(), mask_arg),
            ("scale".into(), scale.map_or(Arg::None, Arg::Float)),
        ],
        NodeMeta::Tuple(vec![
            NodeMeta::Tensor(out_meta),
            NodeMeta::Tensor(lse.clone()),
        ]),
    );
    new.extend(split_fused(g, id, fused, lse));
    Some(new)
}

/// The CUDA form (see the module doc): `fused = sdpa_forward(q, k, v, mask, is_causal, scale)`,
/// the attention node becoming `fused[0]` and `fused[1]` the logsumexp the backward saves.
fn rewrite_cuda(
    g: &mut Graph,
    id: NodeId,
    [q, k, v]: [NodeId; 3],
    mask: Option<NodeId>,
    is_causal: bool,
    scale: Option<f64>,
) -> Option<Vec<NodeId>> {
    let meta = |n: NodeId| g.node(n).meta.tensor().cloned();
    let (qm, km, vm) = (meta(q)?, meta(k)?, meta(v)?);
    let out_meta = meta(id)?;
    let on_one_device = [&km, &vm].iter().all(|m| m.device == qm.device);
    let dtypes = qm.dtype == km.dtype
        && qm.dtype == vm.dtype
        && matches!(qm.dtype, DType::Float32 | DType::BFloat16 | DType::Float16);
    let (qs, ks, vs) = (qm.known_sizes()?, km.known_sizes()?, vm.known_sizes()?);
    let shapes = qs.len() == 4
        && ks.len() == 4
        && vs.len() == 4
        && ![&qs, &ks, &vs].iter().any(|s| s.contains(&0))
        && qs[..2] == ks[..2]
        && ks[..2] == vs[..2]
        && qs[3] == ks[3]
        && ks[3] == vs[3]
        && ks[2] == vs[2];
    if !on_one_device || !dtypes || !shapes {
        return None;
    }
    let (b, h, l) = (qs[0], qs[1], qs[2]);
    let lse = TensorMeta::contiguous(
        DType::Float32,
        qm.device.clone(),
        &[b, h, (l + 31) / 32 * 32],
    );
    let fused = g.call_before(
        id,
        "sdpa_fused",
        Target::Function(CUDA_FORWARD.into()),
        vec![
            Arg::Node(q),
            Arg::Node(k),
            Arg::Node(v),
            mask.map_or(Arg::None, Arg::Node),
            Arg::Bool(is_causal),
            scale.map_or(Arg::None, Arg::Float),
        ],
        vec![],
        NodeMeta::Tuple(vec![
            NodeMeta::Tensor(out_meta),
            NodeMeta::Tensor(lse.clone()),
        ]),
    );
    Some(split_fused(g, id, fused, lse).to_vec())
}

/// The attention node `id` becomes `fused[0]`, and a new `fused[1]` (the logsumexp, of meta
/// `lse`) is added for the backward to save. Returns `[fused, logsumexp, id]`.
fn split_fused(g: &mut Graph, id: NodeId, fused: NodeId, lse: TensorMeta) -> [NodeId; 3] {
    let lse_node = g.call_before(
        id,
        "sdpa_logsumexp",
        Target::Function("operator.getitem".into()),
        vec![Arg::Node(fused), Arg::Int(1)],
        vec![],
        NodeMeta::Tensor(lse),
    );
    g.set_call(
        id,
        Target::Function("operator.getitem".into()),
        vec![Arg::Node(fused), Arg::Int(0)],
        vec![],
    );
    [fused, lse_node, id]
}

/// Whether torch's CPU dispatch runs attention of these operands on its fused kernel (see the
/// module doc).
fn fused_cpu_inputs(qm: &TensorMeta, km: &TensorMeta, vm: &TensorMeta, gqa: bool) -> bool {
    let cpu = |m: &TensorMeta| m.device.kind == "cpu";
    if !(cpu(qm) && cpu(km) && cpu(vm)) {
        return false;
    }
    if qm.dtype != km.dtype
        || qm.dtype != vm.dtype
        || !matches!(
            qm.dtype,
            DType::Float32 | DType::Float64 | DType::BFloat16 | DType::Float16
        )
    {
        return false;
    }
    let (Some(qs), Some(ks), Some(vs)) = (qm.known_sizes(), km.known_sizes(), vm.known_sizes())
    else {
        return false;
    };
    if qs.len() != 4 || ks.len() != 4 || vs.len() != 4 {
        return false;
    }
    if [&qs, &ks, &vs].iter().any(|s| s.contains(&0)) {
        return false;
    }
    let heads_ok = if gqa {
        ks[1] == vs[1] && qs[1] % ks[1] == 0
    } else {
        qs[1] == ks[1] && ks[1] == vs[1]
    };
    let unit_last =
        |m: &TensorMeta, s: &[i64]| s[3] == 1 || matches!(m.strides.last(), Some(Dim::Known(1)));
    heads_ok
        && qs[0] == ks[0]
        && ks[0] == vs[0]
        && qs[3] == ks[3]
        && ks[3] == vs[3]
        && ks[2] == vs[2]
        && unit_last(qm, &qs)
        && unit_last(km, &ks)
        && unit_last(vm, &vs)
}

/// The kernel's `logsumexp`: `[B, H, L]` laid out `[B, L, H]`, float32 (float64 for float64
/// attention).
fn lse_meta(qm: &TensorMeta) -> Option<TensorMeta> {
    let qs = qm.known_sizes()?;
    let (b, h, l) = (qs[0], qs[1], qs[2]);
    let dtype = if qm.dtype == DType::Float64 {
        DType::Float64
    } else {
        DType::Float32
    };
    let mut m = TensorMeta::contiguous(dtype, qm.device.clone(), &[b, h, l]);
    m.strides = [h * l, 1, h].into_iter().map(Dim::Known).collect();
    Some(m)
}

/// The fused backward's gradient layout for an operand of sizes `[B, H, X, E]`: laid out
/// `[B, X, H, E]` whatever the operand's layout (torch's CPU kernel allocates it so).
pub fn grad_meta(m: &TensorMeta) -> Option<TensorMeta> {
    let s = m.known_sizes()?;
    let mut r = TensorMeta::contiguous(m.dtype, m.device.clone(), &s);
    r.strides = [s[2] * s[1] * s[3], s[3], s[1] * s[3], 1]
        .into_iter()
        .map(Dim::Known)
        .collect();
    Some(r)
}

/// The CUDA host call's gradient layout for an operand `m` (`[B, H, X, E]`): `empty_like` of the
/// operand, dense in its dimension order. torch 2.11's cuDNN backward allocates its gradients
/// with `empty_like(q)` (and of k, v); the flash backward allocates them like its `[B, X, H, E]`
/// transposes and transposes back, the same layout; the memory-efficient one always gives
/// `[B, X, H, E]`, which is this layout for the usual operands (heads split from a projection's
/// `[B, X, H * E]` rows). Where the backend's result is laid out otherwise the host copies it
/// into this layout. Declared contiguous, GPT-2's three gradients were copied out of cuDNN's
/// `[B, X, H, E]` result on every layer (0.69 ms of a 31 ms step on the H100, session 33's
/// trace), and the kernel joining them into the projection's gradient then read them back.
pub fn cuda_grad_meta(m: &TensorMeta) -> Option<TensorMeta> {
    let sizes = m.known_sizes()?;
    let strides = m.known_strides()?;
    let mut r = TensorMeta::contiguous(m.dtype, m.device.clone(), &sizes);
    r.strides = crate::infer::layout::preserved_strides(&sizes, &strides)
        .into_iter()
        .map(Dim::Known)
        .collect();
    Some(r)
}
