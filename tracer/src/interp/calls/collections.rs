//! Calls into `collections` that the traced code makes with known arguments.
//!
//! `namedtuple(...)` builds a class from strings alone: folded at trace time, the frame gets
//! one class per compiled entry instead of one per call (their instances are the same tuples;
//! only the class objects' identity across calls differs, as under torch.compile).

use pyo3::prelude::*;

use crate::error::TraceError;
use crate::interp::vars::Var;
use crate::interp::Frame;

impl Frame<'_, '_> {
    /// `None`: not a call this handles.
    pub(super) fn collections_call(
        &mut self,
        f: &Bound<'_, PyAny>,
        module: &str,
        name: &str,
        args: &[Var],
        kwargs: &[(String, Var)],
    ) -> Result<Option<Var>, TraceError> {
        if module != "collections" || name != "namedtuple" {
            return Ok(None);
        }
        let py = self.tx.py;
        if !f.is(&py.import("collections")?.getattr("namedtuple")?) {
            return Ok(None);
        }
        // Field names and defaults that are constants; a default that is a tensor would be
        // baked into the class.
        let known = args.iter().chain(kwargs.iter().map(|(_, v)| v)).all(|a| {
            matches!(a, Var::Py(..) | Var::Tuple(_) | Var::List(_)) && a.as_py(py).is_some()
        });
        if !known {
            return Ok(None);
        }
        self.fold(f, args, kwargs)
    }
}
