"""Graph breaks inside comprehensions. On CPython 3.12 comprehensions are inlined into their
frame (PEP 709): a break in a comprehension's body leaves the list, set or dict being built, the
loop's iterator and the saved comprehension variable (`LOAD_FAST_AND_CLEAR`, NULL when it was
unbound) on the frame's stack, so the resume function receives the container as an argument and
its `LIST_APPEND` / `SET_ADD` / `MAP_ADD` mutate an object from outside the trace. On 3.11 the
comprehension is its own frame. Either way the values must be eager's (a resume function once
returned the container empty on 3.12)."""

from __future__ import annotations

import sys

import torch

from .runner import TC_DIFFERS, case

# torch.compile (torch 2.11) on 3.12 raises UnboundLocalError where a comprehension's variable
# shadows a local of the frame and the comprehension breaks its graph.
TC_312_SHADOW = TC_DIFFERS if sys.version_info >= (3, 12) else None


def x34(r):
    return (r.randn(3, 4),)


def _note(tag, v):
    print(tag)
    return v


@case(x34)
def comprehension_break_in_element(x):
    return [(print("row"), r * 2)[1] for r in x]


@case(x34)
def comprehension_break_in_element_one_item(x):
    return [(print("row"), r * 2)[1] for r in x[:1]]


@case(x34)
def comprehension_break_in_condition(x):
    return [r * 2 for r in x if print("keep") is None]


@case(x34)
def dict_comprehension_break(x):
    return {i: _note("item", r * 2) for i, r in enumerate(x)}


@case(x34)
def set_comprehension_break(x):
    return sorted({_note("item", i) for i, _ in enumerate(x)})


@case(x34)
def nested_comprehension_break(x):
    return [[_note("cell", r * j) for j in range(2)] for r in x]


@case(x34, xfail_tc=TC_312_SHADOW)
def comprehension_variable_shadows_a_local(x):
    r = x.sum()
    ys = [_note("row", r * 2) for r in x]
    return ys, r


@case(x34)
def comprehension_variable_unbound_after(x):
    ys = [_note("row", r + 1) for r in x]
    try:
        r  # noqa: B018, F821  (unbound: the comprehension's variable does not leak)
        leaked = True
    except NameError:
        leaked = False
    return ys, leaked


@case(x34)
def comprehension_then_tensor_work(x):
    ys = [_note("row", r.relu()) for r in x]
    return torch.stack(ys).sum(0) * 3


# torch.compile's locals() here shows its own variables.
@case(x34, xfail_tc=TC_DIFFERS)
def locals_after_a_comprehension_broken_in_its_body(x):
    t = torch.stack([_note("row", r * 2) for r in x])
    return t, sorted(locals())
