"""What the user's frame shows under torchferro: `locals()`, `vars()`, frame objects and the
variables of resumed frames hold the user's variables only (never ``___graph_out`` or
``___stack0``), unbound locals stay unbound after a graph break, dict views stay live, and
non-strided tensors are in test_probes.py (their crash was a SIGSEGV). Every case is compared with eager (and graph counts with
``torch.compile(backend="eager")`` where a graph is expected)."""

from __future__ import annotations

import inspect
import sys

import pytest
import torch
import torchferro
from conftest import CountingBackend


def _both(fn, *args):
    """(eager result, compiled result) on fresh copies of `args`."""
    eager = fn(*[a.clone() if isinstance(a, torch.Tensor) else a for a in args])
    compiled = torchferro.compile(fn)(
        *[a.clone() if isinstance(a, torch.Tensor) else a for a in args]
    )
    return eager, compiled


def _same(a, b):
    if isinstance(a, torch.Tensor):
        assert isinstance(b, torch.Tensor)
        torch.testing.assert_close(a, b, rtol=0, atol=0)
    elif isinstance(a, (list, tuple)):
        assert type(a) is type(b) and len(a) == len(b), (a, b)
        for x, y in zip(a, b):
            _same(x, y)
    elif isinstance(a, dict):
        assert list(a) == list(b), (a, b)
        for k in a:
            _same(a[k], b[k])
    else:
        assert type(a) is type(b) and a == b, (a, b)


def _locals_keys(x):
    a = x + 1
    return sorted(locals().keys()), a * 2


def _format_locals(x):
    a = x + 1
    return "{a}".format(**locals())


def _callee(x, a):
    return x * a.sum()


def _call_with_locals(x):
    a = x + 1
    return _callee(**locals())


def _vars_in_closure(x):
    z = 3

    def inner(y):
        return sorted(locals().items(), key=lambda kv: kv[0]), y + z

    return inner(x)


def _locals_after_break(x):
    b = 5
    del b
    print("break")
    return sorted(locals()), x + 1


def _locals_with_cell(x):
    c = x * 2

    def g():
        return c + 1

    return sorted(locals()), g()


@pytest.mark.parametrize(
    "fn",
    [
        _locals_keys,
        _format_locals,
        _call_with_locals,
        _vars_in_closure,
        _locals_after_break,
        _locals_with_cell,
    ],
)
def test_locals_hold_the_users_variables_only(fn):
    eager, compiled = _both(fn, torch.ones(3))
    _same(eager, compiled)


def test_locals_is_traced_into_one_graph():
    def f(x):
        a = x + 1
        d = locals()
        return d["a"] * 2, len(d)

    backend = CountingBackend()
    eager = f(torch.ones(2))
    got = torchferro.compile(f, backend=backend)(torch.ones(2))
    _same(eager, got)
    # One graph, no break. (torch.compile 2.11 is no oracle here: its resumed frame's
    # `locals()` lacks `a` and holds its own temporaries, so it raises KeyError.)
    assert backend.count == 1


def test_unbound_local_stays_unbound_after_a_graph_break():
    def f(x):
        if x.sum() > 100:  # data-dependent: a graph break
            y = 1
        try:
            return y
        except UnboundLocalError:
            return "unbound"

    eager, compiled = _both(f, torch.ones(2))
    assert eager == compiled == "unbound"


def test_deleted_argument_is_unbound():
    def f(x, n):
        del n
        try:
            return n  # noqa: F821 (unbound on purpose)
        except UnboundLocalError:
            return x + 1

    eager, compiled = _both(f, torch.ones(2), 3)
    _same(eager, compiled)


def _currentframe_locals(x):
    y = x + 1
    fl = inspect.currentframe().f_locals
    g = sys._getframe().f_locals
    return y * 2, sorted(fl), sorted(g)


def _caller_frame_locals(x):
    y = x + 1
    return y * 2, _peek()


def _peek():
    return sorted(sys._getframe(1).f_locals)


def _eval_locals(x):
    y = x + 1  # noqa: F841 (read by eval)
    return eval("y * 2")


@pytest.mark.parametrize(
    "fn", [_currentframe_locals, _caller_frame_locals, _eval_locals]
)
def test_frame_introspection_sees_eagers_frame(fn):
    eager, compiled = _both(fn, torch.ones(3))
    _same(eager, compiled)


def _raises_after_break(x):
    a = x + 1
    print("break")
    b = a * 2
    return b[5]  # IndexError, raised by the graph of the resumed frame


def _frames_of_error(fn, x):
    """(code name, sorted f_locals names) of each traceback frame below this one."""
    try:
        fn(x)
    except IndexError as e:
        tb = e.__traceback__.tb_next
        out = []
        while tb is not None:
            out.append(sorted(tb.tb_frame.f_locals))
            tb = tb.tb_next
        return out
    raise AssertionError("no IndexError")


def test_frames_of_a_broken_graph_show_user_names_only():
    # The transformed code runs the breaking instruction and tail-calls the resume function;
    # both frames are in tracebacks (post-mortem debuggers, pytest's locals) and must hold the
    # user's variables only, as eager's one frame does.
    eager = _frames_of_error(_raises_after_break, torch.ones(2))
    assert eager == [["a", "b", "x"]]
    compiled = _frames_of_error(torchferro.compile(_raises_after_break), torch.ones(2))
    assert compiled[-1] == ["a", "b", "x"]
    for names in compiled:
        assert all(not n.startswith("___") for n in names), compiled


def _views(x):
    d = {"a": x, "b": 2}
    k = d.keys()
    v = d.values()
    it = d.items()
    d["z"] = 1
    return (
        len(k),
        "z" in k,
        k == {"a", "b", "z"},
        len(v),
        len(it),
        sorted(k),
        ("z", 1) in it,
        x + 1,
        list(k),
    )


def _view_returned(x):
    d = {"a": 1}
    k = d.keys()
    d["q"] = 2
    return k, x * 2


def _view_after_pop(x):
    d = {"a": 1, "b": x}
    it = d.items()
    d.pop("a")
    n = 0
    for key, val in it:
        n += 1
    return n, [kk for kk, _ in it], x - 1


@pytest.mark.parametrize("fn", [_views, _view_returned, _view_after_pop])
def test_dict_views_are_live(fn):
    eager, compiled = _both(fn, torch.ones(2))
    if isinstance(eager, tuple) and type(eager[0]).__name__ == "dict_keys":
        assert type(compiled[0]).__name__ == "dict_keys"
        assert list(eager[0]) == list(compiled[0])
        _same(eager[1:], compiled[1:])
    else:
        _same(eager, compiled)


def test_returned_view_is_a_view_of_the_returned_dict():
    def f(x):
        d = {"a": x}
        k = d.keys()
        return d, k

    d, k = torchferro.compile(f)(torch.ones(2))
    d["new"] = 1
    assert "new" in k


def test_self_holding_list_argument_does_not_crash():
    def f(x, a):
        return x + len(a)

    a = [1]
    a.append(a)
    eager, compiled = _both(f, torch.ones(2), a)
    _same(eager, compiled)


_W = torch.randn(5, 3, requires_grad=True)


def _no_grad_region(x, idx):
    with torch.no_grad():
        y = torch.nn.functional.embedding(idx, _W) * 2
    return y + x


def _autocast_region(x, idx):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        y = torch.nn.functional.embedding(idx, _W) @ _W.T
    return y.float() + x


@pytest.mark.parametrize("backend", ["eager", "inductor"])
@pytest.mark.parametrize("fn", [_no_grad_region, _autocast_region])
def test_modes_restored_after_a_run_time_error_in_a_region(fn, backend):
    # The region's switches are graph nodes; an op raising between them must leave grad mode
    # and autocast as eager's `with` block leaves them.
    cf = torchferro.compile(fn, backend=backend)
    x = torch.ones(2, 5) if fn is _autocast_region else torch.ones(2, 3)
    cf(x, torch.tensor([0, 1]))
    with pytest.raises(IndexError):
        fn(x, torch.tensor([0, 9]))
    assert torch.is_grad_enabled() and not torch.is_autocast_enabled("cpu")
    try:
        with pytest.raises(IndexError):
            cf(x, torch.tensor([0, 9]))
        assert torch.is_grad_enabled()
        assert not torch.is_autocast_enabled("cpu")
    finally:
        torch.set_grad_enabled(True)
        torch.set_autocast_enabled("cpu", False)
