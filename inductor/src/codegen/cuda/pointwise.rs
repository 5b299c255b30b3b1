//! Pointwise kernels: one thread per chunk of consecutive elements, in a grid-stride loop.

use std::collections::HashMap;
use std::fmt::Write;

use super::super::c::syntax::storage_type;
use super::super::c::{emit_stage_nodes, Cx};
use super::super::plan::LoopNest;
use crate::ir::{BufId, IrGraph};
use crate::schedule::{Kernel, Schedule};
use crate::size::Size;

use super::passes::{chunk_loads, chunk_stores, replace_load};
use super::{unflatten, CUDA};

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

/// How a pointwise kernel's threads walk its elements.
pub(super) struct Chunks {
    /// Chunks per thread and grid-stride step, `blockDim.x` chunks apart.
    pub unroll: u32,
    /// Consecutive elements per chunk.
    pub vector: u32,
    /// Registers the chunk's loads read ahead may take (`CudaPolicy::chunk_regs`).
    pub regs: u32,
    /// Whether a chunk consecutive in a buffer is one vector access (aligned instance).
    pub vector_access: bool,
}

/// Chunks of consecutive elements, `blockDim.x` chunks apart: a warp's accesses stay coalesced
/// and, aligned, are 128 bits wide.
pub(super) fn emit_pointwise(
    out: &mut String,
    ir: &IrGraph,
    sched: &Schedule,
    k: &Kernel,
    nest: &LoopNest,
    chunks: Chunks,
) {
    let Chunks {
        unroll,
        vector,
        regs,
        vector_access,
    } = chunks;
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
        dialect: CUDA,
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
        let loads = chunk_loads(&body, &vars, v, regs, dtype);
        let stores = chunk_stores(&body, &vars);
        let lanes = |out: &mut String| {
            let _ = writeln!(out, "    #pragma unroll");
            let _ = writeln!(out, "    for (int j = 0; j < {v}; j++) {{");
            let _ = writeln!(out, "    const ti x{last} = xc{last} + (ti)j;");
        };
        if let Some(stores) = stores.filter(|s| {
            s.iter().all(|(b, _, _)| loads.iter().all(|(l, _)| l != b)) && !s.is_empty()
        }) {
            let bytes = |b: BufId| v as usize * ir.buffers[b].dtype.itemsize();
            let wide = |b: BufId, e: &str| {
                (vector_access)
                    .then(|| vector_bytes(bytes(b)))
                    .flatten()
                    .is_some()
                    .then(|| chunk_base(e, last, v))
                    .flatten()
            };
            for (i, (b, _)) in loads.iter().enumerate() {
                let t = storage_type(ir.buffers[*b].dtype);
                let _ = writeln!(out, "    __align__(16) {t} cr{i}[{v}];");
            }
            for (i, (b, _, _)) in stores.iter().enumerate() {
                let t = storage_type(ir.buffers[*b].dtype);
                let _ = writeln!(out, "    __align__(16) {t} cs{i}[{v}];");
            }
            // A chunk that is consecutive in a buffer (its index `base + x{last}`, `base` a
            // multiple of the chunk) is one vector access in the aligned instance: NVVM does
            // not merge the lanes' scalar accesses by itself (it cannot see that the chunk base
            // is a multiple of the chunk), so they stayed 16- or 32-bit loads (session 31).
            lanes(out);
            for (i, (b, e)) in loads.iter().enumerate() {
                let guard = if wide(*b, e).is_some() {
                    "if (!TF_A) "
                } else {
                    ""
                };
                let _ = writeln!(out, "    {guard}cr{i}[j] = b{b}[{e}];");
            }
            let _ = writeln!(out, "    }}");
            for (i, (b, e)) in loads.iter().enumerate() {
                if let Some(base) = wide(*b, e) {
                    let _ = writeln!(
                        out,
                        "    if (TF_A) {{ {} }}",
                        vector_copy(&format!("cr{i}"), &format!("&b{b}[{base}]"), bytes(*b))
                    );
                }
            }
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
                let guard = if wide(*b, e).is_some() {
                    "if (!TF_A) "
                } else {
                    ""
                };
                let _ = writeln!(out, "    {guard}b{b}[{e}] = cs{i}[j];");
            }
            let _ = writeln!(out, "    }}");
            for (i, (b, e, _)) in stores.iter().enumerate() {
                if let Some(base) = wide(*b, e) {
                    let _ = writeln!(
                        out,
                        "    if (TF_A) {{ {} }}",
                        vector_copy(&format!("&b{b}[{base}]"), &format!("cs{i}"), bytes(*b))
                    );
                }
            }
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

/// The vector type moving `bytes` at once (with how many of them), for a chunk of that size.
fn vector_bytes(bytes: usize) -> Option<(&'static str, usize)> {
    match bytes {
        4 => Some(("unsigned int", 1)),
        8 => Some(("uint2", 1)),
        16 => Some(("uint4", 1)),
        32 => Some(("uint4", 2)),
        _ => None,
    }
}

/// `bytes` (a [`vector_bytes`] size) copied from `src` to `dst` (addresses, or arrays) in vector
/// accesses.
fn vector_copy(dst: &str, src: &str, bytes: usize) -> String {
    let (t, n) = vector_bytes(bytes).expect("a vector size");
    (0..n)
        .map(|k| format!("(({t} *)({dst}))[{k}] = ((const {t} *)({src}))[{k}];"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The index of a chunk's first lane when index `e` (printed over `x0..x{last}`, see
/// `idx_c`) is `base + x{last}` with every other term a multiple of the chunk `v` (so, the chunk
/// base `xc{last}` being one too, the chunk is `v` consecutive elements starting at a multiple
/// of `v`): `e` with `xc{last}` for `x{last}`. `None` for any other form (another coefficient
/// of `x{last}`, a term not a multiple of `v`, a division, modulo, clamp or symbol).
fn chunk_base(e: &str, last: usize, v: u32) -> Option<String> {
    let inner = format!("x{last}");
    let var_term = |t: &str| {
        t.strip_prefix('x')
            .is_some_and(|d| !d.is_empty() && d.bytes().all(|c| c.is_ascii_digit()))
    };
    let mut unit = 0;
    let mut terms = Vec::new();
    for t in e.split(" + ") {
        if t == inner {
            unit += 1;
            terms.push(format!("xc{last}"));
            continue;
        }
        let ok = match t.split_once('*') {
            Some((c, x)) => c.parse::<i64>().is_ok_and(|c| c % v as i64 == 0) && var_term(x),
            None => t.parse::<i64>().is_ok_and(|c| c % v as i64 == 0),
        };
        if !ok {
            return None;
        }
        terms.push(t.to_string());
    }
    (unit == 1).then(|| terms.join(" + "))
}

#[cfg(test)]
mod tests {
    use super::chunk_base;

    #[test]
    fn a_chunk_base_needs_a_unit_inner_stride_and_multiples_of_the_chunk() {
        assert_eq!(
            chunk_base("3072*x0 + x1", 1, 4).as_deref(),
            Some("3072*x0 + xc1")
        );
        assert_eq!(chunk_base("x1", 1, 8).as_deref(), Some("xc1"));
        assert_eq!(
            chunk_base("802816*x0 + x2 + 256*x1 + 64", 2, 4).as_deref(),
            Some("802816*x0 + xc2 + 256*x1 + 64")
        );
        // Channels-last reads along the innermost loop: not consecutive.
        assert_eq!(chunk_base("802816*x0 + x1 + 256*x2", 2, 4), None);
        // Other terms that are not multiples of the chunk, or not plain.
        assert_eq!(chunk_base("3074*x0 + x1", 1, 4), None);
        assert_eq!(chunk_base("3072*x0 + x1 + 2", 1, 4), None);
        assert_eq!(chunk_base("x0 + x1", 1, 4), None);
        assert_eq!(chunk_base("((x1) / 2)", 1, 4), None);
        assert_eq!(chunk_base("s0*x0 + x1", 1, 4), None);
        // A broadcast along the chunk (the same element in every lane).
        assert_eq!(chunk_base("64*x0", 1, 4), None);
        // `x1` vs `x10`.
        assert_eq!(chunk_base("x10", 1, 4), None);
    }
}
