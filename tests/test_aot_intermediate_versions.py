"""Session 33: an intermediate eager's backward keeps, written in place later in the same
compiled function (in grad mode or not).

Eager's autograd checks the version of every tensor a backward node saved: ``g =
torch.sigmoid(h)`` saves ``g``; ``g.fill_(1)`` afterwards makes ``.backward()`` raise "modified
by an inplace operation". The functional graph reads each version of a tensor as a value of its
own, so the compiled backward read the value as of the save and trained on (a gradient eager
never gives). Such a graph now runs through torch's autograd, which raises eager's error
(``autodiff::watch::kept_then_overwritten``). An in-place op's own read of the tensor it
writes is no such keep: eager saves the value before the write apart (``h.pow_(2)``,
``h.mul_(w)`` train), and so must we, compiled (no fallback).

The generator draws what produces the intermediate (an op saving its result, its input, both,
or nothing), which tensor is written afterwards (the op's input or result, whole or through a
view) and how (in-place ops reading or not reading the written tensor, whole overwrites,
``no_grad`` and detached writes): we raise exactly when eager raises, give eager's gradients
otherwise, and compile (no fallback) wherever eager trains."""

from __future__ import annotations

import pytest
import torch
import torchferro
from hypothesis import given, settings
from hypothesis import strategies as st
from torchferro import _aot

#: The op applied to ``h = x * 2`` (a fresh intermediate): saving its result (``exp``,
#: ``sigmoid``, ``tanh``, ``relu``), its input (``abs``, ``h * h``), both operands of a
#: product with ``w``, or nothing (a scalar product, ``h`` itself).
OPS = {
    "exp": torch.exp,
    "sigmoid": torch.sigmoid,
    "tanh": torch.tanh,
    "relu": torch.relu,
    "abs": torch.abs,
    "square": lambda h: h * h,
    "times_w": None,  # h * w, below
    "scale": lambda h: h * 3,
    "itself": lambda h: h,
}


def _no_grad(write, *args):
    with torch.no_grad():
        write(*args)


#: In-place writes, in grad mode unless named otherwise.
WRITES = {
    "mul_": lambda t, w: t.mul_(1.5),
    "mul_w": lambda t, w: t.mul_(w[: t.shape[0]] if t.dim() == 2 else w[0]),
    "pow_": lambda t, w: t.pow_(2),
    "sigmoid_": lambda t, w: t.sigmoid_(),
    "add_": lambda t, w: t.add_(1.0),
    "fill_": lambda t, w: t.fill_(0.5),
    "zero_": lambda t, w: t.zero_(),
    "copy_": lambda t, w: t.copy_(torch.ones(())),
    "no_grad_mul_": lambda t, w: _no_grad(t.mul_, 2.0),
    "detached_add_": lambda t, w: t.detach().add_(1.0),
}
#: Which tensor is written: the op's input ``h`` or its result ``y``, whole or one row.
TARGETS = ("h", "y", "h[0]", "y[1:]")


def _program(op, target, write):
    def f(x, w):
        h = x * 2
        y = h * w if op == "times_w" else OPS[op](h)
        t = {"h": h, "y": y, "h[0]": h[0], "y[1:]": y[1:]}[target]
        WRITES[write](t, w)
        lin = torch.linspace(-1, 1, 9).view(3, 3)
        return (y * lin).sum() + (h * lin.t()).sum()

    return f


def _outcome(f, compiled, backend):
    torch.manual_seed(0)
    x = torch.randn(3, 3, requires_grad=True)
    w = torch.randn(3, 3, requires_grad=True)
    g = f
    if compiled:
        torchferro.compiler.reset()
        _aot.reset()
        g = torchferro.compile(f, backend=backend)
    try:
        loss = g(x, w)
        loss.backward()
    except RuntimeError as e:
        msg = str(e)
        if "modified by an inplace operation" in msg:
            return "raised", None
        return "raised: " + msg.split(". ")[0], None
    return "trained", (loss.detach(), x.grad, w.grad)


def _check(backend, op, target, write):
    f = _program(op, target, write)
    want, values_e = _outcome(f, False, backend)
    got, values_c = _outcome(f, True, backend)
    what = (op, target, write)
    assert got == want, f"{what}: eager {want}"
    if want != "trained":
        return
    for a, b in zip(values_c, values_e, strict=True):
        assert (a is None) == (b is None), what
        if a is not None:
            torch.testing.assert_close(a, b, msg=lambda m: f"{what}: {m}")
    assert _aot.counters["fallback"] == 0, (what, _aot.fallback_reasons)


@pytest.mark.parametrize("backend", ["inductor", "aot_eager"])
@pytest.mark.parametrize(
    "op,target,write",
    [
        # Eager raises; the compiled backward trained on the value as of the save.
        ("sigmoid", "y", "fill_"),
        ("sigmoid", "y", "mul_"),
        ("exp", "y[1:]", "zero_"),
        ("tanh", "y", "copy_"),
        ("abs", "h", "add_"),
        ("square", "h[0]", "fill_"),
        ("times_w", "h", "mul_"),
        ("relu", "y", "no_grad_mul_"),
        ("exp", "y", "detached_add_"),
        # Eager trains: the write's own read of the tensor is kept apart, nothing else kept.
        ("scale", "h", "pow_"),
        ("scale", "h", "mul_w"),
        ("itself", "h[0]", "pow_"),
        ("scale", "y", "sigmoid_"),
        ("scale", "h", "fill_"),
        ("relu", "h", "zero_"),
        ("exp", "h", "copy_"),
    ],
)
def test_an_intermediate_kept_then_written_raises_as_eager(backend, op, target, write):
    _check(backend, op, target, write)


@settings(max_examples=80, deadline=None, derandomize=True)
@given(
    st.sampled_from(["inductor", "aot_eager"]),
    st.sampled_from(sorted(OPS)),
    st.sampled_from(TARGETS),
    st.sampled_from(sorted(WRITES)),
)
def test_generated_intermediates_written_after_a_keep(backend, op, target, write):
    _check(backend, op, target, write)


class _TwoLayers(torch.nn.Module):
    """``fc`` then ``out``; ``scale`` (a buffer) multiplies between them and is rescaled in
    place after the product kept it (``kind`` "buffer"), or the product's other factor is a
    ``sigmoid`` whose result is refilled after the product kept it ("intermediate")."""

    def __init__(self, kind):
        super().__init__()
        self.kind = kind
        self.fc = torch.nn.Linear(4, 4)
        self.out = torch.nn.Linear(4, 2)
        self.register_buffer("scale", torch.ones(4))

    def forward(self, x):
        if self.kind == "buffer":
            h = self.out(self.fc(x) * self.scale)
            with torch.no_grad():
                self.scale.mul_(1.1)
        else:
            g = torch.sigmoid(self.fc(x))
            h = self.out(g * self.fc.weight[0])
            g.fill_(1.0)
        return (h * h).mean()


@pytest.mark.parametrize("backend", ["inductor", "aot_eager"])
@pytest.mark.parametrize("kind", ["buffer", "intermediate"])
def test_gradients_accumulated_before_the_version_error_are_eagers(backend, kind):
    # Eager's engine runs `out`'s backward (accumulating its gradients) before the node that
    # kept the written tensor raises; the compiled graph was one autograd node that raised
    # before accumulating anything (session 32, `buffer`). A backward certain to raise runs
    # through torch's autograd now.
    torch.manual_seed(0)
    model = _TwoLayers(kind)
    x = torch.randn(3, 4)
    grads = []
    for compiled in (False, True):
        m = _TwoLayers(kind)
        m.load_state_dict(model.state_dict())
        f = m
        if compiled:
            torchferro.compiler.reset()
            f = torchferro.compile(m, backend=backend)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            f(x).backward()
        grads.append({k: p.grad for k, p in m.named_parameters()})
    want, got = grads
    assert (
        want["out.weight"] is not None
    )  # the premise: eager accumulated before raising
    for k in want:
        assert (got[k] is None) == (want[k] is None), k
        if want[k] is not None:
            torch.testing.assert_close(got[k], want[k])
