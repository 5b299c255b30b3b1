"""Autocast regions in captured graphs.

The tracer turns ``with torch.autocast("cpu" | "cuda", ...)`` into two graph nodes that switch the
autocast state, like TorchDynamo keeps the region in its graph. Inside the region, result metadata
comes from fake tensors on the op's device under the same autocast state: ``meta`` tensors ignore
autocast, so they would report float32 where eager computes bfloat16. Fake CUDA tensors need no
GPU, so a CUDA region's dtypes (torch's CUDA op lists, which differ from the CPU's) are torch's
own answer on any machine.
"""

from __future__ import annotations

import threading

import torch
from torch.utils import _pytree as pytree

_FAKE_MODE = None


def set_autocast(
    device_type: str, enabled: bool, dtype: torch.dtype, nesting: int = 0
) -> None:
    """The graph node at the start and end of an autocast region.

    ``nesting``: 1 where a ``with torch.autocast`` block is entered, -1 where it is left (0: a
    switch no ``with`` stands for). Eager autocast keeps the casts of leaf tensors that require
    grad (the parameters) in a cache until its outermost region is left; a region run here
    must drop that cache as eager's ``__exit__`` does, or the next call (after the optimizer
    updated the parameters in place) reads last call's casts: the stale values a compiled step
    on the eager runner once computed, and leaked into the user's next eager region."""
    torch.set_autocast_enabled(device_type, enabled)
    torch.set_autocast_dtype(device_type, dtype)
    if nesting > 0:
        torch.autocast_increment_nesting()
    elif nesting < 0 and torch.autocast_decrement_nesting() == 0:
        torch.clear_autocast_cache()


def state(device_type: str) -> tuple[bool, torch.dtype]:
    return torch.is_autocast_enabled(device_type), torch.get_autocast_dtype(device_type)


# The devices whose autocast regions the tracer keeps in graphs (`output.rs`'s `AMP_DEVICES`).
TRACED_DEVICES = ("cpu", "cuda")


def _nesting() -> int:
    """How many autocast regions are open (torch has no getter; the counter comes back as it
    was)."""
    depth = torch.autocast_increment_nesting() - 1
    torch.autocast_decrement_nesting()
    return depth


def save_states() -> tuple:
    """The traced devices' autocast states and the region depth, before a graph that switches
    them runs."""
    return tuple((d, *state(d)) for d in TRACED_DEVICES), _nesting()


def restore_states(saved) -> None:
    """Puts back ``save_states``'s states (an op raised inside a region of the graph): the
    regions the graph entered are left as eager's ``with`` blocks would leave them on the
    error, the cache dropped if they were the outermost."""
    states, depth = saved
    for _ in range(_nesting() - depth):
        set_autocast("cpu", *state("cpu"), nesting=-1)
    for d, enabled, dtype in states:
        set_autocast(d, enabled, dtype)


def _fake_mode():
    global _FAKE_MODE
    if _FAKE_MODE is None:
        from torch._subclasses.fake_tensor import FakeTensorMode

        _FAKE_MODE = FakeTensorMode(allow_non_fake_inputs=True)
    return _FAKE_MODE


class _States:
    """Sets each device's autocast state for the fake run and restores it after. The state is
    set directly rather than through ``torch.autocast``, whose constructor turns CUDA autocast
    off on a machine without a GPU: fake CUDA tensors follow the CUDA lists regardless."""

    def __init__(self, states):
        self.states = states

    def __enter__(self):
        self.saved = [(d, *state(d)) for d, _, _ in self.states]
        for d, enabled, dtype in self.states:
            torch.set_autocast_enabled(d, enabled)
            torch.set_autocast_dtype(d, dtype)
        torch.autocast_increment_nesting()

    def __exit__(self, *exc):
        # The casts cached in the run are of fake tensors: dropped as torch's outermost
        # region drops its cache.
        if torch.autocast_decrement_nesting() == 0:
            torch.clear_autocast_cache()
        for d, enabled, dtype in self.saved:
            torch.set_autocast_enabled(d, enabled)
            torch.set_autocast_dtype(d, dtype)


def infer(fn, method, args, kwargs, device, states):
    """Runs ``fn(*args, **kwargs)`` (or the method ``method`` of ``args[0]``) on fake tensors on
    ``device`` (the op's device) standing for the ``meta`` tensors in ``args``, under the autocast
    ``states`` (``(device_type, enabled, dtype)`` for each traced device), and returns the result
    as ``meta`` tensors."""
    mode = _fake_mode()

    def to_fake(t):
        if isinstance(t, torch.Tensor) and t.device.type == "meta":
            with mode:
                return _blank(t, device)
        return t

    args, kwargs = pytree.tree_map(to_fake, (tuple(args), dict(kwargs)))
    with mode, _States(states):
        if method is not None:
            out = getattr(args[0], method)(*args[1:], **kwargs)
        else:
            out = fn(*args, **kwargs)

    def to_meta(t):
        if isinstance(t, torch.Tensor):
            return _blank(t, "meta")
        return t

    return pytree.tree_map(to_meta, out)


def _blank(t, device):
    """An empty tensor on ``device`` with ``t``'s sizes, strides, dtype and ``requires_grad``,
    a non-leaf where ``t`` is one: an in-place op on an op's result (a residual block's
    ``out += identity`` under autocast) is recorded in eager, where on a leaf it raises. The
    non-leaf is a strided view of a clone over the storage the strides reach."""
    if not (t.requires_grad and not t.is_leaf):
        return torch.empty_strided(
            t.size(), t.stride(), dtype=t.dtype, device=device
        ).requires_grad_(t.requires_grad)
    reach = 1 + sum((n - 1) * s for n, s in zip(t.size(), t.stride()))
    with torch.enable_grad():
        base = torch.empty(
            0 if 0 in t.size() else reach,
            dtype=t.dtype,
            device=device,
            requires_grad=True,
        ).clone()
        return base.as_strided(t.size(), t.stride())


def describe() -> str:
    """The autocast state a cache entry was compiled under, for its guard and the logs."""
    parts = []
    for device in ("cpu", "cuda"):
        if torch.is_autocast_enabled(device):
            dtype = str(torch.get_autocast_dtype(device)).removeprefix("torch.")
            parts.append(f"{device} {dtype}")
    return ", ".join(parts) or "off"


# Inference-mode regions. ``torch.inference_mode(mode)`` is an RAII guard in C++ (it saves and
# restores grad mode, inference mode and the dispatch keys), so a region cannot be switched by
# a setter the way grad mode is: the graph's enter node pushes an entered guard on this
# thread's stack and its exit node pops the innermost one, as eager's nested ``with`` blocks do.
_INFERENCE = threading.local()


def _levels() -> list:
    levels = getattr(_INFERENCE, "levels", None)
    if levels is None:
        levels = _INFERENCE.levels = []
    return levels


def enter_inference_mode(mode: bool) -> None:
    """The graph node at the start of a ``torch.inference_mode(mode)`` region."""
    guard = torch._C._InferenceMode(mode)
    guard.__enter__()
    _levels().append(guard)


def exit_inference_mode() -> None:
    """The graph node at the end of a region: leaves the innermost level."""
    _levels().pop().__exit__(None, None, None)


def inference_depth() -> int:
    return len(_levels())


def unwind_inference(depth: int) -> None:
    """Leaves the levels a graph entered past ``depth`` (an op raised inside its region)."""
    levels = _levels()
    while len(levels) > depth:
        levels.pop().__exit__(None, None, None)


def reenter_inference(levels, grad: bool) -> None:
    """After a graph that broke inside inference-mode blocks (the graph left them): enters them
    again natively, each under the grad mode it was entered with, then sets the grad mode of
    the break, so the rest of the blocks runs as in eager."""
    for mode, grad_before in levels:
        torch._C._set_grad_enabled(grad_before)
        enter_inference_mode(mode)
    torch._C._set_grad_enabled(grad)


class InferenceExit:
    """The ``__exit__`` a block re-entered by ``reenter_inference`` hands to the resume function:
    it leaves the innermost level. ``prev_inference``/``prev_grad`` are the modes it restores,
    read by the tracer when it traces the block's end."""

    def __init__(self, prev_inference: bool, prev_grad: bool) -> None:
        self.prev_inference = prev_inference
        self.prev_grad = prev_grad

    def __exit__(self, *exc) -> None:
        exit_inference_mode()
