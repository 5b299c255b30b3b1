//! The target's policy (`Options::target`) is what lowering, planning and the C printer read:
//! a policy other than the default changes the generated code accordingly, and the kernels
//! still match the reference interpreter.

mod common;

use common::*;
use fx::{Arg, DType, Graph};
use inductor::target::ChannelsLast;
use inductor::testing::{VecHost, VecTensor};
use inductor::{compile, CompiledGraph, CpuPolicy, CudaPolicy, Options, Target};

fn with_policy(policy: CpuPolicy) -> Options {
    Options {
        target: Target::Cpu(policy),
        ..options()
    }
}

/// `exp(x) * 2` over a `[64, 64]` float32 input (4096 elements, 16 KiB).
fn pointwise_graph() -> Graph {
    let mut g = Graph::new();
    let x = input(&mut g, "x", DType::Float32, &[64, 64]);
    let e = call(&mut g, f("torch.exp"), vec![n(x)], vec![]);
    let y = call(&mut g, f("operator.mul"), vec![n(e), Arg::Int(2)], vec![]);
    g.output(vec![n(y)]);
    g
}

/// The compiled graph's outputs equal the reference interpreter's.
fn assert_matches_interpreter(g: &Graph, c: &CompiledGraph) {
    let mut host = VecHost::new();
    let ins = inputs_for(&mut host, g, 7);
    let got = c.run(&mut host, &ins).unwrap();
    let want = inductor::interp::run(c.ir(), &mut host, &ins).unwrap();
    for (a, b) in got.iter().zip(&want) {
        assert_close(&a.to_f64(), &b.to_f64(), c);
    }
}

/// Runs `g` lowered for the CPU and `ir` (its CUDA lowering) in the reference interpreter on
/// the same inputs (`seed`): equal sizes, values within `tol` relative; both runs' outputs
/// returned (CUDA, CPU), for their layouts.
fn matches_cpu(
    g: &Graph,
    ir: &inductor::ir::IrGraph,
    seed: u64,
    tol: f64,
) -> Vec<(VecTensor, VecTensor)> {
    let cpu = inductor::lower::lower_for(g, &Target::default()).unwrap();
    let mut host = VecHost::new();
    let ins = inputs_for(&mut host, g, seed);
    let want = inductor::interp::run(&cpu, &mut host, &ins).unwrap();
    let got = inductor::interp::run(ir, &mut host, &ins).unwrap();
    for (a, b) in got.iter().zip(&want) {
        assert_eq!(a.sizes, b.sizes);
        let (a, b) = (a.to_f64(), b.to_f64());
        assert!(a
            .iter()
            .zip(&b)
            .all(|(x, y)| (x - y).abs() <= tol * y.abs().max(1.0)));
    }
    got.into_iter().zip(want).collect()
}

/// Each graph output's strides, whether a whole buffer or a view of one.
fn output_strides(ir: &inductor::ir::IrGraph) -> Vec<Vec<i64>> {
    ir.outputs
        .iter()
        .map(|o| match o {
            inductor::ir::OutputSpec::View(v) => inductor::size::expect_consts(&v.strides, "t"),
            o => inductor::size::expect_consts(&ir.buffers[o.buf()].strides, "t"),
        })
        .collect()
}

#[test]
fn the_openmp_threshold_comes_from_the_policy() {
    let g = pointwise_graph();
    let default = compile(&g, &options()).unwrap();
    assert!(
        default.source().contains("if(parallel: 4096 >= 32768)"),
        "{}",
        default.source()
    );
    let low = compile(
        &g,
        &with_policy(CpuPolicy {
            parallel_threshold: 1024,
            ..CpuPolicy::default()
        }),
    )
    .unwrap();
    assert!(
        low.source().contains("if(parallel: 4096 >= 1024)"),
        "{}",
        low.source()
    );
    assert_matches_interpreter(&g, &low);
}

#[test]
fn huge_page_hints_follow_the_policy() {
    let g = pointwise_graph();
    let default = compile(&g, &options()).unwrap();
    assert!(
        !default.source().contains("tf_hugepage(b"),
        "{}",
        default.source()
    );
    let small = compile(
        &g,
        &with_policy(CpuPolicy {
            hugepage_min_bytes: Some(1 << 10),
            ..CpuPolicy::default()
        }),
    )
    .unwrap();
    // The output buffer (64 * 64 float32) is written from scratch by the kernel.
    assert!(small.source().contains(", 16384);"), "{}", small.source());
    assert_matches_interpreter(&g, &small);
}

#[test]
fn a_block_count_is_printed_unfolded_for_kernels_with_sizes_as_arguments() {
    // A column sum over [9, 200] runs 64 columns per block: 4 blocks.
    let mut g = Graph::new();
    let x = input(&mut g, "x", DType::Float32, &[9, 200]);
    let s = call(&mut g, m("sum"), vec![n(x)], vec![("dim", Arg::Int(0))]);
    g.output(vec![n(s)]);
    let default = compile(&g, &options()).unwrap();
    assert!(
        default.source().contains("xb < 4; xb++"),
        "{}",
        default.source()
    );
    let unfolded = compile(
        &g,
        &with_policy(CpuPolicy {
            sizes_unfolded: true,
            ..CpuPolicy::default()
        }),
    )
    .unwrap();
    assert!(
        unfolded.source().contains("xb < (200 + 63) / 64; xb++"),
        "{}",
        unfolded.source()
    );
    assert_matches_interpreter(&g, &default);
    assert_matches_interpreter(&g, &unfolded);
}

#[test]
fn dtypes_the_policy_supports_are_the_ones_lowered() {
    // A cast to float64 is lowered by the CPU policy.
    let mut g = Graph::new();
    let x = input(&mut g, "x", DType::Float32, &[8]);
    let y = call(&mut g, m("double"), vec![n(x)], vec![]);
    g.output(vec![n(y)]);
    let c = compile(&g, &options()).unwrap();
    assert_eq!(c.num_fallbacks(), 0, "{:?}", c.fallback_reasons());
    assert!(CpuPolicy::default().supports_dtype(DType::Float64));
    assert!(!CpuPolicy::default().supports_dtype(DType::Complex64));
}

#[test]
fn channels_last_can_be_turned_off() {
    // Two oneDNN-sized convolutions: the default policy lays the intermediate out channels-last,
    // `ChannelsLast::Never` keeps it contiguous; both compute the same values.
    let mut g = Graph::new();
    let x = input(&mut g, "x", DType::Float32, &[2, 16, 12, 12]);
    let w = input(&mut g, "w", DType::Float32, &[16, 16, 3, 3]);
    let a = call(
        &mut g,
        f("torch.conv2d"),
        vec![n(x), n(w)],
        vec![("padding", Arg::Int(1))],
    );
    let r = call(&mut g, f("torch.relu"), vec![n(a)], vec![]);
    let y = call(
        &mut g,
        f("torch.conv2d"),
        vec![n(r), n(w)],
        vec![("padding", Arg::Int(1))],
    );
    g.output(vec![n(y)]);
    let intermediate_strides = |c: &CompiledGraph| -> Vec<Vec<i64>> {
        c.ir()
            .buffers
            .iter()
            .filter(|b| b.sizes.len() == 4 && b.kind == inductor::ir::BufKind::Computed)
            .map(|b| inductor::size::expect_consts(&b.strides, "a test"))
            .collect()
    };
    let on = compile(&g, &options()).unwrap();
    let off = compile(
        &g,
        &with_policy(CpuPolicy {
            channels_last: ChannelsLast::Never,
            ..CpuPolicy::default()
        }),
    )
    .unwrap();
    let cl = fx::infer::layout::channels_last_strides(&[2, 16, 12, 12]);
    let contiguous = fx::infer::layout::contiguous_strides(&[2, 16, 12, 12]);
    // Batch 2 in float32: torch convolves on oneDNN.
    assert!(Target::default().channels_last(&g));
    assert!(intermediate_strides(&on).contains(&cl), "{}", on.source());
    assert!(
        intermediate_strides(&off).iter().all(|s| *s == contiguous),
        "{:?}",
        intermediate_strides(&off)
    );
}

/// The CUDA target shares lowering and planning: its policy's numbers are what they read (rows
/// up to `row_block * regs_per_thread` keep softmax single-pass, no channels-last, no huge
/// pages), and `compile` refuses to build host kernels for it (the graph runs eagerly) instead
/// of printing C for a GPU.
#[test]
fn cuda_target_policy_and_compile() {
    let t = Target::cuda(9, 0);
    let Target::Cuda(p) = &t else { unreachable!() };
    assert_eq!(p.arch(), "sm_90");
    assert_eq!(t.scratch_max(), 8192);
    assert!(!t.wants_hugepage(1 << 30));
    assert!(t.cpu().is_none());
    assert!(t.supports_dtype(DType::BFloat16) && !t.supports_dtype(DType::Complex64));
    let opts = Options {
        target: t,
        ..options()
    };
    // A CUDA target compiles CUDA C (NVRTC to a cubin, loaded on a device when the graph first
    // runs there), never host kernels; without NVRTC on this machine that is an error.
    match compile(&pointwise_graph(), &opts) {
        Ok(g) => assert!(
            g.source().contains("__global__"),
            "a CUDA graph compiled to host kernels:\n{}",
            g.source()
        ),
        Err(inductor::InductorError::NoNvrtc(_)) => {}
        Err(e) => panic!("{e}"),
    }
}

/// `relu(exp(x) @ w) + 1` and `exp(x) @ w` over `[4, 1030]` float32 rows: 1030 elements is
/// past the padding threshold and not a multiple of 32 (128 bytes).
fn padded_rows_graph() -> Graph {
    let mut g = Graph::new();
    let x = input(&mut g, "x", DType::Float32, &[4, 1030]);
    let w = input(&mut g, "w", DType::Float32, &[1030, 1030]);
    let e = call(&mut g, f("torch.exp"), vec![n(x)], vec![]);
    let c = call(&mut g, f("torch.mm"), vec![n(e), n(w)], vec![]);
    let r = call(&mut g, f("torch.relu"), vec![n(c)], vec![]);
    let y = call(&mut g, f("operator.add"), vec![n(r), Arg::Int(1)], vec![]);
    let out = call(&mut g, f("torch.mm"), vec![n(e), n(w)], vec![]);
    g.output(vec![n(y), n(out)]);
    g
}

/// On CUDA, intermediates with long unaligned rows get row strides padded to 128 bytes (cuBLAS
/// takes its aligned GEMM kernels only then): the realized GEMM operand and the internal GEMM
/// result are `[4, 1030]` with stride 1056; the outputs, including a GEMM's, keep eager's dense
/// strides. The CPU target pads nothing. Either way the values are the reference's.
#[test]
fn cuda_pads_the_rows_of_large_intermediates_not_outputs() {
    let g = padded_rows_graph();
    let strides_of = |ir: &inductor::ir::IrGraph| -> Vec<Vec<i64>> {
        ir.buffers
            .iter()
            .filter(|b| b.kind == inductor::ir::BufKind::Computed)
            .map(|b| inductor::size::expect_consts(&b.strides, "test"))
            .collect()
    };
    let cuda = inductor::lower::lower_for(&g, &Target::cuda(9, 0)).unwrap();
    let padded = strides_of(&cuda)
        .iter()
        .filter(|s| s.as_slice() == [1056, 1])
        .count();
    assert_eq!(padded, 2, "buffers: {:?}", strides_of(&cuda));
    for o in &cuda.outputs {
        let b = &cuda.buffers[o.buf()];
        assert_eq!(
            inductor::size::expect_consts(&b.strides, "test"),
            vec![1030, 1],
            "an output with padded strides"
        );
    }
    let cpu = inductor::lower::lower_for(&g, &Target::default()).unwrap();
    assert!(strides_of(&cpu)
        .iter()
        .all(|s| s[0] == 1030 || s.len() != 2));
    for (a, _) in matches_cpu(&g, &cuda, 3, 1e-6) {
        assert_eq!(a.strides, vec![1030, 1]);
    }
}

/// The padding rule: strides past the threshold round up to 128 bytes, innermost first, outer
/// strides built on the padded ones; dims of one and small rows are left alone.
#[test]
fn padded_strides_rule() {
    let p = CudaPolicy::default();
    assert_eq!(
        p.padded_strides(&[8192, 50257], DType::BFloat16),
        Some(vec![50304, 1])
    );
    assert_eq!(
        p.padded_strides(&[8, 1024, 50257], DType::Float32),
        Some(vec![1024 * 50272, 50272, 1])
    );
    assert_eq!(p.padded_strides(&[8192, 768], DType::BFloat16), None);
    assert_eq!(p.padded_strides(&[64, 1000], DType::Float32), None);
    assert_eq!(p.padded_strides(&[1, 50257], DType::Float32), None);
    assert_eq!(p.padded_strides(&[50257], DType::Float32), None);
    let off = CudaPolicy {
        pad_bytes: 0,
        ..CudaPolicy::default()
    };
    assert_eq!(off.padded_strides(&[8192, 50257], DType::BFloat16), None);
}

/// CUDA: a GEMM whose reduced or output length is past 1024 and not a multiple of 16 bytes has
/// its operands padded with zeros to 128-byte lengths (`[4, 1030] @ [1030, 1030]`: both), the
/// result is the product's first 1030 columns, and the values are the reference's. Products
/// with a length under `pad_gemm_min_dim` are left alone.
#[test]
fn cuda_pads_unaligned_gemm_lengths_with_zeros() {
    let g = padded_rows_graph();
    let small = CudaPolicy {
        pad_gemm_min_dim: 4,
        ..CudaPolicy::default()
    };
    let mm_inputs = |ir: &inductor::ir::IrGraph| -> Vec<Vec<Vec<i64>>> {
        ir.nodes
            .iter()
            .filter_map(|n| match n {
                inductor::ir::IrNode::Extern { inputs, .. } => Some(
                    inputs
                        .iter()
                        .map(|v| inductor::size::expect_consts(&v.sizes, "test"))
                        .collect(),
                ),
                _ => None,
            })
            .collect()
    };
    let padded = inductor::lower::lower_for(&g, &Target::Cuda(small)).unwrap();
    let shapes = mm_inputs(&padded);
    assert_eq!(shapes.len(), 2);
    for s in &shapes {
        assert_eq!(s, &vec![vec![4, 1056], vec![1056, 1056]], "{shapes:?}");
    }
    let plain = inductor::lower::lower_for(&g, &Target::cuda(9, 0)).unwrap();
    assert!(mm_inputs(&plain)
        .iter()
        .all(|s| s == &vec![vec![4, 1030], vec![1030, 1030]]));
    for (a, _) in matches_cpu(&g, &padded, 5, 1e-6) {
        assert_eq!(a.strides, vec![1030, 1]);
    }
}

/// `e = exp(x)` over `[4, 1030]` read by two products, `e.t() @ y` (nothing padded) and
/// `e @ w` (reduced length 1030 padded to 1056), then `(e @ w) @ w` (the padded product's
/// result as the next one's left operand): the graph of an LM head's backward, where the
/// logits' gradient feeds the weight's and the input's gradient.
fn shared_padded_operand_graph() -> Graph {
    let mut g = Graph::new();
    let x = input(&mut g, "x", DType::Float32, &[4, 1030]);
    let y = input(&mut g, "y", DType::Float32, &[4, 8]);
    let w = input(&mut g, "w", DType::Float32, &[1030, 1030]);
    let e = call(&mut g, f("torch.exp"), vec![n(x)], vec![]);
    let et = call(&mut g, f("torch.t"), vec![n(e)], vec![]);
    let a = call(&mut g, f("torch.mm"), vec![n(et), n(y)], vec![]);
    let b = call(&mut g, f("torch.mm"), vec![n(e), n(w)], vec![]);
    let c = call(&mut g, f("torch.mm"), vec![n(b), n(w)], vec![]);
    g.output(vec![n(a), n(c)]);
    g
}

/// CUDA: a value realized with padded rows is written out to the padded width with zeros in
/// the pad, so a GEMM that pads the same length with zeros reads that buffer as it is (no
/// copy into a padded operand), and so does one reading a padded GEMM's own result (its pad
/// columns are zeros too). Values are the CPU lowering's.
#[test]
fn cuda_padded_rows_are_zero_filled_and_read_by_padded_gemms() {
    let g = shared_padded_operand_graph();
    let small = CudaPolicy {
        pad_gemm_min_dim: 4,
        ..CudaPolicy::default()
    };
    let ir = inductor::lower::lower_for(&g, &Target::Cuda(small)).unwrap();
    let externs: Vec<(usize, Vec<usize>)> = ir
        .nodes
        .iter()
        .filter_map(|node| match node {
            inductor::ir::IrNode::Extern { out, inputs, .. } => {
                Some((out.index(), inputs.iter().map(|v| v.buf.index()).collect()))
            }
            _ => None,
        })
        .collect();
    assert_eq!(externs.len(), 3, "{externs:?}");
    let (first, second, third) = (&externs[0], &externs[1], &externs[2]);
    // `e.t() @ y` and `e @ w` read the same buffer: `e`, written once, 1056 wide.
    assert_eq!(first.1[0], second.1[0], "{externs:?}");
    let e = &ir.buffers[inductor::ir::BufId::new(first.1[0])];
    assert_eq!(
        inductor::size::expect_consts(&e.sizes, "test"),
        vec![4, 1056]
    );
    // `(e @ w) @ w` reads the padded product's buffer itself.
    assert_eq!(third.1[0], second.0, "{externs:?}");
    // One pointwise kernel writes `e`; nothing else copies a `[4, 1056]` operand.
    let wide_stores = ir
        .nodes
        .iter()
        .filter(|node| match node {
            inductor::ir::IrNode::Pointwise { out, .. } => {
                inductor::size::expect_consts(&ir.buffers[*out].sizes, "test") == vec![4, 1056]
            }
            _ => false,
        })
        .count();
    assert_eq!(wide_stores, 1);
    for (a, b) in matches_cpu(&g, &ir, 9, 1e-5) {
        assert_eq!(a.strides, b.strides);
    }
}

/// `exp(x) @ w` padded on CUDA, output twice: at a position in `free_outputs` (a training
/// forward's saved value) it is handed out as a view of the padded product (row stride
/// 1056), elsewhere in eager's dense layout; the values are the same.
#[test]
fn free_outputs_keep_the_padded_layout() {
    let mut g = Graph::new();
    let x = input(&mut g, "x", DType::Float32, &[4, 1030]);
    let w = input(&mut g, "w", DType::Float32, &[1030, 1030]);
    let e = call(&mut g, f("torch.exp"), vec![n(x)], vec![]);
    let p = call(&mut g, f("torch.mm"), vec![n(e), n(w)], vec![]);
    let q = call(&mut g, f("torch.mm"), vec![n(e), n(w)], vec![]);
    g.output(vec![n(p), n(q)]);
    let small = CudaPolicy {
        pad_gemm_min_dim: 4,
        ..CudaPolicy::default()
    };
    let ir = inductor::lower::lower_with(&g, &Target::Cuda(small), &[1]).unwrap();
    assert_eq!(output_strides(&ir), vec![vec![1030, 1], vec![1056, 1]]);
    matches_cpu(&g, &ir, 11, 1e-5);
}

/// With `padded_gemm_outputs` (torch.compile's `pad_mm` layout), a graph output that is a GEMM
/// product padded along its output length is handed out as a view of the padded product, a
/// 3-d `linear` (GPT-2's logits) too; an output computed from the product stays in eager's
/// dense layout; values are eager's. Off (the default), every output is dense.
#[test]
fn padded_gemm_outputs_keep_the_padded_layout_where_the_policy_says() {
    let mut g = Graph::new();
    let x = input(&mut g, "x", DType::Float32, &[2, 3, 1030]);
    let w = input(&mut g, "w", DType::Float32, &[1030, 1030]);
    let h = input(&mut g, "h", DType::Float32, &[6, 1030]);
    let lin = call(
        &mut g,
        f("torch.nn.functional.linear"),
        vec![n(x), n(w)],
        vec![],
    );
    let p = call(&mut g, f("torch.mm"), vec![n(h), n(w)], vec![]);
    let e = call(&mut g, f("torch.tanh"), vec![n(p)], vec![]);
    g.output(vec![n(lin), n(p), n(e)]);
    for (on, layouts) in [
        (
            false,
            vec![vec![3090, 1030, 1], vec![1030, 1], vec![1030, 1]],
        ),
        (
            true,
            vec![vec![3168, 1056, 1], vec![1056, 1], vec![1030, 1]],
        ),
    ] {
        let policy = CudaPolicy {
            pad_gemm_min_dim: 2,
            padded_gemm_outputs: on,
            ..CudaPolicy::default()
        };
        let ir = inductor::lower::lower_with(&g, &Target::Cuda(policy), &[]).unwrap();
        assert_eq!(output_strides(&ir), layouts, "padded_gemm_outputs: {on}");
        matches_cpu(&g, &ir, 13, 1e-4);
    }
}
