//! The reference interpreter: runs an [`IrGraph`] node by node, one element at a time, with no
//! fusion. It is the oracle the generated kernels are tested against, so it is written for
//! obviousness: every value is computed in its own dtype with Rust's (the system libm's) math.

use fx::DType;

use crate::entity::EntityVec;
use crate::error::RunError;
use crate::host::Host;
use crate::index::Idx;
use crate::ir::{BinOp, Body, BodyOps, BufId, Gather, IrGraph, IrNode, ReduceOp, Scalar, UnOp};
use crate::runtime::Runtime;
use crate::size::expect_consts;

/// A value of a body, in its dtype.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum V {
    F32(f32),
    F64(f64),
    I(i64),
    B(bool),
}

extern "C" {
    fn erff(x: f32) -> f32;
    fn erf(x: f64) -> f64;
}

impl V {
    fn f64(self) -> f64 {
        match self {
            V::F32(v) => v as f64,
            V::F64(v) => v,
            V::I(v) => v as f64,
            V::B(v) => v as i64 as f64,
        }
    }

    fn i64(self) -> i64 {
        match self {
            V::F32(v) => v as i64,
            V::F64(v) => v as i64,
            V::I(v) => v,
            V::B(v) => v as i64,
        }
    }

    fn truthy(self) -> bool {
        match self {
            V::F32(v) => v != 0.0,
            V::F64(v) => v != 0.0,
            V::I(v) => v != 0,
            V::B(v) => v,
        }
    }
}

/// Wraps an integer to a narrower dtype's range, as C's conversion does.
fn wrap(v: i64, d: DType) -> i64 {
    match d {
        DType::Int8 => v as i8 as i64,
        DType::UInt8 => v as u8 as i64,
        DType::Int16 => v as i16 as i64,
        DType::Int32 => v as i32 as i64,
        _ => v,
    }
}

/// float16 bits to f32 (exact).
pub fn f16_to_f32(h: u16) -> f32 {
    let sign = ((h as u32) & 0x8000) << 16;
    let exp = (h >> 10) & 0x1f;
    let mant = (h & 0x3ff) as u32;
    let mag = match exp {
        0 => (mant as f32) * f32::from_bits(0x3380_0000), // mant * 2^-24
        0x1f => return f32::from_bits(sign | 0x7f80_0000 | (mant << 13)),
        e => f32::from_bits(((e as u32 + 112) << 23) | (mant << 13)),
    };
    f32::from_bits(sign | mag.to_bits())
}

/// f32 to float16 bits, rounding to nearest even; NaN becomes a quiet NaN keeping its sign.
pub fn f32_to_f16(f: f32) -> u16 {
    let sign = ((f.to_bits() >> 16) & 0x8000) as u16;
    let a = f.abs();
    if a.is_nan() {
        return sign | 0x7e00;
    }
    if a >= 65520.0 {
        return sign | 0x7c00;
    }
    if a < f32::from_bits(113 << 23) {
        // Subnormal or zero: a multiple of 2^-24, rounded to nearest even by the float addition.
        let magic = f32::from_bits(((127 - 15) + (23 - 10) + 1) << 23);
        return sign | ((a + magic).to_bits() - magic.to_bits()) as u16;
    }
    let u = a.to_bits();
    let r = (u + 0xfff + ((u >> 13) & 1)).wrapping_sub(112 << 23) >> 13;
    sign | r as u16
}

/// bfloat16 bits to f32 (exact).
pub fn bf16_to_f32(h: u16) -> f32 {
    f32::from_bits((h as u32) << 16)
}

/// f32 to bfloat16 bits, rounding to nearest even (NaN is 0x7fc0, as c10::BFloat16).
pub fn f32_to_bf16(f: f32) -> u16 {
    if f.is_nan() {
        return 0x7fc0;
    }
    let u = f.to_bits();
    ((u + 0x7fff + ((u >> 16) & 1)) >> 16) as u16
}

fn as_f32(v: V) -> f32 {
    match v {
        V::F64(x) => x as f32,
        V::F32(x) => x,
        other => other.f64() as f32,
    }
}

/// Converts `v` to dtype `d`. Half-precision values are held as f32 (rounded to the dtype), as
/// the generated code computes them.
pub fn cast(v: V, d: DType) -> V {
    match d {
        DType::Float16 => V::F32(f16_to_f32(f32_to_f16(as_f32(v)))),
        DType::BFloat16 => V::F32(bf16_to_f32(f32_to_bf16(as_f32(v)))),
        DType::Float32 => V::F32(match v {
            V::F64(x) => x as f32,
            V::F32(x) => x,
            other => other.f64() as f32,
        }),
        DType::Float64 => V::F64(v.f64()),
        DType::Bool => V::B(v.truthy()),
        _ => V::I(wrap(v.i64(), d)),
    }
}

fn scalar(s: Scalar, d: DType) -> V {
    if matches!(d, DType::Float16 | DType::BFloat16) {
        // Constants of half-precision computations stay float (the code generator's literals).
        return V::F32(s.as_f64() as f32);
    }
    match s {
        Scalar::F(f) => cast(V::F64(f), d),
        Scalar::I(i) => cast(V::I(i), d),
        Scalar::B(b) => cast(V::B(b), d),
    }
}

macro_rules! float_unary {
    ($x:expr, $f:expr) => {
        match $x {
            V::F32(v) => V::F32($f(v as f64, v, true).1),
            V::F64(v) => V::F64($f(v, v as f32, false).0),
            other => panic!("float op on {other:?}"),
        }
    };
}

fn unary(op: UnOp, x: V) -> V {
    use UnOp::*;
    // Integer and bool forms first.
    match (op, x) {
        (Neg, V::I(v)) => return V::I(v.wrapping_neg()),
        (Abs, V::I(v)) => return V::I(v.wrapping_abs()),
        (Not, v) => return V::B(!v.truthy()),
        (BitNot, V::I(v)) => return V::I(!v),
        (IsNan, V::F32(v)) => return V::B(v.is_nan()),
        (IsNan, V::F64(v)) => return V::B(v.is_nan()),
        (Sign, V::I(v)) => return V::I(v.signum()),
        _ => {}
    }
    // Each float op evaluated in f64 and f32 with the matching libm function.
    let f = |d: f64, s: f32, is32: bool| -> (f64, f32) {
        let _ = is32;
        match op {
            Neg => (-d, -s),
            Abs => (d.abs(), s.abs()),
            Exp => (d.exp(), s.exp()),
            Exp2 => (d.exp2(), s.exp2()),
            Expm1 => (d.exp_m1(), s.exp_m1()),
            Log => (d.ln(), s.ln()),
            Log2 => (d.log2(), s.log2()),
            Log10 => (d.log10(), s.log10()),
            Log1p => (d.ln_1p(), s.ln_1p()),
            Sqrt => (d.sqrt(), s.sqrt()),
            Rsqrt => (1.0 / d.sqrt(), 1.0 / s.sqrt()),
            Sin => (d.sin(), s.sin()),
            Cos => (d.cos(), s.cos()),
            Tan => (d.tan(), s.tan()),
            Asin => (d.asin(), s.asin()),
            Acos => (d.acos(), s.acos()),
            Atan => (d.atan(), s.atan()),
            Sinh => (d.sinh(), s.sinh()),
            Cosh => (d.cosh(), s.cosh()),
            Tanh => (d.tanh(), s.tanh()),
            // SAFETY: plain libm functions.
            Erf => unsafe { (erf(d), erff(s)) },
            Floor => (d.floor(), s.floor()),
            Ceil => (d.ceil(), s.ceil()),
            Round => (d.round_ties_even(), s.round_ties_even()),
            Trunc => (d.trunc(), s.trunc()),
            Reciprocal => (1.0 / d, 1.0 / s),
            Sign => (sign(d), sign(s as f64) as f32),
            Not | BitNot | IsNan => unreachable!(),
        }
    };
    float_unary!(x, f)
}

/// torch's sign: NaN gives 0 and -0.0 gives +0.0 (both compare neither above nor below 0).
fn sign(d: f64) -> f64 {
    ((d > 0.0) as i64 - (d < 0.0) as i64) as f64
}

/// torch's floor division for floats (`div_floor_floating`) and remainder (sign of the divisor),
/// for one float type.
macro_rules! py_division {
    ($t:ty, $floordiv:ident, $remainder:ident) => {
        fn $floordiv(a: $t, b: $t) -> $t {
            if b == 0.0 {
                return a / b;
            }
            let m = a % b;
            let mut div = (a - m) / b;
            if m != 0.0 && (b < 0.0) != (m < 0.0) {
                div -= 1.0;
            }
            if div != 0.0 {
                let f = div.floor();
                if div - f > 0.5 {
                    f + 1.0
                } else {
                    f
                }
            } else {
                (0.0 as $t).copysign(a / b)
            }
        }

        fn $remainder(a: $t, b: $t) -> $t {
            let m = a % b;
            if m != 0.0 && (b < 0.0) != (m < 0.0) {
                m + b
            } else {
                m
            }
        }
    };
}
py_division!(f64, floordiv, remainder);
py_division!(f32, floordiv32, remainder32);

/// A binary op on two floats of one type, `$v` wrapping the result; NaN-propagating max/min.
macro_rules! float_binary {
    ($op:expr, $x:expr, $y:expr, $v:path, $floordiv:ident, $remainder:ident) => {{
        let (x, y) = ($x, $y);
        match $op {
            BinOp::Add => $v(x + y),
            BinOp::Sub => $v(x - y),
            BinOp::Mul => $v(x * y),
            BinOp::Div => $v(x / y),
            BinOp::FloorDiv => $v($floordiv(x, y)),
            BinOp::Rem => $v($remainder(x, y)),
            BinOp::Pow => $v(x.powf(y)),
            BinOp::Max => $v(if x.is_nan() || x > y { x } else { y }),
            BinOp::Min => $v(if x.is_nan() || x < y { x } else { y }),
            BinOp::Atan2 => $v(x.atan2(y)),
            BinOp::Fmod => $v(x % y),
            BinOp::CopySign => $v(x.copysign(y)),
            op => compare(op, x, y),
        }
    }};
}

fn binary(op: BinOp, a: V, b: V, d: DType) -> V {
    use BinOp::*;
    match (a, b) {
        (V::F32(x), V::F32(y)) => float_binary!(op, x, y, V::F32, floordiv32, remainder32),
        (V::F64(x), V::F64(y)) => float_binary!(op, x, y, V::F64, floordiv, remainder),
        (V::I(x), V::I(y)) => V::I(wrap(
            match op {
                Add => x.wrapping_add(y),
                Sub => x.wrapping_sub(y),
                Mul => x.wrapping_mul(y),
                // Python's, as `tf_floordivi` / `tf_remi` (a symbolic int operand).
                FloorDiv if y != 0 => x.div_euclid(y) - i64::from(y < 0 && x.rem_euclid(y) != 0),
                Rem if y != 0 => {
                    x.rem_euclid(y) + if y < 0 && x.rem_euclid(y) != 0 { y } else { 0 }
                }
                Max => x.max(y),
                Min => x.min(y),
                And => x & y,
                Or => x | y,
                Xor => x ^ y,
                _ => return compare(op, x, y),
            },
            d,
        )),
        (V::B(x), V::B(y)) => match op {
            And | Mul | Min => V::B(x && y),
            Or | Add | Max => V::B(x || y),
            Xor | Ne => V::B(x != y),
            Eq => V::B(x == y),
            Lt => V::B(!x & y),
            Le => V::B(x <= y),
            Gt => V::B(x & !y),
            Ge => V::B(x >= y),
            _ => panic!("{op:?} on bools"),
        },
        _ => panic!("{op:?} on mixed values {a:?} {b:?}"),
    }
}

/// A comparison in the operands' own type (int64 values must not round through f64).
fn compare<T: PartialOrd>(op: BinOp, x: T, y: T) -> V {
    V::B(match op {
        BinOp::Eq => x == y,
        BinOp::Ne => x != y,
        BinOp::Lt => x < y,
        BinOp::Le => x <= y,
        BinOp::Gt => x > y,
        BinOp::Ge => x >= y,
        _ => panic!("{op:?} is not a comparison"),
    })
}

/// Reads element `i` of a `d` buffer at `base`.
///
/// # Safety
/// `base` must point to a live buffer of dtype `d` with element `i` in bounds.
pub unsafe fn read(base: *const u8, i: i64, d: DType) -> V {
    let p = base.offset((i * d.itemsize() as i64) as isize);
    match d {
        DType::Float32 => V::F32(*(p as *const f32)),
        DType::Float64 => V::F64(*(p as *const f64)),
        DType::Int64 => V::I(*(p as *const i64)),
        DType::Int32 => V::I(*(p as *const i32) as i64),
        DType::Int16 => V::I(*(p as *const i16) as i64),
        DType::Int8 => V::I(*(p as *const i8) as i64),
        DType::UInt8 => V::I(*p as i64),
        DType::Bool => V::B(*p != 0),
        DType::Float16 => V::F32(f16_to_f32(*(p as *const u16))),
        DType::BFloat16 => V::F32(bf16_to_f32(*(p as *const u16))),
        other => panic!("interpreter cannot read {other:?}"),
    }
}

/// # Safety
/// As [`read`], for a writable buffer.
pub unsafe fn write(base: *mut u8, i: i64, d: DType, v: V) {
    let p = base.offset((i * d.itemsize() as i64) as isize);
    match d {
        DType::Float16 => return *(p as *mut u16) = f32_to_f16(as_f32(v)),
        DType::BFloat16 => return *(p as *mut u16) = f32_to_bf16(as_f32(v)),
        _ => {}
    }
    match (d, cast(v, d)) {
        (DType::Float32, V::F32(x)) => *(p as *mut f32) = x,
        (DType::Float64, V::F64(x)) => *(p as *mut f64) = x,
        (DType::Int64, V::I(x)) => *(p as *mut i64) = x,
        (DType::Int32, V::I(x)) => *(p as *mut i32) = x as i32,
        (DType::Int16, V::I(x)) => *(p as *mut i16) = x as i16,
        (DType::Int8, V::I(x)) => *(p as *mut i8) = x as i8,
        (DType::UInt8, V::I(x)) => *p = x as u8,
        (DType::Bool, V::B(x)) => *p = x as u8,
        (d, v) => panic!("interpreter cannot write {v:?} as {d:?}"),
    }
}

/// Set when a [`Val::Gather`] position was out of range (the run then fails).
static INDEX_ERROR: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// The interpreter as a [`BodyOps`] handler: a body evaluated at one point, each value in its
/// own dtype.
struct Eval<'a> {
    point: &'a [i64],
    /// `ptrs[b]` is buffer b's base address.
    ptrs: &'a EntityVec<BufId, *mut u8>,
    ir: &'a IrGraph,
}

impl<'b> BodyOps<'b> for Eval<'_> {
    type V = V;

    fn load(&mut self, buf: BufId, index: &'b Idx, _: DType) -> V {
        // SAFETY: indices come from the IR, whose index expressions stay in bounds.
        unsafe {
            read(
                self.ptrs[buf],
                index.eval(self.point),
                self.ir.buffers[buf].dtype,
            )
        }
    }

    fn constant(&mut self, value: Scalar, dtype: DType) -> V {
        scalar(value, dtype)
    }

    fn index(&mut self, index: &'b Idx) -> V {
        V::I(index.eval(self.point))
    }

    fn unary(&mut self, op: UnOp, a: &V, _: DType) -> V {
        unary(op, *a)
    }

    fn binary(&mut self, op: BinOp, a: &V, b: &V, dtype: DType) -> V {
        // The result's dtype is the operands' except for comparisons, which do not wrap.
        binary(op, *a, *b, dtype)
    }

    fn select(&mut self, cond: &V, a: &V, b: &V, _: DType) -> V {
        if cond.truthy() {
            *a
        } else {
            *b
        }
    }

    fn cast(&mut self, a: &V, dtype: DType) -> V {
        cast(*a, dtype)
    }

    fn gather(&mut self, g: Gather<'b, '_, V>, _: DType) -> V {
        let mut p = g.pos.i64();
        let (size, stride) = (
            g.size.expect_const("the interpreter"),
            g.stride.expect_const("the interpreter"),
        );
        if g.wrap && p < 0 {
            p += size;
        }
        if p < 0 || p >= size {
            INDEX_ERROR.store(true, std::sync::atomic::Ordering::Relaxed);
            p = p.clamp(0, size - 1);
        }
        // SAFETY: the position is clamped into the buffer's extent along that dim.
        unsafe {
            read(
                self.ptrs[g.buf],
                g.index.eval(self.point) + stride * p,
                self.ir.buffers[g.buf].dtype,
            )
        }
    }
}

/// Evaluates a body at a point; `ptrs[b]` is buffer b's base address.
fn eval(
    body: &Body,
    point: &[i64],
    ptrs: &EntityVec<BufId, *mut u8>,
    ir: &IrGraph,
    vals: &mut Vec<V>,
) -> V {
    body.visit_with(&mut Eval { point, ptrs, ir }, vals)
}

/// Calls `f` on every point of `sizes` in row-major order.
pub fn for_each_point(sizes: &[i64], mut f: impl FnMut(&[i64])) {
    if sizes.contains(&0) {
        return;
    }
    let mut p = vec![0i64; sizes.len()];
    loop {
        f(&p);
        let mut k = sizes.len();
        loop {
            if k == 0 {
                return;
            }
            k -= 1;
            p[k] += 1;
            if p[k] < sizes[k] {
                break;
            }
            p[k] = 0;
        }
    }
}

pub fn reduce_init(op: ReduceOp, d: DType) -> V {
    let f = match op {
        ReduceOp::Sum | ReduceOp::OrderedSum => 0.0,
        ReduceOp::Prod => 1.0,
        ReduceOp::Max => f64::NEG_INFINITY,
        ReduceOp::Min => f64::INFINITY,
        ReduceOp::ArgMax | ReduceOp::ArgMin => return V::I(0),
    };
    match (op, d) {
        (_, DType::Bool) => V::B(matches!(op, ReduceOp::Prod | ReduceOp::Min)),
        (ReduceOp::Max, d) if !d.is_floating_point() => V::I(i64::MIN),
        (ReduceOp::Min, d) if !d.is_floating_point() => V::I(i64::MAX),
        (_, d) => cast(V::F64(f), d),
    }
}

pub fn reduce_combine(op: ReduceOp, acc: V, v: V, d: DType) -> V {
    let bop = op.combiner().expect("arg reductions track positions");
    binary(bop, acc, v, d)
}

/// Whether an argmax/argmin scan moves to `v` from the best value so far: strictly better, or
/// the first NaN.
fn arg_takes(op: ReduceOp, v: V, best: Option<V>) -> bool {
    let Some(b) = best else { return true };
    let nan = |x: V| matches!(x, V::F32(f) if f.is_nan()) || matches!(x, V::F64(f) if f.is_nan());
    if nan(b) {
        return false;
    }
    if nan(v) {
        return true;
    }
    let max = op == ReduceOp::ArgMax;
    match (v, b) {
        (V::I(x), V::I(y)) => (max && x > y) || (!max && x < y),
        (V::B(x), V::B(y)) => (max && x & !y) || (!max && !x & y),
        _ => {
            let (x, y) = (v.f64(), b.f64());
            (max && x > y) || (!max && x < y)
        }
    }
}

/// Runs the graph unfused through the host; the result is the oracle for the compiled kernels.
pub fn run<H: Host>(
    ir: &IrGraph,
    host: &mut H,
    inputs: &[H::Tensor],
) -> Result<Vec<H::Tensor>, RunError<H::Error>> {
    let mut rt = Runtime::new(host, ir, inputs, true)?;
    let mut vals = Vec::new();
    for node in &ir.nodes {
        match node {
            IrNode::Pointwise {
                out,
                sizes,
                body,
                offset,
            } => {
                let offset = offset.expect_const("the interpreter");
                let ptrs = all_ptrs(&mut rt, node)?;
                let ob = &ir.buffers[*out];
                let optr = rt.ptr(*out)?;
                let ostrides = expect_consts(&ob.strides, "the interpreter");
                for_each_point(&expect_consts(sizes, "the interpreter"), |p| {
                    let v = eval(body, p, &ptrs, ir, &mut vals);
                    let i: i64 = offset + p.iter().zip(&ostrides).map(|(a, b)| a * b).sum::<i64>();
                    // SAFETY: the output buffer was allocated with these sizes and strides.
                    unsafe { write(optr, i, ob.dtype, v) };
                });
            }
            IrNode::Reduction {
                out,
                sizes,
                rsizes,
                op,
                body,
            } => {
                let ptrs = all_ptrs(&mut rt, node)?;
                let ob = &ir.buffers[*out];
                let optr = rt.ptr(*out)?;
                let ostrides = expect_consts(&ob.strides, "the interpreter");
                let rsizes = expect_consts(rsizes, "the interpreter");
                for_each_point(&expect_consts(sizes, "the interpreter"), |p| {
                    let mut acc = reduce_init(*op, ob.dtype);
                    let mut best: Option<V> = None;
                    let mut pos = 0i64;
                    let mut point = p.to_vec();
                    for_each_point(&rsizes, |r| {
                        point.truncate(p.len());
                        point.extend_from_slice(r);
                        let v = eval(body, &point, &ptrs, ir, &mut vals);
                        if op.is_arg() {
                            if arg_takes(*op, v, best) {
                                best = Some(v);
                                acc = V::I(pos);
                            }
                            pos += 1;
                        } else {
                            acc = reduce_combine(*op, acc, v, ob.dtype);
                        }
                    });
                    let i: i64 = p.iter().zip(&ostrides).map(|(a, b)| a * b).sum();
                    // SAFETY: as above.
                    unsafe { write(optr, i, ob.dtype, acc) };
                });
            }
            other => rt.run_host_node(other)?,
        }
        if INDEX_ERROR.swap(false, std::sync::atomic::Ordering::Relaxed) {
            return Err(RunError::IndexOutOfRange);
        }
    }
    rt.outputs()
}

fn all_ptrs<H: Host>(
    rt: &mut Runtime<H>,
    node: &IrNode,
) -> Result<EntityVec<BufId, *mut u8>, RunError<H::Error>> {
    let mut ptrs = EntityVec::filled(std::ptr::null_mut(), rt.ir.buffers.len());
    for b in node.reads() {
        ptrs[b] = rt.ptr(b)?;
    }
    Ok(ptrs)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Integer `//` and `%` (a symbolic int operand, `lower::symnum`) are Python's: the floor
    /// of the quotient, and a remainder with the divisor's sign.
    #[test]
    fn integer_floor_division_and_remainder_are_pythons() {
        let cases = [
            (7, 2, 3, 1),
            (-7, 2, -4, 1),
            (7, -2, -4, -1),
            (-7, -2, 3, -1),
            (6, -3, -2, 0),
            (-6, 3, -2, 0),
            (0, -5, 0, 0),
            (-(1 << 40), 3, -366503875926, 2),
        ];
        for (a, b, q, r) in cases {
            let at = |op| match binary(op, V::I(a), V::I(b), DType::Int64) {
                V::I(v) => v,
                _ => unreachable!("an int op gives an int"),
            };
            assert_eq!((at(BinOp::FloorDiv), at(BinOp::Rem)), (q, r), "{a} // {b}");
        }
    }
}
