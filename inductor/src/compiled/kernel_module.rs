//! The loaded kernels of one compiled graph, behind one type: the run loop launches kernel `k`
//! on an argument array and asks whether a data-dependent read went out of range, without
//! knowing how the kernels were built or loaded: a C shared library (`dlopen`ed through
//! [`crate::cache`]) or a CUDA cubin (`cuda_module.rs`), launched on the host's stream.

use std::ffi::c_void;
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::Arc;

use crate::cache::{Built, Loaded};
use crate::codegen::KernelAbi;
use crate::entity::EntityVec;
use crate::error::RunError;
use crate::host::Host;
use crate::schedule::KernelId;
use crate::InductorError;

pub(crate) use super::size_args::SizeArgs;

/// Loaded kernels, one entry point per scheduled kernel, in schedule order.
pub(crate) enum KernelModule {
    /// Kernels of a C shared library, run on the calling thread (OpenMP inside).
    C(CLibrary),
    /// Kernels of a CUDA cubin, launched on the host's current stream of its device.
    /// (Boxed: the module, its policy and its plain-source fallback are larger than a
    /// library handle.)
    #[cfg(feature = "cuda")]
    /// (Shared: the graph of every assignment of a symbolic graph's sizes launches one module.)
    Cuda(Arc<super::cuda_module::CudaModule>),
}

impl KernelModule {
    /// The file the kernels were loaded from (precompile copies it into its cache).
    /// The shared object a CPU module was loaded from; a CUDA module has no such file
    /// (precompile then refuses the graph).
    pub(crate) fn library_path(&self) -> Option<&std::path::Path> {
        match self {
            KernelModule::C(lib) => Some(&lib._lib.path),
            KernelModule::Cuda(_) => None,
        }
    }

    /// Launches kernel `k` on `args` (one pointer per buffer, in its [`KernelAbi::bufs`] order),
    /// with the host's lock released when `unlocked`.
    ///
    /// # Safety
    /// Each pointer addresses a live buffer with the layout the kernel was generated for.
    pub(crate) unsafe fn launch<H: Host>(
        &self,
        k: KernelId,
        args: &mut [*mut c_void],
        host: &mut H,
        unlocked: bool,
        sizes: SizeArgs<'_>,
    ) -> Result<(), RunError<H::Error>> {
        match self {
            KernelModule::C(lib) => {
                // The C kernels read the sizes through the last pointer of `args`.
                let _ = sizes;
                let call = KernelCall(lib.kernels[k], args.as_mut_ptr());
                if unlocked {
                    host.run_unlocked(&mut move || {
                        // SAFETY: the caller's contract; `args` and the buffers it points to
                        // stay alive until `run_unlocked` returns.
                        unsafe { call.invoke() }
                    });
                } else {
                    // SAFETY: the caller's contract.
                    unsafe { call.invoke() };
                }
                Ok(())
            }
            #[cfg(feature = "cuda")]
            KernelModule::Cuda(m) => {
                // SAFETY: the caller's contract (device pointers, for a CUDA graph).
                unsafe { m.launch(k, args, sizes, host) }
            }
        }
    }

    /// Whether the kernels take the symbols' values through a pointer at the end of their
    /// argument array (C), rather than as launch parameters (CUDA).
    pub(crate) fn sizes_by_pointer(&self) -> bool {
        matches!(self, KernelModule::C(_))
    }

    /// Whether a kernel read a data-dependent position out of range since the last call
    /// (the flag is cleared).
    /// Whether the out-of-range flag is read once per run rather than after each kernel
    /// (reading a CUDA module's waits for its stream).
    pub(crate) fn defers_index_check(&self) -> bool {
        match self {
            KernelModule::C(_) => false,
            #[cfg(feature = "cuda")]
            KernelModule::Cuda(_) => true,
        }
    }

    pub(crate) fn take_index_error<H: Host>(
        &self,
        host: &mut H,
    ) -> Result<bool, RunError<H::Error>> {
        match self {
            KernelModule::C(lib) => {
                let _ = host;
                Ok(lib
                    .index_error
                    .is_some_and(|flag| flag.swap(0, Ordering::Relaxed) != 0))
            }
            #[cfg(feature = "cuda")]
            KernelModule::Cuda(m) => m.take_index_error(host),
        }
    }
}

type KernelFn = unsafe extern "C" fn(*mut *mut c_void);

/// The kernels of a `dlopen`ed C library. (Cloned for each assignment of a symbolic graph's
/// sizes: they all run the one library, which the shared `Loaded` keeps mapped.)
#[derive(Clone)]
pub(crate) struct CLibrary {
    kernels: EntityVec<KernelId, KernelFn>,
    /// The library's out-of-range flag, for graphs with data-dependent loads. Not really
    /// `'static`: valid while `_lib` keeps the library mapped, which is as long as `self`.
    index_error: Option<&'static AtomicI32>,
    /// Keeps the kernels' code mapped.
    _lib: Arc<Loaded>,
}

impl CLibrary {
    /// Looks up every kernel of `abi` in the built library, and the out-of-range flag when the
    /// graph has data-dependent reads (`gathers`).
    pub(crate) fn load(
        built: &Built,
        abi: &EntityVec<KernelId, KernelAbi>,
        gathers: bool,
    ) -> Result<CLibrary, InductorError> {
        let load_error = |e: libloading::Error| InductorError::Load {
            path: built.lib.path.clone(),
            msg: e.to_string(),
        };
        let mut kernels = EntityVec::with_capacity(abi.len());
        for k in abi {
            // SAFETY: every kernel is defined with this signature by the code generator.
            let f: KernelFn = unsafe {
                *built
                    .lib
                    .lib
                    .get::<KernelFn>(k.name.as_bytes())
                    .map_err(load_error)?
            };
            kernels.push(f);
        }
        let index_error = if gathers {
            // SAFETY: the prelude defines `int tf_index_error`; an int and an AtomicI32 share
            // layout.
            let sym = unsafe {
                built
                    .lib
                    .lib
                    .get::<*const AtomicI32>(b"tf_index_error")
                    .map_err(load_error)?
            };
            // SAFETY: see the field's doc: the reference never outlives the library.
            Some(unsafe { &**sym })
        } else {
            None
        };
        Ok(CLibrary {
            kernels,
            index_error,
            _lib: built.lib.clone(),
        })
    }
}

/// A kernel and its argument array, handed to [`Host::run_unlocked`].
#[derive(Clone, Copy)]
struct KernelCall(KernelFn, *mut *mut c_void);

// SAFETY: a generated kernel reads and writes only the buffers its argument array points to
// (and its own library's index-error flag, an atomic); it touches no host or interpreter
// state, so it may run on any thread while the host's lock is released. The array and the
// buffers are owned by the call that makes the `KernelCall` and outlive it.
unsafe impl Send for KernelCall {}

impl KernelCall {
    /// # Safety
    /// The argument array points to live buffers with the layouts the kernel was built for.
    unsafe fn invoke(self) {
        // SAFETY: the caller's contract.
        unsafe { (self.0)(self.1) }
    }
}
