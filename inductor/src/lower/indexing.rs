//! Ops that assemble a tensor from several places: `cat` / `stack` (each input read at a clamped
//! position, one selected by where the point falls along the cat dim) and the data-dependent
//! reads `embedding` / `index_select` ([`crate::ir::Val::Gather`]). All stay lazy, so they fuse
//! into their consumers like any pointwise op.

use std::rc::Rc;

use fx::{Arg, DType};

use super::args::{bind, fallback, wrap_dim, LResult, Reject};
use super::elementwise::{promote, Operand};
use super::value::TensorVal;
use super::{LValue, Lowerer};
use crate::index::Idx;
use crate::ir::{BinOp, Scalar, Val};
use crate::size::Size;

fn tensor_list(l: &Lowerer, a: &Arg) -> LResult<Vec<TensorVal>> {
    match a {
        Arg::List(xs) | Arg::Tuple(xs) => xs.iter().map(|x| l.tensor(x)).collect(),
        _ => fallback("expected a sequence of tensors"),
    }
}

/// `torch.cat(tensors, dim=0)` (also `concat`, `concatenate`).
pub fn cat(l: &mut Lowerer, a: &[Arg], kw: &[(String, Arg)]) -> LResult<LValue> {
    let b = bind(&["tensors", "dim"], a, kw).or_else(|_| bind(&["tensors", "axis"], a, kw))?;
    let ts = tensor_list(l, b.req("tensors")?)?;
    let dim = b.int_or("dim", b.int_or("axis", 0)?)?;
    concat(&ts, dim).map(LValue::Tensor)
}

/// `torch.stack(tensors, dim=0)`: each input unsqueezed at `dim`, then concatenated.
pub fn stack(l: &mut Lowerer, a: &[Arg], kw: &[(String, Arg)]) -> LResult<LValue> {
    let b = bind(&["tensors", "dim"], a, kw)?;
    let ts = tensor_list(l, b.req("tensors")?)?;
    let Some(first) = ts.first() else {
        return fallback("stack of no tensors");
    };
    if ts.iter().any(|t| t.sizes != first.sizes) {
        return fallback("stack of tensors of different shapes");
    }
    let d = wrap_dim(b.int_or("dim", 0)?, first.ndim() + 1)?;
    let ts: Vec<TensorVal> = ts.iter().map(|t| t.unsqueeze(d)).collect();
    concat(&ts, d as i64).map(LValue::Tensor)
}

pub(crate) fn concat(ts: &[TensorVal], dim: i64) -> LResult<TensorVal> {
    // torch skips 1-d empty tensors (a legacy rule) when others have more dims.
    let rank = ts.iter().map(|t| t.ndim()).max().unwrap_or(0);
    let ts: Vec<TensorVal> = ts
        .iter()
        .filter(|t| !(t.ndim() == 1 && t.sizes[0] == 0 && rank > 1))
        .cloned()
        .collect();
    let Some(first) = ts.first() else {
        return fallback("cat of no tensors");
    };
    if first.ndim() == 0 {
        return fallback("cat of 0-d tensors (torch raises)");
    }
    let d = wrap_dim(dim, first.ndim())?;
    for t in &ts {
        let same = t.ndim() == first.ndim()
            && (0..t.ndim()).all(|k| k == d || t.sizes[k] == first.sizes[k]);
        if !same {
            return fallback("cat of tensors of mismatching shapes");
        }
    }
    let ops: Vec<Operand> = ts.iter().map(|t| Operand::T(t.clone())).collect();
    let out = promote(&ops.iter().collect::<Vec<_>>())?;
    let mut sizes = first.sizes.clone();
    sizes[d] = ts.iter().map(|t| t.sizes[d]).sum();
    // (input, offset along d), empty inputs dropped: they own no output position.
    let mut parts = Vec::new();
    let mut off = Size::Const(0);
    for t in ts {
        let n = t.sizes[d];
        if n != 0 {
            parts.push((t, off));
        }
        off = off + n;
    }
    if parts.len() == 1 {
        let t = parts.pop().unwrap().0;
        return super::elementwise::pointwise(&[Operand::T(t)], out, out, |_, v| v[0]);
    }
    let cost = parts.iter().map(|(t, _)| t.ops() + 2).sum();
    Ok(TensorVal::lazy(
        out,
        sizes,
        cost,
        Rc::new(move |b, idx| {
            let i = idx[d].clone();
            // Only the parts the index can fall into over the body's ranges: a store split
            // into one loop per part (`Lowerer::store`) reads its part directly, with no
            // select and no clamped read of the others.
            let reach: Vec<usize> = (0..parts.len())
                .filter(|&k| {
                    let below = Idx::constant(parts[k].1 - 1).add(&i.scale(-1));
                    let above = parts
                        .get(k + 1)
                        .is_some_and(|(_, end)| i.add_const(-*end).proved_nonneg(b.ranges()));
                    !below.proved_nonneg(b.ranges()) && !above
                })
                .collect();
            let Some(&last) = reach.last() else {
                return b.constant(Scalar::I(0), out);
            };
            let read = |b: &mut crate::ir::BodyBuilder, t: &TensorVal, o: Size| {
                let mut j = idx.to_vec();
                j[d] = i.add_const(-o).clamp_to(0, t.sizes[d] - 1, b.ranges());
                let v = t.load(b, &j);
                b.cast(v, out)
            };
            let mut r = read(b, &parts[last].0, parts[last].1);
            for w in (0..reach.len() - 1).rev() {
                let k = reach[w];
                let (t, o) = &parts[k];
                let v = read(b, t, *o);
                let pos = b.index_value(i.clone());
                // A symbolic offset is computed in C from the sizes.
                let end = match parts[k + 1].1.as_const() {
                    Some(c) => b.constant(Scalar::I(c), DType::Int64),
                    None => b.index_value(Idx::constant(parts[k + 1].1)),
                };
                let inside = b.binary(BinOp::Lt, pos, end);
                r = b.where_(inside, v, r);
            }
            r
        }),
    ))
}

/// `table[pos]` along `dim` of a realized view of `table`, with `pos` taken from `positions`
/// (any integer tensor): the result has `positions`' dims where `dim` was.
fn gather_along(
    l: &mut Lowerer,
    table: &TensorVal,
    dim: usize,
    positions: TensorVal,
    wrap: bool,
) -> LResult<TensorVal> {
    if positions.dtype.is_floating_point() || positions.dtype == DType::Bool {
        return fallback("index tensor of a non-integer dtype");
    }
    let view = l.view_of(table);
    let size = table.sizes[dim];
    if size == 0 {
        return fallback("indexing into an empty dim (torch raises unless nothing is read)");
    }
    // The table's layout may be symbolic (`x.index_select(0, i)` of an `[s0, s1]` input
    // strides its rows by `s1`): the offset, strides and bound are sizes the kernel reads.
    let np = positions.ndim();
    let mut sizes: Vec<Size> = table.sizes[..dim].to_vec();
    sizes.extend(&positions.sizes);
    sizes.extend(&table.sizes[dim + 1..]);
    let dtype = table.dtype;
    let cost = positions.ops() + 1;
    Ok(TensorVal::lazy(
        dtype,
        sizes,
        cost,
        Rc::new(move |b, idx| {
            let p = positions.load(b, &idx[dim..dim + np]);
            let p = b.cast(p, DType::Int64);
            // Every dim but `dim` addresses the table affinely.
            let mut index = Idx::constant(view.offset);
            for k in 0..view.sizes.len() {
                let i = match k.cmp(&dim) {
                    std::cmp::Ordering::Less => &idx[k],
                    std::cmp::Ordering::Equal => continue,
                    std::cmp::Ordering::Greater => &idx[k - 1 + np],
                };
                index = index.add(&i.scale(view.strides[k]));
            }
            b.push(
                Val::Gather {
                    buf: view.buf,
                    index,
                    pos: p,
                    stride: view.strides[dim],
                    size,
                    wrap,
                },
                dtype,
            )
        }),
    ))
}

/// `F.embedding(input, weight, padding_idx=None, max_norm=None, ...)`: rows of `weight`.
pub fn embedding(l: &mut Lowerer, a: &[Arg], kw: &[(String, Arg)]) -> LResult<TensorVal> {
    let b = bind(
        &[
            "input",
            "weight",
            "padding_idx",
            "max_norm",
            "norm_type",
            "scale_grad_by_freq",
            "sparse",
        ],
        a,
        kw,
    )?;
    if b.get("max_norm").is_some() {
        return fallback("embedding with max_norm (renormalizes the weight in place)");
    }
    let ids = l.tensor(b.req("input")?)?;
    let w = l.tensor(b.req("weight")?)?;
    if w.ndim() != 2 {
        return fallback("embedding weight is not 2-d");
    }
    gather_along(l, &w, 0, ids, false)
}

/// `torch.index_select(input, dim, index)`.
pub fn index_select(l: &mut Lowerer, a: &[Arg], kw: &[(String, Arg)]) -> LResult<TensorVal> {
    let b = bind(&["input", "dim", "index"], a, kw)?;
    let x = l.tensor(b.req("input")?)?;
    let index = l.tensor(b.req("index")?)?;
    if index.ndim() > 1 {
        return fallback("index_select with a multi-dim index");
    }
    if x.ndim() == 0 {
        return fallback("index_select of a 0-d tensor");
    }
    let d = wrap_dim(b.int_or("dim", i64::MIN)?, x.ndim())?;
    // A 0-d index selects like a 1-element one (the dim stays).
    let index = if index.ndim() == 0 {
        index.unsqueeze(0)
    } else {
        index
    };
    gather_along(l, &x, d, index, false)
}

/// `x[t]` with one integer index tensor in the first position (Python wraps negatives).
pub fn index_tensor(l: &mut Lowerer, x: &TensorVal, index: &Arg) -> LResult<TensorVal> {
    let index = l.tensor(index)?;
    if x.ndim() == 0 {
        return Err(Reject::Fallback("indexing a 0-d tensor".into()));
    }
    gather_along(l, x, 0, index, true)
}

/// `x[i0, i1, ...]` with integer index tensors for the leading dims (broadcast together; the
/// dims after them kept, as by `x[i0, i1, :, ...]`): one data-dependent read per point. The
/// positions, each wrapped once if negative and checked against its dim, make one offset into
/// the realized table; a position out of range turns the offset into -1, which the gather's
/// range check reports (torch raises an IndexError there). One index tensor is
/// [`gather_along`] dim 0.
pub fn index_tensors(
    l: &mut Lowerer,
    x: &TensorVal,
    indices: Vec<TensorVal>,
) -> LResult<TensorVal> {
    let k = indices.len();
    if k == 0 || k > x.ndim() {
        return fallback("too many index tensors");
    }
    if indices
        .iter()
        .any(|p| p.dtype.is_floating_point() || p.dtype == DType::Bool)
    {
        return fallback("index tensor of a non-integer dtype (or a mask)");
    }
    if k == 1 {
        return gather_along(l, x, 0, indices.into_iter().next().unwrap(), true);
    }
    if x.sizes[..k].contains(&Size::Const(0)) {
        return fallback("indexing into an empty dim (torch raises unless nothing is read)");
    }
    let dims = x.sizes.clone();
    let shapes: Vec<&[Size]> = indices.iter().map(|p| p.sizes.as_slice()).collect();
    let bsizes = super::elementwise::broadcast(&shapes)?;
    let indices: Vec<TensorVal> = indices.iter().map(|p| p.expand(&bsizes)).collect();
    let view = l.view_of(x);
    let (strides, offset) = (view.strides.clone(), view.offset);
    // A symbolic stride (a realized buffer's, a product of sizes) must be proved non-negative.
    if strides
        .iter()
        .any(|s| !s.proved_ge(Size::Const(0), &|_| crate::index::SYMBOL_MIN))
    {
        return fallback("gather from a view with a negative stride");
    }
    // Every offset the indexed dims can give lies in 0..span.
    let span = (0..k).map(|j| (dims[j] - 1) * strides[j]).sum::<Size>() + 1;
    let nb = bsizes.len();
    let mut sizes = bsizes;
    sizes.extend(&x.sizes[k..]);
    let dtype = x.dtype;
    let cost = indices.iter().map(|p| p.ops() + 6).sum();
    Ok(TensorVal::lazy(
        dtype,
        sizes,
        cost,
        Rc::new(move |b, idx| {
            let i64c =
                |b: &mut crate::ir::BodyBuilder, v: i64| b.constant(Scalar::I(v), DType::Int64);
            // A size as a value: a constant's literal, a symbolic size computed in C.
            let sizec = |b: &mut crate::ir::BodyBuilder, v: Size| match v.as_const() {
                Some(c) => i64c(b, c),
                None => b.index_value(Idx::constant(v)),
            };
            let mut off = i64c(b, 0);
            let mut ok = None;
            for (j, p) in indices.iter().enumerate() {
                let v = p.load(b, &idx[..nb]);
                let v = b.cast(v, DType::Int64);
                let zero = i64c(b, 0);
                let size = sizec(b, dims[j]);
                let neg = b.binary(BinOp::Lt, v, zero);
                let up = b.binary(BinOp::Add, v, size);
                let w = b.where_(neg, up, v);
                let ge = b.binary(BinOp::Ge, w, zero);
                let lt = b.binary(BinOp::Lt, w, size);
                let inside = b.binary(BinOp::And, ge, lt);
                ok = Some(match ok {
                    None => inside,
                    Some(prev) => b.binary(BinOp::And, prev, inside),
                });
                let st = sizec(b, strides[j]);
                let t = b.binary(BinOp::Mul, w, st);
                off = b.binary(BinOp::Add, off, t);
            }
            let bad = i64c(b, -1);
            let pos = b.where_(ok.expect("two or more index tensors"), off, bad);
            let mut index = Idx::constant(offset);
            for (q, &st) in strides.iter().enumerate().skip(k) {
                index = index.add(&idx[nb + q - k].scale(st));
            }
            b.push(
                Val::Gather {
                    buf: view.buf,
                    index,
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
