//! Index expressions: how a loop nest's variables address a buffer.
//!
//! Views become index arithmetic instead of copies, so every load carries an expression over the
//! loop variables. Expressions are kept in a normal form (a sorted sum of `coefficient * atom` plus
//! a constant, where an atom is a variable, a floor division or a modulo) so that two loads of
//! the same element compare equal structurally: the scheduler decides fusion legality by that
//! comparison, the way Inductor compares `MemoryDep` indices. Simplification uses the variables'
//! ranges, which is what turns `reshape` round trips (`(i // 3) * 3 + i % 3`) back into `i`.
//!
//! Every index the lowering produces is non-negative (no negative-step slices exist in torch), so
//! floor division and C's truncating division agree.

use std::cmp::Ordering;

use crate::size::Size;

/// The least value of every size symbol: sizes 0 and 1 specialize in the shape environment, and
/// an int that reaches a size is guarded size-like (at least 2). Proofs below hold for every
/// assignment at or above it, so they hold for every assignment the guards admit.
pub const SYMBOL_MIN: i64 = 2;

fn sym_min(_: u32) -> i64 {
    SYMBOL_MIN
}

/// Whether `e >= 0` for every admitted assignment (exact for constants; a proof, never a
/// sample, for symbolic sizes).
fn proved_nonneg(e: Size) -> bool {
    e.lower_bound(&sym_min).is_some_and(|lo| lo >= 0)
}

/// Whether `a <= b` for every admitted assignment (both bounds known).
fn proved_le(a: Option<Size>, b: Option<Size>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => proved_nonneg(b - a),
        _ => false,
    }
}

/// A term of an index sum.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Atom {
    /// Loop variable `k` of the body it appears in.
    Var(u32),
    /// `floor(e / d)`, `d > 1`.
    FloorDiv(Box<Idx>, Size),
    /// `e mod d` (non-negative), `d > 1`.
    Mod(Box<Idx>, Size),
    /// `min(max(e, lo), hi)`: keeps a load in bounds where its value is not used (`cat` reads
    /// every input at every point and selects one). `e` itself may be negative.
    Clamp(Box<Idx>, Size, Size),
}

/// `sum(coef * atom) + constant`, terms sorted by atom, no zero coefficients. Coefficients and
/// the constant are sizes: `x0 * s1 + x1` is the atom `x0` with coefficient `s1` (products of
/// loop variables never occur in torch's indexing).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Idx {
    pub terms: Vec<(Atom, Size)>,
    pub constant: Size,
}

impl Default for Idx {
    fn default() -> Idx {
        Idx::constant(0)
    }
}

/// The normal form's order: atoms by kind, then their fields; sizes by
/// [`Size::structural_cmp`] (integer order for constants, so a static graph's terms keep the
/// order they had when coefficients were integers).
impl Ord for Atom {
    fn cmp(&self, o: &Atom) -> Ordering {
        let rank = |a: &Atom| match a {
            Atom::Var(_) => 0,
            Atom::FloorDiv(..) => 1,
            Atom::Mod(..) => 2,
            Atom::Clamp(..) => 3,
        };
        match (self, o) {
            (Atom::Var(a), Atom::Var(b)) => a.cmp(b),
            (Atom::FloorDiv(e, d), Atom::FloorDiv(f, g)) | (Atom::Mod(e, d), Atom::Mod(f, g)) => {
                e.cmp(f).then_with(|| d.structural_cmp(g))
            }
            (Atom::Clamp(e, a, b), Atom::Clamp(f, c, d)) => e
                .cmp(f)
                .then_with(|| a.structural_cmp(c))
                .then_with(|| b.structural_cmp(d)),
            _ => rank(self).cmp(&rank(o)),
        }
    }
}

impl PartialOrd for Atom {
    fn partial_cmp(&self, o: &Atom) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

/// Lexicographic over the terms, then the constant (the order a derived `Ord` gave).
impl Ord for Idx {
    fn cmp(&self, o: &Idx) -> Ordering {
        for ((a, c), (b, d)) in self.terms.iter().zip(&o.terms) {
            let k = a.cmp(b).then_with(|| c.structural_cmp(d));
            if k != Ordering::Equal {
                return k;
            }
        }
        self.terms
            .len()
            .cmp(&o.terms.len())
            .then_with(|| self.constant.structural_cmp(&o.constant))
    }
}

impl PartialOrd for Idx {
    fn partial_cmp(&self, o: &Idx) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

impl Idx {
    pub fn constant(c: impl Into<Size>) -> Idx {
        Idx {
            terms: Vec::new(),
            constant: c.into(),
        }
    }

    pub fn var(k: u32) -> Idx {
        Idx {
            terms: vec![(Atom::Var(k), Size::Const(1))],
            constant: Size::Const(0),
        }
    }

    fn atom(a: Atom) -> Idx {
        Idx {
            terms: vec![(a, Size::Const(1))],
            constant: Size::Const(0),
        }
    }

    /// The value, when the index is one integer (no loop variables, no symbols).
    pub fn as_constant(&self) -> Option<i64> {
        if self.terms.is_empty() {
            self.constant.as_const()
        } else {
            None
        }
    }

    pub fn add(&self, other: &Idx) -> Idx {
        let mut terms = self.terms.clone();
        terms.extend(other.terms.iter().cloned());
        normalize(terms, self.constant + other.constant)
    }

    pub fn add_const(&self, c: impl Into<Size>) -> Idx {
        Idx {
            terms: self.terms.clone(),
            constant: self.constant + c.into(),
        }
    }

    pub fn scale(&self, c: impl Into<Size>) -> Idx {
        let c = c.into();
        if c == 0 {
            return Idx::constant(0);
        }
        Idx {
            terms: self
                .terms
                .iter()
                .map(|(a, k)| (a.clone(), *k * c))
                .collect(),
            constant: self.constant * c,
        }
    }

    /// Smallest and largest value over the variables' ranges (`ranges[k]` is the extent of var
    /// k), as sizes; `None` where a symbolic coefficient's sign is not proved.
    pub fn bounds_sym(&self, ranges: &[Size]) -> (Option<Size>, Option<Size>) {
        let (mut lo, mut hi) = (Some(self.constant), Some(self.constant));
        for (a, c) in &self.terms {
            let (alo, ahi) = a.bounds(ranges);
            let (tlo, thi) = if proved_nonneg(*c) {
                (alo.map(|v| *c * v), ahi.map(|v| *c * v))
            } else if proved_nonneg(-*c) {
                (ahi.map(|v| *c * v), alo.map(|v| *c * v))
            } else {
                (None, None)
            };
            lo = lo.zip(tlo).map(|(x, y)| x + y);
            hi = hi.zip(thi).map(|(x, y)| x + y);
        }
        (lo, hi)
    }

    /// Smallest and largest value over constant ranges (an index without symbols).
    #[track_caller]
    pub fn bounds(&self, ranges: &[Size]) -> (i64, i64) {
        match self.bounds_sym(ranges) {
            (Some(lo), Some(hi)) => (
                lo.expect_const("constant index bounds"),
                hi.expect_const("constant index bounds"),
            ),
            _ => panic!("constant index bounds of a symbolic index"),
        }
    }

    /// Whether `self >= 0` at every point of the ranges, proved.
    pub fn proved_nonneg(&self, ranges: &[Size]) -> bool {
        self.bounds_sym(ranges).0.is_some_and(proved_nonneg)
    }

    /// Whether `0 <= self < d` over the ranges, proved.
    pub fn within(&self, d: Size, ranges: &[Size]) -> bool {
        let (lo, hi) = self.bounds_sym(ranges);
        lo.is_some_and(proved_nonneg) && proved_le(hi, Some(d - 1))
    }

    /// [`Idx::within`], also proving through floor divisions in the sizes
    /// ([`Size::lower_bound_floor`]): a loop over `[lo, (len + c) // k)` reads inside `len`.
    /// Only where every read of a window is decided at once (`lower::pool`): proving some reads
    /// of a window and masking the others made the symbolic pool kernel slower (session 20).
    pub fn within_floor(&self, d: Size, ranges: &[Size]) -> bool {
        let nonneg = |e: Size| e.lower_bound_floor(&sym_min).is_some_and(|v| v >= 0);
        match self.bounds_sym(ranges) {
            (Some(lo), Some(hi)) => nonneg(lo) && nonneg(d - 1 - hi),
            _ => false,
        }
    }

    /// Whether the index is outside `[0, d)` at every point of `ranges`, proved also through
    /// floor divisions: a pool's read past the end in its right border piece (`2 * (s // 2) + 1
    /// >= s`), which `lower::pool` leaves out instead of masking at run time.
    pub fn outside_floor(&self, d: Size, ranges: &[Size]) -> bool {
        let nonneg = |e: Size| e.lower_bound_floor(&sym_min).is_some_and(|v| v >= 0);
        let (lo, hi) = self.bounds_sym(ranges);
        hi.is_some_and(|hi| nonneg(Size::Const(-1) - hi)) || lo.is_some_and(|lo| nonneg(lo - d))
    }

    /// `floor(self / d)` for `d > 0`, simplified where the simplification is proved for every
    /// admitted size.
    pub fn floordiv(&self, d: impl Into<Size>, ranges: &[Size]) -> Idx {
        let d = d.into();
        if let Some(c) = d.as_const() {
            assert!(c > 0, "index division by {c}");
        }
        if d == 1 {
            return self.clone();
        }
        let (q, r) = self.split_multiple(d);
        let rest = if r.within(d, ranges) {
            Idx::constant(0)
        } else if let (Some(c), Some(dc)) = (r.as_constant(), d.as_const()) {
            Idx::constant(c.div_euclid(dc))
        } else if let Some((g, q2, _)) = r.split_common_factor(d, ranges) {
            q2.floordiv(d.exact_div(g).expect("g divides d"), ranges)
        } else if let [(Atom::FloorDiv(inner, d0), c)] = r.terms.as_slice() {
            // floor(floor(e / a) / b) == floor(e / (a * b)) for positive a and b.
            if *c == 1 && r.constant == 0 {
                inner.floordiv(*d0 * d, ranges)
            } else {
                Idx::atom(Atom::FloorDiv(Box::new(r.clone()), d))
            }
        } else {
            Idx::atom(Atom::FloorDiv(Box::new(r), d))
        };
        q.add(&rest)
    }

    /// `self mod d` for `d > 0`, simplified where proved.
    pub fn modulo(&self, d: impl Into<Size>, ranges: &[Size]) -> Idx {
        let d = d.into();
        if let Some(c) = d.as_const() {
            assert!(c > 0, "index modulo by {c}");
        }
        if d == 1 {
            return Idx::constant(0);
        }
        let (_, r) = self.split_multiple(d);
        if r.within(d, ranges) {
            r
        } else if let (Some(c), Some(dc)) = (r.as_constant(), d.as_const()) {
            Idx::constant(c.rem_euclid(dc))
        } else if let Some((g, q2, r2)) = r.split_common_factor(d, ranges) {
            q2.modulo(d.exact_div(g).expect("g divides d"), ranges)
                .scale(g)
                .add(&r2)
        } else {
            Idx::atom(Atom::Mod(Box::new(r), d))
        }
    }

    /// `(g, q, r)` with `self == g * q + r`, `g > 1` dividing `d` and `0 <= r < g` over the
    /// ranges: then `floor(self / d) == floor(q / (d / g))` and
    /// `self mod d == g * (q mod (d / g)) + r`. A flattened view of a view
    /// (`(256*i + j) // 65536` with `j < 256`) becomes `i // 256`, which stays out of the
    /// vectorized inner loop over `j`. The candidates are the constant common factors of `d`
    /// and the coefficients, and the symbolic coefficients that divide `d` exactly.
    fn split_common_factor(&self, d: Size, ranges: &[Size]) -> Option<(Size, Idx, Idx)> {
        fn gcd(a: i64, b: i64) -> i64 {
            if b == 0 {
                a
            } else {
                gcd(b, a % b)
            }
        }
        let mut consts: Vec<i64> = Vec::new();
        let mut syms: Vec<Size> = Vec::new();
        for (_, c) in &self.terms {
            match (c.as_const(), d.as_const()) {
                (Some(c), Some(d)) => consts.push(gcd(c.abs(), d)),
                (Some(_), None) => {}
                (None, _) => {
                    if d.exact_div(*c).is_some() {
                        syms.push(*c);
                    }
                }
            }
        }
        consts.retain(|g| *g > 1);
        consts.sort_unstable();
        consts.dedup();
        let try_g = |g: Size| {
            let (q, r) = self.split_multiple(g);
            (r.within(g, ranges) && !q.terms.is_empty()).then_some((g, q, r))
        };
        syms.into_iter()
            .find_map(try_g)
            .or_else(|| consts.into_iter().rev().find_map(|g| try_g(Size::Const(g))))
    }

    /// Splits into `(q, r)` with `self == d * q + r` where `q` collects the terms whose
    /// coefficients `d` divides exactly (so `floor(self / d) == q + floor(r / d)` exactly).
    fn split_multiple(&self, d: Size) -> (Idx, Idx) {
        let mut q = Vec::new();
        let mut r = Vec::new();
        for (a, c) in &self.terms {
            match c.exact_div(d) {
                Some(k) => q.push((a.clone(), k)),
                None => r.push((a.clone(), *c)),
            }
        }
        let (qc, rc) = match (self.constant.as_const(), d.as_const()) {
            (Some(c), Some(dc)) => (Size::Const(c.div_euclid(dc)), Size::Const(c.rem_euclid(dc))),
            _ => match self.constant.exact_div(d) {
                Some(k) => (k, Size::Const(0)),
                None => (Size::Const(0), self.constant),
            },
        };
        (normalize(q, qc), normalize(r, rc))
    }

    /// `min(max(self, lo), hi)`, simplified away when the bounds are proved to hold.
    pub fn clamp_to(&self, lo: impl Into<Size>, hi: impl Into<Size>, ranges: &[Size]) -> Idx {
        let (lo, hi) = (lo.into(), hi.into());
        let (elo, ehi) = self.bounds_sym(ranges);
        if proved_le(Some(lo), elo) && proved_le(ehi, Some(hi)) {
            self.clone()
        } else if proved_le(ehi, Some(lo)) {
            Idx::constant(lo)
        } else if proved_le(Some(hi), elo) {
            Idx::constant(hi)
        } else {
            Idx::atom(Atom::Clamp(Box::new(self.clone()), lo, hi))
        }
    }

    /// Value at a point (`vars[k]` is var k) of an index without symbols.
    pub fn eval(&self, vars: &[i64]) -> i64 {
        self.eval_with(vars, &|k| {
            panic!("symbol s{k} in an index evaluated without sizes")
        })
    }

    /// Value at a point, with the symbols' values from `sym`.
    pub fn eval_with(&self, vars: &[i64], sym: &dyn Fn(u32) -> i64) -> i64 {
        let size = |s: Size| s.eval(sym).expect("an index's size overflows");
        let mut v = size(self.constant);
        for (a, c) in &self.terms {
            v += size(*c) * a.eval_with(vars, sym);
        }
        v
    }

    /// Whether var `k` occurs.
    pub fn uses_var(&self, k: u32) -> bool {
        self.terms.iter().any(|(a, _)| match a {
            Atom::Var(v) => *v == k,
            Atom::FloorDiv(e, _) | Atom::Mod(e, _) | Atom::Clamp(e, _, _) => e.uses_var(k),
        })
    }

    /// Renames variables (`map[k]` is the new expression for var k).
    pub fn substitute(&self, map: &[Idx], ranges: &[Size]) -> Idx {
        let mut out = Idx::constant(self.constant);
        for (a, c) in &self.terms {
            let e = match a {
                Atom::Var(k) => map[*k as usize].clone(),
                Atom::FloorDiv(e, d) => e.substitute(map, ranges).floordiv(*d, ranges),
                Atom::Mod(e, d) => e.substitute(map, ranges).modulo(*d, ranges),
                Atom::Clamp(e, lo, hi) => e.substitute(map, ranges).clamp_to(*lo, *hi, ranges),
            };
            out = out.add(&e.scale(*c));
        }
        out
    }
}

impl Atom {
    fn bounds(&self, ranges: &[Size]) -> (Option<Size>, Option<Size>) {
        match self {
            Atom::Var(k) => {
                let r = ranges[*k as usize];
                let hi = match r.as_const() {
                    Some(r) => Size::Const((r - 1).max(0)),
                    // A symbolic extent is at least 2.
                    None => r - 1,
                };
                (Some(Size::Const(0)), Some(hi))
            }
            Atom::FloorDiv(e, d) => {
                let (lo, hi) = e.bounds_sym(ranges);
                (lo.map(|v| v.floordiv(*d)), hi.map(|v| v.floordiv(*d)))
            }
            Atom::Mod(_, d) => (Some(Size::Const(0)), Some(*d - 1)),
            Atom::Clamp(e, lo, hi) => match (e.bounds_sym(ranges), lo.as_const(), hi.as_const()) {
                ((Some(a), Some(b)), Some(l), Some(h)) if a.is_const() && b.is_const() => {
                    let (a, b) = (a.expect_const("a clamp"), b.expect_const("a clamp"));
                    (
                        Some(Size::Const(a.clamp(l, h))),
                        Some(Size::Const(b.clamp(l, h))),
                    )
                }
                // The clamp's own bounds (`lo <= hi` by construction).
                _ => (Some(*lo), Some(*hi)),
            },
        }
    }

    fn eval_with(&self, vars: &[i64], sym: &dyn Fn(u32) -> i64) -> i64 {
        let size = |s: Size| s.eval(sym).expect("an index's size overflows");
        match self {
            Atom::Var(k) => vars[*k as usize],
            Atom::FloorDiv(e, d) => e.eval_with(vars, sym).div_euclid(size(*d)),
            Atom::Mod(e, d) => e.eval_with(vars, sym).rem_euclid(size(*d)),
            Atom::Clamp(e, lo, hi) => e.eval_with(vars, sym).clamp(size(*lo), size(*hi)),
        }
    }
}

/// Sorts, merges equal atoms, drops zeros, and folds `d*c*(e // d) + c*(e % d)` into `c*e`.
fn normalize(mut terms: Vec<(Atom, Size)>, constant: Size) -> Idx {
    terms.sort_by(|a, b| a.0.cmp(&b.0));
    let mut merged: Vec<(Atom, Size)> = Vec::with_capacity(terms.len());
    for (a, c) in terms {
        match merged.last_mut() {
            Some((la, lc)) if *la == a => *lc = *lc + c,
            _ => merged.push((a, c)),
        }
    }
    merged.retain(|(_, c)| *c != 0);
    // Fold div/mod pairs of the same expression.
    for i in 0..merged.len() {
        let Atom::FloorDiv(e, d) = &merged[i].0 else {
            continue;
        };
        let Some(c) = merged[i].1.exact_div(*d) else {
            continue;
        };
        let modatom = Atom::Mod(e.clone(), *d);
        if let Some(j) = merged.iter().position(|(a, k)| *a == modatom && *k == c) {
            let e = (**e).clone();
            let mut rest: Vec<(Atom, Size)> = merged
                .iter()
                .enumerate()
                .filter(|(t, _)| *t != i && *t != j)
                .map(|(_, x)| x.clone())
                .collect();
            let scaled = e.scale(c);
            rest.extend(scaled.terms);
            return normalize(rest, constant + scaled.constant);
        }
    }
    Idx {
        terms: merged,
        constant,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::size::consts;

    #[test]
    fn reshape_round_trip_simplifies() {
        let r = consts(&[6]);
        let i = Idx::var(0);
        let row = i.floordiv(3, &r);
        let col = i.modulo(3, &r);
        assert_eq!(row.scale(3).add(&col), i);
    }

    #[test]
    fn small_ranges_fold() {
        let r = consts(&[2, 3]);
        let lin = Idx::var(0).scale(3).add(&Idx::var(1));
        assert_eq!(lin.floordiv(3, &r), Idx::var(0));
        assert_eq!(lin.modulo(3, &r), Idx::var(1));
        assert_eq!(Idx::var(1).floordiv(3, &r), Idx::constant(0));
    }

    #[test]
    fn common_factor_leaves_the_inner_variable() {
        // [2, 256, 256] viewed as [512, 256]: row x0, column x1.
        let r = consts(&[512, 256]);
        let flat = Idx::var(0).scale(256).add(&Idx::var(1));
        assert_eq!(flat.floordiv(65536, &r), Idx::var(0).floordiv(256, &r));
        assert_eq!(
            flat.modulo(65536, &r),
            Idx::var(0).modulo(256, &r).scale(256).add(&Idx::var(1))
        );
        // Recomposing batch and row gives the flat index back.
        let addr = flat
            .floordiv(65536, &r)
            .scale(65536)
            .add(&flat.modulo(65536, &r));
        assert_eq!(addr, flat);
        for x0 in 0..512 {
            for x1 in [0, 1, 255] {
                let v = 256 * x0 + x1;
                assert_eq!(flat.floordiv(65536, &r).eval(&[x0, x1]), v / 65536);
                assert_eq!(flat.modulo(65536, &r).eval(&[x0, x1]), v % 65536);
            }
        }
        // A remainder that can reach the factor is left alone.
        let r2 = consts(&[512, 257]);
        assert!(flat
            .floordiv(65536, &r2)
            .terms
            .iter()
            .any(|(a, _)| matches!(a, Atom::FloorDiv(e, d) if *d == 65536 && e.uses_var(1))));
    }

    #[test]
    fn eval_matches_python_semantics() {
        let r = consts(&[10]);
        let e = Idx::var(0).scale(5).add_const(3).floordiv(4, &r);
        for v in 0..10 {
            assert_eq!(e.eval(&[v]), (5 * v + 3) / 4);
        }
    }
}
