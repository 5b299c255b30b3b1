//! CUDA autocast in inference graphs for the inductor (and CPU autocast where asked).
//!
//! The tracer keeps a `with torch.autocast("cuda")` region as two `set_autocast` nodes, and the
//! metadata of each op inside comes from a fake run on its device under the region's state,
//! so it holds the dtype eager computes in (torch's CUDA lists: `linear` → bfloat16, `softmax`
//! → float32, `cat` → the widest input). `fx::autodiff::autocast::explicit_casts` writes such
//! regions out as `Tensor.to` casts of the ops' floating-point arguments: the graph then means
//! the same without autocast, and the inductor, which computes in the dtypes it is given,
//! compiles it. A frame entered under CUDA autocast (a compiled module called inside the
//! region) starts inside it: the region is the whole graph. Its entry is guarded on the autocast
//! state, and the ops the inductor hands to torch see arguments already in the dtype autocast
//! would cast them to, so the ambient autocast changes nothing there.
//!
//! CPU autocast regions still run on the eager runner unless `TORCHFERRO_AUTOCAST_INDUCTOR=1`
//! (the inductor rounds fused 16-bit pointwise work once, where eager rounds after every op; on
//! CUDA that is torch.compile's behaviour too, and the GPU workloads want the fused kernels).
//! A graph with autocast on both devices also runs eagerly: `explicit_casts` tracks one region
//! state.

use fx::autodiff::autocast::{explicit_casts, SET_AUTOCAST};
use fx::{Arg, Graph, NodeId, NodeKind, NodeMeta, Target};
use pyo3::prelude::*;

use crate::output::{AmpDevice, OutputGraph};

/// What the inductor gets for a graph's autocast.
pub enum ForInductor {
    /// No autocast in the graph or around it (the graph as traced).
    None,
    /// CUDA autocast written out as casts: the graph and its callables.
    Cast(Graph, Vec<(NodeId, Py<PyAny>)>),
    /// Autocast the inductor cannot take: why (the graph runs on the eager runner).
    Eager(String),
}

/// The devices the graph's autocast switches name.
fn switch_devices(graph: &Graph) -> Vec<String> {
    graph
        .nodes()
        .filter_map(|(_, n)| match &n.kind {
            NodeKind::Call { target, args, .. } if target.name() == SET_AUTOCAST => {
                Some(match args.first() {
                    Some(Arg::Str(d)) => d.clone(),
                    _ => String::new(),
                })
            }
            _ => None,
        })
        .collect()
}

/// Whether CPU autocast is written out as casts for the inductor too
/// (`TORCHFERRO_AUTOCAST_INDUCTOR=1`, read at each compile): off by default, where a CPU
/// region keeps eager's per-op rounding on the eager runner. On, the CPU inductor compiles it
/// as torch.compile does; it is also how the CUDA path's rewrite is tested on a machine
/// without a GPU.
fn cpu_too() -> bool {
    std::env::var("TORCHFERRO_AUTOCAST_INDUCTOR").is_ok_and(|v| v == "1")
}

/// `output`'s graph with its CUDA autocast written out as casts (see the module doc).
pub fn for_inductor(py: Python<'_>, output: &OutputGraph) -> ForInductor {
    let cpu_too = cpu_too();
    let mut devices = switch_devices(&output.graph);
    let ambient: Vec<AmpDevice> = [AmpDevice::Cpu, AmpDevice::Cuda]
        .into_iter()
        .filter(|d| output.entry_autocast(*d))
        .collect();
    if devices.is_empty() && (ambient.is_empty() || (ambient == [AmpDevice::Cpu] && !cpu_too)) {
        // No autocast, or CPU autocast only around the frame: the graph as before (the ops the
        // inductor hands to torch run under it).
        return ForInductor::None;
    }
    devices.extend(ambient.iter().map(|d| d.name().to_string()));
    devices.sort();
    devices.dedup();
    match &devices[..] {
        [one] if one == "cuda" || (one == "cpu" && cpu_too) => {}
        [_] => return ForInductor::Eager("it has an autocast region".into()),
        _ => {
            return ForInductor::Eager(
                "it has autocast on two devices (the rewrite follows one region state)".into(),
            )
        }
    }
    let graph = match ambient.first() {
        Some(device) => match with_entry_region(output, *device) {
            Ok(Some(g)) => g,
            Ok(None) => return ForInductor::None,
            Err(why) => return ForInductor::Eager(why),
        },
        None => output.graph.clone(),
    };
    match explicit_casts(&graph) {
        Ok(g) => {
            // The switches are gone from the rewritten graph, and their callables with them.
            // Only the callables of live nodes are kept: a cast may take the id of a node the
            // passes removed earlier, whose callable is still listed.
            let kept: std::collections::HashSet<NodeId> = output
                .graph
                .nodes()
                .filter(|(_, n)| {
                    !matches!(&n.kind,
                        NodeKind::Call { target, .. } if target.name() == SET_AUTOCAST)
                })
                .map(|(id, _)| id)
                .collect();
            let callables = output
                .callables
                .iter()
                .filter(|(id, _)| kept.contains(id))
                .map(|(id, c)| (*id, c.clone_ref(py)))
                .collect();
            ForInductor::Cast(g, callables)
        }
        Err(why) => ForInductor::Eager(format!("autocast: {why}")),
    }
}

/// `output`'s graph inside the autocast region the frame was entered under on `device`: the
/// region is the whole graph, so it is opened before the first op and closed before the output,
/// as if the frame's body were inside the `with`, with the region's own dtype (float16 autocast
/// is not bfloat16's). `None` for an empty graph or no autocast there; `Err` for a dtype the
/// graph cannot name.
pub fn with_entry_region(output: &OutputGraph, device: AmpDevice) -> Result<Option<Graph>, String> {
    let mut graph = output.graph.clone();
    let first = graph
        .nodes()
        .find(|(_, n)| !matches!(n.kind, NodeKind::Placeholder { .. }))
        .map(|(id, _)| id);
    let (Some(first), Some(out)) = (first, graph.output_node()) else {
        return Ok(None);
    };
    let dtype = match output.entry_autocast_dtype(device) {
        Some(Ok(d)) => d,
        Some(Err(why)) => return Err(format!("autocast: {why}")),
        None => return Ok(None),
    };
    let switch = |enabled: bool| {
        (
            Target::Function(SET_AUTOCAST.into()),
            vec![
                Arg::Str(device.name().into()),
                Arg::Bool(enabled),
                Arg::DType(dtype),
            ],
        )
    };
    let (t, a) = switch(true);
    graph.call_before(first, "set_autocast", t, a, vec![], NodeMeta::None);
    let (t, a) = switch(false);
    graph.call_before(out, "set_autocast", t, a, vec![], NodeMeta::None);
    Ok(Some(graph))
}
