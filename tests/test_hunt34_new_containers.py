"""Session 34 hunt: containers a builtin makes from constants, then written by the traced code.

``dict(kwargs)`` in a forward pre-hook registered ``with_kwargs=True`` (the way such a hook
changes a keyword: copy, then ``kwargs["scale"] = ...``), ``dict(pairs)``,
``dict(zip(keys, values))`` and ``sorted(xs)`` over Python values folded at trace time into
a constant: writing it (``d[k] = v``, ``l.append(v)``) broke the graph ("assigning an item
of a dict from outside the compiled function", "call to append"), one graph more than
torch.compile. The folded result of those builtins is now the traced code's own container
(``Frame::own_container``), as ``[]`` and ``{}`` are.

The generated test makes a container with one of the builtins, writes it with one of the
mutations, and reads it into a tensor expression (after tensor work, so that a break would
split it in two graphs) and the return value: eager's values (the container returned too), in
no more graphs than torch.compile."""

from __future__ import annotations

import torch
from hypothesis import given
from hypothesis import strategies as st
from torch import nn

import torchferro
from programs.compare import generated

MAKERS = {
    "dict_of_dict": lambda d, l: dict(d),
    "dict_of_pairs": lambda d, l: dict([("a", 1.0), ("b", 2.0)]),
    "dict_of_zip": lambda d, l: dict(zip(["a", "b"], l)),
    "dict_of_items": lambda d, l: dict(d.items()),
    "dict_with_keywords": lambda d, l: dict(d, c=3.0),
    "sorted_list": lambda d, l: sorted(l),
    "sorted_values": lambda d, l: sorted(d.values()),
    "sorted_keys": lambda d, l: sorted(d),
    "list_of_dict": lambda d, l: list(d),
}


def _write(c, how):
    """One write of a list or dict ``c`` made by ``MAKERS``."""
    if isinstance(c, dict):
        if how == "set":
            c["z"] = 5.0
        elif how == "overwrite":
            c[next(iter(c))] = 7.0
        elif how == "pop":
            c.pop(next(iter(c)))
        elif how == "update":
            c.update(y=1.5)
        elif how == "delete":
            del c[next(iter(c))]
    else:
        if how == "set":
            c[0] = 5.0 if not isinstance(c[0], str) else "q"
        elif how == "overwrite":
            c.append(c[0])
        elif how == "pop":
            c.pop()
        elif how == "update":
            c.extend(c[:1])
        elif how == "delete":
            del c[0]


def _number(c) -> float:
    vals = c.values() if isinstance(c, dict) else c
    return float(sum(v for v in vals if not isinstance(v, str))) + len(c)


def _graphs(compile_fn, fn, *args):
    n = [0]

    def backend(gm, example_inputs):
        n[0] += 1
        return gm.forward

    out = compile_fn(fn, backend=backend)(*args)
    return out, n[0]


@generated(60)
@given(
    maker=st.sampled_from(sorted(MAKERS)),
    how=st.sampled_from(["set", "overwrite", "pop", "update", "delete"]),
)
def test_generated_new_container_written(maker, how):
    def fn(x, d, l):
        y = x.sin()  # (work before the container: a break would split it off a graph)
        c = MAKERS[maker](d, l)
        _write(c, how)
        return y * _number(c), c

    def args():
        return torch.ones(3), {"a": 1.0, "b": 2.0}, [3.0, 1.0]

    want = fn(*args())
    torch._dynamo.reset()
    torchferro.compiler.reset()
    try:
        _, tc = _graphs(torch.compile, fn, *args())
        a = args()
        got, ours = _graphs(torchferro.compile, fn, *a)
    finally:
        torch._dynamo.reset()
        torchferro.compiler.reset()
    torch.testing.assert_close(got[0], want[0])
    assert got[1] == want[1] and type(got[1]) is type(want[1])
    assert (a[1], a[2]) == (
        {"a": 1.0, "b": 2.0},
        [3.0, 1.0],
    )  # the inputs are not written
    assert ours <= tc, (ours, tc)


class _Scaled(nn.Module):
    def forward(self, x, scale=1.0):
        return x * scale


def test_forward_pre_hook_with_kwargs_copies_and_sets():
    """The hook copies the keywords and sets one; a forward hook with kwargs reads it: one
    graph (torch.compile: one), eager's value."""

    def pre(mod, args, kwargs):
        kwargs = dict(kwargs)
        kwargs["scale"] = kwargs.get("scale", 1.0) * 2
        return args, kwargs

    def post(mod, args, kwargs, out):
        return out + kwargs["scale"]

    m = _Scaled()
    m.register_forward_pre_hook(pre, with_kwargs=True)
    m.register_forward_hook(post, with_kwargs=True)

    def fn(x):
        return m(x, scale=3.0)

    x = torch.randn(3)
    torchferro.compiler.reset()
    try:
        got, ours = _graphs(torchferro.compile, fn, x)
    finally:
        torchferro.compiler.reset()
    torch.testing.assert_close(got, fn(x))
    assert ours == 1
