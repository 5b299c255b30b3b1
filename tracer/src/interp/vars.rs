//! Variable trackers: what the symbolic interpreter knows about each value on its stack and in
//! its locals, and how a live value read from the frame becomes one (installing its guards).

use std::cell::RefCell;
use std::rc::Rc;

use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use pyo3::IntoPyObjectExt;

use fx::Arg;

use crate::error::TraceError;
use crate::guards::{tensor_check, Check};
use crate::output::{device_of, dtype_of, is_tensor, TensorValue};
use crate::source::Source;

use super::pyobj::{
    build_named_tuple, class_name, is_const_type, is_nn_module, is_per_call_torch_object,
    is_plain_object, non_strided_kind,
};
use super::Tracer;

/// A dict's items, in insertion order.
pub type DictCell = RefCell<Vec<(Py<PyAny>, Var)>>;
/// A dict's items, shared so two names for one dict see each other's writes.
pub type DictItems = Rc<DictCell>;
/// The items of a tuple (plain, named, or a `torch.Size`), shared: a tuple has identity in
/// Python (`u = t; t is u`), so every name, slot and attribute that holds one tuple holds one
/// `Rc`, and `is` and the rebuild at a graph break go by its address (one object, rebuilt once).
pub type Items = Rc<Vec<Var>>;

/// A function the tracer can inline (made and called in `inline.rs`).
pub struct FunctionVar {
    pub code: Py<PyAny>,
    pub name: String,
    pub globals: Py<PyDict>,
    pub defaults: Vec<Var>,
    pub kwdefaults: Vec<(String, Var)>,
    /// One entry per free variable: a `Var::Cell` made in this trace, or the current content of
    /// a real cell (read-only to the tracer).
    pub closure: Vec<Var>,
    /// For a function read from the frame (`function_of` with a source): per free variable,
    /// the real cell and its source, so a `nonlocal` write in the inlined body is recorded as
    /// a write of that cell after the graph (`Frame::store_deref`). Empty for a function the
    /// trace made (its cells are `Var::Cell` trackers).
    pub cells: RealCells,
    /// Attributes the traced code set on a function it made (its `__dict__`: `ExitStack`'s
    /// callback wrapper gets `__wrapped__`), read back before the code object's.
    pub attrs: RefCell<Vec<(String, Var)>>,
}

/// A `ModelOutput` instance: its class, every field's value (`None` where not given) and the
/// dict's keys in insertion order (a key set later goes last, as in an `OrderedDict`). Its
/// behaviour (and the only code that touches the fields) is in `model_output.rs`.
pub struct ModelOutputVar {
    pub cls: Py<PyAny>,
    pub(super) fields: RefCell<Vec<(String, Var)>>,
    pub(super) keys: RefCell<Vec<String>>,
}

/// A value in the traced program.
#[derive(Clone)]
pub enum Var {
    Tensor(TensorValue),
    /// A Python object known at trace time: constants, modules, functions, classes, dtypes,
    /// `nn.Module`s. `source` says where it was read from (guards were installed then).
    Py(Py<PyAny>, Option<Source>),
    Tuple(Items),
    /// Lists have identity: two names for one list see each other's appends.
    List(Rc<RefCell<Vec<Var>>>),
    Dict(DictItems),
    /// A `torch.Size`, from tensor metadata (guarded by the tensor's guard). Its items are
    /// ints and, for a tensor with symbolic sizes, [`Var::SymInt`]s: it stays a `torch.Size`
    /// (type, printing, `numel`, slicing, `+`) without specializing them, and is rebuilt at a
    /// return or a graph break as a real `torch.Size` of the call's own sizes.
    Size(Items),
    /// A Python int computed from symbolic sizes (dynamic shapes: `x.size(0)`, `T * 2`): the
    /// graph node that computes it on every call and its expression over the size symbols.
    /// It has no Python value at trace time: code that needs one specializes it
    /// (`Frame::specialize`, a guard that the size keeps its value) or breaks.
    SymInt(fx::NodeId, fx::SymExpr),
    /// A Python float computed from symbolic sizes (torch's `SymFloat`): `float(n)` (a
    /// `torch.sym_float` node), `n ** 0.5`, `a / b`, `math.sqrt(n)` and float arithmetic on
    /// them (`operator` / `torch._sym_sqrt` nodes), with the expression over the size
    /// symbols. A torch op takes it as a graph value (`torch.full((m,), float(n))`,
    /// `x * d ** -0.5` keep one graph over the sizes, as torch.compile does with
    /// `specialize_float=False`); a comparison is decided and guarded (`ShapeEnv::
    /// decide_float`); any other use needs its value and specializes it (`Tracer::specialize`).
    SymFloat(fx::NodeId, fx::FloatExpr),
    /// A comparison of symbolic ints not decided yet (`x.size(0) == y.size(0)`): as torch's
    /// SymBool, it is decided at the hints and guarded only where its value is needed (a
    /// branch, `bool()`, a builtin, a torch op: `Tracer::specialize`), and a comparison that
    /// is only returned or live at a graph break is rebuilt from the call's own sizes, so a
    /// later call on the other side of it reuses the graph. A membership in a tuple or list
    /// is one condition, a disjunction of equalities (`T in (2, 3, C)`), decided and guarded
    /// whole as torch's `Or` (`fx::Cond`).
    SymBool(fx::Cond),
    Slice(Box<[Var; 3]>),
    /// An iterator over known items, for `for` loops over Python sequences.
    Iter(Rc<RefCell<(Vec<Var>, usize)>>),
    /// A method looked up on a value but not yet called (`x.relu`, `xs.append`).
    Method {
        recv: Box<Var>,
        name: String,
    },
    /// The NULL the 3.11 calling convention pushes before a callable.
    Null,
    /// A tuple subclass with named fields (`torch.return_types.max`, a namedtuple).
    NamedTuple {
        ty: Py<PyAny>,
        items: Items,
    },
    /// A cell made in the traced code (a closure variable); `None` until assigned.
    Cell(Rc<RefCell<Option<Var>>>),
    /// A Python function to be inlined (made by MAKE_FUNCTION, or a user function object).
    Function(Rc<FunctionVar>),
    /// `torch.no_grad()` / `torch.enable_grad()` (`prev: None`, applied on `__enter__`) or
    /// `torch.set_grad_enabled(b)` (already applied; `prev` is the mode before it).
    GradMode {
        enabled: bool,
        prev: Option<bool>,
    },
    /// The `__exit__` of a grad-mode context: restores `restore`.
    GradModeExit {
        restore: bool,
    },
    /// `torch.inference_mode(mode)` (or its `clone`, a decorator's context factory): entering
    /// it opens an inference-mode level of the graph.
    InferenceMode {
        mode: bool,
    },
    /// The `__exit__` of an inference-mode block: leaves the innermost level, after which grad
    /// and inference mode are `prev_grad` and `prev_inference` (`None`: the frame's entry state).
    InferenceModeExit {
        prev_grad: bool,
        prev_inference: Option<bool>,
    },
    /// A function decorated in the traced code with a mode context (`torch.autocast(...)(fn)`,
    /// `torch.no_grad()(fn)`, `torch.inference_mode()(fn)`): a call runs `func` inside the
    /// context's region, as torch's wrapper runs it inside `with ctx:`.
    ModeDecorated {
        ctx: Box<Var>,
        func: Box<Var>,
    },
    /// `torch.autocast("cpu" | "cuda", ...)`: the device's autocast state its `__enter__`
    /// switches to.
    Autocast {
        device: crate::output::AmpDevice,
        enabled: bool,
        dtype: Py<PyAny>,
    },
    /// The `__exit__` of an autocast context: restores the device's state before it.
    AutocastExit {
        device: crate::output::AmpDevice,
        enabled: bool,
        dtype: Py<PyAny>,
    },
    /// A set made by the traced code, of known hashable values: a private Python `set`, so its
    /// order and membership are Python's own. (Returned or live at a graph break, it is
    /// unsupported: rebuilding it would share one object between calls.)
    Set(Py<PyAny>),
    /// `super(cls, obj)` (or zero-argument `super()` in a method): attribute reads look past
    /// `cls` in the MRO of `obj`'s type.
    Super {
        cls: Py<PyAny>,
        obj: Box<Var>,
    },
    /// A method bound to a value: calling it inlines `func` with `self_` first.
    BoundMethod {
        func: Box<Var>,
        self_: Box<Var>,
    },
    /// An instance of a plain user class made by the traced code (see `objects.rs`): it lives
    /// only in the tracker until it escapes, and is then rebuilt after the graph.
    Object(Rc<ObjectVar>),
    /// A transformers `ModelOutput` made by the traced code (see `model_output.rs`): rebuilt
    /// after the graph by calling its class with the field values.
    ModelOutput(Rc<ModelOutputVar>),
    /// `d.keys()`, `d.values()` or `d.items()` of a tracked dict: a live view, so writes to
    /// the dict after the view was taken show through it (length, membership, iteration,
    /// comparison), as they do in eager.
    DictView(DictItems, ViewKind),
    /// An endless `itertools` iterator or a `functools.partial` of traced values, made by the
    /// traced code (see `libobj.rs`).
    Library(Rc<RefCell<LibObj>>),
    /// A `collections.deque` made by the traced code (see `calls/collections.rs`): rebuilt
    /// after the graph as `deque(items, maxlen)`.
    Deque(Rc<DequeVar>),
    /// A numpy array (or numpy scalar) computed in the graph (see `numpy.rs`).
    Ndarray(NdarrayVar),
    /// A `@contextlib.contextmanager` context manager made by the traced code: its generator
    /// runs in the tracer, to its `yield` on `__enter__` and on from there on `__exit__`
    /// (see `gencm.rs`). It cannot escape the trace.
    GenCm(Rc<RefCell<GenCmVar>>),
    /// The `__exit__` of a [`Var::GenCm`] entered by a `with` block.
    GenCmExit(Rc<RefCell<GenCmVar>>),
    /// `contextlib.contextmanager(f)` of a generator function made in the frame: calling it
    /// makes a [`Var::GenCm`].
    GenCmFunction(Rc<FunctionVar>),
    /// A generator made by the traced code and consumed lazily, one item per pull: a user
    /// generator function's suspended frame, or `zip` / `enumerate` / `map` over one (see
    /// `generators.rs`). It cannot escape the trace.
    Generator(Rc<RefCell<LazyIter>>),
    /// `x.untyped_storage()` of a tensor (see `storage.rs`): its `size()` / `nbytes()` fold to
    /// the graph input's storage size, guarded; anything else breaks the graph.
    Storage(TensorValue),
}

/// The generator behind a `@contextlib.contextmanager` context manager.
pub struct GenCmVar {
    /// The decorated generator function, and the arguments of the call that made the manager.
    pub(super) func: Rc<FunctionVar>,
    pub(super) args: Vec<Var>,
    pub(super) kwargs: Vec<(String, Var)>,
    /// The generator's frame while it is suspended at its `yield`.
    pub(super) frame: Option<SavedFrame>,
    pub(super) entered: bool,
    /// The root instruction that made it: where the graph breaks instead when the manager is
    /// live at a graph break (it cannot be rebuilt after the graph).
    pub(super) made_at: usize,
}

/// A `Var::Iter` made by `iter()` of a traced list: the list, the iterator and the tracer's
/// list-mutation count when the iterator's items were copied from the list.
pub struct ListIter {
    pub list: std::rc::Weak<RefCell<Vec<Var>>>,
    pub iter: std::rc::Weak<RefCell<(Vec<Var>, usize)>>,
    pub synced: u64,
}

/// A `Var::Iter` made by `iter()` of a traced dict: the dict and its size then (eager's dict
/// iterator raises `RuntimeError` on a pull after the dict changed size).
pub struct DictIter {
    pub dict: std::rc::Weak<DictCell>,
    pub iter: std::rc::Weak<RefCell<(Vec<Var>, usize)>>,
    pub len: usize,
}

/// What a [`Var::Generator`] is (its behaviour lives in `generators.rs`).
pub enum LazyIter {
    /// A user generator function's frame: not started (`pc` 0), suspended after a `yield`, or
    /// `None` once it returned or raised.
    Frame {
        frame: Option<SavedFrame>,
        /// Being resumed now (a generator that pulls from itself raises `ValueError`).
        running: bool,
        /// The root instruction that made it (see the module comment).
        made_at: usize,
        /// Its return value once it returned (the value of `yield from` it).
        result: Option<Var>,
    },
    /// `zip(*its)` with at least one lazy argument (each an iterator).
    Zip(Vec<Var>),
    /// `enumerate(it, start)`: the next count.
    Enumerate(Var, i64),
    /// `map(f, *its)`.
    Map(Var, Vec<Var>),
}

/// The real closure cells of a function read from the frame, with their sources (see
/// `FunctionVar::cells`).
pub type RealCells = Rc<[Option<(Py<PyAny>, Source)>]>;

/// A generator frame of the tracer between two resumptions.
pub struct SavedFrame {
    pub(super) code: Rc<crate::code::CodeInfo>,
    pub(super) globals: Py<PyDict>,
    pub(super) foreign_globals: bool,
    pub(super) closure: Vec<Var>,
    pub(super) cells: RealCells,
    pub(super) stack: Vec<Var>,
    pub(super) locals: Vec<Option<Var>>,
    pub(super) pc: usize,
}

/// What a [`Var::Library`] is (its behaviour lives in `libobj.rs`).
pub enum LibObj {
    /// `itertools.count(start, step)` over Python numbers: `next` is the value it yields next.
    Count { next: Py<PyAny>, step: Py<PyAny> },
    /// `itertools.cycle(items)` of a non-empty sequence, at `pos`.
    Cycle { items: Vec<Var>, pos: usize },
    /// `itertools.repeat(item)` without `times`.
    Repeat(Var),
    /// `functools.partial(func, *args, **kwargs)` made in the frame: calling it calls `func`
    /// with `args` first and `kwargs` updated by the call's own keywords, as the real one does.
    Partial {
        func: Var,
        args: Vec<Var>,
        kwargs: Vec<(String, Var)>,
    },
    /// `operator.methodcaller(name, *args, **kwargs)` with traced arguments.
    MethodCaller {
        name: String,
        args: Vec<Var>,
        kwargs: Vec<(String, Var)>,
    },
}

/// The items of a traced `deque` and its `maxlen` (`None`: unbounded).
pub struct DequeVar {
    pub items: RefCell<Vec<Var>>,
    pub maxlen: Option<usize>,
}

/// Which view of a dict a [`Var::DictView`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ViewKind {
    Keys,
    Values,
    Items,
}

impl ViewKind {
    /// The `dict` method that makes this view.
    pub fn method(self) -> &'static str {
        match self {
            ViewKind::Keys => "keys",
            ViewKind::Values => "values",
            ViewKind::Items => "items",
        }
    }
}

/// Containers nested deeper than this (or holding themselves) are not traced.
const MAX_WRAP_DEPTH: usize = 64;

thread_local! {
    static WRAP_DEPTH: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// One level of `Tracer::wrap` recursion on this thread; leaving it (drop) pops the level.
struct WrapDepth;

impl WrapDepth {
    fn enter() -> Result<WrapDepth, TraceError> {
        let d = WRAP_DEPTH.with(|d| {
            d.set(d.get() + 1);
            d.get()
        });
        let guard = WrapDepth;
        if d > MAX_WRAP_DEPTH {
            return Err(TraceError::unsupported(format!(
                "a container nested more than {MAX_WRAP_DEPTH} deep (or holding itself)"
            )));
        }
        Ok(guard)
    }
}

impl Drop for WrapDepth {
    fn drop(&mut self) {
        WRAP_DEPTH.with(|d| d.set(d.get().saturating_sub(1)));
    }
}

/// An ndarray (or numpy scalar) computed in the graph: the tensor node holding its values.
/// Its behaviour lives in `numpy.rs`.
#[derive(Clone)]
pub struct NdarrayVar {
    pub t: TensorValue,
    /// A numpy scalar (`np.float32(...)`), not a 0-d array: what `a.sum()` and `a[0, 0]` give.
    pub scalar: bool,
    /// A Python number (`float`, `int` or `bool`, by the dtype: float64, int64, bool) that
    /// `float(s)` or `s.item()` made of a numpy value: still only known in the graph.
    pub pynum: bool,
}

impl NdarrayVar {
    pub fn ndim(&self) -> usize {
        self.t.meta.ndim()
    }
}

/// A user object made in the traced region: its class and its `__dict__`, in insertion order.
pub struct ObjectVar {
    pub cls: Py<PyAny>,
    /// Where the class was read from, so class attributes read through the object are guarded.
    pub cls_src: Option<Source>,
    /// The instance `__dict__` as a dict tracker: `obj.__dict__` is this very dict, so code
    /// that reads or writes attributes through it (`nn.Module.__setattr__`'s
    /// `self.__dict__.get("_parameters")`, `del self.__dict__[name]`) sees and makes the
    /// object's attribute writes.
    pub attrs: DictItems,
}

impl ObjectVar {
    /// A new object of `cls` with an empty `__dict__`.
    pub fn new(cls: Py<PyAny>, cls_src: Option<Source>) -> ObjectVar {
        ObjectVar {
            cls,
            cls_src,
            attrs: Rc::new(RefCell::new(Vec::new())),
        }
    }

    /// The instance attribute `name`, if its `__dict__` holds it.
    pub fn attr(&self, py: Python<'_>, name: &str) -> Option<Var> {
        self.attrs
            .borrow()
            .iter()
            .find(|(k, _)| key_is(py, k, name))
            .map(|(_, v)| v.clone())
    }

    /// Whether the instance `__dict__` holds `name`.
    pub fn has_attr(&self, py: Python<'_>, name: &str) -> bool {
        self.attrs.borrow().iter().any(|(k, _)| key_is(py, k, name))
    }

    /// `obj.__dict__[name] = v`: replaced in place, or appended.
    pub fn set_attr(&self, py: Python<'_>, name: &str, v: Var) {
        dict_set(py, &self.attrs, name, v);
    }

    /// Removes `name` from the instance `__dict__`; whether it was there.
    pub fn remove_attr(&self, py: Python<'_>, name: &str) -> bool {
        let mut attrs = self.attrs.borrow_mut();
        match attrs.iter().position(|(k, _)| key_is(py, k, name)) {
            Some(i) => {
                attrs.remove(i);
                true
            }
            None => false,
        }
    }
}

/// Whether the dict key `k` is the string `name`.
fn key_is(py: Python<'_>, k: &Py<PyAny>, name: &str) -> bool {
    k.bind(py)
        .cast::<pyo3::types::PyString>()
        .is_ok_and(|s| s.to_str().is_ok_and(|s| s == name))
}

impl Var {
    pub fn py_const<'py>(py: Python<'py>, v: impl IntoPyObject<'py>) -> Var {
        // Constants built here are ints, floats, bools and strings, which always convert.
        let obj = v.into_bound_py_any(py).ok().map(|b| b.unbind());
        Var::Py(obj.unwrap_or_else(|| py.None()), None)
    }

    /// A `torch.Size` of known sizes.
    pub fn size_const(py: Python<'_>, sizes: &[i64]) -> Var {
        Var::Size(
            sizes
                .iter()
                .map(|&d| Var::py_const(py, d))
                .collect::<Vec<_>>()
                .into(),
        )
    }

    /// Whether this is a symbolic int or a container that holds one (at its top level).
    pub fn holds_sym_int(&self) -> bool {
        match self {
            Var::SymInt(..) => true,
            Var::Tuple(items) | Var::Size(items) | Var::NamedTuple { items, .. } => {
                items.iter().any(|i| matches!(i, Var::SymInt(..)))
            }
            Var::List(items) => items.borrow().iter().any(|i| matches!(i, Var::SymInt(..))),
            _ => false,
        }
    }

    pub fn none(py: Python<'_>) -> Var {
        Var::Py(py.None(), None)
    }

    pub fn list(items: Vec<Var>) -> Var {
        Var::List(Rc::new(RefCell::new(items)))
    }

    pub fn type_name(&self, py: Python<'_>) -> String {
        match self {
            Var::Tensor(_) => "Tensor".into(),
            Var::Py(o, _) => o
                .bind(py)
                .get_type()
                .name()
                .map(|n| n.to_string())
                .unwrap_or_else(|_| "object".into()),
            Var::Tuple(_) => "tuple".into(),
            Var::List(_) => "list".into(),
            Var::Deque(_) => "deque".into(),
            Var::Dict(_) => "dict".into(),
            Var::Size(_) => "torch.Size".into(),
            Var::SymInt(..) => "int".into(),
            Var::SymFloat(..) => "float".into(),
            Var::SymBool(_) => "bool".into(),
            Var::Slice(_) => "slice".into(),
            Var::Iter(_) => "iterator".into(),
            Var::Method { name, .. } => format!("method {name}"),
            Var::Null => "NULL".into(),
            Var::Cell(_) => "cell".into(),
            Var::GradMode { .. } => "grad mode context".into(),
            Var::GradModeExit { .. } | Var::AutocastExit { .. } | Var::InferenceModeExit { .. } => {
                "context exit".into()
            }
            Var::InferenceMode { .. } => "inference mode context".into(),
            Var::ModeDecorated { .. } => "function decorated with a mode context".into(),
            Var::Autocast { .. } => "autocast context".into(),
            Var::NamedTuple { ty, .. } => ty
                .bind(py)
                .getattr("__name__")
                .map(|n| n.to_string())
                .unwrap_or_else(|_| "namedtuple".into()),
            Var::Function(f) => format!("function {}", f.name),
            Var::BoundMethod { .. } => "bound method".into(),
            Var::Super { .. } => "super".into(),
            Var::Set(_) => "set".into(),
            Var::Object(o) => class_name(py, &o.cls, "object"),
            Var::ModelOutput(o) => class_name(py, &o.cls, "ModelOutput"),
            Var::DictView(_, kind) => format!("dict_{}", kind.method()),
            Var::Library(l) => l.borrow().type_name().into(),
            Var::Ndarray(a) if a.pynum => "number computed in the graph".into(),
            Var::Ndarray(a) if a.scalar => "numpy scalar".into(),
            Var::Ndarray(_) => "ndarray".into(),
            Var::GenCm(_) => "contextlib._GeneratorContextManager".into(),
            Var::GenCmExit(_) => "bound method _GeneratorContextManager.__exit__".into(),
            Var::GenCmFunction(f) => format!("function {}", f.name),
            Var::Storage(_) => "torch.UntypedStorage".into(),
            Var::Generator(g) => g.borrow().type_name().into(),
        }
    }

    /// The Python value, if this is fully known at trace time (no tensors inside).
    pub fn as_py<'py>(&self, py: Python<'py>) -> Option<Bound<'py, PyAny>> {
        self.as_py_at(py, 0)
    }

    /// A rebuilt user container given the instance attributes the trace set on it (its
    /// `__dict__` updated directly: the class's `__setattr__` already ran in the trace).
    fn fill_attrs<'py>(
        &self,
        py: Python<'py>,
        obj: Bound<'py, PyAny>,
        depth: usize,
    ) -> Option<Bound<'py, PyAny>> {
        let Some(attrs) = container_attrs(self) else {
            return Some(obj);
        };
        let d = obj.getattr("__dict__").ok()?;
        for (k, v) in attrs.borrow().iter() {
            d.set_item(k.bind(py), v.as_py_at(py, depth)?).ok()?;
        }
        Some(obj)
    }

    /// `as_py` at nesting `depth`: a tracked list that holds itself (`a.append(a)`) has no
    /// finite value to build, so past [`MAX_WRAP_DEPTH`] levels there is none.
    fn as_py_at<'py>(&self, py: Python<'py>, depth: usize) -> Option<Bound<'py, PyAny>> {
        if depth > MAX_WRAP_DEPTH {
            return None;
        }
        let d = depth + 1;
        match self {
            Var::Py(o, _) | Var::Set(o) => Some(o.bind(py).clone()),
            Var::Tuple(items) => {
                let v: Option<Vec<_>> = items.iter().map(|i| i.as_py_at(py, d)).collect();
                PyTuple::new(py, v?).ok().map(|t| t.into_any())
            }
            Var::List(items) => {
                let v: Option<Vec<_>> = items.borrow().iter().map(|i| i.as_py_at(py, d)).collect();
                let out = PyList::new(py, v?).ok()?.into_any();
                match user_container_class(py, self) {
                    Some((cls, base)) => {
                        let obj = super::pyobj::rebuild_fn(py)
                            .ok()?
                            .call1((cls, base, out))
                            .ok()?;
                        self.fill_attrs(py, obj, d)
                    }
                    None => Some(out),
                }
            }
            Var::Dict(items) => {
                let out = PyDict::new(py);
                for (k, v) in items.borrow().iter() {
                    out.set_item(k.bind(py), v.as_py_at(py, d)?).ok()?;
                }
                // A user subclass: rebuilt without running its code.
                if let Some((cls, base)) = user_container_class(py, self) {
                    let obj = super::pyobj::rebuild_fn(py)
                        .ok()?
                        .call1((cls, base, out))
                        .ok()?;
                    return self.fill_attrs(py, obj, d);
                }
                // An `OrderedDict`/`defaultdict` made by the traced code keeps its class (its
                // equality is order-sensitive, its missing keys are filled).
                match dict_kind(items) {
                    None => Some(out.into_any()),
                    Some((cls, None)) => cls.bind(py).call1((out,)).ok(),
                    Some((cls, Some(f))) => {
                        let f = f.as_py_at(py, d)?;
                        cls.bind(py).call1((f, out)).ok()
                    }
                }
            }
            Var::NamedTuple { ty, items } => {
                let v: Option<Vec<_>> = items.iter().map(|i| i.as_py_at(py, d)).collect();
                build_named_tuple(ty.bind(py), PyTuple::new(py, v?).ok()?).ok()
            }
            Var::Size(s) => {
                let v: Option<Vec<_>> = s.iter().map(|i| i.as_py_at(py, d)).collect();
                let torch = py.import("torch").ok()?;
                torch
                    .getattr("Size")
                    .ok()?
                    .call1((PyList::new(py, v?).ok()?,))
                    .ok()
            }
            Var::Deque(q) => {
                let v: Option<Vec<_>> =
                    q.items.borrow().iter().map(|i| i.as_py_at(py, d)).collect();
                py.import("collections")
                    .ok()?
                    .getattr("deque")
                    .ok()?
                    .call1((PyList::new(py, v?).ok()?, q.maxlen))
                    .ok()
            }
            Var::BoundMethod { func, self_ } => {
                let f = func.as_py_at(py, d)?;
                let s = self_.as_py_at(py, d)?;
                py.import("types")
                    .ok()?
                    .getattr("MethodType")
                    .ok()?
                    .call1((f, s))
                    .ok()
            }
            // A view of a new dict with the current items: a keys view compares and tests
            // membership by keys alone, so its values need no Python value.
            Var::DictView(items, kind) => {
                let out = PyDict::new(py);
                for (k, v) in items.borrow().iter() {
                    let v = match kind {
                        ViewKind::Keys => py.None().into_bound(py),
                        _ => v.as_py_at(py, d)?,
                    };
                    out.set_item(k.bind(py), v).ok()?;
                }
                out.call_method0(kind.method()).ok()
            }
            Var::Slice(parts) => {
                let a = parts[0].as_py_at(py, d)?;
                let b = parts[1].as_py_at(py, d)?;
                let c = parts[2].as_py_at(py, d)?;
                py.import("builtins")
                    .ok()?
                    .getattr("slice")
                    .ok()?
                    .call1((a, b, c))
                    .ok()
            }
            _ => None,
        }
    }

    /// Items of a sequence-like value, for unpacking and iteration.
    /// The items of an iterable that something takes whole (`xs += it`, `xs.extend(it)`,
    /// `[*it]`, `f(*it)`, `s.update(it)`, slice assignment): an iterator is consumed, as the
    /// real one would be; other values as [`Var::items`].
    pub fn take_items(&self, py: Python<'_>) -> Option<Vec<Var>> {
        if let Var::Iter(it) = self {
            let mut it = it.borrow_mut();
            let rest = it.0[it.1.min(it.0.len())..].to_vec();
            it.1 = it.0.len();
            return Some(rest);
        }
        self.items(py)
    }

    pub fn items(&self, py: Python<'_>) -> Option<Vec<Var>> {
        match self {
            Var::Tuple(items) | Var::NamedTuple { items, .. } => Some(items.to_vec()),
            Var::List(items) => Some(items.borrow().clone()),
            Var::Deque(q) => Some(q.items.borrow().clone()),
            Var::Size(s) => Some(s.to_vec()),
            Var::Iter(it) => {
                let it = it.borrow();
                Some(it.0[it.1.min(it.0.len())..].to_vec())
            }
            Var::Set(o) => {
                let mut out = Vec::new();
                for x in o.bind(py).try_iter().ok()? {
                    out.push(Var::Py(x.ok()?.unbind(), None));
                }
                Some(out)
            }
            Var::Dict(items) => Some(
                items
                    .borrow()
                    .iter()
                    .map(|(k, _)| Var::Py(k.clone_ref(py), None))
                    .collect(),
            ),
            Var::DictView(items, kind) => Some(
                items
                    .borrow()
                    .iter()
                    .map(|(k, v)| {
                        let k = Var::Py(k.clone_ref(py), None);
                        match kind {
                            ViewKind::Keys => k,
                            ViewKind::Values => v.clone(),
                            ViewKind::Items => Var::Tuple(vec![k, v.clone()].into()),
                        }
                    })
                    .collect(),
            ),
            Var::ModelOutput(o) => Some(
                o.items()
                    .into_iter()
                    .map(|(k, _)| Var::py_const(py, k))
                    .collect(),
            ),
            Var::Py(o, src) => {
                let o = o.bind(py);
                // A mutable container read from the frame (a list or dict subclass) may hold
                // other items next call: its items are not constants.
                if src.is_some() && is_mutable_container(py, o) {
                    return None;
                }
                // Only iterate values whose iteration is free of side effects.
                if o.cast::<PyTuple>().is_ok()
                    || o.cast::<PyList>().is_ok()
                    || o.cast::<PyString>().is_ok()
                    || o.get_type().is(py.get_type::<pyo3::types::PyFrozenSet>())
                    || o.get_type().is(py.get_type::<PyDict>())
                    || o.get_type()
                        .name()
                        .map(|n| {
                            matches!(
                                n.to_str().unwrap_or(""),
                                "range" | "dict_keys" | "dict_values" | "dict_items"
                            )
                        })
                        .unwrap_or(false)
                {
                    let it = o.try_iter().ok()?;
                    let mut out = Vec::new();
                    for x in it {
                        let x = x.ok()?;
                        // A live tensor here has no source: as a constant it would bake this
                        // call's tensor into the graph.
                        if holds_tensor(py, &x, 0).unwrap_or(true) {
                            return None;
                        }
                        out.push(Var::Py(x.unbind(), None));
                    }
                    Some(out)
                } else {
                    None
                }
            }
            _ => None,
        }
    }

    /// Python truthiness, when known at trace time.
    pub fn truthy(&self, py: Python<'_>) -> Result<bool, TraceError> {
        match self {
            Var::Tensor(_) => Err(TraceError::unsupported(
                "data-dependent control flow: branching on the value of a tensor",
            )),
            Var::Ndarray(_) => Err(TraceError::unsupported(
                "data-dependent control flow: branching on the value of a numpy array computed in the graph",
            )),
            Var::Py(o, _) => Ok(o.bind(py).is_truthy()?),
            Var::Tuple(i) | Var::NamedTuple { items: i, .. } => Ok(!i.is_empty()),
            Var::List(i) => Ok(!i.borrow().is_empty()),
            Var::Deque(q) => Ok(!q.items.borrow().is_empty()),
            Var::Dict(i) => Ok(!i.borrow().is_empty()),
            Var::DictView(i, _) => Ok(!i.borrow().is_empty()),
            Var::ModelOutput(o) => Ok(!o.items().is_empty()),
            Var::Size(s) => Ok(!s.is_empty()),
            // `Frame::truth` guards the answer; here it is not known.
            Var::SymInt(..) | Var::SymFloat(..) => {
                Err(TraceError::unsupported("the truth of a symbolic size"))
            }
            Var::SymBool(_) => Err(TraceError::unsupported(
                "the truth of a comparison of symbolic sizes",
            )),
            Var::Set(o) => Ok(o.bind(py).is_truthy()?),
            // Only a class without `__bool__`/`__len__` is known true here (`Frame::truth`
            // inlines those).
            Var::Object(o) => {
                let cls = o.cls.bind(py);
                if cls.hasattr("__bool__")? || cls.hasattr("__len__")? {
                    Err(TraceError::unsupported(format!(
                        "the truth of a {} (it has __bool__ or __len__)",
                        self.type_name(py)
                    )))
                } else {
                    Ok(true)
                }
            }
            _ => Ok(true),
        }
    }

    /// This value as an argument of a graph call.
    pub fn to_arg(&self, py: Python<'_>) -> Result<Arg, TraceError> {
        Ok(match self {
            Var::Tensor(t) => Arg::Node(t.node),
            Var::Tuple(items) | Var::NamedTuple { items, .. } => Arg::Tuple(
                items
                    .iter()
                    .map(|i| i.to_arg(py))
                    .collect::<Result<_, _>>()?,
            ),
            Var::List(items) => Arg::List(
                items
                    .borrow()
                    .iter()
                    .map(|i| i.to_arg(py))
                    .collect::<Result<_, _>>()?,
            ),
            Var::Size(s) => Arg::Tuple(s.iter().map(|i| i.to_arg(py)).collect::<Result<_, _>>()?),
            Var::SymInt(node, _) | Var::SymFloat(node, _) => Arg::Node(*node),
            Var::Slice(p) => Arg::Slice(
                Box::new(p[0].to_arg(py)?),
                Box::new(p[1].to_arg(py)?),
                Box::new(p[2].to_arg(py)?),
            ),
            Var::Py(o, _) => py_to_arg(py, o.bind(py))?,
            other => {
                return Err(TraceError::unsupported(format!(
                    "passing a {} to a torch op",
                    other.type_name(py)
                )))
            }
        })
    }
}

/// Whether `o` can change between calls while keeping its identity: a list, dict, set or
/// bytearray (or subclass), or any `collections.abc` mutable collection (a `deque`). Values
/// computed from one at trace time are guarded only by its identity, so they must not fold.
pub fn is_mutable_container(py: Python<'_>, o: &Bound<'_, PyAny>) -> bool {
    if o.is_instance_of::<PyList>()
        || o.is_instance_of::<PyDict>()
        || o.is_instance_of::<pyo3::types::PySet>()
        || o.is_instance_of::<pyo3::types::PyByteArray>()
    {
        return true;
    }
    let Ok(abc) = py.import("collections.abc") else {
        return true;
    };
    ["MutableSequence", "MutableSet", "MutableMapping"]
        .iter()
        .any(|n| {
            abc.getattr(*n)
                .and_then(|c| o.is_instance(&c))
                .unwrap_or(true)
        })
}

/// Whether a plain container (list, dict, set, deque) holds a tensor, at any depth.
fn holds_tensor(
    py: Python<'_>,
    value: &Bound<'_, PyAny>,
    depth: usize,
) -> Result<bool, TraceError> {
    if depth > MAX_WRAP_DEPTH {
        return Ok(false);
    }
    if is_tensor(py, value)? {
        return Ok(true);
    }
    let container = value.is_instance_of::<PyList>()
        || value.is_instance_of::<PyTuple>()
        || value.is_instance_of::<pyo3::types::PySet>()
        || value.is_instance_of::<pyo3::types::PyFrozenSet>();
    if container {
        for x in value.try_iter()? {
            if holds_tensor(py, &x?, depth + 1)? {
                return Ok(true);
            }
        }
    } else if let Ok(d) = value.cast::<PyDict>() {
        for (_, v) in d.iter() {
            if holds_tensor(py, &v, depth + 1)? {
                return Ok(true);
            }
        }
    }
    Ok(false)
}

/// A Python constant as a graph argument.
pub fn py_to_arg(py: Python<'_>, o: &Bound<'_, PyAny>) -> Result<Arg, TraceError> {
    if o.is_none() {
        return Ok(Arg::None);
    }
    if let Ok(b) = o.cast::<PyBool>() {
        return Ok(Arg::Bool(b.is_true()));
    }
    if o.cast::<PyInt>().is_ok() {
        return Ok(Arg::Int(o.extract()?));
    }
    if o.cast::<PyFloat>().is_ok() {
        return Ok(Arg::Float(o.extract()?));
    }
    if let Ok(s) = o.cast::<PyString>() {
        return Ok(Arg::Str(s.to_string()));
    }
    if o.is(py.Ellipsis()) {
        return Ok(Arg::Ellipsis);
    }
    if let Ok(t) = o.cast::<PyTuple>() {
        return Ok(Arg::Tuple(
            t.iter()
                .map(|x| py_to_arg(py, &x))
                .collect::<Result<_, _>>()?,
        ));
    }
    if let Ok(t) = o.cast::<PyList>() {
        return Ok(Arg::List(
            t.iter()
                .map(|x| py_to_arg(py, &x))
                .collect::<Result<_, _>>()?,
        ));
    }
    if let Ok(s) = o.cast::<pyo3::types::PySlice>() {
        let parts = [
            s.getattr(intern!(py, "start"))?,
            s.getattr(intern!(py, "stop"))?,
            s.getattr(intern!(py, "step"))?,
        ];
        let p: Vec<Arg> = parts
            .iter()
            .map(|x| py_to_arg(py, x))
            .collect::<Result<_, _>>()?;
        let mut it = p.into_iter();
        return Ok(Arg::Slice(
            Box::new(it.next().unwrap()),
            Box::new(it.next().unwrap()),
            Box::new(it.next().unwrap()),
        ));
    }
    let torch = py.import("torch")?;
    if o.is_instance(&torch.getattr("dtype")?)? {
        return Ok(Arg::DType(dtype_of(py, o)?));
    }
    if o.is_instance(&torch.getattr("device")?)? {
        return Ok(Arg::Device(device_of(o)?));
    }
    // torch singletons such as torch.contiguous_format or torch.strided.
    let name = o.str()?.to_string();
    if let Some(attr) = name.strip_prefix("torch.") {
        if let Ok(found) = torch.getattr(attr) {
            if found.is(o) {
                return Ok(Arg::TorchAttr(name));
            }
        }
    }
    // A numpy scalar constant (`np.float32(0.5)`, `np.finfo(np.float32).eps`): torch takes it
    // as the Python number it holds.
    if super::pyobj::is_np_number(py, o) {
        return py_to_arg(py, &o.call_method0(intern!(py, "item"))?);
    }
    Err(TraceError::unsupported(format!(
        "passing a {} to a torch op",
        o.get_type().name()?
    )))
}

impl Tracer<'_> {
    /// Turns a live value read from `source` into a variable tracker, installing the guards that
    /// trace-time use of it relies on. `source == None` means the value is a constant (an
    /// attribute of a constant module, a code constant) and needs no guard.
    pub fn wrap(
        &mut self,
        value: Bound<'_, PyAny>,
        source: Option<Source>,
    ) -> Result<Var, TraceError> {
        // Containers are wrapped item by item: one that holds itself (`a.append(a)`, a module's
        // globals reached from its own functions) would recurse until the stack overflows.
        let _depth = WrapDepth::enter()?;
        self.wrap_inner(value, source)
    }

    fn wrap_inner(
        &mut self,
        value: Bound<'_, PyAny>,
        source: Option<Source>,
    ) -> Result<Var, TraceError> {
        let py = self.py;
        if is_tensor(py, &value)? {
            let Some(source) = source else {
                return Err(TraceError::unsupported("a tensor constant with no source"));
            };
            if let Some(kind) = non_strided_kind(py, &value)? {
                // Graphs and kernels address elements by sizes and strides; a sparse tensor
                // reports strides of 0 and a kernel reading it as dense walks off its storage.
                return Err(TraceError::unsupported(format!("a {kind} tensor")));
            }
            // Dynamic shapes: which dimensions get size symbols (`dynamic=`, marks, automatic
            // dynamic); the tensor check leaves those to the shape guards.
            let dynamic = crate::guards::shape_env::dynamic_dims(py, &source, &value);
            let mut check = tensor_check(&value)?;
            if dynamic.iter().any(Option::is_some) {
                check.dynamic = dynamic.iter().map(Option::is_some).collect();
            }
            self.guards.add(py, &source, Check::Tensor(check));
            if let Some(first) = self.output.input_of_object(&source, &value) {
                // One object reached twice: one placeholder, guarded to stay one object.
                self.guards.add_identity(&first, &source, true);
                let t = self.output.input(py, &first, &value)?;
                return Ok(Var::Tensor(t));
            }
            let t = self.output.input_dynamic(py, &source, &value, &dynamic)?;
            return Ok(Var::Tensor(t));
        }
        if let Some(source) = &source {
            if let Some(a) = self.wrap_ndarray(&value, source)? {
                return Ok(a);
            }
        }
        let Some(source) = source else {
            if let Ok(t) = value.cast::<PyTuple>() {
                // A folded result keeps its type: a `torch.Size` stays a size, a namedtuple
                // stays one (its class decides `type()`, attributes and equality with it).
                let ty = value.get_type();
                if !ty.is(py.get_type::<PyTuple>()) && holds_tensor(py, &value, 0)? {
                    // A tuple subclass computed at trace time from live tensors.
                    if !ty.hasattr("_fields").unwrap_or(false) {
                        return Err(TraceError::unsupported("a tensor constant with no source"));
                    }
                }
                if !ty.is(py.get_type::<PyTuple>()) {
                    if ty.name().map(|n| n == "Size").unwrap_or(false)
                        && ty.module().map(|m| m == "torch").unwrap_or(false)
                    {
                        if let Ok(s) = value.extract::<Vec<i64>>() {
                            return Ok(Var::size_const(py, &s));
                        }
                    }
                    if !ty.hasattr("_fields").unwrap_or(false) {
                        return Ok(Var::Py(value.unbind(), None));
                    }
                }
                let items = t
                    .iter()
                    .map(|x| self.wrap(x, None))
                    .collect::<Result<Vec<_>, _>>()?;
                if !ty.is(py.get_type::<PyTuple>()) {
                    return Ok(Var::NamedTuple {
                        ty: ty.into_any().unbind(),
                        items: items.into(),
                    });
                }
                return Ok(Var::Tuple(items.into()));
            }
            if value.get_type().is(py.get_type::<pyo3::types::PySet>()) {
                return Ok(Var::Set(value.unbind()));
            }
            // A value computed at trace time (a fold over a frame object: `list(xs)` of a list
            // subclass) that holds live tensors would bake this call's tensors into the graph.
            if holds_tensor(py, &value, 0)? {
                return Err(TraceError::unsupported("a tensor constant with no source"));
            }
            return Ok(Var::Py(value.unbind(), None));
        };
        // One tracker per container object, whatever path it was reached by, so `a is b` and
        // mutations through either name agree.
        if let Some((l, first, _)) = self.external_lists.iter().find(|(_, _, o)| o.is(&value)) {
            let (l, first) = (l.clone(), first.clone());
            // Reached through another source: the two sources must hold one object again.
            if !first.same_as(&source) {
                self.guards.add_identity(&first, &source, true);
            }
            self.guards
                .add(py, &source, Check::Type(value.get_type().unbind()));
            self.guards.add(py, &source, Check::Len(value.len()?));
            return Ok(Var::List(l));
        }
        if let Some((s, _, _)) = self.external_sets.iter().find(|(_, _, o)| o.is(&value)) {
            let s = s.clone_ref(py);
            // A copy of its own (`Equals` compares types too), never changed.
            let snapshot = py.import("builtins")?.getattr("set")?.call1((&value,))?;
            self.guards
                .add(py, &source, Check::Type(value.get_type().unbind()));
            self.guards
                .add(py, &source, Check::Equals(snapshot.unbind()));
            return Ok(Var::Set(s));
        }
        if let Some((q, first, _)) = self.external_deques.iter().find(|(_, _, o)| o.is(&value)) {
            let (q, first) = (q.clone(), first.clone());
            // Reached through another source: the two sources must hold one object again.
            if !first.same_as(&source) {
                self.guards.add_identity(&first, &source, true);
            }
            self.guards
                .add(py, &source, Check::Type(value.get_type().unbind()));
            self.guards.add(py, &source, Check::Len(value.len()?));
            return Ok(Var::Deque(q));
        }
        if let Some((d, first, _)) = self.external_dicts.iter().find(|(_, _, o)| o.is(&value)) {
            let (d, first) = (d.clone(), first.clone());
            // Reached through another source: the two sources must hold one object again.
            if !first.same_as(&source) {
                self.guards.add_identity(&first, &source, true);
            }
            self.guards
                .add(py, &source, Check::Type(value.get_type().unbind()));
            self.guards.add(py, &source, Check::Len(value.len()?));
            return Ok(Var::Dict(d));
        }
        // An argument of the frame is guarded when the traced code uses it: a value that is only
        // passed along (a resumed stack slot that is stored and never read) needs no guard.
        // So is an item of a list, tuple or dict argument, at any depth (a resume function's
        // list of floats, or of lists of floats, that only `len()` reads): using the container realizes its items' checks
        // (`realize_in`), `len` needs only the container's length, guarded when it was wrapped.
        let lazy = source.root_local().is_some()
            && source.steps()[1..]
                .iter()
                .all(|s| matches!(s, crate::source::Step::Item { .. }));
        // Slices are values too: compared by their start, stop and step.
        let is_slice = value.get_type().is(py.get_type::<pyo3::types::PySlice>());
        // An int that changed at a recompile (automatic dynamic): a symbolic int graph input,
        // guarded by its type, not its value (`L['n'] >= 2` only if it reaches a size).
        if crate::guards::shape_env::int_is_dynamic(py, &source, &value) {
            self.guards
                .add(py, &source, Check::Type(value.get_type().unbind()));
            return self.output.int_input(py, &source, &value);
        }
        if value.is_none() || is_const_type(&value) || is_slice {
            let check = if value.is_none() {
                Check::IsNone
            } else {
                Check::Equals(value.clone().unbind())
            };
            if lazy {
                self.guards.defer(&source, check, false);
            } else {
                self.guards.add(py, &source, check);
            }
        } else if let Ok(t) = value.cast::<PyTuple>() {
            // Guard the shape of the container; each item guards itself.
            self.guards
                .add(py, &source, Check::Type(value.get_type().unbind()));
            self.guards.add(py, &source, Check::Len(t.len()));
            let plain = value.get_type().is(py.get_type::<PyTuple>());
            // One tuple reached again through another source: its tracker, while the two
            // sources hold one object (guarded).
            if let Some((items, first, _)) = self
                .external_tuples
                .iter()
                .find(|(_, _, o)| o.bind(py).is(&value))
            {
                if plain && !first.same_as(&source) {
                    let (items, first) = (items.clone(), first.clone());
                    self.guards.add_identity(&first, &source, true);
                    return Ok(Var::Tuple(items));
                }
            }
            let mut items = Vec::new();
            for (i, x) in t.iter().enumerate() {
                items.push(self.wrap(x, Some(source.item(i.into_pyobject(py)?.into_any())))?);
            }
            if plain {
                let items: Items = items.into();
                self.external_tuples
                    .push((items.clone(), source, value.unbind()));
                return Ok(Var::Tuple(items));
            }
            // A namedtuple or other tuple subclass: keep the object, items are guarded.
            return Ok(Var::Py(value.unbind(), Some(source)));
        } else if let (Ok(l), true) = (
            value.cast::<PyList>(),
            value.get_type().is(py.get_type::<PyList>())
                || input_container_kind(py, &value, "list"),
        ) {
            self.guards
                .add(py, &source, Check::Type(value.get_type().unbind()));
            self.guards.add(py, &source, Check::Len(l.len()));
            let mut items = Vec::new();
            for (i, x) in l.iter().enumerate() {
                items.push(self.wrap(x, Some(source.item(i.into_pyobject(py)?.into_any())))?);
            }
            // A list from outside is read-only to the tracer: mutating it breaks the graph, so
            // the real object is still the one the rest of the frame must see (its source).
            let rc = Rc::new(RefCell::new(items));
            let user = !value.get_type().is(py.get_type::<PyList>());
            if user {
                // A user subclass: its overrides dispatch as for one the frame made.
                set_list_kind(&rc, value.get_type().into_any().unbind());
            }
            self.external_lists
                .push((rc.clone(), source.clone(), value.clone().unbind()));
            let v = Var::List(rc);
            if user {
                self.wrap_container_attrs(&v, &value, &source)?;
            }
            return Ok(v);
        } else if value.get_type().is(py.get_type::<pyo3::types::PySet>())
            && value
                .try_iter()?
                .all(|x| x.is_ok_and(|x| super::pyobj::is_immutable_const(&x)))
        {
            // A set of constants from outside (a module-level registry): guarded by its
            // contents, traced as a private copy, written back after the graph if changed.
            let snapshot = py.import("builtins")?.getattr("set")?.call1((&value,))?;
            self.guards
                .add(py, &source, Check::Type(value.get_type().unbind()));
            self.guards
                .add(py, &source, Check::Equals(snapshot.unbind()));
            let copy = py
                .import("builtins")?
                .getattr("set")?
                .call1((&value,))?
                .unbind();
            self.external_sets
                .push((copy.clone_ref(py), source, value.unbind()));
            return Ok(Var::Set(copy));
        } else if value
            .get_type()
            .is(py.import("collections")?.getattr("deque")?)
        {
            // A deque from outside (a module-level queue): its items read through their
            // sources, its mutations written back after the graph (`SideEffects::deques`).
            self.guards
                .add(py, &source, Check::Type(value.get_type().unbind()));
            self.guards.add(py, &source, Check::Len(value.len()?));
            let mut items = Vec::new();
            for (i, x) in value.try_iter()?.enumerate() {
                items.push(self.wrap(x?, Some(source.item(i.into_pyobject(py)?.into_any())))?);
            }
            let maxlen: Option<usize> = value.getattr("maxlen")?.extract()?;
            let rc = Rc::new(DequeVar {
                items: RefCell::new(items),
                maxlen,
            });
            self.external_deques
                .push((rc.clone(), source, value.unbind()));
            return Ok(Var::Deque(rc));
        } else if let (Ok(d), true) = (
            value.cast::<PyDict>(),
            value.get_type().is(py.get_type::<PyDict>())
                || input_container_kind(py, &value, "dict"),
        ) {
            self.guards
                .add(py, &source, Check::Type(value.get_type().unbind()));
            let keys = crate::guards::dict_keys_in_order(py, d)?;
            self.guards.add(
                py,
                &source,
                Check::DictKeys(keys.iter().map(|k| k.clone().unbind()).collect()),
            );
            let mut items = Vec::new();
            for k in keys {
                let v = d
                    .get_item(&k)?
                    .ok_or_else(|| TraceError::internal("a dict key without its item"))?;
                let item = self.wrap(v, Some(source.item(k.clone())))?;
                items.push((k.unbind(), item));
            }
            let rc = Rc::new(RefCell::new(items));
            let user = !value.get_type().is(py.get_type::<PyDict>());
            if user {
                set_dict_kind(&rc, (value.get_type().into_any().unbind(), None));
            }
            self.external_dicts
                .push((rc.clone(), source.clone(), value.clone().unbind()));
            let v = Var::Dict(rc);
            if user {
                self.wrap_container_attrs(&v, &value, &source)?;
            }
            return Ok(v);
        } else {
            let torch = py.import("torch")?;
            if value.is_instance(&torch.getattr("device")?)? {
                self.guards
                    .add(py, &source, Check::Equals(value.clone().unbind()));
            } else if is_plain_object(py, &value)? {
                // A per-call object (a dataclass, a ModelOutput, a cache): what the trace reads
                // from it is guarded through its own sources, so its type is enough, unless the
                // traced code compares identities or folds a call on it (`realize_identity`).
                self.guards
                    .add(py, &source, Check::Type(value.get_type().unbind()));
                self.guards
                    .defer(&source, Check::Id(value.clone().unbind()), true);
            } else if lazy
                && (is_per_call_torch_object(py, &value)?
                    || value
                        .get_type()
                        .is(py.import("functools")?.getattr("partial")?))
            {
                // (A `functools.partial` the frame made before a graph break is new on every
                // call too; a call through it reads `func`/`args`/`keywords` by their sources.)
                // A torch object that a call makes afresh (a `Generator`, an `UntypedStorage`,
                // a `finfo`), read from the frame's arguments: a resume function gets it on its
                // stack or in its locals on every call. The trace cannot put it into a graph
                // (`py_to_arg` refuses it) and reads its attributes through their own sources,
                // so its type is what the trace depends on; identity only where the code
                // compares, folds a call on it or formats it (`realize_identity`).
                self.guards
                    .add(py, &source, Check::Type(value.get_type().unbind()));
                self.guards
                    .defer(&source, Check::Id(value.clone().unbind()), true);
            } else if value
                .get_type()
                .is(py.import("types")?.getattr("FunctionType")?)
                && (lazy
                    || value
                        .getattr("__qualname__")?
                        .extract::<String>()?
                        .contains("<locals>"))
            {
                // A function made by a frame (a closure, a lambda, a recursive local function:
                // a new object on every call of its maker) that reaches the resume function of a
                // graph break, or a cell of another such function: guarded by its code, as
                // torch.compile guards a function. A call through it reads its defaults and
                // closure cells by their own sources; its identity is checked only where the
                // traced code relies on it.
                self.guards
                    .add(py, &source, Check::Type(value.get_type().unbind()));
                self.guards.add(
                    py,
                    &source.attr(py, "__code__"),
                    Check::Id(value.getattr("__code__")?.unbind()),
                );
                self.guards
                    .defer(&source, Check::Id(value.clone().unbind()), true);
            } else if lazy
                && value.is_instance(&py.get_type::<pyo3::exceptions::PyBaseException>())?
            {
                // An exception object a resume function gets on its stack (the exception its
                // handler catches, new on every raise): `except` clauses match its type, what
                // the handler reads from it (`e.args`) goes through its own sources, so its
                // type is what the trace depends on; identity only where the code compares,
                // formats (`str(e)`), folds a call on it or raises it again
                // (`realize_identity`). An identity guard would recompile the handler for every
                // exception.
                self.guards
                    .add(py, &source, Check::Type(value.get_type().unbind()));
                self.guards
                    .defer(&source, Check::Id(value.clone().unbind()), true);
            } else if crate::source::weakref_referent(&value).is_some() {
                // A `weakref.ref` (`nn.RNNBase._flat_weight_refs`, remade whenever the flat
                // weights are): a call reads its referent through its own source
                // (`Step::WeakRefCall`), so its type is what the trace depends on; identity only
                // where the code relies on it (`realize_identity`).
                self.guards
                    .add(py, &source, Check::Type(value.get_type().unbind()));
                self.guards
                    .defer(&source, Check::Id(value.clone().unbind()), true);
            } else if is_nn_module(py, &value)? {
                // An nn.Module instance is guarded by its type, as torch.compile guards it:
                // what the trace reads from it (submodules, parameters, buffers, flags, hooks)
                // is guarded through its own sources, so models of one class with other weights
                // share an entry instead of compiling one each until the recompile limit. Its
                // identity is checked only where the traced code relies on it
                // (`realize_identity`).
                self.guards
                    .add(py, &source, Check::Type(value.get_type().unbind()));
                self.guards
                    .defer(&source, Check::Id(value.clone().unbind()), true);
            } else if let Some(owner) = bound_to_class(py, &value)? {
                // A method bound to a class (`dict.fromkeys`, a classmethod) is a new object on
                // every read: guarded by its type, the class it is bound to and its function
                // (a builtin's name), which stay.
                self.guards
                    .add(py, &source, Check::Type(value.get_type().unbind()));
                self.guards
                    .add(py, &source.attr(py, "__self__"), Check::Id(owner.unbind()));
                match value.getattr("__func__") {
                    Ok(func) => {
                        self.guards
                            .add(py, &source.attr(py, "__func__"), Check::Id(func.unbind()))
                    }
                    Err(_) => self.guards.add(
                        py,
                        &source.attr(py, "__name__"),
                        Check::Equals(value.getattr("__name__")?.unbind()),
                    ),
                }
            } else {
                // Modules, functions, classes, dtypes and other objects: identity.
                self.guards
                    .add(py, &source, Check::Id(value.clone().unbind()));
            }
        }
        Ok(Var::Py(value.unbind(), Some(source)))
    }

    /// A new set of `items` (known hashable values), as `{a, b}` builds it.
    pub fn new_set(&mut self, items: &[Var]) -> Result<Var, TraceError> {
        let set = pyo3::types::PySet::empty(self.py)?;
        let set = Var::Set(set.into_any().unbind());
        let Var::Set(o) = &set else { unreachable!() };
        self.set_add(o, items)?;
        Ok(set)
    }

    /// `set.add` of each of `items`.
    pub fn set_add(&mut self, set: &Py<PyAny>, items: &[Var]) -> Result<(), TraceError> {
        let py = self.py;
        for i in items {
            // An element is hashed by its value: a symbolic int is specialized.
            let v = match self.frozen_key(i)? {
                Some(k) => k.into_bound(py),
                None => {
                    self.guard_hashed(i)?;
                    self.specialize(i.clone())?
                        .as_py(py)
                        .ok_or_else(|| TraceError::unsupported("a set of tensors"))?
                }
            };
            set.bind(py).call_method1("add", (v,))?;
        }
        // `SET_ADD`/`SET_UPDATE` change a set from the frame (one a resume function was handed
        // on its stack: a set comprehension broken in its body on 3.12) as `s.add` does.
        if !items.is_empty() {
            self.note_set_mutation(set);
        }
        Ok(())
    }

    /// Installs the deferred guards of the values in `v`: the traced code uses them now.
    pub fn realize(&mut self, v: &Var) {
        if self.guards.has_deferred() {
            self.realize_in(v, false, 0);
        }
    }

    /// Like `realize`, and also the identity of the objects in `v` (for `is`, or a call that
    /// runs on the real object).
    /// A constant of a code object (`LOAD_CONST`): a tuple constant is one tracker per object
    /// (`Tracer::const_tuples`), so two loads of it are one object, as in eager.
    pub(crate) fn wrap_const(&mut self, c: Bound<'_, PyAny>) -> Result<Var, TraceError> {
        let py = self.py;
        if !c.get_type().is(py.get_type::<PyTuple>()) {
            return self.wrap(c, None);
        }
        if let Some((_, items)) = self.const_tuples.iter().find(|(o, _)| o.bind(py).is(&c)) {
            return Ok(Var::Tuple(items.clone()));
        }
        let v = self.wrap(c.clone(), None)?;
        if let Var::Tuple(items) = &v {
            self.const_tuples.push((c.unbind(), items.clone()));
        }
        Ok(v)
    }

    /// The instance `__dict__` of a user container read from the frame, tracked as the real
    /// dict it is (its writes are written back after the graph), as the container's attributes.
    fn wrap_container_attrs(
        &mut self,
        v: &Var,
        value: &Bound<'_, PyAny>,
        source: &Source,
    ) -> Result<(), TraceError> {
        let py = self.py;
        let Ok(d) = value.getattr("__dict__") else {
            return Ok(());
        };
        if let Var::Dict(attrs) = self.wrap(d, Some(source.attr(py, "__dict__")))? {
            set_container_attrs(v, attrs);
        }
        Ok(())
    }

    pub fn realize_identity(&mut self, v: &Var) {
        if self.guards.has_deferred() {
            self.realize_in(v, true, 0);
        }
    }

    fn realize_in(&mut self, v: &Var, identity: bool, depth: usize) {
        if depth > 16 {
            return;
        }
        let py = self.py;
        match v {
            Var::Py(_, Some(s)) => self.guards.realize(py, s, identity),
            Var::Tuple(items) | Var::NamedTuple { items, .. } => {
                for i in items.iter() {
                    self.realize_in(i, identity, depth + 1);
                }
            }
            Var::List(items) => {
                let items = items.borrow().clone();
                for i in &items {
                    self.realize_in(i, identity, depth + 1);
                }
            }
            Var::Deque(q) => {
                let items = q.items.borrow().clone();
                for i in &items {
                    self.realize_in(i, identity, depth + 1);
                }
            }
            Var::Dict(items) | Var::DictView(items, _) => {
                let items: Vec<Var> = items.borrow().iter().map(|(_, v)| v.clone()).collect();
                for i in &items {
                    self.realize_in(i, identity, depth + 1);
                }
            }
            Var::Slice(parts) => {
                for i in parts.iter() {
                    self.realize_in(i, identity, depth + 1);
                }
            }
            Var::Method { recv, .. } => self.realize_in(recv, identity, depth + 1),
            Var::BoundMethod { func, self_ } => {
                self.realize_in(func, identity, depth + 1);
                self.realize_in(self_, identity, depth + 1);
            }
            Var::Super { obj, .. } => self.realize_in(obj, identity, depth + 1),
            Var::Cell(c) => {
                let inner = c.borrow().clone();
                if let Some(i) = inner {
                    self.realize_in(&i, identity, depth + 1);
                }
            }
            _ => {}
        }
    }

    /// Whether `dict` was read from the frame's inputs (so mutating it is a side effect).
    pub fn is_external_dict(&self, dict: &DictItems) -> bool {
        self.external_dicts
            .iter()
            .any(|(d, _, _)| Rc::ptr_eq(d, dict))
    }

    /// Whether `list` was read from the frame's inputs (so mutating it is a side effect).
    pub fn is_external_list(&self, list: &Rc<RefCell<Vec<Var>>>) -> bool {
        self.external_lists
            .iter()
            .any(|(l, _, _)| Rc::ptr_eq(l, list))
    }

    /// Where each container read from outside came from, by the address of its tracked items.
    /// The source a container read from the frame (a list, dict, deque or tuple tracker) was
    /// first read from; `None` for one the traced code made.
    pub(crate) fn external_container_source(&self, v: &Var) -> Option<Source> {
        fn find<T>(list: &[super::External<Rc<T>>], x: &Rc<T>) -> Option<Source> {
            list.iter()
                .find(|(y, _, _)| Rc::ptr_eq(x, y))
                .map(|(_, s, _)| s.clone())
        }
        match v {
            Var::List(l) => find(&self.external_lists, l),
            Var::Dict(d) => find(&self.external_dicts, d),
            Var::Deque(q) => find(&self.external_deques, q),
            Var::Tuple(t) => find(&self.external_tuples, t),
            _ => None,
        }
    }

    pub fn external_sources(&self) -> Vec<(usize, Source)> {
        let lists = self
            .external_lists
            .iter()
            .map(|(l, s, _)| (Rc::as_ptr(l) as usize, s.clone()));
        let dicts = self
            .external_dicts
            .iter()
            .map(|(d, s, _)| (Rc::as_ptr(d) as usize, s.clone()));
        let deques = self
            .external_deques
            .iter()
            .map(|(q, s, _)| (Rc::as_ptr(q) as usize, s.clone()));
        let sets = self
            .external_sets
            .iter()
            .map(|(o, s, _)| (o.as_ptr() as usize, s.clone()));
        let tuples = self
            .external_tuples
            .iter()
            .map(|(t, s, _)| (Rc::as_ptr(t) as usize, s.clone()));
        lists
            .chain(dicts)
            .chain(deques)
            .chain(sets)
            .chain(tuples)
            .collect()
    }
}

/// (Registry of dict kinds: kept beside `Var`, which reads it when it rebuilds a dict.)
/// The class of a dict made by the traced code as an `OrderedDict` or `defaultdict`, and the
/// default factory of a `defaultdict`.
pub(crate) type DictKind = (Py<PyAny>, Option<Var>);

/// A weak reference to a dict tracker, so the registry below does not keep dicts alive.
type WeakDict = std::rc::Weak<RefCell<Vec<(Py<PyAny>, Var)>>>;

thread_local! {
    /// Dicts made by the traced code as `OrderedDict`/`defaultdict`, by their tracker (a weak
    /// reference: an entry ends with its dict). They are tracked as plain dicts otherwise.
    static DICT_KINDS: RefCell<Vec<(WeakDict, DictKind)>> =
        const { RefCell::new(Vec::new()) };
}

pub(crate) fn set_dict_kind(d: &DictItems, kind: DictKind) {
    DICT_KINDS.with(|k| {
        let mut k = k.borrow_mut();
        k.retain(|(w, _)| w.strong_count() > 0);
        k.push((Rc::downgrade(d), kind));
    });
}

/// The class (and default factory) of a dict the traced code made as an `OrderedDict` or
/// `defaultdict`; `None` for a plain dict.
pub(crate) fn dict_kind(d: &DictItems) -> Option<DictKind> {
    Python::attach(|py| {
        DICT_KINDS.with(|k| {
            k.borrow()
                .iter()
                .find(|(w, _)| std::ptr::eq(w.as_ptr(), Rc::as_ptr(d)))
                .map(|(_, (c, f))| (c.clone_ref(py), f.clone()))
        })
    })
}

/// A weak reference to a list tracker.
type WeakList = std::rc::Weak<RefCell<Vec<Var>>>;

thread_local! {
    /// Lists made by the traced code as instances of a user subclass of `list` (see
    /// `user_containers.rs`), by their tracker, with the class.
    static LIST_KINDS: RefCell<Vec<(WeakList, Py<PyAny>)>> = const { RefCell::new(Vec::new()) };
}

pub(crate) fn set_list_kind(l: &Rc<RefCell<Vec<Var>>>, cls: Py<PyAny>) {
    LIST_KINDS.with(|k| {
        let mut k = k.borrow_mut();
        k.retain(|(w, _)| w.strong_count() > 0);
        k.push((Rc::downgrade(l), cls));
    });
}

/// The user subclass of `list` a tracked list was made as; `None` for a plain list.
pub(crate) fn list_kind(l: &Rc<RefCell<Vec<Var>>>) -> Option<Py<PyAny>> {
    Python::attach(|py| {
        LIST_KINDS.with(|k| {
            k.borrow()
                .iter()
                .find(|(w, _)| std::ptr::eq(w.as_ptr(), Rc::as_ptr(l)))
                .map(|(_, c)| c.clone_ref(py))
        })
    })
}

thread_local! {
    /// Tuples the traced code built as new objects (`BUILD_TUPLE`, `LIST_TO_TUPLE` with at
    /// least one item), by their tracker: such a tuple is no object that existed before it, and
    /// no other tuple built so. Other trackers may still be an existing object (CPython's
    /// `tuple(t)`, `t[:]` and `t + ()` return `t`; equal constants are one object; `()` is a
    /// singleton), so `is` decides them only by sameness. A weak reference keeps its
    /// allocation, so an address is never reused while listed.
    static FRESH_TUPLES: RefCell<Vec<std::rc::Weak<Vec<Var>>>> = const { RefCell::new(Vec::new()) };
}

/// A tuple the traced code builds as a new object (see `FRESH_TUPLES`).
pub(crate) fn fresh_tuple(items: Vec<Var>) -> Var {
    let empty = items.is_empty();
    let items: Items = Rc::new(items);
    if !empty {
        FRESH_TUPLES.with(|f| {
            let mut f = f.borrow_mut();
            f.retain(|w| w.strong_count() > 0);
            f.push(Rc::downgrade(&items));
        });
    }
    Var::Tuple(items)
}

/// Whether a tuple tracker was built as a new object by the traced code.
pub(crate) fn is_fresh_tuple(items: &Items) -> bool {
    FRESH_TUPLES.with(|f| {
        f.borrow()
            .iter()
            .any(|w| std::ptr::eq(w.as_ptr(), Rc::as_ptr(items)))
    })
}

/// A weak reference to the tracker of a user container: a dict or a list.
enum WeakContainer {
    Dict(WeakDict),
    List(WeakList),
}

impl WeakContainer {
    fn of(v: &Var) -> Option<Self> {
        match v {
            Var::Dict(d) => Some(WeakContainer::Dict(Rc::downgrade(d))),
            Var::List(l) => Some(WeakContainer::List(Rc::downgrade(l))),
            _ => None,
        }
    }

    fn alive(&self) -> bool {
        match self {
            WeakContainer::Dict(w) => w.strong_count() > 0,
            WeakContainer::List(w) => w.strong_count() > 0,
        }
    }

    fn is(&self, v: &Var) -> bool {
        match (self, v) {
            (WeakContainer::Dict(w), Var::Dict(d)) => std::ptr::eq(w.as_ptr(), Rc::as_ptr(d)),
            (WeakContainer::List(w), Var::List(l)) => std::ptr::eq(w.as_ptr(), Rc::as_ptr(l)),
            _ => false,
        }
    }
}

thread_local! {
    /// The instance attributes (`__dict__`) of user containers the traced code made
    /// (`self.writes = 0` in a `dict` subclass's `__init__`, a dataclass field of a
    /// `ModelOutput`-like `OrderedDict`), by their tracker. Python keeps them beside the
    /// items, so the tracker (the items alone) cannot hold them; an entry is made by the first
    /// write and ends with its container.
    static CONTAINER_ATTRS: RefCell<Vec<(WeakContainer, DictItems)>> =
        const { RefCell::new(Vec::new()) };
}

/// The instance `__dict__` of a user container the traced code made, if it has one yet.
pub(crate) fn container_attrs(v: &Var) -> Option<DictItems> {
    CONTAINER_ATTRS.with(|a| {
        a.borrow()
            .iter()
            .find(|(w, _)| w.is(v))
            .map(|(_, d)| d.clone())
    })
}

/// The instance `__dict__` of a user container read from the frame: the tracker of its real
/// `__dict__` (an external dict, written back after the graph).
fn set_container_attrs(v: &Var, attrs: DictItems) {
    if let Some(w) = WeakContainer::of(v) {
        CONTAINER_ATTRS.with(|a| {
            let mut a = a.borrow_mut();
            a.retain(|(w, _)| w.alive());
            a.push((w, attrs));
        });
    }
}

/// The instance `__dict__` of a user container, made empty on first use; `None` for a value
/// that is no tracked dict or list.
pub(crate) fn container_attrs_or_new(v: &Var) -> Option<DictItems> {
    if let Some(d) = container_attrs(v) {
        return Some(d);
    }
    let w = WeakContainer::of(v)?;
    let d: DictItems = Rc::new(RefCell::new(Vec::new()));
    CONTAINER_ATTRS.with(|a| {
        let mut a = a.borrow_mut();
        a.retain(|(w, _)| w.alive());
        a.push((w, d.clone()));
    });
    Some(d)
}

/// Whether an input is an instance of a user subclass of `dict` (or `OrderedDict`) or `list`
/// (`base`) that `user_containers.rs` traces: tracked as the container, written back after the
/// graph by the builtin's own methods; its instance attributes are its real `__dict__`, tracked
/// as an external dict (`Tracer::wrap_container_attrs`) and written back with it.
fn input_container_kind(py: Python<'_>, value: &Bound<'_, PyAny>, base: &str) -> bool {
    let ty = value.get_type();
    let Ok(Some(b)) = super::pyobj::container_base(py, ty.as_any()) else {
        return false;
    };
    let builtin = py.import("builtins").and_then(|m| m.getattr(base));
    // An `OrderedDict` subclass is a dict input too (its order is the OrderedDict's own).
    let ordered = base == "dict"
        && py
            .import("collections")
            .and_then(|m| m.getattr("OrderedDict"))
            .is_ok_and(|od| b.is(&od));
    builtin.is_ok_and(|x| b.is(&x)) || ordered
}

/// `(cls, base)` of a list or dict the traced code made (or read) as an instance of a user
/// subclass (`user_containers.rs`): rebuilt by `pyobj::rebuild_fn`.
pub(crate) fn user_container_class(py: Python<'_>, v: &Var) -> Option<(Py<PyAny>, Py<PyAny>)> {
    let cls = match v {
        Var::Dict(d) => dict_kind(d).and_then(|(c, f)| f.is_none().then_some(c))?,
        Var::List(l) => list_kind(l)?,
        _ => return None,
    };
    let base = super::pyobj::container_base(py, cls.bind(py))
        .ok()
        .flatten()?;
    Some((cls, base.unbind()))
}

/// The class `value` is bound to, where it is a method bound to a class (a classmethod read
/// from its class, a builtin class method such as `dict.fromkeys`).
fn bound_to_class<'py>(
    py: Python<'py>,
    value: &Bound<'py, PyAny>,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    let ty = value.get_type();
    let types = py.import("types")?;
    if !(ty.is(types.getattr("MethodType")?) || ty.is(types.getattr("BuiltinMethodType")?)) {
        return Ok(None);
    }
    let owner = value.getattr("__self__")?;
    Ok(owner
        .is_instance_of::<pyo3::types::PyType>()
        .then_some(owner))
}

/// A real instance standing for a frozen dataclass object the trace made (`frozen=True`,
/// `eq=True`) whose fields are all immutable constants: hashed and compared by those fields as
/// the object is (its generated `__hash__`/`__eq__`), so it can key a dict or sit in a set
/// before the graph runs. A dict that escapes then holds this instance as the key (equal to the
/// object, not the object itself). `None` for any other value.
pub(crate) fn frozen_value_key(py: Python<'_>, v: &Var) -> PyResult<Option<Py<PyAny>>> {
    let Var::Object(o) = v else {
        return Ok(None);
    };
    let cls = o.cls.bind(py);
    if !hashes_by_fields(cls)? {
        return Ok(None);
    }
    let object = py.import("builtins")?.getattr("object")?;
    let inst = object.call_method1("__new__", (cls,))?;
    let setattr = object.getattr("__setattr__")?;
    for (name, value) in o.attrs.borrow().iter() {
        let Some(value) = value.as_py(py) else {
            return Ok(None);
        };
        if !super::pyobj::is_immutable_const(&value) {
            return Ok(None);
        }
        setattr.call1((&inst, name.bind(py), value))?;
    }
    Ok(Some(inst.unbind()))
}

/// Whether instances of `cls` hash and compare by their fields: a dataclass with `frozen=True`
/// and `eq=True` (its generated `__hash__`/`__eq__`).
pub(crate) fn hashes_by_fields(cls: &Bound<'_, PyAny>) -> PyResult<bool> {
    let Ok(params) = cls.getattr("__dataclass_params__") else {
        return Ok(false);
    };
    Ok(params.getattr("frozen")?.is_truthy()? && params.getattr("eq")?.is_truthy()?)
}

/// `d[name] = v` on a dict tracker with a string key: the item replaced in place, or appended.
pub(crate) fn dict_set(py: Python<'_>, d: &DictItems, name: &str, v: Var) {
    let key = pyo3::types::PyString::new(py, name);
    let mut items = d.borrow_mut();
    match items
        .iter_mut()
        .find(|(k, _)| k.bind(py).eq(&key).unwrap_or(false))
    {
        Some(slot) => slot.1 = v,
        None => items.push((key.into_any().unbind(), v)),
    }
}
