"""Compiled training through a write into a view of an intermediate, whose gradient reaches the
write as a broadcast (the backward of ``sum``/``mean``: an expand, stride 0).

Session 28: ``y = x @ w; y[:3].mul_(2); return y.sum()`` (and ``index_put_``) raised in backward on the inductor
("more than one element of the written-to tensor refers to a single memory location", static and
dynamic alike; eager, aot_eager and torch.compile train it). The backward rule of the
functional scatter took its output's strides from the incoming gradient, an expand; the runtime
allocated that overlapping layout and the scatter's copy wrote into it. The scatter clones its
base, so its output is dense (``fx/src/autodiff/rules/index.rs::written_meta``); and a host op's
buffer never takes a layout whose elements share memory (``inductor/src/lower/fallback.rs``).
``zero_``, ``fill_`` and ``masked_fill_`` with a number on such a view ran through torch's
autograd (no derivative rule); they compile now."""

from __future__ import annotations

import hypothesis.strategies as st
import pytest
import torch
from hypothesis import HealthCheck, given, settings

import torchferro
from torchferro import _aot


def _setitem(v):
    v[0] = 5.0


VIEWS = {
    "head": lambda y: y[: y.size(0) // 2],
    "row": lambda y: y[1],
    "column": lambda y: y[:, 1:],
    "transposed": lambda y: y.t()[:2],
    "narrow": lambda y: y.narrow(1, 0, 2),
}
WRITES = {
    "mul_": lambda v: v.mul_(2),
    "add_": lambda v: v.add_(1.5),
    "zero_": lambda v: v.zero_(),
    "neg_": lambda v: v.neg_(),
    "fill_": lambda v: v.fill_(0.25),
    "masked_fill_": lambda v: v.masked_fill_(v > 0, 0.0),
    "index_put_": lambda v: v.index_put_(
        (torch.tensor([0]),), torch.tensor(1.0, dtype=v.dtype)
    ),
    "setitem": _setitem,
}
REDUCE = {
    "sum": lambda y: y.sum(),
    "mean": lambda y: y.mean(),
    "sum_rows": lambda y: y.sum(0).pow(2).sum(),
    "weighted": lambda y: (y * torch.arange(y.size(1), dtype=y.dtype)).sum(),
}


def program(view, write, reduce):
    def f(x, w):
        y = x @ w
        WRITES[write](VIEWS[view](y))
        return REDUCE[reduce](y)

    return f


def check(f, backend, dynamic, rows=(6, 8, 5)):
    torch.manual_seed(0)
    w = torch.randn(4, 3, dtype=torch.float64, requires_grad=True)
    torchferro.compiler.reset()
    _aot.reset()
    cf = torchferro.compile(f, backend=backend, dynamic=dynamic)
    for n in rows:
        x = torch.randn(n, 4, dtype=torch.float64, requires_grad=True)
        want = f(x, w)
        want.backward()
        gx, gw = x.grad, w.grad
        x.grad = w.grad = None
        got = cf(x, w)
        got.backward()
        torch.testing.assert_close(got, want)
        torch.testing.assert_close(x.grad, gx)
        torch.testing.assert_close(w.grad, gw)
        w.grad = None
    assert _aot.counters["fallback"] == 0, _aot.fallback_reasons


@pytest.mark.parametrize("dynamic", [False, True])
@pytest.mark.parametrize("backend", ["inductor", "aot_eager"])
def test_a_slice_scaled_in_place_then_summed_trains_as_eager(backend, dynamic):
    check(program("head", "mul_", "sum"), backend, dynamic)


@pytest.mark.parametrize("reduce", sorted(REDUCE))
@pytest.mark.parametrize("view", sorted(VIEWS))
def test_views_written_in_place_train_as_eager_on_the_inductor(view, reduce):
    check(program(view, "mul_", reduce), "inductor", False, rows=(6,))


@pytest.mark.parametrize("write", sorted(WRITES))
def test_every_write_into_a_summed_intermediate_trains_as_eager(write):
    check(program("head", write, "sum"), "inductor", False, rows=(6,))


@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    derandomize=True,
)
@given(
    view=st.sampled_from(sorted(VIEWS)),
    write=st.sampled_from(sorted(WRITES)),
    reduce=st.sampled_from(sorted(REDUCE)),
    dynamic=st.booleans(),
)
def test_generated_view_writes_train_as_eager(view, write, reduce, dynamic):
    check(program(view, write, reduce), "inductor", dynamic, rows=(6, 7))
