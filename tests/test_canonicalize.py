"""Calls spelled every way torch allows reach the inductor as one target per op
(``fx/src/passes/canonicalize.rs``): the compiled results and the writes into inputs must be
eager's whatever the spelling (functions, methods, operators and their reflected and in-place
forms, aliases, ``inplace=True``, keywords given by name)."""

from __future__ import annotations

import operator

import pytest
import torch
import torch.nn.functional as F
import torchferro
from conftest import assert_same


def spellings_of_add(x, y):
    a = torch.add(x, y)
    b = x.add(y)
    c = operator.add(x, y)
    d = 2 + x  # x.__radd__(2)
    e = 2 - x  # x.__rsub__(2): does not commute
    f = torch.add(x, y, alpha=3)
    return a, b, c, d, e, f


def aliases(x, y):
    return (
        torch.absolute(x),
        x.swapaxes(0, 1),
        torch.special.expit(x),
        torch.multiply(x, y),
        torch.concat([x, y]),
        torch.clip(x, -0.5, 0.5),
        x.greater(y),
    )


def keywords(x, y):
    return x.softmax(dim=1), torch.clamp(x, max=0.2), x.transpose(dim0=0, dim1=1)


def inplace_on_intermediate(x, y):
    t = x * 2
    t += y  # operator.iadd
    t.__imul__(y)
    torch.relu_(t)
    return F.relu(t - 1, inplace=True)


def inplace_on_inputs(x, y):
    torch.relu_(x)
    y.absolute_()
    return x + y


def functional_inplace_on_input(x, y):
    F.relu(x, inplace=True)
    return x * y


PROGRAMS = [
    spellings_of_add,
    aliases,
    keywords,
    inplace_on_intermediate,
    inplace_on_inputs,
    functional_inplace_on_input,
]


@pytest.mark.parametrize("backend", ["inductor", "eager"])
@pytest.mark.parametrize("fn", PROGRAMS, ids=[p.__name__ for p in PROGRAMS])
def test_spellings_match_eager(fn, backend):
    torch.manual_seed(0)
    x, y = torch.randn(3, 3), torch.randn(3, 3)
    ex, ey = x.clone(), y.clone()
    cx, cy = x.clone(), y.clone()
    expected = fn(ex, ey)
    actual = torchferro.compile(fn, backend=backend)(cx, cy)
    assert_same(expected, actual)
    assert torch.equal(ex, cx) and torch.equal(ey, cy)
