"""Frames with nothing of torch in reach (no tensor or module among their arguments and
closure, no torch or numpy module among their code's globals) that cannot be traced whole run
natively without a graph-break record, as torch.compile never traces them
(tracer/src/torch_free.rs). transformers' T5 meets them: config methods that `copy.deepcopy`
runs natively after the forward breaks at it."""

import copy
import logging

import torch

import torchferro

LOG = []


class Settings:
    def __init__(self, width):
        self.width = width

    def __deepcopy__(self, memo):
        # Run natively by copy.deepcopy; untraceable (print) and torch-free.
        print("copying settings")
        LOG.append(self.width)
        return Settings(self.width)


def scaled(x, settings):
    clone = copy.deepcopy(settings)
    return x * clone.width


def _break_records(caplog):
    return [
        r.getMessage()
        for r in caplog.records
        if r.name.startswith("torchferro") and r.getMessage().startswith("Graph break")
    ]


def test_a_torch_free_frame_run_natively_after_a_break_adds_no_break(caplog):
    torchferro.compiler.reset()
    LOG.clear()
    x = torch.randn(3)
    with caplog.at_level(logging.INFO, logger="torchferro"):
        got = torchferro.compile(scaled, backend="eager")(x, Settings(3))
    torch.testing.assert_close(got, x * 3, rtol=0, atol=0)
    assert LOG == [3]
    breaks = _break_records(caplog)
    assert len(breaks) == 1 and "copy.deepcopy" in breaks[0], breaks
    state, _ = torchferro._C.cache_entries(Settings.__deepcopy__.__code__)
    assert (
        state == "eager: graph break in a frame with no tensor, module or torch global"
    )


def test_torch_compile_makes_as_many_break_records():
    import torch._dynamo
    from torch._dynamo.utils import counters

    torch._dynamo.reset()
    counters.clear()
    torch.compile(scaled, backend="eager")(torch.randn(3), Settings(3))
    assert sum(counters["graph_break"].values()) == 1
    torch._dynamo.reset()


def test_a_frame_holding_a_tensor_still_breaks_and_resumes(caplog):
    def noisy(x):
        y = x + 1
        print("between")
        return y * 2

    torchferro.compiler.reset()
    x = torch.randn(3)
    with caplog.at_level(logging.INFO, logger="torchferro"):
        got = torchferro.compile(noisy, backend="eager")(x)
    torch.testing.assert_close(got, (x + 1) * 2)
    assert len(_break_records(caplog)) == 1
    assert torchferro._C.cache_entries(noisy.__code__)[0] == "normal"
