//! The checked-in opcode tables against the dumps of the real 3.11 and 3.12 interpreters they
//! were generated from (`gen/gen_opcodes.py`): a hand edit or a stale regeneration fails here.

mod common;

use std::collections::BTreeMap;

use bytecode::{ArgKind, Direction, Version};
use common::shared_fixture;
use serde::Deserialize;

#[derive(Deserialize)]
struct Dump {
    python: String,
    opmap: BTreeMap<String, u16>,
    hasjrel: Vec<u16>,
    hasconst: Vec<u16>,
    hasname: Vec<u16>,
    haslocal: Vec<u16>,
    hasfree: Vec<u16>,
    inline_cache_entries: Vec<u8>,
    cmp_op: Vec<String>,
    nb_ops: Vec<(String, String)>,
    /// `dis.stack_effect(op, oparg, jump=...)` keyed by `"oparg/jump"` (`None` for either).
    stack_effect: BTreeMap<String, BTreeMap<String, i64>>,
}

fn dump(version: Version) -> Dump {
    let path = shared_fixture(&format!("opcodes-{version}.json"));
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let dump: Dump = serde_json::from_str(&text).unwrap();
    assert!(dump.python.starts_with(&version.to_string()));
    dump
}

#[test]
fn tables_match_the_interpreter_dumps() {
    for version in Version::ALL {
        let d = dump(version);
        let ours: Vec<_> = version.opcodes().map(|o| o.name()).collect();
        assert_eq!(ours.len(), d.opmap.len(), "{version}: opcode count");
        for (name, &number) in &d.opmap {
            let op = version
                .opcode(name)
                .unwrap_or_else(|e| panic!("{version}: {e}"));
            let ctx = format!("{name} on {version}");
            assert_eq!(op.number(), number, "{ctx}");
            if number < 256 {
                assert_eq!(
                    op.caches(),
                    d.inline_cache_entries[number as usize],
                    "{ctx}: caches"
                );
            }
            assert_eq!(op.is_jump(), d.hasjrel.contains(&number), "{ctx}: jump");
            let kind = op.info().arg_kind;
            for (list, want) in [
                (&d.hasconst, ArgKind::Const),
                (&d.hasname, ArgKind::Name),
                (&d.haslocal, ArgKind::Local),
                (&d.hasfree, ArgKind::Free),
            ] {
                if list.contains(&number) {
                    assert_eq!(kind, want, "{ctx}: argument kind");
                }
            }
            // Every sampled stack effect.
            for (key, &effect) in d.stack_effect.get(name).into_iter().flatten() {
                let (arg, jump) = key.split_once('/').unwrap();
                let arg: u32 = arg.parse().unwrap_or(0);
                let edges: &[bool] = match jump {
                    "True" => &[true],
                    "False" => &[false],
                    _ => &[],
                };
                // RETURN_GENERATOR: dis says 0, but the frame resumes after it with the value
                // of the first send() pushed, which the next instruction pops.
                let correction = i64::from(name == "RETURN_GENERATOR");
                for &jump in edges {
                    let ours = op.stack_effect(arg, jump).unwrap();
                    assert_eq!(ours, effect + correction, "{ctx}: stack effect of {key}");
                }
            }
        }
        let cmp: Vec<&str> = version.compare_ops().to_vec();
        assert_eq!(cmp, d.cmp_op, "{version}: cmp_op");
        let nb: Vec<&str> = d.nb_ops.iter().map(|(_, s)| s.as_str()).collect();
        assert_eq!(version.binary_ops(), nb, "{version}: nb_ops");
    }
}

/// Facts of 3.12 that the tracer relies on, written out (from CPython 3.12's `Lib/opcode.py`
/// and `Include/internal/pycore_intrinsics.h`, and the 3.12.3 dump).
#[test]
fn facts_of_3_12() {
    let v = Version::V3_12;
    let caches = |name| v.opcode(name).unwrap().caches();
    // LOAD_ATTR: counter, version (2), keys_version (2), descr (4). LOAD_GLOBAL: counter, index,
    // module_keys_version, builtin_keys_version. CALL: counter, func_version (2).
    assert_eq!(caches("LOAD_ATTR"), 9);
    assert_eq!(caches("LOAD_GLOBAL"), 4);
    assert_eq!(caches("CALL"), 3);
    assert_eq!(caches("FOR_ITER"), 1);
    assert_eq!(caches("LOAD_SUPER_ATTR"), 1);
    assert_eq!(caches("BINARY_SLICE"), 0);
    for (name, number) in [
        ("END_FOR", 4),
        ("BINARY_SLICE", 26),
        ("STORE_SLICE", 27),
        ("RETURN_CONST", 121),
        ("LOAD_FAST_CHECK", 127),
        ("LOAD_SUPER_ATTR", 141),
        ("LOAD_FAST_AND_CLEAR", 143),
        ("CALL", 171),
        ("KW_NAMES", 172),
        ("CALL_INTRINSIC_1", 173),
        ("CALL_INTRINSIC_2", 174),
    ] {
        assert_eq!(v.opcode(name).unwrap().number(), number, "{name}");
    }
    for gone in ["PRECALL", "JUMP_IF_TRUE_OR_POP", "JUMP_IF_FALSE_OR_POP"] {
        assert!(v.opcode(gone).is_err(), "{gone}");
    }
    // LOAD_METHOD survives as a compiler pseudo-op only.
    assert!(v.opcode("LOAD_METHOD").unwrap().info().pseudo);
    // Conditional jumps go forward only; loops close with JUMP_BACKWARD.
    let j = v.opcode("POP_JUMP_IF_TRUE").unwrap().jump().unwrap();
    assert_eq!(j.direction, Direction::Forward);
    assert!(v.opcode("POP_JUMP_IF_TRUE").unwrap().flipped().is_none());
}
