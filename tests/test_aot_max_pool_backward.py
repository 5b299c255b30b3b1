"""Issue 16/17: `F.max_pool2d`'s backward lowered as two kernels (each window's argmax offset,
then a gather over the input gradient: `inductor/src/lower/pool.rs::max_pool_backward`) instead
of torch's `max_pool2d_with_indices` and its backward on the host.

The input gradient must be eager's bit for bit: ties (a ReLU's zeros, rounded values) go to the
first position of the window in scan order, a NaN to the last NaN, a window of -inf to its first
position inside the input, and overlapping windows sum in eager's order (rounded at each add in
half precision on the CPU, as eager's CPU kernel adds). Hypothesis draws shapes, windows,
padding, ceil_mode, dtypes, layouts and values; a host call counter proves which path ran."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import torchferro
import torchferro._aot_helpers as helpers
from torchferro import _aot


@pytest.fixture
def host_calls(monkeypatch):
    calls = []
    original = helpers.max_pool2d_backward

    def counted(*a):
        calls.append(a[2:])
        return original(*a)

    monkeypatch.setattr(helpers, "max_pool2d_backward", counted)
    return calls


def _values(kind, shape, gen):
    x = torch.randn(*shape, generator=gen, dtype=torch.float64)
    if kind == "ties":
        x = (x * 2).round().relu()  # many zeros and repeated small integers
    elif kind == "special":
        flat = x.view(-1)
        n = flat.numel()
        picks = torch.randint(0, n, (max(1, n // 7),), generator=gen)
        flat[picks[::2]] = float("nan")
        flat[picks[1::2]] = float("-inf")
    return x


def _check(shape, k, s, p, ceil, dtype, channels_last, kind, seed, host_calls):
    gen = torch.Generator().manual_seed(seed)
    x0 = _values(kind, shape, gen).to(dtype)
    if channels_last and len(shape) == 4:
        x0 = x0.contiguous(memory_format=torch.channels_last)
    w = torch.randn(shape[-3], 1, 1, generator=gen).to(dtype)

    def f(x, w):
        return F.max_pool2d(x * w, k, s, p, ceil_mode=ceil)

    out_shape = f(x0, w).shape
    go = torch.randn(out_shape, generator=gen).to(dtype)
    xe = x0.clone().requires_grad_()
    f(xe, w).backward(go)
    xc = x0.clone().requires_grad_()
    torchferro.compiler.reset()
    _aot.reset()
    out = torchferro.compile(f)(xc, w)
    out.backward(go)
    assert _aot.counters["backward"] == 1 and _aot.counters["fallback"] == 0, (
        _aot.counters
    )
    torch.testing.assert_close(out, f(x0, w), rtol=0, atol=0, equal_nan=True)
    torch.testing.assert_close(xc.grad, xe.grad, rtol=0, atol=0, equal_nan=True)
    windows = ((k - 1) // s + 1) ** 2
    # Positions held by at most nine windows are gathered; more run torch's kernels.
    assert len(host_calls) == (0 if windows <= 9 else 1), (k, s, host_calls)


@settings(
    max_examples=60,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture],  # cleared per example
)
@given(
    n=st.integers(1, 3),
    c=st.integers(1, 5),
    h=st.integers(2, 13),
    w=st.integers(2, 13),
    k=st.integers(1, 5),
    s=st.integers(1, 3),
    pad=st.integers(0, 2),
    ceil=st.booleans(),
    dtype=st.sampled_from([torch.float32, torch.float64, torch.bfloat16]),
    channels_last=st.booleans(),
    unbatched=st.booleans(),
    kind=st.sampled_from(["randn", "ties", "special"]),
    seed=st.integers(0, 2**16),
)
def test_the_input_gradient_is_eagers_bit_for_bit(
    n, c, h, w, k, s, pad, ceil, dtype, channels_last, unbatched, kind, seed, host_calls
):
    pad = min(pad, k // 2)
    if h + 2 * pad < k or w + 2 * pad < k:
        return
    host_calls.clear()
    shape = (c, h, w) if unbatched else (n, c, h, w)
    _check(shape, k, s, pad, ceil, dtype, channels_last, kind, seed, host_calls)


@pytest.mark.parametrize(
    "k,s,p,ceil,dtype,channels_last,kind",
    [
        (
            3,
            2,
            1,
            False,
            torch.bfloat16,
            True,
            "ties",
        ),  # resnet's stem pool after a ReLU
        (3, 2, 1, True, torch.float32, False, "special"),
        (2, 2, 0, False, torch.float32, False, "ties"),
        (
            3,
            1,
            1,
            False,
            torch.float32,
            True,
            "randn",
        ),  # nine windows a position: gathered
        (5, 1, 2, False, torch.float32, False, "randn"),  # 25: torch's kernels
    ],
)
def test_pinned_windows(k, s, p, ceil, dtype, channels_last, kind, host_calls):
    _check((2, 4, 11, 9), k, s, p, ceil, dtype, channels_last, kind, 7, host_calls)


def test_a_resnet_stem_trains_as_eager(host_calls):
    """Conv, batch norm, ReLU and the 3x3/2 pool, three SGD steps: losses and parameters as
    eager's, the pool's backward gathered (no host call)."""
    torch.manual_seed(0)

    def make():
        torch.manual_seed(0)
        return torch.nn.Sequential(
            torch.nn.Conv2d(3, 8, 3, 2, 1, bias=False),
            torch.nn.BatchNorm2d(8),
            torch.nn.ReLU(),
            torch.nn.MaxPool2d(3, 2, 1),
            torch.nn.Flatten(),
            torch.nn.LazyLinear(5),
        )

    x = torch.randn(4, 3, 32, 32)
    y = torch.randint(0, 5, (4,))
    eager, comp = make(), make()
    eager(x), comp(x)  # materialize the lazy layer
    comp.load_state_dict(eager.state_dict())
    cm = torchferro.compile(comp)
    oe = torch.optim.SGD(eager.parameters(), lr=0.1)
    oc = torch.optim.SGD(comp.parameters(), lr=0.1)
    for _ in range(3):
        for m, o in ((eager, oe), (cm, oc)):
            o.zero_grad()
            loss = F.cross_entropy(m(x), y)
            loss.backward()
            o.step()
        torch.testing.assert_close(
            F.cross_entropy(cm(x), y),
            F.cross_entropy(eager(x), y),
            rtol=1e-5,
            atol=1e-5,
        )
    for (name, pe), pc in zip(eager.named_parameters(), comp.parameters()):
        torch.testing.assert_close(pc, pe, rtol=1e-5, atol=1e-5, msg=name)
    assert host_calls == []
