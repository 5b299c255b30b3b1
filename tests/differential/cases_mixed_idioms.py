"""Issue 14, session 24 (breadth24): the bullets' idioms combined the way model code mixes them
(an itertools pipeline feeding a dict subclass, a match over a NamedTuple made in the frame, a
singledispatch over containers, a dunder-rich user class in a sorted/groupby pipeline), each
with tensor work around it. The single idioms have programs of their own in ``cases_builtins``,
``cases_containers``, ``cases_language`` and ``cases_dunders``; these check that they compose.
This file: builtins, itertools, collections, functools/operator and containers; user classes,
statements, the torch API and gradient hooks are in ``cases_mixed_classes``. Each must give
eager's values in no more graphs than torch.compile (``STRICT_BREADTH``)."""

# The programs spell these idioms as users write them, on purpose:
# ruff: noqa: C417, UP033

from __future__ import annotations

import collections
import collections.abc
import functools
import itertools
import math
import operator
import types
import typing

import torch
import torch.nn.functional as F

from .runner import TC_DIFFERS, case

# Issue 14: more graphs than torch.compile fails unless the case names the gap (breadth=).
STRICT_BREADTH = True


def x34(r):
    return (r.randn(3, 4),)


def xs4(r):
    return ([r.randn(3) for _ in range(4)],)


def pair(r):
    return (r.randn(3, 4), r.randn(3, 4))


# ---------------------------------------------------------------------------------------------
# builtins and itertools composed


@case(xs4)
def permutations_weighted_by_enumerate(xs):
    out = torch.zeros(3)
    for k, (a, b) in enumerate(itertools.permutations(xs[:3], 2)):
        out = out + (k + 1) * a * b
    return out


@case(xs4)
def combinations_with_replacement_gram(xs):
    return torch.stack(
        [a @ b for a, b in itertools.combinations_with_replacement(xs[:3], 2)]
    )


@case(xs4)
def product_of_enumerates_into_dict(xs):
    table = {
        (i, j): a - b
        for (i, a), (j, b) in itertools.product(enumerate(xs[:2]), enumerate(xs[2:]))
    }
    return table[(1, 0)], sorted(table), len(table)


@case(xs4)
def zip_longest_of_map_and_filter(xs):
    big = filter(lambda t: t.shape[0] == 3, xs)
    doubled = map(lambda t: t * 2, xs[:2])
    return [
        a if b is None else a + b
        for a, b in itertools.zip_longest(big, doubled, fillvalue=None)
    ]


@case(xs4)
def islice_of_cycle_with_step(xs):
    picked = list(itertools.islice(itertools.cycle(xs[:3]), 1, 8, 2))
    return torch.stack(picked).sum(0), len(picked)


@case(xs4)
def accumulate_max_then_pairwise(xs):
    sizes = [3, 1, 4, 1, 5]
    peaks = list(itertools.accumulate(sizes, max))
    steps = [b - a for a, b in itertools.pairwise(peaks)]
    return sum(x * s for x, s in zip(xs, steps)), peaks


@case(xs4)
def takewhile_dropwhile_split(xs):
    scales = [0.5, 1.0, 2.0, 0.25]
    head = list(itertools.takewhile(lambda s: s < 2.0, scales))
    tail = list(itertools.dropwhile(lambda s: s < 2.0, scales))
    return (
        sum(x * s for x, s in zip(xs, head)),
        sum(x * s for x, s in zip(reversed(xs), tail)),
    )


@case(xs4)
def tee_lookahead_pairs(xs):
    a, b = itertools.tee(iter(xs))
    next(b, None)
    return [p * q for p, q in zip(a, b)]


@case(xs4)
def groupby_over_named_shapes(xs):
    named = [("w", xs[0]), ("w", xs[1]), ("b", xs[2]), ("w", xs[3])]
    return {
        k: torch.stack([t for _, t in g]).sum(0)
        for k, g in itertools.groupby(named, key=operator.itemgetter(0))
    }


@case(xs4)
def starmap_over_zip_of_ranges(xs):
    return list(map(lambda i, t: t * i + i, itertools.count(2, 3), xs))


@case(x34)
def filterfalse_chain_from_iterable_dims(x):
    dims = list(itertools.chain.from_iterable([[0, 1], [1], [0]]))
    odd = list(itertools.filterfalse(lambda d: d == 0, dims))
    out = x
    for d in odd:
        out = out.cumsum(d)
    return out, dims


@case(x34)
def min_max_sorted_keyword_mix(x):
    dims = {"rows": x.shape[0], "cols": x.shape[1], "one": 1}
    small = min(dims, key=dims.get)
    big = max(dims.items(), key=lambda kv: (kv[1], kv[0]))
    order = sorted(dims, key=lambda k: -dims[k], reverse=False)
    return (
        x * dims[small] + big[1],
        order,
        max(2, 5, 3, key=lambda v: -v),
        min((), default=7),
    )


@case(x34)
def divmod_round_abs_from_shapes(x):
    q, r = divmod(x.numel(), 5)
    half = round(x.shape[1] / 3, 2)
    frac = round(-2.5), round(3.5), abs(-q), abs(-1.25)
    return x * half + q - r, frac


@case(xs4)
def any_all_over_nested_generators(xs):
    same = all(t.shape == xs[0].shape for t in xs)
    floats = any(t.dtype == torch.int64 for t in xs)
    nested = all(any(d == 3 for d in t.shape) for t in xs)
    return torch.stack(xs).sum(0) if same and nested else xs[0], floats


@case(x34)
def builtins_on_constants_hash_id_callable(x):
    key = ("attn", 2)
    same_hash = hash(key) == hash(("attn", 2))
    fns = [torch.relu, 3, None, lambda t: t]
    n_callable = sum(1 for f in fns if callable(f))
    obj = [1]
    alias = obj
    return x * n_callable if same_hash else x, id(alias) == id(obj), hash(7), hash(True)


@case(x34)
def dict_list_tuple_set_from_iterables(x):
    d = dict(zip("abc", range(3)), d=3)
    lst = list(d.values())
    tup = tuple(k for k in d if k != "b")
    st = set(map(lambda v: v % 2, lst))
    fs = frozenset(tup)
    return x * sum(lst) + len(st), tup, sorted(st), "a" in fs


# ---------------------------------------------------------------------------------------------
# collections composed


class Registry(dict):
    """A dict subclass that counts writes and keeps keys upper-case."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.writes = 0

    def __setitem__(self, key, value):
        self.writes += 1
        super().__setitem__(key.upper(), value)

    def __getitem__(self, key):
        return super().__getitem__(key.upper())


@case(xs4)
def dict_subclass_fed_by_itertools(xs):
    reg = Registry()
    for name, t in zip(itertools.cycle(["q", "k", "v"]), xs):
        reg[name] = t
    return reg["q"], reg["K"] + reg["v"], reg.writes, sorted(reg.keys())


class Stack(list):
    def push(self, t):
        self.append(t)
        return self

    def __getitem__(self, i):
        return super().__getitem__(-1 - i)


@case(xs4)
def list_subclass_reversed_index(xs):
    s = Stack()
    for t in xs:
        s.push(t * 2)
    return s[0], s[3], len(s), isinstance(s, list)


class Pt(typing.NamedTuple):
    x: torch.Tensor
    scale: float = 1.0

    def scaled(self):
        return self.x * self.scale


@case(x34)
def namedtuple_match_and_replace(x):
    p = Pt(x)
    q = p._replace(scale=3.0)
    match q:
        case Pt(x=t, scale=s) if s > 2:
            out = t * s
        case _:
            out = t
    return out, q.scaled(), q._asdict()["scale"], p == q, p[1]


@case(xs4)
def ordereddict_lru_window(xs):
    cache = collections.OrderedDict()
    for i, t in enumerate(xs):
        cache[i % 3] = t
        cache.move_to_end(i % 3)
        if len(cache) > 2:
            cache.popitem(last=False)
    first = next(iter(cache))
    return (
        list(cache.keys()),
        cache[first] + 1,
        cache == collections.OrderedDict(reversed(list(cache.items()))),
    )


# torch.compile (2.11) ignores maxlen in extendleft: its deque comes back with 4 items.
@case(xs4, xfail_tc=TC_DIFFERS)
def deque_bounded_rotating_buffer(xs):
    buf = collections.deque(maxlen=3)
    for t in xs:
        buf.appendleft(t)
    buf.rotate(1)
    buf.extendleft([xs[0] * 10])
    return list(buf), buf.maxlen, len(buf)


@case(xs4)
def counter_and_chainmap_config(xs):
    defaults = {"scale": 2.0, "bias": 0.0, "act": "relu"}
    override = {"bias": 1.0}
    cfg = collections.ChainMap(override, defaults)
    kinds = collections.Counter(t.dtype for t in xs)
    act = getattr(F, cfg["act"])
    return (
        act(xs[0] * cfg["scale"] + cfg["bias"]),
        kinds[torch.float32],
        len(cfg),
        dict(cfg),
    )


@case(xs4)
def defaultdict_of_counters(xs):
    stats = collections.defaultdict(collections.Counter)
    for i, t in enumerate(xs):
        stats["even" if i % 2 == 0 else "odd"][t.shape[0]] += 1
    return xs[0] * stats["even"][3], {k: dict(v) for k, v in stats.items()}


# ---------------------------------------------------------------------------------------------
# functools and operator composed


@functools.lru_cache(maxsize=None)
def _window(n):
    return tuple(math.cos(math.pi * i / n) for i in range(n))


@case(x34)
def lru_cache_feeding_partial(x):
    w = torch.tensor(_window(4))
    scale = functools.partial(torch.mul, other=w)
    return scale(x), _window(4)[1]


@functools.singledispatch
def _flatten(v):
    return [v]


@_flatten.register
def _flatten_list(v: list):
    return [y for item in v for y in _flatten(item)]


@_flatten.register
def _flatten_dict(v: dict):
    return [y for key in sorted(v) for y in _flatten(v[key])]


@case(xs4)
def singledispatch_recursive_flatten(xs):
    nested = {"b": [xs[0], [xs[1]]], "a": xs[2]}
    flat = _flatten(nested)
    return torch.stack(flat).sum(0), len(flat)


@case(xs4)
def reduce_of_partials_composed(xs):
    steps = [
        functools.partial(torch.add, other=1.0),
        torch.tanh,
        functools.partial(torch.mul, other=2.0),
    ]
    compose = functools.reduce(lambda f, g: lambda t: g(f(t)), steps)
    return [compose(t) for t in xs]


class _Cfg:
    def __init__(self):
        self.inner = types.SimpleNamespace(scale=1.5, names=("a", "b"))


@case(x34)
def operator_getters_and_methodcaller(x):
    cfg = _Cfg()
    scale = operator.attrgetter("inner.scale")(cfg)
    first, second = operator.itemgetter(0, -1)(cfg.inner.names)
    upper = operator.methodcaller("replace", "a", "A")(first)
    t = operator.methodcaller("sum", dim=1, keepdim=True)(x)
    return (
        operator.mul(t, scale),
        upper + second,
        operator.neg(operator.truediv(x, 2.0)),
    )


class _Stats:
    def __init__(self, x):
        self.x = x

    @functools.cached_property
    def moments(self):
        return self.x.mean(), self.x.std()


@case(x34)
def cached_property_read_twice(x):
    s = _Stats(x)
    m1 = s.moments
    m2 = s.moments
    return (x - m1[0]) / m2[1], m2[0] is m1[0], "moments" in vars(s)


# A tuple has identity in eager (`t is u` after `u = t`): the tracer's tuple value is one shared
# `Rc` under every name, slot and attribute, so `is` is decided in the graph (torch.compile's
# TupleVariable identity says True too). Same for a cached_property's tuple read twice.
@case(x34)
def tuple_identity_across_names(x):
    s = _Stats(x)
    t = (x, x + 1)
    u = t
    box = {"t": t}
    return t is u, box["t"] is t, s.moments is s.moments


# ---------------------------------------------------------------------------------------------
# containers


@case(xs4)
def list_methods_on_tensor_lists(xs):
    # list.index/remove/count compare by identity first: the element looked for is the first one
    # compared, so no tensor `==` is asked for its truth.
    ws = list(xs)
    last = ws.pop()
    ws.insert(1, last * 2)
    ws.remove(ws[0])
    idx = ws.index(ws[0])
    ws.sort(key=lambda t: 0)
    ws.reverse()
    ws *= 2
    del ws[1:3]
    ws[::2] = [t + 1 for t in ws[::2]]
    return ws, idx, len(ws)


@case(xs4)
def dict_method_tour(xs):
    d = dict.fromkeys(["a", "b"], 0)
    d.update([("c", xs[0])], d=xs[1])
    d.setdefault("e", xs[2])
    d |= {"a": xs[3]}
    e = d | {"z": 1}
    popped = d.pop("missing", None), d.pop("b")
    last = d.popitem()
    copy = d.copy()
    copy["a"] = None
    return d, e["z"], popped, last, d == copy, list(reversed(d))


@case(x34)
def set_frozenset_algebra_on_dims(x):
    seen = {0, 1}
    more = frozenset([1, 2])
    algebra = (
        sorted(seen ^ more),
        sorted(seen - more),
        sorted(seen | more),
        seen.isdisjoint({5}),
        more.issuperset({2}),
        sorted(seen.symmetric_difference(more)),
        seen <= {0, 1, 2},
    )
    return x.sum(dim=tuple(sorted(seen & {0, 1}))), algebra


@case(x34)
def str_formatting_drives_keys(x):
    parts = ["layer", "0", "weight"]
    key = "_".join(p if p.isdigit() else p.upper() for p in parts)
    label = f"{parts[0]}:{7:03d}|{math.pi:.2f}"
    table = {f"{p}_{i}": i for i, p in enumerate(parts)}
    return (
        x * table["weight_2"],
        key,
        label,
        key.startswith("LAYER"),
        label.rjust(20, "*"),
    )


@case(xs4)
def tuple_list_concat_repeat_assign(xs):
    t = (xs[0],) * 2 + tuple(xs[1:3])
    t += (xs[3],)
    lst = [xs[0]] * 2
    lst += xs[1:2]
    lst[1:1] = [xs[2], xs[3]]
    return sum(t), len(lst), lst[2] is xs[3]
