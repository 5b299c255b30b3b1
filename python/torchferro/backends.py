"""Backend registry. A backend is ``None`` for the built-in eager runner (driven from Rust),
``"inductor"`` for the Rust inductor (generated C kernels for CPU graphs; other graphs run on the
eager runner), or a Python callable ``backend(gm: torch.fx.GraphModule, example_inputs) ->
callable``."""

from __future__ import annotations

import logging

_log = logging.getLogger("torchferro")


class InvalidBackend(RuntimeError):
    """An unknown ``backend=`` name (``torch._dynamo.exc.InvalidBackend`` is a RuntimeError too)."""

    def __init__(self, name: str):
        msg = f"Invalid backend: {name!r}, see `torchferro.list_backends()` for available backends."
        if _torch_knows(name):
            msg += (
                f" torch.compile's {name!r} backend is not built into torchferro; pass"
                f" torch._dynamo.lookup_backend({name!r}) as a callable backend to use it."
            )
        super().__init__(msg)


def _torch_knows(name: str) -> bool:
    try:
        from torch._dynamo.backends.registry import list_backends as torch_backends

        return name in torch_backends(exclude_tags=())
    except (ImportError, AttributeError, TypeError):
        return False


_BACKENDS = {
    "eager": None,
    "aot_eager": "aot_eager",
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
        raise InvalidBackend(backend)
    return _BACKENDS[backend]
