"""Issue 13 items 1 and 6: compiled training steps (SGD, SGD with momentum, Adam, AdamW, a small
conv net) called twice on the same module and optimizer, and ``.data`` (and other) writes of a
conv weight between two calls of a compiled model."""

from __future__ import annotations

import contextlib
import functools

import torch
from torch import nn

from .runner import register


class TrainStep(nn.Module):
    """zero_grad, forward, backward, step: the whole step is the compiled forward. The optimizer
    is a private attribute (its state shows through the parameters after each call)."""

    def __init__(self, net, make_opt):
        super().__init__()
        self.net = net
        self._opt = make_opt(net.parameters())

    def forward(self, x, y):
        self._opt.zero_grad()
        loss = ((self.net(x) - y) ** 2).mean()
        loss.backward()
        self._opt.step()
        return loss.detach(), self.net.weight.grad.clone() if hasattr(
            self.net, "weight"
        ) else None


def linear_xy(r):
    return (r.randn(8, 4), r.randn(8, 1))


OPTIMIZERS = {
    "sgd": lambda ps: torch.optim.SGD(ps, lr=0.1),
    "sgd_momentum": lambda ps: torch.optim.SGD(ps, lr=0.1, momentum=0.9),
    "adam": lambda ps: torch.optim.Adam(ps, lr=0.01),
    "adamw": lambda ps: torch.optim.AdamW(ps, lr=0.01, weight_decay=0.1),
}


def _linear_step(make_opt):
    return TrainStep(nn.Linear(4, 1), make_opt)


for _name, _make in OPTIMIZERS.items():
    register(
        f"train_step_linear_{_name}",
        functools.partial(_linear_step, _make),
        linear_xy,
        module=True,
    )


class ConvNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3)
        self.fc = nn.Linear(4 * 6 * 6, 1)

    def forward(self, x):
        return self.fc(torch.relu(self.conv(x)).flatten(1))


register(
    "train_step_convnet_sgd_momentum",
    lambda: TrainStep(ConvNet(), OPTIMIZERS["sgd_momentum"]),
    lambda r: (r.randn(2, 3, 8, 8), r.randn(2, 1)),
    module=True,
)


# ---------------------------------------------------------------------------------------------
# A weight changed between calls, every way a tensor can change


class ConvEval(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)

    def forward(self, x):
        return torch.relu(self.conv(x)) + 1


def conv_in(r):
    return (r.randn(2, 3, 8, 8),)


@contextlib.contextmanager
def _no_grad(seed):
    with torch.no_grad():
        yield


def _data_mul(m, seed):
    if seed == 1:
        m.conv.weight.data.mul_(0.5)


def _data_row_zero(m, seed):
    if seed == 1:
        m.conv.weight.data[0].zero_()


def _set(m, seed):
    if seed == 1:
        with torch.no_grad():
            m.conv.weight.set_(torch.ones_like(m.conv.weight))


def _load_state_dict(m, seed):
    if seed == 1:
        sd = {k: v * -1 for k, v in m.state_dict().items()}
        m.load_state_dict(sd)


def _copy_no_grad(m, seed):
    if seed == 1:
        with torch.no_grad():
            m.conv.weight.copy_(torch.full_like(m.conv.weight, 0.25))


def _data_assign(m, seed):
    if seed == 1:
        m.conv.weight.data = torch.full_like(m.conv.weight, -0.5)


for _name, _prep in {
    "data_mul_": _data_mul,
    "data_row_zero_": _data_row_zero,
    "set_": _set,
    "load_state_dict": _load_state_dict,
    "copy_no_grad": _copy_no_grad,
    "data_assign": _data_assign,
}.items():
    # Under grad mode the weights are graph inputs; under no_grad the inductor may cache a
    # derivative (a channels-last copy) of them, which every write must invalidate.
    register(
        f"conv_weight_{_name}_between_calls",
        ConvEval,
        conv_in,
        module=True,
        prepare=_prep,
    )
    register(
        f"conv_weight_{_name}_between_calls_no_grad",
        ConvEval,
        conv_in,
        module=True,
        prepare=_prep,
        around=_no_grad,
    )
