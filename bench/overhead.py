"""Per-call overhead: a tiny function (x + 1 on 10 elements), eager vs torch.compile vs
torchferro, measured in one run as the median of many calls, reported in microseconds and as
ratios. Overhead = compiled time - eager time."""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import time

import torch

import torchferro


def f(x):
    return x + 1


def per_call_us(fn, x, calls: int, repeats: int) -> list[float]:
    samples = []
    for _ in range(repeats):
        t0 = time.perf_counter_ns()
        for _ in range(calls):
            fn(x)
        samples.append((time.perf_counter_ns() - t0) / calls / 1e3)
    return samples


def interleaved_medians(variants, x, calls: int, repeats: int) -> dict[str, float]:
    """Median µs per call of each variant, repetitions interleaved so that drift affects
    every variant alike."""
    samples = {k: [] for k in variants}
    for _ in range(repeats):
        for name, fn in variants.items():
            samples[name] += per_call_us(fn, x, calls, 1)
    return {k: statistics.median(v) for k, v in samples.items()}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--repeats", type=int, default=31)
    ap.add_argument("--json", default=None)
    ap.add_argument(
        "--no-memo",
        action="store_true",
        help="guard walks without their memo (session 27's `guards/memo.rs`): the walk as before",
    )
    args = ap.parse_args()
    torchferro._C._guard_memo(not args.no_memo)
    torch.set_num_threads(1)
    x = torch.randn(10)

    variants = {
        "eager": f,
        "torch.compile": torch.compile(f, backend="eager", fullgraph=True),
        "torch.compile(inductor)": torch.compile(f, fullgraph=True),
        "torchferro": torchferro.compile(f, backend="eager", fullgraph=True),
    }
    for name, fn in variants.items():
        torch.testing.assert_close(fn(x), f(x))  # compile + check
        for _ in range(200):
            fn(x)
    med = interleaved_medians(variants, x, args.calls, args.repeats)
    eager = med["eager"]
    print(
        f"machine: {platform.processor() or platform.machine()}, torch {torch.__version__}"
    )
    print(
        f"{'variant':26s} {'median us/call':>15s} {'overhead us':>12s} {'vs eager':>9s}"
    )
    for k, v in med.items():
        print(f"{k:26s} {v:15.2f} {v - eager:12.2f} {v / eager:8.2f}x")
    tf = med["torchferro"] - eager
    tc = med["torch.compile"] - eager
    print(
        f"\ntorchferro overhead {tf:.2f} us vs torch.compile {tc:.2f} us ({tc / max(tf, 1e-9):.1f}x less)"
    )
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(
                {
                    "median_us": med,
                    "overhead_us": {k: v - eager for k, v in med.items()},
                },
                fh,
                indent=2,
            )


if __name__ == "__main__":
    main()
