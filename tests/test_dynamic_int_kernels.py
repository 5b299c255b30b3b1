"""Symbolic int inputs in compiled kernels (issue 18, session 20; docs/dynamic-shapes.md).

Automatic dynamic makes a Python int argument that changes a symbolic int graph input
(``specialize_int=False``). The inductor used to refuse such a graph ("a size symbol is not the
size of an input dimension") and ran it on the eager runner. Now the int's symbol is read from
the int on each call and handed to the kernels like a size symbol: it works in index math and
loop bounds (``x[:n]``, ``x.new_zeros(n)``, ``x.view(n, -1)``) and as a number (``x * n``), so the
symbolic lowering compiles one library for every value. Asserted: values equal to eager's,
graph counts equal to torch.compile's, the inductor (not the eager runner) running the dynamic
graph, and a lowering phase in its ``perf`` record.
"""

from __future__ import annotations

import logging
import re
import tempfile

import pytest
import torch
import torch._dynamo
import torchferro
import torchferro.compiler
from hypothesis import given, settings
from hypothesis import strategies as st
from programs.counting import Count
from programs.dynamic import inductor_log
from programs.dynamic import same_values as _same
from torchferro import _C


def _c_compiles():
    return _C.precompile_counters()[1]


@pytest.fixture(autouse=True)
def _fresh_cache(monkeypatch):
    monkeypatch.setenv("TORCHFERRO_CACHE_DIR", tempfile.mkdtemp(prefix="tf-intkern-"))


@pytest.fixture(autouse=True)
def _automatic_dynamic():
    old = torchferro.config.automatic_dynamic_shapes
    torchferro.config.automatic_dynamic_shapes = True
    yield
    torchferro.config.automatic_dynamic_shapes = old


def scaled(x, n):
    return (x * n).sin() + n


def mixed(x, n):
    """The int as a number in several ops: arithmetic of it, a divisor, a bound, a fill."""
    return (
        (x + n * 2 - 1).sum() / n,
        torch.where(x > 0, x, n),
        x.clamp(min=-n, max=n),
        x.masked_fill(x > 0, n),
        x.to(torch.int64) * n,
    )


def divided(x, n):
    """The int through `//`, `%`, `max` and `min` as numbers (session 21): Python's floor
    division and a modulo with the divisor's sign, for any sign of `n`."""
    return (
        x * (n // 2) + n % 3,
        x - n // -3 * (n % -5),
        x * max(n, 4) + min(n, -3),
        (x + 1) * (n * 7 // 4) - max(n // 2, n % 7),
    )


def zeros_of(x, n):
    return x.new_zeros(n) + x.sum() * n


def prefix(x, n):
    return x[:n] * n + 1


def rows(x, n):
    return x.view(n, -1).relu().sum(1) * n


def _run(fn, calls):
    """``fn`` over ``calls`` eagerly, under torch.compile (counting backend) and torchferro's
    default (inductor) backend; returns torchferro's compiled function, torch.compile's graph
    count and the inductor log."""
    torch._dynamo.reset()
    torchferro.compiler.reset()
    tc = Count()
    t = torch.compile(fn, backend=tc)
    f = torchferro.compile(fn)
    records = []

    class Keep(logging.Handler):
        def emit(self, record):
            records.append(record)

    logger = logging.getLogger("torchferro.inductor")
    h, old = Keep(), logger.level
    logger.addHandler(h)
    logger.setLevel(logging.INFO)
    try:
        for args in calls:
            want = fn(*args)
            _same(t(*args), want)
            _same(f(*args), want)
    finally:
        logger.removeHandler(h)
        logger.setLevel(old)
    return f, tc.n, inductor_log(records)


def _runners(f):
    return [e["runner"] for e in torchferro.compiler.cache_entries(f)]


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(-(2**40), 2**40), min_size=3, max_size=8))
def test_an_int_scalar_operand_runs_in_the_kernels(ints):
    """Any ints after two distinct ones (0, 1 and negatives included): 2 graphs, as
    torch.compile; the dynamic one on the inductor, lowered symbolically once."""
    ints = [3, 4] + ints
    x = torch.randn(8)
    f, torch_graphs, log = _run(scaled, [(x, n) for n in ints])
    assert len(torchferro.compiler.cache_entries(f)) == torch_graphs == 2
    assert _runners(f) == ["inductor", "inductor"]
    assert [m for m in log if "lowered symbolically" in m] == [
        "dynamic graph: lowered symbolically: one library for every size (first at s0=4)"
    ], log
    assert not any("eager" in m for m in log), log


@settings(max_examples=30, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.integers(-(2**40), 2**40),
            st.integers(-9, 9),
            st.sampled_from([0, 1, -1]),
        ),
        min_size=3,
        max_size=8,
    )
)
def test_floor_division_modulo_max_and_min_of_an_int_run_in_the_kernels(ints):
    """`x * (n // 2)`, `n % 3`, `max(n, 4)`, ... (session 20's "Left": such an operand made the
    symbolic lowering decline, and the graph took fitted per-value kernels): Python's
    semantics in the kernel for negative values and 0, values equal eager's, 2 graphs as
    torch.compile, the dynamic one lowered symbolically once."""
    ints = [3, 4] + ints
    x = torch.randn(8)
    f, torch_graphs, log = _run(divided, [(x, n) for n in ints])
    assert len(torchferro.compiler.cache_entries(f)) == torch_graphs == 2
    assert _runners(f) == ["inductor", "inductor"]
    assert [m for m in log if "lowered symbolically" in m] == [
        "dynamic graph: lowered symbolically: one library for every size (first at s0=4)"
    ], log
    assert not any("declined" in m or "eager" in m for m in log), log


def test_floor_division_by_a_possibly_zero_int_falls_back():
    """`x * (12 // n)`: eager raises at n == 0, which a kernel cannot, so the symbolic
    lowering declines (the reason logged) and values stay eager's."""
    f, torch_graphs, log = _run(
        lambda x, n: x * (12 // n), [(torch.randn(4), n) for n in (3, 4, -5, 7)]
    )
    assert len(torchferro.compiler.cache_entries(f)) == torch_graphs == 2
    assert any("declined" in m for m in log), log


def test_one_c_compile_over_floor_divisions_and_modulos():
    """`divided` over -20..39: one symbolic library (2 C compiles with the static first)."""
    before = _c_compiles()
    f, torch_graphs, _ = _run(divided, [(torch.randn(9), n) for n in range(-20, 40)])
    assert len(torchferro.compiler.cache_entries(f)) == torch_graphs == 2
    assert _c_compiles() - before == 2


def test_one_c_compile_for_every_value():
    before = _c_compiles()
    f, torch_graphs, _ = _run(mixed, [(torch.randn(9), n) for n in range(-20, 40)])
    assert len(torchferro.compiler.cache_entries(f)) == torch_graphs == 2
    assert _runners(f) == ["inductor", "inductor"]
    # The static first graph and the one symbolic library.
    assert _c_compiles() - before == 2


@pytest.mark.parametrize(
    "fn, make, values",
    [
        (zeros_of, lambda n: (torch.randn(5),), [3, 4, 5, 9, 17]),
        (prefix, lambda n: (torch.randn(16),), [3, 4, 5, 9, 16]),
        (rows, lambda n: (torch.randn(48),), [3, 4, 6, 8, 2, 12]),
    ],
    ids=["new_zeros", "slice", "view"],
)
def test_an_int_used_as_a_size(fn, make, values):
    f, torch_graphs, log = _run(fn, [(*make(n), n) for n in values])
    assert len(torchferro.compiler.cache_entries(f)) == torch_graphs
    assert set(_runners(f)) == {"inductor"}, log
    assert any("lowered symbolically" in m for m in log), log
    assert not any("declined" in m or "eager" in m for m in log), log


def test_the_perf_record_shows_a_lowering_phase(caplog):
    torchferro.compiler.reset()
    f = torchferro.compile(scaled)
    x = torch.randn(8)
    with caplog.at_level(logging.INFO, logger="torchferro.perf"):
        for n in (3, 4, 5):
            _same(f(x, n), scaled(x, n))
    perf = [r.getMessage() for r in caplog.records if r.name == "torchferro.perf"]
    dynamic = [m for m in perf if "(compile 0/1)" in m]
    assert len(dynamic) == 1, perf
    assert re.search(r"lowering \d+\.\d+ ms, scheduling", dynamic[0]), dynamic[0]
    assert "c_compile" in dynamic[0], dynamic[0]


def trained(x, n):
    return ((x * n).tanh() + n).sum()


def test_a_training_graph_with_an_int_input_is_compiled():
    """The dynamic training path specializes per assignment; the int is one of its symbols
    (saved for the backward beside the tensors) instead of a refusal to the eager runner."""
    torchferro.compiler.reset()
    f = torchferro.compile(trained)
    for n in (3, 4, 5, -2, 4):
        x = torch.randn(6, requires_grad=True)
        y = x.detach().clone().requires_grad_()
        got, want = f(x, n), trained(y, n)
        got.backward()
        want.backward()
        torch.testing.assert_close(got, want)
        torch.testing.assert_close(x.grad, y.grad)
    assert _runners(f) == ["aot", "aot"]


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
def test_an_int_input_on_cuda():
    """On CUDA a dynamic graph compiles per assignment (the symbolic lowering is the CPU's):
    the int is a number in the graph specialized to its value."""
    x = torch.randn(64, device="cuda")
    f, torch_graphs, log = _run(scaled, [(x, n) for n in (3, 4, 5, -2, 7)])
    assert len(torchferro.compiler.cache_entries(f)) == torch_graphs == 2
    assert _runners(f) == ["inductor", "inductor"], log
