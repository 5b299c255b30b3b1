//! Reductions: `sum`, `mean`, `prod`, `amax`/`amin`, `max`/`min` (with `dim`: values and indices),
//! `argmax`/`argmin`, `var`/`std`, `any`/`all`, `logsumexp`.
//!
//! Every reduction allocates a fresh row-major result. Reductions without an identity element
//! (`max`, `amax`, `argmax`, ...) refuse to reduce over an empty dimension.

use super::promote::{is_integral_or_bool, to_real};
use super::{invalid, wrap_dim, Bound, Call, InferError, InferResult, Spelling, Tensor, Value};
use crate::meta::{DType, NodeMeta};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// `sum`, `nansum`, `prod`: integers accumulate in int64.
    Accumulate,
    /// `mean`: floating or complex only.
    Mean,
    /// `amax`, `amin`: keep the dtype, no identity.
    Extreme,
    /// `max`/`min`: a full reduction or, with `dim`, a (values, indices) pair.
    MaxMin,
    /// `argmax`, `argmin`.
    ArgExtreme,
    /// `var`, `std`.
    Moment,
    /// `any`, `all`.
    Logical,
    /// `logsumexp`: integers compute in the default float dtype.
    LogSumExp,
}

pub(super) fn infer(c: &Call) -> Option<InferResult> {
    if c.spelling == Spelling::Operator || c.spelling == Spelling::Special {
        return None;
    }
    let kind = match c.name {
        "sum" | "nansum" | "prod" => Kind::Accumulate,
        "mean" => Kind::Mean,
        "amax" | "amin" => Kind::Extreme,
        "max" | "min" => Kind::MaxMin,
        "argmax" | "argmin" => Kind::ArgExtreme,
        "var" | "std" => Kind::Moment,
        "any" | "all" => Kind::Logical,
        "logsumexp" => Kind::LogSumExp,
        _ => return None,
    };
    if c.spelling == Spelling::Functional {
        return None;
    }
    Some(reduce(c, kind))
}

/// Which dimensions a reduction folds. `None` folds them all; so does an empty list, except
/// for `any`/`all`, which then fold none.
fn reduced_dims(kind: Kind, x: &Tensor, dims: Option<Vec<i64>>) -> Result<Vec<bool>, InferError> {
    let mut mask = vec![false; x.ndim()];
    let dims = match dims {
        Some(d) if !d.is_empty() => d,
        Some(_) if kind == Kind::Logical => return Ok(mask),
        _ => return Ok(vec![true; x.ndim()]),
    };
    for d in dims {
        let w = wrap_dim(d, x.ndim())?;
        if x.ndim() == 0 {
            continue;
        }
        if mask[w] {
            return invalid(format!(
                "dim {w} appears multiple times in the list of dims"
            ));
        }
        mask[w] = true;
    }
    Ok(mask)
}

fn result_sizes(x: &Tensor, mask: &[bool], keepdim: bool) -> Vec<i64> {
    x.sizes
        .iter()
        .zip(mask)
        .filter_map(|(&s, &m)| match (m, keepdim) {
            (false, _) => Some(s),
            (true, true) => Some(1),
            (true, false) => None,
        })
        .collect()
}

/// Reductions without an identity cannot produce a value from no elements.
fn check_nonempty(name: &str, x: &Tensor, mask: &[bool], full: bool) -> Result<(), InferError> {
    if x.numel() != 0 {
        return Ok(());
    }
    if full {
        return invalid(format!(
            "{name}(): Expected reduction dim to be specified for input.numel() == 0. Specify \
             the reduction dim with the 'dim' argument."
        ));
    }
    for (d, (&s, &m)) in x.sizes.iter().zip(mask).enumerate() {
        if m && s == 0 {
            return invalid(format!(
                "{name}(): Expected reduction dim {d} to have non-zero size."
            ));
        }
    }
    Ok(())
}

fn bind_reduction(c: &Call, kind: Kind) -> Result<Bound, InferError> {
    let params: &[&'static str] = match kind {
        Kind::Accumulate | Kind::Mean => &["input", "dim", "keepdim", "*", "dtype"],
        Kind::Moment => {
            // `x.var(False)` is the `unbiased` overload; otherwise dim comes first.
            if matches!(c.args.get(1), Some(crate::graph::Arg::Bool(_))) {
                &["input", "unbiased", "*", "dim", "keepdim", "correction"]
            } else {
                &["input", "dim", "unbiased", "keepdim", "*", "correction"]
            }
        }
        _ => &["input", "dim", "keepdim"],
    };
    c.bind(params)
}

fn reduce(c: &Call, kind: Kind) -> InferResult {
    let b = bind_reduction(c, kind)?;
    let x = b.tensor("input")?;
    if kind == Kind::MaxMin {
        if let Some(Value::Tensor(_)) = b.get("dim") {
            // `torch.max(x, y)` is `maximum`: handled with the binary ops.
            return Err(InferError::Unsupported);
        }
    }
    let dims = match (kind, b.get("dim")) {
        (_, None) => None,
        // These take a single dim, never a list.
        (Kind::MaxMin | Kind::ArgExtreme, Some(v)) => {
            Some(vec![v.int().ok_or(InferError::Unsupported)?])
        }
        (_, Some(v)) if c.name == "prod" => Some(vec![v.int().ok_or(InferError::Unsupported)?]),
        (_, Some(v)) => Some(v.ints().ok_or(InferError::Unsupported)?),
    };
    if kind == Kind::LogSumExp && dims.as_ref().is_none_or(Vec::is_empty) {
        return Err(InferError::Unsupported);
    }
    let keepdim = b.bool_or("keepdim", false)?;
    if kind == Kind::Moment {
        b.number_or("correction", 0.0)?;
        b.bool_or("unbiased", true)?;
    }
    let full = dims.as_ref().is_none_or(Vec::is_empty) && kind != Kind::Logical;
    let mask = reduced_dims(kind, x, dims)?;
    let sizes = result_sizes(x, &mask, keepdim);
    let requested = match kind {
        Kind::Accumulate | Kind::Mean => b.dtype("dtype")?,
        _ => None,
    };
    let dtype = match kind {
        Kind::Accumulate => requested.unwrap_or(if is_integral_or_bool(x.dtype) {
            DType::Int64
        } else {
            x.dtype
        }),
        Kind::Mean => {
            let d = requested.unwrap_or(x.dtype);
            if !(d.is_floating_point() || d.is_complex()) {
                let which = if requested.is_some() {
                    "Optional"
                } else {
                    "Input"
                };
                return invalid(format!(
                    "mean(): could not infer output dtype. {which} dtype must be either a floating \
                     point or complex dtype. Got: {}",
                    super::pointwise::type_name(d)
                ));
            }
            d
        }
        Kind::Extreme | Kind::MaxMin => x.dtype,
        Kind::ArgExtreme => DType::Int64,
        Kind::Moment => {
            if !(x.dtype.is_floating_point() || x.dtype.is_complex()) {
                return invalid("std and var only support floating point and complex dtypes");
            }
            to_real(x.dtype)
        }
        Kind::Logical if x.dtype == DType::UInt8 => DType::UInt8,
        Kind::Logical => DType::Bool,
        Kind::LogSumExp if is_integral_or_bool(x.dtype) => c.ctx.default_dtype,
        Kind::LogSumExp => x.dtype,
    };
    if kind == Kind::ArgExtreme && x.dtype == DType::Bool {
        return invalid(format!("{}(): does not support bool input", c.name));
    }
    if matches!(kind, Kind::Extreme | Kind::MaxMin | Kind::ArgExtreme) {
        check_nonempty(c.name, x, &mask, full)?;
    }
    let differentiable = !matches!(kind, Kind::ArgExtreme | Kind::Logical);
    if differentiable && c.grad(x.dtype, &[x]) && !(dtype.is_floating_point() || dtype.is_complex())
    {
        return invalid(format!(
            "Autograd not support dtype: {}",
            super::pointwise::type_name(dtype)
        ));
    }
    let values = x.fresh(dtype, sizes.clone(), differentiable && c.grad(dtype, &[x]));
    if kind == Kind::MaxMin && !full {
        let indices = x.fresh(DType::Int64, sizes, false);
        return Ok(NodeMeta::Tuple(vec![values.meta(), indices.meta()]));
    }
    Ok(values.meta())
}
