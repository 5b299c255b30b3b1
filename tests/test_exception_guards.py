"""An exception a compiled caller catches after a graph break in the call reaches the handler's
resume function as an argument, a new object on every raise. It is guarded by its type (and,
where the handler reads its text, by its `args`), not by identity: an identity guard recompiled
the handler for every exception until the recompile limit."""

from __future__ import annotations

import torch
import torchferro

from conftest import CountingBackend


class Loud(ValueError):
    def __str__(self):
        return f"loud {self.args[0]}!"


def _callee(x, n):
    y = x * 2
    torch._dynamo.graph_break()
    if n == 1:
        raise ValueError(f"bad {n}")
    if n == 2:
        raise ValueError("bad two")
    if n == 3:
        raise Loud(n)
    return y.sin()


# The callee runs eagerly, so the break lies at the frame's own call inside `try` (where a break
# inside an inlined call would give the frame up, as torch.compile does: tracer/src/compile.rs).
_callee_eager = torch._dynamo.disable(_callee)


def caught(x, n):
    try:
        return _callee_eager(x, n) * 2, ""
    except ValueError:
        return x - 1, "caught"


def caught_text(x, n):
    try:
        return _callee_eager(x, n) * 2, ""
    except ValueError as e:
        return x - 1, f"{e}|{str(e)}|{e!r}"


def caught_reraised(x, n):
    try:
        return _callee_eager(x, n) * 2
    except ValueError as e:
        if n == 2:
            raise
        raise e


def _run(fn, ns):
    """Eager and compiled results of ``fn`` over ``ns`` (an exception as its type and text),
    and the number of graphs compiled."""
    torchferro.compiler.reset()
    backend = CountingBackend()
    compiled = torchferro.compile(fn, backend=backend)
    for i, n in enumerate(ns):
        x = torch.randn(3, 4, generator=torch.Generator().manual_seed(i))
        outs = []
        for f in (fn, compiled):
            try:
                outs.append(f(x, n))
            except ValueError as e:
                outs.append((type(e), str(e)))
        expected, got = outs
        if isinstance(expected, tuple) and isinstance(expected[0], torch.Tensor):
            torch.testing.assert_close(got[0], expected[0])
            assert got[1:] == expected[1:]
        elif isinstance(expected, torch.Tensor):
            torch.testing.assert_close(got, expected)
        else:
            assert got == expected
    torchferro.compiler.reset()
    return backend.count


def test_handler_not_recompiled_per_exception():
    # The handler's `x - 1`: once, over five raises.
    assert _run(caught, [1, 1, 2, 1, 2]) == 1


def test_handler_reading_the_text_guards_the_args():
    # One handler graph per distinct message ("bad 1", "bad two"), none per exception object.
    assert _run(caught_text, [1, 1, 2, 2, 1]) == 2


def test_handler_reading_an_overridden_text():
    # `Loud.__str__` is the class's own: the text is the object's, guarded by identity (a
    # recompile per raise), never a stale message.
    _run(caught_text, [3, 3, 1, 3])


def test_reraised_exception_is_the_same_object():
    _run(caught_reraised, [1, 2, 1, 0, 2])
