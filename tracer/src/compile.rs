//! Compiling one frame: trace it, build the backend's callable, generate the transformed code and
//! store the guarded entry; or decide to run it eagerly, or raise under `fullgraph=True`.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};

use fx::{Arg, NodeKind};

use crate::cache::{CacheEntry, CodeState, Slot};
use crate::error::TraceError;
use crate::frame::FrameView;
use crate::interp::{self, CodeInfo, Var};
use crate::runtime::{CompiledGraph, EagerProgram, OutputTemplate, Runner};
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

/// Which compiler a compiled region uses.
pub enum Backend {
    Eager,
    /// The Rust inductor (`backend="inductor"`, the default).
    Inductor,
    /// A Python callable `backend(gm, example_inputs) -> callable`.
    Python(Py<PyAny>),
}

pub struct CompileConfig {
    pub backend: Backend,
    pub fullgraph: bool,
}

impl CompileConfig {
    /// Entries are reused only by the backend that made them.
    pub fn backend_key(&self) -> usize {
        match &self.backend {
            Backend::Eager => 1,
            Backend::Inductor => 2,
            Backend::Python(f) => f.as_ptr() as usize,
        }
    }
}

pub enum Outcome {
    Compiled(Arc<CacheEntry>),
    RunEagerly,
    Raise(PyErr),
}

/// The state of a frame that traced to nothing worth compiling.
pub const NO_OPS: &str = "no ops traced and no side effects";

static NEXT_FRAME_ID: AtomicU32 = AtomicU32::new(0);

/// Frame ids restart from 0 after `torchferro.compiler.reset()`, as torch's do.
pub fn reset_frame_ids() {
    NEXT_FRAME_ID.store(0, Ordering::Relaxed);
}

/// Argument slots of a code object: positional, keyword-only, *args, **kwargs.
pub fn arg_slot_count(code: &Bound<'_, PyAny>) -> PyResult<usize> {
    let flags: u32 = code.getattr("co_flags")?.extract()?;
    let argcount: usize = code.getattr("co_argcount")?.extract()?;
    let kwonly: usize = code.getattr("co_kwonlyargcount")?.extract()?;
    Ok(argcount + kwonly + usize::from(flags & 0x04 != 0) + usize::from(flags & 0x08 != 0))
}

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
    let (frame_id, compile_index, existing) = {
        let Ok(mut c) = slot.try_borrow_mut() else {
            return Outcome::RunEagerly;
        };
        let id = *c
            .frame_id
            .get_or_insert_with(|| NEXT_FRAME_ID.fetch_add(1, Ordering::Relaxed));
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
                let reasons = first_reasons(py, &existing, scope);
                crate::log::recompile_limit(py, &info, limit, &reasons);
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
    }
    let (Ok(globals_dict), Ok(builtins_dict)) =
        (globals.cast::<PyDict>(), builtins.cast::<PyDict>())
    else {
        return Outcome::RunEagerly;
    };
    let info = std::rc::Rc::new(info);
    let mut break_at = None;
    let mut break_reason = None;
    let mut break_parts: Option<(String, Option<String>, Vec<String>)> = None;
    let started = std::time::Instant::now();
    crate::guards::take_build_time();
    let traced = loop {
        match interp::trace(
            py,
            info.clone(),
            *scope,
            globals_dict.clone(),
            builtins_dict.clone(),
            break_at,
        ) {
            Ok(t) => break t,
            // Graph break: trace again from the start, stopping just before the instruction
            // that could not be traced; it then runs natively and a resume function continues.
            Err(TraceError::Unsupported {
                reason,
                location,
                instruction: Some(i),
                frames,
            }) if !cfg.fullgraph && break_at.is_none() => {
                match crate::codegen::why_no_break_at(&info, i) {
                    None => {
                        break_at = Some(i);
                        break_reason = Some(format_reason(&reason, location.as_deref(), &frames));
                        break_parts = Some((reason, location, frames));
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
            Err(e) => return on_trace_error(py, slot, cfg, &info, e),
        }
    };
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
        && !info.name.starts_with(crate::codegen::RESUME_PREFIX)
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
        break_reason.as_deref(),
        trace_time,
    ) {
        Ok(entry) => {
            if let Some(r) = &break_reason {
                crate::log::graph_break(py, &info, r);
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
        Err(TraceError::Unsupported { reason: why, .. }) if break_parts.is_some() => {
            let (reason, location, frames) = break_parts.unwrap_or_default();
            let msg = format_reason(
                &format!("{reason}; it cannot resume there: {why}"),
                location.as_deref(),
                &frames,
            );
            crate::log::run_eagerly(py, &info, &msg);
            if let Ok(mut c) = slot.try_borrow_mut() {
                c.state = CodeState::Eager(msg);
            }
            Outcome::RunEagerly
        }
        Err(e) => on_trace_error(py, slot, cfg, &info, e),
    }
}

/// `reason (at file:line)`, plus the inlined calls that led there when there were any.
fn format_reason(reason: &str, location: Option<&str>, frames: &[String]) -> String {
    let mut msg = format!("{reason} (at {})", location.unwrap_or("?"));
    if frames.len() > 1 {
        msg.push_str("\n  inlined call stack (innermost first):");
        for f in frames {
            msg.push_str("\n    ");
            msg.push_str(f);
        }
    }
    msg
}

fn first_reasons(py: Python<'_>, entries: &[Arc<CacheEntry>], scope: &Scope) -> Vec<String> {
    first_failures(py, entries, scope)
        .into_iter()
        .map(|f| f.line())
        .collect()
}

/// The first failing guard of each entry, with where the guard came from.
pub struct GuardFailure {
    pub compile_id: (u32, u32),
    pub reason: String,
    pub origin: Option<String>,
}

impl GuardFailure {
    pub fn line(&self) -> String {
        format!(
            "{}/{}: {}",
            self.compile_id.0, self.compile_id.1, self.reason
        )
    }
}

fn first_failures(py: Python<'_>, entries: &[Arc<CacheEntry>], scope: &Scope) -> Vec<GuardFailure> {
    entries
        .iter()
        .map(|e| {
            let (reason, origin) = e
                .guards
                .failures_with_origin(py, scope)
                .into_iter()
                .next()
                .unwrap_or_else(|| ("a different backend".to_string(), None));
            GuardFailure {
                compile_id: e.compile_id,
                reason,
                origin,
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
            let loc = location.unwrap_or_else(|| format!("{}:{}", info.filename, info.firstlineno));
            let msg = format_reason(&reason, Some(&loc), &frames);
            if cfg.fullgraph {
                return Outcome::Raise(Unsupported::new_err(msg));
            }
            crate::log::run_eagerly(py, info, &msg);
            if let Ok(mut c) = slot.try_borrow_mut() {
                c.state = CodeState::Eager(msg);
            }
            Outcome::RunEagerly
        }
        TraceError::Introspects(reason) => {
            on_trace_error(py, slot, cfg, info, TraceError::unsupported(reason))
        }
        // The user's program is wrong for these inputs: run it for real so the user sees the
        // genuine exception, raised from their own frame.
        TraceError::UserError { .. } => Outcome::RunEagerly,
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
    break_reason: Option<&str>,
    (trace_secs, guard_secs): (f64, f64),
) -> Result<CacheEntry, TraceError> {
    let interp::Traced {
        mut output,
        guards,
        end,
        effects,
        free_cells,
        externals,
        keep_alive,
    } = traced;
    let mut outs: Vec<fx::NodeId> = Vec::new();
    let in_place_inputs: Vec<(fx::NodeId, crate::source::Source)> = output
        .input_aliases()
        .into_iter()
        .map(|(n, k)| (n, output.input_sources[k].clone()))
        .collect();
    // One reconstruction for the value and the side effects: a container reached by both is one
    // object, and their `Keep` numbers share one table at run time.
    let mut tctx = TemplateCtx::new(&externals, in_place_inputs.clone(), &free_cells);
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
            use crate::codegen::StackSlot;
            let mut values: Vec<Var> = Vec::new();
            let mut slots = Vec::new();
            for v in stack {
                match v {
                    Var::Null => slots.push(StackSlot::Null),
                    Var::Iter(it) => {
                        let rest: Vec<Var> = {
                            let it = it.borrow();
                            it.0[it.1.min(it.0.len())..].to_vec()
                        };
                        values.push(Var::list(rest));
                        slots.push(StackSlot::Iter);
                    }
                    v => {
                        values.push(v.clone());
                        slots.push(StackSlot::Value);
                    }
                }
            }
            let mut assigned = Vec::new();
            for (j, l) in locals.iter().enumerate().take(info.nlocals) {
                match l {
                    // An argument kept in a cell: handed over with the cells below, and its value
                    // in the plain slot too, where a zero-argument `super()` looks for it.
                    Some(Var::Cell(c)) => {
                        if let Some(v) = c.borrow().clone() {
                            values.push(v);
                            assigned.push(j);
                        }
                    }
                    Some(v) => {
                        values.push(v.clone());
                        assigned.push(j);
                    }
                    None => {}
                }
            }
            let cell_slots = crate::codegen::cell_slots(info);
            for &s in &cell_slots {
                values.push(match locals.get(s).cloned().flatten() {
                    Some(Var::Cell(c)) => Var::Cell(c),
                    other => Var::Cell(std::rc::Rc::new(std::cell::RefCell::new(other))),
                });
            }
            let first_free = info.localsplus.len() - info.nfree;
            let ins = &info.ins[*index];
            let zero_arg_super = ins.op == crate::decode::Op::Call
                && ins.arg == 0
                && stack.last().is_some_and(|v| {
                    matches!(v, Var::Py(o, _) if o.bind(py).is(py.get_type::<pyo3::types::PySuper>()))
                })
                && info.nargs > 0
                && info.localsplus[first_free..].iter().any(|n| n == "__class__");
            // Inside a grad-mode block the graph switches back to the frame's entry mode at its
            // end; the transformed code re-enters the block's mode natively.
            let entry_mode = crate::guards::grad_enabled(py);
            let grad_mode = (output.grad_enabled() != entry_mode).then(|| output.grad_enabled());
            if grad_mode.is_some() {
                output.set_grad_mode(py, entry_mode)?;
            }
            let plan = crate::codegen::BreakPlan {
                index: *index,
                stack: slots,
                assigned,
                ncells: cell_slots.len(),
                zero_arg_super,
                grad_mode,
            };
            (
                template_of(py, &Var::Tuple(values), &mut outs, &mut tctx)?,
                Some(plan),
            )
        }
    };
    let template = with_effects(py, template, &effects, &mut outs, &mut tctx)?;
    output
        .graph
        .output(outs.iter().map(|n| Arg::Node(*n)).collect());
    crate::passes::dead_code_elimination(&mut output.graph);
    let graph_code = crate::passes::python_code(&output.graph);
    let backend_started = std::time::Instant::now();
    let mut output_code: Option<String> = None;
    // The inductor's own phases (lowering, scheduling, codegen, C compile, cache load).
    let mut backend_phases: Vec<(&'static str, f64)> = Vec::new();
    let mut functional = None;
    let runner = match &cfg.backend {
        // Nothing to compile: the backend is not bothered with an empty graph.
        _ if output.graph.op_count() == 0 => {
            Runner::Eager(EagerProgram::new(py, &output.graph, &output.callables)?)
        }
        Backend::Eager => Runner::Eager(EagerProgram::new(py, &output.graph, &output.callables)?),
        // Autocast regions: the inductor computes in the dtypes it is given and knows nothing
        // of autocast's casts, so these graphs replay on the eager runner, casts done by torch.
        Backend::Inductor if output.has_autocast() => {
            crate::log::inductor_fallbacks(
                info,
                &["the whole graph runs on the eager backend: it has an autocast region".into()],
            );
            Runner::Eager(EagerProgram::new(py, &output.graph, &output.callables)?)
        }
        Backend::Inductor if output.has_tensor_subclass_input(py)? => {
            crate::log::inductor_fallbacks(
                info,
                &[
                    "the whole graph runs on the eager backend: an input is a tensor subclass"
                        .into(),
                ],
            );
            Runner::Eager(EagerProgram::new(py, &output.graph, &output.callables)?)
        }
        Backend::Inductor => {
            // The inductor computes values: it gets the graph without in-place ops.
            let fg = crate::functional::for_inductor(py, &output.graph, &output.callables)?;
            let (graph, callables) = match &fg {
                Some(f) => (&f.graph, &f.callables[..]),
                None => (&output.graph, &output.callables[..]),
            };
            match crate::inductor_host::InductorProgram::try_new(
                graph,
                callables,
                crate::guards::grad_enabled(py),
            ) {
                Ok(Some(p)) => {
                    functional = fg
                        .map(|f| (f.outputs, f.run))
                        .filter(|(n, r)| !r.is_trivial(*n))
                        .map(|(_, r)| r);
                    let reasons = p.fallback_reasons();
                    if !reasons.is_empty() {
                        crate::log::inductor_fallbacks(info, &reasons);
                    }
                    output_code = Some(p.source().to_string());
                    backend_phases = p.phase_times().phases();
                    Runner::Inductor(Box::new(p))
                }
                Ok(None) => Runner::Eager(EagerProgram::new(py, &output.graph, &output.callables)?),
                Err(why) => {
                    crate::log::inductor_fallbacks(
                        info,
                        &[format!("the whole graph runs on the eager backend: {why}")],
                    );
                    Runner::Eager(EagerProgram::new(py, &output.graph, &output.callables)?)
                }
            }
        }
        Backend::Python(f) => {
            let gm = crate::fx_export::graph_module(py, &output)?;
            let examples = PyList::new(py, output.example_inputs.iter().map(|e| e.bind(py)))?;
            let compiled = f.bind(py).call1((gm, examples))?;
            Runner::Python(compiled.unbind())
        }
    };
    let graph = Py::new(
        py,
        CompiledGraph {
            inputs: output.input_sources.clone(),
            nargs: info.nargs,
            globals: globals.clone().unbind(),
            builtins: builtins.clone().unbind(),
            runner,
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
                }
            },
            functional,
        },
    )?;
    let backend_secs = backend_started.elapsed().as_secs_f64();
    let codegen_started = std::time::Instant::now();
    let transformed = match &plan {
        None => crate::codegen::trampoline(py, info, code, graph.bind(py).as_any())?,
        Some(plan) => {
            crate::codegen::graph_break(py, info, code, globals, graph.bind(py).as_any(), plan)?
        }
    };
    crate::cache::mark_skip(&transformed);
    let function = py.import("types")?.getattr("FunctionType")?.call1((
        &transformed,
        globals,
        info.name.as_str(),
    ))?;
    let guard_lines = guards.describe();
    crate::log::compiled(info, compile_id, &graph_code, &guard_lines);
    // `backend` is what the backend took beyond the phases it reports itself (for the
    // inductor: checks and torch handles; for the others: all of it); `bytecode` is the
    // transformed code, made after the backend.
    let reported: f64 = backend_phases.iter().map(|(_, s)| s).sum();
    let mut timings = vec![("trace", trace_secs), ("guard_build", guard_secs)];
    timings.extend(backend_phases);
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
            guards: &guard_lines,
            break_reason,
            timings: &timings,
            transformed_code: &transformed,
            output_code: output_code.as_deref(),
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

/// Wraps the frame's result in the side effects of the traced region, replayed after the graph.
fn with_effects(
    py: Python<'_>,
    value: OutputTemplate,
    effects: &interp::SideEffects,
    outs: &mut Vec<fx::NodeId>,
    ctx: &mut TemplateCtx<'_>,
) -> Result<OutputTemplate, TraceError> {
    if effects.is_empty() {
        return Ok(value);
    }
    let builtins = py.import("builtins")?;
    let operator = py.import("operator")?;
    let setattr = builtins.getattr("setattr")?.unbind();
    let setitem = operator.getattr("setitem")?.unbind();
    let dict = builtins.getattr("dict")?;
    let mut calls: Vec<(Py<PyAny>, Vec<OutputTemplate>)> = Vec::new();
    let name =
        |s: &str| OutputTemplate::Const(pyo3::types::PyString::new(py, s).into_any().unbind());
    for l in &effects.lists {
        let target = template_of(py, &Var::List(l.clone()), outs, ctx)?;
        let items = l
            .borrow()
            .iter()
            .map(|v| template_of(py, v, outs, ctx))
            .collect::<Result<Vec<_>, _>>()?;
        let all = pyo3::types::PySlice::full(py).into_any().unbind();
        calls.push((
            setitem.clone_ref(py),
            vec![
                target,
                OutputTemplate::Const(all),
                OutputTemplate::List(items),
            ],
        ));
    }
    for d in &effects.dicts {
        let target = template_of(py, &Var::Dict(d.clone()), outs, ctx)?;
        let items = d
            .borrow()
            .iter()
            .map(|(k, v)| Ok((k.clone_ref(py), template_of(py, v, outs, ctx)?)))
            .collect::<Result<Vec<_>, TraceError>>()?;
        // Cleared and refilled, so the key order is the traced one.
        let again = template_of(py, &Var::Dict(d.clone()), outs, ctx)?;
        calls.push((dict.getattr("clear")?.unbind(), vec![again]));
        calls.push((
            dict.getattr("update")?.unbind(),
            vec![target, OutputTemplate::Dict(items)],
        ));
    }
    for (_, src, attr, v) in &effects.attrs {
        calls.push((
            setattr.clone_ref(py),
            vec![
                OutputTemplate::Input(src.clone()),
                name(attr),
                template_of(py, v, outs, ctx)?,
            ],
        ));
    }
    for (g, n, v) in &effects.globals {
        calls.push((
            setitem.clone_ref(py),
            vec![
                OutputTemplate::Const(g.clone_ref(py)),
                name(n),
                template_of(py, v, outs, ctx)?,
            ],
        ));
    }
    Ok(OutputTemplate::Effects(Box::new(value), calls))
}

/// (output index, input index) for graph outputs that are placeholders.
fn passthrough(graph: &fx::Graph) -> Vec<(usize, usize)> {
    let Some(out) = graph.output_node() else {
        return Vec::new();
    };
    let NodeKind::Output { values } = &graph.node(out).kind else {
        return Vec::new();
    };
    values
        .iter()
        .enumerate()
        .filter_map(|(i, v)| match v {
            Arg::Node(n) => match graph.node(*n).kind {
                NodeKind::Placeholder { index } => Some((i, index)),
                _ => None,
            },
            _ => None,
        })
        .collect()
}

/// State of one value reconstruction: where input containers come from, and which containers
/// made in the frame were already built (a list reached twice must be one object).
struct TemplateCtx<'a> {
    ext: &'a [(usize, crate::source::Source)],
    built: Vec<usize>,
    /// Results of in-place ops on graph inputs: returned as the input object itself.
    inputs: Vec<(fx::NodeId, crate::source::Source)>,
    /// Tracked cells that stand for the frame's closure cells: (address, closure index).
    free_cells: &'a [(usize, usize)],
}

impl<'a> TemplateCtx<'a> {
    fn new(
        ext: &'a [(usize, crate::source::Source)],
        inputs: Vec<(fx::NodeId, crate::source::Source)>,
        free_cells: &'a [(usize, usize)],
    ) -> Self {
        TemplateCtx {
            ext,
            built: Vec::new(),
            inputs,
            free_cells,
        }
    }

    fn external(&self, addr: usize) -> Option<crate::source::Source> {
        self.ext
            .iter()
            .find(|(a, _)| *a == addr)
            .map(|(_, s)| s.clone())
    }
}

/// A set, list, dict or bytearray (exactly: subclasses carry more state than a copy keeps).
fn is_plain_mutable(py: Python<'_>, ob: &Bound<'_, PyAny>) -> bool {
    let ty = ob.get_type();
    ty.is(py.get_type::<pyo3::types::PySet>())
        || ty.is(py.get_type::<pyo3::types::PyList>())
        || ty.is(py.get_type::<pyo3::types::PyDict>())
        || ty.is(py.get_type::<pyo3::types::PyByteArray>())
}

fn template_of(
    py: Python<'_>,
    v: &Var,
    outs: &mut Vec<fx::NodeId>,
    ctx: &mut TemplateCtx<'_>,
) -> Result<OutputTemplate, TraceError> {
    // A mutable object made at trace time (`set()` folded) must be a fresh one on every call:
    // a copy of its state at the break, one per object.
    if let Var::Py(o, None) = v {
        let ob = o.bind(py);
        // A method of such an object (`seen.add`) is looked up on its copy.
        if ob.is_instance_of::<pyo3::types::PyCFunction>() {
            if let (Ok(owner), Ok(name)) = (ob.getattr("__self__"), ob.getattr("__name__")) {
                if is_plain_mutable(py, &owner) {
                    let recv = template_of(py, &Var::Py(owner.unbind(), None), outs, ctx)?;
                    return Ok(OutputTemplate::Attr(Box::new(recv), name.extract()?));
                }
            }
        }
        if is_plain_mutable(py, ob) {
            let addr = ob.as_ptr() as usize;
            if let Some(k) = ctx.built.iter().position(|a| *a == addr) {
                return Ok(OutputTemplate::Again(k));
            }
            ctx.built.push(addr);
            let k = ctx.built.len() - 1;
            let copy = py.import("copy")?.getattr("copy")?.unbind();
            return Ok(OutputTemplate::Keep(
                k,
                Box::new(OutputTemplate::Call(
                    copy,
                    vec![OutputTemplate::Const(o.clone_ref(py))],
                )),
            ));
        }
    }
    // A user object made by the traced code: `object.__new__(cls)`, remembered before its
    // `__dict__` is built (so an attribute can refer back to it), then filled in order.
    if let Var::Object(o) = v {
        let addr = std::rc::Rc::as_ptr(o) as usize;
        if let Some(k) = ctx.built.iter().position(|a| *a == addr) {
            return Ok(OutputTemplate::Again(k));
        }
        ctx.built.push(addr);
        let k = ctx.built.len() - 1;
        let new = py
            .import("builtins")?
            .getattr("object")?
            .getattr("__new__")?
            .unbind();
        let shell = OutputTemplate::Keep(
            k,
            Box::new(OutputTemplate::Call(
                new,
                vec![OutputTemplate::Const(o.cls.clone_ref(py))],
            )),
        );
        let attrs = o.attrs.borrow().clone();
        let names = pyo3::types::PyTuple::new(py, attrs.iter().map(|(n, _)| n.as_str()))?;
        let values = attrs
            .iter()
            .map(|(_, a)| template_of(py, a, outs, ctx))
            .collect::<Result<Vec<_>, _>>()?;
        return Ok(OutputTemplate::Call(
            interp::fill_function(py)?,
            vec![
                shell,
                OutputTemplate::Const(names.into_any().unbind()),
                OutputTemplate::Tuple(values),
            ],
        ));
    }
    let addr = match v {
        Var::List(l) => Some(std::rc::Rc::as_ptr(l) as usize),
        Var::Dict(d) => Some(std::rc::Rc::as_ptr(d) as usize),
        Var::Cell(c) => Some(std::rc::Rc::as_ptr(c) as usize),
        Var::Function(f) => Some(std::rc::Rc::as_ptr(f) as usize),
        Var::ModelOutput(o) => Some(std::rc::Rc::as_ptr(o) as usize),
        _ => None,
    };
    if let (Var::Cell(c), Some(addr)) = (v, addr) {
        if let Some((_, j)) = ctx.free_cells.iter().find(|(a, _)| *a == addr) {
            let _ = c;
            return Ok(OutputTemplate::ClosureCell(*j));
        }
    }
    if let Some(addr) = addr {
        if let Some(s) = ctx.external(addr) {
            return Ok(OutputTemplate::Input(s));
        }
        if let Some(k) = ctx.built.iter().position(|a| *a == addr) {
            return Ok(OutputTemplate::Again(k));
        }
        ctx.built.push(addr);
        let k = ctx.built.len() - 1;
        let inner = template_of_inner(py, v, outs, ctx)?;
        return Ok(OutputTemplate::Keep(k, Box::new(inner)));
    }
    template_of_inner(py, v, outs, ctx)
}

fn template_of_inner(
    py: Python<'_>,
    v: &Var,
    outs: &mut Vec<fx::NodeId>,
    ctx: &mut TemplateCtx<'_>,
) -> Result<OutputTemplate, TraceError> {
    match v {
        // Read from the inputs: the object itself, fetched again on each call.
        Var::Py(_, Some(s)) => return Ok(OutputTemplate::Input(s.clone())),
        // The result of an in-place op on a graph input: the graph still performs the
        // mutation (the node is an output, so it is kept); the value is the input object itself,
        // as eager returns it.
        Var::Tensor(t) => {
            if let Some((_, s)) = ctx.inputs.iter().find(|(n, _)| *n == t.node) {
                if !outs.contains(&t.node) {
                    outs.push(t.node);
                }
                return Ok(OutputTemplate::Input(s.clone()));
            }
        }
        _ => {}
    }
    Ok(match v {
        Var::Tensor(t) => {
            let i = match outs.iter().position(|n| *n == t.node) {
                Some(i) => i,
                None => {
                    outs.push(t.node);
                    outs.len() - 1
                }
            };
            OutputTemplate::Graph(i)
        }
        // Built again by its class from the field values, positionally in declaration order
        // (the dataclass `__init__` takes them so; `__post_init__` makes the dict again).
        Var::ModelOutput(o) => OutputTemplate::Call(
            o.cls.clone_ref(py),
            o.rebuild_args()?
                .iter()
                .map(|v| template_of(py, v, outs, ctx))
                .collect::<Result<_, _>>()?,
        ),
        Var::NamedTuple { ty, items } => OutputTemplate::NamedTuple(
            ty.clone_ref(py),
            items
                .iter()
                .map(|i| template_of(py, i, outs, ctx))
                .collect::<Result<_, _>>()?,
        ),
        Var::Tuple(items) => OutputTemplate::Tuple(
            items
                .iter()
                .map(|i| template_of(py, i, outs, ctx))
                .collect::<Result<_, _>>()?,
        ),
        Var::List(items) => OutputTemplate::List(
            items
                .borrow()
                .iter()
                .map(|i| template_of(py, i, outs, ctx))
                .collect::<Result<_, _>>()?,
        ),
        Var::Dict(items) => OutputTemplate::Dict(
            items
                .borrow()
                .iter()
                .map(|(k, v)| Ok((k.clone_ref(py), template_of(py, v, outs, ctx)?)))
                .collect::<Result<_, TraceError>>()?,
        ),
        Var::Py(o, _) => OutputTemplate::Const(o.clone_ref(py)),
        Var::Method { recv, name } => {
            OutputTemplate::Attr(Box::new(template_of(py, recv, outs, ctx)?), name.clone())
        }
        Var::BoundMethod { func, self_ } => {
            let name: String = func
                .as_py(py)
                .and_then(|f| f.getattr("__name__").ok())
                .and_then(|n| n.extract().ok())
                .ok_or_else(|| TraceError::unsupported("a bound method without a name"))?;
            OutputTemplate::Attr(Box::new(template_of(py, self_, outs, ctx)?), name)
        }
        // A live view of the rebuilt dict (the same object the rest of the value gets).
        Var::DictView(d, kind) => OutputTemplate::Call(
            py.get_type::<pyo3::types::PyDict>()
                .getattr(kind.method())?
                .unbind(),
            vec![template_of(py, &Var::Dict(d.clone()), outs, ctx)?],
        ),
        Var::Size(_) | Var::Slice(_) => OutputTemplate::Const(
            v.as_py(py)
                .ok_or_else(|| TraceError::internal("size without a value"))?
                .unbind(),
        ),
        // A loop's iterator on the stack is handed over as its remaining items (see
        // `StackSlot::Iter`); one anywhere else would have to stay the very same object.
        Var::Iter(_) => {
            return Err(TraceError::unsupported(
                "an iterator in progress is held outside the stack of a for loop",
            ))
        }
        // A cell of the frame: a new cell object with the value at the break, one per tracked
        // cell (closures rebuilt below share it).
        Var::Cell(c) => {
            let content = c.borrow().clone();
            let args = match content {
                Some(v) => vec![template_of(py, &v, outs, ctx)?],
                None => Vec::new(),
            };
            let cell_type = py.import("types")?.getattr("CellType")?.unbind();
            OutputTemplate::Call(cell_type, args)
        }
        // A function made by the traced code: made again from its code, defaults and cells.
        Var::Function(f) if f.kwdefaults.is_empty() => {
            let defaults = if f.defaults.is_empty() {
                OutputTemplate::Const(py.None())
            } else {
                OutputTemplate::Tuple(
                    f.defaults
                        .iter()
                        .map(|d| template_of(py, d, outs, ctx))
                        .collect::<Result<_, _>>()?,
                )
            };
            let closure = if f.closure.is_empty() {
                OutputTemplate::Const(py.None())
            } else {
                OutputTemplate::Tuple(
                    f.closure
                        .iter()
                        .map(|c| match c {
                            Var::Cell(_) => template_of(py, c, outs, ctx),
                            _ => Err(TraceError::unsupported(
                                "a closure over a cell made outside the frame",
                            )),
                        })
                        .collect::<Result<_, _>>()?,
                )
            };
            let ft = py.import("types")?.getattr("FunctionType")?.unbind();
            OutputTemplate::Call(
                ft,
                vec![
                    OutputTemplate::Const(f.code.clone_ref(py)),
                    OutputTemplate::Const(f.globals.clone_ref(py).into_any()),
                    OutputTemplate::Const(
                        pyo3::types::PyString::new(py, &f.name).into_any().unbind(),
                    ),
                    defaults,
                    closure,
                ],
            )
        }
        // The `__exit__` of a grad-mode block: a `set_grad_enabled` object whose exit restores
        // the mode the block found.
        Var::GradModeExit { restore } => {
            let torch = py.import("torch")?;
            let saved = crate::guards::grad_enabled(py);
            let set = torch.getattr("_C")?.getattr("_set_grad_enabled")?;
            set.call1((*restore,))?;
            let ctx_obj = torch.getattr("set_grad_enabled")?.call1((*restore,));
            set.call1((saved,))?;
            OutputTemplate::Const(ctx_obj?.getattr("__exit__")?.unbind())
        }
        other => {
            return Err(TraceError::unsupported(format!(
                "returning a {}",
                other.type_name(py)
            )))
        }
    })
}

#[allow(dead_code)]
fn node_is_output(kind: &NodeKind) -> bool {
    matches!(kind, NodeKind::Output { .. })
}

#[allow(dead_code)]
fn unused(_: &PyTuple) {}
