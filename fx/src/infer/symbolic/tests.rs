//! Unit tests of the symbolic rules.

use super::*;
use crate::meta::{DType, Device};

/// A float32 CPU placeholder of `sizes` (symbolic or known), contiguous unless `strides`
/// says otherwise; shared with `computed`'s tests.
pub(super) fn strided_input(
    g: &mut Graph,
    sizes: Vec<Dim>,
    strides: Option<Vec<Dim>>,
) -> crate::graph::NodeId {
    let strides = strides.unwrap_or_else(|| contiguous(&sizes));
    g.placeholder(
        "x",
        NodeMeta::Tensor(TensorMeta {
            dtype: DType::Float32,
            device: Device::cpu(),
            sizes,
            strides,
            requires_grad: false,
        }),
    )
}

fn sym_input(g: &mut Graph, sizes: Vec<Dim>) -> crate::graph::NodeId {
    strided_input(g, sizes, None)
}

/// The size symbol `s{k}` as a dimension.
pub(super) fn s(k: u32) -> Dim {
    Dim::Sym(SymExpr::symbol(k))
}

fn sizes(m: &NodeMeta) -> Vec<String> {
    m.tensor()
        .unwrap()
        .sizes
        .iter()
        .map(|d| d.to_string())
        .collect()
}

fn run(g: &Graph, t: &str, args: Vec<Arg>, hints: &[i64]) -> (NodeMeta, Vec<Relation>) {
    let target = if let Some(m) = t.strip_prefix('.') {
        Target::Method(m.into())
    } else {
        Target::Function(t.into())
    };
    infer_symbolic(
        &InferCtx::default(),
        g,
        &target,
        &args,
        &[],
        Symbols::hints(hints),
    )
    .unwrap()
}

#[test]
fn pointwise_reduction_and_views_keep_symbols() {
    let mut g = Graph::new();
    let x = sym_input(&mut g, vec![s(0), s(1), Dim::Known(64)]);
    let (m, _) = run(&g, "torch.relu", vec![Arg::Node(x)], &[4, 8]);
    assert_eq!(sizes(&m), ["s0", "s1", "64"]);
    assert_eq!(m.tensor().unwrap().strides[0].to_string(), "s1*64");
    let (m, _) = run(&g, ".sum", vec![Arg::Node(x), Arg::Int(1)], &[4, 8]);
    assert_eq!(sizes(&m), ["s0", "64"]);
    let (m, _) = run(
        &g,
        ".transpose",
        vec![Arg::Node(x), Arg::Int(0), Arg::Int(1)],
        &[4, 8],
    );
    assert_eq!(sizes(&m), ["s1", "s0", "64"]);
    assert_eq!(m.tensor().unwrap().strides[0].to_string(), "64");
    let (m, _) = run(
        &g,
        ".view",
        vec![Arg::Node(x), Arg::Int(-1), Arg::Int(16)],
        &[4, 8],
    );
    assert_eq!(sizes(&m), ["s0*s1*4", "16"]);
    let (m, _) = run(&g, ".flatten", vec![Arg::Node(x), Arg::Int(1)], &[4, 8]);
    assert_eq!(sizes(&m), ["s0", "s1*64"]);
    let (m, _) = run(
        &g,
        "torch.cat",
        vec![Arg::List(vec![Arg::Node(x), Arg::Node(x)]), Arg::Int(1)],
        &[4, 8],
    );
    assert_eq!(sizes(&m), ["s0", "s1*2", "64"]);
}

#[test]
fn slices_clamp_with_relations() {
    let mut g = Graph::new();
    let x = sym_input(&mut g, vec![s(0), s(1)]);
    let idx = Arg::Tuple(vec![
        Arg::Slice(
            Box::new(Arg::None),
            Box::new(Arg::None),
            Box::new(Arg::None),
        ),
        Arg::Slice(
            Box::new(Arg::Int(1)),
            Box::new(Arg::None),
            Box::new(Arg::None),
        ),
    ]);
    let (m, rels) = run(&g, "operator.getitem", vec![Arg::Node(x), idx], &[4, 8]);
    assert_eq!(sizes(&m), ["s0", "s1 - 1"]);
    assert!(rels.iter().any(|r| r.to_string() == "1 <= s1"), "{rels:?}");
    let idx = Arg::Slice(
        Box::new(Arg::None),
        Box::new(Arg::Int(3)),
        Box::new(Arg::None),
    );
    let (m, rels) = run(&g, "operator.getitem", vec![Arg::Node(x), idx], &[4, 8]);
    assert_eq!(sizes(&m), ["3", "s1"]);
    assert!(rels.iter().any(|r| r.to_string() == "3 <= s0"), "{rels:?}");
}

/// Two symbols meeting in a broadcast (torch's `_broadcast_shapes`): equal at the hints,
/// the op requires them equal, so the answer relies on `s0 == s1` (a guard, and one symbol
/// from then on in the tracer's shape environment); one that must equal a constant is
/// required equal to it (the tracer replaces it by the constant). Unequal at the hints,
/// the op is invalid, as in eager.
#[test]
fn broadcast_of_two_symbols_requires_them_equal() {
    let mut g = Graph::new();
    let x = sym_input(&mut g, vec![s(0)]);
    let y = sym_input(&mut g, vec![s(1)]);
    let (m, rels) = run(&g, "torch.add", vec![Arg::Node(x), Arg::Node(y)], &[4, 4]);
    assert_eq!(sizes(&m), ["s0"]);
    let rels: Vec<String> = rels.iter().map(|r| r.to_string()).collect();
    assert_eq!(rels, ["s0 == s1"]);
    let target = Target::Function("torch.add".into());
    let r = infer_symbolic(
        &InferCtx::default(),
        &g,
        &target,
        &[Arg::Node(x), Arg::Node(y)],
        &[],
        Symbols::hints(&[4, 5]),
    );
    assert!(matches!(r, Err(InferError::Invalid(_))), "{r:?}");
    // One symbol twice: nothing to require.
    let (m, rels) = run(&g, "torch.add", vec![Arg::Node(x), Arg::Node(x)], &[4, 5]);
    assert_eq!(sizes(&m), ["s0"]);
    assert!(rels.is_empty());
    // `[s0, 3] - [s1, s2]` (an MLP's output less its target): `s0 == s1`, `s2 == 3`.
    let mut g = Graph::new();
    let y = sym_input(&mut g, vec![s(0), Dim::Known(3)]);
    let t = sym_input(&mut g, vec![s(1), s(2)]);
    let (m, rels) = run(
        &g,
        "torch.sub",
        vec![Arg::Node(y), Arg::Node(t)],
        &[5, 5, 3],
    );
    // (`s2` stands for 3 under the relations: the tracer's replacement writes it so.)
    assert_eq!(sizes(&m), ["s0", "s2"]);
    let mut rels: Vec<String> = rels.iter().map(|r| r.to_string()).collect();
    rels.sort();
    assert_eq!(rels, ["3 == s2", "s0 == s1"]);
}

mod more_tests {
    use super::*;
    use crate::meta::{DType, Device};

    #[test]
    fn linear_over_a_symbolic_sequence() {
        let mut g = Graph::new();
        let sizes = vec![Dim::Known(1), Dim::Sym(SymExpr::symbol(0)), Dim::Known(32)];
        let strides = contiguous(&sizes);
        let x = g.placeholder(
            "x",
            NodeMeta::Tensor(TensorMeta {
                dtype: DType::Float32,
                device: Device::cpu(),
                sizes,
                strides,
                requires_grad: false,
            }),
        );
        let w = g.placeholder(
            "w",
            NodeMeta::Tensor(TensorMeta::contiguous(
                DType::Float32,
                Device::cpu(),
                &[96, 32],
            )),
        );
        let target = Target::Function("torch._C._nn.linear".into());
        let concrete = with_assignment(&[9], || {
            run_handlers(
                &InferCtx::default(),
                &g,
                &target,
                &[Arg::Node(x), Arg::Node(w)],
                &[],
            )
        });
        eprintln!("{concrete:?}");
        let r = infer_symbolic(
            &InferCtx::default(),
            &g,
            &target,
            &[Arg::Node(x), Arg::Node(w)],
            &[],
            Symbols::hints(&[9]),
        );
        assert!(r.is_ok(), "{r:?}");
    }
}

/// `F.cross_entropy` of `[s0, 3]` logits and `[s1]` class indices (equal hints): the loss
/// needs the batch sizes equal, which is known before probing, so the probes keep them one
/// value and the answer carries `s0 == s1` for the shape environment to unify (before session
/// 30 the probes moved them apart, the loss refused, and both symbols were specialized).
#[test]
fn a_loss_unifies_its_input_and_target_batch_sizes() {
    let mut g = Graph::new();
    let x = sym_input(&mut g, vec![s(0), Dim::Known(3)]);
    let y = g.placeholder(
        "y",
        NodeMeta::Tensor(TensorMeta {
            dtype: DType::Int64,
            device: Device::cpu(),
            sizes: vec![s(1)],
            strides: vec![Dim::Known(1)],
            requires_grad: false,
        }),
    );
    let (m, rels) = run(
        &g,
        "torch.nn.functional.cross_entropy",
        vec![Arg::Node(x), Arg::Node(y)],
        &[7, 7],
    );
    assert!(m.tensor().unwrap().sizes.is_empty());
    let text: Vec<String> = rels.iter().map(|r| r.to_string()).collect();
    assert!(
        text.iter().any(|r| r == "s0 == s1" || r == "s1 == s0"),
        "{text:?}"
    );
}

/// An in-place op whose only tensor is its receiver asks nothing of the receiver's sizes
/// (torch guards nothing there); its out-of-place twin guards a derived size `!= 1`, as
/// torch's broadcast does.
#[test]
fn an_in_place_op_on_one_tensor_guards_no_size() {
    let mut g = Graph::new();
    let n = SymExpr::symbol(0).add(&SymExpr::constant(-1));
    let x = sym_input(&mut g, vec![Dim::Sym(n), Dim::Known(4)]);
    let (_, rels) = run(&g, ".mul_", vec![Arg::Node(x), Arg::Int(3)], &[5]);
    assert!(rels.is_empty(), "{rels:?}");
    let (_, rels) = run(&g, ".mul", vec![Arg::Node(x), Arg::Int(3)], &[5]);
    assert_eq!(rels.len(), 1, "{rels:?}");
    assert_eq!(rels[0].op, RelOp::Ne);
}
