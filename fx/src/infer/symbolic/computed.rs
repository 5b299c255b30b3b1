//! Symbolic rules of ops whose result sizes are computed from their inputs' (sums, differences)
//! rather than selected among them, so fitting cannot find them: each gives the sizes as
//! expressions and the relations it relies on, and `infer_symbolic` checks the answer against
//! the concrete evaluation at every probe point, as for its other explicit rules.

use super::Sym;
use crate::graph::Arg;
use crate::meta::Dim;
use crate::sym::{RelOp, Relation, SymExpr};
use crate::InferError;

impl Sym<'_> {
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
        let sig = crate::ops::signature("diff").ok_or(InferError::Unsupported)?;
        let slots = crate::ops::bind(sig, args, kwargs).map_err(|_| InferError::Unsupported)?;
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
