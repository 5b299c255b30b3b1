//! The graph's outputs: eager's layouts, and tensors of their own where eager gives them.

use fx::{Arg, Graph, NodeId, NodeKind};

use super::value::{contiguous_strides_sym, same_layout};
use super::{canonical_call, known_tensor, meta_sizes, meta_strides, LValue, Lowerer};
use crate::ir::{BufKind, OutputSpec};
use crate::size::{as_consts, Size};
use crate::InductorError;

impl Lowerer<'_> {
    pub(super) fn lower_outputs(&mut self, values: &[Arg]) -> Result<(), InductorError> {
        let mut leaves = Vec::new();
        fn flatten(a: &Arg, out: &mut Vec<NodeId>) -> Result<(), InductorError> {
            match a {
                Arg::Node(n) => out.push(*n),
                Arg::Tuple(xs) | Arg::List(xs) => xs.iter().try_for_each(|x| flatten(x, out))?,
                other => {
                    return Err(InductorError::Unsupported(format!(
                        "non-tensor graph output {other:?}"
                    )))
                }
            }
            Ok(())
        }
        values.iter().try_for_each(|v| flatten(v, &mut leaves))?;
        let first = self.ir.outputs.len();
        for (pos, &n) in leaves.iter().enumerate() {
            let meta = known_tensor(&self.graph.node(n).meta)
                .ok_or_else(|| InductorError::Unsupported("non-tensor graph output".into()))?
                .clone();
            let Some(LValue::Tensor(t)) = self.env.get(&n).cloned() else {
                return Err(InductorError::Unsupported("non-tensor graph output".into()));
            };
            let want = meta_strides(&meta);
            let free = |l: &Self, b: crate::ir::BufId| {
                l.free_outputs.contains(&pos)
                    || (l.padded_products.contains(&b) && l.target.padded_gemm_outputs())
            };
            let spec = match t.as_view() {
                // Outputs have eager's strides: a channels-last intermediate, or a view of an
                // input whose layout eager would have copied (`x.t().contiguous()` lowers to
                // the view `x.t()`), or one in a buffer with padded rows, or a whole computed
                // buffer laid out otherwise (an extern convolution's result over operands the
                // lowering realized in another layout: CPU autocast's casts of a channels-last
                // image, session 31), is written out in eager's layout.
                Some(v)
                    if (self.channels_last
                        || (self.padded.contains(&v.buf) && !free(self, v.buf))
                        || matches!(self.ir.buffers[v.buf].kind, BufKind::Input(_))
                        || (self.ir.buffers[v.buf].kind == BufKind::Computed
                            && !free(self, v.buf)
                            && v.offset == Size::Const(0)
                            && v.sizes == self.ir.buffers[v.buf].sizes
                            && v.strides == self.ir.buffers[v.buf].strides))
                        && !t.sizes.contains(&Size::Const(0))
                        && dense_strides(&t.sizes, &want)
                        && !same_layout(&t.sizes, &v.strides, &want) =>
                {
                    let r = self.realize_with(&t, want);
                    self.env.insert(n, LValue::Tensor(r.clone()));
                    OutputSpec::Buffer(r.as_view().unwrap().buf)
                }
                Some(v) => {
                    let b = &self.ir.buffers[v.buf];
                    if v.offset == 0 && v.sizes == b.sizes && v.strides == b.strides {
                        OutputSpec::Buffer(v.buf)
                    } else {
                        OutputSpec::View(v)
                    }
                }
                None => {
                    let sizes = meta_sizes(&meta);
                    let strides = meta_strides(&meta);
                    let strides = if dense_strides(&sizes, &strides) {
                        strides
                    } else {
                        contiguous_strides_sym(&sizes)
                    };
                    let r = self.realize_with(&t, strides);
                    // Later outputs of the same node share the buffer.
                    self.env.insert(n, LValue::Tensor(r.clone()));
                    OutputSpec::Buffer(r.as_view().unwrap().buf)
                }
            };
            self.ir.outputs.push(spec);
        }
        self.separate_fresh_outputs(&leaves, first);
        Ok(())
    }

    /// Eager gives a tensor of its own for an op that never aliases (`clone`), but lowering
    /// turns `x.clone()` into `x` itself: such an output that landed in an input's buffer, or in
    /// the buffer of another output node, is written to a buffer of its own. Otherwise a write
    /// through one would show through the other (`return x.clone()` handed back `x`; `y,
    /// y.clone()` shared one buffer). One that lowering left as a view of a buffer of its own
    /// (`sum(keepdim=True)` reshapes its reduced buffer, a 3-d `linear` its matrix product) is
    /// no view in eager either: a whole contiguous buffer is handed out reshaped as a tensor of
    /// its own ([`OutputSpec::Own`]), anything else is copied.
    fn separate_fresh_outputs(&mut self, leaves: &[NodeId], first: usize) {
        let fresh =
            |graph: &Graph, n: NodeId| canonical_call(graph, n).is_some_and(|c| !c.may_alias);
        for (i, &n) in leaves.iter().enumerate() {
            if linear_returns_view(self.graph, n) {
                if let OutputSpec::Buffer(b) = self.ir.outputs[first + i] {
                    let d = &self.ir.buffers[b];
                    if d.kind == BufKind::Computed {
                        self.ir.outputs[first + i] = OutputSpec::View(crate::ir::View {
                            buf: b,
                            sizes: d.sizes.clone(),
                            strides: d.strides.clone(),
                            offset: Size::Const(0),
                        });
                    }
                }
                continue;
            }
            if !fresh(self.graph, n) {
                continue;
            }
            let spec = self.ir.outputs[first + i].clone();
            let b = spec.buf();
            let shared = matches!(self.ir.buffers[b].kind, BufKind::Input(_))
                || leaves.iter().enumerate().any(|(j, &m)| {
                    m != n
                        && self.ir.outputs[first + j].buf() == b
                        && (j < i || !fresh(self.graph, m))
                });
            // A value only the backward reads needs no tensor of its own: a view of the
            // buffer it was computed in (the LM head's logits, `[8192, 50257]` bf16, as the
            // first 50257 columns of the padded product) saves a copy of it.
            let padded_product =
                self.padded_products.contains(&b) && self.target.padded_gemm_outputs();
            if !shared && (self.free_outputs.contains(&i) || padded_product) {
                continue;
            }
            if !shared {
                let OutputSpec::View(v) = spec else {
                    continue;
                };
                let decl = &self.ir.buffers[b];
                let (vs, vst) = (&v.sizes, &v.strides);
                let (ds, dst) = (&decl.sizes, &decl.strides);
                let whole = v.offset == 0
                    && vs.iter().product::<Size>() == ds.iter().product::<Size>()
                    && same_layout(ds, dst, &contiguous_strides_sym(ds))
                    && same_layout(vs, vst, &contiguous_strides_sym(vs));
                if whole {
                    self.ir.outputs[first + i] = OutputSpec::Own(v);
                    continue;
                }
            }
            let Some(LValue::Tensor(t)) = self.env.get(&n).cloned() else {
                continue;
            };
            let want = known_tensor(&self.graph.node(n).meta)
                .map(meta_strides)
                .filter(|s| dense_strides(&t.sizes, s))
                .unwrap_or_else(|| contiguous_strides_sym(&t.sizes));
            let r = self.realize_with(&t, want);
            self.env.insert(n, LValue::Tensor(r.clone()));
            self.ir.outputs[first + i] = OutputSpec::Buffer(r.as_view().unwrap().buf);
        }
    }
}

/// Eager's `linear` with a bias on a contiguous input of other than two dims computes on the
/// input flattened to a matrix and returns its result `view`ed back to the input's dims: a view
/// of a tensor of its own (`._base` is set), where every other `linear` returns no view.
fn linear_returns_view(graph: &Graph, n: NodeId) -> bool {
    if canonical_call(graph, n).is_none_or(|c| c.name != "linear") {
        return false;
    }
    let NodeKind::Call { args, kwargs, .. } = &graph.node(n).kind else {
        return false;
    };
    let bias = args
        .get(2)
        .or_else(|| kwargs.iter().find(|(k, _)| k == "bias").map(|(_, v)| v));
    let input = match args.first() {
        Some(Arg::Node(i)) => known_tensor(&graph.node(*i).meta),
        _ => None,
    };
    match (bias, input.map(|t| (meta_sizes(t), meta_strides(t)))) {
        (Some(Arg::Node(_)), Some((sizes, strides))) => {
            sizes.len() != 2 && same_layout(&sizes, &strides, &contiguous_strides_sym(&sizes))
        }
        _ => false,
    }
}

/// Whether a layout covers its elements exactly once without gaps (safe to allocate and
/// write). Constant layouts take [`dense_strides_const`]; a symbolic one is dense when it is
/// contiguous in some order of its dims that we can prove: here, row-major or the same as a
/// permutation's row-major order (the layouts eager gives outputs of symbolic graphs).
pub fn dense_strides(sizes: &[Size], strides: &[Size]) -> bool {
    if let (Some(s), Some(st)) = (as_consts(sizes), as_consts(strides)) {
        return dense_strides_const(&s, &st);
    }
    // Peel dims in stride order: each next stride must be the product of the dims before.
    let mut dims: Vec<(Size, Size)> = sizes
        .iter()
        .zip(strides)
        .filter(|(s, _)| **s != 1)
        .map(|(s, st)| (*st, *s))
        .collect();
    let mut expect = Size::Const(1);
    while !dims.is_empty() {
        let Some(k) = dims.iter().position(|(st, _)| *st == expect) else {
            return false;
        };
        let (_, s) = dims.remove(k);
        expect = expect * s;
    }
    true
}

/// [`dense_strides`] over constants.
pub fn dense_strides_const(sizes: &[i64], strides: &[i64]) -> bool {
    let mut dims: Vec<(i64, i64)> = sizes
        .iter()
        .zip(strides)
        .filter(|(s, _)| **s != 1)
        .map(|(s, st)| (*st, *s))
        .collect();
    if sizes.contains(&0) {
        return true;
    }
    dims.sort();
    let mut expect = 1;
    for (st, s) in dims {
        if st != expect {
            return false;
        }
        expect *= s;
    }
    true
}
