//! The graph IR: a torch-level dataflow graph held in petgraph.
//!
//! Nodes mirror torch.fx's vocabulary (placeholder, call_function, call_method, get_attr, output) so a
//! graph converts to a real `torch.fx.GraphModule` one node at a time, and the Rust inductor can lower
//! the same graph. Targets name torch callables by their qualified Python path (`torch.add`,
//! `torch.nn.functional.linear`) or tensor method name (`relu`), exactly as the user called them, so a
//! graph replays eagerly with the user's own arguments.
//!
//! Codemap:
//! - [`graph`]: nodes, arguments, targets; edges in petgraph kept in step with the arguments.
//! - [`meta`]: what a node produces (`TensorMeta` with possibly symbolic sizes and strides).
//! - [`mod@infer`]: the metadata of a torch call computed in Rust, checked against real torch
//!   (`tests/gen_infer_cases.py` writes `tests/data/infer_cases.json`, `tests/infer_torch.rs`
//!   replays it). Answers `Unsupported` rather than guess.
//! - [`ops`]: the op catalog: canonical names, spellings, and the view / in-place / random /
//!   effect / factory flags of every op the project knows (one place for these facts).
//! - [`sym`]: symbolic sizes (expressions over size symbols, relations) for dynamic shapes.
//! - [`passes`]: dead-code and common-subexpression elimination that respect mutation, aliasing
//!   and randomness; a consistency check of node order and edges.
//! - [`mod@print`]: the graph as readable Python (`Graph::python_code`) and as DOT (`Graph::to_dot`).

pub mod autodiff;
pub mod cond;
pub mod graph;
pub mod infer;
pub mod meta;
pub mod ops;
pub mod passes;
pub mod print;
pub mod sym;

pub use cond::Cond;
pub use graph::{Arg, Graph, Node, NodeId, NodeKind, Target};
pub use infer::{infer, infer_in, infer_symbolic, InferCtx, InferError};
pub use meta::{DType, Device, Dim, NodeMeta, TensorMeta};
pub use passes::{
    check_topological_order, eliminate_common_subexpressions, eliminate_dead_code, GraphError,
};
/// Symbolic floats (`sym::float`), under the name they had before they joined `sym`'s tree.
pub use sym::float as sym_float;
pub use sym::float::{FloatExpr, FloatOp, FloatRelation, IntRound};
pub use sym::{RelOp, Relation, SymExpr};
