//! The loop IR's size type (issue 18, the symbolic inductor; docs/dynamic-shapes.md, "The
//! inductor on symbolic sizes").
//!
//! A [`Size`] is a size, stride or offset: a constant, or an `fx::SymExpr` over the shape
//! environment's symbols. It is the same expression type fx's metadata holds (not a second
//! one), so equal polynomials are equal sizes and the scheduler's comparisons need no solver.
//! It is `Copy`, as the `i64` it replaces: a symbolic expression is interned once per process
//! and the size holds its id, so the IR's many size reads stay as cheap as they were and a
//! static graph never takes the interner's lock.
//!
//! Every path that prints or decides on a size asks [`Size::as_const`] first and does exactly
//! what it did with the `i64`, so a static graph's C is byte-identical. Decisions on a symbolic
//! size are taken only where they are proved for every size the guards admit
//! ([`Size::proved_ge`]); never on a hint.

use std::cmp::Ordering;
use std::collections::HashMap;
use std::fmt;
use std::sync::{OnceLock, RwLock};

use fx::SymExpr;

/// A size, stride or offset: a constant, or an interned symbolic expression (never a constant
/// one: [`Size::expr`] folds those to `Const`, so `as_const` is exact).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub enum Size {
    Const(i64),
    Sym(SymId),
}

/// The id of an interned expression (see [`Size`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SymId(u32);

/// Interned expressions: the process keeps every symbolic expression the IR made (a few per
/// symbolic graph; expressions of a graph recur, and equal ones share one id).
#[derive(Default)]
struct Interner {
    exprs: Vec<SymExpr>,
    ids: HashMap<SymExpr, u32>,
}

fn interner() -> &'static RwLock<Interner> {
    static I: OnceLock<RwLock<Interner>> = OnceLock::new();
    I.get_or_init(Default::default)
}

impl Size {
    /// The size of an expression (a constant one is `Const`).
    pub fn expr(e: SymExpr) -> Size {
        if let Some(c) = e.as_const() {
            return Size::Const(c);
        }
        if let Some(&id) = interner().read().unwrap().ids.get(&e) {
            return Size::Sym(SymId(id));
        }
        let mut w = interner().write().unwrap();
        if let Some(&id) = w.ids.get(&e) {
            return Size::Sym(SymId(id));
        }
        let id = u32::try_from(w.exprs.len()).expect("fewer than 2^32 size expressions");
        w.exprs.push(e.clone());
        w.ids.insert(e, id);
        Size::Sym(SymId(id))
    }

    /// Symbol `k` (`s{k}`).
    pub fn symbol(k: u32) -> Size {
        Size::expr(SymExpr::symbol(k))
    }

    /// The value, when the size has no symbols.
    pub fn as_const(self) -> Option<i64> {
        match self {
            Size::Const(c) => Some(c),
            Size::Sym(_) => None,
        }
    }

    /// The value of a size on a path that does not take symbolic sizes yet (the design's later
    /// steps). A symbolic graph does not reach these paths: the lowering declines it first, so
    /// reaching one with a symbol is a bug, reported with `what`.
    #[track_caller]
    pub fn expect_const(self, what: &str) -> i64 {
        match self {
            Size::Const(c) => c,
            Size::Sym(_) => panic!("symbolic size {self} reached {what}, which takes constants"),
        }
    }

    pub fn is_const(self) -> bool {
        matches!(self, Size::Const(_))
    }

    /// The expression (a constant one for `Const`).
    pub fn to_expr(self) -> SymExpr {
        match self {
            Size::Const(c) => SymExpr::constant(c),
            Size::Sym(SymId(id)) => interner().read().unwrap().exprs[id as usize].clone(),
        }
    }

    /// The value under an assignment of the symbols (`None` on overflow or division by zero).
    pub fn eval(self, value: &dyn Fn(u32) -> i64) -> Option<i64> {
        match self {
            Size::Const(c) => Some(c),
            // Read in place: a clone of the expression per evaluation was most of a new
            // assignment's cost (`IrGraph::at` evaluates every size of the graph). `value`
            // reads a table, never a `Size`, so the lock is not taken again inside.
            Size::Sym(SymId(id)) => interner().read().unwrap().exprs[id as usize].eval(value),
        }
    }

    /// Every symbol the size reads.
    pub fn symbols(self) -> Vec<u32> {
        match self {
            Size::Const(_) => Vec::new(),
            Size::Sym(SymId(id)) => interner().read().unwrap().exprs[id as usize].symbols(),
        }
    }

    /// Python's `self // d` (sizes are non-negative, so C's `/` agrees).
    pub fn floordiv(self, d: Size) -> Size {
        match (self, d) {
            (Size::Const(a), Size::Const(b)) if b != 0 => Size::Const(a.div_euclid(b)),
            _ => Size::expr(self.to_expr().floordiv(&d.to_expr())),
        }
    }

    /// Python's `self % d`.
    pub fn modulo(self, d: Size) -> Size {
        match (self, d) {
            (Size::Const(a), Size::Const(b)) if b != 0 => Size::Const(a.rem_euclid(b)),
            _ => Size::expr(self.to_expr().modulo(&d.to_expr())),
        }
    }

    /// The exact quotient `self / d` when `d` divides every term of `self` (`s1*8` by `8` or by
    /// `s1`); `None` when that is not known for every assignment.
    pub fn exact_div(self, d: Size) -> Option<Size> {
        match (self, d) {
            (Size::Const(a), Size::Const(b)) => {
                (b != 0 && a % b == 0).then_some(Size::Const(a / b))
            }
            _ => {
                let q = self.to_expr().floordiv(&d.to_expr());
                // Exact when multiplying back gives `self` as a polynomial.
                (Size::expr(q.mul(&d.to_expr())) == self).then(|| Size::expr(q))
            }
        }
    }

    /// A lower bound over every admitted assignment (each symbol `k` at least `min(k)`), or
    /// `None` when none is proved (a negative coefficient, a division atom).
    pub fn lower_bound(self, min: &dyn Fn(u32) -> i64) -> Option<i64> {
        match self {
            Size::Const(c) => Some(c),
            Size::Sym(_) => self.to_expr().lower_bound(min),
        }
    }

    /// A lower bound also through floor divisions by constants ([`SymExpr::lower_bound_floor`]).
    pub fn lower_bound_floor(self, min: &dyn Fn(u32) -> i64) -> Option<i64> {
        match self {
            Size::Const(c) => Some(c),
            Size::Sym(_) => self.to_expr().lower_bound_floor(min),
        }
    }

    /// `max(self, 1)`: an element count used as a work estimate (a symbolic size is at least
    /// 2 already).
    pub fn at_least_one(self) -> Size {
        match self {
            Size::Const(c) => Size::Const(c.max(1)),
            Size::Sym(_) => self,
        }
    }

    /// The product, saturating for constants (a work estimate printed into an OpenMP test;
    /// a symbolic product is evaluated by C at run time).
    pub fn saturating_mul(self, o: Size) -> Size {
        match (self, o) {
            (Size::Const(a), Size::Const(b)) => Size::Const(a.saturating_mul(b)),
            _ => self * o,
        }
    }

    /// Whether `self >= other` holds for every admitted assignment (proved, not sampled).
    pub fn proved_ge(self, other: Size, min: &dyn Fn(u32) -> i64) -> bool {
        (self - other).lower_bound(min).is_some_and(|lo| lo >= 0)
    }
}

impl From<i64> for Size {
    fn from(c: i64) -> Size {
        Size::Const(c)
    }
}

impl std::ops::Add for Size {
    type Output = Size;
    fn add(self, o: Size) -> Size {
        match (self, o) {
            (Size::Const(a), Size::Const(b)) => Size::Const(a + b),
            _ => Size::expr(self.to_expr().add(&o.to_expr())),
        }
    }
}

impl std::ops::Sub for Size {
    type Output = Size;
    fn sub(self, o: Size) -> Size {
        match (self, o) {
            (Size::Const(a), Size::Const(b)) => Size::Const(a - b),
            _ => Size::expr(self.to_expr().sub(&o.to_expr())),
        }
    }
}

impl std::ops::Mul for Size {
    type Output = Size;
    fn mul(self, o: Size) -> Size {
        match (self, o) {
            (Size::Const(a), Size::Const(b)) => Size::Const(a * b),
            _ => Size::expr(self.to_expr().mul(&o.to_expr())),
        }
    }
}

impl std::ops::Neg for Size {
    type Output = Size;
    fn neg(self) -> Size {
        match self {
            Size::Const(a) => Size::Const(-a),
            Size::Sym(_) => Size::expr(self.to_expr().neg()),
        }
    }
}

impl std::ops::Add<i64> for Size {
    type Output = Size;
    fn add(self, o: i64) -> Size {
        self + Size::Const(o)
    }
}

impl std::ops::Sub<i64> for Size {
    type Output = Size;
    fn sub(self, o: i64) -> Size {
        self - Size::Const(o)
    }
}

impl std::ops::Mul<i64> for Size {
    type Output = Size;
    fn mul(self, o: i64) -> Size {
        self * Size::Const(o)
    }
}

impl std::iter::Product for Size {
    fn product<I: Iterator<Item = Size>>(it: I) -> Size {
        it.fold(Size::Const(1), |a, b| a * b)
    }
}

impl<'a> std::iter::Product<&'a Size> for Size {
    fn product<I: Iterator<Item = &'a Size>>(it: I) -> Size {
        it.fold(Size::Const(1), |a, b| a * *b)
    }
}

impl std::iter::Sum for Size {
    fn sum<I: Iterator<Item = Size>>(it: I) -> Size {
        it.fold(Size::Const(0), |a, b| a + b)
    }
}

impl PartialEq<i64> for Size {
    fn eq(&self, o: &i64) -> bool {
        *self == Size::Const(*o)
    }
}

impl Size {
    /// A total order for normal forms that sort by size: constants as integers (a static
    /// graph's terms keep today's order), symbolic sizes after every constant, among themselves
    /// by their expressions (not by interning order, which depends on what the process lowered
    /// before). Structural, not numeric: `Size` has no `Ord`, so no comparison of a symbolic
    /// size with a threshold can compile by accident.
    pub fn structural_cmp(&self, o: &Size) -> Ordering {
        match (self, o) {
            (Size::Const(a), Size::Const(b)) => a.cmp(b),
            (Size::Const(_), Size::Sym(_)) => Ordering::Less,
            (Size::Sym(_), Size::Const(_)) => Ordering::Greater,
            (Size::Sym(a), Size::Sym(b)) if a == b => Ordering::Equal,
            _ => self.to_expr().cmp(&o.to_expr()),
        }
    }
}

impl fmt::Debug for Size {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Size::Const(c) => write!(f, "{c}"),
            Size::Sym(_) => write!(f, "{}", self.to_expr()),
        }
    }
}

/// C notation, as the kernels print sizes: a constant as its literal (what the `i64` printed,
/// so a static graph's C is unchanged), a symbol as `s{k}` (an `int64_t` the kernel reads from
/// its size argument), an expression parenthesized, with C's `/` and `%` for floor division
/// and modulo (sizes are non-negative, where the two agree) and `TF_MAXI`/`TF_MINI` for `max`
/// and `min`. `Debug` prints Python notation.
impl fmt::Display for Size {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Size::Const(c) => write!(f, "{c}"),
            Size::Sym(_) => {
                let e = self.to_expr();
                // `max`/`min` atoms (torch's `sym_max`/`sym_min`, `x[: max(T, S) - 1]`) as the
                // preludes' integer macros: C has no `max` function (the kernel library failed to
                // load, "undefined symbol: max"; a range split's clipped cut, `lower::interior`).
                let s = e
                    .render(&|k| format!("s{k}"))
                    .replace(" // ", " / ")
                    .replace("max(", "TF_MAXI(")
                    .replace("min(", "TF_MINI(");
                if e.as_symbol().is_some() {
                    f.write_str(&s)
                } else {
                    write!(f, "({s})")
                }
            }
        }
    }
}

/// Sizes of constants.
pub fn consts(xs: &[i64]) -> Vec<Size> {
    xs.iter().map(|&c| Size::Const(c)).collect()
}

/// The constants of sizes on a path that takes constants only (see [`Size::expect_const`]).
#[track_caller]
pub fn expect_consts(xs: &[Size], what: &str) -> Vec<i64> {
    xs.iter().map(|s| s.expect_const(what)).collect()
}

/// Up to this many dimensions, [`ConstVec`] lives on the stack.
const INLINE_DIMS: usize = 12;

/// Constant sizes of one tensor without a heap allocation (the runtime reads a buffer's layout
/// on every call; an allocation per buffer would show in a small graph's per-call time).
pub struct ConstVec {
    len: usize,
    inline: [i64; INLINE_DIMS],
    heap: Vec<i64>,
}

impl std::ops::Deref for ConstVec {
    type Target = [i64];
    fn deref(&self) -> &[i64] {
        if self.len <= INLINE_DIMS {
            &self.inline[..self.len]
        } else {
            &self.heap
        }
    }
}

/// [`expect_consts`] without a heap allocation for tensors of at most 12 dimensions.
#[track_caller]
pub fn const_vec(xs: &[Size], what: &str) -> ConstVec {
    let mut v = ConstVec {
        len: xs.len(),
        inline: [0; INLINE_DIMS],
        heap: Vec::new(),
    };
    if xs.len() <= INLINE_DIMS {
        for (d, s) in v.inline.iter_mut().zip(xs) {
            *d = s.expect_const(what);
        }
    } else {
        v.heap = expect_consts(xs, what);
    }
    v
}

/// The constants of sizes that have no symbols (`None` if one has).
pub fn as_consts(xs: &[Size]) -> Option<Vec<i64>> {
    xs.iter().map(|s| s.as_const()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(k: u32) -> Size {
        Size::symbol(k)
    }

    #[test]
    fn constants_stay_constants() {
        let a = Size::from(6) * 7 + 1 - Size::from(3);
        assert_eq!(a, Size::Const(40));
        assert_eq!(a.as_const(), Some(40));
        assert_eq!((s(0) - s(0)).as_const(), Some(0));
        assert_eq!((s(0) * 4).floordiv(Size::from(4)), s(0));
    }

    #[test]
    fn equal_polynomials_are_equal_sizes() {
        assert_eq!(s(0) * s(1), s(1) * s(0));
        assert_eq!((s(0) + 1) * 2, s(0) * 2 + 2);
        assert_ne!(s(0), s(1));
        let mut h = std::collections::HashSet::new();
        h.insert(s(0) * 3);
        assert!(h.contains(&(s(0) + s(0) + s(0))));
    }

    #[test]
    fn order_puts_constants_first_in_integer_order() {
        let mut v = vec![s(1), Size::from(5), s(0), Size::from(-2)];
        v.sort_by(Size::structural_cmp);
        assert_eq!(v, vec![Size::from(-2), Size::from(5), s(0), s(1)]);
    }

    #[test]
    fn exact_division_is_polynomial() {
        assert_eq!((s(1) * 8).exact_div(Size::from(8)), Some(s(1)));
        assert_eq!((s(1) * 8).exact_div(s(1)), Some(Size::from(8)));
        assert_eq!((s(1) * 8 + 1).exact_div(Size::from(8)), None);
        assert_eq!(s(1).exact_div(Size::from(2)), None);
    }

    #[test]
    fn proofs_hold_for_every_admitted_size() {
        let min = |_| 2;
        assert!(s(0).proved_ge(Size::from(2), &min));
        assert!(!s(0).proved_ge(Size::from(3), &min));
        // s0 - s1 is not known to be non-negative.
        assert!(!s(0).proved_ge(s(1), &min));
        assert_eq!((s(0) * 2 + 3).eval(&|k| [5, 9][k as usize]), Some(13));
    }
}
