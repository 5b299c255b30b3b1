//! `torch.distributions`: its classes are plain Python over torch ops, so they are traced like
//! user code (constructed as tracked objects, their methods and `kl_divergence` inlined), as
//! torch.compile inlines them. Random draws inside (`torch.normal`, `torch.multinomial`,
//! `torch.bernoulli`, `Tensor.normal_`) are ordinary random graph nodes.

/// Whether a callable's `__module__` is part of `torch.distributions` (its classes, `kl`, `utils`).
pub(super) fn is_distributions_module(module: &str) -> bool {
    module == "torch.distributions" || module.starts_with("torch.distributions.")
}

/// Whether a code object's file is part of `torch.distributions` (inlined, not skipped).
pub(super) fn is_distributions_file(filename: &str) -> bool {
    let sep = std::path::MAIN_SEPARATOR;
    filename.contains(&format!("{sep}torch{sep}distributions{sep}"))
}
