//! Reductions over leading dims, rows processed in blocks so the innermost loop walks
//! contiguous memory.

use super::*;

/// Rows handled together by a blocked kernel ([`emit_blocked`]).
pub(super) const BLOCK: i64 = 64;

/// The coefficient of var `v` in `e` where it appears as a plain term (0 when absent or only
/// inside a division, modulo or clamp).
pub(super) fn coef(e: &Idx, v: u32) -> i64 {
    e.terms
        .iter()
        .find(|(a, _)| *a == Atom::Var(v))
        .map(|(_, c)| *c)
        .unwrap_or(0)
}

/// Whether a kernel with reductions reads memory contiguously along its last *row* var rather
/// than along its last reduced var (a reduction over a leading dim, `x.sum(0)`): then scanning
/// each row alone strides through memory, and rows are better processed in blocks.
pub(super) fn prefers_blocked(ir: &IrGraph, k: &Kernel) -> bool {
    let (no, nr) = (k.outer.len(), k.inner.len());
    if nr == 0 || k.outer[no - 1] < 4 {
        return false;
    }
    let (row, red) = (no as u32 - 1, (no + nr) as u32 - 1);
    let mut votes = 0i64;
    for (n, _, _) in &k.nodes {
        let body = match &ir.nodes[*n] {
            IrNode::Pointwise { body, .. } | IrNode::Reduction { body, .. } => body,
            _ => continue,
        };
        for (_, idx) in body.loads() {
            let (co, ci) = (coef(idx, row).abs(), coef(idx, red).abs());
            if co == 1 && ci != 1 {
                votes += 1;
            } else if ci == 1 && co != 1 {
                votes -= 1;
            }
        }
    }
    votes > 0
}

/// A reduction kernel whose rows are processed [`BLOCK`] at a time along the last row var: each
/// stage loops over the reduced dims outside and over the block inside (contiguous, vectorized),
/// with per-row accumulators and row values kept in small arrays.
pub(super) fn emit_blocked(
    out: &mut String,
    ir: &IrGraph,
    sched: &Schedule,
    k: &Kernel,
    work: i64,
) {
    let (no, nr) = (k.outer.len(), k.inner.len());
    let last = k.outer[no - 1];
    let xl = no - 1;
    let mut indent = String::from("  ");
    let _ = writeln!(
        out,
        "  #pragma omp parallel for collapse({no}) if({work} >= {PARALLEL_THRESHOLD})"
    );
    loops(out, &k.outer[..no - 1], 0, &mut indent);
    let _ = writeln!(
        out,
        "{indent}for (int64_t xb = 0; xb < {}; xb++) {{",
        (last + BLOCK - 1) / BLOCK
    );
    indent.push_str("  ");
    let _ = writeln!(out, "{indent}const int64_t xlo = xb * {BLOCK};");
    let _ = writeln!(
        out,
        "{indent}const int64_t nb = {last} - xlo < {BLOCK} ? {last} - xlo : {BLOCK};"
    );
    let nest = LoopNest::identity(&[]);
    let open_block = |out: &mut String, indent: &mut String| {
        let _ = writeln!(out, "{indent}#pragma omp simd");
        let _ = writeln!(out, "{indent}for (int64_t j = 0; j < nb; j++) {{");
        indent.push_str("  ");
        let _ = writeln!(out, "{indent}const int64_t x{xl} = xlo + j;");
    };
    let mut local: HashMap<BufId, String> = HashMap::new();
    let nstages = k.nodes.iter().map(|(_, _, s)| s + 1).max().unwrap_or(0);
    for stage in 0..nstages {
        let members: Vec<&(usize, Level, usize)> =
            k.nodes.iter().filter(|(_, _, s)| *s == stage).collect();
        match (&ir.nodes[members[0].0], members[0].1) {
            (
                IrNode::Reduction {
                    out: ob, op, body, ..
                },
                _,
            ) => {
                let d = ir.buffers[*ob].dtype;
                let acc = format!("acc{ob}");
                // Each row's sum runs sequentially down its column: a float sum accumulates in
                // double so long columns keep torch's (cascade-summed) accuracy.
                let wide = *op == ReduceOp::Sum && is_f32_like(d);
                let ad = if wide { DType::Float64 } else { d };
                let _ = writeln!(out, "{indent}{} {acc}[{BLOCK}];", c_type(ad));
                let _ = writeln!(
                    out,
                    "{indent}for (int64_t j = 0; j < {BLOCK}; j++) {acc}[j] = {};",
                    init_c(*op, ad)
                );
                loops(out, &k.inner, no, &mut indent);
                open_block(out, &mut indent);
                let v = emit_body(out, body, &format!("r{ob}"), &local, &indent, &nest);
                let slot = format!("{acc}[j]");
                let v = if wide { format!("(double){v}") } else { v };
                let _ = writeln!(out, "{indent}{slot} = {};", combine_c(*op, &slot, &v, ad));
                close(out, nr + 1, &mut indent);
                let cell = if wide {
                    format!("((float){slot})")
                } else {
                    slot
                };
                if sched.materialized[*ob] {
                    let _ = writeln!(out, "{indent}for (int64_t j = 0; j < nb; j++) {{");
                    let _ = writeln!(out, "{indent}  const int64_t x{xl} = xlo + j;");
                    let _ = writeln!(
                        out,
                        "{indent}  b{ob}[{}] = {};",
                        store_c(ir, *ob, no, &nest),
                        store_conv(d, &cell)
                    );
                    let _ = writeln!(out, "{indent}}}");
                }
                local.insert(*ob, local_value(d, &cell));
            }
            (IrNode::Pointwise { .. }, Level::Row) => {
                let outs: Vec<(BufId, DType)> = members
                    .iter()
                    .filter_map(|(n, _, _)| match &ir.nodes[*n] {
                        IrNode::Pointwise { out: ob, .. } => Some((*ob, ir.buffers[*ob].dtype)),
                        _ => None,
                    })
                    .collect();
                for (ob, d) in &outs {
                    let _ = writeln!(out, "{indent}{} rowv{ob}[{BLOCK}];", c_type(*d));
                }
                open_block(out, &mut indent);
                let mut stage_local = local.clone();
                emit_stage_nodes(
                    out,
                    ir,
                    sched,
                    k,
                    stage,
                    &mut stage_local,
                    &indent,
                    no,
                    &nest,
                    &HashMap::new(),
                );
                for (ob, d) in &outs {
                    // The stage's own value, unrounded; readers round it as a load would.
                    let v = stage_local[ob].clone();
                    let raw = v
                        .strip_prefix("tf_rh(")
                        .or_else(|| v.strip_prefix("tf_rbf("))
                        .and_then(|r| r.strip_suffix(')'))
                        .unwrap_or(&v)
                        .to_string();
                    let _ = writeln!(out, "{indent}rowv{ob}[j] = {raw};");
                    local.insert(*ob, local_value(*d, &format!("rowv{ob}[j]")));
                }
                close(out, 1, &mut indent);
            }
            _ => {
                loops(out, &k.inner, no, &mut indent);
                open_block(out, &mut indent);
                let mut stage_local = local.clone();
                emit_stage_nodes(
                    out,
                    ir,
                    sched,
                    k,
                    stage,
                    &mut stage_local,
                    &indent,
                    no + nr,
                    &nest,
                    &HashMap::new(),
                );
                close(out, nr + 1, &mut indent);
            }
        }
    }
    close(out, no, &mut indent);
}
