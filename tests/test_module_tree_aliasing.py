"""The module-tree generators (`parameters()`, `modules()`, `children()`, ...) skip an object met
before: tied weights, a submodule registered under two names. Which objects are one decides what
they yield, and the trace folds the walk, so a later call whose tree aliases differently (weights
untied, a shared submodule replaced) must not reuse the graph. Each case is compared with eager
(and the graph count with torch.compile's) across such a change. The walk is torch's only where
no module on it overrides a tree method (`parameters()` calls `named_parameters`, which calls
`named_modules`, which recurses through each child's own): an override is what runs."""

from __future__ import annotations

import pytest
import torch
import torch.nn as nn
import torchferro


def _fill(m: nn.Module, value: float) -> nn.Module:
    with torch.no_grad():
        for p in m.parameters():
            p.fill_(value)
    return m


class SharedChild(nn.Module):
    """`b` is `a`: `parameters()` yields `a`'s weights once."""

    def __init__(self):
        super().__init__()
        self.a = _fill(nn.Linear(2, 2), 0.5)
        self.b = self.a

    def forward(self, x):
        return sum(p.sum() for p in self.parameters()) + x


class TiedWeight(nn.Module):
    """`b.weight` is `a.weight`: `parameters()` yields it once."""

    def __init__(self):
        super().__init__()
        self.a = _fill(nn.Linear(2, 2), 0.5)
        self.b = nn.Linear(2, 2, bias=False)
        self.b.weight = self.a.weight

    def forward(self, x):
        return sum(p.sum() for p in self.parameters()) + x


class CountModules(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(2, 2)
        self.b = self.a

    def forward(self, x):
        return x * len(list(self.modules()))


class CountChildren(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.ReLU()
        self.b = self.a

    def forward(self, x):
        return x * len(list(self.children()))


class NamedBuffers(nn.Module):
    def __init__(self):
        super().__init__()
        buf = torch.full((2,), 3.0)
        self.register_buffer("u", buf)
        self.register_buffer("v", buf)

    def forward(self, x):
        return x + sum(b.sum() for _, b in self.named_buffers())


def _untie_child(m):
    m.b = _fill(nn.Linear(2, 2), 1.0)


def _untie_weight(m):
    m.b.weight = nn.Parameter(torch.ones(2, 2))


def _untie_module(m):
    m.b = nn.Linear(2, 2)


def _untie_relu(m):
    m.b = nn.ReLU()


def _untie_buffer(m):
    m.v = torch.full((2,), 5.0)


def _tie_weight(m):
    m.b.weight = m.a.weight


CASES = {
    "shared_child_untied": (SharedChild, _untie_child),
    "tied_weight_untied": (TiedWeight, _untie_weight),
    "shared_module_counted": (CountModules, _untie_module),
    "shared_child_counted": (CountChildren, _untie_relu),
    "shared_buffer_untied": (NamedBuffers, _untie_buffer),
}


def _run(compile_fn, make, change):
    m = make()
    f = compile_fn(m.forward)
    x = torch.ones(2)
    first = f(x)
    change(m)
    return first, f(x)


@pytest.mark.parametrize("case", list(CASES))
def test_a_walk_over_a_tree_that_aliases_differently_is_not_reused(
    case, counting_backend
):
    make, change = CASES[case]
    expected = _run(lambda f: f, make, change)
    actual = _run(
        lambda f: torchferro.compile(f, backend=counting_backend), make, change
    )
    for e, a in zip(expected, actual):
        torch.testing.assert_close(a, e)
    oracle = _oracle_count(make, change)
    assert counting_backend.count == oracle, counting_backend.describe(0)


def _oracle_count(make, change) -> int:
    torch._dynamo.reset()
    graphs = []

    def backend(gm, example_inputs):
        graphs.append(gm)
        return gm.forward

    _run(lambda f: torch.compile(f, backend=backend), make, change)
    torch._dynamo.reset()
    return len(graphs)


def test_tying_weights_after_the_first_call_is_seen():
    """The other direction: distinct weights become one object."""

    class Untied(TiedWeight):
        def __init__(self):
            super().__init__()
            self.b.weight = nn.Parameter(torch.ones(2, 2))

    expected = _run(lambda f: f, Untied, _tie_weight)
    actual = _run(lambda f: torchferro.compile(f, backend="eager"), Untied, _tie_weight)
    for e, a in zip(expected, actual):
        torch.testing.assert_close(a, e)


def test_the_guard_listing_names_the_distinct_objects():
    m = TiedWeight()
    f = torchferro.compile(m.forward, backend="eager")
    f(torch.ones(2))
    (entry,) = torchferro.compiler.cache_entries(f)
    aliasing = [g for g in entry["guards"] if g.startswith("OBJECT_ALIASING")]
    a, b = "L['self']._modules['a']", "L['self']._modules['b']"
    assert aliasing == [
        f"OBJECT_ALIASING {a}._parameters['weight'] is {b}._parameters['weight']",
        f"OBJECT_ALIASING L['self'], {a}, {b} are distinct objects",
        f"OBJECT_ALIASING {a}._parameters['weight'], {a}._parameters['bias'] "
        "are distinct objects",
    ]


class HidesItsChildren(nn.Module):
    """`named_modules` overridden: the root's walk recurses through it and sees no `l`."""

    def __init__(self):
        super().__init__()
        self.l = nn.Linear(2, 2)

    def named_modules(self, memo=None, prefix="", remove_duplicate=True):
        yield prefix, self


class HoldsAHidingChild(nn.Module):
    def __init__(self):
        super().__init__()
        self.h = HidesItsChildren()

    def forward(self, x):
        return x * len(list(self.modules())) + len(list(self.parameters()))


class NoParameters(nn.Module):
    """`named_parameters` overridden: `parameters()` calls it."""

    def __init__(self):
        super().__init__()
        self.l = nn.Linear(2, 2)

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        yield from ()

    def forward(self, x):
        return x * (1 + len(list(self.parameters())))


@pytest.mark.parametrize("make", [HoldsAHidingChild, NoParameters])
def test_an_overridden_tree_method_is_what_runs(make):
    m = make()
    x = torch.ones(2)
    torch.testing.assert_close(torchferro.compile(m, backend="eager")(x), m(x))


def test_a_child_replaced_by_one_that_overrides_the_walk_is_seen():
    m = HoldsAHidingChild()
    m.h = nn.Linear(2, 2)
    f = torchferro.compile(m, backend="eager")
    x = torch.ones(2)
    torch.testing.assert_close(f(x), m(x))
    m.h = HidesItsChildren()
    torch.testing.assert_close(f(x), m(x))


class CountParameters(nn.Module):
    """Counts what `parameters()` yields: only which objects are one decides the count (the
    group's distinctness, checked over the objects the guard trie's one walk fetched)."""

    def __init__(self):
        super().__init__()
        self.a = nn.Linear(2, 2)
        self.b = nn.Linear(2, 2, bias=False)

    def forward(self, x):
        return x * sum(1 for _ in self.parameters())


def test_tying_weights_fails_the_distinct_group_with_its_reason():
    m = CountParameters()
    f = torchferro.compile(m, backend="eager")
    x = torch.ones(2)
    torch.testing.assert_close(f(x), m(x))
    m.b.weight = m.a.weight
    with torchferro.compiler.set_stance("fail_on_recompile"):
        with pytest.raises(torchferro.RecompileError) as info:
            f(x)
    a, b = "L['self']._modules['a']", "L['self']._modules['b']"
    assert (
        f"- 0/0: {a}._parameters['weight'], {a}._parameters['bias'], "
        f"{b}._parameters['weight'] are distinct objects mismatch: two are one object"
    ) in str(info.value), str(info.value)
    torch.testing.assert_close(f(x), m(x))
    assert f(x)[0].item() == 2.0
