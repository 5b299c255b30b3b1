//! The guard trie of one cache entry ([`GuardTree`]): checks hung off source paths, deferred
//! until the traced code uses the value, evaluated against a [`Scope`] with each value fetched
//! once, and described for the guard listing and failure reasons.

use pyo3::prelude::*;

use crate::event::Location;
use crate::source::{resolve, Scope, Source, Step};

use super::check::{timed, Check};
use super::fast::{Collected, DictSeen, TensorBatch};
use super::memo::{identity_pure, Counts, DictAbsence, FetchMemo};
use super::torch_state::{autocast_state, grad_enabled};

mod changes;
mod report;

struct LeafCheck {
    check: Check,
    source: Source,
    /// The user line whose use of the value made this guard.
    origin: Option<Location>,
    /// The check's place in its tree's [`TensorBatch`] (a tensor check without dynamic
    /// dimensions).
    slot: Option<u32>,
    /// A `DICT_KEYS` check's last accepted dict state.
    seen: DictSeen,
    /// A `NOT_PRESENT_IN_GENERIC_DICT` check's last passing state.
    absent: DictAbsence,
}

struct GuardNode {
    step: Step,
    checks: Vec<LeafCheck>,
    children: Vec<GuardNode>,
    /// The `distinct` groups (indices) this node's value belongs to: the walk that fetches
    /// the value for its checks also collects it for the groups' distinctness check.
    distinct: Vec<u32>,
    /// The graph inputs that are this node's value ([`GuardTree::mark_inputs`]): the walk
    /// that checks a call also fetches them.
    inputs: Vec<u32>,
    /// The child whose subtree failed last (see [`FailFirst`]).
    fail_first: FailFirst,
    /// This node's last fetch from its parent's value (`memo.rs`; unused on roots).
    memo: FetchMemo,
}

/// Which of a level's subtrees to walk first: the one that failed on the last miss.
///
/// A code object with several cache entries is looked up most recent first, so a call that
/// hits one entry first misses the others: `generate`'s prefill walks the decode graphs'
/// guards before reaching its own. The checks that tell those entries apart (the input
/// tensors' sizes, the cache's `is_initialized`) sit at the end of the trie, behind hundreds
/// of module-attribute checks (a Llama's guards are ~450 checks, ~280 of them under
/// `L['args']`), so in trie order a miss cost more than half a walk (`bench/guard_miss.py`,
/// a 72-module tree: 67-78 us per miss before, under 3 us after). Trying the subtree that failed
/// last first makes a repeated miss fail on its first few checks (torch.compile's guard managers reorder their accessors by failure count to
/// the same end). A pass still walks every subtree; the order changes nothing it fetches:
/// inputs are kept by index, `distinct` objects are sorted before they are compared, and the
/// shape guards run after the walk.
#[derive(Default)]
struct FailFirst(std::sync::atomic::AtomicU32);

impl FailFirst {
    /// Whether `pass` holds for every item, the one that failed last tried first; remembers
    /// the index of the item that fails. `pass` is told whether its item is that one.
    fn all<'a, T>(&self, items: &'a [T], mut pass: impl FnMut(&'a T, bool) -> bool) -> bool {
        use std::sync::atomic::Ordering::Relaxed;
        // 0: none yet; otherwise index + 1.
        let first = (self.0.load(Relaxed) as usize).wrapping_sub(1);
        if let Some(item) = items.get(first) {
            if !pass(item, true) {
                return false;
            }
        }
        for (i, item) in items.iter().enumerate() {
            if i != first && !pass(item, false) {
                self.remember(i);
                return false;
            }
        }
        true
    }

    /// Makes item `i` the one tried first.
    fn remember(&self, i: usize) {
        self.0
            .store(i as u32 + 1, std::sync::atomic::Ordering::Relaxed);
    }
}

/// What one walk of the trie collects besides its verdict: the objects of the `distinct`
/// groups, the graph inputs (by input index) and, on a batched walk, the tensors of the
/// [`TensorBatch`] (compared after the walk).
struct Walk<'t, 'py> {
    distinct: Fetched<'py>,
    inputs: Vec<Option<Bound<'py, PyAny>>>,
    tensors: Option<Collected<'t, 'py>>,
    /// Checks run and skipped, values fetched and reused (`memo.rs`).
    counts: Counts,
}

/// The objects fetched for `distinct` groups on one check: group, object (held, so no address
/// is reused by another object before the groups are compared).
type Fetched<'py> = Vec<(u32, Bound<'py, PyAny>)>;

/// The guards of one cache entry.
#[derive(Default)]
pub struct GuardTree {
    roots: Vec<GuardNode>,
    /// The frame's globals dict when compiled: the same code run with other globals is a miss.
    globals: Option<Py<PyAny>>,
    /// Grad mode when compiled: it decides which results require grad.
    grad_enabled: bool,
    /// Autocast when compiled (`None`: off on every device): it decides the dtypes of results.
    autocast: Option<String>,
    count: usize,
    /// Where the tracer is: recorded on each guard added.
    pub origin: Option<Location>,
    /// Checks not installed yet, by source: they are added when the traced code uses the value
    /// (`realize`), so a value that is only moved around (a dead resumed stack slot, an object
    /// whose attributes alone are read) does not make later calls recompile.
    /// The flag marks identity checks, installed only where identity matters (`is`, folding a
    /// call on the object), not on every use.
    deferred: Vec<(String, Source, Check, bool)>,
    /// Process-wide state the trace read: global-state queries, torch module attributes.
    pub global: crate::global_state::GlobalGuards,
    /// `(a, b, same)`: whether the objects at two sources are one object. The trace answered
    /// an `is` between two tensor inputs, or gave one placeholder to a tensor passed twice
    /// (`f(x, x)`); checks on one source cannot see that relation.
    identities: Vec<(Source, Source, bool)>,
    /// Groups of sources whose objects are pairwise distinct: a walk that skipped repeated
    /// objects (`Module.parameters()` over tied weights) yielded each of these once, and another
    /// call whose objects alias differently would yield other items. One set of ids per group
    /// on a call, where pairwise `identities` would grow with the square of the group.
    /// Each member is also marked on its trie node, so the one walk of the trie fetches it.
    distinct: Vec<Vec<Source>>,
    /// Members of all `distinct` groups together (the capacity a check collects them in).
    distinct_members: usize,
    /// Dynamic shapes: the ranges of size symbols, duck-sized dimensions and the relations
    /// between sizes the trace relied on. Checked after the tensors' own checks.
    shape: Option<super::ShapeGuards>,
    /// How many graph inputs [`Self::mark_inputs`] hung on the trie.
    inputs: usize,
    /// The root whose subtree failed last, walked first on the next check.
    fail_first: FailFirst,
    /// The tensor checks compared in one call on a hit.
    tensors: TensorBatch,
    /// The `(group, address)` list, in walk order, of the last walk whose `distinct` groups
    /// held (see [`Self::fetched_distinct`]).
    distinct_seen: std::sync::Mutex<Vec<(u32, usize)>>,
}

impl GuardTree {
    pub fn new(globals: Py<PyAny>) -> GuardTree {
        let (grad, autocast) = Python::attach(|py| (grad_enabled(py), autocast_state(py)));
        GuardTree {
            roots: Vec::new(),
            globals: Some(globals),
            grad_enabled: grad,
            autocast,
            count: 0,
            origin: None,
            deferred: Vec::new(),
            global: Default::default(),
            identities: Vec::new(),
            distinct: Vec::new(),
            distinct_members: 0,
            shape: None,
            inputs: 0,
            fail_first: FailFirst::default(),
            tensors: TensorBatch::default(),
            distinct_seen: Default::default(),
        }
    }

    /// Hangs the graph's inputs on the trie (a node without checks where a source has none):
    /// a hit's walk fetches them with the values it checks, so the graph runs on them
    /// ([`Self::check_fetching`]) instead of reading every input's path again, from its root,
    /// after the check. Model parameters share their paths' prefixes with the guarded modules
    /// (`L['self']._modules['model']._modules['layers']…`); a step that builds an object
    /// (a `ModuleList` subclass's slice) builds it once per call.
    pub fn mark_inputs(&mut self, py: Python<'_>, sources: &[Source]) {
        // A source without steps names no value to fetch: the graph reads its inputs itself
        // (a walk that left an input unfetched would never pass).
        if sources.iter().any(|s| s.steps().is_empty()) {
            return;
        }
        for (i, source) in sources.iter().enumerate() {
            let Some((last, path)) = source.steps().split_last() else {
                continue;
            };
            let mut level = &mut self.roots;
            for step in path {
                let idx = GuardNode::child_index(level, py, step);
                level = &mut level[idx].children;
            }
            let idx = GuardNode::child_index(level, py, last);
            level[idx].inputs.push(i as u32);
        }
        self.inputs = sources.len();
    }

    /// The shape environment's guards (dynamic shapes), if the entry has symbolic sizes.
    pub fn shape_guards(&self) -> Option<&super::ShapeGuards> {
        self.shape.as_ref()
    }

    /// Installs the shape environment's guards (dynamic shapes), once tracing is done.
    pub fn set_shape_guards(&mut self, g: super::ShapeGuards) {
        if !g.is_empty() {
            self.count += 1;
            self.shape = Some(g);
        }
    }

    /// Guards that the objects at `a` and `b` are (`same`) or are not one object.
    pub fn add_identity(&mut self, a: &Source, b: &Source, same: bool) {
        let known = self
            .identities
            .iter()
            .any(|(x, y, _)| (x.same_as(a) && y.same_as(b)) || (x.same_as(b) && y.same_as(a)));
        if !known {
            self.identities.push((a.clone(), b.clone(), same));
            self.count += 1;
        }
    }

    /// Guards that the objects at `sources` are pairwise distinct (one check for the group).
    /// Each source gets a trie node (made without checks where it has none yet), marked with
    /// the group: the fast path compares the objects its walk fetched anyway, where resolving
    /// each source again from its root cost a walk per member (72 modules' `parameters()`:
    /// ~40 µs a call).
    pub fn add_distinct(&mut self, sources: Vec<Source>) {
        if sources.len() <= 1 {
            return;
        }
        let group = self.distinct.len() as u32;
        Python::attach(|py| {
            for source in &sources {
                let mut level = &mut self.roots;
                let steps = source.steps();
                let Some((last, path)) = steps.split_last() else {
                    continue;
                };
                for step in path {
                    let idx = GuardNode::child_index(level, py, step);
                    level = &mut level[idx].children;
                }
                let idx = GuardNode::child_index(level, py, last);
                level[idx].distinct.push(group);
            }
        });
        self.distinct_members += sources.len();
        self.distinct.push(sources);
        self.count += 1;
    }

    /// Whether the objects the walk fetched for the `distinct` groups are pairwise distinct
    /// within each group.
    ///
    /// The objects are held while compared, so their addresses tell them apart. A walk that
    /// fetched the very addresses, in the very order, of the last walk whose objects were
    /// distinct has distinct objects too (whatever objects those addresses held then): a hit
    /// compares two integer lists instead of sorting (the 72-module tower: ~2 us of a hit).
    fn fetched_distinct(&self, mut fetched: Fetched<'_>) -> bool {
        let order: Vec<(u32, usize)> = fetched
            .iter()
            .map(|(g, v)| (*g, v.as_ptr() as usize))
            .collect();
        if self.distinct_seen.lock().is_ok_and(|last| *last == order) {
            return true;
        }
        fetched.sort_unstable_by_key(|(g, v)| (*g, v.as_ptr() as usize));
        let distinct = fetched
            .windows(2)
            .all(|w| w[0].0 != w[1].0 || !w[0].1.is(&w[1].1));
        if distinct {
            if let Ok(mut last) = self.distinct_seen.lock() {
                *last = order;
            }
        }
        distinct
    }

    /// Whether the objects at `group` are pairwise distinct (`None`: one is unreadable); the
    /// failure report's slow path, each source resolved on its own.
    fn distinct_holds(py: Python<'_>, scope: &Scope, group: &[Source]) -> Option<bool> {
        let mut seen = std::collections::HashSet::with_capacity(group.len());
        for s in group {
            let v = resolve(py, scope, s)?;
            if !seen.insert(v.as_ptr() as usize) {
                return Some(false);
            }
        }
        Some(true)
    }

    fn identities_hold(&self, py: Python<'_>, scope: &Scope) -> bool {
        self.identities.iter().all(|(a, b, same)| {
            match (resolve(py, scope, a), resolve(py, scope, b)) {
                (Some(x), Some(y)) => x.is(&y) == *same,
                _ => false,
            }
        })
    }

    /// Records `check` on `source`, to be installed if the value is used (see `realize`);
    /// `identity` checks wait for a use of the object's identity instead.
    pub fn defer(&mut self, source: &Source, check: Check, identity: bool) {
        let check = Python::attach(|py| check.weakened(py));
        self.deferred
            .push((source.to_string(), source.clone(), check, identity));
    }

    /// Whether any check waits for its value to be used (the common case is none: a fast exit).
    pub fn has_deferred(&self) -> bool {
        !self.deferred.is_empty()
    }

    /// Installs the deferred checks of `source`: the traced code now depends on its value (and,
    /// with `identity`, on which object it is).
    pub fn realize(&mut self, py: Python<'_>, source: &Source, identity: bool) {
        if self.deferred.is_empty() {
            return;
        }
        let key = source.to_string();
        let mut i = 0;
        while i < self.deferred.len() {
            if self.deferred[i].0 == key && (identity || !self.deferred[i].3) {
                let (_, s, c, _) = self.deferred.remove(i);
                self.add(py, &s, c);
            } else {
                i += 1;
            }
        }
    }

    pub fn len(&self) -> usize {
        self.count
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Adds a check on `source`, unless an equivalent check is already there.
    pub fn add(&mut self, py: Python<'_>, source: &Source, check: Check) {
        timed(|| self.add_untimed(py, source, check))
    }

    fn add_untimed(&mut self, py: Python<'_>, source: &Source, check: Check) {
        let check = check.weakened(py);
        let Some((last, path)) = source.steps().split_last() else {
            return;
        };
        // Walk down the trie, moving one `&mut` level to the next: each step re-borrows the
        // node it found, so the borrow checker sees a single path and no pointer is needed.
        let mut level = &mut self.roots;
        for step in path {
            let idx = GuardNode::child_index(level, py, step);
            level = &mut level[idx].children;
        }
        let idx = GuardNode::child_index(level, py, last);
        let node = &mut level[idx];
        if node.checks.iter().any(|c| c.check.same_as(&check)) {
            return;
        }
        let slot = self.tensors.slot(&check);
        node.checks.push(LeafCheck {
            check,
            source: source.clone(),
            origin: self.origin.clone(),
            slot,
            seen: DictSeen::default(),
            absent: DictAbsence::default(),
        });
        self.count += 1;
    }

    /// Whether an object this entry checks by identity was collected: then it can never match.
    pub fn is_dead(&self) -> bool {
        self.roots.iter().any(GuardNode::is_dead)
    }

    /// The fast path: true when every guard passes.
    pub fn check(&self, py: Python<'_>, scope: &Scope) -> bool {
        self.check_fetching(py, scope).is_some()
    }

    /// [`Self::check`], answering on a pass the graph inputs [`Self::mark_inputs`] hung on
    /// the trie, in input order (empty when none were marked).
    pub fn check_fetching<'py>(
        &self,
        py: Python<'py>,
        scope: &Scope,
    ) -> Option<Vec<Bound<'py, PyAny>>> {
        // The symbol values a runner may take are only ever this check's.
        super::shape_env::clear_checked_sizes();
        if let Some(g) = &self.globals {
            if g.as_ptr() != scope.globals {
                return None;
            }
        }
        if grad_enabled(py) != self.grad_enabled
            || autocast_state(py) != self.autocast
            || !self.global.check(py)
        {
            return None;
        }
        let inputs = self.check_roots(py, scope)?;
        ((self.identities.is_empty() || self.identities_hold(py, scope))
            && self.shape.as_ref().is_none_or(|s| s.check(py, scope)))
        .then_some(inputs)
    }

    /// The trie's checks, each value fetched once, and the `distinct` groups over the objects
    /// that walk fetched; on a pass, the graph inputs the walk fetched.
    fn check_roots<'py>(&self, py: Python<'py>, scope: &Scope) -> Option<Vec<Bound<'py, PyAny>>> {
        let mut walk = Walk {
            distinct: Vec::with_capacity(self.distinct_members),
            inputs: vec![None; self.inputs],
            tensors: self.tensors.start(),
            counts: Counts::default(),
        };
        let pass = self.fail_first.all(&self.roots, |n, failed_last| {
            n.check_root(py, scope, &mut walk, failed_last)
        }) && (walk.distinct.is_empty() || self.fetched_distinct(walk.distinct))
            && walk
                .tensors
                .is_none_or(|t| match self.tensors.passes(py, t) {
                    Ok(()) => true,
                    Err(slot) => {
                        if let Some(slot) = slot {
                            self.remember_failed_slot(slot);
                        }
                        false
                    }
                });
        if !pass {
            return None;
        }
        walk.counts.publish();
        // Every marked input has a node on the walk, which reached every node on a pass.
        walk.inputs.into_iter().collect()
    }

    /// Makes the path to the batched tensor check `slot`, which failed after the walk, the
    /// one a walk tries first (as if the walk had failed there).
    fn remember_failed_slot(&self, slot: u32) {
        for (i, n) in self.roots.iter().enumerate() {
            if n.remember_failed_slot(slot) {
                self.fail_first.remember(i);
                return;
            }
        }
    }

    /// Every leaf check with its source, trie order (read-only, for `crate::precompile`).
    pub fn leaves(&self) -> Vec<(&Source, &Check)> {
        fn walk<'a>(n: &'a GuardNode, out: &mut Vec<(&'a Source, &'a Check)>) {
            out.extend(n.checks.iter().map(|c| (&c.source, &c.check)));
            n.children.iter().for_each(|c| walk(c, out));
        }
        let mut out = Vec::new();
        self.roots.iter().for_each(|n| walk(n, &mut out));
        out
    }

    /// Grad mode and autocast state when compiled (read-only, for `crate::precompile`).
    pub fn modes(&self) -> (bool, Option<&str>) {
        (self.grad_enabled, self.autocast.as_deref())
    }

    /// The aliasing checks `(a, b, same)` (for `crate::precompile`), a distinct group as its
    /// pairs.
    pub fn identities(&self) -> Vec<(Source, Source, bool)> {
        let mut out = self.identities.clone();
        for g in &self.distinct {
            for (i, a) in g.iter().enumerate() {
                for b in &g[i + 1..] {
                    out.push((a.clone(), b.clone(), false));
                }
            }
        }
        out
    }
}

impl GuardNode {
    /// The index in `level` of the node for `step`, made empty when there is none yet.
    fn child_index(level: &mut Vec<GuardNode>, py: Python<'_>, step: &Step) -> usize {
        if let Some(i) = level.iter().position(|n| n.step_same(step)) {
            return i;
        }
        level.push(GuardNode {
            step: step.clone_ref(py),
            checks: Vec::new(),
            children: Vec::new(),
            distinct: Vec::new(),
            inputs: Vec::new(),
            fail_first: FailFirst::default(),
            memo: FetchMemo::default(),
        });
        level.len() - 1
    }

    fn step_same(&self, other: &Step) -> bool {
        self.step.same(other)
    }

    fn is_dead(&self) -> bool {
        self.checks
            .iter()
            .any(|c| matches!(&c.check, Check::WeakId(t) if t.is_dead()))
            || self.children.iter().any(GuardNode::is_dead)
    }

    /// The first leaf check at or below this node: it names the value in messages.
    fn first_check(&self) -> Option<&LeafCheck> {
        self.checks
            .first()
            .or_else(|| self.children.iter().find_map(|c| c.first_check()))
    }

    /// [`GuardTree::remember_failed_slot`] below this node: whether the check is here.
    fn remember_failed_slot(&self, slot: u32) -> bool {
        if self.checks.iter().any(|c| c.slot == Some(slot)) {
            return true;
        }
        for (i, child) in self.children.iter().enumerate() {
            if child.remember_failed_slot(slot) {
                self.fail_first.remember(i);
                return true;
            }
        }
        false
    }

    fn check_root<'t, 'py>(
        &'t self,
        py: Python<'py>,
        scope: &Scope,
        walk: &mut Walk<'t, 'py>,
        failed_last: bool,
    ) -> bool {
        let root = scope.root(&self.step);
        if root.is_null() {
            return false;
        }
        // SAFETY: root is a borrowed live object; take our own reference.
        let v = unsafe { Bound::from_borrowed_ptr(py, root) };
        self.check_value(py, &v, walk, failed_last, false)
    }

    /// `same`: `v` is the object this node's memo remembers, which passed these checks last
    /// time, so the identity-pure ones are skipped (`memo.rs`).
    fn check_value<'t, 'py>(
        &'t self,
        py: Python<'py>,
        v: &Bound<'py, PyAny>,
        walk: &mut Walk<'t, 'py>,
        failed_last: bool,
        same: bool,
    ) -> bool {
        for c in &self.checks {
            match (&c.check, c.slot, walk.tensors.as_mut()) {
                // Batched: compared after the walk; the exact type here (torch's check does
                // not compare it). On the path of the last miss (`failed_last`: each level's
                // remembered subtree, from the root) also checked here, so a repeated miss
                // there (the input whose size tells two entries apart) still fails before the
                // rest of the walk; the batch gets every slot either way.
                (Check::Tensor(t), Some(slot), Some(tensors)) => {
                    walk.counts.evaluated += 1;
                    let passed = if failed_last {
                        c.check.eval(py, v, &c.source, false).is_ok()
                    } else {
                        v.get_type().is(t.tensor_type.bind(py))
                    };
                    if !passed {
                        return false;
                    }
                    tensors[slot as usize] = Some((t, v.clone()));
                }
                (Check::DictKeys(_), ..) if c.seen.same(v) => walk.counts.skipped += 1,
                (Check::NotInDict(_), ..) if c.absent.same(v) => walk.counts.skipped += 1,
                (check, ..) if same && identity_pure(check, v) => walk.counts.skipped += 1,
                (check, ..) => {
                    walk.counts.evaluated += 1;
                    if check.eval(py, v, &c.source, false).is_err() {
                        return false;
                    }
                    match check {
                        Check::DictKeys(_) => c.seen.remember(v),
                        Check::NotInDict(_) => c.absent.remember(v),
                        _ => {}
                    }
                }
            }
        }
        self.memo.mark_passed(v);
        for &g in &self.distinct {
            walk.distinct.push((g, v.clone()));
        }
        for &i in &self.inputs {
            if let Some(slot) = walk.inputs.get_mut(i as usize) {
                *slot = Some(v.clone());
            }
        }
        self.fail_first.all(&self.children, |child, first| {
            child
                .memo
                .fetch(v, &child.step, &mut walk.counts)
                .is_some_and(|f| {
                    child.check_value(py, &f.value, walk, failed_last && first, f.same)
                })
        })
    }
}
