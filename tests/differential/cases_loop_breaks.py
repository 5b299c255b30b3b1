"""Issue 14, graph breaks inside loops: a print or graph break in a ``for``/``while`` body,
nested loops, a break inside ``try``/``with`` inside a loop, loops over generators, and the
neighbouring shapes that are not in a loop (a ``return`` before the loop's back edge, a break
after the loop). torch.compile gives up a frame whose break lies inside a loop and compiles only
the functions it calls, as frames of their own; torchferro does the same (``resume::in_loop``).
The tensor work sits in helpers the loops call, so that torch.compile makes graphs and its count
bounds ours."""

from __future__ import annotations

import contextlib

import torch

from .runner import case

# Issue 14: more graphs than torch.compile fails unless the case names the gap (breadth=).
STRICT_BREADTH = True


def x34(r):
    return (r.randn(3, 4),)


def _step(x):
    return (x * 2).sin() + 1


def _loud_step(x):
    x = x.cos() * 2
    print("step")
    return x + 1


def _broken_step(x):
    y = x.tanh()
    torch._dynamo.graph_break()
    return y * 3


@case(x34)
def print_in_for_loop(x):
    for i in range(3):
        x = _step(x)
        print("trip", i)
    return x


@case(x34)
def graph_break_in_for_loop(x):
    x = _step(x)
    for _ in range(3):
        x = _step(x)
        torch._dynamo.graph_break()
        x = x - 1
    return _step(x)


@case(x34)
def helper_that_breaks_called_in_loop(x):
    for _ in range(4):
        x = _loud_step(x)
    return x


@case(x34)
def helper_that_breaks_called_in_loop_twice(x):
    for _ in range(2):
        x = _broken_step(x)
        x = _broken_step(x + 1)
    return x


@case(x34)
def nested_loops_break_in_inner(x):
    for i in range(2):
        for j in range(2):
            x = _step(x) + i * j
            print(i, j)
    return x


@case(x34)
def nested_loops_break_in_outer(x):
    for i in range(3):
        for j in range(2):
            x = _step(x) + j
        print("row", i)
    return x


@case(x34)
def while_loop_break(x):
    i = 0
    while i < 3:
        x = _step(x)
        print(i)
        i += 1
    return x


def _halve(x):
    # Contracting, so rounding differences between compilers shrink from trip to trip.
    return x.tanh() * 0.5


@case(x34)
def data_dependent_while_loop(x):
    n = 0
    while x.abs().sum() > 1 and n < 20:
        x = _halve(x)
        n += 1
    return x, n


@case(x34)
def break_inside_try_inside_loop(x):
    for i in range(3):
        try:
            x = _step(x)
            print("try", i)
        finally:
            x = x * 0.5
    return x


@case(x34)
def break_inside_try_except_inside_loop(x):
    for i in range(3):
        try:
            x = _step(x)
            if i == 1:
                raise ValueError(i)
            print("ok", i)
        except ValueError:
            x = x + 10
    return x


@case(x34)
def break_inside_with_inside_loop(x):
    for i in range(3):
        with torch.no_grad():
            x = _step(x)
            print("no_grad", i)
    return x


@case(x34)
def break_inside_suppress_inside_loop(x):
    for i in range(3):
        with contextlib.suppress(KeyError):
            x = _step(x)
            print("suppress", i)
    return x


def _gen(n):
    for i in range(n):
        yield i


@case(x34)
def break_in_loop_over_generator(x):
    for i in _gen(3):
        x = _step(x) + i
        print("gen", i)
    return x


def _loud_gen(x, n):
    for i in range(n):
        print("yield", i)
        yield x * i


@case(x34)
def loop_over_generator_that_prints(x):
    total = torch.zeros_like(x)
    for t in _loud_gen(x, 3):
        total = total + _step(t)
    return total


@case(x34)
def break_in_loop_over_list_of_tensors(x):
    out = []
    for t in x.unbind(0):
        out.append(_step(t))
        print("row")
    return torch.stack(out)


@case(x34)
def break_in_loop_over_zip(x):
    for a, b in zip(range(3), "abc"):
        x = _step(x) + a
        print(b)
    return x


@case(x34)
def return_before_back_edge_resumes(x):
    # A `return` comes before the loop's back edge in code order: both compilers resume after
    # the break (no give-up).
    for i in range(3):
        x = x + 1
        if i == 1:
            print("found")
            return x * 2
    return x


@case(x34)
def break_after_loop_resumes(x):
    for i in range(3):
        x = x * 2 + i
    print("done")
    return x.sin()


@case(x34)
def break_before_loop_resumes(x):
    x = x.cos()
    print("start")
    for i in range(3):
        x = x * 2 + i
    return x


@case(x34)
def two_breaks_after_loops(x):
    for i in range(2):
        x = x + i
    print("one")
    for i in range(2):
        x = x * 2
    print("two")
    return x - 1


@case(x34)
def break_in_comprehension_in_loop(x):
    for _ in range(2):
        x = sum([_loud_step(x) for _ in range(2)])
    return x


class _Counter:
    def __init__(self):
        self.calls = 0

    def bump(self, x):
        self.calls += 1
        print("bump", self.calls)
        return x + self.calls


@case(x34)
def side_effects_in_loop_with_break(x):
    c = _Counter()
    for _ in range(3):
        x = _step(c.bump(x))
    return x, c.calls


@case(x34)
def while_loop_resuming_on_every_trip(x):
    # The `return` ahead of the back edge keeps the frame (both compilers resume inside the
    # loop). Every trip breaks at the same place and resumes in the same resume function (built
    # from the original code, so one code object): the counter turns symbolic at its second
    # value and the later trips reuse that graph. 4 graphs as torch.compile; 9 when each resume
    # function was built from the previous one's code.
    i = 2
    while i < 10:
        x = x * 2
        print("trip", i)
        if i > 100:
            return x
        i += 1
    return x + 1


# The counter starts at 0: the resume function compiles for 0, then at 1 the counter turns
# symbolic (automatic dynamic does not specialize an int at 0 or 1, as torch's unspecialized
# ints): 4 graphs, as torch.compile.
@case(x34)
def while_loop_resuming_on_every_trip_from_zero(x):
    i = 0
    while i < 8:
        x = x * 2
        print("trip", i)
        if i > 100:
            return x
        i += 1
    return x + 1
