"""Session 32 (train32): separate ``.backward()`` calls through the outputs of one compiled
training graph.

Eager keeps a node per op and a ``.backward()`` frees only the nodes it ran through; a compiled
training graph is one ``autograd.Function``. Two ways that differed, both raising "Trying to
backward through the graph a second time" where eager trains:

- outputs whose backward paths share no op (a GAN step: ``fake = G(z)`` beside the
  discriminator's loss on ``fake.detach()``): the first backward freed everything the Function
  saved. The runtime now knows the outputs' components (``fx::autodiff::components``) and lets
  each run once, as eager's nodes do (``retain_graph=True``: again);
- a tensor that requires grad passed into a later graph and read there through ``detach()``,
  under ``no_grad``, or only handed back (the loss of an earlier ``l.backward()`` across a graph
  break): it was an input of the later Function, so the engine ran its node with no gradient,
  which freed what that node saved. Such inputs now enter the Function detached.

The generator draws which outputs a compiled function returns (sharing ops, sharing only a
parameter, a product of two), whether a graph break splits them, and a sequence of backward
calls with and without ``retain_graph``; it checks that we raise exactly where eager raises
and give eager's gradients otherwise."""

from __future__ import annotations

import warnings

import pytest
import torch
import torch.nn.functional as F
import torchferro
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

warnings.filterwarnings("ignore", category=UserWarning)

#: Outputs of one compiled function, from the leaves `w1`, `w2` and the data `x`: two that
#: share no op, one sharing ops with both, one sharing only the parameter `w1` with the first,
#: one read through `detach()`.
OUTPUTS = {
    "tanh(w1 x)": lambda w1, w2, x, h: h["a"].tanh().sum(),
    "sin(w2 x)": lambda w1, w2, x, h: h["b"].sin().sum(),
    "a * b": lambda w1, w2, x, h: (h["a"] * h["b"]).sum(),
    "exp(3 w1)": lambda w1, w2, x, h: (w1 * 3).exp().sum(),
    "a.detach() * w2": lambda w1, w2, x, h: (h["a"].detach() * w2).square().sum(),
}


def _outcome(names, brk, calls, backend):
    torch.manual_seed(0)
    w1 = torch.randn(3, requires_grad=True)
    w2 = torch.randn(3, requires_grad=True)
    x = torch.randn(3)

    def f(w1, w2, x):
        h = {"a": w1 * x, "b": w2 * x}
        outs = []
        for k, n in enumerate(names):
            if brk and k == 1:
                torch._dynamo.graph_break()
            outs.append(OUTPUTS[n](w1, w2, x, h))
        return outs

    g = f
    if backend is not None:
        torchferro.compiler.reset()
        g = torchferro.compile(f, backend=backend)
    outs = g(w1, w2, x)
    log = []
    for which, retain in calls:
        try:
            outs[which % len(outs)].backward(retain_graph=retain)
        except RuntimeError as e:
            assert "backward through the graph a second time" in str(e), e
            log.append("raised")
            continue
        log.append([None if w.grad is None else w.grad.clone() for w in (w1, w2)])
    return log


def _check(names, brk, calls, backend):
    want = _outcome(names, brk, calls, None)
    got = _outcome(names, brk, calls, backend)
    assert len(got) == len(want)
    for a, b in zip(got, want, strict=True):
        assert (a == "raised") == (b == "raised"), (names, brk, calls, want)
        if a != "raised":
            for ga, gb in zip(a, b, strict=True):
                assert (ga is None) == (gb is None), (names, brk, calls)
                if ga is not None:
                    torch.testing.assert_close(ga, gb)


@pytest.mark.parametrize("backend", ["inductor", "aot_eager"])
@pytest.mark.parametrize(
    "names,brk,calls",
    [
        # Eager trains, we raised: two outputs sharing no op, one backward each.
        (("tanh(w1 x)", "sin(w2 x)"), False, ((1, False), (0, False))),
        (("tanh(w1 x)", "exp(3 w1)"), False, ((0, False), (1, False))),
        # ... and the first again: eager raises.
        (("tanh(w1 x)", "sin(w2 x)"), False, ((0, False), (1, False), (0, False))),
        # `retain_graph=True` on the first: the second runs it again.
        (("tanh(w1 x)", "sin(w2 x)"), False, ((0, True), (1, False), (0, False))),
        # Shared ops: one component, the second backward raises as eager's.
        (("tanh(w1 x)", "a * b"), False, ((0, False), (1, False))),
        # Across a graph break: the first output handed through the second graph.
        (("tanh(w1 x)", "sin(w2 x)"), True, ((1, False), (0, False))),
        (("tanh(w1 x)", "a.detach() * w2"), True, ((1, False), (0, False))),
        (("tanh(w1 x)", "a.detach() * w2"), False, ((1, False), (0, False))),
    ],
)
def test_separate_backwards(backend, names, brk, calls):
    _check(names, brk, calls, backend)


@settings(max_examples=60, deadline=None, derandomize=True)
@given(
    st.sampled_from(["inductor", "aot_eager"]),
    st.lists(st.sampled_from(sorted(OUTPUTS)), min_size=1, max_size=3, unique=True),
    st.booleans(),
    st.lists(st.tuples(st.integers(0, 2), st.booleans()), min_size=1, max_size=3),
)
def test_generated_separate_backwards(backend, names, brk, calls):
    _check(tuple(names), brk, tuple(calls), backend)


class _Gan(nn.Module):
    def __init__(self):
        super().__init__()
        self.g = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 8))
        self.d = nn.Sequential(nn.Linear(8, 8), nn.LeakyReLU(0.2), nn.Linear(8, 1))
        self.og = torch.optim.Adam(self.g.parameters(), lr=1e-2, betas=(0.5, 0.999))
        self.od = torch.optim.Adam(self.d.parameters(), lr=1e-2, betas=(0.5, 0.999))

    def forward(self, x, z):
        """The DCGAN tutorial's step: the discriminator on real and detached fake data, then
        the generator through the same `fake`."""
        fake = self.g(z)
        self.od.zero_grad()
        real = F.binary_cross_entropy_with_logits(self.d(x), torch.ones(6, 1))
        fk = F.binary_cross_entropy_with_logits(
            self.d(fake.detach()), torch.zeros(6, 1)
        )
        ld = real + fk
        ld.backward()
        self.od.step()
        self.og.zero_grad()
        lg = F.binary_cross_entropy_with_logits(self.d(fake), torch.ones(6, 1))
        lg.backward()
        self.og.step()
        return ld.detach(), lg.detach()


class _TwoPasses(nn.Module):
    """Two forward/backward passes in one function (SAM's shape, a consistency loss): the
    second graph gets the first loss handed through it."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 4)

    def forward(self, x, y):
        l1 = F.mse_loss(self.fc(x), y)
        l1.backward()
        l2 = F.mse_loss(self.fc(x * 2), y)
        l2.backward()
        return l1.detach(), l2.detach()


class _Fgsm(nn.Module):
    """Adversarial training: the input's gradient by `autograd.grad`, then a step on the
    perturbed input."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Sequential(nn.Linear(8, 8), nn.Tanh(), nn.Linear(8, 4))
        self.opt = torch.optim.SGD(self.fc.parameters(), lr=0.1)

    def forward(self, x, y):
        x = x.clone().requires_grad_(True)
        l = F.mse_loss(self.fc(x), y)
        (gx,) = torch.autograd.grad(l, x)
        loss = F.mse_loss(self.fc((x + 0.1 * gx.sign()).detach()), y)
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        return loss.detach(), gx


@pytest.mark.parametrize("backend", ["inductor", "aot_eager"])
@pytest.mark.parametrize(
    "make,shapes",
    [
        (_Gan, ((6, 8), (6, 4))),
        (_TwoPasses, ((6, 8), (6, 4))),
        (_Fgsm, ((6, 8), (6, 4))),
    ],
)
def test_training_steps_with_separate_backwards(backend, make, shapes):
    """Three steps of each, compiled against eager: losses, parameters, gradients."""
    torch.manual_seed(0)
    eager = make()
    compiled = make()
    compiled.load_state_dict(eager.state_dict())
    for opt in ("og", "od", "opt"):
        if hasattr(eager, opt):
            getattr(compiled, opt).load_state_dict(getattr(eager, opt).state_dict())
    torchferro.compiler.reset()
    step = torchferro.compile(compiled, backend=backend)
    for i in range(3):
        args = [torch.randn(*s) for s in shapes]
        want = eager(*args)
        got = step(*args)
        for a, b in zip(got, want, strict=True):
            torch.testing.assert_close(a, b)
        for (n, a), b in zip(
            compiled.named_parameters(), eager.parameters(), strict=True
        ):
            torch.testing.assert_close(a, b, msg=f"step {i}: {n}")
            torch.testing.assert_close(a.grad, b.grad, msg=f"step {i}: {n}.grad")
