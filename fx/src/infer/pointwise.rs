//! Elementwise ops: unary math, binary arithmetic and comparisons with broadcasting and type
//! promotion, `where`, `clamp`, `masked_fill`, and their in-place forms.
//!
//! Python numbers take part in promotion (see `promote`) but not in the layout; the output's
//! layout follows the tensor operands (see `layout::elementwise_strides`). An in-place op returns
//! its first argument unchanged in geometry, after checking that the result fits it.

use super::args::common_device;
use super::layout::{broadcast_all, elementwise_strides, has_internal_overlap, preserved_strides};
use super::promote::{can_cast, is_integral_or_bool, Promotion, ScalarKind};
use super::{invalid, Call, InferError, InferResult, Spelling, Tensor, Value};
use crate::meta::DType;

/// What a unary op does to the dtype.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum UnaryDtype {
    /// Math defined on reals: integer and bool inputs compute in the default float dtype.
    ToFloat,
    /// Keeps the input's dtype.
    Same,
    /// Always bool (`logical_not`).
    Bool,
    /// Integer and bool only (`bitwise_not`).
    Bits,
}

const TO_FLOAT: &[&str] = &[
    "sigmoid",
    "tanh",
    "exp",
    "exp2",
    "expm1",
    "log",
    "log2",
    "log10",
    "log1p",
    "sin",
    "cos",
    "tan",
    "asin",
    "acos",
    "atan",
    "sinh",
    "cosh",
    "sqrt",
    "rsqrt",
    "erf",
    "erfc",
    "reciprocal",
];
const SAME: &[&str] = &[
    "relu", "abs", "neg", "floor", "ceil", "round", "trunc", "gelu", "silu", "sign",
];

/// The unary op a spelling names, with whether it writes in place.
fn unary_op(c: &Call) -> Option<(&'static str, UnaryDtype, bool)> {
    let (base, inplace) = match c.spelling {
        Spelling::Operator => (
            match c.name {
                "neg" => "neg",
                "abs" => "abs",
                "invert" => "bitwise_not",
                "pos" => "positive",
                _ => return None,
            },
            false,
        ),
        _ => {
            let n = c.name;
            let n = match n {
                "__neg__" => "neg",
                "__abs__" => "abs",
                "__invert__" => "bitwise_not",
                "__pos__" => "positive",
                _ => n,
            };
            // Aliases (`negative_`, `torch.special.expit`) are the catalog's.
            match n.strip_suffix('_') {
                Some(b) if !b.ends_with('_') => (crate::ops::unalias(b), true),
                _ => (crate::ops::unalias(n), false),
            }
        }
    };
    let kind = if TO_FLOAT.contains(&base) {
        UnaryDtype::ToFloat
    } else if SAME.contains(&base) || base == "positive" {
        UnaryDtype::Same
    } else if base == "logical_not" {
        UnaryDtype::Bool
    } else if base == "bitwise_not" {
        UnaryDtype::Bits
    } else {
        return None;
    };
    let name = [TO_FLOAT, SAME, &["positive", "logical_not", "bitwise_not"]]
        .concat()
        .into_iter()
        .find(|n| *n == base)?;
    Some((name, kind, inplace))
}

/// How a binary op turns the promoted dtype into its result dtype.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum BinKind {
    Add,
    Sub,
    Mul,
    Div,
    FloorDiv,
    Remainder,
    Pow,
    Compare,
    Logical,
    Bitwise,
    MaxMin,
}

/// A binary op: its kind, whether its operands arrive reversed (`__rsub__`), whether it writes
/// in place.
fn binary_op(c: &Call) -> Option<(BinKind, bool, bool)> {
    use BinKind::*;
    let n = c.name;
    if c.spelling == Spelling::Operator {
        let (n, inplace) = match n.strip_prefix('i') {
            Some(rest) if rest != "nvert" && !n.starts_with("is") => (rest, true),
            _ => (n, false),
        };
        let kind = match n {
            "add" => Add,
            "sub" => Sub,
            "mul" => Mul,
            "truediv" => Div,
            "floordiv" => FloorDiv,
            "mod" => Remainder,
            "pow" => Pow,
            "eq" | "ne" | "lt" | "le" | "gt" | "ge" => Compare,
            "and_" | "or_" | "xor" => Bitwise,
            _ => return None,
        };
        if inplace && kind == Compare {
            return None;
        }
        return Some((kind, false, inplace));
    }
    if c.spelling == Spelling::Special {
        return None;
    }
    let (n, reflected, inplace) =
        if let Some(d) = n.strip_prefix("__").and_then(|d| d.strip_suffix("__")) {
            if let Some(r) = d.strip_prefix('r').filter(|r| !matches!(*r, "shift")) {
                (r, true, false)
            } else if let Some(i) = d.strip_prefix('i').filter(|i| *i != "nvert") {
                (i, false, true)
            } else {
                (d, false, false)
            }
        } else if let Some(b) = n.strip_suffix('_') {
            (b, false, true)
        } else {
            (n, false, false)
        };
    let kind = match crate::ops::unalias(n) {
        "add" => Add,
        "sub" => Sub,
        "mul" => Mul,
        "div" | "truediv" => Div,
        "floor_divide" | "floordiv" => FloorDiv,
        "remainder" | "fmod" | "mod" => Remainder,
        "pow" => Pow,
        "eq" | "ne" | "lt" | "le" | "gt" | "ge" => Compare,
        "logical_and" | "logical_or" | "logical_xor" => Logical,
        "bitwise_and" | "bitwise_or" | "bitwise_xor" | "and" | "or" | "xor" => Bitwise,
        "maximum" | "minimum" | "fmax" | "fmin" => MaxMin,
        // `torch.min(x, y)`, `x.max(other=y)`: torch's overload with a tensor operand is the
        // elementwise `minimum`/`maximum`, not a reduction (so it broadcasts, and a symbolic
        // size meets the pointwise rules instead of no rule: T5's relative position buckets
        // broke the graph on every call).
        "max" | "min" if !reflected && !inplace && tensor_other(c) => MaxMin,
        _ => return None,
    };
    // Method spellings only: `torch.add_` does not exist, and dunder reflections are methods.
    if (inplace || reflected) && c.spelling != Spelling::Method {
        return None;
    }
    Some((kind, reflected, inplace))
}

/// Whether the call's second operand (`other`, positional or by keyword) is a tensor.
fn tensor_other(c: &Call) -> bool {
    let other = c
        .args
        .get(1)
        .or_else(|| c.kwargs.iter().find(|(k, _)| k == "other").map(|(_, a)| a));
    other.is_some_and(|a| matches!(Value::of_arg(c.graph, a), Ok(Value::Tensor(_))))
}

pub(super) fn infer(c: &Call) -> Option<InferResult> {
    if let Some((name, kind, inplace)) = unary_op(c) {
        return Some(unary(c, name, kind, inplace));
    }
    if let Some((kind, reflected, inplace)) = binary_op(c) {
        return Some(binary(c, kind, reflected, inplace));
    }
    let base = c.name.strip_suffix('_').unwrap_or(c.name);
    let inplace = base.len() != c.name.len();
    let r = match base {
        "where" if !inplace => where_(c),
        "clamp" | "clip" | "clamp_min" | "clamp_max" => clamp(c, base, inplace),
        "masked_fill" if c.spelling == Spelling::Method || !inplace => masked_fill(c, inplace),
        "fill" | "zero" if inplace && c.spelling == Spelling::Method => fill(c),
        "copy" if inplace && c.spelling == Spelling::Method => copy(c),
        _ => return None,
    };
    Some(r)
}

/// An operand of an elementwise op.
enum Operand<'a> {
    Tensor(&'a Tensor),
    Scalar(ScalarKind),
}

fn operand(v: &Value) -> Result<Operand<'_>, InferError> {
    Ok(match v {
        Value::Tensor(t) => Operand::Tensor(t),
        Value::Int(_) => Operand::Scalar(ScalarKind::Int),
        Value::Float(_) => Operand::Scalar(ScalarKind::Float),
        Value::Bool(_) => Operand::Scalar(ScalarKind::Bool),
        _ => return Err(InferError::Unsupported),
    })
}

/// When an elementwise op converts inputs to its computation dtype before looping. The copy
/// (`.to(dtype)`) compacts a gappy input's layout, which changes the output's layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Convert {
    /// Inputs are read as they are.
    Never,
    /// On CPU only, mismatched inputs are copied first (GPU loops cast on the fly).
    OnCpu(DType),
    /// The op itself copies mismatched inputs on every device (`where`, `clamp` with numbers).
    Always(DType),
}

/// Shape, layout and device of an elementwise op over `operands` (Python numbers included, as
/// they break torch's same-shape fast path), and the tensors among them.
struct Geometry<'a> {
    sizes: Vec<i64>,
    strides: Vec<i64>,
    device: crate::meta::Device,
    tensors: Vec<&'a Tensor>,
}

/// `convert[i]` says how operand `i` is read.
fn geometry<'a>(operands: &[Operand<'a>], convert: &[Convert]) -> Result<Geometry<'a>, InferError> {
    let tensors: Vec<&Tensor> = operands
        .iter()
        .filter_map(|o| match o {
            Operand::Tensor(t) => Some(*t),
            Operand::Scalar(_) => None,
        })
        .collect();
    if tensors.is_empty() {
        return Err(InferError::Unsupported);
    }
    let sizes = broadcast_all(tensors.iter().map(|t| t.sizes.as_slice()))?;
    let device = common_device(&tensors)?;
    let cpu = device.kind == "cpu";
    let layouts: Vec<(Vec<i64>, Vec<i64>)> = operands
        .iter()
        .zip(convert)
        .map(|(o, c)| match (o, *c) {
            (Operand::Tensor(t), Convert::OnCpu(d)) if cpu && d != t.dtype => {
                (t.sizes.clone(), preserved_strides(&t.sizes, &t.strides))
            }
            (Operand::Tensor(t), Convert::Always(d)) if d != t.dtype => {
                (t.sizes.clone(), preserved_strides(&t.sizes, &t.strides))
            }
            (Operand::Tensor(t), _) => (t.sizes.clone(), t.strides.clone()),
            (Operand::Scalar(_), _) => (vec![], vec![]),
        })
        .collect();
    let inputs: Vec<(&[i64], &[i64])> = layouts
        .iter()
        .map(|(a, b)| (a.as_slice(), b.as_slice()))
        .collect();
    let strides = elementwise_strides(&sizes, &inputs);
    Ok(Geometry {
        sizes,
        strides,
        device,
        tensors,
    })
}

fn promote(c: &Call, operands: &[Operand]) -> Result<DType, InferError> {
    let mut p = Promotion::new(c.ctx.default_dtype);
    for o in operands {
        match o {
            Operand::Tensor(t) => p.tensor(t.dtype, t.ndim()),
            Operand::Scalar(k) => p.scalar(*k),
        }
    }
    p.result()?.ok_or(InferError::Unsupported)
}

/// The in-place form's result: the written tensor, after checking that the functional result
/// would fit it in shape and dtype.
fn write_into(
    c: &Call,
    dst: &Tensor,
    sizes: &[i64],
    dtype: DType,
    others: &[&Tensor],
) -> InferResult {
    if sizes != dst.sizes.as_slice() {
        return invalid(format!(
            "output with shape {} doesn't match the broadcast shape {}",
            dst.shape_str(),
            super::args::shape_str(sizes)
        ));
    }
    if !can_cast(dtype, dst.dtype) {
        return invalid(format!(
            "result type {} can't be cast to the desired output type {}",
            type_name(dtype),
            type_name(dst.dtype)
        ));
    }
    if has_internal_overlap(&dst.sizes, &dst.strides) {
        return invalid(
            "unsupported operation: more than one element of the written-to tensor refers to a \
             single memory location. Please clone() the tensor before performing the operation.",
        );
    }
    let mut out = dst.clone();
    out.requires_grad = dst.requires_grad || c.grad(dst.dtype, others);
    Ok(out.meta())
}

fn python_type(v: &Value) -> &'static str {
    match v {
        Value::Int(_) => "int",
        Value::Float(_) => "float",
        Value::Bool(_) => "bool",
        _ => "object",
    }
}

/// torch's capitalised scalar type names, used in its messages.
pub(crate) fn type_name(d: DType) -> &'static str {
    match d {
        DType::Bool => "Bool",
        DType::UInt8 => "Byte",
        DType::Int8 => "Char",
        DType::Int16 => "Short",
        DType::Int32 => "Int",
        DType::Int64 => "Long",
        DType::Float16 => "Half",
        DType::BFloat16 => "BFloat16",
        DType::Float32 => "Float",
        DType::Float64 => "Double",
        DType::Complex64 => "ComplexFloat",
        DType::Complex128 => "ComplexDouble",
    }
}

fn unary(c: &Call, name: &str, kind: UnaryDtype, inplace: bool) -> InferResult {
    let params: &[&'static str] = match (c.spelling, name) {
        (_, "round") => &["input", "*", "decimals"],
        (Spelling::Functional, "gelu") => &["input", "approximate"],
        (_, "gelu") => &["input", "*", "approximate"],
        (Spelling::Functional, "relu" | "silu") => &["input", "inplace"],
        _ => &["input"],
    };
    let b = c.bind(params)?;
    let x = b.tensor("input")?;
    // Complex inputs follow other rules (`abs` is real-valued, `relu`/`floor`/`sign` raise):
    // the meta run answers.
    if x.dtype.is_complex() {
        return Err(InferError::Unsupported);
    }
    if name == "gelu" && !matches!(b.str("approximate")?, None | Some("none" | "tanh")) {
        return Err(InferError::Unsupported);
    }
    let inplace = inplace || (params.contains(&"inplace") && b.bool_or("inplace", false)?);
    let dtype = match kind {
        UnaryDtype::ToFloat if is_integral_or_bool(x.dtype) => c.ctx.default_dtype,
        UnaryDtype::ToFloat | UnaryDtype::Same => x.dtype,
        UnaryDtype::Bool => DType::Bool,
        UnaryDtype::Bits if is_integral_or_bool(x.dtype) => x.dtype,
        UnaryDtype::Bits => return Err(InferError::Unsupported),
    };
    if x.dtype == DType::Bool && kind == UnaryDtype::Same {
        match name {
            "neg" => invalid(
                "Negation, the `-` operator, on a bool tensor is not supported. If you are trying \
                 to invert a mask, use the `~` or `logical_not()` operator instead.",
            ),
            "positive" => invalid("The `+` operator, on a bool tensor is not supported."),
            "relu" => invalid("Boolean inputs not supported for relu"),
            _ => Ok(()),
        }?;
    }
    if name == "positive" {
        // `+x` returns `x` itself.
        return Ok(x.clone().meta());
    }
    if inplace {
        return write_into(c, x, &x.sizes, dtype, &[]);
    }
    // Float math on integers converts its input first.
    let convert = if kind == UnaryDtype::ToFloat {
        Convert::OnCpu(dtype)
    } else {
        Convert::Never
    };
    let strides = geometry(&[Operand::Tensor(x)], &[convert])?.strides;
    let requires_grad =
        matches!(kind, UnaryDtype::ToFloat | UnaryDtype::Same) && c.grad(dtype, &[x]);
    Ok(Tensor {
        dtype,
        device: x.device.clone(),
        sizes: x.sizes.clone(),
        strides,
        requires_grad,
    }
    .meta())
}

fn binary(c: &Call, kind: BinKind, reflected: bool, inplace: bool) -> InferResult {
    use BinKind::*;
    let second = if kind == Pow { "exponent" } else { "other" };
    let params: &[&'static str] = match kind {
        Add | Sub => &["input", "other", "*", "alpha"],
        Div => &["input", "other", "*", "rounding_mode"],
        Pow if c.spelling == Spelling::Torch => &["input", "exponent"],
        _ => &["input", second],
    };
    let b = c.bind(params)?;
    let (first, other) = match (b.get("input"), b.get(second)) {
        (Some(x), Some(y)) => (x, y),
        _ => return Err(InferError::Unsupported),
    };
    let (lhs, rhs) = if reflected {
        (other, first)
    } else {
        (first, other)
    };
    let operands = [operand(lhs)?, operand(rhs)?];
    // `maximum`, `logical_and` and friends take tensors only.
    if matches!(kind, MaxMin | Logical) {
        if let Some(v) = [lhs, rhs].into_iter().find(|v| v.tensor().is_none()) {
            return invalid(format!(
                "{}(): argument 'other' must be Tensor, not {}",
                c.name,
                python_type(v)
            ));
        }
    }
    let common = promote(c, &operands)?;
    if common.is_complex() && matches!(kind, MaxMin | FloorDiv | Remainder | Compare) {
        return Err(InferError::Unsupported);
    }
    let is_bool = |o: &Operand| match o {
        Operand::Tensor(t) => t.dtype == DType::Bool,
        Operand::Scalar(k) => *k == ScalarKind::Bool,
    };
    let dtype =
        match kind {
            Sub if operands.iter().all(is_bool) => return invalid(
                "Subtraction, the `-` operator, with two bool tensors is not supported. Use the \
                 `^` or `logical_xor()` operator instead.",
            ),
            Sub if operands.iter().any(is_bool) => return invalid(
                "Subtraction, the `-` operator, with a bool tensor is not supported. If you are \
                 trying to invert a mask, use the `~` or `logical_not()` operator instead.",
            ),
            // A bool tensor to a bool scalar power stays bool (torch answers `x ** True` and
            // `x ** False` without a kernel); meta tensors say int64 there, so answer natively.
            Pow if common == DType::Bool
                && matches!(operands[1], Operand::Scalar(_))
                && !matches!(operands[0], Operand::Scalar(_)) =>
            {
                DType::Bool
            }
            // CPU has no other bool `pow` kernel, and meta tensors disagree with it on the dtype.
            Pow if common == DType::Bool => return Err(InferError::Unsupported),
            Add | Sub | Mul | Pow | MaxMin => common,
            Div => match b.str("rounding_mode")? {
                None if is_integral_or_bool(common) => c.ctx.default_dtype,
                None => common,
                Some("trunc" | "floor") if common == DType::Bool => {
                    return Err(InferError::Unsupported)
                }
                Some("trunc" | "floor") => common,
                Some(m) => {
                    return invalid(format!(
                    "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found \
                     '{m}'"
                ))
                }
            },
            FloorDiv | Remainder if common == DType::Bool => return Err(InferError::Unsupported),
            FloorDiv | Remainder => common,
            Compare | Logical => DType::Bool,
            Bitwise if is_integral_or_bool(common) => common,
            // No float kernels exist, but meta tensors accept floats: leave the verdict to torch.
            Bitwise => return Err(InferError::Unsupported),
        };
    if matches!(kind, Add | Sub) {
        check_alpha(b.get("alpha"), common)?;
    }
    let integer_division =
        matches!(kind, FloorDiv | Remainder) || (kind == Div && b.str("rounding_mode")?.is_some());
    if integer_division
        && is_integral_or_bool(dtype)
        && matches!(rhs, Value::Int(0) | Value::Bool(false))
    {
        return invalid("ZeroDivisionError");
    }
    if kind == Pow && !common.is_floating_point() && !common.is_complex() {
        if let Value::Int(e) = rhs {
            if *e < 0 {
                return invalid("Integers to negative integer powers are not allowed.");
            }
        }
    }
    // The dtype the loop computes in: true division of integers computes in floats.
    let computation = if kind == Div && dtype.is_floating_point() {
        dtype
    } else {
        common
    };
    // `pow(tensor, number)` is a unary loop over the base, which it copies to the result dtype
    // itself; other numbers are operands of the loop (as 0-d tensors).
    let geo = if kind == Pow && matches!(operands[1], Operand::Scalar(_)) {
        geometry(&operands[..1], &[Convert::Always(computation)])?
    } else {
        geometry(&operands, &[Convert::OnCpu(computation); 2])?
    };
    let differentiable = !matches!(kind, Compare | Logical | Bitwise);
    if inplace {
        let dst = first.tensor().ok_or(InferError::Unsupported)?;
        // In place, only the logical ops cut the autograd history (comparisons keep it).
        let others: Vec<&Tensor> = other
            .tensor()
            .filter(|_| kind != Logical)
            .into_iter()
            .collect();
        return write_into(c, dst, &geo.sizes, dtype, &others);
    }
    // `torch.pow(2, x)` allocates a row-major result rather than following `x`'s layout.
    let strides = if kind == Pow && matches!(operands[0], Operand::Scalar(_)) {
        super::layout::contiguous_strides(&geo.sizes)
    } else {
        geo.strides
    };
    let requires_grad = differentiable && c.grad(dtype, &geo.tensors);
    Ok(Tensor {
        dtype,
        device: geo.device,
        sizes: geo.sizes,
        strides,
        requires_grad,
    }
    .meta())
}

/// `alpha` scales `other` in `add`/`sub`; it may not carry a higher category than the result.
fn check_alpha(alpha: Option<&Value>, common: DType) -> Result<(), InferError> {
    match alpha {
        None | Some(Value::Int(_)) => Ok(()),
        Some(Value::Bool(_)) if common == DType::Bool => Ok(()),
        Some(Value::Bool(_)) => invalid("Boolean alpha only supported for Boolean results."),
        Some(Value::Float(_)) if !is_integral_or_bool(common) => Ok(()),
        Some(Value::Float(_)) => invalid(
            "For integral input tensors, argument alpha must not be a floating point number.",
        ),
        _ => Err(InferError::Unsupported),
    }
}

fn where_(c: &Call) -> InferResult {
    // `x.where(cond, y)` is `torch.where(cond, x, y)`.
    let params = crate::ops::positional_order(&["condition", "input", "other"], c.spelling);
    let b = c.bind(&params)?;
    let cond = b.tensor("condition")?;
    let (x, y) = match (b.get("input"), b.get("other")) {
        (Some(x), Some(y)) => (operand(x)?, operand(y)?),
        // `torch.where(cond)` is `nonzero`: its shape depends on the data.
        _ => return Err(InferError::Unsupported),
    };
    if !matches!(cond.dtype, DType::Bool | DType::UInt8) {
        return invalid(format!(
            "where expected condition to be a boolean tensor, but got a tensor with dtype {}",
            type_name(cond.dtype)
        ));
    }
    let operands = [Operand::Tensor(cond), x, y];
    let dtype = promote(c, &operands[1..])?;
    // `where` itself converts a uint8 condition to bool and the values to the result dtype.
    let geo = geometry(
        &operands,
        &[
            Convert::Always(DType::Bool),
            Convert::Always(dtype),
            Convert::Always(dtype),
        ],
    )?;
    let values: Vec<&Tensor> = geo.tensors[1..].to_vec();
    Ok(Tensor {
        dtype,
        device: geo.device,
        sizes: geo.sizes,
        strides: geo.strides,
        requires_grad: c.grad(dtype, &values),
    }
    .meta())
}

fn clamp(c: &Call, name: &str, inplace: bool) -> InferResult {
    let params: &[&'static str] = match name {
        "clamp_min" => &["input", "min"],
        "clamp_max" => &["input", "max"],
        _ => &["input", "min", "max"],
    };
    let b = c.bind(params)?;
    let x = b.tensor("input")?;
    let bounds: Vec<&Value> = ["min", "max"]
        .iter()
        .filter(|p| params.contains(p))
        .filter_map(|p| b.get(p))
        .collect();
    if bounds.is_empty() {
        return invalid("torch.clamp: At least one of 'min' or 'max' must not be None");
    }
    let tensor_bounds = bounds.iter().filter(|v| v.tensor().is_some()).count();
    if tensor_bounds != 0 && tensor_bounds != bounds.len() {
        return Err(InferError::Unsupported);
    }
    let mut operands = vec![Operand::Tensor(x)];
    for v in &bounds {
        operands.push(operand(v)?);
    }
    let dtype = promote(c, &operands)?;
    if dtype == DType::Bool || dtype.is_complex() {
        return Err(InferError::Unsupported);
    }
    // With number bounds only `input` is an operand of the elementwise loop.
    // Number bounds: `input` is copied to the result dtype and is the loop's only operand.
    let geo = if tensor_bounds == 0 {
        geometry(&operands[..1], &[Convert::Always(dtype)])?
    } else {
        geometry(&operands, &vec![Convert::OnCpu(dtype); operands.len()])?
    };
    if inplace {
        return write_into(c, x, &geo.sizes, dtype, &geo.tensors[1..]);
    }
    Ok(Tensor {
        dtype,
        device: geo.device,
        sizes: geo.sizes,
        strides: geo.strides,
        requires_grad: c.grad(dtype, &geo.tensors),
    }
    .meta())
}

fn masked_fill(c: &Call, inplace: bool) -> InferResult {
    let b = c.bind(&["input", "mask", "value"])?;
    let x = b.tensor("input")?;
    let mask = b.tensor("mask")?;
    let value = b.get("value").ok_or(InferError::Unsupported)?;
    if mask.dtype != DType::Bool {
        return invalid(format!(
            "masked_fill_ only supports boolean masks, but got mask with dtype {}",
            mask.dtype.torch_name()
        ));
    }
    let mut grads = vec![x];
    match value {
        Value::Tensor(v) if v.ndim() != 0 => {
            return invalid(format!(
                "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with {} \
                 dimension(s).",
                v.ndim()
            ))
        }
        Value::Tensor(v) => grads.push(v),
        Value::Int(_) | Value::Float(_) | Value::Bool(_) => {}
        _ => return Err(InferError::Unsupported),
    }
    let sizes = super::layout::broadcast_shapes(&x.sizes, &mask.sizes)?;
    if inplace {
        return write_into(c, x, &sizes, x.dtype, &grads[1..]);
    }
    common_device(&[x, mask])?;
    // The out-of-place form fills a row-major copy of the broadcast input.
    Ok(x.fresh(x.dtype, sizes, c.grad(x.dtype, &grads)).meta())
}

fn fill(c: &Call) -> InferResult {
    let params: &[&'static str] = if c.name == "zero_" {
        &["input"]
    } else {
        &["input", "value"]
    };
    let b = c.bind(params)?;
    let x = b.tensor("input")?;
    let mut others = Vec::new();
    if params.len() == 2 {
        match b.get("value") {
            Some(Value::Tensor(v)) if v.ndim() == 0 => others.push(v),
            Some(Value::Tensor(v)) => {
                return invalid(format!(
                    "fill_ only supports 0-dimension value tensor but got tensor with {} \
                     dimensions.",
                    v.ndim()
                ))
            }
            Some(Value::Int(_) | Value::Float(_) | Value::Bool(_)) => {}
            _ => return Err(InferError::Unsupported),
        }
    }
    write_into(c, x, &x.sizes, x.dtype, &others)
}

fn copy(c: &Call) -> InferResult {
    let b = c.bind(&["input", "src", "non_blocking"])?;
    let x = b.tensor("input")?;
    let src = b.tensor("src")?;
    let sizes = super::layout::broadcast_shapes(&x.sizes, &src.sizes)?;
    if sizes != x.sizes {
        return Err(InferError::Unsupported);
    }
    // `copy_` converts any dtype into any other, so only the shape is checked.
    write_into(c, x, &sizes, x.dtype, &[src])
}
