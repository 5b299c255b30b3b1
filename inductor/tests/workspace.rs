//! Intermediates kept between calls (`inductor::workspace`): the second call allocates only its
//! outputs, answers match the reference interpreter on every call, outputs handed out earlier
//! are never overwritten, and storage the host or a fallback could alias is never kept.

mod common;

use common::*;
use fx::{Arg, DType, Graph};
use inductor::ir::{BufKind, IrNode, OutputSpec};
use inductor::testing::VecHost;
use inductor::workspace::kept_buffers;
use inductor::{compile, interp};

/// Four GEMMs with tanh between them and a row sum: extern outputs, kernel outputs and storage
/// shared through the reuse plan are all intermediates.
fn gemm_chain() -> Graph {
    let mut g = Graph::new();
    let x = input(&mut g, "x", DType::Float32, &[8, 8]);
    let w = input(&mut g, "w", DType::Float32, &[8, 8]);
    let mut h = x;
    for _ in 0..4 {
        let mm = call(&mut g, f("torch.mm"), vec![n(h), n(w)], vec![]);
        h = call(&mut g, f("torch.tanh"), vec![n(mm)], vec![]);
    }
    let s = call(&mut g, m("sum"), vec![n(h), Arg::Int(1)], vec![]);
    g.output(vec![n(h), n(s)]);
    g
}

#[test]
fn second_call_allocates_only_outputs_and_matches_the_interpreter() {
    let g = gemm_chain();
    let c = compile(&g, &options()).unwrap();
    assert!(
        c.schedule().reuse.iter().any(|r| r.is_some()),
        "the graph should share storage between buffers"
    );
    let mut ws = c
        .new_workspace()
        .expect("the graph has intermediates to keep");
    let mut host = VecHost::new();
    let mut earlier = Vec::new();
    let mut allocations = Vec::new();
    for seed in [3, 4, 5] {
        let ins = inputs_for(&mut host, &g, seed);
        let before = host.allocations;
        let got = c.run_in(&mut host, &ins, &mut ws).unwrap();
        allocations.push(host.allocations - before);
        let want = interp::run(c.ir(), &mut host, &ins).unwrap();
        for (a, b) in got.iter().zip(&want) {
            assert_close(&a.to_f64(), &b.to_f64(), &c);
        }
        earlier.push((got, want));
    }
    assert!(!ws.is_empty());
    // Outputs (two of them) are fresh every call; intermediates only on the first.
    assert_eq!(allocations[1], 2, "allocations per call: {allocations:?}");
    assert_eq!(allocations[2], 2, "allocations per call: {allocations:?}");
    assert!(allocations[0] > 2, "allocations per call: {allocations:?}");
    // Later calls never wrote into what earlier calls returned.
    for (got, want) in &earlier {
        for (a, b) in got.iter().zip(want) {
            assert_close(&a.to_f64(), &b.to_f64(), &c);
        }
    }
}

#[test]
fn fallback_arguments_and_outputs_are_never_kept() {
    let mut g = Graph::new();
    let x = input(&mut g, "x", DType::Float32, &[3, 5]);
    let a = call(&mut g, m("exp"), vec![n(x)], vec![]);
    let cs = call_like(&mut g, f("torch.cumprod"), vec![n(a), Arg::Int(-1)], a);
    let r = call(&mut g, f("torch.relu"), vec![n(cs)], vec![]);
    let r = call(&mut g, f("operator.mul"), vec![n(r), Arg::Int(2)], vec![]);
    g.output(vec![n(r)]);
    let c = compile(&g, &options()).unwrap();
    assert_eq!(c.num_fallbacks(), 1);
    let kept = kept_buffers(c.ir(), c.schedule());
    for node in &c.ir().nodes {
        if let inductor::ir::IrNode::Fallback { outs, .. } = node {
            for b in node.reads().into_iter().chain(outs.iter().copied()) {
                assert!(!kept[b], "buffer {b} touches a fallback but is kept");
            }
        }
    }
    // Nothing else is an intermediate here, so the graph needs no workspace.
    assert!(c.new_workspace::<inductor::testing::VecTensor>().is_none());
    let (_, outs) = check(&g, 21);
    let xs = values(15, 21);
    let want: f64 = xs[0..5].iter().map(|v| v.exp()).product::<f64>() * 2.0;
    assert!((outs[0][4] - want).abs() < 1e-4);
}

/// `tanh(x)` viewed as a matrix, times `w.t()`, twice: each GEMM's operands are views, one of a
/// kept intermediate and one of an input.
fn viewed_operands() -> Graph {
    let mut g = Graph::new();
    let x = input(&mut g, "x", DType::Float32, &[2, 4, 8]);
    let w = input(&mut g, "w", DType::Float32, &[8, 8]);
    let wt = call(&mut g, m("t"), vec![n(w)], vec![]);
    let mut h = x;
    for _ in 0..2 {
        let a = call(&mut g, f("torch.tanh"), vec![n(h)], vec![]);
        let a = call(
            &mut g,
            m("reshape"),
            vec![n(a), Arg::Int(8), Arg::Int(8)],
            vec![],
        );
        let mm = call(&mut g, f("torch.mm"), vec![n(a), n(wt)], vec![]);
        h = call(
            &mut g,
            m("reshape"),
            vec![n(mm), Arg::Int(2), Arg::Int(4), Arg::Int(8)],
            vec![],
        );
    }
    g.output(vec![n(h)]);
    g
}

#[test]
fn views_of_kept_operands_are_made_once() {
    let g = viewed_operands();
    let c = compile(&g, &options()).unwrap();
    assert_eq!(c.num_extern_calls(), 2);
    let mut ws = c.new_workspace().expect("intermediates to keep");
    let mut host = VecHost::new();
    let mut views = Vec::new();
    let mut earlier = Vec::new();
    for seed in [3, 4, 5, 6] {
        let ins = inputs_for(&mut host, &g, seed);
        let before = host.views;
        let got = c.run_in(&mut host, &ins, &mut ws).unwrap();
        views.push(host.views - before);
        let want = interp::run(c.ir(), &mut host, &ins).unwrap();
        assert_close(&got[0].to_f64(), &want[0].to_f64(), &c);
        earlier.push((got, want));
    }
    // The first call makes every operand's view; later calls only those of the input `w`
    // (a caller's tensor, not kept alive by the workspace) and the output's.
    let ir = c.ir();
    let of_inputs = ir
        .nodes
        .iter()
        .filter_map(|node| match node {
            IrNode::Extern { inputs, .. } => Some(inputs),
            _ => None,
        })
        .flatten()
        .filter(|v| {
            let b = &ir.buffers[v.buf];
            matches!(b.kind, BufKind::Input(_)) && (v.sizes != b.sizes || v.strides != b.strides)
        })
        .count();
    let of_outputs = ir
        .outputs
        .iter()
        .filter(|o| matches!(o, OutputSpec::View(_) | OutputSpec::Own(_)))
        .count();
    assert_eq!(of_inputs, 2, "each GEMM reads `w.t()`");
    assert!(
        views[0] > of_inputs + of_outputs,
        "views per call: {views:?}"
    );
    for later in &views[1..] {
        assert_eq!(*later, of_inputs + of_outputs, "views per call: {views:?}");
    }
    for (got, want) in &earlier {
        assert_close(&got[0].to_f64(), &want[0].to_f64(), &c);
    }
    // A workspace of its own (another thread's call) makes its views afresh and agrees.
    let mut other = c.new_workspace().unwrap();
    let ins = inputs_for(&mut host, &g, 9);
    let a = c.run_in(&mut host, &ins, &mut other).unwrap();
    let b = c.run_in(&mut host, &ins, &mut ws).unwrap();
    assert_close(&a[0].to_f64(), &b[0].to_f64(), &c);
}
