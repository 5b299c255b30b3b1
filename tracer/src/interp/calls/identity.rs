//! Torch calls that eager answers with their input tensor itself, not a new tensor: aten's
//! early `return self` (`torch.real` or `conj` of a real tensor, `atleast_2d` of a matrix,
//! `flatten` of one dimension, `dropout` in eval mode). The trace hands back the input's own
//! tracker, so `torch.real(x) is x` holds as in eager (torch.compile learns it from its fake
//! tensors) and a write through the result is a write to the input; the node made for the call
//! is dead and dropped with the graph's dead code. The conversions (`to`, `float`,
//! `contiguous`) are `torch::returns_receiver`'s.

use pyo3::prelude::*;

use crate::interp::vars::Var;

/// Whether eager's `name(input, *rest, **kwargs)` (a torch function, or the tensor method of
/// that name on `input`) returns `input` itself, given the metadata of the input (`before`)
/// and of the traced result (`after`). A result of other metadata is never the input; an
/// argument this cannot read keeps the call's own result.
pub(in crate::interp) fn returns_input(
    py: Python<'_>,
    name: &str,
    before: &fx::TensorMeta,
    after: &fx::TensorMeta,
    rest: &[Var],
    kwargs: &[(String, Var)],
) -> bool {
    if before != after {
        return false;
    }
    // The argument at `pos` (after the input) or keyword `key`, as a Python value.
    let arg = |pos: usize, key: &str| -> Option<Option<Bound<'_, PyAny>>> {
        match (rest.get(pos), kwargs.iter().find(|(k, _)| k == key)) {
            (Some(v), None) | (None, Some((_, v))) => v.as_py(py).map(Some),
            (None, None) => Some(None),
            (Some(_), Some(_)) => None,
        }
    };
    let only = |keys: &[&str]| kwargs.iter().all(|(k, _)| keys.contains(&k.as_str()));
    match name {
        // The conjugate and real part of a real tensor, and resolving bits it does not have.
        "real" | "conj" | "conj_physical" | "resolve_conj" | "resolve_neg" => {
            rest.is_empty() && kwargs.is_empty() && !before.dtype.is_complex()
        }
        "positive" | "pos" => rest.is_empty() && kwargs.is_empty(),
        "atleast_1d" | "atleast_2d" | "atleast_3d" => {
            let k = (name.as_bytes()[8] - b'0') as usize;
            rest.is_empty() && kwargs.is_empty() && before.ndim() >= k
        }
        // Flattening one dimension into itself.
        "flatten" => {
            let n = before.ndim() as i64;
            if n == 0 || !only(&["start_dim", "end_dim"]) {
                return false;
            }
            let dim = |pos, key, default: i64| -> Option<i64> {
                match arg(pos, key)? {
                    None => Some(default),
                    Some(o) => o.extract::<i64>().ok(),
                }
            };
            match (dim(0, "start_dim", 0), dim(1, "end_dim", -1)) {
                (Some(s), Some(e)) => (s + n) % n == (e + n) % n,
                _ => false,
            }
        }
        // Same dtype and device (the metadata comparison above), nothing copied.
        "type_as" | "sum_to_size" => true,
        "as_tensor" | "asarray" => {
            only(&["dtype", "device", "copy"])
                && arg(usize::MAX, "copy").is_some_and(|c| {
                    c.is_none_or(|c| c.is_none() || !c.is_truthy().unwrap_or(true))
                })
        }
        // `torch.dropout(input, p, train)` and `F.dropout(input, p, training, inplace)` return
        // their input when they drop nothing.
        "dropout" | "alpha_dropout" | "feature_dropout" | "feature_alpha_dropout" => {
            if !only(&["p", "train", "training", "inplace"]) {
                return false;
            }
            let p = arg(0, "p").flatten().and_then(|p| p.extract::<f64>().ok());
            let flag = |key| arg(1, key).flatten().and_then(|t| t.is_truthy().ok());
            let train = flag("train").or_else(|| flag("training"));
            p == Some(0.0) || train == Some(false)
        }
        _ => false,
    }
}

/// `r`, the traced result of `name(*args, **kwargs)` whose first argument is the input, or the
/// input's own tracker where eager returns the input itself ([`returns_input`]).
pub(in crate::interp) fn input_itself(
    py: Python<'_>,
    name: &str,
    args: &[Var],
    kwargs: &[(String, Var)],
    r: Var,
) -> Var {
    match (args.first(), &r) {
        (Some(Var::Tensor(t)), Var::Tensor(now))
            if returns_input(py, name, &t.meta, &now.meta, &args[1..], kwargs) =>
        {
            Var::Tensor(t.clone())
        }
        // `broadcast_tensors(a, b)`, `atleast_2d(a, b)`: each result that is its input.
        (_, Var::Tuple(items))
            if matches!(
                name,
                "broadcast_tensors" | "atleast_1d" | "atleast_2d" | "atleast_3d"
            ) && items.len() == args.len()
                && kwargs.is_empty() =>
        {
            let kept = items
                .iter()
                .zip(args)
                .map(|(v, a)| match (a, v) {
                    (Var::Tensor(t), Var::Tensor(now))
                        if name == "broadcast_tensors" && t.meta == now.meta
                            || returns_input(py, name, &t.meta, &now.meta, &[], &[]) =>
                    {
                        Var::Tensor(t.clone())
                    }
                    _ => v.clone(),
                })
                .collect::<Vec<_>>();
            Var::Tuple(kept.into())
        }
        _ => r,
    }
}
