use super::*;

fn m(s: &str) -> Target {
    Target::Method(s.into())
}
fn f(s: &str) -> Target {
    Target::Function(s.into())
}

#[test]
fn spellings_reach_one_name() {
    for (t, name, inplace) in [
        (f("torch.add"), "add", false),
        (m("add_"), "add", true),
        (m("__iadd__"), "add", true),
        (m("__radd__"), "add", false),
        (f("operator.iadd"), "add", true),
        (f("_operator.truediv"), "div", false),
        (f("torch.nn.functional.relu"), "relu", false),
        (f("torch._C._nn.linear"), "linear", false),
    ] {
        let c = canonical(&t, &[], &[]).unwrap();
        assert_eq!((c.name.as_str(), c.inplace), (name, inplace), "{t:?}");
    }
    assert!(canonical(&m("__radd__"), &[], &[]).unwrap().reflected);
}

#[test]
fn inplace_flags_by_keyword_and_position() {
    let relu = f("torch.nn.functional.relu");
    assert_eq!(
        mutated_arg(&relu, &[Arg::None, Arg::Bool(true)], &[]),
        Some(Mutated::Arg(0))
    );
    assert_eq!(
        mutated_arg(&relu, &[Arg::None], &[("inplace".into(), Arg::Bool(true))]),
        Some(Mutated::Arg(0))
    );
    assert_eq!(
        mutated_arg(&relu, &[Arg::None, Arg::Bool(false)], &[]),
        None
    );
    assert_eq!(
        mutated_arg(&f("torch.add"), &[], &[("out".into(), Arg::Int(0))]),
        Some(Mutated::Out)
    );
    assert_eq!(
        mutated_arg(&f("operator.setitem"), &[], &[]),
        Some(Mutated::Arg(0))
    );
    assert!(
        canonical(&relu, &[Arg::None, Arg::Bool(true)], &[])
            .unwrap()
            .inplace
    );
}

#[test]
fn every_row_is_unique() {
    let mut names: Vec<&str> = OPS.iter().map(|o| o.name).collect();
    names.sort();
    let n = names.len();
    names.dedup();
    assert_eq!(n, names.len());
}

#[test]
fn aliasing_lists_agree() {
    // Once two lists (fx's VIEWS and the inductor's ALIASING) that had drifted apart.
    for n in [
        "broadcast_to",
        "type_as",
        "mT",
        "view",
        "contiguous",
        "split",
    ] {
        assert!(may_alias(n), "{n}");
    }
    assert!(!may_alias("add"));
    assert!(is_random(&m("bernoulli_")));
    assert!(is_random(&f("torch.nn.functional.dropout")));
    assert!(!is_random(&m("add_")));
}
