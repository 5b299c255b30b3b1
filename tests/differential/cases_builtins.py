"""Issue 14, bullets "builtins over iterators", "itertools" and "functools and operator": programs
written the way model code uses these idioms, with tensor work around them. Each must give eager's
values in no more graphs than torch.compile (``runner.STRICT_BREADTH_TOPICS``)."""

# The programs spell these idioms as users write them, on purpose:
# ruff: noqa: C400, C401, C408, C417, RUF007, RUF058, UP033

from __future__ import annotations

import abc
import collections
import collections.abc
import functools
import itertools
import numbers
import operator
from functools import partial

import torch
import torch.nn.functional as F
from torch import nn

from .runner import TC_DIFFERS, case

# Issue 14: more graphs than torch.compile fails unless the case names the gap (breadth=).
STRICT_BREADTH = True


def x34(r):
    return (r.randn(3, 4),)


def xs3(r):
    return ([r.randn(2, 3) for _ in range(3)],)


def xs_ws(r):
    return ([r.randn(4) for _ in range(3)], [0.5, -1.0, 2.0])


def pair(r):
    return (r.randn(3, 4), r.randn(3, 4))


def named(r):
    return ({"b": r.randn(3), "a": r.randn(3), "c": r.randn(3)},)


# ---------------------------------------------------------------------------------------------
# builtins over iterators


@case(xs3)
def map_relu_list(xs):
    return list(map(F.relu, xs))


@case(xs3)
def map_lambda_sum(xs):
    return sum(map(lambda t: t * 2, xs))


@case(pair)
def map_two_iterables(a, b):
    return list(map(torch.add, [a, b], [b, a]))


@case(xs3)
def map_unpack_for(xs):
    out = []
    for y in map(torch.tanh, xs):
        out.append(y + 1)
    return torch.stack(out)


@case(x34)
def filter_none(x):
    parts = [x, None, x * 2, None]
    dims = list(filter(None, [0, x.shape[0], 0, x.shape[1]]))
    return torch.cat(list(filter(lambda p: p is not None, parts))), dims


@case(x34)
def filter_lambda_ints(x):
    dims = list(filter(lambda d: d % 2 == 0, range(6)))
    return x * len(dims), dims


@case(xs3)
def filter_by_shape(xs):
    keep = list(filter(lambda t: t.shape[0] == 2, [*xs, xs[0].t()]))
    return torch.stack(keep).sum(0)


@case(xs3)
def iter_next_first(xs):
    it = iter(xs)
    first = next(it)
    rest = [t * 2 for t in it]
    return first, rest


@case(x34)
def next_default_empty(x):
    return next(iter([]), x) + 1


@case(named)
def next_iter_dict_values(d):
    return next(iter(d.values())) * 3, next(iter(d))


@case(xs3)
def next_with_default_after_end(xs):
    it = iter(xs[:1])
    a = next(it)
    b = next(it, None)
    return a if b is None else b


@case(xs3)
def next_generator_expr(xs):
    big = next((t for t in xs if t.shape[1] == 3), None)
    return big * 2


@case(xs3)
def iter_shared_by_two_loops(xs):
    it = iter(xs)
    acc = 0
    for t in it:
        acc = acc + t
        break
    for t in it:
        acc = acc * t
    return acc


@case(xs3)
def enumerate_zip_unpack(xs):
    ws = [0.1, 0.2, 0.3]
    out = 0
    for i, (t, w) in enumerate(zip(xs, ws)):
        out = out + t * w * i
    return out


@case(xs3)
def enumerate_start_kw(xs):
    return [t * i for i, t in enumerate(xs, start=1)]


@case(xs3)
def enumerate_over_generator(xs):
    return [t + i for i, t in enumerate(t * 2 for t in xs)]


@case(xs3)
def zip_over_map(xs):
    return [a - b for a, b in zip(map(torch.sin, xs), map(torch.cos, xs))]


@case(xs3)
def zip_three_unequal(xs):
    return [a + b + c for a, b, c in zip(xs, xs[1:], [1.0, 2.0, 3.0, 4.0])]


@case(xs3)
def zip_star_transpose(xs):
    pairs = [(t, t * 2) for t in xs]
    firsts, seconds = zip(*pairs)
    return torch.stack(firsts) - torch.stack(seconds)


@case(lambda r: ([r.randn(3) for _ in range(6)],))
def zip_same_iterator_pairs(xs):
    it = iter(xs)
    return [torch.dot(a, b) for a, b in zip(it, it)]


@case(xs3)
def zip_over_generators(xs):
    return [a * b for a, b in zip((t + 1 for t in xs), (t - 1 for t in xs))]


@case(named)
def min_dict_key_by_get(d):
    sizes = {k: v.shape[0] + ord(k) for k, v in d.items()}
    k = min(sizes, key=sizes.get)
    return d[k] * 2, k


@case(xs3)
def sorted_by_len_reverse(xs):
    groups = [[xs[0]], xs[:2], xs]
    return [len(g) for g in sorted(groups, key=len, reverse=True)], sum(
        torch.stack(g).sum() for g in groups
    )


@case(xs3)
def map_none_filter_chain(xs):
    masks = [None, xs[1] > 0, None]
    kept = [m for m in masks if m is not None]
    return [t * m for t, m in zip(xs, map(lambda m: m.float(), kept))]


@case(xs3)
def reversed_list(xs):
    return torch.cat([t for t in reversed(xs)])


@case(xs3)
def reversed_range_index(xs):
    acc = xs[0]
    for i in reversed(range(len(xs))):
        acc = acc * 0.5 + xs[i]
    return acc


@case(named)
def reversed_dict(d):
    return [d[k] for k in reversed(d)]


@case(xs_ws)
def sum_of_weighted_generator(xs, ws):
    return sum(t * w for t, w in zip(xs, ws))


@case(xs3)
def sum_with_start_tensor(xs):
    return sum(xs, torch.zeros(2, 3))


@case(xs3)
def sum_start_kw(xs):
    return sum((t.mean() for t in xs), start=torch.tensor(1.0))


@case(x34)
def sum_ints_mixed(x):
    n = sum([1, 2, 3.5], 0.5)
    return x * n


@case(xs3)
def max_by_key(xs):
    ys = [*xs, torch.zeros(5, 3)]
    return max(ys, key=lambda t: t.shape[0])


@case(xs3)
def min_of_two_ints_and_default(xs):
    n = min(len(xs), 2)
    m = max([], default=7)
    return xs[n - 1] * m


@case(x34)
def max_mixed_numbers(x):
    return x * max(1, 2.5, 2), min(3, x.shape[0], key=lambda v: -v)


@case(named)
def sorted_dict_items(d):
    return [k + str(v.shape[0]) for k, v in sorted(d.items())], [
        v for _, v in sorted(d.items())
    ]


@case(named)
def sorted_key_reverse(d):
    keys = sorted(d, key=lambda k: ord(k), reverse=True)
    return torch.stack([d[k] for k in keys])


@case(xs3)
def sorted_tensors_by_size(xs):
    ys = [xs[0], torch.ones(1, 3), xs[1].repeat(2, 1)]
    return [t.sum(0) for t in sorted(ys, key=lambda t: t.numel())]


@case(x34)
def dict_from_kwargs_and_pairs(x):
    a = dict(scale=2.0, shift=1.0)
    b = dict([("w", x), ("b", x.sum(0))], extra=3)
    c = dict(zip(["p", "q"], [x, x * 2]))
    return x * a["scale"] + a["shift"], b, c


@case(named)
def dict_from_mapping_with_kw(d):
    e = dict(d, z=torch.ones(3))
    return e


@case(xs3)
def list_tuple_from_generator(xs):
    a = list(t + 1 for t in xs)
    b = tuple(t - 1 for t in xs)
    return a, b


@case(x34)
def set_from_generator(x):
    dims = set(d for d in x.shape)
    return x * len(dims), sorted(dims), 3 in dims


@case(x34)
def frozenset_from_range(x):
    s = frozenset(range(3))
    return x + len(s), 2 in s


class Base(abc.ABC):
    @abc.abstractmethod
    def go(self, x): ...


class Impl(Base):
    def __init__(self, k):
        self.k = k

    def go(self, x):
        return x * self.k


@case(x34)
def isinstance_abcs(x):
    out = []
    for v in ([x], (x,), {"a": x}, 3, 2.5, "s", Impl(2)):
        out.append(
            (
                isinstance(v, collections.abc.Sequence),
                isinstance(v, collections.abc.Mapping),
                isinstance(v, numbers.Number),
                isinstance(v, (list, tuple)),
                isinstance(v, Base),
            )
        )
    return x, out


@case(x34)
def isinstance_tuple_dispatch(x):
    def scale(v):
        if isinstance(v, (int, float)):
            return x * v
        if isinstance(v, (list, tuple)):
            return sum(scale(e) for e in v)
        return v + x

    return scale([2, (3.0, x)])


@case(x34)
def issubclass_tuples(x):
    r = (
        issubclass(Impl, Base),
        issubclass(bool, (int, str)),
        issubclass(list, collections.abc.MutableSequence),
        issubclass(dict, collections.abc.Sequence),
        issubclass(nn.Linear, nn.Module),
    )
    return x * sum(r), r


@case(x34)
def isinstance_tensor_parameter(x):
    return (
        x * 2,
        isinstance(x, torch.Tensor),
        isinstance(x, nn.Parameter),
        isinstance(x, (int, torch.Tensor)),
    )


@case(x34)
def callable_values(x):
    f = lambda t: t + 1
    return x * 2, (
        callable(f),
        callable(torch.relu),
        callable(x),
        callable(3),
        callable(F.relu),
        callable(Impl),
        callable(Impl(1)),
        callable(_SCALE_MODULE),
    )


_SCALE_MODULE = nn.Linear(4, 4)


@case(x34)
def id_compare(x):
    a = [x]
    b = a
    return x + 1, id(a) == id(b), id(a) != id([x])


@case(x34)
def hash_constants(x):
    hs = (
        hash(3),
        hash("abc") == hash("ab" + "c"),
        hash((1, 2)) == hash((1, 2)),
        hash(2.0),
    )
    table = {hash(k): k for k in ("q", "k", "v")}
    return x + 1, hs, len(table)


@case(x34)
def round_divmod_abs(x):
    q, r = divmod(17, 5)
    fq, fr = divmod(7.5, 2)
    return (
        x * q + r,
        round(2.675, 2),
        round(3.5),
        round(-2.5),
        fq,
        fr,
        abs(-3),
        abs(-2.5),
        abs(x).sum(),
    )


@case(x34)
def round_of_shape_math(x):
    h = round(x.shape[0] * 1.5)
    return F.interpolate(x[None, None], size=(h, x.shape[1])), h


@case(xs3)
def all_any_generators(xs):
    ok = all(t.dim() == 2 for t in xs)
    some = any(t.shape[0] > 5 for t in xs)
    return (torch.stack(xs) if ok else xs[0]), some


@case(xs3)
def any_short_circuit(xs):
    seen = []

    def check(t):
        seen.append(t.shape[0])
        return t.shape[0] == 2

    return any(check(t) for t in xs), len(seen), xs[0] * 2


@case(xs3)
def all_next_short_circuit(xs):
    seen = []

    def big(t):
        seen.append(t.shape[1])
        return t.shape[1] > 2

    ok = all(big(t) for t in [xs[0][:, :2], *xs])
    first = next(t * 3 for t in xs if big(t))
    return ok, first, list(seen)


@case(xs3)
def any_of_tensor_truths(xs):
    if any(bool(t.sum() > 100) for t in xs):
        return xs[0]
    return xs[1] * 2


@case(xs3)
def builtins_divmod_layout(xs):
    n = len(xs)
    rows, cols = divmod(n * 2, 3)
    return torch.cat(xs).reshape(rows * 3 + cols, -1) if rows else xs[0]


@case(pair)
def map_with_partial_kw(a, b):
    soft = list(map(partial(F.softmax, dim=-1), [a, b]))
    return soft


# ---------------------------------------------------------------------------------------------
# itertools


@case(xs3)
def chain_lists(xs):
    return torch.stack(list(itertools.chain(xs, [xs[0] * 2], (xs[1],))))


@case(xs3)
def chain_from_iterable(xs):
    nested = [[t, t * 2] for t in xs]
    return torch.cat(list(itertools.chain.from_iterable(nested)))


@case(xs3)
def chain_in_for(xs):
    acc = 0
    for t in itertools.chain(xs, reversed(xs)):
        acc = acc + t
    return acc


@case(x34)
def product_of_ranges(x):
    out = []
    for i, j in itertools.product(range(2), range(3)):
        out.append(x[i, j])
    return torch.stack(out)


@case(x34)
def product_repeat(x):
    return [x * a + b for a, b in itertools.product([1, -1], repeat=2)]


@case(xs3)
def permutations_pairs(xs):
    return sum(a @ b.t() for a, b in itertools.permutations(xs, 2))


@case(xs3)
def combinations_pairs(xs):
    return [F.cosine_similarity(a, b) for a, b in itertools.combinations(xs, 2)]


@case(x34)
def combinations_with_replacement_idx(x):
    return torch.stack(
        [x[i] * x[j] for i, j in itertools.combinations_with_replacement(range(3), 2)]
    )


@case(xs3)
def pairwise_diffs(xs):
    return [b - a for a, b in itertools.pairwise(xs)]


@case(x34)
def pairwise_dims(x):
    dims = [4, 8, 8, 2]
    h = x
    for i, o in itertools.pairwise(dims):
        h = h @ torch.ones(i, o) / i
    return h


@case(x34)
def filterfalse_dims(x):
    odd = list(itertools.filterfalse(lambda d: d % 2 == 0, range(7)))
    return x * len(odd), odd


@case(xs3)
def accumulate_tensors(xs):
    return list(itertools.accumulate(xs))


@case(xs3)
def accumulate_func_initial(xs):
    return list(itertools.accumulate(xs, torch.maximum, initial=torch.zeros(2, 3)))


@case(x34)
def accumulate_ints_offsets(x):
    sizes = [1, 2, 1]
    offs = list(itertools.accumulate(sizes, initial=0))
    return [x[a:b] for a, b in zip(offs, offs[1:])], offs


@case(xs3)
def islice_first_two(xs):
    return torch.stack(list(itertools.islice(xs, 2)))


@case(x34)
def islice_start_stop_step(x):
    return [x[i] for i in itertools.islice(range(10), 0, 3, 2)]


@case(xs3)
def count_with_zip(xs):
    return [t * i for i, t in zip(itertools.count(1), xs)]


@case(xs3)
def count_step_float(xs):
    return [t + c for t, c in zip(xs, itertools.count(0.5, 0.25))]


@case(xs3)
def count_loop_break(xs):
    acc = xs[0]
    for i in itertools.count():
        if i >= 2:
            break
        acc = acc + xs[i + 1]
    return acc


@case(x34)
def repeat_times(x):
    return torch.cat(list(itertools.repeat(x, 3)))


@case(xs3)
def repeat_in_map(xs):
    return list(map(torch.mul, xs, itertools.repeat(2.0)))


@case(xs3)
def cycle_bounded_zip(xs):
    signs = itertools.cycle([1.0, -1.0])
    return [t * s for t, s in zip(xs, signs)]


@case(xs3)
def cycle_islice(xs):
    return list(itertools.islice(itertools.cycle(xs[:2]), 5))


@case(xs3)
def zip_longest_fill(xs):
    ys = xs[:2]
    return [a + (b if b is not None else 0) for a, b in itertools.zip_longest(xs, ys)]


@case(xs3)
def zip_longest_fillvalue(xs):
    return [
        a * b
        for a, b in itertools.zip_longest([1.0, 2.0, 3.0], xs[:1], fillvalue=xs[2])
    ]


@case(x34)
def groupby_sorted_keys(x):
    names = ["a.w", "a.b", "b.w", "c.w", "c.b"]
    out = {}
    for k, g in itertools.groupby(names, key=lambda n: n.split(".")[0]):
        out[k] = x * len(list(g))
    return out


@case(xs3)
def groupby_shapes(xs):
    ys = [xs[0], xs[1], xs[0].t(), xs[2]]
    return [
        torch.cat(list(g)).shape
        for _, g in itertools.groupby(ys, key=lambda t: t.shape)
    ]


@case(xs3)
def starmap_mul(xs):
    return list(itertools.starmap(torch.mul, zip(xs, [1.0, 2.0, 3.0])))


@case(xs3)
def starmap_lambda(xs):
    return sum(itertools.starmap(lambda a, b: a * b, itertools.combinations(xs, 2)))


@case(xs3)
def tee_two_passes(xs):
    a, b = itertools.tee(t * 2 for t in xs)
    return sum(a), [t - 1 for t in b]


@case(x34)
def takewhile_dims(x):
    sizes = [4, 3, 2, 5, 1]
    head = list(itertools.takewhile(lambda s: s > 2, sizes))
    return x[:, : head[-1]], head


@case(xs3)
def dropwhile_tensors(xs):
    rest = list(itertools.dropwhile(lambda t: t.shape[0] < 2, [xs[0][:1], *xs]))
    return torch.stack(rest)


@case(xs3)
def takewhile_data_dependent(xs):
    return list(itertools.takewhile(lambda t: bool(t.sum() > -100), xs))


# ---------------------------------------------------------------------------------------------
# functools and operator


@case(xs3)
def reduce_add(xs):
    return functools.reduce(torch.add, xs)


@case(xs3)
def reduce_with_initial(xs):
    return functools.reduce(lambda acc, t: acc * 0.5 + t, xs, torch.ones(2, 3))


@case(xs3)
def reduce_operator_mul(xs):
    return functools.reduce(operator.mul, xs), functools.reduce(
        operator.add, [1, 2, 3], 10
    )


@case(x34)
def reduce_shape_numel(x):
    return x.reshape(functools.reduce(operator.mul, x.shape, 1))


@case(pair)
def partial_softmax(a, b):
    sm = partial(F.softmax, dim=-1)
    return sm(a), sm(b)


@case(x34, xfail_tc=TC_DIFFERS)
def partial_nested(x):
    add = partial(torch.add, alpha=2)
    add_x = partial(add, x)
    return add_x(x * 3), add_x.args[0] is x, add_x.keywords


@case(x34)
def partial_override_kw(x):
    f = partial(torch.clamp, min=-0.5, max=0.5)
    return f(x), f(x, max=0.1)


class Scaler(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(4))

    def scaled(self, x, k=1.0):
        return x * self.w * k

    def forward(self, x):
        f = partial(self.scaled, k=2.0)
        g = partial(Scaler.scaled, self)
        return f(x) + g(x, 3.0)


@case(x34, module=True)
def partial_of_method():
    return Scaler()


def _act(x, kind):
    return F.gelu(x) if kind == "gelu" else F.relu(x)


_ACTS = {"gelu": partial(_act, kind="gelu"), "relu": partial(_act, kind="relu")}


@case(x34)
def partial_from_global_table(x):
    return _ACTS["gelu"](x) + _ACTS["relu"](x)


@functools.lru_cache(maxsize=None)
def _dims(n):
    return tuple(range(n))


@case(x34)
def lru_cache_helper(x):
    return x.sum(_dims(2)[1:]), _dims(2)


@functools.cache
def _scale_for(name):
    return {"a": 2.0, "b": 3.0}[name]


@case(x34)
def cache_helper(x):
    return x * _scale_for("a") + _scale_for("b")


@functools.lru_cache(maxsize=8)
def _rotary_freqs(dim, base=10000.0):
    return 1.0 / (base ** (torch.arange(0, dim, 2).float() / dim))


@case(x34)
def lru_cache_tensor_factory(x):
    f = _rotary_freqs(4)
    return x * f.repeat(2)


def _logged(fn):
    @functools.wraps(fn)
    def inner(*args, **kwargs):
        return fn(*args, **kwargs) * 2

    return inner


@_logged
def _double_relu(x):
    return F.relu(x)


@case(x34)
def wraps_decorator(x):
    return _double_relu(x), _double_relu.__name__, _double_relu.__wrapped__(x)


@case(x34, xfail_tc=TC_DIFFERS)
def wraps_inside_frame(x):
    def base(t):
        """doc"""
        return t + 1

    @functools.wraps(base)
    def wrapper(t):
        return base(t) * 3

    return wrapper(x), wrapper.__name__, wrapper.__doc__


class Cfg:
    def __init__(self, n):
        self.n = n

    @functools.cached_property
    def half(self):
        return self.n // 2


@case(x34)
def cached_property_in_frame(x):
    c = Cfg(4)
    return x[: c.half] * c.half


class _Norm:
    def __init__(self, x):
        self.x = x

    @functools.cached_property
    def scale(self):
        return self.x.norm()


@case(x34)
def cached_property_tensor_once(x):
    n = _Norm(x)
    return x / n.scale + n.scale, "scale" in vars(n)


@functools.singledispatch
def _to_tensor(v):
    raise TypeError(type(v).__name__)


@_to_tensor.register
def _(v: int):
    return torch.tensor(float(v))


@_to_tensor.register(list)
def _(v):
    return torch.tensor([float(e) for e in v])


@_to_tensor.register(torch.Tensor)
def _(v):
    return v


@case(x34)
def singledispatch_calls(x):
    return _to_tensor(x) + _to_tensor(3), _to_tensor([1, 2, 3, 4])


@case(named)
def itemgetter_multi(d):
    get = operator.itemgetter("a", "c")
    a, c = get(d)
    return a + c, operator.itemgetter(0)([d["b"]])


@case(xs3)
def itemgetter_sort_key(xs):
    pairs = [(2, xs[0]), (0, xs[1]), (1, xs[2])]
    return [t for _, t in sorted(pairs, key=operator.itemgetter(0))]


@case(xs3)
def itemgetter_0_2(xs):
    return operator.itemgetter(0, 2)(xs)


class _Holder:
    def __init__(self, t):
        self.inner = self
        self.t = t


@case(x34)
def attrgetter_dotted(x):
    h = _Holder(x)
    get = operator.attrgetter("t", "inner.t")
    a, b = get(h)
    return a + b, operator.attrgetter("shape")(x)


@case(x34)
def methodcaller_tensor(x):
    f = operator.methodcaller("sum", dim=0)
    g = operator.methodcaller("reshape", 4, 3)
    return f(x), g(x)


@case(pair)
def operator_arith(a, b):
    return (
        operator.add(a, b),
        operator.sub(a, b),
        operator.mul(a, b),
        operator.truediv(a, b.abs() + 1),
        operator.neg(a),
        operator.pos(a),
        operator.pow(a, 2),
        operator.matmul(a, b.t()),
        operator.abs(a),
        operator.mod(a, 0.7),
        operator.floordiv(a, 0.3),
    )


@case(lambda r: (r.randint(0, 8, 3, 4), r.randint(1, 8, 3, 4)))
def operator_bitwise(a, b):
    return (
        operator.and_(a, b),
        operator.or_(a, b),
        operator.xor(a, b),
        operator.invert(a),
        operator.lshift(a, 1),
        operator.rshift(a, 1),
    )


@case(pair)
def operator_compare(a, b):
    return (
        operator.lt(a, b),
        operator.le(a, b),
        operator.gt(a, b),
        operator.ge(a, b),
        operator.eq(a, b),
        operator.ne(a, b),
    )


@case(pair)
def operator_inplace(a, b):
    c = a.clone()
    c = operator.iadd(c, b)
    c = operator.imul(c, 2)
    c = operator.isub(c, a)
    c = operator.itruediv(c, 3)
    return c


@case(xs3)
def operator_containers(xs):
    lst = list(xs)
    operator.setitem(lst, 0, xs[2] * 2)
    operator.delitem(lst, 1)
    return (
        operator.getitem(lst, 0),
        operator.contains([1, 2], 2),
        operator.concat([1], [2]),
        operator.countOf([1, 2, 1], 1),
        operator.indexOf([3, 4], 4),
        operator.length_hint([1, 2, 3]),
        len(lst),
    )


@case(x34)
def operator_truth_identity(x):
    return x * 2, (
        operator.truth(0),
        operator.not_([]),
        operator.is_(None, None),
        operator.is_not(x, None),
        operator.index(3),
    )


@case(xs3)
def operator_add_reduce_lists(xs):
    return functools.reduce(operator.add, [[t] for t in xs]), functools.reduce(
        operator.concat, [(1,), (2,)]
    )


@case(lambda r: (Scaler(),))
def attrgetter_module_params(m):
    w = operator.attrgetter("w")(m)
    return w * 2, operator.methodcaller("scaled", w, k=0.5)(m)


@case(xs3)
def reduce_over_dict_values(xs):
    d = {f"l{i}": t for i, t in enumerate(xs)}
    return functools.reduce(lambda a, b: a @ b.t() @ b, d.values())


@case(xs3)
def operator_inplace_lists(xs):
    a = [xs[0]]
    a = operator.iadd(a, [xs[1]])
    b = operator.iconcat([xs[2]], a)
    return len(a), len(b), b[-1] * 2


_BINARY = (
    operator.add,
    operator.sub,
    operator.mul,
    operator.truediv,
    operator.floordiv,
    operator.mod,
    operator.pow,
    operator.maximum if hasattr(operator, "maximum") else operator.add,
    operator.lt,
    operator.le,
    operator.eq,
    operator.ne,
    operator.ge,
    operator.gt,
)


@case(pair)
def operator_table_loop(a, b):
    b = b.abs() + 0.5
    return [f(a, b) for f in _BINARY], [f.__name__ for f in _BINARY]


@case(lambda r: (r.randint(0, 8, 3, 4), r.randint(1, 3, 3, 4)))
def operator_inplace_bitwise(a, b):
    c = a.clone()
    c = operator.iand(c, 7)
    c = operator.ior(c, b)
    c = operator.ixor(c, 1)
    c = operator.ilshift(c, 1)
    c = operator.irshift(c, 1)
    c = operator.ifloordiv(c, b)
    c = operator.imod(c, 5)
    return c, operator.ipow(c, 2)


@case(pair)
def operator_matmul_inplace_neg(a, b):
    c = a @ b.t()
    c = operator.imatmul(c, torch.eye(3))
    return operator.neg(c), operator.inv(a > 0), operator.not_(c.dim() == 3)


@case(x34)
def operator_call_and_index(x):
    return (
        operator.call(torch.relu, x),
        operator.index(x.shape[0]),
        operator.length_hint(iter([1, 2]), 5),
    )


@case(pair)
def operator_dunder_names(a, b):
    return operator.__add__(a, b), operator.__mul__(a, 2)


@case(x34)
def operator_getitem_slices(x):
    return operator.getitem(x, (slice(None), slice(1, 3))), operator.getitem(
        x.shape, -1
    )


@case(xs3)
def iterator_live_across_break(xs):
    it = iter(xs)
    first = next(it)
    print("first", first.shape)
    return first + sum(it)


@case(xs3)
def zip_live_across_break(xs):
    pairs = zip(xs, [1.0, 2.0, 3.0])
    print("pairs")
    return [t * w for t, w in pairs]


@case(xs3)
def count_live_across_break(xs):
    c = itertools.count(1)
    next(c)
    print("count")
    return [t * next(c) for t in xs]


@case(x34)
def partial_live_across_break(x):
    f = partial(torch.add, x, alpha=2)
    print("partial")
    return f(x)


# An iterator taken whole by a statement or a call is consumed by it: what is left for the next
# reader is what eager leaves (the class of `a += it` keeping the iterator's items).


def _sum_all(*xs):
    return sum(xs)


@case(x34)
def iterator_consumed_by_star_list(x):
    it = iter([x, x + 1, x + 2])
    first = next(it)
    ys = [*it]
    return first, ys, list(it)


@case(x34)
def iterator_consumed_by_star_call(x):
    it = iter([x, x * 2, x * 3])
    next(it)
    return _sum_all(*it), list(it)


@case(x34)
def iterator_consumed_by_list_extend(x):
    it = iter([x, x + 1, x + 2])
    next(it)
    a = [x * 0]
    a.extend(it)
    return a, list(it)


@case(x34)
def iterator_consumed_by_set_display(x):
    it = iter([1, 2, 3, 2])
    next(it)
    s = {*it}
    return x * len(s), sorted(s), list(it)


@case(x34)
def iterator_consumed_by_slice_assignment(x):
    it = iter([x, x + 1, x + 2])
    next(it)
    a = [x, x, x]
    a[1:2] = it
    return a, list(it)
