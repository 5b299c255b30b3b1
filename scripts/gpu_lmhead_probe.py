"""Why torch.compile's unpadded bf16 LM head GEMM is fast and ours was not (session 27).

    python scripts/gpu_lmhead_probe.py

GPT-2's LM head under bf16 autocast: `F.linear(h, w)` with h `[8192, 768]` and the tied weight
`w` `[50257, 768]` (float32). Times raw `torch.mm` on each operand layout our lowering can hand
cuBLAS (weight cast `[N, K]` viewed transposed, or written transposed `[K, N]`; output ld odd or
padded) and prints each one's kernel names, then torch.compile's and torchferro's whole call
with their kernels and the `aten::mm` input shapes the profiler records.
"""

from __future__ import annotations

import statistics

import torch
import torch.nn.functional as F
from torch.profiler import ProfilerActivity, profile


def timed(fn, reps=20):
    for _ in range(3):
        fn()
    ts = []
    for _ in range(reps):
        a, b = (
            torch.cuda.Event(enable_timing=True),
            torch.cuda.Event(enable_timing=True),
        )
        a.record()
        fn()
        b.record()
        torch.cuda.synchronize()
        ts.append(a.elapsed_time(b))
    return statistics.median(ts)


def kernels(fn, shapes=False):
    with profile(
        activities=[ProfilerActivity.CUDA, ProfilerActivity.CPU], record_shapes=shapes
    ) as p:
        fn()
        torch.cuda.synchronize()
    rows = []
    for e in p.key_averages(group_by_input_shape=shapes):
        if e.device_type.name == "CUDA" or "Cuda" in str(e.device_type):
            rows.append(
                f"    gpu {e.self_device_time_total / e.count:8.1f} us  {e.key[:110]}"
            )
        elif shapes and e.key in (
            "aten::mm",
            "aten::addmm",
            "aten::linear",
            "aten::matmul",
        ):
            rows.append(f"    cpu {e.key} {e.input_shapes}")
    return "\n".join(rows)


def main() -> None:
    torch.manual_seed(0)
    dev = "cuda"
    M, K, N = 8192, 768, 50257
    h = torch.randn(M, K, device=dev)
    w = torch.randn(N, K, device=dev) * 0.02
    hb, wb = h.bfloat16(), w.bfloat16()
    wt = wb.t().contiguous()  # [K, N], ld N (odd)
    Np = (N + 63) // 64 * 64
    wtp = torch.zeros(K, Np, device=dev, dtype=torch.bfloat16)
    wtp[:, :N] = wt
    wp = torch.zeros(Np, K, device=dev, dtype=torch.bfloat16)
    wp[:N] = wb
    padded = torch.randn(M, Np, device=dev).bfloat16()
    logits = torch.empty(M, N, device=dev, dtype=torch.bfloat16)
    cases = {
        "A @ w[N,K].t()  (tc's operands, out ld N)": lambda: hb @ wb.t(),
        "A @ wT[K,N] contiguous (out ld N)": lambda: hb @ wt,
        "A @ wTpad[K,Np] (out ld Np)": lambda: hb @ wtp,
        "A @ wpad[Np,K].t() (out ld Np)": lambda: hb @ wp.t(),
        "copy padded logits out (eager, the graph-output copy)": lambda: logits.copy_(
            padded[:, :N]
        ),
        "cast w -> bf16 [N,K]": lambda: w.to(torch.bfloat16),
        "cast+transpose w -> [K,N] contiguous": lambda: (
            w.t().to(torch.bfloat16).contiguous()
        ),
    }
    for name, fn in cases.items():
        print(f"{name}: {timed(fn):.3f} ms")
        print(kernels(fn))

    def f(h, w):
        with torch.autocast("cuda", torch.bfloat16):
            return F.linear(h, w)

    import torchferro

    for label, comp in (
        ("torch.compile", torch.compile(f)),
        ("torchferro", torchferro.compile(f)),
    ):
        r = comp(h, w)
        torch.cuda.synchronize()
        err = (r.float() - f(h, w).float()).abs().max().item()
        print(
            f"{label}: {timed(lambda: comp(h, w)):.3f} ms, max err {err:.3g}, out {tuple(r.stride())}"
        )
        print(kernels(lambda: comp(h, w), shapes=True))


if __name__ == "__main__":
    main()
