"""A trace that raises what it takes for the program's own error runs the frame eagerly so the
user sees the real error. When the eager run then returns normally, the trace was wrong (a
torchferro bug, as resnet's `out += identity` under autocast was in session 23): the code is
given up with a warning, not traced again on every call (which had made a resnet50 step 8x
slower than eager, silently). A real error leaves the code compilable."""

from __future__ import annotations

import logging

import pytest
import torch

import torchferro
import torchferro._amp as amp


def _region(x, y):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        h = x @ y
        h += x
        return h.float().sum()


def test_a_wrong_traced_error_gives_the_code_up_once(monkeypatch, caplog):
    real = amp.infer
    runs = []

    def infer(fn, method, *rest):
        runs.append(method or getattr(fn, "__name__", "?"))
        if runs[-1] in ("iadd", "__iadd__"):
            raise RuntimeError("a stand-in for an inference the trace got wrong")
        return real(fn, method, *rest)

    monkeypatch.setattr(amp, "infer", infer)
    torchferro.compiler.reset()
    x = torch.randn(4, 4)
    compiled = torchferro.compile(_region)
    with caplog.at_level(logging.WARNING, logger="torchferro"):
        got = [compiled(x, x) for _ in range(3)]
    want = _region(x, x)
    assert all(torch.equal(g, want) for g in got)
    # Traced once (the matmul and the add), then never again.
    assert runs == ["matmul", "iadd"] or runs == ["matmul", "__iadd__"], runs
    state = torchferro._C.cache_entries(_region.__code__)[0]
    assert state.startswith("eager: tracing _region"), state
    assert "a stand-in for an inference the trace got wrong" in state
    assert "but the function ran without it: a torchferro bug" in state
    warned = [r for r in caplog.records if "torchferro bug" in r.getMessage()]
    assert len(warned) == 1


def _reshape(x):
    return x.view(3, -1) * 2


def test_a_real_error_is_raised_and_the_code_stays_compilable():
    torchferro.compiler.reset()
    compiled = torchferro.compile(_reshape)
    with pytest.raises(RuntimeError, match="invalid for input of size 8"):
        compiled(torch.randn(8))
    x = torch.randn(9)
    assert torch.equal(compiled(x), _reshape(x))
    state, entries = torchferro._C.cache_entries(_reshape.__code__)
    assert state == "normal" and len(entries) == 1
