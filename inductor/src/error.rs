//! Errors of compiling and running a graph.

use std::path::PathBuf;

/// Why a graph could not be compiled. `Unsupported` is the safe answer: the caller runs the graph
/// eagerly instead. (Single ops the inductor cannot lower do not error: they become fallbacks.)
#[derive(Debug, thiserror::Error)]
pub enum InductorError {
    /// A graph-level feature the inductor does not model (symbolic sizes, mutation through views).
    #[error("graph not supported by the inductor: {0}")]
    Unsupported(String),
    /// The graph breaks its own invariants (an argument that is not a tensor where one must be).
    #[error("malformed graph: {0}")]
    Malformed(String),
    #[error("C compiler failed: {cmd}\n{stderr}")]
    Compile { cmd: String, stderr: String },
    #[error("I/O on {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("loading kernels from {path}: {msg}")]
    Load { path: PathBuf, msg: String },
    /// NVRTC is not installed where it was looked for (torch's CUDA wheel, the library path).
    #[error("NVRTC not found: {0}")]
    NoNvrtc(String),
    /// NVRTC rejected the generated CUDA source (a code generator bug): its log.
    #[error("NVRTC failed ({status}):\n{log}")]
    Nvrtc { status: String, log: String },
    /// The CUDA driver refused a load or launch.
    #[error("CUDA driver: {0}")]
    Cuda(String),
}

impl InductorError {
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> InductorError {
        InductorError::Io {
            path: path.into(),
            source,
        }
    }
}

/// Why running a compiled graph failed.
#[derive(Debug, thiserror::Error)]
pub enum RunError<E: std::error::Error + 'static> {
    /// The inputs do not match what the graph was compiled for (the caller's guards should have
    /// caught this; the compiled kernels bake sizes and strides in).
    #[error("input {index}: {msg}")]
    Input { index: usize, msg: String },
    #[error("expected {expected} inputs, got {got}")]
    Arity { expected: usize, got: usize },
    /// A fallback returned something of another shape or dtype than the graph's metadata said.
    #[error("fallback {target} returned {msg}")]
    FallbackResult { target: String, msg: String },
    /// An `embedding` / `index_select` position was outside its dimension (torch raises an
    /// IndexError there).
    #[error("index out of range in self")]
    IndexOutOfRange,
    /// The CUDA driver refused to load or launch a kernel.
    #[error("CUDA driver: {0}")]
    Device(String),
    #[error(transparent)]
    Host(E),
    /// A fallback op (torch called for one graph node) raised: the node, and the host's error.
    #[error("{source}")]
    Op { node: fx::NodeId, source: E },
}
