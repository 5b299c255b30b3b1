//! CPython bytecode as data, for CPython 3.11 and 3.12.
//!
//! The tracer reads the bytecode of the frames it intercepts and writes new code objects (the
//! transformed code that calls a compiled graph, resume functions after a graph break). This
//! crate is the whole of what it needs to know about the bytes, with no Python dependency:
//!
//! - [`opcode`]: per-version opcode tables ([`Version::opcode`]) with caches, jump kinds and
//!   stack effects, generated from dumps of the real interpreters (`gen/gen_opcodes.py`);
//! - [`decode`]: `co_code` → [`Instruction`]s (EXTENDED_ARG folded, caches skipped, jumps
//!   resolved to instruction indices);
//! - [`exception_table`] and [`line_table`]: parse and encode `co_exceptiontable` and
//!   `co_linetable`, byte for byte;
//! - [`stack_depth`]: `co_stacksize` by dataflow;
//! - [`assemble`]: labelled instructions → [`AssembledCode`] (`co_code`, tables, stack size),
//!   and back from a code object with [`Assembler::from_code`].
//!
//! Offsets are in bytes everywhere, as `dis` prints them. Nothing here panics on bad input:
//! failures are [`Error`] values.

pub mod assemble;
pub mod decode;
pub mod error;
pub mod exception_table;
pub mod line_table;
pub mod opcode;
#[rustfmt::skip]
mod opcode_tables;
pub mod stack_depth;

pub use assemble::{
    Arg, AssembledCode, Assembler, ExceptionRange, Label, LabelledInstruction, RawCode,
};
pub use decode::{decode, index_at_offset, Instruction, UNIT};
pub use error::{Error, Result};
pub use exception_table::ExceptionTableEntry;
pub use line_table::{LineTableEntry, LineTableWriter, LocationForm, Position};
pub use opcode::{ArgKind, Direction, Jump, Opcode, OpcodeInfo, StackEffect, Version};
pub use stack_depth::{max_stack_depth, stack_depth, FlowInstruction, Handler};
