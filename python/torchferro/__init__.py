"""torchferro: torch.compile rebuilt in Rust.

``torchferro.compile`` is a drop-in for ``torch.compile``: a PEP 523 frame hook written in Rust
interprets the decorated function's bytecode symbolically, captures its tensor ops in a graph
guarded by the conditions it relied on, and hands the graph to a backend.
"""

from __future__ import annotations

import functools
import sys
import warnings

from . import _C, _logging, _trace, compiler, config
from ._C import RecompileError, Unsupported
from ._explain import ExplainOutput, explain
from ._logging import set_logs
from ._trace import set_trace_dir
from ._dynamic import mark_dynamic, mark_static, maybe_mark_dynamic
from .backends import list_backends, lookup_backend
from .compiler import (
    allow_in_graph,
    assume_constant_result,
    graph_break,
    substitute_in_graph,
)

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
    "allow_in_graph",
    "substitute_in_graph",
    "assume_constant_result",
    "mark_dynamic",
    "maybe_mark_dynamic",
    "mark_static",
]

_SUPPORTED = ((3, 11), (3, 12))


def _check_python() -> None:
    major, minor = sys.version_info[:2]
    if (major, minor) not in _SUPPORTED:
        raise RuntimeError(f"torchferro is not supported on Python {major}.{minor}")


# torch.compile's modes (``torch._inductor.list_mode_options``), in the order its error lists them.
_MODES = (
    "default",
    "lite",
    "reduce-overhead",
    "max-autotune-no-cudagraphs",
    "max-autotune",
)
_warned: set = set()


def _warn_once(key, message: str) -> None:
    """Each ignored setting is reported once per process (as torch's own warnings are)."""
    if key in _warned:
        return
    _warned.add(key)
    warnings.warn(message, UserWarning, stacklevel=4)


def _backend_name(backend) -> str:
    return (
        backend
        if isinstance(backend, str)
        else getattr(backend, "__name__", repr(backend))
    )


def _check_settings(backend, mode, options, dynamic) -> None:
    """Reject what torch.compile rejects, with its exception types, and warn once about each
    known setting torchferro does not implement yet: nothing is ignored silently."""
    if mode is not None and options is not None:
        raise RuntimeError(
            "Either mode or options can be specified, but both can't be specified at the same time."
        )
    if dynamic is not None and not isinstance(dynamic, bool):
        # torch.compile asserts `isinstance(dynamic, bool)`.
        raise AssertionError(f"dynamic must be None, True or False, got {dynamic!r}")
    if backend != "inductor":
        # As torch.compile, a backend other than inductor takes no mode or options (torch logs
        # that it ignores them; so do we, once, as a warning).
        if mode is not None or options is not None:
            what = f"mode={mode!r}" if mode is not None else f"options={options!r}"
            _warn_once(
                ("backend-ignores", _backend_name(backend), what),
                f"torchferro: backend {_backend_name(backend)!r} ignores {what}",
            )
        return
    if mode is not None:
        if mode not in _MODES:
            raise RuntimeError(
                f"Unrecognized mode={mode}, should be one of: {', '.join(_MODES)}"
            )
        if mode != "default":
            _warn_once(
                ("mode", mode),
                f"torchferro ignores mode={mode!r}: its inductor has no autotuning, CUDA graphs "
                "or lite mode yet, and compiles as mode='default' does",
            )
    if options is not None:
        known = _inductor_option_names()
        ignored = []
        for key, _value in options.items():
            if key not in known:
                raise RuntimeError(
                    f"Unexpected optimization option {key}, known options are {list(known)}"
                )
            ignored.append(key)
        if ignored:
            _warn_once(
                ("options", tuple(sorted(ignored))),
                f"torchferro ignores the inductor option(s) {', '.join(sorted(ignored))}: "
                "its inductor does not read torch's inductor config",
            )


def _inductor_option_names() -> dict:
    """The option names torch.compile's ``options=`` accepts (torch's inductor config keys)."""
    from torch._inductor import config as inductor_config

    return inductor_config.get_config_copy()


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

    Works as ``@compile``, ``@compile(...)`` and ``compile(fn, ...)``. Unknown ``mode``,
    ``options`` keys, ``dynamic`` values and backend names raise as torch.compile raises; known
    settings torchferro does not implement yet are named in a warning (once each).
    Compiling a class compiles calls of its instances (its ``__call__``), as torch.compile does.
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
    _check_settings(backend, mode, options, dynamic)
    compiler_fn = lookup_backend(backend)
    if disable:
        return model
    if getattr(model, "_torchdynamo_disable", False) or getattr(
        model, "_torchferro_disabled", False
    ):
        # A function disabled with torch.compiler.disable (or ours) stays disabled, as under
        # torch.compile: it runs eagerly, with nothing it calls compiled.
        return compiler.disable(
            model, recursive=getattr(model, "_torchdynamo_disable_recursive", True)
        )
    import torch

    settings = {
        "fullgraph": fullgraph,
        "dynamic": dynamic,
        "backend": backend,
        "mode": mode,
        "options": options,
    }
    if isinstance(model, torch.nn.Module):
        return OptimizedModule(
            model, _C.CompiledFunction(model, compiler_fn, fullgraph, dynamic), settings
        )
    if isinstance(model, type):
        # torch.compile(cls) compiles the class's `__call__` in place and returns the class:
        # constructing instances runs eagerly, calling them is compiled.
        call = next(
            (c.__dict__["__call__"] for c in model.__mro__ if "__call__" in c.__dict__),
            None,
        )
        if call is None:
            raise TypeError(
                f"torchferro.compile({model.__name__}): instances of {model.__name__} are not "
                "callable, so there is nothing to compile"
            )
        model.__call__ = _C.CompiledFunction(call, compiler_fn, fullgraph, dynamic)
        return model
    if not callable(model):
        raise TypeError(
            f"torchferro.compile expects a callable or an nn.Module, got {type(model).__name__}"
        )
    compiled = _C.CompiledFunction(model, compiler_fn, fullgraph, dynamic)
    return compiled


def _rebuild_optimized_module(mod, settings):
    """Unpickling and ``copy.deepcopy`` of a compiled module compile the (copied) module again
    with the same settings, as torch's ``OptimizedModule.__reduce__`` does."""
    return compile(mod, **settings)


def _optimized_module_class():
    import torch
    from torch.nn.modules import module as nn_module

    def has_global_hooks():
        return bool(
            nn_module._global_forward_hooks
            or nn_module._global_forward_pre_hooks
            or nn_module._global_backward_hooks
            or nn_module._global_backward_pre_hooks
            or nn_module._global_forward_hooks_always_called
        )

    class OptimizedModule(torch.nn.Module):
        """Wraps an ``nn.Module`` so that calling it runs the compiled forward, like
        ``torch._dynamo.OptimizedModule``: the original module is its ``_orig_mod`` submodule
        (so ``state_dict`` keys start with ``_orig_mod.``), attributes read through to it,
        ``training`` is the original's, hooks registered on the wrapper run, and ``pickle``,
        ``torch.save`` and ``copy.deepcopy`` rebuild it from the original module and the compile
        settings."""

        def __init__(self, mod, compiled, settings=None):
            object.__setattr__(self, "_super_module_initialized", False)
            super().__init__()
            object.__setattr__(self, "_super_module_initialized", True)
            self._orig_mod = mod
            object.__setattr__(self, "_compiled_call", compiled)
            object.__setattr__(self, "_compile_settings", dict(settings or {}))

        @property
        def training(self):
            return self._modules["_orig_mod"].training

        @training.setter
        def training(self, value):
            # `Module.__init__` sets the default before `_orig_mod` exists: ignore that one.
            if self.__dict__.get("_super_module_initialized"):
                self._modules["_orig_mod"].training = value

        def __call__(self, *args, **kwargs):
            # The fast path skips `Module.__call__` while no hook could run; with hooks on the
            # wrapper (or global module hooks), `Module.__call__` runs them around `forward`.
            if (
                self._forward_hooks
                or self._forward_pre_hooks
                or self._backward_hooks
                or self._backward_pre_hooks
                or has_global_hooks()
            ):
                return super().__call__(*args, **kwargs)
            return self._compiled_call(*args, **kwargs)

        def forward(self, *args, **kwargs):
            return self._compiled_call(*args, **kwargs)

        def __getattr__(self, name):
            if name == "_orig_mod":
                return self._modules["_orig_mod"]
            return getattr(self._modules["_orig_mod"], name)

        def __reduce__(self):
            return (
                _rebuild_optimized_module,
                (self._modules["_orig_mod"], self._compile_settings),
            )

        def __len__(self):
            return len(self._modules["_orig_mod"])

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
