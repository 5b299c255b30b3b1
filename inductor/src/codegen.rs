//! The C printer: one C source per graph, one function per kernel.
//!
//! Outer loops run under `#pragma omp parallel for` (collapsed, with an `if` so tiny kernels do
//! not pay for threads); inner loops are plain counted loops over `int64_t` with affine indices
//! and `restrict` pointers, which gcc vectorizes (`omp simd` marks the innermost ones, with
//! reduction clauses so float sums may be reassociated there and only there). Every kernel takes
//! `void **args`, one pointer per buffer it touches, in [`KernelAbi::bufs`] order.
//!
//! What keeps the loops vectorized:
//! - math functions are declared `omp declare simd`, so gcc calls glibc's libmvec versions;
//! - selects, max/min and bool logic are branch-free (gcc 12 keeps a loop scalar when a branch
//!   sits next to a SIMD call);
//! - a pointwise kernel's loops follow its output's memory order and merge where indices stay
//!   affine (`LoopNest`);
//! - a reduction over leading dims processes rows in blocks, so the innermost loop walks
//!   contiguous memory (`emit_blocked`); argmax/argmin scan in independent lanes.
//!
//! float16/bfloat16 are stored as `uint16_t` and computed in `float`: converted on load, rounded
//! on store and on explicit casts only (torch.compile's rule; eager rounds after every op).

use std::collections::HashMap;
use std::fmt::Write;

use fx::DType;

use crate::index::{Atom, Idx};
use crate::ir::{BinOp, Body, BufId, IrGraph, IrNode, ReduceOp, Scalar, UnOp, Val};
use crate::schedule::{Kernel, Level, Schedule};

/// The exported symbol every generated library defines; the loader checks it (a truncated or
/// foreign file fails the check), and its value names the source hash.
pub const VALIDATION_SYMBOL: &str = "torchferro_kernels_abi";

/// Buffers at least this large that a kernel writes get a transparent-huge-page hint.
const HUGEPAGE_MIN_BYTES: i64 = 4 << 20;

/// Kernels below this many loop iterations run on one thread.
const PARALLEL_THRESHOLD: i64 = 32768;

#[derive(Clone, Debug)]
pub struct KernelAbi {
    pub name: String,
    pub bufs: Vec<BufId>,
}

pub struct CSource {
    pub code: String,
    pub kernels: Vec<KernelAbi>,
}

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

/// Whether `d` computes in C `float`.
fn is_f32_like(d: DType) -> bool {
    matches!(d, DType::Float32 | DType::Float16 | DType::BFloat16)
}

/// An element read from a buffer of dtype `d`, in its compute type.
fn load_conv(d: DType, e: String) -> String {
    match d {
        DType::Float16 => format!("tf_h2f({e})"),
        DType::BFloat16 => format!("tf_bf2f({e})"),
        _ => e,
    }
}

/// A computed value converted to the storage of dtype `d`.
fn store_conv(d: DType, v: &str) -> String {
    match d {
        DType::Float16 => format!("tf_f2h({v})"),
        DType::BFloat16 => format!("tf_f2bf({v})"),
        _ => v.to_string(),
    }
}

const PRELUDE: &str = r#"#include <math.h>
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

"#;

/// A C literal of `s` in dtype `d`, exact (hex floats).
fn literal(s: Scalar, d: DType) -> String {
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

fn hex_float(v: f64) -> String {
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

fn fsfx(d: DType) -> &'static str {
    if is_f32_like(d) {
        "f"
    } else {
        ""
    }
}

fn unary_c(op: UnOp, a: &str, d: DType) -> String {
    use UnOp::*;
    let f = fsfx(d);
    let float = d.is_floating_point();
    let one = if is_f32_like(d) { "1.0f" } else { "1.0" };
    match op {
        Neg => format!("(-{a})"),
        Abs if float => format!("fabs{f}({a})"),
        Abs => select_c(&format!("({a} < 0)"), &format!("(-{a})"), a, d),
        Not => format!("(!{a})"),
        BitNot => format!("(~{a})"),
        IsNan => format!("({a} != {a})"),
        Rsqrt => format!("({one} / sqrt{f}({a}))"),
        Reciprocal => format!("({one} / {a})"),
        Sign if float => select_c(
            &format!("({a} != {a})"),
            a,
            &format!("(({})(({a} > 0) - ({a} < 0)))", c_type(d)),
            d,
        ),
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
fn select_c(c: &str, a: &str, b: &str, d: DType) -> String {
    match d {
        DType::Float32 | DType::Float16 | DType::BFloat16 => format!("tf_self({c}, {a}, {b})"),
        DType::Float64 => format!("tf_seld({c}, {a}, {b})"),
        _ => format!("TF_SELI({}, {c}, {a}, {b})", c_type(d)),
    }
}

fn binary_c(op: BinOp, a: &str, b: &str, d: DType) -> String {
    use BinOp::*;
    let f = fsfx(d);
    let float = d.is_floating_point();
    let boolean = d == DType::Bool;
    match op {
        Add if boolean => format!("({a} | {b})"),
        Mul if boolean => format!("({a} & {b})"),
        Add => format!("({a} + {b})"),
        Sub => format!("({a} - {b})"),
        Mul => format!("({a} * {b})"),
        Div => format!("({a} / {b})"),
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

fn var(k: u32) -> String {
    format!("x{k}")
}

/// Prints a body's values as `const T name = ...;` lines; returns the root's name.
/// `local[b]` replaces loads of buffer `b` by a C variable (a value this kernel already has).
fn emit_body(
    out: &mut String,
    body: &Body,
    prefix: &str,
    local: &HashMap<BufId, String>,
    indent: &str,
    nest: &LoopNest,
) -> String {
    let name = |v: usize| format!("{prefix}_{v}");
    let at = |e: &Idx| nest.apply(e).to_c(&var);
    for (k, v) in body.vals.iter().enumerate() {
        let d = body.dtypes[k];
        let expr = match v {
            Val::Load { buf, index } => match local.get(buf) {
                Some(n) => n.clone(),
                None => load_conv(d, format!("b{buf}[{}]", at(index))),
            },
            Val::Const(s) => literal(*s, d),
            Val::Index(e) => format!("((int64_t)({}))", at(e)),
            Val::Unary(op, a) => unary_c(*op, &name(*a), body.dtypes[*a]),
            Val::Binary(op, a, b) => binary_c(*op, &name(*a), &name(*b), body.dtypes[*a]),
            Val::Where(c, a, b) => select_c(&name(*c), &name(*a), &name(*b), d),
            Val::Gather {
                buf,
                index,
                pos,
                stride,
                size,
                wrap,
            } => {
                let (p, c) = (format!("{}_i", name(k)), format!("{}_c", name(k)));
                let raw = format!("(int64_t){}", name(*pos));
                let raw = if *wrap {
                    format!("({raw} + TF_SELI(int64_t, {raw} < 0, {size}, 0))")
                } else {
                    raw
                };
                let _ = writeln!(out, "{indent}const int64_t {p} = {raw};");
                let _ = writeln!(
                    out,
                    "{indent}const int64_t {c} = tf_clampi({p}, 0, {});",
                    size - 1
                );
                let _ = writeln!(
                    out,
                    "{indent}if ({c} != {p}) __atomic_store_n(&tf_index_error, 1, __ATOMIC_RELAXED);"
                );
                load_conv(d, format!("b{buf}[{} + {stride}*{c}]", at(index)))
            }
            Val::Cast(a) => match d {
                DType::Float16 => format!("tf_rh((float){})", name(*a)),
                DType::BFloat16 => format!("tf_rbf((float){})", name(*a)),
                _ => format!("(({}){})", c_type(d), name(*a)),
            },
        };
        let _ = writeln!(out, "{indent}const {} {} = {expr};", c_type(d), name(k));
    }
    name(body.root)
}

/// A buffer's value as later nodes of the kernel read it without going through memory: rounded
/// as a store to its dtype would round it.
fn local_value(d: DType, v: &str) -> String {
    match d {
        DType::Float16 => format!("tf_rh({v})"),
        DType::BFloat16 => format!("tf_rbf({v})"),
        _ => v.to_string(),
    }
}

/// Store index of a kernel node's output (over the node's first `nvars` vars).
fn store_idx(ir: &IrGraph, buf: BufId, nvars: usize) -> Idx {
    let b = &ir.buffers[buf];
    let mut e = Idx::constant(0);
    for (k, st) in b.strides.iter().enumerate().take(nvars) {
        if b.sizes[k] != 1 {
            e = e.add(&Idx::var(k as u32).scale(*st));
        }
    }
    e
}

fn store_c(ir: &IrGraph, buf: BufId, nvars: usize, nest: &LoopNest) -> String {
    nest.apply(&store_idx(ir, buf, nvars)).to_c(&var)
}

/// The loops a kernel runs: loop `j` counts `x{j}` over `sizes[j]`, and the nodes' var `k` is
/// `map[k]` over the loop vars (`None`: the nodes' own vars, one loop each). A pointwise kernel
/// reorders its loops so the smallest output stride is innermost (a transposed result is
/// written, not scattered) and merges adjacent loops whose every index stays affine (a
/// `[n, 3]` tensor runs as one loop of `3n`, not `n` loops of 3).
struct LoopNest {
    sizes: Vec<i64>,
    map: Option<Vec<Idx>>,
}

impl LoopNest {
    fn identity(sizes: &[i64]) -> LoopNest {
        LoopNest {
            sizes: sizes.to_vec(),
            map: None,
        }
    }

    fn apply(&self, e: &Idx) -> Idx {
        match &self.map {
            None => e.clone(),
            Some(m) => e.substitute(m, &self.sizes),
        }
    }

    /// Loops over `groups` of the original dims (each outer to inner), outermost group first.
    fn grouped(sizes: &[i64], groups: &[Vec<usize>]) -> LoopNest {
        let new_sizes: Vec<i64> = groups
            .iter()
            .map(|g| g.iter().map(|&d| sizes[d]).product())
            .collect();
        let mut map = vec![Idx::constant(0); sizes.len()];
        for (j, g) in groups.iter().enumerate() {
            let mut div = 1i64;
            for &d in g.iter().rev() {
                let e = Idx::var(j as u32).floordiv(div.max(1), &new_sizes);
                map[d] = e.modulo(sizes[d].max(1), &new_sizes);
                div *= sizes[d];
            }
        }
        LoopNest {
            sizes: new_sizes,
            map: Some(map),
        }
    }
}

/// Floor divisions and modulos in an index (what merging loops must not add).
fn divmods(e: &Idx) -> usize {
    e.terms
        .iter()
        .map(|(a, _)| match a {
            Atom::Var(_) => 0,
            Atom::FloorDiv(x, _) | Atom::Mod(x, _) => 1 + divmods(x),
            Atom::Clamp(x, _, _) => divmods(x),
        })
        .sum()
}

/// The loop nest of a pure pointwise kernel (see [`LoopNest`]).
fn pointwise_nest(ir: &IrGraph, sched: &Schedule, k: &Kernel) -> LoopNest {
    let sizes = &k.outer;
    let n = sizes.len();
    if n <= 1 || sizes.contains(&0) {
        return LoopNest::identity(sizes);
    }
    let mut exprs: Vec<Idx> = Vec::new();
    let mut reference: Option<Vec<i64>> = None;
    for (ni, _, _) in &k.nodes {
        let IrNode::Pointwise { out, body, .. } = &ir.nodes[*ni] else {
            continue;
        };
        for v in &body.vals {
            match v {
                Val::Load { index, .. } | Val::Gather { index, .. } | Val::Index(index) => {
                    exprs.push(index.clone())
                }
                _ => {}
            }
        }
        if sched.materialized[*out] {
            exprs.push(store_idx(ir, *out, n));
            reference.get_or_insert_with(|| ir.buffers[*out].strides.clone());
        }
    }
    let strides = reference.unwrap_or_else(|| crate::ir::contiguous_strides(sizes));
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by_key(|&d| {
        std::cmp::Reverse(if sizes[d] == 1 {
            i64::MAX
        } else {
            strides[d].abs()
        })
    });
    let base: Vec<usize> = exprs.iter().map(divmods).collect();
    let fits = |groups: &[Vec<usize>]| {
        let nest = LoopNest::grouped(sizes, groups);
        exprs
            .iter()
            .zip(&base)
            .all(|(e, b)| divmods(&nest.apply(e)) <= *b)
    };
    let mut groups: Vec<Vec<usize>> = order.iter().map(|&d| vec![d]).collect();
    let mut i = groups.len() - 1;
    while i > 0 {
        let mut merged = groups.clone();
        let inner = merged.remove(i);
        merged[i - 1].extend(inner);
        if fits(&merged) {
            groups = merged;
        }
        i -= 1;
    }
    if groups.len() == n && order.iter().enumerate().all(|(i, &d)| i == d) {
        return LoopNest::identity(sizes);
    }
    LoopNest::grouped(sizes, &groups)
}

fn loops(out: &mut String, sizes: &[i64], first_var: usize, indent: &mut String) {
    for (i, s) in sizes.iter().enumerate() {
        let k = first_var + i;
        let _ = writeln!(out, "{indent}for (int64_t x{k} = 0; x{k} < {s}; x{k}++) {{");
        indent.push_str("  ");
    }
}

fn close(out: &mut String, n: usize, indent: &mut String) {
    for _ in 0..n {
        indent.truncate(indent.len() - 2);
        let _ = writeln!(out, "{indent}}}");
    }
}

fn omp_reduction(op: ReduceOp, d: DType) -> &'static str {
    match (op, d) {
        (ReduceOp::Sum, DType::Bool) | (ReduceOp::Max, DType::Bool) => "||",
        (ReduceOp::Prod, DType::Bool) | (ReduceOp::Min, DType::Bool) => "&&",
        (ReduceOp::Sum, _) => "+",
        (ReduceOp::Prod, _) => "*",
        (ReduceOp::Max, _) => "tfmax",
        (ReduceOp::Min, _) => "tfmin",
        (ReduceOp::ArgMax | ReduceOp::ArgMin, _) => unreachable!("arg reductions are sequential"),
    }
}

fn combine_c(op: ReduceOp, acc: &str, v: &str, d: DType) -> String {
    let bop = match op {
        ReduceOp::Sum => BinOp::Add,
        ReduceOp::Prod => BinOp::Mul,
        ReduceOp::Max => BinOp::Max,
        ReduceOp::Min => BinOp::Min,
        ReduceOp::ArgMax | ReduceOp::ArgMin => unreachable!("arg reductions have their own loop"),
    };
    binary_c(bop, acc, v, d)
}

fn init_c(op: ReduceOp, d: DType) -> String {
    let s = match op {
        ReduceOp::Sum => Scalar::I(0),
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

fn int_min(d: DType) -> &'static str {
    match d {
        DType::Int32 => "INT32_MIN",
        DType::Int16 => "INT16_MIN",
        DType::Int8 => "INT8_MIN",
        DType::UInt8 => "0",
        _ => "INT64_MIN",
    }
}

fn int_max(d: DType) -> &'static str {
    match d {
        DType::Int32 => "INT32_MAX",
        DType::Int16 => "INT16_MAX",
        DType::Int8 => "INT8_MAX",
        DType::UInt8 => "UINT8_MAX",
        _ => "INT64_MAX",
    }
}

/// Prints one kernel.
fn emit_kernel(out: &mut String, ir: &IrGraph, sched: &Schedule, k: &Kernel) -> KernelAbi {
    let pure_pointwise = k.inner.is_empty() && k.nodes.iter().all(|(_, l, _)| *l == Level::Inner);
    let has_arg = k
        .nodes
        .iter()
        .any(|(n, _, _)| matches!(&ir.nodes[*n], IrNode::Reduction { op, .. } if op.is_arg()));
    let blocked = !pure_pointwise && !k.outer.is_empty() && !has_arg && prefers_blocked(ir, k);
    let scratch = if pure_pointwise || blocked {
        Vec::new()
    } else {
        scratch_buffers(ir, sched, k)
    };
    // Buffers this kernel touches in memory.
    let mut bufs: Vec<BufId> = Vec::new();
    for (n, _, _) in &k.nodes {
        let node = &ir.nodes[*n];
        for b in node.reads() {
            let internal =
                sched.producer_kernel[b].is_some_and(|p| std::ptr::eq(&sched.kernels[p], k));
            if (!internal || sched.materialized[b]) && !bufs.contains(&b) {
                bufs.push(b);
            }
        }
        for b in node.outputs() {
            if sched.materialized[b] && !bufs.contains(&b) {
                bufs.push(b);
            }
        }
    }
    bufs.retain(|b| !scratch.contains(b));
    let _ = writeln!(out, "void {}(void **restrict args) {{", k.name);
    for (i, b) in bufs.iter().enumerate() {
        let t = storage_type(ir.buffers[*b].dtype);
        let _ = writeln!(out, "  {t} *restrict b{b} = ({t} *)args[{i}];");
    }
    for (n, _, _) in &k.nodes {
        for b in ir.nodes[*n].outputs() {
            let decl = &ir.buffers[b];
            let bytes = decl.storage_numel() * decl.dtype.itemsize() as i64;
            if bufs.contains(&b) && bytes >= HUGEPAGE_MIN_BYTES {
                let _ = writeln!(out, "  tf_hugepage(b{b}, {bytes});");
            }
        }
    }
    let no = k.outer.len();
    let outer_n: i64 = k.outer.iter().product();
    let inner_n: i64 = k.inner.iter().product();
    let mut indent = String::from("  ");
    let no_scratch = HashMap::new();
    if pure_pointwise {
        // All dims are loops: parallel over all but the last, vectorized over the last.
        let nest = pointwise_nest(ir, sched, k);
        let n = nest.sizes.len();
        if n > 0 {
            let work = outer_n;
            if n == 1 {
                let _ = writeln!(
                    out,
                    "  #pragma omp parallel for simd if({work} >= {PARALLEL_THRESHOLD})"
                );
            } else {
                let _ = writeln!(
                    out,
                    "  #pragma omp parallel for collapse({}) if({work} >= {PARALLEL_THRESHOLD})",
                    n - 1
                );
            }
        }
        for (i, s) in nest.sizes.iter().enumerate() {
            if n > 1 && i == n - 1 {
                let _ = writeln!(out, "{indent}#pragma omp simd");
            }
            let _ = writeln!(out, "{indent}for (int64_t x{i} = 0; x{i} < {s}; x{i}++) {{");
            indent.push_str("  ");
        }
        let mut local = HashMap::new();
        emit_stage_nodes(
            out,
            ir,
            sched,
            k,
            0,
            &mut local,
            &indent,
            k.outer.len(),
            &nest,
            &no_scratch,
        );
        close(out, n, &mut indent);
        let _ = writeln!(out, "}}\n");
        return KernelAbi {
            name: k.name.clone(),
            bufs,
        };
    }
    if blocked {
        emit_blocked(out, ir, sched, k, outer_n.saturating_mul(inner_n.max(1)));
        let _ = writeln!(out, "}}\n");
        return KernelAbi {
            name: k.name.clone(),
            bufs,
        };
    }
    let par_outer = no > 0;
    if par_outer {
        let _ = writeln!(
            out,
            "  #pragma omp parallel for collapse({no}) if({} >= {PARALLEL_THRESHOLD})",
            outer_n.saturating_mul(inner_n.max(1))
        );
    }
    loops(out, &k.outer, 0, &mut indent);
    let nest = LoopNest::identity(&[]);
    let mut local: HashMap<BufId, String> = HashMap::new();
    // Row-local buffers: declared per row (so per thread), addressed by the inner position.
    let mut inner_pos = String::from("0");
    for (i, s) in k.inner.iter().enumerate() {
        inner_pos = format!("({inner_pos}) * {s} + x{}", no + i);
    }
    let scratch_at: HashMap<BufId, String> = scratch
        .iter()
        .map(|&b| (b, format!("sb{b}[{inner_pos}]")))
        .collect();
    for &b in &scratch {
        let _ = writeln!(
            out,
            "{indent}{} sb{b}[{inner_n}];",
            c_type(ir.buffers[b].dtype)
        );
    }
    let nstages = k.nodes.iter().map(|(_, _, s)| s + 1).max().unwrap_or(0);
    for stage in 0..nstages {
        let members: Vec<&(usize, Level, usize)> =
            k.nodes.iter().filter(|(_, _, s)| *s == stage).collect();
        let first = &ir.nodes[members[0].0];
        match (first, members[0].1) {
            (
                IrNode::Reduction {
                    out: ob, op, body, ..
                },
                _,
            ) if op.is_arg() => {
                emit_arg_reduction(out, ir, sched, k, *ob, *op, body, &mut local, &mut indent);
            }
            (
                IrNode::Reduction {
                    out: ob, op, body, ..
                },
                _,
            ) => {
                let d = ir.buffers[*ob].dtype;
                let acc = format!("acc{ob}");
                let _ = writeln!(out, "{indent}{} {acc} = {};", c_type(d), init_c(*op, d));
                let nr = k.inner.len();
                if nr > 0 {
                    let clause = omp_reduction(*op, d);
                    if !par_outer {
                        let _ = writeln!(
                            out,
                            "{indent}#pragma omp parallel for collapse({nr}) reduction({clause}:{acc}) if({inner_n} >= {PARALLEL_THRESHOLD})"
                        );
                    } else if nr == 1 {
                        let _ = writeln!(out, "{indent}#pragma omp simd reduction({clause}:{acc})");
                    }
                }
                loops(out, &k.inner, no, &mut indent);
                let v = emit_body(out, body, &format!("r{ob}"), &local, &indent, &nest);
                let _ = writeln!(out, "{indent}{acc} = {};", combine_c(*op, &acc, &v, d));
                close(out, nr, &mut indent);
                if sched.materialized[*ob] {
                    let _ = writeln!(
                        out,
                        "{indent}b{ob}[{}] = {};",
                        store_c(ir, *ob, no, &nest),
                        store_conv(d, &acc)
                    );
                }
                local.insert(*ob, local_value(d, &acc));
            }
            (IrNode::Pointwise { .. }, Level::Row) => {
                emit_stage_nodes(
                    out,
                    ir,
                    sched,
                    k,
                    stage,
                    &mut local,
                    &indent,
                    no,
                    &nest,
                    &scratch_at,
                );
            }
            _ => {
                let nr = k.inner.len();
                if !par_outer && nr > 0 {
                    let _ = writeln!(
                        out,
                        "{indent}#pragma omp parallel for collapse({nr}) if({inner_n} >= {PARALLEL_THRESHOLD})"
                    );
                } else if nr == 1 {
                    let _ = writeln!(out, "{indent}#pragma omp simd");
                }
                loops(out, &k.inner, no, &mut indent);
                let mut stage_local = local.clone();
                emit_stage_nodes(
                    out,
                    ir,
                    sched,
                    k,
                    stage,
                    &mut stage_local,
                    &indent,
                    no + nr,
                    &nest,
                    &scratch_at,
                );
                close(out, nr, &mut indent);
                // Later stages read this stage's row-local results back from their arrays.
                for (n, _, s) in &k.nodes {
                    if let IrNode::Pointwise { out: ob, .. } = &ir.nodes[*n] {
                        if *s == stage {
                            if let Some(at) = scratch_at.get(ob) {
                                local.insert(*ob, at.clone());
                            }
                        }
                    }
                }
            }
        }
    }
    close(out, no, &mut indent);
    let _ = writeln!(out, "}}\n");
    KernelAbi {
        name: k.name.clone(),
        bufs,
    }
}

/// Largest row (in elements) kept in a row-local array rather than a buffer in memory.
pub const SCRATCH_MAX: i64 = 16384;

/// Buffers a staged kernel can keep in per-row arrays instead of memory: produced by one of its
/// inner (`O ++ R`) nodes and read only by its later stages (softmax's `exp(x - max)`, computed
/// once and read by the sum and the normalization, as Inductor's `local_buffer`).
fn scratch_buffers(ir: &IrGraph, sched: &Schedule, k: &Kernel) -> Vec<BufId> {
    let inner_n: i64 = k.inner.iter().product();
    if k.inner.is_empty() || inner_n > SCRATCH_MAX {
        return Vec::new();
    }
    let mine: Vec<usize> = k.nodes.iter().map(|(n, _, _)| *n).collect();
    let escapes = |b: BufId| {
        !matches!(ir.buffers[b].kind, crate::ir::BufKind::Computed)
            || ir.outputs.iter().any(|o| match o {
                crate::ir::OutputSpec::Buffer(x) => *x == b,
                crate::ir::OutputSpec::View(v) => v.buf == b,
            })
    };
    k.nodes
        .iter()
        .filter_map(|(n, level, _)| match &ir.nodes[*n] {
            IrNode::Pointwise { out, .. } if *level == Level::Inner => Some(*out),
            _ => None,
        })
        .filter(|&b| sched.materialized[b] && !escapes(b))
        .filter(|&b| {
            ir.nodes
                .iter()
                .enumerate()
                .all(|(i, node)| mine.contains(&i) || !node.reads().contains(&b))
        })
        .collect()
}

/// Independent partial scans of an argmax/argmin row (one vector of floats).
const ARG_LANES: i64 = 16;

/// Rows handled together by a blocked kernel ([`emit_blocked`]).
const BLOCK: i64 = 64;

/// The coefficient of var `v` in `e` where it appears as a plain term (0 when absent or only
/// inside a division, modulo or clamp).
fn coef(e: &Idx, v: u32) -> i64 {
    e.terms
        .iter()
        .find(|(a, _)| *a == Atom::Var(v))
        .map(|(_, c)| *c)
        .unwrap_or(0)
}

/// Whether a kernel with reductions reads memory contiguously along its last *row* var rather
/// than along its last reduced var (a reduction over a leading dim, `x.sum(0)`): then scanning
/// each row alone strides through memory, and rows are better processed in blocks.
fn prefers_blocked(ir: &IrGraph, k: &Kernel) -> bool {
    let (no, nr) = (k.outer.len(), k.inner.len());
    if nr == 0 || k.outer[no - 1] < 4 {
        return false;
    }
    let (row, red) = (no as u32 - 1, (no + nr) as u32 - 1);
    let mut votes = 0i64;
    for (n, _, _) in &k.nodes {
        let body = match &ir.nodes[*n] {
            IrNode::Pointwise { body, .. } | IrNode::Reduction { body, .. } => body,
            _ => continue,
        };
        for (_, idx) in body.loads() {
            let (co, ci) = (coef(idx, row).abs(), coef(idx, red).abs());
            if co == 1 && ci != 1 {
                votes += 1;
            } else if ci == 1 && co != 1 {
                votes -= 1;
            }
        }
    }
    votes > 0
}

/// A reduction kernel whose rows are processed [`BLOCK`] at a time along the last row var: each
/// stage loops over the reduced dims outside and over the block inside (contiguous, vectorized),
/// with per-row accumulators and row values kept in small arrays.
fn emit_blocked(out: &mut String, ir: &IrGraph, sched: &Schedule, k: &Kernel, work: i64) {
    let (no, nr) = (k.outer.len(), k.inner.len());
    let last = k.outer[no - 1];
    let xl = no - 1;
    let mut indent = String::from("  ");
    let _ = writeln!(
        out,
        "  #pragma omp parallel for collapse({no}) if({work} >= {PARALLEL_THRESHOLD})"
    );
    loops(out, &k.outer[..no - 1], 0, &mut indent);
    let _ = writeln!(
        out,
        "{indent}for (int64_t xb = 0; xb < {}; xb++) {{",
        (last + BLOCK - 1) / BLOCK
    );
    indent.push_str("  ");
    let _ = writeln!(out, "{indent}const int64_t xlo = xb * {BLOCK};");
    let _ = writeln!(
        out,
        "{indent}const int64_t nb = {last} - xlo < {BLOCK} ? {last} - xlo : {BLOCK};"
    );
    let nest = LoopNest::identity(&[]);
    let open_block = |out: &mut String, indent: &mut String| {
        let _ = writeln!(out, "{indent}#pragma omp simd");
        let _ = writeln!(out, "{indent}for (int64_t j = 0; j < nb; j++) {{");
        indent.push_str("  ");
        let _ = writeln!(out, "{indent}const int64_t x{xl} = xlo + j;");
    };
    let mut local: HashMap<BufId, String> = HashMap::new();
    let nstages = k.nodes.iter().map(|(_, _, s)| s + 1).max().unwrap_or(0);
    for stage in 0..nstages {
        let members: Vec<&(usize, Level, usize)> =
            k.nodes.iter().filter(|(_, _, s)| *s == stage).collect();
        match (&ir.nodes[members[0].0], members[0].1) {
            (
                IrNode::Reduction {
                    out: ob, op, body, ..
                },
                _,
            ) => {
                let d = ir.buffers[*ob].dtype;
                let acc = format!("acc{ob}");
                // Each row's sum runs sequentially down its column: a float sum accumulates in
                // double so long columns keep torch's (cascade-summed) accuracy.
                let wide = *op == ReduceOp::Sum && is_f32_like(d);
                let ad = if wide { DType::Float64 } else { d };
                let _ = writeln!(out, "{indent}{} {acc}[{BLOCK}];", c_type(ad));
                let _ = writeln!(
                    out,
                    "{indent}for (int64_t j = 0; j < {BLOCK}; j++) {acc}[j] = {};",
                    init_c(*op, ad)
                );
                loops(out, &k.inner, no, &mut indent);
                open_block(out, &mut indent);
                let v = emit_body(out, body, &format!("r{ob}"), &local, &indent, &nest);
                let slot = format!("{acc}[j]");
                let v = if wide { format!("(double){v}") } else { v };
                let _ = writeln!(out, "{indent}{slot} = {};", combine_c(*op, &slot, &v, ad));
                close(out, nr + 1, &mut indent);
                let cell = if wide {
                    format!("((float){slot})")
                } else {
                    slot
                };
                if sched.materialized[*ob] {
                    let _ = writeln!(out, "{indent}for (int64_t j = 0; j < nb; j++) {{");
                    let _ = writeln!(out, "{indent}  const int64_t x{xl} = xlo + j;");
                    let _ = writeln!(
                        out,
                        "{indent}  b{ob}[{}] = {};",
                        store_c(ir, *ob, no, &nest),
                        store_conv(d, &cell)
                    );
                    let _ = writeln!(out, "{indent}}}");
                }
                local.insert(*ob, local_value(d, &cell));
            }
            (IrNode::Pointwise { .. }, Level::Row) => {
                let outs: Vec<(BufId, DType)> = members
                    .iter()
                    .filter_map(|(n, _, _)| match &ir.nodes[*n] {
                        IrNode::Pointwise { out: ob, .. } => Some((*ob, ir.buffers[*ob].dtype)),
                        _ => None,
                    })
                    .collect();
                for (ob, d) in &outs {
                    let _ = writeln!(out, "{indent}{} rowv{ob}[{BLOCK}];", c_type(*d));
                }
                open_block(out, &mut indent);
                let mut stage_local = local.clone();
                emit_stage_nodes(
                    out,
                    ir,
                    sched,
                    k,
                    stage,
                    &mut stage_local,
                    &indent,
                    no,
                    &nest,
                    &HashMap::new(),
                );
                for (ob, d) in &outs {
                    // The stage's own value, unrounded; readers round it as a load would.
                    let v = stage_local[ob].clone();
                    let raw = v
                        .strip_prefix("tf_rh(")
                        .or_else(|| v.strip_prefix("tf_rbf("))
                        .and_then(|r| r.strip_suffix(')'))
                        .unwrap_or(&v)
                        .to_string();
                    let _ = writeln!(out, "{indent}rowv{ob}[j] = {raw};");
                    local.insert(*ob, local_value(*d, &format!("rowv{ob}[j]")));
                }
                close(out, 1, &mut indent);
            }
            _ => {
                loops(out, &k.inner, no, &mut indent);
                open_block(out, &mut indent);
                let mut stage_local = local.clone();
                emit_stage_nodes(
                    out,
                    ir,
                    sched,
                    k,
                    stage,
                    &mut stage_local,
                    &indent,
                    no + nr,
                    &nest,
                    &HashMap::new(),
                );
                close(out, nr + 1, &mut indent);
            }
        }
    }
    close(out, no, &mut indent);
}

/// An argmax/argmin stage: a sequential scan per row (first occurrence wins, so lanes are not
/// reassociated), keeping the best value and its row-major position over the reduced dims.
#[allow(clippy::too_many_arguments)]
fn emit_arg_reduction(
    out: &mut String,
    ir: &IrGraph,
    sched: &Schedule,
    k: &Kernel,
    ob: BufId,
    op: ReduceOp,
    body: &Body,
    local: &mut HashMap<BufId, String>,
    indent: &mut String,
) {
    let no = k.outer.len();
    let nr = k.inner.len();
    let vd = body.dtypes[body.root];
    let t = c_type(vd);
    let (best, idx) = (format!("accv{ob}"), format!("acc{ob}"));
    let init = init_c(
        if op == ReduceOp::ArgMax {
            ReduceOp::Max
        } else {
            ReduceOp::Min
        },
        vd,
    );
    let cmp = if op == ReduceOp::ArgMax { ">" } else { "<" };
    let float = vd.is_floating_point();
    // `v` (at `i`) replaces the best (`b` at `bi`): strictly better, or the first NaN; with
    // `ties`, an equal value (or NaN after NaN) at a smaller position also wins (for merging
    // partial scans that ran out of order).
    let takes = |v: &str, i: &str, b: &str, bi: &str, ties: bool| -> String {
        let mut c = format!("({v} {cmp} {b})");
        if float {
            c = format!("{c} | (({v} != {v}) & ({b} == {b}))");
        }
        if ties {
            c = format!("{c} | (({v} == {b}) & ({i} < {bi}))");
            if float {
                c = format!("{c} | (({v} != {v}) & ({b} != {b}) & ({i} < {bi}))");
            }
        }
        format!("({c})")
    };
    let nest = LoopNest::identity(&[]);
    let pos = |upto: usize| {
        let mut p = String::from("0");
        for (i, s) in k.inner.iter().enumerate().take(upto) {
            p = format!("({p}) * {s} + x{}", no + i);
        }
        p
    };
    let _ = writeln!(out, "{indent}{t} {best} = {init};");
    let _ = writeln!(out, "{indent}int64_t {idx} = 0;");
    let last = k.inner.last().copied().unwrap_or(1);
    let lanes = nr > 0 && last >= ARG_LANES;
    if lanes {
        // ARG_LANES independent scans over the innermost dim (vectorized), merged at the end.
        let (bv, bi) = (format!("lv{ob}"), format!("li{ob}"));
        let _ = writeln!(out, "{indent}{t} {bv}[{ARG_LANES}];");
        let _ = writeln!(out, "{indent}int64_t {bi}[{ARG_LANES}];");
        let _ = writeln!(
            out,
            "{indent}for (int l = 0; l < {ARG_LANES}; l++) {{ {bv}[l] = {init}; {bi}[l] = 0; }}"
        );
        loops(out, &k.inner[..nr - 1], no, indent);
        let xl = no + nr - 1;
        let full = last / ARG_LANES * ARG_LANES;
        let _ = writeln!(
            out,
            "{indent}for (int64_t xc = 0; xc < {full}; xc += {ARG_LANES}) {{"
        );
        indent.push_str("  ");
        let _ = writeln!(out, "{indent}#pragma omp simd");
        let _ = writeln!(out, "{indent}for (int l = 0; l < {ARG_LANES}; l++) {{");
        indent.push_str("  ");
        let _ = writeln!(out, "{indent}const int64_t x{xl} = xc + l;");
        let v = emit_body(out, body, &format!("r{ob}"), local, indent, &nest);
        let _ = writeln!(out, "{indent}const int64_t p{ob} = {};", pos(nr));
        let tk = takes(&v, "", &format!("{bv}[l]"), "", false);
        let _ = writeln!(out, "{indent}const int tk{ob} = {tk};");
        let _ = writeln!(
            out,
            "{indent}{bv}[l] = {};",
            select_c(&format!("tk{ob}"), &v, &format!("{bv}[l]"), vd)
        );
        let _ = writeln!(
            out,
            "{indent}{bi}[l] = TF_SELI(int64_t, tk{ob}, p{ob}, {bi}[l]);"
        );
        close(out, 2, indent);
        // The tail of the innermost dim, in the scalar accumulator.
        let _ = writeln!(
            out,
            "{indent}for (int64_t x{xl} = {full}; x{xl} < {last}; x{xl}++) {{"
        );
        indent.push_str("  ");
        let v = emit_body(out, body, &format!("r{ob}"), local, indent, &nest);
        let _ = writeln!(out, "{indent}const int64_t p{ob} = {};", pos(nr));
        let tk = takes(&v, &format!("p{ob}"), &best, &idx, true);
        let _ = writeln!(out, "{indent}const int tk{ob} = {tk};");
        let _ = writeln!(
            out,
            "{indent}{best} = {};",
            select_c(&format!("tk{ob}"), &v, &best, vd)
        );
        let _ = writeln!(
            out,
            "{indent}{idx} = TF_SELI(int64_t, tk{ob}, p{ob}, {idx});"
        );
        close(out, 1, indent);
        close(out, nr - 1, indent);
        let _ = writeln!(out, "{indent}for (int l = 0; l < {ARG_LANES}; l++) {{");
        let tk = takes(&format!("{bv}[l]"), &format!("{bi}[l]"), &best, &idx, true);
        let _ = writeln!(out, "{indent}  const int tk{ob} = {tk};");
        let _ = writeln!(
            out,
            "{indent}  {best} = {};",
            select_c(&format!("tk{ob}"), &format!("{bv}[l]"), &best, vd)
        );
        let _ = writeln!(
            out,
            "{indent}  {idx} = TF_SELI(int64_t, tk{ob}, {bi}[l], {idx});"
        );
        let _ = writeln!(out, "{indent}}}");
    } else {
        loops(out, &k.inner, no, indent);
        let v = emit_body(out, body, &format!("r{ob}"), local, indent, &nest);
        let tk = takes(&v, "", &best, "", false);
        let _ = writeln!(out, "{indent}const int tk{ob} = {tk};");
        let _ = writeln!(
            out,
            "{indent}{best} = {};",
            select_c(&format!("tk{ob}"), &v, &best, vd)
        );
        let _ = writeln!(
            out,
            "{indent}{idx} = TF_SELI(int64_t, tk{ob}, (int64_t)({}), {idx});",
            pos(nr)
        );
        close(out, nr, indent);
    }
    if sched.materialized[ob] {
        let _ = writeln!(
            out,
            "{indent}b{ob}[{}] = {idx};",
            store_c(ir, ob, no, &nest)
        );
    }
    local.insert(ob, idx);
}

/// Pointwise nodes of one stage, in order; each stores if materialized and is visible to later
/// nodes of the stage through `local`. Row-level values are declared so they outlive the stage.
#[allow(clippy::too_many_arguments)]
fn emit_stage_nodes(
    out: &mut String,
    ir: &IrGraph,
    sched: &Schedule,
    k: &Kernel,
    stage: usize,
    local: &mut HashMap<BufId, String>,
    indent: &str,
    nvars: usize,
    nest: &LoopNest,
    scratch: &HashMap<BufId, String>,
) {
    for (n, _, s) in &k.nodes {
        if *s != stage {
            continue;
        }
        let IrNode::Pointwise { out: ob, body, .. } = &ir.nodes[*n] else {
            continue;
        };
        let v = emit_body(out, body, &format!("p{ob}"), local, indent, nest);
        if let Some(at) = scratch.get(ob) {
            let d = ir.buffers[*ob].dtype;
            let _ = writeln!(out, "{indent}{at} = {};", local_value(d, &v));
        } else if sched.materialized[*ob] {
            let _ = writeln!(
                out,
                "{indent}b{ob}[{}] = {};",
                store_c(ir, *ob, nvars, nest),
                store_conv(ir.buffers[*ob].dtype, &v)
            );
        }
        local.insert(*ob, local_value(ir.buffers[*ob].dtype, &v));
    }
}

/// The whole translation unit.
pub fn generate(ir: &IrGraph, sched: &Schedule) -> CSource {
    let mut code = String::from(PRELUDE);
    let mut kernels = Vec::new();
    for k in &sched.kernels {
        kernels.push(emit_kernel(&mut code, ir, sched, k));
    }
    CSource { code, kernels }
}
