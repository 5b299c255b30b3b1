//! Guards: the conditions under which a compiled entry is valid, as a trie over sources with leaf
//! checks, evaluated natively against a [`Scope`] without building a locals dict.
//!
//! Each value is fetched once per call however many checks hang off it, and sibling paths share
//! their common prefix (`L['self'].fc` is fetched once for both `.weight` and `.bias`).

use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyTuple, PyType};

use crate::event::{FailedCheck, GuardRecord, Location, Mismatch, Value};
use crate::source::{apply_step, Scope, Source, Step};

pub use crate::event::GuardFailure;

mod weak;
pub use weak::{on_target_death, WeakTarget};

thread_local! {
    /// Time this thread spent building guards since the last [`take_build_time`]: guards are
    /// made while tracing, and the `perf` log reports them as their own phase.
    static BUILD_TIME: std::cell::Cell<std::time::Duration> =
        const { std::cell::Cell::new(std::time::Duration::ZERO) };
}

fn timed<R>(f: impl FnOnce() -> R) -> R {
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
}

pub struct TensorCheck {
    pub tensor_type: Py<PyType>,
    pub dtype: Py<PyAny>,
    pub device: Py<PyAny>,
    pub sizes: Vec<i64>,
    pub strides: Vec<i64>,
    pub requires_grad: bool,
    /// `torch.strided` for every traced tensor: a sparse or mkldnn tensor of the same sizes
    /// (whose reported strides can equal an expanded dense tensor's) must miss.
    pub layout: Py<PyAny>,
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
        }
    }

    /// Whether `other` checks the same thing (one check per kind, except one per attribute name).
    fn same_as(&self, other: &Check) -> bool {
        match (self, other) {
            (Check::HasAttr(a, _), Check::HasAttr(b, _)) => a == b,
            _ => self.kind_key() == other.kind_key(),
        }
    }

    /// Evaluates the check; `Err(reason)` says why it failed, in the words of a recompile log.
    fn eval(
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
                    Ok(d) => d.keys().iter().collect(),
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
                let has = or_keep(py, v.hasattr(name.as_str()), false);
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
    fn weakened(self, py: Python<'_>) -> Check {
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
enum TensorMismatch<'py> {
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
        actual: i64,
    },
}

impl TensorCheck {
    fn eval(
        &self,
        py: Python<'_>,
        v: &Bound<'_, PyAny>,
        source: &Source,
        verbose: bool,
    ) -> Result<(), String> {
        match self.first_mismatch(py, v) {
            None => Ok(()),
            Some(m) if verbose => Err(format!(
                "tensor '{}' {}",
                source.short_name(),
                self.explain(py, &m)
            )),
            Some(_) => Err(String::new()),
        }
    }

    fn first_mismatch<'py>(
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
            if e != a {
                return Some(M::Size {
                    index: i,
                    actual: *a,
                });
            }
        }
        let Some(strides) = int_tuple(v.call_method0(intern!(py, "stride")).ok()) else {
            return Some(M::Missing("strides"));
        };
        for (i, (e, a)) in self.strides.iter().zip(&strides).enumerate() {
            if e != a {
                return Some(M::Stride {
                    index: i,
                    actual: *a,
                });
            }
        }
        None
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
            TensorMismatch::Stride { index, actual } => format!(
                "stride mismatch at index {index}. expected {}, actual {actual}",
                self.strides[*index]
            ),
        }
    }

    /// The mismatch as data, for the recompile event.
    fn mismatch_record(&self, py: Python<'_>, m: &TensorMismatch<'_>) -> Mismatch {
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
            TensorMismatch::Stride { index, actual } => (
                "stride",
                Some(*index),
                Some(Value::Int(self.strides[*index])),
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

fn py_bool(b: bool) -> &'static str {
    if b {
        "True"
    } else {
        "False"
    }
}

fn int_tuple(obj: Option<Bound<'_, PyAny>>) -> Option<Vec<i64>> {
    let obj = obj?;
    let t = obj.cast::<PyTuple>().ok()?;
    t.iter().map(|x| x.extract::<i64>().ok()).collect()
}

pub fn type_name(ty: &Bound<'_, PyAny>) -> String {
    ty.getattr(intern!(ty.py(), "__qualname__"))
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "?".into())
}

pub fn short_repr(v: &Bound<'_, PyAny>) -> String {
    let r = v
        .repr()
        .map(|r| r.to_string())
        .unwrap_or_else(|_| "<?>".into());
    let first_line = r.lines().next().unwrap_or("").trim_end().to_string();
    // A module's repr spans lines (`Scaler(\n  (lin): Linear(...)\n)`): keep it balanced.
    let close = if first_line.ends_with('(') { ")" } else { "" };
    if first_line.chars().count() > 60 {
        let cut: String = first_line.chars().take(57).collect();
        format!("{cut}...")
    } else if r.contains('\n') {
        format!("{first_line}...{close}")
    } else {
        first_line
    }
}

struct LeafCheck {
    check: Check,
    source: Source,
    /// The user line whose use of the value made this guard.
    origin: Option<Location>,
}

struct GuardNode {
    step: Step,
    checks: Vec<LeafCheck>,
    children: Vec<GuardNode>,
}

/// The guards of one cache entry.
#[derive(Default)]
pub struct GuardTree {
    roots: Vec<GuardNode>,
    /// The frame's globals dict when compiled: the same code run with other globals is a miss.
    globals: Option<Py<PyAny>>,
    /// Grad mode when compiled: it decides which results require grad.
    grad_enabled: bool,
    /// Autocast when compiled (`None`: off on every device): it decides the dtypes of results.
    autocast: Option<String>,
    count: usize,
    /// Where the tracer is: recorded on each guard added.
    pub origin: Option<Location>,
    /// Checks not installed yet, by source: they are added when the traced code uses the value
    /// (`realize`), so a value that is only moved around (a dead resumed stack slot, an object
    /// whose attributes alone are read) does not make later calls recompile.
    /// The flag marks identity checks, installed only where identity matters (`is`, folding a
    /// call on the object), not on every use.
    deferred: Vec<(String, Source, Check, bool)>,
    /// Process-wide state the trace read: global-state queries, torch module attributes.
    pub global: crate::global_state::GlobalGuards,
}

/// A check's Python call that failed counts as a mismatch; an interrupt that landed in it (a
/// user `__eq__`, `__len__` or `__getattr__`) is kept for the user (`mode::keep_interrupt`).
fn or_keep<T>(py: Python<'_>, r: PyResult<T>, mismatch: T) -> T {
    r.unwrap_or_else(|e| {
        crate::mode::keep_interrupt(py, e);
        mismatch
    })
}

/// `torch.is_grad_enabled`, looked up once.
fn grad_enabled_fn(py: Python<'_>) -> PyResult<&'static Py<PyAny>> {
    static F: std::sync::OnceLock<Py<PyAny>> = std::sync::OnceLock::new();
    if let Some(f) = F.get() {
        return Ok(f);
    }
    let f = py.import("torch")?.getattr("is_grad_enabled")?.unbind();
    Ok(F.get_or_init(|| f))
}

pub fn grad_enabled(py: Python<'_>) -> bool {
    grad_enabled_fn(py)
        .and_then(|f| f.bind(py).call0())
        .map(|r| r.is_truthy().unwrap_or(true))
        .unwrap_or(true)
}

/// `torch._C._is_any_autocast_enabled`, looked up once: the cheap check of the common case.
fn any_autocast_fn(py: Python<'_>) -> PyResult<&'static Py<PyAny>> {
    static F: std::sync::OnceLock<Py<PyAny>> = std::sync::OnceLock::new();
    if let Some(f) = F.get() {
        return Ok(f);
    }
    let f = py
        .import("torch")?
        .getattr("_C")?
        .getattr("_is_any_autocast_enabled")?
        .unbind();
    Ok(F.get_or_init(|| f))
}

/// The autocast state (`None` when it is off on every device), as `torchferro._amp` describes it.
pub fn autocast_state(py: Python<'_>) -> Option<String> {
    let any = any_autocast_fn(py)
        .and_then(|f| f.bind(py).call0())
        .map(|r| r.is_truthy().unwrap_or(true))
        .unwrap_or(true);
    if !any {
        return None;
    }
    Some(
        py.import("torchferro._amp")
            .and_then(|m| m.getattr("describe")?.call0()?.extract::<String>())
            .unwrap_or_else(|e| format!("unknown ({e})")),
    )
}

impl GuardTree {
    pub fn new(globals: Py<PyAny>) -> GuardTree {
        let (grad, autocast) = Python::attach(|py| (grad_enabled(py), autocast_state(py)));
        GuardTree {
            roots: Vec::new(),
            globals: Some(globals),
            grad_enabled: grad,
            autocast,
            count: 0,
            origin: None,
            deferred: Vec::new(),
            global: Default::default(),
        }
    }

    /// Records `check` on `source`, to be installed if the value is used (see `realize`);
    /// `identity` checks wait for a use of the object's identity instead.
    pub fn defer(&mut self, source: &Source, check: Check, identity: bool) {
        let check = Python::attach(|py| check.weakened(py));
        self.deferred
            .push((source.to_string(), source.clone(), check, identity));
    }

    /// Whether any check waits for its value to be used (the common case is none: a fast exit).
    pub fn has_deferred(&self) -> bool {
        !self.deferred.is_empty()
    }

    /// Installs the deferred checks of `source`: the traced code now depends on its value (and,
    /// with `identity`, on which object it is).
    pub fn realize(&mut self, py: Python<'_>, source: &Source, identity: bool) {
        if self.deferred.is_empty() {
            return;
        }
        let key = source.to_string();
        let mut i = 0;
        while i < self.deferred.len() {
            if self.deferred[i].0 == key && (identity || !self.deferred[i].3) {
                let (_, s, c, _) = self.deferred.remove(i);
                self.add(py, &s, c);
            } else {
                i += 1;
            }
        }
    }

    pub fn len(&self) -> usize {
        self.count
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Adds a check on `source`, unless an equivalent check is already there.
    pub fn add(&mut self, py: Python<'_>, source: &Source, check: Check) {
        timed(|| self.add_untimed(py, source, check))
    }

    fn add_untimed(&mut self, py: Python<'_>, source: &Source, check: Check) {
        let check = check.weakened(py);
        let Some((last, path)) = source.steps().split_last() else {
            return;
        };
        // Walk down the trie, moving one `&mut` level to the next: each step re-borrows the
        // node it found, so the borrow checker sees a single path and no pointer is needed.
        let mut level = &mut self.roots;
        for step in path {
            let idx = GuardNode::child_index(level, py, step);
            level = &mut level[idx].children;
        }
        let idx = GuardNode::child_index(level, py, last);
        let node = &mut level[idx];
        if node.checks.iter().any(|c| c.check.same_as(&check)) {
            return;
        }
        node.checks.push(LeafCheck {
            check,
            source: source.clone(),
            origin: self.origin.clone(),
        });
        self.count += 1;
    }

    /// Whether an object this entry checks by identity was collected: then it can never match.
    pub fn is_dead(&self) -> bool {
        self.roots.iter().any(GuardNode::is_dead)
    }

    /// The fast path: true when every guard passes.
    pub fn check(&self, py: Python<'_>, scope: &Scope) -> bool {
        if let Some(g) = &self.globals {
            if g.as_ptr() != scope.globals {
                return false;
            }
        }
        grad_enabled(py) == self.grad_enabled
            && autocast_state(py) == self.autocast
            && self.global.check(py)
            && self.roots.iter().all(|n| n.check_root(py, scope))
    }

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
                out.push(n.unreadable("is missing"));
                continue;
            }
            // SAFETY: root is a borrowed live object; take our own reference.
            let v = unsafe { Bound::from_borrowed_ptr(py, root) };
            n.collect_failures(py, &v, &mut out);
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
        out
    }
}

impl GuardNode {
    /// The index in `level` of the node for `step`, made empty when there is none yet.
    fn child_index(level: &mut Vec<GuardNode>, py: Python<'_>, step: &Step) -> usize {
        if let Some(i) = level.iter().position(|n| n.step_same(step)) {
            return i;
        }
        level.push(GuardNode {
            step: step.clone_ref(py),
            checks: Vec::new(),
            children: Vec::new(),
        });
        level.len() - 1
    }

    fn step_same(&self, other: &Step) -> bool {
        match (&self.step, other) {
            (Step::Local { index: a, .. }, Step::Local { index: b, .. }) => a == b,
            (Step::Cell { index: a, .. }, Step::Cell { index: b, .. }) => a == b,
            (Step::Global { name: a }, Step::Global { name: b })
            | (Step::Attr { name: a }, Step::Attr { name: b }) => {
                a.as_ptr() == b.as_ptr() || {
                    Python::attach(|py| a.bind(py).to_str().ok() == b.bind(py).to_str().ok())
                }
            }
            (Step::Item { repr: a, .. }, Step::Item { repr: b, .. }) => a == b,
            (
                Step::ModuleGlobal {
                    globals: g1,
                    name: a,
                    ..
                },
                Step::ModuleGlobal {
                    globals: g2,
                    name: b,
                    ..
                },
            ) => {
                g1.as_ptr() == g2.as_ptr()
                    && Python::attach(|py| a.bind(py).to_str().ok() == b.bind(py).to_str().ok())
            }
            _ => false,
        }
    }

    fn is_dead(&self) -> bool {
        self.checks
            .iter()
            .any(|c| matches!(&c.check, Check::WeakId(t) if t.is_dead()))
            || self.children.iter().any(GuardNode::is_dead)
    }

    /// The first leaf check at or below this node: it names the value in messages.
    fn first_check(&self) -> Option<&LeafCheck> {
        self.checks
            .first()
            .or_else(|| self.children.iter().find_map(|c| c.first_check()))
    }

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

    fn check_root(&self, py: Python<'_>, scope: &Scope) -> bool {
        let root = scope.root(&self.step);
        if root.is_null() {
            return false;
        }
        // SAFETY: root is a borrowed live object; take our own reference.
        let v = unsafe { Bound::from_borrowed_ptr(py, root) };
        self.check_value(py, &v)
    }

    fn check_value(&self, py: Python<'_>, v: &Bound<'_, PyAny>) -> bool {
        for c in &self.checks {
            if c.check.eval(py, v, &c.source, false).is_err() {
                return false;
            }
        }
        for child in &self.children {
            let Some(nv) = apply_step(v, &child.step) else {
                return false;
            };
            if !child.check_value(py, &nv) {
                return false;
            }
        }
        true
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
                out.push(child.unreadable("could not be read"));
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
                        "TENSOR_MATCH {}: {}, {}, size={:?}, stride={:?}, requires_grad={}",
                        c.source,
                        t.dtype.bind(py),
                        t.device.bind(py),
                        t.sizes,
                        t.strides,
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
        layout: v.getattr(intern!(py, "layout"))?.unbind(),
    })
}
