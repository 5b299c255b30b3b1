"""One steady decoding step of the bench's Llama (`workloads.llama_generate`: 2x8 prompt) timed in
isolation: each variant's compiled forward is called again and again on the arguments of the
11th forward call of a `generate` (the 10th decoding step, on a cache of 17 positions), with the cache layers'
key and value tensors put back before every call (the step's attribute writes would otherwise
grow the cache by one per call). Variants interleaved call by call; median, 10th percentile and
minimum per call. Short enough per call to profile: `perf record -D <ms past setup> -g
--call-graph dwarf` around `--variants torchferro --calls 10000`, reported with `perf report
--no-inline` (without `--no-inline` the dwarf report resolves inlined frames for minutes).

    OMP_NUM_THREADS=1 PYTHONPATH=python .venv/bin/python bench/decode_step.py --calls 500
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
}


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
        t = time.perf_counter()
        f(*a, **kw)
        return time.perf_counter() - t

    return call


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--calls", type=int, default=500)
    ap.add_argument("--variants", default=",".join(COMPILERS))
    args = ap.parse_args()
    torch.set_num_threads(1)
    model, cfg, _ = workloads._llama("cpu", False)
    ids = workloads._ids(cfg, (2, 8), "cpu", workloads._gen("cpu"))
    names = args.variants.split(",")
    calls = {n: step_call(model, ids, COMPILERS[n]) for n in names}
    times: dict[str, list[float]] = {n: [] for n in names}
    with torch.no_grad():
        for _ in range(args.calls):
            for n in names:
                times[n].append(calls[n]())
    for n in names:
        s = sorted(times[n])
        print(
            f"{n:14s} median {statistics.median(s) * 1e6:7.1f} us  "
            f"p10 {s[len(s) // 10] * 1e6:7.1f}  min {s[0] * 1e6:7.1f}"
        )


if __name__ == "__main__":
    main()
