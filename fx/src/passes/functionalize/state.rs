//! The pass's working state: which storage each old node's value lives in, its current
//! version, and the rewrites that keep every read on the value as of that read.

use std::collections::{HashMap, HashSet};

use crate::graph::{Arg, Graph, NodeId, NodeKind, Target};
use crate::meta::{DType, NodeMeta, TensorMeta};
use crate::ops::{self, flag, Mutated, Spelling};

use super::{refuse, step_arg, NotFunctional, ViewStep, ON_CLONE, VIEW_SCATTER};

/// How a node's result relates to storage: its root tensor and the view steps from it.
#[derive(Clone, Debug)]
pub(super) struct Family {
    pub(super) root: NodeId,
    pub(super) chain: Vec<NodeId>,
}

pub(super) struct State<'g> {
    pub(super) old: &'g Graph,
    /// Whether a function path names a callable (an out-of-place twin may not exist in every
    /// namespace: `torch.hardtanh_` has no `torch.hardtanh`).
    pub(super) exists: &'g dyn Fn(&str) -> bool,
    pub(super) new: Graph,
    pub(super) origin: HashMap<NodeId, NodeId>,
    pub(super) replaces: HashMap<NodeId, NodeId>,
    /// See [`super::Functionalized::writes`].
    pub(super) writes: HashMap<NodeId, NodeId>,
    /// Old node → the new node holding its value as of version `def_ver`.
    pub(super) map: HashMap<NodeId, NodeId>,
    pub(super) def_ver: HashMap<NodeId, u32>,
    pub(super) fam: HashMap<NodeId, Family>,
    /// Root → its current value and version (bumped by every write).
    pub(super) cur: HashMap<NodeId, NodeId>,
    pub(super) ver: HashMap<NodeId, u32>,
    /// Every value a root has held: new node → (root, version). A backward that keeps one
    /// of an input's values keeps that input at that version (see
    /// [`super::Functionalized::input_versions`]).
    pub(super) versions: HashMap<NodeId, (NodeId, u32)>,
    /// Values whose storage sharing the pass does not know, and the roots they may share.
    pub(super) ambiguous: HashSet<NodeId>,
    pub(super) ambiguous_roots: HashSet<NodeId>,
    /// View steps that stand for an old node other than its own call: element `j` of
    /// `broadcast_tensors(a, b, ...)` is `args[j].expand(sizes)`.
    pub(super) synthetic: HashMap<NodeId, ViewStep>,
    /// `broadcast_tensors` calls: old node → its tensor arguments (old nodes).
    pub(super) broadcasts: HashMap<NodeId, Vec<NodeId>>,
}

pub(super) fn tensor(meta: &NodeMeta) -> Option<&TensorMeta> {
    meta.tensor()
}

pub(super) fn bare_name(target: &Target) -> &str {
    let n = target.name();
    n.rsplit('.').next().unwrap_or(n)
}

/// Whether a `getitem` index selects a view (ints, slices, `None`, `...` only).
///
/// An int may be a graph value: a symbolic size (`x[: x.size(0) // 2]`, `x[n - 1]` under
/// dynamic shapes) indexes exactly as the int it stands for, so the result is a view of `x`
/// and a write through it reaches `x`. Counted as advanced indexing (a copy), such a write was
/// dropped: the graph's input kept its old values (a wrong answer). Only a tensor index is
/// advanced.
pub(super) fn basic_index(graph: &Graph, idx: &Arg) -> bool {
    let int = |a: &Arg| match a {
        Arg::Int(_) => true,
        Arg::Node(n) => matches!(graph.node(*n).meta, NodeMeta::SymInt(_) | NodeMeta::Int(_)),
        _ => false,
    };
    match idx {
        Arg::None | Arg::Ellipsis => true,
        Arg::Slice(a, b, c) => [a, b, c]
            .iter()
            .all(|x| int(x) || matches!(***x, Arg::None)),
        Arg::Tuple(items) => items.iter().all(|i| basic_index(graph, i)),
        i => int(i),
    }
}

pub(super) fn has_nodes(a: &Arg) -> bool {
    let mut v = Vec::new();
    a.nodes(&mut v);
    !v.is_empty()
}

/// Same dtype, device, sizes and strides: `to`, `contiguous` and friends return `self`.
pub(super) fn same_layout(a: &TensorMeta, b: &TensorMeta) -> bool {
    a.dtype == b.dtype && a.device == b.device && a.sizes == b.sizes && a.strides == b.strides
}

pub(super) fn contiguous(t: &TensorMeta) -> bool {
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
pub(super) fn non_overlapping(t: &TensorMeta) -> bool {
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

/// Whether the layout is the contiguous one for its sizes, symbolic sizes included (strides
/// compared as polynomials; a dimension of size 1 may have any stride).
pub(super) fn contiguous_sym(t: &TensorMeta) -> bool {
    let mut expect = crate::sym::SymExpr::constant(1);
    for (s, st) in t.sizes.iter().zip(&t.strides).rev() {
        if s.known() != Some(1) && st.expr() != expect {
            return false;
        }
        expect = expect.mul(&s.expr());
    }
    true
}

/// View steps that keep distinct elements distinct: each picks a sub-box of its base's indices
/// (slices with a positive step, a held index, a new or dropped size-1 dimension) or reorders
/// the dimensions. A chain of them from a tensor whose elements are distinct never makes two
/// indices address one element, whatever the sizes.
fn cut_step(graph: &Graph, step: NodeId) -> bool {
    let NodeKind::Call { target, args, .. } = &graph.node(step).kind else {
        return false;
    };
    match bare_name(target) {
        "getitem" => args.get(1).is_some_and(|i| {
            let items = match i {
                Arg::Tuple(items) => &items[..],
                one => std::slice::from_ref(one),
            };
            basic_index(graph, i)
                && items.iter().all(|i| match i {
                    Arg::Slice(_, _, st) => positive_step(st),
                    _ => true,
                })
        }),
        "select" | "narrow" | "unsqueeze" | "squeeze" | "t" | "transpose" | "swapaxes"
        | "swapdims" | "permute" | "detach" | "alias" => true,
        _ => false,
    }
}

fn positive_step(st: &Arg) -> bool {
    matches!(st, Arg::None) || matches!(st, Arg::Int(k) if *k > 0)
}

pub(super) enum Aliasing {
    Fresh,
    View,
    Ambiguous,
}

impl<'g> State<'g> {
    pub(super) fn meta(&self, old: NodeId) -> NodeMeta {
        self.old.node(old).meta.clone()
    }

    pub(super) fn new_root(&mut self, old: NodeId, new: NodeId) {
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
        self.versions.insert(new, (old, 0));
    }

    /// The new node that holds `old`'s value now, re-deriving views of a written root.
    pub(super) fn read(&mut self, old: NodeId) -> NodeId {
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

    pub(super) fn remap(&mut self, a: &Arg) -> Arg {
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

    pub(super) fn classify(
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
                Some(idx) if basic_index(self.old, idx) => Aliasing::View,
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
        if dropout_returns_input(&c.name, bt.sizes.len(), args, kwargs) {
            return Aliasing::View;
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
    pub(super) fn keeps_dtype(&self, m: NodeId, args: &[Arg], kwargs: &[(String, Arg)]) -> bool {
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

    /// The dtype torch computes an in-place op's out-of-place twin in when the written tensor
    /// and every tensor argument are floating point (`None` otherwise): the widest of the
    /// tensors with dimensions, or of the 0-dim ones when there are none (a 0-dim tensor of the
    /// same category does not widen), bfloat16 with float16 making float32. Number arguments
    /// of a floating op widen nothing.
    pub(super) fn floating_result_dtype(
        &self,
        m: NodeId,
        args: &[Arg],
        kwargs: &[(String, Arg)],
    ) -> Option<DType> {
        let mt = tensor(&self.old.node(m).meta)?;
        if !mt.dtype.is_floating_point() || mt.dtype.is_complex() {
            return None;
        }
        let (mut dims, mut scalars) = (Vec::new(), Vec::new());
        for a in args.iter().chain(kwargs.iter().map(|(_, a)| a)) {
            match a {
                Arg::Node(n) => {
                    let t = tensor(&self.old.node(*n).meta)?;
                    if !t.dtype.is_floating_point() || t.dtype.is_complex() {
                        return None;
                    }
                    if t.sizes.is_empty() {
                        scalars.push(t.dtype);
                    } else {
                        dims.push(t.dtype);
                    }
                }
                Arg::Float(_) | Arg::Int(_) | Arg::Bool(_) | Arg::None | Arg::Str(_) => {}
                _ if !has_nodes(a) => {}
                _ => return None,
            }
        }
        let pool = if dims.is_empty() { scalars } else { dims };
        let widest = |ds: &[DType]| -> Option<DType> {
            if ds.contains(&DType::Float64) {
                Some(DType::Float64)
            } else if ds.contains(&DType::Float32)
                || (ds.contains(&DType::Float16) && ds.contains(&DType::BFloat16))
            {
                Some(DType::Float32)
            } else {
                ds.first().copied()
            }
        };
        widest(&pool)
    }

    /// The view steps of `chain`. With `ints`, an argument may hold graph values that are ints
    /// (a symbolic size, `x[: x.size(0) // 2]`): the steps are then arguments of a call in the
    /// graph ([`VIEW_SCATTER`]), which gets those values as the call runs, and the caller remaps
    /// the old nodes they name ([`Self::remap`]). A tensor-valued argument is never a step's.
    pub(super) fn steps_reading(
        &self,
        chain: &[NodeId],
        ints: bool,
    ) -> Result<Vec<ViewStep>, NotFunctional> {
        let plain = |a: &Arg| {
            let mut v = Vec::new();
            a.nodes(&mut v);
            v.iter().all(|n| {
                ints && matches!(
                    self.old.node(*n).meta,
                    NodeMeta::SymInt(_) | NodeMeta::Int(_)
                )
            })
        };
        chain
            .iter()
            .map(|&s| match &self.old.node(s).kind {
                _ if self.synthetic.contains_key(&s) => Ok(self.synthetic[&s].clone()),
                NodeKind::Call {
                    target,
                    args,
                    kwargs,
                } if args[1..].iter().all(plain) && kwargs.iter().all(|(_, a)| plain(a)) => {
                    Ok(ViewStep {
                        target: target.clone(),
                        args: args[1..].to_vec(),
                        kwargs: kwargs.clone(),
                    })
                }
                NodeKind::Call { target, args, .. } => {
                    self.shape_of_other(target, args).ok_or_else(|| {
                        NotFunctional(format!(
                            "view {} has graph-valued arguments",
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
    pub(super) fn shape_of_other(&self, target: &Target, args: &[Arg]) -> Option<ViewStep> {
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

    /// Whether `fam` is a chain of [`cut_step`]s from a contiguous root: its elements are
    /// distinct at every size (for a view with symbolic sizes, whose layout
    /// [`non_overlapping`] cannot read).
    pub(super) fn cut_of_contiguous(&self, fam: &Family) -> bool {
        tensor(&self.old.node(fam.root).meta).is_some_and(contiguous_sym)
            && fam
                .chain
                .iter()
                .all(|&s| !self.synthetic.contains_key(&s) && cut_step(self.old, s))
    }

    /// The new-graph form of the mutating call `id`: the value its mutated tensor holds after it.
    pub(super) fn write(
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
            && !self.cut_of_contiguous(&fam)
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
        // An in-place op whose out-of-place twin computes in a wider floating dtype (`h += b`,
        // `h` bfloat16 and `b` float32 under autocast): torch computes in that dtype and
        // stores into `h`'s, so the twin followed by a cast back is the same write.
        let widened = if keeps || random {
            None
        } else {
            self.floating_result_dtype(m, args, kwargs)
        };
        let keeps = keeps || widened.is_some();
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
        let is_twin =
            !matches!(&t, Target::Function(p) if p == ON_CLONE) && matches!(which, Mutated::Arg(0));
        // The value the write replaces: argument 0 of the twin, argument 1 of `on_clone`.
        let written = match which {
            Mutated::Arg(0) => match args.first().map(|a| self.remap(a)) {
                Some(Arg::Node(w)) => Some(w),
                _ => None,
            },
            _ => None,
        };
        let (value, twin) = match widened {
            Some(d) if is_twin && Some(d) != tensor(&meta).map(|t| t.dtype) => {
                let mut wide = meta.clone();
                if let NodeMeta::Tensor(w) = &mut wide {
                    w.dtype = d;
                }
                let v = self.new.call(&name, t, a, k, wide);
                let dtype = tensor(&meta).map(|t| t.dtype).unwrap_or(d);
                let cast = self.new.call(
                    &format!("{name}_cast"),
                    Target::Method("to".into()),
                    vec![Arg::Node(v), Arg::DType(dtype)],
                    vec![],
                    meta.clone(),
                );
                (cast, Some(v))
            }
            _ => (self.new.call(&name, t, a, k, meta.clone()), None),
        };
        self.replaces.insert(value, id);
        if let Some(w) = written {
            self.writes.insert(value, w);
            if let Some(v) = twin {
                self.writes.insert(v, w);
            }
        }
        let root = fam.root;
        let updated = if fam.chain.is_empty() {
            value
        } else {
            let steps = self.steps_reading(&fam.chain, true)?;
            let base = self.cur[&root];
            let mut sargs = vec![Arg::Node(base), Arg::Node(value)];
            for st in &steps {
                // A symbolic bound is the new graph's node for that int.
                let a = self.remap(&step_arg(st));
                sargs.push(a);
            }
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
        let v = self.ver.get_mut(&root).unwrap();
        *v += 1;
        self.versions.insert(updated, (root, *v));
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

pub(super) fn core_dunder(name: &str) -> &str {
    name.strip_prefix("__")
        .and_then(|n| n.strip_suffix("__"))
        .unwrap_or(name)
}

pub(super) fn on_clone(
    path: &str,
    args: Vec<Arg>,
    kwargs: Vec<(String, Arg)>,
) -> (Target, Vec<Arg>, Vec<(String, Arg)>) {
    let mut a = vec![Arg::Str(path.to_string())];
    a.extend(args);
    (Target::Function(ON_CLONE.into()), a, kwargs)
}

impl State<'_> {
    /// Element `j` of `broadcast_tensors(t0, t1, ...)` (`getitem(j)` of the call): in eager
    /// `tj` itself where its sizes are already the broadcast ones, else `tj.expand(sizes)`, a
    /// view of `tj`. Either way it aliases `tj`, so a write through it reaches `tj` and an
    /// output rebuilt from it is `tj` (or its view) as in eager. `false` where this is not
    /// such an element.
    pub(super) fn broadcast_element(&mut self, id: NodeId, target: &Target, args: &[Arg]) -> bool {
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
    pub(super) fn map_placeholder(&self, old: NodeId) -> NodeId {
        *self
            .origin
            .iter()
            .find(|(_, o)| **o == old)
            .map(|(n, _)| n)
            .expect("every placeholder is copied")
    }
}

/// Whether a dropout call returns its input itself, as eager's kernels do when nothing is
/// dropped: not training, or `p == 0` (`_dropout_impl` returns the input before drawing
/// anything). `dropout1d`/`dropout3d` of an unbatched input go through `unsqueeze`/`squeeze`
/// and are left out. A view here is replayed on its base, which gives eager's very object, so
/// writes to it and to the input reach each other as in eager.
fn dropout_returns_input(name: &str, ndim: usize, args: &[Arg], kwargs: &[(String, Arg)]) -> bool {
    let batched = match name {
        "dropout" | "alpha_dropout" | "feature_alpha_dropout" | "dropout2d" => true,
        "dropout1d" => ndim == 3,
        "dropout3d" => ndim == 5,
        _ => false,
    };
    // `p` and `training` (`train` in the `torch.` spelling) by position or keyword.
    let arg = |pos: usize, names: &[&str]| {
        args.get(pos).or_else(|| {
            kwargs
                .iter()
                .find(|(k, _)| names.contains(&k.as_str()))
                .map(|(_, v)| v)
        })
    };
    let no_drop = matches!(
        arg(1, &["p"]),
        Some(Arg::Float(p)) if *p == 0.0
    ) || matches!(arg(1, &["p"]), Some(Arg::Int(0)));
    let not_training = arg(2, &["training", "train"]) == Some(&Arg::Bool(false));
    batched && (no_drop || not_training)
}
