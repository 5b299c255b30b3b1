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
//! The transformed code of a frame that breaks its graph at a data-dependent branch, written
//! once with the construct helpers and assembled for each version:
//!
//! ```
//! use bytecode::{Assembler, JumpIf, Position, ResumeAt, Version};
//!
//! for version in Version::ALL {
//!     let mut asm = Assembler::new(version);
//!     asm.set_position(Position::line(10));
//!     asm.resume(ResumeAt::Start)?;
//!     asm.load_global(0, true)?; // NULL + co_names[0], __compiled_fn_0
//!     asm.load_fast(0)?; // a
//!     asm.load_fast(1)?; // b
//!     asm.call(2)?; // PRECALL 2; CALL 2 on 3.11, CALL 2 on 3.12
//!     asm.unpack_sequence(2)?;
//!     asm.store_fast(2)?; // x
//!     let else_branch = asm.new_label();
//!     asm.pop_jump_if(JumpIf::False, else_branch)?;
//!     for resume_fn in [1, 2] {
//!         if resume_fn == 2 {
//!             asm.bind(else_branch)?;
//!         }
//!         asm.load_global(resume_fn, true)?; // NULL + __resume_at_..
//!         asm.load_fast(1)?;
//!         asm.load_fast(2)?;
//!         asm.call(2)?;
//!         asm.return_value()?;
//!     }
//!     let code = asm.assemble(10)?; // co_firstlineno
//!     assert_eq!(code.stack_size, 4);
//!     let decoded = bytecode::decode(version, &code.code)?;
//!     let jump = decoded.iter().find(|i| i.opcode.is_jump()).unwrap();
//!     assert_eq!(decoded[jump.target.unwrap() - 1].opcode.name(), "RETURN_VALUE");
//! }
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
