//! Pointwise lowerings: arithmetic with torch's type promotion and broadcasting, unary math, and
//! the activation decompositions (gelu, silu, hardswish, ...). Each builds a lazy tensor whose
//! loader is inlined into consumers.

use std::rc::Rc;

use fx::infer::promote::{Promotion, ScalarKind};
use fx::{Arg, DType};

use super::args::{self, fallback, LResult, Reject};
use super::checked::number_converts;
use super::symnum::SymNum;
use super::value::TensorVal;
use super::{LValue, Lowerer};
use crate::ir::{BinOp, BodyBuilder, Scalar, UnOp, ValId};
use crate::size::Size;

#[derive(Clone)]
pub enum Operand {
    T(TensorVal),
    S(Scalar),
    /// A Python int known only at run time: a symbolic int graph value (an int input made
    /// symbolic by automatic dynamic, a size, arithmetic on them), computed in the kernel from
    /// the symbols it reads. Promotes as a Python int.
    Sym(SymNum),
}

/// Whether torch converts this operand to `d` without its overflow error. Tensors are cast, never
/// checked. A symbolic int is unknown when lowering: it converts only where every int64 does.
pub(super) fn converts_to(o: &Operand, d: DType) -> bool {
    match o {
        Operand::T(_) => true,
        Operand::S(s) => number_converts(*s, d),
        // A float that is no int's value (`n / 2`) is not filled into an integer tensor.
        Operand::Sym(n) if n.is_fractional() => {
            matches!(d, DType::Float32 | DType::Float64 | DType::BFloat16)
        }
        Operand::Sym(_) => matches!(
            d,
            DType::Int64 | DType::Float32 | DType::Float64 | DType::BFloat16
        ),
    }
}

impl Operand {
    fn sizes(&self) -> &[Size] {
        match self {
            Operand::T(t) => &t.sizes,
            Operand::S(_) | Operand::Sym(_) => &[],
        }
    }
}

pub fn operand(l: &Lowerer, a: &Arg) -> LResult<Operand> {
    if let Some(n) = sym_operand(l, a) {
        return Ok(Operand::Sym(n));
    }
    Ok(match l.value(a)? {
        LValue::Tensor(t) => Operand::T(t),
        LValue::Scalar(s) => Operand::S(s),
        LValue::Tuple(_) => return fallback("tuple operand"),
    })
}

/// A symbolic int operand, computed in the kernel with Python's semantics for any sign of an
/// int input's symbol ([`SymNum`]: `//`, `%`, `max` and `min` included). `None` where a
/// divisor is not proved non-zero (the op falls back, and a symbolic graph declines).
fn sym_operand(l: &Lowerer, a: &Arg) -> Option<SymNum> {
    let Arg::Node(n) = a else {
        return None;
    };
    match &l.graph.node(*n).meta {
        fx::NodeMeta::SymInt(e) => SymNum::new(l.graph, e),
        fx::NodeMeta::SymFloat(e) => SymNum::new_float(l.graph, e),
        _ => None,
    }
}

/// torch's result dtype for these operands (tensors by rank tier, Python numbers by category).
pub fn promote(ops: &[&Operand]) -> LResult<DType> {
    let mut p = Promotion::new(DType::Float32);
    for o in ops {
        match o {
            Operand::T(t) => p.tensor(t.dtype, t.ndim()),
            Operand::S(Scalar::B(_)) => p.scalar(ScalarKind::Bool),
            Operand::Sym(n) if n.is_float() => p.scalar(ScalarKind::Float),
            Operand::S(Scalar::I(_)) | Operand::Sym(_) => p.scalar(ScalarKind::Int),
            Operand::S(Scalar::F(_)) => p.scalar(ScalarKind::Float),
        }
    }
    match p.result() {
        Ok(Some(d)) => Ok(d),
        _ => fallback("no promoted dtype"),
    }
}

/// torch's broadcast of shapes. A symbolic size is never 1 (sizes 0 and 1 specialize in the
/// shape environment), so the rule is structural: two symbolic sizes broadcast only when they
/// are the same polynomial (the trace guarded their equality and gave them one symbol).
pub fn broadcast(shapes: &[&[Size]]) -> LResult<Vec<Size>> {
    let n = shapes.iter().map(|s| s.len()).max().unwrap_or(0);
    let mut out = vec![Size::Const(1); n];
    for s in shapes {
        let lead = n - s.len();
        for (k, &d) in s.iter().enumerate() {
            let o = &mut out[lead + k];
            if *o == 1 {
                *o = d;
            } else if d != 1 && d != *o {
                return fallback(format!("shapes {shapes:?} do not broadcast"));
            }
        }
    }
    Ok(out)
}

/// A lazy tensor computing `f` over the operands broadcast together; operands are cast to
/// `compute` before `f` and the result cast to `out`.
pub fn pointwise(
    ops: &[Operand],
    compute: DType,
    out: DType,
    f: impl Fn(&mut BodyBuilder, &[ValId]) -> ValId + 'static,
) -> LResult<TensorVal> {
    if !ops.iter().any(|o| matches!(o, Operand::T(_))) {
        return fallback("no tensor operand");
    }
    let shapes: Vec<&[Size]> = ops.iter().map(|o| o.sizes()).collect();
    let sizes = broadcast(&shapes)?;
    let ops: Vec<Operand> = ops
        .iter()
        .map(|o| match o {
            Operand::T(t) => Operand::T(t.expand(&sizes)),
            s => s.clone(),
        })
        .collect();
    let cost = 1 + ops
        .iter()
        .map(|o| match o {
            Operand::T(t) => t.ops(),
            _ => 0,
        })
        .sum::<usize>();
    Ok(TensorVal::lazy(
        out,
        sizes,
        cost,
        Rc::new(move |b, idx| {
            let vals: Vec<ValId> = ops
                .iter()
                .map(|o| match o {
                    Operand::T(t) => {
                        let v = t.load(b, idx);
                        b.cast(v, compute)
                    }
                    Operand::S(s) => b.constant(*s, compute),
                    Operand::Sym(n) => {
                        let i = n.value(b);
                        b.cast(i, compute)
                    }
                })
                .collect();
            let r = f(b, &vals);
            b.cast(r, out)
        }),
    ))
}

/// The float dtype a float-only op computes in (`int_tensor.sin()` is float32).
fn float_of(d: DType) -> DType {
    if d.is_floating_point() {
        d
    } else {
        DType::Float32
    }
}

fn cf(b: &mut BodyBuilder, v: f64, like: ValId) -> ValId {
    let d = b.dtype(like);
    b.constant(Scalar::F(v), d)
}

pub fn unary(l: &Lowerer, x: &Arg, op: UnOp) -> LResult<TensorVal> {
    let x = operand(l, x)?;
    let d = match &x {
        Operand::T(t) => t.dtype,
        _ => return fallback("scalar operand"),
    };
    let keeps_int = matches!(
        op,
        UnOp::Abs | UnOp::Floor | UnOp::Ceil | UnOp::Round | UnOp::Trunc
    );
    let c = if keeps_int && !d.is_floating_point() {
        if d == DType::Bool {
            // torch has no abs/floor/ceil/round/trunc for bool: the host raises its error.
            return fallback(format!("{op:?} of bool"));
        }
        if op != UnOp::Abs {
            // Rounding an integer is the identity.
            return pointwise(&[x], d, d, |_, v| v[0]);
        }
        d
    } else {
        float_of(d)
    };
    pointwise(&[x], c, c, move |b, v| b.unary(op, v[0]))
}

pub fn neg(l: &Lowerer, x: &Arg) -> LResult<TensorVal> {
    let x = operand(l, x)?;
    let d = promote(&[&x])?;
    if d == DType::Bool {
        return fallback("negation of bool");
    }
    pointwise(&[x], d, d, |b, v| b.unary(UnOp::Neg, v[0]))
}

pub fn binary(l: &Lowerer, x: &Arg, y: &Arg, op: BinOp) -> LResult<TensorVal> {
    let (x, y) = (operand(l, x)?, operand(l, y)?);
    let d = promote(&[&x, &y])?;
    let c = match op {
        BinOp::Atan2 | BinOp::CopySign => float_of(d),
        BinOp::Fmod if !d.is_floating_point() => {
            return fallback("integer fmod (torch raises on zero divisors)")
        }
        BinOp::FloorDiv | BinOp::Rem if !d.is_floating_point() => {
            return fallback("integer division (torch raises on zero divisors)")
        }
        BinOp::And | BinOp::Or | BinOp::Xor if d.is_floating_point() => {
            return fallback("bitwise op on floats")
        }
        _ => d,
    };
    let out = if op.is_comparison() { DType::Bool } else { c };
    let c = if op == BinOp::Mul {
        // `s * x` is eager's `x.__rmul__(s)`: the number is the second operand there.
        match (&x, &y) {
            (Operand::Sym(_), Operand::T(_)) => scalar_tensor_opmath(l, &y, &x, c),
            _ => scalar_tensor_opmath(l, &x, &y, c),
        }
    } else {
        c
    };
    pointwise(&[x, y], c, out, move |b, v| b.binary(op, v[0], v[1]))
}

/// The dtype eager's CPU `mul` and true division compute `x op y` in, for a float16/bfloat16
/// result `d`. With `y` a 0-dim tensor of another dtype (`half_x * torch.tensor(0.1)`, a float32
/// `x.float().sum()` scaling a half tensor) the kernel reads `y`'s own value in float
/// (`original_scalar_value<opmath_t>`), where the generic path rounds it to `d` first: the
/// product then differs in the last bit in about a third of the elements. Only `y`'s position
/// is read so (a 0-dim `x` is rounded), and only on the CPU.
///
/// A Python number computed from sizes in the kernel (`x * d ** -0.5`, `x / n`; a `SymNum`)
/// is such a scalar too: eager wraps it as a 0-dim double tensor. Rounded to `d` first, a
/// fractional one (or an int past the half type's exact range) differs the same way.
fn scalar_tensor_opmath(l: &Lowerer, x: &Operand, y: &Operand, d: DType) -> DType {
    let reduced = matches!(d, DType::Float16 | DType::BFloat16);
    let x_full = matches!(x, Operand::T(t) if t.ndim() != 0);
    let y_scalar =
        matches!(y, Operand::T(t) if t.ndim() == 0 && t.dtype != d) || matches!(y, Operand::Sym(_));
    if reduced && x_full && y_scalar && l.target.cpu().is_some() {
        DType::Float32
    } else {
        d
    }
}

/// `x + alpha * y` (or `x - alpha * y`).
pub fn add(l: &Lowerer, x: &Arg, y: &Arg, alpha: Option<&Arg>, sub: bool) -> LResult<TensorVal> {
    let (x, y) = (operand(l, x)?, operand(l, y)?);
    let d = promote(&[&x, &y])?;
    let is_bool = |o: &Operand| match o {
        Operand::T(t) => t.dtype == DType::Bool,
        Operand::S(s) => matches!(s, Scalar::B(_)),
        Operand::Sym(_) => false,
    };
    // torch refuses subtraction with any bool operand; the host raises its error.
    if sub && (is_bool(&x) || is_bool(&y)) {
        return fallback("bool subtraction");
    }
    if matches!(alpha, Some(Arg::Float(_))) && !d.is_floating_point() {
        return fallback("float alpha for an integer result (torch raises)");
    }
    let alpha = match alpha {
        None => None,
        Some(Arg::Int(i)) => Some(Scalar::I(*i)),
        Some(Arg::Float(f)) => Some(Scalar::F(*f)),
        Some(_) => return fallback("alpha is not a number"),
    };
    if matches!(alpha, Some(a) if !number_converts(a, d)) {
        return fallback(format!("alpha torch does not convert to {d:?}"));
    }
    let op = if sub { BinOp::Sub } else { BinOp::Add };
    pointwise(&[x, y], d, d, move |b, v| {
        let yv = match alpha {
            Some(a) => {
                let ac = b.constant(a, d);
                b.binary(BinOp::Mul, v[1], ac)
            }
            None => v[1],
        };
        if d == DType::Bool {
            b.binary(BinOp::Or, v[0], yv)
        } else {
            b.binary(op, v[0], yv)
        }
    })
}

pub fn div(l: &Lowerer, x: &Arg, y: &Arg, mode: &str) -> LResult<TensorVal> {
    let (x, y) = (operand(l, x)?, operand(l, y)?);
    let d = promote(&[&x, &y])?;
    match mode {
        "none" => {
            let c = float_of(d);
            let compute = scalar_tensor_opmath(l, &x, &y, c);
            pointwise(&[x, y], compute, c, |b, v| b.binary(BinOp::Div, v[0], v[1]))
        }
        _ if !d.is_floating_point() => fallback("integer division with rounding"),
        // Eager's half-precision kernel truncates the quotient rounded to the storage dtype
        // (a float quotient of -19.99 is -20 in bfloat16, and truncates to -20, not -19).
        "trunc" => pointwise(&[x, y], d, d, |b, v| {
            let q = b.binary(BinOp::Div, v[0], v[1]);
            let q = b.round_to_storage(q);
            b.unary(UnOp::Trunc, q)
        }),
        "floor" if matches!(d, DType::Float16 | DType::BFloat16) => {
            pointwise(&[x, y], d, d, |b, v| half_floor_div(b, v[0], v[1]))
        }
        "floor" => pointwise(&[x, y], d, d, |b, v| b.binary(BinOp::FloorDiv, v[0], v[1])),
        m => fallback(format!("rounding_mode {m}")),
    }
}

/// `x / y` written with Python's operator. A number divided by a tensor goes through torch's
/// `Tensor.__rtruediv__`, which is `y.reciprocal() * x`: two roundings (the reciprocal stored in
/// `y`'s float dtype, then the product), where `torch.div(x, y)` rounds the quotient once. Eager
/// and torch.compile (which traces `__rtruediv__`) agree on the two roundings; one correctly
/// rounded division differs from them in the last bit (`-3 / int_tensor` at -7: 0.42857143 where
/// eager gives 0.42857146).
pub fn operator_div(l: &Lowerer, x: &Arg, y: &Arg) -> LResult<TensorVal> {
    let (num, den) = (operand(l, x)?, operand(l, y)?);
    let Operand::T(t) = &den else {
        return div(l, x, y, "none");
    };
    if matches!(num, Operand::T(_)) {
        return div(l, x, y, "none");
    }
    let c = float_of(t.dtype);
    pointwise(&[den, num], c, c, |b, v| {
        let r = b.unary(UnOp::Reciprocal, v[0]);
        let r = b.round_to_storage(r);
        b.binary(BinOp::Mul, r, v[1])
    })
}

/// Python floor division of half-precision values as eager's CPU kernel computes it: torch's
/// floating floor-division steps (fmod, subtract, divide, adjust toward -inf, round half up)
/// each rounded to the storage dtype. Computing them in float gives another integer in about 1%
/// of cases once the quotient passes 256 (bfloat16) or 2048 (float16).
fn half_floor_div(b: &mut BodyBuilder, x: ValId, y: ValId) -> ValId {
    let d = b.dtype(x);
    let zero = b.constant(Scalar::F(0.0), d);
    let one = b.constant(Scalar::F(1.0), d);
    let half = b.constant(Scalar::F(0.5), d);
    let modulo = b.binary(BinOp::Fmod, x, y);
    let modulo = b.round_to_storage(modulo);
    let diff = b.binary(BinOp::Sub, x, modulo);
    let diff = b.round_to_storage(diff);
    let div = b.binary(BinOp::Div, diff, y);
    let div = b.round_to_storage(div);
    // One step toward -inf when the remainder's sign differs from the divisor's.
    let mod_nonzero = b.binary(BinOp::Ne, modulo, zero);
    let y_neg = b.binary(BinOp::Lt, y, zero);
    let mod_neg = b.binary(BinOp::Lt, modulo, zero);
    let signs_differ = b.binary(BinOp::Ne, y_neg, mod_neg);
    let adjust = b.binary(BinOp::And, mod_nonzero, signs_differ);
    let lowered = b.binary(BinOp::Sub, div, one);
    let lowered = b.round_to_storage(lowered);
    let div = b.where_(adjust, lowered, div);
    let fl = b.unary(UnOp::Floor, div);
    let frac = b.binary(BinOp::Sub, div, fl);
    let round_up = b.binary(BinOp::Gt, frac, half);
    let up = b.binary(BinOp::Add, fl, one);
    let fl = b.where_(round_up, up, fl);
    // A zero quotient takes the sign of the true quotient; a zero divisor gives x / y.
    let quotient = b.binary(BinOp::Div, x, y);
    let signed_zero = b.binary(BinOp::CopySign, zero, quotient);
    let div_zero = b.binary(BinOp::Eq, div, zero);
    let fl = b.where_(div_zero, signed_zero, fl);
    let y_zero = b.binary(BinOp::Eq, y, zero);
    b.where_(y_zero, quotient, fl)
}

pub fn pow(l: &Lowerer, x: &Arg, y: &Arg) -> LResult<TensorVal> {
    let (x, y) = (operand(l, x)?, operand(l, y)?);
    let d = promote(&[&x, &y])?;
    if !converts_to(&x, d) || !converts_to(&y, d) {
        return fallback(format!("pow of a number torch does not convert to {d:?}"));
    }
    if !d.is_floating_point() {
        // Small constant exponents are exact repeated products (as torch computes them).
        if let Operand::S(Scalar::I(e @ 0..=4)) = y {
            return pointwise(&[x], d, d, move |b, v| {
                let mut r = b.constant(Scalar::I(1), d);
                for _ in 0..e {
                    r = b.binary(BinOp::Mul, r, v[0]);
                }
                r
            });
        }
        return fallback("integer pow");
    }
    // torch special-cases these exponents (exactly, so must we).
    if let Operand::S(s) = y {
        let e = s.as_f64();
        let special = [2.0, 3.0, 0.5, -0.5, -1.0, -2.0, 1.0];
        // float16 alone computes x ** 0.5 and x ** -0.5 with pow: pow(-inf, 0.5) is +inf and
        // pow(-0.0, 0.5) is +0.0, where sqrt gives NaN and -0.0. Written out, not as a pow
        // call, whose vector form need not honour those special cases.
        if d == DType::Float16 && (e == 0.5 || e == -0.5) {
            return pointwise(&[x], d, d, move |b, v| {
                let x = v[0];
                let ninf = b.constant(Scalar::F(f64::NEG_INFINITY), d);
                let inf = b.constant(Scalar::F(f64::INFINITY), d);
                let zero = b.constant(Scalar::F(0.0), d);
                let is_ninf = b.binary(BinOp::Eq, x, ninf);
                let root = b.unary(UnOp::Sqrt, x);
                let root = b.where_(is_ninf, inf, root);
                // -0.0 + 0.0 is +0.0.
                let root = b.binary(BinOp::Add, root, zero);
                if e == 0.5 {
                    root
                } else {
                    b.unary(UnOp::Reciprocal, root)
                }
            });
        }
        if special.contains(&e) {
            return pointwise(&[x], d, d, move |b, v| {
                let x = v[0];
                match e {
                    1.0 => x,
                    2.0 => b.binary(BinOp::Mul, x, x),
                    3.0 => {
                        let sq = b.binary(BinOp::Mul, x, x);
                        b.binary(BinOp::Mul, sq, x)
                    }
                    0.5 => b.unary(UnOp::Sqrt, x),
                    -0.5 => b.unary(UnOp::Rsqrt, x),
                    -1.0 => b.unary(UnOp::Reciprocal, x),
                    _ => {
                        let sq = b.binary(BinOp::Mul, x, x);
                        b.unary(UnOp::Reciprocal, sq)
                    }
                }
            });
        }
    }
    pointwise(&[x, y], d, d, |b, v| b.binary(BinOp::Pow, v[0], v[1]))
}

pub fn sigmoid(l: &Lowerer, x: &Arg) -> LResult<TensorVal> {
    let x = operand(l, x)?;
    let c = float_of(promote(&[&x])?);
    pointwise(&[x], c, c, sigmoid_body)
}

fn sigmoid_body(b: &mut BodyBuilder, v: &[ValId]) -> ValId {
    let one = cf(b, 1.0, v[0]);
    let n = b.unary(UnOp::Neg, v[0]);
    let e = b.unary(UnOp::Exp, n);
    let den = b.binary(BinOp::Add, one, e);
    b.binary(BinOp::Div, one, den)
}

pub fn relu(l: &Lowerer, x: &Arg) -> LResult<TensorVal> {
    let x = operand(l, x)?;
    let d = promote(&[&x])?;
    if d == DType::Bool {
        return fallback("relu of bool");
    }
    let zeros = orders_zeros(l);
    pointwise(&[x], d, d, move |b, v| {
        let z = b.constant(Scalar::I(0), b.dtype(v[0]));
        clamp_by_number(b, v[0], Some(z), None, zeros)
    })
}

/// Whether number clamps order `-0.0` below `+0.0` on this target: eager's CUDA kernels clamp
/// with the device's `fmaxf`/`fminf`, its CPU kernels by strict comparisons.
fn orders_zeros(l: &Lowerer) -> bool {
    l.target.cpu().is_none()
}

/// Clamping by Python numbers, as torch's `clamp(Tensor, Scalar, Scalar)` and the activations
/// built on it (`relu`, `relu6`, `hardtanh`) do it: `x` is kept unless it compares strictly
/// beyond a bound, so NaN stays NaN, `-0.0` clamped at `0.0` stays `-0.0`, and a NaN bound
/// leaves `x` unchanged. Tensor bounds differ (NaN-propagating `maximum`/`minimum`, a tie gives
/// the bound) and use [`BinOp::Max`]/[`BinOp::Min`].
///
/// `zeros` (CUDA, see [`orders_zeros`]): a float tie between zeros goes as the device's
/// `fmaxf`/`fminf` decide it, `-0.0 < +0.0`: at a lower bound the result is `+0.0` unless both
/// are `-0.0` (their sum), at an upper bound `-0.0` unless both are `+0.0` (the negated sum of
/// their negations). So `relu(-0.0)` is `+0.0` there, as eager on CUDA gives.
fn clamp_by_number(
    b: &mut BodyBuilder,
    x: ValId,
    lo: Option<ValId>,
    hi: Option<ValId>,
    zeros: bool,
) -> ValId {
    let zeros = zeros && b.dtype(x).is_floating_point();
    let mut r = x;
    if let Some(lo) = lo {
        let below = b.binary(BinOp::Lt, r, lo);
        if zeros {
            let sum = b.binary(BinOp::Add, r, lo);
            r = zero_tie(b, r, lo, sum);
        }
        r = b.where_(below, lo, r);
    }
    if let Some(hi) = hi {
        let above = b.binary(BinOp::Lt, hi, r);
        if zeros {
            let (nr, nh) = (b.unary(UnOp::Neg, r), b.unary(UnOp::Neg, hi));
            let sum = b.binary(BinOp::Add, nr, nh);
            let tie = b.unary(UnOp::Neg, sum);
            r = zero_tie(b, r, hi, tie);
        }
        r = b.where_(above, hi, r);
    }
    r
}

/// `tie` where `r` and `bound` are equal zeros, else `r`.
fn zero_tie(b: &mut BodyBuilder, r: ValId, bound: ValId, tie: ValId) -> ValId {
    let zero = b.constant(Scalar::F(0.0), b.dtype(r));
    let eq = b.binary(BinOp::Eq, r, bound);
    let is_zero = b.binary(BinOp::Eq, r, zero);
    let both = b.binary(BinOp::And, eq, is_zero);
    b.where_(both, tie, r)
}

pub fn square(l: &Lowerer, x: &Arg) -> LResult<TensorVal> {
    let x = operand(l, x)?;
    let d = promote(&[&x])?;
    let d = if d == DType::Bool { DType::Int64 } else { d };
    pointwise(&[x], d, d, |b, v| b.binary(BinOp::Mul, v[0], v[0]))
}

pub fn isnan(l: &Lowerer, x: &Arg) -> LResult<TensorVal> {
    let x = operand(l, x)?;
    let d = promote(&[&x])?;
    pointwise(&[x], d, DType::Bool, move |b, v| {
        if d.is_floating_point() {
            b.unary(UnOp::IsNan, v[0])
        } else {
            b.constant(Scalar::B(false), DType::Bool)
        }
    })
}

/// `isinf`, `isfinite`, `isposinf`, `isneginf`.
pub fn isinf(l: &Lowerer, x: &Arg, which: &str) -> LResult<TensorVal> {
    let x = operand(l, x)?;
    let d = promote(&[&x])?;
    let which = which.to_string();
    pointwise(&[x], d, DType::Bool, move |b, v| {
        if !d.is_floating_point() {
            return b.constant(Scalar::B(which == "isfinite"), DType::Bool);
        }
        let inf = b.constant(Scalar::F(f64::INFINITY), d);
        let ninf = b.constant(Scalar::F(f64::NEG_INFINITY), d);
        match which.as_str() {
            "isposinf" => b.binary(BinOp::Eq, v[0], inf),
            "isneginf" => b.binary(BinOp::Eq, v[0], ninf),
            "isinf" => {
                let a = b.unary(UnOp::Abs, v[0]);
                b.binary(BinOp::Eq, a, inf)
            }
            _ => {
                // Finite: not NaN (x == x) and not infinite.
                let a = b.unary(UnOp::Abs, v[0]);
                b.binary(BinOp::Lt, a, inf)
            }
        }
    })
}

/// `sign` (`sgn` for real tensors): -1, 0 or 1, NaN kept; a bool is its own sign.
pub fn sign(l: &Lowerer, x: &Arg) -> LResult<TensorVal> {
    let x = operand(l, x)?;
    let d = promote(&[&x])?;
    pointwise(&[x], d, d, move |b, v| {
        if d == DType::Bool {
            v[0]
        } else {
            b.unary(UnOp::Sign, v[0])
        }
    })
}

/// `x - trunc(x)` (floats only: torch raises for integers).
pub fn frac(l: &Lowerer, x: &Arg) -> LResult<TensorVal> {
    activation(l, x, |b, x| {
        let t = b.unary(UnOp::Trunc, x);
        b.binary(BinOp::Sub, x, t)
    })
}

/// `nan_to_num`: NaN to `nan`, infinities to `posinf`/`neginf` (default: the dtype's extremes).
pub fn nan_to_num(
    l: &Lowerer,
    x: &Arg,
    nan: f64,
    posinf: Option<f64>,
    neginf: Option<f64>,
) -> LResult<TensorVal> {
    let x = operand(l, x)?;
    let d = promote(&[&x])?;
    if !d.is_floating_point() {
        return pointwise(&[x], d, d, |_, v| v[0]);
    }
    let max = match d {
        DType::Float32 => f32::MAX as f64,
        DType::Float64 => f64::MAX,
        DType::Float16 => 65504.0,
        DType::BFloat16 => f64::from(f32::from_bits(0x7f7f_0000)),
        _ => return fallback("nan_to_num dtype"),
    };
    let (pos, neg) = (posinf.unwrap_or(max), neginf.unwrap_or(-max));
    pointwise(&[x], d, d, move |b, v| {
        let x = v[0];
        let inf = b.constant(Scalar::F(f64::INFINITY), d);
        let ninf = b.constant(Scalar::F(f64::NEG_INFINITY), d);
        let (n, p, m) = (
            b.constant(Scalar::F(nan), d),
            b.constant(Scalar::F(pos), d),
            b.constant(Scalar::F(neg), d),
        );
        let isnan = b.unary(UnOp::IsNan, x);
        let ispos = b.binary(BinOp::Eq, x, inf);
        let isneg = b.binary(BinOp::Eq, x, ninf);
        let r = b.where_(isneg, m, x);
        let r = b.where_(ispos, p, r);
        b.where_(isnan, n, r)
    })
}

pub fn logical_not(l: &Lowerer, x: &Arg) -> LResult<TensorVal> {
    let x = operand(l, x)?;
    pointwise(&[x], DType::Bool, DType::Bool, |b, v| {
        b.unary(UnOp::Not, v[0])
    })
}

pub fn bitwise_not(l: &Lowerer, x: &Arg) -> LResult<TensorVal> {
    let x = operand(l, x)?;
    let d = promote(&[&x])?;
    if d.is_floating_point() {
        return fallback("bitwise not of floats");
    }
    let op = if d == DType::Bool {
        UnOp::Not
    } else {
        UnOp::BitNot
    };
    pointwise(&[x], d, d, move |b, v| b.unary(op, v[0]))
}

pub fn logical(l: &Lowerer, x: &Arg, y: &Arg, op: BinOp) -> LResult<TensorVal> {
    let (x, y) = (operand(l, x)?, operand(l, y)?);
    pointwise(&[x, y], DType::Bool, DType::Bool, move |b, v| {
        b.binary(op, v[0], v[1])
    })
}

pub fn where_(l: &Lowerer, c: &Arg, x: &Arg, y: &Arg) -> LResult<TensorVal> {
    let (c, x, y) = (operand(l, c)?, operand(l, x)?, operand(l, y)?);
    if matches!(&c, Operand::T(t) if t.dtype != DType::Bool) {
        return fallback("where with a non-bool condition");
    }
    let d = promote(&[&x, &y])?;
    if !converts_to(&x, d) || !converts_to(&y, d) {
        return fallback(format!(
            "where with a number torch does not convert to {d:?}"
        ));
    }
    pointwise(&[c, x, y], d, d, move |b, v| {
        let cb = b.cast(v[0], DType::Bool);
        b.where_(cb, v[1], v[2])
    })
}

/// `x.masked_fill(mask, value)`: `value` (a number or a 0-d tensor) converted to `x`'s dtype
/// where `mask` is true. Unlike `where`, the result keeps `x`'s dtype.
pub fn masked_fill(l: &Lowerer, x: &Arg, m: &Arg, v: &Arg, inplace: bool) -> LResult<TensorVal> {
    let (x, m, v) = (operand(l, x)?, operand(l, m)?, operand(l, v)?);
    let (Operand::T(xt), Operand::T(mt)) = (&x, &m) else {
        return fallback("masked_fill of a non-tensor");
    };
    if mt.dtype != DType::Bool {
        return fallback("masked_fill with a non-bool mask");
    }
    if matches!(&v, Operand::T(t) if t.ndim() != 0) {
        return fallback("masked_fill with a value of more than 0 dims");
    }
    if inplace && broadcast(&[&xt.sizes, &mt.sizes])? != xt.sizes {
        return fallback("in-place masked_fill whose mask is larger than the input");
    }
    let d = xt.dtype;
    // torch refuses values that do not convert to the input's dtype without overflow
    // (`checked`); a 0-d tensor value is lowered only of the input's dtype.
    let converts = match &v {
        Operand::T(t) => d.is_floating_point() || t.dtype == d,
        o => converts_to(o, d),
    };
    if !converts {
        return fallback("masked_fill value that may not convert to the input's dtype");
    }
    pointwise(&[m, x, v], d, d, move |b, v| {
        let cb = b.cast(v[0], DType::Bool);
        b.where_(cb, v[2], v[1])
    })
}

pub fn clamp(l: &Lowerer, x: &Arg, lo: Option<&Arg>, hi: Option<&Arg>) -> LResult<TensorVal> {
    let x = operand(l, x)?;
    let lo = lo.map(|a| operand(l, a)).transpose()?;
    let hi = hi.map(|a| operand(l, a)).transpose()?;
    if lo.is_none() && hi.is_none() {
        return fallback("clamp without bounds");
    }
    let mut all = vec![&x];
    all.extend(lo.iter());
    all.extend(hi.iter());
    let d = promote(&all)?;
    let scalar_bound = lo
        .iter()
        .chain(hi.iter())
        .any(|o| matches!(o, Operand::S(_) | Operand::Sym(_)));
    if d == DType::Bool && scalar_bound {
        return fallback("clamp of bool by a number (torch raises)");
    }
    if !lo.iter().chain(hi.iter()).all(|o| converts_to(o, d)) {
        return fallback(format!("clamp by a number torch does not convert to {d:?}"));
    }
    let (has_lo, has_hi) = (lo.is_some(), hi.is_some());
    // torch picks the overload from the bounds: numbers clamp with number semantics, tensors
    // (0-dim included) with NaN-propagating `maximum`/`minimum`.
    let by_number = !lo
        .iter()
        .chain(hi.iter())
        .any(|o| matches!(o, Operand::T(_)));
    let mut ops = vec![x.clone()];
    ops.extend(lo);
    ops.extend(hi);
    let zeros = orders_zeros(l);
    pointwise(&ops, d, d, move |b, v| {
        let lo = has_lo.then(|| v[1]);
        let hi = has_hi.then(|| v[if has_lo { 2 } else { 1 }]);
        if by_number {
            return clamp_by_number(b, v[0], lo, hi, zeros);
        }
        let mut r = v[0];
        if let Some(lo) = lo {
            r = b.binary(BinOp::Max, r, lo);
        }
        if let Some(hi) = hi {
            r = b.binary(BinOp::Min, r, hi);
        }
        r
    })
}

/// Float-only activations share this shape: one float operand, one body.
fn activation(
    l: &Lowerer,
    x: &Arg,
    f: impl Fn(&mut BodyBuilder, ValId) -> ValId + 'static,
) -> LResult<TensorVal> {
    let x = operand(l, x)?;
    let d = promote(&[&x])?;
    if !d.is_floating_point() {
        return fallback("activation of a non-float tensor");
    }
    pointwise(&[x], d, d, move |b, v| f(b, v[0]))
}

pub fn silu(l: &Lowerer, x: &Arg) -> LResult<TensorVal> {
    activation(l, x, |b, x| {
        let s = sigmoid_body(b, &[x]);
        b.binary(BinOp::Mul, x, s)
    })
}

pub fn mish(l: &Lowerer, x: &Arg) -> LResult<TensorVal> {
    activation(l, x, |b, x| {
        let sp = softplus_body(b, x, 1.0, 20.0);
        let t = b.unary(UnOp::Tanh, sp);
        b.binary(BinOp::Mul, x, t)
    })
}

/// hardswish `x * relu6(x + 3) / 6`, or hardsigmoid `relu6(x + 3) / 6`.
pub fn hardswish(l: &Lowerer, x: &Arg, times_x: bool) -> LResult<TensorVal> {
    activation(l, x, move |b, x| {
        let three = cf(b, 3.0, x);
        let zero = cf(b, 0.0, x);
        let six = cf(b, 6.0, x);
        let s = b.binary(BinOp::Add, x, three);
        let s = b.binary(BinOp::Max, s, zero);
        let s = b.binary(BinOp::Min, s, six);
        let s = if times_x {
            b.binary(BinOp::Mul, x, s)
        } else {
            s
        };
        b.binary(BinOp::Div, s, six)
    })
}

pub fn hardtanh(l: &Lowerer, x: &Arg, lo: f64, hi: f64) -> LResult<TensorVal> {
    let xo = operand(l, x)?;
    let d = promote(&[&xo])?;
    if d == DType::Bool {
        return fallback("hardtanh of bool");
    }
    let zeros = orders_zeros(l);
    pointwise(&[xo], d, d, move |b, v| {
        let lo = b.constant(Scalar::F(lo), d);
        let hi = b.constant(Scalar::F(hi), d);
        clamp_by_number(b, v[0], Some(lo), Some(hi), zeros)
    })
}

pub fn leaky_relu(l: &Lowerer, x: &Arg, slope: f64) -> LResult<TensorVal> {
    activation(l, x, move |b, x| {
        let zero = cf(b, 0.0, x);
        let s = cf(b, slope, x);
        let pos = b.binary(BinOp::Gt, x, zero);
        let neg = b.binary(BinOp::Mul, x, s);
        b.where_(pos, x, neg)
    })
}

pub fn elu(l: &Lowerer, x: &Arg, alpha: f64) -> LResult<TensorVal> {
    activation(l, x, move |b, x| {
        let zero = cf(b, 0.0, x);
        let a = cf(b, alpha, x);
        let pos = b.binary(BinOp::Gt, x, zero);
        let e = b.unary(UnOp::Expm1, x);
        let neg = b.binary(BinOp::Mul, a, e);
        b.where_(pos, x, neg)
    })
}

fn softplus_body(b: &mut BodyBuilder, x: ValId, beta: f64, threshold: f64) -> ValId {
    let bt = cf(b, beta, x);
    let th = cf(b, threshold, x);
    let xb = b.binary(BinOp::Mul, x, bt);
    let big = b.binary(BinOp::Gt, xb, th);
    let e = b.unary(UnOp::Exp, xb);
    let lp = b.unary(UnOp::Log1p, e);
    let soft = b.binary(BinOp::Div, lp, bt);
    b.where_(big, x, soft)
}

pub fn softplus(l: &Lowerer, x: &Arg, beta: f64, threshold: f64) -> LResult<TensorVal> {
    activation(l, x, move |b, x| softplus_body(b, x, beta, threshold))
}

/// gelu, exact (`approximate='none'`) or tanh.
pub fn gelu(l: &Lowerer, x: &Arg, approximate: &str) -> LResult<TensorVal> {
    let tanh = match approximate {
        "none" => false,
        "tanh" => true,
        a => return fallback(format!("gelu approximate={a}")),
    };
    activation(l, x, move |b, x| {
        let half = cf(b, 0.5, x);
        let one = cf(b, 1.0, x);
        let inner = if tanh {
            let k = cf(b, (2.0 / std::f64::consts::PI).sqrt(), x);
            let c = cf(b, 0.044715, x);
            let x2 = b.binary(BinOp::Mul, x, x);
            let x3 = b.binary(BinOp::Mul, x2, x);
            let cx3 = b.binary(BinOp::Mul, c, x3);
            let s = b.binary(BinOp::Add, x, cx3);
            let ks = b.binary(BinOp::Mul, k, s);
            b.unary(UnOp::Tanh, ks)
        } else {
            let r = cf(b, std::f64::consts::FRAC_1_SQRT_2, x);
            let xs = b.binary(BinOp::Mul, x, r);
            b.unary(UnOp::Erf, xs)
        };
        let s = b.binary(BinOp::Add, one, inner);
        let hx = b.binary(BinOp::Mul, half, x);
        b.binary(BinOp::Mul, hx, s)
    })
}

/// `x.to(dtype)`, `x.float()`, `x.type(dtype)`: casts, and `to(device)` onto the kernels' own
/// device.
pub fn convert(l: &Lowerer, name: &str, a: &[Arg], kw: &[(String, Arg)]) -> LResult<TensorVal> {
    let x = l.tensor(
        a.first()
            .ok_or_else(|| Reject::Fallback("no input".into()))?,
    )?;
    let mut target = match name {
        "float" => Some(DType::Float32),
        "double" => Some(DType::Float64),
        "long" => Some(DType::Int64),
        "int" => Some(DType::Int32),
        "short" => Some(DType::Int16),
        "char" => Some(DType::Int8),
        "byte" => Some(DType::UInt8),
        "bool" => Some(DType::Bool),
        _ => None,
    };
    // A device here is the kernels' own: a `to` whose input or output sits on another device
    // runs through torch before it gets here (`Lowerer::off_device`), and a graph's tensors use
    // one device of a kind (`backend::cuda::placement`), so `x.to(device)` moves nothing.
    let home = |kind: &str| kind == l.home;
    // Every overload of `to` takes `non_blocking` then `copy` as its trailing bools (by
    // position or keyword). Nothing is asynchronous on one device, so `non_blocking` may be
    // anything; `copy=True` (a fresh tensor even when nothing changes) goes through torch.
    let mut bools = 0;
    let positional = a[1..].iter().map(|v| (None, v));
    let keyword = kw.iter().map(|(k, v)| (Some(k.as_str()), v));
    for (key, arg) in positional.chain(keyword) {
        let non_blocking = match key {
            Some(k) => k == "non_blocking",
            None if matches!(arg, Arg::Bool(_)) => {
                bools += 1;
                bools == 1
            }
            None => false,
        };
        match arg {
            Arg::DType(d) => target = Some(*d),
            Arg::Device(dev) if home(&dev.kind) => {}
            Arg::Str(s) if home(s.split(':').next().unwrap_or_default()) => {}
            Arg::Bool(false) | Arg::None => {}
            Arg::Bool(true) if non_blocking => {}
            Arg::Node(n) => match l.value(&Arg::Node(*n))? {
                LValue::Tensor(other) => target = Some(other.dtype),
                _ => return fallback("to() with a non-tensor node"),
            },
            other => return fallback(format!("{name}() argument {other:?}")),
        }
    }
    for (k, _) in kw {
        if !matches!(
            k.as_str(),
            "dtype" | "device" | "non_blocking" | "copy" | "other"
        ) {
            return fallback(format!("{name}() keyword {k}"));
        }
    }
    let d = target.unwrap_or(x.dtype);
    if d == x.dtype {
        return Ok(x);
    }
    if !l.target.supports_dtype(d) {
        return fallback(format!("cast to {d:?}"));
    }
    let _ = args::as_int;
    pointwise(&[Operand::T(x)], d, d, |_, v| v[0])
}
