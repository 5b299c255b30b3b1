//! A graph's CUDA kernels as a [`super::KernelModule`]: the cubin, loaded into a device's
//! primary context the first time the graph runs there (a graph compiled once may be run on
//! `cuda:0` and `cuda:1` alike: modules are keyed by device), and launched on the stream the
//! host names for each kernel ([`Host::cuda_stream`]: torch's current stream), with the
//! buffers' device pointers as parameters. No Python runs per launch.

use std::ffi::c_void;
use std::sync::Mutex;

use crate::codegen::cuda::CudaKernelAbi;
use crate::cuda::device::{self, PrimaryContext};
use crate::cuda::CudaKernels;
use crate::entity::EntityVec;
use crate::error::RunError;
use crate::host::Host;
use crate::schedule::KernelId;
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
    ) -> CudaModule {
        CudaModule {
            source,
            cubin,
            abis,
            gathers,
            loaded: Mutex::new(Vec::new()),
        }
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
        host: &mut H,
    ) -> Result<(), RunError<H::Error>> {
        let (dev, stream) = host.cuda_stream().map_err(RunError::Host)?;
        let ptrs: Vec<u64> = args.iter().map(|p| *p as u64).collect();
        self.on_device(dev, |kernels| {
            // SAFETY: the caller's contract; the stream is the host's current stream of `dev`,
            // whose primary context is current here.
            unsafe { kernels.launch(k, &ptrs, stream as cudarc::driver::sys::CUstream) }
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
        let (dev, stream) = host.cuda_stream().map_err(RunError::Host)?;
        self.on_device(dev, |kernels| {
            // SAFETY: the stream is the host's current stream of `dev`, whose context is current.
            unsafe { kernels.take_index_error(stream as cudarc::driver::sys::CUstream) }
        })
        .map_err(device_err)
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
