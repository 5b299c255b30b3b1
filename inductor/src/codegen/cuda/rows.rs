//! Row kernels: one block (or a warp, or `parts` blocks) per row, stages over the row's inner
//! space with reductions combined across the block; and one thread per row for short blocked
//! reductions.

use std::collections::HashMap;
use std::fmt::Write;

use fx::DType;

use super::super::c::syntax::{c_type, combine_c, init_c, is_f32_like, storage_type, store_conv};
use super::super::c::{emit_body_with, emit_stage_nodes, local_value, store_c, Cx};
use super::super::plan::LoopNest;
use crate::ir::{BufId, IrGraph, IrNode, ReduceOp};
use crate::schedule::{Kernel, KernelNode, Level, Schedule};
use crate::size::Size;

use super::passes::{cache_row_loads, replace_load, ROW_CACHE_REGS};
use super::pointwise::unflatten_chunk;
use super::reduce::{arg_takes, block_reduce};
use super::{ceil_div, split, unflatten, CUDA};

/// How a row kernel's blocks cover its rows.
#[derive(Clone, Copy)]
pub(super) struct RowShape {
    /// Threads per row.
    pub(super) block: u32,
    /// Consecutive elements per chunk.
    pub(super) vector: u32,
    /// Whether row elements read in several stages are loaded once.
    pub(super) cache: bool,
    /// Blocks per row (a split reduction, see [`split`]); 1: one block per row.
    pub(super) parts: u32,
    /// Rows per block, a warp each (`block` is then 32); 1: one row per block.
    pub(super) rows: u32,
}

/// One block per row (or `parts` per row, see [`split`]); stages over the row's inner space,
/// reductions combined across the block.
/// Each thread visits the same chunks of `vector` consecutive positions in every stage, so
/// row-local values stay in its registers; with `cache`, row elements read in several stages
/// are loaded once, at the row's start (see [`cache_row_loads`]).
pub(super) fn emit_rows(
    out: &mut String,
    ir: &IrGraph,
    sched: &Schedule,
    k: &Kernel,
    scratch: &[BufId],
    shape: RowShape,
) {
    let RowShape {
        block,
        vector,
        cache,
        parts,
        rows,
    } = shape;
    let (no, nr) = (k.outer.len(), k.inner.len());
    let outer_n: Size = k.outer.iter().product();
    let inner_s: Size = k.inner.iter().product();
    let cx = Cx {
        ir,
        sched,
        k,
        dialect: CUDA,
    };
    let nest = LoopNest::identity(&[]);
    let v = vector as i64;
    // A symbolic row's chunk count is computed by the kernel; such a row has no scratch and no
    // cached loads (register arrays need a constant length), so `slots` is not used for it.
    let (chunks, chunks_c) = match inner_s.as_const() {
        Some(inner_n) => {
            let c = ceil_div(inner_n, block as i64 * v).max(1);
            (c.to_string(), c)
        }
        None => {
            let per = block as i64 * v;
            (format!("(({inner_s} + {}) / {per})", per - 1), i64::MAX)
        }
    };
    let slots = chunks_c.saturating_mul(v);
    let inner_n = inner_s;
    if rows > 1 {
        // Warp `w` of the block runs rows `blockIdx.x * rows + w`, then a grid's worth on.
        let _ = writeln!(out, "  const int tid = threadIdx.x & 31;");
        let _ = writeln!(
            out,
            "  for (ti row = (ti)blockIdx.x * {rows} + (ti)(threadIdx.x >> 5); row < {outer_n}; row += (ti)gridDim.x * {rows}) {{"
        );
    } else if parts > 1 {
        let _ = writeln!(out, "  const int tid = threadIdx.x;");
        // The grid is exactly `outer_n * parts` blocks: one pass of the loop.
        let _ = writeln!(out, "  const int part = blockIdx.x % {parts};");
        let _ = writeln!(
            out,
            "  for (ti row = blockIdx.x / {parts}; row < {outer_n}; row += gridDim.x / {parts}) {{"
        );
    } else {
        let _ = writeln!(out, "  const int tid = threadIdx.x;");
        let _ = writeln!(
            out,
            "  for (ti row = blockIdx.x; row < {outer_n}; row += gridDim.x) {{"
        );
    }
    let mut indent = String::from("    ");
    unflatten(out, &indent, "row", &k.outer, 0);
    for &b in scratch {
        let _ = writeln!(
            out,
            "{indent}{} sb{b}[{slots}];",
            c_type(ir.buffers[b].dtype)
        );
    }
    let scratch_at: HashMap<BufId, String> =
        scratch.iter().map(|&b| (b, format!("sb{b}[it]"))).collect();
    // Every thread visits chunks `tid + c * block` of the row (positions `v` times that, plus
    // the lane `j`), the same in every stage: slot `it` is chunk `c`, lane `j`.
    // Register arrays (scratch, cached loads) need every slot index constant: the chunk loop
    // unrolls fully when they can exist; a long row's loop (a whole-tensor sum's millions of
    // chunks) unrolls a few chunks deep instead of into megabytes of code.
    let unroll = if (slots <= ROW_CACHE_REGS || !scratch.is_empty()) && parts == 1 {
        String::new()
    } else {
        " 4".to_string()
    };
    // A split row's block visits its part's contiguous range of chunks (constant rows only).
    let per_part = ceil_div(chunks_c, parts as i64);
    let (c_lo, c_hi) = if parts > 1 {
        split::part_range("part", per_part, &chunks)
    } else {
        ("0".to_string(), chunks.clone())
    };
    let open_inner = |out: &mut String, indent: &mut String| {
        let _ = writeln!(out, "{indent}#pragma unroll{unroll}");
        let _ = writeln!(out, "{indent}for (int c = {c_lo}; c < {c_hi}; c++) {{");
        let _ = writeln!(
            out,
            "{indent}  const ti pc = ((ti)tid + (ti)c * {block}) * {v};"
        );
        let _ = writeln!(out, "{indent}  if (pc < {inner_n}) {{");
        if v > 1 {
            let inner = format!("{indent}    ");
            unflatten_chunk(out, &inner, "pc", &k.inner, no);
            let last = no + nr - 1;
            let _ = writeln!(out, "{indent}  #pragma unroll");
            let _ = writeln!(out, "{indent}  for (int j = 0; j < {v}; j++) {{");
            let _ = writeln!(out, "{indent}    const int it = c * {v} + j;");
            let _ = writeln!(out, "{indent}    const ti p = pc + (ti)j; (void)p;");
            let _ = writeln!(out, "{indent}    const ti x{last} = xc{last} + (ti)j;");
        } else {
            let _ = writeln!(out, "{indent}  {{");
            let _ = writeln!(out, "{indent}    const int it = c;");
            let _ = writeln!(out, "{indent}    const ti p = pc; (void)p;");
            unflatten(out, &format!("{indent}    "), "pc", &k.inner, no);
        }
        indent.push_str("    ");
    };
    let close_inner = |out: &mut String, indent: &mut String| {
        indent.truncate(indent.len() - 4);
        let _ = writeln!(out, "{indent}  }}");
        let _ = writeln!(out, "{indent}  }}");
        let _ = writeln!(out, "{indent}}}");
    };
    // The row's stages go to `body` first, so the loads worth keeping can be found in them.
    let mut body = String::new();
    let mut local: HashMap<BufId, String> = HashMap::new();
    let nstages = k.nodes.iter().map(|kn| kn.stage + 1).max().unwrap_or(0);
    for stage in 0..nstages {
        let out = &mut body;
        let members: Vec<&KernelNode> = k.nodes.iter().filter(|kn| kn.stage == stage).collect();
        match (&ir.nodes[members[0].node], members[0].level) {
            (
                IrNode::Reduction {
                    out: ob, op, body, ..
                },
                _,
            ) => {
                let vd = body.dtypes[body.root];
                let d = ir.buffers[*ob].dtype;
                let acc = format!("acc{ob}");
                let pos = if op.is_arg() {
                    Some(format!("acci{ob}"))
                } else {
                    None
                };
                let at = if op.is_arg() { vd } else { d };
                let base_op = match op {
                    ReduceOp::ArgMax => ReduceOp::Max,
                    ReduceOp::ArgMin => ReduceOp::Min,
                    o => *o,
                };
                let _ = writeln!(
                    out,
                    "{indent}{} {acc} = {};",
                    c_type(at),
                    init_c(base_op, at)
                );
                if let Some(pi) = &pos {
                    let _ = writeln!(out, "{indent}int64_t {pi} = 0;");
                }
                open_inner(out, &mut indent);
                let v = emit_body_with(out, body, &format!("r{ob}"), &local, &indent, &nest, CUDA);
                match &pos {
                    // A thread's positions rise, so the first best one wins without ties.
                    Some(pi) => {
                        let tk = arg_takes(*op, at, &v, "", &acc, "", false);
                        let _ = writeln!(out, "{indent}if ({tk}) {{ {acc} = {v}; {pi} = p; }}");
                    }
                    None => {
                        let _ = writeln!(out, "{indent}{acc} = {};", combine_c(*op, &acc, &v, at));
                    }
                }
                close_inner(out, &mut indent);
                block_reduce(out, &indent, *ob, *op, at, &acc, pos.as_deref(), block);
                if parts > 1 {
                    let kname = &k.name;
                    split::emit_combine_parts(
                        out, &indent, kname, *ob, *op, at, &acc, parts, block,
                    );
                }
                let result = pos.clone().unwrap_or_else(|| acc.clone());
                if sched.materialized[*ob] {
                    let _ = writeln!(
                        out,
                        "{indent}if (tid == 0) b{ob}[{}] = {};",
                        store_c(ir, *ob, no, &nest),
                        store_conv(d, &result)
                    );
                }
                local.insert(*ob, local_value(d, &result));
            }
            (IrNode::Pointwise { .. }, Level::Row) => {
                // Every thread computes the row's values (they read reductions every thread
                // holds); the stores write one value to one address.
                emit_stage_nodes(out, cx, stage, &mut local, &indent, no, &nest, &scratch_at);
            }
            _ => {
                open_inner(out, &mut indent);
                let mut stage_local = local.clone();
                let l = &mut stage_local;
                emit_stage_nodes(out, cx, stage, l, &indent, no + nr, &nest, &scratch_at);
                close_inner(out, &mut indent);
                for kn in &members {
                    if let IrNode::Pointwise { out: ob, .. } = &ir.nodes[kn.node] {
                        if let Some(at) = scratch_at.get(ob) {
                            local.insert(*ob, at.clone());
                        }
                    }
                }
            }
        }
    }
    if cache {
        let inner_vars: Vec<String> = (no..no + nr).map(|i| format!("x{i}")).collect();
        let budget = (ROW_CACHE_REGS / slots).max(0) as usize;
        let loads = cache_row_loads(&body, &inner_vars, 2, budget, |b| {
            (b.index() < ir.buffers.len()).then(|| ir.buffers[b].dtype)
        });
        for (i, (b, _)) in loads.iter().enumerate() {
            let t = storage_type(ir.buffers[*b].dtype);
            let _ = writeln!(out, "{indent}{t} cr{i}[{slots}];");
        }
        if !loads.is_empty() {
            open_inner(out, &mut indent);
            for (i, (b, expr)) in loads.iter().enumerate() {
                let _ = writeln!(out, "{indent}cr{i}[it] = b{b}[{expr}];");
            }
            close_inner(out, &mut indent);
            for (i, (b, expr)) in loads.iter().enumerate() {
                body = replace_load(&body, *b, expr, &format!("cr{i}[it]"));
            }
        }
    }
    out.push_str(&body);
    if rows > 1 {
        // A warp's reductions are shuffles only (no shared slots); the warps of a block run
        // different numbers of rows, so no block barrier.
        let _ = writeln!(out, "{indent}__syncwarp();");
    } else {
        // The next row's reductions reuse the shared slots this row's threads may still read.
        let _ = writeln!(out, "{indent}__syncthreads();");
    }
    let _ = writeln!(out, "  }}");
}

/// One thread per row (a [`KernelShape::Blocked`] plan): every stage runs sequentially over
/// the row's inner space in that thread. A float sum accumulates in double, as the C printer's
/// blocked kernels do, since it adds a long column one element at a time.
pub(super) fn emit_thread_rows(out: &mut String, ir: &IrGraph, sched: &Schedule, k: &Kernel) {
    let (no, nr) = (k.outer.len(), k.inner.len());
    let outer_n: Size = k.outer.iter().product();
    let inner_n: Size = k.inner.iter().product();
    let cx = Cx {
        ir,
        sched,
        k,
        dialect: CUDA,
    };
    let nest = LoopNest::identity(&[]);
    let _ = writeln!(
        out,
        "  for (ti row = (ti)blockIdx.x * (ti)blockDim.x + (ti)threadIdx.x; row < {outer_n}; row += (ti)gridDim.x * (ti)blockDim.x) {{"
    );
    let mut indent = String::from("    ");
    unflatten(out, &indent, "row", &k.outer, 0);
    let open_inner = |out: &mut String, indent: &mut String| {
        let _ = writeln!(out, "{indent}for (ti p = 0; p < {inner_n}; p++) {{");
        indent.push_str("  ");
        unflatten(out, indent, "p", &k.inner, no);
    };
    let close_inner = |out: &mut String, indent: &mut String| {
        indent.truncate(indent.len() - 2);
        let _ = writeln!(out, "{indent}}}");
    };
    let mut local: HashMap<BufId, String> = HashMap::new();
    let nstages = k.nodes.iter().map(|kn| kn.stage + 1).max().unwrap_or(0);
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
                let wide = *op == ReduceOp::Sum && is_f32_like(d);
                let ad = if wide { DType::Float64 } else { d };
                let acc = format!("acc{ob}");
                let _ = writeln!(out, "{indent}{} {acc} = {};", c_type(ad), init_c(*op, ad));
                open_inner(out, &mut indent);
                let prefix = format!("r{ob}");
                let v = emit_body_with(out, body, &prefix, &local, &indent, &nest, CUDA);
                let v = if wide { format!("(double){v}") } else { v };
                let _ = writeln!(out, "{indent}{acc} = {};", combine_c(*op, &acc, &v, ad));
                close_inner(out, &mut indent);
                let cell = if wide { format!("((float){acc})") } else { acc };
                if sched.materialized[*ob] {
                    let _ = writeln!(
                        out,
                        "{indent}b{ob}[{}] = {};",
                        store_c(ir, *ob, no, &nest),
                        store_conv(d, &cell)
                    );
                }
                local.insert(*ob, local_value(d, &cell));
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
