//! Lowering: from the torch-level `fx::Graph` to the loop-level [`IrGraph`].
//!
//! Each call node is normalized through the op table ([`table`]) to a few primitives: pointwise
//! bodies (inlined lazily into their consumers), reductions, extern calls, and views (index
//! arithmetic). What the table cannot lower becomes a fallback node run by the host. Every result
//! is checked against the node's metadata (sizes and dtype); a mismatch is treated as a lowering
//! bug and the node falls back, so a gap in the table costs speed, never correctness.

pub mod args;
mod attention;
mod checked;
pub(crate) mod cudnn;
mod elementwise;
mod extern_ops;
mod factory;
mod fallback;
mod index_maps;
mod indexing;
mod interior;
pub(crate) mod onednn;
mod outputs;
mod pool;
mod ranges;
mod reduce;
mod reinplace;
mod scan;
mod sizes;
mod symnum;
mod table;
pub mod value;
mod view_scatter;
mod views;
mod write_back;

use std::collections::{HashMap, HashSet};

use fx::{Arg, Graph, NodeId, NodeKind, NodeMeta, TensorMeta};

use crate::ir::{BodyBuilder, BufId, BufKind, IrGraph, IrNode, Scalar};
use crate::size::{as_consts, consts, Size};
use crate::target::Target;
use crate::InductorError;
use args::{LResult, Reject};
pub use outputs::{dense_strides, dense_strides_const};
use sizes::graph_is_symbolic;

/// Whether any tensor meta of `graph` has a symbolic size or stride (it is then lowered once
/// for every assignment of its symbols).
pub fn is_symbolic(graph: &Graph) -> bool {
    graph_is_symbolic(graph)
}
pub use sizes::{meta_sizes, meta_strides};
use value::{contiguous_strides_sym, Kind, TensorVal};

/// A lowered node value.
#[derive(Clone)]
pub enum LValue {
    Tensor(TensorVal),
    Tuple(Vec<LValue>),
    Scalar(Scalar),
}

/// Lowered pointwise values are realized into a buffer when they would be inlined this often or
/// would grow a body past this many ops (Inductor's `realize_reads_threshold` /
/// `realize_opcount_threshold`).
const REALIZE_USERS: usize = 4;
const REALIZE_OPS: usize = 48;
/// A pointwise value read more than once is realized when inlining it would read more than this
/// many buffers in each reader (Inductor's `realize_reads_threshold`).
const REALIZE_READS: usize = 4;
/// A pointwise value read on both sides of a host step (an extern GEMM, attention, a fallback)
/// is inlined into two kernels at least; it is stored once where it is made when its body loads
/// at least this many elements per point (a residual stream `h + attn`, read by the RMSNorm
/// before the next GEMMs and by the residual add after them). Below that, reading it back costs
/// as much as computing it again.
const REALIZE_SPLIT_LOADS: usize = 2;

/// Ops that always run on the host (extern calls), besides [`MEMORY_READERS`]: no kernel spans
/// them.
const HOST_OPS: &[&str] = &["scaled_dot_product_attention"];

/// Ops whose host call reads its tensor operands from memory (Inductor's
/// `needs_realized_inputs`): a pointwise value one of them reads is realized once when it has
/// other users too, and every user reads the buffer (the GEMM takes a strided view of it).
const MEMORY_READERS: &[&str] = &[
    "mm",
    "addmm",
    "bmm",
    "baddbmm",
    "matmul",
    "linear",
    "conv1d",
    "conv2d",
    "conv3d",
    "convolution",
];

pub(crate) struct Lowerer<'g> {
    pub graph: &'g Graph,
    pub ir: IrGraph,
    env: HashMap<NodeId, LValue>,
    /// Nodes whose result may alias another node's storage (views, `contiguous`, `to`, in-place).
    may_alias: HashSet<NodeId>,
    /// In-place results and their mutated root.
    alias_root: HashMap<NodeId, NodeId>,
    /// The graph runs 2-d convolutions: 4-d intermediates are laid out channels-last, the
    /// layout oneDNN convolves without reordering its input and output on every call (a
    /// contiguous NCHW tensor costs two extra passes per convolution). Graph outputs keep the
    /// strides eager gives them.
    pub channels_last: bool,
    /// The device's policy (supported dtypes, row-local array size).
    pub target: &'g Target,
    /// Lazy values already realized (by lazy id): realizing one again, or a view of one, reads
    /// that buffer instead of computing the value a second time.
    realized: HashMap<u64, TensorVal>,
    /// Names the current node's lowering rebound to a realized buffer, with their old values.
    rebound: Vec<(NodeId, LValue)>,
    /// The kind of device the kernels' buffers live on: `cuda` when any tensor of the graph
    /// is on a CUDA device, else `cpu` (also for a CPU graph printed for the CUDA target by the
    /// check hook). Ops touching tensors elsewhere run through torch ([`Lowerer::off_device`]).
    pub(super) home: &'static str,
    /// The dtype of the node being lowered, from its metadata: a factory's result dtype
    /// (torch's defaults are not written again in the lowerings).
    pub node_dtype: Option<fx::DType>,
    /// The sizes of the node being lowered, from its metadata (fx inferred them under the
    /// trace's guards: a view's `-1` over symbolic sizes is `s1 // 2`, guarded divisible).
    pub node_sizes: Option<Vec<Size>>,
    /// The sizes of each item of the node's tuple metadata (`split`/`chunk` pieces along a
    /// symbolic dimension: fx's rule wrote their lengths, the count guarded).
    pub node_pieces: Option<Vec<Vec<Size>>>,
    /// Per graph node, how many host steps (extern calls, attention, ops without a lowering)
    /// precede it in graph order: nodes with different numbers never share a kernel, since the
    /// scheduler fuses only within a run of kernels between two host steps.
    segment: HashMap<NodeId, usize>,
    /// The graph has symbolic sizes (issue 18, the design's step 3): a node that cannot be
    /// lowered declines the whole graph (`Unsupported`, the caller's fallback) instead of
    /// becoming a fallback node, and the attention fusion (constant sizes only) is off.
    pub symbolic: bool,
    /// The graph's output nodes. With [`Self::viewed_out`] they are the nodes whose value is,
    /// or shares storage with, a graph output: their buffers keep the strides eager gives them
    /// (see [`Lowerer::escapes`]).
    output_leaves: HashSet<NodeId>,
    /// Nodes a graph output views (not the outputs themselves): a result padded wider than
    /// eager's would hand out a view with other strides than eager's, no longer a view of the
    /// output copied to eager's layout. Only output leaves outside this set may be computed
    /// padded and copied out.
    pub(super) viewed_out: HashSet<NodeId>,
    /// The node a lazy value was bound to (by lazy id), for [`Lowerer::fresh_strides`].
    lazy_node: HashMap<u64, NodeId>,
    /// The node being lowered.
    pub(super) current: Option<NodeId>,
    /// Buffers given padded strides: an output landing in one is copied to eager's layout.
    pub(super) padded: HashSet<BufId>,
    /// Padded buffers whose pad elements hold zeros, as (logical, padded) length of their
    /// last dim: a fresh value realized padded writes its rows out to the padded width
    /// ([`Lowerer::realize`]), as does a GEMM whose output length was padded. A GEMM that pads
    /// its reduced length with zeros then reads such a buffer as it is
    /// (`extern_ops::zero_padded_view`), where it would copy it into a padded operand: GPT-2's
    /// logits gradient, `[8192, 50257]` bf16, went through one more full pass that way.
    pub(super) zero_padded: HashMap<BufId, (i64, i64)>,
    /// GEMM products padded along their output length (`extern_ops::padded_mm`): a graph
    /// output in one keeps the padded layout where the target says so
    /// ([`Target::padded_gemm_outputs`]).
    pub(super) padded_products: HashSet<BufId>,
    /// Graph output positions whose layout the lowering may choose (the values a training
    /// forward saves for its backward, which reads them in whatever layout they come:
    /// [`crate::Options::free_outputs`]). One landing in a padded buffer is handed out as a view
    /// of it instead of copied to eager's dense layout.
    pub(super) free_outputs: HashSet<usize>,
    /// Each node's position in the graph's order: which readers of a value come after a node
    /// (`reinplace.rs`: a scatter stores into its input only when no later node reads the
    /// input's old value).
    position: HashMap<NodeId, usize>,
    /// Nodes the attention plan lowers at its final node, not where they stand: their reads
    /// happen later than their position says.
    attn_skip: HashSet<NodeId>,
}

/// See [`Lowerer::home`].
fn home_device(graph: &Graph) -> &'static str {
    fn cuda(m: &NodeMeta) -> bool {
        match m {
            NodeMeta::Tensor(t) => t.device.kind == "cuda",
            NodeMeta::Tuple(xs) => xs.iter().any(cuda),
            _ => false,
        }
    }
    if graph.nodes().any(|(_, n)| cuda(&n.meta)) {
        "cuda"
    } else {
        "cpu"
    }
}

/// Channels-last strides of a 4-d `[N, C, H, W]` tensor: fx's layout rule.
pub use fx::infer::layout::channels_last_strides;

/// The catalog's view of node `u`, when it is a call of an op the catalog knows.
fn canonical_call(graph: &Graph, u: NodeId) -> Option<table::Canon> {
    match &graph.node(u).kind {
        NodeKind::Call {
            target,
            args,
            kwargs,
        } => table::canonical(target, args, kwargs),
        _ => None,
    }
}

/// Lowers a graph for the default target (the CPU). Fails only for graph-level features the
/// inductor does not model.
pub fn lower(graph: &Graph) -> Result<IrGraph, InductorError> {
    lower_for(graph, &Target::default())
}

/// Lowers a graph for `target`, whose policy decides supported dtypes and layouts.
pub fn lower_for(graph: &Graph, target: &Target) -> Result<IrGraph, InductorError> {
    lower_with(graph, target, &[])
}

/// [`lower_for`], with the graph output positions in `free_outputs` handed out in the layout
/// the lowering gives them ([`crate::Options::free_outputs`]).
pub fn lower_with(
    graph: &Graph,
    target: &Target,
    free_outputs: &[usize],
) -> Result<IrGraph, InductorError> {
    let attn_plan = if graph_is_symbolic(graph) {
        attention::AttnPlan::default()
    } else {
        attention::plan(graph)
    };
    let mut l = Lowerer {
        graph,
        ir: IrGraph::default(),
        env: HashMap::new(),
        may_alias: HashSet::new(),
        alias_root: HashMap::new(),
        channels_last: target.channels_last(graph),
        target,
        realized: HashMap::new(),
        rebound: Vec::new(),
        home: home_device(graph),
        node_dtype: None,
        node_sizes: None,
        node_pieces: None,
        segment: host_segments(graph, &attn_plan),
        symbolic: graph_is_symbolic(graph),
        output_leaves: output_leaves(graph).into_iter().collect(),
        viewed_out: viewed_out_nodes(graph),
        lazy_node: HashMap::new(),
        current: None,
        padded: HashSet::new(),
        zero_padded: HashMap::new(),
        padded_products: HashSet::new(),
        free_outputs: free_outputs.iter().copied().collect(),
        position: graph
            .nodes()
            .enumerate()
            .map(|(i, (id, _))| (id, i))
            .collect(),
        attn_skip: attn_plan.skip.clone(),
    };
    let attn = attn_plan;
    let mut outputs = None;
    for (id, node) in graph.nodes() {
        if attn.skip.contains(&id) {
            continue;
        }
        if let Some(m) = attn.finals.get(&id) {
            if l.lower_attention(id, m)? {
                continue;
            }
            return Err(InductorError::Unsupported(format!(
                "attention at {} could not be lowered",
                node.name
            )));
        }
        match &node.kind {
            NodeKind::Placeholder { index } => {
                l.ir.num_inputs = l.ir.num_inputs.max(index + 1);
                match &node.meta {
                    // A symbolic int input (automatic dynamic made a Python int argument
                    // symbolic): its readers take its expression from the metadata, as for a
                    // size computation ([`Lowerer::size_arg`], [`elementwise::operand`]); its
                    // value reaches the kernels as a symbol's (read from the int on a call).
                    NodeMeta::SymInt(_) | NodeMeta::SymFloat(_) => continue,
                    // The same graph specialized to one value (`fx::passes::specialize`): a
                    // number, as if traced with the int as a constant.
                    NodeMeta::Int(v) => {
                        l.env.insert(id, LValue::Scalar(Scalar::I(*v)));
                        continue;
                    }
                    _ => {}
                }
                let t = known_tensor(&node.meta).ok_or_else(|| {
                    InductorError::Unsupported(format!(
                        "input {} is not a tensor of known sizes",
                        node.name
                    ))
                })?;
                let (sizes, strides) = (meta_sizes(t), meta_strides(t));
                let buf = l.ir.add_buffer(
                    t.dtype,
                    sizes.clone(),
                    strides.clone(),
                    BufKind::Input(*index),
                );
                l.ir.num_inputs = l.ir.num_inputs.max(index + 1);
                l.env.insert(
                    id,
                    LValue::Tensor(TensorVal::buffer(buf, t.dtype, sizes, strides)),
                );
            }
            NodeKind::Call {
                target,
                args,
                kwargs,
            } => l.lower_node(id, target, args, kwargs)?,
            NodeKind::Output { values } => outputs = Some(values.clone()),
        }
    }
    let values =
        outputs.ok_or_else(|| InductorError::Malformed("graph has no output node".into()))?;
    l.lower_outputs(&values)?;
    l.write_back_inputs()?;
    Ok(l.ir)
}

/// [`Lowerer::segment`]: a node that will run on the host (a [`MEMORY_READERS`] or
/// [`HOST_OPS`] call, a recognised attention chain, a call the op table has no lowering for)
/// starts a new segment after itself. A prediction made before lowering: an op whose lowering
/// fails falls back without being counted, which only makes two readers look closer.
fn host_segments(graph: &Graph, attn: &attention::AttnPlan) -> HashMap<NodeId, usize> {
    let mut seg = 0;
    let mut out = HashMap::new();
    for (id, node) in graph.nodes() {
        out.insert(id, seg);
        if !matches!(node.kind, NodeKind::Call { .. }) || attn.skip.contains(&id) {
            continue;
        }
        let host = attn.finals.contains_key(&id)
            || match canonical_call(graph, id) {
                Some(c) => {
                    MEMORY_READERS.contains(&c.name.as_str()) || HOST_OPS.contains(&c.name.as_str())
                }
                None => !matches!(node.meta, NodeMeta::SymInt(_) | NodeMeta::SymFloat(_)),
            };
        if host {
            seg += 1;
        }
    }
    out
}

/// The nodes a graph's outputs are.
fn output_leaves(graph: &Graph) -> Vec<NodeId> {
    let mut leaves = Vec::new();
    for (_, node) in graph.nodes() {
        if let NodeKind::Output { values } = &node.kind {
            values.iter().for_each(|v| push_nodes(v, &mut leaves));
        }
    }
    leaves
}

/// [`Lowerer::viewed_out`]: the nodes a graph output may view (through one or more views or
/// in-place ops: any call the catalog says may alias, and calls it does not know), not
/// counting the outputs themselves.
fn viewed_out_nodes(graph: &Graph) -> HashSet<NodeId> {
    let mut stack = Vec::new();
    for n in output_leaves(graph) {
        push_viewed(graph, n, &mut stack);
    }
    let mut out = HashSet::new();
    while let Some(n) = stack.pop() {
        if out.insert(n) {
            push_viewed(graph, n, &mut stack);
        }
    }
    out
}

/// Pushes the nodes whose storage node `n`'s value may share (its arguments, when it is a
/// call that may alias them).
fn push_viewed(graph: &Graph, n: NodeId, stack: &mut Vec<NodeId>) {
    if let NodeKind::Call { args, kwargs, .. } = &graph.node(n).kind {
        if converts_dtype(graph, n) {
            return;
        }
        if canonical_call(graph, n).is_none_or(|c| c.may_alias) {
            args.iter().for_each(|a| push_nodes(a, stack));
            kwargs.iter().for_each(|(_, a)| push_nodes(a, stack));
        }
    }
}

fn push_nodes(a: &Arg, stack: &mut Vec<NodeId>) {
    match a {
        Arg::Node(n) => stack.push(*n),
        Arg::Tuple(xs) | Arg::List(xs) => xs.iter().for_each(|x| push_nodes(x, stack)),
        _ => {}
    }
}

/// Whether node `n` converts its input to another dtype (`x.float()` of a bfloat16 `x`): torch
/// returns a new tensor then, never a view, although the op may alias when the dtype is the same.
fn converts_dtype(graph: &Graph, n: NodeId) -> bool {
    const CONVERSIONS: &[&str] = &[
        "to", "type", "float", "double", "half", "bfloat16", "long", "int", "bool", "short",
        "char", "byte",
    ];
    let Some(c) = canonical_call(graph, n) else {
        return false;
    };
    let NodeKind::Call { args, .. } = &graph.node(n).kind else {
        return false;
    };
    let input = match args.first() {
        Some(Arg::Node(i)) => graph.node(*i).meta.tensor().map(|t| t.dtype),
        _ => None,
    };
    let out = graph.node(n).meta.tensor().map(|t| t.dtype);
    CONVERSIONS.contains(&c.name.as_str()) && input.is_some() && out.is_some() && input != out
}

/// A tensor meta (its sizes read through [`meta_sizes`], symbolic or not).
fn known_tensor(m: &NodeMeta) -> Option<&TensorMeta> {
    m.tensor()
}

impl<'g> Lowerer<'g> {
    /// A recognised attention chain as one extern call; `false` when the lowering refused it
    /// (its intermediates were skipped, so the graph cannot fall back per node).
    fn lower_attention(
        &mut self,
        id: NodeId,
        m: &attention::AttnMatch,
    ) -> Result<bool, InductorError> {
        let node = self.graph.node(id);
        let target = match &node.kind {
            NodeKind::Call { target, .. } => target,
            _ => return Ok(false),
        };
        let r = attention::lower_match(self, m)
            .map(LValue::Tensor)
            .and_then(|v| self.check_meta(v, &node.meta, target));
        match r {
            Ok(v) => {
                self.env.insert(id, v);
                Ok(true)
            }
            Err(Reject::Fatal(e)) => Err(e),
            Err(Reject::Fallback(reason)) => {
                tracing::debug!(target: "torchferro::inductor", "attention not fused: {reason}");
                Ok(false)
            }
        }
    }

    /// Runs lowering `f` after the dtype check. A panic in a lowering is a bug in it (a
    /// [`value::Decline`] is a lowering giving up): the op still runs correctly as a fallback.
    fn lower_guarded(
        &mut self,
        args: &[Arg],
        kwargs: &[(String, Arg)],
        meta: &NodeMeta,
        f: impl FnOnce(&mut Self) -> LResult<LValue>,
    ) -> LResult<LValue> {
        self.check_dtypes(args, kwargs, meta)?;
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(self))).unwrap_or_else(|e| {
            match e.downcast::<value::Decline>() {
                Ok(d) => Err(Reject::Fallback(d.0)),
                Err(_) => Err(Reject::Fallback("internal error in the lowering".into())),
            }
        })
    }

    fn lower_node(
        &mut self,
        id: NodeId,
        target: &fx::Target,
        args: &[Arg],
        kwargs: &[(String, Arg)],
    ) -> Result<(), InductorError> {
        let node = self.graph.node(id);
        if matches!(node.meta, NodeMeta::SymInt(_) | NodeMeta::SymFloat(_)) {
            // A size computation (`x.size(0)`, `T // 2`, `float(T)`): its readers take its
            // expression from the metadata ([`Self::size_arg`]); nothing runs.
            return Ok(());
        }
        if self.write_back(id)? {
            return Ok(());
        }
        let op = table::canonical(target, args, kwargs);
        let inplace_root = match &op {
            Some(c) if c.inplace => Some(self.check_inplace(id, args)?),
            _ => None,
        };
        if op.as_ref().is_some_and(|c| c.may_alias) {
            self.may_alias.insert(id);
        }
        let mark = (self.ir.nodes.next_key(), self.ir.buffers.next_key());
        self.current = Some(id);
        self.rebound.clear();
        self.node_dtype = node.meta.tensor().map(|t| t.dtype);
        self.node_sizes = node.meta.tensor().map(meta_sizes);
        self.node_pieces = match &node.meta {
            NodeMeta::Tuple(items) => items
                .iter()
                .map(|m| m.tensor().map(meta_sizes))
                .collect::<Option<Vec<_>>>(),
            _ => None,
        };
        let result = match (&op, self.off_device(&node.meta, args, kwargs)) {
            (_, Some(why)) => Err(Reject::Fallback(why)),
            (None, None)
                if target.name() == fx::passes::functionalize::VIEW_SCATTER
                    || target.name() == fx::passes::functionalize::ON_CLONE =>
            {
                // (A write into a complex tensor, `X[3:6] = 0` of an FFT's result, has no C
                // type: it runs through torch, as any op over such dtypes does.)
                self.lower_guarded(args, kwargs, &node.meta, |l| {
                    if target.name() == fx::passes::functionalize::VIEW_SCATTER {
                        view_scatter::lower(l, args, kwargs)
                    } else {
                        view_scatter::lower_on_clone(l, args, kwargs)
                    }
                })
            }
            (None, None) if target.name() == fx::autodiff::rules::MAX_POOL2D_BACKWARD => self
                .lower_guarded(args, kwargs, &node.meta, |l| {
                    pool::max_pool_backward(l, args).map(LValue::Tensor)
                }),
            (None, _) => Err(Reject::Fallback(format!(
                "no lowering for {}",
                target.name()
            ))),
            (Some(c), _) => self.lower_guarded(args, kwargs, &node.meta, |l| {
                table::lower(l, c, args, kwargs)
            }),
        };
        let result = result.and_then(|v| self.check_meta(v, &node.meta, target));
        let value = match result {
            Ok(v) => v,
            Err(Reject::Fatal(e)) => return Err(e),
            Err(Reject::Fallback(reason)) => {
                // Drop whatever the failed lowering emitted.
                self.ir.nodes.truncate(mark.0);
                self.ir.buffers.truncate(mark.1);
                self.undo_from(mark.1);
                if inplace_root.is_some() {
                    return Err(InductorError::Unsupported(format!(
                        "in-place {} cannot be lowered: {reason}",
                        target.name()
                    )));
                }
                let reason = format!("{} ({}): {reason}", target.name(), node.name);
                if self.symbolic {
                    // A fallback node's sizes are the host's values: a graph with symbolic
                    // sizes is lowered whole or not at all.
                    return Err(InductorError::Unsupported(
                        if reason.contains("symbolic sizes") {
                            reason
                        } else {
                            format!("symbolic sizes: {reason}")
                        },
                    ));
                }
                tracing::debug!(target: "torchferro::inductor", "fallback: {reason}");
                if op
                    .as_ref()
                    .is_some_and(|c| fallback::READS_STORAGE.contains(&c.name.as_str()))
                {
                    self.check_storage_arg(args)?;
                }
                self.fallback(id, target, args, kwargs, &node.meta, reason)?
            }
        };
        let value = match value {
            LValue::Tensor(t) if self.output_read_again(id, &t) => {
                // Inductor realizes a pointwise graph output where it is made: its other
                // readers (a training forward's saved pre-activation, read by the GELU after
                // it) read the buffer in the same kernel instead of computing it again.
                let strides = self.output_strides(id, &t);
                LValue::Tensor(self.realize_with(&t, strides))
            }
            LValue::Tensor(t) if self.should_realize(id, &t) => LValue::Tensor(self.realize(&t)),
            v => v,
        };
        if let LValue::Tensor(TensorVal {
            kind: Kind::Lazy { id: lazy, .. },
            ..
        }) = &value
        {
            self.lazy_node.entry(*lazy).or_insert(id);
        }
        if let Some(root) = inplace_root {
            // Every name of the mutated storage now reads the new value.
            for n in self.alias_family(root) {
                self.env.insert(n, value.clone());
            }
            self.alias_root.insert(id, root);
        }
        self.env.insert(id, value);
        Ok(())
    }

    /// Why a node must run through torch because it touches a tensor on another device than
    /// the one the kernels run on (a CUDA graph's CPU scalar, `torch.tensor(n)`, moved over
    /// with `.to(device)`): a kernel cannot address it, while torch's op takes it as eager
    /// does. Such a graph is compiled for its one CUDA device (`backend::cuda::placement`).
    fn off_device(
        &self,
        meta: &NodeMeta,
        args: &[Arg],
        kwargs: &[(String, Arg)],
    ) -> Option<String> {
        let kind = self.home;
        fn find<'m>(m: &'m NodeMeta, kind: &str) -> Option<&'m str> {
            match m {
                NodeMeta::Tensor(t) if t.device.kind != kind => Some(t.device.kind.as_str()),
                NodeMeta::Tuple(xs) => xs.iter().find_map(|x| find(x, kind)),
                _ => None,
            }
        }
        fn in_arg<'m>(g: &'m Graph, a: &Arg, kind: &str) -> Option<&'m str> {
            match a {
                Arg::Node(n) => find(&g.node(*n).meta, kind),
                Arg::Tuple(xs) | Arg::List(xs) => xs.iter().find_map(|x| in_arg(g, x, kind)),
                _ => None,
            }
        }
        let other = find(meta, kind).or_else(|| {
            args.iter()
                .chain(kwargs.iter().map(|(_, a)| a))
                .find_map(|a| in_arg(self.graph, a, kind))
        })?;
        Some(format!(
            "a tensor on {other} in a graph compiled for {kind} (runs through torch)"
        ))
    }

    /// In-place ops are lowered functionally and the mutated name rebound. That is only sound when
    /// no other tensor shares the storage, so mutation of (possible) views is refused.
    fn check_inplace(&self, id: NodeId, args: &[Arg]) -> Result<NodeId, InductorError> {
        let Some(Arg::Node(m)) = args.first() else {
            return Err(InductorError::Unsupported(
                "in-place op on a non-tensor".into(),
            ));
        };
        let root = *self.alias_root.get(m).unwrap_or(m);
        let family = self.alias_family(root);
        for n in &family {
            // Earlier in-place results are the root's storage itself, not views of it.
            if self.may_alias.contains(n) && !self.alias_root.contains_key(n) {
                return Err(InductorError::Unsupported(format!(
                    "in-place mutation of a view ({})",
                    self.graph.node(*n).name
                )));
            }
            for u in self.graph.users(*n) {
                if u != id
                    && !self.is_inplace_op(u)
                    && (self.may_alias.contains(&u) || self.is_alias_op(u))
                {
                    return Err(InductorError::Unsupported(format!(
                        "in-place mutation of {} which has views",
                        self.graph.node(*n).name
                    )));
                }
            }
        }
        Ok(root)
    }

    /// An in-place call: its result is its first argument's storage (handled by rebinding), and it
    /// makes no view of any other argument.
    fn is_inplace_op(&self, u: NodeId) -> bool {
        canonical_call(self.graph, u).is_some_and(|c| c.inplace)
    }

    fn is_alias_op(&self, u: NodeId) -> bool {
        canonical_call(self.graph, u).is_some_and(|c| c.may_alias)
    }

    /// Every name of the storage rooted at `root`: the in-place results written into it, then
    /// the root.
    fn alias_family(&self, root: NodeId) -> Vec<NodeId> {
        self.alias_root
            .iter()
            .filter(|(_, r)| **r == root)
            .map(|(n, _)| *n)
            .chain([root])
            .collect()
    }

    fn check_dtypes(&self, args: &[Arg], kwargs: &[(String, Arg)], meta: &NodeMeta) -> LResult<()> {
        let mut nodes = Vec::new();
        args.iter().for_each(|a| a.nodes(&mut nodes));
        kwargs.iter().for_each(|(_, a)| a.nodes(&mut nodes));
        let mut metas: Vec<&NodeMeta> = nodes.iter().map(|n| &self.graph.node(*n).meta).collect();
        metas.push(meta);
        fn ok(target: &Target, m: &NodeMeta) -> bool {
            match m {
                NodeMeta::Tensor(t) => target.supports_dtype(t.dtype),
                NodeMeta::Tuple(xs) => xs.iter().all(|x| ok(target, x)),
                _ => true,
            }
        }
        if metas.iter().all(|m| ok(self.target, m)) {
            Ok(())
        } else {
            args::fallback("dtype not supported by the CPU codegen")
        }
    }

    /// The lowering must reproduce the metadata torch computed; otherwise it is wrong.
    fn check_meta(&self, v: LValue, meta: &NodeMeta, target: &fx::Target) -> LResult<LValue> {
        fn same(v: &LValue, m: &NodeMeta) -> bool {
            match (v, m) {
                (LValue::Tensor(t), NodeMeta::Tensor(tm)) => {
                    tm.dtype == t.dtype && meta_sizes(tm) == t.sizes
                }
                (LValue::Tuple(vs), NodeMeta::Tuple(ms)) => {
                    vs.len() == ms.len() && vs.iter().zip(ms).all(|(v, m)| same(v, m))
                }
                (LValue::Scalar(_), NodeMeta::Int(_) | NodeMeta::Float(_) | NodeMeta::Bool(_)) => {
                    true
                }
                _ => false,
            }
        }
        if same(&v, meta) {
            Ok(v)
        } else {
            let got = match &v {
                LValue::Tensor(t) => format!("{:?} {:?}", t.dtype, t.sizes),
                _ => "a non-tensor".into(),
            };
            args::fallback(format!(
                "internal: lowering of {} gave {got}, metadata says otherwise",
                target.name()
            ))
        }
    }

    /// Whether node `id`'s lazy value is written to a buffer where it is made rather than
    /// inlined into each reader. Inductor's rules: many readers or a large body; and, for a
    /// value with several readers, one of them reading memory (an extern GEMM or convolution,
    /// through views), or a body costly to repeat (transcendental ops, an indirect load, many
    /// buffer reads). The
    /// last two keep a backward's `grad * gelu'(x)` from being computed once per GEMM and once
    /// more in the bias gradient's column sum.
    fn should_realize(&self, id: NodeId, t: &TensorVal) -> bool {
        if !matches!(t.kind, Kind::Lazy { .. }) {
            return false;
        }
        let users = self.graph.users(id).len();
        // A body that reads no memory (an `arange`, a position computed from the indices) is
        // index arithmetic each reader folds into its own indexing; stored, it would turn
        // every reader's affine access into a load (and a range-checked gather where it
        // indexes).
        if (users >= REALIZE_USERS && loads_per_point(t) > 0) || t.ops() > REALIZE_OPS {
            return true;
        }
        users > 1
            && (self.feeds_memory_reader(id)
                || costly_to_repeat(t, !matches!(self.target, Target::Cuda(_)))
                || (self.read_across_host_steps(id) && loads_per_point(t) >= REALIZE_SPLIT_LOADS))
    }

    /// Whether node `id`'s readers (looking through views) lie in different segments
    /// ([`Self::segment`]): its body would be inlined into kernels on both sides of a host
    /// step. Inductor's scheduler stores such a value once (it is a buffer read by two fused
    /// nodes); ours inlines lazily, so the choice is made here.
    fn read_across_host_steps(&self, id: NodeId) -> bool {
        let mut stack = vec![id];
        let mut seen = HashSet::new();
        let mut segs = HashSet::new();
        while let Some(n) = stack.pop() {
            for u in self.graph.users(n) {
                if !seen.insert(u) {
                    continue;
                }
                match canonical_call(self.graph, u) {
                    Some(c) if c.may_alias && !c.inplace => stack.push(u),
                    _ => {
                        segs.insert(self.segment.get(&u).copied().unwrap_or(usize::MAX));
                    }
                }
            }
        }
        segs.len() > 1
    }

    /// A lazy value that is a graph output and has other users too.
    fn output_read_again(&self, id: NodeId, t: &TensorVal) -> bool {
        let users = self.graph.users(id);
        matches!(t.kind, Kind::Lazy { .. })
            && users.len() > 1
            && users
                .iter()
                .any(|&u| matches!(self.graph.node(u).kind, NodeKind::Output { .. }))
    }

    /// The strides a lazy graph output is written in: eager's when dense (what
    /// [`Self::lower_outputs`] would choose), else contiguous.
    fn output_strides(&self, id: NodeId, t: &TensorVal) -> Vec<Size> {
        known_tensor(&self.graph.node(id).meta)
            .map(meta_strides)
            .filter(|s| dense_strides(&t.sizes, s))
            .unwrap_or_else(|| contiguous_strides_sym(&t.sizes))
    }

    /// Whether a user of `id`, looking through views, is a [`MEMORY_READERS`] op.
    fn feeds_memory_reader(&self, id: NodeId) -> bool {
        let mut stack = vec![id];
        let mut seen = HashSet::new();
        while let Some(n) = stack.pop() {
            for u in self.graph.users(n) {
                if !seen.insert(u) {
                    continue;
                }
                match canonical_call(self.graph, u) {
                    Some(c) if MEMORY_READERS.contains(&c.name.as_str()) => return true,
                    Some(c) if c.may_alias && !c.inplace => stack.push(u),
                    _ => {}
                }
            }
        }
        false
    }

    pub fn value(&self, a: &Arg) -> LResult<LValue> {
        if let Arg::Node(n) = a {
            match &self.graph.node(*n).meta {
                NodeMeta::SymInt(e) => {
                    return args::fallback(format!(
                        "symbolic sizes: the symbolic int {e} as an operand"
                    ))
                }
                NodeMeta::SymFloat(f) => {
                    return args::fallback(format!(
                        "symbolic sizes: the symbolic float {f} as an operand"
                    ))
                }
                _ => {}
            }
        }
        Ok(match a {
            Arg::Node(n) => self.env.get(n).cloned().ok_or_else(|| {
                Reject::Fatal(InductorError::Malformed("use before definition".into()))
            })?,
            Arg::Int(i) => LValue::Scalar(Scalar::I(*i)),
            Arg::Float(f) => LValue::Scalar(Scalar::F(*f)),
            Arg::Bool(b) => LValue::Scalar(Scalar::B(*b)),
            _ => return args::fallback(format!("unsupported argument {a:?}")),
        })
    }

    pub fn tensor(&self, a: &Arg) -> LResult<TensorVal> {
        match self.value(a)? {
            LValue::Tensor(t) => Ok(t),
            _ => args::fallback("expected a tensor argument"),
        }
    }

    /// Writes a lazy tensor to a fresh buffer ([`Self::fresh_strides`]); one with padded rows
    /// is written out to the padded width, zeros past the value's last column.
    pub fn realize(&mut self, t: &TensorVal) -> TensorVal {
        if let Some(r) = self.already_realized(t) {
            return r;
        }
        let lazy = match t.kind {
            Kind::Lazy { id, .. } => Some(id),
            Kind::Strided { .. } => None,
        };
        let strides = self.fresh_strides(&t.sizes, t.dtype, lazy);
        if let Some(r) = self.realize_zero_padded(t, &strides) {
            return r;
        }
        self.in_fresh_buffer(&t.sizes, t.dtype, lazy, |l, strides| {
            l.realize_with(t, strides)
        })
    }

    /// `t` realized into a buffer of `strides` whose last dim is padded (the last-but-one
    /// stride `w` past the last size `n`, every stride dense over the widened sizes): the
    /// buffer is `[.., w]` and its kernel writes `w` elements a row, zeros past `n` (the pad
    /// costs `w / n - 1` more stores, 0.09% for GPT-2's 50257 logits, and makes the rows full
    /// ones: the buffer is then the zero-padded operand a GEMM over that length takes,
    /// [`Self::zero_padded`]). The value is the buffer's first `n` columns. `None` where the
    /// strides are not such a padding.
    fn realize_zero_padded(&mut self, t: &TensorVal, strides: &[Size]) -> Option<TensorVal> {
        if !self.is_padded(&t.sizes, strides) || t.ndim() < 2 {
            return None;
        }
        let sizes = as_consts(&t.sizes)?;
        let st = as_consts(strides)?;
        let d = sizes.len() - 1;
        let (n, w) = (sizes[d], st[d - 1]);
        let mut wide = sizes.clone();
        wide[d] = w;
        if st[d] != 1 || w <= n || contiguous_strides_sym(&consts(&wide)) != strides {
            return None;
        }
        let resolved = self.resolve(t);
        let src = resolved.as_ref().unwrap_or(t);
        let padded = extern_ops::zero_pad(src, d, w);
        let buf = self
            .ir
            .add_buffer(t.dtype, consts(&wide), strides.to_vec(), BufKind::Computed);
        self.store(buf, &padded);
        let full = TensorVal::buffer(buf, t.dtype, consts(&wide), strides.to_vec());
        let realized = full.slice(d, Size::Const(0), Size::Const(n), 1);
        self.padded.insert(buf);
        self.zero_padded.insert(buf, (n, w));
        self.remember_realized(t, &realized);
        Some(realized)
    }

    /// `write`'s result, written with [`Self::fresh_strides`] into a buffer that is marked
    /// [`Self::padded`] when those strides are padded ones.
    pub(super) fn in_fresh_buffer(
        &mut self,
        sizes: &[Size],
        dtype: fx::DType,
        lazy: Option<u64>,
        write: impl FnOnce(&mut Self, Vec<Size>) -> TensorVal,
    ) -> TensorVal {
        let strides = self.fresh_strides(sizes, dtype, lazy);
        let padded = self.is_padded(sizes, &strides);
        let r = write(self, strides);
        if padded {
            self.padded.extend(r.as_view().map(|v| v.buf));
        }
        r
    }

    /// Whether node `n`'s value is, or shares storage with, a graph output.
    fn escapes(&self, n: NodeId) -> bool {
        self.output_leaves.contains(&n) || self.viewed_out.contains(&n)
    }

    /// Whether `strides` are [`Self::fresh_strides`]' padded ones for `sizes`.
    pub fn is_padded(&self, sizes: &[Size], strides: &[Size]) -> bool {
        !(self.channels_last && sizes.len() == 4) && strides != contiguous_strides_sym(sizes)
    }

    /// The strides of a fresh intermediate buffer: channels-last for 4-d tensors of a graph
    /// that convolves on the CPU, padded rows on CUDA ([`Target::padded_strides`]) unless the
    /// value may be handed out (the current node's or `lazy`'s node reaches an output: outputs
    /// have eager's strides), else dense.
    pub fn fresh_strides(&self, sizes: &[Size], dtype: fx::DType, lazy: Option<u64>) -> Vec<Size> {
        let Some(c) = as_consts(sizes) else {
            return contiguous_strides_sym(sizes);
        };
        if self.channels_last && c.len() == 4 {
            return consts(&channels_last_strides(&c));
        }
        let escapes = self.current.is_some_and(|n| self.escapes(n))
            || lazy
                .and_then(|l| self.lazy_node.get(&l))
                .is_some_and(|&n| self.escapes(n));
        match self.target.padded_strides(&c, dtype) {
            Some(p) if !escapes => consts(&p),
            _ => contiguous_strides_sym(sizes),
        }
    }

    pub fn realize_with(&mut self, t: &TensorVal, strides: Vec<Size>) -> TensorVal {
        if let Some(r) = self.already_realized(t) {
            if r.as_view()
                .is_some_and(|v| v.offset == 0 && v.strides == strides)
            {
                return r;
            }
        }
        // A lazy view of a realized base copies from its buffer (no recomputation).
        let resolved = self.resolve(t);
        let src = resolved.as_ref().unwrap_or(t);
        let buf = self
            .ir
            .add_buffer(t.dtype, t.sizes.clone(), strides.clone(), BufKind::Computed);
        self.store(buf, src);
        let realized = TensorVal::buffer(buf, t.dtype, t.sizes.clone(), strides);
        self.remember_realized(t, &realized);
        realized
    }

    /// Binds lazy `t` to `realized`, its buffer.
    fn remember_realized(&mut self, t: &TensorVal, realized: &TensorVal) {
        // Later users of the same node read the buffer instead of inlining the computation a
        // second time (a max-pool read by a convolution, which realizes it, and by the residual
        // add after that convolution would otherwise be recomputed in the add's kernel).
        if let Kind::Lazy { id, .. } = t.kind {
            self.realized.entry(id).or_insert_with(|| realized.clone());
            for (k, v) in self.env.iter_mut() {
                if matches!(v, LValue::Tensor(TensorVal { kind: Kind::Lazy { id: other, .. }, .. }) if *other == id)
                {
                    let old = std::mem::replace(v, LValue::Tensor(realized.clone()));
                    self.rebound.push((*k, old));
                }
            }
        }
    }

    /// Undoes what a failed lowering did to the lowerer's state once its IR was dropped from
    /// `mark` on: names rebound to its buffers get their lazy values back, and realized values
    /// in its buffers are forgotten.
    fn undo_from(&mut self, mark: BufId) {
        for (k, old) in self.rebound.drain(..).rev() {
            self.env.insert(k, old);
        }
        self.realized
            .retain(|_, r| r.as_view().is_some_and(|v| v.buf < mark));
        self.zero_padded.retain(|b, _| *b < mark);
    }

    /// The values realized so far that a body reads back from their buffers (their views).
    fn stored_views(&self) -> ranges::Stored {
        self.realized
            .iter()
            .filter_map(|(id, r)| {
                let v = r.as_view()?;
                Some((*id, (v.buf, v.strides, v.offset)))
            })
            .collect()
    }

    /// Pointwise nodes writing `t` into `buf` (whose layout the nodes' indices follow): one
    /// over all of `t`, or one per range where `t` is a `cat` or reads one ([`ranges`]), or
    /// where its reads are masked by their bounds (a pool's windows: [`interior`]).
    pub fn store(&mut self, buf: BufId, t: &TensorVal) {
        // What was stored already is read back, also through a lazy view's loader: a view
        // that is not strided on its realized base (an `expand` then `reshape`, Llama's
        // `repeat_kv`) copies from the base's buffer instead of computing the base again.
        let stored = self.stored_views();
        let mut b = BodyBuilder::new(t.sizes.clone());
        b.stored = stored.clone();
        let vars = b.vars();
        let v = t.load(&mut b, &vars);
        let v = b.cast(v, self.ir.buffers[buf].dtype);
        let body = b.finish(v);
        if let Some((d, cuts)) = self.store_ranges(buf, t, &body) {
            return self.store_split(buf, t, d, &cuts, &stored);
        }
        if let Some(cuts) = self.store_interior(buf, t, &body) {
            return self.store_by_interior(buf, t, &cuts, &stored);
        }
        self.ir.nodes.push(IrNode::Pointwise {
            out: buf,
            sizes: t.sizes.clone(),
            body,
            offset: Size::Const(0),
        });
    }

    /// A strided view of `t`, realizing it first if it is lazy. A lazy view (a transpose, a
    /// reshape) of a lazy base covering all of it realizes the base, once, and views its
    /// buffer: the base's other readers then read that buffer too, instead of the view being
    /// realized as a second computation of the same values.
    pub fn view_of(&mut self, t: &TensorVal) -> crate::ir::View {
        if let Some(v) = t.as_view() {
            return v;
        }
        if let Some(r) = self.resolve(t) {
            return r.as_view().unwrap();
        }
        if let Some(lv) = t.lazy_view() {
            if sizes::covers(t.numel(), lv.base.numel()) {
                let base = lv.base.clone();
                self.realize(&base);
                if let Some(r) = self.resolve(t) {
                    return r.as_view().unwrap();
                }
            }
        }
        self.realize(t).as_view().unwrap()
    }

    /// `t` itself realized earlier, as its buffer.
    fn already_realized(&self, t: &TensorVal) -> Option<TensorVal> {
        self.realized.get(&t.lazy_id()?).cloned()
    }

    /// A lazy `t` as a strided view of a buffer realized earlier (`t` itself, or the base it
    /// is a view of when the view is strided on the base's layout), or `None`.
    fn resolve(&self, t: &TensorVal) -> Option<TensorVal> {
        if let Some(r) = self.already_realized(t) {
            return Some(r);
        }
        let lv = t.lazy_view()?;
        let base = self.already_realized(&lv.base)?.as_view()?;
        let (strides, offset) = (lv.strided)(&base.strides, base.offset)?;
        Some(TensorVal {
            dtype: t.dtype,
            sizes: t.sizes.clone(),
            kind: Kind::Strided {
                buf: base.buf,
                strides,
                offset,
            },
        })
    }
}

/// Elements `t`'s body loads per point (distinct buffer and index pairs, gathers included).
fn loads_per_point(t: &TensorVal) -> usize {
    let mut b = BodyBuilder::new(t.sizes.clone());
    let vars = b.vars();
    let v = t.load(&mut b, &vars);
    let body = b.finish(v);
    let deps = body.deps();
    let mut loads: Vec<(BufId, &crate::index::Idx)> = deps.loads.clone();
    loads.sort();
    loads.dedup();
    loads.len() + deps.gathers.len()
}

/// Whether inlining `t`'s body into each of several readers costs more than reading it from
/// memory: on the CPU (`heavy_math`) a transcendental op (Inductor's CPU rule names `exp` and
/// `sigmoid`; `erf`, `tanh`, `log` and `pow` cost as much in C); on every target an indirect
/// (gather) load, or more than [`REALIZE_READS`] buffers read. A GPU kernel over bf16
/// activations is bound by memory, not by its math (Inductor applies the heavy-op rule to the
/// CPU only): storing GPT-2's float32 `tanh` of the MLP's activations for the two backward
/// kernels that read it cost a kernel and 8 bytes an element more (three kernels of 52-80 us
/// a layer on an H100 where Triton runs one of 49, session 33).
fn costly_to_repeat(t: &TensorVal, heavy_math: bool) -> bool {
    use crate::ir::{BinOp, UnOp, Val};
    let mut b = BodyBuilder::new(t.sizes.clone());
    let vars = b.vars();
    let v = t.load(&mut b, &vars);
    let body = b.finish(v);
    let heavy = body.vals.iter().any(|v| match v {
        Val::Unary(op, _) => {
            heavy_math
                && matches!(
                    op,
                    UnOp::Exp
                        | UnOp::Exp2
                        | UnOp::Expm1
                        | UnOp::Log
                        | UnOp::Log2
                        | UnOp::Log10
                        | UnOp::Log1p
                        | UnOp::Sin
                        | UnOp::Cos
                        | UnOp::Tan
                        | UnOp::Asin
                        | UnOp::Acos
                        | UnOp::Atan
                        | UnOp::Sinh
                        | UnOp::Cosh
                        | UnOp::Tanh
                        | UnOp::Erf
                )
        }
        Val::Binary(op, ..) => heavy_math && matches!(op, BinOp::Pow | BinOp::Atan2),
        // A data-dependent load repeats its position load, range check and error report in
        // every reader (Llama's embedding, read by each RMSNorm and the residual add): Inductor
        // stores an indirectly indexed value once rather than recomputing it.
        Val::Gather { .. } => true,
        _ => false,
    });
    if heavy {
        return true;
    }
    let mut bufs: Vec<BufId> = body.deps().loads.iter().map(|(b, _)| *b).collect();
    bufs.sort();
    bufs.dedup();
    bufs.len() > REALIZE_READS
}
