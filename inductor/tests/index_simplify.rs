//! Property: simplifying a floor division or modulo of an index never changes its value. The
//! simplifier reasons with variable ranges (dropping terms that stay below a divisor, pulling
//! out common factors), so each rule is checked on random affine indices at random points.

use inductor::index::Idx;
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
        let div = e.floordiv(d, &ranges);
        let rem = e.modulo(d, &ranges);
        // A second level, as a view of a view produces.
        let nested = div.floordiv(outer.max(2), &ranges).add(&rem.modulo(outer.max(2), &ranges));
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
