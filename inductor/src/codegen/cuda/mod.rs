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

use fx::DType;

use super::c::syntax::{c_type, combine_c, init_c, is_f32_like, storage_type, store_conv};
use super::c::{emit_body_with, emit_stage_nodes, local_value, store_c, Cx};
use super::plan::{KernelPlan, KernelShape, LoopNest};
use crate::entity::EntityVec;
use crate::ir::{BufId, IrGraph, IrNode, ReduceOp};
use crate::schedule::{Kernel, KernelId, KernelNode, Level, Schedule};
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
mod prelude;
use prelude::PRELUDE;
mod reduce;
mod share;
mod split;
#[cfg(test)]
mod tests;

use passes::{
    cache_row_loads, chunk_stores, merge_sincos, replace_load, CHUNK_REGS, ROW_CACHE_REGS,
};
use reduce::{arg_takes, block_reduce};

/// What an out-of-range gather does in a kernel (the flag is a module global).
const INDEX_ERROR: &str = "tf_index_error = 1;";

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
        * (policy.vector.max(1) as i64);
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
/// holds at every size.
fn pointwise_vector(nest: &LoopNest, policy: &CudaPolicy) -> u32 {
    let v = policy.vector.max(1);
    match nest.sizes.last() {
        Some(&l) if v > 1 && divisible(l, v) => v,
        _ => 1,
    }
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
        KernelShape::Pointwise(nest) => pointwise_vector(nest, policy),
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
            "extern \"C\" __global__ void __launch_bounds__({block}) {}({}) {{",
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
            pointwise_unroll(vector, policy),
            vector,
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
            "extern \"C\" __global__ void __launch_bounds__({block}) {}({}) {{",
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

/// Splits the flat chunk start `flat` over `sizes` like [`unflatten`], the innermost variable
/// then advanced by the chunk's lane `j` (`sizes.last()` is a multiple of the chunk).
fn unflatten_chunk(out: &mut String, indent: &str, flat: &str, sizes: &[Size], first: usize) {
    let n = sizes.len();
    let last = first + n - 1;
    let mut rest = String::new();
    unflatten(&mut rest, indent, flat, sizes, first);
    // Rename the innermost variable's definition to its chunk base.
    let from = format!("const ti x{last} = ");
    let to = format!("const ti xc{last} = ");
    out.push_str(&rest.replacen(&from, &to, 1));
}

/// `unroll` chunks per thread and grid-stride step, `blockDim.x` chunks apart, each of `vector`
/// consecutive elements: a warp's accesses stay coalesced and, aligned, are 128 bits wide.
fn emit_pointwise(
    out: &mut String,
    ir: &IrGraph,
    sched: &Schedule,
    k: &Kernel,
    nest: &LoopNest,
    unroll: u32,
    vector: u32,
) {
    let n: Size = nest.sizes.iter().product();
    let v = vector;
    let _ = writeln!(
        out,
        "  for (ti i0 = ((ti)blockIdx.x * (ti)blockDim.x * {unroll} + (ti)threadIdx.x) * {v}; i0 < {n}; i0 += (ti)gridDim.x * (ti)blockDim.x * {unroll} * {v}) {{"
    );
    let _ = writeln!(out, "  #pragma unroll");
    let _ = writeln!(out, "  for (int u = 0; u < {unroll}; u++) {{");
    let _ = writeln!(out, "    const ti ic = i0 + (ti)u * (ti)blockDim.x * {v};");
    let _ = writeln!(out, "    if (ic >= {n}) break;");
    let indent = "    ";
    let cx = Cx {
        ir,
        sched,
        k,
        index_error: INDEX_ERROR,
    };
    let mut local = HashMap::new();
    let no = k.outer.len();
    if v > 1 {
        let last = nest.sizes.len() - 1;
        unflatten_chunk(out, indent, "ic", &nest.sizes, 0);
        let mut body = String::new();
        emit_stage_nodes(
            &mut body,
            cx,
            0,
            &mut local,
            indent,
            no,
            nest,
            &HashMap::new(),
        );
        // Loads first, then the arithmetic, then the stores, each over the chunk's lanes: a
        // math call's slow path (`sincosf`'s wide argument reduction) splits the body into
        // several blocks, and NVVM merges accesses only within one.
        let vars: Vec<String> = (0..nest.sizes.len()).map(|i| format!("x{i}")).collect();
        let dtype = |b: BufId| (b.index() < ir.buffers.len()).then(|| ir.buffers[b].dtype);
        let loads = cache_row_loads(&body, &vars, 1, (CHUNK_REGS / v) as usize, dtype);
        let stores = chunk_stores(&body, &vars);
        let lanes = |out: &mut String| {
            let _ = writeln!(out, "    #pragma unroll");
            let _ = writeln!(out, "    for (int j = 0; j < {v}; j++) {{");
            let _ = writeln!(out, "    const ti x{last} = xc{last} + (ti)j;");
        };
        if let Some(stores) = stores.filter(|s| {
            s.iter().all(|(b, _, _)| loads.iter().all(|(l, _)| l != b)) && !s.is_empty()
        }) {
            for (i, (b, _)) in loads.iter().enumerate() {
                let t = storage_type(ir.buffers[*b].dtype);
                let _ = writeln!(out, "    {t} cr{i}[{v}];");
            }
            for (i, (b, _, _)) in stores.iter().enumerate() {
                let t = storage_type(ir.buffers[*b].dtype);
                let _ = writeln!(out, "    {t} cs{i}[{v}];");
            }
            lanes(out);
            for (i, (b, e)) in loads.iter().enumerate() {
                let _ = writeln!(out, "    cr{i}[j] = b{b}[{e}];");
            }
            let _ = writeln!(out, "    }}");
            for (i, (b, e)) in loads.iter().enumerate() {
                body = replace_load(&body, *b, e, &format!("cr{i}[j]"));
            }
            let mut staged = String::with_capacity(body.len());
            for l in body.lines() {
                let t = l.trim_start();
                match stores.iter().position(|(_, _, s)| s == t) {
                    Some(i) => {
                        let value = t.split_once(" = ").map(|x| x.1).unwrap_or_default();
                        let pad = &l[..l.len() - t.len()];
                        let _ = writeln!(staged, "{pad}cs{i}[j] = {value}");
                    }
                    None => {
                        staged.push_str(l);
                        staged.push('\n');
                    }
                }
            }
            body = staged;
            lanes(out);
            out.push_str(&body);
            let _ = writeln!(out, "    }}");
            lanes(out);
            for (i, (b, e, _)) in stores.iter().enumerate() {
                let _ = writeln!(out, "    b{b}[{e}] = cs{i}[j];");
            }
            let _ = writeln!(out, "    }}");
        } else {
            lanes(out);
            out.push_str(&body);
            let _ = writeln!(out, "    }}");
        }
    } else {
        let _ = writeln!(out, "    const ti i = ic;");
        unflatten(out, indent, "i", &nest.sizes, 0);
        emit_stage_nodes(out, cx, 0, &mut local, indent, no, nest, &HashMap::new());
    }
    let _ = writeln!(out, "  }}");
    let _ = writeln!(out, "  }}");
}

/// How a row kernel's blocks cover its rows.
#[derive(Clone, Copy)]
struct RowShape {
    /// Threads per row.
    block: u32,
    /// Consecutive elements per chunk.
    vector: u32,
    /// Whether row elements read in several stages are loaded once.
    cache: bool,
    /// Blocks per row (a split reduction, see [`split`]); 1: one block per row.
    parts: u32,
    /// Rows per block, a warp each (`block` is then 32); 1: one row per block.
    rows: u32,
}

/// One block per row (or `parts` per row, see [`split`]); stages over the row's inner space,
/// reductions combined across the block.
/// Each thread visits the same chunks of `vector` consecutive positions in every stage, so
/// row-local values stay in its registers; with `cache`, row elements read in several stages
/// are loaded once, at the row's start (see [`cache_row_loads`]).
fn emit_rows(
    out: &mut String,
    ir: &IrGraph,
    sched: &Schedule,
    k: &Kernel,
    scratch: &[BufId],
    shape: RowShape,
) {
    let RowShape {
        block,
        vector,
        cache,
        parts,
        rows,
    } = shape;
    let (no, nr) = (k.outer.len(), k.inner.len());
    let outer_n: Size = k.outer.iter().product();
    let inner_s: Size = k.inner.iter().product();
    let cx = Cx {
        ir,
        sched,
        k,
        index_error: INDEX_ERROR,
    };
    let nest = LoopNest::identity(&[]);
    let v = vector as i64;
    // A symbolic row's chunk count is computed by the kernel; such a row has no scratch and no
    // cached loads (register arrays need a constant length), so `slots` is not used for it.
    let (chunks, chunks_c) = match inner_s.as_const() {
        Some(inner_n) => {
            let c = ceil_div(inner_n, block as i64 * v).max(1);
            (c.to_string(), c)
        }
        None => {
            let per = block as i64 * v;
            (format!("(({inner_s} + {}) / {per})", per - 1), i64::MAX)
        }
    };
    let slots = chunks_c.saturating_mul(v);
    let inner_n = inner_s;
    if rows > 1 {
        // Warp `w` of the block runs rows `blockIdx.x * rows + w`, then a grid's worth on.
        let _ = writeln!(out, "  const int tid = threadIdx.x & 31;");
        let _ = writeln!(
            out,
            "  for (ti row = (ti)blockIdx.x * {rows} + (ti)(threadIdx.x >> 5); row < {outer_n}; row += (ti)gridDim.x * {rows}) {{"
        );
    } else if parts > 1 {
        let _ = writeln!(out, "  const int tid = threadIdx.x;");
        // The grid is exactly `outer_n * parts` blocks: one pass of the loop.
        let _ = writeln!(out, "  const int part = blockIdx.x % {parts};");
        let _ = writeln!(
            out,
            "  for (ti row = blockIdx.x / {parts}; row < {outer_n}; row += gridDim.x / {parts}) {{"
        );
    } else {
        let _ = writeln!(out, "  const int tid = threadIdx.x;");
        let _ = writeln!(
            out,
            "  for (ti row = blockIdx.x; row < {outer_n}; row += gridDim.x) {{"
        );
    }
    let mut indent = String::from("    ");
    unflatten(out, &indent, "row", &k.outer, 0);
    for &b in scratch {
        let _ = writeln!(
            out,
            "{indent}{} sb{b}[{slots}];",
            c_type(ir.buffers[b].dtype)
        );
    }
    let scratch_at: HashMap<BufId, String> =
        scratch.iter().map(|&b| (b, format!("sb{b}[it]"))).collect();
    // Every thread visits chunks `tid + c * block` of the row (positions `v` times that, plus
    // the lane `j`), the same in every stage: slot `it` is chunk `c`, lane `j`.
    // Register arrays (scratch, cached loads) need every slot index constant: the chunk loop
    // unrolls fully when they can exist; a long row's loop (a whole-tensor sum's millions of
    // chunks) unrolls a few chunks deep instead of into megabytes of code.
    let unroll = if (slots <= ROW_CACHE_REGS || !scratch.is_empty()) && parts == 1 {
        String::new()
    } else {
        " 4".to_string()
    };
    // A split row's block visits its part's contiguous range of chunks (constant rows only).
    let per_part = ceil_div(chunks_c, parts as i64);
    let (c_lo, c_hi) = if parts > 1 {
        split::part_range("part", per_part, &chunks)
    } else {
        ("0".to_string(), chunks.clone())
    };
    let open_inner = |out: &mut String, indent: &mut String| {
        let _ = writeln!(out, "{indent}#pragma unroll{unroll}");
        let _ = writeln!(out, "{indent}for (int c = {c_lo}; c < {c_hi}; c++) {{");
        let _ = writeln!(
            out,
            "{indent}  const ti pc = ((ti)tid + (ti)c * {block}) * {v};"
        );
        let _ = writeln!(out, "{indent}  if (pc < {inner_n}) {{");
        if v > 1 {
            let inner = format!("{indent}    ");
            unflatten_chunk(out, &inner, "pc", &k.inner, no);
            let last = no + nr - 1;
            let _ = writeln!(out, "{indent}  #pragma unroll");
            let _ = writeln!(out, "{indent}  for (int j = 0; j < {v}; j++) {{");
            let _ = writeln!(out, "{indent}    const int it = c * {v} + j;");
            let _ = writeln!(out, "{indent}    const ti p = pc + (ti)j; (void)p;");
            let _ = writeln!(out, "{indent}    const ti x{last} = xc{last} + (ti)j;");
        } else {
            let _ = writeln!(out, "{indent}  {{");
            let _ = writeln!(out, "{indent}    const int it = c;");
            let _ = writeln!(out, "{indent}    const ti p = pc; (void)p;");
            unflatten(out, &format!("{indent}    "), "pc", &k.inner, no);
        }
        indent.push_str("    ");
    };
    let close_inner = |out: &mut String, indent: &mut String| {
        indent.truncate(indent.len() - 4);
        let _ = writeln!(out, "{indent}  }}");
        let _ = writeln!(out, "{indent}  }}");
        let _ = writeln!(out, "{indent}}}");
    };
    // The row's stages go to `body` first, so the loads worth keeping can be found in them.
    let mut body = String::new();
    let mut local: HashMap<BufId, String> = HashMap::new();
    let nstages = k.nodes.iter().map(|kn| kn.stage + 1).max().unwrap_or(0);
    for stage in 0..nstages {
        let out = &mut body;
        let members: Vec<&KernelNode> = k.nodes.iter().filter(|kn| kn.stage == stage).collect();
        match (&ir.nodes[members[0].node], members[0].level) {
            (
                IrNode::Reduction {
                    out: ob, op, body, ..
                },
                _,
            ) => {
                let vd = body.dtypes[body.root];
                let d = ir.buffers[*ob].dtype;
                let acc = format!("acc{ob}");
                let pos = if op.is_arg() {
                    Some(format!("acci{ob}"))
                } else {
                    None
                };
                let at = if op.is_arg() { vd } else { d };
                let base_op = match op {
                    ReduceOp::ArgMax => ReduceOp::Max,
                    ReduceOp::ArgMin => ReduceOp::Min,
                    o => *o,
                };
                let _ = writeln!(
                    out,
                    "{indent}{} {acc} = {};",
                    c_type(at),
                    init_c(base_op, at)
                );
                if let Some(pi) = &pos {
                    let _ = writeln!(out, "{indent}int64_t {pi} = 0;");
                }
                open_inner(out, &mut indent);
                let v = emit_body_with(
                    out,
                    body,
                    &format!("r{ob}"),
                    &local,
                    &indent,
                    &nest,
                    INDEX_ERROR,
                );
                match &pos {
                    // A thread's positions rise, so the first best one wins without ties.
                    Some(pi) => {
                        let tk = arg_takes(*op, at, &v, "", &acc, "", false);
                        let _ = writeln!(out, "{indent}if ({tk}) {{ {acc} = {v}; {pi} = p; }}");
                    }
                    None => {
                        let _ = writeln!(out, "{indent}{acc} = {};", combine_c(*op, &acc, &v, at));
                    }
                }
                close_inner(out, &mut indent);
                block_reduce(out, &indent, *ob, *op, at, &acc, pos.as_deref(), block);
                if parts > 1 {
                    let kname = &k.name;
                    split::emit_combine_parts(
                        out, &indent, kname, *ob, *op, at, &acc, parts, block,
                    );
                }
                let result = pos.clone().unwrap_or_else(|| acc.clone());
                if sched.materialized[*ob] {
                    let _ = writeln!(
                        out,
                        "{indent}if (tid == 0) b{ob}[{}] = {};",
                        store_c(ir, *ob, no, &nest),
                        store_conv(d, &result)
                    );
                }
                local.insert(*ob, local_value(d, &result));
            }
            (IrNode::Pointwise { .. }, Level::Row) => {
                // Every thread computes the row's values (they read reductions every thread
                // holds); the stores write one value to one address.
                emit_stage_nodes(out, cx, stage, &mut local, &indent, no, &nest, &scratch_at);
            }
            _ => {
                open_inner(out, &mut indent);
                let mut stage_local = local.clone();
                let l = &mut stage_local;
                emit_stage_nodes(out, cx, stage, l, &indent, no + nr, &nest, &scratch_at);
                close_inner(out, &mut indent);
                for kn in &members {
                    if let IrNode::Pointwise { out: ob, .. } = &ir.nodes[kn.node] {
                        if let Some(at) = scratch_at.get(ob) {
                            local.insert(*ob, at.clone());
                        }
                    }
                }
            }
        }
    }
    if cache {
        let inner_vars: Vec<String> = (no..no + nr).map(|i| format!("x{i}")).collect();
        let budget = (ROW_CACHE_REGS / slots).max(0) as usize;
        let loads = cache_row_loads(&body, &inner_vars, 2, budget, |b| {
            (b.index() < ir.buffers.len()).then(|| ir.buffers[b].dtype)
        });
        for (i, (b, _)) in loads.iter().enumerate() {
            let t = storage_type(ir.buffers[*b].dtype);
            let _ = writeln!(out, "{indent}{t} cr{i}[{slots}];");
        }
        if !loads.is_empty() {
            open_inner(out, &mut indent);
            for (i, (b, expr)) in loads.iter().enumerate() {
                let _ = writeln!(out, "{indent}cr{i}[it] = b{b}[{expr}];");
            }
            close_inner(out, &mut indent);
            for (i, (b, expr)) in loads.iter().enumerate() {
                body = replace_load(&body, *b, expr, &format!("cr{i}[it]"));
            }
        }
    }
    out.push_str(&body);
    if rows > 1 {
        // A warp's reductions are shuffles only (no shared slots); the warps of a block run
        // different numbers of rows, so no block barrier.
        let _ = writeln!(out, "{indent}__syncwarp();");
    } else {
        // The next row's reductions reuse the shared slots this row's threads may still read.
        let _ = writeln!(out, "{indent}__syncthreads();");
    }
    let _ = writeln!(out, "  }}");
}

/// One thread per row (a [`KernelShape::Blocked`] plan): every stage runs sequentially over
/// the row's inner space in that thread. A float sum accumulates in double, as the C printer's
/// blocked kernels do, since it adds a long column one element at a time.
fn emit_thread_rows(out: &mut String, ir: &IrGraph, sched: &Schedule, k: &Kernel) {
    let (no, nr) = (k.outer.len(), k.inner.len());
    let outer_n: Size = k.outer.iter().product();
    let inner_n: Size = k.inner.iter().product();
    let cx = Cx {
        ir,
        sched,
        k,
        index_error: INDEX_ERROR,
    };
    let nest = LoopNest::identity(&[]);
    let _ = writeln!(
        out,
        "  for (ti row = (ti)blockIdx.x * (ti)blockDim.x + (ti)threadIdx.x; row < {outer_n}; row += (ti)gridDim.x * (ti)blockDim.x) {{"
    );
    let mut indent = String::from("    ");
    unflatten(out, &indent, "row", &k.outer, 0);
    let open_inner = |out: &mut String, indent: &mut String| {
        let _ = writeln!(out, "{indent}for (ti p = 0; p < {inner_n}; p++) {{");
        indent.push_str("  ");
        unflatten(out, indent, "p", &k.inner, no);
    };
    let close_inner = |out: &mut String, indent: &mut String| {
        indent.truncate(indent.len() - 2);
        let _ = writeln!(out, "{indent}}}");
    };
    let mut local: HashMap<BufId, String> = HashMap::new();
    let nstages = k.nodes.iter().map(|kn| kn.stage + 1).max().unwrap_or(0);
    for stage in 0..nstages {
        let members: Vec<&KernelNode> = k.nodes.iter().filter(|kn| kn.stage == stage).collect();
        match (&ir.nodes[members[0].node], members[0].level) {
            (
                IrNode::Reduction {
                    out: ob, op, body, ..
                },
                _,
            ) => {
                let d = ir.buffers[*ob].dtype;
                let wide = *op == ReduceOp::Sum && is_f32_like(d);
                let ad = if wide { DType::Float64 } else { d };
                let acc = format!("acc{ob}");
                let _ = writeln!(out, "{indent}{} {acc} = {};", c_type(ad), init_c(*op, ad));
                open_inner(out, &mut indent);
                let prefix = format!("r{ob}");
                let v = emit_body_with(out, body, &prefix, &local, &indent, &nest, INDEX_ERROR);
                let v = if wide { format!("(double){v}") } else { v };
                let _ = writeln!(out, "{indent}{acc} = {};", combine_c(*op, &acc, &v, ad));
                close_inner(out, &mut indent);
                let cell = if wide { format!("((float){acc})") } else { acc };
                if sched.materialized[*ob] {
                    let _ = writeln!(
                        out,
                        "{indent}b{ob}[{}] = {};",
                        store_c(ir, *ob, no, &nest),
                        store_conv(d, &cell)
                    );
                }
                local.insert(*ob, local_value(d, &cell));
            }
            (IrNode::Pointwise { .. }, Level::Row) => {
                let no_scratch = HashMap::new();
                emit_stage_nodes(out, cx, stage, &mut local, &indent, no, &nest, &no_scratch);
            }
            _ => {
                open_inner(out, &mut indent);
                let mut stage_local = local.clone();
                let (l, no_scratch) = (&mut stage_local, HashMap::new());
                emit_stage_nodes(out, cx, stage, l, &indent, no + nr, &nest, &no_scratch);
                close_inner(out, &mut indent);
            }
        }
    }
    let _ = writeln!(out, "  }}");
}
