//! Reading the generated cases of `gen_infer_cases.py` / `gen_ops_meta_cases.py`: inputs,
//! arguments in their JSON encoding, and results rendered as torch's are.

#![allow(dead_code)]

use fx::{Arg, DType, Device, Dim, Graph, NodeMeta, Target, TensorMeta};
use serde_json::Value as Json;

pub fn dtype(name: &str) -> DType {
    DType::from_torch_name(name).unwrap_or_else(|| panic!("dtype {name}"))
}

pub fn ints(v: &Json) -> Vec<i64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_i64().unwrap())
        .collect()
}

pub fn input_meta(spec: &Json) -> TensorMeta {
    TensorMeta {
        dtype: dtype(spec["dtype"].as_str().unwrap()),
        device: Device::cpu(),
        sizes: ints(&spec["sizes"]).into_iter().map(Dim::Known).collect(),
        strides: ints(&spec["strides"]).into_iter().map(Dim::Known).collect(),
        requires_grad: spec["requires_grad"].as_bool().unwrap(),
    }
}

pub fn decode(v: &Json, inputs: &[Arg]) -> Arg {
    match v {
        Json::Null => Arg::None,
        Json::Bool(b) => Arg::Bool(*b),
        Json::Number(n) if n.is_i64() => Arg::Int(n.as_i64().unwrap()),
        Json::Number(n) => Arg::Float(n.as_f64().unwrap()),
        Json::Object(o) => {
            let (k, x) = o.iter().next().unwrap();
            let all = |x: &Json| {
                x.as_array()
                    .unwrap()
                    .iter()
                    .map(|a| decode(a, inputs))
                    .collect()
            };
            match k.as_str() {
                "t" => inputs[x.as_u64().unwrap() as usize].clone(),
                "float" => Arg::Float(x.as_str().unwrap().parse().unwrap()),
                "tuple" => Arg::Tuple(all(x)),
                "list" => Arg::List(all(x)),
                "slice" => {
                    let parts: Vec<Arg> = all(x);
                    Arg::Slice(
                        Box::new(parts[0].clone()),
                        Box::new(parts[1].clone()),
                        Box::new(parts[2].clone()),
                    )
                }
                "dtype" => Arg::DType(dtype(x.as_str().unwrap())),
                "device" => Arg::Device(Device {
                    kind: x.as_str().unwrap().into(),
                    index: None,
                }),
                "str" => Arg::Str(x.as_str().unwrap().into()),
                "ellipsis" => Arg::Ellipsis,
                other => panic!("unknown arg encoding {other}"),
            }
        }
        other => panic!("unknown arg {other}"),
    }
}

/// Renders a result the way the expectations are written, for comparison and messages.
pub fn render(m: &NodeMeta) -> Json {
    match m {
        NodeMeta::Tensor(t) => {
            let known = |d: &[Dim]| -> Json {
                d.iter()
                    .map(|x| match x {
                        Dim::Known(v) => Json::from(*v),
                        Dim::Sym(s) => Json::from(s.to_string()),
                    })
                    .collect()
            };
            serde_json::json!({
                "sizes": known(&t.sizes),
                "strides": known(&t.strides),
                "dtype": t.dtype.torch_name(),
                "requires_grad": t.requires_grad,
            })
        }
        NodeMeta::Tuple(items) => {
            serde_json::json!({ "tuple": items.iter().map(render).collect::<Vec<_>>() })
        }
        NodeMeta::Int(i) => serde_json::json!({ "int": i }),
        NodeMeta::SymInt(e) => serde_json::json!({ "sym_int": e.to_string() }),
        NodeMeta::SymFloat(e) => serde_json::json!({ "sym_float": e.to_string() }),
        NodeMeta::Bool(b) => serde_json::json!({ "bool": b }),
        NodeMeta::Float(f) => serde_json::json!({ "float": f }),
        NodeMeta::None => Json::Null,
    }
}

pub fn same(got: &Json, expected: &Json, ignore_strides: bool) -> bool {
    if !ignore_strides {
        return got == expected;
    }
    let strip = |j: &Json| -> Json {
        let mut j = j.clone();
        strip_strides(&mut j);
        j
    };
    strip(got) == strip(expected)
}

pub fn strip_strides(j: &mut Json) {
    match j {
        Json::Object(o) => {
            o.remove("strides");
            o.values_mut().for_each(strip_strides);
        }
        Json::Array(items) => items.iter_mut().for_each(strip_strides),
        _ => {}
    }
}

pub fn check_devices(m: &NodeMeta) -> bool {
    match m {
        NodeMeta::Tensor(t) => t.device == Device::cpu(),
        NodeMeta::Tuple(items) => items.iter().all(check_devices),
        _ => true,
    }
}

/// The call a case describes: a graph holding its input tensors, the target and the arguments.
pub fn call_of(c: &Json) -> (Graph, Target, Vec<Arg>, Vec<(String, Arg)>) {
    let mut g = Graph::new();
    let inputs: Vec<Arg> = c["inputs"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
        .map(|(i, spec)| {
            Arg::Node(g.placeholder(&format!("x{i}"), NodeMeta::Tensor(input_meta(spec))))
        })
        .collect();
    let args: Vec<Arg> = c["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| decode(a, &inputs))
        .collect();
    let kwargs: Vec<(String, Arg)> = c["kwargs"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.clone(), decode(v, &inputs)))
        .collect();
    let name = c["target"][1].as_str().unwrap().to_string();
    let target = if c["target"][0].as_str() == Some("method") {
        Target::Method(name)
    } else {
        Target::Function(name)
    };
    (g, target, args, kwargs)
}
