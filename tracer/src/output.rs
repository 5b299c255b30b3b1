//! The output graph under construction: the fx graph, where its inputs come from, and the
//! metadata of every tensor value (an fx `TensorMeta` plus a `meta`-device tensor used to infer
//! the next op's result by running it on metadata only).

use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};

use fx::{Arg, DType, Device, Dim, Graph, NodeId, NodeMeta, Target, TensorMeta};

use crate::error::TraceError;
use crate::source::Source;

mod infer;
mod meta;
mod modes;
mod stand_ins;

use meta::*;
pub use meta::{arg_to_py, device_of, dtype_of, is_tensor, make_meta_tensor, tensor_meta_of};

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

/// The graph nodes that read `t.data` and assign `t.data = v` (eager's attribute, run per call).
pub const DATA_READ_TARGET: &str = "torchferro._data.data";
pub const DATA_WRITE_TARGET: &str = "torchferro._data.set_data_";

/// The graph node that registers a gradient hook on a tensor the graph computes
/// (`t.register_hook(hook)`, run on the real tensor: `torchferro._autograd.hook_registrar`).
pub const TENSOR_HOOK_TARGET: &str = "torchferro._autograd.register_hook";

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
    /// Autocast around the frame on each of [`AMP_DEVICES`]: its dtype where enabled (the graph
    /// starts inside those regions; every entry is guarded on the autocast state). `Err` holds
    /// the name of a dtype the graph has no `DType` for.
    entry_autocast: [Option<Result<DType, String>>; 2],
    /// Inference mode at this point of the traced code, where the trace changed it (`None`:
    /// the frame's entry state), and the levels the trace entered and has not left.
    inference: Option<bool>,
    pub inference_levels: Vec<InferenceLevel>,
    /// Dynamic shapes: the size symbols of the inputs and the relations the trace relied on.
    pub shapes: crate::guards::ShapeEnv,
    /// Symbolic int (and float) nodes (`x.size(2)` read as `s2`) whose value a replacement by
    /// a constant made known (`s2 == 32`): their uses take the constant before the graph is
    /// handed on ([`OutputGraph::fold_replaced_sizes`]).
    pub(crate) folded: Vec<(NodeId, Arg)>,
    /// The default dtype the traced code set (a `torch.dtype`), once it set one: ops after it
    /// read it instead of the entry state, and their metadata is inferred under it.
    traced_default_dtype: Option<Py<PyAny>>,
    /// The graph ends at a break before `torch.autograd.grad(..., create_graph=True)` (a
    /// gradient penalty): the gradients of its results are differentiated again, which a
    /// compiled backward cannot be, so it runs through torch's autograd (`backend::build`).
    pub differentiated_twice: bool,
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
            entry_autocast: Python::attach(|py| {
                autocast.each_ref().map(|(on, dtype)| {
                    on.then(|| dtype_of(py, dtype.bind(py)).map_err(|e| e.to_string()))
                })
            }),
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
            folded: Vec::new(),
            traced_default_dtype: None,
            differentiated_twice: false,
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
    /// symbolic size (see `guards::shape_env::dynamic_dims`; the tensor is dense in some order).
    pub fn input_dynamic(
        &mut self,
        py: Python<'_>,
        source: &Source,
        value: &Bound<'_, PyAny>,
        dynamic: &[Option<crate::guards::shape_env::DynDim>],
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
                if let (Some(d), Some(hint)) = (d, meta.sizes[i].known()) {
                    let e = self.shapes.symbol_for(source, i, hint, *d);
                    meta.sizes[i] = Dim::Sym(e);
                }
            }
            // Dense in the order the call's tensor is (contiguous, transposed, channels-last);
            // any other layout (a column slice, an expanded view) has torch's stride rules:
            // constants 0 and 1, products of another dimension's size and stride, and a
            // symbol of its own for any other stride (`layout::stride_rules`; the tensor
            // check admits a call's tensor of the same rules).
            let hints: Vec<i64> = value.getattr("shape")?.extract()?;
            let strides: Vec<i64> = value.call_method0("stride")?.extract()?;
            meta.strides = match fx::infer::layout::dense_order(&hints, &strides) {
                Some(order) => fx::infer::symbolic_dense(&meta.sizes, &order),
                None => {
                    let rules = fx::infer::layout::stride_rules(&hints, &strides);
                    let shapes = &mut self.shapes;
                    fx::infer::symbolic_ruled(&meta.sizes, &rules, &mut |i| {
                        shapes.stride_symbol(source, i, strides[i])
                    })
                }
            };
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
        mut args: Vec<Arg>,
        mut kwargs: Vec<(String, Arg)>,
    ) -> Result<(NodeId, NodeMeta), TraceError> {
        // A symbolic int the frame read before its symbol was replaced by a constant is that
        // constant (`split(C)` after `s2 == 32`): the call sees a plain int.
        for (id, c) in &self.folded {
            args.iter_mut()
                .chain(kwargs.iter_mut().map(|(_, a)| a))
                .for_each(|a| {
                    a.replace_node_with(*id, c);
                });
        }
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

    /// Whether the graph has symbolic sizes (dynamic shapes).
    pub fn is_dynamic(&self) -> bool {
        !self.shapes.is_empty()
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
}

impl Default for OutputGraph {
    fn default() -> Self {
        Self::new()
    }
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
