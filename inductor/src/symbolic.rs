//! A loop-level graph with symbolic sizes at one assignment of its symbols (issue 18, the
//! design's step 6: docs/dynamic-shapes.md, "The inductor on symbolic sizes").
//!
//! A symbolic graph is scheduled and printed once; its kernels read the symbols from one more
//! argument (`tf_sym`, the ABI [`crate::param`]'s templates use). What runs at a call also
//! needs values: buffer sizes to allocate, views to hand to extern calls and fallbacks, output
//! layouts. [`IrGraph::at`] gives them by substituting the symbols' values into every size (a
//! walk over the graph, no lowering and no C), and the symbolic schedule stays valid for the
//! result: every decision in it compared sizes as polynomials (step 4), which holds at every
//! assignment.

use crate::index::{Atom, Idx};
use crate::ir::{Body, BufferDecl, FallbackArg, IrGraph, IrNode, OutputSpec, Val, View};
use crate::size::Size;

/// A symbol's value under an assignment.
pub type Values<'a> = &'a dyn Fn(u32) -> i64;

/// An assignment being substituted, and whether some size had no value under it (a division
/// by zero or an overflow: the guards of a trace need not rule every such size out).
struct At<'a> {
    values: Values<'a>,
    failed: std::cell::Cell<bool>,
}

fn size_at(s: Size, v: &At) -> Size {
    match s {
        Size::Const(_) => s,
        Size::Sym(_) => Size::Const(s.eval(v.values).unwrap_or_else(|| {
            v.failed.set(true);
            0
        })),
    }
}

fn sizes_at(xs: &[Size], v: &At) -> Vec<Size> {
    xs.iter().map(|s| size_at(*s, v)).collect()
}

fn idx_at(e: &Idx, v: &At) -> Idx {
    Idx {
        terms: e
            .terms
            .iter()
            .map(|(a, c)| {
                let a = match a {
                    Atom::Var(k) => Atom::Var(*k),
                    Atom::FloorDiv(x, d) => Atom::FloorDiv(Box::new(idx_at(x, v)), size_at(*d, v)),
                    Atom::Mod(x, d) => Atom::Mod(Box::new(idx_at(x, v)), size_at(*d, v)),
                    Atom::Clamp(x, lo, hi) => {
                        Atom::Clamp(Box::new(idx_at(x, v)), size_at(*lo, v), size_at(*hi, v))
                    }
                };
                (a, size_at(*c, v))
            })
            .collect(),
        constant: size_at(e.constant, v),
    }
}

fn body_at(b: &Body, v: &At) -> Body {
    let mut out = b.clone();
    out.ranges = sizes_at(&b.ranges, v);
    for val in out.vals.iter_mut() {
        match val {
            Val::Load { index, .. } | Val::Index(index) => *index = idx_at(index, v),
            Val::Gather {
                index,
                stride,
                size,
                ..
            } => {
                *index = idx_at(index, v);
                *stride = size_at(*stride, v);
                *size = size_at(*size, v);
            }
            _ => {}
        }
    }
    out
}

fn view_at(x: &View, v: &At) -> View {
    View {
        buf: x.buf,
        sizes: sizes_at(&x.sizes, v),
        strides: sizes_at(&x.strides, v),
        offset: size_at(x.offset, v),
    }
}

fn arg_at(a: &FallbackArg, v: &At) -> FallbackArg {
    match a {
        FallbackArg::Const(c) => FallbackArg::Const(c.clone()),
        FallbackArg::Tensor(x) => FallbackArg::Tensor(view_at(x, v)),
        FallbackArg::Tuple(xs) => FallbackArg::Tuple(xs.iter().map(|x| arg_at(x, v)).collect()),
        FallbackArg::List(xs) => FallbackArg::List(xs.iter().map(|x| arg_at(x, v)).collect()),
    }
}

impl IrGraph {
    /// Every symbol a size of the graph reads, sorted: the order of the values its kernels
    /// take (`tf_sym[i]` is the i-th).
    pub fn symbols(&self) -> Vec<u32> {
        let mut out = Vec::new();
        let mut add = |xs: &[Size]| {
            for s in xs.iter().filter(|s| !s.is_const()) {
                out.extend(s.symbols());
            }
        };
        for b in self.buffers.iter() {
            add(&b.sizes);
            add(&b.strides);
        }
        // A body's index expressions and values: a symbol may appear only there (a symbolic
        // int input used as a number, `x * n`, is a `Val::Index` of its symbol).
        fn idx_sizes(e: &Idx, out: &mut Vec<Size>) {
            out.push(e.constant);
            for (a, c) in &e.terms {
                out.push(*c);
                match a {
                    Atom::Var(_) => {}
                    Atom::FloorDiv(x, d) | Atom::Mod(x, d) => {
                        out.push(*d);
                        idx_sizes(x, out);
                    }
                    Atom::Clamp(x, lo, hi) => {
                        out.extend([*lo, *hi]);
                        idx_sizes(x, out);
                    }
                }
            }
        }
        let body_sizes = |b: &Body| {
            let mut xs = Vec::new();
            for val in b.vals.iter() {
                match val {
                    Val::Load { index, .. } | Val::Index(index) => idx_sizes(index, &mut xs),
                    Val::Gather {
                        index,
                        stride,
                        size,
                        ..
                    } => {
                        idx_sizes(index, &mut xs);
                        xs.extend([*stride, *size]);
                    }
                    _ => {}
                }
            }
            xs
        };
        for n in self.nodes.iter() {
            match n {
                IrNode::Pointwise {
                    sizes,
                    body,
                    offset,
                    ..
                } => {
                    add(sizes);
                    add(&[*offset]);
                    add(&body.ranges);
                    add(&body_sizes(body));
                }
                IrNode::Reduction {
                    sizes,
                    rsizes,
                    body,
                    ..
                } => {
                    add(sizes);
                    add(rsizes);
                    add(&body.ranges);
                    add(&body_sizes(body));
                }
                IrNode::Extern { .. } | IrNode::Fallback { .. } => {}
            }
        }
        out.sort_unstable();
        out.dedup();
        out
    }

    /// The graph at one assignment of its symbols: every size a constant (see the module doc);
    /// `None` where a size has no value there (a division by zero, an overflow).
    pub fn at(&self, values: Values) -> Option<IrGraph> {
        let v = &At {
            values,
            failed: std::cell::Cell::new(false),
        };
        let mut g = self.clone();
        for b in g.buffers.iter_mut() {
            let BufferDecl { sizes, strides, .. } = b;
            *sizes = sizes_at(sizes, v);
            *strides = sizes_at(strides, v);
        }
        for n in g.nodes.iter_mut() {
            match n {
                IrNode::Pointwise {
                    sizes,
                    body,
                    offset,
                    ..
                } => {
                    *sizes = sizes_at(sizes, v);
                    *offset = size_at(*offset, v);
                    *body = body_at(body, v);
                }
                IrNode::Reduction {
                    sizes,
                    rsizes,
                    body,
                    ..
                } => {
                    *sizes = sizes_at(sizes, v);
                    *rsizes = sizes_at(rsizes, v);
                    *body = body_at(body, v);
                }
                IrNode::Extern { inputs, .. } => {
                    for x in inputs.iter_mut() {
                        *x = view_at(x, v);
                    }
                }
                IrNode::Fallback { args, kwargs, .. } => {
                    for a in args.iter_mut() {
                        *a = arg_at(a, v);
                    }
                    for (_, a) in kwargs.iter_mut() {
                        *a = arg_at(a, v);
                    }
                }
            }
        }
        for o in g.outputs.iter_mut() {
            match o {
                OutputSpec::Buffer(_) => {}
                OutputSpec::View(x) | OutputSpec::Own(x) => *x = view_at(x, v),
            }
        }
        (!v.failed.get()).then_some(g)
    }
}
