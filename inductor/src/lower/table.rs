//! The lowering table: a call normalized by the op catalog ([`fx::ops::canonical`]: `torch.add`,
//! `x.add`, `x.add_`, `x.__radd__`, `operator.add` and `operator.iadd` are one op) is dispatched
//! to its lowering with the signature of the namespace it was called through (`torch.softmax(input, dim)`
//! and `F.softmax(input, dim=None, _stacklevel=3, dtype=None)` bind differently).

use fx::Arg;

use super::args::{self, bind, LResult};
use super::{
    elementwise as ew, extern_ops as ext, factory, index_maps, indexing, pool, reduce as red, scan,
    views, LValue, Lowerer,
};
use crate::ir::{BinOp, UnOp};

pub use fx::ops::{canonical, Canon, Spelling};

fn unary_op(name: &str) -> Option<UnOp> {
    Some(match name {
        "abs" | "absolute" => UnOp::Abs,
        "exp" => UnOp::Exp,
        "exp2" => UnOp::Exp2,
        "expm1" => UnOp::Expm1,
        "log" => UnOp::Log,
        "log2" => UnOp::Log2,
        "log10" => UnOp::Log10,
        "log1p" => UnOp::Log1p,
        "sqrt" => UnOp::Sqrt,
        "rsqrt" => UnOp::Rsqrt,
        "sin" => UnOp::Sin,
        "cos" => UnOp::Cos,
        "tan" => UnOp::Tan,
        "asin" | "arcsin" => UnOp::Asin,
        "acos" | "arccos" => UnOp::Acos,
        "atan" | "arctan" => UnOp::Atan,
        "sinh" => UnOp::Sinh,
        "cosh" => UnOp::Cosh,
        "tanh" => UnOp::Tanh,
        "erf" => UnOp::Erf,
        "floor" => UnOp::Floor,
        "ceil" => UnOp::Ceil,
        "trunc" | "fix" => UnOp::Trunc,
        "reciprocal" => UnOp::Reciprocal,
        _ => return None,
    })
}

fn binary_op(name: &str) -> Option<BinOp> {
    Some(match name {
        "mul" | "multiply" => BinOp::Mul,
        "maximum" => BinOp::Max,
        "minimum" => BinOp::Min,
        "eq" => BinOp::Eq,
        "ne" | "not_equal" => BinOp::Ne,
        "lt" | "less" => BinOp::Lt,
        "le" | "less_equal" => BinOp::Le,
        "gt" | "greater" => BinOp::Gt,
        "ge" | "greater_equal" => BinOp::Ge,
        "bitwise_and" => BinOp::And,
        "bitwise_or" => BinOp::Or,
        "bitwise_xor" => BinOp::Xor,
        "atan2" | "arctan2" => BinOp::Atan2,
        "fmod" => BinOp::Fmod,
        "copysign" => BinOp::CopySign,
        "floor_divide" => BinOp::FloorDiv,
        "remainder" => BinOp::Rem,
        _ => return None,
    })
}

/// The spatial rank of a pooling op's name (`max_pool3d` → 3).
fn spatial(name: &str) -> usize {
    match name.as_bytes()[name.len() - 2] {
        b'1' => 1,
        b'3' => 3,
        _ => 2,
    }
}

/// Lowers a canonical call.
pub fn lower(l: &mut Lowerer, c: &Canon, a: &[Arg], kw: &[(String, Arg)]) -> LResult<LValue> {
    use Spelling::*;
    let swapped;
    let a = if c.reflected && a.len() == 2 {
        swapped = [a[1].clone(), a[0].clone()];
        &swapped[..]
    } else {
        a
    };
    let n = c.name.as_str();
    let t = |v: LResult<crate::lower::value::TensorVal>| v.map(LValue::Tensor);
    // `torch.nn.functional.linear` is `torch._C._nn.linear`, which the tracer records as
    // `torch.linear` (`scaled_dot_product_attention` and `avg_pool2d` likewise); `torch.conv2d`
    // and the `torch.*_pool*d` ops have the functional signature (less `return_indices`).
    if c.spelling == Functional
        || (c.spelling == Torch
            && matches!(
                n,
                "linear"
                    | "gelu"
                    | "softplus"
                    | "conv1d"
                    | "conv2d"
                    | "conv3d"
                    | "scaled_dot_product_attention"
                    | "max_pool1d"
                    | "max_pool2d"
                    | "max_pool3d"
                    | "avg_pool1d"
                    | "avg_pool2d"
                    | "avg_pool3d"
                    | "adaptive_avg_pool1d"
            ))
    {
        return functional(l, n, a, kw);
    }
    if let Some(op) = unary_op(n) {
        let b = bind(&["input"], a, kw)?;
        return t(ew::unary(l, b.req("input")?, op));
    }
    if let Some(op) = binary_op(n) {
        let b = bind(&["input", "other"], a, kw)?;
        return t(ew::binary(l, b.req("input")?, b.req("other")?, op));
    }
    match n {
        "add" | "sub" | "rsub" => {
            let b = bind(&["input", "other", "*", "alpha"], a, kw)?;
            let alpha = b.get("alpha");
            let (x, y) = (b.req("input")?, b.req("other")?);
            t(match n {
                "add" => ew::add(l, x, y, alpha, false),
                "sub" => ew::add(l, x, y, alpha, true),
                _ => ew::add(l, y, x, alpha, true).and_then(|v| {
                    if alpha.is_some() {
                        args::fallback("rsub with alpha")
                    } else {
                        Ok(v)
                    }
                }),
            })
        }
        "div" | "divide" | "true_divide" => {
            let b = bind(&["input", "other", "*", "rounding_mode"], a, kw)?;
            let mode = b.str_or("rounding_mode", "none")?;
            let (x, y) = (b.req("input")?, b.req("other")?);
            if c.spelling == Operator {
                return t(ew::operator_div(l, x, y));
            }
            t(ew::div(l, x, y, &mode))
        }
        "pow" => {
            let b = bind(&["input", "exponent"], a, kw)?;
            t(ew::pow(l, b.req("input")?, b.req("exponent")?))
        }
        "neg" | "negative" => t(ew::neg(l, bind(&["input"], a, kw)?.req("input")?)),
        "pos" | "positive" | "clone" | "contiguous" | "detach" | "alias" => {
            let b = bind(&["input", "*", "memory_format"], a, kw)?;
            if let Some(Arg::TorchAttr(f)) = b.get("memory_format") {
                if f != "torch.contiguous_format" && f != "torch.preserve_format" {
                    return args::fallback(format!("memory_format {f}"));
                }
            }
            t(l.tensor(b.req("input")?))
        }
        "sigmoid" => t(ew::sigmoid(l, bind(&["input"], a, kw)?.req("input")?)),
        "relu" => t(ew::relu(l, bind(&["input"], a, kw)?.req("input")?)),
        "square" => t(ew::square(l, bind(&["input"], a, kw)?.req("input")?)),
        "round" => {
            let b = bind(&["input", "*", "decimals"], a, kw)?;
            if b.int_or("decimals", 0)? != 0 {
                return args::fallback("round with decimals");
            }
            t(ew::unary(l, b.req("input")?, UnOp::Round))
        }
        "isnan" => t(ew::isnan(l, bind(&["input"], a, kw)?.req("input")?)),
        "isinf" | "isfinite" | "isposinf" | "isneginf" => {
            t(ew::isinf(l, bind(&["input"], a, kw)?.req("input")?, n))
        }
        "sign" | "sgn" => t(ew::sign(l, bind(&["input"], a, kw)?.req("input")?)),
        "frac" => t(ew::frac(l, bind(&["input"], a, kw)?.req("input")?)),
        "nan_to_num" => {
            let b = bind(&["input", "nan", "posinf", "neginf"], a, kw)?;
            let opt = |k: &str| -> LResult<Option<f64>> {
                Ok(match b.get(k) {
                    None => None,
                    Some(_) => Some(b.float_or(k, 0.0)?),
                })
            };
            t(ew::nan_to_num(
                l,
                b.req("input")?,
                b.float_or("nan", 0.0)?,
                opt("posinf")?,
                opt("neginf")?,
            ))
        }
        "logical_not" => t(ew::logical_not(l, bind(&["input"], a, kw)?.req("input")?)),
        "bitwise_not" => t(ew::bitwise_not(l, bind(&["input"], a, kw)?.req("input")?)),
        "logical_and" | "logical_or" | "logical_xor" => {
            let b = bind(&["input", "other"], a, kw)?;
            let op = match n {
                "logical_and" => BinOp::And,
                "logical_or" => BinOp::Or,
                _ => BinOp::Xor,
            };
            t(ew::logical(l, b.req("input")?, b.req("other")?, op))
        }
        "where" => {
            const SIG: &[&str] = &["condition", "input", "other"];
            let a = fx::ops::function_positionals(SIG, c.spelling, a);
            let b = bind(SIG, &a, kw)?;
            t(ew::where_(
                l,
                b.req("condition")?,
                b.req("input")?,
                b.req("other")?,
            ))
        }
        "masked_fill" => {
            let b = bind(&["input", "mask", "value"], a, kw)?;
            t(ew::masked_fill(
                l,
                b.req("input")?,
                b.req("mask")?,
                b.req("value")?,
                c.inplace,
            ))
        }
        "clamp" | "clip" => {
            let b = bind(&["input", "min", "max"], a, kw)?;
            t(ew::clamp(l, b.req("input")?, b.get("min"), b.get("max")))
        }
        "clamp_min" => {
            let b = bind(&["input", "min"], a, kw)?;
            t(ew::clamp(l, b.req("input")?, Some(b.req("min")?), None))
        }
        "clamp_max" => {
            let b = bind(&["input", "max"], a, kw)?;
            t(ew::clamp(l, b.req("input")?, None, Some(b.req("max")?)))
        }
        "to" | "type" | "float" | "double" | "long" | "int" | "bool" | "short" | "char"
        | "byte" => t(ew::convert(l, n, a, kw)),
        "sum" | "mean" | "prod" | "amax" | "amin" | "max" | "min" | "all" | "any" | "var"
        | "std" | "logsumexp" | "argmax" | "argmin" => red::reduction_call(l, n, a, kw),
        "softmax" | "log_softmax" => {
            let b = bind(&["input", "dim", "*", "dtype"], a, kw)
                .or_else(|_| bind(&["input", "dim", "dtype"], a, kw))?;
            let dim = b.int_or("dim", i64::MIN)?;
            if dim == i64::MIN {
                return args::fallback("softmax without dim");
            }
            t(red::softmax(
                l,
                b.req("input")?,
                dim,
                b.dtype("dtype")?,
                n == "log_softmax",
            ))
        }
        "mm" | "bmm" | "matmul" => {
            let b = if c.spelling == Operator {
                bind(&["input", "other"], a, kw)?
            } else {
                bind(&["input", "other"], a, kw).or_else(|_| bind(&["input", "mat2"], a, kw))?
            };
            let other = b.get("other").or(b.get("mat2"));
            let other =
                other.ok_or_else(|| args::Reject::Fallback("missing second operand".into()))?;
            t(ext::matmul(l, b.req("input")?, other))
        }
        "addmm" => {
            let b = bind(&["input", "mat1", "mat2", "*", "beta", "alpha"], a, kw)?;
            t(ext::addmm(
                l,
                b.req("input")?,
                b.req("mat1")?,
                b.req("mat2")?,
                b.float_or("beta", 1.0)?,
                b.float_or("alpha", 1.0)?,
            ))
        }
        "cat" | "concat" | "concatenate" => indexing::cat(l, a, kw),
        "stack" => indexing::stack(l, a, kw),
        "index_select" => t(indexing::index_select(l, a, kw)),
        "arange" => t(factory::arange(l, a, kw)),
        "eye" => t(factory::eye(l, a, kw)),
        "tensor" => t(factory::tensor(l, a, kw)),
        "zeros" | "ones" | "full" | "new_zeros" | "new_ones" | "new_full" | "zeros_like"
        | "ones_like" | "full_like" => t(factory::fill(l, n, a, kw)),
        "cumsum" => t(scan::cumsum(l, a, kw)),
        "diff" => t(scan::diff(l, a, kw)),
        // Index maps over (symbolic) sizes (session 29): `lower/index_maps.rs`.
        "repeat" | "unflatten" | "unfold" | "diagonal" | "gather" => index_maps::lower(l, c, a, kw),
        _ => views::lower_view(l, c, a, kw),
    }
}

/// `torch.nn.functional.*`, whose signatures differ from the `torch.*` ones.
fn functional(l: &mut Lowerer, n: &str, a: &[Arg], kw: &[(String, Arg)]) -> LResult<LValue> {
    let t = |v: LResult<crate::lower::value::TensorVal>| v.map(LValue::Tensor);
    match n {
        "relu" | "silu" | "hardswish" | "hardsigmoid" | "relu6" | "mish" => {
            let x = bind(&["input", "inplace"], a, kw)?.req("input")?;
            t(match n {
                "relu" => ew::relu(l, x),
                "silu" => ew::silu(l, x),
                "hardswish" => ew::hardswish(l, x, true),
                "hardsigmoid" => ew::hardswish(l, x, false),
                "relu6" => ew::hardtanh(l, x, 0.0, 6.0),
                _ => ew::mish(l, x),
            })
        }
        "sigmoid" | "tanh" => {
            let x = bind(&["input"], a, kw)?.req("input")?;
            t(if n == "sigmoid" {
                ew::sigmoid(l, x)
            } else {
                ew::unary(l, x, UnOp::Tanh)
            })
        }
        "gelu" => {
            let b = bind(&["input", "approximate"], a, kw)?;
            t(ew::gelu(
                l,
                b.req("input")?,
                &b.str_or("approximate", "none")?,
            ))
        }
        "leaky_relu" => {
            let b = bind(&["input", "negative_slope", "inplace"], a, kw)?;
            t(ew::leaky_relu(
                l,
                b.req("input")?,
                b.float_or("negative_slope", 0.01)?,
            ))
        }
        "hardtanh" => {
            let b = bind(&["input", "min_val", "max_val", "inplace"], a, kw)?;
            t(ew::hardtanh(
                l,
                b.req("input")?,
                b.float_or("min_val", -1.0)?,
                b.float_or("max_val", 1.0)?,
            ))
        }
        "elu" => {
            let b = bind(&["input", "alpha", "inplace"], a, kw)?;
            t(ew::elu(l, b.req("input")?, b.float_or("alpha", 1.0)?))
        }
        "softplus" => {
            let b = bind(&["input", "beta", "threshold"], a, kw)?;
            t(ew::softplus(
                l,
                b.req("input")?,
                b.float_or("beta", 1.0)?,
                b.float_or("threshold", 20.0)?,
            ))
        }
        "scaled_dot_product_attention" => t(super::attention::sdpa_call(l, a, kw)),
        "dropout" => {
            let b = bind(&["input", "p", "training", "inplace"], a, kw)?;
            if b.bool_or("training", true)? && b.float_or("p", 0.5)? != 0.0 {
                return args::fallback("dropout in training mode");
            }
            t(l.tensor(b.req("input")?))
        }
        "softmax" | "log_softmax" => {
            let b = bind(&["input", "dim", "_stacklevel", "dtype"], a, kw)?;
            let x = l.tensor(b.req("input")?)?;
            let dim = match b.get("dim") {
                Some(d) => args::as_int(d)
                    .ok_or_else(|| args::Reject::Fallback("dim is not an int".into()))?,
                // torch's legacy implicit dim (`_get_softmax_dim`).
                None => {
                    if matches!(x.ndim(), 0 | 1 | 3) {
                        0
                    } else {
                        1
                    }
                }
            };
            t(red::softmax(
                l,
                b.req("input")?,
                dim,
                b.dtype("dtype")?,
                n == "log_softmax",
            ))
        }
        "layer_norm" => {
            let b = bind(
                &["input", "normalized_shape", "weight", "bias", "eps"],
                a,
                kw,
            )?;
            let shape = l
                .size_list(b.req("normalized_shape")?)
                .ok_or_else(|| args::Reject::Fallback("normalized_shape".into()))?;
            t(red::layer_norm(
                l,
                b.req("input")?,
                &shape,
                b.get("weight"),
                b.get("bias"),
                b.float_or("eps", 1e-5)?,
            ))
        }
        "rms_norm" => {
            let b = bind(&["input", "normalized_shape", "weight", "eps"], a, kw)?;
            let shape = l
                .size_list(b.req("normalized_shape")?)
                .ok_or_else(|| args::Reject::Fallback("normalized_shape".into()))?;
            let eps = match b.get("eps") {
                None => None,
                Some(_) => Some(b.float_or("eps", 0.0)?),
            };
            t(red::rms_norm(
                l,
                b.req("input")?,
                &shape,
                b.get("weight"),
                eps,
            ))
        }
        "batch_norm" => {
            let b = bind(fx::ops::schema::F_BATCH_NORM, a, kw)?;
            t(red::batch_norm(
                l,
                b.req("input")?,
                b.get("running_mean"),
                b.get("running_var"),
                b.get("weight"),
                b.get("bias"),
                b.bool_or("training", false)?,
                b.float_or("eps", 1e-5)?,
            ))
        }
        "linear" => {
            let b = bind(&["input", "weight", "bias"], a, kw)?;
            t(ext::linear(
                l,
                b.req("input")?,
                b.req("weight")?,
                b.get("bias"),
            ))
        }
        "max_pool1d" | "max_pool2d" | "max_pool3d" => t(pool::max_pool(l, spatial(n), a, kw)),
        "avg_pool1d" | "avg_pool2d" | "avg_pool3d" => t(pool::avg_pool(l, spatial(n), a, kw)),
        "adaptive_avg_pool1d" | "adaptive_avg_pool2d" | "adaptive_avg_pool3d" => {
            // Global average pooling (output all 1s, as in classifier heads) is a mean over the
            // spatial dims.
            let b = bind(&["input", "output_size"], a, kw)?;
            let k = spatial(n);
            let global = match b.req("output_size")? {
                Arg::Int(1) => true,
                other => args::int_list(other).is_some_and(|v| v == vec![1; k]),
            };
            let x = l.tensor(b.req("input")?)?;
            if global && (x.ndim() == k + 1 || x.ndim() == k + 2) && x.dtype.is_floating_point() {
                let nd = x.ndim();
                let dims: Vec<usize> = (nd - k..nd).collect();
                return t(red::mean(l, &x, &dims, true, x.dtype));
            }
            pool::adaptive(l, k, false, a, kw)
        }
        "adaptive_max_pool1d" | "adaptive_max_pool2d" | "adaptive_max_pool3d" => {
            pool::adaptive(l, spatial(n), true, a, kw)
        }
        "embedding" => t(indexing::embedding(l, a, kw)),
        "interpolate" => t(index_maps::interpolate(l, a, kw)),
        "conv1d" | "conv2d" | "conv3d" => {
            let b = bind(
                &[
                    "input", "weight", "bias", "stride", "padding", "dilation", "groups",
                ],
                a,
                kw,
            )?;
            t(ext::conv(l, &b, n))
        }
        _ => args::fallback(format!("no lowering for torch.nn.functional.{n}")),
    }
}
