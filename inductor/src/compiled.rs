//! The entry points: [`compile`] a graph, then [`CompiledGraph::run`] it against a [`Host`].

use std::ffi::c_void;
use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use crate::cache;
use crate::codegen;
use crate::entity::EntityVec;
use crate::error::RunError;
use crate::host::Host;
use crate::ir::{BufId, BufKind, IrGraph, IrNode, IrNodeId};
use crate::runtime::Runtime;
use crate::schedule::{schedule, KernelId, Schedule, Step, StepId};
use crate::size::{const_vec, Size};
use crate::target::Target;
use crate::workspace::{kept_buffers, Workspace};
use crate::InductorError;

#[cfg(feature = "cuda")]
mod cuda_module;
mod kernel_module;
mod size_args;
use kernel_module::{CLibrary, KernelModule, SizeArgs};

/// Compilation settings.
#[derive(Clone, Debug)]
pub struct Options {
    /// Where built kernels are cached; defaults to [`cache::default_cache_dir`].
    pub cache_dir: PathBuf,
    /// The device compiled for, with its policy; defaults to the CPU.
    pub target: Target,
    /// Graph output positions that may be handed out in the layout the lowering gave them
    /// rather than eager's (a training forward's saved values: only its backward reads them,
    /// derived from the layouts they come in). On CUDA a saved value in a buffer with padded
    /// rows (GPT-2's `[8192, 50257]` logits) then stays there instead of being copied out.
    pub free_outputs: Vec<usize>,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            cache_dir: cache::default_cache_dir(),
            target: Target::default(),
            free_outputs: Vec::new(),
        }
    }
}

/// Wall time of each phase of one [`compile`], for the tracer's `perf` log and `explain`.
#[derive(Clone, Debug, Default)]
pub struct PhaseTimes {
    pub lowering: Duration,
    pub scheduling: Duration,
    /// Generating the C source.
    pub codegen: Duration,
    /// Running the C compiler; `None` when no compiler ran (cache hit, or no kernels).
    pub c_compile: Option<Duration>,
    /// Looking the shared object up in the cache and loading it, checks included; `None` when
    /// there were no kernels to load.
    pub cache_load: Option<Duration>,
}

impl PhaseTimes {
    /// `(phase, seconds)` in the order the phases ran, leaving out those that did not run.
    pub fn phases(&self) -> Vec<(&'static str, f64)> {
        let mut out = vec![
            ("lowering", self.lowering.as_secs_f64()),
            ("scheduling", self.scheduling.as_secs_f64()),
            ("codegen", self.codegen.as_secs_f64()),
        ];
        if let Some(d) = self.c_compile {
            out.push(("c_compile", d.as_secs_f64()));
        }
        if let Some(d) = self.cache_load {
            out.push(("cache_load", d.as_secs_f64()));
        }
        out
    }
}

/// A graph compiled to kernels plus host calls, ready to run many times.
pub struct CompiledGraph {
    ir: IrGraph,
    sched: Schedule,
    source: String,
    /// The loaded kernels (`None`: the graph has none).
    module: Option<KernelModule>,
    /// Per kernel, the buffers its argument array points to, in order.
    kernel_bufs: EntityVec<KernelId, Vec<BufId>>,
    compiler_ran: bool,
    donors: EntityVec<BufId, bool>,
    /// Byte size of each buffer that gets a huge-page hint before an extern call writes it.
    huge: EntityVec<BufId, Option<i64>>,
    /// Buffers a [`Workspace`] keeps between calls.
    kept: EntityVec<BufId, bool>,
    /// Per kernel: big enough to run with the host's lock released (see
    /// [`crate::CpuPolicy::unlock_min_elems`]).
    unlocked: EntityVec<KernelId, bool>,
    times: PhaseTimes,
    /// The size symbols' values, passed to every kernel after its buffers when the kernels
    /// take sizes as arguments ([`crate::param`]); empty otherwise.
    syms: Vec<i64>,
    /// Per step: it writes a graph input's buffer (an in-place update of an argument), so a
    /// deferred out-of-range flag is read before it runs. Worked out once here, not per run.
    writes_input: EntityVec<StepId, bool>,
    /// Per kernel of a CUDA graph with symbolic sizes, the blocks its grid rule gives at
    /// `syms` (computed once per assignment); empty otherwise (each kernel's own grid).
    grids: Vec<u32>,
}

/// Lowers, schedules, generates C, and builds (or loads from the cache) the kernels.
pub fn compile(graph: &fx::Graph, options: &Options) -> Result<CompiledGraph, InductorError> {
    #[cfg(feature = "cuda")]
    crate::cuda::check_hook(graph, &options.cache_dir, &options.free_outputs);
    let started = Instant::now();
    let ir = crate::lower::lower_with(graph, &options.target, &options.free_outputs)?;
    let lowering = started.elapsed();
    let mut compiled = compile_ir(ir, options)?;
    compiled.times.lowering = lowering;
    Ok(compiled)
}

/// [`compile`] from an already lowered graph (tests build IR directly).
pub fn compile_ir(ir: IrGraph, options: &Options) -> Result<CompiledGraph, InductorError> {
    if options.target.cpu().is_none() {
        let started = Instant::now();
        let sched = schedule(&ir);
        let times = PhaseTimes {
            scheduling: started.elapsed(),
            ..Default::default()
        };
        return compile_cuda(ir, sched, options, times);
    }
    prepare_ir(ir, options)?.build(options, None)
}

/// A graph lowered, scheduled and printed (as C, or as CUDA C for a CUDA target), not built
/// yet: what a dynamic graph is at one assignment of its size symbols before
/// [`crate::param`] decides which library runs it, or a graph with symbolic sizes whose one
/// source serves every assignment ([`Prepared::build_at`]).
pub struct Prepared {
    ir: IrGraph,
    sched: Schedule,
    /// For a CUDA target, the CUDA source and its kernels' names and buffers.
    src: codegen::CSource,
    times: PhaseTimes,
    /// A CUDA target's printed source and, once built, its module.
    #[cfg(feature = "cuda")]
    cuda: Option<Box<cuda_module::CudaPrepared>>,
    /// A symbolic graph's one C library once [`Prepared::build_at`] built it: every later
    /// assignment runs it without hashing its source or looking it up again (a decode step
    /// whose position is a size symbol meets a new assignment on every call).
    linked: OnceLock<Linked>,
    /// The symbols of a symbolic graph, in [`IrGraph::symbols`]' order (walked once).
    syms: OnceLock<Vec<u32>>,
}

/// What building a C source gave: the library's kernels and what a [`CompiledGraph`] reports
/// of the build.
#[derive(Clone)]
struct Linked {
    source: String,
    module: Option<CLibrary>,
    kernel_bufs: EntityVec<KernelId, Vec<BufId>>,
    compiler_ran: bool,
    c_compile: Option<Duration>,
    cache_load: Option<Duration>,
}

/// Lowers, schedules and prints `graph` for the target of `options` (no C compiler or NVRTC
/// runs). Fitted templates ([`crate::param`]) take CPU graphs only; a CUDA graph is prepared
/// for [`Prepared::build_at`] (symbolic sizes).
pub fn prepare(graph: &fx::Graph, options: &Options) -> Result<Prepared, InductorError> {
    // `TORCHFERRO_CUDA_CHECK`: a CPU graph with symbolic sizes is printed and compiled for
    // CUDA too, as `compile` does for static graphs (its symbolic CUDA source checked by NVRTC).
    #[cfg(feature = "cuda")]
    if options.target.cpu().is_some() && crate::lower::is_symbolic(graph) {
        crate::cuda::check_hook(graph, &options.cache_dir, &options.free_outputs);
    }
    let started = Instant::now();
    let ir = crate::lower::lower_with(graph, &options.target, &options.free_outputs)?;
    let lowering = started.elapsed();
    let mut p = prepare_ir(ir, options)?;
    p.times.lowering = lowering;
    Ok(p)
}

/// [`prepare`] from an already lowered graph; a graph with symbolic sizes gives kernels that
/// read the symbols' values from one more argument (see [`Prepared::build_at`]).
pub fn prepare_ir(ir: IrGraph, options: &Options) -> Result<Prepared, InductorError> {
    let mut times = PhaseTimes::default();
    let started = Instant::now();
    let sched = schedule(&ir);
    times.scheduling = started.elapsed();
    let started = Instant::now();
    if let Target::Cuda(policy) = &options.target {
        return prepare_cuda(ir, sched, policy, times, started);
    }
    let src = codegen::generate(&ir, &sched, &options.target);
    times.codegen = started.elapsed();
    Ok(Prepared {
        ir,
        sched,
        src,
        times,
        #[cfg(feature = "cuda")]
        cuda: None,
        linked: OnceLock::new(),
        syms: OnceLock::new(),
    })
}

/// The CUDA half of [`prepare_ir`]: the graph printed once as CUDA C.
#[cfg(feature = "cuda")]
fn prepare_cuda(
    ir: IrGraph,
    sched: Schedule,
    policy: &crate::CudaPolicy,
    mut times: PhaseTimes,
    started: Instant,
) -> Result<Prepared, InductorError> {
    let printed = crate::cuda::print(&ir, &sched, policy);
    times.codegen = started.elapsed();
    let src = codegen::CSource {
        code: printed.source.clone(),
        kernels: printed
            .kernels
            .iter()
            .map(|k| codegen::KernelAbi {
                name: k.name.clone(),
                bufs: k.bufs.clone(),
            })
            .collect(),
    };
    let gathers = has_gathers(&ir);
    let cuda = cuda_module::CudaPrepared::new(printed, policy.clone(), gathers);
    Ok(Prepared {
        ir,
        sched,
        src,
        times,
        cuda: Some(Box::new(cuda)),
        linked: OnceLock::new(),
        syms: OnceLock::new(),
    })
}

#[cfg(not(feature = "cuda"))]
fn prepare_cuda(
    _: IrGraph,
    _: Schedule,
    _: &crate::CudaPolicy,
    _: PhaseTimes,
    _: Instant,
) -> Result<Prepared, InductorError> {
    Err(InductorError::Unsupported(
        "built without CUDA support (the inductor's `cuda` feature)".into(),
    ))
}

/// A symbolic graph's sizes at `values` include one with no value (see `IrGraph::at`).
fn no_value_at(values: &[i64]) -> InductorError {
    InductorError::Unsupported(format!(
        "a size has no value at the symbols' assignment {values:?} (a division by zero or an overflow)"
    ))
}

/// Whether a kernel of `ir` reads data-dependent positions (it then has an out-of-range flag).
fn has_gathers(ir: &IrGraph) -> bool {
    ir.nodes.iter().any(|n| match n {
        IrNode::Pointwise { body, .. } | IrNode::Reduction { body, .. } => body.has_gather(),
        _ => false,
    })
}

impl Prepared {
    /// The generated C, before the validation symbol is appended.
    pub fn code(&self) -> &str {
        &self.src.code
    }

    /// The number of buffers kernel `name` takes (its argument array's length).
    pub fn kernel_arity(&self, name: &str) -> Option<usize> {
        self.src
            .kernels
            .iter()
            .find(|k| k.name == name)
            .map(|k| k.bufs.len())
    }

    /// The size symbols its kernels take, in the order of their values (`IrGraph::symbols`).
    pub fn symbols(&self) -> Vec<u32> {
        self.ir.symbols()
    }

    /// The runnable graph of a symbolic graph at one assignment (`values[i]` for the i-th of
    /// [`Prepared::symbols`]): its sizes substituted (`IrGraph::at`: no lowering, no C), the
    /// schedule and the kernels' C shared by every assignment, so the library is built once
    /// (the source, and with it the cache key, is the same for all).
    pub fn build_at(
        &self,
        options: &Options,
        values: &[i64],
    ) -> Result<CompiledGraph, InductorError> {
        let syms = self.syms.get_or_init(|| self.ir.symbols());
        assert_eq!(syms.len(), values.len(), "one value per symbol");
        let value = |k: u32| values[syms.iter().position(|s| *s == k).expect("a symbol")];
        #[cfg(feature = "cuda")]
        if let Some(cuda) = &self.cuda {
            return self.build_cuda_at(cuda, options, values, &value);
        }
        let linked = match self.linked.get() {
            Some(l) => Linked {
                // The library was found (or compiled) by the first assignment.
                compiler_ran: false,
                c_compile: None,
                cache_load: None,
                ..l.clone()
            },
            None => {
                let l = link(&self.ir, &self.src, &self.src.code, options)?;
                let _ = self.linked.set(l.clone());
                l
            }
        };
        let ir = self.ir.at(&value).ok_or_else(|| no_value_at(values))?;
        let at = Prepared {
            ir,
            sched: self.sched.clone(),
            src: codegen::CSource {
                code: String::new(),
                kernels: EntityVec::new(),
            },
            // The lowering, schedule and C made once for every assignment (the first build's
            // `perf` record reports them).
            times: self.times.clone(),
            #[cfg(feature = "cuda")]
            cuda: None,
            linked: OnceLock::new(),
            syms: OnceLock::new(),
        };
        Ok(at.assemble(options, linked, values.to_vec()))
    }

    /// [`Prepared::build_at`] for a CUDA graph: the one module (NVRTC at the first assignment,
    /// or the cubin cache), the sizes substituted, and each kernel's blocks from its grid rule.
    #[cfg(feature = "cuda")]
    fn build_cuda_at(
        &self,
        cuda: &cuda_module::CudaPrepared,
        options: &Options,
        values: &[i64],
        value: crate::symbolic::Values,
    ) -> Result<CompiledGraph, InductorError> {
        let ir = self.ir.at(value).ok_or_else(|| no_value_at(values))?;
        let kernels = &cuda.printed.kernels;
        let grids = kernels
            .iter()
            .map(|k| match &k.grid_rule {
                None => Ok(k.grid),
                Some(rule) => rule.blocks(value).ok_or_else(|| {
                    InductorError::Unsupported(format!(
                        "{}: its work overflows at sizes {values:?}",
                        k.name
                    ))
                }),
            })
            .collect::<Result<Vec<u32>, _>>()?;
        let (module, nvrtc) = if kernels.is_empty() {
            (None, None)
        } else {
            let (m, t) = cuda.module(&options.cache_dir)?;
            (Some(KernelModule::Cuda(m)), t)
        };
        // The lowering, schedule and source were made once for every assignment.
        let times = PhaseTimes {
            c_compile: nvrtc,
            ..self.times.clone()
        };
        let kernel_bufs = kernels.iter().map(|k| k.bufs.clone()).collect();
        Ok(cuda_compiled(
            CudaParts {
                ir,
                sched: self.sched.clone(),
                source: cuda.printed.source.clone(),
                module,
                kernel_bufs,
                compiler_ran: nvrtc.is_some(),
            },
            times,
            values.to_vec(),
            grids,
        ))
    }

    /// Whether the graph has kernels at all.
    pub fn has_kernels(&self) -> bool {
        !self.src.kernels.is_empty()
    }

    /// Builds (or loads from the cache) the kernels and makes the runnable graph. With
    /// `param = Some((code, sizes))` the kernels come from `code` instead, a
    /// [`crate::param::Template`] rendered for this graph (its kernels have this graph's
    /// names and argument buffers, and read `sizes` from one more argument).
    pub fn build(
        self,
        options: &Options,
        param: Option<(&str, Vec<i64>)>,
    ) -> Result<CompiledGraph, InductorError> {
        let (code, syms) = match param {
            Some((code, syms)) => (code, syms),
            None => (self.src.code.as_str(), Vec::new()),
        };
        let linked = link(&self.ir, &self.src, code, options)?;
        Ok(self.assemble(options, linked, syms))
    }

    /// The runnable graph from `linked`, its library (see [`Prepared::build`]).
    fn assemble(self, options: &Options, linked: Linked, syms: Vec<i64>) -> CompiledGraph {
        let Prepared {
            ir,
            sched,
            mut times,
            ..
        } = self;
        let policy = options
            .target
            .cpu()
            .expect("a prepared graph targets the CPU");
        let mut donors = EntityVec::filled(false, ir.buffers.len());
        for d in sched.reuse.iter().flatten() {
            donors[*d] = true;
        }
        let kept = kept_buffers(&ir, &sched);
        let unlocked = sched
            .kernels
            .iter()
            .map(|k| {
                // A symbolic kernel runs unlocked: correct at every size.
                let n = k.outer.iter().chain(&k.inner).product::<Size>();
                n.as_const().is_none_or(|n| n >= policy.unlock_min_elems)
            })
            .collect();
        let huge = ir
            .buffers
            .iter()
            .map(|d| {
                let bytes =
                    d.storage_numel().expect_const("a huge-page hint") * d.dtype.itemsize() as i64;
                policy.wants_hugepage(bytes).then_some(bytes)
            })
            .collect();
        times.c_compile = linked.c_compile;
        times.cache_load = linked.cache_load;
        CompiledGraph {
            writes_input: steps_writing_inputs(&ir, &sched),
            ir,
            sched,
            source: linked.source,
            module: linked.module.map(KernelModule::C),
            kernel_bufs: linked.kernel_bufs,
            compiler_ran: linked.compiler_ran,
            donors,
            huge,
            kept,
            unlocked,
            times,
            syms,
            grids: Vec::new(),
        }
    }
}

/// Builds (or finds in the cache) the library of C `code`, the kernels of `src` (`code` is its
/// source, or a template rendered for it), and loads it.
fn link(
    ir: &IrGraph,
    src: &codegen::CSource,
    code: &str,
    options: &Options,
) -> Result<Linked, InductorError> {
    let source = cache::finish_source(code);
    tracing::debug!(target: "torchferro::output_code", "generated C:\n{source}");
    if src.kernels.is_empty() {
        return Ok(Linked {
            source,
            module: None,
            kernel_bufs: EntityVec::new(),
            compiler_ran: false,
            c_compile: None,
            cache_load: None,
        });
    }
    let started = Instant::now();
    let built = cache::build(&source, &options.cache_dir)?;
    let module = CLibrary::load(&built, &src.kernels, has_gathers(ir))?;
    Ok(Linked {
        source,
        module: Some(module),
        kernel_bufs: src.kernels.iter().map(|k| k.bufs.clone()).collect(),
        compiler_ran: built.compiled,
        c_compile: built.compile_time,
        cache_load: Some(
            started
                .elapsed()
                .saturating_sub(built.compile_time.unwrap_or_default()),
        ),
    })
}

/// The CUDA half of [`compile_ir`]: CUDA C through NVRTC (or the cubin cache), loaded on a
/// device when the graph first runs there. No huge-page hints and no lock release: the
/// kernels run asynchronously on the host's stream.
#[cfg(feature = "cuda")]
fn compile_cuda(
    ir: IrGraph,
    sched: Schedule,
    options: &Options,
    mut times: PhaseTimes,
) -> Result<CompiledGraph, InductorError> {
    let crate::Target::Cuda(policy) = &options.target else {
        unreachable!("called for CUDA targets only")
    };
    let started = Instant::now();
    let gathers = has_gathers(&ir);
    // The NVRTC library was found by the caller (`crate::cuda::device::init`, with the Python's
    // `sys.path`); this lookup returns that answer.
    let g = crate::cuda::compile_scheduled(ir, sched, policy, &options.cache_dir, &[], started)?;
    times.codegen = g.codegen_time;
    times.c_compile = g.nvrtc_time;
    tracing::debug!(target: "torchferro::output_code", "generated CUDA C:\n{}", g.source);
    let kernel_bufs = g.kernels.iter().map(|k| k.bufs.clone()).collect();
    let module = (!g.kernels.is_empty()).then(|| {
        let plain = (!g.plain_parts.is_empty()).then(|| cuda_module::PlainSource {
            parts: std::sync::Arc::new(g.plain_parts),
            policy: policy.clone(),
            cache_dir: options.cache_dir.clone(),
        });
        KernelModule::Cuda(std::sync::Arc::new(cuda_module::CudaModule::new(
            g.source.clone(),
            g.cubin,
            g.kernels,
            gathers,
            plain,
        )))
    });
    let parts = CudaParts {
        ir: g.ir,
        sched: g.sched,
        source: g.source,
        module,
        kernel_bufs,
        compiler_ran: g.nvrtc_time.is_some(),
    };
    Ok(cuda_compiled(parts, times, Vec::new(), Vec::new()))
}

/// What a CUDA graph's [`CompiledGraph`] is made of besides its times and sizes.
#[cfg(feature = "cuda")]
struct CudaParts {
    ir: IrGraph,
    sched: Schedule,
    source: String,
    module: Option<KernelModule>,
    kernel_bufs: EntityVec<KernelId, Vec<BufId>>,
    compiler_ran: bool,
}

/// A CUDA graph, runnable: no huge-page hints and no lock release (the kernels run
/// asynchronously on the host's stream). `syms`/`grids`: a symbolic graph's values at this
/// assignment and its kernels' blocks there (both empty for a static graph).
#[cfg(feature = "cuda")]
fn cuda_compiled(
    parts: CudaParts,
    times: PhaseTimes,
    syms: Vec<i64>,
    grids: Vec<u32>,
) -> CompiledGraph {
    let CudaParts {
        ir,
        sched,
        source,
        module,
        kernel_bufs,
        compiler_ran,
    } = parts;
    let mut donors = EntityVec::filled(false, ir.buffers.len());
    for d in sched.reuse.iter().flatten() {
        donors[*d] = true;
    }
    let kept = kept_buffers(&ir, &sched);
    let unlocked = sched.kernels.iter().map(|_| false).collect();
    let huge = ir.buffers.iter().map(|_| None).collect();
    CompiledGraph {
        writes_input: steps_writing_inputs(&ir, &sched),
        ir,
        sched,
        source,
        module,
        kernel_bufs,
        compiler_ran,
        donors,
        huge,
        kept,
        unlocked,
        times,
        syms,
        grids,
    }
}

#[cfg(not(feature = "cuda"))]
fn compile_cuda(
    _: IrGraph,
    _: Schedule,
    _: &Options,
    _: PhaseTimes,
) -> Result<CompiledGraph, InductorError> {
    Err(InductorError::Unsupported(
        "built without CUDA support (the inductor's `cuda` feature)".into(),
    ))
}

impl CompiledGraph {
    /// The shared object the kernels were loaded from (`None`: the graph has no kernels).
    pub fn library_path(&self) -> Option<&std::path::Path> {
        self.module.as_ref().and_then(KernelModule::library_path)
    }

    /// The generated C translation unit.
    pub fn source(&self) -> &str {
        &self.source
    }

    pub fn ir(&self) -> &IrGraph {
        &self.ir
    }

    pub fn schedule(&self) -> &Schedule {
        &self.sched
    }

    /// Generated kernels (each one C function, one pass over its data).
    pub fn num_kernels(&self) -> usize {
        self.sched.kernels.len()
    }

    /// Matmul/convolution calls into the host.
    pub fn num_extern_calls(&self) -> usize {
        self.ir
            .nodes
            .iter()
            .filter(|n| matches!(n, IrNode::Extern { .. }))
            .count()
    }

    pub fn num_fallbacks(&self) -> usize {
        self.fallback_reasons().len()
    }

    /// Why each fallback op was not lowered.
    pub fn fallback_reasons(&self) -> Vec<String> {
        self.ir.fallback_reasons()
    }

    /// Whether building this graph ran the C compiler (false: loaded from the cache).
    pub fn compiler_ran(&self) -> bool {
        self.compiler_ran
    }

    /// How long each phase of compiling this graph took.
    pub fn phase_times(&self) -> &PhaseTimes {
        &self.times
    }

    /// Runs the graph; returns its outputs in the graph's (flattened) output order.
    pub fn run<H: Host>(
        &self,
        host: &mut H,
        inputs: &[H::Tensor],
    ) -> Result<Vec<H::Tensor>, RunError<H::Error>> {
        self.run_impl(host, inputs, true, None)
    }

    /// [`run`](Self::run) without comparing the inputs' dtypes, sizes and strides with the
    /// compiled ones (one `describe` per input saved on every call).
    ///
    /// # Safety
    /// Every input must have exactly the dtype, sizes and strides (strides of size-1 dims
    /// excepted) the graph was compiled for, as the tracer's tensor guards check: the kernels
    /// address memory with the compiled layout.
    pub unsafe fn run_trusted<H: Host>(
        &self,
        host: &mut H,
        inputs: &[H::Tensor],
    ) -> Result<Vec<H::Tensor>, RunError<H::Error>> {
        self.run_impl(host, inputs, false, None)
    }

    /// A workspace for this graph's intermediates, or `None` when the graph keeps none (see
    /// [`crate::workspace`]).
    pub fn new_workspace<T: Clone>(&self) -> Option<Workspace<T>> {
        self.kept
            .iter()
            .any(|&k| k)
            .then(|| Workspace::new(self.ir.buffers.len()))
    }

    /// [`run_trusted`](Self::run_trusted) with intermediates taken from and left in `ws`. A
    /// workspace serves one call at a time and only the graph that made it.
    ///
    /// # Safety
    /// As for [`run_trusted`](Self::run_trusted); `ws` came from this graph's
    /// [`new_workspace`](Self::new_workspace).
    pub unsafe fn run_trusted_in<H: Host>(
        &self,
        host: &mut H,
        inputs: &[H::Tensor],
        ws: &mut Workspace<H::Tensor>,
    ) -> Result<Vec<H::Tensor>, RunError<H::Error>> {
        self.run_impl(host, inputs, false, Some(ws))
    }

    /// [`run`](Self::run) with a workspace (checks the inputs).
    pub fn run_in<H: Host>(
        &self,
        host: &mut H,
        inputs: &[H::Tensor],
        ws: &mut Workspace<H::Tensor>,
    ) -> Result<Vec<H::Tensor>, RunError<H::Error>> {
        self.run_impl(host, inputs, true, Some(ws))
    }

    fn run_impl<H: Host>(
        &self,
        host: &mut H,
        inputs: &[H::Tensor],
        check: bool,
        ws: Option<&mut Workspace<H::Tensor>>,
    ) -> Result<Vec<H::Tensor>, RunError<H::Error>> {
        let mut rt = Runtime::new(host, &self.ir, inputs, check)?;
        if let Some(ws) = ws {
            rt = rt.with_workspace(ws, &self.kept);
        }
        let mut ptrs: Vec<*mut c_void> = Vec::new();
        // CUDA kernels run asynchronously: reading their out-of-range flag waits for the
        // stream, so it is read once at the end (and before a step writes an input), not after
        // every kernel, which would keep the host from queueing work ahead of the device. A
        // bad index still raises before the outputs are handed back or an input is written;
        // the kernels clamp the position they read, so nothing reads out of bounds meanwhile.
        let defer = self.module.as_ref().is_some_and(|m| m.defers_index_check());
        let mut pending = false;
        for (s, step) in self.sched.steps.iter_enumerated() {
            if pending && self.writes_input[s] {
                pending = false;
                self.check_index_flag(&mut rt)?;
            }
            match step {
                Step::Kernel(k) => {
                    ptrs.clear();
                    for &b in &self.kernel_bufs[*k] {
                        self.ensure(&mut rt, b)?;
                        ptrs.push(rt.ptr(b)? as *mut c_void);
                    }
                    let module = self
                        .module
                        .as_ref()
                        .expect("a graph with kernels loads them");
                    let mut sizes = SizeArgs {
                        syms: &[],
                        grid: self.grids.get(k.index()).copied(),
                    };
                    if !self.syms.is_empty() {
                        if module.sizes_by_pointer() {
                            // Read as `const int64_t *` by the kernels; `self` outlives the call.
                            ptrs.push(self.syms.as_ptr() as *mut c_void);
                        } else {
                            sizes.syms = &self.syms;
                        }
                    }
                    // SAFETY: each pointer addresses a live buffer with the layout the kernel
                    // was generated for (inputs were checked by `Runtime::new`), in the memory
                    // the module's kernels address (host memory for C, device memory on the
                    // host's device for CUDA: the host allocated every buffer there).
                    unsafe {
                        module.launch(*k, &mut ptrs, &mut *rt.host, self.unlocked[*k], sizes)
                    }?;
                    if defer {
                        pending = true;
                    } else if module.take_index_error(&mut *rt.host)? {
                        return Err(RunError::IndexOutOfRange);
                    }
                }
                Step::Host(n) => {
                    // Fallbacks and convolutions return tensors the host allocates itself.
                    let host_allocates = match &self.ir.nodes[*n] {
                        IrNode::Fallback { .. } => true,
                        IrNode::Extern { call, .. } => call.host_allocates(),
                        _ => false,
                    };
                    if !host_allocates {
                        for b in self.ir.nodes[*n].outputs() {
                            self.ensure(&mut rt, b)?;
                            if let Some(bytes) = self.huge[b] {
                                crate::hugepage::advise(rt.ptr(b)?, bytes);
                            }
                        }
                    }
                    rt.run_host_node_at(*n)?;
                }
            }
            for &b in &self.sched.free_after[s] {
                if !self.donors[b] {
                    rt.set(b, None);
                }
            }
        }
        if pending {
            self.check_index_flag(&mut rt)?;
        }
        rt.outputs()
    }

    /// Raises [`RunError::IndexOutOfRange`] when a kernel read a position out of range.
    fn check_index_flag<H: Host>(&self, rt: &mut Runtime<H>) -> Result<(), RunError<H::Error>> {
        match &self.module {
            Some(m) if m.take_index_error(&mut *rt.host)? => Err(RunError::IndexOutOfRange),
            _ => Ok(()),
        }
    }

    /// Allocates `b`, in a dead buffer's storage when the schedule planned so.
    fn ensure<H: Host>(&self, rt: &mut Runtime<H>, b: BufId) -> Result<(), RunError<H::Error>> {
        if rt.has(b) || rt.take_kept(b) {
            return Ok(());
        }
        if let Some(x) = self.sched.in_place[b] {
            // Same layout as the donor, which this step reads: share its tensor.
            let t = rt.tensor(x)?;
            rt.set(b, Some(t));
            rt.remember(b);
            return Ok(());
        }
        if let Some(d) = self.sched.reuse[b] {
            if let Some(base) = rt.take(d) {
                let decl = &self.ir.buffers[b];
                let t = rt
                    .host
                    .alias(
                        &base,
                        &const_vec(&decl.sizes, "a reused buffer"),
                        &const_vec(&decl.strides, "a reused buffer"),
                        0,
                    )
                    .map_err(RunError::Host)?;
                rt.set(b, Some(t));
                rt.remember(b);
                return Ok(());
            }
        }
        rt.tensor(b).map(|_| ())
    }
}

/// [`CompiledGraph::writes_input`]: per step, whether it writes a graph input's buffer.
fn steps_writing_inputs(ir: &IrGraph, sched: &Schedule) -> EntityVec<StepId, bool> {
    let writes = |n: IrNodeId| {
        ir.nodes[n]
            .outputs()
            .iter()
            .any(|&b| matches!(ir.buffers[b].kind, BufKind::Input(_)))
    };
    sched
        .steps
        .iter()
        .map(|step| match step {
            Step::Kernel(k) => sched.kernels[*k].nodes.iter().any(|kn| writes(kn.node)),
            Step::Host(n) => writes(*n),
        })
        .collect()
}
