//! Helpers shared by the integration tests: graph building with native metadata inference, and
//! running a graph compiled and through the reference interpreter.
#![allow(dead_code)]

use fx::{Arg, DType, Device, Graph, NodeId, NodeMeta, Target, TensorMeta};
use inductor::testing::{VecHost, VecTensor};
use inductor::{compile, CompiledGraph, Options};

pub fn f(name: &str) -> Target {
    Target::Function(name.to_string())
}

pub fn m(name: &str) -> Target {
    Target::Method(name.to_string())
}

pub fn input(g: &mut Graph, name: &str, dtype: DType, sizes: &[i64]) -> NodeId {
    g.placeholder(
        name,
        NodeMeta::Tensor(TensorMeta::contiguous(dtype, Device::cpu(), sizes)),
    )
}

/// Adds a call with metadata from `fx::infer`.
pub fn call(g: &mut Graph, target: Target, args: Vec<Arg>, kwargs: Vec<(&str, Arg)>) -> NodeId {
    let kwargs: Vec<(String, Arg)> = kwargs
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
    let meta = fx::infer(g, &target, &args, &kwargs)
        .unwrap_or_else(|e| panic!("infer {target:?} {args:?}: {e:?}"));
    let hint = target.name().rsplit('.').next().unwrap().to_string();
    g.call(&hint, target, args, kwargs, meta)
}

/// Adds a call whose metadata is the same as node `like`'s (for ops `fx::infer` does not model).
pub fn call_like(g: &mut Graph, target: Target, args: Vec<Arg>, like: NodeId) -> NodeId {
    let meta = g.node(like).meta.clone();
    let hint = target.name().rsplit('.').next().unwrap().to_string();
    g.call(&hint, target, args, vec![], meta)
}

pub fn n(id: NodeId) -> Arg {
    Arg::Node(id)
}

pub fn options() -> Options {
    let dir =
        std::env::temp_dir().join(format!("torchferro-inductor-tests-{}", std::process::id()));
    Options {
        cache_dir: dir,
        ..Options::default()
    }
}

/// Deterministic pseudo-random values in [-2, 2).
pub fn values(n: usize, seed: u64) -> Vec<f64> {
    let mut s = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (0..n)
        .map(|_| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((s >> 11) as f64 / (1u64 << 53) as f64) * 4.0 - 2.0
        })
        .collect()
}

pub fn inputs_for(host: &mut VecHost, g: &Graph, seed: u64) -> Vec<VecTensor> {
    g.placeholders()
        .iter()
        .enumerate()
        .map(|(i, &p)| {
            let t = g.node(p).meta.tensor().unwrap().clone();
            let sizes = t.known_sizes().unwrap();
            let strides = t.known_strides().unwrap();
            let numel: i64 = sizes.iter().product();
            let mut v = values(numel as usize, seed + i as u64);
            if !t.dtype.is_floating_point() {
                v.iter_mut().for_each(|x| *x = (*x * 3.0).round());
            }
            host.tensor_strided(t.dtype, &sizes, &strides, &v)
        })
        .collect()
}

/// Compiles, runs compiled and interpreted, asserts closeness; returns the compiled graph and
/// the compiled outputs.
pub fn check(g: &Graph, seed: u64) -> (CompiledGraph, Vec<Vec<f64>>) {
    check_with(g, seed, &options())
}

/// [`check`] under given options (a policy of its own).
pub fn check_with(g: &Graph, seed: u64, opts: &Options) -> (CompiledGraph, Vec<Vec<f64>>) {
    let c = compile(g, opts).unwrap_or_else(|e| panic!("compile: {e}"));
    let mut host = VecHost::new();
    let ins = inputs_for(&mut host, g, seed);
    let got = c
        .run(&mut host, &ins)
        .unwrap_or_else(|e| panic!("run: {e}\nfallbacks: {:?}", c.fallback_reasons()));
    let want = inductor::interp::run(c.ir(), &mut host, &ins).unwrap();
    assert_eq!(got.len(), want.len());
    let mut outs = Vec::new();
    for (a, b) in got.iter().zip(&want) {
        assert_eq!(a.sizes, b.sizes);
        assert_eq!(a.dtype, b.dtype);
        let (x, y) = (a.to_f64(), b.to_f64());
        assert_close(&x, &y, &c);
        outs.push(x);
    }
    (c, outs)
}

pub fn assert_close(x: &[f64], y: &[f64], c: &CompiledGraph) {
    assert_eq!(x.len(), y.len());
    for (i, (a, b)) in x.iter().zip(y).enumerate() {
        let ok = (a.is_nan() && b.is_nan()) || a == b || (a - b).abs() <= 1e-4 + 1e-4 * b.abs();
        assert!(
            ok,
            "element {i}: compiled {a} vs reference {b}\n{}",
            c.source()
        );
    }
}

/// The scheduler's rule for element-wise stages after a reduction (`schedule.rs::try_join`): an
/// element-wise node at the kernel's full extents that runs after a reduction of its kernel
/// reads something that kernel computes. Otherwise it gains nothing there and keeps a CUDA
/// column kernel from splitting (resnet50's channels-last backward, 40 ms kernels).
#[allow(dead_code)]
pub fn assert_no_unrelated_stage_after_a_reduction(c: &CompiledGraph) {
    use inductor::ir::IrNode;
    use inductor::schedule::Level;
    let ir = c.ir();
    for k in c.schedule().kernels.iter() {
        let mut made = Vec::new();
        let mut reduced = false;
        for kn in &k.nodes {
            let node = &ir.nodes[kn.node];
            match node {
                IrNode::Reduction { .. } => reduced = true,
                IrNode::Pointwise { body, .. } if reduced && kn.level == Level::Inner => {
                    let related = body.loads().any(|(b, _)| made.contains(&b));
                    assert!(
                        related,
                        "kernel {}: element node {:?} reads nothing the kernel computes, after \
                         a reduction",
                        k.name, kn.node
                    );
                }
                _ => {}
            }
            made.extend(node.outputs());
        }
    }
}
