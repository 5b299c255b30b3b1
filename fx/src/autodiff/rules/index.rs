//! Gathers, scatters, indexing and running sums, and the writes functionalization leaves in a
//! graph. Facts of `derivatives.yaml`: `cumsum` → the reversed running sum of `grad`,
//! `gather` → `self: zeros.scatter_add(dim, index, grad)`, `scatter` → `self: grad.scatter(dim,
//! index, 0)`, `src: grad.gather(dim, index)`, `scatter_add` → `self: grad`, `src:
//! grad.gather(dim, index)`, `index_select` → `self: zeros.index_add(dim, index, grad)`,
//! `index_put` → `self: accumulate ? grad : grad.index_put(indices, 0)`, `values:
//! grad[indices]` summed to the values' shape, `avg_pool2d` → `avg_pool2d_backward`,
//! `repeat_interleave` (int repeats) → the repeats summed.
//!
//! A functional graph writes no tensor: `buf.copy_(v)`, `x[i] = v` and `index_put_` run on a
//! clone (`torchferro._functional.on_clone`), and a write through a view is a clone of the base
//! holding the new view (`view_scatter`). Their rules: the written tensor's gradient is `grad`
//! with the overwritten part zeroed, the written value's is that part (summed to its shape).

use super::*;
use crate::meta::NodeMeta;
use crate::passes::functionalize::{ON_CLONE, VIEW_SCATTER};

pub(super) fn rule(b: &mut Bw, c: &Call) -> Result<Option<Grads>> {
    let Call {
        args, kwargs, g, ..
    } = *c;
    let name = c.name.to_string();
    let r: Result<Grads> = match name.as_str() {
        "cumsum" => {
            let p = B::new(&["input", "dim", "*", "dtype"], args, kwargs, &name)?;
            let (Some(x), Some(d)) = (p.node("input"), p.int("dim")) else {
                return no_rule("cumsum");
            };
            let m = b.bmeta(g)?;
            let flip = |b: &mut Bw, v: NodeId| {
                b.call_with_meta(
                    Target::Method("flip".into()),
                    vec![Arg::Node(v), ints(&[d])],
                    m.clone(),
                )
            };
            let f = flip(b, g);
            let s = b.call_with_meta(
                Target::Method("cumsum".into()),
                vec![Arg::Node(f), Arg::Int(d)],
                m.clone(),
            );
            let r = flip(b, s);
            Ok(vec![(x, r)])
        }
        "gather" => {
            let p = B::new(
                &["input", "dim", "index", "*", "sparse_grad"],
                args,
                kwargs,
                &name,
            )?;
            let (Some(x), Some(d), Some(i)) = (p.node("input"), p.int("dim"), p.node("index"))
            else {
                return no_rule("gather");
            };
            let xs = b.fsizes(x)?;
            let ib = b.fwd(i);
            let z = zeros(b, g, &xs)?;
            let m = contiguous_like(b, g, &xs)?;
            let r = b.call_with_meta(
                Target::Method("scatter_add".into()),
                vec![Arg::Node(z), Arg::Int(d), Arg::Node(ib), Arg::Node(g)],
                m,
            );
            Ok(vec![(x, r)])
        }
        "scatter" | "scatter_add" => {
            let src_name = if name == "scatter" && !matches!(args.get(3), Some(Arg::Node(_))) {
                "value"
            } else {
                "src"
            };
            let sig: &[&'static str] = if name == "scatter" {
                if src_name == "value" {
                    &["input", "dim", "index", "value", "*", "reduce"]
                } else {
                    &["input", "dim", "index", "src", "*", "reduce"]
                }
            } else {
                &["input", "dim", "index", "src"]
            };
            let p = B::new(sig, args, kwargs, &name)?;
            if p.get("reduce").is_some() {
                return no_rule(format!("{name} with reduce"));
            }
            let (Some(x), Some(d), Some(i)) = (p.node("input"), p.int("dim"), p.node("index"))
            else {
                return no_rule(name);
            };
            let ib = b.fwd(i);
            let mut r = Vec::new();
            if b.needs(x) {
                let gx = if name == "scatter_add" {
                    g
                } else {
                    let m = b.bmeta(g)?;
                    b.call_with_meta(
                        Target::Method("scatter".into()),
                        vec![Arg::Node(g), Arg::Int(d), Arg::Node(ib), Arg::Float(0.0)],
                        m,
                    )
                };
                r.push((x, gx));
            }
            if let Some(src) = p.node("src").filter(|s| b.needs(*s)) {
                let ss = b.fsizes(src)?;
                if ss != b.fsizes(i)? {
                    return no_rule(format!("{name} with a src larger than its index"));
                }
                let m = contiguous_like(b, g, &ss)?;
                let gs = b.call_with_meta(
                    Target::Method("gather".into()),
                    vec![Arg::Node(g), Arg::Int(d), Arg::Node(ib)],
                    m,
                );
                r.push((src, gs));
            }
            Ok(r)
        }
        "index_select" => {
            let p = B::catalog("index_select", args, kwargs)?;
            let (Some(x), Some(d), Some(i)) = (p.node("input"), p.int("dim"), p.node("index"))
            else {
                return no_rule("index_select");
            };
            let xs = b.fsizes(x)?;
            let ib = b.fwd(i);
            let z = zeros(b, g, &xs)?;
            let r = b.m(
                "index_add",
                z,
                vec![Arg::Int(d), Arg::Node(ib), Arg::Node(g)],
            )?;
            Ok(vec![(x, r)])
        }
        "index_put" => {
            let p = B::catalog("index_put", args, kwargs)?;
            let (Some(x), Some(Arg::List(idx) | Arg::Tuple(idx))) =
                (p.node("input"), p.get("indices"))
            else {
                return no_rule("index_put");
            };
            let index = b.map_arg(&Arg::Tuple(idx.clone()));
            let values = p.get("values").cloned();
            written(b, x, index, values, p.boolean("accumulate", false), g)
        }
        "repeat_interleave" => {
            let p = B::new(
                &["input", "repeats", "dim", "*", "output_size"],
                args,
                kwargs,
                &name,
            )?;
            let (Some(x), Some(r)) = (p.node("input"), p.int("repeats")) else {
                return no_rule("repeat_interleave with tensor repeats");
            };
            let xs = b.fsizes(x)?;
            let gx = match p.int("dim") {
                Some(d) => {
                    let d = wrap(d, xs.len())?;
                    unrepeat(b, g, &xs, d, r)?
                }
                None => {
                    let n: i64 = xs.iter().product();
                    let flat = unrepeat(b, g, &[n], 0, r)?;
                    b.m("reshape", flat, vec![ints(&xs)])?
                }
            };
            Ok(vec![(x, gx)])
        }
        "index_fill" => {
            let p = B::new(&["input", "dim", "index", "value"], args, kwargs, &name)?;
            let Some(x) = p.node("input") else {
                return no_rule("index_fill");
            };
            index_fill(b, x, &p, g)
        }
        "index_copy" | "index_add" => index_source(b, &name, args, kwargs, g),
        "masked_scatter" => masked_scatter(b, args, kwargs, g),
        "avg_pool2d" => avg_pool2d(b, args, kwargs, g),
        _ => return Ok(None),
    };
    r.map(Some)
}

/// The gradient of `x.repeat_interleave(r, d)` (`x` of sizes `xs`): each group of `r` copies
/// summed, `(.., n·r, ..)` → `(.., n, r, ..)` → sum over the `r` axis.
pub(super) fn unrepeat(b: &mut Bw, g: NodeId, xs: &[i64], d: usize, r: i64) -> Result<NodeId> {
    if r == 1 {
        return Ok(g);
    }
    let mut split: Vec<i64> = xs.to_vec();
    split.insert(d + 1, r);
    let v = b.m("reshape", g, vec![ints(&split)])?;
    b.m("sum", v, vec![ints(&[d as i64 + 1]), Arg::Bool(false)])
}

/// The rules of the writes functionalization leaves: `on_clone(path, x, *args)` for `copy_`,
/// item assignment and `index_put_`, and `view_scatter(base, src, *steps)`. `None`: another op.
pub(super) fn functional_write(
    b: &mut Bw,
    id: NodeId,
    target: &Target,
    args: &[Arg],
    kwargs: &[(String, Arg)],
    g: NodeId,
) -> Option<Result<Grads>> {
    match target.name() {
        ON_CLONE => Some(on_clone(b, id, args, kwargs, g)),
        VIEW_SCATTER => Some(view_scatter(b, args, g)),
        _ => None,
    }
}

fn on_clone(
    b: &mut Bw,
    id: NodeId,
    args: &[Arg],
    kwargs: &[(String, Arg)],
    g: NodeId,
) -> Result<Grads> {
    let (Some(Arg::Str(path)), Some(Arg::Node(x))) = (args.first(), args.get(1)) else {
        return no_rule(ON_CLONE);
    };
    let x = *x;
    let rest = &args[2..];
    match path.as_str() {
        // Overwritten whole: `x` gets a zero gradient (`self: zeros_like(grad)`), never none,
        // as eager's graph keeps the written tensor's history.
        "torch.Tensor.copy_" => {
            let p = B::new(&["src", "non_blocking"], rest, kwargs, "copy_")?;
            let mut r = zero_derivative(b, x, g)?;
            if let Some(src) = p.node("src").filter(|s| b.needs(*s)) {
                let ss = b.fsizes(src)?;
                r.push((src, b.reduce_to(g, &ss)?));
            }
            Ok(r)
        }
        "torch.Tensor.zero_" => zero_derivative(b, x, g),
        "torch.Tensor.fill_" if matches!(rest.first(), Some(Arg::Float(_) | Arg::Int(_))) => {
            zero_derivative(b, x, g)
        }
        // Filled with a 0-dim tensor (`value: grad.sum()`), of `x`'s dtype.
        "torch.Tensor.fill_" => {
            let (Some(Arg::Node(v)), []) = (rest.first(), kwargs) else {
                return no_rule("fill_");
            };
            let v = *v;
            if b.fmeta(v)?.dtype != b.fmeta(x)?.dtype || !b.fsizes(v)?.is_empty() {
                return no_rule("fill_ with a value of another dtype");
            }
            let mut r = zero_derivative(b, x, g)?;
            if b.needs(v) {
                r.push((v, b.reduce_to(g, &[])?));
            }
            Ok(r)
        }
        "operator.setitem" | "torch.Tensor.__setitem__" => {
            let (Some(idx), Some(v)) = (rest.first(), rest.get(1)) else {
                return no_rule("setitem");
            };
            let index = b.map_arg(idx);
            written(b, x, index, Some(v.clone()), false, g)
        }
        "torch.Tensor.index_put_" => {
            let p = B::new(
                &["indices", "values", "accumulate"],
                rest,
                kwargs,
                "index_put_",
            )?;
            let Some(Arg::List(idx) | Arg::Tuple(idx)) = p.get("indices") else {
                return no_rule("index_put_");
            };
            let index = b.map_arg(&Arg::Tuple(idx.clone()));
            let values = p.get("values").cloned();
            written(b, x, index, values, p.boolean("accumulate", false), g)
        }
        // `x.name_(*rest)` of an op with an out-of-place twin (`masked_fill_`, `index_fill_`,
        // `scatter_`, `index_copy_`, ...): the twin's rule over `(x, *rest)`.
        other => {
            let mut twin_args = vec![Arg::Node(x)];
            twin_args.extend(rest.iter().cloned());
            match twin_of_write(b, id, other, &twin_args, kwargs, g) {
                Some(Ok(Some(r))) => Ok(r),
                Some(Err(e)) => Err(e),
                _ => no_rule(format!("{ON_CLONE}({other})")),
            }
        }
    }
}

/// `x.index_fill(dim, index, value)` (`derivatives.yaml`, `index_fill.int_Scalar` and
/// `.int_Tensor`): `self: grad.index_fill(dim, index, 0)`; a 0-dim tensor `value` gets the sum
/// of `grad` over the filled positions, each once however often `index` names it (eager sums
/// over the unique indices): `grad - grad.index_fill(dim, index, 0)` is `grad` exactly there and
/// zero elsewhere.
fn index_fill(b: &mut Bw, x: NodeId, p: &B<'_>, g: NodeId) -> Result<Grads> {
    let (Some(d), Some(i), Some(value)) = (p.int("dim"), p.node("index"), p.get("value")) else {
        return no_rule("index_fill");
    };
    let ib = b.fwd(i);
    let m = b.bmeta(g)?;
    let gx = b.call_with_meta(
        Target::Method("index_fill".into()),
        vec![Arg::Node(g), Arg::Int(d), Arg::Node(ib), Arg::Float(0.0)],
        m,
    );
    let mut r = Vec::new();
    if b.needs(x) {
        r.push((x, gx));
    }
    match value {
        Arg::Float(_) | Arg::Int(_) | Arg::Bool(_) => {}
        Arg::Node(v) if !b.fsizes(*v)?.is_empty() => {
            return no_rule("index_fill with a value that is not 0-dim")
        }
        Arg::Node(v) if b.needs(*v) => {
            let filled = b.m("sub", g, vec![Arg::Node(gx)])?;
            let gv = b.reduce_to(filled, &[])?;
            r.push((*v, b.cast_like(gv, *v)?));
        }
        Arg::Node(_) => {}
        _ => return no_rule("index_fill value"),
    }
    Ok(r)
}

/// `x.index_copy(dim, index, source)` and `x.index_add(dim, index, source, alpha=)`
/// (`derivatives.yaml`): `self: grad.index_fill(dim, index, 0)` for the copy, `grad` for the
/// sum; `source: grad.index_select(dim, index)` (times `alpha` for the sum), read for every
/// entry of `index`, repeats included, as eager's.
fn index_source(
    b: &mut Bw,
    name: &str,
    args: &[Arg],
    kwargs: &[(String, Arg)],
    g: NodeId,
) -> Result<Grads> {
    let p = B::catalog(name, args, kwargs)?;
    let (Some(x), Some(d), Some(i)) = (p.node("input"), p.int("dim"), p.node("index")) else {
        return no_rule(name);
    };
    let alpha = p.float("alpha").unwrap_or(1.0);
    if p.get("alpha").is_some() && p.float("alpha").is_none() {
        return no_rule(format!("{name} with a tensor alpha"));
    }
    let ib = b.fwd(i);
    let mut r = Vec::new();
    if b.needs(x) {
        let gx = if name == "index_copy" {
            let m = b.bmeta(g)?;
            b.call_with_meta(
                Target::Method("index_fill".into()),
                vec![Arg::Node(g), Arg::Int(d), Arg::Node(ib), Arg::Float(0.0)],
                m,
            )
        } else {
            g
        };
        r.push((x, gx));
    }
    if let Some(src) = p.node("source").filter(|s| b.needs(*s)) {
        let ss = b.fsizes(src)?;
        if ss.is_empty() {
            return no_rule(format!("{name} with a 0-dim source"));
        }
        // `source` has `x`'s sizes but `len(index)` along `dim`: the selection's own.
        let m = contiguous_like(b, g, &ss)?;
        let gs = b.call_with_meta(
            Target::Method("index_select".into()),
            vec![Arg::Node(g), Arg::Int(d), Arg::Node(ib)],
            m,
        );
        r.push((src, b.scale(gs, alpha)?));
    }
    Ok(r)
}

/// `x.masked_scatter(mask, source)` (`derivatives.yaml`): `self: grad.masked_fill(mask, 0)`,
/// `source: masked_scatter_backward(grad, mask, source.sizes())`: the masked positions of
/// `grad` in order, then zeros, in `source`'s shape (a host call: the count is the mask's).
fn masked_scatter(b: &mut Bw, args: &[Arg], kwargs: &[(String, Arg)], g: NodeId) -> Result<Grads> {
    let p = B::catalog("masked_scatter", args, kwargs)?;
    let (Some(x), Some(mask)) = (p.node("input"), p.node("mask")) else {
        return no_rule("masked_scatter");
    };
    let mb = b.fwd(mask);
    let mut r = Vec::new();
    if b.needs(x) {
        let gx = b.m("masked_fill", g, vec![Arg::Node(mb), Arg::Int(0)])?;
        let xs = b.fsizes(x)?;
        r.push((x, b.reduce_to(gx, &xs)?));
    }
    if let Some(src) = p.node("source").filter(|s| b.needs(*s)) {
        let ss = b.fsizes(src)?;
        let m = contiguous_like(b, g, &ss)?;
        let gs = b.call_with_meta(
            Target::Function("torchferro._aot.masked_scatter_backward".into()),
            vec![Arg::Node(g), Arg::Node(mb), ints(&ss)],
            m,
        );
        r.push((src, gs));
    }
    Ok(r)
}

/// The layout of `g` written at some positions (`view_scatter`, `written_backward`): a clone
/// of `g`, dense even where `g` is an expand (the backward of a `sum`, stride 0). With the
/// expand's strides the runtime allocated an overlapping output and the write into it raised
/// (torch: "more than one element of the written-to tensor refers to a single memory
/// location"; session 28).
fn written_meta(b: &Bw, g: NodeId) -> Result<TensorMeta> {
    let mut m = b.bmeta(g)?;
    if let (Some(sizes), Some(strides)) = (m.known_sizes(), m.known_strides()) {
        m.strides = crate::infer::layout::preserved_strides(&sizes, &strides)
            .into_iter()
            .map(crate::meta::Dim::Known)
            .collect();
    }
    Ok(m)
}

/// `x[index] = values` (or `index_put` with `accumulate`): `x` gets `g` zeroed at `index`
/// (all of `g` when accumulating), `values` gets `g[index]` summed to its shape.
fn written(
    b: &mut Bw,
    x: NodeId,
    index: Arg,
    values: Option<Arg>,
    accumulate: bool,
    g: NodeId,
) -> Result<Grads> {
    let mut r = Vec::new();
    if b.needs(x) {
        let gx = if accumulate {
            g
        } else {
            let m = written_meta(b, g)?;
            b.call_with_meta(
                Target::Function("torchferro._aot.written_backward".into()),
                vec![Arg::Node(g), index.clone()],
                m,
            )
        };
        r.push((x, gx));
    }
    if let Some(Arg::Node(v)) = values {
        if b.needs(v) {
            let vs = b.fsizes(v)?;
            let m = contiguous_like(b, g, &vs)?;
            let gv = b.call_with_meta(
                Target::Function("torchferro._aot.value_backward".into()),
                vec![Arg::Node(g), index, ints(&vs)],
                m,
            );
            r.push((v, gv));
        }
    }
    Ok(r)
}

/// `view_scatter(base, src, *steps)`: `base` gets `g` with the view zeroed (the same
/// `view_scatter` of a zero), `src` gets the view of `g` summed to its shape.
fn view_scatter(b: &mut Bw, args: &[Arg], g: NodeId) -> Result<Grads> {
    let (Some(Arg::Node(base)), Some(src)) = (args.first(), args.get(1)) else {
        return no_rule(VIEW_SCATTER);
    };
    let steps = &args[2..];
    if steps.iter().any(|a| {
        let mut v = Vec::new();
        a.nodes(&mut v);
        !v.is_empty()
    }) {
        // A view cut by a symbolic int (session 28): the backward graph would need the
        // forward's int as a saved value, which this rule does not arrange (its steps would
        // name forward nodes); the graph is not differentiated here.
        return no_rule("view_scatter with symbolic view bounds");
    }
    let mut r = Vec::new();
    if b.needs(*base) {
        let zero = b.mk("new_zeros", g, vec![ints(&[])], vec![])?;
        let m = written_meta(b, g)?;
        let mut a = vec![Arg::Node(g), Arg::Node(zero)];
        a.extend(steps.iter().cloned());
        let gb = b.call_with_meta(Target::Function(VIEW_SCATTER.into()), a, m);
        r.push((*base, gb));
    }
    if let Arg::Node(src) = src {
        if b.needs(*src) {
            let ss = b.fsizes(*src)?;
            let m = contiguous_like(b, g, &ss)?;
            let mut a = vec![Arg::Node(g), ints(&ss)];
            a.extend(steps.iter().cloned());
            let gs = b.call_with_meta(
                Target::Function("torchferro._aot.view_backward".into()),
                a,
                m,
            );
            r.push((*src, gs));
        }
    }
    Ok(r)
}

/// `avg_pool2d(input, kernel_size, stride, padding, ceil_mode, count_include_pad,
/// divisor_override)`: aten's `avg_pool2d_backward` as one extern call.
fn avg_pool2d(b: &mut Bw, args: &[Arg], kwargs: &[(String, Arg)], g: NodeId) -> Result<Grads> {
    let p = B::new(
        &[
            "input",
            "kernel_size",
            "stride",
            "padding",
            "ceil_mode",
            "count_include_pad",
            "divisor_override",
        ],
        args,
        kwargs,
        "avg_pool2d",
    )?;
    let x = p
        .node("input")
        .ok_or_else(|| AutodiffError::NoRule("avg_pool2d".into()))?;
    let bad = || AutodiffError::NoRule("avg_pool2d arguments".into());
    let k = pair(p.int_list("kernel_size")).ok_or_else(bad)?;
    let s = match p.int_list("stride") {
        None => k.clone(),
        Some(v) if v.is_empty() => k.clone(),
        v => pair(v).ok_or_else(bad)?,
    };
    let pad = pair(p.int_list("padding")).unwrap_or(vec![0, 0]);
    let xs = b.fsizes(x)?;
    let xb = b.fwd(x);
    let m = contiguous_like(b, xb, &xs)?;
    let divisor = match p.int("divisor_override") {
        Some(d) => Arg::Int(d),
        None => Arg::None,
    };
    let r = b.raw(
        "avg_pool2d_backward",
        Target::Function("torch.ops.aten.avg_pool2d_backward.default".into()),
        vec![
            Arg::Node(g),
            Arg::Node(xb),
            ints(&k),
            ints(&s),
            ints(&pad),
            Arg::Bool(p.boolean("ceil_mode", false)),
            Arg::Bool(p.boolean("count_include_pad", true)),
            divisor,
        ],
        NodeMeta::Tensor(m),
    );
    Ok(vec![(x, r)])
}

/// Two ints per spatial dim from an int or a list (`None` when absent or malformed).
pub(super) fn pair(v: Option<Vec<i64>>) -> Option<Vec<i64>> {
    match v {
        Some(v) if v.len() == 1 => Some(vec![v[0], v[0]]),
        Some(v) if v.len() == 2 => Some(v),
        _ => None,
    }
}
