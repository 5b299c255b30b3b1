//! Calls of `torch.ops` operators (`torch.ops.aten.view`, `torch.ops.aten.add_.Tensor`): what
//! the overload torch picks aliases and writes decides how the call is traced
//! (`fx::ops::aten`). An op that aliases or writes is traced as the user spelling the catalog
//! knows (`x.view(size)`, `x.add_(y)`, `x[...]`), so every pass treats it as that; one the
//! catalog does not know breaks the graph (it runs eagerly: a precise error under
//! `fullgraph=True`); a pure op is one graph node calling the operator, as before.

use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};

use fx::ops::aten::{spelling, Effect, UserSpelling};
use fx::Arg;

use crate::error::TraceError;
use crate::interp::vars::Var;
use crate::interp::Frame;

/// The facts of one overload's schema the tracer decides by.
struct Schema {
    /// `aten::view.dtype(Tensor(a) self, ScalarType dtype) -> Tensor(a)`, for messages.
    text: String,
    /// `None`: pure by its schema.
    effect: Option<Effect>,
    /// The arguments it writes: position, name, keyword-only.
    writes: Vec<(usize, String, bool)>,
    /// Its one result is a list (`Tensor(a)[]`): a method spelling returns a tuple.
    returns_list: bool,
}

fn schema_of(overload: &Bound<'_, PyAny>) -> PyResult<Schema> {
    let py = overload.py();
    let schema = overload.getattr(intern!(py, "_schema"))?;
    let mut writes = Vec::new();
    for (i, a) in schema.getattr("arguments")?.try_iter()?.enumerate() {
        let a = a?;
        let info = a.getattr("alias_info")?;
        if !info.is_none() && info.getattr("is_write")?.is_truthy()? {
            let name: String = a.getattr("name")?.extract()?;
            let kwarg_only = a.getattr("kwarg_only")?.is_truthy()?;
            writes.push((i, name, kwarg_only));
        }
    }
    let returns: Vec<Bound<'_, PyAny>> = schema
        .getattr("returns")?
        .try_iter()?
        .collect::<PyResult<_>>()?;
    let mut aliases = false;
    for r in &returns {
        aliases |= !r.getattr("alias_info")?.is_none();
    }
    let returns_list = match returns.as_slice() {
        [r] => r.getattr("type")?.str()?.to_str()?.starts_with("List["),
        _ => false,
    };
    let effect = match writes.as_slice() {
        [] if aliases => Some(Effect::Aliases),
        [] => None,
        [(0, _, false)] => Some(Effect::WritesSelf),
        [(_, name, true)] if name == "out" => Some(Effect::WritesOut),
        _ => Some(Effect::WritesOther),
    };
    Ok(Schema {
        text: schema.str()?.to_string(),
        effect,
        writes,
        returns_list,
    })
}

/// Every tensor in `v` (a tensor, or lists and tuples of them).
fn tensors_in<'py>(v: &Bound<'py, PyAny>, out: &mut Vec<Bound<'py, PyAny>>) -> PyResult<()> {
    let py = v.py();
    if crate::output::is_tensor(py, v)? {
        out.push(v.clone());
    } else if v.is_instance_of::<PyTuple>() || v.is_instance_of::<PyList>() {
        for item in v.try_iter()? {
            tensors_in(&item?, out)?;
        }
    }
    Ok(())
}

/// The storages (their `StorageImpl` addresses) of the tensors in `values`.
fn storages(values: &[Bound<'_, PyAny>]) -> PyResult<Vec<usize>> {
    let mut tensors = Vec::new();
    for v in values {
        tensors_in(v, &mut tensors)?;
    }
    tensors
        .iter()
        .map(|t| {
            t.call_method0(intern!(t.py(), "untyped_storage"))?
                .getattr(intern!(t.py(), "_cdata"))?
                .extract()
        })
        .collect()
}

impl Frame<'_, '_> {
    /// A call of a `torch.ops` operator: traced as its user spelling where it aliases or
    /// writes an argument, a graph break where the catalog knows no such spelling. `None`: `f`
    /// is no operator, or a pure one (the caller records it as one node calling `f`).
    pub(super) fn op_overload_call(
        &mut self,
        f: &Bound<'_, PyAny>,
        args: &[Var],
        kwargs: &[(String, Var)],
    ) -> Result<Option<Var>, TraceError> {
        let py = self.tx.py;
        let ops = py.import("torch._ops")?;
        let packet = f.is_instance(&ops.getattr("OpOverloadPacket")?)?;
        if !packet && !f.is_instance(&ops.getattr("OpOverload")?)? {
            return Ok(None);
        }
        let qualified: String = if packet {
            f.getattr("_qualified_op_name")?.extract()?
        } else {
            f.getattr("_schema")?.getattr("name")?.extract()?
        };
        let Some((namespace, op)) = qualified.split_once("::") else {
            return Ok(None);
        };
        let (Ok(gargs), Ok(gkw)) = (
            args.iter()
                .map(|a| a.to_arg(py))
                .collect::<Result<Vec<Arg>, _>>(),
            kwargs
                .iter()
                .map(|(k, v)| Ok((k.clone(), v.to_arg(py)?)))
                .collect::<Result<Vec<(String, Arg)>, TraceError>>(),
        ) else {
            // Arguments a graph cannot hold: the caller's own path says why.
            return Ok(None);
        };
        let stand_ins = self.tx.output.meta_stand_ins(py, &gargs, &gkw).ok();
        // The overload torch's dispatcher picks for these arguments.
        let overload = if packet {
            let resolved = stand_ins.as_ref().and_then(|(a, k)| {
                let mut all = vec![qualified.clone().into_pyobject(py).ok()?.into_any()];
                all.extend(a.iter());
                let resolve = py
                    .import("torch._C")
                    .and_then(|c| c.getattr("_jit_resolve_packet"))
                    .ok()?;
                let name: String = resolve
                    .call(PyTuple::new(py, all).ok()?, Some(k))
                    .ok()?
                    .extract()
                    .ok()?;
                f.getattr(name.as_str()).ok()
            });
            match resolved {
                Some(o) => o,
                None => return unresolved_packet(f, &qualified, kwargs).map(|()| None),
            }
        } else {
            f.clone()
        };
        let overload_name: String = overload.getattr("_overloadname")?.extract()?;
        let schema = schema_of(&overload)?;
        let effect = match schema.effect {
            Some(e) => e,
            // Pure by its schema: a meta run tells whether the result shares an argument's
            // storage all the same (`_unsafe_view`, `type_as` to the tensor's own dtype,
            // `dropout` with `p=0`).
            None => match &stand_ins {
                Some((a, k)) if result_shares_storage(f, a, k)? => Effect::Aliases,
                _ => return Ok(None),
            },
        };
        let spelled = if namespace == "aten" {
            spelling(op, &overload_name, effect)
        } else {
            None
        };
        let what = match effect {
            Effect::Aliases => "returns a view of an argument",
            _ => "writes an argument",
        };
        let refuse = |why: &str| {
            TraceError::unsupported(format!(
                "torch.ops.{namespace}.{op}.{overload_name} ({}) {what}{why}",
                schema.text
            ))
        };
        let Some(spelled) = spelled else {
            return Err(refuse(", and the op catalog knows no spelling of it"));
        };
        let r = self.aten_as_user_spelling(spelled, args, kwargs, &refuse)?;
        Ok(Some(match r {
            Var::Tuple(items) if schema.returns_list => Var::list(items.to_vec()),
            other => other,
        }))
    }

    /// The call written as `spelled` and traced as the user's code would be.
    fn aten_as_user_spelling(
        &mut self,
        spelled: UserSpelling,
        args: &[Var],
        kwargs: &[(String, Var)],
        refuse: &dyn Fn(&str) -> TraceError,
    ) -> Result<Var, TraceError> {
        let py = self.tx.py;
        // The receiver: the first argument, or `self=` by keyword.
        let (recv, rest, kw): (Option<Var>, Vec<Var>, Vec<(String, Var)>) =
            match kwargs.iter().position(|(k, _)| k == "self") {
                Some(i) => {
                    let mut kw = kwargs.to_vec();
                    let (_, v) = kw.remove(i);
                    (Some(v), args.to_vec(), kw)
                }
                None => (
                    args.first().cloned(),
                    args.iter().skip(1).cloned().collect(),
                    kwargs.to_vec(),
                ),
            };
        let Some(Var::Tensor(t)) = recv else {
            return Err(refuse(", on a first argument that is no tensor"));
        };
        let alone = || rest.is_empty() && kw.is_empty();
        match spelled {
            UserSpelling::Method(name) => self.aten_method(t, &name, rest, kw, refuse),
            UserSpelling::UntrackedView => {
                if t.meta.requires_grad && self.tx.output.grad_enabled() {
                    return Err(refuse(
                        ", untracked by autograd (x.view would be tracked: not the same op \
                         while x requires grad)",
                    ));
                }
                self.aten_method(t, "view", rest, kw, refuse)
            }
            UserSpelling::Function(name) => {
                let func = py
                    .import("torch")?
                    .getattr("_C")?
                    .getattr("_VariableFunctions")?
                    .getattr(name.as_str())?;
                let mut all = vec![Var::Tensor(t)];
                all.extend(rest);
                self.call_py(&func, None, all, kw)
            }
            UserSpelling::Attribute(name) if alone() => self.getattr(Var::Tensor(t), &name),
            UserSpelling::Ellipsis if alone() => {
                let ellipsis = Var::Py(py.Ellipsis(), None);
                self.subscript(Var::Tensor(t), ellipsis)
            }
            UserSpelling::Slice => {
                let ndim = t.meta.sizes.len();
                let idx = self.aten_slice_index(ndim, rest, kw, refuse)?;
                self.subscript(Var::Tensor(t), idx)
            }
            UserSpelling::Attribute(_) | UserSpelling::Ellipsis => {
                Err(refuse(", with arguments its user spelling does not take"))
            }
        }
    }

    /// `x.name(args)`, unless the program replaced `torch.Tensor.name` (the graph would call
    /// the replacement, which the operator never reaches).
    fn aten_method(
        &mut self,
        t: crate::output::TensorValue,
        name: &str,
        args: Vec<Var>,
        kwargs: Vec<(String, Var)>,
        refuse: &dyn Fn(&str) -> TraceError,
    ) -> Result<Var, TraceError> {
        if self.replaced_tensor_method(name)?.is_some() {
            return Err(refuse(&format!(
                ", and the program replaced torch.Tensor.{name}"
            )));
        }
        self.tensor_method(t, name, args, kwargs)
    }

    /// The subscript of `aten.slice.Tensor(self, dim=0, start=None, end=None, step=1)`: full
    /// slices before `dim`, then `start:end:step`. Only a constant `dim` and a positive step
    /// (aten refuses others; a break lets it say so).
    fn aten_slice_index(
        &mut self,
        ndim: usize,
        args: Vec<Var>,
        kwargs: Vec<(String, Var)>,
        refuse: &dyn Fn(&str) -> TraceError,
    ) -> Result<Var, TraceError> {
        let py = self.tx.py;
        const PARAMS: [&str; 4] = ["dim", "start", "end", "step"];
        if args.len() > PARAMS.len() {
            return Err(refuse(", with more arguments than it takes"));
        }
        let mut bound: [Option<Var>; 4] = Default::default();
        for (i, a) in args.into_iter().enumerate() {
            bound[i] = Some(a);
        }
        for (k, v) in kwargs {
            let Some(i) = PARAMS.iter().position(|p| *p == k) else {
                return Err(refuse(&format!(", with an unknown argument {k}")));
            };
            if bound[i].replace(v).is_some() {
                return Err(refuse(&format!(", with {k} given twice")));
            }
        }
        let [dim, start, end, step] = bound;
        let int_of = |v: &Option<Var>| -> Option<Option<i64>> {
            match v {
                None => Some(None),
                Some(Var::Py(o, _)) if !o.bind(py).is_instance_of::<pyo3::types::PyBool>() => {
                    o.bind(py).extract::<i64>().ok().map(Some)
                }
                _ => None,
            }
        };
        let dim = match int_of(&dim) {
            Some(d) => d.unwrap_or(0),
            None => return Err(refuse(", with a dim that is not a constant int")),
        };
        let n = ndim as i64;
        let dim = if dim < 0 { dim + n } else { dim };
        if ndim == 0 || !(0..n).contains(&dim) {
            return Err(refuse(", with a dim out of range"));
        }
        if matches!(int_of(&step), Some(Some(s)) if s <= 0) {
            return Err(refuse(", with a step that is not positive"));
        }
        let part = |v: Option<Var>| -> Result<Var, TraceError> {
            match v {
                None => Ok(Var::none(py)),
                Some(Var::Tensor(_)) => Err(refuse(", with a tensor as a bound")),
                Some(v) => Ok(v),
            }
        };
        let full = || Var::Slice(Box::new([Var::none(py), Var::none(py), Var::none(py)]));
        let mut items: Vec<Var> = (0..dim).map(|_| full()).collect();
        items.push(Var::Slice(Box::new([
            part(start)?,
            part(end)?,
            part(step)?,
        ])));
        Ok(Var::Tuple(items.into()))
    }
}

/// A packet whose overload for these arguments is not known (no stand-ins, or torch's
/// resolution refused them): a break where an overload these arguments could reach aliases or
/// writes, else the caller's one node. An `out=` overload is reached only with its `out`.
fn unresolved_packet(
    f: &Bound<'_, PyAny>,
    qualified: &str,
    kwargs: &[(String, Var)],
) -> Result<(), TraceError> {
    let names: Vec<String> = f.call_method0("overloads")?.extract()?;
    for name in names {
        let schema = schema_of(&f.getattr(name.as_str())?)?;
        let unreachable = !schema.writes.is_empty()
            && schema
                .writes
                .iter()
                .all(|(_, w, kw_only)| *kw_only && !kwargs.iter().any(|(k, _)| k == w));
        if schema.effect.is_some() && !unreachable {
            return Err(TraceError::unsupported(format!(
                "torch.ops.{} with arguments whose overload is not known: its overload {name} \
                 ({}) aliases or writes an argument",
                qualified.replace("::", "."),
                schema.text
            )));
        }
    }
    Ok(())
}

/// Whether `f(*args, **kwargs)` on the meta stand-ins returns a tensor that shares storage with
/// an argument; `false` where the run raises (the caller's node then runs it as before).
fn result_shares_storage(
    f: &Bound<'_, PyAny>,
    args: &Bound<'_, PyTuple>,
    kwargs: &Bound<'_, PyDict>,
) -> PyResult<bool> {
    let Ok(result) = f.call(args.clone(), Some(kwargs)) else {
        return Ok(false);
    };
    let mut inputs: Vec<Bound<'_, PyAny>> = args.iter().collect();
    inputs.extend(kwargs.values().iter());
    let inputs = storages(&inputs)?;
    Ok(storages(&[result])?.iter().any(|s| inputs.contains(s)))
}
