"""Session 25 (rules25): the derivative rules of the losses (``fx/src/autodiff/rules/losses.rs``).

Each rule is checked against torch.autograd as ``test_aot_rules.py`` checks the others:
float64 gradients at random inputs and cotangents (``check``), hypothesis over shapes,
broadcasting, reductions and dtypes (float32 end to end), both backends; then whole training
steps of a small model on each loss, compiled vs eager over 3 steps with SGD and AdamW: losses,
gradients and parameters equal within float32 tolerance, no fallback, and no more graphs than
torch.compile's."""

from __future__ import annotations

import copy

import pytest
import torch
import torch.nn.functional as F
import torchferro
from aot_oracle import torch_compile_graphs
from hypothesis import given, settings
from hypothesis import strategies as st
from test_aot_rules import X, _rand, check
from torch import nn
from torchferro import _aot


@pytest.fixture(autouse=True)
def _aot_on(monkeypatch):
    monkeypatch.setenv("TORCHFERRO_AOT", "1")


def _classes(n, c, seed=0):
    return torch.randint(0, c, (n,), generator=torch.Generator().manual_seed(seed))


def _probs(*s):
    return torch.rand(
        *s, dtype=torch.float64, generator=torch.Generator().manual_seed(3)
    )


def _signs(n):
    g = torch.Generator().manual_seed(4)
    return torch.randint(0, 2, (n,), generator=g).double() * 2 - 1


W4 = torch.tensor([1.0, 2.0, 0.5, 1.5], dtype=torch.float64)

# name: (fn, inputs, which inputs take a gradient (None: every float one)).
CASES = {
    "l1_loss": (lambda x, t: F.l1_loss(x, t), [X(4, 3), X(4, 3)], None),
    "l1_loss_sum_broadcast": (
        lambda x, t: F.l1_loss(x, t.expand(4, 3), reduction="sum"),
        [X(4, 3), X(3)],
        None,
    ),
    "l1_loss_none": (
        lambda x, t: F.l1_loss(x, t, reduction="none"),
        [X(5), X(5)],
        None,
    ),
    "smooth_l1_loss": (lambda x, t: F.smooth_l1_loss(x, t), [X(6, 2), X(6, 2)], None),
    "smooth_l1_loss_beta": (
        lambda x, t: F.smooth_l1_loss(x, t, beta=0.5, reduction="sum"),
        [X(7, 3), X(7, 3)],
        None,
    ),
    "smooth_l1_loss_beta0": (
        lambda x, t: F.smooth_l1_loss(x, t, beta=0.0),
        [X(7), X(7)],
        None,
    ),
    "smooth_l1_loss_none": (
        lambda x, t: F.smooth_l1_loss(x, t, reduction="none", beta=2.0),
        [X(3, 4), X(3, 4)],
        None,
    ),
    "huber_loss": (lambda x, t: F.huber_loss(x, t), [X(6, 2), X(6, 2)], None),
    "huber_loss_delta_none": (
        lambda x, t: F.huber_loss(x, t, delta=0.3, reduction="none"),
        [X(5, 3), X(5, 3)],
        None,
    ),
    "binary_cross_entropy": (
        lambda x, t: F.binary_cross_entropy(torch.sigmoid(x), t),
        [X(5, 4), _probs(5, 4)],
        [True, False],
    ),
    "binary_cross_entropy_weight_sum": (
        lambda x, t: F.binary_cross_entropy(torch.sigmoid(x), t, W4, reduction="sum"),
        [X(5, 4), _probs(5, 4)],
        [True, False],
    ),
    "bce_with_logits": (
        lambda x, t: F.binary_cross_entropy_with_logits(x, t),
        [X(5, 4), _probs(5, 4)],
        [True, False],
    ),
    "bce_with_logits_pos_weight": (
        lambda x, t: F.binary_cross_entropy_with_logits(x, t, pos_weight=W4),
        [X(5, 4), _probs(5, 4)],
        [True, False],
    ),
    "bce_with_logits_weight_pos_weight_none": (
        lambda x, t: F.binary_cross_entropy_with_logits(
            x, t, weight=W4.flip(0), pos_weight=W4, reduction="none"
        ),
        [X(5, 4), _probs(5, 4)],
        [True, False],
    ),
    "kl_div_batchmean": (
        lambda x, t: F.kl_div(F.log_softmax(x, -1), t, reduction="batchmean"),
        [X(5, 4), _probs(5, 4)],
        [True, False],
    ),
    "kl_div_mean": (
        lambda x, t: F.kl_div(x, t),
        [X(5, 4), _probs(5, 4)],
        [True, False],
    ),
    "kl_div_sum_broadcast": (
        lambda x, t: F.kl_div(x, t.expand(5, 4), reduction="sum"),
        [X(5, 4), _probs(4)],
        [True, False],
    ),
    "kl_div_log_target": (
        lambda x, t: F.kl_div(
            F.log_softmax(x, -1), F.log_softmax(t, -1), log_target=True, reduction="sum"
        ),
        [X(5, 4), X(5, 4)],
        None,
    ),
    "kl_div_log_target_none": (
        lambda x, t: F.kl_div(x, t, log_target=True, reduction="none"),
        [X(3, 4), X(3, 4)],
        None,
    ),
    "margin_ranking_loss": (
        lambda a, b, y: F.margin_ranking_loss(a, b, y, margin=0.2),
        [X(9), X(9), _signs(9)],
        [True, True, False],
    ),
    "margin_ranking_loss_none": (
        lambda a, b, y: F.margin_ranking_loss(a, b, y, reduction="none"),
        [X(9), X(9), _signs(9)],
        [True, True, False],
    ),
    "cosine_embedding_loss": (
        lambda a, b, y: F.cosine_embedding_loss(a, b, y, margin=0.1),
        [X(8, 5), X(8, 5), _signs(8)],
        [True, True, False],
    ),
    "cosine_embedding_loss_sum": (
        lambda a, b, y: F.cosine_embedding_loss(a, b, y, margin=-0.2, reduction="sum"),
        [X(8, 5), X(8, 5), _signs(8)],
        [True, True, False],
    ),
    "triplet_margin_loss": (
        lambda a, p, n: F.triplet_margin_loss(a, p, n),
        [X(6, 4), X(6, 4), X(6, 4)],
        None,
    ),
    "triplet_margin_loss_none": (
        lambda a, p, n: F.triplet_margin_loss(a, p, n, margin=0.3, reduction="none"),
        [X(6, 4), X(6, 4), X(6, 4)],
        None,
    ),
    "cross_entropy_weight": (
        lambda x, t: F.cross_entropy(x, t, weight=W4),
        [X(6, 4), _classes(6, 4)],
        None,
    ),
    "cross_entropy_label_smoothing": (
        lambda x, t: F.cross_entropy(x, t, label_smoothing=0.1),
        [X(6, 4), _classes(6, 4)],
        None,
    ),
    "cross_entropy_weight_smoothing_ignore": (
        lambda x, t: F.cross_entropy(
            x, t, weight=W4, label_smoothing=0.2, ignore_index=1
        ),
        [X(8, 4), _classes(8, 4, seed=1)],
        None,
    ),
    "cross_entropy_weight_smoothing_sum": (
        lambda x, t: F.cross_entropy(
            x, t, weight=W4, label_smoothing=0.3, reduction="sum"
        ),
        [X(6, 4), _classes(6, 4)],
        None,
    ),
    "cross_entropy_smoothing_ignore_none": (
        lambda x, t: F.cross_entropy(
            x, t, label_smoothing=0.3, ignore_index=2, reduction="none"
        ),
        [X(8, 4), _classes(8, 4, seed=2)],
        None,
    ),
    "cross_entropy_probs": (
        lambda x, t: F.cross_entropy(x, t.softmax(-1)),
        [X(5, 4), X(5, 4)],
        None,
    ),
    "cross_entropy_probs_weight_smoothing": (
        lambda x, t: F.cross_entropy(x, t.softmax(-1), weight=W4, label_smoothing=0.1),
        [X(5, 4), X(5, 4)],
        None,
    ),
    "cross_entropy_probs_none": (
        lambda x, t: F.cross_entropy(x, t, reduction="none"),
        [X(5, 4), _probs(5, 4)],
        [True, False],
    ),
    "nll_loss_weight": (
        lambda x, t: F.nll_loss(F.log_softmax(x, -1), t, weight=W4),
        [X(6, 4), _classes(6, 4)],
        None,
    ),
    "nll_loss_weight_ignore_sum": (
        lambda x, t: F.nll_loss(x, t, weight=W4, ignore_index=0, reduction="sum"),
        [X(7, 4), _classes(7, 4, seed=5)],
        None,
    ),
    # Not losses: F.pad's and roll's rules came with the survey (swin_t's windows).
    "pad": (lambda x: F.pad(x, (1, 2, 0, 3)) * 2, [X(2, 3, 4)], None),
    "pad_value_last_dim": (
        lambda x: F.pad(x, (2, 0), value=1.5).exp(),
        [X(3, 4)],
        None,
    ),
    "pad_crop": (lambda x: F.pad(x, (-1, 2, 1, -2)) * 3, [X(2, 5, 6)], None),
    "roll": (lambda x: torch.roll(x, (2, -1), (1, 2)).exp(), [X(2, 5, 6)], None),
    "roll_flat": (lambda x: x.roll(3) * x, [X(3, 4)], None),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_loss_rule_matches_autograd(name):
    fn, inputs, mask = CASES[name]
    check(fn, inputs, grad_mask=mask)


@pytest.mark.parametrize(
    "name",
    [
        "l1_loss",
        "smooth_l1_loss_beta",
        "huber_loss",
        "bce_with_logits_pos_weight",
        "kl_div_log_target",
        "cosine_embedding_loss",
        "triplet_margin_loss",
        "cross_entropy_weight_smoothing_ignore",
        "cross_entropy_probs_weight_smoothing",
        "pad_crop",
        "roll",
    ],
)
def test_loss_rule_aot_eager(name):
    fn, inputs, mask = CASES[name]
    check(fn, inputs, backend="aot_eager", grad_mask=mask)


def test_legacy_reduction_falls_back_with_the_reason():
    """A form a rule does not model runs through torch's autograd, named in the reasons."""

    def fn(x, t):
        return F.l1_loss(x, t, size_average=False)

    torchferro.compiler.reset()
    _aot.reset()
    x, t = X(4), X(4)
    xc, xe = x.clone().requires_grad_(), x.clone().requires_grad_()
    torchferro.compile(fn)(xc, t).backward()
    fn(xe, t).backward()
    torch.testing.assert_close(xc.grad, xe.grad)
    assert _aot.counters["fallback"] == 1
    assert "legacy" in _aot.fallback_reasons[0]


# The losses the hypothesis test draws: (fn of (input, target), target kind).
ELEMENTWISE = {
    "mse_loss": lambda x, t, r: F.mse_loss(x, t, reduction=r),
    "l1_loss": lambda x, t, r: F.l1_loss(x, t, reduction=r),
    "smooth_l1_loss": lambda x, t, r: F.smooth_l1_loss(x, t, reduction=r, beta=0.7),
    "huber_loss": lambda x, t, r: F.huber_loss(x, t, reduction=r, delta=0.6),
    "bce_with_logits": lambda x, t, r: F.binary_cross_entropy_with_logits(
        x, t.sigmoid(), reduction=r
    ),
    "binary_cross_entropy": lambda x, t, r: F.binary_cross_entropy(
        x.sigmoid(), t.sigmoid(), reduction=r
    ),
    "kl_div": lambda x, t, r: F.kl_div(x, t.sigmoid(), reduction=r),
}


@settings(max_examples=25, deadline=None)
@given(
    name=st.sampled_from(sorted(ELEMENTWISE)),
    shape=st.lists(st.integers(1, 4), min_size=1, max_size=3),
    mask=st.lists(st.booleans(), min_size=3, max_size=3),
    drop=st.integers(0, 2),
    reduction=st.sampled_from(["mean", "sum", "none"]),
    dtype=st.sampled_from([torch.float64, torch.float32]),
)
def test_elementwise_loss_shapes(name, shape, mask, drop, reduction, dtype):
    """The elementwise losses over drawn shapes with the target broadcast (expanded to the
    input's shape, as torch requires of the binary losses), every reduction, float64 and
    float32 (end to end, float32 tolerance)."""
    tshape = [1 if m else s for s, m in zip(shape, mask)][drop:] or [1]
    x, t = _rand(*shape).to(dtype), _rand(*tshape).to(dtype)
    grad_mask = [True, name not in ("bce_with_logits", "binary_cross_entropy")]
    if name == "kl_div":
        grad_mask[1] = False  # xlogy(t, t)'s gradient: not modelled, falls back
    fn = ELEMENTWISE[name]
    tol = {} if dtype == torch.float64 else {"rtol": 1e-5, "atol": 1e-6}
    check(
        lambda x, t: fn(x, t.expand(x.shape), reduction),
        [x, t],
        grad_mask=grad_mask,
        **tol,
    )


@settings(max_examples=20, deadline=None)
@given(
    n=st.integers(1, 6),
    c=st.integers(2, 5),
    weighted=st.booleans(),
    smoothing=st.sampled_from([0.0, 0.1, 0.45]),
    ignore=st.sampled_from([None, 0, 1]),
    reduction=st.sampled_from(["mean", "sum", "none"]),
    probs=st.booleans(),
    dtype=st.sampled_from([torch.float64, torch.float32]),
)
def test_cross_entropy_forms(
    n, c, weighted, smoothing, ignore, reduction, probs, dtype
):
    """cross_entropy over drawn (N, C), class weights, label smoothing, an ignored class and
    class-probability targets."""
    g = torch.Generator().manual_seed(n * 10 + c)
    x = torch.randn(n, c, generator=g).to(dtype)
    kw = {"reduction": reduction, "label_smoothing": smoothing}
    if weighted:
        kw["weight"] = (torch.rand(c, generator=g) + 0.5).to(dtype)
    if probs:
        t = torch.randn(n, c, generator=g).to(dtype)
        inputs, mask = [x, t], [True, True]

        def fn(x, t):
            return F.cross_entropy(x, t.softmax(-1), **kw)
    else:
        t = torch.randint(0, c, (n,), generator=g)
        if ignore is not None:
            kw["ignore_index"] = ignore
            if reduction == "mean":
                t[0] = (
                    ignore + 1
                ) % c  # at least one row counted (else NaN both sides)
        inputs, mask = [x, t], [True, False]

        def fn(x, t):
            return F.cross_entropy(x, t, **kw)

    tol = {} if dtype == torch.float64 else {"rtol": 1e-5, "atol": 1e-6}
    check(fn, inputs, grad_mask=mask, **tol)


# ---- training equivalence: a small model trained on each loss, compiled vs eager.


class Net(nn.Module):
    def __init__(self, out=4):
        super().__init__()
        self.a = nn.Linear(6, 16)
        self.b = nn.Linear(16, out)

    def forward(self, x):
        return self.b(torch.tanh(self.a(x)))


class Pair(nn.Module):
    def __init__(self):
        super().__init__()
        self.x = Net()
        self.y = Net()

    def forward(self, x):
        return self.x(x), self.y(x.flip(0))


W = torch.tensor([1.0, 2.0, 0.5, 1.5])
PW = torch.tensor([0.5, 2.0, 1.0, 3.0])


def _cls(g):
    return torch.randint(0, 4, (8,), generator=g)


def _real(g):
    return torch.randn(8, 4, generator=g)


def _prob(g):
    return torch.rand(8, 4, generator=g)


def _sign(g):
    return torch.randint(0, 2, (8,), generator=g).float() * 2 - 1


# name: (loss of (model output, target), target maker, pair model).
TRAINING = {
    "l1_loss": (F.l1_loss, _real, False),
    "smooth_l1_loss": (lambda o, t: F.smooth_l1_loss(o, t, beta=0.5), _real, False),
    "huber_loss": (lambda o, t: F.huber_loss(o, t, delta=0.5), _real, False),
    "binary_cross_entropy": (
        lambda o, t: F.binary_cross_entropy(torch.sigmoid(o), t),
        _prob,
        False,
    ),
    "bce_with_logits_pos_weight": (
        lambda o, t: F.binary_cross_entropy_with_logits(o, t, pos_weight=PW),
        _prob,
        False,
    ),
    "kl_div": (
        lambda o, t: F.kl_div(
            F.log_softmax(o, -1), t.softmax(-1), reduction="batchmean"
        ),
        _real,
        False,
    ),
    "cross_entropy_weight_smoothing": (
        lambda o, t: F.cross_entropy(o, t, weight=W, label_smoothing=0.1),
        _cls,
        False,
    ),
    "cross_entropy_smoothing_ignore": (
        lambda o, t: F.cross_entropy(o, t, label_smoothing=0.2, ignore_index=1),
        _cls,
        False,
    ),
    "cosine_embedding_loss": (
        lambda o, t: F.cosine_embedding_loss(o[0], o[1], t, margin=0.1),
        _sign,
        True,
    ),
    "margin_ranking_loss": (
        lambda o, t: F.margin_ranking_loss(o[0].sum(-1), o[1].sum(-1), t, margin=0.2),
        _sign,
        True,
    ),
    "triplet_margin_loss": (
        lambda o, t: F.triplet_margin_loss(o[0], o[1], t),
        _real,
        True,
    ),
}


def _opt(kind, params):
    if kind == "sgd":
        return torch.optim.SGD(params, lr=0.05, momentum=0.9)
    return torch.optim.AdamW(params, lr=1e-2)


def _steps(model, step_fn, make_target, opt_kind, steps=3):
    opt = _opt(opt_kind, model.parameters())
    trace = []
    for step in range(steps):
        g = torch.Generator().manual_seed(100 + step)
        x = torch.randn(8, 6, generator=g)
        loss = step_fn(x, make_target(g))
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        grads = {k: p.grad.clone() for k, p in model.named_parameters()}
        opt.step()
        opt.zero_grad(set_to_none=True)
        state = {k: v.detach().clone() for k, v in model.state_dict().items()}
        trace.append((loss.detach(), grads, state))
    return trace


@pytest.mark.parametrize("opt_kind", ["sgd", "adamw"])
@pytest.mark.parametrize("name", sorted(TRAINING))
def test_loss_training_matches_eager(name, opt_kind):
    loss, make_target, pair = TRAINING[name]
    torch.manual_seed(0)
    base = Pair() if pair else Net()
    m_e, m_c = copy.deepcopy(base), copy.deepcopy(base)
    torchferro.compiler.reset()
    _aot.reset()
    eager = _steps(m_e, lambda x, t: loss(m_e(x), t), make_target, opt_kind)
    compiled = _steps(
        m_c, torchferro.compile(lambda x, t: loss(m_c(x), t)), make_target, opt_kind
    )
    for step, ((le, ge, se), (lc, gc, sc)) in enumerate(zip(eager, compiled)):
        torch.testing.assert_close(lc, le, rtol=1e-5, atol=1e-6, msg=f"loss {step}")
        for k in ge:
            torch.testing.assert_close(gc[k], ge[k], rtol=1e-4, atol=1e-5)
        for k in se:
            torch.testing.assert_close(sc[k], se[k], rtol=1e-4, atol=1e-5)
    assert _aot.counters["fallback"] == 0, _aot.fallback_reasons
    g = torch.Generator().manual_seed(100)
    oracle_model = copy.deepcopy(base)
    oracle = torch_compile_graphs(
        lambda x, t: loss(oracle_model(x), t),
        torch.randn(8, 6, generator=g),
        make_target(g),
    )
    assert 1 <= _aot.counters["compiled"] <= oracle
    assert _aot.counters["backward"] == 3 * _aot.counters["compiled"]
