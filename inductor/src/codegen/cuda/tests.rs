//! The printer over symbolic sizes, without NVRTC: index expressions, kernel parameters and
//! grid rules (the NVRTC check of such sources is `tests/cuda_codegen.rs`).

use fx::DType;

use super::{generate, unflatten, GridRule, Instances};
use crate::codegen::plan;
use crate::ir::{linear_index, BodyBuilder, BufKind, IrGraph, IrNode, OutputSpec, ReduceOp, UnOp};
use crate::schedule::schedule;
use crate::size::Size;
use crate::target::{CudaPolicy, Target};

/// `y = exp(x)` over `x [s0, s1]` and its row sum `r = y.sum(1)`.
fn graph() -> IrGraph {
    let (s0, s1) = (Size::symbol(0), Size::symbol(1));
    let (one, zero) = (Size::Const(1), Size::Const(0));
    let mut ir = IrGraph {
        num_inputs: 1,
        ..IrGraph::default()
    };
    let x = ir.add_buffer(
        DType::Float32,
        vec![s0, s1],
        vec![s1, one],
        BufKind::Input(0),
    );
    let y = ir.add_buffer(
        DType::Float32,
        vec![s0, s1],
        vec![s1, one],
        BufKind::Computed,
    );
    let r = ir.add_buffer(DType::Float32, vec![s0], vec![one], BufKind::Computed);
    let mut b = BodyBuilder::new(vec![s0, s1]);
    let v = b.vars();
    let lx = b.load(x, linear_index(&v, &[s1, one], zero), DType::Float32);
    let e = b.unary(UnOp::Exp, lx);
    ir.nodes.push(IrNode::Pointwise {
        out: y,
        sizes: vec![s0, s1],
        body: b.finish(e),
        offset: zero,
    });
    let mut b = BodyBuilder::new(vec![s0, s1]);
    let v = b.vars();
    let ly = b.load(y, linear_index(&v, &[s1, one], zero), DType::Float32);
    ir.nodes.push(IrNode::Reduction {
        out: r,
        sizes: vec![s0],
        rsizes: vec![s1],
        op: ReduceOp::Sum,
        body: b.finish(ly),
    });
    ir.outputs = vec![OutputSpec::Buffer(y), OutputSpec::Buffer(r)];
    ir
}

fn print(ir: &IrGraph) -> super::CudaSource {
    let policy = CudaPolicy::default();
    let sched = schedule(ir);
    let plans = plan::plan(ir, &sched, &Target::Cuda(policy.clone()));
    generate(ir, &sched, &plans, &policy, Instances::Aligned)
}

#[test]
fn a_flat_position_splits_over_symbolic_extents() {
    let mut out = String::new();
    let (s0, s1) = (Size::symbol(0), Size::symbol(1));
    unflatten(&mut out, "", "i", &[s0, s1 * 2, Size::Const(3)], 0);
    assert_eq!(
        out,
        "ti rem0 = i;\n\
         const ti x2 = rem0 % 3; rem0 /= 3;\n\
         const ti x1 = rem0 % (s1*2); rem0 /= (s1*2);\n\
         const ti x0 = rem0;\n"
    );
    // Constant extents print as the static printer always did.
    let mut out = String::new();
    unflatten(&mut out, "", "i", &[Size::Const(4), Size::Const(5)], 0);
    assert_eq!(
        out,
        "ti rem0 = i;\nconst ti x1 = rem0 % 5; rem0 /= 5;\nconst ti x0 = rem0;\n"
    );
}

#[test]
fn kernels_over_symbolic_sizes_take_the_symbols_and_a_grid_rule() {
    let src = print(&graph());
    assert!(!src.kernels.is_empty());
    for k in src.kernels.iter() {
        let head = src
            .code
            .lines()
            .find(|l| l.contains("__global__") && l.contains(&format!(" {}(", k.name)))
            .unwrap();
        assert!(
            head.ends_with(", const int64_t s0, const int64_t s1) {"),
            "{head}"
        );
        assert!(k.grid_rule.is_some(), "{}", src.code);
    }
    // Loads index with the symbolic row stride; bounds are the symbols; 64-bit indices.
    assert!(src.code.contains("b0[s1*x0 + x1]"), "{}", src.code);
    assert!(src.code.contains("row < s0;"), "{}", src.code);
    assert!(src.code.contains("pc < s1)"), "{}", src.code);
    assert!(!src.code.contains("typedef int ti;"), "{}", src.code);
    // One block per row, looping over the row in chunks of the block.
    let rows = src
        .kernels
        .iter()
        .find(|k| k.grid_rule.as_ref().unwrap().per_block == 1)
        .expect("a row kernel");
    assert_eq!(rows.block, CudaPolicy::default().row_block);
    let at = |a: i64, b: i64| move |k: u32| if k == 0 { a } else { b };
    assert_eq!(
        rows.grid_rule.as_ref().unwrap().blocks(&at(37, 2)),
        Some(37)
    );
    assert_eq!(
        rows.grid_rule.as_ref().unwrap().blocks(&at(1 << 40, 2)),
        Some(1 << 16)
    );
}

#[test]
fn the_same_graph_at_constant_sizes_prints_no_symbol() {
    let ir = graph()
        .at(&|k| if k == 0 { 6 } else { 10 })
        .expect("sizes at 6 and 10");
    let src = print(&ir);
    assert!(!src.code.contains("int64_t s0"), "{}", src.code);
    assert!(src.kernels.iter().all(|k| k.grid_rule.is_none()));
}

#[test]
fn grid_rules_cover_the_work_and_clamp() {
    let rule = GridRule {
        work: Size::symbol(0) * Size::symbol(1),
        per_block: 256,
        parts: 1,
        max_blocks: 1 << 16,
    };
    let at = |a: i64, b: i64| move |k: u32| if k == 0 { a } else { b };
    assert_eq!(rule.blocks(&at(2, 2)), Some(1));
    assert_eq!(rule.blocks(&at(16, 16)), Some(1));
    assert_eq!(rule.blocks(&at(16, 17)), Some(2));
    assert_eq!(rule.blocks(&at(1 << 20, 1 << 20)), Some(1 << 16));
    // A product past i64 is no grid (the build at such sizes fails, never a wrong launch).
    assert_eq!(rule.blocks(&at(1 << 40, 1 << 40)), None);
    let split = GridRule {
        parts: 3,
        per_block: 1,
        ..rule
    };
    assert_eq!(split.blocks(&at(5, 1)), Some(15));
}

/// A graph whose one input is a contiguous float32 `x [rows, cols]`.
fn matrix_input(rows: i64, cols: i64) -> (IrGraph, crate::ir::BufId) {
    let mut ir = IrGraph {
        num_inputs: 1,
        ..IrGraph::default()
    };
    let (r0, c0) = (Size::Const(rows), Size::Const(cols));
    let x = ir.add_buffer(
        DType::Float32,
        vec![r0, c0],
        vec![c0, Size::Const(1)],
        BufKind::Input(0),
    );
    (ir, x)
}

/// `r = x.sum(dim)` over a constant `x [rows, cols]`.
fn sum_graph(rows: i64, cols: i64, dim: usize) -> IrGraph {
    let (r0, c0) = (Size::Const(rows), Size::Const(cols));
    let (one, zero) = (Size::Const(1), Size::Const(0));
    let (mut ir, x) = matrix_input(rows, cols);
    let (kept, reduced) = if dim == 1 { (r0, c0) } else { (c0, r0) };
    let r = ir.add_buffer(DType::Float32, vec![kept], vec![one], BufKind::Computed);
    let mut b = BodyBuilder::new(vec![kept, reduced]);
    let v = b.vars();
    let (i, j) = if dim == 1 {
        (v[0].clone(), v[1].clone())
    } else {
        (v[1].clone(), v[0].clone())
    };
    let lx = b.load(x, linear_index(&[i, j], &[c0, one], zero), DType::Float32);
    ir.nodes.push(IrNode::Reduction {
        out: r,
        sizes: vec![kept],
        rsizes: vec![reduced],
        op: ReduceOp::Sum,
        body: b.finish(lx),
    });
    ir.outputs = vec![OutputSpec::Buffer(r)];
    ir
}

/// Evaluates the C integer expressions the printer writes for a part's range: numbers, `part`,
/// `(ti)` casts, `+`, `*`, and `a < b ? c : d`.
fn eval_c(expr: &str, part: i64) -> i64 {
    fn skip(s: &mut &str) {
        *s = s.trim_start();
    }
    fn atom(s: &mut &str, part: i64) -> i64 {
        skip(s);
        if let Some(rest) = s.strip_prefix("(ti)") {
            *s = rest;
            return atom(s, part);
        }
        if let Some(rest) = s.strip_prefix('(') {
            *s = rest;
            let v = cond(s, part);
            skip(s);
            *s = s.strip_prefix(')').expect("a closing parenthesis");
            return v;
        }
        if let Some(rest) = s.strip_prefix("part") {
            *s = rest;
            return part;
        }
        let n = s.chars().take_while(|c| c.is_ascii_digit()).count();
        assert!(n > 0, "an operand at {s:?}");
        let v = s[..n].parse().unwrap();
        *s = &s[n..];
        v
    }
    fn product(s: &mut &str, part: i64) -> i64 {
        let mut v = atom(s, part);
        loop {
            skip(s);
            match s.strip_prefix('*') {
                Some(rest) => {
                    *s = rest;
                    v *= atom(s, part);
                }
                None => return v,
            }
        }
    }
    fn sum(s: &mut &str, part: i64) -> i64 {
        let mut v = product(s, part);
        loop {
            skip(s);
            match s.strip_prefix('+') {
                Some(rest) => {
                    *s = rest;
                    v += product(s, part);
                }
                None => return v,
            }
        }
    }
    fn cond(s: &mut &str, part: i64) -> i64 {
        let a = sum(s, part);
        skip(s);
        let Some(rest) = s.strip_prefix('<') else {
            return a;
        };
        *s = rest;
        let b = sum(s, part);
        skip(s);
        *s = s.strip_prefix('?').expect("a conditional");
        let t = cond(s, part);
        skip(s);
        *s = s.strip_prefix(':').expect("a conditional's else");
        let f = cond(s, part);
        if a < b {
            t
        } else {
            f
        }
    }
    let mut s = expr;
    let v = cond(&mut s, part);
    assert!(s.trim().is_empty(), "left over: {s:?} in {expr:?}");
    v
}

/// The parts of every split loop of `code`: the part count and each part's evaluated
/// `[lo, hi)` (the columns form's `p = lo + ty; p < hi` and the row form's `c = lo; c < hi`).
fn split_ranges(code: &str) -> Vec<(i64, Vec<(i64, i64)>)> {
    let mut parts = None;
    let mut found = Vec::new();
    for line in code.lines().map(str::trim) {
        if let Some(p) = line.strip_prefix("const int part = blockIdx.x % ") {
            parts = Some(p.trim_end_matches(';').parse::<i64>().unwrap());
            continue;
        }
        let Some(n) = parts else { continue };
        let bounds = if let Some(rest) = line.strip_prefix("for (ti p = ") {
            let (lo, rest) = rest.split_once(" + ty; p < ").expect("the columns loop");
            Some((lo, rest.split_once("; p += ").unwrap().0))
        } else if let Some(rest) = line.strip_prefix("for (int c = ") {
            let (lo, rest) = rest.split_once("; c < ").expect("the row loop");
            Some((lo, rest.split_once("; c++)").unwrap().0))
        } else {
            None
        };
        if let Some((lo, hi)) = bounds {
            let ranges = (0..n).map(|p| (eval_c(lo, p), eval_c(hi, p))).collect();
            found.push((n, ranges));
        }
    }
    found
}

/// Split reductions over few long rows: the parts' printed ranges tile the reduced range
/// exactly, none past its end (the H100 found 5 rows of 100003 in 1024 parts of 98, whose last
/// parts summed the next row).
#[test]
fn split_parts_tile_the_reduced_range() {
    let mut columns = 0;
    let mut rows_form = 0;
    for n in [4099, 32771, 100003, (1 << 20) + 7, 3 << 20] {
        for few in [1, 2, 3, 5, 7] {
            for dim in [0, 1] {
                let (r, c) = if dim == 1 { (few, n) } else { (n, few) };
                let src = print(&sum_graph(r, c, dim));
                for (parts, ranges) in split_ranges(&src.code) {
                    let columns_form = src.code.contains("for (ti p = ");
                    if columns_form {
                        columns += 1;
                    } else {
                        rows_form += 1;
                    }
                    // The row form's end is its chunk count; the columns form's the row.
                    let end = ranges.iter().map(|r| r.1).max().unwrap();
                    if columns_form {
                        assert_eq!(end, n, "{r}x{c} over {dim}: {ranges:?}");
                    }
                    let mut at = 0;
                    for (p, &(lo, hi)) in ranges.iter().enumerate() {
                        assert!(hi <= end, "part {p} of {parts} ends at {hi} past {end}");
                        if lo < hi {
                            assert_eq!(lo, at, "part {p} of {parts}: {ranges:?}");
                            at = hi;
                        }
                    }
                    assert_eq!(at, end, "{r}x{c} over {dim}: the parts leave a gap");
                }
            }
        }
    }
    assert!(columns > 0 && rows_form > 0, "{columns} {rows_form}");
}

/// Column sums over the rows of `x [rows, cols]`: `a = x.sum(0)` and `b = (x * x).sum(0)`, or
/// with `centered`, `b = ((x - a / rows) ** 2).sum(0)` (reads `a`, a row-level value).
fn two_column_sums(rows: i64, cols: i64, centered: bool) -> IrGraph {
    let (r0, c0) = (Size::Const(rows), Size::Const(cols));
    let (one, zero) = (Size::Const(1), Size::Const(0));
    let (mut ir, x) = matrix_input(rows, cols);
    let a = ir.add_buffer(DType::Float32, vec![c0], vec![one], BufKind::Computed);
    let b = ir.add_buffer(DType::Float32, vec![c0], vec![one], BufKind::Computed);
    let load_x = |bb: &mut BodyBuilder| {
        let v = bb.vars();
        let idx = linear_index(&[v[1].clone(), v[0].clone()], &[c0, one], zero);
        bb.load(x, idx, DType::Float32)
    };
    let mut bb = BodyBuilder::new(vec![c0, r0]);
    let lx = load_x(&mut bb);
    ir.nodes.push(IrNode::Reduction {
        out: a,
        sizes: vec![c0],
        rsizes: vec![r0],
        op: ReduceOp::Sum,
        body: bb.finish(lx),
    });
    let mut bb = BodyBuilder::new(vec![c0, r0]);
    let lx = load_x(&mut bb);
    let v = if centered {
        let col = bb.vars()[0].clone();
        let la = bb.load(a, linear_index(&[col], &[one], zero), DType::Float32);
        let n = bb.constant(crate::ir::Scalar::F(rows as f64), DType::Float32);
        let mean = bb.binary(crate::ir::BinOp::Div, la, n);
        let d = bb.binary(crate::ir::BinOp::Sub, lx, mean);
        bb.binary(crate::ir::BinOp::Mul, d, d)
    } else {
        bb.binary(crate::ir::BinOp::Mul, lx, lx)
    };
    ir.nodes.push(IrNode::Reduction {
        out: b,
        sizes: vec![c0],
        rsizes: vec![r0],
        op: ReduceOp::Sum,
        body: bb.finish(v),
    });
    ir.outputs = vec![OutputSpec::Buffer(a), OutputSpec::Buffer(b)];
    ir
}

/// A layer norm's weight and bias gradients are two sums over 8192 rows of 768 columns in one
/// column kernel: 24 tiles, which unsplit ran 24 blocks on a 132-SM device (session 22's
/// H100 profile: ~290 us a call). Independent sums split over parts, each publishing its own
/// partials, one ticket after the last; a sum that reads another's value (a variance reading
/// its mean) must not split.
#[test]
fn independent_column_sums_split_and_dependent_ones_do_not() {
    let src = print(&two_column_sums(8192, 768, false));
    let code = &src.code;
    assert!(code.contains("const int part = blockIdx.x % "), "{code}");
    for b in [1, 2] {
        assert!(code.contains(&format!("tf_cws_kernel0_{b}[")), "{code}");
    }
    assert_eq!(code.matches("atomicAdd(").count(), 1, "{code}");
    assert_eq!(code.matches("if (!tf_clast) return;").count(), 1, "{code}");
    // Both values are stored after the fold, never a part's value.
    let ticket = code.find("if (!tf_clast) return;").unwrap();
    for b in [1, 2] {
        let store = code.find(&format!("b{b}[x0] = ")).expect("a store");
        assert!(
            store > ticket,
            "b{b} stored before the parts are folded:\n{code}"
        );
    }
    let (parts, ranges) = split_ranges(code).into_iter().next().expect("a split loop");
    assert!(parts > 1);
    assert_eq!(ranges.iter().map(|r| r.1).max(), Some(8192));
    let src = print(&two_column_sums(8192, 768, true));
    assert!(!src.code.contains("const int part"), "{}", src.code);
}

/// `y = exp(x)` over a constant `x [rows, cols]`: one pointwise kernel.
fn exp_graph(rows: i64, cols: i64) -> IrGraph {
    let (r0, c0) = (Size::Const(rows), Size::Const(cols));
    let (one, zero) = (Size::Const(1), Size::Const(0));
    let (mut ir, x) = matrix_input(rows, cols);
    let y = ir.add_buffer(
        DType::Float32,
        vec![r0, c0],
        vec![c0, one],
        BufKind::Computed,
    );
    let mut b = BodyBuilder::new(vec![r0, c0]);
    let v = b.vars();
    let lx = b.load(x, linear_index(&v, &[c0, one], zero), DType::Float32);
    let e = b.unary(UnOp::Exp, lx);
    ir.nodes.push(IrNode::Pointwise {
        out: y,
        sizes: vec![r0, c0],
        body: b.finish(e),
        offset: zero,
    });
    ir.outputs = vec![OutputSpec::Buffer(y)];
    ir
}

#[test]
fn a_pointwise_kernel_asks_for_the_policys_blocks_per_sm() {
    let ir = exp_graph(64, 256);
    let sched = schedule(&ir);
    let source = |policy: CudaPolicy| {
        let plans = plan::plan(&ir, &sched, &Target::Cuda(policy.clone()));
        generate(&ir, &sched, &plans, &policy, Instances::Aligned).code
    };
    let plain = source(CudaPolicy::default());
    assert!(plain.contains("__launch_bounds__(256) kernel0("), "{plain}");
    let bounded = source(CudaPolicy {
        pointwise_min_blocks: 3,
        ..CudaPolicy::default()
    });
    assert!(
        bounded.contains("__launch_bounds__(256, 3) kernel0("),
        "{bounded}"
    );
    // A row kernel keeps its plain bounds.
    let rows = sum_graph(64, 256, 1);
    let sched = schedule(&rows);
    let policy = CudaPolicy {
        pointwise_min_blocks: 3,
        ..CudaPolicy::default()
    };
    let plans = plan::plan(&rows, &sched, &Target::Cuda(policy.clone()));
    let code = generate(&rows, &sched, &plans, &policy, Instances::Aligned).code;
    assert!(!code.contains(", 3) kernel"), "{code}");
}
