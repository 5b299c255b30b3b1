//! Short texts of live values for guard failure messages and guard listings: a type's
//! qualified name and a one-line, bounded `repr`.

use pyo3::intern;
use pyo3::prelude::*;

pub fn type_name(ty: &Bound<'_, PyAny>) -> String {
    ty.getattr(intern!(ty.py(), "__qualname__"))
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "?".into())
}

pub fn short_repr(v: &Bound<'_, PyAny>) -> String {
    let r = v
        .repr()
        .map(|r| r.to_string())
        .unwrap_or_else(|_| "<?>".into());
    let first_line = r.lines().next().unwrap_or("").trim_end().to_string();
    // A module's repr spans lines (`Scaler(\n  (lin): Linear(...)\n)`): keep it balanced.
    let close = if first_line.ends_with('(') { ")" } else { "" };
    if first_line.chars().count() > 60 {
        let cut: String = first_line.chars().take(57).collect();
        format!("{cut}...")
    } else if r.contains('\n') {
        format!("{first_line}...{close}")
    } else {
        first_line
    }
}

/// A Python bool literal, as guard texts print it.
pub(super) fn py_bool(b: bool) -> &'static str {
    if b {
        "True"
    } else {
        "False"
    }
}
