//! Convolution and 2-d pooling: `conv2d`, `max_pool2d`, `adaptive_avg_pool2d`.
//!
//! These allocate fresh outputs whose layout torch picks from the inputs' *suggested* memory
//! format (channels-last when the strides look channels-last), not from their exact strides. Only
//! batched 4-d, non-empty, floating inputs are modelled; the rest (unbatched inputs, string
//! padding, zero-size tensors, argument errors) is left to meta tensors.

use super::args::common_device;
use super::layout::{channels_last_strides, contiguous_strides};
use super::{Bound, Call, InferError, InferResult, Spelling, Tensor, Value};

pub(super) fn infer(c: &Call) -> Option<InferResult> {
    if !matches!(c.spelling, Spelling::Torch | Spelling::Functional) {
        return None;
    }
    let r = match c.name {
        "conv2d" => conv2d(c),
        "max_pool2d" => max_pool2d(c),
        "adaptive_avg_pool2d" if c.spelling == Spelling::Functional => adaptive_avg_pool2d(c),
        _ => return None,
    };
    Some(r)
}

/// torch's `is_channels_last_strides_2d`: whether a 4-d tensor's strides order its dimensions
/// N, H, W, C. Ambiguous layouts (size-1 dimensions with tied strides) fall back to row-major,
/// as torch's do, so this is not `is_channels_last_contiguous`.
fn strides_like_channels_last(sizes: &[i64], strides: &[i64]) -> bool {
    if sizes.len() != 4 || strides[1] == 0 {
        return false;
    }
    let mut min = 0;
    for d in [1, 3, 2, 0] {
        if sizes[d] == 0 || strides[d] < min || (d == 0 && min == strides[1]) {
            return false;
        }
        min = strides[d];
        if sizes[d] > 1 {
            min *= sizes[d];
        }
    }
    true
}

/// `Tensor.suggest_memory_format() == torch.channels_last`.
fn suggests_channels_last(t: &Tensor) -> bool {
    strides_like_channels_last(&t.sizes, &t.strides)
}

/// [`suggests_channels_last`] of a tensor's metadata (known sizes and strides only).
pub(crate) fn meta_suggests_channels_last(m: &crate::meta::TensorMeta) -> bool {
    match (m.known_sizes(), m.known_strides()) {
        (Some(sizes), Some(strides)) => strides_like_channels_last(&sizes, &strides),
        _ => false,
    }
}

/// A fresh 4-d output in channels-last or row-major order. Zero-size outputs are never asked
/// for (torch's channels-last strides of those differ from `channels_last_strides`).
fn fresh_4d(x: &Tensor, sizes: Vec<i64>, channels_last: bool, grad: bool) -> Tensor {
    let strides = if channels_last {
        channels_last_strides(&sizes)
    } else {
        contiguous_strides(&sizes)
    };
    Tensor {
        dtype: x.dtype,
        device: x.device.clone(),
        sizes,
        strides,
        requires_grad: grad,
    }
}

/// A batched, non-empty, floating 4-d input: the only kind modelled here.
fn batched_input<'b>(b: &'b Bound, name: &str) -> Result<&'b Tensor, InferError> {
    let x = b.tensor(name)?;
    if x.ndim() != 4 || x.numel() == 0 || !x.dtype.is_floating_point() {
        return Err(InferError::Unsupported);
    }
    Ok(x)
}

/// An `int[2]` parameter: one int for both spatial dims, or two ints (or, where `one_ok`, a
/// single-element sequence, which pooling expands to both).
fn pair(v: Option<&Value>, default: [i64; 2], one_ok: bool) -> Result<[i64; 2], InferError> {
    let Some(v) = v else { return Ok(default) };
    match v {
        Value::Int(i) => Ok([*i, *i]),
        Value::Seq(_) => match v.ints().ok_or(InferError::Unsupported)?[..] {
            [a, b] => Ok([a, b]),
            [a] if one_ok => Ok([a, a]),
            _ => Err(InferError::Unsupported),
        },
        _ => Err(InferError::Unsupported),
    }
}

fn conv2d(c: &Call) -> InferResult {
    let b = c.bind(&[
        "input", "weight", "bias", "stride", "padding", "dilation", "groups",
    ])?;
    let x = batched_input(&b, "input")?;
    let w = b.tensor("weight")?;
    let bias = b.opt_tensor("bias")?;
    let stride = pair(b.get("stride"), [1, 1], false)?;
    // `padding="same"` / `"valid"` is not modelled.
    let padding = pair(b.get("padding"), [0, 0], false)?;
    let dilation = pair(b.get("dilation"), [1, 1], false)?;
    let groups = b.int_or("groups", 1)?;
    if w.ndim() != 4 || w.numel() == 0 || w.dtype != x.dtype {
        return Err(InferError::Unsupported);
    }
    let cout = w.sizes[0];
    if groups < 1 || x.sizes[1] != w.sizes[1] * groups || cout % groups != 0 {
        return Err(InferError::Unsupported);
    }
    if let Some(bias) = bias {
        if bias.sizes != [cout] || bias.dtype != x.dtype {
            return Err(InferError::Unsupported);
        }
    }
    if stride.iter().any(|&s| s < 1) || dilation.iter().any(|&d| d < 1) {
        return Err(InferError::Unsupported);
    }
    if padding.iter().any(|&p| p < 0) {
        return Err(InferError::Unsupported);
    }
    let mut sizes = vec![x.sizes[0], cout];
    for i in 0..2 {
        let span = x.sizes[2 + i] + 2 * padding[i] - dilation[i] * (w.sizes[2 + i] - 1) - 1;
        if span < 0 {
            return Err(InferError::Unsupported);
        }
        sizes.push(span / stride[i] + 1);
    }
    let tensors: Vec<&Tensor> = [Some(x), Some(w), bias].into_iter().flatten().collect();
    common_device(&tensors)?;
    if x.device.kind != "cpu" {
        // Other devices pick layouts by their own backends.
        return Err(InferError::Unsupported);
    }
    // oneDNN and the native CPU kernels both go channels-last when either operand suggests it.
    let cl = suggests_channels_last(x) || suggests_channels_last(w);
    Ok(fresh_4d(x, sizes, cl, c.grad(x.dtype, &tensors)).meta())
}

/// torch's `pooling_output_shape`: floor (or ceil) division, where a ceil-mode window must
/// still start inside the padded-left input.
fn pooled_size(input: i64, kernel: i64, pad: i64, stride: i64, dilation: i64, ceil: bool) -> i64 {
    let extra = if ceil { stride - 1 } else { 0 };
    let mut out = (input + 2 * pad - dilation * (kernel - 1) - 1 + extra).div_euclid(stride) + 1;
    if ceil && (out - 1) * stride >= input + pad {
        out -= 1;
    }
    out
}

fn max_pool2d(c: &Call) -> InferResult {
    let params = match c.spelling {
        Spelling::Functional => crate::ops::schema::F_MAX_POOL2D,
        _ => crate::ops::schema::MAX_POOL2D,
    };
    let b = c.bind(params)?;
    let x = batched_input(&b, "input")?;
    let kernel = pair(b.get("kernel_size"), [0, 0], true)?;
    let stride = match b.get("stride") {
        Some(Value::Seq(s)) if s.is_empty() => kernel,
        v => pair(v, kernel, true)?,
    };
    let padding = pair(b.get("padding"), [0, 0], true)?;
    let dilation = pair(b.get("dilation"), [1, 1], true)?;
    let ceil = b.bool_or("ceil_mode", false)?;
    if params.contains(&"return_indices") && b.bool_or("return_indices", false)? {
        return Err(InferError::Unsupported);
    }
    let valid = (0..2).all(|i| {
        kernel[i] > 0
            && stride[i] > 0
            && dilation[i] > 0
            && padding[i] >= 0
            && padding[i] <= kernel[i] / 2
    });
    if !valid || x.device.kind != "cpu" {
        return Err(InferError::Unsupported);
    }
    let mut sizes = x.sizes[..2].to_vec();
    for i in 0..2 {
        let n = pooled_size(
            x.sizes[2 + i],
            kernel[i],
            padding[i],
            stride[i],
            dilation[i],
            ceil,
        );
        if n < 1 {
            return Err(InferError::Unsupported);
        }
        sizes.push(n);
    }
    let grad = c.grad(x.dtype, &[x]);
    Ok(fresh_4d(x, sizes, suggests_channels_last(x), grad).meta())
}

fn adaptive_avg_pool2d(c: &Call) -> InferResult {
    let b = c.bind(&["input", "output_size"])?;
    let x = batched_input(&b, "input")?;
    // `None` entries (keep that input size) are not modelled.
    let out = pair(b.get("output_size"), [0, 0], true)?;
    if out.iter().any(|&n| n < 1) || x.device.kind != "cpu" {
        return Err(InferError::Unsupported);
    }
    let sizes = vec![x.sizes[0], x.sizes[1], out[0], out[1]];
    let grad = c.grad(x.dtype, &[x]);
    Ok(fresh_4d(x, sizes, suggests_channels_last(x), grad).meta())
}

#[cfg(test)]
mod tests {
    use crate::graph::{Arg, Graph, Target};
    use crate::infer::infer;
    use crate::meta::{DType, Device, Dim, NodeMeta, TensorMeta};

    fn node(g: &mut Graph, name: &str, sizes: &[i64], strides: &[i64]) -> Arg {
        let mut m = TensorMeta::contiguous(DType::Float32, Device::cpu(), sizes);
        m.strides = strides.iter().map(|&s| Dim::Known(s)).collect();
        Arg::Node(g.placeholder(name, NodeMeta::Tensor(m)))
    }

    fn strides(r: crate::infer::InferResult) -> Vec<i64> {
        r.expect("answered natively")
            .tensor()
            .unwrap()
            .known_strides()
            .unwrap()
    }

    /// The resnet18 stem and block shapes are answered natively, in both layouts: these are
    /// the calls that made tracing slow when they went through meta tensors.
    #[test]
    fn resnet_shapes_are_answered() {
        let contiguous: &[i64] = &[200704, 3136, 56, 1];
        let channels_last: &[i64] = &[200704, 1, 3584, 64];
        for (x_strides, cl) in [(contiguous, false), (channels_last, true)] {
            let mut g = Graph::new();
            let x = node(&mut g, "x", &[8, 64, 56, 56], x_strides);
            let w = node(&mut g, "w", &[64, 64, 3, 3], &[576, 9, 3, 1]);
            let v = node(&mut g, "v", &[64], &[1]);
            let f = |n: &str| Target::Function(n.into());
            let pad = [("padding".to_string(), Arg::Int(1))];
            let conv = strides(infer(
                &g,
                &f("torch.nn.functional.conv2d"),
                &[x.clone(), w],
                &pad,
            ));
            assert_eq!(conv, x_strides);
            let bn = [x.clone(), v.clone(), v.clone(), v.clone(), v];
            assert_eq!(
                strides(infer(&g, &f("torch.nn.functional.batch_norm"), &bn, &[])),
                x_strides
            );
            let pool = strides(infer(
                &g,
                &f("torch.nn.functional.max_pool2d"),
                &[x.clone(), Arg::Int(3), Arg::Int(2), Arg::Int(1)],
                &[],
            ));
            assert_eq!(pool[1], if cl { 1 } else { 784 });
            let avg = strides(infer(
                &g,
                &f("torch.nn.functional.adaptive_avg_pool2d"),
                &[x, Arg::Tuple(vec![Arg::Int(1), Arg::Int(1)])],
                &[],
            ));
            assert_eq!(avg, if cl { [64, 1, 64, 64] } else { [64, 1, 1, 1] });
        }
    }
}
