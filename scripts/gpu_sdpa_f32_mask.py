"""Session 23: a float32 additive mask beside half-precision queries on CUDA, ours against the math backend, eager and float64."""

import os, torch, torch.nn.functional as F

os.environ["TORCHFERRO_AOT_CUDA"] = "1"
import torchferro
from torchferro import _aot
from torch.nn.attention import SDPBackend, sdpa_kernel

b, h, l, d = 2, 12, 128, 64
for dtype in (torch.bfloat16, torch.float16):
    g = torch.Generator(device="cuda").manual_seed(0)
    mask = torch.randn(1, 1, l, l, device="cuda", generator=g)
    q, k, v = (
        torch.randn(b, h, l, d, device="cuda", generator=g).to(dtype) for _ in "qkv"
    )

    def f(q, k, v, mask):
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask)

    def run(fn, grad=True):
        qs = [t.clone().requires_grad_(grad) for t in (q, k, v)]
        out = fn(*qs, mask)
        return out

    torchferro.compiler.reset()
    _aot.reset()
    c = torchferro.compile(f)
    o1 = run(c)
    o2 = run(c)
    with sdpa_kernel(SDPBackend.MATH):
        m = run(f)
    e = run(f)
    r64 = F.scaled_dot_product_attention(
        q.double(), k.double(), v.double(), attn_mask=mask.double()
    )
    nz = lambda t: (torch.isnan(t).sum().item(), (t.double() - r64).abs().max().item())
    print(
        dtype,
        "ours",
        nz(o2),
        "math",
        nz(m),
        "eager",
        nz(e),
        dict(_aot.counters),
        _aot.fallback_reasons,
    )
    torchferro.compiler.reset()
    _aot.reset()
    o3 = torchferro.compile(f)(*[t.clone() for t in (q, k, v)], mask)
    print("  no grad ours", nz(o3))
