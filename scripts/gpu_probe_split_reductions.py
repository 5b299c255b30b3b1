# Session 21: test_split_reductions_of_few_long_rows found [4] inf at row 4 (r=5, c=100003,
# bf16, contiguous, seed 735) on the H100. Reproduce, show both values, vary dtype/size, and
# print the generated CUDA source of the failing graph.
import os, sys

sys.path.insert(0, "tests")
import torch, torchferro
from test_cuda import _tensor, _long_reductions


def run(r, c, dtype, lx, seed, show=False):
    x = _tensor((r, c), dtype, lx, seed)
    torchferro.compiler.reset()
    want = _long_reductions(x)
    got = torchferro.compile(_long_reductions)(x)
    got2 = torchferro.compile(_long_reductions)(x)
    out = []
    for i, (w, g, g2) in enumerate(zip(want, got, got2)):
        bad = not torch.allclose(
            w.float(), g.float(), rtol=2e-2, atol=1e-2, equal_nan=True
        )
        if bad or show:
            out.append(
                f"  out[{i}] eager {w.float().tolist()} ours {g.float().tolist()} again {g2.float().tolist()}"
            )
    sq = (x.float() * x.float()).sum(-1)
    print(
        f"r={r} c={c} {dtype} {lx} seed={seed}: {'BAD' if out else 'ok'} absmax {x.float().abs().max().item():.3g} sumsq {sq.tolist()}"
    )
    for o in out:
        print(o)
    if show:
        (e,) = torchferro.compiler.cache_entries(_long_reductions)
        print(e.get("output_code", "")[:20000])


run(5, 100003, torch.bfloat16, "contiguous", 735, show=os.environ.get("SHOW") == "1")
for dtype in (torch.bfloat16, torch.float16, torch.float32):
    for c in (32771, 100003, 1 << 20):
        for r in (1, 3, 5):
            for seed in (735, 1):
                run(r, c, dtype, "contiguous", seed)
