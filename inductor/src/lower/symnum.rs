//! A symbolic int used as a number in a kernel (`x * (n // 2)`, `x + n % 3`, `x * max(n, 4)`):
//! its expression over the size symbols computed per element with Python's semantics.
//!
//! Size arithmetic prints `//` and `%` as C's `/` and `%` (a [`Size`]'s C form), which truncate
//! toward zero: right for sizes, which are never negative, wrong for an int input's symbol,
//! which may be any int (`-7 // 2` is `-4` in Python, `-3` in C; `-7 % 3` is `2`, not `-1`). So
//! a division or modulo whose operands are not proved non-negative is computed by body ops on
//! `int64` values (`tf_floordivi` / `tf_remi`: floor division and a remainder with the
//! divisor's sign), and `max`/`min` by the integer select; what is proved non-negative keeps
//! the index arithmetic's C form, a polynomial of any sign too (`+ - *` agree).

use fx::sym::Atom;
use fx::{DType, FloatExpr, FloatOp, Graph, IntRound, NodeMeta, SymExpr};

use crate::index::{Idx, SYMBOL_MIN};
use crate::ir::{BinOp, BodyBuilder, Scalar, UnOp, ValId};
use crate::size::Size;

/// The value of a symbolic int or float graph value, computable in a kernel.
#[derive(Clone)]
pub struct SymNum {
    expr: SymExpr,
    /// The symbols that may be zero or negative: the int inputs' (a size's symbol is at least
    /// [`SYMBOL_MIN`]).
    ints: Vec<u32>,
    /// A Python float computed from sizes (`float(T)`, `T ** -0.5`, `a / b`; torch's
    /// `SymFloat`): computed in double precision from its int parts, as Python does, and
    /// promoted as a float operand. `expr` is unused then.
    float: Option<FloatExpr>,
}

impl SymNum {
    /// `None` where a division or modulo's divisor is not proved non-zero (`x * (m // n)` with
    /// `n` an int: eager raises at `n == 0`, which a kernel cannot), so the op falls back.
    pub fn new(graph: &Graph, expr: &SymExpr) -> Option<SymNum> {
        let ints = int_symbols(graph);
        let n = SymNum {
            expr: expr.clone(),
            ints,
            float: None,
        };
        n.divisors_nonzero(expr).then_some(n)
    }

    /// A `SymFloat` graph value: as [`SymNum::new`] for each int expression it reads,
    /// promoted as a float. The tracer made float divisions, powers and square roots symbolic
    /// only where Python cannot raise for any admitted size.
    pub fn new_float(graph: &Graph, f: &FloatExpr) -> Option<SymNum> {
        let n = SymNum {
            expr: SymExpr::constant(0),
            ints: int_symbols(graph),
            float: Some(f.clone()),
        };
        n.float_divisors_nonzero(f).then_some(n)
    }

    /// Whether the value is a Python float.
    pub fn is_float(&self) -> bool {
        self.float.is_some()
    }

    /// Whether it is a float that is not just an int's value (`n / 2`, not `float(n)`).
    pub fn is_fractional(&self) -> bool {
        self.float.as_ref().is_some_and(|f| f.as_int().is_none())
    }

    /// The least value of symbol `k` over the sizes the guards admit: none known (-1, which
    /// [`SymExpr::lower_bound`] reads as "no bound") for an int input's symbol.
    fn min(&self, k: u32) -> i64 {
        if self.ints.contains(&k) {
            -1
        } else {
            SYMBOL_MIN
        }
    }

    fn lower_bound(&self, e: &SymExpr) -> Option<i64> {
        e.lower_bound(&|k| self.min(k))
    }

    fn divisors_nonzero(&self, e: &SymExpr) -> bool {
        e.terms().iter().all(|(m, _)| {
            m.iter().all(|a| match a {
                Atom::Sym(_) => true,
                Atom::FloorDiv(x, y) | Atom::Mod(x, y) => {
                    let nonzero = match y.as_const() {
                        Some(c) => c != 0,
                        None => self.lower_bound(y).is_some_and(|v| v >= 1),
                    };
                    nonzero && self.divisors_nonzero(x) && self.divisors_nonzero(y)
                }
                Atom::Max(x, y) | Atom::Min(x, y) => {
                    self.divisors_nonzero(x) && self.divisors_nonzero(y)
                }
                Atom::FloatToInt(_, f) => self.float_divisors_nonzero(f),
            })
        })
    }

    /// [`SymNum::divisors_nonzero`] for each int expression a float reads.
    fn float_divisors_nonzero(&self, f: &FloatExpr) -> bool {
        let mut ok = true;
        f.visit_ints(&mut |e| ok &= self.divisors_nonzero(e));
        ok
    }

    /// Whether C's index arithmetic computes `e` as Python does: no `max`/`min` (index
    /// arithmetic has none), and each division and modulo of a non-negative dividend by a
    /// positive divisor (where truncation is the floor).
    fn c_exact(&self, e: &SymExpr) -> bool {
        e.terms().iter().all(|(m, _)| {
            m.iter().all(|a| match a {
                Atom::Sym(_) => true,
                Atom::FloorDiv(x, y) | Atom::Mod(x, y) => {
                    self.lower_bound(x).is_some_and(|v| v >= 0)
                        && self.lower_bound(y).is_some_and(|v| v >= 1)
                        && self.c_exact(x)
                        && self.c_exact(y)
                }
                Atom::Max(..) | Atom::Min(..) | Atom::FloatToInt(..) => false,
            })
        })
    }

    /// The value as a body value: `int64` for an int, `float64` for a float (the caller
    /// casts it to the compute dtype, as eager converts a Python number).
    pub fn value(&self, b: &mut BodyBuilder) -> ValId {
        match &self.float {
            // `float(e)`: the int, cast by the caller (as before floats had expressions).
            Some(FloatExpr::Int(e)) => self.expr_value(b, e),
            Some(f) => self.float_value(b, f),
            None => self.expr_value(b, &self.expr),
        }
    }

    fn float_value(&self, b: &mut BodyBuilder, f: &FloatExpr) -> ValId {
        match f {
            FloatExpr::Const(c) => b.constant(Scalar::F(*c), DType::Float64),
            FloatExpr::Int(e) => {
                let i = self.expr_value(b, e);
                b.cast(i, DType::Float64)
            }
            FloatExpr::Bin(op, x, y) => {
                let (vx, vy) = (self.float_value(b, x), self.float_value(b, y));
                let op = match op {
                    FloatOp::Add => BinOp::Add,
                    FloatOp::Sub => BinOp::Sub,
                    FloatOp::Mul => BinOp::Mul,
                    FloatOp::Div => BinOp::Div,
                    FloatOp::Pow => BinOp::Pow,
                    // Python's float `//` and `%`: the floor quotient and the remainder with
                    // the divisor's sign, as torch's `floor_divide` / `remainder` of floats.
                    FloatOp::FloorDiv => BinOp::FloorDiv,
                    FloatOp::Mod => BinOp::Rem,
                    FloatOp::Max => BinOp::Max,
                    FloatOp::Min => BinOp::Min,
                };
                b.binary(op, vx, vy)
            }
            FloatExpr::Neg(x) => {
                let v = self.float_value(b, x);
                b.unary(UnOp::Neg, v)
            }
            FloatExpr::Sqrt(x) => {
                let v = self.float_value(b, x);
                b.unary(UnOp::Sqrt, v)
            }
            FloatExpr::Abs(x) => {
                let v = self.float_value(b, x);
                b.unary(UnOp::Abs, v)
            }
        }
    }

    fn expr_value(&self, b: &mut BodyBuilder, e: &SymExpr) -> ValId {
        if self.c_exact(e) {
            return b.index_value(Idx::constant(Size::expr(e.clone())));
        }
        let mut acc: Option<ValId> = None;
        for (m, c) in e.terms() {
            // The symbols and the coefficient as index arithmetic, the other atoms as values.
            let (syms, others): (Vec<&Atom>, Vec<&Atom>) =
                m.iter().partition(|a| matches!(a, Atom::Sym(_)));
            let poly = SymExpr::monomial(syms.into_iter().cloned().collect(), *c);
            let mut t = None;
            if poly != SymExpr::constant(1) || others.is_empty() {
                t = Some(b.index_value(Idx::constant(Size::expr(poly))));
            }
            for a in others {
                let v = self.atom_value(b, a);
                t = Some(match t {
                    None => v,
                    Some(t) => b.binary(BinOp::Mul, t, v),
                });
            }
            let t = t.expect("a term has a factor");
            acc = Some(match acc {
                None => t,
                Some(x) => b.binary(BinOp::Add, x, t),
            });
        }
        acc.unwrap_or_else(|| b.index_value(Idx::constant(Size::Const(0))))
    }

    fn atom_value(&self, b: &mut BodyBuilder, a: &Atom) -> ValId {
        let (op, x, y) = match a {
            Atom::FloorDiv(x, y) => (BinOp::FloorDiv, x, y),
            Atom::Mod(x, y) => (BinOp::Rem, x, y),
            Atom::Max(x, y) => (BinOp::Max, x, y),
            Atom::Min(x, y) => (BinOp::Min, x, y),
            // `round(f)` (half to even, as `torch.round`), `floor`, `ceil`, `trunc` of the
            // float in double precision, then the int.
            Atom::FloatToInt(how, f) => {
                let v = self.float_value(b, f);
                let op = match how {
                    IntRound::Round => UnOp::Round,
                    IntRound::Floor => UnOp::Floor,
                    IntRound::Ceil => UnOp::Ceil,
                    IntRound::Trunc => UnOp::Trunc,
                };
                let r = b.unary(op, v);
                return b.cast(r, DType::Int64);
            }
            Atom::Sym(_) => {
                let e = SymExpr::monomial(vec![a.clone()], 1);
                return b.index_value(Idx::constant(Size::expr(e)));
            }
        };
        let whole = SymExpr::monomial(vec![a.clone()], 1);
        if self.c_exact(&whole) {
            return b.index_value(Idx::constant(Size::expr(whole)));
        }
        let (vx, vy) = (self.expr_value(b, x), self.expr_value(b, y));
        b.binary(op, vx, vy)
    }
}

/// The symbols of the graph's int inputs (a placeholder of kind `SymInt` that is one symbol).
fn int_symbols(graph: &Graph) -> Vec<u32> {
    graph
        .placeholders()
        .iter()
        .filter_map(|&p| match &graph.node(p).meta {
            NodeMeta::SymInt(e) => e.as_symbol(),
            _ => None,
        })
        .collect()
}
