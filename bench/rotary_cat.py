"""Rotary embedding (Llama's ``rotate_half``) on one q, eager / torch.compile / torchferro in
one process (issue 14: a ``cat`` feeding a store lowers to one loop per part).

Three programs: ``rotary`` (``q * cos + rotate_half(q) * sin``, the cat consumed pointwise),
``rotate_half`` (the cat itself stored, a graph output) and ``cat_shared`` (a cat of two
computed parts returned and read again). Per program and variant: the median and the best of
``--repeats`` rounds, each round the best of ``--reps`` calls (µs), the variants interleaved;
values checked against eager's (bit-equal for torchferro). Run it under two builds (the
``PYTHONPATH`` picks the build) for a before/after comparison:

    OMP_NUM_THREADS=1 PYTHONPATH=python python bench/rotary_cat.py [--reps 200] [--repeats 7]
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time

os.environ.setdefault("TORCHFERRO_CACHE_DIR", tempfile.mkdtemp(prefix="tf-rotary-"))
os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", tempfile.mkdtemp(prefix="ti-rotary-"))

import torch
import torchferro


def rotate_half(x):
    d = x.shape[-1]
    return torch.cat((-x[..., d // 2 :], x[..., : d // 2]), dim=-1)


def rotary(q, cos, sin):
    return q * cos + rotate_half(q) * sin


def rotate_only(q, cos, sin):
    return rotate_half(q)


def cat_shared(q, cos, sin):
    c = torch.cat((q[..., :32] * cos[:, :32], q[..., 32:].abs()), dim=-1)
    return c, c * sin


PROGRAMS = {"rotary": rotary, "rotate_half": rotate_only, "cat_shared": cat_shared}


def best_of(fn, args, reps):
    t = float("inf")
    for _ in range(reps):
        s = time.perf_counter()
        fn(*args)
        t = min(t, time.perf_counter() - s)
    return t * 1e6


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--repeats", type=int, default=7)
    args = ap.parse_args()
    torch.manual_seed(0)
    q = torch.randn(2, 8, 128, 64)
    cos, sin = torch.randn(128, 64), torch.randn(128, 64)
    inputs = (q, cos, sin)
    print(
        f"torch {torch.__version__}, threads {torch.get_num_threads()}, "
        f"load {os.getloadavg()[0]:.2f}, q {tuple(q.shape)} float32"
    )
    print(f"{'program':<12} {'variant':<14} {'median us':>10} {'best us':>9}")
    with torch.no_grad():
        for name, fn in PROGRAMS.items():
            variants = {
                "eager": fn,
                "torch.compile": torch.compile(fn),
                "torchferro": torchferro.compile(fn),
            }
            want = fn(*inputs)
            for v, f in variants.items():
                got = f(*inputs)
                if v == "torchferro":
                    for a, b in zip(
                        torch.utils._pytree.tree_leaves(got),
                        torch.utils._pytree.tree_leaves(want),
                    ):
                        assert torch.equal(a, b), (
                            f"{name}: torchferro differs from eager"
                        )
                else:
                    torch.testing.assert_close(got, want)
            rounds = {v: [] for v in variants}
            for _ in range(args.repeats):
                for v, f in variants.items():
                    rounds[v].append(best_of(f, inputs, args.reps))
            for v, ts in rounds.items():
                print(
                    f"{name:<12} {v:<14} {statistics.median(ts):>10.1f} {min(ts):>9.1f}"
                )
    print(f"load after {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
