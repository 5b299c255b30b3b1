//! Mutated graph inputs: a functionalized graph's final `input.copy_(value)` is stored straight
//! into the input's buffer by the kernel that computes `value`.
//!
//! An optimizer step writes each parameter and its state (`exp_avg`, `exp_avg_sq`, `step`) and
//! reads their old values to compute the new ones. Staging every new value through a temporary
//! and copying it back costs a write and a read of each tensor more than the update itself, and
//! keeps the stores in separate kernels, so the moments the parameter's update reads are computed
//! once for their own store and again inside the parameter's kernel, from memory. Stored in
//! place, the stores are ordered so that every value is computed before any input it reads is
//! overwritten, and the scheduler fuses them into one kernel (`schedule.rs`): one pass reads the
//! old values once and writes the new ones.

use fx::{Arg, NodeId, NodeKind};

use super::value::TensorVal;
use super::{LValue, Lowerer};
use crate::ir::{BodyBuilder, BufId, BufKind};
use crate::schedule::{store_index, stores_distinct, Level};
use crate::InductorError;

/// What a pending write-back's value reads of the graph's inputs.
struct Reads {
    /// Input buffers it reads (affinely or at data-dependent positions).
    inputs: Vec<BufId>,
    /// Whether it reads its own input only at the element it stores (so the store can go in
    /// place: no point reads an element another point already overwrote).
    own_at_store: bool,
    /// Whether it reads at data-dependent positions: such a value is stored to a buffer of its
    /// own first, so the out-of-range check runs before the input is written (the scheduler
    /// never puts a store into an input in a kernel that gathers).
    gathers: bool,
}

impl<'g> Lowerer<'g> {
    /// A functionalized graph's write-back (`fx::passes::functionalize`): `input.copy_(value)`
    /// with the input's own dtype and sizes, used by nothing. The input's name is rebound to the
    /// value, and [`Self::write_back_inputs`] stores it after everything else ran.
    pub(super) fn write_back(&mut self, id: NodeId) -> Result<bool, InductorError> {
        let Some((dst, src)) = self.write_back_pair(id) else {
            return Ok(false);
        };
        let (dst, src) = (&dst, &src);
        let value = self
            .env
            .get(src)
            .cloned()
            .ok_or_else(|| InductorError::Malformed("write-back of an unknown value".into()))?;
        self.env.insert(*dst, value.clone());
        self.env.insert(id, value);
        self.alias_root.insert(id, *dst);
        Ok(true)
    }

    /// `(input, value)` when node `id` is a write-back [`Self::write_back`] takes:
    /// `input.copy_(value)` into a graph input, of the input's own dtype, sizes and device, used
    /// by nothing. An input whose elements share memory (an expanded tensor: a dimension of
    /// stride 0) has no distinct element per store, so its value can never be stored in place,
    /// and eager's in-place ops refuse most writes to it: the copy is left to the generic path.
    pub(super) fn write_back_pair(&self, id: NodeId) -> Option<(NodeId, NodeId)> {
        let NodeKind::Call {
            target: fx::Target::Method(m),
            args,
            kwargs,
        } = &self.graph.node(id).kind
        else {
            return None;
        };
        let [Arg::Node(dst), Arg::Node(src)] = args.as_slice() else {
            return None;
        };
        if m != "copy_" || !kwargs.is_empty() || !self.graph.users(id).is_empty() {
            return None;
        }
        if !matches!(self.graph.node(*dst).kind, NodeKind::Placeholder { .. }) {
            return None;
        }
        let d = self.graph.node(*dst).meta.tensor()?;
        let s = self.graph.node(*src).meta.tensor()?;
        let overlapping = d.sizes.iter().zip(&d.strides).any(|(n, st)| {
            !matches!(n, fx::meta::Dim::Known(0 | 1)) && *st == fx::meta::Dim::Known(0)
        });
        let refused = overlapping
            || d.dtype != s.dtype
            || d.sizes != s.sizes
            || d.device != s.device
            || self.alias_root.contains_key(dst)
            || self
                .off_device(&self.graph.node(*dst).meta, &[], &[])
                .is_some();
        (!refused).then_some((*dst, *src))
    }

    /// Inputs mutated in place get their final value stored, after everything else ran.
    ///
    /// A value is stored straight into its input once no other pending value reads that input
    /// (and it reads its own input only at the element it stores); a cycle (two values each
    /// reading the other's old input) or a shifted self-read stages one value through a
    /// temporary first, as every write-back did before.
    ///
    /// The loop ends by construction: every round either stores (and drops) one pending value
    /// or stages one that still reads a graph input (a staged value reads only its temporary),
    /// so each round shrinks `pending.len() + (values reading an input)`. Once no value reads an
    /// input every target is free, and a value that still cannot go in place (its input repeats
    /// elements: a stride-0 dimension, where a store would write one element several times) is
    /// refused rather than staged again: the graph falls back. Before, such a value was staged
    /// again on every round, forever (hunt25's hang; three values reading each other's inputs
    /// and a first one read by both looped the same way, re-staging the first).
    pub(super) fn write_back_inputs(&mut self) -> Result<(), InductorError> {
        let mut done = std::collections::HashSet::new();
        let placeholders = self.graph.placeholders();
        let mut roots: Vec<NodeId> = self.alias_root.values().copied().collect();
        roots.sort();
        let mut pending: Vec<(BufId, TensorVal)> = Vec::new();
        for root in roots {
            if !done.insert(root) || !placeholders.contains(&root) {
                continue;
            }
            let Some(LValue::Tensor(t)) = self.env.get(&root).cloned() else {
                continue;
            };
            let NodeKind::Placeholder { index } = self.graph.node(root).kind else {
                continue;
            };
            let input = self
                .ir
                .buffers
                .iter_enumerated()
                .find(|(_, b)| b.kind == BufKind::Input(index))
                .map(|(id, _)| id)
                .unwrap();
            self.ir.mutated_inputs.push(index);
            // A value re-inplaced into the input (`reinplace.rs`: a scatter that stored only
            // its view's elements into the input's buffer) is the input itself: nothing to copy.
            let b = &self.ir.buffers[input];
            if t.as_view().is_some_and(|v| {
                v.buf == input && v.offset == 0 && v.sizes == b.sizes && v.strides == b.strides
            }) {
                continue;
            }
            pending.push((input, t));
        }
        let mut last_sizes = None;
        while !pending.is_empty() {
            let reads: Vec<Reads> = pending.iter().map(|(b, t)| self.reads_of(*b, t)).collect();
            let free = |i: usize| {
                let target = pending[i].0;
                reads
                    .iter()
                    .enumerate()
                    .all(|(j, r)| j == i || !r.inputs.contains(&target))
            };
            // Of the values ready to store, one of the last store's sizes first: consecutive
            // stores of one size fuse into one kernel (a parameter, then its moments).
            let ready = |i: usize| free(i) && reads[i].own_at_store;
            let same_sizes = |i: usize| last_sizes.as_ref() == Some(&pending[i].1.sizes);
            let pick = (0..pending.len())
                .find(|&i| ready(i) && same_sizes(i))
                .or_else(|| (0..pending.len()).find(|&i| ready(i)));
            if let Some(i) = pick {
                let (input, t) = pending.remove(i);
                if reads[i].gathers {
                    let strides = super::value::contiguous_strides_sym(&t.sizes);
                    let tmp = self.ir.add_buffer(
                        t.dtype,
                        t.sizes.clone(),
                        strides.clone(),
                        BufKind::Computed,
                    );
                    self.store(tmp, &t);
                    let t = TensorVal::buffer(tmp, t.dtype, t.sizes.clone(), strides);
                    self.store(input, &t);
                } else {
                    self.store(input, &t);
                }
                last_sizes = Some(t.sizes);
                continue;
            }
            // Only a value that still reads an input is worth staging (staging frees the inputs
            // it read); a free one first, as its own store may then go next round.
            let reads_input = |i: usize| !reads[i].inputs.is_empty();
            let Some(i) = (0..pending.len())
                .find(|&i| reads_input(i) && free(i))
                .or_else(|| (0..pending.len()).find(|&i| reads_input(i)))
            else {
                return Err(InductorError::Unsupported(
                    "an in-place write to an input whose elements share memory".into(),
                ));
            };
            let t = pending[i].1.clone();
            let strides = super::value::contiguous_strides_sym(&t.sizes);
            let tmp =
                self.ir
                    .add_buffer(t.dtype, t.sizes.clone(), strides.clone(), BufKind::Computed);
            self.store(tmp, &t);
            pending[i].1 = TensorVal::buffer(tmp, t.dtype, t.sizes.clone(), strides);
        }
        Ok(())
    }

    /// The inputs `t` reads, and whether it reads `target` only at the element a store of `t`
    /// into `target` writes.
    fn reads_of(&self, target: BufId, t: &TensorVal) -> Reads {
        let mut b = BodyBuilder::new(t.sizes.clone());
        let vars = b.vars();
        let v = t.load(&mut b, &vars);
        let body = b.finish(v);
        let deps = body.deps();
        let is_input = |b: BufId| matches!(self.ir.buffers[b].kind, BufKind::Input(_));
        let mut inputs: Vec<BufId> = deps
            .loads
            .iter()
            .chain(&deps.gathers)
            .map(|(b, _)| *b)
            .filter(|&b| is_input(b))
            .collect();
        inputs.sort();
        inputs.dedup();
        let store = store_index(&self.ir, target, Level::Inner, 0);
        let own_at_store = stores_distinct(&self.ir, target)
            && deps.gathers.iter().all(|(b, _)| *b != target)
            && deps
                .loads
                .iter()
                .all(|(b, idx)| *b != target || **idx == store);
        Reads {
            inputs,
            own_at_store,
            gathers: !deps.gathers.is_empty(),
        }
    }
}
