//! Hand-written cases for the rules whose torch behaviour is easy to state; the bulk of the
//! checking against torch lives in `tests/infer_torch.rs`.

use super::*;
use crate::meta::TensorMeta;

fn graph_with(inputs: &[(&[i64], &[i64], DType, bool)]) -> (Graph, Vec<Arg>) {
    let mut g = Graph::new();
    let mut args = Vec::new();
    for (i, (sizes, strides, dtype, rg)) in inputs.iter().enumerate() {
        let mut m = TensorMeta::contiguous(*dtype, Device::cpu(), sizes);
        m.strides = strides
            .iter()
            .map(|&s| crate::meta::Dim::Known(s))
            .collect();
        m.requires_grad = *rg;
        args.push(Arg::Node(
            g.placeholder(&format!("x{i}"), NodeMeta::Tensor(m)),
        ));
    }
    (g, args)
}

fn tensor(meta: InferResult) -> (Vec<i64>, Vec<i64>, DType, bool) {
    let meta = meta.expect("inferred");
    let t = meta.tensor().expect("a tensor");
    (
        t.known_sizes().unwrap(),
        t.known_strides().unwrap(),
        t.dtype,
        t.requires_grad,
    )
}

fn f(name: &str) -> Target {
    Target::Function(name.into())
}

fn m(name: &str) -> Target {
    Target::Method(name.into())
}

#[test]
fn add_broadcasts_and_promotes() {
    let (g, a) = graph_with(&[
        (&[2, 1], &[1, 1], DType::Int32, false),
        (&[3], &[1], DType::Float16, true),
    ]);
    let r = tensor(infer(&g, &f("torch.add"), &a, &[]));
    assert_eq!(r, (vec![2, 3], vec![3, 1], DType::Float16, true));
}

#[test]
fn int_tensor_plus_float_scalar_is_default_float() {
    let (g, a) = graph_with(&[(&[4], &[1], DType::Int64, false)]);
    let r = tensor(infer(
        &g,
        &f("operator.add"),
        &[a[0].clone(), Arg::Float(1.5)],
        &[],
    ));
    assert_eq!(r.2, DType::Float32);
    let ctx = InferCtx {
        default_dtype: DType::Float64,
        ..InferCtx::default()
    };
    let r = infer_in(
        &ctx,
        &g,
        &f("operator.truediv"),
        &[a[0].clone(), Arg::Int(2)],
        &[],
    );
    assert_eq!(tensor(r).2, DType::Float64);
}

#[test]
fn transposed_input_gives_transposed_output() {
    let (g, a) = graph_with(&[(&[3, 2], &[1, 3], DType::Float32, false)]);
    let r = tensor(infer(&g, &m("relu"), &a, &[]));
    assert_eq!(r.1, vec![1, 3]);
}

#[test]
fn broadcast_mismatch_is_invalid() {
    let (g, a) = graph_with(&[
        (&[2, 3], &[3, 1], DType::Float32, false),
        (&[4], &[1], DType::Float32, false),
    ]);
    let err = infer(&g, &f("torch.mul"), &a, &[]).unwrap_err();
    assert_eq!(
        err,
        InferError::Invalid(
            "The size of tensor a (3) must match the size of tensor b (4) at non-singleton \
             dimension 1"
                .into()
        )
    );
}

#[test]
fn max_with_dim_is_a_pair() {
    let (g, a) = graph_with(&[(&[2, 3], &[3, 1], DType::Float32, true)]);
    let r = infer(&g, &m("max"), &[a[0].clone(), Arg::Int(1)], &[]).unwrap();
    let NodeMeta::Tuple(items) = r else { panic!() };
    assert_eq!(items.len(), 2);
    assert!(items[0].tensor().unwrap().requires_grad);
    assert_eq!(items[1].tensor().unwrap().dtype, DType::Int64);
    assert!(!items[1].tensor().unwrap().requires_grad);
}

#[test]
fn getitem_views() {
    let (g, a) = graph_with(&[(&[4, 5, 6], &[30, 6, 1], DType::Float32, false)]);
    let idx = Arg::Tuple(vec![
        Arg::Int(-1),
        Arg::None,
        Arg::Slice(
            Box::new(Arg::Int(1)),
            Box::new(Arg::None),
            Box::new(Arg::Int(2)),
        ),
    ]);
    let r = tensor(infer(&g, &f("operator.getitem"), &[a[0].clone(), idx], &[]));
    assert_eq!((r.0, r.1), (vec![1, 2, 6], vec![30, 12, 1]));
}

#[test]
fn symbolic_sizes_are_unsupported() {
    let mut g = Graph::new();
    let mut meta = TensorMeta::contiguous(DType::Float32, Device::cpu(), &[2]);
    meta.sizes[0] = crate::meta::Dim::Sym(crate::sym::SymExpr::symbol(0));
    let x = g.placeholder("x", NodeMeta::Tensor(meta));
    assert_eq!(
        infer(&g, &m("relu"), &[Arg::Node(x)], &[]),
        Err(InferError::Unsupported)
    );
}

#[test]
fn unknown_kwarg_is_unsupported() {
    let (g, a) = graph_with(&[(&[2], &[1], DType::Float32, false)]);
    let kw = vec![("out".to_string(), a[0].clone())];
    assert_eq!(
        infer(&g, &f("torch.add"), &[a[0].clone(), a[0].clone()], &kw),
        Err(InferError::Unsupported)
    );
}

#[test]
fn no_grad_context() {
    let (g, a) = graph_with(&[(&[2], &[1], DType::Float32, true)]);
    let ctx = InferCtx {
        grad_enabled: false,
        ..InferCtx::default()
    };
    let r = tensor(infer_in(&ctx, &g, &m("sin"), &a, &[]));
    assert!(!r.3);
}

mod properties {
    use super::*;
    use proptest::prelude::*;

    /// Broadcasting as the NumPy documentation states it, written independently of `layout`.
    fn reference(a: &[i64], b: &[i64]) -> Option<Vec<i64>> {
        let n = a.len().max(b.len());
        let pad = |s: &[i64]| -> Vec<i64> {
            let mut v = vec![1; n - s.len()];
            v.extend_from_slice(s);
            v
        };
        let (a, b) = (pad(a), pad(b));
        a.iter()
            .zip(&b)
            .map(|(&x, &y)| match (x, y) {
                (x, y) if x == y => Some(x),
                (1, y) => Some(y),
                (x, 1) => Some(x),
                _ => None,
            })
            .collect()
    }

    fn shape() -> impl Strategy<Value = Vec<i64>> {
        prop::collection::vec(prop_oneof![3 => 1i64..4, 1 => Just(0i64)], 0..5)
    }

    fn add(a: &[i64], b: &[i64]) -> InferResult {
        let sa = crate::infer::layout::contiguous_strides(a);
        let sb = crate::infer::layout::contiguous_strides(b);
        let (g, args) = graph_with(&[
            (a, &sa, DType::Float32, false),
            (b, &sb, DType::Int32, false),
        ]);
        infer(&g, &f("torch.add"), &args, &[])
    }

    proptest! {
        #[test]
        fn broadcast_is_commutative_and_matches_reference(a in shape(), b in shape()) {
            let ab = add(&a, &b);
            let ba = add(&b, &a);
            match reference(&a, &b) {
                Some(expected) => {
                    let (s1, _, d1, _) = tensor(ab);
                    let (s2, _, d2, _) = tensor(ba);
                    prop_assert_eq!(&s1, &expected);
                    prop_assert_eq!(&s2, &expected);
                    prop_assert_eq!(d1, d2);
                }
                None => {
                    prop_assert!(matches!(ab, Err(InferError::Invalid(_))));
                    prop_assert!(matches!(ba, Err(InferError::Invalid(_))));
                }
            }
        }

        #[test]
        fn view_round_trips(a in prop::collection::vec(1i64..4, 0..4), perm_seed in any::<u64>()) {
            // Viewing a contiguous tensor as its flat size and back restores the strides.
            let st = crate::infer::layout::contiguous_strides(&a);
            let n: i64 = a.iter().product();
            let flat = crate::infer::view::view_strides(&a, &st, &[n]).unwrap();
            prop_assert_eq!(flat, vec![1]);
            let back = crate::infer::view::view_strides(&[n], &[1], &a).unwrap();
            prop_assert_eq!(back, st.clone());
            // A permuted tensor keeps its layout under `preserve_format` copies.
            let mut order: Vec<usize> = (0..a.len()).collect();
            let mut seed = perm_seed;
            for i in (1..order.len()).rev() {
                order.swap(i, (seed % (i as u64 + 1)) as usize);
                seed /= i as u64 + 1;
            }
            let sizes: Vec<i64> = order.iter().map(|&d| a[d]).collect();
            let strides: Vec<i64> = order.iter().map(|&d| st[d]).collect();
            prop_assert_eq!(
                crate::infer::layout::preserved_strides(&sizes, &strides),
                strides
            );
        }
    }
}
