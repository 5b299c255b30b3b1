"""Value semantics the inductor must share with eager bit for bit (session 26, hunt26a): each
test holds programs that gave another value, or a value where eager raises, on the build
before its fix. Results are compared exactly (``torch.equal``, NaN positions and the sign of
zero included), against eager and, where it documents a choice, against torch.compile.
"""

from __future__ import annotations

import pytest
import torch
import torchferro
from hypothesis import given
from hypothesis import strategies as st

from inductor_checks import SETTINGS, seeds, _kernel_cache  # noqa: F401 - the module's kernel cache
from test_inductor_differential import EXACT, clone_like, differs

INTS = [torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64]
FLOATS = [torch.float32, torch.float64, torch.float16, torch.bfloat16]


def _values(dtype, n=64, seed=0):
    g = torch.Generator().manual_seed(seed)
    if dtype == torch.bool:
        return torch.rand(n, generator=g) > 0.5
    if dtype.is_floating_point:
        v = torch.randn(n, generator=g, dtype=torch.float64) * 10
        v[:4] = torch.tensor([-0.0, 0.0, float("inf"), float("nan")])
        return v.to(dtype)
    lo = max(torch.iinfo(dtype).min, -100)
    return torch.randint(lo, 100, (n,), generator=g).to(dtype)


def _exact(fn, *args):
    """Runs ``fn`` eagerly and compiled; both raise the same error type or give equal values
    (bitwise). Returns the compiled graph's cache entry, or ``None`` when eager raised."""
    torchferro.compiler.reset()
    try:
        expected = fn(*[clone_like(a) for a in args])
    except Exception as e:  # noqa: BLE001 - the compiled run must raise the same
        with pytest.raises(type(e)):
            torchferro.compile(fn)(*[clone_like(a) for a in args])
        return None
    actual = torchferro.compile(fn)(*[clone_like(a) for a in args])
    why = differs(expected, actual, EXACT)
    assert why is None, why
    entries = torchferro.compiler.cache_entries(fn)
    assert len(entries) == 1 and entries[0]["runner"] == "inductor", entries
    return entries[0]


# ---------------------------------------------------------------------------------------------
# `number / tensor` is `Tensor.__rtruediv__`: `tensor.reciprocal() * number`, two roundings.


# float16/bfloat16 are left to test_inductor's tolerances: eager's vectorized half reciprocal
# and its rounding of a first-operand number to half (`torch.div(0.1, half_x)`) are its own;
# torch.compile computes both as this inductor does.
@pytest.mark.parametrize("dtype", INTS + FLOATS[:2] + [torch.bool])
@pytest.mark.parametrize("number", [-3, 2.5, 1, 0.1, True])
def test_number_over_tensor_is_reciprocal_times_number(dtype, number):
    # Int32 -7 under -3 was 0.42857143 (one division) where eager gives 0.42857146.
    x = _values(dtype)
    entry = _exact(lambda x: number / x, x)
    assert entry["fallbacks"] == 0, entry["fallback_reasons"]
    # The reflected method is the same op; `torch.div` rounds once and stays a division.
    _exact(lambda x: x.__rtruediv__(number), x)
    _exact(lambda x: torch.div(number, x), x)


def test_rotary_inverse_frequencies_match_eager():
    """Llama's `1.0 / (base ** (arange(0, dim, 2) / dim))`, written as models write it."""

    def inv_freq(x):
        dim = x.shape[-1]
        return 1.0 / (
            10000.0 ** (torch.arange(0, dim, 2, dtype=torch.int64).float() / dim)
        )

    _exact(inv_freq, torch.randn(2, 64))


# ---------------------------------------------------------------------------------------------
# Python numbers that eager's checked conversion refuses raise, as in eager.

OUT_OF_RANGE = [
    (torch.int8, 300),
    (torch.uint8, -256),
    (torch.int16, 2**40),
    (torch.int32, 2**31),
    (torch.float16, 1e5),
    (torch.float32, 1e39),
]

CHECKED_OPS = {
    "where": lambda x, s: torch.where(x > 1, x, s),
    "where_left": lambda x, s: torch.where(x > 1, s, x),
    "clamp_min": lambda x, s: x.clamp(min=s),
    "clamp_max": lambda x, s: torch.clamp(x, max=s),
    "clamp_": lambda x, s: x.clamp_(max=s),
    "masked_fill": lambda x, s: x.masked_fill(x > 1, s),
    "full": lambda x, s: x + torch.full((x.shape[0],), s, dtype=x.dtype),
    "full_like": lambda x, s: torch.full_like(x, s),
    "new_full": lambda x, s: x.new_full((2,), s) * 1,
    "add_alpha": lambda x, s: torch.add(x, x, alpha=s),
}


@pytest.mark.parametrize("op", sorted(CHECKED_OPS))
@pytest.mark.parametrize("dtype,number", OUT_OF_RANGE, ids=lambda v: str(v))
def test_numbers_torch_does_not_convert_raise(op, dtype, number):
    # `torch.where(x > 1, int8_x, 300)` gave 44 where eager raises "value cannot be converted
    # to type int8_t without overflow"; `half_x.clamp(max=1e5)` gave a value likewise.
    _exact(CHECKED_OPS[op], _values(dtype), number)


@pytest.mark.parametrize("op", sorted(CHECKED_OPS))
@pytest.mark.parametrize(
    "dtype,number",
    [(torch.int8, -128), (torch.uint8, -255), (torch.float16, 65504.0), (torch.int64, 2**62)],
    ids=lambda v: str(v),
)  # fmt: skip
def test_numbers_at_the_edge_of_the_range_stay_lowered(op, dtype, number):
    entry = _exact(CHECKED_OPS[op], _values(dtype), number)
    if entry is not None and op != "add_alpha":
        assert entry["fallbacks"] == 0, entry["fallback_reasons"]


def test_pow_by_a_number_half_cannot_hold_raises():
    _exact(lambda x: x**1e5, _values(torch.float16))
    _exact(lambda x: x.abs() ** 3.5, _values(torch.float16))


# ---------------------------------------------------------------------------------------------
# A float16/bfloat16 tensor times (or divided by) a 0-dim tensor of another dtype.


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("sdtype", [torch.float32, torch.float64, torch.int64])
@pytest.mark.parametrize("value", [0.1, 1 / 3, 7.3, 2049])
def test_half_by_a_zero_dim_tensor_reads_its_value_in_float(dtype, sdtype, value):
    # `half_x * torch.tensor(0.1)` rounded 0.1 to half first: a third of the products were one
    # ulp off eager's (and torch.compile's).
    x = _values(dtype, 256)
    s = torch.tensor(value).to(sdtype)
    progs = [
        lambda x, s: x * s,
        lambda x, s: x / s,
        lambda x, s: x.mul(s),
        # Eager rounds a 0-dim first operand, and the other ops' 0-dim operands.
        lambda x, s: s * x,
        lambda x, s: x + s,
        lambda x, s: s / x,
        lambda x, s: torch.maximum(x, s),
    ]
    for p in progs:
        entry = _exact(p, x, s)
        assert entry["fallbacks"] == 0, entry["fallback_reasons"]


def test_half_scaled_by_a_float_reduction():
    """A float32 0-dim reduction scaling a half tensor (a loss scale, a norm)."""
    x = _values(torch.float16, 256).nan_to_num(0.0, 0.0, 0.0)
    _exact(lambda x: x * (1.0 / x.float().abs().sum()), x)
    _exact(lambda x: x / x.float().norm(), x)


# ---------------------------------------------------------------------------------------------
# Generators of both classes, compared exactly (test_inductor's generators compare within the
# dtype's tolerance, which a last-bit difference passes).

numbers = st.one_of(
    st.integers(-1000, 1000),
    st.floats(-1e4, 1e4, allow_nan=False, allow_infinity=False),
    st.booleans(),
)


@SETTINGS
@given(
    dtype=st.sampled_from(INTS + FLOATS[:2] + [torch.bool]), number=numbers, seed=seeds
)
def test_generated_number_over_tensor(dtype, number, seed):
    _exact(lambda x: number / x, _values(dtype, 32, seed))


@SETTINGS
@given(
    dtype=st.sampled_from([torch.float16, torch.bfloat16]),
    sdtype=st.sampled_from([torch.float32, torch.float64, torch.int32, torch.int64]),
    value=st.floats(-1e4, 1e4, allow_nan=False, allow_infinity=False),
    div=st.booleans(),
    seed=seeds,
)
def test_generated_half_by_zero_dim_tensor(dtype, sdtype, value, div, seed):
    s = torch.tensor(value, dtype=torch.float64).to(sdtype)
    x = _values(dtype, 64, seed)
    _exact((lambda x, s: x / s) if div else (lambda x, s: x * s), x, s)
