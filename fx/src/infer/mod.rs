//! Native metadata inference: the sizes, strides, dtype, device and `requires_grad` a torch call
//! produces, computed without running torch.
//!
//! The tracer needs the result metadata of every op it records. Running the op on meta tensors
//! always works but costs a trip through Python and the dispatcher per op; this module answers the
//! common ops in Rust. Its contract is asymmetric: [`InferError::Unsupported`] is always a safe
//! answer (the tracer falls back to meta tensors), a wrong answer is a bug. So every rule here is
//! checked against real torch (`tests/gen_infer_cases.py`), and anything not modelled exactly —
//! symbolic sizes, channels-last guesses, data-dependent shapes, unknown keyword arguments —
//! answers `Unsupported`.

mod args;
pub mod attention;
pub(crate) mod conv;
mod convert;
mod factory;
mod index;
mod join;
pub mod layout;
mod matmul;
mod nn;
mod pointwise;
pub mod promote;
mod reduce;
mod symbolic;
mod view;

use crate::graph::{Arg, Graph, Target};
use crate::meta::{DType, Device, NodeMeta};

pub(crate) use crate::ops::{split_target, Spelling};
pub(crate) use args::{Bound, Call, Tensor, Value};
pub use symbolic::{
    contiguous as symbolic_contiguous, dense as symbolic_dense, evaluate as evaluate_at,
    has_symbolic_arg, infer_symbolic, meta_symbols, ruled as symbolic_ruled, substitute_meta,
    Symbols,
};
pub use view::view_strides;

#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum InferError {
    /// Not modelled natively; run the op on meta tensors instead.
    #[error("not inferred natively")]
    Unsupported,
    /// torch would reject these arguments; the message reads like torch's.
    #[error("{0}")]
    Invalid(String),
}

pub type InferResult = Result<NodeMeta, InferError>;

/// The ambient torch state that changes what an op produces.
#[derive(Clone, Debug, PartialEq)]
pub struct InferCtx {
    /// `torch.is_grad_enabled()`: off under `torch.no_grad()`, where no result requires grad.
    pub grad_enabled: bool,
    /// `torch.get_default_dtype()`: the dtype of float factories and of `int_tensor / int`.
    pub default_dtype: DType,
    /// Where factories without `device=` allocate (`torch.set_default_device`).
    pub default_device: Device,
}

impl Default for InferCtx {
    fn default() -> InferCtx {
        InferCtx {
            grad_enabled: true,
            default_dtype: DType::Float32,
            default_device: Device::cpu(),
        }
    }
}

/// The metadata of `target(*args, **kwargs)` under torch's default state (grad enabled, float32
/// default dtype, CPU default device). Node arguments' metadata is read from `graph`.
pub fn infer(
    graph: &Graph,
    target: &Target,
    args: &[Arg],
    kwargs: &[(String, Arg)],
) -> InferResult {
    infer_in(&InferCtx::default(), graph, target, args, kwargs)
}

/// [`infer`] under an explicit torch state.
pub fn infer_in(
    ctx: &InferCtx,
    graph: &Graph,
    target: &Target,
    args: &[Arg],
    kwargs: &[(String, Arg)],
) -> InferResult {
    run_handlers(ctx, graph, target, args, kwargs).1
}

/// The handler families, in the order they are asked; [`run_handlers`] says which answered.
const FAMILIES: [&str; 11] = [
    "pointwise",
    "reduce",
    "matmul",
    "view",
    "index",
    "join",
    "nn",
    "conv",
    "convert",
    "factory",
    "python",
];

/// [`infer_in`], and the family of the handler that answered (`""` if none).
pub(crate) fn run_handlers(
    ctx: &InferCtx,
    graph: &Graph,
    target: &Target,
    args: &[Arg],
    kwargs: &[(String, Arg)],
) -> (&'static str, InferResult) {
    let Some((spelling, name)) = split_target(target) else {
        return ("", Err(InferError::Unsupported));
    };
    let call = Call {
        ctx,
        graph,
        spelling,
        name,
        args,
        kwargs,
    };
    let handlers: [fn(&Call) -> Option<InferResult>; 11] = [
        pointwise::infer,
        reduce::infer,
        matmul::infer,
        view::infer,
        index::infer,
        join::infer,
        nn::infer,
        conv::infer,
        convert::infer,
        factory::infer,
        args::infer_python_values,
    ];
    for (handler, family) in handlers.into_iter().zip(FAMILIES) {
        if let Some(result) = handler(&call) {
            return (family, result);
        }
    }
    ("", Err(InferError::Unsupported))
}

/// Normalises a dimension index against a rank ([`crate::ops::schema::wrap_dim`]).
pub(crate) fn wrap_dim(dim: i64, ndim: usize) -> Result<usize, InferError> {
    crate::ops::schema::wrap_dim(dim, ndim).map_err(|e| InferError::Invalid(e.to_string()))
}

pub(crate) fn invalid<T>(msg: impl Into<String>) -> Result<T, InferError> {
    Err(InferError::Invalid(msg.into()))
}

#[cfg(test)]
mod tests;
