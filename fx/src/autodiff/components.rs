//! Which differentiable outputs of a training graph share backward work.
//!
//! Eager's autograd keeps one node per op, and a `.backward()` frees only the nodes it ran
//! through. A compiled training graph is one `autograd.Function`: the first `.backward()`
//! through any of its outputs frees everything the Function saved. Where the outputs' backward
//! paths share no op (a GAN step's `fake = G(z)` beside the discriminator's loss on
//! `fake.detach()`), eager lets the caller run `ld.backward()` and later a backward through
//! `fake`; the Function then raised "Trying to backward through the graph a second time".
//! The runtime (`python/torchferro/_aot.py`) makes one autograd node per component (the
//! forward runs once), so autograd frees and retains each as it does eager's nodes: each
//! component once, more with `retain_graph=True`.

use std::collections::{HashMap, HashSet};

use crate::graph::{Arg, Graph, NodeId, NodeKind};

/// Per differentiable output (positions `differentiable` of the graph's outputs), the id of
/// its component: two outputs share one where their backward paths share an op. `needs` are
/// the nodes that carry a gradient. Inputs join nothing: eager's leaves and the nodes of
/// tensors made before the graph hold no saved values of this graph (a parameter used by both
/// a generator and a discriminator path leaves them separate).
pub fn components(graph: &Graph, needs: &HashSet<NodeId>, differentiable: &[usize]) -> Vec<usize> {
    let mut parent: HashMap<NodeId, NodeId> = HashMap::new();
    fn find(parent: &mut HashMap<NodeId, NodeId>, n: NodeId) -> NodeId {
        let p = *parent.get(&n).unwrap_or(&n);
        if p == n {
            return n;
        }
        let r = find(parent, p);
        parent.insert(n, r);
        r
    }
    fn nodes(a: &Arg, out: &mut Vec<NodeId>) {
        match a {
            Arg::Node(n) => out.push(*n),
            Arg::Tuple(xs) | Arg::List(xs) => xs.iter().for_each(|x| nodes(x, out)),
            Arg::Slice(a, b, c) => [a, b, c].iter().for_each(|x| nodes(x, out)),
            _ => {}
        }
    }
    let is_call = |n: NodeId| matches!(graph.node(n).kind, NodeKind::Call { .. });
    for (id, node) in graph.nodes() {
        let NodeKind::Call { args, kwargs, .. } = &node.kind else {
            continue;
        };
        if !needs.contains(&id) {
            continue;
        }
        let mut used = Vec::new();
        args.iter().for_each(|a| nodes(a, &mut used));
        kwargs.iter().for_each(|(_, a)| nodes(a, &mut used));
        for u in used {
            if needs.contains(&u) && is_call(u) {
                let (a, b) = (find(&mut parent, id), find(&mut parent, u));
                if a != b {
                    parent.insert(a, b);
                }
            }
        }
    }
    let values = match graph.output_node().map(|o| &graph.node(o).kind) {
        Some(NodeKind::Output { values }) => values.clone(),
        _ => Vec::new(),
    };
    let mut ids: HashMap<NodeId, usize> = HashMap::new();
    differentiable
        .iter()
        .map(|&i| {
            let root = match values.get(i) {
                Some(Arg::Node(n)) => find(&mut parent, *n),
                _ => unreachable!("a differentiable output is a node"),
            };
            let next = ids.len();
            *ids.entry(root).or_insert(next)
        })
        .collect()
}
