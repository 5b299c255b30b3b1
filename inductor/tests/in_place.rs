//! In-place epilogues (`Schedule::in_place`): a kernel writes its result over a buffer it reads
//! for the last time, element by element, only where no point can read an element another point
//! (or a later node of the same point) already overwrote. Every case is checked against the
//! reference interpreter.

mod common;

use common::*;
use fx::{Arg, DType, Graph, NodeId};
use inductor::ir::{BufId, IrNode};
use inductor::CompiledGraph;

/// Buffers written in place, as (buffer, donor).
fn in_place_pairs(c: &CompiledGraph) -> Vec<(BufId, BufId)> {
    let s = c.schedule();
    s.in_place
        .iter_enumerated()
        .filter_map(|(b, d)| d.map(|d| (b, d)))
        .collect()
}

fn mm(g: &mut Graph, a: NodeId, b: NodeId) -> NodeId {
    call(g, f("torch.mm"), vec![n(a), n(b)], vec![])
}

#[test]
fn gemm_epilogue_overwrites_the_gemm_output() {
    // linear -> tanh -> linear: the bias+tanh kernel writes over the first GEMM's output.
    let mut g = Graph::new();
    let x = input(&mut g, "x", DType::Float32, &[6, 8]);
    let w = input(&mut g, "w", DType::Float32, &[8, 8]);
    let bias = input(&mut g, "bias", DType::Float32, &[8]);
    let a = mm(&mut g, x, w);
    let a = call(&mut g, f("operator.add"), vec![n(a), n(bias)], vec![]);
    let a = call(&mut g, f("torch.tanh"), vec![n(a)], vec![]);
    let y = mm(&mut g, a, w);
    g.output(vec![n(y)]);
    for seed in [1, 2] {
        let (c, _) = check(&g, seed);
        let pairs = in_place_pairs(&c);
        assert_eq!(pairs.len(), 1, "{pairs:?}\n{}", c.source());
        let (b, donor) = pairs[0];
        assert!(
            c.ir()
                .nodes
                .iter()
                .any(|node| matches!(node, IrNode::Extern { out, .. } if *out == donor)),
            "the donor is the GEMM output"
        );
        assert!(
            c.source().contains(&format!("*const b{b} = b{donor};")),
            "{}",
            c.source()
        );
    }
}

#[test]
fn row_reductions_then_normalize_in_place() {
    // softmax over a GEMM output: max and sum read each row before the normalize stage writes
    // it, so the whole row kernel works in place.
    let mut g = Graph::new();
    let x = input(&mut g, "x", DType::Float32, &[5, 7]);
    let w = input(&mut g, "w", DType::Float32, &[7, 7]);
    let a = mm(&mut g, x, w);
    let s = call(&mut g, f("torch.softmax"), vec![n(a), Arg::Int(-1)], vec![]);
    let y = mm(&mut g, s, w);
    g.output(vec![n(y)]);
    let (c, _) = check(&g, 3);
    assert_eq!(in_place_pairs(&c).len(), 1, "{}", c.source());
}

#[test]
fn transposed_read_is_never_in_place() {
    // b[i, j] = a[i, j] + a[j, i]: writing b[i, j] over a would clobber a[i, j] before point
    // (j, i) reads it.
    let mut g = Graph::new();
    let x = input(&mut g, "x", DType::Float32, &[6, 6]);
    let a = mm(&mut g, x, x);
    let t = call(&mut g, m("t"), vec![n(a)], vec![]);
    let b = call(&mut g, f("operator.add"), vec![n(a), n(t)], vec![]);
    let y = mm(&mut g, b, x);
    g.output(vec![n(y)]);
    let (c, _) = check(&g, 4);
    assert!(in_place_pairs(&c).is_empty(), "{}", c.source());
}

#[test]
fn donor_read_after_the_store_is_never_in_place() {
    // One kernel computes p = tanh(a) (read by a later GEMM) and then q = p * a (an output):
    // q's read of a comes after p's store at the same point, so p may not overwrite a. Lowering
    // would recompute p inside q, so the IR is built by hand.
    use inductor::ir::{
        contiguous_strides, linear_index, BinOp, BodyBuilder, BufKind, ExternCall, IrGraph,
        OutputSpec, UnOp, View,
    };
    use inductor::size::{consts, Size};
    let (sizes, strides) = (consts(&[4i64, 4]), consts(&contiguous_strides(&[4, 4])));
    let mut ir = IrGraph {
        num_inputs: 1,
        ..IrGraph::default()
    };
    let buf = |ir: &mut IrGraph, kind| {
        ir.add_buffer(DType::Float32, sizes.clone(), strides.clone(), kind)
    };
    let view = |b| View {
        buf: b,
        sizes: sizes.clone(),
        strides: strides.clone(),
        offset: Size::Const(0),
    };
    let x = buf(&mut ir, BufKind::Input(0));
    let (a, p, q, y) = (
        buf(&mut ir, BufKind::Computed),
        buf(&mut ir, BufKind::Computed),
        buf(&mut ir, BufKind::Computed),
        buf(&mut ir, BufKind::Computed),
    );
    let at = |bb: &BodyBuilder| linear_index(&bb.vars(), &strides, Size::Const(0));
    ir.nodes.push(IrNode::Extern {
        out: a,
        call: ExternCall::Mm,
        inputs: vec![view(x), view(x)],
    });
    let mut bb = BodyBuilder::new(sizes.clone());
    let la = bb.load(a, at(&bb), DType::Float32);
    let t = bb.unary(UnOp::Tanh, la);
    let body_p = bb.finish(t);
    ir.nodes.push(IrNode::Pointwise {
        out: p,
        sizes: sizes.clone(),
        body: body_p,
        offset: inductor::size::Size::Const(0),
    });
    let mut bb = BodyBuilder::new(sizes.clone());
    let lp = bb.load(p, at(&bb), DType::Float32);
    let la = bb.load(a, at(&bb), DType::Float32);
    let r = bb.binary(BinOp::Mul, lp, la);
    let body_q = bb.finish(r);
    ir.nodes.push(IrNode::Pointwise {
        out: q,
        sizes: sizes.clone(),
        body: body_q,
        offset: inductor::size::Size::Const(0),
    });
    ir.nodes.push(IrNode::Extern {
        out: y,
        call: ExternCall::Mm,
        inputs: vec![view(p), view(x)],
    });
    ir.outputs = vec![OutputSpec::Buffer(y), OutputSpec::Buffer(q)];
    let c = inductor::compile_ir(ir, &options()).unwrap();
    assert_eq!(c.num_kernels(), 1, "{}", c.source());
    assert!(in_place_pairs(&c).is_empty(), "{}", c.source());
    let mut host = inductor::testing::VecHost::new();
    let xs = values(16, 5);
    let ins = vec![host.tensor_strided(DType::Float32, &[4, 4], &[4, 1], &xs)];
    let got = c.run(&mut host, &ins).unwrap();
    let want = inductor::interp::run(c.ir(), &mut host, &ins).unwrap();
    for (g, w) in got.iter().zip(&want) {
        assert_close(&g.to_f64(), &w.to_f64(), &c);
    }
}

#[test]
fn fallback_results_and_graph_inputs_are_never_overwritten() {
    // cumprod runs in the host, whose result may alias the host's own tensors; the graph input
    // belongs to the caller.
    let mut g = Graph::new();
    let x = input(&mut g, "x", DType::Float32, &[3, 5]);
    let w = input(&mut g, "w", DType::Float32, &[5, 5]);
    let e = call(&mut g, f("torch.exp"), vec![n(x)], vec![]);
    let cs = call_like(&mut g, f("torch.cumprod"), vec![n(e), Arg::Int(-1)], e);
    let r = call(&mut g, f("torch.relu"), vec![n(cs)], vec![]);
    let y = mm(&mut g, r, w);
    g.output(vec![n(y)]);
    let (c, _) = check(&g, 6);
    assert_eq!(c.num_fallbacks(), 1);
    assert!(in_place_pairs(&c).is_empty(), "{}", c.source());
}

#[test]
fn in_place_chains_match_the_interpreter_over_repeated_calls() {
    // Several GEMM epilogues in a row, run three times with a workspace: each call must give
    // the interpreter's answer although the storage is shared and kept.
    let mut g = Graph::new();
    let x = input(&mut g, "x", DType::Float32, &[8, 8]);
    let w = input(&mut g, "w", DType::Float32, &[8, 8]);
    let mut h = x;
    for _ in 0..3 {
        let a = mm(&mut g, h, w);
        h = call(&mut g, f("torch.sigmoid"), vec![n(a)], vec![]);
    }
    let y = mm(&mut g, h, w);
    g.output(vec![n(y)]);
    let c = inductor::compile(&g, &options()).unwrap();
    assert_eq!(in_place_pairs(&c).len(), 3, "{}", c.source());
    let mut ws = c.new_workspace().expect("intermediates to keep");
    let mut host = inductor::testing::VecHost::new();
    for seed in [7, 8, 9] {
        let ins = inputs_for(&mut host, &g, seed);
        let got = c.run_in(&mut host, &ins, &mut ws).unwrap();
        let want = inductor::interp::run(c.ir(), &mut host, &ins).unwrap();
        assert_close(&got[0].to_f64(), &want[0].to_f64(), &c);
    }
}
