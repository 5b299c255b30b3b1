//! The CUDA printer's output compiles with NVRTC to an sm_90 cubin (no GPU needed), for one
//! graph of each kernel shape: pointwise (transposed, broadcast, half precision, 64-bit
//! indices), row reductions (sum, max, mean, argmax/argmin), the fused softmax, log_softmax
//! and layer_norm kernels, a reduction over a leading dim, a whole-tensor reduction, a gather.
//! The whole lowering test set is compiled the same way through `TORCHFERRO_CUDA_CHECK` (see
//! `tests/test_cuda_codegen.py`).
//!
//! NVRTC is looked for as the inductor does (`$TORCHFERRO_NVRTC`, torch's wheel under the
//! Python's `sys.path`, the library path); the main checkout's `.venv` Python is asked for its
//! `sys.path` too. Without NVRTC each test prints why and passes without checking.
#![cfg(feature = "cuda")]

mod common;

use std::path::PathBuf;
use std::process::Command;

use common::*;
use fx::{Arg, DType, Device, Graph, NodeMeta, TensorMeta};
use inductor::cuda::{compile_graph, nvrtc};
use inductor::CudaPolicy;

fn meta(dtype: DType, sizes: &[i64]) -> NodeMeta {
    NodeMeta::Tensor(TensorMeta::contiguous(dtype, Device::cpu(), sizes))
}

/// `sys.path` of `$PYTHON`, of the main checkout's `.venv` Python, and of `python3`.
fn site_dirs() -> Vec<PathBuf> {
    let mut pythons: Vec<PathBuf> = Vec::new();
    if let Some(p) = std::env::var_os("PYTHON") {
        pythons.push(p.into());
    }
    let common = Command::new("git")
        .args(["rev-parse", "--path-format=absolute", "--git-common-dir"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .ok()
        .map(|o| PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()));
    if let Some(main) = common.as_ref().and_then(|c| c.parent()) {
        pythons.push(main.join(".venv/bin/python"));
    }
    pythons.push("python3".into());
    let mut dirs = Vec::new();
    for py in pythons {
        let out = Command::new(&py)
            .args(["-c", "import sys; print('\\n'.join(sys.path))"])
            .output();
        if let Ok(o) = out {
            dirs.extend(
                String::from_utf8_lossy(&o.stdout)
                    .lines()
                    .filter(|l| !l.is_empty())
                    .map(PathBuf::from),
            );
        }
    }
    dirs
}

/// Compiles `g` for sm_90; `None` (after saying why) when NVRTC is missing.
fn cuda(g: &Graph) -> Option<inductor::cuda::CudaGraph> {
    cuda_with(g, &CudaPolicy::default())
}

/// [`cuda`] under `policy`.
fn cuda_with(g: &Graph, policy: &CudaPolicy) -> Option<inductor::cuda::CudaGraph> {
    let site = site_dirs();
    if let Err(e) = nvrtc::load(&site) {
        eprintln!("SKIPPED: no NVRTC, the CUDA source is not compiled: {e}");
        return None;
    }
    let dir = options().cache_dir;
    match compile_graph(g, policy, &dir, &site) {
        Ok(c) => {
            assert!(!c.cubin.is_empty() || c.kernels.is_empty());
            dump(&c.source);
            Some(c)
        }
        Err(e) => panic!("{e}"),
    }
}

/// `TORCHFERRO_CUDA_DUMP=<dir>`: writes each source this test file compiles to
/// `<dir>/<test>-<n>.cu` (`n` counts the test's graphs), so the static sources of two builds can
/// be compared byte for byte (`diff -r`): the CUDA printer's symbolic paths must leave them
/// unchanged.
fn dump(source: &str) {
    use std::cell::Cell;
    thread_local!(static SEEN: Cell<usize> = const { Cell::new(0) });
    let Some(dir) = std::env::var_os("TORCHFERRO_CUDA_DUMP") else {
        return;
    };
    let n = SEEN.with(|c| {
        c.set(c.get() + 1);
        c.get()
    });
    let test = std::thread::current()
        .name()
        .unwrap_or("main")
        .replace("::", "-");
    let dir = PathBuf::from(dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(format!("{test}-{n}.cu")), source).unwrap();
}

fn softmax_like(name: &str, dt: DType, sizes: &[i64]) -> Graph {
    let mut g = Graph::new();
    let x = input(&mut g, "x", dt, sizes);
    let y = call(&mut g, f(name), vec![n(x), Arg::Int(-1)], vec![]);
    let z = call(
        &mut g,
        f("operator.mul"),
        vec![n(y), Arg::Float(3.0)],
        vec![],
    );
    g.output(vec![n(z)]);
    g
}

#[test]
fn softmax_rows_are_one_block_reduction_kernel() {
    for (dt, row) in [
        (DType::Float32, 1000),
        (DType::BFloat16, 4096),
        (DType::Float16, 20000),
    ] {
        let Some(c) = cuda(&softmax_like("torch.softmax", dt, &[64, row])) else {
            return;
        };
        assert_eq!(c.kernels.len(), 1, "{}", c.source);
        assert!(c.source.contains("tf_shfl"), "{}", c.source);
        let k = &c.kernels[inductor::schedule::KernelId::new(0)];
        assert_eq!(k.grid, 64);
        // Chunked rows: the main source holds the aligned instance only, the plain one waits
        // in a second source for a misaligned launch.
        assert!(k.aligned);
        assert!(c.source.contains("_body<true>(") && !c.source.contains("_body<false>("));
        assert!(!c.plain_parts.is_empty());
        for plain in c.plain_parts.values() {
            assert!(plain.contains("_body<false>(") && !plain.contains("_body<true>("));
        }
    }
    let Some(c) = cuda(&softmax_like("torch.log_softmax", DType::Float64, &[3, 7])) else {
        return;
    };
    assert_eq!(c.kernels.len(), 1, "{}", c.source);
    // Rows of 64: a warp each, 8 to a block.
    let Some(c) = cuda(&softmax_like("torch.softmax", DType::Float32, &[4099, 64])) else {
        return;
    };
    let k = &c.kernels[inductor::schedule::KernelId::new(0)];
    assert_eq!((k.grid, k.block), (513, 256), "{}", c.source);
    assert!(c.source.contains("__syncwarp();"), "{}", c.source);
    assert!(!c.source.contains("__syncthreads"), "{}", c.source);
}

#[test]
fn layer_norm_and_reductions_compile() {
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
    let Some(c) = cuda(&g) else { return };
    assert!(c.kernels.len() >= 3, "{}", c.source);
}

/// Few long rows split over many blocks (partials in a module workspace, the last block of a
/// row folds them in order); rows that fill the GPU, argmax and a softmax (a second pass over
/// the row after its reduction) do not split.
#[test]
fn few_long_rows_split_and_compile() {
    use inductor::schedule::KernelId;
    let mut g = Graph::new();
    let x = input(&mut g, "x", DType::Float32, &[1 << 22]);
    let h = input(&mut g, "h", DType::Float16, &[3, 1 << 20]);
    let i = input(&mut g, "i", DType::Int64, &[5, 1 << 16]);
    let total = call(&mut g, m("sum"), vec![n(x)], vec![]);
    let rows = call(&mut g, m("mean"), vec![n(h), Arg::Int(1)], vec![]);
    let top = call(&mut g, m("amax"), vec![n(i), Arg::Int(1)], vec![]);
    g.output(vec![n(total), n(rows), n(top)]);
    let Some(c) = cuda(&g) else { return };
    assert_eq!(
        c.source.matches("atomicAdd(&tf_cnt_").count(),
        3,
        "{}",
        c.source
    );
    let grids: Vec<u32> = c.kernels.iter().map(|k| k.grid).collect();
    // 512 threads x 4 elements a chunk, 8 chunks a part at least: 4M elements, 2048 chunks,
    // 256 parts; 3 rows of 1M, 512 chunks, 64 parts each; 5 rows of 64K, 32 chunks, 4 parts.
    assert!(grids.contains(&256), "{grids:?}\n{}", c.source);
    assert!(grids.contains(&(3 * 64)), "{grids:?}");
    assert!(grids.contains(&(5 * 4)), "{grids:?}");

    let mut g = Graph::new();
    let x = input(&mut g, "x", DType::Float32, &[4096, 4096]);
    let y = input(&mut g, "y", DType::Float32, &[2, 1 << 20]);
    let s = call(&mut g, m("sum"), vec![n(x), Arg::Int(1)], vec![]);
    let am = g.call(
        "argmax",
        m("argmax"),
        vec![n(y), Arg::Int(1)],
        vec![],
        meta(DType::Int64, &[2]),
    );
    g.output(vec![n(s), n(am)]);
    let Some(c) = cuda(&g) else { return };
    assert!(!c.source.contains("tf_cnt_"), "{}", c.source);
    assert_eq!(c.kernels[KernelId::new(0)].grid, 4096);
    let Some(c) = cuda(&softmax_like("torch.softmax", DType::Float32, &[2, 8192])) else {
        return;
    };
    assert!(!c.source.contains("tf_cnt_"), "{}", c.source);
}

/// Reductions over leading dims (a bias gradient's `sum(0)`) run on tiles of 32 columns with 8
/// threads each, split along the reduced space when the tiles are few; a later stage over the
/// reduced space keeps the tile whole, and a short reduced space keeps a thread per column.
#[test]
fn column_reductions_tile_and_split() {
    use inductor::schedule::KernelId;
    let mut g = Graph::new();
    let x = input(&mut g, "x", DType::Float32, &[8192, 768]);
    let h = input(&mut g, "h", DType::BFloat16, &[4096, 3072]);
    let s = call(&mut g, m("sum"), vec![n(x), Arg::Int(0)], vec![]);
    let mh = call(&mut g, m("mean"), vec![n(h), Arg::Int(0)], vec![]);
    g.output(vec![n(s), n(mh)]);
    let Some(c) = cuda(&g) else { return };
    assert_eq!(
        c.source.matches("atomicAdd(&tf_ccnt_").count(),
        2,
        "{}",
        c.source
    );
    let shapes: Vec<(u32, u32)> = c.kernels.iter().map(|k| (k.grid, k.block)).collect();
    // 768 columns: 24 tiles, 1024 / 24 = 42 parts (8192 / 64 = 128 would allow more);
    // 3072 columns: 96 tiles, 10 parts.
    assert!(shapes.contains(&(24 * 42, 256)), "{shapes:?}\n{}", c.source);
    assert!(shapes.contains(&(96 * 10, 256)), "{shapes:?}");

    // x.var(0): the squared deviations are a second pass over the column, so no split.
    let mut g = Graph::new();
    let x = input(&mut g, "x", DType::Float32, &[1000, 300]);
    let y = call(&mut g, m("var"), vec![n(x), Arg::Int(0)], vec![]);
    g.output(vec![n(y)]);
    let Some(c) = cuda(&g) else { return };
    assert!(c.source.contains("tf_col"), "{}", c.source);
    assert!(!c.source.contains("tf_ccnt_"), "{}", c.source);
    let k = &c.kernels[KernelId::new(0)];
    assert_eq!((k.grid, k.block), (10, 256), "{}", c.source);

    // Three rows reduced: a thread per column walks them.
    let mut g = Graph::new();
    let x = input(&mut g, "x", DType::Float32, &[3, 100_000]);
    let s = call(&mut g, m("sum"), vec![n(x), Arg::Int(0)], vec![]);
    g.output(vec![n(s)]);
    let Some(c) = cuda(&g) else { return };
    assert!(!c.source.contains("tf_col"), "{}", c.source);
}

/// Batch norm's backward over an NCHW activation, as the derivative rule writes it (the batch
/// statistics again from the saved input, then per channel the sums of the gradient and of
/// the gradient times the normalized input, and the input's gradient). The reduced space
/// holds the contiguous dim (W), so the reductions are one block per channel walking rows of
/// W, never column tiles of 32 channels 3136 elements apart (the per-channel loads of the
/// mean, 1/std and weight voted for the columns: 43 ms a kernel in resnet50's step on the
/// H100, session 24).
fn batch_norm_backward_like(dt: DType, sizes: [i64; 4]) -> Graph {
    let c = sizes[1];
    let mut g = Graph::new();
    let x = input(&mut g, "x", dt, &sizes);
    let gy = input(&mut g, "g", dt, &sizes);
    let w = input(&mut g, "w", DType::Float32, &[c]);
    let dims = || Arg::List(vec![Arg::Int(0), Arg::Int(2), Arg::Int(3)]);
    let keep = || vec![("keepdim", Arg::Bool(true))];
    let op = |g: &mut Graph, name: &str, a: Vec<Arg>| call(g, f(name), a, vec![]);
    let mean = call(&mut g, m("mean"), vec![n(x), dims()], keep());
    let xc = op(&mut g, "operator.sub", vec![n(x), n(mean)]);
    let sq = op(&mut g, "operator.mul", vec![n(xc), n(xc)]);
    let var = call(&mut g, m("mean"), vec![n(sq), dims()], keep());
    let var = op(&mut g, "operator.add", vec![n(var), Arg::Float(1e-5)]);
    let rstd = call(&mut g, m("rsqrt"), vec![n(var)], vec![]);
    let xhat = op(&mut g, "operator.mul", vec![n(xc), n(rstd)]);
    let t = op(&mut g, "operator.mul", vec![n(gy), n(xhat)]);
    let gw = call(&mut g, m("sum"), vec![n(t), dims()], vec![]);
    let gb = call(&mut g, m("sum"), vec![n(gy), dims()], vec![]);
    let shape = Arg::List(vec![Arg::Int(1), Arg::Int(c), Arg::Int(1), Arg::Int(1)]);
    let wb = call(&mut g, m("reshape"), vec![n(w), shape], vec![]);
    let gh = op(&mut g, "operator.mul", vec![n(gy), n(wb)]);
    let m1 = call(&mut g, m("mean"), vec![n(gh), dims()], keep());
    let t = op(&mut g, "operator.mul", vec![n(gh), n(xhat)]);
    let m2 = call(&mut g, m("mean"), vec![n(t), dims()], keep());
    let t = op(&mut g, "operator.mul", vec![n(xhat), n(m2)]);
    let d = op(&mut g, "operator.sub", vec![n(gh), n(m1)]);
    let d = op(&mut g, "operator.sub", vec![n(d), n(t)]);
    let gx = op(&mut g, "operator.mul", vec![n(d), n(rstd)]);
    g.output(vec![n(gx), n(gw), n(gb)]);
    g
}

#[test]
fn channel_sums_over_nchw_are_row_kernels() {
    let g = batch_norm_backward_like(DType::BFloat16, [64, 256, 56, 56]);
    let Some(c) = cuda(&g) else { return };
    assert!(!c.source.contains("tf_col"), "{}", c.source);
    assert!(c.source.contains("__shfl"), "{}", c.source);
    // A block per channel at least (the rows are the channels).
    let grids: Vec<u32> = c.kernels.iter().map(|k| k.grid).collect();
    assert!(grids.iter().all(|&b| b >= 256), "{grids:?}\n{}", c.source);

    // More per-channel loads than loads along the reduced space: they still do not vote.
    let mut g = Graph::new();
    let x = input(&mut g, "x", DType::BFloat16, &[64, 128, 28, 28]);
    let mut t = x;
    for name in ["a", "b", "c"] {
        let w = input(&mut g, name, DType::Float32, &[1, 128, 1, 1]);
        t = call(&mut g, f("operator.mul"), vec![n(t), n(w)], vec![]);
    }
    let dims = Arg::List(vec![Arg::Int(0), Arg::Int(2), Arg::Int(3)]);
    let s = call(&mut g, m("sum"), vec![n(t), dims], vec![]);
    g.output(vec![n(s)]);
    let Some(c) = cuda(&g) else { return };
    assert!(!c.source.contains("tf_col"), "{}", c.source);
}

#[test]
fn pointwise_layouts_and_dtypes_compile() {
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
    let Some(c) = cuda(&g) else { return };
    assert!(c.source.contains("typedef int ti;"), "{}", c.source);
}

/// `torch.rsqrt`, `x ** -0.5` and a normalization's inverse deviation are CUDA's `rsqrtf` (eager's
/// CUDA kernels call it), not a correctly rounded square root and division (two slow paths per
/// element in a batch norm's recompute); the CPU's C keeps `1 / sqrt`, eager's CPU result.
#[test]
fn rsqrt_is_cudas_own_on_the_gpu() {
    let mut g = Graph::new();
    let x = input(&mut g, "x", DType::BFloat16, &[64, 48]);
    let v = input(&mut g, "v", DType::Float32, &[48]);
    let u = input(&mut g, "u", DType::Float32, &[48]);
    let r = call(&mut g, f("torch.rsqrt"), vec![n(v)], vec![]);
    let p = call(
        &mut g,
        f("operator.pow"),
        vec![n(u), Arg::Float(-0.5)],
        vec![],
    );
    let y = call(&mut g, f("operator.mul"), vec![n(x), n(r)], vec![]);
    let z = call(&mut g, f("operator.add"), vec![n(y), n(p)], vec![]);
    let ln = call(
        &mut g,
        f("torch.nn.functional.layer_norm"),
        vec![n(x), Arg::List(vec![Arg::Int(48)])],
        vec![],
    );
    g.output(vec![n(z), n(ln)]);
    let compiled = inductor::compile(&g, &options()).expect("C");
    let cpu = compiled.source();
    assert!(
        cpu.contains("/ sqrtf(") && !cpu.contains("rsqrtf("),
        "{cpu}"
    );
    let Some(c) = cuda(&g) else { return };
    assert!(c.source.matches("rsqrtf(").count() >= 3, "{}", c.source);
    assert!(!c.source.contains("/ sqrtf("), "{}", c.source);
}

#[test]
fn embedding_gather_reports_out_of_range_through_the_module_flag() {
    let mut g = Graph::new();
    let ids = input(&mut g, "ids", DType::Int64, &[2, 5]);
    let w = input(&mut g, "w", DType::Float32, &[7, 4]);
    let e = g.call(
        "embedding",
        f("torch.nn.functional.embedding"),
        vec![n(ids), n(w)],
        vec![],
        meta(DType::Float32, &[2, 5, 4]),
    );
    g.output(vec![n(e)]);
    let Some(c) = cuda(&g) else { return };
    assert!(c.source.contains("tf_index_error = 1;"), "{}", c.source);
}

#[test]
fn a_second_compile_is_a_cache_hit_and_a_corrupt_entry_is_rebuilt() {
    let g = softmax_like("torch.softmax", DType::Float32, &[5, 123]);
    let Some(first) = cuda(&g) else { return };
    let second = cuda(&g).unwrap();
    assert!(second.nvrtc_time.is_none(), "warm compile ran NVRTC");
    assert_eq!(first.cubin, second.cubin);
    let dir = options().cache_dir.join("cuda");
    let mut corrupted = 0;
    for e in std::fs::read_dir(&dir).unwrap().flatten() {
        if e.path().extension().is_some_and(|x| x == "cubin") {
            let mut bytes = std::fs::read(e.path()).unwrap();
            bytes.truncate(bytes.len() / 2);
            std::fs::write(e.path(), bytes).unwrap();
            corrupted += 1;
        }
    }
    assert!(corrupted > 0);
    let third = cuda(&g).unwrap();
    assert!(third.nvrtc_time.is_some(), "a corrupt cubin was returned");
    assert_eq!(third.cubin, first.cubin);
}

// ---- Symbolic sizes (issue 18): one source for every size, compiled once. ----

/// A contiguous graph input with symbolic metadata (`fx::Dim::Sym` sizes and strides).
fn sym_input(g: &mut Graph, name: &str, dt: DType, sizes: Vec<fx::Dim>) -> fx::NodeId {
    let mut strides = vec![fx::Dim::Known(1); sizes.len()];
    let mut acc = fx::SymExpr::constant(1);
    for i in (0..sizes.len()).rev() {
        strides[i] = match acc.as_const() {
            Some(c) => fx::Dim::Known(c),
            None => fx::Dim::Sym(acc.clone()),
        };
        acc = acc.mul(&sizes[i].expr());
    }
    let meta = TensorMeta {
        dtype: dt,
        device: Device::cpu(),
        sizes,
        strides,
        requires_grad: false,
    };
    g.placeholder(name, NodeMeta::Tensor(meta))
}

fn s(k: u32) -> fx::Dim {
    fx::Dim::Sym(fx::SymExpr::symbol(k))
}

fn k(c: i64) -> fx::Dim {
    fx::Dim::Known(c)
}

/// A call with metadata from fx's symbolic inference (hints `s0 = 5`, `s1 = 7`).
fn scall(g: &mut Graph, target: fx::Target, args: Vec<Arg>) -> fx::NodeId {
    let (meta, _) = fx::infer::infer_symbolic(
        &fx::infer::InferCtx::default(),
        g,
        &target,
        &args,
        &[],
        fx::infer::Symbols::hints(&[5, 7]),
    )
    .unwrap_or_else(|e| panic!("infer {target:?} {args:?}: {e:?}"));
    let hint = target.name().rsplit('.').next().unwrap().to_string();
    g.call(&hint, target, args, vec![], meta)
}

/// Compiles a symbolic graph's one source (`None` without NVRTC), checking that every kernel
/// takes the graph's symbols by value and that the source names no hint as a size.
fn cuda_sym(g: &Graph, syms: &[u32]) -> Option<inductor::cuda::CudaGraph> {
    let c = cuda(g)?;
    assert!(!c.kernels.is_empty(), "{}", c.source);
    assert_eq!(c.ir.symbols(), syms, "{}", c.source);
    let params: String = syms
        .iter()
        .map(|k| format!(", const int64_t s{k})"))
        .collect();
    let last = params.rsplit(", ").next().unwrap().to_string();
    for abi in c.kernels.iter() {
        let head = c
            .source
            .lines()
            .find(|l| l.contains(&format!(" {}(", abi.name)) && l.contains("__global__"))
            .unwrap_or_else(|| panic!("no kernel {}:\n{}", abi.name, c.source));
        assert!(head.ends_with(&format!("{last} {{")), "{head}");
    }
    Some(c)
}

fn kid(i: usize) -> inductor::schedule::KernelId {
    inductor::schedule::KernelId::new(i)
}

/// The symbols' values `s0 = a, s1 = b`.
fn at(a: i64, b: i64) -> impl Fn(u32) -> i64 {
    move |k| if k == 0 { a } else { b }
}

#[test]
fn symbolic_pointwise_and_broadcast_take_sizes_as_parameters() {
    // exp(x * w) + 1 over x [s0, s1], w [s1] broadcast over rows; a transposed add.
    let mut g = Graph::new();
    let x = sym_input(&mut g, "x", DType::Float32, vec![s(0), s(1)]);
    let w = sym_input(&mut g, "w", DType::Float32, vec![s(1)]);
    let y = sym_input(&mut g, "y", DType::BFloat16, vec![s(1), s(0)]);
    let p = scall(&mut g, f("operator.mul"), vec![n(x), n(w)]);
    let e = scall(&mut g, m("exp"), vec![n(p)]);
    let o = scall(&mut g, f("operator.add"), vec![n(e), Arg::Float(1.0)]);
    let t = scall(&mut g, m("t"), vec![n(y)]);
    let o2 = scall(&mut g, f("operator.add"), vec![n(x), n(t)]);
    g.output(vec![n(o), n(o2)]);
    let Some(c) = cuda_sym(&g, &[0, 1]) else {
        return;
    };
    // Loop bounds and the flat split are expressions of the symbols; 64-bit indices.
    assert!(c.source.contains("i0 < (s0*s1)"), "{}", c.source);
    assert!(c.source.contains("% s1; rem0 /= s1;"), "{}", c.source);
    assert!(c.source.contains("typedef int64_t ti;"), "{}", c.source);
    assert!(!c.source.contains("typedef int ti;"), "{}", c.source);
    // The grid is computed per assignment: one block per 256 threads of `scalar_unroll`
    // elements each (no chunks: `s1` is not a multiple of 4 at every size), at most the
    // policy's 65536.
    let per = 256 * CudaPolicy::default().scalar_unroll as i64;
    for abi in c.kernels.iter() {
        let rule = abi.grid_rule.as_ref().expect("a symbolic grid");
        assert_eq!(rule.blocks(&at(5, 7)), Some(1));
        assert_eq!(
            rule.blocks(&at(1000, 1001)),
            Some(((1000 * 1001 + per - 1) / per) as u32)
        );
        assert_eq!(rule.blocks(&at(1 << 20, 1 << 12)), Some(1 << 16));
        assert!(!abi.aligned);
    }
}

#[test]
fn symbolic_extent_that_is_a_multiple_of_four_keeps_chunks() {
    // x [s0, 4*s1] viewed from [s0, s1, 4]: the innermost extent is a multiple of 4 at every
    // size, so the kernel keeps 128-bit chunks and its aligned instance.
    let mut g = Graph::new();
    let x = sym_input(&mut g, "x", DType::Float32, vec![s(0), s(1), k(4)]);
    let a = scall(&mut g, m("flatten"), vec![n(x), Arg::Int(1)]);
    let o = scall(&mut g, f("operator.mul"), vec![n(a), Arg::Float(2.0)]);
    g.output(vec![n(o)]);
    let Some(c) = cuda_sym(&g, &[0, 1]) else {
        return;
    };
    let abi = &c.kernels[kid(0)];
    assert!(abi.aligned, "{}", c.source);
    let rule = abi.grid_rule.as_ref().unwrap();
    // 4 elements per thread: 1024 per block.
    assert_eq!(rule.per_block, 1024);
    assert_eq!(rule.blocks(&at(64, 64)), Some(16));
}

#[test]
fn symbolic_rows_are_looped_block_reductions() {
    let mut g = Graph::new();
    // Rows of symbolic length: softmax, log_softmax and a normalization by mean and variance.
    let x = sym_input(&mut g, "x", DType::Float32, vec![s(0), s(1)]);
    let sm = scall(&mut g, f("torch.softmax"), vec![n(x), Arg::Int(-1)]);
    let ls = scall(&mut g, f("torch.log_softmax"), vec![n(x), Arg::Int(-1)]);
    let mu = scall(&mut g, m("mean"), vec![n(x), Arg::Int(-1), Arg::Bool(true)]);
    let d = scall(&mut g, f("operator.sub"), vec![n(x), n(mu)]);
    let sq = scall(&mut g, f("operator.mul"), vec![n(d), n(d)]);
    let var = scall(
        &mut g,
        m("mean"),
        vec![n(sq), Arg::Int(-1), Arg::Bool(true)],
    );
    let ve = scall(&mut g, f("operator.add"), vec![n(var), Arg::Float(1e-5)]);
    let r = scall(&mut g, f("torch.rsqrt"), vec![n(ve)]);
    let ln = scall(&mut g, f("operator.mul"), vec![n(d), n(r)]);
    // A symbolic row count over constant rows: layer_norm over 64 and softmax over 64.
    let h = sym_input(&mut g, "h", DType::BFloat16, vec![s(0), k(64)]);
    let hn = scall(
        &mut g,
        f("torch.nn.functional.layer_norm"),
        vec![n(h), Arg::List(vec![Arg::Int(64)])],
    );
    let hs = scall(&mut g, f("torch.softmax"), vec![n(h), Arg::Int(-1)]);
    g.output(vec![n(sm), n(ls), n(ln), n(hn), n(hs)]);
    let Some(c) = cuda_sym(&g, &[0, 1]) else {
        return;
    };
    // The symbolic rows: one block of the policy's 512 threads per row, the chunk loop's trip
    // count computed by the kernel, block reductions through shuffles.
    assert!(c.source.contains("((s1 + 511) / 512)"), "{}", c.source);
    assert!(c.source.contains("row < s0;"), "{}", c.source);
    assert!(c.source.contains("tf_shfl"), "{}", c.source);
    let rows: Vec<_> = c
        .kernels
        .iter()
        .filter(|a| a.grid_rule.as_ref().is_some_and(|r| r.per_block == 1))
        .collect();
    assert!(!rows.is_empty(), "{}", c.source);
    for a in &rows {
        assert_eq!(a.block, 512);
        assert_eq!(a.grid_rule.as_ref().unwrap().blocks(&at(37, 3)), Some(37));
    }
    // The constant rows of 64 keep a warp each, 8 rows to a block.
    let warps: Vec<_> = c
        .kernels
        .iter()
        .filter(|a| a.grid_rule.as_ref().is_some_and(|r| r.per_block == 8))
        .collect();
    assert!(!warps.is_empty(), "{}", c.source);
    for a in &warps {
        assert_eq!(a.block, 256);
        assert_eq!(a.grid_rule.as_ref().unwrap().blocks(&at(37, 3)), Some(5));
    }
}

#[test]
fn symbolic_reductions_over_a_symbolic_dim() {
    let mut g = Graph::new();
    let x = sym_input(&mut g, "x", DType::Float32, vec![s(0), k(7)]);
    let y = sym_input(&mut g, "y", DType::Float32, vec![k(3), s(1)]);
    let z = sym_input(&mut g, "z", DType::Float16, vec![s(0), s(1)]);
    let c0 = scall(&mut g, m("sum"), vec![n(x), Arg::Int(0)]);
    let r1 = scall(&mut g, m("amax"), vec![n(y), Arg::Int(1)]);
    let all = scall(&mut g, m("sum"), vec![n(z)]);
    let am = scall(&mut g, m("argmax"), vec![n(z), Arg::Int(1)]);
    g.output(vec![n(c0), n(r1), n(all), n(am)]);
    let Some(c) = cuda_sym(&g, &[0, 1]) else {
        return;
    };
    // No split reductions or column tiles (their globals are sized by the row count).
    assert!(!c.source.contains("tf_ws_"), "{}", c.source);
    assert!(!c.source.contains("tf_cws_"), "{}", c.source);
    // The column sum over `s0` rows: one thread per column, walking the symbolic length.
    assert!(c.source.contains("p < s0;"), "{}", c.source);
}

#[test]
fn symbolic_views_slices_and_cat() {
    let mut g = Graph::new();
    let x = sym_input(&mut g, "x", DType::Float32, vec![s(0), s(1)]);
    let sl = scall(
        &mut g,
        f("operator.getitem"),
        vec![
            n(x),
            Arg::Tuple(vec![
                Arg::Slice(
                    Box::new(Arg::None),
                    Box::new(Arg::None),
                    Box::new(Arg::None),
                ),
                Arg::Slice(
                    Box::new(Arg::Int(1)),
                    Box::new(Arg::None),
                    Box::new(Arg::None),
                ),
            ]),
        ],
    );
    let a = scall(&mut g, f("operator.mul"), vec![n(sl), Arg::Float(3.0)]);
    let t = scall(&mut g, m("t"), vec![n(x)]);
    let r = scall(&mut g, m("reshape"), vec![n(t), Arg::Int(-1)]);
    let b = scall(&mut g, f("operator.add"), vec![n(r), Arg::Float(1.0)]);
    let x2 = scall(&mut g, f("operator.mul"), vec![n(x), Arg::Float(2.0)]);
    let cat = scall(
        &mut g,
        f("torch.cat"),
        vec![Arg::List(vec![n(x), n(x2)]), Arg::Int(0)],
    );
    g.output(vec![n(a), n(b), n(cat)]);
    let Some(c) = cuda_sym(&g, &[0, 1]) else {
        return;
    };
    // The slice's extent `s1 - 1` and cat's offset `s0` are expressions in the kernels.
    assert!(
        c.source.contains("(s1 - 1)") || c.source.contains("(-1 + s1)"),
        "{}",
        c.source
    );
}

/// A call whose contiguous metadata has the given symbolic sizes: fx's rules for these ops
/// check themselves against torch's meta tensors, which this crate's tests do not have.
fn hcall(
    g: &mut Graph,
    target: fx::Target,
    args: Vec<Arg>,
    dt: DType,
    sizes: Vec<fx::SymExpr>,
) -> fx::NodeId {
    let dims: Vec<fx::Dim> = sizes
        .iter()
        .map(|e| match e.as_const() {
            Some(c) => k(c),
            None => fx::Dim::Sym(e.clone()),
        })
        .collect();
    let p = sym_input(g, "shape", dt, dims);
    let meta = g.node(p).meta.clone();
    let hint = target.name().rsplit('.').next().unwrap().to_string();
    g.call(&hint, target, args, vec![], meta)
}

/// The index maps of `lower/index_maps.rs` (session 29) over symbolic sizes: `i mod s0`,
/// a window `i * step + j`, a diagonal of length `min(s0, s1)`, a gather, an unflatten, and
/// interpolations by exact and float32 source positions; one source compiles for every size.
#[test]
fn symbolic_index_maps_compile() {
    let (s0, s1) = (fx::SymExpr::symbol(0), fx::SymExpr::symbol(1));
    let c = fx::SymExpr::constant;
    let two = |e: &fx::SymExpr| e.mul_const(2);
    let mut g = Graph::new();
    let x = sym_input(&mut g, "x", DType::Float32, vec![s(0), s(1)]);
    let i = sym_input(&mut g, "i", DType::Int64, vec![s(0), s(1)]);
    let f32 = DType::Float32;
    let args = |v: Vec<Arg>| v;
    let r = hcall(
        &mut g,
        m("repeat"),
        args(vec![n(x), Arg::Int(2), Arg::Int(1)]),
        f32,
        vec![two(&s0), s1.clone()],
    );
    let u = hcall(
        &mut g,
        m("unflatten"),
        vec![
            n(r),
            Arg::Int(0),
            Arg::Tuple(vec![Arg::Int(2), Arg::Int(-1)]),
        ],
        f32,
        vec![c(2), s0.clone(), s1.clone()],
    );
    let w = hcall(
        &mut g,
        m("unfold"),
        vec![n(x), Arg::Int(1), Arg::Int(2), Arg::Int(1)],
        f32,
        vec![s0.clone(), s1.add_const(-1), c(2)],
    );
    let d = hcall(
        &mut g,
        m("diagonal"),
        vec![n(x)],
        f32,
        vec![s0.min_with(&s1, &|_| 2)],
    );
    let ga = hcall(
        &mut g,
        m("gather"),
        vec![n(x), Arg::Int(1), n(i)],
        f32,
        vec![s0.clone(), s1.clone()],
    );
    let x3 = scall(&mut g, m("unsqueeze"), vec![n(x), Arg::Int(0)]);
    let interp = |g: &mut Graph, scale: f64, mode: &str, out: fx::SymExpr| {
        hcall(
            g,
            f("torch.nn.functional.interpolate"),
            vec![
                n(x3),
                Arg::None,
                Arg::Float(scale),
                Arg::Str(mode.to_string()),
            ],
            f32,
            vec![c(1), s0.clone(), out],
        )
    };
    let up = interp(&mut g, 2.0, "nearest", two(&s1));
    let odd = interp(&mut g, 1.5, "nearest", s1.mul_const(3).floordiv(&c(2)));
    let lin = interp(&mut g, 0.5, "linear", s1.floordiv(&c(2)));
    g.output(vec![n(u), n(w), n(d), n(ga), n(up), n(odd), n(lin)]);
    let Some(c) = cuda_sym(&g, &[0, 1]) else {
        return;
    };
    // The repeat unflattened to `[2, s0, s1]` reads row `x1` itself (`(x0*s0 + x1) mod s0`
    // simplified); the float32 positions are floored in the kernel.
    assert!(c.source.contains("= b0[s1*x1 + x2];"), "{}", c.source);
    assert!(c.source.contains("floorf"), "{}", c.source);
}

#[test]
fn a_gemm_of_symbolic_rows_pads_its_long_unaligned_length() {
    // An LM head over `s0` rows: 50257 columns is no multiple of 16 bytes; the padding decision
    // takes the symbolic row count as long enough, so it is the same at every size.
    let mut g = Graph::new();
    let x = sym_input(&mut g, "x", DType::Float32, vec![s(0), k(768)]);
    let w = sym_input(&mut g, "w", DType::Float32, vec![k(768), k(50257)]);
    let y = scall(&mut g, f("torch.mm"), vec![n(x), n(w)]);
    let o = scall(&mut g, f("operator.mul"), vec![n(y), Arg::Float(2.0)]);
    g.output(vec![n(o)]);
    let Some(c) = cuda_sym(&g, &[0]) else {
        return;
    };
    let padded = c.ir.buffers.iter().any(|b| {
        b.sizes.len() == 2 && !b.sizes[0].is_const() && b.sizes[1] == 50272 // up to 128 bytes
    });
    assert!(
        padded,
        "{:?}",
        c.ir.buffers.iter().map(|b| &b.sizes).collect::<Vec<_>>()
    );
}

/// An int input used as a number through `//`, `%` and `max` (`x * (n // 2) + n % 3 *
/// max(n, 4)`, session 21): Python's floor division and remainder as `tf_floordivi` /
/// `tf_remi` on `int64` values (an int symbol may be negative, where C's `/` and `%` differ),
/// the max as the integer select, all in the one source NVRTC compiles.
#[test]
fn an_int_operand_through_floor_division_modulo_and_max() {
    let mut g = Graph::new();
    let x = sym_input(&mut g, "x", DType::Float32, vec![s(0)]);
    let nn = fx::SymExpr::symbol(1);
    let ni = g.placeholder("n", NodeMeta::SymInt(nn.clone()));
    let int = |e: fx::SymExpr| NodeMeta::SymInt(e);
    let q = g.call(
        "floordiv",
        f("operator.floordiv"),
        vec![n(ni), Arg::Int(2)],
        vec![],
        int(nn.floordiv(&2.into())),
    );
    let r = g.call(
        "mod",
        f("operator.mod"),
        vec![n(ni), Arg::Int(3)],
        vec![],
        int(nn.modulo(&3.into())),
    );
    let mx = g.call(
        "sym_max",
        f("torch.sym_max"),
        vec![n(ni), Arg::Int(4)],
        vec![],
        int(nn.max_with(&4.into(), &|_| i64::MIN)),
    );
    let a = scall(&mut g, f("operator.mul"), vec![n(x), n(q)]);
    let b = scall(&mut g, f("operator.mul"), vec![n(a), n(r)]);
    let o = scall(&mut g, f("operator.add"), vec![n(b), n(mx)]);
    g.output(vec![n(o)]);
    let Some(c) = cuda_sym(&g, &[0, 1]) else {
        return;
    };
    for want in ["tf_floordivi(", "tf_remi(", "TF_SELI(int64_t"] {
        assert!(c.source.contains(want), "{want}:\n{}", c.source);
    }
}

/// Float expressions of sizes (session 33: `x * s1 ** -0.5 + s0 / s1 + math.sqrt(s0)`,
/// torch's `SymFloat`s): computed from the symbols in double precision (`pow`, `sqrt` and a
/// division of doubles) and cast to the kernel's float, in the one source NVRTC compiles.
#[test]
fn a_float_expression_of_sizes_is_computed_in_double() {
    use fx::{FloatExpr as F, FloatOp};
    let mut g = Graph::new();
    let x = sym_input(&mut g, "x", DType::Float32, vec![s(0), s(1)]);
    let int = |k: u32| F::of_int(fx::SymExpr::symbol(k));
    let float = |g: &mut Graph, name: &str, target: &str, e: F| {
        g.call(name, f(target), vec![n(x)], vec![], NodeMeta::SymFloat(e))
    };
    let scale = float(
        &mut g,
        "pow",
        "operator.pow",
        F::binary(FloatOp::Pow, int(1), F::Const(-0.5)),
    );
    let ratio = float(
        &mut g,
        "truediv",
        "operator.truediv",
        F::binary(FloatOp::Div, int(0), int(1)),
    );
    let root = float(&mut g, "_sym_sqrt", "torch._sym_sqrt", F::sqrt(int(0)));
    let a = scall(&mut g, f("operator.mul"), vec![n(x), n(scale)]);
    let b = scall(&mut g, f("operator.add"), vec![n(a), n(ratio)]);
    let o = scall(&mut g, f("operator.add"), vec![n(b), n(root)]);
    g.output(vec![n(o)]);
    let Some(c) = cuda_sym(&g, &[0, 1]) else {
        return;
    };
    for want in ["pow(", "sqrt(", "(double)"] {
        assert!(c.source.contains(want), "{want}:\n{}", c.source);
    }
}

/// Python's roundings of floats of sizes (session 34: `x * round(s0 / 2) + (s0 / 2 // 1) +
/// max(s1 / 2, 3) + abs(s0 / 4 - 1) + s1 / 3 % 1.5`): the float operations on doubles
/// (`tf_floordivd`, `tf_remd`, `tf_maxd`, `fabs`), the rounding then the int, in the one source
/// NVRTC compiles.
#[test]
fn roundings_of_floats_of_sizes_are_computed_in_double() {
    use fx::{FloatExpr as F, FloatOp, IntRound, SymExpr};
    let mut g = Graph::new();
    let x = sym_input(&mut g, "x", DType::Float32, vec![s(0), s(1)]);
    let int = |k: u32| F::of_int(SymExpr::symbol(k));
    let half = |k: u32| F::binary(FloatOp::Div, int(k), F::Const(2.0));
    let float = |g: &mut Graph, name: &str, target: &str, e: F| {
        g.call(name, f(target), vec![n(x)], vec![], NodeMeta::SymFloat(e))
    };
    let rounded = g.call(
        "round",
        f("builtins.round"),
        vec![n(x)],
        vec![],
        NodeMeta::SymInt(SymExpr::of_float(IntRound::Round, half(0))),
    );
    let floored = float(
        &mut g,
        "floordiv",
        "operator.floordiv",
        F::binary(FloatOp::FloorDiv, half(0), F::Const(1.0)),
    );
    let mx = float(
        &mut g,
        "sym_max",
        "torch.sym_max",
        F::binary(FloatOp::Max, half(1), F::Const(3.0)),
    );
    let ab = float(
        &mut g,
        "abs",
        "operator.abs",
        F::abs(F::binary(
            FloatOp::Sub,
            F::binary(FloatOp::Div, int(0), F::Const(4.0)),
            F::Const(1.0),
        )),
    );
    let md = float(
        &mut g,
        "mod",
        "operator.mod",
        F::binary(
            FloatOp::Mod,
            F::binary(FloatOp::Div, int(1), F::Const(3.0)),
            F::Const(1.5),
        ),
    );
    let mut acc = scall(&mut g, f("operator.mul"), vec![n(x), n(rounded)]);
    for v in [floored, mx, ab, md] {
        acc = scall(&mut g, f("operator.add"), vec![n(acc), n(v)]);
    }
    g.output(vec![n(acc)]);
    let Some(c) = cuda_sym(&g, &[0, 1]) else {
        return;
    };
    for want in ["tf_floordiv", "tf_rem", "tf_max", "(double)"] {
        assert!(c.source.contains(want), "{want}:\n{}", c.source);
    }
}

/// A stack of layers: each layer norm's kernel prints the same text up to its buffers' ids, so
/// the source holds one of them and every layer launches that symbol with its own buffers; a
/// layer of another width, and two whole-tensor sums (split kernels with a workspace each),
/// are shared only where the text matches. With sharing off, every kernel is in the source.
#[test]
fn repeated_layers_share_one_compiled_kernel() {
    let layers = |share: bool| {
        let mut g = Graph::new();
        let mut h = input(&mut g, "x", DType::Float32, &[1024, 256]);
        let mut outs = vec![];
        for (i, width) in [256, 256, 256, 128].into_iter().enumerate() {
            let w = input(&mut g, &format!("w{i}"), DType::Float32, &[256]);
            let b = input(&mut g, &format!("b{i}"), DType::Float32, &[256]);
            let p = input(&mut g, &format!("p{i}"), DType::Float32, &[256, width]);
            let t = call(
                &mut g,
                f("torch.nn.functional.layer_norm"),
                vec![n(h), Arg::Tuple(vec![Arg::Int(256)]), n(w), n(b)],
                vec![("eps", Arg::Float(1e-5))],
            );
            let y = call(&mut g, f("torch.mm"), vec![n(t), n(p)], vec![]);
            outs.push(n(call(&mut g, m("sum"), vec![n(y)], vec![])));
            if width == 256 {
                h = y;
            }
        }
        g.output(outs);
        let site = site_dirs();
        if let Err(e) = nvrtc::load(&site) {
            eprintln!("SKIPPED: no NVRTC, the CUDA source is not compiled: {e}");
            return None;
        }
        let policy = CudaPolicy {
            share_kernels: share,
            ..CudaPolicy::default()
        };
        Some(compile_graph(&g, &policy, &options().cache_dir, &site).unwrap())
    };
    let Some(shared) = layers(true) else { return };
    let all = layers(false).unwrap();
    assert_eq!(shared.kernels.len(), all.kernels.len());
    let globals = |s: &str| s.matches("__global__").count();
    assert_eq!(globals(&all.source), all.kernels.len(), "{}", all.source);
    let mut names: Vec<&str> = shared.kernels.iter().map(|k| k.name.as_str()).collect();
    names.sort();
    names.dedup();
    assert_eq!(globals(&shared.source), names.len(), "{}", shared.source);
    // Three layer norms of width 256 and one whole-tensor sum of each width: 4 or fewer bodies
    // (a layer norm and its product's sum are separate kernels: the product is extern).
    assert!(
        names.len() + 4 <= all.kernels.len(),
        "{names:?} of {} kernels\n{}",
        all.kernels.len(),
        shared.source
    );
    // Every kernel keeps its own buffers and launch shape; only the symbol is another's.
    for (a, b) in shared.kernels.iter().zip(all.kernels.iter()) {
        assert_eq!((&a.bufs, a.grid, a.block), (&b.bufs, b.grid, b.block));
    }
    // A split sum declares its workspace once in the shared source.
    let ws = shared.source.matches("__device__ float tf_ws_").count();
    let ws_all = all.source.matches("__device__ float tf_ws_").count();
    assert!(
        ws >= 1 && ws < ws_all,
        "{ws} of {ws_all}\n{}",
        shared.source
    );
}

/// A placeholder with eager's channels-last strides (a model moved to `torch.channels_last`).
fn channels_last_input(g: &mut Graph, name: &str, dt: DType, sizes: &[i64]) -> fx::NodeId {
    let mut t = TensorMeta::contiguous(dt, Device::cpu(), sizes);
    t.strides = fx::infer::layout::channels_last_strides(sizes)
        .into_iter()
        .map(fx::Dim::Known)
        .collect();
    g.placeholder(name, NodeMeta::Tensor(t))
}

/// The 4-d buffers the graph computes (intermediates and outputs), by their strides.
fn computed_4d_strides(c: &inductor::cuda::CudaGraph) -> Vec<Vec<i64>> {
    c.ir.buffers
        .iter()
        .filter(|b| b.sizes.len() == 4 && b.kind == inductor::ir::BufKind::Computed)
        .map(|b| inductor::size::expect_consts(&b.strides, "a test"))
        .collect()
}

#[test]
fn a_channels_last_model_keeps_its_intermediates_channels_last() {
    // conv -> per-channel scale -> relu -> conv, with channels-last images and filters: eager
    // runs it all channels-last on CUDA, and so do the graph's kernels (session 27: contiguous
    // intermediates wrote every value the next convolution reads transposed).
    let sizes = [8, 32, 14, 14];
    let mut g = Graph::new();
    let x = channels_last_input(&mut g, "x", DType::BFloat16, &[8, 16, 14, 14]);
    let w = channels_last_input(&mut g, "w", DType::BFloat16, &[32, 16, 3, 3]);
    let w2 = channels_last_input(&mut g, "w2", DType::BFloat16, &[32, 32, 3, 3]);
    let s = input(&mut g, "s", DType::BFloat16, &[1, 32, 1, 1]);
    let pad = || vec![("padding", Arg::Int(1))];
    let a = call(&mut g, f("torch.conv2d"), vec![n(x), n(w)], pad());
    let a = call(&mut g, f("operator.mul"), vec![n(a), n(s)], vec![]);
    let r = call(&mut g, f("torch.relu"), vec![n(a)], vec![]);
    let y = call(&mut g, f("torch.conv2d"), vec![n(r), n(w2)], pad());
    g.output(vec![n(y), n(r)]);
    let on = CudaPolicy {
        channels_last: true,
        ..CudaPolicy::default()
    };
    assert!(inductor::Target::Cuda(on.clone()).channels_last(&g));
    // On by default (see `CudaPolicy::channels_last`); off, the graph stays contiguous.
    assert!(inductor::Target::Cuda(CudaPolicy::default()).channels_last(&g));
    let off = CudaPolicy {
        channels_last: false,
        ..CudaPolicy::default()
    };
    assert!(!inductor::Target::Cuda(off).channels_last(&g));
    let Some(c) = cuda_with(&g, &on) else { return };
    let cl = fx::infer::layout::channels_last_strides(&sizes);
    let strides = computed_4d_strides(&c);
    assert!(
        !strides.is_empty() && strides.iter().all(|s| *s == cl),
        "{strides:?}"
    );

    // The same model with contiguous filters and images stays contiguous.
    let mut g = Graph::new();
    let x = input(&mut g, "x", DType::BFloat16, &[8, 16, 14, 14]);
    let w = input(&mut g, "w", DType::BFloat16, &[32, 16, 3, 3]);
    let a = call(&mut g, f("torch.conv2d"), vec![n(x), n(w)], pad());
    let r = call(&mut g, f("torch.relu"), vec![n(a)], vec![]);
    g.output(vec![n(r)]);
    assert!(!inductor::Target::Cuda(on.clone()).channels_last(&g));
    let Some(c) = cuda_with(&g, &on) else { return };
    let contiguous = fx::infer::layout::contiguous_strides(&sizes);
    assert!(computed_4d_strides(&c).iter().all(|s| *s == contiguous));
}

#[test]
fn a_channels_last_backward_hands_convolution_backward_channels_last_gradients() {
    // resnet50's backward, reduced: a batch norm's input gradient (decomposed: an expand of
    // the tangent minus per-channel terms, times a channels-last saved value) feeds cuDNN's
    // `convolution_backward`. The gradient's metadata is contiguous (an elementwise op's
    // layout follows its first operand, here the expand), while eager's batch norm backward
    // returns it channels-last. Following the metadata wrote the gradient transposed and made
    // cuDNN copy it back to channels-last (session 31, H100: ~8 of the step's 34 ms).
    let (nb, c, h) = (8, 32, 14);
    let sizes = [nb, c, h, h];
    let mut g = Graph::new();
    let x = channels_last_input(&mut g, "x", DType::BFloat16, &[nb, 16, h, h]);
    let w = channels_last_input(&mut g, "w", DType::BFloat16, &[c, 16, 3, 3]);
    let saved = channels_last_input(&mut g, "saved", DType::BFloat16, &sizes);
    let tangent = input(&mut g, "tangent", DType::BFloat16, &[1, 1, 1, 1]);
    let s = input(&mut g, "s", DType::BFloat16, &[1, c, 1, 1]);
    let size_list = Arg::List(sizes.iter().map(|&d| Arg::Int(d)).collect());
    let e = call(&mut g, m("expand"), vec![n(tangent), size_list], vec![]);
    let d = call(&mut g, m("sub"), vec![n(e), n(s)], vec![]);
    let gi = call(&mut g, m("mul"), vec![n(d), n(saved)], vec![]);
    let gi_meta = g.node(gi).meta.tensor().unwrap().clone();
    assert_eq!(
        gi_meta.known_strides().unwrap(),
        fx::infer::layout::contiguous_strides(&sizes),
        "the premise: the gradient's metadata is contiguous"
    );
    let ints = |v: &[i64]| Arg::List(v.iter().map(|&i| Arg::Int(i)).collect());
    let bools = |v: &[bool]| Arg::List(v.iter().map(|&b| Arg::Bool(b)).collect());
    let out_meta = NodeMeta::Tuple(vec![
        meta(DType::BFloat16, &[nb, 16, h, h]),
        meta(DType::BFloat16, &[c, 16, 3, 3]),
        NodeMeta::None,
    ]);
    let cb = g.call(
        "convolution_backward",
        fx::Target::Function("torch.ops.aten.convolution_backward.default".into()),
        vec![
            n(gi),
            n(x),
            n(w),
            Arg::None,
            ints(&[1, 1]),
            ints(&[1, 1]),
            ints(&[1, 1]),
            Arg::Bool(false),
            ints(&[0, 0]),
            Arg::Int(1),
            bools(&[true, true, false]),
        ],
        vec![],
        out_meta,
    );
    let gx = g.call(
        "getitem",
        f("operator.getitem"),
        vec![n(cb), Arg::Int(0)],
        vec![],
        meta(DType::BFloat16, &[nb, 16, h, h]),
    );
    let r = call(&mut g, f("torch.relu"), vec![n(gx)], vec![]);
    let dims = Arg::List(vec![Arg::Int(0), Arg::Int(2), Arg::Int(3)]);
    let r = call(&mut g, m("sum"), vec![n(r), dims], vec![]);
    g.output(vec![n(r)]);
    let on = CudaPolicy {
        channels_last: true,
        ..CudaPolicy::default()
    };
    assert!(inductor::Target::Cuda(on.clone()).channels_last(&g));
    let Some(c) = cuda_with(&g, &on) else { return };
    let handed: Vec<Vec<i64>> =
        c.ir.nodes
            .iter()
            .filter_map(|node| match node {
                inductor::ir::IrNode::Fallback { args, .. } => match args.first() {
                    Some(inductor::ir::FallbackArg::Tensor(v)) => Some(v.const_layout().1),
                    _ => None,
                },
                _ => None,
            })
            .collect();
    assert_eq!(
        handed,
        vec![fx::infer::layout::channels_last_strides(&sizes)],
        "{}",
        c.source
    );
    // No 4-d intermediate is written in another layout (the gradient, and the input gradient
    // cuDNN returns, which the ReLU reads).
    let layouts: Vec<(Vec<i64>, Vec<i64>)> =
        c.ir.buffers
            .iter()
            .filter(|b| b.sizes.len() == 4 && b.kind == inductor::ir::BufKind::Computed)
            .map(|b| {
                (
                    inductor::size::expect_consts(&b.sizes, "a test"),
                    inductor::size::expect_consts(&b.strides, "a test"),
                )
            })
            .collect();
    assert!(
        layouts.len() >= 2
            && layouts
                .iter()
                .all(|(s, st)| *st == fx::infer::layout::channels_last_strides(s)),
        "{layouts:?}"
    );
}

#[test]
fn a_transposed_gemm_operand_is_padded_in_its_own_layout() {
    // GPT-2's tied LM head under autocast: `h @ w.to(bf16).t()` with `w` `[50257, 768]`. The
    // padded operand is written `[50304, 768]` row-major (read in the order the cast reads
    // `w`) and handed to cuBLAS transposed, not written transposed as `[768, 50304]`.
    let mut g = Graph::new();
    let h = input(&mut g, "h", DType::BFloat16, &[1024, 768]);
    let w = input(&mut g, "w", DType::Float32, &[50257, 768]);
    let wb = call(&mut g, m("bfloat16"), vec![n(w)], vec![]);
    let wt = call(&mut g, m("t"), vec![n(wb)], vec![]);
    let y = call(&mut g, f("torch.mm"), vec![n(h), n(wt)], vec![]);
    let o = call(
        &mut g,
        f("operator.mul"),
        vec![n(y), Arg::Float(2.0)],
        vec![],
    );
    g.output(vec![n(o)]);
    let Some(c) = cuda(&g) else { return };
    let two_d: Vec<(Vec<i64>, Vec<i64>)> =
        c.ir.buffers
            .iter()
            .filter(|b| b.sizes.len() == 2)
            .map(|b| {
                (
                    inductor::size::expect_consts(&b.sizes, "a test"),
                    inductor::size::expect_consts(&b.strides, "a test"),
                )
            })
            .collect();
    assert!(
        two_d.contains(&(vec![50304, 768], vec![768, 1])),
        "{two_d:?}"
    );
    assert!(
        !two_d.iter().any(|(s, _)| *s == vec![768, 50304]),
        "{two_d:?}"
    );
}

/// resnet50's channels-last batch-norm backward (H100 trace, session 29): two per-channel sums
/// over `[N, H, W]` of 64 channels (column reductions, two tiles of 32) and, of the same
/// extents by coincidence (`[64, N, H, W]`), a ReLU recomputed for another layer that reads
/// nothing the sums compute. Fused after the sums, it kept the column kernel from splitting
/// them over blocks: 2 blocks walked every position, 40 ms. It now runs as a kernel of its
/// own and the sums split.
#[test]
fn an_unrelated_element_node_does_not_keep_column_sums_from_splitting() {
    let mut g = Graph::new();
    let dt = DType::BFloat16;
    let nhwc = |g: &mut Graph, name: &str| {
        let t = input(g, name, dt, &[8, 28, 28, 64]);
        let perm = Arg::List(vec![Arg::Int(0), Arg::Int(3), Arg::Int(1), Arg::Int(2)]);
        call(g, m("permute"), vec![n(t), perm], vec![])
    };
    let x = nhwc(&mut g, "x");
    let gy = nhwc(&mut g, "g");
    let op = |g: &mut Graph, name: &str, a: Vec<Arg>| call(g, f(name), a, vec![]);
    let xf = call(&mut g, m("float"), vec![n(x)], vec![]);
    let gf = call(&mut g, m("float"), vec![n(gy)], vec![]);
    let mask = op(&mut g, "operator.le", vec![n(xf), Arg::Float(0.0)]);
    let gg = op(&mut g, "torch.where", vec![n(mask), Arg::Float(0.0), n(gf)]);
    let dims = || Arg::List(vec![Arg::Int(0), Arg::Int(2), Arg::Int(3)]);
    let s1 = call(&mut g, m("sum"), vec![n(gg), dims()], vec![]);
    let t = op(&mut g, "operator.mul", vec![n(gg), n(xf)]);
    let s2 = call(&mut g, m("sum"), vec![n(t), dims()], vec![]);
    // Another layer's activation, `[64, 8, 28, 28]`, channels last.
    let z = input(&mut g, "z", dt, &[64, 28, 28, 8]);
    let perm = Arg::List(vec![Arg::Int(0), Arg::Int(3), Arg::Int(1), Arg::Int(2)]);
    let z = call(&mut g, m("permute"), vec![n(z), perm], vec![]);
    let zf = call(&mut g, m("float"), vec![n(z)], vec![]);
    let y = op(&mut g, "operator.mul", vec![n(zf), Arg::Float(2.0)]);
    let y = op(&mut g, "torch.relu", vec![n(y)]);
    let y = call(&mut g, m("to"), vec![n(y), Arg::DType(dt)], vec![]);
    g.output(vec![n(s1), n(s2), n(y)]);
    let Some(c) = cuda(&g) else { return };
    let grids: Vec<u32> = c.kernels.iter().map(|k| k.grid).collect();
    assert!(c.source.contains("tf_cws_"), "{grids:?}\n{}", c.source);
    assert!(!grids.contains(&2), "{grids:?}\n{}", c.source);
}

/// GPT-2's tanh-GELU in a backward: `t = tanh(h)` (float32 of a bf16 activation) read by two
/// element-wise values a GEMM reads (the GELU output recomputed for a weight gradient, the
/// gradient through the GELU). On the GPU `t` is inlined into both (Inductor's rule on CUDA:
/// a body's math is not what a memory-bound kernel pays for); it was stored in float32 by a
/// kernel of its own and read back by both, 8 bytes an element more (session 33's H100 trace).
/// The CPU keeps storing it (Inductor's CPU rule for heavy ops: `tests/realize.rs`).
#[test]
fn a_transcendental_read_by_two_kernels_is_inlined_on_the_gpu() {
    let (rows, cols, k) = (64, 256, 32);
    let mut g = Graph::new();
    let h = input(&mut g, "h", DType::BFloat16, &[rows, cols]);
    let grad = input(&mut g, "grad", DType::BFloat16, &[rows, cols]);
    let w = input(&mut g, "w", DType::BFloat16, &[cols, k]);
    let hf = call(&mut g, m("float"), vec![n(h)], vec![]);
    let t = call(&mut g, f("torch.tanh"), vec![n(hf)], vec![]);
    let one = call(
        &mut g,
        f("operator.add"),
        vec![n(t), Arg::Float(1.0)],
        vec![],
    );
    let out = call(&mut g, f("operator.mul"), vec![n(hf), n(one)], vec![]);
    let out16 = call(
        &mut g,
        m("to"),
        vec![n(out), Arg::DType(DType::BFloat16)],
        vec![],
    );
    let gf = call(&mut g, m("float"), vec![n(grad)], vec![]);
    let sq = call(&mut g, f("operator.mul"), vec![n(t), n(t)], vec![]);
    let d = call(&mut g, f("operator.mul"), vec![n(gf), n(sq)], vec![]);
    let d16 = call(
        &mut g,
        m("to"),
        vec![n(d), Arg::DType(DType::BFloat16)],
        vec![],
    );
    let y1 = call(&mut g, f("torch.mm"), vec![n(out16), n(w)], vec![]);
    let y2 = call(&mut g, f("torch.mm"), vec![n(d16), n(w)], vec![]);
    g.output(vec![n(y1), n(y2)]);
    let Some(c) = cuda(&g) else { return };
    assert_eq!(c.source.matches("tanhf(").count(), 2, "{}", c.source);
    assert!(!c.source.contains("float *__restrict__"), "{}", c.source);
}

/// `F.max_pool2d`'s backward (`fx::autodiff::rules::MAX_POOL2D_BACKWARD`) is two kernels (each
/// window's argmax offset, then a gather over the input gradient) on both targets, with no host
/// call: resnet50's stem pool (3x3,
/// stride 2, padding 1) in bf16. A 5x5 pool of stride 1 (25 windows hold each position) stays
/// on the host.
#[test]
fn max_pool_backward_is_a_gather_kernel() {
    let graph = |k: i64, s: i64| {
        let mut g = Graph::new();
        let x = input(&mut g, "x", DType::BFloat16, &[2, 8, 14, 14]);
        let o = (14 + 2 - k) / s + 1;
        let gr = input(&mut g, "g", DType::BFloat16, &[2, 8, o, o]);
        let ints = |v: i64| Arg::List(vec![Arg::Int(v), Arg::Int(v)]);
        let b = call_like(
            &mut g,
            f(fx::autodiff::rules::MAX_POOL2D_BACKWARD),
            vec![
                n(gr),
                n(x),
                ints(k),
                ints(s),
                ints(1),
                ints(1),
                Arg::Bool(false),
            ],
            x,
        );
        g.output(vec![n(b)]);
        g
    };
    let g = graph(3, 2);
    let compiled = inductor::compile(&g, &options()).expect("C");
    assert!(
        compiled.fallback_reasons().is_empty(),
        "{:?}",
        compiled.fallback_reasons()
    );
    let Some(c) = cuda(&g) else { return };
    assert!(c.fallbacks.is_empty(), "{:?}", c.fallbacks);
    // The windows' argmax offsets (int8), then the gather.
    assert_eq!(c.kernels.len(), 2, "{}", c.source);
    let stride1 = cuda(&graph(3, 1)).expect("NVRTC");
    assert!(stride1.fallbacks.is_empty(), "{:?}", stride1.fallbacks);
    let wide = cuda(&graph(5, 1)).expect("NVRTC");
    assert_eq!(wide.fallbacks.len(), 1, "{:?}", wide.fallbacks);
    assert!(c.source.contains("int8_t"), "{}", c.source);
}
