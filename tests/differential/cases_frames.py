"""Issue 13 items 3, 4, 5, 9 and the run-time-error part of item 8: what a frame shows of itself
(locals, vars, f(**locals()), format(**locals()), f_locals, sys._getframe), live dict views, a
branch on the storage size, errors caught by the frame's own ``except``, a recursion near the
limit, and compiling a class."""

from __future__ import annotations

import inspect
import sys

import torch
from torch import nn

from .runner import (
    BUG_TRY,
    TC_DIFFERS,
    case,
    register,
)


def x34(r):
    return (r.randn(3, 4),)


@case(x34, xfail_tc=TC_DIFFERS)
def locals_read(x):
    y = x + 1
    d = locals()
    return sorted(d), d["y"] * 2


@case(x34, xfail_tc=TC_DIFFERS)
def vars_read(x):
    y = x * 2
    return sorted(vars()), y


def _kw(x, y):
    return x - y


@case(x34, child=True, xfail_tc=TC_DIFFERS)
def call_with_locals(x):
    y = x + 1
    return _kw(**locals())


@case(x34, child=True, xfail_tc=TC_DIFFERS)
def format_locals(x):
    a = x.shape[0]
    y = x + 1
    return "{a}".format(**locals()), y


@case(x34, xfail_tc=TC_DIFFERS)
def frame_f_locals(x):
    y = x + 1
    return sorted(inspect.currentframe().f_locals), y


@case(x34, xfail_tc=TC_DIFFERS)
def sys_getframe_locals(x):
    y = x + 1
    f = sys._getframe()
    return f.f_code.co_name, sorted(f.f_locals), y


@case(x34)
def dict_views_live(x):
    d = {"a": x}
    k, v, it = d.keys(), d.values(), d.items()
    d["b"] = x + 1
    return len(k), "b" in k, len(v), len(it), k == {"a", "b"}, list(v)[-1]


@case(x34)
def dict_views_after_delete(x):
    d = {"a": x, "b": x * 2}
    k = d.keys()
    del d["a"]
    return list(k), "a" in k, d["b"]


@case(lambda r: (r.pick(r.randn(3, 4), r.randn(4, 4)[1:]),), xfail_tc=TC_DIFFERS)
def storage_size_branch(x):
    if x.untyped_storage().size() == x.numel() * x.element_size():
        return x + 1
    return x - 1


@case(lambda r: (r.pick(r.randn(3, 4), r.randn(4, 4)[1:]),), xfail_tc=TC_DIFFERS)
def storage_size_returned(x):
    n = x.untyped_storage().size()
    return n, n > 0, x * (n // 4)


@case(lambda r: (r.pick(r.randn(3, 4), r.randn(4, 4)[1:]),))
def storage_size_nonzero_branch(x):
    # torch.distributed.fsdp's flat-parameter helpers branch this way.
    if x.untyped_storage().size() > 0:
        return x.clone()
    return x


@case(
    lambda r: (r.randn(4, 3), torch.tensor(r.pick([0, 1], [0, 7]))),
    xfail=BUG_TRY,
    xfail_tc=TC_DIFFERS,
)
def runtime_error_caught_by_frame(x, idx):
    try:
        y = torch.index_select(x * 2, 0, idx) + 1
    except (IndexError, RuntimeError) as e:
        return x.sum(), type(e).__name__
    return y, "ok"


@case(lambda r: (r.randn(4, 3), torch.tensor(r.pick([0, 1], [0, 7]))), raises=True)
def runtime_error_escapes(x, idx):
    return torch.index_select(x * 2, 0, idx) + 1


def _depth() -> int:
    f, n = sys._getframe(), 0
    while f is not None:
        f, n = f.f_back, n + 1
    return n


def _rec(n):
    return 0 if n == 0 else 1 + _rec(n - 1)


@case(
    lambda r: (r.randn(3), sys.getrecursionlimit() - _depth() - 40),
    child=True,
    xfail_tc=TC_DIFFERS,
)
def recursion_near_limit(x, n):
    return x + _rec(n)


class SmallNet(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.lin = nn.Linear(d, d)

    def forward(self, x):
        return self.lin(x)


# Compiling the class itself, as ``torchferro.compile(SmallNet)(4)``: the result is a module.
register("compile_a_class", SmallNet, lambda r: (4,))
