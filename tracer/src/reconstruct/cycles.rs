//! Order of a reconstruction whose values refer back to each other.
//!
//! A template is built depth first, and `Again(k)` can only hand out what `Keep(k, ..)` has
//! already built. Two kinds of value exist before their contents: a user object
//! (`object.__new__(cls)`, then its `__dict__` filled) and a cell (`CellType()`, then its
//! contents set); those are *shells*, and a reference back to one while its contents are built
//! is fine. Every other kept value (a list, dict, tuple, function, `ModelOutput`, ...) is made
//! from its contents, so while those contents are built it is *open*: a reference back to it
//! would read a table entry that does not exist yet ("a shared value was rebuilt out of
//! order"). Objects made by the traced code have such cycles as a matter of course: a recursive
//! local function's cell holds the function whose closure holds the cell (transformers'
//! `smart_apply`), a registry dict holds an object whose attribute is the registry, a module
//! list holds children that point at their parent's list.
//!
//! The rule (pickle's, in effect): the fill of a shell (its attributes, its contents) that
//! refers back to an open value waits until that value is built, and runs right after its
//! `Keep`, before anything else reads the table. The shell itself is handed out at once, so
//! identity holds everywhere. A plain list or dict that holds itself with no shell in between
//! (`l.append(l)`) is made empty first and filled after. Anything else that would still read an
//! open value (a tuple or function holding itself through no shell) is refused at trace time,
//! never left to fail when the template runs.

use pyo3::prelude::*;

use crate::error::TraceError;

use super::OutputTemplate;

/// The reconstruction's open values and the fills that wait for them.
#[derive(Default)]
pub(super) struct Order {
    /// Table numbers of values whose contents are being built and which do not exist until
    /// they are; innermost last (so the outermost has the lowest number).
    open: Vec<usize>,
    /// The outermost open value the template being made refers back to.
    reached: Option<usize>,
    /// Fills of shells waiting for an open value: (its number, the fill).
    waiting: Vec<(usize, OutputTemplate)>,
}

impl Order {
    /// `Again(k)`, noting a reference back to an open value.
    pub(super) fn again(&mut self, k: usize) -> OutputTemplate {
        if self.open.contains(&k) {
            self.reached = Some(self.reached.map_or(k, |r| r.min(k)));
        }
        OutputTemplate::Again(k)
    }

    /// Value `k` (made from its contents) starts being built.
    pub(super) fn open(&mut self, k: usize) {
        self.open.push(k);
    }

    /// Value `k` is built as `kept` (its `Keep`): the fills that waited for it run after it.
    /// A plain list or dict whose contents refer back to it with no shell between is made
    /// empty first and filled after; another such value is refused. A reference to an outer
    /// open value stays noted for that value.
    pub(super) fn close(
        &mut self,
        py: Python<'_>,
        k: usize,
        kept: OutputTemplate,
    ) -> Result<OutputTemplate, TraceError> {
        if let Some(at) = self.open.iter().rposition(|o| *o == k) {
            self.open.remove(at);
        }
        let kept = if self.reached == Some(k) {
            self.reached = None;
            match kept {
                OutputTemplate::Keep(k, inner) => match *inner {
                    OutputTemplate::List(items) => OutputTemplate::Call(
                        refill_function(py)?,
                        vec![
                            OutputTemplate::Keep(k, Box::new(OutputTemplate::List(Vec::new()))),
                            OutputTemplate::List(items),
                        ],
                    ),
                    OutputTemplate::Dict(items) => OutputTemplate::Call(
                        refill_function(py)?,
                        vec![
                            OutputTemplate::Keep(k, Box::new(OutputTemplate::Dict(Vec::new()))),
                            OutputTemplate::Dict(items),
                        ],
                    ),
                    _ => return Err(refuse()),
                },
                _ => return Err(refuse()),
            }
        } else {
            kept
        };
        let mut fills = Vec::new();
        let mut rest = Vec::new();
        for (w, fill) in self.waiting.drain(..) {
            if w == k {
                fills.push(fill);
            } else {
                rest.push((w, fill));
            }
        }
        self.waiting = rest;
        if fills.is_empty() {
            return Ok(kept);
        }
        let mut args = vec![kept];
        args.extend(fills);
        Ok(OutputTemplate::Call(then_function(py)?, args))
    }

    /// Starts building a shell's fill: returns the reference noted so far, to be given back
    /// to `end_fill`.
    pub(super) fn begin_fill(&mut self) -> Option<usize> {
        self.reached.take()
    }

    /// Ends a shell's fill: `Some(k)` when it refers back to open value `k` (the outermost),
    /// and must wait for it (`wait`); the reference does not count at the shell's place.
    pub(super) fn end_fill(&mut self, outer: Option<usize>) -> Option<usize> {
        std::mem::replace(&mut self.reached, outer)
    }

    /// The fill of a shell runs after open value `k` is built.
    pub(super) fn wait(&mut self, k: usize, fill: OutputTemplate) {
        self.waiting.push((k, fill));
    }
}

/// A value that refers back to itself and cannot be made empty first.
fn refuse() -> TraceError {
    TraceError::unsupported(
        "a value made in the traced code that holds itself (it cannot be rebuilt before its \
         contents)",
    )
}

/// `then(value, *fills)`: builds the value, then the fills that waited for it; the value.
fn then_function(py: Python<'_>) -> PyResult<Py<PyAny>> {
    helper(py, c"def then(value, *fills):\n    return value\n", "then")
}

/// `refill(empty, contents)`: a list or dict made empty (kept) and then given its contents,
/// which refer back to it.
fn refill_function(py: Python<'_>) -> PyResult<Py<PyAny>> {
    helper(
        py,
        c"def refill(empty, contents):\n    empty.extend(contents) if type(empty) is list else empty.update(contents)\n    return empty\n",
        "refill",
    )
}

fn helper(py: Python<'_>, src: &std::ffi::CStr, name: &str) -> PyResult<Py<PyAny>> {
    let ns = pyo3::types::PyDict::new(py);
    py.run(src, Some(&ns), None)?;
    Ok(ns
        .get_item(name)?
        .ok_or_else(|| pyo3::exceptions::PyRuntimeError::new_err(name.to_string()))?
        .unbind())
}
