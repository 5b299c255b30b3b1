//! Calls: the dispatch of a call to what it is. Torch functions and tensor methods become graph
//! nodes (`torch.rs`), standard `nn.Module`s their functional form over lifted parameters
//! (`modules.rs`), builtins on known values fold at trace time (`builtins.rs`), methods of
//! tracked lists and dicts mutate the trackers (`containers.rs`), and user functions are inlined.

mod aten;
mod builtins;
mod collections;
mod compiler_api;
mod containers;
mod distributions;
mod foreach;
mod functools;
pub(super) mod identity;
mod iterators;
mod library;
mod module_tree;
mod modules;
mod nn_functional;
mod optim;
mod pytree;
pub(crate) use optim::object_key_repr;
mod sequences;
mod torch;
mod torch_api;
mod trace_time;

use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};

use crate::error::TraceError;

use crate::interp::pyobj::{is_dict_read, is_nn_module};
use crate::interp::vars::Var;
use crate::interp::Frame;

use self::builtins::FOLDABLE_BUILTINS;
pub(super) use self::modules::parameter_container_items;
use self::torch::{callable_path, FACTORIES};
use self::trace_time::{
    guard_via, has_state_effects, trace_time_kind, GuardVia, TraceTime, EMPTY_ONLY,
};

impl Frame<'_, '_> {
    pub(super) fn call(
        &mut self,
        f: Var,
        args: Vec<Var>,
        kwargs: Vec<(String, Var)>,
    ) -> Result<Var, TraceError> {
        let py = self.tx.py;
        if let Some(b) = self.sym_bool_call(&f, &args, &kwargs)? {
            return Ok(b);
        }
        let args = args
            .into_iter()
            .map(|a| self.decide_bools(a))
            .collect::<Result<Vec<_>, _>>()?;
        let kwargs = kwargs
            .into_iter()
            .map(|(k, a)| Ok((k, self.decide_bools(a)?)))
            .collect::<Result<Vec<_>, TraceError>>()?;
        let f = self.decide_bools(f)?;
        match f {
            Var::Method { recv, name }
                if name.starts_with(crate::interp::user_containers::BUILTIN_PREFIX) =>
            {
                let name = &name[crate::interp::user_containers::BUILTIN_PREFIX.len()..];
                self.builtin_dunder(&recv, name, args, kwargs)
            }
            Var::Method { recv, name } => match *recv {
                Var::Tensor(t) => match self.replaced_tensor_method(&name)? {
                    // `torch.Tensor.relu = my_relu`: eager calls the replacement.
                    Some(f) => {
                        let mut all = vec![Var::Tensor(t)];
                        all.extend(args);
                        self.call(Var::Py(f.unbind(), None), all, kwargs)
                    }
                    None => self.tensor_method(t, &name, args, kwargs),
                },
                Var::Ndarray(a) => self.ndarray_method(a, &name, args, kwargs),
                Var::Storage(t) => self.storage_method(&t, &name, &args, &kwargs),
                Var::List(l) => self.list_method(l, &name, args, kwargs),
                Var::Deque(q) => self.deque_method(q, &name, args, kwargs),
                Var::Generator(g) if name == "send" && args.len() == 1 && kwargs.is_empty() => {
                    self.generator_send(&g, args[0].clone())
                }
                Var::GenCm(g) if name == "__enter__" && args.is_empty() && kwargs.is_empty() => {
                    self.generator_cm_enter(&g)
                }
                Var::GenCm(g) if name == "__exit__" && kwargs.is_empty() => {
                    self.generator_cm_exit(&g, &args)
                }
                Var::Dict(d) => self.dict_method(d, &name, args, kwargs),
                Var::Set(set) => self.set_method(set, &name, args, kwargs),
                Var::NamedTuple { ty, items } => {
                    self.named_tuple_method(ty, items.to_vec(), &name, args, kwargs)
                }
                Var::ModelOutput(o) => self.model_output_method(o, &name, args, kwargs),
                Var::Py(o, Some(src))
                    if is_dict_read(&name) && o.bind(py).is_instance_of::<PyDict>() =>
                {
                    self.py_dict_method(o, src, &name, args)
                }
                // A dict known at trace time (no source: a constant, or a folded result).
                Var::Py(o, None)
                    if is_dict_read(&name) && o.bind(py).is_instance_of::<PyDict>() =>
                {
                    let m = o.bind(py).getattr(name.as_str())?;
                    self.fold(&m, &args, &kwargs)?.ok_or_else(|| {
                        TraceError::unsupported(format!("dict.{name} with these arguments"))
                    })
                }
                Var::Super { obj, .. } if name == "__getattribute__" || name == "__getattr__" => {
                    self.super_getattribute(*obj, &args)
                }
                Var::Super { cls, obj } => {
                    if let Some(r) = self.made_exception_super_call(&cls, &obj, &name, &args)? {
                        return Ok(r);
                    }
                    self.super_builtin_call(cls, *obj, &name, &args, &kwargs)
                }
                other => {
                    if let Some(r) = self.sequence_method(&other, &name, &args, &kwargs)? {
                        return Ok(r);
                    }
                    // Methods of tuples, dicts and sizes are pure: fold on the Python value.
                    let obj = other.as_py(py).ok_or_else(|| {
                        TraceError::unsupported(format!(
                            "method {name} of a {}",
                            other.type_name(py)
                        ))
                    })?;
                    let m = obj.getattr(name.as_str())?;
                    let r = self.call_py(&m, None, args, kwargs)?;
                    // The result came from this very object (a call that breaks instead runs
                    // natively on whatever object the next call brings: no guard for it).
                    self.tx.realize_identity(&other);
                    Ok(r)
                }
            },
            Var::Py(obj, src) => {
                let obj = obj.bind(py).clone();
                // A `weakref.ref` read from the frame called (`nn.RNNBase` checks its weights
                // by `ref() is not weight`): its referent, read through the call as a source
                // step, so the referent is guarded as any value read from the frame is.
                if let (Some(src), true) = (&src, args.is_empty() && kwargs.is_empty()) {
                    if let Some(referent) = crate::source::weakref_referent(&obj) {
                        return self.tx.wrap(referent, Some(src.weakref_call()));
                    }
                }
                self.call_py(&obj, src, args, kwargs)
            }
            Var::Function(f) => self.inline_call(&f, args, kwargs),
            // A tracked user object called: its class's `__call__`, bound to it.
            Var::Object(o) => {
                let m = self.object_attr(&o, "__call__")?;
                self.call(m, args, kwargs)
            }
            Var::GenCmExit(g) => self.generator_cm_exit(&g, &args),
            Var::GenCmFunction(f) => Ok(super::gencm::generator_cm(
                f,
                &args,
                &kwargs,
                self.tx.root_index,
            )),
            Var::GradModeExit { restore } => {
                self.tx.output.set_grad_mode(py, restore)?;
                Ok(Var::none(py))
            }
            Var::AutocastExit {
                device,
                enabled,
                dtype,
            } => {
                self.tx
                    .output
                    .set_autocast(py, device, enabled, dtype.bind(py), -1)?;
                Ok(Var::none(py))
            }
            // A mode context called on a function made or read in the frame: torch returns a
            // wrapper that runs the function inside the context.
            ctx @ (Var::Autocast { .. }
            | Var::InferenceMode { .. }
            | Var::GradMode { prev: None, .. })
                if args.len() == 1 && kwargs.is_empty() =>
            {
                let func = args.into_iter().next().unwrap_or(Var::Null);
                if !matches!(
                    func,
                    Var::Function(_) | Var::Py(..) | Var::BoundMethod { .. }
                ) {
                    return Err(TraceError::unsupported(format!(
                        "a {} called on a {}",
                        ctx.type_name(py),
                        func.type_name(py)
                    )));
                }
                Ok(Var::ModeDecorated {
                    ctx: Box::new(ctx),
                    func: Box::new(func),
                })
            }
            Var::ModeDecorated { ctx, func } => {
                let exit = self
                    .enter_mode(&ctx)?
                    .ok_or_else(|| TraceError::internal("a decorated mode context"))?;
                let r = self.call(*func, args, kwargs);
                // The wrapper's `with` leaves the region on a traced exception too.
                if matches!(r, Ok(_) | Err(TraceError::Raised { .. })) {
                    self.call(exit, vec![], vec![])?;
                }
                r
            }
            Var::InferenceModeExit {
                prev_grad,
                prev_inference,
            } => {
                self.tx
                    .output
                    .exit_inference_mode(py, prev_grad, prev_inference)?;
                Ok(Var::none(py))
            }
            Var::BoundMethod { func, self_ } => {
                if let Some(r) = self.mapping_get(&func, &self_, &args, &kwargs)? {
                    return Ok(r);
                }
                let mut all = vec![*self_];
                all.extend(args);
                self.call(*func, all, kwargs)
            }
            Var::Library(l) => self.call_library(&l, args, kwargs),
            // A tracked instance of a user `list`/`dict` subclass called: its class's
            // `__call__`, bound to the tracker (`user_containers`).
            obj @ (Var::List(_) | Var::Dict(_)) => {
                match self.user_container_override(&obj, "__call__")? {
                    Some(m) => self.call(m, args, kwargs),
                    None => Err(TraceError::unsupported(format!(
                        "calling a {}",
                        obj.type_name(py)
                    ))),
                }
            }
            other => Err(TraceError::unsupported(format!(
                "calling a {}",
                other.type_name(py)
            ))),
        }
    }

    pub(super) fn call_py(
        &mut self,
        f: &Bound<'_, PyAny>,
        src: Option<crate::source::Source>,
        args: Vec<Var>,
        kwargs: Vec<(String, Var)>,
    ) -> Result<Var, TraceError> {
        let py = self.tx.py;
        // `super().__init__()` of a module the trace builds, reaching TorchDynamo's wrapper of
        // `nn.Module.__init__`: the original, inlined on the tracker.
        if matches!(args.first(), Some(Var::Object(_))) {
            if let Some(init) = crate::interp::pyobj::dynamo_patched_init(f) {
                return self.call_py(&init, None, args, kwargs);
            }
        }
        if let Some(cm) = self.generator_cm_call(f, src.as_ref(), &args, &kwargs)? {
            return Ok(cm);
        }
        if is_nn_module(py, f)? {
            return self.call_module(f, src, args, kwargs);
        }
        if let Some(r) = self.construct_user_container(f, &args, &kwargs)? {
            return Ok(r);
        }
        if let Some(r) = self.unbound_builtin_on_user_container(f, &args, &kwargs)? {
            return Ok(r);
        }
        let module: String = f
            .getattr(intern!(py, "__module__"))
            .ok()
            .and_then(|m| m.extract().ok())
            .unwrap_or_default();
        let name: String = f
            .getattr(intern!(py, "__name__"))
            .ok()
            .and_then(|m| m.extract().ok())
            .unwrap_or_default();
        // A user's wrapper that `functools.wraps` dressed as the torch function it wraps (a
        // decorator around `torch.relu`) is user code: classified by the module its code was
        // written in, it is inlined. Taken for the torch function it names, the inductor
        // lowered it by that name and dropped the wrapper's own work.
        let module = self::torch::dressed_user_wrapper(py, f).unwrap_or(module);
        let has_tensor = args
            .iter()
            .chain(kwargs.iter().map(|(_, v)| v))
            .any(contains_tensor);
        if let Some(r) = self.compiler_api_call(f, &module, &name, &args, &kwargs)? {
            return Ok(r);
        }
        if let Some(r) = self.torch_check_call(f, &module, &name, &args, &kwargs)? {
            return Ok(r);
        }
        if let Some(r) = self.checkpoint_call(f, &module, &name, &args, &kwargs)? {
            return Ok(r);
        }
        // `torch.set_default_dtype(d)`: a switch in the graph, as torch.compile records it.
        if name == "set_default_dtype" && module == "torch" && kwargs.is_empty() {
            if let [Var::Py(d, _)] = args.as_slice() {
                let d = d.bind(py);
                if d.is_instance(&py.import("torch")?.getattr("dtype")?)? {
                    self.tx.output.set_default_dtype(py, d)?;
                    return Ok(Var::none(py));
                }
            }
        }
        if let Some(r) = self.construct_torch_layer(f, &module, &args, &kwargs)? {
            return Ok(r);
        }
        if let Some(r) = self.autocast_decorated_call(f, &args, &kwargs)? {
            return Ok(r);
        }
        if let Some(r) = self.numpy_call(f, &module, &name, &args, &kwargs)? {
            return Ok(r);
        }
        if let Some(r) = self.frame_builtin(&module, &name, &args, &kwargs)? {
            return Ok(r);
        }
        if let Some(r) = self.module_tree_call(f, &module, &name, &args, &kwargs)? {
            return Ok(r);
        }
        if let Some(r) = self.pytree_call(f, &module, &name, &args, &kwargs)? {
            return Ok(r);
        }
        let builtins = py.import("builtins")?;
        if f.is(&builtins.getattr("super")?) {
            return self.make_super(args);
        }
        if let Some(r) = self.object_setattr_call(f, &args)? {
            return Ok(r);
        }
        if let Some(r) = self.construct_named_tuple(f, &args, &kwargs)? {
            return Ok(r);
        }
        if let Some(r) = self.itertools_call(f, &module, &name, &args, &kwargs)? {
            return Ok(r);
        }
        if let Some(r) = self.functools_call(f, src.as_ref(), &module, &name, &args, &kwargs)? {
            return Ok(r);
        }
        if let Some(r) = self.collections_call(f, &module, &name, &args, &kwargs)? {
            return Ok(r);
        }
        if let Some(r) = self.library_call(f, &module, &name, &args, &kwargs)? {
            return Ok(r);
        }
        if let Some(r) = self.optim_call(f, &module, &name, &args, &kwargs)? {
            return Ok(r);
        }
        if let Some(r) = self.foreach_call(&module, &name, &args, &kwargs)? {
            return Ok(r);
        }
        // `is_dynamo_compiling` too: we stand where Dynamo does (torch.compile answers True).
        if (name == "is_compiling" || name == "is_dynamo_compiling")
            && (module == "torchferro.compiler"
                || module == "torch._utils"
                || module.starts_with("torch.compiler")
                || module.starts_with("torch._dynamo"))
        {
            return Ok(Var::py_const(py, true));
        }
        if f.hasattr(intern!(py, "_torchferro_graph_break"))
            .unwrap_or(false)
        {
            return Err(TraceError::unsupported("torchferro.graph_break()"));
        }
        if f.getattr(intern!(py, "_torchdynamo_disable"))
            .map(|d| d.is_truthy().unwrap_or(false))
            .unwrap_or(false)
        {
            // `torch.compiler.disable` / `torch._dynamo.disable`: run eagerly, and (recursive,
            // the default) let nothing under it compile: the hook runs the wrapper's frame off.
            let recursive = f
                .getattr(intern!(py, "_torchdynamo_disable_recursive"))
                .map(|r| r.is_truthy().unwrap_or(true))
                .unwrap_or(true);
            if recursive {
                if let Ok(code) = f.getattr(intern!(py, "__code__")) {
                    crate::code_cache::mark_region(&code);
                }
            }
            let api = if recursive {
                "torch.compiler.disable"
            } else {
                "torch._dynamo.disable(recursive=False)"
            };
            return Err(TraceError::unsupported(format!(
                "call to {name}, disabled with {api}"
            )));
        }
        if f.hasattr(intern!(py, "_torchferro_disabled"))
            .unwrap_or(false)
        {
            return Err(TraceError::unsupported(format!(
                "call to {name}, disabled with torchferro.compiler.disable"
            )));
        }

        // Unbound tensor methods (`torch.Tensor.add(x, y)`, or the C method a replacement of
        // `torch.Tensor.relu` kept and calls) are method calls.
        let tensor_type = py.import("torch")?.getattr("Tensor")?;
        let tensor_base = py.import("torch")?.getattr("_C")?.getattr("TensorBase")?;
        if let Ok(owner) = f.getattr(intern!(py, "__objclass__")) {
            if owner.is(&tensor_type) || owner.is(&tensor_base) {
                // A graph runs a method node by its name, which would reach the replacement
                // while `torch.Tensor.<name>` is replaced: then the C method runs natively.
                if let Some(Var::Tensor(t)) = args.first().cloned() {
                    if self.replaced_tensor_method(&name)?.is_none() {
                        return self.tensor_method(t, &name, args[1..].to_vec(), kwargs);
                    }
                }
            }
        }
        if let Ok(owner) = f.getattr(intern!(py, "__self__")) {
            if !owner.is_none()
                && crate::interp::pyobj::is_immutable_const(&owner)
                && f.get_type()
                    .name()
                    .map(|n| n == "builtin_function_or_method")
                    .unwrap_or(false)
            {
                if let Some(r) = self.fold(f, &args, &kwargs)? {
                    return Ok(r);
                }
            }
        }
        if let Some(v) = self.grad_mode_call(f, &args)? {
            return Ok(v);
        }
        if let Some(v) = self.inference_mode_call(f, &args, &kwargs)? {
            return Ok(v);
        }
        if let Some(v) = self.autocast_call(f, &args, &kwargs)? {
            return Ok(v);
        }
        if (module == "_operator" || module == "operator") && kwargs.is_empty() && !name.is_empty()
        {
            return self.operator(name.trim_start_matches("__").trim_end_matches("__"), args);
        }
        // torch's Python that is inlined like user code (`inlinable`) is not a torch callable.
        let is_torch =
            (module == "torch" || module.starts_with("torch.") || module.starts_with("torch._C"))
                && !module.starts_with("torch.nn.modules")
                && !self::distributions::is_distributions_module(&module)
                && module != "torch.utils._contextlib"
                && !NN_UTILS_TRACED.contains(&module.as_str())
                && !(module.starts_with("torch.optim") && optim::is_traced_function(f))
                && !(module == "torch.nn.functional" && nn_functional::is_inlined_function(f));
        if is_torch {
            if let Some(why) = autograd_engine_call(&module, &name) {
                // `create_graph=True` differentiates the results again (a gradient penalty):
                // the break's reason says so, and the graph before it then runs through
                // torch's autograd (a compiled backward is not differentiable twice;
                // `compile.rs` marks the graph, `OutputGraph::differentiated_twice`).
                let create_graph = kwargs.iter().any(|(k, v)| {
                    k == "create_graph"
                        && matches!(v, Var::Py(o, _) if o.bind(py).is_truthy().unwrap_or(true))
                });
                if create_graph {
                    return Err(TraceError::unsupported(format!(
                        "{why}, {CREATE_GRAPH_BREAK}"
                    )));
                }
                return Err(TraceError::unsupported(why));
            }
        }
        if is_torch && has_tensor {
            // `torch.ops.aten.alias(x)`, `torch.ops.aten.add_.Tensor(x, y)`: by what the
            // overload aliases and writes (`aten.rs`).
            if let Some(r) = self.op_overload_call(f, &args, &kwargs)? {
                return Ok(r);
            }
        }
        if is_torch && has_state_effects(&module) {
            return self.torch_at_trace_time(f, &module, &name, &args, &kwargs);
        }
        if is_torch && (has_tensor || FACTORIES.contains(&name.as_str())) {
            if module.starts_with("torch._dynamo")
                || module.starts_with("torch.compiler")
                || name == "compile"
            {
                return Err(TraceError::unsupported(format!("calling {module}.{name}")));
            }
            let path = callable_path(py, f, &module, &name);
            let r = self.opaque_call(f, path, &name, &args, &kwargs)?;
            return Ok(identity::input_itself(py, &name, &args, &kwargs, r));
        }
        if module == "builtins" && FOLDABLE_BUILTINS.contains(&name.as_str()) {
            return self.call_builtin(f, &name, args, kwargs);
        }
        // `math.sqrt(n)` of a size: a symbolic float (torch's `_sym_sqrt`); `math.ceil(n /
        // 4)`: the ints' division (`symfloat.rs`).
        if module == "math" && kwargs.is_empty() {
            if let [v] = args.as_slice() {
                use crate::interp::symfloat::Round;
                let round = match name.as_str() {
                    "floor" => Some(Round::Floor),
                    "ceil" => Some(Round::Ceil),
                    "trunc" => Some(Round::Trunc),
                    _ => None,
                };
                let r = match round {
                    _ if name == "sqrt" => self.sym_sqrt(v)?,
                    // `math.floor(n)` of an int is `n`.
                    Some(_) if matches!(v, Var::SymInt(..)) => Some(v.clone()),
                    Some(round) => self.sym_float_to_int(&format!("math.{name}"), f, v, round)?,
                    None => None,
                };
                if let Some(r) = r {
                    return Ok(r);
                }
            }
        }
        // Python code outside the graph that needs a symbolic size's value gets it specialized
        // (guarded to keep it), as torch's `guard_int`.
        let (args, kwargs) = if module == "math" || is_torch || module == "builtins" {
            self.specialize_args(args, kwargs)?
        } else {
            (args, kwargs)
        };
        if module == "math" && !has_tensor {
            if let Some(r) = self.fold(f, &args, &kwargs)? {
                return Ok(r);
            }
        }
        if is_torch && !has_tensor {
            return self.torch_at_trace_time(f, &module, &name, &args, &kwargs);
        }
        if let Some(r) = self.enum_member_by_value(f, &args, &kwargs)? {
            return Ok(r);
        }
        // `sys.exc_info()` / `sys.exception()` in traced code: the exception a traced `except`
        // or `finally` is handling, else none (as torch.compile answers from its own stack of
        // handled exceptions; `ExitStack.__exit__` reads it).
        let sys = py.import("sys")?;
        let exc_info = f.is(sys.getattr("exc_info")?);
        let exception = sys.getattr("exception").map(|e| f.is(&e)).unwrap_or(false);
        if (exc_info || exception) && args.is_empty() && kwargs.is_empty() {
            let exc = match &self.tx.handling {
                None => None,
                Some(h) if h.as_py(py).is_some_and(|o| o.is_none()) => None,
                Some(h) => Some(h.as_py(py).ok_or_else(|| {
                    TraceError::unsupported("sys.exc_info() of an exception with no value")
                })?),
            };
            return Ok(match (exc, exception) {
                (None, true) => Var::none(py),
                (None, false) => {
                    Var::Tuple(vec![Var::none(py), Var::none(py), Var::none(py)].into())
                }
                (Some(e), true) => Var::Py(e.unbind(), None),
                (Some(e), false) => Var::Tuple(
                    vec![
                        Var::Py(e.get_type().into_any().unbind(), None),
                        Var::Py(e.clone().unbind(), None),
                        Var::Py(e.getattr("__traceback__")?.unbind(), None),
                    ]
                    .into(),
                ),
            });
        }
        // `types.MethodType(func, obj)`: `func` bound to `obj`, called with it first
        // (`ExitStack` binds a context manager's `__exit__` so).
        if f.is(py.import("types")?.getattr("MethodType")?) && kwargs.is_empty() {
            if let [func, obj] = args.as_slice() {
                return Ok(Var::BoundMethod {
                    func: Box::new(func.clone()),
                    self_: Box::new(obj.clone()),
                });
            }
        }
        if let Some(r) = self.construct_exception(f, &args, &kwargs)? {
            return Ok(r);
        }
        if let Some(r) = self.construct_model_output(f, &args, &kwargs)? {
            return Ok(r);
        }
        if let Some(r) = self.construct_object(f, src.as_ref(), &args, &kwargs)? {
            return Ok(r);
        }
        if let Some(r) = self.call_user_callable(f, src.as_ref(), &args, &kwargs)? {
            return Ok(r);
        }
        let what = if module.is_empty() {
            name.clone()
        } else {
            format!("{module}.{name}")
        };
        let is_function = f
            .get_type()
            .name()
            .map(|n| n == "function")
            .unwrap_or(false);
        if !is_function {
            return Err(TraceError::unsupported(format!("call to {what}")));
        }
        Err(TraceError::unsupported(format!(
            "call to the user function {what} ({})",
            self.why_not_inlined(f)
        )))
    }

    /// A torch callable called without a tensor argument (and not a factory): run now if it is
    /// known to be pure or its global-state read is guarded (`trace_time.rs`), else a graph
    /// break, so that it runs natively on every call (an optimizer step, `torch.manual_seed`,
    /// RNG state changes: effects that must not happen once, at trace time).
    fn torch_at_trace_time(
        &mut self,
        f: &Bound<'_, PyAny>,
        module: &str,
        name: &str,
        args: &[Var],
        kwargs: &[(String, Var)],
    ) -> Result<Var, TraceError> {
        let py = self.tx.py;
        let kind = trace_time_kind(py, f);
        let refuse = || {
            let qualname: String = f
                .getattr(intern!(py, "__qualname__"))
                .ok()
                .and_then(|q| q.extract().ok())
                .unwrap_or_else(|| name.to_string());
            TraceError::unsupported(format!("call to {module}.{qualname}"))
        };
        let Some((kind, path)) = kind else {
            return Err(refuse());
        };
        match kind {
            TraceTime::Pure => self.fold(f, args, kwargs)?.ok_or_else(refuse),
            TraceTime::Guarded => {
                if !args.is_empty() || !kwargs.is_empty() {
                    return Err(refuse());
                }
                let r = self.fold(f, args, kwargs)?.ok_or_else(refuse)?;
                if EMPTY_ONLY.contains(&path)
                    && !r.as_py(py).is_some_and(|v| v.len().is_ok_and(|n| n == 0))
                {
                    return Err(refuse());
                }
                let origin = self.tx.guards.origin.clone();
                match guard_via(py, path, f) {
                    GuardVia::Global(module, flag) => {
                        let value = module.getattr(flag)?;
                        self.tx
                            .guards
                            .global
                            .module_attr(&module, flag, &value, origin);
                    }
                    GuardVia::Call(query) => {
                        let value = query.call0()?;
                        self.tx
                            .guards
                            .global
                            .value(&query, &value, &format!("{path}()"), origin);
                    }
                }
                Ok(r)
            }
            TraceTime::Autocast => {
                use crate::output::{AmpDevice, AMP_DEVICES};
                let device: Option<String> = match args.first() {
                    Some(a) => a.as_py(py).and_then(|d| d.extract().ok()),
                    None => None,
                };
                // The device asked about: named by the function (`*_cpu_*`) or its argument;
                // torch's argument-less forms ask about CUDA.
                let traced = if path.contains("cpu") {
                    Some(AmpDevice::Cpu)
                } else {
                    match &device {
                        Some(d) => AmpDevice::of(d),
                        None => Some(AmpDevice::Cuda),
                    }
                };
                if path.contains("_is_any_") {
                    // Any device: a traced region, or another device's (guarded) state.
                    if self.tx.output.any_autocast() {
                        return Ok(Var::py_const(py, true));
                    }
                    let other = self.fold(f, args, kwargs)?.ok_or_else(refuse)?;
                    let other = other
                        .as_py(py)
                        .is_some_and(|v| v.is_truthy().unwrap_or(true));
                    let is_enabled = py.import("torch")?.getattr("is_autocast_enabled")?;
                    let mut real_traced = false;
                    for d in AMP_DEVICES {
                        real_traced |= is_enabled.call1((d,))?.is_truthy()?;
                    }
                    if other && real_traced {
                        // A traced device the region switched off is on outside it: whether
                        // another device makes it true is not known.
                        return Err(refuse());
                    }
                    return Ok(Var::py_const(py, other));
                }
                if let Some(d) = traced {
                    let (enabled, dtype) = self.tx.output.autocast(d);
                    if path.contains("enabled") {
                        return Ok(Var::py_const(py, enabled));
                    }
                    if enabled {
                        return Ok(Var::Py(dtype, None));
                    }
                }
                // Another device (its state is covered by the autocast guard of every entry),
                // or a traced device's dtype outside a region: a global setting, guarded.
                let r = self.fold(f, args, kwargs)?.ok_or_else(refuse)?;
                if path.contains("dtype") {
                    let value = r.as_py(py).ok_or_else(refuse)?;
                    let origin = self.tx.guards.origin.clone();
                    let label = match &device {
                        Some(d) => format!("{path}({d:?})"),
                        None => format!("{path}()"),
                    };
                    let query = match &device {
                        Some(d) => py
                            .import("functools")?
                            .getattr("partial")?
                            .call1((f, d.as_str()))?,
                        None => f.clone(),
                    };
                    self.tx.guards.global.value(&query, &value, &label, origin);
                }
                Ok(r)
            }
        }
    }

    /// `torch.no_grad()`, `torch.enable_grad()` and `torch.set_grad_enabled(b)` become grad-mode
    /// regions of the graph instead of being run (constructing `set_grad_enabled` changes the
    /// global mode, which tracing must never do for real).
    pub(super) fn grad_mode_call(
        &mut self,
        f: &Bound<'_, PyAny>,
        args: &[Var],
    ) -> Result<Option<Var>, TraceError> {
        let py = self.tx.py;
        let torch = py.import("torch")?;
        if f.is(&torch.getattr("no_grad")?) && args.is_empty() {
            return Ok(Some(Var::GradMode {
                enabled: false,
                prev: None,
            }));
        }
        // The traced region's grad mode, not the tracer's own.
        if f.is(&torch.getattr("is_grad_enabled")?) && args.is_empty() {
            return Ok(Some(Var::py_const(py, self.tx.output.grad_enabled())));
        }
        if f.is(&torch.getattr("enable_grad")?) && args.is_empty() {
            return Ok(Some(Var::GradMode {
                enabled: true,
                prev: None,
            }));
        }
        let set_grad_enabled = torch.getattr("set_grad_enabled")?;
        // `set_grad_enabled(b).clone()`: the context factory of a `@torch.set_grad_enabled(b)`
        // wrapper (torch/utils/_contextlib.py), called bound or through the class. It constructs
        // `set_grad_enabled(b)` again, which is answered as below.
        let cloned = clone_owner(py, f, &set_grad_enabled, args)?;
        let cloned_mode = match cloned {
            Some(owner) if owner.is_instance(&set_grad_enabled)? => {
                Some(Var::py_const(py, owner.getattr("mode")?.extract::<bool>()?))
            }
            _ => None,
        };
        if cloned_mode.is_some() || f.is(&set_grad_enabled) {
            let mode = match (&cloned_mode, args) {
                (Some(m), _) => m,
                (None, [mode]) => mode,
                _ => {
                    return Err(TraceError::unsupported(
                        "torch.set_grad_enabled with these arguments",
                    ))
                }
            };
            let enabled: bool = mode
                .as_py(py)
                .ok_or_else(|| TraceError::unsupported("a grad mode that is a tensor"))?
                .extract()?;
            let prev = self.tx.output.grad_enabled();
            self.tx.output.set_grad_mode(py, enabled)?;
            return Ok(Some(Var::GradMode {
                enabled,
                prev: Some(prev),
            }));
        }
        Ok(None)
    }

    /// `torch.inference_mode(mode=True)` and the `clone` of one (the context factory of a
    /// `@torch.inference_mode(...)` wrapper) become inference-mode contexts, entered as graph
    /// regions; `torch.is_inference_mode_enabled()` inside a traced region is the region's mode.
    fn inference_mode_call(
        &mut self,
        f: &Bound<'_, PyAny>,
        args: &[Var],
        kwargs: &[(String, Var)],
    ) -> Result<Option<Var>, TraceError> {
        let py = self.tx.py;
        let torch = py.import("torch")?;
        if f.is(&torch.getattr("is_inference_mode_enabled")?) && args.is_empty() {
            // Outside any region the trace changed, the entry state: folded under a guard by
            // the trace-time table.
            return Ok(self
                .tx
                .output
                .inference_mode()
                .map(|m| Var::py_const(py, m)));
        }
        let cls = torch.getattr("inference_mode")?;
        let owner = clone_owner(py, f, &cls, args)?;
        if let Some(owner) = owner {
            if owner.is_instance(&cls)? {
                let mode = owner.getattr("mode")?.extract::<bool>()?;
                return Ok(Some(Var::InferenceMode { mode }));
            }
            return Ok(None);
        }
        if !f.is(&cls) {
            return Ok(None);
        }
        let mode = match (args, kwargs) {
            ([], []) => None,
            ([m], []) => Some(m),
            ([], [(k, m)]) if k == "mode" => Some(m),
            _ => {
                return Err(TraceError::unsupported(
                    "torch.inference_mode with these arguments",
                ))
            }
        };
        let mode = match mode {
            None => true,
            Some(m) => match m.as_py(py) {
                Some(b) if b.is_instance_of::<pyo3::types::PyBool>() => b.extract::<bool>()?,
                // `torch.inference_mode(fn)`: a decorator made in the frame.
                _ => {
                    return Err(TraceError::unsupported(
                        "torch.inference_mode applied to a function in the frame",
                    ))
                }
            },
        };
        Ok(Some(Var::InferenceMode { mode }))
    }

    /// `torch.autocast(device_type, dtype=None, enabled=True, cache_enabled=None)` (and
    /// `torch.amp.autocast`, `torch.cpu.amp.autocast`, `torch.cuda.amp.autocast`) for the CPU or CUDA: a context whose
    /// region becomes part of the graph. Constructing one changes no state; entering it does.
    pub(super) fn autocast_call(
        &mut self,
        f: &Bound<'_, PyAny>,
        args: &[Var],
        kwargs: &[(String, Var)],
    ) -> Result<Option<Var>, TraceError> {
        let py = self.tx.py;
        let torch = py.import("torch")?;
        let generic = torch.getattr("autocast")?;
        let cpu = torch.getattr("cpu")?.getattr("amp")?.getattr("autocast")?;
        let cuda = torch.getattr("cuda")?.getattr("amp")?.getattr("autocast")?;
        // The per-device classes take no device argument.
        let is_cpu_class = f.is(&cpu) || f.is(&cuda);
        if !f.is(&generic) && !is_cpu_class {
            return Ok(None);
        }
        let names: &[&str] = if is_cpu_class {
            &["enabled", "dtype", "cache_enabled"]
        } else {
            &["device_type", "dtype", "enabled", "cache_enabled"]
        };
        // Bind positional and keyword arguments to parameter names, then read their values.
        let mut bound: Vec<(&str, &Var)> = Vec::new();
        for (i, a) in args.iter().enumerate() {
            let Some(n) = names.get(i) else {
                return Err(TraceError::unsupported(
                    "torch.autocast with these arguments",
                ));
            };
            bound.push((n, a));
        }
        for (k, a) in kwargs {
            let Some(n) = names.iter().find(|n| **n == k.as_str()) else {
                return Err(TraceError::unsupported(format!(
                    "torch.autocast with the argument {k}"
                )));
            };
            bound.push((n, a));
        }
        let mut vals: Vec<(&str, Bound<'_, PyAny>)> = Vec::new();
        for (n, a) in bound {
            let v = a
                .as_py(py)
                .ok_or_else(|| TraceError::unsupported("torch.autocast with a tensor argument"))?;
            vals.push((n, v));
        }
        // Torch's constructor decides the state (the default dtype, CUDA autocast switched
        // off with a warning where no GPU is usable, unsupported dtypes switched off): it
        // changes no state, so it runs now and the region traces what it decided.
        let kw = PyDict::new(py);
        for (n, v) in &vals {
            kw.set_item(*n, v)?;
        }
        let instance = f.call((), Some(&kw))?;
        Ok(Some(autocast_var(py, &instance, "torch.autocast")?))
    }

    /// Inlines user functions, bound methods and `functools.partial` objects; `None` if `f` is
    /// none of these.
    pub(super) fn call_user_callable(
        &mut self,
        f: &Bound<'_, PyAny>,
        src: Option<&crate::source::Source>,
        args: &[Var],
        kwargs: &[(String, Var)],
    ) -> Result<Option<Var>, TraceError> {
        let py = self.tx.py;
        let f = f.clone().unbind().into_bound(py);
        let types = py.import("types")?;
        if f.is_instance(&types.getattr("FunctionType")?)? {
            if !self.inlinable(&f)? {
                return Ok(None);
            }
            let fv = self.function_of(&f, src)?;
            return Ok(Some(self.inline_call(
                &fv,
                args.to_vec(),
                kwargs.to_vec(),
            )?));
        }
        if f.is_instance(&types.getattr("MethodType")?)? {
            let func = f.getattr("__func__")?;
            let this = f.getattr("__self__")?;
            let this = self.tx.wrap(this, src.map(|s| s.attr(py, "__self__")))?;
            let func = self.tx.wrap(func, src.map(|s| s.attr(py, "__func__")))?;
            let mut all = vec![this];
            all.extend(args.iter().cloned());
            return Ok(Some(self.call(func, all, kwargs.to_vec())?));
        }
        if f.is_instance(&py.import("functools")?.getattr("partial")?)? {
            let func = self
                .tx
                .wrap(f.getattr("func")?, src.map(|s| s.attr(py, "func")))?;
            let pargs = self
                .tx
                .wrap(f.getattr("args")?, src.map(|s| s.attr(py, "args")))?;
            let pkw = self
                .tx
                .wrap(f.getattr("keywords")?, src.map(|s| s.attr(py, "keywords")))?;
            let mut all = pargs
                .items(py)
                .ok_or_else(|| TraceError::internal("partial args"))?;
            all.extend(args.iter().cloned());
            // A constant `keywords` dict (a partial made at trace time) is a `Var::Py`.
            let mut kw: Vec<(String, Var)> = self::functools::dict_pairs(py, &pkw)?;
            for (k, v) in kwargs {
                kw.retain(|(k2, _)| k2 != k);
                kw.push((k.clone(), v.clone()));
            }
            return Ok(Some(self.call(func, all, kw)?));
        }
        // An instance of a class whose `__call__` is a Python function (torchvision's
        // `LevelMapper`, held by a module): that method, bound to it, is what the call runs.
        if !f.is_instance_of::<pyo3::types::PyType>() {
            if let Ok(call) = f.get_type().getattr(intern!(py, "__call__")) {
                if call.is_instance(&types.getattr("FunctionType")?)? {
                    let bound = f.getattr(intern!(py, "__call__"))?;
                    if bound.is_instance(&types.getattr("MethodType")?)? {
                        let src = src.map(|s| s.attr(py, "__call__"));
                        return self.call_user_callable(&bound, src.as_ref(), args, kwargs);
                    }
                }
            }
        }
        Ok(None)
    }

    /// User code is inlined; torch's and the standard library's Python functions are not.
    pub(super) fn inlinable(&self, f: &Bound<'_, PyAny>) -> Result<bool, TraceError> {
        let py = self.tx.py;
        let filename: String = f.getattr("__code__")?.getattr("co_filename")?.extract()?;
        // `contextlib.suppress` and `nullcontext` are plain context managers: inlined, so a
        // `with` over one stays in the graph (and `suppress` catches traced exceptions).
        if filename.ends_with("/contextlib.py") {
            let qualname: String = f.getattr("__qualname__")?.extract()?;
            return Ok(
                ["suppress.", "nullcontext.", "ExitStack.", "_BaseExitStack."]
                    .iter()
                    .any(|p| qualname.starts_with(p)),
            );
        }
        // The comparisons `functools.total_ordering` adds to a class (`_gt_from_lt`, ...) call
        // the class's own `__lt__`/`__le__`/... and `==`: inlined, so `sorted`, `min` and `<=`
        // over such objects stay in the graph.
        if filename.ends_with("/functools.py") {
            let name: String = f.getattr("__code__")?.getattr("co_name")?.extract()?;
            let ops = ["lt", "le", "gt", "ge"];
            if let Some((a, b)) = name.strip_prefix('_').and_then(|n| n.split_once("_from_")) {
                if ops.contains(&a) && ops.contains(&b) {
                    return Ok(true);
                }
            }
        }
        // A function decorated with a grad-mode object (`@torch.no_grad()`, `@torch.enable_grad()`,
        // `@torch.set_grad_enabled(b)`) is torch's wrapper `decorate_context`, which runs
        // `with ctx_factory(): return func(*args, **kwargs)`: inlined, so the region and the
        // decorated function join the caller's graph (`ctx_factory` is the decorator object's
        // `clone`, answered as a grad-mode context by `grad_mode_call`). The wrapper's `with`
        // restores the mode on a traced exception as it does natively.
        if filename.ends_with("/torch/utils/_contextlib.py") {
            // The code's own name: `functools.wraps` gave the wrapper the decorated function's.
            let qualname: String = f.getattr("__code__")?.getattr("co_qualname")?.extract()?;
            return Ok(qualname == "context_decorator.<locals>.decorate_context"
                || qualname == "_DecoratorContextManager.clone");
        }
        if filename.ends_with("/torch/nn/functional.py") {
            let name: String = f.getattr("__code__")?.getattr("co_name")?.extract()?;
            return Ok(nn_functional::inlined_code(&filename, &name));
        }
        // torch.nn's own module code is inlined like user code (its helpers call torch ops), and
        // so are the mapping mixins of `collections.abc` (`Mapping.get` on a user mapping).
        Ok((!crate::skipfiles::is_skipped(py, &filename)
            || filename.contains("/torch/nn/modules/")
            || nn_utils_traced(&filename)
            || self::distributions::is_distributions_file(&filename)
            || optim::traced_file(&filename)
            || filename.ends_with("/_collections_abc.py")
            || filename == "<frozen _collections_abc>")
            && (!filename.starts_with("<frozen") || filename == "<frozen _collections_abc>"))
    }

    /// Why `inlinable` refused the Python function `f`: the library its code belongs to, whose
    /// functions run natively (a wrapper made by `functools.wraps` carries the wrapped
    /// function's name, so the code's own name and file are said too when they differ).
    fn why_not_inlined(&self, f: &Bound<'_, PyAny>) -> String {
        let py = self.tx.py;
        let code = f.getattr("__code__").ok();
        let attr = |o: &Bound<'_, PyAny>, a: &str| -> String {
            o.getattr(a)
                .and_then(|v| v.extract::<String>())
                .unwrap_or_default()
        };
        let (file, code_name) = match &code {
            Some(c) => (attr(c, "co_filename"), attr(c, "co_qualname")),
            None => (String::new(), String::new()),
        };
        let owner = match crate::skipfiles::library_of(py, &file) {
            Some(lib) => format!("code of {lib}"),
            None if file.starts_with("<frozen") => format!("frozen code {file}"),
            None => "library code".into(),
        };
        let qualname = attr(f, "__qualname__");
        if !code_name.is_empty() && code_name != qualname {
            let short = file.rsplit('/').next().unwrap_or(&file);
            format!("a wrapper, {code_name} in {short}: {owner}, not traced")
        } else {
            format!("{owner}, not traced")
        }
    }

    /// Calls `f` for real on known Python values (pure functions only).
    pub(super) fn fold(
        &mut self,
        f: &Bound<'_, PyAny>,
        args: &[Var],
        kwargs: &[(String, Var)],
    ) -> Result<Option<Var>, TraceError> {
        let py = self.tx.py;
        // An iterator or generator would be consumed at trace time, not by the program.
        if args
            .iter()
            .any(|a| matches!(a, Var::Py(o, _) if o.bind(py).hasattr("__next__").unwrap_or(false)))
        {
            return Ok(None);
        }
        // A mutable container read from the frame is guarded by identity only: a result
        // computed from its contents would be stale when they change (`len(QUEUE)`).
        if args.iter().chain(kwargs.iter().map(|(_, v)| v)).any(|a| {
            matches!(a, Var::Py(o, Some(_))
                if crate::interp::vars::is_mutable_container(py, o.bind(py)))
        }) {
            return Ok(None);
        }
        // `str`/`repr` read an object's text only: what it depends on is guarded.
        let text = ["str", "repr"].iter().any(|n| {
            py.import("builtins")
                .and_then(|b| b.getattr(*n))
                .is_ok_and(|b| b.is(f))
        });
        for a in args.iter().chain(kwargs.iter().map(|(_, v)| v)) {
            if text {
                self.tx.realize_text(a);
            } else {
                self.tx.realize_identity(a);
            }
        }
        let vals: Option<Vec<_>> = args.iter().map(|a| a.as_py(py)).collect();
        let Some(vals) = vals else { return Ok(None) };
        let kw = PyDict::new(py);
        for (k, v) in kwargs {
            let Some(v) = v.as_py(py) else {
                return Ok(None);
            };
            kw.set_item(k, v)?;
        }
        let r = match f.call(PyTuple::new(py, vals)?, Some(&kw)) {
            Ok(r) => r,
            Err(e) => {
                let fallback = TraceError::UserError {
                    call: f.repr().map(|r| r.to_string()).unwrap_or_default(),
                    message: e.to_string(),
                    error: e.clone_ref(py),
                };
                return Err(self.python_raised(e, fallback));
            }
        };
        Ok(Some(self.tx.wrap(r, None)?))
    }
}

/// The mode object whose `cls.clone` `f` is, called bound (`mode.clone()`) or through the class
/// (`cls.clone(mode)`): torch's context decorators (torch/utils/_contextlib.py) make a fresh
/// context per call this way. `None` for any other call.
fn clone_owner<'py>(
    py: Python<'py>,
    f: &Bound<'py, PyAny>,
    cls: &Bound<'py, PyAny>,
    args: &[Var],
) -> PyResult<Option<Bound<'py, PyAny>>> {
    let clone = cls.getattr("clone")?;
    Ok(match (f.getattr("__func__"), f.getattr("__self__")) {
        (Ok(func), Ok(owner)) if func.is(&clone) && args.is_empty() => Some(owner),
        _ if f.is(&clone) => match args {
            [Var::Py(owner, _)] => Some(owner.bind(py).clone()),
            _ => None,
        },
        _ => None,
    })
}

pub(super) fn contains_tensor(v: &Var) -> bool {
    crate::interp::nested::any_nested(v, &|i| matches!(i, Var::Tensor(_)))
}

/// The traced context of a constructed `torch.autocast` object (`what` names it in a refusal):
/// its device (CPU or CUDA), whether it enables autocast and its dtype.
pub(super) fn autocast_var(
    py: Python<'_>,
    instance: &Bound<'_, PyAny>,
    what: &str,
) -> Result<Var, TraceError> {
    let name: String = instance.getattr("device")?.extract()?;
    let Some(device) = crate::output::AmpDevice::of(&name) else {
        return Err(TraceError::unsupported(format!(
            "{what} for the device '{name}' (only 'cpu' and 'cuda' are traced)"
        )));
    };
    let enabled = instance.getattr("_enabled")?.is_truthy()?;
    let dtype = instance.getattr("fast_dtype")?;
    let torch = py.import("torch")?;
    if enabled && !dtype.is(torch.getattr("bfloat16")?) && !dtype.is(torch.getattr("float16")?) {
        return Err(TraceError::unsupported(format!(
            "{what} with a dtype other than bfloat16 or float16"
        )));
    }
    Ok(Var::Autocast {
        device,
        enabled,
        dtype: dtype.unbind(),
    })
}

/// `torch.nn.utils` helpers written over tensor methods and `param.data` that torch.compile
/// inlines, so they stay in the graph instead of breaking it: `parameters_to_vector` /
/// `vector_to_parameters` (a `for` over the parameters, `view`/`cat`, and `param.data = ...`,
/// traced as a metadata change since session 21) and their device check; and the
/// parametrizations (`weight_norm`, `spectral_norm`, `register_parametrization`): a
/// parametrized module's `weight` is a property whose getter runs them, traced where it is
/// read (session 31, `module_attr`).
pub(crate) fn nn_utils_traced(filename: &str) -> bool {
    NN_UTILS_TRACED
        .iter()
        .any(|m| filename.ends_with(&format!("/{}.py", m.replace('.', "/"))))
}

/// The modules of [`nn_utils_traced`]'s files: their functions are no torch callables.
const NN_UTILS_TRACED: [&str; 3] = [
    "torch.nn.utils.convert_parameters",
    "torch.nn.utils.parametrize",
    "torch.nn.utils.parametrizations",
];

/// Calls into the autograd engine (`torch.autograd.grad`, `torch.autograd.backward` and the
/// `torch.autograd.functional` helpers): they walk the autograd graph of real tensors, which a
/// `meta` tensor made at trace time does not have, so they cannot be graph nodes. The frame
/// breaks before them and they run natively on the graph's outputs (whose autograd history the
/// backend records), as torch.compile breaks with `trace_autograd_ops` off (its default).
/// Before this, `torch.autograd.grad` was traced as a node whose meta run failed ("one of the
/// differentiated Tensors appears to not have been used"), taken for the user's error.
/// What the reason of a break at an autograd engine call with `create_graph=True` says: the
/// graph before it has results that are differentiated twice (`compile.rs` reads it).
pub(crate) const CREATE_GRAPH_BREAK: &str =
    "with create_graph=True: its results are differentiated again";

fn autograd_engine_call(module: &str, name: &str) -> Option<String> {
    let engine = (module == "torch.autograd" || module == "torch.autograd.__init__")
        && matches!(name, "grad" | "backward");
    let functional = module == "torch.autograd.functional";
    (engine || functional).then(|| {
        format!(
            "call to {module}.{name} (the autograd engine runs on real tensors, outside the \
             graph, as torch.compile breaks here)"
        )
    })
}
