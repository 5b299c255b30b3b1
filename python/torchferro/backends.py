"""Backend registry. A backend is ``None`` for the built-in eager runner (driven from Rust),
``"inductor"`` for the Rust inductor (generated C kernels for CPU graphs; other graphs run on the
eager runner), or a Python callable ``backend(gm: torch.fx.GraphModule, example_inputs) ->
callable``."""

from __future__ import annotations

import logging

_log = logging.getLogger("torchferro")

_BACKENDS = {
    "eager": None,
    "aot_eager": None,
    "inductor": "inductor",
}


def list_backends(exclude_tags=("debug", "experimental")) -> list[str]:
    """Names accepted as ``backend=`` strings."""
    return sorted(_BACKENDS)


def lookup_backend(backend):
    if callable(backend):
        return backend
    if not isinstance(backend, str):
        raise TypeError(
            f"backend must be a string or a callable, got {type(backend).__name__}"
        )
    if backend not in _BACKENDS:
        raise ValueError(
            f"unknown backend {backend!r}; available: {', '.join(list_backends())}"
        )
    return _BACKENDS[backend]
