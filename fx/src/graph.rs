//! The graph itself: nodes in a petgraph `StableGraph`, plus insertion order (which is a valid
//! topological order because a node can only use nodes that exist when it is added).

use petgraph::stable_graph::{NodeIndex, StableDiGraph};

use crate::meta::{DType, Device, NodeMeta};

pub type NodeId = NodeIndex<u32>;

/// What a call node calls.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Target {
    /// A Python callable by qualified path: `torch.add`, `torch.nn.functional.linear`,
    /// `operator.getitem`, `_operator.add`.
    Function(String),
    /// A tensor method by name, called on the first argument: `relu`, `view`, `add_`.
    Method(String),
}

impl Target {
    pub fn name(&self) -> &str {
        match self {
            Target::Function(s) | Target::Method(s) => s,
        }
    }
}

/// An argument of a call: a graph value or a Python constant, nested as torch.fx allows.
#[derive(Clone, Debug, PartialEq)]
pub enum Arg {
    Node(NodeId),
    None,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    DType(DType),
    Device(Device),
    /// `torch.memory_format` / `torch.layout` and other torch singletons, by qualified name
    /// (`torch.contiguous_format`).
    TorchAttr(String),
    Tuple(Vec<Arg>),
    List(Vec<Arg>),
    Slice(Box<Arg>, Box<Arg>, Box<Arg>),
    Ellipsis,
}

impl Arg {
    /// Every node this argument refers to, in order.
    pub fn nodes(&self, out: &mut Vec<NodeId>) {
        match self {
            Arg::Node(n) => out.push(*n),
            Arg::Tuple(items) | Arg::List(items) => items.iter().for_each(|a| a.nodes(out)),
            Arg::Slice(a, b, c) => {
                a.nodes(out);
                b.nodes(out);
                c.nodes(out);
            }
            _ => {}
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum NodeKind {
    /// A graph input. `index` is its position in the compiled function's arguments.
    Placeholder {
        index: usize,
    },
    Call {
        target: Target,
        args: Vec<Arg>,
        kwargs: Vec<(String, Arg)>,
    },
    Output {
        values: Vec<Arg>,
    },
}

#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    /// Unique, Python-identifier-safe name (`x`, `add`, `add_1`), used in printing and FX export.
    pub name: String,
    pub kind: NodeKind,
    pub meta: NodeMeta,
}

impl Node {
    /// The graph values this node reads, in argument order, repeated as often as they are used.
    pub fn inputs(&self) -> Vec<NodeId> {
        let mut out = Vec::new();
        match &self.kind {
            NodeKind::Call { args, kwargs, .. } => {
                args.iter().for_each(|a| a.nodes(&mut out));
                kwargs.iter().for_each(|(_, a)| a.nodes(&mut out));
            }
            NodeKind::Output { values } => values.iter().for_each(|a| a.nodes(&mut out)),
            NodeKind::Placeholder { .. } => {}
        }
        out
    }

    /// Every argument, for rewriting in place.
    fn args_mut(&mut self) -> Vec<&mut Arg> {
        match &mut self.kind {
            NodeKind::Call { args, kwargs, .. } => args
                .iter_mut()
                .chain(kwargs.iter_mut().map(|(_, a)| a))
                .collect(),
            NodeKind::Output { values } => values.iter_mut().collect(),
            NodeKind::Placeholder { .. } => Vec::new(),
        }
    }
}

impl Arg {
    /// Replaces every use of `old` with `new`; returns how many were replaced.
    fn replace_node(&mut self, old: NodeId, new: NodeId) -> usize {
        match self {
            Arg::Node(n) if *n == old => {
                *n = new;
                1
            }
            Arg::Tuple(items) | Arg::List(items) => {
                items.iter_mut().map(|a| a.replace_node(old, new)).sum()
            }
            Arg::Slice(a, b, c) => {
                a.replace_node(old, new) + b.replace_node(old, new) + c.replace_node(old, new)
            }
            _ => 0,
        }
    }
}

impl Arg {
    /// Replaces every use of `old` with the argument `new`; returns how many were replaced.
    pub fn replace_node_with(&mut self, old: NodeId, new: &Arg) -> usize {
        match self {
            Arg::Node(n) if *n == old => {
                *self = new.clone();
                1
            }
            Arg::Tuple(items) | Arg::List(items) => items
                .iter_mut()
                .map(|a| a.replace_node_with(old, new))
                .sum(),
            Arg::Slice(a, b, c) => {
                a.replace_node_with(old, new)
                    + b.replace_node_with(old, new)
                    + c.replace_node_with(old, new)
            }
            _ => 0,
        }
    }
}

/// Names the printed Python code relies on, cannot use, or should not shadow (builtins): a node
/// may not take them.
const RESERVED_NAMES: &[&str] = &[
    "abs",
    "all",
    "any",
    "bool",
    "dict",
    "divmod",
    "float",
    "getattr",
    "hash",
    "id",
    "int",
    "isinstance",
    "iter",
    "len",
    "list",
    "map",
    "max",
    "min",
    "object",
    "pow",
    "print",
    "range",
    "round",
    "set",
    "setattr",
    "slice",
    "sorted",
    "str",
    "sum",
    "tuple",
    "type",
    "zip",
    "self",
    "torch",
    "operator",
    "False",
    "None",
    "True",
    "and",
    "as",
    "assert",
    "async",
    "await",
    "break",
    "class",
    "continue",
    "def",
    "del",
    "elif",
    "else",
    "except",
    "finally",
    "for",
    "from",
    "global",
    "if",
    "import",
    "in",
    "is",
    "lambda",
    "nonlocal",
    "not",
    "or",
    "pass",
    "raise",
    "return",
    "try",
    "while",
    "with",
    "yield",
];

#[derive(Clone, Debug, Default)]
pub struct Graph {
    pub(crate) g: StableDiGraph<Node, ()>,
    /// Nodes in insertion order; removed nodes are dropped from it.
    pub(crate) order: Vec<NodeId>,
    names: std::collections::HashMap<String, usize>,
}

impl Graph {
    pub fn new() -> Graph {
        Graph::default()
    }

    fn unique_name(&mut self, base: &str) -> String {
        let mut clean: String = base
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        if clean.is_empty() || clean.chars().next().unwrap().is_ascii_digit() {
            clean.insert(0, '_');
        }
        if RESERVED_NAMES.contains(&clean.as_str()) {
            clean.push('_');
        }
        let n = self.names.entry(clean.clone()).or_insert(0);
        let name = if *n == 0 {
            clean
        } else {
            format!("{clean}_{n}")
        };
        *n += 1;
        // A generated `add_1` must not collide with a user-chosen base `add_1`.
        self.names.entry(name.clone()).or_insert(1);
        name
    }

    fn push(&mut self, name: &str, kind: NodeKind, meta: NodeMeta) -> NodeId {
        let name = self.unique_name(name);
        let mut uses = Vec::new();
        match &kind {
            NodeKind::Call { args, kwargs, .. } => {
                args.iter().for_each(|a| a.nodes(&mut uses));
                kwargs.iter().for_each(|(_, a)| a.nodes(&mut uses));
            }
            NodeKind::Output { values } => values.iter().for_each(|a| a.nodes(&mut uses)),
            NodeKind::Placeholder { .. } => {}
        }
        let id = self.g.add_node(Node { name, kind, meta });
        for u in uses {
            self.g.add_edge(u, id, ());
        }
        if matches!(self.g[id].kind, NodeKind::Placeholder { .. }) {
            // Inputs come first, as in torch.fx, whatever order the tracer met them in.
            let at = self
                .order
                .iter()
                .position(|&n| !matches!(self.g[n].kind, NodeKind::Placeholder { .. }))
                .unwrap_or(self.order.len());
            self.order.insert(at, id);
        } else {
            self.order.push(id);
        }
        id
    }

    pub fn placeholder(&mut self, name: &str, meta: NodeMeta) -> NodeId {
        let index = self.placeholders().len();
        self.push(name, NodeKind::Placeholder { index }, meta)
    }

    pub fn call(
        &mut self,
        name_hint: &str,
        target: Target,
        args: Vec<Arg>,
        kwargs: Vec<(String, Arg)>,
        meta: NodeMeta,
    ) -> NodeId {
        self.push(
            name_hint,
            NodeKind::Call {
                target,
                args,
                kwargs,
            },
            meta,
        )
    }

    /// A call node placed just before `before` in the node order (a rewrite that needs a
    /// value computed ahead of an existing node).
    pub fn call_before(
        &mut self,
        before: NodeId,
        name_hint: &str,
        target: Target,
        args: Vec<Arg>,
        kwargs: Vec<(String, Arg)>,
        meta: NodeMeta,
    ) -> NodeId {
        let id = self.call(name_hint, target, args, kwargs, meta);
        self.order.pop();
        let at = self.position(before).unwrap_or(self.order.len());
        self.order.insert(at, id);
        id
    }

    /// Replaces a call node's target and arguments, keeping the edges in step. Every node the
    /// new arguments use must come before it.
    pub fn set_call(
        &mut self,
        id: NodeId,
        target: Target,
        args: Vec<Arg>,
        kwargs: Vec<(String, Arg)>,
    ) {
        for n in self.g[id].inputs() {
            while let Some(e) = self.g.find_edge(n, id) {
                self.g.remove_edge(e);
            }
        }
        let mut uses = Vec::new();
        args.iter().for_each(|a| a.nodes(&mut uses));
        kwargs.iter().for_each(|(_, a)| a.nodes(&mut uses));
        for u in uses {
            self.g.add_edge(u, id, ());
        }
        self.g[id].kind = NodeKind::Call {
            target,
            args,
            kwargs,
        };
    }

    pub fn output(&mut self, values: Vec<Arg>) -> NodeId {
        self.push("output", NodeKind::Output { values }, NodeMeta::None)
    }

    pub fn node(&self, id: NodeId) -> &Node {
        &self.g[id]
    }

    pub fn node_mut(&mut self, id: NodeId) -> &mut Node {
        &mut self.g[id]
    }

    /// Nodes in a topological order (insertion order).
    pub fn nodes(&self) -> impl Iterator<Item = (NodeId, &Node)> + '_ {
        self.order.iter().map(move |&id| (id, &self.g[id]))
    }

    pub fn placeholders(&self) -> Vec<NodeId> {
        self.nodes()
            .filter(|(_, n)| matches!(n.kind, NodeKind::Placeholder { .. }))
            .map(|(id, _)| id)
            .collect()
    }

    pub fn output_node(&self) -> Option<NodeId> {
        self.nodes()
            .find(|(_, n)| matches!(n.kind, NodeKind::Output { .. }))
            .map(|(id, _)| id)
    }

    /// Number of call nodes (what "ops in a graph" counts).
    pub fn op_count(&self) -> usize {
        self.nodes()
            .filter(|(_, n)| matches!(n.kind, NodeKind::Call { .. }))
            .count()
    }

    /// Nodes that use `id`.
    pub fn users(&self, id: NodeId) -> Vec<NodeId> {
        let mut u: Vec<NodeId> = self
            .g
            .neighbors_directed(id, petgraph::Direction::Outgoing)
            .collect();
        u.sort();
        u.dedup();
        u
    }

    /// Whether `id` names a node still in the graph.
    pub fn contains(&self, id: NodeId) -> bool {
        self.g.contains_node(id)
    }

    /// Makes every user of `old` use `new` instead, keeping the petgraph edges in step with the
    /// arguments. Returns the number of uses rewritten. `new` must come before those users in
    /// the node order (as an earlier equivalent node does in CSE), or the order stops being
    /// topological.
    pub fn replace_all_uses_with(&mut self, old: NodeId, new: NodeId) -> usize {
        if old == new {
            return 0;
        }
        let mut total = 0;
        for user in self.users(old) {
            let count: usize = self.g[user]
                .args_mut()
                .into_iter()
                .map(|a| a.replace_node(old, new))
                .sum();
            while let Some(e) = self.g.find_edge(old, user) {
                self.g.remove_edge(e);
            }
            for _ in 0..count {
                self.g.add_edge(new, user, ());
            }
            total += count;
        }
        debug_assert!(self
            .users(new)
            .iter()
            .all(|u| self.position(new) < self.position(*u)));
        total
    }

    /// Makes every use of `old` the constant `new` instead (no node), dropping the edges from
    /// `old`: a size read that became a number once the graph's symbols have values
    /// ([`crate::passes::specialize`]). Returns the number of uses rewritten.
    pub fn replace_all_uses_with_arg(&mut self, old: NodeId, new: &Arg) -> usize {
        let mut total = 0;
        for user in self.users(old) {
            total += self.g[user]
                .args_mut()
                .into_iter()
                .map(|a| a.replace_node_with(old, new))
                .sum::<usize>();
            while let Some(e) = self.g.find_edge(old, user) {
                self.g.remove_edge(e);
            }
        }
        total
    }

    /// Replaces the values of output node `out` (keeping the edges in step): the forward of a
    /// joint graph returns extra values for its backward.
    pub fn set_output_values(&mut self, out: NodeId, values: Vec<Arg>) {
        let old: Vec<NodeId> = self.g[out].inputs();
        for n in old {
            while let Some(e) = self.g.find_edge(n, out) {
                self.g.remove_edge(e);
            }
        }
        let mut uses = Vec::new();
        values.iter().for_each(|a| a.nodes(&mut uses));
        for u in uses {
            self.g.add_edge(u, out, ());
        }
        self.g[out].kind = NodeKind::Output { values };
    }

    /// Index of `id` in the node order.
    pub(crate) fn position(&self, id: NodeId) -> Option<usize> {
        self.order.iter().position(|&n| n == id)
    }

    /// Remove a node with no users.
    pub fn remove(&mut self, id: NodeId) {
        debug_assert!(self.users(id).is_empty());
        self.g.remove_node(id);
        self.order.retain(|&n| n != id);
    }

    pub fn len(&self) -> usize {
        self.order.len()
    }

    pub fn is_empty(&self) -> bool {
        self.order.is_empty()
    }

    /// The underlying petgraph, for passes that want graph algorithms.
    pub fn petgraph(&self) -> &StableDiGraph<Node, ()> {
        &self.g
    }
}
