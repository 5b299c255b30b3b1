//! Reconstruction: the template that rebuilds the frame's Python result (the return value, or
//! the live stack and locals at a graph break) and replays its side effects from the graph
//! outputs on every call, and the code that builds that template from the traced values.

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};

use fx::{Arg, NodeKind};

use crate::error::TraceError;
use crate::interp::{self, Var};
use crate::source::{resolve, Scope, Source};

mod cycles;
mod values;

use values::template_of_inner;

/// How the Python return value is rebuilt from the graph outputs.
pub enum OutputTemplate {
    Graph(usize),
    Const(Py<PyAny>),
    Tuple(Vec<OutputTemplate>),
    List(Vec<OutputTemplate>),
    Dict(Vec<(Py<PyAny>, OutputTemplate)>),
    NamedTuple(Py<PyAny>, Vec<OutputTemplate>),
    /// `getattr(value, name)`, e.g. a bound tensor method left on the stack at a graph break.
    Attr(Box<OutputTemplate>, String),
    /// A value read from the frame's inputs, returned as that very object (lists, dicts and
    /// objects whose contents, not identity, were guarded).
    Input(Source),
    /// Builds the inner value and remembers it as number `k` of this reconstruction.
    Keep(usize, Box<OutputTemplate>),
    /// The value remembered as number `k` (one container reached twice stays one object).
    Again(usize),
    /// `f(args...)`, e.g. a new cell or a closure rebuilt at a graph break.
    Call(Py<PyAny>, Vec<OutputTemplate>),
    /// Closure cell `j` of the compiled frame (the cell object, not its contents).
    ClosureCell(usize),
    /// The value, then side effects replayed after the graph: every call's arguments are built
    /// first (so they see the state before any of them), then the calls run in order.
    Effects(Box<OutputTemplate>, Vec<(Py<PyAny>, Vec<OutputTemplate>)>),
}

impl OutputTemplate {
    pub(crate) fn build<'py>(
        &self,
        py: Python<'py>,
        outs: &[Bound<'py, PyAny>],
        scope: &Scope,
        kept: &mut Vec<Option<Bound<'py, PyAny>>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        Ok(match self {
            OutputTemplate::Graph(i) => outs[*i].clone(),
            OutputTemplate::Const(c) => c.bind(py).clone(),
            OutputTemplate::Tuple(items) => {
                PyTuple::new(py, build_all(items, py, outs, scope, kept)?)?.into_any()
            }
            OutputTemplate::List(items) => {
                PyList::new(py, build_all(items, py, outs, scope, kept)?)?.into_any()
            }
            OutputTemplate::NamedTuple(ty, items) => {
                let t = PyTuple::new(py, build_all(items, py, outs, scope, kept)?)?;
                crate::interp::pyobj::build_named_tuple(ty.bind(py), t)?
            }
            OutputTemplate::Attr(v, name) => {
                v.build(py, outs, scope, kept)?.getattr(name.as_str())?
            }
            OutputTemplate::Keep(k, inner) => {
                let v = inner.build(py, outs, scope, kept)?;
                if kept.len() <= *k {
                    kept.resize(*k + 1, None);
                }
                kept[*k] = Some(v.clone());
                v
            }
            OutputTemplate::Again(k) => kept.get(*k).cloned().flatten().ok_or_else(|| {
                pyo3::exceptions::PyRuntimeError::new_err(
                    "torchferro: a shared value was rebuilt out of order",
                )
            })?,
            OutputTemplate::Call(f, args) => {
                let args = build_all(args, py, outs, scope, kept)?;
                f.bind(py).call1(PyTuple::new(py, args)?)?
            }
            OutputTemplate::ClosureCell(j) => {
                if *j >= scope.ncells {
                    return Err(pyo3::exceptions::PyRuntimeError::new_err(
                        "torchferro: a closure cell out of range",
                    ));
                }
                // SAFETY: `cells` holds `ncells` borrowed, live pointers (see `Scope`).
                unsafe { Bound::from_borrowed_ptr(py, *scope.cells.add(*j)) }
            }
            OutputTemplate::Effects(value, calls) => {
                let v = value.build(py, outs, scope, kept)?;
                let mut built = Vec::with_capacity(calls.len());
                for (f, args) in calls {
                    let args = build_all(args, py, outs, scope, kept)?;
                    built.push((f, PyTuple::new(py, args)?));
                }
                for (f, args) in built {
                    f.bind(py).call1(args)?;
                }
                v
            }
            OutputTemplate::Input(source) => resolve(py, scope, source).ok_or_else(|| {
                pyo3::exceptions::PyRuntimeError::new_err(format!(
                    "torchferro: {source} could not be read"
                ))
            })?,
            OutputTemplate::Dict(items) => {
                let d = PyDict::new(py);
                for (k, v) in items {
                    d.set_item(k.bind(py), v.build(py, outs, scope, kept)?)?;
                }
                d.into_any()
            }
        })
    }
}

/// Builds `items` in order (a `Keep` among them is seen by the `Again`s after it).
fn build_all<'py>(
    items: &[OutputTemplate],
    py: Python<'py>,
    outs: &[Bound<'py, PyAny>],
    scope: &Scope,
    kept: &mut Vec<Option<Bound<'py, PyAny>>>,
) -> PyResult<Vec<Bound<'py, PyAny>>> {
    items
        .iter()
        .map(|t| t.build(py, outs, scope, kept))
        .collect()
}

/// Wraps the frame's result in the side effects of the traced region, replayed after the graph.
pub(crate) fn with_effects(
    py: Python<'_>,
    value: OutputTemplate,
    effects: &interp::SideEffects,
    outs: &mut Vec<fx::NodeId>,
    ctx: &mut TemplateCtx<'_>,
) -> Result<OutputTemplate, TraceError> {
    if effects.is_empty() {
        return Ok(value);
    }
    let builtins = py.import("builtins")?;
    let operator = py.import("operator")?;
    let setattr = builtins.getattr("setattr")?.unbind();
    let setitem = operator.getattr("setitem")?.unbind();
    let dict = builtins.getattr("dict")?;
    let mut calls: Vec<(Py<PyAny>, Vec<OutputTemplate>)> = Vec::new();
    let name =
        |s: &str| OutputTemplate::Const(pyo3::types::PyString::new(py, s).into_any().unbind());
    for l in &effects.lists {
        let target = template_of(py, &Var::List(l.clone()), outs, ctx)?;
        let items = l
            .borrow()
            .iter()
            .map(|v| template_of(py, v, outs, ctx))
            .collect::<Result<Vec<_>, _>>()?;
        let all = pyo3::types::PySlice::full(py).into_any().unbind();
        // `list.__setitem__`, not `operator.setitem`: a user subclass's override must not run.
        calls.push((
            builtins.getattr("list")?.getattr("__setitem__")?.unbind(),
            vec![
                target,
                OutputTemplate::Const(all),
                OutputTemplate::List(items),
            ],
        ));
    }
    for d in &effects.dicts {
        let target = template_of(py, &Var::Dict(d.clone()), outs, ctx)?;
        let items = d
            .borrow()
            .iter()
            .map(|(k, v)| Ok((k.clone_ref(py), template_of(py, v, outs, ctx)?)))
            .collect::<Result<Vec<_>, TraceError>>()?;
        // Cleared and refilled, so the key order is the traced one.
        let again = template_of(py, &Var::Dict(d.clone()), outs, ctx)?;
        let ordered = py.import("collections")?.getattr("OrderedDict")?;
        let is_ordered = crate::interp::vars::dict_kind(d).is_some_and(|(cls, _)| {
            cls.bind(py)
                .cast::<pyo3::types::PyType>()
                .is_ok_and(|c| c.is_subclass(&ordered).unwrap_or(false))
        });
        if is_ordered {
            // An `OrderedDict` (subclass) input: through the base's own methods, which keep its
            // order list in step (the builtin dict's would not) and run no override.
            calls.push((ordered.getattr("clear")?.unbind(), vec![again]));
            let set = ordered.getattr("__setitem__")?.unbind();
            for (k, v) in items {
                let target = template_of(py, &Var::Dict(d.clone()), outs, ctx)?;
                calls.push((set.clone_ref(py), vec![target, OutputTemplate::Const(k), v]));
            }
            continue;
        }
        calls.push((dict.getattr("clear")?.unbind(), vec![again]));
        calls.push((
            dict.getattr("update")?.unbind(),
            vec![target, OutputTemplate::Dict(items)],
        ));
    }
    let deque = py.import("collections")?.getattr("deque")?;
    for q in &effects.deques {
        let target = template_of(py, &Var::Deque(q.clone()), outs, ctx)?;
        let items = q
            .items
            .borrow()
            .iter()
            .map(|v| template_of(py, v, outs, ctx))
            .collect::<Result<Vec<_>, _>>()?;
        let again = template_of(py, &Var::Deque(q.clone()), outs, ctx)?;
        calls.push((deque.getattr("clear")?.unbind(), vec![target]));
        calls.push((
            deque.getattr("extend")?.unbind(),
            vec![again, OutputTemplate::List(items)],
        ));
    }
    let set = builtins.getattr("set")?;
    for s in &effects.sets {
        let target = template_of(py, &Var::Set(s.clone_ref(py)), outs, ctx)?;
        let again = template_of(py, &Var::Set(s.clone_ref(py)), outs, ctx)?;
        let items = builtins
            .getattr("frozenset")?
            .call1((s.bind(py),))?
            .unbind();
        calls.push((set.getattr("clear")?.unbind(), vec![target]));
        calls.push((
            set.getattr("update")?.unbind(),
            vec![again, OutputTemplate::Const(items)],
        ));
    }
    for (j, v) in &effects.cells {
        calls.push((
            setattr.clone_ref(py),
            vec![
                OutputTemplate::ClosureCell(*j),
                name("cell_contents"),
                template_of(py, v, outs, ctx)?,
            ],
        ));
    }
    for (_, src, attr, v) in &effects.attrs {
        calls.push((
            setattr.clone_ref(py),
            vec![
                OutputTemplate::Input(src.clone()),
                name(attr),
                template_of(py, v, outs, ctx)?,
            ],
        ));
    }
    for (g, n, v) in &effects.globals {
        calls.push((
            setitem.clone_ref(py),
            vec![
                OutputTemplate::Const(g.clone_ref(py)),
                name(n),
                template_of(py, v, outs, ctx)?,
            ],
        ));
    }
    Ok(OutputTemplate::Effects(Box::new(value), calls))
}

/// (output index, input index) for graph outputs that are placeholders.
pub(crate) fn passthrough(graph: &fx::Graph) -> Vec<(usize, usize)> {
    let Some(out) = graph.output_node() else {
        return Vec::new();
    };
    let NodeKind::Output { values } = &graph.node(out).kind else {
        return Vec::new();
    };
    values
        .iter()
        .enumerate()
        .filter_map(|(i, v)| match v {
            Arg::Node(n) => match graph.node(*n).kind {
                NodeKind::Placeholder { index } => Some((i, index)),
                _ => None,
            },
            _ => None,
        })
        .collect()
}

/// State of one value reconstruction: where input containers come from, and which containers
/// made in the frame were already built (a list reached twice must be one object).
pub(crate) struct TemplateCtx<'a> {
    ext: &'a [(usize, crate::source::Source)],
    built: Vec<usize>,
    /// Results of in-place ops on graph inputs: returned as the input object itself.
    inputs: Vec<(fx::NodeId, crate::source::Source)>,
    /// Tracked cells that stand for the frame's closure cells: (address, closure index).
    free_cells: &'a [(usize, usize)],
    /// Dynamic shapes: the input and the size, stride or int each symbol is read from, so a
    /// symbolic int is rebuilt from the call's own sizes.
    pub(crate) symbols: Vec<crate::guards::shape_env::SymbolInfo>,
    /// Values whose contents refer back to them, and the fills that wait for them.
    order: cycles::Order,
}

impl<'a> TemplateCtx<'a> {
    pub(crate) fn new(
        ext: &'a [(usize, crate::source::Source)],
        inputs: Vec<(fx::NodeId, crate::source::Source)>,
        free_cells: &'a [(usize, usize)],
    ) -> Self {
        TemplateCtx {
            ext,
            built: Vec::new(),
            inputs,
            free_cells,
            symbols: Vec::new(),
            order: cycles::Order::default(),
        }
    }

    fn external(&self, addr: usize) -> Option<crate::source::Source> {
        self.ext
            .iter()
            .find(|(a, _)| *a == addr)
            .map(|(_, s)| s.clone())
    }
}

/// A set, list, dict or bytearray (exactly: subclasses carry more state than a copy keeps).
fn is_plain_mutable(py: Python<'_>, ob: &Bound<'_, PyAny>) -> bool {
    let ty = ob.get_type();
    ty.is(py.get_type::<pyo3::types::PySet>())
        || ty.is(py.get_type::<pyo3::types::PyList>())
        || ty.is(py.get_type::<pyo3::types::PyDict>())
        || ty.is(py.get_type::<pyo3::types::PyByteArray>())
}

pub(crate) fn template_of(
    py: Python<'_>,
    v: &Var,
    outs: &mut Vec<fx::NodeId>,
    ctx: &mut TemplateCtx<'_>,
) -> Result<OutputTemplate, TraceError> {
    // A mutable object made at trace time (`set()` folded) must be a fresh one on every call:
    // a copy of its state at the break, one per object.
    if let Var::Py(o, None) = v {
        let ob = o.bind(py);
        // A method of such an object (`seen.add`) is looked up on its copy.
        if ob.is_instance_of::<pyo3::types::PyCFunction>() {
            if let (Ok(owner), Ok(name)) = (ob.getattr("__self__"), ob.getattr("__name__")) {
                if is_plain_mutable(py, &owner) {
                    let recv = template_of(py, &Var::Py(owner.unbind(), None), outs, ctx)?;
                    return Ok(OutputTemplate::Attr(Box::new(recv), name.extract()?));
                }
            }
        }
        if is_plain_mutable(py, ob) {
            let addr = ob.as_ptr() as usize;
            if let Some(k) = ctx.built.iter().position(|a| *a == addr) {
                return Ok(ctx.order.again(k));
            }
            ctx.built.push(addr);
            let k = ctx.built.len() - 1;
            let copy = py.import("copy")?.getattr("copy")?.unbind();
            return Ok(OutputTemplate::Keep(
                k,
                Box::new(OutputTemplate::Call(
                    copy,
                    vec![OutputTemplate::Const(o.clone_ref(py))],
                )),
            ));
        }
    }
    // A user object made by the traced code: `object.__new__(cls)`, remembered before its
    // `__dict__` is built (so an attribute can refer back to it), then filled in order; the
    // fill waits for a value it refers back to that is still being built (`cycles`).
    if let Var::Object(o) = v {
        let addr = std::rc::Rc::as_ptr(o) as usize;
        if let Some(k) = ctx.built.iter().position(|a| *a == addr) {
            return Ok(ctx.order.again(k));
        }
        ctx.built.push(addr);
        let k = ctx.built.len() - 1;
        let new = py
            .import("builtins")?
            .getattr("object")?
            .getattr("__new__")?
            .unbind();
        let shell = OutputTemplate::Keep(
            k,
            Box::new(OutputTemplate::Call(
                new,
                vec![OutputTemplate::Const(o.cls.clone_ref(py))],
            )),
        );
        let attrs = o.attrs.borrow().clone();
        let names = pyo3::types::PyTuple::new(py, attrs.iter().map(|(n, _)| n.bind(py)))?;
        let outer = ctx.order.begin_fill();
        let values = attrs
            .iter()
            .map(|(_, a)| template_of(py, a, outs, ctx))
            .collect::<Result<Vec<_>, _>>()?;
        let waits = ctx.order.end_fill(outer);
        let fill = |obj| -> Result<OutputTemplate, TraceError> {
            Ok(OutputTemplate::Call(
                interp::fill_function(py)?,
                vec![
                    obj,
                    OutputTemplate::Const(names.into_any().unbind()),
                    OutputTemplate::Tuple(values),
                ],
            ))
        };
        return Ok(match waits {
            None => fill(shell)?,
            Some(open) => {
                ctx.order.wait(open, fill(OutputTemplate::Again(k))?);
                shell
            }
        });
    }
    let addr = match v {
        Var::List(l) => Some(std::rc::Rc::as_ptr(l) as usize),
        Var::Deque(q) => Some(std::rc::Rc::as_ptr(q) as usize),
        Var::Dict(d) => Some(std::rc::Rc::as_ptr(d) as usize),
        // A tuple held in two places (two names, a slot and a name, `(t, t)`) is rebuilt once
        // and shared, so `is` after the graph says what it says in eager.
        // (One held nowhere else is reached once: rebuilt as it is, with no table entry.)
        Var::Tuple(t) | Var::Size(t) | Var::NamedTuple { items: t, .. } => {
            (std::rc::Rc::strong_count(t) > 1).then_some(std::rc::Rc::as_ptr(t) as usize)
        }
        Var::Cell(c) => Some(std::rc::Rc::as_ptr(c) as usize),
        Var::Function(f) => Some(std::rc::Rc::as_ptr(f) as usize),
        Var::ModelOutput(o) => Some(std::rc::Rc::as_ptr(o) as usize),
        // An iterator or library object held in two places is one object after the graph.
        Var::Iter(i) => Some(std::rc::Rc::as_ptr(i) as *const u8 as usize),
        // A set from the frame is its private copy's address (`Tracer::external_sets`).
        Var::Set(o) => Some(o.as_ptr() as usize),
        Var::Library(l) => Some(std::rc::Rc::as_ptr(l) as *const u8 as usize),
        _ => None,
    };
    if let (Var::Cell(c), Some(addr)) = (v, addr) {
        if let Some((_, j)) = ctx.free_cells.iter().find(|(a, _)| *a == addr) {
            let _ = c;
            return Ok(OutputTemplate::ClosureCell(*j));
        }
    }
    if let Some(addr) = addr {
        if let Some(s) = ctx.external(addr) {
            return Ok(OutputTemplate::Input(s));
        }
        if let Some(k) = ctx.built.iter().position(|a| *a == addr) {
            return Ok(ctx.order.again(k));
        }
        ctx.built.push(addr);
        let k = ctx.built.len() - 1;
        if let Var::Cell(c) = v {
            let content = c.borrow().clone();
            return cell_template(py, k, content, outs, ctx);
        }
        // Made from its contents: it does not exist while they are built (`cycles`).
        ctx.order.open(k);
        let inner = template_of_inner(py, v, outs, ctx)?;
        return ctx
            .order
            .close(py, k, OutputTemplate::Keep(k, Box::new(inner)));
    }
    template_of_inner(py, v, outs, ctx)
}

/// A cell of the frame: a new, empty cell object, remembered as number `k` before its content
/// is built and then filled in. A recursive local function's cell holds the function, whose
/// closure holds the very cell: the content refers back to the cell (`Again(k)`), so the cell
/// must exist first; reached from the function instead, the fill waits until the function is
/// built (`cycles`). One per tracked cell; closures rebuilt from it share it.
fn cell_template(
    py: Python<'_>,
    k: usize,
    content: Option<Var>,
    outs: &mut Vec<fx::NodeId>,
    ctx: &mut TemplateCtx<'_>,
) -> Result<OutputTemplate, TraceError> {
    let cell_type = py.import("types")?.getattr("CellType")?.unbind();
    let shell = OutputTemplate::Keep(k, Box::new(OutputTemplate::Call(cell_type, Vec::new())));
    let Some(content) = content else {
        return Ok(shell);
    };
    let outer = ctx.order.begin_fill();
    let value = template_of(py, &content, outs, ctx)?;
    let waits = ctx.order.end_fill(outer);
    let ns = PyDict::new(py);
    py.run(
        c"def fill_cell(cell, value):\n    cell.cell_contents = value\n    return cell\n",
        Some(&ns),
        None,
    )?;
    let fill = ns
        .get_item("fill_cell")?
        .ok_or_else(|| TraceError::internal("fill_cell"))?
        .unbind();
    Ok(match waits {
        None => OutputTemplate::Call(fill, vec![shell, value]),
        Some(open) => {
            ctx.order.wait(
                open,
                OutputTemplate::Call(fill, vec![OutputTemplate::Again(k), value]),
            );
            shell
        }
    })
}
