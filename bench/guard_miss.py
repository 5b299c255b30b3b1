"""Per-call cost of a guard miss: the 72-module tower of `tree_guards.py` compiled with
`dynamic=False` and called on two input shapes, so its code has two cache entries. "hit" calls
one shape (the entry it needs is the most recent one); "alternate" switches shape every call
(the other entry is the most recent, so each call first misses it). The input's size, the check
that tells the entries apart, is guarded after the whole module tree: a lookup that walks the
guards in trie order pays nearly a full walk per miss. torchferro and torch.compile (both
`backend="eager"`), interleaved; medians in microseconds per call.

    OMP_NUM_THREADS=1 PYTHONPATH=python .venv/bin/python bench/guard_miss.py --reps 200

`--clock cpu` times with the thread's CPU clock (`time.thread_time`) instead of the wall clock:
on a machine shared with builds (load above the core count) the wall clock also counts the
time the process waited for a core, which moved medians by 2x between runs of one build.
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch
import torchferro
from tree_guards import Tower


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--calls", type=int, default=100, help="calls per sample")
    ap.add_argument("--clock", choices=("wall", "cpu"), default="wall")
    args = ap.parse_args()
    torch.set_num_threads(1)
    a, b = torch.randn(4, 4), torch.randn(5, 4)
    fns = {
        "torchferro": torchferro.compile(
            Tower().eval(), backend="eager", dynamic=False
        ),
        "torch.compile": torch.compile(Tower().eval(), backend="eager", dynamic=False),
    }
    plans = {"hit": [a] * args.calls, "alternate": [a, b] * (args.calls // 2)}
    samples = {(v, p): [] for v in fns for p in plans}
    keys = list(samples)
    clock = time.perf_counter if args.clock == "wall" else time.thread_time
    with torch.no_grad():
        for f in fns.values():
            for x in (a, b, a, b):
                f(x)
        for rep in range(args.reps):
            k = rep % len(keys)
            for v, p in keys[k:] + keys[:k]:
                f, xs = fns[v], plans[p]
                t = clock()
                for x in xs:
                    f(x)
                samples[(v, p)].append((clock() - t) / len(xs) * 1e6)
    for v in fns:
        hit = statistics.median(samples[(v, "hit")])
        alt = statistics.median(samples[(v, "alternate")])
        print(
            f"{v:14s} hit {hit:7.1f} us/call  alternate {alt:7.1f} us/call  "
            f"miss {alt - hit:6.1f} us"
        )


if __name__ == "__main__":
    main()
