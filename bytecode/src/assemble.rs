//! Assembling labelled instructions into the bytecode fields of a code object.
//!
//! Jumps name a [`Label`] instead of an oparg. Relative opargs depend on offsets, offsets depend
//! on how many EXTENDED_ARG prefixes each instruction needs, and those depend on the opargs, so
//! layout iterates to a fixpoint in which prefix counts only grow (which guarantees it ends).
//! Jump direction is a property of the opcode in 3.11 (POP_JUMP_FORWARD_IF_TRUE vs
//! POP_JUMP_BACKWARD_IF_TRUE), so the assembler swaps in the twin that matches where the label
//! landed. Exception ranges may nest: the innermost range wins, as in CPython's compiler.

use std::fmt;

use crate::decode::{decode, index_at_offset, UNIT};
use crate::error::{Error, Result};
use crate::exception_table::{self, ExceptionTableEntry};
use crate::line_table::{self, LineTableWriter, Position};
use crate::opcode::{Direction, Opcode, Version};
use crate::stack_depth::{max_stack_depth, FlowInstruction, Handler};

/// A point in the instruction list, bound to the instruction emitted after [`Assembler::bind`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Label(u32);

impl fmt::Display for Label {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "L{}", self.0)
    }
}

/// The argument of a labelled instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Arg {
    Value(u32),
    /// A jump to wherever the label is bound; the oparg is computed at layout.
    Jump(Label),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LabelledInstruction {
    pub opcode: Opcode,
    pub arg: Arg,
    pub position: Position,
}

/// Instructions from `start` up to (not including) `end` are protected by `handler`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ExceptionRange {
    pub start: Label,
    pub end: Label,
    pub handler: Label,
    /// Stack depth the handler unwinds to.
    pub depth: u32,
    /// Whether the raising instruction's offset is pushed for the handler.
    pub lasti: bool,
}

/// The bytecode fields of a code object, borrowed (input to [`Assembler::append_code`]).
#[derive(Debug, Clone, Copy)]
pub struct RawCode<'a> {
    pub code: &'a [u8],
    pub exception_table: &'a [u8],
    pub line_table: &'a [u8],
    pub first_lineno: i32,
}

/// What [`Assembler::assemble`] produces: `co_code`, `co_exceptiontable`, `co_linetable`,
/// `co_stacksize`, plus where each labelled instruction ended up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AssembledCode {
    pub code: Vec<u8>,
    pub exception_table: Vec<u8>,
    pub line_table: Vec<u8>,
    pub stack_size: u32,
    /// Byte offset of each instruction (of its first EXTENDED_ARG prefix, if any).
    pub offsets: Vec<u32>,
}

/// Builds a code object's bytecode from instructions with symbolic jump targets.
#[derive(Debug, Clone)]
pub struct Assembler {
    version: Version,
    instructions: Vec<LabelledInstruction>,
    /// Index of the instruction each label is bound to (`len` means "after the last one").
    labels: Vec<Option<usize>>,
    exception_ranges: Vec<ExceptionRange>,
    position: Position,
}

impl Assembler {
    pub fn new(version: Version) -> Self {
        Assembler {
            version,
            instructions: Vec::new(),
            labels: Vec::new(),
            exception_ranges: Vec::new(),
            position: Position::NONE,
        }
    }

    /// Labelled form of an existing code object (positions and exception ranges included).
    /// Assembling it again gives back the same bytes, except that redundant EXTENDED_ARG
    /// prefixes (never written by CPython's compiler) are dropped.
    pub fn from_code(version: Version, raw: RawCode<'_>) -> Result<Self> {
        let mut asm = Assembler::new(version);
        asm.append_code(raw)?;
        Ok(asm)
    }

    pub fn version(&self) -> Version {
        self.version
    }

    pub fn instructions(&self) -> &[LabelledInstruction] {
        &self.instructions
    }

    pub fn exception_ranges(&self) -> &[ExceptionRange] {
        &self.exception_ranges
    }

    /// Index of the instruction a label is bound to, if bound.
    pub fn label_index(&self, label: Label) -> Option<usize> {
        self.labels.get(label.0 as usize).copied().flatten()
    }

    pub fn new_label(&mut self) -> Label {
        self.labels.push(None);
        Label((self.labels.len() - 1) as u32)
    }

    /// Binds `label` to the next instruction to be emitted.
    pub fn bind(&mut self, label: Label) -> Result<()> {
        self.bind_index(label, self.instructions.len())
    }

    /// A new label bound to the next instruction to be emitted.
    pub fn label_here(&mut self) -> Label {
        let label = self.new_label();
        self.labels[label.0 as usize] = Some(self.instructions.len());
        label
    }

    /// Binds `label` where `existing` is bound, e.g. to jump into code appended by
    /// [`append_code`](Self::append_code) with a label created before it.
    pub fn bind_to(&mut self, label: Label, existing: Label) -> Result<()> {
        let index = self
            .label_index(existing)
            .ok_or(Error::UnboundLabel { label: existing.0 })?;
        self.bind_index(label, index)
    }

    /// Source position given to the instructions emitted from now on.
    pub fn set_position(&mut self, position: Position) {
        self.position = position;
    }

    /// Emits a non-jump instruction by name.
    pub fn emit(&mut self, name: &str, arg: u32) -> Result<()> {
        let opcode = self.version.opcode(name)?;
        self.emit_op(opcode, arg)
    }

    pub fn emit_op(&mut self, opcode: Opcode, arg: u32) -> Result<()> {
        self.push(opcode, Arg::Value(arg))
    }

    /// Emits a jump by name. Either direction's name works (`JUMP_FORWARD` to a label behind
    /// becomes `JUMP_BACKWARD`); jumps that exist in one direction only report an error at
    /// layout if the label is on the other side.
    pub fn emit_jump(&mut self, name: &str, target: Label) -> Result<()> {
        let opcode = self.version.opcode(name)?;
        self.emit_jump_op(opcode, target)
    }

    pub fn emit_jump_op(&mut self, opcode: Opcode, target: Label) -> Result<()> {
        self.push(opcode, Arg::Jump(target))
    }

    /// Protects the instructions in `range.start..range.end` with `range.handler`.
    pub fn add_exception_range(&mut self, range: ExceptionRange) {
        self.exception_ranges.push(range);
    }

    /// Appends a decoded code object. Returns one label per decoded instruction plus a last
    /// one bound after them, so callers can jump into or protect the appended code. On error
    /// the assembler is left unchanged.
    pub fn append_code(&mut self, raw: RawCode<'_>) -> Result<Vec<Label>> {
        let len = decode(self.version, raw.code)?.len();
        let whole = std::iter::once(0..len).collect::<Vec<_>>();
        self.append_code_segments(raw, &whole, 0, false)
    }

    /// Appends some instructions of a decoded code object: the `segments` (index ranges of its
    /// decoded instructions), one after the other in the order given, so a caller can copy one
    /// region of a function (a comprehension inlined by CPython 3.12 and its cleanup handlers)
    /// and run it in other code. Jumps keep their targets; the exception-table entries are
    /// clipped to the copied instructions, their depths moved by `depth_shift` (the copy runs
    /// with a different stack below it). Returns one label per decoded instruction plus one
    /// for the end of the code: those of copied instructions are bound, the others are left
    /// for the caller to bind (a jump to one that stays unbound fails at layout). An entry that
    /// protects copied code with a handler that is not copied is dropped when `outer_handled`
    /// (the caller protects the copy with a range of its own) and an error otherwise; a depth
    /// that the shift makes negative is an error. On error the assembler is left unchanged.
    pub fn append_code_segments(
        &mut self,
        raw: RawCode<'_>,
        segments: &[std::ops::Range<usize>],
        depth_shift: i64,
        outer_handled: bool,
    ) -> Result<Vec<Label>> {
        let decoded = decode(self.version, raw.code)?;
        let table = exception_table::parse(raw.exception_table)?;
        let positions =
            line_table::positions_by_unit(&line_table::parse(raw.line_table, raw.first_lineno)?);
        let code_end = u32::try_from(raw.code.len()).unwrap_or(u32::MAX);
        let index_of = |offset: u32| -> Result<usize> {
            if offset == code_end {
                return Ok(decoded.len());
            }
            index_at_offset(&decoded, offset).ok_or(Error::MisalignedExceptionEntry { offset })
        };
        let ranges = table
            .iter()
            .map(|e| Ok((index_of(e.start)?, index_of(e.end)?, index_of(e.target)?, e)))
            .collect::<Result<Vec<_>>>()?;
        let base = self.instructions.len();
        // Where each copied instruction lands, and where each segment's copy ends.
        let mut new_index: Vec<Option<usize>> = vec![None; decoded.len() + 1];
        let mut seg_end = Vec::with_capacity(segments.len());
        let mut next = base;
        for seg in segments {
            if seg.start > seg.end || seg.end > decoded.len() {
                return Err(Error::BadSegment {
                    start: seg.start,
                    end: seg.end,
                    len: decoded.len(),
                });
            }
            for k in seg.clone() {
                let inst = &decoded[k];
                self.check_emittable(inst.opcode, inst.target.is_some())?;
                new_index[k] = Some(next);
                next += 1;
            }
            seg_end.push(next);
        }
        // Exception ranges, clipped to each segment; checked before anything is appended.
        let mut clipped = Vec::new();
        for (i, &(start, end, handler, entry)) in ranges.iter().enumerate() {
            for (seg, &after) in segments.iter().zip(&seg_end) {
                let (s, e) = (start.max(seg.start), end.min(seg.end));
                if s >= e {
                    continue;
                }
                let Some(h) = new_index[handler] else {
                    if outer_handled {
                        continue;
                    }
                    return Err(Error::HandlerNotCopied { index: i, handler });
                };
                let depth = u32::try_from(i64::from(entry.depth) + depth_shift).map_err(|_| {
                    Error::InvalidExceptionEntry {
                        index: i,
                        reason: "the depth shift makes its depth negative",
                    }
                })?;
                let first = new_index[s].unwrap_or(after);
                let last = if e < seg.end {
                    new_index[e].unwrap_or(after)
                } else {
                    after
                };
                clipped.push((first, last, h, depth, entry.lasti));
            }
        }

        let labels: Vec<Label> = (0..=decoded.len())
            .map(|k| {
                let label = self.new_label();
                self.labels[label.0 as usize] = new_index[k];
                label
            })
            .collect();
        for seg in segments {
            for inst in &decoded[seg.clone()] {
                let unit = (inst.opcode_offset() / UNIT) as usize;
                self.instructions.push(LabelledInstruction {
                    opcode: inst.opcode,
                    arg: inst
                        .target
                        .map_or(Arg::Value(inst.arg), |t| Arg::Jump(labels[t])),
                    position: positions.get(unit).copied().unwrap_or_default(),
                });
            }
        }
        // The whole code appended: its end label is bound after it, as callers expect.
        if segments.len() == 1 && segments[0] == (0..decoded.len()) {
            self.labels[labels[decoded.len()].0 as usize] = Some(self.instructions.len());
        }
        for (first, last, handler, depth, lasti) in clipped {
            let (start, end, handler) = (
                self.label_at(first),
                self.label_at(last),
                self.label_at(handler),
            );
            self.exception_ranges.push(ExceptionRange {
                start,
                end,
                handler,
                depth,
                lasti,
            });
        }
        Ok(labels)
    }

    /// A new label bound to instruction `index` (or after the last one).
    fn label_at(&mut self, index: usize) -> Label {
        let label = self.new_label();
        self.labels[label.0 as usize] = Some(index);
        label
    }

    /// Rewrites the plain (non-jump) opargs of the instructions from index `from` on: `f` gets
    /// each opcode and oparg and returns the new oparg. Resume functions use it to move the
    /// cell and free-variable indices of appended code to their slots in a new layout; the
    /// EXTENDED_ARG prefixes a larger oparg needs are added at layout.
    pub fn map_args(&mut self, from: usize, mut f: impl FnMut(Opcode, u32) -> u32) {
        for inst in self.instructions.iter_mut().skip(from) {
            if let Arg::Value(v) = inst.arg {
                inst.arg = Arg::Value(f(inst.opcode, v));
            }
        }
    }

    /// Lays out and encodes everything, computing `co_stacksize` by dataflow.
    pub fn assemble(&self, first_lineno: i32) -> Result<AssembledCode> {
        let layout = self.layout()?;
        let mut code = self.encode(&layout, first_lineno)?;
        code.stack_size = max_stack_depth(&self.flow(&layout))?;
        Ok(code)
    }

    /// Like [`assemble`](Self::assemble) but with a caller-supplied `co_stacksize`, for code the
    /// analysis cannot judge (or deliberately broken code in tests).
    pub fn assemble_with_stack_size(
        &self,
        first_lineno: i32,
        stack_size: u32,
    ) -> Result<AssembledCode> {
        let layout = self.layout()?;
        let mut code = self.encode(&layout, first_lineno)?;
        code.stack_size = stack_size;
        Ok(code)
    }

    fn bind_index(&mut self, label: Label, index: usize) -> Result<()> {
        match self.labels.get_mut(label.0 as usize) {
            None => Err(Error::UnboundLabel { label: label.0 }),
            Some(Some(_)) => Err(Error::LabelAlreadyBound { label: label.0 }),
            Some(slot) => {
                *slot = Some(index);
                Ok(())
            }
        }
    }

    fn push(&mut self, opcode: Opcode, arg: Arg) -> Result<()> {
        self.check_emittable(opcode, matches!(arg, Arg::Jump(_)))?;
        self.instructions.push(LabelledInstruction {
            opcode,
            arg,
            position: self.position,
        });
        Ok(())
    }

    fn check_emittable(&self, opcode: Opcode, with_label: bool) -> Result<()> {
        let name = opcode.name();
        if opcode.version() != self.version {
            return Err(Error::VersionMismatch {
                name,
                expected: self.version,
                found: opcode.version(),
            });
        }
        let not_emittable = |reason| Err(Error::NotEmittable { name, reason });
        if opcode.info().pseudo {
            return not_emittable("pseudo-opcodes exist only inside CPython's compiler");
        }
        if opcode == self.version.extended_arg() {
            return not_emittable("EXTENDED_ARG prefixes are inserted by the assembler");
        }
        if opcode.number() == 0 {
            return not_emittable("inline caches are inserted by the assembler");
        }
        match (with_label, opcode.is_jump()) {
            (false, true) => Err(Error::JumpNeedsLabel { name }),
            (true, false) => Err(Error::NotAJump { name }),
            _ => Ok(()),
        }
    }

    /// Resolves a label to an instruction index; `allow_end` admits "after the last one".
    fn resolve(&self, label: Label, allow_end: bool) -> Result<usize> {
        let index = self
            .label_index(label)
            .ok_or(Error::UnboundLabel { label: label.0 })?;
        if index > self.instructions.len() || (!allow_end && index == self.instructions.len()) {
            return Err(Error::LabelAtEnd { label: label.0 });
        }
        Ok(index)
    }

    fn layout(&self) -> Result<Layout> {
        let n = self.instructions.len();
        let mut opcodes = Vec::with_capacity(n);
        let mut targets = Vec::with_capacity(n);
        let mut args = Vec::with_capacity(n);
        for (i, inst) in self.instructions.iter().enumerate() {
            let (opcode, target, arg) = match inst.arg {
                Arg::Value(arg) => (inst.opcode, None, arg),
                Arg::Jump(label) => {
                    let t = self.resolve(label, false)?;
                    (aim(inst.opcode, i, t)?, Some(t), 0)
                }
            };
            opcodes.push(opcode);
            targets.push(target);
            args.push(arg);
        }
        let mut prefixes: Vec<u8> = args.iter().map(|&a| prefixes_for(a)).collect();
        let mut offsets = vec![0u32; n + 1];
        loop {
            for i in 0..n {
                let units = u32::from(prefixes[i]) + opcodes[i].units();
                offsets[i + 1] = offsets[i].saturating_add(UNIT * units);
            }
            let mut grew = false;
            for i in 0..n {
                let Some(t) = targets[i] else { continue };
                let (end, dest) = (offsets[i + 1], offsets[t]);
                let distance = if t > i { dest - end } else { end - dest };
                args[i] = distance / UNIT;
                let needed = prefixes_for(args[i]);
                if needed > prefixes[i] {
                    prefixes[i] = needed;
                    grew = true;
                }
            }
            if !grew {
                break;
            }
        }
        let ranges = self.flatten_exception_ranges()?;
        Ok(Layout {
            opcodes,
            args,
            prefixes,
            targets,
            offsets,
            ranges,
        })
    }

    /// For each instruction, the innermost exception range covering it.
    fn flatten_exception_ranges(&self) -> Result<Vec<Option<usize>>> {
        let mut resolved = Vec::with_capacity(self.exception_ranges.len());
        for r in &self.exception_ranges {
            let start = self.resolve(r.start, true)?;
            let end = self.resolve(r.end, true)?;
            self.resolve(r.handler, false)?;
            resolved.push((start, end));
        }
        let mut order: Vec<usize> = (0..resolved.len())
            .filter(|&k| resolved[k].0 < resolved[k].1)
            .collect();
        order.sort_by_key(|&k| (resolved[k].0, std::cmp::Reverse(resolved[k].1), k));
        let mut owner = vec![None; self.instructions.len()];
        let mut open: Vec<usize> = Vec::new();
        for k in order {
            let (start, end) = resolved[k];
            while open.last().is_some_and(|&o| resolved[o].1 <= start) {
                open.pop();
            }
            if let Some(&outer) = open.last() {
                if end > resolved[outer].1 {
                    return Err(Error::OverlappingExceptionRanges {
                        first: outer,
                        second: k,
                    });
                }
            }
            open.push(k);
            owner[start..end].fill(Some(k));
        }
        Ok(owner)
    }

    fn encode(&self, layout: &Layout, first_lineno: i32) -> Result<AssembledCode> {
        let n = self.instructions.len();
        let mut code = Vec::with_capacity(layout.offsets[n] as usize);
        let extended_arg = self.version.extended_arg().number() as u8;
        let mut lines = LineTableWriter::new(self.version, first_lineno);
        for i in 0..n {
            let (opcode, arg, prefixes) = (layout.opcodes[i], layout.args[i], layout.prefixes[i]);
            for k in (1..=u32::from(prefixes)).rev() {
                code.extend([extended_arg, (arg >> (8 * k)) as u8]);
            }
            code.extend([opcode.number() as u8, arg as u8]);
            code.resize(code.len() + 2 * usize::from(opcode.caches()), 0);
            let units = (layout.offsets[i + 1] - layout.offsets[i]) / UNIT;
            lines.push(self.instructions[i].position, units)?;
        }
        let mut entries = Vec::new();
        let mut i = 0;
        while i < n {
            let Some(k) = layout.ranges[i] else {
                i += 1;
                continue;
            };
            let run_end = (i..n).find(|&j| layout.ranges[j] != Some(k)).unwrap_or(n);
            let range = &self.exception_ranges[k];
            let handler = self.resolve(range.handler, false)?;
            entries.push(ExceptionTableEntry {
                start: layout.offsets[i],
                end: layout.offsets[run_end],
                target: layout.offsets[handler],
                depth: range.depth,
                lasti: range.lasti,
            });
            i = run_end;
        }
        Ok(AssembledCode {
            code,
            exception_table: exception_table::encode(&entries)?,
            line_table: lines.finish()?,
            stack_size: 0,
            offsets: layout.offsets[..n].to_vec(),
        })
    }

    fn flow(&self, layout: &Layout) -> Vec<FlowInstruction> {
        (0..self.instructions.len())
            .map(|i| FlowInstruction {
                opcode: layout.opcodes[i],
                arg: layout.args[i],
                target: layout.targets[i],
                handler: layout.ranges[i].and_then(|k| {
                    let r = &self.exception_ranges[k];
                    Some(Handler {
                        target: self.label_index(r.handler)?,
                        depth: r.depth,
                        lasti: r.lasti,
                    })
                }),
            })
            .collect()
    }
}

/// Final placement of every instruction.
struct Layout {
    /// Opcodes after direction fixing.
    opcodes: Vec<Opcode>,
    args: Vec<u32>,
    prefixes: Vec<u8>,
    targets: Vec<Option<usize>>,
    /// `offsets[i]` is where instruction `i` starts; `offsets[n]` is the code length.
    offsets: Vec<u32>,
    /// Index of the exception range owning each instruction.
    ranges: Vec<Option<usize>>,
}

/// The jump opcode that reaches instruction `target` from instruction `index`.
fn aim(opcode: Opcode, index: usize, target: usize) -> Result<Opcode> {
    let wanted = if target > index {
        Direction::Forward
    } else {
        Direction::Backward
    };
    match opcode.jump() {
        Some(j) if j.direction == wanted => Ok(opcode),
        _ => opcode.flipped().ok_or(Error::NoJumpInDirection {
            name: opcode.name(),
            index,
            wanted,
        }),
    }
}

/// EXTENDED_ARG prefixes needed to carry `arg`.
fn prefixes_for(arg: u32) -> u8 {
    match arg {
        0..=0xFF => 0,
        0x100..=0xFFFF => 1,
        0x1_0000..=0xFF_FFFF => 2,
        _ => 3,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn assembles_the_tracer_call_sequence() {
        let mut asm = Assembler::new(Version::V3_11);
        asm.set_position(Position::line(3));
        asm.emit("RESUME", 0).unwrap();
        asm.set_position(Position::span(4, 4, 11, 30));
        asm.emit("LOAD_GLOBAL", 1).unwrap(); // (0 << 1) | 1: NULL + co_names[0]
        asm.emit("LOAD_FAST", 0).unwrap();
        asm.emit("LOAD_FAST", 1).unwrap();
        asm.emit("PRECALL", 2).unwrap();
        asm.emit("CALL", 2).unwrap();
        asm.emit("RETURN_VALUE", 0).unwrap();
        let out = asm.assemble(3).unwrap();
        assert_eq!(out.stack_size, 4);
        assert_eq!(out.offsets, [0, 2, 14, 16, 18, 22, 32]);
        assert_eq!(out.code.len(), 34);
        assert!(out.exception_table.is_empty());
        let decoded = decode(Version::V3_11, &out.code).unwrap();
        assert_eq!(decoded[1].opcode.name(), "LOAD_GLOBAL");
        assert_eq!(decoded[4].arg, 2);
    }

    #[test]
    fn map_args_renumbers_plain_args_and_grows_extended_args() {
        let mut asm = Assembler::new(Version::V3_11);
        asm.emit("RESUME", 0).unwrap();
        let end = asm.new_label();
        asm.emit("LOAD_DEREF", 3).unwrap();
        asm.emit_jump("JUMP_FORWARD", end).unwrap();
        asm.bind(end).unwrap();
        asm.emit("RETURN_VALUE", 0).unwrap();
        // From instruction 1 on: deref slot 3 moves to 300, which needs an EXTENDED_ARG.
        asm.map_args(1, |op, arg| {
            if op.name() == "LOAD_DEREF" {
                arg + 297
            } else {
                arg
            }
        });
        let out = asm.assemble(1).unwrap();
        let decoded = decode(Version::V3_11, &out.code).unwrap();
        let names: Vec<_> = decoded.iter().map(|i| i.opcode.name()).collect();
        assert_eq!(
            names,
            ["RESUME", "LOAD_DEREF", "JUMP_FORWARD", "RETURN_VALUE"]
        );
        assert_eq!(decoded[0].arg, 0);
        assert_eq!(decoded[1].arg, 300);
        // The jump still lands on RETURN_VALUE (its label, not a value, was kept).
        assert_eq!(decoded[2].target, Some(3));
    }

    #[test]
    fn fixes_jump_direction_and_reports_impossible_ones() {
        let mut asm = Assembler::new(Version::V3_11);
        let top = asm.label_here();
        asm.emit("LOAD_FAST", 0).unwrap();
        asm.emit_jump("POP_JUMP_FORWARD_IF_TRUE", top).unwrap();
        asm.emit("LOAD_CONST", 0).unwrap();
        asm.emit("RETURN_VALUE", 0).unwrap();
        let out = asm.assemble(1).unwrap();
        let decoded = decode(Version::V3_11, &out.code).unwrap();
        assert_eq!(decoded[1].opcode.name(), "POP_JUMP_BACKWARD_IF_TRUE");
        assert_eq!(decoded[1].target, Some(0));

        let mut asm = Assembler::new(Version::V3_12);
        let top = asm.label_here();
        asm.emit("LOAD_FAST", 0).unwrap();
        asm.emit_jump("POP_JUMP_IF_TRUE", top).unwrap();
        assert!(matches!(
            asm.assemble(1),
            Err(Error::NoJumpInDirection { index: 1, .. })
        ));
    }

    #[test]
    fn rejects_misuse() {
        let mut asm = Assembler::new(Version::V3_12);
        let l = asm.new_label();
        assert!(matches!(
            asm.emit("JUMP_FORWARD", 0),
            Err(Error::JumpNeedsLabel { .. })
        ));
        assert!(matches!(
            asm.emit_jump("NOP", l),
            Err(Error::NotAJump { .. })
        ));
        assert!(matches!(
            asm.emit("EXTENDED_ARG", 1),
            Err(Error::NotEmittable { .. })
        ));
        assert!(matches!(
            asm.emit("SETUP_FINALLY", 1),
            Err(Error::NotEmittable { .. })
        ));
        assert!(matches!(
            asm.emit("NO_SUCH_OP", 1),
            Err(Error::UnknownOpcodeName { .. })
        ));
        let other = Version::V3_11.opcode("NOP").unwrap();
        assert!(matches!(
            asm.emit_op(other, 0),
            Err(Error::VersionMismatch { .. })
        ));
        asm.emit_jump("JUMP_FORWARD", l).unwrap();
        assert!(matches!(asm.assemble(1), Err(Error::UnboundLabel { .. })));
        asm.bind(l).unwrap();
        assert!(matches!(asm.bind(l), Err(Error::LabelAlreadyBound { .. })));
        assert!(matches!(asm.assemble(1), Err(Error::LabelAtEnd { .. })));
    }

    #[test]
    fn nested_exception_ranges_are_split() {
        let mut asm = Assembler::new(Version::V3_12);
        let (outer, inner_start, inner_end, end) = (
            asm.new_label(),
            asm.new_label(),
            asm.new_label(),
            asm.new_label(),
        );
        let (h1, h2) = (asm.new_label(), asm.new_label());
        asm.emit("RESUME", 0).unwrap();
        asm.bind(outer).unwrap();
        asm.emit("NOP", 0).unwrap();
        asm.bind(inner_start).unwrap();
        asm.emit("NOP", 0).unwrap();
        asm.bind(inner_end).unwrap();
        asm.emit("NOP", 0).unwrap();
        asm.bind(end).unwrap();
        asm.emit("RETURN_CONST", 0).unwrap();
        for (start, end, handler) in [(outer, end, h1), (inner_start, inner_end, h2)] {
            asm.add_exception_range(ExceptionRange {
                start,
                end,
                handler,
                depth: 0,
                lasti: false,
            });
        }
        asm.bind(h1).unwrap();
        asm.emit("RERAISE", 0).unwrap();
        asm.bind(h2).unwrap();
        asm.emit("RERAISE", 0).unwrap();
        let out = asm.assemble(1).unwrap();
        let table = exception_table::parse(&out.exception_table).unwrap();
        let spans: Vec<_> = table.iter().map(|e| (e.start, e.end, e.target)).collect();
        assert_eq!(spans, [(2, 4, 10), (4, 6, 12), (6, 8, 10)]);
        assert_eq!(out.stack_size, 1);
    }
}
