//! Functionalization: a captured graph rewritten so that no op writes a tensor.
//!
//! Backends that compute values (the inductor) reason about dataflow; an in-place op hides a
//! write behind a name (`x.add_(1)` changes `x` and every view of it), and each such backend
//! would have to track storage sharing itself, which is where wrong answers came from (a clone
//! elided under a later in-place write, a buffer reused while a mutated alias was live).
//! This pass removes the question:
//!
//! - every in-place op becomes its out-of-place form ([`crate::ops::flag::FUNCTIONAL_TWIN`]:
//!   `x.relu_()` → `x.relu()`, `operator.iadd` → `operator.add`, `F.relu(x, inplace=True)` →
//!   `F.relu(x, inplace=False)`, `torch.add(a, b, out=y)` → `torch.add(a, b)`), or, where no
//!   twin with the same values exists (`copy_`, `index_put_` with a dtype change, `x[m] = v`,
//!   random fills such as `bernoulli_`), the very in-place op applied to a fresh clone
//!   ([`ON_CLONE`]): same kernel, same random draws, no write to anything the graph shares;
//! - a write through a view of a tensor updates the tensor's value functionally: the view's
//!   new value is scattered into a clone of its base by replaying the view steps on it
//!   ([`VIEW_SCATTER`]), and every later read of the base or of any view of it is re-derived
//!   from the updated base (views are replayed on it);
//! - a graph input whose value changed gets one `copy_` of its final value at the end of the
//!   graph (and is listed in [`Functionalized::mutated_inputs`]);
//! - graph outputs that alias an input or another output in eager (`y, y.view(-1), y[0]`;
//!   `x.t()` of an input) are reported as [`OutputAlias`]es, so the caller can rebuild them as
//!   views of their base after the backend ran and hand back eager's aliasing (`data_ptr`,
//!   `._base`).
//!
//! What the pass cannot prove right it refuses with [`NotFunctional`] (the caller then keeps
//! the original graph): ops that change a tensor's metadata in place (`t_`, `resize_`), writes
//! through a value whose aliasing depends on layouts the pass does not model (`reshape`,
//! `split`, `dropout` in eval, `.data`), or view steps with tensor-valued arguments. A view
//! step whose argument is a symbolic int (`x[: x.size(0) // 2]`, `kv[pos : pos + n]`) is kept:
//! [`VIEW_SCATTER`] takes that int as a graph value (the new graph's node for it), so the
//! backend reads the bounds as sizes (`inductor/src/lower/view_scatter.rs`). An output alias
//! is rebuilt outside the graph and takes constant steps only.

use std::collections::{HashMap, HashSet};

use crate::graph::{Arg, Graph, NodeId, NodeKind, Target};
use crate::ops;

/// `on_clone(path, x, *args, **kwargs)`: clones `x`, applies the in-place callable `path` to the
/// clone with the other arguments, returns the clone (`python/torchferro/_functional.py`).
pub const ON_CLONE: &str = "torchferro._functional.on_clone";
/// `view_scatter(base, src, *steps)`: a clone of `base` whose view (`steps` replayed on it)
/// holds `src`. A step's arguments may hold int graph values (symbolic view bounds).
pub const VIEW_SCATTER: &str = "torchferro._functional.view_scatter";

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("cannot functionalize: {0}")]
pub struct NotFunctional(pub String);

fn refuse<T>(why: impl Into<String>) -> Result<T, NotFunctional> {
    Err(NotFunctional(why.into()))
}

/// One view op to replay on a base: `target(base, *args, **kwargs)`.
#[derive(Clone, Debug, PartialEq)]
pub struct ViewStep {
    pub target: Target,
    pub args: Vec<Arg>,
    pub kwargs: Vec<(String, Arg)>,
}

/// What an aliasing output is a view of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AliasBase {
    /// Graph input number `i` (its placeholder index), after any copy-back.
    Input(usize),
    /// Graph output number `j`.
    Output(usize),
}

/// Graph output `output` is, in eager, `base` with `steps` applied.
#[derive(Clone, Debug, PartialEq)]
pub struct OutputAlias {
    pub output: usize,
    pub base: AliasBase,
    pub steps: Vec<ViewStep>,
}

/// The result of [`functionalize`].
#[derive(Clone, Debug)]
pub struct Functionalized {
    pub graph: Graph,
    /// New node → the node of the original graph it copies (same target, so same callable).
    pub origin: HashMap<NodeId, NodeId>,
    /// Rewritten calls: new node (an out-of-place twin, [`ON_CLONE`]) → the in-place call of
    /// the original graph it stands for.
    pub replaces: HashMap<NodeId, NodeId>,
    /// Nodes that stand for an in-place write of the traced op's argument 0 (not `out=`) →
    /// the value they wrote (the written tensor as of before the write). A write computed in a
    /// wider dtype (`h.mul_(o)`, `o` float32, `h` bfloat16) is two nodes, its out-of-place twin
    /// (which reads `h`) and the cast back (the new value of `h`): both stand for it. Training
    /// keeps such writes made under `no_grad` (`autodiff::writes`) and tells an in-place op's
    /// own read of what it writes from a keep a later write invalidates (`autodiff::watch`).
    pub writes: HashMap<NodeId, NodeId>,
    /// Placeholder indices of the inputs the graph writes (one `copy_` each, at the end).
    pub mutated_inputs: Vec<usize>,
    /// How many in-place writes the traced graph makes to each of `mutated_inputs` (eager bumps
    /// an input's version counter once per write; the one `copy_` bumps it once).
    pub input_writes: Vec<u32>,
    /// The values each written input holds in the graph: new node → (placeholder index, how
    /// many writes came before it). The placeholder is version 0, a write's result the next
    /// version. Eager's backward keeps the input tensor itself where it keeps one of these
    /// values, so the input's version counter at `.backward()` must still be that version: a
    /// later write (in the graph or by the caller) raises "modified by an inplace operation".
    pub input_versions: HashMap<NodeId, (usize, u32)>,
    /// Values of tensors the graph made (not inputs) that a later in-place write replaced: the
    /// new node holding version `v` of its tensor where more than `v` writes reached it. Eager's
    /// backward keeping one of them raises "modified by an inplace operation" at `.backward()`
    /// (`torch.sigmoid(h)` saved, then filled in place); the functional graph reads each
    /// version as a value of its own, so nothing else would notice
    /// (`autodiff::watch::kept_then_overwritten`).
    pub overwritten: HashSet<NodeId>,
    /// Outputs to rebuild as views of their base after the graph ran.
    pub output_aliases: Vec<OutputAlias>,
    /// How many outputs the original graph had (more may follow: bases of aliasing outputs).
    pub user_outputs: usize,
}

mod state;

use state::{bare_name, tensor, Aliasing, State};

/// A view step as one constant argument of [`VIEW_SCATTER`]:
/// `("m" | "f", name, (args...), ((key, value)...))`.
pub fn step_arg(s: &ViewStep) -> Arg {
    let (kind, name) = match &s.target {
        Target::Method(m) => ("m", m.clone()),
        Target::Function(f) => ("f", f.clone()),
    };
    Arg::Tuple(vec![
        Arg::Str(kind.into()),
        Arg::Str(name),
        Arg::Tuple(s.args.clone()),
        Arg::Tuple(
            s.kwargs
                .iter()
                .map(|(k, v)| Arg::Tuple(vec![Arg::Str(k.clone()), v.clone()]))
                .collect(),
        ),
    ])
}

/// Rewrites `graph` without in-place ops (see the module docs).
///
/// `exists` says whether a function path names a callable; out-of-place twins are used only
/// where it does.
pub fn functionalize(
    graph: &Graph,
    exists: &dyn Fn(&str) -> bool,
) -> Result<Functionalized, NotFunctional> {
    let mut s = State {
        old: graph,
        exists,
        new: Graph::new(),
        origin: HashMap::new(),
        replaces: HashMap::new(),
        writes: HashMap::new(),
        map: HashMap::new(),
        def_ver: HashMap::new(),
        fam: HashMap::new(),
        cur: HashMap::new(),
        ver: HashMap::new(),
        ambiguous: HashSet::new(),
        ambiguous_roots: HashSet::new(),
        synthetic: HashMap::new(),
        broadcasts: HashMap::new(),
        versions: HashMap::new(),
    };
    let mut outputs: Option<Vec<Arg>> = None;
    for (id, node) in graph.nodes() {
        match &node.kind {
            NodeKind::Placeholder { .. } => {
                let n = s.new.placeholder(&node.name, node.meta.clone());
                s.origin.insert(n, id);
                if tensor(&node.meta).is_some() {
                    s.new_root(id, n);
                } else {
                    s.map.insert(id, n);
                }
            }
            NodeKind::Call {
                target,
                args,
                kwargs,
            } => {
                if let Some(which) = ops::mutated_arg(target, args, kwargs) {
                    s.write(id, target, args, kwargs, which)?;
                    continue;
                }
                if s.broadcast_element(id, target, args) {
                    continue;
                }
                let new_args: Vec<Arg> = args.iter().map(|a| s.remap(a)).collect();
                let new_kwargs = kwargs
                    .iter()
                    .map(|(k, a)| (k.clone(), s.remap(a)))
                    .collect();
                let n = s.new.call(
                    &node.name,
                    target.clone(),
                    new_args,
                    new_kwargs,
                    node.meta.clone(),
                );
                s.origin.insert(n, id);
                if matches!(target, Target::Function(_)) && bare_name(target) == "broadcast_tensors"
                {
                    let tensors: Vec<NodeId> = args
                        .iter()
                        .filter_map(|a| match a {
                            Arg::Node(t) if tensor(&graph.node(*t).meta).is_some() => Some(*t),
                            _ => None,
                        })
                        .collect();
                    if tensors.len() == args.len() && kwargs.is_empty() {
                        s.broadcasts.insert(id, tensors);
                    }
                }
                match s.classify(id, target, args, kwargs) {
                    Aliasing::View => {
                        let Some(Arg::Node(base)) = args.first() else {
                            unreachable!()
                        };
                        let mut f = s.fam[base].clone();
                        f.chain.push(id);
                        let v = s.ver[&f.root];
                        s.map.insert(id, n);
                        s.def_ver.insert(id, v);
                        s.fam.insert(id, f);
                    }
                    Aliasing::Ambiguous => {
                        if let Some(Arg::Node(base)) = args.first() {
                            if let Some(f) = s.fam.get(base) {
                                s.ambiguous_roots.insert(f.root);
                            } else {
                                // An element of a tuple of views: its base's root is marked.
                            }
                        }
                        s.ambiguous.insert(id);
                        if tensor(&node.meta).is_some() {
                            s.new_root(id, n);
                        } else {
                            s.map.insert(id, n);
                        }
                    }
                    Aliasing::Fresh => {
                        if tensor(&node.meta).is_some() {
                            s.new_root(id, n);
                        } else {
                            s.map.insert(id, n);
                        }
                    }
                }
            }
            NodeKind::Output { values } => outputs = Some(values.clone()),
        }
    }
    let values = outputs.unwrap_or_default();
    let user_outputs = values.len();
    let mut out_args = Vec::with_capacity(values.len());
    let mut aliases = Vec::new();
    // Outputs that are their root tensor itself, by root.
    let mut whole: HashMap<NodeId, usize> = HashMap::new();
    for (i, v) in values.iter().enumerate() {
        if let Arg::Node(o) = v {
            if let Some(f) = s.fam.get(o) {
                if f.chain.is_empty() && !s.ambiguous.contains(o) {
                    whole.entry(f.root).or_insert(i);
                }
            }
        }
    }
    let mut extra: Vec<Arg> = Vec::new();
    for (i, v) in values.iter().enumerate() {
        let Arg::Node(o) = v else {
            out_args.push(s.remap(v));
            continue;
        };
        let Some(f) = s
            .fam
            .get(o)
            .filter(|_| tensor(&graph.node(*o).meta).is_some())
            .cloned()
        else {
            out_args.push(s.remap(v));
            continue;
        };
        let input = match graph.node(f.root).kind {
            NodeKind::Placeholder { index } => Some(index),
            _ => None,
        };
        if f.chain.is_empty() {
            match input {
                // The input object itself (written back first if the graph changed it).
                Some(index) => {
                    out_args.push(Arg::Node(s.map_placeholder(f.root)));
                    // Another node that is the input in eager (`broadcast_tensors`,
                    // `as_tensor`): handed back as the input object, which a backend that
                    // writes the input back need not return.
                    if *o != f.root {
                        aliases.push(OutputAlias {
                            output: i,
                            base: AliasBase::Input(index),
                            steps: Vec::new(),
                        });
                    }
                }
                None => out_args.push(Arg::Node(s.read(*o))),
            }
            continue;
        }
        out_args.push(Arg::Node(s.read(*o)));
        // Steps may hold symbolic ints (`x[: x.size(0) - 2]` of a dynamic graph). A view of a
        // root the graph writes is then reported all the same, so the caller declines the
        // graph: dropped, the output came back a copy of the new values where eager's is a
        // view of the input (a later write through it missed the input; session 32). A view
        // of a root nothing writes is computed by the backend as the view it is.
        let written = s.ver.get(&f.root).is_some_and(|&v| v > 0);
        let steps = match s.steps_reading(&f.chain, false) {
            Ok(steps) => steps,
            Err(_) if written => match s.steps_reading(&f.chain, true) {
                Ok(steps) => steps,
                Err(_) => continue,
            },
            Err(_) => continue,
        };
        if s.ambiguous.contains(&f.root) {
            continue;
        }
        let base = match input {
            Some(index) => AliasBase::Input(index),
            None => match whole.get(&f.root) {
                Some(&j) => AliasBase::Output(j),
                None => {
                    let j = user_outputs + extra.len();
                    whole.insert(f.root, j);
                    let r = s.read(f.root);
                    extra.push(Arg::Node(r));
                    AliasBase::Output(j)
                }
            },
        };
        aliases.push(OutputAlias {
            output: i,
            base,
            steps,
        });
    }
    out_args.extend(extra);
    // One write-back per changed input, after everything that reads its old value.
    let mut mutated_inputs = Vec::new();
    let mut input_writes = Vec::new();
    for p in graph.placeholders() {
        let writes = s.ver.get(&p).copied().unwrap_or(0);
        if writes == 0 {
            continue;
        }
        let NodeKind::Placeholder { index } = graph.node(p).kind else {
            continue;
        };
        let target = s.map_placeholder(p);
        let value = s.cur[&p];
        let name = format!("{}_copy_back", graph.node(p).name);
        s.new.call(
            &name,
            Target::Method("copy_".into()),
            vec![Arg::Node(target), Arg::Node(value)],
            vec![],
            graph.node(p).meta.clone(),
        );
        mutated_inputs.push(index);
        input_writes.push(writes);
    }
    s.new.output(out_args);
    let input_versions = s
        .versions
        .iter()
        .filter(|(_, (root, _))| s.ver.get(root).is_some_and(|&w| w > 0))
        .filter_map(|(&n, &(root, v))| match graph.node(root).kind {
            NodeKind::Placeholder { index } => Some((n, (index, v))),
            _ => None,
        })
        .collect();
    let overwritten = s
        .versions
        .iter()
        .filter(|(_, (root, v))| {
            !matches!(graph.node(*root).kind, NodeKind::Placeholder { .. })
                && s.ver.get(root).is_some_and(|&w| w > *v)
        })
        .map(|(&n, _)| n)
        .collect();
    // A `broadcast_tensors` call whose elements all became their arguments or `expand`s.
    for old in s.broadcasts.keys() {
        let n = s.map[old];
        if s.new.users(n).is_empty() {
            s.new.remove(n);
            s.origin.remove(&n);
        }
    }
    Ok(Functionalized {
        graph: s.new,
        origin: s.origin,
        replaces: s.replaces,
        writes: s.writes,
        mutated_inputs,
        input_writes,
        input_versions,
        overwritten,
        output_aliases: aliases,
        user_outputs,
    })
}

#[cfg(test)]
mod tests;
