//! Neural-network building blocks: `softmax`/`log_softmax`, `layer_norm`, `batch_norm`,
//! `dropout`. (`linear` lives with the matrix products, convolution and pooling in `conv`.)

use super::args::shape_str;
use super::layout::{channels_last_strides, is_channels_last_contiguous, is_contiguous};
use super::layout::{elementwise_strides, preserved_strides};
use super::{invalid, wrap_dim, Call, InferError, InferResult, Spelling, Tensor};

pub(super) fn infer(c: &Call) -> Option<InferResult> {
    let r = match c.name {
        "softmax" | "log_softmax" if c.spelling != Spelling::Operator => softmax(c),
        "layer_norm" if matches!(c.spelling, Spelling::Torch | Spelling::Functional) => {
            layer_norm(c)
        }
        "batch_norm" if matches!(c.spelling, Spelling::Torch | Spelling::Functional) => {
            batch_norm(c)
        }
        "dropout" if matches!(c.spelling, Spelling::Torch | Spelling::Functional) => dropout(c),
        "cross_entropy" | "nll_loss" if c.spelling == Spelling::Functional => class_loss(c),
        "_transformer_encoder_layer_fwd" if c.spelling == Spelling::Torch => encoder_layer(c),
        _ => return None,
    };
    Some(r)
}

/// `torch._transformer_encoder_layer_fwd`, `nn.TransformerEncoderLayer`'s inference fast path
/// (eval, no gradient, `batch_first`): torch registers no meta kernel for it, so without this
/// rule every such layer broke the graph. Its result is a fresh tensor of `src`'s sizes and
/// dtype (a padded `src` with a key-padding mask too; a nested `src` is never traced).
fn encoder_layer(c: &Call) -> InferResult {
    let b = c.bind(&[
        "src",
        "embed_dim",
        "num_heads",
        "qkv_weight",
        "qkv_bias",
        "proj_weight",
        "proj_bias",
        "use_gelu",
        "norm_first",
        "eps",
        "norm_weight_1",
        "norm_bias_1",
        "norm_weight_2",
        "norm_bias_2",
        "ffn_weight_1",
        "ffn_bias_1",
        "ffn_weight_2",
        "ffn_bias_2",
        "mask",
        "mask_type",
    ])?;
    let x = b.tensor("src")?;
    if x.ndim() != 3 || !x.dtype.is_floating_point() {
        return Err(InferError::Unsupported);
    }
    let mut operands = vec![x];
    for name in ["qkv_weight", "proj_weight", "ffn_weight_1", "ffn_weight_2"] {
        operands.push(b.tensor(name)?);
    }
    super::args::common_device(&operands)?;
    Ok(
        x.fresh(x.dtype, x.sizes.clone(), c.grad(x.dtype, &operands))
            .meta(),
    )
}

fn softmax(c: &Call) -> InferResult {
    let params: &[&'static str] = match c.spelling {
        Spelling::Functional => &["input", "dim", "_stacklevel", "dtype"],
        _ => &["input", "dim", "dtype"],
    };
    let b = c.bind(params)?;
    let x = b.tensor("input")?;
    let dim = match b.opt_int("dim")? {
        Some(d) => d,
        // The functional form's deprecated implicit dim.
        None if c.spelling == Spelling::Functional => {
            if matches!(x.ndim(), 0 | 1 | 3) {
                0
            } else {
                1
            }
        }
        None => return Err(InferError::Unsupported),
    };
    wrap_dim(dim, x.ndim())?;
    let dtype = match b.dtype("dtype")? {
        Some(d) => d,
        None => x.dtype,
    };
    if !dtype.is_floating_point() {
        return Err(InferError::Unsupported);
    }
    let grad = c.grad(dtype, &[x]);
    Ok(x.fresh(dtype, x.sizes.clone(), grad).meta())
}

/// `F.cross_entropy` / `F.nll_loss` over class indices (`input` `[N, C, d...]` or `[C]`,
/// `target` `[N, d...]` or `[]`) or, for `cross_entropy`, class probabilities (`target` the
/// input's sizes): the input's dtype, the target's sizes with `reduction="none"` (the input's
/// without the class dim for probabilities), else a scalar. Needed natively for training
/// under autocast, which casts the input to float32 (`fx::autodiff::autocast` checks the
/// cast's dtype here). Shapes torch rejects, the legacy `size_average`/`reduce` and other
/// forms are left to torch's own run.
fn class_loss(c: &Call) -> InferResult {
    let params = crate::ops::CROSS_ENTROPY_PARAMS;
    // `nll_loss` takes the same parameters but `label_smoothing`.
    let params = if c.name == "cross_entropy" {
        params
    } else {
        &params[..params.len() - 1]
    };
    let b = c.bind(params)?;
    let x = b.tensor("input")?;
    let t = b.tensor("target")?;
    let weight = b.opt_tensor("weight")?;
    for legacy in ["size_average", "reduce"] {
        if !matches!(b.get(legacy), None | Some(super::args::Value::None)) {
            return Err(InferError::Unsupported);
        }
    }
    b.int_or("ignore_index", -100)?;
    if c.name == "cross_entropy" {
        b.number_or("label_smoothing", 0.0)?;
    }
    if !x.dtype.is_floating_point() || x.ndim() == 0 {
        return Err(InferError::Unsupported);
    }
    let batched = x.ndim() >= 2;
    let per_item: Vec<i64> = if t.dtype.is_floating_point() {
        // Probabilities: cross_entropy only, the target as large as the input.
        if c.name != "cross_entropy" || t.sizes != x.sizes || t.dtype != x.dtype {
            return Err(InferError::Unsupported);
        }
        let class = usize::from(batched);
        let mut s = x.sizes.clone();
        s.remove(class);
        s
    } else {
        let mut want = x.sizes.clone();
        want.remove(usize::from(batched));
        if t.dtype != crate::meta::DType::Int64 || t.sizes != want {
            return Err(InferError::Unsupported);
        }
        want
    };
    let sizes = match b.str("reduction")?.unwrap_or("mean") {
        "none" => per_item,
        "mean" | "sum" => vec![],
        _ => return Err(InferError::Unsupported),
    };
    let mut inputs = vec![x];
    inputs.extend(weight);
    let grad = c.grad(x.dtype, &inputs);
    Ok(x.fresh(x.dtype, sizes, grad).meta())
}

fn layer_norm(c: &Call) -> InferResult {
    let params: &[&'static str] = match c.spelling {
        Spelling::Functional => &["input", "normalized_shape", "weight", "bias", "eps"],
        _ => &[
            "input",
            "normalized_shape",
            "weight",
            "bias",
            "eps",
            "cudnn_enable",
        ],
    };
    let b = c.bind(params)?;
    let x = b.tensor("input")?;
    let shape = b.ints("normalized_shape")?;
    let weight = b.opt_tensor("weight")?;
    let bias = b.opt_tensor("bias")?;
    b.number_or("eps", 1e-5)?;
    if shape.is_empty() {
        return invalid(
            "Expected normalized_shape to be at least 1-dimensional, i.e., containing at least \
             one element, but got normalized_shape = []",
        );
    }
    for (what, t) in [("weight", weight), ("bias", bias)] {
        if let Some(t) = t {
            if t.sizes != shape {
                return invalid(format!(
                    "Expected {what} to be of same shape as normalized_shape, but got {what} of \
                     shape {} and normalized_shape = {}",
                    t.shape_str(),
                    shape_str(&shape)
                ));
            }
        }
    }
    if x.ndim() < shape.len() || x.sizes[x.ndim() - shape.len()..] != shape[..] {
        let stars: Vec<String> = shape.iter().map(i64::to_string).collect();
        return invalid(format!(
            "Given normalized_shape={}, expected input with shape [*, {}], but got input of size{}",
            shape_str(&shape),
            stars.join(", "),
            x.shape_str()
        ));
    }
    if !x.dtype.is_floating_point() {
        return Err(InferError::Unsupported);
    }
    let params: Vec<&Tensor> = [weight, bias].into_iter().flatten().collect();
    if params.iter().any(|p| p.dtype != x.dtype) {
        // Mixed precision is accepted on some devices only; leave it to torch.
        return Err(InferError::Unsupported);
    }
    let devices: Vec<&Tensor> = std::iter::once(x).chain(params.iter().copied()).collect();
    super::args::common_device(&devices)?;
    Ok(x.fresh(x.dtype, x.sizes.clone(), c.grad(x.dtype, &devices))
        .meta())
}

/// Inference-mode and training-mode batch norm alike: the output has the input's sizes; only
/// the statistics differ, and they are not returned.
fn batch_norm(c: &Call) -> InferResult {
    let params = match c.spelling {
        Spelling::Functional => crate::ops::schema::F_BATCH_NORM,
        _ => crate::ops::schema::BATCH_NORM,
    };
    let b = c.bind(params)?;
    let x = b.tensor("input")?;
    let training = match (c.spelling, b.get("training")) {
        (_, Some(super::Value::Bool(t))) => *t,
        (Spelling::Functional, None) => false,
        _ => return Err(InferError::Unsupported),
    };
    if c.spelling == Spelling::Torch {
        // Every parameter of `torch.batch_norm` is required.
        for p in ["momentum", "eps", "cudnn_enabled"] {
            b.get(p).ok_or(InferError::Unsupported)?;
        }
    }
    if let Some(m) = b.get("momentum") {
        m.number().ok_or(InferError::Unsupported)?;
    }
    b.number_or("eps", 1e-5)?;
    let stats = [b.opt_tensor("running_mean")?, b.opt_tensor("running_var")?];
    let affine = [b.opt_tensor("weight")?, b.opt_tensor("bias")?];
    // Without running statistics only batch statistics can normalise; a per-channel
    // reduction over one value is torch's "more than 1 value per channel" error.
    let stats_ok = if training {
        x.ndim() >= 2 && x.numel() / x.sizes[1].max(1) > 1
    } else {
        stats.iter().all(Option::is_some)
    };
    if x.ndim() < 2 || x.numel() == 0 || !x.dtype.is_floating_point() || !stats_ok {
        return Err(InferError::Unsupported);
    }
    let per_channel = |t: &&Tensor| t.sizes == [x.sizes[1]] && t.dtype == x.dtype;
    // Mixed-precision parameters and misshaped ones are torch's to judge; running statistics
    // that require grad are written in place or ignored by autograd, neither modelled.
    if !stats
        .iter()
        .flatten()
        .all(|t| per_channel(t) && !t.requires_grad)
        || !affine.iter().flatten().all(per_channel)
    {
        return Err(InferError::Unsupported);
    }
    let mut tensors: Vec<&Tensor> = vec![x];
    tensors.extend(stats.iter().chain(&affine).flatten());
    super::args::common_device(&tensors)?;
    if x.device.kind != "cpu" {
        return Err(InferError::Unsupported);
    }
    let grad_inputs: Vec<&Tensor> = std::iter::once(x)
        .chain(affine.into_iter().flatten())
        .collect();
    let grad = c.grad(x.dtype, &grad_inputs);
    batch_norm_output(x, grad)
}

/// Eager CPU writes a row-major output unless the input is exactly channels-last dense
/// (size-1 dimensions ignored, unlike `suggest_memory_format` which conv and pooling use); a
/// row-major reading wins ties. 5-d inputs may be channels-last-3d, which is not modelled.
fn batch_norm_output(x: &Tensor, grad: bool) -> InferResult {
    let mut y = x.fresh(x.dtype, x.sizes.clone(), grad);
    let contiguous = is_contiguous(&x.sizes, &x.strides);
    match x.ndim() {
        4 if !contiguous && is_channels_last_contiguous(&x.sizes, &x.strides) => {
            y.strides = channels_last_strides(&x.sizes);
        }
        2..=4 => {}
        _ if contiguous => {}
        _ => return Err(InferError::Unsupported),
    }
    Ok(y.meta())
}

fn dropout(c: &Call) -> InferResult {
    let params: &[&'static str] = match c.spelling {
        Spelling::Functional => &["input", "p", "training", "inplace"],
        _ => &["input", "p", "train"],
    };
    let b = c.bind(params)?;
    let x = b.tensor("input")?;
    let default_p = if c.spelling == Spelling::Functional {
        Some(0.5)
    } else {
        None
    };
    let p = match (b.get("p"), default_p) {
        (Some(v), _) => v.number().ok_or(InferError::Unsupported)?,
        (None, Some(p)) => p,
        (None, None) => return Err(InferError::Unsupported),
    };
    let train = match c.spelling {
        Spelling::Functional => b.bool_or("training", true)?,
        _ => b
            .get("train")
            .and_then(|v| match v {
                super::Value::Bool(t) => Some(*t),
                _ => None,
            })
            .ok_or(InferError::Unsupported)?,
    };
    let inplace = params.contains(&"inplace") && b.bool_or("inplace", false)?;
    if !(0.0..=1.0).contains(&p) {
        return invalid(format!(
            "dropout probability has to be between 0 and 1, but got {p}"
        ));
    }
    // Not training, nothing dropped, or written in place: the input itself comes back.
    if inplace || !train || p == 0.0 || x.numel() == 0 {
        return Ok(x.clone().meta());
    }
    if !x.dtype.is_floating_point() || x.device.kind != "cpu" {
        return Err(InferError::Unsupported);
    }
    // Eager multiplies the input by a noise tensor (or, for p = 1, by a zero scalar) laid out
    // like the input.
    let strides = if p == 1.0 {
        elementwise_strides(&x.sizes, &[(&x.sizes, &x.strides), (&[], &[])])
    } else {
        let noise = preserved_strides(&x.sizes, &x.strides);
        elementwise_strides(&x.sizes, &[(&x.sizes, &x.strides), (&x.sizes, &noise)])
    };
    let mut y = x.view(x.sizes.clone(), strides);
    y.requires_grad = c.grad(x.dtype, &[x]);
    Ok(y.meta())
}
