//! The generated CUDA kernels run on a GPU and match the reference interpreter: each graph is
//! compiled for the device's compute capability, its inputs copied to device buffers, its
//! kernels launched in schedule order on a stream ([`inductor::cuda::CudaKernels`]), and its
//! outputs copied back and compared with [`inductor::interp::run`] on the same inputs.
//!
//! Without a CUDA driver or a GPU (CI), each test prints why and passes without checking;
//! `scripts/gpu_cuda_check.sh` runs this binary on the GPU machine.
#![cfg(feature = "cuda")]

mod common;

use std::path::PathBuf;

use common::*;
use cudarc::driver::{result, sys, CudaContext};
use fx::{Arg, DType, Device, Graph, NodeMeta, TensorMeta};
use inductor::cuda::{compile_graph, launch, nvrtc, CudaKernels};
use inductor::ir::{BufId, BufKind, OutputSpec};
use inductor::schedule::Step;
use inductor::size::expect_consts;
use inductor::testing::{VecHost, VecTensor};
use inductor::{CudaPolicy, Host};

fn meta(dtype: DType, sizes: &[i64]) -> NodeMeta {
    NodeMeta::Tensor(TensorMeta::contiguous(dtype, Device::cpu(), sizes))
}

fn site_dirs() -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    for py in [
        std::env::var("PYTHON").unwrap_or_default(),
        "python3".into(),
    ] {
        if py.is_empty() {
            continue;
        }
        if let Ok(o) = std::process::Command::new(&py)
            .args(["-c", "import sys; print('\\n'.join(sys.path))"])
            .output()
        {
            let out = String::from_utf8_lossy(&o.stdout).into_owned();
            dirs.extend(out.lines().filter(|l| !l.is_empty()).map(PathBuf::from));
        }
    }
    dirs
}

/// The device's context, or `None` (after saying why) without a driver, a GPU or NVRTC.
fn device() -> Option<(std::sync::Arc<CudaContext>, CudaPolicy)> {
    if !launch::driver_present() {
        eprintln!("SKIPPED: no CUDA driver library");
        return None;
    }
    let ctx = match CudaContext::new(0) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("SKIPPED: no GPU: {e:?}");
            return None;
        }
    };
    if let Err(e) = nvrtc::load(&site_dirs()) {
        eprintln!("SKIPPED: {e}");
        return None;
    }
    let (major, minor) = ctx.compute_capability().expect("compute capability");
    Some((ctx, CudaPolicy::for_capability(major as u32, minor as u32)))
}

/// Runs `g` on the GPU and checks every output against the interpreter.
fn check_on_gpu(g: &Graph, seed: u64) {
    let Some((ctx, policy)) = device() else {
        return;
    };
    let dir = options().cache_dir;
    let c = compile_graph(g, &policy, &dir, &site_dirs()).unwrap_or_else(|e| panic!("{e}"));
    assert!(
        c.sched.steps.iter().all(|s| matches!(s, Step::Kernel(_))),
        "graphs here are kernels only"
    );
    let mut host = VecHost::new();
    let ins = inputs_for(&mut host, g, seed);
    let want = inductor::interp::run(&c.ir, &mut host, &ins).unwrap();
    let stream = ctx.default_stream();
    let raw = stream.cu_stream();
    // SAFETY: `CudaContext::new` made the device's primary context current on this thread; it
    // lives (in `ctx`) until the end of this function, after the kernels are dropped.
    let kernels = unsafe { CudaKernels::load(&c) }.unwrap_or_else(|e| panic!("{e}"));
    let bytes = |b: BufId| {
        let d = &c.ir.buffers[b];
        (d.storage_numel().expect_const("a test") * d.dtype.itemsize() as i64) as usize
    };
    // One device allocation per buffer (a buffer written in place over a donor uses the
    // donor's).
    let mut dev: Vec<Option<u64>> = vec![None; c.ir.buffers.len()];
    let root = |mut b: BufId| {
        while let Some(x) = c.sched.in_place[b] {
            b = x;
        }
        b
    };
    let alloc = |b: BufId, dev: &mut Vec<Option<u64>>| -> u64 {
        let r = root(b);
        if dev[r.index()].is_none() {
            // SAFETY: the context is current; the allocation is freed below.
            let p = unsafe { result::malloc_sync(bytes(r).max(1)) }.expect("cuMemAlloc");
            dev[r.index()] = Some(p);
        }
        dev[r.index()].unwrap()
    };
    for (b, d) in c.ir.buffers.iter_enumerated() {
        if let BufKind::Input(i) = d.kind {
            let p = alloc(b, &mut dev);
            let src = host.data_ptr(&ins[i]);
            // SAFETY: the input's storage spans `bytes(b)` bytes (its layout is the buffer's).
            let slice = unsafe { std::slice::from_raw_parts(src, bytes(b)) };
            // SAFETY: `p` has room for `bytes(b)` bytes.
            unsafe { result::memcpy_htod_sync(p, slice) }.expect("copy in");
        }
    }
    for (k, abi) in c.kernels.iter_enumerated() {
        let ptrs: Vec<u64> = abi.bufs.iter().map(|&b| alloc(b, &mut dev)).collect();
        // SAFETY: every pointer addresses a buffer of its declared layout; `raw` is the
        // context's stream.
        unsafe { kernels.launch(k, &ptrs, raw) }.unwrap_or_else(|e| panic!("{e}"));
    }
    // SAFETY: as above.
    let bad_index = unsafe { kernels.take_index_error(raw) }.expect("sync");
    assert!(!bad_index, "an in-range gather set the index flag");
    for (i, spec) in c.ir.outputs.iter().enumerate() {
        let (buf, view) = match spec {
            OutputSpec::Buffer(b) => (*b, None),
            OutputSpec::View(v) | OutputSpec::Own(v) => (v.buf, Some(v)),
        };
        let d = &c.ir.buffers[buf];
        let t: VecTensor = host
            .empty_strided(
                d.dtype,
                &expect_consts(&d.sizes, "a test"),
                &expect_consts(&d.strides, "a test"),
            )
            .unwrap();
        let dst = host.data_ptr(&t);
        // SAFETY: `t` was allocated with the buffer's layout, `bytes(buf)` bytes.
        let slice = unsafe { std::slice::from_raw_parts_mut(dst, bytes(buf)) };
        // SAFETY: the device buffer holds `bytes(buf)` bytes; the stream was synchronized.
        unsafe { result::memcpy_dtoh_sync(slice, alloc(buf, &mut dev)) }.expect("copy out");
        let t = match view {
            Some(v) => {
                let (sizes, strides) = v.const_layout();
                host.as_strided(&t, &sizes, &strides, v.offset.expect_const("a test"))
                    .unwrap()
            }
            None => t,
        };
        let (got, exp) = (t.to_f64(), want[i].to_f64());
        let tol = match d.dtype {
            DType::Float16 | DType::BFloat16 => 1e-2,
            DType::Float32 => 1e-5,
            _ => 1e-12,
        };
        assert_eq!(got.len(), exp.len());
        for (j, (a, b)) in got.iter().zip(&exp).enumerate() {
            let ok = (a.is_nan() && b.is_nan()) || a == b || (a - b).abs() <= tol * (1.0 + b.abs());
            assert!(
                ok,
                "output {i} element {j}: GPU {a} vs reference {b}\n{}",
                c.source
            );
        }
    }
    drop(kernels);
    for p in dev.into_iter().flatten() {
        // SAFETY: allocated above, freed once; the stream is idle.
        let _ = unsafe { result::free_sync(p as sys::CUdeviceptr) };
    }
}

#[test]
fn softmax_and_log_softmax_rows_match() {
    for (name, dt, sizes) in [
        ("torch.softmax", DType::Float32, vec![64, 1000]),
        ("torch.softmax", DType::Float32, vec![3, 20000]),
        ("torch.softmax", DType::BFloat16, vec![16, 4096]),
        ("torch.softmax", DType::Float16, vec![7, 33]),
        ("torch.log_softmax", DType::Float64, vec![5, 1]),
        ("torch.log_softmax", DType::Float32, vec![2, 3, 300]),
    ] {
        let mut g = Graph::new();
        let x = input(&mut g, "x", dt, &sizes);
        let y = call(&mut g, f(name), vec![n(x), Arg::Int(-1)], vec![]);
        let z = call(
            &mut g,
            f("operator.mul"),
            vec![n(y), Arg::Float(3.0)],
            vec![],
        );
        g.output(vec![n(z)]);
        check_on_gpu(&g, 1);
    }
}

#[test]
fn layer_norm_and_reductions_match() {
    let mut g = Graph::new();
    let x = input(&mut g, "x", DType::Float32, &[6, 4000]);
    let w = input(&mut g, "w", DType::Float32, &[4000]);
    let b = input(&mut g, "b", DType::Float32, &[4000]);
    let y = call(
        &mut g,
        f("torch.nn.functional.layer_norm"),
        vec![n(x), Arg::Tuple(vec![Arg::Int(4000)]), n(w), n(b)],
        vec![("eps", Arg::Float(1e-5))],
    );
    let s0 = call(&mut g, m("sum"), vec![n(x)], vec![("dim", Arg::Int(0))]);
    let all = call(&mut g, m("mean"), vec![n(x)], vec![]);
    let am = g.call(
        "argmax",
        m("argmax"),
        vec![n(x), Arg::Int(-1)],
        vec![],
        meta(DType::Int64, &[6]),
    );
    let an = g.call(
        "argmin",
        m("argmin"),
        vec![n(x), Arg::Int(0)],
        vec![],
        meta(DType::Int64, &[4000]),
    );
    let mx = call(&mut g, m("amax"), vec![n(x), Arg::Int(1)], vec![]);
    g.output(vec![n(y), n(s0), n(all), n(am), n(an), n(mx)]);
    check_on_gpu(&g, 2);
}

#[test]
fn pointwise_layouts_and_dtypes_match() {
    let mut g = Graph::new();
    let x = input(&mut g, "x", DType::Float16, &[33, 17]);
    let i = input(&mut g, "i", DType::Int64, &[17]);
    let bl = input(&mut g, "b", DType::Bool, &[33, 1]);
    let t = call(&mut g, m("t"), vec![n(x)], vec![]);
    let e = call(&mut g, f("torch.exp"), vec![n(t)], vec![]);
    let fi = call(&mut g, m("float"), vec![n(i)], vec![]);
    let s = call(&mut g, f("operator.add"), vec![n(x), n(fi)], vec![]);
    let w = call(
        &mut g,
        f("torch.where"),
        vec![n(bl), n(s), Arg::Float(0.5)],
        vec![],
    );
    let fl = call(
        &mut g,
        f("operator.floordiv"),
        vec![n(w), Arg::Float(0.3)],
        vec![],
    );
    let bf = call(
        &mut g,
        m("to"),
        vec![n(fl), Arg::DType(DType::BFloat16)],
        vec![],
    );
    g.output(vec![n(e), n(bf)]);
    check_on_gpu(&g, 3);
}

#[test]
fn large_pointwise_chain_matches() {
    let mut g = Graph::new();
    let x = input(&mut g, "x", DType::Float32, &[1 << 22]);
    let a = call(&mut g, f("torch.sin"), vec![n(x)], vec![]);
    let b = call(&mut g, f("operator.mul"), vec![n(a), n(x)], vec![]);
    let c = call(&mut g, f("torch.relu"), vec![n(b)], vec![]);
    g.output(vec![n(c)]);
    check_on_gpu(&g, 4);
}
