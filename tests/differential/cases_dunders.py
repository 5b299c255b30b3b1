"""Issue 14, the User classes bullet: dunder methods of user classes traced where Python calls
them implicitly (``__hash__`` for dict keys and sets, ``__eq__`` for membership and ``==``,
``__bool__`` and ``__len__`` for truth, ``__contains__`` for ``in``, ``__iter__``/``__next__``
for loops and unpacking, ``__getitem__`` for the old iteration protocol and slicing,
``__call__``, ``__enter__``/``__exit__``, rich comparisons for ``sorted``/``min``/``max``),
written as model and data code uses them."""

from __future__ import annotations

import functools
import itertools

from .runner import case

# Issue 14: more graphs than torch.compile fails unless the case names the gap (breadth=).
STRICT_BREADTH = True


def x4(r):
    return (r.randn(4),)


class _Key:
    def __init__(self, name, idx):
        self.name = name
        self.idx = idx

    def __hash__(self):
        return hash((self.name, self.idx))

    def __eq__(self, other):
        return isinstance(other, _Key) and (self.name, self.idx) == (
            other.name,
            other.idx,
        )


@case(x4)
def user_hash_and_eq_as_dict_keys(x):
    table = {_Key("w", 0): x, _Key("w", 1): x * 2}
    return table[_Key("w", 1)] + 1, _Key("w", 0) in table


@case(x4)
def user_eq_in_list_membership(x):
    keys = [_Key("a", 0), _Key("b", 1)]
    return (
        x * (_Key("b", 1) in keys),
        keys.index(_Key("b", 1)),
        keys.count(_Key("c", 2)),
    )


class _Mask:
    def __init__(self, active):
        self.active = active

    def __bool__(self):
        return bool(self.active)


class _Bag:
    def __init__(self, items):
        self.items = list(items)

    def __len__(self):
        return len(self.items)

    def __contains__(self, item):
        return any(i == item for i in self.items)


@case(x4)
def user_bool_and_len_as_truth(x):
    out = x
    if _Mask(1):
        out = out + 1
    if not _Mask(0):
        out = out * 2
    if _Bag([]):
        out = out - 100
    if _Bag([1]):
        out = out + len(_Bag([1, 2, 3]))
    return out


@case(x4)
def user_contains(x):
    bag = _Bag(["relu", "gelu"])
    return x.relu() if "relu" in bag else x, "tanh" not in bag


class _Countdown:
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        return self

    def __next__(self):
        if self.n <= 0:
            raise StopIteration
        self.n -= 1
        return self.n


@case(x4)
def user_iterator_protocol(x):
    out = x
    for i in _Countdown(3):
        out = out + i
    a, b = _Countdown(2)
    return out, a, b


class _Seq:
    """The old sequence protocol: iteration calls __getitem__ until IndexError."""

    def __init__(self, *items):
        self.items = items

    def __getitem__(self, i):
        return self.items[i]

    def __len__(self):
        return len(self.items)


@case(x4)
def user_getitem_sequence(x):
    s = _Seq(x, x * 2, x * 3)
    total = 0
    for t in s:
        total = total + t
    return total, s[-1], len(s)


@functools.total_ordering
class _Version:
    def __init__(self, major, minor):
        self.major = major
        self.minor = minor

    def __eq__(self, other):
        return (self.major, self.minor) == (other.major, other.minor)

    def __lt__(self, other):
        return (self.major, self.minor) < (other.major, other.minor)


@case(x4)
def user_ordering_in_sorted_min_max(x):
    vs = [_Version(2, 1), _Version(1, 9), _Version(2, 0)]
    lo, hi = min(vs), max(vs)
    order = [(v.major, v.minor) for v in sorted(vs)]
    return x * lo.major + hi.minor, order, _Version(1, 0) <= _Version(1, 0)


class _Scale:
    def __init__(self, s):
        self.s = s

    def __call__(self, t):
        return t * self.s

    def __repr__(self):
        return f"_Scale({self.s})"


@case(x4)
def user_call_and_repr(x):
    f = _Scale(3)
    return f(x), repr(f), str(f)


class _Track:
    def __init__(self, log):
        self.log = log

    def __enter__(self):
        self.log.append("enter")
        return self

    def __exit__(self, *exc):
        self.log.append("exit")
        return False


@case(lambda r: (r.randn(4), []))
def user_context_manager_with_log(x, log):
    with _Track(log) as t:
        y = x.sin()
        t.log.append("body")
    return y, len(log)


class _Vec:
    def __init__(self, t):
        self.t = t

    def __add__(self, other):
        return _Vec(self.t + (other.t if isinstance(other, _Vec) else other))

    def __radd__(self, other):
        return self + other

    def __neg__(self):
        return _Vec(-self.t)

    def __matmul__(self, other):
        return self.t @ other.t


@case(x4)
def user_arithmetic_dunders(x):
    a, b = _Vec(x), _Vec(x.cos())
    c = sum([a, b], 0)
    return (-c).t, a @ b, (1 + a).t


# Iteration runs `__next__` once per pull, interleaved with the loop body, as CPython does:
# effects of `__next__` that the body reads, and bodies that stop early, see eager's order.
class _Reader:
    """A data-loader-like iterator: each `__next__` records how many batches it gave."""

    def __init__(self, batches, log):
        self.batches = batches
        self.log = log
        self.i = 0

    def __iter__(self):
        return self

    def __next__(self):
        if self.i >= len(self.batches):
            raise StopIteration
        self.i += 1
        self.log.append(self.i)
        return self.batches[self.i - 1]


@case(lambda r: (r.randn(4), []))
def user_iterator_effects_interleave_with_the_body(x, log):
    out = x
    for b in _Reader([x, x * 2, x * 3], log):
        out = out + b * len(log)
    return out, list(log)


@case(lambda r: (r.randn(4), []))
def user_iterator_left_early_pulls_no_further(x, log):
    reader = _Reader([x, x + 1, x + 2, x + 3], log)
    out = x
    for b in reader:
        out = out * b
        if len(log) == 2:
            break
    return out, reader.i, list(log)


class _Batches:
    """`__iter__` returns a fresh iterator object (the container/iterator split)."""

    def __init__(self, batches, log):
        self.batches = batches
        self.log = log

    def __iter__(self):
        self.log.append("iter")
        return _Reader(self.batches, self.log)


@case(lambda r: (r.randn(4), []))
def user_iterable_returning_an_iterator_object(x, log):
    out = x
    for b in _Batches([x, x.cos()], log):
        out = out + b * len(log)
    it = iter(_Batches([x.sin()], log))
    first = next(it)
    return out, first, list(log)


@case(lambda r: (r.randn(4), []))
def user_iterator_zipped_with_a_list(x, log):
    out = []
    for w, b in zip([1.0, 2.0, 3.0], _Reader([x, x * 2], log)):
        out.append(b * w * len(log))
    return out, list(log)


class _LoggedSeq:
    """The old sequence protocol with an effect in `__getitem__`."""

    def __init__(self, items, log):
        self.items = items
        self.log = log

    def __getitem__(self, i):
        self.log.append(i)
        return self.items[i]


@case(lambda r: (r.randn(4), []))
def user_getitem_protocol_effects_interleave(x, log):
    out = x
    for t in _LoggedSeq([x, x * 2], log):
        out = out + t * len(log)
    return out, list(log)


@case(lambda r: (r.randn(4), []))
def user_iterator_enumerated_and_mapped(x, log):
    out = x
    for i, b in enumerate(_Reader([x, x * 2], log)):
        out = out + b * (i + len(log))
    scaled = [b * len(log) for b in map(lambda t: t + 1, _Reader([x, x.cos()], log))]
    return out, scaled, list(log)


# Through itertools: a user iterator object or old-protocol sequence as an iterable argument is
# pulled one `__next__` (or `__getitem__`) per item, as CPython's chain/islice/groupby pull it
# (the hypothesis generator's find, session 15: `chain` took its items whole when made).
@case(lambda r: (r.randn(4), []))
def user_iterator_through_itertools_interleaves(x, log):
    out = x
    for b in itertools.chain(_Reader([x, x * 2], log), [x]):
        out = out + b * len(log)
    for t in itertools.islice(_LoggedSeq([x, x + 1, x + 2], log), 1, None):
        out = out + t * len(log)
    for k, g in itertools.groupby(_Reader([x, x, x * 3], log), key=len):
        out = out + sum(g) * len(log)
    return out, list(log)
