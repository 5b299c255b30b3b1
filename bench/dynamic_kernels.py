"""Dynamic vs static compiled kernels for a transformer block (issue 18).

Measures (0) the first call (trace and compile, fresh kernel cache) of two small graphs,
dynamic against static, and, for a GPT-2-like block (the acceptance tests' ``Block``, width
256), (1) the first
call's time (trace and compile) of the ``dynamic=True`` graph against the static one, each with
a fresh kernel cache and a size of its own, (2) the first call of the dynamic graph at each
later size (its kernels take the sizes as arguments: the graph is lowered at the new size and
checked against the library, no C compile; with ``TORCHFERRO_SIZE_ARGS=0``, a library compiled
per size), (3) the runs of the C compiler for the dynamic graph over all sizes, and (4) the
per-call time of the dynamic graph against a static graph compiled for that size, at three
sequence lengths, timed alternately so that load on the machine falls on both alike. Issue
18's goals: compile time of the dynamic graph at most 2x the static one, per-call time within
5% of static.

    PYTHONPATH=python python bench/dynamic_kernels.py [--reps 50]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

# A fresh kernel cache, so that compile times include the C compile.
os.environ["TORCHFERRO_CACHE_DIR"] = tempfile.mkdtemp(prefix="tf-dynbench-")

import torch
import torch.nn.functional as F
import torchferro
import torchferro.compiler
from torchferro import _C

# The block is the one the acceptance tests run (tests/test_dynamic_inductor.py).
sys.path.insert(
    0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests")
)
from programs.dynamic import Block


def _fresh_cache():
    """Points the kernel cache at an empty directory, so that the next compile runs the C
    compiler (the generated C of the dynamic graph at a size is the static graph's)."""
    os.environ["TORCHFERRO_CACHE_DIR"] = tempfile.mkdtemp(prefix="tf-dynbench-")


def _entry_point(block, tag):
    """``block(x)`` behind a code object of its own, so that each compiled function keeps its
    own cache entries."""
    return eval(compile("lambda x: block(x)", f"<{tag}>", "eval"), {"block": block})


def _first_call(f, *x):
    _fresh_cache()
    t0 = time.perf_counter()
    f(*x)
    return time.perf_counter() - t0


def _alternating(fs, x, reps):
    """The best per-call time of each of ``fs`` on ``x``, the calls interleaved."""
    for f in fs:
        for _ in range(3):
            f(x)
    best = [float("inf")] * len(fs)
    for _ in range(reps):
        for i, f in enumerate(fs):
            t0 = time.perf_counter()
            f(x)
            best[i] = min(best[i], time.perf_counter() - t0)
    return best


def _runners(f):
    return sorted({e["runner"] for e in torchferro.compiler.cache_entries(f)})


def _small(x):
    """A small graph (pointwise, a softmax, a row sum) whose calls take microseconds, so that
    the cost of sizes as kernel arguments is not lost in a loaded machine's noise."""
    return (torch.softmax(x * 2 + 1, -1) * x).sum(-1)


def _small_per_call(sizes, reps):
    """Best per-call time of the dynamic graph (kernels with sizes as arguments) and a static
    graph at each size, calls alternated."""
    dyn = torchferro.compile(_small, dynamic=True)
    out = []
    with torch.no_grad():
        for n in sizes:
            x = torch.randn(n, 2 * n + 1)
            static = torchferro.compile(
                eval(
                    compile("lambda x: _small(x)", f"<small{n}>", "eval"),
                    {"_small": _small},
                ),
                dynamic=False,
            )
            torch.testing.assert_close(dyn(x), _small(x))
            torch.testing.assert_close(static(x), _small(x))
            td, ts = _alternating([dyn, static], x, reps)
            out.append((n, td, ts))
    return out


def _rows(x, w):
    """Pointwise ops, a softmax, a layer norm and a column sum over a symbolic row count and
    row length (the acceptance tests' rows program)."""
    return torch.softmax(x, -1) + F.layer_norm(x, x.shape[-1:], w, w), x.sum(0)


def _small_first_compile(reps):
    """The first call (trace, lowering, C compile; a fresh kernel cache each) of the small
    graphs, dynamic against static, alternated ``reps`` times; the median of each."""
    out = []
    programs = [
        ("small", _small, lambda: (torch.randn(13, 27),)),
        ("rows", _rows, lambda: (torch.randn(13, 27), torch.randn(27))),
    ]
    with torch.no_grad():
        for name, fn, make in programs:
            times = {True: [], False: []}
            for r in range(reps):
                for d in (True, False):
                    f = torchferro.compile(
                        eval(
                            compile("lambda *a: fn(*a)", f"<{name}{d}{r}>", "eval"),
                            {"fn": fn},
                        ),
                        dynamic=d,
                    )
                    times[d].append(_first_call(f, *make()))
            td, ts = (sorted(times[d])[len(times[d]) // 2] for d in (True, False))
            out.append((name, td, ts))
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=50)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--small-reps", type=int, default=2000)
    ap.add_argument("--compile-reps", type=int, default=5)
    args = ap.parse_args(argv)
    for name, td, ts in _small_first_compile(args.compile_reps):
        print(
            f"first call of the {name} graph (median of {args.compile_reps}): static "
            f"{ts * 1e3:.1f} ms, dynamic {td * 1e3:.1f} ms, {td / ts:.2f}x"
        )
    for n, td, ts in _small_per_call([5, 16, 61], args.small_reps):
        print(
            f"small graph [{n}, {2 * n + 1}]: static {ts * 1e6:.2f} us, dynamic "
            f"{td * 1e6:.2f} us, {td / ts:.2f}x"
        )
    torch.manual_seed(0)
    block = Block(d=256, h=4).eval()
    sizes = [37, 64, 129]
    with torch.no_grad():
        xs = [torch.randn(args.batch, n, 256) for n in sizes]
        # Warm up imports, torch's op loading and the C compiler before any timed compile.
        block(xs[0])
        torchferro.compile(lambda a: (a * 2).sum(), dynamic=False)(xs[0])
        torchferro.compile(lambda a: (a * 3).sum(), dynamic=True)(xs[0])
        # The first trace of the block in a process costs seconds of one-time work (torch's
        # lazy imports and op registrations), whichever compile comes first.
        for d in (False, True):
            w = torchferro.compile(
                _entry_point(block, f"warm{d}"), backend="eager", dynamic=d
            )
            w(torch.randn(args.batch, 11, 256))
        # Compile times: the dynamic graph at each size, and static graphs at each size plus
        # one (a library of the same generated C still loaded would be reused, not compiled).
        dyn = torchferro.compile(_entry_point(block, "dynamic"), dynamic=True)
        cc = _C.precompile_counters()[1]
        dyn_compile = [_first_call(dyn, x) for x in xs]
        dyn_cc = _C.precompile_counters()[1] - cc
        static_compile = [
            _first_call(
                torchferro.compile(_entry_point(block, f"probe{n}"), dynamic=False),
                torch.randn(args.batch, n + 1, 256),
            )
            for n in sizes
        ]
        statics = [
            torchferro.compile(_entry_point(block, f"static{n}"), dynamic=False)
            for n in sizes
        ]
        for f in [dyn, *statics]:
            for x in xs if f is dyn else [xs[statics.index(f)]]:
                torch.testing.assert_close(f(x), block(x), rtol=1e-4, atol=1e-4)
        entries = torchferro.compiler.cache_entries(dyn)
        print(
            f"dynamic: {len(entries)} entries, runners {[e['runner'] for e in entries]}, "
            f"{dyn_cc} C compile(s) over T={sizes}"
        )
        for n, x, s in zip(sizes, xs, statics, strict=True):
            td, ts = _alternating([dyn, s], x, args.reps)
            print(
                f"T={n:4d}: static {ts * 1e3:.3f} ms ({'/'.join(_runners(s))}), "
                f"dynamic {td * 1e3:.3f} ms, {td / ts:.2f}x"
            )
        for i, n in enumerate(sizes):
            what = "trace and compile" if i == 0 else "a lowering and a match"
            print(
                f"first call at T={n} ({what} for dynamic; static at T={n + 1}): static "
                f"{static_compile[i] * 1e3:.1f} ms, dynamic {dyn_compile[i] * 1e3:.1f} ms "
                f"({dyn_compile[i] / static_compile[i]:.2f}x)"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
