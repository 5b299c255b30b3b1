//! numpy functions called with arrays computed in the graph, numpy constants and factories,
//! builtins over arrays, and torch's ways back to tensors.

use pyo3::prelude::*;
use pyo3::types::PyTuple;

use fx::{Arg, DType};

use crate::error::TraceError;

use super::*;
use crate::interp::vars::Var;
use crate::interp::Frame;

impl Frame<'_, '_> {
    /// A call of `f` (of module `module`, named `name`) that numpy inside the frame owns: numpy
    /// functions, builtins over arrays, and torch's ways back to tensors. `None`: not ours.
    pub(in crate::interp) fn numpy_call(
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
    pub(in crate::interp) fn numpy_function(
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
            if ok.is_none_or(|e| e < 0) {
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
                Var::Tuple(i) => Some(i.to_vec()),
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
            "float" | "int" if args.len() == 1 => {
                let a = a.clone();
                self.python_number(&a, Some(name))
            }
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
}
