"""Issue 18, session 34 (dyn34): Python's rounding of floats of sizes stays symbolic.

Session 33 made floats of sizes `FloatExpr`s (`n / 2`, `n ** 0.5`), but `round(n / 2)`, a float
floor division or modulo (`n / 2 // 1`, `n / 2 % 1`), `max`/`min`/`abs` of such a float,
`math.floor` of a float that is not a quotient of ints, and `int(a / b)` of a quotient that may
be negative specialized the size: a graph per size (7 over 8 sizes) where torch.compile keeps
one (`RoundToInt`, `FloorToInt`, `TruncToInt`, `sym_max`, `Abs`, `Mod` in its SymFloats).

Now the float operations are `FloatExpr` nodes (`FloatOp::FloorDiv`/`Mod`/`Max`/`Min`,
`FloatExpr::Abs`) and a float made an int is an int atom (`fx::sym::Atom::FloatToInt`),
evaluated per call in the guards, computed in kernels in double precision (`lower::symnum`),
written to precompiled artifacts as Python text. Each program runs eagerly, under
torch.compile and under torchferro (counting backends), values checked at every call, graph
counts asserted exactly; then on the inductor (entries).
"""

from __future__ import annotations

import math

import pytest
import torch
import torchferro
import torchferro.compiler
from programs.compare import (
    assert_inductor_entries,
    graph_counts_over_sizes,
    same,
)

SIZES = [4, 7, 1, 9, 4, 3, 2, 6]


def _rows(b, gen):
    return [torch.randn(b, 5, generator=gen)]


def round_of_a_half(x):
    return x * round(x.size(0) / 2)


def round_half_to_even(x):
    # n / 2 + 0.5 is a tie for every even n: 2.5 rounds to 2, 3.5 to 4.
    return x * round(x.size(0) / 2 + 0.5)


def float_floor_division(x):
    return x * (x.size(0) / 2 // 1)


def float_modulo(x):
    return x * (x.size(0) / 2 % 1) + x.size(0) / 3 % 1.5


def float_max(x):
    return x * max(x.size(0) / 2, 3)


def float_min(x):
    return x * min(x.size(0) / 2, 3.0, x.size(0) ** 0.5)


def float_abs(x):
    return x * abs(x.size(0) / 2 - 3)


def floor_of_a_root(x):
    # `math.trunc(n)` of an int is the int.
    return (
        x * math.floor(x.size(0) ** 0.5)
        + math.ceil(x.size(0) / 2 - 0.25)
        + math.trunc(x.size(0))
    )


def truncation_of_a_negative_quotient(x):
    return x * int((3 - x.size(0)) / 2)


def slice_by_a_rounding(x):
    return x[: round(x.size(0) / 2) + 1] * 2


def full_of_a_max(x):
    return torch.full((x.size(0),), max(x.size(0) / 2, 1.5)) + x[:, 0]


def abs_of_an_int(x):
    return x * abs(x.size(0) - 5)


def divmod_of_sizes(x):
    q, r = divmod(x.size(0) / 2, 1)
    return x * q + r + divmod(x.size(0), 3)[1]


def rounding_returned(x):
    return x + 1, round(x.size(0) / 3), x.size(0) / 4 // 1, abs(1 - x.size(0) / 2)


# name: (program, {dynamic: (torch.compile's graphs, ours)}) over SIZES.
# Ours are fewer under automatic dynamic where torch.compile traces the size-1 call again
# (0/1 specialization) and our size-oblivious symbols serve it.
PROGRAMS = {
    "round_of_a_half": (round_of_a_half, {None: (3, 2), True: (2, 2)}),
    "round_half_to_even": (round_half_to_even, {None: (3, 2), True: (2, 2)}),
    "float_floor_division": (float_floor_division, {None: (3, 2), True: (2, 2)}),
    "float_modulo": (float_modulo, {None: (3, 2), True: (2, 2)}),
    "float_max": (float_max, {None: (3, 2), True: (2, 2)}),
    "float_min": (float_min, {None: (3, 2), True: (2, 2)}),
    "float_abs": (float_abs, {None: (3, 2), True: (2, 2)}),
    "floor_of_a_root": (floor_of_a_root, {None: (3, 2), True: (2, 2)}),
    "truncation_of_a_negative_quotient": (
        truncation_of_a_negative_quotient,
        {None: (3, 2), True: (2, 2)},
    ),
    "slice_by_a_rounding": (slice_by_a_rounding, {None: (3, 3), True: (2, 2)}),
    "full_of_a_max": (full_of_a_max, {None: (3, 2), True: (2, 2)}),
    "rounding_returned": (rounding_returned, {None: (3, 2), True: (2, 2)}),
    "abs_of_an_int": (abs_of_an_int, {None: (3, 2), True: (2, 2)}),
    "divmod_of_sizes": (divmod_of_sizes, {None: (8, 2), True: (4, 2)}),
}


@pytest.mark.parametrize("dynamic", [None, True])
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_graph_counts_against_torch_compile(name, dynamic):
    program, counts = PROGRAMS[name]
    tc, fc = graph_counts_over_sizes(program, _rows, SIZES, dynamic)
    assert (tc, fc) == counts[dynamic], f"torch.compile {tc}, torchferro {fc}"
    assert fc <= tc


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_values_and_entries_on_the_inductor(name):
    """The default backend under `dynamic=True`: values eager's, as many cache entries as
    graphs above, each on the inductor."""
    program, counts = PROGRAMS[name]
    assert_inductor_entries(program, _rows, SIZES, True, counts[True][1])


def _entries_after(g, f, sizes):
    """Calls ``g`` on ``(n, 2)`` inputs of ``sizes`` against ``f``; ``g``'s cache entries."""
    for n in sizes:
        x = torch.randn(n, 2)
        same(g(x), f(x))
    return torchferro.compiler.cache_entries(g)


def test_a_rounding_is_guarded_as_python_rounds():
    """A branch on `round(n / 2)` guards the rounded int (`round(float(n) / 2.0) == 2`): sizes
    3, 4 and 5 all round to 2 (3 / 2 = 1.5 rounds up to the even 2, 5 / 2 = 2.5 down to it)
    and share the graph; 6 rounds to 3 and misses."""

    def f(x):
        if round(x.size(0) / 2) == 2:
            return x + 1
        return x - 1

    torchferro.compiler.reset()
    g = torchferro.compile(f, backend="eager", dynamic=True)
    try:
        entries = _entries_after(g, f, [4, 3, 5])
        text = "\n".join(entries[0]["guards"])
        assert len(entries) == 1 and "round((float(L['x'].size(0)) / 2.0))" in text, (
            text
        )
        assert len(_entries_after(g, f, [6])) == 2
    finally:
        torchferro.compiler.reset()


def test_a_float_floor_division_by_a_size_reaching_zero_raises_as_eager():
    """`2.5 // (n - 3)` is guarded `n - 3 != 0` where it holds: at n == 3 a new trace lets
    Python raise eager's `ZeroDivisionError`."""

    def f(x):
        return x * (2.5 // (x.size(0) - 3))

    torchferro.compiler.reset()
    g = torchferro.compile(f, backend="eager", dynamic=True)
    try:
        for n in [5, 7, 2]:
            x = torch.randn(n)
            same(g(x), f(x))
        with pytest.raises(ZeroDivisionError):
            g(torch.randn(3))
    finally:
        torchferro.compiler.reset()
