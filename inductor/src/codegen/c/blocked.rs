//! Reductions over leading dims, rows processed in blocks so the innermost loop walks
//! contiguous memory.

use super::*;

/// Rows handled together by a blocked kernel ([`emit_blocked`]).
pub(super) const BLOCK: i64 = 64;

/// A reduction kernel whose rows are processed [`BLOCK`] at a time along the last row var: each
/// stage loops over the reduced dims outside and over the block inside (contiguous, vectorized),
/// with per-row accumulators and row values kept in small arrays. `unfolded`
/// ([`CpuPolicy::sizes_unfolded`]): the block count is printed as C's ceiling division of the
/// row count rather than its value.
pub(super) fn emit_blocked(
    out: &mut String,
    ir: &IrGraph,
    sched: &Schedule,
    k: &Kernel,
    work: Size,
    par: i64,
    unfolded: bool,
) {
    let (no, nr) = (k.outer.len(), k.inner.len());
    let last = k.outer[no - 1];
    let xl = no - 1;
    let mut indent = String::from("  ");
    let _ = writeln!(
        out,
        "  #pragma omp parallel for collapse({no}) if({work} >= {par})"
    );
    loops(out, &k.outer[..no - 1], 0, &mut indent);
    // A symbolic row count is a C expression: its block count is computed by C.
    let blocks = match last.as_const() {
        Some(last) if !unfolded => ((last + BLOCK - 1) / BLOCK).to_string(),
        _ => format!("({last} + {}) / {BLOCK}", BLOCK - 1),
    };
    let _ = writeln!(out, "{indent}for (int64_t xb = 0; xb < {blocks}; xb++) {{");
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
    let nstages = k.nodes.iter().map(|kn| kn.stage + 1).max().unwrap_or(0);
    for stage in 0..nstages {
        let members: Vec<&KernelNode> = k.nodes.iter().filter(|kn| kn.stage == stage).collect();
        // The stage's pointwise nodes over `nvars` vars, reading the values so far (`local`);
        // returns those values with the stage's own added.
        let stage_nodes =
            |out: &mut String, local: &HashMap<BufId, String>, indent: &str, nvars: usize| {
                let mut stage_local = local.clone();
                let (cx, no_scratch) = (Cx::cpu(ir, sched, k), HashMap::new());
                let l = &mut stage_local;
                emit_stage_nodes(out, cx, stage, l, indent, nvars, &nest, &no_scratch);
                stage_local
            };
        match (&ir.nodes[members[0].node], members[0].level) {
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
                    .filter_map(|kn| match &ir.nodes[kn.node] {
                        IrNode::Pointwise { out: ob, .. } => Some((*ob, ir.buffers[*ob].dtype)),
                        _ => None,
                    })
                    .collect();
                for (ob, d) in &outs {
                    let _ = writeln!(out, "{indent}{} rowv{ob}[{BLOCK}];", c_type(*d));
                }
                open_block(out, &mut indent);
                let stage_local = stage_nodes(out, &local, &indent, no);
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
                stage_nodes(out, &local, &indent, no + nr);
                close(out, nr + 1, &mut indent);
            }
        }
    }
    close(out, no, &mut indent);
}
