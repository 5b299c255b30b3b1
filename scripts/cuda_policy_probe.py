"""What the CUDA code generator makes of a training step's graphs, without a GPU.

Runs one resnet50 training step on the CPU (compiled backward, channels-last weights and images
by default) with ``TORCHFERRO_CUDA_CHECK``: every graph the CPU inductor compiles is lowered
for the CUDA target too (the policy takes the ``TORCHFERRO_CUDA_*`` knobs, e.g.
``TORCHFERRO_CUDA_CHANNELS_LAST=1``), printed and compiled by NVRTC; the sources land in the
cache folder's ``cuda/``. Prints the check lines and, per source, its column kernels (reductions
over leading dims, ``codegen/cuda/columns.rs``) with their launch grids as the printer's
comments give them.

    TORCHFERRO_CUDA_CHANNELS_LAST=1 python scripts/cuda_policy_probe.py [--batch 16] [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
from pathlib import Path


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--size", type=int, default=224)
    ap.add_argument("--contiguous", action="store_true")
    ap.add_argument(
        "--amp", action="store_true", help="bf16 autocast (the CPU's op lists)"
    )
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    out = Path(a.out or tempfile.mkdtemp(prefix="cuda_probe_"))
    out.mkdir(parents=True, exist_ok=True)
    os.environ["TORCHFERRO_CUDA_CHECK"] = str(out / "check.jsonl")
    os.environ["TORCHFERRO_CACHE_DIR"] = str(out / "cache")
    os.environ["TORCHFERRO_SITE_DIRS"] = os.pathsep.join(p for p in sys.path if p)

    import torch
    import torchvision

    import torchferro

    torch.manual_seed(0)
    model = torchvision.models.resnet50().train()
    x = torch.randn(a.batch, 3, a.size, a.size)
    y = torch.randint(0, 1000, (a.batch,))
    if not a.contiguous:
        model = model.to(memory_format=torch.channels_last)
        x = x.contiguous(memory_format=torch.channels_last)

    @torchferro.compile
    def loss_of(x, y):
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=a.amp):
            return torch.nn.functional.cross_entropy(model(x), y)

    loss_of(x, y).backward()
    for line in (out / "check.jsonl").read_text().splitlines():
        r = json.loads(line)
        r.pop("source", None)
        print(json.dumps(r))
    for src in sorted((out / "cache" / "cuda").glob("*.cu")):
        text = src.read_text()
        kernels = re.findall(r'extern "C" __global__[^\n]*', text)
        print(f"{src.name}: {len(kernels)} kernels, {len(text)} chars")
    print(f"sources in {out / 'cache' / 'cuda'}")


if __name__ == "__main__":
    main()
