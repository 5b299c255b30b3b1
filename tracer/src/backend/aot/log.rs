//! The `aot` log's names for a training graph, and the fallback record: why a graph runs
//! through torch's autograd on the eager runner (logged, counted in `_aot.counters`).

use pyo3::prelude::*;

use crate::code::CodeInfo;

/// Why a training graph runs through torch's autograd instead (logged and counted).
pub(super) fn fallback(py: Python<'_>, info: &Origin, why: &str) -> PyResult<()> {
    tracing::info!(target: "torchferro::aot", "aot: {} ({}:{}): the graph runs through torch's autograd on the eager runner: {why}", info.name, info.filename, info.firstlineno);
    py.import("torchferro._aot")?
        .call_method1("note_fallback", (why,))?;
    Ok(())
}

/// Where a training graph comes from, for the `aot` log.
#[derive(Clone)]
pub struct Origin {
    pub name: String,
    pub filename: String,
    pub firstlineno: u32,
}

impl Origin {
    pub fn of(info: &CodeInfo) -> Origin {
        Origin {
            name: info.name.clone(),
            filename: info.filename.clone(),
            firstlineno: info.firstlineno,
        }
    }
}
