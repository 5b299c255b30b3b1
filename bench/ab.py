"""Interleaved A/B of two torchferro builds on the CPU bench workloads, reported as ratios.

    python bench/ab.py --old DIR --new DIR [--rounds 5] [--only a,b] [--quick]

``DIR`` is a directory holding a built ``torchferro`` package (the ``python/`` folder of a
checkout with its extension in place). Each round runs one fresh process per build, in
alternating order, so that a machine that drifts (thermal state, other load) moves both sides
alike. In each process every workload is compiled (first call timed: trace + compile, with an
empty kernel cache) and then timed over back-to-back calls after warm-up. The report is the
median over rounds of each figure and the ratio new/old: below 1 is faster.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
MARK = "AB_RESULT "


def child(names: list[str], quick: bool) -> None:
    import time

    import torch

    sys.path.insert(0, HERE)
    import torchferro
    import workloads

    torch.manual_seed(0)
    out = {}
    for name in names:
        w = workloads.by_name(name)
        built = w.build("cpu", quick)
        ctx = torch.enable_grad() if w.train else torch.no_grad()
        with ctx:
            fn = built.make(torchferro.compile)
            t0 = time.perf_counter()
            fn(*built.args)
            first = time.perf_counter() - t0
            n = 3
            for _ in range(n):
                fn(*built.args)
            # Calls per sample so that one sample takes about 50 ms.
            t0 = time.perf_counter()
            fn(*built.args)
            one = max(time.perf_counter() - t0, 1e-6)
            per = max(1, int(0.05 / one))
            samples = []
            for _ in range(15):
                t0 = time.perf_counter()
                for _ in range(per):
                    fn(*built.args)
                samples.append((time.perf_counter() - t0) / per)
        out[name] = {"first_s": first, "run_s": statistics.median(samples)}
        torchferro.compiler.reset()
    print(MARK + json.dumps(out), flush=True)


def run_one(pkg: str, names: list[str], quick: bool) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = pkg
    env["TORCHFERRO_CACHE_DIR"] = tempfile.mkdtemp(prefix="tf-ab-")
    argv = [sys.executable, os.path.abspath(__file__), "--child", ",".join(names)]
    if quick:
        argv.append("--quick")
    r = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=1800)
    for line in r.stdout.splitlines():
        if line.startswith(MARK):
            return json.loads(line[len(MARK) :])
    raise RuntimeError(f"child failed ({pkg}):\n{r.stdout[-2000:]}\n{r.stderr[-4000:]}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--old")
    ap.add_argument("--new")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--only", default="")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--child", default=None)
    a = ap.parse_args()
    if a.child is not None:
        child(a.child.split(","), a.quick)
        return
    sys.path.insert(0, HERE)
    import workloads

    names = [w.name for w in workloads.WORKLOADS if w.torchferro and not w.missing()]
    if a.only:
        names = [n for n in names if n in a.only.split(",")]
    runs: dict[str, list[dict]] = {"old": [], "new": []}
    for r in range(a.rounds):
        order = ["old", "new"] if r % 2 == 0 else ["new", "old"]
        for side in order:
            runs[side].append(run_one(getattr(a, side), names, a.quick))
        print(f"round {r + 1}/{a.rounds} done", file=sys.stderr, flush=True)
    print(
        f"{'workload':<12} {'run old':>10} {'run new':>10} {'ratio':>6}   "
        f"{'first old':>10} {'first new':>10} {'ratio':>6}"
    )
    for n in names:
        med = {
            s: {
                k: statistics.median(x[n][k] for x in runs[s])
                for k in ("run_s", "first_s")
            }
            for s in runs
        }
        rr = med["new"]["run_s"] / med["old"]["run_s"]
        fr = med["new"]["first_s"] / med["old"]["first_s"]
        print(
            f"{n:<12} {med['old']['run_s'] * 1e3:>8.3f}ms {med['new']['run_s'] * 1e3:>8.3f}ms "
            f"{rr:>6.3f}   {med['old']['first_s'] * 1e3:>8.1f}ms {med['new']['first_s'] * 1e3:>8.1f}ms "
            f"{fr:>6.3f}"
        )
    print(
        json.dumps(runs),
        file=open(os.path.join(tempfile.gettempdir(), "ab-runs.json"), "w"),
    )


if __name__ == "__main__":
    main()
