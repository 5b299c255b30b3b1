"""Session 35 (hunt35): an op that refuses the trace's meta stand-ins because it reads data
(``pack_padded_sequence``'s lengths "should be a 1D CPU int64 tensor, but got 1D meta Long
tensor") is a graph break at that call, not a frame run eagerly under a warning that called it
a torchferro bug. torch.compile makes no graph for this program either."""

import torch
import torchferro
from torch import nn
from torchferro import _events


def test_pack_padded_sequence_is_a_graph_break_not_an_eager_frame():
    torch.manual_seed(0)
    lstm = nn.LSTM(3, 4, batch_first=True)

    def f(x, lengths):
        p = nn.utils.rnn.pack_padded_sequence(
            x, lengths, batch_first=True, enforce_sorted=False
        )
        out, (h, _c) = lstm(p)
        o, n = nn.utils.rnn.pad_packed_sequence(out, batch_first=True)
        return o * 2, n, h

    x, lengths = torch.randn(3, 5, 3), torch.tensor([5, 2, 3])
    events: list[dict] = []
    _events.subscribe(events.append)
    try:
        e = torchferro.explain(f, x, lengths, backend="eager")
        got = torchferro.compile(f, backend="eager")(x, lengths)
    finally:
        _events.unsubscribe(events.append)
    assert not [ev for ev in events if ev.get("kind") == "eager"], events
    reasons = [str(b) for b in e.break_reasons]
    assert any(
        "pack_padded_sequence: its result depends on tensor data" in r for r in reasons
    ), reasons
    want = f(x, lengths)
    for a, b in zip(got, want):
        assert torch.equal(a, b)
