"""The torch.compile namespace as torchferro honours it (issue 14): ``allow_in_graph``,
``substitute_in_graph``, ``assume_constant_result`` (torch's spellings and the
``torchferro.compiler`` twins), ``graph_break`` (``torch._dynamo`` and ``torchferro``: exactly one
break each), and ``torch.distributions`` with argument validation left on (its default in a
process where torch.compile never ran)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import torch
import torchferro
from conftest import CountingBackend
from torchferro import _events


def _breaks(fn, *args):
    """Runs ``torchferro.compile(fn)`` once; returns (graphs, graph-break events, result)."""
    backend = CountingBackend()
    events = []
    _events.subscribe(events.append)
    try:
        out = torchferro.compile(fn, backend=backend)(*args)
    finally:
        _events.unsubscribe(events.append)
    breaks = [e for e in events if e.get("kind") == "graph_break"]
    return backend, breaks, out


def test_graph_break_spellings_each_break_once():
    def with_dynamo(x):
        y = x.sin()
        torch._dynamo.graph_break()
        return y.cos()

    def with_torchferro(x):
        y = x.sin()
        torchferro.graph_break()
        return y.cos()

    def with_compiler(x):
        y = x.sin()
        torchferro.compiler.graph_break()
        return y.cos()

    x = torch.randn(3)
    for fn in (with_dynamo, with_torchferro, with_compiler):
        backend, breaks, out = _breaks(fn, x)
        assert backend.count == 2, fn.__name__
        assert len(breaks) == 1, fn.__name__
        torch.testing.assert_close(out, x.sin().cos())
        torchferro.compiler.reset()


def _scaled_rows(t, k):
    # Python over the tensor's rows, never traced: the graph holds one call to this function.
    # (Its body runs on meta tensors once while tracing, so it may not read values, as under
    # torch.compile's fake tensors.)
    out = t.clone()
    for i in range(t.shape[0]):
        out[i] = out[i] * (k + i)
    return out


def test_allow_in_graph_puts_one_call_in_the_graph():
    torch.compiler.allow_in_graph(_scaled_rows)

    def f(x):
        return _scaled_rows(x.relu() - 0.5, 3.0) + 1

    x = torch.randn(4, 3)
    backend, breaks, out = _breaks(f, x)
    torch.testing.assert_close(out, f(x))
    assert backend.count == 1 and breaks == []
    targets = [n.target for n in backend.op_nodes()]
    assert _scaled_rows in targets, backend.describe()
    # Its body is not in the graph: no `clone` or row writes of its own.
    assert "clone" not in backend.describe()


def _normalise(t):
    return t / t.norm()


def test_torchferro_allow_in_graph_shares_torchs_registry():
    assert torchferro.compiler.allow_in_graph(_normalise) is _normalise
    assert torchferro.allow_in_graph is torchferro.compiler.allow_in_graph
    from torch._dynamo import trace_rules

    assert trace_rules.is_callable_allowed(_normalise)

    def f(x):
        return _normalise(x * 2)

    x = torch.randn(5)
    backend, _, out = _breaks(f, x)
    torch.testing.assert_close(out, f(x))
    assert _normalise in [n.target for n in backend.op_nodes()]


def _host_clip(t, hi):
    return torch.tensor([min(v, hi) for v in t.tolist()])


@torchferro.compiler.substitute_in_graph(_host_clip)
def _traced_clip(t, hi):
    return t.clamp(max=hi)


def test_substitute_in_graph_traces_the_polyfill_and_eager_runs_the_original():
    calls = []

    def f(x):
        calls.append(torch.compiler.is_compiling())
        return _host_clip(x, 0.5) * 2

    x = torch.randn(6)
    backend, breaks, out = _breaks(f, x)
    torch.testing.assert_close(out, x.clamp(max=0.5) * 2)
    assert backend.count == 1 and breaks == []
    assert "clamp" in backend.describe()
    # Eagerly, the original runs.
    torch.testing.assert_close(_host_clip(x, 0.5), x.clamp(max=0.5))


_SETTINGS = {"scale": 3}


@torchferro.compiler.assume_constant_result
def _scale():
    return _SETTINGS["scale"]


def test_assume_constant_result_is_a_constant_unguarded_as_torch_takes_it():
    def f(x):
        return x * _scale()

    backend = CountingBackend()
    cf = torchferro.compile(f, backend=backend)
    x = torch.ones(2)
    try:
        torch.testing.assert_close(cf(x), x * 3)
        _SETTINGS["scale"] = 5
        # The user promised a constant: no guard, no recompile (torch.compile gives 3 too).
        torch.testing.assert_close(cf(x), x * 3)
        assert backend.count == 1
        torch._dynamo.reset()
        torch.testing.assert_close(torch.compile(f, backend="eager")(x), x * 5)
    finally:
        _SETTINGS["scale"] = 3


def test_distributions_validation_on_by_default_matches_eager():
    """In a process where torch.compile never ran, ``Distribution``'s argument validation is on
    (torch.compile switches it off process-wide on its first call): valid arguments give eager's
    values, invalid ones eager's ``ValueError``."""
    script = textwrap.dedent(
        """
        import torch, torchferro
        from torch.distributions import Normal
        assert torch.distributions.Distribution._validate_args

        def f(x, mu, s):
            d = Normal(mu, s)
            return d.log_prob(x), d.entropy()

        cf = torchferro.compile(f, backend="eager")
        x, mu, s = torch.randn(3), torch.randn(3), torch.rand(3) + 0.1
        for a, b in zip(cf(x, mu, s), f(x, mu, s)):
            torch.testing.assert_close(a, b)
        bad = -s
        msgs = []
        for fn in (f, cf):
            try:
                fn(x, mu, bad)
            except ValueError as e:
                msgs.append(str(e))
        assert len(msgs) == 2 and msgs[0] == msgs[1], msgs
        assert torch.distributions.Distribution._validate_args
        print("OK")
        """
    )
    r = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert r.returncode == 0 and "OK" in r.stdout, r.stderr[-3000:]
