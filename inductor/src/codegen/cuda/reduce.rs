//! Reductions across a block's threads: the combine that leaves every thread with the row's
//! value, in a fixed order (deterministic, no atomics).

use std::fmt::Write;

use fx::DType;

use super::super::c::syntax::{c_type, combine_c};
use crate::ir::{BufId, ReduceOp};

/// Whether `v` at position `i` replaces the best `b` at `bi` in an argmax/argmin: strictly
/// better, or the first NaN; with `ties`, an equal value (or NaN after NaN) at a smaller
/// position too (merging partial scans of interleaved positions).
pub(super) fn arg_takes(
    op: ReduceOp,
    d: DType,
    v: &str,
    i: &str,
    b: &str,
    bi: &str,
    ties: bool,
) -> String {
    let cmp = if op == ReduceOp::ArgMax { ">" } else { "<" };
    let float = d.is_floating_point();
    let mut c = format!("({v} {cmp} {b})");
    if float {
        c = format!("{c} | (({v} != {v}) & ({b} == {b}))");
    }
    if ties {
        c = format!("{c} | (({v} == {b}) & ({i} < {bi}))");
        if float {
            c = format!("{c} | (({v} != {v}) & ({b} != {b}) & ({i} < {bi}))");
        }
    }
    format!("({c})")
}

/// Combines the block's partial results of a reduction into every thread's `acc` (and, for
/// arg reductions, `pos`): a butterfly of warp shuffles (every lane ends with its warp's value),
/// then each thread folds the warps' values from shared memory in warp order.
#[allow(clippy::too_many_arguments)]
pub(super) fn block_reduce(
    out: &mut String,
    indent: &str,
    ob: BufId,
    op: ReduceOp,
    d: DType,
    acc: &str,
    pos: Option<&str>,
    block: u32,
) {
    let t = c_type(d);
    let warps = block.div_ceil(32);
    let fold = |out: &mut String, ind: &str, v: &str, vi: &str| match pos {
        Some(pi) => {
            let tk = arg_takes(op, d, v, vi, acc, pi, true);
            let _ = writeln!(out, "{ind}if ({tk}) {{ {acc} = {v}; {pi} = {vi}; }}");
        }
        None => {
            let _ = writeln!(out, "{ind}{acc} = {};", combine_c(op, acc, v, d));
        }
    };
    let _ = writeln!(out, "{indent}for (int o = 16; o > 0; o >>= 1) {{");
    let inner = format!("{indent}  ");
    let _ = writeln!(out, "{inner}const {t} ov = tf_shfl({acc}, o);");
    if let Some(pi) = pos {
        let _ = writeln!(out, "{inner}const int64_t oi = tf_shfl({pi}, o);");
    }
    fold(out, &inner, "ov", "oi");
    let _ = writeln!(out, "{indent}}}");
    if warps == 1 {
        return;
    }
    let _ = writeln!(out, "{indent}__shared__ {t} sh{ob}[{warps}];");
    if let Some(pi) = pos {
        let _ = writeln!(out, "{indent}__shared__ int64_t shi{ob}[{warps}];");
        let _ = writeln!(
            out,
            "{indent}if ((tid & 31) == 0) {{ sh{ob}[tid >> 5] = {acc}; shi{ob}[tid >> 5] = {pi}; }}"
        );
    } else {
        let _ = writeln!(
            out,
            "{indent}if ((tid & 31) == 0) sh{ob}[tid >> 5] = {acc};"
        );
    }
    let _ = writeln!(out, "{indent}__syncthreads();");
    let _ = writeln!(out, "{indent}{acc} = sh{ob}[0];");
    if let Some(pi) = pos {
        let _ = writeln!(out, "{indent}{pi} = shi{ob}[0];");
    }
    let _ = writeln!(out, "{indent}for (int w = 1; w < {warps}; w++) {{");
    let vi = if pos.is_some() {
        format!("shi{ob}[w]")
    } else {
        String::new()
    };
    fold(out, &inner, &format!("sh{ob}[w]"), &vi);
    let _ = writeln!(out, "{indent}}}");
}
