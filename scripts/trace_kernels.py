"""Which GPU kernels a profiled step spends its time in, by the host op that launched them.

    python scripts/trace_kernels.py trace.json[.gz] [--top 40] [--classes]

Reads a torch.profiler chrome trace (``scripts/gpu_train_trace.py``): each GPU kernel is tied to
its launch through the trace's correlation ids, and the launch to the innermost of the
``CompiledGraph`` / ``CompiledGraphBackward`` / ``aten::*`` host ranges enclosing it on the
launching thread. Prints the GPU time per host range, then the longest kernels with their grid
and block, in launch order within their graph (``#n``) so they can be matched to the ``kernelN``
functions of the graph's CUDA source. ``--classes`` adds the time per kind of kernel (GEMM,
attention, generated pointwise/reduction, torch's own elementwise/reduction, optimizer, copies)
and per host range, the table that compares two compilers' steps where their top kernels
match but their totals do not."""

from __future__ import annotations

import argparse
import bisect
import collections
import gzip
import json


def load(path: str) -> list[dict]:
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        data = json.load(f)
    return data["traceEvents"] if isinstance(data, dict) else data


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("trace")
    ap.add_argument("--top", type=int, default=40)
    ap.add_argument("--classes", action="store_true")
    a = ap.parse_args()
    events = [e for e in load(a.trace) if e.get("ph") == "X"]
    kernels = [e for e in events if e.get("cat") == "kernel"]
    launches = {
        e["args"]["correlation"]: e
        for e in events
        if e.get("cat") in ("cuda_runtime", "cuda_driver")
        and "correlation" in e.get("args", {})
    }
    ranges = collections.defaultdict(list)
    for e in events:
        if e.get("cat") in ("cpu_op", "user_annotation"):
            name = e["name"]
            if name.startswith("CompiledGraph") or name.startswith("Optimizer"):
                ranges[e["tid"]].append((e["ts"], e["ts"] + e["dur"], name))
    for r in ranges.values():
        r.sort()
    starts = {t: [x[0] for x in r] for t, r in ranges.items()}

    def owner(launch: dict) -> str:
        r, s = ranges.get(launch["tid"], []), starts.get(launch["tid"], [])
        i = bisect.bisect_right(s, launch["ts"]) - 1
        while i >= 0:
            lo, hi, name = r[i]
            if lo <= launch["ts"] <= hi:
                return name
            i -= 1
        return "(other)"

    per_owner = collections.Counter()
    order = collections.Counter()
    rows = []
    for k in sorted(kernels, key=lambda e: e["ts"]):
        launch = launches.get(k["args"].get("correlation"))
        o = owner(launch) if launch else "(no launch)"
        per_owner[o] += k["dur"]
        order[o] += 1
        rows.append(
            (
                k["dur"],
                o,
                order[o],
                k["name"][:60],
                k["args"].get("grid"),
                k["args"].get("block"),
            )
        )
    total = sum(per_owner.values())
    print(f"GPU kernel time {total / 1e3:.2f} ms")
    for o, t in per_owner.most_common():
        print(f"  {o:40} {t / 1e3:8.2f} ms  {order[o]:5} kernels")
    print(f"\nlongest {a.top} kernels")
    for dur, o, n, name, grid, block in sorted(rows, reverse=True)[: a.top]:
        print(f"{dur:9.1f} us  {o:24} #{n:<4} {name:60} grid={grid} block={block}")
    ours = collections.Counter()
    for dur, o, n, name, grid, block in rows:
        if name.startswith("kernel"):
            ours[o] += dur
    print(
        "\nour kernels' time per graph: "
        + ", ".join(f"{o} {t / 1e3:.2f} ms" for o, t in ours.items())
    )
    if a.classes:
        print_classes(rows)


# Kernel kinds by name: the first pattern a name contains (lower-cased) decides.
KINDS = (
    ("attention", ("flash", "fmha", "attention", "sdpa", "attn")),
    ("gemm", ("gemm", "cutlass", "xmma", "cublas", "nvjet", "gemv", "splitk")),
    ("optimizer", ("multi_tensor", "foreach", "fused_adam", "fused_sgd")),
    ("copy", ("memcpy", "memset", "copy", "cat_", "catarray")),
    ("torch reduction", ("reduce_kernel", "softmax", "norm", "welford")),
    ("torch elementwise", ("elementwise", "unrolled", "vectorized")),
    ("index/embedding", ("index", "embedding", "gather", "scatter")),
)


def kind(name: str) -> str:
    if name.startswith("kernel"):
        return "generated (ours)"
    if name.startswith("triton"):
        return "generated (triton)"
    low = name.lower()
    for k, pats in KINDS:
        if any(p in low for p in pats):
            return k
    return "other"


def print_classes(rows: list) -> None:
    per = collections.Counter()
    count = collections.Counter()
    per_owner = collections.defaultdict(collections.Counter)
    other = collections.Counter()
    for dur, o, _n, name, _g, _b in rows:
        k = kind(name)
        per[k] += dur
        count[k] += 1
        per_owner[o.split("[")[0][:28]][k] += dur
        if k == "other":
            other[name] += dur
    print("\nGPU time by kind of kernel")
    for k, t in per.most_common():
        print(f"  {k:22} {t / 1e3:8.2f} ms  {count[k]:5} kernels")
    print("\nby host range and kind (ms)")
    for o, c in sorted(per_owner.items(), key=lambda x: -sum(x[1].values())):
        print(
            f"  {o:28} " + ", ".join(f"{k} {t / 1e3:.2f}" for k, t in c.most_common())
        )
    if other:
        print("\nlongest 'other' kernels (total us)")
        for name, t in other.most_common(12):
            print(f"  {t:9.1f}  {name}")


if __name__ == "__main__":
    main()
