"""Pooling lowered by the Rust inductor (``inductor/src/lower/pool.rs``) against eager, over
hypothesis-drawn shapes, kernels, strides, padding, dilation, ``ceil_mode``,
``count_include_pad`` and ``divisor_override``, and adaptive pooling to any output size: each
example's graph runs our kernels (no fallback op) and gives eager's values.

Each example compiles one graph holding a max pool, an average pool and an adaptive pool of
the same input, to keep the C compiles few.
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from inductor_checks import _kernel_cache, check, make  # noqa: F401 - the fixture

SETTINGS = settings(
    max_examples=12,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)


@st.composite
def pools(draw, n):
    """An input shape with ``n`` spatial dims and the parameters of one max, one avg and one
    adaptive pool that torch accepts on it."""
    lead = draw(st.sampled_from([(2, 3), (3,), (1, 2)]))
    k = [draw(st.integers(1, 4)) for _ in range(n)]
    s = [draw(st.integers(1, 3)) for _ in range(n)]
    p = [draw(st.integers(0, kk // 2)) for kk in k]
    d = [draw(st.integers(1, 2)) for _ in range(n)]
    # Every length fits the dilated kernel with its padding (torch raises otherwise).
    lens = [
        draw(st.integers(max(1, dd * (kk - 1) + 1 - 2 * pp), 12))
        for kk, pp, dd in zip(k, p, d)
    ]
    out = [draw(st.integers(1, 5)) for _ in range(n)]
    return {
        "shape": lead + tuple(lens),
        "k": k,
        "s": s,
        "p": p,
        "d": d,
        "out": out,
        "ceil": draw(st.booleans()),
        "include_pad": draw(st.booleans()),
        "divisor": draw(st.sampled_from([None, None, 3])),
        "layout": draw(st.sampled_from(["contiguous", "transposed", "sliced"])),
        "dtype": draw(st.sampled_from([torch.float32, torch.float64, torch.bfloat16])),
        "seed": draw(st.integers(0, 2**16)),
    }


MAX = {1: F.max_pool1d, 2: F.max_pool2d, 3: F.max_pool3d}
AVG = {1: F.avg_pool1d, 2: F.avg_pool2d, 3: F.avg_pool3d}
ADA_AVG = {1: F.adaptive_avg_pool1d, 2: F.adaptive_avg_pool2d, 3: F.adaptive_avg_pool3d}
ADA_MAX = {1: F.adaptive_max_pool1d, 2: F.adaptive_max_pool2d, 3: F.adaptive_max_pool3d}


def _program(n, c):
    def fn(x):
        a = MAX[n](x, c["k"], c["s"], c["p"], c["d"], ceil_mode=c["ceil"])
        b = AVG[n](
            x,
            c["k"],
            c["s"],
            c["p"],
            ceil_mode=c["ceil"],
            count_include_pad=c["include_pad"],
            divisor_override=c["divisor"],
        )
        return a.relu(), b * 2, ADA_AVG[n](x, c["out"]), ADA_MAX[n](x, c["out"]) - 1

    return fn


def _run(n, c):
    # bfloat16: eager's pools and ours both sum in float and round once; inductor_checks'
    # tolerance is bfloat16's rounding. The 3-d average pools of bfloat16 run on the host:
    # avg_pool3d raises in eager on the CPU (the compiled graph must raise the same, ``check``)
    # and adaptive_avg_pool3d sums in bfloat16 itself.
    x = make(c["shape"], c["dtype"], c["layout"], c["seed"])
    check(_program(n, c), x, lowered=not (n == 3 and c["dtype"] == torch.bfloat16))


@pytest.mark.parametrize("n", [1, 2, 3])
def test_pools_match_eager(n):
    @SETTINGS
    @given(pools(n))
    def run(c):
        _run(n, c)

    run()


@pytest.mark.parametrize(
    "fn",
    [
        # ceil_mode: the last window starts inside and runs past the edge (7 -> 4 windows).
        lambda x: F.max_pool2d(x, 3, 2, ceil_mode=True),
        # ceil_mode with padding: the window that would start in the right padding is dropped.
        lambda x: F.max_pool2d(x, 2, 2, 1, ceil_mode=True),
        lambda x: F.avg_pool2d(x, 3, 2, 1, ceil_mode=True, count_include_pad=True),
        lambda x: F.avg_pool2d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False),
        lambda x: F.avg_pool2d(x, (2, 3), 1, (1, 0), divisor_override=4),
        # Adaptive windows past 25 elements (7x4, 4x8) reduce instead of unrolling.
        lambda x: F.adaptive_avg_pool2d(x, (1, 2)),
        lambda x: F.adaptive_max_pool2d(x, (2, 1)) * 2,
        lambda x: F.adaptive_max_pool2d(x, (3, 5)),
    ],
)
def test_each_pool_is_our_kernel(fn):
    x = make((2, 3, 7, 8), torch.float32, seed=5)
    check(fn, x)
