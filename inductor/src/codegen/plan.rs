//! Target-neutral kernel planning: what each scheduled kernel computes, in which loop shape,
//! over which buffers, decided once for every printer.
//!
//! The C printer ([`super::c`]) turns a [`KernelPlan`] into OpenMP loops; a CUDA printer would
//! turn the same plan into a grid (a row per block for [`KernelShape::Staged`]), so these
//! decisions are not forked per device: the loop order and merging of a pointwise kernel
//! ([`LoopNest`]), whether a reduction over leading dims runs rows in blocks, which
//! intermediates live in row-local arrays (scratch), the store index of each node's output,
//! the buffers a kernel takes as arguments (and which of them it writes over a donor), and
//! which outputs get a huge-page hint. Numbers that differ per device (the largest row kept in
//! scratch, the huge-page size) come from the [`Target`]'s policy.

use crate::entity::EntityVec;
use crate::index::{Atom, Idx};
use crate::ir::{contiguous_strides, BufId, BufKind, IrGraph, IrNode};
use crate::schedule::{Kernel, KernelId, Level, Schedule};
use crate::size::{consts, Size};
use crate::target::Target;

/// How a kernel's loops are shaped.
#[derive(Clone, Debug)]
pub enum KernelShape {
    /// Every node computes the kernel's whole space (no reductions): one nest, all in parallel
    /// but the innermost loop, which is vectorized.
    Pointwise(LoopNest),
    /// Reductions over leading dims: rows processed in blocks along the last row var, so the
    /// innermost loop walks contiguous memory.
    Blocked,
    /// Outer (row) loops in parallel, then per row one stage after another over the inner
    /// space; `scratch` are the buffers kept in per-row arrays instead of memory.
    Staged { scratch: Vec<BufId> },
}

/// One kernel, planned.
#[derive(Clone, Debug)]
pub struct KernelPlan {
    pub shape: KernelShape,
    /// Buffers the kernel touches in memory, in argument order.
    pub bufs: Vec<BufId>,
    /// Per argument: the argument buffer it is written over (its in-place donor, when that is
    /// an argument too). The printer addresses it through the donor's pointer so that every
    /// access stays based on one `restrict` pointer (reads precede writes element by element).
    pub aliases: Vec<Option<BufId>>,
    /// Outputs written from scratch that get a huge-page hint first, with their sizes in bytes,
    /// in node order.
    pub hugepage: Vec<(BufId, Size)>,
}

/// Plans every kernel of `sched` for `target`.
pub fn plan(ir: &IrGraph, sched: &Schedule, target: &Target) -> EntityVec<KernelId, KernelPlan> {
    sched
        .kernels
        .iter()
        .map(|k| plan_kernel(ir, sched, k, target))
        .collect()
}

fn plan_kernel(ir: &IrGraph, sched: &Schedule, k: &Kernel, target: &Target) -> KernelPlan {
    let pure_pointwise = k.inner.is_empty() && k.nodes.iter().all(|kn| kn.level == Level::Inner);
    let has_arg = k
        .nodes
        .iter()
        .any(|kn| matches!(&ir.nodes[kn.node], IrNode::Reduction { op, .. } if op.is_arg()));
    let blocked = !pure_pointwise
        && !k.outer.is_empty()
        && !has_arg
        && prefers_blocked(ir, sched, k, target.blocked_min_rows());
    let shape = if pure_pointwise {
        KernelShape::Pointwise(pointwise_nest(ir, sched, k, target.cpu().is_some()))
    } else if blocked {
        KernelShape::Blocked
    } else {
        KernelShape::Staged {
            scratch: scratch_buffers(ir, sched, k, target),
        }
    };
    let scratch: &[BufId] = match &shape {
        KernelShape::Staged { scratch } => scratch,
        _ => &[],
    };
    // Buffers this kernel touches in memory.
    let mut bufs: Vec<BufId> = Vec::new();
    for kn in &k.nodes {
        let node = &ir.nodes[kn.node];
        for b in node.reads() {
            let internal =
                sched.producer_kernel[b].is_some_and(|p| std::ptr::eq(&sched.kernels[p], k));
            if (!internal || sched.materialized[b]) && !bufs.contains(&b) {
                bufs.push(b);
            }
        }
        for b in node.outputs() {
            if sched.materialized[b] && !bufs.contains(&b) {
                bufs.push(b);
            }
        }
    }
    bufs.retain(|b| !scratch.contains(b));
    let alias_of = |b: BufId| sched.in_place[b].filter(|x| bufs.contains(x));
    let aliases = bufs.iter().map(|&b| alias_of(b)).collect();
    let mut hugepage = Vec::new();
    for kn in &k.nodes {
        for b in ir.nodes[kn.node].outputs() {
            let decl = &ir.buffers[b];
            let bytes = decl.storage_numel() * decl.dtype.itemsize() as i64;
            // A symbolic byte count is hinted when the target hints at all: the printer tests
            // it against the threshold in C (the design's step 5).
            let wanted = match bytes.as_const() {
                Some(n) => target.wants_hugepage(n),
                None => target.wants_hugepage(i64::MAX),
            };
            if bufs.contains(&b) && alias_of(b).is_none() && wanted {
                hugepage.push((b, bytes));
            }
        }
    }
    KernelPlan {
        shape,
        bufs,
        aliases,
        hugepage,
    }
}

/// Store index of a kernel node's output (over the node's first `nvars` vars).
pub fn store_idx(ir: &IrGraph, buf: BufId, nvars: usize) -> Idx {
    let b = &ir.buffers[buf];
    let mut e = Idx::constant(0);
    for (k, st) in b.strides.iter().enumerate().take(nvars) {
        if b.sizes[k] != 1 {
            e = e.add(&Idx::var(k as u32).scale(*st));
        }
    }
    e
}

/// The loops a kernel runs: loop `j` counts `x{j}` over `sizes[j]`, and the nodes' var `k` is
/// `map[k]` over the loop vars (`None`: the nodes' own vars, one loop each). A pointwise kernel
/// reorders its loops so the smallest output stride is innermost (a transposed result is
/// written, not scattered) and merges adjacent loops whose every index stays affine (a
/// `[n, 3]` tensor runs as one loop of `3n`, not `n` loops of 3).
#[derive(Clone, Debug)]
pub struct LoopNest {
    /// Extent of each loop, outermost first.
    pub sizes: Vec<Size>,
    map: Option<Vec<Idx>>,
    /// Extents of the loops left out that may be 0: the kernel runs only where each is `> 0`.
    pub guards: Vec<Size>,
}

impl LoopNest {
    pub fn identity(sizes: &[Size]) -> LoopNest {
        LoopNest {
            sizes: sizes.to_vec(),
            map: None,
            guards: Vec::new(),
        }
    }

    /// The nodes' own loops, less those of extent at most 1 (their var is 0): a constant 1, or
    /// a symbolic extent proved `<= 1` (0 or 1 with the size: the right border of a pool split
    /// by [`crate::lower`]'s interior, `(s - 1) / 2 - s / 2 + 1`), which the kernel runs under
    /// `extent > 0` ([`LoopNest::guards`]). A border column `[n, c, h, 1]` otherwise runs its
    /// vectorized innermost loop once per row, and its positions along the column stay loop
    /// variables the printer cannot hoist; without it the loop over the rows is innermost.
    pub fn without_unit_loops(sizes: &[Size]) -> LoopNest {
        let at_most_one = |s: &Size| {
            s.as_const().is_none()
                && (Size::Const(1) - *s)
                    .lower_bound_floor(&|_| crate::index::SYMBOL_MIN)
                    .is_some_and(|v| v >= 0)
        };
        let unit = |s: &Size| *s == Size::Const(1) || at_most_one(s);
        // One loop stays (a kernel of one point is the static nest's business).
        if sizes.len() <= 1 || !sizes.iter().any(unit) || sizes.iter().all(unit) {
            return LoopNest::identity(sizes);
        }
        let (mut kept, mut guards) = (Vec::new(), Vec::new());
        let map = sizes
            .iter()
            .map(|s| {
                if unit(s) {
                    if at_most_one(s) {
                        guards.push(*s);
                    }
                    Idx::constant(0)
                } else {
                    kept.push(*s);
                    Idx::var(kept.len() as u32 - 1)
                }
            })
            .collect();
        LoopNest {
            sizes: kept,
            map: Some(map),
            guards,
        }
    }

    /// `e` (over the nodes' vars) over the loop vars.
    pub fn apply(&self, e: &Idx) -> Idx {
        match &self.map {
            None => e.clone(),
            Some(m) => e.substitute(m, &self.sizes),
        }
    }

    /// Loops over `groups` of the original dims (each outer to inner), outermost group first.
    pub fn grouped(sizes: &[i64], groups: &[Vec<usize>]) -> LoopNest {
        let new_sizes: Vec<i64> = groups
            .iter()
            .map(|g| g.iter().map(|&d| sizes[d]).product())
            .collect();
        let ranges = consts(&new_sizes);
        let mut map = vec![Idx::constant(0); sizes.len()];
        for (j, g) in groups.iter().enumerate() {
            let mut div = 1i64;
            for &d in g.iter().rev() {
                let e = Idx::var(j as u32).floordiv(div.max(1), &ranges);
                map[d] = e.modulo(sizes[d].max(1), &ranges);
                div *= sizes[d];
            }
        }
        LoopNest {
            sizes: ranges,
            map: Some(map),
            guards: Vec::new(),
        }
    }

    /// Merges adjacent loops, innermost pair first, wherever every index in `exprs` (over the
    /// nodes' vars) gains no floor division or modulo: loops `j - 1` and `j` become one loop
    /// `y` of extent `e_{j-1} * e_j` with `x_{j-1} = y / e_j` and `x_j = y % e_j`, and a
    /// contiguous `[s0, s1, s2]` tensor's `s1*s2*x0 + s2*x1 + x2` folds to `y` (the index's
    /// normal form folds `d * (e / d) + e % d` into `e`, symbolic `d` too). So a symbolic nest
    /// of contiguous dims runs one flat loop, vectorized, as a static one does, without
    /// comparing a stride's value: the fold is polynomial equality, valid at every size.
    /// Merged one pair at a time over the nest so far (not grouped at once, as
    /// [`LoopNest::grouped`] does), so that three or more dims fold too.
    ///
    /// Two loops merge only where both extents are proved `>= 0` (each symbol at least 2):
    /// a pool's interior piece may have a negative extent at small sizes (it runs zero
    /// times), and the product of two negative extents would run.
    pub fn merged(self, exprs: &[Idx]) -> LoopNest {
        let parts = vec![0; self.sizes.len()];
        self.merged_within(exprs, parts).0
    }

    /// [`LoopNest::merged`], merging two loops only where they are of one part (`parts[j]`
    /// per loop, outermost first): a kernel with reductions merges its row loops among
    /// themselves and its reduced loops among themselves, never a row loop with a reduced one.
    /// Returns the parts of the loops left.
    pub fn merged_within(self, exprs: &[Idx], mut parts: Vec<usize>) -> (LoopNest, Vec<usize>) {
        let nonneg = |s: &Size| {
            s.lower_bound_floor(&|_| crate::index::SYMBOL_MIN)
                .is_some_and(|v| v >= 0)
        };
        let base: Vec<usize> = exprs.iter().map(divmods).collect();
        let orig = self.map.as_ref().map_or(self.sizes.len(), Vec::len);
        let mut nest = self;
        let mut map = nest
            .map
            .take()
            .unwrap_or_else(|| (0..orig as u32).map(Idx::var).collect());
        let mut j = nest.sizes.len();
        while j > 1 {
            j -= 1;
            let (outer, inner) = (nest.sizes[j - 1], nest.sizes[j]);
            if parts[j - 1] != parts[j]
                || !nonneg(&outer)
                || !nonneg(&inner)
                || inner == Size::Const(0)
            {
                continue;
            }
            let mut sizes = nest.sizes.clone();
            sizes[j - 1] = outer * inner;
            sizes.remove(j);
            let y = Idx::var(j as u32 - 1);
            let step: Vec<Idx> = (0..nest.sizes.len())
                .map(|v| match v {
                    v if v + 1 < j => Idx::var(v as u32),
                    v if v + 1 == j => y.floordiv(inner, &sizes),
                    v if v == j => y.modulo(inner, &sizes),
                    v => Idx::var(v as u32 - 1),
                })
                .collect();
            let candidate: Vec<Idx> = map.iter().map(|m| m.substitute(&step, &sizes)).collect();
            let fits = exprs
                .iter()
                .zip(&base)
                .all(|(e, b)| divmods(&e.substitute(&candidate, &sizes)) <= *b);
            if fits {
                nest.sizes = sizes;
                map = candidate;
                parts.remove(j);
            }
        }
        let identity = map.len() == nest.sizes.len()
            && map
                .iter()
                .enumerate()
                .all(|(i, m)| *m == Idx::var(i as u32));
        nest.map = (!identity).then_some(map);
        (nest, parts)
    }
}

/// The loops of a kernel with reductions over symbolic sizes, staged
/// ([`KernelShape::Staged`]) on the CPU: its row loops merged among themselves and its reduced
/// loops among themselves wherever no index gains a division ([`LoopNest::merged_within`]),
/// and the number of row loops left. A softmax over the last dim of `[s0, s1, s2]` runs
/// `s0*s1` rows of `s2` (one parallel loop, no `collapse`); a sum over the last two dims one
/// row loop of `s1*s2`, vectorized as a one-dim reduction is. `None` where the printer keeps
/// the nodes' own loops: constant sizes (the static C is left as it was) and arg reductions
/// (printed by their own loops).
pub fn staged_nest(ir: &IrGraph, sched: &Schedule, k: &Kernel) -> Option<(LoopNest, usize)> {
    let (no, nr) = (k.outer.len(), k.inner.len());
    let symbolic = k
        .outer
        .iter()
        .chain(&k.inner)
        .any(|s| s.as_const().is_none());
    if !symbolic {
        return None;
    }
    let mut exprs: Vec<Idx> = Vec::new();
    for kn in &k.nodes {
        match &ir.nodes[kn.node] {
            IrNode::Reduction { op, .. } if op.is_arg() => return None,
            IrNode::Reduction { out, body, .. } => {
                exprs.extend(body.deps().indices.into_iter().cloned());
                if sched.materialized[*out] {
                    exprs.push(store_idx(ir, *out, no));
                }
            }
            IrNode::Pointwise {
                out, body, offset, ..
            } => {
                exprs.extend(body.deps().indices.into_iter().cloned());
                if sched.materialized[*out] {
                    let nvars = if kn.level == Level::Row { no } else { no + nr };
                    exprs.push(store_idx(ir, *out, nvars).add_const(*offset));
                }
            }
            _ => {}
        }
    }
    let sizes: Vec<Size> = k.outer.iter().chain(&k.inner).copied().collect();
    let parts = (0..no + nr).map(|d| usize::from(d >= no)).collect();
    let (nest, parts) = LoopNest::identity(&sizes).merged_within(&exprs, parts);
    let rows = parts.iter().filter(|&&p| p == 0).count();
    Some((nest, rows))
}

/// Every index a pure pointwise kernel reads or stores at, over its nodes' vars.
fn kernel_indices(ir: &IrGraph, sched: &Schedule, k: &Kernel) -> Vec<Idx> {
    let n = k.outer.len();
    let mut exprs: Vec<Idx> = Vec::new();
    for kn in &k.nodes {
        let IrNode::Pointwise {
            out, body, offset, ..
        } = &ir.nodes[kn.node]
        else {
            continue;
        };
        exprs.extend(body.deps().indices.into_iter().cloned());
        if sched.materialized[*out] {
            exprs.push(store_idx(ir, *out, n).add_const(*offset));
        }
    }
    exprs
}

/// Floor divisions and modulos in an index (what merging loops must not add).
fn divmods(e: &Idx) -> usize {
    e.terms
        .iter()
        .map(|(a, _)| match a {
            Atom::Var(_) => 0,
            Atom::FloorDiv(x, _) | Atom::Mod(x, _) => 1 + divmods(x),
            Atom::Clamp(x, _, _) => divmods(x),
        })
        .sum()
}

/// The loop nest of a pure pointwise kernel (see [`LoopNest`]).
pub fn pointwise_nest(ir: &IrGraph, sched: &Schedule, k: &Kernel, cpu: bool) -> LoopNest {
    let n = k.outer.len();
    // Reordering loops compares strides by value: a symbolic nest keeps the nodes' order, but
    // a CPU nest drops loops of extent 1 and merges adjacent loops whose indices stay affine
    // ([`LoopNest::merged`]); CUDA's thread mapping keeps its own.
    let symbolic = |exprs: &[Idx]| match cpu {
        true => LoopNest::without_unit_loops(&k.outer).merged(exprs),
        false => LoopNest::identity(&k.outer),
    };
    let exprs = kernel_indices(ir, sched, k);
    let Some(sizes) = &crate::size::as_consts(&k.outer) else {
        return symbolic(&exprs);
    };
    if n <= 1 || sizes.contains(&0) {
        return LoopNest::identity(&k.outer);
    }
    let mut reference: Option<Vec<i64>> = None;
    for kn in &k.nodes {
        let IrNode::Pointwise { out, .. } = &ir.nodes[kn.node] else {
            continue;
        };
        if sched.materialized[*out] {
            // Constant loops storing into a buffer of symbolic strides (a corner piece of a
            // symbolic pool, `lower::interior`, over constant leading dims).
            let Some(st) = crate::size::as_consts(&ir.buffers[*out].strides) else {
                return symbolic(&exprs);
            };
            reference = Some(st);
            break;
        }
    }
    let strides = reference.unwrap_or_else(|| contiguous_strides(sizes));
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by_key(|&d| {
        std::cmp::Reverse(if sizes[d] == 1 {
            i64::MAX
        } else {
            strides[d].abs()
        })
    });
    let base: Vec<usize> = exprs.iter().map(divmods).collect();
    let fits = |groups: &[Vec<usize>]| {
        let nest = LoopNest::grouped(sizes, groups);
        exprs
            .iter()
            .zip(&base)
            .all(|(e, b)| divmods(&nest.apply(e)) <= *b)
    };
    let mut groups: Vec<Vec<usize>> = order.iter().map(|&d| vec![d]).collect();
    let mut i = groups.len() - 1;
    while i > 0 {
        let mut merged = groups.clone();
        let inner = merged.remove(i);
        merged[i - 1].extend(inner);
        if fits(&merged) {
            groups = merged;
        }
        i -= 1;
    }
    if groups.len() == n && order.iter().enumerate().all(|(i, &d)| i == d) {
        return LoopNest::identity(&k.outer);
    }
    LoopNest::grouped(sizes, &groups)
}

/// The coefficient of var `v` in `e` where it appears as a plain term (0 when absent or only
/// inside a division, modulo or clamp).
pub fn coef(e: &Idx, v: u32) -> Size {
    e.terms
        .iter()
        .find(|(a, _)| *a == Atom::Var(v))
        .map_or(Size::Const(0), |(_, c)| *c)
}

/// Whether a kernel with reductions reads memory contiguously along its last *row* var rather
/// than along its last reduced var (a reduction over a leading dim, `x.sum(0)`): then scanning
/// each row alone strides through memory, and rows are better processed in blocks.
fn prefers_blocked(ir: &IrGraph, sched: &Schedule, k: &Kernel, min_rows: i64) -> bool {
    let (no, nr) = (k.outer.len(), k.inner.len());
    // Rows of a symbolic count are blocked whatever their number (the design's step 5).
    if nr == 0 || k.outer[no - 1].as_const().is_some_and(|r| r < min_rows) {
        return false;
    }
    let (row, red) = (no as u32 - 1, (no + nr) as u32 - 1);
    let mut votes = 0i64;
    for kn in &k.nodes {
        let body = match &ir.nodes[kn.node] {
            IrNode::Pointwise { body, .. } | IrNode::Reduction { body, .. } => body,
            _ => continue,
        };
        for (b, idx) in body.loads() {
            // A value this kernel computes is read from a register or a row-local array, not
            // from memory: its layout says nothing about how the kernel walks memory. (Counted,
            // a fused layer norm's four row statistics outvoted its input's reads and ran a
            // row-contiguous softmax + layer norm over `[s0, s1, s2]` blocked, each vector lane
            // a row `s2` elements from the next.)
            if sched.producer_kernel[b].is_some_and(|p| std::ptr::eq(&sched.kernels[p], k)) {
                continue;
            }
            // A load that does not move along the reduced space (a per-row value: batch norm's
            // mean or weight beside the column it normalizes) is read once per row in either
            // shape; letting it vote for rows-contiguous turned batch norm's NCHW backward into
            // column tiles of 32 channels 3136 elements apart (43 ms for one kernel on the
            // H100, session 24).
            if !(no as u32..(no + nr) as u32).any(|v| idx.uses_var(v)) {
                continue;
            }
            // A unit stride (either sign); a symbolic coefficient is at least 2.
            let unit = |c: Size| c == 1 || c == -1;
            let (co, ci) = (unit(coef(idx, row)), unit(coef(idx, red)));
            if co && !ci {
                votes += 1;
            } else if ci && !co {
                votes -= 1;
            }
        }
    }
    votes > 0
}

/// Buffers a staged kernel can keep in per-row arrays instead of memory: produced by one of its
/// inner (`O ++ R`) nodes and read only by its later stages (softmax's `exp(x - max)`, computed
/// once and read by the sum and the normalization, as Inductor's `local_buffer`).
///
/// A row of symbolic length has scratch on the CPU only, in per-thread heap arrays the C
/// printer sizes at run time (`tf_row_scratch`, at most [`ROW_SCRATCH_SLOTS`] a kernel): no
/// bound on the row is proved, so no stack array. Without it a dynamic softmax computed
/// `exp(x - max)` twice per element and ran 1.7x the static kernel's time.
fn scratch_buffers(ir: &IrGraph, sched: &Schedule, k: &Kernel, target: &Target) -> Vec<BufId> {
    if k.inner.is_empty() {
        return Vec::new();
    }
    let slots = match k.inner.iter().product::<Size>().as_const() {
        Some(n) if n > target.scratch_max() => return Vec::new(),
        Some(_) => usize::MAX,
        None if target.cpu().is_some() => ROW_SCRATCH_SLOTS,
        None => return Vec::new(),
    };

    let escapes = |b: BufId| {
        !matches!(ir.buffers[b].kind, BufKind::Computed) || ir.outputs.iter().any(|o| o.buf() == b)
    };
    k.nodes
        .iter()
        .filter_map(|kn| match &ir.nodes[kn.node] {
            IrNode::Pointwise { out, .. } if kn.level == Level::Inner => Some(*out),
            _ => None,
        })
        .filter(|&b| sched.materialized[b] && !escapes(b))
        .filter(|&b| {
            ir.nodes
                .iter_enumerated()
                .all(|(i, node)| k.contains(i) || !node.reads().contains(&b))
        })
        .take(slots)
        .collect()
}

/// The most row-local arrays of symbolic length one CPU kernel keeps (the slots of the C
/// prelude's `tf_row_scratch`); later candidates are staged through memory.
pub const ROW_SCRATCH_SLOTS: usize = 8;
