"""Issue 18's dynamic-vs-static ratio at each length, measured in alternating pairs: the finer
probe beside `bench/dynamic_vs_static.py` (which times eager too, best of a few rounds).

One process; the dynamic function is compiled as `bench/dynamic_vs_static.py` compiles it (a
static first graph at the first length, one dynamic graph from the second), each static copy
has its own code object (one graph each). At each length the two run ``--reps`` times in
alternating order (dynamic-static, then static-dynamic), garbage collection off, and the ratio
is given at the minimum, the 20th percentile and the median: on a loaded machine a preempted
call lands in the upper tail, which the minimum and the 20th percentile leave out. Values are
checked against eager's first.

Note that a length after the dynamic graph exists is served by that graph (the most recently
used entry is checked first), the first length too: no column compares two static graphs.
``--first N`` compiles the dynamic function at N and N+1 before the timed lengths, so that no
static entry of its cache matches a timed length (docs/dynamic-shapes.md, session 31: at 2
threads the T=8 calls read slower with a static entry at 8 in the cache in some runs).

    PYTHONPATH=python taskset -c 0 python bench/dynamic_vs_static_pairs.py --model gpt2 --threads 1
    PYTHONPATH=python python bench/dynamic_vs_static_pairs.py --model llama --threads 8 --reps 400
"""

from __future__ import annotations

import argparse
import gc
import logging
import os
import sys
import tempfile
import time
import types

os.environ.setdefault("TORCHFERRO_CACHE_DIR", tempfile.mkdtemp(prefix="tf-dyn-pairs-"))

import torch
import torchferro
import torchferro.compiler

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dynamic_vs_static import LENGTHS, VOCAB, build, with_own_code


def quantile(sorted_values: list[float], q: float) -> float:
    return sorted_values[min(len(sorted_values) - 1, int(len(sorted_values) * q))]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", choices=["gpt2", "llama"], default="gpt2")
    ap.add_argument("--reps", type=int, default=300)
    ap.add_argument("--threads", type=int, default=None, help="torch.set_num_threads")
    ap.add_argument(
        "--lengths", default=",".join(map(str, LENGTHS)), help="comma-separated"
    )
    ap.add_argument(
        "--first",
        type=int,
        default=None,
        help="compile the dynamic function at this length (its static first graph) and the "
        "next (its dynamic graph) before the timed lengths; default: the first two of them",
    )
    args = ap.parse_args(argv)
    logging.getLogger("transformers").setLevel(logging.ERROR)
    torch.set_grad_enabled(False)
    if args.threads:
        torch.set_num_threads(args.threads)
    lengths = [int(t) for t in args.lengths.split(",")]
    model = build(args.model)
    torchferro.compiler.reset()
    torchferro.config.recompile_limit = 64
    first = [] if args.first is None else [args.first, args.first + 1]
    ids = {
        t: torch.randint(0, VOCAB, (1, t), generator=torch.Generator().manual_seed(t))
        for t in first + lengths
    }
    dynamic = torchferro.compile(model)
    for t in first:
        dynamic(input_ids=ids[t], use_cache=False)
    static = {
        t: torchferro.compile(with_own_code(model), dynamic=False) for t in lengths
    }
    for t in lengths:
        want = model(input_ids=ids[t], use_cache=False).logits
        for f in (dynamic, static[t]):
            got = f(input_ids=ids[t], use_cache=False).logits
            torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4)
    gc.disable()
    print(
        f"{args.model}, batch 1, {torch.get_num_threads()} threads, {args.reps} alternating "
        "pairs per length (ms; ratio = dynamic / static)"
    )
    print("| T | dynamic min | static min | ratio min | ratio p20 | ratio median |")
    print("| --: | --: | --: | --: | --: | --: |")
    for t in lengths:
        fns = {
            "dynamic": lambda t=t: dynamic(input_ids=ids[t], use_cache=False),
            "static": lambda t=t: static[t](input_ids=ids[t], use_cache=False),
        }
        times: dict[str, list[float]] = {name: [] for name in fns}
        for r in range(args.reps):
            for name in ("dynamic", "static") if r % 2 else ("static", "dynamic"):
                t0 = time.perf_counter()
                fns[name]()
                times[name].append(time.perf_counter() - t0)
        d, s = sorted(times["dynamic"]), sorted(times["static"])
        print(
            f"| {t} | {d[0] * 1e3:.3f} | {s[0] * 1e3:.3f} | {d[0] / s[0]:.3f} | "
            f"{quantile(d, 0.2) / quantile(s, 0.2):.3f} | "
            f"{quantile(d, 0.5) / quantile(s, 0.5):.3f} |",
            flush=True,
        )
    gc.enable()
    entries = torchferro.compiler.cache_entries(
        types.SimpleNamespace(__code__=type(model).forward.__code__)
    )
    print(
        f"dynamic: {len(entries)} entries ("
        + ", ".join(f"{e['compile_id']} {e['runner']}" for e in entries)
        + ", most recently used first)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
