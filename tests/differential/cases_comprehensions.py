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

# Issue 14's rule holds on both versions. On 3.12 a break inside a comprehension ends the graph
# before the whole comprehension, which runs natively. On 3.11 a comprehension is a frame of its
# own, and one whose loop runs over a Python iterator object (`range`, another comprehension's
# argument) runs eagerly when its body breaks (a break at FOR_ITER cannot resume), as
# torch.compile skips it ("graph break in a loop"): the harness counts that frame for both.
ON_312 = sys.version_info >= (3, 12)
STRICT_BREADTH = True


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


# Whole comprehensions run natively after a graph break in their body (3.12): the graph before
# them, the comprehension, and the code after it in a resume function.


# Both compilers run the rest of the frame natively after a comprehension breaks inside a loop
# (torch.compile cannot resume there; torchferro marks that resume function skipped).
@case(x34)
def comprehension_in_a_loop_breaks_each_time(x):
    acc = x.sum()
    for k in range(2):
        ys = [_note("row", r + k) for r in x]
        acc = acc + torch.stack(ys).sum()
    return acc


@case(x34)
def comprehension_as_a_statement(x):
    out = []
    [out.append(_note("row", r.sum())) for r in x]  # used for its effect
    return torch.stack(out) + 1


@case(x34)
def dict_comprehension_stored_then_read(x):
    y = x * 2
    d = {k: _note("row", r) for k, r in zip("abc", y)}
    return d["a"] + d["c"], sorted(d)


@case(x34)
def comprehension_reads_outer_locals(x):
    scale = x.mean()
    offset = 3
    ys = [_note("row", r * scale + offset) for r in x]
    return torch.stack(ys).amax(0)


@case(x34)
def comprehension_over_a_list_of_tensors(x):
    parts = list(x.unbind(0))
    ys = [_note("part", p.relu()) for p in parts if p.sum() > -100]
    return torch.cat(ys), len(parts)


@case(x34)
def comprehension_after_an_earlier_break(x):
    y = x.cos()
    print("before")
    ys = [_note("row", r * 2) for r in y]
    return torch.stack(ys) - y


@case(x34)
def comprehension_inside_try_block(x):
    try:
        ys = [_note("row", r * 2) for r in x]
    except ValueError:
        ys = []
    return torch.stack(ys).sum(0)


@case(x34)
def comprehension_raises_in_its_body(x):
    try:
        ys = [_note("row", r * 2) if i < 2 else int("no") for i, r in enumerate(x)]
    except ValueError as e:
        ys = [x[0], x[1], torch.zeros(4)]
        print("caught", e)
    return torch.stack(ys)


@case(x34, raises=True)
def comprehension_raises_out_of_the_frame(x):
    y = x + 1
    return [_note("row", r) if r.sum() < 1e9 else None for r in y] + [int("no")]


@case(x34, raises=True)
def comprehension_body_raises_out_of_the_frame(x):
    y = x + 1
    return [_note("row", r) if i < 2 else int("no") for i, r in enumerate(y)]


@case(x34)
def comprehension_with_a_closure_cell(x):
    scale = x.amax()
    f = lambda t: t * scale
    ys = [_note("row", f(r)) for r in x]
    return torch.stack(ys).sum(), scale


# The lambdas reach the resume function new on every call: guarded by their code, as
# torch.compile guards them (an identity guard recompiled on every call).
@case(x34)
def comprehension_captured_by_a_lambda(x):
    fs = [_note("fn", lambda t, r=r: t + r) for r in x]
    return torch.stack([f(x[0]) for f in fs])


@case(x34)
def comprehension_with_walrus(x):
    ys = [_note("row", last := r * 2) for r in x]
    return torch.stack(ys), last


# The walrus target stays unbound when the loop does not run (input set 1). On 3.11 the target
# is a cell of the frame, and torch.compile raises NameError reading it.
@case(
    lambda r: (r.randn(3, 4), r.pick(2, 0)),
    xfail_tc=None if ON_312 else TC_DIFFERS + ": NameError reading the unbound cell",
)
def comprehension_with_walrus_maybe_unbound(x, n):
    ys = [_note("row", last := r * 2) for r in x[:n]]
    out = torch.stack(ys) if ys else x
    try:
        got = last
    except UnboundLocalError:
        got = None
    return out, got


@case(x34)
def comprehension_with_walrus_bound_before(x):
    last = x.sum()
    ys = [_note("row", last := r * 2) for r in x[:0]]
    zs = [_note("row", last := last + r) for r in x]
    return len(ys), torch.stack(zs), last


# torch.compile's rows require grad here on 3.12 (the block's grad mode is lost after its break).
@case(x34, xfail_tc=TC_312_SHADOW)
def comprehension_under_no_grad(x):
    w = x.clone().requires_grad_()
    with torch.no_grad():
        ys = [_note("row", r * 2) for r in w]
    return torch.stack(ys).requires_grad, torch.stack(ys)


@case(x34)
def set_and_dict_comprehensions_in_one_statement(x):
    keys = {_note("k", i % 2) for i in range(4)}
    table = {k: _note("v", x[k] * 2) for k in sorted(keys)}
    return table[0] + table[1], sorted(keys)


class _Rows(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)

    def forward(self, x):
        h = self.lin(x)
        rows = [_note("row", self.lin(r).relu()) for r in h]
        return torch.stack(rows) + h


# The torch.nn layer the comprehension calls natively (after its break) gets no graph of its
# own: torch.nn code is traced only where traced code calls it (or on the compiled module).
@case(x34, module=True)
def comprehension_in_a_module_forward():
    return _Rows()


@case(x34)
def comprehension_inside_a_for_loop(x):
    out = []
    for k in range(2):
        out.append(torch.stack([_note("row", r * k) for r in x]))
    return out


@case(x34)
def comprehension_inside_a_for_loop_accumulates(x):
    acc = x.sum()
    for k in range(3):
        ys = [_note("row", r + k) for r in x]
        acc = acc + torch.stack(ys).sum()
    return acc


@case(x34)
def comprehension_with_walrus_no_break(x):
    ys = [(last := r * 2) for r in x]
    return torch.stack(ys), last
