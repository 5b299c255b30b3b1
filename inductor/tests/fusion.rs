//! Fusion verified by kernel counts, and lowered composites checked against direct formulas.

mod common;

use common::*;
use fx::{Arg, DType, Graph};
use inductor::testing::VecHost;

#[test]
fn sin_mul_add_cos_relu_is_one_kernel() {
    let mut g = Graph::new();
    let x = input(&mut g, "x", DType::Float32, &[33, 65]);
    let s = call(&mut g, m("sin"), vec![n(x)], vec![]);
    let s2 = call(&mut g, f("operator.mul"), vec![n(s), Arg::Int(2)], vec![]);
    let c = call(&mut g, m("cos"), vec![n(x)], vec![]);
    let a = call(&mut g, f("operator.add"), vec![n(s2), n(c)], vec![]);
    let r = call(&mut g, m("relu"), vec![n(a)], vec![]);
    g.output(vec![n(r)]);
    let (c, outs) = check(&g, 1);
    assert_eq!(c.num_kernels(), 1, "{}", c.source());
    assert_eq!(c.num_extern_calls(), 0);
    assert_eq!(c.num_fallbacks(), 0);
    let xs = values(33 * 65, 1);
    for (o, x) in outs[0].iter().zip(xs) {
        let x = x as f32;
        let want = ((x.sin() * 2.0) + x.cos()).max(0.0);
        assert!((*o as f32 - want).abs() < 1e-5);
    }
}

#[test]
fn softmax_last_dim_is_one_kernel() {
    let mut g = Graph::new();
    let x = input(&mut g, "x", DType::Float32, &[7, 129]);
    let s = call(&mut g, f("torch.softmax"), vec![n(x), Arg::Int(-1)], vec![]);
    g.output(vec![n(s)]);
    let (c, outs) = check(&g, 2);
    assert_eq!(c.num_kernels(), 1, "{}", c.source());
    let xs = values(7 * 129, 2);
    for r in 0..7 {
        let row = &xs[r * 129..(r + 1) * 129];
        let mx = row.iter().cloned().fold(f64::MIN, f64::max);
        let sum: f64 = row.iter().map(|v| (v - mx).exp()).sum();
        for j in 0..129 {
            let want = (row[j] - mx).exp() / sum;
            assert!((outs[0][r * 129 + j] - want).abs() < 1e-6);
        }
    }
}

#[test]
fn functional_softmax_and_log_softmax_spellings() {
    let mut g = Graph::new();
    let x = input(&mut g, "x", DType::Float64, &[3, 5, 4]);
    let a = call(
        &mut g,
        f("torch.nn.functional.softmax"),
        vec![n(x)],
        vec![("dim", Arg::Int(1))],
    );
    let b = call(&mut g, m("log_softmax"), vec![n(x), Arg::Int(1)], vec![]);
    let e = call(&mut g, m("exp"), vec![n(b)], vec![]);
    let d = call(&mut g, f("operator.sub"), vec![n(a), n(e)], vec![]);
    g.output(vec![n(d)]);
    let (c, outs) = check(&g, 3);
    assert_eq!(c.num_fallbacks(), 0, "{:?}", c.fallback_reasons());
    assert!(outs[0].iter().all(|v| v.abs() < 1e-12));
}

#[test]
fn layer_norm_is_one_kernel() {
    let mut g = Graph::new();
    let x = input(&mut g, "x", DType::Float32, &[6, 40]);
    let w = input(&mut g, "w", DType::Float32, &[40]);
    let b = input(&mut g, "b", DType::Float32, &[40]);
    let y = call(
        &mut g,
        f("torch.nn.functional.layer_norm"),
        vec![n(x), Arg::Tuple(vec![Arg::Int(40)]), n(w), n(b)],
        vec![("eps", Arg::Float(1e-5))],
    );
    g.output(vec![n(y)]);
    let (c, outs) = check(&g, 4);
    assert_eq!(c.num_kernels(), 1, "{}", c.source());
    let xs = values(240, 4);
    let ws = values(40, 5);
    let bs = values(40, 6);
    for r in 0..6 {
        let row = &xs[r * 40..(r + 1) * 40];
        let mean = row.iter().sum::<f64>() / 40.0;
        let var = row.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / 40.0;
        for j in 0..40 {
            let want = (row[j] - mean) / (var + 1e-5).sqrt() * ws[j] + bs[j];
            assert!(
                (outs[0][r * 40 + j] - want).abs() < 1e-4,
                "{} vs {want}",
                outs[0][r * 40 + j]
            );
        }
    }
}

#[test]
fn pointwise_after_matmul_is_one_kernel_after_the_gemm() {
    let mut g = Graph::new();
    let x = input(&mut g, "x", DType::Float32, &[8, 16]);
    let w = input(&mut g, "w", DType::Float32, &[16, 12]);
    let mm = call(&mut g, f("operator.matmul"), vec![n(x), n(w)], vec![]);
    let a = call(&mut g, f("operator.add"), vec![n(mm), Arg::Int(1)], vec![]);
    let r = call(&mut g, f("torch.relu"), vec![n(a)], vec![]);
    g.output(vec![n(r)]);
    let (c, outs) = check(&g, 7);
    assert_eq!(c.num_extern_calls(), 1);
    assert_eq!(c.num_kernels(), 1, "{}", c.source());
    let xs = values(128, 7);
    let ws = values(192, 8);
    for i in 0..8 {
        for j in 0..12 {
            let s: f64 = (0..16).map(|k| xs[i * 16 + k] * ws[k * 12 + j]).sum();
            assert!((outs[0][i * 12 + j] - (s + 1.0).max(0.0)).abs() < 1e-4);
        }
    }
}

#[test]
fn linear_gelu_mlp() {
    let mut g = Graph::new();
    let x = input(&mut g, "x", DType::Float32, &[2, 5, 16]);
    let w1 = input(&mut g, "w1", DType::Float32, &[32, 16]);
    let b1 = input(&mut g, "b1", DType::Float32, &[32]);
    let w2 = input(&mut g, "w2", DType::Float32, &[16, 32]);
    let h = call(
        &mut g,
        f("torch.nn.functional.linear"),
        vec![n(x), n(w1), n(b1)],
        vec![],
    );
    let h = call(
        &mut g,
        f("torch.nn.functional.gelu"),
        vec![n(h)],
        vec![("approximate", Arg::Str("tanh".into()))],
    );
    let o = call(
        &mut g,
        f("torch.nn.functional.linear"),
        vec![n(h), n(w2)],
        vec![],
    );
    let o = call(&mut g, f("torch.nn.functional.silu"), vec![n(o)], vec![]);
    g.output(vec![n(o)]);
    let (c, _) = check(&g, 9);
    assert_eq!(c.num_extern_calls(), 2);
    assert_eq!(c.num_fallbacks(), 0, "{:?}", c.fallback_reasons());
    assert_eq!(c.num_kernels(), 2, "{}", c.source());
}

#[test]
fn reductions_and_composites() {
    let mut g = Graph::new();
    let x = input(&mut g, "x", DType::Float32, &[4, 1, 6]);
    let s = call(
        &mut g,
        m("sum"),
        vec![n(x), Arg::Int(-1)],
        vec![("keepdim", Arg::Bool(true))],
    );
    let me = call(&mut g, f("torch.mean"), vec![n(x)], vec![]);
    let v = call(&mut g, f("torch.var"), vec![n(x), Arg::Int(2)], vec![]);
    let sd = call(
        &mut g,
        m("std"),
        vec![n(x)],
        vec![("dim", Arg::Int(0)), ("correction", Arg::Int(0))],
    );
    let mx = call(
        &mut g,
        f("torch.amax"),
        vec![n(x), Arg::Tuple(vec![Arg::Int(0), Arg::Int(2)])],
        vec![],
    );
    let hs = call_like(&mut g, f("torch.nn.functional.hardswish"), vec![n(x)], x);
    let cl = call(
        &mut g,
        f("torch.clamp"),
        vec![n(x)],
        vec![("min", Arg::Float(-0.5)), ("max", Arg::Float(0.5))],
    );
    let gt = call(
        &mut g,
        f("operator.gt"),
        vec![n(x), Arg::Float(0.0)],
        vec![],
    );
    let wh = call(
        &mut g,
        f("torch.where"),
        vec![n(gt), n(x), Arg::Float(0.25)],
        vec![],
    );
    let dr = call(
        &mut g,
        f("torch.nn.functional.dropout"),
        vec![n(x)],
        vec![("p", Arg::Float(0.1)), ("training", Arg::Bool(false))],
    );
    let sg = call(&mut g, f("torch.sigmoid"), vec![n(dr)], vec![]);
    g.output(vec![
        n(s),
        n(me),
        n(v),
        n(sd),
        n(mx),
        n(hs),
        n(cl),
        n(wh),
        n(sg),
    ]);
    let (c, outs) = check(&g, 10);
    assert_eq!(c.num_fallbacks(), 0, "{:?}", c.fallback_reasons());
    let xs = values(24, 10);
    let mean: f64 = xs.iter().sum::<f64>() / 24.0;
    assert!((outs[1][0] - mean).abs() < 1e-5);
    let row = &xs[0..6];
    let rm = row.iter().sum::<f64>() / 6.0;
    let rv = row.iter().map(|v| (v - rm).powi(2)).sum::<f64>() / 5.0;
    assert!((outs[2][0] - rv).abs() < 1e-5);
}

#[test]
fn views_are_index_arithmetic() {
    let mut g = Graph::new();
    let x = input(&mut g, "x", DType::Float32, &[4, 6]);
    let y = input(&mut g, "y", DType::Float32, &[6, 4]);
    let t = call(&mut g, m("t"), vec![n(x)], vec![]);
    let a = call(&mut g, f("operator.add"), vec![n(t), n(y)], vec![]);
    let v = call(
        &mut g,
        m("reshape"),
        vec![n(a), Arg::Int(3), Arg::Int(-1)],
        vec![],
    );
    let sl = call(
        &mut g,
        f("operator.getitem"),
        vec![
            n(v),
            Arg::Tuple(vec![
                Arg::Slice(
                    Box::new(Arg::Int(1)),
                    Box::new(Arg::None),
                    Box::new(Arg::None),
                ),
                Arg::None,
                Arg::Ellipsis,
                Arg::Slice(
                    Box::new(Arg::None),
                    Box::new(Arg::None),
                    Box::new(Arg::Int(3)),
                ),
            ]),
        ],
        vec![],
    );
    let p = call(
        &mut g,
        m("permute"),
        vec![n(sl), Arg::Int(2), Arg::Int(0), Arg::Int(1)],
        vec![],
    );
    let e = call(
        &mut g,
        m("expand"),
        vec![n(p), Arg::Int(2), Arg::Int(-1), Arg::Int(-1), Arg::Int(-1)],
        vec![],
    );
    let sq = call(&mut g, m("unsqueeze"), vec![n(e), Arg::Int(0)], vec![]);
    let sel = call(
        &mut g,
        m("select"),
        vec![n(sq), Arg::Int(1), Arg::Int(1)],
        vec![],
    );
    let out = call(&mut g, m("mul"), vec![n(sel), Arg::Float(2.0)], vec![]);
    g.output(vec![n(out), n(t)]);
    let (c, _) = check(&g, 11);
    assert_eq!(c.num_fallbacks(), 0, "{:?}", c.fallback_reasons());
    assert_eq!(c.num_kernels(), 1);
    // `x.t()` as an output is a view of the input, as in eager.
    let mut host = VecHost::new();
    let ins = inputs_for(&mut host, &g, 11);
    let outs = c.run(&mut host, &ins).unwrap();
    assert!(outs[1].same_storage(&ins[0]));
    assert_eq!(outs[1].strides, vec![1, 6]);
}

#[test]
fn unlowerable_ops_fall_back_and_are_reported() {
    let mut g = Graph::new();
    let x = input(&mut g, "x", DType::Float32, &[3, 5]);
    let a = call(&mut g, m("exp"), vec![n(x)], vec![]);
    let cs = call_like(&mut g, f("torch.cumprod"), vec![n(a), Arg::Int(-1)], a);
    let r = call(&mut g, f("torch.relu"), vec![n(cs)], vec![]);
    g.output(vec![n(r)]);
    let (c, outs) = check(&g, 12);
    assert_eq!(c.num_fallbacks(), 1);
    assert!(
        c.fallback_reasons()[0].contains("torch.cumprod"),
        "{:?}",
        c.fallback_reasons()
    );
    assert_eq!(c.num_kernels(), 2);
    let xs = values(15, 12);
    let want: f64 = xs[0..5].iter().map(|v| v.exp()).product();
    assert!((outs[0][4] - want).abs() < 1e-4);
}

#[test]
fn inplace_on_input_is_written_back() {
    let mut g = Graph::new();
    let x = input(&mut g, "x", DType::Float32, &[2, 3]);
    let y = call(&mut g, m("mul"), vec![n(x), Arg::Int(3)], vec![]);
    let _a = call(&mut g, m("add_"), vec![n(x), Arg::Int(1)], vec![]);
    let z = call(&mut g, f("operator.add"), vec![n(x), n(y)], vec![]);
    g.output(vec![n(z)]);
    let c = inductor::compile(&g, &options()).unwrap();
    let mut host = VecHost::new();
    let ins = inputs_for(&mut host, &g, 13);
    let xs = ins[0].to_f64();
    let out = c.run(&mut host, &ins).unwrap();
    let after = ins[0].to_f64();
    for i in 0..6 {
        let x0 = xs[i] as f32;
        assert_eq!(after[i] as f32, x0 + 1.0);
        assert_eq!(out[0].to_f64()[i] as f32, (x0 + 1.0) + x0 * 3.0);
    }
}

#[test]
fn int_and_bool_ops() {
    let mut g = Graph::new();
    let x = input(&mut g, "x", DType::Int64, &[5, 3]);
    let y = input(&mut g, "y", DType::Float32, &[3]);
    let a = call(&mut g, f("operator.mul"), vec![n(x), Arg::Int(3)], vec![]);
    let b = call(
        &mut g,
        f("operator.truediv"),
        vec![n(a), Arg::Int(2)],
        vec![],
    );
    let c = call(&mut g, f("operator.add"), vec![n(b), n(y)], vec![]);
    let d = call(&mut g, f("operator.ge"), vec![n(x), Arg::Int(0)], vec![]);
    let e = call(&mut g, f("operator.invert"), vec![n(d)], vec![]);
    let s = call(&mut g, m("sum"), vec![n(x)], vec![("dim", Arg::Int(0))]);
    let an = call(&mut g, f("torch.any"), vec![n(e)], vec![]);
    g.output(vec![n(c), n(e), n(s), n(an)]);
    let (c, _) = check(&g, 14);
    assert_eq!(c.num_fallbacks(), 0, "{:?}", c.fallback_reasons());
}

#[test]
fn dead_buffers_are_reused() {
    let mut g = Graph::new();
    let x = input(&mut g, "x", DType::Float32, &[8, 8]);
    let w = input(&mut g, "w", DType::Float32, &[8, 8]);
    let mut h = x;
    for _ in 0..4 {
        let mm = call(&mut g, f("torch.mm"), vec![n(h), n(w)], vec![]);
        h = call(&mut g, f("torch.tanh"), vec![n(mm)], vec![]);
    }
    g.output(vec![n(h)]);
    let (c, _) = check(&g, 15);
    assert_eq!(c.num_extern_calls(), 4);
    let reused = c.schedule().reuse.iter().filter(|r| r.is_some()).count();
    assert!(
        reused >= 2,
        "expected buffer reuse, plan: {:?}",
        c.schedule().reuse
    );
}

#[test]
fn a_value_realized_for_an_extern_call_is_read_back_not_recomputed() {
    // y = exp(x) * 2 is lazy until the GEMM needs it in memory; the add after the GEMM must then
    // read that buffer rather than compute exp again (resnet's max-pool feeds both a convolution
    // and the residual add after it).
    let mut g = Graph::new();
    let x = input(&mut g, "x", DType::Float32, &[8, 8]);
    let w = input(&mut g, "w", DType::Float32, &[8, 8]);
    let e = call(&mut g, m("exp"), vec![n(x)], vec![]);
    let y = call(&mut g, f("operator.mul"), vec![n(e), Arg::Int(2)], vec![]);
    let a = call(&mut g, f("torch.mm"), vec![n(y), n(w)], vec![]);
    let out = call(&mut g, f("operator.add"), vec![n(a), n(y)], vec![]);
    g.output(vec![n(out)]);
    let (c, _) = check(&g, 3);
    let exps = c
        .ir()
        .nodes
        .iter()
        .filter_map(|node| match node {
            inductor::ir::IrNode::Pointwise { body, .. } => Some(body),
            _ => None,
        })
        .flat_map(|b| b.vals.iter())
        .filter(|v| matches!(v, inductor::ir::Val::Unary(inductor::ir::UnOp::Exp, _)))
        .count();
    assert_eq!(exps, 1, "{}", c.source());
    assert_eq!(c.num_kernels(), 2, "{}", c.source());
}
