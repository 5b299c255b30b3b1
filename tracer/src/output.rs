//! The output graph under construction: the fx graph, where its inputs come from, and the
//! metadata of every tensor value (an fx `TensorMeta` plus a `meta`-device tensor used to infer
//! the next op's result by running it on metadata only).

use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};

use fx::{Arg, DType, Device, Dim, Graph, NodeId, NodeMeta, Target, TensorMeta};

use crate::error::TraceError;
use crate::source::Source;

/// A tensor value in the traced program.
#[derive(Clone)]
pub struct TensorValue {
    pub node: NodeId,
    pub meta: TensorMeta,
}

/// The graph node that switches autocast on one device (`set_autocast(device, enabled, dtype)`).
pub const AUTOCAST_TARGET: &str = "torchferro._amp.set_autocast";
/// The graph nodes that enter and leave a `torch.inference_mode(mode)` region.
pub const INFERENCE_ENTER_TARGET: &str = "torchferro._amp.enter_inference_mode";
pub const INFERENCE_EXIT_TARGET: &str = "torchferro._amp.exit_inference_mode";
/// The graph node that switches torch's default dtype (`torch.set_default_dtype` in the traced
/// code, as torch.compile puts it in its graph).
pub const DEFAULT_DTYPE_TARGET: &str = "torch.set_default_dtype";

/// The devices whose autocast regions are traced, in [`AmpDevice`] order.
pub const AMP_DEVICES: [&str; 2] = ["cpu", "cuda"];

/// A device whose autocast regions are traced (an index into [`AMP_DEVICES`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AmpDevice {
    Cpu = 0,
    Cuda = 1,
}

impl AmpDevice {
    /// The traced device of a `device_type` (`None`: autocast on it is not traced).
    pub fn of(device_type: &str) -> Option<AmpDevice> {
        match device_type {
            "cpu" => Some(AmpDevice::Cpu),
            "cuda" => Some(AmpDevice::Cuda),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        AMP_DEVICES[self as usize]
    }
}

/// An inference-mode level the traced code entered and has not left yet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InferenceLevel {
    /// The `mode` argument of `torch.inference_mode(mode)`.
    pub mode: bool,
    /// Grad mode when it was entered (leaving the level restores it).
    pub prev_grad: bool,
    /// Inference mode when it was entered (`None`: the frame's entry state).
    pub prev_inference: Option<bool>,
}

pub struct OutputGraph {
    pub graph: Graph,
    /// Source of each placeholder, by placeholder index.
    pub input_sources: Vec<Source>,
    /// The live input values at compile time, handed to Python backends as example inputs.
    pub example_inputs: Vec<Py<PyAny>>,
    /// The callable behind each `Target::Function` node, by node.
    pub callables: Vec<(NodeId, Py<PyAny>)>,
    /// The user's call stack of each node, for tracebacks of errors it raises at run time.
    pub sites: crate::traceback::Sites,
    /// A `meta` tensor for each tensor node, made on demand.
    metas: std::collections::HashMap<NodeId, Py<PyAny>>,
    /// Torch's global state while tracing, for native inference.
    infer_ctx: fx::InferCtx,
    /// In-place results, to the tensor they mutated (`x.add_(1)` is `x`).
    alias: std::collections::HashMap<NodeId, NodeId>,
    /// Autocast at this point of the traced code on each of [`AMP_DEVICES`]: enabled, and the
    /// dtype (a `torch.dtype`).
    autocast: [(bool, Py<PyAny>); 2],
    /// Which of [`AMP_DEVICES`] had autocast enabled around the frame (the graph starts inside
    /// those regions; every entry is guarded on the autocast state).
    entry_autocast: [bool; 2],
    /// Inference mode at this point of the traced code, where the trace changed it (`None`:
    /// the frame's entry state), and the levels the trace entered and has not left.
    inference: Option<bool>,
    pub inference_levels: Vec<InferenceLevel>,
    /// Dynamic shapes: the size symbols of the inputs and the relations the trace relied on.
    pub shapes: crate::guards::ShapeEnv,
    /// The default dtype the traced code set (a `torch.dtype`), once it set one: ops after it
    /// read it instead of the entry state, and their metadata is inferred under it.
    traced_default_dtype: Option<Py<PyAny>>,
}

impl OutputGraph {
    pub fn new() -> OutputGraph {
        let infer_ctx = Python::attach(|py| fx::InferCtx {
            grad_enabled: crate::guards::grad_enabled(py),
            default_dtype: py
                .import("torch")
                .and_then(|t| t.getattr("get_default_dtype")?.call0())
                .ok()
                .and_then(|d| dtype_of(py, &d).ok())
                .unwrap_or(DType::Float32),
            default_device: Device::cpu(),
        });
        let autocast = Python::attach(|py| {
            AMP_DEVICES.map(|d| {
                py.import("torchferro._amp")
                    .and_then(|m| m.getattr("state")?.call1((d,)))
                    .and_then(|s| s.extract::<(bool, Py<PyAny>)>())
                    .unwrap_or_else(|_| (false, py.None()))
            })
        });
        OutputGraph {
            infer_ctx,
            entry_autocast: [autocast[0].0, autocast[1].0],
            autocast,
            inference: None,
            inference_levels: Vec::new(),
            alias: Default::default(),
            graph: Graph::new(),
            input_sources: Vec::new(),
            example_inputs: Vec::new(),
            callables: Vec::new(),
            sites: Default::default(),
            metas: Default::default(),
            shapes: Default::default(),
            traced_default_dtype: None,
        }
    }

    /// Drops an unused node and what the side tables hold for it: the graph reuses a removed
    /// node's id for the next node, which must not inherit its callable (a folded
    /// `torch.is_floating_point(x)` followed by `torch.relu(x)` ran as the former), meta tensor,
    /// call site or alias.
    pub fn remove_node(&mut self, node: NodeId) {
        self.graph.remove(node);
        self.callables.retain(|(n, _)| *n != node);
        self.metas.remove(&node);
        self.alias.remove(&node);
        self.sites.nodes.remove(&node);
    }

    /// The source of an earlier input that is the very object `value` (a tensor passed twice,
    /// `f(x, x)`): the two must be one placeholder, or `a is b` and in-place writes through one
    /// seen by the other would differ from eager.
    pub fn input_of_object(&self, source: &Source, value: &Bound<'_, PyAny>) -> Option<Source> {
        self.input_sources
            .iter()
            .zip(&self.example_inputs)
            .find(|(s, v)| v.bind(value.py()).is(value) && !s.same_as(source))
            .map(|(s, _)| s.clone())
    }

    /// The source of the graph input `node` (a placeholder), if it is one.
    pub fn source_of_input(&self, node: NodeId) -> Option<&Source> {
        let i = self.graph.placeholders().iter().position(|&p| p == node)?;
        self.input_sources.get(i)
    }

    /// The live value of the graph input `node` (a placeholder), if it is one.
    pub fn example_input(&self, node: NodeId) -> Option<&Py<PyAny>> {
        let i = self.graph.placeholders().iter().position(|&p| p == node)?;
        self.example_inputs.get(i)
    }

    /// The placeholder for the tensor at `source`, created once per source.
    pub fn input(
        &mut self,
        py: Python<'_>,
        source: &Source,
        value: &Bound<'_, PyAny>,
    ) -> Result<TensorValue, TraceError> {
        self.input_dynamic(py, source, value, &[])
    }

    /// [`OutputGraph::input`] where `dynamic[i]` is `Some((min, max))` for a dimension with a
    /// symbolic size (see `guards::shape_env::dynamic_dims`; the tensor is contiguous).
    pub fn input_dynamic(
        &mut self,
        py: Python<'_>,
        source: &Source,
        value: &Bound<'_, PyAny>,
        dynamic: &[Option<(i64, Option<i64>)>],
    ) -> Result<TensorValue, TraceError> {
        for (i, s) in self.input_sources.iter().enumerate() {
            if s.same_as(source) {
                let node = self.graph.placeholders()[i];
                let meta = self
                    .graph
                    .node(node)
                    .meta
                    .tensor()
                    .cloned()
                    .expect("tensor input");
                return Ok(TensorValue { node, meta });
            }
        }
        let mut meta = tensor_meta_of(py, value)?;
        if dynamic.iter().any(Option::is_some) {
            for (i, d) in dynamic.iter().enumerate() {
                if let (Some((min, max)), Some(hint)) = (d, meta.sizes[i].known()) {
                    let e = self.shapes.symbol_for(source, i, hint, *min, *max);
                    meta.sizes[i] = Dim::Sym(e);
                }
            }
            meta.strides = fx::infer::symbolic_contiguous(&meta.sizes);
        }
        let name = placeholder_name(source);
        let node = self
            .graph
            .placeholder(&name, NodeMeta::Tensor(meta.clone()));
        self.input_sources.push(source.clone());
        self.example_inputs.push(value.clone().unbind());
        Ok(TensorValue { node, meta })
    }

    /// Adds a call node and infers what it produces: natively in `fx::infer` when it knows the
    /// op, else by running the callable on meta tensors. Returns the node and its result
    /// metadata (a tensor, a tuple of tensors, or a Python value).
    pub fn call(
        &mut self,
        py: Python<'_>,
        name_hint: &str,
        target: Target,
        callable: Option<&Bound<'_, PyAny>>,
        args: Vec<Arg>,
        kwargs: Vec<(String, Arg)>,
    ) -> Result<(NodeId, NodeMeta), TraceError> {
        if fx::infer::has_symbolic_arg(&self.graph, &args, &kwargs) {
            return self.call_symbolic(py, name_hint, target, callable, args, kwargs);
        }
        // Native inference knows nothing of autocast: under it, torch itself decides the dtypes.
        if self.any_autocast() {
            return self.call_on_meta(py, name_hint, target, callable, args, kwargs);
        }
        match fx::infer_in(&self.infer_ctx, &self.graph, &target, &args, &kwargs) {
            Ok(meta) => {
                let node = self
                    .graph
                    .call(name_hint, target, args, kwargs, meta.clone());
                if let Some(c) = callable {
                    self.callables.push((node, c.clone().unbind()));
                }
                Ok((node, meta))
            }
            // Torch would reject these shapes or arguments: run the meta version for the exact
            // error (the frame then runs eagerly and raises it for real).
            Err(fx::InferError::Invalid(_)) | Err(fx::InferError::Unsupported) => {
                self.call_on_meta(py, name_hint, target, callable, args, kwargs)
            }
        }
    }

    /// A call with symbolic sizes among its inputs: inferred natively or not at all (meta
    /// tensors would bake the hints into the graph's metadata). The relations the inference
    /// relied on become the shape environment's guards.
    fn call_symbolic(
        &mut self,
        py: Python<'_>,
        name_hint: &str,
        target: Target,
        callable: Option<&Bound<'_, PyAny>>,
        args: Vec<Arg>,
        kwargs: Vec<(String, Arg)>,
    ) -> Result<(NodeId, NodeMeta), TraceError> {
        let hints = self.shapes.hints();
        let external = |point: &[i64]| -> Result<NodeMeta, fx::InferError> {
            self.eval_on_meta(py, &target, callable, &args, &kwargs, point, false)
        };
        let infer = |pinned: &[u32]| {
            fx::infer_symbolic(
                &self.infer_ctx,
                &self.graph,
                &target,
                &args,
                &kwargs,
                fx::infer::Symbols {
                    hints: &hints,
                    external: Some(&external),
                    pinned,
                },
            )
        };
        // Without a symbolic answer, the op's sizes specialize (torch's `guard_int`): every
        // symbol it reads is guarded equal to its hint, and its result is the static one.
        let mut pinned: Vec<u32> = Vec::new();
        let result = match infer(&[]) {
            Err(fx::InferError::Unsupported) => {
                let mut nodes = Vec::new();
                args.iter().for_each(|a| a.nodes(&mut nodes));
                kwargs.iter().for_each(|(_, a)| a.nodes(&mut nodes));
                for n in nodes {
                    pinned.extend(fx::infer::meta_symbols(&self.graph.node(n).meta));
                }
                pinned.sort_unstable();
                pinned.dedup();
                let mut result = infer(&pinned);
                // Pin only what the op needs: `layer_norm` over `[s0, s1, s2]` with a static
                // normalized shape needs `s2` alone, and pinning `s0`/`s1` too would recompile
                // a transformer block for every sequence length. Each symbol is unpinned in
                // turn while the answer stays verified (greedy: a minimal set, not the least).
                let mut k = 0;
                while result.is_ok() && k < pinned.len() {
                    let fewer: Vec<u32> = [&pinned[..k], &pinned[k + 1..]].concat();
                    match infer(&fewer) {
                        Ok(r) => {
                            pinned = fewer;
                            result = Ok(r);
                        }
                        Err(_) => k += 1,
                    }
                }
                result
            }
            other => other,
        };
        for &k in &pinned {
            if result.is_ok() {
                let hint = hints[k as usize];
                let origin = self.shapes.origin.clone();
                tracing::debug!(
                    target: "torchferro::dynamic",
                    "specialized {} = {hint}: {} has no symbolic shape rule here{}",
                    self.shapes.name(k),
                    target.name(),
                    origin.as_ref().map(|o| format!(" ({o})")).unwrap_or_default()
                );
                self.shapes.add_relation(
                    fx::Relation::new(
                        fx::SymExpr::symbol(k),
                        fx::RelOp::Eq,
                        fx::SymExpr::constant(hint),
                    ),
                    origin,
                );
            }
        }
        let (meta, relations) = match result {
            Ok(r) => r,
            Err(e) => {
                // An op whose result sizes depend on data (`torch.where(mask)`, `nms`) says so,
                // as with static sizes, whatever the symbolic rules made of it.
                let at_hints = match &e {
                    fx::InferError::Invalid(m) => Some(m.clone()),
                    fx::InferError::Unsupported => match self
                        .eval_on_meta(py, &target, callable, &args, &kwargs, &hints, false)
                    {
                        Err(fx::InferError::Invalid(m)) => Some(m),
                        _ => None,
                    },
                };
                if at_hints.as_deref().is_some_and(data_dependent_text) {
                    return Err(TraceError::unsupported(format!(
                        "{}: its result depends on tensor data",
                        target.name()
                    )));
                }
                return Err(TraceError::unsupported(format!(
                    "{} on symbolic sizes (dynamic shapes): {}",
                    target.name(),
                    match e {
                        fx::InferError::Invalid(m) => m,
                        fx::InferError::Unsupported => "no symbolic shape rule".into(),
                    }
                )));
            }
        };
        // A symbolic int in the result's sizes or the relations is used as a size.
        let mut read = fx::infer::meta_symbols(&meta);
        relations.iter().for_each(|r| read.extend(r.symbols()));
        self.shapes.size_like(&read, self.shapes.origin.clone());
        for r in relations {
            let origin = self.shapes.origin.clone();
            self.shapes.add_relation(r, origin);
        }
        // Autocast changes dtypes, never sizes: the symbolic sizes above stand, and torch
        // itself decides the dtypes, on meta tensors at the hints under the traced code's
        // autocast state (as `call_on_meta` for static sizes).
        let tensor_input = {
            let mut nodes = Vec::new();
            args.iter().for_each(|a| a.nodes(&mut nodes));
            kwargs.iter().for_each(|(_, a)| a.nodes(&mut nodes));
            nodes
                .iter()
                .any(|&n| matches!(self.graph.node(n).meta, NodeMeta::Tensor(_)))
        };
        // (Autocast casts tensor inputs: an op without one, a factory, is unchanged by it.)
        let meta = if self.any_autocast() && tensor_input {
            let at_hints = self
                .eval_on_meta(py, &target, callable, &args, &kwargs, &hints, true)
                .map_err(|e| {
                    TraceError::unsupported(format!(
                        "{} on symbolic sizes under autocast: {}",
                        target.name(),
                        match e {
                            fx::InferError::Invalid(m) => m,
                            fx::InferError::Unsupported => "no meta evaluation".into(),
                        }
                    ))
                })?;
            with_dtypes_of(meta, &at_hints).ok_or_else(|| {
                TraceError::unsupported(format!(
                    "{} on symbolic sizes under autocast: results of another structure",
                    target.name()
                ))
            })?
        } else {
            meta
        };
        let node = self
            .graph
            .call(name_hint, target, args, kwargs, meta.clone());
        if let Some(c) = callable {
            self.callables.push((node, c.clone().unbind()));
        }
        Ok((node, meta))
    }

    /// The result metadata of `target(args)` with the symbols at `point`, from meta tensors
    /// (for ops the native rules do not know; `fx::infer_symbolic` fits the symbolic sizes).
    /// `autocast`: under the traced code's autocast state (for the result dtypes).
    #[allow(clippy::too_many_arguments)]
    fn eval_on_meta<'py>(
        &self,
        py: Python<'py>,
        target: &Target,
        callable: Option<&Bound<'_, PyAny>>,
        args: &[Arg],
        kwargs: &[(String, Arg)],
        point: &[i64],
        autocast: bool,
    ) -> Result<NodeMeta, fx::InferError> {
        let unsupported = |_| fx::InferError::Unsupported;
        let mut node = |py: Python<'py>, n: NodeId| -> Result<Bound<'py, PyAny>, TraceError> {
            let m = fx::infer::evaluate_at(&self.graph.node(n).meta, point)
                .ok_or_else(|| TraceError::unsupported("a size out of range"))?;
            match &m {
                NodeMeta::Tensor(t) => make_meta_tensor(py, t),
                NodeMeta::Int(i) => Ok(i.into_pyobject(py)?.into_any()),
                _ => Err(TraceError::unsupported("a non-tensor node")),
            }
        };
        let py_args = args
            .iter()
            .map(|a| arg_to_py(py, a, &mut node))
            .collect::<Result<Vec<_>, _>>()
            .map_err(unsupported)?;
        let py_kwargs = PyDict::new(py);
        for (k, a) in kwargs {
            let v = arg_to_py(py, a, &mut node).map_err(unsupported)?;
            py_kwargs
                .set_item(k, v)
                .map_err(|_| fx::InferError::Unsupported)?;
        }
        let has_tensor = args
            .iter()
            .chain(kwargs.iter().map(|(_, a)| a))
            .any(has_node);
        if !has_tensor {
            return Err(fx::InferError::Unsupported);
        }
        let grad_now = crate::guards::grad_enabled(py);
        let set_grad = py
            .import("torch")
            .and_then(|t| t.getattr("_C")?.getattr("_set_grad_enabled"))
            .map_err(|_| fx::InferError::Unsupported)?;
        let switch = grad_now != self.infer_ctx.grad_enabled;
        if switch {
            let _ = set_grad.call1((self.infer_ctx.grad_enabled,));
        }
        let dtype_before = self.enter_traced_default_dtype(py);
        let result = match target {
            _ if autocast => {
                let (f, method) = match target {
                    Target::Function(_) => match callable {
                        Some(f) => (f.clone(), None),
                        None => return Err(fx::InferError::Unsupported),
                    },
                    Target::Method(name) => (py.None().into_bound(py), Some(name.as_str())),
                };
                let device = self.result_device(py, target, args, kwargs).to_string();
                py.import("torchferro._amp").and_then(|m| {
                    m.getattr("infer")?.call1((
                        f,
                        method,
                        PyTuple::new(py, &py_args)?,
                        py_kwargs.clone(),
                        device,
                        self.autocast_states(py)?,
                    ))
                })
            }
            Target::Function(_) => match callable {
                Some(f) => f.call(
                    PyTuple::new(py, &py_args).map_err(|_| fx::InferError::Unsupported)?,
                    Some(&py_kwargs),
                ),
                None => return Err(fx::InferError::Unsupported),
            },
            Target::Method(name) => match py_args.split_first() {
                Some((recv, rest)) => recv.call_method(
                    name.as_str(),
                    PyTuple::new(py, rest).map_err(|_| fx::InferError::Unsupported)?,
                    Some(&py_kwargs),
                ),
                None => return Err(fx::InferError::Unsupported),
            },
        };
        if switch {
            let _ = set_grad.call1((grad_now,));
        }
        self.leave_traced_default_dtype(py, dtype_before);
        // Torch refusing these sizes is an answer at this point (an invalid call).
        let result = result.map_err(|e| fx::InferError::Invalid(e.to_string()))?;
        let result = to_meta(py, result).map_err(|_| fx::InferError::Unsupported)?;
        let device = self.result_device(py, target, args, kwargs);
        node_meta_of(py, &result, &device).map_err(|_| fx::InferError::Unsupported)
    }

    /// Whether the graph has symbolic sizes (dynamic shapes).
    pub fn is_dynamic(&self) -> bool {
        !self.shapes.is_empty()
    }

    fn call_on_meta(
        &mut self,
        py: Python<'_>,
        name_hint: &str,
        target: Target,
        callable: Option<&Bound<'_, PyAny>>,
        args: Vec<Arg>,
        kwargs: Vec<(String, Arg)>,
    ) -> Result<(NodeId, NodeMeta), TraceError> {
        let meta_args = PyTuple::new(
            py,
            args.iter()
                .map(|a| self.meta_arg(py, a))
                .collect::<Result<Vec<_>, _>>()?,
        )?;
        let meta_kwargs = PyDict::new(py);
        for (k, a) in &kwargs {
            meta_kwargs.set_item(k, self.meta_arg(py, a)?)?;
        }
        let is_factory = matches!(&target, Target::Function(_))
            && !args
                .iter()
                .chain(kwargs.iter().map(|(_, a)| a))
                .any(has_node);
        if is_factory {
            // A factory runs on metadata only: never allocate the real tensor while tracing.
            meta_kwargs.set_item("device", "meta")?;
        }
        // Run under the grad mode the traced code is in at this point.
        let grad_now = crate::guards::grad_enabled(py);
        let switch = grad_now != self.infer_ctx.grad_enabled;
        let set_grad = py
            .import("torch")?
            .getattr("_C")?
            .getattr("_set_grad_enabled")?;
        if switch {
            set_grad.call1((self.infer_ctx.grad_enabled,))?;
        }
        let dtype_before = self.enter_traced_default_dtype(py);
        let result = if self.any_autocast() {
            let device = self.result_device(py, &target, &args, &kwargs).to_string();
            let (f, method) = match &target {
                Target::Function(_) => (
                    callable
                        .expect("function targets carry their callable")
                        .clone(),
                    None,
                ),
                Target::Method(name) => (py.None().into_bound(py), Some(name.as_str())),
            };
            py.import("torchferro._amp").and_then(|m| {
                m.getattr("infer")?.call1((
                    f,
                    method,
                    meta_args,
                    meta_kwargs,
                    device,
                    self.autocast_states(py)?,
                ))
            })
        } else {
            match &target {
                Target::Function(_) => callable
                    .expect("function targets carry their callable")
                    .call(meta_args, Some(&meta_kwargs)),
                Target::Method(name) => {
                    let recv = meta_args.get_item(0)?;
                    let rest = meta_args.get_slice(1, meta_args.len());
                    recv.call_method(name.as_str(), rest, Some(&meta_kwargs))
                }
            }
        };
        if switch {
            set_grad.call1((grad_now,))?;
        }
        self.leave_traced_default_dtype(py, dtype_before);
        let result = result.map_err(|e| {
            // Ops whose result depends on data (nonzero, unique, masked_select, item) cannot run
            // on metadata: that is a limit of tracing, not the user's error.
            let text = e.to_string();
            let data_dependent = e.is_instance_of::<pyo3::exceptions::PyNotImplementedError>(py)
                || data_dependent_text(&text);
            if data_dependent {
                TraceError::unsupported(format!(
                    "{}: its result depends on tensor data",
                    target.name()
                ))
            } else {
                TraceError::UserError {
                    call: target.name().to_string(),
                    message: text,
                    error: e,
                }
            }
        })?;
        let result = to_meta(py, result)?;
        let device = self.result_device(py, &target, &args, &kwargs);
        let meta = node_meta_of(py, &result, &device)?;
        let node = self
            .graph
            .call(name_hint, target, args, kwargs, meta.clone());
        if let Some(c) = callable {
            self.callables.push((node, c.clone().unbind()));
        }
        if matches!(meta, NodeMeta::Tensor(_) | NodeMeta::Tuple(_)) {
            self.metas.insert(node, result.unbind());
        }
        Ok((node, meta))
    }

    /// The device of a new result: the `device=` argument of factories and `.to()`, else the
    /// device of the first tensor argument, else CPU. (Meta tensors forget devices.)
    fn result_device(
        &self,
        py: Python<'_>,
        target: &Target,
        args: &[Arg],
        kwargs: &[(String, Arg)],
    ) -> Device {
        for (k, a) in kwargs {
            if k == "device" {
                if let Arg::Device(d) = a {
                    return d.clone();
                }
            }
        }
        if let Target::Method(m) = target {
            if m == "to" || m == "cuda" || m == "cpu" {
                if m == "cpu" {
                    return Device::cpu();
                }
                for a in args.iter().skip(1) {
                    if let Arg::Device(d) = a {
                        return d.clone();
                    }
                }
                if m == "cuda" {
                    return Device {
                        kind: "cuda".into(),
                        index: Some(0),
                    };
                }
            }
        }
        let _ = py;
        let mut nodes = Vec::new();
        args.iter().for_each(|a| a.nodes(&mut nodes));
        kwargs.iter().for_each(|(_, a)| a.nodes(&mut nodes));
        for n in nodes {
            if let NodeMeta::Tensor(t) = &self.graph.node(n).meta {
                return t.device.clone();
            }
        }
        Device::cpu()
    }

    /// Whether torch took the dtype of `node`'s result from the default dtype: a floating or
    /// complex result of a call with no floating or complex tensor argument and no explicit
    /// dtype (factories, `torch.tensor([1.5])`, `int_tensor / 2`, `torch.sqrt(int_tensor)`).
    /// Conservative: a call that names its dtype some other way only costs a guard.
    pub fn reads_default_dtype(&self, node: NodeId) -> bool {
        let n = self.graph.node(node);
        let fx::NodeKind::Call {
            target,
            args,
            kwargs,
        } = &n.kind
        else {
            return false;
        };
        let float = |m: &TensorMeta| m.dtype.is_floating_point() || m.dtype.is_complex();
        let result_float = match &n.meta {
            NodeMeta::Tensor(t) => float(t),
            NodeMeta::Tuple(items) => items
                .iter()
                .any(|m| matches!(m, NodeMeta::Tensor(t) if float(t))),
            _ => false,
        };
        if !result_float {
            return false;
        }
        if let Target::Method(m) = target {
            if matches!(
                m.as_str(),
                "float" | "double" | "half" | "bfloat16" | "cfloat" | "cdouble"
            ) {
                return false;
            }
        }
        let all = args.iter().chain(kwargs.iter().map(|(_, a)| a));
        if all.clone().any(|a| matches!(a, Arg::DType(_))) {
            return false;
        }
        let mut nodes = Vec::new();
        all.for_each(|a| a.nodes(&mut nodes));
        !nodes.iter().any(|&i| match &self.graph.node(i).meta {
            NodeMeta::Tensor(t) => float(t),
            NodeMeta::Tuple(items) => items
                .iter()
                .any(|m| matches!(m, NodeMeta::Tensor(t) if float(t))),
            _ => false,
        })
    }

    /// The tensor a value is, following in-place results back to what they mutated.
    pub fn alias_root(&self, mut node: NodeId) -> NodeId {
        while let Some(&n) = self.alias.get(&node) {
            node = n;
        }
        node
    }

    /// Records that `result` is the tensor `mutated` (the result of an in-place op).
    pub fn set_alias(&mut self, result: NodeId, mutated: NodeId) {
        if result != mutated {
            self.alias.insert(result, mutated);
        }
    }

    /// (node, placeholder index) for every node that is, through in-place ops, a graph input.
    pub fn input_aliases(&self) -> Vec<(NodeId, usize)> {
        self.alias
            .keys()
            .filter_map(|&n| match self.graph.node(self.alias_root(n)).kind {
                fx::NodeKind::Placeholder { index } => Some((n, index)),
                _ => None,
            })
            .collect()
    }

    pub fn grad_enabled(&self) -> bool {
        self.infer_ctx.grad_enabled
    }

    /// Switches grad mode from here on: a `torch._C._set_grad_enabled` call in the graph (kept by
    /// dead-code elimination) and the mode later ops' metadata is inferred under.
    pub fn set_grad_mode(&mut self, py: Python<'_>, enabled: bool) -> Result<(), TraceError> {
        if enabled == self.infer_ctx.grad_enabled {
            return Ok(());
        }
        let f = py
            .import("torch")?
            .getattr("_C")?
            .getattr("_set_grad_enabled")?;
        let node = self.graph.call(
            "set_grad_enabled",
            Target::Function("torch._C._set_grad_enabled".into()),
            vec![Arg::Bool(enabled)],
            vec![],
            NodeMeta::None,
        );
        self.callables.push((node, f.unbind()));
        self.infer_ctx.grad_enabled = enabled;
        Ok(())
    }

    /// Switches torch's default dtype from here on: a `torch.set_default_dtype` call in the graph
    /// (kept by dead-code elimination; eager leaves it set on an error too, so nothing restores
    /// it) and the default later ops' metadata is inferred under.
    pub fn set_default_dtype(
        &mut self,
        py: Python<'_>,
        dtype: &Bound<'_, PyAny>,
    ) -> Result<(), TraceError> {
        let d = dtype_of(py, dtype)?;
        if !(d.is_floating_point() || d.is_complex()) {
            return Err(TraceError::unsupported(
                "torch.set_default_dtype of a non-floating dtype (the call raises TypeError)",
            ));
        }
        let f = py.import("torch")?.getattr("set_default_dtype")?;
        let node = self.graph.call(
            "set_default_dtype",
            Target::Function(DEFAULT_DTYPE_TARGET.into()),
            vec![Arg::DType(d)],
            vec![],
            NodeMeta::None,
        );
        self.callables.push((node, f.unbind()));
        self.infer_ctx.default_dtype = d;
        self.traced_default_dtype = Some(dtype.clone().unbind());
        Ok(())
    }

    /// Whether the traced code set the default dtype before this point (ops after it read the
    /// value it set, not the entry state's).
    pub fn sets_default_dtype(&self) -> bool {
        self.traced_default_dtype.is_some()
    }

    /// Torch's default dtype switched to the traced one for a native inference; the one to
    /// restore after it (`None`: nothing switched).
    fn enter_traced_default_dtype(&self, py: Python<'_>) -> Option<Py<PyAny>> {
        let want = self.traced_default_dtype.as_ref()?;
        let torch = py.import("torch").ok()?;
        let now = torch.getattr("get_default_dtype").ok()?.call0().ok()?;
        if now.is(want.bind(py)) {
            return None;
        }
        torch
            .getattr("set_default_dtype")
            .ok()?
            .call1((want.bind(py),))
            .ok()?;
        Some(now.unbind())
    }

    fn leave_traced_default_dtype(&self, py: Python<'_>, before: Option<Py<PyAny>>) {
        if let Some(d) = before {
            if let Ok(torch) = py.import("torch") {
                let _ = torch
                    .getattr("set_default_dtype")
                    .and_then(|f| f.call1((d.bind(py),)));
            }
        }
    }

    /// The autocast state of `device` (one of [`AMP_DEVICES`]) at this point of the traced code.
    pub fn autocast(&self, device: AmpDevice) -> (bool, Py<PyAny>) {
        let (on, dtype) = &self.autocast[device as usize];
        Python::attach(|py| (*on, dtype.clone_ref(py)))
    }

    /// Whether autocast is enabled on some device at this point of the traced code.
    pub fn any_autocast(&self) -> bool {
        self.autocast.iter().any(|(on, _)| *on)
    }

    /// Whether autocast was enabled on `device` around the frame.
    pub fn entry_autocast(&self, device: AmpDevice) -> bool {
        self.entry_autocast[device as usize]
    }

    /// `((device, enabled, dtype), ...)` for `torchferro._amp.infer`.
    fn autocast_states<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(
            py,
            AMP_DEVICES
                .iter()
                .zip(&self.autocast)
                .map(|(d, (on, dtype))| (*d, *on, dtype.clone_ref(py))),
        )
    }

    /// Switches autocast on `device` for the ops that follow: a graph node (kept by dead-code
    /// elimination, like grad-mode switches) and the state inference runs under.
    pub fn set_autocast(
        &mut self,
        py: Python<'_>,
        device: AmpDevice,
        enabled: bool,
        dtype: &Bound<'_, PyAny>,
    ) -> Result<(), TraceError> {
        let slot = device as usize;
        // Off before and after (`autocast(enabled=False)` where it is off, as transformers'
        // rotary embeddings force float32): no op computes differently, so no switch node (it
        // would send the whole graph to the eager runner). The dtype only matters once enabled,
        // and enabling always records its dtype.
        if !enabled && !self.autocast[slot].0 {
            self.autocast[slot] = (false, dtype.clone().unbind());
            return Ok(());
        }
        let f = py.import("torchferro._amp")?.getattr("set_autocast")?;
        let node = self.graph.call(
            "set_autocast",
            Target::Function(AUTOCAST_TARGET.into()),
            vec![
                Arg::Str(AMP_DEVICES[slot].into()),
                Arg::Bool(enabled),
                Arg::DType(dtype_of(py, dtype)?),
            ],
            vec![],
            NodeMeta::None,
        );
        self.callables.push((node, f.unbind()));
        self.autocast[slot] = (enabled, dtype.clone().unbind());
        Ok(())
    }

    /// Inference mode at this point of the traced code where the trace changed it.
    pub fn inference_mode(&self) -> Option<bool> {
        self.inference
    }

    /// Enters `torch.inference_mode(mode)` for the ops that follow: a graph node (kept by
    /// dead-code elimination) that pushes the mode's guard; inside, grad mode is `!mode`.
    pub fn enter_inference_mode(&mut self, py: Python<'_>, mode: bool) -> Result<(), TraceError> {
        let f = py
            .import("torchferro._amp")?
            .getattr("enter_inference_mode")?;
        let node = self.graph.call(
            "enter_inference_mode",
            Target::Function(INFERENCE_ENTER_TARGET.into()),
            vec![Arg::Bool(mode)],
            vec![],
            NodeMeta::None,
        );
        self.callables.push((node, f.unbind()));
        self.inference_levels.push(InferenceLevel {
            mode,
            prev_grad: self.infer_ctx.grad_enabled,
            prev_inference: self.inference,
        });
        self.inference = Some(mode);
        self.infer_ctx.grad_enabled = !mode;
        Ok(())
    }

    /// Leaves the innermost inference-mode level: a graph node; grad and inference mode are
    /// then what they were when it was entered (`prev_grad`, `prev_inference`).
    pub fn exit_inference_mode(
        &mut self,
        py: Python<'_>,
        prev_grad: bool,
        prev_inference: Option<bool>,
    ) -> Result<(), TraceError> {
        let f = py
            .import("torchferro._amp")?
            .getattr("exit_inference_mode")?;
        let node = self.graph.call(
            "exit_inference_mode",
            Target::Function(INFERENCE_EXIT_TARGET.into()),
            vec![],
            vec![],
            NodeMeta::None,
        );
        self.callables.push((node, f.unbind()));
        self.inference_levels.pop();
        self.inference = prev_inference;
        self.infer_ctx.grad_enabled = prev_grad;
        Ok(())
    }

    /// Whether the graph enters an inference-mode region (such graphs run on the eager runner:
    /// the region decides which results are inference tensors).
    pub fn has_inference_mode(&self) -> bool {
        self.graph.nodes().any(|(_, n)| {
            matches!(&n.kind, fx::NodeKind::Call { target, .. } if target.name() == INFERENCE_ENTER_TARGET)
        })
    }

    /// Whether the graph switches the default dtype (such graphs run on the eager runner: the
    /// inductor's kernels and the compiled backward know nothing of the switch).
    pub fn has_default_dtype_switch(&self) -> bool {
        self.graph.nodes().any(|(_, n)| {
            matches!(&n.kind, fx::NodeKind::Call { target, .. } if target.name() == DEFAULT_DTYPE_TARGET)
        })
    }

    /// Whether the graph switches autocast anywhere (such graphs run on the eager runner).
    pub fn has_autocast(&self) -> bool {
        self.graph.nodes().any(|(_, n)| {
            matches!(&n.kind, fx::NodeKind::Call { target, .. } if target.name() == AUTOCAST_TARGET)
        })
    }

    /// Whether a graph input is an instance of a tensor subclass other than `nn.Parameter` (a
    /// `__torch_function__` override, a wrapper type): eager's results then keep the subclass
    /// and its overrides, which only a backend that calls torch per op reproduces.
    pub fn has_tensor_subclass_input(&self, py: Python<'_>) -> PyResult<bool> {
        let torch = py.import("torch")?;
        let tensor = torch.getattr("Tensor")?;
        let parameter = torch.getattr("nn")?.getattr("Parameter")?;
        for x in &self.example_inputs {
            let ty = x.bind(py).get_type();
            if ty.is_subclass(&tensor)? && !ty.is(&tensor) && !ty.is(&parameter) {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// The result of the meta run that made `node` (tensors and tuples only).
    pub fn meta_value(&self, node: NodeId) -> Option<&Py<PyAny>> {
        self.metas.get(&node)
    }

    /// A Python value standing for `arg` in a meta-tensor run.
    fn meta_arg<'py>(
        &mut self,
        py: Python<'py>,
        arg: &Arg,
    ) -> Result<Bound<'py, PyAny>, TraceError> {
        Ok(match arg {
            Arg::Node(n) => self.meta_tensor(py, *n)?,
            other => arg_to_py(py, other, &mut |py, n| self.meta_tensor(py, n))?,
        })
    }

    fn meta_tensor<'py>(
        &mut self,
        py: Python<'py>,
        node: NodeId,
    ) -> Result<Bound<'py, PyAny>, TraceError> {
        if let Some(m) = self.metas.get(&node) {
            return Ok(m.bind(py).clone());
        }
        let n = self.graph.node(node);
        let t = match &n.meta {
            // An op's result that requires grad is no leaf in eager: its meta stand-in must
            // accept in-place writes (`h[i] = v` on `h = x * w`) as eager does.
            NodeMeta::Tensor(t)
                if t.requires_grad && matches!(n.kind, fx::NodeKind::Call { .. }) =>
            {
                make_meta_non_leaf(py, t)?
            }
            NodeMeta::Tensor(t) => make_meta_tensor(py, t)?,
            NodeMeta::Tuple(items) => {
                let mut out = Vec::new();
                for m in items {
                    match m {
                        NodeMeta::Tensor(t) => out.push(make_meta_tensor(py, t)?),
                        _ => {
                            return Err(TraceError::unsupported(
                                "a tuple result with non-tensor items",
                            ))
                        }
                    }
                }
                PyTuple::new(py, out)?.into_any()
            }
            _ => {
                return Err(TraceError::internal(
                    "a non-tensor node without a meta value",
                ))
            }
        };
        self.metas.insert(node, t.clone().unbind());
        Ok(t)
    }
}

impl Default for OutputGraph {
    fn default() -> Self {
        Self::new()
    }
}

fn has_node(a: &Arg) -> bool {
    let mut v = Vec::new();
    a.nodes(&mut v);
    !v.is_empty()
}

/// Moves any real tensor in a result to the meta device (ops without tensor inputs, such as
/// `torch.tensor(...)`, produce real ones).
fn to_meta<'py>(py: Python<'py>, v: Bound<'py, PyAny>) -> Result<Bound<'py, PyAny>, TraceError> {
    if is_tensor(py, &v)? {
        let dev: String = v.getattr(intern!(py, "device"))?.str()?.to_string();
        if dev != "meta" {
            return Ok(v.call_method1("to", ("meta",))?);
        }
        return Ok(v);
    }
    if let Ok(t) = v.cast::<PyTuple>() {
        let items = t
            .iter()
            .map(|x| to_meta(py, x))
            .collect::<Result<Vec<_>, _>>()?;
        if v.get_type().is(py.get_type::<PyTuple>()) {
            return Ok(PyTuple::new(py, items)?.into_any());
        }
        return Ok(v);
    }
    Ok(v)
}

pub(crate) fn placeholder_name(source: &Source) -> String {
    let s = source.to_string();
    let cleaned: String = s
        .replace("L['", "l_")
        .replace("G['", "g_")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect();
    let mut out = String::new();
    for c in cleaned.chars() {
        if c == '_' && out.ends_with('_') {
            continue;
        }
        out.push(c);
    }
    out.trim_end_matches('_').to_string()
}

/// Converts a constant argument (possibly holding nodes) to a Python object, with `node` mapping
/// graph values.
pub fn arg_to_py<'py>(
    py: Python<'py>,
    arg: &Arg,
    node: &mut dyn FnMut(Python<'py>, NodeId) -> Result<Bound<'py, PyAny>, TraceError>,
) -> Result<Bound<'py, PyAny>, TraceError> {
    Ok(match arg {
        Arg::Node(n) => node(py, *n)?,
        Arg::None => py.None().into_bound(py),
        Arg::Bool(b) => pyo3::types::PyBool::new(py, *b).to_owned().into_any(),
        Arg::Int(i) => i.into_pyobject(py)?.into_any(),
        Arg::Float(f) => f.into_pyobject(py)?.into_any(),
        Arg::Str(s) => s.into_pyobject(py)?.into_any(),
        Arg::DType(d) => py.import("torch")?.getattr(d.torch_name())?,
        Arg::Device(d) => py
            .import("torch")?
            .getattr("device")?
            .call1((d.to_string(),))?,
        Arg::TorchAttr(name) => {
            let torch = py.import("torch")?;
            torch.getattr(name.trim_start_matches("torch."))?
        }
        Arg::Tuple(items) => {
            let v = items
                .iter()
                .map(|a| arg_to_py(py, a, node))
                .collect::<Result<Vec<_>, _>>()?;
            PyTuple::new(py, v)?.into_any()
        }
        Arg::List(items) => {
            let v = items
                .iter()
                .map(|a| arg_to_py(py, a, node))
                .collect::<Result<Vec<_>, _>>()?;
            PyList::new(py, v)?.into_any()
        }
        Arg::Slice(a, b, c) => {
            let a = arg_to_py(py, a, node)?;
            let b = arg_to_py(py, b, node)?;
            let c = arg_to_py(py, c, node)?;
            py.import("builtins")?.getattr("slice")?.call1((a, b, c))?
        }
        Arg::Ellipsis => py.Ellipsis().into_bound(py),
    })
}

pub fn dtype_of(py: Python<'_>, dtype: &Bound<'_, PyAny>) -> Result<DType, TraceError> {
    let s = dtype.str()?.to_string();
    let _ = py;
    DType::from_torch_name(s.trim_start_matches("torch."))
        .ok_or_else(|| TraceError::unsupported(format!("tensors of dtype {s}")))
}

pub fn device_of(dev: &Bound<'_, PyAny>) -> Result<Device, TraceError> {
    let py = dev.py();
    let kind: String = dev.getattr(intern!(py, "type"))?.extract()?;
    let index: Option<i64> = dev.getattr(intern!(py, "index"))?.extract()?;
    Ok(Device { kind, index })
}

/// Metadata of a live (or meta) tensor.
pub fn tensor_meta_of(py: Python<'_>, t: &Bound<'_, PyAny>) -> Result<TensorMeta, TraceError> {
    // Sparse, mkldnn and other non-strided tensors answer `stride()` with numbers that do not
    // address their data (a sparse COO tensor's are all 0): a graph traced over them would
    // hand kernels a pointer to something else. Their frames run eagerly.
    let layout = t.getattr(intern!(py, "layout"))?;
    if !layout.is(&py
        .import(intern!(py, "torch"))?
        .getattr(intern!(py, "strided"))?)
    {
        return Err(TraceError::unsupported(format!(
            "a tensor of layout {layout}"
        )));
    }
    let dtype = dtype_of(py, &t.getattr(intern!(py, "dtype"))?)?;
    let device = device_of(&t.getattr(intern!(py, "device"))?)?;
    let sizes: Vec<i64> = t.getattr(intern!(py, "shape"))?.extract()?;
    let strides: Vec<i64> = t.call_method0(intern!(py, "stride"))?.extract()?;
    let requires_grad: bool = t.getattr(intern!(py, "requires_grad"))?.extract()?;
    Ok(TensorMeta {
        dtype,
        device,
        sizes: sizes.into_iter().map(Dim::Known).collect(),
        strides: strides.into_iter().map(Dim::Known).collect(),
        requires_grad,
    })
}

fn node_meta_of(
    py: Python<'_>,
    v: &Bound<'_, PyAny>,
    device: &Device,
) -> Result<NodeMeta, TraceError> {
    if is_tensor(py, v)? {
        let mut m = tensor_meta_of(py, v)?;
        m.device = device.clone();
        return Ok(NodeMeta::Tensor(m));
    }
    if let Ok(t) = v.cast::<PyTuple>() {
        let items = t
            .iter()
            .map(|x| node_meta_of(py, &x, device))
            .collect::<Result<Vec<_>, _>>()?;
        return Ok(NodeMeta::Tuple(items));
    }
    if let Ok(t) = v.cast::<PyList>() {
        let items = t
            .iter()
            .map(|x| node_meta_of(py, &x, device))
            .collect::<Result<Vec<_>, _>>()?;
        return Ok(NodeMeta::Tuple(items));
    }
    if v.is_none() {
        return Ok(NodeMeta::None);
    }
    if let Ok(b) = v.cast::<pyo3::types::PyBool>() {
        return Ok(NodeMeta::Bool(b.is_true()));
    }
    if let Ok(i) = v.extract::<i64>() {
        return Ok(NodeMeta::Int(i));
    }
    if let Ok(f) = v.extract::<f64>() {
        return Ok(NodeMeta::Float(f));
    }
    Err(TraceError::unsupported(format!(
        "an op returning {}",
        v.get_type().name()?
    )))
}

pub fn is_tensor(py: Python<'_>, v: &Bound<'_, PyAny>) -> PyResult<bool> {
    let tensor = py.import("torch")?.getattr(intern!(py, "Tensor"))?;
    v.is_instance(&tensor)
}

/// The concrete sizes and strides of `meta`: a meta tensor is made only at known shapes.
fn known_layout(meta: &TensorMeta) -> Result<(Vec<i64>, Vec<i64>), TraceError> {
    let sizes = meta
        .known_sizes()
        .ok_or_else(|| TraceError::unsupported("symbolic sizes"))?;
    let strides = meta
        .known_strides()
        .ok_or_else(|| TraceError::unsupported("symbolic strides"))?;
    Ok((sizes, strides))
}

/// The factory keywords of a meta tensor with `meta`'s dtype.
fn meta_kwargs<'py>(
    torch: &Bound<'py, PyModule>,
    meta: &TensorMeta,
    requires_grad: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let kwargs = PyDict::new(torch.py());
    kwargs.set_item("dtype", torch.getattr(meta.dtype.torch_name())?)?;
    kwargs.set_item("device", "meta")?;
    kwargs.set_item("requires_grad", requires_grad)?;
    Ok(kwargs)
}

/// A meta tensor of `meta` that requires grad and is not a leaf: a strided view of a clone of
/// a leaf over the storage the strides reach (an in-place op on a leaf, or on a view of one,
/// raises in torch; on a non-leaf it is recorded).
fn make_meta_non_leaf<'py>(
    py: Python<'py>,
    meta: &TensorMeta,
) -> Result<Bound<'py, PyAny>, TraceError> {
    let torch = py.import("torch")?;
    let (sizes, strides) = known_layout(meta)?;
    let storage: i64 = if sizes.contains(&0) {
        0
    } else {
        1 + sizes
            .iter()
            .zip(&strides)
            .map(|(&s, &st)| (s - 1) * st)
            .sum::<i64>()
    };
    let kwargs = meta_kwargs(&torch, meta, true)?;
    let leaf = torch.getattr("empty")?.call(((storage,),), Some(&kwargs))?;
    let grad = torch.getattr("enable_grad")?.call0()?;
    grad.call_method0("__enter__")?;
    let t = leaf
        .call_method0("clone")
        .and_then(|c| c.call_method1("as_strided", (sizes, strides)));
    grad.call_method1("__exit__", (py.None(), py.None(), py.None()))?;
    Ok(t?)
}

pub fn make_meta_tensor<'py>(
    py: Python<'py>,
    meta: &TensorMeta,
) -> Result<Bound<'py, PyAny>, TraceError> {
    let torch = py.import("torch")?;
    let (sizes, strides) = known_layout(meta)?;
    let kwargs = meta_kwargs(&torch, meta, meta.requires_grad)?;
    Ok(torch
        .getattr("empty_strided")?
        .call((sizes, strides), Some(&kwargs))?)
}

/// `meta` (symbolic sizes) with the dtypes of `at_hints` (the same op's result at the hints
/// under autocast), tensor by tensor; `None` when the two differ in structure.
fn with_dtypes_of(meta: NodeMeta, at_hints: &NodeMeta) -> Option<NodeMeta> {
    match (meta, at_hints) {
        (NodeMeta::Tensor(mut t), NodeMeta::Tensor(h)) if t.sizes.len() == h.sizes.len() => {
            t.dtype = h.dtype;
            Some(NodeMeta::Tensor(t))
        }
        (NodeMeta::Tuple(items), NodeMeta::Tuple(hs)) if items.len() == hs.len() => items
            .into_iter()
            .zip(hs)
            .map(|(m, h)| with_dtypes_of(m, h))
            .collect::<Option<Vec<_>>>()
            .map(NodeMeta::Tuple),
        (NodeMeta::Tensor(_) | NodeMeta::Tuple(_), _) => None,
        (m, _) => Some(m),
    }
}

/// Whether torch's error from running an op on meta tensors says its result depends on data
/// (nonzero, unique, masked_select, item, nms): a limit of tracing, not the user's error.
fn data_dependent_text(text: &str) -> bool {
    let t = text.to_lowercase();
    text.starts_with("NotImplementedError")
        || t.contains("meta tensor")
        || t.contains("data-dependent")
        || t.contains("on meta")
}
