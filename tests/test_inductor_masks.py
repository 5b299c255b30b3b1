"""The Rust inductor against eager torch for the ops that build attention masks and position
ids (issue 14): ``arange``, the constant fills (``zeros`` / ``ones`` / ``full``, ``new_*``,
``*_like``), ``cumsum``, ``diff`` and indexing by several index tensors. Each must lower to
generated kernels (no fallback op) and give eager's values. Helpers and the module's kernel
cache: ``inductor_checks.py``.
"""

from __future__ import annotations

import pytest
import torch
import torchferro
from hypothesis import given
from hypothesis import strategies as st

from inductor_checks import (  # noqa: F401 (the module fixture)
    SETTINGS,
    FLOATS,
    HALF,
    INTS,
    ALL,
    make,
    shapes,
    nonempty_shapes,
    layouts,
    seeds,
    check,
    _kernel_cache,
)

# Constants the compiled lambdas read from this module's globals (specialized as guarded
# constants), set before each check.
ARGS: list = []


@SETTINGS
@given(
    start=st.integers(-5, 5),
    length=st.integers(0, 9),
    step=st.sampled_from([1, 2, 3, -1, -2]),
    dtype=st.sampled_from(
        [None, torch.int64, torch.int32, torch.float32, torch.float64]
    ),
)
def test_arange_ints(start, length, step, dtype):
    ARGS[:] = [start, start + length * step, step, dtype]
    check(
        lambda x: (torch.arange(ARGS[0], ARGS[1], ARGS[2], dtype=ARGS[3]), x + 1),
        torch.ones(2),
    )


@SETTINGS
@given(
    start=st.sampled_from([0.0, 0.5, -1.25, 3.0]),
    end=st.sampled_from([2.0, 4.5, -3.0, 7.25]),
    step=st.sampled_from([0.25, 0.5, 1.0, -0.5, 1.5]),
    dtype=st.sampled_from([None, torch.float32, torch.float64]),
)
def test_arange_floats(start, end, step, dtype):
    if (end - start) / step < 0:
        end = start + (start - end)
    ARGS[:] = [start, end, step, dtype]
    check(
        lambda x: torch.arange(ARGS[0], ARGS[1], ARGS[2], dtype=ARGS[3]) * x,
        torch.ones(1),
    )


def test_arange_in_a_kernel_is_not_a_buffer():
    """A causal mask from two aranges is one comparison kernel: no fallback, no extern."""
    entry = check(
        lambda x: x.masked_fill(
            torch.arange(x.shape[-1])[None, :] > torch.arange(x.shape[-2])[:, None], 0.0
        ),
        make((3, 5, 7), torch.float32),
        kernels=1,
    )
    assert "arange" not in str(entry.get("fallback_reasons"))


@SETTINGS
@given(
    shape=shapes, dtype=st.sampled_from(ALL), lay=layouts, seed=seeds, data=st.data()
)
def test_fills(shape, dtype, lay, seed, data):
    x = make(shape, dtype, lay, seed)
    value = data.draw(st.sampled_from([0, 1, -3, 2.5, True]))
    if not dtype.is_floating_point and isinstance(value, float):
        value = 2
    if dtype == torch.uint8 and value < 0:
        value = 3
    ARGS[:] = [shape, value, dtype]
    check(
        lambda x: (
            torch.zeros(ARGS[0], dtype=ARGS[2]),
            torch.ones(ARGS[0]),
            torch.full(ARGS[0], ARGS[1]),
            torch.full(ARGS[0], ARGS[1], dtype=ARGS[2]),
            x.new_ones(()),
            x.new_zeros(ARGS[0], dtype=torch.int64),
            x.new_full(ARGS[0], ARGS[1]),
            torch.zeros_like(x),
            torch.ones_like(x, dtype=torch.float64),
            torch.full_like(x, ARGS[1]),
            x.new_ones((), dtype=torch.bool) & (x != 0),
        ),
        x,
    )


@SETTINGS
@given(
    shape=nonempty_shapes,
    dtype=st.sampled_from(ALL),
    lay=layouts,
    seed=seeds,
    acc=st.sampled_from([None, torch.float64, torch.int64]),
    data=st.data(),
)
def test_cumsum(shape, dtype, lay, seed, acc, data):
    x = make(shape, dtype, lay, seed)
    ARGS[:] = [data.draw(st.integers(-len(shape), len(shape) - 1)), acc]
    if acc is not None and dtype.is_floating_point and not acc.is_floating_point:
        ARGS[1] = None
    check(
        lambda x: (x.cumsum(ARGS[0]), torch.cumsum(x, dim=ARGS[0], dtype=ARGS[1]) * 1),
        x,
    )


# Magnitudes whose sums cancel: a double sum of them depends on the order of its adds.
_CANCELLING = [2.0**53, -(2.0**53), 1e16, -1e16, 1.0, -1.0, 0.5, 3e-5, 1e8, -7.25]


@SETTINGS
@given(
    rows=st.integers(1, 4),
    n=st.integers(2, 64),
    dtype=st.sampled_from([torch.float32, torch.float64, torch.int64]),
    transposed=st.booleans(),
    data=st.data(),
)
def test_cumsum_adds_in_eagers_order(rows, n, dtype, transposed, data):
    """A float cumsum gives eager's bits, not values within a tolerance: torch's CPU kernel adds
    each row sequentially in double, so a compiled sum that reassociates (vector lanes, threads)
    rounds differently where large terms cancel. Session 18 saw this as `cumsum-int64` failing
    under the GPU machine's gcc 13, whose vectorized reduction split the adds another way."""
    vals = data.draw(
        st.lists(st.sampled_from(_CANCELLING), min_size=rows * n, max_size=rows * n)
    )
    x = torch.tensor(vals, dtype=torch.float64).reshape(rows, n)
    x = x.to(dtype) if dtype.is_floating_point else (x / 2**20).round().to(dtype)
    if transposed:
        x = x.t().contiguous().t()
    torchferro.compiler.reset()
    fn = lambda x: (x.cumsum(-1), x.cumsum(-1, dtype=torch.float64), x.cumsum(0))  # noqa: E731
    expected = fn(x)
    actual = torchferro.compile(fn)(x)
    for e, a in zip(expected, actual):
        assert e.dtype == a.dtype
        assert torch.equal(e, a), (x, e, a)


def test_cumsum_longer_than_the_triangle_limit_runs_on_torch():
    """Past 512 positions the quadratic form is refused; torch's cumsum runs (same values)."""
    x = make((2, 600), torch.float32)
    entry = check(lambda x: x.cumsum(-1) + 1, x, lowered=False)
    assert entry["fallbacks"] == 1
    assert "triangle form is quadratic" in str(entry["fallback_reasons"])


@SETTINGS
@given(
    shape=nonempty_shapes,
    dtype=st.sampled_from(FLOATS + INTS + HALF + [torch.bool]),
    lay=layouts,
    seed=seeds,
    n=st.integers(0, 3),
    ends=st.sampled_from(["none", "prepend", "append", "both"]),
    data=st.data(),
)
def test_diff(shape, dtype, lay, seed, n, ends, data):
    x = make(shape, dtype, lay, seed)
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    side = list(shape)
    side[dim] = data.draw(st.integers(1, 2))
    p = make(tuple(side), dtype, seed=seed + 1) if ends in ("prepend", "both") else None
    a = make(tuple(side), dtype, seed=seed + 2) if ends in ("append", "both") else None
    ARGS[:] = [n, dim]
    if p is None and a is None:
        check(lambda x: torch.diff(x, n=ARGS[0], dim=ARGS[1]), x)
    elif a is None:
        check(lambda x, p: torch.diff(x, ARGS[0], ARGS[1], prepend=p), x, p)
    elif p is None:
        check(lambda x, a: x.diff(ARGS[0], ARGS[1], append=a), x, a)
    else:
        check(lambda x, p, a: torch.diff(x, ARGS[0], ARGS[1], p, a), x, p, a)


def test_diff_zero_times_is_a_copy():
    """``diff(x, n=0)`` is a new tensor in eager (prepend ignored): writing to it in place
    leaves the input alone."""

    def f(x, p):
        y = torch.diff(x, n=0, prepend=p)
        y.add_(1)
        return x * 1, y

    check(f, make((3, 4), torch.float32), make((3, 1), torch.float32))


@SETTINGS
@given(
    shape=st.lists(st.sampled_from([1, 2, 3, 5]), min_size=2, max_size=4).map(tuple),
    k=st.integers(2, 3),
    dtype=st.sampled_from(ALL),
    lay=layouts,
    seed=seeds,
    index_dtype=st.sampled_from([torch.int64, torch.int32]),
    trailing=st.sampled_from(["", "slice", "ellipsis"]),
    data=st.data(),
)
def test_index_by_several_tensors(
    shape, k, dtype, lay, seed, index_dtype, trailing, data
):
    k = min(k, len(shape))
    x = make(shape, dtype, lay, seed)
    # Index shapes that broadcast together; positions in [-size, size) (negatives wrap). 0-d
    # index tensors are left out: the tracer breaks the graph there (a data-dependent int).
    out = data.draw(st.lists(st.sampled_from([1, 2, 3]), min_size=1, max_size=3))
    idx = []
    for j in range(k):
        s = [d if data.draw(st.booleans()) else 1 for d in out]
        s = s[data.draw(st.integers(0, len(s) - 1)) :]
        idx.append(
            make(tuple(s), index_dtype, seed=seed + j, low=-shape[j], high=shape[j])
        )
    if trailing == "slice" and k < len(shape):
        check(lambda x, *i: x[(*i, slice(None))] * 1, x, *idx)
    elif trailing == "ellipsis":
        check(lambda x, *i: x[(*i, ...)], x, *idx)
    else:
        check(lambda x, *i: x[i], x, *idx)


def test_index_by_several_tensors_out_of_range_raises():
    """A position outside its dim raises IndexError, as eager does (no wrong read)."""
    x = make((3, 4), torch.float32)
    i, j = torch.tensor([0, 2]), torch.tensor([1, 4])
    with pytest.raises(IndexError):
        x[i, j]
    torchferro.compiler.reset()
    with pytest.raises(IndexError):
        torchferro.compile(lambda x, i, j: x[i, j] + 1)(x, i, j)


def _packed_causal_mask(ids):
    """``transformers``' mask construction for a batch of sequences (positions from arange,
    packed-sequence starts from ``diff``/``cumsum``, the mask from indexing by aranges)."""
    b, t = ids.shape
    pos = (torch.arange(t) + 0).unsqueeze(0).expand(b, -1)
    first = pos[:, :1] - 1
    seq = (torch.diff(pos, prepend=first, dim=-1) != 1).cumsum(-1)
    bi = torch.arange(b)[:, None, None, None]
    qi = (torch.arange(t) + 0)[None, None, :, None]
    ki = (torch.arange(t) + 0)[None, None, None, :]
    causal = qi.new_ones((), dtype=torch.bool) & (pos[bi, ki] <= pos[bi, qi])
    return causal & (seq[bi, qi] == seq[bi, ki])


def test_llama_mask_construction_has_no_fallbacks():
    """The whole mask path of Llama's forward is generated code (it used to be 11 torch calls:
    4 aranges, diff, cumsum, new_ones and 4 advanced indexings)."""
    ids = torch.randint(0, 100, (4, 16))
    entry = check(_packed_causal_mask, ids)
    assert entry["fallbacks"] == 0
