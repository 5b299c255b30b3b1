"""One steady decoding step of the bench's Llama (`workloads.llama_generate`: 2x8 prompt) timed in
isolation: each variant's compiled forward is called again and again on the arguments of the
11th forward call of a `generate` (the 10th decoding step, on a cache of 17 positions), with the cache layers'
key and value tensors put back before every call (the step's attribute writes would otherwise
grow the cache by one per call). Variants interleaved call by call; median, 10th percentile and
minimum per call. Short enough per call to profile: `perf record -D <ms past setup> -g
--call-graph dwarf` around `--variants torchferro --calls 10000`, reported with `perf report
--no-inline` (without `--no-inline` the dwarf report resolves inlined frames for minutes).

    OMP_NUM_THREADS=1 PYTHONPATH=python .venv/bin/python bench/decode_step.py --calls 500

`--variants eager,torchferro,torchferro-nomemo,torch.compile` adds torchferro with the guard
memo off (session 27) and prints each torchferro variant's guard checks and fetches per call.
"""

from __future__ import annotations

import argparse
import copy
import statistics
import time

import torch
import torchferro
import workloads

COMPILERS = {
    "eager": lambda f: f,
    "torchferro": torchferro.compile,
    "torch.compile": torch.compile,
    # torchferro with its guard walks' memo off (`tracer/src/guards/memo.rs`): the walk as
    # before session 27, in the same process (the switch is flipped around each timed call).
    "torchferro-nomemo": torchferro.compile,
}


def memo_switched(name, call):
    """`call` with the guard memo set for variant `name` (flipped outside the timed part)."""
    if not name.startswith("torchferro"):
        return call
    on = name == "torchferro"

    def switched():
        torchferro._C._guard_memo(on)
        return call()

    return switched


CLOCK = time.perf_counter


def step_call(model, ids, compile_fn, at: int = 10):
    """A function that runs decoding step `at` of `generate` once on the compiled forward of a
    copy of `model` and returns its wall time."""
    m = copy.deepcopy(model)
    f = compile_fn(m.forward)
    seen: list = []

    def record(*a, **kw):
        if len(seen) == at:
            cache = kw.get("past_key_values", kw.get("cache"))
            kept = [(layer.keys, layer.values) for layer in cache.layers]
            seen.append((a, kw, cache, kept))
        else:
            seen.append(None)
        return f(*a, **kw)

    m.forward = record
    with torch.no_grad():
        # The second `generate` runs on the entries the first compiled.
        for _ in range(2):
            seen.clear()
            m.generate(ids, max_new_tokens=16, do_sample=False)
    a, kw, cache, kept = seen[at]

    def call() -> float:
        for layer, (k, v) in zip(cache.layers, kept):
            layer.keys, layer.values = k, v
        t = CLOCK()
        f(*a, **kw)
        return CLOCK() - t

    return call


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--calls", type=int, default=500)
    ap.add_argument("--variants", default=",".join(COMPILERS))
    ap.add_argument(
        "--clock",
        choices=("wall", "cpu"),
        default="wall",
        help="cpu: the thread's CPU time (steadier on a loaded machine)",
    )
    args = ap.parse_args()
    if args.clock == "cpu":
        global CLOCK
        CLOCK = time.thread_time
    torch.set_num_threads(1)
    model, cfg, _ = workloads._llama("cpu", False)
    ids = workloads._ids(cfg, (2, 8), "cpu", workloads._gen("cpu"))
    names = args.variants.split(",")
    calls = {n: memo_switched(n, step_call(model, ids, COMPILERS[n])) for n in names}
    times: dict[str, list[float]] = {n: [] for n in names}
    with torch.no_grad():
        for i in range(args.calls):
            # The order rotates every round: the variant run right after another one's call
            # pays for what that call evicted (measured: ~20% on the one after torch.compile).
            k = i % len(names)
            for n in names[k:] + names[:k]:
                times[n].append(calls[n]())
    with torch.no_grad():
        for n in names:
            if n.startswith("torchferro"):
                calls[n]()
                torchferro._C._guard_counts()
                calls[n]()
                ev, sk, fe, re_ = torchferro._C._guard_counts()
                print(
                    f"{n}: guard checks per call {ev} run, {sk} skipped; values {fe} "
                    f"fetched, {re_} reused"
                )
    torchferro._C._guard_memo(True)
    for n in names:
        s = sorted(times[n])
        print(
            f"{n:14s} median {statistics.median(s) * 1e6:7.1f} us  "
            f"p10 {s[len(s) // 10] * 1e6:7.1f}  min {s[0] * 1e6:7.1f}"
        )


if __name__ == "__main__":
    main()
