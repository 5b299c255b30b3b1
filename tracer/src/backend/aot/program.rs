//! A call of a training graph: the functional graph's `autograd.Function` (`_aot.apply`) with
//! what eager does around it (outputs rebuilt as views of their base, an input returned as
//! itself, the grad mode the traced code leaves).

use pyo3::prelude::*;
use pyo3::types::PyTuple;

use super::core::AotCore;

/// The runner of a training graph.
pub struct AotProgram {
    pub(super) core: Py<AotCore>,
    pub(super) apply: Py<PyAny>,
    /// What a call of the functional graph needs around it: outputs that alias an input or
    /// another output are rebuilt as views of their base *outside* the `autograd.Function`
    /// (autograd then records the view as eager does), and two inputs sharing a storage in a
    /// graph that writes an input run the traced graph on the eager runner.
    pub(super) run: crate::backend::functional::FunctionalRun,
    /// `run` has nothing to do.
    pub(super) trivial: bool,
    /// (output, input): graph outputs that are an input object itself in eager (`return x`),
    /// handed back as that object rather than the Function's output (a new view of it).
    pub(super) identities: Vec<(usize, usize)>,
    /// Grad mode as the traced code leaves it (a graph that ends inside a `no_grad` block):
    /// the forward ran without the switches, so it is set after the call.
    pub(super) grad_mode_at_end: bool,
}

impl AotProgram {
    pub fn run<'py>(
        &self,
        py: Python<'py>,
        inputs: Vec<Bound<'py, PyAny>>,
    ) -> PyResult<Vec<Bound<'py, PyAny>>> {
        if !self.trivial {
            if let Some(outs) = self.run.eager_instead(py, &inputs)? {
                return Ok(outs);
            }
        }
        let mut args = vec![self.core.bind(py).clone().into_any()];
        args.extend(inputs.iter().cloned());
        let r = self.apply.bind(py).call1(PyTuple::new(py, args)?)?;
        let mut outs: Vec<Bound<'py, PyAny>> = r.extract()?;
        for &(o, i) in &self.identities {
            outs[o] = inputs[i].clone();
        }
        if !self.trivial {
            self.run.rebuild(py, &inputs, &mut outs)?;
        }
        if !self.grad_mode_at_end {
            py.import("torch")?
                .getattr("_C")?
                .call_method1("_set_grad_enabled", (false,))?;
        }
        Ok(outs)
    }

    /// Frees what the compiled forward and backward keep between calls (their inductor
    /// workspaces), as `CompiledGraph::release_kept` does for an inference graph: run when the
    /// compiled function or module that made the graph is freed. The kernels stay with the
    /// cache entry; autograd graphs still alive keep the core and allocate again if run.
    pub fn release_kept(&self) {
        self.core.get().release_kept();
    }
}
