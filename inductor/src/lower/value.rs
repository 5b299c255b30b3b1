//! Lowered tensors: either a strided view of a realized buffer or a lazy loader.
//!
//! A lazy tensor is Inductor's "inlined StorageBox": a function from an index to a value, composed
//! into its consumers instead of being written to memory. Views compose by index arithmetic; on a
//! realized buffer they stay strided views (so extern calls and graph outputs can take them
//! without copies, like Inductor's `ReinterpretView`).

use std::rc::Rc;
use std::sync::atomic::{AtomicU64, Ordering};

use fx::DType;

use crate::index::Idx;
use crate::ir::{contiguous_strides, linear_index, BodyBuilder, BufId, ValId, View};
use crate::size::{as_consts, consts, Size};

/// A loader: computes the element at an index, adding values to the builder.
pub type LoadFn = Rc<dyn Fn(&mut BodyBuilder, &[Idx]) -> ValId>;

#[derive(Clone)]
pub enum Kind {
    Strided {
        buf: BufId,
        strides: Vec<Size>,
        offset: Size,
    },
    /// `id` keys the builder's memo table; `ops` is an upper bound on the inlined op count;
    /// `view` is set when this is a view (permute, reshape, expand, ...) of another lazy tensor.
    Lazy {
        id: u64,
        f: LoadFn,
        ops: usize,
        view: Option<Rc<LazyView>>,
    },
}

/// Maps a base's (strides, offset) to a view's, or `None` when the view is not strided there.
pub type StrideMap = Rc<dyn Fn(&[Size], Size) -> Option<(Vec<Size>, Size)>>;

/// How a lazy tensor views a lazy base: a consumer that needs memory (an extern call's operand)
/// realizes the base once and takes a strided view of its buffer, instead of realizing the view
/// as a second copy of the same computation (Inductor's `ReinterpretView` of a realized base).
pub struct LazyView {
    /// The outermost lazy tensor of the chain of views (itself not a view).
    pub base: TensorVal,
    pub strided: StrideMap,
}

#[derive(Clone)]
pub struct TensorVal {
    pub dtype: DType,
    /// Sizes, symbolic in a graph lowered from symbolic metas (a symbolic size is never 0 or
    /// 1: those specialize in the shape environment, so size-1 tests stay structural).
    pub sizes: Vec<Size>,
    pub kind: Kind,
}

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

impl TensorVal {
    pub fn buffer(buf: BufId, dtype: DType, sizes: Vec<Size>, strides: Vec<Size>) -> TensorVal {
        TensorVal {
            dtype,
            sizes,
            kind: Kind::Strided {
                buf,
                strides,
                offset: Size::Const(0),
            },
        }
    }

    pub fn lazy(dtype: DType, sizes: Vec<Size>, ops: usize, f: LoadFn) -> TensorVal {
        TensorVal {
            dtype,
            sizes,
            kind: Kind::Lazy {
                id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
                f,
                ops,
                view: None,
            },
        }
    }

    pub fn ndim(&self) -> usize {
        self.sizes.len()
    }

    pub fn numel(&self) -> Size {
        self.sizes.iter().product()
    }

    /// The sizes as constants, for a lowering that takes values only. With a symbolic size it
    /// declines (see [`decline`]): the graph then takes the fallback of its caller.
    #[track_caller]
    pub fn csizes(&self) -> Vec<i64> {
        const_or_decline(&self.sizes, "sizes")
    }

    /// The size of dim `d` as a constant, or a decline (the other dims may be symbolic).
    #[track_caller]
    pub fn csize(&self, d: usize) -> i64 {
        const_or_decline(&self.sizes[d..=d], "sizes")[0]
    }

    /// Whether every size is a constant.
    pub fn is_static(&self) -> bool {
        self.sizes.iter().all(|s| s.is_const())
    }

    pub fn ops(&self) -> usize {
        match &self.kind {
            Kind::Strided { .. } => 0,
            Kind::Lazy { ops, .. } => *ops,
        }
    }

    /// The value at `idx` (one index expression per dimension).
    pub fn load(&self, b: &mut BodyBuilder, idx: &[Idx]) -> ValId {
        debug_assert_eq!(idx.len(), self.sizes.len());
        match &self.kind {
            Kind::Strided {
                buf,
                strides,
                offset,
            } => {
                let e = linear_index(idx, strides, *offset);
                b.load(*buf, e, self.dtype)
            }
            Kind::Lazy { id, f, .. } => {
                if let Some((buf, strides, offset)) = b.stored.get(id) {
                    let e = linear_index(idx, strides, *offset);
                    return b.load(*buf, e, self.dtype);
                }
                let key = (*id, idx.to_vec());
                if let Some(&v) = b.memo.get(&key) {
                    return v;
                }
                let v = f(b, idx);
                b.memo.insert(key, v);
                v
            }
        }
    }

    /// The strided view, when this is one.
    pub fn as_view(&self) -> Option<View> {
        match &self.kind {
            Kind::Strided {
                buf,
                strides,
                offset,
            } => Some(View {
                buf: *buf,
                sizes: self.sizes.clone(),
                strides: strides.clone(),
                offset: *offset,
            }),
            Kind::Lazy { .. } => None,
        }
    }

    /// A new geometry: `strided` maps (strides, offset) when the view stays strided, `map` maps an
    /// output index to this tensor's index otherwise.
    pub(crate) fn view_with(
        &self,
        sizes: Vec<Size>,
        strided: impl Fn(&[Size], Size) -> Option<(Vec<Size>, Size)> + 'static,
        map: impl Fn(&mut BodyBuilder, &[Idx]) -> Vec<Idx> + 'static,
    ) -> TensorVal {
        if let Kind::Strided {
            buf,
            strides,
            offset,
        } = &self.kind
        {
            if let Some((strides, offset)) = strided(strides, *offset) {
                return TensorVal {
                    dtype: self.dtype,
                    sizes,
                    kind: Kind::Strided {
                        buf: *buf,
                        strides,
                        offset,
                    },
                };
            }
        }
        let view = match &self.kind {
            Kind::Lazy { view: Some(v), .. } => {
                let (first, then) = (v.strided.clone(), strided);
                let composed: StrideMap =
                    Rc::new(move |st, off| first(st, off).and_then(|(s, o)| then(&s, o)));
                Some(Rc::new(LazyView {
                    base: v.base.clone(),
                    strided: composed,
                }))
            }
            Kind::Lazy { view: None, .. } => Some(Rc::new(LazyView {
                base: self.clone(),
                strided: Rc::new(strided),
            })),
            Kind::Strided { .. } => None,
        };
        let inner = self.clone();
        let ops = self.ops();
        let mut t = TensorVal::lazy(
            self.dtype,
            sizes,
            ops,
            Rc::new(move |b, idx| {
                let i = map(b, idx);
                inner.load(b, &i)
            }),
        );
        if let Kind::Lazy { view: slot, .. } = &mut t.kind {
            *slot = view;
        }
        t
    }

    /// The lazy base this lazy tensor views, and the map from the base's strides to its own.
    pub fn lazy_view(&self) -> Option<&LazyView> {
        match &self.kind {
            Kind::Lazy { view: Some(v), .. } => Some(v),
            _ => None,
        }
    }

    /// The memo key of a lazy tensor.
    pub fn lazy_id(&self) -> Option<u64> {
        match &self.kind {
            Kind::Lazy { id, .. } => Some(*id),
            Kind::Strided { .. } => None,
        }
    }

    pub fn permute(&self, dims: &[usize]) -> TensorVal {
        let sizes = dims.iter().map(|&d| self.sizes[d]).collect();
        let d1 = dims.to_vec();
        let d2 = dims.to_vec();
        self.view_with(
            sizes,
            move |st, off| Some((d1.iter().map(|&d| st[d]).collect(), off)),
            move |_, idx| {
                let mut out = vec![Idx::constant(0); idx.len()];
                for (i, &d) in d2.iter().enumerate() {
                    out[d] = idx[i].clone();
                }
                out
            },
        )
    }

    /// Broadcast to `sizes` (which has at least this rank; size-1 dims stretch).
    pub fn expand(&self, sizes: &[Size]) -> TensorVal {
        if sizes == self.sizes.as_slice() {
            return self.clone();
        }
        let lead = sizes.len() - self.ndim();
        let own = self.sizes.clone();
        let out = sizes.to_vec();
        let own2 = own.clone();
        let out2 = out.clone();
        self.view_with(
            sizes.to_vec(),
            move |st, off| {
                let mut s = vec![Size::Const(0); lead];
                for (k, &stride) in st.iter().enumerate() {
                    s.push(if own[k] == 1 && out[lead + k] != 1 {
                        Size::Const(0)
                    } else {
                        stride
                    });
                }
                Some((s, off))
            },
            move |_, idx| {
                (0..own2.len())
                    .map(|k| {
                        if own2[k] == 1 && out2[lead + k] != 1 {
                            Idx::constant(0)
                        } else {
                            idx[lead + k].clone()
                        }
                    })
                    .collect()
            },
        )
    }

    pub fn unsqueeze(&self, dim: usize) -> TensorVal {
        let mut sizes = self.sizes.clone();
        sizes.insert(dim, Size::Const(1));
        self.view_with(
            sizes,
            move |st, off| {
                let mut s = st.to_vec();
                s.insert(dim, Size::Const(0));
                Some((s, off))
            },
            move |_, idx| {
                let mut i = idx.to_vec();
                i.remove(dim);
                i
            },
        )
    }

    /// Removes the given dims, which must have size 1.
    pub fn squeeze_dims(&self, dims: &[usize]) -> TensorVal {
        let keep: Vec<usize> = (0..self.ndim()).filter(|d| !dims.contains(d)).collect();
        let sizes = keep.iter().map(|&d| self.sizes[d]).collect();
        let n = self.ndim();
        let k1 = keep.clone();
        self.view_with(
            sizes,
            move |st, off| Some((k1.iter().map(|&d| st[d]).collect(), off)),
            move |_, idx| {
                let mut out = vec![Idx::constant(0); n];
                for (i, &d) in keep.iter().enumerate() {
                    out[d] = idx[i].clone();
                }
                out
            },
        )
    }

    /// `x[..., start:start+len*step:step, ...]` along `dim` (already clamped by the caller).
    pub fn slice(&self, dim: usize, start: Size, len: Size, step: i64) -> TensorVal {
        let mut sizes = self.sizes.clone();
        sizes[dim] = len;
        self.view_with(
            sizes,
            move |st, off| {
                let mut s = st.to_vec();
                s[dim] = s[dim] * step;
                Some((s, off + start * st[dim]))
            },
            move |_, idx| {
                let mut i = idx.to_vec();
                i[dim] = i[dim].scale(step).add_const(start);
                i
            },
        )
    }

    /// `x.select(dim, index)` with a non-negative index.
    pub fn select(&self, dim: usize, index: i64) -> TensorVal {
        let mut sizes = self.sizes.clone();
        sizes.remove(dim);
        self.view_with(
            sizes,
            move |st, off| {
                let mut s = st.to_vec();
                s.remove(dim);
                Some((s, off + st[dim] * index))
            },
            move |_, idx| {
                let mut i = idx.to_vec();
                i.insert(dim, Idx::constant(index));
                i
            },
        )
    }

    /// Same elements in row-major order with new sizes (the numel must match).
    pub fn reshape(&self, sizes: &[Size]) -> TensorVal {
        if sizes == self.sizes.as_slice() {
            return self.clone();
        }
        let own = self.sizes.clone();
        let new = sizes.to_vec();
        let own2 = own.clone();
        let new2 = new.clone();
        self.view_with(
            sizes.to_vec(),
            move |st, off| view_strides_sym(&own, st, &new).map(|s| (s, off)),
            move |b, idx| {
                let lin = linear_index(idx, &contiguous_strides_sym(&new2), Size::Const(0));
                unravel(b, &lin, &own2)
            },
        )
    }
}

/// Row-major coordinates of a linear index in `sizes`.
pub fn unravel(b: &BodyBuilder, lin: &Idx, sizes: &[Size]) -> Vec<Idx> {
    let strides = contiguous_strides_sym(sizes);
    let total: Size = sizes.iter().product();
    sizes
        .iter()
        .zip(&strides)
        .enumerate()
        .map(|(k, (&s, &st))| {
            if s == 1 {
                return Idx::constant(0);
            }
            let q = lin.floordiv(st, b.ranges());
            // The outermost dimension needs no modulo: the linear index is below the numel.
            // (Symbolic: only where the product is the numel as a polynomial.)
            let covers = match ((st * s).as_const(), total.as_const()) {
                (Some(a), Some(t)) => a >= t,
                _ => st * s == total,
            };
            if k == 0 || covers {
                q
            } else {
                q.modulo(s, b.ranges())
            }
        })
        .collect()
}

/// Strides for viewing a strided tensor with new sizes without copying, or `None` when the view
/// needs a copy: the rule `fx::infer` applies to metadata, applied to values.
pub use fx::infer::view_strides;

/// [`view_strides`] over sizes that may be symbolic. Constant layouts take fx's rule exactly
/// (a static graph's decisions are unchanged); a symbolic one is a view without a copy when
/// the base is contiguous as a polynomial (the new layout is then contiguous too), and
/// otherwise `None`: the view reads through index arithmetic, correct at every size.
pub fn view_strides_sym(own: &[Size], strides: &[Size], new: &[Size]) -> Option<Vec<Size>> {
    if let (Some(o), Some(s), Some(n)) = (as_consts(own), as_consts(strides), as_consts(new)) {
        return view_strides(&o, &s, &n).map(|v| consts(&v));
    }
    same_layout(own, strides, &contiguous_strides_sym(own)).then(|| contiguous_strides_sym(new))
}

/// Row-major strides of sizes that may be symbolic (fx's rule for constants: a size-0 or -1
/// dimension counts as 1).
pub fn contiguous_strides_sym(sizes: &[Size]) -> Vec<Size> {
    if let Some(c) = as_consts(sizes) {
        return consts(&contiguous_strides(&c));
    }
    let mut strides = vec![Size::Const(0); sizes.len()];
    let mut acc = Size::Const(1);
    for i in (0..sizes.len()).rev() {
        strides[i] = acc;
        acc = acc * sizes[i].at_least_one();
    }
    strides
}

/// Whether two layouts of `sizes` address every element alike (strides of size-1 dims never
/// matter; a symbolic size is never 1).
pub fn same_layout(sizes: &[Size], a: &[Size], b: &[Size]) -> bool {
    sizes
        .iter()
        .zip(a.iter().zip(b))
        .all(|(s, (x, y))| s.as_const().is_some_and(|c| c <= 1) || x == y)
}

/// The payload of a panic by which a lowering that takes constant sizes declines a symbolic
/// one: `lower_node` catches it and the whole graph takes its fallback, with the reason.
pub struct Decline(pub String);

/// Declines the node being lowered (see [`Decline`]). The panic hook skips this payload, so no
/// message is printed for it.
#[track_caller]
pub fn decline(what: &str) -> ! {
    install_quiet_hook();
    std::panic::panic_any(Decline(format!(
        "symbolic sizes: the lowering needs concrete {what}"
    )))
}

/// The constants of `xs`, or a decline naming `what`.
#[track_caller]
pub fn const_or_decline(xs: &[Size], what: &str) -> Vec<i64> {
    match as_consts(xs) {
        Some(c) => c,
        None => decline(what),
    }
}

fn install_quiet_hook() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let prev = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !info.payload().is::<Decline>() {
                prev(info)
            }
        }));
    });
}
