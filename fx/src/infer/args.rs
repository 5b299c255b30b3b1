//! Reading a call's arguments the way torch's Python binding does: positional or by keyword,
//! sizes as varargs or as one sequence, graph nodes resolved to their metadata.

use super::{invalid, InferCtx, InferError, InferResult, Spelling};
use crate::graph::{Arg, Graph};
use crate::meta::{DType, Device, Dim, NodeMeta, TensorMeta};

/// A tensor with known sizes: the form every rule computes on. Symbolic sizes are not modelled.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Tensor {
    pub dtype: DType,
    pub device: Device,
    pub sizes: Vec<i64>,
    pub strides: Vec<i64>,
    pub requires_grad: bool,
}

impl Tensor {
    fn from_meta(m: &TensorMeta) -> Option<Tensor> {
        if m.sizes.len() != m.strides.len() {
            return None;
        }
        Some(Tensor {
            dtype: m.dtype,
            device: m.device.clone(),
            sizes: m
                .sizes
                .iter()
                .map(super::symbolic::concrete)
                .collect::<Option<_>>()?,
            strides: m
                .strides
                .iter()
                .map(super::symbolic::concrete)
                .collect::<Option<_>>()?,
            requires_grad: m.requires_grad,
        })
    }

    pub fn ndim(&self) -> usize {
        self.sizes.len()
    }

    pub fn numel(&self) -> i64 {
        self.sizes.iter().product()
    }

    /// A fresh row-major tensor on this tensor's device.
    pub fn fresh(&self, dtype: DType, sizes: Vec<i64>, requires_grad: bool) -> Tensor {
        Tensor {
            dtype,
            device: self.device.clone(),
            strides: super::layout::contiguous_strides(&sizes),
            sizes,
            requires_grad,
        }
    }

    /// The same storage seen with another geometry.
    pub fn view(&self, sizes: Vec<i64>, strides: Vec<i64>) -> Tensor {
        Tensor {
            sizes,
            strides,
            ..self.clone()
        }
    }

    pub fn meta(self) -> NodeMeta {
        NodeMeta::Tensor(TensorMeta {
            dtype: self.dtype,
            device: self.device,
            sizes: self.sizes.into_iter().map(Dim::Known).collect(),
            strides: self.strides.into_iter().map(Dim::Known).collect(),
            requires_grad: self.requires_grad,
        })
    }

    pub fn shape_str(&self) -> String {
        shape_str(&self.sizes)
    }
}

/// `[2, 3]`, as torch prints sizes in messages.
pub(crate) fn shape_str(sizes: &[i64]) -> String {
    let parts: Vec<String> = sizes.iter().map(i64::to_string).collect();
    format!("[{}]", parts.join(", "))
}

/// An argument with graph nodes replaced by what they hold.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Value {
    Tensor(Tensor),
    Int(i64),
    Float(f64),
    Bool(bool),
    None,
    Str(String),
    DType(DType),
    Device(Device),
    Seq(Vec<Value>),
    Slice(Box<Value>, Box<Value>, Box<Value>),
    Ellipsis,
    /// Something no rule reads (a torch singleton, a value of unknown metadata).
    Opaque,
}

impl Value {
    fn of_meta(m: &NodeMeta) -> Result<Value, InferError> {
        Ok(match m {
            NodeMeta::Tensor(t) => {
                Value::Tensor(Tensor::from_meta(t).ok_or(InferError::Unsupported)?)
            }
            NodeMeta::Tuple(items) => {
                Value::Seq(items.iter().map(Value::of_meta).collect::<Result<_, _>>()?)
            }
            NodeMeta::Int(v) => Value::Int(*v),
            NodeMeta::SymInt(e) => Value::Int(
                super::symbolic::concrete(&Dim::Sym(e.clone())).ok_or(InferError::Unsupported)?,
            ),
            NodeMeta::SymFloat(e) => {
                Value::Float(super::symbolic::concrete_float(e).ok_or(InferError::Unsupported)?)
            }
            NodeMeta::Float(v) => Value::Float(*v),
            NodeMeta::Bool(v) => Value::Bool(*v),
            NodeMeta::None => Value::Opaque,
        })
    }

    pub fn of_arg(graph: &Graph, arg: &Arg) -> Result<Value, InferError> {
        Ok(match arg {
            Arg::Node(n) => Value::of_meta(&graph.node(*n).meta)?,
            Arg::None => Value::None,
            Arg::Bool(b) => Value::Bool(*b),
            Arg::Int(i) => Value::Int(*i),
            Arg::Float(f) => Value::Float(*f),
            Arg::Str(s) => Value::Str(s.clone()),
            Arg::DType(d) => Value::DType(*d),
            Arg::Device(d) => Value::Device(d.clone()),
            Arg::TorchAttr(_) => Value::Opaque,
            Arg::Tuple(items) | Arg::List(items) => Value::Seq(
                items
                    .iter()
                    .map(|a| Value::of_arg(graph, a))
                    .collect::<Result<_, _>>()?,
            ),
            Arg::Slice(a, b, c) => Value::Slice(
                Box::new(Value::of_arg(graph, a)?),
                Box::new(Value::of_arg(graph, b)?),
                Box::new(Value::of_arg(graph, c)?),
            ),
            Arg::Ellipsis => Value::Ellipsis,
        })
    }

    pub fn tensor(&self) -> Option<&Tensor> {
        match self {
            Value::Tensor(t) => Some(t),
            _ => None,
        }
    }

    /// A Python int (bools are ints in Python, but torch's int parameters reject them).
    pub fn int(&self) -> Option<i64> {
        match self {
            Value::Int(i) => Some(*i),
            _ => None,
        }
    }

    /// A Python number: int, float or bool.
    pub fn number(&self) -> Option<f64> {
        match self {
            Value::Int(i) => Some(*i as f64),
            Value::Float(f) => Some(*f),
            Value::Bool(b) => Some(f64::from(u8::from(*b))),
            _ => None,
        }
    }

    /// A sequence of ints, or one int as a one-element list (torch's `int[]` parameters).
    pub fn ints(&self) -> Option<Vec<i64>> {
        match self {
            Value::Int(i) => Some(vec![*i]),
            Value::Seq(items) => items.iter().map(Value::int).collect(),
            _ => None,
        }
    }
}

/// One call being inferred.
pub(crate) struct Call<'a> {
    pub ctx: &'a InferCtx,
    pub graph: &'a Graph,
    pub spelling: Spelling,
    pub name: &'a str,
    pub args: &'a [Arg],
    pub kwargs: &'a [(String, Arg)],
}

/// Arguments matched to a parameter list.
pub(crate) struct Bound {
    params: Vec<&'static str>,
    values: Vec<Option<Value>>,
}

impl<'a> Call<'a> {
    /// Matches arguments to `params` (names as torch spells them; those after `"*"` are
    /// keyword-only). An unknown keyword or a surplus positional is `Unsupported`: the op is some
    /// overload this module does not model.
    pub fn bind(&self, params: &[&'static str]) -> Result<Bound, InferError> {
        let slots = crate::ops::bind(params, self.args, self.kwargs)
            .map_err(|_| InferError::Unsupported)?;
        let values = slots
            .into_iter()
            .map(|a| a.map(|a| Value::of_arg(self.graph, a)).transpose())
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Bound {
            params: crate::ops::schema::param_names(params),
            values,
        })
    }

    /// Binds `params` where the parameter `var` (a size or dim list) may also be spread over the
    /// remaining positionals: `x.view(2, 3)` as well as `x.view((2, 3))`.
    pub fn bind_varargs(&self, params: &[&'static str], var: usize) -> Result<Bound, InferError> {
        if self.args.len() > var + 1 {
            let spread: Vec<Arg> = self.args[var..].to_vec();
            let mut args = self.args[..var].to_vec();
            args.push(Arg::Tuple(spread));
            let call = Call {
                args: &args,
                ..*self
            };
            return call.bind(params);
        }
        self.bind(params)
    }

    pub fn arg_values(&self) -> Result<Vec<Value>, InferError> {
        self.args
            .iter()
            .map(|a| Value::of_arg(self.graph, a))
            .collect()
    }

    /// `requires_grad` of a differentiable op's floating result: any input requires grad.
    pub fn grad(&self, out: DType, inputs: &[&Tensor]) -> bool {
        self.ctx.grad_enabled
            && (out.is_floating_point() || out.is_complex())
            && inputs.iter().any(|t| t.requires_grad)
    }
}

impl Bound {
    fn index(&self, name: &str) -> usize {
        self.params
            .iter()
            .position(|p| *p == name)
            .unwrap_or_else(|| panic!("no parameter {name}"))
    }

    /// The value given for `name`, `None` if absent or given as Python `None`.
    pub fn get(&self, name: &str) -> Option<&Value> {
        match &self.values[self.index(name)] {
            None | Some(Value::None) => None,
            Some(v) => Some(v),
        }
    }

    pub fn tensor(&self, name: &str) -> Result<&Tensor, InferError> {
        self.get(name)
            .and_then(Value::tensor)
            .ok_or(InferError::Unsupported)
    }

    pub fn opt_tensor(&self, name: &str) -> Result<Option<&Tensor>, InferError> {
        match self.get(name) {
            None => Ok(None),
            Some(Value::Tensor(t)) => Ok(Some(t)),
            Some(_) => Err(InferError::Unsupported),
        }
    }

    pub fn int(&self, name: &str) -> Result<i64, InferError> {
        self.get(name)
            .and_then(Value::int)
            .ok_or(InferError::Unsupported)
    }

    pub fn int_or(&self, name: &str, default: i64) -> Result<i64, InferError> {
        match self.get(name) {
            None => Ok(default),
            Some(v) => v.int().ok_or(InferError::Unsupported),
        }
    }

    pub fn opt_int(&self, name: &str) -> Result<Option<i64>, InferError> {
        self.get(name)
            .map(|v| v.int().ok_or(InferError::Unsupported))
            .transpose()
    }

    pub fn bool_or(&self, name: &str, default: bool) -> Result<bool, InferError> {
        match self.get(name) {
            None => Ok(default),
            Some(Value::Bool(b)) => Ok(*b),
            Some(_) => Err(InferError::Unsupported),
        }
    }

    pub fn number_or(&self, name: &str, default: f64) -> Result<f64, InferError> {
        match self.get(name) {
            None => Ok(default),
            Some(v) => v.number().ok_or(InferError::Unsupported),
        }
    }

    pub fn ints(&self, name: &str) -> Result<Vec<i64>, InferError> {
        self.get(name)
            .and_then(Value::ints)
            .ok_or(InferError::Unsupported)
    }

    /// A `dim` argument that may be absent, one int, or a list (reductions, `squeeze`).
    pub fn opt_dims(&self, name: &str) -> Result<Option<Vec<i64>>, InferError> {
        self.get(name)
            .map(|v| v.ints().ok_or(InferError::Unsupported))
            .transpose()
    }

    pub fn dtype(&self, name: &str) -> Result<Option<DType>, InferError> {
        match self.get(name) {
            None => Ok(None),
            Some(Value::DType(d)) => Ok(Some(*d)),
            Some(_) => Err(InferError::Unsupported),
        }
    }

    pub fn device(&self, name: &str) -> Result<Option<Device>, InferError> {
        match self.get(name) {
            None => Ok(None),
            Some(v) => parse_device(v).map(Some),
        }
    }

    /// `str` arguments (`rounding_mode`, `approximate`).
    pub fn str(&self, name: &str) -> Result<Option<&str>, InferError> {
        match self.get(name) {
            None => Ok(None),
            Some(Value::Str(s)) => Ok(Some(s)),
            Some(_) => Err(InferError::Unsupported),
        }
    }

    /// Only the default `memory_format` (or none) is modelled.
    pub fn require_absent(&self, name: &str) -> Result<(), InferError> {
        match self.get(name) {
            None => Ok(()),
            Some(_) => Err(InferError::Unsupported),
        }
    }
}

/// A device given as `torch.device` or as a string (`"cuda:0"`, `"cpu"`).
pub(crate) fn parse_device(v: &Value) -> Result<Device, InferError> {
    match v {
        Value::Device(d) => Ok(d.clone()),
        Value::Str(s) => {
            let (kind, index) = match s.split_once(':') {
                Some((k, i)) => (
                    k,
                    Some(i.parse::<i64>().map_err(|_| InferError::Unsupported)?),
                ),
                None => (s.as_str(), None),
            };
            if !kind.chars().all(|c| c.is_ascii_lowercase()) || kind.is_empty() {
                return Err(InferError::Unsupported);
            }
            Ok(Device {
                kind: kind.into(),
                index,
            })
        }
        _ => Err(InferError::Unsupported),
    }
}

/// The device several tensors compute on together. A CPU 0-d tensor joins any device (it is
/// read as a number); any other mismatch is torch's cross-device error.
pub(crate) fn common_device(tensors: &[&Tensor]) -> Result<Device, InferError> {
    let mut found: Option<&Device> = None;
    for t in tensors {
        if t.ndim() == 0 && t.device.kind == "cpu" {
            continue;
        }
        match found {
            None => found = Some(&t.device),
            Some(d) if same_device(d, &t.device) => {}
            Some(d) => {
                return invalid(format!(
                    "Expected all tensors to be on the same device, but found at least two \
                     devices, {d} and {}!",
                    t.device
                ))
            }
        }
    }
    Ok(found
        .cloned()
        .or_else(|| tensors.first().map(|t| t.device.clone()))
        .unwrap_or_else(Device::cpu))
}

fn same_device(a: &Device, b: &Device) -> bool {
    a.kind == b.kind && (a.index == b.index || a.kind == "cpu")
}

/// Python-level queries on tensors that produce Python values (`x.size()`, `x.dim()`), and
/// indexing into tuples of results (`x.max(0)[1]`).
pub(crate) fn infer_python_values(c: &Call) -> Option<InferResult> {
    if c.spelling != Spelling::Method {
        return None;
    }
    let r = match c.name {
        "size" | "dim" | "ndimension" | "numel" | "nelement" | "stride" => query(c),
        _ => return None,
    };
    Some(r)
}

fn query(c: &Call) -> InferResult {
    let b = c.bind(&["self", "dim"])?;
    let t = b.tensor("self")?;
    let dim = b.opt_int("dim")?;
    let list = |v: &[i64]| NodeMeta::Tuple(v.iter().map(|&s| NodeMeta::Int(s)).collect());
    Ok(match (c.name, dim) {
        ("size", None) => list(&t.sizes),
        ("stride", None) => list(&t.strides),
        ("size", Some(d)) if t.ndim() > 0 => NodeMeta::Int(t.sizes[super::wrap_dim(d, t.ndim())?]),
        ("stride", Some(d)) if t.ndim() > 0 => {
            NodeMeta::Int(t.strides[super::wrap_dim(d, t.ndim())?])
        }
        ("dim" | "ndimension", None) => NodeMeta::Int(t.ndim() as i64),
        ("numel" | "nelement", None) => NodeMeta::Int(t.numel()),
        _ => return Err(InferError::Unsupported),
    })
}
