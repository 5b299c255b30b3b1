//! The layout of `scaled_dot_product_attention`'s result. Its sizes and dtype come from torch's
//! meta kernel, but on the meta device that kernel is the math path, whose `attn @ v` is
//! contiguous, while the device's fused kernels allocate the result like q: eager hands a
//! model's attention output back in q's memory order (session 32,
//! `scripts/sdpa_strides_probe.py`). The tracer lays the meta result out by
//! [`sdpa_result_strides`], and the inductor promises its host the same strides, so a
//! returned result has eager's strides and is not copied.

use super::layout::{contiguous_strides, preserved_strides};
use crate::meta::DType;

/// A size or stride the rule reads: a known constant, or (in the inductor's symbolic graphs)
/// a value of which the rule knows only that it is a positive size. One rule serves both.
pub trait SizeFact: Copy + PartialEq {
    /// The value, when it is a known constant.
    fn constant(self) -> Option<i64>;
}

impl SizeFact for i64 {
    fn constant(self) -> Option<i64> {
        Some(self)
    }
}

/// What decides the kernel torch runs for one attention call.
#[derive(Clone, Copy, Debug)]
pub struct SdpaCall<'a, S = i64> {
    /// `cpu` or `cuda`.
    pub device: &'a str,
    pub dtype: DType,
    pub q_sizes: &'a [S],
    pub q_strides: &'a [S],
    /// k's and v's strides (the fused kernels read all three with a unit-strided last dim).
    pub k_strides: &'a [S],
    pub v_strides: &'a [S],
    /// The result's sizes (q's, with v's head size last).
    pub out_sizes: &'a [S],
    pub has_mask: bool,
    pub dropout: bool,
}

/// How the kernel torch runs lays out the result.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SdpaLayout {
    /// Contiguous in the result's sizes (the math path).
    Contiguous,
    /// Allocated like q, whose sizes the result has (`empty_like`: q's strides when q is
    /// dense, else dense in q's stride order).
    LikeQ,
    /// `[B, L, H, E]` memory: dense with dims outermost first in the order 0, 2, 1, 3.
    Blhe,
}

/// The layout eager's kernel gives the result. On the CPU the fused kernel runs for 4-d
/// operands with q's, k's and v's last dims unit-strided, no broadcast dim in q (k and v may
/// broadcast: expanded kv heads), v's head size equal to q's
/// and no dropout, and allocates the result like q; otherwise the math path returns it
/// contiguous. On CUDA the flash kernel (half types, no mask, head size a multiple of 8 up to
/// 256) also allocates like q, and the memory-efficient kernel (the other fused cases) in
/// `[B, L, H, E]` memory. A symbolic size counts as positive; a symbolic stride is not 1 or 0
/// and a symbolic head size not flash's, since the rule cannot tell (it falls to the kernel
/// that does not need them).
pub fn sdpa_result_layout<S: SizeFact>(c: &SdpaCall<'_, S>) -> SdpaLayout {
    let (q, qs) = (c.q_sizes, c.q_strides);
    let is = |v: S, k: i64| v.constant() == Some(k);
    let unit_last = |st: &[S]| st.last().is_some_and(|&s| is(s, 1));
    let fused = q.len() == 4
        && qs.len() == 4
        && c.out_sizes.len() == 4
        && unit_last(qs)
        && unit_last(c.k_strides)
        && unit_last(c.v_strides)
        && !c.dropout
        && !q.iter().zip(qs).any(|(&n, &s)| is(s, 0) && !is(n, 1))
        && q.iter().all(|n| n.constant().is_none_or(|n| n > 0));
    if !fused {
        return SdpaLayout::Contiguous;
    }
    let same = c.out_sizes == q;
    match c.device {
        "cpu" if same => SdpaLayout::LikeQ,
        "cuda" => {
            let flash = matches!(c.dtype, DType::Float16 | DType::BFloat16)
                && !c.has_mask
                && q[3].constant().is_some_and(|e| e % 8 == 0 && e <= 256)
                && same;
            if flash {
                SdpaLayout::LikeQ
            } else {
                SdpaLayout::Blhe
            }
        }
        _ => SdpaLayout::Contiguous,
    }
}

/// The strides eager's kernel gives the result ([`sdpa_result_layout`] applied to known
/// sizes).
pub fn sdpa_result_strides(c: &SdpaCall) -> Vec<i64> {
    match sdpa_result_layout(c) {
        SdpaLayout::Contiguous => contiguous_strides(c.out_sizes),
        SdpaLayout::LikeQ => preserved_strides(c.q_sizes, c.q_strides),
        SdpaLayout::Blhe => {
            let (h, l, ev) = (c.out_sizes[1], c.out_sizes[2], c.out_sizes[3]);
            vec![l * h * ev, ev, h * ev, 1]
        }
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
    let operand = |i: usize| match slot(i)? {
        Arg::Node(n) => g.node(*n).meta.tensor(),
        _ => None,
    };
    let (q, k, v) = (operand(0)?, operand(1)?, operand(2)?);
    let dropout = match slot(4) {
        None => false,
        Some(Arg::Float(p)) => *p != 0.0,
        Some(Arg::Int(p)) => *p != 0,
        Some(_) => return None,
    };
    let (q_sizes, q_strides) = (q.known_sizes()?, q.known_strides()?);
    let (k_strides, v_strides) = (k.known_strides()?, v.known_strides()?);
    let out_sizes = out.known_sizes()?;
    let strides = sdpa_result_strides(&SdpaCall {
        device: &q.device.kind,
        dtype: q.dtype,
        q_sizes: &q_sizes,
        q_strides: &q_strides,
        k_strides: &k_strides,
        v_strides: &v_strides,
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

    /// A call without dropout.
    fn call<'a, S: SizeFact>(
        device: &'a str,
        dtype: DType,
        (q, qs, out): (&'a [S], &'a [S], &'a [S]),
        has_mask: bool,
    ) -> SdpaCall<'a, S> {
        SdpaCall {
            device,
            dtype,
            q_sizes: q,
            q_strides: qs,
            k_strides: qs,
            v_strides: qs,
            out_sizes: out,
            has_mask,
            dropout: false,
        }
    }

    fn cpu<'a>(q: &'a [i64], qs: &'a [i64], out: &'a [i64]) -> SdpaCall<'a> {
        call("cpu", DType::Float32, (q, qs, out), false)
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
        // k's or v's last dim strided (k^T stored, a transposed v): the math path too.
        let k_strided = SdpaCall {
            k_strides: &[512, 128, 1, 8],
            ..cpu(&q, &[512, 16, 64, 1], &q)
        };
        assert_eq!(sdpa_result_strides(&k_strided), [512, 128, 16, 1]);
        let v_strided = SdpaCall {
            v_strides: &[512, 128, 1, 8],
            ..cpu(&q, &[512, 16, 64, 1], &q)
        };
        assert_eq!(sdpa_result_strides(&v_strided), [512, 128, 16, 1]);
        let dropout = SdpaCall {
            dropout: true,
            ..cpu(&q, &[512, 16, 64, 1], &q)
        };
        assert_eq!(sdpa_result_strides(&dropout), [512, 128, 16, 1]);
    }

    /// A size as the inductor's symbolic graphs have it: a constant or an unknown symbol.
    #[derive(Clone, Copy, PartialEq)]
    enum Sym {
        K(i64),
        S(u8),
    }

    impl SizeFact for Sym {
        fn constant(self) -> Option<i64> {
            match self {
                Sym::K(k) => Some(k),
                Sym::S(_) => None,
            }
        }
    }

    #[test]
    fn one_rule_for_known_and_symbolic_sizes() {
        use SdpaLayout::{Blhe, Contiguous, LikeQ};
        use Sym::{K, S};
        // [B, H, L, E] with symbolic batch and length (head size symbolic in `q_e`), in
        // contiguous or [B, L, H, E] memory, a last-dim stride the rule cannot read as 1, and
        // a broadcast dim (stride 0 over a size that is not 1).
        let q: &[Sym] = &[S(0), K(4), S(1), K(64)];
        let q_e: &[Sym] = &[S(0), K(4), S(1), S(6)];
        let contiguous: &[Sym] = &[S(2), S(3), K(64), K(1)];
        let blhe: &[Sym] = &[S(2), K(64), S(4), K(1)];
        let odd: &[Sym] = &[S(2), S(3), K(64), S(5)];
        let broadcast: &[Sym] = &[K(0), S(3), K(64), K(1)];
        let (f32_, f16) = (DType::Float32, DType::Float16);
        let cases = [
            // The CPU's fused kernel allocates like q; the math path is contiguous.
            ("cpu", f32_, q, contiguous, false, LikeQ),
            ("cpu", f32_, q, blhe, true, LikeQ),
            ("cpu", f32_, q, odd, false, Contiguous),
            ("cpu", f32_, q, broadcast, false, Contiguous),
            // CUDA: flash (half types, no mask, a known head size it takes) like q, the
            // memory-efficient kernel otherwise (a head size the rule cannot read too).
            ("cuda", f16, q, contiguous, false, LikeQ),
            ("cuda", f16, q, contiguous, true, Blhe),
            ("cuda", f32_, q, contiguous, false, Blhe),
            ("cuda", f16, q_e, contiguous, false, Blhe),
            ("cuda", f16, q, odd, false, Contiguous),
        ];
        for (device, dtype, q, qs, mask, want) in cases {
            let got = sdpa_result_layout(&call(device, dtype, (q, qs, q), mask));
            assert_eq!(got, want, "{device} {dtype:?} mask={mask}");
        }
    }

    #[test]
    fn cuda_results_by_kernel() {
        let q = [2, 4, 8, 64];
        let call = |dtype, qs: &'static [i64], mask| call("cuda", dtype, (&q, qs, &q), mask);
        // Flash: like q ([B, L, H, E] memory kept, contiguous kept).
        assert_eq!(
            sdpa_result_strides(&call(DType::BFloat16, &[2048, 64, 256, 1], false)),
            [2048, 64, 256, 1]
        );
        assert_eq!(
            sdpa_result_strides(&call(DType::Float16, &[2048, 512, 64, 1], false)),
            [2048, 512, 64, 1]
        );
        // Memory-efficient (float32, or a mask): [B, L, H, E] memory whatever q's.
        assert_eq!(
            sdpa_result_strides(&call(DType::Float32, &[2048, 512, 64, 1], false)),
            [2048, 64, 256, 1]
        );
        assert_eq!(
            sdpa_result_strides(&call(DType::Float16, &[2048, 512, 64, 1], true)),
            [2048, 64, 256, 1]
        );
    }
}
