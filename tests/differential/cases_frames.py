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


# Run-time errors inside ``try`` (issue 13 item 8): an op whose error depends on tensor values
# runs natively inside the frame's ``try`` (a graph break before it), so the frame's own handler
# catches it and sees the locals assigned before it. Input set 0 is in range, set 1 is not.
def _idx(good, bad):
    return lambda r: (r.randn(4, 3), torch.tensor(r.pick(good, bad)))


@case(_idx([0, 1], [0, 7]), xfail_tc=TC_DIFFERS)
def runtime_error_caught_by_frame(x, idx):
    try:
        y = torch.index_select(x * 2, 0, idx) + 1
    except (IndexError, RuntimeError) as e:
        return x.sum(), type(e).__name__
    return y, "ok"


@case(_idx([0, 1], [0, 7]), raises=True)
def runtime_error_escapes(x, idx):
    return torch.index_select(x * 2, 0, idx) + 1


@case(_idx([2, 3], [3, 4]), raises=True)
def runtime_error_escapes_subscript(x, idx):
    y = x.relu()
    return y[idx] * 2


def _select_twice(x, idx):
    y = torch.index_select(x, 0, idx)
    return y * 2


@case(_idx([0, 1], [0, 9]), xfail_tc=TC_DIFFERS)
def runtime_error_in_inlined_call(x, idx):
    try:
        y = _select_twice(x + 1, idx) - 1
    except IndexError as e:
        return x * 3, str(e)
    return y, "ok"


@case(_idx([1, 2], [-7, 2]), xfail_tc=TC_DIFFERS)
def runtime_error_handler_reads_locals(x, idx):
    a = None
    try:
        a = x.sum(0)
        b = a * 2
        y = x[idx] + b
    except IndexError:
        return a + 1, "caught"
    return y, a


@case(_idx([[0, 1, 2]], [[0, 4, 2]]), xfail_tc=TC_DIFFERS)
def runtime_error_gather(x, idx):
    try:
        y = torch.gather(x.t(), 1, idx).sum()
    except RuntimeError as e:
        return x.mean(), type(e).__name__
    return y, "ok"


@case(
    lambda r: (nn.Embedding(5, 3), torch.tensor(r.pick([[0, 4]], [[1, 5]]))),
    xfail_tc=TC_DIFFERS,
)
def runtime_error_embedding(emb, idx):
    try:
        y = emb(idx).relu()
    except IndexError as e:
        return emb.weight.sum(), str(e)
    return y, "ok"


@case(
    lambda r: (r.randn(4, 3), torch.tensor(r.pick([0, 2, 1, 2], [0, 3, 1, 2]))),
    xfail_tc=TC_DIFFERS,
)
def runtime_error_cross_entropy(x, target):
    try:
        loss = torch.nn.functional.cross_entropy(x * 2, target)
    except IndexError as e:
        return x.sum(), type(e).__name__
    return loss, "ok"


@case(
    lambda r: (r.randn(4, 3), torch.tensor(r.pick([0, 1], [0, 7])), []),
    xfail_tc=TC_DIFFERS,
)
def runtime_error_try_finally(x, idx, log):
    try:
        try:
            y = x.cos()
            log.append("body")
            y = torch.index_select(y, 0, idx)
        finally:
            log.append(len(log))
            z = x + 1
    except IndexError:
        return z, log
    return y.sum() + z, log


@case(_idx([0, 1], [0, 7]), xfail_tc=TC_DIFFERS)
def runtime_error_nested_try(x, idx):
    try:
        try:
            y = torch.index_select(x, 0, idx)
        except ValueError:
            return x, "inner"
        y = y + 1
    except IndexError:
        return x - 1, "outer"
    return y, "ok"


@case(_idx([0, 1], [0, 7]), xfail_tc=TC_DIFFERS)
def runtime_error_try_in_no_grad(x, idx):
    with torch.no_grad():
        try:
            y = torch.index_select(x, 0, idx)
        except IndexError:
            y = x.clone()
    return y * 2, torch.is_grad_enabled()


@case(_idx([0, 1], [0, 7]), xfail_tc=TC_DIFFERS)
def runtime_error_no_grad_in_try(x, idx):
    try:
        with torch.no_grad():
            y = torch.index_select(x, 0, idx)
    except IndexError:
        return x - 1, torch.is_grad_enabled()
    return y, torch.is_grad_enabled()


@case(_idx([0, 1], [0, 7]))
def runtime_error_handled_elsewhere(x, idx):
    # No `try` is active at the op: the graph stays whole (one graph, as torch.compile).
    try:
        n = int("3")
    except ValueError:
        n = 0
    return torch.index_select(x, 0, idx.clamp(0, 3)) * n


class _Config:
    flag = None


_CONFIG = _Config()


def _library_wrapper(fn, *args):
    # A library's forward wrapper (transformers' output capturing, config overrides): state set
    # before, restored in `finally`, with a branch in the `finally` body.
    _CONFIG.flag = "on"
    try:
        out = fn(*args)
    finally:
        if _CONFIG.flag is not None:
            _CONFIG.flag = None
        else:
            del _CONFIG.flag
    return out


@case(_idx([0, 1], [2, 3]))
def value_checked_op_under_a_library_finally(x, idx):
    # A `finally` clause re-raises and catches nothing: the graph stays whole (one graph, as
    # torch.compile), and the flag the wrapper sets and resets matches eager's.
    def body(x, idx):
        return torch.gather(x * 2, 0, idx.view(-1, 1).expand(-1, 3)) + 1

    return _library_wrapper(body, x, idx), _CONFIG.flag


@case(_idx([0, 1], [0, 7]), raises=True)
def value_checked_op_error_through_a_finally(x, idx):
    # With an index out of range the error reaches the caller with eager's type and message.
    def body(x, idx):
        return torch.index_select(x * 2, 0, idx) + 1

    return _library_wrapper(body, x, idx)


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


def _rec_to_limit():
    # Recurses as deep as the limit allows from here: the margin found is the number of levels
    # spent below this frame besides the Python frames `_depth` counts (C calls).
    for margin in range(40):
        try:
            return _rec(sys.getrecursionlimit() - _depth() - margin), margin
        except RecursionError:
            pass
    return None


@case(x34, child=True, xfail_tc=TC_DIFFERS)
def recursion_at_limit_after_breaks(x):
    # The compiled call itself is a C call, a level eager does not spend, given back
    # (tracer/src/recursion.rs); at each graph break the transformed frame returns before its
    # resume function runs (resume::TailCall), so the frame chain that `_depth` counts and the
    # recursion budget are eager's.
    y = x + 1
    print("graph break")
    y = y * 2
    print("and another")
    return y, _rec_to_limit()


class SmallNet(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.lin = nn.Linear(d, d)

    def forward(self, x):
        return self.lin(x)


# Compiling the class itself, as ``torchferro.compile(SmallNet)(4)``: the result is a module.
register("compile_a_class", SmallNet, lambda r: (4,))
