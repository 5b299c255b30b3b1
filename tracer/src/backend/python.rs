//! Converts a traced graph into a real `torch.fx.GraphModule`, for Python backends (the
//! torch.compile backend contract). Node construction happens in `torchferro/_fx.py`; this side
//! only describes the nodes.

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};

use fx::{Arg, NodeKind, Target};

use crate::error::TraceError;
use crate::output::{arg_to_py, OutputGraph};

pub fn graph_module<'py>(
    py: Python<'py>,
    out: &OutputGraph,
) -> Result<Bound<'py, PyAny>, TraceError> {
    let fxmod = py.import("torchferro._fx")?;
    let node_ref = fxmod.getattr("NodeRef")?;
    let mut index = std::collections::HashMap::new();
    let nodes = PyList::empty(py);
    for (i, (id, node)) in out.graph.nodes().enumerate() {
        index.insert(id, i);
        let mut conv = |a: &Arg| -> Result<Bound<'py, PyAny>, TraceError> {
            arg_to_py(py, a, &mut |_, n| Ok(node_ref.call1((index[&n],))?))
        };
        let item = match &node.kind {
            NodeKind::Placeholder { .. } => PyTuple::new(
                py,
                [
                    ("placeholder").into_pyobject(py)?.into_any(),
                    node.name.as_str().into_pyobject(py)?.into_any(),
                ],
            )?,
            NodeKind::Call {
                target,
                args,
                kwargs,
            } => {
                let pargs = PyTuple::new(
                    py,
                    args.iter().map(&mut conv).collect::<Result<Vec<_>, _>>()?,
                )?;
                let pkw = PyDict::new(py);
                for (k, a) in kwargs {
                    pkw.set_item(k, conv(a)?)?;
                }
                let (op, tgt) = match target {
                    Target::Function(_) => (
                        "call_function",
                        out.callables
                            .iter()
                            .find(|(n, _)| *n == id)
                            .map(|(_, c)| c.bind(py).clone())
                            .ok_or_else(|| {
                                TraceError::internal("a function node without its callable")
                            })?,
                    ),
                    Target::Method(m) => ("call_method", m.as_str().into_pyobject(py)?.into_any()),
                };
                PyTuple::new(
                    py,
                    [
                        op.into_pyobject(py)?.into_any(),
                        node.name.as_str().into_pyobject(py)?.into_any(),
                        tgt,
                        pargs.into_any(),
                        pkw.into_any(),
                    ],
                )?
            }
            NodeKind::Output { values } => {
                let vals = PyTuple::new(
                    py,
                    values
                        .iter()
                        .map(&mut conv)
                        .collect::<Result<Vec<_>, _>>()?,
                )?;
                PyTuple::new(
                    py,
                    [("output").into_pyobject(py)?.into_any(), vals.into_any()],
                )?
            }
        };
        nodes.append(item)?;
    }
    Ok(fxmod.getattr("build_graph_module")?.call1((nodes,))?)
}
