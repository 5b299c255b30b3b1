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

use super::vars::Var;
use super::Frame;

/// An ndarray (or numpy scalar) computed in the graph: the tensor node holding its values.
#[derive(Clone)]
pub struct NdarrayVar {
    pub t: TensorValue,
    /// A numpy scalar (`np.float32(...)`), not a 0-d array: what `a.sum()` and `a[0, 0]` give.
    pub scalar: bool,
}

impl NdarrayVar {
    fn ndim(&self) -> usize {
        self.t.meta.ndim()
    }
}

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

/// A numpy integer, float or bool scalar (not complex, not a string).
pub(crate) fn is_np_number(py: Python<'_>, o: &Bound<'_, PyAny>) -> bool {
    let Ok(module) = o.get_type().module() else {
        return false;
    };
    if module.to_str().ok() != Some("numpy") {
        return false;
    }
    numpy(py)
        .and_then(|np| {
            let mut any = false;
            for kind in ["integer", "floating", "bool_"] {
                any |= o.is_instance(&np.getattr(kind)?)?;
            }
            Ok(any)
        })
        .unwrap_or(false)
}

fn is_np_generic(py: Python<'_>, o: &Bound<'_, PyAny>) -> bool {
    numpy(py)
        .and_then(|np| Ok(o.is_instance(&np.getattr("generic")?)?))
        .unwrap_or(false)
}

/// Whether any argument (or item of a tuple/list argument) is an array computed in the graph.
pub(super) fn has_ndarray(args: &[Var], kwargs: &[(String, Var)]) -> bool {
    fn any(v: &Var) -> bool {
        match v {
            Var::Ndarray(_) => true,
            Var::Tuple(items) => items.iter().any(any),
            Var::List(items) => items.borrow().iter().any(any),
            _ => false,
        }
    }
    args.iter().chain(kwargs.iter().map(|(_, v)| v)).any(any)
}

/// The probe standing for `v` in a trace-time numpy call (see the module doc), or `None` when
/// `v` is something numpy would read values from that the trace does not know.
fn probe<'py>(py: Python<'py>, v: &Var) -> Result<Option<Bound<'py, PyAny>>, TraceError> {
    Ok(match v {
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
            for i in items {
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
        Ok(Var::Ndarray(NdarrayVar { t, scalar: false }))
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
        let r = quiet.call(PyTuple::new(py, all)?, Some(&pkw)).map_err(|e| {
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
        Var::Ndarray(NdarrayVar { t, scalar })
    }

    /// A call of `f` (of module `module`, named `name`) that numpy inside the frame owns: numpy
    /// functions, builtins over arrays, and torch's ways back to tensors. `None`: not ours.
    pub(super) fn numpy_call(
        &mut self,
        f: &Bound<'_, PyAny>,
        module: &str,
        name: &str,
        args: &[Var],
        kwargs: &[(String, Var)],
    ) -> Result<Option<Var>, TraceError> {
        let py = self.tx.py;
        let arrays = has_ndarray(args, kwargs);
        if module == "builtins" && arrays {
            return self.numpy_builtin(name, args).map(Some);
        }
        if arrays && (module == "torch" || module.starts_with("torch.")) {
            return self.numpy_to_torch(name, args, kwargs).map(Some);
        }
        let is_numpy = module == "numpy" || module.starts_with("numpy.");
        if !is_numpy {
            return Ok(None);
        }
        if module.starts_with("numpy.random") {
            return Err(TraceError::unsupported(format!(
                "numpy.random.{name} (numpy's random state is not traced)"
            )));
        }
        let np = numpy(py)?;
        let is_ufunc = f.is_instance(&np.getattr("ufunc")?)?;
        let is_scalar_type = f.is_instance_of::<pyo3::types::PyType>()
            && f.cast::<pyo3::types::PyType>()
                .map(|t| {
                    t.is_subclass(&np.getattr("generic").unwrap())
                        .unwrap_or(false)
                })
                .unwrap_or(false);
        if !arrays {
            if args
                .iter()
                .chain(kwargs.iter().map(|(_, v)| v))
                .any(|a| !matches!(probe(py, a), Ok(Some(_))))
            {
                return Ok(None);
            }
            if is_ufunc || is_scalar_type || PURE_CONSTANT.contains(&name) {
                return self.fold(f, args, kwargs);
            }
            if FACTORIES.contains(&name) {
                return self.numpy_factory(f, name, args, kwargs).map(Some);
            }
            return Ok(None);
        }
        if is_scalar_type {
            // `np.float32(a.sum())`: the value converted, a numpy scalar.
            let [Var::Ndarray(a)] = args else {
                return Err(TraceError::unsupported(format!(
                    "numpy.{name}(...) of an array"
                )));
            };
            let p = self.probe_call(f, name, args, kwargs)?;
            let t = self.cast(&a.t, p.dtype)?;
            return Ok(Some(self.ndarray(t, p.scalar)));
        }
        self.numpy_function(f, name, args, kwargs).map(Some)
    }

    /// `np.<name>(args)` with an array among the arguments.
    fn numpy_function(
        &mut self,
        f: &Bound<'_, PyAny>,
        name: &str,
        args: &[Var],
        kwargs: &[(String, Var)],
    ) -> Result<Var, TraceError> {
        let py = self.tx.py;
        let first = match args.first() {
            Some(Var::Ndarray(a)) => Some(a.clone()),
            _ => None,
        };
        // Shape functions: the dtype is the array's, no probe needed.
        if let Some(a) = &first {
            match name {
                "reshape" => return self.ndarray_reshape(a, &args[1..], kwargs),
                "transpose" => {
                    let axes = match (args.get(1), kwargs.iter().find(|(k, _)| k == "axes")) {
                        (Some(v), _) | (None, Some((_, v))) => vec![v.clone()],
                        _ => vec![],
                    };
                    return self.ndarray_transpose(a, &axes);
                }
                "squeeze" | "expand_dims" | "swapaxes" | "moveaxis" | "ravel" | "copy"
                | "asarray" | "array" | "ascontiguousarray" => {
                    return self.ndarray_method(
                        a.clone(),
                        name,
                        args[1..].to_vec(),
                        kwargs.to_vec(),
                    )
                }
                "shape" if args.len() == 1 => return self.ndarray_attr(a.clone(), "shape"),
                "ndim" if args.len() == 1 => return self.ndarray_attr(a.clone(), "ndim"),
                "size" if args.len() == 1 => return self.ndarray_attr(a.clone(), "size"),
                _ => {}
            }
        }
        if let Some(r) = REDUCTIONS.iter().find(|r| r.np == name) {
            let Some(a) = &first else {
                return Err(TraceError::unsupported(format!(
                    "numpy.{name} of a value that is not an array computed in the graph"
                )));
            };
            return self.reduction(f, r, a, args, kwargs);
        }
        if let Some((_, torch_name)) = ELEMENTWISE.iter().find(|(n, _)| *n == name) {
            return self.elementwise(f, name, torch_name, args, kwargs);
        }
        match name {
            "concatenate" | "stack" | "hstack" | "vstack" => self.join(f, name, args, kwargs),
            "dot" => self.elementwise(f, name, "matmul", args, kwargs),
            "zeros_like" | "ones_like" | "full_like" => {
                let p = self.probe_call(f, name, args, kwargs)?;
                let Some(a) = &first else {
                    return Err(TraceError::unsupported(format!(
                        "numpy.{name} of a non-array"
                    )));
                };
                let mut gargs = vec![Arg::Node(a.t.node)];
                if name == "full_like" {
                    let v = param(&["fill_value"], args, kwargs, "fill_value")
                        .and_then(|v| v.as_py(py))
                        .ok_or_else(|| {
                            TraceError::unsupported("numpy.full_like of a computed value")
                        })?;
                    gargs.push(const_arg(py, &v)?);
                }
                let t =
                    self.torch_node(name, gargs, vec![("dtype".into(), Arg::DType(p.dtype))])?;
                Ok(self.ndarray(t, false))
            }
            _ => Err(TraceError::unsupported(format!(
                "numpy.{name} on an array computed in the graph (not modelled)"
            ))),
        }
    }

    fn elementwise(
        &mut self,
        f: &Bound<'_, PyAny>,
        name: &str,
        torch_name: &str,
        args: &[Var],
        kwargs: &[(String, Var)],
    ) -> Result<Var, TraceError> {
        let py = self.tx.py;
        if kwargs.iter().any(|(k, _)| k != "dtype") {
            return Err(TraceError::unsupported(format!(
                "numpy.{name} with keyword arguments"
            )));
        }
        let p = self.probe_call(f, name, args, kwargs)?;
        let result = p.dtype;
        let compute = if result == DType::Bool && name != "where" {
            // Comparisons and predicates: the inputs' common dtype.
            let np = numpy(py)?;
            let mut probes = Vec::new();
            for a in args {
                probes.push(probe(py, a)?.ok_or_else(|| TraceError::unsupported("a probe"))?);
            }
            let common = np
                .getattr("result_type")?
                .call1(PyTuple::new(py, probes)?)?;
            dtype_from_np(py, &common)?
        } else {
            result
        };
        if matches!(name, "floor_divide" | "remainder" | "mod") && !compute.is_floating_point() {
            return Err(TraceError::unsupported(format!(
                "numpy.{name} of integers (numpy gives 0 where torch raises on a zero divisor)"
            )));
        }
        if name == "power" && !compute.is_floating_point() {
            let ok = args
                .get(1)
                .and_then(|v| v.as_py(py))
                .and_then(|o| o.extract::<i64>().ok());
            if !ok.is_some_and(|e| e >= 0) {
                return Err(TraceError::unsupported(
                    "numpy.power of integers with an exponent that is not a constant >= 0",
                ));
            }
        }
        if matches!(name, "matmul" | "dot")
            && args
                .iter()
                .any(|a| matches!(a, Var::Ndarray(x) if x.ndim() == 0 || (name == "dot" && x.ndim() > 2)))
        {
            return Err(TraceError::unsupported(format!(
                "numpy.{name} of 0-d or (dot) more than 2-d arrays"
            )));
        }
        let t = match name {
            "where" => {
                let [c, x, y] = args else {
                    return Err(TraceError::unsupported(
                        "numpy.where with one argument (nonzero: a data-dependent shape)",
                    ));
                };
                let c = self.operand(c, DType::Bool)?;
                let x = self.operand(x, result)?;
                let y = self.operand(y, result)?;
                self.torch_node(
                    "where",
                    vec![Arg::Node(c.node), Arg::Node(x.node), Arg::Node(y.node)],
                    vec![],
                )?
            }
            "clip" => {
                let a = self.operand(&args[0], result)?;
                let mut bounds = Vec::new();
                for v in &args[1..] {
                    if is_none(py, Some(v)) {
                        bounds.push(Arg::None);
                    } else {
                        bounds.push(Arg::Node(self.operand(v, result)?.node));
                    }
                }
                if bounds.len() != 2 {
                    return Err(TraceError::unsupported("numpy.clip without both bounds"));
                }
                let mut all = vec![Arg::Node(a.node)];
                all.extend(bounds);
                self.torch_node("clamp", all, vec![])?
            }
            _ => {
                let mut gargs = Vec::new();
                for a in args {
                    let x = self.operand(a, compute)?;
                    gargs.push(Arg::Node(x.node));
                }
                self.torch_node(torch_name, gargs, vec![])?
            }
        };
        let t = self.cast(&t, result)?;
        Ok(self.ndarray(t, p.scalar))
    }

    fn reduction(
        &mut self,
        f: &Bound<'_, PyAny>,
        r: &Reduction,
        a: &NdarrayVar,
        args: &[Var],
        kwargs: &[(String, Var)],
    ) -> Result<Var, TraceError> {
        let py = self.tx.py;
        for (k, _) in kwargs {
            if !r.params.contains(&k.as_str()) {
                return Err(TraceError::unsupported(format!(
                    "numpy.{}(..., {k}=)",
                    r.np
                )));
            }
        }
        if args.len() > r.params.len() + 1 || !is_none(py, param(r.params, args, kwargs, "out")) {
            return Err(TraceError::unsupported(format!(
                "numpy.{}(..., out=)",
                r.np
            )));
        }
        let p = self.probe_call(f, r.np, args, kwargs)?;
        let axis = param(r.params, args, kwargs, "axis");
        let axis: Option<Vec<i64>> = if is_none(py, axis) {
            None
        } else {
            let o = axis.and_then(|v| v.as_py(py)).ok_or_else(|| {
                TraceError::unsupported(format!("numpy.{} with a computed axis", r.np))
            })?;
            Some(match o.extract::<i64>() {
                Ok(i) => vec![i],
                Err(_) => o.extract::<Vec<i64>>()?,
            })
        };
        let keepdims = param(r.params, args, kwargs, "keepdims")
            .and_then(|v| v.as_py(py))
            .map(|o| o.is_truthy())
            .transpose()?
            .unwrap_or(false);
        let ddof = param(r.params, args, kwargs, "ddof")
            .and_then(|v| v.as_py(py))
            .map(|o| o.extract::<f64>())
            .transpose()?
            .unwrap_or(0.0);
        let input = match r.torch {
            "amax" | "amin" | "argmax" | "argmin" => a.t.clone(),
            "all" | "any" => self.cast(&a.t, DType::Bool)?,
            _ => self.cast(&a.t, p.dtype)?,
        };
        let single = matches!(r.torch, "prod" | "argmax" | "argmin" | "cumsum" | "cumprod");
        let dim: Option<Arg> = match &axis {
            None if matches!(r.torch, "cumsum" | "cumprod") => None,
            None if keepdims && !single => {
                Some(Arg::Tuple((0..a.ndim() as i64).map(Arg::Int).collect()))
            }
            None => None,
            Some(ax) if ax.len() == 1 => Some(Arg::Int(ax[0])),
            Some(_) if single => {
                return Err(TraceError::unsupported(format!(
                    "numpy.{} over several axes",
                    r.np
                )))
            }
            Some(ax) => Some(Arg::Tuple(ax.iter().map(|&d| Arg::Int(d)).collect())),
        };
        let t = if matches!(r.torch, "cumsum" | "cumprod") {
            let (input, dim) = match dim {
                Some(d) => (input, d),
                // numpy flattens first.
                None => (
                    self.torch_node(
                        "reshape",
                        vec![Arg::Node(input.node), Arg::Tuple(vec![Arg::Int(-1)])],
                        vec![],
                    )?,
                    Arg::Int(0),
                ),
            };
            self.torch_node(r.torch, vec![Arg::Node(input.node), dim], vec![])?
        } else {
            let mut kw: Vec<(String, Arg)> = Vec::new();
            if let Some(d) = dim.clone() {
                kw.push(("dim".into(), d));
            }
            if matches!(r.torch, "std" | "var") {
                if ddof.fract() != 0.0 {
                    return Err(TraceError::unsupported(
                        "numpy std/var with a fractional ddof",
                    ));
                }
                kw.push(("correction".into(), Arg::Int(ddof as i64)));
            }
            if dim.is_some() && keepdims {
                kw.push(("keepdim".into(), Arg::Bool(true)));
            }
            if single && dim.is_none() && keepdims {
                // `np.argmax(a, keepdims=True)`: every dimension kept as 1.
                let t = self.torch_node(r.torch, vec![Arg::Node(input.node)], vec![])?;
                let shape = Arg::Tuple(vec![Arg::Int(1); a.ndim()]);
                self.torch_node("reshape", vec![Arg::Node(t.node), shape], vec![])?
            } else {
                self.torch_node(r.torch, vec![Arg::Node(input.node)], kw)?
            }
        };
        let t = self.cast(&t, p.dtype)?;
        Ok(self.ndarray(t, p.scalar))
    }

    /// `np.concatenate` / `np.stack` / `np.hstack` / `np.vstack` of a sequence of arrays.
    fn join(
        &mut self,
        f: &Bound<'_, PyAny>,
        name: &str,
        args: &[Var],
        kwargs: &[(String, Var)],
    ) -> Result<Var, TraceError> {
        let py = self.tx.py;
        if kwargs.iter().any(|(k, _)| k != "axis") {
            return Err(TraceError::unsupported(format!(
                "numpy.{name} with these keywords"
            )));
        }
        let items = args
            .first()
            .and_then(|s| match s {
                Var::Tuple(i) => Some(i.clone()),
                Var::List(l) => Some(l.borrow().clone()),
                _ => None,
            })
            .ok_or_else(|| TraceError::unsupported(format!("numpy.{name} of a non-sequence")))?;
        let p = self.probe_call(f, name, args, kwargs)?;
        let axis_var = param(&["axis"], args, kwargs, "axis");
        let axis: Option<i64> = if is_none(py, axis_var) {
            if axis_var.is_some() && name == "concatenate" {
                None
            } else {
                Some(0)
            }
        } else {
            Some(
                axis_var
                    .and_then(|v| v.as_py(py))
                    .ok_or_else(|| TraceError::unsupported("a computed axis"))?
                    .extract()?,
            )
        };
        let mut parts = Vec::new();
        for it in &items {
            let Var::Ndarray(x) = it else {
                return Err(TraceError::unsupported(format!(
                    "numpy.{name} of a {}",
                    it.type_name(py)
                )));
            };
            let mut t = self.cast(&x.t, p.dtype)?;
            if axis.is_none() {
                t = self.torch_node(
                    "reshape",
                    vec![Arg::Node(t.node), Arg::Tuple(vec![Arg::Int(-1)])],
                    vec![],
                )?;
            }
            parts.push(Arg::Node(t.node));
        }
        let (torch_name, dim) = match name {
            "concatenate" => ("cat", axis.unwrap_or(0)),
            "stack" => ("stack", axis.unwrap_or(0)),
            "hstack" => ("hstack", 0),
            _ => ("vstack", 0),
        };
        let mut gargs = vec![Arg::List(parts)];
        if matches!(torch_name, "cat" | "stack") {
            gargs.push(Arg::Int(dim));
        }
        let t = self.torch_node(torch_name, gargs, vec![])?;
        Ok(self.ndarray(t, false))
    }

    fn numpy_factory(
        &mut self,
        f: &Bound<'_, PyAny>,
        name: &str,
        args: &[Var],
        kwargs: &[(String, Var)],
    ) -> Result<Var, TraceError> {
        let py = self.tx.py;
        let vals: Option<Vec<Bound<'_, PyAny>>> = args.iter().map(|a| a.as_py(py)).collect();
        let vals =
            vals.ok_or_else(|| TraceError::unsupported(format!("numpy.{name} arguments")))?;
        let kw = pyo3::types::PyDict::new(py);
        for (k, v) in kwargs {
            let v = v
                .as_py(py)
                .ok_or_else(|| TraceError::unsupported(format!("numpy.{name} arguments")))?;
            kw.set_item(k, v)?;
        }
        // Run once for eager's dtype and shape; the graph makes a fresh one on every call.
        let r = f
            .call(PyTuple::new(py, &vals)?, Some(&kw))
            .map_err(|e| TraceError::unsupported(format!("numpy.{name} raises ({e})")))?;
        let dtype = dtype_from_np(py, &r.getattr("dtype")?)?;
        let shape: Vec<i64> = r.getattr("shape")?.extract()?;
        let shape_arg = Arg::Tuple(shape.iter().map(|&d| Arg::Int(d)).collect());
        let dkw = vec![("dtype".to_string(), Arg::DType(dtype))];
        let t = match name {
            "zeros" | "ones" => self.torch_node(name, vec![shape_arg], dkw)?,
            "full" => {
                let fill = param(
                    &["shape", "fill_value"],
                    &[Var::none(py)]
                        .iter()
                        .chain(args)
                        .cloned()
                        .collect::<Vec<_>>(),
                    kwargs,
                    "fill_value",
                )
                .and_then(|v| v.as_py(py))
                .ok_or_else(|| TraceError::unsupported("numpy.full fill"))?;
                let fill = const_arg(py, &fill)?;
                self.torch_node("full", vec![shape_arg, fill], dkw)?
            }
            "arange" => {
                if kwargs.iter().any(|(k, _)| k != "dtype") {
                    return Err(TraceError::unsupported("numpy.arange with these keywords"));
                }
                let mut gargs = Vec::new();
                for v in &vals {
                    gargs.push(const_arg(py, v)?);
                }
                self.torch_node("arange", gargs, dkw)?
            }
            "eye" => {
                let k = kwargs
                    .iter()
                    .find(|(k, _)| k == "k")
                    .and_then(|(_, v)| v.as_py(py));
                if vals.len() > 2 || k.is_some_and(|k| k.extract::<i64>().ok() != Some(0)) {
                    return Err(TraceError::unsupported("numpy.eye with a diagonal offset"));
                }
                self.torch_node("eye", shape.iter().map(|&d| Arg::Int(d)).collect(), dkw)?
            }
            _ => {
                // linspace(start, stop, num): numpy's endpoint default only.
                if kwargs.iter().any(|(k, _)| k != "dtype" && k != "num") || vals.len() > 3 {
                    return Err(TraceError::unsupported(
                        "numpy.linspace with these arguments",
                    ));
                }
                let start = const_arg(py, &vals[0])?;
                let stop = const_arg(py, &vals[1])?;
                self.torch_node("linspace", vec![start, stop, Arg::Int(shape[0])], dkw)?
            }
        };
        Ok(self.ndarray(t, false))
    }

    /// `torch.from_numpy(a)`, `torch.as_tensor(a)`, `torch.tensor(a)` of an array computed in
    /// the graph; any other torch function given an array breaks the graph.
    fn numpy_to_torch(
        &mut self,
        name: &str,
        args: &[Var],
        kwargs: &[(String, Var)],
    ) -> Result<Var, TraceError> {
        let py = self.tx.py;
        let (Some(Var::Ndarray(a)), true) = (args.first(), args.len() == 1) else {
            return Err(TraceError::unsupported(format!(
                "torch.{name} with a numpy array among its arguments"
            )));
        };
        let mut dtype = None;
        for (k, v) in kwargs {
            match k.as_str() {
                "dtype" if !is_none(py, Some(v)) => {
                    let d = v
                        .as_py(py)
                        .ok_or_else(|| TraceError::unsupported("a computed dtype"))?;
                    dtype = Some(crate::output::dtype_of(py, &d)?);
                }
                "dtype" => {}
                _ => {
                    return Err(TraceError::unsupported(format!(
                        "torch.{name}(array, {k}=...)"
                    )))
                }
            }
        }
        match name {
            "from_numpy" if a.scalar => Err(TraceError::unsupported(
                "torch.from_numpy of a numpy scalar (eager raises TypeError)",
            )),
            // Shares the array's memory: a new tensor object that is no view of another.
            "from_numpy" if kwargs.is_empty() => Ok(Var::Tensor(self.method_node(
                "detach",
                &a.t,
                vec![],
                vec![],
            )?)),
            "as_tensor" | "asarray" => {
                let t = match dtype {
                    Some(d) if d != a.t.meta.dtype => self.cast(&a.t, d)?,
                    _ if a.scalar => self.method_node("clone", &a.t, vec![], vec![])?,
                    _ => self.method_node("detach", &a.t, vec![], vec![])?,
                };
                Ok(Var::Tensor(t))
            }
            "tensor" => {
                let t = match dtype {
                    Some(d) if d != a.t.meta.dtype => self.cast(&a.t, d)?,
                    _ => self.method_node("clone", &a.t, vec![], vec![])?,
                };
                Ok(Var::Tensor(t))
            }
            _ => Err(TraceError::unsupported(format!(
                "torch.{name} with a numpy array among its arguments"
            ))),
        }
    }

    /// Builtins given an array computed in the graph.
    fn numpy_builtin(&mut self, name: &str, args: &[Var]) -> Result<Var, TraceError> {
        let py = self.tx.py;
        let Some(Var::Ndarray(a)) = args.first() else {
            return Err(TraceError::unsupported(format!(
                "builtins.{name} over numpy arrays computed in the graph"
            )));
        };
        match name {
            "len" if !a.scalar && a.ndim() > 0 => {
                let s = a
                    .t
                    .meta
                    .known_sizes()
                    .ok_or_else(|| TraceError::unsupported("symbolic shapes"))?;
                Ok(Var::py_const(py, s[0]))
            }
            "abs" => self.ndarray_operator("abs", args.to_vec()),
            "isinstance" | "type" => {
                let p = probe(py, &args[0])?.ok_or_else(|| TraceError::unsupported("a probe"))?;
                if name == "type" {
                    return Ok(Var::Py(p.get_type().into_any().unbind(), None));
                }
                let cls = args
                    .get(1)
                    .and_then(|c| c.as_py(py))
                    .ok_or_else(|| TraceError::unsupported("isinstance of a computed class"))?;
                Ok(Var::py_const(py, p.is_instance(&cls)?))
            }
            _ => Err(TraceError::unsupported(format!(
                "data-dependent: builtins.{name}() reads the values of a numpy {} computed in the graph",
                if a.scalar { "scalar" } else { "array" }
            ))),
        }
    }

    /// `a.<name>` read as a value.
    pub(super) fn ndarray_attr(&mut self, a: NdarrayVar, name: &str) -> Result<Var, TraceError> {
        let py = self.tx.py;
        let sizes = || {
            a.t.meta
                .known_sizes()
                .ok_or_else(|| TraceError::unsupported("symbolic shapes"))
        };
        match name {
            "shape" => Ok(Var::Tuple(
                sizes()?.into_iter().map(|d| Var::py_const(py, d)).collect(),
            )),
            "ndim" => Ok(Var::py_const(py, a.ndim() as i64)),
            "size" => Ok(Var::py_const(py, sizes()?.iter().product::<i64>())),
            "dtype" => Ok(Var::Py(np_dtype(py, a.t.meta.dtype)?.unbind(), None)),
            "itemsize" => Ok(Var::py_const(py, a.t.meta.dtype.itemsize() as i64)),
            "nbytes" => Ok(Var::py_const(
                py,
                sizes()?.iter().product::<i64>() * a.t.meta.dtype.itemsize() as i64,
            )),
            "T" => self.ndarray_transpose(&a, &[]),
            _ => Ok(Var::Method {
                recv: Box::new(Var::Ndarray(a)),
                name: name.to_string(),
            }),
        }
    }

    fn ndarray_reshape(
        &mut self,
        a: &NdarrayVar,
        args: &[Var],
        kwargs: &[(String, Var)],
    ) -> Result<Var, TraceError> {
        let py = self.tx.py;
        if kwargs.iter().any(|(k, v)| {
            k != "order"
                || v.as_py(py)
                    .and_then(|o| o.extract::<String>().ok())
                    .as_deref()
                    != Some("C")
        }) {
            return Err(TraceError::unsupported(
                "ndarray.reshape with an order other than 'C'",
            ));
        }
        let shape: Vec<i64> = match args {
            [one] => {
                let o = one
                    .as_py(py)
                    .ok_or_else(|| TraceError::unsupported("a computed shape"))?;
                match o.extract::<i64>() {
                    Ok(i) => vec![i],
                    Err(_) => o.extract()?,
                }
            }
            many => many
                .iter()
                .map(|v| {
                    v.as_py(py)
                        .and_then(|o| o.extract::<i64>().ok())
                        .ok_or_else(|| TraceError::unsupported("a computed shape"))
                })
                .collect::<Result<_, _>>()?,
        };
        let shape = Arg::Tuple(shape.into_iter().map(Arg::Int).collect());
        let t = self.torch_node("reshape", vec![Arg::Node(a.t.node), shape], vec![])?;
        Ok(self.ndarray(t, false))
    }

    fn ndarray_transpose(&mut self, a: &NdarrayVar, axes: &[Var]) -> Result<Var, TraceError> {
        let py = self.tx.py;
        let n = a.ndim() as i64;
        let perm: Vec<i64> = match axes {
            [] => (0..n).rev().collect(),
            [one] if one.as_py(py).is_some_and(|o| o.is_none()) => (0..n).rev().collect(),
            [one] if one.as_py(py).is_some_and(|o| o.extract::<i64>().is_err()) => {
                one.as_py(py).unwrap().extract()?
            }
            many => many
                .iter()
                .map(|v| {
                    v.as_py(py)
                        .and_then(|o| o.extract::<i64>().ok())
                        .ok_or_else(|| TraceError::unsupported("computed axes"))
                })
                .collect::<Result<_, _>>()?,
        };
        if a.scalar {
            return Ok(Var::Ndarray(a.clone()));
        }
        let perm = Arg::Tuple(perm.into_iter().map(Arg::Int).collect());
        let t = self.torch_node("permute", vec![Arg::Node(a.t.node), perm], vec![])?;
        Ok(self.ndarray(t, false))
    }

    /// `a.<name>(args)`.
    pub(super) fn ndarray_method(
        &mut self,
        a: NdarrayVar,
        name: &str,
        args: Vec<Var>,
        kwargs: Vec<(String, Var)>,
    ) -> Result<Var, TraceError> {
        let py = self.tx.py;
        let np = numpy(py)?;
        let int_at = |i: usize| -> Result<i64, TraceError> {
            args.get(i)
                .and_then(|v| v.as_py(py))
                .and_then(|o| o.extract::<i64>().ok())
                .ok_or_else(|| {
                    TraceError::unsupported(format!("ndarray.{name} with a computed axis"))
                })
        };
        match name {
            "reshape" => return self.ndarray_reshape(&a, &args, &kwargs),
            "transpose" => return self.ndarray_transpose(&a, &args),
            "astype" => {
                if kwargs.iter().any(|(k, _)| k != "copy") {
                    return Err(TraceError::unsupported(
                        "ndarray.astype with these keywords",
                    ));
                }
                let d = args
                    .first()
                    .and_then(|v| v.as_py(py))
                    .ok_or_else(|| TraceError::unsupported("ndarray.astype of a computed dtype"))?;
                let d = dtype_from_np(py, &d)?;
                let t = if d == a.t.meta.dtype {
                    self.method_node("clone", &a.t, vec![], vec![])?
                } else {
                    self.cast(&a.t, d)?
                };
                return Ok(self.ndarray(t, a.scalar));
            }
            "copy" if args.is_empty() => {
                let t = self.method_node("clone", &a.t, vec![], vec![])?;
                return Ok(self.ndarray(t, a.scalar));
            }
            "asarray" | "ascontiguousarray" | "array"
                if args.is_empty() && kwargs.is_empty() && !a.scalar =>
            {
                if name == "array" {
                    let t = self.method_node("clone", &a.t, vec![], vec![])?;
                    return Ok(self.ndarray(t, false));
                }
                if name == "ascontiguousarray" {
                    let t = self.method_node("contiguous", &a.t, vec![], vec![])?;
                    return Ok(self.ndarray(t, false));
                }
                return Ok(Var::Ndarray(a));
            }
            "ravel" | "flatten" if args.is_empty() && kwargs.is_empty() => {
                let t = self.torch_node(
                    "reshape",
                    vec![Arg::Node(a.t.node), Arg::Tuple(vec![Arg::Int(-1)])],
                    vec![],
                )?;
                let t = if name == "flatten" {
                    self.method_node("clone", &t, vec![], vec![])?
                } else {
                    t
                };
                return Ok(self.ndarray(t, false));
            }
            "squeeze" if kwargs.is_empty() => {
                let t = match args.first() {
                    None => self.method_node("squeeze", &a.t, vec![], vec![])?,
                    Some(_) => {
                        let d = int_at(0)?;
                        let sizes = a.t.meta.known_sizes().unwrap_or_default();
                        let n = sizes.len() as i64;
                        let i = if d < 0 { d + n } else { d };
                        if i < 0 || i >= n || sizes[i as usize] != 1 {
                            return Err(TraceError::unsupported(
                                "numpy squeeze of an axis that is not 1 (eager raises)",
                            ));
                        }
                        self.method_node("squeeze", &a.t, vec![Arg::Int(d)], vec![])?
                    }
                };
                return Ok(self.ndarray(t, false));
            }
            "expand_dims" if kwargs.is_empty() && args.len() == 1 => {
                let t = self.method_node("unsqueeze", &a.t, vec![Arg::Int(int_at(0)?)], vec![])?;
                return Ok(self.ndarray(t, false));
            }
            "swapaxes" if kwargs.is_empty() && args.len() == 2 => {
                let t = self.method_node(
                    "transpose",
                    &a.t,
                    vec![Arg::Int(int_at(0)?), Arg::Int(int_at(1)?)],
                    vec![],
                )?;
                return Ok(self.ndarray(t, false));
            }
            "moveaxis" if kwargs.is_empty() && args.len() == 2 => {
                let t = self.method_node(
                    "movedim",
                    &a.t,
                    vec![Arg::Int(int_at(0)?), Arg::Int(int_at(1)?)],
                    vec![],
                )?;
                return Ok(self.ndarray(t, false));
            }
            "item" | "tolist" | "tobytes" | "__float__" | "__int__" | "__bool__" | "__index__" => {
                return Err(TraceError::unsupported(format!(
                    "data-dependent: ndarray.{name}() reads the values of a numpy {} computed in the graph",
                    if a.scalar { "scalar" } else { "array" }
                )));
            }
            _ => {}
        }
        let np_name = match name {
            "max" => "amax",
            "min" => "amin",
            "dot" => "dot",
            n => n,
        };
        let known = REDUCTIONS.iter().any(|r| r.np == np_name)
            || matches!(np_name, "clip" | "dot" | "round");
        if !known {
            return Err(TraceError::unsupported(format!(
                "ndarray.{name} (not modelled)"
            )));
        }
        if np_name == "round" {
            return Err(TraceError::unsupported(
                "ndarray.round (numpy rounds decimals differently)",
            ));
        }
        let f = np.getattr(np_name)?;
        let mut all = vec![Var::Ndarray(a)];
        all.extend(args);
        self.numpy_function(&f, np_name, &all, &kwargs)
    }

    /// `operator.<name>(args)` where an array computed in the graph takes part. `getitem`
    /// indexes; the others are numpy's ufuncs (in place for `iadd` & co. on an array).
    pub(super) fn ndarray_operator(
        &mut self,
        name: &str,
        args: Vec<Var>,
    ) -> Result<Var, TraceError> {
        let py = self.tx.py;
        // A numpy scalar meeting a tensor: torch takes it as a Python number.
        if args.iter().any(|a| matches!(a, Var::Tensor(_))) {
            return self.scalar_with_tensor(name, args);
        }
        if name == "getitem" {
            return self.ndarray_getitem(&args[0], &args[1]);
        }
        let ufunc = operator_ufunc(name)
            .ok_or_else(|| TraceError::unsupported(format!("operator.{name} on a numpy array")))?;
        let f = numpy(py)?.getattr(ufunc)?;
        let inplace = name.starts_with('i')
            && name != "invert"
            && matches!(args.first(), Some(Var::Ndarray(a)) if !a.scalar);
        let r = self.numpy_function(&f, ufunc, &args, &[])?;
        if !inplace {
            return Ok(r);
        }
        // `a += b`: numpy computes `a + b` and writes it into `a`, refusing a cast across kinds.
        let (Var::Ndarray(a), Var::Ndarray(res)) = (&args[0], &r) else {
            return Ok(r);
        };
        let np = numpy(py)?;
        let from = np_dtype(py, res.t.meta.dtype)?;
        let to = np_dtype(py, a.t.meta.dtype)?;
        let ok = np
            .getattr("can_cast")?
            .call(
                (from, to),
                Some(&[("casting", "same_kind")].into_py_dict(py)?),
            )?
            .is_truthy()?;
        if !ok || res.t.meta.known_sizes() != a.t.meta.known_sizes() {
            return Err(TraceError::unsupported(format!(
                "operator.{name} on a numpy array whose result does not fit it (eager raises)"
            )));
        }
        let t = self.method_node("copy_", &a.t, vec![Arg::Node(res.t.node)], vec![])?;
        Ok(self.ndarray(t, false))
    }

    /// `tensor <op> numpy_scalar` (either side): eager's torch takes the numpy scalar as a
    /// Python number. Its value is only known in the graph, so it becomes a 0-d tensor of the
    /// dtype eager's result has, which gives eager's promotion whatever the tensor's rank.
    fn scalar_with_tensor(&mut self, name: &str, args: Vec<Var>) -> Result<Var, TraceError> {
        let py = self.tx.py;
        let refuse = || {
            TraceError::unsupported(format!(
                "operator.{name} between a tensor and a numpy array computed in the graph"
            ))
        };
        if args.len() != 2
            || args
                .iter()
                .any(|a| matches!(a, Var::Ndarray(x) if !x.scalar))
        {
            return Err(refuse());
        }
        let torch = py.import("torch")?;
        let mut probes = Vec::new();
        for a in &args {
            probes.push(match a {
                Var::Tensor(t) => {
                    let shape = PyTuple::new(py, vec![1i64; t.meta.ndim()])?;
                    let d = torch.getattr(t.meta.dtype.torch_name())?;
                    torch
                        .getattr("ones")?
                        .call((shape,), Some(&[("dtype", d)].into_py_dict(py)?))?
                }
                other => probe(py, other)?.ok_or_else(refuse)?,
            });
        }
        let op = py.import("operator")?.getattr(name)?;
        let r = op.call1(PyTuple::new(py, probes)?).map_err(|_| refuse())?;
        if !crate::output::is_tensor(py, &r)? {
            return Err(refuse());
        }
        let d = crate::output::dtype_of(py, &r.getattr("dtype")?)?;
        let mut gargs = Vec::new();
        for a in &args {
            gargs.push(match a {
                Var::Ndarray(x) => Arg::Node(self.cast(&x.t, d)?.node),
                other => other.to_arg(py)?,
            });
        }
        self.graph_call(
            name,
            Target::Function(format!("operator.{name}")),
            Some(&op),
            gargs,
            vec![],
        )
    }

    fn index_arg(&mut self, idx: &Var) -> Result<(Arg, bool), TraceError> {
        let py = self.tx.py;
        // (the argument, whether it selects a single element when every dim is indexed)
        match idx {
            Var::Ndarray(i) if !i.scalar && i.t.meta.dtype == DType::Bool => Err(
                TraceError::unsupported(
                    "data-dependent: a numpy boolean mask index (its result's shape depends on values)",
                ),
            ),
            Var::Ndarray(i) if !i.scalar && !i.t.meta.dtype.is_floating_point() => {
                Ok((Arg::Node(i.t.node), false))
            }
            Var::Tuple(items) => {
                let mut out = Vec::new();
                let mut plain = true;
                for it in items {
                    if matches!(it, Var::Ndarray(_)) {
                        return Err(TraceError::unsupported(
                            "a numpy array inside a tuple index",
                        ));
                    }
                    let (a, p) = self.index_arg(it)?;
                    plain &= p;
                    out.push(a);
                }
                Ok((Arg::Tuple(out), plain))
            }
            Var::Slice(_) => Ok((idx.to_arg(py)?, true)),
            Var::Py(o, _) => {
                let o = o.bind(py);
                if o.is(py.Ellipsis()) {
                    return Ok((Arg::Ellipsis, false));
                }
                if o.is_none() || o.extract::<i64>().is_ok() || o.is_instance_of::<pyo3::types::PySlice>() {
                    return Ok((const_arg(py, o)?, true));
                }
                Err(TraceError::unsupported(format!(
                    "indexing a numpy array with a {}",
                    idx.type_name(py)
                )))
            }
            other => Err(TraceError::unsupported(format!(
                "indexing a numpy array with a {}",
                other.type_name(py)
            ))),
        }
    }

    fn ndarray_getitem(&mut self, obj: &Var, idx: &Var) -> Result<Var, TraceError> {
        let py = self.tx.py;
        let Var::Ndarray(a) = obj else {
            return Err(TraceError::unsupported(format!(
                "indexing a {} with a numpy array",
                obj.type_name(py)
            )));
        };
        if a.scalar {
            return Err(TraceError::unsupported("indexing a numpy scalar"));
        }
        let (arg, plain) = self.index_arg(idx)?;
        let f = py.import("operator")?.getattr("getitem")?;
        let r = self.graph_call(
            "getitem",
            Target::Function("operator.getitem".into()),
            Some(&f),
            vec![Arg::Node(a.t.node), arg],
            vec![],
        )?;
        let Var::Tensor(t) = r else {
            return Err(TraceError::unsupported("an index giving no tensor"));
        };
        let scalar = plain && t.meta.ndim() == 0;
        Ok(self.ndarray(t, scalar))
    }

    /// `a[key] = value`: written into the array's (and so its tensor's) memory.
    pub(super) fn ndarray_setitem(
        &mut self,
        a: &NdarrayVar,
        key: &Var,
        value: &Var,
    ) -> Result<(), TraceError> {
        let py = self.tx.py;
        if a.scalar {
            return Err(TraceError::unsupported("item assignment on a numpy scalar"));
        }
        let key = match key {
            Var::Ndarray(m) if !m.scalar && m.t.meta.dtype == DType::Bool => Arg::Node(m.t.node),
            other => self.index_arg(other)?.0,
        };
        let value = match value {
            Var::Ndarray(v) => Arg::Node(self.cast(&v.t, a.t.meta.dtype)?.node),
            Var::Py(o, _) => {
                let v = const_arg(py, o.bind(py))?;
                if !matches!(v, Arg::Int(_) | Arg::Float(_) | Arg::Bool(_)) {
                    return Err(TraceError::unsupported(
                        "assigning this value into a numpy array",
                    ));
                }
                v
            }
            other => {
                return Err(TraceError::unsupported(format!(
                    "assigning a {} into a numpy array",
                    other.type_name(py)
                )))
            }
        };
        let f = py.import("operator")?.getattr("setitem")?;
        self.graph_call(
            "setitem",
            Target::Function("operator.setitem".into()),
            Some(&f),
            vec![Arg::Node(a.t.node), key, value],
            vec![],
        )?;
        Ok(())
    }
}

use pyo3::types::IntoPyDict;

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
        Ok(Some(Var::Ndarray(NdarrayVar { t, scalar: false })))
    }
}

/// The callable that turns a graph output back into what eager returned: `Tensor.numpy` for an
/// array; for a numpy scalar, `[()]` of that array.
pub(crate) fn numpy_templates(py: Python<'_>) -> PyResult<(Py<PyAny>, Py<PyAny>)> {
    Ok((
        py.import("torch")?
            .getattr("Tensor")?
            .getattr("numpy")?
            .unbind(),
        py.import("operator")?.getattr("getitem")?.unbind(),
    ))
}
