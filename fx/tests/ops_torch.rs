//! The op catalog against real torch: `data/ops_cases.json` (written by `gen_ops_cases.py` from
//! eager CPU runs) records, per op, whether its result shares its input's storage, whether it
//! advances the random generator, and whether its in-place form is its out-of-place form
//! written back. Every flag in `fx::ops` must agree with those observations, and every flagged
//! row must have been observed.

use fx::ops::{flag, OPS};
use serde_json::Value as Json;

/// Rows that cannot be observed on a CPU-only build (`cuda`) or that name no torch op
/// (`index_select_view`, kept for the dead-code pass's conservative view of unknown methods).
const UNOBSERVED: &[&str] = &["cuda", "index_select_view"];

fn cases() -> serde_json::Map<String, Json> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/ops_cases.json");
    let text = std::fs::read_to_string(path).expect("run fx/tests/gen_ops_cases.py");
    let v: Json = serde_json::from_str(&text).unwrap();
    v["ops"].as_object().unwrap().clone()
}

#[test]
fn view_flags_match_torch() {
    let cases = cases();
    let mut errors = Vec::new();
    for op in OPS {
        let aliasing = op.flags & (flag::VIEW | flag::MAYBE_VIEW | flag::MULTI_VIEW);
        let seen = cases
            .get(op.name)
            .and_then(|c| c.get("view"))
            .and_then(|v| v.as_array());
        let Some(seen) = seen else {
            if aliasing != 0 && !UNOBSERVED.contains(&op.name) {
                errors.push(format!(
                    "{}: flagged as aliasing but never observed",
                    op.name
                ));
            }
            continue;
        };
        let seen: Vec<bool> = seen.iter().map(|b| b.as_bool().unwrap()).collect();
        let ok = if op.flags & (flag::VIEW | flag::MULTI_VIEW) != 0 {
            !seen.is_empty() && seen.iter().all(|b| *b)
        } else if op.flags & flag::MAYBE_VIEW != 0 {
            seen.iter().any(|b| *b)
        } else {
            seen.iter().all(|b| !*b)
        };
        if !ok {
            errors.push(format!(
                "{}: flags {:#x}, torch shares storage {seen:?}",
                op.name, op.flags
            ));
        }
    }
    assert!(errors.is_empty(), "{}", errors.join("\n"));
}

#[test]
fn random_flags_match_torch() {
    let cases = cases();
    let mut errors = Vec::new();
    for op in OPS {
        let flagged = op.flags & flag::RANDOM != 0;
        match cases.get(op.name).and_then(|c| c.get("random")) {
            Some(seen) if seen.as_bool() != Some(flagged) => {
                errors.push(format!("{}: random {flagged}, torch {seen}", op.name))
            }
            None if flagged => errors.push(format!("{}: random but never observed", op.name)),
            _ => {}
        }
        // An out-of-place twin never draws: `twin` is observed false for a random in-place op.
    }
    assert!(errors.is_empty(), "{}", errors.join("\n"));
}

#[test]
fn inplace_twin_flags_match_torch() {
    let cases = cases();
    let mut errors = Vec::new();
    for op in OPS {
        if op.flags & flag::META_INPLACE != 0 {
            continue;
        }
        let flagged = op.flags & flag::FUNCTIONAL_TWIN != 0;
        let seen = cases
            .get(op.name)
            .and_then(|c| c.get("twin"))
            .and_then(|t| t.as_bool());
        match seen {
            Some(false) if flagged => errors.push(format!(
                "{}: flagged as having an out-of-place twin, torch disagrees",
                op.name
            )),
            None if flagged => errors.push(format!("{}: twin never observed", op.name)),
            _ => {}
        }
    }
    assert!(errors.is_empty(), "{}", errors.join("\n"));
}

#[test]
fn the_data_is_current() {
    // Every observed op is a catalog row or one of the generator's controls.
    let cases = cases();
    for name in cases.keys() {
        assert!(
            fx::ops::op(name).is_some(),
            "{name} is observed but not in the catalog"
        );
    }
}
