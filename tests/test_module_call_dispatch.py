"""Which function a module call runs: `Module.__call__` runs `self.forward`, so a function set
on the instance (`layer.forward = ...`, as accelerate's hooks and PEFT patch layers) shadows
the class's `forward`, and a class that overrides `__call__` runs its override.

Session 25 (hunt25): both were wrong answers. The tracer called `type(m).forward` for every
module, so a patched forward was ignored on the first call already, and patching a layer after
the first call reused the old graph (no guard saw the instance dict); a `__call__` override was
skipped. Values are eager's, graph counts torch.compile's."""

import types

import pytest
import torch
import torchferro
from programs.counting import compiled_counting
from torch import nn


@pytest.fixture(autouse=True)
def _reset():
    torchferro.compiler.reset()
    torch._dynamo.reset()
    yield
    torchferro.compiler.reset()
    torch._dynamo.reset()


class Inner(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        return self.lin(x) + 1


class Outer(nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = Inner()
        self.act = nn.ReLU()

    def forward(self, x):
        return self.act(self.inner(x)) * 2


def _doubled(self, x):
    return type(self).forward(self, x) * 3 - 1


def _patch_user_method(m):
    m.inner.forward = types.MethodType(_doubled, m.inner)


def _patch_torch_layer(m):
    m.act.forward = lambda t: torch.sigmoid(t)


def _patch_linear(m):
    m.inner.lin.forward = lambda t: t.flip(-1)


def _patch_root(m):
    m.forward = types.MethodType(lambda self, x: self.inner(x) - 5, m)


PATCHES = {
    "user_module": _patch_user_method,
    "torch_layer": _patch_torch_layer,
    "lowered_linear": _patch_linear,
    "root": _patch_root,
}


def _run(compile_fn, patch, before):
    """Three calls: the patch applied before the first (``before``) or after it, then removed
    (``del``) before the third, where the class's forward runs again."""
    torch.manual_seed(0)
    m = Outer()
    x = torch.randn(3, 4)
    if before:
        patch(m)
    compiled, count = compiled_counting(compile_fn, m)
    outs = [compiled(x)]
    if not before:
        patch(m)
    outs.append(compiled(x))
    for sub in m.modules():
        sub.__dict__.pop("forward", None)
    outs.append(compiled(x))
    return outs, count.n


@pytest.mark.parametrize("before", [True, False], ids=["before", "after"])
@pytest.mark.parametrize("where", sorted(PATCHES))
def test_forward_patched_on_the_instance_runs(where, before):
    eager, _ = _run(lambda m, backend: m, PATCHES[where], before)
    ours, graphs = _run(torchferro.compile, PATCHES[where], before)
    _, tc_graphs = _run(
        lambda m, backend: torch.compile(m, backend=backend), PATCHES[where], before
    )
    for a, b in zip(ours, eager):
        torch.testing.assert_close(a, b)
    assert graphs == tc_graphs, f"torchferro {graphs} graphs, torch.compile {tc_graphs}"


class Tripled(nn.Module):
    """A layer whose class overrides `__call__` around `Module.__call__`."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def __call__(self, x, shift=0.0):
        return super().__call__(x) * 3 + shift

    def forward(self, x):
        return self.lin(x)


class UsesTripled(nn.Module):
    def __init__(self):
        super().__init__()
        self.t = Tripled()

    def forward(self, x):
        return self.t(x) + self.t(x, shift=1.0)


def test_call_override_of_a_submodule_runs():
    torch.manual_seed(0)
    m = UsesTripled()
    x = torch.randn(2, 4)
    compiled, count = compiled_counting(torchferro.compile, m)
    torch.testing.assert_close(compiled(x), m(x))
    torch.testing.assert_close(compiled(x), m(x))
    assert count.n == 1


def test_patched_forward_is_guarded_per_instance():
    """Two instances of one class through one compiled function: only one is patched."""
    torch.manual_seed(0)
    a, b = Inner(), Inner()
    a.forward = lambda t: t * 0 + 7

    def f(mod, x):
        return mod(x)

    compiled, count = compiled_counting(torchferro.compile, f)
    x = torch.randn(2, 4)
    for mod in (a, b, a, b):
        torch.testing.assert_close(compiled(mod, x), mod(x))
    assert count.n == 2
