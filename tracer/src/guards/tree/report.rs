//! The guard trie described: failing checks as recompile reasons and records, and every guard
//! as a line of the guard listing. Only the slow paths (a miss, a log, `cache_entries`) come
//! here; the walk that decides a hit is in the parent module.

use pyo3::prelude::*;

use crate::event::{FailedCheck, GuardRecord};
use crate::source::{apply_step, resolve, Scope, Source};

use super::super::check::Check;
use super::super::repr::{py_bool, short_repr, type_name};
use super::super::torch_state::{autocast_state, grad_enabled};
use super::{GuardNode, GuardTree};

impl GuardTree {
    /// Every failing guard, as recompile-log reasons. Stops at the first failure per value.
    pub fn failures(&self, py: Python<'_>, scope: &Scope) -> Vec<String> {
        self.failed_checks(py, scope)
            .into_iter()
            .map(|f| f.reason)
            .collect()
    }

    /// Every failing guard as a record: its kind, source, reason and the user line that made it.
    pub fn failed_checks(&self, py: Python<'_>, scope: &Scope) -> Vec<FailedCheck> {
        let mut out: Vec<FailedCheck> = Vec::new();
        if let Some(g) = &self.globals {
            if g.as_ptr() != scope.globals {
                out.push(FailedCheck::global(
                    "GLOBALS",
                    "the function runs with a different globals dict".to_string(),
                ));
                return out;
            }
        }
        let grad = grad_enabled(py);
        if grad != self.grad_enabled {
            out.push(FailedCheck::global(
                "GRAD_MODE",
                format!(
                    "grad mode mismatch. expected torch.is_grad_enabled()={}, actual {}",
                    py_bool(self.grad_enabled),
                    py_bool(grad)
                ),
            ));
        }
        let autocast = autocast_state(py);
        if autocast != self.autocast {
            let show = |a: &Option<String>| a.clone().unwrap_or_else(|| "off".into());
            out.push(FailedCheck::global(
                "AUTOCAST",
                format!(
                    "autocast mismatch. expected {}, actual {}",
                    show(&self.autocast),
                    show(&autocast)
                ),
            ));
        }
        self.global.failures(py, &mut out);
        for n in &self.roots {
            let root = scope.root(&n.step);
            if root.is_null() {
                if n.first_check().is_some() {
                    out.push(n.unreadable("is missing"));
                }
                continue;
            }
            // SAFETY: root is a borrowed live object; take our own reference.
            let v = unsafe { Bound::from_borrowed_ptr(py, root) };
            n.collect_failures(py, &v, &mut out);
        }
        for (a, b, same) in &self.identities {
            let actual = match (resolve(py, scope, a), resolve(py, scope, b)) {
                (Some(x), Some(y)) => Some(x.is(&y)),
                _ => None,
            };
            if actual != Some(*same) {
                let shown = actual.map_or("unreadable", |v| if v { "True" } else { "False" });
                out.push(FailedCheck::global(
                    "OBJECT_ALIASING",
                    format!(
                        "{a} is {b} mismatch. expected {}, actual {shown}",
                        py_bool(*same)
                    ),
                ));
            }
        }
        for g in &self.distinct {
            let holds = GuardTree::distinct_holds(py, scope, g);
            if holds != Some(true) {
                let shown = holds.map_or("unreadable", |_| "two are one object");
                out.push(FailedCheck::global(
                    "OBJECT_ALIASING",
                    format!("{} are distinct objects mismatch: {shown}", list_sources(g)),
                ));
            }
        }
        // Only when the tensors themselves passed: a size guard on a tensor of another rank
        // says nothing more.
        if out.is_empty() {
            if let Some(s) = &self.shape {
                s.failures(py, scope, &mut out);
            }
        }
        out
    }

    /// One line per guard, for logs and `cache_entries`.
    pub fn describe(&self) -> Vec<String> {
        self.records().iter().map(GuardRecord::line).collect()
    }

    /// Every guard as a record (kind, source, text, origin), in the order of `describe`.
    pub fn records(&self) -> Vec<GuardRecord> {
        let global = |kind: &'static str, text: String| GuardRecord {
            kind,
            source: None,
            text,
            origin: None,
        };
        let mut out = vec![global(
            "GRAD_MODE",
            format!(
                "GRAD_MODE torch.is_grad_enabled() == {}",
                py_bool(self.grad_enabled)
            ),
        )];
        if let Some(a) = &self.autocast {
            out.push(global("AUTOCAST", format!("AUTOCAST {a}")));
        }
        Python::attach(|py| self.global.describe(py, &mut out));
        for n in &self.roots {
            n.describe(&mut out);
        }
        for (a, b, same) in &self.identities {
            let op = if *same { "is" } else { "is not" };
            out.push(global(
                "OBJECT_ALIASING",
                format!("OBJECT_ALIASING {a} {op} {b}"),
            ));
        }
        for g in &self.distinct {
            out.push(global(
                "OBJECT_ALIASING",
                format!("OBJECT_ALIASING {} are distinct objects", list_sources(g)),
            ));
        }
        if let Some(s) = &self.shape {
            s.describe(&mut out);
        }
        out
    }
}

/// `a, b, c` for a group of sources in a guard line.
fn list_sources(g: &[Source]) -> String {
    g.iter()
        .map(|s| s.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

impl GuardNode {
    /// The failure of a value that could not be fetched (`is missing`, `could not be read`),
    /// reported as a failure of the first check that needed it.
    fn unreadable(&self, what: &str) -> FailedCheck {
        let first = self.first_check();
        let source = first.map(|c| c.source.to_string()).unwrap_or_default();
        FailedCheck {
            kind: first.map_or("", |c| c.check.kind_name()),
            expr: first.map(|c| crate::event::python_expr(&c.source)),
            reason: format!("{source} {what}"),
            source: Some(source),
            origin: None,
            mismatch: None,
        }
    }

    fn collect_failures(&self, py: Python<'_>, v: &Bound<'_, PyAny>, out: &mut Vec<FailedCheck>) {
        for c in &self.checks {
            if let Err(reason) = c.check.eval(py, v, &c.source, true) {
                let mismatch = match &c.check {
                    Check::Tensor(t) => t.first_mismatch(py, v).map(|m| t.mismatch_record(py, &m)),
                    _ => None,
                };
                out.push(FailedCheck {
                    kind: c.check.kind_name(),
                    source: Some(c.source.to_string()),
                    expr: Some(crate::event::python_expr(&c.source)),
                    reason,
                    origin: c.origin.clone(),
                    mismatch,
                });
                return;
            }
        }
        for child in &self.children {
            let Some(nv) = apply_step(v, &child.step) else {
                // A node only a `distinct` group reads has no check to name: the group's own
                // failure reports it.
                if child.first_check().is_some() {
                    out.push(child.unreadable("could not be read"));
                }
                continue;
            };
            child.collect_failures(py, &nv, out);
        }
    }

    fn describe(&self, out: &mut Vec<GuardRecord>) {
        Python::attach(|py| {
            for c in &self.checks {
                let text = match &c.check {
                    Check::Tensor(t) => format!(
                        "TENSOR_MATCH {}: {}, {}, size={}, stride={}, requires_grad={}",
                        c.source,
                        t.dtype.bind(py),
                        t.device.bind(py),
                        t.sizes_text(),
                        t.strides_text(),
                        py_bool(t.requires_grad)
                    ),
                    Check::Type(ty) => {
                        format!(
                            "TYPE_MATCH {}: {}",
                            c.source,
                            type_name(ty.bind(py).as_any())
                        )
                    }
                    Check::Id(o) => format!("ID_MATCH {}: {}", c.source, short_repr(o.bind(py))),
                    Check::WeakId(t) => format!(
                        "ID_MATCH {}: {}",
                        c.source,
                        t.object(py)
                            .map(|o| short_repr(&o))
                            .unwrap_or_else(|| "<collected>".to_string())
                    ),
                    Check::Equals(o) => {
                        format!("EQUALS_MATCH {} == {}", c.source, short_repr(o.bind(py)))
                    }
                    Check::IsNone => format!("NONE_MATCH {} is None", c.source),
                    Check::Len(n) => format!("LENGTH_CHECK len({}) == {n}", c.source),
                    Check::HasAttr(name, present) => format!(
                        "HASATTR {}: hasattr(.., {name:?}) is {}",
                        c.source,
                        py_bool(*present)
                    ),
                    Check::NotInDict(name) => format!(
                        "NOT_PRESENT_IN_GENERIC_DICT {}: {name:?} not in __dict__",
                        c.source
                    ),
                    Check::DictKeys(k) => format!(
                        "DICT_KEYS {} == [{}]",
                        c.source,
                        k.iter()
                            .map(|k| short_repr(k.bind(py)))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                };
                let kind = c.check.kind_name();
                debug_assert!(text.starts_with(kind), "{text} is not a {kind} line");
                out.push(GuardRecord {
                    kind,
                    source: Some(c.source.to_string()),
                    text,
                    origin: c.origin.clone(),
                });
            }
        });
        for child in &self.children {
            child.describe(out);
        }
    }
}
