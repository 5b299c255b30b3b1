//! A pure-Rust [`Host`] for tests: tensors are strided views of 8-byte-aligned `Vec`s, matmuls
//! are naive loops, and a couple of fallback ops exist so fallback paths can be exercised
//! without Python.

use std::cell::RefCell;
use std::rc::Rc;

use fx::{Arg, DType, Target};

use crate::host::{ExternCall, Host, HostArg, HostValue, TensorDesc};
use crate::interp::{cast, read, write, V};
use crate::ir::contiguous_strides;

#[derive(Clone, Debug)]
pub struct VecTensor {
    storage: Rc<RefCell<Vec<u64>>>,
    /// In elements.
    pub offset: i64,
    pub dtype: DType,
    pub sizes: Vec<i64>,
    pub strides: Vec<i64>,
}

#[derive(Debug, thiserror::Error)]
#[error("test host: {0}")]
pub struct VecHostError(pub String);

/// The test host. `allocations` counts `empty_strided` calls, `views` the views and aliases
/// made (`as_strided`, `alias`).
#[derive(Default)]
pub struct VecHost {
    pub allocations: usize,
    pub views: usize,
    pub fallback_calls: Vec<String>,
}

impl VecTensor {
    fn base(&self) -> *mut u8 {
        let p = self.storage.borrow_mut().as_mut_ptr() as *mut u8;
        // SAFETY: offsets stay inside the storage by construction.
        unsafe { p.offset((self.offset * self.dtype.itemsize() as i64) as isize) }
    }

    pub fn numel(&self) -> i64 {
        self.sizes.iter().product()
    }

    fn linear(&self, idx: &[i64]) -> i64 {
        idx.iter().zip(&self.strides).map(|(i, s)| i * s).sum()
    }

    pub fn get(&self, idx: &[i64]) -> V {
        // SAFETY: idx is within sizes.
        unsafe { read(self.base(), self.linear(idx), self.dtype) }
    }

    pub fn set(&self, idx: &[i64], v: V) {
        // SAFETY: idx is within sizes.
        unsafe { write(self.base(), self.linear(idx), self.dtype, v) }
    }

    /// Elements in row-major logical order, as f64.
    pub fn to_f64(&self) -> Vec<f64> {
        let mut out = Vec::new();
        crate::interp::for_each_point(&self.sizes, |p| {
            out.push(match cast(self.get(p), DType::Float64) {
                V::F64(x) => x,
                _ => unreachable!(),
            })
        });
        out
    }

    /// Whether two tensors share storage.
    pub fn same_storage(&self, other: &VecTensor) -> bool {
        Rc::ptr_eq(&self.storage, &other.storage)
    }
}

impl VecHost {
    pub fn new() -> VecHost {
        VecHost::default()
    }

    /// A tensor with the given layout, filled from `values` in row-major logical order.
    pub fn tensor_strided(
        &mut self,
        dtype: DType,
        sizes: &[i64],
        strides: &[i64],
        values: &[f64],
    ) -> VecTensor {
        let t = self.empty_strided(dtype, sizes, strides).unwrap();
        let mut i = 0;
        crate::interp::for_each_point(sizes, |p| {
            t.set(p, V::F64(values[i]));
            i += 1;
        });
        t
    }

    pub fn tensor(&mut self, dtype: DType, sizes: &[i64], values: &[f64]) -> VecTensor {
        self.tensor_strided(dtype, sizes, &contiguous_strides(sizes), values)
    }
}

fn storage_numel(sizes: &[i64], strides: &[i64]) -> i64 {
    if sizes.contains(&0) {
        return 0;
    }
    1 + sizes
        .iter()
        .zip(strides)
        .map(|(s, st)| (s - 1) * st.abs())
        .sum::<i64>()
}

fn err<T>(m: impl Into<String>) -> Result<T, VecHostError> {
    Err(VecHostError(m.into()))
}

impl Host for VecHost {
    type Tensor = VecTensor;
    type Error = VecHostError;

    fn empty_strided(
        &mut self,
        dtype: DType,
        sizes: &[i64],
        strides: &[i64],
    ) -> Result<VecTensor, VecHostError> {
        self.allocations += 1;
        let bytes = storage_numel(sizes, strides) as usize * dtype.itemsize();
        // Poison fresh memory so reads of unwritten elements show up as NaN/garbage in tests.
        let words = bytes.div_ceil(8).max(1);
        Ok(VecTensor {
            storage: Rc::new(RefCell::new(vec![0x7ff8_dead_7fc0_beefu64; words])),
            offset: 0,
            dtype,
            sizes: sizes.to_vec(),
            strides: strides.to_vec(),
        })
    }

    fn as_strided(
        &mut self,
        base: &VecTensor,
        sizes: &[i64],
        strides: &[i64],
        offset: i64,
    ) -> Result<VecTensor, VecHostError> {
        self.views += 1;
        Ok(VecTensor {
            storage: base.storage.clone(),
            offset: base.offset + offset,
            dtype: base.dtype,
            sizes: sizes.to_vec(),
            strides: strides.to_vec(),
        })
    }

    /// The storage and where in it the tensor starts (handles are values here: two handles of
    /// one storage at one offset are one tensor as far as reuse is concerned).
    fn identity(&self, t: &VecTensor) -> Option<usize> {
        Some((Rc::as_ptr(&t.storage) as usize).wrapping_add(t.offset as usize))
    }

    fn describe(&self, t: &VecTensor) -> TensorDesc {
        TensorDesc {
            dtype: t.dtype,
            sizes: t.sizes.clone(),
            strides: t.strides.clone(),
        }
    }

    fn data_ptr(&mut self, t: &VecTensor) -> *mut u8 {
        t.base()
    }

    fn copy_into(&mut self, dst: &VecTensor, src: &VecTensor) -> Result<(), VecHostError> {
        if dst.sizes != src.sizes {
            return err("copy_into size mismatch");
        }
        crate::interp::for_each_point(&dst.sizes, |p| dst.set(p, src.get(p)));
        Ok(())
    }

    fn run_extern(
        &mut self,
        call: &ExternCall,
        inputs: &[VecTensor],
        out: &VecTensor,
    ) -> Result<(), VecHostError> {
        match call {
            ExternCall::Mm | ExternCall::Bmm | ExternCall::Matmul => {
                matmul(&inputs[0], &inputs[1], out)
            }
            ExternCall::Convolution { .. } => {
                err("convolution is not implemented by the test host")
            }
            ExternCall::Sdpa { .. } => err("attention is not implemented by the test host"),
        }
    }

    fn run_fallback(
        &mut self,
        target: &Target,
        args: &[HostArg<VecTensor>],
        _kwargs: &[(String, HostArg<VecTensor>)],
    ) -> Result<HostValue<VecTensor>, VecHostError> {
        self.fallback_calls.push(target.name().to_string());
        match (target.name(), args) {
            // cumsum / cumprod over the last dim, enough to exercise fallbacks (the inductor
            // lowers short cumsums, so tests of the fallback path call cumprod).
            (
                name @ ("torch.cumsum" | "torch.cumprod"),
                [HostArg::Tensor(x), HostArg::Const(Arg::Int(-1))],
            ) => {
                let prod = name == "torch.cumprod";
                let out = self.empty_strided(x.dtype, &x.sizes, &contiguous_strides(&x.sizes))?;
                let n = *x.sizes.last().unwrap_or(&1);
                let rows: Vec<i64> = x.sizes[..x.sizes.len().saturating_sub(1)].to_vec();
                crate::interp::for_each_point(&rows, |r| {
                    let mut acc = if prod { 1.0 } else { 0.0 };
                    for j in 0..n {
                        let mut p = r.to_vec();
                        p.push(j);
                        let v = match cast(x.get(&p), DType::Float64) {
                            V::F64(v) => v,
                            _ => 0.0,
                        };
                        acc = if prod { acc * v } else { acc + v };
                        out.set(&p, V::F64(acc));
                    }
                });
                Ok(HostValue::Tensor(out))
            }
            (name, _) => err(format!("no fallback for {name}")),
        }
    }
}

/// torch.matmul semantics on strided tensors (1-d operands promoted, batch dims broadcast).
fn matmul(a: &VecTensor, b: &VecTensor, out: &VecTensor) -> Result<(), VecHostError> {
    let (na, nb) = (a.sizes.len(), b.sizes.len());
    let k = a.sizes[na - 1];
    if b.sizes[if nb == 1 { 0 } else { nb - 2 }] != k {
        return err("matmul inner sizes differ");
    }
    let no = out.sizes.len();
    crate::interp::for_each_point(&out.sizes, |p| {
        // Split the output point into batch, i, j.
        let (i, j, batch_end) = match (na, nb) {
            (1, 1) => (0, 0, 0),
            (1, _) => (0, p[no - 1], no - 1),
            (_, 1) => (p[no - 1], 0, no - 1),
            _ => (p[no - 2], p[no - 1], no - 2),
        };
        let batch = &p[..batch_end];
        let mut acc = 0.0f64;
        for kk in 0..k {
            let ai: Vec<i64> = if na == 1 {
                vec![kk]
            } else {
                let mut v = bcast(batch, &a.sizes[..na - 2]);
                v.extend([i, kk]);
                v
            };
            let bi: Vec<i64> = if nb == 1 {
                vec![kk]
            } else {
                let mut v = bcast(batch, &b.sizes[..nb - 2]);
                v.extend([kk, j]);
                v
            };
            let x = match cast(a.get(&ai), DType::Float64) {
                V::F64(v) => v,
                _ => 0.0,
            };
            let y = match cast(b.get(&bi), DType::Float64) {
                V::F64(v) => v,
                _ => 0.0,
            };
            acc += x * y;
        }
        out.set(p, V::F64(acc));
    });
    Ok(())
}

/// The operand's batch index for a broadcast batch point.
fn bcast(batch: &[i64], sizes: &[i64]) -> Vec<i64> {
    let lead = batch.len() - sizes.len();
    sizes
        .iter()
        .enumerate()
        .map(|(k, &s)| if s == 1 { 0 } else { batch[lead + k] })
        .collect()
}
