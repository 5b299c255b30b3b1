//! Attention as one extern call: `F.scaled_dot_product_attention`, called by the user or
//! recognised in its written-out form `softmax((q @ k.transpose(-2, -1)) * scale [masked_fill
//! (mask, -inf)], -1) @ v`. torch's fused CPU kernel streams over key blocks and never stores the
//! `[L, S]` score matrix; the written-out form costs two GEMMs plus three full passes over it
//! (Inductor's `_sfdp_pattern_*` replacements).
//!
//! The rewrite is made only where it is exact: no intermediate of the chain has another user (a
//! returned softmax keeps the written-out form), q, k and v share one float dtype and their batch
//! sizes, the softmax is over the last dim without a dtype, and a masked_fill fills `-inf` from a
//! boolean mask (rows masked out entirely are made NaN by the host, as eager's softmax makes
//! them).

use std::collections::{HashMap, HashSet};

use fx::{Arg, DType, Graph, NodeId, NodeKind};

use super::args::{self, bind, LResult};
use super::extern_ops::extern_call_with;
use super::table::canonical;
use super::value::TensorVal;
use super::Lowerer;
use crate::ir::{ExternCall, SdpaMask};
use crate::size::Size;

/// One recognised attention chain, keyed by its final matmul.
#[derive(Clone, Debug)]
pub struct AttnMatch {
    q: Arg,
    k: Arg,
    v: Arg,
    mask: Option<Arg>,
    scale: f64,
}

/// Attention chains of a graph: the final matmuls to lower as one call, and the intermediate
/// nodes that are then not lowered at all.
#[derive(Default)]
pub struct AttnPlan {
    pub finals: HashMap<NodeId, AttnMatch>,
    pub skip: HashSet<NodeId>,
}

/// A call's canonical name, positional and keyword arguments.
type Call<'g> = (String, &'g [Arg], &'g [(String, Arg)]);

/// The call node `id`, unless it is in-place or reflected.
fn call(g: &Graph, id: NodeId) -> Option<Call<'_>> {
    let NodeKind::Call {
        target,
        args,
        kwargs,
    } = &g.node(id).kind
    else {
        return None;
    };
    let c = canonical(target, args, kwargs)?;
    if c.inplace || c.reflected {
        return None;
    }
    Some((c.name, args, kwargs))
}

fn node_arg(a: &Arg) -> Option<NodeId> {
    match a {
        Arg::Node(n) => Some(*n),
        _ => None,
    }
}

/// The node's only user is `user` (the output node counts as a user).
fn only_user(g: &Graph, id: NodeId, user: NodeId) -> bool {
    g.users(id) == [user]
}

fn meta(g: &Graph, a: &Arg) -> Option<(DType, Vec<i64>)> {
    let t = g.node(node_arg(a)?).meta.tensor()?;
    Some((t.dtype, t.known_sizes()?))
}

fn scalar(a: &Arg) -> Option<f64> {
    match a {
        Arg::Float(f) => Some(*f),
        Arg::Int(i) => Some(*i as f64),
        _ => None,
    }
}

/// `(input, other)` of a binary op node's positional arguments.
fn two(args: &[Arg], kwargs: &[(String, Arg)]) -> Option<(Arg, Arg)> {
    (args.len() == 2 && kwargs.is_empty()).then(|| (args[0].clone(), args[1].clone()))
}

/// Recognises the written-out attention chains of `g`.
pub fn plan(g: &Graph) -> AttnPlan {
    let mut plan = AttnPlan::default();
    for (id, _) in g.nodes() {
        if let Some((m, chain)) = match_at(g, id) {
            plan.finals.insert(id, m);
            plan.skip.extend(chain);
        }
    }
    plan
}

fn match_at(g: &Graph, fin: NodeId) -> Option<(AttnMatch, Vec<NodeId>)> {
    let (name, a, kw) = call(g, fin)?;
    if !matches!(name.as_str(), "matmul" | "bmm") {
        return None;
    }
    let (p, v) = two(a, kw)?;
    let p_id = node_arg(&p)?;
    // softmax(x, -1), with nothing else (a dtype, a legacy implicit dim) in the call.
    let (sname, sa, skw) = call(g, p_id)?;
    if sname != "softmax" || !only_user(g, p_id, fin) || sa.is_empty() {
        return None;
    }
    let dim = match (sa.get(1), skw) {
        (Some(d), []) if sa.len() == 2 => args::as_int(d)?,
        (None, [(k, d)]) if k == "dim" => args::as_int(d)?,
        _ => return None,
    };
    let (dtype, psizes) = meta(g, &sa[0])?;
    if dim != -1 && dim != psizes.len() as i64 - 1 {
        return None;
    }
    let mut chain = vec![p_id];
    let mut x = node_arg(&sa[0])?;
    // masked_fill(scores, mask, -inf)
    let mut mask = None;
    if let Some((n, ma, mkw)) = call(g, x) {
        if n == "masked_fill" && ma.len() == 3 && mkw.is_empty() {
            if !only_user(g, x, p_id) || scalar(&ma[2]) != Some(f64::NEG_INFINITY) {
                return None;
            }
            if meta(g, &ma[1])?.0 != DType::Bool {
                return None;
            }
            mask = Some(ma[1].clone());
            chain.push(x);
            x = node_arg(&ma[0])?;
        }
    }
    let users_of_x = *chain.last()?;
    // scores * scale, scores / scale
    let mut scale = 1.0;
    let mut scores = x;
    if let Some((n, ba, bkw)) = call(g, x) {
        if let (Some((l, r)), true) = (two(ba, bkw), matches!(n.as_str(), "mul" | "div")) {
            if !only_user(g, x, users_of_x) {
                return None;
            }
            let (t, s) = match (scalar(&l), scalar(&r)) {
                (None, Some(s)) => (l, s),
                (Some(s), None) if n == "mul" => (r, s),
                _ => return None,
            };
            scale = if n == "mul" { s } else { 1.0 / s };
            if !scale.is_finite() {
                return None;
            }
            chain.push(x);
            scores = node_arg(&t)?;
        }
    }
    let scores_user = *chain.last()?;
    if !only_user(g, scores, scores_user) {
        return None;
    }
    let (mname, mma, mmkw) = call(g, scores)?;
    if !matches!(mname.as_str(), "matmul" | "bmm") {
        return None;
    }
    let (q, kt) = two(mma, mmkw)?;
    let kt_id = node_arg(&kt)?;
    let (tname, ta, tkw) = call(g, kt_id)?;
    if tname != "transpose" || ta.len() != 3 || !tkw.is_empty() {
        return None;
    }
    let k = ta[0].clone();
    chain.push(scores);
    // Shapes and dtypes: [..., L, E] x [..., S, E] x [..., S, Ev], one float dtype, equal batch.
    let (qd, qs) = meta(g, &q)?;
    let (kd, ks) = meta(g, &k)?;
    let (vd, vs) = meta(g, &v)?;
    let n = qs.len();
    let dims = [args::as_int(&ta[1])?, args::as_int(&ta[2])?];
    let wrap = |d: i64| if d < 0 { d + n as i64 } else { d };
    let (d0, d1) = (wrap(dims[0]), wrap(dims[1]));
    if !(n == 3 || n == 4) || ks.len() != n || vs.len() != n {
        return None;
    }
    if (d0.min(d1), d0.max(d1)) != (n as i64 - 2, n as i64 - 1) {
        return None;
    }
    if qd != kd || qd != vd || qd != dtype || !matches!(qd, DType::Float32 | DType::Float64) {
        return None;
    }
    if qs[..n - 2] != ks[..n - 2] || qs[..n - 2] != vs[..n - 2] {
        return None;
    }
    if qs[n - 1] != ks[n - 1] || ks[n - 2] != vs[n - 2] || qs.contains(&0) || ks.contains(&0) {
        return None;
    }
    if (name == "bmm" || mname == "bmm") && n != 3 {
        return None;
    }
    Some((
        AttnMatch {
            q,
            k,
            v,
            mask,
            scale,
        },
        chain,
    ))
}

/// The `[B, L, H, E]` memory order for a 4-d attention operand or result: the layout a
/// following `transpose(1, 2).reshape(B, L, H * E)` reads without a copy. A q computed in the
/// graph is stored so, and the result follows q (see [`result_strides`]).
fn blhe_strides(sizes: &[Size]) -> Vec<Size> {
    if sizes.len() == 4 {
        let (h, l, e) = (sizes[1], sizes[2], sizes[3]);
        vec![l * h * e, e, h * e, Size::Const(1)]
    } else {
        super::value::contiguous_strides_sym(sizes)
    }
}

/// The strides torch's kernel gives the result, promised to the host (a result in other
/// strides is copied into them, and a returned result keeps eager's strides only when the
/// promise is eager's): fx's rule (`fx::infer::attention::sdpa_result_layout`, the one the
/// tracer's metadata follows) over q as the graph stores it, its layout applied to sizes that
/// may be symbolic.
fn result_strides(
    home: &str,
    (q, k, v): (&crate::ir::View, &crate::ir::View, &crate::ir::View),
    sizes: &[Size],
    dtype: DType,
    has_mask: bool,
) -> Vec<Size> {
    use fx::infer::attention::{sdpa_result_layout, SdpaCall, SdpaLayout};
    let layout = sdpa_result_layout(&SdpaCall {
        device: home,
        dtype,
        q_sizes: &q.sizes,
        q_strides: &q.strides,
        k_strides: &k.strides,
        v_strides: &v.strides,
        out_sizes: sizes,
        has_mask,
        dropout: false,
    });
    let contiguous = || super::value::contiguous_strides_sym(sizes);
    match layout {
        SdpaLayout::Contiguous => contiguous(),
        SdpaLayout::LikeQ => strides_in_order_of(&q.sizes, &q.strides).unwrap_or_else(contiguous),
        SdpaLayout::Blhe => blhe_strides(sizes),
    }
}

/// What fx's attention rule reads of a size: its value when it is a constant.
impl fx::infer::attention::SizeFact for Size {
    fn constant(self) -> Option<i64> {
        self.as_const()
    }
}

/// Dense strides for `sizes` in the memory order of `strides` (torch's `empty_like` under the
/// preserve format), or `None` when symbolic strides cannot be ordered.
fn strides_in_order_of(sizes: &[Size], strides: &[Size]) -> Option<Vec<Size>> {
    use crate::size::{as_consts, consts};
    if let (Some(n), Some(st)) = (as_consts(sizes), as_consts(strides)) {
        return Some(consts(&fx::infer::layout::preserved_strides(&n, &st)));
    }
    if super::outputs::dense_strides(sizes, strides) {
        return Some(strides.to_vec());
    }
    let min = |_| crate::index::SYMBOL_MIN;
    // Outermost first: a dim goes before another when its stride is provably larger; two
    // strides that cannot be compared leave the order undecided.
    let mut order: Vec<usize> = Vec::new();
    for d in 0..sizes.len() {
        let mut at = order.len();
        for (i, &o) in order.iter().enumerate() {
            let (a, b) = (strides[d], strides[o]);
            if a == b {
                continue;
            }
            if a.proved_ge(b, &min) {
                at = at.min(i);
            } else if !b.proved_ge(a, &min) {
                return None;
            }
        }
        order.insert(at, d);
    }
    let mut out = vec![Size::Const(0); sizes.len()];
    let mut acc = Size::Const(1);
    for &d in order.iter().rev() {
        out[d] = acc;
        acc = acc * sizes[d].at_least_one();
    }
    Some(out)
}

#[allow(clippy::too_many_arguments)]
fn emit(
    l: &mut Lowerer,
    q: &Arg,
    k: &Arg,
    v: &Arg,
    mask: Option<(&Arg, SdpaMask)>,
    scale: Option<f64>,
    is_causal: bool,
    enable_gqa: bool,
) -> LResult<TensorVal> {
    // The strides eager's q has, from its metadata (made dense in their order, as a buffer
    // the graph writes must be).
    let eager_q = match q {
        Arg::Node(n) => l.graph.node(*n).meta.tensor().and_then(|m| {
            let (n, st) = (m.known_sizes()?, m.known_strides()?);
            Some(fx::infer::layout::preserved_strides(&n, &st))
        }),
        _ => None,
    };
    let (q, k, v) = (l.tensor(q)?, l.tensor(k)?, l.tensor(v)?);
    // torch's fused kernel writes its result in q's memory order (`empty_like(q)`). A q
    // computed here (Llama's rotary embedding) is stored `[B, L, H, E]`, the order its
    // projection's GEMM wrote, so that the result comes in that layout (`result_strides`)
    // and a following `transpose(1, 2).reshape(B, L, H * E)` reads as it is: no copy of the
    // result by the host, where a contiguous q made the host copy it into that layout.
    // With one head or one position the two orders are one memory: q is then stored in
    // eager's strides, size-1 dims included, which the result's strides copy.
    let computed = q.ndim() == 4
        && q.as_view().is_none()
        && q.lazy_view().is_none()
        && l.resolve(&q).is_none();
    let one = |d: usize| q.sizes.get(d) == Some(&Size::Const(1));
    let q = match eager_q {
        _ if !computed => q,
        Some(strides) if one(1) || one(2) => l.realize_with(&q, crate::size::consts(&strides)),
        _ => {
            let strides = blhe_strides(&q.sizes);
            l.realize_with(&q, strides)
        }
    };
    let (kv, vv) = (l.view_of(&k), l.view_of(&v));
    let mut inputs = vec![q.clone(), k, v.clone()];
    let mask_kind = match mask {
        Some((m, kind)) => {
            inputs.push(l.tensor(m)?);
            kind
        }
        None => SdpaMask::None,
    };
    let mut sizes = q.sizes.clone();
    *sizes.last_mut().unwrap() = *v.sizes.last().unwrap();
    let qv = l.view_of(&q);
    let strides = result_strides(
        l.home,
        (&qv, &kv, &vv),
        &sizes,
        q.dtype,
        !matches!(mask_kind, SdpaMask::None),
    );
    Ok(extern_call_with(
        l,
        ExternCall::Sdpa {
            scale,
            is_causal,
            mask: mask_kind,
            enable_gqa,
        },
        &inputs,
        sizes,
        strides,
        q.dtype,
    ))
}

/// Lowers a recognised chain (see [`plan`]).
pub fn lower_match(l: &mut Lowerer, m: &AttnMatch) -> LResult<TensorVal> {
    emit(
        l,
        &m.q,
        &m.k,
        &m.v,
        m.mask.as_ref().map(|a| (a, SdpaMask::FillNegInf)),
        Some(m.scale),
        false,
        false,
    )
}

/// `F.scaled_dot_product_attention` called by the user: one extern call when torch's kernel
/// would run it as given (no dropout, matching batch sizes; with `enable_gqa`, q's heads a
/// multiple of k's and v's, each group of q heads reading one k/v head, as torch does).
pub fn sdpa_call(l: &mut Lowerer, a: &[Arg], kw: &[(String, Arg)]) -> LResult<TensorVal> {
    let b = bind(
        &[
            "query",
            "key",
            "value",
            "attn_mask",
            "dropout_p",
            "is_causal",
            "scale",
            "enable_gqa",
        ],
        a,
        kw,
    )?;
    if b.float_or("dropout_p", 0.0)? != 0.0 {
        return args::fallback("attention with dropout");
    }
    let enable_gqa = b.bool_or("enable_gqa", false)?;
    let scale = match b.get("scale") {
        None => None,
        Some(s) => Some(
            scalar(s)
                .ok_or_else(|| args::Reject::Fallback("attention scale is not a number".into()))?,
        ),
    };
    let is_causal = b.bool_or("is_causal", false)?;
    let (q, k, v) = (b.req("query")?, b.req("key")?, b.req("value")?);
    let (qt, kt, vt) = (l.tensor(q)?, l.tensor(k)?, l.tensor(v)?);
    let n = qt.ndim();
    if !(3..=4).contains(&n) || kt.ndim() != n || vt.ndim() != n {
        return args::fallback("attention operands of other ranks");
    }
    // Half precision too: the extern call is the op eager runs, with the same arguments (a
    // bool mask converted once per run as torch converts it, `additive_mask`), where running
    // it as a fallback converted the mask again in every layer (GPT-2 bf16 on CUDA: 24
    // `where`/`fill_` pairs a call).
    if qt.dtype != kt.dtype
        || qt.dtype != vt.dtype
        || !matches!(
            qt.dtype,
            DType::Float32 | DType::Float64 | DType::Float16 | DType::BFloat16
        )
    {
        return args::fallback("attention operand dtypes");
    }
    // With `enable_gqa` the heads (dim -3) may differ: q's a multiple of k's, k's equal to v's
    // (read from the nodes' metadata: known head counts).
    let batch = if enable_gqa { n - 3 } else { n - 2 };
    let heads = |a: &Arg| meta(l.graph, a).map(|(_, s)| s[s.len() - 3]);
    if enable_gqa
        && !matches!((heads(q), heads(k), heads(v)),
            (Some(hq), Some(hk), Some(hv)) if hk == hv && hk > 0 && hq % hk == 0)
    {
        return args::fallback("grouped-query attention head counts");
    }
    if qt.sizes[..batch] != kt.sizes[..batch]
        || qt.sizes[..batch] != vt.sizes[..batch]
        || qt.sizes[n - 1] != kt.sizes[n - 1]
        || kt.sizes[n - 2] != vt.sizes[n - 2]
        || qt.sizes.contains(&Size::Const(0))
        || kt.sizes.contains(&Size::Const(0))
    {
        return args::fallback("attention operand shapes");
    }
    let mask = match b.get("attn_mask") {
        None => None,
        Some(m) => {
            let mt = l.tensor(m)?;
            if mt.dtype != DType::Bool && mt.dtype != qt.dtype {
                return args::fallback("attention mask dtype");
            }
            Some((m, SdpaMask::AsIs))
        }
    };
    emit(l, q, k, v, mask, scale, is_causal, enable_gqa)
}
