"""Session 35 (hunt35) hunt: programs written as PyTorch users write them, from outside the
project, where torchferro differed from eager or made more graphs than torch.compile:

- functorch transforms run natively (``torch.vmap``, ``torch.func.grad``, ``jacrev``) call
  the user's function with the transform's wrapper tensors: the hook compiled that function on
  its own, and the inductor's kernel read a ``BatchedTensor`` as memory (a segmentation
  fault). A frame entered under an active transform runs as it is (``hook::decide_cached``);
- torch calls eager answers with their input itself (``torch.real``/``conj`` of a real
  tensor, ``atleast_2d`` of a matrix, ``flatten`` of one dimension, ``type_as`` of the same
  type, ``as_tensor``, ``+x``, ``dropout`` that drops nothing, ``broadcast_tensors``'
  unbroadcast operands): the trace made a new tensor, so ``r is x`` was False and, on the
  inductor, a write through ``r`` did not reach ``x`` (``calls::identity``)."""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from .runner import TC_DIFFERS, case, register

STRICT_BREADTH = True


def x34(r):
    return (r.randn(3, 4),)


def x4(r):
    return (r.randn(4),)


def _mod(name, cls, inputs, **options):
    register(f"hunt35_{name}", cls, inputs, module=True, **options)


# ---- functorch transforms run natively around the user's functions


@case(x34, child=True)
def hunt35_vmap_of_lambda(x):
    return torch.vmap(lambda r: r.sin() * 2 + r.sum())(x) + 1


VMAP_BREAKS = (
    "torch.vmap/torch.func transforms run natively (a graph break: the graphs before and after "
    "them are two); torch.compile traces the transform into its one graph"
)


@case(x34, child=True, breadth=VMAP_BREAKS)
def hunt35_vmap_in_dims_and_closure(x):
    w = x.cos()
    return torch.vmap(lambda r, s: r * s + w.mean(), in_dims=(0, None))(x, x[0])


@case(x34, child=True)
def hunt35_func_grad_of_loss(x):
    def loss(r):
        return (r.sin() * r).sum()

    return torch.func.grad(loss)(x) * 2


@case(x4, child=True)
def hunt35_jacrev_and_hessian(x):
    def f(r):
        return r.cos() * r.sum()

    return torch.func.jacrev(f)(x), torch.func.hessian(lambda r: (r**3).sum())(x)


@case(x34, child=True)
def hunt35_vmap_of_grad_per_sample(x):
    w = torch.linspace(-1, 1, 4)

    def loss(wt, row):
        return ((row * wt).sum() - 1.0) ** 2

    return torch.vmap(torch.func.grad(loss), in_dims=(None, 0))(w, x)


class PerSampleGrads(nn.Module):
    """Per-sample gradients the way the functorch tutorial writes them: ``functional_call``
    under ``vmap(grad(...))`` over the module's detached parameters."""

    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(4, 3), nn.Tanh(), nn.Linear(3, 2))

    def forward(self, x):
        params = {k: v.detach() for k, v in self.net.named_parameters()}

        def loss(p, row):
            out = torch.func.functional_call(self.net, p, (row.unsqueeze(0),))
            return out.pow(2).sum()

        grads = torch.vmap(torch.func.grad(loss), in_dims=(None, 0))(params, x)
        return grads["0.weight"], grads["2.bias"]


_mod("per_sample_grads_functional_call", PerSampleGrads, x34, child=True)


# ---- calls eager answers with their input itself


@case(x34)
def hunt35_real_and_conj_are_the_input(x):
    r = torch.real(x)
    c = torch.conj(x)
    return (
        r is x,
        c is x,
        x.conj() is x,
        torch.resolve_conj(x) is x,
        torch.conj_physical(x) is x,
        r + c,
    )


@case(x34)
def hunt35_write_through_real_reaches_input(x):
    x = x.clone()
    torch.real(x).mul_(2)
    x.conj().add_(1)
    return x


@case(x34)
def hunt35_shape_helpers_are_the_input(x):
    a = torch.atleast_1d(x)
    b = torch.atleast_2d(x)
    f = x.flatten(1, 1)
    v = x[0]
    return (
        a is x,
        b is x,
        torch.atleast_3d(x) is x,
        f is x,
        v.flatten() is v,
        x.flatten() is x,
        x.type_as(x) is x,
        x.sum_to_size(3, 4) is x,
        torch.as_tensor(x) is x,
        torch.as_tensor(x, dtype=torch.float64) is x,
        b * 2,
    )


@case(x34)
def hunt35_broadcast_operands(x):
    row = x[0].clone()
    a, b = torch.broadcast_tensors(x, row)
    p, q = torch.atleast_2d(x, row)
    return a is x, b is row, p is x, q is row, a + b


@case(
    x34, xfail_tc=TC_DIFFERS
)  # torch.compile: F.dropout(y, p, training=False) is not y
def hunt35_positive_and_dropout_no_op(x):
    y = x * 3
    return (
        +y is y,
        F.dropout(y, 0.5, training=False) is y,
        F.dropout(y, 0.0, training=True) is y,
        torch.dropout(y, 0.25, False) is y,
        y,
    )


class NoOpDropoutWrite(nn.Module):
    """An eval-mode dropout hands back its input: the in-place write after it is a write to the
    activation the residual branch reads."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.drop = nn.Dropout(0.3)

    def forward(self, x):
        h = self.fc(x)
        d = self.drop(h)
        d.relu_()
        return h + x, d is h


def _eval(m, seed):
    m.eval()


# torch.compile: `d is h` is False (the values match).
_mod(
    "eval_dropout_then_inplace",
    NoOpDropoutWrite,
    x34,
    prepare=_eval,
    xfail_tc=TC_DIFFERS,
)
