//! A graph's CUDA kernels as a [`super::KernelModule`]: the cubin, loaded into a device's
//! primary context the first time the graph runs there (a graph compiled once may be run on
//! `cuda:0` and `cuda:1` alike: modules are keyed by device), and launched on the stream the
//! host names for each kernel ([`Host::cuda_stream`]: torch's current stream), with the
//! buffers' device pointers as parameters. No Python runs per launch.

use std::ffi::c_void;
use std::path::PathBuf;
use std::sync::{Mutex, OnceLock};

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
    /// ([`CudaKernelAbi::aligned`]), compiled the first time a launch needs one.
    plain: Option<Plain>,
}

/// What compiling the plain source takes, and the module once compiled.
pub(crate) struct PlainSource {
    pub source: String,
    pub policy: CudaPolicy,
    pub cache_dir: PathBuf,
}

struct Plain {
    src: PlainSource,
    module: OnceLock<Result<Box<CudaModule>, String>>,
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
                module: OnceLock::new(),
            }),
        }
    }

    /// The module of plain instances, compiled (or read from the cache) on first use.
    fn plain(&self) -> Result<&CudaModule, InductorError> {
        let p = self.plain.as_ref().ok_or_else(|| {
            InductorError::Cuda("an aligned-only kernel has no plain source".into())
        })?;
        let m = p.module.get_or_init(|| {
            let dir = p.src.cache_dir.join("cuda");
            // NVRTC was loaded when the graph compiled: no site dirs needed to find it.
            let (cubin, _) = crate::cuda::build(&p.src.source, &p.src.policy, &dir, &[])
                .map_err(|e| e.to_string())?;
            let abis = self.abis.iter().map(|a| CudaKernelAbi {
                aligned: false,
                ..a.clone()
            });
            Ok(Box::new(CudaModule::new(
                p.src.source.clone(),
                cubin,
                abis.collect(),
                self.gathers,
                None,
            )))
        });
        m.as_deref().map_err(|e| InductorError::Cuda(e.clone()))
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
            let plain = self.plain().map_err(device_err)?;
            // SAFETY: the caller's contract, for the same kernel printed for any pointers.
            return unsafe { plain.launch(k, args, sizes, host) };
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
        // A kernel that ran from the plain module set that module's flag.
        let plain = match self.plain.as_ref().and_then(|p| p.module.get()) {
            Some(Ok(m)) => m.take_index_error(host)?,
            _ => false,
        };
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
        let plain = p.plain_source.clone().map(|source| PlainSource {
            source,
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
