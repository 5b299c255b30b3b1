//! Symbolic rules of the views that cut a tensor along a symbolic dimension: `narrow`, `split`
//! (by a size or by sections), `split_with_sizes` and `chunk`. Every piece keeps the input's
//! strides and other sizes, so the whole result (a tensor, or a tuple of them) is written out
//! here rather than fitted. The decisions torch's decompositions make at the hints come back
//! as relations, as torch guards them:
//!
//! - the number of pieces of `split(k)` is `(L + k - 1) // k`, guarded equal to its value at
//!   the hints (torch's `guard_int` on it): lengths with as many pieces share a graph;
//!   `chunk(c)` is `split((L + c - 1) // c)`, whose piece count is the same for every `L`
//!   (`chunk(2)`: one graph over every length, as torch.compile);
//! - a piece of length 1 is no decision of the cut: an op that broadcasts the piece asks
//!   (`broadcast_relations`), as torch's `infer_size` does, so `split(3)` over lengths 9 and
//!   7 (last piece 3, then 1) followed by `+ 1` makes torch.compile's two graphs, and
//!   followed by `cat` one.
//!
//! `unbind` along a symbolic dimension has a piece per element: no rule, it specializes (as
//! torch).

use super::Sym;
use crate::graph::Arg;
use crate::meta::{Dim, NodeMeta, TensorMeta};
use crate::sym::{RelOp, Relation, SymExpr};
use crate::InferError;

/// Whether `name` is a view this module cuts along a symbolic dimension.
pub(super) fn is_cut(name: &str) -> bool {
    matches!(name, "narrow" | "split" | "split_with_sizes" | "chunk")
}

impl Sym<'_> {
    /// The argument at `pos`, or passed by one of `names`.
    pub(super) fn arg<'b>(
        args: &'b [Arg],
        kwargs: &'b [(String, Arg)],
        pos: usize,
        names: &[&str],
    ) -> Option<&'b Arg> {
        kwargs
            .iter()
            .find(|(k, _)| names.contains(&k.as_str()))
            .map(|(_, a)| a)
            .or(args.get(pos))
    }

    /// The result of cut `name` (see [`is_cut`]) when it cuts a symbolic dimension none of
    /// whose symbols is `pinned`; `None` otherwise (a static or pinned dimension: fitted).
    pub(super) fn cut(
        &self,
        name: &str,
        args: &[Arg],
        kwargs: &[(String, Arg)],
        pinned: &[u32],
        rels: &mut Vec<Relation>,
    ) -> Result<Option<NodeMeta>, InferError> {
        let x = args
            .first()
            .and_then(|a| self.tensor(a))
            .ok_or(InferError::Unsupported)?;
        if x.ndim() == 0 {
            return Err(InferError::Unsupported);
        }
        let dim_pos = if name == "narrow" { 1 } else { 2 };
        let dim = match Self::arg(args, kwargs, dim_pos, &["dim"]) {
            None => 0,
            Some(Arg::Int(d)) => *d,
            Some(_) => return Err(InferError::Unsupported),
        };
        let d = crate::infer::wrap_dim(dim, x.ndim())?;
        let len = x.sizes[d].expr();
        let syms = len.symbols();
        if syms.is_empty() || syms.iter().any(|k| pinned.contains(k)) {
            return Ok(None);
        }
        let zero = SymExpr::constant(0);
        let int = |a: Option<&Arg>| a.and_then(|a| self.int(a)).ok_or(InferError::Unsupported);
        let hint = |e: &SymExpr| self.hint(e).ok_or(InferError::Unsupported);
        let lengths: Vec<SymExpr> = match name {
            "narrow" => {
                let start = int(Self::arg(args, kwargs, 2, &["start"]))?;
                let length = int(Self::arg(args, kwargs, 3, &["length"]))?;
                // A negative start counts from the end (torch wraps it once).
                let start = if hint(&start)? < 0 {
                    rels.push(Relation::new(start.clone(), RelOp::Lt, zero.clone()));
                    start.add(&len)
                } else {
                    start
                };
                rels.push(Relation::new(start.clone(), RelOp::Ge, zero.clone()));
                rels.push(Relation::new(length.clone(), RelOp::Ge, zero.clone()));
                rels.push(Relation::new(start.add(&length), RelOp::Le, len.clone()));
                vec![length]
            }
            "chunk" => {
                let chunks = int(Self::arg(args, kwargs, 1, &["chunks"]))?;
                if hint(&chunks)? < 1 {
                    return Err(InferError::Unsupported);
                }
                let each = len.add(&chunks).add_const(-1).floordiv(&chunks);
                self.split_by(&len, &each, rels)?
            }
            _ => {
                let a = Self::arg(
                    args,
                    kwargs,
                    1,
                    &["split_size", "split_size_or_sections", "split_sizes"],
                );
                match a {
                    Some(Arg::Tuple(items) | Arg::List(items)) => {
                        let sections: Vec<SymExpr> = items
                            .iter()
                            .map(|i| self.int(i))
                            .collect::<Option<_>>()
                            .ok_or(InferError::Unsupported)?;
                        let mut total = SymExpr::constant(0);
                        for s in &sections {
                            if hint(s)? < 0 {
                                return Err(InferError::Unsupported);
                            }
                            rels.push(Relation::new(s.clone(), RelOp::Ge, zero.clone()));
                            total = total.add(s);
                        }
                        rels.push(Relation::new(total, RelOp::Eq, len.clone()));
                        sections
                    }
                    Some(a) if name == "split" => {
                        let each = int(Some(a))?;
                        if hint(&each)? < 1 {
                            return Err(InferError::Unsupported);
                        }
                        self.split_by(&len, &each, rels)?
                    }
                    _ => return Err(InferError::Unsupported),
                }
            }
        };
        let pieces: Vec<NodeMeta> = lengths
            .into_iter()
            .map(|l| {
                let mut sizes = x.sizes.clone();
                sizes[d] = Dim::from_expr(l);
                NodeMeta::Tensor(TensorMeta { sizes, ..x.clone() })
            })
            .collect();
        Ok(Some(if name == "narrow" {
            pieces.into_iter().next().ok_or(InferError::Unsupported)?
        } else {
            NodeMeta::Tuple(pieces)
        }))
    }

    /// The piece lengths of `split(each)` over `len`: `(len + each - 1) // each` pieces (the
    /// count guarded at its hint), all `each` but a shorter last one.
    fn split_by(
        &self,
        len: &SymExpr,
        each: &SymExpr,
        rels: &mut Vec<Relation>,
    ) -> Result<Vec<SymExpr>, InferError> {
        let count = len.add(each).add_const(-1).floordiv(each);
        let n = self.hint(&count).ok_or(InferError::Unsupported)?;
        if !(1..=4096).contains(&n) {
            return Err(InferError::Unsupported);
        }
        rels.push(Relation::new(count, RelOp::Eq, SymExpr::constant(n)));
        let mut out = vec![each.clone(); n as usize];
        out[n as usize - 1] = len.sub(&each.mul_const(n - 1));
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use crate::graph::{Arg, Graph, Target};
    use crate::infer::symbolic::tests::{s, strided_input};
    use crate::infer::symbolic::{evaluate, infer_symbolic, Symbols};
    use crate::infer::InferCtx;
    use crate::meta::{Dim, NodeMeta};
    use crate::sym::Relation;

    fn method(g: &Graph, name: &str, args: &[Arg], hints: &[i64]) -> (NodeMeta, Vec<String>) {
        let (m, rels) = infer_symbolic(
            &InferCtx::default(),
            g,
            &Target::Method(name.into()),
            args,
            &[],
            Symbols::hints(hints),
        )
        .unwrap();
        (m, rels.iter().map(Relation::to_string).collect())
    }

    fn piece_sizes(m: &NodeMeta, point: &[i64]) -> Vec<Vec<i64>> {
        match evaluate(m, point).unwrap() {
            NodeMeta::Tuple(items) => items
                .iter()
                .map(|i| i.tensor().unwrap().known_sizes().unwrap())
                .collect(),
            t => vec![t.tensor().unwrap().known_sizes().unwrap()],
        }
    }

    fn input(g: &mut Graph) -> Arg {
        Arg::Node(strided_input(g, vec![Dim::Known(2), s(0), s(1)], None))
    }

    /// `x.split(3, 1)` over length 9: three pieces, the count guarded (lengths 7..9 share
    /// it); every piece keeps the input's strides.
    #[test]
    fn split_guards_its_piece_count() {
        let mut g = Graph::new();
        let x = input(&mut g);
        let (m, rels) = method(&g, "split", &[x, Arg::Int(3), Arg::Int(1)], &[9, 5]);
        assert!(
            rels.contains(&"((s0 + 2) // 3) == 3".to_string()),
            "{rels:?}"
        );
        assert_eq!(rels.len(), 1, "{rels:?}");
        assert_eq!(
            piece_sizes(&m, &[8, 5]),
            [vec![2, 3, 5], vec![2, 3, 5], vec![2, 2, 5]]
        );
        let NodeMeta::Tuple(items) = evaluate(&m, &[8, 5]).unwrap() else {
            panic!("a tuple")
        };
        for i in items {
            assert_eq!(i.tensor().unwrap().known_strides(), Some(vec![40, 5, 1]));
        }
    }

    /// `x.chunk(2, 1)`: pieces of `(s0 + 1) // 2` and the rest, at every length.
    #[test]
    fn chunk_pieces_are_ceiling_halves() {
        let mut g = Graph::new();
        let x = input(&mut g);
        let (m, _) = method(&g, "chunk", &[x, Arg::Int(2), Arg::Int(1)], &[9, 5]);
        for l in [4, 7, 9, 30] {
            let p = piece_sizes(&m, &[l, 5]);
            assert_eq!(p, [vec![2, (l + 1) / 2, 5], vec![2, l - (l + 1) / 2, 5]]);
        }
    }

    /// `x.narrow(1, 1, 2)` over a symbolic length: size 2, guarded `3 <= s0`.
    #[test]
    fn narrow_of_a_symbolic_dimension() {
        let mut g = Graph::new();
        let x = input(&mut g);
        let (m, rels) = method(
            &g,
            "narrow",
            &[x, Arg::Int(1), Arg::Int(1), Arg::Int(2)],
            &[9, 5],
        );
        assert_eq!(piece_sizes(&m, &[20, 5]), [vec![2, 2, 5]]);
        assert!(rels.contains(&"3 <= s0".to_string()), "{rels:?}");
    }
}
