//! The construct helpers against code CPython itself compiled: one version-blind program per
//! recorded function, assembled for 3.11 and for 3.12, must give each version's `co_code`
//! byte for byte. And the version-blind operand readers must agree with `dis` on every
//! instruction of both corpora; the exception tables with the `dis` listing of them.

mod common;

use bytecode::{
    decode, exception_table, Assembler, Comparison, Error, FunctionParts, Instruction, JumpIf,
    Label, ResumeAt, Version,
};
use common::{load, shared_fixture, CodeFixture, Corpus};

type Program = fn(&mut Assembler) -> bytecode::Result<()>;

fn corpus(version: Version) -> Corpus {
    load(
        &shared_fixture(&format!("fixtures-{version}.json")),
        version,
    )
}

fn fixture<'a>(corpus: &'a Corpus, qualname: &str) -> &'a CodeFixture {
    corpus
        .fixtures
        .iter()
        .find(|f| f.qualname == qualname)
        .unwrap_or_else(|| panic!("no fixture {qualname}"))
}

/// Assembles `program` for each version and compares it with the recorded code: all of it, or
/// its first `prefix` instructions' bytes when the versions' compilers go different ways after.
fn check(qualname: &str, program: Program, prefix: Option<usize>) {
    for version in Version::ALL {
        let corpus = corpus(version);
        let f = fixture(&corpus, qualname);
        let mut asm = Assembler::new(version);
        program(&mut asm).unwrap_or_else(|e| panic!("{qualname} on {version}: {e}"));
        let out = asm
            .assemble(f.firstlineno)
            .unwrap_or_else(|e| panic!("{qualname} on {version}: {e}"));
        let code = f.code();
        let (ours, theirs) = match prefix {
            Some(n) => {
                let end = out.offsets[n] as usize;
                (&out.code[..end], &code[..end.min(code.len())])
            }
            None => {
                assert_eq!(out.stack_size, f.stacksize, "{qualname} on {version}");
                (&out.code[..], &code[..])
            }
        };
        if ours != theirs {
            let names = |b: &[u8]| -> Vec<(u32, &str, u32)> {
                decode(version, b)
                    .map(|v| {
                        v.iter()
                            .map(|i| (i.offset, i.opcode.name(), i.arg))
                            .collect()
                    })
                    .unwrap_or_default()
            };
            panic!(
                "{qualname} on {version}: the helpers give\n{:?}\nCPython compiled\n{:?}",
                names(ours),
                names(theirs)
            );
        }
    }
}

/// `def methods(obj, lst)`: method calls and attribute reads.
fn methods(a: &mut Assembler) -> bytecode::Result<()> {
    a.resume(ResumeAt::Start)?;
    a.load_fast(1)?;
    a.load_attr(0, true)?; // lst.append
    a.load_const(1)?;
    a.call(1)?;
    a.pop_top()?;
    a.load_fast(1)?;
    a.load_attr(1, true)?; // lst.extend
    a.load_const(2)?;
    a.load_const(3)?;
    a.build_list(2)?;
    a.call(1)?;
    a.pop_top()?;
    a.load_const(4)?;
    a.load_attr(2, true)?; // 'a,b'.split
    a.load_const(5)?;
    a.call(1)?;
    a.store_fast(2)?;
    a.build_map(0)?;
    a.load_attr(3, true)?; // {}.get
    a.load_const(6)?;
    a.load_const(7)?;
    a.call(2)?;
    a.store_fast(3)?;
    a.load_fast(0)?;
    a.load_attr(4, false)?; // obj.attr
    a.load_attr(5, false)?; // .sub
    a.load_fast(2)?;
    a.load_fast(3)?;
    a.build_tuple(3)?;
    a.return_value()
}

/// `def calls(f, *args, **kwargs)`: positional, keyword and star calls.
fn calls(a: &mut Assembler) -> bytecode::Result<()> {
    a.resume(ResumeAt::Start)?;
    a.push_null()?;
    a.load_fast(0)?;
    a.load_const(1)?;
    a.call(1)?;
    a.pop_top()?;
    a.push_null()?;
    a.load_fast(0)?;
    for k in 1..=3 {
        a.load_const(k)?;
    }
    a.call_kw(3, 4)?; // x=3
    a.pop_top()?;
    a.push_null()?;
    a.load_fast(0)?;
    a.load_fast(1)?;
    a.call_function_ex(false)?;
    a.pop_top()?;
    a.push_null()?;
    a.load_fast(0)?;
    a.load_fast(1)?;
    a.build_map(0)?;
    a.load_fast(2)?;
    a.dict_merge(1)?;
    a.call_function_ex(true)?;
    a.pop_top()?;
    a.push_null()?;
    a.load_fast(0)?;
    a.load_const(1)?;
    a.build_list(1)?;
    a.load_fast(1)?;
    a.list_extend(1)?;
    a.list_to_tuple()?;
    a.load_const(5)?;
    a.load_const(2)?;
    a.build_map(1)?;
    a.load_fast(2)?;
    a.dict_merge(1)?;
    a.call_function_ex(true)?;
    a.pop_top()?;
    a.load_global(0, true)?; // max
    a.load_const(1)?;
    a.load_const(2)?;
    a.load_const(6)?;
    a.make_function(FunctionParts::default())?;
    a.call_kw(3, 7)?; // key=
    a.load_global(1, true)?; // sorted
    a.build_list(0)?;
    a.load_const(8)?;
    a.list_extend(1)?;
    a.load_const(9)?;
    a.call_kw(2, 10)?; // reverse=
    a.build_tuple(2)?;
    a.return_value()
}

/// `def globals_and_builtins(x)`: global reads and writes, module attributes.
fn globals_and_builtins(a: &mut Assembler) -> bytecode::Result<()> {
    a.resume(ResumeAt::Start)?;
    a.load_global(0, false)?; // G
    a.load_fast(0)?;
    a.binary_op("+")?;
    a.store_global(0)?;
    a.load_global(1, true)?; // len
    a.load_fast(0)?;
    a.build_list(1)?;
    a.call(1)?;
    a.load_global(2, true)?; // isinstance
    a.load_fast(0)?;
    a.load_global(3, false)?; // int
    a.call(2)?;
    a.load_global(4, true)?; // math
    a.load_attr(5, false)?; // .sqrt
    a.load_const(1)?;
    a.call(1)?;
    a.load_global(6, true)?; // operator
    a.load_attr(7, false)?; // .add
    a.load_const(2)?;
    a.load_const(3)?;
    a.call(2)?;
    a.build_tuple(4)?;
    a.return_value()
}

/// `def unpacking(t)`: slices, unpacking, displays with stars.
fn unpacking(a: &mut Assembler) -> bytecode::Result<()> {
    a.resume(ResumeAt::Start)?;
    a.load_fast(0)?;
    a.load_const(0)?;
    a.load_const(1)?;
    a.binary_slice()?; // t[:2]
    a.unpack_sequence(2)?;
    a.store_fast(1)?;
    a.store_fast(2)?;
    a.load_fast(0)?;
    a.unpack_ex(1, 0)?; // c, *d = t
    a.store_fast(3)?;
    a.store_fast(4)?;
    a.load_const(2)?;
    a.unpack_sequence(2)?;
    a.unpack_sequence(2)?;
    for k in 5..=7 {
        a.store_fast(k)?;
    }
    for k in 1..=7 {
        a.load_fast(k)?;
    }
    a.build_list(0)?;
    a.load_fast(0)?;
    a.list_extend(1)?;
    a.load_fast(0)?;
    a.list_extend(1)?;
    a.build_map(0)?;
    a.load_const(3)?;
    a.load_const(4)?;
    a.build_map(1)?;
    a.dict_update(1)?;
    a.load_const(5)?;
    a.load_const(1)?;
    a.build_map(1)?;
    a.dict_update(1)?;
    a.build_list(0)?;
    a.load_fast(0)?;
    a.list_extend(1)?;
    a.list_to_tuple()?;
    a.build_tuple(10)?;
    a.return_value()
}

/// `def slicing(xs)`: slice stores, deletes and reads, with and without a step.
fn slicing(a: &mut Assembler) -> bytecode::Result<()> {
    a.resume(ResumeAt::Start)?;
    a.load_const(1)?;
    a.build_list(1)?;
    a.load_fast(0)?;
    a.load_const(2)?;
    a.load_const(3)?;
    a.store_slice()?; // xs[1:3] = [0]
    a.load_fast(0)?;
    a.load_const(1)?;
    a.delete_subscr()?;
    for (start, stop) in [(2, 0), (0, 4)] {
        a.load_fast(0)?;
        a.load_const(start)?;
        a.load_const(stop)?;
        a.binary_slice()?;
    }
    for (start, stop, step) in [(0, 0, 4), (2, 5, 2)] {
        a.load_fast(0)?;
        a.load_const(start)?;
        a.load_const(stop)?;
        a.load_const(step)?;
        a.build_slice(true)?;
        a.binary_subscr()?;
    }
    a.load_fast(0)?;
    a.load_const(5)?;
    a.binary_subscr()?;
    a.build_tuple(5)?;
    a.return_value()
}

/// `def closure_outer(x)`: cells and a closure.
fn closure_outer(a: &mut Assembler) -> bytecode::Result<()> {
    a.make_cell(0)?;
    a.make_cell(2)?;
    a.resume(ResumeAt::Start)?;
    a.load_deref(0)?;
    a.load_const(1)?;
    a.binary_op("+")?;
    a.store_deref(2)?;
    a.load_closure(0)?;
    a.load_closure(2)?;
    a.build_tuple(2)?;
    a.load_const(2)?;
    a.make_function(FunctionParts::CLOSURE)?;
    a.store_fast(1)?;
    a.load_fast(1)?;
    a.return_value()
}

/// The six comparisons, `is`, `in` and their negations of `def compare(a, b)` (the chained
/// comparison after them compiles differently in 3.11 and 3.12).
fn compare(a: &mut Assembler) -> bytecode::Result<()> {
    a.resume(ResumeAt::Start)?;
    for op in Comparison::ALL {
        a.load_fast(0)?;
        a.load_fast(1)?;
        a.compare_op(op)?;
    }
    for invert in [false, true] {
        a.load_fast(0)?;
        a.load_fast(1)?;
        a.is_op(invert)?;
    }
    for invert in [false, true] {
        a.load_fast(0)?;
        a.load_fast(1)?;
        a.build_tuple(1)?;
        a.contains_op(invert)?;
    }
    a.load_const(1)?;
    a.load_fast(0)?;
    a.swap(2)?;
    a.copy(2)?;
    a.return_value()
}

/// The `for` loop of `def control_flow(n)`, with `continue`, `break` and `else` (the `while`
/// loop after it compiles differently in 3.11 and 3.12).
fn control_flow(a: &mut Assembler) -> bytecode::Result<()> {
    a.resume(ResumeAt::Start)?;
    a.load_const(1)?;
    a.store_fast(1)?; // total = 0
    a.load_global(0, true)?;
    a.load_fast(0)?;
    a.call(1)?;
    a.get_iter()?;
    let top = a.label_here();
    let (exit, skip, after) = (a.new_label(), a.new_label(), a.new_label());
    a.for_iter(exit)?;
    a.store_fast(2)?;
    a.load_fast(2)?;
    a.load_const(2)?;
    a.binary_op("%")?;
    a.load_const(1)?;
    a.compare_op(Comparison::Eq)?;
    let next = a.new_label();
    a.pop_jump_if(JumpIf::False, next)?;
    a.jump(top)?; // continue
    a.bind(next)?;
    a.load_fast(2)?;
    a.load_const(3)?;
    a.compare_op(Comparison::Gt)?;
    a.pop_jump_if(JumpIf::False, skip)?;
    a.pop_top()?; // break: drop the iterator
    a.jump(after)?;
    a.bind(skip)?;
    a.load_fast(1)?;
    a.load_fast(2)?;
    a.binary_op("+=")?;
    a.store_fast(1)?;
    a.jump(top)?;
    a.bind(exit)?;
    a.end_for()?;
    a.load_fast(1)?; // else: total -= 1
    a.load_const(4)?;
    a.binary_op("-=")?;
    a.store_fast(1)?;
    a.bind(after)?;
    a.load_fast(1)?;
    a.return_value()
}

#[test]
fn helpers_rebuild_compiled_code_of_both_versions() {
    check("methods", methods, None);
    check("calls", calls, None);
    check("globals_and_builtins", globals_and_builtins, None);
    check("unpacking", unpacking, None);
    check("slicing", slicing, None);
    check("closure_outer", closure_outer, None);
    // RESUME, 6 comparisons, 2 `is`, 2 `in`, then the chained comparison's first four.
    check("compare", compare, Some(1 + 18 + 6 + 8 + 4));
}

#[test]
fn loop_helpers_rebuild_a_for_loop_of_both_versions() {
    // Everything up to the `while` loop: 32 instructions on both versions (3.11's PRECALL
    // stands where 3.12's END_FOR does).
    for version in Version::ALL {
        let n = 32;
        let corpus = corpus(version);
        let f = fixture(&corpus, "control_flow");
        let mut asm = Assembler::new(version);
        control_flow(&mut asm).unwrap();
        let out = asm.assemble(f.firstlineno).unwrap();
        let end = out.offsets[n] as usize;
        assert_eq!(
            out.code[..end],
            f.code()[..end],
            "control_flow on {version}"
        );
    }
}

#[test]
fn each_construct_is_spelled_for_its_version() {
    fn spelled(version: Version, build: impl Fn(&mut Assembler, Label)) -> Vec<(String, u32)> {
        let mut asm = Assembler::new(version);
        let l = asm.new_label();
        build(&mut asm, l);
        asm.instructions()
            .iter()
            .map(|i| {
                let arg = match i.arg {
                    bytecode::Arg::Value(v) => v,
                    bytecode::Arg::Jump(_) => u32::MAX,
                };
                (i.opcode.name().to_owned(), arg)
            })
            .collect()
    }
    let both = |build: &dyn Fn(&mut Assembler, Label),
                v311: &[(&str, u32)],
                v312: &[(&str, u32)]| {
        for (version, want) in [(Version::V3_11, v311), (Version::V3_12, v312)] {
            let got = spelled(version, build);
            let want: Vec<(String, u32)> = want.iter().map(|(n, a)| (n.to_string(), *a)).collect();
            assert_eq!(got, want, "on {version}");
        }
    };
    const J: u32 = u32::MAX;
    both(
        &|a, _| a.call(2).unwrap(),
        &[("PRECALL", 2), ("CALL", 2)],
        &[("CALL", 2)],
    );
    both(
        &|a, _| a.call_kw(3, 7).unwrap(),
        &[("KW_NAMES", 7), ("PRECALL", 3), ("CALL", 3)],
        &[("KW_NAMES", 7), ("CALL", 3)],
    );
    both(
        &|a, _| a.load_attr(5, true).unwrap(),
        &[("LOAD_METHOD", 5)],
        &[("LOAD_ATTR", 11)],
    );
    both(
        &|a, _| a.load_attr(5, false).unwrap(),
        &[("LOAD_ATTR", 5)],
        &[("LOAD_ATTR", 10)],
    );
    both(
        &|a, _| a.load_global(3, true).unwrap(),
        &[("LOAD_GLOBAL", 7)],
        &[("LOAD_GLOBAL", 7)],
    );
    both(
        &|a, _| a.return_const(2).unwrap(),
        &[("LOAD_CONST", 2), ("RETURN_VALUE", 0)],
        &[("RETURN_CONST", 2)],
    );
    both(
        &|a, _| a.binary_slice().unwrap(),
        &[("BUILD_SLICE", 2), ("BINARY_SUBSCR", 0)],
        &[("BINARY_SLICE", 0)],
    );
    both(
        &|a, _| a.store_slice().unwrap(),
        &[("BUILD_SLICE", 2), ("STORE_SUBSCR", 0)],
        &[("STORE_SLICE", 0)],
    );
    both(
        &|a, _| a.load_fast_check(4).unwrap(),
        &[("LOAD_FAST", 4)],
        &[("LOAD_FAST_CHECK", 4)],
    );
    both(
        &|a, _| a.unary(bytecode::Unary::Positive).unwrap(),
        &[("UNARY_POSITIVE", 0)],
        &[("CALL_INTRINSIC_1", 5)],
    );
    both(&|a, _| a.end_for().unwrap(), &[], &[("END_FOR", 0)]);
    both(
        &|a, l| a.pop_jump_if(JumpIf::NotNone, l).unwrap(),
        &[("POP_JUMP_FORWARD_IF_NOT_NONE", J)],
        &[("POP_JUMP_IF_NOT_NONE", J)],
    );
    both(
        &|a, l| a.jump_if_or_pop(true, l).unwrap(),
        &[("JUMP_IF_TRUE_OR_POP", J)],
        &[("COPY", 1), ("POP_JUMP_IF_TRUE", J), ("POP_TOP", 0)],
    );
    both(
        &|a, _| a.rot_n(3).unwrap(),
        &[("SWAP", 3), ("SWAP", 2)],
        &[("SWAP", 3), ("SWAP", 2)],
    );
    both(
        &|a, _| a.compare_op(Comparison::Ne).unwrap(),
        &[("COMPARE_OP", 3)],
        &[("COMPARE_OP", 55)],
    );

    // What a version cannot say is an error, not an approximation.
    let mut asm = Assembler::new(Version::V3_11);
    assert!(matches!(
        asm.load_fast_and_clear(0),
        Err(Error::NotInVersion {
            version: Version::V3_11,
            ..
        })
    ));
    assert!(matches!(
        asm.load_super_attr(0, true, false),
        Err(Error::NotInVersion { .. })
    ));
    assert!(matches!(
        asm.intrinsic_1(bytecode::Intrinsic1::StopIterationError),
        Err(Error::NotInVersion { .. })
    ));
    assert!(matches!(
        asm.binary_op("<>"),
        Err(Error::UnknownOperator { .. })
    ));
    assert!(asm.instructions().is_empty());
    let mut asm = Assembler::new(Version::V3_12);
    asm.load_super_attr(3, true, false).unwrap();
    asm.load_fast_and_clear(1).unwrap();
    let names: Vec<_> = asm.instructions().iter().map(|i| i.opcode.name()).collect();
    assert_eq!(names, ["LOAD_SUPER_ATTR", "LOAD_FAST_AND_CLEAR"]);
    assert_eq!(asm.instructions()[0].arg, bytecode::Arg::Value(13));
}

/// A 3.12 conditional jump cannot go backward: the assembler says so instead of writing a
/// forward jump.
#[test]
fn backward_conditional_jump_is_refused_on_3_12_only() {
    for version in Version::ALL {
        let mut asm = Assembler::new(version);
        asm.resume(ResumeAt::Start).unwrap();
        let top = asm.label_here();
        asm.load_fast(0).unwrap();
        asm.pop_jump_if(JumpIf::True, top).unwrap();
        asm.return_const(0).unwrap();
        let result = asm.assemble(1);
        if version.spelling().directional_conditional_jumps {
            let code = result.unwrap().code;
            let insts = decode(version, &code).unwrap();
            assert_eq!(insts[2].opcode.name(), "POP_JUMP_BACKWARD_IF_TRUE");
            assert_eq!(insts[2].target, Some(1));
        } else {
            assert!(matches!(result, Err(Error::NoJumpInDirection { .. })));
        }
    }
}

/// `name_index`, `pushes_null` and `comparison` read every recorded instruction as `dis` does.
#[test]
fn operand_readers_agree_with_dis() {
    for version in Version::ALL {
        let corpus = corpus(version);
        let (mut seen, mut loops) = (0, 0);
        for f in &corpus.fixtures {
            let names = &f.names;
            let insts = decode(version, &f.code()).unwrap();
            for inst in &insts {
                let dis = f
                    .instructions
                    .iter()
                    .find(|d| d.offset == inst.opcode_offset())
                    .unwrap();
                check_operands(inst, names, &dis.argrepr, version, &f.qualname);
                if let Some(exit) = inst.for_iter_exit() {
                    // The loop's exit: 3.12's FOR_ITER lands on END_FOR and runs what follows.
                    let landed = insts[inst.target.unwrap()].opcode.name();
                    let ends_with_end_for = version.spelling().end_for;
                    assert_eq!(landed == "END_FOR", ends_with_end_for, "{}", f.qualname);
                    assert_eq!(exit, inst.target.unwrap() + usize::from(ends_with_end_for));
                    loops += 1;
                }
                seen += usize::from(inst.name_index().is_some());
            }
        }
        assert!(seen > 50, "only {seen} named instructions on {version}");
        assert!(loops >= 3, "only {loops} loops on {version}");
    }
}

fn check_operands(inst: &Instruction, names: &[String], argrepr: &str, v: Version, q: &str) {
    let ctx = format!("{q} on {v}: {} {}", inst.opcode.name(), inst.arg);
    // 3.11 opcodes that became intrinsics, by the intrinsic's name without its prefix.
    let renamed = |op: &str| if op == "PRINT_EXPR" { "PRINT" } else { op }.to_owned();
    match (inst.opcode.name(), inst.intrinsic_1()) {
        ("CALL_INTRINSIC_1", f) => assert_eq!(f.map(|f| f.name()), Some(argrepr), "{ctx}"),
        (op, Some(f)) => assert_eq!(f.name(), format!("INTRINSIC_{}", renamed(op)), "{ctx}"),
        (op, None) => assert!(
            !matches!(
                op,
                "LIST_TO_TUPLE" | "UNARY_POSITIVE" | "PRINT_EXPR" | "IMPORT_STAR"
            ),
            "{ctx}"
        ),
    }
    if let Some(k) = inst.name_index() {
        let name = &names[k as usize];
        // dis writes `NULL + name`, `NULL|self + name` or the bare name.
        let shown = argrepr.rsplit(" + ").next().unwrap();
        assert_eq!(shown, name, "{ctx}");
        if matches!(
            inst.opcode.name(),
            "LOAD_GLOBAL" | "LOAD_ATTR" | "LOAD_SUPER_ATTR"
        ) {
            assert_eq!(inst.pushes_null(), argrepr.contains("NULL"), "{ctx}");
        }
    }
    if let Some(c) = inst.comparison() {
        assert_eq!(c.symbol(), argrepr, "{ctx}");
    } else {
        assert_ne!(inst.opcode.name(), "COMPARE_OP", "{ctx}");
    }
}

/// The exception table as `dis` lists it: `start to last -> target [depth] lasti`, where
/// `last` is the offset of the last covered code unit.
#[test]
fn exception_tables_match_the_dis_listing() {
    for version in Version::ALL {
        let corpus = corpus(version);
        let mut entries_seen = 0;
        for f in &corpus.fixtures {
            let listed: Vec<(u32, u32, u32, u32, bool)> = f
                .dis
                .split_once("ExceptionTable:\n")
                .map(|(_, table)| table.lines().filter_map(parse_dis_entry).collect())
                .unwrap_or_default();
            let ours: Vec<_> = exception_table::parse(&f.exception_table())
                .unwrap()
                .iter()
                .map(|e| (e.start, e.end - 2, e.target, e.depth, e.lasti))
                .collect();
            assert_eq!(ours, listed, "{} on {version}", f.qualname);
            entries_seen += ours.len();
        }
        assert!(entries_seen >= 10, "{entries_seen} entries on {version}");
    }
}

fn parse_dis_entry(line: &str) -> Option<(u32, u32, u32, u32, bool)> {
    let (range, rest) = line.trim().split_once(" -> ")?;
    let (start, last) = range.split_once(" to ")?;
    let (target, rest) = rest.split_once(" [")?;
    let (depth, rest) = rest.split_once(']')?;
    Some((
        start.parse().ok()?,
        last.parse().ok()?,
        target.parse().ok()?,
        depth.parse().ok()?,
        rest.trim() == "lasti",
    ))
}
