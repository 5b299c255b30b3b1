//! Stores split into an interior and borders (issue 18, docs/dynamic-shapes.md "Session 21
//! (pool)"): a value whose reads are masked by their position's bounds (a pool's window reads
//! `0 <= s*x + b < len`, each also clamped into the input) is stored by one loop over the
//! output points whose reads are all inside, and loops over the borders around it. Each loop
//! loads the lazy value again over its own ranges, so over the interior the window proofs
//! (`Idx::within_floor`) hold and the body has no clamps and no masks: a plain strided body gcc
//! vectorizes, where the one loop over the whole output checked every read at run time.
//!
//! Along each masked dim `d` (outermost first) the ranges are `[0, lo)`, `[lo, hi)` and
//! `[hi, n)`, `lo` the first point whose reads start at or after 0 (a constant) and `hi` the
//! end of the points whose reads end before `len` (`(len - 1 - b + s) // s`, symbolic with the
//! input's length). The pieces are every combination of one range per cut dim, so an `n`-d
//! pool is up to `3^n` loops (`avg_pool2d`: 4 corners, 4 edges, the interior): a border piece
//! spans the interior's range along the dims it does not border, where its windows are proved
//! inside (`lower::pool` decides per dim), and checks only the dims it borders. (Session 21's
//! `2n + 1` loops had the borders span the later dims whole: a top row checked every W read
//! too, and the dynamic pool at 17x23 ran 1.9x the static one; docs/dynamic-shapes.md
//! "Session 22 (pool)".) A range may be empty at some sizes:
//! a constant split clips its cuts into `[0, n]`; a symbolic one clips the left border's end
//! (`min(lo, n)`, printed with the prelude's `TF_MINI`), proves the right border's start
//! `hi <= n` (starting it at `max(hi, 0)`), and leaves the interior's extent `hi - lo` as it is, negative where no window
//! is inside (its loop then runs zero times, and the right border, starting at `hi`, overlaps
//! the left one: both write the value the one loop would). The interior's extent carries no
//! `max`, so the window proofs there see through it.
//! CPU only, as the `cat` ranges ([`super::ranges`]), which take precedence.

use super::ranges::Stored;
use super::value::TensorVal;
use super::Lowerer;
use crate::index::{Atom, Idx, SYMBOL_MIN};
use crate::ir::{BinOp, Body, BodyBuilder, BufId, IrNode, Scalar, Val};
use crate::size::Size;
use fx::SymExpr;

/// One dim's cut of `[0, n)`: the left border `[0, top)`, the interior `[lo, hi)`, the right
/// border `[bot, n)`. `top` is `min(lo, n)`, `bot` is `max(hi, 0)`; over symbolic sizes `hi`
/// may be below `lo` (an empty interior, its extent negative: the loop runs zero times), where
/// the borders overlap.
#[derive(Clone, Copy, Debug)]
pub(super) struct Cut {
    d: usize,
    top: Size,
    lo: Size,
    hi: Size,
    bot: Size,
}

/// A read position `a*x_d + b` (one loop var, constant coefficients) checked against 0
/// (`len` None) or against the length `len`.
struct Bounded {
    d: usize,
    a: i64,
    b: i64,
    len: Option<Size>,
}

fn nonneg(e: Size) -> bool {
    e.lower_bound_floor(&|_| SYMBOL_MIN).is_some_and(|v| v >= 0)
}

/// The bound checks `p >= 0` and `p < len` of `full` over positions affine in one loop var
/// (a read's mask checks both, or the one side not proved already), and the dims where some
/// position is checked `>= 0` (a padded window's first read): only those are split. A dim
/// compared only by `<` is a select (`c[1:]` of a `cat`: `x + 1 < len`), which the `cat`
/// ranges decide on ([`super::ranges`]), not a window read; a window without padding whose
/// last read is not proved inside (`ceil_mode`) is left whole too.
fn bounded_reads(full: &Body) -> (Vec<Bounded>, Vec<usize>) {
    let mut lower_checked = Vec::new();
    let affine = |v| match &full.vals[v] {
        Val::Index(p) => match (p.terms.as_slice(), p.constant.as_const()) {
            ([(Atom::Var(d), a)], Some(b)) => {
                a.as_const().filter(|&a| a > 0).map(|a| (*d as usize, a, b))
            }
            _ => None,
        },
        _ => None,
    };
    let mut out = Vec::new();
    for v in full.vals.iter() {
        let (lower, p, e) = match *v {
            Val::Binary(BinOp::Ge, p, e) => (true, p, e),
            Val::Binary(BinOp::Lt, p, e) => (false, p, e),
            _ => continue,
        };
        let Some((d, a, b)) = affine(p) else { continue };
        let len = match &full.vals[e] {
            Val::Const(Scalar::I(0)) if lower => None,
            Val::Const(Scalar::I(n)) if !lower => Some(Size::Const(*n)),
            Val::Index(l) if !lower && l.terms.is_empty() => Some(l.constant),
            _ => continue,
        };
        if lower {
            lower_checked.push(d);
        }
        out.push(Bounded { d, a, b, len });
    }
    (out, lower_checked)
}

impl Lowerer<'_> {
    /// The cuts to store `t` (body `full`, over all of `t`) into `buf` by, one per masked dim,
    /// outermost first; `None` when no dim has a proved interior that is not the whole dim.
    pub(super) fn store_interior(
        &self,
        buf: BufId,
        t: &TensorVal,
        full: &Body,
    ) -> Option<Vec<Cut>> {
        if !self.may_split_store(buf, t) {
            return None;
        }
        let (reads, split_dims) = bounded_reads(full);
        let mut cuts = Vec::new();
        for d in sorted_dims(split_dims) {
            let on: Vec<&Bounded> = reads.iter().filter(|r| r.d == d).collect();
            let upper: Vec<&&Bounded> = on.iter().filter(|r| r.len.is_some()).collect();
            let Some(first) = on.first() else { continue };
            // One stride and length per dim (a pool's window); other masks keep one loop.
            if on.iter().any(|r| r.a != first.a) || upper.iter().any(|r| r.len != upper[0].len) {
                continue;
            }
            let (a, n) = (first.a, t.sizes[d]);
            // x >= ceil(-b / a) for every read checked against 0, x <= (len - 1 - b) / a for
            // every read checked against `len` (none: the reads are proved below it).
            let lo = on
                .iter()
                .filter(|r| r.len.is_none())
                .map(|r| -(r.b.div_euclid(a)))
                .max()
                .unwrap_or(0)
                .max(0);
            let hi = match upper.first() {
                None => n,
                Some(u) => {
                    let bmax = upper.iter().map(|r| r.b).max()?;
                    let num = u.len? + Size::Const(a - 1 - bmax);
                    // C's `/` rounds a negative numerator toward zero: one that may be
                    // negative is raised by a multiple of `a` first (`(num + a*t) // a - t`).
                    let t = match num.lower_bound(&|_| SYMBOL_MIN) {
                        Some(lb) if lb < 0 && a > 1 => (-lb + a - 1) / a,
                        Some(_) => 0,
                        None if a == 1 => 0,
                        None => continue,
                    };
                    (num + Size::Const(a * t)).floordiv(Size::Const(a)) - Size::Const(t)
                }
            };
            let (top, lo, hi, bot) = match (n.as_const(), hi.as_const()) {
                (Some(n), Some(h)) => {
                    let lo = lo.min(n);
                    let c = |v| Size::Const(v);
                    (c(lo), c(lo), c(h.clamp(lo, n)), c(h.clamp(lo, n)))
                }
                _ => {
                    // The end of the left border: `lo`, proved inside, else clipped by `n` at
                    // run time.
                    let lo = Size::Const(lo);
                    let top = if nonneg(n - lo) {
                        lo
                    } else {
                        Size::expr(lo.to_expr().min_with(&n.to_expr(), &|_| SYMBOL_MIN))
                    };
                    // The right border must fit in `n`. Where `hi < lo` the interior's loop runs
                    // zero times and the right border overlaps the left one, writing the same
                    // values again.
                    if !nonneg(n - hi) {
                        continue;
                    }
                    // An end proved at `n` (equal expressions that do not simplify alike).
                    let hi = if nonneg(hi - n) { n } else { hi };
                    // The right border starts at `max(hi, 0)` (`hi` is negative where the
                    // last window's end is before the first one's start).
                    let bot = if nonneg(hi) {
                        hi
                    } else {
                        Size::expr(
                            hi.to_expr()
                                .max_with(&SymExpr::constant(0), &|_| SYMBOL_MIN),
                        )
                    };
                    (top, lo, hi, bot)
                }
            };
            if lo == Size::Const(0) && hi == n {
                continue;
            }
            cuts.push(Cut {
                d,
                top,
                lo,
                hi,
                bot,
            });
        }
        (!cuts.is_empty()).then_some(cuts)
    }

    /// Stores `t` into `buf` by the ranges of `cuts` (see the module doc): the borders of each
    /// cut dim, and the interior of all.
    pub(super) fn store_by_interior(
        &mut self,
        buf: BufId,
        t: &TensorVal,
        cuts: &[Cut],
        stored: &Stored,
    ) {
        let mut pieces = Vec::new();
        pieces_of(
            cuts,
            t.sizes.clone(),
            vec![Size::Const(0); t.ndim()],
            &mut pieces,
        );
        let strides = self.ir.buffers[buf].strides.clone();
        let dtype = self.ir.buffers[buf].dtype;
        for (sizes, start) in pieces {
            if sizes.iter().any(|s| s.as_const().is_some_and(|c| c <= 0)) {
                continue;
            }
            let mut b = BodyBuilder::new(sizes.clone());
            b.stored = stored.clone();
            let vars: Vec<Idx> = b
                .vars()
                .into_iter()
                .zip(&start)
                .map(|(v, s)| v.add_const(*s))
                .collect();
            let v = t.load(&mut b, &vars);
            let v = b.cast(v, dtype);
            let offset = strides
                .iter()
                .zip(&start)
                .fold(Size::Const(0), |o, (st, s)| o + *st * *s);
            self.ir.nodes.push(IrNode::Pointwise {
                out: buf,
                sizes,
                body: b.finish(v),
                offset,
            });
        }
    }
}

fn sorted_dims(mut dims: Vec<usize>) -> Vec<usize> {
    dims.sort_unstable();
    dims.dedup();
    dims
}

/// The ranges (sizes and starts) of every piece: per cut dim one of its left border, right
/// border and interior ranges, the other dims whole; the interior of all last. A border piece
/// spans the interior range of the other cut dims (the corners are pieces of their own), so
/// along those its windows are proved inside and only the dims it borders are checked.
fn pieces_of(
    cuts: &[Cut],
    sizes: Vec<Size>,
    start: Vec<Size>,
    out: &mut Vec<(Vec<Size>, Vec<Size>)>,
) {
    let Some((c, rest)) = cuts.split_first() else {
        out.push((sizes, start));
        return;
    };
    let n = sizes[c.d];
    for (from, to) in [(Size::Const(0), c.top), (c.bot, n), (c.lo, c.hi)] {
        let (mut sz, mut st) = (sizes.clone(), start.clone());
        sz[c.d] = to - from;
        st[c.d] = from;
        pieces_of(rest, sz, st, out);
    }
}
