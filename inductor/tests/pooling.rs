//! Pooling lowerings (`inductor/src/lower/pool.rs`): max and average pools of 1 to 3 spatial
//! dims with padding, dilation, `ceil_mode`, `count_include_pad` and `divisor_override`, and
//! adaptive average/max pooling to any size, each compiled with no fallback and checked
//! against the reference interpreter and against a direct implementation of torch's
//! definitions written here; then the same pools over symbolic sizes, one library built at
//! every assignment giving the static graph's values.

mod common;

use common::*;
use fx::{Arg, DType, Dim, Graph, SymExpr};
use inductor::size::Size;
use inductor::testing::VecHost;

/// torch's pooling definitions over `[lead..., spatial...]` row-major data, in f64.
#[derive(Clone, Debug)]
enum Pool {
    Max {
        k: Vec<i64>,
        s: Vec<i64>,
        p: Vec<i64>,
        d: Vec<i64>,
        ceil: bool,
    },
    Avg {
        k: Vec<i64>,
        s: Vec<i64>,
        p: Vec<i64>,
        ceil: bool,
        include_pad: bool,
        divisor: Option<i64>,
    },
    Adaptive {
        out: Vec<i64>,
        max: bool,
    },
}

fn out_len(len: i64, k: i64, s: i64, p: i64, d: i64, ceil: bool) -> i64 {
    let num = len + 2 * p - d * (k - 1) - 1;
    let mut o = if ceil { (num + s - 1) / s } else { num / s } + 1;
    if ceil && (o - 1) * s >= len + p {
        o -= 1;
    }
    o
}

/// Row-major multi-indices of `sizes`.
fn points(sizes: &[i64]) -> Vec<Vec<i64>> {
    let mut out = vec![vec![]];
    for &n in sizes {
        out = out
            .into_iter()
            .flat_map(|p: Vec<i64>| {
                (0..n).map(move |i| {
                    let mut q = p.clone();
                    q.push(i);
                    q
                })
            })
            .collect();
    }
    out
}

/// A window along one dim: its start, then the step and count of a max pool's reads or the
/// length and divisor count of an average's.
type Window = (i64, i64, i64);

/// torch's concrete answer for a call at a point (the tracer's meta tensors).
type Evaluate<'a> = &'a dyn Fn(&[i64]) -> Result<fx::NodeMeta, fx::infer::InferError>;

/// The pooled result of `x` (sizes `sizes`, `n` trailing spatial dims) and its sizes.
fn reference(x: &[f64], sizes: &[i64], n: usize, pool: &Pool) -> (Vec<i64>, Vec<f64>) {
    let lead = sizes.len() - n;
    let lens = &sizes[lead..];
    // Per spatial dim and output index: the window [lo, hi) inside the input, and the count
    // an average divides by.
    let (outs, windows): (Vec<i64>, Vec<Vec<Window>>) = (0..n)
        .map(|i| {
            let l = lens[i];
            let ws: Vec<Window> = match pool {
                Pool::Max { k, s, p, d, ceil } => (0..out_len(l, k[i], s[i], p[i], d[i], *ceil))
                    .map(|o| (o * s[i] - p[i], d[i], k[i]))
                    .collect(),
                Pool::Avg {
                    k,
                    s,
                    p,
                    ceil,
                    include_pad,
                    ..
                } => (0..out_len(l, k[i], s[i], p[i], 1, *ceil))
                    .map(|o| {
                        let st = o * s[i] - p[i];
                        let end = (st + k[i]).min(l + p[i]);
                        let c = if *include_pad {
                            end - st
                        } else {
                            end.min(l) - st.max(0)
                        };
                        (st, end - st, c)
                    })
                    .collect(),
                Pool::Adaptive { out, .. } => (0..out[i])
                    .map(|o| {
                        let st = o * l / out[i];
                        let end = ((o + 1) * l + out[i] - 1) / out[i];
                        (st, end - st, end - st)
                    })
                    .collect(),
            };
            (ws.len() as i64, ws)
        })
        .unzip();
    let mut osizes = sizes[..lead].to_vec();
    osizes.extend(&outs);
    let strides: Vec<i64> = (0..sizes.len())
        .map(|i| sizes[i + 1..].iter().product())
        .collect();
    let mut res = Vec::new();
    for pt in points(&osizes) {
        let base: i64 = (0..lead).map(|i| pt[i] * strides[i]).sum();
        // Positions read along each dim (inside the input only).
        let per_dim: Vec<Vec<i64>> = (0..n)
            .map(|i| {
                let (st, a, b) = windows[i][pt[lead + i] as usize];
                let pos: Vec<i64> = match pool {
                    Pool::Max { .. } => (0..b).map(|kk| st + kk * a).collect(),
                    _ => (st..st + a).collect(),
                };
                pos.into_iter().filter(|&q| q >= 0 && q < lens[i]).collect()
            })
            .collect();
        let sizes_pd: Vec<i64> = per_dim.iter().map(|v| v.len() as i64).collect();
        let vals: Vec<f64> = points(&sizes_pd)
            .into_iter()
            .map(|q| {
                let off: i64 = (0..n)
                    .map(|i| per_dim[i][q[i] as usize] * strides[lead + i])
                    .sum();
                x[(base + off) as usize]
            })
            .collect();
        let max = vals.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let sum: f64 = vals.iter().sum();
        let count: i64 = (0..n)
            .map(|i| windows[i][pt[lead + i] as usize].2)
            .product();
        res.push(match pool {
            Pool::Max { .. } | Pool::Adaptive { max: true, .. } => max,
            Pool::Avg {
                divisor: Some(dv), ..
            } => sum / *dv as f64,
            _ => sum / count as f64,
        });
    }
    (osizes, res)
}

fn meta32(sizes: &[i64]) -> fx::NodeMeta {
    fx::NodeMeta::Tensor(fx::TensorMeta::contiguous(
        DType::Float32,
        fx::Device::cpu(),
        sizes,
    ))
}

fn ints(v: &[i64]) -> Arg {
    Arg::Tuple(v.iter().map(|&i| Arg::Int(i)).collect())
}

/// The call of `pool` over `x` with `n` spatial dims.
fn pool_call(
    n_: usize,
    pool: &Pool,
    x: fx::NodeId,
) -> (fx::Target, Vec<Arg>, Vec<(&'static str, Arg)>) {
    match pool {
        Pool::Max { k, s, p, d, ceil } => (
            f(&format!("torch.nn.functional.max_pool{n_}d")),
            vec![n(x), ints(k), ints(s), ints(p), ints(d)],
            vec![("ceil_mode", Arg::Bool(*ceil))],
        ),
        Pool::Avg {
            k,
            s,
            p,
            ceil,
            include_pad,
            divisor,
        } => (
            f(&format!("torch.nn.functional.avg_pool{n_}d")),
            vec![n(x), ints(k), ints(s), ints(p)],
            vec![
                ("ceil_mode", Arg::Bool(*ceil)),
                ("count_include_pad", Arg::Bool(*include_pad)),
                ("divisor_override", divisor.map_or(Arg::None, Arg::Int)),
            ],
        ),
        Pool::Adaptive { out, max } => (
            f(&format!(
                "torch.nn.functional.adaptive_{}_pool{n_}d",
                if *max { "max" } else { "avg" }
            )),
            vec![n(x), ints(out)],
            vec![],
        ),
    }
}

/// `relu(pool(x)) * 2` compiled at `sizes` (float32): no fallback, one kernel (the pool fuses
/// with the pointwise ops around it unless it reduces), values equal to the reference.
fn run_static(sizes: &[i64], nsp: usize, pool: &Pool) {
    let mut g = Graph::new();
    let x = input(&mut g, "x", DType::Float32, sizes);
    let (t, a, kw) = pool_call(nsp, pool, x);
    // fx's native rules leave pooling's metadata to torch's meta tensors (the tracer's): the
    // reference's sizes stand in for them.
    let numel: i64 = sizes.iter().product();
    let xv: Vec<f64> = values(numel as usize, 7)
        .into_iter()
        .map(|v| v as f32 as f64)
        .collect();
    let (osizes, want) = reference(&xv, sizes, nsp, pool);
    let kw: Vec<(String, Arg)> = kw.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
    let y = g.call("pool", t, a, kw, meta32(&osizes));
    let r = call(&mut g, m("relu"), vec![n(y)], vec![]);
    let z = call(
        &mut g,
        f("operator.mul"),
        vec![n(r), Arg::Float(2.0)],
        vec![],
    );
    g.output(vec![n(z)]);
    let (c, outs) = check(&g, 7);
    assert_eq!(c.num_fallbacks(), 0, "{pool:?}: {:?}", c.fallback_reasons());
    let want: Vec<f64> = want.iter().map(|v| v.max(0.0) * 2.0).collect();
    assert_close(&outs[0], &want, &c);
}

fn max(k: &[i64], s: &[i64], p: &[i64], d: &[i64], ceil: bool) -> Pool {
    Pool::Max {
        k: k.to_vec(),
        s: s.to_vec(),
        p: p.to_vec(),
        d: d.to_vec(),
        ceil,
    }
}

fn avg(k: &[i64], s: &[i64], p: &[i64], ceil: bool, include_pad: bool, div: Option<i64>) -> Pool {
    Pool::Avg {
        k: k.to_vec(),
        s: s.to_vec(),
        p: p.to_vec(),
        ceil,
        include_pad,
        divisor: div,
    }
}

#[test]
fn max_pool_with_ceil_mode_dilation_and_every_rank() {
    // ceil_mode: 7 with k3 s2 gives 3 windows floor, 4 ceil (the last starts inside and runs
    // past the edge); 8 with k2 s2 p1 ceil: the window that would start in the right padding
    // is dropped.
    run_static(
        &[2, 3, 7, 8],
        2,
        &max(&[3, 2], &[2, 2], &[1, 1], &[1, 1], true),
    );
    run_static(
        &[1, 2, 9, 6],
        2,
        &max(&[3, 3], &[2, 2], &[0, 1], &[1, 1], true),
    );
    run_static(
        &[2, 3, 11, 10],
        2,
        &max(&[3, 2], &[2, 3], &[1, 1], &[2, 1], false),
    );
    run_static(&[3, 10], 1, &max(&[3], &[2], &[1], &[1], true));
    run_static(&[2, 2, 13], 1, &max(&[4], &[3], &[2], &[1], false));
    run_static(
        &[1, 2, 5, 6, 7],
        3,
        &max(&[2, 3, 2], &[2, 2, 2], &[1, 1, 0], &[1, 1, 1], true),
    );
}

#[test]
fn avg_pool_counts_as_torch_does() {
    for ceil in [false, true] {
        for include_pad in [false, true] {
            for div in [None, Some(5)] {
                let p = avg(&[3, 2], &[2, 2], &[1, 1], ceil, include_pad, div);
                run_static(&[2, 3, 7, 8], 2, &p);
                let p = avg(&[3], &[2], &[1], ceil, include_pad, div);
                run_static(&[2, 3, 10], 1, &p);
            }
        }
    }
    run_static(
        &[2, 2, 6, 6],
        2,
        &avg(&[2, 2], &[2, 2], &[0, 0], false, true, None),
    );
    run_static(
        &[2, 5, 6, 7],
        3,
        &avg(&[2, 3, 3], &[2, 2, 1], &[1, 1, 0], true, false, None),
    );
}

#[test]
fn adaptive_pools_to_any_size() {
    for max in [false, true] {
        for (sizes, out) in [
            (vec![2, 3, 7, 9], vec![2, 2]),
            (vec![2, 3, 8, 8], vec![2, 4]),
            (vec![1, 2, 5, 3], vec![3, 5]),
            (vec![1, 2, 30, 31], vec![3, 2]),
        ] {
            run_static(&sizes, 2, &Pool::Adaptive { out, max });
        }
        run_static(&[2, 3, 10], 1, &Pool::Adaptive { out: vec![4], max });
    }
}

/// `split_with_sizes` (`x.split([2, 4], dim)` in aten) is views: no fallback, no copy kernel.
#[test]
fn split_with_sizes_is_views() {
    let mut g = Graph::new();
    let x = input(&mut g, "x", DType::Float32, &[3, 6]);
    // Its metadata (torch's meta tensors in a trace): views of x's strides.
    let piece = |w: i64| {
        fx::NodeMeta::Tensor(fx::TensorMeta {
            dtype: DType::Float32,
            device: fx::Device::cpu(),
            sizes: vec![Dim::Known(3), Dim::Known(w)],
            strides: vec![Dim::Known(6), Dim::Known(1)],
            requires_grad: false,
        })
    };
    let parts = g.call(
        "split_with_sizes",
        f("torch.split_with_sizes"),
        vec![n(x), ints(&[2, 1, 3]), Arg::Int(1)],
        vec![],
        fx::NodeMeta::Tuple(vec![piece(2), piece(1), piece(3)]),
    );
    let outs: Vec<fx::NodeId> = (0..3)
        .map(|i| {
            let p = call(
                &mut g,
                f("operator.getitem"),
                vec![n(parts), Arg::Int(i)],
                vec![],
            );
            call(
                &mut g,
                f("operator.mul"),
                vec![n(p), Arg::Float(3.0)],
                vec![],
            )
        })
        .collect();
    g.output(outs.iter().map(|&o| n(o)).collect());
    let (c, got) = check(&g, 2);
    assert_eq!(c.num_fallbacks(), 0, "{:?}", c.fallback_reasons());
    let xv = values(18, 2);
    for (piece, (lo, hi)) in [(0, 2), (2, 3), (3, 6)].into_iter().enumerate() {
        let want: Vec<f64> = (0..3)
            .flat_map(|r| (lo..hi).map(move |j| (r, j)))
            .map(|(r, j)| (xv[r * 6 + j] as f32 as f64) * 3.0)
            .collect();
        assert_close(&got[piece], &want, &c);
    }
}

// --- symbolic sizes ------------------------------------------------------------------------

fn sym_input(g: &mut Graph, sizes: Vec<Dim>) -> fx::NodeId {
    let mut strides = vec![Dim::Known(1); sizes.len()];
    let mut acc = SymExpr::constant(1);
    for i in (0..sizes.len()).rev() {
        strides[i] = match acc.as_const() {
            Some(c) => Dim::Known(c),
            None => Dim::Sym(acc.clone()),
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
    g.placeholder("x", fx::NodeMeta::Tensor(meta))
}

/// A call with metadata from fx's symbolic rules (hints `hints`); where a rule needs torch's
/// concrete answer (the tracer's meta tensors), `external` gives it at a point.
fn scall(
    g: &mut Graph,
    target: fx::Target,
    args: Vec<Arg>,
    kw: Vec<(&str, Arg)>,
    hints: &[i64],
    external: Option<Evaluate>,
) -> fx::NodeId {
    let kw: Vec<(String, Arg)> = kw.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
    let mut symbols = fx::infer::Symbols::hints(hints);
    symbols.external = external;
    let (meta, _) = fx::infer::infer_symbolic(
        &fx::infer::InferCtx::default(),
        g,
        &target,
        &args,
        &kw,
        symbols,
    )
    .unwrap_or_else(|e| panic!("infer {target:?} {args:?}: {e:?}"));
    let hint = target.name().rsplit('.').next().unwrap().to_string();
    g.call(&hint, target, args, kw, meta)
}

/// `pool(x) + 1` over `x [2, 3, s0, s1]` lowered once from fx's symbolic metas (hints `hints`):
/// its one library, built at each assignment in `sizes`, gives the reference's values.
fn run_symbolic(pool: &Pool, hints: [i64; 2], sizes: &[(i64, i64)]) {
    let g = symbolic_graph(pool, hints);
    let opts = options();
    let prepared = inductor::prepare(&g, &opts).unwrap_or_else(|e| panic!("prepare: {e}"));
    assert_eq!(prepared.symbols(), vec![0, 1]);
    let mut compiles = 0;
    for &(h, w) in sizes {
        let c = prepared.build_at(&opts, &[h, w]).unwrap();
        assert_eq!(c.num_fallbacks(), 0, "{pool:?}: {:?}", c.fallback_reasons());
        compiles += usize::from(c.compiler_ran());
        let mut host = VecHost::new();
        let shape = [2, 3, h, w];
        let xv: Vec<f64> = values((6 * h * w) as usize, 3)
            .into_iter()
            .map(|v| v as f32 as f64)
            .collect();
        let ins = vec![host.tensor_strided(DType::Float32, &shape, &[3 * h * w, h * w, w, 1], &xv)];
        let got = c.run(&mut host, &ins).unwrap();
        let (osizes, want) = reference(&xv, &shape, 2, pool);
        assert_eq!(got[0].sizes, osizes, "{pool:?} at {h}x{w}");
        let want: Vec<f64> = want.iter().map(|v| v + 1.0).collect();
        assert_close(&got[0].to_f64(), &want, &c);
    }
    assert!(compiles <= 1, "{compiles} C compiles for {pool:?}");
}

/// The graph of [`run_symbolic`].
fn symbolic_graph(pool: &Pool, hints: [i64; 2]) -> Graph {
    let mut g = Graph::new();
    let x = sym_input(
        &mut g,
        vec![
            Dim::Known(2),
            Dim::Known(3),
            Dim::Sym(SymExpr::symbol(0)),
            Dim::Sym(SymExpr::symbol(1)),
        ],
    );
    let (t, a, kw) = pool_call(2, pool, x);
    let torch_meta = |p: &[i64]| {
        let shape = [2, 3, p[0], p[1]];
        let zeros = vec![0.0; (6 * p[0] * p[1]) as usize];
        Ok(meta32(&reference(&zeros, &shape, 2, pool).0))
    };
    let y = scall(&mut g, t, a, kw, &hints, Some(&torch_meta));
    let z = scall(
        &mut g,
        f("operator.add"),
        vec![n(y), Arg::Float(1.0)],
        vec![],
        &hints,
        None,
    );
    g.output(vec![n(z)]);
    g
}

#[test]
fn pools_over_symbolic_sizes() {
    // Floor mode: one formula for every size (the parity guard selects graphs, not values).
    let all = [(5, 6), (7, 8), (9, 13), (16, 17), (30, 21)];
    run_symbolic(
        &avg(&[3, 3], &[2, 2], &[1, 1], false, true, None),
        [7, 8],
        &all,
    );
    run_symbolic(
        &avg(&[3, 2], &[2, 2], &[1, 0], false, false, None),
        [7, 8],
        &all,
    );
    run_symbolic(
        &avg(&[2, 2], &[2, 2], &[0, 0], false, true, Some(3)),
        [7, 8],
        &all,
    );
    run_symbolic(
        &max(&[3, 3], &[2, 1], &[1, 1], &[1, 2], false),
        [7, 8],
        &all,
    );
    // ceil_mode: the hints decide whether the last window is kept (guarded); the sizes that
    // decide the same way as (7, 8) share the graph. k3 s2 p1: `(o - 1) * 2 >= L + 1` never
    // holds, so every size keeps it; odd and even lengths are separate graphs (parity).
    let odd_even = [(7, 8), (9, 10), (5, 12), (13, 6)];
    run_symbolic(
        &avg(&[3, 3], &[2, 2], &[1, 1], true, false, None),
        [7, 8],
        &odd_even,
    );
    run_symbolic(
        &max(&[3, 3], &[2, 2], &[1, 1], &[1, 1], true),
        [7, 8],
        &odd_even,
    );
    // Adaptive: windows of symbolic size, reduced with masks.
    for max in [false, true] {
        run_symbolic(
            &Pool::Adaptive {
                out: vec![2, 2],
                max,
            },
            [7, 8],
            &all,
        );
        run_symbolic(
            &Pool::Adaptive {
                out: vec![3, 1],
                max,
            },
            [7, 8],
            &all,
        );
    }
}

// --- interior and borders (session 21) ----------------------------------------------------

/// The pointwise nodes writing a range of their buffer, and whether the last (the interior)
/// reads without masks, selects or clamps.
fn pieces(ir: &inductor::ir::IrGraph) -> (usize, bool) {
    use inductor::index::Atom;
    use inductor::ir::{IrNode, Val};
    let ranges: Vec<_> = ir.nodes.keys().filter(|&n| ir.writes_range(n)).collect();
    // Without ranges: the one pointwise node.
    let Some(&last) = ranges.last().or(ir.nodes.keys().last().as_ref()) else {
        return (0, false);
    };
    let IrNode::Pointwise { body, .. } = &ir.nodes[last] else {
        unreachable!("a range writer is pointwise")
    };
    let clean = body.vals.iter().all(|v| match v {
        Val::Where(..) | Val::Index(_) => false,
        Val::Load { index, .. } => !index
            .terms
            .iter()
            .any(|(a, _)| matches!(a, Atom::Clamp(..))),
        _ => true,
    });
    (ranges.len(), clean)
}

/// A pool over symbolic sizes is stored by `3^n` loops (per dim its left border, right border
/// and interior; session 22), the last over the windows proved inside the input: no clamps,
/// masks or per-point counts there. CUDA keeps one store.
#[test]
fn a_symbolic_pool_is_stored_by_interior_and_borders() {
    let cases = [
        avg(&[3, 3], &[2, 2], &[1, 1], false, true, None),
        avg(&[3, 3], &[2, 2], &[1, 1], true, false, None),
        max(&[3, 3], &[2, 1], &[1, 1], &[1, 2], false),
    ];
    for pool in &cases {
        let g = symbolic_graph(pool, [7, 8]);
        let cpu = inductor::lower::lower_for(&g, &options().target).unwrap();
        assert_eq!(pieces(&cpu), (9, true), "{pool:?}");
        let cuda = inductor::lower::lower_for(&g, &inductor::Target::cuda(9, 0)).unwrap();
        assert_eq!(pieces(&cuda).0, 0, "{pool:?}");
    }
    // Without padding every window is inside (the last ends at `2 * (len // 2) - 1 <=
    // len - 1`, proved through the floor division): one loop, no checks.
    let g = symbolic_graph(&avg(&[2, 2], &[2, 2], &[0, 0], false, true, None), [7, 8]);
    let cpu = inductor::lower::lower_for(&g, &options().target).unwrap();
    assert_eq!(pieces(&cpu), (0, true));
}

/// The loop vars a piece's body checks: those inside a clamp of a load or in an index value (a
/// mask's position).
fn checked_vars(body: &inductor::ir::Body, ndim: u32) -> Vec<u32> {
    use inductor::index::{Atom, Idx};
    use inductor::ir::Val;
    let mut checked: Vec<Idx> = Vec::new();
    for v in &body.vals {
        match v {
            Val::Index(p) => checked.push(p.clone()),
            Val::Load { index, .. } => {
                for (a, _) in &index.terms {
                    if let Atom::Clamp(e, _, _) = a {
                        checked.push((**e).clone());
                    }
                }
            }
            _ => {}
        }
    }
    (0..ndim)
        .filter(|&k| checked.iter().any(|e| e.uses_var(k)))
        .collect()
}

/// Each border piece spans the interior's range along the dims it does not border (the corners
/// are pieces of their own), so its windows are proved inside along those and only the dims
/// it borders are checked (session 22: a top row spanning the whole width checked every W
/// read too).
#[test]
fn a_border_piece_checks_only_the_dims_it_borders() {
    use inductor::ir::IrNode;
    let cases = [
        avg(&[3, 3], &[2, 2], &[1, 1], false, true, None),
        avg(&[3, 3], &[2, 2], &[1, 1], true, false, None),
        max(&[3, 3], &[2, 1], &[1, 1], &[1, 2], false),
    ];
    for pool in &cases {
        let g = symbolic_graph(pool, [7, 8]);
        let ir = inductor::lower::lower_for(&g, &options().target).unwrap();
        let ranges: Vec<_> = ir.nodes.keys().filter(|&n| ir.writes_range(n)).collect();
        let sizes_of = |n| match &ir.nodes[n] {
            IrNode::Pointwise { sizes, body, .. } => (sizes.clone(), body),
            _ => unreachable!("a range writer is pointwise"),
        };
        let (interior, _) = sizes_of(*ranges.last().unwrap());
        let mut edges = 0;
        for &n in &ranges {
            let (sizes, body) = sizes_of(n);
            let bordered: Vec<u32> = (0..4u32)
                .filter(|&d| sizes[d as usize] != interior[d as usize])
                .collect();
            let checked = checked_vars(body, 4);
            assert!(
                checked.iter().all(|d| bordered.contains(d)),
                "{pool:?}: a piece of sizes {sizes:?} checks dims {checked:?}, borders {bordered:?}"
            );
            edges += usize::from(bordered.len() == 1);
        }
        // Top, bottom, left and right edges, between the 4 corners and the interior.
        assert_eq!((ranges.len(), edges), (9, 4), "{pool:?}");
    }
}

/// A read proved past the end over a piece is left out, not masked: over the right border
/// column of `avg_pool2d(x, 3, 2, 1)` (one column, at odd widths only) the window's last
/// column `2 * (w // 2) + 1` is `>= w`, so the piece loads 3 rows x 2 columns.
#[test]
fn a_read_proved_outside_its_piece_is_left_out() {
    use inductor::ir::{IrNode, Val};
    let g = symbolic_graph(&avg(&[3, 3], &[2, 2], &[1, 1], false, true, None), [7, 8]);
    let ir = inductor::lower::lower_for(&g, &options().target).unwrap();
    let pieces: Vec<(Vec<Size>, usize)> = ir
        .nodes
        .keys()
        .filter(|&n| ir.writes_range(n))
        .map(|n| match &ir.nodes[n] {
            IrNode::Pointwise { sizes, body, .. } => {
                let loads = body
                    .vals
                    .iter()
                    .filter(|v| matches!(v, Val::Load { .. }))
                    .count();
                (sizes.clone(), loads)
            }
            _ => unreachable!("a range writer is pointwise"),
        })
        .collect();
    let interior = pieces.last().unwrap().0.clone();
    // The edges along W: the interior's rows, one column each; the left one reads columns
    // -1 (left out), 0 and 1, the right one its two columns inside.
    let columns: Vec<usize> = pieces
        .iter()
        .filter(|(sz, _)| sz[2] == interior[2] && sz[3] != interior[3])
        .map(|p| p.1)
        .collect();
    assert_eq!(columns, vec![6, 6]);
    assert_eq!(pieces.last().unwrap().1, 9);
}

/// Over a right or bottom border piece (symbolic extent `(s - 1) // 2 - s // 2 + 1`: one
/// row or column at odd lengths, none at even ones) the window's reads that are not proved
/// past the end are proved inside through the floor divisions, so the piece checks nothing:
/// no clamp, no mask, no index value (session 22 left the last read out but clamped and masked
/// the other two at run time; the right corners and edges were 40% of the dynamic
/// `avg_pool2d`'s border time at 17x23, docs/dynamic-shapes.md "Session 25 (dyn25)").
#[test]
fn a_right_border_piece_reads_unchecked() {
    use inductor::ir::{IrNode, Val};
    let cases = [
        avg(&[3, 3], &[2, 2], &[1, 1], false, true, None),
        avg(&[3, 3], &[2, 2], &[1, 1], false, false, None),
        max(&[3, 3], &[2, 2], &[1, 1], &[1, 1], false),
    ];
    for pool in &cases {
        let g = symbolic_graph(pool, [7, 8]);
        let ir = inductor::lower::lower_for(&g, &options().target).unwrap();
        let ranges: Vec<_> = ir.nodes.keys().filter(|&n| ir.writes_range(n)).collect();
        let sizes_of = |n| match &ir.nodes[n] {
            IrNode::Pointwise { sizes, body, .. } => (sizes.clone(), body),
            _ => unreachable!("a range writer is pointwise"),
        };
        let (interior, _) = sizes_of(*ranges.last().unwrap());
        let mut right = 0;
        for &n in &ranges {
            let (sizes, body) = sizes_of(n);
            let bordered: Vec<usize> = (2..4).filter(|&d| sizes[d] != interior[d]).collect();
            // The left borders are one constant row or column; the right ones symbolic.
            if bordered.is_empty() || bordered.iter().any(|&d| sizes[d].as_const().is_some()) {
                continue;
            }
            right += 1;
            assert_eq!(
                checked_vars(body, 4),
                Vec::<u32>::new(),
                "{pool:?} {sizes:?}"
            );
            let indexes = body.vals.iter().filter(|v| matches!(v, Val::Index(_)));
            assert_eq!(
                indexes.count(),
                0,
                "{pool:?}: piece {sizes:?} computes an index"
            );
        }
        // The bottom row, the right column and the bottom-right corner.
        assert_eq!(right, 3, "{pool:?}");
    }
}

/// Static pools split too (above the policy's store threshold), with the same interior.
#[test]
fn a_static_pool_is_stored_by_interior_and_borders() {
    let mut g = Graph::new();
    let x = input(&mut g, "x", DType::Float32, &[2, 16, 64, 64]);
    let pool = avg(&[3, 3], &[2, 2], &[1, 1], false, true, None);
    let (t, a, kw) = pool_call(2, &pool, x);
    let kw: Vec<(String, Arg)> = kw.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
    let y = g.call("pool", t, a, kw, meta32(&[2, 16, 32, 32]));
    g.output(vec![n(y)]);
    let cpu = inductor::lower::lower_for(&g, &options().target).unwrap();
    // 64 = 2*31 + 2: the last window ends inside, so H and W have no right border: the
    // top-left corner, the top row, the left column and the interior.
    assert_eq!(pieces(&cpu), (4, true));
    // Below the threshold (16 x 16 in, 6 * 8 * 8 out) one loop stays.
    run_static(&[2, 3, 16, 16], 2, &pool);
    run_static(&[2, 16, 64, 64], 2, &pool);
    run_static(
        &[1, 8, 45, 37],
        2,
        &max(&[3, 3], &[2, 2], &[1, 1], &[1, 1], true),
    );
}

/// Sizes where a piece is empty (the interior at 2 and 3 for a 3-window of stride 2, both
/// borders' ends at even lengths): one library, the reference's values.
#[test]
fn pools_over_symbolic_sizes_with_empty_pieces() {
    let tiny = [
        (2, 2),
        (2, 3),
        (3, 2),
        (3, 3),
        (4, 5),
        (2, 9),
        (11, 2),
        (6, 7),
    ];
    run_symbolic(
        &avg(&[3, 3], &[2, 2], &[1, 1], false, true, None),
        [7, 8],
        &tiny,
    );
    run_symbolic(
        &avg(&[3, 3], &[2, 2], &[1, 1], false, false, None),
        [7, 8],
        &tiny,
    );
    run_symbolic(
        &avg(&[2, 2], &[2, 2], &[0, 0], false, true, None),
        [7, 8],
        &tiny,
    );
    run_symbolic(
        &avg(&[3, 2], &[1, 2], &[1, 1], false, false, None),
        [7, 8],
        &tiny,
    );
    run_symbolic(
        &max(&[3, 3], &[2, 2], &[1, 1], &[1, 1], false),
        [7, 8],
        &tiny,
    );
    // Dilation 2 along W: a window spans 5 (len >= 3 with padding 1).
    let wide = [(2, 3), (3, 4), (2, 5), (5, 6), (9, 3)];
    run_symbolic(
        &max(&[3, 3], &[2, 1], &[1, 1], &[1, 2], false),
        [7, 8],
        &wide,
    );
    // ceil_mode: the sizes of the hints' parities (odd H, even W).
    let odd_even = [(3, 2), (3, 4), (5, 2), (7, 6), (9, 4)];
    run_symbolic(
        &avg(&[3, 3], &[2, 2], &[1, 1], true, false, None),
        [7, 8],
        &odd_even,
    );
    run_symbolic(
        &max(&[3, 3], &[2, 2], &[1, 1], &[1, 1], true),
        [7, 8],
        &odd_even,
    );
}
