"""A small CNN over image sizes 16..64 under ``dynamic=True``: graphs, C compiles and time,
eager, torch.compile and torchferro in one run (issue 18, session 17: convolutions and pooling
over symbolic sizes).

The model is conv-relu-maxpool-conv-relu-maxpool, a global average pool and a linear head, so
every spatial size is symbolic up to the pool and the head is static. Each variant runs the
sizes in order once (the first call at a size includes what it compiles), values checked
against eager; then each variant's per-call time at each size is the best of ``--reps`` calls,
the variants interleaved. ``--sizes even`` (the default: 16, 20, ..., 64) keeps the pools'
parity guard (torch's ``div_rtn``) true for every size: one graph; ``--sizes all`` takes
16..64 and makes torch.compile's parity graphs.

    PYTHONPATH=python python bench/dynamic_cnn.py [--reps 20] [--sizes even|all] [--pool max|avg]
    TORCHFERRO_SYMBOLIC=0 PYTHONPATH=python python bench/dynamic_cnn.py --no-torch-inductor
        # the fitted templates instead of the symbolic lowering
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

# A fresh kernel cache, so that first calls include the C compiles.
os.environ.setdefault(
    "TORCHFERRO_CACHE_DIR", tempfile.mkdtemp(prefix="tf-dynamic-cnn-")
)

import torch
import torch._dynamo
import torch.nn.functional as F
import torchferro
import torchferro.compiler
from torch import nn


class SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(3, 16, 3, padding=1)
        self.c2 = nn.Conv2d(16, 32, 3, padding=1)
        self.fc = nn.Linear(32, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.c1(x)), 2)
        x = F.max_pool2d(F.relu(self.c2(x)), 2)
        return self.fc(F.adaptive_avg_pool2d(x, 1).flatten(1))


class AvgPoolCNN(nn.Module):
    """``--pool avg``: padded 3x3 average pools of stride 2 and an adaptive average pool to
    2x2 (session 18's lowerings; before them each graph ran on the eager runner)."""

    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(3, 16, 3, padding=1)
        self.c2 = nn.Conv2d(16, 32, 3, padding=1)
        self.fc = nn.Linear(32 * 4, 10)

    def forward(self, x):
        x = F.avg_pool2d(F.relu(self.c1(x)), 3, 2, 1)
        x = F.avg_pool2d(F.relu(self.c2(x)), 3, 2, 1)
        return self.fc(F.adaptive_avg_pool2d(x, 2).flatten(1))


class Count:
    def __init__(self):
        self.n = 0

    def __call__(self, gm, example_inputs):
        self.n += 1
        return gm.forward


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--batch", type=int, default=2)
    ap.add_argument("--sizes", choices=["even", "all"], default="even")
    ap.add_argument("--pool", choices=["max", "avg"], default="max")
    ap.add_argument(
        "--no-torch-inductor",
        action="store_true",
        help="leave torch.compile's inductor out (its first pass takes a minute)",
    )
    a = ap.parse_args(argv)
    torch.manual_seed(0)
    sizes = list(range(16, 65, 4)) if a.sizes == "even" else list(range(16, 65))
    m = (SmallCNN if a.pool == "max" else AvgPoolCNN)().eval()
    inputs = {n: torch.randn(a.batch, 3, n, n) for n in sizes}
    count = Count()
    variants = {
        "eager": m,
        "torch.compile (eager backend)": torch.compile(m, backend=count, dynamic=True),
        "torch.compile (inductor)": None,
        "torchferro": torchferro.compile(m, dynamic=True),
    }
    if a.no_torch_inductor:
        del variants["torch.compile (inductor)"]
    else:
        variants["torch.compile (inductor)"] = torch.compile(m, dynamic=True)
    first: dict[str, float] = {}
    cc_before = torchferro._C.precompile_counters()[1]
    with torch.no_grad():
        for name, f in variants.items():
            t0 = time.perf_counter()
            for n in sizes:
                got = f(inputs[n])
                torch.testing.assert_close(got, m(inputs[n]), rtol=1e-4, atol=1e-4)
            first[name] = time.perf_counter() - t0
        cc = torchferro._C.precompile_counters()[1] - cc_before
        entries = torchferro.compiler.cache_entries(variants["torchferro"])
        print(f"sizes {sizes[0]}..{sizes[-1]} ({len(sizes)} sizes), batch {a.batch}")
        print(
            f"torchferro: {len(entries)} graphs / {cc} C compiles "
            f"(runners: {sorted({e['runner'] for e in entries})}); "
            f"torch.compile: {count.n} graphs (counting backend)"
        )
        print("first pass over all sizes (compiles included):")
        for name, t in first.items():
            print(f"  {name:32s} {t * 1e3:9.1f} ms")
        best = {name: {n: float("inf") for n in sizes} for name in variants}
        for _ in range(a.reps):
            for n in sizes:
                for name, f in variants.items():
                    t0 = time.perf_counter()
                    f(inputs[n])
                    best[name][n] = min(best[name][n], time.perf_counter() - t0)
        print("per call, best of", a.reps, "(ms):")
        print("  size " + "".join(f"{name[:18]:>20s}" for name in variants))
        for n in sizes:
            print(f"  {n:4d} " + "".join(f"{best[v][n] * 1e3:20.3f}" for v in variants))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
