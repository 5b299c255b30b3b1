"""Which layout the inductor gives convolution inputs: channels-last where torch convolves on
oneDNN, contiguous where torch's native kernel runs (it would copy a channels-last input and
the weights into its own layout on every call)."""

from __future__ import annotations

import pytest
import torch
import torch.nn as nn
import torchferro
from torch.profiler import profile


def _net(c):
    torch.manual_seed(0)
    return nn.Sequential(
        nn.Conv2d(3, c, 3, padding=1),
        nn.BatchNorm2d(c),
        nn.ReLU(),
        nn.Conv2d(c, c, 3, padding=1),
        nn.BatchNorm2d(c),
        nn.ReLU(),
        nn.Conv2d(c, c, 3, padding=1),
    ).eval()


def _aten_ops(fn, x):
    with profile() as p:
        fn(x)
    return {e.key: e.count for e in p.key_averages()}


@pytest.mark.parametrize(
    "shape, onednn",
    [
        ((1, 3, 8, 8), False),  # batch 1, 3x3 filters, small: torch's native kernel
        ((4, 3, 16, 16), True),  # batch above 1: oneDNN
    ],
)
def test_convolutions_get_the_layout_their_kernel_wants(shape, onednn):
    torchferro.compiler.reset()
    m = _net(32)
    compiled = torchferro.compile(m)
    x = torch.randn(*shape)
    with torch.no_grad():
        out = compiled(x)
        torch.testing.assert_close(out, m(x), rtol=1e-4, atol=1e-4)
        assert out.stride() == m(x).stride()
        (entry,) = torchferro.compiler.cache_entries(m.forward)
        assert entry["runner"] == "inductor"
        assert entry["extern_calls"] == 3
        ops = _aten_ops(compiled, x)
    # No per-call copies of inputs into another layout (the native kernel's own bias broadcast
    # is a copy_ in eager too). oneDNN gets each contiguous weight reordered to channels-last
    # on every call (one contiguous/clone/copy_ per convolution): a copy kept between calls
    # would go stale, since writes through `weight.data` or its storage bump no version counter
    # the host could check (tests/test_inductor_differential.py, weight changes).
    if onednn:
        assert ops.get("aten::mkldnn_convolution") == 3, ops
        assert ops.get("aten::contiguous") == 3, ops
        assert ops.get("aten::clone") == 3, ops
        assert ops.get("aten::copy_") == 3, ops
    else:
        assert "aten::contiguous" not in ops, ops
        assert "aten::clone" not in ops, ops
        assert ops.get("aten::_slow_conv2d_forward") == 3, ops


def test_packed_weights_follow_in_place_updates_and_replaced_storage():
    torchferro.compiler.reset()
    m = _net(16)
    compiled = torchferro.compile(m)
    x = torch.randn(4, 3, 16, 16)
    with torch.no_grad():
        torch.testing.assert_close(compiled(x), m(x), rtol=1e-4, atol=1e-4)
        # An optimizer-style in-place update bumps the weight's version.
        m[3].weight.mul_(-0.5)
        torch.testing.assert_close(compiled(x), m(x), rtol=1e-4, atol=1e-4)
        # New storage behind the same parameter object.
        m[6].weight.data = torch.randn_like(m[6].weight)
        torch.testing.assert_close(compiled(x), m(x), rtol=1e-4, atol=1e-4)
        # A parameter replaced by another object.
        m[0].weight = nn.Parameter(torch.randn_like(m[0].weight))
        torch.testing.assert_close(compiled(x), m(x), rtol=1e-4, atol=1e-4)


def test_inference_mode_weights_are_convolved_unpacked():
    torchferro.compiler.reset()
    with torch.inference_mode():
        m = _net(16)
        compiled = torchferro.compile(m)
        x = torch.randn(4, 3, 16, 16)
        for _ in range(2):
            torch.testing.assert_close(compiled(x), m(x), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("channels_last", [True, False])
@pytest.mark.parametrize("grad", [False, True])
def test_a_convolution_under_cpu_autocast_returns_eagers_strides(
    monkeypatch, channels_last, grad
):
    # With the autocast region on the inductor, the casts of a channels-last image and filter
    # were realized contiguous and the extern convolution's contiguous result was handed out
    # as it was: eager returns channels-last (session 31). Two causes, both fixed (session
    # 32): the channels-last decision took bfloat16 convolutions for native ones (torch runs
    # them on oneDNN where the CPU has AVX-512), and a computed graph output in other strides
    # than eager's was handed out as it was (now written out in eager's layout).
    monkeypatch.setenv("TORCHFERRO_AUTOCAST_INDUCTOR", "1")
    torch.manual_seed(0)
    conv = nn.Conv2d(8, 16, 3, padding=1)
    x = torch.randn(4, 8, 10, 10)
    if channels_last:
        conv = conv.to(memory_format=torch.channels_last)
        x = x.contiguous(memory_format=torch.channels_last)

    def f(x):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            return conv(x)

    with torch.set_grad_enabled(grad):
        want = f(x)
        got = torchferro.compile(f)(x)
    assert got.dtype == want.dtype
    assert got.stride() == want.stride()
    torch.testing.assert_close(got.float(), want.float(), rtol=1e-2, atol=1e-2)
