//! `param`'s unit tests: tokens, fits, nodes, templates and their parity classes.

use super::*;

#[test]
fn tokens_leave_identifiers_and_floats_alone() {
    let t = tokenize("b3[x0 + 12*x1] = ((float)0x1.8p+3) + 1e-05 * x12 - 7;");
    let ints: Vec<i64> = t
        .iter()
        .filter_map(|t| match t {
            Tok::Int(v) => Some(*v),
            _ => None,
        })
        .collect();
    assert_eq!(ints, vec![12, 7]);
    assert!(
        t.contains(&Tok::Float(12.0, "0x1.8p+3".into()))
            || t.iter().all(|t| !matches!(t, Tok::Float(..)))
    );
    let h: Vec<f64> = tokenize("((float)0x1.5555560000000p-2)")
        .iter()
        .filter_map(|t| match t {
            Tok::Float(v, _) => Some(*v),
            _ => None,
        })
        .collect();
    assert_eq!(h, vec![(1.0f64 / 3.0) as f32 as f64]);
}

#[test]
fn the_check_point_rejects_what_is_no_polynomial() {
    let code = |n: i64| format!("x < {};", (n as f64).sqrt() as i64 * 5);
    let nodes = [vec![4, 8, 12]];
    let codes: Vec<String> = grid(&nodes).iter().map(|s| code(s[0])).collect();
    let names = || vec!["s0".to_string()];
    assert!(Template::fit(&nodes, &codes, names(), None).is_ok());
    let err = Template::fit(&nodes, &codes, names(), Some((&[16], &code(16)))).unwrap_err();
    assert!(err.contains("not the ones fitted"), "{err}");
}

#[test]
fn a_hole_in_int64_c_is_an_expression() {
    let code = |n: i64| format!("const int64_t a = ((int64_t)INT64_C({n}));");
    let nodes = [vec![8, 16, 24]];
    let codes: Vec<String> = grid(&nodes).iter().map(|s| code(s[0])).collect();
    let t = Template::fit(&nodes, &codes, vec!["s0".into()], None).unwrap();
    let c = t.render(&|_| None).unwrap();
    assert_eq!(c, "const int64_t a = ((int64_t)((s0)));");
}

#[test]
fn a_mean_divisor_is_a_float_hole() {
    let nodes = [vec![8, 16, 24]];
    let code = |n: i64| {
        format!(
            "const float a = ((float){});",
            crate::codegen::c::hex_float((1.0 / n as f64) as f32 as f64)
        )
    };
    let codes: Vec<String> = grid(&nodes).iter().map(|s| code(s[0])).collect();
    let t = Template::fit(&nodes, &codes, vec!["s0".into()], None).unwrap();
    for n in [2, 3, 7, 100] {
        assert!(t.matches(&code(n), &[n]), "{n}");
    }
    assert!(!t.matches(&code(5), &[6]));
    let c = t.render(&|_| None).unwrap();
    assert!(c.contains("((float)(1.0 / (double)(s0)))"), "{c}");
}

#[test]
fn nodes_avoid_tiny_and_shared_sizes() {
    let any = |_: &[i64]| true;
    assert_eq!(
        nodes_for(&[4, 3], &any),
        vec![vec![8, 10, 12], vec![9, 11, 13]]
    );
    assert_eq!(
        nodes_for(&[4, 2], &any),
        vec![vec![8, 10, 12], vec![14, 16, 18]]
    );
    assert_eq!(nodes_for(&[32], &any), vec![vec![32, 34, 36]]);
    // A symbol guarded equal to its hint stays there.
    let pinned = |s: &[i64]| s[1] == 32;
    assert_eq!(
        nodes_for(&[4, 32], &pinned),
        vec![vec![8, 10, 12], vec![32]]
    );
    assert_eq!(
        grid(&[vec![1, 2, 3], vec![7]]),
        vec![vec![1, 7], vec![2, 7], vec![3, 7]]
    );
}

#[test]
fn fits_products_and_constants() {
    let base = [vec![4, 8, 12], vec![7, 14, 21]];
    let pts = grid(&base);
    let values: Vec<i64> = pts.iter().map(|s| 3 * s[0] * s[1] - s[0] + 5).collect();
    let p = fit(&base, &values).unwrap();
    assert_eq!(p.eval(&[100, 33]), Some(3 * 100 * 33 - 100 + 5));
    let sq: Vec<i64> = pts.iter().map(|s| s[0] * s[0] * s[1]).collect();
    assert_eq!(fit(&base, &sq).unwrap().eval(&[9, 2]), Some(162));
    // A floor division fitted where it divides exactly is C's division elsewhere.
    let half: Vec<i64> = pts.iter().map(|s| s[0] / 2 + 1).collect();
    let p = fit(&base, &half).unwrap();
    assert_eq!(p.eval(&[7, 3]), Some(4));
    // Three nodes per symbol fit any values with degree 2: the check point and the match
    // at every size reject what is no polynomial (see the check point's test).
}

#[test]
fn a_template_matches_only_its_own_sizes() {
    let code = |n: i64| {
        format!("void kernel0(void **restrict args) {{\n  for (int64_t x0 = 0; x0 < {}; x0++) b[x0] = 2;\n}}\n", n * 8)
    };
    let base = [vec![5, 10, 15]];
    let codes: Vec<String> = grid(&base).iter().map(|s| code(s[0])).collect();
    let t = Template::fit(&base, &codes, vec!["s0".into()], None).unwrap();
    assert!(t.matches(&code(40), &[40]));
    assert!(!t.matches(&code(40), &[41]));
    let c = t.render(&|_| Some(1)).unwrap();
    assert!(c.contains("x0 < (INT64_C(8)*s0)"), "{c}");
    assert!(c.contains("const int64_t s0 = tf_sym[0];"), "{c}");
}

#[test]
fn parity_classes_merge_into_one_template() {
    // `(s0 // 2 + 1) * 8` as a loop bound: `4 * s0 + 4` on odd sizes, `4 * s0 + 8` on even.
    let code = |n: i64| {
        format!(
            "void kernel0(void **restrict args) {{\n  for (int64_t x0 = 0; x0 < {}; x0++) b[x0] = {};\n}}\n",
            (n / 2 + 1) * 8,
            n
        )
    };
    let fit = |nodes: Vec<i64>| {
        let nodes = [nodes];
        let codes: Vec<String> = grid(&nodes).iter().map(|s| code(s[0])).collect();
        Template::fit(&nodes, &codes, vec!["s0".into()], None).unwrap()
    };
    let (odd, even) = (fit(vec![9, 11, 13]), fit(vec![8, 10, 12]));
    assert!(odd.matches(&code(21), &[21]) && !odd.matches(&code(20), &[20]));
    let t = Template::merge_classes(vec![0], vec![even, odd]).unwrap();
    for n in 2..200 {
        assert!(t.matches(&code(n), &[n]), "{n}");
        assert!(!t.matches(&code(n), &[n + 2]), "{n}");
    }
    let c = t.render(&|_| Some(1)).unwrap();
    assert!(c.contains("x0 < ((s0 & 1) == 0 ? "), "{c}");
    // Sources that differ in more than literals stay apart.
    let other = Template::fit(
        &[vec![8, 10, 12]],
        &[8, 10, 12].map(|n: i64| code(n).replace("= ", "= -")),
        vec!["s0".into()],
        None,
    )
    .unwrap();
    assert!(Template::merge_classes(vec![0], vec![other, fit(vec![9, 11, 13])]).is_err());
}
