//! The graph inputs' sources as a trie ([`InputTree`]): a call fetches every input in one walk,
//! each shared prefix once.
//!
//! A compiled model's inputs are mostly parameters reached through long paths that share
//! their beginnings (`L['self']._modules['model']._modules['layers']…`). Resolving each path
//! from its root repeated those reads once per input, and a step that builds an object makes
//! it once per input too: `self.layers[:n]` (a `ModuleList` slice) constructs a new
//! `ModuleList` on every read, so Llama's decode step built it again for each of its ~20
//! layer parameters, a Python `Module.__init__` each time. (A slice of a plain `ModuleList`
//! no longer appears in any source: its children are read through the parent's `_modules`,
//! `interp::ModuleListSlice`; a subclass's slice still does.)

use pyo3::prelude::*;

use crate::source::{apply_step, Scope, Source, Step};

struct InputNode {
    step: Step,
    /// The graph inputs that are this node's value (one source may feed several inputs).
    inputs: Vec<usize>,
    children: Vec<InputNode>,
}

impl InputNode {
    /// The first input at or below this node: it names a value that could not be read.
    fn first_input(&self) -> usize {
        self.inputs
            .first()
            .copied()
            .or_else(|| self.children.first().map(InputNode::first_input))
            .unwrap_or(0)
    }

    fn fill<'py>(
        &self,
        v: &Bound<'py, PyAny>,
        out: &mut [Option<Bound<'py, PyAny>>],
    ) -> Result<(), usize> {
        for &i in &self.inputs {
            out[i] = Some(v.clone());
        }
        for child in &self.children {
            let Some(cv) = apply_step(v, &child.step) else {
                return Err(child.first_input());
            };
            child.fill(&cv, out)?;
        }
        Ok(())
    }
}

/// The sources of a graph's inputs, merged where their steps agree.
pub struct InputTree {
    roots: Vec<InputNode>,
    count: usize,
}

impl InputTree {
    pub fn new(py: Python<'_>, sources: &[Source]) -> InputTree {
        let mut roots: Vec<InputNode> = Vec::new();
        for (i, s) in sources.iter().enumerate() {
            let mut level = &mut roots;
            let steps = s.steps();
            for (k, step) in steps.iter().enumerate() {
                let at = match level.iter().position(|n| n.step.same(step)) {
                    Some(at) => at,
                    None => {
                        level.push(InputNode {
                            step: step.clone_ref(py),
                            inputs: Vec::new(),
                            children: Vec::new(),
                        });
                        level.len() - 1
                    }
                };
                if k + 1 == steps.len() {
                    level[at].inputs.push(i);
                }
                level = &mut level[at].children;
            }
        }
        InputTree {
            roots,
            count: sources.len(),
        }
    }

    /// Every input's value in `scope`, in input order; `Err(i)`: input `i` (the first under
    /// the step that failed) could not be read.
    pub fn fetch<'py>(
        &self,
        py: Python<'py>,
        scope: &Scope,
    ) -> Result<Vec<Bound<'py, PyAny>>, usize> {
        let mut out: Vec<Option<Bound<'py, PyAny>>> = vec![None; self.count];
        for root in &self.roots {
            let p = scope.root(&root.step);
            if p.is_null() {
                return Err(root.first_input());
            }
            // SAFETY: `p` is a borrowed, live object of the scope; we take our own reference.
            let v = unsafe { Bound::from_borrowed_ptr(py, p) };
            root.fill(&v, &mut out)?;
        }
        // Every input has a node (a source has at least its root step), so all are filled.
        out.into_iter()
            .enumerate()
            .map(|(i, v)| v.ok_or(i))
            .collect()
    }
}
