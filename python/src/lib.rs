#![allow(non_snake_case)]
//! `torchferro._C`: the extension module. Thin by design: it adapts Python calls to the tracer.

use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};

use tracer::mode::Mode;
use tracer::{Backend, CompileConfig};

/// A function (or module) compiled with a given backend: calling it runs the callable with the
/// frame hook in compile mode on this thread.
#[pyclass(frozen, module = "torchferro._C")]
struct CompiledFunction {
    #[pyo3(get)]
    fn_: Py<PyAny>,
    config: Arc<CompileConfig>,
    backend_obj: Py<PyAny>,
    #[pyo3(get)]
    fullgraph: bool,
    /// Made by the user (`torchferro.compile`), not by binding as a method: freeing it frees the
    /// memory compiled graphs keep between calls.
    owner: bool,
}

impl Drop for CompiledFunction {
    fn drop(&mut self) {
        if self.owner {
            // None while the interpreter finalizes: then everything is being freed anyway.
            let _ = Python::try_attach(tracer::code_cache::release_kept_all);
        }
    }
}

#[pymethods]
impl CompiledFunction {
    #[new]
    #[pyo3(signature = (fn_, backend, fullgraph=false, dynamic=None))]
    fn new(
        py: Python<'_>,
        fn_: Py<PyAny>,
        backend: Py<PyAny>,
        fullgraph: bool,
        dynamic: Option<bool>,
    ) -> Self {
        let b = if backend.bind(py).is_none() {
            Backend::Eager
        } else if backend
            .bind(py)
            .extract::<String>()
            .map(|s| s == "inductor")
            .unwrap_or(false)
        {
            Backend::Inductor
        } else if backend
            .bind(py)
            .extract::<String>()
            .map(|s| s == "aot_eager")
            .unwrap_or(false)
        {
            Backend::AotEager
        } else {
            Backend::Python(backend.clone_ref(py))
        };
        CompiledFunction {
            fn_,
            config: Arc::new(CompileConfig {
                backend: b,
                fullgraph,
                dynamic: match dynamic {
                    None => tracer::guards::DynamicPolicy::Automatic,
                    Some(true) => tracer::guards::DynamicPolicy::Always,
                    Some(false) => tracer::guards::DynamicPolicy::Never,
                },
            }),
            backend_obj: backend,
            fullgraph,
            owner: true,
        }
    }

    #[pyo3(signature = (*args, **kwargs))]
    fn __call__<'py>(
        &self,
        py: Python<'py>,
        args: &Bound<'py, PyTuple>,
        kwargs: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        tracer::call_in_mode(
            self.fn_.bind(py),
            args,
            kwargs,
            Mode::Compile(self.config.clone()),
        )
    }

    /// Binding as a method: `obj.method` gives a compiled bound method with the same config.
    fn __get__(
        slf: Py<Self>,
        py: Python<'_>,
        obj: Option<Py<PyAny>>,
        _ty: Option<Py<PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        let Some(obj) = obj else {
            return Ok(slf.into_any());
        };
        let this = slf.get();
        let bound = py
            .import("types")?
            .getattr("MethodType")?
            .call1((this.fn_.bind(py), obj))?;
        Ok(Py::new(
            py,
            CompiledFunction {
                fn_: bound.unbind(),
                config: this.config.clone(),
                backend_obj: this.backend_obj.clone_ref(py),
                fullgraph: this.fullgraph,
                owner: false,
            },
        )?
        .into_any())
    }

    fn __getattr__<'py>(&self, py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyAny>> {
        self.fn_.bind(py).getattr(name)
    }

    #[getter]
    fn __wrapped__(&self, py: Python<'_>) -> Py<PyAny> {
        self.fn_.clone_ref(py)
    }
}

/// Runs `fn(*args, **kwargs)` with the hook off on this thread (`torchferro.compiler.disable`).
#[pyfunction]
#[pyo3(signature = (fn_, *args, **kwargs))]
fn call_disabled<'py>(
    fn_: &Bound<'py, PyAny>,
    args: &Bound<'py, PyTuple>,
    kwargs: Option<&Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyAny>> {
    tracer::call_in_mode(fn_, args, kwargs, Mode::Off)
}

#[pyfunction]
fn reset(py: Python<'_>) {
    tracer::code_cache::reset_all(py);
}

#[pyfunction]
fn set_recompile_limit(n: usize) {
    tracer::config::set_recompile_limit(n);
}

#[pyfunction]
fn get_recompile_limit() -> usize {
    tracer::config::recompile_limit()
}

#[pyfunction]
fn set_stance(stance: &str) -> PyResult<String> {
    let s = tracer::config::Stance::parse(stance).ok_or_else(|| {
        pyo3::exceptions::PyValueError::new_err(format!(
            "unknown stance {stance:?}; expected one of 'default', 'force_eager', 'eager_on_recompile', 'fail_on_recompile'"
        ))
    })?;
    let old = tracer::config::stance();
    tracer::config::set_stance(s);
    Ok(old.name().to_string())
}

#[pyfunction]
fn get_stance() -> String {
    tracer::config::stance().name().to_string()
}

#[pyfunction]
fn set_direct_call(v: bool) {
    tracer::config::set_direct_call(v);
}

#[pyfunction]
fn set_automatic_dynamic(v: bool) {
    tracer::config::set_automatic_dynamic(v);
}

#[pyfunction]
fn get_automatic_dynamic() -> bool {
    tracer::config::automatic_dynamic()
}

#[pyfunction]
fn set_automatic_dynamic_whole_tensor(v: bool) {
    tracer::config::set_automatic_dynamic_whole_tensor(v);
}

#[pyfunction]
fn get_automatic_dynamic_whole_tensor() -> bool {
    tracer::config::automatic_dynamic_whole_tensor()
}

#[pyfunction]
fn set_automatic_dynamic_size_oblivious(v: bool) {
    tracer::config::set_automatic_dynamic_size_oblivious(v);
}

#[pyfunction]
fn get_automatic_dynamic_size_oblivious() -> bool {
    tracer::config::automatic_dynamic_size_oblivious()
}

/// The guards' native read of `getattr(obj, name)` through an aliasing `__getattribute__`
/// (tracer `aliased_getattr`): `None` where it does not apply (Python reads it), else
/// `(found, value)` (`found` false only with `suppress`, the `hasattr` probe). For tests.
#[pyfunction]
fn _aliased_getattr<'py>(
    obj: &Bound<'py, PyAny>,
    name: &Bound<'py, pyo3::types::PyString>,
    suppress: bool,
) -> PyResult<Option<(bool, Option<Bound<'py, PyAny>>)>> {
    match tracer::aliased_getattr::read(obj, name, suppress) {
        None => Ok(None),
        Some(r) => {
            let v = r?;
            Ok(Some((v.is_some(), v)))
        }
    }
}

/// The state and entries of a code object's cache: `(state, [(compile_id, guards, graph_code)])`.
#[pyfunction]
fn cache_entries(py: Python<'_>, code: &Bound<'_, PyAny>) -> PyResult<(String, Vec<Py<PyAny>>)> {
    let (state, entries) = tracer::cache_info(code);
    let mut out = Vec::new();
    for e in entries {
        let d = PyDict::new(py);
        d.set_item(
            "compile_id",
            format!("{}/{}", e.compile_id.0, e.compile_id.1),
        )?;
        d.set_item("guards", e.guards)?;
        d.set_item("graph", e.graph_code)?;
        d.set_item("runner", e.runner)?;
        if let Some(((kernels, externs, fallbacks), reasons, source)) = e.inductor {
            d.set_item("kernels", kernels)?;
            d.set_item("extern_calls", externs)?;
            d.set_item("fallbacks", fallbacks)?;
            d.set_item("fallback_reasons", reasons)?;
            d.set_item("output_code", source)?;
        }
        out.push(d.into_any().unbind());
    }
    Ok((state, out))
}

/// Turns on or off (`None`: leaves as it is) the guard walks' skipping of fetches and identity
/// checks that the dicts' version tags show unchanged (tracer `guards/memo.rs`); answers whether
/// it is on. For measurements and tests: the same process with and without.
#[pyfunction]
#[pyo3(signature = (on=None))]
fn _guard_memo(on: Option<bool>) -> bool {
    match on {
        Some(on) => tracer::guards::set_guard_memo(on),
        None => tracer::guards::set_guard_memo(tracer::guards::guard_memo_enabled()),
    }
}

/// `(evaluated, skipped, fetched, reused)`: the checks and value fetches of the guard walks
/// that passed since the last call (process-wide), reset.
#[pyfunction]
fn _guard_counts() -> (u64, u64, u64, u64) {
    tracer::guards::take_guard_counts()
}

/// How many CUDA kernels compiled graphs have launched in this process (tests tell from it
/// that a graph ran our kernels rather than the eager runner).
#[pyfunction]
fn _cuda_kernel_launches() -> u64 {
    tracer::backend::cuda::launches()
}

/// How many CUDA sources NVRTC has compiled in this process (cubin cache hits not counted):
/// a graph with symbolic sizes compiles once for every size.
#[pyfunction]
fn _nvrtc_compiles() -> u64 {
    tracer::backend::cuda::nvrtc_compiles()
}

/// How many times a dynamic graph on the inductor was specialized at an assignment of its size
/// symbols (a symbolic library's later assignments take none).
#[pyfunction]
fn _dynamic_specializations() -> usize {
    tracer::backend::inductor::dynamic_specializations()
}

#[pymodule]
#[allow(non_snake_case)]
fn _C(m: &Bound<'_, PyModule>) -> PyResult<()> {
    // Rust logs through `tracing` only; from here on its events reach Python's `logging`.
    tracer::log::bridge::install();
    m.add_class::<CompiledFunction>()?;
    m.add_class::<tracer::CompiledGraph>()?;
    m.add_function(wrap_pyfunction!(call_disabled, m)?)?;
    m.add_function(wrap_pyfunction!(reset, m)?)?;
    m.add_function(wrap_pyfunction!(set_recompile_limit, m)?)?;
    m.add_function(wrap_pyfunction!(get_recompile_limit, m)?)?;
    m.add_function(wrap_pyfunction!(set_direct_call, m)?)?;
    m.add_function(wrap_pyfunction!(set_automatic_dynamic, m)?)?;
    m.add_function(wrap_pyfunction!(get_automatic_dynamic, m)?)?;
    m.add_function(wrap_pyfunction!(set_automatic_dynamic_whole_tensor, m)?)?;
    m.add_function(wrap_pyfunction!(get_automatic_dynamic_whole_tensor, m)?)?;
    m.add_function(wrap_pyfunction!(set_automatic_dynamic_size_oblivious, m)?)?;
    m.add_function(wrap_pyfunction!(get_automatic_dynamic_size_oblivious, m)?)?;
    m.add_function(wrap_pyfunction!(set_stance, m)?)?;
    m.add_function(wrap_pyfunction!(get_stance, m)?)?;
    m.add(
        "RecompileError",
        m.py().get_type::<tracer::compile::RecompileError>(),
    )?;
    m.add_function(wrap_pyfunction!(cache_entries, m)?)?;
    m.add_function(wrap_pyfunction!(_aliased_getattr, m)?)?;
    m.add_function(wrap_pyfunction!(_guard_memo, m)?)?;
    m.add_function(wrap_pyfunction!(_guard_counts, m)?)?;
    m.add_function(wrap_pyfunction!(_cuda_kernel_launches, m)?)?;
    m.add_function(wrap_pyfunction!(_nvrtc_compiles, m)?)?;
    m.add_function(wrap_pyfunction!(_dynamic_specializations, m)?)?;
    m.add("Unsupported", m.py().get_type::<tracer::Unsupported>())?;
    tracer::precompile::register(m)?;
    Ok(())
}
