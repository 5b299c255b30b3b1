//! `torch.nn.functional` functions written in Python over torch ops that the tracer inlines
//! like user code instead of recording one opaque call.
//!
//! `F.multi_head_attention_forward` (what `nn.MultiheadAttention`, and through it
//! `nn.TransformerEncoderLayer`/`DecoderLayer` and torchvision's ViT, call) is plain Python over
//! `linear`, views, `baddbmm`/`bmm`, `softmax`, `dropout` and `scaled_dot_product_attention`.
//! Recorded as one call it has no derivative rule, so a training graph holding it ran on torch's
//! autograd (the eager runner), and the inductor could only call it as a host function.
//! torch.compile's Dynamo also keeps it as one call, but its AOTAutograd then traces through it
//! at the dispatcher, so its joint graph sees the primitive ops; inlining it here gives our
//! joint graph (and the inductor) the same ops, each of which has a rule and a lowering.
//!
//! Its helpers are inlined too: called with a tensor they would otherwise be opaque calls,
//! and some return no tensor (`_mha_shape_check` a bool, `_none_or_dtype` a dtype), which a
//! graph node cannot stand for. The graph count is unchanged (one, as torch.compile's).

use pyo3::intern;
use pyo3::prelude::*;

/// The functions of `torch/nn/functional.py` inlined, by their code's name.
const INLINED: &[&str] = &[
    "multi_head_attention_forward",
    "_mha_shape_check",
    "_canonical_mask",
    "_none_or_dtype",
    "_in_projection_packed",
    "_in_projection",
    "_check_key_padding_mask",
];

/// Whether Python code in `filename` named `co_name` is one of the inlined functions.
pub(super) fn inlined_code(filename: &str, co_name: &str) -> bool {
    filename.ends_with("/torch/nn/functional.py") && INLINED.contains(&co_name)
}

/// Whether `f` is a Python function whose code is one of the inlined functions (so it is no
/// torch callable to record).
pub(super) fn is_inlined_function(f: &Bound<'_, PyAny>) -> bool {
    let py = f.py();
    let Ok(code) = f.getattr(intern!(py, "__code__")) else {
        return false;
    };
    let text = |a| {
        code.getattr(a)
            .and_then(|v| v.extract::<String>())
            .unwrap_or_default()
    };
    inlined_code(
        &text(intern!(py, "co_filename")),
        &text(intern!(py, "co_name")),
    )
}
