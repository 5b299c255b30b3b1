//! The template of one value by its kind: a tensor (a graph output, or the input object an
//! in-place op returned), containers, named tuples and `ModelOutput`s, symbolic sizes, functions,
//! iterators and library objects, grad-mode exits. `super::template_of` decides identity first
//! (an input object, a value already in the table); what is left is built here.

use pyo3::prelude::*;

use crate::error::TraceError;
use crate::interp::{self, Var};

use super::{template_of, OutputTemplate, TemplateCtx};

pub(super) fn template_of_inner(
    py: Python<'_>,
    v: &Var,
    outs: &mut Vec<fx::NodeId>,
    ctx: &mut TemplateCtx<'_>,
) -> Result<OutputTemplate, TraceError> {
    match v {
        // Read from the inputs: the object itself, fetched again on each call.
        Var::Py(_, Some(s)) => return Ok(OutputTemplate::Input(s.clone())),
        // The result of an in-place op on a graph input: the graph still performs the
        // mutation (the node is an output, so it is kept); the value is the input object itself,
        // as eager returns it.
        Var::Tensor(t) => {
            if let Some((_, s)) = ctx.inputs.iter().find(|(n, _)| *n == t.node) {
                if !outs.contains(&t.node) {
                    outs.push(t.node);
                }
                return Ok(OutputTemplate::Input(s.clone()));
            }
        }
        _ => {}
    }
    Ok(match v {
        // The storage of a tensor: taken again from the rebuilt tensor (a storage object is
        // made afresh by every `untyped_storage()` call, as here).
        Var::Storage(t) => {
            let f = py
                .import("torch")?
                .getattr("Tensor")?
                .getattr("untyped_storage")?;
            let t = template_of_inner(py, &Var::Tensor(t.clone()), outs, ctx)?;
            OutputTemplate::Call(f.unbind(), vec![t])
        }
        // An array computed in the graph: its tensor turned back into an array, and a numpy
        // scalar taken out of the 0-d array as `[()]` does.
        Var::Ndarray(a) => {
            // A numpy array input returned as it is: the caller's very array, as in eager.
            if let Some((_, s)) = ctx.inputs.iter().find(|(n, _)| *n == a.t.node) {
                if let (Some(arr), false) = (s.numpy_array(), a.scalar) {
                    if !outs.contains(&a.t.node) {
                        outs.push(a.t.node);
                    }
                    return Ok(OutputTemplate::Input(arr));
                }
            }
            let (to_numpy, getitem, item) = crate::interp::numpy::numpy_templates(py)?;
            let t = template_of_inner(py, &Var::Tensor(a.t.clone()), outs, ctx)?;
            if a.pynum {
                return Ok(OutputTemplate::Call(item, vec![t]));
            }
            let arr = OutputTemplate::Call(to_numpy, vec![t]);
            if a.scalar {
                let empty = pyo3::types::PyTuple::empty(py).into_any().unbind();
                OutputTemplate::Call(getitem, vec![arr, OutputTemplate::Const(empty)])
            } else {
                arr
            }
        }
        Var::Tensor(t) => {
            let i = match outs.iter().position(|n| *n == t.node) {
                Some(i) => i,
                None => {
                    outs.push(t.node);
                    outs.len() - 1
                }
            };
            OutputTemplate::Graph(i)
        }
        // Built again by its class from the field values, positionally in declaration order
        // (the dataclass `__init__` takes them so; `__post_init__` makes the dict again).
        Var::ModelOutput(o) => OutputTemplate::Call(
            o.cls.clone_ref(py),
            o.rebuild_args()?
                .iter()
                .map(|v| template_of(py, v, outs, ctx))
                .collect::<Result<_, _>>()?,
        ),
        Var::NamedTuple { ty, items } => OutputTemplate::NamedTuple(
            ty.clone_ref(py),
            items
                .iter()
                .map(|i| template_of(py, i, outs, ctx))
                .collect::<Result<_, _>>()?,
        ),
        Var::Tuple(items) => OutputTemplate::Tuple(
            items
                .iter()
                .map(|i| template_of(py, i, outs, ctx))
                .collect::<Result<_, _>>()?,
        ),
        Var::List(items) => {
            let plain = OutputTemplate::List(
                items
                    .borrow()
                    .iter()
                    .map(|i| template_of(py, i, outs, ctx))
                    .collect::<Result<_, _>>()?,
            );
            user_container(py, v, plain, outs, ctx)?
        }
        Var::Deque(q) => OutputTemplate::Call(
            py.import("collections")?.getattr("deque")?.unbind(),
            vec![
                OutputTemplate::List(
                    q.items
                        .borrow()
                        .iter()
                        .map(|i| template_of(py, i, outs, ctx))
                        .collect::<Result<_, _>>()?,
                ),
                OutputTemplate::Const(q.maxlen.into_pyobject(py)?.into_any().unbind()),
            ],
        ),
        Var::Dict(items) => {
            let plain = OutputTemplate::Dict(
                items
                    .borrow()
                    .iter()
                    .map(|(k, v)| Ok((k.clone_ref(py), template_of(py, v, outs, ctx)?)))
                    .collect::<Result<_, TraceError>>()?,
            );
            // An `OrderedDict`/`defaultdict` made by the traced code: its class called on the
            // items (and the default factory); a user subclass rebuilt without its code.
            if crate::interp::user_container_class(py, v).is_some() {
                return user_container(py, v, plain, outs, ctx);
            }
            match crate::interp::dict_kind(items) {
                None => plain,
                Some((cls, None)) => OutputTemplate::Call(cls, vec![plain]),
                Some((cls, Some(f))) => {
                    OutputTemplate::Call(cls, vec![template_of(py, &f, outs, ctx)?, plain])
                }
            }
        }
        Var::Py(o, _) => OutputTemplate::Const(o.clone_ref(py)),
        Var::Method { recv, name } => {
            OutputTemplate::Attr(Box::new(template_of(py, recv, outs, ctx)?), name.clone())
        }
        // Bound to the very function: `self_.name` could find another one (a method reached
        // through `super()` is overridden in `type(self_)`).
        Var::BoundMethod { func, self_ } => OutputTemplate::Call(
            py.import("types")?.getattr("MethodType")?.unbind(),
            vec![
                template_of(py, func, outs, ctx)?,
                template_of(py, self_, outs, ctx)?,
            ],
        ),
        // A live view of the rebuilt dict (the same object the rest of the value gets).
        Var::DictView(d, kind) => OutputTemplate::Call(
            py.get_type::<pyo3::types::PyDict>()
                .getattr(kind.method())?
                .unbind(),
            vec![template_of(py, &Var::Dict(d.clone()), outs, ctx)?],
        ),
        // A set made by the traced code: a copy of its state, fresh on every call.
        Var::Set(o) => OutputTemplate::Call(
            py.import("copy")?.getattr("copy")?.unbind(),
            vec![OutputTemplate::Const(o.clone_ref(py))],
        ),
        // A symbolic int: its expression evaluated on this call's input sizes (Python's `//`
        // and `%` are the expression's).
        Var::SymInt(..) | Var::SymFloat(..) | Var::SymBool(_) => {
            let (syms, body) = {
                let name = |k: u32| match ctx.symbols.get(k as usize) {
                    Some(s) => s.read_text(&format!("t{k}")),
                    None => format!("t{k}"),
                };
                match v {
                    Var::SymInt(_, e) => (e.symbols(), e.render(&name)),
                    Var::SymFloat(_, f) => (f.symbols(), f.render(&name, true)),
                    // A comparison not decided in the trace: computed on this call's sizes
                    // (torch returns a SymBool graph output), so nothing about it is guarded.
                    Var::SymBool(r) => (r.symbols(), r.render(&name)),
                    _ => unreachable!("matched above"),
                }
            };
            let params: Vec<String> = syms.iter().map(|k| format!("t{k}")).collect();
            let text = format!("lambda {}: {body}", params.join(", "));
            let f = py.import("builtins")?.getattr("eval")?.call1((&text,))?;
            // Its source, for an artifact to write in place of the (unnamed) function.
            f.setattr("_torchferro_source", text)?;
            let args = syms
                .iter()
                .map(|k| {
                    ctx.symbols
                        .get(*k as usize)
                        .map(|s| OutputTemplate::Input(s.source.clone()))
                        .ok_or_else(|| TraceError::internal("a size symbol without a source"))
                })
                .collect::<Result<Vec<_>, _>>()?;
            OutputTemplate::Call(f.unbind(), args)
        }
        // A size with symbolic items: a `torch.Size` of this call's values.
        Var::Size(items) if v.as_py(py).is_none() => OutputTemplate::Call(
            py.import("torch")?.getattr("Size")?.unbind(),
            vec![OutputTemplate::List(
                items
                    .iter()
                    .map(|i| template_of(py, i, outs, ctx))
                    .collect::<Result<_, _>>()?,
            )],
        ),
        Var::Size(_) | Var::Slice(_) => OutputTemplate::Const(
            v.as_py(py)
                .ok_or_else(|| TraceError::internal("size without a value"))?
                .unbind(),
        ),
        // A loop's iterator on the stack is handed over as its remaining items (see
        // `StackSlot::Iter`; `BreakPlan::from_end` refuses one also held elsewhere); one
        // anywhere else is a new iterator over its remaining items (one per tracked iterator).
        Var::Iter(it) => {
            let rest: Vec<Var> = {
                let it = it.borrow();
                it.0[it.1.min(it.0.len())..].to_vec()
            };
            OutputTemplate::Call(
                py.import("builtins")?.getattr("iter")?.unbind(),
                vec![OutputTemplate::List(
                    rest.iter()
                        .map(|i| template_of(py, i, outs, ctx))
                        .collect::<Result<_, _>>()?,
                )],
            )
        }
        Var::Library(l) => {
            let parts = interp::libobj::rebuild(py, &l.borrow())?;
            let args = parts
                .args
                .iter()
                .map(|a| template_of(py, a, outs, ctx))
                .collect::<Result<_, _>>()?;
            let kwargs = named(py, &parts.kwargs, outs, ctx)?;
            OutputTemplate::Call(
                interp::libobj::call_with_keywords(py)?,
                vec![
                    OutputTemplate::Const(parts.callable),
                    OutputTemplate::Tuple(args),
                    OutputTemplate::Dict(kwargs),
                ],
            )
        }
        // A function made by the traced code: made again from its code, defaults and cells.
        // Attributes the trace set on it (`__wrapped__`) are set on the rebuilt function.
        Var::Function(f) if f.kwdefaults.is_empty() => {
            let defaults = if f.defaults.is_empty() {
                OutputTemplate::Const(py.None())
            } else {
                OutputTemplate::Tuple(
                    f.defaults
                        .iter()
                        .map(|d| template_of(py, d, outs, ctx))
                        .collect::<Result<_, _>>()?,
                )
            };
            let closure = if f.closure.is_empty() {
                OutputTemplate::Const(py.None())
            } else {
                OutputTemplate::Tuple(
                    f.closure
                        .iter()
                        .map(|c| match c {
                            Var::Cell(_) => template_of(py, c, outs, ctx),
                            _ => Err(TraceError::unsupported(
                                "a closure over a cell made outside the frame",
                            )),
                        })
                        .collect::<Result<_, _>>()?,
                )
            };
            let ft = py.import("types")?.getattr("FunctionType")?.unbind();
            let made = OutputTemplate::Call(
                ft,
                vec![
                    OutputTemplate::Const(f.code.clone_ref(py)),
                    OutputTemplate::Const(f.globals.clone_ref(py).into_any()),
                    OutputTemplate::Const(
                        pyo3::types::PyString::new(py, &f.name).into_any().unbind(),
                    ),
                    defaults,
                    closure,
                ],
            );
            let attrs = f.attrs.borrow().clone();
            if attrs.is_empty() {
                made
            } else {
                let attrs = named(py, &attrs, outs, ctx)?;
                OutputTemplate::Call(
                    interp::libobj::with_attrs(py)?,
                    vec![made, OutputTemplate::Dict(attrs)],
                )
            }
        }
        // The `__exit__` of a grad-mode block: a `set_grad_enabled` object whose exit restores
        // the mode the block found.
        Var::GradModeExit { restore } => {
            let torch = py.import("torch")?;
            let saved = crate::guards::grad_enabled(py);
            let set = torch.getattr("_C")?.getattr("_set_grad_enabled")?;
            set.call1((*restore,))?;
            let ctx_obj = torch.getattr("set_grad_enabled")?.call1((*restore,));
            set.call1((saved,))?;
            OutputTemplate::Const(ctx_obj?.getattr("__exit__")?.unbind())
        }
        // A `@contextmanager` manager made but never entered: made again from its generator
        // function and arguments.
        Var::GenCm(_) if crate::interp::unentered_generator_cm(v).is_some() => {
            let (func, args, kwargs) =
                crate::interp::unentered_generator_cm(v).expect("checked by the guard");
            let cls = py
                .import("contextlib")?
                .getattr("_GeneratorContextManager")?
                .unbind();
            OutputTemplate::Call(
                cls,
                vec![
                    template_of(py, &func, outs, ctx)?,
                    OutputTemplate::Tuple(
                        args.iter()
                            .map(|a| template_of(py, a, outs, ctx))
                            .collect::<Result<_, _>>()?,
                    ),
                    OutputTemplate::Dict(named(py, &kwargs, outs, ctx)?),
                ],
            )
        }
        // The `__exit__` of an inference-mode block re-entered natively after a graph break
        // (`torchferro._amp.reenter_inference`): it leaves the innermost level.
        Var::InferenceModeExit {
            prev_grad,
            prev_inference,
        } => {
            let prev_inference = match prev_inference {
                Some(m) => *m,
                None => crate::guards::inference_mode_enabled(py),
            };
            let exit = py
                .import("torchferro._amp")?
                .getattr("InferenceExit")?
                .call1((prev_inference, *prev_grad))?
                .getattr("__exit__")?;
            OutputTemplate::Const(exit.unbind())
        }
        other => {
            return Err(TraceError::unsupported(format!(
                "returning a {}",
                other.type_name(py)
            )))
        }
    })
}

/// A list or dict the traced code made as an instance of a user subclass: rebuilt by the
/// builtin base (`interp::user_containers`), so the class's overrides do not run again.
/// Instance attributes the trace set on it (`self.writes = 0`) fill its `__dict__` afterwards,
/// as those of a user object do.
fn user_container(
    py: Python<'_>,
    v: &Var,
    plain: OutputTemplate,
    outs: &mut Vec<fx::NodeId>,
    ctx: &mut TemplateCtx<'_>,
) -> Result<OutputTemplate, TraceError> {
    let Some((cls, base)) = crate::interp::user_container_class(py, v) else {
        return Ok(plain);
    };
    let rebuilt = OutputTemplate::Call(
        crate::interp::user_container_rebuild(py)?.unbind(),
        vec![
            OutputTemplate::Const(cls),
            OutputTemplate::Const(base),
            plain,
        ],
    );
    let Some(attrs) = crate::interp::container_attrs(v) else {
        return Ok(rebuilt);
    };
    let attrs = attrs.borrow().clone();
    if attrs.is_empty() {
        return Ok(rebuilt);
    }
    let names = pyo3::types::PyTuple::new(py, attrs.iter().map(|(n, _)| n.bind(py)))?;
    let values = attrs
        .iter()
        .map(|(_, a)| template_of(py, a, outs, ctx))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(OutputTemplate::Call(
        interp::fill_function(py)?,
        vec![
            rebuilt,
            OutputTemplate::Const(names.into_any().unbind()),
            OutputTemplate::Tuple(values),
        ],
    ))
}

/// Templates of named values (keyword arguments, a function's attributes), keyed by name.
fn named(
    py: Python<'_>,
    items: &[(String, Var)],
    outs: &mut Vec<fx::NodeId>,
    ctx: &mut TemplateCtx<'_>,
) -> Result<Vec<(Py<PyAny>, OutputTemplate)>, TraceError> {
    items
        .iter()
        .map(|(k, a)| {
            Ok((
                pyo3::types::PyString::new(py, k).into_any().unbind(),
                template_of(py, a, outs, ctx)?,
            ))
        })
        .collect()
}
