"""One pooling kernel, eager / static / symbolic, in one process (issue 18, session 18's "Left":
the symbolic ``avg_pool2d(relu(x), 3, 2, 1)`` clamps and masks every window read).

``static`` compiles with ``dynamic=False`` at each shape; ``dynamic`` compiles with
``dynamic=True`` (its first call at another shape), so every measured shape runs the one
symbolic library. Per shape and variant: the best of ``--reps`` calls (ms), the variants
interleaved; values checked against eager's.

    OMP_NUM_THREADS=1 PYTHONPATH=python python bench/pool_kernel.py [--reps 200] [--op avg|max]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
import types

os.environ.setdefault(
    "TORCHFERRO_CACHE_DIR", tempfile.mkdtemp(prefix="tf-pool-kernel-")
)

import torch
import torch.nn.functional as F
import torchferro
import torchferro.compiler

SHAPES = [(2, 16, 64, 64), (2, 16, 40, 40), (2, 16, 17, 23), (2, 16, 128, 128)]


def avg(x):
    return F.avg_pool2d(F.relu(x), 3, 2, 1)


def mx(x):
    return F.max_pool2d(F.relu(x), 3, 2, 1)


def copy_of(fn, name):
    """``fn`` with a code object of its own: compiled frames are cached per code object, so the
    static and the dynamic variant must not share one."""
    code = fn.__code__.replace(co_name=name)
    return types.FunctionType(code, fn.__globals__, name)


def best(fn, x, reps):
    t = float("inf")
    for _ in range(reps):
        s = time.perf_counter()
        fn(x)
        t = min(t, time.perf_counter() - s)
    return t * 1e3


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--op", choices=["avg", "max"], default="avg")
    args = ap.parse_args()
    fn = avg if args.op == "avg" else mx
    torch.manual_seed(0)
    dynamic = torchferro.compile(copy_of(fn, "dynamic_pool"), dynamic=True)
    with torch.no_grad():
        dynamic(torch.randn(2, 16, 9, 11))
        print(f"{args.op}_pool2d(relu(x), 3, 2, 1), best of {args.reps}, ms")
        print(
            f"{'shape':<20} {'eager':>8} {'static':>8} {'dynamic':>8} {'dyn/eager':>9}"
        )
        for shape in SHAPES:
            x = torch.randn(*shape)
            static = torchferro.compile(
                copy_of(fn, f"static_pool_{shape[2]}"), dynamic=False
            )
            want = fn(x)
            for f in (static, dynamic):
                torch.testing.assert_close(f(x), want)
            times = {
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
                    times[name] = min(times[name], best(f, x, args.reps // 5))
            print(
                f"{str(list(shape)):<20} {times['eager']:8.4f} {times['static']:8.4f} "
                f"{times['dynamic']:8.4f} {times['dynamic'] / times['eager']:9.2f}"
            )
        entries = torchferro.compiler.cache_entries(dynamic)
        print("dynamic graphs:", len(entries), [e["runner"] for e in entries])


if __name__ == "__main__":
    main()
