use super::*;
use crate::meta::{DType, Device, Dim, NodeMeta, TensorMeta};

fn tensor() -> NodeMeta {
    NodeMeta::Tensor(TensorMeta {
        dtype: DType::Float32,
        device: Device::cpu(),
        sizes: vec![Dim::Known(2), Dim::Known(3)],
        strides: vec![Dim::Known(3), Dim::Known(1)],
        requires_grad: false,
    })
}

fn f(s: &str) -> Target {
    Target::Function(s.into())
}
fn m(s: &str) -> Target {
    Target::Method(s.into())
}

/// One call on two tensor inputs, canonicalized: its target, args and kwargs.
fn one(
    target: Target,
    args: &[&str],
    kwargs: &[(&str, Arg)],
) -> (Target, Vec<Arg>, Vec<(String, Arg)>, bool) {
    let mut g = Graph::new();
    let x = g.placeholder("x", tensor());
    let y = g.placeholder("y", tensor());
    let arg = |s: &str| match s {
        "x" => Arg::Node(x),
        "y" => Arg::Node(y),
        "2" => Arg::Int(2),
        "1.5" => Arg::Float(1.5),
        "true" => Arg::Bool(true),
        _ => panic!("{s}"),
    };
    let a: Vec<Arg> = args.iter().map(|s| arg(s)).collect();
    let k: Vec<(String, Arg)> = kwargs
        .iter()
        .map(|(n, v)| (n.to_string(), v.clone()))
        .collect();
    let n = g.call("c", target, a, k, tensor());
    g.output(vec![Arg::Node(n)]);
    let c = canonicalize(&g);
    let NodeKind::Call {
        target,
        args,
        kwargs,
    } = c.graph.node(n).kind.clone()
    else {
        unreachable!()
    };
    (target, args, kwargs, c.retargeted.contains(&n))
}

#[test]
fn spellings_of_add_reach_one_target() {
    for (t, args) in [
        (f("torch.add"), &["x", "y"][..]),
        (m("add"), &["x", "y"]),
        (f("operator.add"), &["x", "y"]),
        (f("_operator.add"), &["x", "y"]),
        (m("__add__"), &["x", "y"]),
    ] {
        let (target, a, _, _) = one(t.clone(), args, &[]);
        assert_eq!(target, m("add"), "{t:?}");
        assert_eq!(a.len(), 2);
    }
    // `2 + x` reaches `x.__radd__(2)`: add commutes, so it is `x.add(2)`.
    assert_eq!(one(m("__radd__"), &["x", "2"], &[]).0, m("add"));
    // `2 - x` does not commute: kept.
    assert_eq!(one(m("__rsub__"), &["x", "2"], &[]).0, m("__rsub__"));
}

#[test]
fn inplace_spellings_reach_the_inplace_method() {
    for (t, args, kw) in [
        (f("operator.iadd"), &["x", "y"][..], &[][..]),
        (m("__iadd__"), &["x", "y"], &[]),
        (m("add_"), &["x", "y"], &[]),
    ] {
        assert_eq!(one(t.clone(), args, kw).0, m("add_"), "{t:?}");
    }
    assert_eq!(one(f("torch.relu_"), &["x"], &[]).0, m("relu_"));
    let relu = f("torch.nn.functional.relu");
    assert_eq!(
        one(relu.clone(), &["x", "true"], &[]),
        (m("relu_"), vec![one_x()], vec![], true)
    );
    let kw = [("inplace", Arg::Bool(true))];
    assert_eq!(one(relu.clone(), &["x"], &kw).0, m("relu_"));
    // Not in place: the functional call stays (its signature is F's, not the method's).
    assert_eq!(one(relu.clone(), &["x"], &[]).0, relu);
    // `x.absolute_()` is `x.abs_()`.
    assert_eq!(one(m("absolute_"), &["x"], &[]).0, m("abs_"));
}

fn one_x() -> Arg {
    // The first placeholder of `one`'s graph.
    Arg::Node(NodeId::new(0))
}

#[test]
fn aliases_fold() {
    assert_eq!(one(f("torch.absolute"), &["x"], &[]).0, m("abs"));
    assert_eq!(one(m("swapaxes"), &["x", "2", "2"], &[]).0, m("transpose"));
    assert_eq!(one(f("torch.special.expit"), &["x"], &[]).0, m("sigmoid"));
    assert_eq!(one(m("multiply"), &["x", "y"], &[]).0, m("mul"));
    // A keyword the alias spells differently (`axis0`) keeps the call as recorded.
    let kw = [("axis0", Arg::Int(0)), ("axis1", Arg::Int(1))];
    assert_eq!(one(m("swapaxes"), &["x"], &kw).0, m("swapaxes"));
}

#[test]
fn keywords_become_positional_through_the_binder() {
    let (t, a, k, retargeted) = one(m("softmax"), &["x"], &[("dim", Arg::Int(1))]);
    assert_eq!(
        (t, a.len(), k.len(), retargeted),
        (m("softmax"), 2, 0, false)
    );
    assert_eq!(a[1], Arg::Int(1));
    // Keyword-only parameters stay keywords; `torch.add` becomes the method.
    let (t, a, k, retargeted) = one(
        f("torch.add"),
        &["x"],
        &[("other", Arg::Int(2)), ("alpha", Arg::Int(2))],
    );
    assert_eq!((t, a.len(), retargeted), (m("add"), 2, true));
    assert_eq!(k, vec![("alpha".to_string(), Arg::Int(2))]);
    // A gap (`max` without `min`) keeps the later keyword a keyword.
    let (_, a, k, _) = one(m("clamp"), &["x"], &[("max", Arg::Float(1.5))]);
    assert_eq!((a.len(), k.len()), (1, 1));
    // Arguments that do not bind (`sum`'s dim overload) are kept as given.
    let (_, a, k, _) = one(m("sum"), &["x"], &[("dim", Arg::Int(1))]);
    assert_eq!((a.len(), k.len()), (1, 1));
}

#[test]
fn what_cannot_be_proved_equal_is_kept() {
    // `out=` is functionalization's business.
    let out = [("out", Arg::Int(0))];
    assert_eq!(one(f("torch.add"), &["x", "y"], &out).0, f("torch.add"));
    // A first operand that is not a tensor.
    assert_eq!(
        one(f("operator.add"), &["2", "x"], &[]).0,
        f("operator.add")
    );
    // No method (`F.gelu`), a first parameter that is not `input` (`torch.where`).
    assert_eq!(
        one(f("torch.nn.functional.gelu"), &["x"], &[]).0,
        f("torch.nn.functional.gelu")
    );
    assert_eq!(
        one(f("torch.where"), &["x", "x", "y"], &[]).0,
        f("torch.where")
    );
    // Python-level ops whose function and method signatures differ (`torch.split`).
    assert_eq!(one(f("torch.split"), &["x", "2"], &[]).0, f("torch.split"));
}
