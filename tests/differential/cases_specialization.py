"""Guards no stricter than what the traced code reads: values live at a graph break reach the
resume function as its arguments, and a list of floats there (``t.tolist()``, ``[float(v) ...]``)
holds new values on every call. Its items are checked only where the code uses them, ``len()``
reads its length alone, and building a tuple or a list only moves values, so a program that
never reads the floats' values compiles as often as under torch.compile (each input set has
other values: more graphs than torch.compile is a failure here)."""

from __future__ import annotations

import torch

from .runner import case

STRICT_BREADTH = True


def x3(r):
    return (r.randn(3),)


@torch.compiler.disable
def _to_list(t):
    return t.tolist()


@case(x3)
def float_list_from_disabled_call_len(x):
    y = x * 2
    vals = _to_list(y)
    return y + len(vals)


@case(x3)
def float_list_comprehension_len_after_break(x):
    vals = [float(v) for v in x]
    print("break")
    return x + len(vals)


@case(x3)
def float_list_returned_after_break(x):
    vals = [float(v) for v in x]
    print("break")
    return x * 2, vals


@case(x3)
def float_tuple_packed_after_break(x):
    vals = tuple(float(v) for v in x)
    print("break")
    pair = (vals, len(vals))
    return x - pair[1], pair[0]


@case(x3)
def float_dict_len_after_break(x):
    d = {"a": float(x[0]), "b": float(x[1])}
    print("break")
    return x + len(d), d


@case(x3)
def float_list_values_used_after_break(x):
    # The values are read: both compile again for the second input set.
    vals = [float(v) for v in x]
    print("break")
    return x * sum(vals), vals[0]
