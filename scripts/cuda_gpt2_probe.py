"""What the CUDA code generator makes of a GPT-2 training step's graphs, without a GPU.

A one-layer GPT-2 of width 768 (12 heads, sequence 128, batch 2, vocabulary 1024) trained one
step on the CPU under bf16 autocast with ``TORCHFERRO_CUDA_CHECK``: every graph the CPU
inductor compiles is printed for the CUDA target too and compiled by NVRTC; the sources land in
OUT/cache/cuda. The CPU's attention and autocast op lists differ from CUDA's, but the layer
norms, GELU and cross entropy kernels are the GPU's.

    TORCHFERRO_AUTOCAST_INDUCTOR=1 python scripts/cuda_gpt2_probe.py [OUT]
"""

from __future__ import annotations

import json
import os
import re
import sys
import tempfile
from pathlib import Path


def main() -> None:
    out = Path(
        sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp(prefix="cuda_gpt2_")
    )
    out.mkdir(parents=True, exist_ok=True)
    os.environ["TORCHFERRO_CUDA_CHECK"] = str(out / "check.jsonl")
    os.environ["TORCHFERRO_CACHE_DIR"] = str(out / "cache")
    os.environ["TORCHFERRO_SITE_DIRS"] = os.pathsep.join(p for p in sys.path if p)

    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    import torchferro

    torch.manual_seed(0)
    cfg = GPT2Config(n_layer=1, n_embd=768, n_head=12, vocab_size=1024, n_positions=256)
    model = GPT2LMHeadModel(cfg).train()
    model.config.use_cache = False
    ids = torch.randint(0, 1024, (2, 128))

    @torchferro.compile
    def step(ids):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            return model(input_ids=ids, labels=ids).loss

    step(ids).backward()
    for line in (out / "check.jsonl").read_text().splitlines():
        r = json.loads(line)
        r.pop("source", None)
        print(json.dumps(r))
    for src in sorted((out / "cache" / "cuda").glob("*.cu")):
        kernels = re.findall(r'extern "C" __global__', src.read_text())
        print(f"{src}: {len(kernels)} kernels")


if __name__ == "__main__":
    main()
