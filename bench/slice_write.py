"""Static writes through a slice of a graph input (session 29, docs/dynamic-shapes.md
"Session 29 (reinplace29)"): `x[2:5].mul_(2)` on a 1M-element input, and a `[1024, 64]` cache
written at a fixed `pos` (`kc[100:102].copy_(k)`). Times eager, torchferro and torch.compile in
this process, interleaved call by call; prints the median per call and ratios to eager.
`--before PATH` (repeatable) runs the same in a subprocess with `PYTHONPATH=PATH` (an older
build) and prints it against its own process's eager:

    OMP_NUM_THREADS=1 PYTHONPATH=python .venv/bin/python bench/slice_write.py \\
        --before /work/main/python
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import torch


def mul_slice(x):
    x[2:5].mul_(2)
    return x[3] + 1


def cache_write(kc, k):
    kc[100:102].copy_(k)
    return kc[:102].sum(0)


CASES = {
    "mul_slice": (mul_slice, lambda: (torch.randn(1_000_000),)),
    "cache_write": (cache_write, lambda: (torch.zeros(1024, 64), torch.randn(2, 64))),
}


def measure(calls, variants):
    import torchferro

    compilers = {
        "eager": lambda f: f,
        "torchferro": lambda f: torchferro.compile(f),
        "torch.compile": lambda f: torch.compile(f),
    }
    out = {}
    for case, (fn, make) in CASES.items():
        fns = {v: compilers[v](fn) for v in variants}
        args = {}
        for v in variants:
            torch.manual_seed(0)
            args[v] = make()
        for _ in range(5):
            for v in variants:
                fns[v](*args[v])
        times = {v: [] for v in variants}
        for _ in range(calls):
            for v in variants:
                t0 = time.perf_counter()
                fns[v](*args[v])
                times[v].append(time.perf_counter() - t0)
        for v in variants[1:]:
            torch.testing.assert_close(args[v][0], args[variants[0]][0])
        out[case] = {v: statistics.median(ts) * 1e6 for v, ts in times.items()}
    return out


def show(label, res):
    print(label)
    for case, med in res.items():
        for v, us in med.items():
            print(
                f"  {case:12s} {v:14s} {us:9.1f} us/call  {us / med['eager']:.2f}x eager"
            )


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--calls", type=int, default=300)
    p.add_argument("--variants", default="eager,torchferro,torch.compile")
    p.add_argument("--before", action="append", default=[])
    p.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    a = p.parse_args()
    for path in a.before:
        env = dict(os.environ, PYTHONPATH=path)
        cmd = [sys.executable, __file__, "--calls", str(a.calls), "--json"]
        cmd += ["--variants", "eager,torchferro"]
        res = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
        show(f"before ({path}):", json.loads(res.stdout.strip().splitlines()[-1]))
    res = measure(a.calls, a.variants.split(","))
    if a.json:
        print(json.dumps(res))
        return
    show("this build:", res)


if __name__ == "__main__":
    main()
