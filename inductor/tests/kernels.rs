//! Kernels on extremal values, bit for bit against torch's semantics (sign of zero, NaN), and
//! the host-lock release around big kernels.

mod common;

use common::*;
use fx::{Arg, DType, Graph, Target};
use inductor::testing::{VecHost, VecTensor};
use inductor::{compile, ExternCall, Host, HostArg, HostValue, TensorDesc};

const EXTREMES: [f64; 8] = [
    -0.0,
    0.0,
    f64::NAN,
    f64::INFINITY,
    f64::NEG_INFINITY,
    -1.0,
    2.0,
    1e-40,
];

/// Same value, NaN equal to NaN, and the same sign of zero.
fn same_bits(a: f64, b: f64) -> bool {
    (a.is_nan() && b.is_nan()) || (a == b && a.is_sign_negative() == b.is_sign_negative())
}

fn run_both(g: &Graph, input: &[f64]) -> (Vec<Vec<f64>>, Vec<Vec<f64>>) {
    let c = compile(g, &options()).unwrap();
    assert_eq!(c.num_fallbacks(), 0, "{:?}", c.fallback_reasons());
    let mut host = VecHost::new();
    let x = host.tensor(DType::Float32, &[input.len() as i64], input);
    let got = c.run(&mut host, std::slice::from_ref(&x)).unwrap();
    let want = inductor::interp::run(c.ir(), &mut host, &[x]).unwrap();
    (
        got.iter().map(|t| t.to_f64()).collect(),
        want.iter().map(|t| t.to_f64()).collect(),
    )
}

#[test]
fn sign_relu_and_clamp_by_numbers_follow_torch_on_extremes() {
    let mut g = Graph::new();
    let a = input(&mut g, "a", DType::Float32, &[8]);
    let sign = call(&mut g, m("sign"), vec![n(a)], vec![]);
    let relu = call(&mut g, m("relu"), vec![n(a)], vec![]);
    let lo = call(
        &mut g,
        m("clamp"),
        vec![n(a)],
        vec![("min", Arg::Float(0.0))],
    );
    let hi = call(
        &mut g,
        m("clamp"),
        vec![n(a)],
        vec![("max", Arg::Float(-0.0))],
    );
    let nan = call(
        &mut g,
        m("clamp"),
        vec![n(a)],
        vec![("min", Arg::Float(f64::NAN))],
    );
    g.output(vec![n(sign), n(relu), n(lo), n(hi), n(nan)]);
    let (got, interp) = run_both(&g, &EXTREMES);
    // torch: sign(NaN) = 0, sign(-0.0) = +0.0; clamping by a number keeps x unless it is
    // strictly beyond the bound (so -0.0 stays at min=0.0 and NaN stays NaN); a NaN bound
    // leaves x as it is.
    let sign_want = [0.0, 0.0, 0.0, 1.0, -1.0, -1.0, 1.0, 0.0];
    let relu_want = [-0.0, 0.0, f64::NAN, f64::INFINITY, 0.0, 0.0, 2.0, 0.0];
    let hi_want = [
        -0.0,
        0.0,
        f64::NAN,
        -0.0,
        f64::NEG_INFINITY,
        -1.0,
        -0.0,
        -0.0,
    ];
    let f32_of = |v: f64| v as f32 as f64;
    let wants: [Vec<f64>; 5] = [
        sign_want.to_vec(),
        relu_want.iter().map(|&v| f32_of(v)).collect(),
        relu_want.iter().map(|&v| f32_of(v)).collect(),
        hi_want.to_vec(),
        EXTREMES.iter().map(|&v| f32_of(v)).collect(),
    ];
    for (k, want) in wants.iter().enumerate() {
        for i in 0..8 {
            // 1e-40 is a float32 denormal: relu keeps it, sign is 1.
            let w = if k == 0 && i == 7 { 1.0 } else { want[i] };
            let w = if (k == 1 || k == 2) && i == 7 {
                f32_of(1e-40)
            } else {
                w
            };
            assert!(
                same_bits(got[k][i], w),
                "output {k} [{i}]: {} != {w}",
                got[k][i]
            );
            assert!(
                same_bits(interp[k][i], w),
                "interp {k} [{i}]: {} != {w}",
                interp[k][i]
            );
        }
    }
}

/// A [`VecHost`] that counts the kernels run with the lock released.
struct CountingHost {
    inner: VecHost,
    unlocked: usize,
}

impl Host for CountingHost {
    type Tensor = VecTensor;
    type Error = <VecHost as Host>::Error;

    fn empty_strided(
        &mut self,
        dtype: DType,
        sizes: &[i64],
        strides: &[i64],
    ) -> Result<VecTensor, Self::Error> {
        self.inner.empty_strided(dtype, sizes, strides)
    }
    fn as_strided(
        &mut self,
        base: &VecTensor,
        sizes: &[i64],
        strides: &[i64],
        offset: i64,
    ) -> Result<VecTensor, Self::Error> {
        self.inner.as_strided(base, sizes, strides, offset)
    }
    fn describe(&self, t: &VecTensor) -> TensorDesc {
        self.inner.describe(t)
    }
    fn data_ptr(&mut self, t: &VecTensor) -> *mut u8 {
        self.inner.data_ptr(t)
    }
    fn copy_into(&mut self, dst: &VecTensor, src: &VecTensor) -> Result<(), Self::Error> {
        self.inner.copy_into(dst, src)
    }
    fn run_extern(
        &mut self,
        call: &ExternCall,
        inputs: &[VecTensor],
        out: &VecTensor,
    ) -> Result<(), Self::Error> {
        self.inner.run_extern(call, inputs, out)
    }
    fn run_fallback(
        &mut self,
        target: &Target,
        args: &[HostArg<VecTensor>],
        kwargs: &[(String, HostArg<VecTensor>)],
    ) -> Result<HostValue<VecTensor>, Self::Error> {
        self.inner.run_fallback(target, args, kwargs)
    }
    fn run_unlocked(&mut self, work: &mut (dyn FnMut() + Send)) {
        self.unlocked += 1;
        work()
    }
}

#[test]
fn big_kernels_run_with_the_host_lock_released() {
    for (len, expect_unlocked) in [(1i64 << 16, true), (64, false)] {
        let mut g = Graph::new();
        let a = input(&mut g, "a", DType::Float32, &[len]);
        let s = call(&mut g, m("sin"), vec![n(a)], vec![]);
        g.output(vec![n(s)]);
        let c = compile(&g, &options()).unwrap();
        let mut host = CountingHost {
            inner: VecHost::new(),
            unlocked: 0,
        };
        let vals = values(len as usize, 3);
        let x = host.inner.tensor(DType::Float32, &[len], &vals);
        let out = c.run(&mut host, &[x]).unwrap();
        assert_eq!(host.unlocked > 0, expect_unlocked, "len {len}");
        let o = out[0].to_f64();
        assert!((o[1] - (vals[1] as f32).sin() as f64).abs() < 1e-6);
        // The parallel kernel started OpenMP's worker threads from the kernel library, the only
        // user of libgomp in this test binary (torch keeps it loaded in the real process):
        // unloading the library would unmap code those idle threads still wait in.
        std::mem::forget(c);
    }
}
