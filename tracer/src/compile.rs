//! Compiling one frame: trace it, build the backend's callable, generate the transformed code and
//! store the guarded entry; or decide to run it eagerly, or raise under `fullgraph=True`.

use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::PyDict;

use fx::Arg;

use crate::code::CodeInfo;
use crate::code_cache::{CacheEntry, CodeState, Slot};
use crate::config::{Backend, CompileConfig};
use crate::error::TraceError;
use crate::event::{BreakSite, FailedCheck, GuardFailure, Location};
use crate::frame::FrameView;
use crate::interp::{self, Var};
use crate::reconstruct::{passthrough, template_of, with_effects, TemplateCtx};
use crate::runtime::CompiledGraph;
use crate::source::Scope;

pyo3::create_exception!(
    torchferro,
    Unsupported,
    pyo3::exceptions::PyRuntimeError,
    "torchferro cannot compile this code under fullgraph=True."
);
pyo3::create_exception!(
    torchferro,
    RecompileError,
    pyo3::exceptions::PyRuntimeError,
    "A recompile was triggered under set_stance(\"fail_on_recompile\")."
);

pub enum Outcome {
    Compiled(Arc<CacheEntry>),
    RunEagerly,
    /// Tracing raised what it took for the program's own error: the frame runs eagerly so the
    /// user sees it. Should the frame then return normally, the trace was wrong (a torchferro
    /// bug), and the code is given up rather than traced again on every call (the message is
    /// the traced error).
    RunEagerlyExpectingError(String),
    Raise(PyErr),
}

/// The state of a frame that traced to nothing worth compiling.
pub const NO_OPS: &str = "no ops traced and no side effects";

pub fn compile_frame(
    py: Python<'_>,
    fv: FrameView,
    scope: &Scope,
    slot: &Slot,
    cfg: &CompileConfig,
) -> Outcome {
    // SAFETY: the frame's code, globals and builtins are live for the whole hook call.
    let code = unsafe { Bound::from_borrowed_ptr(py, fv.code()) };
    let globals = unsafe { Bound::from_borrowed_ptr(py, fv.globals()) };
    let builtins = unsafe { Bound::from_borrowed_ptr(py, fv.builtins()) };
    let info = match CodeInfo::from_code(py, &code) {
        Ok(i) => i,
        Err(e) => return give_up(py, slot, &e.to_string()),
    };
    crate::precompile::note_compile(&code);
    // Autocast on a device other than the CPU and CUDA around the frame: the traced dtypes
    // would be wrong, so the frame runs eagerly under it, where torch applies the autocast. Not
    // remembered: outside the region the frame compiles as usual (every entry is guarded on the
    // autocast state).
    if let Some(state) = crate::guards::foreign_autocast(py) {
        let site = BreakSite {
            reason: format!(
                "autocast is enabled around the frame for a device other than the CPU and \
                 CUDA ({state}); only CPU and CUDA autocast are traced"
            ),
            location: Some(Location::new(info.filename.as_str(), info.firstlineno)),
            frames: Vec::new(),
        };
        if cfg.fullgraph {
            return Outcome::Raise(Unsupported::new_err(site.message()));
        }
        crate::log::run_eagerly(py, &info, &site);
        return Outcome::RunEagerly;
    }
    let (frame_id, compile_index, existing) = {
        let Ok(mut c) = slot.try_borrow_mut() else {
            return Outcome::RunEagerly;
        };
        let id = *c
            .frame_id
            .get_or_insert_with(crate::code_cache::next_frame_id);
        (id, c.compiles, c.entries.clone())
    };
    if !existing.is_empty() {
        let limit = crate::config::recompile_limit();
        if existing.len() >= limit {
            let warn = slot.try_borrow_mut().map(|mut c| {
                c.state = CodeState::LimitHit;
                !std::mem::replace(&mut c.limit_warned, true)
            });
            if warn.unwrap_or(false) {
                let failures = first_failures(py, &existing, scope);
                crate::log::recompile_limit(py, &info, limit, &failures);
            }
            return Outcome::RunEagerly;
        }
        let failures = first_failures(py, &existing, scope);
        let reasons: Vec<String> = failures.iter().map(|f| f.line()).collect();
        match crate::config::stance() {
            crate::config::Stance::FailOnRecompile => {
                return Outcome::Raise(RecompileError::new_err(crate::log::recompile_message(
                    &info, &reasons,
                )));
            }
            crate::config::Stance::EagerOnRecompile => return Outcome::RunEagerly,
            _ => {}
        }
        crate::log::recompiling(py, &info, &failures);
        if cfg.dynamic == crate::guards::DynamicPolicy::Automatic
            && crate::config::automatic_dynamic()
        {
            automatic_dynamic(py, slot, &info, &existing, scope, false);
        } else if cfg.dynamic == crate::guards::DynamicPolicy::Always {
            // `dynamic=True`: sizes that changed between compiles get symbols of their own
            // instead of duck sizing (torch's frame state marks them `DimDynamic.DYNAMIC`).
            automatic_dynamic(py, slot, &info, &existing, scope, true);
        }
    }
    let (automatic, ints) = slot
        .try_borrow()
        .map(|c| {
            (
                c.automatic_dynamic.clone(),
                c.automatic_dynamic_ints.clone(),
            )
        })
        .unwrap_or_default();
    crate::guards::shape_env::set_policy(crate::guards::shape_env::TracePolicy {
        policy: cfg.dynamic,
        automatic,
        ints,
        static_ints: Vec::new(),
        size_oblivious: crate::config::automatic_dynamic_size_oblivious(),
    });
    let (Ok(globals_dict), Ok(builtins_dict)) =
        (globals.cast::<PyDict>(), builtins.cast::<PyDict>())
    else {
        return Outcome::RunEagerly;
    };
    // A resume function is filtered as torch.compile filters every frame before tracing it
    // (`has_tensor_in_frame`): with no tensor or module among the values its code may read and
    // no torch global (the EMA update that resumes after `state_dict()` broke, with only a user
    // object and an `OrderedDict` left), what it would put in a graph runs natively instead
    // (below, once traced). Not remembered: the values differ per call (torch checks every
    // call too). Other frames are filtered only once they cannot be traced whole (`torch_free`
    // below), keeping a clean trace's entry.
    let torch_free_resume = !cfg.fullgraph
        && info.name.starts_with(crate::resume::RESUME_PREFIX)
        && matches!(
            crate::torch_free::resume_may_use_torch(py, &info, globals_dict, scope),
            Ok(false)
        );
    let info = std::rc::Rc::new(info);
    let mut break_at = None;
    let mut break_site: Option<BreakSite> = None;
    let started = std::time::Instant::now();
    crate::guards::take_build_time();
    let mut traced = loop {
        let result = interp::trace(
            py,
            info.clone(),
            *scope,
            globals_dict.clone(),
            builtins_dict.clone(),
            break_at,
        );
        // A symbolic int traced at 0 or 1 reached a size: trace again with it static, whatever
        // the trace made of the error that stopped it (each request names one more int, so the
        // retries end).
        if crate::guards::shape_env::take_retrace() {
            continue;
        }
        match result {
            Ok(t) => break t,
            // Graph break: trace again from the start, stopping just before the instruction
            // that could not be traced; it then runs natively and a resume function continues.
            // A break that cannot be placed there asks for an earlier one (strictly earlier,
            // so the retries end).
            Err(TraceError::Unsupported {
                reason,
                location,
                instruction: Some(i),
                frames,
            }) if !cfg.fullgraph && break_at.is_none_or(|b| i < b) => {
                if torch_free(py, cfg, &info, globals_dict, scope) {
                    return skip_torch_free(slot, &info);
                }
                // Inside a comprehension that 3.12 inlined, the graph ends before the whole
                // comprehension, which then runs natively (as torch.compile does).
                let i = crate::interp::comprehension::region_containing(&info, i)
                    .map_or(i, |r| r.start);
                match crate::resume::why_no_break_at(&info, i) {
                    None => {
                        break_at = Some(i);
                        break_site = Some(BreakSite {
                            reason,
                            location,
                            frames,
                        });
                    }
                    // Say why the frame cannot resume after the break; it runs eagerly.
                    Some(why) => {
                        let e = TraceError::Unsupported {
                            reason: format!("{reason}; {why}"),
                            location,
                            instruction: Some(i),
                            frames,
                        };
                        return on_trace_error(py, slot, cfg, &info, e);
                    }
                }
            }
            // A torch-free resume function that cannot be traced (an exception leaving it) is
            // one torch.compile would not trace at all: skipped without a record, as a
            // torch-free frame.
            Err(TraceError::Unsupported { .. })
                if torch_free_resume || torch_free(py, cfg, &info, globals_dict, scope) =>
            {
                return skip_torch_free(slot, &info);
            }
            Err(e) => return on_trace_error(py, slot, cfg, &info, e),
        }
    };
    // A graph ending before `torch.autograd.grad(..., create_graph=True)`: the gradients of
    // its results are differentiated again (a gradient penalty), so it runs through torch's
    // autograd, whatever the backend (torch.compile breaks there too; its compiled backward
    // then raises at the double backward).
    if break_site
        .as_ref()
        .is_some_and(|s| s.reason.contains(crate::interp::CREATE_GRAPH_BREAK))
    {
        traced.output.differentiated_twice = true;
    }
    // Only a graph is given up so: a trace without ops keeps its entry (a resume function that
    // re-raises at its first instruction raises from the transformed code, named as the
    // user's function).
    if torch_free_resume && traced.output.graph.op_count() > 0 {
        crate::log::skipped_torch_free(&info);
        return Outcome::RunEagerly;
    }
    // A break in a call made inside a `try` block (transformers' `merge_with_config_defaults`
    // and `capture_outputs` wrappers call the forward inside `try`/`finally`): torch.compile
    // cannot resume inside a `try` and gives the frame up, compiling the call as a frame of its
    // own. Resuming here would put the ops before the call into a graph of their own, one graph
    // more than torch.compile's (the callee's graphs are made either way). A break at the
    // frame's own instruction still resumes (an op that may raise into the frame's handler:
    // torch.compile gives that frame up with no graph at all, so resuming costs no graph more).
    if let (Some(i), Some(site)) = (break_at, break_site.as_ref()) {
        if site.frames.len() > 1
            && !info.name.starts_with(crate::resume::RESUME_PREFIX)
            && crate::resume::in_try_block(&info, i)
        {
            let site =
                site.with_reason(format!("{}; {}", site.reason, crate::resume::BREAK_IN_TRY));
            log_given_up(py, slot, &info, &site);
            if let Ok(mut c) = slot.try_borrow_mut() {
                c.state = CodeState::Eager(site.message());
            }
            return Outcome::RunEagerly;
        }
    }
    // Guards are built while tracing: report them apart, as `guard_build`.
    let guard_time = crate::guards::take_build_time();
    // A frame that traced to its end without a single op or side effect has nothing to compile:
    // running it natively gives the same result, and guarding it would only recompile it for
    // every new key or object it is called with (config `__getattribute__`s, small helpers), as
    // TorchDynamo's "no ops traced" skip also decides. Not under fullgraph (the user asked for a
    // graph) and not for resume functions (their caller's transformed code expects them).
    if !cfg.fullgraph
        && break_at.is_none()
        && matches!(traced.end, interp::End::Return(_))
        && traced.output.graph.op_count() == 0
        && traced.effects.is_empty()
        && traced.free_cells.is_empty()
        && !info.name.starts_with(crate::resume::RESUME_PREFIX)
    {
        crate::log::skipped_no_ops(&info);
        if let Ok(mut c) = slot.try_borrow_mut() {
            // Forgotten by `torchferro.compiler.reset()`, unlike the skip-file decision.
            c.state = CodeState::Eager(NO_OPS.into());
        }
        return Outcome::RunEagerly;
    }
    let trace_time = (
        started.elapsed().saturating_sub(guard_time).as_secs_f64(),
        guard_time.as_secs_f64(),
    );
    match build_entry(
        py,
        &info,
        traced,
        &code,
        &globals,
        &builtins,
        cfg,
        (frame_id, compile_index),
        break_site.as_ref(),
        trace_time,
    ) {
        Ok(entry) => {
            // A torch-free resume function is one torch.compile would not trace at all: its
            // entry is kept (it made no op), but its break is no graph break of the program (a
            // resume made at a `raise` re-raises at its first instruction: the record would
            // repeat its parent's).
            if let Some(site) = break_site.as_ref().filter(|_| !torch_free_resume) {
                crate::log::graph_break(py, &info, site);
            }
            let entry = Arc::new(entry);
            if let Ok(mut c) = slot.try_borrow_mut() {
                c.entries.insert(0, entry.clone());
                c.compiles += 1;
            }
            Outcome::Compiled(entry)
        }
        // The break could not be resumed (e.g. a loop iterator on the stack): say both why it
        // broke and why it cannot resume, and run the frame eagerly.
        Err(TraceError::Unsupported { reason: why, .. }) if break_site.is_some() => {
            let site = break_site.unwrap_or_default();
            let site = site.with_reason(format!("{}; it cannot resume there: {why}", site.reason));
            log_given_up(py, slot, &info, &site);
            if let Ok(mut c) = slot.try_borrow_mut() {
                c.state = CodeState::Eager(site.message());
            }
            Outcome::RunEagerly
        }
        Err(e) => on_trace_error(py, slot, cfg, &info, e),
    }
}

/// Records a frame given up (it runs eagerly): a frame run eagerly, except for torch.nn's own
/// `forward` of the compiled module (`CodeState::EntryOnly`). torch.compile's root frame for a
/// compiled module is `Module._call_impl`, which traces that `forward` only inlined: a graph
/// break inside it becomes a break at the call of `forward`, which then runs natively, the
/// frame itself converted (with an empty graph). Giving our root `forward` up runs the same
/// code natively, so it is recorded as that graph break, not as a frame torch.compile would
/// have run eagerly.
fn log_given_up(py: Python<'_>, slot: &Slot, info: &CodeInfo, site: &BreakSite) {
    let entry_only = slot.try_borrow().is_ok_and(|c| c.entry_only);
    if entry_only {
        let site = site.with_reason(format!(
            "{}; the compiled module's torch.nn forward runs natively (as torch.compile's root \
             Module._call_impl breaks at its call of forward)",
            site.reason
        ));
        crate::log::graph_break(py, info, &site);
    } else {
        crate::log::run_eagerly(py, info, site);
    }
}

/// Automatic dynamic (`dynamic=None`): a static dimension whose size changed since an entry was
/// compiled is dynamic from this compile on, as torch's `automatic_dynamic_shapes`. With
/// `dynamic=True` (`sizes_only`) the same record of changed sizes takes symbolic dimensions
/// too, and only sizes: a changed dimension then gets a symbol of its own, not a duck one.
fn automatic_dynamic(
    py: Python<'_>,
    slot: &Slot,
    info: &CodeInfo,
    entries: &[Arc<CacheEntry>],
    scope: &Scope,
    sizes_only: bool,
) {
    let Ok(mut c) = slot.try_borrow_mut() else {
        return;
    };
    // The whole-tensor rule (not torch's; `dynamic=None` only): every static dimension of a
    // tensor whose size changed comes along, so dimensions that start changing at different
    // calls (a length, then a batch size) cost one recompile, not one each.
    let whole = !sizes_only && crate::config::automatic_dynamic_whole_tensor();
    for e in entries {
        let mut changes = e.guards.size_changes(py, scope, sizes_only, whole);
        // The changed sizes first, then the ones that come along.
        changes.sort_by_key(|(_, _, old, new)| old == new);
        for (source, dim, old, new) in changes {
            if c.automatic_dynamic
                .iter()
                .any(|(s, d)| *s == source && *d == dim)
            {
                continue;
            }
            if old == new {
                tracing::info!(
                    target: "torchferro::dynamic",
                    "automatic dynamic: {source} size({dim}) {old} (whole tensor: another of its \
                     sizes changed; torch.compile would keep it static) (function {} in {}:{})",
                    info.name,
                    info.filename,
                    info.firstlineno
                );
            } else {
                tracing::info!(
                    target: "torchferro::dynamic",
                    "automatic dynamic: {source} size({dim}) {old} -> {new} (function {} in \
                     {}:{})",
                    info.name,
                    info.filename,
                    info.firstlineno
                );
            }
            c.automatic_dynamic.push((source, dim));
        }
        if sizes_only {
            continue;
        }
        // Ints (torch's `specialize_int=False`): one guarded equal to a value it no longer
        // has becomes a symbolic int graph input.
        for (source, old, new) in e.guards.int_changes(py, scope) {
            if c.automatic_dynamic_ints.contains(&source) {
                continue;
            }
            tracing::info!(
                target: "torchferro::dynamic",
                "automatic dynamic: {source} {old} -> {new} (function {} in {}:{})",
                info.name,
                info.filename,
                info.firstlineno
            );
            c.automatic_dynamic_ints.push(source);
        }
    }
}

/// The state of a frame that broke with nothing of torch in reach.
pub const NO_TORCH: &str = "graph break in a frame with no tensor, module or torch global";

/// TorchDynamo's filter before tracing (`has_tensor_in_frame`, see `torch_free.rs`), asked here
/// only once a frame cannot be traced whole: such a frame runs natively without a graph-break
/// record, as torch.compile never traces it (config methods that `copy.deepcopy` and `setattr`
/// run natively after a break in their caller). A frame that traces cleanly keeps its entry or
/// its "no ops" skip. Not under fullgraph (the user asked for the error), not for resume
/// functions (their caller's transformed code hands them its graph's values).
fn torch_free(
    py: Python<'_>,
    cfg: &CompileConfig,
    info: &CodeInfo,
    globals: &Bound<'_, PyDict>,
    scope: &Scope,
) -> bool {
    !cfg.fullgraph
        && !info.name.starts_with(crate::resume::RESUME_PREFIX)
        && matches!(
            crate::torch_free::frame_may_use_torch(py, info, globals, scope),
            Ok(false)
        )
}

/// Like the "no ops" skip, the decision is kept (forgotten by `torchferro.compiler.reset()`):
/// tracing the frame again on every call would cost more than it could bring.
fn skip_torch_free(slot: &Slot, info: &CodeInfo) -> Outcome {
    crate::log::skipped_torch_free(info);
    if let Ok(mut c) = slot.try_borrow_mut() {
        c.state = CodeState::Eager(NO_TORCH.into());
    }
    Outcome::RunEagerly
}

fn first_failures(py: Python<'_>, entries: &[Arc<CacheEntry>], scope: &Scope) -> Vec<GuardFailure> {
    entries
        .iter()
        .map(|e| {
            let check = e
                .guards
                .failed_checks(py, scope)
                .into_iter()
                .next()
                .unwrap_or_else(|| FailedCheck::global("BACKEND", "a different backend".into()));
            GuardFailure {
                compile_id: e.compile_id,
                check,
            }
        })
        .collect()
}

fn give_up(py: Python<'_>, slot: &Slot, e: &str) -> Outcome {
    crate::log::warn(py, &format!("torchferro could not read a code object: {e}"));
    if let Ok(mut c) = slot.try_borrow_mut() {
        c.state = CodeState::Eager(e.to_string());
    }
    Outcome::RunEagerly
}

fn on_trace_error(
    py: Python<'_>,
    slot: &Slot,
    cfg: &CompileConfig,
    info: &CodeInfo,
    e: TraceError,
) -> Outcome {
    // A KeyboardInterrupt (or SystemExit) that landed while tracing ran Python code belongs to
    // the user's program: raise it from the frame, never swallow it into an eager rerun, and
    // leave the code compilable.
    if let TraceError::Python(err) | TraceError::UserError { error: err, .. } = &e {
        if !err.is_instance_of::<pyo3::exceptions::PyException>(py) {
            return Outcome::Raise(err.clone_ref(py));
        }
    }
    match e {
        TraceError::Unsupported {
            reason,
            location,
            frames,
            ..
        } => {
            let location =
                location.unwrap_or_else(|| Location::new(info.filename.as_str(), info.firstlineno));
            let site = BreakSite {
                reason,
                location: Some(location),
                frames,
            };
            if cfg.fullgraph {
                return Outcome::Raise(Unsupported::new_err(site.message()));
            }
            log_given_up(py, slot, info, &site);
            if let Ok(mut c) = slot.try_borrow_mut() {
                c.state = CodeState::Eager(site.message());
            }
            Outcome::RunEagerly
        }
        // Resolved inside the interpreter; should one get here, its fallback is what it means.
        TraceError::Raised { fallback, .. } => on_trace_error(py, slot, cfg, info, *fallback),
        TraceError::Introspects(reason) => {
            on_trace_error(py, slot, cfg, info, TraceError::unsupported(reason))
        }
        // The user's program is wrong for these inputs: run it for real so the user sees the
        // genuine exception, raised from their own frame.
        TraceError::UserError { call, message, .. } => {
            crate::log::user_error_runs_eagerly(info, &call, &message);
            Outcome::RunEagerlyExpectingError(format!(
                "tracing {} ({}:{}) raised {message} at {call}",
                info.name, info.filename, info.firstlineno
            ))
        }
        TraceError::Internal(m) => {
            crate::log::warn(
                py,
                &format!(
                    "torchferro internal error while compiling {} ({}:{}): {m}; running it eagerly",
                    info.name, info.filename, info.firstlineno
                ),
            );
            if let Ok(mut c) = slot.try_borrow_mut() {
                c.state = CodeState::Eager(m);
            }
            Outcome::RunEagerly
        }
        TraceError::Python(err) => {
            if cfg.fullgraph {
                return Outcome::Raise(err);
            }
            crate::log::warn(
                py,
                &format!(
                    "torchferro failed while compiling {} ({}:{}): {err}; running it eagerly",
                    info.name, info.filename, info.firstlineno
                ),
            );
            if let Ok(mut c) = slot.try_borrow_mut() {
                c.state = CodeState::Eager(err.to_string());
            }
            Outcome::RunEagerly
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn build_entry(
    py: Python<'_>,
    info: &CodeInfo,
    traced: interp::Traced,
    code: &Bound<'_, PyAny>,
    globals: &Bound<'_, PyAny>,
    builtins: &Bound<'_, PyAny>,
    cfg: &CompileConfig,
    compile_id: (u32, u32),
    break_site: Option<&BreakSite>,
    (trace_secs, guard_secs): (f64, f64),
) -> Result<CacheEntry, TraceError> {
    let interp::Traced {
        mut output,
        mut guards,
        end,
        effects,
        free_cells,
        externals,
        keep_alive,
    } = traced;
    guards.set_shape_guards(output.shapes.guards());
    // A branch's `s1 == s0` after the last op: the graph names one symbol (as ops see it).
    if output.shapes.dirty {
        output.apply_replacements();
    }
    let mut outs: Vec<fx::NodeId> = Vec::new();
    let mut in_place_inputs: Vec<(fx::NodeId, crate::source::Source)> = output
        .input_aliases()
        .into_iter()
        .map(|(n, k)| (n, output.input_sources[k].clone()))
        .collect();
    // numpy array inputs (`torch.from_numpy(a)` placeholders): an array returned as it is is
    // the caller's array itself (`reconstruct/values.rs`).
    for (k, s) in output.input_sources.iter().enumerate() {
        if s.numpy_array().is_some() {
            in_place_inputs.push((output.graph.placeholders()[k], s.clone()));
        }
    }
    // One reconstruction for the value and the side effects: a container reached by both is one
    // object, and their `Keep` numbers share one table at run time.
    let mut tctx = TemplateCtx::new(&externals, in_place_inputs.clone(), &free_cells);
    tctx.symbols = output.shapes.symbols.clone();
    // A full graph returns the frame's return value; a graph break returns the live stack (NULLs
    // left out: the transformed code pushes those itself) and the assigned locals.
    let (template, plan) = match &end {
        interp::End::Return(ret) => (template_of(py, ret, &mut outs, &mut tctx)?, None),
        interp::End::Break {
            index,
            stack,
            locals,
            ..
        } => {
            let (plan, values) =
                crate::resume::BreakPlan::from_end(py, info, *index, stack, locals, &mut output)?;
            (
                template_of(py, &Var::Tuple(values.into()), &mut outs, &mut tctx)?,
                Some(plan),
            )
        }
    };
    let template = with_effects(py, template, &effects, &mut outs, &mut tctx)?;
    output
        .graph
        .output(outs.iter().map(|n| Arg::Node(*n)).collect());
    output.fold_replaced_sizes();
    crate::passes::cast_attention_masks(&mut output.graph);
    crate::passes::dead_code_elimination(&mut output.graph);
    let graph_code = crate::passes::python_code(&output.graph);
    let backend_started = std::time::Instant::now();
    let built = crate::backend::build(py, info, &output, &cfg.backend)?;
    guards.mark_inputs(py, &output.input_sources);
    let graph = Py::new(
        py,
        CompiledGraph {
            inputs: output.input_sources.clone(),
            input_tree: crate::runtime::InputTree::new(py, &output.input_sources),
            nargs: info.nargs,
            globals: globals.clone().unbind(),
            builtins: builtins.clone().unbind(),
            runner: built.runner,
            output: template,
            passthrough: passthrough(&output.graph),
            switches_modes: {
                let calls = |name: &str| {
                    output.graph.nodes().any(|(_, n)| {
                        matches!(&n.kind, fx::NodeKind::Call { target: fx::Target::Function(p), .. }
                            if p == name)
                    })
                };
                crate::runtime::ModeSwitches {
                    grad: calls("torch._C._set_grad_enabled"),
                    autocast: calls(crate::output::AUTOCAST_TARGET),
                    inference: calls(crate::output::INFERENCE_ENTER_TARGET),
                }
            },
            functional: built.functional,
            recorded: crate::precompile::record(py, &output),
        },
    )?;
    let backend_secs = backend_started.elapsed().as_secs_f64();
    let codegen_started = std::time::Instant::now();
    let transformed = match &plan {
        None => crate::resume::trampoline(py, info, code, graph.bind(py).as_any())?,
        Some(plan) => {
            crate::resume::graph_break(py, info, code, globals, graph.bind(py).as_any(), plan)?
        }
    };
    crate::code_cache::mark_skip(&transformed);
    let function = py.import("types")?.getattr("FunctionType")?.call1((
        &transformed,
        globals,
        info.name.as_str(),
    ))?;
    let guard_records = guards.records();
    let guard_lines: Vec<String> = guard_records.iter().map(|g| g.line()).collect();
    crate::log::compiled(info, compile_id, &graph_code, &guard_lines);
    // `backend` is what the backend took beyond the phases it reports itself (for the
    // inductor: checks and torch handles; for the others: all of it); `bytecode` is the
    // transformed code, made after the backend.
    let reported: f64 = built.phases.iter().map(|(_, s)| s).sum();
    let mut timings = vec![("trace", trace_secs), ("guard_build", guard_secs)];
    timings.extend(built.phases);
    timings.push(("backend", (backend_secs - reported).max(0.0)));
    timings.push(("bytecode", codegen_started.elapsed().as_secs_f64()));
    let ops = output
        .graph
        .nodes()
        .filter_map(|(_, n)| match &n.kind {
            fx::NodeKind::Call { target, .. } => Some(target.name().to_string()),
            _ => None,
        })
        .collect();
    crate::log::compile_event(
        py,
        info,
        &crate::log::CompileEvent {
            compile_id,
            graph_code: &graph_code,
            graph_dot: &output.graph.to_dot(),
            ops,
            guards: &guard_records,
            break_site,
            timings: &timings,
            transformed_code: &transformed,
            output_code: built.output_code.as_deref(),
            code,
        },
    );
    drop(keep_alive);
    Ok(CacheEntry {
        guards,
        function: function.unbind(),
        graph,
        compile_id,
        backend_key: cfg.backend_key(),
        backend: match &cfg.backend {
            Backend::Python(f) => Some(f.clone_ref(py)),
            _ => None,
        },
        graph_code,
        transformed_code: transformed.unbind(),
        direct: plan.is_none(),
    })
}
