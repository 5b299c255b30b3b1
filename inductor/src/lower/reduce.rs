//! Reductions and the composites built on them: sum/mean/prod/amax/amin/all/any, var/std (two-pass:
//! mean first, then squared deviations, which is stable where the one-pass formula is not),
//! logsumexp, softmax/log_softmax (max subtraction), layer_norm and rms_norm.

use fx::{Arg, DType};

use super::args::{bind, fallback, wrap_dim, LResult, Reject};
use super::value::contiguous_strides_sym;
use super::value::TensorVal;
use super::{LValue, Lowerer};
use crate::index::Idx;
use crate::ir::{BinOp, BodyBuilder, BufKind, IrNode, ReduceOp, Scalar, UnOp, ValId};
use crate::size::Size;

/// Normalizes a `dim` argument: `None` and `[]` mean every dim.
fn reduce_dims(dims: Option<Vec<i64>>, ndim: usize) -> LResult<Vec<usize>> {
    let mut out = match dims {
        None => (0..ndim).collect(),
        Some(d) if d.is_empty() => (0..ndim).collect(),
        Some(d) => d
            .iter()
            .map(|&x| wrap_dim(x, ndim))
            .collect::<LResult<Vec<_>>>()?,
    };
    out.sort();
    let n = out.len();
    out.dedup();
    if out.len() != n {
        return fallback("repeated dim");
    }
    if ndim == 0 {
        out.clear();
    }
    Ok(out)
}

/// Reduces `t` over `dims` with `op`, accumulating and storing in `dtype`.
/// Always writes a buffer: a reduction result is read by every element of its row.
pub fn reduce(
    l: &mut Lowerer,
    t: &TensorVal,
    dims: &[usize],
    keepdim: bool,
    op: ReduceOp,
    dtype: DType,
) -> TensorVal {
    let kept: Vec<usize> = (0..t.ndim()).filter(|d| !dims.contains(d)).collect();
    let sizes: Vec<Size> = kept.iter().map(|&d| t.sizes[d]).collect();
    let rsizes: Vec<Size> = dims.iter().map(|&d| t.sizes[d]).collect();
    let mut ranges = sizes.clone();
    ranges.extend(rsizes.iter().copied());
    let mut b = BodyBuilder::new(ranges);
    let vars = b.vars();
    let mut idx = vec![Idx::constant(0); t.ndim()];
    for (i, &d) in kept.iter().enumerate() {
        idx[d] = vars[i].clone();
    }
    for (i, &d) in dims.iter().enumerate() {
        idx[d] = vars[kept.len() + i].clone();
    }
    let v = t.load(&mut b, &idx);
    // Arg reductions compare the values themselves; the others accumulate in `dtype`.
    let v = if op.is_arg() { v } else { b.cast(v, dtype) };
    let strides = contiguous_strides_sym(&sizes);
    let out =
        l.ir.add_buffer(dtype, sizes.clone(), strides.clone(), BufKind::Computed);
    l.ir.nodes.push(IrNode::Reduction {
        out,
        sizes: sizes.clone(),
        rsizes,
        op,
        body: b.finish(v),
    });
    let r = TensorVal::buffer(out, dtype, sizes, strides);
    if keepdim {
        keep(&r, dims)
    } else {
        r
    }
}

/// Re-inserts reduced dims as size 1.
fn keep(r: &TensorVal, dims: &[usize]) -> TensorVal {
    let mut r = r.clone();
    for &d in dims {
        r = r.unsqueeze(d);
    }
    r
}

/// The dtype a composite computes in: float for half-precision inputs (torch's `opmath_type`), so
/// a softmax or layer_norm of float16 rounds once, at its result.
fn opmath(d: DType) -> DType {
    match d {
        DType::Float16 | DType::BFloat16 => DType::Float32,
        d => d,
    }
}

/// `t` converted to `d` (lazily: the conversion fuses into the consumer).
fn to_dtype(t: TensorVal, d: DType) -> LResult<TensorVal> {
    if t.dtype == d {
        return Ok(t);
    }
    super::elementwise::pointwise(&[super::elementwise::Operand::T(t)], d, d, |_, v| v[0])
}

fn numel_of(t: &TensorVal, dims: &[usize]) -> Size {
    dims.iter().map(|&d| t.sizes[d]).product()
}

/// The element count `n` as a float value in a kernel: a constant's literal (a static graph's
/// C is unchanged), a symbolic count computed in C from the size.
fn size_value(b: &mut BodyBuilder, n: Size, d: DType) -> ValId {
    match n.as_const() {
        Some(c) => b.constant(Scalar::F(c as f64), d),
        None => {
            let i = b.index_value(Idx::constant(n));
            b.cast(i, d)
        }
    }
}

/// `t / n` for an element count `n`: a multiplication by the literal `1 / n` when `n` is a
/// constant (as before), a division by the count computed in C when it is symbolic.
fn div_by_count(l: &Lowerer, t: &TensorVal, n: Size) -> LResult<TensorVal> {
    if let Some(c) = n.as_const() {
        return scale(l, t, 1.0 / c as f64);
    }
    super::elementwise::pointwise(
        &[super::elementwise::Operand::T(t.clone())],
        t.dtype,
        t.dtype,
        move |b, v| {
            let c = size_value(b, n, b.dtype(v[0]));
            b.binary(BinOp::Div, v[0], c)
        },
    )
}

fn scale(l: &Lowerer, t: &TensorVal, k: f64) -> LResult<TensorVal> {
    let _ = l;
    super::elementwise::pointwise(
        &[super::elementwise::Operand::T(t.clone())],
        t.dtype,
        t.dtype,
        move |b, v| {
            let c = b.constant(Scalar::F(k), b.dtype(v[0]));
            b.binary(BinOp::Mul, v[0], c)
        },
    )
}

pub fn mean(
    l: &mut Lowerer,
    t: &TensorVal,
    dims: &[usize],
    keepdim: bool,
    dtype: DType,
) -> LResult<TensorVal> {
    if !dtype.is_floating_point() {
        return fallback("mean of a non-float tensor");
    }
    let n = numel_of(t, dims);
    if n == 0 {
        return fallback("mean of empty");
    }
    let acc = opmath(dtype);
    let s = reduce(
        l,
        &to_dtype(t.clone(), acc)?,
        dims,
        keepdim,
        ReduceOp::Sum,
        acc,
    );
    to_dtype(div_by_count(l, &s, n)?, dtype)
}

/// Variance with `correction`, two-pass. Returns (var, mean) with reduced dims kept, in `acc`
/// (a float dtype at least as wide as the input's [`opmath`]).
fn variance(
    l: &mut Lowerer,
    t: &TensorVal,
    dims: &[usize],
    correction: f64,
    acc: DType,
) -> LResult<(TensorVal, TensorVal)> {
    if !t.dtype.is_floating_point() {
        return fallback("variance of a non-float tensor");
    }
    let n = numel_of(t, dims);
    if n == 0 {
        return fallback("variance of empty");
    }
    let d = acc;
    let t = &to_dtype(t.clone(), d)?;
    use super::elementwise::{pointwise, Operand};
    // The mean is taken of the data shifted by its first element (`pivot + sum(x - pivot) / n`):
    // exact for constant rows, whose variance is then exactly 0 (as torch's Welford pass gives;
    // layer_norm's rsqrt(var + eps) would magnify a 1-ulp mean error a hundredfold), and more
    // accurate when the values sit far from 0.
    let mut pivot = t.clone();
    for &k in dims {
        pivot = pivot.slice(k, Size::Const(0), Size::Const(1), 1);
    }
    let shifted = pointwise(
        &[Operand::T(t.clone()), Operand::T(pivot.clone())],
        d,
        d,
        |b, v| b.binary(BinOp::Sub, v[0], v[1]),
    )?;
    let s = reduce(l, &shifted, dims, true, ReduceOp::Sum, d);
    let mean = pointwise(&[Operand::T(pivot), Operand::T(s)], d, d, move |b, v| {
        let m = match n.as_const() {
            Some(n) => {
                let c = b.constant(Scalar::F(1.0 / n as f64), d);
                b.binary(BinOp::Mul, v[1], c)
            }
            None => {
                let c = size_value(b, n, d);
                b.binary(BinOp::Div, v[1], c)
            }
        };
        b.binary(BinOp::Add, v[0], m)
    })?;
    let dev = pointwise(
        &[Operand::T(t.clone()), Operand::T(mean.clone())],
        d,
        d,
        |b, v| {
            let x = b.binary(BinOp::Sub, v[0], v[1]);
            b.binary(BinOp::Mul, x, x)
        },
    )?;
    let ss = reduce(l, &dev, dims, true, ReduceOp::Sum, d);
    // A symbolic count is at least 2: `n - correction` is positive for corrections up to 1.
    if !n.is_const() && !(0.0..=1.0).contains(&correction) {
        return fallback(
            "symbolic sizes: variance with a correction past 1 needs a concrete count",
        );
    }
    let var =
        super::elementwise::pointwise(&[super::elementwise::Operand::T(ss)], d, d, move |b, v| {
            let c = match n.as_const() {
                Some(n) => b.constant(Scalar::F((n as f64 - correction).max(0.0)), d),
                None => {
                    let n = size_value(b, n, d);
                    let k = b.constant(Scalar::F(correction), d);
                    b.binary(BinOp::Sub, n, k)
                }
            };
            b.binary(BinOp::Div, v[0], c)
        })?;
    Ok((var, mean))
}

fn squeeze_dims(t: &TensorVal, dims: &[usize], keepdim: bool) -> TensorVal {
    if keepdim {
        t.clone()
    } else {
        t.squeeze_dims(dims)
    }
}

pub fn reduction_call(
    l: &mut Lowerer,
    n: &str,
    a: &[Arg],
    kw: &[(String, Arg)],
) -> LResult<LValue> {
    let x = l.tensor(
        a.first()
            .ok_or_else(|| Reject::Fallback("no input".into()))?,
    )?;
    let out = |t: TensorVal| Ok(LValue::Tensor(t));
    match n {
        "sum" | "mean" | "prod" => {
            let b = bind(&["input", "dim", "keepdim", "*", "dtype"], a, kw)?;
            let dims = reduce_dims(b.dims("dim")?, x.ndim())?;
            if n == "prod" && b.get("dim").is_some() && b.dims("dim")?.map(|d| d.len()) != Some(1) {
                return fallback("prod over several dims");
            }
            let keepdim = b.bool_or("keepdim", false)?;
            let dtype = match b.dtype("dtype")? {
                Some(d) => d,
                None if n != "mean" && !x.dtype.is_floating_point() => DType::Int64,
                None => x.dtype,
            };
            if !l.target.supports_dtype(dtype) {
                return fallback("reduction dtype");
            }
            match n {
                "mean" => out(mean(l, &x, &dims, keepdim, dtype)?),
                "sum" => out(reduce(l, &x, &dims, keepdim, ReduceOp::Sum, dtype)),
                _ => out(reduce(l, &x, &dims, keepdim, ReduceOp::Prod, dtype)),
            }
        }
        "argmax" | "argmin" => {
            let b = bind(&["input", "dim", "keepdim"], a, kw)?;
            let keepdim = b.bool_or("keepdim", false)?;
            let dims = match b.get("dim") {
                None if keepdim => return fallback("argmax over all dims with keepdim"),
                None => (0..x.ndim()).collect::<Vec<_>>(),
                Some(_) => reduce_dims(b.dims("dim")?, x.ndim())?,
            };
            if x.dtype == DType::Bool || numel_of(&x, &dims) == 0 {
                return fallback(format!("{n} of bool or over an empty dim (torch raises)"));
            }
            let op = if n == "argmax" {
                ReduceOp::ArgMax
            } else {
                ReduceOp::ArgMin
            };
            out(reduce(l, &x, &dims, keepdim, op, DType::Int64))
        }
        "amax" | "amin" | "max" | "min" | "all" | "any" => {
            let (dims, keepdim) = match n {
                "max" | "min" => {
                    if a.len() == 2 && kw.is_empty() {
                        if let LValue::Tensor(_) = l.value(&a[1])? {
                            let op = if n == "max" { BinOp::Max } else { BinOp::Min };
                            return super::elementwise::binary(l, &a[0], &a[1], op)
                                .map(LValue::Tensor);
                        }
                    }
                    if a.len() > 1 || !kw.is_empty() {
                        // `max(input, dim, keepdim=False)`: (values, indices).
                        let b = bind(&["input", "dim", "keepdim"], a, kw)?;
                        let dims = vec![wrap_dim(b.int_or("dim", 0)?, x.ndim())?];
                        let keepdim = b.bool_or("keepdim", false)?;
                        let dims = if x.ndim() == 0 { vec![] } else { dims };
                        if x.dtype == DType::Bool || numel_of(&x, &dims) == 0 {
                            return fallback(format!("{n} of bool or over an empty dim"));
                        }
                        let (vop, iop) = if n == "max" {
                            (ReduceOp::Max, ReduceOp::ArgMax)
                        } else {
                            (ReduceOp::Min, ReduceOp::ArgMin)
                        };
                        let v = reduce(l, &x, &dims, keepdim, vop, x.dtype);
                        let i = reduce(l, &x, &dims, keepdim, iop, DType::Int64);
                        return Ok(LValue::Tuple(vec![LValue::Tensor(v), LValue::Tensor(i)]));
                    }
                    ((0..x.ndim()).collect::<Vec<_>>(), false)
                }
                _ => {
                    let b = bind(&["input", "dim", "keepdim"], a, kw)?;
                    (
                        reduce_dims(b.dims("dim")?, x.ndim())?,
                        b.bool_or("keepdim", false)?,
                    )
                }
            };
            if numel_of(&x, &dims) == 0 && !matches!(n, "all" | "any") {
                return fallback("max/min of an empty dimension raises");
            }
            let (op, dtype) = match n {
                "amax" | "max" => (ReduceOp::Max, x.dtype),
                "amin" | "min" => (ReduceOp::Min, x.dtype),
                "all" => (ReduceOp::Min, DType::Bool),
                _ => (ReduceOp::Max, DType::Bool),
            };
            let r = reduce(l, &x, &dims, keepdim, op, dtype);
            // torch answers `all`/`any` of uint8 in uint8, as 0 or 1 (the truth of the bool
            // reduction, not the min or max of the values).
            if x.dtype == DType::UInt8 && matches!(n, "all" | "any") {
                return out(to_dtype(r, DType::UInt8)?);
            }
            out(r)
        }
        "var" | "std" => {
            // var(input, dim=None, *, correction=1, keepdim=False), plus the legacy
            // var(input, unbiased) and var(input, dim, unbiased, keepdim) forms.
            let b = if matches!(a.get(1), Some(Arg::Bool(_))) {
                bind(&["input", "unbiased", "*", "correction"], a, kw)?
            } else {
                bind(
                    &["input", "dim", "unbiased", "keepdim", "*", "correction"],
                    a,
                    kw,
                )?
            };
            let dims = reduce_dims(b.dims("dim")?, x.ndim())?;
            let keepdim = b.bool_or("keepdim", false)?;
            let correction = match (b.get("correction"), b.get("unbiased")) {
                (Some(_), Some(_)) => return fallback("both correction and unbiased"),
                (Some(_), None) => b.float_or("correction", 1.0)?,
                (None, Some(_)) => b.bool_or("unbiased", true)? as i64 as f64,
                (None, None) => 1.0,
            };
            // torch's CPU `var`/`std` accumulate in double for every float dtype (a Welford
            // pass): a float32 or float16 row holding values near the dtype's maximum has a
            // finite variance there, whose squares would overflow in float.
            let (var, _) = variance(l, &x, &dims, correction, DType::Float64)?;
            let r = if n == "std" {
                let d = var.dtype;
                super::elementwise::pointwise(
                    &[super::elementwise::Operand::T(var)],
                    d,
                    d,
                    |b, v| b.unary(UnOp::Sqrt, v[0]),
                )?
            } else {
                var
            };
            out(squeeze_dims(&to_dtype(r, x.dtype)?, &dims, keepdim))
        }
        "logsumexp" => {
            let b = bind(&["input", "dim", "keepdim"], a, kw)?;
            let dims = reduce_dims(
                Some(
                    b.dims("dim")?
                        .ok_or_else(|| Reject::Fallback("no dim".into()))?,
                ),
                x.ndim(),
            )?;
            let keepdim = b.bool_or("keepdim", false)?;
            if !x.dtype.is_floating_point() || numel_of(&x, &dims) == 0 {
                return fallback("logsumexp of ints or empty");
            }
            let out_dtype = x.dtype;
            let x = to_dtype(x, opmath(out_dtype))?;
            let m = reduce(l, &x, &dims, true, ReduceOp::Max, x.dtype);
            // An infinite max would give inf - inf; torch substitutes 0 for it.
            let m = super::elementwise::pointwise(
                &[super::elementwise::Operand::T(m)],
                x.dtype,
                x.dtype,
                |b, v| {
                    let a = b.unary(UnOp::Abs, v[0]);
                    let inf = b.constant(Scalar::F(f64::INFINITY), b.dtype(v[0]));
                    let isinf = b.binary(BinOp::Eq, a, inf);
                    let z = b.constant(Scalar::F(0.0), b.dtype(v[0]));
                    b.where_(isinf, z, v[0])
                },
            )?;
            let e = shifted(&x, &m, UnOp::Exp)?;
            let s = reduce(l, &e, &dims, true, ReduceOp::Sum, x.dtype);
            let r = super::elementwise::pointwise(
                &[
                    super::elementwise::Operand::T(s),
                    super::elementwise::Operand::T(m),
                ],
                x.dtype,
                x.dtype,
                |b, v| {
                    let lg = b.unary(UnOp::Log, v[0]);
                    b.binary(BinOp::Add, lg, v[1])
                },
            )?;
            out(squeeze_dims(&to_dtype(r, out_dtype)?, &dims, keepdim))
        }
        _ => fallback(format!("no lowering for {n}")),
    }
}

/// `f(x - m)` with `m` broadcast.
fn shifted(x: &TensorVal, m: &TensorVal, f: UnOp) -> LResult<TensorVal> {
    use super::elementwise::{pointwise, Operand};
    pointwise(
        &[Operand::T(x.clone()), Operand::T(m.clone())],
        x.dtype,
        x.dtype,
        move |b, v| {
            let d = b.binary(BinOp::Sub, v[0], v[1]);
            b.unary(f, d)
        },
    )
}

/// softmax / log_softmax along `dim`, with the row max subtracted first.
pub fn softmax(
    l: &mut Lowerer,
    x: &Arg,
    dim: i64,
    dtype: Option<DType>,
    log: bool,
) -> LResult<TensorVal> {
    use super::elementwise::{pointwise, Operand};
    let mut x = l.tensor(x)?;
    if let Some(d) = dtype {
        x = pointwise(&[Operand::T(x)], d, d, |_, v| v[0])?;
    }
    if !x.dtype.is_floating_point() {
        return fallback("softmax of a non-float tensor");
    }
    let out_dtype = x.dtype;
    let x = to_dtype(x, opmath(out_dtype))?;
    // A 0-d tensor reduces over no dims (its softmax is 1, as in torch).
    let dims: Vec<usize> = if x.ndim() == 0 {
        wrap_dim(dim, 0)?;
        vec![]
    } else {
        vec![wrap_dim(dim, x.ndim())?]
    };
    // Over an empty dim the result is empty too: the kernels run no iterations.
    let m = reduce(l, &x, &dims, true, ReduceOp::Max, x.dtype);
    let mut e = shifted(&x, &m, UnOp::Exp)?;
    // Over the last dim, `exp(x - max)` is written once to a row-local array that the sum and
    // the normalization both read (instead of two exps per element); the kernel's rows keep
    // it out of memory.
    // A symbolic row has no proved upper bound: on the CPU it is kept in a per-thread heap
    // array sized at run time (`codegen::plan::scratch_buffers`); CUDA keeps no such row.
    let row = dims.first().map_or(Some(1), |&d| x.sizes[d].as_const());
    let kept = match row {
        Some(row) => row <= l.target.scratch_max() && row > 1,
        None => l.target.cpu().is_some(),
    };
    if !log && dims == [x.ndim().saturating_sub(1)] && kept {
        e = l.realize(&e);
    }
    let s = reduce(l, &e, &dims, true, ReduceOp::Sum, x.dtype);
    let r = if log {
        pointwise(
            &[Operand::T(x), Operand::T(m), Operand::T(s)],
            e.dtype,
            e.dtype,
            |b, v| {
                let d = b.binary(BinOp::Sub, v[0], v[1]);
                let lg = b.unary(UnOp::Log, v[2]);
                b.binary(BinOp::Sub, d, lg)
            },
        )
    } else {
        // `e * (1 / sum)`, as eager's vectorized softmax computes it (the reciprocal is
        // loop-invariant: one division per row, not per element).
        pointwise(&[Operand::T(e), Operand::T(s)], x.dtype, x.dtype, |b, v| {
            let r = b.unary(UnOp::Reciprocal, v[1]);
            b.binary(BinOp::Mul, v[0], r)
        })
    }?;
    to_dtype(r, out_dtype)
}

fn trailing_dims(x: &TensorVal, shape: &[Size]) -> LResult<Vec<usize>> {
    let k = shape.len();
    if k == 0 || k > x.ndim() || x.sizes[x.ndim() - k..] != *shape {
        return fallback("normalized_shape does not match the input");
    }
    Ok((x.ndim() - k..x.ndim()).collect())
}

fn affine(
    l: &Lowerer,
    y: TensorVal,
    weight: Option<&Arg>,
    bias: Option<&Arg>,
) -> LResult<TensorVal> {
    use super::elementwise::{pointwise, Operand};
    let mut ops = vec![Operand::T(y.clone())];
    for a in [weight, bias].into_iter().flatten() {
        let w = l.tensor(a)?;
        if opmath(w.dtype) != y.dtype {
            return fallback("normalization weight of another dtype");
        }
        ops.push(Operand::T(w));
    }
    let (hw, hb) = (weight.is_some(), bias.is_some());
    let d = y.dtype;
    pointwise(&ops, d, d, move |b, v| {
        let mut r = v[0];
        let mut k = 1;
        if hw {
            r = b.binary(BinOp::Mul, r, v[k]);
            k += 1;
        }
        if hb {
            r = b.binary(BinOp::Add, r, v[k]);
        }
        r
    })
}

pub fn layer_norm(
    l: &mut Lowerer,
    x: &Arg,
    shape: &[Size],
    weight: Option<&Arg>,
    bias: Option<&Arg>,
    eps: f64,
) -> LResult<TensorVal> {
    use super::elementwise::{pointwise, Operand};
    let x = l.tensor(x)?;
    let dims = trailing_dims(&x, shape)?;
    let out_dtype = x.dtype;
    let (var, mean) = variance(l, &x, &dims, 0.0, opmath(x.dtype))?;
    let d = var.dtype;
    let y = pointwise(
        &[Operand::T(x), Operand::T(mean), Operand::T(var)],
        d,
        d,
        move |b, v| {
            let e = b.constant(Scalar::F(eps), d);
            let ve = b.binary(BinOp::Add, v[2], e);
            let r = b.unary(UnOp::Rsqrt, ve);
            let c = b.binary(BinOp::Sub, v[0], v[1]);
            b.binary(BinOp::Mul, c, r)
        },
    )?;
    to_dtype(affine(l, y, weight, bias)?, out_dtype)
}

pub fn rms_norm(
    l: &mut Lowerer,
    x: &Arg,
    shape: &[Size],
    weight: Option<&Arg>,
    eps: Option<f64>,
) -> LResult<TensorVal> {
    use super::elementwise::{pointwise, Operand};
    let x = l.tensor(x)?;
    let dims = trailing_dims(&x, shape)?;
    let out_dtype = x.dtype;
    let d = opmath(x.dtype);
    let x = to_dtype(x, d)?;
    // torch's default: the epsilon of the compute dtype.
    let eps = eps.unwrap_or(match d {
        DType::Float32 => f32::EPSILON as f64,
        DType::Float64 => f64::EPSILON,
        _ => return fallback("rms_norm dtype"),
    });
    let sq = pointwise(&[Operand::T(x.clone())], d, d, |b, v| {
        b.binary(BinOp::Mul, v[0], v[0])
    })?;
    let ms = mean(l, &sq, &dims, true, d)?;
    let y = pointwise(&[Operand::T(x), Operand::T(ms)], d, d, move |b, v| {
        let e = b.constant(Scalar::F(eps), d);
        let s = b.binary(BinOp::Add, v[1], e);
        let r = b.unary(UnOp::Rsqrt, s);
        b.binary(BinOp::Mul, v[0], r)
    })?;
    to_dtype(affine(l, y, weight, None)?, out_dtype)
}

/// `F.batch_norm` with running statistics and `training=False` (inference). As eager's CPU
/// kernel does, per channel `alpha = w / sqrt(var + eps)` and `beta = b - mean * alpha` are
/// computed once (two tiny buffers), then `x * alpha + beta` is a pointwise op that fuses with
/// its neighbours (the ReLU and residual add after a convolution). Training mode updates the
/// running statistics in place and stays a fallback.
#[allow(clippy::too_many_arguments)]
pub fn batch_norm(
    l: &mut Lowerer,
    x: &Arg,
    mean: Option<&Arg>,
    var: Option<&Arg>,
    weight: Option<&Arg>,
    bias: Option<&Arg>,
    training: bool,
    eps: f64,
) -> LResult<TensorVal> {
    use super::elementwise::{pointwise, Operand};
    if training {
        return fallback("batch_norm in training mode");
    }
    let (Some(mean), Some(var)) = (mean, var) else {
        return fallback("batch_norm without running statistics");
    };
    let x = l.tensor(x)?;
    if x.ndim() < 2 || !x.dtype.is_floating_point() {
        return fallback("batch_norm input rank or dtype");
    }
    let c = x.sizes[1];
    let d = opmath(x.dtype);
    let mut params = vec![l.tensor(mean)?, l.tensor(var)?];
    for a in [weight, bias].into_iter().flatten() {
        params.push(l.tensor(a)?);
    }
    for p in &params {
        if p.sizes != [c] || !p.dtype.is_floating_point() || opmath(p.dtype) != d {
            return fallback("batch_norm parameter of another shape or dtype");
        }
    }
    let (hw, hb) = (weight.is_some(), bias.is_some());
    let ops: Vec<Operand> = params.iter().cloned().map(Operand::T).collect();
    let alpha = pointwise(&ops, d, d, move |b, v| {
        let e = b.constant(Scalar::F(eps), d);
        let s = b.binary(BinOp::Add, v[1], e);
        let s = b.unary(UnOp::Sqrt, s);
        let one = b.constant(Scalar::F(1.0), d);
        let inv = b.binary(BinOp::Div, one, s);
        if hw {
            b.binary(BinOp::Mul, inv, v[2])
        } else {
            inv
        }
    })?;
    let alpha = l.realize(&alpha);
    let mut ops = vec![Operand::T(params[0].clone()), Operand::T(alpha.clone())];
    if hb {
        ops.push(Operand::T(params[params.len() - 1].clone()));
    }
    let beta = pointwise(&ops, d, d, move |b, v| {
        let m = b.binary(BinOp::Mul, v[0], v[1]);
        if hb {
            b.binary(BinOp::Sub, v[2], m)
        } else {
            let z = b.constant(Scalar::F(0.0), d);
            b.binary(BinOp::Sub, z, m)
        }
    })?;
    let beta = l.realize(&beta);
    // [C] → [C, 1, ..., 1], so that it broadcasts along dim 1 of x.
    let mut shape = vec![c];
    shape.resize(x.ndim() - 1, Size::Const(1));
    let out = x.dtype;
    pointwise(
        &[
            Operand::T(x),
            Operand::T(alpha.reshape(&shape)),
            Operand::T(beta.reshape(&shape)),
        ],
        d,
        out,
        |b, v| {
            let m = b.binary(BinOp::Mul, v[0], v[1]);
            b.binary(BinOp::Add, m, v[2])
        },
    )
}
