"""``cat`` stored by parts (issue 14, Inductor's ``ConcatKernel``): a stored ``cat`` (a graph
output, a value read again) and a value that reads one pointwise (rotary's
``q * cos + rotate_half(q) * sin``) run one plain loop per part, each writing its range of the
output. Checked against eager over shapes with hypothesis: 2-4 parts of unequal sizes along the
cat dim (zero-size parts included), dims 0 and -1, float32/float16/int64/bool, non-contiguous
inputs, a cat that is also returned. Values are bit-equal to eager's (no arithmetic beyond
eager's own per-element ops), and the kernel count is one per non-empty part.
"""

from __future__ import annotations

import pytest
import torch
import torchferro
import torchferro.compiler
from hypothesis import given
from hypothesis import strategies as st
from inductor_checks import SETTINGS, _kernel_cache, make  # noqa: F401

DTYPES = [torch.float32, torch.float16, torch.int64, torch.bool]
# `CpuPolicy::split_store_min_elems`: a smaller static store keeps its one loop (the extra
# kernel call costs more than the select it removes).
SPLIT_MIN_ELEMS = 1024


def run(fn, *args):
    torchferro.compiler.reset()
    want = fn(*args)
    got = torchferro.compile(fn)(*args)
    [entry] = torchferro.compiler.cache_entries(fn)
    assert entry["runner"] == "inductor", entry.get("fallback_reasons")
    assert entry["fallbacks"] == 0, entry["fallback_reasons"]
    return want, got, entry


def assert_bit_equal(got, want):
    assert got.dtype == want.dtype and got.shape == want.shape
    assert torch.equal(got, want), (got, want)


@st.composite
def cat_case(draw):
    rank = draw(st.integers(1, 3))
    other = draw(st.lists(st.sampled_from([1, 2, 3, 5]), min_size=rank, max_size=rank))
    dim = draw(st.sampled_from([0, -1]))
    n = draw(st.integers(2, 4))
    along = draw(st.lists(st.sampled_from([0, 1, 2, 3, 7]), min_size=n, max_size=n))
    layouts = draw(
        st.lists(
            st.sampled_from(["contiguous", "transposed", "sliced"]),
            min_size=n,
            max_size=n,
        )
    )
    dtype = draw(st.sampled_from(DTYPES))
    seed = draw(st.integers(0, 2**16))
    shapes = []
    for a in along:
        s = list(other)
        s[dim] = a
        shapes.append(tuple(s))
    parts = [
        make(s, dtype, lay, seed + i) for i, (s, lay) in enumerate(zip(shapes, layouts))
    ]
    return parts, dim


def kernels_code(entry):
    """The generated kernels, without the prelude (which defines the select helpers)."""
    return entry["output_code"].split("void kernel0", 1)[1]


def selects(entry):
    """Whether a kernel selects per element (`where`) or clamps an index (a cat's form)."""
    code = kernels_code(entry)
    return "tf_self(" in code or "tf_clampi(" in code


def expected_kernels(parts, dim, out):
    """Kernels of a stored cat: one per non-empty part, or one under the size threshold."""
    if out.numel() == 0:
        return None
    if out.numel() < SPLIT_MIN_ELEMS:
        return 1
    return max(1, sum(p.shape[dim] > 0 for p in parts))


@SETTINGS
@given(cat_case())
def test_returned_cat_is_one_loop_per_part(case):
    parts, dim = case

    def f(*xs):
        return torch.cat(xs, dim)

    want, got, entry = run(f, *parts)
    assert_bit_equal(got, want)
    k = expected_kernels(parts, dim, want)
    if k is not None:
        assert entry["kernels"] == k, entry["output_code"]
        if want.numel() >= SPLIT_MIN_ELEMS:
            assert not selects(entry), entry["output_code"]


@SETTINGS
@given(cat_case())
def test_cat_of_computed_parts_returned_and_read_again(case):
    parts, dim = case

    def f(*xs):
        c = torch.cat([x if x.dtype == torch.bool else -x for x in xs], dim)
        return c, c.sum(dim)

    want, got, _ = run(f, *parts)
    assert_bit_equal(got[0], want[0])
    tol = {"rtol": 4e-3, "atol": 1e-2} if want[1].dtype == torch.float16 else {}
    torch.testing.assert_close(got[1], want[1], **tol)


def rotate_half(x):
    d = x.shape[-1]
    return torch.cat((-x[..., d // 2 :], x[..., : d // 2]), dim=-1)


def rotary(q, cos, sin):
    return q * cos + rotate_half(q) * sin


@SETTINGS
@given(
    st.sampled_from([(2, 8, 16, 64), (1, 4, 16, 32), (1, 3, 5, 8), (2, 2, 3, 6)]),
    st.sampled_from(["contiguous", "transposed", "sliced"]),
    st.integers(0, 2**16),
)
def test_rotary_consumer_is_split_at_the_cat_and_bit_equal(shape, layout, seed):
    q = make(shape, torch.float32, layout, seed)
    cos = make(shape[-2:], torch.float32, "contiguous", seed + 1)
    sin = make(shape[-2:], torch.float32, "contiguous", seed + 2)
    want, got, entry = run(rotary, q, cos, sin)
    assert_bit_equal(got, want)
    if q.numel() < SPLIT_MIN_ELEMS:
        # Small: one loop selecting per element.
        assert entry["kernels"] == 1, entry["output_code"]
        return
    # One loop per half, each reading its half of q directly: no select left.
    assert entry["kernels"] == 2, entry["output_code"]
    assert not selects(entry), entry["output_code"]


def test_rotary_over_a_symbolic_sequence_length_is_split_at_the_constant_head_dim(
    torch_rule,
):
    # The second length recompiles with the sequence length symbolic (automatic dynamic under
    # torch's rule: only the changed dim; the default whole-tensor rule makes q's head dim
    # symbolic too, as `dynamic=True` below); the head dim, and so the cat's cut, stays
    # constant: the symbolic kernels split too.
    torchferro.compiler.reset()
    f = torchferro.compile(rotary)
    # (The static first compile is above the size threshold; the symbolic one has no size.)
    for n in (9, 17, 33):
        q = torch.randn(2, 4, n, 32)
        cos, sin = torch.randn(n, 32), torch.randn(n, 32)
        assert_bit_equal(f(q, cos, sin), rotary(q, cos, sin))
    entries = torchferro.compiler.cache_entries(rotary)
    assert len(entries) == 2
    assert [e["kernels"] for e in entries] == [2, 2], [
        e["output_code"] for e in entries
    ]
    assert not selects(entries[1]), entries[1]["output_code"]


def test_rotary_with_every_dim_symbolic_keeps_one_loop_and_matches_eager():
    # dynamic=True makes the head dim symbolic too: the cut is no constant, the select stays.
    torchferro.compiler.reset()
    f = torchferro.compile(rotary, dynamic=True)
    for n in (5, 9):
        q = torch.randn(2, 4, n, 16)
        cos, sin = torch.randn(n, 16), torch.randn(n, 16)
        assert_bit_equal(f(q, cos, sin), rotary(q, cos, sin))
    [entry] = torchferro.compiler.cache_entries(rotary)
    assert entry["kernels"] == 1, entry["output_code"]
    assert selects(entry), entry["output_code"]


@pytest.mark.parametrize("dim", [0, 1])
def test_cat_consumed_by_a_reduction_keeps_one_kernel(dim):
    # Not stored: the sum reads the cat's select inline (no store to split).
    def f(x, y):
        return torch.cat([x, y], dim).sum(dim)

    x, y = torch.randn(3, 4), torch.randn(3, 4)
    want, got, entry = run(f, x, y)
    torch.testing.assert_close(got, want)
    assert entry["kernels"] == 1, entry["output_code"]
