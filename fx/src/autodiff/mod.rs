//! Reverse-mode differentiation of a captured graph: the joint forward/backward pair that
//! training runs compiled (issue 17).
//!
//! The input is a canonical, functional graph ([`crate::passes::canonicalize`], then
//! functionalization): no op in it writes a tensor. [`joint`] walks it backwards from its
//! differentiable outputs and emits, per op, the vector-Jacobian product written in the
//! catalog's vocabulary ([`rules`]; the formulas are the facts of torch's `derivatives.yaml`).
//! The backward is a graph of its own whose inputs are the output tangents followed by the
//! forward values its rules read: the partition is "save what a rule reads" (the default
//! partitioner), and the bytes of those values are reported. An op without a rule makes the
//! whole derivation fail with [`AutodiffError::NoRule`] naming it: the caller then runs the
//! graph through torch's autograd, never a guessed gradient.

pub mod autocast;
pub mod components;
pub mod decompose;
pub mod fused_attention;
pub mod modes;
pub mod partition;
pub mod random;
pub mod rules;
pub mod watch;
pub mod writes;

use std::collections::{HashMap, HashSet};

use crate::graph::{Arg, Graph, NodeId, NodeKind, Target};
use crate::infer::{infer_in, InferCtx};
use crate::meta::{DType, NodeMeta, TensorMeta};

/// Why a graph cannot be differentiated here (it then runs through torch's autograd).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum AutodiffError {
    /// An op on the gradient path with no derivative rule (or a form of it the rule refuses).
    #[error("no derivative rule for {0}")]
    NoRule(String),
    /// Something the derivation needs is not known (symbolic sizes, metadata of a step).
    #[error("{0}")]
    Unsupported(String),
}

pub type Result<T> = std::result::Result<T, AutodiffError>;

/// Where a backward input comes from in the forward.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Saved {
    /// The forward's input (placeholder index): saved as it is.
    Input(usize),
    /// An extra output of the forward graph (its index among all forward outputs).
    Output(usize),
}

/// A forward graph and its backward.
#[derive(Clone, Debug)]
pub struct Joint {
    /// The forward graph: the user outputs first, then the values the backward reads.
    pub forward: Graph,
    /// How many outputs are the user's.
    pub user_outputs: usize,
    /// User outputs that get a tangent (the others are not differentiable).
    pub differentiable: Vec<usize>,
    /// The backward: inputs are one tangent per `differentiable` output, then `saved`; its
    /// outputs are the gradients of `grad_inputs`, in order.
    pub backward: Graph,
    pub saved: Vec<Saved>,
    /// The forward's inputs (placeholder indices) that get a gradient.
    pub grad_inputs: Vec<usize>,
    /// Bytes of the saved values that are not forward inputs (the activations kept alive).
    pub saved_bytes: u64,
    /// The forward node of each entry of `saved`.
    pub saved_nodes: Vec<NodeId>,
    /// The forward values eager's autograd would keep for this backward: what the rules read,
    /// except where eager's op keeps other tensors ([`rules::kept_by_eager`], a written-out
    /// group's [`decompose::kept_by_eager`]). [`watch`] checks their versions.
    pub eager_kept: Vec<NodeId>,
    /// (forward op, value) per value eager's backward keeps, as the first derivation found
    /// them: which op's backward node keeps it ([`watch::kept_then_overwritten`]: an in-place
    /// op's own read of the tensor it writes is eager's `original_self`, kept apart).
    pub eager_kept_by: Vec<(NodeId, NodeId)>,
    /// Forward values the backward computes again instead of reading them saved.
    pub recomputed: usize,
    /// Those values' forward nodes (a backward derived again for absent tangents,
    /// [`joint_without_tangents`], recomputes the same ones, so it reads a subset of `saved`).
    pub recompute_set: HashSet<NodeId>,
    /// (backward node, forward node) of each recomputation: a function node takes the
    /// forward's callable.
    pub recomputed_from: Vec<(NodeId, NodeId)>,
    /// Forward nodes whose target the derivation changed or added (dropout rewritten as a
    /// product with its noise): their callables are resolved by path.
    pub rewritten: Vec<NodeId>,
    /// Grad mode after the graph's last `torch._C._set_grad_enabled` (`true` without one): the
    /// forward runs with the switches taken out (inside the `autograd.Function` grad mode is
    /// off anyway), so the caller leaves grad mode where the traced code left it.
    pub grad_mode_at_end: bool,
    /// Inputs (placeholder indices) and user outputs (positions) sharing storage with a value
    /// eager's backward saves: their versions are checked at `.backward()` ([`watch`]).
    pub watched_inputs: Vec<usize>,
    pub watched_outputs: Vec<usize>,
    /// The storage roots of `eager_kept` as the first derivation found them
    /// ([`watch::saved_roots`]): with the functional graph's versions of its written inputs,
    /// which version of each written input eager's backward keeps ([`watch::written_kept`]).
    pub eager_roots: HashSet<NodeId>,
    /// Per entry of `differentiable`: its backward component ([`components`]); outputs of
    /// different components may be differentiated by separate `.backward()` calls.
    pub components: Vec<usize>,
    /// Per entry of `saved`: saved as a copy taken at the call (it shares storage with an input
    /// or a returned tensor eager's backward does not save, which the caller may write before
    /// `.backward()`).
    pub copied: Vec<bool>,
}

/// A call node's target, arguments and keyword arguments.
pub(crate) type CallParts<'a> = (&'a Target, &'a [Arg], &'a [(String, Arg)]);

/// The target, arguments and keyword arguments of call node `n` (`None` for another node).
pub(crate) fn call_parts(f: &Graph, n: NodeId) -> Option<CallParts<'_>> {
    match &f.node(n).kind {
        NodeKind::Call {
            target,
            args,
            kwargs,
        } => Some((target, args, kwargs)),
        _ => None,
    }
}

/// The bytes a tensor of `m` holds (sizes known), or 0.
pub fn tensor_bytes(m: &TensorMeta) -> u64 {
    m.known_sizes()
        .map(|s| s.iter().product::<i64>().max(0) as u64 * m.dtype.itemsize() as u64)
        .unwrap_or(0)
}

/// Derives the backward of `graph`. `requires_grad[i]`: whether placeholder `i` gets a
/// gradient. `overrides`: metadata to use for forward values (by forward node id) where the
/// backward reads them, e.g. the layouts the compiled forward actually produced, and for the
/// tangents (by differentiable-output position, in `tangents`).
pub fn joint(
    graph: &Graph,
    requires_grad: &[bool],
    overrides: &HashMap<NodeId, TensorMeta>,
    tangents: &HashMap<usize, TensorMeta>,
) -> Result<Joint> {
    joint_with(
        graph,
        requires_grad,
        overrides,
        tangents,
        false,
        &writes::Kept::new(),
    )
}

/// [`joint`], with training `batch_norm`s and class-index `cross_entropy` written out first when
/// `decompose` ([`decompose`]: for a forward the inductor compiles, which fuses the parts and
/// stores the running statistics without moving their version counters; on the eager runner
/// one op is faster and its `copy_` write-back would move them), and with in-place writes made
/// under `no_grad` to tensors that carry a gradient ([`writes`]): `kept` maps such a functional
/// node to the value it wrote; its gradient goes there unchanged, as eager keeps the written
/// tensor's history.
pub fn joint_with(
    graph: &Graph,
    requires_grad: &[bool],
    overrides: &HashMap<NodeId, TensorMeta>,
    tangents: &HashMap<usize, TensorMeta>,
    decompose: bool,
    kept: &writes::Kept,
) -> Result<Joint> {
    joint_inner(
        graph,
        requires_grad,
        overrides,
        tangents,
        decompose,
        kept,
        None,
    )
}

/// [`joint_with`]'s backward for a call where the tangents of `absent` (differentiable-output
/// positions) are `None`: outputs nothing downstream used (GPT-2's logits beside its loss).
/// They contribute nothing, so they are no backward inputs at all, where materialized zeros
/// cost a fill of the output's size and a read of it on every step. `recompute` is the
/// forward's partition ([`Joint::recompute_set`]): with the same recomputations and fewer
/// rules reached, the backward reads a subset of the values the forward saved.
#[allow(clippy::too_many_arguments)]
pub fn joint_without_tangents(
    graph: &Graph,
    requires_grad: &[bool],
    overrides: &HashMap<NodeId, TensorMeta>,
    tangents: &HashMap<usize, TensorMeta>,
    decompose: bool,
    kept: &writes::Kept,
    absent: &HashSet<usize>,
    recompute: &HashSet<NodeId>,
) -> Result<Joint> {
    joint_inner(
        graph,
        requires_grad,
        overrides,
        tangents,
        decompose,
        kept,
        Some((absent, recompute)),
    )
}

/// [`joint_with`], or with `fixed` = (absent tangents, recomputations) a backward derived for
/// absent tangents without a partition of its own.
fn joint_inner(
    graph: &Graph,
    requires_grad: &[bool],
    overrides: &HashMap<NodeId, TensorMeta>,
    tangents: &HashMap<usize, TensorMeta>,
    decompose: bool,
    kept: &writes::Kept,
    fixed: Option<(&HashSet<usize>, &HashSet<NodeId>)>,
) -> Result<Joint> {
    // Grad-mode switches leave the forward (it runs with grad mode off inside the Function);
    // what ran under `no_grad` stays out of the gradient path.
    let (no_grad, switches, grad_mode_at_end) = modes::grad_mode_regions(graph);
    let mut rewritten_graph = graph.clone();
    for s in switches {
        rewritten_graph.remove(s);
    }
    let needs0 = writes::needs_keeping(&rewritten_graph, requires_grad, &no_grad, kept);
    let mut rewritten =
        random::rewrite_sdpa_dropout(&mut rewritten_graph, &|n| needs0.contains(&n));
    rewritten.extend(random::rewrite_dropout(&mut rewritten_graph, &|n| {
        needs0.contains(&n)
    }));
    // Attention without dropout on torch's fused kernels: the fused forward and backward ops.
    rewritten.extend(fused_attention::rewrite_sdpa_fused(
        &mut rewritten_graph,
        &|n| needs0.contains(&n),
    ));
    // Training batch norms and cross entropies written out so their parts can be recomputed
    // and fused.
    let groups = if decompose {
        let (groups, functions) = decompose::rewrite(&mut rewritten_graph);
        rewritten.extend(functions);
        groups
    } else {
        HashMap::new()
    };
    let graph = &rewritten_graph;
    let needs = writes::needs_keeping(graph, requires_grad, &no_grad, kept);
    let rw = Rewrites {
        nodes: &rewritten,
        groups: &groups,
        kept,
    };
    let none = HashSet::new();
    let d = |recompute: &HashSet<NodeId>, absent: &HashSet<usize>| {
        derive(graph, &needs, overrides, tangents, absent, recompute, &rw)
    };
    if let Some((absent, recompute)) = fixed {
        let mut j = d(recompute, absent)?;
        j.grad_mode_at_end = grad_mode_at_end;
        return Ok(j);
    }
    let d = |recompute: &HashSet<NodeId>| d(recompute, &none);
    let first = d(&HashSet::new())?;
    let out_values = match graph.output_node().map(|o| &graph.node(o).kind) {
        Some(NodeKind::Output { values }) => values.clone(),
        _ => Vec::new(),
    };
    let mut roots = watch::saved_roots(graph, &first.eager_kept);
    let eager_kept_by = first.eager_kept_by.clone();
    let eager_roots = roots.clone();
    let pinned = watch::unsaved(graph, &roots);
    let recompute = partition::min_cut(graph, &first.saved_nodes, &pinned);
    let mut j = if recompute.is_empty() {
        first
    } else {
        d(&recompute)?
    };
    roots.extend(watch::read_outputs(graph, &j.saved_nodes, &out_values));
    let (watched_inputs, watched_outputs) = watch::watched(graph, &roots, &out_values);
    j.grad_mode_at_end = grad_mode_at_end;
    j.watched_inputs = watched_inputs;
    j.watched_outputs = watched_outputs;
    j.eager_roots = eager_roots;
    j.eager_kept_by = eager_kept_by;
    j.components = components::components(graph, &needs, &j.differentiable);
    j.copied = watch::copied(graph, &j.saved_nodes, &pinned);
    for (s, &c) in j.saved.iter().zip(&j.copied) {
        if let (Saved::Input(i), true) = (s, c) {
            if let Some(t) = graph.node(graph.placeholders()[*i]).meta.tensor() {
                j.saved_bytes += tensor_bytes(t);
            }
        }
    }
    Ok(j)
}

/// What rewrote the forward before the derivation: nodes whose target changed or was added,
/// decomposed groups (one backward rule each), and kept `no_grad` writes.
struct Rewrites<'a> {
    nodes: &'a [NodeId],
    groups: &'a HashMap<NodeId, decompose::Group>,
    kept: &'a writes::Kept,
}

/// The joint of the (rewritten) forward `graph`, recomputing the forward values of `recompute`
/// in the backward instead of saving them.
fn derive(
    graph: &Graph,
    needs: &HashSet<NodeId>,
    overrides: &HashMap<NodeId, TensorMeta>,
    tangents: &HashMap<usize, TensorMeta>,
    absent: &HashSet<usize>,
    recompute: &HashSet<NodeId>,
    rw: &Rewrites<'_>,
) -> Result<Joint> {
    let Rewrites {
        nodes: rewritten,
        groups,
        kept,
    } = *rw;
    let placeholders = graph.placeholders();
    let out_id = graph
        .output_node()
        .ok_or_else(|| AutodiffError::Unsupported("a graph without an output".into()))?;
    let NodeKind::Output { values } = &graph.node(out_id).kind else {
        unreachable!()
    };
    let mut differentiable = Vec::new();
    for (i, v) in values.iter().enumerate() {
        if let Arg::Node(n) = v {
            if needs.contains(n) && graph.node(*n).meta.tensor().is_some() {
                differentiable.push(i);
            }
        }
    }
    let mut bw = Bw {
        f: graph,
        g: Graph::new(),
        saved: Vec::new(),
        saved_of: HashMap::new(),
        needs,
        overrides,
        recompute,
        recomputed_from: Vec::new(),
        reads: Vec::new(),
    };
    // What eager would keep, rule by rule: the values each rule reads unless eager's op keeps
    // others.
    let mut eager_kept: Vec<NodeId> = Vec::new();
    // The op whose rule kept each entry of `eager_kept`.
    let mut kept_by: Vec<NodeId> = Vec::new();
    // Tangents first.
    let mut grads: HashMap<NodeId, NodeId> = HashMap::new();
    let mut tuple_grads: HashMap<NodeId, HashMap<usize, NodeId>> = HashMap::new();
    for (k, &i) in differentiable.iter().enumerate() {
        if absent.contains(&k) {
            continue;
        }
        let Arg::Node(n) = values[i] else {
            unreachable!()
        };
        let mut m = graph.node(n).meta.tensor().cloned().unwrap();
        if let Some(t) = tangents.get(&k) {
            m = t.clone();
        }
        m.requires_grad = false;
        let t =
            bw.g.placeholder(&format!("tangent_{k}"), NodeMeta::Tensor(m));
        bw.accumulate(&mut grads, n, t)?;
    }
    // Reverse walk.
    let order: Vec<NodeId> = graph.nodes().map(|(id, _)| id).collect();
    for &id in order.iter().rev() {
        if !needs.contains(&id) {
            continue;
        }
        let node = graph.node(id);
        let NodeKind::Call {
            target,
            args,
            kwargs,
        } = &node.kind
        else {
            continue;
        };
        if matches!(node.meta, NodeMeta::Tuple(_)) {
            let Some(parts) = tuple_grads.remove(&id) else {
                continue;
            };
            let mark = bw.reads.len();
            for (input, g) in rules::tuple_rule(&mut bw, id, target, args, kwargs, &parts)? {
                bw.accumulate(&mut grads, input, g)?;
            }
            eager_kept.extend_from_slice(&bw.reads[mark..]);
            kept_by.resize(eager_kept.len(), id);
            continue;
        }
        let Some(&g) = grads.get(&id) else { continue };
        if let Some(w) = writes::written(kept, needs, id) {
            bw.accumulate(&mut grads, w, g)?;
            continue;
        }
        let mark = bw.reads.len();
        if let Some(group) = groups.get(&id) {
            for (input, gi) in decompose::backward(&mut bw, group, g)? {
                bw.accumulate(&mut grads, input, gi)?;
            }
            eager_kept.extend(decompose::kept_by_eager(group, &bw.reads[mark..]));
            kept_by.resize(eager_kept.len(), id);
            continue;
        }
        // `tuple[i]` of a multi-output op: its gradient waits for the op's rule.
        if let Some((tuple, i)) = rules::tuple_item(graph, target, args) {
            if needs.contains(&tuple) {
                tuple_grads.entry(tuple).or_default().insert(i, g);
            }
            continue;
        }
        for (input, gi) in rules::rule(&mut bw, id, target, args, kwargs, g)? {
            if needs.contains(&input) {
                bw.accumulate(&mut grads, input, gi)?;
            }
        }
        eager_kept.extend(rules::kept_by_eager(graph, id, &bw.reads[mark..]));
        kept_by.resize(eager_kept.len(), id);
    }
    let mut grad_inputs = Vec::new();
    let mut outs = Vec::new();
    for &p in &placeholders {
        let NodeKind::Placeholder { index } = graph.node(p).kind else {
            continue;
        };
        if let Some(&g) = grads.get(&p) {
            grad_inputs.push(index);
            outs.push(Arg::Node(g));
        }
    }
    bw.g.output(outs);
    // The forward: user outputs, then the saved intermediates.
    let mut forward = graph.clone();
    let mut fvalues = values.clone();
    let user_outputs = fvalues.len();
    let mut saved = Vec::new();
    let mut saved_bytes = 0u64;
    for &n in &bw.saved {
        match graph.node(n).kind {
            NodeKind::Placeholder { index } => saved.push(Saved::Input(index)),
            _ => {
                saved.push(Saved::Output(fvalues.len()));
                fvalues.push(Arg::Node(n));
                if let Some(t) = graph.node(n).meta.tensor() {
                    saved_bytes += tensor_bytes(t);
                }
            }
        }
    }
    forward.set_output_values(out_id, fvalues);
    Ok(Joint {
        forward,
        user_outputs,
        differentiable,
        backward: bw.g,
        saved,
        grad_inputs,
        saved_bytes,
        saved_nodes: bw.saved.clone(),
        eager_kept_by: kept_by
            .into_iter()
            .zip(eager_kept.iter().copied())
            .collect(),
        eager_kept,
        recomputed: recompute.len(),
        recompute_set: recompute.clone(),
        recomputed_from: bw.recomputed_from.clone(),
        rewritten: rewritten.to_vec(),
        grad_mode_at_end: true,
        watched_inputs: Vec::new(),
        watched_outputs: Vec::new(),
        eager_roots: HashSet::new(),
        components: Vec::new(),
        copied: Vec::new(),
    })
}

/// Values that carry a gradient: float tensors reached from an input that requires grad by
/// ops that ran in grad mode (`no_grad`: the calls of a `no_grad` region).
pub(crate) fn needs_grad(
    graph: &Graph,
    requires_grad: &[bool],
    no_grad: &HashSet<NodeId>,
) -> HashSet<NodeId> {
    writes::needs_keeping(graph, requires_grad, no_grad, &writes::Kept::new())
}

/// The backward graph being built.
pub struct Bw<'a> {
    /// The forward graph.
    pub f: &'a Graph,
    pub g: Graph,
    /// Forward values read by the backward, in placeholder order.
    saved: Vec<NodeId>,
    saved_of: HashMap<NodeId, NodeId>,
    needs: &'a HashSet<NodeId>,
    overrides: &'a HashMap<NodeId, TensorMeta>,
    /// Forward values computed again in the backward instead of saved ([`partition`]).
    recompute: &'a HashSet<NodeId>,
    /// (backward node, the forward node it computes again).
    recomputed_from: Vec<(NodeId, NodeId)>,
    /// Every forward value a rule asked for, in order, repeats included: the values of one
    /// rule are a slice of it (what eager would keep for that op, [`Joint::eager_kept`]).
    reads: Vec<NodeId>,
}

impl<'a> Bw<'a> {
    /// Whether forward value `n` carries a gradient.
    pub fn needs(&self, n: NodeId) -> bool {
        self.needs.contains(&n)
    }

    /// The backward's input holding forward value `n` (made on first use: saved for backward).
    pub fn fwd(&mut self, n: NodeId) -> NodeId {
        self.reads.push(n);
        if let Some(&b) = self.saved_of.get(&n) {
            return b;
        }
        let node = self.f.node(n);
        if self.recompute.contains(&n) {
            if let NodeKind::Call {
                target,
                args,
                kwargs,
            } = &node.kind
            {
                let args: Vec<Arg> = args.iter().map(|a| self.map_arg(a)).collect();
                let kwargs: Vec<(String, Arg)> = kwargs
                    .iter()
                    .map(|(k, a)| (k.clone(), self.map_arg(a)))
                    .collect();
                let mut meta = node.meta.clone();
                if let NodeMeta::Tensor(t) = &mut meta {
                    t.requires_grad = false;
                }
                let b = self.g.call(&node.name, target.clone(), args, kwargs, meta);
                self.saved_of.insert(n, b);
                self.recomputed_from.push((b, n));
                return b;
            }
        }
        let mut meta = node.meta.clone();
        if let Some(o) = self.overrides.get(&n) {
            meta = NodeMeta::Tensor(o.clone());
        }
        if let NodeMeta::Tensor(t) = &mut meta {
            t.requires_grad = false;
        }
        let name = format!("saved_{}", node.name);
        let b = self.g.placeholder(&name, meta);
        self.saved.push(n);
        self.saved_of.insert(n, b);
        b
    }

    /// A forward argument as the backward reads it (graph values through [`Self::fwd`]).
    fn map_arg(&mut self, a: &Arg) -> Arg {
        match a {
            Arg::Node(n) => Arg::Node(self.fwd(*n)),
            Arg::Tuple(v) => Arg::Tuple(v.iter().map(|x| self.map_arg(x)).collect()),
            Arg::List(v) => Arg::List(v.iter().map(|x| self.map_arg(x)).collect()),
            // A bound that is a symbolic int input (`x[:k]` with `k` an argument automatic
            // dynamic made a graph input): the backward reads it too. Left unmapped, the forward
            // node's id named whatever backward value has that id.
            Arg::Slice(a, b, c) => Arg::Slice(
                Box::new(self.map_arg(a)),
                Box::new(self.map_arg(b)),
                Box::new(self.map_arg(c)),
            ),
            other => other.clone(),
        }
    }

    /// Forward metadata of tensor `n`.
    pub fn fmeta(&self, n: NodeId) -> Result<&'a TensorMeta> {
        self.f.node(n).meta.tensor().ok_or_else(|| {
            AutodiffError::Unsupported("a non-tensor value on the gradient path".into())
        })
    }

    /// Backward metadata of tensor `n`.
    pub fn bmeta(&self, n: NodeId) -> Result<TensorMeta> {
        self.g
            .node(n)
            .meta
            .tensor()
            .cloned()
            .ok_or_else(|| AutodiffError::Unsupported("a non-tensor backward value".into()))
    }

    /// Known sizes of backward value `n`.
    pub fn bsizes(&self, n: NodeId) -> Result<Vec<i64>> {
        self.bmeta(n)?
            .known_sizes()
            .ok_or_else(|| AutodiffError::Unsupported("symbolic sizes".into()))
    }

    /// Known sizes of forward value `n`.
    pub fn fsizes(&self, n: NodeId) -> Result<Vec<i64>> {
        self.fmeta(n)?
            .known_sizes()
            .ok_or_else(|| AutodiffError::Unsupported("symbolic sizes".into()))
    }

    /// A call in the backward, its metadata inferred as the forward's is.
    pub fn call(
        &mut self,
        target: Target,
        args: Vec<Arg>,
        kwargs: Vec<(String, Arg)>,
    ) -> Result<NodeId> {
        let ctx = InferCtx {
            grad_enabled: false,
            ..InferCtx::default()
        };
        // Ops whose result is laid out as their receiver (scatters into a fresh zeros tensor).
        const LIKE_SELF: &[&str] = &[
            "index_add",
            "scatter",
            "select_scatter",
            "slice_scatter",
            "sgn",
        ];
        if let (Target::Method(m), Some(Arg::Node(recv))) = (&target, args.first()) {
            if LIKE_SELF.contains(&m.as_str()) {
                let rm = self.bmeta(*recv)?;
                let meta = TensorMeta::contiguous(
                    rm.dtype,
                    rm.device.clone(),
                    &rm.known_sizes().unwrap_or_default(),
                );
                let hint = m.clone();
                return Ok(self
                    .g
                    .call(&hint, target, args, kwargs, NodeMeta::Tensor(meta)));
            }
        }
        let meta = infer_in(&ctx, &self.g, &target, &args, &kwargs).map_err(|e| {
            AutodiffError::Unsupported(format!(
                "metadata of {} in the backward: {e}",
                target.name()
            ))
        })?;
        let hint = target.name().rsplit('.').next().unwrap_or("t").to_string();
        Ok(self.g.call(&hint, target, args, kwargs, meta))
    }

    /// A call with metadata given by the rule (ops `fx::infer` does not model).
    pub fn call_with_meta(&mut self, target: Target, args: Vec<Arg>, meta: TensorMeta) -> NodeId {
        let hint = target.name().rsplit('.').next().unwrap_or("t").to_string();
        self.g
            .call(&hint, target, args, vec![], NodeMeta::Tensor(meta))
    }

    /// A call with any metadata (a tuple-producing extern call).
    pub fn raw(&mut self, hint: &str, target: Target, args: Vec<Arg>, meta: NodeMeta) -> NodeId {
        self.g.call(hint, target, args, vec![], meta)
    }

    /// `t` in float32 when it is a half-precision float, any other tensor as it is: batch
    /// norm's backward computes as torch's kernels accumulate, whatever the activations' dtype.
    pub fn float32(&mut self, t: NodeId) -> Result<NodeId> {
        match self.bmeta(t)?.dtype {
            DType::Float16 | DType::BFloat16 => self.m("to", t, vec![Arg::DType(DType::Float32)]),
            _ => Ok(t),
        }
    }

    /// `recv.method(*args)`.
    pub fn m(&mut self, method: &str, recv: NodeId, args: Vec<Arg>) -> Result<NodeId> {
        let mut a = vec![Arg::Node(recv)];
        a.extend(args);
        self.call(Target::Method(method.into()), a, vec![])
    }

    /// `recv.method(*args, **kwargs)`.
    pub fn mk(
        &mut self,
        method: &str,
        recv: NodeId,
        args: Vec<Arg>,
        kwargs: Vec<(&str, Arg)>,
    ) -> Result<NodeId> {
        let mut a = vec![Arg::Node(recv)];
        a.extend(args);
        let kw = kwargs
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect();
        self.call(Target::Method(method.into()), a, kw)
    }

    /// Adds `g` into the gradient of forward value `n`, cast to `n`'s dtype.
    fn accumulate(
        &mut self,
        grads: &mut HashMap<NodeId, NodeId>,
        n: NodeId,
        g: NodeId,
    ) -> Result<()> {
        let g = self.cast_like(g, n)?;
        let total = match grads.get(&n) {
            Some(&prev) => self.m("add", prev, vec![Arg::Node(g)])?,
            None => g,
        };
        grads.insert(n, total);
        Ok(())
    }

    /// `g` in forward value `n`'s dtype (a gradient has its input's dtype, as in eager).
    pub fn cast_like(&mut self, g: NodeId, n: NodeId) -> Result<NodeId> {
        let want = self.fmeta(n)?.dtype;
        let have = self.bmeta(g)?.dtype;
        if want == have {
            Ok(g)
        } else {
            self.m("to", g, vec![Arg::DType(want)])
        }
    }

    /// Sums `g` down to `sizes` (the gradient of a broadcast).
    pub fn reduce_to(&mut self, g: NodeId, sizes: &[i64]) -> Result<NodeId> {
        let have = self.bsizes(g)?;
        if have == sizes {
            return Ok(g);
        }
        let lead = have.len().saturating_sub(sizes.len());
        let mut dims: Vec<Arg> = (0..lead).map(|d| Arg::Int(d as i64)).collect();
        for (i, &s) in sizes.iter().enumerate() {
            if s == 1 && have[lead + i] != 1 {
                dims.push(Arg::Int((lead + i) as i64));
            }
        }
        let mut r = g;
        if !dims.is_empty() {
            r = self.m("sum", g, vec![Arg::List(dims), Arg::Bool(true)])?;
        }
        if self.bsizes(r)? != sizes {
            r = self.m("reshape", r, vec![ints(sizes)])?;
        }
        Ok(r)
    }

    /// A scalar multiple of `g` (no node for 1).
    pub fn scale(&mut self, g: NodeId, c: f64) -> Result<NodeId> {
        if c == 1.0 {
            Ok(g)
        } else {
            self.m("mul", g, vec![Arg::Float(c)])
        }
    }

    /// The dtype of backward value `n`.
    pub fn bdtype(&self, n: NodeId) -> Result<DType> {
        Ok(self.bmeta(n)?.dtype)
    }
}

/// A list of ints as an argument.
pub fn ints(v: &[i64]) -> Arg {
    Arg::List(v.iter().map(|&i| Arg::Int(i)).collect())
}
