//! Methods, attributes, operators and indexing of an array computed in the graph.

use pyo3::prelude::*;
use pyo3::types::{IntoPyDict, PyTuple};

use fx::{Arg, DType, Target};

use crate::error::TraceError;

use super::*;
use crate::interp::vars::NdarrayVar;
use crate::interp::vars::Var;
use crate::interp::Frame;

impl Frame<'_, '_> {
    /// `a.<name>` read as a value.
    pub(in crate::interp) fn ndarray_attr(
        &mut self,
        a: NdarrayVar,
        name: &str,
    ) -> Result<Var, TraceError> {
        let py = self.tx.py;
        let sizes = || {
            a.t.meta
                .known_sizes()
                .ok_or_else(|| TraceError::unsupported("symbolic shapes"))
        };
        match name {
            "shape" => Ok(Var::Tuple(
                sizes()?
                    .into_iter()
                    .map(|d| Var::py_const(py, d))
                    .collect::<Vec<_>>()
                    .into(),
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

    pub(in crate::interp) fn ndarray_reshape(
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

    pub(in crate::interp) fn ndarray_transpose(
        &mut self,
        a: &NdarrayVar,
        axes: &[Var],
    ) -> Result<Var, TraceError> {
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
    pub(in crate::interp) fn ndarray_method(
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
            "item" if args.is_empty() && kwargs.is_empty() => {
                return self.python_number(&a, None);
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
    pub(in crate::interp) fn ndarray_operator(
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
        let pynum = args.iter().all(|a| match a {
            Var::Ndarray(x) => x.pynum,
            _ => true,
        });
        if pynum {
            // Python raises on a zero divisor (and makes complex powers) where numpy warns.
            let plain = name.trim_start_matches('i');
            let zero_or_computed = |v: &Var| match v {
                Var::Ndarray(_) => true,
                other => other
                    .as_py(py)
                    .and_then(|o| o.extract::<f64>().ok())
                    .is_none_or(|x| x == 0.0),
            };
            if plain == "pow"
                || matches!(plain, "truediv" | "floordiv" | "mod")
                    && args.get(1).is_none_or(zero_or_computed)
            {
                return Err(TraceError::unsupported(format!(
                    "operator.{name} on Python numbers computed in the graph (Python raises \
                     on values numpy lets through)"
                )));
            }
        }
        let r = self.numpy_function(&f, ufunc, &args, &[])?;
        if pynum {
            return self.python_number_result(name, &args, r);
        }
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

    /// An operator on Python numbers computed in the graph: numpy computed it (`r`); the
    /// result is the Python number of the type Python's operator gives, where numpy's dtype
    /// agrees with it (`True + True` is 2 in Python, `True` in numpy: that one breaks).
    fn python_number_result(
        &mut self,
        name: &str,
        args: &[Var],
        r: Var,
    ) -> Result<Var, TraceError> {
        let py = self.tx.py;
        let refuse = || {
            TraceError::unsupported(format!(
                "operator.{name} on Python numbers computed in the graph"
            ))
        };
        let mut probes = Vec::new();
        for a in args {
            probes.push(probe(py, a)?.ok_or_else(refuse)?);
        }
        let op = py.import("operator")?.getattr(name)?;
        let v = op.call1(PyTuple::new(py, probes)?).map_err(|_| refuse())?;
        let expected = if v.is_instance_of::<pyo3::types::PyBool>() {
            DType::Bool
        } else if v.is_instance_of::<pyo3::types::PyInt>() {
            DType::Int64
        } else if v.is_instance_of::<pyo3::types::PyFloat>() {
            DType::Float64
        } else {
            return Err(refuse());
        };
        match r {
            Var::Ndarray(x) if x.t.meta.dtype == expected && x.t.meta.ndim() == 0 => {
                Ok(Var::Ndarray(NdarrayVar {
                    t: x.t,
                    scalar: true,
                    pynum: true,
                }))
            }
            _ => Err(refuse()),
        }
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
                for it in items.iter() {
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
        // A numpy scalar is a copy: a later write into the array does not change it.
        let t = if scalar {
            self.method_node("clone", &t, vec![], vec![])?
        } else {
            t
        };
        Ok(self.ndarray(t, scalar))
    }

    /// `a[key] = value`: written into the array's (and so its tensor's) memory.
    pub(in crate::interp) fn ndarray_setitem(
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
