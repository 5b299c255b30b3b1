//! Conversions between Python values and graph metadata: tensors to `TensorMeta`/`NodeMeta`,
//! graph arguments back to Python objects, and `meta`-device tensors made from metadata.

use super::*;

/// Moves any real tensor in a result to the meta device (ops without tensor inputs, such as
/// `torch.tensor(...)`, produce real ones).
pub(super) fn to_meta<'py>(
    py: Python<'py>,
    v: Bound<'py, PyAny>,
) -> Result<Bound<'py, PyAny>, TraceError> {
    if is_tensor(py, &v)? {
        let dev: String = v.getattr(intern!(py, "device"))?.str()?.to_string();
        if dev != "meta" {
            return Ok(v.call_method1("to", ("meta",))?);
        }
        return Ok(v);
    }
    if let Ok(t) = v.cast::<PyTuple>() {
        let items = t
            .iter()
            .map(|x| to_meta(py, x))
            .collect::<Result<Vec<_>, _>>()?;
        if v.get_type().is(py.get_type::<PyTuple>()) {
            return Ok(PyTuple::new(py, items)?.into_any());
        }
        return Ok(v);
    }
    Ok(v)
}

/// Converts a constant argument (possibly holding nodes) to a Python object, with `node` mapping
/// graph values.
pub fn arg_to_py<'py>(
    py: Python<'py>,
    arg: &Arg,
    node: &mut dyn FnMut(Python<'py>, NodeId) -> Result<Bound<'py, PyAny>, TraceError>,
) -> Result<Bound<'py, PyAny>, TraceError> {
    Ok(match arg {
        Arg::Node(n) => node(py, *n)?,
        Arg::None => py.None().into_bound(py),
        Arg::Bool(b) => pyo3::types::PyBool::new(py, *b).to_owned().into_any(),
        Arg::Int(i) => i.into_pyobject(py)?.into_any(),
        Arg::Float(f) => f.into_pyobject(py)?.into_any(),
        Arg::Str(s) => s.into_pyobject(py)?.into_any(),
        Arg::DType(d) => py.import("torch")?.getattr(d.torch_name())?,
        Arg::Device(d) => py
            .import("torch")?
            .getattr("device")?
            .call1((d.to_string(),))?,
        Arg::TorchAttr(name) => {
            let torch = py.import("torch")?;
            torch.getattr(name.trim_start_matches("torch."))?
        }
        Arg::Tuple(items) => {
            let v = items
                .iter()
                .map(|a| arg_to_py(py, a, node))
                .collect::<Result<Vec<_>, _>>()?;
            PyTuple::new(py, v)?.into_any()
        }
        Arg::List(items) => {
            let v = items
                .iter()
                .map(|a| arg_to_py(py, a, node))
                .collect::<Result<Vec<_>, _>>()?;
            PyList::new(py, v)?.into_any()
        }
        Arg::Slice(a, b, c) => {
            let a = arg_to_py(py, a, node)?;
            let b = arg_to_py(py, b, node)?;
            let c = arg_to_py(py, c, node)?;
            py.import("builtins")?.getattr("slice")?.call1((a, b, c))?
        }
        Arg::Ellipsis => py.Ellipsis().into_bound(py),
    })
}

pub fn dtype_of(py: Python<'_>, dtype: &Bound<'_, PyAny>) -> Result<DType, TraceError> {
    let s = dtype.str()?.to_string();
    let _ = py;
    DType::from_torch_name(s.trim_start_matches("torch."))
        .ok_or_else(|| TraceError::unsupported(format!("tensors of dtype {s}")))
}

pub fn device_of(dev: &Bound<'_, PyAny>) -> Result<Device, TraceError> {
    let py = dev.py();
    let kind: String = dev.getattr(intern!(py, "type"))?.extract()?;
    let index: Option<i64> = dev.getattr(intern!(py, "index"))?.extract()?;
    Ok(Device { kind, index })
}

/// Metadata of a live (or meta) tensor.
pub fn tensor_meta_of(py: Python<'_>, t: &Bound<'_, PyAny>) -> Result<TensorMeta, TraceError> {
    // Sparse, mkldnn and other non-strided tensors answer `stride()` with numbers that do not
    // address their data (a sparse COO tensor's are all 0): a graph traced over them would
    // hand kernels a pointer to something else. Their frames run eagerly.
    let layout = t.getattr(intern!(py, "layout"))?;
    if !layout.is(&py
        .import(intern!(py, "torch"))?
        .getattr(intern!(py, "strided"))?)
    {
        return Err(TraceError::unsupported(format!(
            "a tensor of layout {layout}"
        )));
    }
    let dtype = dtype_of(py, &t.getattr(intern!(py, "dtype"))?)?;
    let device = device_of(&t.getattr(intern!(py, "device"))?)?;
    let sizes: Vec<i64> = t.getattr(intern!(py, "shape"))?.extract()?;
    let strides: Vec<i64> = t.call_method0(intern!(py, "stride"))?.extract()?;
    let requires_grad: bool = t.getattr(intern!(py, "requires_grad"))?.extract()?;
    Ok(TensorMeta {
        dtype,
        device,
        sizes: sizes.into_iter().map(Dim::Known).collect(),
        strides: strides.into_iter().map(Dim::Known).collect(),
        requires_grad,
    })
}

pub(super) fn node_meta_of(
    py: Python<'_>,
    v: &Bound<'_, PyAny>,
    device: &Device,
) -> Result<NodeMeta, TraceError> {
    if is_tensor(py, v)? {
        let mut m = tensor_meta_of(py, v)?;
        m.device = device.clone();
        return Ok(NodeMeta::Tensor(m));
    }
    if let Ok(t) = v.cast::<PyTuple>() {
        let items = t
            .iter()
            .map(|x| node_meta_of(py, &x, device))
            .collect::<Result<Vec<_>, _>>()?;
        return Ok(NodeMeta::Tuple(items));
    }
    if let Ok(t) = v.cast::<PyList>() {
        let items = t
            .iter()
            .map(|x| node_meta_of(py, &x, device))
            .collect::<Result<Vec<_>, _>>()?;
        return Ok(NodeMeta::Tuple(items));
    }
    if v.is_none() {
        return Ok(NodeMeta::None);
    }
    if let Ok(b) = v.cast::<pyo3::types::PyBool>() {
        return Ok(NodeMeta::Bool(b.is_true()));
    }
    if let Ok(i) = v.extract::<i64>() {
        return Ok(NodeMeta::Int(i));
    }
    if let Ok(f) = v.extract::<f64>() {
        return Ok(NodeMeta::Float(f));
    }
    Err(TraceError::unsupported(format!(
        "an op returning {}",
        v.get_type().name()?
    )))
}

pub fn is_tensor(py: Python<'_>, v: &Bound<'_, PyAny>) -> PyResult<bool> {
    let tensor = py.import("torch")?.getattr(intern!(py, "Tensor"))?;
    v.is_instance(&tensor)
}

/// The concrete sizes and strides of `meta`: a meta tensor is made only at known shapes.
pub(super) fn known_layout(meta: &TensorMeta) -> Result<(Vec<i64>, Vec<i64>), TraceError> {
    let sizes = meta
        .known_sizes()
        .ok_or_else(|| TraceError::unsupported("symbolic sizes"))?;
    let strides = meta
        .known_strides()
        .ok_or_else(|| TraceError::unsupported("symbolic strides"))?;
    Ok((sizes, strides))
}

/// The factory keywords of a meta tensor with `meta`'s dtype.
pub(super) fn meta_kwargs<'py>(
    torch: &Bound<'py, PyModule>,
    meta: &TensorMeta,
    requires_grad: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let kwargs = PyDict::new(torch.py());
    kwargs.set_item("dtype", torch.getattr(meta.dtype.torch_name())?)?;
    kwargs.set_item("device", "meta")?;
    kwargs.set_item("requires_grad", requires_grad)?;
    Ok(kwargs)
}

/// A meta tensor of `meta` that requires grad and is not a leaf: a strided view of a clone of
/// a leaf over the storage the strides reach (an in-place op on a leaf, or on a view of one,
/// raises in torch; on a non-leaf it is recorded).
pub(super) fn make_meta_non_leaf<'py>(
    py: Python<'py>,
    meta: &TensorMeta,
) -> Result<Bound<'py, PyAny>, TraceError> {
    let torch = py.import("torch")?;
    let (sizes, strides) = known_layout(meta)?;
    let storage: i64 = if sizes.contains(&0) {
        0
    } else {
        1 + sizes
            .iter()
            .zip(&strides)
            .map(|(&s, &st)| (s - 1) * st)
            .sum::<i64>()
    };
    let kwargs = meta_kwargs(&torch, meta, true)?;
    let leaf = torch.getattr("empty")?.call(((storage,),), Some(&kwargs))?;
    let grad = torch.getattr("enable_grad")?.call0()?;
    grad.call_method0("__enter__")?;
    let t = leaf
        .call_method0("clone")
        .and_then(|c| c.call_method1("as_strided", (sizes, strides)));
    grad.call_method1("__exit__", (py.None(), py.None(), py.None()))?;
    Ok(t?)
}

pub fn make_meta_tensor<'py>(
    py: Python<'py>,
    meta: &TensorMeta,
) -> Result<Bound<'py, PyAny>, TraceError> {
    let torch = py.import("torch")?;
    let (sizes, strides) = known_layout(meta)?;
    let kwargs = meta_kwargs(&torch, meta, meta.requires_grad)?;
    Ok(torch
        .getattr("empty_strided")?
        .call((sizes, strides), Some(&kwargs))?)
}
