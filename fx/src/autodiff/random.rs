//! Random ops in a training graph: the backward must reuse the forward's draws, never draw
//! again (upstream's partitioner bugs #190717/#190758 recomputed dropout with fresh
//! randomness).
//!
//! On CPU eager's `dropout(x, p, train=True)` draws `noise = bernoulli(1 - p) / (1 - p)` of
//! `x`'s shape and returns `x * noise`; its backward is `grad * noise`. The pass rewrites the
//! node into that product with the noise made by the same call on ones: `dropout(ones, p,
//! True)` draws exactly what `dropout(x, p, True)` draws (same shape, dtype and generator
//! calls) and equals `noise`, so the forward's values and random stream are eager's, and the
//! noise is an ordinary forward value that the `mul` rule saves for the backward.

use crate::graph::{Arg, Graph, NodeId, NodeKind, Target};
use crate::meta::{NodeMeta, TensorMeta};
use crate::ops::{self, Canon, Spelling};

/// One call the walk hands to a rewrite: the node and its parts as they were.
pub(super) struct CallSite {
    pub(super) id: NodeId,
    pub(super) target: Target,
    pub(super) args: Vec<Arg>,
    pub(super) kwargs: Vec<(String, Arg)>,
    pub(super) canon: Canon,
}

/// The walk both rewrites share: every call whose canonical op is `name` goes to `rewrite`,
/// which returns the nodes whose target is new, or `None` (having added nothing) where the call
/// is not one it rewrites. Returns all the rewrites' new-target nodes, in graph order.
pub(super) fn rewrite_calls(
    g: &mut Graph,
    name: &str,
    mut rewrite: impl FnMut(&mut Graph, CallSite) -> Option<Vec<NodeId>>,
) -> Vec<NodeId> {
    let mut changed = Vec::new();
    let ids: Vec<NodeId> = g.nodes().map(|(id, _)| id).collect();
    for id in ids {
        let NodeKind::Call {
            target,
            args,
            kwargs,
        } = g.node(id).kind.clone()
        else {
            continue;
        };
        let Some(canon) = ops::canonical(&target, &args, &kwargs) else {
            continue;
        };
        if canon.name != name {
            continue;
        }
        let site = CallSite {
            id,
            target,
            args,
            kwargs,
            canon,
        };
        changed.extend(rewrite(g, site).unwrap_or_default());
    }
    changed
}

/// Rewrites every training-mode `dropout` whose input is in `needs` (see the module doc);
/// returns the nodes whose target is new (their callables are resolved by path).
pub fn rewrite_dropout(g: &mut Graph, needs: &dyn Fn(NodeId) -> bool) -> Vec<NodeId> {
    rewrite_calls(g, "dropout", |g, site| {
        let CallSite {
            id,
            target,
            args,
            kwargs,
            canon: c,
        } = site;
        if c.inplace {
            return None;
        }
        let sig = match c.spelling {
            Spelling::Functional => ops::schema::F_DROPOUT,
            Spelling::Torch => ops::signature("dropout")?,
            _ => return None,
        };
        let slots = ops::bind(sig, &args, &kwargs).ok()?;
        let Some(Arg::Node(x)) = slots[0].cloned() else {
            return None;
        };
        // Only a draw: a constant p in (0, 1], training on (F.dropout's default).
        let p = match slots[1] {
            Some(Arg::Float(p)) => *p,
            Some(Arg::Int(p)) => *p as f64,
            None if c.spelling == Spelling::Functional => 0.5,
            _ => return None,
        };
        let training = match slots[2] {
            Some(Arg::Bool(t)) => *t,
            None if c.spelling == Spelling::Functional => true,
            _ => return None,
        };
        if !training || p <= 0.0 {
            return None;
        }
        if !needs(x) {
            return None;
        }
        let xm = g.node(x).meta.tensor().cloned()?;
        let sizes = xm.known_sizes()?;
        // CUDA's dropout kernel hands its random numbers out by element position and picks a
        // vectorized or a strided form from the input's layout: the noise drawn on fresh ones
        // is the input's noise only where the input is laid out as ones are (contiguous).
        // Any other CUDA input keeps the op (no rule: the graph runs through torch's autograd).
        if xm.device.kind != "cpu"
            && xm.strides != TensorMeta::contiguous(xm.dtype, xm.device.clone(), &sizes).strides
        {
            return None;
        }
        // Eager's CPU dropout draws into `empty_like(input)` (the input's own strides where it
        // is dense, else dense strides in its dimension order) in memory order, so a
        // transposed input (`nn.MultiheadAttention`'s `batch_first` output) gets its noise
        // laid out as it is: the ones are made `ones_like` the input, in that layout.
        let mut ones_meta = TensorMeta::contiguous(xm.dtype, xm.device.clone(), &sizes);
        let strides = crate::infer::layout::preserved_strides(&sizes, &xm.known_strides()?);
        ones_meta.strides = strides.into_iter().map(crate::meta::Dim::Known).collect();
        let ones = g.call_before(
            id,
            "ones",
            Target::Function("torch.ones_like".into()),
            vec![Arg::Node(x)],
            vec![],
            NodeMeta::Tensor(ones_meta.clone()),
        );
        let mut nargs = args.clone();
        nargs[0] = Arg::Node(ones);
        let nkwargs: Vec<(String, Arg)> = kwargs
            .iter()
            .filter(|(k, _)| k != "inplace")
            .cloned()
            .collect();
        let noise = g.call_before(
            id,
            "noise",
            target.clone(),
            nargs,
            nkwargs,
            NodeMeta::Tensor(ones_meta),
        );
        g.set_call(
            id,
            Target::Method("mul".into()),
            vec![Arg::Node(x), Arg::Node(noise)],
            vec![],
        );
        Some(vec![ones, noise, id])
    })
}

/// Rewrites every attention with `dropout_p > 0` whose inputs are in `needs` into its math form
/// with the dropout noise as a forward value: `softmax(q kᵀ · scale + mask) * noise @ v`, the
/// noise drawn by `F.dropout(ones, p, True)` on the probabilities' shape. Eager's CPU attention
/// with dropout takes that math path and draws exactly this (same shape, same generator
/// calls), so values and random stream are eager's and the backward reuses the noise (the
/// `mul` rule saves it). Returns the nodes whose target is new.
pub fn rewrite_sdpa_dropout(g: &mut Graph, needs: &dyn Fn(NodeId) -> bool) -> Vec<NodeId> {
    rewrite_calls(g, "scaled_dot_product_attention", |g, site| {
        let CallSite {
            id, args, kwargs, ..
        } = site;
        let sig = ops::signature("scaled_dot_product_attention")?;
        let slots = ops::bind(sig, &args, &kwargs).ok()?;
        let p = match slots[4] {
            Some(Arg::Float(p)) => *p,
            Some(Arg::Int(p)) => *p as f64,
            _ => return None,
        };
        let node = |i: usize| match slots[i] {
            Some(Arg::Node(n)) => Some(*n),
            _ => None,
        };
        let (q, k, v) = (node(0)?, node(1)?, node(2)?);
        if p <= 0.0 || ![q, k, v].into_iter().any(needs) {
            return None;
        }
        let mask = match slots[3] {
            None | Some(Arg::None) => None,
            Some(Arg::Node(m)) => Some(*m),
            Some(_) => return None,
        };
        let causal = matches!(slots[5], Some(Arg::Bool(true)));
        let scale = match slots[6] {
            Some(Arg::Float(s)) => Some(*s),
            None | Some(Arg::None) => None,
            Some(_) => return None,
        };
        let gqa = matches!(slots[7], Some(Arg::Bool(true)));
        let meta = |n: NodeId| g.node(n).meta.tensor().cloned();
        let (qm, km, vm) = (meta(q)?, meta(k)?, meta(v)?);
        // Only CPU attention draws its dropout as this math form does; CUDA's fused attention
        // kernels draw inside the kernel (Philox offsets of their own), which no written-out
        // form reproduces. There the op keeps its no-rule fallback (torch's autograd).
        if qm.device.kind != "cpu" {
            return None;
        }
        let mask_meta = match mask {
            Some(mk) => Some((mk, meta(mk)?)),
            None => None,
        };
        let (qs, ks, vs) = (qm.known_sizes()?, km.known_sizes()?, vm.known_sizes()?);
        let r = qs.len();
        // Batch dims equal (the heads may differ only when grouped).
        let batch = if gqa && r >= 3 {
            r - 3
        } else {
            r.saturating_sub(2)
        };
        if r < 2 || ks.len() != r || vs.len() != r || qs[..batch] != ks[..batch] {
            return None;
        }
        let t = |sizes: &[i64]| {
            let mut m = TensorMeta::contiguous(qm.dtype, qm.device.clone(), sizes);
            m.requires_grad = qm.requires_grad || km.requires_grad || vm.requires_grad;
            NodeMeta::Tensor(m)
        };
        let list = |v: &[i64]| Arg::List(v.iter().map(|&i| Arg::Int(i)).collect());
        let mut new = Vec::new();
        let mut call = |g: &mut Graph,
                        hint: &str,
                        target: Target,
                        args: Vec<Arg>,
                        kwargs: Vec<(String, Arg)>,
                        meta| {
            let n = g.call_before(id, hint, target, args, kwargs, meta);
            new.push(n);
            n
        };
        let m = |name: &str| Target::Method(name.into());
        // Grouped heads: keys and values repeated per query head, as eager's math path does.
        let (mut kk, mut vv, mut ks2, mut vs2) = (k, v, ks.clone(), vs.clone());
        if gqa && r >= 3 && qs[r - 3] != ks[r - 3] {
            let (hq, hk) = (qs[r - 3], ks[r - 3]);
            if hk == 0 || hq % hk != 0 || vs[r - 3] != hk {
                return None;
            }
            ks2[r - 3] = hq;
            vs2[r - 3] = hq;
            let rep = hq / hk;
            kk = call(
                g,
                "key_rep",
                m("repeat_interleave"),
                vec![Arg::Node(k), Arg::Int(rep), Arg::Int(-3)],
                vec![],
                t(&ks2),
            );
            vv = call(
                g,
                "value_rep",
                m("repeat_interleave"),
                vec![Arg::Node(v), Arg::Int(rep), Arg::Int(-3)],
                vec![],
                t(&vs2),
            );
        }
        let (l, s) = (qs[r - 2], ks2[r - 2]);
        let mut ss = qs.clone();
        ss[r - 1] = s;
        let scale = scale.unwrap_or(1.0 / (qs[r - 1] as f64).sqrt());
        let kt_sizes = {
            let mut v = ks2.clone();
            v.swap(r - 1, r - 2);
            v
        };
        let kt = call(
            g,
            "key_t",
            m("transpose"),
            vec![Arg::Node(kk), Arg::Int(-2), Arg::Int(-1)],
            vec![],
            t(&kt_sizes),
        );
        let sc = call(
            g,
            "scores",
            m("matmul"),
            vec![Arg::Node(q), Arg::Node(kt)],
            vec![],
            t(&ss),
        );
        let mut sc = call(
            g,
            "scores",
            m("mul"),
            vec![Arg::Node(sc), Arg::Float(scale)],
            vec![],
            t(&ss),
        );
        let bool_meta = |sizes: &[i64]| {
            NodeMeta::Tensor(TensorMeta::contiguous(
                crate::meta::DType::Bool,
                qm.device.clone(),
                sizes,
            ))
        };
        if causal {
            let ones = call(
                g,
                "causal",
                m("new_ones"),
                vec![Arg::Node(q), list(&[l, s])],
                vec![("dtype".into(), Arg::DType(crate::meta::DType::Bool))],
                bool_meta(&[l, s]),
            );
            let keep = call(
                g,
                "causal",
                m("tril"),
                vec![Arg::Node(ones)],
                vec![],
                bool_meta(&[l, s]),
            );
            let drop = call(
                g,
                "causal",
                m("logical_not"),
                vec![Arg::Node(keep)],
                vec![],
                bool_meta(&[l, s]),
            );
            sc = call(
                g,
                "scores",
                m("masked_fill"),
                vec![
                    Arg::Node(sc),
                    Arg::Node(drop),
                    Arg::Float(f64::NEG_INFINITY),
                ],
                vec![],
                t(&ss),
            );
        }
        if let Some((mk, mm)) = mask_meta {
            if mm.dtype == crate::meta::DType::Bool {
                let ms = mm.known_sizes().unwrap_or_default();
                let drop = call(
                    g,
                    "mask",
                    m("logical_not"),
                    vec![Arg::Node(mk)],
                    vec![],
                    bool_meta(&ms),
                );
                sc = call(
                    g,
                    "scores",
                    m("masked_fill"),
                    vec![
                        Arg::Node(sc),
                        Arg::Node(drop),
                        Arg::Float(f64::NEG_INFINITY),
                    ],
                    vec![],
                    t(&ss),
                );
            } else {
                sc = call(
                    g,
                    "scores",
                    m("add"),
                    vec![Arg::Node(sc), Arg::Node(mk)],
                    vec![],
                    t(&ss),
                );
            }
        }
        let pr = call(
            g,
            "probs",
            m("softmax"),
            vec![Arg::Node(sc), Arg::Int(-1)],
            vec![],
            t(&ss),
        );
        let mut ones_meta = TensorMeta::contiguous(qm.dtype, qm.device.clone(), &ss);
        ones_meta.requires_grad = false;
        let ones = call(
            g,
            "ones",
            m("new_ones"),
            vec![Arg::Node(q), list(&ss)],
            vec![],
            NodeMeta::Tensor(ones_meta.clone()),
        );
        let noise = call(
            g,
            "noise",
            Target::Function("torch.nn.functional.dropout".into()),
            vec![Arg::Node(ones), Arg::Float(p), Arg::Bool(true)],
            vec![],
            NodeMeta::Tensor(ones_meta),
        );
        let dropped = call(
            g,
            "probs",
            m("mul"),
            vec![Arg::Node(pr), Arg::Node(noise)],
            vec![],
            t(&ss),
        );
        g.set_call(
            id,
            m("matmul"),
            vec![Arg::Node(dropped), Arg::Node(vv)],
            vec![],
        );
        new.push(id);
        Some(new)
    })
}
