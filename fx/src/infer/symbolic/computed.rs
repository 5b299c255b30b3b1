//! Symbolic rules of ops whose result sizes are computed from their inputs' (sums, differences)
//! rather than selected among them, so fitting cannot find them: each gives the sizes as
//! expressions and the relations it relies on, and `infer_symbolic` checks the answer against
//! the concrete evaluation at every probe point, as for its other explicit rules.

use super::Sym;
use crate::graph::Arg;
use crate::meta::Dim;
use crate::sym::{RelOp, Relation, SymExpr};
use crate::InferError;

/// `torch.diff`'s parameters (aten `diff(Tensor self, int n=1, int dim=-1, Tensor? prepend=None,
/// Tensor? append=None)`). Not an op-catalog row yet: a row needs its cases recorded from torch
/// (`fx/tests/gen_ops_cases.py`, checked by `fx/tests/ops_torch.rs`).
const DIFF: &[&str] = &["input", "n", "dim", "prepend", "append"];

/// `torch.nn.functional.pad`'s parameters (`pad(input, pad, mode="constant", value=None)`).
const PAD: &[&str] = &["input", "pad", "mode", "value"];

impl Sym<'_> {
    /// `F.pad(input, pad, ...)`: `pad` lists (before, after) amounts from the last dimension
    /// backwards, each possibly a symbolic int (`F.pad(mask, (0, T - n))`); each padded
    /// dimension's size is its size plus both amounts (negative amounts crop), whatever the
    /// mode. The result must not be negative (torch raises): guarded.
    pub(super) fn pad(
        &self,
        args: &[Arg],
        kwargs: &[(String, Arg)],
        rels: &mut Vec<Relation>,
    ) -> Result<Vec<Dim>, InferError> {
        let slots = crate::ops::bind(PAD, args, kwargs).map_err(|_| InferError::Unsupported)?;
        let x = slots[0]
            .and_then(|a| self.tensor(a))
            .ok_or(InferError::Unsupported)?;
        let amounts: Vec<SymExpr> = match slots[1] {
            Some(Arg::Tuple(items) | Arg::List(items)) => items
                .iter()
                .map(|a| self.int(a))
                .collect::<Option<_>>()
                .ok_or(InferError::Unsupported)?,
            _ => return Err(InferError::Unsupported),
        };
        if !amounts.len().is_multiple_of(2) || amounts.len() / 2 > x.ndim() {
            return Err(InferError::Unsupported);
        }
        let mut sizes = x.sizes.clone();
        for (i, pair) in amounts.chunks(2).enumerate() {
            let d = x.ndim() - 1 - i;
            let size = x.sizes[d].expr().add(&pair[0]).add(&pair[1]);
            if self.hint(&size).is_none_or(|h| h < 0) {
                return Err(InferError::Unsupported);
            }
            rels.push(Relation::new(size.clone(), RelOp::Ge, SymExpr::constant(0)));
            sizes[d] = Dim::from_expr(size);
        }
        Ok(sizes)
    }

    /// `torch.diff(input, n=1, dim=-1, prepend=None, append=None)`: `prepend` and `append` are
    /// concatenated along `dim` (their other sizes equal the input's), and each of the `n`
    /// differences shortens that dimension by one. Transformers' packed-sequence check takes
    /// the diff of the position ids, so without this rule the sequence length specializes.
    pub(super) fn diff(
        &self,
        args: &[Arg],
        kwargs: &[(String, Arg)],
        rels: &mut Vec<Relation>,
    ) -> Result<Vec<Dim>, InferError> {
        let slots = crate::ops::bind(DIFF, args, kwargs).map_err(|_| InferError::Unsupported)?;
        let x = slots[0]
            .and_then(|a| self.tensor(a))
            .ok_or(InferError::Unsupported)?;
        let int = |slot: Option<&Arg>, default: i64| match slot {
            None => Some(default),
            Some(Arg::Int(v)) => Some(*v),
            Some(_) => None,
        };
        let n = int(slots[1], 1).ok_or(InferError::Unsupported)?;
        let dim = int(slots[2], -1).ok_or(InferError::Unsupported)?;
        let dim = crate::infer::wrap_dim(dim, x.ndim())?;
        if n < 0 {
            return Err(InferError::Unsupported);
        }
        let mut total = x.sizes[dim].expr();
        for slot in [slots[3], slots[4]] {
            match slot {
                None | Some(Arg::None) => {}
                Some(a) => {
                    let t = self.tensor(a).ok_or(InferError::Unsupported)?;
                    if t.ndim() != x.ndim() {
                        return Err(InferError::Unsupported);
                    }
                    for d in (0..x.ndim()).filter(|&d| d != dim) {
                        rels.push(Relation::new(
                            x.sizes[d].expr(),
                            RelOp::Eq,
                            t.sizes[d].expr(),
                        ));
                    }
                    total = total.add(&t.sizes[dim].expr());
                }
            }
        }
        // Each difference needs two elements; past the length the result is empty (its size
        // a clamp): guarded on the side the hints are.
        let n = SymExpr::constant(n);
        let length = if self
            .hint(&total)
            .is_some_and(|h| h >= n.as_const().unwrap_or(0))
        {
            rels.push(Relation::new(total.clone(), RelOp::Ge, n.clone()));
            total.sub(&n)
        } else {
            return Err(InferError::Unsupported);
        };
        let mut sizes = x.sizes.clone();
        sizes[dim] = Dim::from_expr(length);
        Ok(sizes)
    }

    /// `x[..., a:b:k]`: each input stride times each constant slice step `k > 1`, the stride
    /// candidates a stepped slice's result needs (the input's own strides are the others).
    pub(super) fn stepped_strides(&self, args: &[Arg]) -> Vec<SymExpr> {
        let Some(x) = args.first().and_then(|a| self.tensor(a)) else {
            return Vec::new();
        };
        let index: Vec<&Arg> = match args.get(1) {
            Some(Arg::Tuple(items)) => items.iter().collect(),
            Some(a) => vec![a],
            None => return Vec::new(),
        };
        let mut out = Vec::new();
        for a in index {
            if let Arg::Slice(_, _, step) = a {
                if let Arg::Int(k) = **step {
                    if k > 1 {
                        out.extend(x.strides.iter().map(|s| s.expr().mul_const(k)));
                    }
                }
            }
        }
        out
    }

    /// For a view of `args[0]` with result `sizes`: each input stride times each product of
    /// consecutive trailing result sizes (the strides of the parts a view splits a dimension
    /// into). Candidates only: each is checked at every probe point.
    pub(super) fn split_strides(&self, args: &[Arg], sizes: &[Dim]) -> Vec<SymExpr> {
        let Some(x) = args.first().and_then(|a| self.tensor(a)) else {
            return Vec::new();
        };
        let mut products = Vec::new();
        for i in 0..sizes.len() {
            let mut acc = SymExpr::constant(1);
            for d in &sizes[i..] {
                acc = acc.mul(&d.expr());
                products.push(acc.clone());
            }
        }
        let mut out = Vec::new();
        for s in &x.strides {
            for p in &products {
                out.push(s.expr().mul(p));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use crate::graph::{Arg, Graph, Target};
    use crate::infer::symbolic::tests::{s, strided_input};
    use crate::infer::symbolic::{infer_symbolic, Symbols};
    use crate::infer::{InferCtx, InferError};
    use crate::meta::{DType, Device, Dim, NodeMeta, TensorMeta};
    use crate::sym::SymExpr;

    fn input(g: &mut Graph, sizes: Vec<Dim>, strides: Option<Vec<Dim>>) -> Arg {
        Arg::Node(strided_input(g, sizes, strides))
    }

    fn text(d: &[Dim]) -> Vec<String> {
        d.iter().map(|d| d.to_string()).collect()
    }

    /// Without an evaluator the rule has no concrete values to check against: the test's
    /// evaluator is torch's arithmetic for `diff`, written out.
    #[test]
    fn diff_with_prepend_sums_its_lengths() {
        let mut g = Graph::new();
        let x = input(&mut g, vec![s(0), s(1)], None);
        let p = input(&mut g, vec![s(0), Dim::Known(1)], None);
        let target = Target::Function("torch.diff".into());
        let args = [x];
        let kwargs = [("prepend".to_string(), p), ("dim".to_string(), Arg::Int(1))];
        let eval = |pt: &[i64]| -> Result<NodeMeta, InferError> {
            let sizes = [pt[0], pt[1]];
            Ok(NodeMeta::Tensor(TensorMeta::contiguous(
                DType::Float32,
                Device::cpu(),
                &sizes,
            )))
        };
        let (m, rels) = infer_symbolic(
            &InferCtx::default(),
            &g,
            &target,
            &args,
            &kwargs,
            Symbols {
                hints: &[3, 9],
                external: Some(&eval),
                pinned: &[],
                same: &[],
                shift: &[],
                admits: None,
                autocast: false,
                oblivious: &[],
            },
        )
        .unwrap();
        let t = m.tensor().unwrap();
        assert_eq!(text(&t.sizes), ["s0", "s1"]);
        assert_eq!(text(&t.strides), ["s1", "1"]);
        assert!(rels.iter().all(|r| r.to_string() != "s0 == 1"), "{rels:?}");
    }

    /// `F.pad(x, (1, 2, 0, 3))` over `[s0, s1]`: the last dimension grows by 3, the one
    /// before by 3; the evaluator is torch's arithmetic for `pad`, written out.
    #[test]
    fn pad_adds_both_amounts_to_each_padded_size() {
        let mut g = Graph::new();
        let x = input(&mut g, vec![s(0), s(1)], None);
        let target = Target::Function("torch.nn.functional.pad".into());
        let amounts = Arg::Tuple(vec![Arg::Int(1), Arg::Int(2), Arg::Int(0), Arg::Int(3)]);
        let args = [x, amounts];
        let eval = |pt: &[i64]| -> Result<NodeMeta, InferError> {
            Ok(NodeMeta::Tensor(TensorMeta::contiguous(
                DType::Float32,
                Device::cpu(),
                &[pt[0] + 3, pt[1] + 3],
            )))
        };
        let (m, rels) = infer_symbolic(
            &InferCtx::default(),
            &g,
            &target,
            &args,
            &[],
            Symbols {
                external: Some(&eval),
                ..Symbols::hints(&[4, 7])
            },
        )
        .unwrap();
        let t = m.tensor().unwrap();
        assert_eq!(text(&t.sizes), ["s0 + 3", "s1 + 3"]);
        // Non-negative sizes hold for every symbol (at least 2): no guard is needed, and
        // `ShapeEnv::add_relation` drops the ones returned as implied.
        assert!(rels.iter().all(|r| r.implied(&|_| 2)), "{rels:?}");
        // A negative amount (a crop) is the size minus it.
        let x = Arg::Node(g.placeholders()[0]);
        let crop = [x, Arg::Tuple(vec![Arg::Int(-1), Arg::Int(0)])];
        let eval = |pt: &[i64]| -> Result<NodeMeta, InferError> {
            Ok(NodeMeta::Tensor(TensorMeta::contiguous(
                DType::Float32,
                Device::cpu(),
                &[pt[0], pt[1] - 1],
            )))
        };
        let (m, _) = infer_symbolic(
            &InferCtx::default(),
            &g,
            &target,
            &crop,
            &[],
            Symbols {
                external: Some(&eval),
                ..Symbols::hints(&[4, 7])
            },
        )
        .unwrap();
        assert_eq!(text(&m.tensor().unwrap().sizes), ["s0", "s1 - 1"]);
    }

    #[test]
    fn a_view_splitting_a_strided_dimension_keeps_its_strides_symbolic() {
        let mut g = Graph::new();
        // `[4, s0]` of strides `[2*s0, 1]` (every other row of a wider tensor) viewed as
        // `[2, 2, s0]`: the split dimension's parts stride by `4*s0` and `2*s0`.
        let two_s = SymExpr::symbol(0).mul_const(2);
        let x = input(
            &mut g,
            vec![Dim::Known(4), s(0)],
            Some(vec![Dim::Sym(two_s), Dim::Known(1)]),
        );
        let target = Target::Method("view".into());
        let args = [x, Arg::Int(2), Arg::Int(2), Arg::Int(-1)];
        let (m, _) = infer_symbolic(
            &InferCtx::default(),
            &g,
            &target,
            &args,
            &[],
            Symbols::hints(&[5]),
        )
        .unwrap();
        let t = m.tensor().unwrap();
        assert_eq!(text(&t.sizes), ["2", "2", "s0"]);
        assert_eq!(text(&t.strides), ["s0*4", "s0*2", "1"]);
    }
}
