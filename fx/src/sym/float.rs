//! Symbolic floats: Python float expressions over size symbols (dynamic shapes).
//!
//! torch 2.11 keeps a float computed from sizes symbolic (`specialize_float=False`): attention's
//! `q.size(-1) ** -0.5`, `1 / math.sqrt(d)`, `x.size(1) / x.size(0)` are `SymFloat` expressions,
//! and a tensor op takes them as graph values, so the graph serves every size. A [`FloatExpr`] is
//! that expression: a tree over `float(e)` of an integer [`SymExpr`] and float constants, with
//! Python's float arithmetic (`+ - * / **`, negation, `math.sqrt`). Unlike [`SymExpr`] it has no
//! canonical form (float arithmetic is not associative): two equal trees are the same
//! computation, which is what a guard or a kernel needs. Constants fold.
//!
//! [`FloatRelation`] is a comparison of two of them: a guard a branch on a float of sizes makes
//! (`if n / 2 > 2:`), or a float specialized to its value.

use std::fmt;

use super::{RelOp, SymExpr};

/// A binary float operation, with Python's semantics on floats.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FloatOp {
    Add,
    Sub,
    Mul,
    /// True division.
    Div,
    Pow,
    /// Python's float `//` (a float: `n / 2 // 1`).
    FloorDiv,
    /// Python's float `%` (the divisor's sign).
    Mod,
    /// `max(a, b)` / `min(a, b)` of floats (torch's `sym_max` / `sym_min`).
    Max,
    Min,
}

impl FloatOp {
    pub fn symbol(self) -> &'static str {
        match self {
            FloatOp::Add => "+",
            FloatOp::Sub => "-",
            FloatOp::Mul => "*",
            FloatOp::Div => "/",
            FloatOp::Pow => "**",
            FloatOp::FloorDiv => "//",
            FloatOp::Mod => "%",
            FloatOp::Max => "max",
            FloatOp::Min => "min",
        }
    }

    /// The `operator` module's name for it (`operator.truediv`).
    pub fn operator_name(self) -> &'static str {
        match self {
            FloatOp::Add => "add",
            FloatOp::Sub => "sub",
            FloatOp::Mul => "mul",
            FloatOp::Div => "truediv",
            FloatOp::Pow => "pow",
            FloatOp::FloorDiv => "floordiv",
            FloatOp::Mod => "mod",
            FloatOp::Max => "max",
            FloatOp::Min => "min",
        }
    }

    /// `a op b` as Python computes it on floats; `None` where Python raises
    /// (`ZeroDivisionError`, a `**` that overflows or would be complex).
    pub fn apply(self, a: f64, b: f64) -> Option<f64> {
        Some(match self {
            FloatOp::Add => a + b,
            FloatOp::Sub => a - b,
            FloatOp::Mul => a * b,
            FloatOp::Div if b == 0.0 => return None,
            FloatOp::Div => a / b,
            FloatOp::Pow => {
                if a == 0.0 && b < 0.0 {
                    return None;
                }
                if a < 0.0 && b.is_finite() && b.fract() != 0.0 {
                    return None;
                }
                let r = a.powf(b);
                if r.is_infinite() && a.is_finite() && b.is_finite() {
                    return None;
                }
                r
            }
            FloatOp::FloorDiv => py_divmod(a, b)?.0,
            FloatOp::Mod => py_divmod(a, b)?.1,
            // Python's `max(a, b)` is `a` unless `b > a`; `min(a, b)` is `a` unless `b < a`.
            FloatOp::Max => {
                if b > a {
                    b
                } else {
                    a
                }
            }
            FloatOp::Min => {
                if b < a {
                    b
                } else {
                    a
                }
            }
        })
    }

    /// Whether it is written as a call (`max(a, b)`), not infix.
    pub fn is_call(self) -> bool {
        matches!(self, FloatOp::Max | FloatOp::Min)
    }
}

/// Python's `divmod` of floats (`a // b`, `a % b`): the remainder takes the divisor's sign and
/// the quotient is rounded to the nearest integer of `(a - mod) / b`, as Python computes it
/// (so `7.5 // 2.5` is `3.0` where `floor(7.5 / 2.5)` could round differently); `None` for a
/// zero divisor (`ZeroDivisionError`).
pub fn py_divmod(a: f64, b: f64) -> Option<(f64, f64)> {
    if b == 0.0 {
        return None;
    }
    let mut m = a % b; // C's fmod: the dividend's sign
    let mut div = (a - m) / b;
    if m != 0.0 {
        if (b < 0.0) != (m < 0.0) {
            m += b;
            div -= 1.0;
        }
    } else {
        m = 0.0f64.copysign(b);
    }
    let q = if div != 0.0 {
        let f = div.floor();
        if div - f > 0.5 {
            f + 1.0
        } else {
            f
        }
    } else {
        0.0f64.copysign(a / b)
    };
    Some((q, m))
}

/// How a float becomes a Python int: `round(x)` (half to even), `math.floor`, `math.ceil`,
/// `int(x)` / `math.trunc` (toward zero). torch's `RoundToInt`, `FloorToInt`, `CeilToInt`,
/// `TruncToInt`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum IntRound {
    Round,
    Floor,
    Ceil,
    Trunc,
}

impl IntRound {
    /// The int Python's conversion gives; `None` where it raises (an infinity, a NaN) or the
    /// value leaves `i64`.
    pub fn apply(self, v: f64) -> Option<i64> {
        if !v.is_finite() {
            return None;
        }
        let r = match self {
            IntRound::Round => v.round_ties_even(),
            IntRound::Floor => v.floor(),
            IntRound::Ceil => v.ceil(),
            IntRound::Trunc => v.trunc(),
        };
        // `i64::MAX as f64` is 2**63, exact; every float below it in magnitude fits.
        (r.abs() < i64::MAX as f64).then_some(r as i64)
    }

    /// Python source computing it from a float's source.
    pub fn python(self) -> &'static str {
        match self {
            IntRound::Round => "round",
            IntRound::Floor => "__import__('math').floor",
            IntRound::Ceil => "__import__('math').ceil",
            IntRound::Trunc => "__import__('math').trunc",
        }
    }
}

/// A Python float computed from symbolic sizes. Equality, hashing and order compare
/// constants by their bits (an int expression may hold one through a rounding atom,
/// [`super::Atom::FloatToInt`], and those need `Eq`/`Ord`): `0.0` and `-0.0` differ,
/// as they compute differently (`1 / x`).
#[derive(Clone, Debug)]
pub enum FloatExpr {
    Const(f64),
    /// `float(e)`: an int expression's value as a float (torch's `sym_float`).
    Int(SymExpr),
    Bin(FloatOp, Box<FloatExpr>, Box<FloatExpr>),
    Neg(Box<FloatExpr>),
    /// `math.sqrt(a)` (torch's `_sym_sqrt`).
    Sqrt(Box<FloatExpr>),
    /// `abs(a)`.
    Abs(Box<FloatExpr>),
}

impl FloatExpr {
    /// The variant's rank, then its operands: what equality, hashing and order read.
    fn rank(&self) -> u8 {
        match self {
            FloatExpr::Const(_) => 0,
            FloatExpr::Int(_) => 1,
            FloatExpr::Bin(..) => 2,
            FloatExpr::Neg(_) => 3,
            FloatExpr::Sqrt(_) => 4,
            FloatExpr::Abs(_) => 5,
        }
    }
}

impl PartialEq for FloatExpr {
    fn eq(&self, o: &FloatExpr) -> bool {
        self.cmp(o) == std::cmp::Ordering::Equal
    }
}

impl Eq for FloatExpr {}

impl PartialOrd for FloatExpr {
    fn partial_cmp(&self, o: &FloatExpr) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}

impl Ord for FloatExpr {
    fn cmp(&self, o: &FloatExpr) -> std::cmp::Ordering {
        use FloatExpr::*;
        match (self, o) {
            (Const(a), Const(b)) => a.to_bits().cmp(&b.to_bits()),
            (Int(a), Int(b)) => a.cmp(b),
            (Bin(p, a, b), Bin(q, c, d)) => (*p as u8)
                .cmp(&(*q as u8))
                .then_with(|| a.cmp(c))
                .then_with(|| b.cmp(d)),
            (Neg(a), Neg(b)) | (Sqrt(a), Sqrt(b)) | (Abs(a), Abs(b)) => a.cmp(b),
            _ => self.rank().cmp(&o.rank()),
        }
    }
}

impl std::hash::Hash for FloatExpr {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        self.rank().hash(h);
        match self {
            FloatExpr::Const(c) => c.to_bits().hash(h),
            FloatExpr::Int(e) => e.hash(h),
            FloatExpr::Bin(op, a, b) => {
                op.hash(h);
                a.hash(h);
                b.hash(h);
            }
            FloatExpr::Neg(a) | FloatExpr::Sqrt(a) | FloatExpr::Abs(a) => a.hash(h),
        }
    }
}

/// What is known of a float's sign for every size the symbols' minimums admit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sign {
    Positive,
    NonNegative,
    Unknown,
}

impl FloatExpr {
    pub fn constant(c: f64) -> FloatExpr {
        FloatExpr::Const(c)
    }

    /// `float(e)`; a constant for a constant `e`.
    pub fn of_int(e: SymExpr) -> FloatExpr {
        match e.as_const() {
            Some(c) => FloatExpr::Const(c as f64),
            None => FloatExpr::Int(e),
        }
    }

    /// `a op b`, folded where both are constants (and Python would not raise).
    pub fn binary(op: FloatOp, a: FloatExpr, b: FloatExpr) -> FloatExpr {
        if let (Some(x), Some(y)) = (a.as_const(), b.as_const()) {
            if let Some(r) = op.apply(x, y) {
                return FloatExpr::Const(r);
            }
        }
        FloatExpr::Bin(op, Box::new(a), Box::new(b))
    }

    pub fn negated(a: FloatExpr) -> FloatExpr {
        match a {
            FloatExpr::Const(c) => FloatExpr::Const(-c),
            FloatExpr::Neg(x) => *x,
            a => FloatExpr::Neg(Box::new(a)),
        }
    }

    /// `abs(a)`, folded for a constant.
    pub fn abs(a: FloatExpr) -> FloatExpr {
        match a {
            FloatExpr::Const(c) => FloatExpr::Const(c.abs()),
            a => FloatExpr::Abs(Box::new(a)),
        }
    }

    pub fn sqrt(a: FloatExpr) -> FloatExpr {
        match a {
            FloatExpr::Const(c) if c >= 0.0 => FloatExpr::Const(c.sqrt()),
            a => FloatExpr::Sqrt(Box::new(a)),
        }
    }

    pub fn as_const(&self) -> Option<f64> {
        match self {
            FloatExpr::Const(c) => Some(*c),
            _ => None,
        }
    }

    /// The int expression when this is exactly `float(e)`.
    pub fn as_int(&self) -> Option<&SymExpr> {
        match self {
            FloatExpr::Int(e) => Some(e),
            _ => None,
        }
    }

    /// The value under an assignment of symbols, as Python computes it; `None` where Python
    /// raises or an int expression has no value.
    pub fn eval(&self, value: &dyn Fn(u32) -> i64) -> Option<f64> {
        Some(match self {
            FloatExpr::Const(c) => *c,
            FloatExpr::Int(e) => e.eval(value)? as f64,
            FloatExpr::Bin(op, a, b) => op.apply(a.eval(value)?, b.eval(value)?)?,
            FloatExpr::Neg(a) => -a.eval(value)?,
            FloatExpr::Sqrt(a) => {
                let v = a.eval(value)?;
                if v < 0.0 {
                    return None;
                }
                v.sqrt()
            }
            FloatExpr::Abs(a) => a.eval(value)?.abs(),
        })
    }

    /// Every symbol it reads, sorted, without repeats.
    pub fn symbols(&self) -> Vec<u32> {
        let mut out = Vec::new();
        self.visit_ints(&mut |e| out.extend(e.symbols()));
        out.sort_unstable();
        out.dedup();
        out
    }

    /// Calls `f` on each int expression it reads.
    pub fn visit_ints(&self, f: &mut dyn FnMut(&SymExpr)) {
        match self {
            FloatExpr::Const(_) => {}
            FloatExpr::Int(e) => f(e),
            FloatExpr::Bin(_, a, b) => {
                a.visit_ints(f);
                b.visit_ints(f);
            }
            FloatExpr::Neg(a) | FloatExpr::Sqrt(a) | FloatExpr::Abs(a) => a.visit_ints(f),
        }
    }

    /// Replaces symbols by expressions (`f` answers `None` to keep a symbol); constants fold.
    pub fn substitute(&self, f: &dyn Fn(u32) -> Option<SymExpr>) -> FloatExpr {
        match self {
            FloatExpr::Const(c) => FloatExpr::Const(*c),
            FloatExpr::Int(e) => FloatExpr::of_int(e.substitute(f)),
            FloatExpr::Bin(op, a, b) => FloatExpr::binary(*op, a.substitute(f), b.substitute(f)),
            FloatExpr::Neg(a) => FloatExpr::negated(a.substitute(f)),
            FloatExpr::Sqrt(a) => FloatExpr::sqrt(a.substitute(f)),
            FloatExpr::Abs(a) => FloatExpr::abs(a.substitute(f)),
        }
    }

    /// Its sign for every assignment where each symbol `k` is at least `min(k)` (a symbol
    /// with a negative minimum, an int input's, bounds nothing).
    pub fn sign(&self, min: &dyn Fn(u32) -> i64) -> Sign {
        use Sign::*;
        let of = |v: f64| {
            if v > 0.0 {
                Positive
            } else if v == 0.0 {
                NonNegative
            } else {
                Unknown
            }
        };
        match self {
            FloatExpr::Const(c) => of(*c),
            FloatExpr::Int(e) => e.lower_bound(min).map_or(Unknown, |v| of(v as f64)),
            FloatExpr::Bin(op, a, b) => {
                let (x, y) = (a.sign(min), b.sign(min));
                match op {
                    FloatOp::Add => match (x, y) {
                        (Unknown, _) | (_, Unknown) => Unknown,
                        (Positive, _) | (_, Positive) => Positive,
                        _ => NonNegative,
                    },
                    FloatOp::Mul | FloatOp::Div => match (x, y) {
                        (Positive, Positive) => Positive,
                        (Unknown, _) | (_, Unknown) => Unknown,
                        _ => NonNegative,
                    },
                    FloatOp::Pow => match x {
                        Positive => Positive,
                        NonNegative => NonNegative,
                        Unknown => Unknown,
                    },
                    FloatOp::Sub => match (a.as_const(), b.as_const()) {
                        (Some(p), Some(q)) => of(p - q),
                        _ => Unknown,
                    },
                    FloatOp::Max => match (x, y) {
                        (Positive, _) | (_, Positive) => Positive,
                        (NonNegative, _) | (_, NonNegative) => NonNegative,
                        _ => Unknown,
                    },
                    FloatOp::Min => match (x, y) {
                        (Unknown, _) | (_, Unknown) => Unknown,
                        (Positive, Positive) => Positive,
                        _ => NonNegative,
                    },
                    // `a // b` and `a % b` of non-negative floats are non-negative.
                    FloatOp::FloorDiv | FloatOp::Mod => match (x, y) {
                        (Unknown, _) | (_, Unknown) => Unknown,
                        _ => NonNegative,
                    },
                }
            }
            FloatExpr::Neg(a) => match a.as_const() {
                Some(c) => of(-c),
                None => Unknown,
            },
            FloatExpr::Sqrt(a) | FloatExpr::Abs(a) => match a.sign(min) {
                Positive => Positive,
                _ => NonNegative,
            },
        }
    }

    /// Whether it is non-zero for every admitted assignment (a divisor Python never raises on).
    pub fn nonzero(&self, min: &dyn Fn(u32) -> i64) -> bool {
        match self {
            FloatExpr::Neg(a) => a.nonzero(min),
            FloatExpr::Const(c) => *c != 0.0,
            _ => self.sign(min) == Sign::Positive,
        }
    }

    /// Prints with symbols named by `name`. `python`: as Python source computing the value
    /// (`float(...)` around int expressions, `__import__('math').sqrt`), else as the logs
    /// show it (`s0 ** 0.5`, `math.sqrt(s0)`).
    pub fn render(&self, name: &dyn Fn(u32) -> String, python: bool) -> String {
        match self {
            FloatExpr::Const(c) => float_literal(*c),
            FloatExpr::Int(e) if python => format!("float({})", e.render(name)),
            FloatExpr::Int(e) => {
                let s = e.render(name);
                if e.as_symbol().is_some() {
                    s
                } else {
                    format!("({s})")
                }
            }
            FloatExpr::Bin(op, a, b) if op.is_call() => format!(
                "{}({}, {})",
                op.symbol(),
                a.render(name, python),
                b.render(name, python)
            ),
            FloatExpr::Bin(op, a, b) => format!(
                "({} {} {})",
                a.render(name, python),
                op.symbol(),
                b.render(name, python)
            ),
            FloatExpr::Abs(a) => format!("abs({})", a.render(name, python)),
            FloatExpr::Neg(a) => format!("(-{})", a.render(name, python)),
            FloatExpr::Sqrt(a) => format!(
                "{}({})",
                if python {
                    "__import__('math').sqrt"
                } else {
                    "math.sqrt"
                },
                a.render(name, python)
            ),
        }
    }
}

/// A Python float literal that reads back as the same value.
fn float_literal(v: f64) -> String {
    if v.is_nan() {
        "float('nan')".into()
    } else if v.is_infinite() {
        if v > 0.0 {
            "float('inf')".into()
        } else {
            "float('-inf')".into()
        }
    } else {
        // Rust's `{:?}` is the shortest text that reads back exactly, with a `.0` on
        // integral values, as Python's `repr`.
        format!("{v:?}")
    }
}

impl fmt::Display for FloatExpr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = match self {
            // Top level: `sym_float s0 + 1`, as the int metadata prints.
            FloatExpr::Int(e) => e.to_string(),
            other => other.render(&|k| format!("s{k}"), false),
        };
        f.write_str(&s)
    }
}

/// `lhs op rhs` over symbolic floats: a guard a branch on a float of sizes relies on.
#[derive(Clone, Debug, PartialEq)]
pub struct FloatRelation {
    pub lhs: FloatExpr,
    pub op: RelOp,
    pub rhs: FloatExpr,
}

impl FloatRelation {
    pub fn new(lhs: FloatExpr, op: RelOp, rhs: FloatExpr) -> FloatRelation {
        FloatRelation { lhs, op, rhs }
    }

    /// Whether it holds under an assignment, with Python's float comparisons (NaN compares
    /// unequal to everything); `None` where a side has no value.
    pub fn eval(&self, value: &dyn Fn(u32) -> i64) -> Option<bool> {
        Some(self.op.holds(self.lhs.eval(value)?, self.rhs.eval(value)?))
    }

    /// The relation that holds exactly where this one does not, NaN aside (sizes give none).
    pub fn negate(&self) -> FloatRelation {
        FloatRelation::new(self.lhs.clone(), self.op.negate(), self.rhs.clone())
    }

    pub fn symbols(&self) -> Vec<u32> {
        super::union_of_symbols(self.lhs.symbols(), self.rhs.symbols())
    }

    /// As [`FloatExpr::render`].
    pub fn render(&self, name: &dyn Fn(u32) -> String, python: bool) -> String {
        format!(
            "{} {} {}",
            self.lhs.render(name, python),
            self.op.symbol(),
            self.rhs.render(name, python)
        )
    }
}

impl fmt::Display for FloatRelation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.render(&|k| format!("s{k}"), false))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(k: u32) -> FloatExpr {
        FloatExpr::Int(SymExpr::symbol(k))
    }

    fn c(v: f64) -> FloatExpr {
        FloatExpr::Const(v)
    }

    #[test]
    fn evaluates_as_python() {
        let e = FloatExpr::binary(
            FloatOp::Add,
            FloatExpr::binary(FloatOp::Pow, s(0), c(0.5)),
            FloatExpr::binary(FloatOp::Div, s(1), s(0)),
        );
        assert_eq!(e.eval(&|k| [4, 6][k as usize]), Some(2.0 + 1.5));
        assert_eq!(e.to_string(), "((s0 ** 0.5) + (s1 / s0))");
        assert_eq!(
            e.render(&|k| format!("t{k}"), true),
            "((float(t0) ** 0.5) + (float(t1) / float(t0)))"
        );
        assert_eq!(e.symbols(), [0, 1]);
        // Python raises: no value.
        assert_eq!(
            FloatExpr::binary(FloatOp::Div, c(1.0), s(0)).eval(&|_| 0),
            None
        );
        assert_eq!(FloatExpr::sqrt(s(0)).eval(&|_| 9), Some(3.0));
        assert_eq!(FloatExpr::sqrt(s(0)).eval(&|_| -1), None);
        assert_eq!(
            FloatExpr::binary(FloatOp::Pow, s(0), c(0.5)).eval(&|_| -4),
            None
        );
    }

    #[test]
    fn constants_fold_and_substitution_folds() {
        assert_eq!(
            FloatExpr::binary(FloatOp::Mul, c(2.0), c(1.5)),
            FloatExpr::Const(3.0)
        );
        let e = FloatExpr::binary(FloatOp::Div, s(0), c(2.0));
        let r = e.substitute(&|_| Some(SymExpr::constant(5)));
        assert_eq!(r, FloatExpr::Const(2.5));
        assert_eq!(
            FloatExpr::of_int(SymExpr::constant(3)),
            FloatExpr::Const(3.0)
        );
    }

    #[test]
    fn signs_from_symbol_minimums() {
        let two = |_| 2;
        assert_eq!(
            FloatExpr::binary(FloatOp::Pow, s(0), c(-0.5)).sign(&two),
            Sign::Positive
        );
        assert!(FloatExpr::sqrt(s(0)).nonzero(&two));
        let d = FloatExpr::binary(FloatOp::Sub, s(0), c(2.0));
        assert_eq!(d.sign(&two), Sign::Unknown);
        assert!(!d.nonzero(&two));
        // An int input's symbol bounds nothing.
        assert_eq!(s(0).sign(&|_| i64::MIN), Sign::Unknown);
    }

    #[test]
    fn floor_division_modulo_and_extremes_follow_python() {
        // Python: 7.5 // 2 == 3.0, -7.5 // 2 == -4.0, 7.5 % -2 == -0.5, 4.0 % -2.0 == -0.0.
        assert_eq!(py_divmod(7.5, 2.0), Some((3.0, 1.5)));
        assert_eq!(py_divmod(-7.5, 2.0), Some((-4.0, 0.5)));
        assert_eq!(py_divmod(7.5, -2.0), Some((-4.0, -0.5)));
        let (_, m) = py_divmod(4.0, -2.0).unwrap();
        assert!(m == 0.0 && m.is_sign_negative());
        assert_eq!(py_divmod(1.0, 0.0), None);
        let half = FloatExpr::binary(FloatOp::Div, s(0), c(2.0));
        let fd = FloatExpr::binary(FloatOp::FloorDiv, half.clone(), c(1.0));
        assert_eq!(fd.eval(&|_| 7), Some(3.0));
        assert_eq!(fd.to_string(), "((s0 / 2.0) // 1.0)");
        let mx = FloatExpr::binary(FloatOp::Max, half.clone(), c(3.0));
        assert_eq!((mx.eval(&|_| 4), mx.eval(&|_| 9)), (Some(3.0), Some(4.5)));
        assert_eq!(mx.to_string(), "max((s0 / 2.0), 3.0)");
        let ab = FloatExpr::abs(FloatExpr::binary(FloatOp::Sub, half, c(3.0)));
        assert_eq!(ab.eval(&|_| 2), Some(2.0));
        assert_eq!(ab.sign(&|_| 2), Sign::NonNegative);
        assert_eq!(FloatExpr::abs(c(-2.0)), c(2.0));
    }

    #[test]
    fn roundings_are_python_s() {
        // `round` is half to even; `int()` truncates toward zero.
        assert_eq!(IntRound::Round.apply(2.5), Some(2));
        assert_eq!(IntRound::Round.apply(3.5), Some(4));
        assert_eq!(IntRound::Round.apply(-2.5), Some(-2));
        assert_eq!(IntRound::Trunc.apply(-1.5), Some(-1));
        assert_eq!(IntRound::Floor.apply(-1.5), Some(-2));
        assert_eq!(IntRound::Ceil.apply(-1.5), Some(-1));
        assert_eq!(IntRound::Round.apply(f64::INFINITY), None);
        assert_eq!(IntRound::Floor.apply(f64::NAN), None);
        let r = SymExpr::of_float(
            IntRound::Round,
            FloatExpr::binary(FloatOp::Div, s(0), c(2.0)),
        );
        assert_eq!(r.eval(&|_| 5), Some(2));
        assert_eq!(r.eval(&|_| 7), Some(4));
        assert_eq!(r.symbols(), [0]);
        assert!(r.has_float_atoms() && !SymExpr::symbol(0).has_float_atoms());
        assert_eq!(r.to_string(), "round((float(s0) / 2.0))");
        // Substituting a constant folds the rounding.
        assert_eq!(
            r.substitute(&|_| Some(SymExpr::constant(3))),
            SymExpr::constant(2)
        );
        // Equal trees are equal atoms (constants by their bits): the canonical form holds.
        let r2 = SymExpr::of_float(
            IntRound::Round,
            FloatExpr::binary(FloatOp::Div, s(0), c(2.0)),
        );
        assert_eq!(r.sub(&r2), SymExpr::constant(0));
        assert_ne!(c(0.0), c(-0.0));
    }

    #[test]
    fn relations_compare_as_python() {
        let r = FloatRelation::new(
            FloatExpr::binary(FloatOp::Div, s(0), c(2.0)),
            RelOp::Gt,
            c(2.0),
        );
        assert_eq!(r.eval(&|_| 5), Some(true));
        assert_eq!(r.eval(&|_| 4), Some(false));
        assert_eq!(r.negate().eval(&|_| 4), Some(true));
        assert_eq!(r.to_string(), "(s0 / 2.0) > 2.0");
    }
}
