"""Graph-node callables for ``torch.autograd.Function`` subclasses called in traced code.

The tracer puts ``MyFunction.apply(*args)`` in the graph as one node. Its target is a plain
function made here per class rather than the bound ``apply`` itself: torch.fx writes a callable
whose ``__module__`` is in torch as an import path (``torch.autograd.function.apply``), which
does not resolve for a bound classmethod; a function of this module is held as a global of the
generated code instead."""

from __future__ import annotations

import weakref

_APPLIES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def apply_of(cls):
    """The graph node's callable for ``cls.apply`` (one per class)."""
    fn = _APPLIES.get(cls)
    if fn is None:

        def fn(*args):
            return cls.apply(*args)

        fn.__name__ = fn.__qualname__ = f"apply_{cls.__name__}"
        _APPLIES[cls] = fn
    return fn
