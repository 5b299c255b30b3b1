//! Leaf checks: what one guarded value must satisfy ([`Check`], [`TensorCheck`] for tensors),
//! how a check is evaluated against a live value and explained when it fails, and the time
//! spent building them.

use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString, PyTuple, PyType};

use crate::event::{Mismatch, Value};
use crate::source::Source;

use super::repr::{py_bool, short_repr, type_name};
use super::weak::WeakTarget;

thread_local! {
    /// Time this thread spent building guards since the last [`take_build_time`]: guards are
    /// made while tracing, and the `perf` log reports them as their own phase.
    static BUILD_TIME: std::cell::Cell<std::time::Duration> =
        const { std::cell::Cell::new(std::time::Duration::ZERO) };
}

pub(super) fn timed<R>(f: impl FnOnce() -> R) -> R {
    let started = std::time::Instant::now();
    let r = f();
    BUILD_TIME.with(|t| t.set(t.get() + started.elapsed()));
    r
}

/// The guard-building time accumulated on this thread, resetting it.
pub fn take_build_time() -> std::time::Duration {
    BUILD_TIME.with(|t| t.replace(std::time::Duration::ZERO))
}

/// A leaf condition on one value.
pub enum Check {
    /// Exact type, dtype, device, sizes, strides and requires_grad of a tensor.
    Tensor(TensorCheck),
    /// `type(v) is T`.
    Type(Py<PyType>),
    /// `v is obj`. Holds a strong reference so the id cannot be recycled; `GuardTree::add`
    /// turns it into `WeakId` where the object takes weak references.
    Id(Py<PyAny>),
    /// `v is obj` through a weak reference: the guard does not keep `obj` (a model, a function)
    /// alive, and fails for good once it died.
    WeakId(WeakTarget),
    /// `type(v) is type(c) and v == c`, for Python constants (ints, floats, strings, tuples).
    Equals(Py<PyAny>),
    /// `v is None`.
    IsNone,
    /// `len(v) == n`, for tuples and lists whose items are guarded one by one.
    Len(usize),
    /// `list(v.keys()) == keys`, for dicts whose values are guarded one by one.
    DictKeys(Vec<Py<PyAny>>),
    /// `hasattr(v, name) == present`: a `getattr` default or a `hasattr` answer was used.
    HasAttr(String, bool),
    /// `name not in v.__dict__`: a class attribute the trace used (a module's `forward`) is
    /// not shadowed by one set on the instance, which `Module.__call__` would run instead.
    NotInDict(String),
}

pub struct TensorCheck {
    pub tensor_type: Py<PyType>,
    pub dtype: Py<PyAny>,
    pub device: Py<PyAny>,
    pub sizes: Vec<i64>,
    pub strides: Vec<i64>,
    pub requires_grad: bool,
    /// Dimensions whose size is a symbol (dynamic shapes), not compared here; empty when none.
    /// A tensor with any is checked to be contiguous for its actual sizes instead of having
    /// the exact strides (the symbols' ranges and relations are the shape guards').
    pub dynamic: Vec<bool>,
    /// `torch.strided` for every traced tensor: a sparse or mkldnn tensor of the same sizes
    /// (whose reported strides can equal an expanded dense tensor's) must miss.
    pub layout: Py<PyAny>,
    /// torch's own C++ tensor check (`torch._C._dynamo.guards.TensorGuards(...).check`) made
    /// from the first tensor this check accepted: one call that compares dtype, device,
    /// requires_grad, dispatch keys, rank, sizes and strides without the six Python attribute
    /// reads of [`TensorCheck::first_mismatch`]. With dynamic dimensions it compares the static
    /// sizes only (`None` for the others and for every stride), and `is_contiguous()` stands
    /// for our contiguity test (both ignore the strides of size-1 dimensions). It only answers
    /// "same": its dispatch-key comparison is stricter than ours, so a tensor it rejects goes
    /// through `first_mismatch`, which decides (and explains).
    pub fast: std::sync::OnceLock<Option<Py<PyAny>>>,
}

impl Check {
    fn kind_key(&self) -> u8 {
        match self {
            Check::Tensor(_) => 0,
            Check::Type(_) => 1,
            Check::Id(_) | Check::WeakId(_) => 2,
            Check::Equals(_) => 3,
            Check::IsNone => 4,
            Check::Len(_) => 5,
            Check::DictKeys(_) => 6,
            Check::HasAttr(..) => 7,
            Check::NotInDict(_) => 8,
        }
    }

    /// The guard's kind, as its log line starts (`TENSOR_MATCH`).
    pub fn kind_name(&self) -> &'static str {
        match self {
            Check::Tensor(_) => "TENSOR_MATCH",
            Check::Type(_) => "TYPE_MATCH",
            Check::Id(_) | Check::WeakId(_) => "ID_MATCH",
            Check::Equals(_) => "EQUALS_MATCH",
            Check::IsNone => "NONE_MATCH",
            Check::Len(_) => "LENGTH_CHECK",
            Check::DictKeys(_) => "DICT_KEYS",
            Check::HasAttr(..) => "HASATTR",
            Check::NotInDict(_) => "NOT_PRESENT_IN_GENERIC_DICT",
        }
    }

    /// Whether `other` checks the same thing (one check per kind, except one per attribute name).
    pub(super) fn same_as(&self, other: &Check) -> bool {
        match (self, other) {
            (Check::HasAttr(a, _), Check::HasAttr(b, _)) => a == b,
            (Check::NotInDict(a), Check::NotInDict(b)) => a == b,
            _ => self.kind_key() == other.kind_key(),
        }
    }

    /// Evaluates the check; `Err(reason)` says why it failed, in the words of a recompile log.
    pub(super) fn eval(
        &self,
        py: Python<'_>,
        v: &Bound<'_, PyAny>,
        source: &Source,
        verbose: bool,
    ) -> Result<(), String> {
        match self {
            Check::Tensor(t) => t.eval(py, v, source, verbose),
            Check::Type(ty) => {
                if v.get_type().is(ty.bind(py)) {
                    Ok(())
                } else if verbose {
                    Err(format!(
                        "type({source}) mismatch. expected {}, actual {}",
                        type_name(ty.bind(py).as_any()),
                        type_name(v.get_type().as_any())
                    ))
                } else {
                    Err(String::new())
                }
            }
            Check::Id(obj) => {
                if v.is(obj.bind(py)) {
                    Ok(())
                } else if verbose {
                    Err(format!(
                        "{source} is not the same object. expected {}, actual {}",
                        short_repr(obj.bind(py)),
                        short_repr(v)
                    ))
                } else {
                    Err(String::new())
                }
            }
            Check::WeakId(t) => {
                if t.is(v) {
                    Ok(())
                } else if verbose {
                    let expected = t
                        .object(py)
                        .map(|o| short_repr(&o))
                        .unwrap_or_else(|| "<collected>".to_string());
                    Err(format!(
                        "{source} is not the same object. expected {expected}, actual {}",
                        short_repr(v)
                    ))
                } else {
                    Err(String::new())
                }
            }
            Check::Equals(c) => {
                let c = c.bind(py);
                let same = v.get_type().is(c.get_type()) && or_keep(py, v.eq(c), false);
                if same {
                    Ok(())
                } else if verbose {
                    Err(format!(
                        "{source} == {} failed. actual {}",
                        short_repr(c),
                        short_repr(v)
                    ))
                } else {
                    Err(String::new())
                }
            }
            Check::Len(n) => {
                let len = or_keep(py, v.len(), usize::MAX);
                if len == *n {
                    Ok(())
                } else if verbose {
                    Err(format!(
                        "len({source}) mismatch. expected {n}, actual {len}"
                    ))
                } else {
                    Err(String::new())
                }
            }
            Check::DictKeys(keys) => {
                let actual: Vec<Bound<'_, PyAny>> = match v.cast::<pyo3::types::PyDict>() {
                    Ok(d) => dict_keys_in_order(py, d).unwrap_or_default(),
                    Err(_) => Vec::new(),
                };
                let same = actual.len() == keys.len()
                    && actual
                        .iter()
                        .zip(keys)
                        .all(|(a, k)| or_keep(py, a.eq(k.bind(py)), false));
                if same {
                    Ok(())
                } else if verbose {
                    Err(format!(
                        "{source} keys mismatch. expected [{}], actual [{}]",
                        keys.iter()
                            .map(|k| short_repr(k.bind(py)))
                            .collect::<Vec<_>>()
                            .join(", "),
                        actual.iter().map(short_repr).collect::<Vec<_>>().join(", ")
                    ))
                } else {
                    Err(String::new())
                }
            }
            Check::HasAttr(name, present) => {
                let has = or_keep(py, has_attr(py, v, name), false);
                if has == *present {
                    Ok(())
                } else if verbose {
                    Err(format!(
                        "hasattr({source}, {name:?}) mismatch. expected {}, actual {}",
                        py_bool(*present),
                        py_bool(has)
                    ))
                } else {
                    Err(String::new())
                }
            }
            Check::NotInDict(name) => {
                let present = or_keep(py, in_instance_dict(py, v, name), true);
                if !present {
                    Ok(())
                } else if verbose {
                    Err(format!(
                        "{name:?} in {source}.__dict__ (an attribute set on the instance)"
                    ))
                } else {
                    Err(String::new())
                }
            }
            Check::IsNone => {
                if v.is_none() {
                    Ok(())
                } else if verbose {
                    Err(format!("{source} is not None. actual {}", short_repr(v)))
                } else {
                    Err(String::new())
                }
            }
        }
    }
}

impl Check {
    /// An identity check held weakly where the object allows it (see `weak.rs`).
    pub(super) fn weakened(self, py: Python<'_>) -> Check {
        match self {
            Check::Id(o) => match WeakTarget::new(o.bind(py)) {
                Some(t) => Check::WeakId(t),
                None => Check::Id(o),
            },
            other => other,
        }
    }
}

/// The first property of a tensor that differs from a [`TensorCheck`], holding the new value.
pub(super) enum TensorMismatch<'py> {
    /// The value lacks the attribute (`dtype`, `device`, ...), or `shape`/`stride()` are not
    /// integer tuples.
    Missing(&'static str),
    Type(Bound<'py, PyAny>),
    Dtype(Bound<'py, PyAny>),
    Device(Bound<'py, PyAny>),
    RequiresGrad(bool),
    Layout(Bound<'py, PyAny>),
    Rank(usize),
    Size {
        index: usize,
        actual: i64,
    },
    Stride {
        index: usize,
        expected: i64,
        actual: i64,
    },
}

impl TensorCheck {
    pub(super) fn eval(
        &self,
        py: Python<'_>,
        v: &Bound<'_, PyAny>,
        source: &Source,
        verbose: bool,
    ) -> Result<(), String> {
        if !verbose {
            return self.accepts(py, v).map_err(|_| String::new());
        }
        match self.first_mismatch(py, v) {
            None => Ok(()),
            Some(m) => Err(format!(
                "tensor '{}' {}",
                source.short_name(),
                self.explain(py, &m)
            )),
        }
    }

    /// The fast path's verdict on `v`: torch's C++ check first, ours where it says no.
    pub(super) fn accepts(&self, py: Python<'_>, v: &Bound<'_, PyAny>) -> Result<(), ()> {
        if self.fast_accepts(py, v) {
            return Ok(());
        }
        if self.first_mismatch(py, v).is_some() {
            return Err(());
        }
        // Made outside the lock: building it calls into torch.
        if self.fast.get().is_none() {
            let _ = self.fast.set(self.make_fast(py, v));
        }
        Ok(())
    }

    pub(super) fn first_mismatch<'py>(
        &self,
        py: Python<'py>,
        v: &Bound<'py, PyAny>,
    ) -> Option<TensorMismatch<'py>> {
        use TensorMismatch as M;
        if !v.get_type().is(self.tensor_type.bind(py)) {
            return Some(M::Type(v.get_type().into_any()));
        }
        let Ok(dtype) = v.getattr(intern!(py, "dtype")) else {
            return Some(M::Missing("dtype"));
        };
        if !dtype.is(self.dtype.bind(py)) {
            return Some(M::Dtype(dtype));
        }
        let Ok(device) = v.getattr(intern!(py, "device")) else {
            return Some(M::Missing("device"));
        };
        if !device.eq(self.device.bind(py)).unwrap_or(false) {
            return Some(M::Device(device));
        }
        let Ok(rg) = v.getattr(intern!(py, "requires_grad")) else {
            return Some(M::Missing("requires_grad"));
        };
        let rg = rg.is_truthy().unwrap_or(false);
        if rg != self.requires_grad {
            return Some(M::RequiresGrad(rg));
        }
        match v.getattr(intern!(py, "layout")) {
            Ok(l) if l.is(self.layout.bind(py)) => {}
            Ok(l) => return Some(M::Layout(l)),
            Err(_) => return Some(M::Missing("layout")),
        }
        let Some(sizes) = int_tuple(v.getattr(intern!(py, "shape")).ok()) else {
            return Some(M::Missing("shape"));
        };
        if sizes.len() != self.sizes.len() {
            return Some(M::Rank(sizes.len()));
        }
        for (i, (e, a)) in self.sizes.iter().zip(&sizes).enumerate() {
            if e != a && !self.is_dynamic(i) {
                return Some(M::Size {
                    index: i,
                    actual: *a,
                });
            }
        }
        let Some(strides) = int_tuple(v.call_method0(intern!(py, "stride")).ok()) else {
            return Some(M::Missing("strides"));
        };
        let expected = if self.dynamic.contains(&true) {
            // Dense for the actual sizes in the order of the strides the check was made from
            // (contiguous, transposed, channels-last), as the graph's input strides are; a
            // layout dense in no order (a column slice) has the trace's stride rules: each
            // stride the same constant, the same product of another dimension's size and
            // stride, or free (a stride symbol: its value is the shape guards').
            match self.dense_order() {
                Some(order) => fx::infer::layout::dense_strides(&sizes, &order),
                None => return self.rule_mismatch(&sizes, &strides),
            }
        } else {
            self.strides.clone()
        };
        for (i, (e, a)) in expected.iter().zip(&strides).enumerate() {
            // A size-1 dimension's stride is not compared when sizes are dynamic (torch's
            // contiguity ignores it too).
            if e != a && !(self.dynamic.contains(&true) && sizes[i] == 1) {
                return Some(M::Stride {
                    index: i,
                    expected: *e,
                    actual: *a,
                });
            }
        }
        None
    }

    /// Whether torch's C++ check (see [`TensorCheck::fast`]) accepts `v`; false when there is
    /// none yet or it says no. `v`'s exact type is compared first (torch's check does not).
    fn fast_accepts(&self, py: Python<'_>, v: &Bound<'_, PyAny>) -> bool {
        let Some(Some(check)) = self.fast.get() else {
            return false;
        };
        v.get_type().is(self.tensor_type.bind(py))
            && or_keep(
                py,
                check.bind(py).call1((v,)).and_then(|r| r.is_truthy()),
                false,
            )
            && (!self.dynamic.contains(&true)
                || (self
                    .dense_order()
                    .is_some_and(|o| o.iter().enumerate().all(|(i, &d)| i == d))
                    && or_keep(
                        py,
                        v.call_method0(intern!(py, "is_contiguous"))
                            .and_then(|r| r.is_truthy()),
                        false,
                    )))
    }

    /// torch's C++ check built from `v`, a tensor this check accepted; `None` where torch has no
    /// such check. A dynamic dimension's size and, when any is dynamic, every stride are `None`
    /// (not compared): contiguity is [`TensorCheck::fast_accepts`]'s `is_contiguous()` then.
    /// Session 23: a dynamic `relu` paid the six attribute reads on every call, ~1 us more
    /// than the static one.
    fn make_fast(&self, py: Python<'_>, v: &Bound<'_, PyAny>) -> Option<Py<PyAny>> {
        let dynamic = self.dynamic.contains(&true);
        let sizes: Vec<Option<i64>> = self
            .sizes
            .iter()
            .enumerate()
            .map(|(i, s)| (!self.is_dynamic(i)).then_some(*s))
            .collect();
        let strides: Vec<Option<i64>> = self
            .strides
            .iter()
            .map(|s| (!dynamic).then_some(*s))
            .collect();
        let build = || -> PyResult<Py<PyAny>> {
            let class = py
                .import("torch._C._dynamo.guards")?
                .getattr("TensorGuards")?;
            let kwargs = PyDict::new(py);
            kwargs.set_item("dynamic_dims_sizes", vec![sizes])?;
            kwargs.set_item("dynamic_dims_strides", vec![strides])?;
            let guards = class.call((v,), Some(&kwargs))?;
            // It must accept the tensor it was made from, or it is of no use.
            let check = guards.getattr("check")?;
            if !check.call1((v,))?.is_truthy()? {
                return Err(pyo3::exceptions::PyValueError::new_err(
                    "rejects its own tensor",
                ));
            }
            Ok(check.unbind())
        };
        build().ok()
    }

    /// The first stride of `sizes`/`strides` whose rule (`layout::stride_rules`) is not the
    /// recorded layout's: a graph traced with a stride symbol for a column slice's row stride
    /// takes any row stride that is no product of the other dimensions, nothing else.
    fn rule_mismatch<'py>(&self, sizes: &[i64], strides: &[i64]) -> Option<TensorMismatch<'py>> {
        use fx::infer::layout::{stride_rules, StrideRule};
        if strides.len() != self.strides.len() {
            return Some(TensorMismatch::Missing("strides"));
        }
        let (want, got) = (
            stride_rules(&self.sizes, &self.strides),
            stride_rules(sizes, strides),
        );
        // A size-1 dimension's stride addresses nothing (torch's contiguity ignores it too):
        // its rule may differ (`expand(b, 3)` at `b == 1` keeps the parent's stride) unless it
        // is a symbol the shape guards read or a product another stride is written with.
        let free_at_one = |i: usize| {
            sizes[i] == 1 && want[i] != StrideRule::Free && !want.contains(&StrideRule::Times(i))
        };
        let index = (0..want.len()).find(|&i| want[i] != got[i] && !free_at_one(i))?;
        Some(TensorMismatch::Stride {
            index,
            expected: self.strides[index],
            actual: strides[index],
        })
    }

    /// The dimension order in which the recorded strides are dense (`layout::dense_order`);
    /// `None` where they are dense in none (a column slice: compared exactly).
    fn dense_order(&self) -> Option<Vec<usize>> {
        fx::infer::layout::dense_order(&self.sizes, &self.strides)
    }

    fn is_dynamic(&self, i: usize) -> bool {
        self.dynamic.get(i).copied().unwrap_or(false)
    }

    /// The sizes as the guard listing shows them: `None` for a dynamic dimension.
    pub(super) fn sizes_text(&self) -> String {
        let parts: Vec<String> = self
            .sizes
            .iter()
            .enumerate()
            .map(|(i, s)| {
                if self.is_dynamic(i) {
                    "None".into()
                } else {
                    s.to_string()
                }
            })
            .collect();
        format!("[{}]", parts.join(", "))
    }

    pub(super) fn strides_text(&self) -> String {
        if self.dynamic.contains(&true) && self.dense_order().is_none() {
            // torch's listing: `None` for a stride that moves with the sizes or is a symbol.
            use fx::infer::layout::{stride_rules, StrideRule};
            let parts: Vec<String> = stride_rules(&self.sizes, &self.strides)
                .iter()
                .map(|r| match r {
                    StrideRule::Const(c) => c.to_string(),
                    _ => "None".into(),
                })
                .collect();
            return format!("[{}]", parts.join(", "));
        }
        if self.dynamic.contains(&true) {
            return "contiguous".into();
        }
        format!("{:?}", self.strides)
    }

    /// The mismatch in the words of a recompile log (after `tensor 'x' `).
    fn explain(&self, py: Python<'_>, m: &TensorMismatch<'_>) -> String {
        match m {
            TensorMismatch::Missing(what) => format!("has no {what}"),
            TensorMismatch::Type(t) => format!(
                "type mismatch. expected {}, actual {}",
                type_name(self.tensor_type.bind(py).as_any()),
                type_name(t)
            ),
            TensorMismatch::Dtype(d) => format!(
                "dtype mismatch. expected {}, actual {d}",
                self.dtype.bind(py)
            ),
            TensorMismatch::Device(d) => format!(
                "device mismatch. expected {}, actual {d}",
                self.device.bind(py)
            ),
            TensorMismatch::RequiresGrad(rg) => format!(
                "requires_grad mismatch. expected requires_grad={}, actual requires_grad={}",
                py_bool(self.requires_grad),
                py_bool(*rg)
            ),
            TensorMismatch::Layout(l) => format!(
                "layout mismatch. expected {}, actual {l}",
                self.layout.bind(py)
            ),
            TensorMismatch::Rank(n) => {
                format!("rank mismatch. expected {}, actual {n}", self.sizes.len())
            }
            TensorMismatch::Size { index, actual } => format!(
                "size mismatch at index {index}. expected {}, actual {actual}",
                self.sizes[*index]
            ),
            TensorMismatch::Stride {
                index,
                expected,
                actual,
            } => format!("stride mismatch at index {index}. expected {expected}, actual {actual}"),
        }
    }

    /// The mismatch as data, for the recompile event.
    pub(super) fn mismatch_record(&self, py: Python<'_>, m: &TensorMismatch<'_>) -> Mismatch {
        let text = |o: &Bound<'_, PyAny>| Some(Value::Text(o.to_string()));
        let (property, index, expected, actual) = match m {
            TensorMismatch::Missing(what) => (*what, None, None, None),
            TensorMismatch::Type(t) => (
                "type",
                None,
                Some(Value::Text(type_name(self.tensor_type.bind(py).as_any()))),
                Some(Value::Text(type_name(t))),
            ),
            TensorMismatch::Dtype(d) => ("dtype", None, text(self.dtype.bind(py)), text(d)),
            TensorMismatch::Device(d) => ("device", None, text(self.device.bind(py)), text(d)),
            TensorMismatch::RequiresGrad(rg) => (
                "requires_grad",
                None,
                Some(Value::Text(py_bool(self.requires_grad).into())),
                Some(Value::Text(py_bool(*rg).into())),
            ),
            TensorMismatch::Layout(l) => ("layout", None, text(self.layout.bind(py)), text(l)),
            TensorMismatch::Rank(n) => (
                "rank",
                None,
                Some(Value::Int(self.sizes.len() as i64)),
                Some(Value::Int(*n as i64)),
            ),
            TensorMismatch::Size { index, actual } => (
                "size",
                Some(*index),
                Some(Value::Int(self.sizes[*index])),
                Some(Value::Int(*actual)),
            ),
            TensorMismatch::Stride {
                index,
                expected,
                actual,
            } => (
                "stride",
                Some(*index),
                Some(Value::Int(*expected)),
                Some(Value::Int(*actual)),
            ),
        };
        Mismatch {
            property,
            index,
            expected,
            actual,
        }
    }
}

/// `hasattr(v, name)`, natively where `v`'s `__getattribute__` is the aliasing one of a
/// transformers config (see `aliased_getattr`: the same answer without raising and discarding
/// an `AttributeError` through a Python frame).
fn has_attr(py: Python<'_>, v: &Bound<'_, PyAny>, name: &str) -> PyResult<bool> {
    let n = PyString::new(py, name);
    match crate::aliased_getattr::read(v, &n, true) {
        Some(r) => r.map(|found| found.is_some()),
        None => v.hasattr(n),
    }
}

/// Whether `name` is a key of `v.__dict__` (false for an object without one).
fn in_instance_dict(py: Python<'_>, v: &Bound<'_, PyAny>, name: &str) -> PyResult<bool> {
    match v.getattr(intern!(py, "__dict__")) {
        Ok(d) => match d.cast::<PyDict>() {
            Ok(d) => d.contains(name),
            Err(_) => Ok(false),
        },
        Err(_) => Ok(false),
    }
}

fn int_tuple(obj: Option<Bound<'_, PyAny>>) -> Option<Vec<i64>> {
    let obj = obj?;
    let t = obj.cast::<PyTuple>().ok()?;
    t.iter().map(|x| x.extract::<i64>().ok()).collect()
}

/// Builds a tensor check from a live tensor.
pub fn tensor_check(v: &Bound<'_, PyAny>) -> PyResult<TensorCheck> {
    timed(|| tensor_check_untimed(v))
}

fn tensor_check_untimed(v: &Bound<'_, PyAny>) -> PyResult<TensorCheck> {
    let py = v.py();
    Ok(TensorCheck {
        tensor_type: v.get_type().unbind(),
        dtype: v.getattr(intern!(py, "dtype"))?.unbind(),
        device: v.getattr(intern!(py, "device"))?.unbind(),
        sizes: int_tuple(Some(v.getattr(intern!(py, "shape"))?)).unwrap_or_default(),
        strides: int_tuple(Some(v.call_method0(intern!(py, "stride"))?)).unwrap_or_default(),
        requires_grad: v.getattr(intern!(py, "requires_grad"))?.is_truthy()?,
        dynamic: Vec::new(),
        layout: v.getattr(intern!(py, "layout"))?.unbind(),
        fast: std::sync::OnceLock::new(),
    })
}

/// A check's Python call that failed counts as a mismatch; an interrupt that landed in it (a
/// user `__eq__`, `__len__` or `__getattr__`) is kept for the user (`mode::keep_interrupt`).
fn or_keep<T>(py: Python<'_>, r: PyResult<T>, mismatch: T) -> T {
    r.unwrap_or_else(|e| {
        crate::mode::keep_interrupt(py, e);
        mismatch
    })
}

/// The keys of the dict `d` in its iteration order: an `OrderedDict`'s own order (which
/// `move_to_end` changes without touching the underlying dict's), read through the base
/// class so a subclass's `keys` override does not run.
pub(crate) fn dict_keys_in_order<'py>(
    py: Python<'py>,
    d: &Bound<'py, PyDict>,
) -> PyResult<Vec<Bound<'py, PyAny>>> {
    static OD: pyo3::sync::PyOnceLock<Py<PyAny>> = pyo3::sync::PyOnceLock::new();
    let od = OD
        .get_or_try_init(py, || -> PyResult<Py<PyAny>> {
            Ok(py.import("collections")?.getattr("OrderedDict")?.unbind())
        })?
        .bind(py);
    if d.get_type().is(py.get_type::<PyDict>()) {
        return Ok(d.keys().iter().collect());
    }
    if d.is_instance(od)? {
        return od.getattr("keys")?.call1((d,))?.try_iter()?.collect();
    }
    Ok(d.keys().iter().collect())
}
