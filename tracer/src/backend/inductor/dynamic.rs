//! A graph with symbolic sizes on the inductor (issue 18).
//!
//! First the graph is lowered once from its symbolic metas (the design's step 7,
//! docs/dynamic-shapes.md): one schedule, one C source whose kernels take the symbols as
//! arguments, one library; each assignment is a substitution of its values into the sizes
//! (`Prepared::build_at`: no lowering, no C compiler). A CUDA graph takes the same path: one
//! CUDA source, one NVRTC compile (its cubin's cache key is the same at every size), one
//! loaded module; each assignment computes its kernels' grids from the symbols' values. Where the symbolic lowering declines (an
//! op that needs a concrete size), the reason is logged and the graph takes the path below.
//!
//! The graph is specialized to the sizes of a call (`fx::passes::specialize`) and lowered as a
//! static graph; its kernels come from a library whose C takes the sizes as arguments
//! (`inductor::param`): fitted once on a grid of assignments near the first, built once, and
//! used at every assignment whose C it matches (checked at each new assignment: a lowering, no C
//! compiler). Where no template matches, or none can be fitted (a size in the kernels that is no
//! polynomial of the symbols, more than `MAX_SYMBOLS` symbols), the assignment gets a library
//! of its own, as before phase 2b. The trace and its guards are made once for all sizes.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::PyTuple;

use fx::Graph;
use inductor::param::{grid, nodes_for, Template, MAX_SYMBOLS};

/// The most symbols a template is split by parity for (`2^n` classes, each a grid of
/// lowerings).
const MAX_PARITY_SPLIT: usize = 2;

use super::InductorProgram;

mod prebuilt;
pub use prebuilt::SymbolicExport;

/// How many kernel libraries a dynamic graph builds (libraries with sizes as arguments and
/// per-size ones, the first included), unless `TORCHFERRO_SIZE_VARIANTS` says otherwise. A call
/// at sizes that would need another runs the graph on the eager runner: compiling a new library
/// for every size (a token at a time in `generate`) would cost more than it saves.
const MAX_SIZE_VARIANTS: usize = 8;

/// How many assignments served by a library with sizes as arguments keep their program (its
/// buffers' sizes, its workspace of intermediates); past it the oldest is dropped, and made
/// again (a lowering and a match, no C compiler) if its sizes come back.
const MAX_KEPT_ASSIGNMENTS: usize = 64;

/// Graphs specialized at an assignment in this process ([`Dynamic::at`]): a symbolic library's
/// later assignments take none (tests tell the shared path from it, [`specializations`]).
static SPECIALIZATIONS: AtomicUsize = AtomicUsize::new(0);

/// How many times a dynamic graph was specialized at an assignment in this process.
pub fn specializations() -> usize {
    SPECIALIZATIONS.load(Ordering::Relaxed)
}

pub(crate) fn max_size_variants() -> usize {
    std::env::var("TORCHFERRO_SIZE_VARIANTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(MAX_SIZE_VARIANTS)
}

/// Whether kernels may take sizes as arguments (`TORCHFERRO_SIZE_ARGS=0`: one library per
/// assignment, the phase 2a behaviour, kept for comparison).
fn size_args_enabled() -> bool {
    std::env::var("TORCHFERRO_SIZE_ARGS").map_or(true, |v| v != "0")
}

/// Whether a dynamic graph is first lowered symbolically (`TORCHFERRO_SYMBOLIC=0`: straight
/// to the fitted templates, the session-14 behaviour, kept for comparison). Its kernels take
/// the sizes as arguments, so `TORCHFERRO_SIZE_ARGS=0` turns it off too.
fn symbolic_enabled() -> bool {
    size_args_enabled() && std::env::var("TORCHFERRO_SYMBOLIC").map_or(true, |v| v != "0")
}

/// The graph lowered once from its symbolic metas (see the module doc).
struct SymbolicKernels {
    prepared: inductor::Prepared,
    /// The symbols its kernels take, in the order of their values.
    syms: Vec<u32>,
    /// Whether its library was built (it counts against the library budget from then on).
    built: AtomicBool,
    /// Its first build failed (the C did not compile): the graph takes the path below.
    failed: AtomicBool,
}

/// What the programs of a symbolic library's assignments share (the first one's).
struct Shared {
    placement: super::super::cuda::Placement,
    options: inductor::Options,
    handles: Arc<super::TorchHandles>,
    callables: HashMap<String, Py<PyAny>>,
}

/// A library whose kernels take the sizes as arguments.
struct SizeLibrary {
    template: Template,
    /// The rendered C (every assignment it matches runs this source's library).
    code: String,
    /// Whether it was built (on the first assignment it matches; it counts against the
    /// library budget from then on).
    built: AtomicBool,
}

/// How many times a graph fits a template (each fit lowers the graph at `3^n` assignments).
const MAX_FITS: usize = 2;

/// The programs made for assignments so far.
#[derive(Default)]
struct Variants {
    /// `None`: the assignment runs on the eager runner (without trying again).
    map: HashMap<Vec<i64>, Variant>,
    /// Assignments served by a [`SizeLibrary`], oldest first (those dropped past
    /// [`MAX_KEPT_ASSIGNMENTS`]).
    shared: VecDeque<Vec<i64>>,
}

/// A dynamic graph on the inductor (see the module doc).
pub(super) struct Dynamic {
    /// The functional graph with its symbols.
    graph: Graph,
    callables: Vec<(fx::NodeId, Py<PyAny>)>,
    grad_enabled: bool,
    /// Where each symbol's value is read on a call: (input, dim, symbol).
    reads: Vec<(usize, usize, u32)>,
    /// The assignment the program holding this was made for (the hints).
    key: Vec<i64>,
    /// What the trace relied on (relations between the symbols, their bounds): a template's
    /// grid stays inside it.
    relations: Vec<fx::Cond>,
    /// `(min, max)` per symbol, in `reads` order.
    bounds: Vec<(i64, Option<i64>)>,
    /// The symbolic lowering, tried at the first assignment (`None`: it declined).
    symbolic: OnceLock<Option<SymbolicKernels>>,
    /// Set by the symbolic library's first program ([`Dynamic::symbolic_fast`]).
    shared: OnceLock<Shared>,
    /// Libraries with sizes as arguments, in the order they were built.
    libraries: Mutex<Vec<Arc<SizeLibrary>>>,
    /// Kernel libraries built so far (with sizes as arguments or per size), at most `limit`.
    built: AtomicUsize,
    /// Templates fitted (or tried) so far, at most [`MAX_FITS`].
    fits: AtomicUsize,
    variants: Mutex<Variants>,
    /// `max_size_variants` when the graph was compiled.
    limit: usize,
    /// Whether a call past `limit` was logged (once per graph).
    past_limit_logged: AtomicBool,
    /// The functional graph on the eager runner, for assignments past the limit (made when
    /// first needed).
    eager: OnceLock<super::super::eager::EagerProgram>,
}

/// The program for one assignment (`None`: it runs on the eager runner).
type Variant = Option<Arc<InductorProgram>>;

/// What runs a dynamic graph at one assignment of its symbols.
enum SizeVariant {
    Kernels(Arc<InductorProgram>),
    Eager,
}

impl Dynamic {
    /// `key` as the symbols' assignment, for the log: `s0=13, s1=7`.
    fn describe(&self, key: &[i64]) -> String {
        self.reads
            .iter()
            .zip(key)
            .map(|(r, v)| format!("s{}={v}", r.2))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The values of the symbols for `inputs`.
    fn key(&self, py: Python<'_>, inputs: &[Bound<'_, PyAny>]) -> PyResult<Vec<i64>> {
        // The values the guard tree read to admit this call, when it read them from these
        // very inputs (dyn-env's seam, session 14); else read here.
        if let Some(k) = crate::guards::shape_env::take_checked_sizes(&self.reads, inputs) {
            return Ok(k);
        }
        symbol_values(py, &self.reads, inputs)
    }

    /// The graph specialized to `key`.
    fn at(&self, key: &[i64]) -> Result<Graph, String> {
        SPECIALIZATIONS.fetch_add(1, Ordering::Relaxed);
        let value = |k: u32| {
            self.reads
                .iter()
                .position(|r| r.2 == k)
                .map_or(0, |i| key[i])
        };
        fx::passes::specialize::specialize(&self.graph, &value).map_err(|e| e.to_string())
    }

    /// Takes one library from the budget; `false` when it is spent.
    fn take_library(&self) -> bool {
        self.built
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| {
                (n < self.limit).then_some(n + 1)
            })
            .is_ok()
    }

    /// Fits a template on a grid of assignments near `key` (see `inductor::param::nodes_for`;
    /// `code` is the C at `key`, used where the grid holds it).
    fn fit(
        &self,
        key: &[i64],
        code: &str,
        options: &inductor::Options,
    ) -> Result<Template, String> {
        let ok = |point: &[i64]| {
            let value = |k: u32| {
                self.reads
                    .iter()
                    .position(|r| r.2 == k)
                    .map_or(0, |i| point[i])
            };
            point
                .iter()
                .zip(&self.bounds)
                .all(|(v, (lo, hi))| v >= lo && hi.is_none_or(|h| *v <= h))
                && self
                    .relations
                    .iter()
                    .all(|r| r.eval(&value).unwrap_or(false))
        };
        let lower = |point: &[i64]| -> Result<String, String> {
            if point == key {
                return Ok(code.to_string());
            }
            let g = self.at(point)?;
            let p = inductor::prepare(&g, options).map_err(|e| e.to_string())?;
            Ok(p.code().to_string())
        };
        let names: Vec<String> = self.reads.iter().map(|r| format!("s{}", r.2)).collect();
        // A template fitted at nodes of `start`'s parities, and the nodes.
        let fit_at = |start: &[i64]| -> Result<(Vec<Vec<i64>>, Template), String> {
            let nodes = nodes_for(start, &ok);
            let codes = grid(&nodes)
                .iter()
                .map(|p| lower(p))
                .collect::<Result<Vec<_>, _>>()?;
            // One more assignment off the grid, each moving symbol two past its last node.
            let check: Vec<i64> = nodes
                .iter()
                .map(|xs| if xs.len() == 3 { xs[2] + 2 } else { xs[0] })
                .collect();
            let check_code = if check != key && ok(&check) {
                Some(lower(&check)?)
            } else {
                None
            };
            let c = check_code.as_deref().map(|c| (&check[..], c));
            Template::fit(&nodes, &codes, names.clone(), c).map(|t| (nodes, t))
        };
        let (nodes, t) = fit_at(key)?;
        // The grid's nodes share the hints' parities: a symbol whose other parity the template
        // misses (a floor division of it inside a product) gets a template per parity class,
        // merged into one whose literals choose by parity. Any failure keeps the one template
        // (the other class then gets a library of its own, as before).
        let split: Vec<usize> = (0..key.len())
            .filter(|&k| nodes[k].len() == 3)
            .filter(|&k| {
                let mut p: Vec<i64> = nodes.iter().map(|xs| xs[0]).collect();
                p[k] = nodes[k][2] + 1;
                ok(&p) && lower(&p).is_ok_and(|c| !t.matches(&c, &p))
            })
            .collect();
        if split.is_empty() || split.len() > MAX_PARITY_SPLIT {
            return Ok(t);
        }
        let mut classes = Vec::new();
        for class in 0..1u32 << split.len() {
            let mut start = key.to_vec();
            for (i, &k) in split.iter().enumerate() {
                if (start[k] & 1) as u32 != (class >> i) & 1 {
                    start[k] += 1;
                }
            }
            if start == key {
                classes.push(t.clone());
                continue;
            }
            match fit_at(&start) {
                Ok((_, c)) => classes.push(c),
                Err(_) => return Ok(t),
            }
        }
        Ok(Template::merge_classes(split, classes).unwrap_or(t))
    }

    /// Builds `prepared` on the first library with sizes as arguments whose template it matches
    /// (`None`: none matches, or the one that does would be a library past the budget).
    fn on_library(
        &self,
        prepared: inductor::Prepared,
        key: &[i64],
        options: &inductor::Options,
    ) -> Result<Result<inductor::CompiledGraph, inductor::Prepared>, String> {
        let libraries: Vec<Arc<SizeLibrary>> =
            self.libraries.lock().map(|l| l.clone()).unwrap_or_default();
        let Some(lib) = libraries
            .iter()
            .find(|l| l.template.matches(prepared.code(), key))
        else {
            return Ok(Err(prepared));
        };
        // Held until `build` below has loaded the library (a first build that fails drops the
        // template: the assignment and later ones compile per size, as without it).
        let mut _first = None;
        if !lib.built.load(Ordering::Relaxed) {
            if !self.take_library() {
                return Ok(Err(prepared));
            }
            let source = inductor::cache::finish_source(&lib.code);
            match inductor::cache::build(&source, &options.cache_dir) {
                Ok(b) => _first = Some(b),
                Err(e) => {
                    tracing::info!(
                        target: "torchferro::inductor",
                        "dynamic graph: the kernels with sizes as arguments did not compile \
                         (sizes are specialized): {e}"
                    );
                    if let Ok(mut l) = self.libraries.lock() {
                        l.retain(|x| !Arc::ptr_eq(x, lib));
                    }
                    return Ok(Err(prepared));
                }
            }
            lib.built.store(true, Ordering::Relaxed);
            tracing::info!(
                target: "torchferro::inductor",
                "dynamic graph: kernels take the sizes as arguments (one library for every \
                 size whose kernels it matches; first at {})",
                self.describe(key)
            );
        }
        prepared
            .build(options, Some((&lib.code, key.to_vec())))
            .map(Ok)
            .map_err(|e| e.to_string())
    }

    /// Lowers the symbolic graph once (`None` when the lowering declines, logged with its
    /// reason).
    fn lower_symbolic(&self, options: &inductor::Options) -> Option<SymbolicKernels> {
        let declined = |why: &str| {
            tracing::info!(
                target: "torchferro::inductor",
                "dynamic graph: symbolic lowering declined ({why}); fitting kernels over sizes"
            );
            None
        };
        if self.graph.nodes().any(|(_, n)| n.meta.has_float_sizes()) {
            return declined("a size rounds a float of sizes");
        }
        let prepared =
            match Python::attach(|py| py.detach(|| inductor::prepare(&self.graph, options))) {
                Ok(p) => p,
                Err(e) => return declined(&e.to_string()),
            };
        if !prepared.has_kernels() {
            // Views only: each assignment builds nothing (the path below, unlogged).
            return None;
        }
        let syms = prepared.symbols();
        if let Some(k) = syms.iter().find(|k| !self.reads.iter().any(|r| r.2 == **k)) {
            return declined(&format!(
                "symbol s{k} is not the size of an input dimension"
            ));
        }
        Some(SymbolicKernels {
            prepared,
            syms,
            built: AtomicBool::new(false),
            failed: AtomicBool::new(false),
        })
    }

    /// The program at `key` from the symbolic lowering (`Ok(None)`: past the library limit).
    fn symbolic_at(
        &self,
        s: &SymbolicKernels,
        key: &[i64],
        placement: super::super::cuda::Placement,
        options: &inductor::Options,
        g: Option<&Graph>,
    ) -> Result<Option<InductorProgram>, String> {
        let values: Vec<i64> = s
            .syms
            .iter()
            .map(|k| {
                let i = self
                    .reads
                    .iter()
                    .position(|r| r.2 == *k)
                    .expect("a read symbol");
                key[i]
            })
            .collect();
        let first = !s.built.load(Ordering::Relaxed);
        if first && !self.take_library() {
            return Ok(None);
        }
        let compiled = Python::attach(|py| py.detach(|| s.prepared.build_at(options, &values)))
            .map_err(|e| e.to_string())?;
        if first && !s.built.swap(true, Ordering::Relaxed) {
            tracing::info!(
                target: "torchferro::inductor",
                "dynamic graph: lowered symbolically: one library for every size (first at {})",
                self.describe(key)
            );
        }
        let shared = match (self.shared.get(), g) {
            (Some(sh), _) => sh,
            (None, None) => return Err("no specialized graph for the first program".into()),
            (None, Some(g)) => {
                let sh = Shared {
                    placement,
                    options: options.clone(),
                    handles: Arc::new(InductorProgram::handles_for(placement)?),
                    callables: InductorProgram::callables_by_name(g, &self.callables),
                };
                self.shared.get_or_init(|| sh)
            }
        };
        Ok(Some(InductorProgram::wrap_with(
            Python::attach(|py| {
                shared
                    .callables
                    .iter()
                    .map(|(k, c)| (k.clone(), c.clone_ref(py)))
                    .collect()
            }),
            shared.handles.clone(),
            compiled,
        )))
    }

    /// Whether an assignment takes a size-oblivious symbol at 1 (see [`Dynamic::program_at`]).
    fn size_at_one(&self, key: &[i64]) -> bool {
        self.reads
            .iter()
            .zip(key)
            .any(|(r, &v)| r.1 != fx::passes::specialize::INT_INPUT && v < 2)
    }

    /// The program at `key` from the symbolic library once it is built, with what every
    /// assignment shares: no specialized graph, no lookup of the library, no new torch handles
    /// (a decode step whose position is a size symbol meets a new assignment on every call).
    /// `Ok(None)`: not on this path.
    fn symbolic_fast(&self, key: &[i64]) -> Result<Option<InductorProgram>, String> {
        let (Some(Some(s)), Some(sh)) = (self.symbolic.get(), self.shared.get()) else {
            return Ok(None);
        };
        if !s.built.load(Ordering::Relaxed)
            || s.failed.load(Ordering::Relaxed)
            || self.size_at_one(key)
        {
            return Ok(None);
        }
        self.symbolic_at(s, key, sh.placement, &sh.options, None)
    }

    /// The program at `key`: kernels from a library with sizes as arguments that matches (or a
    /// new one fitted here), else a library of its own; `Ok(None)` past the library limit.
    fn program_at(&self, key: &[i64]) -> Result<Option<InductorProgram>, String> {
        if let Some(p) = self.symbolic_fast(key)? {
            return Ok(Some(p));
        }
        let g = self.at(key)?;
        let (placement, mut options) = InductorProgram::admit(&g, self.grad_enabled)?;
        if let inductor::Target::Cpu(p) = &mut options.target {
            // The loop shape of a reduction, and a store's split, may not depend on a size
            // (see the policy).
            p.blocked_min_rows = 0;
            p.split_store_min_elems = 0;
        }
        // A size-oblivious symbol at 1 (automatic dynamic's, `shape_env::dynamic_dims`; an int
        // input's symbol is not one, it may be any int): the symbolic and fitted kernels
        // assume every size symbol at least 2, so this assignment gets
        // the static graph's kernels at its sizes (the graph specialized, verified at 1 by
        // `fx`'s probes), a library of its own.
        if self.size_at_one(key) {
            if !self.take_library() {
                return Ok(None);
            }
            let compiled = Python::attach(|py| py.detach(|| inductor::compile(&g, &options)))
                .map_err(|e| e.to_string())?;
            return InductorProgram::wrap(&g, &self.callables, placement, compiled).map(Some);
        }
        // CPU and CUDA alike: a CUDA graph's one source is compiled by NVRTC once, its kernels
        // take the symbols as parameters and its grids are computed per assignment.
        if symbolic_enabled() && !self.reads.is_empty() {
            if let Some(s) = self.symbolic.get_or_init(|| self.lower_symbolic(&options)) {
                if !s.failed.load(Ordering::Relaxed) {
                    match self.symbolic_at(s, key, placement, &options, Some(&g)) {
                        Err(e) if !s.built.load(Ordering::Relaxed) => {
                            // The library never built: a defect of the symbolic C, not of
                            // the graph, which the fitted templates still compile.
                            s.failed.store(true, Ordering::Relaxed);
                            tracing::info!(
                                target: "torchferro::inductor",
                                "dynamic graph: symbolic kernels did not build ({e}); fitting \
                                 kernels over sizes"
                            );
                        }
                        r => return r,
                    }
                }
            }
        }
        let parametric = size_args_enabled()
            && matches!(placement, super::super::cuda::Placement::Cpu)
            && !self.reads.is_empty()
            && self.reads.len() <= MAX_SYMBOLS;
        if let (true, inductor::Target::Cpu(p)) = (parametric, &mut options.target) {
            // No literal of a template's C may be a value derived from a size other than a
            // polynomial of the sizes (a block count is not; see the policy). Per-size
            // libraries keep the static graph's C.
            p.sizes_unfolded = true;
            p.cascade_min_len = 0;
        }
        if !parametric {
            if !self.take_library() {
                return Ok(None);
            }
            let compiled = Python::attach(|py| py.detach(|| inductor::compile(&g, &options)))
                .map_err(|e| e.to_string())?;
            return InductorProgram::wrap(&g, &self.callables, placement, compiled).map(Some);
        }
        let compiled =
            Python::attach(|py| {
                py.detach(|| -> Result<Option<inductor::CompiledGraph>, String> {
                let prepared = inductor::prepare(&g, &options).map_err(|e| e.to_string())?;
                if !prepared.has_kernels() {
                    return prepared.build(&options, None).map(Some).map_err(|e| e.to_string());
                }
                let prepared = match self.on_library(prepared, key, &options)? {
                    Ok(c) => return Ok(Some(c)),
                    Err(p) => p,
                };
                let fit_now = self
                    .fits
                    .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| {
                        (n < MAX_FITS).then_some(n + 1)
                    })
                    .is_ok();
                let prepared = if fit_now {
                    let fitted = self.fit(key, prepared.code(), &options).and_then(|t| {
                        let code = t.render(&|name| prepared.kernel_arity(name))?;
                        Ok(SizeLibrary {
                            template: t,
                            code,
                            built: AtomicBool::new(false),
                        })
                    });
                    match fitted {
                        Ok(lib) => {
                            if let Ok(mut l) = self.libraries.lock() {
                                l.push(Arc::new(lib));
                            }
                            match self.on_library(prepared, key, &options)? {
                                Ok(c) => return Ok(Some(c)),
                                Err(p) => {
                                    let at = self
                                        .libraries
                                        .lock()
                                        .ok()
                                        .and_then(|l| {
                                            l.last()?.template.mismatch(p.code(), key)
                                        })
                                        .unwrap_or_default();
                                    tracing::info!(
                                        target: "torchferro::inductor",
                                        "dynamic graph: kernels for sizes {} are specialized \
                                         to them: their kernels differ from the ones with \
                                         sizes as arguments ({at})",
                                        self.describe(key)
                                    );
                                    p
                                }
                            }
                        }
                        Err(why) => {
                            tracing::info!(
                                target: "torchferro::inductor",
                                "dynamic graph: kernels for sizes {} are specialized to them: \
                                 {why}",
                                self.describe(key)
                            );
                            prepared
                        }
                    }
                } else {
                    let at = self
                        .libraries
                        .lock()
                        .ok()
                        .and_then(|l| l.first()?.template.mismatch(prepared.code(), key));
                    if let Some(at) = at {
                        tracing::info!(
                            target: "torchferro::inductor",
                            "dynamic graph: kernels for sizes {} are specialized to them: their \
                             kernels differ from the ones with sizes as arguments ({at})",
                            self.describe(key)
                        );
                    }
                    prepared
                };
                if !self.take_library() {
                    return Ok(None);
                }
                prepared.build(&options, None).map(Some).map_err(|e| e.to_string())
            })
            })?;
        match compiled {
            Some(c) => InductorProgram::wrap(&g, &self.callables, placement, c).map(Some),
            None => Ok(None),
        }
    }
}

impl InductorProgram {
    /// Compiles the dynamic `graph` at the assignment `hints` (per symbol id, as `bounds`); the
    /// program serves other assignments as calls bring them. `relations` are what the trace
    /// relied on (its shape guards).
    pub fn try_new_dynamic(
        graph: &Graph,
        callables: &[(fx::NodeId, Py<PyAny>)],
        grad_enabled: bool,
        hints: &[i64],
        relations: Vec<fx::Cond>,
        bounds: &[(i64, Option<i64>)],
    ) -> Result<Option<InductorProgram>, String> {
        let reads = fx::passes::specialize::symbol_reads(graph)
            .ok_or("a size symbol is not the size of an input dimension")?;
        let key: Vec<i64> = reads.iter().map(|r| hints[r.2 as usize]).collect();
        let bounds = reads
            .iter()
            // A size-oblivious symbol's 1 runs on kernels of its own (`program_at`): the
            // templates are fitted over sizes from 2.
            .map(|r| {
                let (lo, hi) = bounds.get(r.2 as usize).copied().unwrap_or((2, None));
                if r.1 == fx::passes::specialize::INT_INPUT {
                    (lo, hi)
                } else {
                    (lo.max(2), hi)
                }
            })
            .collect();
        let d = Dynamic {
            graph: graph.clone(),
            callables: Python::attach(|py| {
                callables
                    .iter()
                    .map(|(n, c)| (*n, c.clone_ref(py)))
                    .collect()
            }),
            grad_enabled,
            reads,
            key: key.clone(),
            relations,
            bounds,
            symbolic: Default::default(),
            shared: Default::default(),
            libraries: Default::default(),
            built: Default::default(),
            fits: Default::default(),
            variants: Default::default(),
            limit: max_size_variants().max(1),
            past_limit_logged: Default::default(),
            eager: Default::default(),
        };
        let Some(mut p) = d.program_at(&key)? else {
            return Ok(None);
        };
        p.dynamic = Some(Box::new(d));
        Ok(Some(p))
    }

    /// What runs the dynamic graph at `key`: its program (made now if new), or the eager runner.
    fn size_variant(&self, d: &Dynamic, key: Vec<i64>) -> SizeVariant {
        let known = |vs: &Variants| {
            vs.map.get(&key).map(|p| match p {
                Some(p) => SizeVariant::Kernels(p.clone()),
                None => SizeVariant::Eager,
            })
        };
        {
            let Ok(vs) = d.variants.lock() else {
                return SizeVariant::Eager;
            };
            if let Some(v) = known(&vs) {
                return v;
            }
        }
        // Made without the lock (the compile releases the GIL; a thread holding it could be
        // waiting on the lock).
        let before = d.built.load(Ordering::Relaxed);
        let made = d.program_at(&key);
        let built = d.built.load(Ordering::Relaxed) > before;
        let p = match made {
            Ok(Some(mut p)) => {
                p.sites = self.sites.clone();
                // The symbolic graph on the eager runner raises eager's own error at any size.
                p.eager_errors = self.eager_errors.clone();
                if built && d.libraries.lock().map_or(true, |l| l.is_empty()) {
                    tracing::info!(
                        target: "torchferro::inductor",
                        "dynamic graph: kernels compiled for sizes {} (first at {})",
                        d.describe(&key),
                        d.describe(&d.key)
                    );
                }
                Some(Arc::new(p))
            }
            Ok(None) => {
                if !d.past_limit_logged.swap(true, Ordering::Relaxed) {
                    tracing::info!(
                        target: "torchferro::inductor",
                        "dynamic graph: sizes {} and other new ones run on the eager \
                         runner (kernels exist for {} assignments of the size symbols; \
                         TORCHFERRO_SIZE_VARIANTS)",
                        d.describe(&key),
                        d.limit
                    );
                }
                None
            }
            Err(why) => {
                tracing::info!(
                    target: "torchferro::inductor",
                    "dynamic graph: sizes {} run on the eager runner: {why}",
                    d.describe(&key)
                );
                None
            }
        };
        let Ok(mut vs) = d.variants.lock() else {
            return p.map_or(SizeVariant::Eager, SizeVariant::Kernels);
        };
        if let Some(v) = known(&vs) {
            return v;
        }
        // Only programs on a shared library are dropped past the limit: making one again costs
        // a lowering, while a per-size library counts against the library budget.
        if p.is_some() && !built {
            vs.shared.push_back(key.clone());
            if vs.shared.len() > MAX_KEPT_ASSIGNMENTS {
                if let Some(old) = vs.shared.pop_front() {
                    let dropped = vs.map.remove(&old);
                    drop(vs);
                    // Freed outside the lock: it releases Python objects.
                    drop(dropped);
                    vs = match d.variants.lock() {
                        Ok(vs) => vs,
                        Err(_) => return p.map_or(SizeVariant::Eager, SizeVariant::Kernels),
                    };
                }
            }
        }
        vs.map.insert(key, p.clone());
        p.map_or(SizeVariant::Eager, SizeVariant::Kernels)
    }

    /// Runs a dynamic graph at `inputs`' sizes when they are not the hints' (`None`: they are,
    /// and `self` runs them).
    pub(super) fn run_dynamic<'py>(
        &self,
        py: Python<'py>,
        inputs: &mut Option<Vec<Bound<'py, PyAny>>>,
        guarded: bool,
    ) -> Option<PyResult<Vec<Bound<'py, PyAny>>>> {
        let d = self.dynamic.as_ref()?;
        let args = inputs.as_ref()?;
        let key = match d.key(py, args) {
            Ok(k) => k,
            Err(e) => return Some(Err(e)),
        };
        if key == d.key {
            return None;
        }
        let inputs = inputs.take()?;
        Some(match self.size_variant(d, key) {
            SizeVariant::Kernels(p) => p.run(py, inputs, guarded),
            SizeVariant::Eager => {
                let eager = match d.eager.get() {
                    Some(e) => e,
                    None => {
                        let e = match super::super::eager::EagerProgram::new(
                            py,
                            &d.graph,
                            &d.callables,
                            &self.sites,
                        ) {
                            Ok(e) => e,
                            Err(e) => return Some(Err(super::to_pyerr(e))),
                        };
                        d.eager.get_or_init(|| e)
                    }
                };
                eager.run(py, inputs)
            }
        })
    }

    /// The programs made for other assignments (to release what they keep).
    pub(super) fn size_variants(&self) -> Vec<Arc<InductorProgram>> {
        self.dynamic
            .as_ref()
            .and_then(|d| {
                d.variants
                    .lock()
                    .ok()
                    .map(|vs| vs.map.values().filter_map(|p| p.clone()).collect())
            })
            .unwrap_or_default()
    }
}

/// The values of size symbols read as `(input, dim, symbol)` from `inputs`: each input's `shape`
/// read once (a tuple), not a `size(d)` call per symbol; an int input's symbol is the int, a
/// stride symbol's the stride.
pub(crate) fn symbol_values(
    py: Python<'_>,
    reads: &[(usize, usize, u32)],
    inputs: &[Bound<'_, PyAny>],
) -> PyResult<Vec<i64>> {
    let mut key = Vec::with_capacity(reads.len());
    let mut shape: Option<(usize, Bound<'_, PyTuple>)> = None;
    for &(i, d, _) in reads {
        if d == fx::passes::specialize::INT_INPUT {
            key.push(inputs[i].extract()?);
            continue;
        }
        if let Some(d) = fx::passes::specialize::stride_of_read(d) {
            // A stride symbol (a column slice of a parent whose width moves).
            key.push(
                inputs[i]
                    .call_method1(intern!(py, "stride"), (d,))?
                    .extract()?,
            );
            continue;
        }
        let t = match &shape {
            Some((j, t)) if *j == i => t,
            _ => {
                let s = inputs[i].getattr(intern!(py, "shape"))?;
                &shape.insert((i, s.cast_into::<PyTuple>()?)).1
            }
        };
        key.push(t.get_item(d)?.extract()?);
    }
    Ok(key)
}
