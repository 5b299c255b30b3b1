//! Symbolic sizes of sliding-window ops (convolutions, transposed convolutions, pooling) and of
//! adaptive pooling: each output spatial size is a floor division of the input's, so fitting
//! (which selects among input sizes) cannot find it. The rules write torch's output-size
//! formulas over [`SymExpr`] and return the decisions those formulas make at the hints as
//! relations, the way torch's meta functions guard them:
//!
//! - pooling divides with `div_rtn` (round toward negative infinity), which asks whether the
//!   numerator's remainder by the stride is zero: guarded `num % s == 0` or `!= 0`, so the
//!   sizes of each parity class share a graph (torch.compile makes the same two graphs for a
//!   stride-2 pool over odd and even sizes);
//! - `ceil_mode` drops a last window that would start in the right padding:
//!   `(out - 1) * s >= L + p` decided at the hints;
//! - the output must not be empty (torch raises): `num >= 0`.
//!
//! Convolutions divide with plain `//` and guard nothing else. `max_pool1d` has no rule: torch
//! specializes it (a graph per length), and the op specializes here too; 3-d pooling is not
//! checked against torch yet and specializes as before.

use super::Sym;
use crate::graph::Arg;
use crate::meta::Dim;
use crate::sym::{RelOp, Relation, SymExpr};
use crate::InferError;

const CONV: &[&str] = &[
    "input", "weight", "bias", "stride", "padding", "dilation", "groups",
];
const CONV_T: &[&str] = &[
    "input",
    "weight",
    "bias",
    "stride",
    "padding",
    "output_padding",
    "groups",
    "dilation",
];
const MAX_POOL: &[&str] = &[
    "input",
    "kernel_size",
    "stride",
    "padding",
    "dilation",
    "ceil_mode",
    "return_indices",
];
const AVG_POOL: &[&str] = &[
    "input",
    "kernel_size",
    "stride",
    "padding",
    "ceil_mode",
    "count_include_pad",
    "divisor_override",
];
const ADAPTIVE: &[&str] = &["input", "output_size", "return_indices"];

/// Window positions along a dim of length `len` (a convolution's output length, `F.unfold`'s
/// block count): `(len + 2 * padding - span - 1) // stride + 1`, `span` the dilated kernel's
/// reach past its first element; the numerator at least 0 is returned as a relation (torch
/// raises below it).
pub(super) fn windows_along(
    len: &SymExpr,
    span: &SymExpr,
    padding: i64,
    stride: i64,
    rels: &mut Vec<Relation>,
) -> SymExpr {
    let num = len.sub(span).add_const(2 * padding - 1);
    rels.push(Relation::new(num.clone(), RelOp::Ge, SymExpr::constant(0)));
    num.floordiv(&SymExpr::constant(stride)).add_const(1)
}

/// The window ops with a rule here, and their spatial rank.
pub(super) fn window_rank(name: &str) -> Option<usize> {
    Some(match name {
        "conv1d"
        | "conv_transpose1d"
        | "avg_pool1d"
        | "adaptive_avg_pool1d"
        | "adaptive_max_pool1d" => 1,
        "conv2d"
        | "conv_transpose2d"
        | "max_pool2d"
        | "avg_pool2d"
        | "adaptive_avg_pool2d"
        | "adaptive_max_pool2d" => 2,
        "conv3d" | "conv_transpose3d" => 3,
        _ => return None,
    })
}

impl Sym<'_> {
    /// An `int[n]` argument: one int for every spatial dim, or `n` ints (a single-element
    /// list repeats too, as torch's `expand_param_if_needed`). `None`/absent is `default`.
    pub(super) fn ints(
        &self,
        a: Option<&Arg>,
        n: usize,
        default: Option<Vec<i64>>,
    ) -> Option<Vec<i64>> {
        match a {
            None | Some(Arg::None) => default,
            Some(Arg::Int(v)) => Some(vec![*v; n]),
            Some(Arg::Tuple(items) | Arg::List(items)) => {
                let v: Vec<i64> = items
                    .iter()
                    .map(|i| match i {
                        Arg::Int(v) => Some(*v),
                        _ => None,
                    })
                    .collect::<Option<_>>()?;
                match v.len() {
                    0 => default,
                    1 => Some(vec![v[0]; n]),
                    k if k == n => Some(v),
                    _ => None,
                }
            }
            _ => None,
        }
    }

    fn flag(a: Option<&Arg>) -> Option<bool> {
        match a {
            None | Some(Arg::None) => Some(false),
            Some(Arg::Bool(b)) => Some(*b),
            Some(Arg::Int(v)) => Some(*v != 0),
            _ => None,
        }
    }

    /// The result sizes of a window op `name` (see [`window_rank`]), with its relations.
    pub(super) fn window(
        &self,
        name: &str,
        args: &[Arg],
        kwargs: &[(String, Arg)],
        rels: &mut Vec<Relation>,
    ) -> Result<Vec<Dim>, InferError> {
        let n = window_rank(name).ok_or(InferError::Unsupported)?;
        let sig = if name.starts_with("conv_transpose") {
            CONV_T
        } else if name.starts_with("conv") {
            CONV
        } else if name.starts_with("max_pool") {
            MAX_POOL
        } else if name.starts_with("avg_pool") {
            AVG_POOL
        } else {
            ADAPTIVE
        };
        let slots = crate::ops::bind(sig, args, kwargs).map_err(|_| InferError::Unsupported)?;
        let x = slots[0]
            .and_then(|a| self.tensor(a))
            .ok_or(InferError::Unsupported)?;
        // Batched (`n + 2` dims) or not (`n + 1`); the spatial dims are the last `n`.
        if x.ndim() != n + 1 && x.ndim() != n + 2 {
            return Err(InferError::Unsupported);
        }
        let lead = x.ndim() - n;
        let spatial: Vec<SymExpr> = x.sizes[lead..].iter().map(Dim::expr).collect();
        let mut sizes: Vec<Dim> = x.sizes[..lead].to_vec();
        let out: Vec<SymExpr> = if sig == ADAPTIVE {
            let want: Vec<Option<i64>> = match slots[1] {
                Some(Arg::Int(v)) => vec![Some(*v); n],
                Some(Arg::Tuple(items) | Arg::List(items)) if items.len() == n => items
                    .iter()
                    .map(|i| match i {
                        Arg::Int(v) => Ok(Some(*v)),
                        Arg::None => Ok(None),
                        _ => Err(InferError::Unsupported),
                    })
                    .collect::<Result<_, _>>()?,
                _ => return Err(InferError::Unsupported),
            };
            want.iter()
                .zip(&spatial)
                .map(|(w, l)| w.map_or_else(|| l.clone(), SymExpr::constant))
                .collect()
        } else if sig == CONV || sig == CONV_T {
            let w = slots[1]
                .and_then(|a| self.tensor(a))
                .ok_or(InferError::Unsupported)?;
            // The filter's sizes may be symbolic too (`dynamic=True` makes a global weight's
            // dims dynamic, as torch does).
            let wk: Vec<SymExpr> = w.sizes.iter().map(Dim::expr).collect();
            if wk.len() != n + 2 {
                return Err(InferError::Unsupported);
            }
            let groups = match slots[6] {
                None => 1,
                Some(Arg::Int(g)) if *g >= 1 => *g,
                _ => return Err(InferError::Unsupported),
            };
            // The input's channels are the filter's times the groups, and a bias has one
            // value per output channel (torch checks both; equal symbols are one symbol or
            // guarded equal).
            let (cin, cout) = if sig == CONV {
                (wk[1].mul_const(groups), wk[0].clone())
            } else {
                (wk[0].clone(), wk[1].mul_const(groups))
            };
            rels.push(Relation::new(x.sizes[lead - 1].expr(), RelOp::Eq, cin));
            // The batch (if any), then the output channels.
            sizes.truncate(lead - 1);
            if let Some(b) = slots[2].and_then(|a| self.tensor(a)) {
                if b.ndim() != 1 {
                    return Err(InferError::Unsupported);
                }
                rels.push(Relation::new(b.sizes[0].expr(), RelOp::Eq, cout));
            }
            let stride = self.ints(slots[3], n, Some(vec![1; n]));
            let dil_slot = if sig == CONV { 5 } else { 7 };
            let dilation = self.ints(slots[dil_slot], n, Some(vec![1; n]));
            let (Some(stride), Some(dilation)) = (stride, dilation) else {
                return Err(InferError::Unsupported);
            };
            if sig == CONV {
                // `padding="same"` keeps the length (stride 1 only, torch checks);
                // `"valid"` is no padding.
                let same = matches!(slots[4], Some(Arg::Str(s)) if s == "same");
                let padding = match slots[4] {
                    Some(Arg::Str(s)) if s == "same" || s == "valid" => Some(vec![0; n]),
                    a => self.ints(a, n, Some(vec![0; n])),
                }
                .ok_or(InferError::Unsupported)?;
                sizes.push(Dim::from_expr(wk[0].clone()));
                let mut out = Vec::new();
                for i in 0..n {
                    if same {
                        out.push(spatial[i].clone());
                        continue;
                    }
                    let span = wk[i + 2].add_const(-1).mul_const(dilation[i]);
                    out.push(windows_along(
                        &spatial[i],
                        &span,
                        padding[i],
                        stride[i],
                        rels,
                    ));
                }
                out
            } else {
                let padding = self
                    .ints(slots[4], n, Some(vec![0; n]))
                    .ok_or(InferError::Unsupported)?;
                let extra = self
                    .ints(slots[5], n, Some(vec![0; n]))
                    .ok_or(InferError::Unsupported)?;
                sizes.push(Dim::from_expr(wk[1].mul_const(groups)));
                (0..n)
                    .map(|i| {
                        let span = wk[i + 2].add_const(-1).mul_const(dilation[i]);
                        spatial[i]
                            .add_const(-1)
                            .mul_const(stride[i])
                            .add(&span)
                            .add_const(-2 * padding[i] + extra[i] + 1)
                    })
                    .collect()
            }
        } else {
            let kernel = self
                .ints(slots[1], n, None)
                .ok_or(InferError::Unsupported)?;
            let stride = self
                .ints(slots[2], n, Some(kernel.clone()))
                .ok_or(InferError::Unsupported)?;
            let padding = self
                .ints(slots[3], n, Some(vec![0; n]))
                .ok_or(InferError::Unsupported)?;
            let (dilation, ceil) = if sig == MAX_POOL {
                if Self::flag(slots[6]) != Some(false) {
                    // `return_indices`: a tuple result, left to specialization.
                    return Err(InferError::Unsupported);
                }
                (
                    self.ints(slots[4], n, Some(vec![1; n]))
                        .ok_or(InferError::Unsupported)?,
                    Self::flag(slots[5]).ok_or(InferError::Unsupported)?,
                )
            } else {
                (
                    vec![1; n],
                    Self::flag(slots[4]).ok_or(InferError::Unsupported)?,
                )
            };
            if kernel
                .iter()
                .chain(&stride)
                .chain(&dilation)
                .any(|&v| v < 1)
            {
                return Err(InferError::Unsupported);
            }
            (0..n)
                .map(|i| {
                    self.pooled(
                        &spatial[i],
                        kernel[i],
                        stride[i],
                        padding[i],
                        dilation[i],
                        ceil,
                        rels,
                    )
                })
                .collect::<Result<_, _>>()?
        };
        sizes.extend(out.into_iter().map(Dim::from_expr));
        Ok(sizes)
    }

    /// torch's `pooling_output_shape` of length `len` (see the module's doc for the relations).
    #[allow(clippy::too_many_arguments)]
    fn pooled(
        &self,
        len: &SymExpr,
        k: i64,
        s: i64,
        p: i64,
        d: i64,
        ceil: bool,
        rels: &mut Vec<Relation>,
    ) -> Result<SymExpr, InferError> {
        let zero = SymExpr::constant(0);
        let stride = SymExpr::constant(s);
        let num = len.add_const(2 * p - d * (k - 1) - 1 + if ceil { s - 1 } else { 0 });
        let nh = self.hint(&num).ok_or(InferError::Unsupported)?;
        if nh < 0 {
            return Err(InferError::Unsupported);
        }
        rels.push(Relation::new(num.clone(), RelOp::Ge, zero.clone()));
        let rem = num.modulo(&stride);
        let op = if nh % s == 0 { RelOp::Eq } else { RelOp::Ne };
        rels.push(Relation::new(rem, op, zero));
        let mut out = num.floordiv(&stride).add_const(1);
        if ceil {
            let last = out.add_const(-1).mul_const(s);
            let edge = len.add_const(p);
            let (lh, eh) = (
                self.hint(&last).ok_or(InferError::Unsupported)?,
                self.hint(&edge).ok_or(InferError::Unsupported)?,
            );
            if lh >= eh {
                rels.push(Relation::new(last, RelOp::Ge, edge));
                out = out.add_const(-1);
            } else {
                rels.push(Relation::new(last, RelOp::Lt, edge));
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use crate::graph::{Arg, Graph, Target};
    use crate::infer::symbolic::tests::{s, strided_input};
    use crate::infer::symbolic::{evaluate, infer_symbolic, Symbols};
    use crate::infer::InferCtx;
    use crate::meta::{DType, Device, Dim, NodeMeta, TensorMeta};
    use crate::sym::Relation;

    fn call(
        g: &Graph,
        target: &str,
        args: &[Arg],
        kwargs: &[(String, Arg)],
        hints: &[i64],
    ) -> (NodeMeta, Vec<Relation>) {
        infer_symbolic(
            &InferCtx::default(),
            g,
            &Target::Function(target.into()),
            args,
            kwargs,
            Symbols::hints(hints),
        )
        .unwrap()
    }

    fn sizes_at(m: &NodeMeta, point: &[i64]) -> Vec<i64> {
        evaluate(m, point)
            .unwrap()
            .tensor()
            .unwrap()
            .known_sizes()
            .unwrap()
    }

    fn texts(rels: &[Relation]) -> Vec<String> {
        rels.iter().map(|r| r.to_string()).collect()
    }

    /// `F.max_pool2d(x, 2)` over `[2, 3, s0, s1]`: `(L - 2) // 2 + 1` per spatial dim, with
    /// torch's `div_rtn` decision guarded by parity (s0 = 7 odd numerator, s1 = 8 even).
    #[test]
    fn max_pool_sizes_are_floor_divisions_guarded_by_parity() {
        let mut g = Graph::new();
        let x = Arg::Node(strided_input(
            &mut g,
            vec![Dim::Known(2), Dim::Known(3), s(0), s(1)],
            None,
        ));
        let (m, rels) = call(
            &g,
            "torch.nn.functional.max_pool2d",
            &[x, Arg::Int(2)],
            &[],
            &[7, 8],
        );
        for (h, w) in [(7, 8), (9, 10), (20, 33), (2, 2)] {
            assert_eq!(
                sizes_at(&m, &[h, w]),
                [2, 3, (h - 2) / 2 + 1, (w - 2) / 2 + 1]
            );
        }
        let rels = texts(&rels);
        assert!(
            rels.contains(&"((s0 - 2) % 2) != 0".to_string()),
            "{rels:?}"
        );
        assert!(
            rels.contains(&"((s1 - 2) % 2) == 0".to_string()),
            "{rels:?}"
        );
        // Contiguous output strides over the symbolic sizes.
        let t = m.tensor().unwrap();
        assert_eq!(
            evaluate(&m, &[9, 10])
                .unwrap()
                .tensor()
                .unwrap()
                .known_strides(),
            Some(vec![60, 20, 5, 1]),
            "{:?}",
            t.strides
        );
    }

    /// `ceil_mode` keeps a last partial window unless it would start in the padding; the
    /// decision at the hints is a relation.
    #[test]
    fn ceil_mode_decides_the_last_window_at_the_hints() {
        let mut g = Graph::new();
        let x = Arg::Node(strided_input(
            &mut g,
            vec![Dim::Known(1), Dim::Known(2), s(0), Dim::Known(9)],
            None,
        ));
        let kwargs = [("ceil_mode".to_string(), Arg::Bool(true))];
        let (m, _) = call(
            &g,
            "torch.nn.functional.max_pool2d",
            &[x, Arg::Int(3), Arg::Int(2)],
            &kwargs,
            &[8],
        );
        // torch: ceil((L - 3) / 2) + 1 for L = 8 is 4; 9 gives 4; 10 gives 5.
        assert_eq!(sizes_at(&m, &[8])[2], 4);
        assert_eq!(sizes_at(&m, &[10])[2], 5);
        assert_eq!(sizes_at(&m, &[8])[3], 4);
    }

    /// `F.conv2d` of stride 2 and padding 1 over a symbolic height: `(H + 2 - 3) // 2 + 1`,
    /// the channels the filter's; no parity guard (torch divides with `//`).
    #[test]
    fn conv2d_output_is_a_floor_division_without_a_parity_guard() {
        let mut g = Graph::new();
        let x = Arg::Node(strided_input(
            &mut g,
            vec![Dim::Known(2), Dim::Known(3), s(0), s(1)],
            None,
        ));
        let w = Arg::Node(g.placeholder(
            "w",
            NodeMeta::Tensor(TensorMeta::contiguous(
                DType::Float32,
                Device::cpu(),
                &[4, 3, 3, 3],
            )),
        ));
        let kwargs = [
            ("stride".to_string(), Arg::Int(2)),
            ("padding".to_string(), Arg::Int(1)),
        ];
        let (m, rels) = call(&g, "torch.conv2d", &[x, w], &kwargs, &[7, 8]);
        for (h, w) in [(7, 8), (9, 12), (16, 17)] {
            assert_eq!(
                sizes_at(&m, &[h, w]),
                [2, 4, (h - 1) / 2 + 1, (w - 1) / 2 + 1]
            );
        }
        assert!(
            rels.iter().all(|r| !r.to_string().contains('%')),
            "{:?}",
            texts(&rels)
        );
    }

    /// A weight with symbolic sizes (`dynamic=True` makes a global weight's dims dynamic, as
    /// torch does; its in-channels and kernel share the input's channel symbol by duck
    /// sizing): `[s0, s4, ...]` out, the kernel read as an expression.
    #[test]
    fn conv2d_with_a_symbolic_weight() {
        let mut g = Graph::new();
        let x = Arg::Node(strided_input(&mut g, vec![s(0), s(1), s(2), s(3)], None));
        let w = Arg::Node(strided_input(&mut g, vec![s(4), s(1), s(1), s(1)], None));
        let kwargs = [
            ("padding".to_string(), Arg::Int(1)),
            ("stride".to_string(), Arg::Int(2)),
        ];
        let (m, _) = call(&g, "torch.conv2d", &[x, w], &kwargs, &[2, 3, 7, 8, 4]);
        // k = s1: (H + 2 - (s1 - 1) - 1) // 2 + 1.
        assert_eq!(sizes_at(&m, &[2, 3, 7, 8, 4]), [2, 4, 4, 4]);
        assert_eq!(sizes_at(&m, &[3, 5, 20, 9, 6]), [3, 6, 9, 4]);
    }
}
