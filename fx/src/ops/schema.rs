//! Signatures and the one argument binder: how a call's positional and keyword arguments meet
//! a torch signature, as torch's argument parser matches them. `fx::infer` and the inductor's
//! lowering both bind through [`bind`], each reading the bound arguments its own way.

use crate::graph::Arg;

/// Why arguments do not fit a signature (the op is then an overload the caller does not model).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BindError {
    #[error("{given} positional arguments, signature takes {takes}")]
    TooManyPositional { given: usize, takes: usize },
    #[error("argument {0} given twice")]
    Twice(String),
    #[error("unexpected keyword argument {0}")]
    UnknownKeyword(String),
}

/// The parameter names of `sig` (names as torch spells them; `"*"` starts the keyword-only
/// ones), without the `"*"`.
pub fn param_names(sig: &[&'static str]) -> Vec<&'static str> {
    sig.iter().copied().filter(|p| *p != "*").collect()
}

/// Binds `args`/`kwargs` to `sig`: one slot per parameter of [`param_names`], `None` where the
/// call does not pass it.
pub fn bind<'a>(
    sig: &[&'static str],
    args: &'a [Arg],
    kwargs: &'a [(String, Arg)],
) -> Result<Vec<Option<&'a Arg>>, BindError> {
    let star = sig.iter().position(|s| *s == "*").unwrap_or(sig.len());
    if args.len() > star {
        return Err(BindError::TooManyPositional {
            given: args.len(),
            takes: star,
        });
    }
    let names = param_names(sig);
    let mut slots: Vec<Option<&Arg>> = vec![None; names.len()];
    for (i, a) in args.iter().enumerate() {
        slots[i] = Some(a);
    }
    for (k, v) in kwargs {
        match names.iter().position(|n| n == k) {
            Some(i) if slots[i].is_none() => slots[i] = Some(v),
            Some(_) => return Err(BindError::Twice(k.clone())),
            None => return Err(BindError::UnknownKeyword(k.clone())),
        }
    }
    Ok(slots)
}

/// `torch.nn.functional.interpolate` (fx's size rule and the inductor's lowering bind it).
pub const F_INTERPOLATE: &[&str] = &[
    "input",
    "size",
    "scale_factor",
    "mode",
    "align_corners",
    "recompute_scale_factor",
    "antialias",
];

/// `torch.nn.functional.batch_norm`.
pub const F_BATCH_NORM: &[&str] = &[
    "input",
    "running_mean",
    "running_var",
    "weight",
    "bias",
    "training",
    "momentum",
    "eps",
];

/// `torch.batch_norm` (every parameter required).
pub const BATCH_NORM: &[&str] = &[
    "input",
    "weight",
    "bias",
    "running_mean",
    "running_var",
    "training",
    "momentum",
    "eps",
    "cudnn_enabled",
];

/// `torch.nn.functional.dropout` (`torch.dropout` is the catalog row's `input, p, train`).
pub const F_DROPOUT: &[&str] = &["input", "p", "training", "inplace"];

/// `torch.nn.functional.max_pool2d`.
pub const F_MAX_POOL2D: &[&str] = &[
    "input",
    "kernel_size",
    "stride",
    "padding",
    "dilation",
    "ceil_mode",
    "return_indices",
];

/// `torch.max_pool2d`: the functional signature without `return_indices`.
pub const MAX_POOL2D: &[&str] = F_MAX_POOL2D.split_at(6).0;

/// A dim outside a tensor's rank, with torch's message.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("Dimension out of range (expected to be in range of [{}, {}], but got {dim})", -(*.rank as i64), *.rank as i64 - 1)]
pub struct DimOutOfRange {
    pub dim: i64,
    /// The rank dims are checked against (1 for a 0-d tensor).
    pub rank: usize,
}

/// Normalises a dimension index against a rank, as every torch op that takes `dim` does. A 0-d
/// tensor accepts the dims of a 1-d one (`-1` and `0`).
pub fn wrap_dim(dim: i64, ndim: usize) -> Result<usize, DimOutOfRange> {
    let n = ndim.max(1) as i64;
    if dim < -n || dim >= n {
        return Err(DimOutOfRange {
            dim,
            rank: n as usize,
        });
    }
    Ok(if dim < 0 { dim + n } else { dim } as usize)
}
