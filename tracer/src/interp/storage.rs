//! `x.untyped_storage()`: torch.compile folds its `size()` to the size of the input's storage
//! (code such as FSDP's flat-parameter helpers branches on `storage.size() > 0`). Here it folds
//! for a graph input, with a guard on that input's storage size (the tensor guard says nothing
//! about the storage behind a view, so a later call with another storage recompiles instead of
//! reusing the branch). A storage of a tensor computed in the graph, or any other use of it,
//! breaks the graph.

use pyo3::prelude::*;

use crate::error::TraceError;
use crate::guards::Check;
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

    /// `storage.size()` / `storage.nbytes()`: the input's storage size in bytes, guarded.
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
        let n: usize = live
            .bind(py)
            .call_method0("untyped_storage")?
            .call_method0("nbytes")?
            .extract()?;
        self.tx.guards.add(py, &source, Check::StorageBytes(n));
        Ok(Var::py_const(py, n))
    }
}
