//! Opcode tables for each supported CPython version.
//!
//! Opcode numbers, cache sizes and stack effects change between minor versions (3.12 renumbers
//! nothing we rely on by accident, but drops PRECALL, adds RETURN_CONST, and turns the 3.11
//! direction-specific conditional jumps into forward-only ones), so every lookup goes through a
//! [`Version`]. The data lives in the generated `opcode_tables.rs`.

use std::fmt;

use crate::error::{Error, Result};
use crate::opcode_tables as tables;

/// A CPython minor version whose bytecode this crate reads and writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Version {
    V3_11,
    V3_12,
}

impl Version {
    pub const ALL: [Version; 2] = [Version::V3_11, Version::V3_12];

    /// Looks an opcode up by its `dis` name (`"LOAD_FAST"`), pseudo-opcodes included.
    pub fn opcode(self, name: &str) -> Result<Opcode> {
        let (infos, by_name) = self.tables();
        by_name
            .binary_search_by(|&i| infos[i as usize].name.cmp(name))
            .map(|k| Opcode(&infos[by_name[k] as usize]))
            .map_err(|_| Error::UnknownOpcodeName {
                version: self,
                name: name.to_owned(),
            })
    }

    /// The opcode a code byte stands for, if any.
    pub fn opcode_by_number(self, number: u8) -> Option<Opcode> {
        let (infos, _) = self.tables();
        let index = match self {
            Version::V3_11 => tables::V3_11_BY_NUMBER[number as usize],
            Version::V3_12 => tables::V3_12_BY_NUMBER[number as usize],
        };
        infos.get(index as usize).map(Opcode)
    }

    /// Every opcode of this version, in number order.
    pub fn opcodes(self) -> impl Iterator<Item = Opcode> {
        self.tables().0.iter().map(Opcode)
    }

    /// Symbols of `BINARY_OP` opargs (`"+"`, `"+="`, ...), indexed by oparg.
    pub fn binary_ops(self) -> &'static [&'static str] {
        match self {
            Version::V3_11 => &tables::V3_11_BINARY_OPS,
            Version::V3_12 => &tables::V3_12_BINARY_OPS,
        }
    }

    /// Symbols of `COMPARE_OP` comparisons (`"<"`, ...). 3.11 uses the oparg as the index,
    /// 3.12 uses `oparg >> 4` (the low bits hold a specialization mask).
    pub fn compare_ops(self) -> &'static [&'static str] {
        match self {
            Version::V3_11 => &tables::V3_11_COMPARE_OPS,
            Version::V3_12 => &tables::V3_12_COMPARE_OPS,
        }
    }

    /// The prefix opcode that carries the high bytes of a large oparg.
    pub fn extended_arg(self) -> Opcode {
        // EXTENDED_ARG is 144 in every supported version.
        self.opcode_by_number(144)
            .expect("EXTENDED_ARG is in every opcode table")
    }

    fn tables(self) -> (&'static [OpcodeInfo], &'static [u8]) {
        match self {
            Version::V3_11 => (&tables::V3_11, &tables::V3_11_BY_NAME),
            Version::V3_12 => (&tables::V3_12, &tables::V3_12_BY_NAME),
        }
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Version::V3_11 => "3.11",
            Version::V3_12 => "3.12",
        })
    }
}

/// Which way a relative jump counts its oparg.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Direction {
    Forward,
    Backward,
}

/// How an opcode transfers control.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Jump {
    pub direction: Direction,
    /// Conditional jumps may also fall through to the next instruction.
    pub conditional: bool,
}

/// What the oparg of an opcode indexes, as `dis.has*` classifies it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ArgKind {
    /// The opcode ignores its oparg byte.
    None,
    Const,
    Name,
    Local,
    Free,
    Compare,
    Jump,
    /// Pseudo-opcodes that set up an exception handler (3.12 `SETUP_*`).
    ExceptionHandler,
    /// A count or a flag set.
    Other,
}

/// The quantity of an oparg that a stack effect scales with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ArgTerm {
    Oparg,
    /// `oparg & 1` (LOAD_GLOBAL's push-NULL bit, CALL_FUNCTION_EX's kwargs bit).
    LowBit,
    /// `(oparg >> 2) & 1` (FORMAT_VALUE's has-spec bit).
    Bit2,
    /// Number of bits set in `oparg & 0xF` (MAKE_FUNCTION's optional parts).
    FlagCount,
    /// `oparg == 3` (BUILD_SLICE with a step).
    IsThree,
    /// `(oparg & 0xFF) + (oparg >> 8)`: the two counts UNPACK_EX packs into its oparg.
    UnpackEx,
}

impl ArgTerm {
    fn eval(self, oparg: u32) -> i64 {
        let a = i64::from(oparg);
        match self {
            ArgTerm::Oparg => a,
            ArgTerm::LowBit => a & 1,
            ArgTerm::Bit2 => (a >> 2) & 1,
            ArgTerm::FlagCount => i64::from((oparg & 0xF).count_ones()),
            ArgTerm::IsThree => i64::from(oparg == 3),
            ArgTerm::UnpackEx => (a & 0xFF) + (a >> 8),
        }
    }
}

/// Net stack effect as a formula of the oparg:
/// `base + scale * term(oparg)`, plus `jump_delta` on the jump edge.
///
/// Stored as a formula rather than a table because opargs are unbounded (BUILD_TUPLE 300).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct StackEffect {
    pub base: i32,
    pub scale: i32,
    pub term: ArgTerm,
    pub jump_delta: i32,
}

impl StackEffect {
    /// Net change of the stack depth; `jump` selects the taken-jump edge.
    pub fn eval(self, oparg: u32, jump: bool) -> i64 {
        let jump_delta = if jump { self.jump_delta } else { 0 };
        i64::from(self.base) + i64::from(self.scale) * self.term.eval(oparg) + i64::from(jump_delta)
    }
}

/// Static facts about one opcode of one version.
#[derive(Debug, PartialEq, Eq)]
pub struct OpcodeInfo {
    pub version: Version,
    pub name: &'static str,
    /// Values of 256 and up are compiler pseudo-opcodes that never appear in `co_code`.
    pub number: u16,
    /// Inline CACHE code units that follow the instruction in `co_code`.
    pub caches: u8,
    pub has_arg: bool,
    pub pseudo: bool,
    pub arg_kind: ArgKind,
    pub jump: Option<Jump>,
    /// Execution never continues with the next instruction (returns, raises, unconditional jumps).
    pub terminal: bool,
    /// Number of the same jump in the opposite direction (3.11 POP_JUMP_FORWARD_IF_TRUE and
    /// POP_JUMP_BACKWARD_IF_TRUE), so the assembler can fix directions after layout.
    pub flipped: Option<u16>,
    /// Missing for a few pseudo-opcodes the opcode dump gave no effect for.
    pub stack_effect: Option<StackEffect>,
}

/// A handle to an opcode of a specific version; cheap to copy and compare.
#[derive(Clone, Copy)]
pub struct Opcode(&'static OpcodeInfo);

impl Opcode {
    pub fn info(self) -> &'static OpcodeInfo {
        self.0
    }

    pub fn name(self) -> &'static str {
        self.0.name
    }

    pub fn number(self) -> u16 {
        self.0.number
    }

    pub fn version(self) -> Version {
        self.0.version
    }

    pub fn caches(self) -> u8 {
        self.0.caches
    }

    pub fn has_arg(self) -> bool {
        self.0.has_arg
    }

    pub fn jump(self) -> Option<Jump> {
        self.0.jump
    }

    pub fn is_jump(self) -> bool {
        self.0.jump.is_some()
    }

    pub fn is_terminal(self) -> bool {
        self.0.terminal
    }

    /// Code units the instruction takes in `co_code` without EXTENDED_ARG prefixes.
    pub fn units(self) -> u32 {
        1 + u32::from(self.0.caches)
    }

    /// The same jump aimed the other way, if this version has one.
    pub fn flipped(self) -> Option<Opcode> {
        let number = u8::try_from(self.0.flipped?).ok()?;
        self.version().opcode_by_number(number)
    }

    /// Net stack effect; `jump` selects the taken-jump edge of a jump.
    pub fn stack_effect(self, oparg: u32, jump: bool) -> Result<i64> {
        self.0
            .stack_effect
            .map(|e| e.eval(oparg, jump))
            .ok_or(Error::UnknownStackEffect { name: self.0.name })
    }
}

impl PartialEq for Opcode {
    fn eq(&self, other: &Self) -> bool {
        std::ptr::eq(self.0, other.0)
    }
}

impl Eq for Opcode {}

impl std::hash::Hash for Opcode {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        (self.0.version, self.0.number).hash(state)
    }
}

impl fmt::Debug for Opcode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0.name)
    }
}

impl fmt::Display for Opcode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0.name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookup_by_name_and_number_agree() {
        for version in Version::ALL {
            for op in version.opcodes() {
                assert_eq!(version.opcode(op.name()).unwrap(), op);
                if let Ok(byte) = u8::try_from(op.number()) {
                    assert_eq!(version.opcode_by_number(byte), Some(op));
                }
            }
        }
        assert!(Version::V3_12.opcode("PRECALL").is_err());
        assert_eq!(Version::V3_11.opcode("PRECALL").unwrap().number(), 166);
        assert_eq!(Version::V3_12.opcode("RETURN_CONST").unwrap().number(), 121);
    }

    #[test]
    fn stack_effects_follow_oparg() {
        let v = Version::V3_11;
        let build = v.opcode("BUILD_TUPLE").unwrap();
        assert_eq!(build.stack_effect(300, false).unwrap(), -299);
        let unpack_ex = v.opcode("UNPACK_EX").unwrap();
        assert_eq!(unpack_ex.stack_effect(0x0201, false).unwrap(), 3);
        let for_iter = v.opcode("FOR_ITER").unwrap();
        assert_eq!(for_iter.stack_effect(0, false).unwrap(), 1);
        assert_eq!(for_iter.stack_effect(0, true).unwrap(), -1);
        let call = Version::V3_12.opcode("CALL").unwrap();
        assert_eq!(call.stack_effect(3, false).unwrap(), -4);
    }

    #[test]
    fn jump_twins() {
        let v = Version::V3_11;
        let fwd = v.opcode("POP_JUMP_FORWARD_IF_NONE").unwrap();
        assert_eq!(fwd.flipped().unwrap().name(), "POP_JUMP_BACKWARD_IF_NONE");
        assert!(v.opcode("FOR_ITER").unwrap().flipped().is_none());
        let jb = Version::V3_12.opcode("JUMP_BACKWARD").unwrap();
        assert_eq!(jb.flipped().unwrap().name(), "JUMP_FORWARD");
        assert!(jb.is_terminal());
    }
}
