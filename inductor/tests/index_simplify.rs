//! Property: simplifying a floor division or modulo of an index never changes its value. The
//! simplifier reasons with variable ranges (dropping terms that stay below a divisor, pulling
//! out common factors), so each rule is checked on random affine indices at random points.

use inductor::index::Idx;
use inductor::size::{consts, Size};
use proptest::prelude::*;

fn affine() -> impl Strategy<Value = (Vec<i64>, Vec<i64>, i64)> {
    (1usize..4).prop_flat_map(|n| {
        (
            prop::collection::vec(
                prop_oneof![1i64..40, Just(64), Just(65), Just(256), Just(257)],
                n,
            ),
            prop::collection::vec(
                prop_oneof![Just(1i64), Just(2), Just(4), Just(64), Just(256), 0i64..300],
                n,
            ),
            0i64..100,
        )
    })
}

proptest! {
    #[test]
    fn floordiv_and_modulo_keep_values(
        (ranges, coefs, constant) in affine(),
        d in prop_oneof![Just(2i64), Just(4), Just(64), Just(256), Just(4096), 2i64..1000],
        outer in prop_oneof![Just(1i64), Just(3), Just(16)],
        point in prop::collection::vec(prop_oneof![Just(0.0f64), Just(1.0), 0.0f64..1.0], 3),
    ) {
        let mut e = Idx::constant(constant);
        for (k, c) in coefs.iter().enumerate() {
            e = e.add(&Idx::var(k as u32).scale(*c));
        }
        let r = consts(&ranges);
        let div = e.floordiv(d, &r);
        let rem = e.modulo(d, &r);
        // A second level, as a view of a view produces.
        let nested = div.floordiv(outer.max(2), &r).add(&rem.modulo(outer.max(2), &r));
        let vars: Vec<i64> = ranges
            .iter()
            .zip(point.iter().cycle())
            .map(|(r, f)| ((*r as f64 - 1.0) * f).round() as i64)
            .collect();
        let v = e.eval(&vars);
        prop_assert_eq!(div.eval(&vars), v.div_euclid(d));
        prop_assert_eq!(rem.eval(&vars), v.rem_euclid(d));
        let o = outer.max(2);
        prop_assert_eq!(
            nested.eval(&vars),
            v.div_euclid(d).div_euclid(o) + v.rem_euclid(d).rem_euclid(o)
        );
    }
}

/// A size drawn from `k * s_a * s_b`-like monomials over two symbols (`which`: 0 a constant,
/// 1 `s0`, 2 `s1`, 3 `s0*s1`) plus a constant.
fn sym_size(which: u8, k: i64, c: i64) -> Size {
    let s0 = Size::symbol(0);
    let s1 = Size::symbol(1);
    let m = match which {
        0 => Size::Const(1),
        1 => s0,
        2 => s1,
        _ => s0 * s1,
    };
    m * k + c
}

proptest! {
    /// The symbolic simplifier: indices whose coefficients, ranges and divisors are expressions
    /// over two symbols are simplified once and then evaluated at assignments of the symbols
    /// from 2 up (every size the guards admit is at least 2); the value must equal the plain
    /// arithmetic's at every one. A rule taken on a hint instead of a proof fails here.
    #[test]
    fn symbolic_floordiv_and_modulo_keep_values_at_every_size(
        terms in prop::collection::vec((0u8..4, 1i64..5, 0i64..3, 0u8..4, 0i64..4), 1..4),
        constant in (0u8..3, 0i64..4),
        d in (0u8..4, 1i64..5, 0i64..3),
        assignments in prop::collection::vec((2i64..9, 2i64..9), 4),
        point in prop::collection::vec(prop_oneof![Just(0.0f64), Just(1.0), 0.0f64..1.0], 4),
    ) {
        // Ranges: a symbolic extent or a constant one (never below 1).
        let ranges: Vec<Size> = terms
            .iter()
            .map(|&(_, _, _, rw, rc)| sym_size(rw, 1, rc))
            .collect();
        let coef = |&(w, k, c, _, _): &(u8, i64, i64, u8, i64)| sym_size(w, k, c);
        let mut e = Idx::constant(sym_size(constant.0, 1, constant.1));
        for (k, t) in terms.iter().enumerate() {
            e = e.add(&Idx::var(k as u32).scale(coef(t)));
        }
        let dv = sym_size(d.0, d.1, d.2);
        // A divisor of at least 2 at every admitted size.
        let dv = if dv.as_const().is_some_and(|c| c < 2) { Size::Const(2) } else { dv };
        let div = e.floordiv(dv, &ranges);
        let rem = e.modulo(dv, &ranges);
        let clamped = e.clamp_to(0, ranges[0] - 1, &ranges);
        for &(a, b) in &assignments {
            let sym = |k: u32| if k == 0 { a } else { b };
            let size = |s: Size| s.eval(&sym).unwrap();
            let vars: Vec<i64> = ranges
                .iter()
                .zip(point.iter().cycle())
                .map(|(r, f)| ((size(*r) as f64 - 1.0) * f).round() as i64)
                .collect();
            let v = e.eval_with(&vars, &sym);
            let dn = size(dv);
            prop_assert_eq!(div.eval_with(&vars, &sym), v.div_euclid(dn), "{:?} // {:?}", e, dv);
            prop_assert_eq!(rem.eval_with(&vars, &sym), v.rem_euclid(dn), "{:?} % {:?}", e, dv);
            prop_assert_eq!(
                clamped.eval_with(&vars, &sym),
                v.clamp(0, size(ranges[0]) - 1),
                "clamp {:?}", e
            );
        }
    }
}

/// Simplifications a symbolic index gets: the ones proved for every size.
#[test]
fn symbolic_row_major_indices_simplify() {
    let (s0, s1) = (Size::symbol(0), Size::symbol(1));
    let ranges = [s0, s1];
    // x0 * s1 + x1 over [s0, s1]: the row and the column come back exactly.
    let flat = Idx::var(0).scale(s1).add(&Idx::var(1));
    assert_eq!(flat.floordiv(s1, &ranges), Idx::var(0));
    assert_eq!(flat.modulo(s1, &ranges), Idx::var(1));
    // The reshape round trip.
    let back = flat
        .floordiv(s1, &ranges)
        .scale(s1)
        .add(&flat.modulo(s1, &ranges));
    assert_eq!(back, flat);
    // A bound that only a hint could show stays an atom: x1 // 3 over [s0, s1] (s1 may be 2).
    let q = Idx::var(1).floordiv(3, &ranges);
    assert!(q.as_constant().is_none());
    // A clamp to the extent the index already stays in is dropped.
    assert_eq!(Idx::var(1).clamp_to(0, s1 - 1, &ranges), Idx::var(1));
    // One to a smaller extent is kept.
    assert_ne!(Idx::var(1).clamp_to(0, s0 - 1, &ranges), Idx::var(1));
}
