//! Training graphs compiled forward and backward (issue 17): a graph whose inputs require grad
//! is functionalized (`functional::for_inductor`), differentiated in Rust
//! (`fx::autodiff::joint`), its forward runs on the inductor (or the eager runner for
//! `backend="aot_eager"`) inside one `torch.autograd.Function` (`python/torchferro/_aot.py`),
//! and its backward graph is compiled on the first `.backward()` from the layouts the forward
//! actually produced. Parameters stay leaves: the Function returns their gradients and autograd
//! accumulates `.grad` as in eager.
//!
//! Around the Function, as AOTAutograd does: inputs the graph writes get their new values copied
//! in after it (`_aot.apply`, with eager's version-counter bumps), and outputs that alias an input
//! or another output are rebuilt as views of their base, so autograd records the views
//! (`AotProgram::run`). See `docs/training.md`.
//!
//! What this does not handle runs the traced graph on the eager runner (torch records autograd
//! per op, correct by construction) and the `aot` log says why: an op without a derivative rule,
//! an `out=` write under `no_grad` to a tensor that requires grad, a backward that reads a value
//! a `no_grad` write overwrote (eager raises), an output that is not a tensor.
//!
//! One concept per module: [`policy`] decides whether a graph takes this path (grad mode, the
//! CUDA gate, an optimizer's `no_grad` switches), [`build`] derives the joint graph and every
//! reason to run through torch's autograd instead ([`log`] says why), [`handoff`] partitions it
//! into the compiled forward and the layout `_aot` reads, [`core`] is the object the
//! `autograd.Function` calls (the forward, the backward compiled on first use, [`half`] each),
//! and [`program`] runs a call around the Function.

mod build;
mod core;
mod half;
mod handoff;
mod log;
mod policy;
mod program;

pub use build::{build, build_parts};
pub use log::Origin;
pub use policy::{no_grad_switches_dropped, wants_grad, without_no_grad_switches};
pub use program::AotProgram;
