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
//! `split`, `dropout` in eval, `.data`), or view steps with graph-valued arguments.

use std::collections::{HashMap, HashSet};

use crate::graph::{Arg, Graph, NodeId, NodeKind, Target};
use crate::meta::{DType, NodeMeta, TensorMeta};
use crate::ops::{self, flag, Mutated, Spelling};

/// `on_clone(path, x, *args, **kwargs)`: clones `x`, applies the in-place callable `path` to the
/// clone with the other arguments, returns the clone (`python/torchferro/_functional.py`).
pub const ON_CLONE: &str = "torchferro._functional.on_clone";
/// `view_scatter(base, src, *steps)`: a clone of `base` whose view (`steps` replayed on it)
/// holds `src`.
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
    /// Placeholder indices of the inputs the graph writes (one `copy_` each, at the end).
    pub mutated_inputs: Vec<usize>,
    /// How many in-place writes the traced graph makes to each of `mutated_inputs` (eager bumps
    /// an input's version counter once per write; the one `copy_` bumps it once).
    pub input_writes: Vec<u32>,
    /// Outputs to rebuild as views of their base after the graph ran.
    pub output_aliases: Vec<OutputAlias>,
    /// How many outputs the original graph had (more may follow: bases of aliasing outputs).
    pub user_outputs: usize,
}

/// How a node's result relates to storage: its root tensor and the view steps from it.
#[derive(Clone, Debug)]
struct Family {
    root: NodeId,
    chain: Vec<NodeId>,
}

struct State<'g> {
    old: &'g Graph,
    /// Whether a function path names a callable (an out-of-place twin may not exist in every
    /// namespace: `torch.hardtanh_` has no `torch.hardtanh`).
    exists: &'g dyn Fn(&str) -> bool,
    new: Graph,
    origin: HashMap<NodeId, NodeId>,
    replaces: HashMap<NodeId, NodeId>,
    /// Old node → the new node holding its value as of version `def_ver`.
    map: HashMap<NodeId, NodeId>,
    def_ver: HashMap<NodeId, u32>,
    fam: HashMap<NodeId, Family>,
    /// Root → its current value and version (bumped by every write).
    cur: HashMap<NodeId, NodeId>,
    ver: HashMap<NodeId, u32>,
    /// Values whose storage sharing the pass does not know, and the roots they may share.
    ambiguous: HashSet<NodeId>,
    ambiguous_roots: HashSet<NodeId>,
    /// View steps that stand for an old node other than its own call: element `j` of
    /// `broadcast_tensors(a, b, ...)` is `args[j].expand(sizes)`.
    synthetic: HashMap<NodeId, ViewStep>,
    /// `broadcast_tensors` calls: old node → its tensor arguments (old nodes).
    broadcasts: HashMap<NodeId, Vec<NodeId>>,
}

fn tensor(meta: &NodeMeta) -> Option<&TensorMeta> {
    meta.tensor()
}

fn bare_name(target: &Target) -> &str {
    let n = target.name();
    n.rsplit('.').next().unwrap_or(n)
}

/// Whether a `getitem` index selects a view (ints, slices, `None`, `...` only).
fn basic_index(idx: &Arg) -> bool {
    match idx {
        Arg::Int(_) | Arg::None | Arg::Ellipsis => true,
        Arg::Slice(a, b, c) => [a, b, c]
            .iter()
            .all(|x| matches!(***x, Arg::Int(_) | Arg::None)),
        Arg::Tuple(items) => items.iter().all(basic_index),
        _ => false,
    }
}

fn has_nodes(a: &Arg) -> bool {
    let mut v = Vec::new();
    a.nodes(&mut v);
    !v.is_empty()
}

/// Same dtype, device, sizes and strides: `to`, `contiguous` and friends return `self`.
fn same_layout(a: &TensorMeta, b: &TensorMeta) -> bool {
    a.dtype == b.dtype && a.device == b.device && a.sizes == b.sizes && a.strides == b.strides
}

fn contiguous(t: &TensorMeta) -> bool {
    match (t.known_sizes(), t.known_strides()) {
        (Some(sizes), Some(strides)) => {
            let mut expect = 1;
            for (s, st) in sizes.iter().zip(&strides).rev() {
                if *s != 1 && *st != expect {
                    return false;
                }
                expect *= s;
            }
            true
        }
        _ => false,
    }
}

/// Whether no two indices of the layout address one element (known sizes and strides). Dims
/// sorted by stride: each stride must pass the furthest element the smaller dims reach; a
/// size-1 dim never matters. Conservative: an exotic layout that interleaves without overlap
/// counts as overlapping.
fn non_overlapping(t: &TensorMeta) -> bool {
    let (Some(sizes), Some(strides)) = (t.known_sizes(), t.known_strides()) else {
        return false;
    };
    if sizes.contains(&0) {
        return true;
    }
    let mut dims: Vec<(i64, i64)> = sizes
        .iter()
        .zip(&strides)
        .filter(|(s, _)| **s > 1)
        .map(|(s, st)| (st.abs(), *s))
        .collect();
    dims.sort();
    let mut reach = 0;
    for (st, s) in dims {
        if st <= reach {
            return false;
        }
        reach += st * (s - 1);
    }
    true
}

enum Aliasing {
    Fresh,
    View,
    Ambiguous,
}

impl<'g> State<'g> {
    fn meta(&self, old: NodeId) -> NodeMeta {
        self.old.node(old).meta.clone()
    }

    fn new_root(&mut self, old: NodeId, new: NodeId) {
        self.map.insert(old, new);
        self.fam.insert(
            old,
            Family {
                root: old,
                chain: vec![],
            },
        );
        self.cur.insert(old, new);
        self.ver.insert(old, 0);
        self.def_ver.insert(old, 0);
    }

    /// The new node that holds `old`'s value now, re-deriving views of a written root.
    fn read(&mut self, old: NodeId) -> NodeId {
        let Some(f) = self.fam.get(&old).cloned() else {
            return self.map[&old];
        };
        let v = self.ver[&f.root];
        if self.def_ver.get(&old) == Some(&v) {
            return self.map[&old];
        }
        let mut val = self.cur[&f.root];
        for &s in &f.chain {
            if self.def_ver.get(&s) == Some(&v) {
                val = self.map[&s];
                continue;
            }
            let (target, args, kwargs) = match self.synthetic.get(&s) {
                Some(step) => {
                    let mut args = vec![Arg::None];
                    args.extend(step.args.iter().cloned());
                    (step.target.clone(), args, step.kwargs.clone())
                }
                None => {
                    let NodeKind::Call {
                        target,
                        args,
                        kwargs,
                    } = self.old.node(s).kind.clone()
                    else {
                        unreachable!("a view step is a call")
                    };
                    (target, args, kwargs)
                }
            };
            let mut args: Vec<Arg> = args.iter().map(|a| self.remap(a)).collect();
            args[0] = Arg::Node(val);
            let kwargs = kwargs
                .iter()
                .map(|(k, a)| (k.clone(), self.remap(a)))
                .collect();
            let name = self.old.node(s).name.clone();
            let n = self.new.call(&name, target, args, kwargs, self.meta(s));
            self.origin.insert(n, s);
            self.map.insert(s, n);
            self.def_ver.insert(s, v);
            val = n;
        }
        self.map.insert(old, val);
        self.def_ver.insert(old, v);
        val
    }

    fn remap(&mut self, a: &Arg) -> Arg {
        match a {
            Arg::Node(n) => Arg::Node(self.read(*n)),
            Arg::Tuple(xs) => Arg::Tuple(xs.iter().map(|x| self.remap(x)).collect()),
            Arg::List(xs) => Arg::List(xs.iter().map(|x| self.remap(x)).collect()),
            Arg::Slice(a, b, c) => Arg::Slice(
                Box::new(self.remap(a)),
                Box::new(self.remap(b)),
                Box::new(self.remap(c)),
            ),
            other => other.clone(),
        }
    }

    fn classify(
        &self,
        id: NodeId,
        target: &Target,
        args: &[Arg],
        kwargs: &[(String, Arg)],
    ) -> Aliasing {
        let Some(Arg::Node(base)) = args.first() else {
            return Aliasing::Fresh;
        };
        let base_meta = &self.old.node(*base).meta;
        let out_meta = &self.old.node(id).meta;
        // Functions outside the catalog's view rows that return their argument itself (or, for
        // `atleast_3d` of a matrix, a view of it): replayed on the base they give eager's very
        // object, so they are views here.
        if let (Some(bt), Some(_), [_], []) = (tensor(base_meta), tensor(out_meta), args, kwargs) {
            match bare_name(target) {
                "as_tensor" | "asarray" | "atleast_1d" | "atleast_2d" | "atleast_3d" => {
                    return Aliasing::View
                }
                "resolve_conj" | "resolve_neg" if !bt.dtype.is_complex() => return Aliasing::View,
                _ => {}
            }
        }
        let Some(c) = ops::canonical(target, args, kwargs) else {
            // `torch.Tensor.data` and other unknown attribute reads of a tensor.
            return if tensor(base_meta).is_some() && bare_name(target) == "data" {
                Aliasing::Ambiguous
            } else {
                Aliasing::Fresh
            };
        };
        let Some(def) = ops::op(&c.name) else {
            return Aliasing::Fresh;
        };
        if let NodeMeta::Tuple(_) = base_meta {
            // An element of `split`/`chunk`/`unbind`: a view of their base, reached by indexing
            // the replayed tuple.
            return if self.ambiguous.contains(base) {
                Aliasing::Ambiguous
            } else if self.fam.contains_key(base)
                && c.name == "getitem"
                && matches!(args.get(1), Some(Arg::Int(_)))
            {
                Aliasing::View
            } else {
                Aliasing::Fresh
            };
        }
        let Some(bt) = tensor(base_meta) else {
            return Aliasing::Fresh;
        };
        if c.name == "getitem" {
            return match args.get(1) {
                Some(idx) if basic_index(idx) => Aliasing::View,
                _ => Aliasing::Fresh,
            };
        }
        if def.flags & flag::VIEW != 0 {
            return Aliasing::View;
        }
        if def.flags & flag::MULTI_VIEW != 0 {
            // Every piece is a view of the base: the tuple is tracked like a view, and so are
            // its elements (`x.split(2)[0]` replays as `split(2)` then `getitem(0)`).
            return match out_meta {
                NodeMeta::Tuple(items) if items.iter().all(|m| tensor(m).is_some()) => {
                    Aliasing::View
                }
                _ => Aliasing::Ambiguous,
            };
        }
        if def.flags & flag::MAYBE_VIEW != 0 {
            let copy = kwargs
                .iter()
                .any(|(k, v)| k == "copy" && *v == Arg::Bool(true));
            let Some(ot) = tensor(out_meta) else {
                return Aliasing::Ambiguous;
            };
            return match c.name.as_str() {
                "reshape" | "reshape_as" | "flatten" | "ravel" if contiguous(bt) => Aliasing::View,
                // Not training: the input itself.
                "dropout"
                    if args.get(2) == Some(&Arg::Bool(false))
                        || kwargs
                            .iter()
                            .any(|(k, v)| k == "training" && *v == Arg::Bool(false)) =>
                {
                    Aliasing::View
                }
                "to" | "type" | "type_as" | "float" | "double" | "half" | "bfloat16" | "int"
                | "long" | "bool" | "short" | "char" | "byte" | "cpu" | "cuda" | "contiguous"
                | "pos" | "positive"
                    if !copy =>
                {
                    // These return `self` exactly when nothing about the tensor changes, so
                    // any difference in metadata means a copy.
                    if same_layout(bt, ot) {
                        Aliasing::View
                    } else {
                        Aliasing::Fresh
                    }
                }
                _ => Aliasing::Ambiguous,
            };
        }
        Aliasing::Fresh
    }

    /// Whether the out-of-place form of a write to `m` keeps `m`'s dtype: every tensor operand
    /// has it, and Python numbers cannot promote it.
    fn keeps_dtype(&self, m: NodeId, args: &[Arg], kwargs: &[(String, Arg)]) -> bool {
        let Some(mt) = tensor(&self.old.node(m).meta) else {
            return false;
        };
        let d = mt.dtype;
        let mut ok = true;
        let mut check = |a: &Arg| match a {
            Arg::Node(n) => {
                if let Some(t) = tensor(&self.old.node(*n).meta) {
                    ok &= t.dtype == d;
                } else {
                    ok = false;
                }
            }
            Arg::Float(_) => ok &= d.is_floating_point(),
            Arg::Int(_) => ok &= d != DType::Bool,
            Arg::Tuple(_) | Arg::List(_) => ok &= !has_nodes(a),
            _ => {}
        };
        args.iter().for_each(&mut check);
        kwargs.iter().for_each(|(_, a)| check(a));
        ok
    }

    fn steps(&self, chain: &[NodeId]) -> Result<Vec<ViewStep>, NotFunctional> {
        chain
            .iter()
            .map(|&s| match &self.old.node(s).kind {
                _ if self.synthetic.contains_key(&s) => Ok(self.synthetic[&s].clone()),
                NodeKind::Call {
                    target,
                    args,
                    kwargs,
                } if !args[1..].iter().any(has_nodes)
                    && !kwargs.iter().any(|(_, a)| has_nodes(a)) =>
                {
                    Ok(ViewStep {
                        target: target.clone(),
                        args: args[1..].to_vec(),
                        kwargs: kwargs.clone(),
                    })
                }
                NodeKind::Call { target, args, .. } => {
                    self.shape_of_other(target, args).ok_or_else(|| {
                        NotFunctional(format!(
                            "view {} has tensor-valued arguments",
                            self.old.node(s).name
                        ))
                    })
                }
                _ => refuse(format!("view {} is not a call", self.old.node(s).name)),
            })
            .collect()
    }

    /// `t.expand_as(o)` / `t.view_as(o)` as `t.expand(sizes)` / `t.view(sizes)` with `o`'s
    /// sizes: the other tensor gives only its shape, so the step replays without it.
    fn shape_of_other(&self, target: &Target, args: &[Arg]) -> Option<ViewStep> {
        let method = match (target, bare_name(target)) {
            (Target::Method(_), "expand_as") => "expand",
            (Target::Method(_), "view_as") => "view",
            (Target::Method(_), "reshape_as") => "reshape",
            (Target::Method(_), "type_as") => "to",
            _ => return None,
        };
        let [_, Arg::Node(other)] = args else {
            return None;
        };
        let other = tensor(&self.old.node(*other).meta)?;
        let arg = if method == "to" {
            Arg::DType(other.dtype)
        } else {
            Arg::Tuple(other.known_sizes()?.into_iter().map(Arg::Int).collect())
        };
        Some(ViewStep {
            target: Target::Method(method.into()),
            args: vec![arg],
            kwargs: vec![],
        })
    }

    /// The new-graph form of the mutating call `id`: the value its mutated tensor holds after it.
    fn write(
        &mut self,
        id: NodeId,
        target: &Target,
        args: &[Arg],
        kwargs: &[(String, Arg)],
        which: Mutated,
    ) -> Result<(), NotFunctional> {
        let name = self.old.node(id).name.clone();
        let bare = bare_name(target);
        let core = bare
            .strip_prefix("__")
            .and_then(|b| b.strip_suffix("__"))
            .unwrap_or(bare);
        let core = core.strip_suffix('_').unwrap_or(core);
        if ops::op(core).is_some_and(|o| o.flags & flag::META_INPLACE != 0) {
            return refuse(format!(
                "{} changes a tensor's metadata in place",
                target.name()
            ));
        }
        let m = match &which {
            Mutated::Arg(i) => args.get(*i),
            Mutated::Out => kwargs.iter().find(|(k, _)| k == "out").map(|(_, v)| v),
        };
        let Some(Arg::Node(m)) = m.cloned() else {
            return refuse(format!(
                "{} writes a value that is not one tensor",
                target.name()
            ));
        };
        if tensor(&self.old.node(m).meta).is_none() {
            return refuse(format!(
                "{} writes a value that is not one tensor",
                target.name()
            ));
        }
        if self.ambiguous.contains(&m) {
            return refuse(format!(
                "{name} writes a value whose storage sharing is not modelled"
            ));
        }
        let fam = self
            .fam
            .get(&m)
            .cloned()
            .ok_or_else(|| NotFunctional(format!("{name} writes a value of unknown origin")))?;
        if self.ambiguous_roots.contains(&fam.root) {
            return refuse(format!(
                "{name} writes a tensor with an alias whose storage sharing is not modelled"
            ));
        }
        if !fam.chain.is_empty()
            && tensor(&self.old.node(m).meta).is_none_or(|t| !non_overlapping(t))
        {
            // Scattering the whole new value of an overlapping view (`unfold` windows, an
            // `expand`) back into its base would write every shared element once per alias,
            // stale values included; eager writes each element the op wrote, once.
            return refuse(format!(
                "{name} writes through a view whose elements overlap"
            ));
        }
        let meta = self.meta(m);
        let new_args: Vec<Arg> = args.iter().map(|a| self.remap(a)).collect();
        let new_kwargs: Vec<(String, Arg)> = kwargs
            .iter()
            .map(|(k, a)| (k.clone(), self.remap(a)))
            .collect();
        let random = ops::is_random(target);
        let keeps = self.keeps_dtype(m, args, kwargs);
        let twin = |n: &str| ops::op(n).is_some_and(|o| o.flags & flag::FUNCTIONAL_TWIN != 0);
        let on_clone_path = match target {
            Target::Method(meth) => format!("torch.Tensor.{meth}"),
            Target::Function(p) => p.clone(),
        };
        let is_operator = matches!(target, Target::Function(p)
            if p.starts_with("operator.") || p.starts_with("_operator."));
        let operator_twin = if is_operator {
            ops::operator_out_of_place(bare)
        } else if bare.starts_with("__") && matches!(target, Target::Method(_)) {
            ops::operator_out_of_place(core_dunder(bare))
        } else {
            None
        };
        let (t, a, k): (Target, Vec<Arg>, Vec<(String, Arg)>) = match (&which, target) {
            (Mutated::Out, _) => {
                let out_t = tensor(&meta).unwrap();
                let same = tensor(&self.old.node(id).meta).is_some_and(|t| t.sizes == out_t.sizes);
                if !same || !self.keeps_dtype(m, args, &[]) || random {
                    return refuse(format!("{name}: out= with a resize, cast or random op"));
                }
                let k = new_kwargs.into_iter().filter(|(k, _)| k != "out").collect();
                (target.clone(), new_args, k)
            }
            (Mutated::Arg(0), Target::Method(meth))
                if !random && keeps && !meth.starts_with("__") && twin(core) =>
            {
                (Target::Method(core.to_string()), new_args, new_kwargs)
            }
            (Mutated::Arg(0), _) if !random && keeps && operator_twin.is_some() => (
                Target::Function(format!("operator.{}", operator_twin.unwrap())),
                new_args,
                new_kwargs,
            ),
            (Mutated::Arg(0), Target::Function(p))
                if !random && keeps && p.ends_with('_') && twin(core) =>
            {
                let base = &p[..p.len() - 1];
                match ops::split_target(&Target::Function(base.to_string())) {
                    Some((Spelling::Torch | Spelling::Functional | Spelling::Special, _))
                        if (self.exists)(base) =>
                    {
                        (Target::Function(base.to_string()), new_args, new_kwargs)
                    }
                    _ => on_clone(&on_clone_path, new_args, new_kwargs),
                }
            }
            (Mutated::Arg(0), Target::Function(p))
                if !random && !p.ends_with('_') && !is_operator =>
            {
                // `F.relu(x, inplace=True)`: the same call, not in place.
                let mut a = new_args;
                let mut k = new_kwargs;
                if let Some(slot) = k.iter_mut().find(|(k, _)| k == "inplace") {
                    slot.1 = Arg::Bool(false);
                } else if let Some(pos) =
                    ops::split_target(target).and_then(|(_, n)| ops::functional_inplace_pos(n))
                {
                    if let Some(slot) = a.get_mut(pos) {
                        *slot = Arg::Bool(false);
                    }
                }
                (target.clone(), a, k)
            }
            (Mutated::Arg(0), _) => on_clone(&on_clone_path, new_args, new_kwargs),
            (Mutated::Arg(i), _) => {
                return refuse(format!("{name} writes its argument {i}"));
            }
        };
        let value = self.new.call(&name, t, a, k, meta.clone());
        self.replaces.insert(value, id);
        let root = fam.root;
        let updated = if fam.chain.is_empty() {
            value
        } else {
            let steps = self.steps(&fam.chain)?;
            let base = self.cur[&root];
            let mut sargs = vec![Arg::Node(base), Arg::Node(value)];
            sargs.extend(steps.iter().map(step_arg));
            let rname = format!("{}_updated", self.old.node(root).name);
            self.new.call(
                &rname,
                Target::Function(VIEW_SCATTER.into()),
                sargs,
                vec![],
                self.meta(root),
            )
        };
        self.cur.insert(root, updated);
        *self.ver.get_mut(&root).unwrap() += 1;
        // The call's own result is the written tensor (or `None` for `setitem`).
        if tensor(&self.old.node(id).meta).is_some() {
            self.fam.insert(id, fam);
            self.def_ver.insert(id, u32::MAX);
        } else {
            self.map.insert(id, updated);
        }
        Ok(())
    }
}

fn core_dunder(name: &str) -> &str {
    name.strip_prefix("__")
        .and_then(|n| n.strip_suffix("__"))
        .unwrap_or(name)
}

fn on_clone(
    path: &str,
    args: Vec<Arg>,
    kwargs: Vec<(String, Arg)>,
) -> (Target, Vec<Arg>, Vec<(String, Arg)>) {
    let mut a = vec![Arg::Str(path.to_string())];
    a.extend(args);
    (Target::Function(ON_CLONE.into()), a, kwargs)
}

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
        map: HashMap::new(),
        def_ver: HashMap::new(),
        fam: HashMap::new(),
        cur: HashMap::new(),
        ver: HashMap::new(),
        ambiguous: HashSet::new(),
        ambiguous_roots: HashSet::new(),
        synthetic: HashMap::new(),
        broadcasts: HashMap::new(),
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
        let Ok(steps) = s.steps(&f.chain) else {
            continue;
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
        mutated_inputs,
        input_writes,
        output_aliases: aliases,
        user_outputs,
    })
}

impl State<'_> {
    /// Element `j` of `broadcast_tensors(t0, t1, ...)` (`getitem(j)` of the call): in eager
    /// `tj` itself where its sizes are already the broadcast ones, else `tj.expand(sizes)`, a
    /// view of `tj`. Either way it aliases `tj`, so a write through it reaches `tj` and an
    /// output rebuilt from it is `tj` (or its view) as in eager. `false` where this is not
    /// such an element.
    fn broadcast_element(&mut self, id: NodeId, target: &Target, args: &[Arg]) -> bool {
        let (Some(Arg::Node(call)), Some(Arg::Int(j))) = (args.first(), args.get(1)) else {
            return false;
        };
        if bare_name(target) != "getitem" {
            return false;
        }
        let Some(arg) = self
            .broadcasts
            .get(call)
            .and_then(|ts| usize::try_from(*j).ok().and_then(|j| ts.get(j)))
            .copied()
        else {
            return false;
        };
        let (Some(out), Some(src)) = (
            tensor(&self.old.node(id).meta).and_then(|t| t.known_sizes()),
            tensor(&self.old.node(arg).meta).and_then(|t| t.known_sizes()),
        ) else {
            return false;
        };
        if self.ambiguous.contains(&arg) || !self.fam.contains_key(&arg) {
            return false;
        }
        let value = self.read(arg);
        let mut f = self.fam[&arg].clone();
        let v = self.ver[&f.root];
        if out == src {
            self.map.insert(id, value);
        } else {
            let step = ViewStep {
                target: Target::Method("expand".into()),
                args: vec![Arg::Tuple(out.iter().map(|&d| Arg::Int(d)).collect())],
                kwargs: vec![],
            };
            let mut a = vec![Arg::Node(value)];
            a.extend(step.args.iter().cloned());
            let name = self.old.node(id).name.clone();
            let n = self
                .new
                .call(&name, step.target.clone(), a, vec![], self.meta(id));
            self.synthetic.insert(id, step);
            self.map.insert(id, n);
            f.chain.push(id);
        }
        self.def_ver.insert(id, v);
        self.fam.insert(id, f);
        true
    }

    /// The new placeholder of an old one (never a re-derived value).
    fn map_placeholder(&self, old: NodeId) -> NodeId {
        *self
            .origin
            .iter()
            .find(|(_, o)| **o == old)
            .map(|(n, _)| n)
            .expect("every placeholder is copied")
    }
}

#[cfg(test)]
mod tests;
