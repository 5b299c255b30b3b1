//! Property tests: the tables round-trip, the assembler's output decodes back to what it was
//! given (jumps far enough to need EXTENDED_ARG included), and no input bytes cause a panic.

use bytecode::{
    decode, exception_table, line_table, Assembler, Error, ExceptionRange, ExceptionTableEntry,
    Label, LineTableWriter, Position, RawCode, Version,
};
use proptest::prelude::*;

fn version() -> impl Strategy<Value = Version> {
    prop_oneof![Just(Version::V3_11), Just(Version::V3_12)]
}

// ---------------------------------------------------------------- exception table

prop_compose! {
    fn exception_table_entries()(
        rows in prop::collection::vec(
            (0u32..300, 1u32..5000, 0u32..1 << 20, 0u32..1 << 20, any::<bool>()),
            0..40,
        )
    ) -> Vec<ExceptionTableEntry> {
        let mut at = 0u32;
        rows.into_iter()
            .map(|(gap, len, target, depth, lasti)| {
                let start = at + 2 * gap;
                at = start + 2 * len;
                ExceptionTableEntry { start, end: at, target: 2 * target, depth, lasti }
            })
            .collect()
    }
}

proptest! {
    #[test]
    fn exception_table_round_trips(entries in exception_table_entries()) {
        let bytes = exception_table::encode(&entries).unwrap();
        prop_assert_eq!(exception_table::parse(&bytes).unwrap(), entries);
    }
}

// ---------------------------------------------------------------- line table

/// Positions the writer encodes without loss: no location at all, or a line with an end line
/// at or after it and either both columns or none.
fn position() -> impl Strategy<Value = Position> {
    let line = prop_oneof![-5i32..200, -100_000i32..100_000];
    let span = prop_oneof![4 => Just(0i32), 1 => 0i32..4, 1 => 0i32..100_000];
    let col = prop_oneof![0u32..140, 0u32..100_000];
    let cols = prop_oneof![
        1 => Just(None),
        4 => (col.clone(), prop_oneof![0u32..20, col]).prop_map(|(c, w)| Some((c, c.saturating_add(w)))),
        1 => (0u32..140, 0u32..140).prop_map(Some),
    ];
    prop_oneof![
        1 => Just(Position::NONE),
        6 => (line, span, cols).prop_map(|(line, span, cols)| Position {
            line: Some(line),
            end_line: Some(line + span),
            col: cols.map(|c| c.0),
            end_col: cols.map(|c| c.1),
        }),
    ]
}

proptest! {
    #[test]
    fn line_table_round_trips(
        version in version(),
        first_lineno in -100i32..100_000,
        rows in prop::collection::vec((position(), 1u32..20), 0..60),
    ) {
        let mut writer = LineTableWriter::new(version, first_lineno);
        for &(p, units) in &rows {
            writer.push(p, units).unwrap();
        }
        let bytes = writer.finish().unwrap();
        let entries = line_table::parse(&bytes, first_lineno).unwrap();
        let expected: Vec<Position> = rows
            .iter()
            .flat_map(|&(p, units)| std::iter::repeat_n(p, units as usize))
            .collect();
        prop_assert_eq!(line_table::positions_by_unit(&entries), expected);
        prop_assert_eq!(line_table::encode(&entries, first_lineno).unwrap(), bytes);
    }
}

// ---------------------------------------------------------------- assembler

/// Non-jump opcodes of every size, from no caches to ten (3.11 LOAD_METHOD).
const PLAIN: &[&str] = &[
    "NOP",
    "LOAD_FAST",
    "LOAD_CONST",
    "STORE_FAST",
    "POP_TOP",
    "LOAD_GLOBAL",
    "LOAD_ATTR",
    "BINARY_OP",
    "BINARY_SUBSCR",
    "STORE_ATTR",
    "CALL",
    "BUILD_TUPLE",
];
const PLAIN_311: &[&str] = &["LOAD_METHOD", "PRECALL"];
const JUMPS_311: &[&str] = &[
    "JUMP_FORWARD",
    "JUMP_BACKWARD",
    "POP_JUMP_FORWARD_IF_TRUE",
    "POP_JUMP_BACKWARD_IF_FALSE",
    "POP_JUMP_FORWARD_IF_NONE",
    "POP_JUMP_BACKWARD_IF_NOT_NONE",
    "FOR_ITER",
    "JUMP_IF_TRUE_OR_POP",
    "JUMP_BACKWARD_NO_INTERRUPT",
    "SEND",
];
const JUMPS_312: &[&str] = &[
    "JUMP_FORWARD",
    "JUMP_BACKWARD",
    "POP_JUMP_IF_TRUE",
    "POP_JUMP_IF_NONE",
    "FOR_ITER",
    "JUMP_BACKWARD_NO_INTERRUPT",
    "SEND",
];

#[derive(Debug, Clone)]
enum Spec {
    Plain(usize, u32),
    Jump(usize, usize),
}

fn arg() -> impl Strategy<Value = u32> {
    prop_oneof![6 => 0u32..256, 1 => 256u32..70_000, 1 => any::<u32>()]
}

fn spec() -> impl Strategy<Value = Spec> {
    prop_oneof![
        3 => (any::<usize>(), arg()).prop_map(|(op, a)| Spec::Plain(op, a)),
        1 => (any::<usize>(), any::<usize>()).prop_map(|(op, t)| Spec::Jump(op, t)),
    ]
}

#[derive(Debug)]
struct Program {
    version: Version,
    /// (opcode name, arg or jump target index, position)
    instructions: Vec<(&'static str, Result<u32, usize>, Position)>,
    /// (start, end, handler, depth, lasti), nested or disjoint
    ranges: Vec<(usize, usize, usize, u32, bool)>,
}

fn program() -> impl Strategy<Value = Program> {
    (
        version(),
        prop::collection::vec((spec(), position()), 1..300),
        prop::collection::vec(
            (
                any::<usize>(),
                any::<usize>(),
                any::<usize>(),
                0u32..300,
                any::<bool>(),
            ),
            0..6,
        ),
    )
        .prop_map(|(version, specs, raw_ranges)| {
            let n = specs.len();
            let (plain, jumps): (Vec<&str>, &[&str]) = match version {
                Version::V3_11 => (PLAIN.iter().chain(PLAIN_311).copied().collect(), JUMPS_311),
                Version::V3_12 => (PLAIN.to_vec(), JUMPS_312),
            };
            let instructions = specs
                .into_iter()
                .enumerate()
                .map(|(i, (spec, pos))| match spec {
                    Spec::Plain(op, a) => (plain[op % plain.len()], Ok(a), pos),
                    Spec::Jump(op, t) => {
                        let (name, target) = (jumps[op % jumps.len()], t % n);
                        // Jumps that exist in one direction only get a twin-capable stand-in.
                        let op = version.opcode(name).unwrap();
                        let forward = target > i;
                        let direction_ok = op.flipped().is_some()
                            || (op.jump().unwrap().direction == bytecode::Direction::Forward)
                                == forward;
                        let name = if direction_ok { name } else { "JUMP_FORWARD" };
                        (name, Err(target), pos)
                    }
                })
                .collect();
            let mut ranges: Vec<(usize, usize, usize, u32, bool)> = Vec::new();
            for (a, b, h, depth, lasti) in raw_ranges {
                let (start, end) = (a % n, a % n + 1 + b % (n - a % n));
                let laminar = ranges.iter().all(|&(s, e, ..)| {
                    end <= s || e <= start || (s <= start && end <= e) || (start <= s && e <= end)
                });
                if laminar {
                    ranges.push((start, end, h % n, depth, lasti));
                }
            }
            Program {
                version,
                instructions,
                ranges,
            }
        })
}

/// The innermost range covering instruction `i` (latest start, then earliest end, then last).
fn owner(ranges: &[(usize, usize, usize, u32, bool)], i: usize) -> Option<usize> {
    (0..ranges.len())
        .filter(|&k| ranges[k].0 <= i && i < ranges[k].1)
        .max_by_key(|&k| (ranges[k].0, std::cmp::Reverse(ranges[k].1), k))
}

fn build(p: &Program) -> Assembler {
    let mut asm = Assembler::new(p.version);
    let labels: Vec<Label> = (0..=p.instructions.len())
        .map(|_| asm.new_label())
        .collect();
    for (i, &(name, arg, pos)) in p.instructions.iter().enumerate() {
        asm.bind(labels[i]).unwrap();
        asm.set_position(pos);
        match arg {
            Ok(a) => asm.emit(name, a).unwrap(),
            Err(t) => asm.emit_jump(name, labels[t]).unwrap(),
        }
    }
    asm.bind(labels[p.instructions.len()]).unwrap();
    for &(start, end, handler, depth, lasti) in &p.ranges {
        asm.add_exception_range(ExceptionRange {
            start: labels[start],
            end: labels[end],
            handler: labels[handler],
            depth,
            lasti,
        });
    }
    asm
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn assembled_code_decodes_to_its_source(p in program()) {
        let asm = build(&p);
        let out = asm.assemble_with_stack_size(1, 0).unwrap();
        let decoded = decode(p.version, &out.code).unwrap();
        prop_assert_eq!(decoded.len(), p.instructions.len());
        prop_assert_eq!(decoded.iter().map(|d| d.offset).collect::<Vec<_>>(), out.offsets.clone());
        let positions = line_table::positions_by_unit(&line_table::parse(&out.line_table, 1).unwrap());
        let table = exception_table::parse(&out.exception_table).unwrap();
        for (i, (d, &(name, arg, pos))) in decoded.iter().zip(&p.instructions).enumerate() {
            match arg {
                Ok(a) => {
                    prop_assert_eq!(d.opcode.name(), name);
                    prop_assert_eq!(d.arg, a);
                    prop_assert_eq!(d.target, None);
                }
                Err(t) => {
                    let op = p.version.opcode(name).unwrap();
                    let forward = t > i;
                    let aimed_forward = op.jump().unwrap().direction == bytecode::Direction::Forward;
                    let expected = if aimed_forward == forward { op } else { op.flipped().unwrap() };
                    prop_assert_eq!(d.opcode, expected);
                    prop_assert_eq!(d.target, Some(t));
                }
            }
            prop_assert_eq!(positions[(d.opcode_offset() / 2) as usize], pos);
            let handler = table.iter().find(|e| e.covers(d.offset)).map(|e| {
                let h = bytecode::index_at_offset(&decoded, e.target).unwrap();
                (h, e.depth, e.lasti)
            });
            let expected = owner(&p.ranges, i).map(|k| (p.ranges[k].2, p.ranges[k].3, p.ranges[k].4));
            prop_assert_eq!(handler, expected);
        }
        // Decoding and re-assembling is byte-exact.
        let raw = RawCode {
            code: &out.code,
            exception_table: &out.exception_table,
            line_table: &out.line_table,
            first_lineno: 1,
        };
        let again = Assembler::from_code(p.version, raw).unwrap().assemble_with_stack_size(1, 0).unwrap();
        prop_assert_eq!(again, out);
    }

    #[test]
    fn far_jumps_get_extended_args(version in version(), filler in 200usize..600) {
        let mut asm = Assembler::new(version);
        let (top, end) = (asm.label_here(), asm.new_label());
        asm.emit_jump("JUMP_FORWARD", end).unwrap();
        for _ in 0..filler {
            asm.emit("NOP", 0).unwrap();
        }
        asm.emit_jump("JUMP_FORWARD", top).unwrap();
        asm.bind(end).unwrap();
        asm.emit("NOP", 0).unwrap();
        asm.emit_jump("JUMP_BACKWARD", top).unwrap();
        let out = asm.assemble(1).unwrap();
        let decoded = decode(version, &out.code).unwrap();
        let n = decoded.len();
        prop_assert!(decoded[0].arg as usize > filler);
        prop_assert_eq!(decoded[0].extended_args, u8::from(decoded[0].arg > 255));
        prop_assert_eq!(decoded[0].target, Some(n - 2));
        prop_assert_eq!(decoded[n - 3].opcode.name(), "JUMP_BACKWARD");
        prop_assert_eq!(decoded[n - 3].target, Some(0));
        prop_assert_eq!(decoded[n - 1].target, Some(0));
        prop_assert_eq!(out.stack_size, 0);
    }
}

// ---------------------------------------------------------------- hostile bytes

proptest! {
    #[test]
    fn arbitrary_bytes_never_panic(version in version(), bytes in prop::collection::vec(any::<u8>(), 0..200)) {
        if let Ok(insts) = decode(version, &bytes) {
            let _ = bytecode::stack_depth(&insts, &[]);
        }
        let _ = exception_table::parse(&bytes);
        let _ = line_table::parse(&bytes, 1);
        let raw = RawCode { code: &bytes, exception_table: &bytes, line_table: &bytes, first_lineno: 0 };
        if let Ok(asm) = Assembler::from_code(version, raw) {
            let _ = asm.assemble(0);
        }
    }
}

#[test]
fn stack_size_errors_name_the_instruction() {
    let mut asm = Assembler::new(Version::V3_12);
    asm.emit("POP_TOP", 0).unwrap();
    asm.emit("RETURN_CONST", 0).unwrap();
    assert!(matches!(
        asm.assemble(1),
        Err(Error::StackUnderflow { index: 0, .. })
    ));
}
