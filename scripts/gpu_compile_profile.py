"""Where the first compiled training step's time goes (issue 17's compile-time goal).

    python scripts/gpu_compile_profile.py OUT_DIR [--resnet50|--gpt2] [--cprofile]

One fresh process, an empty cache: the model's bf16 training step (bench/train_cuda.py's
builders), timed by part — the compiled forward's first call (trace, derive, lower, NVRTC),
the first backward (the backward graph compiles on first use), the optimizer step — against
eager's first step in the same process (cuDNN/cuBLAS set-up, which the compiled step also
pays). Every compile's phases come from the compile events; `torchferro.aot` and
`torchferro.inductor` log lines with their times go to OUT_DIR/log.txt, and with
``--cprofile`` the compiled first step's profile (cumulative, top 60) to OUT_DIR/cprofile.txt.
"""

from __future__ import annotations

import cProfile
import copy
import io
import logging
import os
import pstats
import sys
import tempfile
import time

sys.path.insert(
    0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench")
)

os.environ.setdefault("TORCHFERRO_CACHE_DIR", tempfile.mkdtemp(prefix="tf-cprof-"))
os.environ.setdefault("TORCHFERRO_AOT_CUDA", "1")

import torch  # noqa: E402

import torchferro  # noqa: E402
from torchferro import _events  # noqa: E402
from train_cuda import build, build_resnet50, make_step  # noqa: E402


def sync_time(fn):
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    r = fn()
    torch.cuda.synchronize()
    return r, time.perf_counter() - t0


def main() -> None:
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    r50 = "--resnet50" in sys.argv[2:]
    prof = "--cprofile" in sys.argv[2:]
    handler = logging.FileHandler(os.path.join(out, "log.txt"), mode="w")
    handler.setFormatter(
        logging.Formatter("%(relativeCreated)9.0f ms %(name)s %(message)s")
    )
    for name in ("torchferro.aot", "torchferro.inductor"):
        lg = logging.getLogger(name)
        lg.setLevel(logging.INFO)
        lg.addHandler(handler)
    compiles = []
    _events.subscribe(
        lambda e: (
            compiles.append((e["function"], e.get("timings")))
            if e["kind"] == "compile"
            else None
        )
    )
    if r50:
        model, batch = build_resnet50(64)
    else:
        model, ids = build(8, 1024)
        batch = (ids,)
    twin = copy.deepcopy(model)
    lines = []

    eager = make_step(twin, lambda f: f, amp=True)
    _, t = sync_time(lambda: eager(*batch))
    lines.append(f"eager first step {t * 1e3:.0f} ms")
    _, t = sync_time(lambda: eager(*batch))
    lines.append(f"eager second step {t * 1e3:.1f} ms")

    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)

    def loss_of(*b):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            if r50:
                return torch.nn.functional.cross_entropy(model(b[0]), b[1])
            return model(input_ids=b[0], labels=b[0]).loss

    compiled = torchferro.compile(loss_of)
    n0 = torchferro._C._nvrtc_compiles()
    p = cProfile.Profile() if prof else None
    if p:
        p.enable()
    loss, tf = sync_time(lambda: compiled(*batch))
    _, tb = sync_time(lambda: loss.backward())
    _, to = sync_time(lambda: (opt.step(), opt.zero_grad(set_to_none=True)))
    if p:
        p.disable()
        s = io.StringIO()
        pstats.Stats(p, stream=s).sort_stats("cumulative").print_stats(60)
        s.write("\n\n")
        pstats.Stats(p, stream=s).sort_stats("tottime").print_stats(40)
        with open(os.path.join(out, "cprofile.txt"), "w") as f:
            f.write(s.getvalue())
    lines.append(
        f"compiled first step: forward {tf * 1e3:.0f} ms, backward {tb * 1e3:.0f} ms, "
        f"optimizer {to * 1e3:.0f} ms, total {(tf + tb + to) * 1e3:.0f} ms; "
        f"NVRTC compiles {torchferro._C._nvrtc_compiles() - n0}"
    )

    def step2():
        lo = compiled(*batch)
        lo.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    _, t = sync_time(step2)
    lines.append(f"compiled second step {t * 1e3:.1f} ms")
    for fn, tm in compiles:
        if tm:
            total = sum(tm.values())
            parts = ", ".join(f"{k} {v * 1e3:.0f}" for k, v in tm.items() if v > 0.0005)
            lines.append(f"compile {fn}: total {total * 1e3:.0f} ms ({parts})")
    text = "\n".join(lines)
    print(text)
    with open(os.path.join(out, "summary.txt"), "w") as f:
        f.write(text + "\n")


if __name__ == "__main__":
    main()
