"""The shared half of the inductor tests (``test_inductor*.py``): hypothesis settings, dtype sets,
input makers over layouts (contiguous, transposed, sliced with a storage offset, broadcast with
stride 0), and ``check``, which runs a function eagerly and compiled and compares results, input
mutations, the runner and its fallback, kernel and extern counts.

Generated kernels are cached in a temporary directory per test module (``TORCHFERRO_CACHE_DIR``,
the ``_kernel_cache`` fixture each module imports), so a module starts cold and never touches the
user's cache.
"""

from __future__ import annotations

import os

import pytest
import torch
import torchferro
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st


EXAMPLES = int(os.environ.get("TORCHFERRO_TEST_EXAMPLES", "4"))
SETTINGS = settings(
    max_examples=EXAMPLES,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)

FLOATS = [torch.float32, torch.float64]
HALF = [torch.float16, torch.bfloat16]
INTS = [torch.int32, torch.int64]
ALL = FLOATS + INTS + [torch.bool] + HALF


@pytest.fixture(scope="module", autouse=True)
def _kernel_cache(tmp_path_factory):
    old = os.environ.get("TORCHFERRO_CACHE_DIR")
    os.environ["TORCHFERRO_CACHE_DIR"] = str(tmp_path_factory.mktemp("kernels"))
    yield
    if old is None:
        del os.environ["TORCHFERRO_CACHE_DIR"]
    else:
        os.environ["TORCHFERRO_CACHE_DIR"] = old


# ---------------------------------------------------------------------------------------------
# Inputs.

LAYOUTS = ["contiguous", "transposed", "sliced", "broadcast"]


def make(shape, dtype, layout="contiguous", seed=0, low=-4, high=5):
    """A tensor of ``shape`` and ``dtype`` laid out as ``layout``: ``transposed`` (the last two
    dims swapped in memory), ``sliced`` (every other element of a larger tensor, at a storage
    offset) or ``broadcast`` (size-1 dims expanded, stride 0)."""
    g = torch.Generator().manual_seed(seed)
    shape = tuple(shape)

    def values(s):
        if dtype == torch.bool:
            return torch.rand(s, generator=g) > 0.5
        if dtype.is_floating_point:
            return torch.randn(s, generator=g, dtype=torch.float64).to(dtype)
        return torch.randint(low, high, s, generator=g, dtype=dtype)

    if layout == "transposed" and len(shape) >= 2:
        return values(shape[:-2] + (shape[-1], shape[-2])).transpose(-1, -2)
    if layout == "sliced" and len(shape) >= 1:
        big = values(
            (shape[0] + 1,) + shape[1:-1] + (2 * shape[-1] + 1,)
            if len(shape) > 1
            else (2 * shape[0] + 3,)
        )
        return big[1:, ..., 1::2] if len(shape) > 1 else big[3::2]
    if layout == "broadcast" and len(shape) >= 1:
        small = tuple(1 if i % 2 == 0 else s for i, s in enumerate(shape))
        return values(small).expand(shape)
    return values(shape)


dims = st.sampled_from([0, 1, 1, 2, 3, 5, 8])
shapes = st.lists(dims, min_size=0, max_size=3).map(tuple)
nonempty_shapes = st.lists(
    st.sampled_from([1, 2, 3, 5, 8]), min_size=1, max_size=3
).map(tuple)
layouts = st.sampled_from(LAYOUTS)
seeds = st.integers(0, 2**16)


@st.composite
def broadcast_pair(draw):
    """Two shapes that broadcast together (each dim of one is the other's or 1, ranks differ)."""
    out = draw(st.lists(dims, min_size=0, max_size=3))
    a = [d if draw(st.booleans()) else 1 for d in out]
    b = [d if draw(st.booleans()) else 1 for d in out]
    b = b[draw(st.integers(0, len(b))) :]
    if draw(st.booleans()):
        a, b = b, a
    return tuple(a), tuple(b)


# ---------------------------------------------------------------------------------------------
# Running a function compiled and eagerly.


def _clone(x):
    if isinstance(x, torch.Tensor):
        # Keeps strides (and stride-0 broadcasts) so both runs see the same layout; a broadcast
        # gets a copy of its storage (each run writes its own, as `fill_` may).
        if x.numel() and any(s == 0 for s, n in zip(x.stride(), x.shape) if n > 1):
            out = torch.empty(0, dtype=x.dtype)
            return out.set_(
                x.untyped_storage().clone(), x.storage_offset(), x.shape, x.stride()
            )
        out = torch.empty_strided(x.shape, x.stride(), dtype=x.dtype)
        out.copy_(x)
        return out
    if isinstance(x, (list, tuple)):
        return type(x)(_clone(v) for v in x)
    return x


# Half-precision results are computed in float32 and rounded once, where eager rounds after every
# op (as torch.compile does too): fused chains differ from eager by an ulp or two, more than
# assert_close's defaults (about one ulp) allow.
HALF_TOL = {
    torch.float16: dict(rtol=4e-3, atol=1e-3),
    torch.bfloat16: dict(rtol=3e-2, atol=1e-2),
}


def assert_same(expected, actual, path="out"):
    assert type(actual) is type(expected), f"{path}: {type(actual)} != {type(expected)}"
    if isinstance(expected, torch.Tensor):
        assert actual.shape == expected.shape, (
            f"{path}: shape {actual.shape} != {expected.shape}"
        )
        assert actual.dtype == expected.dtype, (
            f"{path}: dtype {actual.dtype} != {expected.dtype}"
        )
        tol = HALF_TOL.get(expected.dtype, {})
        torch.testing.assert_close(
            actual, expected, equal_nan=True, msg=lambda m: f"{path}: {m}", **tol
        )
    elif isinstance(expected, (tuple, list)):
        assert len(actual) == len(expected), path
        for i, (e, a) in enumerate(zip(expected, actual)):
            assert_same(e, a, f"{path}[{i}]")
    else:
        assert actual == expected, f"{path}: {actual!r} != {expected!r}"


def check(fn, *args, lowered=True, kernels=None, externs=None):
    """Runs ``fn`` eagerly and compiled on copies of ``args``; compares results and mutated inputs;
    returns the compiled graph's cache entry. ``lowered``: no fallback op is expected."""
    torchferro.compiler.reset()
    eager_args, compiled_args = _clone(args), _clone(args)
    try:
        expected = fn(*eager_args)
    except Exception as e:  # noqa: BLE001 - the compiled run must raise the same
        with pytest.raises(type(e)):
            torchferro.compile(fn)(*compiled_args)
        return None
    actual = torchferro.compile(fn)(*compiled_args)
    assert_same(expected, actual)
    assert_same(list(eager_args), list(compiled_args), "input")
    entries = torchferro.compiler.cache_entries(fn)
    assert len(entries) == 1, [e.get("runner") for e in entries]
    entry = entries[0]
    assert entry["runner"] == "inductor", entry.get("fallback_reasons")
    if lowered:
        assert entry["fallbacks"] == 0, entry["fallback_reasons"]
    if kernels is not None:
        assert entry["kernels"] == kernels, entry["output_code"]
    if externs is not None:
        assert entry["extern_calls"] == externs, entry["graph"]
    return entry
