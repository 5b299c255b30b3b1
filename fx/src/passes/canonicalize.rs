//! Canonicalization: every captured call rewritten to one target per op, before
//! functionalization and lowering.
//!
//! The tracer records a call the way the user spelled it: `torch.add(x, y)`, `x.add(y)`,
//! `x + y` (`operator.add`), `x.__radd__(2)`, `torch.absolute(x)`, `x += y`
//! (`operator.iadd`), `torch.relu_(x)`, `F.relu(x, inplace=True)`, `x.softmax(dim=1)`. Each
//! later stage (functionalization, lowering, derivative and shape rules) would otherwise match
//! every spelling itself. This pass folds them with the op catalog ([`crate::ops`]):
//!
//! - an op with a tensor method is called as that method on its tensor argument
//!   (`torch.add(x, y)`, `operator.add(x, y)`, `x.__add__(y)` → `x.add(y)`; the reflected
//!   forms of symmetric ops, `x.__radd__(2)` → `x.add(2)`), since the method form accepts every
//!   argument form the function form does;
//! - an alias is its op (`torch.absolute` → `abs`, `x.swapaxes(0, 1)` → `x.transpose(0, 1)`,
//!   `torch.special.expit` → `sigmoid`; [`crate::ops::ALIASES`]);
//! - an in-place call is the in-place method (`operator.iadd(x, y)`, `x.__iadd__(y)`,
//!   `torch.relu_(x)`, `F.relu(x, inplace=True)` → `x.add_(y)` / `x.relu_()`);
//! - keyword arguments that the op's signature also takes by position become positional, in
//!   order, through the one binder ([`crate::ops::bind`]): `x.softmax(dim=1)` → `x.softmax(1)`.
//!
//! Node ids, names and metadata are kept: only targets and arguments change, and
//! [`Canonicalized::retargeted`] lists the nodes whose target changed (a caller that keeps a
//! callable per node resolves those anew). What the pass cannot prove equal it leaves as
//! recorded: calls with `out=`, a first argument that is not a tensor, a keyword an alias spells
//! differently, Python-level ops whose function and method signatures differ, functional ops
//! with no method (`F.gelu`).

use std::collections::HashSet;

use crate::graph::{Arg, Graph, NodeId, NodeKind, Target};
use crate::ops::{self, spell, Mutated, Spelling};

/// The result of [`canonicalize`].
#[derive(Clone, Debug)]
pub struct Canonicalized {
    /// The graph with one target per op (same node ids as the input graph).
    pub graph: Graph,
    /// Nodes whose target changed.
    pub retargeted: HashSet<NodeId>,
}

/// Rewrites every call of `graph` to its op's one target (see the module doc).
pub fn canonicalize(graph: &Graph) -> Canonicalized {
    let mut out = graph.clone();
    let mut retargeted = HashSet::new();
    let ids: Vec<NodeId> = graph.nodes().map(|(id, _)| id).collect();
    for id in ids {
        let NodeKind::Call {
            target,
            args,
            kwargs,
        } = &graph.node(id).kind
        else {
            continue;
        };
        let Some((t, a, k)) = rewrite(graph, target, args, kwargs) else {
            continue;
        };
        if &t != target {
            retargeted.insert(id);
        }
        out.node_mut(id).kind = NodeKind::Call {
            target: t,
            args: a,
            kwargs: k,
        };
    }
    Canonicalized {
        graph: out,
        retargeted,
    }
}

type Call = (Target, Vec<Arg>, Vec<(String, Arg)>);

fn is_tensor(graph: &Graph, a: Option<&Arg>) -> bool {
    matches!(a, Some(Arg::Node(n)) if graph.node(*n).meta.tensor().is_some())
}

/// A plain operand of a Python operator on a tensor: a tensor or a Python number.
fn is_operand(graph: &Graph, a: Option<&Arg>) -> bool {
    is_tensor(graph, a) || matches!(a, Some(Arg::Int(_) | Arg::Float(_) | Arg::Bool(_)))
}

fn spells(name: &str, bit: u16) -> bool {
    ops::op(name).is_some_and(|o| o.spellings & bit != 0)
}

/// Ops whose operands commute exactly (same value, same promoted dtype), so a reflected
/// operator (`2 + x` as `x.__radd__(2)`) is the plain method on the tensor.
const SYMMETRIC: &[&str] = &["add", "mul", "bitwise_and", "bitwise_or", "bitwise_xor"];

/// The canonical form of one call, or `None` to keep it as recorded.
fn rewrite(graph: &Graph, target: &Target, args: &[Arg], kwargs: &[(String, Arg)]) -> Option<Call> {
    if matches!(ops::mutated_arg(target, args, kwargs), Some(Mutated::Out)) {
        return None;
    }
    let (_, raw) = ops::split_target(target)?;
    let c = ops::canonical(target, args, kwargs)?;
    // `x.__add__(y)` is an operator spelling, whatever namespace reached it.
    let spelling = c.spelling;
    let name = ops::unalias(&c.name);
    let aliased = name != c.name;
    if !is_tensor(graph, args.first()) {
        // No tensor to call a method on (`torch.concat([a, b])`): only the alias folds.
        let fold = aliased && spelling == Spelling::Torch && kwargs.is_empty();
        return (fold && spells(name, spell::T)).then(|| {
            (
                Target::Function(format!("torch.{name}")),
                args.to_vec(),
                vec![],
            )
        });
    }
    match (spelling, c.inplace) {
        (Spelling::Operator, _) => {
            if name == "getitem" || name == "pos" || c.reflected && !SYMMETRIC.contains(&name) {
                return None;
            }
            if args.len() > 2
                || !kwargs.is_empty()
                || !args.iter().all(|a| is_operand(graph, Some(a)))
            {
                return None;
            }
            let bit = if c.inplace { spell::MI } else { spell::M };
            if !spells(name, bit) {
                return None;
            }
            let method = if c.inplace {
                format!("{name}_")
            } else {
                name.to_string()
            };
            Some((Target::Method(method), args.to_vec(), vec![]))
        }
        (Spelling::Functional, true) => {
            // `F.relu(x, inplace=True)` → `x.relu_()`: only the tensor and the flag given.
            let pos = ops::functional_inplace_pos(raw);
            let flag_only = args.len() == 1
                || (args.len() == 2 && pos == Some(1))
                || (args.len() == 1 && kwargs.len() == 1);
            let kw_ok = kwargs.iter().all(|(k, _)| k == "inplace");
            if !flag_only || !kw_ok || aliased || !spells(name, spell::MI) {
                return None;
            }
            Some((
                Target::Method(format!("{name}_")),
                vec![args[0].clone()],
                vec![],
            ))
        }
        (Spelling::Functional, false) => None,
        (Spelling::Method, true) => {
            if aliased && !kwargs.is_empty() || !spells(name, spell::MI) {
                return None;
            }
            let t = Target::Method(format!("{name}_"));
            Some(positional(name, t, args, kwargs))
        }
        (Spelling::Torch, _) if raw.ends_with('_') && !raw.ends_with("__") => {
            // `torch.relu_(x, ...)` is `x.relu_(...)`.
            let base = ops::unalias(&raw[..raw.len() - 1]);
            if base != &raw[..raw.len() - 1] && !kwargs.is_empty() {
                return None;
            }
            let takes_input = ops::signature(base).is_some_and(|s| s.first() == Some(&"input"));
            if !takes_input || !spells(base, spell::MI) || kwargs.iter().any(|(k, _)| k == "input")
            {
                return None;
            }
            Some((
                Target::Method(format!("{base}_")),
                args.to_vec(),
                kwargs.to_vec(),
            ))
        }
        (Spelling::Torch | Spelling::Special | Spelling::Method, _) => {
            let row = ops::op(name)?;
            let method_ok = row.spellings & spell::M != 0
                && !row.aten.is_empty()
                && row.sig.is_some_and(|s| s.first() == Some(&"input"));
            if (aliased || spelling == Spelling::Special) && !kwargs.is_empty() {
                return None;
            }
            if spelling == Spelling::Method && !aliased && raw == name {
                // Already the method: only the arguments may change.
                return method_ok.then(|| positional(name, target.clone(), args, kwargs));
            }
            if !method_ok || kwargs.iter().any(|(k, _)| k == "input") {
                return None;
            }
            Some(positional(
                name,
                Target::Method(name.to_string()),
                args,
                kwargs,
            ))
        }
    }
}

/// `t(args, kwargs)` with the keywords that `name`'s signature takes next by position moved
/// into place (`x.softmax(dim=1)` → `x.softmax(1)`); unchanged where the arguments do not bind.
fn positional(name: &str, t: Target, args: &[Arg], kwargs: &[(String, Arg)]) -> Call {
    let mut a = args.to_vec();
    let mut k = kwargs.to_vec();
    let Some(sig) = ops::signature(name) else {
        return (t, a, k);
    };
    if ops::bind(sig, args, kwargs).is_err() {
        return (t, a, k);
    }
    let star = sig.iter().position(|s| *s == "*").unwrap_or(sig.len());
    while a.len() < star {
        let next = sig[a.len()];
        let Some(i) = k.iter().position(|(n, _)| n == next) else {
            break;
        };
        a.push(k.remove(i).1);
    }
    (t, a, k)
}

#[cfg(test)]
mod tests;
