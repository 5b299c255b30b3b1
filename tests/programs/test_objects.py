"""Tracked user objects (instances made inside the compiled frame): the class's methods are
guarded, so replacing one after compiling is seen; a rebuilt object is a fresh object of the
class on every call, with its attributes in the order they were written."""

from __future__ import annotations

import torch
import torchferro
from conftest import CountingBackend


class K:
    def __init__(self, t):
        self.t = t

    def f(self):
        return self.t + 1


def test_replacing_a_method_recompiles():
    torchferro.compiler.reset()
    backend = CountingBackend()

    def fn(x):
        return K(x).f()

    c = torchferro.compile(fn, backend=backend)
    x = torch.randn(3)
    original = K.f
    try:
        assert torch.equal(c(x), x + 1)
        K.f = lambda self: self.t * 10
        assert torch.equal(c(x), x * 10)
        assert len(backend.graphs) == 2
    finally:
        K.f = original


def test_rebuilt_object_is_fresh_each_call():
    torchferro.compiler.reset()

    def fn(x):
        k = K(x.neg())
        k.z = 1
        k.a = x
        return k

    c = torchferro.compile(fn, backend=CountingBackend())
    x = torch.randn(3)
    a, b = c(x), c(x)
    assert a is not b and type(a) is K
    assert list(vars(a)) == ["t", "z", "a"]
    assert torch.equal(a.t, -x) and a.a is x and a.z == 1
