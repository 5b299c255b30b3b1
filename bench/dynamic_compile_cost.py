"""Issue 18's "compiling the dynamic graph costs at most 2x the static one", for the GPT-2 and
Llama small forwards of ``bench/dynamic_vs_static.py``: the children's CPU time (the C
compiler) and the wall time of the call that compiles, each run in a fresh process with an
empty kernel cache, medians over ``--reps``.

- static: ``dynamic=False``, the first call at ``B x T``;
- dynamic: automatic dynamic (the default policy), a first call at ``B x (T - 1)`` (the static
  graph, not measured), then the measured call at ``B x T``, which compiles the dynamic graph
  (whole-tensor rule: batch and length symbolic).

    PYTHONPATH=python python bench/dynamic_compile_cost.py --model gpt2 --reps 3
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

CHILD = r"""
import json, os, sys, time, warnings
sys.path.insert(0, {bench!r})
import torch, torchferro
from dynamic_vs_static import VOCAB, build
torch.set_grad_enabled(False)
model = build({model!r})
dynamic = {dynamic!r}
b, t = {b}, {t}
f = torchferro.compile(model, dynamic=None if dynamic else False)
ids = lambda b, t: torch.randint(0, VOCAB, (b, t), generator=torch.Generator().manual_seed(t))
if dynamic:
    f(input_ids=ids(b, t - 1), use_cache=False)
c0, w0 = os.times(), time.perf_counter()
f(input_ids=ids(b, t), use_cache=False)
c1, w1 = os.times(), time.perf_counter()
print(json.dumps({{"children": (c1.children_user + c1.children_system) - (c0.children_user + c0.children_system), "wall": w1 - w0}}))
"""


def one(model: str, dynamic: bool, b: int, t: int) -> dict:
    env = dict(os.environ)
    env["TORCHFERRO_CACHE_DIR"] = tempfile.mkdtemp(prefix="tf-dyn-cost-")
    src = CHILD.format(
        bench=os.path.dirname(os.path.abspath(__file__)),
        model=model,
        dynamic=dynamic,
        b=b,
        t=t,
    )
    out = subprocess.run(
        [sys.executable, "-c", src], env=env, capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", choices=["gpt2", "llama"], default="gpt2")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--batch", type=int, default=2)
    ap.add_argument("--length", type=int, default=33)
    args = ap.parse_args(argv)
    runs = {"static": [], "dynamic": []}
    for _ in range(args.reps):
        for name, got in runs.items():  # alternated, so load falls on both alike
            got.append(one(args.model, name == "dynamic", args.batch, args.length))
    med = {
        n: {k: statistics.median(r[k] for r in rs) for k in ("children", "wall")}
        for n, rs in runs.items()
    }
    print(
        f"{args.model} at {args.batch}x{args.length}, medians of {args.reps} (load {os.getloadavg()[0]:.1f}):"
    )
    for n in runs:
        print(
            f"  {n}: children CPU {med[n]['children']:.2f} s, wall {med[n]['wall']:.2f} s"
        )
    print(
        f"  dynamic / static: children CPU {med['dynamic']['children'] / med['static']['children']:.2f}x, "
        f"wall {med['dynamic']['wall'] / med['static']['wall']:.2f}x"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
