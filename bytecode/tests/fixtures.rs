//! Every code object recorded from CPython 3.11 and 3.12: decoding matches `dis`, tables
//! re-encode byte for byte, the stack depth matches `co_stacksize`, and
//! decode → labelled → assemble → decode is the identity.

mod common;

use std::collections::BTreeSet;
use std::path::Path;

use bytecode::{
    decode, exception_table, line_table, stack_depth, Arg, Assembler, Instruction, RawCode, Version,
};
use common::{load, local_fixture, shared_fixture, CodeFixture};

type Check = fn(Version, &CodeFixture) -> Result<(), String>;

/// Runs `check` over a corpus and reports every failing code object at once.
fn run(version: Version, path: &Path, check: Check) {
    let corpus = load(path, version);
    let failures: Vec<String> = corpus
        .fixtures
        .iter()
        .enumerate()
        .filter_map(|(i, f)| {
            check(version, f)
                .err()
                .map(|e| format!("#{i} {}: {e}", f.qualname))
        })
        .collect();
    assert!(
        failures.is_empty(),
        "{} of {} code objects in {} fail:\n{}",
        failures.len(),
        corpus.fixtures.len(),
        path.display(),
        failures.join("\n")
    );
}

fn shared(version: Version) -> std::path::PathBuf {
    shared_fixture(&format!("fixtures-{version}.json"))
}

fn err(e: bytecode::Error) -> String {
    e.to_string()
}

/// One row per code unit, as `dis` lists them: (offset, opname, opcode, arg).
fn code_units(code: &[u8], insts: &[Instruction]) -> Vec<(u32, String, u16, Option<u32>)> {
    let mut rows = Vec::new();
    for inst in insts {
        let ext = inst.opcode.version().extended_arg();
        let mut partial = 0u32;
        for k in 0..u32::from(inst.extended_args) {
            let offset = inst.offset + 2 * k;
            partial = (partial << 8) | u32::from(code[offset as usize + 1]);
            rows.push((offset, ext.name().to_owned(), ext.number(), Some(partial)));
        }
        let op = inst.opcode;
        rows.push((
            inst.opcode_offset(),
            op.name().into(),
            op.number(),
            inst.dis_arg(),
        ));
        for c in 1..=u32::from(op.caches()) {
            let offset = inst.opcode_offset() + 2 * c;
            let arg = u32::from(code[offset as usize + 1]);
            rows.push((offset, "CACHE".into(), 0, Some(arg)));
        }
    }
    rows
}

fn check_decode(version: Version, f: &CodeFixture) -> Result<(), String> {
    let code = f.code();
    let insts = decode(version, &code).map_err(err)?;
    let ours = code_units(&code, &insts);
    let theirs: Vec<_> = f
        .instructions
        .iter()
        .map(|i| (i.offset, i.opname.clone(), i.opcode, i.arg))
        .collect();
    if ours != theirs {
        let at = ours.iter().zip(&theirs).position(|(a, b)| a != b);
        return Err(format!(
            "decoded units differ at row {at:?}: ours {:?} vs dis {:?} ({} vs {} rows)",
            at.and_then(|k| ours.get(k)),
            at.and_then(|k| theirs.get(k)),
            ours.len(),
            theirs.len()
        ));
    }
    // Jump targets: dis prints them as "to N".
    for inst in &insts {
        let Some(t) = inst.target else { continue };
        let dis = f
            .instructions
            .iter()
            .find(|d| d.offset == inst.opcode_offset())
            .ok_or("jump missing from dis")?;
        let expected = format!("to {}", insts[t].offset);
        if dis.argrepr != expected {
            return Err(format!(
                "jump at {}: dis says {:?}, we resolved {expected:?}",
                dis.offset, dis.argrepr
            ));
        }
    }
    // dis marks the targets of jumps (not those of exception handlers).
    let targets: BTreeSet<u32> = insts
        .iter()
        .filter_map(|i| i.target.map(|t| insts[t].offset))
        .collect();
    let marked: BTreeSet<u32> = f
        .instructions
        .iter()
        .filter(|d| d.is_jump_target)
        .map(|d| d.offset)
        .collect();
    if targets != marked {
        return Err(format!("jump targets {targets:?}, dis marks {marked:?}"));
    }
    Ok(())
}

fn check_tables(_: Version, f: &CodeFixture) -> Result<(), String> {
    let exc = f.exception_table();
    let entries = exception_table::parse(&exc).map_err(err)?;
    if exception_table::encode(&entries).map_err(err)? != exc {
        return Err("exception table does not re-encode to the same bytes".into());
    }
    let lines = f.line_table();
    let entries = line_table::parse(&lines, f.firstlineno).map_err(err)?;
    if line_table::encode(&entries, f.firstlineno).map_err(err)? != lines {
        return Err("line table does not re-encode to the same bytes".into());
    }
    let positions = line_table::positions_by_unit(&entries);
    if positions.len() != f.instructions.len() {
        return Err(format!(
            "line table covers {} units, code has {}",
            positions.len(),
            f.instructions.len()
        ));
    }
    for (p, d) in positions.iter().zip(&f.instructions) {
        if p.line != d.line {
            return Err(format!(
                "line at {}: ours {:?}, dis {:?}",
                d.offset, p.line, d.line
            ));
        }
    }
    Ok(())
}

fn check_stack_depth(version: Version, f: &CodeFixture) -> Result<(), String> {
    let insts = decode(version, &f.code()).map_err(err)?;
    let table = exception_table::parse(&f.exception_table()).map_err(err)?;
    let depth = stack_depth(&insts, &table).map_err(err)?;
    if depth != f.stacksize {
        return Err(format!("stack depth {depth}, co_stacksize {}", f.stacksize));
    }
    Ok(())
}

fn check_round_trip(version: Version, f: &CodeFixture) -> Result<(), String> {
    let (code, exc, lines) = (f.code(), f.exception_table(), f.line_table());
    let raw = RawCode {
        code: &code,
        exception_table: &exc,
        line_table: &lines,
        first_lineno: f.firstlineno,
    };
    let asm = Assembler::from_code(version, raw).map_err(err)?;
    let out = asm.assemble(f.firstlineno).map_err(err)?;
    let before = decode(version, &code).map_err(err)?;
    let after = decode(version, &out.code).map_err(err)?;
    let shape = |insts: &[Instruction]| -> Vec<_> {
        insts
            .iter()
            .map(|i| (i.opcode, i.target.map_or(Some(i.arg), |_| None), i.target))
            .collect()
    };
    if shape(&before) != shape(&after) {
        return Err("instructions changed through the assembler".into());
    }
    if asm
        .instructions()
        .iter()
        .zip(&before)
        .any(|(l, d)| matches!(l.arg, Arg::Jump(_)) != d.target.is_some())
    {
        return Err("labelled form lost or invented a jump".into());
    }
    if out.code != code {
        return Err("co_code is not reproduced byte for byte".into());
    }
    if out.exception_table != exc {
        return Err("co_exceptiontable is not reproduced byte for byte".into());
    }
    if out.stack_size != f.stacksize {
        return Err(format!("assembled stack size {}", out.stack_size));
    }
    let positions =
        |b: &[u8]| line_table::parse(b, f.firstlineno).map(|e| line_table::positions_by_unit(&e));
    if positions(&out.line_table).map_err(err)? != positions(&lines).map_err(err)? {
        return Err("positions changed through the assembler".into());
    }
    if out.line_table != lines {
        return Err("co_linetable is not reproduced byte for byte".into());
    }
    Ok(())
}

macro_rules! corpus_tests {
    ($($name:ident: $version:expr, $path:expr, $check:expr;)*) => {
        $(#[test] fn $name() { run($version, &$path, $check); })*
    };
}

corpus_tests! {
    decode_matches_dis_3_11: Version::V3_11, shared(Version::V3_11), check_decode;
    decode_matches_dis_3_12: Version::V3_12, shared(Version::V3_12), check_decode;
    tables_reencode_3_11: Version::V3_11, shared(Version::V3_11), check_tables;
    tables_reencode_3_12: Version::V3_12, shared(Version::V3_12), check_tables;
    stack_depth_matches_3_11: Version::V3_11, shared(Version::V3_11), check_stack_depth;
    stack_depth_matches_3_12: Version::V3_12, shared(Version::V3_12), check_stack_depth;
    assembler_round_trip_3_11: Version::V3_11, shared(Version::V3_11), check_round_trip;
    assembler_round_trip_3_12: Version::V3_12, shared(Version::V3_12), check_round_trip;
    extended_args_decode_3_11: Version::V3_11, extended_args(), check_decode;
    extended_args_tables_3_11: Version::V3_11, extended_args(), check_tables;
    extended_args_stack_depth_3_11: Version::V3_11, extended_args(), check_stack_depth;
    extended_args_round_trip_3_11: Version::V3_11, extended_args(), check_round_trip;
}

/// Code big enough to need EXTENDED_ARG, recorded from 3.11 (`gen/dump_corpus.py`).
fn extended_args() -> std::path::PathBuf {
    local_fixture("extended_args-3.11.json")
}

/// Any corpus in the same format: `BYTECODE_CORPUS=path.json BYTECODE_VERSION=3.12
/// cargo test -p bytecode --release --test fixtures -- --ignored`.
#[test]
#[ignore = "needs BYTECODE_CORPUS pointing at a corpus made by gen/dump_corpus.py"]
fn external_corpus() {
    let path = std::env::var("BYTECODE_CORPUS").expect("set BYTECODE_CORPUS");
    let version = match std::env::var("BYTECODE_VERSION").as_deref() {
        Ok("3.12") => Version::V3_12,
        _ => Version::V3_11,
    };
    let checks: [Check; 4] = [
        check_decode,
        check_tables,
        check_stack_depth,
        check_round_trip,
    ];
    for check in checks {
        run(version, Path::new(&path), check);
    }
}
