//! numpy inside compiled code (issue 14), as torch.compile does it: an array that comes from
//! `tensor.numpy()` (or a numpy call on one) is a [`NdarrayVar`], a tensor node that the program
//! sees as an `ndarray` (or, `scalar`, as the numpy scalar a full reduction or an integer index
//! returns). numpy calls on it become torch ops; where it leaves the frame it is turned back
//! into an array (`Tensor.numpy()` of the graph output, `[()]` for a scalar).
//!
//! numpy's result types are not torch's (an `int64` array divided by 2 is `float64`, `int32 +
//! float32` is `float64`, `np.float64` scalars are strong under NEP 50), so each call first runs
//! the real numpy function on *probes* (arrays of ones of the same dtype and number of
//! dimensions, every dimension 1; numpy scalars of the same type; the constants as they are):
//! the probe's result says the dtype eager's result has and whether it is a numpy scalar. The
//! torch op then runs on inputs cast to that dtype and its result is cast to it. A call the
//! probe rejects, or that the tables below do not model, breaks the graph; so does anything
//! that reads values into Python (`float(a.sum())`, `a.tolist()`, a branch on an array).

use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyList, PyTuple};

use fx::{Arg, DType, Target};

use crate::error::TraceError;
use crate::output::TensorValue;

use super::vars::{NdarrayVar, Var};
use super::Frame;

mod array;
mod functions;

/// numpy ufuncs and the torch function computing each (inputs cast to the result dtype, or for
/// a bool result to the inputs' common dtype).
const ELEMENTWISE: &[(&str, &str)] = &[
    ("add", "add"),
    ("subtract", "sub"),
    ("multiply", "mul"),
    ("divide", "div"),
    ("true_divide", "div"),
    ("floor_divide", "floor_divide"),
    ("remainder", "remainder"),
    ("mod", "remainder"),
    ("power", "pow"),
    ("maximum", "maximum"),
    ("minimum", "minimum"),
    ("fmax", "fmax"),
    ("fmin", "fmin"),
    ("arctan2", "atan2"),
    ("hypot", "hypot"),
    ("exp", "exp"),
    ("exp2", "exp2"),
    ("expm1", "expm1"),
    ("log", "log"),
    ("log2", "log2"),
    ("log10", "log10"),
    ("log1p", "log1p"),
    ("sqrt", "sqrt"),
    ("square", "square"),
    ("absolute", "abs"),
    ("abs", "abs"),
    ("fabs", "abs"),
    ("negative", "neg"),
    ("positive", "positive"),
    ("sign", "sign"),
    ("sin", "sin"),
    ("cos", "cos"),
    ("tan", "tan"),
    ("arcsin", "asin"),
    ("arccos", "acos"),
    ("arctan", "atan"),
    ("sinh", "sinh"),
    ("cosh", "cosh"),
    ("tanh", "tanh"),
    ("floor", "floor"),
    ("ceil", "ceil"),
    ("trunc", "trunc"),
    ("rint", "round"),
    ("greater", "gt"),
    ("greater_equal", "ge"),
    ("less", "lt"),
    ("less_equal", "le"),
    ("equal", "eq"),
    ("not_equal", "ne"),
    ("logical_and", "logical_and"),
    ("logical_or", "logical_or"),
    ("logical_xor", "logical_xor"),
    ("logical_not", "logical_not"),
    ("isnan", "isnan"),
    ("isinf", "isinf"),
    ("isfinite", "isfinite"),
    ("signbit", "signbit"),
    ("bitwise_and", "bitwise_and"),
    ("bitwise_or", "bitwise_or"),
    ("bitwise_xor", "bitwise_xor"),
    ("invert", "bitwise_not"),
    ("bitwise_not", "bitwise_not"),
    ("matmul", "matmul"),
    ("where", "where"),
    ("clip", "clamp"),
];

/// Reductions: numpy name, torch function, and the positions of numpy's `axis`, `dtype`,
/// `out`, `ddof` and `keepdims` parameters (after the array).
struct Reduction {
    np: &'static str,
    torch: &'static str,
    params: &'static [&'static str],
}

const REDUCTIONS: &[Reduction] = &[
    Reduction {
        np: "sum",
        torch: "sum",
        params: &["axis", "dtype", "out", "keepdims"],
    },
    Reduction {
        np: "prod",
        torch: "prod",
        params: &["axis", "dtype", "out", "keepdims"],
    },
    Reduction {
        np: "mean",
        torch: "mean",
        params: &["axis", "dtype", "out", "keepdims"],
    },
    Reduction {
        np: "std",
        torch: "std",
        params: &["axis", "dtype", "out", "ddof", "keepdims"],
    },
    Reduction {
        np: "var",
        torch: "var",
        params: &["axis", "dtype", "out", "ddof", "keepdims"],
    },
    Reduction {
        np: "amax",
        torch: "amax",
        params: &["axis", "out", "keepdims"],
    },
    Reduction {
        np: "amin",
        torch: "amin",
        params: &["axis", "out", "keepdims"],
    },
    Reduction {
        np: "max",
        torch: "amax",
        params: &["axis", "out", "keepdims"],
    },
    Reduction {
        np: "min",
        torch: "amin",
        params: &["axis", "out", "keepdims"],
    },
    Reduction {
        np: "argmax",
        torch: "argmax",
        params: &["axis", "out", "keepdims"],
    },
    Reduction {
        np: "argmin",
        torch: "argmin",
        params: &["axis", "out", "keepdims"],
    },
    Reduction {
        np: "all",
        torch: "all",
        params: &["axis", "out", "keepdims"],
    },
    Reduction {
        np: "any",
        torch: "any",
        params: &["axis", "out", "keepdims"],
    },
    Reduction {
        np: "cumsum",
        torch: "cumsum",
        params: &["axis", "dtype", "out"],
    },
    Reduction {
        np: "cumprod",
        torch: "cumprod",
        params: &["axis", "dtype", "out"],
    },
];

/// numpy functions with no array argument that are pure: folded at trace time.
const PURE_CONSTANT: &[&str] = &[
    "finfo",
    "iinfo",
    "dtype",
    "result_type",
    "promote_types",
    "can_cast",
    "issubdtype",
    "isscalar",
];

/// numpy factories made in the graph as the torch factory of the same name.
const FACTORIES: &[&str] = &["zeros", "ones", "full", "arange", "eye", "linspace"];

/// `operator.<name>` on an array: the numpy ufunc it calls.
fn operator_ufunc(name: &str) -> Option<&'static str> {
    Some(match name.trim_start_matches('i') {
        "add" => "add",
        "sub" => "subtract",
        "mul" => "multiply",
        "truediv" => "true_divide",
        "floordiv" => "floor_divide",
        "mod" => "remainder",
        "pow" => "power",
        "matmul" => "matmul",
        "lt" => "less",
        "le" => "less_equal",
        "eq" => "equal",
        "ne" => "not_equal",
        "gt" => "greater",
        "ge" => "greater_equal",
        "and_" => "bitwise_and",
        "or_" => "bitwise_or",
        "xor" => "bitwise_xor",
        "neg" => "negative",
        "pos" => "positive",
        "nvert" => "invert",
        "abs" => "absolute",
        _ => return None,
    })
}

fn numpy(py: Python<'_>) -> Result<Bound<'_, PyModule>, TraceError> {
    py.import("numpy")
        .map_err(|_| TraceError::unsupported("numpy is not importable"))
}

/// The numpy dtype of a tensor dtype (the names agree; numpy has no bfloat16).
fn np_dtype<'py>(py: Python<'py>, d: DType) -> Result<Bound<'py, PyAny>, TraceError> {
    if d == DType::BFloat16 {
        return Err(TraceError::unsupported(
            "Tensor.numpy() of a bfloat16 tensor (numpy has no bfloat16; eager raises)",
        ));
    }
    Ok(numpy(py)?.getattr("dtype")?.call1((d.torch_name(),))?)
}

/// The tensor dtype of a numpy dtype (or anything `np.dtype` accepts: `np.float32`, `"int64"`).
fn dtype_from_np(py: Python<'_>, d: &Bound<'_, PyAny>) -> Result<DType, TraceError> {
    let d = numpy(py)?.getattr("dtype")?.call1((d,))?;
    let name: String = d.getattr("name")?.extract()?;
    DType::from_torch_name(&name)
        .filter(|d| *d != DType::BFloat16)
        .ok_or_else(|| TraceError::unsupported(format!("numpy arrays of dtype {name}")))
}

/// Whether `o` is a live ndarray (an input, or a constant): not traced yet.
fn is_live_ndarray(py: Python<'_>, o: &Bound<'_, PyAny>) -> bool {
    numpy(py)
        .and_then(|np| Ok(o.is_instance(&np.getattr("ndarray")?)?))
        .unwrap_or(false)
}

fn is_np_generic(py: Python<'_>, o: &Bound<'_, PyAny>) -> bool {
    numpy(py)
        .and_then(|np| Ok(o.is_instance(&np.getattr("generic")?)?))
        .unwrap_or(false)
}

/// Whether any argument (or item of a tuple/list argument) is an array computed in the graph.
pub(super) fn has_ndarray(args: &[Var], kwargs: &[(String, Var)]) -> bool {
    let any = |v: &Var| super::nested::any_nested(v, &|i| matches!(i, Var::Ndarray(_)));
    args.iter().chain(kwargs.iter().map(|(_, v)| v)).any(any)
}

/// The probe standing for `v` in a trace-time numpy call (see the module doc), or `None` when
/// `v` is something numpy would read values from that the trace does not know.
fn probe<'py>(py: Python<'py>, v: &Var) -> Result<Option<Bound<'py, PyAny>>, TraceError> {
    Ok(match v {
        Var::Ndarray(a) if a.pynum => Some(match a.t.meta.dtype {
            DType::Float64 => 1.0f64.into_pyobject(py)?.into_any(),
            DType::Bool => pyo3::types::PyBool::new(py, true).to_owned().into_any(),
            _ => 1i64.into_pyobject(py)?.into_any(),
        }),
        Var::Ndarray(a) => {
            let d = np_dtype(py, a.t.meta.dtype)?;
            if a.scalar {
                Some(d.getattr("type")?.call1((1,))?)
            } else {
                let shape = PyTuple::new(py, vec![1i64; a.ndim()])?;
                Some(numpy(py)?.getattr("ones")?.call1((shape, d))?)
            }
        }
        Var::Py(o, _) => {
            let o = o.bind(py);
            if is_live_ndarray(py, o) || crate::output::is_tensor(py, o)? {
                None
            } else {
                Some(o.clone())
            }
        }
        Var::Tuple(items) => {
            let mut out = Vec::new();
            for i in items.iter() {
                let Some(p) = probe(py, i)? else {
                    return Ok(None);
                };
                out.push(p);
            }
            Some(PyTuple::new(py, out)?.into_any())
        }
        Var::List(items) => {
            let mut out = Vec::new();
            for i in items.borrow().iter() {
                let Some(p) = probe(py, i)? else {
                    return Ok(None);
                };
                out.push(p);
            }
            Some(PyList::new(py, out)?.into_any())
        }
        _ => None,
    })
}

/// What the probe call says about eager's result.
struct Probed {
    dtype: DType,
    scalar: bool,
}

/// An argument read by position `pos` (after the array) or keyword `name`.
fn param<'a>(
    params: &[&str],
    args: &'a [Var],
    kwargs: &'a [(String, Var)],
    name: &str,
) -> Option<&'a Var> {
    if let Some((_, v)) = kwargs.iter().find(|(k, _)| k == name) {
        return Some(v);
    }
    let pos = params.iter().position(|p| *p == name)?;
    args.get(pos + 1)
}

fn is_none(py: Python<'_>, v: Option<&Var>) -> bool {
    match v {
        None => true,
        Some(v) => v.as_py(py).is_some_and(|o| o.is_none()),
    }
}

/// A constant Python value as a graph argument: numpy scalars as the Python number they hold.
fn const_arg(py: Python<'_>, o: &Bound<'_, PyAny>) -> Result<Arg, TraceError> {
    if is_np_generic(py, o) {
        return super::vars::py_to_arg(py, &o.call_method0(intern!(py, "item"))?);
    }
    super::vars::py_to_arg(py, o)
}

impl Frame<'_, '_> {
    /// `tensor.numpy()`: the same node, seen as an array (it shares the tensor's memory, so
    /// writes through it are writes to the tensor).
    pub(super) fn tensor_numpy(
        &mut self,
        t: TensorValue,
        args: &[Var],
        kwargs: &[(String, Var)],
    ) -> Result<Var, TraceError> {
        let py = self.tx.py;
        let force = match (args.first(), kwargs.iter().find(|(k, _)| k == "force")) {
            (Some(v), _) | (None, Some((_, v))) => v.as_py(py).and_then(|o| o.is_truthy().ok()),
            (None, None) => Some(false),
        };
        let Some(force) = force else {
            return Err(TraceError::unsupported(
                "Tensor.numpy(force=<not a constant>)",
            ));
        };
        if t.meta.device.kind != "cpu" && !force {
            return Err(TraceError::unsupported(
                "Tensor.numpy() of a tensor not on the CPU (eager raises)",
            ));
        }
        if t.meta.requires_grad && !force {
            return Err(TraceError::unsupported(
                "Tensor.numpy() of a tensor that requires grad (eager raises)",
            ));
        }
        np_dtype(py, t.meta.dtype)?;
        let t = if force && (t.meta.requires_grad || t.meta.device.kind != "cpu") {
            let d = self.method_node("detach", &t, vec![], vec![])?;
            self.method_node("cpu", &d, vec![], vec![])?
        } else {
            t
        };
        Ok(Var::Ndarray(NdarrayVar {
            t,
            scalar: false,
            pynum: false,
        }))
    }

    fn method_node(
        &mut self,
        name: &str,
        t: &TensorValue,
        args: Vec<Arg>,
        kwargs: Vec<(String, Arg)>,
    ) -> Result<TensorValue, TraceError> {
        let mut all = vec![Arg::Node(t.node)];
        all.extend(args);
        match self.graph_call(name, Target::Method(name.to_string()), None, all, kwargs)? {
            Var::Tensor(t) => Ok(t),
            _ => Err(TraceError::unsupported(format!(
                "Tensor.{name} gave no tensor"
            ))),
        }
    }

    fn torch_node(
        &mut self,
        name: &str,
        args: Vec<Arg>,
        kwargs: Vec<(String, Arg)>,
    ) -> Result<TensorValue, TraceError> {
        let py = self.tx.py;
        let f = py.import("torch")?.getattr(name)?;
        match self.graph_call(
            name,
            Target::Function(format!("torch.{name}")),
            Some(&f),
            args,
            kwargs,
        )? {
            Var::Tensor(t) => Ok(t),
            _ => Err(TraceError::unsupported(format!(
                "torch.{name} gave no tensor"
            ))),
        }
    }

    /// `t` as dtype `d` (the node itself where it already is).
    fn cast(&mut self, t: &TensorValue, d: DType) -> Result<TensorValue, TraceError> {
        if t.meta.dtype == d {
            return Ok(t.clone());
        }
        self.method_node("to", t, vec![Arg::DType(d)], vec![])
    }

    /// An operand of an elementwise op as a tensor of dtype `d`: an array cast, a constant
    /// number made a 0-d tensor (torch's binary ops want tensors where numpy takes scalars).
    fn operand(&mut self, v: &Var, d: DType) -> Result<TensorValue, TraceError> {
        let py = self.tx.py;
        match v {
            Var::Ndarray(a) => self.cast(&a.t, d),
            Var::Py(o, _) => {
                let value = const_arg(py, o.bind(py))?;
                if !matches!(value, Arg::Int(_) | Arg::Float(_) | Arg::Bool(_)) {
                    return Err(TraceError::unsupported(format!(
                        "a {} operand of a numpy function",
                        v.type_name(py)
                    )));
                }
                self.torch_node(
                    "full",
                    vec![Arg::Tuple(vec![]), value],
                    vec![("dtype".into(), Arg::DType(d))],
                )
            }
            other => Err(TraceError::unsupported(format!(
                "a {} operand of a numpy function",
                other.type_name(py)
            ))),
        }
    }

    /// Runs numpy's `f` on the probes of the arguments: eager's result dtype and kind.
    fn probe_call(
        &mut self,
        f: &Bound<'_, PyAny>,
        what: &str,
        args: &[Var],
        kwargs: &[(String, Var)],
    ) -> Result<Probed, TraceError> {
        let py = self.tx.py;
        let refuse = || {
            TraceError::unsupported(format!(
                "numpy.{what} on these arguments (not known at trace time)"
            ))
        };
        let mut pargs = Vec::new();
        for a in args {
            pargs.push(probe(py, a)?.ok_or_else(refuse)?);
        }
        let pkw = pyo3::types::PyDict::new(py);
        for (k, v) in kwargs {
            pkw.set_item(k, probe(py, v)?.ok_or_else(refuse)?)?;
        }
        // Probes of ones may warn where the program's values would not (a variance with
        // `ddof` of a length-1 axis): numpy's and Python's warnings are off for the probe.
        let quiet = py.import("torchferro._numpy_probe")?.getattr("probe")?;
        let mut all = vec![f.clone()];
        all.extend(pargs);
        let r = quiet
            .call(PyTuple::new(py, all)?, Some(&pkw))
            .map_err(|e| {
                TraceError::unsupported(format!(
                    "numpy.{what} raises on these argument types ({e}); eager raises"
                ))
            })?;
        let np = numpy(py)?;
        let scalar = r.is_instance(&np.getattr("generic")?)?;
        if !scalar && !r.is_instance(&np.getattr("ndarray")?)? {
            return Err(TraceError::unsupported(format!(
                "numpy.{what} returning a {}",
                r.get_type().name()?
            )));
        }
        Ok(Probed {
            dtype: dtype_from_np(py, &r.getattr("dtype")?)?,
            scalar,
        })
    }

    fn ndarray(&self, t: TensorValue, scalar: bool) -> Var {
        Var::Ndarray(NdarrayVar {
            t,
            scalar,
            pynum: false,
        })
    }

    /// `float(s)` / `int(s)` / `s.item()` of a numpy scalar or 0-d array computed in the graph:
    /// a Python number (`NdarrayVar::pynum`) of the type eager's has. `kind` is the builtin
    /// (`None`: `.item()`, by the dtype).
    fn python_number(&mut self, a: &NdarrayVar, kind: Option<&str>) -> Result<Var, TraceError> {
        let d = a.t.meta.dtype;
        let sizes = a.t.meta.known_sizes().unwrap_or_default();
        if !a.scalar && sizes.iter().product::<i64>() != 1 || d.is_complex() {
            return Err(TraceError::unsupported(format!(
                "{}() of a numpy array that is not one number",
                kind.unwrap_or("item")
            )));
        }
        let target = match kind {
            Some("float") => DType::Float64,
            // int() of a float truncates, and raises on nan or inf: data-dependent.
            Some("int") if !d.is_floating_point() => DType::Int64,
            None if d.is_floating_point() => DType::Float64,
            None if d == DType::Bool => DType::Bool,
            None => DType::Int64,
            Some(k) => {
                return Err(TraceError::unsupported(format!(
                    "data-dependent: builtins.{k}() reads the values of a numpy {} computed in the graph",
                    if a.scalar { "scalar" } else { "array" }
                )))
            }
        };
        let t = if sizes.is_empty() {
            a.t.clone()
        } else {
            self.torch_node(
                "reshape",
                vec![Arg::Node(a.t.node), Arg::Tuple(vec![])],
                vec![],
            )?
        };
        let t = self.cast(&t, target)?;
        Ok(Var::Ndarray(NdarrayVar {
            t,
            scalar: true,
            pynum: true,
        }))
    }
}

impl super::Tracer<'_> {
    /// A numpy array read from the frame (an argument, a global): a graph input fetched as
    /// `torch.from_numpy(array)` on every call (`Step::FromNumpy`), guarded as that tensor
    /// (dtype, sizes, strides) after a check that the value is an exact `ndarray`. Writes
    /// through it reach the caller's array, which shares the memory. `None`: not an ndarray.
    pub(crate) fn wrap_ndarray(
        &mut self,
        value: &Bound<'_, PyAny>,
        source: &crate::source::Source,
    ) -> Result<Option<Var>, TraceError> {
        let py = self.py;
        // Cheap first: most values are not numpy's (and numpy must not be imported for them).
        if value
            .get_type()
            .module()
            .map(|m| m.to_str().ok() != Some("numpy"))
            .unwrap_or(true)
        {
            return Ok(None);
        }
        let Some(np) = py.import("numpy").ok() else {
            return Ok(None);
        };
        if !value.get_type().is(np.getattr("ndarray")?) {
            return Ok(None);
        }
        let dtype: String = value.getattr("dtype")?.getattr("name")?.extract()?;
        if DType::from_torch_name(&dtype).is_none() {
            return Err(TraceError::unsupported(format!(
                "a numpy array input of dtype {dtype}"
            )));
        }
        let t = py
            .import("torch")?
            .getattr("from_numpy")?
            .call1((value,))
            .map_err(|e| {
                TraceError::unsupported(format!("a numpy array input torch cannot view ({e})"))
            })?;
        self.guards.add(
            py,
            source,
            crate::guards::Check::Type(value.get_type().unbind()),
        );
        let src = source.from_numpy();
        self.guards.add(
            py,
            &src,
            crate::guards::Check::Tensor(crate::guards::tensor_check(&t)?),
        );
        let t = self.output.input(py, &src, &t)?;
        Ok(Some(Var::Ndarray(NdarrayVar {
            t,
            scalar: false,
            pynum: false,
        })))
    }
}

/// The callable that turns a graph output back into what eager returned: `Tensor.numpy` for an
/// array; for a numpy scalar, `[()]` of that array.
pub(crate) fn numpy_templates(py: Python<'_>) -> PyResult<(Py<PyAny>, Py<PyAny>, Py<PyAny>)> {
    Ok((
        py.import("torch")?
            .getattr("Tensor")?
            .getattr("numpy")?
            .unbind(),
        py.import("operator")?.getattr("getitem")?.unbind(),
        py.import("torch")?
            .getattr("Tensor")?
            .getattr("item")?
            .unbind(),
    ))
}
