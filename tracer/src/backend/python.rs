//! Converts a traced graph into a real `torch.fx.GraphModule`, for Python backends (the
//! torch.compile backend contract). Node construction happens in `torchferro/_fx.py`; this side
//! only describes the nodes.

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};

use fx::{Arg, NodeKind, Target};

use crate::error::TraceError;
use crate::output::{arg_to_py, OutputGraph};
use crate::traceback::UserStack;

/// What a Python backend returned for the graph, and where its nodes came from.
pub struct PythonProgram {
    /// The backend's compiled callable, called with the graph inputs.
    pub compiled: Py<PyAny>,
    /// The `GraphModule` handed to the backend: an error raised in its `forward` names the node
    /// running (its generated line).
    gm: Py<PyAny>,
    /// User frames by node name (names are unique in the `GraphModule`).
    sites: std::collections::HashMap<String, UserStack>,
    root: Option<UserStack>,
    /// The traced graph on the eager runner, to find the op that raised when the backend's
    /// traceback does not show it (`GraphModule.__call__` drops the frames of its `forward`
    /// when a torch op raised right there). Only for graphs that can run again with the same
    /// effect (no input written, no random draw; `super::reruns_differ`).
    locator: Option<super::eager::EagerProgram>,
}

impl PythonProgram {
    pub fn new(
        compiled: Py<PyAny>,
        gm: Py<PyAny>,
        out: &OutputGraph,
        locator: Option<super::eager::EagerProgram>,
    ) -> Self {
        let sites = out
            .graph
            .nodes()
            .filter_map(|(id, n)| Some((n.name.clone(), out.sites.nodes.get(&id)?.clone())))
            .collect();
        PythonProgram {
            compiled,
            gm,
            sites,
            root: out.sites.root.clone(),
            locator,
        }
    }

    pub fn run<'py>(
        &self,
        py: Python<'py>,
        inputs: Vec<Bound<'py, PyAny>>,
    ) -> PyResult<Vec<Bound<'py, PyAny>>> {
        let r = match self.compiled.bind(py).call1(PyTuple::new(py, &inputs)?) {
            Ok(r) => r,
            Err(e) => return Err(self.locate(py, e, inputs)),
        };
        Ok(if let Ok(t) = r.cast::<PyTuple>() {
            t.iter().collect()
        } else if let Ok(l) = r.cast::<PyList>() {
            l.iter().collect()
        } else {
            vec![r]
        })
    }

    /// Adds the user frames of the node that raised `e`: found in the `GraphModule`'s frame of
    /// the traceback, else by running the graph on the eager runner (its error must be the
    /// same), else the compiled frame's first line.
    fn locate<'py>(&self, py: Python<'py>, e: PyErr, inputs: Vec<Bound<'py, PyAny>>) -> PyErr {
        if !e.is_instance_of::<pyo3::exceptions::PyException>(py) {
            return e;
        }
        let node: Option<String> = py
            .import("torchferro._fx")
            .and_then(|m| {
                m.getattr("failing_node")?
                    .call1((self.gm.bind(py), e.traceback(py)))?
                    .extract()
            })
            .ok()
            .flatten();
        let mut site = node.and_then(|n| self.sites.get(&n)).cloned();
        if site.is_none() {
            if let Some(Some((again, Some(s)))) =
                self.locator.as_ref().map(|l| l.failing_site(py, inputs))
            {
                let same = again.get_type(py).is(e.get_type(py))
                    && again.value(py).str().ok().map(|m| m.to_string())
                        == e.value(py).str().ok().map(|m| m.to_string());
                if same {
                    site = Some(s);
                }
            }
        }
        match site.as_ref().or(self.root.as_ref()) {
            Some(site) => crate::traceback::add_user_frames(py, e, site),
            None => e,
        }
    }
}

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
