//! CUDA kernels: the graph lowered and scheduled as for the CPU, printed as CUDA C
//! ([`crate::codegen::cuda`]) and compiled by NVRTC to a cubin for the target's compute
//! capability, cached on disk by content hash.
//!
//! [`launch`] loads a cubin and launches its kernels on a given stream with given device
//! pointers; [`device`] holds the primary contexts torch uses. [`crate::compile`] with a
//! [`Target::Cuda`] builds a graph whose kernels run this way on the host's current stream
//! (`compiled/cuda_module.rs`). [`compile_graph`] is what CI runs over the lowering test set (no GPU needed);
//! `TORCHFERRO_CUDA_CHECK=<file>` makes every CPU [`crate::compile`] do it too and append one
//! JSON line per graph to `<file>` (see [`check_hook`]).
//!
//! Cache entries sit beside the CPU shared objects, in the cache folder's `cuda/` (so tools that
//! scan the folder for CPU entries never see them): `<key>.cubin` plus `<key>.cubin.meta` (the
//! cubin's length and sha256), written to temporary names and renamed into place, meta last; a
//! cubin that does not match its meta is discarded and rebuilt, never returned. The key hashes
//! the source, the NVRTC options and NVRTC's version.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::cache::sha256_hex;
use crate::codegen::cuda::{self as printer, CudaKernelAbi};
use crate::codegen::plan;
use crate::entity::EntityVec;
use crate::schedule::{schedule, KernelId};
use crate::target::{CudaPolicy, Target};
use crate::InductorError;

pub mod device;
pub mod launch;
pub mod nvrtc;

pub use launch::CudaKernels;
pub use nvrtc::Nvrtc;

/// A graph's CUDA kernels, compiled.
pub struct CudaGraph {
    /// The generated source, as compiled (chunked kernels assume aligned pointers).
    pub source: String,
    /// The plain instances of the chunked kernels (which take any pointers) by symbol, each
    /// compiled alone when a launch first sees a misaligned pointer
    /// ([`crate::codegen::cuda::kernel_source`]); empty when no kernel has chunks.
    pub plain_parts: std::collections::HashMap<String, String>,
    pub kernels: EntityVec<KernelId, CudaKernelAbi>,
    /// The cubin (empty when the graph has no kernels).
    pub cubin: Vec<u8>,
    /// How long NVRTC ran (`None`: cache hit, or no kernels).
    pub nvrtc_time: Option<Duration>,
    /// Lowering, scheduling and printing.
    pub codegen_time: Duration,
    /// Why ops of the graph were not lowered (they would run on the host, through torch).
    pub fallbacks: Vec<String>,
    /// The lowered graph and its schedule (what a runner allocates and launches by).
    pub ir: crate::ir::IrGraph,
    pub sched: crate::schedule::Schedule,
}

/// The NVRTC options a build of a source with `kernels` kernels uses for `policy`.
/// `--fmad=false`: `a * b + c` is two roundings, as torch's per-op kernels compute it.
/// `--split-compile=0` (sources of [`SPLIT_COMPILE_MIN`] kernels or more): NVRTC optimizes the
/// program's functions on all the machine's cores (a graph's kernels are independent;
/// resnet50's 104 kernels on the H200: 3.5 s to 1.3 s; a one-kernel source pays 3-25 ms of
/// thread start instead). `TORCHFERRO_NVRTC_SPLIT=0` leaves it out, for comparing the kernels'
/// speed (the PTX is the same; the cubins differ by a few bytes).
pub fn nvrtc_options(policy: &CudaPolicy, kernels: usize) -> Vec<String> {
    let mut o = vec![
        format!("--gpu-architecture={}", policy.arch()),
        "--std=c++17".into(),
        "--fmad=false".into(),
    ];
    let allowed = std::env::var("TORCHFERRO_NVRTC_SPLIT").map_or(true, |v| v.trim() != "0");
    if allowed && kernels >= SPLIT_COMPILE_MIN {
        o.push("--split-compile=0".into());
    }
    o
}

/// Fewest kernels in a source for which NVRTC compiles them in parallel (the H200's figures,
/// session 12: 3 kernels broke even, 6 gained a quarter).
pub const SPLIT_COMPILE_MIN: usize = 4;

/// The source with its validation global appended (the hash of the code before it; a loader
/// can read it back from the module).
pub(crate) fn finish_source(code: &str) -> String {
    let h = sha256_hex(code.as_bytes());
    format!(
        "{code}\n__device__ const char {}[] = \"{h}\";\n",
        crate::codegen::VALIDATION_SYMBOL
    )
}

/// Lowers `graph` for `policy`'s device, prints it as CUDA C and compiles it (or takes the
/// cubin from the cache in `cache_dir/cuda`). `site_dirs`: where to look for torch's NVRTC (the
/// Python process's `sys.path`; see [`nvrtc::load`]).
pub fn compile_graph(
    graph: &fx::Graph,
    policy: &CudaPolicy,
    cache_dir: &Path,
    site_dirs: &[PathBuf],
) -> Result<CudaGraph, InductorError> {
    compile_graph_with(graph, policy, cache_dir, site_dirs, &[])
}

/// [`compile_graph`] with the output positions whose layout the lowering chooses
/// ([`crate::Options::free_outputs`]).
pub fn compile_graph_with(
    graph: &fx::Graph,
    policy: &CudaPolicy,
    cache_dir: &Path,
    site_dirs: &[PathBuf],
    free_outputs: &[usize],
) -> Result<CudaGraph, InductorError> {
    let started = Instant::now();
    let target = Target::Cuda(policy.clone());
    let ir = crate::lower::lower_with(graph, &target, free_outputs)?;
    let sched = schedule(&ir);
    compile_scheduled(ir, sched, policy, cache_dir, site_dirs, started)
}

/// [`compile_graph`] from a lowered and scheduled graph (`started`: when lowering began, for
/// [`CudaGraph::codegen_time`]).
pub fn compile_scheduled(
    ir: crate::ir::IrGraph,
    sched: crate::schedule::Schedule,
    policy: &CudaPolicy,
    cache_dir: &Path,
    site_dirs: &[PathBuf],
    started: Instant,
) -> Result<CudaGraph, InductorError> {
    let Printed {
        source,
        plain_parts,
        kernels,
    } = print(&ir, &sched, policy);
    let codegen_time = started.elapsed();
    let fallbacks = ir.fallback_reasons();
    if kernels.is_empty() {
        return Ok(CudaGraph {
            source,
            plain_parts,
            kernels,
            cubin: Vec::new(),
            nvrtc_time: None,
            codegen_time,
            fallbacks,
            ir,
            sched,
        });
    }
    let (cubin, nvrtc_time) = build(&source, policy, &cache_dir.join("cuda"), site_dirs)?;
    Ok(CudaGraph {
        source,
        plain_parts,
        kernels,
        cubin,
        nvrtc_time,
        codegen_time,
        fallbacks,
        ir,
        sched,
    })
}

/// A scheduled graph printed as CUDA C (nothing compiled yet).
pub struct Printed {
    /// The source as compiled (chunked kernels assume aligned pointers), validation global
    /// appended.
    pub source: String,
    /// The plain instances by symbol (see [`CudaGraph::plain_parts`]).
    pub plain_parts: std::collections::HashMap<String, String>,
    pub kernels: EntityVec<KernelId, CudaKernelAbi>,
}

/// Plans and prints `ir` for `policy`'s device. A graph with symbolic sizes gives one source
/// for every assignment of its symbols (its kernels take their values as parameters, and its
/// grids are [`printer::GridRule`]s), so its cubin's cache key is the same at every size.
pub fn print(
    ir: &crate::ir::IrGraph,
    sched: &crate::schedule::Schedule,
    policy: &CudaPolicy,
) -> Printed {
    let target = Target::Cuda(policy.clone());
    let plans = plan::plan(ir, sched, &target);
    let src = printer::generate(ir, sched, &plans, policy, printer::Instances::Aligned);
    // The plain instances, for misaligned pointers: printed now (cheap), compiled when needed.
    let plain = src
        .kernels
        .iter()
        .any(|k| k.aligned)
        .then(|| printer::generate(ir, sched, &plans, policy, printer::Instances::Plain));
    // The launcher looks a kernel's symbol up in either module, so both sources must share
    // kernels alike. They do (the instances differ alike in every kernel); were they ever not
    // to, the graph is printed again with every kernel its own.
    let same_symbols = plain.as_ref().is_none_or(|p| {
        p.kernels
            .iter()
            .zip(src.kernels.iter())
            .all(|(p, a)| p.name == a.name)
    });
    if !same_symbols && policy.share_kernels {
        let own = CudaPolicy {
            share_kernels: false,
            ..policy.clone()
        };
        return print(ir, sched, &own);
    }
    let source = finish_source(&src.code);
    Printed {
        source,
        plain_parts: plain.map(|p| p.parts).unwrap_or_default(),
        kernels: src.kernels,
    }
}

/// The cubin of `source`, from the cache or compiled (and then cached).
pub fn build(
    source: &str,
    policy: &CudaPolicy,
    dir: &Path,
    site_dirs: &[PathBuf],
) -> Result<(Vec<u8>, Option<Duration>), InductorError> {
    let lib = nvrtc::load(site_dirs)?;
    let options = nvrtc_options(policy, source.matches("__global__").count());
    let key = sha256_hex(
        format!(
            "{source}\0{}\0nvrtc {}.{}",
            options.join(" "),
            lib.version.0,
            lib.version.1
        )
        .as_bytes(),
    );
    let key = &key[..40];
    let cubin_path = dir.join(format!("{key}.cubin"));
    let meta_path = dir.join(format!("{key}.cubin.meta"));
    if let Some(bytes) = read_entry(&cubin_path, &meta_path) {
        return Ok((bytes, None));
    }
    let compiled = nvrtc::compile(source, &options)?;
    write_entry(dir, key, source, &compiled.cubin)?;
    Ok((compiled.cubin, Some(compiled.time)))
}

/// A cache entry's cubin, if complete and intact (else it is discarded).
fn read_entry(cubin: &Path, meta: &Path) -> Option<Vec<u8>> {
    let m = std::fs::read_to_string(meta).ok()?;
    let (len, hash) = m.trim().split_once(' ')?;
    let bytes = std::fs::read(cubin).ok()?;
    if bytes.len().to_string() != len || sha256_hex(&bytes) != hash {
        tracing::warn!(target: "torchferro::inductor", "discarding corrupt cache entry {}", cubin.display());
        let _ = std::fs::remove_file(meta);
        let _ = std::fs::remove_file(cubin);
        return None;
    }
    Some(bytes)
}

fn write_entry(dir: &Path, key: &str, source: &str, cubin: &[u8]) -> Result<(), InductorError> {
    std::fs::create_dir_all(dir).map_err(|e| InductorError::io(dir, e))?;
    let unique = format!(
        "{}.{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0)
    );
    let write = |name: &str, bytes: &[u8]| -> Result<PathBuf, InductorError> {
        let tmp = dir.join(format!("{key}.{unique}.{name}.tmp"));
        std::fs::write(&tmp, bytes).map_err(|e| InductorError::io(&tmp, e))?;
        Ok(tmp)
    };
    let tmp_src = write("cu", source.as_bytes())?;
    let tmp_bin = write("cubin", cubin)?;
    let meta = format!("{} {}\n", cubin.len(), sha256_hex(cubin));
    let tmp_meta = write("meta", meta.as_bytes())?;
    // The source is kept beside the entry for people reading generated code.
    for (tmp, name) in [
        (tmp_src, format!("{key}.cu")),
        (tmp_bin, format!("{key}.cubin")),
        (tmp_meta, format!("{key}.cubin.meta")),
    ] {
        let dst = dir.join(name);
        std::fs::rename(&tmp, &dst).map_err(|e| InductorError::io(&dst, e))?;
    }
    Ok(())
}

/// `TORCHFERRO_CUDA_CHECK=<file>`: compiles `graph` for sm_90 as well and appends one JSON
/// line to `<file>`: `{"status": "ok", "kernels": n, "fallbacks": n, "nvrtc_s": seconds or
/// null (cache hit), "codegen_s": s}`, or `{"status": "lowering" | "nvrtc" | "no_nvrtc" |
/// "error", "error": text}` (with the source when NVRTC rejected it). Errors never reach the
/// caller (the CPU compile goes on); this is how CI checks the CUDA printer over every graph
/// the CPU tests compile. The policy takes the environment's knobs
/// ([`CudaPolicy::with_knobs`]). `TORCHFERRO_SITE_DIRS` (a path list, the Python's `sys.path`) says
/// where to look for NVRTC.
pub fn check_hook(graph: &fx::Graph, cache_dir: &Path, free_outputs: &[usize]) {
    let Some(file) = std::env::var_os("TORCHFERRO_CUDA_CHECK").filter(|f| !f.is_empty()) else {
        return;
    };
    let site: Vec<PathBuf> = std::env::var_os("TORCHFERRO_SITE_DIRS")
        .map(|v| std::env::split_paths(&v).collect())
        .unwrap_or_default();
    let policy = CudaPolicy::default().with_knobs();
    let r = compile_graph_with(graph, &policy, cache_dir, &site, free_outputs);
    let json_str = |s: &str| {
        let mut o = String::from("\"");
        for c in s.chars() {
            match c {
                '"' => o.push_str("\\\""),
                '\\' => o.push_str("\\\\"),
                '\n' => o.push_str("\\n"),
                c if (c as u32) < 0x20 => o.push_str(&format!("\\u{:04x}", c as u32)),
                c => o.push(c),
            }
        }
        o.push('"');
        o
    };
    let nvrtc_s = |t: Option<Duration>| {
        t.map(|t| t.as_secs_f64().to_string())
            .unwrap_or_else(|| "null".into())
    };
    let line = match &r {
        Ok(g) => format!(
            "{{\"status\": \"ok\", \"kernels\": {}, \"fallbacks\": {}, \"nvrtc_s\": {}, \"codegen_s\": {}}}",
            g.kernels.len(),
            g.fallbacks.len(),
            nvrtc_s(g.nvrtc_time),
            g.codegen_time.as_secs_f64()
        ),
        // The graph does not lower (for the CPU either): it runs eagerly.
        Err(e @ (InductorError::Unsupported(_) | InductorError::Malformed(_))) => format!(
            "{{\"status\": \"lowering\", \"error\": {}}}",
            json_str(&e.to_string())
        ),
        Err(e) => {
            let source = match e {
                InductorError::Nvrtc { .. } => {
                    let target = Target::Cuda(policy.clone());
                    crate::lower::lower_for(graph, &target).ok().map(|ir| {
                        let sched = schedule(&ir);
                        let plans = plan::plan(&ir, &sched, &target);
                        let inst = printer::Instances::Aligned;
                        printer::generate(&ir, &sched, &plans, &policy, inst).code
                    })
                }
                _ => None,
            };
            let status = match e {
                InductorError::NoNvrtc(_) => "no_nvrtc",
                InductorError::Nvrtc { .. } => "nvrtc",
                _ => "error",
            };
            format!(
                "{{\"status\": \"{status}\", \"error\": {}, \"source\": {}}}",
                json_str(&e.to_string()),
                source.map(|s| json_str(&s)).unwrap_or_else(|| "null".into())
            )
        }
    };
    if let Ok(mut f) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&file)
    {
        let _ = writeln!(f, "{line}");
    }
}
