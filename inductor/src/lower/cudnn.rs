//! When a CUDA graph lays its 4-d intermediates out channels-last. A leaf, as [`super::onednn`]
//! is for the CPU: the CUDA policy ([`crate::target`]) asks it, the lowering driver does not.
//!
//! torch's CUDA convolution returns a channels-last result when its input or its weight is
//! channels-last (cuDNN's suggested memory format), and batch norm, activations and adds keep
//! it. A model moved to `torch.channels_last` therefore runs channels-last end to end in eager.
//! Contiguous intermediates in such a graph cost twice: every convolution's result is copied
//! into a contiguous buffer, and every kernel that writes a value the backward or the next
//! convolution reads in eager's channels-last layout writes it transposed (one store in 256
//! bytes apart per thread: resnet50's training step on an H200 spent 39 ms of GPU time against
//! torch.compile's 11.6, session 27). Laying them out as eager does keeps every kernel's reads
//! and writes in one order, and the convolutions' results are adopted without a copy. The CUDA
//! policy turns this on (`CudaPolicy::channels_last`, off by default: see there why).

use fx::ops::canonical;
use fx::{Arg, Graph, NodeId, NodeKind};

use fx::infer::layout::{channels_last_strides, contiguous_strides};

/// Whether most of the graph's 2-d convolutions (forward `conv2d` calls and the backward's
/// `convolution_backward`) have a channels-last input or weight in eager, so that torch would
/// run them, and the graph around them, channels-last.
pub(crate) fn convolutions_mostly_channels_last(graph: &Graph) -> bool {
    let (mut cl, mut other) = (0, 0);
    for (_, n) in graph.nodes() {
        let NodeKind::Call {
            target,
            args,
            kwargs,
        } = &n.kind
        else {
            continue;
        };
        let operands: [Option<&Arg>; 2] = if target.name().ends_with("convolution_backward.default")
        {
            // (grad_output, input, weight, ...)
            [args.get(1), args.get(2)]
        } else if canonical(target, args, kwargs).is_some_and(|c| c.name == "conv2d") {
            let kw = |k: &str| kwargs.iter().find(|(n, _)| n == k).map(|(_, a)| a);
            [args.first().or(kw("input")), args.get(1).or(kw("weight"))]
        } else {
            continue;
        };
        let is_cl = |a: Option<&Arg>| match a {
            Some(Arg::Node(id)) => is_channels_last(graph, *id),
            _ => false,
        };
        if operands.iter().any(|&a| is_cl(a)) {
            cl += 1;
        } else {
            other += 1;
        }
    }
    cl > 0 && cl >= other
}

/// A 4-d tensor node whose eager strides are channels-last and not also contiguous (a filter
/// or image whose layouts coincide, one channel or one pixel, says nothing).
fn is_channels_last(graph: &Graph, id: NodeId) -> bool {
    let Some(t) = graph.node(id).meta.tensor() else {
        return false;
    };
    let (Some(sizes), Some(strides)) = (t.known_sizes(), t.known_strides()) else {
        return false;
    };
    sizes.len() == 4
        && strides == channels_last_strides(&sizes)
        && strides != contiguous_strides(&sizes)
}
