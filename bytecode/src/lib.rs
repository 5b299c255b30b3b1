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
//!   and back from a code object with [`Assembler::from_code`];
//! - [`constructs`]: one [`Assembler`] helper per construct (`call`, `load_attr`, `load_global`,
//!   `return_const`, `binary_slice`, `pop_jump_if`, ...) that spells it for the assembler's
//!   version from the [`Spelling`] table, so code generators never compare versions; and the
//!   version-blind readers of decoded operands ([`Instruction::name_index`], ...).
//!
//! Offsets are in bytes everywhere, as `dis` prints them. Nothing here panics on bad input:
//! failures are [`Error`] values.
//!
//! The transformed code of a frame that breaks its graph at a data-dependent branch:
//!
//! ```
//! use bytecode::{Assembler, Position, Version};
//!
//! let mut asm = Assembler::new(Version::V3_11);
//! asm.set_position(Position::line(10));
//! asm.emit("RESUME", 0)?;
//! asm.emit("LOAD_GLOBAL", (0 << 1) | 1)?; // NULL + co_names[0], __compiled_fn_0
//! asm.emit("LOAD_FAST", 0)?; // a
//! asm.emit("LOAD_FAST", 1)?; // b
//! asm.emit("PRECALL", 2)?;
//! asm.emit("CALL", 2)?;
//! asm.emit("UNPACK_SEQUENCE", 2)?;
//! asm.emit("STORE_FAST", 2)?; // x
//! let else_branch = asm.new_label();
//! asm.emit_jump("POP_JUMP_FORWARD_IF_FALSE", else_branch)?;
//! for resume_fn in [1, 2] {
//!     if resume_fn == 2 {
//!         asm.bind(else_branch)?;
//!     }
//!     asm.emit("LOAD_GLOBAL", (resume_fn << 1) | 1)?; // NULL + __resume_at_..
//!     asm.emit("LOAD_FAST", 1)?;
//!     asm.emit("LOAD_FAST", 2)?;
//!     asm.emit("PRECALL", 2)?;
//!     asm.emit("CALL", 2)?;
//!     asm.emit("RETURN_VALUE", 0)?;
//! }
//! let code = asm.assemble(10)?; // co_firstlineno
//! assert_eq!(code.stack_size, 4);
//! let decoded = bytecode::decode(Version::V3_11, &code.code)?;
//! assert_eq!(decoded[8].target, Some(15));
//! # Ok::<(), bytecode::Error>(())
//! ```

pub mod assemble;
pub mod constructs;
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
pub use constructs::{Comparison, FunctionParts, Intrinsic1, JumpIf, ResumeAt, Spelling, Unary};
pub use decode::{decode, index_at_offset, Instruction, UNIT};
pub use error::{Error, Result};
pub use exception_table::ExceptionTableEntry;
pub use line_table::{LineTableEntry, LineTableWriter, LocationForm, Position};
pub use opcode::{ArgKind, ArgTerm, Direction, Jump, Opcode, OpcodeInfo, StackEffect, Version};
pub use stack_depth::{max_stack_depth, stack_depth, FlowInstruction, Handler};
