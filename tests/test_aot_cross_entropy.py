"""Issue 17: ``F.cross_entropy`` over class indices written out in the joint graph
(``fx/src/autodiff/decompose.rs``): a per-row ``logsumexp`` saved for the backward, the target's
logit picked by a masked row sum, and one backward pass ``(exp(x - lse) - onehot) * scale``.
Values and float64 gradients against eager/autograd for every reduction, ignored rows (some,
all, an ``ignore_index`` that is a real class), ``-inf`` logits, and the forms left to the op's
own rule (class weights, label smoothing). Session 23: where the logits are stored (a product,
an input, through views and a widening cast) the target's logit is read once per row by a
range-checked gather (an out-of-range class raises eager's error), and GPT-2's bf16 autocast LM
head on the CPU inductor (the CUDA path's rewrite) against eager."""

from __future__ import annotations

import logging

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


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("where", ["stored", "pointwise"])
def test_non_finite_logits_give_eagers_nan(reduction, where):
    """Session 28 (hunt28): a row holding ``+inf`` (an overflowed activation, the step a
    hand-written loss scaler skips) is NaN in eager's ``log_softmax`` (its maximum subtracted:
    ``inf - inf``), so its loss and its whole gradient row are NaN. The written-out form gave
    ``logsumexp - x[t] = inf`` and a gradient row of zeros and one NaN. Rows: ``+inf`` at
    another class, ``+inf`` at the target, ``+inf`` and ``-inf``, all ``-inf``, a NaN, finite;
    the logits read from memory (an input) and computed pointwise (fused masked sum)."""
    x, t = _data(6, 4, seed=6)
    inf, nan = float("inf"), float("nan")
    x[0, 2], x[1, 1] = inf, inf
    x[2, 0], x[2, 3] = inf, -inf
    x[3] = -inf
    x[4, 1] = nan
    t[:5] = torch.tensor([1, 1, 2, 0, 3])
    pre = (lambda v: v) if where == "stored" else (lambda v: v * 1.5)
    _compare(lambda x, t: F.cross_entropy(pre(x), t, reduction=reduction), x, t)


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
def test_weighted_and_smoothed_forms_have_rules(kw):
    """Class weights and label smoothing are not written out; the op's own rule
    (`rules/losses.rs`, session 25) takes them: no fallback, eager's gradients."""
    x, t = _data(4, 3, seed=7)
    if "weight" in kw:
        kw = {"weight": torch.rand(3, dtype=torch.float64) + 0.5}
    xe = x.clone().requires_grad_()
    xc = x.clone().requires_grad_()
    F.cross_entropy(xe, t, **kw).backward()
    torchferro.compile(lambda x, t: F.cross_entropy(x, t, **kw))(xc, t).backward()
    torch.testing.assert_close(xc.grad, xe.grad)
    assert _aot.counters["fallback"] == 0, _aot.fallback_reasons


@pytest.fixture
def _cpu_autocast_inductor(monkeypatch):
    # The CUDA path's rewrite on the CPU: autocast written out as casts, both halves on the
    # inductor (without it a CPU autocast graph runs on the eager runner).
    monkeypatch.setenv("TORCHFERRO_AUTOCAST_INDUCTOR", "1")


def _lm_head(reduction, ignore_index=-100, smoothing=0.0, vocab=517):
    """GPT-2's loss under bf16 autocast as transformers writes it: a bf16 product, the logits
    cast to float32, labels shifted with ``ignore_index`` padding, rows flattened."""
    g = torch.Generator().manual_seed(8)
    h = torch.randn(3, 11, 32, generator=g)
    w = torch.randn(vocab, 32, generator=g) * 0.2
    ids = torch.randint(0, vocab, (3, 11), generator=g)
    ids[1, 4] = ignore_index

    def fn(w, h, ids):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            logits = F.linear(h, w).float()
            labels = F.pad(ids, (0, 1), value=ignore_index)[..., 1:].contiguous()
            return F.cross_entropy(
                logits.view(-1, vocab),
                labels.view(-1),
                ignore_index=ignore_index,
                reduction=reduction,
                label_smoothing=smoothing,
            )

    return fn, w, h, ids


def _grads_vs_eager(fn, w, h, ids):
    we, he = w.clone().requires_grad_(), h.clone().requires_grad_()
    wc, hc = w.clone().requires_grad_(), h.clone().requires_grad_()
    ye = fn(we, he, ids)
    yc = torchferro.compile(fn)(wc, hc, ids)
    # Same bf16 product, same float32 loss arithmetic up to summation order.
    torch.testing.assert_close(yc, ye, rtol=1e-5, atol=1e-5)
    cot = torch.rand(ye.shape, generator=torch.Generator().manual_seed(3)) + 0.5
    ge = torch.autograd.grad(ye, (we, he), cot)
    gc = torch.autograd.grad(yc, (wc, hc), cot)
    # The logits' gradient is rounded to bf16 before the products, in both.
    for a, b in zip(gc, ge):
        torch.testing.assert_close(a, b, rtol=2e-2, atol=2e-3)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("ignore_index", [-100, 3])
def test_bf16_autocast_language_model_head(
    _cpu_autocast_inductor, caplog, reduction, ignore_index
):
    """The LM head of a bf16 training step (issue 17's CUDA goal, on the CPU inductor): the
    loss written out (no ``cross_entropy`` call left for torch in the forward), the backward
    one pass from the saved per-row logsumexp (no softmax computed again), the loss and both
    gradients as eager's, both halves compiled."""
    fn, w, h, ids = _lm_head(reduction, ignore_index)
    with caplog.at_level(logging.DEBUG, logger="torchferro.aot"):
        _grads_vs_eager(fn, w, h, ids)
    assert _aot.counters["fallback"] == 0, _aot.fallback_reasons
    assert _aot.counters["backward"] == 1
    through_torch = [m for m in caplog.messages if "run through torch" in m]
    assert not any("cross_entropy" in m for m in through_torch), through_torch
    (bw,) = [m for m in caplog.messages if "backward graph" in m]
    assert "saved_logsumexp" in bw and "softmax" not in bw, bw


def test_bf16_autocast_label_smoothing_has_a_rule(_cpu_autocast_inductor):
    """Label smoothing is not written out; the op's rule takes it (session 25): no fallback,
    eager's values."""
    fn, w, h, ids = _lm_head("mean", smoothing=0.1)
    _grads_vs_eager(fn, w, h, ids)
    assert _aot.counters["fallback"] == 0, _aot.fallback_reasons


@pytest.mark.parametrize("source", ["input", "matmul"])
def test_target_out_of_range_raises_as_eager(source):
    """A class index past the classes: the written-out forward reads the target's logit with a
    range-checked gather, and the error is eager's (the traced graph reruns eagerly for it)."""
    x, t = _data(5, 4, seed=9)
    w = torch.randn(4, 4, dtype=torch.float64)
    t[2] = 7

    def fn(x, t):
        logits = x if source == "input" else x @ w
        return F.cross_entropy(logits, t)

    with pytest.raises(IndexError) as want:
        fn(x.clone().requires_grad_(), t)
    with pytest.raises(IndexError) as got:
        torchferro.compile(fn)(x.clone().requires_grad_(), t)
    assert str(got.value) == str(want.value)
