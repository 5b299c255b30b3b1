"""One GPT-2 124M bf16 training step of torchferro under torch.profiler, written as a chrome
trace, with the CUDA sources of its graphs (session 22: which of our kernels cost the step).

    python scripts/gpu_train_trace.py OUT_DIR [--torch-compile | --eager] [--resnet50 [--channels-last]]

Writes OUT_DIR/trace.json (one step after 4 warm-up steps) and copies the kernel cache's
``*.cu`` sources to OUT_DIR/cu/. Read it with ``scripts/trace_kernels.py``. With
``--torch-compile`` the step is torch.compile's (the same model and step) and the trace is
OUT_DIR/trace_tc.json, for comparing kernel time by kind; with ``--eager`` it is eager's step
(``trace_eager``: cuDNN's and torch's kernels for the same ops). With ``--resnet50`` the step is
torchvision's resnet50 (batch 64, bf16 autocast) and the names gain ``_r50``; with
``--channels-last`` too, its parameters and images are channels-last (``_r50cl``)."""

from __future__ import annotations

import glob
import os
import shutil
import sys
import tempfile

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "bench"))
os.environ.setdefault("TORCHFERRO_AOT_CUDA", "1")
cache = tempfile.mkdtemp(prefix="tf-trace-")
os.environ["TORCHFERRO_CACHE_DIR"] = cache

import torchferro  # noqa: E402
from train_cuda import build, build_resnet50, make_step  # noqa: E402


def main() -> None:
    out = sys.argv[1]
    tc = "--torch-compile" in sys.argv[2:]
    eager = "--eager" in sys.argv[2:]
    r50 = "--resnet50" in sys.argv[2:]
    cl = r50 and "--channels-last" in sys.argv[2:]
    os.makedirs(os.path.join(out, "cu"), exist_ok=True)
    torch.backends.cuda.matmul.allow_tf32 = False
    if r50:
        model, batch = build_resnet50(64)
        if cl:
            model = model.to(memory_format=torch.channels_last)
            batch = (batch[0].contiguous(memory_format=torch.channels_last), batch[1])
    else:
        model, ids = build(8, 1024)
        batch = (ids,)
    compile_fn = (lambda f: f) if eager else torch.compile if tc else torchferro.compile
    step = make_step(model, compile_fn, amp=True)
    for _ in range(4):
        step(*batch)
    torch.cuda.synchronize()
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        step(*batch)
        torch.cuda.synchronize()
    name = (
        ("trace_eager" if eager else "trace_tc" if tc else "trace")
        + ("_r50" if r50 else "")
        + ("cl" if cl else "")
    )
    prof.export_chrome_trace(os.path.join(out, name + ".json"))
    for f in glob.glob(os.path.join(cache, "**", "*.cu"), recursive=True):
        shutil.copy(f, os.path.join(out, "cu"))
    print("sources", len(os.listdir(os.path.join(out, "cu"))))


if __name__ == "__main__":
    main()
