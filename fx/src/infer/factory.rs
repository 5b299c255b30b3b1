//! Tensor factories: `zeros`/`ones`/`empty`/`full`/`rand`/`randn`, `arange`, the `*_like`
//! forms and the `new_*` methods.
//!
//! Sizes come from Python values, so the result is fully known; dtype defaults follow torch
//! (`full` infers it from the fill value, `arange` from its bounds, `new_*` from `self`).

use super::layout::{contiguous_strides, preserved_strides};
use super::promote::is_integral_or_bool;
use super::{invalid, Bound, Call, InferError, InferResult, Spelling, Tensor, Value};
use crate::meta::{DType, Device};

pub(super) fn infer(c: &Call) -> Option<InferResult> {
    let r = match (c.spelling, c.name) {
        (Spelling::Torch, "zeros" | "ones" | "empty" | "rand" | "randn") => sized(c, false),
        (Spelling::Torch, "full") => sized(c, true),
        (Spelling::Torch, "arange") => arange(c),
        (
            Spelling::Torch,
            "zeros_like" | "ones_like" | "empty_like" | "full_like" | "rand_like" | "randn_like",
        ) => like(c),
        (Spelling::Method, "new_zeros" | "new_ones" | "new_empty" | "new_full") => new_(c),
        _ => return None,
    };
    Some(r)
}

/// Keyword options every factory accepts.
const OPTIONS: [&str; 7] = [
    "dtype",
    "layout",
    "device",
    "pin_memory",
    "requires_grad",
    "memory_format",
    "generator",
];

fn with_options(head: &[&'static str]) -> Vec<&'static str> {
    let mut p = head.to_vec();
    p.push("*");
    p.extend(OPTIONS);
    p
}

struct Options {
    dtype: Option<DType>,
    device: Option<Device>,
    requires_grad: bool,
}

/// Reads the factory options, refusing the ones that change the layout or placement in ways
/// not modelled here.
fn options(b: &Bound) -> Result<Options, InferError> {
    if b.get("layout").is_some()
        || b.get("memory_format").is_some()
        || b.get("generator").is_some()
        || b.bool_or("pin_memory", false)?
    {
        return Err(InferError::Unsupported);
    }
    Ok(Options {
        dtype: b.dtype("dtype")?,
        device: b.device("device")?,
        requires_grad: b.bool_or("requires_grad", false)?,
    })
}

fn make(
    c: &Call,
    sizes: Vec<i64>,
    strides: Vec<i64>,
    dtype: DType,
    device: Device,
    requires_grad: bool,
) -> InferResult {
    if let Some(&n) = sizes.iter().find(|&&s| s < 0) {
        return invalid(format!(
            "Trying to create tensor with negative dimension {n}: {}",
            super::args::shape_str(&sizes)
        ));
    }
    if sizes
        .iter()
        .try_fold(1i64, |acc, &s| acc.checked_mul(s))
        .is_none()
    {
        return Err(InferError::Unsupported);
    }
    if requires_grad && !(dtype.is_floating_point() || dtype.is_complex()) {
        return invalid("Only Tensors of floating point and complex dtype can require gradients");
    }
    if matches!(c.name, "rand" | "randn" | "rand_like" | "randn_like")
        && !(dtype.is_floating_point() || dtype.is_complex())
    {
        return Err(InferError::Unsupported);
    }
    if device.kind != "cpu" && device.index.is_none() {
        // The current device index of an accelerator is runtime state.
        return Err(InferError::Unsupported);
    }
    Ok(Tensor {
        dtype,
        device,
        sizes,
        strides,
        requires_grad,
    }
    .meta())
}

fn fill_dtype(c: &Call, v: &Value) -> Result<DType, InferError> {
    Ok(match v {
        Value::Bool(_) => DType::Bool,
        Value::Int(_) => DType::Int64,
        Value::Float(_) => c.ctx.default_dtype,
        _ => return Err(InferError::Unsupported),
    })
}

fn sized(c: &Call, full: bool) -> InferResult {
    let head: &[&'static str] = if full {
        &["size", "fill_value"]
    } else {
        &["size"]
    };
    let params = with_options(head);
    let b = if full {
        c.bind(&params)?
    } else {
        c.bind_varargs(&params, 0)?
    };
    let sizes = b.ints("size")?;
    let o = options(&b)?;
    let dtype = match (o.dtype, full) {
        (Some(d), _) => d,
        (None, true) => fill_dtype(c, b.get("fill_value").ok_or(InferError::Unsupported)?)?,
        (None, false) => c.ctx.default_dtype,
    };
    let device = o.device.unwrap_or_else(|| c.ctx.default_device.clone());
    let strides = contiguous_strides(&sizes);
    make(c, sizes, strides, dtype, device, o.requires_grad)
}

fn like(c: &Call) -> InferResult {
    let head: &[&'static str] = if c.name == "full_like" {
        &["input", "fill_value"]
    } else {
        &["input"]
    };
    let b = c.bind(&with_options(head))?;
    let x = b.tensor("input")?;
    if c.name == "full_like" {
        fill_dtype(c, b.get("fill_value").ok_or(InferError::Unsupported)?)?;
    }
    let o = options(&b)?;
    let strides = preserved_strides(&x.sizes, &x.strides);
    let dtype = o.dtype.unwrap_or(x.dtype);
    let device = o.device.unwrap_or_else(|| x.device.clone());
    make(c, x.sizes.clone(), strides, dtype, device, o.requires_grad)
}

fn new_(c: &Call) -> InferResult {
    let full = c.name == "new_full";
    let head: &[&'static str] = if full {
        &["input", "size", "fill_value"]
    } else {
        &["input", "size"]
    };
    let params = with_options(head);
    let b = if full {
        c.bind(&params)?
    } else {
        c.bind_varargs(&params, 1)?
    };
    let x = b.tensor("input")?;
    let sizes = b.ints("size")?;
    if full {
        fill_dtype(c, b.get("fill_value").ok_or(InferError::Unsupported)?)?;
    }
    let o = options(&b)?;
    let strides = contiguous_strides(&sizes);
    let dtype = o.dtype.unwrap_or(x.dtype);
    let device = o.device.unwrap_or_else(|| x.device.clone());
    make(c, sizes, strides, dtype, device, o.requires_grad)
}

fn arange(c: &Call) -> InferResult {
    let positional = c.args.len();
    let head: &[&'static str] = match positional {
        0 | 1 if c.kwargs.iter().any(|(k, _)| k == "start") => &["start", "end", "step"],
        0 | 1 => &["end", "*", "start", "step"],
        _ => &["start", "end", "step"],
    };
    let mut params: Vec<&'static str> = head.to_vec();
    if !params.contains(&"*") {
        params.push("*");
    }
    params.extend(["out"]);
    params.extend(OPTIONS);
    let b = c.bind(&params)?;
    if b.get("out").is_some() {
        return Err(InferError::Unsupported);
    }
    let bound = |name: &str, default: Option<Value>| -> Result<Value, InferError> {
        match b.get(name).cloned().or(default) {
            Some(v @ (Value::Int(_) | Value::Float(_))) => Ok(v),
            _ => Err(InferError::Unsupported),
        }
    };
    let start = bound("start", Some(Value::Int(0)))?;
    let end = bound("end", None)?;
    let step = bound("step", Some(Value::Int(1)))?;
    let o = options(&b)?;
    let all_int = [&start, &end, &step]
        .iter()
        .all(|v| matches!(v, Value::Int(_)));
    let dtype = o.dtype.unwrap_or(if all_int {
        DType::Int64
    } else {
        c.ctx.default_dtype
    });
    let num = |v: &Value| v.number().unwrap_or(0.0);
    let (s, e, st) = (num(&start), num(&end), num(&step));
    if !s.is_finite() || !e.is_finite() {
        return invalid(format!("unsupported range: {s} -> {e}"));
    }
    if st == 0.0 {
        return invalid("step must be nonzero");
    }
    if !((st > 0.0 && e >= s) || (st < 0.0 && e <= s)) {
        return invalid("upper bound and larger bound inconsistent with step sign");
    }
    let len = if dtype == DType::Int64 {
        match (start, end, step) {
            (Value::Int(s), Value::Int(e), Value::Int(st)) => {
                // Ceiling division, exact for the whole int64 range of bounds.
                let span = e as i128 - s as i128;
                let st = st as i128;
                let q = span / st;
                (if span % st != 0 { q + 1 } else { q }) as i64
            }
            // Float bounds are truncated to int64 before counting; not modelled.
            _ => return Err(InferError::Unsupported),
        }
    } else if is_integral_or_bool(dtype) && !all_int {
        return Err(InferError::Unsupported);
    } else {
        ((e - s) / st).ceil() as i64
    };
    if dtype == DType::Bool || dtype.is_complex() {
        return Err(InferError::Unsupported);
    }
    let device = o.device.unwrap_or_else(|| c.ctx.default_device.clone());
    make(c, vec![len], vec![1], dtype, device, o.requires_grad)
}
