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
    let ir = graph().at(&|k| if k == 0 { 6 } else { 10 });
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
