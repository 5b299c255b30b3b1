//! In-place methods that change a tensor's metadata (`t_`, `transpose_`, `unsqueeze_`,
//! `squeeze_`, `swapaxes_`/`swapdims_`, and `detach_` that clears `requires_grad`) traced into
//! the graph, as torch.compile traces them.
//!
//! The op is a graph node like any in-place op (its result is the tensor it changed, recorded
//! with `OutputGraph::set_alias`); what differs is that every tracker of that tensor holds a
//! copy of its old metadata (a name bound before, an item of a list, an attribute, a re-read of
//! an input through its source). The tracer does not chase them all down: it records the
//! tensor's current form per alias root ([`super::Tracer::meta_changed`]) and a tracker is
//! brought up to date where it is used — popped off the stack (`Frame::pop`/`popn`: every
//! operator, call, attribute read and truth test takes its operands there), items of the lists
//! and tuples popped with it included. A tracker that is only moved (stored, returned) keeps its
//! node: at run time that node is the same tensor object, changed in place, so the graph still
//! returns or stores the right one.
//!
//! `t.data = v` is one more (`Frame::store_tensor_data`): a graph node runs eager's assignment
//! per call (`torchferro._data.set_data_`), and `t` takes `v`'s sizes, strides and dtype. Graphs
//! that read or assign `.data` run on the eager runner (`OutputGraph::has_data_attr`).
//!
//! What stays native: `resize_`/`resize_as_`/`set_`/`as_strided_` (they change the storage
//! too), and `requires_grad_` that changes the flag (torch.compile breaks the graph there as
//! well).

use std::collections::HashMap;

use fx::NodeId;

use crate::output::TensorValue;

use super::vars::Var;
use super::Frame;
use crate::error::TraceError;
use fx::{Arg, Target};
use pyo3::prelude::*;

/// The metadata-changing in-place methods traced: views of the tensor's own storage.
pub(super) fn traced(name: &str) -> bool {
    matches!(
        name,
        "t_" | "transpose_" | "swapaxes_" | "swapdims_" | "unsqueeze_" | "squeeze_" | "detach_"
    )
}

impl super::Tracer<'_> {
    /// Records that the tensor `result` is (an in-place op's result, aliasing what it changed)
    /// now has its metadata: trackers of the same tensor learn it when they are used.
    pub(super) fn record_meta_change(&mut self, result: &TensorValue) {
        let root = self.output.alias_root(result.node);
        self.meta_changed.insert(root, result.clone());
    }

    /// `v` with its tensors (directly, a method's receiver, items of tuples and lists) in the
    /// form they have now, after in-place metadata changes traced since they were made.
    pub(super) fn current_form(&self, v: Var) -> Var {
        if self.meta_changed.is_empty() {
            return v;
        }
        self.refresh(v, &self.meta_changed, &mut Vec::new())
    }

    /// `inside`: the lists being refreshed, not entered again (a list can hold itself).
    fn refresh(
        &self,
        v: Var,
        changed: &HashMap<NodeId, TensorValue>,
        inside: &mut Vec<*const ()>,
    ) -> Var {
        match v {
            Var::Tensor(t) => Var::Tensor(self.refresh_tensor(t, changed)),
            Var::Method { recv, name } if matches!(*recv, Var::Tensor(_)) => Var::Method {
                recv: Box::new(self.refresh(*recv, changed, inside)),
                name,
            },
            Var::Tuple(items) => Var::Tuple(
                items
                    .iter()
                    .cloned()
                    .map(|i| self.refresh(i, changed, inside))
                    .collect::<Vec<_>>()
                    .into(),
            ),
            Var::List(items) => {
                let at = std::rc::Rc::as_ptr(&items) as *const ();
                if inside.contains(&at) {
                    return Var::List(items);
                }
                let stale = items.borrow().iter().any(|i| self.is_stale(i, changed));
                if stale {
                    inside.push(at);
                    let old: Vec<Var> = items.borrow().clone();
                    let fresh: Vec<Var> = old
                        .into_iter()
                        .map(|i| self.refresh(i, changed, inside))
                        .collect();
                    inside.pop();
                    *items.borrow_mut() = fresh;
                }
                Var::List(items)
            }
            other => other,
        }
    }

    fn is_stale(&self, v: &Var, changed: &HashMap<NodeId, TensorValue>) -> bool {
        match v {
            Var::Tensor(t) => self.refresh_tensor(t.clone(), changed).node != t.node,
            Var::Tuple(items) => items.iter().any(|i| self.is_stale(i, changed)),
            _ => false,
        }
    }

    /// The tensor's latest form when a traced in-place op changed its metadata since (the
    /// tracker's node kept when its metadata is already current: a later in-place write keeps
    /// its own node).
    fn refresh_tensor(
        &self,
        t: TensorValue,
        changed: &HashMap<NodeId, TensorValue>,
    ) -> TensorValue {
        match changed.get(&self.output.alias_root(t.node)) {
            Some(now) if now.meta != t.meta => now.clone(),
            _ => t,
        }
    }
}

impl Frame<'_, '_> {
    /// `t.data = v`: a graph node that assigns per call, as eager does (no autograd record, no
    /// version bump); `t`'s trackers learn `v`'s metadata, `t`'s `requires_grad` kept.
    pub(super) fn store_tensor_data(&mut self, t: &TensorValue, v: Var) -> Result<(), TraceError> {
        let py = self.tx.py;
        let Var::Tensor(v) = v else {
            return Err(TraceError::unsupported(format!(
                "assigning tensor.data a {}",
                v.type_name(py)
            )));
        };
        let f = py.import("torchferro._data")?.getattr("set_data_")?;
        let r = self.graph_call(
            "set_data_",
            Target::Function(crate::output::DATA_WRITE_TARGET.into()),
            Some(&f),
            vec![Arg::Node(t.node), Arg::Node(v.node)],
            vec![],
        )?;
        if let Var::Tensor(now) = &r {
            self.tx.record_meta_change(now);
        }
        Ok(())
    }
}
