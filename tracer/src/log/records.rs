//! The typed records of `crate::event` as Python dicts with fixed keys, for the structured events
//! (`torchferro._events` documents the keys). Python reads these fields; it never parses the log
//! text back.

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use crate::event::{BreakSite, GuardFailure, GuardRecord, Location, Mismatch, Value};

/// `{"filename", "lineno"}`, or None.
pub fn location<'py>(py: Python<'py>, l: Option<&Location>) -> PyResult<Bound<'py, PyAny>> {
    let Some(l) = l else {
        return Ok(py.None().into_bound(py));
    };
    let d = PyDict::new(py);
    d.set_item("filename", l.filename.as_str())?;
    d.set_item("lineno", l.lineno)?;
    Ok(d.into_any())
}

/// `{"reason", "location", "frames"}`; each frame `{"function", "filename", "lineno"}`,
/// innermost first, the compiled frame last.
pub fn break_site<'py>(py: Python<'py>, site: &BreakSite) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("reason", site.reason.as_str())?;
    d.set_item("location", location(py, site.location.as_ref())?)?;
    let frames = PyList::empty(py);
    for f in &site.frames {
        let e = PyDict::new(py);
        e.set_item("function", f.function.as_str())?;
        e.set_item("filename", f.location.filename.as_str())?;
        e.set_item("lineno", f.location.lineno)?;
        frames.append(e)?;
    }
    d.set_item("frames", frames)?;
    Ok(d)
}

fn value<'py>(py: Python<'py>, v: Option<&Value>) -> PyResult<Bound<'py, PyAny>> {
    Ok(match v {
        None => py.None().into_bound(py),
        Some(Value::Int(i)) => i.into_pyobject(py)?.into_any(),
        Some(Value::Text(t)) => t.into_pyobject(py)?.into_any(),
    })
}

/// `{"property", "index", "expected", "actual"}` (sizes, strides and ranks as ints).
fn mismatch<'py>(py: Python<'py>, m: Option<&Mismatch>) -> PyResult<Bound<'py, PyAny>> {
    let Some(m) = m else {
        return Ok(py.None().into_bound(py));
    };
    let d = PyDict::new(py);
    d.set_item("property", m.property)?;
    d.set_item("index", m.index)?;
    d.set_item("expected", value(py, m.expected.as_ref())?)?;
    d.set_item("actual", value(py, m.actual.as_ref())?)?;
    Ok(d.into_any())
}

/// One dict per failing entry: `{"compile_id", "kind", "source", "expr", "reason", "origin",
/// "mismatch"}`.
pub fn failures<'py>(py: Python<'py>, failures: &[GuardFailure]) -> PyResult<Bound<'py, PyList>> {
    let items = PyList::empty(py);
    for f in failures {
        let c = &f.check;
        let e = PyDict::new(py);
        e.set_item(
            "compile_id",
            format!("{}/{}", f.compile_id.0, f.compile_id.1),
        )?;
        e.set_item("kind", c.kind)?;
        e.set_item("source", c.source.as_deref())?;
        e.set_item("expr", c.expr.as_deref())?;
        e.set_item("reason", c.reason.as_str())?;
        e.set_item("origin", location(py, c.origin.as_ref())?)?;
        e.set_item("mismatch", mismatch(py, c.mismatch.as_ref())?)?;
        items.append(e)?;
    }
    Ok(items)
}

/// One dict per guard: `{"kind", "source", "text", "origin"}` (`text` without the origin).
pub fn guards<'py>(py: Python<'py>, guards: &[GuardRecord]) -> PyResult<Bound<'py, PyList>> {
    let items = PyList::empty(py);
    for g in guards {
        let e = PyDict::new(py);
        e.set_item("kind", g.kind)?;
        e.set_item("source", g.source.as_deref())?;
        e.set_item("text", g.text.as_str())?;
        e.set_item("origin", location(py, g.origin.as_ref())?)?;
        items.append(e)?;
    }
    Ok(items)
}
