//! How the lowering reads sizes (issue 18, the design's step 3): `fx::Dim`s of metadata and
//! symbolic int arguments as [`Size`] expressions.

use fx::{Arg, Graph, NodeMeta, TensorMeta};

use super::args::{self, LResult, Reject};
use super::Lowerer;
use crate::size::Size;

/// Sizes of a meta, symbolic ones as [`Size`] expressions: the one accessor through which
/// the lowering reads `fx::Dim`.
pub fn meta_sizes(t: &TensorMeta) -> Vec<Size> {
    t.sizes.iter().map(dim_size).collect()
}

/// Strides of a meta (see [`meta_sizes`]).
pub fn meta_strides(t: &TensorMeta) -> Vec<Size> {
    t.strides.iter().map(dim_size).collect()
}

fn dim_size(d: &fx::Dim) -> Size {
    match d {
        fx::Dim::Known(v) => Size::Const(*v),
        fx::Dim::Sym(e) => Size::expr(e.clone()),
    }
}

/// Whether any tensor meta of the graph has a symbolic size or stride.
pub(super) fn graph_is_symbolic(graph: &Graph) -> bool {
    fn sym(m: &NodeMeta) -> bool {
        match m {
            NodeMeta::Tensor(t) => t
                .sizes
                .iter()
                .chain(&t.strides)
                .any(|d| d.known().is_none()),
            NodeMeta::Tuple(xs) => xs.iter().any(sym),
            _ => false,
        }
    }
    graph.nodes().any(|(_, n)| sym(&n.meta))
}

impl Lowerer<'_> {
    /// An int argument as a size: a literal, or a node computing a symbolic int from sizes
    /// (`x.size(0) // 2 + 1`), whose expression its metadata holds.
    pub fn size_arg(&self, a: &Arg) -> Option<Size> {
        match a {
            Arg::Int(i) => Some(Size::Const(*i)),
            Arg::Node(n) => match &self.graph.node(*n).meta {
                NodeMeta::SymInt(e) => Some(Size::expr(e.clone())),
                NodeMeta::Int(i) => Some(Size::Const(*i)),
                _ => None,
            },
            _ => None,
        }
    }

    /// A list of sizes (see [`Self::size_arg`]); one int is a list of one.
    pub fn size_list(&self, a: &Arg) -> Option<Vec<Size>> {
        match a {
            Arg::Tuple(xs) | Arg::List(xs) => xs.iter().map(|x| self.size_arg(x)).collect(),
            a => Some(vec![self.size_arg(a)?]),
        }
    }

    /// [`args::sizes_arg`] with symbolic ints: varargs, one sequence, or by keyword.
    pub fn sizes_arg(
        &self,
        args: &[Arg],
        kwargs: &[(String, Arg)],
        kw: &[&str],
    ) -> LResult<Vec<Size>> {
        let bad = || Reject::Fallback("sizes are not ints".into());
        if let Some((_, a)) = kwargs.iter().find(|(k, _)| kw.contains(&k.as_str())) {
            if args.len() > 1 || kwargs.len() > 1 {
                return args::fallback("sizes given twice");
            }
            return self.size_list(a).ok_or_else(bad);
        }
        if !kwargs.is_empty() {
            return args::fallback(format!("unexpected keyword argument {}", kwargs[0].0));
        }
        match &args[1..] {
            [a @ (Arg::Tuple(_) | Arg::List(_))] => self.size_list(a).ok_or_else(bad),
            rest => rest
                .iter()
                .map(|a| self.size_arg(a))
                .collect::<Option<Vec<_>>>()
                .ok_or_else(bad),
        }
    }
}

/// Whether a view of `n` elements covers a base of `base` elements (`n >= base`); for
/// symbolic counts only where they are equal as polynomials.
pub(super) fn covers(n: Size, base: Size) -> bool {
    match (n.as_const(), base.as_const()) {
        (Some(a), Some(b)) => a >= b,
        _ => n == base,
    }
}
