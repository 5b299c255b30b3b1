//! The 3.11/3.12 location table (`co_linetable`).
//!
//! Each entry covers 1 to 8 code units and starts with a byte `1CCCCLLL`: `LLL` is the unit
//! count minus one, `CCCC` picks the form:
//!
//! | code  | form        | payload                                                          |
//! |-------|-------------|------------------------------------------------------------------|
//! | 0-9   | short       | one byte; same line; `col = code*8 + hi3`, `end_col = col + lo4` |
//! | 10-12 | one-line    | line delta `code-10`, then `col`, `end_col` bytes                |
//! | 13    | no column   | signed varint line delta                                         |
//! | 14    | long        | signed line delta, end-line delta, `col+1`, `end_col+1` varints  |
//! | 15    | no location | nothing                                                          |
//!
//! Varints here are 6-bit chunks, least significant first, 0x40 meaning "more"; a signed varint
//! stores `|d| << 1 | sign`. Line deltas are relative to the previous entry that had a line,
//! starting from `co_firstlineno`.
//!
//! [`parse`] keeps each entry's form so [`encode`] reproduces the bytes exactly;
//! [`LineTableWriter`] picks the most compact form the way CPython's compiler does.

use std::fmt;

use crate::error::{Error, Result};
use crate::opcode::Version;

/// Source span of an instruction, as `dis.Positions` gives it. All fields `None` means "no
/// location" (artificial instructions).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Position {
    pub line: Option<i32>,
    pub end_line: Option<i32>,
    pub col: Option<u32>,
    pub end_col: Option<u32>,
}

impl Position {
    /// No source location.
    pub const NONE: Position = Position {
        line: None,
        end_line: None,
        col: None,
        end_col: None,
    };

    /// A whole line, without columns (what the table decodes a "no column" entry to).
    pub fn line(line: i32) -> Position {
        Position {
            line: Some(line),
            end_line: Some(line),
            col: None,
            end_col: None,
        }
    }

    /// A full span; columns are 0-based UTF-8 byte offsets as in CPython.
    pub fn span(line: i32, end_line: i32, col: u32, end_col: u32) -> Position {
        Position {
            line: Some(line),
            end_line: Some(end_line),
            col: Some(col),
            end_col: Some(end_col),
        }
    }
}

impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let show = |v: Option<i64>| v.map_or("None".to_owned(), |v| v.to_string());
        write!(
            f,
            "({}, {}, {}, {})",
            show(self.line.map(i64::from)),
            show(self.end_line.map(i64::from)),
            show(self.col.map(i64::from)),
            show(self.end_col.map(i64::from))
        )
    }
}

/// How an entry is encoded; see the module table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LocationForm {
    Short,
    OneLine,
    NoColumn,
    Long,
    NoLocation,
}

/// One entry of the table: `units` code units that share `position`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LineTableEntry {
    /// 1 to 8.
    pub units: u8,
    pub form: LocationForm,
    pub position: Position,
}

const ENTRY_START: u8 = 0x80;
const CONTINUE: u8 = 0x40;
const CHUNK: u8 = 0x3F;
const MAX_UNITS: u32 = 8;
const NO_COLUMN: u8 = 13;
const LONG: u8 = 14;
const NO_LOCATION: u8 = 15;

/// Parses `co_linetable` given `co_firstlineno`.
pub fn parse(bytes: &[u8], first_lineno: i32) -> Result<Vec<LineTableEntry>> {
    let mut r = Reader { bytes, pos: 0 };
    let mut line = i64::from(first_lineno);
    let mut entries = Vec::new();
    while r.pos < bytes.len() {
        let head = bytes[r.pos];
        if head & ENTRY_START == 0 {
            return Err(r.error("entry does not start with the 0x80 marker"));
        }
        r.pos += 1;
        let code = (head >> 3) & 0xF;
        let units = (head & 7) + 1;
        let (form, position) = match code {
            0..=9 => {
                let b = r.byte()?;
                let col = u32::from(code) * 8 + u32::from((b >> 4) & 7);
                let end_col = col + u32::from(b & 0xF);
                (LocationForm::Short, r.same_line(line, col, end_col)?)
            }
            10..=12 => {
                line += i64::from(code - 10);
                let (col, end_col) = (r.byte()?, r.byte()?);
                let pos = r.same_line(line, col.into(), end_col.into())?;
                (LocationForm::OneLine, pos)
            }
            NO_COLUMN => {
                line += r.svarint()?;
                let l = r.line(line)?;
                (LocationForm::NoColumn, Position::line(l))
            }
            LONG => {
                line += r.svarint()?;
                let end_line = line + i64::try_from(r.varint()?).unwrap_or(i64::MAX);
                let col = r.column()?;
                let end_col = r.column()?;
                let pos = Position {
                    line: Some(r.line(line)?),
                    end_line: Some(r.line(end_line)?),
                    col,
                    end_col,
                };
                (LocationForm::Long, pos)
            }
            _ => (LocationForm::NoLocation, Position::NONE),
        };
        entries.push(LineTableEntry {
            units,
            form,
            position,
        });
    }
    Ok(entries)
}

/// Encodes entries in exactly the forms they name, so `encode(parse(b)) == b`.
pub fn encode(entries: &[LineTableEntry], first_lineno: i32) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    let mut line = i64::from(first_lineno);
    for e in entries {
        if !(1..=MAX_UNITS).contains(&u32::from(e.units)) {
            return Err(invalid(e.position, "an entry covers 1 to 8 code units"));
        }
        write_entry(&mut out, &mut line, e.form, e.position, e.units)?;
    }
    Ok(out)
}

/// Expands entries to one position per code unit (what `co_positions()` yields).
pub fn positions_by_unit(entries: &[LineTableEntry]) -> Vec<Position> {
    entries
        .iter()
        .flat_map(|e| std::iter::repeat_n(e.position, e.units.into()))
        .collect()
}

/// Builds a table instruction by instruction with the most compact forms.
///
/// 3.11 writes one entry (or more, in chunks of 8 units) per instruction; 3.12 first merges
/// consecutive instructions with the same position. Matching that makes assembled tables
/// identical to CPython's.
#[derive(Debug, Clone)]
pub struct LineTableWriter {
    merge_equal: bool,
    line: i64,
    pending: Option<(Position, u32)>,
    out: Vec<u8>,
}

impl LineTableWriter {
    pub fn new(version: Version, first_lineno: i32) -> Self {
        LineTableWriter {
            merge_equal: version >= Version::V3_12,
            line: i64::from(first_lineno),
            pending: None,
            out: Vec::new(),
        }
    }

    /// Adds an instruction of `units` code units (prefixes and caches included).
    pub fn push(&mut self, position: Position, units: u32) -> Result<()> {
        match &mut self.pending {
            Some((p, n)) if self.merge_equal && *p == position => *n += units,
            _ => {
                self.flush()?;
                self.pending = Some((position, units));
            }
        }
        Ok(())
    }

    pub fn finish(mut self) -> Result<Vec<u8>> {
        self.flush()?;
        Ok(self.out)
    }

    fn flush(&mut self) -> Result<()> {
        let Some((position, mut units)) = self.pending.take() else {
            return Ok(());
        };
        while units > 0 {
            let chunk = units.min(MAX_UNITS);
            let form = compact_form(position, self.line)?;
            write_entry(&mut self.out, &mut self.line, form, position, chunk as u8)?;
            units -= chunk;
        }
        Ok(())
    }
}

/// The form CPython's compiler would pick for `position` after a line of `prev_line`.
fn compact_form(p: Position, prev_line: i64) -> Result<LocationForm> {
    let Some(line) = p.line else {
        return Ok(LocationForm::NoLocation);
    };
    let delta = i64::from(line) - prev_line;
    let same_line = p.end_line.is_none_or(|e| e == line);
    let form = match (p.col, p.end_col) {
        (Some(col), Some(end_col)) if same_line => {
            if delta == 0 && col < 80 && end_col >= col && end_col - col < 16 {
                LocationForm::Short
            } else if (0..3).contains(&delta) && col < 128 && end_col < 128 {
                LocationForm::OneLine
            } else {
                LocationForm::Long
            }
        }
        (Some(_), Some(_)) => LocationForm::Long,
        _ if same_line => LocationForm::NoColumn,
        _ => LocationForm::Long,
    };
    Ok(form)
}

fn write_entry(
    out: &mut Vec<u8>,
    line: &mut i64,
    form: LocationForm,
    p: Position,
    units: u8,
) -> Result<()> {
    let head = |code: u8| ENTRY_START | (code << 3) | (units - 1);
    let Some(start) = p.line.map(i64::from) else {
        if form != LocationForm::NoLocation || p != Position::NONE {
            return Err(invalid(
                p,
                "a position without a line must be empty and use NoLocation",
            ));
        }
        out.push(head(NO_LOCATION));
        return Ok(());
    };
    let delta = start - *line;
    // Short and one-line forms imply end_line == line; a missing end_line means the same.
    let one_line = p.end_line.is_none_or(|e| i64::from(e) == start);
    match (form, p.col, p.end_col) {
        (LocationForm::Short, Some(col), Some(end_col))
            if delta == 0 && one_line && col < 80 && end_col >= col && end_col - col < 16 =>
        {
            out.push(head((col / 8) as u8));
            out.push((((col % 8) as u8) << 4) | (end_col - col) as u8);
        }
        (LocationForm::OneLine, Some(col), Some(end_col))
            if (0..3).contains(&delta) && one_line && col < 128 && end_col < 128 =>
        {
            out.push(head(10 + delta as u8));
            out.push(col as u8);
            out.push(end_col as u8);
        }
        (LocationForm::NoColumn, _, _) if one_line => {
            out.push(head(NO_COLUMN));
            write_svarint(out, delta);
        }
        (LocationForm::Long, col, end_col) => {
            let end = p.end_line.map_or(start, i64::from);
            if end < start {
                return Err(invalid(p, "end_line is before line"));
            }
            out.push(head(LONG));
            write_svarint(out, delta);
            write_varint(out, (end - start) as u64);
            write_varint(out, col.map_or(0, |c| u64::from(c) + 1));
            write_varint(out, end_col.map_or(0, |c| u64::from(c) + 1));
        }
        _ => return Err(invalid(p, "the entry's form cannot hold this position")),
    }
    *line = start;
    Ok(())
}

fn invalid(position: Position, reason: &'static str) -> Error {
    Error::InvalidPosition {
        position: position.to_string(),
        reason,
    }
}

fn write_varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 64 {
        out.push(CONTINUE | (value as u8 & CHUNK));
        value >>= 6;
    }
    out.push(value as u8);
}

fn write_svarint(out: &mut Vec<u8>, value: i64) {
    let magnitude = value.unsigned_abs();
    write_varint(out, (magnitude << 1) | u64::from(value < 0));
}

struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl Reader<'_> {
    fn error(&self, reason: &'static str) -> Error {
        Error::BadLineTable {
            position: self.pos,
            reason,
        }
    }

    /// A payload byte; only entry heads have the top bit set.
    fn byte(&mut self) -> Result<u8> {
        match self.bytes.get(self.pos) {
            None => Err(self.error("entry is truncated")),
            Some(&b) if b & ENTRY_START != 0 => Err(self.error("entry marker inside an entry")),
            Some(&b) => {
                self.pos += 1;
                Ok(b)
            }
        }
    }

    fn varint(&mut self) -> Result<u64> {
        let mut value = 0u64;
        let mut shift = 0;
        loop {
            let b = self.byte()?;
            if shift >= 64 || (u64::from(b & CHUNK) << shift) >> shift != u64::from(b & CHUNK) {
                return Err(self.error("varint is too long"));
            }
            value |= u64::from(b & CHUNK) << shift;
            shift += 6;
            if b & CONTINUE == 0 {
                return Ok(value);
            }
        }
    }

    fn svarint(&mut self) -> Result<i64> {
        let v = self.varint()?;
        let magnitude = i64::try_from(v >> 1).map_err(|_| self.error("line delta is too large"))?;
        Ok(if v & 1 == 1 { -magnitude } else { magnitude })
    }

    fn column(&mut self) -> Result<Option<u32>> {
        match self.varint()? {
            0 => Ok(None),
            v => u32::try_from(v - 1)
                .map(Some)
                .map_err(|_| self.error("column does not fit in 32 bits")),
        }
    }

    fn line(&self, line: i64) -> Result<i32> {
        i32::try_from(line).map_err(|_| self.error("line number does not fit in 32 bits"))
    }

    fn same_line(&self, line: i64, col: u32, end_col: u32) -> Result<Position> {
        let l = self.line(line)?;
        Ok(Position::span(l, l, col, end_col))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_every_form() {
        // first_lineno 2: RESUME (short, line 2), then one-line +1, long, no column, no location.
        let mut w = LineTableWriter::new(Version::V3_11, 2);
        let positions = [
            Position::span(2, 2, 0, 0),
            Position::span(3, 3, 9, 10),
            Position::span(3, 4, 8, 8),
            Position::line(10),
            Position::NONE,
            Position::span(5, 5, 200, 300),
        ];
        for p in positions {
            w.push(p, 1).unwrap();
        }
        let bytes = w.finish().unwrap();
        let entries = parse(&bytes, 2).unwrap();
        let forms: Vec<_> = entries.iter().map(|e| e.form).collect();
        use LocationForm::*;
        assert_eq!(forms, [Short, OneLine, Long, NoColumn, NoLocation, Long]);
        assert_eq!(positions_by_unit(&entries), positions);
        assert_eq!(encode(&entries, 2).unwrap(), bytes);
    }

    #[test]
    fn long_instructions_are_split_and_312_merges() {
        let p = Position::span(7, 7, 4, 12);
        let mut w = LineTableWriter::new(Version::V3_11, 7);
        w.push(p, 10).unwrap();
        w.push(p, 1).unwrap();
        let entries = parse(&w.finish().unwrap(), 7).unwrap();
        assert_eq!(
            entries.iter().map(|e| e.units).collect::<Vec<_>>(),
            [8, 2, 1]
        );
        let mut w = LineTableWriter::new(Version::V3_12, 7);
        w.push(p, 10).unwrap();
        w.push(p, 1).unwrap();
        let entries = parse(&w.finish().unwrap(), 7).unwrap();
        assert_eq!(entries.iter().map(|e| e.units).collect::<Vec<_>>(), [8, 3]);
    }

    #[test]
    fn rejects_bad_bytes_and_positions() {
        assert!(parse(&[0x00], 1).is_err());
        assert!(parse(&[0x80], 1).is_err());
        assert!(parse(&[0xF0 | 0x08, 0x41], 1).is_err());
        assert!(parse(&[0xE8, 0xC1], 1).is_err());
        let bad = LineTableEntry {
            units: 1,
            form: LocationForm::Short,
            position: Position::span(9, 9, 100, 101),
        };
        assert!(encode(&[bad], 9).is_err());
        let mut w = LineTableWriter::new(Version::V3_11, 9);
        w.push(Position::span(9, 8, 1, 2), 1).unwrap();
        assert!(w.finish().is_err());
    }
}
