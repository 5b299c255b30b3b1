//! Loading code-object corpora recorded from real interpreters.
//!
//! The shared fixtures (`shared/fixtures/bytecode/fixtures-3.1x.json`, next to the repository)
//! and the crate's own `tests/data/*.json` use the same format: one object per code object with
//! the raw fields as hex and the `dis` instruction list, CACHE units included.

// Each test binary uses its own part of this module.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use bytecode::Version;
use serde::Deserialize;

#[derive(Debug, Deserialize)]
pub struct Corpus {
    pub python: String,
    pub fixtures: Vec<CodeFixture>,
}

#[derive(Debug, Deserialize)]
pub struct CodeFixture {
    pub qualname: String,
    pub firstlineno: i32,
    pub stacksize: u32,
    pub code_hex: String,
    pub exceptiontable_hex: String,
    pub linetable_hex: String,
    pub instructions: Vec<DisInstruction>,
    /// `co_names` (absent from older corpora).
    #[serde(default)]
    pub names: Vec<String>,
    /// `dis.dis` output, exception table listing included (absent from older corpora).
    #[serde(default)]
    pub dis: String,
}

/// One code unit as `dis.get_instructions(code, show_caches=True)` reports it.
#[derive(Debug, Deserialize)]
pub struct DisInstruction {
    pub offset: u32,
    pub opname: String,
    pub opcode: u16,
    pub arg: Option<u32>,
    pub argrepr: String,
    pub is_jump_target: bool,
    pub line: Option<i32>,
}

impl CodeFixture {
    pub fn code(&self) -> Vec<u8> {
        unhex(&self.code_hex)
    }
    pub fn exception_table(&self) -> Vec<u8> {
        unhex(&self.exceptiontable_hex)
    }
    pub fn line_table(&self) -> Vec<u8> {
        unhex(&self.linetable_hex)
    }
}

pub fn shared_fixture(file: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/fixtures/bytecode")
        .join(file)
}

pub fn local_fixture(file: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(file)
}

/// Loads a corpus; a missing file fails the test rather than skipping it.
pub fn load(path: &Path, version: Version) -> Corpus {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| {
        panic!(
            "cannot read bytecode fixtures at {} ({e}); the shared fixtures must sit next to \
             the repository (shared/fixtures/bytecode)",
            path.display()
        )
    });
    let corpus: Corpus = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("{} is not a fixture corpus: {e}", path.display()));
    assert!(
        corpus.python.starts_with(&version.to_string()),
        "{} was recorded with Python {}, expected {version}",
        path.display(),
        corpus.python
    );
    assert!(
        !corpus.fixtures.is_empty(),
        "{} has no code objects",
        path.display()
    );
    corpus
}

pub fn unhex(s: &str) -> Vec<u8> {
    assert!(s.len().is_multiple_of(2), "odd-length hex string");
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("valid hex"))
        .collect()
}
