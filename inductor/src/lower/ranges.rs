//! Stores split into ranges along one dim (Inductor's `ConcatKernel` and its pointwise `cat`
//! decision): a value that selects, by position along a dim, between values computed apart (a
//! `cat`'s parts) is stored by one loop per range, each reading its part directly. Over the
//! whole dim, the body evaluates a clamped read of every part and selects with `where` (gcc
//! does not vectorize that); over one part's range the body builder proves the position
//! comparisons and the clamps, so each loop is a plain pointwise body.

use fx::DType;

use super::value::TensorVal;
use super::Lowerer;
use crate::ir::{BinOp, Body, BodyBuilder, BufId, BufKind, IrNode, Scalar, Val};
use crate::size::Size;

/// The stored-value cache a store's body builder starts from (see [`Lowerer::store`]).
pub(super) type Stored = std::collections::HashMap<u64, (BufId, Vec<Size>, Size)>;

/// Whether a store of a value that consumes a `cat` pointwise (`q * cos + cat(..) * sin`) is
/// split too, not only the store of a `cat` itself. Decided by measurement
/// (`bench/rotary_cat.py`, rotary on a `[2, 8, 128, 64]` float32 q, 1 thread): split, 32 µs;
/// the one loop selecting per element, 200 µs (eager 141-173 µs, torch.compile 63-82 µs); see
/// docs/inductor.md.
const SPLIT_CONSUMERS: bool = true;

impl Lowerer<'_> {
    /// Whether a store of `t` into `buf` may be split into several range-writing nodes: on
    /// the CPU (the CUDA printer keeps one store per buffer), into a buffer the graph computes
    /// (a write-back into an input keeps its one store), and from the policy's size on (a
    /// small store keeps its one loop; a symbolic size splits).
    pub(super) fn may_split_store(&self, buf: BufId, t: &TensorVal) -> bool {
        let Some(policy) = self.target.cpu() else {
            return false;
        };
        let numel = t
            .sizes
            .iter()
            .try_fold(1i64, |n, s| Some(n * s.as_const()?));
        self.ir.buffers[buf].kind == BufKind::Computed
            && numel.is_none_or(|n| n >= policy.split_store_min_elems)
    }

    /// The ranges to split a store of `t` (body `full`, built over all of `t`) into `buf` by:
    /// the dim and its cut points, when `full` selects between two computed values by
    /// `x_d < c` (a `cat` along `d`). CPU only (the CUDA printer keeps one store per buffer),
    /// `d` of constant size, and into a buffer the graph computes (a write-back into an input
    /// keeps its one store).
    pub(super) fn store_ranges(
        &self,
        buf: BufId,
        t: &TensorVal,
        full: &Body,
    ) -> Option<(usize, Vec<i64>)> {
        if !self.may_split_store(buf, t) {
            return None;
        }
        // The split dim's size must be a constant (the cut points are); the other dims may
        // be symbolic (rotary over a symbolic sequence length: the head dim is constant).
        let sizes: Vec<Option<i64>> = t.sizes.iter().map(|s| s.as_const()).collect();
        // The stored value itself selects (a `cat`, seen through a cast to the buffer's
        // dtype), or a consumer of a selected value does.
        let mut root = full.root;
        while let Val::Cast(x) = full.vals[root] {
            root = x;
        }
        let mut cuts: Vec<(usize, i64)> = Vec::new();
        for (id, v) in full.vals.iter_enumerated() {
            let Val::Where(c, a, b) = *v else { continue };
            if !SPLIT_CONSUMERS && !selects_root(full, root, id) {
                continue;
            }
            let constant = |x| matches!(full.vals[x], Val::Const(_));
            if constant(a) || constant(b) {
                continue;
            }
            let Val::Binary(BinOp::Lt, p, e) = full.vals[c] else {
                continue;
            };
            let (Val::Index(pos), Val::Const(Scalar::I(end))) = (&full.vals[p], &full.vals[e])
            else {
                continue;
            };
            let Some(d) = (0..sizes.len()).find(|&d| *pos == crate::index::Idx::var(d as u32))
            else {
                continue;
            };
            if sizes[d].is_some_and(|n| 0 < *end && *end < n) {
                cuts.push((d, *end));
            }
        }
        let d = cuts.first()?.0;
        let mut at: Vec<i64> = cuts.iter().filter(|c| c.0 == d).map(|c| c.1).collect();
        at.sort_unstable();
        at.dedup();
        Some((d, at))
    }

    /// Stores `t` into `buf` by one pointwise node per range `[cuts[k], cuts[k + 1])` of dim
    /// `d` (0 and the size added at the ends), each over the range's sizes at its offset.
    pub(super) fn store_split(
        &mut self,
        buf: BufId,
        t: &TensorVal,
        d: usize,
        cuts: &[i64],
        stored: &Stored,
    ) {
        let n = t.sizes[d].expect_const("a split store's dim");
        let stride = self.ir.buffers[buf].strides[d];
        let dtype: DType = self.ir.buffers[buf].dtype;
        let mut bounds = vec![0];
        bounds.extend_from_slice(cuts);
        bounds.push(n);
        for w in bounds.windows(2) {
            let (start, end) = (w[0], w[1]);
            let mut sizes = t.sizes.clone();
            sizes[d] = Size::Const(end - start);
            let mut b = BodyBuilder::new(sizes.clone());
            b.stored = stored.clone();
            let mut vars = b.vars();
            vars[d] = vars[d].add_const(start);
            let v = t.load(&mut b, &vars);
            let v = b.cast(v, dtype);
            self.ir.nodes.push(IrNode::Pointwise {
                out: buf,
                sizes,
                body: b.finish(v),
                offset: stride * start,
            });
        }
    }
}

/// Whether `w` is `root` or a select `root`'s chain of selects reaches through its else
/// branches (a `cat` of more than two parts is one chain).
fn selects_root(full: &Body, root: crate::ir::ValId, w: crate::ir::ValId) -> bool {
    let mut r = root;
    loop {
        if r == w {
            return true;
        }
        match full.vals[r] {
            Val::Where(_, _, e) => r = e,
            _ => return false,
        }
    }
}
