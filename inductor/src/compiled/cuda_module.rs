//! A graph's CUDA kernels as a [`super::KernelModule`]: the cubin, loaded into a device's
//! primary context the first time the graph runs there (a graph compiled once may be run on
//! `cuda:0` and `cuda:1` alike: modules are keyed by device), and launched on the stream the
//! host names for each kernel ([`Host::cuda_stream`]: torch's current stream), with the
//! buffers' device pointers as parameters. No Python runs per launch.

use std::collections::HashMap;
use std::ffi::c_void;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use super::size_args::SizeArgs;
use crate::codegen::cuda::CudaKernelAbi;
use crate::cuda::device::{self, PrimaryContext};
use crate::cuda::CudaKernels;
use crate::entity::EntityVec;
use crate::error::RunError;
use crate::host::Host;
use crate::schedule::KernelId;
use crate::target::CudaPolicy;
use crate::InductorError;

/// One device's loaded copy of the module.
struct Loaded {
    ctx: &'static PrimaryContext,
    kernels: CudaKernels,
}

pub(crate) struct CudaModule {
    source: String,
    cubin: Vec<u8>,
    abis: EntityVec<KernelId, CudaKernelAbi>,
    /// Whether a kernel reads data-dependent positions (then the module's out-of-range flag is
    /// read back after each kernel, which waits for the stream).
    gathers: bool,
    loaded: Mutex<Vec<Loaded>>,
    /// The plain instances of the kernels that assume aligned pointers
    /// ([`CudaKernelAbi::aligned`]), each compiled alone the first time a launch needs it.
    plain: Option<Plain>,
}

/// What compiling a plain instance takes: the plain source's kernels by symbol.
pub(crate) struct PlainSource {
    pub parts: Arc<HashMap<String, String>>,
    pub policy: CudaPolicy,
    pub cache_dir: PathBuf,
}

struct Plain {
    src: PlainSource,
    /// A module of kernel `k`'s plain instance alone (its one kernel is `KernelId` 0, with
    /// `k`'s buffers and grid), by `k`. Kernels sharing a symbol share the cubin through the
    /// cache (same source), not the module.
    modules: Mutex<HashMap<KernelId, Arc<Result<CudaModule, String>>>>,
}

fn device_err<E: std::error::Error>(e: InductorError) -> RunError<E> {
    RunError::Device(e.to_string())
}

impl CudaModule {
    pub(crate) fn new(
        source: String,
        cubin: Vec<u8>,
        abis: EntityVec<KernelId, CudaKernelAbi>,
        gathers: bool,
        plain: Option<PlainSource>,
    ) -> CudaModule {
        CudaModule {
            source,
            cubin,
            abis,
            gathers,
            loaded: Mutex::new(Vec::new()),
            plain: plain.map(|src| Plain {
                src,
                modules: Mutex::new(HashMap::new()),
            }),
        }
    }

    /// The module of kernel `k`'s plain instance alone, compiled (or read from the cache) on
    /// first use.
    fn plain(&self, k: KernelId) -> Result<Arc<Result<CudaModule, String>>, InductorError> {
        let p = self.plain.as_ref().ok_or_else(|| {
            InductorError::Cuda("an aligned-only kernel has no plain source".into())
        })?;
        let mut modules = p.modules.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(m) = modules.get(&k) {
            return Ok(m.clone());
        }
        let abi = CudaKernelAbi {
            aligned: false,
            ..self.abis[k].clone()
        };
        let built = match p.src.parts.get(&abi.name) {
            None => Err(format!("no plain instance of {}", abi.name)),
            Some(part) => {
                let source = crate::cuda::finish_source(&crate::codegen::cuda::kernel_source(part));
                let dir = p.src.cache_dir.join("cuda");
                // NVRTC was loaded when the graph compiled: no site dirs needed to find it.
                crate::cuda::build(&source, &p.src.policy, &dir, &[])
                    .map(|(cubin, _)| {
                        let mut abis = EntityVec::new();
                        abis.push(abi);
                        CudaModule::new(source, cubin, abis, self.gathers, None)
                    })
                    .map_err(|e| e.to_string())
            }
        };
        let m = Arc::new(built);
        modules.insert(k, m.clone());
        Ok(m)
    }

    /// Runs `f` on the module loaded on `dev` (loading it first if needed), with `dev`'s
    /// primary context current.
    fn on_device<T>(
        &self,
        dev: u32,
        f: impl FnOnce(&CudaKernels) -> Result<T, InductorError>,
    ) -> Result<T, InductorError> {
        let mut loaded = self.loaded.lock().unwrap_or_else(|p| p.into_inner());
        let i = match loaded.iter().position(|l| l.ctx.ordinal == dev) {
            Some(i) => i,
            None => {
                let ctx = device::primary(dev)?;
                let kernels = ctx.with_current(|| {
                    // SAFETY: `ctx` is current (here) and retained for the whole process, and is
                    // made current again around every launch and the unload (`Drop`).
                    unsafe { CudaKernels::load_parts(&self.source, &self.cubin, &self.abis) }
                })?;
                loaded.push(Loaded { ctx, kernels });
                loaded.len() - 1
            }
        };
        let l = &loaded[i];
        l.ctx.with_current(|| f(&l.kernels))
    }

    /// Launches kernel `k` with `args` (device pointers, [`CudaKernelAbi::bufs`] order) on the
    /// host's device and stream.
    ///
    /// # Safety
    /// Each pointer addresses a live device buffer on the host's device with the layout the
    /// kernel was generated for.
    pub(crate) unsafe fn launch<H: Host>(
        &self,
        k: KernelId,
        args: &[*mut c_void],
        sizes: SizeArgs<'_>,
        host: &mut H,
    ) -> Result<(), RunError<H::Error>> {
        let ptrs: Vec<u64> = args.iter().map(|p| *p as u64).collect();
        if self.abis[k].aligned && ptrs.iter().any(|p| p & 15 != 0) {
            let plain = self.plain(k).map_err(device_err)?;
            let plain = plain
                .as_ref()
                .as_ref()
                .map_err(|e| RunError::Device(e.clone()))?;
            // SAFETY: the caller's contract, for the same kernel printed for any pointers
            // (kernel 0 of the plain module is `k`'s plain instance, with `k`'s ABI).
            return unsafe { plain.launch(KernelId::new(0), args, sizes, host) };
        }
        let grid = sizes.grid.unwrap_or(self.abis[k].grid);
        let (dev, stream) = host.cuda_stream().map_err(RunError::Host)?;
        self.on_device(dev, |kernels| {
            let stream = stream as cudarc::driver::sys::CUstream;
            // SAFETY: the caller's contract; the stream is the host's current stream of `dev`,
            // whose primary context is current here.
            unsafe { kernels.launch_sized(k, &ptrs, sizes.syms, grid, stream) }
        })
        .map_err(device_err)
    }

    /// Whether a kernel read a data-dependent position out of range since the last call (the
    /// flag is cleared). Graphs without such reads answer false without touching the device.
    pub(crate) fn take_index_error<H: Host>(
        &self,
        host: &mut H,
    ) -> Result<bool, RunError<H::Error>> {
        if !self.gathers {
            return Ok(false);
        }
        // A kernel that ran from a plain module set that module's flag. Read under the lock
        // (no allocation per run; nothing here takes it again).
        let mut plain = false;
        if let Some(p) = self.plain.as_ref() {
            let modules = p.modules.lock().unwrap_or_else(|e| e.into_inner());
            for m in modules.values() {
                if let Ok(m) = m.as_ref() {
                    plain |= m.take_index_error(host)?;
                }
            }
        }
        let (dev, stream) = host.cuda_stream().map_err(RunError::Host)?;
        let main = self
            .on_device(dev, |kernels| {
                // SAFETY: the stream is the host's current stream of `dev`, whose context is
                // current.
                unsafe { kernels.take_index_error(stream as cudarc::driver::sys::CUstream) }
            })
            .map_err(device_err)?;
        Ok(main || plain)
    }
}

impl Drop for CudaModule {
    fn drop(&mut self) {
        let loaded = std::mem::take(self.loaded.get_mut().unwrap_or_else(|p| p.into_inner()));
        for l in loaded {
            let Loaded { ctx, kernels } = l;
            // The module is unloaded with its own context current; if the driver is already
            // shut down (process exit) the unload's error is ignored.
            let _ = ctx.with_current(move || {
                drop(kernels);
                Ok(())
            });
        }
    }
}

/// A CUDA graph with symbolic sizes, printed once (issue 18): one source for every assignment
/// of its symbols, compiled by NVRTC (or read from the cubin cache) the first time an
/// assignment is built, and one loaded module that the graph of every assignment launches.
pub(crate) struct CudaPrepared {
    pub(crate) printed: crate::cuda::Printed,
    policy: CudaPolicy,
    /// Whether a kernel reads data-dependent positions.
    gathers: bool,
    module: Mutex<Option<std::sync::Arc<CudaModule>>>,
}

impl CudaPrepared {
    pub(crate) fn new(printed: crate::cuda::Printed, policy: CudaPolicy, gathers: bool) -> Self {
        CudaPrepared {
            printed,
            policy,
            gathers,
            module: Mutex::new(None),
        }
    }

    /// The module, built on first use (`Some(time)`: NVRTC ran in this call; `None`: the
    /// module existed, or its cubin came from the cache).
    pub(crate) fn module(
        &self,
        cache_dir: &std::path::Path,
    ) -> Result<(std::sync::Arc<CudaModule>, Option<std::time::Duration>), InductorError> {
        let mut m = self.module.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(m) = m.as_ref() {
            return Ok((m.clone(), None));
        }
        let p = &self.printed;
        // NVRTC was found when the graph's target was made (`crate::cuda::device::init`).
        let (cubin, time) =
            crate::cuda::build(&p.source, &self.policy, &cache_dir.join("cuda"), &[])?;
        let plain = (!p.plain_parts.is_empty()).then(|| PlainSource {
            parts: Arc::new(p.plain_parts.clone()),
            policy: self.policy.clone(),
            cache_dir: cache_dir.to_path_buf(),
        });
        let module = std::sync::Arc::new(CudaModule::new(
            p.source.clone(),
            cubin,
            p.kernels.clone(),
            self.gathers,
            plain,
        ));
        *m = Some(module.clone());
        Ok((module, time))
    }
}
