"""A compiled AdamW step (foreach) over a GPT-2-small-shaped parameter set: eager's foreach
AdamW vs torch.compile vs torchferro, side by side in one process.

    python bench/optim_step.py [--layers 2] [--reps 10] [--threads 1] [--no-torch-compile]

The parameters have GPT-2 small's shapes (width 768, vocabulary 50257, 1024 positions; all 12
layers with ``--layers 12``, 124M values) with fixed random gradients. Each variant owns a copy
of the parameters and its own optimizer; the compiled variants compile ``step(opt)`` (calls
``opt.step()``: torchferro traces the update into one graph, torch.compile into one of its own).
After a first step (which makes the optimizer state) and warm-up, steps are timed interleaved
(order rotated per repetition); the report gives the medians, ratios to eager (eager / variant:
> 1 is faster), process CPU time per step, the first-call time of each compiled variant, and
checks that every parameter and state tensor equals eager's after the timed steps.
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch


def gpt2_small_shapes(layers: int) -> list[tuple[int, ...]]:
    d, v, t = 768, 50257, 1024
    shapes: list[tuple[int, ...]] = [(v, d), (t, d)]
    for _ in range(layers):
        shapes += [(d,), (d,)]  # ln_1
        shapes += [(d, 3 * d), (3 * d,)]  # c_attn
        shapes += [(d, d), (d,)]  # attn c_proj
        shapes += [(d,), (d,)]  # ln_2
        shapes += [(d, 4 * d), (4 * d,)]  # c_fc
        shapes += [(4 * d, d), (d,)]  # mlp c_proj
    shapes += [(d,), (d,)]  # ln_f
    return shapes


def make_params(shapes, seed=0):
    g = torch.Generator().manual_seed(seed)
    params = []
    for s in shapes:
        p = torch.nn.Parameter(torch.randn(s, generator=g) * 0.02)
        p.grad = torch.randn(s, generator=g) * 1e-3
        params.append(p)
    return params


def step(opt):
    opt.step()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--no-torch-compile", action="store_true")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    import torchferro

    shapes = gpt2_small_shapes(args.layers)
    n = sum(torch.Size(s).numel() for s in shapes)
    print(f"{len(shapes)} tensors, {n / 1e6:.1f}M values, threads {args.threads}")

    variants = {"eager": step, "torchferro": torchferro.compile(step)}
    if not args.no_torch_compile:
        variants["torch.compile"] = torch.compile(step)
    opts, first = {}, {}
    for name, fn in variants.items():
        params = make_params(shapes)
        opt = torch.optim.AdamW(params, lr=1e-3, weight_decay=0.01, foreach=True)
        t0 = time.perf_counter()
        fn(opt)
        first[name] = time.perf_counter() - t0
        opts[name] = opt
        for _ in range(args.warmup):
            fn(opt)
    wall = {k: [] for k in variants}
    cpu = {k: [] for k in variants}
    names = list(variants)
    for r in range(args.reps):
        order = names[r % len(names) :] + names[: r % len(names)]
        for name in order:
            c0, t0 = time.process_time(), time.perf_counter()
            variants[name](opts[name])
            wall[name].append(time.perf_counter() - t0)
            cpu[name].append(time.process_time() - c0)
    # Every variant took the same number of steps from the same start: equal to eager's.
    ref = opts["eager"]
    for name in names[1:]:
        o = opts[name]
        for pe, pc in zip(ref.param_groups[0]["params"], o.param_groups[0]["params"]):
            torch.testing.assert_close(pc, pe, rtol=1e-5, atol=1e-6)
            for key in ("exp_avg", "exp_avg_sq", "step"):
                torch.testing.assert_close(
                    o.state[pc][key], ref.state[pe][key], rtol=1e-5, atol=1e-7
                )
    e_wall = statistics.median(wall["eager"])
    e_cpu = statistics.median(cpu["eager"])
    print(
        f"{'variant':14} {'wall ms':>9} {'IQR%':>6} {'x eager':>8} {'cpu ms':>8} {'x eager':>8} {'first call s':>12}"
    )
    for name in names:
        w = sorted(wall[name])
        med = statistics.median(w)
        q = statistics.quantiles(w, n=4) if len(w) >= 4 else [w[0], med, w[-1]]
        c = statistics.median(cpu[name])
        fc = "" if name == "eager" else f"{first[name]:.2f}"
        print(
            f"{name:14} {med * 1e3:9.1f} {100 * (q[2] - q[0]) / med:6.0f} {e_wall / med:8.2f} "
            f"{c * 1e3:8.1f} {e_cpu / c:8.2f} {fc:>12}"
        )
    print("values: every parameter and state tensor equals eager's")


if __name__ == "__main__":
    main()
