//! `operator.getitem`: basic indexing of tensors (ints, slices, `None`, `...`) as views, and
//! picking elements out of tuple results (`x.max(0)[1]`, `x.split(2)[0]`).
//!
//! Advanced indexing (tensor, list or bool indices) gathers data into a new tensor whose shape
//! rules are a separate story; it answers `Unsupported`.

use super::view::{selected, unsqueezed};
use super::{invalid, Call, InferError, InferResult, Spelling, Tensor, Value};
use crate::graph::Arg;
use crate::meta::NodeMeta;

pub(super) fn infer(c: &Call) -> Option<InferResult> {
    match (c.spelling, c.name) {
        (Spelling::Operator, "getitem") | (Spelling::Method, "__getitem__") => Some(getitem(c)),
        _ => None,
    }
}

fn getitem(c: &Call) -> InferResult {
    if c.args.len() != 2 || !c.kwargs.is_empty() {
        return Err(InferError::Unsupported);
    }
    if let Arg::Node(n) = &c.args[0] {
        if let NodeMeta::Tuple(items) = &c.graph.node(*n).meta {
            return tuple_item(items, &Value::of_arg(c.graph, &c.args[1])?);
        }
    }
    let x = Value::of_arg(c.graph, &c.args[0])?;
    let x = x.tensor().ok_or(InferError::Unsupported)?;
    // A list index is advanced indexing, unlike a tuple of indices.
    let items: Vec<Value> = match &c.args[1] {
        Arg::List(_) => return Err(InferError::Unsupported),
        Arg::Tuple(items) => items
            .iter()
            .map(|a| match a {
                Arg::List(_) | Arg::Tuple(_) => Err(InferError::Unsupported),
                a => Value::of_arg(c.graph, a),
            })
            .collect::<Result<_, _>>()?,
        a => vec![Value::of_arg(c.graph, a)?],
    };
    index_tensor(x, &items).map(Tensor::meta)
}

fn tuple_item(items: &[NodeMeta], index: &Value) -> InferResult {
    let n = items.len() as i64;
    match index {
        Value::Int(i) => {
            let j = if *i < 0 { i + n } else { *i };
            if j < 0 || j >= n {
                return invalid("tuple index out of range");
            }
            Ok(items[j as usize].clone())
        }
        Value::Slice(a, b, s) => {
            if !matches!(**s, Value::None) && s.int() != Some(1) {
                return Err(InferError::Unsupported);
            }
            let (start, stop) = slice_bounds(bound(a)?, bound(b)?, n);
            Ok(NodeMeta::Tuple(
                items[start as usize..stop as usize].to_vec(),
            ))
        }
        _ => Err(InferError::Unsupported),
    }
}

fn bound(v: &Value) -> Result<Option<i64>, InferError> {
    match v {
        Value::None => Ok(None),
        Value::Int(i) => Ok(Some(*i)),
        _ => Err(InferError::Unsupported),
    }
}

/// Python's clamping of slice bounds (positive step) to `[0, size]`, with `stop >= start`.
fn slice_bounds(start: Option<i64>, stop: Option<i64>, size: i64) -> (i64, i64) {
    let fix = |v: i64| {
        let v = if v < 0 { v + size } else { v };
        v.clamp(0, size)
    };
    let s = start.map_or(0, fix);
    let e = stop.map_or(size, fix).max(s);
    (s, e)
}

/// Applies basic indices left to right: an int selects (dropping the dimension), a slice keeps
/// it with a stride multiplied by the step, `None` inserts a unit dimension, `...` skips the
/// dimensions no other index names.
pub(crate) fn index_tensor(x: &Tensor, items: &[Value]) -> Result<Tensor, InferError> {
    let mut named = 0;
    let mut ellipses = 0;
    for item in items {
        match item {
            Value::Int(_) | Value::Slice(..) => named += 1,
            Value::None => {}
            Value::Ellipsis => ellipses += 1,
            _ => return Err(InferError::Unsupported),
        }
    }
    if ellipses > 1 {
        // torch accepts several, with results that are not worth modelling.
        return Err(InferError::Unsupported);
    }
    if x.ndim() == 0 && items.iter().any(|i| matches!(i, Value::Int(_))) {
        return invalid(
            "invalid index of a 0-dim tensor. Use `tensor.item()` in Python or `tensor.item<T>()` \
             in C++ to convert a 0-dim tensor to a number",
        );
    }
    if named > x.ndim() {
        return invalid(format!(
            "too many indices for tensor of dimension {}",
            x.ndim()
        ));
    }
    let mut y = x.clone();
    let mut dim = 0usize;
    // Dimension of the original tensor that `dim` corresponds to, for messages.
    let mut source_dim = 0usize;
    for item in items {
        match item {
            Value::Int(i) => {
                let size = y.sizes[dim];
                if *i < -size || *i >= size {
                    return invalid(format!(
                        "index {i} is out of bounds for dimension {source_dim} with size {size}"
                    ));
                }
                y = selected(&y, dim, *i)?;
                source_dim += 1;
            }
            Value::Slice(a, b, s) => {
                let step = match &**s {
                    Value::None => 1,
                    Value::Int(0) => return invalid("slice step cannot be zero"),
                    Value::Int(k) if *k < 0 => return invalid("step must be greater than zero"),
                    Value::Int(k) => *k,
                    _ => return Err(InferError::Unsupported),
                };
                let (start, stop) = slice_bounds(bound(a)?, bound(b)?, y.sizes[dim]);
                y.sizes[dim] = (stop - start + step - 1) / step;
                y.strides[dim] *= step;
                dim += 1;
                source_dim += 1;
            }
            Value::None => {
                y = unsqueezed(&y, dim);
                dim += 1;
            }
            Value::Ellipsis => {
                dim += x.ndim() - named;
                source_dim += x.ndim() - named;
            }
            _ => return Err(InferError::Unsupported),
        }
    }
    Ok(y)
}
