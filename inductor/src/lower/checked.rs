//! Python numbers that torch converts to a tensor's dtype with an overflow check.
//!
//! Ops that store a Python number in the tensor's dtype (`where`'s and `masked_fill`'s value,
//! `clamp`'s bounds, `full`'s fill, `pow`'s number, `add`'s `alpha`) convert it with
//! `c10::checked_convert`, which raises `RuntimeError: value cannot be converted to type int8_t
//! without overflow` for `torch.where(c, int8_x, 300)` or `half_x.clamp(max=1e5)`. A kernel
//! would wrap or round the number silently (300 became 44), so such an op is not lowered: it runs
//! through torch, which raises as eager does (or computes eager's value where eager's rule for
//! that op is looser than this one). Arithmetic (`x + 300`, `x < 300`) converts without a check
//! in eager too, and stays lowered.

use fx::DType;

use crate::ir::Scalar;

/// c10's `overflows<To, From>`: an integer target takes its range (an unsigned one also the
/// negated range, which wraps), a float target any value within its largest finite magnitude
/// and the infinities and NaN; bool takes anything.
pub fn number_converts(s: Scalar, d: DType) -> bool {
    let (lo, hi): (i64, i64) = match d {
        DType::Bool | DType::Float64 | DType::Complex128 => return true,
        DType::UInt8 => (-255, 255),
        DType::Int8 => (i8::MIN.into(), i8::MAX.into()),
        DType::Int16 => (i16::MIN.into(), i16::MAX.into()),
        DType::Int32 => (i32::MIN.into(), i32::MAX.into()),
        DType::Int64 => (i64::MIN, i64::MAX),
        DType::Float16 | DType::BFloat16 | DType::Float32 | DType::Complex64 => {
            let max = match d {
                DType::Float16 => 65504.0,
                DType::BFloat16 => 3.389_531_389_251_535_5e38,
                _ => f32::MAX as f64,
            };
            let v = s.as_f64();
            return !v.is_finite() || v.abs() <= max;
        }
    };
    match s {
        Scalar::B(_) => true,
        Scalar::I(i) => (lo..=hi).contains(&i),
        // From a float, an integer target's lowest value is its own (0 for uint8), and NaN and
        // the infinities never convert.
        Scalar::F(f) => {
            let lo = if d == DType::UInt8 { 0 } else { lo };
            f.is_finite() && f >= lo as f64 && f <= hi as f64
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn c10_overflow_rules() {
        assert!(number_converts(Scalar::I(127), DType::Int8));
        assert!(!number_converts(Scalar::I(300), DType::Int8));
        assert!(!number_converts(Scalar::I(-129), DType::Int8));
        assert!(number_converts(Scalar::I(-255), DType::UInt8));
        assert!(!number_converts(Scalar::I(-256), DType::UInt8));
        assert!(!number_converts(Scalar::F(-1.0), DType::UInt8));
        assert!(number_converts(Scalar::F(2.5), DType::Int8));
        assert!(!number_converts(Scalar::F(f64::NAN), DType::Int32));
        assert!(!number_converts(Scalar::I(1 << 31), DType::Int32));
        assert!(number_converts(Scalar::F(65504.0), DType::Float16));
        assert!(!number_converts(Scalar::F(65520.0), DType::Float16));
        assert!(!number_converts(Scalar::I(1 << 31), DType::Float16));
        assert!(number_converts(Scalar::F(f64::INFINITY), DType::Float16));
        assert!(number_converts(Scalar::F(f64::NAN), DType::Float32));
        assert!(!number_converts(Scalar::F(1e39), DType::Float32));
        assert!(!number_converts(Scalar::F(1e39), DType::BFloat16));
        assert!(number_converts(Scalar::F(1e38), DType::BFloat16));
        assert!(number_converts(Scalar::F(1e300), DType::Float64));
        assert!(number_converts(Scalar::B(true), DType::UInt8));
    }
}
