//! Graph-to-graph cleanups: dead-code elimination, common-subexpression elimination, and a
//! consistency check (topological order, edges matching arguments).
//!
//! A torch-level graph has side effects that a pure dataflow view misses: in-place ops write
//! their inputs (and every view of them), random ops advance the generator, and some calls
//! exist only for their effect (`torch._C._set_grad_enabled`). Both passes therefore err on
//! keeping things: a node is removed or merged only when that cannot change what eager would
//! compute, return, or leave behind.

use std::collections::HashMap;

use crate::graph::{Arg, Graph, Node, NodeId, NodeKind, Target};
use crate::meta::{DType, Device};

/// Why a graph is malformed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum GraphError {
    #[error("{node} uses {input}, which does not come before it")]
    UseBeforeDefinition { node: String, input: String },
    #[error("{node} uses a node that is not in the graph")]
    DanglingUse { node: String },
    #[error("the edges into {node} do not match its arguments")]
    EdgeMismatch { node: String },
    #[error("the graph has {0} output nodes, expected at most one")]
    OutputCount(usize),
    #[error("the output node is not the last node")]
    OutputNotLast,
    #[error("placeholder {node} has index {index}, expected {expected}")]
    PlaceholderIndex {
        node: String,
        index: usize,
        expected: usize,
    },
}

/// Checks that every node only uses nodes before it, that petgraph's edges are exactly the
/// uses in the arguments, that there is at most one output and it is last, and that
/// placeholders are numbered 0, 1, ... in order.
pub fn check_topological_order(graph: &Graph) -> Result<(), GraphError> {
    let mut seen: HashMap<NodeId, usize> = HashMap::new();
    let nodes: Vec<(NodeId, &Node)> = graph.nodes().collect();
    let outputs = nodes
        .iter()
        .filter(|(_, n)| matches!(n.kind, NodeKind::Output { .. }))
        .count();
    if outputs > 1 {
        return Err(GraphError::OutputCount(outputs));
    }
    let mut placeholders = 0;
    for (pos, (id, node)) in nodes.iter().enumerate() {
        match node.kind {
            NodeKind::Output { .. } if pos + 1 != nodes.len() => {
                return Err(GraphError::OutputNotLast)
            }
            NodeKind::Placeholder { index } => {
                if index != placeholders {
                    return Err(GraphError::PlaceholderIndex {
                        node: node.name.clone(),
                        index,
                        expected: placeholders,
                    });
                }
                placeholders += 1;
            }
            _ => {}
        }
        let inputs = node.inputs();
        let mut uses: HashMap<NodeId, usize> = HashMap::new();
        for input in &inputs {
            if !graph.contains(*input) {
                return Err(GraphError::DanglingUse {
                    node: node.name.clone(),
                });
            }
            if !seen.contains_key(input) {
                return Err(GraphError::UseBeforeDefinition {
                    node: node.name.clone(),
                    input: graph.node(*input).name.clone(),
                });
            }
            *uses.entry(*input).or_default() += 1;
        }
        let mut edges: HashMap<NodeId, usize> = HashMap::new();
        for src in graph
            .petgraph()
            .neighbors_directed(*id, petgraph::Direction::Incoming)
        {
            *edges.entry(src).or_default() += 1;
        }
        if edges != uses {
            return Err(GraphError::EdgeMismatch {
                node: node.name.clone(),
            });
        }
        seen.insert(*id, pos);
    }
    Ok(())
}

pub use crate::ops::{is_mutating, is_random};

pub mod canonicalize;
pub mod functionalize;
pub mod specialize;

fn last_component(path: &str) -> &str {
    path.rsplit('.').next().unwrap_or(path)
}

/// Whether removing or merging this node could change what the program does: mutation,
/// randomness, or a known side effect. Placeholders and the output always count.
pub fn has_side_effects(node: &Node) -> bool {
    match &node.kind {
        NodeKind::Placeholder { .. } | NodeKind::Output { .. } => true,
        NodeKind::Call {
            target,
            args,
            kwargs,
        } => {
            crate::ops::mutated_arg(target, args, kwargs).is_some()
                || is_random(target)
                || crate::ops::is_effect(target)
        }
    }
}

/// Removes calls whose results nobody uses and that have no side effects (see
/// [`has_side_effects`]; `impure` marks more nodes to keep). Returns how many were removed.
pub fn eliminate_dead_code(graph: &mut Graph, impure: impl Fn(NodeId, &Node) -> bool) -> usize {
    let order: Vec<NodeId> = graph.nodes().map(|(id, _)| id).collect();
    let mut removed = 0;
    // Users come after their inputs, so one backwards sweep frees whole dead chains.
    for id in order.into_iter().rev() {
        let node = graph.node(id);
        if matches!(node.kind, NodeKind::Call { .. })
            && !has_side_effects(node)
            && !impure(id, node)
            && graph.users(id).is_empty()
        {
            graph.remove(id);
            removed += 1;
        }
    }
    removed
}

/// Ops whose result is a fresh tensor (never a view of an input) for sure; anything else may
/// alias its inputs as far as CSE is concerned.
fn allocates(target: &Target) -> bool {
    let name = last_component(target.name());
    let bare = name
        .strip_prefix("__")
        .and_then(|n| n.strip_suffix("__"))
        .unwrap_or(name);
    !crate::ops::may_alias(bare) && !name.ends_with('_')
}

/// Union-find over nodes that may share storage.
struct Aliases {
    parent: HashMap<NodeId, NodeId>,
}

impl Aliases {
    fn find(&mut self, n: NodeId) -> NodeId {
        let p = *self.parent.get(&n).unwrap_or(&n);
        if p == n {
            return n;
        }
        let root = self.find(p);
        self.parent.insert(n, root);
        root
    }

    /// Whether `n` may share storage with any of `nodes`.
    fn any_same(&mut self, nodes: &[NodeId], n: NodeId) -> bool {
        let root = self.find(n);
        nodes.iter().any(|&m| self.find(m) == root)
    }

    fn union(&mut self, a: NodeId, b: NodeId) {
        let (ra, rb) = (self.find(a), self.find(b));
        if ra != rb {
            self.parent.insert(ra, rb);
        }
    }
}

/// A call's identity for CSE: target and arguments, floats compared by bits (so `0.0` and
/// `-0.0`, which differ in results, never merge).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum ArgKey {
    Node(NodeId),
    None,
    Bool(bool),
    Int(i64),
    Float(u64),
    Str(String),
    DType(DType),
    Device(Device),
    Attr(String),
    Tuple(Vec<ArgKey>),
    List(Vec<ArgKey>),
    Slice(Box<[ArgKey; 3]>),
    Ellipsis,
}

fn arg_key(a: &Arg) -> ArgKey {
    match a {
        Arg::Node(n) => ArgKey::Node(*n),
        Arg::None => ArgKey::None,
        Arg::Bool(b) => ArgKey::Bool(*b),
        Arg::Int(i) => ArgKey::Int(*i),
        Arg::Float(f) => ArgKey::Float(f.to_bits()),
        Arg::Str(s) => ArgKey::Str(s.clone()),
        Arg::DType(d) => ArgKey::DType(*d),
        Arg::Device(d) => ArgKey::Device(d.clone()),
        Arg::TorchAttr(s) => ArgKey::Attr(s.clone()),
        Arg::Tuple(items) => ArgKey::Tuple(items.iter().map(arg_key).collect()),
        Arg::List(items) => ArgKey::List(items.iter().map(arg_key).collect()),
        Arg::Slice(a, b, c) => ArgKey::Slice(Box::new([arg_key(a), arg_key(b), arg_key(c)])),
        Arg::Ellipsis => ArgKey::Ellipsis,
    }
}

type CallKey = (Target, Vec<ArgKey>, Vec<(String, ArgKey)>);

fn call_key(node: &Node) -> Option<CallKey> {
    match &node.kind {
        NodeKind::Call {
            target,
            args,
            kwargs,
        } => {
            let mut kw: Vec<(String, ArgKey)> = kwargs
                .iter()
                .map(|(k, v)| (k.clone(), arg_key(v)))
                .collect();
            kw.sort_by(|a, b| a.0.cmp(&b.0));
            Some((target.clone(), args.iter().map(arg_key).collect(), kw))
        }
        _ => None,
    }
}

/// Merges calls with the same target and equal arguments into the first of them. Returns how
/// many calls were removed.
///
/// A call is merged only when it is pure (no side effects, not random, not `impure`), and
/// neither its result nor its inputs can be written by an in-place op anywhere in the graph
/// (through any alias), since a write between two equal calls makes their results differ.
/// Two results that both reach the graph's output stay separate, so the caller still gets two
/// distinct tensors.
pub fn eliminate_common_subexpressions(
    graph: &mut Graph,
    impure: impl Fn(NodeId, &Node) -> bool,
) -> usize {
    let order: Vec<NodeId> = graph.nodes().map(|(id, _)| id).collect();
    let keep = |id: NodeId, node: &Node| has_side_effects(node) || impure(id, node);
    let mut aliases = Aliases {
        parent: HashMap::new(),
    };
    let mut written = Vec::new();
    let mut escaping = Vec::new();
    for &id in &order {
        let node = graph.node(id);
        let inputs = node.inputs();
        match &node.kind {
            NodeKind::Call { target, .. } => {
                if !allocates(target) {
                    inputs.iter().for_each(|&i| aliases.union(id, i));
                }
                // Anything kept for its effects may write any of its inputs.
                if keep(id, node) {
                    written.extend(inputs.iter().copied());
                }
            }
            NodeKind::Output { .. } => escaping.extend(inputs.iter().copied()),
            NodeKind::Placeholder { .. } => {}
        }
    }
    let mut first: HashMap<CallKey, NodeId> = HashMap::new();
    let mut removed = 0;
    for id in order {
        let node = graph.node(id);
        if keep(id, node) {
            continue;
        }
        let Some(key) = call_key(node) else { continue };
        let stable = std::iter::once(id)
            .chain(node.inputs())
            .all(|n| !aliases.any_same(&written, n));
        if !stable {
            continue;
        }
        match first.get(&key) {
            None => {
                first.insert(key, id);
            }
            Some(&earlier) => {
                if aliases.any_same(&escaping, id) && aliases.any_same(&escaping, earlier) {
                    continue;
                }
                graph.replace_all_uses_with(id, earlier);
                graph.remove(id);
                // The survivor now stands for both, including where `id` escaped.
                aliases.union(id, earlier);
                removed += 1;
            }
        }
    }
    removed
}

#[cfg(test)]
mod tests;
