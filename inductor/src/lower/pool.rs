//! Pooling over 1, 2 or 3 trailing spatial dims: `max_pool{1,2,3}d` (dilation, `ceil_mode`),
//! `avg_pool{1,2,3}d` (`ceil_mode`, `count_include_pad`, `divisor_override`) and adaptive
//! average/max pooling to any output size, over static and symbolic sizes.
//!
//! A window of constant size is unrolled into a lazy value (so a ReLU before or an add after
//! fuses in): each position is read clamped into the input and left out through a mask where
//! it may fall outside (the padding, or past the edge with `ceil_mode`). Adaptive windows vary
//! by output position (`floor(i*in/out)` to `ceil((i+1)*in/out)`): a small static one is
//! unrolled over its largest window with a mask, as Inductor does; a large or symbolic one is a
//! reduction over a bound on the largest window, the positions past the window's end masked to
//! the reduction's identity.
//!
//! The sums follow eager's CPU kernels: accumulated in float for half-precision inputs
//! (`opmath`), in window order, then divided by the count (not multiplied by its reciprocal),
//! so an unrolled average rounds as eager's does.

use std::rc::Rc;

use fx::{Arg, DType};

use super::args::{bind, fallback, int_list, Bound, LResult};
use super::value::{contiguous_strides_sym, TensorVal};
use super::{LValue, Lowerer};
use crate::index::Idx;
use crate::ir::{BinOp, BodyBuilder, BufKind, IrNode, ReduceOp, Scalar, UnOp, ValId};
use crate::size::Size;

/// Windows of at most this many elements are unrolled; larger adaptive ones reduce (Inductor's
/// bound for unrolled pooling windows too).
const UNROLL_MAX: i64 = 25;

/// The windows of a pool over `n` spatial dims from its `kernel_size`, `stride` (default: the
/// kernel), `padding` and, where the op has one, `dilation`; with the kernel and padding sizes.
fn windows(b: &Bound, n: usize, dilation: bool) -> LResult<(Vec<i64>, Vec<i64>, Vec<Win>)> {
    let k = per_dim(b, "kernel_size", n, None)?;
    let s = per_dim(b, "stride", n, Some(k.clone()))?;
    let p = per_dim(b, "padding", n, Some(vec![0; n]))?;
    let d = if dilation {
        per_dim(b, "dilation", n, Some(vec![1; n]))?
    } else {
        vec![1; n]
    };
    let wins = (0..n)
        .map(|i| Win {
            k: k[i],
            s: s[i],
            p: p[i],
            d: d[i],
        })
        .collect();
    Ok((k, p, wins))
}

/// torch's parameter for `n` spatial dims: one int repeated, or `n` ints; absent or `[]` is
/// `default`.
fn per_dim(b: &Bound, name: &str, n: usize, default: Option<Vec<i64>>) -> LResult<Vec<i64>> {
    let v =
        match b.get(name) {
            None => None,
            Some(a) => Some(int_list(a).ok_or_else(|| {
                super::args::Reject::Fallback(format!("pooling {name} is not ints"))
            })?),
        };
    match (v, default) {
        (Some(v), _) if v.len() == 1 => Ok(vec![v[0]; n]),
        (Some(v), _) if v.len() == n => Ok(v),
        (Some(v), Some(d)) if v.is_empty() => Ok(d),
        (None, Some(d)) => Ok(d),
        _ => fallback(format!("pooling {name} of the wrong length")),
    }
}

/// The input of an `n`-d pool: `n + 1` or `n + 2` dims of a floating dtype (integer pooling
/// divides or compares in integers: the host runs it).
fn pool_input(l: &Lowerer, a: &Arg, n: usize, what: &str) -> LResult<TensorVal> {
    let x = l.tensor(a)?;
    if x.ndim() != n + 1 && x.ndim() != n + 2 {
        return fallback(format!("{what} input rank"));
    }
    if !x.dtype.is_floating_point() {
        return fallback(format!("{what} of a non-floating dtype"));
    }
    if x.sizes.contains(&Size::Const(0)) {
        return fallback(format!("{what} of an empty tensor"));
    }
    Ok(x)
}

/// The dtype sums are kept in: float for half precision (torch's `opmath_type`).
fn opmath(d: DType) -> DType {
    match d {
        DType::Float16 | DType::BFloat16 => DType::Float32,
        d => d,
    }
}

fn int_value(b: &mut BodyBuilder, s: Size) -> ValId {
    match s.as_const() {
        Some(c) => b.constant(Scalar::I(c), DType::Int64),
        None => b.index_value(Idx::constant(s)),
    }
}

/// A sliding window along one spatial dim: kernel, stride, padding, dilation.
#[derive(Clone, Copy, Debug)]
struct Win {
    k: i64,
    s: i64,
    p: i64,
    d: i64,
}

impl Win {
    /// The first position of output `o`'s window (in input coordinates, may be negative).
    fn start(&self, o: &Idx) -> Idx {
        o.scale(self.s).add_const(-self.p)
    }
}

/// torch's `pooling_output_shape` for input length `len`; with `ceil_mode` the last window is
/// dropped when it would start in the right padding. A symbolic length with `ceil_mode` takes
/// the size fx's rule decided at the hints and guarded (`meta`).
fn out_len(len: Size, w: Win, ceil: bool, meta: Option<Size>) -> LResult<Size> {
    // torch's own argument checks raise; the fallback lets eager say so.
    if w.k <= 0 || w.s <= 0 || w.d <= 0 || w.p < 0 || w.p > w.k / 2 {
        return fallback("pooling arguments torch rejects");
    }
    let span = w.d * (w.k - 1) + 1;
    let o = if !ceil {
        // (fx's pooling rule guarded the numerator non-negative, so the floor is the quotient.)
        (len + (2 * w.p - span)).floordiv(Size::Const(w.s)) + 1
    } else if let Some(l) = len.as_const() {
        let num = l + 2 * w.p - span;
        if num < 0 {
            return fallback("empty pooling output");
        }
        let mut o = (num + w.s - 1) / w.s + 1;
        if (o - 1) * w.s >= l + w.p {
            o -= 1;
        }
        Size::Const(o)
    } else {
        match meta {
            Some(m) => m,
            None => return fallback("symbolic sizes: ceil_mode pooling without a result size"),
        }
    };
    if o.as_const().is_some_and(|o| o <= 0) {
        return fallback("empty pooling output");
    }
    Ok(o)
}

/// The output sizes of a sliding-window pool over the last `wins.len()` dims of `x`.
fn window_sizes(l: &Lowerer, x: &TensorVal, wins: &[Win], ceil: bool) -> LResult<Vec<Size>> {
    let nd = x.ndim();
    let lead = nd - wins.len();
    let mut sizes = x.sizes.clone();
    for (i, w) in wins.iter().enumerate() {
        let meta = l
            .node_sizes
            .as_ref()
            .filter(|m| m.len() == nd)
            .map(|m| m[lead + i]);
        sizes[lead + i] = out_len(x.sizes[lead + i], *w, ceil, meta)?;
    }
    Ok(sizes)
}

/// The position read along spatial dim `i` for output index `o` and kernel offset `kk`, clamped
/// into `[0, len)`, and whether it is inside (`None` where proved inside for every size).
fn read_at(bb: &mut BodyBuilder, pos: Idx, len: Size) -> (Idx, Option<ValId>) {
    let mask = if pos.within(len, bb.ranges()) {
        None
    } else {
        let v = bb.index_value(pos.clone());
        let zero = bb.constant(Scalar::I(0), DType::Int64);
        let end = int_value(bb, len);
        let ge = bb.binary(BinOp::Ge, v, zero);
        let lt = bb.binary(BinOp::Lt, v, end);
        Some(bb.binary(BinOp::And, ge, lt))
    };
    (pos.clamp_to(0, len - 1, bb.ranges()), mask)
}

/// Per spatial dim of the window at output `idx`, what the builder's ranges prove about its
/// reads along it, also through floor divisions (`Idx::within_floor`, `outside_floor`).
#[derive(Clone, Copy, Debug)]
struct DimReads {
    /// Every read along the dim is inside the input: no clamp, no mask, and an average counts
    /// the kernel's length along it.
    whole: bool,
    /// Every read along the dim that is not proved outside is proved inside: those are read
    /// without clamps or masks, the others left out ([`outside`]). A symbolic pool's right
    /// border piece of an odd length reads `2 * (s // 2) - 1` and `2 * (s // 2)`, inside
    /// wherever the piece runs (its extent `(s - 1) // 2 - s // 2 + 1` is 0 at an even `s`),
    /// and `2 * (s // 2) + 1`, past the end: session 22 proved the last one outside but, the
    /// window not being inside whole, still clamped and masked the first two at run time.
    read: bool,
    /// How many reads along the dim are not proved outside: where `read` holds, the count of
    /// the window's positions inside the input along it (`count_include_pad=False`).
    kept: i64,
}

/// Per spatial dim, what is proved about the reads of the window at output `idx` along it for
/// every point of the builder's ranges ([`DimReads`]). A store split into an interior and
/// borders (`lower::interior`) narrows the ranges for this: over its interior every dim is
/// proved, over a border piece every dim but the ones it borders (a left column's rows are the
/// interior's, so only its W reads stay checked). Over the whole output a padded dim fails and
/// each of its reads is decided alone ([`read_at`]), as before: a window with some reads along
/// one dim proved and others masked was slower than one masked throughout (session 20). Reads
/// proved outside are not masked but left out, so a dim whose other reads are all proved
/// inside has no mask at all.
fn dims_inside(bb: &BodyBuilder, idx: &[Idx], wins: &[Win], lens: &[Size]) -> Vec<DimReads> {
    let lead = idx.len() - wins.len();
    wins.iter()
        .enumerate()
        .map(|(i, w)| {
            let inside = |p: &Idx| p.within_floor(lens[i], bb.ranges());
            let reads: Vec<Idx> = (0..w.k)
                .map(|kk| w.start(&idx[lead + i]).add_const(kk * w.d))
                .collect();
            let whole = inside(&reads[0]) && inside(&reads[reads.len() - 1]);
            // The reads are increasing: the first and last kept bound the others.
            let kept: Vec<&Idx> = reads
                .iter()
                .filter(|p| !p.outside_floor(lens[i], bb.ranges()))
                .collect();
            let read = whole
                || kept
                    .first()
                    .zip(kept.last())
                    .is_some_and(|(a, b)| inside(a) && inside(b));
            DimReads {
                whole,
                read,
                kept: kept.len() as i64,
            }
        })
        .collect()
}

/// Whether the read at `pos_of(i)` along each spatial dim `i` is outside the input at every
/// point of the builder's ranges along some dim not proved inside whole: the read adds nothing
/// and is left out (the static kernel's constant mask folds it the same way). Over a symbolic
/// pool's right border piece the last read of an odd length's window is proved past the end.
fn outside(
    bb: &BodyBuilder,
    dims: &[DimReads],
    pos_of: &dyn Fn(usize) -> Idx,
    lens: &[Size],
) -> bool {
    (0..dims.len()).any(|i| !dims[i].whole && pos_of(i).outside_floor(lens[i], bb.ranges()))
}

fn and(bb: &mut BodyBuilder, a: Option<ValId>, b: Option<ValId>) -> Option<ValId> {
    match (a, b) {
        (Some(a), Some(b)) => Some(bb.binary(BinOp::And, a, b)),
        (a, None) => a,
        (None, b) => b,
    }
}

/// Every kernel offset of a window of sizes `ks`, row-major (eager's summation order).
fn offsets(ks: &[i64]) -> Vec<Vec<i64>> {
    let mut out = vec![vec![]];
    for &k in ks {
        out = out
            .into_iter()
            .flat_map(|p| {
                (0..k).map(move |kk| {
                    let mut q = p.clone();
                    q.push(kk);
                    q
                })
            })
            .collect();
    }
    out
}

/// `F.max_pool{n}d(input, kernel_size, stride, padding, dilation, ceil_mode)` without indices:
/// each output point is the max of its window, a position outside the input left out. NaN
/// propagates as in eager (`maximum` semantics).
pub fn max_pool(l: &mut Lowerer, n: usize, a: &[Arg], kw: &[(String, Arg)]) -> LResult<TensorVal> {
    let b = bind(fx::ops::schema::F_MAX_POOL2D, a, kw)?;
    if b.bool_or("return_indices", false)? {
        return fallback("max_pool with indices");
    }
    let ceil = b.bool_or("ceil_mode", false)?;
    let x = pool_input(l, b.req("input")?, n, "max_pool")?;
    let (k, _, wins) = windows(&b, n, true)?;
    let sizes = window_sizes(l, &x, &wins, ceil)?;
    let nd = x.ndim();
    let lead = nd - n;
    let lens: Vec<Size> = x.sizes[lead..].to_vec();
    let dt = x.dtype;
    let kn: i64 = k.iter().product();
    let cost = x.ops() * kn as usize + 2 * kn as usize;
    Ok(TensorVal::lazy(
        dt,
        sizes,
        cost,
        Rc::new(move |bb, idx| {
            let mut r = bb.constant(Scalar::F(f64::NEG_INFINITY), dt);
            let dims = dims_inside(bb, idx, &wins, &lens);
            for off in offsets(&k) {
                let pos_of = |i: usize| {
                    let w = wins[i];
                    idx[lead + i].scale(w.s).add_const(off[i] * w.d - w.p)
                };
                if outside(bb, &dims, &pos_of, &lens) {
                    continue;
                }
                let mut j = idx.to_vec();
                let mut inside = None;
                for i in 0..n {
                    let pos = pos_of(i);
                    if dims[i].read {
                        j[lead + i] = pos;
                        continue;
                    }
                    let (at, m) = read_at(bb, pos, lens[i]);
                    inside = and(bb, inside, m);
                    j[lead + i] = at;
                }
                let v = x.load(bb, &j);
                let m = bb.binary(BinOp::Max, r, v);
                r = match inside {
                    Some(ok) => bb.where_(ok, m, r),
                    None => m,
                };
            }
            r
        }),
    ))
}

/// `F.avg_pool{n}d(input, kernel_size, stride, padding, ceil_mode, count_include_pad,
/// divisor_override)`: the sum of the window's positions inside the input, divided by
/// `divisor_override`, else by the window's size clipped to the padded input
/// (`count_include_pad`, the default) or to the input itself. Without `ceil_mode` a window never
/// passes the padded input, so the padded count is the kernel's size, a constant.
pub fn avg_pool(l: &mut Lowerer, n: usize, a: &[Arg], kw: &[(String, Arg)]) -> LResult<TensorVal> {
    const SIG: &[&str] = &[
        "input",
        "kernel_size",
        "stride",
        "padding",
        "ceil_mode",
        "count_include_pad",
        "divisor_override",
    ];
    let b = bind(SIG, a, kw)?;
    let ceil = b.bool_or("ceil_mode", false)?;
    let include_pad = b.bool_or("count_include_pad", true)?;
    let divisor = match b.get("divisor_override") {
        None => None,
        Some(Arg::Int(0)) => return fallback("divisor_override 0 (torch raises)"),
        Some(Arg::Int(v)) => Some(*v),
        Some(_) => return fallback("divisor_override is not an int"),
    };
    let x = pool_input(l, b.req("input")?, n, "avg_pool")?;
    if n == 3 && l.home == "cpu" && matches!(x.dtype, DType::Float16 | DType::BFloat16) {
        // Eager's CPU kernel has none (it raises NotImplementedError): the host says so.
        return fallback("avg_pool3d of half precision on the CPU (torch has no kernel)");
    }
    let (k, p, wins) = windows(&b, n, false)?;
    let sizes = window_sizes(l, &x, &wins, ceil)?;
    let nd = x.ndim();
    let lead = nd - n;
    let lens: Vec<Size> = x.sizes[lead..].to_vec();
    let dt = x.dtype;
    let acc = opmath(dt);
    let kn: i64 = k.iter().product();
    // The divisor when it is the same for every output point.
    let fixed = match divisor {
        Some(v) => Some(v),
        None if !ceil && (include_pad || p.iter().all(|&p| p == 0)) => Some(kn),
        None => None,
    };
    let cost = x.ops() * kn as usize + 3 * kn as usize;
    Ok(TensorVal::lazy(
        dt,
        sizes,
        cost,
        Rc::new(move |bb, idx| {
            let mut r = bb.constant(Scalar::F(0.0), acc);
            let dims = dims_inside(bb, idx, &wins, &lens);
            let interior = dims.iter().all(|d| d.whole);
            for off in offsets(&k) {
                let pos_of = |i: usize| wins[i].start(&idx[lead + i]).add_const(off[i]);
                if outside(bb, &dims, &pos_of, &lens) {
                    continue;
                }
                let mut j = idx.to_vec();
                let mut inside = None;
                for i in 0..n {
                    let pos = pos_of(i);
                    if dims[i].read {
                        j[lead + i] = pos;
                        continue;
                    }
                    let (at, m) = read_at(bb, pos, lens[i]);
                    inside = and(bb, inside, m);
                    j[lead + i] = at;
                }
                let v = x.load(bb, &j);
                let v = bb.cast(v, acc);
                let sum = bb.binary(BinOp::Add, r, v);
                r = match inside {
                    Some(ok) => bb.where_(ok, sum, r),
                    None => sum,
                };
            }
            let count = match fixed {
                Some(c) => bb.constant(Scalar::F(c as f64), acc),
                // A window inside the input counts the kernel's size in every mode.
                None if interior => bb.constant(Scalar::F(kn as f64), acc),
                None => {
                    // Per dim: the window [start, min(start + k, len + p)), clipped to the
                    // input unless the padding counts.
                    let mut c: Option<ValId> = None;
                    for i in 0..n {
                        let w = wins[i];
                        // A dim whose window is inside counts the kernel's length along it;
                        // one whose reads are each proved inside or outside, unless the
                        // padding counts, the reads inside.
                        let known = match dims[i] {
                            DimReads { whole: true, .. } => Some(w.k),
                            DimReads {
                                read: true, kept, ..
                            } if !include_pad => Some(kept),
                            _ => None,
                        };
                        if let Some(len) = known {
                            let kc = bb.constant(Scalar::I(len), DType::Int64);
                            c = Some(match c {
                                None => kc,
                                Some(prev) => bb.binary(BinOp::Mul, prev, kc),
                            });
                            continue;
                        }
                        let st = w.start(&idx[lead + i]);
                        let sv = bb.index_value(st.clone());
                        let kc = bb.constant(Scalar::I(w.k), DType::Int64);
                        let e = bb.binary(BinOp::Add, sv, kc);
                        let lp = int_value(bb, lens[i] + w.p);
                        let e = bb.binary(BinOp::Min, e, lp);
                        let len_i = if include_pad {
                            bb.binary(BinOp::Sub, e, sv)
                        } else {
                            let zero = bb.constant(Scalar::I(0), DType::Int64);
                            let lo = bb.binary(BinOp::Max, sv, zero);
                            let lv = int_value(bb, lens[i]);
                            let hi = bb.binary(BinOp::Min, e, lv);
                            bb.binary(BinOp::Sub, hi, lo)
                        };
                        c = Some(match c {
                            None => len_i,
                            Some(prev) => bb.binary(BinOp::Mul, prev, len_i),
                        });
                    }
                    let c = c.expect("a pool has a spatial dim");
                    bb.cast(c, acc)
                }
            };
            let q = bb.binary(BinOp::Div, r, count);
            bb.cast(q, dt)
        }),
    ))
}

/// An adaptive window along one dim: output `o` of `out` over input length `len` reads
/// `[floor(o*len/out), ceil((o+1)*len/out))`.
#[derive(Clone, Copy, Debug)]
struct Adaptive {
    len: Size,
    out: i64,
}

impl Adaptive {
    fn start(&self, o: &Idx, ranges: &[Size]) -> Idx {
        o.scale(self.len).floordiv(self.out, ranges)
    }

    fn end(&self, o: &Idx, ranges: &[Size]) -> Idx {
        o.add_const(1)
            .scale(self.len)
            .add_const(self.out - 1)
            .floordiv(self.out, ranges)
    }

    /// Every window has this size (no mask needed).
    fn uniform(&self) -> Option<i64> {
        self.len
            .as_const()
            .filter(|l| l % self.out == 0)
            .map(|l| l / self.out)
    }

    /// The largest window (static), or a bound on it (symbolic: `ceil(len/out) + 1 <=
    /// len // out + 2`; a whole-length window when `out` is 1).
    fn max_window(&self) -> Size {
        match self.len.as_const() {
            Some(l) => Size::Const(
                (0..self.out)
                    .map(|o| ((o + 1) * l + self.out - 1) / self.out - o * l / self.out)
                    .max()
                    .unwrap_or(1),
            ),
            None if self.out == 1 => self.len,
            None => self.len.floordiv(Size::Const(self.out)) + 2,
        }
    }

    /// The position `start + r` read clamped, and whether it is inside the window.
    fn read(&self, bb: &mut BodyBuilder, o: &Idx, r: &Idx) -> (Idx, Option<ValId>) {
        let ranges = bb.ranges().to_vec();
        let start = self.start(o, &ranges);
        let pos = start.add(r);
        let mask = if self.uniform().is_some() {
            None
        } else {
            let end = self.end(o, &ranges);
            let pv = bb.index_value(pos.clone());
            let ev = bb.index_value(end);
            Some(bb.binary(BinOp::Lt, pv, ev))
        };
        (pos.clamp_to(0, self.len - 1, &ranges), mask)
    }

    /// The window's size at output `o`, an int64 value.
    fn count(&self, bb: &mut BodyBuilder, o: &Idx) -> ValId {
        if let Some(c) = self.uniform() {
            return bb.constant(Scalar::I(c), DType::Int64);
        }
        let ranges = bb.ranges().to_vec();
        let st = self.start(o, &ranges);
        let e = self.end(o, &ranges);
        let sv = bb.index_value(st);
        let ev = bb.index_value(e);
        bb.binary(BinOp::Sub, ev, sv)
    }
}

/// `adaptive_{avg,max}_pool{n}d(input, output_size)`: values only. A global average (output all
/// 1s) is a mean, lowered by the caller.
pub fn adaptive(
    l: &mut Lowerer,
    n: usize,
    max: bool,
    a: &[Arg],
    kw: &[(String, Arg)],
) -> LResult<LValue> {
    let b = bind(&["input", "output_size", "return_indices"], a, kw)?;
    if b.bool_or("return_indices", false)? {
        return fallback("adaptive_max_pool with indices");
    }
    let x = pool_input(l, b.req("input")?, n, "adaptive pool")?;
    if n == 3 && !max && l.home == "cpu" && matches!(x.dtype, DType::Float16 | DType::BFloat16) {
        // Eager's CPU kernel sums in the half type itself (a sum past its range is inf where
        // a float sum is not): the host runs it, for eager's values.
        return fallback("adaptive_avg_pool3d of half precision on the CPU (eager sums in half)");
    }
    let nd = x.ndim();
    let lead = nd - n;
    // `None` keeps the input's size.
    let want: Vec<Option<i64>> = match b.req("output_size")? {
        Arg::Int(v) => vec![Some(*v); n],
        Arg::Tuple(xs) | Arg::List(xs) if xs.len() == n => xs
            .iter()
            .map(|v| match v {
                Arg::Int(v) => Ok(Some(*v)),
                Arg::None => Ok(None),
                _ => fallback("adaptive pool output_size is not ints"),
            })
            .collect::<LResult<_>>()?,
        _ => return fallback("adaptive pool output_size"),
    };
    let mut dims = Vec::new();
    for (i, w) in want.iter().enumerate() {
        let len = x.sizes[lead + i];
        let out = match (w, len.as_const()) {
            (Some(o), _) => *o,
            (None, Some(c)) => c,
            (None, None) => return fallback("symbolic sizes: adaptive pool keeping a size"),
        };
        if out <= 0 {
            return fallback("adaptive pool to an empty size (torch raises)");
        }
        dims.push(Adaptive { len, out });
    }
    let mut sizes = x.sizes[..lead].to_vec();
    sizes.extend(dims.iter().map(|d| Size::Const(d.out)));
    let wmax: Vec<Size> = dims.iter().map(Adaptive::max_window).collect();
    let unroll = wmax
        .iter()
        .map(|w| w.as_const())
        .collect::<Option<Vec<i64>>>()
        .filter(|w| w.iter().product::<i64>() <= UNROLL_MAX);
    let dt = x.dtype;
    let acc = if max { dt } else { opmath(dt) };
    let v = match unroll {
        Some(ks) => {
            let kn: i64 = ks.iter().product();
            let cost = x.ops() * kn as usize + 4 * kn as usize;
            TensorVal::lazy(
                acc,
                sizes.clone(),
                cost,
                Rc::new(move |bb, idx| {
                    let init = if max { f64::NEG_INFINITY } else { 0.0 };
                    let mut r = bb.constant(Scalar::F(init), acc);
                    for off in offsets(&ks) {
                        let mut j = idx.to_vec();
                        let mut inside = None;
                        for (i, d) in dims.iter().enumerate() {
                            let (at, m) = d.read(bb, &idx[lead + i], &Idx::constant(off[i]));
                            inside = and(bb, inside, m);
                            j[lead + i] = at;
                        }
                        let v = x.load(bb, &j);
                        let v = bb.cast(v, acc);
                        let op = if max { BinOp::Max } else { BinOp::Add };
                        let m = bb.binary(op, r, v);
                        r = match inside {
                            Some(ok) => bb.where_(ok, m, r),
                            None => m,
                        };
                    }
                    if !max {
                        let c = window_count(bb, &dims, &idx[lead..], acc);
                        r = bb.binary(BinOp::Div, r, c);
                    }
                    r
                }),
            )
        }
        None => {
            let r = window_reduction(l, &x, &dims, &wmax, &sizes, max, acc);
            if max {
                r
            } else {
                TensorVal::lazy(
                    acc,
                    sizes.clone(),
                    4,
                    Rc::new(move |bb, idx| {
                        let v = r.load(bb, idx);
                        let c = window_count(bb, &dims, &idx[lead..], acc);
                        bb.binary(BinOp::Div, v, c)
                    }),
                )
            }
        }
    };
    if acc == dt {
        return Ok(LValue::Tensor(v));
    }
    super::elementwise::pointwise(&[super::elementwise::Operand::T(v)], dt, dt, |_, v| v[0])
        .map(LValue::Tensor)
}

/// The product of the adaptive windows' sizes at output `outs`, as a float of dtype `acc`.
fn window_count(bb: &mut BodyBuilder, dims: &[Adaptive], outs: &[Idx], acc: DType) -> ValId {
    let mut c: Option<ValId> = None;
    for (d, o) in dims.iter().zip(outs) {
        let ci = d.count(bb, o);
        c = Some(match c {
            None => ci,
            Some(p) => bb.binary(BinOp::Mul, p, ci),
        });
    }
    let c = c.expect("a pool has a spatial dim");
    bb.cast(c, acc)
}

/// A reduction over the largest adaptive window `wmax` (a bound where symbolic), positions past
/// each output's window masked to the identity (`-inf` for max, 0 for the sum).
fn window_reduction(
    l: &mut Lowerer,
    x: &TensorVal,
    dims: &[Adaptive],
    wmax: &[Size],
    sizes: &[Size],
    max: bool,
    acc: DType,
) -> TensorVal {
    let lead = x.ndim() - dims.len();
    let mut ranges = sizes.to_vec();
    ranges.extend(wmax.iter().copied());
    let mut bb = BodyBuilder::new(ranges);
    let vars = bb.vars();
    let mut j: Vec<Idx> = vars[..sizes.len()].to_vec();
    let mut inside = None;
    for (i, d) in dims.iter().enumerate() {
        let o = vars[lead + i].clone();
        let r = vars[sizes.len() + i].clone();
        let (at, m) = d.read(&mut bb, &o, &r);
        inside = and(&mut bb, inside, m);
        j[lead + i] = at;
    }
    let v = x.load(&mut bb, &j);
    let v = bb.cast(v, acc);
    let v = match inside {
        Some(ok) => {
            let id = bb.constant(Scalar::F(if max { f64::NEG_INFINITY } else { 0.0 }), acc);
            bb.where_(ok, v, id)
        }
        None => v,
    };
    let strides = contiguous_strides_sym(sizes);
    let out =
        l.ir.add_buffer(acc, sizes.to_vec(), strides.clone(), BufKind::Computed);
    l.ir.nodes.push(IrNode::Reduction {
        out,
        sizes: sizes.to_vec(),
        rsizes: wmax.to_vec(),
        op: if max { ReduceOp::Max } else { ReduceOp::Sum },
        body: bb.finish(v),
    });
    TensorVal::buffer(out, acc, sizes.to_vec(), strides)
}

/// Most windows holding one position a [`max_pool_backward`] element reads (a 3x3 window of
/// stride 2: 2x2).
const BACKWARD_WINDOWS_MAX: i64 = 9;

/// `torchferro._aot_helpers.max_pool2d_backward(grad, self, kernel, stride, padding, dilation,
/// ceil_mode)`, the input gradient of `F.max_pool2d` (`fx::autodiff::MAX_POOL2D_BACKWARD`), in
/// two kernels. The first takes each window's argmax again from `self`, as its offset in the
/// window (an int8, what torch.compile's low-memory pool keeps), in eager's scan order
/// (row-major; the first position inside the input to start with, then a later one where it is
/// greater or NaN), so ties (a ReLU's zeros) and NaNs go where eager's indices send them. The
/// second gathers, for each input position, the gradients of the windows whose argmax it is,
/// in increasing output order as eager sums them (in float for half precision on CUDA,
/// rounded at each add on the CPU). On the host the call is torch's `max_pool2d_with_indices`
/// then its backward (two kernels, 0.68 ms of resnet50's channels-last bf16 step on the H100,
/// session 33); on the CPU it also beat torch's two kernels on a channels-last resnet stem
/// (session 35). Dilation other than 1 and positions held by many windows run on the host.
pub fn max_pool_backward(l: &mut Lowerer, a: &[Arg]) -> LResult<TensorVal> {
    let [g, x, k, s, p, d, ceil] = a else {
        return fallback("max_pool2d_backward arguments");
    };
    let n = 2;
    let ints = |a: &Arg, what: &str| -> LResult<Vec<i64>> {
        match int_list(a) {
            Some(v) if v.len() == n => Ok(v),
            Some(v) if v.len() == 1 => Ok(vec![v[0]; n]),
            _ => fallback(format!("max_pool2d_backward {what}")),
        }
    };
    let (k, s, p, d) = (
        ints(k, "kernel_size")?,
        ints(s, "stride")?,
        ints(p, "padding")?,
        ints(d, "dilation")?,
    );
    if !matches!(ceil, Arg::Bool(_)) {
        return fallback("max_pool2d_backward ceil_mode");
    }
    if d.iter().any(|&d| d != 1) {
        return fallback("max_pool2d_backward with dilation");
    }
    if k.iter().chain(&s).any(|&v| v <= 0) || p.iter().zip(&k).any(|(&p, &k)| p < 0 || p > k / 2) {
        return fallback("pooling arguments torch rejects");
    }
    if k.iter().product::<i64>() > i8::MAX as i64 {
        return fallback("max_pool2d_backward: a window past an int8 offset");
    }
    let x = pool_input(l, x, n, "max_pool2d_backward")?;
    let g = l.tensor(g)?;
    let nd = x.ndim();
    if g.ndim() != nd || g.dtype != x.dtype {
        return fallback("max_pool2d_backward gradient shape or dtype");
    }
    let lead = nd - n;
    let lens: Vec<Size> = x.sizes[lead..].to_vec();
    let outs: Vec<Size> = g.sizes[lead..].to_vec();
    // Windows of stride `s` and size `k` holding one position: at most `(k - 1) / s + 1` per dim.
    let cands: Vec<i64> = (0..n).map(|i| (k[i] - 1) / s[i] + 1).collect();
    if cands.iter().product::<i64>() > BACKWARD_WINDOWS_MAX {
        return fallback("max_pool2d_backward: too many windows a position");
    }
    let dt = x.dtype;
    let in_sizes = x.sizes.clone();
    let kk = k.clone();
    let (pp, ss) = (p.clone(), s.clone());
    let window_cost = (x.ops() + 6) * kk.iter().product::<i64>() as usize;
    let argmax = TensorVal::lazy(
        DType::Int8,
        g.sizes.clone(),
        window_cost,
        Rc::new(move |bb, idx| {
            let mut best = bb.constant(Scalar::F(f64::NEG_INFINITY), dt);
            let mut arg = bb.constant(Scalar::I(0), DType::Int8);
            let mut have = bb.constant(Scalar::B(false), DType::Bool);
            for off in offsets(&kk) {
                let mut j = idx.to_vec();
                let mut inside = None;
                for i in 0..n {
                    let pos = idx[lead + i].scale(ss[i]).add_const(off[i] - pp[i]);
                    let (r, m) = read_at(bb, pos, lens[i]);
                    inside = and(bb, inside, m);
                    j[lead + i] = r;
                }
                let v = x.load(bb, &j);
                let gt = bb.binary(BinOp::Gt, v, best);
                let nan = bb.unary(UnOp::IsNan, v);
                let fresh = bb.unary(UnOp::Not, have);
                let take = bb.binary(BinOp::Or, gt, nan);
                let take = bb.binary(BinOp::Or, take, fresh);
                let take = match inside {
                    Some(m) => bb.binary(BinOp::And, take, m),
                    None => take,
                };
                best = bb.where_(take, v, best);
                let flat = bb.constant(Scalar::I(off[0] * kk[1] + off[1]), DType::Int8);
                arg = bb.where_(take, flat, arg);
                have = match inside {
                    Some(m) => bb.binary(BinOp::Or, have, m),
                    None => bb.constant(Scalar::B(true), DType::Bool),
                };
            }
            arg
        }),
    );
    let argmax = l.realize(&argmax);
    // Eager's CPU kernels add each window's gradient into the input gradient in its own dtype
    // (a half-precision sum rounded at every add); its CUDA kernels sum in float.
    let rounded = l.home == "cpu";
    let acc = if rounded { dt } else { opmath(dt) };
    let windows = cands.iter().product::<i64>() as usize;
    Ok(TensorVal::lazy(
        dt,
        in_sizes,
        (g.ops() + 8) * windows,
        Rc::new(move |bb, idx| {
            let mut sum = bb.constant(Scalar::F(0.0), acc);
            // Candidate windows in increasing output order: `o = (h + p) // s - c`.
            for ch in (0..cands[0]).rev() {
                for cw in (0..cands[1]).rev() {
                    let c = [ch, cw];
                    let mut ok = None;
                    let mut at = idx.to_vec();
                    // This position's offset in the window, `h + p - o * s` along each dim.
                    let mut t = Vec::with_capacity(n);
                    for i in 0..n {
                        let h = &idx[lead + i];
                        let o = h
                            .add_const(p[i])
                            .floordiv(s[i], bb.ranges())
                            .add_const(-c[i]);
                        let ti = h.add_const(p[i]).add(&o.scale(-s[i]));
                        let (clamped, m) = read_at(bb, o, outs[i]);
                        ok = and(bb, ok, m);
                        // `c` windows back may have passed the window's end.
                        if c[i] > 0 {
                            let tv = bb.index_value(ti.clone());
                            let last = bb.constant(Scalar::I(k[i] - 1), DType::Int64);
                            let le = bb.binary(BinOp::Le, tv, last);
                            ok = and(bb, ok, Some(le));
                        }
                        at[lead + i] = clamped;
                        t.push(ti);
                    }
                    let arg = argmax.load(bb, &at);
                    let arg = bb.cast(arg, DType::Int64);
                    let mine = bb.index_value(t[0].scale(k[1]).add(&t[1]));
                    let hit = bb.binary(BinOp::Eq, arg, mine);
                    let hit = match ok {
                        Some(m) => bb.binary(BinOp::And, hit, m),
                        None => hit,
                    };
                    let gv = g.load(bb, &at);
                    let gv = bb.cast(gv, acc);
                    let added = bb.binary(BinOp::Add, sum, gv);
                    let added = if rounded {
                        bb.round_to_storage(added)
                    } else {
                        added
                    };
                    sum = bb.where_(hit, added, sum);
                }
            }
            bb.cast(sum, dt)
        }),
    ))
}
