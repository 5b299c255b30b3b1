"""A slice of an `nn.ModuleList` (Llama's `self.layers[: config.num_hidden_layers]`) is a new
`ModuleList` on every call: `ModuleList.__getitem__` runs `Module.__init__`. torch.compile's
guards do not build it: they guard the sliced list's items through the parent's `_modules`. The
trace records the slice with the parent keys it selected (`ModuleListSlice`), guards the parent's
keys, and reads the children (iterated or indexed) through `parent._modules[key]`, so the guard
walk and the input fetch never build the slice. The guards keep their meaning: an item replaced
by another type, an item added or removed recompiles as torch.compile does."""

import pytest
import torch
from torch import nn

import torchferro
from programs.counting import compiled_counting


@pytest.fixture(autouse=True)
def _reset():
    torchferro.compiler.reset()
    torch._dynamo.reset()
    yield
    torchferro.compiler.reset()
    torch._dynamo.reset()


@pytest.fixture
def count_lists(monkeypatch):
    """Counts `ModuleList` constructions (a slice makes one) while keeping the class itself
    (the fast path applies to `ModuleList` exactly, not to subclasses)."""
    made = [0]
    init = nn.ModuleList.__init__

    def counting_init(self, modules=None):
        made[0] += 1
        init(self, modules)

    monkeypatch.setattr(nn.ModuleList, "__init__", counting_init)
    return made


@pytest.fixture
def direct_call():
    before = torchferro.config.direct_call
    yield
    torchferro.config.direct_call = before


class Stack(nn.Module):
    def __init__(self, n=3):
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(8, 8) for _ in range(n))
        self.n = 2

    def forward(self, x):
        for layer in self.layers[: self.n]:
            x = torch.relu(layer(x))
        return x


@pytest.mark.parametrize("direct", [True, False], ids=["direct", "transformed_code"])
@pytest.mark.parametrize("backend", ["inductor", "eager"])
def test_slice_is_not_built_per_call(backend, direct, direct_call, count_lists):
    torchferro.config.direct_call = direct
    torch.manual_seed(0)
    m = Stack().eval()
    x = torch.randn(4, 8)
    compiled = torchferro.compile(m, backend=backend)
    with torch.no_grad():
        expected = m(x)
        torch.testing.assert_close(compiled(x), expected)
        count_lists[0] = 0
        m(x)
        assert count_lists[0] == 1  # eager builds the slice once per call
        count_lists[0] = 0
        for _ in range(3):
            torch.testing.assert_close(compiled(x), expected)
    # Neither the guard check nor the graph's input fetch builds it.
    assert count_lists[0] == 0


def _changes(m):
    """Changes to the list between calls, each followed by a call."""
    yield "first call"
    m.layers[1] = nn.Linear(8, 8)
    yield "a sliced item replaced by one of its type (new weights)"
    m.layers[2] = nn.Tanh()
    yield "an item outside the slice replaced"
    m.layers.append(nn.Linear(8, 8))
    yield "an item added"
    m.layers[0] = nn.Sequential(nn.Linear(8, 8))
    yield "a sliced item replaced by another type"
    del m.layers[0]
    yield "the first item removed"


def _graph_counts(compile_fn):
    torch.manual_seed(0)
    # Left in training mode: a new layer is made in training mode, and a training flag that
    # differs is a change of its own.
    m = Stack()
    x = torch.randn(4, 8)
    compiled, graphs = compiled_counting(compile_fn, m)
    counts = []
    for change in _changes(m):
        with torch.no_grad():
            torch.testing.assert_close(compiled(x), m(x), msg=change)
        counts.append((change, graphs.n))
    return counts


def test_guards_keep_their_meaning_as_torch_compile():
    ours = _graph_counts(torchferro.compile)
    theirs = _graph_counts(torch.compile)
    assert ours == theirs
    # What the oracle does, spelled out: only a change of the keys or of a sliced item's type
    # compiles again.
    assert [n for _, n in ours] == [1, 1, 1, 2, 3, 4]


class Indexed(nn.Module):
    """A slice of a slice, indexed by int and iterated with `enumerate`."""

    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(8, 8) for _ in range(5))

    def forward(self, x):
        inner = self.layers[1:][::2]
        x = inner[-1](x)
        for i, layer in enumerate(inner):
            x = layer(x) * (i + 1)
        return x


def test_nested_slice_and_index(count_lists):
    torch.manual_seed(0)
    m = Indexed()  # training mode, as the layers put in below
    x = torch.randn(4, 8)
    compiled, graphs = compiled_counting(torchferro.compile, m)
    with torch.no_grad():
        torch.testing.assert_close(compiled(x), m(x))
        count_lists[0] = 0
        # inner holds layers 1 and 3.
        m.layers[3] = nn.Linear(8, 8)  # inner[-1]: same type, new weights
        torch.testing.assert_close(compiled(x), m(x))
        assert count_lists[0] == 2  # eager's two slices; the compiled call builds none
        assert graphs.n == 1
        m.layers[4] = nn.Tanh()  # not in inner
        torch.testing.assert_close(compiled(x), m(x))
        assert graphs.n == 1
        m.layers[1] = nn.Sequential(nn.Linear(8, 8))  # inner[0]: another type
        torch.testing.assert_close(compiled(x), m(x))
        assert graphs.n == 2
