//! Matrix products: `matmul` (and `@`) with its vector, matrix and broadcast-batch cases, `mm`,
//! `bmm`, `mv`, `dot`, `addmm`, `linear`.
//!
//! All of them allocate a fresh row-major result, and none promotes: operands must share a dtype.

use super::args::{common_device, shape_str};
use super::layout::{broadcast_shapes, contiguous_strides, is_contiguous};
use super::pointwise::type_name;
use super::{invalid, Call, InferError, InferResult, Spelling, Tensor};
use crate::meta::DType;

pub(super) fn infer(c: &Call) -> Option<InferResult> {
    let r = match (c.spelling, c.name) {
        (Spelling::Operator, "matmul") | (Spelling::Method, "__matmul__") => {
            binary(c, &["input", "other"], false)
        }
        (Spelling::Method, "__rmatmul__") => binary(c, &["input", "other"], true),
        (Spelling::Torch | Spelling::Method, "matmul") => binary(c, &["input", "other"], false),
        (Spelling::Torch | Spelling::Method, "mm") => binary_with(c, &["input", "mat2"], mm),
        (Spelling::Torch | Spelling::Method, "bmm") => binary_with(c, &["input", "mat2"], bmm),
        (Spelling::Torch | Spelling::Method, "mv") => binary_with(c, &["input", "vec"], mv),
        (Spelling::Torch | Spelling::Method, "dot") => binary_with(c, &["input", "tensor"], dot),
        (Spelling::Torch | Spelling::Method, "addmm") => addmm(c),
        (Spelling::Functional | Spelling::Torch, "linear") => linear(c),
        _ => return None,
    };
    Some(r)
}

fn binary(c: &Call, params: &[&'static str], reflected: bool) -> InferResult {
    let b = c.bind(params)?;
    let (mut x, mut y) = (b.tensor(params[0])?, b.tensor(params[1])?);
    if reflected {
        std::mem::swap(&mut x, &mut y);
    }
    let sizes = matmul(x, y)?;
    let strides = matmul_strides(x, y, &sizes).ok_or(InferError::Unsupported)?;
    product_strided(c, &[x, y], sizes, strides)
}

/// Binds two tensors, checks they agree in dtype and device, and builds the result from the
/// shape rule `rule`.
fn binary_with(
    c: &Call,
    params: &[&'static str],
    rule: impl Fn(&Tensor, &Tensor) -> Result<Vec<i64>, InferError>,
) -> InferResult {
    let b = c.bind(params)?;
    let x = b.tensor(params[0])?;
    let y = b.tensor(params[1])?;
    let sizes = rule(x, y)?;
    product(c, &[x, y], sizes)
}

fn product(c: &Call, operands: &[&Tensor], sizes: Vec<i64>) -> InferResult {
    let strides = contiguous_strides(&sizes);
    product_strided(c, operands, sizes, strides)
}

fn product_strided(
    c: &Call,
    operands: &[&Tensor],
    sizes: Vec<i64>,
    strides: Vec<i64>,
) -> InferResult {
    let dtype = same_dtype(operands)?;
    if dtype == DType::Bool {
        // No bool matrix kernels exist; leave the exact error to torch.
        return Err(InferError::Unsupported);
    }
    let device = common_device(operands)?;
    let mut out = operands[0].fresh(dtype, sizes, c.grad(dtype, operands));
    out.device = device;
    out.strides = strides;
    Ok(out.meta())
}

fn same_dtype(operands: &[&Tensor]) -> Result<DType, InferError> {
    let d = operands[0].dtype;
    if let Some(o) = operands.iter().find(|t| t.dtype != d) {
        return invalid(format!(
            "expected m1 and m2 to have the same dtype, but got: {} != {}",
            type_name(d).to_lowercase(),
            type_name(o.dtype).to_lowercase()
        ));
    }
    Ok(d)
}

fn mm(a: &Tensor, b: &Tensor) -> Result<Vec<i64>, InferError> {
    if a.ndim() != 2 {
        return invalid("self must be a matrix");
    }
    if b.ndim() != 2 {
        return invalid("mat2 must be a matrix");
    }
    if a.sizes[1] != b.sizes[0] {
        return invalid(format!(
            "mat1 and mat2 shapes cannot be multiplied ({}x{} and {}x{})",
            a.sizes[0], a.sizes[1], b.sizes[0], b.sizes[1]
        ));
    }
    Ok(vec![a.sizes[0], b.sizes[1]])
}

fn bmm(a: &Tensor, b: &Tensor) -> Result<Vec<i64>, InferError> {
    if a.ndim() != 3 {
        return invalid("batch1 must be a 3D tensor");
    }
    if b.ndim() != 3 {
        return invalid("batch2 must be a 3D tensor");
    }
    if b.sizes[0] != a.sizes[0] || b.sizes[1] != a.sizes[2] {
        return invalid(format!(
            "Expected size for first two dimensions of batch2 tensor to be: [{}, {}] but got: \
             [{}, {}].",
            a.sizes[0], a.sizes[2], b.sizes[0], b.sizes[1]
        ));
    }
    Ok(vec![a.sizes[0], a.sizes[1], b.sizes[2]])
}

fn mv(a: &Tensor, v: &Tensor) -> Result<Vec<i64>, InferError> {
    if a.ndim() != 2 || v.ndim() != 1 {
        return invalid(format!(
            "vector + matrix @ vector expected, got 1, {}, {}",
            a.ndim(),
            v.ndim()
        ));
    }
    if a.sizes[1] != v.sizes[0] {
        return invalid(format!(
            "size mismatch, got input ({}), mat ({}x{}), vec ({})",
            a.sizes[0], a.sizes[0], a.sizes[1], v.sizes[0]
        ));
    }
    Ok(vec![a.sizes[0]])
}

fn dot(a: &Tensor, b: &Tensor) -> Result<Vec<i64>, InferError> {
    if a.ndim() != 1 || b.ndim() != 1 {
        return invalid(format!(
            "1D tensors expected, but got {}D and {}D tensors",
            a.ndim(),
            b.ndim()
        ));
    }
    if a.sizes[0] != b.sizes[0] {
        return invalid(format!(
            "inconsistent tensor size, expected tensor [{}] and src [{}] to have the same number \
             of elements, but got {} and {} elements respectively",
            a.sizes[0], b.sizes[0], a.sizes[0], b.sizes[0]
        ));
    }
    Ok(vec![])
}

/// `matmul`'s cases: vector·vector is a scalar, a vector operand gains and then loses a unit
/// dimension, and dimensions before the last two broadcast as batch dimensions.
fn matmul(a: &Tensor, b: &Tensor) -> Result<Vec<i64>, InferError> {
    let (da, db) = (a.ndim(), b.ndim());
    if da == 0 || db == 0 {
        return invalid(format!(
            "both arguments to matmul need to be at least 1D, but they are {da}D and {db}D"
        ));
    }
    match (da, db) {
        (1, 1) => return dot(a, b),
        (2, 1) => return mv(a, b),
        (1, 2) => {
            return mm(&a.view(vec![1, a.sizes[0]], vec![0, 0]), b).map(|s| vec![s[1]]);
        }
        (2, 2) => return mm(a, b),
        _ => {}
    }
    let n = if da > 1 { Some(a.sizes[da - 2]) } else { None };
    let k1 = a.sizes[da - 1];
    let k2 = if db > 1 { b.sizes[db - 2] } else { b.sizes[0] };
    let p = if db > 1 { Some(b.sizes[db - 1]) } else { None };
    let batch_a = &a.sizes[..da.saturating_sub(2)];
    let batch_b = &b.sizes[..db.saturating_sub(2)];
    let batch = broadcast_shapes(batch_a, batch_b)?;
    if k1 != k2 {
        return invalid(format!(
            "Expected size for first two dimensions of batch2 tensor to be: [{}, {}] but got: \
             [{}, {}].",
            batch.iter().product::<i64>(),
            k1,
            batch.iter().product::<i64>(),
            k2
        ));
    }
    let mut sizes = batch;
    sizes.extend(n);
    sizes.extend(p);
    Ok(sizes)
}

/// Whether `matmul` computes a batched-by-matrix product as one big `mm` over the folded batch
/// (instead of `bmm`). It folds when that needs no copy of the larger operand, or when the
/// smaller operand requires grad (to keep its gradient small); only then can the result come
/// back transposed.
fn folds(a: &Tensor, b: &Tensor) -> bool {
    let a_larger = a.ndim() >= b.ndim();
    let (big, small_ndim, small_grad) = if a_larger {
        (a.clone(), b.ndim(), b.requires_grad)
    } else {
        (transposed_last(b), a.ndim(), a.requires_grad)
    };
    if !(big.ndim() >= 3 && (small_ndim == 1 || small_ndim == 2)) {
        return false;
    }
    if small_grad {
        return true;
    }
    if a.ndim() == 2 {
        return false;
    }
    if big.numel() == 0 {
        return true;
    }
    (0..big.ndim() - 2).all(|i| big.strides[i] == big.strides[i + 1] * big.sizes[i + 1])
}

/// `x.mT`: the last two dimensions swapped.
fn transposed_last(x: &Tensor) -> Tensor {
    let n = x.ndim();
    let mut y = x.clone();
    y.sizes.swap(n - 2, n - 1);
    y.strides.swap(n - 2, n - 1);
    y
}

/// The layout of `matmul`'s result: row-major, except that a folded product with the batched
/// operand on the right is computed transposed and made contiguous only if it is not already.
/// Such a transposed result differs from row-major only in the stride of a unit dimension.
///
/// `None` where eager also computes batched-by-batched products transposed in some cases with
/// gradients (seen with a unit batch on the left) that are not modelled: there a unit matrix
/// dimension makes the stride observable.
fn matmul_strides(a: &Tensor, b: &Tensor, sizes: &[i64]) -> Option<Vec<i64>> {
    let transposed = b.ndim() > a.ndim();
    let folded = folds(a, b);
    if !folded && (a.ndim() >= 3 || b.ndim() >= 3) {
        let unit_matrix_dim = (a.ndim() > 1 && a.sizes[a.ndim() - 2] == 1)
            || (b.ndim() > 1 && b.sizes[b.ndim() - 1] == 1);
        if unit_matrix_dim && (a.requires_grad || b.requires_grad) {
            return None;
        }
    }
    if !(folded && transposed && a.ndim() == 2) {
        return Some(contiguous_strides(sizes));
    }
    // Computed as (..., p, n) row-major, then viewed as (..., n, p).
    let n = sizes.len();
    let mut computed = sizes.to_vec();
    computed.swap(n - 2, n - 1);
    let mut strides = contiguous_strides(&computed);
    strides.swap(n - 2, n - 1);
    Some(if is_contiguous(sizes, &strides) {
        strides
    } else {
        contiguous_strides(sizes)
    })
}

fn addmm(c: &Call) -> InferResult {
    let b = c.bind(&["input", "mat1", "mat2", "*", "beta", "alpha"])?;
    let input = b.tensor("input")?;
    let m1 = b.tensor("mat1")?;
    let m2 = b.tensor("mat2")?;
    b.number_or("beta", 1.0)?;
    b.number_or("alpha", 1.0)?;
    let sizes = mm(m1, m2)?;
    let target = broadcast_shapes(&input.sizes, &sizes)?;
    if target != sizes {
        return invalid(format!(
            "The expanded size of the tensor ({}) must match the existing size ({}) at \
             non-singleton dimension 1.  Target sizes: {}.  Tensor sizes: {}",
            sizes[1],
            input.sizes.last().copied().unwrap_or(1),
            shape_str(&sizes),
            input.shape_str()
        ));
    }
    product(c, &[m1, m2, input], sizes)
}

/// `linear(x, w, b)` is `x @ w.T + b`, with `w` of shape (out, in) or (in,).
fn linear(c: &Call) -> InferResult {
    let b = c.bind(&["input", "weight", "bias"])?;
    let x = b.tensor("input")?;
    let w = b.tensor("weight")?;
    let bias = b.opt_tensor("bias")?;
    if x.ndim() == 0 || w.ndim() == 0 || w.ndim() > 2 {
        return Err(InferError::Unsupported);
    }
    let wt = if w.ndim() == 2 {
        w.view(
            vec![w.sizes[1], w.sizes[0]],
            vec![w.strides[1], w.strides[0]],
        )
    } else {
        w.clone()
    };
    let sizes = matmul(x, &wt).map_err(|_| {
        InferError::Invalid(format!(
            "mat1 and mat2 shapes cannot be multiplied ({}x{} and {}x{})",
            x.sizes[..x.ndim() - 1].iter().product::<i64>(),
            x.sizes[x.ndim() - 1],
            wt.sizes[0],
            wt.sizes.get(1).copied().unwrap_or(1)
        ))
    })?;
    let mut operands = vec![x, w];
    if let Some(bias) = bias {
        let target = broadcast_shapes(&bias.sizes, &sizes)?;
        if target != sizes {
            return invalid(format!(
                "The size of tensor a ({}) must match the size of tensor b ({}) at non-singleton \
                 dimension {}",
                bias.sizes.last().copied().unwrap_or(1),
                sizes.last().copied().unwrap_or(1),
                sizes.len().saturating_sub(1)
            ));
        }
        operands.push(bias);
    }
    product(c, &operands, sizes)
}
