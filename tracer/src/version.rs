//! The running interpreter's bytecode version.

use pyo3::prelude::*;

use crate::error::TraceError;

pub fn current(py: Python<'_>) -> Result<bytecode::Version, TraceError> {
    let v = py.version_info();
    match (v.major, v.minor) {
        (3, 11) => Ok(bytecode::Version::V3_11),
        (3, 12) => Ok(bytecode::Version::V3_12),
        (major, minor) => Err(TraceError::unsupported(format!(
            "torchferro is not supported on Python {major}.{minor}"
        ))),
    }
}
