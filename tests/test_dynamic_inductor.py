"""Dynamic shapes through the inductor (issue 18, phase 2): the acceptance tests.

Each program is compiled once with ``dynamic=True`` and called over sizes 2..64 (odd and prime
ones included). Asserted: values equal eager's, exactly one compile (one cache entry, as many
graphs as torch.compile makes with a counting backend), and that the inductor runs the graph:
its kernels are compiled per assignment of the size symbols (the graph specialized to the call's
sizes; the trace and its guards are made once), up to ``TORCHFERRO_SIZE_VARIANTS``
assignments, past which new sizes run on the eager runner.

Not yet true (issue 18 phase 2): one kernel library for all sizes, with sizes as kernel
arguments.
"""

from __future__ import annotations

import logging

import pytest
import torch
import torch._dynamo
import torch.nn.functional as F
import torchferro
import torchferro.compiler
from programs.dynamic import Block, inductor_log

SIZES = [2, 3, 5, 8, 13, 17, 31, 32, 47, 64]
R = torch.randn


class Count:
    """A backend that counts graphs and runs the GraphModule it is given."""

    def __init__(self):
        self.n = 0

    def __call__(self, gm, example_inputs):
        self.n += 1
        return gm.forward


def _flat(v):
    return v if isinstance(v, (tuple, list)) else (v,)


def _same(a, b):
    for x, y in zip(_flat(a), _flat(b), strict=True):
        assert isinstance(x, torch.Tensor) and x.shape == y.shape and x.dtype == y.dtype
        torch.testing.assert_close(x, y, rtol=1e-5, atol=1e-5)


# --- programs: (fn, inputs for size n) ------------------------------------------------------------


def pointwise(x, y):
    return (x * y + 1).relu().sigmoid() - torch.tanh(x) / (y.abs() + 1)


def broadcasting(x, b):
    return (x + b) * b.exp(), x - x.mean()


def reductions(x):
    return x.sum(1), x.amax(0), x.mean(-1, keepdim=True), x.var(0), x.sum()


def rows(x, w, b):
    return (
        torch.softmax(x, -1),
        F.layer_norm(x, x.shape[-1:], w, b),
        F.log_softmax(x, 0),
    )


def views(x, y):
    B = x.size(0)
    v = x.view(B, -1, 2).transpose(1, 2).reshape(B, -1) * 2
    c = torch.cat([x, y], dim=0)
    return v, c[1:] + 1, c[: B // 2 + 1].sum(0), x[:, ::2]


def matmuls(x, w, b):
    return F.linear(x, w, b).relu() @ w, torch.bmm(x.unsqueeze(0), x.t().unsqueeze(0))


torch.manual_seed(0)
_W32, _B32 = R(32, 32), R(32)
_BLOCK = Block().eval()

PROGRAMS = {
    "pointwise": (pointwise, lambda n: (R(n, 7), R(n, 7))),
    "broadcasting": (broadcasting, lambda n: (R(n, 6), R(6))),
    "reductions": (reductions, lambda n: (R(n, 9),)),
    "rows": (rows, lambda n: (R(4, n), R(n), R(n))),
    "views": (views, lambda n: (R(n, 8), R(3, 8))),
    "matmuls": (matmuls, lambda n: (R(n, 32), _W32, _B32)),
    "gpt2_block": (_BLOCK, lambda n: (R(4, n, 32),)),
}


def _compile_and_run(fn, make):
    """Runs ``fn`` over SIZES eagerly, through torch.compile (counting backend) and through
    torchferro's default backend, all with ``dynamic=True``; returns the compiled function and
    torch.compile's graph count."""
    torch._dynamo.reset()
    torchferro.compiler.reset()
    tc = Count()
    t = torch.compile(fn, backend=tc, dynamic=True)
    f = torchferro.compile(fn, dynamic=True)
    with torch.no_grad():
        for n in SIZES:
            args = make(n)
            want = fn(*args)
            _same(t(*args), want)
            _same(f(*args), want)
    return f, tc.n


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_values_and_one_compile(name):
    fn, make = PROGRAMS[name]
    f, torch_graphs = _compile_and_run(fn, make)
    assert torch_graphs == 1
    assert len(torchferro.compiler.cache_entries(f)) == 1


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_the_inductor_runs_it(name, caplog, monkeypatch):
    """Every size gets kernels: the first at the hints, each later one compiled on its first
    call (the limit raised to the number of sizes)."""
    monkeypatch.setenv("TORCHFERRO_SIZE_VARIANTS", str(len(SIZES)))
    fn, make = PROGRAMS[name]
    with caplog.at_level(logging.INFO, logger="torchferro.inductor"):
        f, _ = _compile_and_run(fn, make)
    log = inductor_log(caplog.records)
    text = "\n".join(log)
    assert "symbolic sizes" not in text, text
    assert "eager" not in text, text
    compiled = [
        m for m in log if m.startswith("dynamic graph: kernels compiled for sizes")
    ]
    assert len(compiled) == len(SIZES) - 1, text
    [entry] = torchferro.compiler.cache_entries(f)
    assert entry["runner"] == "inductor", entry["runner"]


def test_sizes_past_the_variant_limit_run_on_the_eager_runner(caplog, monkeypatch):
    """With room for 3 assignments, the 4th and 5th sizes run on the eager runner (said once),
    with eager's values; an earlier size still runs its kernels, compiled once."""
    monkeypatch.setenv("TORCHFERRO_SIZE_VARIANTS", "3")
    torch._dynamo.reset()
    torchferro.compiler.reset()
    f = torchferro.compile(pointwise, dynamic=True)
    sizes = [4, 9, 16, 25, 36, 9, 36, 4]
    with caplog.at_level(logging.INFO, logger="torchferro.inductor"):
        for n in sizes:
            x, y = R(n, 7), R(n, 7)
            _same(f(x, y), pointwise(x, y))
    log = inductor_log(caplog.records)
    assert log == [
        "dynamic graph: kernels compiled for sizes s0=9, s1=7 (first at s0=4, s1=7)",
        "dynamic graph: kernels compiled for sizes s0=16, s1=7 (first at s0=4, s1=7)",
        (
            "dynamic graph: sizes s0=25, s1=7 and other new ones run on the eager runner "
            "(kernels exist for 3 assignments of the size symbols; TORCHFERRO_SIZE_VARIANTS)"
        ),
    ], log
    assert len(torchferro.compiler.cache_entries(f)) == 1


def reshaped_view(x):
    B = x.size(0)
    return x.view(B, -1, 2)


def test_a_returned_view_taking_a_size_is_a_view_of_the_input_at_each_size(caplog):
    """``x.view(x.size(0), -1, 2)`` returned: each size's kernels return a view of the input
    with that call's sizes (not the hints')."""
    torch._dynamo.reset()
    torchferro.compiler.reset()
    f = torchferro.compile(reshaped_view, dynamic=True)
    with caplog.at_level(logging.INFO, logger="torchferro.inductor"):
        for n in (4, 6, 10, 6):
            x = R(n, 8)
            y = f(x)
            assert y.shape == (n, 4, 2) and y.data_ptr() == x.data_ptr()
            torch.testing.assert_close(y, reshaped_view(x))
    assert inductor_log(caplog.records) == [
        "dynamic graph: kernels compiled for sizes s0=6, s1=8 (first at s0=4, s1=8)",
        "dynamic graph: kernels compiled for sizes s0=10, s1=8 (first at s0=4, s1=8)",
    ]
    [entry] = torchferro.compiler.cache_entries(f)
    assert entry["runner"] == "inductor"


def test_a_training_graph_with_symbols_compiles_per_size(caplog):
    """A graph that needs a backward is specialized per assignment of its symbols, each with
    its own joint, forward and backward (``backend/aot_dynamic.rs``; more in
    ``test_aot_dynamic.py``): eager's values and gradients, one derivation per size."""
    torch._dynamo.reset()
    torchferro.compiler.reset()
    w = R(7, 7, requires_grad=True)

    def fn(x):
        return (x @ w).relu().sum(0)

    f = torchferro.compile(fn, dynamic=True)
    with caplog.at_level(logging.INFO, logger="torchferro.aot"):
        for n in (3, 5, 9):
            x = R(n, 7)
            out = f(x)
            out.sum().backward()
            got, w.grad = w.grad, None
            want = fn(x)
            want.sum().backward()
            torch.testing.assert_close(out, want)
            torch.testing.assert_close(got, w.grad)
            w.grad = None
    text = "\n".join(
        r.getMessage() for r in caplog.records if r.name == "torchferro.aot"
    )
    assert "runs through torch's autograd" not in text, text
    assert text.count("forward 3 ops, backward") == 3, text
    [entry] = torchferro.compiler.cache_entries(f)
    assert entry["runner"] == "aot"


@pytest.mark.parametrize("name", ["pointwise", "reductions", "views", "gpt2_block"])
def test_the_kernels_at_a_size_are_the_static_graphs(name):
    """The dynamic graph specialized to a size generates the C the static graph at that size
    does: the same kernels, so the same per-call time (the dynamic call adds a read of the
    inputs' shapes)."""
    fn, make = PROGRAMS[name]
    args = make(13)
    code = {}
    for dynamic in (True, False):
        torch._dynamo.reset()
        torchferro.compiler.reset()
        f = torchferro.compile(fn, dynamic=dynamic)
        with torch.no_grad():
            _same(f(*args), fn(*args))
        [entry] = torchferro.compiler.cache_entries(f)
        assert entry["runner"] == "inductor"
        code[dynamic] = entry["output_code"]
        assert isinstance(code[dynamic], str) and "13" in code[dynamic], code[dynamic]
    assert code[True] == code[False]
