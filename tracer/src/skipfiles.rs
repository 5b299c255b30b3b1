//! Which source files the hook never traces: torch, the standard library, site-packages of
//! torchferro itself. Decided once per code object (the result is cached in `co_extra`).

use std::sync::OnceLock;

use pyo3::prelude::*;

static PREFIXES: OnceLock<Vec<String>> = OnceLock::new();

fn prefixes(py: Python<'_>) -> &'static Vec<String> {
    if let Some(p) = PREFIXES.get() {
        return p;
    }
    // Computed outside `get_or_init`: `find_spec` runs Python (imports) that can release the
    // GIL, and a second thread entering `get_or_init` then would block on the cell while holding
    // the GIL the first one needs back: a deadlock of concurrent first calls. Two threads may
    // both compute the list; the first to finish stores it.
    let computed = compute_prefixes(py);
    PREFIXES.get_or_init(|| computed)
}

fn compute_prefixes(py: Python<'_>) -> Vec<String> {
    {
        let mut out = Vec::new();
        // The directory of a package, or the file of a single-file module
        // (`typing_extensions.py`): its directory is site-packages itself and would swallow all
        // user libraries, so the prefix is the file's own path.
        // Found through the import system's finders, not by importing: importing sympy or
        // hypothesis only to learn their paths cost ~0.5 s of a fresh process's first call.
        let find_spec = py
            .import("importlib.util")
            .and_then(|m| m.getattr("find_spec"))
            .ok();
        let dir_of = |module: &str| -> Option<String> {
            // `os` is always imported (and its spec's origin is "frozen" on 3.11+).
            let file: String = if module == "os" {
                py.import(module)
                    .ok()?
                    .getattr("__file__")
                    .ok()?
                    .extract()
                    .ok()?
            } else {
                let spec = find_spec
                    .as_ref()?
                    .call1((module,))
                    .map_err(|e| crate::mode::keep_interrupt(py, e))
                    .ok()?;
                if spec.is_none() {
                    return None;
                }
                spec.getattr("origin").ok()?.extract().ok()?
            };
            let path = std::path::Path::new(&file);
            if !path.is_absolute() {
                return None;
            }
            if module != "os" && path.file_name()? != "__init__.py" {
                return (path.extension()? == "py").then(|| file.clone());
            }
            Some(format!("{}/", path.parent()?.display()))
        };
        for m in ["torch", "torchferro"] {
            if let Some(d) = dir_of(m) {
                out.push(d);
            }
        }
        // The standard library: the directory of a pure-Python stdlib module.
        if let Some(d) = dir_of("os") {
            out.push(d);
        }
        for m in [
            "numpy",
            "_pytest",
            "pluggy",
            "hypothesis",
            "typing_extensions",
            "sympy",
        ] {
            if let Some(d) = dir_of(m) {
                out.push(d);
            }
        }
        out
    }
}

pub fn is_skipped(py: Python<'_>, filename: &str) -> bool {
    let pre = prefixes(py);
    pre.iter().any(|p| {
        // The stdlib directory contains site-packages; user code installed there is not stdlib.
        filename.starts_with(p.as_str())
            && !(p.ends_with("/python3.11/") || p.ends_with("/python3.12/")) // handled below
    }) || pre.iter().any(|p| {
        (p.ends_with("/python3.11/") || p.ends_with("/python3.12/"))
            && filename.starts_with(p.as_str())
            && !filename[p.len()..].starts_with("site-packages/")
    })
}

/// What a skipped file belongs to, for messages: a package's name (`torch`, `numpy`) or
/// "the standard library"; `None` when the file is traced.
pub fn library_of(py: Python<'_>, filename: &str) -> Option<String> {
    if !is_skipped(py, filename) {
        return None;
    }
    let p = prefixes(py)
        .iter()
        .filter(|p| filename.starts_with(p.as_str()))
        .max_by_key(|p| p.len())?;
    if p.ends_with("/python3.11/") || p.ends_with("/python3.12/") {
        return Some("the standard library".into());
    }
    let name = p.trim_end_matches('/').rsplit('/').next()?;
    Some(name.trim_end_matches(".py").to_owned())
}
