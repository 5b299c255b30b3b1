"""Is the bench's pointwise chain memory-bound on this GPU? (issue 16's 90%-of-copy goal)

The chain (`bench/workloads.py::pointwise_fn`: sin, cos, relu, sigmoid and four mul/adds) runs
about 60 instructions an element with eager's precise `sincosf`, `expf` and correctly rounded
reciprocal; at 256M elements that is near 0.6 ms of issue on 132 SMs, about what the H200's
copy takes. This times variants of the chain — the arithmetic removed piece by piece — under
torchferro and torch.compile beside eager's clone in one process (CUDA events, median of 40),
so the share of the gap that is arithmetic can be read off.

    python scripts/gpu_pointwise_ceiling.py
"""

from __future__ import annotations

import sys

import torch


def chain(x):
    y = torch.sin(x) * 2.0 + torch.cos(x)
    y = torch.relu(y) * torch.sigmoid(x)
    return y - 0.5 * x


def no_trig(x):
    y = x * 2.0 + 1.0
    y = torch.relu(y) * torch.sigmoid(x)
    return y - 0.5 * x


def no_transcendental(x):
    y = x * 2.0 + 1.0
    y = torch.relu(y) * (x + 3.0)
    return y - 0.5 * x


def trig_only(x):
    return torch.sin(x) * 2.0 + torch.cos(x)


def sigmoid_only(x):
    return torch.sigmoid(x)


def clone(x):
    return x.clone()


def time_us(fn, x, iters: int = 40) -> float:
    for _ in range(3):
        fn(x)
    torch.cuda.synchronize()
    times = []
    for _ in range(iters):
        a = torch.cuda.Event(enable_timing=True)
        b = torch.cuda.Event(enable_timing=True)
        a.record()
        fn(x)
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b) * 1000.0)
    times.sort()
    return times[len(times) // 2]


def main() -> None:
    import torchferro

    n = 256 << 20
    g = torch.Generator(device="cuda").manual_seed(0)
    x = torch.randn(n, device="cuda", generator=g)
    nbytes = 2 * x.numel() * x.element_size()
    copy = time_us(clone, x)
    print(f"copy {copy:.1f} us {nbytes / copy / 1e6:.2f} TB/s")
    for fn in (chain, no_trig, no_transcendental, trig_only, sigmoid_only):
        ours = torchferro.compile(fn)
        tc = torch.compile(fn)
        ok = torch.allclose(ours(x), fn(x), rtol=1e-5, atol=1e-5)
        t_ours = time_us(ours, x)
        t_tc = time_us(tc, x)
        t_eager = time_us(fn, x)
        print(
            f"{fn.__name__:18s} ours {t_ours:7.1f} us ({copy / t_ours:5.1%} of copy)"
            f"  torch.compile {t_tc:7.1f} ({copy / t_tc:5.1%})  eager {t_eager:8.1f}  match={ok}",
            flush=True,
        )


if __name__ == "__main__":
    sys.exit(main())
