//! Ops along one dim that read their neighbours: `cumsum` (a running sum) and `diff` (adjacent
//! differences). Both stay in generated kernels; Llama's position-id and causal-mask code
//! (`transformers`' `find_packed_sequence_indices`) runs them on every forward.

use std::rc::Rc;

use fx::{Arg, DType};

use super::args::{bind, fallback, wrap_dim, LResult, Reject};
use super::elementwise::{pointwise, Operand};
use super::indexing::concat;
use super::value::TensorVal;
use super::Lowerer;
use crate::index::Idx;
use crate::ir::{BinOp, ReduceOp, Scalar};
use crate::size::Size;

/// Longest dim `cumsum` is lowered along. The running sum is written as a reduction over a
/// triangle (`out[j] = sum over k <= j of x[k]`): the loop IR has no carried loop value, and
/// the quadratic form costs `n` adds per element, which for the short lengths this is written
/// for (sequence positions, masks) is less than a torch call. Longer dims run through torch.
pub const CUMSUM_MAX_LEN: i64 = 512;

/// Most adds the triangle form may take (`numel * n`).
pub const CUMSUM_MAX_WORK: i64 = 1 << 24;

/// `torch.cumsum(input, dim, *, dtype=None)`: result in the node's dtype (int64 for bool and
/// integer inputs, as torch promotes), accumulated in int64 or double (torch's CPU kernel
/// accumulates floats in double).
pub fn cumsum(l: &mut Lowerer, a: &[Arg], kw: &[(String, Arg)]) -> LResult<TensorVal> {
    let b = bind(&["input", "dim", "*", "dtype"], a, kw)?;
    let x = l.tensor(b.req("input")?)?;
    let out = l
        .node_dtype
        .ok_or_else(|| Reject::Fallback("cumsum of unknown dtype".into()))?;
    let dim_arg = b
        .get("dim")
        .and_then(super::args::as_int)
        .ok_or_else(|| Reject::Fallback("cumsum dim is not an int".into()))?;
    if x.ndim() == 0 {
        return fallback("cumsum of a 0-d tensor");
    }
    let d = wrap_dim(dim_arg, x.ndim())?;
    let n = x.sizes[d];
    if let Some(n) = n.as_const() {
        if n > CUMSUM_MAX_LEN {
            return fallback(format!(
                "cumsum along a dim of {n} (> {CUMSUM_MAX_LEN}: the triangle form is quadratic)"
            ));
        }
    }
    // The triangle costs `numel * n` adds against the torch kernel's `numel`: beyond a few
    // million, a large tensor's scan is cheaper as one torch call than fused. With symbolic
    // sizes neither bound can be checked when lowering (no upper bound is known): the
    // triangle form is taken at every size (a sequence's positions and masks, what it is
    // written for; quadratic past the bounds, never wrong).
    if let (Some(n), Some(numel)) = (n.as_const(), x.numel().as_const()) {
        if numel.saturating_mul(n) > CUMSUM_MAX_WORK {
            return fallback(format!(
                "cumsum of {numel} elements along {n} (the triangle form's {} adds > \
                 {CUMSUM_MAX_WORK})",
                numel.saturating_mul(n)
            ));
        }
    }
    if n == 0 || x.numel() == 0 {
        return fallback("cumsum of an empty tensor");
    }
    let acc = if out.is_floating_point() {
        DType::Float64
    } else if out == DType::Bool {
        return fallback("cumsum to bool");
    } else {
        DType::Int64
    };
    if !l.target.supports_dtype(acc) || !l.target.supports_dtype(out) {
        return fallback(format!("cumsum accumulating in {acc:?}"));
    }
    // tri[..., j, ..., k] = x[..., k, ...] where k <= j, else 0; summed over the last dim k.
    let nd = x.ndim();
    let mut sizes = x.sizes.clone();
    sizes.push(n);
    let src = x.clone();
    let tri = TensorVal::lazy(
        acc,
        sizes,
        src.ops() + 3,
        Rc::new(move |bb, idx| {
            let (j, k) = (idx[d].clone(), idx[nd].clone());
            let mut at: Vec<Idx> = idx[..nd].to_vec();
            at[d] = k.clone();
            let v = src.load(bb, &at);
            let v = bb.cast(v, acc);
            let zero = bb.constant(Scalar::I(0), acc);
            let (jv, kv) = (bb.index_value(j), bb.index_value(k));
            let inside = bb.binary(BinOp::Le, kv, jv);
            bb.where_(inside, v, zero)
        }),
    );
    // torch adds a row's values one after another: a float sum keeps that order (an int sum
    // wraps the same in any order, so it may use vector lanes).
    let op = match acc.is_floating_point() {
        true => ReduceOp::OrderedSum,
        false => ReduceOp::Sum,
    };
    let sum = super::reduce::reduce(l, &tri, &[nd], false, op, acc);
    if acc == out {
        return Ok(sum);
    }
    pointwise(&[Operand::T(sum)], out, out, |_, v| v[0])
}

/// `torch.diff(input, n=1, dim=-1, prepend=None, append=None)`: `prepend`, `input`, `append`
/// concatenated along `dim`, then `n` times the difference of neighbours (`!=` on bool, as
/// torch's logical xor), each round in the concatenation's dtype; `n = 0` is a copy of the
/// input alone.
pub fn diff(l: &mut Lowerer, a: &[Arg], kw: &[(String, Arg)]) -> LResult<TensorVal> {
    let b = bind(&["input", "n", "dim", "prepend", "append"], a, kw)?;
    let x = l.tensor(b.req("input")?)?;
    let rounds = b.int_or("n", 1)?;
    if x.ndim() == 0 {
        return fallback("diff of a 0-d tensor (torch raises)");
    }
    if rounds < 0 {
        return fallback("diff with negative n (torch raises)");
    }
    let d = wrap_dim(b.int_or("dim", -1)?, x.ndim())?;
    if rounds == 0 {
        // torch returns a copy of the input, `prepend` and `append` unused.
        let dt = x.dtype;
        return pointwise(&[Operand::T(x)], dt, dt, |_, v| v[0]);
    }
    let mut parts = Vec::new();
    for (name, main) in [("prepend", false), ("input", true), ("append", false)] {
        if main {
            parts.push(x.clone());
        } else if let Some(p) = b.get(name) {
            let p = l.tensor(p)?;
            if p.ndim() != x.ndim() {
                return fallback(format!("diff {name} of another rank"));
            }
            parts.push(p);
        }
    }
    let mut y = concat(&parts, d as i64)?;
    for _ in 0..rounds {
        let len = y.sizes[d];
        if len == 0 {
            break;
        }
        let hi = y.slice(d, Size::Const(1), len - 1, 1);
        let lo = y.slice(d, Size::Const(0), len - 1, 1);
        let dt = y.dtype;
        y = if dt == DType::Bool {
            pointwise(&[Operand::T(hi), Operand::T(lo)], dt, dt, |bb, v| {
                bb.binary(BinOp::Ne, v[0], v[1])
            })?
        } else {
            let compute = match dt {
                DType::Float16 | DType::BFloat16 => DType::Float32,
                d => d,
            };
            pointwise(&[Operand::T(hi), Operand::T(lo)], compute, dt, |bb, v| {
                bb.binary(BinOp::Sub, v[0], v[1])
            })?
        };
    }
    Ok(y)
}
