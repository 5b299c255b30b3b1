//! Conditions on symbolic sizes: a [`Relation`], or relations joined by `or` or by `and`.
//!
//! `T in (2, 3, C)` over a tuple is one condition, `T == 2 or T == 3 or T == C`, decided once and
//! guarded whole, as torch's `Or` of `Eq`s: guarding the first equality that holds (`T == 2`)
//! would pin `T` to a constant. Its negation (`not in`, or the disjunction decided false) is the
//! conjunction of the negated relations. The two shapes are closed under negation, so a
//! symbolic bool never needs a deeper tree.

use std::fmt;

use crate::sym::Relation;

/// A condition on sizes a symbolic bool stands for.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Cond {
    Rel(Relation),
    /// True when any of the relations holds (at least two).
    Any(Vec<Relation>),
    /// True when all of the relations hold (at least two).
    All(Vec<Relation>),
}

impl From<Relation> for Cond {
    fn from(r: Relation) -> Cond {
        Cond::Rel(r)
    }
}

impl Cond {
    /// `relations` joined by `or` (`any`) or `and`; one relation is itself. `None` for none
    /// (the caller knows the answer: `false` for an empty `or`, `true` for an empty `and`).
    pub fn join(relations: Vec<Relation>, any: bool) -> Option<Cond> {
        match relations.len() {
            0 => None,
            1 => relations.into_iter().next().map(Cond::Rel),
            _ if any => Some(Cond::Any(relations)),
            _ => Some(Cond::All(relations)),
        }
    }

    /// The relations it joins (one for [`Cond::Rel`]).
    pub fn relations(&self) -> &[Relation] {
        match self {
            Cond::Rel(r) => std::slice::from_ref(r),
            Cond::Any(rs) | Cond::All(rs) => rs,
        }
    }

    /// Whether it joins by `or` (a single relation counts as either).
    pub fn is_any(&self) -> bool {
        matches!(self, Cond::Any(_))
    }

    /// `not self`, by De Morgan: each relation negated, `or` and `and` swapped.
    pub fn negate(&self) -> Cond {
        let not = |r: &Relation| Relation::new(r.lhs.clone(), r.op.negate(), r.rhs.clone());
        match self {
            Cond::Rel(r) => Cond::Rel(not(r)),
            Cond::Any(rs) => Cond::All(rs.iter().map(not).collect()),
            Cond::All(rs) => Cond::Any(rs.iter().map(not).collect()),
        }
    }

    /// Each relation rewritten by `f`, the shape kept.
    pub fn map(&self, f: impl Fn(&Relation) -> Relation) -> Cond {
        match self {
            Cond::Rel(r) => Cond::Rel(f(r)),
            Cond::Any(rs) => Cond::Any(rs.iter().map(f).collect()),
            Cond::All(rs) => Cond::All(rs.iter().map(f).collect()),
        }
    }

    /// Whether it holds under an assignment (`None`: a relation is unevaluable, e.g. `// 0`).
    pub fn eval(&self, value: &dyn Fn(u32) -> i64) -> Option<bool> {
        match self {
            Cond::Rel(r) => r.eval(value),
            Cond::Any(rs) => {
                for r in rs {
                    if r.eval(value)? {
                        return Some(true);
                    }
                }
                Some(false)
            }
            Cond::All(rs) => {
                for r in rs {
                    if !r.eval(value)? {
                        return Some(false);
                    }
                }
                Some(true)
            }
        }
    }

    /// Every symbol a relation reads, sorted, without repeats.
    pub fn symbols(&self) -> Vec<u32> {
        let mut out: Vec<u32> = self.relations().iter().flat_map(|r| r.symbols()).collect();
        out.sort_unstable();
        out.dedup();
        out
    }

    /// As Python reads it (`s0 == 2 or s0 == 3 or s1 == s0`): comparisons bind tighter than
    /// `or` and `and`, so no parentheses.
    pub fn render(&self, name: &dyn Fn(u32) -> String) -> String {
        let sep = if self.is_any() { " or " } else { " and " };
        self.relations()
            .iter()
            .map(|r| r.render(name))
            .collect::<Vec<_>>()
            .join(sep)
    }
}

impl fmt::Display for Cond {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.render(&|k| format!("s{k}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sym::{RelOp, SymExpr};

    fn s(k: u32) -> SymExpr {
        SymExpr::symbol(k)
    }

    fn eq(a: SymExpr, b: SymExpr) -> Relation {
        Relation::new(a, RelOp::Eq, b)
    }

    /// `T in (2, 3, C)`: true where any equality holds; its negation is the conjunction of the
    /// inequalities, false exactly where the disjunction is true.
    #[test]
    fn a_disjunction_and_its_negation() {
        let c = Cond::join(
            vec![eq(s(0), 2.into()), eq(s(0), 3.into()), eq(s(0), s(1))],
            true,
        )
        .unwrap();
        assert_eq!(c.to_string(), "s0 == 2 or s0 == 3 or s0 == s1");
        let not = c.negate();
        assert_eq!(not.to_string(), "s0 != 2 and s0 != 3 and s0 != s1");
        assert_eq!(not.negate(), c);
        for (t, w) in [(2, 5), (3, 5), (4, 4), (4, 5), (5, 6)] {
            let v = |k: u32| if k == 0 { t } else { w };
            let expect = t == 2 || t == 3 || t == w;
            assert_eq!(c.eval(&v), Some(expect));
            assert_eq!(not.eval(&v), Some(!expect));
        }
        assert_eq!(c.symbols(), [0, 1]);
    }

    #[test]
    fn one_relation_is_itself() {
        let r = eq(s(0), 4.into());
        assert_eq!(
            Cond::join(vec![r.clone()], true),
            Some(Cond::Rel(r.clone()))
        );
        assert_eq!(Cond::join(vec![], true), None);
        let c = Cond::Rel(r);
        assert_eq!(c.eval(&|_| 4), Some(true));
        assert_eq!(c.eval(&|_| 5), Some(false));
        assert_eq!(c.negate().eval(&|_| 5), Some(true));
    }
}
