//! Fresh meta-tensor stand-ins for a call's arguments, with symbolic sizes at a point: what a
//! meta run of an op sees in place of the graph's values.

use std::collections::HashMap;

use super::*;

impl OutputGraph {
    /// A fresh stand-in for graph value `n` with the symbols at `point`: a meta tensor (no
    /// leaf where the value is an op's result that requires grad, so an in-place op on it is
    /// evaluated as eager runs it) or an int.
    pub(super) fn stand_in_at<'py>(
        &self,
        py: Python<'py>,
        n: NodeId,
        point: &[i64],
    ) -> Result<Bound<'py, PyAny>, TraceError> {
        let graph_node = self.graph.node(n);
        let m = fx::infer::evaluate_at(&graph_node.meta, point)
            .ok_or_else(|| TraceError::unsupported("a size out of range"))?;
        match &m {
            NodeMeta::Tensor(t)
                if t.requires_grad && matches!(graph_node.kind, fx::NodeKind::Call { .. }) =>
            {
                make_meta_non_leaf(py, t)
            }
            NodeMeta::Tensor(t) => make_meta_tensor(py, t),
            NodeMeta::Int(i) => Ok(i.into_pyobject(py)?.into_any()),
            NodeMeta::Float(v) => Ok(v.into_pyobject(py)?.into_any()),
            _ => Err(TraceError::unsupported("a non-tensor node")),
        }
    }

    /// Python values for a call's arguments, each graph value a fresh stand-in at the size
    /// hints ([`Self::stand_in_at`]): never the meta tensors `meta_tensor` keeps, which an op
    /// run on them could change. One graph value passed twice is one stand-in, so an op that
    /// returns an argument itself is seen doing so.
    pub(crate) fn meta_stand_ins<'py>(
        &self,
        py: Python<'py>,
        args: &[Arg],
        kwargs: &[(String, Arg)],
    ) -> Result<(Bound<'py, PyTuple>, Bound<'py, PyDict>), TraceError> {
        let point = self.shapes.hints();
        let mut made: HashMap<NodeId, Bound<'py, PyAny>> = HashMap::new();
        let mut node = |py: Python<'py>, n: NodeId| -> Result<Bound<'py, PyAny>, TraceError> {
            if let Some(v) = made.get(&n) {
                return Ok(v.clone());
            }
            let v = self.stand_in_at(py, n, &point)?;
            made.insert(n, v.clone());
            Ok(v)
        };
        let py_args = args
            .iter()
            .map(|a| arg_to_py(py, a, &mut node))
            .collect::<Result<Vec<_>, _>>()?;
        let py_kwargs = PyDict::new(py);
        for (k, a) in kwargs {
            py_kwargs.set_item(k, arg_to_py(py, a, &mut node)?)?;
        }
        Ok((PyTuple::new(py, py_args)?, py_kwargs))
    }
}
