"""Session 28 (hunt28): an input written in place by an inference graph on the inductor moves its
version counter as eager's in-place ops do (``backend/functional.rs``
``FunctionalRun::bump_versions``).

The kernels store through the data pointer, which moves nothing. Before, an EMA or optimizer
update compiled under ``no_grad`` (``p.mul_(0.9).add_(q, alpha=0.1)``) left the counter where it
was, so a backward that had saved the tensor before the update read the new value silently (a
wrong gradient) where eager raises "one of the variables needed for gradient computation has
been modified by an inplace operation" (a GAN's discriminator stepped before the generator's
backward). Each case compares the version counters' moves, the values and the error with
eager's; the generator draws sequences of in-place writes on one or two inputs."""

from __future__ import annotations

import hypothesis.strategies as st
import pytest
import torch
from hypothesis import given, settings

import torchferro


@pytest.fixture(autouse=True)
def _fresh():
    torchferro.compiler.reset()
    yield
    torchferro.compiler.reset()


def _ema(w, src):
    with torch.no_grad():
        w.mul_(0.9).add_(src, alpha=0.1)


@torch.no_grad()
def _clip_and_shift(w):
    w.clamp_(-0.5, 0.5)
    w.add_(1)


def _outer_no_grad(w):
    w.mul_(2)


@pytest.mark.parametrize(
    "update", [_ema, _clip_and_shift], ids=["ema_switch", "decorated"]
)
def test_a_saved_tensor_updated_by_a_compiled_no_grad_write_raises_as_eager(update):
    runs = []
    for compiled in (False, True):
        torchferro.compiler.reset()
        w = torch.linspace(-1, 1, 6).requires_grad_()
        src = torch.ones(6)
        y = (w * w).sum()  # saves w for the backward
        v0 = w._version
        f = torchferro.compile(update) if compiled else update
        f(w, src) if update is _ema else f(w)
        moved = w._version - v0
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.backward()
        runs.append((moved, w.detach().clone()))
    (m_e, v_e), (m_c, v_c) = runs
    assert m_c == m_e and m_e > 0
    torch.testing.assert_close(v_c, v_e)


def test_an_optimizer_step_compiled_alone_moves_the_parameters_versions():
    """A compiled ``opt.step()`` between a forward and its backward (an optimizer stepped too
    early): eager's error, not a gradient of the stepped weights."""
    for compiled in (False, True):
        torchferro.compiler.reset()
        torch.manual_seed(0)
        lin = torch.nn.Linear(4, 3)
        opt = torch.optim.SGD(lin.parameters(), lr=0.1, momentum=0.9)
        x = torch.randn(
            5, 4, requires_grad=True
        )  # the product's backward saves the weight
        lin(x).pow(2).sum().backward()
        step = torchferro.compile(opt.step) if compiled else opt.step
        versions = [p._version for p in lin.parameters()]
        loss = lin(x).tanh().sum()
        step()
        assert all(p._version > v for p, v in zip(lin.parameters(), versions))
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            loss.backward()


def test_outer_no_grad_and_inference_mode():
    w = torch.randn(4)
    f = torchferro.compile(_outer_no_grad)
    with torch.no_grad():
        v0 = w._version
        f(w)
        assert w._version - v0 == 1
    with torch.inference_mode():
        t = torch.randn(4)
        f(t)  # an inference tensor has no version counter: nothing to move, no error
    torch.testing.assert_close(t.clone(), t)


# -- generator ---------------------------------------------------------------------------------

_OPS = {
    "mul_": lambda t, o, k: t.mul_(k),
    "add_other": lambda t, o, k: t.add_(o, alpha=k),
    "copy_": lambda t, o, k: t.copy_(o * k),
    "index": lambda t, o, k: t.__setitem__(slice(1, 3), k),
    "clamp_": lambda t, o, k: t.clamp_(-k, k),
    "zero_": lambda t, o, k: t.zero_(),
    "view_write": lambda t, o, k: t.view(-1)[::2].mul_(k),
}


def _program(steps, grad_mode):
    """The writes inside a ``no_grad`` block (``switch``: the inputs require grad) or as they
    are (the caller's ``no_grad``); the result is read inside the block, so no output carries a
    gradient and the graph runs on the inductor as an inference graph."""

    def writes(a, b):
        for target, op, k in steps:
            t, o = (a, b) if target == 0 else (b, a)
            _OPS[op](t, o, k)
        return a.sum() + b.sum()

    def switch(a, b):
        with torch.no_grad():
            return writes(a, b)

    return switch if grad_mode == "switch" else writes


@settings(max_examples=25, deadline=None, derandomize=True)
@given(
    steps=st.lists(
        st.tuples(
            st.integers(0, 1),
            st.sampled_from(sorted(_OPS)),
            st.sampled_from([0.5, 2.0, -1.0]),
        ),
        min_size=1,
        max_size=4,
    ),
    grad_mode=st.sampled_from(["switch", "outer_no_grad"]),
)
def test_generated_write_sequences_move_versions_as_eager(steps, grad_mode):
    """Writes drawn on two inputs (parameters under a ``no_grad`` block, or plain tensors under
    an outer ``no_grad``): each input's version counter moves as far as eager's, values equal."""
    runs = []
    for compiled in (False, True):
        torchferro.compiler.reset()
        g = torch.Generator().manual_seed(1)
        a = torch.randn(2, 4, generator=g)
        b = torch.randn(2, 4, generator=g)
        if grad_mode == "switch":
            a.requires_grad_()
            b.requires_grad_()
        fn = _program(steps, grad_mode)
        f = torchferro.compile(fn) if compiled else fn
        v0 = (a._version, b._version)
        if grad_mode == "switch":
            out = f(a, b)
        else:
            with torch.no_grad():
                out = f(a, b)
        runs.append(
            (
                (a._version - v0[0], b._version - v0[1]),
                out.detach(),
                a.detach().clone(),
                b.detach().clone(),
            )
        )
    (ve, *xe), (vc, *xc) = runs
    assert vc == ve, (steps, vc, ve)
    for got, want in zip(xc, xe):
        torch.testing.assert_close(got, want)
