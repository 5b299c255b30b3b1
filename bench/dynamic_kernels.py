"""Dynamic vs static compiled kernels for a transformer block (issue 18).

For a GPT-2-like block, measures (1) the compile time of the ``dynamic=True`` graph against the
static one (the first call, which traces and compiles), and (2) the per-call time of the dynamic
graph against a static graph compiled for that size, at three sequence lengths. Prints which
runner each entry uses: today a graph with symbols runs on the eager runner, so (2) compares
torch's per-op dispatch with the inductor's static kernels. Goals once the inductor takes
symbolic sizes: compile time of the dynamic graph at most 2x the static one, per-call time within
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
from torch import nn


class Block(nn.Module):
    def __init__(self, d=256, h=4):
        super().__init__()
        self.h = h
        self.ln1 = nn.LayerNorm(d)
        self.attn = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.ln2 = nn.LayerNorm(d)
        self.fc = nn.Linear(d, 4 * d)
        self.out = nn.Linear(4 * d, d)

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.attn(self.ln1(x)).split(C, dim=2)
        q = q.view(B, T, self.h, C // self.h).transpose(1, 2)
        k = k.view(B, T, self.h, C // self.h).transpose(1, 2)
        v = v.view(B, T, self.h, C // self.h).transpose(1, 2)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(a.transpose(1, 2).contiguous().view(B, T, C))
        return x + self.out(F.gelu(self.fc(self.ln2(x)), approximate="tanh"))


def _per_call(f, x, reps):
    for _ in range(3):
        f(x)
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        f(x)
        ts.append(time.perf_counter() - t0)
    return min(ts)


def _runners(f):
    return sorted({e["runner"] for e in torchferro.compiler.cache_entries(f)})


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=50)
    ap.add_argument("--batch", type=int, default=8)
    args = ap.parse_args(argv)
    torch.manual_seed(0)
    block = Block().eval()
    sizes = [37, 64, 129]
    with torch.no_grad():
        xs = [torch.randn(args.batch, n, 256) for n in sizes]
        # Warm up imports, torch's op loading and the C compiler before any timed compile.
        block(xs[0])
        torchferro.compile(lambda a: (a * 2).sum(), dynamic=False)(xs[0])
        torchferro.compile(lambda a: (a * 3).sum(), dynamic=True)(xs[0])
        # The dynamic graph first: one compile, then calls at every size.
        torchferro.compiler.reset()
        dyn = torchferro.compile(block, dynamic=True)
        t0 = time.perf_counter()
        dyn(xs[0])
        dyn_compile = time.perf_counter() - t0
        dyn_times = [_per_call(dyn, x, args.reps) for x in xs]
        for x in xs:
            torch.testing.assert_close(dyn(x), block(x), rtol=1e-4, atol=1e-4)
        entries = torchferro.compiler.cache_entries(dyn)
        print(
            f"dynamic: {len(entries)} entries, runners {[e['runner'] for e in entries]}"
        )
        static_compile = None
        for n, x, td in zip(sizes, xs, dyn_times, strict=True):
            torchferro.compiler.reset()
            s = torchferro.compile(block, dynamic=False)
            t0 = time.perf_counter()
            s(x)
            if static_compile is None:
                static_compile = time.perf_counter() - t0
            ts = _per_call(s, x, args.reps)
            torch.testing.assert_close(s(x), block(x), rtol=1e-4, atol=1e-4)
            print(
                f"T={n:4d}: static {ts * 1e3:.3f} ms ({'/'.join(_runners(s))}), "
                f"dynamic {td * 1e3:.3f} ms, {td / ts:.2f}x"
            )
        print(
            f"compile (first call, T={sizes[0]}): static {static_compile * 1e3:.1f} ms, "
            f"dynamic {dyn_compile * 1e3:.1f} ms ({dyn_compile / static_compile:.2f}x)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
