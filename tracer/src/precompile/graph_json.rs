//! An fx graph as JSON text and back: the form a precompiled cache keeps each graph in, so a
//! fresh process rebuilds the very graph the capture traced without tracing anything.
//!
//! Nodes are listed in graph order and refer to each other by position in that list. Floats are
//! stored as their IEEE bits (JSON has no NaN or infinity).

use fx::{Arg, DType, Device, Dim, Graph, NodeId, NodeKind, NodeMeta, Target, TensorMeta};
use serde_json::{json, Value};

/// A graph that cannot be read back; the message says what was malformed.
#[derive(Debug)]
pub struct BadGraph(pub String);

fn bad<T>(what: impl Into<String>) -> Result<T, BadGraph> {
    Err(BadGraph(what.into()))
}

fn device_json(d: &Device) -> Value {
    json!([d.kind, d.index])
}

fn arg_json(a: &Arg, pos: &std::collections::HashMap<NodeId, usize>) -> Value {
    match a {
        Arg::Node(n) => json!(["node", pos[n]]),
        Arg::None => json!(["none"]),
        Arg::Bool(b) => json!(["bool", b]),
        Arg::Int(i) => json!(["int", i]),
        Arg::Float(f) => json!(["float", f.to_bits().to_string()]),
        Arg::Str(s) => json!(["str", s]),
        Arg::DType(d) => json!(["dtype", d.torch_name()]),
        Arg::Device(d) => json!(["device", device_json(d)]),
        Arg::TorchAttr(s) => json!(["attr", s]),
        Arg::Tuple(items) => json!([
            "tuple",
            items.iter().map(|a| arg_json(a, pos)).collect::<Vec<_>>()
        ]),
        Arg::List(items) => json!([
            "list",
            items.iter().map(|a| arg_json(a, pos)).collect::<Vec<_>>()
        ]),
        Arg::Slice(a, b, c) => json!([
            "slice",
            arg_json(a, pos),
            arg_json(b, pos),
            arg_json(c, pos)
        ]),
        Arg::Ellipsis => json!(["ellipsis"]),
    }
}

fn dim_json(d: &Dim) -> Value {
    match d {
        Dim::Known(v) => json!(v),
        // A symbolic size (dynamic shapes) as its canonical text over `s0`, `s1`, ... (the
        // symbols of the entry's shape guards), read back by `sym_text::parse`.
        Dim::Sym(k) => json!({ "sym": k.to_string() }),
    }
}

/// A symbolic float as a tree: `float(e)` is the int's text (as a size), a constant its bits,
/// an operation `[op, operands...]`.
fn float_expr_json(f: &fx::FloatExpr) -> Value {
    use fx::FloatExpr as F;
    match f {
        F::Int(e) => json!(e.to_string()),
        F::Const(c) => json!(["const", c.to_bits().to_string()]),
        F::Bin(op, a, b) => json!([op.operator_name(), float_expr_json(a), float_expr_json(b)]),
        F::Neg(a) => json!(["neg", float_expr_json(a)]),
        F::Sqrt(a) => json!(["sqrt", float_expr_json(a)]),
        F::Abs(a) => json!(["abs", float_expr_json(a)]),
    }
}

fn float_expr_of(v: &Value) -> Result<fx::FloatExpr, BadGraph> {
    use fx::{FloatExpr as F, FloatOp};
    if v.is_string() {
        return Ok(F::of_int(sym_of(v)?));
    }
    let a = arr(v)?;
    let at = |i: usize| a.get(i).map_or_else(|| bad("short float expression"), Ok);
    let tag = str_of(at(0)?)?;
    let op = match tag {
        "const" => return Ok(F::Const(float_of(at(1)?)?)),
        "neg" => return Ok(F::negated(float_expr_of(at(1)?)?)),
        "sqrt" => return Ok(F::sqrt(float_expr_of(at(1)?)?)),
        "abs" => return Ok(F::abs(float_expr_of(at(1)?)?)),
        "floordiv" => FloatOp::FloorDiv,
        "mod" => FloatOp::Mod,
        "max" => FloatOp::Max,
        "min" => FloatOp::Min,
        "add" => FloatOp::Add,
        "sub" => FloatOp::Sub,
        "mul" => FloatOp::Mul,
        "truediv" => FloatOp::Div,
        "pow" => FloatOp::Pow,
        _ => return bad(format!("unknown float operation {tag}")),
    };
    Ok(F::binary(
        op,
        float_expr_of(at(1)?)?,
        float_expr_of(at(2)?)?,
    ))
}

fn meta_json(m: &NodeMeta) -> Value {
    match m {
        NodeMeta::Tensor(t) => json!([
            "tensor",
            t.dtype.torch_name(),
            device_json(&t.device),
            t.sizes.iter().map(dim_json).collect::<Vec<_>>(),
            t.strides.iter().map(dim_json).collect::<Vec<_>>(),
            t.requires_grad
        ]),
        NodeMeta::Tuple(items) => json!(["tuple", items.iter().map(meta_json).collect::<Vec<_>>()]),
        NodeMeta::Int(i) => json!(["int", i]),
        NodeMeta::Float(f) => json!(["float", f.to_bits().to_string()]),
        NodeMeta::Bool(b) => json!(["bool", b]),
        NodeMeta::None => json!(["none"]),
        NodeMeta::SymInt(k) => json!(["symint", k.to_string()]),
        NodeMeta::SymFloat(f) => json!(["symfloat", float_expr_json(f)]),
    }
}

/// The graph as JSON text, and each node's position (callables are keyed by it).
pub fn to_json(graph: &Graph) -> (String, std::collections::HashMap<NodeId, usize>) {
    let pos: std::collections::HashMap<NodeId, usize> = graph
        .nodes()
        .enumerate()
        .map(|(i, (id, _))| (id, i))
        .collect();
    let nodes: Vec<Value> = graph
        .nodes()
        .map(|(_, n)| {
            let kind = match &n.kind {
                NodeKind::Placeholder { index } => json!(["placeholder", index]),
                NodeKind::Call {
                    target,
                    args,
                    kwargs,
                } => json!([
                    "call",
                    match target {
                        Target::Function(s) => json!(["function", s]),
                        Target::Method(s) => json!(["method", s]),
                    },
                    args.iter().map(|a| arg_json(a, &pos)).collect::<Vec<_>>(),
                    kwargs
                        .iter()
                        .map(|(k, a)| json!([k, arg_json(a, &pos)]))
                        .collect::<Vec<_>>()
                ]),
                NodeKind::Output { values } => json!([
                    "output",
                    values.iter().map(|a| arg_json(a, &pos)).collect::<Vec<_>>()
                ]),
            };
            json!({"name": n.name, "kind": kind, "meta": meta_json(&n.meta)})
        })
        .collect();
    (json!({ "nodes": nodes }).to_string(), pos)
}

fn str_of(v: &Value) -> Result<&str, BadGraph> {
    v.as_str()
        .map_or_else(|| bad(format!("expected a string, got {v}")), Ok)
}

fn arr(v: &Value) -> Result<&Vec<Value>, BadGraph> {
    v.as_array()
        .map_or_else(|| bad(format!("expected a list, got {v}")), Ok)
}

fn int_of(v: &Value) -> Result<i64, BadGraph> {
    v.as_i64()
        .map_or_else(|| bad(format!("expected an int, got {v}")), Ok)
}

fn float_of(v: &Value) -> Result<f64, BadGraph> {
    str_of(v)?
        .parse::<u64>()
        .map(f64::from_bits)
        .or_else(|_| bad("bad float bits"))
}

fn dtype_of(v: &Value) -> Result<DType, BadGraph> {
    let s = str_of(v)?;
    DType::from_torch_name(s).map_or_else(|| bad(format!("unknown dtype {s}")), Ok)
}

fn device_of(v: &Value) -> Result<Device, BadGraph> {
    let a = arr(v)?;
    if a.len() != 2 {
        return bad("bad device");
    }
    Ok(Device {
        kind: str_of(&a[0])?.to_string(),
        index: if a[1].is_null() {
            None
        } else {
            Some(int_of(&a[1])?)
        },
    })
}

fn arg_of(v: &Value, ids: &[NodeId]) -> Result<Arg, BadGraph> {
    let a = arr(v)?;
    let tag = str_of(a.first().unwrap_or(&Value::Null))?;
    let at = |i: usize| {
        a.get(i)
            .map_or_else(|| bad(format!("short {tag} argument")), Ok)
    };
    let items = |v: &Value| -> Result<Vec<Arg>, BadGraph> {
        arr(v)?.iter().map(|x| arg_of(x, ids)).collect()
    };
    Ok(match tag {
        "node" => {
            let i = int_of(at(1)?)? as usize;
            Arg::Node(
                *ids.get(i)
                    .map_or_else(|| bad("a node used before it is defined"), Ok)?,
            )
        }
        "none" => Arg::None,
        "bool" => Arg::Bool(at(1)?.as_bool().map_or_else(|| bad("bad bool"), Ok)?),
        "int" => Arg::Int(int_of(at(1)?)?),
        "float" => Arg::Float(float_of(at(1)?)?),
        "str" => Arg::Str(str_of(at(1)?)?.to_string()),
        "dtype" => Arg::DType(dtype_of(at(1)?)?),
        "device" => Arg::Device(device_of(at(1)?)?),
        "attr" => Arg::TorchAttr(str_of(at(1)?)?.to_string()),
        "tuple" => Arg::Tuple(items(at(1)?)?),
        "list" => Arg::List(items(at(1)?)?),
        "slice" => Arg::Slice(
            Box::new(arg_of(at(1)?, ids)?),
            Box::new(arg_of(at(2)?, ids)?),
            Box::new(arg_of(at(3)?, ids)?),
        ),
        "ellipsis" => Arg::Ellipsis,
        _ => return bad(format!("unknown argument kind {tag}")),
    })
}

fn sym_of(v: &Value) -> Result<fx::SymExpr, BadGraph> {
    let text = str_of(v)?;
    super::sym_text::parse(text).map_or_else(|| bad(format!("a malformed size {text:?}")), Ok)
}

fn dim_of(v: &Value) -> Result<Dim, BadGraph> {
    match v {
        Value::Object(o) => Ok(Dim::Sym(sym_of(o.get("sym").unwrap_or(&Value::Null))?)),
        _ => Ok(Dim::Known(int_of(v)?)),
    }
}

fn meta_of(v: &Value) -> Result<NodeMeta, BadGraph> {
    let a = arr(v)?;
    let tag = str_of(a.first().unwrap_or(&Value::Null))?;
    let at = |i: usize| {
        a.get(i)
            .map_or_else(|| bad(format!("short {tag} metadata")), Ok)
    };
    Ok(match tag {
        "tensor" => NodeMeta::Tensor(TensorMeta {
            dtype: dtype_of(at(1)?)?,
            device: device_of(at(2)?)?,
            sizes: arr(at(3)?)?.iter().map(dim_of).collect::<Result<_, _>>()?,
            strides: arr(at(4)?)?.iter().map(dim_of).collect::<Result<_, _>>()?,
            requires_grad: at(5)?.as_bool().unwrap_or(false),
        }),
        "tuple" => NodeMeta::Tuple(arr(at(1)?)?.iter().map(meta_of).collect::<Result<_, _>>()?),
        "int" => NodeMeta::Int(int_of(at(1)?)?),
        "float" => NodeMeta::Float(float_of(at(1)?)?),
        "bool" => NodeMeta::Bool(at(1)?.as_bool().unwrap_or(false)),
        "none" => NodeMeta::None,
        "symint" => NodeMeta::SymInt(sym_of(at(1)?)?),
        "symfloat" => NodeMeta::SymFloat(float_expr_of(at(1)?)?),
        _ => return bad(format!("unknown metadata kind {tag}")),
    })
}

/// Reads back a graph written by [`to_json`]; returns it with the node id of each position.
pub fn from_json(text: &str) -> Result<(Graph, Vec<NodeId>), BadGraph> {
    let v: Value = serde_json::from_str(text).or_else(|e| bad(format!("not JSON: {e}")))?;
    let mut g = Graph::new();
    let mut ids = Vec::new();
    for n in arr(v.get("nodes").unwrap_or(&Value::Null))? {
        let name = str_of(n.get("name").unwrap_or(&Value::Null))?;
        let meta = meta_of(n.get("meta").unwrap_or(&Value::Null))?;
        let kind = arr(n.get("kind").unwrap_or(&Value::Null))?;
        let tag = str_of(kind.first().unwrap_or(&Value::Null))?;
        let at = |i: usize| {
            kind.get(i)
                .map_or_else(|| bad(format!("short {tag} node")), Ok)
        };
        let id = match tag {
            "placeholder" => {
                let id = g.placeholder(name, meta);
                if let NodeKind::Placeholder { index } = g.node(id).kind {
                    if index as i64 != int_of(at(1)?)? {
                        return bad("placeholders out of order");
                    }
                }
                id
            }
            "call" => {
                let t = arr(at(1)?)?;
                let tname = str_of(t.get(1).unwrap_or(&Value::Null))?.to_string();
                let target = match str_of(t.first().unwrap_or(&Value::Null))? {
                    "function" => Target::Function(tname),
                    "method" => Target::Method(tname),
                    other => return bad(format!("unknown target kind {other}")),
                };
                let args = arr(at(2)?)?
                    .iter()
                    .map(|a| arg_of(a, &ids))
                    .collect::<Result<_, _>>()?;
                let mut kwargs = Vec::new();
                for kv in arr(at(3)?)? {
                    let kv = arr(kv)?;
                    if kv.len() != 2 {
                        return bad("bad keyword argument");
                    }
                    kwargs.push((str_of(&kv[0])?.to_string(), arg_of(&kv[1], &ids)?));
                }
                g.call(name, target, args, kwargs, meta)
            }
            "output" => {
                let values = arr(at(1)?)?
                    .iter()
                    .map(|a| arg_of(a, &ids))
                    .collect::<Result<_, _>>()?;
                g.output(values)
            }
            other => return bad(format!("unknown node kind {other}")),
        };
        if g.node(id).name != name {
            return bad(format!("node {name} came back as {}", g.node(id).name));
        }
        ids.push(id);
    }
    Ok((g, ids))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let mut g = Graph::new();
        let meta = NodeMeta::Tensor(TensorMeta::contiguous(
            DType::Float32,
            Device::cpu(),
            &[2, 3],
        ));
        let x = g.placeholder("x", meta.clone());
        let y = g.call(
            "add",
            Target::Function("torch.add".into()),
            vec![Arg::Node(x), Arg::Float(f64::NAN)],
            vec![("alpha".into(), Arg::Int(2))],
            meta.clone(),
        );
        let z = g.call(
            "view",
            Target::Method("view".into()),
            vec![Arg::Node(y), Arg::Tuple(vec![Arg::Int(-1), Arg::Ellipsis])],
            vec![],
            meta,
        );
        g.output(vec![Arg::Node(z)]);
        let (text, _) = to_json(&g);
        let (back, _) = from_json(&text).unwrap();
        assert_eq!(to_json(&back).0, text);
        assert!(from_json(&text[..text.len() - 3]).is_err());
    }

    #[test]
    fn symbolic_sizes_round_trip() {
        let s0 = fx::SymExpr::symbol(0);
        let n = s0.mul(&fx::SymExpr::symbol(1)).add_const(-1);
        let meta = NodeMeta::Tensor(TensorMeta {
            dtype: DType::Float32,
            device: Device::cpu(),
            sizes: vec![Dim::Sym(s0.clone()), Dim::Sym(n.clone()), Dim::Known(4)],
            strides: vec![Dim::Sym(n.mul_const(4)), Dim::Known(4), Dim::Known(1)],
            requires_grad: false,
        });
        let mut g = Graph::new();
        let x = g.placeholder("x", meta.clone());
        let size = g.call(
            "size",
            Target::Method("size".into()),
            vec![Arg::Node(x), Arg::Int(0)],
            vec![],
            NodeMeta::SymInt(s0.floordiv(&fx::SymExpr::constant(2))),
        );
        g.output(vec![Arg::Node(x), Arg::Node(size)]);
        let (text, _) = to_json(&g);
        let (back, ids) = from_json(&text).unwrap();
        assert_eq!(back.node(ids[0]).meta, meta);
        assert_eq!(to_json(&back).0, text);
    }
}
