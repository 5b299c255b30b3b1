//! The device a graph is compiled for, and the policy that goes with it.
//!
//! Lowering, planning and the C printer used to read CPU facts from constants scattered over
//! the crate (which dtypes the C code handles, when 4-d intermediates go channels-last for
//! oneDNN, the OpenMP threshold, the huge-page size, the largest row kept in a row-local
//! array). They are read from one [`CpuPolicy`] here, reached through [`Target`] in
//! [`crate::Options`], so a second device (CUDA) brings its own policy instead of forking the
//! code that reads it. The defaults are the values those constants had: the generated C is the
//! same.

use fx::{DType, Graph};

/// The device kernels are generated for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// C with OpenMP, built by the system compiler and `dlopen`ed.
    Cpu(CpuPolicy),
}

impl Default for Target {
    fn default() -> Target {
        Target::Cpu(CpuPolicy::default())
    }
}

impl Target {
    /// The CPU policy (the only target today).
    pub fn cpu(&self) -> &CpuPolicy {
        match self {
            Target::Cpu(p) => p,
        }
    }

    /// Storage dtypes the target's kernels handle; ops on others fall back.
    pub fn supports_dtype(&self, d: DType) -> bool {
        match self {
            Target::Cpu(p) => p.supports_dtype(d),
        }
    }

    /// Largest row (in elements) a kernel keeps in a row-local array instead of memory; lowering
    /// reads it too (softmax takes the single-pass form only when its row fits).
    pub fn scratch_max(&self) -> i64 {
        match self {
            Target::Cpu(p) => p.scratch_max,
        }
    }

    /// Whether 4-d intermediates of `graph` are laid out channels-last.
    pub fn channels_last(&self, graph: &Graph) -> bool {
        match self {
            Target::Cpu(p) => p.channels_last(graph),
        }
    }
}

/// When 4-d intermediates are laid out channels-last.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChannelsLast {
    /// When most of the graph's 2-d convolutions run on oneDNN (torch's dispatch rule), which
    /// convolves channels-last tensors without reordering them.
    WhenOneDnn,
    /// Never (intermediates keep eager's contiguous layout).
    Never,
}

/// What the CPU code generator and runtime decide by.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CpuPolicy {
    /// Kernels below this many loop iterations run on one thread (the `if` of every
    /// `#pragma omp parallel`): below it, waking threads costs more than it saves.
    pub parallel_threshold: i64,
    /// Buffers at least this large get a transparent-huge-page hint before they are first
    /// written (see [`crate::hugepage`]); `None`: never.
    pub hugepage_min_bytes: Option<i64>,
    /// Largest row (in elements) a staged kernel keeps in a per-row array instead of memory.
    pub scratch_max: i64,
    /// Kernels over at least this many elements run with the host's lock released. Releasing
    /// and retaking it costs about a microsecond, which smaller kernels would feel.
    pub unlock_min_elems: i64,
    pub channels_last: ChannelsLast,
}

impl Default for CpuPolicy {
    fn default() -> CpuPolicy {
        CpuPolicy {
            parallel_threshold: 32768,
            hugepage_min_bytes: Some(crate::hugepage::MIN_BYTES),
            scratch_max: 16384,
            unlock_min_elems: 1 << 14,
            channels_last: ChannelsLast::WhenOneDnn,
        }
    }
}

impl CpuPolicy {
    /// Storage dtypes the C code handles (half precision is computed in float). Others
    /// (complex) fall back per op.
    pub fn supports_dtype(&self, d: DType) -> bool {
        matches!(
            d,
            DType::Bool
                | DType::UInt8
                | DType::Int8
                | DType::Int16
                | DType::Int32
                | DType::Int64
                | DType::Float16
                | DType::BFloat16
                | DType::Float32
                | DType::Float64
        )
    }

    /// Whether `graph`'s 4-d intermediates go channels-last (see [`ChannelsLast`]).
    pub fn channels_last(&self, graph: &Graph) -> bool {
        match self.channels_last {
            ChannelsLast::WhenOneDnn => crate::lower::onednn::convolutions_mostly_onednn(graph),
            ChannelsLast::Never => false,
        }
    }

    /// Whether a buffer of `bytes` gets the huge-page hint.
    pub fn wants_hugepage(&self, bytes: i64) -> bool {
        self.hugepage_min_bytes.is_some_and(|min| bytes >= min)
    }
}
