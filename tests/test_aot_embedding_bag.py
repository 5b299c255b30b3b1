"""Issue 17: ``F.embedding_bag`` / ``nn.EmbeddingBag`` in graphs compiled forward and backward.

The rule (``fx/src/autodiff/rules/embedding_bag.rs``) hands the bag bookkeeping to torch's own
backward kernels, so gradients are checked against torch.autograd in float64 over the modes
(sum, mean, max), 1-D indices with offsets (``include_last_offset``, empty bags), 2-D
mini-batches, ``per_sample_weights`` and ``padding_idx``; then 5 training steps of an
``nn.EmbeddingBag`` model with SGD and AdamW against eager, with 0 fallbacks and
torch.compile's graph count."""

from __future__ import annotations

import copy

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

import torchferro
from aot_oracle import torch_compile_graphs
from torchferro import _aot


@pytest.fixture(autouse=True)
def _aot_default(monkeypatch):
    monkeypatch.delenv("TORCHFERRO_AOT", raising=False)
    torchferro.compiler.reset()
    _aot.reset()


def _grads(fn, weight, psw, *rest):
    """(output, d weight, d per_sample_weights) of ``fn`` in eager and compiled, one cotangent."""
    results = []
    for compiled in (False, True):
        torchferro.compiler.reset()
        _aot.reset()
        w = weight.detach().clone().requires_grad_(True)
        p = None if psw is None else psw.detach().clone().requires_grad_(True)
        f = torchferro.compile(fn) if compiled else fn
        out = f(w, p, *rest)
        cot = torch.randn(
            out.shape, dtype=out.dtype, generator=torch.Generator().manual_seed(3)
        )
        wrt = [w] if p is None else [w, p]
        gs = torch.autograd.grad(out, wrt, cot)
        results.append((out, *gs))
        if compiled:
            assert _aot.counters["fallback"] == 0, _aot.fallback_reasons
            assert _aot.counters["compiled"] == 1
            assert _aot.counters["backward"] == 1
    for e, c in zip(*results):
        torch.testing.assert_close(c, e, rtol=1e-7, atol=1e-9)


def _bag(**kw):
    def fn(w, psw, idx, offsets):
        return F.embedding_bag(idx, w, offsets, per_sample_weights=psw, **kw)

    return fn


W = torch.randn(10, 4, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
IDX = torch.tensor([1, 2, 4, 5, 4, 3, 2, 9, 0, 0, 7])
OFF = torch.tensor([0, 4, 4, 8])


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("include_last_offset", [False, True])
def test_offsets(mode, include_last_offset):
    """1-D indices with offsets; offsets 4, 4 make an empty bag."""
    _grads(_bag(mode=mode, include_last_offset=include_last_offset), W, None, IDX, OFF)


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("padding_idx", [None, 4, -1])
def test_padding_idx(mode, padding_idx):
    """Entries equal to ``padding_idx`` are left out of the bag (and of mean's count) and
    get no gradient; -1 counts from the end (row 9)."""
    _grads(_bag(mode=mode, padding_idx=padding_idx), W, None, IDX, OFF)


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_two_d_minibatch(mode):
    """2-D indices: fixed-length bags, no offsets."""
    idx = torch.tensor([[1, 2, 4], [4, 3, 9], [0, 0, 7]])
    _grads(_bag(mode=mode), W, None, idx, None)


@pytest.mark.parametrize("padding_idx", [None, 2])
def test_per_sample_weights(padding_idx):
    """``per_sample_weights`` (mode sum) gets its own gradient."""
    psw = torch.randn(IDX.shape, dtype=torch.float64)
    _grads(_bag(mode="sum", padding_idx=padding_idx), W, psw, IDX, OFF)


def test_per_sample_weights_two_d():
    idx = torch.tensor([[1, 2, 4], [4, 3, 9]])
    psw = torch.randn(idx.shape, dtype=torch.float64)
    _grads(_bag(mode="sum"), W, psw, idx, None)


def test_embedding_bag_feeds_more_ops():
    """The bags feed a linear layer and a nonlinearity: the rule composes with the others."""
    lin_w = torch.randn(3, 4, dtype=torch.float64)

    def fn(w, psw, idx, offsets):
        h = F.embedding_bag(idx, w, offsets, mode="mean")
        return torch.tanh(h @ lin_w.t()) * 2

    _grads(fn, W, None, IDX, OFF)


def test_max_norm_falls_back_with_reason():
    """``max_norm`` renormalizes the weight in place under no_grad: no rule; the graph runs
    through torch's autograd with the reason logged, and values still match eager."""
    w_e = W.detach().clone().requires_grad_(True)
    w_c = W.detach().clone().requires_grad_(True)

    def fn(w, idx, offsets):
        return F.embedding_bag(idx, w, offsets, max_norm=1.0, mode="sum")

    out_e = fn(w_e, IDX, OFF)
    out_c = torchferro.compile(fn)(w_c, IDX, OFF)
    torch.testing.assert_close(out_c, out_e)
    out_e.sum().backward()
    out_c.sum().backward()
    torch.testing.assert_close(w_c.grad, w_e.grad)
    torch.testing.assert_close(w_c.detach(), w_e.detach())
    assert _aot.counters["compiled"] == 0
    assert _aot.counters["fallback"] >= 1
    assert any("max_norm" in r or "no_grad" in r for r in _aot.fallback_reasons), (
        _aot.fallback_reasons
    )


@settings(max_examples=25, deadline=None)
@given(
    st.integers(3, 12),
    st.integers(1, 6),
    st.lists(st.integers(0, 5), min_size=1, max_size=5),
    st.sampled_from(["sum", "mean", "max"]),
    st.booleans(),
    st.integers(0, 2**31 - 1),
)
def test_generated_bags(num, dim, bag_lens, mode, use_psw, seed):
    """Hypothesis over table sizes, bag lengths (empty bags included) and modes."""
    g = torch.Generator().manual_seed(seed)
    w = torch.randn(num, dim, dtype=torch.float64, generator=g)
    n = sum(bag_lens)
    idx = torch.randint(0, num, (n,), generator=g)
    offsets = torch.tensor([0, *bag_lens[:-1]]).cumsum(0)
    psw = (
        torch.randn(n, dtype=torch.float64, generator=g)
        if use_psw and mode == "sum"
        else None
    )
    _grads(_bag(mode=mode), w, psw, idx, offsets)


class BagModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.bag = nn.EmbeddingBag(50, 16, mode="mean", padding_idx=0)
        self.out = nn.Linear(16, 5)

    def forward(self, idx, offsets):
        return self.out(torch.relu(self.bag(idx, offsets)))


@pytest.mark.parametrize("opt", ["sgd", "adamw"])
def test_training_equivalence_5_steps(opt):
    """5 steps of an EmbeddingBag classifier, compiled vs eager: losses and parameters equal
    within float32 tolerance at each step; one compiled graph, 0 fallbacks, as many graphs as
    torch.compile."""
    torch.manual_seed(0)
    eager = BagModel()
    comp = copy.deepcopy(eager)
    compiled = torchferro.compile(comp)

    def make(m):
        if opt == "sgd":
            return torch.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
        return torch.optim.AdamW(m.parameters(), lr=0.01)

    oe, oc = make(eager), make(comp)
    g = torch.Generator().manual_seed(1)
    for step in range(5):
        idx = torch.randint(0, 50, (24,), generator=g)
        offsets = torch.tensor([0, 5, 5, 12, 20])
        target = torch.randint(0, 5, (5,), generator=g)
        le = F.cross_entropy(eager(idx, offsets), target)
        lc = F.cross_entropy(compiled(idx, offsets), target)
        torch.testing.assert_close(lc, le)
        for o, l in ((oe, le), (oc, lc)):
            o.zero_grad()
            l.backward()
            o.step()
        for (n, pe), pc in zip(eager.named_parameters(), comp.parameters()):
            torch.testing.assert_close(pc, pe, msg=f"step {step}: {n}")
    oracle = torch_compile_graphs(
        BagModel(), torch.tensor([1, 2, 3]), torch.tensor([0, 1])
    )
    assert _aot.counters["fallback"] == 0, _aot.fallback_reasons
    assert _aot.counters["compiled"] == oracle == 1
    assert _aot.counters["backward"] == 5
