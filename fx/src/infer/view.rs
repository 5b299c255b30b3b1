//! View ops: results that share the input's storage with new sizes and strides (`view`,
//! `permute`, `transpose`, `unsqueeze`, `squeeze`, `expand`, `narrow`, `select`, `split`, ...), and
//! the ops that are views when the layout allows and copies otherwise (`reshape`, `flatten`,
//! `contiguous`).
//!
//! The strides are the whole point here: a later `view` succeeds or fails on them.

use super::args::shape_str;
use super::layout::{contiguous_strides, is_contiguous};
use super::{invalid, wrap_dim, Call, InferError, InferResult, Spelling, Tensor, Value};
use crate::meta::NodeMeta;

pub(super) fn infer(c: &Call) -> Option<InferResult> {
    if !matches!(c.spelling, Spelling::Torch | Spelling::Method) {
        return None;
    }
    let method = c.spelling == Spelling::Method;
    let r = match c.name {
        "view" if method => view(c, false),
        "reshape" => view(c, true),
        "view_as" | "reshape_as" if method => view_as(c),
        "permute" => permute(c),
        "transpose" | "swapaxes" | "swapdims" => transpose(c),
        "t" => t(c),
        "unsqueeze" => unsqueeze(c),
        "squeeze" => squeeze(c),
        "flatten" => flatten(c),
        "expand" if method => expand(c),
        "expand_as" if method => expand_as(c),
        "contiguous" if method => contiguous(c),
        "narrow" => narrow(c),
        "select" => select_op(c),
        "split" | "chunk" | "unbind" => pieces(c),
        _ => return None,
    };
    Some(r)
}

/// Resolves one `-1` in a requested shape and checks the element count.
pub(crate) fn infer_size(shape: &[i64], numel: i64) -> Result<Vec<i64>, InferError> {
    let mut out = shape.to_vec();
    let mut infer_at = None;
    let mut known = 1i64;
    for (i, &s) in shape.iter().enumerate() {
        if s == -1 {
            if infer_at.is_some() {
                return invalid("only one dimension can be inferred");
            }
            infer_at = Some(i);
        } else if s < 0 {
            return invalid(format!("invalid shape dimension {s}"));
        } else {
            known = known.checked_mul(s).ok_or(InferError::Unsupported)?;
        }
    }
    let bad = || {
        invalid(format!(
            "shape '{}' is invalid for input of size {numel}",
            shape_str(shape)
        ))
    };
    match infer_at {
        Some(i) => {
            if known == 0 {
                return invalid(format!(
                    "cannot reshape tensor of 0 elements into shape {} because the unspecified \
                     dimension size -1 can be any value and is ambiguous",
                    shape_str(shape)
                ));
            }
            if numel % known != 0 {
                return bad();
            }
            out[i] = numel / known;
        }
        None if known != numel => return bad(),
        None => {}
    }
    Ok(out)
}

/// Strides that view (`sizes`, `strides`) as `shape` without copying, if any exist (torch's
/// `computeStride`). The one copy of this rule: the inductor's view lowering calls it too.
///
/// The input splits into chunks of dimensions that are contiguous with one another; a view can
/// regroup dimensions within a chunk but never merge across two chunks.
pub fn view_strides(sizes: &[i64], strides: &[i64], shape: &[i64]) -> Option<Vec<i64>> {
    if sizes.is_empty() {
        return Some(vec![1; shape.len()]);
    }
    let numel: i64 = sizes.iter().product();
    if numel == 0 {
        if sizes == shape {
            return Some(strides.to_vec());
        }
        return Some(contiguous_strides(shape));
    }
    let mut out = vec![0; shape.len()];
    let mut view_d = shape.len() as i64 - 1;
    let mut chunk_base = *strides.last().unwrap();
    let mut tensor_numel = 1i64;
    let mut view_numel = 1i64;
    for d in (0..sizes.len()).rev() {
        tensor_numel *= sizes[d];
        let chunk_ends =
            d == 0 || (sizes[d - 1] != 1 && strides[d - 1] != tensor_numel * chunk_base);
        if chunk_ends {
            while view_d >= 0 && (view_numel < tensor_numel || shape[view_d as usize] == 1) {
                out[view_d as usize] = view_numel * chunk_base;
                view_numel *= shape[view_d as usize];
                view_d -= 1;
            }
            if view_numel != tensor_numel {
                return None;
            }
            if d > 0 {
                chunk_base = strides[d - 1];
                tensor_numel = 1;
                view_numel = 1;
            }
        }
    }
    (view_d == -1).then_some(out)
}

/// Reads a size list given as varargs, one sequence, or `torch.Size`.
fn size_arg(v: Option<&Value>) -> Result<Vec<i64>, InferError> {
    v.and_then(Value::ints).ok_or(InferError::Unsupported)
}

/// Binds `params` whose second parameter is a size or dim list. Only the method spelling
/// takes it spread over the positionals or as one int (`x.reshape(2, 3)`, `x.permute(1, 0)`,
/// `x.reshape(-1)`); torch's functions take one sequence (`torch.reshape(x, -1)` and
/// `torch.permute(x, 1, 0)` raise `TypeError` in eager), so those spellings are left to run
/// natively, where torch raises its own error.
fn bind_size_list(c: &Call, params: &[&'static str]) -> Result<super::args::Bound, InferError> {
    if c.spelling == Spelling::Method {
        return c.bind_varargs(params, 1);
    }
    let b = c.bind(params)?;
    match b.get(params[1]) {
        Some(Value::Seq(_)) => Ok(b),
        _ => Err(InferError::Unsupported),
    }
}

fn view(c: &Call, copy_if_needed: bool) -> InferResult {
    let b = bind_size_list(c, &["input", "shape"])?;
    let x = b.tensor("input")?;
    let shape = size_arg(b.get("shape"))?;
    reshape_to(x, &shape, copy_if_needed)
}

fn reshape_to(x: &Tensor, shape: &[i64], copy_if_needed: bool) -> InferResult {
    let shape = infer_size(shape, x.numel())?;
    match view_strides(&x.sizes, &x.strides, &shape) {
        Some(strides) => Ok(x.view(shape, strides).meta()),
        None if copy_if_needed => Ok(x.fresh(x.dtype, shape, x.requires_grad).meta()),
        None => invalid(
            "view size is not compatible with input tensor's size and stride (at least one \
             dimension spans across two contiguous subspaces). Use .reshape(...) instead.",
        ),
    }
}

fn view_as(c: &Call) -> InferResult {
    let b = c.bind(&["input", "other"])?;
    let x = b.tensor("input")?;
    let other = b.tensor("other")?;
    reshape_to(x, &other.sizes, c.name == "reshape_as")
}

fn permute(c: &Call) -> InferResult {
    let b = bind_size_list(c, &["input", "dims"])?;
    let x = b.tensor("input")?;
    let dims = size_arg(b.get("dims"))?;
    if dims.len() != x.ndim() {
        return invalid(format!(
            "permute(sparse_coo): number of dimensions in the tensor input does not match the \
             length of the desired ordering of dimensions i.e. input.dim() = {} is not equal to \
             len(dims) = {}",
            x.ndim(),
            dims.len()
        ));
    }
    let mut seen = vec![false; x.ndim()];
    let mut sizes = Vec::new();
    let mut strides = Vec::new();
    for d in dims {
        let w = wrap_dim(d, x.ndim())?;
        if seen[w] {
            return invalid("permute(): duplicate dims are not allowed.");
        }
        seen[w] = true;
        sizes.push(x.sizes[w]);
        strides.push(x.strides[w]);
    }
    Ok(x.view(sizes, strides).meta())
}

fn transpose(c: &Call) -> InferResult {
    let (a, b_) = match c.name {
        "swapaxes" => ("axis0", "axis1"),
        "swapdims" => ("dim0", "dim1"),
        _ => ("dim0", "dim1"),
    };
    let b = c.bind(&["input", a, b_])?;
    let x = b.tensor("input")?;
    let d0 = wrap_dim(b.int(a)?, x.ndim())?;
    let d1 = wrap_dim(b.int(b_)?, x.ndim())?;
    let mut y = x.clone();
    if x.ndim() > 0 {
        y.sizes.swap(d0, d1);
        y.strides.swap(d0, d1);
    }
    Ok(y.meta())
}

fn t(c: &Call) -> InferResult {
    let b = c.bind(&["input"])?;
    let x = b.tensor("input")?;
    if x.ndim() > 2 {
        return invalid(format!(
            "t() expects a tensor with <= 2 dimensions, but self is {}D",
            x.ndim()
        ));
    }
    let mut y = x.clone();
    y.sizes.reverse();
    y.strides.reverse();
    Ok(y.meta())
}

fn unsqueeze(c: &Call) -> InferResult {
    let b = c.bind(&["input", "dim"])?;
    let x = b.tensor("input")?;
    let d = wrap_dim(b.int("dim")?, x.ndim() + 1)?;
    Ok(unsqueezed(x, d).meta())
}

/// A unit dimension inserted at `d`, strided so the tensor stays as contiguous as it was.
pub(crate) fn unsqueezed(x: &Tensor, d: usize) -> Tensor {
    let stride = if d >= x.ndim() {
        1
    } else {
        x.sizes[d] * x.strides[d]
    };
    let mut y = x.clone();
    y.sizes.insert(d, 1);
    y.strides.insert(d, stride);
    y
}

fn squeeze(c: &Call) -> InferResult {
    let b = c.bind(&["input", "dim"])?;
    let x = b.tensor("input")?;
    let mut drop = vec![false; x.ndim()];
    match b.opt_dims("dim")? {
        None => drop = x.sizes.iter().map(|&s| s == 1).collect(),
        Some(dims) => {
            for d in dims {
                let w = wrap_dim(d, x.ndim())?;
                if x.ndim() > 0 && x.sizes[w] == 1 {
                    drop[w] = true;
                }
            }
        }
    }
    let keep = |v: &[i64]| -> Vec<i64> {
        v.iter()
            .zip(&drop)
            .filter(|(_, &d)| !d)
            .map(|(&s, _)| s)
            .collect()
    };
    Ok(x.view(keep(&x.sizes), keep(&x.strides)).meta())
}

fn flatten(c: &Call) -> InferResult {
    let b = c.bind(&["input", "start_dim", "end_dim"])?;
    let x = b.tensor("input")?;
    let start = wrap_dim(b.int_or("start_dim", 0)?, x.ndim())?;
    let end = wrap_dim(b.int_or("end_dim", -1)?, x.ndim())?;
    if start > end {
        return invalid("flatten() has invalid args: start_dim cannot come after end_dim");
    }
    if x.ndim() == 0 {
        return reshape_to(x, &[1], true);
    }
    if start == end {
        return Ok(x.clone().meta());
    }
    let mut shape: Vec<i64> = x.sizes[..start].to_vec();
    shape.push(x.sizes[start..=end].iter().product());
    shape.extend_from_slice(&x.sizes[end + 1..]);
    reshape_to(x, &shape, true)
}

fn expand(c: &Call) -> InferResult {
    let b = bind_size_list(c, &["input", "size", "*", "implicit"])?;
    let x = b.tensor("input")?;
    let sizes = size_arg(b.get("size"))?;
    expanded(x, &sizes).map(Tensor::meta)
}

fn expand_as(c: &Call) -> InferResult {
    let b = c.bind(&["input", "other"])?;
    let x = b.tensor("input")?;
    let other = b.tensor("other")?;
    expanded(x, &other.sizes).map(Tensor::meta)
}

/// `x` broadcast to `target` without copying: stretched and new dimensions get stride 0.
pub(crate) fn expanded(x: &Tensor, target: &[i64]) -> Result<Tensor, InferError> {
    let n = target.len();
    if n < x.ndim() {
        return invalid(format!(
            "expand: the number of sizes provided ({n}) must be greater or equal to the number of \
             dimensions in the tensor ({})",
            x.ndim()
        ));
    }
    let mut sizes = vec![0; n];
    let mut strides = vec![0; n];
    for i in (0..n).rev() {
        let offset = n - 1 - i;
        let src = x.ndim() as i64 - 1 - offset as i64;
        let (mut size, mut stride) = if src >= 0 {
            (x.sizes[src as usize], x.strides[src as usize])
        } else if i + 1 < n {
            (1, sizes[i + 1] * strides[i + 1])
        } else {
            // Only a 0-d input gets here: all its expanded strides are 0.
            (1, 0)
        };
        let mut want = target[i];
        if want == -1 {
            if src < 0 {
                return invalid(format!(
                    "The expanded size of the tensor (-1) isn't allowed in a leading, \
                     non-existing dimension {i}"
                ));
            }
            want = size;
        }
        if want < 0 {
            return Err(InferError::Unsupported);
        }
        if size != want {
            if size != 1 {
                return invalid(format!(
                    "The expanded size of the tensor ({want}) must match the existing size \
                     ({size}) at non-singleton dimension {i}.  Target sizes: {}.  Tensor sizes: \
                     {}",
                    shape_str(target),
                    x.shape_str()
                ));
            }
            size = want;
            stride = 0;
        }
        sizes[i] = size;
        strides[i] = stride;
    }
    Ok(x.view(sizes, strides))
}

fn contiguous(c: &Call) -> InferResult {
    let b = c.bind(&["input", "memory_format"])?;
    b.require_absent("memory_format")?;
    let x = b.tensor("input")?;
    if is_contiguous(&x.sizes, &x.strides) {
        return Ok(x.clone().meta());
    }
    Ok(x.fresh(x.dtype, x.sizes.clone(), x.requires_grad).meta())
}

fn narrow(c: &Call) -> InferResult {
    let b = c.bind(&["input", "dim", "start", "length"])?;
    let x = b.tensor("input")?;
    if x.ndim() == 0 {
        return invalid("narrow() cannot be applied to a 0-dim tensor.");
    }
    let d = wrap_dim(b.int("dim")?, x.ndim())?;
    let size = x.sizes[d];
    let mut start = b.int("start")?;
    let length = b.int("length")?;
    if start < -size || start > size {
        return invalid(format!(
            "start out of range (expected to be in range of [{}, {size}], but got {start})",
            -size
        ));
    }
    if start < 0 {
        start += size;
    }
    if length < 0 || start > size - length {
        return invalid(format!(
            "start ({start}) + length ({length}) exceeds dimension size ({size})."
        ));
    }
    let mut y = x.clone();
    y.sizes[d] = length;
    Ok(y.meta())
}

fn select_op(c: &Call) -> InferResult {
    let b = c.bind(&["input", "dim", "index"])?;
    let x = b.tensor("input")?;
    if x.ndim() == 0 {
        return invalid("select() cannot be applied to a 0-dim tensor.");
    }
    let d = wrap_dim(b.int("dim")?, x.ndim())?;
    let index = b.int("index")?;
    selected(x, d, index).map(Tensor::meta)
}

/// The slice of `x` at `index` along `d`, with that dimension removed.
pub(crate) fn selected(x: &Tensor, d: usize, index: i64) -> Result<Tensor, InferError> {
    let size = x.sizes[d];
    if index < -size || index >= size {
        return invalid(format!(
            "select(): index {index} out of range for tensor of size {} at dimension {d}",
            x.shape_str()
        ));
    }
    let mut y = x.clone();
    y.sizes.remove(d);
    y.strides.remove(d);
    Ok(y)
}

/// `split`, `chunk` and `unbind`: a tuple of views along one dimension.
fn pieces(c: &Call) -> InferResult {
    let (second, default_dim) = match c.name {
        "split" => ("split_size_or_sections", 0),
        "chunk" => ("chunks", 0),
        _ => ("dim", 0),
    };
    let params: &[&'static str] = if c.name == "unbind" {
        &["input", "dim"]
    } else if c.name == "split" && c.spelling == Spelling::Method {
        &["input", "split_size", "dim"]
    } else {
        &["input", second, "dim"]
    };
    let b = c.bind(params)?;
    let x = b.tensor("input")?;
    if x.ndim() == 0 {
        return Err(InferError::Unsupported);
    }
    let d = wrap_dim(b.int_or("dim", default_dim)?, x.ndim())?;
    let size = x.sizes[d];
    let lengths: Vec<i64> = match c.name {
        "unbind" => {
            let views = (0..size)
                .map(|i| selected(x, d, i).map(Tensor::meta))
                .collect::<Result<_, _>>()?;
            return Ok(NodeMeta::Tuple(views));
        }
        "chunk" => {
            let chunks = b.int(second)?;
            if chunks <= 0 {
                return invalid(format!(
                    "chunk expects `chunks` to be greater than 0, got: {chunks}"
                ));
            }
            let each = if chunks >= size {
                i64::from(size > 0)
            } else {
                (size + chunks - 1) / chunks
            };
            if each == 0 && size == 0 {
                vec![0; chunks as usize]
            } else {
                split_lengths(size, each)?
            }
        }
        _ => match b.get(params[1]) {
            Some(Value::Int(each)) => split_lengths(size, *each)?,
            Some(v) => {
                let sections = v.ints().ok_or(InferError::Unsupported)?;
                if sections.iter().any(|&s| s < 0) || sections.iter().sum::<i64>() != size {
                    return invalid(format!(
                        "split_with_sizes expects split_sizes to sum exactly to {size} (input \
                         tensor's size at dimension {d}), but got split_sizes={}",
                        shape_str(&sections)
                    ));
                }
                sections
            }
            None => return Err(InferError::Unsupported),
        },
    };
    let views = lengths
        .into_iter()
        .map(|len| {
            let mut y = x.clone();
            y.sizes[d] = len;
            y.meta()
        })
        .collect();
    Ok(NodeMeta::Tuple(views))
}

/// Lengths of `split(each)`: full pieces and a shorter last one; at least one piece.
fn split_lengths(size: i64, each: i64) -> Result<Vec<i64>, InferError> {
    if each < 0 || (each == 0 && size != 0) {
        return invalid(format!(
            "split_size can only be 0 if dimension size is 0, but got dimension size of {size}"
        ));
    }
    if each == 0 {
        return Ok(vec![0]);
    }
    let count = if each >= size {
        1
    } else {
        (size + each - 1) / each
    };
    let mut v = vec![each; count as usize];
    *v.last_mut().unwrap() = each - (each * count - size);
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn view_of_transposed_fails_across_chunks() {
        // (3, 2) transposed from (2, 3): flattening needs a copy.
        assert_eq!(view_strides(&[3, 2], &[1, 3], &[6]), None);
        // Splitting a dimension is always possible.
        assert_eq!(
            view_strides(&[3, 2], &[1, 3], &[3, 2, 1]),
            Some(vec![1, 3, 3])
        );
        assert_eq!(
            view_strides(&[4, 6], &[6, 1], &[2, 2, 3, 2]),
            Some(vec![12, 6, 2, 1])
        );
    }

    #[test]
    fn minus_one() {
        assert_eq!(infer_size(&[-1, 3], 6).unwrap(), vec![2, 3]);
        assert!(infer_size(&[-1, 0], 0).is_err());
        assert!(infer_size(&[-1, -1], 6).is_err());
        assert!(infer_size(&[4], 6).is_err());
    }
}
