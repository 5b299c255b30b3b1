//! Matmul-class ops and convolutions: the GEMM runs in the host (an extern call into a
//! preallocated buffer); bias adds, scaling and whatever pointwise work follows stay lazy, so
//! they fuse into the next kernel as its prologue (Inductor's extern + epilogue split).

use fx::{Arg, DType};

use super::args::{self, fallback, Bound, LResult, Reject};
use super::elementwise::{pointwise, Operand};
use super::value::contiguous_strides_sym;
use super::value::{Kind, TensorVal};
use super::Lowerer;
use crate::ir::{contiguous_strides, BinOp, BufKind, ExternCall, IrNode, Scalar};
use crate::size::{consts, expect_consts, Size};

fn extern_call(
    l: &mut Lowerer,
    call: ExternCall,
    inputs: &[TensorVal],
    sizes: Vec<Size>,
    dtype: DType,
) -> TensorVal {
    // `torch.matmul(out=)` may copy through a dense temporary: its outputs stay dense.
    if matches!(call, ExternCall::Matmul) {
        let strides = contiguous_strides_sym(&sizes);
        return extern_call_with(l, call, inputs, sizes, strides, dtype);
    }
    let shape = sizes.clone();
    l.in_fresh_buffer(&shape, dtype, None, |l, strides| {
        extern_call_with(l, call, inputs, sizes, strides, dtype)
    })
}

pub(super) fn extern_call_with(
    l: &mut Lowerer,
    call: ExternCall,
    inputs: &[TensorVal],
    sizes: Vec<Size>,
    strides: Vec<Size>,
    dtype: DType,
) -> TensorVal {
    let views = inputs.iter().map(|t| l.view_of(t)).collect();
    let out =
        l.ir.add_buffer(dtype, sizes.clone(), strides.clone(), BufKind::Computed);
    l.ir.nodes.push(IrNode::Extern {
        out,
        call,
        inputs: views,
    });
    TensorVal::buffer(out, dtype, sizes, strides)
}

/// `a @ b` for 2-d operands.
fn mm(l: &mut Lowerer, a: &TensorVal, b: &TensorVal) -> LResult<TensorVal> {
    if a.ndim() != 2 || b.ndim() != 2 || a.sizes[1] != b.sizes[0] {
        return fallback("mm shapes");
    }
    if let Some(r) = padded_mm(l, a, b) {
        return Ok(r);
    }
    Ok(extern_call(
        l,
        ExternCall::Mm,
        &[a.clone(), b.clone()],
        vec![a.sizes[0], b.sizes[1]],
        a.dtype,
    ))
}

/// CUDA: a GEMM whose reduced length `k` or output length `n` is large and not a multiple of
/// 16 bytes runs on cuBLAS's `align1` kernels, several times slower than the aligned ones
/// (GPT-2's LM head and its gradient: 50257 logits a row, 5.5 ms against ~1 ms per product on
/// an H100). As Inductor's `pad_mm`, the operands are padded with zeros to aligned lengths
/// (zeros add nothing to any dot product) and the result is the first `n` columns of the
/// padded product: a strided view, copied to eager's layout only where it is a graph output.
/// The padded operands are lazy, so padding an operand computed in the graph fuses into the
/// kernel that writes it.
///
/// A symbolic row count `m` (a dynamic graph's `B * T` rows of an LM head) is taken as long
/// enough: the decision then depends on `k` and `n` alone, the same at every size (zeros add
/// nothing, so padding a short product costs a copy of the padded operand, never a value).
fn padded_mm(l: &mut Lowerer, a: &TensorVal, b: &TensorVal) -> Option<TensorVal> {
    let m = a.sizes[0];
    let (k, n) = (a.sizes[1].as_const()?, b.sizes[1].as_const()?);
    let min_dim = m.as_const().map_or(k.min(n), |m| m.min(k).min(n));
    let kp = l.target.padded_gemm_len(k, a.dtype, min_dim);
    // A product a graph output views keeps eager's width: its view would have other strides
    // than eager's and no longer view the output copied out of the padded buffer. A product
    // that is itself an output is padded and copied out, or handed out padded where the policy
    // says so (`CudaPolicy::padded_gemm_outputs`, torch.compile's layout): GPT-2's bf16 logits
    // (`[8192, 50257]`, H100, session 26) took 5.8 ms unpadded (an align-1 kernel) against
    // 0.92 ms padded plus a 0.92 ms copy out.
    let viewed = l.current.is_some_and(|c| l.viewed_out.contains(&c));
    let np = match viewed {
        true => None,
        false => l.target.padded_gemm_len(n, b.dtype, min_dim),
    };
    if kp.is_none() && np.is_none() {
        return None;
    }
    let pad = |l: &Lowerer, t: &TensorVal, d: usize, len: i64| {
        zero_padded_view(l, t, d, len).unwrap_or_else(|| zero_pad_in_layout(t, d, len))
    };
    let mut a2 = a.clone();
    let mut b2 = b.clone();
    if let Some(kp) = kp {
        a2 = pad(l, &a2, 1, kp);
        b2 = pad(l, &b2, 0, kp);
    }
    if let Some(np) = np {
        b2 = pad(l, &b2, 1, np);
    }
    let cols = np.unwrap_or(n);
    let views = [l.view_of(&a2), l.view_of(&b2)];
    let strides = contiguous_strides_sym(&[m, Size::Const(cols)]);
    let out = l.ir.add_buffer(
        a.dtype,
        vec![m, Size::Const(cols)],
        strides.clone(),
        BufKind::Computed,
    );
    l.ir.nodes.push(IrNode::Extern {
        out,
        call: ExternCall::Mm,
        inputs: views.to_vec(),
    });
    let full = TensorVal::buffer(out, a.dtype, vec![m, Size::Const(cols)], strides);
    if np.is_none() {
        return Some(full);
    }
    l.padded.insert(out);
    l.padded_products.insert(out);
    // `b`'s padded columns are zeros, so are the product's.
    l.zero_padded.insert(out, (n, np?));
    Some(full.slice(1, Size::Const(0), Size::Const(n), 1))
}

/// 2-d `t` lengthened along `d` to `len` with zeros, as a view of the buffer it already is:
/// a [`Lowerer::zero_padded`] buffer of padded width `len`, whose rows `t`'s lines along `d`
/// are (unit stride along `d`, `t`'s length the buffer's logical one, the other stride and
/// the offset whole rows of the buffer). `None` otherwise.
fn zero_padded_view(l: &Lowerer, t: &TensorVal, d: usize, len: i64) -> Option<TensorVal> {
    if t.ndim() != 2 {
        return None;
    }
    let v = match t.as_view() {
        Some(v) => v,
        None => l.resolve(t)?.as_view()?,
    };
    let &(n, w) = l.zero_padded.get(&v.buf)?;
    let o = 1 - d;
    let whole_rows = |s: &Size| s.as_const().is_some_and(|s| s % w == 0);
    if w != len
        || t.sizes[d].as_const() != Some(n)
        || v.strides[d].as_const() != Some(1)
        || !whole_rows(&v.strides[o])
        || !whole_rows(&v.offset)
    {
        return None;
    }
    let mut sizes = t.sizes.clone();
    sizes[d] = Size::Const(w);
    Some(TensorVal {
        dtype: t.dtype,
        sizes,
        kind: Kind::Strided {
            buf: v.buf,
            strides: v.strides,
            offset: v.offset,
        },
    })
}

/// [`zero_pad`] of a GEMM operand, written in the operand's own layout: a 2-d operand laid out
/// column-major (a transposed weight, `x @ w.t()`, or a lazy cast of one) is padded as its
/// transpose and viewed back, so the padded buffer is written row by row in the order its
/// source is read, and cuBLAS gets a transposed operand whose leading dimension is the other,
/// unpadded length. Padded row-major, GPT-2's tied LM-head weight (`[50257, 768]` bf16) was
/// written transposed, one store 100 kB from the next per thread: 288 us on an H200 against
/// torch.compile's 35 us for the same padded operand (session 27).
fn zero_pad_in_layout(t: &TensorVal, d: usize, len: i64) -> TensorVal {
    if t.ndim() == 2 && column_major(t) {
        return zero_pad(&t.permute(&[1, 0]), 1 - d, len).permute(&[1, 0]);
    }
    zero_pad(t, d, len)
}

/// Whether 2-d `t` steps by one element down its columns: a strided view with unit row stride,
/// or a lazy view whose strides over its contiguous base are so (a transpose of a computed
/// value).
fn column_major(t: &TensorVal) -> bool {
    let unit_rows = |st: &[Size]| st[0] == Size::Const(1) && st[1] != Size::Const(1);
    if let Some(v) = t.as_view() {
        return unit_rows(&v.strides);
    }
    t.lazy_view().is_some_and(|lv| {
        let base = contiguous_strides_sym(&lv.base.sizes);
        (lv.strided)(&base, Size::Const(0)).is_some_and(|(st, _)| st.len() == 2 && unit_rows(&st))
    })
}

/// `t` with dim `d` lengthened to `len`, the new positions zero.
pub(super) fn zero_pad(t: &TensorVal, d: usize, len: i64) -> TensorVal {
    let src = t.clone();
    let old = t.sizes[d];
    let mut sizes = t.sizes.clone();
    sizes[d] = Size::Const(len);
    let dtype = t.dtype;
    TensorVal::lazy(
        dtype,
        sizes,
        t.ops() + 2,
        std::rc::Rc::new(move |b, idx| {
            let mut j = idx.to_vec();
            j[d] = idx[d].clamp_to(0, old - 1, b.ranges());
            let v = src.load(b, &j);
            let pos = b.index_value(idx[d].clone());
            let end = b.constant(Scalar::I(old.expect_const("a padded length")), DType::Int64);
            let inside = b.binary(BinOp::Lt, pos, end);
            let zero = b.constant(Scalar::F(0.0), dtype);
            b.where_(inside, v, zero)
        }),
    )
}

fn check_dtypes(a: &TensorVal, b: &TensorVal) -> LResult<()> {
    if a.dtype != b.dtype || !a.dtype.is_floating_point() {
        return fallback("matmul of mixed or non-float dtypes");
    }
    Ok(())
}

/// `torch.matmul` semantics: mm, bmm, batched-by-2d folded into one mm, vector cases by
/// unsqueeze; other broadcasts go to the host's matmul whole.
pub fn matmul(l: &mut Lowerer, a: &Arg, b: &Arg) -> LResult<TensorVal> {
    let (a, b) = (l.tensor(a)?, l.tensor(b)?);
    check_dtypes(&a, &b)?;
    match (a.ndim(), b.ndim()) {
        (0, _) | (_, 0) => fallback("matmul of a 0-d tensor"),
        (2, 2) => mm(l, &a, &b),
        (1, 1) => {
            let r = mm(l, &a.unsqueeze(0), &b.unsqueeze(1))?;
            Ok(r.reshape(&[]))
        }
        (1, 2) => Ok(mm(l, &a.unsqueeze(0), &b)?.squeeze_dims(&[0])),
        (2, 1) => Ok(mm(l, &a, &b.unsqueeze(1))?.squeeze_dims(&[1])),
        (n, 2) if n >= 3 => {
            let k = a.sizes[n - 1];
            let rows: Size = a.sizes[..n - 1].iter().product();
            let r = mm(l, &a.reshape(&[rows, k]), &b)?;
            let mut sizes = a.sizes[..n - 1].to_vec();
            sizes.push(b.sizes[1]);
            Ok(r.reshape(&sizes))
        }
        (3, 3) if a.sizes[0] == b.sizes[0] && a.sizes[2] == b.sizes[1] => {
            let sizes = vec![a.sizes[0], a.sizes[1], b.sizes[2]];
            Ok(extern_call(
                l,
                ExternCall::Bmm,
                &[a.clone(), b],
                sizes,
                a.dtype,
            ))
        }
        _ => {
            let sizes = matmul_sizes(&a.sizes, &b.sizes)?;
            Ok(extern_call(
                l,
                ExternCall::Matmul,
                &[a.clone(), b],
                sizes,
                a.dtype,
            ))
        }
    }
}

fn matmul_sizes(a: &[Size], b: &[Size]) -> LResult<Vec<Size>> {
    let (na, nb) = (a.len(), b.len());
    let one = Size::Const(1);
    let (a2, b2) = (
        if na == 1 { vec![one, a[0]] } else { a.to_vec() },
        if nb == 1 { vec![b[0], one] } else { b.to_vec() },
    );
    let (m, ka) = (a2[a2.len() - 2], a2[a2.len() - 1]);
    let (kb, n) = (b2[b2.len() - 2], b2[b2.len() - 1]);
    if ka != kb {
        return fallback("matmul inner sizes differ");
    }
    let batch = super::elementwise::broadcast(&[&a2[..a2.len() - 2], &b2[..b2.len() - 2]])?;
    let mut out = batch;
    if na > 1 {
        out.push(m);
    }
    if nb > 1 {
        out.push(n);
    }
    Ok(out)
}

/// `beta * input + alpha * (mat1 @ mat2)`, the scaling and add fused downstream.
pub fn addmm(
    l: &mut Lowerer,
    input: &Arg,
    m1: &Arg,
    m2: &Arg,
    beta: f64,
    alpha: f64,
) -> LResult<TensorVal> {
    let bias = l.tensor(input)?;
    let (a, b) = (l.tensor(m1)?, l.tensor(m2)?);
    check_dtypes(&a, &b)?;
    let r = mm(l, &a, &b)?;
    if bias.dtype != r.dtype {
        return fallback("addmm bias dtype");
    }
    let d = r.dtype;
    pointwise(&[Operand::T(r), Operand::T(bias)], d, d, move |b, v| {
        let mut p = v[0];
        if alpha != 1.0 {
            let a = b.constant(Scalar::F(alpha), d);
            p = b.binary(BinOp::Mul, p, a);
        }
        if beta == 0.0 {
            // torch ignores the input entirely (NaNs included) when beta is 0.
            return p;
        }
        let mut q = v[1];
        if beta != 1.0 {
            let c = b.constant(Scalar::F(beta), d);
            q = b.binary(BinOp::Mul, q, c);
        }
        b.binary(BinOp::Add, p, q)
    })
}

/// `input @ weight.T + bias`, input of any rank >= 1 folded into rows for one GEMM.
pub fn linear(l: &mut Lowerer, x: &Arg, w: &Arg, bias: Option<&Arg>) -> LResult<TensorVal> {
    let (x, w) = (l.tensor(x)?, l.tensor(w)?);
    check_dtypes(&x, &w)?;
    if w.ndim() != 2 || x.ndim() == 0 || x.sizes[x.ndim() - 1] != w.sizes[1] {
        return fallback("linear shapes");
    }
    let k = w.sizes[1];
    let n = w.sizes[0];
    let lead = &x.sizes[..x.ndim() - 1];
    let rows: Size = lead.iter().product();
    let r = mm(l, &x.reshape(&[rows, k]), &w.permute(&[1, 0]))?;
    let mut sizes = lead.to_vec();
    sizes.push(n);
    let r = r.reshape(&sizes);
    match bias {
        None => Ok(r),
        Some(b) => {
            let b = l.tensor(b)?;
            let d = r.dtype;
            if b.dtype != d {
                return fallback("linear bias dtype");
            }
            pointwise(&[Operand::T(r), Operand::T(b)], d, d, |b, v| {
                b.binary(BinOp::Add, v[0], v[1])
            })
        }
    }
}

fn int_tuple(b: &Bound, name: &str, n: usize, default: i64) -> LResult<Vec<i64>> {
    match b.get(name) {
        None => Ok(vec![default; n]),
        Some(Arg::Int(v)) => Ok(vec![*v; n]),
        Some(a) => {
            let v =
                args::int_list(a).ok_or_else(|| Reject::Fallback(format!("{name} is not ints")))?;
            if v.len() == 1 {
                Ok(vec![v[0]; n])
            } else if v.len() == n {
                Ok(v)
            } else {
                fallback(format!("{name} has the wrong length"))
            }
        }
    }
}

/// `F.conv{1,2,3}d` as one extern convolution (bias included).
pub fn conv(l: &mut Lowerer, b: &Bound, name: &str) -> LResult<TensorVal> {
    let n = match name {
        "conv1d" => 1,
        "conv2d" => 2,
        _ => 3,
    };
    if matches!(b.get("padding"), Some(Arg::Str(_))) {
        return fallback("string padding");
    }
    let x = l.tensor(b.req("input")?)?;
    let w = l.tensor(b.req("weight")?)?;
    check_dtypes(&x, &w)?;
    if x.ndim() != n + 2 || w.ndim() != n + 2 {
        return fallback("unbatched convolution");
    }
    // The input's and the filter's sizes may be symbolic (`dynamic=True` makes a global
    // weight's dims dynamic); the output's are then floor divisions of them, as fx's
    // convolution rule writes them. The extern call reads the filter from its buffer.
    let ws = w.sizes.clone();
    let stride = int_tuple(b, "stride", n, 1)?;
    let padding = int_tuple(b, "padding", n, 0)?;
    let dilation = int_tuple(b, "dilation", n, 1)?;
    let groups = b.int_or("groups", 1)?;
    let mut sizes = vec![x.sizes[0], ws[0]];
    for i in 0..n {
        let span = (ws[i + 2] - 1) * dilation[i];
        let o = (x.sizes[i + 2] - span + (2 * padding[i] - 1)).floordiv(Size::Const(stride[i])) + 1;
        if o.as_const().is_some_and(|o| o <= 0) {
            return fallback("empty convolution output");
        }
        sizes.push(o);
    }
    // In a channels-last graph, convolutions that take channels-last inputs on the target get
    // them (on the CPU those torch runs on oneDNN; the others contiguous ones, what the native
    // kernel works on without copying).
    // A channels-last graph decides per convolution from concrete sizes.
    let xs = if n == 2 && l.channels_last {
        x.csizes()
    } else {
        Vec::new()
    };
    let channels_last = n == 2
        && l.channels_last
        && l.target
            .conv2d_channels_last(x.dtype, &xs, &w.csizes(), groups);
    let x = if n == 2 && l.channels_last {
        let want = if channels_last {
            super::channels_last_strides(&xs)
        } else {
            contiguous_strides(&xs)
        };
        match x.as_view() {
            Some(v) if same_layout(&xs, &expect_consts(&v.strides, "a layout check"), &want) => x,
            _ => l.realize_with(&x, consts(&want)),
        }
    } else {
        x
    };
    let mut inputs = vec![x.clone(), w];
    if let Some(bias) = b.get("bias") {
        inputs.push(l.tensor(bias)?);
    }
    let call = ExternCall::Convolution {
        stride,
        padding,
        dilation,
        transposed: false,
        output_padding: vec![0; n],
        groups,
        channels_last,
    };
    if channels_last {
        // torch's convolution of a channels-last input returns a channels-last result.
        let sizes = expect_consts(&sizes, "a channels-last convolution");
        let strides = super::channels_last_strides(&sizes);
        return Ok(extern_call_with(
            l,
            call,
            &inputs,
            consts(&sizes),
            consts(&strides),
            x.dtype,
        ));
    }
    Ok(extern_call(l, call, &inputs, sizes, x.dtype))
}

/// Strides equal where they matter (dims of size 1 never affect addressing).
fn same_layout(sizes: &[i64], a: &[i64], b: &[i64]) -> bool {
    sizes
        .iter()
        .zip(a.iter().zip(b))
        .all(|(s, (x, y))| *s <= 1 || x == y)
}
