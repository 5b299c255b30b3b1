"""The symbolic lowering (issue 18, the design's steps 3 and 7; docs/dynamic-shapes.md).

A dynamic graph is lowered once from fx's symbolic metas into the loop IR with symbolic
sizes, scheduled and printed once, and its one C library is built for every assignment of
the symbols (``Prepared::build_at``: no lowering and no C compiler at a new size). Each
program here is compiled with ``dynamic=True`` and called at every size 2..64 of its dynamic
dimension (the other dimensions move too, so no two symbols stay equal); asserted: values
equal to eager's, the graph count torch.compile makes, the inductor's log saying the graph
was lowered symbolically, and exactly one run of the C compiler (fresh kernel cache). A graph
whose lowering declines (an op that needs a concrete size) logs the reason and still gives
eager's values through the fitted templates (``inductor::param``).
"""

from __future__ import annotations

import logging
import re
import tempfile

import pytest
import torch
import torch._dynamo
import torch.nn.functional as F
import torchferro
import torchferro.compiler
from programs.dynamic import same_values as _same, inductor_log
from torchferro import _C
from programs.counting import Count

R = torch.randn
SIZES = list(range(2, 65))


def _c_compiles():
    return _C.precompile_counters()[1]


@pytest.fixture
def fresh_cache(monkeypatch):
    """An empty kernel cache, so that every library the graph needs runs the C compiler."""
    monkeypatch.setenv("TORCHFERRO_CACHE_DIR", tempfile.mkdtemp(prefix="tf-symlower-"))


# --- programs: (fn, inputs at size n) -------------------------------------------------------


def pointwise_broadcast(x, w, b):
    return (x * w + b).sigmoid() - torch.tanh(x) / (w.abs() + 1)


def reductions(x):
    return x.sum(1), x.mean(0), x.amax(-1, keepdim=True), x.var(0), x.std(1), x.sum()


def rows(x, w, b):
    return (
        torch.softmax(x, -1),
        F.layer_norm(x, x.shape[-1:], w, b),
        F.log_softmax(x, 0),
    )


def views(x):
    B = x.size(0)
    v = x.view(B, -1, 2).transpose(1, 2).reshape(B, -1) * 2
    f = x.unsqueeze(0).flatten(0, 1).t().contiguous() + 1
    p = x.unsqueeze(-1).expand(-1, -1, 3).permute(2, 0, 1).squeeze(0) * 3
    return v, f, p


def slices(x, y):
    B = x.size(0)
    c = torch.cat([x, y], dim=0)
    return c[1:] + 1, c[: B // 2 + 1].sum(0), x[:, ::2] * 2, x[-1:] - x[:1], c[B:]


def matmuls(x, w, b):
    return (
        F.linear(x, w, b).relu() @ w,
        torch.bmm(x.unsqueeze(0), x.t().unsqueeze(0)),
        torch.addmm(b, x, w),
    )


def running_sums(x):
    """A cumsum along a symbolic dim (GPT-2's positions from its mask): the triangle form."""
    return x.cumsum(1) * 2 + 1, (x > 0).cumsum(-1)


def masks(x):
    T = x.size(-1)
    pos = torch.arange(T)
    causal = pos[None, :] <= pos[:, None]
    s = x.unsqueeze(-1) * torch.ones(T, T) + pos
    return s.masked_fill(~causal, float("-inf")).softmax(-1)


def moves(x, m):
    # `.to(device)` onto the tensors' own device is the identity (a model's
    # `mask.to(x.device)`); with `non_blocking=True` too. Through torch it would decline the
    # symbolic lowering (CUDA GPT-2 compiled once per length for that in session 21).
    y = x.to(x.device) * 2 + m.to(device=x.device, dtype=x.dtype, non_blocking=True)
    return y.to("cpu").relu(), x.to("cpu", torch.float64).sum(-1)


def _square(n):
    return R(n, 2 * (n % 5) + 4)


PROGRAMS = {
    "pointwise_broadcast": (
        pointwise_broadcast,
        lambda n: (R(n, 7), R(7), R(n, 1)),
    ),
    "reductions": (reductions, lambda n: (R(n, 9),)),
    "rows": (rows, lambda n: (R(5, n), R(n), R(n))),
    "views": (views, lambda n: (R(n, 8),)),
    "slices": (slices, lambda n: (R(n, 8), R(3, 8))),
    "matmuls": (matmuls, lambda n: (R(n, 16), R(16, 16), R(16))),
    "masks": (masks, lambda n: (R(3, n),)),
    "running_sums": (running_sums, lambda n: (R(3, n),)),
    "moves": (moves, lambda n: (R(n, 6), R(n, 6) > 0)),
}


def _run(fn, make, sizes=SIZES):
    """``fn`` over ``sizes`` eagerly, through torch.compile (counting backend) and through
    torchferro, all with ``dynamic=True``; returns the compiled function, torch.compile's
    graph count and the C compiles torchferro made."""
    torch._dynamo.reset()
    torchferro.compiler.reset()
    tc = Count()
    t = torch.compile(fn, backend=tc, dynamic=True)
    f = torchferro.compile(fn, dynamic=True)
    before = _c_compiles()
    with torch.no_grad():
        for n in sizes:
            args = make(n)
            want = fn(*args)
            _same(t(*args), want)
            _same(f(*args), want)
    return f, tc.n, _c_compiles() - before


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_one_c_compile_over_sizes_2_to_64(name, fresh_cache, caplog):
    fn, make = PROGRAMS[name]
    with caplog.at_level(logging.INFO, logger="torchferro.inductor"):
        f, torch_graphs, compiles = _run(fn, make)
    log = inductor_log(caplog.records)
    text = "\n".join(log)
    symbolic = [m for m in log if "lowered symbolically" in m]
    assert len(symbolic) == 1, text
    assert symbolic[0].startswith(
        "dynamic graph: lowered symbolically: one library for every size (first at s"
    ), text
    assert "declined" not in text and "eager" not in text, text
    assert len(torchferro.compiler.cache_entries(f)) == torch_graphs == 1
    [entry] = torchferro.compiler.cache_entries(f)
    assert entry["runner"] == "inductor"
    assert (
        "const int64_t *const tf_sym = (const int64_t *)args[" in entry["output_code"]
    )
    assert compiles == 1


def test_two_symbols_of_one_value_share_the_library(fresh_cache):
    """Rows and columns moving together and apart (5 by 5, then 5 by 7): the plan compared
    sizes as polynomials, never values, so equal sizes of two symbols take the one library."""

    def fn(x):
        return x.softmax(-1) + x.sum(0) + x.amax(1, keepdim=True)

    shapes = [(2, 3), (5, 5), (5, 7), (9, 9), (6, 11), (64, 64)]
    shape_iter = iter(shapes)
    f, graphs, compiles = _run(fn, lambda _: (R(*next(shape_iter)),), sizes=shapes)
    assert (graphs, compiles) == (1, 1)


def lower_triangle(x):
    return x.tril() * 2 + 1


def pooled(x):
    return F.max_pool1d(x, 2) * 2 + 1


def test_a_declined_graph_keeps_eager_values(fresh_cache, caplog):
    """``tril`` has no lowering: a static graph would run it through torch, but a fallback
    node's sizes are the host's values, so the symbolic lowering declines the whole graph; the
    reason is logged once, and the fitted templates run the graph with eager's values."""
    with caplog.at_level(logging.INFO, logger="torchferro.inductor"):
        f, graphs, _ = _run(
            lower_triangle, lambda n: (R(n, 7),), sizes=[3, 4, 5, 8, 13, 31]
        )
    log = inductor_log(caplog.records)
    declined = [m for m in log if "symbolic lowering declined" in m]
    assert declined == [
        "dynamic graph: symbolic lowering declined (graph not supported by the inductor: "
        "symbolic sizes: tril (tril): no lowering for tril); "
        "fitting kernels over sizes"
    ], log
    assert graphs == 1 and len(torchferro.compiler.cache_entries(f)) == 1


def test_a_size_an_op_specializes_is_a_constant_in_the_graph(caplog):
    """``max_pool1d`` has no symbolic shape rule (torch.compile specializes it too: a graph
    per length): the trace specializes the sizes it reads (guarded equal to their hints) and,
    as torch's replacement by a constant, writes them as those constants, so each graph is
    static (``[3, 2, n]``) and reaches the inductor's static path, not a symbolic lowering.
    (``max_pool2d`` was the example until session 17 gave pooling a symbolic rule:
    ``tests/test_dynamic_conv_pool.py``.) Values are eager's."""
    with caplog.at_level(logging.INFO, logger="torchferro.inductor"):
        f, graphs, _ = _run(pooled, lambda n: (R(3, 2, n),), sizes=[4, 5, 8])
    log = inductor_log(caplog.records)
    assert not any("symbolic lowering" in m for m in log), log
    entries = [e["graph"] for e in torchferro.compiler.cache_entries(f)]
    assert graphs == len(entries) == 3
    assert [
        n for n in (4, 5, 8) if any(f"# l_x: f32[3, 2, {n}]" in g for g in entries)
    ] == [4, 5, 8], entries


def two_convolutions(x, y, w):
    return F.conv2d(y, w).sum() + F.conv2d(x, w, padding=1).relu()


def test_a_lowering_that_needs_concrete_sizes_declines_the_graph(fresh_cache, caplog):
    """The ``value::Decline`` path: a graph whose static convolution (of ``y`` by ``w``, both
    marked static) runs on oneDNN lays its 4-d values out channels-last, and the lowering
    decides each convolution's layout from concrete sizes (``conv2d_uses_onednn``), so the
    convolution of the symbolic ``x`` declines (``TensorVal::csizes``). The whole graph
    declines with the node named, logged once, and runs on the fitted templates with eager's
    values; one graph, as torch.compile."""
    torch.manual_seed(0)
    w = R(4, 3, 3, 3)
    y = R(2, 3, 8, 8)
    for t in (w, y):
        torchferro.mark_static(t)
    with caplog.at_level(logging.INFO, logger="torchferro.inductor"):
        f, graphs, _ = _run(
            two_convolutions, lambda n: (R(2, 3, n, n + 3), y, w), sizes=[5, 6, 9, 12]
        )
    log = inductor_log(caplog.records)
    declined = [m for m in log if "symbolic lowering declined" in m]
    assert declined == [
        "dynamic graph: symbolic lowering declined (graph not supported by the inductor: "
        "torch.conv2d (conv2d_1): symbolic sizes: the lowering needs concrete sizes); "
        "fitting kernels over sizes"
    ], log
    assert graphs == len(torchferro.compiler.cache_entries(f)) == 1


def test_symbolic_path_off_fits_templates(fresh_cache, monkeypatch, caplog):
    """``TORCHFERRO_SYMBOLIC=0``: the graph goes straight to the fitted templates (the path
    before the symbolic lowering), with the same values."""
    monkeypatch.setenv("TORCHFERRO_SYMBOLIC", "0")
    fn, make = PROGRAMS["rows"]
    with caplog.at_level(logging.INFO, logger="torchferro.inductor"):
        _run(fn, make, sizes=[2, 3, 5, 8, 13])
    text = "\n".join(inductor_log(caplog.records))
    assert "lowered symbolically" not in text, text
    assert "kernels take the sizes as arguments" in text, text


def test_contiguous_dims_run_one_merged_loop(fresh_cache):
    """Session 23: a pointwise kernel over contiguous symbolic dims runs one flat loop of
    their product (``LoopNest::merged``), vectorized under ``if(parallel: ...)``, and keeps
    eager's values at sizes 0, 1 (static graphs: they specialize) and odd and even sizes
    past them; the sizes 2 and up share one graph and one library."""

    def fn(x):
        return torch.relu(x) * 2 - 1

    torch._dynamo.reset()
    torchferro.compiler.reset()
    f = torchferro.compile(fn, dynamic=True)
    for shape in [(3, 5, 7), (4, 6, 9), (2, 3, 2), (13, 7, 5), (0, 3, 7), (1, 1, 7)]:
        x = R(*shape)
        _same(f(x), fn(x))
    entries = torchferro.compiler.cache_entries(f)
    # One graph takes every size from 2 up (s0, s1, s2); the others are the sizes 0 and 1
    # specialized (a `[1, 1, s0]` one still symbolic in its last dim). Each is one kernel of
    # one loop.
    [main] = [e for e in entries if "f32[s0, s1, s2]" in e["graph"]]
    assert "tf_sym" in main["output_code"]
    assert "x0 < (s0*s1*s2);" in main["output_code"], main["output_code"]
    for e in entries:
        code = e["output_code"]
        assert code.count("for (int64_t x") == 1, code
        assert "#pragma omp parallel for simd if(parallel: " in code, code


def test_reduction_rows_run_one_merged_loop(fresh_cache):
    """Session 24: a kernel with reductions over contiguous symbolic dims merges its row
    loops (``plan::staged_nest``): the sums, amax, softmax and layer norm over the last dim of
    ``[s0, s1, s2]`` run ``s0*s1`` rows in one parallel loop (no ``collapse(2)``), and the
    mean over the last two dims runs one loop of ``s1*s2`` per row; the softmax keeps
    ``exp(x - max)`` in a row array sized at run time. Eager's values at every
    shape, torch.compile's graph count (``dynamic=True``: sizes 0 and 1 specialize), and the
    sizes from 2 up share one graph and one library."""

    def fn(x):
        ln = F.layer_norm(x, x.shape[-1:])
        return x.sum(-1), x.amax(-1), x.mean((-2, -1)), torch.softmax(x, -1) + ln

    shapes = [
        (3, 5, 7),
        (4, 6, 9),
        (2, 3, 2),
        (13, 7, 5),
        (0, 3, 7),
        (1, 1, 7),
        (5, 2, 31),
    ]
    torch._dynamo.reset()
    torchferro.compiler.reset()
    tc = Count()
    g = torch.compile(fn, backend=tc, dynamic=True)
    f = torchferro.compile(fn, dynamic=True)
    before = _c_compiles()
    for shape in shapes:
        x = R(*shape)
        want = fn(x)
        _same(f(x), want)
        _same(g(x), want)
    entries = torchferro.compiler.cache_entries(f)
    assert len(entries) == tc.n
    [main] = [e for e in entries if "f32[s0, s1, s2]" in e["graph"]]
    code = main["output_code"]
    assert "x0 < (s0*s1); x0++" in code, code
    # One merged loop of `s1*s2` per row (summed in blocks of 1024 since session 27).
    assert re.search(r"xc?\d+ < \(s1\*s2\); xc?\d+( \+= 1024|\+\+)", code), code
    assert "collapse(2)" not in code, code
    # The softmax's exp(x - max) is kept per row (a per-thread heap array), not computed twice.
    assert "*)tf_row_scratch(0, (s2) * (int64_t)sizeof(float));" in code, code
    # The layer norm's row length as a float is computed once per row, before the reduced
    # loops (converted inside them, it kept gcc from vectorizing the variance loop).
    sizes = [ln for ln in code.splitlines() if "= ((int64_t)(s2));" in ln]
    assert sizes and all(ln.startswith("    const int64_t ") for ln in sizes), code
    # Every graph but the main one is at a size 0 or 1: the main one compiled once for its
    # five shapes.
    assert _c_compiles() - before == len(entries)


def test_max_and_min_over_symbolic_rows_propagate_nan(fresh_cache):
    """Session 24: a float max or min over a symbolic row runs OpenMP's own ``max``/``min``
    reduction with a NaN flag (not the NaN-propagating ``tfmax``, slow at a run-time trip
    count): a NaN anywhere in a row makes its result NaN, as in eager, whatever lane it falls
    in; rows of -inf, of +inf and of mixed signed zeros keep eager's values. Shapes move
    through odd and even row lengths on one graph."""

    def fn(x):
        return x.amax(-1), x.amin(-1), torch.softmax(x, -1), x.double().amax(-1)

    torch._dynamo.reset()
    torchferro.compiler.reset()
    tc = Count()
    g = torch.compile(fn, backend=tc, dynamic=True)
    f = torchferro.compile(fn, dynamic=True)
    for shape in [(3, 4, 9), (2, 5, 16), (4, 3, 33), (2, 2, 2)]:
        x = R(*shape)
        x[0, 0, -1] = float("nan")
        x[1, 1, 0] = float("nan")
        x[0, 1, :] = float("-inf")
        x[1, 0, :] = float("inf")
        x[-1, -1, :] = 0.0
        x[-1, -1, ::2] = -0.0
        want = fn(x)
        for got in (f(x), g(x)):
            for a, b in zip(got, want):
                torch.testing.assert_close(a, b, equal_nan=True)
    entries = torchferro.compiler.cache_entries(f)
    assert len(entries) == tc.n
    [main] = [e for e in entries if "f32[s0, s1, s2]" in e["graph"]]
    code = main["output_code"]
    assert "reduction(max:acc" in code and "reduction(min:acc" in code, code
    assert "tfmax:" not in code and "tfmin:" not in code, code


def test_max_and_min_over_static_rows_propagate_nan(fresh_cache):
    """Session 25: static rows take the same OpenMP ``max``/``min`` reduction with a NaN flag
    (``tfmax``'s per-lane select ran 2.3-2.7x slower at a constant trip count too). Each shape
    is its own static graph (rows of 9, 16, 33 and 64: a remainder after the vector lanes, none,
    one, and a multiple of every vector width); a NaN in any lane makes its row NaN, rows of
    -inf, +inf and signed zeros keep eager's values, as torch.compile's."""

    def fn(x):
        return x.amax(-1), x.amin(-1), torch.softmax(x, -1), x.double().amin(-1)

    torch._dynamo.reset()
    torchferro.compiler.reset()
    tc = Count()
    g = torch.compile(fn, backend=tc, dynamic=False)
    f = torchferro.compile(fn, dynamic=False)
    shapes = [(3, 4, 9), (2, 5, 16), (4, 3, 33), (2, 2, 64)]
    for shape in shapes:
        x = R(*shape)
        x[0, 0, -1] = float("nan")
        x[1, 1, 0] = float("nan")
        x[0, 1, :] = float("-inf")
        x[1, 0, :] = float("inf")
        x[-1, -1, :] = 0.0
        x[-1, -1, ::2] = -0.0
        want = fn(x)
        for got in (f(x), g(x)):
            for a, b in zip(got, want):
                torch.testing.assert_close(a, b, equal_nan=True)
    entries = torchferro.compiler.cache_entries(f)
    assert len(entries) == tc.n == len(shapes)
    for e in entries:
        code = e["output_code"]
        assert "reduction(max:acc" in code and "reduction(min:acc" in code, code
        assert "tfmax:" not in code and "tfmin:" not in code, code
