"""Backend registry. A backend is ``None`` for the built-in eager runner (driven from Rust) or a
Python callable ``backend(gm: torch.fx.GraphModule, example_inputs) -> callable``."""

from __future__ import annotations

import logging

_log = logging.getLogger("torchferro")
_notified_inductor = False


def _aot_eager(gm, example_inputs):
    return gm.forward


_BACKENDS = {
    "eager": None,
    "aot_eager": None,
    "inductor": None,
}


def list_backends(exclude_tags=("debug", "experimental")) -> list[str]:
    """Names accepted as ``backend=`` strings."""
    return sorted(_BACKENDS)


def lookup_backend(backend):
    global _notified_inductor
    if callable(backend):
        return backend
    if not isinstance(backend, str):
        raise TypeError(f"backend must be a string or a callable, got {type(backend).__name__}")
    if backend not in _BACKENDS:
        raise ValueError(f"unknown backend {backend!r}; available: {', '.join(list_backends())}")
    if backend == "inductor" and not _notified_inductor:
        _notified_inductor = True
        _log.info("torchferro: the Rust inductor is not built yet; backend='inductor' runs the eager backend")
    return _BACKENDS[backend]
