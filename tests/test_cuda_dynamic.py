"""CUDA graphs with symbolic sizes (issue 18 on issue 16's CUDA inductor; docs/cuda.md).

A dynamic graph on CUDA tensors is lowered once symbolically, printed as one CUDA source whose
kernels take the symbols' values as parameters, compiled by NVRTC once, and launched at every
size with grids computed on the host from the sizes. Asserted here, against eager torch on the
same device and torch.compile's counts: values at sizes drawn by hypothesis (each dimension
1..64), the graph count torch.compile makes, our kernels launched at every call (not the eager
runner), and exactly one NVRTC compile per graph (``torchferro._C._nvrtc_compiles``, a fresh
kernel cache per example): one for all the sizes a symbolic graph serves.

The whole module skips on a machine without a CUDA device (CI); the CUDA source of a
symbolic graph is checked there by NVRTC (``cargo test -p inductor --features cuda --test
cuda_codegen symbolic`` and ``tests/test_cuda_codegen.py``).
"""

from __future__ import annotations

import logging
import os
import tempfile

import pytest
import torch

if not torch.cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)

import torch._dynamo  # noqa: E402
import torch.nn.functional as F  # noqa: E402
import torchferro  # noqa: E402
import torchferro.compiler  # noqa: E402
from conftest import CountingBackend  # noqa: E402
from cuda_env import DEV, cuda_env, launches  # noqa: E402
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from programs.dynamic import inductor_log  # noqa: E402
from torchferro import _C  # noqa: E402


@pytest.fixture(scope="module", autouse=True)
def _cuda_on(tmp_path_factory):
    # Full float32 GEMMs: TF32 rounds a GEMM's inputs to 10 bits, which eager and ours would
    # each do, but not on the same summation order.
    with cuda_env(tmp_path_factory, full_float32=True):
        yield


def R(*shape):
    return torch.randn(*shape, device=DEV)


def same(a, b):
    """Shapes and dtypes exact; values within float32 rounding of reordered sums."""
    flat = lambda v: v if isinstance(v, (tuple, list)) else (v,)  # noqa: E731
    for x, y in zip(flat(a), flat(b), strict=True):
        assert x.shape == y.shape and x.dtype == y.dtype, (x.shape, y.shape)
        assert x.device == y.device, (x.device, y.device)
        torch.testing.assert_close(x, y, rtol=1e-4, atol=1e-4, equal_nan=True)


# --- programs: (fn, inputs at sizes (n, m)) -------------------------------------------------


def pointwise_broadcast(x, w, b):
    return (x * w + b).sigmoid() - torch.tanh(x) / (w.abs() + 1)


def reductions(x):
    return x.sum(1), x.mean(0), x.amax(-1, keepdim=True), x.var(0), x.sum()


def rows(x, w, b):
    return (
        torch.softmax(x, -1),
        F.layer_norm(x, x.shape[-1:], w, b),
        F.log_softmax(x, 0),
    )


def views_and_slices(x, y):
    B = x.size(0)
    c = torch.cat([x, y], dim=0)
    v = x.t().reshape(-1) * 2
    return v, c[1:] + 1, c[: B // 2 + 1].sum(0), x[:, ::2] * 2, x[-1:] - x[:1]


def masks(x):
    T = x.size(-1)
    pos = torch.arange(T, device=x.device)
    causal = pos[None, :] <= pos[:, None]
    s = x.unsqueeze(-1) * torch.ones(T, T, device=x.device) + pos
    return s.masked_fill(~causal, float("-inf")).softmax(-1)


def matmul_epilogue(x, w, b):
    return F.gelu(F.linear(x, w, b), approximate="tanh") * 2 + x


def moves(x, m):
    # `.to(device)` onto the device the tensors are on moves nothing: lowered as the identity
    # (a model's `mask.to(x.device)`), not run through torch, which a symbolic graph cannot do.
    y = x.to(x.device) * 2 + m.to(device=x.device, dtype=x.dtype, non_blocking=True)
    return y.to(DEV).relu(), x.to(DEV, torch.float64).sum(-1)


PROGRAMS = {
    "pointwise_broadcast": (
        pointwise_broadcast,
        lambda n, m: (R(n, m), R(m), R(n, 1)),
    ),
    "reductions": (reductions, lambda n, m: (R(n, m),)),
    "rows": (rows, lambda n, m: (R(n, m), R(m), R(m))),
    "views_and_slices": (views_and_slices, lambda n, m: (R(n, m), R(3, m))),
    "masks": (masks, lambda n, m: (R(n, m),)),
    "matmul_epilogue": (matmul_epilogue, lambda n, m: (R(n, 16), R(16, 16), R(16))),
    "moves": (moves, lambda n, m: (R(n, m), R(n, m) > 0)),
}

# Each dimension 1..64: size 1 specializes (a graph of its own, static, as torch.compile's).
SHAPES = st.lists(
    st.tuples(st.integers(1, 64), st.integers(1, 64)), min_size=2, max_size=7
)


def run(fn, make, shapes, dynamic):
    """``fn`` at ``shapes`` eagerly, through torch.compile (counting backend) and through
    torchferro with ``dynamic``, from a fresh kernel cache; returns torchferro's graphs,
    torch.compile's graphs and the NVRTC compiles made, after checking values and that our
    kernels ran at every call."""
    torch._dynamo.reset()
    torchferro.compiler.reset()
    os.environ["TORCHFERRO_CACHE_DIR"] = tempfile.mkdtemp(prefix="tf-cudadyn-")
    tc = CountingBackend()
    t = torch.compile(fn, backend=tc, dynamic=dynamic)
    f = torchferro.compile(fn, dynamic=dynamic)
    before = _C._nvrtc_compiles()
    with torch.no_grad():
        for n, m in shapes:
            args = make(n, m)
            want = fn(*args)
            same(t(*args), want)
            ran = launches()
            same(f(*args), want)
            assert launches() > ran, f"no kernel of ours ran at {(n, m)}"
    entries = torchferro.compiler.cache_entries(f)
    assert all(e["runner"] == "inductor" for e in entries), entries
    return len(entries), tc.count, _C._nvrtc_compiles() - before


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_one_nvrtc_compile_for_every_size_with_dynamic_true(name, caplog):
    """Sizes 2..64 (the first call's dims distinct, so no duck-sized symbols): one graph, as
    torch.compile, lowered symbolically and compiled by NVRTC once for all the sizes."""
    fn, make = PROGRAMS[name]
    shapes = [(5, 7), (2, 2), (64, 64), (3, 17), (33, 2), (13, 31), (64, 5)]
    if name == "views_and_slices":
        shapes = [(s[0], 8) for s in shapes]
    with caplog.at_level(logging.INFO, logger="torchferro.inductor"):
        graphs, torch_graphs, compiles = run(fn, make, shapes, dynamic=True)
    log = "\n".join(inductor_log(caplog.records))
    assert "dynamic graph: lowered symbolically" in log, log
    assert "declined" not in log and "eager" not in log, log
    assert (graphs, compiles) == (torch_graphs, 1), log


@pytest.mark.parametrize("name", ["pointwise_broadcast", "rows", "reductions"])
@settings(
    max_examples=8,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(shapes=SHAPES)
def test_sizes_1_to_64_dynamic_true(name, shapes):
    """Hypothesis over sizes 1..64 per dimension with ``dynamic=True``: eager's values,
    torch.compile's graph count (size 1 and duck-sized equal sizes give graphs of their own),
    and one NVRTC compile per graph, never one per size."""
    fn, make = PROGRAMS[name]
    graphs, torch_graphs, compiles = run(fn, make, shapes, dynamic=True)
    assert graphs == torch_graphs
    assert compiles == graphs


@pytest.mark.usefixtures("torch_rule")
@pytest.mark.parametrize("name", ["pointwise_broadcast", "rows", "masks"])
@settings(
    max_examples=8,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(shapes=SHAPES)
def test_sizes_1_to_64_automatic_dynamic(name, shapes):
    """``dynamic=None`` under torch.compile's own rule (``torch_rule``: only the changed sizes
    turn dynamic, 0 and 1 specialize): static first, a dimension that changed becomes dynamic
    at the recompile. torch.compile's graph count, one NVRTC compile per graph. (The default
    rule compiles less: a batch of 1 shares the symbolic graph, with kernels of its own.)"""
    fn, make = PROGRAMS[name]
    graphs, torch_graphs, compiles = run(fn, make, shapes, dynamic=None)
    assert graphs == torch_graphs
    assert compiles == graphs


def test_automatic_dynamic_compiles_twice_over_many_lengths():
    """A sequence length moving over 2..64 under automatic dynamic: the static first graph,
    then one dynamic graph for every other length; two NVRTC compiles in all."""
    fn, make = PROGRAMS["rows"]
    shapes = [(4, n) for n in range(2, 65)]
    graphs, torch_graphs, compiles = run(fn, make, shapes, dynamic=None)
    assert (graphs, torch_graphs, compiles) == (2, 2, 2)


@pytest.mark.parametrize("name", ["gpt2", "llama"])
def test_decoder_over_lengths_compiles_nvrtc_twice(name):
    """A transformers decoder on CUDA over sequence lengths 8..31 under automatic dynamic
    (the zoo's GPT-2 has 32 positions):
    torch.compile's graph count, eager's values, and two NVRTC compiles in all (the static
    first graph and the symbolic one). Session 21 measured one per length on GPT-2: its graph
    moved a mask with ``.to(device)``, which the symbolic lowering declined."""
    import test_models as M

    torch._dynamo.reset()
    torchferro.compiler.reset()
    os.environ["TORCHFERRO_CACHE_DIR"] = tempfile.mkdtemp(prefix="tf-cudadyn-")
    torch.manual_seed(0)
    model = M.build(name).to(DEV).eval()
    tc = CountingBackend()
    t = torch.compile(model, backend=tc)
    f = torchferro.compile(model)
    before = _C._nvrtc_compiles()
    with torch.no_grad():
        for T in (8, 9, 16, 17, 24, 31):
            ids = torch.randint(0, 100, (2, T), device=DEV)
            want = model(input_ids=ids)[0]
            t(input_ids=ids)
            got = f(input_ids=ids)[0]
            torch.testing.assert_close(got, want, rtol=1e-3, atol=1e-3)
    entries = torchferro.compiler.cache_entries(f)
    assert all(e["runner"] == "inductor" for e in entries), entries
    assert len(entries) == tc.count
    assert _C._nvrtc_compiles() - before == len(entries), entries
