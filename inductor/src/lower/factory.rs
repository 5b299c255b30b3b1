//! Factory ops with no tensor input to read: `arange`, the constant fills `zeros` / `ones` /
//! `full` with their `new_*` and `*_like` forms, and `torch.tensor` of empty data. Each is a
//! lazy tensor whose value is a function of the index alone, so it fuses into its readers (a
//! causal mask's `arange(T)[:, None] <= arange(T)[None, :]` becomes one comparison of two loop
//! indices) instead of a torch call and a buffer per call.
//!
//! The result dtype is the node's metadata dtype (what the tracer's meta run gave): torch's
//! defaults (the default float dtype, an integer `arange`, `full`'s inference from the fill
//! value, `new_*` from `self`) are not written again here.

use std::rc::Rc;

use fx::{Arg, DType};

use super::args::{fallback, LResult, Reject};
use super::value::TensorVal;
use super::{LValue, Lowerer};
use crate::index::Idx;
use crate::ir::{BinOp, Scalar};
use crate::size::Size;

/// A Python number argument (a start, end, step or fill value).
fn number(l: &Lowerer, a: &Arg) -> LResult<Scalar> {
    match l.value(a)? {
        LValue::Scalar(s) => Ok(s),
        _ => fallback("a factory argument is not a number"),
    }
}

/// The node's dtype, which every factory result takes.
fn result_dtype(l: &Lowerer) -> LResult<DType> {
    let d = l
        .node_dtype
        .ok_or_else(|| Reject::Fallback("factory result of unknown dtype".into()))?;
    if !l.target.supports_dtype(d) {
        return fallback(format!("factory of dtype {d:?}"));
    }
    Ok(d)
}

/// Keywords a factory may carry besides its values: placement on the graph's device (a node
/// on another device is already a fallback, see `Lowerer::off_device`) and the default layout.
fn check_keywords(kw: &[(String, Arg)], values: &[&str]) -> LResult<()> {
    for (k, v) in kw {
        match k.as_str() {
            "dtype" | "device" => {}
            "layout"
                if matches!(v, Arg::None)
                    || matches!(v, Arg::TorchAttr(s) if s == "torch.strided") => {}
            "pin_memory" | "requires_grad" if matches!(v, Arg::None | Arg::Bool(false)) => {}
            k if values.contains(&k) => {}
            _ => return fallback(format!("factory keyword {k}")),
        }
    }
    Ok(())
}

/// `torch.arange(end)`, `(start, end)`, `(start, end, step)`: element `i` is `start + i*step`,
/// computed in int64 for an integer result and in double for a floating one (torch's CPU
/// kernel accumulates in double), then stored in the result dtype.
pub fn arange(l: &mut Lowerer, a: &[Arg], kw: &[(String, Arg)]) -> LResult<TensorVal> {
    check_keywords(kw, &["start", "end", "step"])?;
    let kwarg = |k: &str| kw.iter().find(|(n, _)| n == k).map(|(_, v)| v);
    let (start, end, step) = match (a, kwarg("start"), kwarg("end"), kwarg("step")) {
        ([e], None, None, s) => (None, e, s),
        ([s, e], None, None, st) => (Some(s), e, st),
        ([s, e, st], None, None, None) => (Some(s), e, Some(st)),
        ([], s, Some(e), st) => (s, e, st),
        _ => return fallback("arange arguments"),
    };
    // A bound that is a symbolic int (`arange(T)`, `arange(n - 1, -1, -1)` walking a sequence
    // backwards) with a constant integer step: the length is fx's metadata (its shape rule
    // guards the span positive), element `i` the index expression `start + i*step`.
    let size_or = |v: Option<&Arg>, d: i64| match v {
        None => Some(Size::Const(d)),
        Some(v) => l.size_arg(v),
    };
    if let (Some(s), Some(e), Some(Size::Const(st))) =
        (size_or(start, 0), l.size_arg(end), size_or(step, 1))
    {
        if st != 0 && (matches!(s, Size::Sym(_)) || matches!(e, Size::Sym(_))) {
            let out = result_dtype(l)?;
            let Some(&[len]) = l.node_sizes.as_deref() else {
                return fallback("symbolic sizes: an arange whose length fx did not infer");
            };
            return Ok(TensorVal::lazy(
                out,
                vec![len],
                3,
                Rc::new(move |b, idx| {
                    let v = b.index_value(Idx::constant(s).add(&idx[0].scale(st)));
                    b.cast(v, out)
                }),
            ));
        }
    }
    let start = start
        .map(|v| number(l, v))
        .transpose()?
        .unwrap_or(Scalar::I(0));
    let step = step
        .map(|v| number(l, v))
        .transpose()?
        .unwrap_or(Scalar::I(1));
    let out = result_dtype(l)?;
    let end = number(l, end)?;
    let all_int = [start, end, step]
        .iter()
        .all(|s| matches!(s, Scalar::I(_) | Scalar::B(_)));
    let len = if all_int {
        let (s, e, st) = (
            start.as_f64() as i64,
            end.as_f64() as i64,
            step.as_f64() as i64,
        );
        if st == 0 {
            return fallback("arange with step 0 (torch raises)");
        }
        // ceil((e - s) / st) in integers, for either sign of the step.
        let (span, st) = if st > 0 { (e - s, st) } else { (s - e, -st) };
        (span + st - 1).div_euclid(st).max(0)
    } else {
        if !out.is_floating_point() {
            // torch casts start and step to the integer dtype first; not modelled.
            return fallback("integer arange from float arguments");
        }
        let (s, e, st) = (start.as_f64(), end.as_f64(), step.as_f64());
        if st == 0.0 || !s.is_finite() || !e.is_finite() {
            return fallback("arange with step 0 or an infinite bound (torch raises)");
        }
        ((e - s) / st).ceil().max(0.0) as i64
    };
    let compute = if all_int && !out.is_floating_point() {
        DType::Int64
    } else {
        DType::Float64
    };
    if !l.target.supports_dtype(compute) {
        return fallback(format!("arange computed in {compute:?}"));
    }
    Ok(arange_values(out, Size::Const(len), start, step, compute))
}

/// `start + i * step` for `i` in `0..len`, computed in `compute`, stored as `out`.
fn arange_values(out: DType, len: Size, start: Scalar, step: Scalar, compute: DType) -> TensorVal {
    TensorVal::lazy(
        out,
        vec![len],
        3,
        Rc::new(move |b, idx| {
            let i = b.index_value(idx[0].clone());
            let i = b.cast(i, compute);
            let st = b.constant(step, compute);
            let s = b.constant(start, compute);
            let v = b.binary(BinOp::Mul, i, st);
            let v = b.binary(BinOp::Add, s, v);
            b.cast(v, out)
        }),
    )
}

/// A tensor of `sizes` holding `value` everywhere.
fn constant(dtype: DType, sizes: Vec<Size>, value: Scalar) -> TensorVal {
    TensorVal::lazy(
        dtype,
        sizes,
        1,
        Rc::new(move |b, _| b.constant(value, dtype)),
    )
}

/// The sizes argument of a factory: varargs or one sequence, from `a[skip..]` or `size=`
/// (symbolic ints among them: `torch.ones(T, T)`).
fn sizes(l: &Lowerer, a: &[Arg], kw: &[(String, Arg)], skip: usize) -> LResult<Vec<Size>> {
    let s = match (
        kw.iter().find(|(k, _)| k == "size"),
        &a[skip.min(a.len())..],
    ) {
        (Some((_, v)), []) => l.size_list(v),
        (None, [v @ (Arg::Tuple(_) | Arg::List(_))]) => l.size_list(v),
        (None, rest) if !rest.is_empty() => rest.iter().map(|x| l.size_arg(x)).collect(),
        _ => None,
    };
    let s = s.ok_or_else(|| Reject::Fallback("factory sizes are not ints".into()))?;
    if s.iter().any(|d| d.as_const().is_some_and(|d| d < 0)) {
        return fallback("negative factory size (torch raises)");
    }
    Ok(s)
}

/// `zeros` / `ones` / `full` (`torch.*`), `new_zeros` / `new_ones` / `new_full` (methods of a
/// tensor whose dtype they default to) and `zeros_like` / `ones_like` / `full_like`.
pub fn fill(l: &mut Lowerer, name: &str, a: &[Arg], kw: &[(String, Arg)]) -> LResult<TensorVal> {
    let dtype = result_dtype(l)?;
    let kw_value = kw.iter().find(|(k, _)| k == "fill_value").map(|(_, v)| v);
    let rest: Vec<(String, Arg)> = kw
        .iter()
        .filter(|(k, _)| k != "fill_value" && k != "size" && k != "memory_format")
        .cloned()
        .collect();
    check_keywords(&rest, &[])?;
    let with_value = name.ends_with("full") || name.ends_with("full_like");
    // Positional layout: `[self,] size..., [fill_value]` or `input, [fill_value]`.
    let (sizes, value) = if name.ends_with("_like") {
        let x = l.tensor(
            a.first()
                .ok_or_else(|| Reject::Fallback("no input".into()))?,
        )?;
        if let Some((_, f)) = kw.iter().find(|(k, _)| k == "memory_format") {
            if !matches!(f, Arg::TorchAttr(s) if s == "torch.preserve_format" || s == "torch.contiguous_format")
            {
                return fallback("a *_like factory's memory_format");
            }
        }
        let v = if with_value {
            kw_value.or(a.get(1))
        } else {
            None
        };
        (x.sizes, v)
    } else {
        let skip = usize::from(name.starts_with("new_"));
        if with_value {
            // The value is the last positional unless given by keyword; sizes are one sequence.
            let (sz, v) = match (kw_value, &a[skip.min(a.len())..]) {
                (Some(v), rest) => (rest.to_vec(), v),
                (None, [sz @ .., v]) => (sz.to_vec(), v),
                _ => return fallback("full without a fill value"),
            };
            let mut sa = vec![Arg::None; skip];
            sa.extend(sz);
            (sizes(l, &sa, kw, skip)?, Some(v))
        } else {
            (sizes(l, a, kw, skip)?, None)
        }
    };
    // A fill that is a symbolic int or float (`torch.full((m,), float(n))`): its value
    // computed in the kernel from the size symbols, cast to the result's dtype.
    if let Some(v) = value {
        if let Ok(super::elementwise::Operand::Sym(n)) = super::elementwise::operand(l, v) {
            if !super::elementwise::converts_to(&super::elementwise::Operand::Sym(n.clone()), dtype)
            {
                return fallback(format!("a symbolic fill of a {dtype:?} tensor"));
            }
            return Ok(TensorVal::lazy(
                dtype,
                sizes,
                1,
                Rc::new(move |b, _| {
                    let i = n.value(b);
                    b.cast(i, dtype)
                }),
            ));
        }
    }
    let value = match (name.trim_start_matches("new_"), value) {
        (n, _) if n.starts_with("zeros") => Scalar::I(0),
        (n, _) if n.starts_with("ones") => Scalar::I(1),
        (_, Some(v)) => number(l, v)?,
        _ => return fallback("full without a fill value"),
    };
    if matches!(value, Scalar::F(f) if !dtype.is_floating_point() && f.fract() != 0.0) {
        return fallback("a fractional fill of an integer tensor");
    }
    if !super::checked::number_converts(value, dtype) {
        return fallback(format!("a fill torch does not convert to {dtype:?}"));
    }
    Ok(constant(dtype, sizes, value))
}

/// `torch.tensor(data)` whose data holds no number (`torch.tensor([])`, `[[], []]`): an empty
/// tensor of the nesting's shape, as transformers' `DynamicCache` starts each layer's keys and
/// values. Data with numbers stays a torch call.
pub fn tensor(l: &mut Lowerer, a: &[Arg], kw: &[(String, Arg)]) -> LResult<TensorVal> {
    let dtype = result_dtype(l)?;
    let rest: Vec<(String, Arg)> = kw.iter().filter(|(k, _)| k != "data").cloned().collect();
    check_keywords(&rest, &[])?;
    let data = kw
        .iter()
        .find(|(k, _)| k == "data")
        .map(|(_, v)| v)
        .or(a.first())
        .ok_or_else(|| Reject::Fallback("tensor without data".into()))?;
    if a.len() > 1 {
        return fallback("tensor with extra positional arguments");
    }
    /// The shape of nested empty sequences (every level as long as its siblings).
    fn shape(a: &Arg) -> Option<Vec<i64>> {
        let items = match a {
            Arg::List(xs) | Arg::Tuple(xs) => xs,
            _ => return None,
        };
        let Some(first) = items.first() else {
            return Some(vec![0]);
        };
        let inner = shape(first)?;
        for x in &items[1..] {
            if shape(x)? != inner {
                return None;
            }
        }
        let mut s = vec![items.len() as i64];
        s.extend(inner);
        Some(s)
    }
    let sizes = shape(data).ok_or_else(|| Reject::Fallback("tensor data with values".into()))?;
    // Written for sizes of either type the lowering has (`i64`, and `Size` once symbolic).
    #[allow(clippy::useless_conversion)]
    let sizes = sizes.into_iter().map(Into::into).collect();
    Ok(constant(dtype, sizes, Scalar::I(0)))
}

/// `torch.eye(n, m=n)`: one where the row index equals the column index, zero elsewhere; `n`
/// and `m` may be symbolic ints (`torch.eye(x.size(0)) @ x`).
pub fn eye(l: &mut Lowerer, a: &[Arg], kw: &[(String, Arg)]) -> LResult<TensorVal> {
    check_keywords(kw, &["m"])?;
    let m = kw.iter().find(|(k, _)| k == "m").map(|(_, v)| v);
    let (n, m) = match (a, m) {
        ([n], None) => (n, n),
        ([n], Some(m)) | ([n, m], None) => (n, m),
        _ => return fallback("eye arguments"),
    };
    let (Some(n), Some(m)) = (l.size_arg(n), l.size_arg(m)) else {
        return fallback("eye sizes are not ints");
    };
    let out = result_dtype(l)?;
    Ok(TensorVal::lazy(
        out,
        vec![n, m],
        3,
        Rc::new(move |b, idx| {
            let i = b.index_value(idx[0].clone());
            let j = b.index_value(idx[1].clone());
            let on = b.binary(BinOp::Eq, i, j);
            b.cast(on, out)
        }),
    ))
}
