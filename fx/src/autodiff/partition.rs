//! The partition between forward and backward: which forward values the backward reads from
//! memory (saved) and which it computes again (recomputed).
//!
//! The derivation first saves every forward value a rule reads. [`min_cut`] then chooses, as
//! AOTAutograd's default partitioner does, the set of saved values of fewest bytes from which
//! the backward can compute every value its rules read, recomputing cheap pointwise ops and
//! views (chains of them too) in the backward, fused there into the kernels that read them: `gelu(h)` next to
//! a saved `h` costs no bytes. Matmuls, convolutions, reductions and random ops are never
//! recomputed: the first three cost more than their memory, and a random op would draw again
//! (upstream #190717). A dropout's noise is a saved value, never a recompute. Forward inputs
//! are free to save (they are alive anyway).
//!
//! The cut: every forward node `n` is an edge `n.in -> n.out` of capacity its bytes; a use of
//! `n` by `u` is an edge `n.out -> u.in`; the source feeds the inputs and every node that cannot
//! be recomputed, and every value a rule reads feeds the sink. A minimum cut separates what the
//! forward computes and saves (source side) from what the backward recomputes (sink side); the
//! cut edges are the saved values. An input eager's backward does not save is not free
//! ([`super::watch`]): the caller may write it between the call and `.backward()`, so a
//! recomputation reads a copy of it taken at the call, which costs its bytes.

use std::collections::{HashMap, HashSet, VecDeque};

use crate::graph::{Graph, NodeId, NodeKind};
use crate::ops;

/// Pointwise ops and views cheap enough to compute again in the backward (none draws random
/// numbers).
const RECOMPUTABLE: &[&str] = &[
    "add",
    "sub",
    "mul",
    "div",
    "neg",
    "exp",
    "log",
    "tanh",
    "sigmoid",
    "relu",
    "gelu",
    "silu",
    "sqrt",
    "rsqrt",
    "pow",
    "abs",
    "where",
    "masked_fill",
    "clamp",
    // Views (and reshapes, a copy only where a view cannot be made): recomputed from their
    // base they cost nothing, where saving one beside its base made the forward hand out two
    // outputs sharing a storage, which the inductor separates with a copy of the whole value
    // (GPT-2's logits: the 3-d user output and the 2-d view cross entropy reads, 103 MB
    // copied per step into fresh pages).
    "view",
    "view_as",
    "reshape",
    "flatten",
    "permute",
    "transpose",
    "t",
    "unsqueeze",
    "squeeze",
    "expand",
    "alias",
    // Casts (`logits.float()` on float32 is the tensor itself), a pointwise pass otherwise.
    "to",
    "type_as",
    "float",
    "contiguous",
];

/// Whether forward node `n` is a recomputable op (see [`RECOMPUTABLE`]).
fn cheap(f: &Graph, n: NodeId) -> bool {
    let Some((target, args, kwargs)) = super::call_parts(f, n) else {
        return false;
    };
    if ops::is_random(target) || ops::mutated_arg(target, args, kwargs).is_some() {
        return false;
    }
    ops::canonical(target, args, kwargs)
        .is_some_and(|c| !c.inplace && RECOMPUTABLE.contains(&ops::unalias(&c.name)))
}

/// A capacity no cut takes.
const INF: u64 = u64::MAX / 4;

/// The forward nodes to recompute in the backward so that the values saved for it, from which
/// it computes every value of `needed` (the values its rules read), hold the fewest bytes.
/// `pinned`: inputs eager's backward does not hold (the caller may write them before
/// `.backward()`, [`super::watch::unsaved`]): saving one (or a view of one) means saving a
/// copy, so it costs its bytes and one unit more than a value of its size computed for the
/// backward alone, which the cut then prefers.
pub fn min_cut(f: &Graph, needed: &[NodeId], pinned: &HashSet<NodeId>) -> HashSet<NodeId> {
    let order: Vec<NodeId> = f.nodes().map(|(id, _)| id).collect();
    let slot: HashMap<NodeId, usize> = order.iter().enumerate().map(|(k, &n)| (n, k)).collect();
    let (source, sink) = (0, 1);
    let node_in = |k: usize| 2 + 2 * k;
    let node_out = |k: usize| 3 + 2 * k;
    let mut net = Flow::new(2 + 2 * order.len());
    for (k, &n) in order.iter().enumerate() {
        let node = f.node(n);
        let placeholder = matches!(node.kind, NodeKind::Placeholder { .. });
        // Twice the bytes, so that a copy's extra unit breaks ties and no more.
        let copy = u64::from(pinned.contains(&super::watch::storage_root(f, n)));
        let bytes = match node.meta.tensor() {
            _ if placeholder && copy == 0 => 0,
            Some(t) => 2 * super::tensor_bytes(t).max(1) + copy,
            None => INF,
        };
        if placeholder || !cheap(f, n) || node.meta.tensor().is_none() {
            net.edge(source, node_in(k), INF);
        }
        net.edge(node_in(k), node_out(k), bytes);
        for i in node.inputs() {
            if let Some(&j) = slot.get(&i) {
                net.edge(node_out(j), node_in(k), INF);
            }
        }
    }
    for n in needed {
        if let Some(&k) = slot.get(n) {
            net.edge(node_out(k), sink, INF);
        }
    }
    if net.max_flow(source, sink) >= INF {
        // No finite cut (a value that can be neither saved nor recomputed): keep the rules'
        // own choice.
        return HashSet::new();
    }
    let forward_side = net.reachable(source);
    order
        .iter()
        .enumerate()
        .filter(|&(k, &n)| !forward_side[node_in(k)] && cheap(f, n))
        .map(|(_, &n)| n)
        .collect()
}

/// A flow network (Dinic's algorithm).
struct Flow {
    /// Per edge: (to, residual capacity); edge `e ^ 1` is its reverse.
    edges: Vec<(usize, u64)>,
    adj: Vec<Vec<usize>>,
}

impl Flow {
    fn new(n: usize) -> Flow {
        Flow {
            edges: Vec::new(),
            adj: vec![Vec::new(); n],
        }
    }

    fn edge(&mut self, a: usize, b: usize, cap: u64) {
        self.adj[a].push(self.edges.len());
        self.edges.push((b, cap));
        self.adj[b].push(self.edges.len());
        self.edges.push((a, 0));
    }

    fn levels(&self, s: usize) -> Vec<i64> {
        let mut level = vec![-1; self.adj.len()];
        level[s] = 0;
        let mut q = VecDeque::from([s]);
        while let Some(v) = q.pop_front() {
            for &e in &self.adj[v] {
                let (to, cap) = self.edges[e];
                if cap > 0 && level[to] < 0 {
                    level[to] = level[v] + 1;
                    q.push_back(to);
                }
            }
        }
        level
    }

    /// Pushes flow along one path of increasing level (iterative, so deep graphs do not
    /// exhaust the stack); returns how much.
    fn augment(&mut self, s: usize, t: usize, level: &[i64], next: &mut [usize]) -> u64 {
        let mut path: Vec<usize> = Vec::new();
        let mut v = s;
        loop {
            if v == t {
                let push = path.iter().map(|&e| self.edges[e].1).min().unwrap_or(0);
                for &e in &path {
                    self.edges[e].1 -= push;
                    self.edges[e ^ 1].1 += push;
                }
                return push;
            }
            let mut advanced = false;
            while next[v] < self.adj[v].len() {
                let e = self.adj[v][next[v]];
                let (to, cap) = self.edges[e];
                if cap > 0 && level[to] == level[v] + 1 {
                    path.push(e);
                    v = to;
                    advanced = true;
                    break;
                }
                next[v] += 1;
            }
            if !advanced {
                // Dead end: retreat one step and skip the edge that led here.
                let Some(e) = path.pop() else { return 0 };
                v = self.edges[e ^ 1].0;
                next[v] += 1;
            }
        }
    }

    fn max_flow(&mut self, s: usize, t: usize) -> u64 {
        let mut total = 0u64;
        loop {
            let level = self.levels(s);
            if level[t] < 0 {
                return total;
            }
            let mut next = vec![0; self.adj.len()];
            loop {
                let pushed = self.augment(s, t, &level, &mut next);
                if pushed == 0 {
                    break;
                }
                total = total.saturating_add(pushed);
                if total >= INF {
                    return total;
                }
            }
        }
    }

    /// The vertices reachable from `s` in the residual network (the source side of a minimum
    /// cut once the flow is maximal).
    fn reachable(&self, s: usize) -> Vec<bool> {
        self.levels(s).iter().map(|&l| l >= 0).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::Flow;

    #[test]
    fn max_flow_and_cut() {
        // s=0, t=1; two paths through a shared bottleneck 2->3 (cap 5) and a side path 4.
        let mut f = Flow::new(5);
        f.edge(0, 2, 10);
        f.edge(2, 3, 5);
        f.edge(3, 1, 10);
        f.edge(0, 4, 3);
        f.edge(4, 1, 2);
        assert_eq!(f.max_flow(0, 1), 7);
        let side = f.reachable(0);
        assert!(side[0] && side[2] && side[4] && !side[3] && !side[1]);
    }
}
