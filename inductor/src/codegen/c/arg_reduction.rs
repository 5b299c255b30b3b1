//! argmax/argmin: a sequential scan per row in independent lanes (first occurrence wins).

use super::*;

/// Independent partial scans of an argmax/argmin row (one vector of floats).
pub(super) const ARG_LANES: i64 = 16;

/// An argmax/argmin stage: a sequential scan per row (first occurrence wins, so lanes are not
/// reassociated), keeping the best value and its row-major position over the reduced dims.
#[allow(clippy::too_many_arguments)]
pub(super) fn emit_arg_reduction(
    out: &mut String,
    ir: &IrGraph,
    sched: &Schedule,
    k: &Kernel,
    ob: BufId,
    op: ReduceOp,
    body: &Body,
    local: &mut HashMap<BufId, String>,
    indent: &mut String,
) {
    let no = k.outer.len();
    let nr = k.inner.len();
    let vd = body.dtypes[body.root];
    let t = c_type(vd);
    let (best, idx) = (format!("accv{ob}"), format!("acc{ob}"));
    let init = init_c(
        if op == ReduceOp::ArgMax {
            ReduceOp::Max
        } else {
            ReduceOp::Min
        },
        vd,
    );
    let cmp = if op == ReduceOp::ArgMax { ">" } else { "<" };
    let float = vd.is_floating_point();
    // `v` (at `i`) replaces the best (`b` at `bi`): strictly better, or the first NaN; with
    // `ties`, an equal value (or NaN after NaN) at a smaller position also wins (for merging
    // partial scans that ran out of order).
    let takes = |v: &str, i: &str, b: &str, bi: &str, ties: bool| -> String {
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
    };
    // `tk{ob}`: whether `v` at position `p` takes over (`tk`, from `takes`) from `best` at
    // `idx`; then the branch-free update of both.
    let update =
        |out: &mut String, ind: &str, tk: String, v: &str, best: &str, idx: &str, p: &str| {
            let _ = writeln!(out, "{ind}const int tk{ob} = {tk};");
            let sel = select_c(&format!("tk{ob}"), v, best, vd);
            let _ = writeln!(out, "{ind}{best} = {sel};");
            let _ = writeln!(out, "{ind}{idx} = TF_SELI(int64_t, tk{ob}, {p}, {idx});");
        };
    let nest = LoopNest::identity(&[]);
    let pos = |upto: usize| {
        let mut p = String::from("0");
        for (i, s) in k.inner.iter().enumerate().take(upto) {
            p = format!("({p}) * {s} + x{}", no + i);
        }
        p
    };
    let _ = writeln!(out, "{indent}{t} {best} = {init};");
    let _ = writeln!(out, "{indent}int64_t {idx} = 0;");
    // Lanes need the innermost extent's value (a symbolic one takes the scalar scan, correct
    // at every size).
    let last = k
        .inner
        .last()
        .map_or(Some(1), |s| s.as_const())
        .unwrap_or(0);
    let lanes = nr > 0 && last >= ARG_LANES;
    if lanes {
        // ARG_LANES independent scans over the innermost dim (vectorized), merged at the end.
        let (bv, bi) = (format!("lv{ob}"), format!("li{ob}"));
        let _ = writeln!(out, "{indent}{t} {bv}[{ARG_LANES}];");
        let _ = writeln!(out, "{indent}int64_t {bi}[{ARG_LANES}];");
        let _ = writeln!(
            out,
            "{indent}for (int l = 0; l < {ARG_LANES}; l++) {{ {bv}[l] = {init}; {bi}[l] = 0; }}"
        );
        loops(out, &k.inner[..nr - 1], no, indent);
        let xl = no + nr - 1;
        let full = last / ARG_LANES * ARG_LANES;
        let _ = writeln!(
            out,
            "{indent}for (int64_t xc = 0; xc < {full}; xc += {ARG_LANES}) {{"
        );
        indent.push_str("  ");
        let _ = writeln!(out, "{indent}#pragma omp simd");
        let _ = writeln!(out, "{indent}for (int l = 0; l < {ARG_LANES}; l++) {{");
        indent.push_str("  ");
        let _ = writeln!(out, "{indent}const int64_t x{xl} = xc + l;");
        let v = emit_body(out, body, &format!("r{ob}"), local, indent, &nest);
        let _ = writeln!(out, "{indent}const int64_t p{ob} = {};", pos(nr));
        let (lane_best, lane_idx) = (format!("{bv}[l]"), format!("{bi}[l]"));
        let tk = takes(&v, "", &lane_best, "", false);
        update(
            out,
            indent,
            tk,
            &v,
            &lane_best,
            &lane_idx,
            &format!("p{ob}"),
        );
        close(out, 2, indent);
        // The tail of the innermost dim, in the scalar accumulator.
        let _ = writeln!(
            out,
            "{indent}for (int64_t x{xl} = {full}; x{xl} < {last}; x{xl}++) {{"
        );
        indent.push_str("  ");
        let v = emit_body(out, body, &format!("r{ob}"), local, indent, &nest);
        let _ = writeln!(out, "{indent}const int64_t p{ob} = {};", pos(nr));
        let tk = takes(&v, &format!("p{ob}"), &best, &idx, true);
        update(out, indent, tk, &v, &best, &idx, &format!("p{ob}"));
        close(out, 1, indent);
        close(out, nr - 1, indent);
        let _ = writeln!(out, "{indent}for (int l = 0; l < {ARG_LANES}; l++) {{");
        let (lane_best, lane_idx) = (format!("{bv}[l]"), format!("{bi}[l]"));
        let tk = takes(&lane_best, &lane_idx, &best, &idx, true);
        let inner = format!("{indent}  ");
        update(out, &inner, tk, &lane_best, &best, &idx, &lane_idx);
        let _ = writeln!(out, "{indent}}}");
    } else {
        loops(out, &k.inner, no, indent);
        let v = emit_body(out, body, &format!("r{ob}"), local, indent, &nest);
        let tk = takes(&v, "", &best, "", false);
        let p = format!("(int64_t)({})", pos(nr));
        update(out, indent, tk, &v, &best, &idx, &p);
        close(out, nr, indent);
    }
    if sched.materialized[ob] {
        let _ = writeln!(
            out,
            "{indent}b{ob}[{}] = {idx};",
            store_c(ir, ob, no, &nest)
        );
    }
    local.insert(ob, idx);
}
