"""Per-call time of the ops lowered as index maps over symbolic sizes (session 29,
``inductor/src/lower/index_maps.rs``): ``repeat``, ``unflatten``, ``Tensor.unfold``,
``diagonal``, ``gather``, ``F.interpolate`` nearest and linear. For each program and row count,
in one process: eager, torchferro's dynamic compile (``dynamic=True``: one library with the
sizes as arguments) and its static one (``dynamic=False``: a graph and kernels per size), and
torch.compile's (default inductor) dynamic compile, with ``--torch-static`` its static one too.
Each variant runs a function with a code object of its own (its own cache). Every call's
values are checked against eager's. Per-call time is the best of ``--reps`` rounds, the
variants' order rotating per round (load on the machine falls on all alike).

    PYTHONPATH=python python bench/dynamic_index_maps.py [--reps 30] [--rows 256,333,512,1000]

Reported: microseconds per call, and the ratios dynamic / static (issue 18's goal: within 5%)
for each compiler, and torchferro's dynamic / torch.compile's dynamic.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
import types
import warnings

os.environ.setdefault("TORCHFERRO_CACHE_DIR", tempfile.mkdtemp(prefix="tf-idxmap-"))
# One thread for every variant (a shared 2-core machine; kernels and torch alike).
os.environ.setdefault("OMP_NUM_THREADS", "1")

import torch
import torch._dynamo
import torch.nn.functional as F
import torchferro
import torchferro.compiler


def repeat(x):
    return x.repeat(2, 1) + 1


def unflatten(x):
    return x.unflatten(1, (2, -1)).transpose(1, 2) * 2


def unfold(x):
    return x.unfold(1, 4, 2).sum(-1)


def diagonal(x):
    return torch.diagonal(x.unsqueeze(2) * x.unsqueeze(1), 0, 1, 2) - x


def gather(x):
    i = torch.arange(x.size(1) - 1, -1, -1).expand(x.size(0), -1)
    return x.gather(1, i) * 2


def nearest(x):
    return F.interpolate(x.unsqueeze(0), scale_factor=2)


def linear(x):
    return F.interpolate(x.unsqueeze(0), scale_factor=0.5, mode="linear")


PROGRAMS = [repeat, unflatten, unfold, diagonal, gather, nearest, linear]


def own_code(f):
    """``f`` with a code object of its own: a cache of its own in both compilers."""
    code = f.__code__.replace()
    return types.FunctionType(code, f.__globals__, f.__name__, f.__defaults__)


def best(f, x, reps_out, key):
    t0 = time.perf_counter()
    f(x)
    reps_out.setdefault(key, []).append(time.perf_counter() - t0)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--rows", default="256,333,512,1000")
    ap.add_argument("--cols", type=int, default=512)
    ap.add_argument("--torch-static", action="store_true")
    ap.add_argument("--programs", default=",".join(p.__name__ for p in PROGRAMS))
    args = ap.parse_args()
    rows = [int(r) for r in args.rows.split(",")]
    torch.set_num_threads(1)
    warnings.simplefilter("ignore")
    torch._dynamo.config.cache_size_limit = 64
    wanted = set(args.programs.split(","))
    print(
        f"rows {rows}, cols {args.cols}, best of {args.reps}, 1 thread; us per call; "
        "ratios dynamic/static"
    )
    header = (
        f"{'program':10} {'rows':>5} {'eager':>8} {'tf dyn':>8} {'tf stat':>8} "
        f"{'tc dyn':>8}" + (f" {'tc stat':>8}" if args.torch_static else "")
    )
    header += f" {'tf d/s':>7} {'tf d/tc d':>9}" + (
        f" {'tc d/s':>7}" if args.torch_static else ""
    )
    print(header)
    for p in PROGRAMS:
        if p.__name__ not in wanted:
            continue
        torchferro.compiler.reset()
        torch._dynamo.reset()
        variants = {
            "eager": p,
            "tf_dyn": torchferro.compile(own_code(p), dynamic=True),
            "tc_dyn": torch.compile(own_code(p), dynamic=True),
        }
        statics = {}
        with torch.no_grad():
            for r in rows:
                x = torch.randn(r, args.cols)
                want = p(x)
                # A static compile per size (its own code object: no automatic dynamic).
                statics["tf_stat"] = torchferro.compile(own_code(p), dynamic=False)
                if args.torch_static:
                    statics["tc_stat"] = torch.compile(own_code(p), dynamic=False)
                vs = {**variants, **statics}
                for name, f in vs.items():
                    torch.testing.assert_close(f(x), want, rtol=1e-5, atol=1e-5)
                times = {}
                order = list(vs)
                for k in range(args.reps):
                    order = order[1:] + order[:1]
                    for name in order:
                        best(vs[name], x, times, name)
                us = {n: min(ts) * 1e6 for n, ts in times.items()}
                line = (
                    f"{p.__name__:10} {r:5} {us['eager']:8.1f} {us['tf_dyn']:8.1f} "
                    f"{us['tf_stat']:8.1f} {us['tc_dyn']:8.1f}"
                )
                if args.torch_static:
                    line += f" {us['tc_stat']:8.1f}"
                line += (
                    f" {us['tf_dyn'] / us['tf_stat']:7.2f}"
                    f" {us['tf_dyn'] / us['tc_dyn']:9.2f}"
                )
                if args.torch_static:
                    line += f" {us['tc_dyn'] / us['tc_stat']:7.2f}"
                print(line, flush=True)
        entries = torchferro.compiler.cache_entries(variants["tf_dyn"])
        print(
            f"{'':10} torchferro dynamic: {len(entries)} graph(s), runners "
            f"{sorted({e['runner'] for e in entries})}"
        )


if __name__ == "__main__":
    main()
