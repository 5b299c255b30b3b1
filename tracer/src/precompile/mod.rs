//! `torchferro.compiler.precompile`'s Rust side: what a capture records about each compiled
//! entry (the traced graph, its guards, how its result is rebuilt) exported as plain Python data
//! for the artifact writer (`python/torchferro/precompile/`), and [`PrecompiledGraph`], which a
//! fresh process builds from a serialized graph and the cache's kernel libraries without tracing
//! or compiling anything.
//!
//! Counters (`counters()`): how many frames this process traced and how many times it ran the C
//! compiler; a loading process must show zero of both.

mod export;
pub mod graph_json;
mod load;
mod sym_text;

use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use pyo3::prelude::*;

use crate::output::OutputGraph;

pub use load::PrecompiledGraph;

static RECORDING: AtomicBool = AtomicBool::new(false);
static TRACES: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    /// Code objects compiled on this thread while recording, in order.
    static COMPILED: RefCell<Vec<Py<PyAny>>> = const { RefCell::new(Vec::new()) };
}

/// The traced graph of one compiled entry and the Python callable of each function node,
/// kept while a capture records (the runner alone cannot be written to disk).
pub struct Recorded {
    pub graph: fx::Graph,
    pub callables: Vec<(fx::NodeId, Py<PyAny>)>,
}

/// Called by the compile driver for every frame it is about to trace.
pub fn note_compile(code: &Bound<'_, PyAny>) {
    TRACES.fetch_add(1, Ordering::Relaxed);
    if RECORDING.load(Ordering::Relaxed) {
        COMPILED.with(|c| c.borrow_mut().push(code.clone().unbind()));
    }
}

/// What a compiled entry keeps for export, when a capture is recording.
pub fn record(py: Python<'_>, output: &OutputGraph) -> Option<Box<Recorded>> {
    RECORDING.load(Ordering::Relaxed).then(|| {
        Box::new(Recorded {
            graph: output.graph.clone(),
            callables: output
                .callables
                .iter()
                .map(|(n, c)| (*n, c.clone_ref(py)))
                .collect(),
        })
    })
}

/// Whether a precompile capture is recording the graphs compiled now.
pub fn recording() -> bool {
    RECORDING.load(Ordering::Relaxed)
}

/// Starts (`True`) or stops recording; returns the code objects compiled since the last start.
#[pyfunction]
fn precompile_record(py: Python<'_>, on: bool) -> Vec<Py<PyAny>> {
    RECORDING.store(on, Ordering::Relaxed);
    let _ = py;
    COMPILED.with(|c| std::mem::take(&mut *c.borrow_mut()))
}

/// `(frames traced, C compiler runs)` in this process.
#[pyfunction]
fn precompile_counters() -> (usize, usize) {
    (
        TRACES.load(Ordering::Relaxed),
        inductor::cache::compiler_invocations(),
    )
}

/// The name a kernel library of C `source` has in a precompiled cache.
#[pyfunction]
fn precompile_library_name(source: &str) -> String {
    inductor::cache::prebuilt_name(source)
}

/// Adds the precompile functions and class to `torchferro._C`.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PrecompiledGraph>()?;
    m.add_function(wrap_pyfunction!(precompile_record, m)?)?;
    m.add_function(wrap_pyfunction!(precompile_counters, m)?)?;
    m.add_function(wrap_pyfunction!(precompile_version, m)?)?;
    m.add_function(wrap_pyfunction!(precompile_library_name, m)?)?;
    m.add_function(wrap_pyfunction!(export::precompile_export, m)?)?;
    Ok(())
}

/// The version a precompiled cache records: the crate version and the graph format.
#[pyfunction]
fn precompile_version() -> String {
    format!("{} graph-format-1", env!("CARGO_PKG_VERSION"))
}
