//! The loop-level IR: buffers, and loop bodies that compute one element of a buffer.
//!
//! Following Inductor, a body is written once and read by several handlers of [`BodyOps`] (the
//! reference interpreter in [`crate::interp`], the C printer in [`crate::codegen`], the
//! scheduler's dependency analysis [`Deps`]); [`Body::visit`] is the one walk over its values.
//! Unlike Inductor's Python closures, a body here is data: an arena of [`Val`] nodes in SSA
//! order, hash-consed as it is built so common subexpressions appear once.
//! A body is evaluated at one point of its iteration space; `Var(k)` in an index is the k-th
//! loop variable.

use std::collections::HashMap;

use fx::DType;

use crate::entity::{entity_id, EntityVec};
use crate::index::Idx;
use crate::size::Size;

/// The strides of a freshly allocated tensor: fx's rule, the one layout fact both crates use.
pub use fx::infer::layout::contiguous_strides;

entity_id!(
    /// A buffer: an index of [`IrGraph::buffers`] (printed `buf{id}` / `b{id}` in C).
    BufId
);
entity_id!(
    /// A value of a body: an index of [`Body::vals`].
    ValId
);
entity_id!(
    /// A node of the loop-level graph: an index of [`IrGraph::nodes`].
    IrNodeId
);

/// A Python/torch constant carried by a body. Floats compare by bit pattern so bodies can be
/// hash-consed.
#[derive(Clone, Copy, Debug)]
pub enum Scalar {
    F(f64),
    I(i64),
    B(bool),
}

impl PartialEq for Scalar {
    fn eq(&self, o: &Scalar) -> bool {
        match (self, o) {
            (Scalar::F(a), Scalar::F(b)) => a.to_bits() == b.to_bits(),
            (Scalar::I(a), Scalar::I(b)) => a == b,
            (Scalar::B(a), Scalar::B(b)) => a == b,
            _ => false,
        }
    }
}
impl Eq for Scalar {}
impl std::hash::Hash for Scalar {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        match self {
            Scalar::F(a) => (0u8, a.to_bits()).hash(h),
            Scalar::I(a) => (1u8, *a).hash(h),
            Scalar::B(a) => (2u8, *a).hash(h),
        }
    }
}

impl Scalar {
    pub fn as_f64(self) -> f64 {
        match self {
            Scalar::F(v) => v,
            Scalar::I(v) => v as f64,
            Scalar::B(v) => v as i64 as f64,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UnOp {
    Neg,
    Abs,
    Exp,
    Exp2,
    Expm1,
    Log,
    Log2,
    Log10,
    Log1p,
    Sqrt,
    Rsqrt,
    Sin,
    Cos,
    Tan,
    Asin,
    Acos,
    Atan,
    Sinh,
    Cosh,
    Tanh,
    Erf,
    Floor,
    Ceil,
    /// Round half to even, as `torch.round`.
    Round,
    Trunc,
    Reciprocal,
    Sign,
    /// Logical not (bool operand).
    Not,
    /// Bitwise not (integer operand).
    BitNot,
    IsNan,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    /// True division (floating operands only).
    Div,
    /// Python floor division (floating operands only; integer division falls back).
    FloorDiv,
    /// Python remainder, sign of the divisor (floating operands only).
    Rem,
    Pow,
    /// NaN-propagating maximum (`torch.maximum`).
    Max,
    /// NaN-propagating minimum.
    Min,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    /// Logical and bitwise forms share ops: on bool operands they are logical.
    And,
    Or,
    Xor,
    Atan2,
    /// C `fmod`: remainder with the dividend's sign (floating operands only).
    Fmod,
    /// The magnitude of the first operand with the sign of the second (floating operands only).
    CopySign,
}

impl BinOp {
    pub fn is_comparison(self) -> bool {
        matches!(
            self,
            BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge
        )
    }
}

/// One SSA value of a body.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Val {
    Load {
        buf: BufId,
        index: Idx,
    },
    Const(Scalar),
    /// The integer value of an index expression.
    Index(Idx),
    Unary(UnOp, ValId),
    Binary(BinOp, ValId, ValId),
    Where(ValId, ValId, ValId),
    Cast(ValId),
    /// A data-dependent load (`embedding`, `index_select`): `buf[index + stride * p]` where `p`
    /// is the integer value `pos`, wrapped once if negative when `wrap` (Python indexing), and
    /// checked against `0..size`. An out-of-range position is read clamped and reported: the
    /// run fails instead of returning data (torch raises an IndexError there).
    Gather {
        buf: BufId,
        index: Idx,
        pos: ValId,
        stride: Size,
        size: Size,
        wrap: bool,
    },
}

/// A loop body: values in SSA order, each with its dtype; `root` is the result.
///
/// Invariants the builder keeps: an operand precedes its user; a unary or binary op's operands
/// share one dtype, and its result has that dtype except for comparisons and `IsNan` (bool).
#[derive(Clone, Debug, Default)]
pub struct Body {
    pub vals: EntityVec<ValId, Val>,
    pub dtypes: EntityVec<ValId, DType>,
    pub root: ValId,
    /// Extents of the body's loop variables (what index simplification assumes).
    pub ranges: Vec<Size>,
}

/// The operands of a [`Val::Gather`], as handed to [`BodyOps::gather`].
pub struct Gather<'b, 'v, V> {
    pub buf: BufId,
    /// The base index (over the loop variables) the position is added to.
    pub index: &'b Idx,
    /// The handler's value of the integer position.
    pub pos: &'v V,
    pub stride: Size,
    pub size: Size,
    pub wrap: bool,
}

/// A handler over a loop body, Inductor's `ops` handler as a trait: [`Body::visit`] walks the
/// values once in SSA order and calls one method per value with the handler's values of its
/// operands. Every reader of a body is a handler (the reference interpreter computes numbers,
/// the C printer prints variables, [`Deps`] records what is read), so the walk over [`Val`] is
/// written once here and a new target adds a handler, not another `match`.
///
/// Each method gets the value's own dtype; a handler that needs its operands' dtypes keeps them
/// in its values. Methods are called exactly once per value, in order, so a handler may number
/// its results by counting calls.
pub trait BodyOps<'b> {
    type V: Clone;
    /// `buf[index]`.
    fn load(&mut self, buf: BufId, index: &'b Idx, dtype: DType) -> Self::V;
    fn constant(&mut self, value: Scalar, dtype: DType) -> Self::V;
    /// The integer value of an index expression (int64).
    fn index(&mut self, index: &'b Idx) -> Self::V;
    fn unary(&mut self, op: UnOp, a: &Self::V, dtype: DType) -> Self::V;
    /// `a op b` on operands of one dtype; `dtype` is bool for comparisons, else theirs.
    fn binary(&mut self, op: BinOp, a: &Self::V, b: &Self::V, dtype: DType) -> Self::V;
    /// `cond ? a : b`.
    fn select(&mut self, cond: &Self::V, a: &Self::V, b: &Self::V, dtype: DType) -> Self::V;
    /// `a` converted to `dtype` (or rounded to its storage precision, when already of it).
    fn cast(&mut self, a: &Self::V, dtype: DType) -> Self::V;
    /// A data-dependent read (see [`Val::Gather`]).
    fn gather(&mut self, g: Gather<'b, '_, Self::V>, dtype: DType) -> Self::V;
}

impl Body {
    /// Runs `h` over the body; returns its value of the root.
    pub fn visit<'b, H: BodyOps<'b>>(&'b self, h: &mut H) -> H::V {
        let mut vals = Vec::with_capacity(self.vals.len());
        self.visit_with(h, &mut vals)
    }

    /// As [`Body::visit`], with the handler's values kept in `vals` (cleared first), so a caller
    /// that visits once per element reuses one allocation.
    pub fn visit_with<'b, H: BodyOps<'b>>(&'b self, h: &mut H, vals: &mut Vec<H::V>) -> H::V {
        self.walk(h, vals);
        vals[self.root.index()].clone()
    }

    /// The one `match` on body values.
    fn walk<'b, H: BodyOps<'b>>(&'b self, h: &mut H, vals: &mut Vec<H::V>) {
        vals.clear();
        for (v, &d) in self.vals.iter().zip(&self.dtypes) {
            let r = match v {
                Val::Load { buf, index } => h.load(*buf, index, d),
                Val::Const(s) => h.constant(*s, d),
                Val::Index(e) => h.index(e),
                Val::Unary(op, a) => h.unary(*op, &vals[a.index()], d),
                Val::Binary(op, a, b) => h.binary(*op, &vals[a.index()], &vals[b.index()], d),
                Val::Where(c, a, b) => {
                    h.select(&vals[c.index()], &vals[a.index()], &vals[b.index()], d)
                }
                Val::Cast(a) => h.cast(&vals[a.index()], d),
                Val::Gather {
                    buf,
                    index,
                    pos,
                    stride,
                    size,
                    wrap,
                } => h.gather(
                    Gather {
                        buf: *buf,
                        index,
                        pos: &vals[pos.index()],
                        stride: *stride,
                        size: *size,
                        wrap: *wrap,
                    },
                    d,
                ),
            };
            vals.push(r);
        }
    }

    /// What the body reads and how much it computes (the dependency analysis).
    pub fn deps(&self) -> Deps<'_> {
        let mut deps = Deps::default();
        self.walk(&mut deps, &mut Vec::new());
        deps
    }

    /// Buffers this body loads at affine indices, with their indices.
    pub fn loads(&self) -> impl Iterator<Item = (BufId, &Idx)> + '_ {
        self.deps().loads.into_iter()
    }

    /// Buffers this body reads at data-dependent positions ([`Val::Gather`]).
    pub fn gathers(&self) -> impl Iterator<Item = BufId> + '_ {
        self.deps().gathers.into_iter().map(|(b, _)| b)
    }

    pub fn has_gather(&self) -> bool {
        !self.deps().gathers.is_empty()
    }

    /// Number of non-trivial operations (a cost estimate).
    pub fn op_count(&self) -> usize {
        self.deps().ops
    }
}

/// The dependency analysis as a [`BodyOps`] handler: what a body reads, in body order.
#[derive(Clone, Debug, Default)]
pub struct Deps<'b> {
    /// Affine loads: the buffer and its index.
    pub loads: Vec<(BufId, &'b Idx)>,
    /// Data-dependent reads: the buffer and the base index the position is added to.
    pub gathers: Vec<(BufId, &'b Idx)>,
    /// Every index expression (of loads, gathers and index values).
    pub indices: Vec<&'b Idx>,
    /// Unary, binary and select operations (a cost estimate).
    pub ops: usize,
}

impl<'b> BodyOps<'b> for Deps<'b> {
    type V = ();
    fn load(&mut self, buf: BufId, index: &'b Idx, _: DType) {
        self.loads.push((buf, index));
        self.indices.push(index);
    }
    fn constant(&mut self, _: Scalar, _: DType) {}
    fn index(&mut self, index: &'b Idx) {
        self.indices.push(index);
    }
    fn unary(&mut self, _: UnOp, _: &(), _: DType) {
        self.ops += 1;
    }
    fn binary(&mut self, _: BinOp, _: &(), _: &(), _: DType) {
        self.ops += 1;
    }
    fn select(&mut self, _: &(), _: &(), _: &(), _: DType) {
        self.ops += 1;
    }
    fn cast(&mut self, _: &(), _: DType) {}
    fn gather(&mut self, g: Gather<'b, '_, ()>, _: DType) {
        self.gathers.push((g.buf, g.index));
        self.indices.push(g.index);
    }
}

/// Builds a [`Body`], deduplicating identical values (free CSE) and memoizing lazy tensors' loads
/// so a DAG of inlined pointwise ops costs linear, not exponential, time.
pub struct BodyBuilder {
    body: Body,
    dedup: HashMap<(Val, DType), ValId>,
    pub(crate) memo: HashMap<(u64, Vec<Idx>), ValId>,
    /// Lazy values (by lazy id) already stored in a buffer, with its strides and offset: a
    /// load of one reads the buffer instead of inlining its computation again.
    pub(crate) stored: HashMap<u64, (BufId, Vec<Size>, Size)>,
}

impl BodyBuilder {
    pub fn new(ranges: Vec<Size>) -> BodyBuilder {
        BodyBuilder {
            body: Body {
                ranges,
                ..Body::default()
            },
            dedup: HashMap::new(),
            memo: HashMap::new(),
            stored: HashMap::new(),
        }
    }

    pub fn ranges(&self) -> &[Size] {
        &self.body.ranges
    }

    /// The loop variables as index expressions.
    pub fn vars(&self) -> Vec<Idx> {
        (0..self.body.ranges.len() as u32).map(Idx::var).collect()
    }

    pub fn dtype(&self, v: ValId) -> DType {
        self.body.dtypes[v]
    }

    pub fn push(&mut self, val: Val, dtype: DType) -> ValId {
        if let Some(v) = self.fold(&val, dtype) {
            return v;
        }
        if let Some(&id) = self.dedup.get(&(val.clone(), dtype)) {
            return id;
        }
        let id = self.body.vals.push(val.clone());
        self.body.dtypes.push(dtype);
        self.dedup.insert((val, dtype), id);
        id
    }

    pub fn load(&mut self, buf: BufId, index: Idx, dtype: DType) -> ValId {
        self.push(Val::Load { buf, index }, dtype)
    }

    /// `v` as an index expression over the loop variables, when it is one: an int64 index
    /// value or an int64 constant.
    fn as_index(&self, v: ValId) -> Option<Idx> {
        if self.body.dtypes[v] != DType::Int64 {
            return None;
        }
        match &self.body.vals[v] {
            Val::Index(e) => Some(e.clone()),
            Val::Const(Scalar::I(c)) => Some(Idx::constant(*c)),
            _ => None,
        }
    }

    fn as_bool(&self, v: ValId) -> Option<bool> {
        match self.body.vals[v] {
            Val::Const(Scalar::B(b)) if self.body.dtypes[v] == DType::Bool => Some(b),
            _ => None,
        }
    }

    /// An index expression as a value: a constant when it is one.
    fn index_or_const(&mut self, e: Idx) -> ValId {
        match e.as_constant() {
            Some(c) => self.constant(Scalar::I(c), DType::Int64),
            None => self.push(Val::Index(e), DType::Int64),
        }
    }

    /// Index propagation (Inductor's `IndexPropagation`): integer arithmetic on index values
    /// stays an index expression, a comparison the variables' ranges decide becomes a constant,
    /// a select on a constant takes its branch, and a gather whose position is an index
    /// expression proved in range becomes an affine load. Position tensors built from `arange`
    /// (a causal mask's `cumsum[b, q] == cumsum[b, k]`, `x[..., :8]` through `cat`) then cost
    /// what a strided read costs: no range check, and a loop the C compiler vectorizes.
    fn fold(&mut self, val: &Val, dtype: DType) -> Option<ValId> {
        match *val {
            Val::Binary(op, a, b) if dtype == DType::Int64 => {
                let (x, y) = (self.as_index(a)?, self.as_index(b)?);
                let e = match op {
                    BinOp::Add => x.add(&y),
                    BinOp::Sub => x.add(&y.scale(-1)),
                    BinOp::Mul => match (x.as_constant(), y.as_constant()) {
                        (Some(c), _) => y.scale(c),
                        (_, Some(c)) => x.scale(c),
                        _ => return None,
                    },
                    _ => return None,
                };
                Some(self.index_or_const(e))
            }
            Val::Binary(op, a, b) if op.is_comparison() => {
                let (x, y) = (self.as_index(a)?, self.as_index(b)?);
                let r = &self.body.ranges;
                // `p >= 0` and `p > 0` proved over the ranges.
                let ge0 = |p: &Idx| p.proved_nonneg(r);
                let gt0 = |p: &Idx| p.add_const(-1).proved_nonneg(r);
                let (d, e) = (x.add(&y.scale(-1)), y.add(&x.scale(-1)));
                let known = match op {
                    BinOp::Lt => (gt0(&e), ge0(&d)),
                    BinOp::Le => (ge0(&e), gt0(&d)),
                    BinOp::Gt => (gt0(&d), ge0(&e)),
                    BinOp::Ge => (ge0(&d), gt0(&e)),
                    BinOp::Eq => (ge0(&d) && ge0(&e), gt0(&d) || gt0(&e)),
                    BinOp::Ne => (gt0(&d) || gt0(&e), ge0(&d) && ge0(&e)),
                    _ => return None,
                };
                match known {
                    (true, _) => Some(self.constant(Scalar::B(true), DType::Bool)),
                    (_, true) => Some(self.constant(Scalar::B(false), DType::Bool)),
                    _ => None,
                }
            }
            Val::Binary(op @ (BinOp::And | BinOp::Or), a, b) if dtype == DType::Bool => {
                let absorbing = op == BinOp::Or;
                match (self.as_bool(a), self.as_bool(b)) {
                    (Some(k), _) if k == absorbing => Some(a),
                    (_, Some(k)) if k == absorbing => Some(b),
                    (Some(_), _) => Some(b),
                    (_, Some(_)) => Some(a),
                    _ => None,
                }
            }
            Val::Where(c, a, b) => self.as_bool(c).map(|k| if k { a } else { b }),
            Val::Gather {
                buf,
                ref index,
                pos,
                stride,
                size,
                wrap: _,
            } => {
                // Proved in range, so neither wrapped nor reported.
                let p = self.as_index(pos)?;
                if !p.within(size, &self.body.ranges) {
                    return None;
                }
                Some(self.load(buf, index.add(&p.scale(stride)), dtype))
            }
            _ => None,
        }
    }

    pub fn constant(&mut self, s: Scalar, dtype: DType) -> ValId {
        let s = match (s, dtype) {
            (s, DType::Bool) => Scalar::B(s.as_f64() != 0.0),
            (Scalar::F(v), d) if !d.is_floating_point() => Scalar::I(v as i64),
            (Scalar::B(b), d) if d.is_floating_point() => Scalar::F(b as i64 as f64),
            (Scalar::I(v), d) if d.is_floating_point() => Scalar::F(v as f64),
            (Scalar::B(b), _) => Scalar::I(b as i64),
            (s, _) => s,
        };
        self.push(Val::Const(s), dtype)
    }

    pub fn cast(&mut self, v: ValId, dtype: DType) -> ValId {
        if self.dtype(v) == dtype {
            return v;
        }
        if let Val::Const(s) = self.body.vals[v] {
            return self.constant(s, dtype);
        }
        self.push(Val::Cast(v), dtype)
    }

    /// `a` rounded to its dtype's storage precision, where values are computed wider than they
    /// are stored (float16/bfloat16 in float): eager rounds a result before an op that follows
    /// within one kernel (`div(.., rounding_mode="trunc")` truncates the rounded quotient).
    pub fn round_to_storage(&mut self, a: ValId) -> ValId {
        let d = self.dtype(a);
        if matches!(d, DType::Float16 | DType::BFloat16) {
            self.push(Val::Cast(a), d)
        } else {
            a
        }
    }

    pub fn unary(&mut self, op: UnOp, a: ValId) -> ValId {
        let d = if op == UnOp::IsNan {
            DType::Bool
        } else {
            self.dtype(a)
        };
        self.push(Val::Unary(op, a), d)
    }

    /// A binary op on operands already cast to one dtype; comparisons give bool.
    pub fn binary(&mut self, op: BinOp, a: ValId, b: ValId) -> ValId {
        debug_assert_eq!(self.dtype(a), self.dtype(b), "{op:?} on mixed dtypes");
        let d = if op.is_comparison() {
            DType::Bool
        } else {
            self.dtype(a)
        };
        self.push(Val::Binary(op, a, b), d)
    }

    pub fn where_(&mut self, c: ValId, a: ValId, b: ValId) -> ValId {
        let d = self.dtype(a);
        self.push(Val::Where(c, a, b), d)
    }

    pub fn index_value(&mut self, e: Idx) -> ValId {
        self.push(Val::Index(e), DType::Int64)
    }

    pub fn finish(mut self, root: ValId) -> Body {
        self.body.root = root;
        self.body
    }
}

/// What a buffer is.
#[derive(Clone, Debug, PartialEq)]
pub enum BufKind {
    /// Graph input `index` (the caller's tensor; never written, except by input write-back).
    Input(usize),
    /// Computed by a kernel, an extern call or a fallback.
    Computed,
    /// A fallback's result that nothing reads (an element of its result tuple no `getitem`
    /// takes). The host's tensor is dropped unchecked: torch's meta kernels and its CPU kernels
    /// disagree on the sizes of some unused results (`_embedding_bag`'s `offset2bag`).
    Discarded,
}

#[derive(Clone, Debug, PartialEq)]
pub struct BufferDecl {
    pub name: String,
    pub dtype: DType,
    pub sizes: Vec<Size>,
    pub strides: Vec<Size>,
    pub kind: BufKind,
}

impl BufferDecl {
    /// Elements of storage the layout spans (0 for an empty tensor).
    pub fn storage_numel(&self) -> Size {
        if self.sizes.iter().any(|s| *s == 0) {
            return Size::Const(0);
        }
        // A symbolic size is at least 2 (sizes 0 and 1 specialize), so only a constant can be 0.
        Size::Const(1)
            + self
                .sizes
                .iter()
                .zip(&self.strides)
                .map(|(s, st)| (*s - 1) * *st)
                .sum::<Size>()
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReduceOp {
    Sum,
    /// A sum whose adds run in index order, one at a time: `cumsum`'s running sum. torch's CPU
    /// kernel adds each row sequentially, so a float sum split over vector lanes or threads
    /// rounds differently where large terms cancel; the C target keeps this one sequential.
    /// (CUDA reassociates it as any sum: eager's CUDA scan is parallel too.)
    OrderedSum,
    Prod,
    Max,
    Min,
    /// Row-major position (over the reduced dims) of the first maximum, NaN counting as the
    /// largest value; the output is int64 while the body computes the values.
    ArgMax,
    /// As `ArgMax`, for the first minimum (NaN still wins, as in torch).
    ArgMin,
}

impl ReduceOp {
    pub fn is_arg(self) -> bool {
        matches!(self, ReduceOp::ArgMax | ReduceOp::ArgMin)
    }

    /// Whether the adds must run in index order (no vector lanes, no threads).
    pub fn is_ordered(self) -> bool {
        self == ReduceOp::OrderedSum
    }

    /// The binary op that folds a value into the accumulator (`None` for arg reductions, which
    /// track positions instead).
    pub fn combiner(self) -> Option<BinOp> {
        match self {
            ReduceOp::Sum | ReduceOp::OrderedSum => Some(BinOp::Add),
            ReduceOp::Prod => Some(BinOp::Mul),
            ReduceOp::Max => Some(BinOp::Max),
            ReduceOp::Min => Some(BinOp::Min),
            ReduceOp::ArgMax | ReduceOp::ArgMin => None,
        }
    }
}

/// A matmul-class or convolution call run by the host (torch) into a preallocated output.
#[derive(Clone, Debug, PartialEq)]
pub enum ExternCall {
    /// `torch.mm(a, b, out=out)`.
    Mm,
    /// `torch.bmm(a, b, out=out)`.
    Bmm,
    /// `torch.matmul(a, b, out=out)` for the shapes mm/bmm do not cover.
    Matmul,
    /// `torch.convolution(input, weight, bias, ...)` copied into `out`; `bias` is the optional third
    /// input.
    Convolution {
        stride: Vec<i64>,
        padding: Vec<i64>,
        dilation: Vec<i64>,
        transposed: bool,
        output_padding: Vec<i64>,
        groups: i64,
        /// The input is channels-last: the host may pass a channels-last copy of the weight,
        /// made once while the weight is unchanged, instead of oneDNN reordering it on every
        /// call.
        channels_last: bool,
    },
    /// `F.scaled_dot_product_attention(q, k, v, attn_mask, scale=scale, is_causal=is_causal,
    /// enable_gqa=enable_gqa)` whole: torch's fused CPU kernel never materializes the `[L, S]`
    /// score matrix. Inputs are q, k, v and, unless `mask` is `None`, the mask.
    Sdpa {
        scale: Option<f64>,
        is_causal: bool,
        mask: SdpaMask,
        /// q has more heads than k and v (a multiple): grouped-query attention.
        enable_gqa: bool,
    },
}

impl ExternCall {
    /// Whether the host returns a tensor it allocated itself (no `out=` form) rather than
    /// writing into a buffer the graph allocated.
    pub fn host_allocates(&self) -> bool {
        matches!(
            self,
            ExternCall::Convolution { .. } | ExternCall::Sdpa { .. }
        )
    }
}

/// How the fourth input of [`ExternCall::Sdpa`] masks the scores.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SdpaMask {
    None,
    /// Passed as `attn_mask` unchanged (boolean: True takes part; or float: added).
    AsIs,
    /// A `masked_fill(scores, mask, -inf)` mask (True: masked out), from the recognised
    /// attention pattern: the host passes `~mask`, and rows masked out entirely become NaN as
    /// the eager softmax makes them (the fused kernel would give zeros).
    FillNegInf,
}

/// A tensor operand of an extern or fallback call: a strided view of a buffer.
#[derive(Clone, Debug, PartialEq)]
pub struct View {
    pub buf: BufId,
    pub sizes: Vec<Size>,
    pub strides: Vec<Size>,
    pub offset: Size,
}

impl View {
    /// The sizes and strides as constants, for the lowering's layout decisions (which take
    /// constant sizes until the design's step 3).
    #[track_caller]
    pub fn const_layout(&self) -> (Vec<i64>, Vec<i64>) {
        (
            crate::size::expect_consts(&self.sizes, "a layout decision"),
            crate::size::expect_consts(&self.strides, "a layout decision"),
        )
    }
}

/// A fallback argument: a constant, a tensor view, or a sequence of them.
#[derive(Clone, Debug, PartialEq)]
pub enum FallbackArg {
    Const(fx::Arg),
    Tensor(View),
    Tuple(Vec<FallbackArg>),
    List(Vec<FallbackArg>),
}

#[derive(Clone, Debug)]
pub enum IrNode {
    /// `out[offset + index(vars)] = body(vars)` over `sizes`; `out` may be an input being
    /// written back. A node writing one range of `out` (a part of a `cat`, Inductor's
    /// `ConcatKernel`: each part stored into its slice by a plain loop of its own) has the
    /// range's sizes and the element offset where it starts; every other node covers all of
    /// `out` (`sizes` are its sizes, `offset` is 0). See [`IrGraph::writes_range`].
    Pointwise {
        out: BufId,
        sizes: Vec<Size>,
        body: Body,
        offset: Size,
    },
    /// `out[outer] = reduce over inner of body(outer ++ inner)`.
    Reduction {
        out: BufId,
        sizes: Vec<Size>,
        rsizes: Vec<Size>,
        op: ReduceOp,
        body: Body,
    },
    Extern {
        out: BufId,
        call: ExternCall,
        inputs: Vec<View>,
    },
    /// A torch call the inductor does not lower, run by the host; results copied into `outs`.
    Fallback {
        target: fx::Target,
        args: Vec<FallbackArg>,
        kwargs: Vec<(String, FallbackArg)>,
        outs: Vec<BufId>,
        reason: String,
        /// The graph node this call runs: an error it raises names it (`RunError::Op`), so
        /// the host can point at the user's code that made the op.
        node: fx::NodeId,
    },
}

impl IrNode {
    pub fn outputs(&self) -> Vec<BufId> {
        match self {
            IrNode::Pointwise { out, .. }
            | IrNode::Reduction { out, .. }
            | IrNode::Extern { out, .. } => vec![*out],
            IrNode::Fallback { outs, .. } => outs.clone(),
        }
    }

    /// Buffers read.
    pub fn reads(&self) -> Vec<BufId> {
        let mut v = Vec::new();
        match self {
            IrNode::Pointwise { body, .. } | IrNode::Reduction { body, .. } => {
                let deps = body.deps();
                v.extend(deps.loads.iter().map(|(b, _)| *b));
                v.extend(deps.gathers.iter().map(|(b, _)| *b));
            }
            IrNode::Extern { inputs, .. } => v.extend(inputs.iter().map(|x| x.buf)),
            IrNode::Fallback { args, kwargs, .. } => {
                fn walk(a: &FallbackArg, v: &mut Vec<BufId>) {
                    match a {
                        FallbackArg::Tensor(t) => v.push(t.buf),
                        FallbackArg::Tuple(xs) | FallbackArg::List(xs) => {
                            xs.iter().for_each(|x| walk(x, v))
                        }
                        FallbackArg::Const(_) => {}
                    }
                }
                args.iter().for_each(|a| walk(a, &mut v));
                kwargs.iter().for_each(|(_, a)| walk(a, &mut v));
            }
        }
        v.sort();
        v.dedup();
        v
    }
}

/// How a graph output is produced from buffers.
#[derive(Clone, Debug, PartialEq)]
pub enum OutputSpec {
    /// The buffer itself (a computed buffer allocated with the output's strides, or an input).
    Buffer(BufId),
    /// A view of a buffer (e.g. `x.t()` of an input keeps aliasing it, as in eager).
    View(View),
    /// A computed buffer's whole contiguous storage with the output's sizes, as a tensor of its
    /// own (`Host::reshape_own`): eager's result of an op that never aliases is no view, even
    /// where lowering wrote it through a reshape (`sum(keepdim=True)` into its reduced buffer).
    Own(View),
}

impl OutputSpec {
    /// The buffer whose storage the output is.
    pub fn buf(&self) -> BufId {
        match self {
            OutputSpec::Buffer(b) => *b,
            OutputSpec::View(v) | OutputSpec::Own(v) => v.buf,
        }
    }
}

/// A lowered graph: buffers, nodes in execution order, outputs.
#[derive(Clone, Debug, Default)]
pub struct IrGraph {
    pub buffers: EntityVec<BufId, BufferDecl>,
    pub nodes: EntityVec<IrNodeId, IrNode>,
    pub outputs: Vec<OutputSpec>,
    /// Inputs the graph mutates in place (their final value is written back by the last nodes).
    pub mutated_inputs: Vec<usize>,
    pub num_inputs: usize,
}

impl IrGraph {
    pub fn add_buffer(
        &mut self,
        dtype: DType,
        sizes: Vec<Size>,
        strides: Vec<Size>,
        kind: BufKind,
    ) -> BufId {
        let id = self.buffers.next_key();
        self.buffers.push(BufferDecl {
            name: format!("buf{id}"),
            dtype,
            sizes,
            strides,
            kind,
        })
    }

    /// Whether node `n` writes only a range of its output buffer (see [`IrNode::Pointwise`]).
    /// The scheduler gives such a node a kernel of its own and never fuses a reader of its
    /// buffer into it: the buffer is complete only once every range's node ran.
    pub fn writes_range(&self, n: IrNodeId) -> bool {
        match &self.nodes[n] {
            IrNode::Pointwise {
                out, sizes, offset, ..
            } => *offset != 0 || *sizes != self.buffers[*out].sizes,
            _ => false,
        }
    }

    /// Whether buffer `b` is written range by range by several nodes.
    pub fn written_by_ranges(&self, b: BufId) -> bool {
        self.nodes
            .keys()
            .any(|n| self.writes_range(n) && self.nodes[n].outputs() == [b])
    }

    pub fn fallback_reasons(&self) -> Vec<String> {
        self.nodes
            .iter()
            .filter_map(|n| match n {
                IrNode::Fallback { reason, .. } => Some(reason.clone()),
                _ => None,
            })
            .collect()
    }
}

/// `sum(idx[k] * strides[k]) + offset`.
pub fn linear_index(idx: &[Idx], strides: &[Size], offset: Size) -> Idx {
    let mut e = Idx::constant(offset);
    for (i, s) in idx.iter().zip(strides) {
        e = e.add(&i.scale(*s));
    }
    e
}
