//! Conditions joined by `or` / `and` in the shape environment (`fx::Cond`): `T in (2, 3, C)`
//! over a tuple or a list is decided once, at the hints, and guarded whole, as torch guards the
//! `Or` of its `Eq`s. Deciding it item by item instead guarded the first equality that held
//! (`T == 2`), which pins `T` to a constant: every later size recompiled where torch.compile
//! keeps one graph.
//!
//! A disjunction that holds is kept as one guard (`ShapeEnv::any`, the line
//! `SHAPE_ENV L['x'].size(1) == 2 or L['x'].size(1) == 3 or ...`). A conjunction that holds (a
//! disjunction decided false, `not in`) is the relations it joins, each recorded as a branch's
//! relation is: they admit exactly the sizes torch's one `not (...)` guard admits, and the
//! environment then answers each of them without a new guard.

use fx::{Cond, Relation};

use super::shape_env::ShapeEnv;
use crate::event::Location;

/// What a condition comes to in an environment.
pub enum Reduced {
    /// The same answer for every size the environment admits.
    Known(bool),
    /// Still depends on the sizes: the relations the environment cannot answer, over the
    /// representatives.
    Open(Cond),
}

impl ShapeEnv {
    /// `c` with every relation the environment answers ([`ShapeEnv::known`]) folded in: a
    /// disjunction with a true item is true, its false items are dropped (an `and` the same
    /// way round); a disjunction guarded already is true, and one whose negation was guarded
    /// is false.
    pub fn reduce(&self, c: &Cond) -> Reduced {
        if let Cond::Rel(r) = c {
            return match self.known(r) {
                Some(answer) => Reduced::Known(answer),
                None => Reduced::Open(Cond::Rel(self.canon_relation(r))),
            };
        }
        let any = c.is_any();
        let mut open: Vec<Relation> = Vec::new();
        for r in c.relations() {
            match self.known(r) {
                // `true` in an `or` (`false` in an `and`) decides it.
                Some(answer) if answer == any => return Reduced::Known(any),
                Some(_) => {}
                None => {
                    let r = self.canon_relation(r);
                    if !open.contains(&r) {
                        open.push(r);
                    }
                }
            }
        }
        let Some(open) = Cond::join(open, any) else {
            return Reduced::Known(!any);
        };
        let guarded = |d: &Cond| {
            self.any.iter().any(|(rs, _)| {
                rs.len() == d.relations().len() && d.relations().iter().all(|r| rs.contains(r))
            })
        };
        match &open {
            Cond::Any(_) if guarded(&open) => Reduced::Known(true),
            Cond::All(_) if guarded(&open.negate()) => Reduced::Known(false),
            _ => Reduced::Open(open),
        }
    }

    /// The answer of `c` where the environment decides it without a new guard.
    pub fn known_cond(&self, c: &Cond) -> Option<bool> {
        match self.reduce(c) {
            Reduced::Known(answer) => Some(answer),
            Reduced::Open(_) => None,
        }
    }

    /// `c` decided at the hints, the answer guarded: a relation as a branch's
    /// ([`ShapeEnv::decide`]: an equality may replace a symbol), a disjunction that holds as
    /// one guard, a conjunction that holds as its relations. `None`: unevaluable at the hints.
    pub fn decide_cond(&mut self, c: &Cond, origin: Option<Location>) -> Option<bool> {
        let open = match self.reduce(c) {
            Reduced::Known(answer) => return Some(answer),
            Reduced::Open(open) => open,
        };
        if let Cond::Rel(r) = &open {
            return self.decide(&r.lhs, r.op, &r.rhs, origin);
        }
        let answer = open.eval(&|k| self.symbols[k as usize].hint)?;
        match if answer { open } else { open.negate() } {
            Cond::Any(rs) => self.add_any(rs, origin),
            held => {
                for r in held.relations() {
                    self.add_relation(r.clone(), origin.clone());
                }
            }
        }
        Some(answer)
    }

    /// Records that the trace relies on one of `rs` holding (one does at the hints). Over the
    /// representatives; a relation that holds for every size makes it nothing to guard, one
    /// that never does is dropped, and a single one left is a relation
    /// ([`ShapeEnv::add_relation`]: it may replace a symbol).
    pub fn add_any(&mut self, rs: Vec<Relation>, origin: Option<Location>) {
        let mut open: Vec<Relation> = Vec::new();
        for r in &rs {
            match self.known(r) {
                Some(true) => return,
                Some(false) => {}
                None => {
                    let r = self.canon_relation(r);
                    if !open.contains(&r) {
                        open.push(r);
                    }
                }
            }
        }
        match Cond::join(open, true) {
            // None admitted: cannot hold at the hints (the caller evaluated it); kept as it
            // was, so the guard fails rather than admits sizes the trace never saw.
            None => self.any.push((rs, origin)),
            Some(Cond::Rel(r)) => self.add_relation(r, origin),
            Some(c) => {
                if !matches!(self.known_cond(&c), Some(true)) {
                    self.any.push((c.relations().to_vec(), origin));
                }
            }
        }
    }

    /// Every condition the trace relies on (relations and disjunctions, over the
    /// representatives): the sizes it admits, for probes (`fx::infer::Symbols::admits`) and
    /// templates' grids.
    pub fn conditions(&self) -> Vec<Cond> {
        self.relations
            .iter()
            .map(|(r, _)| Cond::Rel(r.clone()))
            .chain(self.any.iter().map(|(rs, _)| Cond::Any(rs.clone())))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use fx::{RelOp, SymExpr};

    use super::*;
    use crate::guards::shape_env::DynDim;
    use crate::source::Source;

    fn s(k: u32) -> SymExpr {
        SymExpr::symbol(k)
    }

    fn eq(a: SymExpr, b: SymExpr) -> Relation {
        Relation::new(a, RelOp::Eq, b)
    }

    fn env(hints: &[i64]) -> ShapeEnv {
        let mut env = ShapeEnv::default();
        let x = Source::local(0, "x");
        let d = DynDim {
            min: 2,
            max: None,
            duck: false,
        };
        for (i, h) in hints.iter().enumerate() {
            env.symbol_for(&x, i, *h, d);
        }
        env
    }

    /// `T in (2, 3, C)` at `T = 2`: one guard, the disjunction; `T` is not pinned.
    #[test]
    fn a_disjunction_that_holds_is_one_guard() {
        let mut e = env(&[2, 3]);
        let c = Cond::Any(vec![eq(s(0), 2.into()), eq(s(0), 3.into()), eq(s(0), s(1))]);
        assert_eq!(e.decide_cond(&c, None), Some(true));
        assert!(e.fixed.is_empty() && e.equal.is_empty() && e.relations.is_empty());
        assert_eq!(e.any.len(), 1);
        assert_eq!(e.known_cond(&c), Some(true));
        assert_eq!(e.known_cond(&c.negate()), Some(false));
        // Deciding it again adds nothing.
        assert_eq!(e.decide_cond(&c, None), Some(true));
        assert_eq!(e.any.len(), 1);
        let guards: Vec<String> = e.conditions().iter().map(|c| c.to_string()).collect();
        assert_eq!(guards, ["s0 == 2 or s0 == 3 or s0 == s1"]);
    }

    /// Decided false: the inequalities, each a relation the environment then knows.
    #[test]
    fn a_disjunction_decided_false_guards_its_negations() {
        let mut e = env(&[4, 5]);
        let c = Cond::Any(vec![eq(s(0), 2.into()), eq(s(0), 3.into()), eq(s(0), s(1))]);
        assert_eq!(e.decide_cond(&c, None), Some(false));
        let rels: Vec<String> = e.relations.iter().map(|(r, _)| r.to_string()).collect();
        assert_eq!(rels, ["s0 != 2", "s0 != 3", "s0 != s1"]);
        assert_eq!(e.known_cond(&c), Some(false));
        assert_eq!(e.known_cond(&c.negate()), Some(true));
    }

    /// Items the environment answers fold: a constant item that holds decides it with no
    /// guard; false items drop, and a single one left is a relation (here it pins `s1`).
    #[test]
    fn known_items_fold() {
        let mut e = env(&[4, 5]);
        let c = Cond::Any(vec![eq(2.into(), 3.into()), eq(s(1), 5.into())]);
        assert_eq!(e.decide_cond(&c, None), Some(true));
        assert!(e.any.is_empty());
        assert_eq!(e.fixed.len(), 1);
        let c = Cond::Any(vec![eq(s(0), 1.into()), eq(s(0), s(0))]);
        assert_eq!(e.known_cond(&c), Some(true));
    }
}
