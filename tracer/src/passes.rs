//! Graph passes the tracer runs before handing a graph to a backend.

use fx::{Arg, DType, Graph, NodeKind, NodeMeta, Target};

pub fn dead_code_elimination(graph: &mut Graph) {
    fx::passes::eliminate_dead_code(graph, |_, n| keeps_unused(&n.kind));
}

/// Calls the tracer puts in the graph for what they do, not for a value: grad-mode, autocast,
/// inference-mode and default-dtype switches change what later ops compute; a gradient hook's
/// registration changes what backward computes. They have no users and must stay.
pub fn keeps_unused(kind: &NodeKind) -> bool {
    match kind {
        NodeKind::Call { target, .. } => {
            target.name() == "torch._C._set_grad_enabled"
                || target.name() == crate::output::AUTOCAST_TARGET
                || target.name() == crate::output::DEFAULT_DTYPE_TARGET
                || target.name() == crate::output::INFERENCE_ENTER_TARGET
                || target.name() == crate::output::INFERENCE_EXIT_TARGET
                || target.name() == crate::output::TENSOR_HOOK_TARGET
        }
        _ => false,
    }
}

/// A float attention mask of another dtype than the queries', on CUDA, cast to the queries'
/// dtype before `scaled_dot_product_attention`. Eager's math form adds the mask into the
/// scores in place, in their dtype; eager's CUDA dispatch hands such a mask to torch 2.11's
/// cuDNN kernel as it is, which reads it as the queries' dtype and answers NaN rows (upstream
/// #191612), and a graph calling torch's attention would inherit that. Cast, every backend
/// computes what the math form means.
///
/// On the CPU, float64 queries beside a float32 mask (torch accepts a float32 mask whatever
/// the queries' dtype) are cast too: torch 2.11's CPU kernel answers values up to 2.5 away from
/// the math form on an AVX2 machine (session 24, `scripts/sdpa_cpu_mask_dtypes.py`), and its
/// backward then disagrees with the forward's own finite differences. Widening to float64 is
/// exact, so the cast changes nothing where the kernel is right.
pub fn cast_attention_masks(graph: &mut Graph) {
    let calls: Vec<_> = graph
        .nodes()
        .filter_map(|(id, n)| match &n.kind {
            NodeKind::Call {
                target: Target::Function(p),
                args,
                kwargs,
            } if p.ends_with("scaled_dot_product_attention") => {
                Some((id, p.clone(), args.clone(), kwargs.clone()))
            }
            _ => None,
        })
        .collect();
    for (id, path, mut args, mut kwargs) in calls {
        let query = match args.first() {
            Some(Arg::Node(q)) => graph.node(*q).meta.tensor().cloned(),
            _ => None,
        };
        let Some(query) = query.filter(|q| q.device.kind == "cuda" || q.dtype == DType::Float64)
        else {
            continue;
        };
        let slot = match kwargs.iter().position(|(k, _)| k == "attn_mask") {
            Some(i) => &mut kwargs[i].1,
            None => match args.get_mut(3) {
                Some(a) => a,
                None => continue,
            },
        };
        let Arg::Node(m) = slot else { continue };
        let Some(mask) = graph.node(*m).meta.tensor().cloned() else {
            continue;
        };
        if !mask.dtype.is_floating_point() || mask.dtype == query.dtype {
            continue;
        }
        let mut cast = mask.clone();
        cast.dtype = query.dtype;
        let c = graph.call_before(
            id,
            "attn_mask_cast",
            Target::Method("to".into()),
            vec![Arg::Node(*m), Arg::DType(query.dtype)],
            vec![],
            NodeMeta::Tensor(cast),
        );
        *slot = Arg::Node(c);
        graph.set_call(id, Target::Function(path), args, kwargs);
    }
}

pub fn python_code(graph: &Graph) -> String {
    graph.python_code("forward")
}

#[cfg(test)]
mod tests {
    use super::*;
    use fx::{Device, TensorMeta};

    fn t(dtype: DType, kind: &str, sizes: &[i64]) -> NodeMeta {
        let device = Device {
            kind: kind.into(),
            index: (kind == "cuda").then_some(0),
        };
        NodeMeta::Tensor(TensorMeta::contiguous(dtype, device, sizes))
    }

    /// `sdpa(q, k, v, attn_mask=m)` with the mask given by keyword or position.
    fn attention(device: &str, query: DType, mask: DType, keyword: bool) -> Graph {
        let mut g = Graph::new();
        let q = g.placeholder("q", t(query, device, &[1, 2, 4, 8]));
        let m = g.placeholder("m", t(mask, device, &[1, 1, 4, 4]));
        let mut args = vec![Arg::Node(q), Arg::Node(q), Arg::Node(q)];
        let mut kwargs = vec![];
        if keyword {
            kwargs.push(("attn_mask".to_string(), Arg::Node(m)));
        } else {
            args.push(Arg::Node(m));
        }
        let a = g.call(
            "sdpa",
            Target::Function("torch.nn.functional.scaled_dot_product_attention".into()),
            args,
            kwargs,
            t(query, device, &[1, 2, 4, 8]),
        );
        g.output(vec![Arg::Node(a)]);
        g
    }

    fn mask_dtype(g: &Graph) -> DType {
        let (_, call) = g
            .nodes()
            .find(|(_, n)| {
                matches!(&n.kind, NodeKind::Call { target, .. }
                    if target.name().ends_with("scaled_dot_product_attention"))
            })
            .unwrap();
        let NodeKind::Call { args, kwargs, .. } = &call.kind else {
            unreachable!()
        };
        let m = kwargs
            .iter()
            .find(|(k, _)| k == "attn_mask")
            .map(|(_, a)| a)
            .or(args.get(3))
            .unwrap();
        let Arg::Node(m) = m else { panic!() };
        g.node(*m).meta.tensor().unwrap().dtype
    }

    #[test]
    fn a_float32_mask_beside_bfloat16_queries_on_cuda_is_cast() {
        for keyword in [true, false] {
            let mut g = attention("cuda", DType::BFloat16, DType::Float32, keyword);
            cast_attention_masks(&mut g);
            assert_eq!(mask_dtype(&g), DType::BFloat16);
        }
    }

    #[test]
    fn a_float32_mask_beside_float64_queries_on_the_cpu_is_widened() {
        for keyword in [true, false] {
            let mut g = attention("cpu", DType::Float64, DType::Float32, keyword);
            cast_attention_masks(&mut g);
            assert_eq!(mask_dtype(&g), DType::Float64);
        }
    }

    #[test]
    fn other_masks_and_devices_are_left_alone() {
        for (device, query, mask) in [
            ("cpu", DType::BFloat16, DType::Float32),
            ("cpu", DType::Float16, DType::Float32),
            ("cpu", DType::Float64, DType::Bool),
            ("cuda", DType::BFloat16, DType::Bool),
            ("cuda", DType::BFloat16, DType::BFloat16),
        ] {
            let mut g = attention(device, query, mask, true);
            cast_attention_masks(&mut g);
            assert_eq!(mask_dtype(&g), mask, "{device} {mask:?}");
        }
    }
}
