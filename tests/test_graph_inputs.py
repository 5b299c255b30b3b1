"""How a compiled entry fetches its graph inputs on each call: a cache hit that calls the graph
straight from the hook hands it the inputs the guard check's walk fetched
(`GuardTree::check_fetching`); the transformed code's call of the graph reads them in one walk over
their sources merged into a trie (`tracer/src/runtime/inputs.rs`). Either way each shared prefix
is read once.

Llama's forward iterates `self.layers[: config.num_hidden_layers]`: a `ModuleList` slice, which
builds a new `ModuleList` (a Python `Module.__init__`) on every read. Its layers' parameters are
graph inputs reached through that slice; reading each input's path from its root built the slice
once per parameter on every call."""

import pytest
import torch
from torch import nn

import torchferro


class CountingList(nn.ModuleList):
    """A `ModuleList` that counts its constructions (a slice constructs one)."""

    made = 0

    def __init__(self, modules=None):
        type(self).made += 1
        super().__init__(modules)


class Tower(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = CountingList(
            nn.Sequential(nn.Linear(8, 8), nn.LayerNorm(8)) for _ in range(3)
        )
        self.n = 2

    def forward(self, x):
        for layer in self.layers[: self.n]:
            x = torch.relu(layer(x))
        return x


@pytest.fixture(autouse=True)
def _reset():
    torchferro.compiler.reset()
    yield
    torchferro.compiler.reset()


@pytest.fixture
def direct_call():
    before = torchferro.config.direct_call
    yield
    torchferro.config.direct_call = before


@pytest.mark.parametrize("direct", [True, False], ids=["direct", "transformed_code"])
@pytest.mark.parametrize("backend", ["inductor", "eager"])
def test_shared_prefix_read_once_per_call(backend, direct, direct_call):
    torchferro.config.direct_call = direct
    torch.manual_seed(0)
    m = Tower().eval()
    x = torch.randn(4, 8)
    compiled = torchferro.compile(m, backend=backend)
    with torch.no_grad():
        expected = m(x)
        torch.testing.assert_close(compiled(x), expected)
        CountingList.made = 0
        m(x)
        eager_made = CountingList.made
        CountingList.made = 0
        out = compiled(x)
    torch.testing.assert_close(out, expected)
    assert eager_made == 1
    # The 8 parameters of the two sliced layers are graph inputs under `layers[:2]`. A direct
    # call runs the graph on what the guard check's walk fetched: one slice per call, as eager.
    # Through the transformed code, the graph reads its inputs in a walk of its own: one more.
    # (Each input's path read from its root made 8 + 1.)
    assert CountingList.made == (1 if direct else 2)


def test_inputs_follow_their_objects():
    """Two entries of one trie node stay distinct inputs, and a parameter replaced between calls
    (same type and layout, so the guards hold) is read again, not kept from the first call."""
    torch.manual_seed(0)
    m = Tower().eval()
    x = torch.randn(4, 8)
    compiled = torchferro.compile(m)
    with torch.no_grad():
        torch.testing.assert_close(compiled(x), m(x))
        lin = m.layers[1][0]
        lin.weight.copy_(torch.randn(8, 8))
        lin.bias = nn.Parameter(torch.randn(8))
        torch.testing.assert_close(compiled(x), m(x))
