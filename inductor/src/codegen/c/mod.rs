//! The C printer: one C source per graph, one function per kernel.
//!
//! Outer loops run under `#pragma omp parallel for` (collapsed, with an `if` so tiny kernels do
//! not pay for threads); inner loops are plain counted loops over `int64_t` with affine indices
//! and `restrict` pointers, which gcc vectorizes (`omp simd` marks the innermost ones, with
//! reduction clauses so float sums may be reassociated there and only there). Every kernel takes
//! `void **args`, one pointer per buffer it touches, in [`KernelAbi::bufs`] order. What each
//! kernel computes and over which buffers is decided by [`super::plan`]; this module only
//! spells the plan in C (OpenMP pragmas and thresholds come from the [`CpuPolicy`]).
//!
//! What keeps the loops vectorized:
//! - math functions are declared `omp declare simd`, so gcc calls glibc's libmvec versions;
//! - selects, max/min and bool logic are branch-free (gcc 12 keeps a loop scalar when a branch
//!   sits next to a SIMD call);
//! - a pointwise kernel's loops follow its output's memory order and merge where indices stay
//!   affine ([`LoopNest`], planned);
//! - a reduction over leading dims processes rows in blocks, so the innermost loop walks
//!   contiguous memory (`emit_blocked`); argmax/argmin scan in independent lanes.
//!
//! float16/bfloat16 are stored as `uint16_t` and computed in `float`: converted on load, rounded
//! on store and on explicit casts only (torch.compile's rule; eager rounds after every op).

use std::collections::{HashMap, HashSet};
use std::fmt::Write;

use fx::DType;

use super::plan::{KernelPlan, KernelShape, LoopNest};
use super::{CSource, KernelAbi};
use crate::entity::EntityVec;
use crate::index::Idx;
use crate::ir::{BinOp, Body, BodyOps, BufId, Gather, IrGraph, IrNode, ReduceOp, Scalar, UnOp};
use crate::schedule::{Kernel, KernelId, KernelNode, Level, Schedule};
use crate::size::Size;
use crate::target::CpuPolicy;

mod arg_reduction;
mod blocked;
pub(in crate::codegen) mod syntax;

use arg_reduction::*;
use blocked::*;
#[cfg(test)]
pub(crate) use syntax::hex_float;
use syntax::*;
pub use syntax::{c_type, storage_type};

pub(in crate::codegen) fn var(k: u32) -> String {
    format!("x{k}")
}

/// A value of a body printed as C: the variable holding it and its dtype.
#[derive(Clone, Debug)]
pub(in crate::codegen) struct CVar {
    name: String,
    dtype: DType,
    /// Computed from constants and loads of elements no loop variable selects: the same at
    /// every point (printed before the loops when the printer hoists).
    invariant: bool,
}

/// What the body printer writes differently for one target's compiler: the C of the CPU
/// kernels and the CUDA C of the GPU's share everything else.
#[derive(Clone, Copy, Debug)]
pub(in crate::codegen) struct Dialect {
    /// The statement a kernel runs when a gather's position is out of range (it sets the flag
    /// the runtime reads after the kernel).
    pub index_error: &'static str,
    /// Whether `rsqrt` is the math library's own (CUDA's `rsqrtf`, which eager's CUDA kernels
    /// for `torch.rsqrt`, `x ** -0.5` and layer norm's inverse deviation call: one special-
    /// function instruction, 2 ulp) rather than a correctly rounded `1 / sqrt` (a square root
    /// and a division, each with its own slow path: what the CPU's vectorized `rsqrt` computes).
    pub rsqrt: bool,
}

/// [`Dialect`] of the CPU's C.
const CPU: Dialect = Dialect {
    index_error: "__atomic_store_n(&tf_index_error, 1, __ATOMIC_RELAXED);",
    rsqrt: false,
};

/// The C printer as a [`BodyOps`] handler: each value becomes a `const T name = expr;` line
/// (names `{prefix}_{k}` for value k), inside the loops the caller opened.
struct CPrinter<'a> {
    out: &'a mut String,
    prefix: &'a str,
    /// Replaces loads of a buffer by a C variable (a value this kernel already has).
    local: &'a HashMap<BufId, String>,
    indent: &'a str,
    nest: &'a LoopNest,
    /// The number of the value being printed (handlers are called once per value, in order).
    next: usize,
    dialect: Dialect,
    /// Where values the same at every point go (before the loops), and the buffers the kernel
    /// stores (never hoisted loads: a store may change them). `None`: every value in place.
    hoist: Option<Hoist<'a>>,
}

/// Loop-invariant values printed once before a kernel's loops: a per-tensor scalar (an
/// optimizer's bias correction `1 - beta2 ** step`, a `pow` of a loaded step count) would
/// otherwise be computed at every element, since the compiler cannot move a load out of a loop
/// that stores through other pointers of the OpenMP body.
///
/// In a staged kernel over symbolic sizes the values go before each reduced loop, so only the
/// loops from `from_var` on count (the row's vars are fixed there), and no load moves (the
/// loop it leaves might run zero times): a layer norm's `(float)s2`, converted in the loop,
/// kept gcc from vectorizing its variance loop (201 us against the static kernel's 107 in a
/// C harness at `[8, 64, 256]`; hoisted, 112).
pub(in crate::codegen) struct Hoist<'a> {
    pub pre: &'a mut String,
    pub indent: &'a str,
    pub stored: &'a HashSet<BufId>,
    /// The first loop var the values must not depend on.
    pub from_var: u32,
    /// Whether loads move too.
    pub loads: bool,
}

impl CPrinter<'_> {
    fn name(&self, k: usize) -> String {
        format!("{}_{k}", self.prefix)
    }

    /// An index at the loop nest's variables, in C.
    fn at(&self, e: &Idx) -> String {
        idx_c(&self.nest.apply(e), &var)
    }

    /// Declares the current value as `expr`.
    fn def(&mut self, expr: String, dtype: DType) -> CVar {
        self.def_at(expr, dtype, false)
    }

    /// Declares the current value; an invariant one goes before the loops when hoisting.
    fn def_at(&mut self, expr: String, dtype: DType, invariant: bool) -> CVar {
        let name = self.name(self.next);
        self.next += 1;
        let (out, indent, invariant) = match &mut self.hoist {
            Some(h) if invariant => (&mut *h.pre, h.indent, true),
            _ => (&mut *self.out, self.indent, false),
        };
        let _ = writeln!(out, "{indent}const {} {name} = {expr};", c_type(dtype));
        CVar {
            name,
            dtype,
            invariant,
        }
    }

    /// Whether a load of `buf` at `index` reads one element at every point.
    fn invariant_load(&self, buf: BufId, index: &Idx) -> bool {
        self.hoist.as_ref().is_some_and(|h| {
            h.loads
                && !h.stored.contains(&buf)
                && !self.local.contains_key(&buf)
                && invariant_index(self.nest, index, h.from_var)
        })
    }
}

impl<'b> BodyOps<'b> for CPrinter<'_> {
    type V = CVar;

    fn load(&mut self, buf: BufId, index: &'b Idx, dtype: DType) -> CVar {
        let expr = match self.local.get(&buf) {
            Some(n) => n.clone(),
            None => load_conv(dtype, format!("b{buf}[{}]", self.at(index))),
        };
        let inv = self.invariant_load(buf, index);
        self.def_at(expr, dtype, inv)
    }

    fn constant(&mut self, value: Scalar, dtype: DType) -> CVar {
        self.def_at(literal(value, dtype), dtype, true)
    }

    fn index(&mut self, index: &'b Idx) -> CVar {
        let expr = format!("((int64_t)({}))", self.at(index));
        // A position the same at every point (a border column's, its loop left out by
        // `LoopNest::without_unit_loops`) goes before the loops with the masks computed from it.
        let inv = self
            .hoist
            .as_ref()
            .is_some_and(|h| invariant_index(self.nest, index, h.from_var));
        self.def_at(expr, DType::Int64, inv)
    }

    fn unary(&mut self, op: UnOp, a: &CVar, dtype: DType) -> CVar {
        let expr = match op {
            UnOp::Rsqrt if self.dialect.rsqrt && a.dtype.is_floating_point() => {
                format!("rsqrt{}({})", fsfx(a.dtype), a.name)
            }
            _ => unary_c(op, &a.name, a.dtype),
        };
        self.def_at(expr, dtype, a.invariant)
    }

    fn binary(&mut self, op: BinOp, a: &CVar, b: &CVar, dtype: DType) -> CVar {
        let inv = a.invariant && b.invariant;
        self.def_at(binary_c(op, &a.name, &b.name, a.dtype), dtype, inv)
    }

    fn select(&mut self, cond: &CVar, a: &CVar, b: &CVar, dtype: DType) -> CVar {
        let inv = cond.invariant && a.invariant && b.invariant;
        self.def_at(select_c(&cond.name, &a.name, &b.name, dtype), dtype, inv)
    }

    fn cast(&mut self, a: &CVar, dtype: DType) -> CVar {
        let expr = match dtype {
            DType::Float16 => format!("tf_rh((float){})", a.name),
            DType::BFloat16 => format!("tf_rbf((float){})", a.name),
            // Eager converts a float to uint8 through int64 (so -1.0 is 255, on CPU and CUDA
            // alike); a direct conversion is undefined there, and CUDA's saturates to 0.
            DType::UInt8 if a.dtype.is_floating_point() => {
                format!("((uint8_t)(int64_t){})", a.name)
            }
            _ => format!("(({}){})", c_type(dtype), a.name),
        };
        self.def_at(expr, dtype, a.invariant)
    }

    fn gather(&mut self, g: Gather<'b, '_, CVar>, dtype: DType) -> CVar {
        let me = self.name(self.next);
        let (p, c) = (format!("{me}_i"), format!("{me}_c"));
        let (size, indent) = (g.size, self.indent);
        let raw = format!("(int64_t){}", g.pos.name);
        let raw = if g.wrap {
            format!("({raw} + TF_SELI(int64_t, {raw} < 0, {size}, 0))")
        } else {
            raw
        };
        let _ = writeln!(self.out, "{indent}const int64_t {p} = {raw};");
        let _ = writeln!(
            self.out,
            "{indent}const int64_t {c} = tf_clampi({p}, 0, {});",
            size - 1
        );
        let _ = writeln!(
            self.out,
            "{indent}if ({c} != {p}) {}",
            self.dialect.index_error
        );
        let at = self.at(g.index);
        let expr = load_conv(dtype, format!("b{}[{at} + {}*{c}]", g.buf, g.stride));
        self.def(expr, dtype)
    }
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
    emit_body_with(out, body, prefix, local, indent, nest, CPU)
}

/// [`emit_body`] in another target's [`Dialect`].
pub(in crate::codegen) fn emit_body_with(
    out: &mut String,
    body: &Body,
    prefix: &str,
    local: &HashMap<BufId, String>,
    indent: &str,
    nest: &LoopNest,
    dialect: Dialect,
) -> String {
    emit_body_hoisted(out, body, prefix, local, indent, nest, dialect, None)
}

/// [`emit_body_with`], printing the values that are the same at every point into `hoist`.
#[allow(clippy::too_many_arguments)]
fn emit_body_hoisted(
    out: &mut String,
    body: &Body,
    prefix: &str,
    local: &HashMap<BufId, String>,
    indent: &str,
    nest: &LoopNest,
    dialect: Dialect,
    hoist: Option<Hoist<'_>>,
) -> String {
    let mut printer = CPrinter {
        out,
        prefix,
        local,
        indent,
        nest,
        next: 0,
        dialect,
        hoist,
    };
    body.visit(&mut printer).name
}

/// Whether `index` selects the same element at every point of `nest`.
fn invariant_index(nest: &LoopNest, index: &Idx, from_var: u32) -> bool {
    let e = nest.apply(index);
    (from_var..nest.sizes.len() as u32).all(|k| !e.uses_var(k))
}

/// The kernel being printed, as the functions that print its parts read it.
#[derive(Clone, Copy)]
pub(in crate::codegen) struct Cx<'a> {
    pub ir: &'a IrGraph,
    pub sched: &'a Schedule,
    pub k: &'a Kernel,
    pub dialect: Dialect,
}

impl<'a> Cx<'a> {
    fn cpu(ir: &'a IrGraph, sched: &'a Schedule, k: &'a Kernel) -> Cx<'a> {
        Cx {
            ir,
            sched,
            k,
            dialect: CPU,
        }
    }
}

/// A buffer's value as later nodes of the kernel read it without going through memory: rounded
/// as a store to its dtype would round it.
pub(in crate::codegen) fn local_value(d: DType, v: &str) -> String {
    match d {
        DType::Float16 => format!("tf_rh({v})"),
        DType::BFloat16 => format!("tf_rbf({v})"),
        _ => v.to_string(),
    }
}

pub(in crate::codegen) fn store_c(
    ir: &IrGraph,
    buf: BufId,
    nvars: usize,
    nest: &LoopNest,
) -> String {
    idx_c(&nest.apply(&super::plan::store_idx(ir, buf, nvars)), &var)
}

/// The store index of a pointwise node writing `buf` from element `offset` on (a range of a
/// split store, `IrNode::Pointwise`; 0 for a node covering the buffer).
pub(in crate::codegen) fn store_range_c(
    ir: &IrGraph,
    buf: BufId,
    offset: Size,
    nvars: usize,
    nest: &LoopNest,
) -> String {
    let e = super::plan::store_idx(ir, buf, nvars).add_const(offset);
    idx_c(&nest.apply(&e), &var)
}

fn loops(out: &mut String, sizes: &[Size], first_var: usize, indent: &mut String) {
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

/// A pure pointwise kernel: all dims are loops (as planned), parallel over all but the last,
/// vectorized over the last.
fn emit_pointwise(
    out: &mut String,
    ir: &IrGraph,
    sched: &Schedule,
    k: &Kernel,
    nest: &LoopNest,
    par: i64,
) {
    let outer_n: Size = k.outer.iter().product();
    let mut indent = String::from("  ");
    let n = nest.sizes.len();
    // The loops' body first: values the same at every point go to `pre`, printed before them.
    let stored: HashSet<BufId> = k
        .nodes
        .iter()
        .flat_map(|kn| ir.nodes[kn.node].outputs())
        .collect();
    let mut body = String::new();
    let mut pre = String::new();
    let mut local = HashMap::new();
    let body_indent = "  ".repeat(n + 1);
    // Values are hoisted out of loops that run at least once (a constant extent), or under a
    // check that they do (symbolic extents).
    let total: Size = nest.sizes.iter().product();
    let hoist = n > 0 && total.as_const().is_none_or(|t| t > 0);
    emit_stage_nodes_hoisted(
        &mut body,
        Cx::cpu(ir, sched, k),
        0,
        &mut local,
        &body_indent,
        k.outer.len(),
        nest,
        &HashMap::new(),
        hoist.then_some((&mut pre, "  ", &stored, 0, true)),
    );
    // Hoisted loads run even where the loops would not: an empty kernel (a size-0 tensor, whose
    // broadcast input may have no element at all) skips them.
    let mut conds: Vec<String> = nest.guards.iter().map(|g| format!("{g} > 0")).collect();
    if !pre.is_empty() && total.as_const().is_none() {
        conds.push(format!("{total} > 0"));
    }
    let guard = !conds.is_empty();
    if guard {
        let _ = writeln!(out, "  if ({}) {{", conds.join(" && "));
    }
    out.push_str(&pre);
    let strided = strided_store(ir, sched, k, nest);
    if n > 0 {
        let work = outer_n;
        if n == 1 {
            // The `if` names `parallel`: on a combined `parallel for simd` an unmodified `if`
            // applies to the `simd` part too (OpenMP 5.0), and gcc then runs the loop scalar
            // wherever the work is below the threshold: a 12 512-element `relu` took 6.5 us
            // instead of 1.3 (session 23). A loop storing with a stride other than 1 (a corner
            // piece of a split pool, one point per channel) stays scalar, as that `if` left
            // every such static loop below the threshold: its gathers and scatters save
            // nothing there, and their code made the dynamic pool's library slower to compile.
            let no_simd = if strided { " if(simd: 0)" } else { "" };
            let _ = writeln!(
                out,
                "  #pragma omp parallel for simd if(parallel: {work} >= {par}){no_simd}"
            );
        } else {
            let _ = writeln!(
                out,
                "  #pragma omp parallel for collapse({}) if({work} >= {par})",
                n - 1
            );
        }
    }
    let symbolic_nest = k.outer.iter().any(|s| s.as_const().is_none());
    let simd = n > 1 && !(strided && symbolic_nest);
    for (i, s) in nest.sizes.iter().enumerate() {
        if simd && i == n - 1 {
            let _ = writeln!(out, "{indent}#pragma omp simd");
        } else if n > 1 && i == n - 1 {
            // The strided innermost loop of a symbolic nest (not forced `simd`, see
            // `strided_store`): gcc vectorizes it where its cost model says so, but inside the
            // function OpenMP outlines the `restrict` of the buffers is lost, and it kept a
            // second, scalar copy of the loop behind a run-time overlap test. `ivdep` states
            // what `omp simd` states on every other innermost loop (no dependence between
            // iterations; each point is stored once): the copy goes, a tenth of the dynamic
            // `avg_pool2d`'s compile (docs/dynamic-shapes.md "Session 25 (dyn25)").
            let _ = writeln!(out, "{indent}#pragma GCC ivdep");
        }
        let _ = writeln!(out, "{indent}for (int64_t x{i} = 0; x{i} < {s}; x{i}++) {{");
        indent.push_str("  ");
    }
    out.push_str(&body);
    close(out, n, &mut indent);
    if guard {
        let _ = writeln!(out, "  }}");
    }
}

/// Whether a nest's innermost loop stores with a stride other than 1. A symbolic nest keeps
/// its loops in the nodes' order (a pool's border column walks its rows), and forcing
/// `omp simd` on such a loop makes gcc gather and scatter, which the column pieces of the
/// dynamic `avg_pool2d` ran slower with (1.6 -> 1.1 us at 17x23, session 22); gcc still
/// vectorizes where it finds it pays. A constant nest of several loops puts its smallest
/// stride innermost and keeps the pragma.
fn strided_store(ir: &IrGraph, sched: &Schedule, k: &Kernel, nest: &LoopNest) -> bool {
    let n = nest.sizes.len();
    if n == 0 {
        return false;
    }
    k.nodes.iter().any(|kn| match &ir.nodes[kn.node] {
        IrNode::Pointwise { out, offset, .. } if sched.materialized[*out] => {
            let e = super::plan::store_idx(ir, *out, k.outer.len()).add_const(*offset);
            let c = super::plan::coef(&nest.apply(&e), n as u32 - 1);
            c != Size::Const(1)
        }
        _ => false,
    })
}

/// Prints one kernel as planned.
fn emit_kernel(
    out: &mut String,
    ir: &IrGraph,
    sched: &Schedule,
    k: &Kernel,
    plan: &KernelPlan,
    policy: &CpuPolicy,
) -> KernelAbi {
    let par = policy.parallel_threshold;
    let _ = writeln!(out, "void {}(void **restrict args) {{", k.name);
    for (i, (b, alias)) in plan.bufs.iter().zip(&plan.aliases).enumerate() {
        let t = storage_type(ir.buffers[*b].dtype);
        match alias {
            Some(x) => {
                let _ = writeln!(out, "  {t} *const b{b} = b{x}; (void)args[{i}];");
            }
            None => {
                let _ = writeln!(out, "  {t} *restrict b{b} = ({t} *)args[{i}];");
            }
        }
    }
    // A graph with symbolic sizes: its kernels read the symbols' values from one more argument
    // (after the buffers), every symbol of the graph in order (`IrGraph::symbols`).
    let syms = ir.symbols();
    if !syms.is_empty() {
        let n = plan.bufs.len();
        let _ = writeln!(
            out,
            "  const int64_t *const tf_sym = (const int64_t *)args[{n}];"
        );
        for (i, k) in syms.iter().enumerate() {
            let _ = writeln!(out, "  const int64_t s{k} = tf_sym[{i}]; (void)s{k};");
        }
    }
    for (b, bytes) in &plan.hugepage {
        match (bytes.as_const(), policy.hugepage_min_bytes) {
            (None, Some(min)) => {
                let _ = writeln!(out, "  if ({bytes} >= {min}) tf_hugepage(b{b}, {bytes});");
            }
            _ => {
                let _ = writeln!(out, "  tf_hugepage(b{b}, {bytes});");
            }
        }
    }
    let abi = || KernelAbi {
        name: k.name.clone(),
        bufs: plan.bufs.clone(),
    };
    let no = k.outer.len();
    let outer_n: Size = k.outer.iter().product();
    let inner_n: Size = k.inner.iter().product();
    let mut indent = String::from("  ");
    let scratch = match &plan.shape {
        KernelShape::Pointwise(nest) => {
            emit_pointwise(out, ir, sched, k, nest, par);
            let _ = writeln!(out, "}}\n");
            return abi();
        }
        KernelShape::Blocked => {
            emit_blocked(
                out,
                ir,
                sched,
                k,
                outer_n.saturating_mul(inner_n.at_least_one()),
                par,
                policy.sizes_unfolded,
            );
            let _ = writeln!(out, "}}\n");
            return abi();
        }
        KernelShape::Staged { scratch } => scratch,
    };
    // The loops printed: a symbolic kernel's merged (`plan::staged_nest`: `rows` row loops,
    // then the reduced ones), else the nodes' own. The nodes' var counts (`no`, `no + nr`)
    // still address their indices, which `nest` maps to the loops.
    let (nest, rows) =
        super::plan::staged_nest(ir, sched, k).unwrap_or_else(|| (LoopNest::identity(&[]), no));
    let (row_loops, red_loops): (&[Size], &[Size]) = match nest.sizes.is_empty() {
        true => (&k.outer, &k.inner),
        false => nest.sizes.split_at(rows),
    };
    let par_outer = rows > 0;
    // Values the same along a stage's reduced loops move before them where the sizes are
    // symbolic (`Hoist`; static kernels are printed as they were).
    let hoisting = !nest.sizes.is_empty();
    if par_outer {
        let _ = writeln!(
            out,
            "  #pragma omp parallel for collapse({rows}) if({} >= {par})",
            outer_n.saturating_mul(inner_n.at_least_one())
        );
    }
    loops(out, row_loops, 0, &mut indent);
    let mut local: HashMap<BufId, String> = HashMap::new();
    // Row-local buffers: declared per row (so per thread), addressed by the inner position.
    let mut inner_pos = String::from("0");
    for (i, s) in red_loops.iter().enumerate() {
        inner_pos = format!("({inner_pos}) * {s} + x{}", rows + i);
    }
    let scratch_at: HashMap<BufId, String> = scratch
        .iter()
        .map(|&b| (b, format!("sb{b}[{inner_pos}]")))
        .collect();
    for (slot, &b) in scratch.iter().enumerate() {
        let t = c_type(ir.buffers[b].dtype);
        let _ = match inner_n.as_const() {
            Some(_) => writeln!(out, "{indent}{t} sb{b}[{inner_n}];"),
            // A row of symbolic length: this thread's heap array (`ROW_SCRATCH`).
            None => writeln!(
                out,
                "{indent}{t} *restrict sb{b} = ({t} *)tf_row_scratch({slot}, ({inner_n}) * (int64_t)sizeof({t}));"
            ),
        };
    }
    let nstages = k.nodes.iter().map(|kn| kn.stage + 1).max().unwrap_or(0);
    for stage in 0..nstages {
        let members: Vec<&KernelNode> = k.nodes.iter().filter(|kn| kn.stage == stage).collect();
        let first = &ir.nodes[members[0].node];
        match (first, members[0].level) {
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
                let nr = red_loops.len();
                // A float sum that no `omp simd` spreads over vector lanes adds one element at
                // a time into one accumulator (per thread): in double, as the blocked kernels
                // do, it keeps torch's cascade-summed accuracy (a whole-tensor sum of 1127
                // values was 1.5e-5 off in float); scalar double adds cost what float ones do.
                // A float sum over one long vectorized row accumulates in blocks (`cascade`):
                // per block a fresh accumulator the `omp simd` lanes share, added into the
                // row's accumulator (double for float-computed dtypes) once per block.
                let cascade = *op == ReduceOp::Sum
                    && d.is_floating_point()
                    && par_outer
                    && nr == 1
                    && red_loops[0]
                        .as_const()
                        .is_none_or(|n| n > policy.cascade_min_len);
                let wide =
                    *op == ReduceOp::Sum && is_f32_like(d) && (!(par_outer && nr == 1) || cascade);
                let ad = if wide { DType::Float64 } else { d };
                let _ = writeln!(out, "{indent}{} {acc} = {};", c_type(ad), init_c(*op, ad));
                // A float max or min over a row, vectorized: OpenMP's own `max`/`min` and a NaN
                // flag instead of the NaN-propagating `tfmax`/`tfmin`, whose per-lane
                // accumulator gcc kept in memory at a run-time trip count (a store and a load
                // per vector step: amax over rows of 256 took 132 us in a C harness, 2.3x the
                // static kernel's 58; this form 22). Same values: a NaN anywhere makes the
                // result NaN, and ties of -0.0 and 0.0 were already up to the lanes' order.
                // Static rows too (session 25): at a constant trip count `tfmax`'s select of
                // a compare and a NaN test per lane ran 59-70 us, this form 25.
                let split = (*op == ReduceOp::Max || *op == ReduceOp::Min)
                    && matches!(ad, DType::Float32 | DType::Float64)
                    && par_outer
                    && nr == 1;
                let nan = format!("nan{ob}");
                if split {
                    let _ = writeln!(out, "{indent}int {nan} = 0;");
                }
                // The body first: over symbolic sizes its values the same along the reduced
                // loops go before them (`Hoist`).
                let depth = nr + usize::from(cascade);
                let body_indent = format!("{indent}{}", "  ".repeat(depth));
                let mut body_c = String::new();
                let mut pre = String::new();
                let no_stores = HashSet::new();
                let hoist = (hoisting && nr > 0).then(|| Hoist {
                    pre: &mut pre,
                    indent: &indent,
                    stored: &no_stores,
                    from_var: rows as u32,
                    loads: false,
                });
                let v = emit_body_hoisted(
                    &mut body_c,
                    body,
                    &format!("r{ob}"),
                    &local,
                    &body_indent,
                    &nest,
                    CPU,
                    hoist,
                );
                out.push_str(&pre);
                // The lanes' accumulator of one block (`cascade`), in the row's compute type.
                let lane_acc = format!("accb{ob}");
                if cascade {
                    let xr = format!("x{rows}");
                    let n = &red_loops[0];
                    let b = crate::target::SUM_BLOCK;
                    let _ = writeln!(
                        out,
                        "{indent}for (int64_t xc{ob} = 0; xc{ob} < {n}; xc{ob} += {b}) {{"
                    );
                    indent.push_str("  ");
                    // A constant length that is a whole number of blocks: every block is
                    // full, and gcc's vector loop then needs no remainder.
                    let _ = match n.as_const() {
                        Some(c) if c % b == 0 && !policy.sizes_unfolded => {
                            writeln!(out, "{indent}const int64_t xe{ob} = xc{ob} + {b};")
                        }
                        _ => writeln!(
                            out,
                            "{indent}const int64_t xe{ob} = {n} - xc{ob} < {b} ? {n} : xc{ob} + {b};"
                        ),
                    };
                    let _ = writeln!(
                        out,
                        "{indent}{} {lane_acc} = {};",
                        c_type(d),
                        init_c(*op, d)
                    );
                    let _ = writeln!(out, "{indent}#pragma omp simd reduction(+:{lane_acc})");
                    let _ = writeln!(
                        out,
                        "{indent}for (int64_t {xr} = xc{ob}; {xr} < xe{ob}; {xr}++) {{"
                    );
                    indent.push_str("  ");
                    out.push_str(&body_c);
                    let _ = writeln!(
                        out,
                        "{indent}{lane_acc} = {};",
                        combine_c(*op, &lane_acc, &v, d)
                    );
                    close(out, 1, &mut indent);
                    let folded = if wide {
                        format!("(double){lane_acc}")
                    } else {
                        lane_acc.clone()
                    };
                    let _ = writeln!(
                        out,
                        "{indent}{acc} = {};",
                        combine_c(*op, &acc, &folded, ad)
                    );
                    close(out, 1, &mut indent);
                }
                if !cascade {
                    // An ordered sum runs its adds one at a time (no lanes, no threads).
                    if nr > 0 && !op.is_ordered() {
                        let clause = omp_reduction(*op, ad);
                        if split {
                            let m = if *op == ReduceOp::Max { "max" } else { "min" };
                            let _ = writeln!(
                                out,
                                "{indent}#pragma omp simd reduction({m}:{acc}) reduction(|:{nan})"
                            );
                        } else if !par_outer {
                            let _ = writeln!(
                                out,
                                "{indent}#pragma omp parallel for collapse({nr}) reduction({clause}:{acc}) if({inner_n} >= {par})"
                            );
                        } else if nr == 1 {
                            let _ =
                                writeln!(out, "{indent}#pragma omp simd reduction({clause}:{acc})");
                        }
                    }
                    loops(out, red_loops, rows, &mut indent);
                    out.push_str(&body_c);
                    let v = if wide { format!("(double){v}") } else { v };
                    if split {
                        let cmp = if *op == ReduceOp::Max { ">" } else { "<" };
                        let _ = writeln!(out, "{indent}{nan} |= ({v} != {v});");
                        let _ = writeln!(out, "{indent}{acc} = {acc} {cmp} {v} ? {acc} : {v};");
                    } else {
                        let _ = writeln!(out, "{indent}{acc} = {};", combine_c(*op, &acc, &v, ad));
                    }
                    close(out, nr, &mut indent);
                }
                if split {
                    let _ = writeln!(out, "{indent}if ({nan}) {acc} = NAN;");
                }
                let acc = if wide { format!("((float){acc})") } else { acc };
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
                    Cx::cpu(ir, sched, k),
                    stage,
                    &mut local,
                    &indent,
                    no,
                    &nest,
                    &scratch_at,
                );
            }
            _ => {
                let nr = red_loops.len();
                let body_indent = format!("{indent}{}", "  ".repeat(nr));
                let mut body_c = String::new();
                let mut pre = String::new();
                let no_stores = HashSet::new();
                let mut stage_local = local.clone();
                emit_stage_nodes_hoisted(
                    &mut body_c,
                    Cx::cpu(ir, sched, k),
                    stage,
                    &mut stage_local,
                    &body_indent,
                    no + k.inner.len(),
                    &nest,
                    &scratch_at,
                    (hoisting && nr > 0).then_some((
                        &mut pre,
                        indent.as_str(),
                        &no_stores,
                        rows as u32,
                        false,
                    )),
                );
                out.push_str(&pre);
                if !par_outer && nr > 0 {
                    let _ = writeln!(
                        out,
                        "{indent}#pragma omp parallel for collapse({nr}) if({inner_n} >= {par})"
                    );
                } else if nr == 1 {
                    let _ = writeln!(out, "{indent}#pragma omp simd");
                }
                loops(out, red_loops, rows, &mut indent);
                out.push_str(&body_c);
                close(out, nr, &mut indent);
                // Later stages read this stage's row-local results back from their arrays.
                for kn in &k.nodes {
                    if let IrNode::Pointwise { out: ob, .. } = &ir.nodes[kn.node] {
                        if kn.stage == stage {
                            if let Some(at) = scratch_at.get(ob) {
                                local.insert(*ob, at.clone());
                            }
                        }
                    }
                }
            }
        }
    }
    close(out, rows, &mut indent);
    let _ = writeln!(out, "}}\n");
    abi()
}

/// Pointwise nodes of one stage, in order; each stores if materialized and is visible to later
/// nodes of the stage through `local`. Row-level values are declared so they outlive the stage.
#[allow(clippy::too_many_arguments)]
pub(in crate::codegen) fn emit_stage_nodes(
    out: &mut String,
    cx: Cx,
    stage: usize,
    local: &mut HashMap<BufId, String>,
    indent: &str,
    nvars: usize,
    nest: &LoopNest,
    scratch: &HashMap<BufId, String>,
) {
    emit_stage_nodes_hoisted(out, cx, stage, local, indent, nvars, nest, scratch, None)
}

/// [`emit_stage_nodes`]; with `hoist` (the text before the loops, its indent, the buffers the
/// kernel stores), values the same at every point are printed there instead.
#[allow(clippy::too_many_arguments)]
fn emit_stage_nodes_hoisted(
    out: &mut String,
    Cx {
        ir,
        sched,
        k,
        dialect,
    }: Cx,
    stage: usize,
    local: &mut HashMap<BufId, String>,
    indent: &str,
    nvars: usize,
    nest: &LoopNest,
    scratch: &HashMap<BufId, String>,
    mut hoist: Option<(&mut String, &str, &HashSet<BufId>, u32, bool)>,
) {
    for kn in &k.nodes {
        if kn.stage != stage {
            continue;
        }
        let IrNode::Pointwise {
            out: ob,
            body,
            offset,
            ..
        } = &ir.nodes[kn.node]
        else {
            continue;
        };
        let prefix = format!("p{ob}");
        let h = hoist
            .as_mut()
            .map(|(pre, hi, stored, from_var, loads)| Hoist {
                pre,
                indent: hi,
                stored,
                from_var: *from_var,
                loads: *loads,
            });
        let v = emit_body_hoisted(out, body, &prefix, local, indent, nest, dialect, h);
        if let Some(at) = scratch.get(ob) {
            let d = ir.buffers[*ob].dtype;
            let _ = writeln!(out, "{indent}{at} = {};", local_value(d, &v));
        } else if sched.materialized[*ob] {
            let _ = writeln!(
                out,
                "{indent}b{ob}[{}] = {};",
                store_range_c(ir, *ob, *offset, nvars, nest),
                store_conv(ir.buffers[*ob].dtype, &v)
            );
        }
        local.insert(*ob, local_value(ir.buffers[*ob].dtype, &v));
    }
}

/// The whole translation unit: the prelude, then every kernel as `plans` planned it.
pub fn generate(
    ir: &IrGraph,
    sched: &Schedule,
    plans: &EntityVec<KernelId, KernelPlan>,
    policy: &CpuPolicy,
) -> CSource {
    let mut code = String::from(PRELUDE);
    // Only sources that use it carry the row scratch (static C stays as it was).
    let row_scratch = sched.kernels.iter_enumerated().any(|(id, k)| {
        matches!(&plans[id].shape, KernelShape::Staged { scratch } if !scratch.is_empty())
            && k.inner.iter().product::<Size>().as_const().is_none()
    });
    if row_scratch {
        let slots = super::plan::ROW_SCRATCH_SLOTS;
        let _ = write!(code, "\n#define TF_ROW_SCRATCH_SLOTS {slots}{ROW_SCRATCH}");
    }
    let kernels = sched
        .kernels
        .iter_enumerated()
        .map(|(id, k)| emit_kernel(&mut code, ir, sched, k, &plans[id], policy))
        .collect();
    CSource { code, kernels }
}
