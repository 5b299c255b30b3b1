"""Issue 14, user generator functions consumed lazily: by a ``for`` loop, ``zip``,
``enumerate``, ``map``, a generator expression, ``next``, ``itertools``; generators of other
generators, generator methods of modules, and the body of a generator interleaving its prints
and state changes with its consumer's, as in eager."""

from __future__ import annotations

import itertools

import torch
from torch import nn

from .runner import TC_DIFFERS, case, register

# Issue 14: more graphs than torch.compile fails unless the case names the gap (breadth=).
STRICT_BREADTH = True


def xs3(r):
    return ([r.randn(4), r.randn(4), r.randn(4)],)


def x4(r):
    return (r.randn(4, 4),)


def _doubled(xs):
    for t in xs:
        yield t * 2


def _chunks(x, n):
    for i in range(0, x.shape[0], n):
        yield x[i : i + n]


def _count_up(start):
    i = start
    while True:
        yield i
        i += 1


def _noisy(xs):
    for i, t in enumerate(xs):
        print("yield", i)
        yield t.sin()
    print("done")


def _window(xs):
    it = iter(xs)
    prev = next(it)
    for t in it:
        yield prev, t
        prev = t


def _nested(xs):
    for t in _doubled(xs):
        yield t + 1


def _with_return(xs):
    for t in xs:
        if t.shape[0] > 10:
            return
        yield t


@case(xs3)
def generator_for_loop(xs):
    out = torch.zeros(4)
    for t in _doubled(xs):
        out = out + t
    return out


@case(x4)
def generator_of_chunks(x):
    return [c.sum() for c in _chunks(x, 2)]


@case(xs3)
def generator_interleaves_prints(xs):
    out = []
    for t in _noisy(xs):
        print("got")
        out.append(t + 1)
    return out


@case(xs3)
def generator_loop_breaks_early(xs):
    for t in _noisy(xs):
        if t.shape[0] == 4:
            break
    return t


@case(xs3)
def generator_endless_zipped(xs):
    return [t * i for i, t in zip(_count_up(1), xs)]


@case(xs3)
def generator_enumerate_start(xs):
    return [t * i for i, t in enumerate(_doubled(xs), start=2)]


@case(xs3)
def generator_mapped(xs):
    return list(map(torch.relu, _doubled(xs)))


@case(xs3)
def generator_pairs_window(xs):
    return [a - b for a, b in _window(xs)]


@case(xs3)
def generator_of_a_generator(xs):
    acc = 0
    for t in _nested(xs):
        acc = acc + t
    return acc


@case(xs3)
def generator_next_then_loop(xs):
    g = _doubled(xs)
    first = next(g)
    rest = [t - first for t in g]
    return first, rest, next(g, None)


@case(xs3)
def generator_returns_early(xs):
    return [t + 1 for t in _with_return(xs)]


@case(xs3)
def generator_islice_of_endless(xs):
    return [xs[0] * i for i in itertools.islice(_count_up(3), 2)]


@case(xs3)
def generator_zip_two_generators(xs):
    return [a * b for a, b in zip(_doubled(xs), _nested(xs))]


@case(xs3)
def generator_unpacked(xs):
    a, b, c = _doubled(xs)
    return a + b + c


@case(xs3)
def generator_state_written_between_items(xs):
    seen = []

    def gen():
        for t in xs:
            seen.append(len(seen))
            yield t

    out = []
    for t in gen():
        out.append(t * len(seen))
    return out, seen


class _Blocks(nn.Module):
    """A model that walks its blocks through a generator method, as some model code does."""

    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList(nn.Linear(4, 4) for _ in range(3))

    def stages(self):
        for i, b in enumerate(self.blocks):
            yield i, b

    def forward(self, x):
        for i, b in self.stages():
            x = torch.relu(b(x)) + i
        return x


register("generator_method_of_a_module", _Blocks, x4, module=True)


def _guarded(xs):
    try:
        for t in xs:
            yield t
    finally:
        print("closed")


@case(xs3)
def generator_with_finally_drained(xs):
    return [t * 2 for t in _guarded(xs)]


# torch.compile (2.11) never closes the generator: its `finally` does not print.
@case(xs3, xfail_tc=TC_DIFFERS)
def generator_with_finally_left_suspended(xs):
    for t in _guarded(xs):
        break
    return t + 1


@case(xs3)
def generator_with_a_graph_break_inside(xs):
    def gen():
        for t in xs:
            torch._dynamo.graph_break()
            yield t + 1

    return [t * 2 for t in gen()]
