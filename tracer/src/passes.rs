//! Graph passes the tracer runs before handing a graph to a backend.

use fx::Graph;

pub fn dead_code_elimination(graph: &mut Graph) {
    fx::passes::eliminate_dead_code(graph, |_, _| false);
}

pub fn python_code(graph: &Graph) -> String {
    graph.python_code("forward")
}
