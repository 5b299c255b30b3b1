//! Ops the table does not lower run on the host ("fallbacks"): their arguments handed over as
//! views of the graph's buffers, their results adopted as buffers. Also what a fallback needs
//! beyond that: eager's storage for ops that read storage rather than elements, and results
//! torch cannot size ahead.

use fx::{Arg, NodeId, NodeKind, NodeMeta, TensorMeta};

use super::args::{self, LResult};
use super::value::TensorVal;
use super::{
    channels_last_strides, dense_strides, dense_strides_const, known_tensor, table, LValue, Lowerer,
};
use crate::ir::{contiguous_strides, BufKind, FallbackArg, IrNode, Scalar};
use crate::size::{consts, expect_consts};
use crate::InductorError;

/// Fallback ops some of whose results (by position) torch's CPU kernel sizes differently from
/// its meta kernel, which the graph's metadata comes from: `_embedding_bag`'s `offset2bag`,
/// `bag_size` and `max_indices` depend on the mode and on the data. A graph that reads them runs
/// on the eager runner; one that reads only the bags discards them (see `BufKind::Discarded`).
pub(super) const META_DIFFERS: &[(&str, &[usize])] = &[
    ("embedding_bag", &[1, 2, 3]),
    ("_embedding_bag", &[1, 2, 3]),
];

/// Ops whose result depends on their input's storage rather than its elements (an offset into the
/// storage, strides over it): run by the host, they need eager's storage (see
/// `Lowerer::check_storage_arg`).
pub(super) const READS_STORAGE: &[&str] = &["as_strided", "as_strided_copy", "as_strided_scatter"];

/// Ops whose eager result is always a view of their first argument (never a copy): the lowering
/// gives the same view of the same buffer.
pub(super) const TRUE_VIEWS: &[&str] = &[
    "view",
    "permute",
    "transpose",
    "swapaxes",
    "swapdims",
    "t",
    "expand",
    "expand_as",
    "broadcast_to",
    "squeeze",
    "unsqueeze",
    "select",
    "narrow",
    "detach",
    "alias",
    "as_strided",
    "diagonal",
    "movedim",
    "moveaxis",
];

/// Host ops whose channels-last kernels are the ones eager runs for a channels-last model (torch
/// picks a convolution's or pooling's memory format from its input and weight, and a batch
/// norm's from its input), and whose values do not depend on their operands' strides. In a
/// channels-last graph their 4-d operands are handed over channels-last even where the graph's
/// metadata says contiguous: a backward graph's metadata comes from decomposed ops and torch's
/// meta kernels, which lay out a batch norm's or a convolution's input gradient contiguously
/// where eager's CUDA kernels return it channels-last, so following it wrote each gradient
/// transposed (one store 256 bytes from the next per thread) and made cuDNN copy it back:
/// resnet50's channels-last bf16 step spent ~8 ms of its 34 on that (H100, session 31).
pub(super) const TAKES_CHANNELS_LAST: &[&str] = &[
    "convolution",
    "convolution_backward",
    "cudnn_convolution",
    "max_pool2d_with_indices",
    "max_pool2d_with_indices_backward",
    "avg_pool2d",
    "avg_pool2d_backward",
    "adaptive_avg_pool2d",
    "_adaptive_avg_pool2d",
    "_adaptive_avg_pool2d_backward",
    "adaptive_max_pool2d",
    "adaptive_max_pool2d_backward",
    "native_batch_norm",
    "native_batch_norm_backward",
    "cudnn_batch_norm",
    "cudnn_batch_norm_backward",
    "upsample_nearest2d",
    "upsample_nearest2d_backward",
    "upsample_bilinear2d",
    "upsample_bilinear2d_backward",
];

/// Whether `target` (an `aten` overload such as `torch.ops.aten.convolution_backward.default`)
/// is one of [`TAKES_CHANNELS_LAST`].
fn takes_channels_last(target: &fx::Target) -> bool {
    let name = target.name();
    if name == fx::autodiff::rules::MAX_POOL2D_BACKWARD {
        // torch's `max_pool2d_with_indices` and its backward, run by the host call.
        return true;
    }
    let Some(rest) = name.strip_prefix("torch.ops.aten.") else {
        return false;
    };
    let op = rest.split('.').next().unwrap_or(rest);
    TAKES_CHANNELS_LAST.contains(&op)
}

impl Lowerer<'_> {
    /// `channels_last`: hand 4-d operands channels-last where the metadata says contiguous
    /// (see [`TAKES_CHANNELS_LAST`]).
    fn fallback_arg(&mut self, a: &Arg, channels_last: bool) -> LResult<FallbackArg> {
        Ok(match a {
            Arg::Node(n) => match self.value(a)? {
                LValue::Tensor(t) => {
                    // The host op sees eager's layout: a value the lowering holds in other
                    // strides (`x.t().contiguous()` kept as the view `x.t()`) is written out as
                    // eager lays it out, or a layout-reading op (`view`, a functional pass's
                    // `view_scatter`) would fail or read other elements.
                    let v = self.view_of(&t);
                    let want = known_tensor(&self.graph.node(*n).meta)
                        .and_then(|m| m.known_strides())
                        .map(|w| match crate::size::as_consts(&t.sizes) {
                            Some(s)
                                if channels_last && s.len() == 4 && w == contiguous_strides(&s) =>
                            {
                                channels_last_strides(&s)
                            }
                            _ => w,
                        })
                        .filter(|w| {
                            dense_strides(&t.sizes, &consts(w))
                                && !t
                                    .csizes()
                                    .iter()
                                    .zip(v.const_layout().1.iter().zip(w))
                                    .all(|(s, (a, b))| *s <= 1 || a == b)
                        });
                    match want {
                        Some(w) => {
                            let r = self.realize_with(&t, consts(&w));
                            FallbackArg::Tensor(r.as_view().unwrap())
                        }
                        None => FallbackArg::Tensor(v),
                    }
                }
                LValue::Scalar(Scalar::I(i)) => FallbackArg::Const(Arg::Int(i)),
                LValue::Scalar(Scalar::F(f)) => FallbackArg::Const(Arg::Float(f)),
                LValue::Scalar(Scalar::B(b)) => FallbackArg::Const(Arg::Bool(b)),
                LValue::Tuple(_) => return args::fallback("tuple-valued argument"),
            },
            Arg::Tuple(xs) => FallbackArg::Tuple(
                xs.iter()
                    .map(|x| self.fallback_arg(x, channels_last))
                    .collect::<LResult<_>>()?,
            ),
            Arg::List(xs) => FallbackArg::List(
                xs.iter()
                    .map(|x| self.fallback_arg(x, channels_last))
                    .collect::<LResult<_>>()?,
            ),
            Arg::Slice(..)
                if {
                    let mut v = Vec::new();
                    a.nodes(&mut v);
                    !v.is_empty()
                } =>
            {
                return args::fallback("slice with tensor bounds")
            }
            other => FallbackArg::Const(other.clone()),
        })
    }

    /// A storage-reading op (see [`READS_STORAGE`]) run by the host sees the storage of the
    /// tensor it is handed, so that storage must be eager's, element for element: a view of a
    /// graph input reached through true views only (the host rebuilds it on the caller's own
    /// storage), or the fresh result of an op (eager's storage holds exactly its elements, at
    /// offset 0) that the lowering holds in a whole buffer laid out as eager lays it out. A lazy
    /// value realized into a fresh buffer, a `contiguous()` the lowering elided or a slice of an
    /// intermediate would hand it other memory; such graphs run on the eager runner.
    pub(super) fn check_storage_arg(&mut self, args: &[Arg]) -> Result<(), InductorError> {
        let refuse = |why: &str| {
            Err(InductorError::Unsupported(format!(
                "a storage-reading op on {why}"
            )))
        };
        let Some(Arg::Node(n)) = args.first() else {
            return Ok(());
        };
        let Some(LValue::Tensor(t)) = self.env.get(n).cloned() else {
            return refuse("a non-tensor");
        };
        // A lazy fresh result is realized as eager lays it out.
        if t.as_view().is_none() {
            let fresh = match &self.graph.node(*n).kind {
                NodeKind::Call {
                    target,
                    args,
                    kwargs,
                } => !table::canonical(target, args, kwargs).is_some_and(|c| c.may_alias),
                _ => false,
            };
            let want = known_tensor(&self.graph.node(*n).meta)
                .map(|m| consts(&m.known_strides().unwrap()))
                .filter(|w| fresh && dense_strides(&t.sizes, w));
            let Some(want) = want else {
                return refuse("a value the lowering computes lazily");
            };
            let r = self.realize_with(&t, want);
            self.env.insert(*n, LValue::Tensor(r));
        }
        let Some(LValue::Tensor(t)) = self.env.get(n) else {
            return refuse("a non-tensor");
        };
        let Some(v) = t.as_view() else {
            return refuse("a value the lowering computes lazily");
        };
        let buf = &self.ir.buffers[v.buf];
        // Walk back through eager views to where the storage was made.
        let mut cur = *n;
        loop {
            let node = self.graph.node(cur);
            match &node.kind {
                NodeKind::Placeholder { .. } => {
                    return if matches!(buf.kind, BufKind::Input(_)) {
                        Ok(())
                    } else {
                        refuse("a view of an input the lowering copied")
                    };
                }
                NodeKind::Call {
                    target,
                    args,
                    kwargs,
                } => {
                    let c = table::canonical(target, args, kwargs);
                    let is_view = c
                        .as_ref()
                        .is_some_and(|c| TRUE_VIEWS.contains(&c.name.as_str()));
                    if cur != *n && !is_view {
                        return refuse("a view of an intermediate");
                    }
                    if !is_view {
                        // A fresh result: our whole buffer must be eager's storage.
                        let Some(meta) = known_tensor(&node.meta) else {
                            return refuse("a tensor of unknown layout");
                        };
                        let want = meta.known_strides().unwrap();
                        let (vs, vst) = v.const_layout();
                        let numel: i64 = vs.iter().product();
                        let buf_numel: i64 = expect_consts(&buf.sizes, "a fallback's result")
                            .iter()
                            .product();
                        let same_strides = vs
                            .iter()
                            .zip(vst.iter().zip(&want))
                            .all(|(s, (a, b))| *s <= 1 || a == b);
                        return if matches!(buf.kind, BufKind::Computed)
                            && v.offset == 0
                            && numel == buf_numel
                            && same_strides
                            && dense_strides_const(&vs, &vst)
                            && !c.is_some_and(|c| c.may_alias)
                        {
                            Ok(())
                        } else {
                            refuse("an intermediate laid out unlike eager's")
                        };
                    }
                    match args.first() {
                        Some(Arg::Node(p)) => cur = *p,
                        _ => return refuse("a view of a non-tensor"),
                    }
                }
                NodeKind::Output { .. } => return refuse("an output"),
            }
        }
    }

    /// Emits a host call for a node the table could not lower.
    pub(super) fn fallback(
        &mut self,
        id: NodeId,
        target: &fx::Target,
        args: &[Arg],
        kwargs: &[(String, Arg)],
        meta: &NodeMeta,
        reason: String,
    ) -> Result<LValue, InductorError> {
        let unsupported = |m: String| InductorError::Unsupported(m);
        let unpassable = |_| {
            unsupported(format!(
                "cannot pass the arguments of {} to the host",
                target.name()
            ))
        };
        let cl = self.channels_last && takes_channels_last(target);
        let fargs = args
            .iter()
            .map(|a| self.fallback_arg(a, cl))
            .collect::<LResult<Vec<_>>>()
            .map_err(unpassable)?;
        let fkwargs = kwargs
            .iter()
            .map(|(k, a)| Ok((k.clone(), self.fallback_arg(a, cl)?)))
            .collect::<LResult<Vec<_>>>()
            .map_err(unpassable)?;
        // `None` items of a result tuple (`convolution_backward` without a bias, or with a
        // gradient its output mask leaves out) are allowed where nothing reads them.
        let metas: Vec<Option<&TensorMeta>> = match meta {
            NodeMeta::Tensor(t) => vec![Some(t)],
            NodeMeta::Tuple(xs) => xs
                .iter()
                .map(|x| match x {
                    NodeMeta::None => Some(None),
                    x => known_tensor(x).map(Some),
                })
                .collect::<Option<_>>()
                .ok_or_else(|| unsupported(format!("{} returns non-tensors", target.name())))?,
            _ => {
                return Err(unsupported(format!(
                    "{} returns a non-tensor",
                    target.name()
                )))
            }
        };
        // Elements of a result tuple that no `getitem` takes are discarded unchecked.
        let used: Option<Vec<i64>> = match meta {
            NodeMeta::Tuple(_) => self
                .graph
                .users(id)
                .into_iter()
                .map(|u| match &self.graph.node(u).kind {
                    NodeKind::Call { target, args, .. }
                        if matches!(target, fx::Target::Function(f) if f == "operator.getitem" || f == "_operator.getitem")
                            && matches!(args.first(), Some(Arg::Node(x)) if *x == id) =>
                    {
                        match args.get(1) {
                            Some(Arg::Int(k)) => Some(*k),
                            _ => None,
                        }
                    }
                    _ => None,
                })
                .collect(),
            _ => None,
        };
        if let Some((_, unreliable)) = table::canonical(target, args, kwargs)
            .and_then(|c| META_DIFFERS.iter().find(|(name, _)| *name == c.name))
        {
            let n = metas.len() as i64;
            let read = |k: usize| {
                used.as_ref()
                    .is_none_or(|u| u.iter().any(|&j| j == k as i64 || j + n == k as i64))
            };
            if unreliable.iter().any(|&k| read(k)) {
                return Err(unsupported(format!(
                    "{} results whose sizes torch's meta kernel does not predict",
                    target.name()
                )));
            }
        }
        let mut vals = Vec::new();
        let mut outs = Vec::new();
        for (k, m) in metas.iter().enumerate() {
            let n = metas.len() as i64;
            let unused = used
                .as_ref()
                .is_some_and(|u| !u.iter().any(|&j| j == k as i64 || j + n == k as i64));
            let Some(m) = m else {
                if !unused {
                    return Err(unsupported(format!(
                        "{} returns None where the graph reads a tensor",
                        target.name()
                    )));
                }
                // A placeholder the run skips (never read, never allocated).
                let buf = self.ir.add_buffer(
                    fx::DType::Float32,
                    consts(&[0]),
                    consts(&[1]),
                    BufKind::Discarded,
                );
                outs.push(buf);
                vals.push(LValue::Scalar(Scalar::I(0)));
                continue;
            };
            let (Some(sizes), Some(strides)) = (m.known_sizes(), m.known_strides()) else {
                return Err(unsupported("symbolic sizes".into()));
            };
            // A layout whose elements share memory (an expand's stride 0) is not one a fresh
            // result can be copied into: where the host's result differs from it, the copy
            // raises (torch: "more than one element of the written-to tensor refers to a
            // single memory location"). Such a buffer is dense; an op that does return the
            // expand is copied into it (session 28: the compiled backward's scatter of a
            // `sum`'s gradient).
            let strides = if fx::infer::layout::has_internal_overlap(&sizes, &strides) {
                fx::infer::layout::preserved_strides(&sizes, &strides)
            } else {
                strides
            };
            // Pooling and friends keep a channels-last input's layout; where the two layouts
            // are the same memory (a 1x1 filter's gradient, one channel) the metadata's strides
            // stay, the ones eager returns.
            let strides = if self.channels_last
                && sizes.len() == 4
                && strides == contiguous_strides(&sizes)
                && !same_memory_order(&sizes, &channels_last_strides(&sizes), &strides)
            {
                channels_last_strides(&sizes)
            } else {
                strides
            };
            let kind = if unused {
                BufKind::Discarded
            } else {
                BufKind::Computed
            };
            let buf = self
                .ir
                .add_buffer(m.dtype, consts(&sizes), consts(&strides), kind);
            outs.push(buf);
            vals.push(LValue::Tensor(TensorVal::buffer(
                buf,
                m.dtype,
                consts(&sizes),
                consts(&strides),
            )));
        }
        self.ir.nodes.push(IrNode::Fallback {
            target: target.clone(),
            args: fargs,
            kwargs: fkwargs,
            outs,
            reason,
            node: id,
        });
        Ok(match meta {
            NodeMeta::Tensor(_) => vals.pop().unwrap(),
            _ => LValue::Tuple(vals),
        })
    }
}

/// Whether strides `a` and `b` of `sizes` differ only along dims of size 1 (the same elements at
/// the same addresses).
fn same_memory_order(sizes: &[i64], a: &[i64], b: &[i64]) -> bool {
    sizes
        .iter()
        .zip(a.iter().zip(b))
        .all(|(&n, (x, y))| n <= 1 || x == y)
}
