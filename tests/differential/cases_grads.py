"""Issue 14, training-loop idioms written out by hand: reading ``p.grad`` (a tensor input of its
own in torch.compile, guarded ``None`` / not ``None``), in-place updates of parameters under
``no_grad`` (manual SGD, weight decay, an EMA of a model's weights, gradient clipping), and
``p.grad = None`` / ``p.grad.zero_()`` / ``p.grad = p.grad * c`` replayed after the graph. Each
module owns its parameters, so the harness compares parameters (and their ``.grad``) after each
call: the second call must see the first call's update."""

from __future__ import annotations

import torch
from torch import nn

from .runner import case, register

# Issue 14: more graphs than torch.compile fails unless the case names the gap (breadth=).
STRICT_BREADTH = True


def xy(r):
    return (r.randn(6, 8), r.randn(6, 1))


class _Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(8, 4), nn.Tanh(), nn.Linear(4, 1))

    def loss(self, x, y):
        return ((self.net(x) - y) ** 2).mean()


class ManualSgd(_Net):
    def forward(self, x, y):
        loss = self.loss(x, y)
        loss.backward()
        with torch.no_grad():
            for p in self.net.parameters():
                p.sub_(0.1 * p.grad)
                p.grad = None
        return loss.detach()


class ManualSgdZeroGrad(_Net):
    """Gradients kept between calls and zeroed in place (``zero_grad(set_to_none=False)``):
    the first call finds them ``None``, the second as tensors (a guard on each)."""

    def forward(self, x, y):
        for p in self.parameters():
            if p.grad is not None:
                p.grad.zero_()
        loss = self.loss(x, y)
        loss.backward()
        with torch.no_grad():
            for p in self.parameters():
                p.add_(p.grad, alpha=-0.05)
        return loss.detach()


class WeightDecay(_Net):
    def forward(self, x, y):
        loss = self.loss(x, y)
        loss.backward()
        with torch.no_grad():
            for name, p in self.named_parameters():
                if name.endswith("bias"):
                    p.sub_(0.1 * p.grad)
                else:
                    p.mul_(1 - 0.01).sub_(0.1 * p.grad)
                p.grad = None
        return loss.detach()


class ClipByNorm(_Net):
    """Gradient clipping written out: a global norm over a generator expression, the
    gradients rescaled in place."""

    def forward(self, x, y):
        loss = self.loss(x, y) * 10
        loss.backward()
        grads = [p.grad for p in self.parameters()]
        total = torch.sqrt(sum((g * g).sum() for g in grads))
        scale = torch.clamp(0.5 / (total + 1e-6), max=1.0)
        with torch.no_grad():
            for p in self.parameters():
                p.grad.mul_(scale)
                p.sub_(0.1 * p.grad)
                p.grad = None
        return loss.detach(), total.detach()


class ClipGradNorm(_Net):
    def forward(self, x, y):
        loss = self.loss(x, y) * 10
        loss.backward()
        norm = torch.nn.utils.clip_grad_norm_(self.parameters(), 0.5)
        with torch.no_grad():
            for p in self.parameters():
                p.sub_(0.1 * p.grad)
                p.grad = None
        return loss.detach(), norm


class GradScaledByAssignment(_Net):
    def forward(self, x, y):
        loss = self.loss(x, y)
        loss.backward()
        for p in self.parameters():
            p.grad = p.grad * 0.5
        out = [p.grad.sum() for p in self.parameters()]
        for p in self.parameters():
            p.grad = None
        return loss.detach(), out


class Ema(nn.Module):
    """An exponential moving average of a model's weights, updated in the compiled forward."""

    def __init__(self):
        super().__init__()
        self.model = nn.Sequential(nn.Linear(8, 4), nn.ReLU(), nn.Linear(4, 1))
        self.ema = nn.Sequential(nn.Linear(8, 4), nn.ReLU(), nn.Linear(4, 1))
        self.ema.requires_grad_(False)

    def forward(self, x, y):
        out = self.model(x)
        with torch.no_grad():
            for e, p in zip(self.ema.parameters(), self.model.parameters()):
                e.mul_(0.9).add_(p, alpha=0.1)
        return out, self.ema(x)


class ForeachUpdate(_Net):
    def forward(self, x, y):
        loss = self.loss(x, y)
        loss.backward()
        params = list(self.parameters())
        grads = [p.grad for p in params]
        with torch.no_grad():
            torch._foreach_add_(params, grads, alpha=-0.1)
        for p in params:
            p.grad = None
        return loss.detach()


class GradOfInput(nn.Module):
    """``.grad`` of a module parameter read twice: after backward and after clearing it."""

    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.ones(8, 1))

    def forward(self, x, y):
        before = self.w.grad is None
        loss = ((x @ self.w - y) ** 2).mean()
        loss.backward()
        g = self.w.grad.clone()
        self.w.grad = None
        return loss.detach(), g, before, self.w.grad is None


for _cls in (
    ManualSgd,
    ManualSgdZeroGrad,
    WeightDecay,
    ClipByNorm,
    ClipGradNorm,
    GradScaledByAssignment,
    Ema,
    ForeachUpdate,
    GradOfInput,
):
    register(f"grads_{_cls.__name__}", _cls, xy, module=True)


def xg(r):
    return (r.randn(3, 4, requires_grad=True),)


@case(xg)
def grad_of_an_argument_after_backward(x):
    (x * x).sum().backward()
    g = x.grad * 2
    x.grad = None
    return g


@case(xg)
def grad_of_an_argument_is_none(x):
    return x.grad is None, x * 2
