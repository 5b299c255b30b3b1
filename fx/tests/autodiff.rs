//! Structural invariants of the joint graph (`fx::autodiff`); the values of every rule are
//! checked against torch.autograd in `tests/test_aot_rules.py`.

use std::collections::HashMap;

use fx::autodiff::{joint, AutodiffError, Saved};
use fx::{Arg, DType, Device, Graph, NodeKind, NodeMeta, Target, TensorMeta};

fn t(sizes: &[i64], grad: bool) -> NodeMeta {
    let mut m = TensorMeta::contiguous(DType::Float32, Device::cpu(), sizes);
    m.requires_grad = grad;
    NodeMeta::Tensor(m)
}

/// `dropout(x) * 2`: the draw happens once, in the forward; the backward reads the saved
/// noise and contains no random op (the partitioner never recomputes a draw).
#[test]
fn dropout_noise_is_saved_never_redrawn() {
    let mut g = Graph::new();
    let x = g.placeholder("x", t(&[4, 8], true));
    let d = g.call(
        "dropout",
        Target::Function("torch.nn.functional.dropout".into()),
        vec![Arg::Node(x), Arg::Float(0.5), Arg::Bool(true)],
        vec![],
        t(&[4, 8], true),
    );
    let y = g.call(
        "mul",
        Target::Method("mul".into()),
        vec![Arg::Node(d), Arg::Float(2.0)],
        vec![],
        t(&[4, 8], true),
    );
    g.output(vec![Arg::Node(y)]);
    let j = joint(&g, &[true], &HashMap::new(), &HashMap::new()).unwrap();
    assert_eq!(j.grad_inputs, vec![0]);
    assert_eq!(j.saved.len(), 1);
    assert!(matches!(j.saved[0], Saved::Output(1)));
    let random = |g: &Graph| {
        g.nodes().any(|(_, n)| match &n.kind {
            NodeKind::Call { target, .. } => fx::ops::is_random(target),
            _ => false,
        })
    };
    assert!(!random(&j.backward));
    assert!(random(&j.forward));
    assert_eq!(j.saved_bytes, 4 * 8 * 4);
}

/// An op without a rule names itself; no backward is made.
#[test]
fn no_rule_names_the_op() {
    let mut g = Graph::new();
    let x = g.placeholder("x", t(&[5], true));
    let c = g.call(
        "cumprod",
        Target::Method("cumprod".into()),
        vec![Arg::Node(x), Arg::Int(0)],
        vec![],
        t(&[5], true),
    );
    g.output(vec![Arg::Node(c)]);
    let e = joint(&g, &[true], &HashMap::new(), &HashMap::new()).unwrap_err();
    assert_eq!(e, AutodiffError::NoRule("Tensor.cumprod".into()));
}

/// Inputs that do not require grad get no gradient and are not differentiated through.
#[test]
fn only_inputs_that_require_grad_get_gradients() {
    let mut g = Graph::new();
    let x = g.placeholder("x", t(&[3, 4], false));
    let w = g.placeholder("w", t(&[4, 2], true));
    let m = g.call(
        "matmul",
        Target::Method("matmul".into()),
        vec![Arg::Node(x), Arg::Node(w)],
        vec![],
        t(&[3, 2], true),
    );
    g.output(vec![Arg::Node(m)]);
    let j = joint(&g, &[false, true], &HashMap::new(), &HashMap::new()).unwrap();
    assert_eq!(j.grad_inputs, vec![1]);
    // The weight's gradient reads x, never w.
    assert_eq!(j.saved, vec![Saved::Input(0)]);
}

/// `F.batch_norm(x, rm, rv, w, b, training=True)`: the backward normalizes with the batch's
/// statistics computed again from the saved input; it never calls `batch_norm` (that would
/// write the running stats a second time) and never reads the running stats.
#[test]
fn batch_norm_training_backward_reads_no_running_stats() {
    let mut g = Graph::new();
    let x = g.placeholder("x", t(&[4, 3, 5, 5], true));
    let rm = g.placeholder("rm", t(&[3], false));
    let rv = g.placeholder("rv", t(&[3], false));
    let w = g.placeholder("w", t(&[3], true));
    let b = g.placeholder("b", t(&[3], true));
    let y = g.call(
        "batch_norm",
        Target::Function("torch.nn.functional.batch_norm".into()),
        vec![
            Arg::Node(x),
            Arg::Node(rm),
            Arg::Node(rv),
            Arg::Node(w),
            Arg::Node(b),
            Arg::Bool(true),
            Arg::Float(0.1),
            Arg::Float(1e-5),
        ],
        vec![],
        t(&[4, 3, 5, 5], true),
    );
    g.output(vec![Arg::Node(y)]);
    let j = joint(
        &g,
        &[true, false, false, true, true],
        &HashMap::new(),
        &HashMap::new(),
    )
    .unwrap();
    assert_eq!(j.grad_inputs, vec![0, 3, 4]);
    assert!(!j.backward.nodes().any(|(_, n)| match &n.kind {
        NodeKind::Call { target, .. } => target.name().contains("batch_norm"),
        _ => false,
    }));
    assert!(
        !j.saved.contains(&Saved::Input(1)) && !j.saved.contains(&Saved::Input(2)),
        "{:?}",
        j.saved
    );
}

/// A matrix applied over batch dims (`[2, 3, 4] @ [4, 5]`): the weight's gradient is one `mm`
/// over the folded rows, as eager's autograd computes it; a batched product of 2 copies summed
/// afterwards (what the general rule gives) ran as `bmm` plus a reduction on the GPU.
#[test]
fn weight_gradient_of_a_batched_matmul_folds_the_batch_into_one_mm() {
    let mut g = Graph::new();
    let x = g.placeholder("x", t(&[2, 3, 4], false));
    let w = g.placeholder("w", t(&[4, 5], true));
    let m = g.call(
        "matmul",
        Target::Method("matmul".into()),
        vec![Arg::Node(x), Arg::Node(w)],
        vec![],
        t(&[2, 3, 5], true),
    );
    g.output(vec![Arg::Node(m)]);
    let j = joint(&g, &[false, true], &HashMap::new(), &HashMap::new()).unwrap();
    let calls: Vec<String> = j
        .backward
        .nodes()
        .filter_map(|(_, n)| match &n.kind {
            NodeKind::Call { target, .. } => Some(target.name().to_string()),
            _ => None,
        })
        .collect();
    assert!(calls.iter().any(|c| c == "mm"), "{calls:?}");
    assert!(
        !calls
            .iter()
            .any(|c| c.contains("matmul") || c.contains("bmm") || c == "sum"),
        "{calls:?}"
    );
}

fn attention_graph(device: Device, dtype: DType, causal: bool) -> Graph {
    let meta = |sizes: &[i64]| {
        let mut m = TensorMeta::contiguous(dtype, device.clone(), sizes);
        m.requires_grad = true;
        NodeMeta::Tensor(m)
    };
    let mut g = Graph::new();
    let q = g.placeholder("q", meta(&[2, 4, 8, 16]));
    let k = g.placeholder("k", meta(&[2, 4, 8, 16]));
    let v = g.placeholder("v", meta(&[2, 4, 8, 16]));
    let o = g.call(
        "attn",
        Target::Function("torch.nn.functional.scaled_dot_product_attention".into()),
        vec![Arg::Node(q), Arg::Node(k), Arg::Node(v)],
        vec![("is_causal".into(), Arg::Bool(causal))],
        meta(&[2, 4, 8, 16]),
    );
    g.output(vec![Arg::Node(o)]);
    g
}

fn targets(g: &Graph) -> Vec<String> {
    g.nodes()
        .filter_map(|(_, n)| match &n.kind {
            NodeKind::Call { target, .. } => Some(target.name().to_string()),
            _ => None,
        })
        .collect()
}

/// Attention in training, as torch.compile does it: the forward is the fused op returning
/// the output and its logsumexp, both saved; the backward is one fused backward call (no
/// batched products, no softmax over the `[L, S]` scores). On CUDA the pair are the host calls
/// that ask torch for the device's backend.
#[test]
fn attention_backward_is_one_fused_call() {
    use fx::autodiff::fused_attention::{
        CUDA_BACKWARD, CUDA_FORWARD, FLASH_CPU, FLASH_CPU_BACKWARD,
    };
    let cuda = Device {
        kind: "cuda".into(),
        index: Some(0),
    };
    // (device, dtype, forward, backward, logsumexp rows: the CUDA form pads them to 32)
    for (device, dtype, fwd, bwd, rows) in [
        (
            Device::cpu(),
            DType::Float32,
            FLASH_CPU,
            FLASH_CPU_BACKWARD,
            8,
        ),
        (cuda, DType::BFloat16, CUDA_FORWARD, CUDA_BACKWARD, 32),
    ] {
        let g = attention_graph(device, dtype, true);
        let j = joint(&g, &[true, true, true], &HashMap::new(), &HashMap::new()).unwrap();
        let (ft, bt) = (targets(&j.forward), targets(&j.backward));
        assert!(ft.iter().any(|t| t == fwd), "{ft:?}");
        assert_eq!(bt.iter().filter(|t| *t == bwd).count(), 1, "{bt:?}");
        assert!(
            !bt.iter()
                .any(|t| t.contains("matmul") || t.contains("softmax")),
            "{bt:?}"
        );
        assert_eq!(j.grad_inputs, vec![0, 1, 2]);
        // q, k, v (inputs) and the two outputs of the fused forward.
        assert_eq!(j.saved.len(), 5);
        let out = 2 * 4 * 8 * 16 * dtype.itemsize() as u64;
        assert_eq!(j.saved_bytes, out + 2 * 4 * rows * 4);
    }
}

/// The CUDA backward's gradients are declared laid out as torch's backends allocate them
/// (`empty_like` of each operand): heads split from a projection's rows (`[B, L, 3 * H * E]`
/// viewed `[B, H, L, E]`, GPT-2's q/k/v) give `[B, L, H, E]`-ordered gradients, a contiguous
/// operand a contiguous one. Declared contiguous, the host copied each of cuDNN's gradients.
#[test]
fn cuda_attention_gradients_are_laid_out_like_their_operands() {
    use fx::autodiff::fused_attention::CUDA_BACKWARD;
    let cuda = Device {
        kind: "cuda".into(),
        index: Some(0),
    };
    let (b, h, l, e) = (2i64, 4i64, 8i64, 16i64);
    let split = vec![l * 3 * h * e, e, 3 * h * e, 1];
    let contiguous = vec![h * l * e, l * e, e, 1];
    let blhe = vec![l * h * e, e, h * e, 1];
    for (operand, want) in [(split, blhe), (contiguous.clone(), contiguous)] {
        let meta = |strides: &[i64]| {
            let mut m = TensorMeta::contiguous(DType::BFloat16, cuda.clone(), &[b, h, l, e]);
            m.strides = strides.iter().map(|&s| fx::Dim::Known(s)).collect();
            m.requires_grad = true;
            NodeMeta::Tensor(m)
        };
        let mut g = Graph::new();
        let q = g.placeholder("q", meta(&operand));
        let k = g.placeholder("k", meta(&operand));
        let v = g.placeholder("v", meta(&operand));
        let o = g.call(
            "attn",
            Target::Function("torch.nn.functional.scaled_dot_product_attention".into()),
            vec![Arg::Node(q), Arg::Node(k), Arg::Node(v)],
            vec![("is_causal".into(), Arg::Bool(true))],
            meta(&[h * l * e, l * e, e, 1]),
        );
        g.output(vec![Arg::Node(o)]);
        let j = joint(&g, &[true, true, true], &HashMap::new(), &HashMap::new()).unwrap();
        let (_, node) = j
            .backward
            .nodes()
            .find(|(_, n)| matches!(&n.kind, NodeKind::Call { target, .. } if target.name() == CUDA_BACKWARD))
            .expect("the fused backward");
        let NodeMeta::Tuple(parts) = &node.meta else {
            panic!("{:?}", node.meta)
        };
        for part in parts {
            let m = part.tensor().unwrap();
            assert_eq!(m.known_strides().unwrap(), want);
        }
    }
}

/// Where torch's CPU dispatch takes the math backend (3-d operands here), the math rule stays.
#[test]
fn attention_on_the_math_backend_keeps_the_math_rule() {
    let mut g = Graph::new();
    let q = g.placeholder("q", t(&[4, 8, 16], true));
    let k = g.placeholder("k", t(&[4, 8, 16], true));
    let v = g.placeholder("v", t(&[4, 8, 16], true));
    let o = g.call(
        "attn",
        Target::Function("torch.nn.functional.scaled_dot_product_attention".into()),
        vec![Arg::Node(q), Arg::Node(k), Arg::Node(v)],
        vec![],
        t(&[4, 8, 16], true),
    );
    g.output(vec![Arg::Node(o)]);
    let j = joint(&g, &[true, true, true], &HashMap::new(), &HashMap::new()).unwrap();
    let bt = targets(&j.backward);
    assert!(!bt.iter().any(|t| t.contains("_backward")), "{bt:?}");
    assert!(bt.iter().any(|t| t.contains("matmul")), "{bt:?}");
}

/// `cross_entropy(linear(h, w).float(), t)` written out (the inductor's form) over bf16
/// logits, GPT-2's LM head under autocast: the target's logit is one read per row of the
/// stored bf16 product (`getitem` of `reshape(linear)`, then the cast), not a masked sum
/// over the float32 logits; the forward's only row reduction is the `logsumexp`, which is
/// saved (N values) with the bf16 product, and the backward is one pointwise pass: no
/// softmax, no row reduction over the classes.
#[test]
fn cross_entropy_over_a_stored_product_reads_one_logit_per_row() {
    let (n_rows, classes) = (6i64, 50i64);
    let meta = |dtype: DType, sizes: &[i64], grad: bool| {
        let mut m = TensorMeta::contiguous(dtype, Device::cpu(), sizes);
        m.requires_grad = grad;
        NodeMeta::Tensor(m)
    };
    let mut g = Graph::new();
    let h = g.placeholder("h", meta(DType::BFloat16, &[n_rows, 8], true));
    let w = g.placeholder("w", meta(DType::BFloat16, &[classes, 8], true));
    let t = g.placeholder("t", meta(DType::Int64, &[n_rows], false));
    let logits = g.call(
        "linear",
        Target::Function("torch.nn.functional.linear".into()),
        vec![Arg::Node(h), Arg::Node(w)],
        vec![],
        meta(DType::BFloat16, &[n_rows, classes], true),
    );
    let x = g.call(
        "float",
        Target::Method("float".into()),
        vec![Arg::Node(logits)],
        vec![],
        meta(DType::Float32, &[n_rows, classes], true),
    );
    let loss = g.call(
        "cross_entropy",
        Target::Function("torch.nn.functional.cross_entropy".into()),
        vec![Arg::Node(x), Arg::Node(t)],
        vec![("ignore_index".into(), Arg::Int(-100))],
        meta(DType::Float32, &[], true),
    );
    g.output(vec![Arg::Node(loss)]);
    let j = fx::autodiff::joint_with(
        &g,
        &[true, true, false],
        &HashMap::new(),
        &HashMap::new(),
        true,
        &fx::autodiff::writes::Kept::new(),
    )
    .unwrap();
    let (ft, bt) = (targets(&j.forward), targets(&j.backward));
    assert!(ft.iter().any(|t| t == "operator.getitem"), "{ft:?}");
    assert!(!ft.iter().any(|t| t.contains("cross_entropy")), "{ft:?}");
    // The one reduction over the classes is the logsumexp; the sums left are over rows.
    let full_rows = |g: &Graph, name: &str| {
        g.nodes()
            .filter(|(_, n)| match &n.kind {
                NodeKind::Call { target, args, .. } => {
                    target.name().ends_with(name)
                        && matches!(args.first(), Some(Arg::Node(a))
                            if g.node(*a).meta.tensor().is_some_and(|m| m.sizes.len() == 2
                                && m.known_sizes() == Some(vec![n_rows, classes])))
                }
                _ => false,
            })
            .count()
    };
    assert_eq!(full_rows(&j.forward, "logsumexp"), 1, "{ft:?}");
    assert_eq!(full_rows(&j.forward, "sum"), 0, "{ft:?}");
    assert!(
        !bt.iter()
            .any(|t| t.contains("softmax") || t.contains("logsumexp")),
        "{bt:?}"
    );
    assert_eq!(full_rows(&j.backward, "sum"), 0, "{bt:?}");
    // Saved: the bf16 product, the per-row logsumexp, the targets (and the linear's inputs).
    let saved: Vec<(DType, Vec<i64>)> = j
        .saved_nodes
        .iter()
        .filter_map(|&s| {
            let m = j.forward.node(s).meta.tensor()?;
            Some((m.dtype, m.known_sizes()?))
        })
        .collect();
    assert!(
        saved.contains(&(DType::BFloat16, vec![n_rows, classes])),
        "{saved:?}"
    );
    assert!(
        saved.contains(&(DType::Float32, vec![n_rows, 1])),
        "{saved:?}"
    );
    assert!(
        !saved.contains(&(DType::Float32, vec![n_rows, classes])),
        "{saved:?}"
    );
}
