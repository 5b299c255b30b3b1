//! A loop-level graph with symbolic sizes (issue 18, the design's steps 4 to 6): scheduled and
//! printed once, its kernels take the symbols as arguments, and one C library runs it at every
//! assignment, with values equal to the reference interpreter's at that assignment. The first
//! graphs are built by hand; the last comes from fx's symbolic metas through the lowering
//! (step 3) and is compared with the static graph lowered at each size.

mod common;

use common::*;
use fx::DType;
use inductor::index::Idx;
use inductor::ir::{
    linear_index, BinOp, BodyBuilder, BufKind, IrGraph, IrNode, OutputSpec, ReduceOp, UnOp,
};
use inductor::size::Size;
use inductor::testing::VecHost;

/// `y = exp(x * w)` (`x [s0, s1]`, `w [s1]` broadcast over rows), `r = y.sum(1)`, `m = y.amax(0)`
/// (a reduction over the leading, symbolic dim: blocked rows).
fn graph() -> IrGraph {
    let (s0, s1) = (Size::symbol(0), Size::symbol(1));
    let one = Size::Const(1);
    let zero = Size::Const(0);
    let mut ir = IrGraph {
        num_inputs: 2,
        ..IrGraph::default()
    };
    let x = ir.add_buffer(
        DType::Float32,
        vec![s0, s1],
        vec![s1, one],
        BufKind::Input(0),
    );
    let w = ir.add_buffer(DType::Float32, vec![s1], vec![one], BufKind::Input(1));
    let y = ir.add_buffer(
        DType::Float32,
        vec![s0, s1],
        vec![s1, one],
        BufKind::Computed,
    );
    let r = ir.add_buffer(DType::Float32, vec![s0], vec![one], BufKind::Computed);
    let m = ir.add_buffer(DType::Float32, vec![s1], vec![one], BufKind::Computed);

    let mut b = BodyBuilder::new(vec![s0, s1]);
    let v = b.vars();
    let lx = b.load(x, linear_index(&v, &[s1, one], zero), DType::Float32);
    let lw = b.load(w, v[1].clone(), DType::Float32);
    let p = b.binary(BinOp::Mul, lx, lw);
    let e = b.unary(UnOp::Exp, p);
    ir.nodes.push(IrNode::Pointwise {
        out: y,
        sizes: vec![s0, s1],
        body: b.finish(e),
        offset: inductor::size::Size::Const(0),
    });

    let mut b = BodyBuilder::new(vec![s0, s1]);
    let v = b.vars();
    let ly = b.load(y, linear_index(&v, &[s1, one], zero), DType::Float32);
    ir.nodes.push(IrNode::Reduction {
        out: r,
        sizes: vec![s0],
        rsizes: vec![s1],
        op: ReduceOp::Sum,
        body: b.finish(ly),
    });

    // amax over rows: the row var is the reduced one (x1 over s0), the column the kept one.
    let mut b = BodyBuilder::new(vec![s1, s0]);
    let v = b.vars();
    let at = Idx::var(1).scale(s1).add(&Idx::var(0));
    assert_eq!(
        at,
        linear_index(&[v[1].clone(), v[0].clone()], &[s1, one], zero)
    );
    let ly = b.load(y, at, DType::Float32);
    ir.nodes.push(IrNode::Reduction {
        out: m,
        sizes: vec![s1],
        rsizes: vec![s0],
        op: ReduceOp::Max,
        body: b.finish(ly),
    });
    ir.outputs = vec![
        OutputSpec::Buffer(y),
        OutputSpec::Buffer(r),
        OutputSpec::Buffer(m),
    ];
    ir
}

#[test]
fn one_library_runs_every_assignment() {
    let opts = options();
    let prepared = inductor::compiled::prepare_ir(graph(), &opts).unwrap();
    assert_eq!(prepared.symbols(), vec![0, 1]);
    let code = prepared.code().to_string();
    if std::env::var_os("TORCHFERRO_SHOW_C").is_some() {
        eprintln!("{code}");
    }
    // The loops run to the symbols, read once per kernel from the size argument.
    assert!(code.contains("const int64_t s0 = tf_sym[0];"), "{code}");
    assert!(code.contains("x1 < s1;"), "{code}");
    let mut compiles = 0;
    let mut host = VecHost::new();
    let assignments: Vec<(i64, i64)> = (2..=64)
        .map(|a| (a, 2 + (a * 7) % 63))
        .chain([(2, 2), (64, 64), (3, 2), (2, 3)])
        .collect();
    for (seed, &(a, b)) in assignments.iter().enumerate() {
        let c = prepared.build_at(&opts, &[a, b]).unwrap();
        compiles += usize::from(c.compiler_ran());
        let xs = values((a * b) as usize, seed as u64);
        let ws = values(b as usize, seed as u64 + 1000);
        let ins = vec![
            host.tensor(DType::Float32, &[a, b], &xs),
            host.tensor(DType::Float32, &[b], &ws),
        ];
        let got = c.run(&mut host, &ins).unwrap();
        let want = inductor::interp::run(c.ir(), &mut host, &ins).unwrap();
        assert_eq!(got.len(), 3);
        for (g, w) in got.iter().zip(&want) {
            assert_eq!(g.sizes, w.sizes, "at s0={a}, s1={b}");
            assert_close(&g.to_f64(), &w.to_f64(), &c);
        }
        // Against plain arithmetic too (the interpreter reads the same IR).
        let y: Vec<f64> = (0..(a * b) as usize)
            .map(|i| ((xs[i] as f32) * (ws[i % b as usize] as f32)).exp() as f64)
            .collect();
        let r: Vec<f64> = (0..a as usize)
            .map(|i| y[i * b as usize..(i + 1) * b as usize].iter().sum())
            .collect();
        let close = |p: &[f64], q: &[f64]| {
            p.iter()
                .zip(q)
                .all(|(p, q)| (p - q).abs() <= 1e-4 * (1.0 + q.abs()))
        };
        assert!(close(&got[0].to_f64(), &y), "y at s0={a}, s1={b}");
        assert!(close(&got[1].to_f64(), &r), "r at s0={a}, s1={b}");
    }
    assert!(
        compiles <= 1,
        "{compiles} C compiles over {} assignments",
        assignments.len()
    );
}

/// Softmax over a symbolic row (a staged kernel: max, `exp(x - max)`, sum, divide; the row is
/// staged through memory, no bound on it being proved), an argmax over the row (the scalar
/// scan), a transposed copy (symbolic strides), and a flattened transpose whose index divides
/// and takes the remainder by a symbol (`g[i] = x[i % s0, i // s0]`).
fn rows_graph() -> IrGraph {
    let (s0, s1) = (Size::symbol(0), Size::symbol(1));
    let (one, zero) = (Size::Const(1), Size::Const(0));
    let mut ir = IrGraph {
        num_inputs: 1,
        ..IrGraph::default()
    };
    let f = DType::Float32;
    let x = ir.add_buffer(f, vec![s0, s1], vec![s1, one], BufKind::Input(0));
    let m = ir.add_buffer(f, vec![s0], vec![one], BufKind::Computed);
    let e = ir.add_buffer(f, vec![s0, s1], vec![s1, one], BufKind::Computed);
    let s = ir.add_buffer(f, vec![s0], vec![one], BufKind::Computed);
    let y = ir.add_buffer(f, vec![s0, s1], vec![s1, one], BufKind::Computed);
    let am = ir.add_buffer(DType::Int64, vec![s0], vec![one], BufKind::Computed);
    let t = ir.add_buffer(f, vec![s1, s0], vec![s0, one], BufKind::Computed);
    let g = ir.add_buffer(f, vec![s0 * s1], vec![one], BufKind::Computed);
    let row = |v: &[Idx]| linear_index(v, &[s1, one], zero);

    let mut b = BodyBuilder::new(vec![s0, s1]);
    let v = b.vars();
    let l = b.load(x, row(&v), f);
    ir.nodes.push(IrNode::Reduction {
        out: m,
        sizes: vec![s0],
        rsizes: vec![s1],
        op: ReduceOp::Max,
        body: b.finish(l),
    });
    let mut b = BodyBuilder::new(vec![s0, s1]);
    let v = b.vars();
    let l = b.load(x, row(&v), f);
    let lm = b.load(m, v[0].clone(), f);
    let d = b.binary(BinOp::Sub, l, lm);
    let ex = b.unary(UnOp::Exp, d);
    ir.nodes.push(IrNode::Pointwise {
        out: e,
        sizes: vec![s0, s1],
        body: b.finish(ex),
        offset: inductor::size::Size::Const(0),
    });
    let mut b = BodyBuilder::new(vec![s0, s1]);
    let v = b.vars();
    let l = b.load(e, row(&v), f);
    ir.nodes.push(IrNode::Reduction {
        out: s,
        sizes: vec![s0],
        rsizes: vec![s1],
        op: ReduceOp::Sum,
        body: b.finish(l),
    });
    let mut b = BodyBuilder::new(vec![s0, s1]);
    let v = b.vars();
    let l = b.load(e, row(&v), f);
    let ls = b.load(s, v[0].clone(), f);
    let q = b.binary(BinOp::Div, l, ls);
    ir.nodes.push(IrNode::Pointwise {
        out: y,
        sizes: vec![s0, s1],
        body: b.finish(q),
        offset: inductor::size::Size::Const(0),
    });
    let mut b = BodyBuilder::new(vec![s0, s1]);
    let v = b.vars();
    let l = b.load(x, row(&v), f);
    ir.nodes.push(IrNode::Reduction {
        out: am,
        sizes: vec![s0],
        rsizes: vec![s1],
        op: ReduceOp::ArgMax,
        body: b.finish(l),
    });
    // t[i, j] = x[j, i] over [s1, s0].
    let mut b = BodyBuilder::new(vec![s1, s0]);
    let v = b.vars();
    let l = b.load(x, row(&[v[1].clone(), v[0].clone()]), f);
    ir.nodes.push(IrNode::Pointwise {
        out: t,
        sizes: vec![s1, s0],
        body: b.finish(l),
        offset: inductor::size::Size::Const(0),
    });
    // g[i] = x[i % s0, i // s0] over [s0 * s1].
    let mut b = BodyBuilder::new(vec![s0 * s1]);
    let v = b.vars();
    let r = b.ranges().to_vec();
    let (i0, i1) = (v[0].modulo(s0, &r), v[0].floordiv(s0, &r));
    assert!(i1.as_constant().is_none() && !i0.terms.is_empty());
    let l = b.load(x, row(&[i0, i1]), f);
    ir.nodes.push(IrNode::Pointwise {
        out: g,
        sizes: vec![s0 * s1],
        body: b.finish(l),
        offset: inductor::size::Size::Const(0),
    });
    ir.outputs = vec![
        OutputSpec::Buffer(y),
        OutputSpec::Buffer(am),
        OutputSpec::Buffer(t),
        OutputSpec::Buffer(g),
    ];
    ir
}

#[test]
fn rows_transposes_and_divisions_run_at_every_assignment() {
    let opts = options();
    let prepared = inductor::compiled::prepare_ir(rows_graph(), &opts).unwrap();
    let code = prepared.code().to_string();
    if std::env::var_os("TORCHFERRO_SHOW_C").is_some() {
        eprintln!("{code}");
    }
    // The flattened transpose divides by the symbol in C.
    assert!(code.contains("/ s0)") && code.contains("% s0)"), "{code}");
    let mut compiles = 0;
    let mut host = VecHost::new();
    let assignments: Vec<(i64, i64)> = (2..=64)
        .map(|a| (2 + (a * 5) % 63, a))
        .chain([(2, 2), (64, 64), (37, 2), (2, 129)])
        .collect();
    for (seed, &(a, b)) in assignments.iter().enumerate() {
        let c = prepared.build_at(&opts, &[a, b]).unwrap();
        compiles += usize::from(c.compiler_ran());
        let xs = values((a * b) as usize, seed as u64 + 7);
        let ins = vec![host.tensor(DType::Float32, &[a, b], &xs)];
        let got = c.run(&mut host, &ins).unwrap();
        let want = inductor::interp::run(c.ir(), &mut host, &ins).unwrap();
        assert_eq!(got.len(), 4);
        for (g, w) in got.iter().zip(&want) {
            assert_eq!(g.sizes, w.sizes, "at s0={a}, s1={b}");
            assert_close(&g.to_f64(), &w.to_f64(), &c);
        }
        // Plain arithmetic: the transposes and the argmax exactly, each softmax row sums to 1.
        let at = |i: i64, j: i64| xs[(i * b + j) as usize] as f32 as f64;
        let t: Vec<f64> = (0..b)
            .flat_map(|j| (0..a).map(move |i| (i, j)))
            .map(|(i, j)| at(i, j))
            .collect();
        assert_eq!(got[2].to_f64(), t, "t at s0={a}, s1={b}");
        let g: Vec<f64> = (0..a * b).map(|k| at(k % a, k / a)).collect();
        assert_eq!(got[3].to_f64(), g, "g at s0={a}, s1={b}");
        let y = got[0].to_f64();
        let am = got[1].to_f64();
        for i in 0..a {
            let r = &y[(i * b) as usize..((i + 1) * b) as usize];
            assert!(
                (r.iter().sum::<f64>() - 1.0).abs() < 1e-4,
                "row {i} at s0={a}, s1={b}"
            );
            let best = (0..b).fold(0, |k, j| if at(i, j) > at(i, k) { j } else { k });
            assert_eq!(
                am[i as usize], best as f64,
                "argmax row {i} at s0={a}, s1={b}"
            );
        }
    }
    assert!(
        compiles <= 1,
        "{compiles} C compiles over {} assignments",
        assignments.len()
    );
}

/// A graph input `[s0, 7]` with symbolic metadata (fx's `Dim::Sym`, contiguous).
fn sym_input(g: &mut fx::Graph, name: &str, sizes: Vec<fx::Dim>) -> fx::NodeId {
    let mut strides = vec![fx::Dim::Known(1); sizes.len()];
    let mut acc = fx::SymExpr::constant(1);
    for i in (0..sizes.len()).rev() {
        strides[i] = match acc.as_const() {
            Some(c) => fx::Dim::Known(c),
            None => fx::Dim::Sym(acc.clone()),
        };
        acc = acc.mul(&sizes[i].expr());
    }
    let meta = fx::TensorMeta {
        dtype: DType::Float32,
        device: fx::Device::cpu(),
        sizes,
        strides,
        requires_grad: false,
    };
    g.placeholder(name, fx::NodeMeta::Tensor(meta))
}

/// A call with metadata from fx's symbolic inference (hint: `s0 = 5`).
fn scall(g: &mut fx::Graph, target: fx::Target, args: Vec<fx::Arg>) -> fx::NodeId {
    let (meta, _) = fx::infer::infer_symbolic(
        &fx::infer::InferCtx::default(),
        g,
        &target,
        &args,
        &[],
        fx::infer::Symbols::hints(&[5]),
    )
    .unwrap_or_else(|e| panic!("infer {target:?} {args:?}: {e:?}"));
    let hint = target.name().rsplit('.').next().unwrap().to_string();
    g.call(&hint, target, args, vec![], meta)
}

/// The lowering from fx's symbolic metas (the design's step 3): a graph over `x [s0, 7]` and
/// `w [7]` (pointwise with broadcasting, softmax over the rows, a mean over the symbolic dim,
/// a column view and a transposed reshape) is lowered once; its one library, built at each
/// assignment, gives the values the static graph lowered at that size gives.
#[test]
fn the_lowering_from_symbolic_metas_matches_the_static_graph_at_every_size() {
    use fx::{Arg, Dim, SymExpr};
    let mut g = fx::Graph::new();
    let x = sym_input(
        &mut g,
        "x",
        vec![Dim::Sym(SymExpr::symbol(0)), Dim::Known(7)],
    );
    let w = sym_input(&mut g, "w", vec![Dim::Known(7)]);
    let p = scall(&mut g, f("operator.mul"), vec![n(x), n(w)]);
    let e = scall(&mut g, m("exp"), vec![n(p)]);
    let sm = scall(&mut g, f("torch.softmax"), vec![n(e), Arg::Int(-1)]);
    let mean = scall(&mut g, m("mean"), vec![n(x), Arg::Int(0)]);
    let d = scall(&mut g, f("operator.sub"), vec![n(sm), n(mean)]);
    let t = scall(&mut g, m("t"), vec![n(d)]);
    let r = scall(&mut g, m("reshape"), vec![n(t), Arg::Int(-1)]);
    let out = scall(&mut g, f("operator.mul"), vec![n(r), Arg::Float(2.0)]);
    g.output(vec![n(out), n(mean)]);

    let opts = options();
    let prepared = inductor::prepare(&g, &opts).unwrap_or_else(|e| panic!("prepare: {e}"));
    assert_eq!(prepared.symbols(), vec![0]);
    let code = prepared.code().to_string();
    assert!(code.contains("const int64_t s0 = tf_sym[0];"), "{code}");
    let mut compiles = 0;
    for a in [2i64, 3, 4, 5, 7, 8, 13, 16, 31, 64] {
        let c = prepared.build_at(&opts, &[a]).unwrap();
        compiles += usize::from(c.compiler_ran());
        let at = fx::passes::specialize::specialize(&g, &|_| a).unwrap();
        let (_, want) = check(&at, a as u64);
        let mut host = VecHost::new();
        let ins = inputs_for(&mut host, &at, a as u64);
        let got = c.run(&mut host, &ins).unwrap();
        assert_eq!(got.len(), want.len());
        for (x, y) in got.iter().zip(&want) {
            assert_close(&x.to_f64(), y, &c);
        }
        assert_eq!(got[0].sizes, vec![7 * a]);
    }
    assert!(compiles <= 1, "{compiles} C compiles over s0 = 2..64");
}

/// A symbolic CPU nest leaves out loops of extent at most 1 (session 22): a constant 1, and a
/// symbolic extent proved `<= 1` (a pool's right border, 0 or 1 with the parity), which the
/// kernel runs under `extent > 0`; the var of a loop left out is 0. Its other loops keep
/// their order.
#[test]
fn a_symbolic_nest_leaves_out_loops_of_extent_at_most_one() {
    use inductor::codegen::plan::LoopNest;
    let s = Size::symbol;
    let two = Size::Const(2);
    // (s1 - 1) // 2 - s1 // 2 + 1: 1 at odd s1, 0 at even.
    let parity = (s(1) - Size::Const(1)).floordiv(two) - s(1).floordiv(two) + Size::Const(1);
    let sizes = [s(0), Size::Const(1), s(0).floordiv(two), parity];
    let nest = LoopNest::without_unit_loops(&sizes);
    assert_eq!(nest.sizes, vec![s(0), s(0).floordiv(two)]);
    assert_eq!(nest.guards, vec![parity]);
    // x0 + 10*x1 + 100*x2 + 1000*x3 over the two loops left: y0 + 100*y1.
    let e = (0..4u32).fold(Idx::constant(0), |e, k| {
        e.add(&Idx::var(k).scale(Size::Const(10i64.pow(k))))
    });
    let want = Idx::var(0).add(&Idx::var(1).scale(Size::Const(100)));
    assert_eq!(nest.apply(&e), want);
    // An extent that may be 2 stays a loop (s0 // 2 is 1 at s0 = 2, more above).
    let nest = LoopNest::without_unit_loops(&[s(0), s(1).floordiv(two)]);
    assert_eq!(nest.sizes, vec![s(0), s(1).floordiv(two)]);
    assert!(nest.guards.is_empty());
}

/// `c * x_k` summed over `k` with the coefficients of a contiguous layout of `sizes`.
fn row_major(sizes: &[Size]) -> Idx {
    let mut e = Idx::constant(0);
    let mut stride = Size::Const(1);
    for k in (0..sizes.len()).rev() {
        e = e.add(&Idx::var(k as u32).scale(stride));
        stride = stride * sizes[k];
    }
    e
}

/// Every point of `sizes` (outermost first) at an assignment, in row-major order.
fn points(sizes: &[i64]) -> Vec<Vec<i64>> {
    let total: i64 = sizes.iter().product();
    (0..total.max(0))
        .map(|mut i| {
            let mut p = vec![0; sizes.len()];
            for k in (0..sizes.len()).rev() {
                p[k] = i % sizes[k];
                i /= sizes[k];
            }
            p
        })
        .collect()
}

/// Session 23: a symbolic CPU nest merges adjacent loops where every index stays affine, as
/// a static one does, without comparing stride values: a contiguous `[s0, s1, s2]` (a read
/// and the store) is one loop of `s0*s1*s2` whose index is its var; a read broadcast along
/// the last dim (`w[x2]`) keeps that dim's loop, the leading two merging; an extent that may
/// be negative (`s0 - 3`, a pool interior at small sizes) merges with nothing. At each
/// assignment (odd and even sizes, 2 to 7) every index over the merged nest equals the
/// index over the nodes' own loops at the same point.
#[test]
fn a_symbolic_nest_merges_contiguous_loops() {
    use inductor::codegen::plan::LoopNest;
    let s = Size::symbol;
    let sizes = [s(0), s(1), s(2)];
    let flat = row_major(&sizes);
    let nest = LoopNest::without_unit_loops(&sizes).merged(std::slice::from_ref(&flat));
    assert_eq!(nest.sizes, vec![s(0) * s(1) * s(2)]);
    assert_eq!(nest.apply(&flat), Idx::var(0));

    let bcast = Idx::var(2);
    let exprs = [flat.clone(), bcast.clone()];
    let nest = LoopNest::without_unit_loops(&sizes).merged(&exprs);
    assert_eq!(nest.sizes, vec![s(0) * s(1), s(2)]);
    assert_eq!(nest.apply(&flat), Idx::var(0).scale(s(2)).add(&Idx::var(1)));
    assert_eq!(nest.apply(&bcast), Idx::var(1));

    // A transposed read (`x[x1, x0, x2]` of a `[s1, s0, s2]` buffer) keeps the outer loops
    // apart; the contiguous last dim still merges with nothing that would divide.
    let transposed = Idx::var(1)
        .scale(s(0) * s(2))
        .add(&Idx::var(0).scale(s(2)))
        .add(&Idx::var(2));
    let exprs = [flat.clone(), transposed.clone()];
    let nest = LoopNest::without_unit_loops(&sizes).merged(&exprs);
    assert_eq!(nest.sizes, sizes.to_vec());

    let maybe_negative = [s(0) - Size::Const(3), s(1)];
    let e = row_major(&maybe_negative);
    let nest = LoopNest::without_unit_loops(&maybe_negative).merged(std::slice::from_ref(&e));
    assert_eq!(nest.sizes, maybe_negative.to_vec());

    // Values: each index at each point of the merged nest equals the index at the matching
    // point of the nodes' loops.
    for (cut, exprs) in [
        (&sizes[..], vec![flat.clone()]),
        (&sizes[..], vec![flat.clone(), bcast.clone()]),
        (&sizes[..], vec![flat.clone(), transposed.clone()]),
    ] {
        let nest = LoopNest::without_unit_loops(cut).merged(&exprs);
        for a in [[2i64, 3, 5], [3, 2, 7], [4, 4, 2], [7, 5, 3]] {
            let sym = |k: u32| a[k as usize];
            let own: Vec<i64> = cut.iter().map(|c| c.eval(&sym).unwrap()).collect();
            let merged: Vec<i64> = nest.sizes.iter().map(|c| c.eval(&sym).unwrap()).collect();
            let (p_own, p_merged) = (points(&own), points(&merged));
            assert_eq!(p_own.len(), p_merged.len(), "{a:?}");
            for (po, pm) in p_own.iter().zip(&p_merged) {
                for e in &exprs {
                    assert_eq!(
                        nest.apply(e).eval_with(pm, &sym),
                        e.eval_with(po, &sym),
                        "{e:?} at {po:?} / {pm:?}, sizes {a:?}"
                    );
                }
            }
        }
    }
}

/// A call with metadata from fx's symbolic inference at the given hints.
fn scall_at(
    g: &mut fx::Graph,
    hints: &[i64],
    target: fx::Target,
    args: Vec<fx::Arg>,
) -> fx::NodeId {
    let (meta, _) = fx::infer::infer_symbolic(
        &fx::infer::InferCtx::default(),
        g,
        &target,
        &args,
        &[],
        fx::infer::Symbols::hints(hints),
    )
    .unwrap_or_else(|e| panic!("infer {target:?} {args:?}: {e:?}"));
    let hint = target.name().rsplit('.').next().unwrap().to_string();
    g.call(&hint, target, args, vec![], meta)
}

/// Session 23, through the lowering: `relu(x) * 2` over a contiguous `x [s0, s1, 7]` runs one
/// flat loop of `s0*s1*7`, and `x + w` with `w [s1, 7]` broadcast over `s0` two loops
/// (`s0` by `s1*7`); one library each, values equal to the reference interpreter's at each
/// assignment (odd, even and equal sizes).
#[test]
fn merged_symbolic_loops_keep_values_at_every_size() {
    use fx::{Arg, Dim, SymExpr};
    let hints = [5, 6];
    for broadcast in [false, true] {
        let mut g = fx::Graph::new();
        let x = sym_input(
            &mut g,
            "x",
            vec![
                Dim::Sym(SymExpr::symbol(0)),
                Dim::Sym(SymExpr::symbol(1)),
                Dim::Known(7),
            ],
        );
        let out = if broadcast {
            let w = sym_input(
                &mut g,
                "w",
                vec![Dim::Sym(SymExpr::symbol(1)), Dim::Known(7)],
            );
            scall_at(&mut g, &hints, f("operator.add"), vec![n(x), n(w)])
        } else {
            let r = scall_at(&mut g, &hints, f("torch.relu"), vec![n(x)]);
            scall_at(
                &mut g,
                &hints,
                f("operator.mul"),
                vec![n(r), Arg::Float(2.0)],
            )
        };
        g.output(vec![n(out)]);

        let opts = options();
        let prepared = inductor::prepare(&g, &opts).unwrap_or_else(|e| panic!("prepare: {e}"));
        let code = prepared.code().to_string();
        let loops = code.matches("for (int64_t x").count();
        assert_eq!(loops, if broadcast { 2 } else { 1 }, "{code}");
        if !broadcast {
            assert!(
                code.contains("#pragma omp parallel for simd if(parallel: "),
                "{code}"
            );
        }
        let mut compiles = 0;
        for (a, b) in [
            (2i64, 2i64),
            (2, 3),
            (3, 2),
            (5, 6),
            (7, 7),
            (13, 4),
            (4, 31),
        ] {
            let c = prepared.build_at(&opts, &[a, b]).unwrap();
            compiles += usize::from(c.compiler_ran());
            let at = fx::passes::specialize::specialize(&g, &|k| [a, b][k as usize]).unwrap();
            let mut host = VecHost::new();
            let ins = inputs_for(&mut host, &at, (a * 100 + b) as u64);
            let got = c.run(&mut host, &ins).unwrap();
            let want = inductor::interp::run(c.ir(), &mut host, &ins).unwrap();
            assert_eq!(got.len(), want.len());
            for (x, y) in got.iter().zip(&want) {
                assert_eq!(x.sizes, y.sizes);
                assert_close(&x.to_f64(), &y.to_f64(), &c);
            }
            assert_eq!(got[0].sizes, vec![a, b, 7]);
        }
        assert!(compiles <= 1, "{compiles} C compiles");
    }
}

/// Session 24: a kernel with reductions over symbolic sizes merges its row loops among
/// themselves and its reduced loops among themselves (`plan::staged_nest`), never a row loop
/// with a reduced one. Over `x [s0, s1, s2]`: the sum, amax and softmax over the last dim run
/// `s0*s1` rows of `s2` (no `collapse(2)`), the sum over the last two dims `s0` rows of one
/// vectorized loop of `s1*s2` (in blocks, session 27), a sum of `x * w` (`w [s2]` broadcast) merges its rows too, and
/// a sum over the middle dim (blocked) keeps its loops; over `x [s0, s1, 7]` the layer norm and softmax
/// (their rows kept in per-row arrays, addressed by the merged position) run `s0*s1` rows.
/// The softmax over a symbolic row keeps `exp(x - max)` in a per-thread heap array (computed
/// once, read by the sum and the normalization). One library each, values equal to the
/// reference interpreter's at sizes 2 to 31, odd and even.
#[test]
fn merged_symbolic_reduction_rows_keep_values_at_every_size() {
    use fx::{Arg, Dim, SymExpr};
    let sym = |k| Dim::Sym(SymExpr::symbol(k));
    for last_known in [false, true] {
        let hints: &[i64] = if last_known { &[5, 6] } else { &[5, 6, 9] };
        let last = if last_known { Dim::Known(7) } else { sym(2) };
        let mut g = fx::Graph::new();
        let x = sym_input(&mut g, "x", vec![sym(0), sym(1), last.clone()]);
        let outs = if last_known {
            let w = sym_input(&mut g, "w", vec![Dim::Known(7)]);
            let b = sym_input(&mut g, "b", vec![Dim::Known(7)]);
            let ln = scall_at(
                &mut g,
                hints,
                f("torch.nn.functional.layer_norm"),
                vec![n(x), Arg::Tuple(vec![Arg::Int(7)]), n(w), n(b)],
            );
            let sm = scall_at(&mut g, hints, f("torch.softmax"), vec![n(x), Arg::Int(-1)]);
            vec![ln, sm]
        } else {
            let w = sym_input(&mut g, "w", vec![sym(2)]);
            let s = scall_at(&mut g, hints, m("sum"), vec![n(x), Arg::Int(-1)]);
            let mx = scall_at(&mut g, hints, m("amax"), vec![n(x), Arg::Int(-1)]);
            let both = Arg::Tuple(vec![Arg::Int(-2), Arg::Int(-1)]);
            let s12 = scall_at(&mut g, hints, m("mean"), vec![n(x), both]);
            let sm = scall_at(&mut g, hints, f("torch.softmax"), vec![n(x), Arg::Int(-1)]);
            let xw = scall_at(&mut g, hints, f("operator.mul"), vec![n(x), n(w)]);
            let e = scall_at(&mut g, hints, m("exp"), vec![n(xw)]);
            let sw = scall_at(&mut g, hints, m("sum"), vec![n(e), Arg::Int(-1)]);
            let s1 = scall_at(&mut g, hints, m("sum"), vec![n(x), Arg::Int(1)]);
            vec![s, mx, s12, sm, sw, s1]
        };
        g.output(outs.iter().map(|&o| n(o)).collect());

        let opts = options();
        let prepared = inductor::prepare(&g, &opts).unwrap_or_else(|e| panic!("prepare: {e}"));
        let code = prepared.code().to_string();
        // The one `collapse(2)` left is the sum over the middle dim's, blocked (rows by
        // blocks of 64 columns), not staged.
        let collapsed = code.matches("collapse(2)").count();
        assert_eq!(collapsed, usize::from(!last_known), "{code}");
        assert!(code.contains("x0 < (s0*s1); x0++"), "{code}");
        if !last_known {
            // The mean over the last two dims: one merged loop of `s1*s2`, a float sum over
            // a symbolic length, so walked in blocks of 1024 (`CpuPolicy::cascade_min_len`).
            assert!(
                code.lines()
                    .any(|l| l.contains("< (s1*s2); xc") && l.ends_with("+= 1024) {")),
                "{code}"
            );
            // The softmax's `exp(x - max)` is kept per row in this thread's heap array.
            assert!(
                code.contains("*)tf_row_scratch(0, (s2) * (int64_t)sizeof(float));"),
                "{code}"
            );
        }
        let mut compiles = 0;
        for a in [
            [2i64, 2, 2],
            [2, 3, 5],
            [3, 2, 4],
            [5, 6, 9],
            [7, 7, 7],
            [13, 4, 2],
            [4, 31, 3],
        ] {
            let c = prepared.build_at(&opts, &a[..hints.len()]).unwrap();
            compiles += usize::from(c.compiler_ran());
            let at = fx::passes::specialize::specialize(&g, &|k| a[k as usize]).unwrap();
            let mut host = VecHost::new();
            let ins = inputs_for(&mut host, &at, (a[0] * 100 + a[1] * 10 + a[2]) as u64);
            let got = c.run(&mut host, &ins).unwrap();
            let want = inductor::interp::run(c.ir(), &mut host, &ins).unwrap();
            assert_eq!(got.len(), want.len());
            for (x, y) in got.iter().zip(&want) {
                assert_eq!(x.sizes, y.sizes, "at {a:?}");
                assert_close(&x.to_f64(), &y.to_f64(), &c);
            }
        }
        assert!(compiles <= 1, "{compiles} C compiles");
    }
}
