"""Which memory order `F.scaled_dot_product_attention` gives its result, per device, backend
and q layout (session 32: `lower/attention.rs` promises the result's strides; a wrong promise
costs a host copy and gives a graph output strides unlike eager's).

    python scripts/sdpa_strides_probe.py
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

B, H, L, E = 2, 4, 64, 64


def layouts(dev, dtype):
    def mk(order):
        shape = [(B, H, L, E)[i] for i in order]
        t = torch.randn(*shape, device=dev, dtype=dtype)
        inv = [order.index(i) for i in range(4)]
        return t.permute(*inv)

    qkv = torch.randn(B, L, 3 * H * E, device=dev, dtype=dtype)
    view = qkv[..., : H * E].view(B, L, H, E).transpose(1, 2)
    return {
        "BHLE": mk([0, 1, 2, 3]),
        "BLHE": mk([0, 2, 1, 3]),
        "HBLE": mk([1, 0, 2, 3]),
        "gpt2view": view,
    }


def main() -> None:
    devs = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
    for dev in devs:
        for dtype in (torch.float32, torch.bfloat16):
            backends = [None]
            if dev == "cuda":
                backends += [
                    SDPBackend.FLASH_ATTENTION,
                    SDPBackend.EFFICIENT_ATTENTION,
                    SDPBackend.CUDNN_ATTENTION,
                    SDPBackend.MATH,
                ]
            for be in backends:
                for name, q in layouts(dev, dtype).items():
                    k = torch.randn(B, H, L, E, device=dev, dtype=dtype)
                    v = torch.randn(B, H, L, E, device=dev, dtype=dtype)
                    for causal in (False, True):
                        try:
                            if be is None:
                                o = F.scaled_dot_product_attention(
                                    q, k, v, is_causal=causal
                                )
                            else:
                                with sdpa_kernel([be]):
                                    o = F.scaled_dot_product_attention(
                                        q, k, v, is_causal=causal
                                    )
                            r = str(o.stride())
                        except RuntimeError as e:
                            r = "unsupported: " + str(e).splitlines()[0][:60]
                        print(
                            dev,
                            dtype,
                            be,
                            name,
                            "causal" if causal else "-",
                            "q",
                            q.stride(),
                            "->",
                            r,
                        )


if __name__ == "__main__":
    main()
