"""Prints the strides torch's CUDA attention kernels give their result, for GPT-2's q/k/v (views
of one `[B, L, 3*H*E]` projection, transposed to `[B, H, L, E]`) and for contiguous inputs, per
backend: what layout the lowering should promise for an extern SDPA so the host never copies.
"""

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

B, L, H, E = 8, 1024, 12, 64
qkv = torch.randn(B, L, 3 * H * E, device="cuda", dtype=torch.bfloat16)
q, k, v = qkv.split(H * E, dim=2)
views = [t.view(B, L, H, E).transpose(1, 2) for t in (q, k, v)]
dense = [t.contiguous() for t in views]
blhe = [t.transpose(1, 2).contiguous().transpose(1, 2) for t in views]
for name, be in [
    ("default", None),
    ("cudnn", SDPBackend.CUDNN_ATTENTION),
    ("flash", SDPBackend.FLASH_ATTENTION),
    ("efficient", SDPBackend.EFFICIENT_ATTENTION),
    ("math", SDPBackend.MATH),
]:
    for label, args in [("gpt2 views", views), ("contiguous", dense), ("BLHE", blhe)]:
        for causal in (False, True):
            try:
                if be is None:
                    o = F.scaled_dot_product_attention(*args, is_causal=causal)
                else:
                    with sdpa_kernel([be]):
                        o = F.scaled_dot_product_attention(*args, is_causal=causal)
                print(f"{name:9s} {label:11s} causal={causal}: {tuple(o.stride())}")
            except RuntimeError as e:
                print(
                    f"{name:9s} {label:11s} causal={causal}: {str(e).splitlines()[0][:80]}"
                )
