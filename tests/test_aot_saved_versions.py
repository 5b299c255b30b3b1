"""Session 29 (hunt29): writes between a compiled training call and its ``.backward()``.

Eager's autograd checks the version counter of every tensor a backward saved: a caller that
writes a returned ``tanh``/``exp``/``sigmoid``/``relu`` output (those save their result) or an
input a product saved, and then calls ``.backward()``, gets "one of the variables needed for
gradient computation has been modified by an inplace operation". The compiled backward saves
what the partition chose (``tanh(h)`` is recomputed from ``h``), so it gave a gradient of the
values at the call instead of raising; and where it recomputed from an input eager does not save
(``exp(x)`` of a leaf ``x``), a write to that input made it raise where eager trains on. The
tensors eager saves are now checked (``autodiff::watch``) and the partition never recomputes
from an input eager does not save. The generator below draws op x what the graph returns x
which tensor the caller writes, and checks that we raise exactly when eager raises and give
eager's gradients otherwise."""

from __future__ import annotations

import warnings

import pytest
import torch
import torch.nn.functional as F
import torchferro
from hypothesis import given, settings
from hypothesis import strategies as st

warnings.filterwarnings("ignore", category=UserWarning)

#: Ops saving their result (exp, sigmoid, tanh, relu, sqrt, softmax), their input (sin, log, a
#: product with itself) or nothing (a scalar product, an add).
OPS = {
    "exp": torch.exp,
    "sigmoid": torch.sigmoid,
    "tanh": torch.tanh,
    "relu": torch.relu,
    "sqrt": lambda t: (t.abs() + 1).sqrt(),
    "softmax": lambda t: t.softmax(-1),
    "sin": torch.sin,
    "log": lambda t: (t.abs() + 1).log(),
    "square": lambda t: t * t,
    "scale": lambda t: t * 2,
    "shift": lambda t: t + 1,
}
#: What the op is applied to: the leaf input, a product of the inputs (saves both), a scaled
#: input (saves nothing of it), a transposed input.
PRE = {
    "x": lambda x, w: x,
    "x*w": lambda x, w: x * w,
    "x*2": lambda x, w: x * 2,
    "x.t()": lambda x, w: x.t() @ w,
}
#: What the compiled function returns.
RET = {
    "y": lambda y, x: (y,),
    "y.reshape": lambda y, x: (y.reshape(-1),),
    "y[0]": lambda y, x: (y[0],),
    "y.sum()": lambda y, x: (y.sum(),),
    "y, x.view": lambda y, x: (y, x.view(-1)),
}
#: Which tensor the caller writes (under ``no_grad``) before ``.backward()``.
WRITES = ("first output", "last output", "x", "w", "nothing")


def _run(compiled: bool, op: str, pre: str, ret: str, write: str):
    torch.manual_seed(0)
    x = torch.randn(3, 3, requires_grad=True)
    w = torch.randn(3, 3, requires_grad=True)

    def f(x, w):
        return RET[ret](OPS[op](PRE[pre](x, w)), x)

    torchferro.compiler.reset()
    outs = (torchferro.compile(f) if compiled else f)(x, w)
    with torch.no_grad():
        target = {
            "first output": outs[0],
            "last output": outs[-1],
            "x": x,
            "w": w,
            "nothing": None,
        }[write]
        if target is not None:
            target.mul_(3)
    try:
        sum(o.sum() for o in outs if o.requires_grad).backward()
    except RuntimeError as e:
        assert "modified by an inplace operation" in str(e), str(e)
        return "raised", None
    return "trained", (x.grad, w.grad)


def _check(op, pre, ret, write):
    want, grads_e = _run(False, op, pre, ret, write)
    got, grads_c = _run(True, op, pre, ret, write)
    assert got == want, f"{op} of {pre}, returned {ret}, {write} written: eager {want}"
    if want == "trained":
        for a, b in zip(grads_c, grads_e, strict=True):
            assert (a is None) == (b is None)
            if a is not None:
                torch.testing.assert_close(a, b)


@pytest.mark.parametrize(
    "op,pre,ret,write",
    [
        # Eager raises; we gave a gradient of the values at the call (the backward recomputed
        # the output from the op's input).
        ("tanh", "x*w", "y", "first output"),
        ("exp", "x*w", "y.reshape", "first output"),
        ("sigmoid", "x", "y[0]", "first output"),
        ("relu", "x.t()", "y", "first output"),
        # Eager trains; we raised (the backward recomputed exp(x) from the written x).
        ("exp", "x", "y", "x"),
        ("exp", "x", "y.sum()", "x"),
        # Unchanged: raise where eager saved the written input, train where nothing was saved.
        ("sin", "x*w", "y.sum()", "w"),
        ("scale", "x*w", "y", "first output"),
    ],
)
def test_writes_before_backward_raise_as_eager(op, pre, ret, write):
    _check(op, pre, ret, write)


@settings(max_examples=25, deadline=None, derandomize=True)
@given(
    st.sampled_from(sorted(OPS)),
    st.sampled_from(sorted(PRE)),
    st.sampled_from(sorted(RET)),
    st.sampled_from(WRITES),
)
def test_generated_writes_before_backward(op, pre, ret, write):
    _check(op, pre, ret, write)


def test_written_logits_raise_rather_than_a_wrong_gradient():
    """GPT-2's loss and logits: the written-out cross entropy's backward reads the logits
    (eager's reads its own ``log_softmax`` result, so eager trains on after a write to the
    logits). Before, the backward read the written logits: a silent wrong gradient. Now the
    write is caught at ``.backward()`` (a documented difference from eager: an error, never
    another gradient); without a write the gradient is eager's."""
    B, T, D, V = 2, 4, 8, 16

    def fn(h, w, t):
        logits = F.linear(h, w)
        return F.cross_entropy(logits.float().view(-1, V), t), logits

    torch.manual_seed(0)
    h = torch.randn(B, T, D)
    w = torch.randn(V, D, requires_grad=True)
    t = torch.randint(0, V, (B * T,))
    loss, logits = fn(h, w, t)
    loss.backward()
    want = w.grad
    torchferro.compiler.reset()
    compiled = torchferro.compile(fn)
    for write in (False, True):
        w.grad = None
        loss, logits = compiled(h, w, t)
        if write:
            with torch.no_grad():
                logits.mul_(2)
            with pytest.raises(RuntimeError, match="modified by an inplace operation"):
                loss.backward()
        else:
            loss.backward()
            torch.testing.assert_close(w.grad, want)


def test_symbolic_size_graphs_check_the_same_versions():
    """A graph with symbolic sizes builds its parts per size assignment through the same
    derivation: a written ``tanh`` output raises at every size, as eager's does."""
    w = torch.randn(3, requires_grad=True)
    torchferro.compiler.reset()
    compiled = torchferro.compile(lambda x: torch.tanh(x * w), dynamic=True)
    for n in (4, 6, 9):
        y = compiled(torch.randn(n, 3))
        with torch.no_grad():
            y.mul_(2)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.sum().backward()
