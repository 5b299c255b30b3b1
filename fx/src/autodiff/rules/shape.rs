//! Views, layout changes and joins: the gradient is reshaped, permuted back, summed over
//! broadcast dims, scattered into zeros (`narrow`, `select`, basic indexing) or split (`cat`,
//! `stack`).

use super::*;

pub(super) fn rule(b: &mut Bw, c: &Call) -> Result<Option<Grads>> {
    let Call {
        out,
        sp,
        args,
        kwargs,
        g,
        ..
    } = *c;
    let name = c.name.to_string();
    let _ = (out, sp, kwargs);
    let r: Result<Grads> = match name.as_str() {
        "view" | "reshape" | "flatten" | "unflatten" | "squeeze" | "unsqueeze" | "view_as"
        | "reshape_as" | "contiguous" | "clone" => {
            let x = self_of(args)?;
            let s = b.fsizes(x)?;
            let gs = b.bsizes(g)?;
            if gs == s {
                return Ok(Some(vec![(x, g)]));
            }
            Ok(vec![(x, b.m("reshape", g, vec![ints(&s)])?)])
        }
        "to" | "float" | "double" | "half" | "bfloat16" | "type_as" => {
            // A dtype cast: the gradient is cast back (by `accumulate`); a device move has no
            // rule here.
            let x = self_of(args)?;
            if b.fmeta(x)?.device != b.fmeta(out)?.device {
                return no_rule("to (a device move)");
            }
            Ok(vec![(x, g)])
        }
        "permute" => {
            let x = self_of(args)?;
            let n = b.fsizes(x)?.len();
            let dims = varargs_ints(args).ok_or_else(|| AutodiffError::NoRule("permute".into()))?;
            let mut inv = vec![0i64; n];
            for (i, &d) in dims.iter().enumerate() {
                inv[wrap(d, n)?] = i as i64;
            }
            Ok(vec![(x, b.m("permute", g, vec![ints(&inv)])?)])
        }
        "transpose" => {
            let p = B::new(&["input", "dim0", "dim1"], args, kwargs, &name)?;
            let x = p
                .node("input")
                .ok_or_else(|| AutodiffError::NoRule("transpose".into()))?;
            let (d0, d1) = (p.int("dim0").unwrap_or(0), p.int("dim1").unwrap_or(1));
            Ok(vec![(
                x,
                b.m("transpose", g, vec![Arg::Int(d0), Arg::Int(d1)])?,
            )])
        }
        "t" => Ok(vec![(self_of(args)?, b.m("t", g, vec![])?)]),
        "expand" | "expand_as" | "broadcast_to" => {
            let x = self_of(args)?;
            let s = b.fsizes(x)?;
            Ok(vec![(x, b.reduce_to(g, &s)?)])
        }
        "narrow" => {
            let p = B::new(&["input", "dim", "start", "length"], args, kwargs, &name)?;
            let x = p
                .node("input")
                .ok_or_else(|| AutodiffError::NoRule("narrow".into()))?;
            let (Some(d), Some(st), Some(len)) = (p.int("dim"), p.int("start"), p.int("length"))
            else {
                return no_rule("narrow");
            };
            let xs = b.fsizes(x)?;
            let d = wrap(d, xs.len())?;
            let st = if st < 0 { st + xs[d] } else { st };
            Ok(vec![(x, slice_back(b, g, &xs, d, st, st + len, 1)?)])
        }
        "select" => {
            let p = B::new(&["input", "dim", "index"], args, kwargs, &name)?;
            let x = p
                .node("input")
                .ok_or_else(|| AutodiffError::NoRule("select".into()))?;
            let (Some(d), Some(i)) = (p.int("dim"), p.int("index")) else {
                return no_rule("select");
            };
            let xs = b.fsizes(x)?;
            let d = wrap(d, xs.len())?;
            let z = zeros(b, g, &xs)?;
            let meta = contiguous_like(b, g, &xs)?;
            let r = b.call_with_meta(
                Target::Method("select_scatter".into()),
                vec![Arg::Node(z), Arg::Node(g), Arg::Int(d as i64), Arg::Int(i)],
                meta,
            );
            Ok(vec![(x, r)])
        }
        "getitem" => getitem(b, args, g),
        "pad" if sp == Spelling::Functional => pad(b, args, kwargs, g),
        "roll" => roll(b, args, kwargs, g),
        "cat" => {
            let p = B::new(&["tensors", "dim"], args, kwargs, &name)?;
            let d = p.int("dim").unwrap_or(0);
            let Some(Arg::List(ts) | Arg::Tuple(ts)) = p.get("tensors") else {
                return no_rule("cat");
            };
            let ts = ts.clone();
            let os = b.fsizes(out)?;
            let d = wrap(d, os.len())?;
            let mut off = 0i64;
            let mut r = Vec::new();
            for t in ts {
                let Arg::Node(t) = t else {
                    return no_rule("cat");
                };
                let s = b.fsizes(t)?;
                if s.len() == 1 && s[0] == 0 && os.len() != 1 {
                    continue; // a legacy empty tensor takes no part
                }
                if b.needs(t) {
                    r.push((
                        t,
                        b.m(
                            "narrow",
                            g,
                            vec![Arg::Int(d as i64), Arg::Int(off), Arg::Int(s[d])],
                        )?,
                    ));
                }
                off += s[d];
            }
            Ok(r)
        }
        "stack" => {
            let p = B::new(&["tensors", "dim"], args, kwargs, &name)?;
            let d = p.int("dim").unwrap_or(0);
            let Some(Arg::List(ts) | Arg::Tuple(ts)) = p.get("tensors") else {
                return no_rule("stack");
            };
            let ts = ts.clone();
            let os = b.fsizes(out)?;
            let d = wrap(d, os.len())?;
            let mut r = Vec::new();
            for (i, t) in ts.into_iter().enumerate() {
                let Arg::Node(t) = t else {
                    return no_rule("stack");
                };
                if b.needs(t) {
                    r.push((
                        t,
                        b.m("select", g, vec![Arg::Int(d as i64), Arg::Int(i as i64)])?,
                    ));
                }
            }
            Ok(r)
        }
        _ => return Ok(None),
    };
    r.map(Some)
}

/// The gradient of `x[start:end:step]` along `dim`: `g` scattered into zeros of `xs`.
fn slice_back(
    b: &mut Bw,
    g: NodeId,
    xs: &[i64],
    dim: usize,
    start: i64,
    end: i64,
    step: i64,
) -> Result<NodeId> {
    let z = zeros(b, g, xs)?;
    let meta = contiguous_like(b, g, xs)?;
    Ok(b.call_with_meta(
        Target::Method("slice_scatter".into()),
        vec![
            Arg::Node(z),
            Arg::Node(g),
            Arg::Int(dim as i64),
            Arg::Int(start),
            Arg::Int(end),
            Arg::Int(step),
        ],
        meta,
    ))
}

/// `x[index]` with ints, slices, `None`, `...` and index tensors: the gradient is `g` written
/// into zeros at the same index, repeated positions summed (`torchferro._aot.index_backward`,
/// one extern call).
fn getitem(b: &mut Bw, args: &[Arg], g: NodeId) -> Result<Grads> {
    let x = self_of(args)?;
    let idx = args
        .get(1)
        .cloned()
        .ok_or_else(|| AutodiffError::NoRule("getitem".into()))?;
    fn basic(a: &Arg) -> bool {
        match a {
            Arg::Int(_) | Arg::None | Arg::Ellipsis => true,
            Arg::Slice(a, b, c) => [a, b, c]
                .iter()
                .all(|v| matches!(***v, Arg::Int(_) | Arg::None)),
            Arg::Tuple(items) => items.iter().all(basic),
            _ => false,
        }
    }
    // Advanced indexing (tensor or list indices): the index tensors are saved and the helper
    // accumulates repeated positions (`index_put` with `accumulate`).
    let idx = if basic(&idx) { idx } else { b.map_arg(&idx) };
    let xs = b.fsizes(x)?;
    let meta = contiguous_like(b, g, &xs)?;
    let r = b.call_with_meta(
        Target::Function("torchferro._aot.index_backward".into()),
        vec![Arg::Node(g), ints(&xs), idx],
        meta,
    );
    Ok(vec![(x, r)])
}

/// `F.pad` in `constant` mode (`constant_pad_nd`: derivatives.yaml's `constant_pad_nd_backward`
/// is the gradient padded by the negated widths): with widths `>= 0` that is a narrow of each
/// padded dim (views the kernels read in place, as swin's window padding needs); a negative
/// width (a crop) pads the gradient back with zeros through `F.pad` itself.
fn pad(b: &mut Bw, args: &[Arg], kwargs: &[(String, Arg)], g: NodeId) -> Result<Grads> {
    let p = B::new(&["input", "pad", "mode", "value"], args, kwargs, "pad")?;
    let x = p
        .node("input")
        .ok_or_else(|| AutodiffError::NoRule("pad".into()))?;
    if p.str("mode").is_some_and(|m| m != "constant") {
        return no_rule(format!("pad(mode={:?})", p.str("mode").unwrap_or("")));
    }
    let Some(widths) = p.int_list("pad") else {
        return no_rule("pad with symbolic widths");
    };
    let xs = b.fsizes(x)?;
    if widths.len() % 2 != 0 || widths.len() / 2 > xs.len() {
        return no_rule("pad widths");
    }
    if widths.iter().any(|&w| w < 0) {
        let neg: Vec<Arg> = widths.iter().map(|&w| Arg::Int(-w)).collect();
        // `fx::infer` has no rule for `pad`: the result has the input's sizes.
        let gm = b.bmeta(g)?;
        let gx = b.call_with_meta(
            Target::Function("torch.nn.functional.pad".into()),
            vec![Arg::Node(g), Arg::List(neg)],
            TensorMeta::contiguous(gm.dtype, gm.device, &xs),
        );
        return Ok(vec![(x, gx)]);
    }
    let mut gx = g;
    for (i, pair) in widths.chunks(2).enumerate() {
        let d = xs.len() - 1 - i;
        if pair[0] != 0 || pair[1] != 0 {
            gx = b.m(
                "narrow",
                gx,
                vec![Arg::Int(d as i64), Arg::Int(pair[0]), Arg::Int(xs[d])],
            )?;
        }
    }
    Ok(vec![(x, gx)])
}

/// `roll` (derivatives.yaml: `grad.roll(fmap(reverse_list(shifts), negate), reverse_list(dims))`,
/// which is the gradient rolled back by the negated shifts over the same dims).
fn roll(b: &mut Bw, args: &[Arg], kwargs: &[(String, Arg)], g: NodeId) -> Result<Grads> {
    let p = B::new(&["input", "shifts", "dims"], args, kwargs, "roll")?;
    let x = p
        .node("input")
        .ok_or_else(|| AutodiffError::NoRule("roll".into()))?;
    let Some(shifts) = p.int_list("shifts") else {
        return no_rule("roll with symbolic shifts");
    };
    let neg: Vec<i64> = shifts.iter().map(|s| -s).collect();
    let mut a = vec![Arg::Node(g), ints(&neg)];
    if let Some(dims) = p.int_list("dims") {
        a.push(ints(&dims));
    }
    // `fx::infer` has no rule for `roll`: the result has the input's sizes.
    let gm = b.bmeta(g)?;
    let xs = b.fsizes(x)?;
    let gx = b.call_with_meta(
        Target::Function("torch.roll".into()),
        a,
        TensorMeta::contiguous(gm.dtype, gm.device, &xs),
    );
    Ok(vec![(x, gx)])
}
