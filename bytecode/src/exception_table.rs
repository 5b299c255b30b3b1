//! The 3.11+ exception table (`co_exceptiontable`).
//!
//! Each entry is four varints: start, length and handler (all in code units) and
//! `depth << 1 | lasti`. A varint is 6-bit chunks, most significant first, with 0x40 set on
//! every byte but the last; the first byte of every entry also has 0x80 set so the interpreter
//! can scan the table from any point. We expose entries in byte offsets, like
//! [`Instruction::offset`](crate::Instruction::offset), with an exclusive end.

use crate::error::{Error, Result};
use crate::UNIT;

/// One row of the table: instructions in `start..end` that raise go to `target`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ExceptionTableEntry {
    /// Byte offset of the first covered code unit.
    pub start: u32,
    /// Byte offset just past the last covered code unit.
    pub end: u32,
    /// Byte offset of the handler.
    pub target: u32,
    /// Stack depth the handler unwinds to before pushing (lasti and) the exception.
    pub depth: u32,
    /// Whether the offset of the raising instruction is pushed before the exception.
    pub lasti: bool,
}

impl ExceptionTableEntry {
    /// Stack depth at the first instruction of the handler.
    pub fn handler_depth(&self) -> u64 {
        u64::from(self.depth) + u64::from(self.lasti) + 1
    }

    pub fn covers(&self, offset: u32) -> bool {
        self.start <= offset && offset < self.end
    }
}

const CONTINUE: u8 = 0x40;
const ENTRY_START: u8 = 0x80;
const CHUNK: u8 = 0x3F;

/// Parses `co_exceptiontable`. Checks the syntax only; see [`encode`] for the invariants.
pub fn parse(bytes: &[u8]) -> Result<Vec<ExceptionTableEntry>> {
    let mut reader = Reader { bytes, pos: 0 };
    let mut entries = Vec::new();
    while reader.pos < bytes.len() {
        if bytes[reader.pos] & ENTRY_START == 0 {
            return Err(reader.error("entry does not start with the 0x80 marker"));
        }
        let start = reader.varint(true)?;
        let length = reader.varint(false)?;
        let target = reader.varint(false)?;
        let depth_lasti = reader.varint(false)?;
        let bytes_of = |units: Option<u64>| -> Result<u32> {
            units
                .and_then(|u| u.checked_mul(u64::from(UNIT)))
                .and_then(|b| u32::try_from(b).ok())
                .ok_or(Error::BadExceptionTable {
                    position: reader.pos,
                    reason: "offset does not fit in 32 bits",
                })
        };
        entries.push(ExceptionTableEntry {
            start: bytes_of(Some(start))?,
            end: bytes_of(start.checked_add(length))?,
            target: bytes_of(Some(target))?,
            depth: u32::try_from(depth_lasti >> 1).map_err(|_| Error::BadExceptionTable {
                position: reader.pos,
                reason: "depth does not fit in 32 bits",
            })?,
            lasti: depth_lasti & 1 == 1,
        });
    }
    Ok(entries)
}

/// Encodes entries as `co_exceptiontable`. They must be non-empty, sorted, non-overlapping and
/// on code-unit boundaries, which is what the interpreter's lookup assumes.
pub fn encode(entries: &[ExceptionTableEntry]) -> Result<Vec<u8>> {
    let mut out = Vec::with_capacity(entries.len() * 4);
    let mut previous_end = 0;
    for (index, e) in entries.iter().enumerate() {
        let invalid = |reason| Error::InvalidExceptionEntry { index, reason };
        if [e.start, e.end, e.target]
            .iter()
            .any(|o| !o.is_multiple_of(UNIT))
        {
            return Err(invalid("offsets must be even"));
        }
        if e.start >= e.end {
            return Err(invalid("entry covers no code"));
        }
        if e.start < previous_end {
            return Err(invalid("entries must be sorted and must not overlap"));
        }
        previous_end = e.end;
        let fields = [e.start / UNIT, (e.end - e.start) / UNIT, e.target / UNIT];
        let first = out.len();
        for value in fields {
            write_varint(&mut out, u64::from(value));
        }
        write_varint(&mut out, (u64::from(e.depth) << 1) | u64::from(e.lasti));
        out[first] |= ENTRY_START;
    }
    Ok(out)
}

fn write_varint(out: &mut Vec<u8>, value: u64) {
    let mut shift = 6 * ((64 - value.leading_zeros()).max(1).div_ceil(6) - 1);
    while shift > 0 {
        out.push(((value >> shift) as u8 & CHUNK) | CONTINUE);
        shift -= 6;
    }
    out.push(value as u8 & CHUNK);
}

struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl Reader<'_> {
    fn error(&self, reason: &'static str) -> Error {
        Error::BadExceptionTable {
            position: self.pos,
            reason,
        }
    }

    /// Reads one varint; only the first byte of an entry may carry the entry marker.
    fn varint(&mut self, entry_start: bool) -> Result<u64> {
        let mut value: u64 = 0;
        let mut first = true;
        loop {
            let Some(&byte) = self.bytes.get(self.pos) else {
                return Err(self.error("entry is truncated"));
            };
            if byte & ENTRY_START != 0 && !(first && entry_start) {
                return Err(self.error("entry marker inside an entry"));
            }
            if value >> 58 != 0 {
                return Err(self.error("varint is too long"));
            }
            value = (value << 6) | u64::from(byte & CHUNK);
            self.pos += 1;
            first = false;
            if byte & CONTINUE == 0 {
                return Ok(value);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_a_cpython_table() {
        // From a 3.11 function with try/except: "4 to 12 -> 26 [0]", "26 to 44 -> 136 [1] lasti", ...
        let bytes = hex("82050d008706410a008d0a410403");
        let entries = parse(&bytes).unwrap();
        assert_eq!(
            entries[0],
            ExceptionTableEntry {
                start: 4,
                end: 14,
                target: 26,
                depth: 0,
                lasti: false
            }
        );
        assert_eq!(entries[2].target, 136);
        assert!(entries[2].lasti);
        assert_eq!(entries[2].depth, 1);
        assert_eq!(encode(&entries).unwrap(), bytes);
    }

    #[test]
    fn large_values_use_several_chunks() {
        let e = ExceptionTableEntry {
            start: 0,
            end: 2 * 5000,
            target: 2 * 70000,
            depth: 3000,
            lasti: true,
        };
        let bytes = encode(&[e]).unwrap();
        assert_eq!(parse(&bytes).unwrap(), vec![e]);
    }

    #[test]
    fn rejects_bad_input() {
        assert!(parse(&[0x02]).is_err());
        assert!(parse(&[0x82, 0x41]).is_err());
        assert!(parse(&[0x82, 0x01, 0x82, 0x00]).is_err());
        let e = ExceptionTableEntry {
            start: 4,
            end: 4,
            target: 0,
            depth: 0,
            lasti: false,
        };
        assert!(encode(&[e]).is_err());
        let a = ExceptionTableEntry { end: 8, ..e };
        assert!(encode(&[a, a]).is_err());
    }

    fn hex(s: &str) -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }
}
