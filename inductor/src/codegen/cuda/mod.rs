//! The CUDA C printer: one source per graph, one `__global__` function per scheduled kernel,
//! compiled by NVRTC (see [`crate::cuda`]).
//!
//! It reads the same [`KernelPlan`]s as the C printer and prints bodies with the C printer's
//! [`BodyOps`](crate::ir::BodyOps) handler, so lowering, the loop IR, the scheduler and the
//! expression text are shared; only the loop structure is the GPU's:
//! - a pure pointwise kernel ([`KernelShape::Pointwise`]) is one thread per chunk of
//!   [`CudaPolicy::vector`] consecutive elements of its (planned, merged) loop nest, flattened,
//!   in a grid-stride loop; a chunk's loads, arithmetic and stores are three lane loops;
//! - a reduction over leading dims ([`KernelShape::Blocked`]: memory is contiguous along the
//!   rows, not along the reduced dims) runs on tiles of 32 rows with several threads per row
//!   ([`columns`]: a warp reads 32 neighbouring elements at each step, coalesced), split over
//!   blocks along the reduced space when the tiles are few; a short reduced space keeps one
//!   thread per row, walking it in order;
//! - any other kernel with reductions ([`KernelShape::Staged`]) is one block per row
//!   (grid-stride over rows); each stage walks the row's inner space with
//!   the block's threads, a reduction combines its threads' partial results with a butterfly of
//!   warp shuffles and then, in warp order, the warps' results from shared memory, so every
//!   thread holds the row's value and the order is fixed (deterministic, no atomics). Row-local
//!   intermediates (the plan's scratch: softmax's `exp(x - max)`) stay in per-thread registers,
//!   since every stage visits the same positions from the same thread (chunks of consecutive
//!   positions, as in pointwise kernels), and so do row elements several stages read.
//!
//! A kernel with chunks is a template body with an instance that assumes 16-byte-aligned
//! pointers (NVVM then merges a chunk's accesses into 128-bit ones) and a plain one. A graph's
//! main source holds the aligned instances only ([`Instances::Aligned`]); the launcher checks
//! the pointers and runs a second source's plain instance, compiled when first needed, for a
//! misaligned view.
//!
//! Index arithmetic is 32-bit where every buffer the kernel touches and its iteration space fit
//! (`ti` is then `int`). Values are computed as the C printer computes them (float16/bfloat16 in
//! float, rounded on store and cast); `--fmad=false` keeps `a * b + c` two roundings.

use std::collections::HashMap;
use std::fmt::Write;

use super::c::syntax::storage_type;
use super::c::Dialect;
use super::plan::{KernelPlan, KernelShape, LoopNest};
use crate::entity::EntityVec;
use crate::ir::{BufId, IrGraph};
use crate::schedule::{Kernel, KernelId, Schedule};
use crate::size::{as_consts, Size};
use crate::target::CudaPolicy;

/// Constant sizes, on the paths that only a static kernel (or a kernel whose sizes there are
/// constant) takes: every caller asks [`const_n`] or [`as_consts`] first.
#[track_caller]
pub(super) fn cn(xs: &[Size]) -> Vec<i64> {
    crate::size::expect_consts(xs, "the CUDA printer")
}

/// The product of `xs` when every one is a constant (`None`: a symbolic extent, whose kernel
/// takes the size-independent shape; see the module doc).
pub(super) fn const_n(xs: &[Size]) -> Option<i64> {
    as_consts(xs).map(|v| v.iter().product())
}

mod columns;
mod passes;
mod pointwise;
mod prelude;
mod rows;
use prelude::PRELUDE;
mod reduce;
mod share;
mod split;
#[cfg(test)]
mod tests;

use passes::merge_sincos;
use pointwise::emit_pointwise;
use rows::{emit_rows, emit_thread_rows, RowShape};

/// The CUDA C of the body printer: an out-of-range gather sets a module global flag, and
/// `rsqrt` is CUDA's own (eager's CUDA kernels call it).
const CUDA: Dialect = Dialect {
    index_error: "tf_index_error = 1;",
    rsqrt: true,
};

/// The module global an out-of-range gather sets.
pub const INDEX_ERROR_SYMBOL: &str = "tf_index_error";

/// How one kernel is launched.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CudaKernelAbi {
    /// The `extern "C"` symbol.
    pub name: String,
    /// The buffers its pointer parameters address, in order.
    pub bufs: Vec<BufId>,
    /// Blocks (1-d) and threads per block. A kernel over symbolic sizes launches the blocks
    /// its [`CudaKernelAbi::grid_rule`] gives for the call's sizes instead of `grid` (the
    /// count at a constant stand-in, not used).
    pub grid: u32,
    pub block: u32,
    /// How a kernel over symbolic sizes computes its blocks from the symbols' values, on the
    /// host, once per assignment (`None`: `grid` holds at every call).
    pub grid_rule: Option<GridRule>,
    /// Whether the kernel assumes every pointer 16-byte aligned (an [`Instances::Aligned`]
    /// source's chunked kernel): the launcher runs the plain source's kernel otherwise.
    pub aligned: bool,
}

/// The blocks of a kernel whose work is symbolic: `ceil(work / per_block) * parts`, at most
/// `max_blocks` (its loops are grid-stride: any count covers the work, this one spreads it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GridRule {
    /// Rows (row kernels) or elements (pointwise kernels) to cover.
    pub work: Size,
    /// Of `work` per block.
    pub per_block: i64,
    /// Blocks per unit of `per_block` work (a split row's parts; 1 otherwise).
    pub parts: i64,
    pub max_blocks: u32,
}

impl GridRule {
    /// The blocks at one assignment of the symbols (`None`: the work overflows `i64` there).
    pub fn blocks(&self, value: &dyn Fn(u32) -> i64) -> Option<u32> {
        let n = self.work.eval(value)?;
        let g = ceil_div(n, self.per_block).checked_mul(self.parts)?;
        Some(g.clamp(0, self.max_blocks as i64) as u32)
    }
}

/// Which instances of a chunked kernel's body a source holds. NVRTC's time grows with the
/// code, so a graph is compiled with the aligned instances only, and the plain source is
/// compiled the first time a launch sees a pointer that is not 16-byte aligned (a view at an
/// odd offset: rare).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Instances {
    /// Both, the wrapper choosing from the pointers (one source for every layout).
    Both,
    /// Only the instance that assumes 16-byte-aligned pointers.
    Aligned,
    /// Only the instance for any pointers.
    Plain,
}

/// A generated CUDA source and its kernels, in schedule order.
pub struct CudaSource {
    pub code: String,
    pub kernels: EntityVec<KernelId, CudaKernelAbi>,
    /// Each printed kernel's own text by symbol (the source is [`PRELUDE`] then these, in
    /// order): [`kernel_source`] makes a source of one of them.
    pub parts: HashMap<String, String>,
}

/// The source of the one kernel `part` (a [`CudaSource::parts`] text): the prelude and it.
/// A plain instance the launcher needs for a misaligned pointer compiles alone, not with
/// every other kernel of its graph (GPT-2's training backward: 2.2 s of NVRTC on its first
/// step for one misaligned input).
pub fn kernel_source(part: &str) -> String {
    format!("{PRELUDE}{part}")
}

/// The whole source: the prelude, then every kernel as `plans` planned it.
pub fn generate(
    ir: &IrGraph,
    sched: &Schedule,
    plans: &EntityVec<KernelId, KernelPlan>,
    policy: &CudaPolicy,
    instances: Instances,
) -> CudaSource {
    let mut code = String::from(prelude::PRELUDE);
    // A graph with symbolic sizes: every kernel takes every symbol's value as a by-value
    // `int64_t` parameter after its buffers (`IrGraph::symbols` order). By value, because the
    // launch copies parameters into the kernel's constant bank anyway: no device array to
    // allocate, fill and order against the stream per call, and each symbol is one
    // constant-bank read in the kernel.
    let syms = ir.symbols();
    let mut shared = share::Shared::default();
    let mut parts = HashMap::new();
    let kernels = sched
        .kernels
        .iter_enumerated()
        .map(|(id, k)| {
            let mut text = String::new();
            let mut abi = emit_kernel(
                &mut text, ir, sched, k, &plans[id], policy, instances, &syms,
            );
            let text = merge_sincos(&text);
            match policy
                .share_kernels
                .then(|| shared.earlier(&text, &abi.name))
                .flatten()
            {
                Some(earlier) => abi.name = earlier,
                None => {
                    code.push_str(&text);
                    parts.insert(abi.name.clone(), text);
                }
            }
            abi
        })
        .collect();
    CudaSource {
        code,
        kernels,
        parts,
    }
}

/// Whether every index of kernel `k` fits 32-bit arithmetic: the buffers it touches and its
/// iteration space, with room for one grid-stride step past the end.
fn fits_i32(ir: &IrGraph, k: &Kernel, plan: &KernelPlan, policy: &CudaPolicy) -> bool {
    let room = (policy.max_blocks as i64)
        * (policy.row_block.max(policy.pointwise_block) as i64)
        * (policy.pointwise_unroll.max(policy.scalar_unroll).max(1) as i64)
        * (policy.vector.max(8) as i64);
    let limit = i32::MAX as i64 - room;
    // A symbolic space indexes with 64 bits: no upper bound on a symbol is known here.
    let Some(space) = as_consts(&k.outer).zip(as_consts(&k.inner)) else {
        return false;
    };
    let space = space
        .0
        .iter()
        .chain(&space.1)
        .try_fold(1i64, |a, &s| a.checked_mul(s));
    space.is_some_and(|n| n <= limit)
        && plan.bufs.iter().all(|&b| {
            ir.buffers[b]
                .storage_numel()
                .as_const()
                .is_some_and(|n| n <= limit)
        })
}

/// Splits the flat position `flat` (a `ti`) into loop variables `x{first}..` over `sizes`,
/// row-major.
fn unflatten(out: &mut String, indent: &str, flat: &str, sizes: &[Size], first: usize) {
    let n = sizes.len();
    if n == 0 {
        return;
    }
    if n == 1 {
        let _ = writeln!(out, "{indent}const ti x{first} = {flat};");
        return;
    }
    let _ = writeln!(out, "{indent}ti rem{first} = {flat};");
    for i in (1..n).rev() {
        let (k, s) = (first + i, sizes[i]);
        let _ = writeln!(
            out,
            "{indent}const ti x{k} = rem{first} % {s}; rem{first} /= {s};"
        );
    }
    let _ = writeln!(out, "{indent}const ti x{first} = rem{first};");
}

fn ceil_div(a: i64, b: i64) -> i64 {
    (a + b - 1) / b
}

/// Threads of a row kernel whose rows have `inner_n` elements: a power of two, at least a warp.
fn row_threads(inner_n: i64, policy: &CudaPolicy) -> u32 {
    let want = inner_n.clamp(32, policy.row_block as i64) as u64;
    (want.next_power_of_two() as u32).min(policy.row_block)
}

/// Elements per chunk of a pointwise kernel over `nest`: the policy's vector width when the
/// innermost loop is a multiple of it (a chunk then never crosses a row of the nest, so its
/// positions are consecutive in every buffer that is contiguous there), else 1. A symbolic
/// innermost extent is a multiple only when it is one as a polynomial (`4*s0`): the decision
/// holds at every size. Where the narrowest buffer the kernel touches (`narrowest` bytes an
/// element) would move fewer than 16 bytes a chunk, the chunk widens up to 8 elements when the
/// loop allows: a bf16 kernel then moves 16 bytes per access, as a float32 one does.
fn pointwise_vector(nest: &LoopNest, narrowest: usize, policy: &CudaPolicy) -> u32 {
    let v = policy.vector.max(1);
    let Some(&l) = nest.sizes.last() else {
        return 1;
    };
    if v == 1 || !divisible(l, v) {
        return 1;
    }
    let mut w = v;
    while w < 8 && (w as usize) * narrowest < 16 && divisible(l, w * 2) {
        w *= 2;
    }
    w
}

/// Chunks per thread and grid-stride step of a pointwise kernel with chunks of `vector`.
fn pointwise_unroll(vector: u32, policy: &CudaPolicy) -> u32 {
    match vector {
        1 => policy.scalar_unroll.max(1),
        _ => policy.pointwise_unroll.max(1),
    }
}

/// Whether `l` is a multiple of `v` at every assignment.
fn divisible(l: Size, v: u32) -> bool {
    match l.as_const() {
        Some(c) => c % v as i64 == 0,
        None => l.exact_div(Size::Const(v as i64)).is_some(),
    }
}

/// Elements per chunk of a row kernel: the vector width when the innermost reduced dim is a
/// multiple of it and the register-held row (`scratch`) still fits the policy's registers.
fn row_vector(k: &Kernel, has_scratch: bool, policy: &CudaPolicy) -> u32 {
    let v = policy.vector.max(1);
    // A symbolic row has no scratch (the plan stages it through memory).
    let slots_fit = || match const_n(&k.inner) {
        Some(inner_n) => row_slots(inner_n, v, policy) <= policy.regs_per_thread as i64,
        None => false,
    };
    let ok =
        v > 1 && k.inner.last().is_some_and(|&l| divisible(l, v)) && (!has_scratch || slots_fit());
    if ok {
        v
    } else {
        1
    }
}

/// Threads of a row kernel with chunks of `v` elements; a row of symbolic length takes the
/// policy's row block whatever its length (a looped block reduction, valid for any length).
fn row_block_for(inner_n: Option<i64>, v: u32, policy: &CudaPolicy) -> u32 {
    match inner_n {
        Some(n) => row_threads(ceil_div(n, v as i64), policy),
        None => policy.row_block,
    }
}

/// Rows each block of a row kernel runs, one warp each (see [`CudaPolicy::warp_rows`]): more
/// than one when a row needs only a warp and there are rows enough to fill several blocks. A
/// symbolic row count (at least 2) takes them as if there were enough: the rows' loop is
/// grid-stride, correct for any count.
fn warp_rows(inner_n: Option<i64>, outer_n: Option<i64>, v: u32, policy: &CudaPolicy) -> u32 {
    let r = policy.warp_rows;
    let enough = outer_n.is_none_or(|n| n >= 2 * r as i64);
    if r > 1 && row_block_for(inner_n, v, policy) == 32 && enough {
        r
    } else {
        1
    }
}

/// Row positions each thread of a row kernel visits (its register slots).
fn row_slots(inner_n: i64, v: u32, policy: &CudaPolicy) -> i64 {
    let block = row_block_for(Some(inner_n), v, policy) as i64;
    ceil_div(inner_n, block * v as i64).max(1) * v as i64
}

#[allow(clippy::too_many_arguments)]
fn emit_kernel(
    out: &mut String,
    ir: &IrGraph,
    sched: &Schedule,
    k: &Kernel,
    plan: &KernelPlan,
    policy: &CudaPolicy,
    instances: Instances,
    syms: &[u32],
) -> CudaKernelAbi {
    // `None`: a symbolic extent. Every decision below is then made from what holds at every
    // size (see the module doc), and the grid is a rule over the symbols.
    let outer_c = const_n(&k.outer);
    let inner_c = const_n(&k.inner);
    let outer_s: Size = k.outer.iter().product();
    let vector = match &plan.shape {
        KernelShape::Pointwise(nest) => {
            let narrowest = plan
                .bufs
                .iter()
                .map(|&b| ir.buffers[b].dtype.itemsize())
                .min();
            let narrowest = if policy.vector_access {
                narrowest.unwrap_or(4)
            } else {
                16
            };
            pointwise_vector(nest, narrowest, policy)
        }
        KernelShape::Staged { scratch } => row_vector(k, !scratch.is_empty(), policy),
        KernelShape::Blocked => 1,
    };
    // Column tiles and split rows size their module globals by the row count: constant
    // extents only (a symbolic blocked kernel keeps one thread per row, any length).
    let columns = match (&plan.shape, outer_c.is_some() && inner_c.is_some()) {
        (KernelShape::Blocked, true) => columns::fits(ir, k, plan, policy),
        _ => None,
    };
    // Threads per block and the work each block covers (the grid is `ceil(work / per)`).
    let (block, per) = match &plan.shape {
        KernelShape::Pointwise(_) => {
            let b = policy.pointwise_block;
            (
                b,
                b as i64 * pointwise_unroll(vector, policy) as i64 * vector as i64,
            )
        }
        KernelShape::Staged { .. } => {
            let rows = warp_rows(inner_c, outer_c, vector, policy);
            (row_block_for(inner_c, vector, policy) * rows, rows as i64)
        }
        KernelShape::Blocked => (policy.pointwise_block, policy.pointwise_block as i64),
    };
    let parts = match (&plan.shape, inner_c, outer_c) {
        (KernelShape::Staged { scratch }, Some(inner_n), Some(_)) => {
            let threads = row_block_for(inner_c, vector, policy) as i64;
            let chunks = ceil_div(inner_n, threads * vector as i64).max(1);
            split::split_parts(ir, k, !scratch.is_empty(), chunks, policy)
        }
        // A symbolic row (or row count) is one block per row: the looped block reduction.
        _ => 1,
    };
    let rule = GridRule {
        work: outer_s,
        per_block: per,
        parts: parts as i64,
        max_blocks: policy.max_blocks,
    };
    let (block, grid, grid_rule) = match (columns, outer_c) {
        (Some(c), _) => (c.block(), c.grid.min(policy.max_blocks), None),
        (None, Some(_)) => (block, rule.blocks(&|_| 0).unwrap_or(0), None),
        (None, None) => (block, 0, Some(rule)),
    };
    if parts > 1 {
        split::emit_globals(out, ir, k, parts);
    }
    let bounds = match (&plan.shape, policy.pointwise_min_blocks) {
        (KernelShape::Pointwise(_), n) if n > 0 => format!("{block}, {n}"),
        _ => block.to_string(),
    };
    if let Some(c) = columns {
        columns::emit_globals(out, ir, k, c);
    }
    let params: Vec<String> = plan
        .bufs
        .iter()
        .zip(&plan.aliases)
        .map(|(b, alias)| {
            let t = storage_type(ir.buffers[*b].dtype);
            match alias {
                // Written through its donor's pointer (see `KernelPlan::aliases`).
                Some(_) => format!("{t} *a{b}"),
                None => format!("{t} *__restrict__ b{b}"),
            }
        })
        .chain(syms.iter().map(|k| format!("const int64_t s{k}")))
        .collect();
    let own: Vec<BufId> = plan
        .bufs
        .iter()
        .zip(&plan.aliases)
        .filter(|(_, a)| a.is_none())
        .map(|(b, _)| *b)
        .collect();
    if vector > 1 {
        // The body twice, as a template: with `TF_A` every pointer is known 16-byte aligned, so
        // NVVM merges a chunk's accesses into 128-bit loads and stores; the kernel picks the
        // instance from its pointers (one uniform branch), so an unaligned view still runs.
        let _ = writeln!(
            out,
            "template <bool TF_A> __device__ __forceinline__ void {}_body({}) {{",
            k.name,
            params.join(", ")
        );
        let _ = writeln!(out, "  if (TF_A) {{");
        for b in &own {
            let t = storage_type(ir.buffers[*b].dtype);
            let _ = writeln!(out, "    b{b} = ({t} *)__builtin_assume_aligned(b{b}, 16);");
        }
        let _ = writeln!(out, "  }}");
    } else {
        let _ = writeln!(
            out,
            "extern \"C\" __global__ void __launch_bounds__({bounds}) {}({}) {{",
            k.name,
            params.join(", ")
        );
    }
    for (b, alias) in plan.bufs.iter().zip(&plan.aliases) {
        if let Some(x) = alias {
            let t = storage_type(ir.buffers[*b].dtype);
            let _ = writeln!(out, "  {t} *const b{b} = b{x}; (void)a{b};");
        }
    }
    let ti = if fits_i32(ir, k, plan, policy) {
        "int"
    } else {
        "int64_t"
    };
    let _ = writeln!(out, "  typedef {ti} ti;");
    match &plan.shape {
        KernelShape::Pointwise(nest) => emit_pointwise(
            out,
            ir,
            sched,
            k,
            nest,
            pointwise::Chunks {
                unroll: pointwise_unroll(vector, policy),
                vector,
                regs: policy.chunk_regs,
                vector_access: policy.vector_access,
            },
        ),
        KernelShape::Staged { scratch } => {
            // Cached row loads live in register arrays of a constant length.
            let cache =
                policy.row_cache && plan.aliases.iter().all(|a| a.is_none()) && inner_c.is_some();
            let shape = RowShape {
                block: row_block_for(inner_c, vector, policy),
                vector,
                cache,
                parts,
                rows: warp_rows(inner_c, outer_c, vector, policy),
            };
            emit_rows(out, ir, sched, k, scratch, shape);
        }
        KernelShape::Blocked => match columns {
            Some(c) => columns::emit(out, ir, sched, k, c),
            None => emit_thread_rows(out, ir, sched, k),
        },
    }
    let _ = writeln!(out, "}}\n");
    if vector > 1 {
        let args: Vec<String> = plan
            .bufs
            .iter()
            .zip(&plan.aliases)
            .map(|(b, a)| match a {
                Some(_) => format!("a{b}"),
                None => format!("b{b}"),
            })
            .chain(syms.iter().map(|k| format!("s{k}")))
            .collect();
        let addr: Vec<String> = own
            .iter()
            .map(|b| format!("(unsigned long long)b{b}"))
            .collect();
        let addr = if addr.is_empty() {
            "0ull".to_string()
        } else {
            addr.join(" | ")
        };
        let _ = writeln!(
            out,
            "extern \"C\" __global__ void __launch_bounds__({bounds}) {}({}) {{",
            k.name,
            params.join(", ")
        );
        let (name, args) = (&k.name, args.join(", "));
        match instances {
            Instances::Both => {
                let _ = writeln!(out, "  if ((({addr}) & 15ull) == 0ull) {{");
                let _ = writeln!(out, "    {name}_body<true>({args});");
                let _ = writeln!(out, "  }} else {{");
                let _ = writeln!(out, "    {name}_body<false>({args});");
                let _ = writeln!(out, "  }}");
            }
            Instances::Aligned => {
                let _ = writeln!(out, "  {name}_body<true>({args});");
            }
            Instances::Plain => {
                let _ = writeln!(out, "  {name}_body<false>({args});");
            }
        }
        let _ = writeln!(out, "}}\n");
    }
    CudaKernelAbi {
        name: k.name.clone(),
        bufs: plan.bufs.clone(),
        grid,
        block,
        grid_rule,
        aligned: vector > 1 && instances == Instances::Aligned,
    }
}
