"""Marking tensor dimensions dynamic or static (dynamic shapes, issue 18).

These are torch's own marks: each function calls its ``torch._dynamo`` twin, which sets
attributes on the tensor (``_dynamo_dynamic_indices`` and ``_dynamo_dynamic_range`` for
``mark_dynamic``, ``_dynamo_weak_dynamic_indices``, ``_dynamo_static_indices``). The tracer reads
those attributes when it first sees the tensor, so a tensor marked through either API is
honoured by torchferro and by torch.compile alike.
"""

from __future__ import annotations


def mark_dynamic(t, index, *, min=None, max=None) -> None:
    """Compile dimension(s) ``index`` of tensor ``t`` with a symbolic size from the first
    compile on (within ``[min, max]``; sizes 0 and 1 still specialize). Honoured under
    ``dynamic=False`` too, as by torch.compile."""
    import torch._dynamo

    torch._dynamo.mark_dynamic(t, index, min=min, max=max)


def maybe_mark_dynamic(t, index) -> None:
    """Like :func:`mark_dynamic`, as a hint: the dimension is symbolic where it can be."""
    import torch._dynamo

    torch._dynamo.maybe_mark_dynamic(t, index)


def mark_static(t, index=None) -> None:
    """Keep dimension(s) ``index`` of ``t`` static (every dimension when ``index`` is None),
    whatever ``dynamic=`` and automatic dynamic would decide."""
    import torch._dynamo

    torch._dynamo.mark_static(t, index)
