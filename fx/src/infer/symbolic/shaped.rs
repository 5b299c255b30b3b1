//! Symbolic rules of ops whose result sizes are products, quotients or minima of their inputs'
//! sizes and int arguments (`repeat`, `unflatten`, `Tensor.unfold`, `diagonal`, `arange`,
//! `eye`, `F.interpolate` by a scale factor, `repeat_interleave` by an int, `block_diag`,
//! `F.unfold`/`F.fold`). Fitting cannot find such sizes (`s0 * 2` is no
//! input size or argument), so without these rules each op specialized its symbols and every
//! new size traced a new graph (session 27's hunt: 7 graphs over 8 sizes where torch.compile
//! makes 1 or 2). As for the other explicit rules, `infer_symbolic` checks each answer against
//! the concrete evaluation (torch's meta tensors or the native rule) at every probe point, and
//! the relations returned (an unfold's window fits, a range is not empty) become guards.

use super::Sym;
use crate::graph::{Arg, Target};
use crate::meta::Dim;
use crate::ops::schema::F_INTERPOLATE as INTERPOLATE;
use crate::ops::Spelling;
use crate::sym::{RelOp, Relation, SymExpr};
use crate::InferError;

/// The ops ruled here, by how their target is spelled (`Tensor.unfold` is a sliding window;
/// `F.unfold` is im2col, `F.fold` its inverse).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Shaped {
    Repeat,
    Unflatten,
    Unfold,
    Diagonal,
    Arange,
    Eye,
    Interpolate,
    /// `repeat_interleave` by an int (a tensor of repeats makes data-dependent sizes).
    RepeatInterleave,
    /// `torch.block_diag`: the sums of the blocks' rows and columns.
    BlockDiag,
    /// `F.unfold` (im2col): `[N, C * kh * kw, L]`, `L` the count of window positions.
    Im2col,
    /// `F.fold` (col2im): `[N, C, *output_size]`.
    Col2im,
    /// `torch.tile(x, dims)`: `repeat` with `dims` padded by leading 1s to the input's rank.
    Tile,
    /// `F.glu(x, dim)`: half of `dim` (even, guarded).
    Glu,
    /// `F.pixel_shuffle(x, r)`: `[.., C / r^2, H * r, W * r]`.
    PixelShuffle,
    /// `torch.cumulative_trapezoid(y, dim=d)`: one fewer along `d`.
    CumulativeTrapezoid,
    /// `torch.cartesian_prod(*vectors)`: `[n1 * n2 * .., k]` (`[n]` for one vector).
    CartesianProd,
}

impl Shaped {
    pub(super) fn of(target: &Target) -> Option<Shaped> {
        // `torch.block_diag` is defined in `torch.functional` (a path `split_target` does not
        // name; `super::op_name` does).
        match super::op_name(target) {
            "block_diag" => return Some(Shaped::BlockDiag),
            "cartesian_prod" => return Some(Shaped::CartesianProd),
            _ => {}
        }
        let (spelling, name) = crate::ops::split_target(target)?;
        Some(match (spelling, name) {
            (Spelling::Method, "repeat") => Shaped::Repeat,
            (Spelling::Method | Spelling::Torch, "unflatten") => Shaped::Unflatten,
            (Spelling::Method, "unfold") => Shaped::Unfold,
            (Spelling::Method | Spelling::Torch, "diagonal") => Shaped::Diagonal,
            (Spelling::Torch, "arange") => Shaped::Arange,
            (Spelling::Torch, "eye") => Shaped::Eye,
            (Spelling::Functional, "interpolate" | "upsample") => Shaped::Interpolate,
            (Spelling::Method | Spelling::Torch, "repeat_interleave") => Shaped::RepeatInterleave,
            (Spelling::Functional, "unfold") => Shaped::Im2col,
            (Spelling::Functional, "fold") => Shaped::Col2im,
            (Spelling::Method | Spelling::Torch, "tile") => Shaped::Tile,
            (Spelling::Functional, "glu") => Shaped::Glu,
            (Spelling::Functional | Spelling::Torch, "pixel_shuffle") => Shaped::PixelShuffle,
            (Spelling::Torch, "cumulative_trapezoid") => Shaped::CumulativeTrapezoid,
            _ => return None,
        })
    }
}

const REPEAT: &[&str] = &["input", "repeats"];
const UNFLATTEN: &[&str] = &["input", "dim", "sizes"];
const UNFOLD: &[&str] = &["input", "dimension", "size", "step"];
const DIAGONAL: &[&str] = &["input", "offset", "dim1", "dim2"];
const EYE: &[&str] = &["n", "m"];
const REPEAT_INTERLEAVE: &[&str] = &["input", "repeats", "dim", "output_size"];
const TILE: &[&str] = &["input", "dims"];
const GLU: &[&str] = &["input", "dim"];
const PIXEL_SHUFFLE: &[&str] = &["input", "upscale_factor"];
const IM2COL: &[&str] = &["input", "kernel_size", "dilation", "padding", "stride"];
const COL2IM: &[&str] = &[
    "input",
    "output_size",
    "kernel_size",
    "dilation",
    "padding",
    "stride",
];

fn bind<'a>(
    sig: &[&'static str],
    args: &'a [Arg],
    kwargs: &'a [(String, Arg)],
) -> Result<Vec<Option<&'a Arg>>, InferError> {
    crate::ops::bind(sig, args, kwargs).map_err(|_| InferError::Unsupported)
}

fn const_int(a: Option<&Arg>, default: i64) -> Result<i64, InferError> {
    match a {
        None | Some(Arg::None) => Ok(default),
        Some(Arg::Int(v)) => Ok(*v),
        Some(_) => Err(InferError::Unsupported),
    }
}

/// `e >= c` as a relation, unless it is decided (constants, or a symbol's own lower bound).
fn at_least(e: &SymExpr, c: i64, rels: &mut Vec<Relation>) {
    let r = Relation::new(e.clone(), RelOp::Ge, SymExpr::constant(c));
    if r.decided().is_none() {
        rels.push(r);
    }
}

/// A float scale factor as `p / 2^k`: exact in a double, so `floor(s * f)` (torch's output
/// size) is `(s * p) // 2^k` at every `s` a size can be. Other factors (`1/3`) round, and are
/// left to specialize.
fn dyadic(f: f64) -> Option<(i64, i64)> {
    if !(f.is_finite() && f > 0.0) {
        return None;
    }
    (0..=10).find_map(|k| {
        let d = 1i64 << k;
        let p = f * d as f64;
        (p.fract() == 0.0 && p < (1u64 << 40) as f64).then_some((p as i64, d))
    })
}

impl Sym<'_> {
    /// An int argument given as a list of ints, as varargs, or as one int.
    fn int_list(&self, a: &Arg) -> Option<Vec<SymExpr>> {
        match a {
            Arg::Tuple(items) | Arg::List(items) => items.iter().map(|i| self.int(i)).collect(),
            other => Some(vec![self.int(other)?]),
        }
    }

    /// The result sizes of a [`Shaped`] op, with the relations they rely on.
    pub(super) fn shaped(
        &self,
        op: Shaped,
        args: &[Arg],
        kwargs: &[(String, Arg)],
        rels: &mut Vec<Relation>,
    ) -> Result<Vec<Dim>, InferError> {
        let unsupported = || InferError::Unsupported;
        let tensor = |a: Option<&Arg>| a.and_then(|a| self.tensor(a)).ok_or_else(unsupported);
        match op {
            // `x.repeat(r0, r1, ...)`: the repeats may outnumber the dims (leading ones are
            // new); each size is the (padded) input size times its repeat.
            Shaped::Repeat => {
                let x = tensor(args.first())?;
                let repeats: Vec<SymExpr> = match (&args[1..], kwargs) {
                    ([one], []) => self.int_list(one).ok_or_else(unsupported)?,
                    (items, []) if !items.is_empty() => items
                        .iter()
                        .map(|a| self.int(a))
                        .collect::<Option<_>>()
                        .ok_or_else(unsupported)?,
                    ([], _) => {
                        let slots = bind(REPEAT, args, kwargs)?;
                        self.int_list(slots[1].ok_or_else(unsupported)?)
                            .ok_or_else(unsupported)?
                    }
                    _ => return Err(unsupported()),
                };
                if repeats.len() < x.ndim() {
                    return Err(unsupported());
                }
                let lead = repeats.len() - x.ndim();
                let mut sizes = Vec::new();
                for (i, r) in repeats.iter().enumerate() {
                    at_least(r, 0, rels);
                    let size = if i < lead {
                        r.clone()
                    } else {
                        x.sizes[i - lead].expr().mul(r)
                    };
                    sizes.push(Dim::from_expr(size));
                }
                Ok(sizes)
            }
            // `x.unflatten(dim, sizes)`: `dim` becomes `sizes` (one of them may be -1, the
            // size over the others' product, which must divide it).
            Shaped::Unflatten => {
                let slots = bind(UNFLATTEN, args, kwargs)?;
                let x = tensor(slots[0])?;
                let d = crate::infer::wrap_dim(const_int(slots[1], i64::MIN)?, x.ndim())?;
                let parts = self
                    .int_list(slots[2].ok_or_else(unsupported)?)
                    .ok_or_else(unsupported)?;
                let n = x.sizes[d].expr();
                let hole = parts.iter().position(|p| p.as_const() == Some(-1));
                let mut product = SymExpr::constant(1);
                for (i, p) in parts.iter().enumerate() {
                    if Some(i) != hole {
                        if p.as_const().is_some_and(|c| c < 0) {
                            return Err(unsupported());
                        }
                        product = product.mul(p);
                    }
                }
                let mut new: Vec<SymExpr> = parts.clone();
                match hole {
                    Some(i) => {
                        if self.hint(&product).is_none_or(|h| h <= 0) {
                            return Err(unsupported());
                        }
                        let rest = n.modulo(&product);
                        if rest.as_const() != Some(0) {
                            rels.push(Relation::new(rest, RelOp::Eq, SymExpr::constant(0)));
                        }
                        new[i] = n.floordiv(&product);
                    }
                    None => {
                        let r = Relation::new(product, RelOp::Eq, n);
                        if r.decided() != Some(true) {
                            rels.push(r);
                        }
                    }
                }
                let mut sizes: Vec<Dim> = x.sizes[..d].to_vec();
                sizes.extend(new.into_iter().map(Dim::from_expr));
                sizes.extend(x.sizes[d + 1..].iter().cloned());
                Ok(sizes)
            }
            // `x.unfold(dim, size, step)`: `(n - size) // step + 1` windows along `dim` and a
            // new last dim of `size`; torch raises unless the window fits (guarded).
            Shaped::Unfold => {
                let slots = bind(UNFOLD, args, kwargs)?;
                let x = tensor(slots[0])?;
                if x.ndim() == 0 {
                    return Err(unsupported());
                }
                let d = crate::infer::wrap_dim(const_int(slots[1], i64::MIN)?, x.ndim())?;
                let size = slots[2].and_then(|a| self.int(a)).ok_or_else(unsupported)?;
                let step = const_int(slots[3], i64::MIN)?;
                if step <= 0 {
                    return Err(unsupported());
                }
                let n = x.sizes[d].expr();
                let room = n.sub(&size);
                if self.hint(&room).is_none_or(|h| h < 0) {
                    return Err(unsupported());
                }
                at_least(&room, 0, rels);
                at_least(&size, 0, rels);
                let windows = if step == 1 {
                    room.add_const(1)
                } else {
                    room.floordiv(&SymExpr::constant(step)).add_const(1)
                };
                let mut sizes = x.sizes.clone();
                sizes[d] = Dim::from_expr(windows);
                sizes.push(Dim::from_expr(size));
                Ok(sizes)
            }
            // `diagonal(x, offset, dim1, dim2)`: both dims go, a last one of the diagonal's
            // length comes: the shorter side after the offset, never below zero (guarded).
            Shaped::Diagonal => {
                let slots = bind(DIAGONAL, args, kwargs)?;
                let x = tensor(slots[0])?;
                let offset = const_int(slots[1], 0)?;
                let d1 = crate::infer::wrap_dim(const_int(slots[2], 0)?, x.ndim())?;
                let d2 = crate::infer::wrap_dim(const_int(slots[3], 1)?, x.ndim())?;
                if d1 == d2 {
                    return Err(unsupported());
                }
                let (a, b) = (x.sizes[d1].expr(), x.sizes[d2].expr());
                let (a, b) = if offset >= 0 {
                    (a, b.add_const(-offset))
                } else {
                    (a.add_const(offset), b)
                };
                let (ha, hb) = (
                    self.hint(&a).ok_or_else(unsupported)?,
                    self.hint(&b).ok_or_else(unsupported)?,
                );
                // `min` where the order is not the same for every size (torch's `sym_min`:
                // wide and tall matrices share the graph); every symbol is at least 1.
                let length = a.min_with(&b, &|_| 1);
                // A length clamped at 0 is a size no formula here gives: left to specialize.
                if ha.min(hb) < 1 {
                    return Err(unsupported());
                }
                at_least(&length, 0, rels);
                let mut sizes: Vec<Dim> = (0..x.ndim())
                    .filter(|&i| i != d1 && i != d2)
                    .map(|i| x.sizes[i].clone())
                    .collect();
                sizes.push(Dim::from_expr(length));
                Ok(sizes)
            }
            // `torch.arange(start, end, step)`: `ceil((end - start) / step)` values, a
            // positive count guarded (torch raises for bounds against the step's sign).
            Shaped::Arange => {
                let ints: Vec<&Arg> = args.iter().collect();
                let kw = |k: &str| kwargs.iter().find(|(n, _)| n == k).map(|(_, a)| a);
                let (start, end, step) = match ints.as_slice() {
                    [] => (kw("start"), kw("end"), kw("step")),
                    [e] => (kw("start"), Some(*e), kw("step")),
                    [s, e] => (Some(*s), Some(*e), kw("step")),
                    [s, e, st] => (Some(*s), Some(*e), Some(*st)),
                    _ => return Err(unsupported()),
                };
                let expr = |a: Option<&Arg>, default: i64| match a {
                    None => Some(SymExpr::constant(default)),
                    Some(a) => self.int(a),
                };
                let start = expr(start, 0).ok_or_else(unsupported)?;
                let end = end.and_then(|a| self.int(a)).ok_or_else(unsupported)?;
                let step = const_int(step, 1)?;
                if step == 0 {
                    return Err(unsupported());
                }
                let span = if step > 0 {
                    end.sub(&start)
                } else {
                    start.sub(&end)
                };
                if self.hint(&span).is_none_or(|h| h < 1) {
                    return Err(unsupported());
                }
                at_least(&span, 1, rels);
                let k = step.abs();
                let count = if k == 1 {
                    span
                } else {
                    span.add_const(k - 1).floordiv(&SymExpr::constant(k))
                };
                Ok(vec![Dim::from_expr(count)])
            }
            // `torch.eye(n, m=n)`.
            Shaped::Eye => {
                let n = args
                    .first()
                    .and_then(|a| self.int(a))
                    .ok_or_else(unsupported)?;
                let m = match args
                    .get(1)
                    .or_else(|| kwargs.iter().find(|(k, _)| k == "m").map(|(_, a)| a))
                {
                    None | Some(Arg::None) => n.clone(),
                    Some(a) => self.int(a).ok_or_else(unsupported)?,
                };
                if args.len() > 2 || bind(EYE, &args[..args.len().min(2)], &[]).is_err() {
                    return Err(unsupported());
                }
                at_least(&n, 0, rels);
                at_least(&m, 0, rels);
                Ok(vec![Dim::from_expr(n), Dim::from_expr(m)])
            }
            // `F.interpolate(x, size=...)` gives the spatial sizes; `scale_factor=f` gives
            // `floor(s * f)` each (torch's rule without `recompute_scale_factor`), exact for a
            // factor that is a fraction over a power of two.
            Shaped::Interpolate => {
                let slots = bind(INTERPOLATE, args, kwargs)?;
                let x = tensor(slots[0])?;
                if x.ndim() < 3 {
                    return Err(unsupported());
                }
                let spatial = x.ndim() - 2;
                let mut sizes: Vec<Dim> = x.sizes[..2].to_vec();
                match (slots[1], slots[2]) {
                    (Some(size), None | Some(Arg::None)) if !matches!(size, Arg::None) => {
                        let out = self.int_list(size).ok_or_else(unsupported)?;
                        let out = match out.len() {
                            1 => vec![out[0].clone(); spatial],
                            k if k == spatial => out,
                            _ => return Err(unsupported()),
                        };
                        for o in out {
                            at_least(&o, 1, rels);
                            sizes.push(Dim::from_expr(o));
                        }
                    }
                    (None | Some(Arg::None), Some(scale)) => {
                        if !matches!(slots[5], None | Some(Arg::None) | Some(Arg::Bool(false))) {
                            return Err(unsupported());
                        }
                        let factor = |a: &Arg| match a {
                            Arg::Int(v) => dyadic(*v as f64),
                            Arg::Float(f) => dyadic(*f),
                            _ => None,
                        };
                        let factors: Vec<(i64, i64)> = match scale {
                            Arg::Tuple(items) | Arg::List(items) => {
                                items.iter().map(factor).collect::<Option<_>>()
                            }
                            one => factor(one).map(|f| vec![f; spatial]),
                        }
                        .ok_or_else(unsupported)?;
                        if factors.len() != spatial {
                            return Err(unsupported());
                        }
                        for (d, (p, q)) in factors.into_iter().enumerate() {
                            let s = x.sizes[2 + d].expr().mul_const(p);
                            let o = if q == 1 {
                                s
                            } else {
                                s.floordiv(&SymExpr::constant(q))
                            };
                            at_least(&o, 1, rels);
                            sizes.push(Dim::from_expr(o));
                        }
                    }
                    _ => return Err(unsupported()),
                }
                Ok(sizes)
            }
            // `x.repeat_interleave(r, dim)`: that size times `r`; without `dim`, the
            // flattened input's element count times `r`.
            Shaped::RepeatInterleave => {
                let slots = bind(REPEAT_INTERLEAVE, args, kwargs)?;
                let x = tensor(slots[0])?;
                let r = slots[1].and_then(|a| self.int(a)).ok_or_else(unsupported)?;
                at_least(&r, 0, rels);
                match slots[2] {
                    None | Some(Arg::None) => {
                        let numel = x
                            .sizes
                            .iter()
                            .fold(SymExpr::constant(1), |acc, d| acc.mul(&d.expr()));
                        Ok(vec![Dim::from_expr(numel.mul(&r))])
                    }
                    Some(Arg::Int(d)) => {
                        let d = crate::infer::wrap_dim(*d, x.ndim().max(1))?;
                        let mut sizes = x.sizes.clone();
                        if sizes.is_empty() {
                            return Ok(vec![Dim::from_expr(r)]);
                        }
                        sizes[d] = Dim::from_expr(sizes[d].expr().mul(&r));
                        Ok(sizes)
                    }
                    Some(_) => Err(unsupported()),
                }
            }
            // `torch.block_diag(*tensors)`: a 0-d block is `1 x 1`, a 1-d block of `n` is
            // `1 x n`; the result's rows and columns are the blocks' sums.
            Shaped::BlockDiag => {
                if !kwargs.is_empty() || args.is_empty() {
                    return Err(unsupported());
                }
                let (mut rows, mut cols) = (SymExpr::constant(0), SymExpr::constant(0));
                for a in args {
                    let t = tensor(Some(a))?;
                    let (r, c) = match &t.sizes[..] {
                        [] => (SymExpr::constant(1), SymExpr::constant(1)),
                        [n] => (SymExpr::constant(1), n.expr()),
                        [r, c] => (r.expr(), c.expr()),
                        _ => return Err(unsupported()),
                    };
                    rows = rows.add(&r);
                    cols = cols.add(&c);
                }
                Ok(vec![Dim::from_expr(rows), Dim::from_expr(cols)])
            }
            // `F.unfold(x, k, dilation, padding, stride)`: each spatial dim has
            // `(s + 2p - d(k - 1) - 1) // stride + 1` window positions (at least one: torch
            // raises otherwise, guarded); `L` is their product.
            Shaped::Im2col => {
                let slots = bind(IM2COL, args, kwargs)?;
                let x = tensor(slots[0])?;
                if x.ndim() != 3 && x.ndim() != 4 {
                    return Err(unsupported());
                }
                let lead = x.ndim() - 2;
                let (kernel, dilation, padding, stride) = self.window_params(&slots[1..])?;
                let mut count = SymExpr::constant(1);
                for i in 0..2 {
                    let blocks = self.blocks(
                        &x.sizes[lead + i].expr(),
                        kernel[i],
                        dilation[i],
                        padding[i],
                        stride[i],
                        rels,
                    )?;
                    count = count.mul(&blocks);
                }
                let mut sizes: Vec<Dim> = x.sizes[..lead - 1].to_vec();
                sizes.push(Dim::from_expr(
                    x.sizes[lead - 1].expr().mul_const(kernel[0] * kernel[1]),
                ));
                sizes.push(Dim::from_expr(count));
                Ok(sizes)
            }
            // `F.fold(x, output_size, k, ...)` of `[N, C * kh * kw, L]`: `[N, C, oh, ow]`;
            // torch requires `L` to be the count of window positions in the output (guarded)
            // and the channels divisible by the kernel's size.
            Shaped::Col2im => {
                let slots = bind(COL2IM, args, kwargs)?;
                let x = tensor(slots[0])?;
                if x.ndim() != 2 && x.ndim() != 3 {
                    return Err(unsupported());
                }
                let out = self
                    .int_list(slots[1].ok_or_else(unsupported)?)
                    .ok_or_else(unsupported)?;
                let out = match &out[..] {
                    [o] => vec![o.clone(), o.clone()],
                    [_, _] => out,
                    _ => return Err(unsupported()),
                };
                let (kernel, dilation, padding, stride) = self.window_params(&slots[2..])?;
                let mut count = SymExpr::constant(1);
                for i in 0..2 {
                    let blocks =
                        self.blocks(&out[i], kernel[i], dilation[i], padding[i], stride[i], rels)?;
                    count = count.mul(&blocks);
                }
                let lead = x.ndim() - 2;
                let l = x.sizes[lead + 1].expr();
                let same = Relation::new(l, RelOp::Eq, count);
                if same.decided() != Some(true) {
                    rels.push(same);
                }
                let area = kernel[0] * kernel[1];
                let c = x.sizes[lead].expr();
                let rest = c.modulo(&SymExpr::constant(area));
                if rest.as_const() != Some(0) {
                    rels.push(Relation::new(rest, RelOp::Eq, SymExpr::constant(0)));
                }
                let mut sizes: Vec<Dim> = x.sizes[..lead].to_vec();
                sizes.push(Dim::from_expr(c.floordiv(&SymExpr::constant(area))));
                sizes.extend(out.into_iter().map(Dim::from_expr));
                Ok(sizes)
            }
            Shaped::Tile => {
                let slots = bind(TILE, args, kwargs)?;
                let x = tensor(slots[0])?;
                let dims = self
                    .int_list(slots[1].ok_or_else(unsupported)?)
                    .ok_or_else(unsupported)?;
                let mut sizes = Vec::new();
                let rank = dims.len().max(x.ndim());
                let pad_x = rank - x.ndim();
                let pad_d = rank - dims.len();
                for i in 0..rank {
                    let r = if i < pad_d {
                        SymExpr::constant(1)
                    } else {
                        dims[i - pad_d].clone()
                    };
                    at_least(&r, 0, rels);
                    let size = if i < pad_x {
                        r
                    } else {
                        x.sizes[i - pad_x].expr().mul(&r)
                    };
                    sizes.push(Dim::from_expr(size));
                }
                Ok(sizes)
            }
            Shaped::Glu => {
                let slots = bind(GLU, args, kwargs)?;
                let x = tensor(slots[0])?;
                let d = crate::infer::wrap_dim(const_int(slots[1], -1)?, x.ndim())?;
                let n = x.sizes[d].expr();
                let rest = n.modulo(&SymExpr::constant(2));
                if rest.as_const() != Some(0) {
                    rels.push(Relation::new(rest, RelOp::Eq, SymExpr::constant(0)));
                }
                let mut sizes = x.sizes.clone();
                sizes[d] = Dim::from_expr(n.floordiv(&SymExpr::constant(2)));
                Ok(sizes)
            }
            Shaped::PixelShuffle => {
                let slots = bind(PIXEL_SHUFFLE, args, kwargs)?;
                let x = tensor(slots[0])?;
                let r = const_int(slots[1], i64::MIN)?;
                if x.ndim() < 3 || r < 1 {
                    return Err(unsupported());
                }
                let k = x.ndim();
                let c = x.sizes[k - 3].expr();
                let rest = c.modulo(&SymExpr::constant(r * r));
                if rest.as_const() != Some(0) {
                    rels.push(Relation::new(rest, RelOp::Eq, SymExpr::constant(0)));
                }
                let mut sizes = x.sizes[..k - 3].to_vec();
                sizes.push(Dim::from_expr(c.floordiv(&SymExpr::constant(r * r))));
                sizes.push(Dim::from_expr(x.sizes[k - 2].expr().mul_const(r)));
                sizes.push(Dim::from_expr(x.sizes[k - 1].expr().mul_const(r)));
                Ok(sizes)
            }
            Shaped::CumulativeTrapezoid => {
                // Only `y` and `dim` (sample points or a spacing leave the sizes alone, but
                // are not bound here).
                let x = tensor(args.first())?;
                if args.len() != 1 || kwargs.iter().any(|(k, _)| k != "dim") {
                    return Err(unsupported());
                }
                let dim = kwargs.iter().find(|(k, _)| k == "dim").map(|(_, a)| a);
                let d = crate::infer::wrap_dim(const_int(dim, -1)?, x.ndim())?;
                let n = x.sizes[d].expr();
                if self.hint(&n).is_none_or(|h| h < 1) {
                    return Err(unsupported());
                }
                at_least(&n, 1, rels);
                let mut sizes = x.sizes.clone();
                sizes[d] = Dim::from_expr(n.add_const(-1));
                Ok(sizes)
            }
            Shaped::CartesianProd => {
                if !kwargs.is_empty() || args.is_empty() {
                    return Err(unsupported());
                }
                let mut count = SymExpr::constant(1);
                for a in args {
                    let t = tensor(Some(a))?;
                    let [n] = &t.sizes[..] else {
                        return Err(unsupported());
                    };
                    count = count.mul(&n.expr());
                }
                if args.len() == 1 {
                    return Ok(vec![Dim::from_expr(count)]);
                }
                Ok(vec![Dim::from_expr(count), Dim::Known(args.len() as i64)])
            }
        }
    }

    /// `kernel_size, dilation, padding, stride` of `F.unfold`/`F.fold` (two ints each; an int
    /// repeats), constants only.
    #[allow(clippy::type_complexity)]
    fn window_params(
        &self,
        slots: &[Option<&Arg>],
    ) -> Result<([i64; 2], [i64; 2], [i64; 2], [i64; 2]), InferError> {
        let two = |a: Option<&Arg>, default: i64| -> Result<[i64; 2], InferError> {
            match self.ints(a, 2, Some(vec![default; 2])).as_deref() {
                Some(&[x, y]) => Ok([x, y]),
                _ => Err(InferError::Unsupported),
            }
        };
        let kernel = two(slots.first().copied().flatten(), i64::MIN)?;
        let dilation = two(slots.get(1).copied().flatten(), 1)?;
        let padding = two(slots.get(2).copied().flatten(), 0)?;
        let stride = two(slots.get(3).copied().flatten(), 1)?;
        let positive = |v: [i64; 2]| v.iter().all(|&x| x > 0);
        if !(positive(kernel) && positive(dilation) && positive(stride))
            || padding.iter().any(|&p| p < 0)
        {
            return Err(InferError::Unsupported);
        }
        Ok((kernel, dilation, padding, stride))
    }

    /// Window positions along one dim of length `s` ([`super::windows::windows_along`]), at
    /// least one (guarded; a count below one at the hints is left to specialize).
    fn blocks(
        &self,
        s: &SymExpr,
        k: i64,
        dilation: i64,
        padding: i64,
        stride: i64,
        rels: &mut Vec<Relation>,
    ) -> Result<SymExpr, InferError> {
        let span = SymExpr::constant(dilation * (k - 1));
        let num = s.sub(&span).add_const(2 * padding - 1);
        if self.hint(&num).is_none_or(|h| h < 0) {
            return Err(InferError::Unsupported);
        }
        Ok(super::windows::windows_along(
            s, &span, padding, stride, rels,
        ))
    }

    /// Stride candidates of a [`Shaped`] op's result beyond the input's and the contiguous
    /// ones: an unfold's window step (`stride * step`), a diagonal's (`stride1 + stride2`),
    /// the parts an unflatten splits a dim into. Each is checked at every probe point.
    pub(super) fn shaped_strides(
        &self,
        op: Shaped,
        args: &[Arg],
        kwargs: &[(String, Arg)],
        sizes: &[Dim],
    ) -> Vec<SymExpr> {
        let Some(x) = args.first().and_then(|a| self.tensor(a)) else {
            return Vec::new();
        };
        match op {
            Shaped::Unfold => {
                let step = bind(UNFOLD, args, kwargs)
                    .ok()
                    .and_then(|s| const_int(s[3], 1).ok())
                    .unwrap_or(1);
                x.strides.iter().map(|s| s.expr().mul_const(step)).collect()
            }
            Shaped::Diagonal => {
                let mut out = Vec::new();
                for (i, a) in x.strides.iter().enumerate() {
                    for b in &x.strides[i + 1..] {
                        out.push(a.expr().add(&b.expr()));
                    }
                }
                out
            }
            Shaped::Unflatten => self.split_strides(args, sizes),
            _ => Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests;
