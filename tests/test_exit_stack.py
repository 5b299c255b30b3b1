"""``contextlib.ExitStack`` traced (session 17): the cases in
``tests/differential/cases_user_code.py`` run it inside one frame; these check a stack that
escapes the frame unclosed (rebuilt after the graph with its callbacks, the callback wrapper's
``__wrapped__`` included) and a graph break inside its ``with`` block."""

from __future__ import annotations

import contextlib

import torch
import torch._dynamo

import torchferro
import torchferro.compiler
from programs.counting import Count

LOG = []


class Logged:
    def __init__(self, k):
        self.k = k

    def __enter__(self):
        LOG.append(("enter", self.k))
        return self.k

    def __exit__(self, et, e, tb):
        LOG.append(("exit", self.k))
        return False


def escapes(x):
    stack = contextlib.ExitStack()
    stack.callback(LOG.append, "closed later")
    return x + 1, stack


def test_a_stack_that_escapes_unclosed_keeps_its_callbacks():
    torch._dynamo.reset()
    torchferro.compiler.reset()
    tc, fc = Count(), Count()
    x = torch.randn(3)
    for compiled in (
        torch.compile(escapes, backend=tc),
        torchferro.compile(escapes, backend=fc),
    ):
        LOG.clear()
        y, stack = compiled(x)
        torch.testing.assert_close(y, x + 1)
        assert LOG == []
        # The rebuilt callback wrapper carries the attribute the trace set on it.
        [(_, wrapper)] = list(stack._exit_callbacks)
        assert wrapper.__wrapped__ == LOG.append
        stack.close()
        assert LOG == ["closed later"]
    torch._dynamo.reset()
    assert tc.n == fc.n == 1


def broken(x):
    with contextlib.ExitStack() as stack:
        a = stack.enter_context(Logged(1))
        stack.callback(LOG.append, "callback")
        y = x * a
        print("inside the stack")
        y = y + 1
    return y * 2


def test_a_break_inside_the_with_block_keeps_eager_values_and_exit_order(capsys):
    x = torch.randn(3)
    LOG.clear()
    want = broken(x)
    want_log = list(LOG)
    torchferro.compiler.reset()
    LOG.clear()
    got = torchferro.compile(broken, backend=Count())(x)
    torch.testing.assert_close(got, want)
    assert LOG == want_log == [("enter", 1), "callback", ("exit", 1)]
    assert capsys.readouterr().out == "inside the stack\n" * 2
