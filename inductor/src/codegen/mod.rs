//! Code generation: [`plan`] decides, per scheduled kernel, its loop shape and the buffers it
//! touches (target-neutral); [`c`] prints the plans as one C translation unit with OpenMP. A
//! CUDA printer is meant to read the same plans.

use crate::entity::EntityVec;
use crate::ir::{BufId, IrGraph};
use crate::schedule::{KernelId, Schedule};
use crate::target::Target;

pub mod c;
pub mod cuda;
pub mod plan;

pub use c::{c_type, storage_type};

/// The exported symbol every generated library defines; the loader checks it (a truncated or
/// foreign file fails the check), and its value names the source hash.
pub const VALIDATION_SYMBOL: &str = "torchferro_kernels_abi";

/// One generated kernel's entry point: its symbol, and the buffers its `void **args` array
/// points to, in order.
#[derive(Clone, Debug)]
pub struct KernelAbi {
    pub name: String,
    pub bufs: Vec<BufId>,
}

/// A generated translation unit and its kernels' entry points, in schedule order.
#[derive(Clone)]
pub struct CSource {
    pub code: String,
    pub kernels: EntityVec<KernelId, KernelAbi>,
}

/// Plans the schedule's kernels for `target` and prints them.
pub fn generate(ir: &IrGraph, sched: &Schedule, target: &Target) -> CSource {
    let plans = plan::plan(ir, sched, target);
    match target {
        Target::Cpu(policy) => c::generate(ir, sched, &plans, policy),
        Target::Cuda(_) => panic!("CUDA sources come from `codegen::cuda::generate`"),
    }
}
