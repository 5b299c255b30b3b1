"""Graph breaks: each kind of unsupported instruction or call, breaks inside inlined functions,
inside loops over Python iterables and inside with/try blocks, frames with closures, and the
recursive compilation of resume functions and of the functions they call. Every program must
stay correct, running the unsupported part natively (or the whole frame eagerly)."""

from __future__ import annotations

import math
import operator
import sys
import zlib

import numpy as np
import torch
import torchferro
from torch import nn

from .harness import module_program, program


def x34(r):
    return (r.randn(3, 4),)


def pos_neg(r):
    """A positive-sum input, then a negative-sum one: data-dependent branches go both ways."""
    t = r.randn(3, 4).abs() + 0.1
    return (r.pick(t, -t),)


@program(x34, 2, 1)
def print_in_the_middle(x):
    y = x * 2
    print("y has shape", tuple(y.shape))  # BREAK
    return y + 1


@program(x34, 1, 1)
def print_first(x):
    # A break before any tensor op: no graph before it, one for the resume function.
    print("start")
    return x.sin()


@program(x34, 1, 1)
def print_last(x):
    y = x.cos()
    print("done")
    return y


@program(x34, 3, 2)
def two_prints(x):
    a = x + 1
    print("a")
    b = a * 2
    print("b")
    return b - a


@program(pos_neg, 3, 1)
def data_dependent_if(x):
    if x.sum() > 0:  # BREAK
        return x + 1
    return x - 1


@program(pos_neg, 2, 1)
def data_dependent_if_bool_call(x):
    y = x * 2
    if bool(y.mean() > 0):
        y = y.relu()
    return y


# torch.compile: 3 graphs
@program(x34, 1, 1, eager=1)
def data_dependent_while(x):
    # Each trip breaks at the loop condition; the number of trips differs between input sets.
    n = 0
    while x.abs().max() > 1e-2:
        x = x / 4
        n += 1
    return x, n


@program(pos_neg, 3, 1)
def item_in_python_arithmetic(x):
    s = x.sum().item()  # BREAK
    return x * (s * 2 + 1)


# torch.compile: 3 graphs
@program(x34, 3, 1)
def item_feeds_math_floor(x):
    k = math.floor(x.abs().sum().item())
    return x * 0 + k, k


@program(x34, 3, 1)
def tolist_feeds_control_flow(x):
    vals = (x[0] > 0).tolist()  # BREAK
    out = x
    for i, v in enumerate(vals):
        if v:
            out = out + i
    return out


# numpy on x.numpy() is traced (issue 14); reading an array into Python breaks.
@program(x34, 3, 1)
def numpy_call(x):
    a = np.abs(x.numpy())
    rows = a.tolist()  # BREAK
    return x / max(max(r) for r in rows)


@program(x34, 1, 1)
def c_function_on_python_values(x):
    h = zlib.crc32(b"torchferro")  # BREAK
    return x + (h % 7)


# torch.compile: 2 graphs (the resume function only moves `t` into the result: no guard on its
# text, no recompile for the second input)
@program(x34, 2, 1)
def str_of_tensor(x):
    s = str(x.shape) + repr(x.dtype)
    t = str(x.sum())
    return x * len(s), t


# torch.compile: 1 graphs
@program(x34, 2, 1)
def explicit_torchferro_graph_break(x):
    y = x + 1
    torchferro.graph_break()  # BREAK
    return y * 2


# torch.compile: 2 graphs
@program(x34, 2, 1)
def torch_dynamo_graph_break(x):
    # A torch function not known to be pure ends the graph (torch.compile breaks here too).
    y = x + 1
    torch._dynamo.graph_break()
    return y * 2


def _helper_prints(t):
    u = t * 3
    print("inside helper")  # BREAK
    return u + 1


@program(x34, 4, 2)
def print_in_inlined_function(x):
    y = x.exp()
    z = _helper_prints(y)
    return z - y


def _level2(t):
    print("level 2")  # BREAK
    return t - 1


def _level1(t):
    return _level2(t * 2) + 1


@program(x34, 5, 3)
def print_two_levels_deep(x):
    return _level1(x + 1) * 3


def _data_dependent_helper(t):
    if t.sum() > 0:
        return t * 2
    return -t


@program(pos_neg, 4, 2)
def data_dependent_branch_in_inlined_function(x):
    y = x + 1
    return _data_dependent_helper(y) + y


class PrintingLayer(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        y = self.lin(x)
        print("layer output", tuple(y.shape))
        return y.relu()


class WithPrintingChild(nn.Module):
    def __init__(self):
        super().__init__()
        self.pre = nn.Linear(4, 4)
        self.child = PrintingLayer()

    def forward(self, x):
        return self.child(self.pre(x)) * 2


module_program("break_in_submodule_forward", WithPrintingChild, x34, 4, 2)


@program(x34, 0, 0, eager=1)
def print_inside_for_loop_over_range(x):
    for i in range(3):
        x = x + i
        print("step", i)
    return x


@program(lambda r: (r.randn(3), [1.0, 2.0, 3.0]), 0, 0, eager=1)
def print_inside_for_loop_over_list(x, ws):
    out = x
    for w in ws:
        out = out * w
        print(w)
    return out


@program(lambda r: (r.randn(3),), 0, 0, eager=1)
def print_inside_for_loop_over_dict_items(x):
    d = {"a": 1.0, "b": 2.0}
    for k, v in d.items():
        x = x + v
        print(k)
    return x


@program(lambda r: ([r.randn(3), r.randn(3)],), 0, 0, eager=1)
def break_inside_loop_over_tensor_list(xs):
    total = xs[0] * 0
    for t in xs:
        total = total + t
        print("acc")
    return total


@program(pos_neg, 0, 0, eager=1)
def data_dependent_break_inside_loop(x):
    out = x
    for i in range(3):
        if out.sum() > 0:
            out = out - 1
        else:
            out = out + 1
    return out


# torch.compile: 2 graphs
@program(lambda r: (r.randn(3, 4, requires_grad=True),), 2, 1)
def print_inside_no_grad_block(x):
    with torch.no_grad():
        y = x * 2
        print("in no_grad")
        z = y + 1
    return z, z.requires_grad, (x * 2).requires_grad


class Recorder:
    def __init__(self):
        self.events = []

    def __enter__(self):
        self.events.append("enter")
        return self

    def __exit__(self, *exc):
        self.events.append("exit")
        return False


@program(lambda r: (r.randn(3), Recorder()), 0, eager=1)
def print_inside_user_context_manager(x, rec):
    with rec:
        y = x + 1
        print("inside")
    return y * 2


@program(x34, 2, 1)
def print_inside_try_block(x):
    try:
        y = x + 1
        print("in try")
    except RuntimeError:
        y = x
    return y * 2


# torch.compile: 2 graphs. The resume function's `scale` (new on every call) is guarded by its
# code, as torch.compile guards it (was 3: an identity guard recompiled on the second call).
@program(x34, 2, 1)
def break_in_frame_with_closure(x):
    k = x.sum()

    def scale(t):
        return t * k

    print("closure frame")
    return scale(x)


@program(x34, 1, 1)
def break_then_call_helper_compiled_recursively(x):
    print("before")
    return _compiled_helper(x) + 1


def _compiled_helper(t):
    # Called from a resume function: inlined into its graph.
    return t * 2 - 1


def _second_frame(t):
    y = t.tanh()
    print("second frame")
    return y * 2


@program(x34, 4, 2)
def broken_callee_compiled_as_own_frame(x):
    # The top frame breaks at the call; _second_frame runs as its own frame (one graph before
    # its print, one after); the top frame resumes after the call.
    y = x + 1
    z = _second_frame(y)
    return z + y


@program(x34, 2, 2)
def break_with_live_stack_values(x):
    return x * 2 + _breaks_and_returns(x) + x.sum()


def _breaks_and_returns(t):
    print("live")
    return t


@program(lambda r: (r.randn(3), [1, 2], {"k": 3}), 2, 1)
def break_with_live_python_locals(x, ks, d):
    n = len(ks) + d["k"]
    y = x * n
    label = f"n={n}"
    print(label)
    return y + n, label, ks, d


@program(pos_neg, 1, 1)
def early_return_from_data_dependent_break(x):
    y = x.cos()
    if (y > 0.9).any():
        return y
    return y * 2


@program(x34, 1, fullgraph=True)
def store_global_replayed_after_the_graph(x):
    global _LAST
    _LAST = x.shape[0]
    return x * 2


_LAST = None


@program(lambda r: (r.pick(r.randn(3, 4), r.randn(5, 4)),), 4, 2)
def resume_function_recompiles_on_new_shape(x):
    y = x * 2
    print("shape", y.shape)
    return y.sum(0)


# torch.compile: 2 graphs
@program(x34, 1, 1)
def disabled_helper_runs_eagerly(x):
    # The disabled call breaks the graph and runs without being compiled.
    return _disabled(x) + 1


# torch.compile: 2 graphs
@program(x34, 2, 1)
def torch_compiler_disable_helper(x):
    return _torch_disabled(x.cos()) + 1


@torch.compiler.disable
def _torch_disabled(t):
    return t * 2


def _plain_disabled(t):
    return t * 3


_disabled = torchferro.compiler.disable(_plain_disabled)


# torch.compile: 1 graphs. The generator function drained by `list` is run to its end in the
# trace (`inline.rs`).
@program(x34, 1, fullgraph=True)
def generator_function_call(x):
    return list(_gen(x)) + [x]


def _gen(t):
    for i in range(2):
        yield t * i


# 3.11: the comprehension is its own frame, which runs eagerly. 3.12 inlines it (PEP 709): the
# frame breaks before the comprehension, which runs natively as a whole (as torch.compile does).
@program(
    x34,
    0,
    1,
    eager=1 if sys.version_info < (3, 12) else 0,
)
def print_inside_list_comprehension(x):
    return [(print(i), x * i)[1] for i in range(2)]


# torch.compile: 2 graphs
@program(x34, 2, 2)
def print_inside_lambda(x):
    f = lambda t: (print("lam"), t + 1)[1]
    return f(x) * 2


# torch.compile: 2 graphs
@program(x34, 2, 1)
def operator_on_tensor_item(x):
    i = operator.index(int(x.argmax()))
    return x.flatten()[i]


@program(x34, 2, 1)
def nonzero_dynamic_shape(x):
    # A data-dependent output shape breaks the graph.
    idx = torch.nonzero(x > 0)  # BREAK
    return idx.shape[1], x + 1


# torch.compile: 1 graphs
@program(x34, 1, 1)
def local_containers_mutated_after_a_break(x):
    lst = [x]
    d = {"a": x}
    print("break")
    lst.append(x + 1)
    d["b"] = x * 2
    return lst, d


# ---------------------------------------------------------------------------------------------
# Resuming in frames with cells and free variables: the resume function is a closure over the
# frame's very cells, so closures made before the break still share them.


# torch.compile: 2 graphs (the closure handed to the resume function is guarded by its code).
@program(x34, 2, 1)
def cell_shared_with_closure_across_a_break(x):
    k = x.sum()

    def scaled(t):
        return t * k

    y = scaled(x)
    print("break")
    k = k + 1
    return scaled(y), k


# torch.compile: 3 graphs
@program(lambda r: (r.randn(3, 4), r.pick(2.0, 3.0)), 2, 2)
def argument_cell_across_a_break(x, s):
    def scaled(t):
        return t * s

    print("break")
    return scaled(x) + s


def _make_breaking_closure(scale):
    offset = torch.ones(4)

    def closure_with_free_variables_breaks(x):
        y = x * scale + offset
        print("break")
        return y - scale

    return closure_with_free_variables_breaks


program(x34, 2, 1)(_make_breaking_closure(2.0))


class _Base(nn.Module):
    def forward(self, x):
        return x * 2


class _PrintingChild(_Base):
    def forward(self, x):
        y = super().forward(x)
        print("child")
        return super().forward(y) + 1


# torch.compile: 2 graphs
module_program("zero_argument_super_around_a_break", _PrintingChild, x34, 2, 1)


def _counter_factory():
    calls = [0]

    def bump(t):
        calls[0] += 1
        print("bump")
        return t + calls[0]

    return bump


# torch.compile: 4 graphs
@program(lambda r: (r.randn(3), _counter_factory()), 3, 4)
def breaking_closure_called_twice(x, bump):
    return bump(x) * bump(x)


# ---------------------------------------------------------------------------------------------
# A break inside a loop gives the frame up, as torch.compile does (`resume::in_loop`): it runs
# eagerly. Where a `return` comes ahead of the loop's back edge the frame resumes inside the loop
# (as torch.compile does too): the loop's iterator is handed over as the items it has not yielded
# yet, and every trip resumes in the same resume function, built from the original code.
# CPython 3.12 lays the zip, range and dict-items loops' `return` out after the back edge: both
# compilers run those frames eagerly there (`py312`; torch.compile 2.11 on 3.12.3, session 18).


# torch.compile: 0 graphs
@program(lambda r: (r.randn(3), [r.randn(3), r.randn(3), r.randn(3)]), 4, 3)
def enumerate_loop_resumes_with_a_return_ahead(x, xs):
    out = x
    for i, t in enumerate(xs):
        out = out + t * i
        print("step", i)
        if i > 10:
            return out
        out = out * 0.5
    return out


# torch.compile: 1 graphs
@program(lambda r: (r.randn(3), [1.0, 2.0], ["a", "b"]), 2, 2, py312=(0, 0, 1))
def zip_loop_resumes_with_a_return_ahead(x, ws, names):
    parts = {}
    for w, n in zip(ws, names):
        parts[n] = x * w
        print(n)
        if w > 10:
            return parts
    return parts


@program(x34, 4, 3, py312=(0, 0, 1))
def range_loop_resumes_with_a_return_ahead(x):
    for i in range(3):
        x = x + i
        print("step", i)
        if i > 10:
            return x
    return x * 2


# torch.compile: 3 graphs
@program(lambda r: (r.randn(3),), 2, 2, py312=(0, 0, 1))
def dict_items_loop_resumes_with_a_return_ahead(x):
    d = {"a": 1.0, "b": 2.0}
    for k, v in d.items():
        x = x + v
        print(k)
        if v > 10:
            return x
    return x


# torch.compile: 0 graphs
@program(lambda r: (r.randn(3), [r.randn(3), r.randn(3), r.randn(3)]), 0, 0, eager=1)
def print_inside_enumerate_loop(x, xs):
    out = x
    for i, t in enumerate(xs):
        out = out + t * i
        print("step", i)
        out = out * 0.5
    return out


# torch.compile: 0 graphs
@program(lambda r: (r.randn(3), [1.0, 2.0], ["a", "b"]), 0, 0, eager=1)
def print_inside_zip_loop(x, ws, names):
    parts = {}
    for w, n in zip(ws, names):
        parts[n] = x * w
        print(n)
    return parts


# torch.compile: 0 graphs
@program(x34, 0, 0, eager=1)
def print_inside_nested_loops(x):
    acc = x
    for i in range(2):
        for j in range(2):
            acc = acc + i * j
            if j == 1:
                print(i, j)
    return acc


# torch.compile: 0 graphs
@program(pos_neg, 0, 0, eager=1)
def data_dependent_break_then_continue(x):
    total = x * 0
    for k in [1, 2, 3]:
        if x.sum() > 0:
            continue
        total = total + k
    return total


# ---------------------------------------------------------------------------------------------
# Breaks inside try and with blocks: the breaking instruction keeps its handler, and grad-mode
# blocks are re-entered natively.


@program(lambda r: (r.randn(3, requires_grad=True),), 2, 1)
def print_inside_enable_grad_inside_no_grad(x):
    with torch.no_grad():
        a = x * 2
        with torch.enable_grad():
            b = x * 3
            print("inner", torch.is_grad_enabled())
            c = b + 1
        d = a + 1
    return a.requires_grad, b.requires_grad, c.requires_grad, d.requires_grad, c + d


# torch.compile: 1 graphs
@program(lambda r: (r.randn(3, requires_grad=True),), 2, 1)
def print_inside_set_grad_enabled_false(x):
    with torch.set_grad_enabled(False):
        y = x + 1
        print("off", torch.is_grad_enabled())
    return y, y.requires_grad, torch.is_grad_enabled()


# torch.compile: 0 graphs. The handler, entered from the breaking call, is traced too.
@program(lambda r: (r.randn(3), r.pick(zlib.compress(b"abc"), b"not zlib")), 3, 1)
def breaking_call_raises_into_its_handler(x, data):
    try:
        y = x + 1
        n = len(zlib.decompress(data))  # a C call: runs natively, and may raise
        y = y * n
    except zlib.error:
        y = y - 100
    return y


# torch.compile: 0 graphs
@program(x34, 2, 1)
def print_inside_try_finally(x):
    log = []
    try:
        y = x + 1
        print("in try")
        log.append("body")
    finally:
        log.append("finally")
        y = y * 2
    return y, log


# torch.compile: 0 graphs
@program(lambda r: (r.randn(3), r.pick({"a": 1}, {})), 1, 2, eager=1)
def break_inside_nested_try(x, d):
    try:
        try:
            y = x + d["a"]
            print("found")
        except KeyError:
            y = x - 1
            print("missing")
    except LookupError:
        y = x * 0
    return y


# ---------------------------------------------------------------------------------------------
# A graph break with a pending call below it: the resume function pushes the NULL itself.


def _combine(a, b, c):
    return a * b + c


@program(x34, 1, 1)
def print_as_argument_of_a_pending_call(x):
    return _combine(x, (print("arg") or 2), x.sum())


@program(x34, 1, 1)
def break_in_argument_of_torch_call(x):
    return torch.add(x, float(len(str(print("p")))))


class _Record(dict):
    """A dict subclass with attributes, like transformers' ModelOutput."""


class _Field:
    def __init__(self, name):
        self.name = name


_FIELDS = (_Field("a"), _Field("b"))


def _record(r):
    rec = _Record()
    rec.a = r.randn(3)
    rec.b = 3
    return (rec, _FIELDS, r.randn(3))


# The loop's remaining items are a tracker made after tracing: it must not be mistaken for an
# input container (here `rec.__dict__`) whose tracker was freed at the same address.
# torch.compile: 1 graphs
@program(_record, 0, 0, eager=1)
def loop_resumes_next_to_an_attribute_dict(rec, fields, x):
    for field in fields:
        v = rec.__dict__.get(field.name)
        if v is not None:
            rec[field.name] = v
    return rec, x + 1


class _ClosureOverSelf(_Base):
    def forward(self, x):
        # `self` is kept in a cell (the closure reads it) and `super()` runs after the break.
        def shifted(t):
            return t + self.training

        print("break")
        return super().forward(x) + shifted(x)


# torch.compile: 1 graphs
module_program("zero_argument_super_with_self_in_a_cell", _ClosureOverSelf, x34, 1, 1)
