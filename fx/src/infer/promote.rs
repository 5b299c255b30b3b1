//! Type promotion: which dtype an op computes in when its operands disagree.
//!
//! torch ranks operands in three tiers before promoting: tensors with at least one dimension,
//! zero-dimensional tensors, and Python numbers. A lower tier only changes the result when it is of
//! a higher *category* (bool < integer < floating < complex), and a Python number of a higher
//! category contributes the *default* dtype of its category (`int_tensor + 1.5` is float32 because
//! the default dtype is float32, not float64). This is why `uint8_tensor + 1000` stays uint8 and
//! `int32_tensor + zero_dim_int64_tensor` stays int32.

use super::InferError;
use crate::meta::DType;

/// The category of a Python number used as an operand.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScalarKind {
    Bool,
    Int,
    Float,
    Complex,
}

fn is_integral(d: DType) -> bool {
    matches!(
        d,
        DType::UInt8 | DType::Int8 | DType::Int16 | DType::Int32 | DType::Int64
    )
}

/// True for integer and bool dtypes: the ones true division and the float-only unary ops promote.
pub fn is_integral_or_bool(d: DType) -> bool {
    d == DType::Bool || is_integral(d)
}

/// Rank among floating types; float16 and bfloat16 tie (they promote to float32 together).
fn float_rank(d: DType) -> u8 {
    match d {
        DType::Float16 | DType::BFloat16 => 0,
        DType::Float32 => 1,
        _ => 2,
    }
}

/// The smallest dtype both operands convert to without losing their category.
pub fn promote_types(a: DType, b: DType) -> DType {
    use DType::*;
    if a == b {
        return a;
    }
    match (a, b) {
        (Bool, x) | (x, Bool) => x,
        (Complex128, _) | (_, Complex128) => Complex128,
        (Complex64, Float64) | (Float64, Complex64) => Complex128,
        (Complex64, _) | (_, Complex64) => Complex64,
        (Float16, BFloat16) | (BFloat16, Float16) => Float32,
        (x, y) if x.is_floating_point() && y.is_floating_point() => {
            if float_rank(x) >= float_rank(y) {
                x
            } else {
                y
            }
        }
        (x, _) if x.is_floating_point() => x,
        (_, y) if y.is_floating_point() => y,
        // Both integral. uint8 is the only unsigned type; with a signed type it needs one more bit.
        (UInt8, Int8) | (Int8, UInt8) => Int16,
        (UInt8, y) => y,
        (x, UInt8) => x,
        (x, y) => {
            if x.itemsize() >= y.itemsize() {
                x
            } else {
                y
            }
        }
    }
}

/// Whether a value of `from` may be written into a tensor of `to` (in-place ops and `out=`):
/// never narrowing across categories.
pub fn can_cast(from: DType, to: DType) -> bool {
    if from.is_complex() && !to.is_complex() {
        return false;
    }
    if from.is_floating_point() && (is_integral_or_bool(to)) {
        return false;
    }
    !(from != DType::Bool && to == DType::Bool)
}

/// The three tiers of one promotion, filled operand by operand.
#[derive(Clone, Copy, Debug, Default)]
pub struct Promotion {
    dim: Option<DType>,
    zero_dim: Option<DType>,
    wrapped: Option<DType>,
    default_float: Option<DType>,
}

fn merge(slot: &mut Option<DType>, d: DType) {
    *slot = Some(match *slot {
        None => d,
        Some(s) => promote_types(s, d),
    });
}

impl Promotion {
    pub fn new(default_float: DType) -> Promotion {
        Promotion {
            default_float: Some(default_float),
            ..Promotion::default()
        }
    }

    pub fn tensor(&mut self, dtype: DType, ndim: usize) {
        if ndim == 0 {
            merge(&mut self.zero_dim, dtype);
        } else {
            merge(&mut self.dim, dtype);
        }
    }

    pub fn scalar(&mut self, kind: ScalarKind) {
        let float = self.default_float.unwrap_or(DType::Float32);
        let d = match kind {
            ScalarKind::Bool => DType::Bool,
            ScalarKind::Int => DType::Int64,
            ScalarKind::Float => float,
            ScalarKind::Complex => {
                if float == DType::Float64 {
                    DType::Complex128
                } else {
                    DType::Complex64
                }
            }
        };
        merge(&mut self.wrapped, d);
    }

    /// The promoted dtype, or `None` when there were no operands.
    pub fn result(&self) -> Result<Option<DType>, InferError> {
        let low = combine(self.zero_dim, self.wrapped)?;
        combine(self.dim, low)
    }
}

/// A lower tier only wins when its category is higher; a complex lower tier keeps the higher
/// tier's floating precision.
fn combine(higher: Option<DType>, lower: Option<DType>) -> Result<Option<DType>, InferError> {
    let (h, l) = match (higher, lower) {
        (None, l) => return Ok(l),
        (h, None) => return Ok(h),
        (Some(h), Some(l)) => (h, l),
    };
    Ok(Some(if h.is_complex() {
        h
    } else if l.is_complex() {
        match h {
            DType::Float32 => DType::Complex64,
            DType::Float64 => DType::Complex128,
            // complex32 has no DType here; bfloat16 has no complex counterpart at all.
            DType::Float16 | DType::BFloat16 => return Err(InferError::Unsupported),
            _ => l,
        }
    } else if h.is_floating_point() {
        h
    } else if h == DType::Bool || l.is_floating_point() {
        promote_types(h, l)
    } else {
        h
    }))
}

/// The real counterpart of a complex dtype (what `abs`, `var` and `std` return for complex input).
pub fn to_real(d: DType) -> DType {
    match d {
        DType::Complex64 => DType::Float32,
        DType::Complex128 => DType::Float64,
        x => x,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use DType::*;

    #[test]
    fn lattice() {
        assert_eq!(promote_types(UInt8, Int8), Int16);
        assert_eq!(promote_types(UInt8, Int32), Int32);
        assert_eq!(promote_types(Float16, BFloat16), Float32);
        assert_eq!(promote_types(Int64, Float16), Float16);
        assert_eq!(promote_types(Complex64, Float64), Complex128);
        assert_eq!(promote_types(Bool, Int8), Int8);
    }

    #[test]
    fn tiers() {
        let mut p = Promotion::new(Float32);
        p.tensor(Int32, 2);
        p.scalar(ScalarKind::Float);
        assert_eq!(p.result().unwrap(), Some(Float32));

        let mut p = Promotion::new(Float32);
        p.tensor(UInt8, 1);
        p.scalar(ScalarKind::Int);
        assert_eq!(p.result().unwrap(), Some(UInt8));

        let mut p = Promotion::new(Float32);
        p.tensor(Int32, 1);
        p.tensor(Int64, 0);
        assert_eq!(p.result().unwrap(), Some(Int32));

        let mut p = Promotion::new(Float32);
        p.tensor(Float16, 1);
        p.tensor(Float64, 0);
        assert_eq!(p.result().unwrap(), Some(Float16));

        let mut p = Promotion::new(Float32);
        p.tensor(Bool, 1);
        p.tensor(Int8, 0);
        assert_eq!(p.result().unwrap(), Some(Int8));
    }

    #[test]
    fn casting() {
        assert!(can_cast(Int64, Float16));
        assert!(!can_cast(Float32, Int64));
        assert!(!can_cast(Int8, Bool));
        assert!(can_cast(Bool, Bool));
        assert!(!can_cast(Complex64, Float64));
    }
}
