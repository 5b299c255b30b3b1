"""A KV-cache decode step whose cache is written through a view cut by sizes (session 28,
docs/dynamic-shapes.md "Session 28 (dynwrite28)"): `kc[pos : pos + n].copy_(k)` (and `vc`),
then attention over `kc[: pos + n]`, with `n` (new tokens) and `pos` (an int argument) varying
call by call. Before session 28 such a graph ran on the eager runner (the write's view step read
a graph value); now its functional form takes the bounds as graph values and the inductor
compiles it once for every size.

Times eager, torchferro and torch.compile in this process, interleaved call by call over one
sequence of (pos, n); prints the median per call of each and ratios to eager. `--before PATH`
runs the same measurement in a subprocess with `PYTHONPATH=PATH` (an older torchferro build,
e.g. /work/main/python) and prints both, each against its own process's eager:

    OMP_NUM_THREADS=1 PYTHONPATH=python .venv/bin/python bench/kv_cache_write.py \\
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

T, D = 1024, 64


def step(kc, vc, q, k, v, pos):
    n = k.size(0)
    kc[pos : pos + n].copy_(k)
    vc[pos : pos + n].copy_(v)
    keys = kc[: pos + n]
    a = torch.softmax(q @ keys.t() * 0.125, -1)
    return a @ vc[: pos + n]


def sequence(calls):
    """(pos, n) pairs: n in 2..9, pos walking through the cache and wrapping."""
    out, pos = [], 16
    for i in range(calls):
        n = 2 + (i * 5) % 8
        if pos + n > T:
            pos = 16
        out.append((pos, n))
        pos += n
    return out


def measure(calls, variants):
    import torchferro

    compilers = {
        "eager": lambda f: f,
        "torchferro": lambda f: torchferro.compile(f),
        "torch.compile": lambda f: torch.compile(f),
    }
    gen = torch.Generator().manual_seed(0)
    seq = sequence(calls)
    data = [
        (
            torch.randn(n, D, generator=gen),
            torch.randn(n, D, generator=gen),
            torch.randn(n, D, generator=gen),
            pos,
            n,
        )
        for pos, n in seq
    ]
    fns = {v: compilers[v](step) for v in variants}
    caches = {v: (torch.zeros(T, D), torch.zeros(T, D)) for v in variants}
    # Warm up (compiles, automatic dynamic) on the first calls, checking values against eager.
    for q, k, v_, pos, n in data[:12]:
        want = None
        for name in variants:
            kc, vc = caches[name]
            r = fns[name](kc, vc, q, k, v_, pos)
            if want is None:
                want = r
            else:
                torch.testing.assert_close(r, want, rtol=1e-4, atol=1e-4)
    times = {v: [] for v in variants}
    for q, k, v_, pos, n in data[12:]:
        for name in variants:
            kc, vc = caches[name]
            t0 = time.perf_counter()
            fns[name](kc, vc, q, k, v_, pos)
            times[name].append(time.perf_counter() - t0)
    for name in variants[1:]:
        assert torch.equal(caches[name][0], caches[variants[0]][0]), name
    runner = None
    if "torchferro" in variants:
        entries = torchferro.compiler.cache_entries(step)
        runner = [e["runner"] for e in entries]
    return {v: statistics.median(ts) * 1e6 for v, ts in times.items()}, runner


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--calls", type=int, default=400)
    p.add_argument("--variants", default="eager,torchferro,torch.compile")
    p.add_argument("--before", help="PYTHONPATH of an older torchferro build")
    p.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    a = p.parse_args()
    variants = a.variants.split(",")
    if a.before:
        env = dict(os.environ, PYTHONPATH=a.before)
        out = subprocess.run(
            [
                sys.executable,
                __file__,
                "--calls",
                str(a.calls),
                "--json",
                "--variants",
                "eager,torchferro",
            ],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        before, runner = json.loads(out.strip().splitlines()[-1])
        print(f"before ({a.before}): torchferro entries run on {runner}")
        for v, us in before.items():
            print(f"  {v:14s} {us:8.1f} us/call  {us / before['eager']:.2f}x eager")
    med, runner = measure(a.calls, variants)
    if a.json:
        print(json.dumps([med, runner]))
        return
    print(f"this build: torchferro entries run on {runner}")
    for v, us in med.items():
        print(f"  {v:14s} {us:8.1f} us/call  {us / med['eager']:.2f}x eager")


if __name__ == "__main__":
    main()
