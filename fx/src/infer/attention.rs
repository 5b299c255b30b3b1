//! The layout of `scaled_dot_product_attention`'s result. Its sizes and dtype come from torch's
//! meta kernel, but on the meta device that kernel is the math path, whose `attn @ v` is
//! contiguous, while the device's fused kernels allocate the result like q: eager hands a
//! model's attention output back in q's memory order (session 32,
//! `scripts/sdpa_strides_probe.py`). The tracer lays the meta result out by
//! [`sdpa_result_strides`], and the inductor promises its host the same strides, so a
//! returned result has eager's strides and is not copied.

use super::layout::{contiguous_strides, preserved_strides};
use crate::meta::DType;

/// What decides the kernel torch runs for one attention call.
#[derive(Clone, Copy, Debug)]
pub struct SdpaCall<'a> {
    /// `cpu` or `cuda`.
    pub device: &'a str,
    pub dtype: DType,
    pub q_sizes: &'a [i64],
    pub q_strides: &'a [i64],
    /// The result's sizes (q's, with v's head size last).
    pub out_sizes: &'a [i64],
    pub has_mask: bool,
    pub dropout: bool,
}

/// The strides eager's kernel gives the result. On the CPU the fused kernel runs for 4-d
/// operands with q's last dim unit-strided and no broadcast dim, v's head size equal to q's
/// and no dropout, and allocates the result like q (`empty_like`: q's strides when q is dense,
/// else dense in q's stride order); otherwise the math path returns it contiguous. On CUDA the
/// flash kernel (half types, no mask, head size a multiple of 8 up to 256) also allocates like
/// q, and the memory-efficient kernel (the other fused cases) in `[B, L, H, E]` memory.
pub fn sdpa_result_strides(c: &SdpaCall) -> Vec<i64> {
    let contiguous = contiguous_strides(c.out_sizes);
    let (q, qs) = (c.q_sizes, c.q_strides);
    let fused = q.len() == 4
        && qs.len() == 4
        && c.out_sizes.len() == 4
        && qs[3] == 1
        && !c.dropout
        && !q.iter().zip(qs).any(|(&n, &s)| s == 0 && n != 1)
        && q.iter().all(|&n| n > 0);
    if !fused {
        return contiguous;
    }
    let like_q = || {
        if c.out_sizes == q {
            preserved_strides(q, qs)
        } else {
            contiguous.clone()
        }
    };
    match c.device {
        "cpu" if c.out_sizes == q => like_q(),
        "cuda" => {
            let e = q[3];
            let flash = matches!(c.dtype, DType::Float16 | DType::BFloat16)
                && !c.has_mask
                && e % 8 == 0
                && e <= 256
                && c.out_sizes == q;
            if flash {
                like_q()
            } else {
                let (h, l, ev) = (c.out_sizes[1], c.out_sizes[2], c.out_sizes[3]);
                vec![l * h * ev, ev, h * ev, 1]
            }
        }
        _ => contiguous,
    }
}

/// An attention call's result metadata, from the meta kernel's, laid out as the device's
/// kernel lays it ([`sdpa_result_strides`]); `None` when the call is not one the rule reads
/// (symbolic sizes, arguments not bound).
pub fn relaid_result(
    g: &crate::graph::Graph,
    args: &[crate::graph::Arg],
    kwargs: &[(String, crate::graph::Arg)],
    out: &crate::meta::TensorMeta,
) -> Option<crate::meta::TensorMeta> {
    use crate::graph::Arg;
    let sig = crate::ops::signature("scaled_dot_product_attention")?;
    let slots = crate::ops::bind(sig, args, kwargs).ok()?;
    let slot = |i: usize| slots[i].filter(|a| !matches!(a, Arg::None));
    let q = match slot(0)? {
        Arg::Node(n) => g.node(*n).meta.tensor()?,
        _ => return None,
    };
    let dropout = match slot(4) {
        None => false,
        Some(Arg::Float(p)) => *p != 0.0,
        Some(Arg::Int(p)) => *p != 0,
        Some(_) => return None,
    };
    let (q_sizes, q_strides) = (q.known_sizes()?, q.known_strides()?);
    let out_sizes = out.known_sizes()?;
    let strides = sdpa_result_strides(&SdpaCall {
        device: &q.device.kind,
        dtype: q.dtype,
        q_sizes: &q_sizes,
        q_strides: &q_strides,
        out_sizes: &out_sizes,
        has_mask: slot(3).is_some(),
        dropout,
    });
    let mut relaid = out.clone();
    relaid.strides = strides.into_iter().map(crate::meta::Dim::Known).collect();
    Some(relaid)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cpu<'a>(q: &'a [i64], qs: &'a [i64], out: &'a [i64]) -> SdpaCall<'a> {
        SdpaCall {
            device: "cpu",
            dtype: DType::Float32,
            q_sizes: q,
            q_strides: qs,
            out_sizes: out,
            has_mask: false,
            dropout: false,
        }
    }

    #[test]
    fn cpu_results_follow_q() {
        let q = [2, 4, 8, 16];
        // Contiguous, [B, L, H, E] and [H, B, L, E] memory (values from eager, torch 2.11).
        assert_eq!(
            sdpa_result_strides(&cpu(&q, &[512, 128, 16, 1], &q)),
            [512, 128, 16, 1]
        );
        assert_eq!(
            sdpa_result_strides(&cpu(&q, &[512, 16, 64, 1], &q)),
            [512, 16, 64, 1]
        );
        assert_eq!(
            sdpa_result_strides(&cpu(&q, &[128, 256, 16, 1], &q)),
            [128, 256, 16, 1]
        );
        // A third of a fused qkv projection: dense in its order.
        assert_eq!(
            sdpa_result_strides(&cpu(&q, &[1536, 16, 192, 1], &q)),
            [512, 16, 64, 1]
        );
        // The math path: v's head size differs, q's last dim strided, a broadcast q.
        let out = [2, 4, 8, 8];
        assert_eq!(
            sdpa_result_strides(&cpu(&q, &[512, 16, 64, 1], &out)),
            [256, 64, 8, 1]
        );
        assert_eq!(
            sdpa_result_strides(&cpu(&q, &[512, 128, 1, 8], &q)),
            [512, 128, 16, 1]
        );
        assert_eq!(
            sdpa_result_strides(&cpu(&q, &[0, 16, 64, 1], &q)),
            [512, 128, 16, 1]
        );
        let dropout = SdpaCall {
            dropout: true,
            ..cpu(&q, &[512, 16, 64, 1], &q)
        };
        assert_eq!(sdpa_result_strides(&dropout), [512, 128, 16, 1]);
    }
}
