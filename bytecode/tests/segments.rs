//! `Assembler::append_code_segments` on a function CPython 3.12 compiled: copying one inlined
//! comprehension (a nested one) and its cleanup handlers into other code keeps its jumps, its
//! exception-table entries (clipped, depths shifted, handlers the copied cleanups) and runs
//! through the stack-depth analysis.

mod common;

use bytecode::{decode, exception_table, index_at_offset, Assembler, Error, RawCode, Version};
use common::{load, shared_fixture};

fn comprehensions() -> (Vec<u8>, Vec<u8>, Vec<u8>, i32) {
    let corpus = load(&shared_fixture("fixtures-3.12.json"), Version::V3_12);
    let f = corpus
        .fixtures
        .iter()
        .find(|f| f.qualname == "comprehensions")
        .expect("the comprehensions fixture");
    (f.code(), f.exception_table(), f.line_table(), f.firstlineno)
}

#[test]
fn a_nested_comprehension_copied_with_its_cleanups() {
    let (code, table, lines, first) = comprehensions();
    let raw = RawCode {
        code: &code,
        exception_table: &table,
        line_table: &lines,
        first_lineno: first,
    };
    let ins = decode(Version::V3_12, &code).unwrap();
    let at = |offset: u32| index_at_offset(&ins, offset).unwrap();
    // `e = [[i * j for j in range(3)] for i in range(2)]`: LOAD_FAST_AND_CLEAR at 164 up to
    // the restores' end at 246; its cleanups at 290..300 and 300..312.
    let region = at(164)..at(246);
    let cleanups = [at(290)..at(300), at(300)..ins.len()];
    let mut asm = Assembler::new(Version::V3_12);
    // Stands for the stack below the copy: one item instead of the original's none.
    asm.emit("LOAD_CONST", 0).unwrap();
    asm.emit("LOAD_CONST", 0).unwrap();
    asm.emit("GET_ITER", 0).unwrap();
    let over = asm.new_label();
    asm.emit_jump("JUMP_FORWARD", over).unwrap();
    let mut segments = cleanups.to_vec();
    segments.push(region.clone());
    let labels = asm.append_code_segments(raw, &segments, 1, false).unwrap();
    asm.bind_to(over, labels[region.start]).unwrap();
    // The instruction after the region is not copied: the caller binds its label.
    assert_eq!(asm.label_index(labels[region.end]), None);
    asm.emit("RETURN_VALUE", 0).unwrap();
    let out = asm.assemble(first).unwrap();
    let copied = decode(Version::V3_12, &out.code).unwrap();
    let names: Vec<&str> = copied.iter().map(|i| i.opcode.name()).collect();
    assert_eq!(
        names.len(),
        4 + cleanups.iter().map(|c| c.len()).sum::<usize>() + region.len() + 1
    );
    // Every FOR_ITER still lands on an END_FOR.
    for i in copied.iter().filter(|i| i.opcode.name() == "FOR_ITER") {
        assert_eq!(copied[i.target.unwrap()].opcode.name(), "END_FOR");
    }
    // The region's four entries (the cleanup of the inner cleanup included), depth + 1, each
    // leading to the start of a copied cleanup block.
    let entries = exception_table::parse(&out.exception_table).unwrap();
    let mut depths: Vec<u32> = entries.iter().map(|e| e.depth).collect();
    depths.sort();
    assert_eq!(depths, vec![4, 4, 4, 7]);
    for e in &entries {
        let h = index_at_offset(&copied, e.target).unwrap();
        assert_eq!(copied[h].opcode.name(), "SWAP", "{e:?}");
        assert_eq!(copied[h + 1].opcode.name(), "POP_TOP", "{e:?}");
    }
}

#[test]
fn an_entry_whose_handler_is_not_copied() {
    let (code, table, lines, first) = comprehensions();
    let raw = RawCode {
        code: &code,
        exception_table: &table,
        line_table: &lines,
        first_lineno: first,
    };
    let ins = decode(Version::V3_12, &code).unwrap();
    let at = |offset: u32| index_at_offset(&ins, offset).unwrap();
    let region = at(164)..at(246);
    let mut asm = Assembler::new(Version::V3_12);
    let err = asm
        .append_code_segments(raw, std::slice::from_ref(&region), 0, false)
        .unwrap_err();
    assert!(matches!(err, Error::HandlerNotCopied { .. }), "{err}");
    assert!(asm.instructions().is_empty());
    // Protected by the caller: the entries are dropped instead.
    let mut asm = Assembler::new(Version::V3_12);
    asm.append_code_segments(raw, std::slice::from_ref(&region), 0, true)
        .unwrap();
    assert!(asm.exception_ranges().is_empty());
    // A shift that makes a depth negative.
    let mut asm = Assembler::new(Version::V3_12);
    let all = [at(290)..ins.len(), region];
    let err = asm.append_code_segments(raw, &all, -4, false).unwrap_err();
    assert!(matches!(err, Error::InvalidExceptionEntry { .. }), "{err}");
}
