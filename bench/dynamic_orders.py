"""Issue 18's "at most 2 compiles over batch sizes 1..8 and lengths 8..256", in several orders
of shapes: torchferro's entries (its inductor, ``dynamic=None``) under the session-27 default
(the whole-tensor rule and size-oblivious symbols) and under torch's own rule (both off), and
torch.compile's graphs (a counting backend: counts do not depend on the backend), with every
call's logits checked against eager's. The first pass (every shape once, compiles included) is
timed for torchferro.

    PYTHONPATH=python python bench/dynamic_orders.py --model gpt2
    PYTHONPATH=python python bench/dynamic_orders.py --model llama --batches 1,2,8 --lengths 8,9,33,100,256
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

os.environ.setdefault("TORCHFERRO_CACHE_DIR", tempfile.mkdtemp(prefix="tf-dyn-orders-"))

import torch
import torch._dynamo
import torchferro
import torchferro.compiler

sys.path.insert(0, os.path.dirname(__file__))
from dynamic_vs_static import VOCAB, build, with_own_code

sys.path.insert(
    0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests")
)
from programs.dynamic import grid_orders


class Count:
    def __init__(self):
        self.n = 0

    def __call__(self, gm, example_inputs):
        self.n += 1
        return gm.forward


def entries(model) -> int:
    import types

    return len(
        torchferro.compiler.cache_entries(
            types.SimpleNamespace(__code__=type(model).forward.__code__)
        )
    )


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", choices=["gpt2", "llama"], default="gpt2")
    ap.add_argument("--batches", default="1,2,8")
    ap.add_argument("--lengths", default="8,9,33,100,256")
    ap.add_argument("--no-torch", action="store_true")
    args = ap.parse_args(argv)
    torch.set_grad_enabled(False)
    model = build(args.model)
    batches = [int(b) for b in args.batches.split(",")]
    lengths = [int(t) for t in args.lengths.split(",")]
    cfg = torchferro.config
    print(f"{args.model}: batches {batches}, lengths {lengths}")
    print(
        "| order | torchferro (default) | first pass | torchferro (torch's rule) | first pass | torch.compile |"
    )
    print("| --- | --: | --: | --: | --: | --: |")
    for name, shapes in grid_orders(batches, lengths).items():
        ids = {
            s: torch.randint(
                0, VOCAB, s, generator=torch.Generator().manual_seed(1000 * s[0] + s[1])
            )
            for s in shapes
        }
        want = {s: model(input_ids=ids[s], use_cache=False).logits for s in shapes}
        row = [name]
        for rule in (True, False):
            cfg.automatic_dynamic_whole_tensor = rule
            cfg.automatic_dynamic_size_oblivious = rule
            torchferro.compiler.reset()
            m = with_own_code(model)
            f = torchferro.compile(m)
            t0 = time.perf_counter()
            for s in shapes:
                got = f(input_ids=ids[s], use_cache=False).logits
                torch.testing.assert_close(got, want[s], rtol=1e-4, atol=1e-4)
            row += [str(entries(m)), f"{time.perf_counter() - t0:.1f} s"]
        cfg.automatic_dynamic_whole_tensor = cfg.automatic_dynamic_size_oblivious = True
        if not args.no_torch:
            torch._dynamo.reset()
            c = Count()
            t = torch.compile(with_own_code(model), backend=c)
            for s in shapes:
                got = t(input_ids=ids[s], use_cache=False).logits
                torch.testing.assert_close(got, want[s], rtol=1e-4, atol=1e-4)
            row.append(str(c.n))
        else:
            row.append("-")
        print("| " + " | ".join(row) + " |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
