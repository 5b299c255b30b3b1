//! The CUDA driver as torch uses it: one primary context per device, made current on the
//! calling thread only around our own driver calls (and the previous one restored), so torch's
//! idea of the current device never changes under it.
//!
//! [`init`] answers once per process whether CUDA can run at all (driver library, `cuInit`,
//! NVRTC); every caller gets the same answer, so a machine without a GPU is told once.

use std::path::PathBuf;
use std::sync::{Mutex, OnceLock};

use cudarc::driver::{result, sys};

use crate::InductorError;

fn driver_err(what: &'static str) -> impl Fn(result::DriverError) -> InductorError {
    move |e| InductorError::Cuda(format!("{what}: {e:?}"))
}

/// What [`init`] found.
#[derive(Clone, Debug)]
pub struct CudaInfo {
    pub devices: i32,
    pub nvrtc: super::Nvrtc,
}

/// Loads the driver, runs `cuInit` and finds NVRTC (looked for under `site_dirs`, the Python's
/// `sys.path`, first). Once per process: later calls return the first answer.
pub fn init(site_dirs: &[PathBuf]) -> Result<&'static CudaInfo, InductorError> {
    static INFO: OnceLock<Result<CudaInfo, String>> = OnceLock::new();
    INFO.get_or_init(|| init_uncached(site_dirs))
        .as_ref()
        .map_err(|e| InductorError::Cuda(e.clone()))
}

fn init_uncached(site_dirs: &[PathBuf]) -> Result<CudaInfo, String> {
    if !super::launch::driver_present() {
        return Err("no CUDA driver library (libcuda.so) on this machine".into());
    }
    result::init().map_err(|e| format!("cuInit failed: {e:?}"))?;
    let devices = result::device::get_count().map_err(|e| format!("cuDeviceGetCount: {e:?}"))?;
    if devices == 0 {
        return Err("the CUDA driver sees no device".into());
    }
    let nvrtc = super::nvrtc::load(site_dirs).map_err(|e| e.to_string())?;
    Ok(CudaInfo {
        devices,
        nvrtc: nvrtc.clone(),
    })
}

/// Compute capability `(major, minor)` of device `ordinal` (after [`init`] succeeded).
pub fn capability(ordinal: u32) -> Result<(u32, u32), InductorError> {
    let dev = result::device::get(ordinal as i32).map_err(driver_err("cuDeviceGet"))?;
    let attr = |a| {
        // SAFETY: `dev` came from `cuDeviceGet`; the attribute is a plain integer query.
        unsafe { result::device::get_attribute(dev, a) }.map_err(driver_err("cuDeviceGetAttribute"))
    };
    let major = attr(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?;
    let minor = attr(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?;
    Ok((major as u32, minor as u32))
}

/// A device's primary context (the one torch's runtime uses), retained for as long as this
/// value lives. One per device per process (see [`primary`]): never released, since loaded
/// modules of compiled graphs may live until the process exits.
pub struct PrimaryContext {
    pub ordinal: u32,
    ctx: sys::CUcontext,
}

// SAFETY: a CUcontext handle may be made current on any thread; the driver synchronizes.
unsafe impl Send for PrimaryContext {}
// SAFETY: as above; the value is only read after construction.
unsafe impl Sync for PrimaryContext {}

/// The primary context of device `ordinal`, retained once per process.
pub fn primary(ordinal: u32) -> Result<&'static PrimaryContext, InductorError> {
    static CTXS: Mutex<Vec<&'static PrimaryContext>> = Mutex::new(Vec::new());
    let mut ctxs = CTXS.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(c) = ctxs.iter().find(|c| c.ordinal == ordinal) {
        return Ok(c);
    }
    let dev = result::device::get(ordinal as i32).map_err(driver_err("cuDeviceGet"))?;
    // SAFETY: `dev` came from `cuDeviceGet`. Retaining an already active primary context (torch's)
    // only bumps its reference count.
    let ctx = unsafe { result::primary_ctx::retain(dev) }
        .map_err(driver_err("cuDevicePrimaryCtxRetain"))?;
    let c: &'static PrimaryContext = Box::leak(Box::new(PrimaryContext { ordinal, ctx }));
    ctxs.push(c);
    Ok(c)
}

impl PrimaryContext {
    /// Runs `f` with this context current on the calling thread, then makes the previous one
    /// current again (nothing to do when it already was this one, the common case: torch made
    /// it current when it last ran on this device from this thread).
    pub fn with_current<T>(
        &self,
        f: impl FnOnce() -> Result<T, InductorError>,
    ) -> Result<T, InductorError> {
        let prev = result::ctx::get_current().map_err(driver_err("cuCtxGetCurrent"))?;
        if prev == Some(self.ctx) {
            return f();
        }
        // SAFETY: `self.ctx` is a retained primary context (alive for the whole process).
        unsafe { result::ctx::set_current(self.ctx) }.map_err(driver_err("cuCtxSetCurrent"))?;
        let r = f();
        // SAFETY: restoring what was current before (a null handle unbinds, which is what no
        // current context means).
        let back = unsafe { result::ctx::set_current(prev.unwrap_or(std::ptr::null_mut())) };
        let out = r?;
        back.map_err(driver_err("cuCtxSetCurrent"))?;
        Ok(out)
    }
}
