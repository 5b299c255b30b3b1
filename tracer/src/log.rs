//! Messages to the user: recompiles, graph breaks, the recompile limit. Each goes to `tracing`
//! and to Python's `logging` under the `torchferro` logger tree.

use pyo3::prelude::*;

use crate::interp::CodeInfo;

fn py_log(py: Python<'_>, logger: &str, level: &str, msg: &str) {
    let r = py
        .import("logging")
        .and_then(|l| l.getattr("getLogger")?.call1((logger,)))
        .and_then(|lg| lg.call_method1(level, (msg,)));
    if let Err(e) = r {
        e.print(py);
    }
}

pub fn recompiling(py: Python<'_>, info: &CodeInfo, reasons: &[String]) {
    let mut msg = format!(
        "Recompiling function {} in {}:{}\n    triggered by the following guard failure(s):",
        info.name, info.filename, info.firstlineno
    );
    for r in reasons {
        msg.push_str("\n    - ");
        msg.push_str(r);
    }
    tracing::info!(target: "torchferro::recompiles", "{msg}");
    py_log(py, "torchferro.recompiles", "info", &msg);
}

pub fn recompile_limit(py: Python<'_>, info: &CodeInfo, limit: usize, reasons: &[String]) {
    let mut msg = format!(
        "torchferro hit the recompile limit ({limit}) for function {} in {}:{}; it runs eagerly from now on. Last guard failure(s):",
        info.name, info.filename, info.firstlineno
    );
    for r in reasons {
        msg.push_str("\n    - ");
        msg.push_str(r);
    }
    tracing::warn!(target: "torchferro::recompiles", "{msg}");
    py_log(py, "torchferro.recompiles", "warning", &msg);
    let r = py.import("warnings").and_then(|w| {
        let cat = py.import("builtins")?.getattr("RuntimeWarning")?;
        w.getattr("warn")?.call1((msg.as_str(), cat))
    });
    if let Err(e) = r {
        // A warnings filter set to "error" turns the warning into an exception: surface it.
        e.restore(py);
        // SAFETY-free: printing and clearing keeps the hook from returning with an error set.
        PyErr::fetch(py).print(py);
    }
}

pub fn graph_break(py: Python<'_>, info: &CodeInfo, msg: &str) {
    let text = format!("Graph break in function {}: {msg}", info.name);
    tracing::info!(target: "torchferro::graph_breaks", "{text}");
    py_log(py, "torchferro.graph_breaks", "info", &text);
}

pub fn run_eagerly(py: Python<'_>, info: &CodeInfo, msg: &str) {
    let text = format!("Graph break: running function {} eagerly: {msg}", info.name);
    tracing::info!(target: "torchferro::graph_breaks", "{text}");
    py_log(py, "torchferro.graph_breaks", "info", &text);
}

pub fn compiled(py: Python<'_>, info: &CodeInfo, id: (u32, u32), graph: &str, guards: &[String]) {
    let text = format!(
        "Compiled {} ({}:{}) as {}/{}\n{}\nguards:\n  {}",
        info.name,
        info.filename,
        info.firstlineno,
        id.0,
        id.1,
        graph,
        guards.join("\n  ")
    );
    tracing::debug!(target: "torchferro::graph", "{text}");
    py_log(py, "torchferro.graph", "debug", &text);
}

pub fn warn(py: Python<'_>, msg: &str) {
    tracing::warn!(target: "torchferro", "{msg}");
    py_log(py, "torchferro", "warning", msg);
}
