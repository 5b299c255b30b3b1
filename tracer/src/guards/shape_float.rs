//! Symbolic floats in the shape environment: their values at the hints, and the comparisons of
//! them a trace decided (`if n / 2 > 2:`, a float specialized to its value), guarded as
//! [`FloatRelation`]s evaluated on every call with Python's float arithmetic
//! (`ShapeGuards::check`). torch guards the same expressions (`s0 / 2 > 2`) where ours would
//! otherwise have specialized the sizes they read.

use fx::{FloatExpr, FloatRelation, RelOp};

use super::shape_env::ShapeEnv;
use crate::event::Location;

impl ShapeEnv {
    /// The float's value at the hints; `None` where Python would raise there.
    pub fn float_hint(&self, f: &FloatExpr) -> Option<f64> {
        f.eval(&|k| self.symbols[k as usize].hint)
    }

    /// `f` over the representatives (see [`ShapeEnv::canon`]).
    pub fn canon_float(&self, f: &FloatExpr) -> FloatExpr {
        if !self.has_replacements() {
            return f.clone();
        }
        f.substitute(&|k| self.replacement(k))
    }

    /// The least value of symbol `k` the guards admit (an int input's: none, `INT_MIN`).
    pub fn symbol_min(&self, k: u32) -> i64 {
        self.symbols[self.rep(k) as usize].min
    }

    /// `lhs op rhs` of floats decided at the hints, the answer guarded; `None` where a side
    /// has no value there.
    pub fn decide_float(
        &mut self,
        lhs: &FloatExpr,
        op: RelOp,
        rhs: &FloatExpr,
        origin: Option<Location>,
    ) -> Option<bool> {
        let r = FloatRelation::new(self.canon_float(lhs), op, self.canon_float(rhs));
        let answer = r.eval(&|k| self.symbols[k as usize].hint)?;
        let guarded = if answer { r } else { r.negate() };
        if !guarded.symbols().is_empty() && !self.floats.iter().any(|(x, _)| *x == guarded) {
            self.floats.push((guarded, origin));
        }
        Some(answer)
    }
}

#[cfg(test)]
mod tests {
    use fx::{FloatOp, SymExpr};

    use super::*;
    use crate::guards::shape_env::DynDim;
    use crate::source::Source;

    /// A branch on `n / 2 > 2` guards that comparison, not `n`'s value: every size on the
    /// same side passes, the other side fails.
    #[test]
    fn a_float_branch_guards_the_comparison() {
        let mut e = ShapeEnv::default();
        let x = Source::local(0, "x");
        let dd = DynDim {
            min: 2,
            max: None,
            duck: false,
        };
        let s0 = e.symbol_for(&x, 0, 7, dd);
        let half = FloatExpr::binary(FloatOp::Div, FloatExpr::of_int(s0), FloatExpr::Const(2.0));
        assert_eq!(
            e.decide_float(&half, RelOp::Gt, &FloatExpr::Const(2.0), None),
            Some(true)
        );
        assert_eq!(e.floats.len(), 1);
        assert!(e.relations.is_empty() && e.fixed.is_empty());
        let g = &e.floats[0].0;
        assert_eq!(g.eval(&|_| 5), Some(true));
        assert_eq!(g.eval(&|_| 4), Some(false));
        // Deciding it again adds nothing; a constant comparison guards nothing.
        e.decide_float(&half, RelOp::Gt, &FloatExpr::Const(2.0), None);
        let c = FloatExpr::of_int(SymExpr::constant(3));
        e.decide_float(&c, RelOp::Lt, &FloatExpr::Const(4.0), None);
        assert_eq!(e.floats.len(), 1);
    }
}
