"""Issue 17: ``F.cross_entropy`` over class indices written out in the joint graph
(``fx/src/autodiff/decompose.rs``): a per-row ``logsumexp`` saved for the backward, the target's
logit picked by a masked row sum, and one backward pass ``(exp(x - lse) - onehot) * scale``.
Values and float64 gradients against eager/autograd for every reduction, ignored rows (some,
all, an ``ignore_index`` that is a real class), ``-inf`` logits, and the forms left to the op's
own rule (class weights, label smoothing)."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

import torchferro
from torchferro import _aot


@pytest.fixture(autouse=True)
def _fresh(monkeypatch):
    monkeypatch.delenv("TORCHFERRO_AOT", raising=False)
    torchferro.compiler.reset()
    _aot.reset()


def _compare(fn, x, *rest, dtype=torch.float64, tol=None):
    tol = tol or {"rtol": 1e-10, "atol": 1e-12}
    xe = x.to(dtype).clone().requires_grad_()
    xc = x.to(dtype).clone().requires_grad_()
    ye = fn(xe, *rest)
    yc = torchferro.compile(fn)(xc, *rest)
    torch.testing.assert_close(yc, ye, equal_nan=True, **tol)
    cot = torch.randn(ye.shape, dtype=dtype, generator=torch.Generator().manual_seed(5))
    (ge,) = torch.autograd.grad(ye, xe, cot)
    (gc,) = torch.autograd.grad(yc, xc, cot)
    torch.testing.assert_close(gc, ge, equal_nan=True, **tol)
    assert _aot.counters["fallback"] == 0, _aot.fallback_reasons
    assert _aot.counters["backward"] == 1


def _data(n=6, c=7, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(n, c, generator=g, dtype=torch.float64), torch.randint(
        0, c, (n,), generator=g
    )


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_reductions(reduction):
    x, t = _data()
    _compare(lambda x, t: F.cross_entropy(x * 2, t, reduction=reduction), x, t)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_ignored_rows(reduction):
    x, t = _data(8, 5, seed=1)
    t[[1, 4, 5]] = -100
    _compare(lambda x, t: F.cross_entropy(x.tanh(), t, reduction=reduction), x, t)


def test_ignore_index_that_is_a_class():
    x, t = _data(9, 4, seed=2)
    t[:3] = 2
    _compare(lambda x, t: F.cross_entropy(x, t, ignore_index=2), x, t)


def test_every_row_ignored_is_nan_as_eager():
    x, t = _data(4, 3, seed=3)
    t[:] = -100
    _compare(lambda x, t: F.cross_entropy(x + 1, t), x, t)


def test_minus_inf_logits_of_other_classes():
    """A masked logit (-inf) of a class that is not the target: the picked value and the
    gradient stay finite (a product with the onehot would give nan)."""
    x, t = _data(5, 6, seed=4)
    mask = torch.zeros(5, 6, dtype=torch.bool)
    mask[:, 0] = True
    t[t == 0] = 1

    def fn(x, t):
        return F.cross_entropy(x.masked_fill(mask, float("-inf")), t)

    _compare(fn, x, t)


def test_float32_language_model_head():
    """GPT-2's shape of loss: logits from a matmul, rows flattened, the last position
    ignored."""
    g = torch.Generator().manual_seed(6)
    h = torch.randn(2, 9, 16, generator=g)
    w = torch.randn(50, 16, generator=g)
    labels = torch.randint(0, 50, (2, 9), generator=g)
    labels[:, -1] = -100

    def fn(w, h, labels):
        logits = F.linear(h, w).float()
        return F.cross_entropy(logits.view(-1, 50), labels.view(-1), ignore_index=-100)

    _compare(fn, w, h, labels, dtype=torch.float32, tol={"rtol": 1e-5, "atol": 1e-6})


@pytest.mark.parametrize(
    "kw", [{"label_smoothing": 0.1}, {"weight": "w"}], ids=["smoothing", "weight"]
)
def test_forms_left_to_the_op(kw):
    """Class weights and label smoothing are not written out; the op's own rule has no form
    for them either, so the graph runs through torch's autograd (correct, and named)."""
    x, t = _data(4, 3, seed=7)
    if "weight" in kw:
        kw = {"weight": torch.rand(3, dtype=torch.float64) + 0.5}
    xe = x.clone().requires_grad_()
    xc = x.clone().requires_grad_()
    F.cross_entropy(xe, t, **kw).backward()
    torchferro.compile(lambda x, t: F.cross_entropy(x, t, **kw))(xc, t).backward()
    torch.testing.assert_close(xc.grad, xe.grad)
    assert _aot.counters["fallback"] == 1
    assert "cross_entropy" in _aot.fallback_reasons[0]
