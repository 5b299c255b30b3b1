"""Gradient layouts of a compiled convolution's backward are eager's: a channels-last model's
input gradient reaches a tensor hook channels-last (torch's convolution backward returns its
gradients in the convolution's memory format), and a contiguous model's stays contiguous.
Session 31: the backward graph declared them contiguous, so a channels-last model's backward
wrote every gradient below a convolution transposed (resnet50's CUDA step: ~8 ms of 34)."""

import pytest
import torch

import torchferro
from torchferro import _aot


def _model(channels_last: bool, stride: int, groups: int):
    torch.manual_seed(0)
    m = torch.nn.Sequential(
        torch.nn.Conv2d(8, 16, 3, stride=stride, padding=1, groups=groups, bias=False),
        torch.nn.BatchNorm2d(16),
        torch.nn.ReLU(),
        torch.nn.Conv2d(16, 16, 1),
    )
    if channels_last:
        m = m.to(memory_format=torch.channels_last)
    return m


def _run(fn, model, channels_last: bool):
    torch.manual_seed(1)
    x = torch.randn(4, 8, 10, 10)
    if channels_last:
        x = x.to(memory_format=torch.channels_last)
    x.requires_grad_()
    y = x * 2
    seen = []
    y.register_hook(lambda g: seen.append((g.stride(), g.detach().clone())))
    loss = fn(model, y)
    loss.backward()
    grads = [p.grad.clone() for p in model.parameters()]
    for p in model.parameters():
        p.grad = None
    return loss.detach(), seen, grads, x.grad


def _step(model, y):
    return (model(y) ** 2).mean()


@pytest.mark.parametrize("backend", ["inductor", "aot_eager"])
@pytest.mark.parametrize("channels_last", [True, False])
@pytest.mark.parametrize("stride,groups", [(1, 1), (2, 1), (1, 4)])
def test_convolution_gradients_reach_hooks_in_eagers_layout(
    backend, channels_last, stride, groups
):
    model = _model(channels_last, stride, groups)
    want = _run(_step, model, channels_last)
    _aot.reset()
    got = _run(torchferro.compile(_step, backend=backend), model, channels_last)
    # One graph, forward and backward compiled (not torch's autograd).
    assert _aot.counters["fallback"] == 0, _aot.fallback_reasons
    assert (_aot.counters["compiled"], _aot.counters["backward"]) == (1, 1)
    torch.testing.assert_close(got[0], want[0])
    assert [s for s, _ in got[1]] == [s for s, _ in want[1]]
    for (_, g), (_, w) in zip(got[1], want[1]):
        torch.testing.assert_close(g, w, rtol=1e-4, atol=1e-5)
    for g, w in zip(got[2], want[2]):
        assert g.stride() == w.stride()
        torch.testing.assert_close(g, w, rtol=1e-4, atol=1e-5)
    assert got[3].stride() == want[3].stride()
    torch.testing.assert_close(got[3], want[3], rtol=1e-4, atol=1e-5)
