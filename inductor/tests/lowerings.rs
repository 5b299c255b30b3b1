//! The lowerings added for real models: `cat`/`stack`, `embedding`/`index_select`, arg
//! reductions and `max(dim)`, and half-precision storage, each compiled and checked against the
//! reference interpreter and against direct formulas.

mod common;

use common::*;
use fx::{Arg, DType, Device, Graph, NodeMeta, TensorMeta};
use inductor::testing::VecHost;
use inductor::{compile, RunError};

fn meta(dtype: DType, sizes: &[i64]) -> NodeMeta {
    NodeMeta::Tensor(TensorMeta::contiguous(dtype, Device::cpu(), sizes))
}

#[test]
fn cat_of_pointwise_inputs_is_one_kernel_per_part() {
    let mut g = Graph::new();
    let a = input(&mut g, "a", DType::Float32, &[3, 4]);
    let b = input(&mut g, "b", DType::Float32, &[3, 2]);
    let s = call(&mut g, m("sin"), vec![n(a)], vec![]);
    let c = g.call(
        "cat",
        f("torch.cat"),
        vec![Arg::List(vec![n(s), n(b), n(a)]), Arg::Int(-1)],
        vec![],
        meta(DType::Float32, &[3, 10]),
    );
    let r = call(&mut g, m("relu"), vec![n(c)], vec![]);
    g.output(vec![n(r)]);
    let (c, outs) = check(&g, 1);
    assert_eq!(c.num_fallbacks(), 0, "{:?}", c.fallback_reasons());
    // The relu reading the cat is stored by one loop per part (issue 14: no select, each
    // part's producers fused into its loop; `tests/cat_split.rs`).
    assert_eq!(c.num_kernels(), 3, "{}", c.source());
    let (av, bv) = (values(12, 1), values(6, 2));
    for i in 0..3 {
        for j in 0..10 {
            let want = match j {
                0..=3 => (av[i * 4 + j] as f32).sin() as f64,
                4..=5 => bv[i * 2 + j - 4],
                _ => av[i * 4 + j - 6],
            }
            .max(0.0);
            assert!((outs[0][i * 10 + j] - want).abs() < 1e-6, "{i} {j}");
        }
    }
}

#[test]
fn stack_along_a_new_middle_dim() {
    let mut g = Graph::new();
    let a = input(&mut g, "a", DType::Int64, &[2, 3]);
    let b = input(&mut g, "b", DType::Int64, &[2, 3]);
    let c = g.call(
        "stack",
        f("torch.stack"),
        vec![Arg::Tuple(vec![n(a), n(b)])],
        vec![("dim".into(), Arg::Int(1))],
        meta(DType::Int64, &[2, 2, 3]),
    );
    g.output(vec![n(c)]);
    let (c, outs) = check(&g, 3);
    assert_eq!(c.num_fallbacks(), 0, "{:?}", c.fallback_reasons());
    let round = |v: Vec<f64>| v.into_iter().map(|x| (x * 3.0).round()).collect::<Vec<_>>();
    let (av, bv) = (round(values(6, 3)), round(values(6, 4)));
    for i in 0..2 {
        for s in 0..2 {
            for j in 0..3 {
                let want = if s == 0 { av[i * 3 + j] } else { bv[i * 3 + j] };
                assert_eq!(outs[0][i * 6 + s * 3 + j], want);
            }
        }
    }
}

#[test]
fn embedding_plus_positions_fuses_and_checks_bounds() {
    let mut g = Graph::new();
    let ids = input(&mut g, "ids", DType::Int64, &[2, 5]);
    let w = input(&mut g, "w", DType::Float32, &[7, 4]);
    let e = g.call(
        "embedding",
        f("torch.nn.functional.embedding"),
        vec![n(ids), n(w)],
        vec![],
        meta(DType::Float32, &[2, 5, 4]),
    );
    let y = call(
        &mut g,
        f("operator.mul"),
        vec![n(e), Arg::Float(2.0)],
        vec![],
    );
    g.output(vec![n(y)]);
    let c = compile(&g, &options()).unwrap();
    assert_eq!(c.num_fallbacks(), 0, "{:?}", c.fallback_reasons());
    assert_eq!(c.num_kernels(), 1, "{}", c.source());
    let mut host = VecHost::new();
    let idv = [0.0, 6.0, 3.0, 3.0, 1.0, 2.0, 5.0, 0.0, 4.0, 6.0];
    let wv = values(28, 9);
    let ids_t = host.tensor(DType::Int64, &[2, 5], &idv);
    let w_t = host.tensor(DType::Float32, &[7, 4], &wv);
    let out = c.run(&mut host, &[ids_t, w_t.clone()]).unwrap();
    let got = out[0].to_f64();
    for (p, id) in idv.iter().enumerate() {
        for d in 0..4 {
            let want = (wv[*id as usize * 4 + d] as f32 * 2.0) as f64;
            assert_eq!(got[p * 4 + d], want);
        }
    }
    let want = inductor::interp::run(c.ir(), &mut host, &[host_ids(&idv), w_t.clone()]);
    assert!(want.is_ok());
    // An id past the table is an error, not a read out of bounds.
    let mut bad = idv;
    bad[3] = 7.0;
    let r = c.run(&mut host, &[host_ids(&bad), w_t.clone()]);
    assert!(matches!(r, Err(RunError::IndexOutOfRange)), "{:?}", r.err());
    let r = inductor::interp::run(c.ir(), &mut host, &[host_ids(&bad), w_t.clone()]);
    assert!(matches!(r, Err(RunError::IndexOutOfRange)));
    // The flag was reset: a good call runs again.
    assert!(c.run(&mut host, &[host_ids(&idv), w_t]).is_ok());
}

/// `acc.add_(embedding(ids, w))`: the gather and the store into the argument are separate
/// kernels, so an id past the table raises before `acc` is written (eager raises before it
/// writes anything; one fused kernel had already added the clamped row).
#[test]
fn out_of_range_gather_raises_before_an_input_is_written() {
    let mut g = Graph::new();
    let ids = input(&mut g, "ids", DType::Int64, &[2, 5]);
    let w = input(&mut g, "w", DType::Float32, &[7, 4]);
    let acc = input(&mut g, "acc", DType::Float32, &[2, 5, 4]);
    let e = g.call(
        "embedding",
        f("torch.nn.functional.embedding"),
        vec![n(ids), n(w)],
        vec![],
        meta(DType::Float32, &[2, 5, 4]),
    );
    call(&mut g, m("add_"), vec![n(acc), n(e)], vec![]);
    let s = call(&mut g, m("sum"), vec![n(acc)], vec![]);
    g.output(vec![n(s)]);
    let c = compile(&g, &options()).unwrap();
    assert_eq!(c.num_fallbacks(), 0, "{:?}", c.fallback_reasons());
    let mut host = VecHost::new();
    let idv = [0.0, 6.0, 3.0, 3.0, 1.0, 2.0, 5.0, 0.0, 4.0, 6.0];
    let wv = values(28, 9);
    let w_t = host.tensor(DType::Float32, &[7, 4], &wv);
    let acc_t = host.tensor(DType::Float32, &[2, 5, 4], &[0.0; 40]);
    c.run(&mut host, &[host_ids(&idv), w_t.clone(), acc_t.clone()])
        .unwrap();
    let after_good = acc_t.to_f64();
    assert_eq!(
        after_good[4..8],
        wv[24..28]
            .iter()
            .map(|&v| v as f32 as f64)
            .collect::<Vec<_>>()[..]
    );
    let mut bad = idv;
    bad[3] = 7.0;
    let r = c.run(&mut host, &[host_ids(&bad), w_t, acc_t.clone()]);
    assert!(matches!(r, Err(RunError::IndexOutOfRange)), "{:?}", r.err());
    assert_eq!(
        acc_t.to_f64(),
        after_good,
        "the argument was written before the check\n{}",
        c.source()
    );
}

/// An embedding read by a row reduction and by a pointwise op (Llama's embedding, read by the
/// RMSNorm and the residual add) is looked up once into a buffer: the gather, its range check
/// and its error report are not repeated in each reader's kernel.
#[test]
fn embedding_with_two_readers_is_gathered_once() {
    let mut g = Graph::new();
    let ids = input(&mut g, "ids", DType::Int64, &[2, 5]);
    let w = input(&mut g, "w", DType::Float32, &[7, 4]);
    let e = g.call(
        "embedding",
        f("torch.nn.functional.embedding"),
        vec![n(ids), n(w)],
        vec![],
        meta(DType::Float32, &[2, 5, 4]),
    );
    let s = call(&mut g, m("sum"), vec![n(e), Arg::Int(-1)], vec![]);
    let y = call(
        &mut g,
        f("operator.add"),
        vec![n(e), Arg::Float(1.0)],
        vec![],
    );
    g.output(vec![n(s), n(y)]);
    let c = compile(&g, &options()).unwrap();
    assert_eq!(c.num_fallbacks(), 0, "{:?}", c.fallback_reasons());
    let src = c.source();
    assert_eq!(src.matches("tf_index_error, 1").count(), 1, "{src}");
    let mut host = VecHost::new();
    let idv = [0.0, 6.0, 3.0, 3.0, 1.0, 2.0, 5.0, 0.0, 4.0, 6.0];
    let wv = values(28, 9);
    let ids_t = host.tensor(DType::Int64, &[2, 5], &idv);
    let w_t = host.tensor(DType::Float32, &[7, 4], &wv);
    let out = c.run(&mut host, &[ids_t, w_t.clone()]).unwrap();
    let (sums, plus) = (out[0].to_f64(), out[1].to_f64());
    for (p, id) in idv.iter().enumerate() {
        let row: Vec<f32> = (0..4).map(|d| wv[*id as usize * 4 + d] as f32).collect();
        assert!((sums[p] - row.iter().sum::<f32>() as f64).abs() < 1e-5);
        for d in 0..4 {
            assert_eq!(plus[p * 4 + d], (row[d] + 1.0) as f64);
        }
    }
    // Still checked: an id past the table is an error.
    let mut bad = idv;
    bad[3] = 7.0;
    let r = c.run(&mut host, &[host_ids(&bad), w_t]);
    assert!(matches!(r, Err(RunError::IndexOutOfRange)), "{:?}", r.err());
}

fn host_ids(v: &[f64]) -> inductor::testing::VecTensor {
    VecHost::new().tensor(DType::Int64, &[2, 5], v)
}

#[test]
fn index_select_and_tensor_indexing() {
    let mut g = Graph::new();
    let x = input(&mut g, "x", DType::Float64, &[4, 6]);
    let i = input(&mut g, "i", DType::Int32, &[3]);
    let a = g.call(
        "index_select",
        f("torch.index_select"),
        vec![n(x), Arg::Int(1), n(i)],
        vec![],
        meta(DType::Float64, &[4, 3]),
    );
    let b = g.call(
        "getitem",
        f("operator.getitem"),
        vec![n(x), n(i)],
        vec![],
        meta(DType::Float64, &[3, 6]),
    );
    g.output(vec![n(a), n(b)]);
    let c = compile(&g, &options()).unwrap();
    assert_eq!(c.num_fallbacks(), 0, "{:?}", c.fallback_reasons());
    let mut host = VecHost::new();
    let xv = values(24, 5);
    let xt = host.tensor(DType::Float64, &[4, 6], &xv);
    // Negative positions wrap for `x[i]` only; index_select gets in-range ones here.
    let it = host.tensor(DType::Int32, &[3], &[2.0, 0.0, 3.0]);
    let out = c.run(&mut host, &[xt.clone(), it]).unwrap();
    let (sel, idx) = (out[0].to_f64(), out[1].to_f64());
    for r in 0..4 {
        for (k, col) in [2usize, 0, 3].iter().enumerate() {
            assert_eq!(sel[r * 3 + k], xv[r * 6 + col]);
        }
    }
    for (k, row) in [2usize, 0, 3].iter().enumerate() {
        for col in 0..6 {
            assert_eq!(idx[k * 6 + col], xv[row * 6 + col]);
        }
    }
    let neg = host.tensor(DType::Int32, &[3], &[-1.0, 0.0, 1.0]);
    assert!(matches!(
        c.run(&mut host, &[xt, neg]),
        Err(RunError::IndexOutOfRange)
    ));
}

#[test]
fn argmax_and_max_with_dim() {
    let mut g = Graph::new();
    let x = input(&mut g, "x", DType::Float32, &[5, 9]);
    let am = g.call(
        "argmax",
        m("argmax"),
        vec![n(x), Arg::Int(-1)],
        vec![],
        meta(DType::Int64, &[5]),
    );
    let mx = g.call(
        "max",
        m("max"),
        vec![n(x), Arg::Int(0)],
        vec![("keepdim".into(), Arg::Bool(true))],
        NodeMeta::Tuple(vec![
            meta(DType::Float32, &[1, 9]),
            meta(DType::Int64, &[1, 9]),
        ]),
    );
    let v = g.call(
        "getitem",
        f("operator.getitem"),
        vec![n(mx), Arg::Int(0)],
        vec![],
        meta(DType::Float32, &[1, 9]),
    );
    let i = g.call(
        "getitem",
        f("operator.getitem"),
        vec![n(mx), Arg::Int(1)],
        vec![],
        meta(DType::Int64, &[1, 9]),
    );
    let amin = g.call(
        "argmin",
        f("torch.argmin"),
        vec![n(x)],
        vec![],
        meta(DType::Int64, &[]),
    );
    g.output(vec![n(am), n(v), n(i), n(amin)]);
    let (c, outs) = check(&g, 11);
    assert_eq!(c.num_fallbacks(), 0, "{:?}", c.fallback_reasons());
    let xv: Vec<f32> = values(45, 11).into_iter().map(|v| v as f32).collect();
    for r in 0..5 {
        let row = &xv[r * 9..r * 9 + 9];
        let best = (0..9).fold(0, |b, j| if row[j] > row[b] { j } else { b });
        assert_eq!(outs[0][r], best as f64);
    }
    for col in 0..9 {
        let best = (0..5).fold(0, |b, r| {
            if xv[r * 9 + col] > xv[b * 9 + col] {
                r
            } else {
                b
            }
        });
        assert_eq!(outs[1][col], xv[best * 9 + col] as f64);
        assert_eq!(outs[2][col], best as f64);
    }
    let lowest = (0..45).fold(0, |b, j| if xv[j] < xv[b] { j } else { b });
    assert_eq!(outs[3][0], lowest as f64);
}

#[test]
fn argmax_takes_the_first_nan_and_the_first_tie() {
    let mut g = Graph::new();
    let x = input(&mut g, "x", DType::Float32, &[3, 4]);
    let am = g.call(
        "argmax",
        m("argmax"),
        vec![n(x), Arg::Int(1)],
        vec![],
        meta(DType::Int64, &[3]),
    );
    g.output(vec![n(am)]);
    let c = compile(&g, &options()).unwrap();
    let mut host = VecHost::new();
    let nan = f64::NAN;
    let xv = [1.0, 5.0, 5.0, 2.0, 1.0, nan, 9.0, nan, 3.0, 3.0, 3.0, 3.0];
    let xt = host.tensor(DType::Float32, &[3, 4], &xv);
    let got = c.run(&mut host, std::slice::from_ref(&xt)).unwrap()[0].to_f64();
    assert_eq!(got, vec![1.0, 1.0, 0.0]);
    let want = inductor::interp::run(c.ir(), &mut host, &[xt]).unwrap()[0].to_f64();
    assert_eq!(got, want);
}

#[test]
fn half_storage_computes_in_float_and_rounds_once() {
    for dt in [DType::Float16, DType::BFloat16] {
        let mut g = Graph::new();
        let x = input(&mut g, "x", dt, &[4, 33]);
        let s = call(&mut g, m("sin"), vec![n(x)], vec![]);
        let y = call(
            &mut g,
            f("operator.mul"),
            vec![n(s), Arg::Float(3.0)],
            vec![],
        );
        let z = call(&mut g, f("operator.add"), vec![n(y), n(x)], vec![]);
        let sm = call(&mut g, f("torch.softmax"), vec![n(z), Arg::Int(-1)], vec![]);
        let f32v = call(&mut g, m("float"), vec![n(sm)], vec![]);
        g.output(vec![n(z), n(f32v)]);
        let (c, outs) = check(&g, 21);
        assert_eq!(c.num_fallbacks(), 0, "{:?}", c.fallback_reasons());
        let round = |v: f32| -> f32 {
            match dt {
                DType::Float16 => inductor::interp::f16_to_f32(inductor::interp::f32_to_f16(v)),
                _ => inductor::interp::bf16_to_f32(inductor::interp::f32_to_bf16(v)),
            }
        };
        let xv: Vec<f32> = values(4 * 33, 21)
            .into_iter()
            .map(|v| round(v as f32))
            .collect();
        for (i, x) in xv.iter().enumerate() {
            // One rounding of the float32 result, not one per op.
            assert_eq!(outs[0][i] as f32, round(x.sin() * 3.0 + x), "{dt:?} {i}");
        }
        for r in 0..4 {
            let sum: f64 = (0..33).map(|j| outs[1][r * 33 + j]).sum();
            assert!((sum - 1.0).abs() < 0.02, "{dt:?} row {r} sums to {sum}");
        }
    }
}

#[test]
fn half_conversions_match_ieee_rounding() {
    use inductor::interp::{bf16_to_f32, f16_to_f32, f32_to_bf16, f32_to_f16};
    // Every float16 survives a round trip; halfway cases round to even.
    for h in 0..=u16::MAX {
        let f = f16_to_f32(h);
        if f.is_nan() {
            assert_eq!(f32_to_f16(f) & 0x7e00, 0x7e00);
        } else {
            assert_eq!(f32_to_f16(f), h, "{h:#x}");
        }
    }
    assert_eq!(f32_to_f16(1.0 + 2f32.powi(-11)), 0x3c00);
    assert_eq!(f32_to_f16(1.0 + 3.0 * 2f32.powi(-11)), 0x3c02);
    assert_eq!(f32_to_f16(65520.0), 0x7c00);
    assert_eq!(f32_to_f16(2f32.powi(-25)), 0);
    assert_eq!(f32_to_f16(3.0 * 2f32.powi(-25)), 2);
    assert_eq!(f32_to_bf16(1.0 + 2f32.powi(-8)), 0x3f80);
    assert_eq!(f32_to_bf16(1.0 + 3.0 * 2f32.powi(-8)), 0x3f82);
    assert_eq!(f32_to_bf16(f32::NAN), 0x7fc0);
    assert_eq!(bf16_to_f32(0x4049), f32::from_bits(0x4049_0000));
}

#[test]
fn reductions_over_leading_dims_run_blocked_and_match() {
    for (rows, cols) in [(37, 21), (5, 16), (64, 3), (9, 33)] {
        let mut g = Graph::new();
        let x = input(&mut g, "x", DType::Float32, &[rows, cols]);
        let s = call(&mut g, m("sum"), vec![n(x), Arg::Int(0)], vec![]);
        let mx = call(
            &mut g,
            m("amax"),
            vec![n(x), Arg::Int(0)],
            vec![("keepdim", Arg::Bool(true))],
        );
        let mean = call(
            &mut g,
            m("mean"),
            vec![n(x), Arg::Int(0)],
            vec![("keepdim", Arg::Bool(true))],
        );
        let d = call(&mut g, f("operator.sub"), vec![n(x), n(mean)], vec![]);
        let e = call(&mut g, f("operator.mul"), vec![n(d), n(mx)], vec![]);
        let sm = call(&mut g, f("torch.softmax"), vec![n(x), Arg::Int(0)], vec![]);
        g.output(vec![n(s), n(e), n(sm)]);
        let (c, outs) = check(&g, rows as u64);
        if cols >= 4 {
            assert!(c.source().contains("xb"), "{}", c.source());
        }
        let xv: Vec<f32> = values((rows * cols) as usize, rows as u64)
            .into_iter()
            .map(|v| v as f32)
            .collect();
        for j in 0..cols as usize {
            let col: Vec<f32> = (0..rows as usize)
                .map(|i| xv[i * cols as usize + j])
                .collect();
            let sum: f64 = col.iter().map(|v| *v as f64).sum();
            assert!((outs[0][j] - sum).abs() < 1e-4, "{rows}x{cols} col {j}");
        }
    }
}

#[test]
fn vectorized_argmax_keeps_first_ties_and_nans() {
    // Rows long enough for the lane scans, with few distinct values and NaNs in places.
    let (rows, cols) = (6usize, 53usize);
    let mut xv: Vec<f64> = values(rows * cols, 77)
        .into_iter()
        .map(|v| (v * 1.5).round())
        .collect();
    xv[cols + 40] = f64::NAN;
    xv[cols + 20] = f64::NAN;
    xv[2 * cols + 52] = f64::NAN;
    for op in ["argmax", "argmin"] {
        let mut g = Graph::new();
        let x = input(&mut g, "x", DType::Float32, &[rows as i64, cols as i64]);
        let a = g.call(
            op,
            m(op),
            vec![n(x), Arg::Int(1)],
            vec![],
            meta(DType::Int64, &[rows as i64]),
        );
        let all = g.call(op, m(op), vec![n(x)], vec![], meta(DType::Int64, &[]));
        g.output(vec![n(a), n(all)]);
        let c = compile(&g, &options()).unwrap();
        let mut host = VecHost::new();
        let xt = host.tensor(DType::Float32, &[rows as i64, cols as i64], &xv);
        let got = c.run(&mut host, std::slice::from_ref(&xt)).unwrap();
        let want = inductor::interp::run(c.ir(), &mut host, &[xt]).unwrap();
        assert_eq!(got[0].to_f64(), want[0].to_f64(), "{op}");
        assert_eq!(got[1].to_f64(), want[1].to_f64(), "{op}");
        let pick = |s: &[f64]| -> usize {
            let mut b = 0;
            for j in 1..s.len() {
                let better = if op == "argmax" {
                    s[j] > s[b]
                } else {
                    s[j] < s[b]
                };
                if !s[b].is_nan() && (s[j].is_nan() || better) {
                    b = j;
                }
            }
            b
        };
        for r in 0..rows {
            assert_eq!(
                got[0].to_f64()[r],
                pick(&xv[r * cols..(r + 1) * cols]) as f64
            );
        }
        assert_eq!(got[1].to_f64()[0], pick(&xv) as f64, "{op} over all");
    }
}

#[test]
fn trusted_runs_skip_the_input_check_and_agree() {
    let mut g = Graph::new();
    let x = input(&mut g, "x", DType::Float32, &[3, 5]);
    let y = call(&mut g, m("exp"), vec![n(x)], vec![]);
    g.output(vec![n(y)]);
    let c = compile(&g, &options()).unwrap();
    let mut host = VecHost::new();
    let xt = host.tensor(DType::Float32, &[3, 5], &values(15, 4));
    let a = c.run(&mut host, std::slice::from_ref(&xt)).unwrap()[0].to_f64();
    // SAFETY: the input has the compiled dtype, sizes and strides.
    let b = unsafe { c.run_trusted(&mut host, std::slice::from_ref(&xt)) }.unwrap()[0].to_f64();
    assert_eq!(a, b);
    let wrong = host.tensor(DType::Float32, &[5, 3], &values(15, 4));
    assert!(matches!(
        c.run(&mut host, &[wrong]),
        Err(RunError::Input { .. })
    ));
}

/// Kernels (by position in the schedule) whose nodes read buffer `b`.
fn kernels_reading(c: &inductor::CompiledGraph, b: inductor::ir::BufId) -> usize {
    let ir = c.ir();
    c.schedule()
        .kernels
        .iter()
        .filter(|k| {
            k.nodes
                .iter()
                .any(|kn| ir.nodes[kn.node].reads().contains(&b))
        })
        .count()
}

/// The input buffer of placeholder `index`.
fn input_buf(c: &inductor::CompiledGraph, index: usize) -> inductor::ir::BufId {
    c.ir()
        .buffers
        .iter_enumerated()
        .find(|(_, d)| d.kind == inductor::ir::BufKind::Input(index))
        .map(|(b, _)| b)
        .unwrap()
}

/// A residual stream `h1 = x + y; h2 = h1 + h1 @ w; h3 = h2 + rms(h2) @ w` (a decoder's
/// residual adds around its GEMMs, each sum normalized before the next GEMM): every sum is
/// read by kernels on both sides of a GEMM, so it is stored once where it is made, and the
/// residual inputs are read by one kernel only, not again by every later reader of the chain.
#[test]
fn residual_read_across_gemms_is_stored_once() {
    let (t, d) = (6i64, 8i64);
    let mut g = Graph::new();
    let x = input(&mut g, "x", DType::Float32, &[t, d]);
    let y = input(&mut g, "y", DType::Float32, &[t, d]);
    let w = input(&mut g, "w", DType::Float32, &[d, d]);
    let mut h = call(&mut g, f("operator.add"), vec![n(x), n(y)], vec![]);
    let mut outs = Vec::new();
    for _ in 0..3 {
        let sq = call(&mut g, f("operator.mul"), vec![n(h), n(h)], vec![]);
        let ms = call(
            &mut g,
            m("mean"),
            vec![n(sq), Arg::Int(-1)],
            vec![("keepdim", Arg::Bool(true))],
        );
        let eps = call(
            &mut g,
            f("operator.add"),
            vec![n(ms), Arg::Float(1e-6)],
            vec![],
        );
        let r = call(&mut g, f("torch.rsqrt"), vec![n(eps)], vec![]);
        let normed = call(&mut g, f("operator.mul"), vec![n(h), n(r)], vec![]);
        let a = call(&mut g, f("torch.mm"), vec![n(normed), n(w)], vec![]);
        outs.push(a);
        h = call(&mut g, f("operator.add"), vec![n(h), n(a)], vec![]);
    }
    g.output(vec![n(h)]);
    let (c, _) = check(&g, 31);
    assert_eq!(c.num_fallbacks(), 0, "{:?}", c.fallback_reasons());
    assert_eq!(c.num_extern_calls(), 3);
    for input in 0..2 {
        assert_eq!(
            kernels_reading(&c, input_buf(&c, input)),
            1,
            "input {input}\n{}",
            c.source()
        );
    }
}

/// An embedding and the row reduction reading it fuse into one kernel although an independent
/// kernel (of another shape) lies between them in graph order: no step in between makes what
/// the reduction reads, so it runs with its producer (Llama's embedding and first RMSNorm,
/// with the causal-mask kernels in between).
#[test]
fn reader_fuses_with_its_producer_across_an_independent_kernel() {
    let mut g = Graph::new();
    let ids = input(&mut g, "ids", DType::Int64, &[2, 5]);
    let w = input(&mut g, "w", DType::Float32, &[7, 4]);
    let u = input(&mut g, "u", DType::Float32, &[3, 3]);
    let e = g.call(
        "embedding",
        f("torch.nn.functional.embedding"),
        vec![n(ids), n(w)],
        vec![],
        meta(DType::Float32, &[2, 5, 4]),
    );
    let z = call(&mut g, m("sin"), vec![n(u)], vec![]);
    let s = call(&mut g, m("sum"), vec![n(e), Arg::Int(-1)], vec![]);
    let y = call(
        &mut g,
        f("operator.add"),
        vec![n(e), Arg::Float(1.0)],
        vec![],
    );
    g.output(vec![n(s), n(y), n(z)]);
    let c = compile(&g, &options()).unwrap();
    assert_eq!(c.num_fallbacks(), 0, "{:?}", c.fallback_reasons());
    assert_eq!(c.num_kernels(), 2, "{}", c.source());
    let mut host = VecHost::new();
    let idv = [0.0, 6.0, 3.0, 3.0, 1.0, 2.0, 5.0, 0.0, 4.0, 6.0];
    let (wv, uv) = (values(28, 9), values(9, 10));
    let ids_t = host.tensor(DType::Int64, &[2, 5], &idv);
    let w_t = host.tensor(DType::Float32, &[7, 4], &wv);
    let u_t = host.tensor(DType::Float32, &[3, 3], &uv);
    let out = c.run(&mut host, &[ids_t, w_t, u_t]).unwrap();
    let (sums, plus, sines) = (out[0].to_f64(), out[1].to_f64(), out[2].to_f64());
    for (p, id) in idv.iter().enumerate() {
        let row: Vec<f32> = (0..4).map(|k| wv[*id as usize * 4 + k] as f32).collect();
        assert!((sums[p] - row.iter().sum::<f32>() as f64).abs() < 1e-5);
        for k in 0..4 {
            assert_eq!(plus[p * 4 + k], (row[k] + 1.0) as f64);
        }
    }
    for (s, v) in sines.iter().zip(&uv) {
        assert!((s - (*v as f32).sin() as f64).abs() < 1e-6);
    }
}

/// A causal-mask-like `cs[b, q] == cs[b, k]` with `b`, `q`, `k` views of `arange`s, and a
/// comparison `arange + 1 < 1`: positions that are index arithmetic become affine loads (no
/// range check, no error report), the comparison the ranges decide is a constant, and the
/// `arange`s, read four times, are not stored.
#[test]
fn index_arithmetic_positions_become_affine_loads() {
    let mut g = Graph::new();
    let cs = input(&mut g, "cs", DType::Int64, &[2, 5]);
    let ab = g.call(
        "arange",
        f("torch.arange"),
        vec![Arg::Int(2)],
        vec![],
        meta(DType::Int64, &[2]),
    );
    let a5 = g.call(
        "arange",
        f("torch.arange"),
        vec![Arg::Int(5)],
        vec![],
        meta(DType::Int64, &[5]),
    );
    let b = call(
        &mut g,
        m("reshape"),
        vec![n(ab), Arg::Int(2), Arg::Int(1), Arg::Int(1)],
        vec![],
    );
    let q = call(
        &mut g,
        m("reshape"),
        vec![n(a5), Arg::Int(1), Arg::Int(5), Arg::Int(1)],
        vec![],
    );
    let k = call(
        &mut g,
        m("reshape"),
        vec![n(a5), Arg::Int(1), Arg::Int(1), Arg::Int(5)],
        vec![],
    );
    let gq = g.call(
        "getitem",
        f("operator.getitem"),
        vec![n(cs), Arg::Tuple(vec![n(b), n(q)])],
        vec![],
        meta(DType::Int64, &[2, 5, 1]),
    );
    let gk = g.call(
        "getitem",
        f("operator.getitem"),
        vec![n(cs), Arg::Tuple(vec![n(b), n(k)])],
        vec![],
        meta(DType::Int64, &[2, 1, 5]),
    );
    let eq = call(&mut g, f("operator.eq"), vec![n(gq), n(gk)], vec![]);
    let a1 = call(&mut g, f("operator.add"), vec![n(a5), Arg::Int(1)], vec![]);
    let never = call(&mut g, f("operator.lt"), vec![n(a1), Arg::Int(1)], vec![]);
    // A fourth reader of `a5` (unused): a value read this often with a body that loads memory
    // is stored; an `arange` is not.
    call(&mut g, f("operator.sub"), vec![n(a5), Arg::Int(1)], vec![]);
    g.output(vec![n(eq), n(never)]);
    let c = compile(&g, &options()).unwrap();
    assert_eq!(c.num_fallbacks(), 0, "{:?}", c.fallback_reasons());
    let src = c.source();
    let kernels = &src[src.find("void kernel").unwrap()..];
    assert!(!kernels.contains("tf_index_error"), "{src}");
    assert!(!kernels.contains("tf_clampi"), "{src}");
    // Two kernels, one per output: nothing stores an `arange`.
    assert_eq!(c.num_kernels(), 2, "{src}");
    let mut host = VecHost::new();
    let csv = [0.0, 0.0, 1.0, 1.0, 1.0, 2.0, 3.0, 3.0, 3.0, 4.0];
    let cs_t = host.tensor(DType::Int64, &[2, 5], &csv);
    let out = c.run(&mut host, &[cs_t]).unwrap();
    let (eqv, neverv) = (out[0].to_f64(), out[1].to_f64());
    for bi in 0..2 {
        for qi in 0..5 {
            for ki in 0..5 {
                let want = csv[bi * 5 + qi] == csv[bi * 5 + ki];
                assert_eq!(eqv[bi * 25 + qi * 5 + ki], want as i64 as f64);
            }
        }
    }
    assert_eq!(neverv, vec![0.0; 5]);
}
