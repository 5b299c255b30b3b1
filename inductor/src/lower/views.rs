//! View ops: reshape, permute, expand, squeeze, slicing (`x[1:, None, ..., 0]`), select, narrow,
//! split/chunk/unbind. None copies: each becomes index arithmetic on its input (or new strides when
//! the input is a realized buffer).

use fx::Arg;

use super::args::{self, as_int, bind, fallback, sizes_arg, wrap_dim, LResult, Reject};
use super::table::{Canon, Spelling};
use super::value::TensorVal;
use super::{LValue, Lowerer};
use crate::size::Size;

pub fn lower_view(l: &mut Lowerer, c: &Canon, a: &[Arg], kw: &[(String, Arg)]) -> LResult<LValue> {
    let n = c.name.as_str();
    let method = c.spelling == Spelling::Method;
    if n == "getitem" {
        return getitem(l, a, kw);
    }
    let first = a
        .first()
        .ok_or_else(|| Reject::Fallback(format!("{n} without arguments")))?;
    let x = l.tensor(first)?;
    let t = |v: TensorVal| Ok(LValue::Tensor(v));
    match n {
        "view" | "reshape" => {
            if matches!(a.get(1), Some(Arg::DType(_))) {
                return fallback("view as another dtype");
            }
            let sizes = if method {
                l.sizes_arg(a, kw, &["size", "shape"])?
            } else {
                let b = bind(&["input", "shape"], a, kw)?;
                l.size_list(b.req("shape")?)
                    .ok_or_else(|| Reject::Fallback("shape".into()))?
            };
            let sizes = match infer_size(&sizes, x.numel()) {
                Ok(s) => s,
                Err(e) => meta_view_sizes(l, &sizes).ok_or(e)?,
            };
            t(x.reshape(&sizes))
        }
        "view_as" | "reshape_as" | "expand_as" => {
            let b = bind(&["input", "other"], a, kw)?;
            let other = l.tensor(b.req("other")?)?;
            if n == "expand_as" {
                expand(&x, &other.sizes).map(LValue::Tensor)
            } else {
                t(x.reshape(&infer_size(&other.sizes, x.numel())?))
            }
        }
        "expand" | "broadcast_to" => {
            let sizes = if n == "expand" {
                let kw2: Vec<(String, Arg)> = kw
                    .iter()
                    .filter(|(k, _)| k != "implicit")
                    .cloned()
                    .collect();
                l.sizes_arg(a, &kw2, &["size"])?
            } else {
                let b = bind(&["input", "size"], a, kw)?;
                l.size_list(b.req("size")?)
                    .ok_or_else(|| Reject::Fallback("size".into()))?
            };
            expand(&x, &sizes).map(LValue::Tensor)
        }
        "permute" => {
            let dims = if method {
                sizes_arg(a, kw, &["dims"])?
            } else {
                let b = bind(&["input", "dims"], a, kw)?;
                args::int_list(b.req("dims")?).ok_or_else(|| Reject::Fallback("dims".into()))?
            };
            let dims = dims
                .iter()
                .map(|&d| wrap_dim(d, x.ndim()))
                .collect::<LResult<Vec<_>>>()?;
            let mut sorted = dims.clone();
            sorted.sort();
            if sorted != (0..x.ndim()).collect::<Vec<_>>() {
                return fallback("permute dims are not a permutation");
            }
            t(x.permute(&dims))
        }
        "transpose" | "swapaxes" | "swapdims" => {
            let b = bind(&["input", "dim0", "dim1"], a, kw)
                .or_else(|_| bind(&["input", "axis0", "axis1"], a, kw))?;
            let d0 = wrap_dim(b.int_or("dim0", b.int_or("axis0", 0)?)?, x.ndim())?;
            let d1 = wrap_dim(b.int_or("dim1", b.int_or("axis1", 0)?)?, x.ndim())?;
            t(transpose(&x, d0, d1))
        }
        "t" => {
            bind(&["input"], a, kw)?;
            match x.ndim() {
                0 | 1 => t(x),
                2 => t(transpose(&x, 0, 1)),
                _ => fallback("t() of a tensor with more than 2 dims"),
            }
        }
        "flatten" => {
            let b = bind(&["input", "start_dim", "end_dim"], a, kw)?;
            if x.ndim() == 0 {
                return t(x.reshape(&[Size::Const(1)]));
            }
            let s = wrap_dim(b.int_or("start_dim", 0)?, x.ndim())?;
            let e = wrap_dim(b.int_or("end_dim", -1)?, x.ndim())?;
            if s > e {
                return fallback("flatten start_dim after end_dim");
            }
            let mut sizes: Vec<Size> = x.sizes[..s].to_vec();
            sizes.push(x.sizes[s..=e].iter().product());
            sizes.extend(&x.sizes[e + 1..]);
            t(x.reshape(&sizes))
        }
        "squeeze" => {
            let b = bind(&["input", "dim"], a, kw)?;
            let dims: Vec<usize> = match b.dims("dim")? {
                None => (0..x.ndim()).filter(|&d| x.sizes[d] == 1).collect(),
                Some(ds) => {
                    let mut v = Vec::new();
                    for d in ds {
                        let d = wrap_dim(d, x.ndim())?;
                        if x.ndim() > 0 && x.sizes[d] == 1 && !v.contains(&d) {
                            v.push(d);
                        }
                    }
                    v
                }
            };
            t(x.squeeze_dims(&dims))
        }
        "unsqueeze" => {
            let b = bind(&["input", "dim"], a, kw)?;
            let d = wrap_dim(b.int_or("dim", i64::MIN)?, x.ndim() + 1)?;
            t(x.unsqueeze(d))
        }
        "select" => {
            let b = bind(&["input", "dim", "index"], a, kw)?;
            let d = wrap_dim(b.int_or("dim", 0)?, x.ndim())?;
            t(select(&x, d, b.int_or("index", 0)?)?)
        }
        "narrow" => {
            let b = bind(&["input", "dim", "start", "length"], a, kw)?;
            let d = wrap_dim(b.int_or("dim", 0)?, x.ndim())?;
            if !x.sizes[d].is_const() {
                // Along a symbolic dimension: fx's rule guarded the bounds; a negative start
                // counts from the end.
                let arg = |name: &str| b.get(name).and_then(|a| l.size_arg(a));
                let (Some(start), Some(len)) = (arg("start"), arg("length")) else {
                    return fallback("narrow bounds");
                };
                let start = match start.as_const() {
                    Some(s) if s < 0 => x.sizes[d] + s,
                    _ => start,
                };
                return t(x.slice(d, start, len, 1));
            }
            let mut start = b.int_or("start", 0)?;
            let len = b.int_or("length", 0)?;
            let size = x.csize(d);
            if start < 0 {
                start += size;
            }
            if start < 0 || len < 0 || start + len > size {
                return fallback("narrow out of range");
            }
            t(x.slice(d, Size::Const(start), Size::Const(len), 1))
        }
        "unbind" => {
            let b = bind(&["input", "dim"], a, kw)?;
            let d = wrap_dim(b.int_or("dim", 0)?, x.ndim())?;
            Ok(LValue::Tuple(
                (0..x.csize(d))
                    .map(|i| LValue::Tensor(x.select(d, i)))
                    .collect(),
            ))
        }
        "split_with_sizes" => {
            // `x.split_with_sizes([a, b], dim)` (what `split` with a list is in aten): the
            // pieces' lengths are its own ints, or over a symbolic dimension the node's
            // metadata (fx's rule wrote them from the size expressions and guarded the sum).
            let b = bind(&["input", "split_sizes", "dim"], a, kw)?;
            let d = wrap_dim(b.int_or("dim", 0)?, x.ndim())?;
            let lengths: Vec<Size> = match b.get("split_sizes").and_then(args::int_list) {
                Some(v) if x.sizes[d].is_const() => {
                    if v.iter().sum::<i64>() != x.csize(d) || v.iter().any(|&s| s < 0) {
                        return fallback("split sizes do not add up");
                    }
                    v.into_iter().map(Size::Const).collect()
                }
                _ => l
                    .node_pieces
                    .as_ref()
                    .and_then(|ps| ps.iter().map(|p| p.get(d).copied()).collect())
                    .ok_or_else(|| Reject::Fallback("split_with_sizes lengths".into()))?,
            };
            let mut start = Size::Const(0);
            let mut out = Vec::new();
            for p in lengths {
                out.push(LValue::Tensor(x.slice(d, start, p, 1)));
                start = start + p;
            }
            Ok(LValue::Tuple(out))
        }
        "split" | "chunk" if symbolic_cut(l, &x, a, kw, n).is_some() => {
            // Along a symbolic dimension the pieces' lengths are the node's metadata (fx's
            // rule wrote them, the piece count guarded): consecutive slices.
            let (d, pieces) = symbolic_cut(l, &x, a, kw, n).unwrap_or_default();
            let mut start = Size::Const(0);
            let mut out = Vec::new();
            for p in pieces {
                out.push(LValue::Tensor(x.slice(d, start, p, 1)));
                start = start + p;
            }
            Ok(LValue::Tuple(out))
        }
        "split" | "chunk" => {
            let (d, pieces) = if n == "chunk" {
                let b = bind(&["input", "chunks", "dim"], a, kw)?;
                let d = wrap_dim(b.int_or("dim", 0)?, x.ndim())?;
                let chunks = b.int_or("chunks", 0)?;
                if chunks <= 0 {
                    return fallback("chunks must be positive");
                }
                let size = x.csize(d);
                let each = (size + chunks - 1) / chunks;
                (d, split_sizes(size, each.max(1)))
            } else {
                let b = bind(&["input", "split_size_or_sections", "dim"], a, kw)
                    .or_else(|_| bind(&["input", "split_size", "dim"], a, kw))?;
                let arg = b.get("split_size_or_sections").or(b.get("split_size"));
                let d = wrap_dim(b.int_or("dim", 0)?, x.ndim())?;
                match arg {
                    Some(Arg::Int(s)) if *s > 0 => (d, split_sizes(x.csize(d), *s)),
                    Some(a @ (Arg::List(_) | Arg::Tuple(_))) => {
                        let v = args::int_list(a)
                            .ok_or_else(|| Reject::Fallback("split sizes".into()))?;
                        if v.iter().sum::<i64>() != x.csize(d) || v.iter().any(|&s| s < 0) {
                            return fallback("split sizes do not add up");
                        }
                        (d, v)
                    }
                    _ => return fallback("split size"),
                }
            };
            let mut start = 0;
            let mut out = Vec::new();
            for p in pieces {
                out.push(LValue::Tensor(x.slice(
                    d,
                    Size::Const(start),
                    Size::Const(p),
                    1,
                )));
                start += p;
            }
            Ok(LValue::Tuple(out))
        }
        _ => fallback(format!("no lowering for {n}")),
    }
}

/// The cut dimension and the pieces' lengths of a `split`/`chunk` along a symbolic dimension,
/// from the node's tuple metadata; `None` for a static dimension.
fn symbolic_cut(
    l: &Lowerer,
    x: &TensorVal,
    a: &[Arg],
    kw: &[(String, Arg)],
    n: &str,
) -> Option<(usize, Vec<Size>)> {
    let dim = kw
        .iter()
        .find(|(k, _)| k == "dim")
        .map(|(_, a)| a)
        .or(a.get(2));
    let dim = match dim {
        None => 0,
        Some(a) => as_int(a)?,
    };
    let d = wrap_dim(dim, x.ndim()).ok()?;
    if x.sizes[d].is_const() || !matches!(n, "split" | "chunk") {
        return None;
    }
    let pieces = l.node_pieces.as_ref()?;
    let lengths = pieces
        .iter()
        .map(|p| p.get(d).copied())
        .collect::<Option<_>>()?;
    Some((d, lengths))
}

fn split_sizes(total: i64, each: i64) -> Vec<i64> {
    if total == 0 {
        return vec![0];
    }
    let mut v = Vec::new();
    let mut left = total;
    while left > 0 {
        v.push(each.min(left));
        left -= each;
    }
    v
}

fn transpose(x: &TensorVal, d0: usize, d1: usize) -> TensorVal {
    if x.ndim() == 0 {
        return x.clone();
    }
    let mut p: Vec<usize> = (0..x.ndim()).collect();
    p.swap(d0, d1);
    x.permute(&p)
}

fn select(x: &TensorVal, d: usize, index: i64) -> LResult<TensorVal> {
    let size = x.sizes[d];
    let i = match size.as_const() {
        Some(size) => {
            let i = if index < 0 { index + size } else { index };
            if i < 0 || i >= size {
                return fallback("index out of range");
            }
            i
        }
        // A symbolic size is at least 2: indices 0 and 1 are in range at every size.
        None if (0..2).contains(&index) => index,
        None => return fallback("symbolic sizes: select needs a concrete index bound"),
    };
    Ok(x.select(d, i))
}

/// `select(d, i)` with an index that is a size expression (`x[x.size(0) - 1]`): proved inside
/// the dimension at every admitted size, or declined (torch would raise where it is not).
fn sym_select(x: &TensorVal, d: usize, i: Size) -> LResult<TensorVal> {
    if let Some(c) = i.as_const() {
        return select(x, d, c);
    }
    let n = x.sizes[d];
    let ge = |a: Size, b: Size| {
        (a - b)
            .lower_bound_floor(&|_| crate::index::SYMBOL_MIN)
            .is_some_and(|v| v >= 0)
    };
    if !(ge(i, Size::Const(0)) && ge(n - 1, i)) {
        return fallback(format!(
            "symbolic sizes: index {i:?} not proved within 0..{n:?}"
        ));
    }
    Ok(x.slice(d, i, Size::Const(1), 1).squeeze_dims(&[d]))
}

/// One `-1` in a view's sizes stands for what is left of the numel (an exact polynomial
/// division when sizes are symbolic).
fn infer_size(sizes: &[Size], numel: Size) -> LResult<Vec<Size>> {
    let mut out = sizes.to_vec();
    let known: Size = sizes.iter().filter(|&&s| s != -1).product();
    match sizes.iter().filter(|&&s| s == -1).count() {
        0 => {}
        1 if known != 0 => {
            let Some(q) = numel.exact_div(known) else {
                return fallback("cannot infer view size");
            };
            let i = sizes.iter().position(|&s| s == -1).unwrap();
            out[i] = q;
        }
        _ => return fallback("cannot infer view size"),
    }
    if out.iter().product::<Size>() != numel
        || out.iter().any(|s| s.as_const().is_some_and(|c| c < 0))
    {
        return fallback("view size does not match numel");
    }
    Ok(out)
}

/// A view's sizes from the node's metadata where [`infer_size`] cannot prove them (a `-1`
/// over symbolic sizes that is a floor division: `view(B, -1, 2)` of `[s0, s1]` is
/// `[s0, s1 // 2, 2]`, which fx inferred and guarded `s1 % 2 == 0`). The given sizes must
/// agree with the metadata wherever they are not `-1`.
fn meta_view_sizes(l: &Lowerer, sizes: &[Size]) -> Option<Vec<Size>> {
    let m = l.node_sizes.as_ref()?;
    (m.len() == sizes.len()
        && m.iter().any(|s| !s.is_const())
        && sizes.iter().zip(m).all(|(s, m)| *s == -1 || s == m))
    .then(|| m.clone())
}

/// `expand`: new leading dims, size-1 dims stretched, `-1` keeps a size.
fn expand(x: &TensorVal, sizes: &[Size]) -> LResult<TensorVal> {
    if sizes.len() < x.ndim() {
        return fallback("expand to fewer dims");
    }
    let lead = sizes.len() - x.ndim();
    let mut target = sizes.to_vec();
    for (k, &s) in x.sizes.iter().enumerate() {
        let want = &mut target[lead + k];
        if *want == -1 {
            *want = s;
        } else if s != 1 && s != *want {
            return fallback("expand of a non-singleton dim");
        }
    }
    if target[..lead]
        .iter()
        .any(|s| s.as_const().is_some_and(|c| c < 0))
    {
        return fallback("expand with -1 in a new dim");
    }
    Ok(x.expand(&target))
}

fn getitem(l: &mut Lowerer, a: &[Arg], kw: &[(String, Arg)]) -> LResult<LValue> {
    if a.len() != 2 || !kw.is_empty() {
        return fallback("getitem arity");
    }
    let base = l.value(&a[0])?;
    let x = match base {
        LValue::Tuple(items) => {
            let i = as_int(&a[1]).ok_or_else(|| Reject::Fallback("tuple index".into()))?;
            let n = items.len() as i64;
            let i = if i < 0 { i + n } else { i };
            return items
                .get(i as usize)
                .cloned()
                .ok_or_else(|| Reject::Fallback("tuple index out of range".into()));
        }
        LValue::Tensor(t) => t,
        LValue::Scalar(_) => return fallback("getitem on a number"),
    };
    if let (Arg::Node(_), None) = (&a[1], l.size_arg(&a[1])) {
        // `x[t]` with an integer index tensor: a gather along dim 0.
        if let LValue::Tensor(_) = l.value(&a[1])? {
            return super::indexing::index_tensor(l, &x, &a[1]).map(LValue::Tensor);
        }
    }
    let items: Vec<&Arg> = match &a[1] {
        Arg::Tuple(xs) => xs.iter().collect(),
        other => vec![other],
    };
    // A node that is an int (a symbolic size, `x[x.size(0) - 1]`) indexes as the int does.
    if items
        .iter()
        .any(|i| matches!(i, Arg::Node(_)) && l.size_arg(i).is_none())
    {
        return advanced(l, &x, &items).map(LValue::Tensor);
    }
    let consuming = items
        .iter()
        .filter(|i| matches!(i, Arg::Int(_) | Arg::Slice(..) | Arg::Node(_)))
        .count();
    if items.iter().filter(|i| matches!(i, Arg::Ellipsis)).count() > 1 || consuming > x.ndim() {
        return fallback("too many indices");
    }
    let mut t = x;
    let mut dim = 0usize;
    for item in items {
        match item {
            Arg::Int(i) => t = select(&t, dim, *i)?,
            i @ Arg::Node(_) => {
                let i = l
                    .size_arg(i)
                    .ok_or_else(|| Reject::Fallback("index".into()))?;
                t = sym_select(&t, dim, i)?;
            }
            Arg::None => {
                t = t.unsqueeze(dim);
                dim += 1;
            }
            Arg::Ellipsis => dim += t.ndim() - dim - remaining_consuming(&a[1], dim, &t),
            Arg::Slice(s, e, st) => {
                let size = t.sizes[dim];
                let step = match &**st {
                    Arg::None => 1,
                    Arg::Int(v) if *v > 0 => *v,
                    _ => return fallback("slice step must be a positive int"),
                };
                // A symbolic bound (a symbolic int input, `x[:n]`) of a constant size takes the
                // symbolic rule as a symbolic size does.
                let plain = |b: &Arg| matches!(b, Arg::None | Arg::Int(_));
                let constant = size.as_const().filter(|_| plain(s) && plain(e));
                let (start, len) = match constant {
                    Some(size) => {
                        let bound = |v: &Arg, default: i64| -> LResult<i64> {
                            Ok(match v {
                                Arg::None => default,
                                Arg::Int(v) => {
                                    let v = if *v < 0 { v + size } else { *v };
                                    v.clamp(0, size)
                                }
                                _ => return fallback("slice bound is not an int"),
                            })
                        };
                        let start = bound(s, 0)?;
                        let stop = bound(e, size)?;
                        let len = if stop > start {
                            (stop - start + step - 1) / step
                        } else {
                            0
                        };
                        (Size::Const(start), Size::Const(len))
                    }
                    None => sym_slice(l, size, s, e, step, dim)?,
                };
                t = t.slice(dim, start, len, step);
                dim += 1;
            }
            _ => return fallback("advanced indexing"),
        }
    }
    Ok(LValue::Tensor(t))
}

/// `start` and length of `[s:e:step]` over a symbolic `size` (output dim `dim`). Python
/// clamps the bounds into `0..=size`; the unclamped bounds are taken only where the clamps are
/// no-ops for every size the guards admit: proved (each symbol at least 2), or where fx's
/// metadata for the result has the unclamped length (fx inferred it under the trace's guards,
/// `B // 2 + 1 <= B`, so at every admitted size the clamps hold). Otherwise the lowering
/// declines.
fn sym_slice(
    l: &Lowerer,
    size: Size,
    s: &Arg,
    e: &Arg,
    step: i64,
    dim: usize,
) -> LResult<(Size, Size)> {
    let min = |_| crate::index::SYMBOL_MIN;
    let mut proved = true;
    let mut bound = |v: &Arg, default: Size| -> LResult<Size> {
        let b = match v {
            Arg::None => return Ok(default),
            Arg::Int(v) if *v < 0 => size + *v,
            _ => l
                .size_arg(v)
                .ok_or_else(|| Reject::Fallback("slice bound is not an int".into()))?,
        };
        proved &= b.proved_ge(Size::Const(0), &min) && size.proved_ge(b, &min);
        Ok(b)
    };
    let start = bound(s, Size::Const(0))?;
    let stop = bound(e, size)?;
    proved &= stop.proved_ge(start, &min);
    let len = if step == 1 {
        stop - start
    } else {
        (stop - start + (step - 1)).floordiv(Size::Const(step))
    };
    let in_meta = l
        .node_sizes
        .as_ref()
        .and_then(|m| m.get(dim))
        .is_some_and(|m| *m == len);
    if !proved && !in_meta {
        return fallback(format!(
            "symbolic sizes: slice bounds {start:?}..{stop:?} not proved within 0..={size:?}"
        ));
    }
    Ok((start, len))
}

/// Dims still to be consumed after an ellipsis (so it can skip the rest).
fn remaining_consuming(index: &Arg, _dim: usize, _t: &TensorVal) -> usize {
    let items: Vec<&Arg> = match index {
        Arg::Tuple(xs) => xs.iter().collect(),
        other => vec![other],
    };
    let pos = items
        .iter()
        .position(|i| matches!(i, Arg::Ellipsis))
        .unwrap_or(0);
    items[pos + 1..]
        .iter()
        .filter(|i| matches!(i, Arg::Int(_) | Arg::Slice(..) | Arg::Node(_)))
        .count()
}

/// `x[i0, i1, ..., :, ...]`: integer index tensors for the leading dims, then only full slices
/// or an ellipsis (the kept dims follow the broadcast index dims). Other mixes (a tensor after
/// a slice, `None`, an int beside tensors, a boolean mask) run through torch.
fn advanced(l: &mut Lowerer, x: &TensorVal, items: &[&Arg]) -> LResult<TensorVal> {
    let lead = items
        .iter()
        .take_while(|i| matches!(i, Arg::Node(_)))
        .count();
    let full = |i: &&Arg| match i {
        Arg::Ellipsis => true,
        Arg::Slice(s, e, st) => {
            matches!(**s, Arg::None) && matches!(**e, Arg::None) && matches!(**st, Arg::None)
        }
        _ => false,
    };
    if !items[lead..].iter().all(full) {
        return fallback("advanced indexing other than leading index tensors");
    }
    let indices = items[..lead]
        .iter()
        .map(|i| l.tensor(i))
        .collect::<LResult<Vec<_>>>()?;
    super::indexing::index_tensors(l, x, indices)
}
