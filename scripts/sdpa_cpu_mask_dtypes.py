"""Session 24: torch 2.11's CPU scaled_dot_product_attention against its math form in float64, for
every pair of query and mask dtypes torch accepts (`tracer/src/passes.rs::cast_attention_masks`).
On this project's AVX2 machine float64 queries beside a float32 mask were 2.49 off; the rest agree
to their dtype's rounding.

    python scripts/sdpa_cpu_mask_dtypes.py
"""

import torch, torch.nn.functional as F

gen = torch.Generator().manual_seed(0)
q, k, v = (torch.randn(2, 3, 8, 16, generator=gen).double() for _ in "qkv")
mask = torch.randn(1, 1, 8, 8, generator=gen).double()
dts = [torch.float64, torch.float32, torch.bfloat16, torch.float16]
for qd in dts:
    for md in dts:
        try:
            o = F.scaled_dot_product_attention(
                q.to(qd), k.to(qd), v.to(qd), attn_mask=mask.to(md)
            ).double()
        except Exception as e:
            print(qd, md, "raises", str(e)[:60])
            continue
        ref = (
            (q.to(qd).double() @ k.to(qd).double().transpose(-2, -1)) * 0.25
            + mask.to(md).double()
        ).softmax(-1) @ v.to(qd).double()
        print(str(qd)[6:], str(md)[6:], f"{(o - ref).abs().max().item():.3g}")
