"""Issue 17: failing ops inside compiled training graphs, drawn by hypothesis.

Each program is a small training step (a linear layer and activations on an input that requires
grad, a loss) with one op that fails at run time on the drawn data: an index out of range
(advanced indexing, ``embedding``, ``gather``, ``index_select``, a ``cross_entropy`` target)
or a shape mismatch, placed before, between or after the differentiable ops, optionally inside a
``no_grad`` block. Asserted against eager on the same inputs: the compiled call raises eager's
exception type and message; grad mode afterwards is eager's (restored by the block); the
parameters did not change and have no gradient; and the same compiled function then runs a
valid batch with eager's loss and gradients (nothing left behind by the failed call)."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

import torchferro
from torchferro import _aot


@pytest.fixture(autouse=True)
def _aot_default(monkeypatch):
    monkeypatch.delenv("TORCHFERRO_AOT", raising=False)
    torchferro.compiler.reset()
    _aot.reset()


N, D, V = 6, 5, 10  # batch, width, table rows


def _failing(kind):
    """(op(h, idx, table) -> a term added to ``h`` [N, D]) for each failing-op kind."""
    if kind == "advanced_index":
        return lambda h, idx, table: table[idx]
    if kind == "embedding":
        return lambda h, idx, table: h * F.embedding(idx, table)
    if kind == "gather":
        return lambda h, idx, table: torch.gather(h, 1, idx.unsqueeze(1))
    if kind == "index_select":
        return lambda h, idx, table: table.index_select(0, idx)
    if kind == "shape":
        return lambda h, idx, table: h @ table
    raise AssertionError(kind)


def _program(kind, where, no_grad):
    op = _failing(kind)

    def step(x, w, table, idx, target):
        h = x
        if where == 0:
            h = _apply(op, h, idx, table, no_grad)
        h = torch.tanh(h @ w)
        if where == 1:
            h = _apply(op, h, idx, table, no_grad)
        h = F.gelu(h) * 2
        if where == 2:
            h = _apply(op, h, idx, table, no_grad)
        return F.cross_entropy(h, target)

    return step


def _apply(op, h, idx, table, no_grad):
    """``h`` plus the failing op's term, the term computed under ``no_grad`` if asked (then it
    is a constant of the backward)."""
    if no_grad:
        with torch.no_grad():
            term = op(h, idx, table)
        return h + term
    return h + op(h, idx, table)


def _inputs(seed, bad, kind, ce_target_bad):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(N, D, generator=g)
    w = torch.randn(D, D, generator=g).requires_grad_(True)
    rows = V if kind != "shape" else (D + 1 if bad else D)
    table = torch.randn(rows, D, generator=g).requires_grad_(True)
    idx = torch.randint(0, min(V, D), (N,), generator=g)
    if bad and kind != "shape":
        idx[seed % N] = V + seed % 3  # out of range for every table
    target = torch.randint(0, D, (N,), generator=g)
    if ce_target_bad:
        target[0] = D + 1
    return x, w, table, idx, target


def _outcome(fn, args):
    grad_before = torch.is_grad_enabled()
    try:
        loss = fn(*args)
        loss.backward()
        return ("ok", loss.detach()), torch.is_grad_enabled(), grad_before
    except Exception as e:  # noqa: BLE001 - the exception itself is what is compared
        return (type(e), str(e)), torch.is_grad_enabled(), grad_before


@settings(max_examples=30, deadline=None)
@given(
    kind=st.sampled_from(
        ["advanced_index", "embedding", "gather", "index_select", "shape"]
    ),
    where=st.integers(0, 2),
    no_grad=st.booleans(),
    bad_target=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_failing_op_raises_eagers_error(kind, where, no_grad, bad_target, seed):
    torchferro.compiler.reset()
    _aot.reset()
    fn = _program(kind, where, no_grad)
    compiled = torchferro.compile(fn)
    bad = _inputs(seed, True, kind, bad_target)
    bad_c = [t.detach().clone().requires_grad_(t.requires_grad) for t in bad]
    e_out, e_mode, _ = _outcome(fn, bad)
    c_out, c_mode, _ = _outcome(compiled, bad_c)
    assert e_out[0] != "ok"  # the drawn data must fail in eager
    assert c_out == e_out
    assert c_mode == e_mode is True
    for t in bad_c:
        assert t.grad is None
    # The same compiled function on a valid batch: eager's loss and gradients.
    good = _inputs(seed + 1, False, kind, False)
    good_c = [t.detach().clone().requires_grad_(t.requires_grad) for t in good]
    le = fn(*good)
    lc = compiled(*good_c)
    torch.testing.assert_close(lc, le, rtol=1e-5, atol=1e-6)
    le.backward()
    lc.backward()
    for a, b in zip(good, good_c):
        if a.requires_grad:
            torch.testing.assert_close(b.grad, a.grad, rtol=1e-5, atol=1e-6)
    assert torch.is_grad_enabled()


def test_out_of_range_index_in_compiled_training_graph_is_compiled():
    """The valid call of such a program runs the compiled forward and backward (the error path
    does not push the graph onto torch's autograd)."""
    fn = _program("embedding", 1, False)
    compiled = torchferro.compile(fn)
    bad = _inputs(3, True, "embedding", False)
    with pytest.raises(IndexError, match="index out of range in self"):
        compiled(*bad)
    good = _inputs(4, False, "embedding", False)
    compiled(*good).backward()
    assert _aot.counters["fallback"] == 0, _aot.fallback_reasons
    assert _aot.counters["compiled"] == 1
    assert _aot.counters["backward"] == 1
