//! The shaped rules against torch's arithmetic for each op, written out.

use crate::graph::{Arg, Graph, Target};
use crate::infer::symbolic::tests::{s, strided_input};
use crate::infer::symbolic::{evaluate, infer_symbolic, Symbols};
use crate::infer::{InferCtx, InferError};
use crate::meta::{DType, Device, NodeMeta, TensorMeta};
use crate::sym::Relation;

/// Sizes and strides at a point.
type Layout = (Vec<i64>, Vec<i64>);

/// `target(args)` over one `[s0, s1]` input with hints `[5, 9]`, checked by `eval` (torch's
/// arithmetic for the op, written out: sizes and strides at a point).
fn infer(
    target: Target,
    extra: Vec<Arg>,
    eval: &dyn Fn(&[i64]) -> Layout,
) -> Result<(NodeMeta, Vec<Relation>), InferError> {
    let mut g = Graph::new();
    let x = strided_input(&mut g, vec![s(0), s(1)], None);
    let mut args = vec![Arg::Node(x)];
    args.extend(extra);
    let external = |pt: &[i64]| -> Result<NodeMeta, InferError> {
        let (sizes, strides) = eval(pt);
        if sizes.iter().any(|&v| v < 0) {
            return Err(InferError::Invalid("negative".into()));
        }
        let mut t = TensorMeta::contiguous(DType::Float32, Device::cpu(), &sizes);
        t.strides = strides.into_iter().map(crate::meta::Dim::Known).collect();
        Ok(NodeMeta::Tensor(t))
    };
    infer_symbolic(
        &InferCtx::default(),
        &g,
        &target,
        &args,
        &[],
        Symbols {
            external: Some(&external),
            ..Symbols::hints(&[5, 9])
        },
    )
}

fn at(m: &NodeMeta, p: &[i64]) -> Layout {
    let t = evaluate(m, p).unwrap();
    let t = t.tensor().unwrap();
    (t.known_sizes().unwrap(), t.known_strides().unwrap())
}

/// `x.unfold(1, 3, 2)`: `(s1 - 3) // 2 + 1` windows strided by twice the row's step, the
/// window fitting guarded.
#[test]
fn unfold_windows_are_a_floor_division() {
    let eval = |p: &[i64]| {
        (
            vec![p[0], (p[1] - 3).div_euclid(2) + 1, 3],
            vec![p[1], 2, 1],
        )
    };
    let target = Target::Method("unfold".into());
    let args = vec![Arg::Int(1), Arg::Int(3), Arg::Int(2)];
    let (m, rels) = infer(target, args, &eval).unwrap();
    for p in [[5, 9], [2, 3], [7, 4], [3, 20]] {
        assert_eq!(at(&m, &p), eval(&p), "at {p:?}");
    }
    assert_eq!(rels.len(), 1, "{rels:?}");
    assert_eq!(rels[0].eval(&|k| [5, 2][k as usize]), Some(false));
}

/// `torch.diagonal(x)` of a wide or tall matrix: the shorter side, a `min` valid for both
/// (no guard on which side is shorter).
#[test]
fn diagonal_length_is_a_min_of_the_sides() {
    let eval = |p: &[i64]| (vec![p[0].min(p[1])], vec![p[1] + 1]);
    let target = Target::Function("torch.diagonal".into());
    let (m, rels) = infer(target, vec![], &eval).unwrap();
    for p in [[5, 9], [9, 5], [2, 2], [30, 7]] {
        assert_eq!(at(&m, &p), eval(&p), "at {p:?}");
    }
    assert!(
        rels.iter()
            .all(|r| r.eval(&|k| [9, 5][k as usize]) == Some(true)),
        "{rels:?}"
    );
}

/// `x.repeat(3, 2, 1)`: a new leading dim of 3, then each size times its repeat.
#[test]
fn repeat_multiplies_sizes() {
    let eval = |p: &[i64]| (vec![3, p[0] * 2, p[1]], vec![p[0] * 2 * p[1], p[1], 1]);
    let target = Target::Method("repeat".into());
    let args = vec![Arg::Int(3), Arg::Int(2), Arg::Int(1)];
    let (m, _) = infer(target, args, &eval).unwrap();
    for p in [[5, 9], [2, 3], [11, 4]] {
        assert_eq!(at(&m, &p), eval(&p), "at {p:?}");
    }
}

/// `x.repeat_interleave(3, 0)` and `x.repeat_interleave(2)`: the size along `dim`, or
/// the element count, times the repeats.
#[test]
fn repeat_interleave_multiplies_a_size_or_the_count() {
    let target = Target::Method("repeat_interleave".into());
    let eval = |p: &[i64]| (vec![p[0] * 3, p[1]], vec![p[1], 1]);
    let (m, _) = infer(target.clone(), vec![Arg::Int(3), Arg::Int(0)], &eval).unwrap();
    for p in [[5, 9], [2, 3], [11, 4]] {
        assert_eq!(at(&m, &p), eval(&p), "at {p:?}");
    }
    let eval = |p: &[i64]| (vec![p[0] * p[1] * 2], vec![1]);
    let (m, _) = infer(target, vec![Arg::Int(2)], &eval).unwrap();
    for p in [[5, 9], [2, 3], [11, 4]] {
        assert_eq!(at(&m, &p), eval(&p), "at {p:?}");
    }
}

/// A wrong rule is caught: the concrete evaluation disagrees at a probe point, and the
/// answer is `Unsupported` (the op specializes), never a guess.
#[test]
fn an_answer_torch_disagrees_with_is_refused() {
    let eval = |p: &[i64]| (vec![p[0], p[1] - 1, 2], vec![p[1], 1, 1]);
    let target = Target::Method("unfold".into());
    let args = vec![Arg::Int(1), Arg::Int(3), Arg::Int(1)];
    assert!(matches!(
        infer(target, args, &eval),
        Err(InferError::Unsupported)
    ));
}
