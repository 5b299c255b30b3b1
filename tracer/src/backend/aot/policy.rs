//! Whether a graph is trained compiled: grad mode and an input that requires grad (an
//! optimizer's update under `no_grad` is an inference graph), and the CUDA gate.

use pyo3::prelude::*;

use fx::Graph;

/// Whether CUDA training graphs take the compiled path (on unless `TORCHFERRO_AOT_CUDA=0`, read
/// at each compile), as torch.compile compiles CUDA training. Opt-in until session 33: a GPT-2
/// 124M bf16 step ran 2.65x slower than eager in session 15; in session 32 (H100) it ran 2.0x
/// faster than eager (33.65 against 67.53 ms; torch.compile 31.29) and resnet50's bf16 step
/// level with torch.compile (docs/cuda.md), with the CUDA set passing with it on.
pub(super) fn cuda_training_enabled() -> bool {
    std::env::var("TORCHFERRO_AOT_CUDA").map_or(true, |v| v != "0")
}

/// Whether a graph needs the training path: grad mode on and an input that requires grad.
/// Ops that only write such inputs under `no_grad` (an optimizer's update) need no gradient:
/// the graph is an inference graph (`fx::autodiff::modes::differentiates`).
pub fn wants_grad(py: Python<'_>, graph: &Graph) -> bool {
    if !crate::guards::grad_enabled(py) {
        return false;
    }
    let requires_grad: Vec<bool> = graph
        .placeholders()
        .iter()
        .map(|&p| graph.node(p).meta.tensor().is_some_and(|t| t.requires_grad))
        .collect();
    requires_grad.iter().any(|&r| r) && fx::autodiff::modes::differentiates(graph, &requires_grad)
}

/// An inference graph (not [`wants_grad`]) entered in grad mode whose inputs require grad and
/// whose grad-mode switches only bracket its work under `no_grad` (an optimizer's traced
/// update: `set_grad_enabled(False)` ... `set_grad_enabled(True)`): the graph without the
/// switches, for the inductor. Nothing in it carries a gradient, and it ends in the mode it
/// started in, so dropping the switches changes no value and no mode the caller sees.
pub fn without_no_grad_switches(py: Python<'_>, graph: &Graph) -> Option<Graph> {
    no_grad_switches_dropped(graph, crate::guards::grad_enabled(py))
}

/// [`without_no_grad_switches`] for a graph entered with grad mode `grad_enabled`: a
/// precompiled graph is rebuilt in the mode it was captured in, not the loader's, so that it
/// lowers to the very kernels the capture compiled.
pub fn no_grad_switches_dropped(graph: &Graph, grad_enabled: bool) -> Option<Graph> {
    if !grad_enabled {
        return None;
    }
    let requires_grad: Vec<bool> = graph
        .placeholders()
        .iter()
        .map(|&p| graph.node(p).meta.tensor().is_some_and(|t| t.requires_grad))
        .collect();
    let (_, switches, at_end) = fx::autodiff::modes::grad_mode_regions(graph);
    if switches.is_empty()
        || !at_end
        || !requires_grad.iter().any(|&r| r)
        || fx::autodiff::modes::differentiates(graph, &requires_grad)
    {
        return None;
    }
    let mut g = graph.clone();
    for s in switches {
        g.remove(s);
    }
    Some(g)
}
