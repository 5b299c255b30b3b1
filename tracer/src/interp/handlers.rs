//! Run-time errors inside `try`: ops whose errors depend on tensor values run natively there.
//!
//! A compiled graph runs at the end of its traced region, from the transformed code, while the
//! frame's `try` handlers live in the original bytecode's exception table; the Python effects of
//! the region (stores to locals, attribute and container writes) are replayed after the graph
//! returns. An op that raises from inside a graph therefore escapes the frame's own handler, and
//! the handler would in any case see none of the region's effects that eager had already made
//! (a local assigned in the `try` body before the raising op is still unbound). Errors of an
//! op's *shapes and arguments* are no problem: the tracer sees them on `meta` tensors, and the
//! frame then runs eagerly (`TraceError::UserError`), so its handler catches the real exception.
//! What a trace cannot see are errors that depend on tensor *values*: an index out of range
//! (`x[idx]`, `index_select`, `gather`, `embedding`, the targets of `nll_loss`/`cross_entropy`),
//! a probability outside [0, 1], a singular matrix, `_assert_async`.
//!
//! Candidates considered:
//! - *Deoptimize on error*: when a graph raises, run its region again eagerly. Sound only when
//!   the partial run left nothing the user can see: the eager runner applies in-place ops to
//!   inputs one op at a time, random ops have advanced the generator, and a rerun would apply
//!   them twice. Programs that mix an in-place update with a guarded index are common (training
//!   steps), so this would need a second mechanism anyway.
//! - *Graph break before the op* (chosen): inside an active handler, an op of [`VALUE_CHECKED`]
//!   (or a subscript by a tensor) ends the graph just before the root instruction that reaches
//!   it. The graph holds everything before, the transformed code stores the locals assigned so
//!   far, writes the recorded side effects, and runs that instruction natively under an
//!   exception range whose handler continues in the frame's own handler (`resume.rs`); the rest
//!   of the `try` body is traced again in the resume function. This is sound for every backend
//!   (no graph ever contains such an op under a handler), keeps the handler's view of the locals
//!   exact, and costs nothing where no `try` is active: graphs stay whole there. An op reached
//!   through an inlined call inside the `try` breaks at that call, which then runs as a frame of
//!   its own (compiled, without a handler of its own, so its graph raises straight to the
//!   caller's handler).
//!
//! "Inside an active handler" follows the exception table from the instruction: a handler that
//! only restores state and re-raises (the `__exit__` of a traced `no_grad`/`autocast` block,
//! whose modes `runtime.rs` restores when a graph raises; the cleanup that pops the exception
//! state) passes the search on to whatever covers it, and so does a `finally` clause, which
//! re-raises; any other handler (`except`, a `with` over another context manager, which could
//! suppress the error) is active. The frames an inlined call went through count too
//! (`Tracer::caught_by_callers`).
//!
//! A `finally` clause passes the search on because breaking there would split every model whose
//! forward runs under a library's `try: ... finally: reset()` (transformers' output capturing):
//! the error reaches the user either way, as in eager. What differs is the `finally` body's own
//! effects when a graph raises: they were traced after the op and are replayed only when the
//! graph returns, so on that error path they do not happen (torch.compile behaves the same).

use crate::error::TraceError;

use super::vars::Var;
use super::Frame;

/// Canonical ops (`fx::ops::canonical` names) whose errors depend on the values of their tensor
/// arguments rather than on shapes and arguments the trace sees: index-taking ops, losses over
/// class targets, ops that check probabilities or matrices, explicit asserts.
const VALUE_CHECKED: &[&str] = &[
    "index_select",
    "gather",
    "scatter",
    "scatter_add",
    "scatter_reduce",
    "index_add",
    "index_copy",
    "index_fill",
    "index_reduce",
    "index_put",
    "_index_put_impl",
    "index",
    "take",
    "take_along_dim",
    "put",
    "embedding",
    "embedding_bag",
    "_embedding_bag",
    "nll_loss",
    "nll_loss2d",
    "nll_loss_nd",
    "cross_entropy",
    "multi_margin_loss",
    "multilabel_margin_loss",
    "ctc_loss",
    "binary_cross_entropy",
    "one_hot",
    "bincount",
    "multinomial",
    "bernoulli",
    "poisson",
    "repeat_interleave",
    "max_unpool1d",
    "max_unpool2d",
    "max_unpool3d",
    "_assert_async",
    "cholesky",
    "inverse",
    "linalg_cholesky",
    "linalg_inv",
    "linalg_solve",
    "cholesky_inverse",
    "cholesky_solve",
    "segment_reduce",
];

/// How many handlers a search may pass on (a guard against a malformed table).
const MAX_CHAIN: usize = 16;

impl Frame<'_, '_> {
    /// Whether an op called as `target(args)` could raise an error the frame (or a frame that
    /// inlined it) catches, in which case it must run natively: a graph break before the root
    /// instruction that reaches it.
    pub(super) fn check_value_errors(
        &self,
        target: &fx::Target,
        args: &[fx::Arg],
        kwargs: &[(String, fx::Arg)],
    ) -> Result<(), TraceError> {
        let Some(canon) = fx::ops::canonical(target, args, kwargs) else {
            return Ok(());
        };
        let name = canon.name.as_str();
        // A subscript reads or writes at the positions a tensor of indices holds.
        let by_tensor =
            matches!(name, "getitem" | "setitem") && args.get(1).is_some_and(mentions_node);
        if !(by_tensor || VALUE_CHECKED.contains(&name)) {
            return Ok(());
        }
        if self.tx.caught_by_callers == 0 && !self.caught_here() {
            return Ok(());
        }
        let what = match target {
            fx::Target::Function(p) => p.clone(),
            fx::Target::Method(m) => format!("Tensor.{m}"),
        };
        Err(TraceError::unsupported(format!(
            "{what} inside a `try` block (its error depends on tensor values and must reach the handler)"
        )))
    }

    /// Whether an exception raised by the instruction now running would reach a handler of this
    /// frame that does more than restore traced state and re-raise.
    pub(super) fn caught_here(&self) -> bool {
        let code = &self.code;
        if code.exception_table.is_empty() {
            return false;
        }
        let Some(ins) = code.ins.get(self.pc.saturating_sub(1)) else {
            return false;
        };
        let Ok(entries) = bytecode::exception_table::parse(&code.exception_table) else {
            // An unreadable table: assume the worst.
            return true;
        };
        let mut offset = ins.offset;
        for _ in 0..MAX_CHAIN {
            let Some(e) = entries
                .iter()
                .find(|e| (e.start as usize) <= offset && offset < e.end as usize)
            else {
                return false;
            };
            let Some(h) = code.ins.iter().position(|i| i.offset == e.target as usize) else {
                return true;
            };
            let first = &code.ins[h];
            let next = code.ins.get(h + 1).map(|i| i.name.as_str());
            let passes_on = match first.name.as_str() {
                // A `with` block's exit: transparent when its `__exit__` is a traced mode switch
                // (it sits just below the handler's depth).
                "PUSH_EXC_INFO" if next == Some("WITH_EXCEPT_START") => {
                    let exit = (e.depth as usize)
                        .checked_sub(1)
                        .and_then(|d| self.stack.get(d));
                    matches!(
                        exit,
                        Some(
                            Var::GradModeExit { .. }
                                | Var::AutocastExit { .. }
                                | Var::InferenceModeExit { .. }
                        )
                    )
                }
                // A `finally` body: it runs and re-raises, catching nothing (see the module
                // documentation for what it costs).
                "PUSH_EXC_INFO" => only_reraises(&code.ins, h + 1),
                // The cleanup that restores the previous exception state and re-raises.
                "COPY" => {
                    next == Some("POP_EXCEPT")
                        && code.ins.get(h + 2).is_some_and(|i| i.name == "RERAISE")
                }
                _ => false,
            };
            if !passes_on {
                return true;
            }
            offset = first.offset;
        }
        true
    }
}

/// Whether a handler (from the instruction after its `PUSH_EXC_INFO`, index `start`) is a
/// `finally` clause: every path through it re-raises the exception, reaching `RERAISE` before
/// anything that could catch it (an exception match, `POP_EXCEPT`, a return, a `with` exit). Its
/// own branches (`if` inside `finally`) are followed; anything unexpected counts as catching.
fn only_reraises(ins: &[crate::decode::Ins], start: usize) -> bool {
    let mut todo = vec![start];
    let mut seen = std::collections::HashSet::new();
    while let Some(mut i) = todo.pop() {
        loop {
            if !seen.insert(i) || seen.len() > 4096 {
                break;
            }
            let Some(x) = ins.get(i) else {
                return false;
            };
            match x.name.as_str() {
                "RERAISE" => break,
                "CHECK_EXC_MATCH" | "CHECK_EG_MATCH" | "POP_EXCEPT" | "RETURN_VALUE"
                | "RETURN_CONST" | "WITH_EXCEPT_START" | "FOR_ITER" | "YIELD_VALUE" => {
                    return false
                }
                n if n.contains("JUMP") => {
                    let Some(t) = x.target else {
                        return false;
                    };
                    // A backward jump would be a loop inside `finally`: not worth following.
                    if t <= i {
                        return false;
                    }
                    if n.starts_with("JUMP_FORWARD") || n == "JUMP_NO_INTERRUPT" {
                        i = t;
                        continue;
                    }
                    todo.push(t);
                }
                _ => {}
            }
            i += 1;
        }
    }
    true
}

fn mentions_node(a: &fx::Arg) -> bool {
    let mut nodes = Vec::new();
    a.nodes(&mut nodes);
    !nodes.is_empty()
}
