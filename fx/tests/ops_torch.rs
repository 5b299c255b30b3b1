//! The op catalog against real torch: `data/ops_cases.json` (written by `gen_ops_cases.py` from
//! eager CPU runs) records, per op, whether its result shares its input's storage, whether it
//! advances the random generator, and whether its in-place form is its out-of-place form
//! written back. Every flag in `fx::ops` must agree with those observations, and every flagged
//! row must have been observed.

mod common;

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

/// The spelling bits of a row as the generator names them.
fn spelling_names(bits: u16) -> Vec<&'static str> {
    use fx::ops::spell::*;
    [
        (T, "T"),
        (TI, "TI"),
        (M, "M"),
        (A, "A"),
        (MI, "MI"),
        (F, "F"),
        (NN, "NN"),
        (S, "S"),
    ]
    .into_iter()
    .filter(|(b, _)| bits & b != 0)
    .map(|(_, n)| n)
    .collect()
}

#[test]
fn spellings_match_torch() {
    let cases = cases();
    let mut errors = Vec::new();
    for op in OPS {
        let Some(seen) = cases.get(op.name).and_then(|c| c.get("spellings")) else {
            errors.push(format!("{}: spellings never observed", op.name));
            continue;
        };
        let mut seen: Vec<&str> = seen
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        let mut ours = spelling_names(op.spellings);
        seen.sort();
        ours.sort();
        if seen != ours {
            errors.push(format!("{}: catalog {ours:?}, torch {seen:?}", op.name));
        }
    }
    assert!(errors.is_empty(), "{}", errors.join("\n"));
}

#[test]
fn signatures_match_torch() {
    let cases = cases();
    let mut errors = Vec::new();
    for op in OPS {
        let c = &cases[op.name];
        let aten = c["aten"].as_str().unwrap_or("");
        if aten != op.aten {
            errors.push(format!("{}: aten {:?}, torch {aten:?}", op.name, op.aten));
        }
        let seen: Option<Vec<&str>> = c["sig"]
            .as_array()
            .map(|a| a.iter().map(|v| v.as_str().unwrap()).collect());
        if seen.as_deref() != op.sig {
            errors.push(format!("{}: sig {:?}, torch {seen:?}", op.name, op.sig));
        }
    }
    assert!(errors.is_empty(), "{}", errors.join("\n"));
}

#[test]
fn shape_inplace_flags_match_torch() {
    let cases = cases();
    let mut errors = Vec::new();
    for op in OPS {
        let flagged = op.flags & flag::SHAPE_INPLACE != 0;
        if flagged && op.flags & flag::META_INPLACE == 0 {
            errors.push(format!("{}: SHAPE_INPLACE without META_INPLACE", op.name));
        }
        match cases[op.name].get("shape_inplace").map(|v| v.as_bool()) {
            Some(Some(seen)) if seen != flagged => errors.push(format!(
                "{}: shape in place {flagged}, torch {seen}",
                op.name
            )),
            None | Some(None) if flagged => {
                errors.push(format!("{}: shape in place never observed", op.name))
            }
            _ => {}
        }
    }
    assert!(errors.is_empty(), "{}", errors.join("\n"));
    assert!(fx::ops::changes_shape_in_place("t_"));
    assert!(!fx::ops::changes_shape_in_place("detach_"));
    assert!(!fx::ops::changes_shape_in_place("t"));
}

#[test]
fn aliases_share_their_ops_facts() {
    // An alias is one op under another name: what it aliases, draws and is must agree.
    let shared = flag::VIEW | flag::MAYBE_VIEW | flag::MULTI_VIEW | flag::RANDOM | flag::FACTORY;
    for (alias, canon) in fx::ops::ALIASES {
        let c = fx::ops::op(canon).unwrap_or_else(|| panic!("{canon} has no row"));
        let a = fx::ops::op(alias).unwrap_or_else(|| panic!("{alias} has no row"));
        assert_eq!(a.flags & shared, c.flags & shared, "{alias} ~ {canon}");
        assert_eq!(fx::ops::unalias(alias), *canon);
    }
}

/// Rows `fx::infer` leaves to meta tensors (answers `Unsupported` for every recorded call):
/// the tracer runs those on `meta`. A row leaves this list as soon as a rule answers for it.
const NOT_INFERRED: &[&str] = &[
    "acosh",
    "addcdiv",
    "addcmul",
    "adjoint",
    "alpha_dropout",
    "arange",
    "arctan2",
    "as_tensor",
    "asinh",
    "atan2",
    "atanh",
    "bernoulli",
    "broadcast_to",
    "celu",
    "copysign",
    "deg2rad",
    "diagonal",
    "digamma",
    "dropout1d",
    "dropout2d",
    "dropout3d",
    "dsplit",
    "elu",
    "embedding",
    "embedding_bag",
    "erfinv",
    "feature_alpha_dropout",
    "fill",
    "float_power",
    "frac",
    "gumbel_softmax",
    "hardsigmoid",
    "hardswish",
    "hardtanh",
    "hsplit",
    "hypot",
    "i0",
    "index_select",
    "isfinite",
    "isinf",
    "isnan",
    "isneginf",
    "isposinf",
    "leaky_relu",
    "lerp",
    "lgamma",
    "logit",
    "mish",
    "moveaxis",
    "movedim",
    "multinomial",
    "nan_to_num",
    "native_dropout",
    "nonzero",
    "normal",
    "poisson",
    "rad2deg",
    "randint_like",
    "ravel",
    "real",
    "relu6",
    "rrelu",
    "rsub",
    "scalar_tensor",
    "selu",
    "sgn",
    "sinc",
    "softplus",
    "square",
    "tensor",
    "tensor_split",
    "threshold",
    "tril",
    "triu",
    "unfold",
    "unique",
    "vsplit",
    "xlogy",
];

#[test]
fn output_metadata_matches_torch_for_every_op() {
    // `data/ops_meta_cases.json` (gen_ops_meta_cases.py): per catalog row and spelling, calls
    // on real tensors in several layouts, dtypes, broadcasts and dim arguments.
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/ops_meta_cases.json"
    );
    let data: Json = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let mut failures = Vec::new();
    let mut answered: std::collections::BTreeMap<&str, usize> = Default::default();
    for c in data["cases"].as_array().unwrap() {
        let (g, target, args, kwargs) = common::call_of(c);
        let op = c["op"].as_str().unwrap();
        let entry = answered.entry(op).or_default();
        match fx::infer(&g, &target, &args, &kwargs) {
            Err(fx::InferError::Unsupported) => {}
            Ok(m)
                if common::same(&common::render(&m), &c["expected"], false)
                    && common::check_devices(&m) =>
            {
                *entry += 1
            }
            got => failures.push(format!(
                "{target:?} {} args={} kwargs={} inputs={}\n    torch {}\n    infer {:?}",
                c["tag"],
                c["args"],
                c["kwargs"],
                c["inputs"],
                c["expected"],
                got.map(|m| common::render(&m))
            )),
        }
    }
    let unanswered: Vec<&str> = answered
        .iter()
        .filter(|(_, n)| **n == 0)
        .map(|(op, _)| *op)
        .collect();
    for op in &unanswered {
        if !NOT_INFERRED.contains(op) {
            failures.push(format!(
                "{op}: no case answered by fx::infer (list it in NOT_INFERRED)"
            ));
        }
    }
    for op in NOT_INFERRED {
        if answered.get(op).is_some_and(|n| *n > 0) {
            failures.push(format!("{op}: answered now, remove it from NOT_INFERRED"));
        }
    }
    let checked = answered.values().filter(|n| **n > 0).count();
    println!(
        "{checked} ops checked against torch, {} left to meta tensors",
        unanswered.len()
    );
    assert!(
        failures.is_empty(),
        "{} disagreements:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
