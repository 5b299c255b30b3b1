//! What ops outside the families of [`Sym::required`] require of their input sizes before
//! their sizes are probed: `einsum`'s subscripts, `index_add`'s source against its input and
//! index, `cosine_embedding_loss`'s inputs and target, `tensordot`'s contracted dimensions,
//! `cdist`'s feature size and batch, `inner`'s last dims, `grid_sample`'s batch and `addr`'s
//! input against its vectors. Each is fitted from meta runs; without
//! these relations the probes moved two sizes torch needs equal apart, the op failed at the
//! probes and every size it read was specialized (5 graphs over a size sequence where
//! torch.compile, guarding the equality and keeping one symbol, makes 2 or 3).

use super::*;

impl Sym<'_> {
    /// Whether a size broadcasts against any other (1, as a constant or at the hints).
    fn is_one(&self, d: &Dim) -> bool {
        let e = d.expr();
        e.as_const() == Some(1) || self.hint(&e) == Some(1)
    }

    /// Sizes that must be one size where none of them broadcasts (a size 1 meets any): each
    /// size that is not 1 equals the first such.
    fn equal_unless_one(&self, dims: &[&Dim], rels: &mut Vec<Relation>) {
        let mut rest = dims.iter().filter(|d| !self.is_one(d));
        if let Some(first) = rest.next() {
            for d in rest {
                rels.push(Relation::new(first.expr(), RelOp::Eq, d.expr()));
            }
        }
    }

    /// `torch.einsum(equation, *operands)` (or the operands as one list): the sizes one
    /// subscript letter labels, in every operand and repeated within one, are one size where
    /// not 1 (torch broadcasts a 1); the dimensions `...` covers broadcast, aligned from the
    /// right.
    pub(super) fn einsum_relations(&self, args: &[Arg], rels: &mut Vec<Relation>) {
        let Some(Arg::Str(equation)) = args.first() else {
            return;
        };
        let operands: Vec<&TensorMeta> = match &args[1..] {
            [Arg::List(items) | Arg::Tuple(items)] => {
                items.iter().filter_map(|a| self.tensor(a)).collect()
            }
            rest => rest.iter().filter_map(|a| self.tensor(a)).collect(),
        };
        let lhs: String = equation
            .split("->")
            .next()
            .unwrap_or("")
            .chars()
            .filter(|c| !c.is_whitespace())
            .collect();
        let terms: Vec<&str> = lhs.split(',').collect();
        if terms.len() != operands.len() {
            return;
        }
        let mut letters: Vec<(char, Vec<&Dim>)> = Vec::new();
        let mut ellipses: Vec<&[Dim]> = Vec::new();
        for (term, t) in terms.iter().zip(&operands) {
            let (head, tail) = match term.split_once("...") {
                Some((h, tl)) => (h, Some(tl)),
                None => (*term, None),
            };
            let n = head.chars().count() + tail.map_or(0, |tl| tl.chars().count());
            if n > t.ndim() || (tail.is_none() && n != t.ndim()) {
                return;
            }
            let covered = t.ndim() - n;
            let start = head.chars().count();
            ellipses.push(&t.sizes[start..start + covered]);
            let labelled = head
                .chars()
                .zip(&t.sizes)
                .chain(tail.unwrap_or("").chars().zip(&t.sizes[start + covered..]));
            for (c, d) in labelled {
                match letters.iter_mut().find(|(l, _)| *l == c) {
                    Some((_, dims)) => dims.push(d),
                    None => letters.push((c, vec![d])),
                }
            }
        }
        for (_, dims) in &letters {
            self.equal_unless_one(dims, rels);
        }
        let rank = ellipses.iter().map(|e| e.len()).max().unwrap_or(0);
        for i in 1..=rank {
            let dims: Vec<&Dim> = ellipses
                .iter()
                .filter_map(|e| e.len().checked_sub(i).map(|j| &e[j]))
                .collect();
            self.equal_unless_one(&dims, rels);
        }
    }

    /// `x.index_add(dim, index, source)` (`torch.index_add`, `index_add_`): the source's size
    /// along `dim` is the index's length, and every other size is the input's (torch checks
    /// both exactly, no broadcasting).
    pub(super) fn index_add_relations(
        &self,
        args: &[Arg],
        kwargs: &[(String, Arg)],
        rels: &mut Vec<Relation>,
    ) {
        let arg = |pos: usize, key: &str| Self::arg(args, kwargs, pos, &[key]);
        let (Some(x), Some(Arg::Int(dim)), Some(index), Some(source)) = (
            arg(0, "input").and_then(|a| self.tensor(a)),
            arg(1, "dim"),
            arg(2, "index").and_then(|a| self.tensor(a)),
            arg(3, "source").and_then(|a| self.tensor(a)),
        ) else {
            return;
        };
        let rank = x.ndim() as i64;
        let dim = if *dim < 0 { dim + rank } else { *dim };
        if source.ndim() != x.ndim() || !(0..rank).contains(&dim) {
            return;
        }
        let dim = dim as usize;
        let eq = |a: &Dim, b: &Dim| Relation::new(a.expr(), RelOp::Eq, b.expr());
        for (d, (a, b)) in x.sizes.iter().zip(&source.sizes).enumerate() {
            if d != dim {
                rels.push(eq(a, b));
            }
        }
        if let [n] = &index.sizes[..] {
            rels.push(eq(&source.sizes[dim], n));
        }
    }

    /// `torch.tensordot(a, b, dims)`: each contracted pair of sizes is one size unless one of
    /// them is 1 (torch sums a size-1 side away first). `dims` is a count (the last of `a`
    /// against the first of `b`) or two lists (or ints) of dimensions.
    pub(super) fn tensordot_relations(
        &self,
        args: &[Arg],
        kwargs: &[(String, Arg)],
        rels: &mut Vec<Relation>,
    ) {
        let arg = |pos: usize, key: &str| Self::arg(args, kwargs, pos, &[key]);
        let (Some(a), Some(b)) = (
            arg(0, "a").and_then(|a| self.tensor(a)),
            arg(1, "b").and_then(|a| self.tensor(a)),
        ) else {
            return;
        };
        let dims_of = |d: &Arg| -> Option<Vec<i64>> {
            match d {
                Arg::Int(v) => Some(vec![*v]),
                Arg::List(items) | Arg::Tuple(items) => items
                    .iter()
                    .map(|i| match i {
                        Arg::Int(v) => Some(*v),
                        _ => None,
                    })
                    .collect(),
                _ => None,
            }
        };
        let wrap = |d: i64, rank: usize| -> Option<usize> {
            let r = rank as i64;
            let d = if d < 0 { d + r } else { d };
            (0..r).contains(&d).then_some(d as usize)
        };
        let pairs: Vec<(usize, usize)> = match arg(2, "dims").unwrap_or(&Arg::Int(2)) {
            Arg::Int(k) if *k >= 0 && (*k as usize) <= a.ndim().min(b.ndim()) => {
                let k = *k as usize;
                (0..k).map(|i| (a.ndim() - k + i, i)).collect()
            }
            Arg::List(two) | Arg::Tuple(two) if two.len() == 2 => {
                let (Some(da), Some(db)) = (dims_of(&two[0]), dims_of(&two[1])) else {
                    return;
                };
                if da.len() != db.len() {
                    return;
                }
                let pairs: Option<Vec<(usize, usize)>> = da
                    .iter()
                    .zip(&db)
                    .map(|(&x, &y)| Some((wrap(x, a.ndim())?, wrap(y, b.ndim())?)))
                    .collect();
                match pairs {
                    Some(p) => p,
                    None => return,
                }
            }
            _ => return,
        };
        for (i, j) in pairs {
            self.equal_unless_one(&[&a.sizes[i], &b.sizes[j]], rels);
        }
    }

    /// `torch.cdist(x1, x2)` of `[B.., P, M]` and `[B.., R, M]`: the feature sizes `M` equal
    /// (torch checks them exactly), the batch dimensions broadcast (aligned from the right).
    pub(super) fn cdist_relations(
        &self,
        args: &[Arg],
        kwargs: &[(String, Arg)],
        rels: &mut Vec<Relation>,
    ) {
        let arg = |pos: usize, key: &str| Self::arg(args, kwargs, pos, &[key]);
        let (Some(x1), Some(x2)) = (
            arg(0, "x1").and_then(|a| self.tensor(a)),
            arg(1, "x2").and_then(|a| self.tensor(a)),
        ) else {
            return;
        };
        let (n1, n2) = (x1.ndim(), x2.ndim());
        if n1 < 2 || n2 < 2 {
            return;
        }
        let eq = Relation::new(x1.sizes[n1 - 1].expr(), RelOp::Eq, x2.sizes[n2 - 1].expr());
        if eq.decided().is_none() {
            rels.push(eq);
        }
        for (d1, d2) in x1.sizes[..n1 - 2]
            .iter()
            .rev()
            .zip(x2.sizes[..n2 - 2].iter().rev())
        {
            self.equal_unless_one(&[d1, d2], rels);
        }
    }

    /// `torch.inner(a, b)`: the last dims are one size (torch checks them exactly; a 0-d
    /// operand asks nothing).
    pub(super) fn inner_relations(&self, args: &[Arg], rels: &mut Vec<Relation>) {
        let (Some(a), Some(b)) = (
            args.first().and_then(|a| self.tensor(a)),
            args.get(1).and_then(|a| self.tensor(a)),
        ) else {
            return;
        };
        if let (Some(x), Some(y)) = (a.sizes.last(), b.sizes.last()) {
            rels.push(Relation::new(x.expr(), RelOp::Eq, y.expr()));
        }
    }

    /// `F.grid_sample(input, grid)`: the grid's batch is the input's (torch checks it
    /// exactly).
    pub(super) fn grid_sample_relations(
        &self,
        args: &[Arg],
        kwargs: &[(String, Arg)],
        rels: &mut Vec<Relation>,
    ) {
        let arg = |pos: usize, key: &str| Self::arg(args, kwargs, pos, &[key]);
        let (Some(x), Some(grid)) = (
            arg(0, "input").and_then(|a| self.tensor(a)),
            arg(1, "grid").and_then(|a| self.tensor(a)),
        ) else {
            return;
        };
        if let (Some(n), Some(m)) = (x.sizes.first(), grid.sizes.first()) {
            rels.push(Relation::new(n.expr(), RelOp::Eq, m.expr()));
        }
    }

    /// `torch.addr(input, vec1, vec2)`: `input` broadcasts to the outer product's
    /// `[len(vec1), len(vec2)]`.
    pub(super) fn addr_relations(
        &self,
        args: &[Arg],
        kwargs: &[(String, Arg)],
        rels: &mut Vec<Relation>,
    ) {
        let arg = |pos: usize, key: &str| Self::arg(args, kwargs, pos, &[key]);
        let (Some(x), Some(v1), Some(v2)) = (
            arg(0, "input").and_then(|a| self.tensor(a)),
            arg(1, "vec1").and_then(|a| self.tensor(a)),
            arg(2, "vec2").and_then(|a| self.tensor(a)),
        ) else {
            return;
        };
        if let ([n], [m]) = (&v1.sizes[..], &v2.sizes[..]) {
            self.broadcast_into(&[n.clone(), m.clone()], x, rels);
        }
    }

    /// `F.cosine_embedding_loss(x1, x2, target)`: the two inputs broadcast (torch multiplies
    /// them), and a target of one dimension meets their batch size (`[N, D]` inputs).
    pub(super) fn cosine_embedding_relations(
        &self,
        args: &[Arg],
        kwargs: &[(String, Arg)],
        rels: &mut Vec<Relation>,
    ) {
        let arg = |pos: usize, key: &str| Self::arg(args, kwargs, pos, &[key]);
        let (Some(a1), Some(a2), Some(t)) = (arg(0, "input1"), arg(1, "input2"), arg(2, "target"))
        else {
            return;
        };
        self.broadcast_relations(&[a1.clone(), a2.clone()], &[], rels);
        let (Some(x1), Some(x2), Some(t)) = (self.tensor(a1), self.tensor(a2), self.tensor(t))
        else {
            return;
        };
        if let ([n1, _], [n2, _], [n]) = (&x1.sizes[..], &x2.sizes[..], &t.sizes[..]) {
            self.equal_unless_one(&[n1, n2, n], rels);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{s, strided_input};
    use super::*;

    fn required(g: &Graph, name: &str, args: Vec<Arg>, hints: &[i64]) -> Vec<String> {
        let cx = Sym {
            graph: g,
            hints,
            pinned: &[],
        };
        let mut rels: Vec<String> = cx
            .required("", name, &args, &[])
            .iter()
            .map(|r| r.to_string())
            .collect();
        rels.sort();
        rels
    }

    #[test]
    fn einsum_letters_and_ellipsis_are_one_size_unless_1() {
        let mut g = Graph::new();
        let a = strided_input(&mut g, vec![s(0), Dim::Known(3), s(1)], None);
        let b = strided_input(&mut g, vec![s(2), s(3), Dim::Known(2)], None);
        let eq = |e: &str| Arg::Str(e.into());
        let rels = required(
            &g,
            "einsum",
            vec![eq("bij, bjk -> bik"), Arg::Node(a), Arg::Node(b)],
            &[4, 5, 4, 5],
        );
        assert_eq!(rels, ["s0 == s2", "s1 == s3"]);
        // The operands as one list; a size 1 at the hints broadcasts and asks nothing.
        let ops = Arg::List(vec![Arg::Node(a), Arg::Node(b)]);
        let rels = required(&g, "einsum", vec![eq("bij,bjk"), ops], &[1, 5, 4, 5]);
        assert_eq!(rels, ["s1 == s3"]);
        // `...` covers the leading sizes, aligned from the right.
        let c = strided_input(&mut g, vec![s(4), s(0), Dim::Known(3), s(1)], None);
        let rels = required(
            &g,
            "einsum",
            vec![eq("...ij,...jk->...ik"), Arg::Node(c), Arg::Node(b)],
            &[4, 5, 4, 5, 6],
        );
        assert_eq!(rels, ["s0 == s2", "s1 == s3"]);
        // Subscripts that do not fit the operands: nothing (the op fails at the hints).
        let rels = required(
            &g,
            "einsum",
            vec![eq("ij,jk"), Arg::Node(a), Arg::Node(b)],
            &[4; 4],
        );
        assert!(rels.is_empty(), "{rels:?}");
    }

    #[test]
    fn index_add_source_meets_input_and_index() {
        let mut g = Graph::new();
        let x = strided_input(&mut g, vec![s(0), s(1)], None);
        let idx = strided_input(&mut g, vec![s(2)], None);
        let src = strided_input(&mut g, vec![s(3), s(4)], None);
        let args = |dim| vec![Arg::Node(x), Arg::Int(dim), Arg::Node(idx), Arg::Node(src)];
        let hints = [6, 3, 4, 4, 3];
        assert_eq!(
            required(&g, "index_add", args(0), &hints),
            ["s1 == s4", "s3 == s2"]
        );
        assert_eq!(
            required(&g, "index_add_", args(-1), &hints),
            ["s0 == s3", "s4 == s2"]
        );
    }

    #[test]
    fn tensordot_contracted_sizes_are_one_size_unless_1() {
        let mut g = Graph::new();
        let a = strided_input(&mut g, vec![s(0), s(1), s(2)], None);
        let b = strided_input(&mut g, vec![s(3), s(4), s(5)], None);
        let hints = [4, 5, 3, 5, 3, 2];
        let args = |dims: Arg| vec![Arg::Node(a), Arg::Node(b), dims];
        assert_eq!(
            required(&g, "tensordot", args(Arg::Int(2)), &hints),
            ["s1 == s3", "s2 == s4"]
        );
        let lists = Arg::Tuple(vec![
            Arg::List(vec![Arg::Int(-2)]),
            Arg::List(vec![Arg::Int(0)]),
        ]);
        assert_eq!(required(&g, "tensordot", args(lists), &hints), ["s1 == s3"]);
        // A size 1 at the hints is summed away: nothing asked of it.
        let hints = [4, 1, 3, 5, 3, 2];
        assert_eq!(
            required(&g, "tensordot", args(Arg::Int(2)), &hints),
            ["s2 == s4"]
        );
    }

    #[test]
    fn cdist_features_equal_and_batch_broadcast() {
        let mut g = Graph::new();
        let x1 = strided_input(&mut g, vec![s(0), s(1), s(2)], None);
        let x2 = strided_input(&mut g, vec![s(3), s(4), s(5)], None);
        let rels = required(
            &g,
            "cdist",
            vec![Arg::Node(x1), Arg::Node(x2)],
            &[2, 7, 4, 2, 3, 4],
        );
        assert_eq!(rels, ["s0 == s3", "s2 == s5"]);
    }

    #[test]
    fn inner_grid_sample_and_addr_requirements() {
        let mut g = Graph::new();
        let a = strided_input(&mut g, vec![s(0), s(1)], None);
        let b = strided_input(&mut g, vec![s(2), s(3)], None);
        let pair = vec![Arg::Node(a), Arg::Node(b)];
        assert_eq!(
            required(&g, "inner", pair.clone(), &[4, 3, 2, 3]),
            ["s1 == s3"]
        );
        // `grid_sample`: only the batch (the grid's last size is 2, torch's own check).
        let x = strided_input(&mut g, vec![s(0), s(1), s(2), s(3)], None);
        let grid = strided_input(&mut g, vec![s(4), s(5), s(6), Dim::Known(2)], None);
        let rels = required(
            &g,
            "grid_sample",
            vec![Arg::Node(x), Arg::Node(grid)],
            &[4, 3, 5, 5, 4, 2, 3],
        );
        assert_eq!(rels, ["s0 == s4"]);
        // `addr`: the input broadcast to `[len(vec1), len(vec2)]`, a 1 asking nothing.
        let m = strided_input(&mut g, vec![s(0), Dim::Known(1)], None);
        let u = strided_input(&mut g, vec![s(1)], None);
        let w = strided_input(&mut g, vec![s(2)], None);
        let args = vec![Arg::Node(m), Arg::Node(u), Arg::Node(w)];
        assert_eq!(required(&g, "addr", args, &[4, 4, 5]), ["s1 == s0"]);
    }

    #[test]
    fn cosine_embedding_inputs_broadcast_and_target_meets_batch() {
        let mut g = Graph::new();
        let x1 = strided_input(&mut g, vec![s(0), Dim::Known(3)], None);
        let x2 = strided_input(&mut g, vec![s(1), Dim::Known(3)], None);
        let t = strided_input(&mut g, vec![s(2)], None);
        let args = vec![Arg::Node(x1), Arg::Node(x2), Arg::Node(t)];
        let rels = required(&g, "cosine_embedding_loss", args, &[4, 4, 4]);
        assert!(rels.contains(&"s0 == s1".to_string()), "{rels:?}");
        assert!(rels.contains(&"s0 == s2".to_string()), "{rels:?}");
    }
}
