//! The device a graph is compiled for, and the policy that goes with it.
//!
//! Lowering, planning and the C printer used to read CPU facts from constants scattered over
//! the crate (which dtypes the C code handles, when 4-d intermediates go channels-last for
//! oneDNN, the OpenMP threshold, the huge-page size, the largest row kept in a row-local
//! array). They are read from one [`CpuPolicy`] here, reached through [`Target`] in
//! [`crate::Options`], so a second device (CUDA) brings its own policy instead of forking the
//! code that reads it. The defaults are the values those constants had: the generated C is the
//! same.

use fx::{DType, Graph};

/// The device kernels are generated for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// C with OpenMP, built by the system compiler and `dlopen`ed.
    Cpu(CpuPolicy),
    /// CUDA C, compiled by NVRTC to a cubin for one compute capability.
    Cuda(CudaPolicy),
}

impl Default for Target {
    fn default() -> Target {
        Target::Cpu(CpuPolicy::default())
    }
}

impl Target {
    /// The CPU policy, when the target is the CPU.
    pub fn cpu(&self) -> Option<&CpuPolicy> {
        match self {
            Target::Cpu(p) => Some(p),
            Target::Cuda(_) => None,
        }
    }

    /// A CUDA target with the default policy for compute capability `major.minor`.
    pub fn cuda(major: u32, minor: u32) -> Target {
        Target::Cuda(CudaPolicy::for_capability(major, minor))
    }

    /// Storage dtypes the target's kernels handle; ops on others fall back.
    pub fn supports_dtype(&self, d: DType) -> bool {
        match self {
            Target::Cpu(p) => p.supports_dtype(d),
            Target::Cuda(p) => p.supports_dtype(d),
        }
    }

    /// Whether a freshly written output of `bytes` gets a transparent-huge-page hint (host
    /// memory only).
    pub fn wants_hugepage(&self, bytes: i64) -> bool {
        match self {
            Target::Cpu(p) => p.wants_hugepage(bytes),
            Target::Cuda(_) => false,
        }
    }

    /// Largest row (in elements) a kernel keeps in a row-local array instead of memory; lowering
    /// reads it too (softmax takes the single-pass form only when its row fits).
    pub fn scratch_max(&self) -> i64 {
        match self {
            Target::Cpu(p) => p.scratch_max,
            Target::Cuda(p) => p.scratch_max(),
        }
    }

    /// See [`CpuPolicy::blocked_min_rows`] (CUDA: 4, its fixed rule).
    pub fn blocked_min_rows(&self) -> i64 {
        match self {
            Target::Cpu(p) => p.blocked_min_rows,
            Target::Cuda(_) => 4,
        }
    }

    /// Padded strides for a fresh intermediate of `sizes` (CUDA only; see
    /// [`CudaPolicy::padded_strides`]); `None` keeps it dense.
    pub fn padded_strides(&self, sizes: &[i64], dtype: DType) -> Option<Vec<i64>> {
        match self {
            Target::Cpu(_) => None,
            Target::Cuda(p) => p.padded_strides(sizes, dtype),
        }
    }

    /// A GEMM length to pad with zeros (CUDA only; see [`CudaPolicy::padded_gemm_len`]).
    pub fn padded_gemm_len(&self, len: i64, dtype: DType, min_dim: i64) -> Option<i64> {
        match self {
            Target::Cpu(_) => None,
            Target::Cuda(p) => p.padded_gemm_len(len, dtype, min_dim),
        }
    }

    /// Whether a graph output in a padded GEMM product keeps the padded layout (CUDA only; see
    /// [`CudaPolicy::padded_gemm_outputs`]).
    pub fn padded_gemm_outputs(&self) -> bool {
        matches!(self, Target::Cuda(p) if p.padded_gemm_outputs)
    }

    /// Whether a 2-d convolution in a channels-last graph takes its input channels-last (and
    /// returns a channels-last result): on the CPU only those torch runs on oneDNN (the native
    /// kernel would copy both into its own layout on every call); cuDNN convolves either.
    pub fn conv2d_channels_last(
        &self,
        dtype: DType,
        input: &[i64],
        weight: &[i64],
        groups: i64,
    ) -> bool {
        match self {
            Target::Cpu(_) => {
                crate::lower::onednn::conv2d_uses_onednn(dtype, input, weight, groups)
            }
            Target::Cuda(_) => true,
        }
    }

    /// Whether 4-d intermediates of `graph` are laid out channels-last.
    pub fn channels_last(&self, graph: &Graph) -> bool {
        match self {
            Target::Cpu(p) => p.channels_last(graph),
            // As eager's, where the policy allows: channels-last where the convolutions are.
            Target::Cuda(p) => {
                p.channels_last && crate::lower::cudnn::convolutions_mostly_channels_last(graph)
            }
        }
    }
}

/// When 4-d intermediates are laid out channels-last.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChannelsLast {
    /// When most of the graph's 2-d convolutions run on oneDNN (torch's dispatch rule), which
    /// convolves channels-last tensors without reordering them.
    WhenOneDnn,
    /// Never (intermediates keep eager's contiguous layout).
    Never,
}

/// What the CPU code generator and runtime decide by.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CpuPolicy {
    /// Kernels below this many loop iterations run on one thread (the `if` of every
    /// `#pragma omp parallel`): below it, waking threads costs more than it saves.
    pub parallel_threshold: i64,
    /// Buffers at least this large get a transparent-huge-page hint before they are first
    /// written (see [`crate::hugepage`]); `None`: never.
    pub hugepage_min_bytes: Option<i64>,
    /// Largest row (in elements) a staged kernel keeps in a per-row array instead of memory.
    pub scratch_max: i64,
    /// Kernels over at least this many elements run with the host's lock released. Releasing
    /// and retaking it costs about a microsecond, which smaller kernels would feel.
    pub unlock_min_elems: i64,
    pub channels_last: ChannelsLast,
    /// Reductions over leading dims process rows in blocks when there are at least this many
    /// rows (fewer fit one vector poorly). Kernels with sizes as arguments use 0: their loop
    /// shape may not depend on a size ([`crate::param`]).
    pub blocked_min_rows: i64,
    /// Values the C printer derives from sizes (a blocked reduction's block count) are printed
    /// as C expressions over the sizes instead of their values. Kernels with sizes as
    /// arguments set it: their literals are then sizes and products of sizes, which
    /// [`crate::param`] fits as polynomials, where a block count `ceil(n / 64)` is constant
    /// over the nodes a template is fitted at and differs past them (another library per
    /// 64 rows). Static graphs print values (their C is unchanged).
    pub sizes_unfolded: bool,
    /// A store that selects between a `cat`'s parts is split into one loop per part
    /// ([`crate::lower`]'s `ranges`) only from this many elements: below it the extra kernel
    /// call (0.3-0.6 µs measured under 200 elements) outweighs the select it removes (about
    /// 0.9 ns an element, measured at 263k). Kernels with sizes as arguments use 0: their loop
    /// structure may not depend on a size ([`crate::param`]).
    pub split_store_min_elems: i64,
    /// A float sum over one row longer than this many elements accumulates in blocks of
    /// [`SUM_BLOCK`] (a fresh accumulator per block, its vector lanes folded, then added into
    /// a double): one accumulator per lane for the whole row made the rounding error grow
    /// with the row's length (a `[4e6, 2]` column sum was 47 off the exact answer, eager's
    /// cascade 0.31). Shorter rows keep the one-loop form (their C is unchanged); a row of
    /// symbolic length is always blocked. Kernels with sizes as arguments fitted over
    /// concrete sizes use 0: their loop shape may not depend on a size ([`crate::param`]);
    /// per-size libraries keep the static graph's C.
    pub cascade_min_len: i64,
}

/// Elements a blocked float sum adds into one fresh accumulator ([`CpuPolicy::cascade_min_len`]):
/// 128 per lane of an 8-wide vector, so a block's own rounding stays near eager's cascade
/// while the fold of the lanes and the double add happen once per 1024 elements.
pub const SUM_BLOCK: i64 = 1024;

impl Default for CpuPolicy {
    fn default() -> CpuPolicy {
        CpuPolicy {
            parallel_threshold: 32768,
            hugepage_min_bytes: Some(crate::hugepage::MIN_BYTES),
            scratch_max: 16384,
            unlock_min_elems: 1 << 14,
            channels_last: ChannelsLast::WhenOneDnn,
            blocked_min_rows: 4,
            sizes_unfolded: false,
            split_store_min_elems: 1024,
            cascade_min_len: SUM_BLOCK,
        }
    }
}

impl CpuPolicy {
    /// Storage dtypes the C code handles (half precision is computed in float). Others
    /// (complex) fall back per op.
    pub fn supports_dtype(&self, d: DType) -> bool {
        matches!(
            d,
            DType::Bool
                | DType::UInt8
                | DType::Int8
                | DType::Int16
                | DType::Int32
                | DType::Int64
                | DType::Float16
                | DType::BFloat16
                | DType::Float32
                | DType::Float64
        )
    }

    /// Whether `graph`'s 4-d intermediates go channels-last (see [`ChannelsLast`]).
    pub fn channels_last(&self, graph: &Graph) -> bool {
        match self.channels_last {
            ChannelsLast::WhenOneDnn => crate::lower::onednn::convolutions_mostly_onednn(graph),
            ChannelsLast::Never => false,
        }
    }

    /// Whether a buffer of `bytes` gets the huge-page hint.
    pub fn wants_hugepage(&self, bytes: i64) -> bool {
        self.hugepage_min_bytes.is_some_and(|min| bytes >= min)
    }
}

/// What the CUDA code generator decides by (see [`crate::codegen::cuda`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CudaPolicy {
    /// Compute capability `(major, minor)`: the cubin is built for `sm_{major}{minor}`.
    pub capability: (u32, u32),
    /// Threads per block of a pointwise kernel (one element per thread, grid-stride).
    pub pointwise_block: u32,
    /// Most threads per block of a row kernel (one block per row); rows shorter than this get
    /// the next power of two at or above their length, at least one warp.
    pub row_block: u32,
    /// Most row elements each thread of a row kernel keeps in registers for the later stages
    /// (softmax's `exp(x - max)`): the row fits when it is at most `row_block * this`.
    pub regs_per_thread: u32,
    /// Most blocks a kernel launches; grid-stride loops cover the rest.
    pub max_blocks: u32,
    /// Elements each thread of a pointwise kernel handles per grid-stride step, `block` apart
    /// (still coalesced): independent loads in flight per thread hide HBM latency.
    pub pointwise_unroll: u32,
    /// [`Self::pointwise_unroll`] for pointwise kernels without chunks (an innermost extent
    /// that is no multiple of [`Self::vector`]: GPT-2's 50257 logits a row): with one element
    /// per thread and step, a copy of bf16 rows keeps a single 2-byte load in flight per thread.
    pub scalar_unroll: u32,
    /// Consecutive elements each thread handles as one chunk (pointwise and row kernels): with
    /// every data pointer 16-byte aligned (checked at launch, in the kernel) NVVM merges a
    /// chunk's loads and stores into 128-bit ones; 1 turns the chunks off.
    pub vector: u32,
    /// Whether a row kernel loads the row elements it reads in several stages (layer_norm's
    /// input, read for the mean, the variance and the output) once into registers.
    pub row_cache: bool,
    /// Blocks a split reduction aims for: a row kernel with few rows (a whole-tensor sum) whose
    /// only reduction comes first splits each row over `split_blocks / rows` blocks, which
    /// write partials that the row's last block folds in a fixed order. 0 turns splitting off.
    pub split_blocks: u32,
    /// Whether a graph whose convolutions are channels-last in eager keeps its 4-d
    /// intermediates channels-last too ([`crate::lower::cudnn`]), as eager's kernels do: no
    /// copy after every convolution, no transposed stores. On by default since session 31,
    /// once batch norm's backward sums split from its element stage (session 29's scheduler
    /// rule) and the backward's host convolutions take their gradients channels-last
    /// (`lower::fallback::TAKES_CHANNELS_LAST`); the CUDA set passed with it on (H100, session
    /// 31). `TORCHFERRO_CUDA_CHANNELS_LAST=0` turns it off.
    pub channels_last: bool,
    /// Rows a block runs at once when a row needs only one warp (rows of at most 128 float32
    /// elements), a warp each: one-warp blocks would cap an SM at a quarter of its threads (32
    /// blocks at most). 0 or 1: one row per block.
    pub warp_rows: u32,
    /// Threads per row of a column kernel (a reduction over leading dims, tiles of 32 rows;
    /// see `codegen::cuda::columns`); below 2, one thread per row.
    pub column_threads: u32,
    /// Whether a kernel whose text repeats an earlier one's up to its local names launches the
    /// earlier one instead of being compiled again (`codegen::cuda::share`): a model's repeated
    /// layers then cost NVRTC one kernel each.
    pub share_kernels: bool,
    /// Row strides of large intermediates are padded to a multiple of this many bytes (0: no
    /// padding). cuBLAS picks its aligned GEMM kernels only when every leading dimension is a
    /// multiple of 16 bytes: GPT-2's logits `[8192, 50257]` in bf16, left dense, send the LM
    /// head's three products to `align1` kernels several times slower. Inductor pads to 128.
    pub pad_bytes: u32,
    /// Strides of at most this many elements stay dense: padding small rows wastes more memory
    /// than the aligned kernels save (Inductor's threshold).
    pub pad_min_stride: i64,
    /// A GEMM with a length under this is not padded ([`Self::padded_gemm_len`]): copying an
    /// operand would cost about what the aligned kernel saves.
    pub pad_gemm_min_dim: i64,
    /// Whether a graph output that is a GEMM product padded along its output length is handed
    /// out as a view of the padded product (row stride the padded length), as torch.compile's
    /// `pad_mm` returns GPT-2's bf16 logits (`stride() == (50264, 1)`), instead of copied to
    /// eager's dense strides: the copy is a full pass over the largest tensor of an LM forward
    /// (0.92 ms of 9.1 on the H100, session 26). Off: every output keeps eager's strides.
    pub padded_gemm_outputs: bool,
    /// Whether a pointwise kernel's chunks that are consecutive in a buffer are read and written
    /// as vector accesses in the aligned instance, with chunks widened to 16 bytes for narrow
    /// dtypes (`codegen::cuda::pointwise`); off, each lane is its own access and NVVM is left to
    /// merge them (it does not). `TORCHFERRO_CUDA_VECTOR_ACCESS=0` turns it off (A/B).
    pub vector_access: bool,
    /// Registers (of 4 bytes) a pointwise chunk may spend on loads read ahead into register
    /// arrays (`codegen::cuda::passes::chunk_loads`): streamed inputs first, then per-channel
    /// vectors. `TORCHFERRO_CUDA_CHUNK_REGS` (A/B).
    pub chunk_regs: u32,
    /// Blocks per SM a pointwise kernel asks ptxas to fit (`__launch_bounds__(block, n)`,
    /// capping its registers at `65536 / (block * n)`), 0: no request. resnet50's batch-norm
    /// backward kernels use 90-127 registers, two 256-thread blocks an SM: the knob
    /// `TORCHFERRO_CUDA_PW_MIN_BLOCKS` measures whether occupancy is what they lack.
    pub pointwise_min_blocks: u32,
}

impl Default for CudaPolicy {
    fn default() -> CudaPolicy {
        CudaPolicy::for_capability(9, 0)
    }
}

impl CudaPolicy {
    /// The defaults for compute capability `major.minor` (sm_90: H100/H200).
    pub fn for_capability(major: u32, minor: u32) -> CudaPolicy {
        CudaPolicy {
            capability: (major, minor),
            pointwise_block: 256,
            // Session 10 on the H200 (32768 x 4096 float32): 512 threads beat 1024 (softmax
            // 598 -> 347 us, layer_norm 513 -> 353, rms_norm 399 -> 293) and 256/128; the
            // register-held row stays 8192 long.
            row_block: 512,
            regs_per_thread: 16,
            // Enough to fill 132 SMs many times over; grid-stride loops cover larger tensors.
            max_blocks: 1 << 16,
            // 4 and 8 measured no faster on the H200 (the clone slower: 638 us against 534).
            pointwise_unroll: 1,
            scalar_unroll: 4,
            // Session 11: 4 elements (16 bytes of float32) per chunk.
            vector: 4,
            row_cache: true,
            // 132 SMs, four 512-thread blocks each: two waves.
            split_blocks: 1024,
            channels_last: true,
            warp_rows: 8,
            // 256-thread blocks: 32 rows by 8 threads each.
            column_threads: 8,
            share_kernels: true,
            pad_bytes: 128,
            pad_min_stride: 1024,
            pad_gemm_min_dim: 512,
            padded_gemm_outputs: false,
            vector_access: true,
            chunk_regs: 64,
            pointwise_min_blocks: 0,
        }
    }

    /// This policy with the measurement knobs of the environment: `TORCHFERRO_CUDA_ROW_BLOCK`
    /// (threads of a row kernel; the register-held row stays `scratch_max` long),
    /// `TORCHFERRO_CUDA_PW_BLOCK` and `TORCHFERRO_CUDA_UNROLL` (pointwise threads and elements
    /// per thread), `TORCHFERRO_CUDA_VEC` (consecutive elements per chunk, 1/2/4/8),
    /// `TORCHFERRO_CUDA_ROW_CACHE` (0/1), `TORCHFERRO_CUDA_SPLIT` (a split reduction's target
    /// blocks, 0: off), `TORCHFERRO_CUDA_WARP_ROWS` (one-warp rows per block),
    /// `TORCHFERRO_CUDA_SHARE` (0: every kernel compiled even where its text repeats another's),
    /// `TORCHFERRO_CUDA_CHANNELS_LAST` (0/1, [`Self::channels_last`]),
    /// `TORCHFERRO_CUDA_PADDED_OUTPUTS` (0/1, [`Self::padded_gemm_outputs`]),
    /// `TORCHFERRO_CUDA_VECTOR_ACCESS` (0/1, [`Self::vector_access`]),
    /// `TORCHFERRO_CUDA_CHUNK_REGS` ([`Self::chunk_regs`]), `TORCHFERRO_CUDA_PW_MIN_BLOCKS`
    /// ([`Self::pointwise_min_blocks`]). Sweeping them needs no
    /// rebuild, and the CI's CUDA check (`cuda::check_hook`) reads them too, so a policy can be
    /// tried on a captured graph without a GPU. Unparsable or out-of-range values are ignored.
    pub fn with_knobs(mut self) -> CudaPolicy {
        let knob = |name: &str, lo: u32, hi: u32| {
            std::env::var(name)
                .ok()
                .and_then(|v| v.trim().parse::<u32>().ok())
                .filter(|v| (lo..=hi).contains(v))
        };
        let p = &mut self;
        if let Some(b) = knob("TORCHFERRO_CUDA_ROW_BLOCK", 32, 1024).filter(|b| b.is_power_of_two())
        {
            let keep = p.scratch_max();
            p.row_block = b;
            p.regs_per_thread = (keep / b as i64) as u32;
        }
        if let Some(b) = knob("TORCHFERRO_CUDA_PW_BLOCK", 32, 1024).filter(|b| b % 32 == 0) {
            p.pointwise_block = b;
        }
        if let Some(u) = knob("TORCHFERRO_CUDA_UNROLL", 1, 16) {
            p.pointwise_unroll = u;
        }
        if let Some(v) = knob("TORCHFERRO_CUDA_VEC", 1, 8).filter(|v| v.is_power_of_two()) {
            p.vector = v;
        }
        if let Some(c) = knob("TORCHFERRO_CUDA_ROW_CACHE", 0, 1) {
            p.row_cache = c == 1;
        }
        if let Some(s) = knob("TORCHFERRO_CUDA_SPLIT", 0, 1 << 16) {
            p.split_blocks = s;
        }
        if let Some(r) = knob("TORCHFERRO_CUDA_WARP_ROWS", 0, 32) {
            p.warp_rows = r;
        }
        if let Some(s) = knob("TORCHFERRO_CUDA_SHARE", 0, 1) {
            p.share_kernels = s == 1;
        }
        if let Some(c) = knob("TORCHFERRO_CUDA_CHANNELS_LAST", 0, 1) {
            p.channels_last = c == 1;
        }
        if let Some(c) = knob("TORCHFERRO_CUDA_PADDED_OUTPUTS", 0, 1) {
            p.padded_gemm_outputs = c == 1;
        }
        if let Some(c) = knob("TORCHFERRO_CUDA_VECTOR_ACCESS", 0, 1) {
            p.vector_access = c == 1;
        }
        if let Some(r) = knob("TORCHFERRO_CUDA_CHUNK_REGS", 0, 256) {
            p.chunk_regs = r;
        }
        if let Some(b) = knob("TORCHFERRO_CUDA_PW_MIN_BLOCKS", 0, 32) {
            p.pointwise_min_blocks = b;
        }
        self
    }

    /// The length a GEMM's reduced or output length is padded to with zeros: past
    /// [`Self::pad_min_stride`] and not a multiple of 16 bytes (cuBLAS's `align1` kernels
    /// otherwise: the whole problem's lengths decide the alignment, not only the strides), it
    /// rounds up to [`Self::pad_bytes`]. Inductor's `pad_mm` does the same. `min_dim` is the
    /// GEMM's shortest length: below [`Self::pad_gemm_min_dim`] nothing pads.
    pub fn padded_gemm_len(&self, len: i64, dtype: DType, min_dim: i64) -> Option<i64> {
        let size = dtype.itemsize() as i64;
        let align = self.pad_bytes as i64 / size;
        (align > 1
            && min_dim >= self.pad_gemm_min_dim
            && len > self.pad_min_stride
            && (len * size) % 16 != 0)
            .then(|| (len + align - 1) / align * align)
    }

    /// The strides a fresh intermediate of `sizes` gets instead of dense ones: each stride past
    /// [`Self::pad_min_stride`] elements that is not a multiple of [`Self::pad_bytes`] rounds
    /// up, innermost first, the next stride built on the padded one (Inductor's rule). `None`
    /// where nothing pads: padding off, symbolic sizes, fewer than 2 dims.
    pub fn padded_strides(&self, sizes: &[i64], dtype: DType) -> Option<Vec<i64>> {
        let align = self.pad_bytes as i64 / dtype.itemsize() as i64;
        if align <= 1 || sizes.len() < 2 || sizes.iter().any(|&s| s <= 0) {
            return None;
        }
        let mut strides = vec![1i64; sizes.len()];
        let mut padded = false;
        for d in (0..sizes.len() - 1).rev() {
            let dense = strides[d + 1] * sizes[d + 1];
            strides[d] = if dense > self.pad_min_stride && dense % align != 0 && sizes[d] > 1 {
                padded = true;
                (dense + align - 1) / align * align
            } else {
                dense
            };
        }
        padded.then_some(strides)
    }

    /// The NVRTC architecture flag value, `sm_XY`.
    pub fn arch(&self) -> String {
        format!("sm_{}{}", self.capability.0, self.capability.1)
    }

    /// Largest row kept in registers (`row_block * regs_per_thread`).
    pub fn scratch_max(&self) -> i64 {
        self.row_block as i64 * self.regs_per_thread as i64
    }

    /// Storage dtypes the CUDA code handles: the CPU printer's set (float16 and bfloat16
    /// stored as 16 bits and computed in float, float64 in double).
    pub fn supports_dtype(&self, d: DType) -> bool {
        CpuPolicy::default().supports_dtype(d)
    }
}
