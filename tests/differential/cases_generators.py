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


# itertools and filter over a lazy generator pull it one item at a time, as in eager: the
# generator's body runs interleaved with its consumer (``seen`` shows how far it ran).
def _logged(xs, seen):
    for t in xs:
        seen.append(len(seen))
        yield t


def xs3_seen(r):
    return ([r.randn(4), r.randn(4), r.randn(4)], [])


@case(xs3_seen)
def generator_chained(xs, seen):
    out = []
    for t in itertools.chain(_logged(xs, seen), [xs[0]]):
        out.append(t * len(seen))
    return out


@case(xs3_seen)
def generator_chained_from_iterable(xs, seen):
    out = []
    for t in itertools.chain.from_iterable(_logged(p, seen) for p in (xs[:2], xs[2:])):
        out.append(t * len(seen))
    return out


@case(xs3_seen)
def generator_filtered(xs, seen):
    out = []
    for t in filter(lambda t: t.shape[0] == 4, _logged(xs, seen)):
        out.append(t + len(seen))
    return out


@case(xs3_seen)
def generator_filtered_with_none(xs, seen):
    out = []
    for i in filter(None, _logged([0, 1, 2], seen)):
        out.append(xs[i] * len(seen))
    return out


@case(xs3_seen)
def generator_filterfalse(xs, seen):
    out = []
    for i in itertools.filterfalse(lambda i: i % 2, _logged(range(4), seen)):
        out.append(xs[0] * i + len(seen))
    return out


@case(xs3_seen)
def generator_takewhile_of_endless(xs, seen):
    out = []
    for i in itertools.takewhile(lambda i: i < 3, _count_up(0)):
        seen.append(i)
        out.append(xs[i] * len(seen))
    return out


@case(xs3_seen)
def generator_dropwhile(xs, seen):
    out = []
    for i in itertools.dropwhile(lambda i: i < 1, _logged(range(3), seen)):
        out.append(xs[i] * len(seen))
    return out


@case(xs3_seen)
def generator_accumulated(xs, seen):
    out = []
    for acc in itertools.accumulate(_logged(xs, seen)):
        out.append(acc * len(seen))
    return out


@case(xs3_seen)
def generator_pairwise(xs, seen):
    out = []
    for a, b in itertools.pairwise(_logged(xs, seen)):
        out.append((a - b) * len(seen))
    return out


@case(xs3_seen)
def generator_starmapped(xs, seen):
    out = []
    for y in itertools.starmap(torch.add, _logged(zip(xs, xs[1:]), seen)):
        out.append(y * len(seen))
    return out


@case(xs3_seen)
def generator_compressed(xs, seen):
    out = []
    for t in itertools.compress(_logged(xs, seen), [1, 0, 1]):
        out.append(t * len(seen))
    return out


@case(xs3_seen)
def generator_zip_longest(xs, seen):
    out = []
    for a, b in itertools.zip_longest(_logged(xs, seen), xs[:1], fillvalue=1.0):
        out.append(a * b + len(seen))
    return out


@case(xs3_seen)
def generator_cycled_bounded(xs, seen):
    out = []
    for i, t in zip(range(5), itertools.cycle(_logged(xs, seen))):
        out.append(t * i + len(seen))
    return out


@case(xs3_seen)
def generator_islice_interleaves(xs, seen):
    out = []
    for t in itertools.islice(_logged(xs, seen), 1, None):
        out.append(t * len(seen))
    return out


@case(xs3_seen)
def generator_chain_stops_early(xs, seen):
    for t in itertools.chain(_logged(xs, seen), _logged(xs, seen)):
        if len(seen) == 2:
            return t * 2, list(seen)
    return None


def _delegating(xs, seen):
    yield from _logged(xs, seen)


# Left suspended inside a `yield from`: closing it passes the close on to the inner generator
# and runs nothing (on 3.12 the delegation's `CLEANUP_THROW` handler broke the frame).
@case(xs3_seen)
def generator_delegating_left_suspended(xs, seen):
    for t in _delegating(xs, seen):
        if len(seen) == 2:
            return t * 2, list(seen)
    return None


@case(xs3_seen)
def generator_grouped(xs, seen):
    out = []
    for k, g in itertools.groupby(_logged([0, 0, 1], seen)):
        out.append(xs[k] * len(list(g)) + len(seen))
    return out


@case(xs3_seen)
def generator_groups_left_unread(xs, seen):
    # Moving on without reading a group pulls past the rest of it: `len(seen)` is 1, then 3.
    out = []
    for k, g in itertools.groupby(_logged([0, 0, 1, 1], seen)):
        out.append(xs[k] * len(seen))
    return out, list(seen)


@case(xs3_seen)
def generator_group_read_after_moving_on(xs, seen):
    # A group read after the outer iterator moved past it is empty, as in CPython; one read in
    # part leaves the rest for the outer iterator to skip.
    groups = itertools.groupby(_logged([0, 0, 1, 2, 2], seen), key=lambda v: v % 2)
    k0, g0 = next(groups)
    first = next(g0)
    k1, g1 = next(groups)
    late = list(g0)
    return xs[k0] * first + len(seen), xs[k1] * len(list(g1)), late, len(seen)


@case(xs3_seen)
def generator_teed(xs, seen):
    a, b = itertools.tee(_logged(xs, seen))
    first = next(a) * len(seen)
    return first, [t * len(seen) for t in b], [t + 1 for t in a]


@case(xs3_seen)
def generator_in_a_list_across_a_break(xs, seen):
    gens = [_logged(xs[:2], seen), _logged(xs[2:], seen)]
    out = [next(gens[0])]
    torch._dynamo.graph_break()
    for g in gens:
        for t in g:
            out.append(t * len(seen))
    return out


@case(xs3_seen)
def generator_mapped_with_side_effects(xs, seen):
    out = []
    for y in map(lambda t: seen.append(1) or t * 2, xs):
        out.append(y + len(seen))
    return out


@case(xs3_seen)
def filter_with_side_effects(xs, seen):
    out = []
    for t in filter(lambda t: seen.append(1) or True, xs):
        out.append(t + len(seen))
    return out
