//! The scheduler: groups IR nodes into kernels, decides which buffers exist in memory, and plans
//! buffer reuse.
//!
//! A kernel iterates an outer ("row") space `O` in parallel and, per row, runs its nodes as
//! stages over an inner space `R`: a reduction accumulates over `R`, an inner pointwise node
//! computes `O ++ R`, a row pointwise node computes `O`. This is Inductor's C++ rule
//! (`vars1 == vars2 + reduce2`): softmax is one kernel of three stages (max, sum, normalize),
//! layer_norm one kernel (mean, variance, normalize).
//!
//! A node joins the current kernel when its iteration space fits and every read of a buffer the
//! kernel produces is of the element the same row/point just produced (index expressions compare
//! structurally: Inductor's `MemoryDep` matching). Values read only inside their kernel stay in
//! registers (same stage) or row locals (reductions) and are never allocated. A node that does
//! not fit the current kernel may join the kernel, further back, that made the last of its
//! operands: the steps in between are independent of it, so it runs before them.

use crate::entity::{entity_id, EntityVec};
use crate::index::Idx;
use crate::ir::{linear_index, BufId, BufKind, IrGraph, IrNode, IrNodeId};
use crate::size::Size;

entity_id!(
    /// A kernel: an index of [`Schedule::kernels`] (printed `kernel{id}` in C).
    KernelId
);
entity_id!(
    /// A step of the run: an index of [`Schedule::steps`].
    StepId
);

/// Where a node sits in its kernel's loop nest.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    /// Computed once per outer point (reductions, pointwise over `O`).
    Row,
    /// Computed for every point of `O ++ R`.
    Inner,
}

/// One IR node of a kernel: where it sits in the kernel's loop nest.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KernelNode {
    pub node: IrNodeId,
    pub level: Level,
    /// Stages run one after another per outer point; a stage is one reduction, or inner
    /// pointwise nodes sharing one loop over `R`, or row pointwise nodes.
    pub stage: usize,
}

#[derive(Clone, Debug)]
pub struct Kernel {
    pub name: String,
    /// The row space and the per-row (reduced) space, as sizes: fusion compares them as
    /// polynomials, so two symbols equal at a call are different extents here.
    pub outer: Vec<Size>,
    pub inner: Vec<Size>,
    /// The kernel's IR nodes in execution order.
    pub nodes: Vec<KernelNode>,
}

impl Kernel {
    pub fn has_reduction(&self, ir: &IrGraph) -> bool {
        self.nodes
            .iter()
            .any(|kn| matches!(ir.nodes[kn.node], IrNode::Reduction { .. }))
    }

    /// Whether IR node `n` is one of this kernel's.
    pub fn contains(&self, n: IrNodeId) -> bool {
        self.nodes.iter().any(|kn| kn.node == n)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    Kernel(KernelId),
    /// An extern or fallback IR node.
    Host(IrNodeId),
}

#[derive(Clone, Debug)]
pub struct Schedule {
    pub kernels: EntityVec<KernelId, Kernel>,
    pub steps: EntityVec<StepId, Step>,
    /// Whether each buffer exists in memory.
    pub materialized: EntityVec<BufId, bool>,
    /// Buffer whose (dead) storage a buffer takes over.
    pub reuse: EntityVec<BufId, Option<BufId>>,
    /// Buffer a kernel overwrites with this one, element by element: the kernel reads each
    /// element of the donor for the last time where it writes the same element of this buffer
    /// (Inductor's in-place buffer reuse). Donor and buffer have one layout and one dtype.
    pub in_place: EntityVec<BufId, Option<BufId>>,
    /// Buffers whose tensors can be dropped after each step.
    pub free_after: EntityVec<StepId, Vec<BufId>>,
    /// Kernel producing each buffer, if any.
    pub producer_kernel: EntityVec<BufId, Option<KernelId>>,
}

/// The store index of `buf` written by a node of `level` in a kernel with `n_outer` outer vars.
pub(crate) fn store_index(ir: &IrGraph, buf: BufId, level: Level, n_outer: usize) -> Idx {
    let b = &ir.buffers[buf];
    let n = match level {
        Level::Row => n_outer,
        Level::Inner => b.sizes.len(),
    };
    let vars: Vec<Idx> = (0..n as u32).map(Idx::var).collect();
    linear_index(&vars, &b.strides, Size::Const(0))
}

/// Sizes are compared as polynomials (the design's step 4): two symbols equal at a call are
/// different extents, so the plan's kernels stay general.
fn classify(node: &IrNode, outer: &[Size], inner: &[Size]) -> Option<Level> {
    match node {
        IrNode::Reduction { sizes, rsizes, .. } => {
            (sizes == outer && rsizes == inner).then_some(Level::Row)
        }
        IrNode::Pointwise { sizes, .. } => {
            let full: Vec<Size> = outer.iter().chain(inner).copied().collect();
            if *sizes == full {
                Some(Level::Inner)
            } else if sizes == outer {
                Some(Level::Row)
            } else {
                None
            }
        }
        _ => None,
    }
}

/// Whether IR node `n` reads at data-dependent positions.
fn node_gathers(ir: &IrGraph, n: IrNodeId) -> bool {
    match &ir.nodes[n] {
        IrNode::Pointwise { body, .. } | IrNode::Reduction { body, .. } => body.has_gather(),
        _ => false,
    }
}

pub fn schedule(ir: &IrGraph) -> Schedule {
    let nb = ir.buffers.len();
    let mut kernels: EntityVec<KernelId, Kernel> = EntityVec::new();
    let mut steps: EntityVec<StepId, Step> = EntityVec::new();
    let mut producer_kernel: EntityVec<BufId, Option<KernelId>> = EntityVec::filled(None, nb);
    // For buffers produced by a kernel: (level, stage).
    let mut produced_at: EntityVec<BufId, Option<(Level, usize)>> = EntityVec::filled(None, nb);
    let mut current: Option<KernelId> = None;
    // The step that last wrote each buffer (a kernel, an extern call, a fallback).
    let mut producer_step: EntityVec<BufId, Option<StepId>> = EntityVec::filled(None, nb);
    let mut kernel_step: EntityVec<KernelId, StepId> = EntityVec::new();

    for (ni, node) in ir.nodes.iter_enumerated() {
        let (out, body) = match node {
            IrNode::Pointwise { out, body, .. } | IrNode::Reduction { out, body, .. } => {
                (*out, body)
            }
            _ => {
                current = None;
                let s = steps.push(Step::Host(ni));
                for b in node.outputs() {
                    producer_step[b] = Some(s);
                }
                continue;
            }
        };
        let write_back = matches!(ir.buffers[out].kind, BufKind::Input(_));
        let deps = body.deps();
        let try_join = |k: KernelId| {
            let kern = &kernels[k];
            // A node writing one range of its buffer runs alone (see `IrGraph::writes_range`):
            // a reader of the buffer must not fuse with one range's writer, and two ranges'
            // writers of one buffer never share a kernel.
            if ir.writes_range(ni) || kern.nodes.iter().any(|kn| ir.writes_range(kn.node)) {
                return None;
            }
            // A flexible (pure pointwise, R = []) kernel can adopt a reduction's split.
            let (outer, inner) = match node {
                IrNode::Reduction { sizes, rsizes, .. }
                    if kern.inner.is_empty()
                        && !kern.has_reduction(ir)
                        && kern.nodes.iter().all(|kn| kn.level == Level::Inner)
                        && sizes.iter().chain(rsizes).copied().collect::<Vec<_>>()
                            == kern.outer =>
                {
                    (sizes.clone(), rsizes.clone())
                }
                _ => (kern.outer.clone(), kern.inner.clone()),
            };
            let level = classify(node, &outer, &inner)?;
            // An element-wise node that reads nothing this kernel computes gains nothing from
            // running after its reductions, and keeps a CUDA column kernel from splitting them
            // over blocks (`codegen::cuda::columns::splittable`): in resnet50's channels-last
            // training step a ReLU recomputed for another layer, of the same extents, joined two
            // per-channel sums of 64 channels and the kernel ran on 2 blocks, 40 ms (H100).
            if level == Level::Inner
                && !matches!(node, IrNode::Reduction { .. })
                && kern.has_reduction(ir)
                && !deps
                    .loads
                    .iter()
                    .any(|&(b, _)| producer_kernel[b] == Some(k))
            {
                return None;
            }
            if write_back && !(level == Level::Inner && may_store_input(ir, kern, out)) {
                return None;
            }
            // A kernel that reads at data-dependent positions sets the out-of-range flag the
            // runtime reads after it: a store into an input must wait for that check (eager
            // raises before it writes the argument).
            if write_back && kern.nodes.iter().any(|kn| node_gathers(ir, kn.node)) {
                return None;
            }
            // A data-dependent read may reach any element: its producer must be done.
            if deps
                .gathers
                .iter()
                .any(|&(b, _)| producer_kernel[b] == Some(k))
            {
                return None;
            }
            for &(b, idx) in &deps.loads {
                if producer_kernel[b] == Some(k) {
                    let (plevel, _) = produced_at[b].unwrap();
                    if plevel == Level::Inner
                        && level == Level::Row
                        && !matches!(node, IrNode::Reduction { .. })
                    {
                        return None;
                    }
                    if *idx != store_index(ir, b, plevel, outer.len()) {
                        return None;
                    }
                }
            }
            Some((k, outer, inner, level))
        };
        let joined = current.and_then(try_join).or_else(|| {
            // Not the current kernel: the kernel that made the last of the node's operands,
            // when that is a kernel further back. Steps in between (another kernel, a host
            // call) neither make what the node reads nor read what it makes (they precede it),
            // so the node may run before them, fused with its producer: the embedding gather
            // and the first RMSNorm that reads it, with the causal-mask kernels in between.
            // A store into a graph input keeps its place (a step in between may read the old
            // values).
            if write_back {
                return None;
            }
            let last = deps
                .loads
                .iter()
                .chain(&deps.gathers)
                .filter_map(|&(b, _)| producer_step[b])
                .max()?;
            match steps[last] {
                Step::Kernel(k) if Some(k) != current => try_join(k),
                _ => None,
            }
        });
        let k = match joined {
            Some((k, outer, inner, level)) => {
                let kern = &mut kernels[k];
                kern.outer = outer;
                kern.inner = inner;
                let last = kern.nodes.last().map(|kn| (kn.level, kn.stage));
                let is_red = matches!(node, IrNode::Reduction { .. });
                let stage = match last {
                    Some((Level::Inner, s))
                        if level == Level::Inner && !is_red && !stage_is_reduction(ir, kern, s) =>
                    {
                        s
                    }
                    Some((_, s)) => s + 1,
                    None => 0,
                };
                kern.nodes.push(KernelNode {
                    node: ni,
                    level,
                    stage,
                });
                produced_at[out] = Some((level, stage));
                k
            }
            None => {
                let (outer, inner) = match node {
                    IrNode::Reduction { sizes, rsizes, .. } => (sizes.clone(), rsizes.clone()),
                    IrNode::Pointwise { sizes, .. } => (sizes.clone(), vec![]),
                    _ => unreachable!(),
                };
                let level = if matches!(node, IrNode::Reduction { .. }) {
                    Level::Row
                } else {
                    Level::Inner
                };
                let k = kernels.push(Kernel {
                    name: format!("kernel{}", kernels.next_key()),
                    outer,
                    inner,
                    nodes: vec![KernelNode {
                        node: ni,
                        level,
                        stage: 0,
                    }],
                });
                produced_at[out] = Some((level, 0));
                kernel_step.push(steps.push(Step::Kernel(k)));
                current = Some(k);
                k
            }
        };
        producer_kernel[out] = Some(k);
        producer_step[out] = Some(kernel_step[k]);
    }

    // Materialization: outputs, inputs, host-produced buffers, and anything read across
    // kernels or across stages.
    let mut materialized: EntityVec<BufId, bool> = EntityVec::filled(false, nb);
    for (b, decl) in ir.buffers.iter_enumerated() {
        if matches!(decl.kind, BufKind::Input(_)) || producer_kernel[b].is_none() {
            materialized[b] = true;
        }
    }
    for o in &ir.outputs {
        materialized[o.buf()] = true;
    }
    // Steps that define and last use each buffer (`None`: defined by no step).
    let mut last_use: EntityVec<BufId, StepId> = EntityVec::filled(StepId::new(0), nb);
    let mut def_step: EntityVec<BufId, Option<StepId>> = EntityVec::filled(None, nb);
    for (s, st) in steps.iter_enumerated() {
        let nodes: Vec<(IrNodeId, Option<(Level, usize)>)> = match st {
            Step::Kernel(k) => kernels[*k]
                .nodes
                .iter()
                .map(|kn| (kn.node, Some((kn.level, kn.stage))))
                .collect(),
            Step::Host(n) => vec![(*n, None)],
        };
        for (n, place) in nodes {
            for b in ir.nodes[n].outputs() {
                def_step[b] = Some(def_step[b].map_or(s, |d| d.min(s)));
            }
            for b in ir.nodes[n].reads() {
                last_use[b] = s;
                let same_kernel = matches!(st, Step::Kernel(k) if producer_kernel[b] == Some(*k));
                if !same_kernel {
                    materialized[b] = true;
                    continue;
                }
                let (plevel, pstage) = produced_at[b].unwrap();
                let (_, stage) = place.unwrap();
                if plevel == Level::Inner && stage != pstage {
                    materialized[b] = true;
                }
            }
        }
    }

    // Reuse: a dead intermediate's storage goes to a later buffer of the same dtype and size.
    let escapes = |b: BufId| {
        matches!(ir.buffers[b].kind, BufKind::Input(_)) || ir.outputs.iter().any(|o| o.buf() == b)
    };
    let mut reuse: EntityVec<BufId, Option<BufId>> = EntityVec::filled(None, nb);
    let mut free_after: EntityVec<StepId, Vec<BufId>> = EntityVec::filled(Vec::new(), steps.len());
    let mut pool: Vec<BufId> = Vec::new();
    let mut order: Vec<BufId> = ir
        .buffers
        .keys()
        .filter(|&b| def_step[b].is_some())
        .collect();
    order.sort_by_key(|&b| def_step[b]);
    let mut released: EntityVec<BufId, bool> = EntityVec::filled(false, nb);
    // Host-returned tensors may alias the host's own tensors: never scratch space.
    let mut host_owned: EntityVec<BufId, bool> = EntityVec::filled(false, nb);
    for n in &ir.nodes {
        if let IrNode::Fallback { outs, .. } = n {
            outs.iter().for_each(|&b| host_owned[b] = true);
        }
    }
    let mut in_place: EntityVec<BufId, Option<BufId>> = EntityVec::filled(None, nb);
    for s in steps.keys() {
        // Buffers defined here may take storage freed by earlier steps.
        for &b in order.iter().filter(|&&b| def_step[b] == Some(s)) {
            let host_alloc =
                matches!(steps[s], Step::Host(n) if matches!(ir.nodes[n], IrNode::Fallback { .. }));
            if !materialized[b] || escapes(b) || host_alloc {
                continue;
            }
            if let Step::Kernel(k) = steps[s] {
                let donor = ir.buffers.keys().find(|&x| {
                    x != b
                        && materialized[x]
                        && !escapes(x)
                        && !host_owned[x]
                        && !released[x]
                        && def_step[x].is_some_and(|d| d < s)
                        && last_use[x] == s
                        && in_place_safe(ir, &kernels[k], b, x)
                });
                if let Some(x) = donor {
                    in_place[b] = Some(x);
                    // The donor's storage is the new buffer's now: never pooled.
                    released[x] = true;
                    free_after[s].push(x);
                    continue;
                }
            }
            let d = &ir.buffers[b];
            if let Some(pos) = pool.iter().position(|&x| {
                let o = &ir.buffers[x];
                o.dtype == d.dtype && o.storage_numel() == d.storage_numel()
            }) {
                reuse[b] = Some(pool.remove(pos));
            }
        }
        // Buffers last read here die after it.
        for b in ir.buffers.keys() {
            if materialized[b]
                && !escapes(b)
                && !released[b]
                && def_step[b].is_some_and(|d| last_use[b].max(d) == s)
            {
                released[b] = true;
                free_after[s].push(b);
                if !host_owned[b] {
                    pool.push(b);
                }
            }
        }
    }
    Schedule {
        kernels,
        steps,
        materialized,
        reuse,
        in_place,
        free_after,
        producer_kernel,
    }
}

/// Whether kernel `k` may write `b` over `x`: `b` is a stored pointwise result of `k` read by
/// later steps (not row scratch), of `x`'s dtype and layout, and every read of `x` in `k` is of
/// the element `b` stores at the same point, made before that store (an earlier stage, or an
/// earlier or the same node of `b`'s stage). Points of the kernel never share a store address,
/// so no point can read an element another point already overwrote.
fn in_place_safe(ir: &IrGraph, k: &Kernel, b: BufId, x: BufId) -> bool {
    let (db, dx) = (&ir.buffers[b], &ir.buffers[x]);
    if db.dtype != dx.dtype || db.sizes != dx.sizes || db.strides != dx.strides {
        return false;
    }
    if !stores_distinct(ir, b) || ir.written_by_ranges(b) {
        return false;
    }
    let Some(pos_b) = k.nodes.iter().position(|kn| {
        kn.level == Level::Inner
            && matches!(&ir.nodes[kn.node], IrNode::Pointwise { out, .. } if *out == b)
    }) else {
        return false;
    };
    let stage_b = k.nodes[pos_b].stage;
    let read_outside = ir
        .nodes
        .iter_enumerated()
        .any(|(i, node)| !k.contains(i) && node.reads().contains(&b));
    if !read_outside {
        return false;
    }
    let store = store_index(ir, b, Level::Inner, k.outer.len());
    k.nodes.iter().enumerate().all(|(pos, kn)| {
        let (stage, level) = (&kn.stage, &kn.level);
        let (body, is_reduction) = match &ir.nodes[kn.node] {
            IrNode::Pointwise { body, .. } => (body, false),
            IrNode::Reduction { body, .. } => (body, true),
            _ => return !ir.nodes[kn.node].reads().contains(&x),
        };
        let deps = body.deps();
        let gathers_x = deps.gathers.iter().any(|(g, _)| *g == x);
        let reads_x = gathers_x || deps.loads.iter().any(|(lb, _)| *lb == x);
        if !reads_x {
            return true;
        }
        let ordered = *stage < stage_b || (*stage == stage_b && pos <= pos_b);
        ordered
            && (is_reduction || *level == Level::Inner)
            && !gathers_x
            && deps
                .loads
                .iter()
                .all(|(lb, idx)| *lb != x || **idx == store)
    })
}

/// Whether distinct points of a store into `b` write distinct elements (no broadcast dim).
pub(crate) fn stores_distinct(ir: &IrGraph, b: BufId) -> bool {
    let d = &ir.buffers[b];
    !d.sizes
        .iter()
        .zip(&d.strides)
        .any(|(&n, &st)| n.as_const() != Some(1) && n.as_const() != Some(0) && st == 0)
}

/// Whether kernel `k` may take a store into graph input `b` (a mutated input's write-back,
/// `lower/write_back.rs`): every node of `k` that reads `b` reads, at inner level, only the
/// element the store writes at the same point, so each point reads `b`'s old value before its
/// own store and no point reads an element another point overwrote. Later nodes of the kernel
/// that read `b` read the new value through the usual same-element rule.
fn may_store_input(ir: &IrGraph, k: &Kernel, b: BufId) -> bool {
    if !stores_distinct(ir, b) {
        return false;
    }
    let store = store_index(ir, b, Level::Inner, k.outer.len());
    k.nodes.iter().all(|kn| {
        let node = &ir.nodes[kn.node];
        let body = match node {
            IrNode::Pointwise { body, .. } | IrNode::Reduction { body, .. } => body,
            _ => return !node.reads().contains(&b),
        };
        let deps = body.deps();
        let reads_b =
            deps.gathers.iter().any(|(g, _)| *g == b) || deps.loads.iter().any(|(lb, _)| *lb == b);
        !reads_b
            || (kn.level == Level::Inner
                && matches!(node, IrNode::Pointwise { .. })
                && deps.gathers.iter().all(|(g, _)| *g != b)
                && deps
                    .loads
                    .iter()
                    .all(|(lb, idx)| *lb != b || **idx == store))
    })
}

fn stage_is_reduction(ir: &IrGraph, k: &Kernel, stage: usize) -> bool {
    k.nodes
        .iter()
        .any(|kn| kn.stage == stage && matches!(ir.nodes[kn.node], IrNode::Reduction { .. }))
}
