//! What changed on a call that missed, for automatic dynamic: the static tensor sizes and the
//! frame-local ints guarded equal that differ now (read after the walk said no, never on a hit).

use pyo3::prelude::*;

use crate::source::{apply_step, resolve, Scope, Source, Step};

use super::super::check::Check;
use super::{GuardNode, GuardTree};

impl GuardTree {
    /// Static tensor dimensions whose size differs on this call (automatic dynamic): source
    /// text, dimension, the size compiled for and the new size. Tensors of another rank,
    /// dtype or type say nothing about sizes and are left out, and so are parameters: they
    /// stay static (torch's `force_parameter_static_shapes`), so a change is no news (a
    /// `Linear.forward` frame reached from two layers sees two weights). With `symbolic_too`
    /// (`dynamic=True`) dimensions compiled as symbols count as well, against the size they had
    /// at that compile: torch's frame state records every compile's sizes whatever the policy,
    /// and a dimension whose size changed is `DimDynamic.DYNAMIC` (a symbol of its own) rather
    /// than duck-sized at the recompile.
    ///
    /// With `whole`, a tensor with a changed dimension also reports its other static
    /// dimensions of size at least 2, with the old size equal to the new one: automatic dynamic
    /// then makes the whole tensor dynamic (see `config::automatic_dynamic_whole_tensor`).
    pub fn size_changes(
        &self,
        py: Python<'_>,
        scope: &Scope,
        symbolic_too: bool,
        whole: bool,
    ) -> Vec<(String, usize, i64, i64)> {
        fn walk(
            n: &GuardNode,
            py: Python<'_>,
            scope: &Scope,
            (symbolic_too, whole): (bool, bool),
            out: &mut Vec<(String, usize, i64, i64)>,
        ) {
            for c in &n.checks {
                let Check::Tensor(t) = &c.check else {
                    continue;
                };
                let Some(v) = resolve(py, scope, &c.source) else {
                    continue;
                };
                let param = py
                    .import("torch")
                    .and_then(|t| t.getattr("nn")?.getattr("Parameter"))
                    .and_then(|p| v.is_instance(&p))
                    .unwrap_or(false);
                if param {
                    continue;
                }
                let Ok(sizes) = v.getattr("shape").and_then(|s| s.extract::<Vec<i64>>()) else {
                    continue;
                };
                if sizes.len() != t.sizes.len() {
                    continue;
                }
                let changed = |i: usize, e: &i64, a: &i64| {
                    let symbolic = t.dynamic.get(i).copied().unwrap_or(false);
                    e != a && (symbolic_too || !symbolic)
                };
                let any = t
                    .sizes
                    .iter()
                    .zip(&sizes)
                    .enumerate()
                    .any(|(i, (e, a))| changed(i, e, a));
                for (i, (e, a)) in t.sizes.iter().zip(&sizes).enumerate() {
                    let symbolic = t.dynamic.get(i).copied().unwrap_or(false);
                    // The whole-tensor rule: a static dimension of a tensor that changed
                    // elsewhere, at the same size (at least 1: a size-oblivious symbol may be 1) now, comes
                    // along (`old == new`).
                    let along = whole && any && !symbolic && e == a && *a >= 1;
                    if changed(i, e, a) || along {
                        out.push((c.source.to_string(), i, *e, *a));
                    }
                }
            }
            for child in &n.children {
                walk(child, py, scope, (symbolic_too, whole), out);
            }
        }
        let mut out = Vec::new();
        for n in &self.roots {
            walk(n, py, scope, (symbolic_too, whole), &mut out);
        }
        out
    }

    /// Ints guarded equal to a value they no longer have on this call (automatic dynamic for
    /// ints): source text, the value compiled for and the new one. Only ints torch would leave
    /// unspecialized: read from the frame's locals (a global, or a default argument, stays a
    /// constant), not an attribute of an `nn.Module` (torch keeps those static unless
    /// `allow_unspec_int_on_nn_module`), and exactly `int` both times (a bool is not one).
    pub fn int_changes(&self, py: Python<'_>, scope: &Scope) -> Vec<(String, i64, i64)> {
        fn walk(n: &GuardNode, py: Python<'_>, scope: &Scope, out: &mut Vec<(String, i64, i64)>) {
            for c in &n.checks {
                let Check::Equals(o) = &c.check else {
                    continue;
                };
                let int = py.get_type::<pyo3::types::PyInt>();
                let o = o.bind(py);
                if !o.get_type().is(&int) || c.source.root_local().is_none() {
                    continue;
                }
                let Some(v) = resolve(py, scope, &c.source) else {
                    continue;
                };
                let (Ok(old), Ok(new)) = (o.extract::<i64>(), v.extract::<i64>()) else {
                    continue;
                };
                if old == new
                    || !v.get_type().is(&int)
                    || !unspecialized_int_source(py, scope, &c.source)
                {
                    continue;
                }
                out.push((c.source.to_string(), old, new));
            }
            for child in &n.children {
                walk(child, py, scope, out);
            }
        }
        let mut out = Vec::new();
        for n in &self.roots {
            walk(n, py, scope, &mut out);
        }
        out
    }
}

/// Whether an int at `source` (rooted at a frame local) is one torch leaves unspecialized: no
/// step reads an attribute of an `nn.Module` or a function's defaults.
fn unspecialized_int_source(py: Python<'_>, scope: &Scope, source: &Source) -> bool {
    let steps = source.steps();
    let root = scope.root(&steps[0]);
    if root.is_null() {
        return false;
    }
    let Ok(module) = py
        .import("torch")
        .and_then(|t| t.getattr("nn")?.getattr("Module"))
    else {
        return false;
    };
    // SAFETY: `root` is a borrowed, live object of the frame; we take a new reference.
    let mut cur = unsafe { Bound::from_borrowed_ptr(py, root) };
    for step in &steps[1..] {
        if let Step::Attr { name } = step {
            let name = name.bind(py).to_str().unwrap_or("");
            if matches!(name, "__defaults__" | "__kwdefaults__")
                || cur.is_instance(&module).unwrap_or(true)
            {
                return false;
            }
        }
        let Some(next) = apply_step(&cur, step) else {
            return false;
        };
        cur = next;
    }
    true
}
