//! Re-inplacing: a write through a view of a mutated graph input stores only the view's
//! elements, straight into the input's buffer.
//!
//! Functionalization turns `cache[pos : pos + n].copy_(k)` into `new = view_scatter(cache, k,
//! ...)` followed by the write-back `cache.copy_(new)` (`fx::passes::functionalize`). Lowered
//! as it reads (`view_scatter.rs`), `new` is the whole cache: a `[1024, 64]` select computed
//! into a buffer of its own when the attention's GEMM reads it, then copied back into the
//! input, where eager writes `n` rows (session 28 measured 2.74x eager on
//! `bench/kv_cache_write.py`). Inductor's reinplace pass stores such a scatter into its base
//! when the base is a mutated input whose old value nobody reads afterwards; here the same
//! conditions make [`Lowerer::reinplace`] emit one node over the view's box of the input
//! (`IrNode::Pointwise` with the box's sizes and the element offset of its first element: a
//! node of its own, see `IrGraph::writes_range`) and bind the scatter's result to the input's
//! buffer, which the write-back then leaves alone (`write_back.rs`).
//!
//! The conditions, each checked where the scatter is lowered:
//! - the scatter belongs to a chain of scatters from a graph input to that input's write-back
//!   (each one's base is the previous one), so what it stores is the input's final content;
//! - its base's value is the input's buffer itself (the chain's earlier scatters were
//!   re-inplaced too, or this is the first);
//! - no value a later node reads still reads the input's buffer (its old content): lowering is
//!   lazy, so a value made earlier but read later is computed where it is read, after the store;
//! - the scatter's value is no graph output (an output handed out as the input's buffer would
//!   alias it) and no attention chain lowered later reads a node made before it;
//! - the view is a box of the base (unit steps) of an input whose elements are distinct, and
//!   its bounds were proved inside the base or fixed by the value's sizes (`view_scatter.rs`).
//!
//! A value that reads the input at other elements than the one it stores (`x[1:] = x[:-1]`) is
//! computed into a buffer of the view's size first. Anything else keeps the functional form.

use fx::{Arg, NodeId, NodeKind};

use super::view_scatter::Region;
use super::{LValue, Lowerer};
use crate::index::Idx;
use crate::ir::{linear_index, BodyBuilder, BufId, BufKind, IrNode};
use crate::size::Size;

use super::value::{Kind, TensorVal};

impl Lowerer<'_> {
    /// `view_scatter(base, src, ...)` of the node being lowered, stored into its input in place
    /// when the module's conditions hold: the scatter's value (the input's buffer), else `None`
    /// (the caller lowers it functionally).
    pub(super) fn reinplace(
        &mut self,
        base: &TensorVal,
        src: &TensorVal,
        region: &Region,
    ) -> Option<LValue> {
        let id = self.current?;
        let input = self.reinplace_input(id)?;
        let Kind::Strided {
            buf,
            strides,
            offset,
        } = &base.kind
        else {
            return None;
        };
        let decl = &self.ir.buffers[*buf];
        let is_input = matches!(decl.kind, BufKind::Input(i)
            if matches!(self.graph.node(input).kind, NodeKind::Placeholder { index } if index == i));
        if !is_input
            || *offset != 0
            || *strides != decl.strides
            || base.sizes != decl.sizes
            || base.dtype != decl.dtype
            || !crate::schedule::stores_distinct(&self.ir, *buf)
            || self.escapes(id)
            || self.old_value_read_later(*buf, id)
        {
            return None;
        }
        let buf = *buf;
        let strides = strides.clone();
        let offset = region
            .starts
            .iter()
            .zip(&strides)
            .fold(Size::Const(0), |acc, (s, st)| acc + *s * *st);
        let store = linear_index(
            &(0..region.sizes.len() as u32)
                .map(Idx::var)
                .collect::<Vec<_>>(),
            &strides,
            offset,
        );
        let src = if self.reads_other_elements(src, region, buf, &store) {
            self.realize(src)
        } else {
            src.clone()
        };
        let mut b = self.store_builder(region.sizes.clone());
        let vars = b.vars();
        let v = src.load(&mut b, &source_index(region, &vars));
        let v = b.cast(v, base.dtype);
        let body = b.finish(v);
        self.ir.nodes.push(IrNode::Pointwise {
            out: buf,
            sizes: region.sizes.clone(),
            body,
            offset,
        });
        tracing::debug!(
            target: "torchferro::inductor",
            "reinplaced {}: stores its view into input {}",
            self.graph.node(id).name,
            self.graph.node(input).name
        );
        Some(LValue::Tensor(base.clone()))
    }

    /// The graph input whose write-back scatter `id`'s value reaches through a chain of
    /// scatters (each the base of the next), the chain starting at that input.
    fn reinplace_input(&self, id: NodeId) -> Option<NodeId> {
        let base_of = |n: NodeId| match &self.graph.node(n).kind {
            NodeKind::Call { target, args, .. }
                if target.name() == fx::passes::functionalize::VIEW_SCATTER =>
            {
                match args.first() {
                    Some(Arg::Node(b)) => Some(*b),
                    _ => None,
                }
            }
            _ => None,
        };
        let mut root = base_of(id)?;
        while let Some(b) = base_of(root) {
            root = b;
        }
        if !matches!(self.graph.node(root).kind, NodeKind::Placeholder { .. }) {
            return None;
        }
        let mut cur = id;
        loop {
            let users = self.graph.users(cur);
            if users
                .iter()
                .any(|&u| self.write_back_pair(u) == Some((root, cur)))
            {
                return Some(root);
            }
            cur = users.into_iter().find(|&u| base_of(u) == Some(cur))?;
        }
    }

    /// Whether a value some node after `id` reads (or an attention chain lowered after it)
    /// still reads `buf`: after an in-place store into `buf` it would read the new content.
    /// The input's write-back is no reader of the input it writes.
    fn old_value_read_later(&self, buf: BufId, id: NodeId) -> bool {
        let at = self.position[&id];
        let later = |n: NodeId| {
            self.graph.users(n).into_iter().any(|u| {
                self.position[&u] > at && self.write_back_pair(u).is_none_or(|(dst, _)| dst != n)
            })
        };
        if self
            .attn_skip
            .iter()
            .any(|&n| self.position[&n] < at && later(n))
        {
            return true;
        }
        self.env
            .iter()
            .any(|(&n, v)| n != id && later(n) && self.value_reads(v, buf))
    }

    /// Whether lowered value `v` reads `buf` (a lazy one through its body, with what was
    /// stored already read from its buffer, as a store would build it).
    fn value_reads(&self, v: &LValue, buf: BufId) -> bool {
        match v {
            LValue::Scalar(_) => false,
            LValue::Tuple(xs) => xs.iter().any(|x| self.value_reads(x, buf)),
            LValue::Tensor(t) => match &t.kind {
                Kind::Strided { buf: b, .. } => *b == buf,
                Kind::Lazy { .. } => {
                    let mut b = self.store_builder(t.sizes.clone());
                    let vars = b.vars();
                    let v = t.load(&mut b, &vars);
                    let body = b.finish(v);
                    let deps = body.deps();
                    deps.loads
                        .iter()
                        .chain(&deps.gathers)
                        .any(|(x, _)| *x == buf)
                }
            },
        }
    }

    /// Whether `src`, stored over `region` into `buf` at `store`, reads `buf` at another
    /// element than the one it stores, or at a data-dependent one: a point could then read an
    /// element another point already overwrote.
    fn reads_other_elements(
        &self,
        src: &TensorVal,
        region: &Region,
        buf: BufId,
        store: &Idx,
    ) -> bool {
        let mut b = self.store_builder(region.sizes.clone());
        let vars = b.vars();
        let v = src.load(&mut b, &source_index(region, &vars));
        let body = b.finish(v);
        let deps = body.deps();
        deps.gathers.iter().any(|(x, _)| *x == buf)
            || deps
                .loads
                .iter()
                .any(|(x, idx)| *x == buf && **idx != *store)
    }

    /// A body builder over `sizes` that reads values realized earlier from their buffers.
    fn store_builder(&self, sizes: Vec<Size>) -> BodyBuilder {
        let mut b = BodyBuilder::new(sizes);
        b.stored = self.stored_views();
        b
    }
}

/// The source's index at a point of the region's box: each view dimension takes the variable
/// of the base dimension it walks, a new one index 0.
fn source_index(region: &Region, vars: &[Idx]) -> Vec<Idx> {
    region
        .src_dims
        .iter()
        .map(|d| d.map_or_else(|| Idx::constant(0), |d| vars[d].clone()))
        .collect()
}
