//! The compiled entries of one code object as plain Python data (tuples, lists, dicts and the
//! live objects the guards and templates refer to), for the artifact writer. Only reads.

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};

use crate::backend::Runner;
use crate::global_state::GlobalFact;
use crate::guards::Check;
use crate::reconstruct::OutputTemplate;
use crate::source::{Source, Step};

fn steps<'py>(py: Python<'py>, s: &Source) -> PyResult<Bound<'py, PyList>> {
    let items: Vec<Bound<'py, PyAny>> = s
        .steps()
        .iter()
        .map(|st| {
            Ok(match st {
                Step::Local { index, name } => ("local", name.as_str(), *index)
                    .into_pyobject(py)?
                    .into_any(),
                Step::Cell { index, name } => ("cell", name.as_str(), *index)
                    .into_pyobject(py)?
                    .into_any(),
                Step::Global { name } => ("global", name.bind(py)).into_pyobject(py)?.into_any(),
                Step::ModuleGlobal { module, name, .. } => {
                    ("module_global", module.as_str(), name.bind(py))
                        .into_pyobject(py)?
                        .into_any()
                }
                Step::Attr { name } => ("attr", name.bind(py)).into_pyobject(py)?.into_any(),
                Step::Item { key, .. } => ("item", key.bind(py)).into_pyobject(py)?.into_any(),
                Step::FromNumpy => ("from_numpy",).into_pyobject(py)?.into_any(),
                Step::StorageBytes => ("storage_nbytes",).into_pyobject(py)?.into_any(),
                Step::WeakRefCall => ("weakref_call",).into_pyobject(py)?.into_any(),
            })
        })
        .collect::<PyResult<_>>()?;
    PyList::new(py, items)
}

fn check<'py>(py: Python<'py>, source: &Source, c: &Check) -> PyResult<Bound<'py, PyAny>> {
    let s = steps(py, source)?;
    let text = source.to_string();
    Ok(match c {
        Check::Tensor(t) => (
            "TENSOR",
            s,
            text,
            (
                t.tensor_type.bind(py),
                t.dtype.bind(py),
                t.device.bind(py),
                t.sizes.clone(),
                t.strides.clone(),
                t.requires_grad,
                t.layout.bind(py),
                t.dynamic.clone(),
            ),
        )
            .into_pyobject(py)?
            .into_any(),
        Check::Type(ty) => ("TYPE", s, text, ty.bind(py)).into_pyobject(py)?.into_any(),
        Check::Id(o) => ("ID", s, text, o.bind(py)).into_pyobject(py)?.into_any(),
        Check::WeakId(w) => match w.object(py) {
            Some(o) => ("ID", s, text, o).into_pyobject(py)?.into_any(),
            None => ("DEAD", s, text, py.None()).into_pyobject(py)?.into_any(),
        },
        Check::Equals(v) => ("EQUALS", s, text, v.bind(py))
            .into_pyobject(py)?
            .into_any(),
        Check::IsNone => ("NONE", s, text, py.None()).into_pyobject(py)?.into_any(),
        Check::Len(n) => ("LEN", s, text, *n).into_pyobject(py)?.into_any(),
        Check::DictKeys(keys) => (
            "DICT_KEYS",
            s,
            text,
            PyList::new(py, keys.iter().map(|k| k.bind(py)))?,
        )
            .into_pyobject(py)?
            .into_any(),
        Check::HasAttr(name, present) => ("HASATTR", s, text, (name.as_str(), *present))
            .into_pyobject(py)?
            .into_any(),
        Check::NotInDict(name) => ("NOT_IN_DICT", s, text, name.as_str())
            .into_pyobject(py)?
            .into_any(),
    })
}

/// An entry's shape guards (dynamic shapes) as plain data, `None` without symbolic sizes:
/// `symbols`: `(steps, source text, dim, min, max, stride)` (symbol `k` is the `k`th; `stride`:
/// it is the stride of `dim`, not its size); `duck`:
/// `(steps, source text, dim, k)`, a dimension equal to symbol `k`; `relations`:
/// `(condition, text)`, the condition a Python expression over `_s0`, `_s1`, ... and the text
/// as the guard listing shows it (over the sizes' sources).
fn shape<'py>(
    py: Python<'py>,
    g: Option<&crate::guards::ShapeGuards>,
) -> PyResult<Option<Bound<'py, PyDict>>> {
    let Some(g) = g else { return Ok(None) };
    let (symbols, duck, relations, floats) = g.parts();
    let d = PyDict::new(py);
    let syms = symbols
        .iter()
        .map(|s| {
            Ok((
                steps(py, &s.source)?,
                s.source.to_string(),
                s.dim,
                s.min,
                s.max,
                s.stride,
            ))
        })
        .collect::<PyResult<Vec<_>>>()?;
    d.set_item("symbols", syms)?;
    let ducks = duck
        .iter()
        .map(|(src, dim, k)| Ok((steps(py, src)?, src.to_string(), *dim, *k)))
        .collect::<PyResult<Vec<_>>>()?;
    d.set_item("duck", ducks)?;
    let name = |k: u32| symbols[k as usize].name();
    let rels: Vec<(String, String)> = relations
        .iter()
        .map(|(r, _)| (r.render(&|k| format!("_s{k}")), r.render(&name)))
        .chain(floats.iter().map(|(r, _)| {
            (
                r.render(&|k| format!("_s{k}"), true),
                r.render(&name, false),
            )
        }))
        .collect();
    d.set_item("relations", rels)?;
    Ok(Some(d))
}

fn template<'py>(py: Python<'py>, t: &OutputTemplate) -> PyResult<Bound<'py, PyAny>> {
    let many = |items: &[OutputTemplate]| -> PyResult<Bound<'py, PyList>> {
        PyList::new(
            py,
            items
                .iter()
                .map(|i| template(py, i))
                .collect::<PyResult<Vec<_>>>()?,
        )
    };
    Ok(match t {
        OutputTemplate::Graph(i) => ("graph", *i).into_pyobject(py)?.into_any(),
        OutputTemplate::Const(c) => ("const", c.bind(py)).into_pyobject(py)?.into_any(),
        OutputTemplate::Tuple(items) => ("tuple", many(items)?).into_pyobject(py)?.into_any(),
        OutputTemplate::List(items) => ("list", many(items)?).into_pyobject(py)?.into_any(),
        OutputTemplate::Dict(items) => {
            let kv = items
                .iter()
                .map(|(k, v)| Ok((k.bind(py).clone(), template(py, v)?)))
                .collect::<PyResult<Vec<_>>>()?;
            ("dict", PyList::new(py, kv)?).into_pyobject(py)?.into_any()
        }
        OutputTemplate::NamedTuple(ty, items) => ("namedtuple", ty.bind(py), many(items)?)
            .into_pyobject(py)?
            .into_any(),
        OutputTemplate::Attr(v, name) => ("attr", template(py, v)?, name.as_str())
            .into_pyobject(py)?
            .into_any(),
        OutputTemplate::Input(s) => ("input", steps(py, s)?).into_pyobject(py)?.into_any(),
        OutputTemplate::Keep(k, v) => ("keep", *k, template(py, v)?).into_pyobject(py)?.into_any(),
        OutputTemplate::Again(k) => ("again", *k).into_pyobject(py)?.into_any(),
        OutputTemplate::Call(f, args) => ("call", f.bind(py), many(args)?)
            .into_pyobject(py)?
            .into_any(),
        OutputTemplate::ClosureCell(j) => ("cell", *j).into_pyobject(py)?.into_any(),
        OutputTemplate::Effects(v, calls) => {
            let calls = calls
                .iter()
                .map(|(f, args)| Ok((f.bind(py).clone(), many(args)?)))
                .collect::<PyResult<Vec<_>>>()?;
            ("effects", template(py, v)?, PyList::new(py, calls)?)
                .into_pyobject(py)?
                .into_any()
        }
    })
}

/// The entries of `code`'s cache (most recently used first), each a dict; see the keys below
/// and `python/torchferro/precompile/_writer.py`, their one reader.
#[pyfunction]
pub(super) fn precompile_export<'py>(
    py: Python<'py>,
    code: &Bound<'py, PyAny>,
) -> PyResult<Vec<Bound<'py, PyDict>>> {
    // SAFETY: `code` is a live object and we hold the GIL; `get` checks the slot index.
    let Some(slot) = (unsafe { crate::code_cache::get(code.as_ptr()) }) else {
        return Ok(Vec::new());
    };
    let entries = match slot.try_borrow() {
        Ok(c) => c.entries.clone(),
        Err(_) => return Ok(Vec::new()),
    };
    let mut out = Vec::new();
    for e in entries {
        let d = PyDict::new(py);
        d.set_item(
            "compile_id",
            format!("{}/{}", e.compile_id.0, e.compile_id.1),
        )?;
        d.set_item("direct", e.direct)?;
        // A graph break's transformed code and the graph object it calls (a constant of that
        // code, which the writer swaps for the artifact's own graph call).
        d.set_item("transformed_code", e.transformed_code.bind(py))?;
        d.set_item("graph_object", e.graph.bind(py))?;
        d.set_item("guard_lines", e.guards.describe())?;
        let guards = e
            .guards
            .leaves()
            .into_iter()
            .map(|(s, c)| check(py, s, c))
            .collect::<PyResult<Vec<_>>>()?;
        d.set_item("guards", guards)?;
        d.set_item("shape", shape(py, e.guards.shape_guards())?)?;
        let (grad, autocast) = e.guards.modes();
        let identities = e.guards.identities();
        d.set_item("grad_enabled", grad)?;
        d.set_item("autocast", autocast)?;
        let ids = identities
            .iter()
            .map(|(a, b, same)| {
                Ok((
                    steps(py, a)?,
                    steps(py, b)?,
                    a.to_string(),
                    b.to_string(),
                    *same,
                ))
            })
            .collect::<PyResult<Vec<_>>>()?;
        d.set_item("identities", ids)?;
        let facts = e
            .guards
            .global
            .facts(py)
            .into_iter()
            .map(|f| {
                Ok(match f {
                    GlobalFact::Value(f, v, label) => {
                        ("value", f, v, label).into_pyobject(py)?.into_any()
                    }
                    GlobalFact::Attr(dict, name, v) => {
                        ("attr", dict, name, v).into_pyobject(py)?.into_any()
                    }
                })
            })
            .collect::<PyResult<Vec<_>>>()?;
        d.set_item("global", facts)?;
        let g = e.graph.get();
        d.set_item("nargs", g.nargs)?;
        d.set_item(
            "inputs",
            g.inputs
                .iter()
                .map(|s| steps(py, s))
                .collect::<PyResult<Vec<_>>>()?,
        )?;
        d.set_item(
            "input_texts",
            g.inputs.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
        )?;
        d.set_item("template", template(py, &g.output)?)?;
        d.set_item("passthrough", g.passthrough.clone())?;
        d.set_item("switches_grad", g.switches_modes.grad)?;
        d.set_item("switches_autocast", g.switches_modes.autocast)?;
        d.set_item("functional", g.functional.is_some())?;
        // A dynamic graph keeps its kernels when they take the sizes as arguments (one
        // symbolic library for every size); with fitted or per-size kernels (some sizes
        // only) the loaded graph replays torch's calls, as does a CUDA graph (its module is
        // NVRTC's, not a library the cache can hold).
        let symbolic = match &g.runner {
            Runner::Inductor(p) if p.is_dynamic() && p.library_path().is_some() => {
                p.symbolic_export()
            }
            _ => None,
        };
        let (runner, library, c_source) = match &g.runner {
            Runner::Eager(_) => ("eager", None, None),
            Runner::Inductor(p) if p.is_dynamic() && symbolic.is_none() => ("eager", None, None),
            Runner::Inductor(p) => (
                "inductor",
                p.library_path().map(|p| p.to_path_buf()),
                Some(p.source().to_string()),
            ),
            Runner::Python(_) => ("python", None, None),
            Runner::Aot(_) => ("aot", None, None),
        };
        d.set_item("runner", runner)?;
        d.set_item("library", library)?;
        d.set_item("c_source", c_source)?;
        d.set_item("symbolic", symbolic.map(|s| (s.hints, s.bounds)))?;
        if let Some(r) = &g.recorded {
            let (text, pos) = super::graph_json::to_json(&r.graph);
            d.set_item("graph_json", text)?;
            let mut calls: Vec<(usize, Bound<'py, PyAny>)> = Vec::new();
            for (id, n) in r.graph.nodes() {
                if let fx::NodeKind::Call {
                    target: fx::Target::Function(path),
                    ..
                } = &n.kind
                {
                    let c = r.callables.iter().rev().find(|(k, _)| *k == id);
                    match c {
                        Some((_, c)) => calls.push((pos[&id], c.bind(py).clone())),
                        None => {
                            return Err(pyo3::exceptions::PyRuntimeError::new_err(format!(
                                "torchferro: graph node calling {path} has no callable"
                            )))
                        }
                    }
                }
            }
            d.set_item(
                "callables",
                PyList::new(
                    py,
                    calls
                        .into_iter()
                        .map(|c| {
                            PyTuple::new(py, [c.0.into_pyobject(py)?.into_any(), c.1])
                                .map(|t| t.into_any())
                        })
                        .collect::<PyResult<Vec<_>>>()?,
                )?,
            )?;
        }
        out.push(d);
    }
    Ok(out)
}
