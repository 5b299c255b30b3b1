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
use crate::ir::{
    BinOp, Body, BodyOps, BufId, Gather, IrGraph, IrNode, ReduceOp, Scalar, UnOp, ValId,
};
use crate::schedule::{Kernel, Level, Schedule};

/// The exported symbol every generated library defines; the loader checks it (a truncated or
/// foreign file fails the check), and its value names the source hash.
pub const VALIDATION_SYMBOL: &str = "torchferro_kernels_abi";

/// Buffers at least this large that a kernel writes get a transparent-huge-page hint (see
/// [`crate::hugepage`]).
const HUGEPAGE_MIN_BYTES: i64 = crate::hugepage::MIN_BYTES;

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

mod arg_reduction;
mod blocked;
mod c;

use arg_reduction::*;
use blocked::*;
use c::*;
pub use c::{c_type, storage_type};

fn var(k: u32) -> String {
    format!("x{k}")
}

/// A value of a body printed as C: the variable holding it and its dtype.
#[derive(Clone, Debug)]
struct CVar {
    name: String,
    dtype: DType,
}

/// The C printer as a [`BodyOps`] handler: each value becomes a `const T name = expr;` line
/// (names `{prefix}_{k}` for value k), inside the loops the caller opened.
struct CPrinter<'a> {
    out: &'a mut String,
    prefix: &'a str,
    /// Replaces loads of a buffer by a C variable (a value this kernel already has).
    local: &'a HashMap<BufId, String>,
    indent: &'a str,
    nest: &'a LoopNest,
    /// The id of the value being printed (handlers are called once per value, in order).
    next: ValId,
}

impl CPrinter<'_> {
    fn name(&self, k: ValId) -> String {
        format!("{}_{k}", self.prefix)
    }

    /// An index at the loop nest's variables, in C.
    fn at(&self, e: &Idx) -> String {
        idx_c(&self.nest.apply(e), &var)
    }

    /// Declares the current value as `expr`.
    fn def(&mut self, expr: String, dtype: DType) -> CVar {
        let name = self.name(self.next);
        self.next += 1;
        let _ = writeln!(
            self.out,
            "{}const {} {name} = {expr};",
            self.indent,
            c_type(dtype)
        );
        CVar { name, dtype }
    }
}

impl<'b> BodyOps<'b> for CPrinter<'_> {
    type V = CVar;

    fn load(&mut self, buf: BufId, index: &'b Idx, dtype: DType) -> CVar {
        let expr = match self.local.get(&buf) {
            Some(n) => n.clone(),
            None => load_conv(dtype, format!("b{buf}[{}]", self.at(index))),
        };
        self.def(expr, dtype)
    }

    fn constant(&mut self, value: Scalar, dtype: DType) -> CVar {
        self.def(literal(value, dtype), dtype)
    }

    fn index(&mut self, index: &'b Idx) -> CVar {
        let expr = format!("((int64_t)({}))", self.at(index));
        self.def(expr, DType::Int64)
    }

    fn unary(&mut self, op: UnOp, a: &CVar, dtype: DType) -> CVar {
        self.def(unary_c(op, &a.name, a.dtype), dtype)
    }

    fn binary(&mut self, op: BinOp, a: &CVar, b: &CVar, dtype: DType) -> CVar {
        self.def(binary_c(op, &a.name, &b.name, a.dtype), dtype)
    }

    fn select(&mut self, cond: &CVar, a: &CVar, b: &CVar, dtype: DType) -> CVar {
        self.def(select_c(&cond.name, &a.name, &b.name, dtype), dtype)
    }

    fn cast(&mut self, a: &CVar, dtype: DType) -> CVar {
        let expr = match dtype {
            DType::Float16 => format!("tf_rh((float){})", a.name),
            DType::BFloat16 => format!("tf_rbf((float){})", a.name),
            _ => format!("(({}){})", c_type(dtype), a.name),
        };
        self.def(expr, dtype)
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
            "{indent}if ({c} != {p}) __atomic_store_n(&tf_index_error, 1, __ATOMIC_RELAXED);"
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
    let mut printer = CPrinter {
        out,
        prefix,
        local,
        indent,
        nest,
        next: 0,
    };
    body.visit(&mut printer).name
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
    idx_c(&nest.apply(&store_idx(ir, buf, nvars)), &var)
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
        exprs.extend(body.deps().indices.into_iter().cloned());
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
    // A buffer written over its donor is addressed through the donor's pointer, so that every
    // access stays based on one `restrict` pointer (reads precede writes element by element).
    let alias_of = |b: BufId| sched.in_place[b].filter(|x| bufs.contains(x));
    for (i, b) in bufs.iter().enumerate() {
        let t = storage_type(ir.buffers[*b].dtype);
        match alias_of(*b) {
            Some(x) => {
                let _ = writeln!(out, "  {t} *const b{b} = b{x}; (void)args[{i}];");
            }
            None => {
                let _ = writeln!(out, "  {t} *restrict b{b} = ({t} *)args[{i}];");
            }
        }
    }
    for (n, _, _) in &k.nodes {
        for b in ir.nodes[*n].outputs() {
            let decl = &ir.buffers[b];
            let bytes = decl.storage_numel() * decl.dtype.itemsize() as i64;
            if bufs.contains(&b) && alias_of(b).is_none() && bytes >= HUGEPAGE_MIN_BYTES {
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
