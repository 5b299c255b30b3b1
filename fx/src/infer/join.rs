//! Joining tensors: `cat` (and its aliases) and `stack`. Both promote their inputs' dtypes and
//! allocate a row-major result, except that 4-d/5-d inputs may make torch pick channels-last,
//! which is left to torch.

use super::args::{common_device, shape_str};
use super::layout::is_contiguous;
use super::promote::Promotion;
use super::{invalid, wrap_dim, Call, InferError, InferResult, Spelling, Tensor, Value};

pub(super) fn infer(c: &Call) -> Option<InferResult> {
    if c.spelling != Spelling::Torch {
        return None;
    }
    let r = match c.name {
        "cat" | "concat" | "concatenate" => join(c, false),
        "stack" => join(c, true),
        _ => return None,
    };
    Some(r)
}

fn join(c: &Call, stack: bool) -> InferResult {
    let params: &[&'static str] = if c.name == "concatenate" {
        &["tensors", "axis"]
    } else {
        &["tensors", "dim"]
    };
    let b = c.bind(params)?;
    let dim = b.int_or(params[1], 0)?;
    let tensors: Vec<&Tensor> = match b.get("tensors") {
        Some(Value::Seq(items)) => items
            .iter()
            .map(|v| v.tensor().ok_or(InferError::Unsupported))
            .collect::<Result<_, _>>()?,
        _ => return Err(InferError::Unsupported),
    };
    let (sizes, layout_rank) = if stack {
        (
            stack_sizes(&tensors, dim)?,
            tensors.first().map_or(0, |t| t.ndim() + 1),
        )
    } else {
        let sizes = cat_sizes(&tensors, dim)?;
        (sizes.clone(), sizes.len())
    };
    if matches!(layout_rank, 4 | 5) && !tensors.iter().all(|t| is_contiguous(&t.sizes, &t.strides))
    {
        return Err(InferError::Unsupported);
    }
    let mut p = Promotion::new(c.ctx.default_dtype);
    tensors
        .iter()
        .for_each(|t| p.tensor(t.dtype, t.ndim().max(1)));
    let dtype = p.result()?.ok_or(InferError::Unsupported)?;
    let device = common_device(&tensors)?;
    let mut out = tensors[0].fresh(dtype, sizes, c.grad(dtype, &tensors));
    out.device = device;
    Ok(out.meta())
}

/// `cat` sizes. 1-d empty tensors are skipped (a legacy allowance for `torch.empty(0)`).
fn cat_sizes(tensors: &[&Tensor], dim: i64) -> Result<Vec<i64>, InferError> {
    if tensors.is_empty() {
        return invalid("torch.cat(): expected a non-empty list of Tensors");
    }
    if let Some(i) = tensors.iter().position(|t| t.ndim() == 0) {
        return invalid(format!(
            "zero-dimensional tensor (at position {i}) cannot be concatenated"
        ));
    }
    let skip = |t: &Tensor| t.ndim() == 1 && t.sizes[0] == 0;
    let Some(first) = tensors.iter().position(|t| !skip(t)) else {
        return Ok(vec![0]);
    };
    let reference = tensors[first];
    let d = wrap_dim(dim, reference.ndim())?;
    let mut sizes = reference.sizes.clone();
    sizes[d] = 0;
    for (i, t) in tensors.iter().enumerate() {
        if skip(t) {
            continue;
        }
        if t.ndim() != reference.ndim() {
            return invalid(format!(
                "Tensors must have same number of dimensions: got {} and {}",
                reference.ndim(),
                t.ndim()
            ));
        }
        for k in 0..t.ndim() {
            if k != d && t.sizes[k] != reference.sizes[k] {
                return invalid(format!(
                    "Sizes of tensors must match except in dimension {d}. Expected size {} but \
                     got size {} for tensor number {i} in the list.",
                    reference.sizes[k], t.sizes[k]
                ));
            }
        }
        sizes[d] += t.sizes[d];
    }
    Ok(sizes)
}

fn stack_sizes(tensors: &[&Tensor], dim: i64) -> Result<Vec<i64>, InferError> {
    let Some(first) = tensors.first() else {
        return invalid("stack expects a non-empty TensorList");
    };
    let d = wrap_dim(dim, first.ndim() + 1)?;
    for (i, t) in tensors.iter().enumerate() {
        if t.sizes != first.sizes {
            return invalid(format!(
                "stack expects each tensor to be equal size, but got {} at entry 0 and {} at \
                 entry {i}",
                first.shape_str(),
                shape_str(&t.sizes)
            ));
        }
    }
    let mut sizes = first.sizes.clone();
    sizes.insert(d, tensors.len() as i64);
    Ok(sizes)
}
