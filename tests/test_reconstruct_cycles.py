"""Values rebuilt after a graph break that refer back to themselves: a recursive local function
(its cell holds the function, whose closure holds the cell) live at the break is made again as
one cycle, on each backend (it raised "a shared value was rebuilt out of order")."""

import pytest
import torch
import torchferro


def _rec_at_break(x):
    def rec(n):
        return 0 if n == 0 else 1 + rec(n - 1)

    y = x + 1
    print("break")
    return y + rec(3), rec(2)


def _maxdepth():
    def rec(n):
        return 0 if n == 0 else 1 + rec(n - 1)

    lo, hi = 0, 5000
    while lo < hi:
        mid = (lo + hi + 1) // 2
        try:
            rec(mid)
            lo = mid
        except RecursionError:
            hi = mid - 1
    return lo


def _closure_cycle_in_helper(x):
    def helper():
        def rec(n):
            return 0 if n == 0 else 1 + rec(n - 1)

        print("break")
        return rec(3)

    return x + helper()


@pytest.mark.parametrize("backend", ["eager", "inductor"])
@pytest.mark.parametrize("fn", [_rec_at_break, _closure_cycle_in_helper])
def test_recursive_local_function_live_at_break(fn, backend, capsys):
    torchferro.compiler.reset()
    x = torch.randn(3)
    expected = fn(x)
    actual = torchferro.compile(fn, backend=backend)(x)
    torch.testing.assert_close(actual, expected, rtol=0, atol=0)


def test_recursion_depth_search_beside_a_tensor():
    """The session-8 repro: a binary search for the recursion limit in a nested recursive
    function, called from a compiled lambda."""
    torchferro.compiler.reset()
    x = torch.randn(3)

    def f(t):
        return t, _maxdepth()

    expected = f(x)
    actual = torchferro.compile(f, backend="eager")(x)
    assert actual[0] is x
    assert actual[1] == expected[1]
