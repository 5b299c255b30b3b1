"""``torchferro.compiler``: the counterpart of ``torch.compiler``."""

from __future__ import annotations

import functools

from .. import _C
from ..backends import list_backends

__all__ = [
    "allow_in_graph",
    "assume_constant_result",
    "substitute_in_graph",
    "graph_break",
    "reset",
    "disable",
    "is_compiling",
    "list_backends",
    "set_stance",
    "cache_entries",
    "precompile",
]


class set_stance:
    """Set how compiled functions behave: ``"default"``, ``"force_eager"`` (run everything
    eagerly), ``"eager_on_recompile"`` (use compiled entries, never recompile) or
    ``"fail_on_recompile"`` (raise ``torchferro.RecompileError`` instead of recompiling).

    Works as a call, and as a context manager or decorator that restores the previous stance."""

    def __init__(self, stance: str = "default"):
        self._previous = _C.set_stance(stance)
        self._stance = stance

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        _C.set_stance(self._previous)
        return False

    def __call__(self, fn):
        stance = self._stance
        _C.set_stance(self._previous)

        @functools.wraps(fn)
        def _with_stance(*args, **kwargs):
            previous = _C.set_stance(stance)
            try:
                return fn(*args, **kwargs)
            finally:
                _C.set_stance(previous)

        return _with_stance


def cache_entries(fn) -> list[dict]:
    """The compiled entries of ``fn`` (most recently used first), each a dict with its
    ``compile_id``, ``guards`` (one line each) and ``graph`` (readable code)."""
    code = getattr(getattr(fn, "__wrapped__", fn), "__code__", None)
    if code is None:
        forward = getattr(type(getattr(fn, "_orig_mod", fn)), "forward", None)
        code = getattr(forward, "__code__", None)
    if code is None:
        raise TypeError(
            f"cache_entries expects a Python function or module, got {type(fn).__name__}"
        )
    return _C.cache_entries(code)[1]


def reset() -> None:
    """Forget every compiled entry and every decision to run code eagerly."""
    _C.reset()


def disable(fn=None, recursive: bool = True):
    """Run ``fn`` without compiling it or anything it calls.

    ``recursive=False`` (torch: skip ``fn``'s own frame but compile what it calls) is not
    implemented: it warns once and disables ``fn`` and its callees, which runs them eagerly."""
    if fn is None:
        return functools.partial(disable, recursive=recursive)
    if not recursive:
        from .. import _warn_once

        _warn_once(
            ("disable-recursive", False),
            "torchferro.compiler.disable(recursive=False) is not implemented: what the "
            "function calls runs eagerly too, as with recursive=True",
        )

    @functools.wraps(fn)
    def _disabled(*args, **kwargs):
        return _C.call_disabled(fn, *args, **kwargs)

    _disabled._torchferro_disabled = True
    return _disabled


def is_compiling() -> bool:
    """True while torchferro traces the calling code; False when it runs (eagerly or compiled).

    The tracer folds calls to this function to ``True``; at run time it returns ``False``.
    """
    return False


def graph_break() -> None:
    """Ends the current graph here: what comes before and after runs as separate graphs.

    A no-op when run; the tracer stops at calls to it as at any unsupported call."""


graph_break._torchferro_graph_break = True


# The registering decorators share torch's registries (the tracer reads those), so a function
# marked once is honoured by torchferro and torch.compile alike, whichever spelling marked it.


def allow_in_graph(fn):
    """Put calls to ``fn`` in the graph as one call instead of tracing its body (as
    ``torch.compiler.allow_in_graph``): its body may be any Python over tensors, and runs on
    meta tensors once while tracing to learn its result's shape. Returns ``fn``."""
    import torch._dynamo

    return torch._dynamo.allow_in_graph(fn)


def substitute_in_graph(
    original_fn, *, can_constant_fold_through=False, skip_signature_check=False
):
    """Decorator: trace the decorated function in place of ``original_fn`` wherever compiled
    code calls it (as ``torch.compiler.substitute_in_graph``); eager calls still run the
    original."""
    import torch.compiler

    return torch.compiler.substitute_in_graph(
        original_fn,
        can_constant_fold_through=can_constant_fold_through,
        skip_signature_check=skip_signature_check,
    )


def assume_constant_result(fn):
    """Call ``fn`` once while tracing and take its result as a constant of the graph, unguarded
    (as ``torch.compiler.assume_constant_result``): the caller promises it does not change."""
    fn._dynamo_marked_constant = True
    return fn


from . import precompile  # the submodule needs the names above, so it comes last
