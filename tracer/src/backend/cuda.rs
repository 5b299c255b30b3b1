//! Graphs on CUDA tensors through the Rust inductor (issue 16): which device a graph runs on,
//! whether CUDA kernels may run at all, and the torch handles the host needs for them.
//!
//! The host stays [`super::inductor::TorchHost`]: buffers come from torch's caching allocator
//! (`torch.empty_strided(..., device=cuda:i)`), extern calls and fallbacks are torch ops (which
//! run on torch's current stream), and the generated kernels are launched by the inductor on
//! that same stream (`torch._C._cuda_getCurrentRawStream(i)`, read once per call), in the
//! device's primary context, which is the one torch's runtime uses.

use std::path::PathBuf;
use std::sync::OnceLock;

use pyo3::prelude::*;
use pyo3::types::PyTuple;

use fx::{Graph, NodeMeta};

/// Where a graph's tensors live.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Placement {
    Cpu,
    Cuda(u32),
}

/// The device a graph's kernels run on: the one CUDA device its tensors use, where there is
/// one (CPU tensors beside it, such as the scalar `torch.tensor(n)` a model moves over with
/// `.to(device)`, are left to torch: the lowering runs every op that touches them as a
/// fallback), else the CPU. `Err` when tensors sit on two CUDA devices or on another kind of
/// device (such a graph runs on the eager runner, which lets torch decide).
pub fn placement(graph: &Graph) -> Result<Placement, String> {
    let mut found: Option<Placement> = None;
    for (_, n) in graph.nodes() {
        let NodeMeta::Tensor(t) = &n.meta else {
            continue;
        };
        let p = match t.device.kind.as_str() {
            "cpu" => continue,
            "cuda" => Placement::Cuda(t.device.index.unwrap_or(0).max(0) as u32),
            other => {
                return Err(format!(
                    "a tensor on {other} (the inductor compiles for CPU and CUDA)"
                ))
            }
        };
        match found {
            None => found = Some(p),
            Some(q) if q == p => {}
            Some(q) => {
                return Err(format!(
                    "tensors on two devices ({}, {}) (runs on the eager backend)",
                    name(q),
                    name(p)
                ))
            }
        }
    }
    Ok(found.unwrap_or(Placement::Cpu))
}

fn name(p: Placement) -> String {
    match p {
        Placement::Cpu => "cpu".into(),
        Placement::Cuda(i) => format!("cuda:{i}"),
    }
}

/// Whether CUDA graphs go to the inductor: `TORCHFERRO_CUDA=0` turns it off, `=1` on; unset,
/// [`DEFAULT_ON`].
pub fn enabled() -> bool {
    match std::env::var("TORCHFERRO_CUDA") {
        Ok(v) if v == "1" => true,
        Ok(v) if v == "0" => false,
        _ => DEFAULT_ON,
    }
}

/// The default when `TORCHFERRO_CUDA` is unset: on since session 11, when the kernels reached
/// torch.compile's speed on the memory-bound bench rows and the model zoo ran them (docs/cuda.md).
pub const DEFAULT_ON: bool = true;

/// The inductor's options for a graph on `cuda:index`: the device's compute capability. `Err`
/// (the graph runs eagerly) when CUDA cannot run here: no driver, no device, no NVRTC. That is
/// logged once per process as a warning, not for every graph.
pub fn options(py: Python<'_>, index: u32) -> Result<inductor::Options, String> {
    let site: Vec<PathBuf> = py
        .import("sys")
        .and_then(|s| s.getattr("path"))
        .and_then(|p| p.extract::<Vec<String>>())
        .unwrap_or_default()
        .into_iter()
        .map(PathBuf::from)
        .collect();
    // Loading the driver and NVRTC touches no Python object.
    let info = py.detach(|| inductor::cuda::device::init(&site));
    if let Err(e) = &info {
        static WARNED: OnceLock<()> = OnceLock::new();
        WARNED.get_or_init(|| {
            tracing::warn!(
                target: "torchferro::inductor",
                "CUDA graphs run on the eager backend: {e}"
            );
        });
    }
    let info = info.map_err(|e| e.to_string())?;
    if index as i32 >= info.devices {
        return Err(format!(
            "cuda:{index}: the driver sees {} devices",
            info.devices
        ));
    }
    let (major, minor) = inductor::cuda::device::capability(index).map_err(|e| e.to_string())?;
    Ok(inductor::Options {
        target: inductor::Target::Cuda(
            inductor::CudaPolicy::for_capability(major, minor).with_knobs(),
        ),
        ..Default::default()
    })
}

/// Kernels launched by CUDA graphs in this process (`torchferro._C._cuda_kernel_launches`).
pub fn launches() -> u64 {
    inductor::cuda::launch::launches()
}

/// Sources compiled by NVRTC in this process (`torchferro._C._nvrtc_compiles`; cubin cache hits
/// are not counted).
pub fn nvrtc_compiles() -> u64 {
    inductor::cuda::nvrtc::compiles()
}

/// Torch objects a CUDA host needs, looked up once per compiled graph.
pub struct CudaHandles {
    pub index: u32,
    /// `torch.device("cuda", index)`.
    pub device: Py<PyAny>,
    /// `("dtype", "device")`, the keyword names of an `empty_strided` vectorcall.
    pub kwnames: Py<PyTuple>,
    /// `torch._C._cuda_getCurrentRawStream`: the current stream's `cudaStream_t` as an int.
    pub raw_stream: Py<PyAny>,
}

impl CudaHandles {
    pub fn new(py: Python<'_>, index: u32) -> PyResult<CudaHandles> {
        let torch = py.import("torch")?;
        Ok(CudaHandles {
            index,
            device: torch.getattr("device")?.call1(("cuda", index))?.unbind(),
            kwnames: PyTuple::new(py, ["dtype", "device"])?.unbind(),
            raw_stream: torch
                .getattr("_C")?
                .getattr("_cuda_getCurrentRawStream")?
                .unbind(),
        })
    }

    /// The current stream of this device, as a `CUstream` value.
    pub fn current_stream(&self, py: Python<'_>) -> PyResult<u64> {
        self.raw_stream.bind(py).call1((self.index,))?.extract()
    }
}
