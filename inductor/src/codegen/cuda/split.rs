//! Split reductions: a row kernel with few, long rows (a whole-tensor sum, a mean over a
//! leading dim of 3) would run one block per row on one SM each. Instead each row is cut into
//! `parts` contiguous ranges of chunks, one block each; a block folds its range as a normal row
//! kernel does, writes its partial into a module-global workspace and takes a ticket from the
//! row's counter (an integer atomic). The block that takes the last ticket reads the row's
//! partials in part order, folds them with the same block combine, resets the counter and runs
//! the rest of the row's stages. The result depends only on the shapes, never on which block
//! finished last: deterministic, and no float atomics.
//!
//! Only kernels whose first stage is their one reduction and whose later stages are row-level
//! pointwise (a mean's division, a norm's square root) split: a later stage over the row's
//! elements would need the reduced value in every block.
//!
//! The workspace and counters are `__device__` globals of the module, so one loaded module must
//! not run the same split kernel on two streams at once (the runner launches a graph's kernels
//! on one stream in order; two threads running one compiled graph concurrently on different
//! streams would share them).

use std::fmt::Write;

use fx::DType;

use super::super::c::syntax::{c_type, combine_c, init_c};
use super::cn;
use super::reduce::block_reduce;
use crate::ir::{BufId, IrGraph, IrNode, ReduceOp};
use crate::schedule::{Kernel, Level};
use crate::target::CudaPolicy;

/// Fewest chunks each thread of a split block folds: fewer, and the partials' write and the
/// last block's fold cost more than the split saves.
const MIN_CHUNKS_PER_PART: i64 = 8;

/// The range `[lo, hi)` of the items part `part` folds (both C expressions), when `end` items
/// are cut into parts of `per_part` (rounded up, so `parts * per_part` may pass `end` by up to a
/// part): a part stops at the end, and a part past it is empty (`lo >= hi`), or the last parts
/// read the next row's elements (found on the H100: 5 rows of 100003, 1024 parts of 98).
pub(super) fn part_range(part: &str, per_part: i64, end: &str) -> (String, String) {
    let next = format!("{part} * {per_part} + {per_part}");
    (
        format!("{part} * {per_part}"),
        format!("({next} < {end} ? {next} : {end})"),
    )
}

/// How many parts each row of row kernel `k` is split into (1: not split). `chunks`: the
/// chunks each thread would visit unsplit (`ceil(inner_n / (block * vector))`).
pub(super) fn split_parts(
    ir: &IrGraph,
    k: &Kernel,
    has_scratch: bool,
    chunks: i64,
    policy: &CudaPolicy,
) -> u32 {
    let outer_n: i64 = cn(&k.outer).iter().product();
    if policy.split_blocks == 0 || has_scratch || outer_n <= 0 {
        return 1;
    }
    if !reduction_then_row_stages(ir, k) {
        return 1;
    }
    let by_blocks = policy.split_blocks as i64 / outer_n;
    let by_work = chunks / MIN_CHUNKS_PER_PART;
    let by_grid = policy.max_blocks as i64 / outer_n;
    let parts = by_blocks.min(by_work).min(by_grid);
    if parts < 2 {
        1
    } else {
        parts as u32
    }
}

/// Whether kernel `k`'s stage 0 is its one (non-arg) reduction and every later stage is
/// row-level pointwise: only then can blocks fold parts of a row and the last one alone run
/// the rest (a later stage over the row's elements would need the reduced value in every block).
pub(super) fn reduction_then_row_stages(ir: &IrGraph, k: &Kernel) -> bool {
    let first: Vec<_> = k.nodes.iter().filter(|kn| kn.stage == 0).collect();
    let reduction_first = first.len() == 1
        && matches!(&ir.nodes[first[0].node], IrNode::Reduction { op, .. } if !op.is_arg());
    reduction_first
        && k.nodes.iter().filter(|kn| kn.stage > 0).all(|kn| {
            kn.level == Level::Row && matches!(&ir.nodes[kn.node], IrNode::Pointwise { .. })
        })
}

/// The names of kernel `kname`'s workspace (partials) and ticket counters.
fn names(kname: &str) -> (String, String) {
    (format!("tf_ws_{kname}"), format!("tf_cnt_{kname}"))
}

/// The module globals a split kernel uses: `rows * parts` partials of the accumulator's type
/// and one counter per row (zero at load; the last block of a row resets its counter).
pub(super) fn emit_globals(out: &mut String, ir: &IrGraph, k: &Kernel, parts: u32) {
    let outer_n: i64 = cn(&k.outer).iter().product();
    let Some(d) = reduction_dtype(ir, k) else {
        return;
    };
    let (ws, cnt) = names(&k.name);
    let n = outer_n * parts as i64;
    let _ = writeln!(out, "__device__ {} {ws}[{n}];", c_type(d));
    let _ = writeln!(out, "__device__ unsigned int {cnt}[{outer_n}];");
}

/// The dtype of the split kernel's accumulator (its first stage's reduction output).
fn reduction_dtype(ir: &IrGraph, k: &Kernel) -> Option<DType> {
    k.nodes.iter().find(|kn| kn.stage == 0).and_then(|kn| {
        if let IrNode::Reduction { out, .. } = &ir.nodes[kn.node] {
            Some(ir.buffers[*out].dtype)
        } else {
            None
        }
    })
}

/// After the block combine of part `part` of row `row` (every thread holds the part's value in
/// `acc`): publish the partial, and let only the row's last block go on, with `acc` the row's
/// value folded from the partials in part order.
#[allow(clippy::too_many_arguments)]
pub(super) fn emit_combine_parts(
    out: &mut String,
    indent: &str,
    kname: &str,
    ob: BufId,
    op: ReduceOp,
    d: DType,
    acc: &str,
    parts: u32,
    block: u32,
) {
    let (ws, cnt) = names(kname);
    let t = c_type(d);
    let _ = writeln!(out, "{indent}__shared__ bool tf_last{ob};");
    let _ = writeln!(out, "{indent}if (tid == 0) {{");
    let _ = writeln!(out, "{indent}  {ws}[row * {parts} + part] = {acc};");
    // The partial is visible device-wide before the ticket that announces it.
    let _ = writeln!(out, "{indent}  __threadfence();");
    let _ = writeln!(
        out,
        "{indent}  tf_last{ob} = atomicAdd(&{cnt}[row], 1u) == {}u;",
        parts - 1
    );
    let _ = writeln!(out, "{indent}}}");
    let _ = writeln!(out, "{indent}__syncthreads();");
    let _ = writeln!(out, "{indent}if (!tf_last{ob}) return;");
    let _ = writeln!(out, "{indent}__threadfence();");
    let _ = writeln!(out, "{indent}{acc} = {};", init_c(op, d));
    // Volatile: the other blocks' partials are read from L2, never a stale L1 line.
    let _ = writeln!(
        out,
        "{indent}for (int q = tid; q < {parts}; q += {block}) {acc} = {};",
        combine_c(
            op,
            acc,
            &format!("((volatile {t} *){ws})[row * {parts} + q]"),
            d
        )
    );
    // A scope of its own: the combine declares its shared slots again.
    let _ = writeln!(out, "{indent}{{");
    block_reduce(out, &format!("{indent}  "), ob, op, d, acc, None, block);
    let _ = writeln!(out, "{indent}}}");
    let _ = writeln!(out, "{indent}if (tid == 0) {cnt}[row] = 0u;");
}
