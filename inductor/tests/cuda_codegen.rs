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
    let site = site_dirs();
    if let Err(e) = nvrtc::load(&site) {
        eprintln!("SKIPPED: no NVRTC, the CUDA source is not compiled: {e}");
        return None;
    }
    let dir = options().cache_dir;
    match compile_graph(g, &CudaPolicy::default(), &dir, &site) {
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
        let plain = c.plain_source.as_deref().expect("a plain source");
        assert!(plain.contains("_body<false>(") && !plain.contains("_body<true>("));
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
