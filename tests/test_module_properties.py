"""Session 31 (aot31): a property of a module's class read in compiled code is traced (its
getter inlined, as torch.compile inlines it), not run at trace time and again per call.

A parametrized module's ``weight`` is such a property: it runs the parametrizations. Spectral
norm's runs a power-iteration step that writes its ``_u``/``_v`` buffers, so reading it at trace
time ran that step twice on the compiling call: ``_u`` drifted from eager's after the first call
and every later step's weights differed (6.6e-5 after one SGD step in the probe). Values,
buffers, gradients, how often a getter ran, and graph counts against torch.compile's."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
import torchferro
from programs.counting import Count
from torch import nn


class Counting(nn.Module):
    """A parametrization that counts its calls (a buffer, compared with the module's state)
    and scales the weight."""

    def __init__(self):
        super().__init__()
        self.register_buffer("calls", torch.zeros(()))

    def forward(self, w):
        self.calls.add_(1)
        return w * 2


class WithProperty(nn.Module):
    """A user property with an effect on a buffer, read twice per call."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)
        self.register_buffer("reads", torch.zeros(()))

    @property
    def scale(self):
        self.reads.add_(1)
        return self.fc.weight.abs().mean()

    def forward(self, x):
        return self.fc(x) * self.scale + self.scale


def _spectral():
    return nn.utils.parametrizations.spectral_norm(nn.Linear(8, 4))


def _weight_norm():
    return nn.utils.parametrizations.weight_norm(nn.Linear(8, 4))


def _counting():
    m = nn.Linear(8, 4)
    nn.utils.parametrize.register_parametrization(m, "weight", Counting())
    return m


def _two_parametrizations():
    m = _spectral()
    nn.utils.parametrize.register_parametrization(m, "weight", Counting())
    return m


MODULES = {
    "spectral_norm": _spectral,
    "weight_norm": _weight_norm,
    "counting parametrization": _counting,
    "spectral_norm then counting": _two_parametrizations,
}


def _steps(make, compiler, n=3):
    torch.manual_seed(0)
    m = make()
    opt = torch.optim.SGD(m.parameters(), lr=0.1)
    f = compiler(m)
    out = []
    for i in range(n):
        x = torch.randn(6, 8 if not isinstance(m, WithProperty) else 4)
        opt.zero_grad()
        loss = F.mse_loss(
            f(x), torch.ones(6, m.fc.out_features if hasattr(m, "fc") else 4)
        )
        loss.backward()
        opt.step()
        out.append((loss.detach(), {k: v.clone() for k, v in m.state_dict().items()}))
    return out


@pytest.mark.parametrize("backend", ["eager", "inductor"])
@pytest.mark.parametrize("name", [*MODULES, "user property"])
def test_property_getters_run_as_often_as_eager(name, backend):
    make = WithProperty if name == "user property" else MODULES[name]
    want = _steps(make, lambda m: m)
    torchferro.compiler.reset()
    got = _steps(make, lambda m: torchferro.compile(m, backend=backend))
    for (la, sa), (lb, sb) in zip(got, want, strict=True):
        torch.testing.assert_close(la, lb)
        assert sa.keys() == sb.keys()
        for k in sa:
            torch.testing.assert_close(sa[k], sb[k], msg=k)


@pytest.mark.parametrize("name", [*MODULES, "user property"])
def test_property_graph_counts_match_torch_compile(name):
    make = WithProperty if name == "user property" else MODULES[name]
    ours, theirs = Count(), Count()
    torchferro.compiler.reset()
    _steps(make, lambda m: torchferro.compile(m, backend=ours))
    torch._dynamo.reset()
    _steps(make, lambda m: torch.compile(m, backend=theirs))
    assert ours.n <= theirs.n
