//! The one error type of the crate.
//!
//! Every failure is a value, never a panic: the bytes we decode come from arbitrary code objects,
//! and the instructions we assemble come from a tracer that may have a bug we want reported with
//! enough context (offset or instruction index, opcode name) to find it.

use crate::opcode::{Direction, Version};

/// Anything that can go wrong while reading or writing bytecode.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    #[error("no opcode named {name} in Python {version}")]
    UnknownOpcodeName { version: Version, name: String },

    #[error("byte {number} at offset {offset} is not an opcode in Python {version}")]
    UnknownOpcode {
        version: Version,
        number: u16,
        offset: u32,
    },

    #[error("code is truncated at offset {offset}: {reason}")]
    TruncatedCode { offset: u32, reason: &'static str },

    #[error("jump at offset {offset} lands at {target}, which is not the start of an instruction")]
    BadJumpTarget { offset: u32, target: i64 },

    #[error("malformed exception table at byte {position}: {reason}")]
    BadExceptionTable {
        position: usize,
        reason: &'static str,
    },

    #[error("invalid exception table entry {index}: {reason}")]
    InvalidExceptionEntry { index: usize, reason: &'static str },

    #[error("malformed line table at byte {position}: {reason}")]
    BadLineTable {
        position: usize,
        reason: &'static str,
    },

    #[error("position cannot be encoded ({reason}): {position}")]
    InvalidPosition {
        position: String,
        reason: &'static str,
    },

    #[error("label {label} is used but never bound")]
    UnboundLabel { label: u32 },

    #[error("label {label} is bound twice")]
    LabelAlreadyBound { label: u32 },

    #[error(
        "label {label} is bound past the last instruction, so nothing can jump or handle there"
    )]
    LabelAtEnd { label: u32 },

    #[error("{name} is a jump: emit it with a label")]
    JumpNeedsLabel { name: &'static str },

    #[error("{name} is not a jump and cannot take a label")]
    NotAJump { name: &'static str },

    #[error("{name} (instruction {index}) cannot jump {wanted:?} and has no {wanted:?} twin")]
    NoJumpInDirection {
        name: &'static str,
        index: usize,
        wanted: Direction,
    },

    #[error("{name} cannot be emitted directly: {reason}")]
    NotEmittable {
        name: &'static str,
        reason: &'static str,
    },

    #[error("opcode {name} belongs to Python {found}, the assembler targets {expected}")]
    VersionMismatch {
        name: &'static str,
        expected: Version,
        found: Version,
    },

    #[error("exception ranges {first} and {second} overlap without nesting")]
    OverlappingExceptionRanges { first: usize, second: usize },

    #[error("exception table boundary at offset {offset} is not an instruction boundary")]
    MisalignedExceptionEntry { offset: u32 },

    #[error("stack underflow at instruction {index} ({name}): depth {depth} goes negative")]
    StackUnderflow {
        index: usize,
        name: &'static str,
        depth: i64,
    },

    #[error("instruction {index} is reached with stack depth {first} and with {second}")]
    InconsistentStackDepth {
        index: usize,
        first: u32,
        second: u32,
    },

    #[error("execution runs past the last instruction (from instruction {index}, {name})")]
    FallsOffEnd { index: usize, name: &'static str },

    #[error("no stack effect is known for {name}")]
    UnknownStackEffect { name: &'static str },

    #[error("Python {version} has no {construct}")]
    NotInVersion {
        construct: &'static str,
        version: Version,
    },

    #[error(
        "exception table entry {index} protects copied code but its handler (instruction {handler}) is not copied"
    )]
    HandlerNotCopied { index: usize, handler: usize },

    #[error("segment {start}..{end} is not a range of the {len} decoded instructions")]
    BadSegment {
        start: usize,
        end: usize,
        len: usize,
    },

    #[error("BINARY_OP has no operator {symbol:?}")]
    UnknownOperator { symbol: String },
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
