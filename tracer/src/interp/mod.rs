//! The symbolic interpreter: runs a frame's bytecode over variable trackers, building the graph
//! and the guards. It never executes the user's function body; it reads the frame's inputs and
//! runs torch ops on `meta` tensors to learn result metadata.

mod abc_mixins;
mod attr_writes;
mod calls;
pub mod comprehension;
mod exceptions;
mod gencm;
mod generators;
pub(crate) use vars::dict_kind;
mod handlers;
mod inline;
pub mod libobj;
mod meta_inplace;
pub mod model_output;
mod nested;
pub(crate) mod numpy;
mod objects;
mod ops;
mod patterns;
pub(crate) mod pyobj;
mod step;
mod storage;
pub(crate) mod symfloat;
mod symint;
mod tracked_super;
mod user_containers;
pub mod vars;

use std::cell::RefCell;
use std::rc::Rc;

use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::code::CodeInfo;
use crate::error::TraceError;
use crate::guards::GuardTree;
use crate::output::OutputGraph;
use crate::source::{Scope, Source};

pub(crate) use abc_mixins::object_attr_is_property;
pub(crate) use calls::CREATE_GRAPH_BREAK;
pub(crate) use gencm::unentered_parts as unentered_generator_cm;
pub(crate) use objects::{fill_function, object_attr_misses_to_getattr, object_has_attr};
pub(crate) use pyobj::rebuild_fn as user_container_rebuild;
pub(crate) use user_containers::rebuild_class as user_container_class;
pub(crate) use vars::container_attrs;
pub use vars::Var;

/// A container read from the frame's inputs: its tracker, where it came from, and the object.
pub(crate) type External<T> = (T, Source, Py<PyAny>);

/// A `ModuleList` made by slicing one the frame reached (`ModuleList.__getitem__` with a
/// slice): the new list object, the source of the list it was cut from, and the keys of that
/// list's `_modules` it holds, in order. The parent's keys are guarded (`DICT_KEYS`), so the
/// same slice selects the same children on a later call; each child is guarded by its own
/// source `parent._modules[key]`.
pub(crate) struct ModuleListSlice {
    pub(crate) list: Py<PyAny>,
    pub(crate) parent: Source,
    pub(crate) keys: Vec<String>,
}

/// Shared state of one compile: the graph, the guards and the frame being traced.
pub struct Tracer<'py> {
    pub py: Python<'py>,
    pub output: OutputGraph,
    pub guards: GuardTree,
    pub scope: Scope,
    pub globals: Bound<'py, PyDict>,
    pub builtins: Bound<'py, PyDict>,
    pub(crate) external_lists: Vec<External<Rc<RefCell<Vec<Var>>>>>,
    pub(crate) external_dicts: Vec<External<vars::DictItems>>,
    /// Deques read from the frame (a module-level queue), tracked like its lists.
    pub(crate) external_deques: Vec<External<Rc<vars::DequeVar>>>,
    /// Sets of constants read from the frame: each is a private copy (`Var::Set`), written
    /// back into the real set after the graph if the traced code changed it.
    pub(crate) external_sets: Vec<External<Py<PyAny>>>,
    /// Plain tuples read from the frame, one tracker per object: a second read of one tuple
    /// (another name, slot or attribute: `L['a'] is L['b']`, guarded) is the same `Rc`, so `is`
    /// says True, and the tuple is handed back as the caller's very object after the graph.
    pub(crate) external_tuples: Vec<External<vars::Items>>,
    /// Tuple constants of the traced code objects (`LOAD_CONST`), one tracker per object: the
    /// compiler makes equal constants of a code object one object (and `()` is a singleton),
    /// so `a = (1, 2); b = (1, 2); a is b` says True, as in eager.
    pub(crate) const_tuples: Vec<(Py<PyAny>, vars::Items)>,
    /// `ModuleList` slices made while tracing (`self.layers[:n]`), each with the parent list's
    /// source and the parent's `_modules` keys it selected. A slice is a new list on every call
    /// (`Module.__init__` runs): its children are read and guarded through the parent's
    /// `_modules` instead, so the guard walk never builds it (`ops.rs`, `module_children`).
    pub(crate) module_list_slices: Vec<ModuleListSlice>,
    /// Python state changed by the traced region, replayed after the graph runs.
    pub effects: SideEffects,
    /// Cells the tracer made for closures over the root frame's free variables, with the index
    /// of the real closure cell each stands for.
    pub(crate) free_cells: Vec<(Rc<RefCell<Option<Var>>>, usize)>,
    /// Decoded code objects, by address (kept alive by `code_refs`).
    codes: std::collections::HashMap<usize, Rc<CodeInfo>>,
    code_refs: Vec<Py<PyAny>>,
    depth: usize,
    /// Arguments of the root frame deleted by the traced code (`del x`, or a resume function's
    /// prefix dropping its stack slots and the locals unbound at the break): they are unbound
    /// from then on and must not be read from the frame's argument slots again.
    pub(crate) deleted_args: Vec<usize>,
    /// How many frames of the inline chain above the current one are stopped at an instruction
    /// that an active `try` handler covers (see `handlers.rs`).
    pub(crate) caught_by_callers: usize,
    /// Per alias root, the form of a tensor whose metadata a traced in-place op changed
    /// (`meta_inplace.rs`): trackers holding an older form are brought up to date when used.
    pub(crate) meta_changed: std::collections::HashMap<fx::NodeId, crate::output::TensorValue>,
    /// The frames of the inline chain above the current one, outermost first, each at the
    /// line of its call: with the current frame's line, a node's user stack (`traceback`).
    pub(crate) callers: Vec<crate::event::FrameSite>,
    /// The exception a traced `except`/`finally` block is handling (`sys.exc_info()` of the
    /// traced code; see `exceptions.rs`).
    pub(crate) handling: Option<Var>,
    /// Exception objects the trace made, with the root instruction that was running.
    pub(crate) made_exceptions: Vec<(Py<PyAny>, usize)>,
    /// The root frame's instruction now running.
    pub(crate) root_index: usize,
    /// User generators the trace made and consumes lazily (see `generators.rs`).
    pub(crate) generators: Vec<Rc<RefCell<vars::LazyIter>>>,
    /// Iterators over a traced list (`for v in xs`), with the list and the count of list
    /// mutations when their items were last read from it: a list iterator reads the list at
    /// its index on each pull, so items the loop appends, removes or replaces are seen (see
    /// `calls/iterators.rs`).
    pub(crate) list_iters: Vec<vars::ListIter>,
    /// Iterators over a traced dict (`for k in d`), with its size when made.
    pub(crate) dict_iters: Vec<vars::DictIter>,
    /// Mutations so far of lists that an iterator walks (`note_list_mutation`): a list
    /// iterator's items are read again after one.
    pub(crate) list_mutations: u64,
    /// How many exception handlers of the root frame are running: a graph break there could
    /// not restore the exception state, so the frame then runs eagerly.
    pub(crate) root_handlers: usize,
}

impl<'py> Tracer<'py> {
    pub(crate) fn code_info(
        &mut self,
        code: &Bound<'py, PyAny>,
    ) -> Result<Rc<CodeInfo>, TraceError> {
        let key = code.as_ptr() as usize;
        if let Some(c) = self.codes.get(&key) {
            return Ok(c.clone());
        }
        let info = Rc::new(CodeInfo::from_code(self.py, code)?);
        self.codes.insert(key, info.clone());
        self.code_refs.push(code.clone().unbind());
        Ok(info)
    }
}

/// Writes the traced region makes to Python state that outlives it. The tracer reads its own
/// writes back (an attribute written and then read sees the new value); after the graph runs,
/// the values are written for real, in the order they were first written, so the state after
/// the call equals eager's.
#[derive(Default)]
pub struct SideEffects {
    /// Attribute writes on objects read from the frame's inputs: the object, where it was read
    /// from, the attribute and its last value.
    pub attrs: Vec<(Py<PyAny>, Source, String, Var)>,
    /// Writes to module globals: the module's globals dict, the name and the last value.
    pub globals: Vec<(Py<PyAny>, String, Var)>,
    /// Lists and dicts from the frame's inputs that were mutated: their final contents are
    /// written back into the very objects.
    pub lists: Vec<Rc<RefCell<Vec<Var>>>>,
    pub dicts: Vec<vars::DictItems>,
    /// Deques from the frame's inputs that were mutated (cleared and refilled after the graph).
    pub deques: Vec<Rc<vars::DequeVar>>,
    /// Sets from the frame's inputs that were changed: their private copies (see
    /// `Tracer::external_sets`), cleared and refilled into the real sets after the graph.
    pub sets: Vec<Py<PyAny>>,
    /// Writes to the compiled function's own closure cells (`nonlocal` in a closure that is
    /// compiled): the cell's index in `co_freevars` and its last value.
    pub cells: Vec<(usize, Var)>,
}

impl SideEffects {
    /// The value the traced region last wrote to `obj.name`, if it did.
    pub fn attr(&self, py: Python<'_>, obj: &Py<PyAny>, name: &str) -> Option<Var> {
        self.attrs
            .iter()
            .find(|(o, _, n, _)| o.bind(py).is(obj.bind(py)) && n == name)
            .map(|(_, _, _, v)| v.clone())
    }

    /// Whether the traced region wrote any attribute of `obj`.
    pub fn has_attrs(&self, py: Python<'_>, obj: &Py<PyAny>) -> bool {
        self.attrs
            .iter()
            .any(|(o, _, _, _)| o.bind(py).is(obj.bind(py)))
    }

    pub fn set_attr(&mut self, py: Python<'_>, obj: Py<PyAny>, src: Source, name: &str, v: Var) {
        match self
            .attrs
            .iter_mut()
            .find(|(o, _, n, _)| o.bind(py).is(obj.bind(py)) && n == name)
        {
            Some(slot) => slot.3 = v,
            None => self.attrs.push((obj, src, name.to_string(), v)),
        }
    }

    /// The value the traced region last wrote to global `name` of `globals`, if it did.
    pub fn global(&self, py: Python<'_>, globals: &Bound<'_, PyAny>, name: &str) -> Option<Var> {
        self.globals
            .iter()
            .find(|(g, n, _)| g.bind(py).is(globals) && n == name)
            .map(|(_, _, v)| v.clone())
    }

    pub fn note_list(&mut self, l: &Rc<RefCell<Vec<Var>>>) {
        if !self.lists.iter().any(|x| Rc::ptr_eq(x, l)) {
            self.lists.push(l.clone());
        }
    }

    pub fn note_dict(&mut self, d: &vars::DictItems) {
        if !self.dicts.iter().any(|x| Rc::ptr_eq(x, d)) {
            self.dicts.push(d.clone());
        }
    }

    pub fn is_empty(&self) -> bool {
        self.attrs.is_empty()
            && self.globals.is_empty()
            && self.lists.is_empty()
            && self.dicts.is_empty()
            && self.deques.is_empty()
            && self.sets.is_empty()
            && self.cells.is_empty()
    }
}

impl Tracer<'_> {
    /// A mutation of a list: one from the inputs is written back after the graph.
    pub fn note_list_mutation(&mut self, l: &Rc<RefCell<Vec<Var>>>) {
        // Only a list some iterator walks makes iterators read their lists again (a list a
        // comprehension builds is mutated on every item).
        if self
            .list_iters
            .iter()
            .any(|e| std::ptr::eq(e.list.as_ptr(), Rc::as_ptr(l)))
        {
            self.list_mutations += 1;
        }
        if self.is_external_list(l) {
            self.effects.note_list(l);
        }
    }

    /// A mutation of a deque: one from the inputs is written back after the graph.
    pub fn note_deque_mutation(&mut self, q: &Rc<vars::DequeVar>) {
        let external = self
            .external_deques
            .iter()
            .any(|(e, _, _)| Rc::ptr_eq(e, q));
        if external && !self.effects.deques.iter().any(|x| Rc::ptr_eq(x, q)) {
            self.effects.deques.push(q.clone());
        }
    }

    /// A change of a set's private copy: one from the inputs is written back after the graph.
    pub fn note_set_mutation(&mut self, s: &Py<PyAny>) {
        let py = self.py;
        let external = self
            .external_sets
            .iter()
            .any(|(e, _, _)| e.bind(py).is(s.bind(py)));
        if external && !self.effects.sets.iter().any(|x| x.bind(py).is(s.bind(py))) {
            self.effects.sets.push(s.clone_ref(py));
        }
    }

    /// A mutation of a dict: one from the inputs is written back after the graph.
    pub fn note_dict_mutation(&mut self, d: &vars::DictItems) {
        if self.is_external_dict(d) {
            self.effects.note_dict(d);
        }
    }
}

/// `Some((prev_grad, prev_inference))` for the bound `__exit__` of a
/// `torchferro._amp.InferenceExit` (what a graph break inside an inference-mode block leaves on
/// the stack): leaving its level restores those modes.
fn inference_mode_exit(py: Python<'_>, v: &Bound<'_, PyAny>) -> Option<(bool, bool)> {
    let owner = v.getattr("__self__").ok()?;
    let name: String = v.getattr("__name__").ok()?.extract().ok()?;
    let cls = py
        .import("torchferro._amp")
        .ok()?
        .getattr("InferenceExit")
        .ok()?;
    if name != "__exit__" || !owner.get_type().is(&cls) {
        return None;
    }
    Some((
        owner.getattr("prev_grad").ok()?.extract().ok()?,
        owner.getattr("prev_inference").ok()?.extract().ok()?,
    ))
}

/// `Some(prev)` for the bound `__exit__` of a `torch.set_grad_enabled` object (what a graph
/// break inside a grad-mode block leaves on the stack): it restores `prev`.
fn grad_mode_exit(py: Python<'_>, v: &Bound<'_, PyAny>) -> Option<bool> {
    let owner = v.getattr("__self__").ok()?;
    let name: String = v.getattr("__name__").ok()?.extract().ok()?;
    let cls = py
        .import("torch")
        .ok()?
        .getattr("autograd")
        .ok()?
        .getattr("grad_mode")
        .ok()?
        .getattr("set_grad_enabled")
        .ok()?;
    if name != "__exit__" || !owner.get_type().is(&cls) {
        return None;
    }
    owner.getattr("prev").ok()?.extract().ok()
}

/// How the traced frame ends.
pub struct Traced {
    pub output: OutputGraph,
    pub guards: GuardTree,
    pub end: End,
    pub effects: SideEffects,
    /// Cells standing for the root frame's closure cells: (address of the tracked cell, index).
    pub free_cells: Vec<(usize, usize)>,
    /// Keeps the trackers named by address above alive while the value is rebuilt, so a
    /// tracker made afterwards cannot take one of their addresses.
    pub keep_alive: Vec<Rc<dyn std::any::Any>>,
    /// Containers read from the frame's inputs, by the address of their tracked items, with
    /// their sources: rebuilding a value returns these very objects.
    pub externals: Vec<(usize, Source)>,
}

/// Where tracing of the root frame ended.
pub enum End {
    Return(Var),
    /// Stopped before root instruction `index` (a graph break): the frame's state there.
    Break {
        index: usize,
        stack: Vec<Var>,
        locals: Vec<Option<Var>>,
        kw_names: Option<Vec<String>>,
    },
}

/// Interprets one frame.
pub struct Frame<'a, 'py> {
    tx: &'a mut Tracer<'py>,
    code: Rc<CodeInfo>,
    ctx: FrameCtx<'py>,
    stack: Vec<Var>,
    locals: Vec<Option<Var>>,
    kw_names: Option<Vec<String>>,
    pc: usize,
    /// A generator expression run to its end: the values it yields.
    yields: Option<Vec<Var>>,
    /// Stop `run` after each value a generator expression yields (its consumer short-circuits:
    /// `inline.rs` `short_circuit_consumer`); `run` is called again to resume it.
    stop_at_yield: bool,
}

/// Where a frame's globals and free variables come from.
pub struct FrameCtx<'py> {
    /// The root frame reads its arguments and closure from the hook's `Scope`.
    root: bool,
    globals: Bound<'py, PyDict>,
    /// For functions defined in another module than the root frame: that module's globals dict,
    /// which guards then read directly.
    foreign_globals: bool,
    /// Free variables of an inlined function, in `co_freevars` order.
    closure: Vec<Var>,
    /// The real cells behind `closure`, where the function was read from the frame.
    cells: vars::RealCells,
}

/// Frames inlined into one another before tracing gives up (bounded recursion).
const MAX_INLINE_DEPTH: usize = 32;

/// Instructions executed before the tracer gives up (loops are unrolled, so this bounds them).
const MAX_STEPS: usize = 200_000;

pub fn trace<'py>(
    py: Python<'py>,
    code: Rc<CodeInfo>,
    scope: Scope,
    globals: Bound<'py, PyDict>,
    builtins: Bound<'py, PyDict>,
    break_at: Option<usize>,
) -> Result<Traced, TraceError> {
    let mut tx = Tracer {
        py,
        output: OutputGraph::new(),
        guards: GuardTree::new(globals.clone().into_any().unbind()),
        scope,
        globals: globals.clone(),
        builtins,
        external_lists: Vec::new(),
        external_dicts: Vec::new(),
        external_deques: Vec::new(),
        external_sets: Vec::new(),
        external_tuples: Vec::new(),
        const_tuples: Vec::new(),
        module_list_slices: Vec::new(),
        effects: SideEffects::default(),
        free_cells: Vec::new(),
        codes: Default::default(),
        code_refs: Vec::new(),
        depth: 0,
        deleted_args: Vec::new(),
        caught_by_callers: 0,
        meta_changed: Default::default(),
        callers: Vec::new(),
        handling: None,
        made_exceptions: Vec::new(),
        root_index: 0,
        root_handlers: 0,
        generators: Vec::new(),
        list_iters: Vec::new(),
        dict_iters: Vec::new(),
        list_mutations: 0,
    };
    tx.output.sites.root = Some(std::sync::Arc::from([crate::event::FrameSite {
        function: crate::code::user_function_name(&code.name).to_string(),
        location: crate::event::Location::new(code.filename.as_str(), code.firstlineno),
    }]));
    let end = {
        let n = code.localsplus.len();
        let mut frame = Frame {
            tx: &mut tx,
            code,
            ctx: FrameCtx {
                root: true,
                globals,
                foreign_globals: false,
                closure: Vec::new(),
                cells: Rc::from([]),
            },
            stack: Vec::new(),
            locals: vec![None; n],
            kw_names: None,
            pc: 0,
            yields: None,
            stop_at_yield: false,
        };
        frame.run_root(break_at)?
    };
    let externals = tx.external_sources();
    let mut keep_alive: Vec<Rc<dyn std::any::Any>> = Vec::new();
    for (l, _, _) in &tx.external_lists {
        keep_alive.push(l.clone());
    }
    for (d, _, _) in &tx.external_dicts {
        keep_alive.push(d.clone());
    }
    for (q, _, _) in &tx.external_deques {
        keep_alive.push(q.clone());
    }
    // The private copies stay alive while the templates are built: they are found by address.
    for (s, _, _) in &tx.external_sets {
        keep_alive.push(Rc::new(s.clone_ref(tx.py)));
    }
    for (c, _) in &tx.free_cells {
        keep_alive.push(c.clone());
    }
    for (t, _, _) in &tx.external_tuples {
        keep_alive.push(t.clone());
    }
    Ok(Traced {
        keep_alive,
        output: tx.output,
        guards: tx.guards,
        end,
        effects: tx.effects,
        free_cells: tx
            .free_cells
            .iter()
            .map(|(c, j)| (Rc::as_ptr(c) as usize, *j))
            .collect(),
        externals,
    })
}

impl<'a, 'py> Frame<'a, 'py> {
    fn location(&self) -> crate::event::Location {
        let line = self
            .code
            .ins
            .get(self.pc)
            .and_then(|i| i.line)
            .unwrap_or(self.code.firstlineno);
        crate::event::Location::new(self.code.filename.as_str(), line)
    }

    /// This frame at its current line, named as eager names it (a resume function by the
    /// function it continues).
    fn site(&self) -> crate::event::FrameSite {
        crate::event::FrameSite {
            function: crate::code::user_function_name(&self.code.name).to_string(),
            location: self.location(),
        }
    }

    /// The user's call stack at the current instruction, outermost first.
    fn user_stack(&self) -> crate::traceback::UserStack {
        self.tx
            .callers
            .iter()
            .cloned()
            .chain(std::iter::once(self.site()))
            .collect()
    }

    /// Runs the root frame to its return, or up to (not including) instruction `break_at`.
    fn run_root(&mut self, break_at: Option<usize>) -> Result<End, TraceError> {
        let mut steps = 0usize;
        loop {
            if Some(self.pc) == break_at {
                // A generator context manager cannot be rebuilt after the graph: break before
                // the call that made it instead (the driver traces again).
                let made_at = [
                    gencm::break_before_generator_cms(&self.stack, &self.locals),
                    generators::break_before_generators(&self.stack, &self.locals),
                ]
                .into_iter()
                .flatten()
                .min();
                if let Some(made_at) = made_at {
                    return Err(TraceError::Unsupported {
                        reason: "a @contextlib.contextmanager context manager or a generator is \
                                 live at the graph break"
                            .into(),
                        location: Some(self.location()),
                        instruction: Some(made_at),
                        frames: Vec::new(),
                    });
                }
                self.check_suspended_generators()?;
                // A loop over a list goes on after the break over the items left: read them
                // from the list as the traced code left it.
                let live: Vec<_> = self
                    .tx
                    .list_iters
                    .iter()
                    .filter_map(|e| e.iter.upgrade())
                    .collect();
                for it in &live {
                    self.sync_list_iter(it);
                }
                // Arguments not read yet are live too: wrap them so the resume function gets them.
                for i in 0..self.code.nargs.min(self.code.nlocals) {
                    if self.locals[i].is_none() && !self.tx.deleted_args.contains(&i) {
                        self.load_local(i)?;
                    }
                }
                return Ok(End::Break {
                    index: self.pc,
                    stack: self.stack.clone(),
                    locals: self.locals.clone(),
                    kw_names: self.kw_names.clone(),
                });
            }
            steps += 1;
            if steps > MAX_STEPS {
                return Err(TraceError::unsupported(format!(
                    "a loop that runs more than {MAX_STEPS} instructions"
                ))
                .at(&self.location()));
            }
            let Some(ins) = self.code.ins.get(self.pc).cloned() else {
                return Err(TraceError::internal("ran off the end of the bytecode"));
            };
            let loc = self.location();
            self.tx.guards.origin = Some(loc.clone());
            self.tx.output.shapes.origin = Some(loc.clone());
            let index = self.pc;
            self.tx.root_index = index;
            match self.step(&ins).and_then(|r| match r {
                Some(ret) => self
                    .check_escape(&ret)
                    .and_then(|()| self.check_suspended_generators())
                    .map(|()| Some(ret)),
                None => Ok(None),
            }) {
                Ok(Some(ret)) => return Ok(End::Return(ret)),
                Ok(None) => {}
                Err(e) => {
                    let e = e.at(&loc).through_frame(&self.code.name, &loc);
                    let e = match self.unwind(e, index) {
                        Ok(()) => continue,
                        Err(TraceError::Raised { fallback, .. }) => {
                            return Err(exceptions::escaped(*fallback))
                        }
                        Err(e) => e,
                    };
                    return Err(self.root_break(e, index));
                }
            }
        }
    }

    fn run(&mut self) -> Result<Var, TraceError> {
        let mut steps = 0usize;
        loop {
            steps += 1;
            if steps > MAX_STEPS {
                return Err(TraceError::unsupported(format!(
                    "a loop that runs more than {MAX_STEPS} instructions"
                ))
                .at(&self.location()));
            }
            let Some(ins) = self.code.ins.get(self.pc).cloned() else {
                return Err(TraceError::internal("ran off the end of the bytecode"));
            };
            let loc = self.location();
            self.tx.guards.origin = Some(loc.clone());
            self.tx.output.shapes.origin = Some(loc.clone());
            let index = self.pc;
            match self.step(&ins) {
                Ok(Some(ret)) => return Ok(ret),
                Ok(None) => {}
                Err(e) => self.unwind(e.at(&loc).through_frame(&self.code.name, &loc), index)?,
            }
        }
    }

    /// Pops a value the instruction uses: its deferred guards are installed.
    fn pop(&mut self) -> Result<Var, TraceError> {
        let v = self.pop_unused()?;
        self.tx.realize(&v);
        Ok(self.tx.current_form(v))
    }

    /// Pops a value that is only moved (stored, returned or dropped): no guard is needed for it.
    fn pop_unused(&mut self) -> Result<Var, TraceError> {
        self.stack
            .pop()
            .ok_or_else(|| TraceError::internal("stack underflow"))
    }

    /// Pops `n` values that are only moved, or whose use the caller decides (see `pop_unused`).
    fn popn_unused(&mut self, n: usize) -> Result<Vec<Var>, TraceError> {
        if self.stack.len() < n {
            return Err(TraceError::internal("stack underflow"));
        }
        Ok(self.stack.split_off(self.stack.len() - n))
    }

    fn popn(&mut self, n: usize) -> Result<Vec<Var>, TraceError> {
        if self.stack.len() < n {
            return Err(TraceError::internal("stack underflow"));
        }
        let vs = self.stack.split_off(self.stack.len() - n);
        for v in &vs {
            self.tx.realize(v);
        }
        Ok(vs.into_iter().map(|v| self.tx.current_form(v)).collect())
    }

    fn peek(&self, depth: usize) -> Result<&Var, TraceError> {
        self.stack
            .len()
            .checked_sub(depth + 1)
            .and_then(|i| self.stack.get(i))
            .ok_or_else(|| TraceError::internal("stack underflow"))
    }

    fn jump(&mut self, target: Option<usize>) -> Result<(), TraceError> {
        self.pc = target.ok_or_else(|| TraceError::internal("jump without a target"))?;
        Ok(())
    }

    /// Reads local slot `i`, wrapping the frame's argument on first use.
    fn load_local(&mut self, i: usize) -> Result<Var, TraceError> {
        if let Some(v) = &self.locals[i] {
            return Ok(v.clone());
        }
        if self.ctx.root && i < self.code.nargs && !self.tx.deleted_args.contains(&i) {
            let name = self.code.localsplus[i].clone();
            let ptr = self.tx.scope.root(&crate::source::Step::Local {
                index: i,
                name: name.clone(),
            });
            if !ptr.is_null() {
                // SAFETY: a borrowed pointer into the live frame; we take our own reference.
                let value = unsafe { Bound::from_borrowed_ptr(self.tx.py, ptr) };
                let exit = match grad_mode_exit(self.tx.py, &value) {
                    // The `__exit__` a graph break handed over from a grad-mode block: the
                    // block's end is traced as a grad-mode switch again.
                    Some(restore) => Some(Var::GradModeExit { restore }),
                    // ... or from an inference-mode block: the end leaves the level again.
                    None => inference_mode_exit(self.tx.py, &value).map(|(g, m)| {
                        Var::InferenceModeExit {
                            prev_grad: g,
                            prev_inference: Some(m),
                        }
                    }),
                };
                let v = match exit {
                    Some(exit) => {
                        self.tx.guards.add(
                            self.tx.py,
                            &Source::local(i, &name),
                            crate::guards::Check::Id(value.clone().unbind()),
                        );
                        exit
                    }
                    None => self.tx.wrap(value, Some(Source::local(i, &name)))?,
                };
                // The `**kwargs` dict is made afresh by every call: mutating it is local to the
                // frame, not a side effect on the caller's objects.
                if let Var::Dict(d) = &v {
                    if self.code.flags & 0x08 != 0 && i + 1 == self.code.nargs {
                        self.tx.external_dicts.retain(|(e, _, _)| !Rc::ptr_eq(e, d));
                    }
                }
                self.locals[i] = Some(v.clone());
                return Ok(v);
            }
        }
        let name = &self.code.localsplus[i];
        let fallback =
            TraceError::unsupported(format!("reading local '{name}' before it is assigned"));
        let msg = format!(
            "cannot access local variable '{name}' where it is not associated with a value"
        );
        Err(self.raise_new("UnboundLocalError", (msg,), fallback))
    }

    /// LOAD_DEREF / LOAD_CLOSURE: a cell of this frame, or a free variable.
    fn load_cell(&mut self, i: usize) -> Result<Var, TraceError> {
        let first_free = self.code.localsplus.len() - self.code.nfree;
        if i < first_free {
            return match self.load_local(i)? {
                Var::Cell(c) => Ok(Var::Cell(c)),
                // MAKE_CELL has not wrapped it (a cell that is also an argument, read early).
                v => Ok(v),
            };
        }
        let j = i - first_free;
        // A real cell written in this trace (by this frame or another inlined call over the
        // same cell) holds that value now, whatever this frame read before: a lazy generator
        // or a caller reads it again after the write.
        if let Some(Some((cell, _))) = self.ctx.cells.get(j) {
            if let Some(v) = self.tx.effects.attr(self.tx.py, cell, "cell_contents") {
                return Ok(v);
            }
        }
        if let Some(v) = &self.locals[i] {
            return Ok(v.clone());
        }
        let name = self.code.localsplus[i].clone();
        let v = if self.ctx.root {
            let ptr = self.tx.scope.root(&crate::source::Step::Cell {
                index: j,
                name: name.clone(),
            });
            if ptr.is_null() {
                return Err(TraceError::unsupported(format!(
                    "free variable '{name}' is empty"
                )));
            }
            // SAFETY: a borrowed pointer to a live cell's contents; we take our own reference.
            let value = unsafe { Bound::from_borrowed_ptr(self.tx.py, ptr) };
            self.tx.wrap(value, Some(Source::cell(j, &name)))?
        } else {
            self.ctx
                .closure
                .get(j)
                .cloned()
                .ok_or_else(|| TraceError::internal("a free variable without a closure cell"))?
        };
        self.locals[i] = Some(v.clone());
        Ok(v)
    }

    /// The value held by a cell variable (LOAD_DEREF).
    fn load_deref(&mut self, i: usize) -> Result<Var, TraceError> {
        match self.load_cell(i)? {
            Var::Cell(c) => c.borrow().clone().ok_or_else(|| {
                TraceError::unsupported(format!(
                    "reading free variable '{}' before it is assigned",
                    self.code.localsplus[i]
                ))
            }),
            v => Ok(v),
        }
    }

    fn store_deref(&mut self, i: usize, v: Var) -> Result<(), TraceError> {
        // The root frame's own closure cells (and cells standing for them): functions closing
        // over the real cell would read it before a deferred write lands, so the write breaks.
        let nonlocal =
            || TraceError::unsupported("assigning to a nonlocal variable of the compiled function");
        match self.load_cell(i) {
            Ok(Var::Cell(c)) if self.tx.free_cells.iter().any(|(f, _)| Rc::ptr_eq(f, &c)) => {
                Err(nonlocal())
            }
            Ok(Var::Cell(c)) => {
                *c.borrow_mut() = Some(v);
                Ok(())
            }
            _ if i < self.code.localsplus.len() - self.code.nfree => {
                self.locals[i] = Some(Var::Cell(Rc::new(RefCell::new(Some(v)))));
                Ok(())
            }
            // A free variable of the root frame read as its value: the write is recorded and
            // made to the real cell after the graph; this frame reads the new value from now
            // on, and so does any function inlined later that closes over the same cell.
            _ if self.ctx.root => {
                let j = i - (self.code.localsplus.len() - self.code.nfree);
                match self.tx.effects.cells.iter_mut().find(|(k, _)| *k == j) {
                    Some(slot) => slot.1 = v.clone(),
                    None => self.tx.effects.cells.push((j, v.clone())),
                }
                self.locals[i] = Some(v);
                Ok(())
            }
            // A free variable of an inlined function read from the frame (a counter closed
            // over by a function made outside, `nonlocal count; count += 1`): the write is an
            // attribute write of the real cell (`cell.cell_contents = v`, through the cell's
            // source) made after the graph, as torch.compile replays it; this frame reads the
            // new value from now on, and so does a function over the same cell inlined later
            // (`function_of`, `load_cell`). It broke the graph before (session 26).
            _ => {
                let j = i - (self.code.localsplus.len() - self.code.nfree);
                let Some(Some((cell, src))) = self.ctx.cells.get(j) else {
                    return Err(nonlocal());
                };
                let (cell, src) = (cell.clone_ref(self.tx.py), src.clone());
                self.tx
                    .effects
                    .set_attr(self.tx.py, cell, src, "cell_contents", v.clone());
                self.locals[i] = Some(v);
                Ok(())
            }
        }
    }

    /// The value the traced region wrote to `cell` if it is one of the root frame's closure
    /// cells (see `store_deref`).
    pub(super) fn written_root_cell(&self, cell: &Bound<'_, PyAny>) -> Option<Var> {
        self.tx
            .effects
            .cells
            .iter()
            .find(|(j, _)| self.tx.scope.cell_object(*j) == cell.as_ptr())
            .map(|(_, v)| v.clone())
    }

    /// `x.grad = v` on a graph input read from a source (a parameter): recorded and made after
    /// the graph, as an attribute write (`x.grad` reads it back until then). The value is `None`
    /// or a tensor of `x`'s sizes, dtype and device (eager's own check, made here so that the
    /// write cannot fail after the graph ran).
    fn store_tensor_grad(
        &mut self,
        t: &crate::output::TensorValue,
        v: Var,
    ) -> Result<(), TraceError> {
        let py = self.tx.py;
        let root = self.tx.output.alias_root(t.node);
        let (Some(src), Some(obj)) = (
            self.tx.output.source_of_input(root).cloned(),
            self.tx.output.example_input(root).map(|o| o.clone_ref(py)),
        ) else {
            return Err(TraceError::unsupported(
                "assigning tensor.grad of a tensor the graph computed",
            ));
        };
        let fits = match &v {
            Var::Tensor(g) => {
                g.meta.dtype == t.meta.dtype
                    && g.meta.device == t.meta.device
                    && g.meta.known_sizes().is_some()
                    && g.meta.known_sizes() == t.meta.known_sizes()
            }
            Var::Py(o, _) => o.bind(py).is_none(),
            _ => false,
        };
        if !fits {
            return Err(TraceError::unsupported(
                "assigning tensor.grad a value other than None or a tensor like it",
            ));
        }
        self.tx.effects.set_attr(py, obj, src, "grad", v);
        Ok(())
    }

    /// STORE_ATTR: on an object read from the frame's inputs, recorded and written after the
    /// graph. Objects whose attribute writes run code (`__setattr__` overrides, properties and
    /// other data descriptors) and registered module members still break the graph.
    fn store_attr(&mut self, obj: Var, name: &str, v: Var) -> Result<(), TraceError> {
        let py = self.tx.py;
        if let Some(m) = self.user_container_override(&obj, "__setattr__")? {
            self.call(m, vec![Var::py_const(py, name), v], vec![])?;
            return Ok(());
        }
        if self.user_container_setattr(&obj, name, v.clone())? {
            return Ok(());
        }
        if let Var::Object(o) = &obj {
            return self.object_setattr(o, name, v, false);
        }
        if self.made_exception_setattr(&obj, name, &v)? {
            return Ok(());
        }
        if let Var::ModelOutput(o) = &obj {
            return o.assign(py, name, v, false);
        }
        if let (Var::Tensor(t), "grad") = (&obj, name) {
            return self.store_tensor_grad(t, v);
        }
        if let (Var::Tensor(t), "data") = (&obj, name) {
            return self.store_tensor_data(t, v);
        }
        // A function the trace made: an entry of its `__dict__`, but for the attributes its
        // `FunctionVar` models or that change what it runs (those are not tracked).
        if let Var::Function(f) = &obj {
            const MODELED: &[&str] = &[
                "__code__",
                "__defaults__",
                "__kwdefaults__",
                "__name__",
                "__qualname__",
                "__dict__",
                "__module__",
                "__annotations__",
                "__globals__",
                "__closure__",
                "__call__",
                "__get__",
                "__class__",
            ];
            if MODELED.contains(&name) {
                return Err(TraceError::unsupported(format!(
                    "assigning attribute '{name}' of a function made in the frame"
                )));
            }
            let mut attrs = f.attrs.borrow_mut();
            match attrs.iter_mut().find(|(n, _)| n == name) {
                Some(slot) => slot.1 = v,
                None => attrs.push((name.to_string(), v)),
            }
            return Ok(());
        }
        let Var::Py(o, Some(src)) = &obj else {
            return Err(TraceError::unsupported(format!(
                "assigning attribute '{name}' of a {}",
                obj.type_name(py)
            )));
        };
        let ob = o.bind(py);
        let ty = ob.get_type();
        let builtins = py.import("builtins")?;
        let object_setattr = builtins.getattr("object")?.getattr("__setattr__")?;
        let nn = py.import("torch.nn")?;
        let is_module = ob.is_instance(&nn.getattr("Module")?)?;
        let setattr = ty.getattr("__setattr__")?;
        if is_module
            && setattr.is(&nn.getattr("Module")?.getattr("__setattr__")?)
            && self.stores_member_back(&obj, name, &v)?
        {
            return Ok(());
        }
        if is_module
            && setattr.is(&nn.getattr("Module")?.getattr("__setattr__")?)
            && self.rebinds_buffer(ob, name, &v)?
        {
            // Replayed after the graph through `setattr`, so `Module.__setattr__` stores it in
            // `_buffers` as eager does; reads in the trace see the pending write.
            self.tx
                .effects
                .set_attr(py, o.clone_ref(py), src.clone(), name, v);
            return Ok(());
        }
        let plain = if is_module {
            setattr.is(&nn.getattr("Module")?.getattr("__setattr__")?)
                && ["_parameters", "_buffers", "_modules"].iter().all(|d| {
                    ob.getattr(*d)
                        .and_then(|d| d.contains(name))
                        .map(|c| !c)
                        .unwrap_or(false)
                })
                && !matches!(v, Var::Tensor(_))
        } else {
            setattr.is(&object_setattr)
                && ob.hasattr("__dict__")?
                && !crate::output::is_tensor(py, ob)?
        };
        let descriptor = match ty.getattr(name) {
            Ok(a) => a.get_type().hasattr("__set__")? || a.get_type().hasattr("__delete__")?,
            Err(_) => false,
        };
        if !plain || descriptor || matches!(ty.name()?.to_string().as_str(), "type" | "module") {
            return Err(TraceError::unsupported(format!(
                "assigning attribute '{name}' of a {} (its attribute writes run code)",
                obj.type_name(py)
            )));
        }
        if !is_module {
            if let Ok(d) = ob.getattr("__dict__") {
                if let Some(tracker) = self.tx.dict_tracker_of(&d) {
                    // The traced code holds the instance dict: the write goes there, where
                    // attribute reads look first, and is written back with the dict.
                    self.tx.note_dict_mutation(&tracker);
                    vars::dict_set(py, &tracker, name, v);
                    return Ok(());
                }
            }
        }
        self.tx
            .effects
            .set_attr(py, o.clone_ref(py), src.clone(), name, v);
        Ok(())
    }

    /// DELETE_SUBSCR on a list (by index) or a dict: tracked, and written back to an input
    /// container after the graph.
    fn delete_subscript(&mut self, container: Var, key: Var) -> Result<(), TraceError> {
        if let Some(m) = self.user_container_override(&container, "__delitem__")? {
            self.call(m, vec![key], vec![])?;
            return Ok(());
        }
        self.delete_subscript_raw(container, key)
    }

    /// `del container[key]` by the builtin operation.
    fn delete_subscript_raw(&mut self, container: Var, key: Var) -> Result<(), TraceError> {
        let py = self.tx.py;
        match &container {
            Var::Dict(d) => {
                let k = self.hash_key(&key)?.into_bound(py);
                let pos = d
                    .borrow()
                    .iter()
                    .position(|(k2, _)| k2.bind(py).eq(&k).unwrap_or(false));
                let Some(pos) = pos else {
                    let fallback = TraceError::unsupported(
                        "deleting a missing dict key (the frame raises KeyError)",
                    );
                    return Err(self.raise_new("KeyError", (k,), fallback));
                };
                self.tx.note_dict_mutation(d);
                d.borrow_mut().remove(pos);
                Ok(())
            }
            Var::List(l) => {
                if let Some(k) = key.as_py(py) {
                    if let Ok(s) = k.cast::<pyo3::types::PySlice>() {
                        return self.list_delete_slice(l, s);
                    }
                }
                let i: isize = key
                    .as_py(py)
                    .and_then(|k| k.extract().ok())
                    .ok_or_else(|| TraceError::unsupported("deleting a list slice"))?;
                let n = l.borrow().len() as isize;
                let j = if i < 0 { i + n } else { i };
                if j < 0 || j >= n {
                    let fallback = TraceError::unsupported(
                        "a list index out of range (the frame raises IndexError)",
                    );
                    let msg = "list assignment index out of range";
                    return Err(self.raise_new("IndexError", (msg,), fallback));
                }
                self.tx.note_list_mutation(l);
                l.borrow_mut().remove(j as usize);
                Ok(())
            }
            other => Err(TraceError::unsupported(format!(
                "deleting an item of a {}",
                other.type_name(py)
            ))),
        }
    }

    /// STORE_GLOBAL: recorded, read back by later loads, and written after the graph.
    fn store_global(&mut self, name: &str, v: Var) -> Result<(), TraceError> {
        let py = self.tx.py;
        let g = self.ctx.globals.clone().into_any();
        if let Some(tracker) = self.tx.dict_tracker_of(&g) {
            // The traced code holds the globals dict itself (`globals()` passed to a resume
            // function): one record of the name, the dict's, written back with it.
            self.tx
                .effects
                .globals
                .retain(|(d, n, _)| !(d.bind(py).is(&g) && n == name));
            self.tx.note_dict_mutation(&tracker);
            vars::dict_set(py, &tracker, name, v);
            return Ok(());
        }
        match self
            .tx
            .effects
            .globals
            .iter_mut()
            .find(|(d, n, _)| d.bind(py).is(&g) && n == name)
        {
            Some(slot) => slot.2 = v,
            None => self
                .tx
                .effects
                .globals
                .push((g.unbind(), name.to_string(), v)),
        }
        Ok(())
    }

    fn load_global(&mut self, name: &str) -> Result<Var, TraceError> {
        let py = self.tx.py;
        if let Some(v) = self.tx.effects.global(py, self.ctx.globals.as_any(), name) {
            return Ok(v);
        }
        // `globals()[name] = v` written in the traced code: the dict's tracker holds it.
        let g = self.ctx.globals.clone().into_any();
        if let Some(v) = self.tx.tracked_dict_item(&g, name)? {
            return Ok(v);
        }
        let value = match self.ctx.globals.get_item(name)? {
            Some(v) => v,
            None => match self.tx.builtins.get_item(name)? {
                Some(v) => v,
                None => {
                    // Raised in the traced code (a `try` may catch it), with guards that the
                    // name stays undefined in the globals and the builtins.
                    let msg = format!("name '{name}' is not defined");
                    let fallback =
                        TraceError::unsupported(format!("{msg} (the frame raises NameError)"));
                    let origin = Some(self.location());
                    let guards = &mut self.tx.guards.global;
                    guards.dict_absent(&self.ctx.globals, "globals", name, origin.clone());
                    guards.dict_absent(&self.tx.builtins, "builtins", name, origin);
                    let e = self.raise_new("NameError", (msg,), fallback);
                    if let TraceError::Raised { exc, .. } = &e {
                        exc.bind(py).setattr("name", name)?;
                    }
                    return Err(e);
                }
            },
        };
        let source = if self.ctx.foreign_globals {
            Source::module_global(py, self.ctx.globals.as_any(), name)
        } else {
            Source::global(py, name)
        };
        self.tx.wrap(value, Some(source))
    }

    fn dict_key(&mut self, k: &Var) -> Result<Py<PyAny>, TraceError> {
        // A key is hashed by its value: a symbolic int (one automatic dynamic made symbolic, or
        // a size holding one) is specialized, guarded to keep it, as torch does.
        let k = &self.specialize(k.clone())?;
        if !matches!(k, Var::Object(_)) {
            self.tx.guard_hashed(k)?;
        }
        match k {
            Var::Py(o, _) => Ok(o.clone_ref(self.tx.py)),
            // A known shape is a hashable `torch.Size` (a tuple of ints); a symbolic one has
            // no hash before the call.
            Var::Size(_) => k
                .as_py(self.tx.py)
                .map(|o| o.unbind())
                .ok_or_else(|| TraceError::unsupported("a dict key that is a symbolic torch.Size")),
            // A tuple of constants (`{(None, None): ...}`) hashes as its Python value.
            Var::Tuple(_) if k.as_py(self.tx.py).is_some() => Ok(k
                .as_py(self.tx.py)
                .map(|o| o.unbind())
                .unwrap_or_else(|| self.tx.py.None())),
            Var::Object(_) => match self.tx.frozen_key(k)? {
                Some(key) => Ok(key),
                None => Err(TraceError::unsupported(format!(
                    "a dict key of type {}",
                    k.type_name(self.tx.py)
                ))),
            },
            other => Err(TraceError::unsupported(format!(
                "a dict key of type {}",
                other.type_name(self.tx.py)
            ))),
        }
    }

    fn unpack(&mut self, v: Var) -> Result<Vec<Var>, TraceError> {
        if let Var::Tensor(t) = &v {
            if t.meta.sizes.is_empty() {
                return Err(TraceError::unsupported("unpacking a 0-d tensor"));
            }
            // Unpacking unrolls over the first size: a symbolic one specializes.
            let n = self.size_of(t, 0)?;
            let n = match self.specialize(n)?.as_py(self.tx.py) {
                Some(n) => n.extract::<i64>()?,
                None => return Err(TraceError::internal("a specialized size")),
            };
            let mut out = Vec::new();
            for i in 0..n {
                let idx = Var::py_const(self.tx.py, i);
                out.push(self.subscript(v.clone(), idx)?);
            }
            return Ok(out);
        }
        if let Some(items) = v.items(self.tx.py) {
            return Ok(items);
        }
        if let Var::Generator(_) = &v {
            return self.iterate(v);
        }
        if let Some(items) = self.object_items(&v)? {
            return Ok(items);
        }
        if let Var::Object(_) = &v {
            return self.iterate(v);
        }
        v.items(self.tx.py).ok_or_else(|| {
            TraceError::unsupported(format!("unpacking a {}", v.type_name(self.tx.py)))
        })
    }

    /// Iterating a `Sequential` or `ModuleList` yields its children (a `ModuleDict`, its keys),
    /// each read through `_modules` so guards stay plain dict reads.
    pub(super) fn module_children(
        &mut self,
        m: Bound<'py, PyAny>,
        src: Source,
    ) -> Result<Vec<Var>, TraceError> {
        let py = self.tx.py;
        let tyname = m.get_type().name()?.to_string();
        let nn = py.import("torch.nn")?;
        let is_dict = m.is_instance(&nn.getattr("ModuleDict")?)?;
        if m.is_instance(&nn.getattr("ParameterList")?)?
            || m.is_instance(&nn.getattr("ParameterDict")?)?
        {
            return calls::parameter_container_items(self.tx, &m, &src);
        }
        if !(is_dict
            || m.is_instance(&nn.getattr("Sequential")?)?
            || m.is_instance(&nn.getattr("ModuleList")?)?)
        {
            return Err(TraceError::unsupported(format!("iterating a {tyname}")));
        }
        if let Some(sl) = self
            .tx
            .module_list_slices
            .iter()
            .find(|s| s.list.bind(py).is(&m))
        {
            // A slice's children, through the list it was cut from: its length and keys
            // follow from the parent's guarded keys.
            let (parent, keys) = (sl.parent.clone(), sl.keys.clone());
            let modules = m.getattr("_modules")?;
            let mut out = Vec::new();
            for (i, k) in keys.iter().enumerate() {
                let child = modules.get_item(i.to_string())?;
                let s = parent
                    .attr(py, "_modules")
                    .item(pyo3::types::PyString::new(py, k).into_any());
                out.push(self.tx.wrap(child, Some(s))?);
            }
            return Ok(out);
        }
        let modules = m.getattr("_modules")?;
        let keys: Vec<String> = modules
            .call_method0("keys")?
            .try_iter()?
            .map(|k| k.and_then(|k| k.extract()))
            .collect::<PyResult<_>>()?;
        // The set of children is part of what the trace relies on.
        self.tx.guards.add(
            py,
            &src.attr(py, "_modules"),
            crate::guards::Check::Len(keys.len()),
        );
        let mut out = Vec::new();
        for k in keys {
            if is_dict {
                out.push(Var::py_const(py, k));
                continue;
            }
            let child = modules.get_item(&k)?;
            let s = src
                .attr(py, "_modules")
                .item(pyo3::types::PyString::new(py, &k).into_any());
            out.push(self.tx.wrap(child, Some(s))?);
        }
        Ok(out)
    }

    fn iterate(&mut self, v: Var) -> Result<Vec<Var>, TraceError> {
        match &v {
            Var::Generator(_) => {
                let mut out = Vec::new();
                while let Some(x) = self.iter_next(&v)? {
                    out.push(x);
                }
                Ok(out)
            }
            Var::Iter(it) => {
                self.sync_list_iter(it);
                let it = it.borrow();
                Ok(it.0[it.1.min(it.0.len())..].to_vec())
            }
            Var::Py(o, Some(src)) if pyobj::is_nn_module(self.tx.py, o.bind(self.tx.py))? => {
                self.module_children(o.bind(self.tx.py).clone(), src.clone())
            }
            // A user class's `__iter__`, inlined; what it returns is iterated. The
            // `collections.abc` mixins (a `Sequence`'s generator `__iter__`) go through
            // `abc_mixins.rs` first.
            Var::Object(o) => {
                if let Some(items) = self.object_items(&v)? {
                    return Ok(items);
                }
                let o = o.clone();
                let cls = o.cls.bind(self.tx.py).clone();
                if !cls.hasattr("__iter__")? && cls.hasattr("__getitem__")? {
                    return self.getitem_until_index_error(&o);
                }
                let it = self.object_operator(&o, "iter", vec![])?;
                if matches!(&it, Var::Object(i) if Rc::ptr_eq(i, &o)) {
                    // `__iter__` returning `self`: an iterator driven by its `__next__`.
                    return self.next_until_stop(&o);
                }
                self.iterate(it)
            }
            _ => self.unpack(v),
        }
    }

    /// The items of a user object with `__getitem__` and no `__iter__` (the old sequence
    /// protocol): `o[0]`, `o[1]`, ... inlined until one raises `IndexError`.
    fn getitem_until_index_error(
        &mut self,
        o: &Rc<vars::ObjectVar>,
    ) -> Result<Vec<Var>, TraceError> {
        let py = self.tx.py;
        let index_error = py.get_type::<pyo3::exceptions::PyIndexError>();
        self.drive_until(o, "getitem", &index_error, |i| vec![Var::py_const(py, i)])
    }

    /// The items of a user iterator object: its `__next__` inlined until it raises
    /// `StopIteration` (caught here, as the loop that drives it catches it). Any other
    /// exception leaves as it came.
    fn next_until_stop(&mut self, o: &Rc<vars::ObjectVar>) -> Result<Vec<Var>, TraceError> {
        let stop = self.tx.py.get_type::<pyo3::exceptions::PyStopIteration>();
        self.drive_until(o, "next", &stop, |_| vec![])
    }

    /// Calls the dunder `op` of `o` (with `args(i)` on the `i`th call) until it raises `end`
    /// (caught here, as the loop that drives it catches it); its results are the items. Any
    /// other exception leaves as it came.
    fn drive_until(
        &mut self,
        o: &Rc<vars::ObjectVar>,
        op: &str,
        end: &Bound<'py, pyo3::types::PyType>,
        args: impl Fn(i64) -> Vec<Var>,
    ) -> Result<Vec<Var>, TraceError> {
        const MAX_ITEMS: usize = 100_000;
        let py = self.tx.py;
        let mut out = Vec::new();
        loop {
            if out.len() >= MAX_ITEMS {
                return Err(TraceError::unsupported(format!(
                    "a user iterator yielding more than {MAX_ITEMS} items"
                )));
            }
            self.tx.caught_by_callers += 1;
            let r = self.object_operator(o, op, args(out.len() as i64));
            self.tx.caught_by_callers -= 1;
            match r {
                Ok(v) => out.push(v),
                Err(TraceError::Raised { exc, fallback }) => {
                    if exc.bind(py).is_instance(end)? {
                        return Ok(out);
                    }
                    return Err(TraceError::Raised { exc, fallback });
                }
                Err(e) => return Err(e),
            }
        }
    }
}
