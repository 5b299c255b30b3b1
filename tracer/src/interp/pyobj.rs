//! Predicates and small queries on live Python objects (no trackers, no tracer state): what
//! kind of object a value read from the frame is (`nn.Module`, constant module, immutable
//! constant, plain or per-call object, non-strided tensor), namedtuple fields, and which dict
//! methods only read. A leaf: `vars`, `ops`, `calls` and the rest of `interp/` ask it, and it
//! asks none of them, so these questions do not tie the trackers to the operators.

use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyFloat, PyInt, PyModule, PyString, PyTuple};

/// Makes a tuple subclass instance from its items: namedtuples through `_make`, struct
/// sequences (`torch.return_types.*`) from one tuple argument.
pub fn build_named_tuple<'py>(
    ty: &Bound<'py, PyAny>,
    items: Bound<'py, PyTuple>,
) -> PyResult<Bound<'py, PyAny>> {
    if ty.hasattr("_make")? {
        ty.call_method1("_make", (items,))
    } else {
        ty.call1((items,))
    }
}

/// The field names of a tuple subclass with named fields.
pub fn named_tuple_fields(ty: &Bound<'_, PyAny>) -> Vec<String> {
    for attr in ["_fields", "__match_args__"] {
        if let Ok(f) = ty.getattr(attr).and_then(|f| f.extract::<Vec<String>>()) {
            return f;
        }
    }
    Vec::new()
}

pub(super) fn is_const_type(o: &Bound<'_, PyAny>) -> bool {
    o.is_none()
        || o.cast::<PyBool>().is_ok()
        || o.cast::<PyInt>().is_ok()
        || o.cast::<PyFloat>().is_ok()
        || o.cast::<PyString>().is_ok()
        || o.cast::<pyo3::types::PyBytes>().is_ok()
}

/// An instance of a Python class that is not a module, class or function, and not a torch or
/// builtins object: its identity rarely matters, and it is often new on each call. One made
/// callable by its class's own Python `__call__` (transformers' logits processors and stopping
/// criteria, built afresh per `generate` call) is one too: a call through it reads that
/// function from the class (guarded by identity there) and the instance's attributes through
/// their own sources, as torch.compile guards such an object by type; other callables
/// (functions, bound methods, partials, C callables) are not.
pub(super) fn is_plain_object(py: Python<'_>, o: &Bound<'_, PyAny>) -> PyResult<bool> {
    let ty = o.get_type();
    let module: String = ty
        .getattr(intern!(py, "__module__"))
        .and_then(|m| m.extract())
        .unwrap_or_default();
    if module == "builtins" || module == "torch" || module.starts_with("torch.") {
        return Ok(false);
    }
    if o.cast::<PyModule>().is_ok() || o.is_instance_of::<pyo3::types::PyType>() {
        return Ok(false);
    }
    if o.is_callable() {
        let function = py.import("types")?.getattr("FunctionType")?;
        let python_call = ty
            .getattr(intern!(py, "__call__"))
            .is_ok_and(|c| c.is_instance(&function).unwrap_or(false));
        if !python_call {
            return Ok(false);
        }
    }
    let enum_base = py.import("enum")?.getattr("Enum")?;
    Ok(!o.is_instance(&enum_base)? && !is_nn_module(py, o)?)
}

/// A torch object that is not a value the trace embeds (dtypes, layouts, memory formats,
/// qschemes, devices and sizes are values, compared by identity or equality), not callable, not
/// a module or class: what it holds is reached only through attribute reads (guarded by their
/// own sources) or calls that break the graph or realize its identity.
pub(super) fn is_per_call_torch_object(py: Python<'_>, o: &Bound<'_, PyAny>) -> PyResult<bool> {
    let ty = o.get_type();
    let module: String = ty
        .getattr(intern!(py, "__module__"))
        .and_then(|m| m.extract())
        .unwrap_or_default();
    if module != "torch" && !module.starts_with("torch.") {
        return Ok(false);
    }
    if o.is_callable() || o.cast::<PyModule>().is_ok() || o.is_instance_of::<pyo3::types::PyType>()
    {
        return Ok(false);
    }
    let torch = py.import("torch")?;
    for value_type in [
        "dtype",
        "layout",
        "memory_format",
        "qscheme",
        "device",
        "Size",
    ] {
        if o.is_instance(&torch.getattr(value_type)?)? {
            return Ok(false);
        }
    }
    let enum_base = py.import("enum")?.getattr("Enum")?;
    Ok(!o.is_instance(&enum_base)? && !is_nn_module(py, o)?)
}

/// Modules whose attributes are taken to be constant: reading `torch.relu` needs no guard.
pub fn is_constant_module(o: &Bound<'_, PyAny>) -> bool {
    if o.cast::<PyModule>().is_err() {
        return false;
    }
    let name: String = o
        .getattr("__name__")
        .and_then(|n| n.extract())
        .unwrap_or_default();
    name == "torch"
        || name.starts_with("torch.")
        || matches!(
            name.as_str(),
            "math"
                | "operator"
                | "builtins"
                | "functools"
                | "itertools"
                | "collections"
                | "numbers"
        )
}

/// `cls.__name__`, or `default` for a class without one.
pub(super) fn class_name(py: Python<'_>, cls: &Py<PyAny>, default: &str) -> String {
    cls.bind(py)
        .getattr("__name__")
        .map(|n| n.to_string())
        .unwrap_or_else(|_| default.into())
}

/// What kind of non-strided tensor `t` is (`"sparse_coo"`, `"_mkldnn"`, `"nested"`,
/// `"quantized"`), or `None` for a plain strided tensor. Such tensors are never traced: their
/// elements are not where sizes and strides say, so the frame runs them eagerly.
pub fn non_strided_kind(py: Python<'_>, t: &Bound<'_, PyAny>) -> PyResult<Option<String>> {
    let layout = t.getattr(intern!(py, "layout"))?;
    let strided = py.import("torch")?.getattr(intern!(py, "strided"))?;
    if !layout.is(&strided) {
        let name = layout.str()?.to_string();
        return Ok(Some(
            name.strip_prefix("torch.").unwrap_or(&name).to_string(),
        ));
    }
    if t.getattr(intern!(py, "is_nested"))?.is_truthy()? {
        return Ok(Some("nested".into()));
    }
    if t.getattr(intern!(py, "is_quantized"))?.is_truthy()? {
        return Ok(Some("quantized".into()));
    }
    Ok(None)
}

/// Values whose methods cannot mutate them, so calling those methods at trace time is safe.
pub fn is_immutable_const(o: &Bound<'_, PyAny>) -> bool {
    use pyo3::types::{PyBool, PyBytes, PyFloat, PyFrozenSet, PyInt, PyString};
    o.is_none()
        || o.cast::<PyBool>().is_ok()
        || o.cast::<PyInt>().is_ok()
        || o.cast::<PyFloat>().is_ok()
        || o.cast::<PyString>().is_ok()
        || o.cast::<PyBytes>().is_ok()
        || o.cast::<PyFrozenSet>().is_ok()
        || o.get_type().is(o.py().get_type::<PyTuple>())
        || is_torch_size(o)
}

/// A `torch.Size`: a tuple of ints, immutable like a tuple (its methods, `numel` included, are
/// pure).
pub fn is_torch_size(o: &Bound<'_, PyAny>) -> bool {
    o.py()
        .import("torch")
        .and_then(|t| t.getattr("Size"))
        .is_ok_and(|size| o.get_type().is(&size))
}

pub fn is_nn_module(py: Python<'_>, o: &Bound<'_, PyAny>) -> PyResult<bool> {
    let module = py.import("torch.nn")?.getattr("Module")?;
    o.is_instance(&module)
}

/// Methods of `dict` that only read it.
pub(super) fn is_dict_read(name: &str) -> bool {
    matches!(
        name,
        "keys" | "values" | "items" | "get" | "__contains__" | "__getitem__" | "__len__"
    )
}

/// A numpy integer, float or bool scalar (not complex, not a string).
pub(crate) fn is_np_number(py: Python<'_>, o: &Bound<'_, PyAny>) -> bool {
    let Ok(module) = o.get_type().module() else {
        return false;
    };
    if module.to_str().ok() != Some("numpy") {
        return false;
    }
    py.import("numpy")
        .and_then(|np| {
            let mut any = false;
            for kind in ["integer", "floating", "bool_"] {
                any |= o.is_instance(&np.getattr(kind)?)?;
            }
            Ok(any)
        })
        .unwrap_or(false)
}

/// Whether `o` is an instance of a builtin container type that a tracker may stand for.
pub(super) fn is_container_object(py: Python<'_>, o: &Bound<'_, PyAny>) -> PyResult<bool> {
    let builtins = py.import("builtins")?;
    for name in ["list", "tuple", "dict", "set", "frozenset", "slice"] {
        if o.is_instance(&builtins.getattr(name)?)? {
            return Ok(true);
        }
    }
    o.is_instance(&py.import("collections")?.getattr("deque")?)
}

// User subclasses of builtin containers (`user_containers.rs`).

/// The dunders a traced user container may override: the tracer dispatches each of them.
const DISPATCHED: &[&str] = &[
    "__init__",
    "__getitem__",
    "__setitem__",
    "__delitem__",
    "__getattr__",
    "__setattr__",
    "__repr__",
    "__str__",
    // `==` and `!=` (a dataclass's generated `__eq__`): `interp::ops::operator` calls them.
    "__eq__",
    "__ne__",
    // Called by name only, by the dataclass `__init__` that the trace inlines.
    "__post_init__",
    // Calling the instance (transformers' `LogitsProcessorList(list)`): no builtin reads it,
    // `interp::calls` binds it to the tracker and inlines it.
    "__call__",
];

/// Dunders a class body defines that are not behaviour.
const CLASS_DATA: &[&str] = &[
    "__module__",
    "__qualname__",
    "__doc__",
    "__dict__",
    "__weakref__",
    "__annotations__",
    "__firstlineno__",
    "__static_attributes__",
    "__orig_bases__",
    "__parameters__",
    "__class_getitem__",
    "__init_subclass__",
    "__dataclass_fields__",
    "__dataclass_params__",
    "__match_args__",
];

/// The builtin container a user class derives from: `dict`, `OrderedDict` or `list`, when the
/// class is one this module traces.
pub(crate) fn container_base<'py>(
    py: Python<'py>,
    cls: &Bound<'py, PyAny>,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    let Ok(ty) = cls.cast::<pyo3::types::PyType>() else {
        return Ok(None);
    };
    let builtins = py.import("builtins")?;
    let type_ = builtins.getattr("type")?;
    if !ty.get_type().is(&type_) {
        return Ok(None);
    }
    let dict = builtins.getattr("dict")?;
    let list = builtins.getattr("list")?;
    let object = builtins.getattr("object")?;
    let ordered = py.import("collections")?.getattr("OrderedDict")?;
    let mut base = None;
    for c in ty.getattr("__mro__")?.try_iter()? {
        let c = c?;
        if c.is(&object) {
            continue;
        }
        if c.is(&dict) || c.is(&list) || c.is(&ordered) {
            if base.is_none() {
                base = Some(c);
            }
            continue;
        }
        // A class of the user's (a Python class, not a C type), before the builtin base.
        if base.is_some() || !is_user_class(py, &c)? {
            return Ok(None);
        }
        let d = c.getattr("__dict__")?;
        for k in d.call_method0("keys")?.try_iter()? {
            let k: String = k?.extract()?;
            // `__hash__ = None` (what `@dataclass` or an `__eq__` sets) keeps the instances
            // unhashable, as the builtin base's already are.
            let unhashable = k == "__hash__" && d.get_item(&k)?.is_none();
            if k.starts_with("__")
                && k.ends_with("__")
                && !DISPATCHED.contains(&k.as_str())
                && !CLASS_DATA.contains(&k.as_str())
                && !unhashable
            {
                return Ok(None);
            }
        }
    }
    // Builtin containers themselves are handled elsewhere.
    if base.as_ref().is_some_and(|b| b.is(cls)) {
        return Ok(None);
    }
    Ok(base)
}

/// A heap type defined in Python code (it has `__module__` outside builtins/collections).
pub(crate) fn is_user_class(py: Python<'_>, c: &Bound<'_, PyAny>) -> PyResult<bool> {
    let module: String = c
        .getattr("__module__")
        .and_then(|m| m.extract())
        .unwrap_or_default();
    let _ = py;
    Ok(!matches!(module.as_str(), "builtins" | "collections"))
}

/// Rebuilds a user container after the graph without running the class's code: the builtin
/// base's `__new__`, then its own item setter (`OrderedDict.__setitem__` keeps the order).
pub(crate) fn rebuild_fn(py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
    static F: pyo3::sync::PyOnceLock<Py<PyAny>> = pyo3::sync::PyOnceLock::new();
    let f = F.get_or_try_init(py, || -> PyResult<Py<PyAny>> {
        let code = std::ffi::CString::new(
            "def rebuild(cls, base, items):\n    obj = base.__new__(cls)\n    if base is list:\n        list.extend(obj, items)\n    else:\n        for k, v in items.items():\n            base.__setitem__(obj, k, v)\n    return obj\n",
        )
        .map_err(|e| pyo3::exceptions::PyValueError::new_err(e.to_string()))?;
        let m = PyModule::from_code(py, &code, c"<torchferro user containers>", c"torchferro_user_containers")?;
        Ok(m.getattr("rebuild")?.unbind())
    })?;
    Ok(f.bind(py).clone())
}

/// The `nn.Module.__init__` that TorchDynamo's `install_generation_tagging_init` wrapped, when
/// `f` is that wrapper (`patched_init`, installed on `nn.Module` once `torch.compile` has run
/// in the process): it calls the original and then tags the new module with Dynamo's
/// generation counter, bookkeeping of Dynamo's own that torchferro does not read. A module the
/// trace builds runs the original `__init__` inlined; `None` for any other `f`.
pub(crate) fn dynamo_patched_init<'py>(f: &Bound<'py, PyAny>) -> Option<Bound<'py, PyAny>> {
    let code = f.getattr(intern!(f.py(), "__code__")).ok()?;
    let qualname: String = code.getattr("co_qualname").ok()?.extract().ok()?;
    let file: String = code.getattr("co_filename").ok()?.extract().ok()?;
    if qualname != "install_generation_tagging_init.<locals>.patched_init"
        || !file.ends_with("_dynamo/mutation_guard.py")
    {
        return None;
    }
    let freevars: Vec<String> = code.getattr("co_freevars").ok()?.extract().ok()?;
    let i = freevars.iter().position(|v| v == "init")?;
    f.getattr("__closure__")
        .ok()?
        .get_item(i)
        .ok()?
        .getattr("cell_contents")
        .ok()
}
