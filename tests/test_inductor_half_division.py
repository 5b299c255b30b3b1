"""Half-precision division with rounding matches eager exactly: eager's kernels round each step
to the storage dtype, so computing in float gives another integer once quotients grow."""

from __future__ import annotations

import pytest
import torch
import torchferro


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
@pytest.mark.parametrize("mode", ["trunc", "floor"])
def test_rounded_division_is_exact(dtype, mode):
    g = torch.Generator().manual_seed(0)
    a = (torch.randn(50000, generator=g) * 100).to(dtype)
    b = (torch.randn(50000, generator=g) * 10).to(dtype)
    b[:20] = 0
    a[20:30] = 0
    a[30:40] = float("inf")
    b[40:50] = float("nan")
    torchferro.compiler.reset()
    fn = torchferro.compile(lambda a, b: torch.div(a, b, rounding_mode=mode))
    got, want = fn(a, b), torch.div(a, b, rounding_mode=mode)
    (entry,) = [e for e in torchferro.compiler.cache_entries(fn)]
    assert entry["runner"] == "inductor" and entry["fallbacks"] == 0
    same = (got == want) | (got.isnan() & want.isnan())
    assert same.all(), (a[~same][:5], b[~same][:5], got[~same][:5], want[~same][:5])
    zeros = want == 0
    assert torch.equal(torch.signbit(got[zeros]), torch.signbit(want[zeros]))
