//! Symbolic sizes: integer expressions over size symbols (`s0`, `s1`, ...), for dynamic shapes.
//!
//! An expression is kept in one canonical form, a sum of monomials with integer coefficients,
//! where a monomial is a sorted product of atoms (a symbol, or a floor-division or modulo that
//! could not be simplified). Two expressions that are equal as polynomials are equal as Rust
//! values, so `s0 * 4 // 4 == s0` and `s1 * s0 - s0 * s1 + 3 == 3` are answered without a
//! solver. Sizes are never negative, which the simplifications of `//` and `%` rely on only where
//! stated.
//!
//! The tracer's shape environment gives each symbol a hint (the size seen at trace time) and a
//! source; [`Relation`]s over expressions are the guards that a trace's decisions on sizes make.

use std::collections::BTreeMap;
use std::fmt;

// A child module: an int expression holds floats (`Atom::FloatToInt`) and a float holds
// ints, so the two types live in one tree (`tracer/tests/layering.rs`: no circles).
pub mod float;

use float::{FloatExpr, IntRound};

/// A factor of a monomial.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Atom {
    Sym(u32),
    /// Floor division (Python's `//`) that did not simplify.
    FloorDiv(Box<SymExpr>, Box<SymExpr>),
    /// Python's `%` that did not simplify.
    Mod(Box<SymExpr>, Box<SymExpr>),
    /// `max(a, b)` / `min(a, b)` of ints whose order is not known for every size (torch's
    /// `sym_max` / `sym_min`).
    Max(Box<SymExpr>, Box<SymExpr>),
    Min(Box<SymExpr>, Box<SymExpr>),
    /// A float of sizes made an int (`round(n / 2)`, `math.floor(n ** 0.5)`, `int(x)` of a
    /// negative quotient): torch's `RoundToInt` / `FloorToInt` / `CeilToInt` / `TruncToInt`.
    FloatToInt(IntRound, Box<FloatExpr>),
}

/// A sum of `coefficient * product(atoms)` terms, sorted by monomial, without zero coefficients.
/// The constant term is the one with no atoms.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SymExpr {
    terms: Vec<(Vec<Atom>, i64)>,
}

fn floor_div(a: i64, b: i64) -> Option<i64> {
    if b == 0 {
        return None;
    }
    let q = a.checked_div(b)?;
    Some(if (a % b != 0) && ((a < 0) != (b < 0)) {
        q - 1
    } else {
        q
    })
}

fn py_mod(a: i64, b: i64) -> Option<i64> {
    Some(a - b.checked_mul(floor_div(a, b)?)?)
}

impl SymExpr {
    pub fn constant(c: i64) -> SymExpr {
        SymExpr::from_terms(vec![(vec![], c)])
    }

    pub fn symbol(k: u32) -> SymExpr {
        SymExpr::from_terms(vec![(vec![Atom::Sym(k)], 1)])
    }

    fn atom(a: Atom) -> SymExpr {
        SymExpr::from_terms(vec![(vec![a], 1)])
    }

    fn from_terms(raw: Vec<(Vec<Atom>, i64)>) -> SymExpr {
        let mut acc: BTreeMap<Vec<Atom>, i64> = BTreeMap::new();
        for (mut m, c) in raw {
            m.sort();
            *acc.entry(m).or_insert(0) += c;
        }
        SymExpr {
            terms: acc.into_iter().filter(|(_, c)| *c != 0).collect(),
        }
    }

    /// The value, when the expression has no symbols.
    pub fn as_const(&self) -> Option<i64> {
        match self.terms.as_slice() {
            [] => Some(0),
            [(m, c)] if m.is_empty() => Some(*c),
            _ => None,
        }
    }

    /// The terms, `coefficient * product(atoms)`, in canonical order (the constant term has no
    /// atoms): for a backend computing the value its own way.
    pub fn terms(&self) -> &[(Vec<Atom>, i64)] {
        &self.terms
    }

    /// The expression `c * product(atoms)`.
    pub fn monomial(atoms: Vec<Atom>, c: i64) -> SymExpr {
        SymExpr::from_terms(vec![(atoms, c)])
    }

    pub fn is_const(&self) -> bool {
        self.as_const().is_some()
    }

    /// Whether the expression is a polynomial of its symbols (no floor division, modulo, max or
    /// min atom): its value is then the same integer arithmetic for symbols of any sign.
    pub fn is_polynomial(&self) -> bool {
        self.terms
            .iter()
            .all(|(m, _)| m.iter().all(|a| matches!(a, Atom::Sym(_))))
    }

    /// `Some(k)` when the expression is exactly the symbol `s<k>`.
    pub fn as_symbol(&self) -> Option<u32> {
        match self.terms.as_slice() {
            [(m, 1)] => match m.as_slice() {
                [Atom::Sym(k)] => Some(*k),
                _ => None,
            },
            _ => None,
        }
    }

    pub fn add(&self, o: &SymExpr) -> SymExpr {
        SymExpr::from_terms(self.terms.iter().chain(&o.terms).cloned().collect())
    }

    pub fn neg(&self) -> SymExpr {
        SymExpr::from_terms(self.terms.iter().map(|(m, c)| (m.clone(), -c)).collect())
    }

    pub fn sub(&self, o: &SymExpr) -> SymExpr {
        self.add(&o.neg())
    }

    pub fn add_const(&self, c: i64) -> SymExpr {
        self.add(&SymExpr::constant(c))
    }

    pub fn mul(&self, o: &SymExpr) -> SymExpr {
        let mut raw = Vec::new();
        for (ma, ca) in &self.terms {
            for (mb, cb) in &o.terms {
                let mut m = ma.clone();
                m.extend(mb.iter().cloned());
                raw.push((m, ca.wrapping_mul(*cb)));
            }
        }
        SymExpr::from_terms(raw)
    }

    pub fn mul_const(&self, c: i64) -> SymExpr {
        self.mul(&SymExpr::constant(c))
    }

    /// `self` divided by one term `(m, c)`, when every term divides exactly.
    fn exact_div_term(&self, m: &[Atom], c: i64) -> Option<SymExpr> {
        if c == 0 {
            return None;
        }
        let mut raw = Vec::new();
        for (tm, tc) in &self.terms {
            if tc % c != 0 {
                return None;
            }
            let mut rest = tm.clone();
            for a in m {
                let i = rest.iter().position(|x| x == a)?;
                rest.remove(i);
            }
            raw.push((rest, tc / c));
        }
        Some(SymExpr::from_terms(raw))
    }

    /// Python's `self // o`. Exact divisions by one term simplify (`s0*s1*64 // (s1*16)` is
    /// `s0*4`), as do nested divisions by positive constants.
    pub fn floordiv(&self, o: &SymExpr) -> SymExpr {
        if let (Some(a), Some(b)) = (self.as_const(), o.as_const()) {
            if let Some(q) = floor_div(a, b) {
                return SymExpr::constant(q);
            }
        }
        if let [(m, c)] = o.terms.as_slice() {
            if let Some(q) = self.exact_div_term(m, *c) {
                return q;
            }
        }
        // (a // b) // c == a // (b * c) for positive b and c.
        if let (Some(c), [(m, 1)]) = (o.as_const(), self.terms.as_slice()) {
            if let [Atom::FloorDiv(a, b)] = m.as_slice() {
                if c > 0 && b.as_const().is_some_and(|b| b > 0) {
                    return a.floordiv(&b.mul_const(c));
                }
            }
        }
        SymExpr::atom(Atom::FloorDiv(Box::new(self.clone()), Box::new(o.clone())))
    }

    /// Python's `self % o`; zero when every term is a multiple of a constant `o`.
    pub fn modulo(&self, o: &SymExpr) -> SymExpr {
        if let (Some(a), Some(b)) = (self.as_const(), o.as_const()) {
            if let Some(r) = py_mod(a, b) {
                return SymExpr::constant(r);
            }
        }
        if let [(m, c)] = o.terms.as_slice() {
            if self.exact_div_term(m, *c).is_some() {
                return SymExpr::constant(0);
            }
        }
        SymExpr::atom(Atom::Mod(Box::new(self.clone()), Box::new(o.clone())))
    }

    /// `round(f)`, `math.floor(f)`, ... of a float of sizes; a constant where `f` is one
    /// (and Python would not raise).
    pub fn of_float(how: IntRound, f: FloatExpr) -> SymExpr {
        if let Some(v) = f.as_const().and_then(|c| how.apply(c)) {
            return SymExpr::constant(v);
        }
        SymExpr::atom(Atom::FloatToInt(how, Box::new(f)))
    }

    /// Whether a float rounding atom occurs in it (C's index arithmetic cannot print one).
    pub fn has_float_atoms(&self) -> bool {
        self.terms.iter().any(|(m, _)| {
            m.iter().any(|a| match a {
                Atom::Sym(_) => false,
                Atom::FloatToInt(..) => true,
                Atom::FloorDiv(x, y) | Atom::Mod(x, y) | Atom::Max(x, y) | Atom::Min(x, y) => {
                    x.has_float_atoms() || y.has_float_atoms()
                }
            })
        })
    }

    /// `max(self, o)`: the operand known to be the larger for every assignment where each
    /// symbol `k` is at least `min(k)` (their difference a constant, or bounded below), else
    /// the atom, its operands in a fixed order.
    pub fn max_with(&self, o: &SymExpr, min: &dyn Fn(u32) -> i64) -> SymExpr {
        self.extreme(o, min, true)
    }

    /// `min(self, o)`, as [`SymExpr::max_with`].
    pub fn min_with(&self, o: &SymExpr, min: &dyn Fn(u32) -> i64) -> SymExpr {
        self.extreme(o, min, false)
    }

    fn extreme(&self, o: &SymExpr, min: &dyn Fn(u32) -> i64, max: bool) -> SymExpr {
        let d = self.sub(o);
        let self_ge = d.lower_bound(min).is_some_and(|v| v >= 0);
        let o_ge = d.neg().lower_bound(min).is_some_and(|v| v >= 0);
        if self_ge || o_ge {
            return if self_ge == max {
                self.clone()
            } else {
                o.clone()
            };
        }
        let (a, b) = if self <= o { (self, o) } else { (o, self) };
        let (a, b) = (Box::new(a.clone()), Box::new(b.clone()));
        SymExpr::atom(if max {
            Atom::Max(a, b)
        } else {
            Atom::Min(a, b)
        })
    }

    /// The value under an assignment of symbols; `None` on division by zero or overflow.
    pub fn eval(&self, value: &dyn Fn(u32) -> i64) -> Option<i64> {
        let mut total = 0i64;
        for (m, c) in &self.terms {
            let mut t = *c;
            for a in m {
                let v = match a {
                    Atom::Sym(k) => value(*k),
                    Atom::FloorDiv(x, y) => floor_div(x.eval(value)?, y.eval(value)?)?,
                    Atom::Mod(x, y) => py_mod(x.eval(value)?, y.eval(value)?)?,
                    Atom::Max(x, y) => x.eval(value)?.max(y.eval(value)?),
                    Atom::Min(x, y) => x.eval(value)?.min(y.eval(value)?),
                    Atom::FloatToInt(how, f) => how.apply(f.eval(value)?)?,
                };
                t = t.checked_mul(v)?;
            }
            total = total.checked_add(t)?;
        }
        Some(total)
    }

    /// A lower bound over every assignment where each symbol `k` is at least `min(k)`: the
    /// value at the minimums when every non-constant term is a product of symbols with a
    /// positive coefficient (then the expression grows with each symbol, given every symbol
    /// is at least 0); `None` otherwise, and when a symbol may be negative (`min(k) < 0`: a
    /// symbolic int that is not a size).
    pub fn lower_bound(&self, min: &dyn Fn(u32) -> i64) -> Option<i64> {
        let mut total = 0i64;
        for (m, c) in &self.terms {
            if !m.is_empty() && *c < 0 {
                return None;
            }
            let mut t = *c;
            for a in m {
                match a {
                    Atom::Sym(k) if min(*k) >= 0 => t = t.checked_mul(min(*k))?,
                    Atom::Sym(_) => return None,
                    _ => return None,
                }
            }
            total = total.checked_add(t)?;
        }
        Some(total)
    }

    /// A lower bound as [`SymExpr::lower_bound`], also through floor divisions by positive
    /// constants (a size's loop bound `(e + c) // k` beside a multiple of it, as the inductor's
    /// range splits make): each `c * (e // k)` is replaced by the polynomial it bounds from
    /// the right side (`e // k <= e / k` for a negative `c`, `e // k >= (e - k + 1) / k` for a
    /// positive one), after scaling the whole expression by the divisors' least common multiple
    /// so the replacements stay integral. Sound for `e` of any sign (integer floor division).
    /// Kept apart from `lower_bound`, which the shape environment's decisions use.
    pub fn lower_bound_floor(&self, min: &dyn Fn(u32) -> i64) -> Option<i64> {
        if let Some(lb) = self.lower_bound(min) {
            return Some(lb);
        }
        fn gcd(a: i64, b: i64) -> i64 {
            if b == 0 {
                a.abs()
            } else {
                gcd(b, a % b)
            }
        }
        let mut l = 1i64;
        for (m, _) in &self.terms {
            if let [Atom::FloorDiv(_, d)] = m.as_slice() {
                let k = d.as_const().filter(|&k| k > 0)?;
                l = l.checked_mul(k / gcd(l, k))?;
            }
        }
        if l == 1 {
            return None;
        }
        let mut out = SymExpr::constant(0);
        for (m, c) in &self.terms {
            let c = c.checked_mul(l)?;
            let t = match m.as_slice() {
                [Atom::FloorDiv(e, d)] => {
                    let k = d.as_const()?;
                    let e = if c < 0 {
                        (**e).clone()
                    } else {
                        e.add_const(1 - k)
                    };
                    e.mul_const(c / k)
                }
                _ => SymExpr::from_terms(vec![(m.clone(), c)]),
            };
            out = out.add(&t);
        }
        let lb = out.lower_bound(min)?;
        // ceil(lb / l)
        Some(-floor_div(-lb, l)?)
    }

    /// Every symbol the expression reads, sorted, without repeats.
    pub fn symbols(&self) -> Vec<u32> {
        fn walk(e: &SymExpr, out: &mut Vec<u32>) {
            for (m, _) in &e.terms {
                for a in m {
                    match a {
                        Atom::Sym(k) => out.push(*k),
                        Atom::FloorDiv(x, y)
                        | Atom::Mod(x, y)
                        | Atom::Max(x, y)
                        | Atom::Min(x, y) => {
                            walk(x, out);
                            walk(y, out);
                        }
                        Atom::FloatToInt(_, f) => out.extend(f.symbols()),
                    }
                }
            }
        }
        let mut out = Vec::new();
        walk(self, &mut out);
        out.sort_unstable();
        out.dedup();
        out
    }

    /// Replaces symbols by expressions (`f` answers `None` to keep a symbol).
    pub fn substitute(&self, f: &dyn Fn(u32) -> Option<SymExpr>) -> SymExpr {
        let mut total = SymExpr::constant(0);
        for (m, c) in &self.terms {
            let mut t = SymExpr::constant(*c);
            for a in m {
                let v = match a {
                    Atom::Sym(k) => f(*k).unwrap_or_else(|| SymExpr::symbol(*k)),
                    Atom::FloorDiv(x, y) => x.substitute(f).floordiv(&y.substitute(f)),
                    Atom::Mod(x, y) => x.substitute(f).modulo(&y.substitute(f)),
                    // Kept as the atom: whether one side now dominates needs the bounds.
                    Atom::Max(x, y) => SymExpr::atom(Atom::Max(
                        Box::new(x.substitute(f)),
                        Box::new(y.substitute(f)),
                    )),
                    Atom::Min(x, y) => SymExpr::atom(Atom::Min(
                        Box::new(x.substitute(f)),
                        Box::new(y.substitute(f)),
                    )),
                    Atom::FloatToInt(how, x) => SymExpr::of_float(*how, x.substitute(f)),
                };
                t = t.mul(&v);
            }
            total = total.add(&t);
        }
        total
    }

    /// Prints with symbols named by `name` (`s0`, or a source such as `L['x'].size(0)`).
    pub fn render(&self, name: &dyn Fn(u32) -> String) -> String {
        if self.terms.is_empty() {
            return "0".into();
        }
        let mut out = String::new();
        // Constants last, as people write `s1 - 1`.
        let ordered = self
            .terms
            .iter()
            .filter(|(m, _)| !m.is_empty())
            .chain(self.terms.iter().filter(|(m, _)| m.is_empty()));
        for (i, (m, c)) in ordered.enumerate() {
            let neg = *c < 0;
            let mag = c.unsigned_abs();
            if i == 0 {
                if neg {
                    out.push('-');
                }
            } else {
                out.push_str(if neg { " - " } else { " + " });
            }
            let mut factors: Vec<String> = m.iter().map(|a| render_atom(a, name)).collect();
            if mag != 1 || factors.is_empty() {
                factors.push(mag.to_string());
            }
            out.push_str(&factors.join("*"));
        }
        out
    }
}

fn render_atom(a: &Atom, name: &dyn Fn(u32) -> String) -> String {
    let wrap = |e: &SymExpr| {
        let s = e.render(name);
        if e.terms.len() > 1
            || e.terms
                .first()
                .is_some_and(|(m, c)| m.len() + usize::from(*c != 1) > 1)
        {
            format!("({s})")
        } else {
            s
        }
    };
    match a {
        Atom::Sym(k) => name(*k),
        Atom::FloorDiv(x, y) => format!("({} // {})", wrap(x), wrap(y)),
        Atom::Mod(x, y) => format!("({} % {})", wrap(x), wrap(y)),
        Atom::Max(x, y) => format!("max({}, {})", x.render(name), y.render(name)),
        Atom::Min(x, y) => format!("min({}, {})", x.render(name), y.render(name)),
        // Python source (a guard's condition, a precompiled graph's size text), its floats
        // as Python computes them (`float(s0)`, `__import__('math').sqrt`).
        Atom::FloatToInt(how, f) => format!("{}({})", how.python(), f.render(name, true)),
    }
}

impl fmt::Display for SymExpr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.render(&|k| format!("s{k}")))
    }
}

impl From<i64> for SymExpr {
    fn from(c: i64) -> SymExpr {
        SymExpr::constant(c)
    }
}

/// The symbols of two sides, sorted, without repeats.
pub fn union_of_symbols(mut a: Vec<u32>, b: Vec<u32>) -> Vec<u32> {
    a.extend(b);
    a.sort_unstable();
    a.dedup();
    a
}

/// A comparison operator of a [`Relation`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RelOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl RelOp {
    pub fn symbol(self) -> &'static str {
        match self {
            RelOp::Eq => "==",
            RelOp::Ne => "!=",
            RelOp::Lt => "<",
            RelOp::Le => "<=",
            RelOp::Gt => ">",
            RelOp::Ge => ">=",
        }
    }

    /// The comparison `operator.<name>` makes (`"lt"`: `<`).
    pub fn from_operator(name: &str) -> Option<RelOp> {
        Some(match name {
            "lt" => RelOp::Lt,
            "le" => RelOp::Le,
            "gt" => RelOp::Gt,
            "ge" => RelOp::Ge,
            "eq" => RelOp::Eq,
            "ne" => RelOp::Ne,
            _ => return None,
        })
    }

    /// `a op b`, for ints and for floats (Python's comparisons: NaN compares unequal).
    pub fn holds<T: PartialOrd>(self, a: T, b: T) -> bool {
        match self {
            RelOp::Eq => a == b,
            RelOp::Ne => a != b,
            RelOp::Lt => a < b,
            RelOp::Le => a <= b,
            RelOp::Gt => a > b,
            RelOp::Ge => a >= b,
        }
    }

    /// The operator that holds exactly when this one does not.
    pub fn negate(self) -> RelOp {
        match self {
            RelOp::Eq => RelOp::Ne,
            RelOp::Ne => RelOp::Eq,
            RelOp::Lt => RelOp::Ge,
            RelOp::Le => RelOp::Gt,
            RelOp::Gt => RelOp::Le,
            RelOp::Ge => RelOp::Lt,
        }
    }
}

/// `lhs op rhs` over symbolic sizes: a guard a trace relies on.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Relation {
    pub lhs: SymExpr,
    pub op: RelOp,
    pub rhs: SymExpr,
}

impl Relation {
    pub fn new(lhs: SymExpr, op: RelOp, rhs: SymExpr) -> Relation {
        Relation { lhs, op, rhs }
    }

    /// Every symbol either side reads, sorted, without repeats.
    pub fn symbols(&self) -> Vec<u32> {
        union_of_symbols(self.lhs.symbols(), self.rhs.symbols())
    }

    /// `(b, a, c)` when the relation is an equality of two symbols apart by a constant,
    /// `s_b == s_a + c` with `a < b` (`s0 - 6 == s1`: `(1, 0, -6)`; `c` may be 0).
    pub fn shifted_equality(&self) -> Option<(u32, u32, i64)> {
        if self.op != RelOp::Eq {
            return None;
        }
        let [a, b] = self.symbols()[..] else {
            return None;
        };
        let d = self.lhs.sub(&self.rhs);
        let unit = SymExpr::symbol(b).sub(&SymExpr::symbol(a));
        for sign in [1, -1] {
            let e = d.mul_const(sign);
            let k = e.eval(&|_| 0)?;
            if e == unit.add_const(k) {
                return Some((b, a, -k));
            }
        }
        None
    }

    /// Whether the relation holds under an assignment (`None`: unevaluable, e.g. `// 0`).
    pub fn eval(&self, value: &dyn Fn(u32) -> i64) -> Option<bool> {
        Some(self.op.holds(self.lhs.eval(value)?, self.rhs.eval(value)?))
    }

    /// `Some(answer)` when the relation holds or fails for every assignment: both sides are
    /// equal polynomials, or their difference is a constant.
    pub fn decided(&self) -> Option<bool> {
        let d = self.lhs.sub(&self.rhs).as_const()?;
        Some(self.op.holds(d, 0))
    }

    /// Whether the relation holds for every assignment where each symbol `k` is at least
    /// `min(k)` (see [`SymExpr::lower_bound`]).
    pub fn implied(&self, min: &dyn Fn(u32) -> i64) -> bool {
        let d = self.lhs.sub(&self.rhs);
        let lb = |e: &SymExpr| e.lower_bound(min);
        match self.op {
            RelOp::Ge => lb(&d).is_some_and(|v| v >= 0),
            RelOp::Gt => lb(&d).is_some_and(|v| v > 0),
            RelOp::Le => lb(&d.neg()).is_some_and(|v| v >= 0),
            RelOp::Lt => lb(&d.neg()).is_some_and(|v| v > 0),
            RelOp::Ne => lb(&d).is_some_and(|v| v > 0) || lb(&d.neg()).is_some_and(|v| v > 0),
            RelOp::Eq => d.as_const() == Some(0),
        }
    }

    pub fn render(&self, name: &dyn Fn(u32) -> String) -> String {
        format!(
            "{} {} {}",
            self.lhs.render(name),
            self.op.symbol(),
            self.rhs.render(name)
        )
    }
}

impl fmt::Display for Relation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.render(&|k| format!("s{k}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(k: u32) -> SymExpr {
        SymExpr::symbol(k)
    }

    #[test]
    fn canonical_form_makes_equal_polynomials_equal() {
        let a = s(0).mul(&s(1)).add_const(3);
        let b = s(1).mul(&s(0)).add(&SymExpr::constant(3));
        assert_eq!(a, b);
        assert_eq!(a.sub(&b).as_const(), Some(0));
        assert_eq!(s(0).mul_const(2).sub(&s(0)), s(0));
        assert_eq!(s(0).to_string(), "s0");
        assert_eq!(s(0).mul(&s(1)).mul_const(64).to_string(), "s0*s1*64");
    }

    #[test]
    fn floordiv_and_mod_simplify_exact_divisions() {
        let n = s(0).mul(&s(1)).mul_const(64);
        assert_eq!(n.floordiv(&SymExpr::constant(64)), s(0).mul(&s(1)));
        assert_eq!(n.floordiv(&s(1).mul_const(16)), s(0).mul_const(4));
        assert_eq!(n.modulo(&SymExpr::constant(16)), SymExpr::constant(0));
        let d = s(0).floordiv(&SymExpr::constant(2));
        assert_eq!(d.to_string(), "(s0 // 2)");
        assert_eq!(d.floordiv(&SymExpr::constant(3)), s(0).floordiv(&6.into()));
        assert_eq!(d.eval(&|_| 7), Some(3));
        assert_eq!(s(0).modulo(&3.into()).eval(&|_| -7), Some(2));
        assert_eq!(
            SymExpr::constant(-7).floordiv(&2.into()),
            SymExpr::constant(-4)
        );
    }

    #[test]
    fn relations_decide_constant_differences() {
        let r = Relation::new(s(0).add_const(1), RelOp::Gt, s(0));
        assert_eq!(r.decided(), Some(true));
        let r = Relation::new(s(0), RelOp::Gt, 8.into());
        assert_eq!(r.decided(), None);
        assert_eq!(r.eval(&|_| 9), Some(true));
        assert_eq!(
            r.render(&|k| format!("L['x'].size({k})")),
            "L['x'].size(0) > 8"
        );
    }

    #[test]
    fn implied_relations_use_symbol_minimums() {
        let min = |_| 2;
        let r = Relation::new(s(0).add_const(-1), RelOp::Gt, 0.into());
        assert!(r.implied(&min));
        let r = Relation::new(s(0).mul(&s(1)), RelOp::Ge, 4.into());
        assert!(r.implied(&min));
        let r = Relation::new(s(0), RelOp::Gt, 8.into());
        assert!(!r.implied(&min));
        let r = Relation::new(3.into(), RelOp::Le, s(0));
        assert!(!r.implied(&min));
        let r = Relation::new(2.into(), RelOp::Le, s(0));
        assert!(r.implied(&min));
        let r = Relation::new(s(0).sub(&s(1)), RelOp::Ge, 0.into());
        assert!(!r.implied(&min));
    }

    #[test]
    fn substitute_replaces_symbols() {
        let e = s(0).mul(&s(1)).floordiv(&s(2));
        let r = e.substitute(&|k| (k == 2).then(|| s(1)));
        assert_eq!(r, s(0));
    }

    /// Bounds through floor divisions by constants: proved where true at every size from 2,
    /// `None` where a value below it exists (checked by brute force over small sizes).
    #[test]
    fn lower_bound_floor_sees_through_floor_division() {
        let two = |_| 2;
        let c = SymExpr::constant;
        let fd = |e: &SymExpr, k| e.floordiv(&c(k));
        // len - 1 - (2 * (len // 2) - 1) = len % 2 >= 0 (a pool interior's last read).
        let e = s(0).sub(&fd(&s(0), 2).mul_const(2));
        assert_eq!(e.lower_bound(&two), None);
        assert_eq!(e.lower_bound_floor(&two), Some(0));
        // (len - 1) // 2 + 1 - len // 2 >= 0 (the right border of avg_pool(3, 2, 1)).
        let e = fd(&s(0).add_const(-1), 2).add_const(1).sub(&fd(&s(0), 2));
        assert_eq!(e.lower_bound_floor(&two), Some(0));
        // len // 2 - 1 >= 0 from len >= 2; len // 3 - 1 is not (len = 2).
        assert_eq!(fd(&s(0), 2).add_const(-1).lower_bound_floor(&two), Some(0));
        assert_eq!(fd(&s(0), 3).add_const(-1).lower_bound_floor(&two), Some(-1));
        // Divisors 2 and 3 together: len // 2 - len // 3 >= 0 (true: 0 at len 2).
        let e = fd(&s(0), 2).sub(&fd(&s(0), 3));
        let lb = e.lower_bound_floor(&two).unwrap();
        assert!(lb <= 0);
        for v in 2..200 {
            let val = e.eval(&|_| v).unwrap();
            assert!(val >= lb, "{v}: {val} < {lb}");
        }
        // A symbolic divisor is not taken.
        assert_eq!(
            s(0).sub(&s(0).floordiv(&s(1))).lower_bound_floor(&two),
            None
        );
    }
}
