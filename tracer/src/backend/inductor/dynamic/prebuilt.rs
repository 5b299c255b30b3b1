//! A symbolic graph in a precompiled artifact (`torchferro.compiler.precompile`).
//!
//! The capture keeps a dynamic graph's kernels only when they were lowered symbolically (one
//! library whose kernels take the size symbols as arguments, serving every assignment): that
//! library is all a loading process may use, since it never runs the C compiler. The loader
//! rebuilds the same graph against it (inside `inductor::cache::with_prebuilt`) and caps the
//! graph's library budget at that one library, so an assignment the symbolic kernels do not
//! serve (a size-oblivious symbol at 1) runs on the eager runner instead of compiling.
//! Graphs whose symbolic lowering declined (fitted templates, per-size libraries) hold kernels
//! for the sizes seen so far only and stay eager-runner replays.

use std::sync::atomic::Ordering;

use fx::Graph;
use pyo3::prelude::*;

use super::super::InductorProgram;

/// What a loading process needs, besides the graph, to rebuild a symbolic graph: the
/// capture's first assignment and each symbol's range, indexed by symbol id (as
/// [`InductorProgram::try_new_dynamic`] takes them; ids the kernels do not read hold `2` and
/// `(2, None)`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SymbolicExport {
    pub hints: Vec<i64>,
    pub bounds: Vec<(i64, Option<i64>)>,
}

impl InductorProgram {
    /// `Some` when this dynamic graph runs every assignment on its symbolic library and this
    /// program is that library's (its `source()` and `library_path()` are the library's):
    /// precompile then keeps the library and records the graph for the inductor runner.
    pub fn symbolic_export(&self) -> Option<SymbolicExport> {
        let d = self.dynamic.as_ref()?;
        let s = d.symbolic.get()?.as_ref()?;
        if !s.built.load(Ordering::Relaxed)
            || s.failed.load(Ordering::Relaxed)
            || d.size_at_one(&d.key)
        {
            return None;
        }
        let n = d.reads.iter().map(|r| r.2 as usize + 1).max().unwrap_or(0);
        let mut hints = vec![2; n];
        let mut bounds = vec![(2, None); n];
        for ((r, v), b) in d.reads.iter().zip(&d.key).zip(&d.bounds) {
            hints[r.2 as usize] = *v;
            bounds[r.2 as usize] = *b;
        }
        Some(SymbolicExport { hints, bounds })
    }

    /// Rebuilds a symbolic graph of a precompiled artifact at the capture's `hints`; called
    /// inside `inductor::cache::with_prebuilt`, so its one library comes from the cache's
    /// verified bytes. An error unless the graph lowered symbolically again and built on that
    /// library (the loader never compiles). The relations the trace relied on only steer the
    /// fitting of templates, which a loaded graph never does: none are passed.
    pub fn try_new_symbolic_prebuilt(
        graph: &Graph,
        callables: &[(fx::NodeId, Py<PyAny>)],
        grad_enabled: bool,
        export: &SymbolicExport,
    ) -> Result<InductorProgram, String> {
        // Said at once rather than found after fitting templates the loader cannot build.
        if !super::symbolic_enabled() {
            return Err(
                "the symbolic lowering is off in this process (TORCHFERRO_SYMBOLIC=0 \
                        or TORCHFERRO_SIZE_ARGS=0)"
                    .into(),
            );
        }
        let mut p = Self::try_new_dynamic(
            graph,
            callables,
            grad_enabled,
            &export.hints,
            Vec::new(),
            &export.bounds,
        )?
        .ok_or("the dynamic graph built no kernels")?;
        if p.symbolic_export().as_ref() != Some(export) {
            return Err("the graph no longer lowers symbolically at the capture's sizes".into());
        }
        let d = p.dynamic.as_mut().ok_or("not a dynamic graph")?;
        // No library past the symbolic one: another assignment runs on the eager runner.
        d.limit = d.built.load(Ordering::Relaxed);
        Ok(p)
    }
}

impl InductorProgram {
    /// How many assignments other than the first this dynamic graph has run, `(on kernels, on
    /// the eager runner)` (assignments dropped past the kept limit are not counted): what a
    /// loaded artifact's tests read to see its sizes ran the symbolic kernels.
    pub fn assignments_run(&self) -> (usize, usize) {
        let Some(vs) = self.dynamic.as_ref().and_then(|d| d.variants.lock().ok()) else {
            return (0, 0);
        };
        let kernels = vs.map.values().filter(|v| v.is_some()).count();
        (kernels, vs.map.len() - kernels)
    }
}
