use proptest::prelude::*;

use super::*;
use crate::meta::{NodeMeta, TensorMeta};

fn x_meta() -> NodeMeta {
    NodeMeta::Tensor(TensorMeta::contiguous(DType::Float32, Device::cpu(), &[2]))
}

fn call(g: &mut Graph, target: &str, args: Vec<Arg>) -> NodeId {
    let t = match target.strip_prefix('.') {
        Some(m) => Target::Method(m.into()),
        None => Target::Function(target.into()),
    };
    let hint = target.rsplit('.').next().unwrap();
    g.call(hint, t, args, vec![], x_meta())
}

fn n(id: NodeId) -> Arg {
    Arg::Node(id)
}

fn names(g: &Graph) -> Vec<String> {
    g.nodes().map(|(_, n)| n.name.clone()).collect()
}

#[test]
fn dce_removes_dead_chains_only() {
    let mut g = Graph::new();
    let x = g.placeholder("x", x_meta());
    let unused_input = g.placeholder("y", x_meta());
    let a = call(&mut g, "torch.add", vec![n(x), Arg::Int(1)]);
    let dead = call(&mut g, "torch.mul", vec![n(a), n(a)]);
    let _dead2 = call(&mut g, ".relu", vec![n(dead)]);
    let _mutation = call(&mut g, ".add_", vec![n(x), Arg::Int(1)]);
    let _random = call(&mut g, "torch.randn", vec![Arg::Int(3)]);
    let kept = call(&mut g, "torch.sin", vec![n(x)]);
    let _grad = call(&mut g, "torch._C._set_grad_enabled", vec![Arg::Bool(false)]);
    g.output(vec![n(a)]);
    let _ = unused_input;
    let removed = eliminate_dead_code(&mut g, |id, _| id == kept);
    assert_eq!(removed, 2);
    assert_eq!(
        names(&g),
        [
            "x",
            "y",
            "add",
            "add_",
            "randn",
            "sin",
            "_set_grad_enabled",
            "output"
        ]
    );
    check_topological_order(&g).unwrap();
}

#[test]
fn dce_keeps_inplace_flag_and_out() {
    let mut g = Graph::new();
    let x = g.placeholder("x", x_meta());
    let t = Target::Function("torch.nn.functional.relu".into());
    g.call(
        "relu",
        t.clone(),
        vec![n(x)],
        vec![("inplace".into(), Arg::Bool(true))],
        x_meta(),
    );
    g.call(
        "relu",
        t,
        vec![n(x)],
        vec![("inplace".into(), Arg::Bool(false))],
        x_meta(),
    );
    g.call(
        "add",
        Target::Function("torch.add".into()),
        vec![n(x), n(x)],
        vec![("out".into(), n(x))],
        x_meta(),
    );
    call(&mut g, "operator.iadd", vec![n(x), Arg::Int(1)]);
    call(
        &mut g,
        "operator.setitem",
        vec![n(x), Arg::Int(0), Arg::Int(1)],
    );
    g.output(vec![]);
    assert_eq!(eliminate_dead_code(&mut g, |_, _| false), 1);
    assert_eq!(names(&g), ["x", "relu", "add", "iadd", "setitem", "output"]);
}

#[test]
fn cse_merges_equal_calls_transitively() {
    let mut g = Graph::new();
    let x = g.placeholder("x", x_meta());
    let a1 = call(&mut g, "torch.add", vec![n(x), Arg::Int(1)]);
    let a2 = call(&mut g, "torch.add", vec![n(x), Arg::Int(1)]);
    let r1 = call(&mut g, ".relu", vec![n(a1)]);
    let r2 = call(&mut g, ".relu", vec![n(a2)]);
    let s = call(&mut g, "operator.add", vec![n(r1), n(r2)]);
    g.output(vec![n(s)]);
    assert_eq!(eliminate_common_subexpressions(&mut g, |_, _| false), 2);
    assert_eq!(names(&g), ["x", "add", "relu", "add_2", "output"]);
    assert_eq!(g.users(r1), vec![s]);
    check_topological_order(&g).unwrap();
}

#[test]
fn cse_distinguishes_argument_values() {
    let mut g = Graph::new();
    let x = g.placeholder("x", x_meta());
    let mut outs = Vec::new();
    for arg in [
        Arg::Int(1),
        Arg::Float(1.0),
        Arg::Bool(true),
        Arg::Float(0.0),
        Arg::Float(-0.0),
    ] {
        outs.push(n(call(&mut g, "torch.add", vec![n(x), arg])));
    }
    outs.push(n(call(&mut g, "torch.sub", vec![n(x), Arg::Int(1)])));
    outs.push(n(call(&mut g, ".add", vec![n(x), Arg::Int(1)])));
    let s = call(&mut g, "torch.stack", vec![Arg::List(outs)]);
    g.output(vec![n(s)]);
    assert_eq!(eliminate_common_subexpressions(&mut g, |_, _| false), 0);
}

#[test]
fn cse_kwargs_order_does_not_matter() {
    let mut g = Graph::new();
    let x = g.placeholder("x", x_meta());
    let t = Target::Function("torch.sum".into());
    let kw = |a: bool| {
        let mut v = vec![
            ("dim".to_string(), Arg::Int(0)),
            ("keepdim".to_string(), Arg::Bool(true)),
        ];
        if a {
            v.reverse();
        }
        v
    };
    let a = g.call("sum", t.clone(), vec![n(x)], kw(false), x_meta());
    let b = g.call("sum", t, vec![n(x)], kw(true), x_meta());
    let m = call(&mut g, "torch.mul", vec![n(a), n(b)]);
    g.output(vec![n(m)]);
    assert_eq!(eliminate_common_subexpressions(&mut g, |_, _| false), 1);
}

#[test]
fn cse_respects_mutation_and_randomness() {
    // sin(x), then x.add_(1), then sin(x) again: the two differ.
    let mut g = Graph::new();
    let x = g.placeholder("x", x_meta());
    let v = call(&mut g, ".view", vec![n(x), Arg::Int(-1)]);
    let s1 = call(&mut g, "torch.sin", vec![n(x)]);
    call(&mut g, ".add_", vec![n(v), Arg::Int(1)]);
    let s2 = call(&mut g, "torch.sin", vec![n(x)]);
    // A result that is later written must not be shared either.
    let c1 = call(&mut g, "torch.cos", vec![n(s1)]);
    let c2 = call(&mut g, "torch.cos", vec![n(s1)]);
    call(&mut g, ".mul_", vec![n(c1), Arg::Int(2)]);
    let r1 = call(&mut g, "torch.randn", vec![Arg::Int(2)]);
    let r2 = call(&mut g, "torch.randn", vec![Arg::Int(2)]);
    g.output(vec![n(s2), n(c1), n(c2), n(r1), n(r2)]);
    assert_eq!(eliminate_common_subexpressions(&mut g, |_, _| false), 0);
}

#[test]
fn cse_keeps_two_returned_results_distinct() {
    let mut g = Graph::new();
    let x = g.placeholder("x", x_meta());
    let a = call(&mut g, "torch.sin", vec![n(x)]);
    let b = call(&mut g, "torch.sin", vec![n(x)]);
    let c = call(&mut g, "torch.sin", vec![n(x)]);
    let d = call(&mut g, ".relu", vec![n(c)]);
    g.output(vec![n(a), n(b), n(d)]);
    // `c` merges into `a` (only `a` is returned); `b` stays apart from `a`.
    assert_eq!(eliminate_common_subexpressions(&mut g, |_, _| false), 1);
    assert!(g.contains(b) && !g.contains(c));
    assert_eq!(g.users(a), vec![d, g.output_node().unwrap()]);
}

#[test]
fn replace_all_uses_keeps_edges() {
    let mut g = Graph::new();
    let x = g.placeholder("x", x_meta());
    let y = g.placeholder("y", x_meta());
    let a = call(&mut g, "torch.add", vec![n(y), n(y)]);
    let b = call(
        &mut g,
        "torch.cat",
        vec![Arg::List(vec![n(y), n(a), n(y)]), Arg::Int(0)],
    );
    g.output(vec![n(b), n(y)]);
    assert_eq!(g.replace_all_uses_with(y, x), 5);
    assert!(g.users(y).is_empty());
    check_topological_order(&g).unwrap();
}

#[test]
fn order_check_catches_bad_graphs() {
    let mut g = Graph::new();
    let x = g.placeholder("x", x_meta());
    let a = call(&mut g, ".relu", vec![n(x)]);
    let b = call(&mut g, ".sin", vec![n(a)]);
    g.output(vec![n(b)]);
    check_topological_order(&g).unwrap();
    // Rewriting arguments behind the graph's back desynchronises the edges.
    if let NodeKind::Call { args, .. } = &mut g.node_mut(b).kind {
        args[0] = n(x);
    }
    assert_eq!(
        check_topological_order(&g),
        Err(GraphError::EdgeMismatch { node: "sin".into() })
    );
    if let NodeKind::Call { args, .. } = &mut g.node_mut(a).kind {
        args[0] = n(b);
    }
    assert_eq!(
        check_topological_order(&g),
        Err(GraphError::UseBeforeDefinition {
            node: "relu".into(),
            input: "sin".into()
        })
    );
}

#[test]
fn mutation_classification() {
    let f = |s: &str| Target::Function(s.into());
    let m = |s: &str| Target::Method(s.into());
    assert!(is_mutating(&m("add_"), &[]));
    assert!(is_mutating(&m("__iadd__"), &[]));
    assert!(!is_mutating(&m("__add__"), &[]));
    assert!(is_mutating(&f("torch.nn.init.normal_"), &[]));
    assert!(is_mutating(&f("operator.setitem"), &[]));
    assert!(!is_mutating(&f("operator.invert"), &[]));
    assert!(!is_mutating(&f("operator.is_"), &[]));
    assert!(!is_mutating(&f("operator.and_"), &[]));
    assert!(is_random(&f("torch.nn.functional.dropout")));
}

// ---------------------------------------------------------------- properties

/// A random DAG: each node picks a target from a small pool and arguments among earlier nodes
/// and a few constants, so equal calls occur often.
#[derive(Clone, Debug)]
struct Recipe {
    inputs: usize,
    calls: Vec<(usize, Vec<Choice>)>,
    outputs: Vec<usize>,
}

#[derive(Clone, Debug)]
enum Choice {
    Node(usize),
    Const(i64),
}

const POOL: &[&str] = &[
    "torch.add",
    "torch.mul",
    ".relu",
    "torch.randn",
    ".add_",
    "torch.sin",
];

fn recipe() -> impl Strategy<Value = Recipe> {
    (1usize..4, 1usize..14).prop_flat_map(|(inputs, n)| {
        let calls = (0..n)
            .map(|i| {
                let avail = inputs + i;
                (
                    0..POOL.len(),
                    prop::collection::vec(
                        prop_oneof![
                            3 => (0..avail).prop_map(Choice::Node),
                            1 => (0i64..2).prop_map(Choice::Const),
                        ],
                        1..3,
                    ),
                )
            })
            .collect::<Vec<_>>();
        (
            Just(inputs),
            calls,
            prop::collection::vec(0..inputs + n, 0..4),
        )
            .prop_map(|(inputs, calls, outputs)| Recipe {
                inputs,
                calls,
                outputs,
            })
    })
}

fn build(r: &Recipe) -> (Graph, Vec<NodeId>) {
    let mut g = Graph::new();
    let mut ids: Vec<NodeId> = (0..r.inputs)
        .map(|i| g.placeholder(&format!("x{i}"), x_meta()))
        .collect();
    for (t, args) in &r.calls {
        let args = args
            .iter()
            .map(|c| match c {
                Choice::Node(i) => n(ids[*i]),
                Choice::Const(v) => Arg::Int(*v),
            })
            .collect();
        ids.push(call(&mut g, POOL[*t], args));
    }
    g.output(r.outputs.iter().map(|&i| n(ids[i])).collect());
    (g, ids)
}

/// What each value computes, as an expression over the inputs; nodes with side effects are
/// opaque tokens named by their (stable) id.
fn expression(g: &Graph, id: NodeId, memo: &mut HashMap<NodeId, String>) -> String {
    if let Some(e) = memo.get(&id) {
        return e.clone();
    }
    let node = g.node(id);
    let e = match &node.kind {
        NodeKind::Placeholder { index } => format!("in{index}"),
        NodeKind::Call { .. } if has_side_effects(node) => format!("#{}", id.index()),
        NodeKind::Call { target, args, .. } => {
            let parts: Vec<String> = args
                .iter()
                .map(|a| match a {
                    Arg::Node(m) => expression(g, *m, memo),
                    other => format!("{other:?}"),
                })
                .collect();
            format!("{}({})", target.name(), parts.join(","))
        }
        NodeKind::Output { .. } => unreachable!(),
    };
    memo.insert(id, e.clone());
    e
}

fn output_expressions(g: &Graph) -> Vec<String> {
    let out = g.output_node().unwrap();
    let mut memo = HashMap::new();
    g.node(out)
        .inputs()
        .into_iter()
        .map(|i| expression(g, i, &mut memo))
        .collect()
}

proptest! {
    #[test]
    fn dce_leaves_only_live_or_effectful_calls(r in recipe()) {
        let (mut g, _) = build(&r);
        let before = output_expressions(&g);
        eliminate_dead_code(&mut g, |_, _| false);
        check_topological_order(&g).unwrap();
        prop_assert_eq!(output_expressions(&g), before);
        // Every call left feeds the output or something kept for its effects.
        let mut live: Vec<NodeId> = g
            .nodes()
            .filter(|(_, n)| has_side_effects(n))
            .map(|(id, _)| id)
            .collect();
        let mut i = 0;
        while i < live.len() {
            for input in g.node(live[i]).inputs() {
                if !live.contains(&input) {
                    live.push(input);
                }
            }
            i += 1;
        }
        for (id, node) in g.nodes() {
            if matches!(node.kind, NodeKind::Call { .. }) {
                prop_assert!(live.contains(&id), "dead call {} survived", node.name);
            }
        }
    }

    #[test]
    fn cse_never_changes_what_is_computed(r in recipe()) {
        let (mut g, _) = build(&r);
        let before = output_expressions(&g);
        let calls_before = g.op_count();
        let removed = eliminate_common_subexpressions(&mut g, |_, _| false);
        check_topological_order(&g).unwrap();
        prop_assert_eq!(output_expressions(&g), before);
        prop_assert_eq!(g.op_count() + removed, calls_before);
        // Without any mutation or randomness, no two equal pure calls survive unless both
        // are returned.
        let effects = g.nodes().any(|(_, n)| {
            matches!(n.kind, NodeKind::Call { .. }) && has_side_effects(n)
        });
        if !effects {
            let out = g.output_node().unwrap();
            let returned = g.node(out).inputs();
            let mut seen: HashMap<CallKey, NodeId> = HashMap::new();
            for (id, node) in g.nodes() {
                if let Some(key) = call_key(node) {
                    if let Some(&other) = seen.get(&key) {
                        prop_assert!(
                            returned.contains(&id) && returned.contains(&other),
                            "{} duplicates an earlier call", node.name
                        );
                    }
                    seen.insert(key, id);
                }
            }
        }
    }
}
