//! Decoding `co_code` into instructions.
//!
//! One [`Instruction`] per executable instruction: EXTENDED_ARG prefixes are folded into the
//! oparg (and counted, so offsets stay those of `co_code`), inline CACHE units are skipped, and
//! relative jumps are resolved to the index of the instruction they land on.

use crate::error::{Error, Result};
use crate::opcode::{Direction, Opcode, Version};

/// Bytes per code unit (opcode byte + oparg byte).
pub const UNIT: u32 = 2;

/// One instruction of `co_code`, with its EXTENDED_ARG prefixes and inline caches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Instruction {
    /// Byte offset of the first code unit, i.e. of the first EXTENDED_ARG prefix if any:
    /// jumps and exception-table entries point here.
    pub offset: u32,
    pub opcode: Opcode,
    /// The full oparg. Kept even for opcodes without an argument, so that re-encoding is exact.
    pub arg: u32,
    /// EXTENDED_ARG code units in front of the opcode.
    pub extended_args: u8,
    /// For jumps, the index in the decoded list of the instruction the jump lands on.
    pub target: Option<usize>,
}

impl Instruction {
    /// Offset of the opcode itself (what `dis` prints for this instruction).
    pub fn opcode_offset(&self) -> u32 {
        self.offset + UNIT * u32::from(self.extended_args)
    }

    /// Code units taken in `co_code`: prefixes, the opcode and its caches.
    pub fn units(&self) -> u32 {
        u32::from(self.extended_args) + self.opcode.units()
    }

    /// Offset just past the instruction's last cache unit.
    pub fn end_offset(&self) -> u32 {
        self.offset + UNIT * self.units()
    }

    /// The oparg as `dis` reports it: `None` for opcodes that ignore their argument.
    pub fn dis_arg(&self) -> Option<u32> {
        self.opcode.has_arg().then_some(self.arg)
    }
}

/// Decodes `co_code` of the given version.
pub fn decode(version: Version, code: &[u8]) -> Result<Vec<Instruction>> {
    if !code.len().is_multiple_of(2) {
        return Err(Error::TruncatedCode {
            offset: offset_of(code.len() - 1),
            reason: "odd number of bytes",
        });
    }
    let extended_arg = version.extended_arg();
    let mut out = Vec::new();
    let mut unit = 0usize;
    let units = code.len() / 2;
    while unit < units {
        let start = unit;
        let mut arg: u32 = 0;
        let mut prefixes: u8 = 0;
        let opcode = loop {
            if unit >= units {
                return Err(Error::TruncatedCode {
                    offset: offset_of(2 * start),
                    reason: "EXTENDED_ARG without a following instruction",
                });
            }
            let (byte, oparg) = (code[2 * unit], code[2 * unit + 1]);
            let opcode = version.opcode_by_number(byte).ok_or(Error::UnknownOpcode {
                version,
                number: byte.into(),
                offset: offset_of(2 * unit),
            })?;
            arg = (arg << 8) | u32::from(oparg);
            unit += 1;
            if opcode != extended_arg {
                break opcode;
            }
            prefixes = prefixes.saturating_add(1);
        };
        unit += usize::from(opcode.caches());
        if unit > units {
            return Err(Error::TruncatedCode {
                offset: offset_of(2 * start),
                reason: "inline caches run past the end of the code",
            });
        }
        out.push(Instruction {
            offset: offset_of(2 * start),
            opcode,
            arg,
            extended_args: prefixes,
            target: None,
        });
    }
    resolve_jumps(&mut out)?;
    Ok(out)
}

/// Index of the instruction starting at `offset`, if one does.
pub fn index_at_offset(instructions: &[Instruction], offset: u32) -> Option<usize> {
    instructions
        .binary_search_by_key(&offset, |i| i.offset)
        .ok()
}

/// Offset a relative jump lands on, computed from where it ends in `co_code`.
fn jump_destination(inst: &Instruction, direction: Direction) -> i64 {
    let end = i64::from(inst.end_offset());
    let distance = i64::from(UNIT) * i64::from(inst.arg);
    match direction {
        Direction::Forward => end + distance,
        Direction::Backward => end - distance,
    }
}

fn resolve_jumps(instructions: &mut [Instruction]) -> Result<()> {
    for i in 0..instructions.len() {
        let inst = instructions[i];
        let Some(jump) = inst.opcode.jump() else {
            continue;
        };
        let target = jump_destination(&inst, jump.direction);
        let index = u32::try_from(target)
            .ok()
            .and_then(|t| index_at_offset(instructions, t))
            .ok_or(Error::BadJumpTarget {
                offset: inst.opcode_offset(),
                target,
            })?;
        instructions[i].target = Some(index);
    }
    Ok(())
}

fn offset_of(byte: usize) -> u32 {
    u32::try_from(byte).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v311(name: &str) -> u8 {
        Version::V3_11.opcode(name).unwrap().number() as u8
    }

    #[test]
    fn folds_extended_args_and_skips_caches() {
        let code = [
            v311("RESUME"),
            0,
            v311("EXTENDED_ARG"),
            1,
            v311("LOAD_CONST"),
            2,
            v311("BINARY_SUBSCR"),
            0,
            0,
            0,
            0,
            0,
            0,
            0,
            0,
            0,
            v311("RETURN_VALUE"),
            0,
        ];
        let insts = decode(Version::V3_11, &code).unwrap();
        assert_eq!(insts.len(), 4);
        assert_eq!(insts[1].offset, 2);
        assert_eq!(insts[1].opcode_offset(), 4);
        assert_eq!(insts[1].arg, 0x102);
        assert_eq!(insts[2].end_offset(), 16);
        assert_eq!(insts[3].offset, 16);
    }

    #[test]
    fn resolves_jumps_and_rejects_bad_ones() {
        let j = v311("JUMP_FORWARD");
        let nop = v311("NOP");
        let code = [j, 1, nop, 0, nop, 0];
        let insts = decode(Version::V3_11, &code).unwrap();
        assert_eq!(insts[0].target, Some(2));
        let back = [nop, 0, v311("JUMP_BACKWARD"), 2];
        assert_eq!(decode(Version::V3_11, &back).unwrap()[1].target, Some(0));
        assert!(matches!(
            decode(Version::V3_11, &[j, 7, nop, 0]),
            Err(Error::BadJumpTarget { .. })
        ));
        assert!(matches!(
            decode(Version::V3_11, &[v311("JUMP_BACKWARD"), 9]),
            Err(Error::BadJumpTarget { .. })
        ));
    }

    #[test]
    fn rejects_malformed_bytes() {
        let v = Version::V3_11;
        assert!(matches!(decode(v, &[1]), Err(Error::TruncatedCode { .. })));
        assert!(matches!(
            decode(v, &[v311("EXTENDED_ARG"), 1]),
            Err(Error::TruncatedCode { .. })
        ));
        assert!(matches!(
            decode(v, &[v311("LOAD_GLOBAL"), 1, 0, 0]),
            Err(Error::TruncatedCode { .. })
        ));
        assert!(matches!(
            decode(v, &[255, 0]),
            Err(Error::UnknownOpcode { number: 255, .. })
        ));
    }
}
