//! Column kernels: a [`KernelShape::Blocked`](super::KernelShape::Blocked) reduction (over
//! leading dims, memory contiguous along the rows) on tiles of 32 rows, several threads per row.
//!
//! One thread per row (the shape the C printer's blocked loops map to) leaves the GPU nearly
//! idle on the reductions training makes most: a bias gradient sums 8192 rows of 768 columns,
//! which is 768 threads on a device of 270 000, each adding 8192 values in a dependent chain.
//! Here a block is 32 lanes (32 neighbouring rows, so a warp's loads stay coalesced) times
//! `ty` threads per row, each folding every `ty`-th reduced position; the block combines a
//! row's `ty` partials through shared memory in thread order. A kernel whose only reduction
//! comes first (the later stages row-level pointwise) is also split along the reduced space
//! over `parts` blocks per tile, whose partials the tile's last block folds in part order, as
//! [`super::split`] does for row kernels. Every order is fixed by the shapes: deterministic,
//! no float atomics.
//!
//! The last tile's lanes past the end take the last row (`row = min(row, rows - 1)`): they
//! compute its values again, in the same order, and store the same bits to the same addresses,
//! so every thread of a block runs the same barriers. Duplicated stores are only sound when no
//! buffer is written over another the kernel reads ([`fits`] refuses in-place kernels).

use std::collections::HashMap;
use std::fmt::Write;

use fx::DType;

use super::super::c::syntax::{c_type, combine_c, init_c, is_f32_like, store_conv};
use super::super::c::{emit_body_with, emit_stage_nodes, local_value, store_c, Cx};
use super::super::plan::{KernelPlan, LoopNest};
use super::{ceil_div, cn, unflatten, CUDA};
use crate::ir::{BufId, IrGraph, IrNode, ReduceOp};
use crate::schedule::{Kernel, KernelNode, Level, Schedule};
use crate::target::CudaPolicy;

/// Rows per block (one warp wide).
const LANES: i64 = 32;

/// Fewest reduced positions each thread of a split block folds: fewer, and the partials'
/// write and the last block's fold cost more than the split saves.
const MIN_PER_THREAD: i64 = 8;

/// How a column kernel is launched.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct ColumnShape {
    /// Threads per row.
    pub ty: u32,
    /// Blocks per tile along the reduced space (1: not split).
    pub parts: u32,
    pub grid: u32,
}

impl ColumnShape {
    pub fn block(&self) -> u32 {
        LANES as u32 * self.ty
    }
}

/// The column shape of blocked kernel `k`, or `None` to keep one thread per row: reduced
/// spaces too short to share, and kernels that write over a buffer they read.
pub(super) fn fits(
    ir: &IrGraph,
    k: &Kernel,
    plan: &KernelPlan,
    policy: &CudaPolicy,
) -> Option<ColumnShape> {
    let ty = policy.column_threads as i64;
    let outer_n: i64 = cn(&k.outer).iter().product();
    let inner_n: i64 = cn(&k.inner).iter().product();
    if ty < 2 || inner_n < 4 * ty || outer_n <= 0 || plan.aliases.iter().any(|a| a.is_some()) {
        return None;
    }
    let tiles = ceil_div(outer_n, LANES);
    let parts = split_parts(ir, k, tiles, inner_n, ty, policy);
    let grid = if parts > 1 {
        tiles * parts as i64
    } else {
        tiles.min(policy.max_blocks as i64)
    };
    Some(ColumnShape {
        ty: ty as u32,
        parts,
        grid: grid as u32,
    })
}

/// Parts per tile: enough blocks to fill the device (`split_blocks`), each thread still folding
/// [`MIN_PER_THREAD`] positions, for kernels whose stage 0 is their one reduction and whose
/// later stages are row-level pointwise (only the tile's last block runs those).
fn split_parts(
    ir: &IrGraph,
    k: &Kernel,
    tiles: i64,
    inner_n: i64,
    ty: i64,
    policy: &CudaPolicy,
) -> u32 {
    if policy.split_blocks == 0 || !splittable(ir, k) {
        return 1;
    }
    let by_blocks = policy.split_blocks as i64 / tiles;
    let by_work = inner_n / (ty * MIN_PER_THREAD);
    let by_grid = policy.max_blocks as i64 / tiles;
    let parts = by_blocks.min(by_work).min(by_grid);
    if parts < 2 {
        1
    } else {
        parts as u32
    }
}

/// Whether the blocks of a tile may each fold a part of the reduced space: every reduction
/// (none an arg-reduction) reads nothing the kernel computes at the row level, so a part's
/// partial is a fold of its positions alone (a layer norm's weight and bias gradients, two
/// sums over the rows, are; a variance reading its mean is not); stages over the elements come
/// before the last reduction and read no reduced value either (each part runs its own
/// positions); after the last reduction only row-level pointwise stages, which the tile's last
/// block runs on the folded values.
fn splittable(ir: &IrGraph, k: &Kernel) -> bool {
    let nstages = k.nodes.iter().map(|kn| kn.stage + 1).max().unwrap_or(0);
    let members = |stage: usize| k.nodes.iter().filter(move |kn| kn.stage == stage);
    let is_reduction = |stage: usize| {
        members(stage).any(|kn| matches!(&ir.nodes[kn.node], IrNode::Reduction { .. }))
    };
    let Some(last) = (0..nstages).rev().find(|&st| is_reduction(st)) else {
        return false;
    };
    // Everything a stage computes at the row level: reductions and row-level pointwise.
    let row_values: Vec<BufId> = k
        .nodes
        .iter()
        .filter(|kn| {
            matches!(&ir.nodes[kn.node], IrNode::Reduction { .. }) || kn.level == Level::Row
        })
        .flat_map(|kn| ir.nodes[kn.node].outputs())
        .collect();
    let reads_row_value = |kn: &KernelNode| match &ir.nodes[kn.node] {
        IrNode::Reduction { body, .. } | IrNode::Pointwise { body, .. } => {
            body.loads().any(|(b, _)| row_values.contains(&b))
        }
        _ => true,
    };
    (0..nstages).all(|stage| {
        members(stage).all(|kn| match (&ir.nodes[kn.node], kn.level) {
            (IrNode::Reduction { op, .. }, _) => !op.is_arg() && !reads_row_value(kn),
            (IrNode::Pointwise { .. }, Level::Row) => stage > last,
            (IrNode::Pointwise { .. }, _) => stage < last && !reads_row_value(kn),
            _ => false,
        })
    })
}

/// The name of kernel `kname`'s partials of its reduction `ob`.
fn partials(kname: &str, ob: BufId) -> String {
    format!("tf_cws_{kname}_{ob}")
}

/// The name of kernel `kname`'s tile tickets.
fn tickets(kname: &str) -> String {
    format!("tf_ccnt_{kname}")
}

/// The module globals a split column kernel uses: `parts * rows` partials per reduction and
/// one ticket counter per tile (zero at load; the tile's last block resets it).
pub(super) fn emit_globals(out: &mut String, ir: &IrGraph, k: &Kernel, shape: ColumnShape) {
    if shape.parts < 2 {
        return;
    }
    let outer_n: i64 = cn(&k.outer).iter().product();
    for kn in &k.nodes {
        let IrNode::Reduction { out: ob, op, .. } = &ir.nodes[kn.node] else {
            continue;
        };
        let ad = acc_dtype(*op, ir.buffers[*ob].dtype);
        let ws = partials(&k.name, *ob);
        let _ = writeln!(
            out,
            "__device__ {} {ws}[{}];",
            c_type(ad),
            outer_n * shape.parts as i64
        );
    }
    let _ = writeln!(
        out,
        "__device__ unsigned int {}[{}];",
        tickets(&k.name),
        ceil_div(outer_n, LANES)
    );
}

/// A float sum accumulates in double, as the one-thread-per-row form does (a thread still
/// folds a long stretch of the column one value at a time).
fn acc_dtype(op: ReduceOp, d: DType) -> DType {
    if op == ReduceOp::Sum && is_f32_like(d) {
        DType::Float64
    } else {
        d
    }
}

/// The kernel body (inside the `__global__` function, after `ti` is declared).
pub(super) fn emit(out: &mut String, ir: &IrGraph, sched: &Schedule, k: &Kernel, s: ColumnShape) {
    let (no, nr) = (cn(&k.outer).len(), cn(&k.inner).len());
    let outer_n: i64 = cn(&k.outer).iter().product();
    let inner_n: i64 = cn(&k.inner).iter().product();
    let tiles = ceil_div(outer_n, LANES);
    let (ty, parts) = (s.ty as i64, s.parts as i64);
    let cx = Cx {
        ir,
        sched,
        k,
        dialect: CUDA,
    };
    let nest = LoopNest::identity(&[]);
    let _ = writeln!(
        out,
        "  const int tx = threadIdx.x & 31, ty = threadIdx.x >> 5;"
    );
    if parts > 1 {
        // The grid is exactly `tiles * parts` blocks: one pass of the loop.
        let _ = writeln!(out, "  const int part = blockIdx.x % {parts};");
        let _ = writeln!(
            out,
            "  for (ti tile = blockIdx.x / {parts}; tile < {tiles}; tile += gridDim.x / {parts}) {{"
        );
    } else {
        let _ = writeln!(
            out,
            "  for (ti tile = blockIdx.x; tile < {tiles}; tile += gridDim.x) {{"
        );
    }
    let mut indent = String::from("    ");
    let _ = writeln!(
        out,
        "{indent}const ti row = tile * {LANES} + tx < {outer_n} ? tile * {LANES} + tx : {};",
        outer_n - 1
    );
    unflatten(out, &indent, "row", &k.outer, 0);
    // A split block folds a contiguous range of the reduced space.
    let per_part = ceil_div(inner_n, parts);
    let (lo, hi) = if parts > 1 {
        super::split::part_range("(ti)part", per_part, &inner_n.to_string())
    } else {
        ("0".to_string(), inner_n.to_string())
    };
    let open_inner = |out: &mut String, indent: &mut String| {
        let _ = writeln!(out, "{indent}#pragma unroll 4");
        let _ = writeln!(
            out,
            "{indent}for (ti p = {lo} + ty; p < {hi}; p += {ty}) {{"
        );
        indent.push_str("  ");
        unflatten(out, indent, "p", &k.inner, no);
    };
    let close_inner = |out: &mut String, indent: &mut String| {
        indent.truncate(indent.len() - 2);
        let _ = writeln!(out, "{indent}}}");
    };
    let mut local: HashMap<BufId, String> = HashMap::new();
    let nstages = k.nodes.iter().map(|kn| kn.stage + 1).max().unwrap_or(0);
    let last_reduction = k
        .nodes
        .iter()
        .filter(|kn| matches!(&ir.nodes[kn.node], IrNode::Reduction { .. }))
        .map(|kn| kn.stage)
        .max();
    let last_reduction = last_reduction.unwrap_or(0);
    // A reduction's row value is stored and becomes a local once it is whole (in a split
    // kernel, after the tile's last block folded the parts).
    let finish =
        |out: &mut String, indent: &str, r: &Reduced, local: &mut HashMap<BufId, String>| {
            let d = ir.buffers[r.ob].dtype;
            let cell = if r.acc_dtype != d {
                format!("((float){})", r.acc)
            } else {
                r.acc.clone()
            };
            if sched.materialized[r.ob] {
                let _ = writeln!(
                    out,
                    "{indent}b{}[{}] = {};",
                    r.ob,
                    store_c(ir, r.ob, no, &nest),
                    store_conv(d, &cell)
                );
            }
            local.insert(r.ob, local_value(d, &cell));
        };
    let mut pending: Vec<Reduced> = Vec::new();
    for stage in 0..nstages {
        let members: Vec<&KernelNode> = k.nodes.iter().filter(|kn| kn.stage == stage).collect();
        match (&ir.nodes[members[0].node], members[0].level) {
            (
                IrNode::Reduction {
                    out: ob, op, body, ..
                },
                _,
            ) => {
                let d = ir.buffers[*ob].dtype;
                let ad = acc_dtype(*op, d);
                let wide = ad != d;
                let (t, acc) = (c_type(ad), format!("acc{ob}"));
                let _ = writeln!(out, "{indent}{t} {acc} = {};", init_c(*op, ad));
                open_inner(out, &mut indent);
                let prefix = format!("r{ob}");
                let v = emit_body_with(out, body, &prefix, &local, &indent, &nest, CUDA);
                let v = if wide { format!("(double){v}") } else { v };
                let _ = writeln!(out, "{indent}{acc} = {};", combine_c(*op, &acc, &v, ad));
                close_inner(out, &mut indent);
                // The row's `ty` partials, folded in thread order by every thread of the row.
                let sm = format!("tf_col{ob}");
                let _ = writeln!(out, "{indent}__shared__ {t} {sm}[{ty}][{LANES}];");
                let _ = writeln!(out, "{indent}{sm}[ty][tx] = {acc};");
                let _ = writeln!(out, "{indent}__syncthreads();");
                let _ = writeln!(out, "{indent}{acc} = {sm}[0][tx];");
                let fold = combine_c(*op, &acc, &format!("{sm}[q][tx]"), ad);
                let _ = writeln!(
                    out,
                    "{indent}for (int q = 1; q < {ty}; q++) {acc} = {fold};"
                );
                // The slots are written again by the next stage or tile.
                let _ = writeln!(out, "{indent}__syncthreads();");
                let reduced = Reduced {
                    ob: *ob,
                    op: *op,
                    acc_dtype: ad,
                    acc,
                };
                if parts > 1 {
                    // Each reduction publishes its part; after the last one, one ticket lets
                    // the tile's last block alone fold them all and run the row stages.
                    publish(out, &indent, &k.name, &reduced, outer_n);
                    pending.push(reduced);
                    if stage == last_reduction {
                        last_block_only(out, &indent, &k.name, s);
                        for r in pending.drain(..) {
                            fold_parts(out, &indent, &k.name, &r, s, outer_n);
                            finish(out, &indent, &r, &mut local);
                        }
                    }
                } else {
                    finish(out, &indent, &reduced, &mut local);
                }
            }
            (IrNode::Pointwise { .. }, Level::Row) => {
                let no_scratch = HashMap::new();
                emit_stage_nodes(out, cx, stage, &mut local, &indent, no, &nest, &no_scratch);
            }
            _ => {
                open_inner(out, &mut indent);
                let mut stage_local = local.clone();
                let (l, no_scratch) = (&mut stage_local, HashMap::new());
                emit_stage_nodes(out, cx, stage, l, &indent, no + nr, &nest, &no_scratch);
                close_inner(out, &mut indent);
            }
        }
    }
    let _ = writeln!(out, "  }}");
}

/// A reduction of a column kernel after its block combine: every thread holds its row's value
/// (of its part, in a split kernel) in `acc`, of type `acc_dtype`.
struct Reduced {
    ob: BufId,
    op: ReduceOp,
    acc_dtype: DType,
    acc: String,
}

/// Publishes part `part`'s value of reduction `r` for every real row of the tile.
fn publish(out: &mut String, indent: &str, kname: &str, r: &Reduced, outer_n: i64) {
    let (ws, acc) = (partials(kname, r.ob), &r.acc);
    // Lanes past the end hold the last row again: only real rows publish.
    let _ = writeln!(
        out,
        "{indent}if (ty == 0 && tile * {LANES} + tx < {outer_n}) {ws}[(ti)part * {outer_n} + row] = {acc};"
    );
}

/// After every reduction published its part: only the tile's last block to take a ticket goes
/// on (the others return), and it resets the tile's counter for the next launch.
fn last_block_only(out: &mut String, indent: &str, kname: &str, s: ColumnShape) {
    let cnt = tickets(kname);
    // Every partial is visible device-wide before the ticket that announces them.
    let _ = writeln!(out, "{indent}__threadfence();");
    let _ = writeln!(out, "{indent}__syncthreads();");
    let _ = writeln!(out, "{indent}__shared__ bool tf_clast;");
    let _ = writeln!(
        out,
        "{indent}if (threadIdx.x == 0) tf_clast = atomicAdd(&{cnt}[tile], 1u) == {}u;",
        s.parts - 1
    );
    let _ = writeln!(out, "{indent}__syncthreads();");
    let _ = writeln!(out, "{indent}if (!tf_clast) return;");
    let _ = writeln!(out, "{indent}__threadfence();");
    let _ = writeln!(out, "{indent}if (threadIdx.x == 0) {cnt}[tile] = 0u;");
}

/// In the tile's last block: `acc` of reduction `r` becomes the row's value, its parts folded in
/// part order (the same order at every launch, whichever block came last).
fn fold_parts(
    out: &mut String,
    indent: &str,
    kname: &str,
    r: &Reduced,
    s: ColumnShape,
    outer_n: i64,
) {
    let (ws, acc, d) = (partials(kname, r.ob), &r.acc, r.acc_dtype);
    let t = c_type(d);
    // Volatile: the other blocks' partials are read from L2, never a stale L1 line.
    let fold = combine_c(
        r.op,
        acc,
        &format!("((volatile {t} *){ws})[(ti)q * {outer_n} + row]"),
        d,
    );
    let _ = writeln!(out, "{indent}{acc} = {};", init_c(r.op, d));
    let _ = writeln!(
        out,
        "{indent}for (int q = 0; q < {}; q++) {acc} = {fold};",
        s.parts
    );
}
