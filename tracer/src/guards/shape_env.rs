//! The shape environment of one trace (dynamic shapes): the size symbols of the graph's inputs,
//! with their hints (the sizes seen while tracing) and sources, and the relations between sizes
//! the trace relied on. [`ShapeGuards`] is its compiled form in a cache entry's guard tree: per
//! call it reads one size per symbol and compares integers.
//!
//! As torch does: a dimension of size 0 or 1 is never symbolic (it specializes, and every symbol
//! is known to be at least 2, which broadcasting and contiguity reasoning rely on); under
//! `dynamic=True` input dimensions with equal sizes share one symbol (duck sizing, torch's
//! `DimDynamic.DUCK`), guarded to stay equal, while dimensions made dynamic by automatic dynamic
//! or a mark get a symbol each (`DimDynamic.DYNAMIC`); a branch on a size, or an op's
//! requirement on sizes, becomes a relation guard. An equality between two symbols that an op
//! or a branch needs is guarded and *replaces* one symbol by the other (torch's replacements):
//! later metadata names only the representative ([`ShapeEnv::canon`]). An equality between a
//! symbol and a constant (a branch `x.size(2) == 32`, an op that needs the size, a specialized
//! size) is guarded and replaces the symbol by the constant the same way, so later metadata
//! carries the constant (torch's replacements by constants). A stride of an input dense in no
//! order that is no product of its sizes (a column slice's row stride) is a symbol too, read
//! from `x.stride(d)` ([`SymbolInfo::stride`]; session 35).

use pyo3::prelude::*;

use fx::{Cond, FloatRelation, RelOp, Relation, SymExpr};

use crate::event::{FailedCheck, GuardRecord, Location};
use crate::source::{resolve, Scope, Source};

/// `torch.compile(dynamic=...)`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DynamicPolicy {
    /// `None`: static first; a dimension whose size changed at a recompile becomes dynamic.
    #[default]
    Automatic,
    /// `True`: every dimension dynamic from the first compile (but sizes 0 and 1).
    Always,
    /// `False`: never dynamic, marks included.
    Never,
}

/// One size symbol.
#[derive(Clone, Debug)]
pub struct SymbolInfo {
    pub hint: i64,
    /// The input it is read from: dimension `dim` of the tensor at `source`, or, for `None`,
    /// the int at `source` itself (an int argument that automatic dynamic made symbolic).
    pub source: Source,
    pub dim: Option<usize>,
    /// Inclusive bounds (`mark_dynamic(min=, max=)`); the lower one is at least 2, except for
    /// a size-oblivious symbol (automatic dynamic, see [`dynamic_dims`]): 1.
    pub min: i64,
    pub max: Option<i64>,
    /// Made for a duck-sized dimension (`dynamic=True`, unmarked): later dimensions of the
    /// same size share it. A symbol of a dimension made dynamic otherwise is never shared.
    pub duck: bool,
    /// The symbol is the stride of dimension `dim`, not its size (an input dense in no order
    /// whose stride is no product of its sizes: `fx::infer::layout::StrideRule::Free`).
    pub stride: bool,
}

impl SymbolInfo {
    /// Its name in guards and logs: `L['x'].size(1)`, `L['x'].stride(0)`, or `L['n']`.
    pub fn name(&self) -> String {
        self.read_text(&self.source.to_string())
    }

    /// How it is read from `obj`, the Python text of its input: `obj.size(1)`,
    /// `obj.stride(0)`, or `obj` itself (an int).
    pub fn read_text(&self, obj: &str) -> String {
        match (self.dim, self.stride) {
            (Some(d), false) => format!("{obj}.size({d})"),
            (Some(d), true) => format!("{obj}.stride({d})"),
            (None, _) => obj.to_string(),
        }
    }

    /// Where a runner reads it (`fx::passes::specialize::symbol_reads`' `dim`): `None` for an
    /// int, the dimension for a size, `STRIDE_READ` plus it for a stride.
    pub fn read_dim(&self) -> Option<usize> {
        self.dim
            .map(|d| d + usize::from(self.stride) * fx::passes::specialize::STRIDE_READ)
    }
}

/// How an input dimension is dynamic in a trace (see [`dynamic_dims`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DynDim {
    /// Inclusive bounds (`mark_dynamic(min=, max=)`, else 2 and none). A lower bound of 1
    /// makes the symbol size-oblivious: it may be 1 at run time (see [`dynamic_dims`]).
    pub min: i64,
    pub max: Option<i64>,
    /// Whether the dimension shares the symbol of an earlier one of equal size (torch's
    /// `DimDynamic.DUCK`: `dynamic=True` on a dimension nobody marked).
    pub duck: bool,
}

/// Symbols and relations of the trace under way.
#[derive(Default)]
pub struct ShapeEnv {
    pub symbols: Vec<SymbolInfo>,
    /// Input dimensions given an existing symbol because their size equalled its hint.
    pub duck: Vec<(Source, usize, u32)>,
    pub relations: Vec<(Relation, Option<Location>)>,
    /// Disjunctions the trace relies on, each guarded whole (`T in (2, 3, C)` decided true:
    /// one of the relations holds; see `shape_cond.rs`). Over the representatives.
    pub any: Vec<(Vec<Relation>, Option<Location>)>,
    /// Comparisons of symbolic floats the trace decided (`if n / 2 > 2:`, a float
    /// specialized to its value): `shape_float.rs`.
    pub floats: Vec<(FloatRelation, Option<Location>)>,
    /// Symbols guarded equal to another plus a constant, `(k, r, c)`: `k == r + c`, and `k` is
    /// written `r + c` from then on (torch's replacements; `c` is 0 for two batch sizes meeting
    /// in a broadcast, -6 for `x[6:] + y`). Kept apart from `relations`, which are in the
    /// representatives only (the inductor's templates move the representatives alone).
    pub equal: Vec<(u32, u32, i64, Option<Location>)>,
    /// Symbols guarded equal to a constant, `(k, c)`: `k == c`, and `k` is written `c` from
    /// then on (torch's replacements by constants). Guards apart from `relations`, which the
    /// replacement decides (`s2 == 32` in representatives is `32 == 32`).
    pub fixed: Vec<(u32, i64, Option<Location>)>,
    /// `value[k]`: the constant representative `k` stands for, if it was replaced by one.
    value: Vec<Option<i64>>,
    /// `same[k]`: the symbol standing for `k` (itself unless unified), and `shift[k]`: `k`'s
    /// offset from it (`s_k == s_same[k] + shift[k]`).
    same: Vec<u32>,
    shift: Vec<i64>,
    /// A unification happened since the graph's metadata was last rewritten.
    pub dirty: bool,
    /// The user's line under way (the traced instruction's), for guards an op adds while its
    /// shapes are inferred: a specialized size points at the line that caused it.
    pub origin: Option<Location>,
}

fn size_name(source: &Source, dim: usize) -> String {
    format!("{source}.size({dim})")
}

/// The lower bound of a symbolic int that is not (yet) size-like: none.
pub const INT_MIN: i64 = i64::MIN;

impl ShapeEnv {
    pub fn is_empty(&self) -> bool {
        self.symbols.is_empty()
    }

    pub fn hints(&self) -> Vec<i64> {
        self.symbols.iter().map(|s| s.hint).collect()
    }

    pub fn hint(&self, e: &SymExpr) -> Option<i64> {
        e.eval(&|k| self.symbols[k as usize].hint)
    }

    fn push(&mut self, info: SymbolInfo) -> SymExpr {
        self.symbols.push(info);
        self.same.push(self.symbols.len() as u32 - 1);
        self.shift.push(0);
        self.value.push(None);
        SymExpr::symbol(self.symbols.len() as u32 - 1)
    }

    /// The symbol for dimension `dim` of the input at `source`, of size `hint`. A duck-sized
    /// dimension (`d.duck`) takes an existing duck symbol of the same hint; otherwise, and for
    /// every other dimension, a new one (as torch's `create_symbol`: only `DimDynamic.DUCK`
    /// consults the sizes seen, so automatic dynamic's `[6, 6]` is two symbols, and sizes
    /// that part later do not recompile).
    pub fn symbol_for(&mut self, source: &Source, dim: usize, hint: i64, d: DynDim) -> SymExpr {
        if d.duck {
            if let Some(k) = self
                .symbols
                .iter()
                .position(|s| s.hint == hint && s.dim.is_some() && s.duck)
            {
                let k = k as u32;
                self.duck.push((source.clone(), dim, k));
                return SymExpr::symbol(k);
            }
        }
        self.push(SymbolInfo {
            hint,
            source: source.clone(),
            dim: Some(dim),
            min: d.min.max(1),
            max: d.max,
            duck: d.duck,
            stride: false,
        })
    }

    /// A symbol of its own for stride `dim` of the input at `source` (of value `hint`, at
    /// least 2): torch's stride symbol of an input dense in no order (a column slice of a
    /// parent whose width moves). Never duck-shared (torch's `DUCK` stride may share a size's
    /// symbol of equal value and guards the equality: one symbol each recompiles less).
    pub fn stride_symbol(&mut self, source: &Source, dim: usize, hint: i64) -> SymExpr {
        self.push(SymbolInfo {
            hint,
            source: source.clone(),
            dim: Some(dim),
            min: 2,
            max: None,
            duck: false,
            stride: true,
        })
    }

    /// The size-oblivious symbols (lower bound 1, see [`dynamic_dims`]), as representatives
    /// standing for no constant: `fx`'s shape rules verify every answer over them at 1 too.
    pub fn oblivious(&self) -> Vec<u32> {
        (0..self.symbols.len() as u32)
            .filter(|&k| {
                let s = &self.symbols[k as usize];
                s.dim.is_some()
                    && !s.stride
                    && s.min < 2
                    && self.rep(k) == k
                    && self.value[k as usize].is_none()
            })
            .collect()
    }

    /// An op needs the size-oblivious symbol `k` to be at least 2 (its answer at 1 differs:
    /// `squeeze`, a broadcast against another size): from now on it is, and the range guard
    /// says so (`2 <= L['x'].size(0)`), as torch's 0/1 specialization. `false` where the hint
    /// itself is 1 (the caller pins it instead).
    pub fn not_oblivious(&mut self, k: u32) -> bool {
        let r = self.rep(k) as usize;
        if self.symbols[r].hint < 2 {
            return false;
        }
        self.symbols[r].min = self.symbols[r].min.max(2);
        true
    }

    /// The symbol standing for `k`: `k`, or the one it was unified with.
    pub fn rep(&self, k: u32) -> u32 {
        self.rep_shift(k).0
    }

    /// `(r, c)`: `k` is written `r + c` (`(k, 0)` unless unified).
    pub fn rep_shift(&self, k: u32) -> (u32, i64) {
        let (mut k, mut c) = (k, 0);
        while let Some(&r) = self.same.get(k as usize) {
            if r == k {
                break;
            }
            c += self.shift[k as usize];
            k = r;
        }
        (k, c)
    }

    /// [`ShapeEnv::rep`] of every symbol (for `fx::infer::Symbols::same`).
    pub fn reps(&self) -> Vec<u32> {
        (0..self.symbols.len() as u32)
            .map(|k| self.rep(k))
            .collect()
    }

    /// Each symbol's offset from its representative (for `fx::infer::Symbols::shift`).
    pub fn shifts(&self) -> Vec<i64> {
        (0..self.symbols.len() as u32)
            .map(|k| self.rep_shift(k).1)
            .collect()
    }

    /// The constant symbol `k` was replaced by, if any (through its representative).
    pub fn value_of(&self, k: u32) -> Option<i64> {
        let (r, c) = self.rep_shift(k);
        self.value.get(r as usize).copied().flatten().map(|v| v + c)
    }

    /// What symbol `k` is written as: its constant, or its representative plus its shift
    /// (`None`: itself).
    pub fn replacement(&self, k: u32) -> Option<SymExpr> {
        if let Some(c) = self.value_of(k) {
            return Some(SymExpr::constant(c));
        }
        let (r, c) = self.rep_shift(k);
        (r != k).then(|| SymExpr::symbol(r).add_const(c))
    }

    /// Whether any symbol is written otherwise (a replacement by a symbol or a constant).
    pub fn has_replacements(&self) -> bool {
        !self.equal.is_empty() || !self.fixed.is_empty()
    }

    /// `e` over representatives only, with symbols replaced by constants folded in.
    pub fn canon(&self, e: &SymExpr) -> SymExpr {
        if !self.has_replacements() {
            return e.clone();
        }
        e.substitute(&|k| self.replacement(k))
    }

    /// `r` over the representatives (see [`ShapeEnv::canon`]).
    pub fn canon_relation(&self, r: &Relation) -> Relation {
        Relation::new(self.canon(&r.lhs), r.op, self.canon(&r.rhs))
    }

    /// The answer of `r` where it is the same for every size the environment admits without a
    /// new guard: decided by its constants, implied by the symbols' lower bounds, or a
    /// relation (or its negation) guarded already. `None`: it depends on the sizes.
    pub fn known(&self, r: &Relation) -> Option<bool> {
        let r = self.canon_relation(r);
        if let Some(answer) = r.decided() {
            return Some(answer);
        }
        let not = Relation::new(r.lhs.clone(), r.op.negate(), r.rhs.clone());
        let min = |k: u32| self.symbols[k as usize].min;
        if r.implied(&min) || self.relations.iter().any(|(x, _)| *x == r) {
            return Some(true);
        }
        if not.implied(&min) || self.relations.iter().any(|(x, _)| *x == not) {
            return Some(false);
        }
        None
    }

    /// Guards `a == b` (equal at the hints) and writes the later of the two as the earlier
    /// from now on (torch's replacement). Its bounds narrow to both symbols'. `false` when
    /// they are one symbol already or their hints differ.
    pub fn unify(&mut self, a: u32, b: u32, origin: Option<Location>) -> bool {
        self.unify_shifted(b, a, 0, origin)
    }

    /// Guards `b == a + c` (true at the hints) and writes the later representative as the
    /// earlier one plus the offset from then on (torch's replacement: `x[6:] + y` needs
    /// `s1 == s0 - 6`, and `s1` is written `s0 - 6`). The earlier one's bounds narrow to what
    /// both admit. `false` when they are one symbol already or the hints disagree.
    pub fn unify_shifted(&mut self, b: u32, a: u32, c: i64, origin: Option<Location>) -> bool {
        let ((ra, oa), (rb, ob)) = (self.rep_shift(a), self.rep_shift(b));
        let hint = |k: u32| self.symbols[k as usize].hint;
        // rb + ob == ra + oa + c, so rb == ra + d.
        let d = oa + c - ob;
        if ra == rb || hint(rb) != hint(ra) + d {
            return false;
        }
        // `hi == lo + d` from now on.
        let (lo, hi, d) = if ra < rb { (ra, rb, d) } else { (rb, ra, -d) };
        self.same[hi as usize] = lo;
        self.shift[hi as usize] = d;
        // A constant either stood for is the class's (the hints agree: the same constant).
        if self.value[lo as usize].is_none() {
            self.value[lo as usize] = self.value[hi as usize].map(|v| v - d);
        }
        let (min, max) = (self.symbols[hi as usize].min, self.symbols[hi as usize].max);
        let r = &mut self.symbols[lo as usize];
        r.min = r.min.max(min.saturating_sub(d));
        r.max = match (r.max, max.map(|m| m - d)) {
            (Some(x), Some(y)) => Some(x.min(y)),
            (x, y) => x.or(y),
        };
        self.equal.push((hi, lo, d, origin));
        self.recanon();
        true
    }

    /// The relations so far, rewritten after a replacement (those it decides are dropped;
    /// one that now pins a symbol to a constant becomes a replacement in turn).
    fn recanon(&mut self) {
        let old = std::mem::take(&mut self.relations);
        for (r, o) in old {
            let r = self.canon_relation(&r);
            self.add_relation(r, o);
        }
        for (rs, o) in std::mem::take(&mut self.any) {
            self.add_any(rs, o);
        }
        self.dirty = true;
    }

    /// Guards `k == c` (`c` is `k`'s hint) and writes `k` as `c` from now on (torch's
    /// replacement by a constant: later shape inference and the graph's metadata see the
    /// constant, so a constant `normalized_shape` or weight meets a constant width). `false`
    /// when `k` stands for a constant already or its hint is not `c`.
    pub fn fix(&mut self, k: u32, c: i64, origin: Option<Location>) -> bool {
        let r = self.rep(k);
        let s = &self.symbols[r as usize];
        if self.value[r as usize].is_some() || s.hint != c {
            return false;
        }
        // (Its bounds stay: they are guards of their own, and the failing one is the reason.)
        self.value[r as usize] = Some(c);
        self.fixed.push((r, c, origin));
        self.recanon();
        true
    }

    /// The symbol for the int at `source` (automatic dynamic made it symbolic), of value
    /// `hint`. Never shared with a size or another int: torch gives such an int its own symbol
    /// (`DimDynamic.DYNAMIC`, no duck sizing). It may be any int ([`INT_MIN`]: no range
    /// guard), as torch's; where it reaches a tensor's sizes the trace guards it at least 2
    /// ([`ShapeEnv::size_like`]), the assumption the shape rules make of every symbol.
    pub fn int_symbol(&mut self, source: &Source, hint: i64) -> SymExpr {
        if let Some(k) = self
            .symbols
            .iter()
            .position(|s| s.dim.is_none() && s.source.same_as(source))
        {
            return SymExpr::symbol(k as u32);
        }
        self.push(SymbolInfo {
            hint,
            source: source.clone(),
            dim: None,
            min: INT_MIN,
            max: None,
            duck: false,
            stride: false,
        })
    }

    /// Guards the int symbols among `symbols` at least 2, as sizes are: an op whose sizes or
    /// relations read a symbolic int (`torch.arange(n)`, `x[:n]`) was inferred by rules that
    /// assume it (torch treats such an int as size-like). Pure arithmetic (`x * n`) adds
    /// nothing, so `n` may then be 0, 1 or negative without a recompile, as in torch.
    ///
    /// An int symbol whose hint is 0 or 1 cannot be guarded so: the rules' result is wrong at
    /// its hint. Its source is then asked to stay static and the frame traced again
    /// ([`request_static_int`]; `true` is returned, and the caller stops the trace).
    pub fn size_like(&mut self, symbols: &[u32], origin: Option<Location>) -> bool {
        let mut retrace = false;
        for &k in symbols {
            let s = &mut self.symbols[k as usize];
            if s.dim.is_none() && s.min < 2 {
                if s.hint < 2 {
                    request_static_int(&s.source);
                    retrace = true;
                    continue;
                }
                s.min = 2;
                self.relations.push((
                    Relation::new(SymExpr::symbol(k), RelOp::Ge, SymExpr::constant(2)),
                    origin.clone(),
                ));
            }
        }
        retrace
    }

    /// The name of symbol `k` in guards and logs.
    pub fn name(&self, k: u32) -> String {
        self.symbols[k as usize].name()
    }

    /// Records that the trace relies on `r` (which holds at the hints). Relations that hold
    /// for every size, or are already recorded, are dropped.
    ///
    /// An equality that pins one symbol to a constant (`s2 == 32`, `2 * s0 + 1 == 9`) is not
    /// kept as a relation: the symbol is replaced by the constant ([`ShapeEnv::fix`]). Nor is
    /// one of two symbols (`s0 == s1`, two batch sizes meeting in a broadcast): the later is
    /// written as the earlier from then on ([`ShapeEnv::unify`], torch's replacement), so
    /// later ops see one symbol and need no probe of the two apart.
    pub fn add_relation(&mut self, r: Relation, origin: Option<Location>) {
        let r = self.canon_relation(&r);
        if r.decided() == Some(true) || self.relations.iter().any(|(x, _)| *x == r) {
            return;
        }
        if let Some((b, a, c)) = r.shifted_equality() {
            if self.unify_shifted(b, a, c, origin.clone()) {
                return;
            }
        }
        if let Some((k, c)) = pinned_value(&r) {
            if self.fix(k, c, origin.clone()) {
                return;
            }
        }
        // Implied by the symbols' own lower bounds (every symbol is at least 2).
        if r.implied(&|k| self.symbols[k as usize].min) {
            return;
        }
        self.relations.push((r, origin));
    }

    /// `lhs op rhs` decided at the hints, with the answer guarded (a branch on sizes).
    pub fn decide(
        &mut self,
        lhs: &SymExpr,
        op: RelOp,
        rhs: &SymExpr,
        origin: Option<Location>,
    ) -> Option<bool> {
        let r = Relation::new(lhs.clone(), op, rhs.clone());
        let answer = r.eval(&|k| self.symbols[k as usize].hint)?;
        // `a == b` of two symbols, true (or `a != b`, false): one symbol from now on (as
        // torch's replacement).
        if answer == (op == RelOp::Eq) && matches!(op, RelOp::Eq | RelOp::Ne) {
            if let (Some(a), Some(b)) = (lhs.as_symbol(), rhs.as_symbol()) {
                if self.unify(a, b, origin.clone()) {
                    return Some(answer);
                }
            }
        }
        let guarded = if answer {
            r
        } else {
            Relation::new(lhs.clone(), op.negate(), rhs.clone())
        };
        self.add_relation(guarded, origin);
        Some(answer)
    }

    /// The guards of this environment, for a cache entry.
    pub fn guards(&self) -> ShapeGuards {
        let equal = self.equal.iter().map(|(k, r, c, o)| {
            (
                Cond::Rel(Relation::new(
                    SymExpr::symbol(*k),
                    RelOp::Eq,
                    SymExpr::symbol(*r).add_const(*c),
                )),
                o.clone(),
            )
        });
        let fixed = self.fixed.iter().map(|(k, c, o)| {
            (
                Cond::Rel(Relation::new(
                    SymExpr::symbol(*k),
                    RelOp::Eq,
                    SymExpr::constant(*c),
                )),
                o.clone(),
            )
        });
        let relations = self
            .relations
            .iter()
            .map(|(r, o)| (Cond::Rel(r.clone()), o.clone()));
        let any = self
            .any
            .iter()
            .map(|(rs, o)| (Cond::Any(rs.clone()), o.clone()));
        ShapeGuards {
            symbols: self.symbols.clone(),
            duck: self.duck.clone(),
            relations: equal.chain(fixed).chain(relations).chain(any).collect(),
            floats: self.floats.clone(),
        }
    }
}

/// `(k, c)` when the equality `r` holds for one value `c` of its one symbol `k` alone: `r` is
/// `a * k + b == 0` after moving every term to one side, with `a` dividing `-b`.
fn pinned_value(r: &Relation) -> Option<(u32, i64)> {
    if r.op != RelOp::Eq {
        return None;
    }
    let [k] = r.symbols()[..] else {
        return None;
    };
    let d = r.lhs.sub(&r.rhs);
    let at = |v: i64| d.eval(&|_| v);
    let b = at(0)?;
    let a = at(1)? - b;
    if a == 0 || b % a != 0 || d != SymExpr::symbol(k).mul_const(a).add_const(b) {
        return None;
    }
    Some((k, -b / a))
}

/// The shape guards of a cache entry.
pub struct ShapeGuards {
    symbols: Vec<SymbolInfo>,
    duck: Vec<(Source, usize, u32)>,
    /// Relations and disjunctions, each one guard.
    relations: Vec<(Cond, Option<Location>)>,
    /// Comparisons of symbolic floats, each one guard.
    floats: Vec<(FloatRelation, Option<Location>)>,
}

fn read_size(py: Python<'_>, scope: &Scope, source: &Source, dim: usize) -> Option<i64> {
    let v = resolve(py, scope, source)?;
    let shape = v.getattr(pyo3::intern!(py, "shape")).ok()?;
    shape.get_item(dim).ok()?.extract::<i64>().ok()
}

/// An int symbol's value on this call: the int itself (exactly an `int`: a bool or another int
/// subclass is not read as one; its type guard fails first in the tree anyway).
fn int_value(py: Python<'_>, v: &Bound<'_, PyAny>) -> Option<i64> {
    if !v.get_type().is(py.get_type::<pyo3::types::PyInt>()) {
        return None;
    }
    v.extract::<i64>().ok()
}

/// The parts of [`ShapeGuards`], for precompile's export.
pub type ShapeGuardParts<'a> = (
    &'a [SymbolInfo],
    &'a [(Source, usize, u32)],
    &'a [(Cond, Option<Location>)],
    &'a [(FloatRelation, Option<Location>)],
);

impl ShapeGuards {
    /// Symbols, duck-sized dimensions and relations, for a precompiled artifact to write the
    /// same checks as Python conditions.
    pub fn parts(&self) -> ShapeGuardParts<'_> {
        (&self.symbols, &self.duck, &self.relations, &self.floats)
    }

    pub fn is_empty(&self) -> bool {
        self.symbols.is_empty()
    }

    /// Each symbol's value on this call and the object it was read from. A tensor's `shape`
    /// is read once for all its symbols (the symbols of one input are made in a row).
    fn values(&self, py: Python<'_>, scope: &Scope) -> Option<(Vec<i64>, Vec<usize>)> {
        let mut values = Vec::with_capacity(self.symbols.len());
        let mut objects = Vec::with_capacity(self.symbols.len());
        self.values_into(py, scope, &mut values, &mut objects)?;
        Some((values, objects))
    }

    /// [`ShapeGuards::values`] into buffers the caller reuses.
    fn values_into(
        &self,
        py: Python<'_>,
        scope: &Scope,
        values: &mut Vec<i64>,
        objects: &mut Vec<usize>,
    ) -> Option<()> {
        let mut last: Option<(&Source, Bound<'_, PyAny>, Bound<'_, pyo3::types::PyTuple>)> = None;
        for s in &self.symbols {
            let Some(d) = s.dim else {
                let v = resolve(py, scope, &s.source)?;
                objects.push(v.as_ptr() as usize);
                values.push(int_value(py, &v)?);
                continue;
            };
            if s.stride {
                let o = resolve(py, scope, &s.source)?;
                let st = o.call_method0(pyo3::intern!(py, "stride")).ok()?;
                objects.push(o.as_ptr() as usize);
                values.push(st.get_item(d).ok()?.extract::<i64>().ok()?);
                continue;
            }
            let fresh = !last
                .as_ref()
                .is_some_and(|(src, _, _)| std::ptr::eq(*src, &s.source) || src.same_as(&s.source));
            if fresh {
                let o = resolve(py, scope, &s.source)?;
                let sh = o
                    .getattr(pyo3::intern!(py, "shape"))
                    .ok()?
                    .cast_into::<pyo3::types::PyTuple>()
                    .ok()?;
                last = Some((&s.source, o, sh));
            }
            let (_, obj, shape) = last.as_ref()?;
            objects.push(obj.as_ptr() as usize);
            values.push(shape.get_item(d).ok()?.extract::<i64>().ok()?);
        }
        Some(())
    }

    fn name(&self, k: u32) -> String {
        self.symbols[k as usize].name()
    }

    /// The fast path: every size in its range, duck-sized dimensions equal, relations true.
    /// On success the values read are kept for the runner of this entry
    /// ([`take_checked_sizes`]).
    pub fn check(&self, py: Python<'_>, scope: &Scope) -> bool {
        CHECKED.with(|c| {
            // Busy (a check inside this one's Python reads): check without keeping the values.
            let Ok(mut c) = c.try_borrow_mut() else {
                return self
                    .values(py, scope)
                    .is_some_and(|(v, _)| self.failure_in(py, scope, &v).is_none());
            };
            let c = &mut *c;
            c.valid = false;
            c.values.clear();
            c.objects.clear();
            if self
                .values_into(py, scope, &mut c.values, &mut c.objects)
                .is_none()
                || self.failure_in(py, scope, &c.values).is_some()
            {
                return false;
            }
            c.dims.clear();
            c.dims.extend(self.symbols.iter().map(SymbolInfo::read_dim));
            c.valid = true;
            true
        })
    }

    fn first_failure(&self, py: Python<'_>, scope: &Scope) -> Option<String> {
        let Some((values, _)) = self.values(py, scope) else {
            return Some("an input size could not be read".into());
        };
        self.failure_in(py, scope, &values)
    }

    fn failure_in(&self, py: Python<'_>, scope: &Scope, values: &[i64]) -> Option<String> {
        for (k, (s, v)) in self.symbols.iter().zip(values).enumerate() {
            if s.dim.is_none() {
                // An int's bound, if any, is one of the relations (`size_like`).
                continue;
            }
            if *v < s.min || s.max.is_some_and(|m| *v > m) {
                return Some(format!("{} (actual {v})", self.range_text(k as u32)));
            }
        }
        for (source, dim, k) in &self.duck {
            let actual = read_size(py, scope, source, *dim);
            if actual != Some(values[*k as usize]) {
                return Some(format!(
                    "{} == {} (actual {} vs {})",
                    size_name(source, *dim),
                    self.name(*k),
                    actual.map_or("?".into(), |a| a.to_string()),
                    values[*k as usize]
                ));
            }
        }
        for (r, _) in &self.relations {
            if r.eval(&|k| values[k as usize]) != Some(true) {
                return Some(r.render(&|k| self.name(k)));
            }
        }
        for (r, _) in &self.floats {
            if r.eval(&|k| values[k as usize]) != Some(true) {
                return Some(r.render(&|k| self.name(k), false));
            }
        }
        None
    }

    fn range_text(&self, k: u32) -> String {
        let s = &self.symbols[k as usize];
        match s.max {
            Some(m) => format!("{} <= {} <= {m}", s.min, self.name(k)),
            None => format!("{} <= {}", s.min, self.name(k)),
        }
    }

    pub fn failures(&self, py: Python<'_>, scope: &Scope, out: &mut Vec<FailedCheck>) {
        if let Some(reason) = self.first_failure(py, scope) {
            out.push(FailedCheck::global("SHAPE_ENV", reason));
        }
    }

    /// Guard lines: `SHAPE_ENV 2 <= L['x'].size(1)`, `SHAPE_ENV L['y'].size(0) == L['x'].size(0)`,
    /// `SHAPE_ENV L['x'].size(0) > 8`.
    pub fn describe(&self, out: &mut Vec<GuardRecord>) {
        let rec = |text: String, origin: Option<Location>| GuardRecord {
            kind: "SHAPE_ENV",
            source: None,
            text: format!("SHAPE_ENV {text}"),
            origin,
        };
        for (k, s) in self.symbols.iter().enumerate() {
            if s.dim.is_some() {
                out.push(rec(self.range_text(k as u32), None));
            }
        }
        for (source, dim, k) in &self.duck {
            out.push(rec(
                format!("{} == {}", size_name(source, *dim), self.name(*k)),
                None,
            ));
        }
        for (r, origin) in &self.relations {
            out.push(rec(r.render(&|k| self.name(k)), origin.clone()));
        }
        for (r, origin) in &self.floats {
            out.push(rec(r.render(&|k| self.name(k), false), origin.clone()));
        }
    }
}

/// The symbol values the last successful shape check read on this thread, with the objects
/// (by address) and dimensions they were read from: the runner of the entry it admitted takes
/// them instead of reading the sizes again.
/// The buffers are kept from call to call (no allocation on the hot path).
struct Checked {
    valid: bool,
    values: Vec<i64>,
    objects: Vec<usize>,
    dims: Vec<Option<usize>>,
}

thread_local! {
    static CHECKED: std::cell::RefCell<Checked> = const {
        std::cell::RefCell::new(Checked {
            valid: false,
            values: Vec::new(),
            objects: Vec::new(),
            dims: Vec::new(),
        })
    };
}

/// Forgets the values of the last shape check (every guard tree check starts so, so the values
/// a runner takes are those of the check that admitted its call).
pub fn clear_checked_sizes() {
    CHECKED.with(|c| {
        if let Ok(mut c) = c.try_borrow_mut() {
            c.valid = false;
        }
    });
}

/// The values of the symbols `reads` names (`(input, dim, symbol)`, as
/// `fx::passes::specialize::symbol_reads`), taken from the shape check that admitted this call:
/// `None` (the caller reads the sizes) unless each read's input is the very object the check
/// read that symbol from, at that dimension. Taken once: a second runner call reads again.
/// `TORCHFERRO_SIZE_HANDOFF=0` turns the hand-off off (the runner reads the sizes again; for
/// `bench/dynamic_overhead.py`'s before/after).
pub fn take_checked_sizes(
    reads: &[(usize, usize, u32)],
    inputs: &[Bound<'_, PyAny>],
) -> Option<Vec<i64>> {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    CHECKED.with(|c| {
        let mut checked = c.try_borrow_mut().ok()?;
        if !std::mem::replace(&mut checked.valid, false) {
            return None;
        }
        if !*ON.get_or_init(|| std::env::var("TORCHFERRO_SIZE_HANDOFF").map_or(true, |v| v != "0"))
        {
            return None;
        }
        reads
            .iter()
            .map(|&(i, d, k)| {
                let k = k as usize;
                // An int input's symbol is read from the int itself (`dim` None in the check).
                let dim = (d != fx::passes::specialize::INT_INPUT).then_some(d);
                let same = checked.dims.get(k) == Some(&dim)
                    && inputs.get(i).map(|o| o.as_ptr() as usize)
                        == checked.objects.get(k).copied();
                same.then(|| checked.values[k])
            })
            .collect()
    })
}

/// What the compile of one frame decides dynamic: the `dynamic=` policy and the dimensions
/// automatic dynamic found changing (by source text and dimension).
#[derive(Clone, Debug, Default)]
pub struct TracePolicy {
    pub policy: DynamicPolicy,
    pub automatic: Vec<(String, usize)>,
    /// Int sources (by text) automatic dynamic found changing: they become symbolic ints.
    pub ints: Vec<String>,
    /// Int sources (by text) that stay static in this compile although they would be symbolic:
    /// traced at 0 or 1, they reached a size ([`ShapeEnv::size_like`]).
    pub static_ints: Vec<String>,
    /// Dimensions automatic dynamic makes dynamic may be 1 in the same graph
    /// (`config::automatic_dynamic_size_oblivious`, read by the compile that sets the policy).
    pub size_oblivious: bool,
}

thread_local! {
    static POLICY: std::cell::RefCell<TracePolicy> = std::cell::RefCell::new(TracePolicy::default());
    /// A trace under way met an int it must keep static ([`request_static_int`]).
    static RETRACE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Sets the policy the traces of this thread follow (`compile.rs`, before tracing a frame).
pub fn set_policy(p: TracePolicy) {
    POLICY.with(|c| *c.borrow_mut() = p);
    RETRACE.with(|r| r.set(false));
}

/// The int at `source`, symbolic in the trace under way, stays static from the next trace of
/// this compile on: it was traced at 0 or 1 and reached a size, where the shape rules assume
/// every symbol is at least 2. (torch keeps such an int symbolic and reasons about sizes 0 and
/// 1 size-obliviously; here the frame is traced again with it a guarded constant.)
pub fn request_static_int(source: &Source) {
    POLICY.with(|c| c.borrow_mut().static_ints.push(source.to_string()));
    RETRACE.with(|r| r.set(true));
}

/// Whether the trace that just ended must be done again ([`request_static_int`]); clears it.
pub fn take_retrace() -> bool {
    RETRACE.with(|r| r.replace(false))
}

/// Whether the int at `source` was asked to stay static in this compile.
pub fn int_kept_static(source: &Source) -> bool {
    let text = source.to_string();
    POLICY.with(|c| c.borrow().static_ints.contains(&text))
}

/// Whether the int `value` read from `source` is a symbolic int in this trace: automatic
/// dynamic saw it change at a recompile (`CodeCache::automatic_dynamic_ints`) or it is an
/// argument of the frame under `dynamic=True`, and it is exactly an `int`. Any value: as
/// torch's unspecialized ints (`create_unspecified_symbol`, which does not specialize 0 and 1),
/// a counter seen at 0 and then 1 is symbolic from the recompile at 1 on. One at 0 or 1 that
/// reaches a size is traced again static ([`request_static_int`]). `dynamic=False` keeps ints
/// static.
pub fn int_is_dynamic(py: Python<'_>, source: &Source, value: &Bound<'_, PyAny>) -> bool {
    if !value.get_type().is(py.get_type::<pyo3::types::PyInt>()) || value.extract::<i64>().is_err()
    {
        return false;
    }
    POLICY.with(|c| {
        let p = c.borrow();
        if p.static_ints.contains(&source.to_string()) {
            return false;
        }
        match p.policy {
            DynamicPolicy::Never => false,
            // `dynamic=True` makes the frame's int arguments symbolic from the first compile,
            // as torch does (`L['n']`; an int read from an attribute or a container stays
            // static until it changes).
            DynamicPolicy::Always if source.root_local().is_some() && source.steps().len() == 1 => {
                true
            }
            _ => p.ints.contains(&source.to_string()),
        }
    })
}

fn index_set(py: Python<'_>, v: &Bound<'_, PyAny>, attr: &str) -> Vec<i64> {
    let _ = py;
    v.getattr(attr)
        .ok()
        .and_then(|s| {
            s.try_iter()
                .ok()?
                .map(|i| i.ok()?.extract::<i64>().ok())
                .collect::<Option<Vec<i64>>>()
        })
        .unwrap_or_default()
}

/// `(min, max)` of `mark_dynamic(t, dim, min=, max=)`, from torch's `_dynamo_dynamic_range`.
fn marked_range(v: &Bound<'_, PyAny>, dim: usize) -> (i64, Option<i64>) {
    let Ok(ranges) = v.getattr("_dynamo_dynamic_range") else {
        return (2, None);
    };
    let Ok(iter) = ranges.try_iter() else {
        return (2, None);
    };
    for r in iter.flatten() {
        if r.getattr("dim").and_then(|d| d.extract::<usize>()).ok() == Some(dim) {
            let min = r
                .getattr("min")
                .ok()
                .and_then(|m| m.extract::<i64>().ok())
                .unwrap_or(2);
            let max = r.getattr("max").ok().and_then(|m| m.extract::<i64>().ok());
            return (min, max);
        }
    }
    (2, None)
}

/// For each dimension of the input tensor `v` at `source`: `Some((min, max))` when it is
/// dynamic in this trace. Sizes 0 and 1 specialize; `mark_static` wins over every other
/// reason; `mark_dynamic` holds even under `dynamic=False`; parameters stay static (torch's
/// `force_parameter_static_shapes`). A tensor dense in some order of its dimensions
/// (contiguous, transposed, permuted, channels-last) has strides that are products of its
/// sizes in that order (`layout::dense_order`); any other (a slice of a wider tensor,
/// `ids[:, :3]`; an expanded view) has torch's stride rules (`layout::stride_rules`): 0 and 1
/// constants, products of another dimension's size and stride, and any other stride a symbol
/// of its own ([`ShapeEnv::stride_symbol`]), so a parent of another width shares the graph.
pub fn dynamic_dims(py: Python<'_>, source: &Source, v: &Bound<'_, PyAny>) -> Vec<Option<DynDim>> {
    let policy = POLICY.with(|c| c.borrow().clone());
    let sizes: Vec<i64> = v
        .getattr("shape")
        .and_then(|s| s.extract())
        .unwrap_or_default();
    let none = vec![None; sizes.len()];
    let strides: Vec<i64> = v
        .call_method0("stride")
        .and_then(|s| s.extract())
        .unwrap_or_default();
    if strides.len() != sizes.len() {
        return none;
    }
    let is_param = py
        .import("torch")
        .and_then(|t| t.getattr("nn")?.getattr("Parameter"))
        .and_then(|p| v.is_instance(&p))
        .unwrap_or(false);
    // A buffer (or parameter) read from a module's `_buffers`/`_parameters` dict stays static
    // as well (torch's `force_parameter_static_shapes` covers both): Llama's rotary `inv_freq`
    // under `dynamic=True` would otherwise get a symbol that its arithmetic then pins.
    let is_param = is_param || from_param_or_buffer_dict(py, source);
    let marked = index_set(py, v, "_dynamo_dynamic_indices");
    let weak = index_set(py, v, "_dynamo_weak_dynamic_indices");
    let fixed = index_set(py, v, "_dynamo_static_indices");
    let name = source.to_string();
    sizes
        .iter()
        .enumerate()
        .map(|(i, &size)| {
            let d = i as i64;
            let automatic = policy.automatic.iter().any(|(s, k)| *s == name && *k == i);
            // Size-oblivious (issue 18; torch's `backed_size_oblivious`, here for automatic
            // dynamic only): a dimension automatic dynamic made dynamic may be 1, at trace time
            // or later, in the same graph, unless an op's answer at 1 differs (then it is at
            // least 2, or, traced at 1, pinned to 1: `infer.rs`).
            let oblivious = automatic
                && !is_param
                && policy.policy == DynamicPolicy::Automatic
                && !marked.contains(&d)
                && !weak.contains(&d)
                && policy.size_oblivious;
            if fixed.contains(&d) || size < 1 || (size < 2 && !oblivious) {
                return None;
            }
            if oblivious {
                return Some(DynDim {
                    min: 1,
                    max: None,
                    duck: false,
                });
            }
            if marked.contains(&d) {
                let (min, max) = marked_range(v, i);
                return Some(DynDim {
                    min: min.max(2),
                    max,
                    duck: false,
                });
            }
            // `dynamic=False` turns off everything but explicit marks, as torch.
            if policy.policy == DynamicPolicy::Never {
                return None;
            }
            // Automatic dynamic and `maybe_mark_dynamic` make torch's `DimDynamic.DYNAMIC` (a
            // symbol of its own); `dynamic=True` alone makes `DimDynamic.DUCK`.
            let weak = weak.contains(&d);
            let always = !is_param && policy.policy == DynamicPolicy::Always;
            (weak || (!is_param && automatic) || always).then_some(DynDim {
                min: 2,
                max: None,
                duck: !weak && !automatic,
            })
        })
        .collect()
}

/// Whether `source` reads through a module's `_buffers` or `_parameters` dict
/// (`m._buffers['inv_freq']`, anywhere along the path).
fn from_param_or_buffer_dict(py: Python<'_>, source: &Source) -> bool {
    source.steps().windows(2).any(|w| match w {
        [crate::source::Step::Attr { name }, crate::source::Step::Item { .. }] => {
            matches!(name.bind(py).to_str(), Ok("_buffers" | "_parameters"))
        }
        _ => false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(k: u32) -> SymExpr {
        SymExpr::symbol(k)
    }

    fn c(v: i64) -> SymExpr {
        SymExpr::constant(v)
    }

    /// An op's requirement `s0 == s1` (two batch sizes meeting in a broadcast) is a guard and a
    /// replacement: `s1` is written `s0` from then on, relations over it included, and the
    /// guards say `s1 == s0`. Symbols of unequal hints stay apart (the op was invalid there).
    #[test]
    fn an_equality_of_two_symbols_unifies_them() {
        let dyn_dim = DynDim {
            min: 2,
            max: None,
            duck: false,
        };
        let mut env = ShapeEnv::default();
        let x = Source::local(0, "x");
        let t = Source::local(1, "t");
        env.symbol_for(&x, 0, 5, dyn_dim);
        env.symbol_for(&t, 0, 5, dyn_dim);
        env.symbol_for(&t, 1, 7, dyn_dim);
        env.add_relation(Relation::new(s(1), RelOp::Gt, c(4)), None);
        env.add_relation(Relation::new(s(0), RelOp::Eq, s(1)), None);
        assert_eq!(env.rep(1), 0);
        assert_eq!(env.canon(&s(1).add(&s(2))), s(0).add(&s(2)));
        let rels: Vec<String> = env.relations.iter().map(|(r, _)| r.to_string()).collect();
        assert_eq!(rels, ["s0 > 4"]);
        assert_eq!(
            env.equal.iter().map(|e| (e.0, e.1)).collect::<Vec<_>>(),
            [(1, 0)]
        );
        // 5 vs 7: no replacement (an op never returns it: false at the hints, it refuses).
        env.add_relation(Relation::new(s(0), RelOp::Eq, s(2)), None);
        assert_eq!(env.rep(2), 2);
    }

    #[test]
    fn an_equality_of_one_symbol_and_a_constant_pins_it() {
        let eq = |l: SymExpr, r: SymExpr| pinned_value(&Relation::new(l, RelOp::Eq, r));
        assert_eq!(eq(s(0), c(32)), Some((0, 32)));
        assert_eq!(eq(c(32), s(1)), Some((1, 32)));
        // 2 * s0 + 1 == 9
        assert_eq!(eq(s(0).mul_const(2).add_const(1), c(9)), Some((0, 4)));
        // Not one value of one symbol: two symbols, a product, a quotient, no integer root.
        assert_eq!(eq(s(0), s(1)), None);
        assert_eq!(eq(s(0).mul(&s(1)), c(6)), None);
        assert_eq!(eq(s(0).mul(&s(0)), c(16)), None);
        assert_eq!(eq(s(0).floordiv(&c(2)), c(3)), None);
        assert_eq!(eq(s(0).mul_const(2), c(9)), None);
        assert_eq!(pinned_value(&Relation::new(s(0), RelOp::Ne, c(32))), None);
    }
}
