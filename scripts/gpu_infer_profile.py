"""Where a bench workload's compiled inference call spends its GPU time, per compiler.

    python scripts/gpu_infer_profile.py OUT_DIR WORKLOAD [eager,torchferro,torch.compile]

Builds `bench/workloads.py`'s WORKLOAD on CUDA (grad off, as the bench runs it), times 20 calls
of each variant (CUDA-synchronized median) and profiles 3 calls with torch.profiler:
OUT_DIR/profile-<variant>.txt holds the ops and kernels by self CUDA time, then by self CPU
time, and the launch count. One process, so every variant sees the same inputs and card.
"""

from __future__ import annotations

import os
import statistics
import sys
import time

sys.path.insert(
    0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench")
)

import torch  # noqa: E402
from torch.profiler import ProfilerActivity, profile  # noqa: E402

import workloads  # noqa: E402


def main() -> None:
    out, name = sys.argv[1], sys.argv[2]
    variants = (
        sys.argv[3] if len(sys.argv) > 3 else "eager,torchferro,torch.compile"
    ).split(",")
    os.makedirs(out, exist_ok=True)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.set_grad_enabled(False)
    built = getattr(workloads, f"build_{name}")("cuda", False)
    lines = [f"{name}: {built.size}, {torch.cuda.get_device_name()}"]
    ref = None
    for v in variants:
        if v == "eager":
            fn = built.make(lambda f: f)
        elif v == "torchferro":
            import torchferro

            fn = built.make(torchferro.compile)
        else:
            fn = built.make(torch.compile)
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        r = fn(*built.args)
        torch.cuda.synchronize()
        first = time.perf_counter() - t0
        if ref is None:
            ref = r
        err = (r.float() - ref.float()).abs().max().item()
        ts = []
        for _ in range(20):
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            fn(*built.args)
            torch.cuda.synchronize()
            ts.append((time.perf_counter() - t0) * 1e3)
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            for _ in range(3):
                fn(*built.args)
            torch.cuda.synchronize()
        ev = prof.key_averages()
        launches = sum(
            e.count
            for e in ev
            if e.key in ("cudaLaunchKernel", "cuLaunchKernel", "cuLaunchKernelEx")
        )
        with open(os.path.join(out, f"profile-{v}.txt"), "w") as f:
            f.write(f"{v}: 3 calls, launches {launches}\n\n")
            f.write(
                ev.table(
                    sort_by="self_cuda_time_total",
                    row_limit=40,
                    max_name_column_width=100,
                )
            )
            f.write("\n\n")
            f.write(
                ev.table(
                    sort_by="self_cpu_time_total",
                    row_limit=25,
                    max_name_column_width=100,
                )
            )
        lines.append(
            f"{v}: median {statistics.median(ts):.2f} ms, min {min(ts):.2f}, first call "
            f"{first:.2f} s, launches/call {launches / 3:.0f}, max |diff| vs {variants[0]} {err:.3g}"
        )
        print(lines[-1], flush=True)
    with open(os.path.join(out, "summary.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
