//! The graph IR: a torch-level dataflow graph held in petgraph.
//!
//! Nodes mirror torch.fx's vocabulary (placeholder, call_function, call_method, get_attr, output) so a
//! graph converts to a real `torch.fx.GraphModule` one node at a time, and the Rust inductor can lower
//! the same graph. Targets name torch callables by their qualified Python path (`torch.add`,
//! `torch.nn.functional.linear`) or tensor method name (`relu`), exactly as the user called them, so a
//! graph replays eagerly with the user's own arguments.
//!
//! Around the graph: [`infer`] computes result metadata natively, [`passes`] rewrites graphs
//! (dead code, common subexpressions, order checks), and [`print`] renders them as Python or DOT.

pub mod graph;
pub mod infer;
pub mod meta;

pub use graph::{Arg, Graph, Node, NodeId, NodeKind, Target};
pub use infer::{infer, infer_in, InferCtx, InferError};
pub use meta::{DType, Device, Dim, NodeMeta, TensorMeta};
