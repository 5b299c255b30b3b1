//! Ops whose every output element is one input element at an index computed from the output
//! index and the sizes: `repeat` (`i mod n`), `Tensor.unfold` (`i * step + j`), `diagonal`
//! (`i` on two dims at once), `unflatten` (a reshape), `gather` (a position read from a tensor)
//! and `F.interpolate` in `nearest` and 1-d `linear` modes (a source position computed as
//! torch's CPU kernels compute it). None needs a constant size: a graph with symbolic sizes
//! lowers them into one library for every size (issue 18), where before each size compiled
//! its own kernels or ran through torch.
//!
//! The index semantics follow torch's kernels (facts checked against eager by
//! `tests/test_inductor_differential.py` and `tests/test_dynamic_shaped_ops.py`): `repeat` with
//! more repeats than dims puts the input at the trailing dims; an unfold window count is
//! `(n - size) // step + 1`; nearest interpolation reads `min(floor(o * scale), n - 1)` with the
//! scale a float32 (`1 / scale_factor` when a factor is given, else `n / out`), except the
//! exact cases torch itself takes in integers (`out == n`, `out == 2n`).

use std::rc::Rc;

use fx::{Arg, DType};

use super::args::{bind, fallback, wrap_dim, LResult, Reject};
use super::table::{Canon, Spelling};
use super::value::TensorVal;
use super::{LValue, Lowerer};
use crate::index::Idx;
use crate::ir::{BinOp, BodyBuilder, Scalar, UnOp, Val, ValId};
use crate::size::Size;

/// Lowers `repeat`, `unflatten`, `Tensor.unfold`, `diagonal` and `gather`.
pub fn lower(l: &mut Lowerer, c: &Canon, a: &[Arg], kw: &[(String, Arg)]) -> LResult<LValue> {
    let t = |v: LResult<TensorVal>| v.map(LValue::Tensor);
    match c.name.as_str() {
        "repeat" if c.spelling == Spelling::Method => {
            let x = l.tensor(a.first().ok_or_else(|| bad("repeat of nothing"))?)?;
            let reps = l.sizes_arg(a, kw, &["repeats"])?;
            t(repeat(&x, &reps))
        }
        "unflatten" => {
            let b = bind(&["input", "dim", "sizes"], a, kw)?;
            let x = l.tensor(b.req("input")?)?;
            let sizes = l
                .size_list(b.req("sizes")?)
                .ok_or_else(|| bad("unflatten sizes"))?;
            let d = wrap_dim(b.int_or("dim", 0)?, x.ndim())?;
            t(unflatten(l, &x, d, &sizes))
        }
        "unfold" if c.spelling == Spelling::Method => {
            let b = bind(&["input", "dimension", "size", "step"], a, kw)?;
            let x = l.tensor(b.req("input")?)?;
            let d = if x.ndim() == 0 {
                0
            } else {
                wrap_dim(b.int_or("dimension", 0)?, x.ndim())?
            };
            t(unfold(l, &x, d, b.int_or("size", 0)?, b.int_or("step", 0)?))
        }
        "diagonal" => {
            let b = bind(&["input", "offset", "dim1", "dim2"], a, kw)?;
            let x = l.tensor(b.req("input")?)?;
            if x.ndim() < 2 {
                return fallback("diagonal of fewer than 2 dims (torch raises)");
            }
            let d1 = wrap_dim(b.int_or("dim1", 0)?, x.ndim())?;
            let d2 = wrap_dim(b.int_or("dim2", 1)?, x.ndim())?;
            t(diagonal(l, &x, b.int_or("offset", 0)?, d1, d2))
        }
        "gather" => {
            let b = bind(&["input", "dim", "index", "*", "sparse_grad"], a, kw)?;
            let x = l.tensor(b.req("input")?)?;
            let index = l.tensor(b.req("index")?)?;
            let d = b.int_or("dim", i64::MIN)?;
            t(gather(l, &x, d, index))
        }
        n => fallback(format!("no lowering for {n}")),
    }
}

fn bad(what: &str) -> Reject {
    Reject::Fallback(what.into())
}

/// A size as a value of the body: a constant's literal, a symbolic size computed in C.
fn size_value(b: &mut BodyBuilder, s: Size, dtype: DType) -> ValId {
    let v = match s.as_const() {
        Some(c) => b.constant(Scalar::I(c), DType::Int64),
        None => b.index_value(Idx::constant(s)),
    };
    b.cast(v, dtype)
}

/// `x.repeat(*reps)`: output dim `k` has `reps[k] * n_k` elements (the input right-aligned,
/// size 1 in the new leading dims) and reads the input at `i mod n_k`.
fn repeat(x: &TensorVal, reps: &[Size]) -> LResult<TensorVal> {
    if reps.len() < x.ndim() {
        return fallback("repeat with fewer repeats than dims (torch raises)");
    }
    if reps.iter().any(|r| r.as_const().is_some_and(|c| c < 0)) {
        return fallback("repeat by a negative count (torch raises)");
    }
    let lead = reps.len() - x.ndim();
    let own = x.sizes.clone();
    let sizes: Vec<Size> = (0..reps.len())
        .map(|k| {
            if k < lead {
                reps[k]
            } else {
                reps[k] * own[k - lead]
            }
        })
        .collect();
    let reps = reps.to_vec();
    let inner = x.clone();
    Ok(TensorVal::lazy(
        x.dtype,
        sizes,
        x.ops() + 1,
        Rc::new(move |b, idx| {
            let i: Vec<Idx> = (0..own.len())
                .map(|k| {
                    let (n, o) = (own[k], &idx[lead + k]);
                    if n == 1 || n == 0 {
                        Idx::constant(0)
                    } else if reps[lead + k] == 1 {
                        o.clone()
                    } else {
                        o.modulo(n, b.ranges())
                    }
                })
                .collect();
            inner.load(b, &i)
        }),
    ))
}

/// `x.unflatten(d, sizes)`: a reshape; a `-1` is what is left of dim `d`, or over symbolic
/// sizes the node's metadata (fx inferred it and guarded the division).
fn unflatten(l: &Lowerer, x: &TensorVal, d: usize, parts: &[Size]) -> LResult<TensorVal> {
    if parts.is_empty() {
        return fallback("unflatten into no sizes (torch raises)");
    }
    let n = x.sizes[d];
    let known: Size = parts.iter().filter(|&&s| s != -1).product();
    let mut parts = parts.to_vec();
    match parts.iter().filter(|&&s| s == -1).count() {
        0 => {}
        1 => {
            let k = parts.iter().position(|&s| s == -1).expect("one -1");
            let q = match (n.as_const(), known.as_const()) {
                (Some(n), Some(c)) if c > 0 && n % c == 0 => Some(Size::Const(n / c)),
                (Some(_), Some(_)) => None,
                _ => n.exact_div(known).or_else(|| {
                    l.node_sizes
                        .as_ref()
                        .filter(|m| m.len() == x.ndim() + parts.len() - 1)
                        .map(|m| m[d + k])
                }),
            };
            parts[k] = q.ok_or_else(|| bad("unflatten size does not divide"))?;
        }
        _ => return fallback("unflatten with two -1 sizes (torch raises)"),
    }
    if parts.iter().product::<Size>() != n {
        return fallback("unflatten sizes do not multiply to the dim");
    }
    let mut sizes = x.sizes[..d].to_vec();
    sizes.extend(&parts);
    sizes.extend(&x.sizes[d + 1..]);
    Ok(x.reshape(&sizes))
}

/// `x.unfold(d, size, step)`: windows of `size` along `d`, `(n - size) // step + 1` of them,
/// as a new last dim: output `(.., i, .., j)` reads `(.., i * step + j, ..)`. A strided input
/// stays a strided view (stride `st * step` along `d`, `st` for the window).
fn unfold(l: &Lowerer, x: &TensorVal, d: usize, size: i64, step: i64) -> LResult<TensorVal> {
    if step <= 0 || size < 0 {
        return fallback("unfold with a non-positive step or a negative size (torch raises)");
    }
    if x.ndim() == 0 {
        return fallback("unfold of a 0-d tensor");
    }
    let n = x.sizes[d];
    let count = match n.as_const() {
        Some(n) if n < size => return fallback("unfold window larger than the dim (torch raises)"),
        Some(n) => Size::Const((n - size) / step + 1),
        None => {
            // fx's rule guarded the window fitting; its length is the node's metadata.
            let want = (n - size).floordiv(Size::Const(step)) + 1;
            match l.node_sizes.as_ref().and_then(|m| m.get(d)) {
                Some(m) => *m,
                None => want,
            }
        }
    };
    let mut sizes = x.sizes.clone();
    sizes[d] = count;
    sizes.push(Size::Const(size));
    let last = sizes.len() - 1;
    Ok(x.view_with(
        sizes,
        move |st, off| {
            let mut s = st.to_vec();
            s[d] = st[d] * step;
            s.push(st[d]);
            Some((s, off))
        },
        move |_, idx| {
            let mut i = idx[..last].to_vec();
            i[d] = idx[d].scale(step).add(&idx[last]);
            i
        },
    ))
}

/// `x.diagonal(offset, d1, d2)`: dims `d1` and `d2` removed, a last dim walking both at once
/// from `(max(-offset, 0), max(offset, 0))`. Its length is the shorter remaining side (over
/// symbolic sizes a `min` fx wrote in the node's metadata); a strided input stays a view.
fn diagonal(l: &Lowerer, x: &TensorVal, offset: i64, d1: usize, d2: usize) -> LResult<TensorVal> {
    if d1 == d2 {
        return fallback("diagonal dims must differ (torch raises)");
    }
    let (r0, c0) = (offset.min(0).abs(), offset.max(0));
    let len = match (x.sizes[d1].as_const(), x.sizes[d2].as_const()) {
        (Some(a), Some(b)) => Size::Const((a - r0).min(b - c0).max(0)),
        _ => l
            .node_sizes
            .as_ref()
            .filter(|m| m.len() == x.ndim() - 1)
            .and_then(|m| m.last().copied())
            .ok_or_else(|| bad("symbolic sizes: a diagonal whose length fx did not infer"))?,
    };
    let keep: Vec<usize> = (0..x.ndim()).filter(|&k| k != d1 && k != d2).collect();
    let mut sizes: Vec<Size> = keep.iter().map(|&k| x.sizes[k]).collect();
    sizes.push(len);
    let n = x.ndim();
    let k1 = keep.clone();
    Ok(x.view_with(
        sizes,
        move |st, off| {
            let mut s: Vec<Size> = k1.iter().map(|&k| st[k]).collect();
            s.push(st[d1] + st[d2]);
            Some((s, off + st[d1] * r0 + st[d2] * c0))
        },
        move |_, idx| {
            let last = &idx[idx.len() - 1];
            let mut i = vec![Idx::constant(0); n];
            for (q, &k) in keep.iter().enumerate() {
                i[k] = idx[q].clone();
            }
            i[d1] = last.add_const(r0);
            i[d2] = last.add_const(c0);
            i
        },
    ))
}

/// `torch.gather(x, d, index)`: the output has `index`'s sizes; element `i` reads `x` at `i`
/// with dim `d` replaced by `index[i]` (no wrapping: a position outside `0..n` is reported,
/// as torch raises). Reads a realized view of `x`.
fn gather(l: &mut Lowerer, x: &TensorVal, dim: i64, index: TensorVal) -> LResult<TensorVal> {
    if index.dtype != DType::Int64 {
        return fallback("gather index of a dtype other than int64 (torch raises)");
    }
    let nd = x.ndim().max(1);
    if index.ndim().max(1) != nd {
        return fallback("gather index of another rank (torch raises)");
    }
    let d = wrap_dim(dim, nd)?;
    if x.ndim() == 0 || index.ndim() == 0 {
        return fallback("gather of a 0-d tensor");
    }
    // Every dim but `d` of the index must fit the input's (torch checks `index.size(k) <=
    // x.size(k)`); over symbolic sizes only where proved.
    let min = |_| crate::index::SYMBOL_MIN;
    for k in (0..nd).filter(|&k| k != d) {
        if !x.sizes[k].proved_ge(index.sizes[k], &min) {
            return fallback("gather index larger than the input along a kept dim");
        }
    }
    if index.numel() != 0 && x.sizes[d] == 0 {
        return fallback("gather from an empty dim (torch raises)");
    }
    let view = l.view_of(x);
    let dtype = x.dtype;
    let sizes = index.sizes.clone();
    let cost = index.ops() + 1;
    Ok(TensorVal::lazy(
        dtype,
        sizes,
        cost,
        Rc::new(move |b, idx| {
            let p = index.load(b, idx);
            let mut at = Idx::constant(view.offset);
            for (k, i) in idx.iter().enumerate().filter(|&(k, _)| k != d) {
                at = at.add(&i.scale(view.strides[k]));
            }
            b.push(
                Val::Gather {
                    buf: view.buf,
                    index: at,
                    pos: p,
                    stride: view.strides[d],
                    size: view.sizes[d],
                    wrap: false,
                },
                dtype,
            )
        }),
    ))
}

/// How one spatial dim of an interpolation finds its source: an index expression where torch
/// computes it exactly in integers, else torch's float32 computation in the body.
#[derive(Clone, Copy)]
enum Source {
    /// `o` (same size).
    Same,
    /// `o // k` (`k` a power of two: torch's `o >> 1` for `out == 2n`, exact float products
    /// `o * 2^-j` for a factor `2^j`).
    Div(i64),
    /// `o * k` (a factor `2^-j`: `o * 2^j` is exact and below `n`).
    Mul(i64),
    /// `min(floor(o * scale), n - 1)` in float32, `scale` given (`1 / factor`) or `n / out`.
    Float(Option<f32>),
}

/// `F.interpolate(x, size=None, scale_factor=None, mode="nearest", align_corners=None,
/// recompute_scale_factor=None, antialias=False)` in modes `nearest` (1 to 3 spatial dims) and
/// `linear` (1 spatial dim). The output sizes are the node's metadata (fx's rule).
pub fn interpolate(l: &mut Lowerer, a: &[Arg], kw: &[(String, Arg)]) -> LResult<TensorVal> {
    let b = bind(fx::ops::schema::F_INTERPOLATE, a, kw)?;
    let x = l.tensor(b.req("input")?)?;
    let mode = b.str_or("mode", "nearest")?;
    if b.bool_or("antialias", false)? {
        return fallback("interpolate with antialias");
    }
    let align = match b.get("align_corners") {
        None | Some(Arg::None) => false,
        Some(_) => b.bool_or("align_corners", false)?,
    };
    let spatial = x.ndim().saturating_sub(2);
    if !(1..=3).contains(&spatial) || !x.dtype.is_floating_point() {
        return fallback("interpolate of this rank or dtype");
    }
    if mode == "linear" && spatial != 1 || mode != "linear" && mode != "nearest" {
        return fallback(format!("interpolate mode {mode} of {spatial} spatial dims"));
    }
    let out = l
        .node_sizes
        .clone()
        .filter(|m| m.len() == x.ndim())
        .ok_or_else(|| bad("interpolate of unknown output sizes"))?;
    // The factors torch hands its kernel: the given ones unless they are recomputed from the
    // output size.
    let recompute = b.bool_or("recompute_scale_factor", false).unwrap_or(false);
    let factors: Vec<Option<f64>> = match b.get("scale_factor") {
        Some(Arg::None) | None => vec![None; spatial],
        Some(_) if recompute => vec![None; spatial],
        Some(Arg::Tuple(xs) | Arg::List(xs)) if xs.len() == spatial => xs
            .iter()
            .map(scalar)
            .map(|f| f.map(Some))
            .collect::<Option<_>>()
            .ok_or_else(|| bad("scale factors"))?,
        Some(f) => vec![Some(scalar(f).ok_or_else(|| bad("scale factor"))?); spatial],
    };
    if factors.iter().flatten().any(|&f| f <= 0.0) {
        return fallback("a non-positive scale factor");
    }
    let lead = x.ndim() - spatial;
    if mode == "linear" {
        return linear(l, &x, &out, factors[0], align);
    }
    let sources: Vec<Source> = (0..spatial)
        .map(|k| nearest_source(x.sizes[lead + k], out[lead + k], factors[k]))
        .collect();
    if sources.iter().all(|s| !matches!(s, Source::Float(_))) {
        let inner = x.clone();
        return Ok(TensorVal::lazy(
            x.dtype,
            out,
            x.ops() + 1,
            Rc::new(move |b, idx| {
                let mut i = idx[..lead].to_vec();
                for (k, s) in sources.iter().enumerate() {
                    let o = &idx[lead + k];
                    i.push(match *s {
                        Source::Same => o.clone(),
                        Source::Div(q) => o.floordiv(q, b.ranges()),
                        Source::Mul(m) => o.scale(m),
                        Source::Float(_) => unreachable!("exact sources only"),
                    });
                }
                inner.load(b, &i)
            }),
        ));
    }
    // A float source position: one data-dependent read of the realized input at the sum of
    // the positions times their strides (all non-negative, so the span bounds it).
    let view = l.view_of(&x);
    if view
        .strides
        .iter()
        .any(|s| !s.proved_ge(Size::Const(0), &|_| crate::index::SYMBOL_MIN))
    {
        return fallback("interpolate of a view with a negative stride");
    }
    let ins = x.sizes.clone();
    let span = (lead..x.ndim())
        .map(|k| (ins[k] - 1) * view.strides[k])
        .sum::<Size>()
        + 1;
    let dtype = x.dtype;
    let outs = out.clone();
    Ok(TensorVal::lazy(
        dtype,
        out,
        4 * spatial + 2,
        Rc::new(move |b, idx| {
            let mut at = Idx::constant(view.offset);
            for (k, i) in idx[..lead].iter().enumerate() {
                at = at.add(&i.scale(view.strides[k]));
            }
            let mut pos = b.constant(Scalar::I(0), DType::Int64);
            for (k, s) in sources.iter().enumerate() {
                let (o, n, st) = (&idx[lead + k], ins[lead + k], view.strides[lead + k]);
                match *s {
                    Source::Same => at = at.add(&o.scale(st)),
                    Source::Div(q) => at = at.add(&o.floordiv(q, b.ranges()).scale(st)),
                    Source::Mul(m) => at = at.add(&o.scale(st * m)),
                    Source::Float(given) => {
                        let scale = float_scale(b, given, n, outs[lead + k]);
                        let src = nearest_float(b, o, scale, n);
                        let stv = size_value(b, st, DType::Int64);
                        let off = b.binary(BinOp::Mul, src, stv);
                        pos = b.binary(BinOp::Add, pos, off);
                    }
                }
            }
            b.push(
                Val::Gather {
                    buf: view.buf,
                    index: at,
                    pos,
                    stride: Size::Const(1),
                    size: span,
                    wrap: false,
                },
                dtype,
            )
        }),
    ))
}

/// A Python number argument as a float.
fn scalar(a: &Arg) -> Option<f64> {
    match a {
        Arg::Int(v) => Some(*v as f64),
        Arg::Float(f) => Some(*f),
        _ => None,
    }
}

/// The exponent `j` of `f == 2^j`, for `|j| <= 20`.
fn power_of_two(f: f64) -> Option<i32> {
    (-20..=20).find(|&j| f == 2f64.powi(j))
}

/// torch's nearest source index for one dim of `n` to `out` elements (`nearest_idx`): the
/// copy and `out == 2n` cases in integers, a power-of-two factor exactly, else in float32.
fn nearest_source(n: Size, out: Size, factor: Option<f64>) -> Source {
    if out == n {
        return Source::Same;
    }
    if out == n * 2 {
        return Source::Div(2);
    }
    match factor.and_then(power_of_two) {
        // `out = n * 2^j` (fx's rule): `o * 2^-j` is exact in float for `o < 2^24`.
        Some(j) if j > 0 && out == n * (1i64 << j) => Source::Div(1 << j),
        // `out = floor(n / 2^j)`: `o * 2^j <= n - 2^j`, so torch's clamp to `n - 1` never
        // acts.
        Some(j) if j < 0 => Source::Mul(1 << -j),
        _ => Source::Float(factor.map(|f| (1.0 / f) as f32)),
    }
}

/// torch's float32 scale (`compute_scales_value`): `1 / factor` when given, else `n / out`.
fn float_scale(b: &mut BodyBuilder, given: Option<f32>, n: Size, out: Size) -> ValId {
    match given {
        Some(s) => b.constant(Scalar::F(s as f64), DType::Float32),
        None => {
            let nv = size_value(b, n, DType::Float32);
            let ov = size_value(b, out, DType::Float32);
            b.binary(BinOp::Div, nv, ov)
        }
    }
}

/// `min(floor(o * scale), n - 1)` with `o * scale` in float32, as an int64 value.
fn nearest_float(b: &mut BodyBuilder, o: &Idx, scale: ValId, n: Size) -> ValId {
    let ov = b.index_value(o.clone());
    let of = b.cast(ov, DType::Float32);
    let p = b.binary(BinOp::Mul, of, scale);
    let p = b.unary(UnOp::Floor, p);
    let p = b.cast(p, DType::Int64);
    let top = size_value(b, n + (-1), DType::Int64);
    b.binary(BinOp::Min, p, top)
}

/// 1-d linear interpolation (torch's `upsample_linear1d` on the CPU): the source position
/// `scale * (o + 0.5) - 0.5` clamped at 0 (`scale * o` with `align_corners`), in float32;
/// `i0 = min(floor(src), n - 1)`, `i1 = i0 + (i0 < n - 1)`, weights `1 - w` and
/// `w = clamp(src - i0, 0, 1)`.
fn linear(
    l: &mut Lowerer,
    x: &TensorVal,
    out: &[Size],
    factor: Option<f64>,
    align: bool,
) -> LResult<TensorVal> {
    if x.dtype != DType::Float32 && x.dtype != DType::Float64 {
        return fallback("linear interpolation of a reduced float dtype");
    }
    // A factor `2^-j` without `align_corners`: the source `2^j * o + 2^(j-1) - 0.5` is exact
    // in float, so both weights are exactly 0.5 and the reads `i0 = 2^j * o + 2^(j-1) - 1`
    // and `i0 + 1` are index expressions (`i0 + 1 <= n - 2^(j-1)` with `out = n // 2^j`, so
    // torch's clamps never act): a lazy value that fuses and vectorizes, instead of two
    // data-dependent reads of the realized input per element.
    if let Some(j) = factor.and_then(power_of_two).filter(|&j| j < 0 && !align) {
        let step = 1i64 << -j;
        let inner = x.clone();
        let dtype = x.dtype;
        return Ok(TensorVal::lazy(
            dtype,
            out.to_vec(),
            x.ops() * 2 + 4,
            Rc::new(move |b, idx| {
                let i0 = idx[2].scale(step).add_const(step / 2 - 1);
                let t0 = inner.load(b, &[idx[0].clone(), idx[1].clone(), i0.clone()]);
                let t1 = inner.load(b, &[idx[0].clone(), idx[1].clone(), i0.add_const(1)]);
                let half = b.constant(Scalar::F(0.5), dtype);
                let a0 = b.binary(BinOp::Mul, t0, half);
                let a1 = b.binary(BinOp::Mul, t1, half);
                b.binary(BinOp::Add, a0, a1)
            }),
        ));
    }
    let view = l.view_of(x);
    if view
        .strides
        .iter()
        .any(|s| !s.proved_ge(Size::Const(0), &|_| crate::index::SYMBOL_MIN))
    {
        return fallback("interpolate of a view with a negative stride");
    }
    let (n, o_n) = (x.sizes[2], out[2]);
    let dtype = x.dtype;
    // torch's opmath for float and double is the type itself.
    let math = dtype;
    let given = factor.map(|f| 1.0 / f);
    Ok(TensorVal::lazy(
        dtype,
        out.to_vec(),
        16,
        Rc::new(move |b, idx| {
            let c = |b: &mut BodyBuilder, v: f64| b.constant(Scalar::F(v), math);
            let scale = if align {
                // (n - 1) / (out - 1), 0 for one output element.
                let nm = size_value(b, n + (-1), math);
                let om = size_value(b, o_n + (-1), math);
                let zero = c(b, 0.0);
                let one = b.constant(Scalar::I(1), DType::Int64);
                let ov = size_value(b, o_n, DType::Int64);
                let many = b.binary(BinOp::Gt, ov, one);
                let q = b.binary(BinOp::Div, nm, om);
                b.where_(many, q, zero)
            } else {
                match given {
                    Some(s) => {
                        let s = if math == DType::Float32 {
                            s as f32 as f64
                        } else {
                            s
                        };
                        c(b, s)
                    }
                    None => {
                        let nv = size_value(b, n, math);
                        let ov = size_value(b, o_n, math);
                        b.binary(BinOp::Div, nv, ov)
                    }
                }
            };
            let ov = b.index_value(idx[2].clone());
            let of = b.cast(ov, math);
            let src = if align {
                b.binary(BinOp::Mul, scale, of)
            } else {
                let half = c(b, 0.5);
                let shifted = b.binary(BinOp::Add, of, half);
                let s = b.binary(BinOp::Mul, scale, shifted);
                let s = b.binary(BinOp::Sub, s, half);
                let zero = c(b, 0.0);
                let neg = b.binary(BinOp::Lt, s, zero);
                b.where_(neg, zero, s)
            };
            let fl = b.unary(UnOp::Floor, src);
            let i0 = b.cast(fl, DType::Int64);
            let top = size_value(b, n + (-1), DType::Int64);
            let i0 = b.binary(BinOp::Min, i0, top);
            let i0f = b.cast(i0, math);
            let w1 = b.binary(BinOp::Sub, src, i0f);
            let (zero, one) = (c(b, 0.0), c(b, 1.0));
            let w1 = b.binary(BinOp::Max, w1, zero);
            let w1 = b.binary(BinOp::Min, w1, one);
            let w0 = b.binary(BinOp::Sub, one, w1);
            let more = b.binary(BinOp::Lt, i0, top);
            let one_i = b.constant(Scalar::I(1), DType::Int64);
            let zero_i = b.constant(Scalar::I(0), DType::Int64);
            let step = b.where_(more, one_i, zero_i);
            let i1 = b.binary(BinOp::Add, i0, step);
            let at = Idx::constant(view.offset)
                .add(&idx[0].scale(view.strides[0]))
                .add(&idx[1].scale(view.strides[1]));
            let read = |b: &mut BodyBuilder, p: ValId| {
                b.push(
                    Val::Gather {
                        buf: view.buf,
                        index: at.clone(),
                        pos: p,
                        stride: view.strides[2],
                        size: n,
                        wrap: false,
                    },
                    dtype,
                )
            };
            let (t0, t1) = (read(b, i0), read(b, i1));
            let a0 = b.binary(BinOp::Mul, t0, w0);
            let a1 = b.binary(BinOp::Mul, t1, w1);
            b.binary(BinOp::Add, a0, a1)
        }),
    ))
}
