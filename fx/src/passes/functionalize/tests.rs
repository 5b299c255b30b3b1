use super::*;
use crate::meta::{DType, Device, Dim, NodeMeta, TensorMeta};
use crate::passes::check_topological_order;

fn meta(sizes: &[i64]) -> NodeMeta {
    NodeMeta::Tensor(TensorMeta::contiguous(DType::Float32, Device::cpu(), sizes))
}

fn call(g: &mut Graph, target: &str, args: Vec<Arg>, sizes: &[i64]) -> NodeId {
    let t = match target.strip_prefix('.') {
        Some(m) => Target::Method(m.into()),
        None => Target::Function(target.into()),
    };
    let hint = target.rsplit('.').next().unwrap();
    g.call(hint, t, args, vec![], meta(sizes))
}

fn n(id: NodeId) -> Arg {
    Arg::Node(id)
}

fn any(_: &str) -> bool {
    true
}

fn targets(g: &Graph) -> Vec<String> {
    g.nodes()
        .filter_map(|(_, n)| match &n.kind {
            NodeKind::Call { target, .. } => Some(target.name().to_string()),
            _ => None,
        })
        .collect()
}

fn no_inplace(g: &Graph) -> bool {
    g.nodes().all(|(_, n)| match &n.kind {
        NodeKind::Call {
            target,
            args,
            kwargs,
        } => {
            ops::mutated_arg(target, args, kwargs).is_none()
                || (target.name() == "copy_"
                    && matches!(args[0], Arg::Node(p) if matches!(g.node(p).kind, NodeKind::Placeholder { .. })))
        }
        _ => true,
    })
}

#[test]
fn inplace_on_input_becomes_twin_and_copy_back() {
    let mut g = Graph::new();
    let x = g.placeholder("x", meta(&[3]));
    let a = call(&mut g, ".add_", vec![n(x), Arg::Int(1)], &[3]);
    let b = call(&mut g, ".mul", vec![n(x), Arg::Int(2)], &[3]);
    g.output(vec![n(a), n(b)]);
    let f = functionalize(&g, &any).unwrap();
    check_topological_order(&f.graph).unwrap();
    assert!(no_inplace(&f.graph));
    assert_eq!(targets(&f.graph), ["add", "mul", "copy_"]);
    assert_eq!(f.mutated_inputs, [0]);
    // `x.add_(1)` returns `x` itself: the output is the input, written back.
    let out = f.graph.output_node().unwrap();
    let NodeKind::Output { values } = &f.graph.node(out).kind else {
        unreachable!()
    };
    assert!(
        matches!(values[0], Arg::Node(p) if matches!(f.graph.node(p).kind, NodeKind::Placeholder { .. }))
    );
    // `x * 2` reads the updated value, not the input.
    let NodeKind::Call { args, .. } = &f.graph.node(f.graph.nodes().nth(2).unwrap().0).kind else {
        unreachable!()
    };
    assert!(matches!(args[0], Arg::Node(p) if f.graph.node(p).name == "add_"));
}

#[test]
fn write_through_view_scatters_and_regenerates_views() {
    let mut g = Graph::new();
    let x = g.placeholder("x", meta(&[2, 3]));
    let v = call(
        &mut g,
        ".select",
        vec![n(x), Arg::Int(0), Arg::Int(1)],
        &[3],
    );
    let _w = call(&mut g, ".mul_", vec![n(v), Arg::Int(2)], &[3]);
    let s = call(&mut g, ".sum", vec![n(x)], &[]);
    let r = call(&mut g, ".neg", vec![n(v)], &[3]);
    g.output(vec![n(s), n(r)]);
    let f = functionalize(&g, &any).unwrap();
    check_topological_order(&f.graph).unwrap();
    assert!(no_inplace(&f.graph));
    assert_eq!(
        targets(&f.graph),
        [
            "select",
            "mul",
            VIEW_SCATTER,
            "sum",
            "select",
            "neg",
            "copy_"
        ]
    );
}

#[test]
fn random_inplace_runs_on_a_clone() {
    let mut g = Graph::new();
    let x = g.placeholder("x", meta(&[4]));
    let c = call(&mut g, ".clone", vec![n(x)], &[4]);
    let b = call(&mut g, ".bernoulli_", vec![n(c), Arg::Float(0.5)], &[4]);
    g.output(vec![n(b)]);
    let f = functionalize(&g, &any).unwrap();
    assert_eq!(targets(&f.graph), ["clone", ON_CLONE]);
    assert!(f.mutated_inputs.is_empty());
}

#[test]
fn missing_twin_falls_back_to_on_clone() {
    let mut g = Graph::new();
    let x = g.placeholder("x", meta(&[4]));
    let c = call(&mut g, ".clone", vec![n(x)], &[4]);
    let h = call(&mut g, "torch.hardtanh_", vec![n(c)], &[4]);
    g.output(vec![n(h)]);
    let f = functionalize(&g, &|p| p != "torch.hardtanh").unwrap();
    assert_eq!(targets(&f.graph), ["clone", ON_CLONE]);
    let f = functionalize(&g, &any).unwrap();
    assert_eq!(targets(&f.graph), ["clone", "torch.hardtanh"]);
}

#[test]
fn aliasing_outputs_are_reported() {
    let mut g = Graph::new();
    let x = g.placeholder("x", meta(&[2, 3]));
    let y = call(&mut g, ".mul", vec![n(x), Arg::Int(2)], &[2, 3]);
    let v = call(&mut g, ".view", vec![n(y), Arg::Int(-1)], &[6]);
    let i = call(&mut g, "operator.getitem", vec![n(y), Arg::Int(0)], &[3]);
    let t = call(&mut g, ".t", vec![n(x)], &[3, 2]);
    g.output(vec![n(y), n(v), n(i), n(t)]);
    let f = functionalize(&g, &any).unwrap();
    let bases: Vec<(usize, AliasBase)> = f
        .output_aliases
        .iter()
        .map(|a| (a.output, a.base))
        .collect();
    assert_eq!(
        bases,
        [
            (1, AliasBase::Output(0)),
            (2, AliasBase::Output(0)),
            (3, AliasBase::Input(0))
        ]
    );
    assert_eq!(f.user_outputs, 4);
}

#[test]
fn hidden_base_becomes_an_extra_output() {
    let mut g = Graph::new();
    let x = g.placeholder("x", meta(&[2, 3]));
    let y = call(&mut g, ".add", vec![n(x), Arg::Int(1)], &[2, 3]);
    let t = call(&mut g, ".t", vec![n(y)], &[3, 2]);
    g.output(vec![n(t)]);
    let f = functionalize(&g, &any).unwrap();
    assert_eq!(f.output_aliases.len(), 1);
    assert_eq!(f.output_aliases[0].base, AliasBase::Output(1));
    let out = f.graph.output_node().unwrap();
    let NodeKind::Output { values } = &f.graph.node(out).kind else {
        unreachable!()
    };
    assert_eq!(values.len(), 2);
}

#[test]
fn write_through_a_split_piece_reaches_its_base() {
    // A split piece is a view of its base: the write is scattered into the base through the
    // replayed `split` and `getitem`, the input is written back, and a piece returned is
    // rebuilt as a view of the input.
    let mut g = Graph::new();
    let x = g.placeholder("x", meta(&[4]));
    let s = g.call(
        "split",
        Target::Method("split".into()),
        vec![n(x), Arg::Int(2)],
        vec![],
        NodeMeta::Tuple(vec![meta(&[2]), meta(&[2])]),
    );
    let p = call(&mut g, "operator.getitem", vec![n(s), Arg::Int(0)], &[2]);
    let q = call(&mut g, "operator.getitem", vec![n(s), Arg::Int(1)], &[2]);
    let _ = call(&mut g, ".add_", vec![n(p), Arg::Int(1)], &[2]);
    g.output(vec![n(x), n(q)]);
    let f = functionalize(&g, &any).unwrap();
    check_topological_order(&f.graph).unwrap();
    assert!(no_inplace(&f.graph));
    assert!(targets(&f.graph).contains(&VIEW_SCATTER.to_string()));
    assert_eq!(f.mutated_inputs, [0]);
    assert_eq!(f.output_aliases.len(), 1);
    assert_eq!(f.output_aliases[0].base, AliasBase::Input(0));
    let steps: Vec<&str> = f.output_aliases[0]
        .steps
        .iter()
        .map(|s| s.target.name())
        .collect();
    assert_eq!(steps, ["split", "operator.getitem"]);
}

#[test]
fn broadcast_tensors_elements_alias_their_arguments() {
    // `broadcast_tensors(a, b)`: `a` already has the broadcast sizes, so element 0 is `a`
    // itself (a write through it writes `a`); element 1 is `b.expand(...)`, a view of `b`.
    let mut g = Graph::new();
    let a = g.placeholder("a", meta(&[2, 3]));
    let b = g.placeholder("b", meta(&[3]));
    let bt = g.call(
        "broadcast_tensors",
        Target::Function("torch.broadcast_tensors".into()),
        vec![n(a), n(b)],
        vec![],
        NodeMeta::Tuple(vec![meta(&[2, 3]), meta(&[2, 3])]),
    );
    let e0 = call(
        &mut g,
        "operator.getitem",
        vec![n(bt), Arg::Int(0)],
        &[2, 3],
    );
    let e1 = call(
        &mut g,
        "operator.getitem",
        vec![n(bt), Arg::Int(1)],
        &[2, 3],
    );
    let _ = call(&mut g, ".mul_", vec![n(e0), Arg::Int(2)], &[2, 3]);
    g.output(vec![n(e0), n(e1)]);
    let f = functionalize(&g, &any).unwrap();
    check_topological_order(&f.graph).unwrap();
    assert_eq!(f.mutated_inputs, [0]);
    // The call itself is gone: its elements are `a` and `b.expand((2, 3))`.
    assert_eq!(targets(&f.graph), ["expand", "mul", "copy_"]);
    let out = f.graph.output_node().unwrap();
    let NodeKind::Output { values } = &f.graph.node(out).kind else {
        unreachable!()
    };
    assert!(
        matches!(values[0], Arg::Node(p) if matches!(f.graph.node(p).kind, NodeKind::Placeholder { index: 0 }))
    );
    // Element 0 is handed back as the input object itself (no steps), element 1 as
    // `b.expand(...)`.
    assert_eq!(f.output_aliases.len(), 2);
    assert_eq!(f.output_aliases[0].output, 0);
    assert_eq!(f.output_aliases[0].base, AliasBase::Input(0));
    assert!(f.output_aliases[0].steps.is_empty());
    assert_eq!(f.output_aliases[1].output, 1);
    assert_eq!(f.output_aliases[1].base, AliasBase::Input(1));
    assert_eq!(f.output_aliases[1].steps[0].target.name(), "expand");
}

#[test]
fn write_through_an_overlapping_view_is_refused() {
    // `x.unfold(0, 2, 1)` windows share rows: scattering the whole new view back would write
    // stale values over the written ones.
    let mut g = Graph::new();
    let x = g.placeholder("x", meta(&[4, 4]));
    let u = g.call(
        "unfold",
        Target::Method("unfold".into()),
        vec![n(x), Arg::Int(0), Arg::Int(2), Arg::Int(1)],
        vec![],
        NodeMeta::Tensor(TensorMeta {
            sizes: [3, 4, 2].into_iter().map(Dim::Known).collect(),
            strides: [4, 1, 4].into_iter().map(Dim::Known).collect(),
            ..TensorMeta::contiguous(DType::Float32, Device::cpu(), &[3, 4, 2])
        }),
    );
    let _ = call(&mut g, ".mul_", vec![n(u), Arg::Int(2)], &[3, 4, 2]);
    g.output(vec![n(x)]);
    assert!(functionalize(&g, &any).is_err());
}

#[test]
fn refuses_what_it_cannot_prove() {
    // A metadata change.
    let mut g = Graph::new();
    let x = g.placeholder("x", meta(&[2, 3]));
    let _ = call(&mut g, ".t_", vec![n(x)], &[3, 2]);
    g.output(vec![n(x)]);
    assert!(functionalize(&g, &any).is_err());
}

/// `x[s0 // 2:].add_(1)` under dynamic shapes: a slice bounded by a symbolic size is a view, so
/// the write reaches `x` (it was taken for advanced indexing, a copy, and the write vanished).
/// Session 28: the view step's symbolic int is an argument of the `view_scatter` call, the new
/// graph's node for it (the pass refused such steps before, and the graph ran on the eager
/// runner).
#[test]
fn write_through_a_slice_with_symbolic_bounds_scatters_with_the_int_as_a_graph_value() {
    let sym = |v: i64| NodeMeta::SymInt(crate::sym::SymExpr::constant(v));
    for index in ["slice", "int"] {
        let mut g = Graph::new();
        let x = g.placeholder("x", meta(&[6, 2]));
        let k = g.call(
            "half",
            Target::Function("operator.floordiv".into()),
            vec![],
            vec![],
            sym(3),
        );
        let (idx, sizes): (Arg, &[i64]) = match index {
            "slice" => (
                Arg::Slice(Box::new(n(k)), Box::new(Arg::None), Box::new(Arg::None)),
                &[3, 2],
            ),
            _ => (n(k), &[2]),
        };
        let v = call(&mut g, "operator.getitem", vec![n(x), idx], sizes);
        call(&mut g, ".add_", vec![n(v), Arg::Int(1)], sizes);
        let s = call(&mut g, ".sum", vec![n(x), Arg::Int(0)], &[2]);
        g.output(vec![n(s)]);
        let f = functionalize(&g, &any).unwrap_or_else(|e| panic!("{index}: {e}"));
        check_topological_order(&f.graph).unwrap();
        assert!(no_inplace(&f.graph), "{index}");
        assert_eq!(f.mutated_inputs, [0], "{index}: {:?}", targets(&f.graph));
        assert_eq!(
            targets(&f.graph),
            [
                "operator.floordiv",
                "operator.getitem",
                "add",
                VIEW_SCATTER,
                "sum",
                "copy_"
            ],
            "{index}"
        );
        // The scatter's step names the new graph's int node, which precedes it.
        let (scatter, node) = f
            .graph
            .nodes()
            .find(|(_, nd)| matches!(&nd.kind, NodeKind::Call { target, .. } if target.name() == VIEW_SCATTER))
            .unwrap();
        let mut used = Vec::new();
        let NodeKind::Call { args, .. } = &node.kind else {
            unreachable!()
        };
        args[2].nodes(&mut used);
        let half = f.graph.nodes().find(|(_, nd)| nd.name == "half").unwrap().0;
        assert_eq!(used, [half], "{index}");
        assert!(half < scatter);
        // The sum reads the scattered value, not the input.
        let (_, sum) = f
            .graph
            .nodes()
            .find(|(_, nd)| matches!(&nd.kind, NodeKind::Call { target, .. } if target.name() == "sum"))
            .unwrap();
        assert!(sum.inputs().contains(&scatter), "{index}");
    }
}

/// A write through a transposed view cut by a symbolic size (the view's layout has symbolic
/// strides, which the overlap check cannot read): a chain of cuts and permutations of a
/// contiguous tensor never overlaps, so it scatters; an `expand` in the chain still refuses.
#[test]
fn write_through_a_symbolic_cut_of_a_transpose_scatters_and_an_expand_refuses() {
    use crate::sym::SymExpr;
    let s0 = SymExpr::symbol(0);
    let dims = |xs: &[SymExpr]| xs.iter().cloned().map(Dim::from_expr).collect::<Vec<_>>();
    let sym_meta = |sizes: &[SymExpr], strides: &[SymExpr]| {
        let mut t = TensorMeta::contiguous(DType::Float32, Device::cpu(), &[1, 1]);
        t.sizes = dims(sizes);
        t.strides = dims(strides);
        NodeMeta::Tensor(t)
    };
    let one = SymExpr::constant(1);
    let three = SymExpr::constant(3);
    let half = s0.floordiv(&SymExpr::constant(2));
    for expand in [false, true] {
        let mut g = Graph::new();
        let x = g.placeholder(
            "x",
            sym_meta(&[s0.clone(), three.clone()], &[three.clone(), one.clone()]),
        );
        let k = g.call(
            "half",
            Target::Function("operator.floordiv".into()),
            vec![],
            vec![],
            NodeMeta::SymInt(half.clone()),
        );
        let t = g.call(
            "t",
            Target::Method(if expand { "expand_as" } else { "t" }.into()),
            if expand { vec![n(x), n(x)] } else { vec![n(x)] },
            vec![],
            if expand {
                sym_meta(&[s0.clone(), three.clone()], &[three.clone(), one.clone()])
            } else {
                sym_meta(&[three.clone(), s0.clone()], &[one.clone(), three.clone()])
            },
        );
        let cut = Arg::Tuple(vec![
            Arg::Slice(
                Box::new(Arg::None),
                Box::new(Arg::None),
                Box::new(Arg::None),
            ),
            Arg::Slice(Box::new(Arg::None), Box::new(n(k)), Box::new(Arg::None)),
        ]);
        let (vs, vst) = if expand {
            ([s0.clone(), half.clone()], [three.clone(), one.clone()])
        } else {
            ([three.clone(), half.clone()], [one.clone(), three.clone()])
        };
        let v = g.call(
            "getitem",
            Target::Function("operator.getitem".into()),
            vec![n(t), cut],
            vec![],
            sym_meta(&vs, &vst),
        );
        let meta_v = g.node(v).meta.clone();
        g.call(
            "add_",
            Target::Method("add_".into()),
            vec![n(v), Arg::Int(1)],
            vec![],
            meta_v,
        );
        g.output(vec![n(x)]);
        match functionalize(&g, &any) {
            Ok(f) if !expand => {
                assert_eq!(f.mutated_inputs, [0]);
                assert!(targets(&f.graph).contains(&VIEW_SCATTER.to_string()));
            }
            Err(e) if expand => assert!(e.0.contains("overlap"), "{e}"),
            other => panic!("expand={expand}: {:?}", other.map(|f| targets(&f.graph))),
        }
    }
}
