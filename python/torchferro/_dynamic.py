"""Marking tensor dimensions dynamic or static (dynamic shapes, issue 18).

The marks are the attributes ``torch._dynamo.mark_dynamic`` and friends set on the tensor
(``_dynamo_dynamic_indices``, ``_dynamo_dynamic_range``, ``_dynamo_weak_dynamic_indices``,
``_dynamo_static_indices``), so a tensor marked through torch's API is honoured by torchferro
and one marked here by torch.compile. The tracer reads them when it first sees the tensor.
"""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True)
class _DimRange:
    """A marked dimension's bounds (inclusive); ``max=None`` is unbounded."""

    dim: int
    min: int
    max: int | None


def _dims(index):
    return list(index) if isinstance(index, (list, tuple)) else [index]


def _marks(t, attr: str) -> set:
    if not hasattr(t, attr):
        setattr(t, attr, set())
    return getattr(t, attr)


def mark_dynamic(t, index, *, min=None, max=None) -> None:
    """Compile dimension(s) ``index`` of tensor ``t`` with a symbolic size from the first
    compile on (within ``[min, max]``; sizes 0 and 1 still specialize)."""
    if min is not None and max is not None and min > max:
        raise ValueError(f"mark_dynamic: min={min} is larger than max={max}")
    for d in _dims(index):
        if not isinstance(d, int):
            raise TypeError(f"mark_dynamic: a dimension must be an int, got {d!r}")
        _marks(t, "_dynamo_dynamic_indices").add(d)
        _marks(t, "_dynamo_dynamic_range").add(
            _DimRange(d, 2 if min is None else min, max)
        )


def maybe_mark_dynamic(t, index) -> None:
    """Like :func:`mark_dynamic`, as a hint: the dimension is symbolic where it can be."""
    for d in _dims(index):
        _marks(t, "_dynamo_weak_dynamic_indices").add(d)


def mark_static(t, index=None) -> None:
    """Keep dimension(s) ``index`` of ``t`` static (every dimension when ``index`` is None),
    whatever ``dynamic=`` and automatic dynamic would decide."""
    dims = range(t.dim()) if index is None else _dims(index)
    for d in dims:
        _marks(t, "_dynamo_static_indices").add(d)
