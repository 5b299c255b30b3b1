//! `x.untyped_storage()`: code such as FSDP's flat-parameter helpers branches on
//! `storage.size() > 0`. torch.compile folds `size()` to the traced input's storage size with no
//! guard at all (a later call whose view sits on another storage reuses the branch, right or
//! wrong). Here the size of a graph input's storage is a symbolic int read from the input on
//! every call (source `x.untyped_storage().nbytes()`): a branch on it guards only the relation
//! it decided (`> 0`), so storages of other sizes reuse the graph where the branch agrees, and
//! one where it does not recompiles; arithmetic on it is computed per call. (The tensor guard
//! says nothing about the storage behind a view.) A storage of a tensor computed in the graph,
//! or any other use of it, breaks the graph.

use pyo3::prelude::*;

use crate::error::TraceError;
use crate::output::TensorValue;

use super::vars::Var;
use super::Frame;

impl Frame<'_, '_> {
    /// `storage.<name>` read off a [`Var::Storage`]: the folded methods as methods of it.
    pub(super) fn storage_attr(&mut self, t: &TensorValue, name: &str) -> Result<Var, TraceError> {
        match name {
            "size" | "nbytes" => Ok(Var::Method {
                recv: Box::new(Var::Storage(t.clone())),
                name: name.to_string(),
            }),
            _ => Err(TraceError::unsupported(format!(
                "attribute '{name}' of an untyped storage"
            ))),
        }
    }

    /// `storage.size()` / `storage.nbytes()`: the input's storage size in bytes, a symbolic int
    /// (a graph input of its own, read by its source on every call).
    pub(super) fn storage_method(
        &mut self,
        t: &TensorValue,
        name: &str,
        args: &[Var],
        kwargs: &[(String, Var)],
    ) -> Result<Var, TraceError> {
        let py = self.tx.py;
        if !matches!(name, "size" | "nbytes") || !args.is_empty() || !kwargs.is_empty() {
            return Err(TraceError::unsupported(format!(
                "method {name} of an untyped storage"
            )));
        }
        let node = self.tx.output.alias_root(t.node);
        let Some(source) = self.tx.output.source_of_input(node).cloned() else {
            return Err(TraceError::unsupported(
                "the storage size of a tensor computed in the graph",
            ));
        };
        let live = self
            .tx
            .output
            .example_input(node)
            .ok_or_else(|| TraceError::internal("a graph input without its value"))?;
        let n = live
            .bind(py)
            .call_method0("untyped_storage")?
            .call_method0("nbytes")?;
        let source = source.storage_bytes();
        // At 0 or 1 bytes and used as a size: a constant, guarded equal.
        if crate::guards::shape_env::int_kept_static(&source) {
            self.tx.guards.add(
                py,
                &source,
                crate::guards::Check::Equals(n.clone().unbind()),
            );
            return Ok(Var::Py(n.unbind(), None));
        }
        self.tx.output.int_input(py, &source, &n)
    }
}
