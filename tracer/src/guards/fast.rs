//! What makes a guard *hit* cheap on a module tree without skipping any check: the tensor
//! checks of one walk compared in one call of torch's C++ check ([`TensorBatch`]), and a dict's
//! keys compared once per dict state ([`DictSeen`]).
//!
//! Measured on the 72-module tower of `bench/tree_guards.py` (94 parameters, ~400 checks), a
//! hit cost ~90 µs before: ~29 µs of it the 95 Python calls of torch's tensor check (one
//! argument tuple, argument parsing and the thread's dispatch state each), ~11 µs the
//! `DICT_KEYS` checks (a key list built and compared per dict).

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::Relaxed};

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};

use super::check::{Check, TensorCheck};

/// The static tensor checks of one guard tree, compared together.
///
/// A passing walk collects the tensors of every check without dynamic dimensions (by slot,
/// [`TensorBatch::slot`]) and hands them to one `TensorGuards.check(*tensors)`, built from the
/// tensors of the first walk whose checks all passed one by one. That call compares what the
/// per-tensor calls compared (dtype, device, requires_grad, dispatch keys, sizes, strides), so
/// nothing is skipped: a parameter whose `requires_grad`, `.data` or size changed in place
/// still fails. It only answers "same"; a `False` falls back to the checks one by one, which
/// decide (torch's dispatch-key comparison is stricter than ours).
///
/// A miss must stay cheap ([`super::tree`]'s fail-first order): the tensor checks on the path
/// of the last miss (each level's remembered subtree) are also checked inline, so a repeated
/// miss on an input's size fails before the rest of the walk; a tensor that fails in the batch
/// has its path remembered as if the walk had failed there (`GuardTree::remember_failed_slot`),
/// so only the first such miss walks the whole tree.
#[derive(Default)]
pub(super) struct TensorBatch {
    /// How many checks have a slot.
    slots: usize,
    /// torch's check over all slots, made on the first walk that passed them one by one
    /// (`None`: torch could not make one for these tensors).
    check: std::sync::OnceLock<Option<Py<PyAny>>>,
}

/// The tensors a batched walk collected, by slot, with the check each one answers to.
pub(super) type Collected<'t, 'py> = Vec<Option<(&'t TensorCheck, Bound<'py, PyAny>)>>;

impl TensorBatch {
    /// The slot of a new check, if it can be batched: a tensor check without dynamic
    /// dimensions (ours compares contiguity there, torch's does not).
    pub(super) fn slot(&mut self, check: &Check) -> Option<u32> {
        match check {
            Check::Tensor(t) if !t.dynamic.contains(&true) => {
                self.slots += 1;
                Some(self.slots as u32 - 1)
            }
            _ => None,
        }
    }

    /// The collection for a walk, or `None` when the tree has no such check.
    pub(super) fn start<'t, 'py>(&self) -> Option<Collected<'t, 'py>> {
        (self.slots > 0).then(|| vec![None; self.slots])
    }

    /// Whether every collected tensor passes its check (a walk that passed reached every
    /// slot); `Err` with the slot of the first one that fails.
    pub(super) fn passes(
        &self,
        py: Python<'_>,
        collected: Collected<'_, '_>,
    ) -> Result<(), Option<u32>> {
        let Some(all) = collected.into_iter().collect::<Option<Vec<_>>>() else {
            return Err(None);
        };
        if let Some(Some(check)) = self.check.get() {
            let args = PyTuple::new(py, all.iter().map(|(_, v)| v));
            let same = args
                .and_then(|a| check.bind(py).call1(a))
                .and_then(|r| r.is_truthy());
            match same {
                Ok(true) => return Ok(()),
                Ok(false) => {}
                Err(e) => drop(crate::mode::keep_interrupt(py, e)),
            }
        }
        for (slot, (t, v)) in all.iter().enumerate() {
            if t.accepts(py, v).is_err() {
                return Err(Some(slot as u32));
            }
        }
        if self.check.get().is_none() {
            let _ = self.check.set(make_batch(py, &all));
        }
        Ok(())
    }
}

/// torch's check over `all`, tensors that passed their checks, in slot order.
fn make_batch(py: Python<'_>, all: &[(&TensorCheck, Bound<'_, PyAny>)]) -> Option<Py<PyAny>> {
    let build = || -> PyResult<Py<PyAny>> {
        let class = py
            .import("torch._C._dynamo.guards")?
            .getattr("TensorGuards")?;
        let kwargs = PyDict::new(py);
        let sizes: Vec<Vec<i64>> = all.iter().map(|(t, _)| t.sizes.clone()).collect();
        let strides: Vec<Vec<i64>> = all.iter().map(|(t, _)| t.strides.clone()).collect();
        kwargs.set_item("dynamic_dims_sizes", sizes)?;
        kwargs.set_item("dynamic_dims_strides", strides)?;
        let args = PyTuple::new(py, all.iter().map(|(_, v)| v))?;
        let guards = class.call(&args, Some(&kwargs))?;
        let check = guards.getattr("check")?;
        // It must accept the tensors it was made from, or it is of no use.
        if !check.call1(&args)?.is_truthy()? {
            return Err(pyo3::exceptions::PyValueError::new_err(
                "rejects its own tensors",
            ));
        }
        Ok(check.unbind())
    };
    build().ok()
}

/// The state of the last exact dict a `DICT_KEYS` check accepted: its address and version tag.
///
/// CPython gives a dict a new version tag, from one process-wide counter, when it is made and
/// on every change (PEP 509), so an address and tag seen before name the same dict in the same
/// state, with the same keys in the same order (a freed dict's address reused by a new one
/// comes with a new tag). Only exact dicts: an `OrderedDict`'s order lives outside the dict
/// (`move_to_end` leaves the tag alone). A module tree's `_modules`/`_parameters`/`_buffers`
/// are exact dicts that rarely change, so most hits compare two integers per dict.
#[derive(Default)]
pub(super) struct DictSeen {
    addr: AtomicUsize,
    tag: AtomicU64,
}

impl DictSeen {
    /// Whether `v` is the exact dict, in the same state, that passed last time.
    pub(super) fn same(&self, v: &Bound<'_, PyAny>) -> bool {
        match v.cast_exact::<PyDict>() {
            Ok(d) => {
                self.addr.load(Relaxed) == d.as_ptr() as usize
                    && self.tag.load(Relaxed) == crate::global_state::dict_version(d)
            }
            Err(_) => false,
        }
    }

    /// Remembers `v` (an exact dict whose keys just passed).
    pub(super) fn remember(&self, v: &Bound<'_, PyAny>) {
        if let Ok(d) = v.cast_exact::<PyDict>() {
            self.addr.store(d.as_ptr() as usize, Relaxed);
            self.tag
                .store(crate::global_state::dict_version(d), Relaxed);
        }
    }
}
