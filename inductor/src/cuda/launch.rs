//! Loading a graph's cubin into the current CUDA context and launching its kernels on a
//! caller's stream, through cudarc's driver API (loaded at run time: no driver, an error).
//!
//! The caller owns the context and the stream (torch's current ones, on the launch path that
//! is to come) and the buffers (device pointers, from torch's caching allocator); this module
//! only packs the pointers as kernel parameters. Loading checks the module's validation global
//! against the source hash, as the CPU loader checks its library's symbol.

use std::ffi::{c_void, CString};
use std::sync::atomic::{AtomicU64, Ordering};

use cudarc::driver::{result, sys};

use super::CudaGraph;
use crate::cache::sha256_hex;
use crate::codegen::cuda::{CudaKernelAbi, INDEX_ERROR_SYMBOL};
use crate::codegen::VALIDATION_SYMBOL;
use crate::entity::EntityVec;
use crate::schedule::KernelId;
use crate::InductorError;

fn driver_err(what: &str) -> impl Fn(result::DriverError) -> InductorError + '_ {
    move |e| InductorError::Cuda(format!("{what}: {e:?}"))
}

/// Kernels launched by [`CudaKernels::launch`] in this process (what tests read to tell that
/// a graph ran our kernels, not torch's).
static LAUNCHES: AtomicU64 = AtomicU64::new(0);

/// How many kernels this process has launched through [`CudaKernels::launch`].
pub fn launches() -> u64 {
    LAUNCHES.load(Ordering::Relaxed)
}

/// Whether the CUDA driver library can be loaded (no GPU machine has none).
pub fn driver_present() -> bool {
    // SAFETY: probing opens the library by name and closes it again; no symbol is called.
    unsafe { sys::is_culib_present() }
}

/// A graph's kernels, loaded into the context that was current when [`CudaKernels::load`] ran.
pub struct CudaKernels {
    module: sys::CUmodule,
    funcs: EntityVec<KernelId, sys::CUfunction>,
    abis: EntityVec<KernelId, CudaKernelAbi>,
    /// The module's out-of-range flag (a device `int`).
    index_error: sys::CUdeviceptr,
}

// SAFETY: module and function handles are plain driver handles, valid from any thread while the
// module's context lives (the loader's contract); the driver serializes its own state.
unsafe impl Send for CudaKernels {}
// SAFETY: as above; `launch` and `take_index_error` only read the handles.
unsafe impl Sync for CudaKernels {}

impl CudaKernels {
    /// Loads `g`'s cubin and looks its kernels up; fails if the module's validation global does
    /// not name `g`'s source.
    ///
    /// # Safety
    /// A CUDA context is current on this thread, and stays alive (and current wherever the
    /// kernels are launched or dropped) while the returned value lives.
    pub unsafe fn load(g: &CudaGraph) -> Result<CudaKernels, InductorError> {
        // SAFETY: the caller's contract.
        unsafe { CudaKernels::load_parts(&g.source, &g.cubin, &g.kernels) }
    }

    /// [`CudaKernels::load`] from a graph's source, cubin and kernel list.
    ///
    /// # Safety
    /// As for [`CudaKernels::load`].
    pub unsafe fn load_parts(
        source: &str,
        cubin: &[u8],
        kernels: &EntityVec<KernelId, CudaKernelAbi>,
    ) -> Result<CudaKernels, InductorError> {
        if cubin.is_empty() {
            return Err(InductorError::Cuda("the graph has no kernels".into()));
        }
        // SAFETY: the cubin is a complete ELF image NVRTC produced (or the cache returned after
        // checking its length and hash); the driver copies what it needs.
        let module = unsafe { result::module::load_data(cubin.as_ptr().cast()) }
            .map_err(driver_err("cuModuleLoadData"))?;
        let loaded = CudaKernels {
            module,
            funcs: EntityVec::new(),
            abis: kernels.clone(),
            index_error: 0,
        };
        let mut loaded = loaded;
        let sym = |name: &str| CString::new(name).expect("symbol names have no NUL");
        for abi in kernels.iter() {
            // SAFETY: `module` is loaded (above) and stays loaded while `loaded` lives.
            let f = unsafe { result::module::get_function(module, sym(&abi.name)) }
                .map_err(driver_err("cuModuleGetFunction"))?;
            loaded.funcs.push(f);
        }
        // SAFETY: as above; the globals are the generated source's own.
        let (abi_ptr, abi_len) =
            unsafe { result::module::get_global(module, sym(VALIDATION_SYMBOL)) }
                .map_err(driver_err("cuModuleGetGlobal"))?;
        let mut abi = vec![0u8; abi_len];
        // SAFETY: `abi_ptr` addresses `abi_len` bytes of the module's global; `abi` has room.
        unsafe { result::memcpy_dtoh_sync(&mut abi, abi_ptr) }
            .map_err(driver_err("reading the validation global"))?;
        let cut = source
            .rfind(&format!("\n__device__ const char {VALIDATION_SYMBOL}"))
            .unwrap_or(source.len());
        let want = sha256_hex(&source.as_bytes()[..cut]);
        if abi.split(|&b| b == 0).next() != Some(want.as_bytes()) {
            return Err(InductorError::Cuda(
                "the module's validation global does not name its source".into(),
            ));
        }
        // SAFETY: as above.
        let (flag, _) = unsafe { result::module::get_global(module, sym(INDEX_ERROR_SYMBOL)) }
            .map_err(driver_err("cuModuleGetGlobal"))?;
        loaded.index_error = flag;
        Ok(loaded)
    }

    pub fn abi(&self, k: KernelId) -> &CudaKernelAbi {
        &self.abis[k]
    }

    /// Launches kernel `k` on `stream` with `ptrs[i]` the device address of its `i`-th buffer
    /// ([`CudaKernelAbi::bufs`] order). A kernel over no elements is not launched.
    ///
    /// # Safety
    /// As for [`CudaKernels::load`]; `stream` belongs to that context; each pointer addresses a
    /// live device buffer with the dtype and layout the kernel was generated for.
    pub unsafe fn launch(
        &self,
        k: KernelId,
        ptrs: &[u64],
        stream: sys::CUstream,
    ) -> Result<(), InductorError> {
        let grid = self.abis[k].grid;
        // SAFETY: the caller's contract; a static kernel takes no sizes.
        unsafe { self.launch_sized(k, ptrs, &[], grid, stream) }
    }

    /// [`CudaKernels::launch`] for a kernel of a graph with symbolic sizes: `syms` are the
    /// symbols' values (its by-value `int64_t` parameters after the buffers, empty for a static
    /// graph) and `grid` the blocks its [`CudaKernelAbi::grid_rule`] gives for them.
    ///
    /// # Safety
    /// As for [`CudaKernels::launch`]; `syms` are the values the buffers' layouts were made for.
    pub unsafe fn launch_sized(
        &self,
        k: KernelId,
        ptrs: &[u64],
        syms: &[i64],
        grid: u32,
        stream: sys::CUstream,
    ) -> Result<(), InductorError> {
        let abi = &self.abis[k];
        assert_eq!(ptrs.len(), abi.bufs.len(), "{}: argument count", abi.name);
        if grid == 0 {
            return Ok(());
        }
        // cuLaunchKernel reads each parameter through a pointer to its value.
        let mut params: Vec<*mut c_void> = ptrs
            .iter()
            .map(|p| p as *const u64 as *mut c_void)
            .chain(syms.iter().map(|s| s as *const i64 as *mut c_void))
            .collect();
        // SAFETY: the caller's contract; `params` points at `ptrs` and `syms`, which outlive the call
        // (the driver copies parameter values when the launch is enqueued).
        unsafe {
            result::launch_kernel(
                self.funcs[k],
                (grid, 1, 1),
                (abi.block, 1, 1),
                0,
                stream,
                &mut params,
            )
        }
        .map_err(driver_err("cuLaunchKernel"))?;
        LAUNCHES.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    /// Whether a kernel read a data-dependent position out of range since the last call
    /// (waits for `stream`; clears the flag).
    ///
    /// # Safety
    /// As for [`CudaKernels::launch`].
    pub unsafe fn take_index_error(&self, stream: sys::CUstream) -> Result<bool, InductorError> {
        let mut flag = [0i32];
        // SAFETY: the flag is a 4-byte module global; `flag` has room; the copy is ordered after
        // the stream's kernels and waited for before `flag` is read.
        unsafe {
            result::memcpy_dtoh_async(&mut flag, self.index_error, stream)
                .and_then(|_| result::stream::synchronize(stream))
                .map_err(driver_err("reading the index flag"))?;
            if flag[0] != 0 {
                result::memset_d8_async(self.index_error, 0, 4, stream)
                    .map_err(driver_err("clearing the index flag"))?;
            }
        }
        Ok(flag[0] != 0)
    }
}

impl Drop for CudaKernels {
    fn drop(&mut self) {
        // SAFETY: `load`'s contract keeps the module's context alive; the module is unloaded
        // once, here.
        let _ = unsafe { result::module::unload(self.module) };
    }
}
