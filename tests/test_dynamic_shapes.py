"""Dynamic shapes (issue 18, phase 1): programs compiled once over many sizes.

Automatic dynamic (``torchferro.config.automatic_dynamic_shapes``, on by default) is on in every
test here, whatever an earlier test left.

Each program runs through torch.compile (a counting backend, the same ``dynamic=`` setting) and
through torchferro (a counting Python backend, and the default inductor backend, whose dynamic
graphs run on the eager runner), over sizes 2..64 per dimension: graph counts must equal
torch.compile's, values eager's. A size baked into a graph as a constant (the bug class dynamic
shapes bring) shows as a wrong value or an extra compile.
"""

from __future__ import annotations

import logging

import pytest
import torch
import torch._dynamo
import torch.nn as nn
import torch.nn.functional as F

import torchferro
import torchferro.compiler
from programs.counting import Count

# torch.compile's own automatic dynamic rule: these tests pin its counts, logs and guards
# (the session-27 default, which compiles less: tests/test_dynamic_size_oblivious.py).
pytestmark = pytest.mark.usefixtures("torch_rule")


@pytest.fixture(autouse=True)
def _automatic_dynamic():
    """Automatic dynamic on for every test here; a test that turns it off gets it back on."""
    old = torchferro.config.automatic_dynamic_shapes
    torchferro.config.automatic_dynamic_shapes = True
    yield
    torchferro.config.automatic_dynamic_shapes = old


def _flat(v):
    return v if isinstance(v, (tuple, list)) else (v,)


def _same(a, b):
    for x, y in zip(_flat(a), _flat(b), strict=True):
        if isinstance(x, torch.Tensor):
            assert x.shape == y.shape and x.dtype == y.dtype
            torch.testing.assert_close(x, y, equal_nan=True)
        else:
            assert type(x) is type(y) and x == y


def check(fn, inputs, dynamic=None, expected=None):
    """Runs ``fn`` over ``inputs`` (a list of argument tuples, or a callable making them per
    call) eagerly, under torch.compile and under torchferro (a counting backend and the
    inductor); asserts equal values and torchferro's graph count equal to torch.compile's."""
    torch._dynamo.reset()
    torchferro.compiler.reset()
    tc, fc = Count(), Count()
    t = torch.compile(fn, backend=tc, dynamic=dynamic)
    f = torchferro.compile(fn, backend=fc, dynamic=dynamic)
    i = torchferro.compile(fn, dynamic=dynamic)
    for args in inputs:
        want = fn(*args)
        _same(t(*args), want)
        _same(f(*args), want)
        _same(i(*args), want)
    assert fc.n == tc.n, f"torchferro made {fc.n} graphs, torch.compile {tc.n}"
    if expected is not None:
        assert fc.n == expected
    return fc


R = torch.randn


# --- programs over sizes 2..64 ------------------------------------------------------------------


def views(x):
    B = x.size(0)
    return x.view(B, -1, 2).transpose(1, 2).reshape(B, -1).flatten() * 2


def test_views_and_reshapes_compile_once_after_the_first_recompile():
    fc = check(views, [(R(n, 8),) for n in range(2, 65, 3)], expected=2)
    # The dynamic graph reads the batch size per call: no constant of the first size.
    code = fc.graphs[-1].code
    assert "size(0)" in code or "size()" in code, code


def cat2(x, y):
    return torch.cat([x, y * 2], dim=1).sum(0), torch.stack([x, x], 0).mean(0)


def test_cat_and_stack_over_symbolic_sizes():
    check(cat2, [(R(3, n), R(3, n + 1)) for n in range(2, 64, 5)], expected=2)


def slicing(x):
    T = x.size(1)
    return x[:, 1:].sum(1) + x[:, : T // 2].mean(1) + x[-2:].sum(), x[:, ::2]


def test_slicing_with_symbolic_bounds():
    check(slicing, [(R(5, n),) for n in range(4, 64, 3)], expected=2)


def broadcast(x, y):
    return (x + y).relu() * y, x * x.size(1)


def test_broadcasting_and_size_arithmetic():
    check(broadcast, [(R(3, n), R(n)) for n in range(2, 64, 4)], expected=2)


def reductions(x):
    return (
        x.sum(1),
        x.mean(-1, keepdim=True),
        torch.softmax(x, -1),
        x.max(1).values,
        x.amax(0),
        x.var(0),
    )


def test_reductions_over_symbolic_dims():
    check(reductions, [(R(n, n + 1),) for n in range(2, 64, 5)], expected=2)


def attention_mask(x):
    T = x.shape[1]
    mask = torch.triu(torch.ones(T, T), diagonal=1).bool()
    return x.masked_fill(mask, 0.0), torch.arange(T) * 2


def test_attention_mask_built_from_sizes():
    check(attention_mask, [(R(n, n),) for n in range(2, 64, 3)], expected=2)


def lengths(x):
    return x * len(x) + x.numel(), x.size(0) * 2 + 1


def test_len_numel_and_returned_size_arithmetic():
    # The int result is rebuilt from the call's own sizes (not the size seen at trace time).
    check(lengths, [(R(n),) for n in range(2, 64, 3)], expected=2)


def embedding_positions(x, w):
    T = x.size(0)
    return F.embedding(torch.arange(T), w) + x


def test_embedding_of_positions():
    w = R(64, 8)
    check(embedding_positions, [(R(n, 8), w) for n in range(2, 64, 3)], expected=2)


def kv_cache(keys, new):
    # transformers' DynamicCache: the cache grows by a transposed (non-contiguous) projection.
    return torch.cat([keys, new.transpose(1, 2)], dim=-2) * 2


def test_cat_of_a_growing_cache_and_a_transposed_tensor():
    # The native `cat` rule leaves 4-d non-contiguous inputs to torch (it may pick channels
    # last): their concrete values come from meta tensors, the sizes from the `cat` rule.
    check(
        kv_cache,
        [(R(1, 2, n, 4), R(1, 3, 2, 4)) for n in range(2, 64, 5)],
        expected=2,
    )


def sizes_2d(x):
    return x.view(x.size(0), x.size(1), 1).sum(-1) * x.size(1)


def test_automatic_dynamic_logs_a_later_dimension_and_guards_it_readably(caplog):
    torchferro.compiler.reset()
    f = torchferro.compile(sizes_2d, backend="eager")
    with caplog.at_level(logging.INFO, logger="torchferro.dynamic"):
        for n in (8, 9, 10):
            x = R(3, n)
            _same(f(x), sizes_2d(x))
    msgs = [r.getMessage() for r in caplog.records if r.name == "torchferro.dynamic"]
    assert len(msgs) == 1, msgs
    assert msgs[0].split(" (function ")[0] == "automatic dynamic: L['x'] size(1) 8 -> 9"
    entries = torchferro.compiler.cache_entries(f)
    assert len(entries) == 2
    # The newest entry first: the dynamic one; size(0) stayed 3 and is still static.
    guards = entries[0]["guards"]
    assert "SHAPE_ENV 2 <= L['x'].size(1)" in guards, guards
    assert any("size=[3, None], stride=contiguous" in g for g in guards), guards


# --- guards on sizes -----------------------------------------------------------------------------


def branch(x):
    if x.size(0) > 8:
        return x * 2
    return x - 1


def test_a_branch_on_a_size_is_guarded_and_recompiles_with_a_reason(caplog):
    with caplog.at_level(logging.INFO, logger="torchferro.recompiles"):
        check(branch, [(R(n),) for n in [4, 5, 6, 9, 10, 3, 12]], expected=3)
    text = "\n".join(r.getMessage() for r in caplog.records)
    # The third compile is the dynamic entry's relation failing.
    assert "L['x'].size(0) <= 8" in text, text


def test_shape_guards_are_listed_readably():
    torchferro.compiler.reset()
    f = torchferro.compile(branch, backend="eager", dynamic=True)
    f(R(10))
    guards = torchferro.compiler.cache_entries(f)[0]["guards"]
    assert "SHAPE_ENV 2 <= L['x'].size(0)" in guards, guards
    assert any(g.startswith("SHAPE_ENV L['x'].size(0) > 8") for g in guards), guards
    assert any("size=[None], stride=contiguous" in g for g in guards), guards


def test_automatic_dynamic_logs_the_dimension(caplog):
    torchferro.compiler.reset()
    f = torchferro.compile(views, backend="eager")
    with caplog.at_level(logging.INFO, logger="torchferro.dynamic"):
        f(R(4, 8))
        f(R(5, 8))
    msgs = [r.getMessage() for r in caplog.records if r.name == "torchferro.dynamic"]
    assert len(msgs) == 1 and msgs[0].startswith(
        "automatic dynamic: L['x'] size(0) 4 -> 5"
    ), msgs


def duck(x, y):
    return x + y


def test_equal_sizes_share_a_symbol_and_recompile_when_they_part():
    # Duck sizing: x and y of equal sizes get one symbol; sizes that differ later recompile.
    check(
        duck,
        [(R(n), R(n)) for n in range(2, 20, 3)] + [(R(4, 1), R(4, 5))],
    )


def two(x, y):
    return x * 2, y + 1


def test_equal_sizes_made_dynamic_at_a_recompile_stay_separate_symbols():
    # Automatic dynamic makes torch's `DimDynamic.DYNAMIC`: no duck sizing, so sizes equal at
    # the recompile (6, 6) that part later (2, 4) reuse the entry: 2 graphs, as torch.compile.
    fc = check(
        two, [(R(3), R(7)), (R(6), R(6)), (R(2), R(4)), (R(9), R(5))], expected=2
    )
    assert fc.n == 2


def test_mark_dynamic_dimensions_of_equal_size_stay_separate_symbols():
    torch._dynamo.reset()
    torchferro.compiler.reset()
    tc, fc = Count(), Count()
    t = torch.compile(two, backend=tc)
    f = torchferro.compile(two, backend=fc)
    for n, m in [(5, 5), (4, 9), (7, 3)]:
        x, y = R(n), R(m)
        for v in (x, y):
            torch._dynamo.mark_dynamic(v, 0)
        _same(t(x, y), two(x, y))
        _same(f(x, y), two(x, y))
    assert (fc.n, tc.n) == (1, 1)


def test_an_equality_an_op_needs_is_guarded_and_replaces_a_symbol():
    # `x + y` with separate symbols of equal hints: broadcasting needs them equal, so the
    # trace guards `L['y'].size(0) == L['x'].size(0)` (torch's replacement) instead of
    # specializing both; sizes that part recompile with that reason.
    torchferro.compiler.reset()
    fc = check(duck, [(R(n), R(n)) for n in (3, 6, 9, 12)], expected=2)
    f = torchferro.compile(duck, backend=Count())
    for n in (3, 6):
        f(R(n), R(n))
    guards = torchferro.compiler.cache_entries(f)[0]["guards"]
    assert "SHAPE_ENV L['y'].size(0) == L['x'].size(0)" in [
        g.split("  #")[0] for g in guards
    ], guards
    assert not any("== 6" in g for g in guards), guards
    # The graph names one symbol: both placeholders are `[s0]`.
    graph = torchferro.compiler.cache_entries(f)[0]["graph"]
    assert (
        "# l_x: f32[s0] stride=(1)" in graph and "# l_y: f32[s0] stride=(1)" in graph
    ), graph
    assert fc.n == 2


def branch_eq(x, y):
    if x.size(0) == y.size(0):
        return x * y
    return x.sum() + y.sum()


def test_a_branch_on_equal_sizes_replaces_a_symbol():
    check(
        branch_eq,
        [(R(3), R(3)), (R(5), R(5)), (R(8), R(8)), (R(4), R(6)), (R(7), R(2))],
        expected=3,
    )


# --- policies ------------------------------------------------------------------------------------


def test_dynamic_true_compiles_once():
    check(views, [(R(n, 8),) for n in range(2, 64, 7)], dynamic=True, expected=1)


def scaled_window(x, n, k):
    # `n` reaches a size (a slice bound) and arithmetic; `k` only arithmetic.
    return x[:n] * k + n, x.sum() * (n - k)


def test_dynamic_true_makes_int_arguments_symbolic_from_the_first_compile():
    """Ints passed to the frame are symbolic from the first compile under `dynamic=True`, as
    torch.compile makes them (1 graph over three calls; was 3: ints waited for a recompile).
    A later `k = 1` runs the same graph (its guard is the int's type), as in torch.compile."""
    calls = [(R(9, 3), 4, 3), (R(11, 3), 5, 7), (R(12, 3), 6, 2)]
    check(scaled_window, calls, dynamic=True, expected=1)
    check(scaled_window, calls + [(R(10, 3), 3, 1)], dynamic=True, expected=1)


def test_automatic_dynamic_off_recompiles_per_size():
    torchferro.config.automatic_dynamic_shapes = False
    torchferro.compiler.reset()
    fc = Count()
    f = torchferro.compile(views, backend=fc)
    for n in range(2, 6):
        x = R(n, 8)
        _same(f(x), views(x))
    assert fc.n == 4


def test_dynamic_false_recompiles_per_size():
    check(views, [(R(n, 8),) for n in range(2, 6)], dynamic=False, expected=4)


@pytest.mark.parametrize("marker", ["torchferro", "torch"])
def test_mark_dynamic_compiles_once(marker):
    mark = (
        torchferro.mark_dynamic
        if marker == "torchferro"
        else torch._dynamo.mark_dynamic
    )

    def inputs():
        for n in range(2, 64, 9):
            x = R(n, 8)
            mark(x, 0)
            yield (x,)

    check(views, list(inputs()), expected=1)


def test_mark_dynamic_bounds_are_guards():
    torchferro.compiler.reset()
    fc = Count()
    f = torchferro.compile(views, backend=fc)
    for n in [4, 6, 8, 12]:
        x = R(n, 8)
        torchferro.mark_dynamic(x, 0, min=2, max=8)
        _same(f(x), views(x))
    # 4, 6 and 8 share the entry for [2, 8]; 12 is out of range.
    assert fc.n == 2
    guards = torchferro.compiler.cache_entries(f)[-1]["guards"]
    assert "SHAPE_ENV 2 <= L['x'].size(0) <= 8" in guards, guards


@pytest.mark.parametrize("marker", ["torchferro", "torch"])
def test_mark_static_keeps_a_dimension_static(marker):
    mark = (
        torchferro.mark_static if marker == "torchferro" else torch._dynamo.mark_static
    )

    def inputs():
        for n in range(2, 6):
            x = R(n, 8)
            mark(x, 0)
            yield (x,)

    check(views, list(inputs()), expected=4)


def test_maybe_mark_dynamic():
    def inputs():
        for n in range(2, 40, 9):
            x = R(n, 8)
            torchferro.maybe_mark_dynamic(x, 0)
            yield (x,)

    check(views, list(inputs()), expected=1)


# --- a GPT-2-style block -------------------------------------------------------------------------


class Block(nn.Module):
    def __init__(self, C=32, H=4):
        super().__init__()
        self.H = H
        self.ln = nn.LayerNorm(C)
        self.qkv = nn.Linear(C, 3 * C)
        self.proj = nn.Linear(C, C)
        self.mlp = nn.Sequential(nn.Linear(C, 4 * C), nn.GELU(), nn.Linear(4 * C, C))
        self.ln2 = nn.LayerNorm(C)

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.qkv(self.ln(x)).split(C, dim=2)
        q = q.view(B, T, self.H, C // self.H).transpose(1, 2)
        k = k.view(B, T, self.H, C // self.H).transpose(1, 2)
        v = v.view(B, T, self.H, C // self.H).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / (k.size(-1) ** 0.5))
        mask = torch.tril(torch.ones(T, T)).view(1, 1, T, T)
        att = att.masked_fill(mask[:, :, :T, :T] == 0, float("-inf"))
        att = F.softmax(att, dim=-1)
        y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)
        x = x + self.proj(y)
        return x + self.mlp(self.ln2(x))


def test_attention_block_over_sequence_lengths_compiles_twice():
    torch.manual_seed(0)
    block = Block().eval()
    with torch.no_grad():
        check(block, [(R(1, n, 32),) for n in range(8, 65, 4)], expected=2)


def test_attention_block_over_batch_and_length():
    torch.manual_seed(0)
    block = Block().eval()
    with torch.no_grad():
        check(block, [(R(b, 8 + 4 * b, 32),) for b in range(1, 9)], expected=2)


def padded(x, m):
    y = F.pad(x, (1, 1))
    z = F.pad(m, (0, x.size(1) - m.size(1)), value=0.0)
    return y * y.size(-1), x + z, F.pad(x, (1, 2, 0, 3), mode="constant", value=1.5)


def test_pad_keeps_sizes_symbolic():
    # Amounts may be symbolic ints (`x.size(1) - m.size(1)`); each padded size is the size
    # plus both amounts.
    check(padded, [(R(3, n), R(3, 2)) for n in [4, 5, 6, 9, 17]], expected=2)
    check(
        padded, [(R(3, n), R(3, 2)) for n in [4, 5, 6, 9, 17]], dynamic=True, expected=1
    )


# --- specialization and graph breaks -----------------------------------------------------------


def kron(x):
    y = torch.kron(x, x)
    return y * y.size(-1)


def test_an_op_without_a_symbolic_rule_specializes_its_sizes():
    # `torch.kron` has no symbolic rule here: its sizes are guarded equal to the ones traced
    # (never a wrong answer), so each size recompiles.
    torchferro.compiler.reset()
    fc = Count()
    f = torchferro.compile(kron, backend=fc, dynamic=True)
    for n in [4, 4, 6]:
        x = R(3, n)
        _same(f(x), kron(x))
    assert fc.n == 2
    guards = torchferro.compiler.cache_entries(f)[-1]["guards"]
    # The guard points at the line whose op specialized the size.
    pinned = [g for g in guards if g.startswith("SHAPE_ENV L['x'].size(1) == 4  # ")]
    line = kron.__code__.co_firstlineno + 1
    assert len(pinned) == 1 and pinned[0].endswith(f"test_dynamic_shapes.py:{line}"), (
        guards
    )


def size_across_a_break(x):
    n = x.size(0) * 2 + 1
    torchferro.graph_break()
    return x * n


def test_a_symbolic_int_live_at_a_graph_break_is_rebuilt_from_the_call():
    torchferro.compiler.reset()
    f = torchferro.compile(size_across_a_break, backend="eager", dynamic=True)
    for n in [3, 5, 9]:
        x = R(n)
        _same(f(x), x * (2 * n + 1))
    # One entry for every size: the int handed to the resume function is computed per call.
    assert len(torchferro.compiler.cache_entries(f)) == 1


def gather_positions(x, pos):
    # transformers' mask functions: `position_ids[batch_idx, q_idx]` with index tensors
    # broadcast from aranges over the sizes (advanced indexing).
    b = torch.arange(x.size(0)).view(-1, 1)
    q = torch.arange(x.size(1)).view(1, -1)
    return pos[b, q] + x


def test_advanced_indexing_with_tensors_over_symbolic_sizes():
    # Without the symbolic rule for integer tensor indices this breaks the graph: 4 graphs, torch.compile 2.
    inputs = [
        (torch.randn(2, n), torch.arange(2 * n, dtype=torch.float32).view(2, n))
        for n in (8, 9, 17, 33, 64)
    ]
    check(gather_positions, inputs, expected=2)


def conv1d_size(x):
    # GPT-2's Conv1D: the output size is the input's, last dimension replaced, as a tuple sum.
    size_out = x.size()[:-1] + (x.size(-1) * 2,)
    return torch.cat([x, x], -1).reshape(-1, x.size(-1) * 2).view(size_out)


def test_a_size_tuple_concatenated_stays_symbolic():
    # Specializing `x.size()[:-1] + (...)` recompiled the frame: 4 graphs, torch.compile 2.
    check(
        conv1d_size, [(torch.randn(2, n, 4),) for n in (8, 9, 17, 33, 64)], expected=2
    )


def test_symbolic_shape_is_a_torch_size(capsys):
    # Printed at a graph break (print is not traced) and returned, a symbolic shape is rebuilt
    # as a torch.Size of the call's sizes (more in test_dynamic_size.py).
    def f(x):
        y = x * 2
        print("shape", y.shape)
        return y.shape, y.sum(0)

    cf = torchferro.compile(f, dynamic=True)
    for n in (5, 7):
        x = torch.randn(n, 4)
        shape, s = cf(x)
        out = capsys.readouterr().out
        assert out == f"shape {x.shape}\n"
        assert type(shape) is torch.Size and shape == x.shape
        torch.testing.assert_close(s, x.mul(2).sum(0))
