//! The C printer: one C source per graph, one function per kernel.
//!
//! Outer loops run under `#pragma omp parallel for` (collapsed, with an `if` so tiny kernels do
//! not pay for threads); inner loops are plain counted loops over `int64_t` with affine indices
//! and `restrict` pointers, which gcc vectorizes (`omp simd` marks the innermost ones, with
//! reduction clauses so float sums may be reassociated there and only there). Every kernel takes
//! `void **args`, one pointer per buffer it touches, in [`KernelAbi::bufs`] order.

use std::collections::HashMap;
use std::fmt::Write;

use fx::DType;

use crate::ir::{BinOp, Body, BufId, IrGraph, IrNode, ReduceOp, Scalar, UnOp, Val};
use crate::schedule::{Kernel, Level, Schedule};

/// The exported symbol every generated library defines; the loader checks it (a truncated or
/// foreign file fails the check), and its value names the source hash.
pub const VALIDATION_SYMBOL: &str = "torchferro_kernels_abi";

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

pub fn c_type(d: DType) -> &'static str {
    match d {
        DType::Float32 => "float",
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

const PRELUDE: &str = r#"#include <math.h>
#include <stdint.h>
#include <omp.h>

/* NaN-propagating max/min, as torch.maximum/minimum and max reductions. */
static inline float tf_maxf(float a, float b) { return (a != a || a > b) ? a : b; }
static inline float tf_minf(float a, float b) { return (a != a || a < b) ? a : b; }
static inline double tf_maxd(double a, double b) { return (a != a || a > b) ? a : b; }
static inline double tf_mind(double a, double b) { return (a != a || a < b) ? a : b; }
#define TF_MAXI(a, b) ((a) > (b) ? (a) : (b))
#define TF_MINI(a, b) ((a) < (b) ? (a) : (b))
#pragma omp declare reduction(tfmax : float : omp_out = tf_maxf(omp_out, omp_in)) initializer(omp_priv = -INFINITY)
#pragma omp declare reduction(tfmin : float : omp_out = tf_minf(omp_out, omp_in)) initializer(omp_priv = INFINITY)
#pragma omp declare reduction(tfmax : double : omp_out = tf_maxd(omp_out, omp_in)) initializer(omp_priv = -INFINITY)
#pragma omp declare reduction(tfmin : double : omp_out = tf_mind(omp_out, omp_in)) initializer(omp_priv = INFINITY)
#define TF_INT_REDUCTIONS(T, LO, HI) \
  _Pragma("omp declare reduction(tfmax : T : omp_out = TF_MAXI(omp_out, omp_in)) initializer(omp_priv = LO)") \
  _Pragma("omp declare reduction(tfmin : T : omp_out = TF_MINI(omp_out, omp_in)) initializer(omp_priv = HI)")
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
        DType::Float32 | DType::Float64 => {
            let v = s.as_f64();
            let v = if d == DType::Float32 {
                v as f32 as f64
            } else {
                v
            };
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
    if d == DType::Float32 {
        "f"
    } else {
        ""
    }
}

fn unary_c(op: UnOp, a: &str, d: DType) -> String {
    use UnOp::*;
    let f = fsfx(d);
    let float = d.is_floating_point();
    let one = if d == DType::Float32 { "1.0f" } else { "1.0" };
    match op {
        Neg => format!("(-{a})"),
        Abs if float => format!("fabs{f}({a})"),
        Abs => format!("({a} < 0 ? -{a} : {a})"),
        Not => format!("(!{a})"),
        BitNot => format!("(~{a})"),
        IsNan => format!("({a} != {a})"),
        Rsqrt => format!("({one} / sqrt{f}({a}))"),
        Reciprocal => format!("({one} / {a})"),
        Sign if float => format!("({a} != {a} ? {a} : (({a} > 0) - ({a} < 0)))"),
        Sign => format!("(({a} > 0) - ({a} < 0))"),
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

fn binary_c(op: BinOp, a: &str, b: &str, d: DType) -> String {
    use BinOp::*;
    let f = fsfx(d);
    let float = d.is_floating_point();
    let boolean = d == DType::Bool;
    match op {
        Add if boolean => format!("({a} || {b})"),
        Mul if boolean => format!("({a} && {b})"),
        Add => format!("({a} + {b})"),
        Sub => format!("({a} - {b})"),
        Mul => format!("({a} * {b})"),
        Div => format!("({a} / {b})"),
        FloorDiv => format!("tf_floordiv{f}({a}, {b})"),
        Rem => format!("tf_rem{f}({a}, {b})"),
        Pow => format!("pow{f}({a}, {b})"),
        Atan2 => format!("atan2{f}({a}, {b})"),
        Max if float => format!("tf_max{}({a}, {b})", if f == "f" { "f" } else { "d" }),
        Min if float => format!("tf_min{}({a}, {b})", if f == "f" { "f" } else { "d" }),
        Max if boolean => format!("({a} || {b})"),
        Min if boolean => format!("({a} && {b})"),
        Max => format!("TF_MAXI({a}, {b})"),
        Min => format!("TF_MINI({a}, {b})"),
        Eq => format!("({a} == {b})"),
        Ne => format!("({a} != {b})"),
        Lt => format!("({a} < {b})"),
        Le => format!("({a} <= {b})"),
        Gt => format!("({a} > {b})"),
        Ge => format!("({a} >= {b})"),
        And if boolean => format!("({a} && {b})"),
        Or if boolean => format!("({a} || {b})"),
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
) -> String {
    let name = |v: usize| format!("{prefix}_{v}");
    for (k, v) in body.vals.iter().enumerate() {
        let d = body.dtypes[k];
        let expr = match v {
            Val::Load { buf, index } => match local.get(buf) {
                Some(n) => n.clone(),
                None => format!("b{buf}[{}]", index.to_c(&var)),
            },
            Val::Const(s) => literal(*s, d),
            Val::Index(e) => format!("((int64_t)({}))", e.to_c(&var)),
            Val::Unary(op, a) => unary_c(*op, &name(*a), body.dtypes[*a]),
            Val::Binary(op, a, b) => binary_c(*op, &name(*a), &name(*b), body.dtypes[*a]),
            Val::Where(c, a, b) => format!("({} ? {} : {})", name(*c), name(*a), name(*b)),
            Val::Cast(a) => format!("(({}){})", c_type(d), name(*a)),
        };
        let _ = writeln!(out, "{indent}const {} {} = {expr};", c_type(d), name(k));
    }
    name(body.root)
}

/// Store index of a kernel node's output.
fn store_c(ir: &IrGraph, buf: BufId, nvars: usize) -> String {
    let b = &ir.buffers[buf];
    let mut terms = Vec::new();
    for (k, st) in b.strides.iter().enumerate().take(nvars) {
        if b.sizes[k] != 1 {
            terms.push(format!("{st}*x{k}"));
        }
    }
    if terms.is_empty() {
        "0".into()
    } else {
        terms.join(" + ")
    }
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
    }
}

fn combine_c(op: ReduceOp, acc: &str, v: &str, d: DType) -> String {
    let bop = match op {
        ReduceOp::Sum => BinOp::Add,
        ReduceOp::Prod => BinOp::Mul,
        ReduceOp::Max => BinOp::Max,
        ReduceOp::Min => BinOp::Min,
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
    let _ = writeln!(out, "void {}(void **restrict args) {{", k.name);
    for (i, b) in bufs.iter().enumerate() {
        let t = c_type(ir.buffers[*b].dtype);
        let _ = writeln!(out, "  {t} *restrict b{b} = ({t} *)args[{i}];");
    }
    let no = k.outer.len();
    let outer_n: i64 = k.outer.iter().product();
    let inner_n: i64 = k.inner.iter().product();
    let mut indent = String::from("  ");
    let pure_pointwise = k.inner.is_empty() && k.nodes.iter().all(|(_, l, _)| *l == Level::Inner);
    if pure_pointwise {
        // All dims are loops: parallel over all but the last, vectorized over the last.
        let n = k.outer.len();
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
        for (i, s) in k.outer.iter().enumerate() {
            if n > 1 && i == n - 1 {
                let _ = writeln!(out, "{indent}#pragma omp simd");
            }
            let _ = writeln!(out, "{indent}for (int64_t x{i} = 0; x{i} < {s}; x{i}++) {{");
            indent.push_str("  ");
        }
        let mut local = HashMap::new();
        emit_stage_nodes(out, ir, sched, k, 0, &mut local, &indent, n);
        close(out, n, &mut indent);
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
    let mut local: HashMap<BufId, String> = HashMap::new();
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
                let v = emit_body(out, body, &format!("r{ob}"), &local, &indent);
                let _ = writeln!(out, "{indent}{acc} = {};", combine_c(*op, &acc, &v, d));
                close(out, nr, &mut indent);
                if sched.materialized[*ob] {
                    let _ = writeln!(out, "{indent}b{ob}[{}] = {acc};", store_c(ir, *ob, no));
                }
                local.insert(*ob, acc);
            }
            (IrNode::Pointwise { .. }, Level::Row) => {
                emit_stage_nodes(out, ir, sched, k, stage, &mut local, &indent, no);
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
                emit_stage_nodes(out, ir, sched, k, stage, &mut stage_local, &indent, no + nr);
                close(out, nr, &mut indent);
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
) {
    for (n, _, s) in &k.nodes {
        if *s != stage {
            continue;
        }
        let IrNode::Pointwise { out: ob, body, .. } = &ir.nodes[*n] else {
            continue;
        };
        let v = emit_body(out, body, &format!("p{ob}"), local, indent);
        if sched.materialized[*ob] {
            let _ = writeln!(out, "{indent}b{ob}[{}] = {v};", store_c(ir, *ob, nvars));
        }
        local.insert(*ob, v);
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
