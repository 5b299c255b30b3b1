//! The Rust inductor: lowers an `fx::Graph` to fused kernels (issue 4). For now it only states the
//! contract the tracer compiles against.

/// What the inductor needs from the process that runs compiled graphs: tensor allocation and
/// fallback ops. The tracer implements it on top of torch.
pub trait Host {
    type Tensor;
    type Error;
}
