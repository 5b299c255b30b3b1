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
@program(x34, 2, 2)
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
@program(x34, 1, 2, eager=1)
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


@program(x34, 0, 1)
def tuple_concat_repeat_count(x):
    t = (1, 2) + (2,) * 2
    u = (x,) + t
    return u, t.count(2), len(t * 2), t.index(2)


@program(x34, 1, 1)
def zip_star_transpose(x):
    pairs = [(x, x + 1), (x * 2, x * 3)]
    firsts, seconds = zip(*pairs)
    return torch.cat(firsts), torch.cat(seconds), type(firsts).__name__


@program(x34, 1, fullgraph=True)
def return_list_of_dicts(x):
    return [{"v": x * i, "i": i} for i in range(2)]


# torch.compile: 1 graphs
@program(x34, 2, 7)
def ordered_dict(x):
    d = collections.OrderedDict()
    d["z"] = x
    d["a"] = x + 1
    d.move_to_end("z")
    return d, list(d)


# torch.compile: 1 graphs
@program(x34, 2, 3, eager=2)
def defaultdict_of_lists(x):
    d = collections.defaultdict(list)
    for i in range(3):
        d[i % 2].append(x * i)
    return {k: torch.stack(v) for k, v in d.items()}


# torch.compile: 1 graphs
@program(x34, 3, 5)
def deque_rotate(x):
    q = collections.deque([x, x + 1, x + 2], maxlen=3)
    q.append(x * 10)
    q.rotate(1)
    return list(q)


# torch.compile: 1 graphs
@program(x34, 6, 5)
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


@program(x34, 1, 1)
def min_max_len_over_python_lists(x):
    sizes = [len("ab"), 5, 3]
    return x[: min(sizes)], x[:, : max(sizes[1:]) - 2], sorted(sizes), sizes.index(5)


@program(tensors(3, 2, 2), 1, fullgraph=True)
def list_input_enumerate_zip(xs):
    ws = [1.0, 2.0, 3.0]
    return [t * w + i for i, (t, w) in enumerate(zip(xs, ws))]


# torch.compile: 1 graphs
@program(lambda r: ({"x": r.randn(3), "y": r.randn(3)},), 0, 2, eager=1)
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
@program(x34, 1, 2)
def list_sort_in_place(x):
    xs = [3, 1, 2]
    xs.sort()
    ys = [(2, "b"), (1, "a")]
    ys.sort(key=lambda p: p[0])
    return x * xs[0], xs, ys


# torch.compile: 1 graphs
@program(x34, 0, eager=1)
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
