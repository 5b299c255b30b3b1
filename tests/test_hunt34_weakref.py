"""Session 34 hunt: a ``weakref.ref`` read from the frame and called in traced code.

``nn.RNNBase.forward`` (LSTM, GRU, RNN) starts with ``_update_flat_weights``, whose
``_weights_have_changed`` calls each of ``self._flat_weight_refs`` and compares the referent
with the parameter by ``is``; user modules keep a weak reference to a parent the same way.
Calling the weakref broke the graph ("call to "), so every ``nn.LSTM`` cost a graph more than
torch.compile. The call is now a source step (``source::Step::WeakRefCall``): the referent is
wrapped as any value read from the frame and guarded through the call, so a parameter
replaced after compiling, or a referent that died, recompiles. (A child module's weak
reference to its parent is in ``differential/cases_hunt34.py``.)"""

from __future__ import annotations

import gc
import weakref

import torch
from torch import nn

import torchferro
from aot_oracle import torch_compile_graphs
from conftest import CountingBackend


def _run(fn, x):
    """``fn(x)`` compiled (torchferro's eager backend): the value and the number of graphs."""
    backend = CountingBackend()
    torchferro.compiler.reset()
    try:
        out = torchferro.compile(fn, backend=backend)(x)
    finally:
        torchferro.compiler.reset()
    return out, backend.count


def test_lstm_is_one_graph():
    torch.manual_seed(0)
    m = nn.LSTM(4, 3, num_layers=2, batch_first=True, bidirectional=True)
    x = torch.randn(2, 5, 4)

    def fn(x):
        h0 = torch.zeros(4, 2, 3)
        return m(x, (h0, h0))[0].sum(1)

    out, graphs = _run(fn, x)
    torch.testing.assert_close(out, fn(x))
    # torch.compile gives the frame up (0 graphs: it runs eagerly).
    assert graphs == 1 and torch_compile_graphs(fn, x) <= 1


def test_lstm_parameter_replaced_after_compile():
    """A parameter replaced (the weakref now refers to the old one) and then
    ``functional_call`` and an in-place update: each call gives eager's value (the replaced
    parameter makes ``_init_flat_weights`` run again), in two cache entries."""

    def run(compiled):
        torch.manual_seed(0)
        m = nn.LSTM(4, 3, batch_first=True)
        x = torch.randn(2, 5, 4)

        def fn(x):
            return m(x)[0].sum()

        f = torchferro.compile(fn) if compiled else fn
        outs = [f(x)]
        m.weight_hh_l0 = nn.Parameter(m.weight_hh_l0.detach() * 2)
        outs += [f(x), f(x)]
        p = {k: v.detach() + 1 for k, v in m.named_parameters()}
        outs.append(torch.func.functional_call(m, p, (x,))[0].sum())
        outs.append(f(x))
        with torch.no_grad():
            m.weight_ih_l0.mul_(0.5)
        outs.append(f(x))
        entries = len(torchferro.compiler.cache_entries(f)) if compiled else None
        return [o.detach() for o in outs], entries

    torchferro.compiler.reset()
    try:
        want, _ = run(False)
        got, entries = run(True)
    finally:
        torchferro.compiler.reset()
    for g, w in zip(got, want):
        torch.testing.assert_close(g, w)
    assert entries == 2


class _Holder:
    pass


def test_referent_dies_between_calls():
    """A weak reference whose referent dies after the first call: the second call sees
    ``None`` and takes the other branch, as eager does."""
    obj = _Holder()
    obj.k = 3.0
    ref = weakref.ref(obj)

    def fn(x):
        o = ref()
        if o is None:
            return x - 1
        return x * o.k

    x = torch.ones(3)
    torchferro.compiler.reset()
    try:
        f = torchferro.compile(fn)
        torch.testing.assert_close(f(x), x * 3)
        del obj
        gc.collect()
        assert ref() is None
        torch.testing.assert_close(f(x), x - 1)
        assert len(torchferro.compiler.cache_entries(f)) == 2
    finally:
        torchferro.compiler.reset()


def test_lstm_precompiled_and_loaded(tmp_path):
    """The weakref step in a precompiled artifact (``_rt.weakref_referent``): an LSTM captured
    in one process, loaded in a fresh one with other weights, no trace and eager's values."""
    from test_precompile import _assert_loaded_like_eager, _capture, _load_and_compare

    fn = "lambda model, x: model(x)[0]"
    _capture(
        tmp_path,
        "(torch.manual_seed(0), torch.nn.LSTM(4, 3, batch_first=True))[1]",
        fn,
        "torch.randn(2, 5, 4)",
    )
    r = _load_and_compare(
        tmp_path, "(torch.manual_seed(1), torch.nn.LSTM(4, 3, batch_first=True))[1]", fn
    )
    _assert_loaded_like_eager(r)
