//! A graph with symbolic sizes made static for one assignment of its symbols (dynamic shapes,
//! issue 18).
//!
//! The inductor's kernels take static sizes; a dynamic graph runs on it by compiling the graph
//! specialized to the sizes of a call (`tracer/src/backend/inductor.rs` keeps one compiled
//! variant per assignment). Specializing substitutes every symbol in the nodes' metadata and
//! replaces each size computation (`x.size(0)`, `T * 2`, a `x.shape` tuple) by the number it
//! gives, so the result is exactly the graph a static trace at those sizes would make: no `size`
//! or `operator` node is left for the inductor to lower.

use crate::graph::{Arg, Graph, NodeKind};
use crate::meta::{Dim, NodeMeta, TensorMeta};

/// Why a graph cannot be specialized.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SpecializeError {
    /// An expression has no value at the assignment (division by zero, overflow).
    #[error("{node}: {expr} has no value at these sizes")]
    NoValue { node: String, expr: String },
}

/// The `dim` of a [`symbol_reads`] entry whose input is the symbolic int itself (an int graph
/// input made symbolic by automatic dynamic: its placeholder's metadata is `SymInt(s_k)`), not
/// a dimension of a tensor: the value is the int passed on the call.
pub const INT_INPUT: usize = usize::MAX;

/// The `dim` of a [`symbol_reads`] entry for stride `d` of a tensor input is `STRIDE_READ + d`
/// (a stride symbol of its own: the row stride of a column slice of a parent whose width moves).
pub const STRIDE_READ: usize = 1 << 32;

/// The stride dimension a [`symbol_reads`] entry's `dim` names, if it names one.
pub fn stride_of_read(dim: usize) -> Option<usize> {
    (dim != INT_INPUT && dim >= STRIDE_READ).then(|| dim - STRIDE_READ)
}

/// Where each symbol's value is read on a call: `(input, dim, symbol)` for every input
/// dimension that is exactly one symbol (inputs are placeholders by their `index`), and
/// `(input, INT_INPUT, symbol)` for an int input that is exactly one symbol, and `(input,
/// STRIDE_READ + d, symbol)` for a stride that is exactly a symbol no size names. Every symbol
/// of a dynamic graph is made for an input dimension, an input stride or an int input, so this
/// names them all; `None` when one appears only inside an expression (then no call can give it
/// a value).
pub fn symbol_reads(graph: &Graph) -> Option<Vec<(usize, usize, u32)>> {
    let mut reads: Vec<(usize, usize, u32)> = Vec::new();
    // Read from a stride only where no size names the symbol (a dense input's strides are
    // products of its sizes: read as sizes).
    let mut strides: Vec<(usize, usize, u32)> = Vec::new();
    let mut all: Vec<u32> = Vec::new();
    for (_, n) in graph.nodes() {
        if let NodeMeta::Tensor(t) = &n.meta {
            for d in t.sizes.iter().chain(&t.strides) {
                if let Dim::Sym(e) = d {
                    all.extend(e.symbols());
                }
            }
        } else if let NodeMeta::SymInt(e) = &n.meta {
            all.extend(e.symbols());
        } else if let NodeMeta::SymFloat(f) = &n.meta {
            all.extend(f.symbols());
        }
        let NodeKind::Placeholder { index } = &n.kind else {
            continue;
        };
        match &n.meta {
            NodeMeta::Tensor(t) => {
                for (d, size) in t.sizes.iter().enumerate() {
                    if let Some(k) = size.expr().as_symbol() {
                        if !reads.iter().any(|r| r.2 == k) {
                            reads.push((*index, d, k));
                        }
                    }
                }
                for (d, stride) in t.strides.iter().enumerate() {
                    if let Some(k) = stride.expr().as_symbol() {
                        strides.push((*index, STRIDE_READ + d, k));
                    }
                }
            }
            NodeMeta::SymInt(e) => {
                if let Some(k) = e.as_symbol() {
                    if !reads.iter().any(|r| r.2 == k) {
                        reads.push((*index, INT_INPUT, k));
                    }
                }
            }
            _ => {}
        }
    }
    for r in strides {
        if !reads.iter().any(|x| x.2 == r.2) {
            reads.push(r);
        }
    }
    all.sort_unstable();
    all.dedup();
    all.iter()
        .all(|k| reads.iter().any(|r| r.2 == *k))
        .then(|| {
            reads.sort_by_key(|r| r.2);
            reads
        })
}

/// `graph` with every symbol `k` replaced by `value(k)`.
pub fn specialize(graph: &Graph, value: &dyn Fn(u32) -> i64) -> Result<Graph, SpecializeError> {
    let mut g = graph.clone();
    let ids: Vec<_> = g.nodes().map(|(id, _)| id).collect();
    for id in ids {
        let node = g.node(id);
        let name = node.name.clone();
        let size_value = matches!(node.kind, NodeKind::Call { .. }) && is_size_value(&node.meta);
        let meta = static_meta(&node.meta, value, &name)?;
        if size_value {
            let arg = const_arg(&meta);
            g.replace_all_uses_with_arg(id, &arg);
            g.remove(id);
        } else {
            g.node_mut(id).meta = meta;
        }
    }
    Ok(g)
}

/// Whether a node computes a symbolic int or float (or a tuple of ints, one symbolic: `x.shape`).
fn is_size_value(m: &NodeMeta) -> bool {
    fn int_like(m: &NodeMeta) -> bool {
        match m {
            NodeMeta::Int(_) | NodeMeta::SymInt(_) | NodeMeta::Float(_) | NodeMeta::SymFloat(_) => {
                true
            }
            NodeMeta::Tuple(items) => items.iter().all(int_like),
            _ => false,
        }
    }
    int_like(m) && m.is_symbolic()
}

fn const_arg(m: &NodeMeta) -> Arg {
    match m {
        NodeMeta::Int(v) => Arg::Int(*v),
        NodeMeta::Float(v) => Arg::Float(*v),
        NodeMeta::Tuple(items) => Arg::Tuple(items.iter().map(const_arg).collect()),
        _ => Arg::None,
    }
}

fn static_dim(d: &Dim, value: &dyn Fn(u32) -> i64, node: &str) -> Result<Dim, SpecializeError> {
    match d {
        Dim::Known(v) => Ok(Dim::Known(*v)),
        Dim::Sym(e) => e
            .eval(value)
            .map(Dim::Known)
            .ok_or_else(|| SpecializeError::NoValue {
                node: node.to_string(),
                expr: e.to_string(),
            }),
    }
}

fn static_meta(
    m: &NodeMeta,
    value: &dyn Fn(u32) -> i64,
    node: &str,
) -> Result<NodeMeta, SpecializeError> {
    Ok(match m {
        NodeMeta::Tensor(t) => NodeMeta::Tensor(TensorMeta {
            sizes: t
                .sizes
                .iter()
                .map(|d| static_dim(d, value, node))
                .collect::<Result<_, _>>()?,
            strides: t
                .strides
                .iter()
                .map(|d| static_dim(d, value, node))
                .collect::<Result<_, _>>()?,
            ..t.clone()
        }),
        NodeMeta::Tuple(items) => NodeMeta::Tuple(
            items
                .iter()
                .map(|i| static_meta(i, value, node))
                .collect::<Result<_, _>>()?,
        ),
        NodeMeta::SymInt(e) => {
            NodeMeta::Int(e.eval(value).ok_or_else(|| SpecializeError::NoValue {
                node: node.to_string(),
                expr: e.to_string(),
            })?)
        }
        NodeMeta::SymFloat(e) => {
            NodeMeta::Float(e.eval(value).ok_or_else(|| SpecializeError::NoValue {
                node: node.to_string(),
                expr: e.to_string(),
            })?)
        }
        other => other.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::Target;
    use crate::meta::{DType, Device};
    use crate::sym::SymExpr;

    fn sym_tensor(sizes: Vec<Dim>) -> NodeMeta {
        let mut strides = vec![Dim::Known(1); sizes.len()];
        let mut acc = SymExpr::constant(1);
        for i in (0..sizes.len()).rev() {
            strides[i] = Dim::from_expr(acc.clone());
            acc = acc.mul(&sizes[i].expr());
        }
        NodeMeta::Tensor(TensorMeta {
            dtype: DType::Float32,
            device: Device::cpu(),
            sizes,
            strides,
            requires_grad: false,
        })
    }

    /// `x.view(x.size(0) // 2, -1)`: the size node becomes the number it gives at the call's
    /// sizes, and the metadata is the static trace's.
    #[test]
    fn size_reads_become_numbers() {
        let s0 = SymExpr::symbol(0);
        let mut g = Graph::new();
        let x = g.placeholder("x", sym_tensor(vec![Dim::Sym(s0.clone()), Dim::Known(3)]));
        let n = g.call(
            "size",
            Target::Method("size".into()),
            vec![Arg::Node(x), Arg::Int(0)],
            vec![],
            NodeMeta::SymInt(s0.clone()),
        );
        let half = s0.floordiv(&SymExpr::constant(2));
        let h = g.call(
            "floordiv",
            Target::Function("_operator.floordiv".into()),
            vec![Arg::Node(n), Arg::Int(2)],
            vec![],
            NodeMeta::SymInt(half.clone()),
        );
        let v = g.call(
            "view",
            Target::Method("view".into()),
            vec![Arg::Node(x), Arg::Node(h), Arg::Int(-1)],
            vec![],
            sym_tensor(vec![Dim::Sym(half), Dim::Known(6)]),
        );
        g.output(vec![Arg::Node(v)]);
        assert_eq!(symbol_reads(&g), Some(vec![(0, 0, 0)]));
        let s = specialize(&g, &|_| 10).unwrap();
        assert!(!s.contains(n) && !s.contains(h));
        let NodeKind::Call { args, .. } = &s.node(v).kind else {
            panic!()
        };
        assert_eq!(args, &vec![Arg::Node(x), Arg::Int(5), Arg::Int(-1)]);
        let t = s.node(v).meta.tensor().unwrap();
        assert_eq!(t.known_sizes(), Some(vec![5, 6]));
        assert_eq!(t.known_strides(), Some(vec![6, 1]));
        assert_eq!(
            s.node(x).meta.tensor().unwrap().known_strides(),
            Some(vec![3, 1])
        );
        assert!(crate::passes::check_topological_order(&s).is_ok());
    }

    /// A symbol that is no input dimension's size by itself cannot be read from a call.
    #[test]
    fn a_symbol_only_inside_an_expression_has_no_read() {
        let s0 = SymExpr::symbol(0);
        let s1 = SymExpr::symbol(1);
        let mut g = Graph::new();
        let x = g.placeholder(
            "x",
            sym_tensor(vec![Dim::Sym(s0.clone()), Dim::Sym(s0.mul(&s1))]),
        );
        g.output(vec![Arg::Node(x)]);
        assert_eq!(symbol_reads(&g), None);
    }

    /// An int input made symbolic (`n` of `f(x, n)`) is read from the int itself, and a
    /// graph specialized to its value has a number there.
    #[test]
    fn an_int_input_is_read_from_the_int() {
        let s0 = SymExpr::symbol(0);
        let s1 = SymExpr::symbol(1);
        let mut g = Graph::new();
        let x = g.placeholder("x", sym_tensor(vec![Dim::Sym(s0.clone())]));
        let n = g.placeholder("n", NodeMeta::SymInt(s1.clone()));
        let m = g.call(
            "mul",
            Target::Function("_operator.mul".into()),
            vec![Arg::Node(x), Arg::Node(n)],
            vec![],
            sym_tensor(vec![Dim::Sym(s0)]),
        );
        g.output(vec![Arg::Node(m)]);
        assert_eq!(symbol_reads(&g), Some(vec![(0, 0, 0), (1, INT_INPUT, 1)]));
        let s = specialize(&g, &|k| if k == 0 { 4 } else { -3 }).unwrap();
        assert!(matches!(s.node(n).meta, NodeMeta::Int(-3)));
        assert!(s1.is_polynomial() && !s1.floordiv(&SymExpr::constant(2)).is_polynomial());
    }

    /// A column slice of a parent whose width moves (`randn(b, b + 4)[:, :3]`): its row stride
    /// is a symbol of its own, read from the stride; the specialized graph has its value.
    #[test]
    fn a_stride_symbol_is_read_from_the_stride() {
        let (s0, s1) = (SymExpr::symbol(0), SymExpr::symbol(1));
        let mut g = Graph::new();
        let x = g.placeholder(
            "x",
            NodeMeta::Tensor(TensorMeta {
                dtype: DType::Float32,
                device: Device::cpu(),
                sizes: vec![Dim::Sym(s0.clone()), Dim::Known(3)],
                strides: vec![Dim::Sym(s1), Dim::Known(1)],
                requires_grad: false,
            }),
        );
        g.output(vec![Arg::Node(x)]);
        let reads = symbol_reads(&g).unwrap();
        assert_eq!(reads, vec![(0, 0, 0), (0, STRIDE_READ, 1)]);
        assert_eq!(stride_of_read(reads[1].1), Some(0));
        assert_eq!(stride_of_read(0), None);
        assert_eq!(stride_of_read(INT_INPUT), None);
        let s = specialize(&g, &|k| if k == 0 { 5 } else { 9 }).unwrap();
        assert_eq!(
            s.node(x).meta.tensor().unwrap().known_strides(),
            Some(vec![9, 1])
        );
    }
}
