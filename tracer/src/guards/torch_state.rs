//! Ambient torch state every entry is guarded on: grad mode and autocast (and inference mode
//! where a trace relied on it), read through
//! functions looked up once.

use pyo3::prelude::*;

/// `torch.is_grad_enabled`, looked up once.
fn grad_enabled_fn(py: Python<'_>) -> PyResult<&'static Py<PyAny>> {
    static F: std::sync::OnceLock<Py<PyAny>> = std::sync::OnceLock::new();
    if let Some(f) = F.get() {
        return Ok(f);
    }
    let f = py.import("torch")?.getattr("is_grad_enabled")?.unbind();
    Ok(F.get_or_init(|| f))
}

pub fn grad_enabled(py: Python<'_>) -> bool {
    grad_enabled_fn(py)
        .and_then(|f| f.bind(py).call0())
        .map(|r| r.is_truthy().unwrap_or(true))
        .unwrap_or(true)
}

/// `torch.is_inference_mode_enabled`, looked up once.
fn inference_mode_fn(py: Python<'_>) -> PyResult<&'static Py<PyAny>> {
    static F: std::sync::OnceLock<Py<PyAny>> = std::sync::OnceLock::new();
    if let Some(f) = F.get() {
        return Ok(f);
    }
    let f = py
        .import("torch")?
        .getattr("is_inference_mode_enabled")?
        .unbind();
    Ok(F.get_or_init(|| f))
}

pub fn inference_mode_enabled(py: Python<'_>) -> bool {
    inference_mode_fn(py)
        .and_then(|f| f.bind(py).call0())
        .map(|r| r.is_truthy().unwrap_or(false))
        .unwrap_or(false)
}

/// `torch._C._is_any_autocast_enabled`, looked up once: the cheap check of the common case.
fn any_autocast_fn(py: Python<'_>) -> PyResult<&'static Py<PyAny>> {
    static F: std::sync::OnceLock<Py<PyAny>> = std::sync::OnceLock::new();
    if let Some(f) = F.get() {
        return Ok(f);
    }
    let f = py
        .import("torch")?
        .getattr("_C")?
        .getattr("_is_any_autocast_enabled")?
        .unbind();
    Ok(F.get_or_init(|| f))
}

/// The autocast state (`None` when it is off on every device), as `torchferro._amp` describes it.
pub fn autocast_state(py: Python<'_>) -> Option<String> {
    let any = any_autocast_fn(py)
        .and_then(|f| f.bind(py).call0())
        .map(|r| r.is_truthy().unwrap_or(true))
        .unwrap_or(true);
    if !any {
        return None;
    }
    Some(
        py.import("torchferro._amp")
            .and_then(|m| m.getattr("describe")?.call0()?.extract::<String>())
            .unwrap_or_else(|e| format!("unknown ({e})")),
    )
}

/// Autocast enabled on a device whose autocast is not traced (`Some` with the state as
/// [`autocast_state`] describes it). CPU and CUDA autocast are traced: their dtypes come from a
/// fake run under the state on the op's device. Another device's autocast would change the
/// dtypes of ops the trace infers natively. (`describe` names only the traced devices, so
/// "off" with some autocast enabled is another device's.)
pub fn foreign_autocast(py: Python<'_>) -> Option<String> {
    let state = autocast_state(py)?;
    (state == "off").then_some(state)
}
