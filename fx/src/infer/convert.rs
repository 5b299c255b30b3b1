//! Conversions and copies: `.to(...)`, `.float()` and friends, `.type_as`, `.clone()`,
//! `.detach()`, `.cpu()`.
//!
//! A conversion that changes nothing returns the tensor itself (same layout, same autograd
//! identity); one that changes something copies with `preserve_format`, keeping dense layouts.

use super::args::parse_device;
use super::layout::preserved_strides;
use super::{Call, InferError, InferResult, Spelling, Tensor, Value};
use crate::meta::{DType, Device};

pub(super) fn infer(c: &Call) -> Option<InferResult> {
    let method = c.spelling == Spelling::Method;
    let r = match c.name {
        "to" if method => to(c),
        "type_as" if method => type_as(c),
        "clone" if method || c.spelling == Spelling::Torch => clone(c),
        "detach" if method || c.spelling == Spelling::Torch => detach(c),
        "cpu" if method => cpu(c),
        name if method => match shorthand_dtype(name) {
            Some(d) => shorthand(c, d),
            None => return None,
        },
        _ => return None,
    };
    Some(r)
}

fn shorthand_dtype(name: &str) -> Option<DType> {
    Some(match name {
        "float" => DType::Float32,
        "double" => DType::Float64,
        "half" => DType::Float16,
        "bfloat16" => DType::BFloat16,
        "int" => DType::Int32,
        "long" => DType::Int64,
        "short" => DType::Int16,
        "char" => DType::Int8,
        "byte" => DType::UInt8,
        "bool" => DType::Bool,
        "cfloat" => DType::Complex64,
        "cdouble" => DType::Complex128,
        _ => return None,
    })
}

/// The result of converting `x` to `dtype` on `device`.
fn converted(c: &Call, x: &Tensor, dtype: DType, device: Device, copy: bool) -> InferResult {
    if dtype == x.dtype && device == x.device && !copy {
        return Ok(x.clone().meta());
    }
    let strides = preserved_strides(&x.sizes, &x.strides);
    Ok(Tensor {
        dtype,
        device,
        sizes: x.sizes.clone(),
        strides,
        requires_grad: c.grad(dtype, &[x]),
    }
    .meta())
}

fn shorthand(c: &Call, dtype: DType) -> InferResult {
    let b = c.bind(&["input", "memory_format"])?;
    b.require_absent("memory_format")?;
    let x = b.tensor("input")?;
    converted(c, x, dtype, x.device.clone(), false)
}

fn to(c: &Call) -> InferResult {
    let values = c.arg_values()?;
    let x = values
        .first()
        .and_then(Value::tensor)
        .ok_or(InferError::Unsupported)?;
    let mut dtype = None;
    let mut device = None;
    let mut copy = false;
    let mut rest = values[1..].iter();
    // Positional forms: (dtype, ...), (device, dtype, ...), (tensor, ...).
    match rest.next() {
        None => {}
        Some(Value::DType(d)) => dtype = Some(*d),
        Some(Value::Tensor(o)) => {
            dtype = Some(o.dtype);
            device = Some(o.device.clone());
        }
        Some(v @ (Value::Device(_) | Value::Str(_))) => {
            device = Some(parse_device(v)?);
            match rest.next() {
                Some(Value::DType(d)) => dtype = Some(*d),
                Some(Value::None) | None => {}
                Some(_) => return Err(InferError::Unsupported),
            }
        }
        Some(_) => return Err(InferError::Unsupported),
    }
    // Trailing positionals are non_blocking and copy.
    for (i, v) in rest.enumerate() {
        match (i, v) {
            (0, Value::Bool(_)) => {}
            (1, Value::Bool(b)) => copy = *b,
            _ => return Err(InferError::Unsupported),
        }
    }
    for (k, a) in c.kwargs {
        let v = Value::of_arg(c.graph, a)?;
        match (k.as_str(), &v) {
            ("dtype", Value::DType(d)) => dtype = Some(*d),
            ("dtype" | "device", Value::None) => {}
            ("device", v) => device = Some(parse_device(v)?),
            ("non_blocking", Value::Bool(_)) => {}
            ("copy", Value::Bool(b)) => copy = *b,
            _ => return Err(InferError::Unsupported),
        }
    }
    let device = match device {
        // `.to("cuda")` means the current CUDA device, which only torch knows.
        Some(d) if d.index.is_none() && d.kind != "cpu" && d.kind != x.device.kind => {
            return Err(InferError::Unsupported)
        }
        Some(d) if d.kind == x.device.kind && d.index.is_none() => x.device.clone(),
        Some(d) => d,
        None => x.device.clone(),
    };
    converted(c, x, dtype.unwrap_or(x.dtype), device, copy)
}

fn type_as(c: &Call) -> InferResult {
    let b = c.bind(&["input", "other"])?;
    let x = b.tensor("input")?;
    let other = b.tensor("other")?;
    converted(c, x, other.dtype, other.device.clone(), false)
}

fn clone(c: &Call) -> InferResult {
    let b = c.bind(&["input", "*", "memory_format"])?;
    b.require_absent("memory_format")?;
    let x = b.tensor("input")?;
    converted(c, x, x.dtype, x.device.clone(), true)
}

fn detach(c: &Call) -> InferResult {
    let b = c.bind(&["input"])?;
    let mut y = b.tensor("input")?.clone();
    y.requires_grad = false;
    Ok(y.meta())
}

fn cpu(c: &Call) -> InferResult {
    let b = c.bind(&["input", "memory_format"])?;
    b.require_absent("memory_format")?;
    let x = b.tensor("input")?;
    converted(c, x, x.dtype, Device::cpu(), false)
}
