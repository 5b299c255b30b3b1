//! The contract between compiled graphs and the process that owns tensors.
//!
//! The inductor never allocates tensor memory itself: the host (torch, through the tracer) does,
//! so outputs are real torch tensors and memory stays under torch's allocator. Compiled kernels
//! only see raw data pointers. Matmul-class ops and convolutions run in the host (extern calls)
//! because vendor GEMMs beat anything generated; ops the inductor cannot lower run there too
//! (fallbacks), one call per op, in graph order.

use fx::{DType, Target};

pub use crate::ir::{ExternCall, SdpaMask};

/// Geometry of a tensor the host holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TensorDesc {
    pub dtype: DType,
    pub sizes: Vec<i64>,
    pub strides: Vec<i64>,
}

/// An argument passed to a fallback op: graph constants stay `fx::Arg` (never `Arg::Node`).
#[derive(Clone, Debug)]
pub enum HostArg<T> {
    Tensor(T),
    Const(fx::Arg),
    Tuple(Vec<HostArg<T>>),
    List(Vec<HostArg<T>>),
}

/// What a fallback op returned.
#[derive(Clone, Debug)]
pub enum HostValue<T> {
    Tensor(T),
    /// A tuple or list of tensors (e.g. `torch.sort` returns values and indices).
    Seq(Vec<T>),
}

pub trait Host {
    /// A handle to a tensor (cheap to clone: a refcounted handle).
    type Tensor: Clone;
    type Error: std::error::Error + 'static;

    /// An uninitialized tensor (`torch.empty_strided`).
    fn empty_strided(
        &mut self,
        dtype: DType,
        sizes: &[i64],
        strides: &[i64],
    ) -> Result<Self::Tensor, Self::Error>;

    /// A view of `base`'s storage (`torch.as_strided`); `offset` is in elements from `base`'s first
    /// element.
    fn as_strided(
        &mut self,
        base: &Self::Tensor,
        sizes: &[i64],
        strides: &[i64],
        offset: i64,
    ) -> Result<Self::Tensor, Self::Error>;

    /// `base`'s whole contiguous storage as a tensor of its own with other sizes, not a view of
    /// `base` (no `._base`): an output that eager computes as a new tensor (`sum(keepdim=True)`,
    /// a 3-d `linear`) but that lowering wrote through a reshaped buffer. Torch's
    /// `aten._unsafe_view` is this (what eager's own `matmul` returns). Hosts without such a
    /// tensor fall back to a view.
    fn reshape_own(
        &mut self,
        base: &Self::Tensor,
        sizes: &[i64],
        strides: &[i64],
    ) -> Result<Self::Tensor, Self::Error> {
        self.as_strided(base, sizes, strides, 0)
    }

    /// Another tensor over `base`'s memory for the graph's own use (an extern call's operand,
    /// a buffer placed in a dead buffer's storage): never returned to the caller and never
    /// handed to a fallback op, so it need not be a view in the host's sense (torch: no
    /// `._base`, no shared version counter), which a host may make more cheaply. `offset` as
    /// for [`Host::as_strided`].
    fn alias(
        &mut self,
        base: &Self::Tensor,
        sizes: &[i64],
        strides: &[i64],
        offset: i64,
    ) -> Result<Self::Tensor, Self::Error> {
        self.as_strided(base, sizes, strides, offset)
    }

    /// A number that stays the same for one tensor handle while the caller holds it and
    /// differs between handles held at once (torch: the Python object's address), for reusing
    /// what was built from a tensor on an earlier call; `None`: the host cannot tell, and
    /// nothing is reused.
    fn identity(&self, t: &Self::Tensor) -> Option<usize> {
        let _ = t;
        None
    }

    fn describe(&self, t: &Self::Tensor) -> TensorDesc;

    /// Address of the tensor's first element (`tensor.data_ptr()`).
    fn data_ptr(&mut self, t: &Self::Tensor) -> *mut u8;

    /// `dst.copy_(src)`: used when a fallback's result has other strides than the graph expects.
    fn copy_into(&mut self, dst: &Self::Tensor, src: &Self::Tensor) -> Result<(), Self::Error>;

    /// Runs a matmul-class op or convolution, writing into `out`.
    fn run_extern(
        &mut self,
        call: &ExternCall,
        inputs: &[Self::Tensor],
        out: &Self::Tensor,
    ) -> Result<(), Self::Error>;

    /// Runs an extern op whose result the host allocates itself, when it can: torch's
    /// convolution has no `out=` form, and copying its result into a buffer allocated
    /// beforehand costs a full extra pass over every convolution output. `Ok(None)`: not
    /// supported, the caller uses [`Host::run_extern`]. The caller checks the result's layout.
    fn run_extern_new(
        &mut self,
        call: &ExternCall,
        inputs: &[Self::Tensor],
    ) -> Result<Option<Self::Tensor>, Self::Error> {
        let _ = (call, inputs);
        Ok(None)
    }

    /// Runs `work` (a generated kernel, which touches no host object) with the host's
    /// interpreter lock released where it has one, so that other threads progress meanwhile,
    /// as they do while torch's own kernels run. The default just runs it.
    fn run_unlocked(&mut self, work: &mut (dyn FnMut() + Send)) {
        work()
    }

    /// Where a graph's CUDA kernels run: the device ordinal and that device's current stream
    /// (a `CUstream`; 0 is the legacy default stream), asked before each CUDA kernel launch
    /// (hosts answer from a per-call cache). Kernels must run on the stream the host's own ops
    /// and allocator use, so that everything stays ordered without synchronizing. The default
    /// (device 0, default stream) suits hosts without streams of their own.
    fn cuda_stream(&mut self) -> Result<(u32, u64), Self::Error> {
        Ok((0, 0))
    }

    /// Runs a torch op the inductor did not lower: `target(*args, **kwargs)`.
    fn run_fallback(
        &mut self,
        target: &Target,
        args: &[HostArg<Self::Tensor>],
        kwargs: &[(String, HostArg<Self::Tensor>)],
    ) -> Result<HostValue<Self::Tensor>, Self::Error>;
}
