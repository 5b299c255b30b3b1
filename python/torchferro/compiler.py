"""``torchferro.compiler``: the counterpart of ``torch.compiler``."""

from __future__ import annotations

import functools

from . import _C
from .backends import list_backends

__all__ = ["reset", "disable", "is_compiling", "list_backends"]


def reset() -> None:
    """Forget every compiled entry and every decision to run code eagerly."""
    _C.reset()


def disable(fn=None, recursive: bool = True):
    """Run ``fn`` without compiling it or anything it calls."""
    if fn is None:
        return functools.partial(disable, recursive=recursive)

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
