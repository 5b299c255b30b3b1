"""Intermediates a compiled graph keeps allocated from one call to the next (the inductor's
workspace): outputs handed out earlier are never overwritten, calls from several threads at once
each get correct results, and nothing leaks over many calls."""

from __future__ import annotations

import gc
import sys
import threading

import torch
import torch.nn as nn
import torch.nn.functional as F
import torchferro


class Mlp(nn.Module):
    def __init__(self, d=64):
        super().__init__()
        self.ln = nn.LayerNorm(d)
        self.up = nn.Linear(d, 4 * d)
        self.down = nn.Linear(4 * d, d)

    def forward(self, x):
        h = self.up(self.ln(x))
        h = F.gelu(h, approximate="tanh")
        return x + self.down(h), h.sum(-1)


def _model():
    torch.manual_seed(0)
    return Mlp().eval()


def test_outputs_of_earlier_calls_are_not_overwritten():
    torchferro.compiler.reset()
    m = _model()
    compiled = torchferro.compile(m)
    xs = [torch.randn(4, 32, 64) for _ in range(6)]
    with torch.no_grad():
        outs = [compiled(x) for x in xs]
        for x, (y, s) in zip(xs, outs):
            ey, es = m(x)
            torch.testing.assert_close(y, ey)
            torch.testing.assert_close(s, es)
    (entry,) = torchferro.compiler.cache_entries(m.forward)
    assert entry["runner"] == "inductor"
    assert entry["extern_calls"] == 2
    # Distinct outputs, no storage shared between calls.
    ptrs = {y.data_ptr() for y, _ in outs}
    assert len(ptrs) == len(outs)


def test_threads_calling_one_graph_at_once_get_their_own_answers():
    torchferro.compiler.reset()
    m = _model()
    compiled = torchferro.compile(m)
    with torch.no_grad():
        compiled(torch.randn(4, 32, 64))  # compile once, before the threads start
    errors: list[BaseException] = []

    def worker(seed):
        try:
            g = torch.Generator().manual_seed(seed)
            with torch.no_grad():
                for _ in range(25):
                    x = torch.randn(4, 32, 64, generator=g)
                    y, s = compiled(x)
                    ey, es = m(x)
                    torch.testing.assert_close(y, ey)
                    torch.testing.assert_close(s, es)
        except BaseException as e:  # noqa: BLE001 - reported by the main thread
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]
    assert len(torchferro.compiler.cache_entries(m.forward)) == 1


def test_no_reference_leak_with_a_workspace():
    torchferro.compiler.reset()
    m = _model()
    compiled = torchferro.compile(m)
    x = torch.randn(2, 8, 64)
    with torch.no_grad():
        for _ in range(200):
            compiled(x)
        gc.collect()
        objects_before = len(gc.get_objects())
        ref_before = sys.getrefcount(x)
        for _ in range(3000):
            compiled(x)
        gc.collect()
    assert sys.getrefcount(x) == ref_before
    assert len(gc.get_objects()) - objects_before < 50
