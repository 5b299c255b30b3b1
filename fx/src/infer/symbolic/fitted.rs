//! The ops fitted from an external evaluator (torch's meta tensors) over symbolic sizes.

/// Ops the native rules do not know whose result sizes are selections of input sizes and int
/// arguments: fitted from an external evaluator (the tracer runs them on meta tensors).
pub(super) const EXTERNAL_FITTED: &[&str] = &[
    "triu",
    "tril",
    "embedding",
    "scaled_dot_product_attention",
    "gelu",
    "silu",
    "mish",
    "softplus",
    "elu",
    "leaky_relu",
    "hardtanh",
    "rms_norm",
    "group_norm",
    "cumsum",
    "cumprod",
    "flip",
    "roll",
    "baddbmm",
    "addmm",
    "bmm",
    "einsum",
    "masked_fill",
    "where",
    "repeat",
    "expand",
    "type_as",
    "tanh",
    "log_softmax",
    "softmax",
    "dropout",
    "layer_norm",
    "normalize",
    "clone",
    "contiguous",
    "to",
    "float",
    "half",
    "bfloat16",
    "detach",
    "new_zeros",
    "new_ones",
    "new_empty",
    "new_full",
    "zeros_like",
    "ones_like",
    "full_like",
    "empty_like",
    "rand_like",
    "randn_like",
    "argmax",
    // The index's sizes, and the input's off the indexed dim.
    "index_select",
    "gather",
    // The input's sizes (`Sym::index_add_relations`: the source's against the input and index).
    "index_add",
    "index_add_",
    "argmin",
    "topk",
    "sort",
    "argsort",
    // Losses: a scalar, or the input's sizes with `reduction="none"`; the input and target
    // sizes torch requires equal fail the probes when they are not one symbol.
    "cross_entropy",
    "nll_loss",
    "mse_loss",
    "l1_loss",
    "smooth_l1_loss",
    "huber_loss",
    "binary_cross_entropy",
    "binary_cross_entropy_with_logits",
    "kl_div",
    // A scalar or the batch size (`Sym::cosine_embedding_relations`).
    "cosine_embedding_loss",
    // `x[key] = value`: `None`, valid where the value broadcasts to the view
    // (`Sym::setitem_relations`).
    "setitem",
    // Norms over some dims (the others kept, or 1 with `keepdim`), or a scalar.
    "norm",
    "linalg_vector_norm",
    "vector_norm",
    // The free dims of both operands (`Sym::tensordot_relations`: the contracted ones).
    "tensordot",
    // `[B.., P, R]` (`Sym::cdist_relations`).
    "cdist",
    // Each 1-d input expanded over the others' lengths, in either order.
    "meshgrid",
    // The input with leading (and, for 3-d, trailing) dims of 1.
    "atleast_1d",
    "atleast_2d",
    "atleast_3d",
    // The input's sizes.
    "bucketize",
    "searchsorted",
    "nan_to_num",
    "renorm",
    "softmin",
    "logcumsumexp",
    "cummax",
    "cummin",
    // The input's sizes without the reduced dim (or kept as 1), a value and an index each.
    "kthvalue",
    "median",
    "aminmax",
    "trapezoid",
    // A scalar; `[n, m]` (`Sym::inner_relations`: `inner` contracts its last dims); `[m, n]`
    // or a permutation; a square of a vector's length; a batch by an embedding.
    "trace",
    "outer",
    "inner",
    "rot90",
    "movedim",
    "diag_embed",
    "diag",
    "embedding_bag",
    // `[N, C, Hg, Wg]` (`Sym::grid_sample_relations`: the grid's batch is the input's).
    "grid_sample",
    // `[len(vec1), len(vec2)]` (`Sym::addr_relations`: the input broadcasts to it).
    "addr",
];
