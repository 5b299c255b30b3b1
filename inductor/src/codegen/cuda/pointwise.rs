//! Pointwise kernels: one thread per chunk of consecutive elements, in a grid-stride loop.

use std::collections::HashMap;
use std::fmt::Write;

use super::super::c::syntax::storage_type;
use super::super::c::{emit_stage_nodes, Cx};
use super::super::plan::LoopNest;
use crate::ir::{BufId, IrGraph};
use crate::schedule::{Kernel, Schedule};
use crate::size::Size;

use super::passes::{cache_row_loads, chunk_stores, replace_load, CHUNK_REGS};
use super::{unflatten, INDEX_ERROR};

/// Splits the flat chunk start `flat` over `sizes` like [`unflatten`], the innermost variable
/// then advanced by the chunk's lane `j` (`sizes.last()` is a multiple of the chunk).
pub(super) fn unflatten_chunk(
    out: &mut String,
    indent: &str,
    flat: &str,
    sizes: &[Size],
    first: usize,
) {
    let n = sizes.len();
    let last = first + n - 1;
    let mut rest = String::new();
    unflatten(&mut rest, indent, flat, sizes, first);
    // Rename the innermost variable's definition to its chunk base.
    let from = format!("const ti x{last} = ");
    let to = format!("const ti xc{last} = ");
    out.push_str(&rest.replacen(&from, &to, 1));
}

/// `unroll` chunks per thread and grid-stride step, `blockDim.x` chunks apart, each of `vector`
/// consecutive elements: a warp's accesses stay coalesced and, aligned, are 128 bits wide.
pub(super) fn emit_pointwise(
    out: &mut String,
    ir: &IrGraph,
    sched: &Schedule,
    k: &Kernel,
    nest: &LoopNest,
    unroll: u32,
    vector: u32,
) {
    let n: Size = nest.sizes.iter().product();
    let v = vector;
    let _ = writeln!(
        out,
        "  for (ti i0 = ((ti)blockIdx.x * (ti)blockDim.x * {unroll} + (ti)threadIdx.x) * {v}; i0 < {n}; i0 += (ti)gridDim.x * (ti)blockDim.x * {unroll} * {v}) {{"
    );
    let _ = writeln!(out, "  #pragma unroll");
    let _ = writeln!(out, "  for (int u = 0; u < {unroll}; u++) {{");
    let _ = writeln!(out, "    const ti ic = i0 + (ti)u * (ti)blockDim.x * {v};");
    let _ = writeln!(out, "    if (ic >= {n}) break;");
    let indent = "    ";
    let cx = Cx {
        ir,
        sched,
        k,
        index_error: INDEX_ERROR,
    };
    let mut local = HashMap::new();
    let no = k.outer.len();
    if v > 1 {
        let last = nest.sizes.len() - 1;
        unflatten_chunk(out, indent, "ic", &nest.sizes, 0);
        let mut body = String::new();
        emit_stage_nodes(
            &mut body,
            cx,
            0,
            &mut local,
            indent,
            no,
            nest,
            &HashMap::new(),
        );
        // Loads first, then the arithmetic, then the stores, each over the chunk's lanes: a
        // math call's slow path (`sincosf`'s wide argument reduction) splits the body into
        // several blocks, and NVVM merges accesses only within one.
        let vars: Vec<String> = (0..nest.sizes.len()).map(|i| format!("x{i}")).collect();
        let dtype = |b: BufId| (b.index() < ir.buffers.len()).then(|| ir.buffers[b].dtype);
        let loads = cache_row_loads(&body, &vars, 1, (CHUNK_REGS / v) as usize, dtype);
        let stores = chunk_stores(&body, &vars);
        let lanes = |out: &mut String| {
            let _ = writeln!(out, "    #pragma unroll");
            let _ = writeln!(out, "    for (int j = 0; j < {v}; j++) {{");
            let _ = writeln!(out, "    const ti x{last} = xc{last} + (ti)j;");
        };
        if let Some(stores) = stores.filter(|s| {
            s.iter().all(|(b, _, _)| loads.iter().all(|(l, _)| l != b)) && !s.is_empty()
        }) {
            for (i, (b, _)) in loads.iter().enumerate() {
                let t = storage_type(ir.buffers[*b].dtype);
                let _ = writeln!(out, "    {t} cr{i}[{v}];");
            }
            for (i, (b, _, _)) in stores.iter().enumerate() {
                let t = storage_type(ir.buffers[*b].dtype);
                let _ = writeln!(out, "    {t} cs{i}[{v}];");
            }
            lanes(out);
            for (i, (b, e)) in loads.iter().enumerate() {
                let _ = writeln!(out, "    cr{i}[j] = b{b}[{e}];");
            }
            let _ = writeln!(out, "    }}");
            for (i, (b, e)) in loads.iter().enumerate() {
                body = replace_load(&body, *b, e, &format!("cr{i}[j]"));
            }
            let mut staged = String::with_capacity(body.len());
            for l in body.lines() {
                let t = l.trim_start();
                match stores.iter().position(|(_, _, s)| s == t) {
                    Some(i) => {
                        let value = t.split_once(" = ").map(|x| x.1).unwrap_or_default();
                        let pad = &l[..l.len() - t.len()];
                        let _ = writeln!(staged, "{pad}cs{i}[j] = {value}");
                    }
                    None => {
                        staged.push_str(l);
                        staged.push('\n');
                    }
                }
            }
            body = staged;
            lanes(out);
            out.push_str(&body);
            let _ = writeln!(out, "    }}");
            lanes(out);
            for (i, (b, e, _)) in stores.iter().enumerate() {
                let _ = writeln!(out, "    b{b}[{e}] = cs{i}[j];");
            }
            let _ = writeln!(out, "    }}");
        } else {
            lanes(out);
            out.push_str(&body);
            let _ = writeln!(out, "    }}");
        }
    } else {
        let _ = writeln!(out, "    const ti i = ic;");
        unflatten(out, indent, "i", &nest.sizes, 0);
        emit_stage_nodes(out, cx, 0, &mut local, indent, no, nest, &HashMap::new());
    }
    let _ = writeln!(out, "  }}");
    let _ = writeln!(out, "  }}");
}
