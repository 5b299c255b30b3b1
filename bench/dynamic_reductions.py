"""Reductions over symbolic sizes against static ones (issue 18's goals: compiling the dynamic
graph costs at most 2x the static one; per call within 5% of static).

For each op (sum, mean and amax over the last dim, sum over the last two, softmax, layer_norm
over the last dim of a 3-d ``x``) the dynamic graph (``dynamic=True``, one library for every
shape) and a static graph per shape (a code object each) are compiled with a fresh kernel
cache; the C compiler's CPU time (user + system of the child processes during the first call)
is the compile cost, measured apart from the machine's load. Per-call times are the best of
``--reps`` calls in 5 rounds, eager, static and dynamic interleaved so load falls on all
alike. Values are checked against eager.

    OMP_NUM_THREADS=1 PYTHONPATH=python python bench/dynamic_reductions.py [--reps 200]
"""

from __future__ import annotations

import argparse
import os
import resource
import tempfile
import time
import types

os.environ["TORCHFERRO_CACHE_DIR"] = tempfile.mkdtemp(prefix="tf-dynred-")

import torch
import torch.nn.functional as F
import torchferro

OPS = {
    "sum(-1)": lambda x: x.sum(-1),
    "mean(-1)": lambda x: x.mean(-1),
    "amax(-1)": lambda x: x.amax(-1),
    "sum(-2|-1)": lambda x: x.sum((-2, -1)),
    "softmax(-1)": lambda x: torch.softmax(x, -1),
    "layer_norm": lambda x: F.layer_norm(x, x.shape[-1:]),
}
SHAPES = [(2, 16, 17), (4, 33, 64), (8, 64, 256), (3, 100, 1000)]


def copy_of(fn, name):
    """``fn`` with a code object of its own (compiled frames are cached per code object)."""
    return types.FunctionType(fn.__code__.replace(co_name=name), fn.__globals__, name)


def child_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def first_call(f, x):
    """The C compiler's CPU time during ``f``'s first call, with a fresh kernel cache."""
    os.environ["TORCHFERRO_CACHE_DIR"] = tempfile.mkdtemp(prefix="tf-dynred-")
    c0 = child_cpu()
    f(x)
    return child_cpu() - c0


def best(fn, x, reps):
    t = float("inf")
    for _ in range(reps):
        s = time.perf_counter()
        fn(x)
        t = min(t, time.perf_counter() - s)
    return t * 1e6


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--ops", default=",".join(OPS))
    args = ap.parse_args()
    torch.manual_seed(0)
    print(
        f"best of {args.reps} calls, us; gcc = C compiler CPU seconds at the first call"
    )
    print(
        "| op | shape | eager | static | dynamic | dyn/static | gcc static | gcc dynamic |"
    )
    print("| --- | --- | --: | --: | --: | --: | --: | --: |")
    with torch.no_grad():
        for op in args.ops.split(","):
            fn = OPS[op]
            dynamic = torchferro.compile(copy_of(fn, "dyn"), dynamic=True)
            xs = [torch.randn(*s) for s in SHAPES]
            gcc_dyn = first_call(dynamic, xs[0])
            for shape, x in zip(SHAPES, xs):
                tag = "_".join(map(str, shape))
                static = torchferro.compile(copy_of(fn, f"st_{tag}"), dynamic=False)
                gcc_st = first_call(static, x)
                want = fn(x)
                for f in (static, dynamic):
                    torch.testing.assert_close(f(x), want, rtol=1e-4, atol=1e-4)
                t = {
                    "eager": float("inf"),
                    "static": float("inf"),
                    "dynamic": float("inf"),
                }
                for _ in range(5):
                    for name, f in (
                        ("eager", fn),
                        ("static", static),
                        ("dynamic", dynamic),
                    ):
                        t[name] = min(t[name], best(f, x, args.reps // 5))
                print(
                    f"| {op} | {list(shape)} | {t['eager']:.1f} | {t['static']:.1f} | "
                    f"{t['dynamic']:.1f} | {t['dynamic'] / t['static']:.3f} | {gcc_st:.3f} | "
                    f"{gcc_dyn:.3f} |"
                )
                gcc_dyn = 0.0
            entries = torchferro.compiler.cache_entries(dynamic)
            assert len(entries) == 1 and "tf_sym" in entries[0]["output_code"], entries


if __name__ == "__main__":
    main()
