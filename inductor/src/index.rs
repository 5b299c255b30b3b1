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

/// A term of an index sum.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Atom {
    /// Loop variable `k` of the body it appears in.
    Var(u32),
    /// `floor(e / d)`, `d > 1`.
    FloorDiv(Box<Idx>, i64),
    /// `e mod d` (non-negative), `d > 1`.
    Mod(Box<Idx>, i64),
    /// `min(max(e, lo), hi)`: keeps a load in bounds where its value is not used (`cat` reads
    /// every input at every point and selects one). `e` itself may be negative.
    Clamp(Box<Idx>, i64, i64),
}

/// `sum(coef * atom) + constant`, terms sorted by atom, no zero coefficients.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Idx {
    pub terms: Vec<(Atom, i64)>,
    pub constant: i64,
}

impl Idx {
    pub fn constant(c: i64) -> Idx {
        Idx {
            terms: Vec::new(),
            constant: c,
        }
    }

    pub fn var(k: u32) -> Idx {
        Idx {
            terms: vec![(Atom::Var(k), 1)],
            constant: 0,
        }
    }

    fn atom(a: Atom) -> Idx {
        Idx {
            terms: vec![(a, 1)],
            constant: 0,
        }
    }

    pub fn as_constant(&self) -> Option<i64> {
        self.terms.is_empty().then_some(self.constant)
    }

    pub fn add(&self, other: &Idx) -> Idx {
        let mut terms = self.terms.clone();
        terms.extend(other.terms.iter().cloned());
        normalize(terms, self.constant + other.constant)
    }

    pub fn add_const(&self, c: i64) -> Idx {
        Idx {
            terms: self.terms.clone(),
            constant: self.constant + c,
        }
    }

    pub fn scale(&self, c: i64) -> Idx {
        if c == 0 {
            return Idx::constant(0);
        }
        Idx {
            terms: self.terms.iter().map(|(a, k)| (a.clone(), k * c)).collect(),
            constant: self.constant * c,
        }
    }

    /// Smallest and largest value over the variables' ranges (`ranges[k]` is the extent of var k).
    pub fn bounds(&self, ranges: &[i64]) -> (i64, i64) {
        let (mut lo, mut hi) = (self.constant, self.constant);
        for (a, c) in &self.terms {
            let (alo, ahi) = a.bounds(ranges);
            if *c >= 0 {
                lo += c * alo;
                hi += c * ahi;
            } else {
                lo += c * ahi;
                hi += c * alo;
            }
        }
        (lo, hi)
    }

    /// `floor(self / d)` for `d > 0`, simplified.
    pub fn floordiv(&self, d: i64, ranges: &[i64]) -> Idx {
        assert!(d > 0, "index division by {d}");
        if d == 1 {
            return self.clone();
        }
        let (q, r) = self.split_multiple(d);
        let (lo, hi) = r.bounds(ranges);
        let rest = if lo >= 0 && hi < d {
            Idx::constant(0)
        } else if let Some(c) = r.as_constant() {
            Idx::constant(c.div_euclid(d))
        } else if let Some((g, q2, _)) = r.split_common_factor(d, ranges) {
            q2.floordiv(d / g, ranges)
        } else if let [(Atom::FloorDiv(inner, d0), 1)] = r.terms.as_slice() {
            // floor(floor(e / a) / b) == floor(e / (a * b)) (r has no constant here by construction).
            if r.constant == 0 {
                inner.floordiv(d0 * d, ranges)
            } else {
                Idx::atom(Atom::FloorDiv(Box::new(r.clone()), d))
            }
        } else {
            Idx::atom(Atom::FloorDiv(Box::new(r), d))
        };
        q.add(&rest)
    }

    /// `self mod d` for `d > 0`, simplified.
    pub fn modulo(&self, d: i64, ranges: &[i64]) -> Idx {
        assert!(d > 0, "index modulo by {d}");
        if d == 1 {
            return Idx::constant(0);
        }
        let (_, r) = self.split_multiple(d);
        let (lo, hi) = r.bounds(ranges);
        if lo >= 0 && hi < d {
            r
        } else if let Some(c) = r.as_constant() {
            Idx::constant(c.rem_euclid(d))
        } else if let Some((g, q2, r2)) = r.split_common_factor(d, ranges) {
            q2.modulo(d / g, ranges).scale(g).add(&r2)
        } else {
            Idx::atom(Atom::Mod(Box::new(r), d))
        }
    }

    /// `(g, q, r)` with `self == g * q + r`, `g > 1` dividing `d` and `0 <= r < g` over the
    /// ranges: then `floor(self / d) == floor(q / (d / g))` and
    /// `self mod d == g * (q mod (d / g)) + r`. A flattened view of a view
    /// (`(256*i + j) // 65536` with `j < 256`) becomes `i // 256`, which stays out of the
    /// vectorized inner loop over `j`.
    fn split_common_factor(&self, d: i64, ranges: &[i64]) -> Option<(i64, Idx, Idx)> {
        fn gcd(a: i64, b: i64) -> i64 {
            if b == 0 {
                a
            } else {
                gcd(b, a % b)
            }
        }
        let mut candidates: Vec<i64> = self
            .terms
            .iter()
            .map(|(_, c)| gcd(c.abs(), d))
            .filter(|g| *g > 1)
            .collect();
        candidates.sort_unstable();
        candidates.dedup();
        candidates.into_iter().rev().find_map(|g| {
            let (q, r) = self.split_multiple(g);
            let (lo, hi) = r.bounds(ranges);
            (lo >= 0 && hi < g && !q.terms.is_empty()).then_some((g, q, r))
        })
    }

    /// Splits into `(q, r)` with `self == d * q + r` where `q` collects the terms whose
    /// coefficients `d` divides (so `floor(self / d) == q + floor(r / d)` exactly).
    fn split_multiple(&self, d: i64) -> (Idx, Idx) {
        let mut q = Vec::new();
        let mut r = Vec::new();
        for (a, c) in &self.terms {
            if c % d == 0 {
                q.push((a.clone(), c / d));
            } else {
                r.push((a.clone(), *c));
            }
        }
        (
            normalize(q, self.constant.div_euclid(d)),
            normalize(r, self.constant.rem_euclid(d)),
        )
    }

    /// `min(max(self, lo), hi)`, simplified away when the bounds already hold.
    pub fn clamp_to(&self, lo: i64, hi: i64, ranges: &[i64]) -> Idx {
        let (elo, ehi) = self.bounds(ranges);
        if elo >= lo && ehi <= hi {
            self.clone()
        } else if ehi <= lo {
            Idx::constant(lo)
        } else if elo >= hi {
            Idx::constant(hi)
        } else {
            Idx::atom(Atom::Clamp(Box::new(self.clone()), lo, hi))
        }
    }

    /// Value at a point (`vars[k]` is var k).
    pub fn eval(&self, vars: &[i64]) -> i64 {
        let mut v = self.constant;
        for (a, c) in &self.terms {
            v += c * a.eval(vars);
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
    pub fn substitute(&self, map: &[Idx], ranges: &[i64]) -> Idx {
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
    fn bounds(&self, ranges: &[i64]) -> (i64, i64) {
        match self {
            Atom::Var(k) => (0, (ranges[*k as usize] - 1).max(0)),
            Atom::FloorDiv(e, d) => {
                let (lo, hi) = e.bounds(ranges);
                (lo.div_euclid(*d), hi.div_euclid(*d))
            }
            Atom::Mod(_, d) => (0, d - 1),
            Atom::Clamp(e, lo, hi) => {
                let (a, b) = e.bounds(ranges);
                (a.clamp(*lo, *hi), b.clamp(*lo, *hi))
            }
        }
    }

    fn eval(&self, vars: &[i64]) -> i64 {
        match self {
            Atom::Var(k) => vars[*k as usize],
            Atom::FloorDiv(e, d) => e.eval(vars).div_euclid(*d),
            Atom::Mod(e, d) => e.eval(vars).rem_euclid(*d),
            Atom::Clamp(e, lo, hi) => e.eval(vars).clamp(*lo, *hi),
        }
    }
}

/// Sorts, merges equal atoms, drops zeros, and folds `d*c*(e // d) + c*(e % d)` into `c*e`.
fn normalize(mut terms: Vec<(Atom, i64)>, constant: i64) -> Idx {
    terms.sort_by(|a, b| a.0.cmp(&b.0));
    let mut merged: Vec<(Atom, i64)> = Vec::with_capacity(terms.len());
    for (a, c) in terms {
        match merged.last_mut() {
            Some((la, lc)) if *la == a => *lc += c,
            _ => merged.push((a, c)),
        }
    }
    merged.retain(|(_, c)| *c != 0);
    // Fold div/mod pairs of the same expression.
    for i in 0..merged.len() {
        let Atom::FloorDiv(e, d) = &merged[i].0 else {
            continue;
        };
        let cdiv = merged[i].1;
        if cdiv % d != 0 {
            continue;
        }
        let c = cdiv / d;
        let modatom = Atom::Mod(e.clone(), *d);
        if let Some(j) = merged.iter().position(|(a, k)| *a == modatom && *k == c) {
            let e = (**e).clone();
            let mut rest: Vec<(Atom, i64)> = merged
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

    #[test]
    fn reshape_round_trip_simplifies() {
        let r = [6];
        let i = Idx::var(0);
        let row = i.floordiv(3, &r);
        let col = i.modulo(3, &r);
        assert_eq!(row.scale(3).add(&col), i);
    }

    #[test]
    fn small_ranges_fold() {
        let r = [2, 3];
        let lin = Idx::var(0).scale(3).add(&Idx::var(1));
        assert_eq!(lin.floordiv(3, &r), Idx::var(0));
        assert_eq!(lin.modulo(3, &r), Idx::var(1));
        assert_eq!(Idx::var(1).floordiv(3, &r), Idx::constant(0));
    }

    #[test]
    fn common_factor_leaves_the_inner_variable() {
        // [2, 256, 256] viewed as [512, 256]: row x0, column x1.
        let r = [512, 256];
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
        let r2 = [512, 257];
        assert!(flat
            .floordiv(65536, &r2)
            .terms
            .iter()
            .any(|(a, _)| matches!(a, Atom::FloorDiv(e, 65536) if e.uses_var(1))));
    }

    #[test]
    fn eval_matches_python_semantics() {
        let r = [10];
        let e = Idx::var(0).scale(5).add_const(3).floordiv(4, &r);
        for v in 0..10 {
            assert_eq!(e.eval(&[v]), (5 * v + 3) / 4);
        }
    }
}
