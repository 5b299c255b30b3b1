"""torchferro: torch.compile rebuilt in Rust.

``torchferro.compile`` is a drop-in for ``torch.compile``: a PEP 523 frame hook written in Rust
interprets the decorated function's bytecode symbolically, captures its tensor ops in a graph
guarded by the conditions it relied on, and hands the graph to a backend.
"""

from __future__ import annotations

import functools
import sys

from . import _C, _logging, _trace, compiler, config
from ._C import RecompileError, Unsupported
from ._explain import ExplainOutput, explain
from ._logging import set_logs
from ._trace import set_trace_dir
from .backends import list_backends, lookup_backend
from .compiler import graph_break

__all__ = [
    "compile",
    "Unsupported",
    "RecompileError",
    "compiler",
    "config",
    "list_backends",
    "OptimizedModule",
    "explain",
    "ExplainOutput",
    "set_logs",
    "set_trace_dir",
    "graph_break",
]

_SUPPORTED = ((3, 11), (3, 12))


def _check_python() -> None:
    major, minor = sys.version_info[:2]
    if (major, minor) not in _SUPPORTED:
        raise RuntimeError(f"torchferro is not supported on Python {major}.{minor}")


def compile(
    model=None,
    *,
    fullgraph: bool = False,
    dynamic=None,
    backend="inductor",
    mode=None,
    options=None,
    disable: bool = False,
):
    """Compile a function or ``nn.Module``, with the arguments of ``torch.compile``.

    Works as ``@compile``, ``@compile(...)`` and ``compile(fn, ...)``.
    """
    if model is None:
        return functools.partial(
            compile,
            fullgraph=fullgraph,
            dynamic=dynamic,
            backend=backend,
            mode=mode,
            options=options,
            disable=disable,
        )
    _check_python()
    if mode is not None and options is not None:
        raise RuntimeError(
            "Either mode or options can be specified, but both can't be specified at the same time."
        )
    if disable:
        return model
    compiler_fn = lookup_backend(backend)
    import torch

    if isinstance(model, torch.nn.Module):
        return OptimizedModule(
            model, _C.CompiledFunction(model, compiler_fn, fullgraph)
        )
    if not callable(model):
        raise TypeError(
            f"torchferro.compile expects a callable or an nn.Module, got {type(model).__name__}"
        )
    compiled = _C.CompiledFunction(model, compiler_fn, fullgraph)
    return compiled


def _optimized_module_class():
    import torch

    class OptimizedModule(torch.nn.Module):
        """Wraps an ``nn.Module`` so that calling it runs the compiled forward, like
        ``torch._dynamo.OptimizedModule``. Attributes read through to the original module."""

        def __init__(self, mod, compiled):
            super().__init__()
            self._orig_mod = mod
            object.__setattr__(self, "_compiled_call", compiled)

        def __call__(self, *args, **kwargs):
            return self._compiled_call(*args, **kwargs)

        def forward(self, *args, **kwargs):
            return self._compiled_call(*args, **kwargs)

        def __getattr__(self, name):
            if name == "_orig_mod":
                return self._modules["_orig_mod"]
            return getattr(self._modules["_orig_mod"], name)

    return OptimizedModule


class _LazyOptimizedModule:
    _cls = None

    def __call__(self, *args, **kwargs):
        if _LazyOptimizedModule._cls is None:
            _LazyOptimizedModule._cls = _optimized_module_class()
        return _LazyOptimizedModule._cls(*args, **kwargs)

    def __instancecheck__(self, obj):
        return _LazyOptimizedModule._cls is not None and isinstance(
            obj, _LazyOptimizedModule._cls
        )


OptimizedModule = _LazyOptimizedModule()


# Observability switches from the environment: TORCHFERRO_LOGS and TORCHFERRO_TRACE_DIR.
_logging.init_from_env()
_trace.init_from_env()
