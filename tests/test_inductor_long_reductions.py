"""Long float reductions against a float64 reference: the compiled result may be at most a few
times further from the exact answer than eager's.

Eager's CPU sums are cascades (blocked partial sums, combined in levels), so their rounding
error grows with the logarithm of the length. A kernel that keeps one float accumulator per
vector lane over the whole row lets it grow linearly: `x.sum(0)` of a float32 `[4e6, 2]`
tensor was 47 off, eager 0.31 (session 26). Each case here compiles one reduction over rows of
`N` elements laid out along memory (`inner`), strided across memory (`outer`, few columns, so
the row-per-thread kernel and not the column-blocked one) and over the whole tensor, and
asserts `err(ours) <= K * err(eager) + TINY` with `err = max|y - ref| / max|ref|` and `ref` the
float64 result of the same (rounded) input. Inputs are uniform in [0, 1): a positive mean
makes the sum grow with the row, so a linearly growing error shows at this length (before the
blocked sums, 30x to 300x eager's here). The graph must run on the inductor with no fallback.
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
import torchferro
from hypothesis import given
from hypothesis import strategies as st

from inductor_checks import SETTINGS, _kernel_cache  # noqa: F401 (the module fixture)

N = 1_000_000
K = 4.0
# Twice the dtype's epsilon of room on top: the final rounding to the output dtype alone is
# half an epsilon, and eager's error may happen to be near zero on one draw.
TINY = {torch.float32: 2.4e-7, torch.float16: 2e-3, torch.bfloat16: 1.6e-2}


def _last(x, d):
    return x.transpose(d, -1)


KINDS = {
    "sum": lambda x, d: x.sum(d),
    "mean": lambda x, d: x.mean(d),
    "sq_mean": lambda x, d: (x * x).mean(d),
    "logsumexp": lambda x, d: torch.logsumexp(x * 4, d),
    "softmax": lambda x, d: torch.softmax(x * 4, d),
    "log_softmax": lambda x, d: torch.log_softmax(x * 4, d),
    "layer_norm": lambda x, d: F.layer_norm(_last(x, d), (x.shape[d],)),
    "rms_norm": lambda x, d: F.rms_norm(_last(x, d), (x.shape[d],)),
}
WHOLE = {
    "sum_all": lambda x: x.sum(),
    "mean_all": lambda x: x.mean(),
    "sq_err_mean": lambda x: ((x - (x * 0.5 + 0.25)) ** 2).mean(),
}


def rel_err(y: torch.Tensor, ref: torch.Tensor) -> float:
    scale = ref.abs().max().item()
    return (y.double() - ref).abs().max().item() / (scale if scale > 0 else 1.0)


def compare(fn, x: torch.Tensor) -> tuple[float, float]:
    """Runs `fn` eagerly and compiled; returns both errors against float64 (and checks that the
    compiled graph ran on the inductor with nothing left to torch)."""
    torchferro.compiler.reset()
    ref = fn(x.double())
    eager = rel_err(fn(x), ref)
    compiled = torchferro.compile(fn)
    ours = rel_err(compiled(x), ref)
    entries = torchferro.compiler.cache_entries(fn)
    assert len(entries) == 1, [e.get("runner") for e in entries]
    assert entries[0]["runner"] == "inductor", entries[0].get("fallback_reasons")
    assert entries[0]["fallbacks"] == 0, entries[0]["fallback_reasons"]
    return ours, eager


def _input(shape, dtype, seed=0) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return torch.rand(shape, generator=g, dtype=torch.float64).to(dtype)


@pytest.mark.parametrize("layout", ["inner", "outer"])
@pytest.mark.parametrize("kind", sorted(KINDS))
def test_long_row_error_is_eagers(kind, layout):
    shape, d = ((3, N), 1) if layout == "inner" else ((N, 3), 0)
    x = _input(shape, torch.float32)
    f = KINDS[kind]
    ours, eager = compare(lambda x: f(x, d), x)
    assert ours <= K * eager + TINY[torch.float32], (ours, eager)


@pytest.mark.parametrize("kind", sorted(WHOLE))
def test_whole_tensor_error_is_eagers(kind):
    x = _input((N,), torch.float32)
    ours, eager = compare(WHOLE[kind], x)
    assert ours <= K * eager + TINY[torch.float32], (ours, eager)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("kind", ["mean", "softmax"])
def test_half_inputs_accumulate_in_float(kind, dtype):
    # The values are converted to float and summed there; the result is rounded once.
    x = _input((2, N), dtype)
    f = KINDS[kind]
    ours, eager = compare(lambda x: f(x, 1), x)
    assert ours <= K * eager + TINY[dtype], (ours, eager)


def test_blocked_sum_is_deterministic_and_thread_independent():
    x = _input((4, 300_000), torch.float32)
    f = torchferro.compile(lambda x: x.sum(1))
    first = f(x)
    old = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        one = f(x)
    finally:
        torch.set_num_threads(old)
    assert torch.equal(first, f(x))
    assert torch.equal(first, one)


# Long rows for the reduction generator: lengths around and far past the block the C kernels
# sum into one accumulator (1024), odd lengths leaving a partial block, every layout.
@SETTINGS
@given(
    n=st.one_of(st.integers(1000, 1100), st.integers(2_000, 200_000)),
    rows=st.integers(1, 3),
    layout=st.sampled_from(["inner", "outer", "outer_sliced"]),
    kind=st.sampled_from(sorted(KINDS)),
    seed=st.integers(0, 2**16),
)
def test_long_rows_generated(n, rows, layout, kind, seed):
    if layout == "inner":
        x, d = _input((rows, n), torch.float32, seed), 1
    elif layout == "outer":
        x, d = _input((n, rows), torch.float32, seed), 0
    else:
        # A column of a wider tensor, from an offset: a strided row that does not start at 0.
        x, d = _input((n + 1, rows + 2), torch.float32, seed)[1:, 1 : 1 + rows], 0
    f = KINDS[kind]
    ours, eager = compare(lambda x: f(x, d), x)
    assert ours <= K * eager + TINY[torch.float32], (ours, eager)


@pytest.mark.parametrize("kind", ["sum", "softmax"])
def test_dynamic_long_rows(kind):
    # Rows of symbolic length are always summed in blocks; lengths with a partial last block.
    torchferro.compiler.reset()
    f = KINDS[kind]
    compiled = torchferro.compile(lambda x: f(x, 1), dynamic=True)
    for n in (3001, 50_003, 400_000):
        x = _input((2, n), torch.float32, n)
        ref = f(x.double(), 1)
        ours, eager = rel_err(compiled(x), ref), rel_err(f(x, 1), ref)
        assert ours <= K * eager + TINY[torch.float32], (n, ours, eager)
    [entry] = torchferro.compiler.cache_entries(compiled)
    assert entry["runner"] == "inductor", entry.get("fallback_reasons")
