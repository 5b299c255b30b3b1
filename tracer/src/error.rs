//! Why tracing a frame stopped.

use pyo3::PyErr;

use crate::event::{FrameSite, Location};

#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    /// Something the tracer does not handle yet: the frame runs eagerly, or under
    /// `fullgraph=True` the user gets `torchferro.Unsupported` with this reason.
    #[error("{reason}")]
    Unsupported {
        reason: String,
        location: Option<Location>,
        /// Index of the root frame's instruction that was running (the graph-break point).
        instruction: Option<usize>,
        /// The inlined calls active when tracing stopped, innermost first.
        frames: Vec<FrameSite>,
    },
    /// The user's program raised while its ops were run on metadata (a shape mismatch, a bad
    /// argument). The frame then runs eagerly so the user sees the real exception unchanged.
    #[error("{call} raised {message}")]
    UserError {
        call: String,
        message: String,
        error: PyErr,
    },
    /// The traced code inspects its own frame (`inspect.currentframe()`, `sys._getframe`, a
    /// debugger, `eval` of the caller's locals): a graph break would run it in generated code
    /// whose frame is not the user's, so the whole frame runs eagerly (under `fullgraph=True`,
    /// `torchferro.Unsupported`).
    #[error("{0}")]
    Introspects(String),
    /// An exception the traced code raised (`raise`, or a Python operation it folded that
    /// raised), on its way to a handler of a traced frame (`interp/exceptions.rs`). It never
    /// leaves the interpreter: not caught in the traced frames, it becomes `fallback` (a graph
    /// break where the exception was made, or the frame run eagerly), so the real exception is
    /// raised by the program itself.
    #[error("{fallback}")]
    Raised {
        exc: pyo3::Py<pyo3::PyAny>,
        fallback: Box<TraceError>,
    },
    /// A bug in torchferro.
    #[error("internal error: {0}")]
    Internal(String),
    #[error(transparent)]
    Python(#[from] PyErr),
}

impl From<std::convert::Infallible> for TraceError {
    fn from(e: std::convert::Infallible) -> Self {
        match e {}
    }
}

impl TraceError {
    pub fn unsupported(reason: impl Into<String>) -> TraceError {
        TraceError::Unsupported {
            reason: reason.into(),
            location: None,
            instruction: None,
            frames: Vec::new(),
        }
    }

    pub fn internal(msg: impl Into<String>) -> TraceError {
        TraceError::Internal(msg.into())
    }

    /// Attaches the user's line if none is set yet.
    pub fn at(self, loc: &Location) -> TraceError {
        match self {
            TraceError::Raised { exc, fallback } => TraceError::Raised {
                exc,
                fallback: Box::new(fallback.at(loc)),
            },
            TraceError::Unsupported {
                reason,
                location: None,
                instruction,
                frames,
            } => TraceError::Unsupported {
                reason,
                location: Some(loc.clone()),
                instruction,
                frames,
            },
            other => other,
        }
    }

    /// Records the root frame's instruction during which tracing stopped.
    pub fn in_root_instruction(self, index: usize) -> TraceError {
        match self {
            TraceError::Unsupported {
                reason,
                location,
                instruction: None,
                frames,
            } => TraceError::Unsupported {
                reason,
                location,
                instruction: Some(index),
                frames,
            },
            other => other,
        }
    }

    /// Records that the error passed through function `function`, running `location`.
    pub fn through_frame(mut self, function: &str, location: &Location) -> TraceError {
        if let TraceError::Raised { exc, fallback } = self {
            return TraceError::Raised {
                exc,
                fallback: Box::new(fallback.through_frame(function, location)),
            };
        }
        if let TraceError::Unsupported { frames, .. } = &mut self {
            frames.push(FrameSite {
                function: function.to_string(),
                location: location.clone(),
            });
        }
        self
    }
}
