//! Graph passes the tracer runs before handing a graph to a backend.

use fx::Graph;

pub fn dead_code_elimination(graph: &mut Graph) {
    // Grad-mode, autocast and inference-mode switches have no users but change what later ops compute.
    fx::passes::eliminate_dead_code(graph, |_, n| match &n.kind {
        fx::NodeKind::Call { target, .. } => {
            target.name() == "torch._C._set_grad_enabled"
                || target.name() == crate::output::AUTOCAST_TARGET
                || target.name() == crate::output::DEFAULT_DTYPE_TARGET
                || target.name() == crate::output::INFERENCE_ENTER_TARGET
                || target.name() == crate::output::INFERENCE_EXIT_TARGET
        }
        _ => false,
    });
}

pub fn python_code(graph: &Graph) -> String {
    graph.python_code("forward")
}
