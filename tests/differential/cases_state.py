"""Issue 13 items 8 (state read but not guarded, mode state) and 9 (torchvision's
VisionTransformer): a monkeypatched torch function, the default dtype, a tensor subclass with
``__torch_function__``, modes after a run-time error, inference_mode then no_grad."""

from __future__ import annotations

import contextlib

import torch
from torch import nn

from .runner import TC_DIFFERS, case, register


def x34(r):
    return (r.randn(3, 4),)


@contextlib.contextmanager
def _patched_sigmoid(seed):
    original = torch.sigmoid
    if seed == 1:
        torch.sigmoid = lambda t: t * 0 - 1
    try:
        yield
    finally:
        torch.sigmoid = original


@case(x34, around=_patched_sigmoid)
def monkeypatched_torch_function(x):
    return torch.sigmoid(x) + 1


@contextlib.contextmanager
def _default_dtype(seed):
    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64 if seed == 1 else torch.float32)
    try:
        yield
    finally:
        torch.set_default_dtype(previous)


@case(x34, around=_default_dtype)
def default_dtype_between_calls(x):
    return torch.ones(3, 4) + x, torch.tensor([1.5])


@case(x34)
def set_default_dtype_inside(x):
    torch.set_default_dtype(torch.float64)
    y = torch.zeros(3, 4) + x.double()
    torch.set_default_dtype(torch.float32)
    return y, torch.zeros(2)


class Tagged(torch.Tensor):
    """A subclass whose ``__torch_function__`` keeps its type and turns ``sin`` into ``cos``."""

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        if func is torch.sin or func is torch.Tensor.sin:
            func = torch.cos
        return super().__torch_function__(func, types, args, kwargs or {})


@case(lambda r: (r.randn(3, 4).as_subclass(Tagged),))
def tensor_subclass_torch_function(x):
    return torch.sin(x) * 2 + 1


# ---------------------------------------------------------------------------------------------
# Modes after a run-time error (the harness compares grad/inference/autocast modes after the
# call): the error is an out-of-range index on input set 1.


def bad_index(r):
    return (r.randn(4, 3), torch.tensor(r.pick([0, 1], [0, 9])))


@case(bad_index, raises=True, xfail_tc=TC_DIFFERS)
def error_inside_no_grad(x, idx):
    with torch.no_grad():
        y = torch.index_select(x * 2, 0, idx)
    return y + 1


@contextlib.contextmanager
def _no_grad(seed):
    with torch.no_grad():
        yield


@case(bad_index, raises=True, around=_no_grad)
def error_inside_enable_grad(x, idx):
    with torch.enable_grad():
        y = torch.index_select(x * 2, 0, idx)
    return y + 1


@case(bad_index, raises=True, xfail_tc=TC_DIFFERS)
def error_inside_autocast(x, idx):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        y = torch.index_select(x @ x.t(), 0, idx)
    return y + 1


class ConvLinear(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.fc = nn.Linear(4 * 8 * 8, 5)

    def forward(self, x):
        return self.fc(torch.relu(self.conv(x)).flatten(1))


@contextlib.contextmanager
def _inference_then_no_grad(seed):
    with torch.inference_mode() if seed == 0 else torch.no_grad():
        yield


register(
    "inference_mode_then_no_grad",
    lambda: ConvLinear().eval(),
    lambda r: (r.randn(2, 3, 8, 8),),
    module=True,
    around=_inference_then_no_grad,
)


def _vit():
    from torchvision.models import VisionTransformer

    return VisionTransformer(
        image_size=32,
        patch_size=8,
        num_layers=2,
        num_heads=2,
        hidden_dim=32,
        mlp_dim=64,
        num_classes=10,
    ).eval()


try:
    import torchvision  # noqa: F401

    register(
        "torchvision_vit_small",
        _vit,
        lambda r: (r.randn(2, 3, 32, 32),),
        module=True,
    )
except ImportError:  # torchvision is optional: the case is left out
    pass
