"""`generate` of the bench's Llama (`workloads.llama_generate`: 2x8 prompt, 16 new tokens) with
every call of the forward timed inside it: eager, torchferro and torch.compile (default
arguments), interleaved in one process, the order rotated every round. Per variant, medians over
rounds: the whole `generate`, the time inside the forward calls, the time outside them (generate's
own Python and the torch ops between calls), the prefill, the first and second decoding steps and
the median of the steady steps (3rd on), and the garbage collections per `generate`. Then the
graphs each compiler made over the whole run (torchferro: the compiled forward's cache entries;
torch.compile: dynamo's unique graphs), which `--new 32` shows unchanged by a longer generation.

    OMP_NUM_THREADS=1 PYTHONPATH=python .venv/bin/python bench/generate_steps.py --rounds 20
"""

from __future__ import annotations

import argparse
import copy
import gc
import statistics
import time

import torch
import torch._dynamo.utils
import torchferro
import workloads


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--new", type=int, default=16, help="new tokens")
    args = ap.parse_args()
    torch.set_num_threads(1)
    model, cfg, _ = workloads._llama("cpu", False)
    ids = workloads._ids(cfg, (2, 8), "cpu", workloads._gen("cpu"))
    compilers = {
        "eager": lambda f: f,
        "torchferro": torchferro.compile,
        "torch.compile": torch.compile,
    }
    variants = {}
    for name, compile_fn in compilers.items():
        m = copy.deepcopy(model)
        f = compile_fn(m.forward)
        times: list[float] = []

        def timed(*a, _f=f, _times=times, **kw):
            t = time.perf_counter()
            out = _f(*a, **kw)
            _times.append(time.perf_counter() - t)
            return out

        m.forward = timed
        variants[name] = (m, times)
        if name == "torchferro":
            compiled_tf = f
    collections = [0]
    gc.callbacks.append(
        lambda phase, info: collections.__setitem__(
            0, collections[0] + (phase == "start")
        )
    )
    res = {n: {"gen": [], "steps": [], "gc": []} for n in variants}
    order = list(variants)
    with torch.no_grad():
        for m, times in variants.values():
            for _ in range(2):
                m.generate(ids, max_new_tokens=args.new, do_sample=False)
            times.clear()
        for _ in range(args.rounds):
            for n in order:
                m, times = variants[n]
                times.clear()
                c0 = collections[0]
                t = time.perf_counter()
                m.generate(ids, max_new_tokens=args.new, do_sample=False)
                res[n]["gen"].append(time.perf_counter() - t)
                res[n]["steps"].append(list(times))
                res[n]["gc"].append(collections[0] - c0)
            order = order[1:] + order[:1]
    for n, r in res.items():
        steps = r["steps"]
        per = [
            statistics.median(s[i] for s in steps) * 1e6 for i in range(len(steps[0]))
        ]
        inside = [sum(s) for s in steps]
        outside = [g - i for g, i in zip(r["gen"], inside)]
        print(
            f"{n:14s} generate {statistics.median(r['gen']) * 1e3:6.2f} ms  "
            f"inside {statistics.median(inside) * 1e3:6.2f}  "
            f"outside {statistics.median(outside) * 1e3:5.2f} ms  "
            f"prefill {per[0]:5.0f}  step 1 {per[1]:4.0f}  step 2 {per[2]:4.0f}  "
            f"steady {statistics.median(per[3:]):4.0f} us  "
            f"gc {statistics.mean(r['gc']):.2f}"
        )
    print(
        f"graphs: torchferro {len(torchferro.compiler.cache_entries(compiled_tf))}, "
        f"torch.compile {torch._dynamo.utils.counters['stats']['unique_graphs']} "
        f"({args.new} new tokens)"
    )


if __name__ == "__main__":
    main()
