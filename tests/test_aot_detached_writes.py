"""Writes through a detached alias on the compiled backward (session 32).

``x.detach().mul_(3)`` changes ``x``'s values without autograd: eager records nothing for the
write (the alias requires no grad), and ``x`` keeps its autograd node, so later uses read the
new values and still differentiate into ``x`` as if it had not been written, as a write under
``no_grad`` does (``fx/src/autodiff/writes.rs``: such a write is a kept write). Functionalized,
``x``'s new value was a scatter of the detached source, which cut the gradient through ``x``
(zero gradients for every element written), and a write through the detached alias of a leaf
input raised "a view of a leaf Variable that requires grad is being used in an in-place
operation", which eager allows. Eager's version-counter error (a value saved before the write
and read by the backward) stays eager's.
"""

from __future__ import annotations

import pytest
import torch
import torchferro
import torchferro.compiler

aten = torch.ops.aten


def _intermediate_written(w):
    x = w * 2
    y = x.detach()
    y.add_(1)
    return (x * y).sum() + x.exp().sum()


def _row_of_the_alias_zeroed(w):
    x = w * 2
    x.detach()[0].zero_()
    return (x * x).sum()


def _alias_of_a_row(w):
    x = w * 2
    x[1].detach().mul_(2)
    return (x * x.cos()).sum()


def _leaf_input_written(w):
    w.detach().mul_(2)
    return (w * w).sum()


def _aten_detach(w):
    x = w.sin()
    aten.detach(x).mul_(3)
    return (x * x).sum()


def _saved_before_the_write(w):
    # `sin` saves x for its backward; the write bumps x's version: eager raises at backward.
    x = w * 2
    z = x.sin()
    x.detach().mul_(3)
    return z.sum() + (x * x).sum()


PROGRAMS = [
    _intermediate_written,
    _row_of_the_alias_zeroed,
    _alias_of_a_row,
    _leaf_input_written,
    _aten_detach,
    _saved_before_the_write,
]


def _run(fn, w, backend=None):
    try:
        loss = fn(w) if backend is None else torchferro.compile(fn, backend=backend)(w)
        loss.backward()
    except RuntimeError as e:
        return None, str(e)
    return loss.detach(), None


@pytest.mark.parametrize("backend", ("aot_eager", "inductor"))
@pytest.mark.parametrize("fn", PROGRAMS, ids=lambda f: f.__name__.strip("_"))
def test_a_write_through_a_detached_alias_keeps_the_gradient(fn, backend):
    w0 = torch.arange(8.0).reshape(2, 4) / 4 - 1
    we, wc = w0.clone().requires_grad_(), w0.clone().requires_grad_()
    torchferro.compiler.reset()
    want, want_err = _run(fn, we)
    got, got_err = _run(fn, wc, backend)
    torchferro.compiler.reset()
    if want_err is not None:
        assert got_err is not None and got_err[:40] == want_err[:40], (
            got_err,
            want_err,
        )
        return
    assert got_err is None, got_err
    torch.testing.assert_close(got, want)
    torch.testing.assert_close(wc.detach(), we.detach())
    torch.testing.assert_close(wc.grad, we.grad)
