//! Where the lowering realizes a pointwise value read more than once (issue 17's backward
//! kernels): computed once, then read by every user, including through a transposed view
//! handed to a GEMM.

mod common;

use common::*;
use fx::{Arg, DType, Graph};

/// Occurrences of `needle` in the kernels' C source.
fn count(c: &inductor::CompiledGraph, needle: &str) -> usize {
    c.source().matches(needle).count()
}

/// A linear layer's backward after an activation: `d = grad * erf(h)` is read by the weight
/// gradient's GEMM (as `d.t()`), the input gradient's GEMM and the bias gradient's column sum.
/// `erf` must be computed once, into one buffer both GEMMs read (the transposed one as a
/// strided view), and the sum must read that buffer.
#[test]
fn shared_gradient_is_computed_once_for_two_gemms_and_a_sum() {
    let (mm_, nn_, kk) = (5usize, 7usize, 3usize);
    let mut g = Graph::new();
    let grad = input(&mut g, "grad", DType::Float64, &[mm_ as i64, nn_ as i64]);
    let h = input(&mut g, "h", DType::Float64, &[mm_ as i64, nn_ as i64]);
    let x = input(&mut g, "x", DType::Float64, &[mm_ as i64, kk as i64]);
    let w = input(&mut g, "w", DType::Float64, &[nn_ as i64, kk as i64]);
    let e = call(&mut g, m("erf"), vec![n(h)], vec![]);
    let d = call(&mut g, f("operator.mul"), vec![n(grad), n(e)], vec![]);
    let dt = call(&mut g, m("t"), vec![n(d)], vec![]);
    let gw = call(&mut g, f("torch.mm"), vec![n(dt), n(x)], vec![]);
    let gx = call(&mut g, f("torch.mm"), vec![n(d), n(w)], vec![]);
    let gb = call(&mut g, m("sum"), vec![n(d), Arg::Int(0)], vec![]);
    g.output(vec![n(gw), n(gx), n(gb)]);
    let (c, outs) = check(&g, 11);
    assert_eq!(c.num_fallbacks(), 0, "{:?}", c.fallback_reasons());
    assert_eq!(c.num_extern_calls(), 2);
    assert_eq!(count(&c, "erf("), 1, "{}", c.source());
    // Against the formulas.
    let (gv, hv, xv, wv) = (
        values(mm_ * nn_, 11),
        values(mm_ * nn_, 12),
        values(mm_ * kk, 13),
        values(nn_ * kk, 14),
    );
    let dv: Vec<f64> = gv.iter().zip(&hv).map(|(a, b)| a * libm_erf(*b)).collect();
    for j in 0..nn_ {
        for k in 0..kk {
            let want: f64 = (0..mm_).map(|i| dv[i * nn_ + j] * xv[i * kk + k]).sum();
            assert!((outs[0][j * kk + k] - want).abs() < 1e-9);
        }
    }
    for i in 0..mm_ {
        for k in 0..kk {
            let want: f64 = (0..nn_).map(|j| dv[i * nn_ + j] * wv[j * kk + k]).sum();
            assert!((outs[1][i * kk + k] - want).abs() < 1e-9);
        }
    }
    for j in 0..nn_ {
        let want: f64 = (0..mm_).map(|i| dv[i * nn_ + j]).sum();
        assert!((outs[2][j] - want).abs() < 1e-9);
    }
}

/// A single-use lazy value transposed into a GEMM: the base is realized and the GEMM reads a
/// transposed view of it (one pointwise kernel, no second buffer of the same values).
#[test]
fn transposed_lazy_operand_realizes_its_base() {
    let mut g = Graph::new();
    let a = input(&mut g, "a", DType::Float64, &[6, 4]);
    let b = input(&mut g, "b", DType::Float64, &[6, 3]);
    let s = call(&mut g, m("sin"), vec![n(a)], vec![]);
    let st = call(&mut g, m("t"), vec![n(s)], vec![]);
    let r = call(&mut g, f("torch.mm"), vec![n(st), n(b)], vec![]);
    g.output(vec![n(r)]);
    let (c, outs) = check(&g, 21);
    assert_eq!(c.num_extern_calls(), 1);
    assert_eq!(c.num_kernels(), 1, "{}", c.source());
    assert_eq!(count(&c, "sin("), 1, "{}", c.source());
    let (av, bv) = (values(24, 21), values(18, 22));
    for i in 0..4 {
        for k in 0..3 {
            let want: f64 = (0..6).map(|j| av[j * 4 + i].sin() * bv[j * 3 + k]).sum();
            assert!((outs[0][i * 3 + k] - want).abs() < 1e-9);
        }
    }
}

/// A value read by a reduction and by a pointwise consumer, with a transcendental body: computed
/// once (softmax's `exp(x - max)` read by the sum and by the division).
#[test]
fn costly_value_read_by_a_reduction_and_a_pointwise_is_computed_once() {
    let mut g = Graph::new();
    let x = input(&mut g, "x", DType::Float64, &[4, 9]);
    let e = call(&mut g, m("exp"), vec![n(x)], vec![]);
    let s = call(
        &mut g,
        m("sum"),
        vec![n(e), Arg::Int(-1), Arg::Bool(true)],
        vec![],
    );
    let y = call(&mut g, f("operator.truediv"), vec![n(e), n(s)], vec![]);
    g.output(vec![n(y)]);
    let (c, outs) = check(&g, 31);
    assert_eq!(count(&c, "exp("), 1, "{}", c.source());
    let xv = values(36, 31);
    for r in 0..4 {
        let sum: f64 = (0..9).map(|j| xv[r * 9 + j].exp()).sum();
        for j in 0..9 {
            assert!((outs[0][r * 9 + j] - xv[r * 9 + j].exp() / sum).abs() < 1e-12);
        }
    }
}

/// erf by its series / continued fraction is not in std; a close-enough formula (Abramowitz and
/// Stegun 7.1.26 is too coarse for 1e-9), so integrate numerically instead.
fn libm_erf(x: f64) -> f64 {
    // Simpson's rule on 2/sqrt(pi) * exp(-t^2) over [0, x].
    let n = 2000;
    let h = x / n as f64;
    let f = |t: f64| (-t * t).exp();
    let mut s = f(0.0) + f(x);
    for i in 1..n {
        let t = i as f64 * h;
        s += if i % 2 == 1 { 4.0 } else { 2.0 } * f(t);
    }
    s * h / 3.0 * 2.0 / std::f64::consts::PI.sqrt()
}

/// A cheap value that is a graph output and is read by another op (a training forward's saved
/// pre-activation read by its activation): written once, where it is made, and the reader
/// takes it from there, in the same kernel, instead of computing it a second time.
#[test]
fn output_read_by_another_op_is_computed_once() {
    let mut g = Graph::new();
    let x = input(&mut g, "x", DType::Float64, &[8, 16]);
    let h = call(
        &mut g,
        f("operator.mul"),
        vec![n(x), Arg::Float(3.0)],
        vec![],
    );
    let y = call(&mut g, m("abs"), vec![n(h)], vec![]);
    g.output(vec![n(h), n(y)]);
    let (c, outs) = check(&g, 41);
    assert_eq!(c.num_kernels(), 1, "{}", c.source());
    // The constant 3.0, printed once: one multiplication.
    assert_eq!(count(&c, "0x1.8000000000000p1"), 1, "{}", c.source());
    let xv = values(128, 41);
    for (i, v) in xv.iter().enumerate() {
        assert_eq!(outs[0][i], v * 3.0);
        assert_eq!(outs[1][i], (v * 3.0).abs());
    }
}

/// A GEMM operand that is an `expand` then `reshape` of a lazy value (Llama's `repeat_kv` of
/// the rotated keys): the value is stored once, and the copy the reshape needs reads that
/// buffer instead of computing the value a second time (which left the first store unread).
#[test]
fn reshaped_expand_copies_from_the_stored_base() {
    let mut g = Graph::new();
    let x = input(&mut g, "x", DType::Float64, &[2, 3]);
    let w = input(&mut g, "w", DType::Float64, &[3, 5]);
    let s = call(&mut g, m("sin"), vec![n(x)], vec![]);
    let u = call(&mut g, m("unsqueeze"), vec![n(s), Arg::Int(1)], vec![]);
    let e = call(
        &mut g,
        m("expand"),
        vec![n(u), Arg::Int(2), Arg::Int(2), Arg::Int(3)],
        vec![],
    );
    let r = call(
        &mut g,
        m("reshape"),
        vec![n(e), Arg::Int(4), Arg::Int(3)],
        vec![],
    );
    let y = call(&mut g, f("torch.mm"), vec![n(r), n(w)], vec![]);
    g.output(vec![n(y)]);
    let (c, outs) = check(&g, 41);
    assert_eq!(c.num_fallbacks(), 0, "{:?}", c.fallback_reasons());
    assert_eq!(c.num_extern_calls(), 1);
    assert_eq!(count(&c, "sin("), 1, "{}", c.source());
    let (xv, wv) = (values(6, 41), values(15, 42));
    for row in 0..4 {
        let src = row / 2;
        for k in 0..5 {
            let want: f64 = (0..3).map(|j| xv[src * 3 + j].sin() * wv[j * 5 + k]).sum();
            assert!((outs[0][row * 5 + k] - want).abs() < 1e-9);
        }
    }
}
