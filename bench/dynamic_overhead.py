"""Per-call overhead of a dynamic graph (issue 18): small graphs compiled with
``dynamic=True`` against the same graphs compiled statically (``dynamic=False``), eager and
torch.compile (``dynamic=True``), each on the default inductor backend, the calls interleaved,
reported in microseconds and as ratios to eager. Run twice, in fresh processes: with the
guard tree's size values handed to the runner (the default) and with
``TORCHFERRO_SIZE_HANDOFF=0`` (the runner reads each symbol's size again, as before session
14), so the difference is the second read.

    PYTHONPATH=python python bench/dynamic_overhead.py [--calls 2000 --repeats 21]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time


def pointwise(x):
    return x * 2 + 1


def two_inputs(x, y):
    return (x + y.unsqueeze(0)).sum(-1)


def per_call_us(fn, args, calls: int) -> float:
    t0 = time.perf_counter_ns()
    for _ in range(calls):
        fn(*args)
    return (time.perf_counter_ns() - t0) / calls / 1e3


def measure(calls: int, repeats: int) -> dict:
    import torch

    import torchferro

    torch.set_num_threads(1)
    programs = {
        "pointwise [5, 11]": (pointwise, (torch.randn(5, 11),)),
        "two inputs [16, 33] + [33]": (
            two_inputs,
            (torch.randn(16, 33), torch.randn(33)),
        ),
    }
    out = {}
    for pname, (fn, args) in programs.items():
        variants = {
            "eager": fn,
            "torch.compile": torch.compile(fn, dynamic=True),
            "torchferro static": torchferro.compile(fn, dynamic=False),
            "torchferro dynamic": torchferro.compile(fn, dynamic=True),
        }
        want = fn(*args)
        for f in variants.values():
            torch.testing.assert_close(f(*args), want)
            for _ in range(200):
                f(*args)
        samples = {k: [] for k in variants}
        for _ in range(repeats):
            for name, f in variants.items():
                samples[name].append(per_call_us(f, args, calls))
        out[pname] = {k: min(v) for k, v in samples.items()} | {
            k + " (median)": statistics.median(v) for k, v in samples.items()
        }
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--repeats", type=int, default=21)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--child", action="store_true")
    args = ap.parse_args()
    if args.child:
        print(json.dumps(measure(args.calls, args.repeats)))
        return
    # Fresh processes, the two settings alternated `--rounds` times; the best of all.
    runs = {}
    for _ in range(args.rounds):
        for label, handoff in (("hand-off", "1"), ("read again", "0")):
            env = dict(os.environ, TORCHFERRO_SIZE_HANDOFF=handoff)
            cmd = [sys.executable, __file__, "--child", "--calls", str(args.calls)]
            cmd += ["--repeats", str(args.repeats)]
            res = subprocess.run(
                cmd, env=env, capture_output=True, text=True, check=True
            )
            got = json.loads(res.stdout.strip().splitlines()[-1])
            old = runs.setdefault(label, got)
            for p, m in got.items():
                for k, v in m.items():
                    old[p][k] = min(old[p][k], v)
    print(
        f"best of {args.rounds} x {args.repeats} samples of {args.calls} calls, "
        "us per call (ratio to eager)"
    )
    for pname in runs["hand-off"]:
        print(f"\n{pname}")
        for label, r in runs.items():
            m = r[pname]
            row = ", ".join(
                f"{k} {m[k]:.2f} ({m[k] / m['eager']:.2f}x)"
                for k in (
                    "eager",
                    "torch.compile",
                    "torchferro static",
                    "torchferro dynamic",
                )
            )
            print(f"  {label:>10}: {row}")


if __name__ == "__main__":
    main()
