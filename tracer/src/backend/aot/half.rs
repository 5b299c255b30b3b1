//! One compiled half of a training graph (the forward, or a backward): the inductor's kernels,
//! or the eager runner where the inductor declines the graph.

use pyo3::prelude::*;

use fx::{Graph, NodeId};

use crate::backend::eager::EagerProgram;
use crate::backend::inductor::InductorProgram;
use crate::error::TraceError;

/// One compiled half: the inductor's kernels or the eager runner.
pub(super) enum Half {
    Eager(EagerProgram),
    Inductor(Box<InductorProgram>),
}

impl Half {
    /// `free_outputs`: output positions only the backward reads (see
    /// `inductor::Options::free_outputs`).
    pub(super) fn build(
        py: Python<'_>,
        graph: &Graph,
        callables: &[(NodeId, Py<PyAny>)],
        inductor: bool,
        what: &str,
        name: &str,
        free_outputs: Vec<usize>,
    ) -> Result<Half, TraceError> {
        if inductor {
            match InductorProgram::try_new_with(graph, callables, false, free_outputs) {
                Ok(Some(p)) => {
                    let reasons = p.fallback_reasons();
                    if !reasons.is_empty() {
                        tracing::info!(target: "torchferro::aot", "aot: {name}: {what}: {} op(s) run through torch: {}", reasons.len(), reasons.join("; "));
                    }
                    tracing::debug!(target: "torchferro::aot", "aot: {name}: {what} kernels:\n{}", p.source());
                    return Ok(Half::Inductor(Box::new(p)));
                }
                Ok(None) => {}
                Err(why) => {
                    tracing::info!(target: "torchferro::aot", "aot: {name}: {what} runs on the eager runner: {why}");
                }
            }
        }
        Ok(Half::Eager(EagerProgram::new(
            py,
            graph,
            callables,
            &crate::traceback::Sites::default(),
        )?))
    }

    pub(super) fn release_kept(&self) {
        if let Half::Inductor(p) = self {
            p.release_kept();
        }
    }

    pub(super) fn run<'py>(
        &self,
        py: Python<'py>,
        inputs: Vec<Bound<'py, PyAny>>,
    ) -> PyResult<Vec<Bound<'py, PyAny>>> {
        match self {
            Half::Eager(p) => p.run(py, inputs),
            Half::Inductor(p) => p.run(py, inputs, false),
        }
    }
}
