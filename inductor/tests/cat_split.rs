//! Stores split by `cat` parts (issue 14, Inductor's `ConcatKernel`): a stored `cat`, or a
//! stored value that reads one pointwise, runs one plain loop per part writing its range of
//! the buffer, with no select; values match the reference interpreter and direct formulas.

mod common;

use common::*;
use fx::{Arg, DType, Device, Graph, NodeMeta, TensorMeta};
use inductor::ir::{IrGraph, IrNode, Val};
use inductor::{CpuPolicy, Options, Target};

/// Splits at any size: the graphs here are small, below the default policy's threshold.
fn split_always() -> Options {
    Options {
        target: Target::Cpu(CpuPolicy {
            split_store_min_elems: 0,
            ..CpuPolicy::default()
        }),
        ..options()
    }
}

fn meta(dtype: DType, sizes: &[i64]) -> NodeMeta {
    NodeMeta::Tensor(TensorMeta::contiguous(dtype, Device::cpu(), sizes))
}

/// Pointwise nodes writing a range of their buffer, and selects left in any pointwise body.
fn ranges_and_selects(ir: &IrGraph) -> (usize, usize) {
    let ranges = ir.nodes.keys().filter(|&n| ir.writes_range(n)).count();
    let selects = ir
        .nodes
        .iter()
        .filter_map(|n| match n {
            IrNode::Pointwise { body, .. } => Some(body),
            _ => None,
        })
        .flat_map(|b| b.vals.iter())
        .filter(|v| matches!(v, Val::Where(..)))
        .count();
    (ranges, selects)
}

fn cat(g: &mut Graph, parts: &[fx::NodeId], dim: i64, sizes: &[i64]) -> fx::NodeId {
    g.call(
        "cat",
        f("torch.cat"),
        vec![
            Arg::List(parts.iter().map(|&p| n(p)).collect()),
            Arg::Int(dim),
        ],
        vec![],
        meta(DType::Float32, sizes),
    )
}

#[test]
fn a_returned_cat_is_one_loop_per_part_along_the_last_dim() {
    let mut g = Graph::new();
    let a = input(&mut g, "a", DType::Float32, &[3, 4]);
    let b = input(&mut g, "b", DType::Float32, &[3, 2]);
    let e = input(&mut g, "e", DType::Float32, &[3, 0]);
    let s = call(&mut g, m("sin"), vec![n(a)], vec![]);
    let c = cat(&mut g, &[s, e, b, a], -1, &[3, 10]);
    g.output(vec![n(c)]);
    let (c, outs) = check_with(&g, 1, &split_always());
    assert_eq!(c.num_fallbacks(), 0, "{:?}", c.fallback_reasons());
    // The empty part owns no range.
    assert_eq!(ranges_and_selects(c.ir()), (3, 0), "{}", c.source());
    assert_eq!(c.num_kernels(), 3, "{}", c.source());
    let (av, bv) = (values(12, 1), values(6, 2));
    for i in 0..3 {
        for j in 0..10 {
            let want = match j {
                0..=3 => (av[i * 4 + j] as f32).sin() as f64,
                4..=5 => bv[i * 2 + j - 4] as f32 as f64,
                _ => av[i * 4 + j - 6] as f32 as f64,
            };
            assert_eq!(outs[0][i * 10 + j], want, "{i} {j}");
        }
    }
}

#[test]
fn a_cat_along_dim_0_read_twice_is_stored_by_parts_and_read_back() {
    let mut g = Graph::new();
    let a = input(&mut g, "a", DType::Float32, &[2, 5]);
    let b = input(&mut g, "b", DType::Float32, &[3, 5]);
    let x = call(&mut g, m("neg"), vec![n(a)], vec![]);
    let c = cat(&mut g, &[x, b], 0, &[5, 5]);
    let s = call(&mut g, m("sum"), vec![n(c)], vec![]);
    g.output(vec![n(c), n(s)]);
    let (c, outs) = check_with(&g, 2, &split_always());
    assert_eq!(ranges_and_selects(c.ir()).0, 2, "{}", c.source());
    let (av, bv) = (values(10, 2), values(15, 3));
    let f32s = |v: &f64| *v as f32 as f64;
    let want: Vec<f64> = av
        .iter()
        .map(|v| -f32s(v))
        .chain(bv.iter().map(f32s))
        .collect();
    assert_eq!(outs[0], want);
    let total: f64 = want.iter().sum();
    assert!(
        (outs[1][0] - total).abs() < 1e-4,
        "{} vs {total}",
        outs[1][0]
    );
}

/// Rotary's `q * cos + rotate_half(q) * sin`: the consumer of the cat is split at the cat's
/// boundary, each half reading its part of `q` directly.
#[test]
fn a_pointwise_consumer_of_a_cat_is_split_at_its_parts() {
    let mut g = Graph::new();
    let q = input(&mut g, "q", DType::Float32, &[2, 3, 8]);
    let cos = input(&mut g, "cos", DType::Float32, &[3, 8]);
    let sin = input(&mut g, "sin", DType::Float32, &[3, 8]);
    let slice = |g: &mut Graph, lo: i64, hi: i64| {
        let s = Arg::Slice(
            Box::new(Arg::Int(lo)),
            Box::new(Arg::Int(hi)),
            Box::new(Arg::None),
        );
        call(
            g,
            f("operator.getitem"),
            vec![n(q), Arg::Tuple(vec![Arg::Ellipsis, s])],
            vec![],
        )
    };
    let hi = slice(&mut g, 4, 8);
    let lo = slice(&mut g, 0, 4);
    let neg = call(&mut g, m("neg"), vec![n(hi)], vec![]);
    let r = cat(&mut g, &[neg, lo], -1, &[2, 3, 8]);
    let qc = call(&mut g, m("mul"), vec![n(q), n(cos)], vec![]);
    let rs = call(&mut g, m("mul"), vec![n(r), n(sin)], vec![]);
    let out = call(&mut g, m("add"), vec![n(qc), n(rs)], vec![]);
    g.output(vec![n(out)]);
    let (c, outs) = check_with(&g, 3, &split_always());
    assert_eq!(c.num_fallbacks(), 0, "{:?}", c.fallback_reasons());
    assert_eq!(ranges_and_selects(c.ir()), (2, 0), "{}", c.source());
    let (qv, cv, sv) = (values(48, 3), values(24, 4), values(24, 5));
    for p in 0..48 {
        let (row, j) = ((p / 8) % 3, p % 8);
        let rot = if j < 4 { -qv[p + 4] } else { qv[p - 4] };
        let a = (qv[p] as f32) * (cv[row * 8 + j] as f32);
        let b = (rot as f32) * (sv[row * 8 + j] as f32);
        assert_eq!(outs[0][p], (a + b) as f64, "{p}");
    }
}

/// The CUDA target keeps one store per buffer.
#[test]
fn cuda_keeps_one_store_per_cat() {
    let mut g = Graph::new();
    let a = input(&mut g, "a", DType::Float32, &[3, 4]);
    let b = input(&mut g, "b", DType::Float32, &[3, 2]);
    let c = cat(&mut g, &[a, b], 1, &[3, 6]);
    g.output(vec![n(c)]);
    let cuda = inductor::lower::lower_for(&g, &Target::cuda(9, 0)).unwrap();
    assert_eq!(ranges_and_selects(&cuda), (0, 1));
    let cpu = inductor::lower::lower_for(&g, &split_always().target).unwrap();
    assert_eq!(ranges_and_selects(&cpu), (2, 0));
}

/// Under the default policy a small store keeps its one loop (an extra kernel call costs more
/// than the select there); from the threshold on it is split.
#[test]
fn a_small_cat_keeps_one_store_under_the_default_policy() {
    for (rows, want) in [(3, (0, 1)), (256, (2, 0))] {
        let mut g = Graph::new();
        let a = input(&mut g, "a", DType::Float32, &[rows, 4]);
        let b = input(&mut g, "b", DType::Float32, &[rows, 2]);
        let c = cat(&mut g, &[a, b], 1, &[rows, 6]);
        g.output(vec![n(c)]);
        let cpu = inductor::lower::lower_for(&g, &Target::default()).unwrap();
        assert_eq!(ranges_and_selects(&cpu), want, "rows {rows}");
    }
}
