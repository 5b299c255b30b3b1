//! The captured graph as the inductor sees it: functionalized (`fx::passes::functionalize`), and
//! what a call needs around it to keep eager's semantics.
//!
//! Which backend sees which graph: the eager runner and Python backends get the graph as traced
//! (in-place ops and all). Replaying torch calls one by one is eager by construction, aliasing
//! inputs included, and a Python backend gets what `torch.compile`'s Dynamo hands its backends
//! (functionalization is the backend's own business there, e.g. AOT autograd's). The inductor
//! computes values, so it gets the functional graph: no op in it writes a tensor, changed inputs
//! get one `copy_` at the end, and two things a value graph cannot say are handled here per call:
//!
//! - outputs that in eager are views of an input or of another output are rebuilt after the
//!   kernels ran by replaying their view steps on that base, so `data_ptr`s and `._base` relate
//!   as in eager (`y, y.view(-1), y[0]`);
//! - the functional graph assumes its inputs do not share memory. When it writes an input and
//!   two tensor inputs share a storage (the same tensor passed for two parameters), the call
//!   runs the traced graph on the eager runner instead, which sees the write through both names.

use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::PyTuple;

use fx::passes::functionalize::{self, step_arg, AliasBase, Functionalized};
use fx::{Graph, NodeId, NodeKind, Target};

use super::eager::EagerProgram;
use crate::error::TraceError;

/// The functional graph and its callables, for the inductor.
pub struct FunctionalGraph {
    pub graph: Graph,
    /// How many outputs `graph` has.
    pub outputs: usize,
    pub callables: Vec<(NodeId, Py<PyAny>)>,
    pub run: FunctionalRun,
    /// Placeholder indices of the inputs the graph writes: each gets one `copy_` of its final
    /// value at the end of `graph` (the training path takes those writes out of the graph).
    pub mutated_inputs: Vec<usize>,
    /// Writes the traced graph makes to each of `mutated_inputs` (its version counter bumps).
    pub input_writes: Vec<u32>,
    /// The values of written inputs in `graph`: node → (placeholder index, writes before it)
    /// ([`Functionalized::input_versions`]).
    pub input_versions: std::collections::HashMap<NodeId, (usize, u32)>,
    /// Values of the graph's own tensors that a later write replaced
    /// ([`Functionalized::overwritten`]).
    pub overwritten: std::collections::HashSet<NodeId>,
    /// Nodes that stand for an in-place write of the traced op's argument 0 → the value they
    /// wrote ([`Functionalized::writes`]): the training path keeps such writes made under
    /// `no_grad` (`fx::autodiff::writes`).
    pub writes: std::collections::HashMap<NodeId, NodeId>,
}

/// What a call of a functionalized graph does besides running it.
pub struct FunctionalRun {
    /// (output, base, view steps): output rebuilt as `replay(base, *steps)`.
    views: Vec<(usize, AliasBase, Py<PyTuple>)>,
    replay: Py<PyAny>,
    /// When the graph writes an input: the tensor inputs checked per call for memory shared
    /// with a written one, and the traced graph on the eager runner for that case.
    overlap: Option<(Vec<Span>, EagerProgram)>,
    /// How many outputs the traced graph has (the functional one may add bases after them).
    user_outputs: usize,
    /// (input, writes): the inputs the kernels write and how many in-place writes the traced
    /// graph made to each. Eager's ops move a tensor's version counter once per write; the
    /// kernels store through the data pointer, which moves nothing, so a backward that saved
    /// the tensor before the write would read the new value instead of raising eager's
    /// "modified by an inplace operation" (a silent wrong gradient). [`Self::bump_versions`]
    /// moves the counters as eager's writes did.
    bumps: Vec<(usize, u32)>,
    increment_version: Py<PyAny>,
}

/// A tensor input as the per-call overlap check sees it.
#[derive(Clone, Copy, Debug)]
struct Span {
    /// Placeholder index.
    input: usize,
    /// Bytes from its data pointer to one past its last element (from the sizes and strides
    /// its guards fix); `None` when not static (then its storage's whole range is used).
    bytes: Option<u64>,
    /// The graph writes it.
    written: bool,
}

/// The bytes a tensor of `sizes` and non-negative `strides` spans from its first element.
fn span_bytes(sizes: &[i64], strides: &[i64], itemsize: usize) -> u64 {
    if sizes.contains(&0) {
        return 0;
    }
    let last: i64 = sizes
        .iter()
        .zip(strides)
        .map(|(s, st)| (s - 1) * st.abs())
        .sum();
    (last as u64 + 1) * itemsize as u64
}

/// Whether two of the `[lo, hi)` memory ranges overlap, one of them written.
fn written_overlap(mut ranges: Vec<(usize, usize, bool)>) -> bool {
    ranges.sort_unstable_by_key(|r| r.0);
    let (mut any_hi, mut written_hi) = (0usize, 0usize);
    for (lo, hi, written) in ranges {
        if lo < written_hi || (written && lo < any_hi) {
            return true;
        }
        any_hi = any_hi.max(hi);
        if written {
            written_hi = written_hi.max(hi);
        }
    }
    false
}

/// Resolves `a.b.c` as Python does for a qualified name: the longest importable module prefix,
/// then attributes.
pub(crate) fn resolve_path<'py>(py: Python<'py>, path: &str) -> PyResult<Bound<'py, PyAny>> {
    let parts: Vec<&str> = path.split('.').collect();
    for i in (1..=parts.len()).rev() {
        let Ok(module) = py.import(parts[..i].join(".").as_str()) else {
            continue;
        };
        let mut obj = module.into_any();
        for name in &parts[i..] {
            obj = obj.getattr(*name)?;
        }
        return Ok(obj);
    }
    Err(pyo3::exceptions::PyImportError::new_err(path.to_string()))
}

/// The functional form of `graph` for the inductor, or `None` where the pass refuses (the
/// inductor then gets the traced graph and refuses in-place ops it cannot prove safe).
pub fn for_inductor(
    py: Python<'_>,
    graph: &Graph,
    callables: &[(NodeId, Py<PyAny>)],
    sites: &crate::traceback::Sites,
) -> Result<Option<FunctionalGraph>, TraceError> {
    // One target per op first (same node ids); a retargeted node's callable is resolved
    // from its new path below, the others keep the traced one.
    let canon = fx::passes::canonicalize::canonicalize(graph);
    let traced_callables = callables;
    let callables: Vec<(NodeId, Py<PyAny>)> = callables
        .iter()
        .filter(|(n, _)| !canon.retargeted.contains(n))
        .map(|(n, c)| (*n, c.clone_ref(py)))
        .collect();
    let Functionalized {
        graph: fgraph,
        origin,
        replaces,
        writes,
        mutated_inputs,
        input_writes,
        input_versions,
        overwritten,
        output_aliases,
        user_outputs,
    } = match functionalize::functionalize(&canon.graph, &|path| resolve_path(py, path).is_ok()) {
        Ok(f) => f,
        Err(e) => {
            tracing::debug!(target: "torchferro::inductor", "{e}");
            return Ok(None);
        }
    };
    let functional = py.import("torchferro._functional")?;
    let mut fcallables = Vec::new();
    for (id, node) in fgraph.nodes() {
        let NodeKind::Call {
            target: Target::Function(path),
            args,
            ..
        } = &node.kind
        else {
            continue;
        };
        // `on_clone` names its in-place callable by path; one the tracer recorded under a
        // name torch does not export (`torch.hardtanh_` is `torch._C._nn.hardtanh_`) is
        // registered with the callable the traced call used.
        if path == functionalize::ON_CLONE {
            if let (Some(fx::Arg::Str(inner)), Some(old)) = (args.first(), replaces.get(&id)) {
                if resolve_path(py, inner).is_err() {
                    match callables.iter().find(|(n, _)| n == old) {
                        Some((_, c)) => {
                            functional.call_method1("register", (inner.as_str(), c.bind(py)))?;
                        }
                        None => return Ok(None),
                    }
                }
            }
        }
        let known = origin
            .get(&id)
            .and_then(|o| callables.iter().find(|(n, _)| n == o))
            .map(|(_, c)| c.clone_ref(py));
        let c = match known {
            Some(c) => c,
            None => match resolve_path(py, path) {
                Ok(c) => c.unbind(),
                Err(e) => {
                    tracing::debug!(target: "torchferro::inductor", "functional graph: {path}: {e}");
                    return Ok(None);
                }
            },
        };
        fcallables.push((id, c));
    }
    let mut views = Vec::new();
    for a in &output_aliases {
        let steps = a
            .steps
            .iter()
            .map(|s| {
                crate::output::arg_to_py(py, &step_arg(s), &mut |_, _| {
                    Err(TraceError::unsupported("a view step with a graph value"))
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        views.push((a.output, a.base, PyTuple::new(py, steps)?.unbind()));
    }
    let overlap = if mutated_inputs.is_empty() {
        None
    } else {
        let tensors = graph
            .placeholders()
            .into_iter()
            .filter_map(|p| {
                let n = graph.node(p);
                match (&n.kind, n.meta.tensor()) {
                    (NodeKind::Placeholder { index }, Some(t)) => Some(Span {
                        input: *index,
                        bytes: t
                            .known_sizes()
                            .zip(t.known_strides())
                            .map(|(sz, st)| span_bytes(&sz, &st, t.dtype.itemsize())),
                        written: mutated_inputs.contains(index),
                    }),
                    _ => None,
                }
            })
            .collect::<Vec<_>>();
        (tensors.len() > 1)
            .then(|| EagerProgram::new(py, graph, traced_callables, sites).map(|p| (tensors, p)))
    }
    .transpose()?;
    let bumps = mutated_inputs
        .iter()
        .zip(&input_writes)
        .filter(|(_, &w)| w > 0)
        .map(|(&i, &w)| (i, w))
        .collect();
    let outputs = match fgraph.output_node().map(|o| &fgraph.node(o).kind) {
        Some(NodeKind::Output { values }) => values.len(),
        _ => 0,
    };
    Ok(Some(FunctionalGraph {
        outputs,
        mutated_inputs,
        input_writes,
        input_versions,
        overwritten,
        writes,
        graph: fgraph,
        callables: fcallables,
        run: FunctionalRun {
            views,
            replay: functional.getattr("replay")?.unbind(),
            overlap,
            user_outputs,
            bumps,
            increment_version: py
                .import("torch")?
                .getattr("_C")?
                .getattr("_increment_version")?
                .unbind(),
        },
    }))
}

impl FunctionalRun {
    /// Nothing to do around a call: no aliasing output, no written input that could share
    /// storage, no extra output (the hot path then skips this wrapper altogether).
    pub fn is_trivial(&self, outputs: usize) -> bool {
        self.views.is_empty() && self.overlap.is_none() && outputs == self.user_outputs
    }

    /// Whether the kernels write an input, whose version counter [`Self::bump_versions`] then
    /// moves after each call (the training path moves it in `_aot.apply` instead).
    pub fn writes_inputs(&self) -> bool {
        !self.bumps.is_empty()
    }

    /// Moves the version counter of each input the kernels wrote as far as eager's in-place
    /// ops moved it (an inference tensor has none: torch skips it). Run after the kernels, not
    /// after the eager runner (whose ops moved them already).
    pub fn bump_versions<'py>(
        &self,
        py: Python<'py>,
        inputs: &[Bound<'py, PyAny>],
    ) -> PyResult<()> {
        // One call per write count, over every input written at least that often (usually one
        // call per graph call, however many inputs it writes: this runs on every call).
        let most = self.bumps.iter().map(|&(_, w)| w).max().unwrap_or(0);
        for k in 1..=most {
            let written = self
                .bumps
                .iter()
                .filter(|&&(_, w)| w >= k)
                .filter_map(|&(i, _)| inputs.get(i))
                .collect::<Vec<_>>();
            let tensors = PyTuple::new(py, written)?;
            self.increment_version.bind(py).call1((&tensors,))?;
        }
        Ok(())
    }

    /// The traced graph on the eager runner when an input the graph writes shares memory with
    /// another tensor input; `None` to run the kernels.
    ///
    /// This runs on every call of such a graph (resnet's BatchNorm buffers), so it reads one
    /// `data_ptr()` per input and compares byte ranges whose lengths were computed at compile
    /// time. Shared memory is what makes the functional graph wrong (a read of the other input
    /// would see the write in eager); two views of one storage that do not overlap are fine.
    pub fn eager_instead<'py>(
        &self,
        py: Python<'py>,
        inputs: &[Bound<'py, PyAny>],
    ) -> PyResult<Option<Vec<Bound<'py, PyAny>>>> {
        let Some((tensors, program)) = &self.overlap else {
            return Ok(None);
        };
        let mut ranges = Vec::with_capacity(tensors.len());
        for s in tensors {
            let Some(t) = inputs.get(s.input) else {
                continue;
            };
            let (lo, len) = match s.bytes {
                Some(n) => {
                    let lo: usize = t.call_method0(intern!(py, "data_ptr"))?.extract()?;
                    (lo, n as usize)
                }
                None => {
                    let st = t.call_method0(intern!(py, "untyped_storage"))?;
                    let lo: usize = st.call_method0(intern!(py, "data_ptr"))?.extract()?;
                    let n: usize = st.call_method0(intern!(py, "nbytes"))?.extract()?;
                    (lo, n)
                }
            };
            if lo != 0 && len != 0 {
                ranges.push((lo, lo + len, s.written));
            }
        }
        if written_overlap(ranges) {
            return program.run(py, inputs.to_vec()).map(Some);
        }
        Ok(None)
    }

    /// Rebuilds aliasing outputs as views of their base, and drops the extra base outputs.
    pub fn rebuild<'py>(
        &self,
        py: Python<'py>,
        inputs: &[Bound<'py, PyAny>],
        outs: &mut Vec<Bound<'py, PyAny>>,
    ) -> PyResult<()> {
        for (o, base, steps) in &self.views {
            let b = match base {
                AliasBase::Input(i) => inputs[*i].clone(),
                AliasBase::Output(j) => outs[*j].clone(),
            };
            let mut args = vec![b];
            args.extend(steps.bind(py).iter());
            // A base whose layout differs from eager's (a backend gap) may refuse a step
            // eager took (`view`): the output then keeps its values without the aliasing.
            match self.replay.bind(py).call1(PyTuple::new(py, args)?) {
                Ok(v) => outs[*o] = v,
                Err(e) => tracing::debug!(
                    target: "torchferro::inductor",
                    "an aliasing output is returned as a copy: {e}"
                ),
            }
        }
        outs.truncate(self.user_outputs);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::{span_bytes, written_overlap};

    #[test]
    fn spans_and_overlaps() {
        assert_eq!(span_bytes(&[2, 3], &[3, 1], 4), 24);
        assert_eq!(span_bytes(&[3, 2], &[1, 3], 4), 24);
        assert_eq!(span_bytes(&[4], &[2], 8), 56);
        assert_eq!(span_bytes(&[0, 5], &[5, 1], 4), 0);
        assert_eq!(span_bytes(&[], &[], 4), 4);
        // Disjoint, touching, and two unwritten ranges overlapping: no fallback.
        assert!(!written_overlap(vec![(0, 8, true), (8, 16, false)]));
        assert!(!written_overlap(vec![
            (0, 8, false),
            (4, 16, false),
            (16, 20, true)
        ]));
        // A written range overlapping another, in either order.
        assert!(written_overlap(vec![(0, 8, true), (4, 16, false)]));
        assert!(written_overlap(vec![(4, 16, true), (0, 8, false)]));
        assert!(written_overlap(vec![
            (0, 100, false),
            (10, 20, false),
            (50, 60, true)
        ]));
    }
}
