//! C text: value types, literals, operators, reduction combiners and the prelude every
//! generated source starts with.

use super::*;
use crate::index::Atom;

/// The C type values of dtype `d` are computed in: half-precision values are computed in float
/// (and rounded only where torch would store or convert them).
pub fn c_type(d: DType) -> &'static str {
    match d {
        DType::Float32 | DType::Float16 | DType::BFloat16 => "float",
        DType::Float64 => "double",
        DType::Int64 => "int64_t",
        DType::Int32 => "int32_t",
        DType::Int16 => "int16_t",
        DType::Int8 => "int8_t",
        DType::UInt8 => "uint8_t",
        DType::Bool => "_Bool",
        other => panic!("no C type for {other:?}"),
    }
}

/// The C type a buffer of dtype `d` is stored as.
pub fn storage_type(d: DType) -> &'static str {
    match d {
        DType::Float16 | DType::BFloat16 => "uint16_t",
        d => c_type(d),
    }
}

/// An index expression in C (`int64_t` arithmetic), with var k printed by `var`. Every index is
/// non-negative (see [`crate::index`]), so C's truncating `/` and `%` are the floor forms.
pub(in crate::codegen) fn idx_c(e: &Idx, var: &dyn Fn(u32) -> String) -> String {
    let mut s = String::new();
    for (a, c) in &e.terms {
        if !s.is_empty() {
            s.push_str(" + ");
        }
        let atom = match a {
            Atom::Var(k) => var(*k),
            Atom::FloorDiv(e, d) => format!("(({}) / {d})", idx_c(e, var)),
            Atom::Mod(e, d) => format!("(({}) % {d})", idx_c(e, var)),
            Atom::Clamp(e, lo, hi) => format!("tf_clampi({}, {lo}, {hi})", idx_c(e, var)),
        };
        if *c == 1 {
            s.push_str(&atom);
        } else {
            let _ = write!(s, "{c}*{atom}");
        }
    }
    if s.is_empty() {
        return format!("{}", e.constant);
    }
    if e.constant != 0 {
        let _ = write!(s, " + {}", e.constant);
    }
    s
}

/// Whether `d` computes in C `float`.
pub(in crate::codegen) fn is_f32_like(d: DType) -> bool {
    matches!(d, DType::Float32 | DType::Float16 | DType::BFloat16)
}

/// An element read from a buffer of dtype `d`, in its compute type.
pub(in crate::codegen) fn load_conv(d: DType, e: String) -> String {
    match d {
        DType::Float16 => format!("tf_h2f({e})"),
        DType::BFloat16 => format!("tf_bf2f({e})"),
        _ => e,
    }
}

/// A computed value converted to the storage of dtype `d`.
pub(in crate::codegen) fn store_conv(d: DType, v: &str) -> String {
    match d {
        DType::Float16 => format!("tf_f2h({v})"),
        DType::BFloat16 => format!("tf_f2bf({v})"),
        _ => v.to_string(),
    }
}

/// Row-local arrays of a symbolic length (`plan::scratch_buffers`): per thread and slot, one
/// heap array kept across rows and calls and grown when a longer row comes (OpenMP's threads
/// persist, so each allocates once per size it meets). A kernel's rows run on its thread, so
/// no two rows share an array at once. Printed after the prelude where a kernel uses it, with
/// `TF_ROW_SCRATCH_SLOTS` defined as [`crate::codegen::plan::ROW_SCRATCH_SLOTS`].
pub(super) const ROW_SCRATCH: &str = r#"
#include <stdio.h>
#include <stdlib.h>
static void *tf_row_scratch(int slot, int64_t bytes) {
  static __thread void *buf[TF_ROW_SCRATCH_SLOTS];
  static __thread int64_t cap[TF_ROW_SCRATCH_SLOTS];
  if (bytes > cap[slot]) {
    free(buf[slot]);
    buf[slot] = malloc((size_t)bytes);
    if (!buf[slot]) {
      fprintf(stderr, "torchferro: out of memory for a row of %lld bytes\n", (long long)bytes);
      abort();
    }
    cap[slot] = bytes;
  }
  return buf[slot];
}
"#;

pub(super) const PRELUDE: &str = r#"#include <math.h>
#include <stdint.h>
#include <string.h>
#include <omp.h>
#ifdef __linux__
#include <sys/mman.h>
#endif

/* Large outputs are fresh mmap'd memory: every 4 KiB page faults on its first write, which costs
   more than computing a pointwise result. Asking for transparent huge pages (where the system
   leaves it to madvise) makes that one fault per 2 MiB. A hint only: values are unaffected. */
static inline void tf_hugepage(void *p, int64_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  uintptr_t s = ((uintptr_t)p + 0x1fffff) & ~(uintptr_t)0x1fffff;
  uintptr_t e = ((uintptr_t)p + (uintptr_t)bytes) & ~(uintptr_t)0x1fffff;
  if (e > s) madvise((void *)s, e - s, MADV_HUGEPAGE);
#else
  (void)p; (void)bytes;
#endif
}

/* glibc's libmvec has SIMD versions of these (at most 4 ulp from the correctly rounded result);
   declaring them `declare simd` lets gcc call them from vectorized loops. The build links
   -lmvec, or defines TF_NO_MVEC where the library is missing. */
#ifndef TF_NO_MVEC
#define TF_SIMD_MATH(F) \
  _Pragma("omp declare simd notinbranch") extern float F##f(float); \
  _Pragma("omp declare simd notinbranch") extern double F(double);
#define TF_SIMD_MATH2(F) \
  _Pragma("omp declare simd notinbranch") extern float F##f(float, float); \
  _Pragma("omp declare simd notinbranch") extern double F(double, double);
TF_SIMD_MATH(sin) TF_SIMD_MATH(cos) TF_SIMD_MATH(tan)
TF_SIMD_MATH(asin) TF_SIMD_MATH(acos) TF_SIMD_MATH(atan)
TF_SIMD_MATH(sinh) TF_SIMD_MATH(cosh) TF_SIMD_MATH(tanh)
TF_SIMD_MATH(exp) TF_SIMD_MATH(exp2) TF_SIMD_MATH(expm1)
TF_SIMD_MATH(log) TF_SIMD_MATH(log2) TF_SIMD_MATH(log10) TF_SIMD_MATH(log1p)
TF_SIMD_MATH(erf)
TF_SIMD_MATH2(pow) TF_SIMD_MATH2(atan2)
#endif

/* Branch-free selects. gcc 12 does not if-convert a loop that also calls a SIMD math function,
   so a `c ? a : b` next to an expf would keep the whole loop scalar; bit masks never branch. */
static inline float tf_self(int c, float a, float b) {
  int32_t ia, ib; memcpy(&ia, &a, 4); memcpy(&ib, &b, 4);
  int32_t m = -(int32_t)(c != 0); int32_t r = (ia & m) | (ib & ~m);
  float o; memcpy(&o, &r, 4); return o;
}
static inline double tf_seld(int c, double a, double b) {
  int64_t ia, ib; memcpy(&ia, &a, 8); memcpy(&ib, &b, 8);
  int64_t m = -(int64_t)(c != 0); int64_t r = (ia & m) | (ib & ~m);
  double o; memcpy(&o, &r, 8); return o;
}
#define TF_SELI(T, c, a, b) ((T)(((int64_t)(a) & -(int64_t)((c) != 0)) | ((int64_t)(b) & ~-(int64_t)((c) != 0))))
/* Set by a kernel that read a data-dependent position out of range; the runtime reports it. */
int tf_index_error = 0;

static inline int64_t tf_clampi(int64_t v, int64_t lo, int64_t hi) {
  v = TF_SELI(int64_t, v < lo, lo, v);
  return TF_SELI(int64_t, v > hi, hi, v);
}

/* float16 and bfloat16 storage: branch-free bit conversions (vectorizable, round to nearest
   even, NaN kept quiet and signed as c10::Half does; bfloat16 NaN is 0x7fc0 as c10::BFloat16). */
static inline float tf_u2f(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
static inline uint32_t tf_f2u(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static inline uint32_t tf_selu(uint32_t c, uint32_t a, uint32_t b) { uint32_t m = -(c != 0); return (a & m) | (b & ~m); }
static inline float tf_h2f(uint16_t h) {
  uint32_t em = ((uint32_t)h & 0x7fffu) << 13;
  uint32_t e = em & (0x7c00u << 13);
  uint32_t normal = em + ((127u - 15u) << 23);
  uint32_t special = normal + ((128u - 16u) << 23);
  uint32_t sub = tf_f2u(tf_u2f(em + (113u << 23)) - tf_u2f(113u << 23));
  uint32_t o = tf_selu(e == (0x7c00u << 13), special, tf_selu(e == 0, sub, normal));
  return tf_u2f(o | (((uint32_t)h & 0x8000u) << 16));
}
static inline uint16_t tf_f2h(float f) {
  uint32_t u = tf_f2u(f);
  uint32_t sign = u & 0x80000000u;
  u ^= sign;
  uint32_t infnan = tf_selu(u > (255u << 23), 0x7e00u, 0x7c00u);
  uint32_t denorm_magic = ((127u - 15u) + (23u - 10u) + 1u) << 23;
  uint32_t sub = tf_f2u(tf_u2f(u) + tf_u2f(denorm_magic)) - denorm_magic;
  uint32_t normal = (u + ((uint32_t)(15 - 127) << 23) + 0xfffu + ((u >> 13) & 1u)) >> 13;
  uint32_t o = tf_selu(u >= ((127u + 16u) << 23), infnan, tf_selu(u < (113u << 23), sub, normal));
  return (uint16_t)(o | (sign >> 16));
}
static inline float tf_bf2f(uint16_t h) { return tf_u2f((uint32_t)h << 16); }
static inline uint16_t tf_f2bf(float f) {
  uint32_t u = tf_f2u(f);
  uint32_t r = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
  return (uint16_t)tf_selu(f != f, 0x7fc0u, r);
}
/* A float rounded to the nearest float16 / bfloat16 value (a cast to that dtype). */
static inline float tf_rh(float f) { return tf_h2f(tf_f2h(f)); }
static inline float tf_rbf(float f) { return tf_bf2f(tf_f2bf(f)); }

/* NaN-propagating max/min, as torch.maximum/minimum and max reductions. */
static inline float tf_maxf(float a, float b) { return tf_self((a != a) | (a > b), a, b); }
static inline float tf_minf(float a, float b) { return tf_self((a != a) | (a < b), a, b); }
static inline double tf_maxd(double a, double b) { return tf_seld((a != a) | (a > b), a, b); }
static inline double tf_mind(double a, double b) { return tf_seld((a != a) | (a < b), a, b); }
#define TF_MAXI(a, b) ((a) > (b) ? (a) : (b))
#define TF_MINI(a, b) ((a) < (b) ? (a) : (b))
#pragma omp declare reduction(tfmax : float : omp_out = tf_maxf(omp_out, omp_in)) initializer(omp_priv = -INFINITY)
#pragma omp declare reduction(tfmin : float : omp_out = tf_minf(omp_out, omp_in)) initializer(omp_priv = INFINITY)
#pragma omp declare reduction(tfmax : double : omp_out = tf_maxd(omp_out, omp_in)) initializer(omp_priv = -INFINITY)
#pragma omp declare reduction(tfmin : double : omp_out = tf_mind(omp_out, omp_in)) initializer(omp_priv = INFINITY)
#pragma omp declare reduction(tfadd : int64_t : omp_out = (int64_t)((uint64_t)omp_out + (uint64_t)omp_in)) initializer(omp_priv = 0)
#pragma omp declare reduction(tfmul : int64_t : omp_out = (int64_t)((uint64_t)omp_out * (uint64_t)omp_in)) initializer(omp_priv = 1)
#pragma omp declare reduction(tfadd : int32_t : omp_out = (int32_t)((uint32_t)omp_out + (uint32_t)omp_in)) initializer(omp_priv = 0)
#pragma omp declare reduction(tfmul : int32_t : omp_out = (int32_t)((uint32_t)omp_out * (uint32_t)omp_in)) initializer(omp_priv = 1)
#pragma omp declare reduction(tfmax : int64_t : omp_out = TF_MAXI(omp_out, omp_in)) initializer(omp_priv = INT64_MIN)
#pragma omp declare reduction(tfmin : int64_t : omp_out = TF_MINI(omp_out, omp_in)) initializer(omp_priv = INT64_MAX)
#pragma omp declare reduction(tfmax : int32_t : omp_out = TF_MAXI(omp_out, omp_in)) initializer(omp_priv = INT32_MIN)
#pragma omp declare reduction(tfmin : int32_t : omp_out = TF_MINI(omp_out, omp_in)) initializer(omp_priv = INT32_MAX)
#pragma omp declare reduction(tfmax : int16_t : omp_out = TF_MAXI(omp_out, omp_in)) initializer(omp_priv = INT16_MIN)
#pragma omp declare reduction(tfmin : int16_t : omp_out = TF_MINI(omp_out, omp_in)) initializer(omp_priv = INT16_MAX)
#pragma omp declare reduction(tfmax : int8_t : omp_out = TF_MAXI(omp_out, omp_in)) initializer(omp_priv = INT8_MIN)
#pragma omp declare reduction(tfmin : int8_t : omp_out = TF_MINI(omp_out, omp_in)) initializer(omp_priv = INT8_MAX)
#pragma omp declare reduction(tfmax : uint8_t : omp_out = TF_MAXI(omp_out, omp_in)) initializer(omp_priv = 0)
#pragma omp declare reduction(tfmin : uint8_t : omp_out = TF_MINI(omp_out, omp_in)) initializer(omp_priv = UINT8_MAX)

/* torch's floor division and remainder for floating point (sign of the divisor). */
#define TF_FLOORDIV(T, SFX) \
static inline T tf_floordiv##SFX(T a, T b) { \
  if (b == 0) return a / b; \
  T m = fmod##SFX(a, b); T d = (a - m) / b; \
  if (m != 0 && ((b < 0) != (m < 0))) d -= 1; \
  if (d != 0) { T f = floor##SFX(d); if (d - f > (T)0.5) f += 1; return f; } \
  return copysign##SFX((T)0, a / b); \
} \
static inline T tf_rem##SFX(T a, T b) { \
  T m = fmod##SFX(a, b); \
  if (m != 0 && ((b < 0) != (m < 0))) m += b; \
  return m; \
}
TF_FLOORDIV(float, f)
TF_FLOORDIV(double, )
/* Python's floor division and remainder of integers (the remainder has the divisor's sign),
   for a symbolic int used as a number; the lowering never divides by a possible zero. */
static inline int64_t tf_floordivi(int64_t a, int64_t b) {
  int64_t q = a / b;
  return q - ((a % b != 0) & ((a < 0) != (b < 0)));
}
static inline int64_t tf_remi(int64_t a, int64_t b) {
  int64_t r = a % b;
  return r + ((r != 0) & ((r < 0) != (b < 0))) * b;
}

"#;

/// A C literal of `s` in dtype `d`, exact (hex floats).
pub(in crate::codegen) fn literal(s: Scalar, d: DType) -> String {
    match d {
        DType::Float32 | DType::Float64 | DType::Float16 | DType::BFloat16 => {
            let v = s.as_f64();
            let v = if is_f32_like(d) { v as f32 as f64 } else { v };
            let t = c_type(d);
            if v.is_nan() {
                format!("(({t})NAN)")
            } else if v.is_infinite() {
                format!("(({t}){}INFINITY)", if v < 0.0 { "-" } else { "" })
            } else {
                format!("(({t}){})", hex_float(v))
            }
        }
        DType::Bool => (if s.as_f64() != 0.0 { "1" } else { "0" }).to_string(),
        _ => {
            let i = match s {
                Scalar::I(i) => i,
                Scalar::B(b) => b as i64,
                Scalar::F(f) => f as i64,
            };
            if i == i64::MIN {
                "INT64_MIN".to_string()
            } else {
                format!("(({})INT64_C({i}))", c_type(d))
            }
        }
    }
}

pub(crate) fn hex_float(v: f64) -> String {
    if v == 0.0 {
        return if v.is_sign_negative() {
            "-0.0".into()
        } else {
            "0.0".into()
        };
    }
    let bits = v.to_bits();
    let sign = if bits >> 63 == 1 { "-" } else { "" };
    let exp = ((bits >> 52) & 0x7ff) as i64;
    let mant = bits & ((1u64 << 52) - 1);
    if exp == 0 {
        format!("{sign}0x0.{mant:013x}p-1022")
    } else {
        format!("{sign}0x1.{mant:013x}p{}", exp - 1023)
    }
}

pub(in crate::codegen) fn fsfx(d: DType) -> &'static str {
    if is_f32_like(d) {
        "f"
    } else {
        ""
    }
}

/// The unsigned type that `int32`/`int64` addition, subtraction, multiplication and negation
/// are computed in. Signed overflow is undefined in C, and compilers use that: gcc 13 folds
/// `min(max(x, y), y + 1)` as if `y + 1 > y` held, where torch's kernels wrap (`y + 1` of
/// `INT64_MAX` is `INT64_MIN`). Unsigned arithmetic wraps by definition and converting back is
/// modular in gcc and clang, which is torch's result. Narrower integers are promoted to `int`
/// in C, where these ops cannot overflow.
fn wrapping_unsigned(d: DType) -> Option<&'static str> {
    match d {
        DType::Int64 => Some("uint64_t"),
        DType::Int32 => Some("uint32_t"),
        _ => None,
    }
}

pub(in crate::codegen) fn unary_c(op: UnOp, a: &str, d: DType) -> String {
    use UnOp::*;
    let f = fsfx(d);
    let float = d.is_floating_point();
    let one = if is_f32_like(d) { "1.0f" } else { "1.0" };
    match op {
        Neg | Abs if wrapping_unsigned(d).is_some() => {
            let u = wrapping_unsigned(d).unwrap_or_default();
            let neg = format!("(({})(({u})0 - ({u})({a})))", c_type(d));
            match op {
                Neg => neg,
                _ => select_c(&format!("({a} < 0)"), &neg, a, d),
            }
        }
        Neg => format!("(-{a})"),
        Abs if float => format!("fabs{f}({a})"),
        Abs => select_c(&format!("({a} < 0)"), &format!("(-{a})"), a, d),
        Not => format!("(!{a})"),
        BitNot => format!("(~{a})"),
        IsNan => format!("({a} != {a})"),
        Rsqrt => format!("({one} / sqrt{f}({a}))"),
        Reciprocal => format!("({one} / {a})"),
        // torch's sign of NaN is 0 and of -0.0 is +0.0: both fall out of the comparisons.
        Sign => format!("(({})(({a} > 0) - ({a} < 0)))", c_type(d)),
        _ => {
            let name = match op {
                Exp => "exp",
                Exp2 => "exp2",
                Expm1 => "expm1",
                Log => "log",
                Log2 => "log2",
                Log10 => "log10",
                Log1p => "log1p",
                Sqrt => "sqrt",
                Sin => "sin",
                Cos => "cos",
                Tan => "tan",
                Asin => "asin",
                Acos => "acos",
                Atan => "atan",
                Sinh => "sinh",
                Cosh => "cosh",
                Tanh => "tanh",
                Erf => "erf",
                Floor => "floor",
                Ceil => "ceil",
                Round => "nearbyint",
                Trunc => "trunc",
                _ => unreachable!("{op:?}"),
            };
            format!("{name}{f}({a})")
        }
    }
}

/// `c ? a : b` without a branch (see the prelude: branches keep SIMD math calls scalar).
pub(in crate::codegen) fn select_c(c: &str, a: &str, b: &str, d: DType) -> String {
    match d {
        DType::Float32 | DType::Float16 | DType::BFloat16 => format!("tf_self({c}, {a}, {b})"),
        DType::Float64 => format!("tf_seld({c}, {a}, {b})"),
        _ => format!("TF_SELI({}, {c}, {a}, {b})", c_type(d)),
    }
}

pub(in crate::codegen) fn binary_c(op: BinOp, a: &str, b: &str, d: DType) -> String {
    use BinOp::*;
    let f = fsfx(d);
    let float = d.is_floating_point();
    let boolean = d == DType::Bool;
    match op {
        Add if boolean => format!("({a} | {b})"),
        Mul if boolean => format!("({a} & {b})"),
        Add | Sub | Mul if wrapping_unsigned(d).is_some() => {
            let u = wrapping_unsigned(d).unwrap_or_default();
            let sym = match op {
                Add => "+",
                Sub => "-",
                _ => "*",
            };
            format!("(({})(({u})({a}) {sym} ({u})({b})))", c_type(d))
        }
        Add => format!("({a} + {b})"),
        Sub => format!("({a} - {b})"),
        Mul => format!("({a} * {b})"),
        Div => format!("({a} / {b})"),
        // Integers: a symbolic int operand's `//` and `%` (`lower::symnum`); the lowering of
        // integer tensors' division falls back.
        FloorDiv if !float => format!("tf_floordivi({a}, {b})"),
        Rem if !float => format!("tf_remi({a}, {b})"),
        FloorDiv => format!("tf_floordiv{f}({a}, {b})"),
        Rem => format!("tf_rem{f}({a}, {b})"),
        Pow => format!("pow{f}({a}, {b})"),
        Atan2 => format!("atan2{f}({a}, {b})"),
        Fmod => format!("fmod{f}({a}, {b})"),
        CopySign => format!("copysign{f}({a}, {b})"),
        Max if float => format!("tf_max{}({a}, {b})", if f == "f" { "f" } else { "d" }),
        Min if float => format!("tf_min{}({a}, {b})", if f == "f" { "f" } else { "d" }),
        Max if boolean => format!("({a} | {b})"),
        Min if boolean => format!("({a} & {b})"),
        Max => select_c(&format!("({a} > {b})"), a, b, d),
        Min => select_c(&format!("({a} < {b})"), a, b, d),
        Eq => format!("({a} == {b})"),
        Ne => format!("({a} != {b})"),
        Lt => format!("({a} < {b})"),
        Le => format!("({a} <= {b})"),
        Gt => format!("({a} > {b})"),
        Ge => format!("({a} >= {b})"),
        And if boolean => format!("({a} & {b})"),
        Or if boolean => format!("({a} | {b})"),
        Xor if boolean => format!("({a} != {b})"),
        And => format!("({a} & {b})"),
        Or => format!("({a} | {b})"),
        Xor => format!("({a} ^ {b})"),
    }
}

pub(in crate::codegen) fn omp_reduction(op: ReduceOp, d: DType) -> &'static str {
    match (op, d) {
        (ReduceOp::OrderedSum, _) => unreachable!("an ordered sum is sequential"),
        (ReduceOp::Sum, DType::Bool) | (ReduceOp::Max, DType::Bool) => "||",
        (ReduceOp::Prod, DType::Bool) | (ReduceOp::Min, DType::Bool) => "&&",
        // Combining partial sums must wrap as the loop body does (see `wrapping_unsigned`).
        (ReduceOp::Sum, _) if wrapping_unsigned(d).is_some() => "tfadd",
        (ReduceOp::Prod, _) if wrapping_unsigned(d).is_some() => "tfmul",
        (ReduceOp::Sum, _) => "+",
        (ReduceOp::Prod, _) => "*",
        (ReduceOp::Max, _) => "tfmax",
        (ReduceOp::Min, _) => "tfmin",
        (ReduceOp::ArgMax | ReduceOp::ArgMin, _) => unreachable!("arg reductions are sequential"),
    }
}

pub(in crate::codegen) fn combine_c(op: ReduceOp, acc: &str, v: &str, d: DType) -> String {
    let bop = op.combiner().expect("arg reductions have their own loop");
    binary_c(bop, acc, v, d)
}

pub(in crate::codegen) fn init_c(op: ReduceOp, d: DType) -> String {
    let s = match op {
        ReduceOp::Sum | ReduceOp::OrderedSum => Scalar::I(0),
        ReduceOp::Prod => Scalar::I(1),
        ReduceOp::Max if d.is_floating_point() => Scalar::F(f64::NEG_INFINITY),
        ReduceOp::Min if d.is_floating_point() => Scalar::F(f64::INFINITY),
        ReduceOp::Max if d == DType::Bool => Scalar::B(false),
        ReduceOp::Min if d == DType::Bool => Scalar::B(true),
        ReduceOp::Max => return format!("(({}){})", c_type(d), int_min(d)),
        ReduceOp::Min => return format!("(({}){})", c_type(d), int_max(d)),
        ReduceOp::ArgMax | ReduceOp::ArgMin => Scalar::I(0),
    };
    literal(s, d)
}

pub(in crate::codegen) fn int_min(d: DType) -> &'static str {
    match d {
        DType::Int32 => "INT32_MIN",
        DType::Int16 => "INT16_MIN",
        DType::Int8 => "INT8_MIN",
        DType::UInt8 => "0",
        _ => "INT64_MIN",
    }
}

pub(in crate::codegen) fn int_max(d: DType) -> &'static str {
    match d {
        DType::Int32 => "INT32_MAX",
        DType::Int16 => "INT16_MAX",
        DType::Int8 => "INT8_MAX",
        DType::UInt8 => "UINT8_MAX",
        _ => "INT64_MAX",
    }
}
