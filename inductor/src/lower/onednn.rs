//! Which 2-d convolutions torch's CPU dispatch runs on oneDNN, for one call and for a whole
//! graph. A leaf: the CPU policy's channels-last rule ([`crate::target`]) and the convolution
//! lowering ([`super::extern_ops`]) both ask it, so the target does not reach into the lowering
//! driver.

use fx::ops::canonical;
use fx::{Arg, DType, Graph, NodeKind};

use super::args;

/// Whether torch's CPU convolution runs this 2-d convolution on oneDNN rather than its native
/// kernel. The rule is torch's own dispatch (`ConvParams::use_mkldnn` in torch 2.11): bfloat16
/// and float16 inputs go to oneDNN wherever the CPU supports the type
/// ([`onednn_supports`]); float32 ones (the thread-count clause for 1x1 filters left out) when
/// grouped, with a filter wider than 3 in both dims, a batch above 1, or an input above 20480
/// elements. A channels-last input pays off only on oneDNN; the native kernel copies input and
/// weights into its layout on every call.
pub fn conv2d_uses_onednn(dtype: DType, input: &[i64], weight: &[i64], groups: i64) -> bool {
    if input.len() != 4 || weight.len() != 4 {
        return false;
    }
    match dtype {
        DType::BFloat16 | DType::Float16 => onednn_supports(dtype),
        DType::Float32 => {
            groups > 1
                || (weight[2] > 3 && weight[3] > 3)
                || input[0] > 1
                || input.iter().product::<i64>() > 20480
        }
        _ => false,
    }
}

/// torch's `mkldnn_bf16_device_check` and `mkldnn_fp16_device_check` on x86 (oneDNN's
/// `has_bf16_type_support` / `has_fp16_type_support`): bfloat16 from AVX-512 core (F, BW, VL,
/// DQ) up, float16 from AVX-512 FP16 up. The AVX2-VNNI-2 clause of both (CPUs with
/// `avx_ne_convert` but no AVX-512) is left out: such a CPU gets contiguous layouts, as
/// before, and graph outputs still take eager's strides.
fn onednn_supports(dtype: DType) -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        let core = std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("avx512bw")
            && std::arch::is_x86_feature_detected!("avx512vl")
            && std::arch::is_x86_feature_detected!("avx512dq");
        match dtype {
            DType::BFloat16 => core,
            DType::Float16 => core && std::arch::is_x86_feature_detected!("avx512fp16"),
            _ => false,
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = dtype;
        false
    }
}

/// [`conv2d_uses_onednn`] for a `conv2d` call of the graph, from its arguments' metadata.
pub fn conv2d_node_uses_onednn(graph: &fx::Graph, args: &[Arg], kwargs: &[(String, Arg)]) -> bool {
    let Ok(b) = args::bind(
        &[
            "input", "weight", "bias", "stride", "padding", "dilation", "groups",
        ],
        args,
        kwargs,
    ) else {
        return false;
    };
    let sizes = |name: &str| match b.get(name) {
        Some(Arg::Node(id)) => graph.node(*id).meta.tensor().and_then(|t| t.known_sizes()),
        _ => None,
    };
    let groups = match b.get("groups") {
        Some(Arg::Int(g)) => *g,
        _ => 1,
    };
    let dtype = match b.get("input") {
        Some(Arg::Node(id)) => graph.node(*id).meta.tensor().map(|t| t.dtype),
        _ => None,
    };
    match (dtype, sizes("input"), sizes("weight")) {
        (Some(d), Some(x), Some(w)) => conv2d_uses_onednn(d, &x, &w, groups),
        _ => false,
    }
}

/// Whether most of the graph's 2-d convolutions run on oneDNN, which convolves channels-last
/// tensors without reordering them (see [`conv2d_uses_onednn`]); the CPU policy's
/// channels-last rule ([`crate::target::ChannelsLast::WhenOneDnn`]).
pub(crate) fn convolutions_mostly_onednn(graph: &Graph) -> bool {
    let (mut onednn, mut native) = (0, 0);
    for (_, n) in graph.nodes() {
        if let NodeKind::Call {
            target,
            args,
            kwargs,
        } = &n.kind
        {
            let uses = if target.name().ends_with("convolution_backward.default") {
                // A training backward's: (grad_output, input, weight, bias_sizes, stride,
                // padding, dilation, transposed, output_padding, groups). torch runs it where it
                // ran the forward, so the backward's intermediates take the forward's layout
                // (a channels-last forward's saved tensors read by an NCHW backward were
                // copied and read strided: 3-4x eager's step, session 35).
                backward_uses_onednn(graph, args)
            } else if canonical(target, args, kwargs).is_some_and(|c| c.name == "conv2d") {
                Some(conv2d_node_uses_onednn(graph, args, kwargs))
            } else {
                None
            };
            match uses {
                Some(true) => onednn += 1,
                Some(false) => native += 1,
                None => {}
            }
        }
    }
    onednn > 0 && onednn >= native
}

/// [`conv2d_uses_onednn`] for a `convolution_backward` call of the graph (`None`: not a 2-d
/// convolution's, or sizes unknown).
fn backward_uses_onednn(graph: &Graph, args: &[Arg]) -> Option<bool> {
    let meta = |i: usize| match args.get(i) {
        Some(Arg::Node(id)) => graph.node(*id).meta.tensor(),
        _ => None,
    };
    let (x, w) = (meta(1)?, meta(2)?);
    let (xs, ws) = (x.known_sizes()?, w.known_sizes()?);
    if xs.len() != 4 || matches!(args.get(7), Some(Arg::Bool(true))) {
        return None;
    }
    let groups = match args.get(9) {
        Some(Arg::Int(g)) => *g,
        _ => 1,
    };
    Some(conv2d_uses_onednn(x.dtype, &xs, &ws, groups))
}
