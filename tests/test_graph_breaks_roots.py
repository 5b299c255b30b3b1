"""Breaks at the compiled callable's root, against torch.compile's records (issue 14):

- a compiled torch.nn module whose own ``forward`` cannot be traced (a child's break inside
  ``nn.Sequential``'s loop): torch.compile's root frame is ``Module._call_impl``, which breaks at
  its call of ``forward`` and runs it natively, a converted frame with an empty graph. Ours gives
  the ``forward`` up, which runs the same code natively, and records that graph break: no frame
  counted as run eagerly.
- ``x.untyped_storage().size()`` read and branched on: a symbolic int read from the input on
  every call, so a branch guards only the relation it decided (torch.compile folds it with no
  guard at all).
"""

from __future__ import annotations

import dataclasses

import torch
import torch._dynamo
from torch import nn

import torchferro
import torchferro.compiler
from torchferro import _events
from programs.counting import Count


class Events:
    def __init__(self):
        self.kinds = []
        self.reasons = []

    def __call__(self, event):
        self.kinds.append(event.get("kind"))
        if event.get("kind") in ("eager", "graph_break"):
            self.reasons.append(event.get("reason"))

    def __enter__(self):
        _events.subscribe(self)
        return self

    def __exit__(self, *exc):
        _events.unsubscribe(self)


class _Loud(nn.Module):
    def forward(self, x):
        print("loud")
        return x + 1


def test_a_compiled_sequential_whose_child_breaks_records_a_graph_break(capsys):
    torch.manual_seed(0)
    m = nn.Sequential(nn.Linear(4, 4), _Loud(), nn.Linear(4, 4))
    x = torch.randn(3, 4)
    want = m(x)
    torchferro.compiler.reset()
    torch._dynamo.reset()
    c, tc = Count(), Count()
    torch.testing.assert_close(torch.compile(m, backend=tc)(x), want)
    compiled = torchferro.compile(m, backend=c)
    with Events() as ev:
        for _ in range(2):
            torch.testing.assert_close(compiled(x), want)
    assert capsys.readouterr().out.count("loud") == 1 + 1 + 2
    # The child's forward: one graph after its print, as torch.compile.
    assert c.n == tc.n == 1
    assert "eager" not in ev.kinds, ev.kinds
    assert any(
        "the compiled module's torch.nn forward runs natively" in r for r in ev.reasons
    ), ev.reasons


def _nonzero(x):
    if x.untyped_storage().size() > 0:
        return x.clone()
    return x - 1


def test_a_branch_on_the_storage_size_guards_only_what_it_decided():
    torchferro.compiler.reset()
    c = Count()
    f = torchferro.compile(_nonzero, backend=c)
    # Storages of 48 and 64 bytes take the same branch: one graph.
    for x in (torch.randn(3, 4), torch.randn(4, 4)[1:]):
        out = f(x)
        torch.testing.assert_close(out, x)
        assert out.data_ptr() != x.data_ptr()
    assert c.n == 1
    guards = "\n".join(torchferro.compiler.cache_entries(f)[0]["guards"])
    assert "L['x'].untyped_storage().nbytes()" in guards, guards
    # An empty storage takes the other branch: the relation fails, and it recompiles.
    e = torch.randn(0)
    torch.testing.assert_close(f(e), e - 1)
    assert c.n == 2


def _scaled(x):
    n = x.untyped_storage().nbytes()
    return x * (n // 16), n


def test_the_storage_size_is_read_on_every_call():
    torchferro.compiler.reset()
    c = Count()
    f = torchferro.compile(_scaled, backend=c)
    # Same sizes and strides; storages of 48, 128 and 400 bytes.
    for x in (torch.randn(3, 4), torch.randn(8, 4)[2:5], torch.randn(25, 4)[20:23]):
        got, want = f(x), _scaled(x)
        torch.testing.assert_close(got[0], want[0])
        assert got[1] == want[1]
    # A symbolic int from the first trace: one graph computes `n // 16` per call.
    assert c.n == 1


class _EMA:
    def __init__(self, model, decay=0.9):
        self.decay = decay
        self.shadow = {k: v.detach().clone() for k, v in model.state_dict().items()}

    def update(self, model):
        # `state_dict()` breaks (an attribute set on its OrderedDict); what resumes after it
        # reads `self` and that OrderedDict only: no tensor or module in reach.
        for k, v in model.state_dict().items():
            self.shadow[k].mul_(self.decay).add_(v, alpha=1 - self.decay)


def _ema_step(m, ema, x):
    out = m(x)
    with torch.no_grad():
        ema.update(m)
    return out


def test_a_resume_function_with_no_tensor_in_reach_runs_natively():
    torch.manual_seed(0)
    counts = {}
    results = {}
    for name in ("eager", "torch.compile", "torchferro"):
        torch.manual_seed(0)
        m = nn.Linear(4, 3)
        ema = _EMA(m)
        x = torch.randn(2, 4)
        c = Count()
        if name == "eager":
            f = _ema_step
        elif name == "torch.compile":
            torch._dynamo.reset()
            f = torch.compile(_ema_step, backend=c)
        else:
            torchferro.compiler.reset()
            f = torchferro.compile(_ema_step, backend=c)
        outs = [f(m, ema, x) for _ in range(2)]
        results[name] = (outs, ema.shadow)
        counts[name] = c.n
    for name in ("torch.compile", "torchferro"):
        for a, b in zip(results[name][0], results["eager"][0]):
            torch.testing.assert_close(a, b)
        for k in results["eager"][1]:
            torch.testing.assert_close(results[name][1][k], results["eager"][1][k])
    # The Linear call and the rest of the step after the `with` block; the resume after
    # `state_dict()` in `update` makes none (torchferro made a third graph of it).
    assert counts["torchferro"] == counts["torch.compile"] == 2, counts


def _break_then_add(x, n):
    print(end="")
    return x + n


def test_a_resume_function_reading_a_tensor_is_compiled():
    torchferro.compiler.reset()
    c = Count()
    f = torchferro.compile(_break_then_add, backend=c)
    x = torch.randn(3)
    torch.testing.assert_close(f(x, 2), x + 2)
    assert c.n == 1


@dataclasses.dataclass
class _Bag:
    items: list = dataclasses.field(default_factory=list)
    names: dict = dataclasses.field(default_factory=dict)


def _collect(x):
    b = _Bag()
    b.items.append(x * 2)
    b.names["x"] = x + 1
    return b.items[0] + b.names["x"], len(b.items)


def test_empty_containers_from_a_default_factory_take_tensors():
    torchferro.compiler.reset()
    c = Count()
    f = torchferro.compile(_collect, backend=c, fullgraph=True)
    x = torch.randn(3)
    got = f(x)
    torch.testing.assert_close(got[0], x * 2 + x + 1)
    assert got[1] == 1
    assert c.n == 1


class _Record(dict):
    """A dict subclass like transformers' ``ModelOutput``: an instance attribute, a
    ``__reduce__``, and a ``__getitem__`` that answers an int by position (``r[0]`` is no key
    of the underlying dict)."""

    def __init__(self, **fields):
        super().__init__(**fields)
        self.names = tuple(fields)

    def __getitem__(self, k):
        if isinstance(k, str):
            return super().__getitem__(k)
        return tuple(self.values())[k]

    def __reduce__(self):
        # As ModelOutput's: a dunder the user-container tracer does not dispatch, so the
        # tracer holds the object as a Python value and reads `r[0]` by subscription.
        return (type(self), (), None, None, iter(self.items()))


def _make_record(x):
    print(end="")
    return _Record(h=x + 1, c=x * 2)


def _record_across_a_break(x):
    y = x.sin()
    r = _make_record(y)
    return r[0] * 2 + r[1] + x


def test_a_resumed_stack_value_indexed_through_its_getitem_override():
    # Session 25 (t5fix25): the resume function gets `r` on its stack; the graph input `r[0]`
    # was named by a source that read the dict raw (key 0: missing), a crash on the first call.
    x = torch.randn(3)
    want = _record_across_a_break(x)
    torch._dynamo.reset()
    tc = Count()
    torch.testing.assert_close(
        torch.compile(_record_across_a_break, backend=tc)(x), want
    )
    torchferro.compiler.reset()
    c = Count()
    f = torchferro.compile(_record_across_a_break, backend=c)
    torch.testing.assert_close(f(x), want)
    x2 = torch.randn(3)
    torch.testing.assert_close(f(x2), _record_across_a_break(x2))
    assert c.n == tc.n == 3
