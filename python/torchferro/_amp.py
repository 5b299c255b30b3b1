"""Autocast regions in captured graphs.

The tracer turns ``with torch.autocast("cpu", ...)`` into two graph nodes that switch the autocast
state, like TorchDynamo keeps the region in its graph. Inside the region, result metadata comes
from fake CPU tensors under the same autocast state: ``meta`` tensors ignore CPU autocast, so
they would report float32 where eager computes bfloat16.
"""

from __future__ import annotations

import torch
from torch.utils import _pytree as pytree

_FAKE_MODE = None


def set_autocast(device_type: str, enabled: bool, dtype: torch.dtype) -> None:
    """The graph node at the start and end of an autocast region."""
    torch.set_autocast_enabled(device_type, enabled)
    torch.set_autocast_dtype(device_type, dtype)


def state(device_type: str) -> tuple[bool, torch.dtype]:
    return torch.is_autocast_enabled(device_type), torch.get_autocast_dtype(device_type)


def _fake_mode():
    global _FAKE_MODE
    if _FAKE_MODE is None:
        from torch._subclasses.fake_tensor import FakeTensorMode

        _FAKE_MODE = FakeTensorMode(allow_non_fake_inputs=True)
    return _FAKE_MODE


def infer(fn, method, args, kwargs, device_type, enabled, dtype):
    """Runs ``fn(*args, **kwargs)`` (or the method ``method`` of ``args[0]``) on fake CPU tensors
    standing for the ``meta`` tensors in ``args``, under the given autocast state, and returns
    the result as ``meta`` tensors."""
    mode = _fake_mode()

    def to_fake(t):
        if isinstance(t, torch.Tensor) and t.device.type == "meta":
            with mode:
                return torch.empty_strided(
                    t.size(), t.stride(), dtype=t.dtype, device=device_type
                ).requires_grad_(t.requires_grad)
        return t

    args, kwargs = pytree.tree_map(to_fake, (tuple(args), dict(kwargs)))
    with mode, torch.autocast(device_type, dtype=dtype, enabled=enabled):
        if method is not None:
            out = getattr(args[0], method)(*args[1:], **kwargs)
        else:
            out = fn(*args, **kwargs)

    def to_meta(t):
        if isinstance(t, torch.Tensor):
            return torch.empty_strided(
                t.size(), t.stride(), dtype=t.dtype, device="meta"
            ).requires_grad_(t.requires_grad)
        return t

    return pytree.tree_map(to_meta, out)


def describe() -> str:
    """The autocast state a cache entry was compiled under, for its guard and the logs."""
    parts = []
    for device in ("cpu", "cuda"):
        if torch.is_autocast_enabled(device):
            dtype = str(torch.get_autocast_dtype(device)).removeprefix("torch.")
            parts.append(f"{device} {dtype}")
    return ", ".join(parts) or "off"
