"""Run time of long-row float reductions: two torchferro builds interleaved, eager beside them.

    python scripts/reduction_speed.py --old DIR --new DIR [--rounds 5] [--cpu-time]

``DIR`` holds a built ``torchferro`` package (a checkout's ``python/`` with its extension). Each
round runs one fresh process per build, alternating their order; each process compiles every
case and times back-to-back calls after warm-up (median of the call times). Printed: the
median over rounds per build, the ratio new/old (below 1 is faster) and eager's time.
``--cpu-time``: one thread (``OMP_NUM_THREADS=1``) timed by the process's CPU time, not the
wall clock: on a shared, overloaded machine the wall clock mostly measures the scheduler.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

MARK = "SPEED "

CASES = {
    "sum_inner[64,262144]": ((64, 262144), lambda x: x.sum(1)),
    "sum_outer[4e6,2]": ((4_000_000, 2), lambda x: x.sum(0)),
    "mean_inner[2,4e6]": ((2, 4_000_000), lambda x: x.mean(1)),
    "softmax[256,16384]": ((256, 16384), lambda x: x.softmax(1)),
    "layer_norm[256,16384]": (
        (256, 16384),
        lambda x: __import__("torch").nn.functional.layer_norm(x, (x.shape[-1],)),
    ),
    "sum_inner[4096,2048]": ((4096, 2048), lambda x: x.sum(1)),
}


def timed(f, x, reps: int) -> float:
    clock = time.process_time if os.environ.get("SPEED_CPU") else time.perf_counter
    for _ in range(3):
        f(x)
    ts = []
    for _ in range(reps):
        t = clock()
        f(x)
        ts.append(clock() - t)
    return statistics.median(ts)


def child(eager: bool) -> None:
    import torch
    import torchferro

    torch.manual_seed(0)
    out = {}
    for name, (shape, fn) in CASES.items():
        x = torch.rand(shape)
        out[name] = timed(torchferro.compile(fn), x, 30)
        if eager:
            out[name + " eager"] = timed(fn, x, 30)
    print(MARK + json.dumps(out), flush=True)


def run(pkg: str, eager: bool, cpu: bool) -> dict:
    env = dict(os.environ, PYTHONPATH=pkg)
    if cpu:
        env.update(SPEED_CPU="1", OMP_NUM_THREADS="1")
    args = [sys.executable, __file__, "--child"] + (["--eager"] if eager else [])
    p = subprocess.run(args, env=env, capture_output=True, text=True, check=True)
    line = next(ln for ln in p.stdout.splitlines() if ln.startswith(MARK))
    return json.loads(line[len(MARK) :])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--old")
    ap.add_argument("--new")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--child", action="store_true")
    ap.add_argument("--eager", action="store_true")
    ap.add_argument("--cpu-time", action="store_true")
    a = ap.parse_args()
    if a.child:
        child(a.eager)
        return
    res = {"old": [], "new": []}
    for r in range(a.rounds):
        order = ["old", "new"] if r % 2 == 0 else ["new", "old"]
        for side in order:
            res[side].append(run(getattr(a, side), eager=side == "new", cpu=a.cpu_time))
        print(f"round {r + 1}/{a.rounds} done", file=sys.stderr, flush=True)
    print(f"{'case':26} {'old us':>9} {'new us':>9} {'new/old':>8} {'eager us':>9}")
    for name in CASES:
        old = statistics.median(d[name] for d in res["old"]) * 1e6
        new = statistics.median(d[name] for d in res["new"]) * 1e6
        eager = statistics.median(d[name + " eager"] for d in res["new"]) * 1e6
        print(f"{name:26} {old:9.0f} {new:9.0f} {new / old:8.3f} {eager:9.0f}")


if __name__ == "__main__":
    main()
