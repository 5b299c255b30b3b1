//! Training graphs with symbolic sizes (automatic dynamic, issue 17 × issue 18).
//!
//! The joint graph is derived at known sizes (`fx::autodiff` reads concrete shapes) and the
//! inductor's C kernels take static sizes, so a dynamic training graph is specialized to the
//! sizes of each call (`fx::passes::specialize`), and each assignment of its size symbols gets
//! its own joint, forward and backward ([`super::aot::build_parts`]), as the inference path
//! compiles one kernel library per assignment (`InductorProgram::try_new_dynamic`). The trace
//! and its guards are made once for all sizes. Past `TORCHFERRO_SIZE_VARIANTS` assignments (or
//! where one does not build) the traced graph runs through torch's autograd on the eager
//! runner, which takes any size.

use super::inductor::dynamic::max_size_variants;
use std::sync::{Arc, Mutex};

use pyo3::prelude::*;

use fx::{Graph, NodeId};

use super::aot::{build_parts, AotProgram, Origin};
use super::eager::EagerProgram;
use crate::error::TraceError;

/// How a training graph runs: compiled at its one set of sizes, or per assignment of its size
/// symbols.
pub enum Training {
    Static(Box<AotProgram>),
    Dynamic(Box<AotDynamic>),
}

impl Training {
    pub fn run<'py>(
        &self,
        py: Python<'py>,
        inputs: Vec<Bound<'py, PyAny>>,
    ) -> PyResult<Vec<Bound<'py, PyAny>>> {
        match self {
            Training::Static(p) => p.run(py, inputs),
            Training::Dynamic(d) => d.run(py, inputs),
        }
    }

    pub fn release_kept(&self) {
        match self {
            Training::Static(p) => p.release_kept(),
            Training::Dynamic(d) => d.release_kept(),
        }
    }
}

/// The program of one assignment of the size symbols (`None`: it did not build; the eager
/// runner runs it).
type Variant = Option<Arc<AotProgram>>;

/// A dynamic training graph: one compiled program per assignment of its size symbols.
pub struct AotDynamic {
    /// The traced graph with its symbols.
    graph: Graph,
    callables: Vec<(NodeId, Py<PyAny>)>,
    sites: crate::traceback::Sites,
    origin: Origin,
    inductor: bool,
    /// Where each symbol's value is read on a call: (input, dim, symbol).
    reads: Vec<(usize, usize, u32)>,
    /// Programs per assignment.
    variants: Mutex<Vec<(Vec<i64>, Variant)>>,
    limit: usize,
    /// The traced graph on the eager runner (any size), for assignments without a program.
    eager: EagerProgram,
}

/// The dynamic training program of `output`'s graph, compiled first at the symbols' hints;
/// `None` where the graph cannot be specialized (a symbol that is no input dimension) or does
/// not build at the hints (the reason is logged and counted as a fallback).
pub fn build(
    py: Python<'_>,
    info: &crate::code::CodeInfo,
    output: &crate::output::OutputGraph,
    inductor: bool,
) -> Result<Option<AotDynamic>, TraceError> {
    let origin = Origin::of(info);
    let Some(reads) = fx::passes::specialize::symbol_reads(&output.graph) else {
        py.import("torchferro._aot")?.call_method1(
            "note_fallback",
            ("symbolic sizes: a size symbol is not the size of an input dimension",),
        )?;
        return Ok(None);
    };
    let hints = output.shapes.hints();
    let key: Vec<i64> = reads.iter().map(|r| hints[r.2 as usize]).collect();
    let d = AotDynamic {
        graph: output.graph.clone(),
        callables: output
            .callables
            .iter()
            .map(|(n, c)| (*n, c.clone_ref(py)))
            .collect(),
        sites: output.sites.clone(),
        origin,
        inductor,
        reads,
        variants: Mutex::new(Vec::new()),
        limit: max_size_variants(),
        eager: EagerProgram::new(py, &output.graph, &output.callables, &output.sites)?,
    };
    match d.compile_at(py, &key)? {
        Some(p) => {
            d.variants
                .lock()
                .map_err(|_| TraceError::unsupported("a poisoned lock"))?
                .push((key, Some(Arc::new(p))));
            Ok(Some(d))
        }
        None => Ok(None),
    }
}

impl AotDynamic {
    /// The program of the graph specialized to `key` (`None`: it runs on the eager runner; the
    /// reason was logged).
    fn compile_at(&self, py: Python<'_>, key: &[i64]) -> Result<Option<AotProgram>, TraceError> {
        let value = |k: u32| {
            self.reads
                .iter()
                .position(|r| r.2 == k)
                .map_or(0, |i| key[i])
        };
        let g = match fx::passes::specialize::specialize(&self.graph, &value) {
            Ok(g) => g,
            Err(e) => {
                py.import("torchferro._aot")?
                    .call_method1("note_fallback", (format!("symbolic sizes: {e}"),))?;
                return Ok(None);
            }
        };
        build_parts(
            py,
            &self.origin,
            &g,
            &self.callables,
            &self.sites,
            self.inductor,
        )
    }

    /// The symbols' values for `inputs`.
    fn key(&self, py: Python<'_>, inputs: &[Bound<'_, PyAny>]) -> PyResult<Vec<i64>> {
        super::inductor::dynamic::symbol_values(py, &self.reads, inputs)
    }

    fn run<'py>(
        &self,
        py: Python<'py>,
        inputs: Vec<Bound<'py, PyAny>>,
    ) -> PyResult<Vec<Bound<'py, PyAny>>> {
        let key = self.key(py, &inputs)?;
        let known = {
            let vs = self
                .variants
                .lock()
                .map_err(|_| pyo3::exceptions::PyRuntimeError::new_err("a poisoned lock"))?;
            match vs.iter().find(|(k, _)| *k == key) {
                Some((_, p)) => Some(p.clone()),
                None if vs.len() >= self.limit => Some(None),
                None => None,
            }
        };
        let program = match known {
            Some(p) => p,
            None => {
                // Built without the lock (the build calls into Python, which may switch
                // threads).
                let p = self
                    .compile_at(py, &key)
                    .map_err(|e| pyo3::exceptions::PyRuntimeError::new_err(e.to_string()))?
                    .map(Arc::new);
                if let Ok(mut vs) = self.variants.lock() {
                    if !vs.iter().any(|(k, _)| *k == key) {
                        vs.push((key, p.clone()));
                    }
                }
                p
            }
        };
        match program {
            Some(p) => p.run(py, inputs),
            None => self.eager.run(py, inputs),
        }
    }

    fn release_kept(&self) {
        if let Ok(vs) = self.variants.lock() {
            for p in vs.iter().filter_map(|(_, p)| p.as_ref()) {
                p.release_kept();
            }
        }
    }
}
