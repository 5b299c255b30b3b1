//! The Rust inductor: compiles an `fx::Graph` into fused CPU kernels (issue 4).
//!
//! Pipeline, one module each:
//! - [`lower`]: torch-level calls → loop-level [`ir`] (decompositions, views as [`index`]
//!   arithmetic, extern GEMMs, fallbacks);
//! - [`interp`]: the reference interpreter of the IR (what the generated code is tested against);
//! - [`schedule`]: fusion of IR nodes into kernels and buffer planning;
//! - [`codegen`]: target-neutral kernel plans (`codegen::plan`) printed as C with OpenMP
//!   (`codegen::c`);
//! - [`target`]: the device compiled for and its policy ([`CpuPolicy`]), read through
//!   [`Options::target`];
//! - [`cache`]: the C compiler and the content-addressed shared-object cache;
//! - `cuda` (feature `cuda`): CUDA C (`codegen::cuda`) compiled by NVRTC to cached cubins;
//! - [`compiled`]: [`compile`] and [`CompiledGraph::run`] against a [`Host`];
//! - [`param`]: kernels with sizes as arguments for dynamic graphs (one library for many
//!   assignments of the size symbols);
//! - [`size`]: the IR's size type (a constant or an interned `fx::SymExpr`);
//! - [`symbolic`]: a graph with symbolic sizes at one assignment (`IrGraph::at`);
//! - [`workspace`]: intermediates kept allocated from one call to the next;
//! - [`entity`]: the typed ids (buffers, values, nodes, kernels, steps) and the vectors indexed
//!   by them.

pub mod entity;
pub mod error;
pub mod host;
mod hugepage;
pub mod index;
pub mod ir;
pub mod lower;

pub use compiled::{compile, compile_ir, prepare, CompiledGraph, Options, PhaseTimes, Prepared};
pub use error::{InductorError, RunError};
pub use host::{ExternCall, Host, HostArg, HostValue, SdpaMask, TensorDesc};
pub use target::{CpuPolicy, CudaPolicy, Target};
pub use workspace::Workspace;
pub mod cache;
pub mod codegen;
pub mod compiled;
#[cfg(feature = "cuda")]
pub mod cuda;
pub mod interp;
pub mod param;
mod runtime;
pub mod schedule;
pub mod size;
pub mod symbolic;
pub mod target;
pub mod testing;
pub mod workspace;
