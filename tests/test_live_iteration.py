"""Iteration that sees what the loop body does, as eager's does (found by the session 14
review): a list's iterator reads the list at its index on each pull, so a loop that appends to,
removes from or replaces items of the list it walks sees the change; a generator expression
stored or looped over runs one item per pull, so each item reads the closure variables and the
list as the consumer left them. Each program is compared with eager (values and the order of
its side effects) and its graph count with torch.compile's."""

from __future__ import annotations

import pytest
import torch
import torchferro
from conftest import CountingBackend

LOG: list = []


def _noted(tag, v):
    LOG.append(tag)
    return v


def loop_appends_to_its_list(x):
    xs = [x, x + 1]
    s = x
    for v in xs:
        s = s + v
        if len(xs) < 4:
            xs.append(v * 2)
    return s


def loop_removes_from_its_list(x):
    xs = [x, x + 1, x + 2, x + 3]
    s = x
    for v in xs:
        s = s + v
        xs.pop()
    return s, len(xs)


def loop_replaces_an_item_ahead(x):
    xs = [x, x + 1, x + 2]
    s = x
    i = 0
    for v in xs:
        s = s * 2 + v
        if i + 1 < len(xs):
            xs[i + 1] = xs[i + 1] * 10
        i += 1
    return s


def loop_with_a_break_appends_to_its_list(x):
    xs = [x, x + 1]
    s = x
    for v in xs:
        print(end="")
        s = s + v
        if len(xs) < 4:
            xs.append(v * 2)
    return s


def enumerate_over_a_list_replaced_ahead(x):
    xs = [x, x + 1, x + 2]
    s = x
    for i, v in enumerate(xs):
        s = s * 2 + v
        if i + 1 < len(xs):
            xs[i + 1] = xs[i + 1] * 10
    return s


def generator_of_a_list_sees_appends(x):
    xs = [x, x * 2]

    def walk():
        yield from xs

    g = walk()
    xs.append(x * 3)
    return sum(g)


def iterator_taken_then_list_grows(x):
    xs = [x]
    it = iter(xs)
    xs.append(x + 5)
    return sum(it)


def genexpr_reads_a_rebound_closure_variable(x):
    ys = [x, x * 2]
    g = (y + x for y in ys)
    x = x * 100
    return sum(g)


def genexpr_pulled_once_then_closure_rebound(x):
    ys = [x, x * 2]
    g = (y + x for y in ys)
    first = next(g)
    x = x * 100
    return first + next(g)


def genexpr_over_a_list_that_grows(x):
    ys = [x, x * 2]
    g = (y + 1 for y in ys)
    ys.append(x * 3)
    return sum(g)


def genexpr_in_a_for_loop_interleaves_effects(x):
    s = x
    for v in (_noted(("item", i), x * i) for i in range(3)):
        LOG.append("body")
        s = s + v
    return s


def genexpr_passed_to_a_call_still_runs_whole(x):
    parts = ",".join(str(i) for i in range(3))
    return x * len(parts), torch.stack(tuple(x * i for i in range(3)))


PROGRAMS = [
    loop_appends_to_its_list,
    loop_removes_from_its_list,
    loop_replaces_an_item_ahead,
    generator_of_a_list_sees_appends,
    iterator_taken_then_list_grows,
    genexpr_reads_a_rebound_closure_variable,
    genexpr_pulled_once_then_closure_rebound,
    genexpr_over_a_list_that_grows,
    genexpr_in_a_for_loop_interleaves_effects,
    genexpr_passed_to_a_call_still_runs_whole,
    # The break inside the loop gives the frame up, as torch.compile does (resume::in_loop), so
    # the loop runs natively over the list it grows. A frame that resumed inside the loop would
    # get a new iterator over the items left (resume.rs StackSlot::Iter).
    loop_with_a_break_appends_to_its_list,
    pytest.param(
        enumerate_over_a_list_replaced_ahead,
        marks=pytest.mark.xfail(
            strict=True,
            reason="enumerate/zip/map over a list take the list's items when made "
            "(calls/iterators.rs); eager's hold a list iterator that sees later changes",
        ),
    ),
]


@pytest.mark.parametrize(
    "fn", PROGRAMS, ids=lambda f: getattr(f, "__name__", None) or f.values[0].__name__
)
def test_matches_eager_and_torch_compiles_graph_count(fn):
    x = torch.randn(3)
    LOG.clear()
    want = fn(x)
    want_log = list(LOG)

    torch._dynamo.reset()
    oracle = CountingBackend()
    torch.compile(fn, backend=oracle)(x)
    torch._dynamo.reset()

    torchferro.compiler.reset()
    ours = CountingBackend()
    LOG.clear()
    got = torchferro.compile(fn, backend=ours)(x)
    assert LOG == want_log
    torch.testing.assert_close(got, want)
    assert ours.count == oracle.count, ours.graphs


def test_operator_iadd_on_an_input_list_is_replayed():
    """`operator.iadd(xs, ys)` grows the caller's list, as `xs += ys` does (the growth was
    lost: the list was not marked mutated)."""
    import operator

    def f(x, xs):
        operator.iadd(xs, [x + 1])
        return x * 2

    x = torch.ones(2)
    want, got = [], []
    f(x, want)
    torchferro.compile(f, backend="eager")(x, got)
    assert len(got) == len(want) == 1
    torch.testing.assert_close(got[0], want[0])


def _dict_grows_while_walked(x):
    d = {"a": x}
    for k in d:
        d["b"] = x + 1
    return x * len(d)


def _dict_growth_caught(x):
    d = {"a": x}
    try:
        for k in d:
            d[k + "!"] = x + 1
    except RuntimeError as e:
        return x * len(d) + len(str(e))
    return x


def test_a_dict_that_changes_size_while_walked_raises():
    """Eager's dict iterator raises `RuntimeError` on the pull after the dict changed size;
    the trace returned a value instead."""
    x = torch.ones(2)
    with pytest.raises(RuntimeError, match="dictionary changed size during iteration"):
        _dict_grows_while_walked(x)
    with pytest.raises(RuntimeError, match="dictionary changed size during iteration"):
        torchferro.compile(_dict_grows_while_walked, backend="eager")(x)
    torch.testing.assert_close(
        torchferro.compile(_dict_growth_caught, backend="eager")(x),
        _dict_growth_caught(x),
    )
