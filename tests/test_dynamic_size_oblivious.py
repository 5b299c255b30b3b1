"""Issue 18, session 27: automatic dynamic's whole-tensor rule and size-oblivious symbols.

With ``dynamic=None`` a recompile makes every dimension of a tensor with a changed size dynamic
(``config.automatic_dynamic_whole_tensor``), and those symbols may be 1 in the same graph
(``config.automatic_dynamic_size_oblivious``): a batch size and a length over batch 1..8 then
cost two compiles in any order, where torch.compile makes three or four. Where an op answers
differently at 1 (``squeeze``, a broadcast of that size against another, ``expand``), or the
program branches on it, the size must not share the graph: the symbol is guarded at least 2,
or pinned to 1, and every value must be eager's. Counts are exact (checked against
torch.compile's where they differ on purpose), values compared with eager at every call.
"""

from __future__ import annotations

import hypothesis.strategies as st
import pytest
import torch
import torch._dynamo
import torchferro
import torchferro.compiler
from hypothesis import given, note
from programs.compare import counts_over, generated
from programs.dynamic import grid_orders

BATCHES = [1, 2, 8]
LENGTHS = [8, 9, 33]


def _orders():
    return {
        **grid_orders(BATCHES, LENGTHS),
        "batch_2_then_8": [(2, 9), (2, 33), (8, 9), (8, 33)],
        "one_last": [(8, 9), (8, 33), (2, 8), (1, 8), (1, 33)],
    }


ORDERS = _orders()


@pytest.fixture(autouse=True)
def _policy():
    cfg = torchferro.config
    old = (
        cfg.automatic_dynamic_shapes,
        cfg.automatic_dynamic_whole_tensor,
        cfg.automatic_dynamic_size_oblivious,
    )
    cfg.automatic_dynamic_shapes = True
    cfg.automatic_dynamic_whole_tensor = True
    cfg.automatic_dynamic_size_oblivious = True
    yield
    (
        cfg.automatic_dynamic_shapes,
        cfg.automatic_dynamic_whole_tensor,
        cfg.automatic_dynamic_size_oblivious,
    ) = old


def _calls(shapes, *, n=1):
    gen = torch.Generator().manual_seed(0)
    return [tuple(torch.randn(s, generator=gen) for _ in range(n)) for s in shapes]


def rows(x):
    return torch.softmax(x, -1) * 2 + x.mean(0)


@pytest.mark.parametrize("order", sorted(ORDERS))
def test_two_compiles_over_batch_and_length_in_any_order(order):
    """The static first graph, then one over every batch (1 included) and length."""
    tc, fc = counts_over(rows, _calls(ORDERS[order]))
    assert fc.n == 2, f"torchferro {fc.n}, torch.compile {tc.n}"
    assert fc.n <= tc.n


@pytest.mark.parametrize("order", ["batch_major", "length_major", "one_last"])
def test_batch_one_on_the_inductor_equals_eager(order):
    """On the inductor, an assignment with a size-oblivious symbol at 1 runs kernels of its
    own (the graph specialized there); every call matches eager, two entries."""
    torchferro.compiler.reset()
    f = torchferro.compile(rows)
    for (x,) in _calls(ORDERS[order]):
        torch.testing.assert_close(f(x), rows(x))
    assert len(torchferro.compiler.cache_entries(f)) == 2
    torchferro.compiler.reset()


def test_the_recompile_logs_the_sizes_that_come_along(caplog):
    import logging

    torchferro.compiler.reset()
    f = torchferro.compile(rows, backend="eager")
    with caplog.at_level(logging.INFO, logger="torchferro.dynamic"):
        for (x,) in _calls([(1, 8), (1, 9)]):
            torch.testing.assert_close(f(x), rows(x))
    msgs = [r.getMessage().split(" (function ")[0] for r in caplog.records]
    msgs = [m for m in msgs if m.startswith("automatic dynamic")]
    assert msgs[0] == "automatic dynamic: L['x'] size(1) 8 -> 9", msgs
    assert msgs[1].startswith("automatic dynamic: L['x'] size(0) 1 (whole tensor"), msgs
    guards = torchferro.compiler.cache_entries(f)[0]["guards"]
    assert "SHAPE_ENV 1 <= L['x'].size(0)" in guards, guards
    assert "SHAPE_ENV 1 <= L['x'].size(1)" in guards, guards
    torchferro.compiler.reset()


def test_torchs_rule_when_both_are_off():
    torchferro.config.automatic_dynamic_whole_tensor = False
    torchferro.config.automatic_dynamic_size_oblivious = False
    tc, fc = counts_over(rows, _calls(ORDERS["batch_major"]))
    assert fc.n == tc.n == 3


# --- sizes that must not share a graph with 1 ---------------------------------------------------


def squeezed(x):
    return x.squeeze(0) * 2


def branch_on_one(x):
    if x.size(0) == 1:
        return x * 2
    return x - 1


def expanded(x):
    return x.expand(4, -1) + 1


def sliced(x):
    return x[1:] * 3 + x.sum(0)


def viewed(x):
    b, t = x.shape
    return x.reshape(b * t).view(b, t, 1).sum(-1) + b


def broadcast_pair(x, y):
    return x + y


# Each program over shapes where batch 1 comes at the trace and after it; the counts are
# torchferro's, checked against torch.compile's (at most).
MUST_DIFFER = [
    (squeezed, [(2, 8), (2, 9), (1, 9), (1, 10), (3, 10)], 3),
    (squeezed, [(1, 8), (1, 9), (2, 9), (3, 10), (1, 11)], 3),
    (branch_on_one, [(2, 8), (2, 9), (1, 9), (1, 10), (3, 10)], 3),
    (branch_on_one, [(1, 8), (1, 9), (2, 9), (3, 10), (1, 11)], 3),
    (expanded, [(1, 8), (1, 9), (4, 9), (1, 10), (4, 10)], 3),
    (sliced, [(3, 8), (3, 9), (1, 9), (5, 10), (1, 3)], 3),
    (viewed, [(1, 8), (1, 9), (3, 9), (1, 10), (4, 10)], 2),
]


@pytest.mark.parametrize(
    "prog,shapes,graphs", MUST_DIFFER, ids=lambda v: getattr(v, "__name__", "")
)
def test_a_trace_that_depends_on_one_keeps_it_apart(prog, shapes, graphs):
    tc, fc = counts_over(prog, _calls(shapes), eager_errors=True)
    assert fc.n == graphs, f"torchferro {fc.n}, torch.compile {tc.n}"
    assert fc.n <= tc.n


def test_a_size_one_broadcast_against_another_input_recompiles():
    """``x`` of batch 1 broadcast against ``y`` of batch 4: not one graph with ``x``'s batch
    equal to ``y``'s; values are eager's at every call."""
    pairs = [
        ((1, 8), (4, 8)),
        ((1, 9), (4, 9)),
        ((4, 9), (4, 9)),
        ((3, 10), (1, 10)),
        ((1, 7), (1, 7)),
    ]
    gen = torch.Generator().manual_seed(0)
    calls = [
        (torch.randn(a, generator=gen), torch.randn(b, generator=gen)) for a, b in pairs
    ]
    tc, fc = counts_over(broadcast_pair, calls)
    assert fc.n <= tc.n, f"torchferro {fc.n}, torch.compile {tc.n}"
    torchferro.compiler.reset()
    f = torchferro.compile(broadcast_pair)
    for x, y in calls:
        torch.testing.assert_close(f(x, y), broadcast_pair(x, y))
    torchferro.compiler.reset()


# --- generated: programs over drawn shape sequences ---------------------------------------------

STEPS = [
    "x = x.softmax(-1)",
    "x = x * x.sum(0, keepdim=True)",
    "x = x - x.mean(1, keepdim=True)",
    "x = x.reshape(x.shape[0] * x.shape[1]).view(x.shape)",
    "x = x.squeeze(0) if x.dim() == 2 else x",
    "x = x * 2 if x.size(0) == 1 else x + 1",
    "x = x[1:] if x.dim() == 2 else x",
    "x = torch.cat([x, x], dim=0)",
    "x = x.transpose(0, 1).contiguous() if x.dim() == 2 else x",
    "x = x + torch.arange(x.size(-1), dtype=x.dtype)",
    "x = x.unsqueeze(0).expand(2, *x.shape).sum(0)",
]


def _make(steps):
    lines = (
        ["def program(x):"]
        + ["    " + STEPS[s] for s in steps]
        + ["    return x, x.shape"]
    )
    src = "\n".join(lines)
    scope = {"torch": torch}
    exec(compile(src, "<generated>", "exec"), scope)  # noqa: S102 (generated test programs)
    return scope["program"], src


@generated(10)
@given(
    steps=st.lists(st.integers(0, len(STEPS) - 1), min_size=1, max_size=3),
    shapes=st.lists(
        st.tuples(st.integers(1, 8), st.integers(1, 6)), min_size=2, max_size=5
    ),
)
def test_generated_shape_sequences_match_eager(steps, shapes):
    """Values (and errors) are eager's at every call; graph count at most torch.compile's."""
    program, src = _make(steps)
    note(src)
    note(f"shapes {shapes}")
    tc, fc = counts_over(program, _calls(shapes), eager_errors=True)
    note(f"graphs: torch.compile {tc.n}, torchferro {fc.n}")
    assert not tc.wrong
    assert fc.n <= tc.n, f"torchferro {fc.n}, torch.compile {tc.n}"
