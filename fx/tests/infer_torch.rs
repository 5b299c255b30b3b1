//! `fx::infer` against real torch: every case in `data/infer_cases.json` (written by
//! `gen_infer_cases.py` from eager CPU runs) must be reproduced exactly, or refused with
//! `Unsupported`. Refusals are allowed but counted, and only a small share may be refused.

use std::collections::BTreeMap;

mod common;

use common::{call_of, check_devices, render, same};
use fx::{infer, InferError};
use serde_json::Value as Json;

/// The share of cases that may answer `Unsupported`.
const MAX_UNSUPPORTED: f64 = 0.08;

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
        let (g, target, args, kwargs) = call_of(c);
        let kind = c["target"][0].as_str().unwrap();
        let name = c["target"][1].as_str().unwrap().to_string();
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
