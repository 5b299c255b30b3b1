//! `view_scatter(base, src, *steps)` (`fx::passes::functionalize`): a write through a view,
//! made functional, as one lazy tensor of `base`'s shape that holds `src` inside the view and
//! `base` elsewhere.
//!
//! Why here and not on the host: the host op (`torchferro._functional.view_scatter`, a clone and
//! a `copy_`) takes its view bounds as values, so a graph with symbolic sizes cannot run it (a
//! fallback's sizes are the host's, and such a graph is lowered whole or not at all). A KV cache
//! written at `pos:pos+n`, or `x[x.size(0) // 2:].add_(1)` under dynamic shapes, then ran on the
//! eager runner. Lowered here, the bounds are size expressions (`Size`), the kernels take them
//! as arguments like any size, and the scatter fuses into its readers and the input's
//! write-back.
//!
//! The view is modelled per dimension, which is what slicing, `select`, `narrow`, `unsqueeze`,
//! `squeeze` and permutations make: each view dimension walks one base dimension from a start
//! by a positive step (or is a new dimension of size 1), and each base dimension is walked by
//! one view dimension or held at one index. The inverse, from a base index to the view's, is
//! then one subtraction (and a division by a step) per dimension, and "inside the view" a
//! conjunction of range checks. Other steps (`view`, `diagonal`, `as_strided`, `unfold`) decline.

use std::rc::Rc;

use fx::{Arg, DType};

use super::args::{as_int, fallback, wrap_dim, LResult, Reject};
use super::value::TensorVal;
use super::{LValue, Lowerer};
use crate::index::{Idx, SYMBOL_MIN};
use crate::ir::{BinOp, BodyBuilder, Scalar, ValId};
use crate::size::Size;

/// Where a view dimension's index goes in the base.
#[derive(Clone, Copy, Debug)]
enum Walk {
    /// Base dimension `dim` at `start + step * i`.
    Base { dim: usize, start: Size, step: i64 },
    /// A dimension `unsqueeze` added (size 1, index 0).
    New,
}

/// A view of the base as per-dimension walks: `view[k]` is view dimension `k`'s walk, length,
/// and whether its bounds were proved inside the base (else the view's final lengths must be
/// `src`'s, which the shape rules computed under the trace's guards: see [`slice_bounds`]);
/// `held[j]` is the index a base dimension no view dimension walks is held at.
struct ViewMap {
    view: Vec<(Walk, Size, bool)>,
    held: Vec<Option<Size>>,
}

fn min_sym(_: u32) -> i64 {
    SYMBOL_MIN
}

/// `a >= b` at every admitted size (each symbol at least 2), proved also through floor
/// divisions by constants (`s0 >= s0 // 2`).
fn ge(a: Size, b: Size) -> bool {
    (a - b).lower_bound_floor(&min_sym).is_some_and(|v| v >= 0)
}

impl ViewMap {
    fn identity(sizes: &[Size]) -> ViewMap {
        ViewMap {
            view: sizes
                .iter()
                .enumerate()
                .map(|(j, &n)| {
                    let walk = Walk::Base {
                        dim: j,
                        start: Size::Const(0),
                        step: 1,
                    };
                    (walk, n, true)
                })
                .collect(),
            held: vec![None; sizes.len()],
        }
    }

    fn ndim(&self) -> usize {
        self.view.len()
    }

    /// The view as a box of the base (`reinplace.rs`): per base dimension its first index and
    /// its length (1 where held), and per view dimension the base dimension it walks (`None`
    /// for a new one). `None` where a walk steps by more than one: such a view is no box, and
    /// a store over a box of the base's own strides cannot address it.
    fn region(&self) -> Option<Region> {
        let n = self.held.len();
        let mut starts: Vec<Option<Size>> = self.held.clone();
        let mut sizes = vec![Size::Const(1); n];
        let mut src_dims = Vec::with_capacity(self.view.len());
        for &(walk, len, _) in &self.view {
            match walk {
                Walk::Base {
                    dim,
                    start,
                    step: 1,
                } if starts[dim].is_none() => {
                    starts[dim] = Some(start);
                    sizes[dim] = len;
                    src_dims.push(Some(dim));
                }
                Walk::Base { .. } => return None,
                Walk::New => src_dims.push(None),
            }
        }
        Some(Region {
            starts: starts.into_iter().collect::<Option<Vec<_>>>()?,
            sizes,
            src_dims,
        })
    }

    fn len(&self, d: usize) -> Size {
        self.view[d].1
    }

    /// `select(d, i)`: view dimension `d` is held at `i` (a negative constant counts from the
    /// end). A symbolic index must be proved inside the dimension for every admitted size.
    fn select(&mut self, d: usize, i: Size) -> LResult<()> {
        let n = self.len(d);
        let i = match (i.as_const(), n.as_const()) {
            (Some(c), Some(n)) => {
                let c = if c < 0 { c + n } else { c };
                if !(0..n).contains(&c) {
                    return fallback("view_scatter: index out of range");
                }
                Size::Const(c)
            }
            (Some(c), None) if c < 0 => n + c,
            _ => i,
        };
        if !(self.view[d].2 && ge(i, Size::Const(0)) && ge(n - 1, i)) {
            return fallback(format!(
                "symbolic sizes: view_scatter index {i:?} not proved within 0..{n:?}"
            ));
        }
        let (walk, _, _) = self.view.remove(d);
        if let Walk::Base { dim, start, step } = walk {
            self.held[dim] = Some(start + i * step);
        }
        Ok(())
    }

    /// `[start : start + len * step : step]` along view dimension `d` (bounds normalized;
    /// `proved` whether they are inside it at every admitted size).
    fn slice(&mut self, d: usize, start: Size, len: Size, step: i64, proved: bool) -> LResult<()> {
        let (walk, n, was) = self.view[d];
        let proved = proved && was;
        self.view[d] = match walk {
            Walk::Base {
                dim,
                start: s0,
                step: k,
            } => (
                Walk::Base {
                    dim,
                    start: s0 + start * k,
                    step: k * step,
                },
                len,
                proved,
            ),
            Walk::New if start == 0 && len == n => (walk, n, was),
            Walk::New => return fallback("view_scatter: a slice of a new dimension"),
        };
        Ok(())
    }

    fn unsqueeze(&mut self, d: usize) {
        self.view.insert(d, (Walk::New, Size::Const(1), true));
    }

    /// `squeeze(d)` of a dimension of length 1 (of another length it is no view change).
    fn squeeze(&mut self, d: usize) -> LResult<()> {
        if self.len(d) == 1 {
            self.select(d, Size::Const(0))?;
        }
        Ok(())
    }

    fn permute(&mut self, dims: &[usize]) -> LResult<()> {
        let mut sorted = dims.to_vec();
        sorted.sort();
        if sorted != (0..self.ndim()).collect::<Vec<_>>() {
            return fallback("view_scatter: permute dims are not a permutation");
        }
        self.view = dims.iter().map(|&d| self.view[d]).collect();
        Ok(())
    }
}

/// A view that is a box of its base: see [`ViewMap::region`].
pub(super) struct Region {
    /// Per base dimension, the box's first index.
    pub starts: Vec<Size>,
    /// Per base dimension, the box's length.
    pub sizes: Vec<Size>,
    /// Per view (source) dimension, the base dimension it walks (`None`: a new dimension).
    pub src_dims: Vec<Option<usize>>,
}

/// One step as `view_scatter` gets it: `(kind, name, args, kwargs)`.
fn parse_step(a: &Arg) -> LResult<(&str, &[Arg], &[Arg])> {
    let Arg::Tuple(parts) = a else {
        return fallback("view_scatter: a step is not a tuple");
    };
    match parts.as_slice() {
        [Arg::Str(_), Arg::Str(name), Arg::Tuple(args), Arg::Tuple(kwargs)] => {
            let bare = name.rsplit('.').next().unwrap_or(name);
            Ok((bare, args, kwargs))
        }
        _ => fallback("view_scatter: a malformed step"),
    }
}

/// Positional arguments, then keywords by name (`names` lists the parameters after `self`).
fn bind_step<'a>(
    names: &[&str],
    args: &'a [Arg],
    kwargs: &'a [Arg],
) -> LResult<Vec<Option<&'a Arg>>> {
    if args.len() > names.len() {
        return fallback("view_scatter: too many step arguments");
    }
    let mut out: Vec<Option<&Arg>> = names.iter().map(|_| None).collect();
    for (i, a) in args.iter().enumerate() {
        out[i] = Some(a);
    }
    for kv in kwargs {
        let Arg::Tuple(p) = kv else {
            return fallback("view_scatter: a malformed keyword");
        };
        let [Arg::Str(k), v] = p.as_slice() else {
            return fallback("view_scatter: a malformed keyword");
        };
        let Some(i) = names.iter().position(|n| n == k) else {
            return fallback(format!("view_scatter: unknown keyword {k}"));
        };
        out[i] = Some(v);
    }
    Ok(out)
}

impl ViewMap {
    /// Applies one step; what the per-dimension model cannot say declines.
    fn apply(&mut self, l: &Lowerer, name: &str, args: &[Arg], kwargs: &[Arg]) -> LResult<()> {
        let int = |a: Option<&Arg>, default: i64| -> LResult<i64> {
            match a {
                None | Some(Arg::None) => Ok(default),
                Some(a) => as_int(a).ok_or_else(|| Reject::Fallback("view_scatter: dim".into())),
            }
        };
        let size = |a: Option<&Arg>| -> LResult<Size> {
            a.and_then(|a| l.size_arg(a))
                .ok_or_else(|| Reject::Fallback("view_scatter: an int argument".into()))
        };
        match name {
            "getitem" => {
                let [idx] = args else {
                    return fallback("view_scatter: getitem arity");
                };
                self.index(l, idx)
            }
            "select" => {
                let b = bind_step(&["dim", "index"], args, kwargs)?;
                let d = wrap_dim(int(b[0], 0)?, self.ndim())?;
                self.select(d, size(b[1])?)
            }
            "narrow" => {
                let b = bind_step(&["dim", "start", "length"], args, kwargs)?;
                let d = wrap_dim(int(b[0], 0)?, self.ndim())?;
                let n = self.len(d);
                let start = size(b[1])?;
                let start = match start.as_const() {
                    Some(s) if s < 0 => n + s,
                    _ => start,
                };
                let len = size(b[2])?;
                let ok = ge(start, Size::Const(0)) && ge(len, Size::Const(0)) && ge(n, start + len);
                self.slice(d, start, len, 1, ok)
            }
            "unsqueeze" => {
                let b = bind_step(&["dim"], args, kwargs)?;
                let d = wrap_dim(int(b[0], i64::MIN)?, self.ndim() + 1)?;
                self.unsqueeze(d);
                Ok(())
            }
            "squeeze" => {
                let b = bind_step(&["dim"], args, kwargs)?;
                match b[0] {
                    None => {
                        for d in (0..self.ndim()).rev() {
                            self.squeeze(d)?;
                        }
                        Ok(())
                    }
                    Some(a) => {
                        let dims = match a {
                            Arg::Tuple(xs) | Arg::List(xs) => xs.iter().map(as_int).collect(),
                            a => as_int(a).map(|d| vec![d]),
                        }
                        .ok_or_else(|| Reject::Fallback("view_scatter: squeeze dims".into()))?;
                        let mut ds = dims
                            .iter()
                            .map(|&d| wrap_dim(d, self.ndim()))
                            .collect::<LResult<Vec<_>>>()?;
                        ds.sort();
                        ds.dedup();
                        for d in ds.into_iter().rev() {
                            self.squeeze(d)?;
                        }
                        Ok(())
                    }
                }
            }
            "t" if args.is_empty() && kwargs.is_empty() => match self.ndim() {
                0 | 1 => Ok(()),
                2 => self.permute(&[1, 0]),
                _ => fallback("view_scatter: t() of more than 2 dims"),
            },
            "transpose" | "swapaxes" | "swapdims" => {
                let b = bind_step(&["dim0", "dim1"], args, kwargs)?;
                let d0 = wrap_dim(int(b[0], 0)?, self.ndim())?;
                let d1 = wrap_dim(int(b[1], 0)?, self.ndim())?;
                let mut p: Vec<usize> = (0..self.ndim()).collect();
                p.swap(d0, d1);
                self.permute(&p)
            }
            "permute" => {
                let dims: Option<Vec<i64>> = match args {
                    [Arg::Tuple(xs) | Arg::List(xs)] => xs.iter().map(as_int).collect(),
                    xs => xs.iter().map(as_int).collect(),
                };
                let dims = dims
                    .filter(|_| kwargs.is_empty())
                    .ok_or_else(|| Reject::Fallback("view_scatter: permute dims".into()))?;
                let dims = dims
                    .iter()
                    .map(|&d| wrap_dim(d, self.ndim()))
                    .collect::<LResult<Vec<_>>>()?;
                self.permute(&dims)
            }
            "detach" | "alias" if args.is_empty() && kwargs.is_empty() => Ok(()),
            _ => fallback(format!("view_scatter: a {name} step")),
        }
    }

    /// `getitem` with basic indexing: ints (constant or symbolic), slices, `None`, `...`.
    fn index(&mut self, l: &Lowerer, idx: &Arg) -> LResult<()> {
        let items: Vec<&Arg> = match idx {
            Arg::Tuple(xs) => xs.iter().collect(),
            other => vec![other],
        };
        let consuming = |xs: &[&Arg]| {
            xs.iter()
                .filter(|i| !matches!(i, Arg::None | Arg::Ellipsis))
                .count()
        };
        if items.iter().filter(|i| matches!(i, Arg::Ellipsis)).count() > 1
            || consuming(&items) > self.ndim()
        {
            return fallback("view_scatter: too many indices");
        }
        let mut dim = 0usize;
        for (p, item) in items.iter().enumerate() {
            match item {
                Arg::None => {
                    self.unsqueeze(dim);
                    dim += 1;
                }
                Arg::Ellipsis => dim = self.ndim() - consuming(&items[p + 1..]),
                Arg::Slice(s, e, st) => {
                    let step = match &**st {
                        Arg::None => 1,
                        Arg::Int(v) if *v > 0 => *v,
                        _ => return fallback("view_scatter: slice step must be a positive int"),
                    };
                    let (start, len, proved) = slice_bounds(l, self.len(dim), s, e, step)?;
                    self.slice(dim, start, len, step, proved)?;
                    dim += 1;
                }
                i => {
                    let i = l
                        .size_arg(i)
                        .ok_or_else(|| Reject::Fallback("view_scatter: advanced index".into()))?;
                    self.select(dim, i)?;
                }
            }
        }
        Ok(())
    }
}

/// `start`, length and whether the clamps are proved no-ops, of `[s:e:step]` over a dimension
/// of length `n`, as Python clamps them. Over symbolic bounds the clamps are no-ops where
/// `0 <= start <= stop <= n` is proved for every admitted size, or where the unclamped length
/// is the one the shape rules gave the view (`src`'s, checked by [`lower`]): they computed the
/// clamped length under the trace's guards, and a clamp that moved a bound would make it
/// differ from the unclamped one at some admitted size (the same argument as the read's
/// `views::sym_slice`). A dimension so cut must survive to the end of the chain.
fn slice_bounds(l: &Lowerer, n: Size, s: &Arg, e: &Arg, step: i64) -> LResult<(Size, Size, bool)> {
    let plain = |b: &Arg| matches!(b, Arg::None | Arg::Int(_));
    if let (Some(n), true, true) = (n.as_const(), plain(s), plain(e)) {
        let bound = |v: &Arg, default: i64| match v {
            Arg::Int(v) => (if *v < 0 { v + n } else { *v }).clamp(0, n),
            _ => default,
        };
        let (start, stop) = (bound(s, 0), bound(e, n));
        let len = if stop > start {
            (stop - start + step - 1) / step
        } else {
            0
        };
        return Ok((Size::Const(start), Size::Const(len), true));
    }
    let bound = |v: &Arg, default: Size| -> LResult<Size> {
        Ok(match v {
            Arg::None => default,
            Arg::Int(v) if *v < 0 => n + *v,
            v => l
                .size_arg(v)
                .ok_or_else(|| Reject::Fallback("view_scatter: a slice bound".into()))?,
        })
    };
    let start = bound(s, Size::Const(0))?;
    let stop = bound(e, n)?;
    let proved = ge(start, Size::Const(0)) && ge(n, stop) && ge(stop, start);
    let len = if step == 1 {
        stop - start
    } else {
        (stop - start + (step - 1)).floordiv(Size::Const(step))
    };
    Ok((start, len, proved))
}

/// Lowers `view_scatter(base, src, *steps)`.
pub fn lower(l: &mut Lowerer, a: &[Arg], kw: &[(String, Arg)]) -> LResult<LValue> {
    let ([base, src, steps @ ..], []) = (a, kw) else {
        return fallback("view_scatter arity");
    };
    let base = l.tensor(base)?;
    let src = l.tensor(src)?;
    let mut map = ViewMap::identity(&base.sizes);
    for s in steps {
        let (name, args, kwargs) = parse_step(s)?;
        map.apply(l, name, args, kwargs)?;
    }
    scatter(l, base, src, map)
}

/// `base` with the view `map` describes replaced by `src` (of the view's sizes), lazily: each
/// element inside the view reads `src`, each other one `base`.
fn scatter(l: &mut Lowerer, base: TensorVal, src: TensorVal, map: ViewMap) -> LResult<LValue> {
    let lens: Vec<Size> = map.view.iter().map(|(_, n, _)| *n).collect();
    if lens != src.sizes {
        // `copy_` broadcasts; the functional pass writes the view's own value, so a mismatch
        // means the model above disagrees with the shape rules: leave it to the host.
        return fallback(format!(
            "view_scatter: the view's sizes {lens:?} differ from the value's {:?}",
            src.sizes
        ));
    }
    if lens.iter().any(|n| *n == 0) {
        return Ok(LValue::Tensor(base));
    }
    if map.view.iter().any(|(_, n, _)| !ge(*n, Size::Const(1))) {
        return fallback("symbolic sizes: view_scatter of a possibly empty view");
    }
    if let Some(region) = map.region() {
        if let Some(v) = l.reinplace(&base, &src, &region) {
            return Ok(v);
        }
    }
    let out = base.dtype;
    let cost = base.ops() + src.ops() + 4 * base.ndim() + 2;
    let view: Rc<Vec<(Walk, Size)>> = Rc::new(map.view.iter().map(|v| (v.0, v.1)).collect());
    let held = Rc::new(map.held);
    Ok(LValue::Tensor(TensorVal::lazy(
        out,
        base.sizes.clone(),
        cost,
        Rc::new(move |b: &mut BodyBuilder, idx: &[Idx]| {
            let mut inside: Option<ValId> = None;
            let mut and = |b: &mut BodyBuilder, c: ValId| {
                inside = Some(match inside {
                    None => c,
                    Some(p) => b.binary(BinOp::And, p, c),
                });
            };
            for (j, h) in held.iter().enumerate() {
                if let Some(h) = h {
                    let at = Idx::constant(*h);
                    let d = idx[j].add(&at.scale(-1));
                    if d.as_constant() == Some(0) {
                        continue;
                    }
                    let i = b.index_value(idx[j].clone());
                    let h = size_value(b, *h);
                    let c = b.binary(BinOp::Eq, i, h);
                    and(b, c);
                }
            }
            let mut vidx = Vec::with_capacity(view.len());
            for &(walk, n) in view.iter() {
                let Walk::Base { dim, start, step } = walk else {
                    vidx.push(Idx::constant(0));
                    continue;
                };
                let i = &idx[dim];
                let rel = i.add_const(-start);
                let last = (n - 1) * step;
                // Inside along this dimension: `0 <= i - start <= last` (and on the step).
                if !rel.proved_nonneg(b.ranges()) {
                    let iv = b.index_value(i.clone());
                    let sv = size_value(b, start);
                    let c = b.binary(BinOp::Ge, iv, sv);
                    and(b, c);
                }
                let over = Idx::constant(last).add(&rel.scale(-1));
                if !over.proved_nonneg(b.ranges()) {
                    let iv = b.index_value(i.clone());
                    let ev = size_value(b, start + last);
                    let c = b.binary(BinOp::Le, iv, ev);
                    and(b, c);
                }
                let at = rel.clamp_to(0, last, b.ranges());
                if step == 1 {
                    vidx.push(at);
                } else {
                    let r = at.modulo(step, b.ranges());
                    if r.as_constant() != Some(0) {
                        let rv = b.index_value(r);
                        let zero = b.constant(Scalar::I(0), DType::Int64);
                        let c = b.binary(BinOp::Eq, rv, zero);
                        and(b, c);
                    }
                    vidx.push(at.floordiv(step, b.ranges()));
                }
            }
            let Some(inside) = inside else {
                // The view is the whole base.
                let v = src.load(b, &vidx);
                return b.cast(v, out);
            };
            let old = base.load(b, idx);
            let new = src.load(b, &vidx);
            let new = b.cast(new, out);
            b.where_(inside, new, old)
        }),
    )))
}

/// A size as an int64 value in a kernel body (computed in C from the sizes when symbolic).
fn size_value(b: &mut BodyBuilder, s: Size) -> ValId {
    match s.as_const() {
        Some(c) => b.constant(Scalar::I(c), DType::Int64),
        None => b.index_value(Idx::constant(s)),
    }
}

/// `on_clone(path, x, *args)` (`fx::passes::functionalize`: an in-place op with no out-of-place
/// twin, applied to a clone) for the writes a view is most often given: `copy_(src)` (a KV
/// cache filled at `pos:pos+n`), `zero_()` and `fill_(number)`. Their values need no clone: the
/// source broadcast to `x`'s shape and cast to its dtype, or a constant. Lowered here they stay
/// lazy and fuse into the scatter that follows; as host ops they kept a graph with symbolic
/// sizes off the symbolic lowering. Other callables decline (the host runs them).
pub fn lower_on_clone(l: &mut Lowerer, a: &[Arg], kw: &[(String, Arg)]) -> LResult<LValue> {
    use super::elementwise::{pointwise, Operand};
    let [Arg::Str(path), x, rest @ ..] = a else {
        return fallback("on_clone arity");
    };
    if !kw.is_empty() {
        return fallback("on_clone with keywords");
    }
    let x = l.tensor(x)?;
    let d = x.dtype;
    let value = match (path.as_str(), rest) {
        ("torch.Tensor.copy_", [src]) => {
            let src = l.tensor(src)?;
            pointwise(&[Operand::T(x.clone()), Operand::T(src)], d, d, |_, v| v[1])?
        }
        ("torch.Tensor.zero_", []) => pointwise(&[Operand::T(x.clone())], d, d, move |b, _| {
            b.constant(Scalar::I(0), d)
        })?,
        ("torch.Tensor.fill_", [v]) => {
            let s = match v {
                Arg::Float(f) => Scalar::F(*f),
                Arg::Int(i) => Scalar::I(*i),
                Arg::Bool(b) => Scalar::B(*b),
                _ => return fallback("fill_ with a tensor value"),
            };
            if matches!(s, Scalar::F(_)) && !d.is_floating_point() {
                return fallback("fill_ of an integer tensor with a float");
            }
            pointwise(&[Operand::T(x.clone())], d, d, move |b, _| b.constant(s, d))?
        }
        ("operator.setitem", [key, v]) => return setitem(l, x, key, v),
        _ => return fallback(format!("no lowering for on_clone({path})")),
    };
    if value.sizes != x.sizes {
        return fallback("on_clone: the source does not broadcast to the written tensor");
    }
    Ok(LValue::Tensor(value))
}

/// `x[key] = v` on a clone of `x` (`on_clone(operator.setitem)`) with a basic `key` (ints,
/// slices, `None`, `...`; the `getitem` steps `view_scatter` models): a scatter of `v`
/// broadcast to the indexed view, so a write by `setitem` with symbolic bounds (`x[: n // 2] =
/// 0`, `z[1:] = x`) lowers once for every size. A tensor key (advanced indexing) declines.
fn setitem(l: &mut Lowerer, x: TensorVal, key: &Arg, v: &Arg) -> LResult<LValue> {
    let mut map = ViewMap::identity(&x.sizes);
    map.index(l, key)?;
    let lens: Vec<Size> = map.view.iter().map(|(_, n, _)| *n).collect();
    let d = x.dtype;
    let src = match v {
        Arg::Float(_) | Arg::Int(_) | Arg::Bool(_) => {
            let s = match v {
                Arg::Float(f) => Scalar::F(*f),
                Arg::Int(i) => Scalar::I(*i),
                Arg::Bool(b) => Scalar::B(*b),
                _ => unreachable!("matched above"),
            };
            if matches!(s, Scalar::F(_)) && !d.is_floating_point() {
                return fallback("setitem of an integer tensor with a float");
            }
            TensorVal::lazy(
                d,
                lens.clone(),
                1,
                Rc::new(move |b: &mut BodyBuilder, _: &[Idx]| b.constant(s, d)),
            )
        }
        _ => {
            let t = l.tensor(v)?;
            let lead = lens.len().checked_sub(t.ndim()).ok_or_else(|| {
                Reject::Fallback("setitem: a value of more dims than the view".into())
            })?;
            let fits = t
                .sizes
                .iter()
                .zip(&lens[lead..])
                .all(|(a, b)| a == b || *a == Size::Const(1));
            if !fits {
                return fallback("setitem: the value does not broadcast to the view");
            }
            t.expand(&lens)
        }
    };
    scatter(l, x, src, map)
}
