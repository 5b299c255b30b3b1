//! Property test: random graphs of pointwise ops, broadcasts, views and reductions over small
//! shapes (size-1 dims included), compiled to C, must agree with the reference interpreter of
//! the same IR.

mod common;

use common::*;
use fx::{Arg, DType, Graph, NodeId};
use proptest::prelude::*;

#[derive(Clone, Debug)]
enum Op {
    Unary(usize, usize),
    Binary(usize, usize, usize),
    Scalar(usize, usize, i8),
    Reduce(usize, usize, usize, bool),
    Softmax(usize, usize),
    Transpose(usize, usize, usize),
    Unsqueeze(usize, usize),
    Slice(usize, usize, usize),
    Flatten(usize),
    Expand(usize, usize),
    Select(usize, usize),
    /// `x @ x.transpose(-1, -2)`: an extern GEMM whose output the next kernels read (and may
    /// overwrite in place, see `Schedule::in_place`).
    Gram(usize),
}

fn op() -> impl Strategy<Value = Op> {
    let i = || 0usize..64;
    prop_oneof![
        1 => (i(), 0usize..9).prop_map(|(a, k)| Op::Unary(a, k)),
        1 => (i(), i(), 0usize..5).prop_map(|(a, b, k)| Op::Binary(a, b, k)),
        1 => (i(), 0usize..4, -3i8..4).prop_map(|(a, k, c)| Op::Scalar(a, k, c)),
        1 => (i(), i(), 0usize..4, any::<bool>()).prop_map(|(a, d, k, kd)| Op::Reduce(a, d, k, kd)),
        1 => (i(), i()).prop_map(|(a, d)| Op::Softmax(a, d)),
        1 => (i(), i(), i()).prop_map(|(a, d0, d1)| Op::Transpose(a, d0, d1)),
        1 => (i(), i()).prop_map(|(a, d)| Op::Unsqueeze(a, d)),
        1 => (i(), i(), 0usize..3).prop_map(|(a, d, s)| Op::Slice(a, d, s)),
        1 => i().prop_map(Op::Flatten),
        1 => (i(), i()).prop_map(|(a, d)| Op::Expand(a, d)),
        1 => (i(), i()).prop_map(|(a, d)| Op::Select(a, d)),
        4 => i().prop_map(Op::Gram),
    ]
}

fn dims() -> impl Strategy<Value = Vec<i64>> {
    prop::collection::vec(prop::sample::select(vec![1i64, 2, 3, 4, 5, 7]), 0..4)
}

/// Tries to add a call; ops that torch would reject (per `fx::infer`) are skipped.
fn try_call(
    g: &mut Graph,
    vals: &mut Vec<NodeId>,
    target: fx::Target,
    args: Vec<Arg>,
    kwargs: Vec<(&str, Arg)>,
) {
    let kw: Vec<(String, Arg)> = kwargs
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect();
    if let Ok(meta) = fx::infer(g, &target, &args, &kw) {
        if meta.tensor().is_some() {
            let id = g.call("v", target, args, kw, meta);
            vals.push(id);
        }
    }
}

fn ndim(g: &Graph, id: NodeId) -> i64 {
    g.node(id).meta.tensor().unwrap().ndim() as i64
}

fn build(shape: &[i64], second: &[bool], f64_input: bool, ops: &[Op]) -> Graph {
    let mut g = Graph::new();
    let mut vals = vec![input(&mut g, "x", DType::Float32, shape)];
    // A second input broadcastable against the first (some dims squashed to 1).
    let s2: Vec<i64> = shape
        .iter()
        .zip(second.iter().chain(std::iter::repeat(&false)))
        .map(|(d, one)| if *one { 1 } else { *d })
        .collect();
    let dt = if f64_input {
        DType::Float64
    } else {
        DType::Float32
    };
    vals.push(input(&mut g, "y", dt, &s2));
    let unary = [
        "sin", "cos", "tanh", "exp", "abs", "neg", "sigmoid", "relu", "sqrt",
    ];
    let binary = [
        "operator.add",
        "operator.sub",
        "operator.mul",
        "torch.maximum",
        "operator.truediv",
    ];
    for op in ops {
        let pick = |i: usize| vals[i % vals.len()];
        match *op {
            Op::Unary(a, k) => {
                let x = pick(a);
                try_call(
                    &mut g,
                    &mut vals,
                    fx::Target::Method(unary[k].into()),
                    vec![Arg::Node(x)],
                    vec![],
                )
            }
            Op::Binary(a, b, k) => {
                let (x, y) = (pick(a), pick(b));
                try_call(
                    &mut g,
                    &mut vals,
                    f(binary[k]),
                    vec![Arg::Node(x), Arg::Node(y)],
                    vec![],
                )
            }
            Op::Scalar(a, k, c) => {
                let x = pick(a);
                let s = if k % 2 == 0 {
                    Arg::Int(c as i64)
                } else {
                    Arg::Float(c as f64 * 0.5)
                };
                let t = [
                    "operator.add",
                    "operator.mul",
                    "operator.sub",
                    "operator.mul",
                ][k];
                try_call(&mut g, &mut vals, f(t), vec![Arg::Node(x), s], vec![])
            }
            Op::Reduce(a, d, k, kd) => {
                let x = pick(a);
                let nd = ndim(&g, x).max(1);
                let dim = Arg::Int(d as i64 % nd);
                let t = ["sum", "amax", "mean", "amin"][k];
                try_call(
                    &mut g,
                    &mut vals,
                    m(t),
                    vec![Arg::Node(x), dim],
                    vec![("keepdim", Arg::Bool(kd))],
                )
            }
            Op::Softmax(a, d) => {
                let x = pick(a);
                let nd = ndim(&g, x).max(1);
                try_call(
                    &mut g,
                    &mut vals,
                    f("torch.softmax"),
                    vec![Arg::Node(x), Arg::Int(d as i64 % nd)],
                    vec![],
                )
            }
            Op::Transpose(a, d0, d1) => {
                let x = pick(a);
                let nd = ndim(&g, x).max(1);
                try_call(
                    &mut g,
                    &mut vals,
                    m("transpose"),
                    vec![
                        Arg::Node(x),
                        Arg::Int(d0 as i64 % nd),
                        Arg::Int(d1 as i64 % nd),
                    ],
                    vec![],
                )
            }
            Op::Unsqueeze(a, d) => {
                let x = pick(a);
                let nd = ndim(&g, x) + 1;
                try_call(
                    &mut g,
                    &mut vals,
                    m("unsqueeze"),
                    vec![Arg::Node(x), Arg::Int(d as i64 % nd)],
                    vec![],
                )
            }
            Op::Slice(a, d, s) => {
                let x = pick(a);
                let nd = ndim(&g, x);
                if nd == 0 {
                    continue;
                }
                let mut idx = vec![
                    Arg::Slice(
                        Box::new(Arg::None),
                        Box::new(Arg::None),
                        Box::new(Arg::None)
                    );
                    (d as i64 % nd) as usize
                ];
                idx.push(Arg::Slice(
                    Box::new(Arg::Int(s as i64 % 2)),
                    Box::new(Arg::None),
                    Box::new(Arg::Int(1 + s as i64)),
                ));
                try_call(
                    &mut g,
                    &mut vals,
                    f("operator.getitem"),
                    vec![Arg::Node(x), Arg::Tuple(idx)],
                    vec![],
                )
            }
            Op::Flatten(a) => {
                let x = pick(a);
                try_call(
                    &mut g,
                    &mut vals,
                    m("reshape"),
                    vec![Arg::Node(x), Arg::Int(-1)],
                    vec![],
                )
            }
            Op::Expand(a, d) => {
                let x = pick(a);
                let sizes = g.node(x).meta.tensor().unwrap().known_sizes().unwrap();
                let mut new: Vec<Arg> = sizes
                    .iter()
                    .map(|&s| Arg::Int(if s == 1 { 3 } else { s }))
                    .collect();
                new.insert(0, Arg::Int(1 + (d as i64 % 2)));
                let mut args = vec![Arg::Node(x)];
                args.extend(new);
                try_call(&mut g, &mut vals, m("expand"), args, vec![])
            }
            Op::Select(a, d) => {
                let x = pick(a);
                let nd = ndim(&g, x);
                if nd == 0 {
                    continue;
                }
                try_call(
                    &mut g,
                    &mut vals,
                    m("select"),
                    vec![Arg::Node(x), Arg::Int(d as i64 % nd), Arg::Int(-1)],
                    vec![],
                )
            }
            Op::Gram(a) => {
                let x = pick(a);
                if ndim(&g, x) < 2 {
                    continue;
                }
                let before = vals.len();
                try_call(
                    &mut g,
                    &mut vals,
                    m("transpose"),
                    vec![Arg::Node(x), Arg::Int(-1), Arg::Int(-2)],
                    vec![],
                );
                if vals.len() > before {
                    let t = *vals.last().unwrap();
                    try_call(
                        &mut g,
                        &mut vals,
                        f("torch.matmul"),
                        vec![Arg::Node(x), Arg::Node(t)],
                        vec![],
                    );
                }
            }
        }
    }
    let last = *vals.last().unwrap();
    let mid = vals[vals.len() / 2];
    g.output(vec![Arg::Node(last), Arg::Node(mid)]);
    g
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(
        std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(48)
    ))]

    #[test]
    fn compiled_kernels_match_the_reference_interpreter(
        shape in dims(),
        second in prop::collection::vec(any::<bool>(), 0..4),
        f64_input in any::<bool>(),
        ops in prop::collection::vec(op(), 1..10),
        seed in 0u64..1000,
    ) {
        let g = build(&shape, &second, f64_input, &ops);
        let (c, _) = check(&g, seed);
        prop_assert_eq!(c.num_fallbacks(), 0, "{:?}", c.fallback_reasons());
        assert_no_unrelated_stage_after_a_reduction(&c);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(
        std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(200)
    ))]

    /// The CUDA target's padded layouts (row strides of intermediates, zero-padded GEMM
    /// lengths), with thresholds small enough that these shapes pad, give the CPU lowering's
    /// values through the reference interpreter, and outputs keep eager's strides.
    #[test]
    fn padded_cuda_layouts_match_the_cpu_lowering(
        shape in dims(),
        second in prop::collection::vec(any::<bool>(), 0..4),
        f64_input in any::<bool>(),
        ops in prop::collection::vec(op(), 1..10),
        seed in 0u64..1000,
    ) {
        let g = build(&shape, &second, f64_input, &ops);
        let policy = inductor::CudaPolicy {
            pad_bytes: 16,
            pad_min_stride: 2,
            pad_gemm_min_dim: 1,
            ..inductor::CudaPolicy::default()
        };
        let cuda = inductor::lower::lower_for(&g, &inductor::Target::Cuda(policy)).unwrap();
        prop_assume!(!cuda.nodes.iter().any(|n| matches!(n, inductor::ir::IrNode::Fallback { .. })));
        let cpu = inductor::lower::lower_for(&g, &inductor::Target::default()).unwrap();
        let mut host = inductor::testing::VecHost::new();
        let ins = inputs_for(&mut host, &g, seed);
        let want = inductor::interp::run(&cpu, &mut host, &ins).unwrap();
        let got = inductor::interp::run(&cuda, &mut host, &ins).unwrap();
        prop_assert_eq!(got.len(), want.len());
        for (a, b) in got.iter().zip(&want) {
            prop_assert_eq!(&a.sizes, &b.sizes);
            // (A stride of a size-1 dim is never read: only the others must agree.)
            let strides = |t: &inductor::testing::VecTensor| -> Vec<i64> {
                t.strides.iter().zip(&t.sizes).filter(|(_, &n)| n > 1).map(|(&s, _)| s).collect()
            };
            prop_assert_eq!(strides(a), strides(b));
            let (a, b) = (a.to_f64(), b.to_f64());
            for (x, y) in a.iter().zip(&b) {
                let same = x == y
                    || (x.is_nan() && y.is_nan())
                    || (x - y).abs() <= 1e-6 * y.abs().max(1.0);
                prop_assert!(same, "{} against {}", x, y);
            }
        }
    }
}

/// A chain of GEMMs with pointwise work (and row softmaxes) between them: every epilogue kernel
/// reads a GEMM output for the last time, so the schedule writes it in place.
fn build_gemm_chain(rows: i64, cols: i64, steps: &[(usize, i8)]) -> Graph {
    let mut g = Graph::new();
    let x = input(&mut g, "x", DType::Float32, &[rows, cols]);
    let w = input(&mut g, "w", DType::Float32, &[cols, cols]);
    let bias = input(&mut g, "b", DType::Float32, &[cols]);
    let mut h = x;
    let mut kept = Vec::new();
    for &(k, c) in steps {
        h = call(&mut g, f("torch.mm"), vec![n(h), n(w)], vec![]);
        h = match k % 5 {
            0 => call(&mut g, m("tanh"), vec![n(h)], vec![]),
            1 => {
                let a = call(&mut g, f("operator.add"), vec![n(h), n(bias)], vec![]);
                call(&mut g, m("sigmoid"), vec![n(a)], vec![])
            }
            2 => call(&mut g, f("torch.softmax"), vec![n(h), Arg::Int(-1)], vec![]),
            3 => call(
                &mut g,
                f("operator.mul"),
                vec![n(h), Arg::Float(c as f64 * 0.25)],
                vec![],
            ),
            _ => {
                // Also kept for the output: no longer only an intermediate.
                let s = call(&mut g, m("sin"), vec![n(h)], vec![]);
                kept.push(s);
                s
            }
        };
    }
    let mut outs = vec![n(h)];
    outs.extend(kept.into_iter().map(n));
    g.output(outs);
    g
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(
        std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(32)
    ))]

    #[test]
    fn gemm_epilogues_written_in_place_match_the_reference_interpreter(
        rows in 1i64..9,
        cols in 1i64..9,
        steps in prop::collection::vec((0usize..5, -4i8..5), 1..6),
        seed in 0u64..1000,
    ) {
        let g = build_gemm_chain(rows, cols, &steps);
        let (c, _) = check(&g, seed);
        prop_assert_eq!(c.num_fallbacks(), 0, "{:?}", c.fallback_reasons());
        // Every epilogue but the last (a graph output) and the kept ones reads a GEMM output
        // for the last time and is followed by another GEMM.
        let intermediate = steps[..steps.len() - 1].iter().filter(|(k, _)| k % 5 != 4).count();
        let in_place = c.schedule().in_place.iter().filter(|x| x.is_some()).count();
        prop_assert_eq!(in_place, intermediate, "{}", c.source());
    }
}
