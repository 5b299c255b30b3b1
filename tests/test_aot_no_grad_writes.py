"""Issue 17: in-place writes under ``no_grad`` to tensors that require grad, inside graphs
compiled forward and backward (``fx/src/autodiff/writes.rs``).

Eager changes the written tensor's value but not its autograd history: later uses read the new
value and still differentiate into the tensor; a parameter stays a leaf; the version counter
moves once per write; a value saved for backward and overwritten afterwards makes
``.backward()`` raise. Each case runs eager and compiled on the same inputs and compares
values, gradients, ``is_leaf``/``grad_fn`` presence, version counters, and that the compiled
path ran with 0 fallbacks (or, for the version-counter error, that eager's error is raised)."""

from __future__ import annotations

import copy

import pytest
import torch
from torch import nn

import torchferro
from aot_oracle import torch_compile_graphs
from torchferro import _aot


@pytest.fixture(autouse=True)
def _aot_default(monkeypatch):
    monkeypatch.delenv("TORCHFERRO_AOT", raising=False)
    torchferro.compiler.reset()
    _aot.reset()


def _leaf(t):
    return t.detach().clone().requires_grad_(True)


def _compare(fn, make_inputs, compiled_path=True):
    """Runs ``fn`` eager and compiled on fresh copies of ``make_inputs()``; compares outputs,
    the inputs' values after the call, versions, leaf status and gradients."""
    runs = []
    for compiled in (False, True):
        torchferro.compiler.reset()
        _aot.reset()
        torch.manual_seed(0)
        inputs = make_inputs()
        f = torchferro.compile(fn) if compiled else fn
        out = f(*inputs)
        versions = [t._version for t in inputs]
        leaves = [(t.is_leaf, t.grad_fn is None) for t in inputs]
        values = [t.detach().clone() for t in inputs]
        out.sum().backward()
        grads = [None if not t.is_leaf else t.grad for t in inputs]
        runs.append((out.detach(), versions, leaves, values, grads))
        if compiled:
            counters = dict(_aot.counters)
    (oe, ve, le, xe, ge), (oc, vc, lc, xc, gc) = runs
    torch.testing.assert_close(oc, oe)
    assert vc == ve
    assert lc == le
    for a, b in zip(xe, xc):
        torch.testing.assert_close(b, a)
    for a, b in zip(ge, gc):
        if a is None:
            assert b is None
        else:
            torch.testing.assert_close(b, a)
    if compiled_path:
        assert counters["fallback"] == 0, _aot.fallback_reasons
        assert counters["compiled"] == 1
        assert counters["backward"] == 1
    return counters


def _w():
    return _leaf(torch.randn(4, 3, dtype=torch.float64))


def _x():
    return torch.randn(5, 3, dtype=torch.float64)


def test_scale_parameter_then_use():
    """``w.mul_(0.9)`` under no_grad, then ``x @ w.t()``: the gradient reaches ``w``."""

    def fn(x, w):
        with torch.no_grad():
            w.mul_(0.9)
        return x @ w.t()

    _compare(fn, lambda: (_x(), _w()))


def test_weight_norm_style():
    """Rows renormalized in place under no_grad (max-norm constraint), then used twice."""

    def fn(x, w):
        with torch.no_grad():
            w.div_(w.norm(dim=1, keepdim=True))
        h = torch.tanh(x @ w.t())
        return h * w.sum()

    _compare(fn, lambda: (_x(), _w()))


def test_copy_into_parameter():
    """``p.copy_(q)`` under no_grad (a parameter reset from another tensor), then used."""

    def fn(x, w, q):
        with torch.no_grad():
            w.copy_(q * 2)
        return (x @ w.t()).relu()

    _compare(fn, lambda: (_x(), _w(), _leaf(torch.randn(4, 3, dtype=torch.float64))))


def test_several_writes_and_clamp():
    """Two writes (version +2), one reading another parameter."""

    def fn(x, w, b):
        with torch.no_grad():
            w.clamp_(-0.5, 0.5)
            w.add_(b.unsqueeze(1))
        return x @ w.t() + b

    _compare(fn, lambda: (_x(), _w(), _leaf(torch.randn(4, dtype=torch.float64))))


def test_write_through_a_view():
    """``w[:, 0] = 0`` and ``w[1].zero_()`` under no_grad: the whole ``w`` still gets a
    gradient (its history is unchanged), including the written positions."""

    def fn(x, w):
        with torch.no_grad():
            w[:, 0] = 0
            w[1].zero_()
        return (x @ w.t()) ** 2

    _compare(fn, lambda: (_x(), _w()))


def test_intermediate_written_under_no_grad():
    """An intermediate that requires grad, clamped in place under no_grad: the value is
    clamped, the gradient passes as if it were not (straight-through), as in eager."""

    def fn(x):
        h = x * 2
        with torch.no_grad():
            h.clamp_(-1, 1)
        return h * 3 + h.exp()

    _compare(fn, lambda: (_leaf(torch.randn(6, dtype=torch.float64) * 2),))


def test_non_leaf_input_keeps_its_history():
    """A non-leaf input written under no_grad keeps its ``grad_fn`` and gives its graph the
    gradient through the later uses."""

    def run(compiled):
        torchferro.compiler.reset()
        _aot.reset()
        torch.manual_seed(0)
        a = _leaf(torch.randn(4, dtype=torch.float64))
        w = _leaf(torch.randn(4, dtype=torch.float64))
        h = a * 2

        def fn(h, w):
            with torch.no_grad():
                h.add_(1)
            return (h * w).sum()

        f = torchferro.compile(fn) if compiled else fn
        out = f(h, w)
        fn_name = type(h.grad_fn).__name__
        out.backward()
        return out.detach(), h._version, fn_name, a.grad, w.grad

    e, c = run(False), run(True)
    torch.testing.assert_close(c[0], e[0])
    assert c[1:3] == e[1:3]
    torch.testing.assert_close(c[3], e[3])
    torch.testing.assert_close(c[4], e[4])
    assert _aot.counters["fallback"] == 0, _aot.fallback_reasons
    assert _aot.counters["compiled"] == 1


def test_overwritten_saved_value_raises_eagers_error():
    """A value saved for backward (``sigmoid``'s result) and then written under no_grad:
    eager raises at ``.backward()``; so does the compiled function (the graph runs through
    torch's autograd, with the reason logged)."""

    def fn(x):
        y = x.sigmoid()
        with torch.no_grad():
            y.mul_(2)
        return y * 3

    msgs = []
    for compiled in (False, True):
        torchferro.compiler.reset()
        _aot.reset()
        x = _leaf(torch.randn(5, dtype=torch.float64))
        out = (torchferro.compile(fn) if compiled else fn)(x)
        with pytest.raises(RuntimeError) as e:
            out.sum().backward()
        msgs.append(str(e.value))
    assert msgs[1] == msgs[0]
    assert "modified by an inplace operation" in msgs[0]
    assert _aot.counters["fallback"] == 1
    assert "no_grad write" in _aot.fallback_reasons[0]


class MaxNormNet(nn.Module):
    """A max-norm constraint applied to the first layer at each forward, under no_grad."""

    def __init__(self):
        super().__init__()
        self.l1 = nn.Linear(8, 16)
        self.l2 = nn.Linear(16, 3)

    def forward(self, x):
        with torch.no_grad():
            n = self.l1.weight.norm(dim=1, keepdim=True).clamp(min=1.0)
            self.l1.weight.div_(n)
        return self.l2(torch.relu(self.l1(x)))


@pytest.mark.parametrize("opt", ["sgd", "adamw"])
def test_training_equivalence_5_steps(opt):
    """5 steps with the constraint in the forward: losses and parameters equal eager's at each
    step, one compiled graph as torch.compile, 0 fallbacks."""
    torch.manual_seed(0)
    eager = MaxNormNet()
    comp = copy.deepcopy(eager)
    compiled = torchferro.compile(comp)

    def make(m):
        if opt == "sgd":
            return torch.optim.SGD(m.parameters(), lr=0.5, momentum=0.9)
        return torch.optim.AdamW(m.parameters(), lr=0.05)

    oe, oc = make(eager), make(comp)
    g = torch.Generator().manual_seed(1)
    # A deep copy starts its parameters at version 0: compare how far each step moved them.
    v0 = [
        (pe._version, pc._version)
        for pe, pc in zip(eager.parameters(), comp.parameters())
    ]
    for step in range(5):
        x = torch.randn(10, 8, generator=g)
        t = torch.randint(0, 3, (10,), generator=g)
        le = nn.functional.cross_entropy(eager(x), t)
        lc = nn.functional.cross_entropy(compiled(x), t)
        torch.testing.assert_close(lc, le)
        for o, loss in ((oe, le), (oc, lc)):
            o.zero_grad()
            loss.backward()
            o.step()
        for ((n, pe), pc), (ve, vc) in zip(
            zip(eager.named_parameters(), comp.parameters()), v0
        ):
            torch.testing.assert_close(pc, pe, msg=f"step {step}: {n}")
            assert pc._version - vc == pe._version - ve, (step, n)
    oracle = torch_compile_graphs(copy.deepcopy(eager), torch.randn(2, 8))
    assert _aot.counters["fallback"] == 0, _aot.fallback_reasons
    assert _aot.counters["compiled"] == oracle == 1
    assert _aot.counters["backward"] == 5


def test_out_write_under_no_grad_falls_back_with_reason():
    """An ``out=`` write under no_grad to a tensor that requires grad: the functional twin does
    not name the written tensor, so the graph runs through torch's autograd (eager's values
    and gradients), with the reason logged."""

    def fn(x, w):
        h = x * w
        with torch.no_grad():
            torch.mul(x, 2, out=h)
        return (h * w).sum()

    counters = _compare(
        fn,
        lambda: (
            _leaf(torch.randn(5, dtype=torch.float64)),
            _leaf(torch.randn(5, dtype=torch.float64)),
        ),
        compiled_path=False,
    )
    assert counters["compiled"] == 0
    assert counters["fallback"] == 1
    assert (
        "under no_grad writes (out=) a tensor that requires grad"
        in _aot.fallback_reasons[0]
    )
