"""Times the static graphs ``scripts/compare_static_c.py`` compiles, under the build on
``PYTHONPATH``: for each named program and size, eager and torchferro (``dynamic=False``), the
median of ``--repeats`` rounds of the best of ``--reps`` calls (µs), interleaved; results
checked against eager's. Run it under two builds to time the graphs whose C changed:

    OMP_NUM_THREADS=1 PYTHONPATH=python python bench/static_c_timing.py views cat chunk_narrow
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
import types

os.environ.setdefault("TORCHFERRO_CACHE_DIR", tempfile.mkdtemp(prefix="tf-static-c-"))
sys.path.insert(
    0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests")
)

import test_dynamic_inductor as T
import torch
import torchferro
import torchferro.compiler

# The extra programs of scripts/compare_static_c.py that involve a cat.
EXTRA = {
    "cat": (lambda x, y: torch.cat([x, y], 1) * 2, lambda n: (T.R(n, 3), T.R(n, n))),
    "chunk_narrow": (
        lambda x: torch.cat(x.chunk(2, 1)[::-1], 1) + x.narrow(1, 1, 1),
        lambda n: (T.R(n, 8),),
    ),
}


def best_of(fn, args, reps):
    t = float("inf")
    for _ in range(reps):
        s = time.perf_counter()
        fn(*args)
        t = min(t, time.perf_counter() - s)
    return t * 1e6


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("names", nargs="+")
    ap.add_argument("--sizes", type=int, nargs="+", default=[2, 3, 13, 512])
    ap.add_argument("--reps", type=int, default=300)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    programs = {**T.PROGRAMS, **EXTRA}
    print(f"load {os.getloadavg()[0]:.2f}, threads {torch.get_num_threads()}")
    print(f"{'program':<14} {'n':>4} {'eager us':>9} {'torchferro us':>14}")
    with torch.no_grad():
        for name in args.names:
            fn, make = programs[name]
            for n in args.sizes:
                torch.manual_seed(n)
                inputs = make(n)
                torchferro.compiler.reset()
                code = fn.__code__.replace(co_name=f"{name}_{n}")
                tf = torchferro.compile(
                    types.FunctionType(code, fn.__globals__), dynamic=False
                )
                torch.testing.assert_close(tf(*inputs), fn(*inputs))
                ts = {"eager": [], "tf": []}
                for _ in range(args.repeats):
                    ts["eager"].append(best_of(fn, inputs, args.reps))
                    ts["tf"].append(best_of(tf, inputs, args.reps))
                e, t = (statistics.median(v) for v in ts.values())
                print(f"{name:<14} {n:>4} {e:>9.1f} {t:>14.1f}")
    print(f"load after {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
