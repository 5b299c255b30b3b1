"""Host time against device time of a GPT-2 124M bf16 training step's forward and backward
(session 23: is the compiled step bound by the host's launches or by the GPU?).

    python scripts/gpu_step_host.py [--steps 8]

Per variant (eager, torchferro), medians over the steps after 3 warm-up steps: the forward call's
host time (until it returns, no synchronize), the forward's time to a synchronize after it, the
same for ``loss.backward()``. Host time near the synchronized time means the host kept the GPU
waiting."""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "bench"))
os.environ.setdefault("TORCHFERRO_AOT_CUDA", "1")

import torchferro  # noqa: E402
from train_cuda import build  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=8)
    args = ap.parse_args()
    for name in ("eager", "torchferro"):
        model, ids = build(8, 1024)
        opt = torch.optim.AdamW(model.parameters(), lr=1e-4)

        def loss_of(ids):
            with torch.autocast("cuda", dtype=torch.bfloat16):
                return model(input_ids=ids, labels=ids).loss

        fn = torchferro.compile(loss_of) if name == "torchferro" else loss_of
        rows = []
        for i in range(3 + args.steps):
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            loss = fn(ids)
            t1 = time.perf_counter()
            torch.cuda.synchronize()
            t2 = time.perf_counter()
            loss.backward()
            t3 = time.perf_counter()
            torch.cuda.synchronize()
            t4 = time.perf_counter()
            opt.step()
            opt.zero_grad(set_to_none=True)
            if i >= 3:
                rows.append(
                    ((t1 - t0) * 1e3, (t2 - t0) * 1e3, (t3 - t2) * 1e3, (t4 - t2) * 1e3)
                )
        med = [statistics.median(r[j] for r in rows) for j in range(4)]
        print(
            f"{name}: forward host {med[0]:.2f} ms, synchronized {med[1]:.2f} ms; "
            f"backward host {med[2]:.2f} ms, synchronized {med[3]:.2f} ms",
            flush=True,
        )
        del model, opt, fn
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
