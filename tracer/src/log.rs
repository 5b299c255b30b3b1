//! Messages to the user: recompiles, graph breaks, the recompile limit, compile times. Each is
//! one `tracing` event under a `torchferro::<name>` target, which [`bridge`] hands to Python's
//! `logging.getLogger("torchferro.<name>")`; alongside, a structured event goes to
//! `torchferro._events` for `explain`, trace files, reports and the richer log artifacts.
//!
//! Both are rendered from the same typed records (`crate::event`): the text here, and the
//! event's fields by [`records`], whose dicts have fixed keys (documented in `_events.py`).

pub mod bridge;
pub mod records;

use pyo3::prelude::*;

use crate::code::CodeInfo;
use crate::event::{BreakSite, GuardFailure, GuardRecord};

pub fn recompiling(py: Python<'_>, info: &CodeInfo, failures: &[GuardFailure]) {
    let reasons: Vec<String> = failures.iter().map(|f| f.line()).collect();
    let msg = recompile_message(info, &reasons);
    tracing::info!(target: "torchferro::recompiles", "{msg}");
    emit(py, "recompile", info, |d| {
        d.set_item("message", msg.as_str())?;
        d.set_item("failures", records::failures(py, failures)?)
    });
}

/// The recompile log text, in the words torch users know.
pub fn recompile_message(info: &CodeInfo, reasons: &[String]) -> String {
    let mut msg = format!(
        "Recompiling function {} in {}:{}\n    triggered by the following guard failure(s):",
        info.name, info.filename, info.firstlineno
    );
    for r in reasons {
        msg.push_str("\n    - ");
        msg.push_str(r);
    }
    msg
}

pub fn recompile_limit(py: Python<'_>, info: &CodeInfo, limit: usize, failures: &[GuardFailure]) {
    let mut msg = format!(
        "torchferro hit the recompile limit ({limit}) for function {} in {}:{}; it runs eagerly from now on. Last guard failure(s):",
        info.name, info.filename, info.firstlineno
    );
    for f in failures {
        msg.push_str("\n    - ");
        msg.push_str(&f.line());
    }
    // The message reaches the user once: it is always a Python warning, and also a log record
    // where a handler takes it. Without any handler, `logging`'s last-resort handler would print
    // the record to stderr next to the warning.
    let handled = py
        .import("logging")
        .and_then(|l| {
            l.getattr("getLogger")?
                .call1(("torchferro.recompiles",))?
                .call_method0("hasHandlers")?
                .is_truthy()
        })
        .unwrap_or(true);
    if handled {
        tracing::warn!(target: "torchferro::recompiles", "{msg}");
    }
    emit(py, "recompile_limit", info, |d| {
        d.set_item("message", msg.as_str())?;
        d.set_item("limit", limit)?;
        d.set_item("failures", records::failures(py, failures)?)
    });
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

pub fn graph_break(py: Python<'_>, info: &CodeInfo, site: &BreakSite) {
    let msg = site.message();
    let text = format!("Graph break in function {}: {msg}", info.name);
    tracing::info!(target: "torchferro::graph_breaks", "{text}");
    emit(py, "graph_break", info, |d| {
        d.set_item("reason", msg.as_str())?;
        d.set_item("break", records::break_site(py, site)?)
    });
}

pub fn run_eagerly(py: Python<'_>, info: &CodeInfo, site: &BreakSite) {
    let msg = site.message();
    let text = format!("Graph break: running function {} eagerly: {msg}", info.name);
    tracing::info!(target: "torchferro::graph_breaks", "{text}");
    emit(py, "eager", info, |d| {
        d.set_item("reason", msg.as_str())?;
        d.set_item("break", records::break_site(py, site)?)
    });
}

/// A frame that traced to no ops and no side effects is left to run natively from now on.
pub fn skipped_no_ops(info: &CodeInfo) {
    tracing::debug!(
        target: "torchferro",
        "Skipping function {} ({}:{}): no ops traced and no side effects; it runs natively from now on",
        info.name,
        info.filename,
        info.firstlineno
    );
}

/// A frame that could not be traced whole with nothing of torch in reach (`compile::NO_TORCH`):
/// at DEBUG, since torch.compile never traces such a frame and reports no graph break for it.
pub fn skipped_torch_free(info: &CodeInfo) {
    tracing::debug!(
        target: "torchferro",
        "Skipping function {} ({}:{}): it breaks the graph with no tensor, module or torch global in reach; it runs natively from now on",
        info.name,
        info.filename,
        info.firstlineno
    );
}

/// A frame whose trace raised the program's own exception runs eagerly this once (where it
/// raises, or where a handler the tracer cannot follow catches it). At DEBUG: a `try` the
/// tracer does not model can otherwise leave a whole model eager without a word.
pub fn user_error_runs_eagerly(info: &CodeInfo, call: &str, message: &str) {
    tracing::debug!(
        target: "torchferro",
        "Running function {} ({}:{}) eagerly: tracing it raised the program's own error at {call}: {message}",
        info.name,
        info.filename,
        info.firstlineno
    );
}

/// What one compile produced, for `explain`, trace files and reports.
pub struct CompileEvent<'a, 'py> {
    pub compile_id: (u32, u32),
    pub graph_code: &'a str,
    pub graph_dot: &'a str,
    pub ops: Vec<String>,
    pub guards: &'a [GuardRecord],
    pub break_site: Option<&'a BreakSite>,
    /// Phase name and seconds.
    pub timings: &'a [(&'static str, f64)],
    pub transformed_code: &'a Bound<'py, PyAny>,
    /// The C source the inductor generated, if it compiled this graph.
    pub output_code: Option<&'a str>,
    /// The frame's original code object.
    pub code: &'a Bound<'py, PyAny>,
}

/// Hands a structured event to `torchferro._events.emit` (explain, trace files, reports).
fn emit(
    py: Python<'_>,
    kind: &str,
    info: &CodeInfo,
    fill: impl FnOnce(&Bound<'_, pyo3::types::PyDict>) -> PyResult<()>,
) {
    let r = (|| -> PyResult<()> {
        let events = py.import("torchferro._events")?;
        if !events.getattr("active")?.call0()?.is_truthy()? {
            return Ok(());
        }
        let d = pyo3::types::PyDict::new(py);
        d.set_item("kind", kind)?;
        d.set_item("function", info.name.as_str())?;
        d.set_item("filename", info.filename.as_str())?;
        d.set_item("firstlineno", info.firstlineno)?;
        fill(&d)?;
        events.getattr("emit")?.call1((d,))?;
        Ok(())
    })();
    if let Err(e) = r {
        if let Some(e) = crate::mode::keep_interrupt(py, e) {
            e.print(py);
        }
    }
}

pub fn compile_event(py: Python<'_>, info: &CodeInfo, ev: &CompileEvent<'_, '_>) {
    tracing::info!(
        target: "torchferro::perf",
        "{}",
        perf_message(info, ev.compile_id, ev.timings)
    );
    emit(py, "compile", info, |d| {
        d.set_item(
            "compile_id",
            format!("{}/{}", ev.compile_id.0, ev.compile_id.1),
        )?;
        d.set_item("graph_code", ev.graph_code)?;
        d.set_item("graph_dot", ev.graph_dot)?;
        d.set_item("ops", ev.ops.clone())?;
        let lines: Vec<String> = ev.guards.iter().map(GuardRecord::line).collect();
        d.set_item("guards", lines)?;
        d.set_item("guard_records", records::guards(py, ev.guards)?)?;
        d.set_item("break_reason", ev.break_site.map(BreakSite::message))?;
        match ev.break_site {
            Some(site) => d.set_item("break", records::break_site(py, site)?)?,
            None => d.set_item("break", py.None())?,
        }
        let t = pyo3::types::PyDict::new(py);
        for (k, v) in ev.timings {
            t.set_item(*k, *v)?;
        }
        d.set_item("timings", t)?;
        d.set_item("transformed_code", ev.transformed_code)?;
        d.set_item("output_code", ev.output_code)?;
        d.set_item("code", ev.code)?;
        Ok(())
    });
}

/// The `perf` line of one compile: every phase in the order it ran, then the total. The same
/// text as the `perf` artifact (`torchferro._logging.perf_text`), which replaces it while on.
pub fn perf_message(info: &CodeInfo, id: (u32, u32), timings: &[(&'static str, f64)]) -> String {
    let mut msg = format!(
        "Compile time of {} (compile {}/{}) in {}:{}: ",
        info.name, id.0, id.1, info.filename, info.firstlineno
    );
    for (name, secs) in timings {
        msg.push_str(&format!("{name} {:.3} ms, ", secs * 1e3));
    }
    let total: f64 = timings.iter().map(|(_, s)| s).sum();
    msg.push_str(&format!("total {:.3} ms", total * 1e3));
    msg
}

/// The captured graph and its guards, at DEBUG (the `graph` artifact's richer table replaces it).
pub fn compiled(info: &CodeInfo, id: (u32, u32), graph: &str, guards: &[String]) {
    tracing::debug!(
        target: "torchferro::graph",
        "Compiled {} ({}:{}) as {}/{}\n{}\nguards:\n  {}",
        info.name,
        info.filename,
        info.firstlineno,
        id.0,
        id.1,
        graph,
        guards.join("\n  ")
    );
}

pub fn inductor_fallbacks(info: &CodeInfo, reasons: &[String]) {
    tracing::info!(
        target: "torchferro::inductor",
        "inductor: {} op(s) of {} ({}:{}) run through torch instead of generated kernels:\n  {}",
        reasons.len(),
        info.name,
        info.filename,
        info.firstlineno,
        reasons.join("\n  ")
    );
}

/// torchferro's own warnings (a code object it cannot read, an internal error). The GIL token is
/// kept so that callers state they hold it; the bridge attaches by itself.
pub fn warn(_py: Python<'_>, msg: &str) {
    tracing::warn!(target: "torchferro", "{msg}");
}
