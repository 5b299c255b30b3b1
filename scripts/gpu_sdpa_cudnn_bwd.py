"""Session 33: why masked half-precision attention trains wrong on CUDA (test_aot_cuda's
``test_cuda_sdpa_mask_on_the_fused_backend[dtype1/2-*]``, 8 failures on the H100).

1. torch alone: cuDNN's attention backward given its output in q's layout against the same
   values laid out ``[B, L, H, E]`` (the layout the compiled forward promised for a masked call).
2. torchferro's compiled attention (forward and backward) against eager, with the fix
   (``_aot_helpers._like``) and without it, and eager before against eager after (a cached
   cuDNN graph reused for another layout would change eager's own answer).
"""

import torch
import torch.nn.functional as F

import torchferro
from torchferro import _aot_helpers

DEV = "cuda"
torch.backends.cuda.matmul.allow_tf32 = False
b, h, l, d = 2, 12, 128, 64
dt = torch.bfloat16
g = torch.Generator(device=DEV).manual_seed(0)
q, k, v, w = (torch.randn(b, h, l, d, device=DEV, generator=g).to(dt) for _ in range(4))
mask = torch.ones(l, l, dtype=torch.bool, device=DEV).tril()


def diff(a, e):
    return f"{(a.float() - e.float()).abs().max().item():.4g}"


def run(fn):
    qs = [t.clone().requires_grad_(True) for t in (q, k, v)]
    out = fn(*qs, mask)
    grads = torch.autograd.grad((out * w).sum(), qs)
    return [out.detach(), *grads]


def f(q, k, v, mask):
    return F.scaled_dot_product_attention(q, k, v, attn_mask=mask)


want = run(f)
print("backend", _aot_helpers._sdpa_backend(*(t for t in (q, k, v)), mask, False, None))

# 1. torch alone
out, lse = _aot_helpers.sdpa_forward(q, k, v, mask, False, None)
print("cudnn out strides", out.stride(), "q", q.stride())
grad = w
blhe = torch.empty(b, l, h, d, device=DEV, dtype=dt).transpose(1, 2).copy_(out)
for name, o, gr in [
    ("out like q, grad like q", out, grad),
    ("out BLHE, grad like q", blhe, grad),
    ("out BLHE, grad BLHE", blhe, torch.empty_like(blhe).copy_(grad)),
]:
    saved = _aot_helpers._like
    _aot_helpers._like = lambda t, ref: t
    try:
        dq, dk, dv = _aot_helpers.sdpa_backward(gr, q, k, v, o, lse, mask, False, None)
    finally:
        _aot_helpers._like = saved
    print(
        "torch alone:",
        name,
        "dq",
        diff(dq, want[1]),
        "dk",
        diff(dk, want[2]),
        "dv",
        diff(dv, want[3]),
    )

# 2. compiled
for label, patch in [("with _like", False), ("without _like", True)]:
    saved = _aot_helpers._like
    if patch:
        _aot_helpers._like = lambda t, ref: t
    try:
        torchferro.compiler.reset()
        cf = torchferro.compile(f)
        run(cf)
        got = run(cf)
    finally:
        _aot_helpers._like = saved
    print("compiled", label, ": out/dq/dk/dv", [diff(a, e) for a, e in zip(got, want)])
again = run(f)
print("eager after vs before", [diff(a, e) for a, e in zip(again, want)])
