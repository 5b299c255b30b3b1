"""Issue 17 × 18: training graphs with symbolic sizes compiled forward and backward.

A dynamic training graph (``dynamic=True``, or automatic dynamic after a second size) is
specialized to each call's sizes and gets its own joint, forward and backward per assignment of
its size symbols (``tracer/src/backend/aot_dynamic.rs``), as the inference path compiles kernels
per assignment; the trace and its guards are made once. Checked against eager at every call
(loss, gradients, parameters over optimizer steps), with 0 fallbacks, the number of compiled
programs, and torch.compile's graph count."""

from __future__ import annotations

import copy

import pytest
import torch
import torch._dynamo
import torch.nn.functional as F
from torch import nn

import torchferro
import torchferro.compiler
from torchferro import _aot
from programs.counting import Count


@pytest.fixture(autouse=True)
def _aot_default(monkeypatch):
    monkeypatch.delenv("TORCHFERRO_AOT", raising=False)
    torch._dynamo.reset()
    torchferro.compiler.reset()
    _aot.reset()


class MLP(nn.Module):
    def __init__(self, loss="mse"):
        super().__init__()
        self.l1 = nn.Linear(6, 16)
        self.norm = nn.LayerNorm(16)
        self.l2 = nn.Linear(16, 3)
        self.loss = loss

    def forward(self, x, t):
        y = self.l2(F.gelu(self.norm(self.l1(x))))
        if self.loss == "ce":
            return F.cross_entropy(y, t)
        return ((y.softmax(-1) - t) ** 2).mean()


class Pool(nn.Module):
    """A sequence model: the sequence length is the dynamic size (a mean over it)."""

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(30, 8)
        self.proj = nn.Linear(8, 8)
        self.out = nn.Linear(8, 2)

    def forward(self, ids, t):
        h = torch.tanh(self.proj(self.emb(ids)))
        return F.cross_entropy(self.out(h.mean(1)), t)


def _batch_mlp(n, g):
    return torch.randn(n, 6, generator=g), torch.rand(n, 3, generator=g)


def _batch_mlp_ce(n, g):
    return torch.randn(n, 6, generator=g), torch.randint(0, 3, (n,), generator=g)


def _batch_pool(n, g):
    return torch.randint(0, 30, (4, n), generator=g), torch.randint(
        0, 2, (4,), generator=g
    )


def _train(model, batch, sizes, dynamic, opt="adamw"):
    """Steps over ``sizes`` compiled vs eager: losses and parameters equal at each step.
    Returns torch.compile's graph count over the same calls."""
    torch.manual_seed(0)
    eager = model()
    comp = copy.deepcopy(eager)
    compiled = torchferro.compile(comp, dynamic=dynamic)

    def make(m):
        if opt == "sgd":
            return torch.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
        return torch.optim.AdamW(m.parameters(), lr=0.01)

    oe, oc = make(eager), make(comp)
    g = torch.Generator().manual_seed(1)
    batches = [batch(n, g) for n in sizes]
    for step, b in enumerate(batches):
        le = eager(*b)
        lc = compiled(*b)
        torch.testing.assert_close(lc, le, rtol=1e-5, atol=1e-6)
        for o, loss in ((oe, le), (oc, lc)):
            o.zero_grad()
            loss.backward()
            o.step()
        for (n, pe), pc in zip(eager.named_parameters(), comp.parameters()):
            torch.testing.assert_close(
                pc, pe, rtol=1e-5, atol=1e-6, msg=f"step {step}: {n}"
            )
    count = Count()
    torch._dynamo.reset()
    oracle = torch.compile(copy.deepcopy(eager), backend=count, dynamic=dynamic)
    for b in batches:
        oracle(*b)
    torch._dynamo.reset()
    return compiled, count.n


@pytest.mark.parametrize("opt", ["sgd", "adamw"])
def test_dynamic_true_batch_sizes(opt):
    """``dynamic=True`` over batch sizes 3, 5, 8, 5, 13: as many graphs as torch.compile (2: the
    target's batch size is specialized at the first call, then made symbolic), one compiled
    program per distinct size, every backward compiled, 0 fallbacks."""
    sizes = [3, 5, 8, 5, 13]
    compiled, graphs = _train(MLP, _batch_mlp, sizes, True, opt)
    assert len(torchferro.compiler.cache_entries(compiled)) == graphs == 2
    assert _aot.counters["fallback"] == 0, _aot.fallback_reasons
    assert _aot.counters["compiled"] == len(set(sizes))
    assert _aot.counters["backward"] == len(sizes)


def test_dynamic_true_cross_entropy_one_graph():
    sizes = [3, 5, 8]
    compiled, graphs = _train(lambda: MLP("ce"), _batch_mlp_ce, sizes, True, "sgd")
    assert graphs == 1
    assert len(torchferro.compiler.cache_entries(compiled)) == 1


def test_automatic_dynamic_sequence_length():
    """The default (automatic dynamic): the first length compiles static, the second
    recompiles with a symbolic length (2 graphs, as torch.compile); every call compiled."""
    sizes = [5, 7, 11, 7, 16]
    compiled, graphs = _train(Pool, _batch_pool, sizes, None)
    assert len(torchferro.compiler.cache_entries(compiled)) == graphs == 2
    assert _aot.counters["fallback"] == 0, _aot.fallback_reasons
    assert _aot.counters["compiled"] == len(set(sizes))
    assert _aot.counters["backward"] == len(sizes)


def test_sizes_past_the_variant_limit_run_through_torch_autograd(monkeypatch):
    """With room for 2 assignments, later sizes run the traced graph through torch's autograd
    on the eager runner: still eager's losses and parameters, nothing more compiled. (Size 3
    is the first, static graph; the dynamic one compiles 5 and 8; 9 runs through torch.)"""
    monkeypatch.setenv("TORCHFERRO_SIZE_VARIANTS", "2")
    sizes = [3, 5, 8, 9, 5]
    _train(MLP, _batch_mlp, sizes, True, "sgd")
    assert _aot.counters["compiled"] == 3
    assert _aot.counters["backward"] == 4
    assert _aot.counters["fallback"] == 0


def test_float64_gradients_per_size():
    """A function with two dynamic dimensions: float64 gradients equal torch.autograd's."""

    def fn(x, w, b):
        h = torch.tanh(x @ w + b)
        return (h * h.sum(-1, keepdim=True)).mean()

    g = torch.Generator().manual_seed(0)
    w0 = torch.randn(5, 4, dtype=torch.float64, generator=g)
    b0 = torch.randn(4, dtype=torch.float64, generator=g)
    f = torchferro.compile(fn, dynamic=True)
    for n, k in [(3, 5), (6, 5), (2, 5)]:
        x = torch.randn(n, k, dtype=torch.float64, generator=g)
        grads = []
        for call in (fn, f):
            w = w0.clone().requires_grad_(True)
            b = b0.clone().requires_grad_(True)
            xx = x.clone().requires_grad_(True)
            out = call(xx, w, b)
            grads.append((out.detach(), *torch.autograd.grad(out, [xx, w, b])))
        for a, c in zip(*grads):
            torch.testing.assert_close(c, a, rtol=1e-10, atol=1e-12)
    assert _aot.counters["fallback"] == 0, _aot.fallback_reasons
    assert _aot.counters["compiled"] == 3
