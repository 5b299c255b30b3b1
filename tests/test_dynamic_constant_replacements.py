"""Replacements by constants in the shape environment (issue 18; docs/dynamic-shapes.md, "The
shape environment").

A size symbol the trace decides equal to a constant (a branch ``x.size(1) == 32``, an op that
needs the size: broadcasting against a ``[32]`` weight, a layer norm's ``normalized_shape``) is
guarded equal to it and written as the constant from then on, as torch's ShapeEnv does: the
graph's metadata carries ``32`` (a placeholder ``[s0, s1, 32]``), a symbolic int read before
the guard (``C`` of ``B, T, C = x.shape``) is ``32`` in later ops, and another width
recompiles with the guard as its reason. Each program runs through torch.compile (a counting
backend) and torchferro with ``dynamic=True``: values equal to eager's, graph counts equal to
torch.compile's.
"""

from __future__ import annotations

import logging
import tempfile

import pytest
import torch
import torch._dynamo
import torch.nn as nn

import torchferro
import torchferro.compiler
from programs.counting import Count
from programs.dynamic import same_values as _same, Block, inductor_log

R = torch.randn


def _run(fn, inputs, **kw):
    """``fn`` over ``inputs`` under torch.compile (counting) and torchferro, both
    ``dynamic=True``; values checked against eager. Returns (torchferro's compiled function,
    torch.compile's graph count)."""
    torch._dynamo.reset()
    torchferro.compiler.reset()
    tc = Count()
    t = torch.compile(fn, backend=tc, dynamic=True)
    f = torchferro.compile(fn, dynamic=True, **kw)
    with torch.no_grad():
        for args in inputs:
            want = fn(*args)
            _same(t(*args), want)
            _same(f(*args), want)
    return f, tc.n


@pytest.fixture
def fresh_cache(monkeypatch):
    monkeypatch.setenv("TORCHFERRO_CACHE_DIR", tempfile.mkdtemp(prefix="tf-constrepl-"))


_BLOCK = Block().eval()
BATCHES_AND_LENGTHS = [(2, 8), (3, 9), (4, 17), (2, 33), (5, 64), (3, 100)]


def test_a_gpt2_block_is_lowered_symbolically_under_dynamic_true(caplog, fresh_cache):
    """LayerNorm(32) over ``[B, T, 32]``: the width's symbol meets the constant
    ``normalized_shape`` and is replaced by 32, so the inductor's symbolic lowering takes the
    graph (it declined it before: "normalized_shape does not match the input")."""
    inputs = [(R(b, t, 32),) for b, t in BATCHES_AND_LENGTHS]
    with caplog.at_level(logging.INFO, logger="torchferro.inductor"):
        f, torch_graphs = _run(_BLOCK, inputs)
    [entry] = torchferro.compiler.cache_entries(f)
    assert torch_graphs == 1
    log = "\n".join(inductor_log(caplog.records))
    assert "symbolic lowering declined" not in log, log
    assert "dynamic graph: lowered symbolically: one library for every size" in log, log
    assert entry["runner"] == "inductor"
    # The width is 32 in the graph; batch and length stay symbols.
    assert "# l_x: f32[s0, s1, 32]" in entry["graph"], entry["graph"]
    guards = [g.split("  #")[0] for g in entry["guards"]]
    assert "SHAPE_ENV L['x'].size(2) == 32" in guards, guards
    # `C` of `B, T, C = x.shape`, read before the layer norm, is the constant in `split`:
    # the width's size node is gone from the graph.
    assert ".size(2)" not in entry["graph"], entry["graph"]


def test_a_gpt2_block_recompiles_for_another_width():
    """The replacement is guarded: width 48 is no input the first graph serves (torch.compile
    makes a second graph too)."""
    torch._dynamo.reset()
    torchferro.compiler.reset()
    blocks = {d: Block(d=d).eval() for d in (32, 48)}

    def fn(x, which):
        return blocks[which](x)

    tc = Count()
    t = torch.compile(fn, backend=tc, dynamic=True)
    f = torchferro.compile(fn, dynamic=True)
    with torch.no_grad():
        for d, t_len in [(32, 8), (32, 9), (48, 8), (48, 12)]:
            x = R(2, t_len, d)
            _same(t(x, d), fn(x, d))
            _same(f(x, d), fn(x, d))
    assert len(torchferro.compiler.cache_entries(f)) == tc.n == 2


def branch_on_width(x):
    if x.size(1) == 32:
        return x.sum(1) * 2
    return x - 1


def test_a_branch_equal_to_a_constant_replaces_the_symbol_and_recompiles_with_a_reason(
    caplog,
):
    with caplog.at_level(logging.INFO, logger="torchferro.recompiles"):
        f, torch_graphs = _run(
            branch_on_width,
            [(R(n, w),) for n, w in [(3, 32), (5, 32), (4, 16), (6, 16), (2, 32)]],
        )
    entries = torchferro.compiler.cache_entries(f)
    assert len(entries) == torch_graphs == 2
    graphs = [e["graph"] for e in entries]
    assert any("# l_x: f32[s0, 32] stride=(32, 1)" in g for g in graphs), graphs
    assert any("# l_x: f32[s0, s1] stride=(s1, 1)" in g for g in graphs), graphs
    text = "\n".join(r.getMessage() for r in caplog.records)
    assert "L['x'].size(1) == 32" in text, text


def test_a_branch_on_not_equal_to_a_constant_takes_the_right_side():
    def fn(x):
        if x.size(1) != 32:
            return x - 1
        return x * 3

    f, torch_graphs = _run(
        fn, [(R(n, w),) for n, w in [(3, 32), (4, 32), (3, 7), (5, 9)]]
    )
    assert len(torchferro.compiler.cache_entries(f)) == torch_graphs == 2


def test_a_branch_on_two_sizes_not_equal_takes_the_right_side():
    """``x.size(0) != y.size(0)`` with equal sizes is false (the symbols are replaced by one:
    the answer the branch takes is still "not different")."""

    def fn(x, y):
        if x.size(0) != y.size(0):
            return x.sum() + y.sum()
        return x * y

    torch._dynamo.reset()
    torchferro.compiler.reset()
    tc = Count()
    t = torch.compile(fn, backend=tc)
    f = torchferro.compile(fn)
    for n, m in [(3, 3), (5, 5), (4, 6)]:
        x, y = R(n), R(m)
        torch._dynamo.mark_dynamic(x, 0)
        torch._dynamo.mark_dynamic(y, 0)
        _same(t(x, y), fn(x, y))
        _same(f(x, y), fn(x, y))
    assert len(torchferro.compiler.cache_entries(f)) == tc.n


class Scale(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(32))

    def forward(self, x):
        B, C = x.shape
        y = x * self.w  # broadcasting needs C == 32
        return y.reshape(B * C // 4, 4), y.new_zeros(C) + 1


def test_broadcasting_against_a_constant_size_replaces_the_symbol():
    f, torch_graphs = _run(Scale(), [(R(n, 32),) for n in (3, 5, 9, 12)])
    [entry] = torchferro.compiler.cache_entries(f)
    assert torch_graphs == 1
    assert "# l_x: f32[s0, 32]" in entry["graph"], entry["graph"]
    # `C` read before the guard is 32 in the later `new_zeros(C)` and `reshape`.
    assert ".size(1)" not in entry["graph"], entry["graph"]
    assert "new_zeros(32)" in entry["graph"], entry["graph"]
