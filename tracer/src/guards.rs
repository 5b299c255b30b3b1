//! Guards: the conditions under which a compiled entry is valid, as a trie over sources with leaf
//! checks, evaluated natively against a [`Scope`](crate::source::Scope) without building a
//! locals dict.
//!
//! Each value is fetched once per call however many checks hang off it, and sibling paths share
//! their common prefix (`L['self'].fc` is fetched once for both `.weight` and `.bias`).
//!
//! One concept per file: `check.rs` the leaf checks on one value, `tree.rs` the trie of one
//! entry, `torch_state.rs` the grad/autocast state every entry is guarded on, `repr.rs` the
//! short texts of values in messages, `weak.rs` identity guards that do not keep their object
//! alive, `memo.rs` the fetches and identity checks a walk skips while the dicts they read keep
//! their version tags, `shape_env.rs` the size symbols and relations of dynamic shapes.

pub use crate::event::GuardFailure;

mod check;
mod fast;
mod memo;
mod repr;
pub mod shape_cond;
pub mod shape_env;
pub mod shape_float;
mod torch_state;
mod tree;
mod weak;

pub(crate) use check::dict_keys_in_order;
pub use check::{take_build_time, tensor_check, Check, TensorCheck};
pub use memo::{
    enabled as guard_memo_enabled, set_enabled as set_guard_memo, take_counts as take_guard_counts,
};
pub use repr::{short_repr, type_name};
pub use shape_env::{DynamicPolicy, ShapeEnv, ShapeGuards};
pub use torch_state::{autocast_state, foreign_autocast, grad_enabled, inference_mode_enabled};
pub use tree::GuardTree;
pub use weak::{on_target_death, WeakTarget};
