"""Times torchferro's CUDA kernels on the bench's memory-bound workloads under the policy knobs
(``TORCHFERRO_CUDA_ROW_BLOCK``, ``_PW_BLOCK``, ``_UNROLL``, ``_VEC``, ``_ROW_CACHE``,
``_SPLIT``, ``_WARP_ROWS``), on the GPU machine, to pick the defaults (issue 16). One process per
configuration (the policy is read when a graph compiles), each with an empty cache directory.

    python scripts/gpu_cuda_sweep.py CONFIG [CONFIG ...]    # CONFIG: ROW_BLOCK=256,UNROLL=8
    python scripts/gpu_cuda_sweep.py --child pointwise,softmax
    SWEEP_TC=1 python scripts/gpu_cuda_sweep.py default     # torch.compile's time beside ours

Prints one line per (config, workload): microseconds (median of CUDA-event timings), TB/s of
the workload's ideal bytes, eager's time, and whether the output matched eager.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WORKLOADS = "copy,pointwise,softmax,layer_norm,rms_norm"


def time_us(fn, args, iters: int = 40) -> float:
    import torch

    for _ in range(3):
        fn(*args)
    torch.cuda.synchronize()
    times = []
    for _ in range(iters):
        a, b = (
            torch.cuda.Event(enable_timing=True),
            torch.cuda.Event(enable_timing=True),
        )
        a.record()
        fn(*args)
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b) * 1000.0)
    times.sort()
    return times[len(times) // 2]


def child(names: list[str]) -> None:
    import torch
    import torchferro

    sys.path.insert(0, str(ROOT / "bench"))
    from workloads import WORKLOADS as ALL

    by_name = {w.name: w for w in ALL}
    for name in names:
        w = by_name[name]
        built = w.build("cuda", False)
        eager = built.make(lambda f: f)
        ours = built.make(torchferro.compile)
        want = eager(*built.args)
        got = ours(*built.args)
        ok = bool(torch.allclose(got, want, rtol=w.rtol, atol=w.atol))
        t_ours = time_us(ours, built.args)
        t_eager = time_us(eager, built.args)
        tbs = built.bytes / (t_ours * 1e-6) / 1e12 if built.bytes else None
        row = {"workload": name, "us": round(t_ours, 1), "tb_s": tbs and round(tbs, 3)}
        row.update({"eager_us": round(t_eager, 1), "match": ok})
        if os.environ.get("SWEEP_TC") == "1":
            # torch.compile (inductor, Triton) in the same process, on the same inputs.
            tc = built.make(torch.compile)
            tc_ok = bool(
                torch.allclose(tc(*built.args), want, rtol=w.rtol, atol=w.atol)
            )
            row.update({"tc_us": round(time_us(tc, built.args), 1), "tc_match": tc_ok})
        row["launches"] = torchferro._C._cuda_kernel_launches()
        print(json.dumps(row), flush=True)
        del built, want, got
        torch.cuda.empty_cache()


def main(argv: list[str]) -> int:
    if argv[:1] == ["--child"]:
        child(argv[1].split(","))
        return 0
    names = os.environ.get("SWEEP_ONLY", WORKLOADS)
    for config in argv or ["default"]:
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        env.setdefault("TORCHFERRO_CUDA", "1")
        for kv in config.split(","):
            if "=" in kv:
                k, v = kv.split("=", 1)
                env[f"TORCHFERRO_CUDA_{k}"] = v
        with tempfile.TemporaryDirectory() as cache:
            env["TORCHFERRO_CACHE_DIR"] = cache
            r = subprocess.run(
                [sys.executable, __file__, "--child", names],
                env=env,
                capture_output=True,
                text=True,
                timeout=int(os.environ.get("SWEEP_CHILD_TIMEOUT", "300")),
                check=False,
            )
        for line in r.stdout.splitlines():
            print(f"{config}\t{line}", flush=True)
        if r.returncode != 0:
            print(f"{config}\tFAILED rc={r.returncode}\n{r.stderr[-3000:]}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
