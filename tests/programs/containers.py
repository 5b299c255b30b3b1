"""Python containers: tuple, list, dict, set inputs (guarded) and outputs, building and mutating
local containers, comprehensions, unpacking, and nested structures."""

from __future__ import annotations

import collections

import torch

from .harness import Call, program


def x34(r):
    return (r.randn(3, 4),)


def tensors(n, *shape):
    return lambda r: ([r.randn(*shape) for _ in range(n)],)


@program(tensors(3, 3, 4), 1, fullgraph=True)
def list_input_iteration(xs):
    out = xs[0]
    for t in xs[1:]:
        out = out * t
    return out, len(xs)


@program(lambda r: ((r.randn(3), r.randn(3), 2.0),), 1, fullgraph=True)
def tuple_input_indexing(t):
    a, b, k = t
    return a * k + b - t[-2]


@program(lambda r: ({"a": r.randn(3), "b": r.randn(3), "k": 3},), 1, fullgraph=True)
def dict_input_keys_values_items(d):
    out = d["a"] * d["k"]
    for k, v in d.items():
        if k != "k":
            out = out + v
    return out, list(d.keys()), len(d.values())


@program(
    lambda r: (
        {
            "enc": [r.randn(2, 3), r.randn(2, 3)],
            "dec": {"w": r.randn(3), "b": (r.randn(3),)},
        },
    ),
    1,
    fullgraph=True,
)
def nested_container_input(batch):
    h = batch["enc"][0] + batch["enc"][1]
    return h * batch["dec"]["w"] + batch["dec"]["b"][0]


@program(
    lambda r: (r.pick([r.randn(3), r.randn(3)], [r.randn(3), r.randn(3), r.randn(3)]),),
    2,
    fullgraph=True,
)
def list_input_length_guarded(xs):
    # A longer list on the second input set recompiles.
    return torch.stack(xs).sum(0)


@program(x34, 1, fullgraph=True)
def local_list_append_extend_pop_insert(x):
    xs = [x]
    xs.append(x + 1)
    xs.extend([x * 2, x * 3])
    last = xs.pop()
    xs.insert(0, last)
    xs.reverse()
    return torch.stack(xs), xs.index(last) if False else len(xs)


# torch.compile: 1 graphs
@program(x34, 1, fullgraph=True)
def local_list_slicing_and_del(x):
    xs = [x * i for i in range(6)]
    del xs[0]
    ys = xs[::2] + xs[-1:]
    xs[1:3] = [x.neg()]
    return ys, xs


@program(x34, 1, fullgraph=True)
def local_dict_build_update_get_pop(x):
    d = {"a": x}
    d["b"] = x + 1
    d.update({"c": x * 2}, e=x.sum())
    gone = d.pop("a")
    d.setdefault("f", gone)
    d.setdefault("b", gone * 100)
    return d, d.get("zz", 3), d.get("b"), "c" in d


# torch.compile: 1 graphs
@program(x34, 1, fullgraph=True)
def dict_comprehension_and_merge(x):
    a = {f"k{i}": x * i for i in range(3)}
    b = {"k1": x.neg(), "z": x}
    return {**a, **b}, dict(zip(["p", "q"], [x, x + 1]))


@program(x34, 1, fullgraph=True)
def list_comprehension_with_condition(x):
    return [x * i for i in range(6) if i % 2 == 0], [
        [x + i for i in range(2)] for _ in range(2)
    ]


@program(x34, 1, fullgraph=True)
def star_unpacking_in_displays(x):
    a = [x, x + 1]
    b = (x * 2,)
    return [*a, *b], (*b, *a), len([*range(3), *"ab"])


@program(x34, 0, fullgraph=True)
def tuple_concat_repeat_count(x):
    t = (1, 2) + (2,) * 2
    u = (x,) + t
    return u, t.count(2), len(t * 2), t.index(2)


@program(x34, 1, fullgraph=True)
def zip_star_transpose(x):
    pairs = [(x, x + 1), (x * 2, x * 3)]
    firsts, seconds = zip(*pairs)
    return torch.cat(firsts), torch.cat(seconds), type(firsts).__name__


@program(x34, 1, fullgraph=True)
def return_list_of_dicts(x):
    return [{"v": x * i, "i": i} for i in range(2)]


@program(x34, 1, fullgraph=True)
def ordered_dict(x):
    d = collections.OrderedDict()
    d["z"] = x
    d["a"] = x + 1
    d.move_to_end("z")
    return d, list(d)


# torch.compile: 1 graphs
@program(x34, 1, fullgraph=True)
def defaultdict_of_lists(x):
    d = collections.defaultdict(list)
    for i in range(3):
        d[i % 2].append(x * i)
    return {k: torch.stack(v) for k, v in d.items()}


# torch.compile: 1 graphs
@program(x34, 1, fullgraph=True)
def deque_rotate(x):
    q = collections.deque([x, x + 1, x + 2], maxlen=3)
    q.append(x * 10)
    q.rotate(1)
    return list(q)


# torch.compile: 1 graphs
@program(x34, 1, fullgraph=True)
def set_of_python_values(x):
    seen = set()
    out = x
    for k in [1, 2, 1, 3, 2]:
        if k not in seen:
            seen.add(k)
            out = out + k
    return out, len(seen)


@program(x34, 1, fullgraph=True)
def list_of_tensors_stack_cat(x):
    rows = [x[i] * i for i in range(x.shape[0])]
    return torch.stack(rows), torch.cat(rows), torch.cat(list(reversed(rows)))


@program(x34, 1, fullgraph=True)
def min_max_len_over_python_lists(x):
    sizes = [len("ab"), 5, 3]
    return x[: min(sizes)], x[:, : max(sizes[1:]) - 2], sorted(sizes), sizes.index(5)


@program(tensors(3, 2, 2), 1, fullgraph=True)
def list_input_enumerate_zip(xs):
    ws = [1.0, 2.0, 3.0]
    return [t * w + i for i, (t, w) in enumerate(zip(xs, ws))]


# torch.compile: 1 graphs
@program(lambda r: ({"x": r.randn(3), "y": r.randn(3)},), 1, fullgraph=True)
def returns_input_dict_rebuilt(d):
    return {k: v * 2 for k, v in d.items()}, dict(d), list(d.items())[0][0]  # noqa: RUF015


@program(lambda r: Call(r.randn(3), extra=[1, 2, 3]), 1, fullgraph=True)
def list_of_ints_argument(x, extra):
    return x * sum(extra) + extra[-1], extra[:2]


@program(x34, 1, fullgraph=True)
def nested_tuple_unpacking_in_loop(x):
    pairs = [((x, 1), "a"), ((x * 2, 2), "b")]
    out = []
    for (t, k), name in pairs:
        out.append(t * k if name == "a" else t - k)
    return tuple(out)


@program(x34, 1, 1)
def list_multiplication_and_membership(x):
    xs = [0] * 3
    xs[1] = 5
    return x * xs[1] + (5 in xs) + (7 not in xs), xs


@program(x34, 1, fullgraph=True)
def dict_iteration_order_and_sorted_keys(x):
    d = {"b": 2, "a": 1, "c": 3}
    out = x
    for k in sorted(d):
        out = out * d[k] + 1
    return out, list(d), list(d.values())


# torch.compile: 1 graphs
@program(x34, 1, fullgraph=True)
def list_sort_in_place(x):
    xs = [3, 1, 2]
    xs.sort()
    ys = [(2, "b"), (1, "a")]
    ys.sort(key=lambda p: p[0])
    return x * xs[0], xs, ys


# torch.compile: 1 graphs
@program(x34, 1)
def dict_with_tuple_keys(x):
    d = {(0, "a"): x, (1, "b"): x + 1}
    return d[(1, "b")] - d[0, "a"], list(d)


# torch.compile: 1 graphs
@program(x34, 2, 1)
def list_copy_is_independent(x):
    a = [x, x + 1]
    b = a.copy()
    b.append(x * 5)
    c = list(a)
    c[0] = x.neg()
    return a, b, c


@program(x34, 1, 1)
def tensor_iteration_rows(x):
    return [row.sum() for row in x], sum(x)


# ---------------------------------------------------------------------------------------------
# Sets, comprehensions and generator expressions, builtins consuming them.


@program(x34, 1, fullgraph=True)
def set_literal_add_contains_iterate(x):
    s = {1, 2, 3}
    s.add(4)
    s.discard(1)
    t = set()
    t.add(2)
    out = x
    for k in sorted(s):
        out = out * k
    u = s | t
    return out + len(s) + (2 in s) + (9 in s), len(u), sorted(s & {2, 3, 8})


@program(x34, 1, fullgraph=True)
def set_comprehension_of_names(x):
    words = ["alpha", "beta", "avocado"]
    firsts = {w[0] for w in words}
    return x * len(firsts), "a" in firsts, sorted(firsts)


@program(tensors(3, 2, 2), 1, fullgraph=True)
def generator_expressions_consumed_by_builtins(ts):
    doubled = tuple(t * 2 for t in ts)
    listed = list(t + 1 for t in ts)
    total = sum(t.sum(0) for t in ts)
    ok = any(t.shape[0] == 2 for t in ts) and all(t.dim() == 2 for t in ts)
    biggest = max(t.numel() for t in ts)
    smallest = (
        min((t.shape[1] for t in ts), default=0)
        if False
        else min(t.shape[1] for t in ts)
    )
    return doubled, listed, total * ok, biggest + smallest


@program(tensors(3, 4), 1, fullgraph=True)
def dict_comprehension_over_tensors(ts):
    d = {k: t * i for i, (k, t) in enumerate(zip("abc", ts))}
    inv = {v: k for k, v in {"x": 1, "y": 2}.items()}
    return d, inv, {k: v for k, v in d.items() if k != "b"}


@program(tensors(3, 4), 1, fullgraph=True)
def sum_of_a_list_of_tensors(ts):
    return sum(ts), sum(ts, ts[0]), sum([t.mean() for t in ts]) / len(ts)


@program(lambda r: ([r.randn(4), r.randn(2), r.randn(3)],), 1, fullgraph=True)
def sorted_and_max_with_a_key_over_tensors(ts):
    by_len = sorted(ts, key=lambda t: t.shape[0])
    longest = max(ts, key=lambda t: t.numel())
    rev = sorted(ts, key=lambda t: t.shape[0], reverse=True)
    return by_len, longest * 2, rev[0]


@program(tensors(2, 3), 1, fullgraph=True)
def zip_strict_with_equal_lengths(ts):
    return [t * w for t, w in zip(ts, [2.0, 3.0], strict=True)]


# torch.compile: 1 graphs (the frame here runs eagerly: the break at zip() has the
# comprehension's function object on the stack, which a resume function cannot take yet; on
# 3.11 the comprehension's own frame, holding only a zip iterator, is torch-free and runs
# natively without a record, as torch.compile skips it; on 3.12 it is inlined)
@program(tensors(2, 3), 1, 1, raises=True, eager=1)
def zip_strict_with_different_lengths_raises(ts):
    y = ts[0] * 2
    return [t * w for t, w in zip([y, *ts], [2.0, 3.0], strict=True)]


# The `**kwargs` dict is new on every call: popping and assigning in it is local to the frame.
@program(
    lambda r: Call(r.randn(3), scale=r.pick(2.0, 2.0), talk=False), 1, fullgraph=True
)
def kwargs_dict_mutated_in_the_frame(x, **kwargs):
    s = kwargs.pop("scale", 1.0)
    kwargs["shift"] = kwargs.get("shift", 0.0) + 1
    return x * s + kwargs["shift"], kwargs


CAPABILITIES = {"hidden": "h", "attn": "a"}


class Capabilities(dict):
    def get(self, key):
        return super().get(key) or {}


CAPS = Capabilities({"m": CAPABILITIES})


@program(x34, 1, fullgraph=True)
def iterating_a_dict_known_at_trace_time(x):
    flags = CAPS.get("m")
    keys = {f"out_{k}": len(v) for k, v in flags.items()}
    for k in flags:
        x = x + len(k)
    return x, keys, sorted(flags.values())
