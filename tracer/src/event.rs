//! Typed records of what the tracer reports to the user: a place in user code ([`Location`]), a
//! graph break or eager fallback ([`BreakSite`]), a guard ([`GuardRecord`]) and a failed guard
//! ([`FailedCheck`]).
//!
//! They are the one source of truth for both faces of a report: the log text is rendered from
//! them here (`Display`, [`BreakSite::message`], [`GuardRecord::line`]), and `log` hands the same
//! records to Python as dicts with fixed keys, so `explain`, log artifacts, trace files and the
//! report read fields instead of parsing the text back. This module depends on no other tracer
//! module but `source`, so guards, errors and the log can all use it without an import circle.

use std::fmt;

use crate::source::{Source, Step};

/// A line of user code.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Location {
    pub filename: String,
    pub lineno: u32,
}

impl Location {
    pub fn new(filename: impl Into<String>, lineno: u32) -> Location {
        Location {
            filename: filename.into(),
            lineno,
        }
    }
}

/// `file:line`, as in every message that points at user code.
impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.filename, self.lineno)
    }
}

/// One frame of the inlined call stack at a graph break: the function running and its line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FrameSite {
    pub function: String,
    pub location: Location,
}

/// `function at file:line`.
impl fmt::Display for FrameSite {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at {}", self.function, self.location)
    }
}

/// Why tracing stopped: a graph break, or a frame that runs eagerly instead.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BreakSite {
    /// What could not be traced, without the location.
    pub reason: String,
    /// The user line that was running (in the innermost inlined function).
    pub location: Option<Location>,
    /// The inlined calls active when tracing stopped, innermost first; the root frame last.
    pub frames: Vec<FrameSite>,
}

impl BreakSite {
    /// `reason (at file:line)`, plus the inlined calls that led there when there were any: the
    /// text of the graph-break log, of `fullgraph=True` errors and of `cache_entries`.
    pub fn message(&self) -> String {
        let mut msg = match &self.location {
            Some(l) => format!("{} (at {l})", self.reason),
            None => format!("{} (at ?)", self.reason),
        };
        if self.frames.len() > 1 {
            msg.push_str("\n  inlined call stack (innermost first):");
            for f in &self.frames {
                msg.push_str(&format!("\n    {f}"));
            }
        }
        msg
    }

    /// The same site with another reason (the reason a break cannot resume is appended).
    pub fn with_reason(&self, reason: String) -> BreakSite {
        BreakSite {
            reason,
            ..self.clone()
        }
    }
}

/// A value a guard compared, as data: an integer (a size, a stride, a rank) or the text of an
/// object (a dtype, a device, a type name).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Value {
    Int(i64),
    Text(String),
}

/// Which property of a tensor differed, with the compiled and the new value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mismatch {
    /// `type`, `dtype`, `device`, `requires_grad`, `layout`, `rank`, `size`, `stride`, or the
    /// attribute the value lacked (`has no dtype`: property `dtype`, no values).
    pub property: &'static str,
    /// The dimension, for `size` and `stride`.
    pub index: Option<usize>,
    pub expected: Option<Value>,
    pub actual: Option<Value>,
}

/// One failing guard of a cache entry: the guard's kind (`TENSOR_MATCH`, `TYPE_MATCH`, ...), the
/// value it checks, why it failed and the user line whose use of the value made it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FailedCheck {
    pub kind: &'static str,
    /// The value's source path (`L['x']`); none for process-wide state (grad mode, autocast).
    pub source: Option<String>,
    /// The source as the user would write it (`x`, `self.fc.weight`).
    pub expr: Option<String>,
    /// The recompile-log text.
    pub reason: String,
    pub origin: Option<Location>,
    /// For tensor checks, the property that differed.
    pub mismatch: Option<Mismatch>,
}

impl FailedCheck {
    /// A failure of process-wide state (no source, no origin).
    pub fn global(kind: &'static str, reason: String) -> FailedCheck {
        FailedCheck {
            kind,
            source: None,
            expr: None,
            reason,
            origin: None,
            mismatch: None,
        }
    }
}

/// The first failing guard of a cache entry (the entry compiled as `compile_id`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GuardFailure {
    pub compile_id: (u32, u32),
    pub check: FailedCheck,
}

impl GuardFailure {
    /// `frame/compile: reason`, one line of the recompile log.
    pub fn line(&self) -> String {
        format!(
            "{}/{}: {}",
            self.compile_id.0, self.compile_id.1, self.check.reason
        )
    }
}

/// One guard of a compiled entry, for logs, `cache_entries`, `explain` and reports.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GuardRecord {
    pub kind: &'static str,
    /// The value checked (`L['x']`); none for process-wide state.
    pub source: Option<String>,
    /// The guard as text, starting with its kind (`TENSOR_MATCH L['x']: ...`).
    pub text: String,
    pub origin: Option<Location>,
}

impl GuardRecord {
    /// The guard's log line: its text, then `  # file:line` of the user line that made it.
    pub fn line(&self) -> String {
        match &self.origin {
            Some(o) => format!("{}  # {o}", self.text),
            None => self.text.clone(),
        }
    }
}

/// A source as the user would write it: the root's plain name (`L['xs'][0]` is `xs[0]`,
/// `G['w']` is `w`), the accessor steps after it as they are.
pub fn python_expr(source: &Source) -> String {
    let steps = source.steps();
    let mut out = match steps.first() {
        Some(Step::Local { name, .. }) | Some(Step::Cell { name, .. }) => name.clone(),
        Some(Step::Global { name }) => name.to_string(),
        _ => return source.to_string(),
    };
    for step in &steps[1..] {
        match step {
            Step::Attr { name } => out.push_str(&format!(".{name}")),
            Step::Item { repr, .. } => out.push_str(&format!("[{repr}]")),
            // Roots appear only first; render any other step as the source does.
            _ => return source.to_string(),
        }
    }
    out
}
