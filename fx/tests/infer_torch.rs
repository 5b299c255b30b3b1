//! `fx::infer` against real torch: every case in `data/infer_cases.json` (written by
//! `gen_infer_cases.py` from eager CPU runs) must be reproduced exactly, or refused with
//! `Unsupported`. Refusals are allowed but counted, and only a small share may be refused.

use std::collections::BTreeMap;

use fx::{infer, Arg, DType, Device, Dim, Graph, InferError, NodeMeta, Target, TensorMeta};
use serde_json::Value as Json;

/// The share of cases that may answer `Unsupported`.
const MAX_UNSUPPORTED: f64 = 0.08;

fn dtype(name: &str) -> DType {
    DType::from_torch_name(name).unwrap_or_else(|| panic!("dtype {name}"))
}

fn ints(v: &Json) -> Vec<i64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_i64().unwrap())
        .collect()
}

fn input_meta(spec: &Json) -> TensorMeta {
    TensorMeta {
        dtype: dtype(spec["dtype"].as_str().unwrap()),
        device: Device::cpu(),
        sizes: ints(&spec["sizes"]).into_iter().map(Dim::Known).collect(),
        strides: ints(&spec["strides"]).into_iter().map(Dim::Known).collect(),
        requires_grad: spec["requires_grad"].as_bool().unwrap(),
    }
}

fn decode(v: &Json, inputs: &[Arg]) -> Arg {
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
fn render(m: &NodeMeta) -> Json {
    match m {
        NodeMeta::Tensor(t) => {
            let known = |d: &[Dim]| -> Json {
                d.iter()
                    .map(|x| match x {
                        Dim::Known(v) => Json::from(*v),
                        Dim::Sym(s) => Json::from(format!("s{s}")),
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
        NodeMeta::Bool(b) => serde_json::json!({ "bool": b }),
        NodeMeta::Float(f) => serde_json::json!({ "float": f }),
        NodeMeta::None => Json::Null,
    }
}

fn same(got: &Json, expected: &Json, ignore_strides: bool) -> bool {
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

fn strip_strides(j: &mut Json) {
    match j {
        Json::Object(o) => {
            o.remove("strides");
            o.values_mut().for_each(strip_strides);
        }
        Json::Array(items) => items.iter_mut().for_each(strip_strides),
        _ => {}
    }
}

fn check_devices(m: &NodeMeta) -> bool {
    match m {
        NodeMeta::Tensor(t) => t.device == Device::cpu(),
        NodeMeta::Tuple(items) => items.iter().all(check_devices),
        _ => true,
    }
}

#[derive(Default)]
struct Tally {
    exact: usize,
    errors_matched: usize,
    unsupported: usize,
    failed: usize,
}

#[test]
fn infer_matches_torch() {
    // INFER_CASES points at another generated file (a fuzzing run of the generator).
    let path = std::env::var("INFER_CASES").unwrap_or_else(|_| {
        concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/infer_cases.json").to_string()
    });
    let data: Json = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let cases = data["cases"].as_array().unwrap();
    let mut by_tag: BTreeMap<String, Tally> = BTreeMap::new();
    let mut total = Tally::default();
    let mut failures = Vec::new();
    let mut unsupported_examples: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for c in cases {
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
        let kind = c["target"][0].as_str().unwrap();
        let name = c["target"][1].as_str().unwrap().to_string();
        let target = if kind == "method" {
            Target::Method(name.clone())
        } else {
            Target::Function(name.clone())
        };
        let expected = &c["expected"];
        // The CPU kernel is missing, so the op fails there whatever its layout; meta tensors
        // stand in for the dtype and shape only.
        let kernel_gap = c.get("note").and_then(Json::as_str) == Some("kernel_gap");
        let got = infer(&g, &target, &args, &kwargs);
        let tally = by_tag.entry(name.clone()).or_default();
        let describe = || {
            format!(
                "case {} {} {} args={} kwargs={} inputs={}",
                c["id"], kind, name, c["args"], c["kwargs"], c["inputs"]
            )
        };
        match (&got, expected.get("error")) {
            (Err(InferError::Unsupported), _) => {
                tally.unsupported += 1;
                total.unsupported += 1;
                let examples = unsupported_examples.entry(name.clone()).or_default();
                if examples.len() < 2 {
                    examples.push(describe());
                }
            }
            (Err(InferError::Invalid(_)), Some(_)) => {
                tally.errors_matched += 1;
                total.errors_matched += 1;
            }
            (Ok(m), None) if same(&render(m), expected, kernel_gap) && check_devices(m) => {
                tally.exact += 1;
                total.exact += 1;
            }
            (got, _) => {
                tally.failed += 1;
                total.failed += 1;
                let got = match got {
                    Ok(m) => render(m).to_string(),
                    Err(e) => format!("error: {e}"),
                };
                failures.push(format!(
                    "{}\n    expected {expected}\n    got      {got}",
                    describe()
                ));
            }
        }
    }
    println!("target: exact / errors / unsupported / failed");
    for (tag, t) in &by_tag {
        if t.unsupported + t.failed > 0 {
            println!(
                "  {tag}: {} / {} / {} / {}",
                t.exact, t.errors_matched, t.unsupported, t.failed
            );
        }
    }
    println!("unsupported examples:");
    for (name, ex) in &unsupported_examples {
        for e in ex {
            println!("  [{name}] {e}");
        }
    }
    for f in failures.iter().take(400) {
        println!("FAIL {f}");
    }
    let n = cases.len();
    println!(
        "{n} cases: {} exact, {} errors matched, {} unsupported ({:.1}%), {} failed",
        total.exact,
        total.errors_matched,
        total.unsupported,
        100.0 * total.unsupported as f64 / n as f64,
        total.failed
    );
    assert_eq!(
        total.failed, 0,
        "{} cases disagree with torch",
        total.failed
    );
    assert!(
        (total.unsupported as f64) <= MAX_UNSUPPORTED * n as f64,
        "too many unsupported cases: {} of {n}",
        total.unsupported
    );
}
