"""Idioms transformers' cache and attention code relies on, each in one graph as torch.compile
makes it: iterating a ``collections.abc.Sequence`` subclass through the mixin ``__iter__`` (made in
the frame, or a fresh view returned by a property of an input, which must not recompile on the
next call), ``super().__init__`` of an object made in the frame, ``Mapping.get`` on
``os.environ`` for an unset variable, ``hasattr`` on a property, and ``n = 0; n += tensor``."""

from __future__ import annotations

import os
from collections.abc import Sequence

import pytest
import torch
import torch._dynamo
import torchferro
from conftest import CountingBackend


class Layers(Sequence):
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if i < 0 or i >= len(self):
            raise IndexError("out of range")
        return i * 10


class Config:
    num_layers = 3

    @property
    def per_layer(self):
        return View(self)


class View(Sequence):
    def __init__(self, config):
        self._config = config

    def __len__(self):
        return self._config.num_layers

    def __getitem__(self, i):
        if i >= len(self):
            raise IndexError(i)
        return i + 1


class Base:
    def __init__(self, layers):
        self.layers = layers


class Derived(Base):
    def __init__(self, n):
        super().__init__(layers=[i for i in range(n)])
        self.n = n


class WithProperty:
    def __init__(self, ok):
        self.ok = ok

    @property
    def sliding(self):
        if not self.ok:
            raise AttributeError("sliding")
        return [False, True]


def iterate_sequence(x):
    total = x
    for v in Layers(3):
        total = total + v
    for a, b in zip(["p", "q"], Layers(2)):
        total = total * (b + 1)
    return total + len(list(Layers(4)))


def iterate_property_view(x, config):
    out = x
    for v in config.per_layer:
        out = out + v
    return out


def super_init(x):
    y = x * 2  # ops on both sides: a break between them would make two graphs
    d = Derived(3)
    return y + sum(d.layers) + d.n


def environ_get(x):
    if os.environ.get("TORCHFERRO_TEST_SURELY_UNSET_VARIABLE", "0") == "1":
        return x - 1
    return x + 1


def hasattr_property(x):
    a = WithProperty(True)
    b = WithProperty(False)
    y = x * 2  # ops on both sides: a break between them would make two graphs
    if hasattr(a, "sliding") and True in a.sliding:
        y = y + a.sliding.index(True)
    if hasattr(b, "sliding"):
        y = y * 100
    return y


def augmented_constant(x):
    buckets = 0
    buckets += (x > 0).to(torch.long) * 4
    scale = 1.5
    scale *= x
    return buckets, scale


CASES = {
    "iterate_sequence": (iterate_sequence, lambda: (torch.randn(3),)),
    "iterate_property_view": (
        iterate_property_view,
        lambda: (torch.randn(3), Config()),
    ),
    "super_init": (super_init, lambda: (torch.randn(3),)),
    "environ_get": (environ_get, lambda: (torch.randn(3),)),
    "hasattr_property": (hasattr_property, lambda: (torch.randn(3),)),
    "augmented_constant": (augmented_constant, lambda: (torch.randn(3),)),
}


@pytest.mark.parametrize("name", CASES)
def test_one_graph_as_torch_compile(name):
    fn, make = CASES[name]
    torchferro.compiler.reset()
    ours = CountingBackend()
    compiled = torchferro.compile(fn, backend=ours)
    for _ in range(
        2
    ):  # a second call, with fresh per-call objects, compiles nothing new
        args = make()
        torch.testing.assert_close(compiled(*args), fn(*args))
    torch._dynamo.reset()
    theirs = CountingBackend()
    reference = torch.compile(fn, backend=theirs)
    for _ in range(2):
        reference(*make())
    torch._dynamo.reset()
    torchferro.compiler.reset()
    assert len(theirs.graphs) == 1
    assert len(ours.graphs) == 1
