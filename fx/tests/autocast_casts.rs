//! `fx::autodiff::autocast::explicit_casts`: an autocast region written out as casts.

use fx::autodiff::autocast::{explicit_casts, SET_AUTOCAST};
use fx::{Arg, DType, Device, Graph, NodeKind, NodeMeta, Target, TensorMeta};

fn cuda() -> Device {
    Device {
        kind: "cuda".into(),
        index: Some(0),
    }
}

fn t(dtype: DType, sizes: &[i64], grad: bool) -> NodeMeta {
    let mut m = TensorMeta::contiguous(dtype, cuda(), sizes);
    m.requires_grad = grad;
    NodeMeta::Tensor(m)
}

fn switch(g: &mut Graph, on: bool) {
    g.call(
        "set_autocast",
        Target::Function(SET_AUTOCAST.into()),
        vec![
            Arg::Str("cuda".into()),
            Arg::Bool(on),
            Arg::DType(DType::BFloat16),
        ],
        vec![],
        NodeMeta::None,
    );
}

/// `op(x, w)` of float32 CUDA tensors in a bfloat16 region, traced as `result` (the dtype
/// torch's run under autocast gave).
fn region(op: &str, result: DType) -> Graph {
    let mut g = Graph::new();
    let x = g.placeholder("x", t(DType::Float32, &[2, 3, 8, 8], false));
    let w = g.placeholder("w", t(DType::Float32, &[4, 3, 3, 3], true));
    switch(&mut g, true);
    let c = g.call(
        op,
        Target::Function(format!("torch.{op}")),
        vec![Arg::Node(x), Arg::Node(w)],
        vec![],
        t(result, &[2, 4, 6, 6], true),
    );
    switch(&mut g, false);
    g.output(vec![Arg::Node(c)]);
    g
}

/// A CUDA convolution, whose layout the native rules leave to torch: autocast's casts are
/// written out (its operands cast to bfloat16), as for the same call on the CPU.
#[test]
fn a_cuda_convolution_in_a_bfloat16_region_casts_its_operands() {
    let g = explicit_casts(&region("conv2d", DType::BFloat16)).expect("written out");
    let (_, conv) = g
        .nodes()
        .find(|(_, n)| matches!(&n.kind, NodeKind::Call { target, .. } if target.name() == "torch.conv2d"))
        .expect("the convolution stays");
    let NodeKind::Call { args, .. } = &conv.kind else {
        unreachable!()
    };
    for a in args {
        let Arg::Node(n) = a else { panic!("{a:?}") };
        assert_eq!(g.node(*n).meta.tensor().unwrap().dtype, DType::BFloat16);
        assert!(
            matches!(&g.node(*n).kind, NodeKind::Call { target, .. } if target.name() == "to"),
            "{:?}",
            g.node(*n).kind
        );
    }
    assert!(!g.nodes().any(
        |(_, n)| matches!(&n.kind, NodeKind::Call { target, .. } if target.name() == SET_AUTOCAST)
    ));
}

/// An op the native rules do not know and autocast does not run in its lower precision still
/// refuses: its result's dtype after the casts is not proved.
#[test]
fn an_unknown_op_in_a_region_still_refuses() {
    let e = explicit_casts(&region("conv_tbc_unknown", DType::BFloat16)).unwrap_err();
    assert!(e.contains("torch.conv_tbc_unknown under autocast"), "{e}");
}

/// `batch_norm` of a bfloat16 CUDA activation with float32 statistics and affine parameters,
/// in a region: autocast leaves it alone (it is in none of its lists), so no cast is written
/// for it, though the native rules do not know it on CUDA.
#[test]
fn a_cuda_batch_norm_in_a_region_is_left_as_traced() {
    let mut g = Graph::new();
    let x = g.placeholder("x", t(DType::BFloat16, &[2, 4, 6, 6], true));
    let stats: Vec<_> = ["mean", "var", "weight", "bias"]
        .iter()
        .map(|n| g.placeholder(n, t(DType::Float32, &[4], *n == "weight" || *n == "bias")))
        .collect();
    switch(&mut g, true);
    let mut args = vec![Arg::Node(x)];
    args.extend(stats.iter().map(|&s| Arg::Node(s)));
    args.extend([Arg::Bool(true), Arg::Float(0.1), Arg::Float(1e-5)]);
    let bn = g.call(
        "batch_norm",
        Target::Function("torch.nn.functional.batch_norm".into()),
        args.clone(),
        vec![],
        t(DType::BFloat16, &[2, 4, 6, 6], true),
    );
    switch(&mut g, false);
    g.output(vec![Arg::Node(bn)]);
    let out = explicit_casts(&g).expect("written out");
    let NodeKind::Call { args: now, .. } = &out.node(bn).kind else {
        unreachable!()
    };
    assert_eq!(now, &args);
    assert!(!out
        .nodes()
        .any(|(_, n)| matches!(&n.kind, NodeKind::Call { target, .. } if target.name() == "to")));
}
