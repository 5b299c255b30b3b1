//! Intermediate buffers kept from one call of a compiled graph to the next.
//!
//! Allocating every intermediate afresh on each call looks free (torch's CPU allocator is
//! glibc's malloc) but is not: whenever malloc hands memory back to the system (heap trimming,
//! mmap'd chunks), the next call faults each 4 KiB page in again. On the VMs we measure on a page
//! fault costs microseconds, and a transformer block spent a quarter of its time in them. A
//! graph whose intermediates are kept allocated never faults on them, and skips one allocation
//! and one `data_ptr` host call per buffer as well, like static memory planning for CUDA graphs.
//!
//! Only storage nobody outside the graph can see is kept: never an input, an output (or the
//! base of an output view), a tensor the host allocated itself (fallback results, convolutions,
//! attention), or anything a fallback op reads (it may return an alias of its argument).
//! Storage the schedule shares between buffers is kept or dropped as one.

use crate::entity::EntityVec;
use std::collections::HashMap;

use crate::ir::{BufId, BufKind, IrGraph, IrNode, IrNodeId};
use crate::schedule::Schedule;

/// Above this many bytes of intermediates a graph keeps none of them between calls: memory held
/// while the graph is idle should stay small next to what a call needs anyway.
pub const MAX_KEPT_BYTES: i64 = 256 << 20;

/// The host tensors (and their data pointers) of a graph's kept buffers, filled by the first
/// call that uses it. One call at a time: a caller takes it out for the call and puts it back.
pub struct Workspace<T> {
    tensors: EntityVec<BufId, Option<T>>,
    /// Data pointers as addresses (a workspace may move between threads with its owner).
    ptrs: EntityVec<BufId, usize>,
    /// Extern operands' views made by earlier calls, by (node, operand): see [`CachedView`].
    views: HashMap<(IrNodeId, usize), CachedView<T>>,
    /// A call has run to the end with this workspace, so every kept buffer is allocated and no
    /// later call allocates one (see [`Workspace::is_complete`]).
    complete: bool,
}

impl<T: Clone> Workspace<T> {
    pub fn new(num_buffers: usize) -> Self {
        Workspace {
            tensors: EntityVec::filled(None, num_buffers),
            ptrs: EntityVec::filled(0, num_buffers),
            views: HashMap::new(),
            complete: false,
        }
    }

    pub(crate) fn view(&self, site: (IrNodeId, usize)) -> Option<&CachedView<T>> {
        self.views.get(&site)
    }

    pub(crate) fn keep_view(&mut self, site: (IrNodeId, usize), v: CachedView<T>) {
        self.views.insert(site, v);
    }

    /// Whether a call has run to the end with this workspace: every buffer it keeps is then
    /// allocated, and later calls only write them. The host uses this to decide allocation-time
    /// properties once (torch's inference mode makes inference tensors, which a later call
    /// outside inference mode could not pass as `out=`) instead of asking on every call.
    pub fn is_complete(&self) -> bool {
        self.complete
    }

    /// Records that a call has run to the end with this workspace.
    pub fn mark_complete(&mut self) {
        self.complete = true;
    }

    pub(crate) fn get(&self, buf: BufId) -> Option<(T, usize)> {
        self.tensors
            .get(buf)?
            .as_ref()
            .map(|t| (t.clone(), self.ptrs[buf]))
    }

    pub(crate) fn keep(&mut self, buf: BufId, t: T) {
        self.tensors[buf] = Some(t);
        self.ptrs[buf] = 0;
    }

    pub(crate) fn keep_ptr(&mut self, buf: BufId, p: usize) {
        self.ptrs[buf] = p;
    }

    /// Buffers held.
    pub fn len(&self) -> usize {
        self.tensors.iter().flatten().count()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// An extern operand's view of a kept buffer made by an earlier call (an `mm` operand
/// `x.view(B*T, C)`: without it, one host call per operand per call, the most frequent host
/// call of a transformer's forward). A kept buffer's tensor is the workspace's own for the
/// workspace's whole life, so its views are too; `base` and `ptr` are checked on every use all
/// the same (a pointer comparison each), so a path that ever gave the buffer another tensor
/// would make the view again rather than read stale memory. The view is only read by the
/// extern call (never an output, never a fallback's argument), so nothing outside the graph
/// sees it. Views of inputs are not kept: the workspace would keep a caller's tensor (a
/// model's weights) alive after the caller dropped it.
pub(crate) struct CachedView<T> {
    pub base: T,
    pub ptr: usize,
    pub view: T,
}

/// Which buffers a [`Workspace`] may keep between calls.
pub fn kept_buffers(ir: &IrGraph, sched: &Schedule) -> EntityVec<BufId, bool> {
    let n = ir.buffers.len();
    let mut ok: EntityVec<BufId, bool> = ir
        .buffers
        .iter_enumerated()
        .map(|(b, d)| sched.materialized[b] && d.kind == BufKind::Computed)
        .collect();
    for spec in &ir.outputs {
        ok[spec.buf()] = false;
    }
    for node in &ir.nodes {
        match node {
            IrNode::Fallback { outs, .. } => {
                outs.iter().for_each(|&b| ok[b] = false);
                node.reads().into_iter().for_each(|b| ok[b] = false);
            }
            IrNode::Extern { out, call, .. } if call.host_allocates() => ok[*out] = false,
            _ => {}
        }
    }
    // Buffers sharing storage (reuse or in-place plan) form one class: kept only if all are.
    let mut root: EntityVec<BufId, BufId> = ir.buffers.keys().collect();
    fn find(root: &mut EntityVec<BufId, BufId>, mut b: BufId) -> BufId {
        while root[b] != b {
            root[b] = root[root[b]];
            b = root[b];
        }
        b
    }
    for (b, donor) in sched
        .reuse
        .iter_enumerated()
        .chain(sched.in_place.iter_enumerated())
    {
        if let Some(d) = donor {
            let (rb, rd) = (find(&mut root, b), find(&mut root, *d));
            root[rb] = rd;
        }
    }
    let mut class_ok: EntityVec<BufId, bool> = EntityVec::filled(true, n);
    for (b, &fine) in ok.iter_enumerated() {
        let r = find(&mut root, b);
        class_ok[r] &= fine;
    }
    let kept: EntityVec<BufId, bool> = ir
        .buffers
        .keys()
        .map(|b| ok[b] && class_ok[find(&mut root, b)])
        .collect();
    // Each class is one allocation, the size of its largest member.
    let mut class_bytes: EntityVec<BufId, i64> = EntityVec::filled(0, n);
    for b in ir.buffers.keys().filter(|&b| kept[b]) {
        let r = find(&mut root, b);
        let d = &ir.buffers[b];
        class_bytes[r] = class_bytes[r]
            .max(d.storage_numel().expect_const("a kept buffer") * d.dtype.itemsize() as i64);
    }
    if class_bytes.iter().sum::<i64>() > MAX_KEPT_BYTES {
        return EntityVec::filled(false, n);
    }
    kept
}
