"""GPT-2 124M training step on CUDA (issue 17's GPU goal): eager, torchferro and torch.compile in
one process, each training its own copy of the model from the same weights.

    python bench/train_cuda.py [--batch 8] [--seq 1024] [--steps 10] [--only eager,torchferro]
    python bench/train_cuda.py --model resnet50 --batch 64 --amp

``--model resnet50``: torchvision's resnet50 (random weights, 224x224 images, cross entropy
over 1000 classes, batch norm in training mode), issue 17's second GPU workload.
``--channels-last`` (resnet50): the model's parameters and the images in
``torch.channels_last``, as users speed up convolutions by hand (cuDNN's NHWC kernels without
layout conversions).

Prints, per variant as it finishes: the first step's time (compile included for the compiled
variants), the median and minimum step time over ``--steps`` timed steps after 3 warm-up steps
(``torch.cuda.synchronize`` around each step), the peak memory of a step
(``torch.cuda.max_memory_allocated`` after a reset, minus what was allocated before it), and
the first step's loss against eager's. float32 (``--amp`` for bf16 autocast inside the
compiled function: torchferro's CUDA autocast tracing is the CUDA helper's, issue 16), TF32
off, AdamW, dropout off so the variants' first losses compare.

The output goes to stdout line by line, so a run cut short by a time limit still reports the
variants that finished."""

from __future__ import annotations

import argparse
import copy
import os
import statistics
import sys
import time

import torch


def build(batch: int, seq: int):
    from transformers import GPT2Config, GPT2LMHeadModel

    cfg = GPT2Config(
        n_layer=12,
        n_embd=768,
        n_head=12,
        n_positions=1024,
        resid_pdrop=0.0,
        embd_pdrop=0.0,
        attn_pdrop=0.0,
    )
    cfg.use_cache = False
    torch.manual_seed(0)
    model = GPT2LMHeadModel(cfg).cuda().train()
    g = torch.Generator().manual_seed(1)
    ids = torch.randint(0, cfg.vocab_size, (batch, seq), generator=g).cuda()
    return model, ids


def build_resnet50(batch: int):
    import torchvision

    torch.manual_seed(0)
    model = torchvision.models.resnet50().cuda().train()
    g = torch.Generator().manual_seed(1)
    x = torch.randn(batch, 3, 224, 224, generator=g).cuda()
    y = torch.randint(0, 1000, (batch,), generator=g).cuda()
    return model, (x, y)


def make_step(model, compile_fn, amp: bool):
    """``step(*batch)``: GPT-2 takes ``(ids,)`` (its labels are its inputs), an image model
    ``(images, classes)``."""
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)

    def forward(*batch):
        if len(batch) == 2:
            x, y = batch
            return torch.nn.functional.cross_entropy(model(x), y)
        return model(input_ids=batch[0], labels=batch[0]).loss

    def loss_of(*batch):
        if amp:
            with torch.autocast("cuda", dtype=torch.bfloat16):
                return forward(*batch)
        return forward(*batch)

    compiled = compile_fn(loss_of)

    def step(*batch):
        loss = compiled(*batch)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        return loss.detach()

    return step


def timed(fn, *args):
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    r = fn(*args)
    torch.cuda.synchronize()
    return r, (time.perf_counter() - t0) * 1e3


def profile(step, batch, name: str, out: str) -> None:
    """Where a step's time goes: kernels by GPU time, ops by host time, and the launch count."""
    from torch.profiler import ProfilerActivity
    from torch.profiler import profile as torch_profile

    os.makedirs(out, exist_ok=True)
    torch.cuda.synchronize()
    with torch_profile(
        activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], record_shapes=True
    ) as prof:
        for _ in range(2):
            step(*batch)
        torch.cuda.synchronize()
    events = prof.key_averages()
    launches = sum(
        e.count
        for e in events
        if e.key in ("cudaLaunchKernel", "cuLaunchKernel", "cuLaunchKernelEx")
    )
    with open(os.path.join(out, f"profile-{name}.txt"), "w") as f:
        f.write(f"{name}: 2 steps, kernel launches {launches}\n\n")
        f.write(
            events.table(
                sort_by="self_cuda_time_total", row_limit=45, max_name_column_width=90
            )
        )
        f.write("\n\n")
        f.write(
            events.table(
                sort_by="self_cpu_time_total", row_limit=30, max_name_column_width=90
            )
        )
        # Which matrix products are slow: shapes and strides decide cuBLAS's kernel (an odd
        # row stride takes the align1 kernels).
        f.write("\n\nmatrix products by input shape\n")
        for e in sorted(
            prof.key_averages(group_by_input_shape=True),
            key=lambda e: -e.device_time_total,
        ):
            if e.key in ("aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm"):
                f.write(
                    f"{e.key:14} n={e.count:4} cuda={e.device_time_total / 1e3:9.2f} ms "
                    f"{e.input_shapes}\n"
                )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--seq", type=int, default=1024)
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--only", default="eager,torchferro,torch.compile")
    ap.add_argument("--amp", action="store_true")
    ap.add_argument("--model", default="gpt2", choices=["gpt2", "resnet50"])
    ap.add_argument("--channels-last", action="store_true")
    ap.add_argument(
        "--profile",
        metavar="DIR",
        help="after timing, profile 2 steps of each variant with torch.profiler and write "
        "DIR/profile-NAME.txt (ops and kernels by self CUDA time, then by self CPU time)",
    )
    a = ap.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False

    if a.model == "resnet50":
        base, batch = build_resnet50(a.batch)
        shape = f"resnet50 training step, batch {a.batch} x 3 x 224 x 224"
        if a.channels_last:
            base = base.to(memory_format=torch.channels_last)
            batch = (batch[0].contiguous(memory_format=torch.channels_last), batch[1])
            shape += ", channels-last"
    else:
        base, ids = build(a.batch, a.seq)
        batch = (ids,)
        shape = f"GPT-2 124M training step, batch {a.batch} x {a.seq}"
    print(
        f"{shape}, AdamW, {'bf16 autocast' if a.amp else 'float32'}, "
        f"{torch.cuda.get_device_name()}",
        flush=True,
    )

    def compile_with(name):
        if name == "eager":
            return lambda f: f
        if name == "torchferro":
            # The compiled CUDA training path is opt-in until it beats eager (docs/cuda.md).
            os.environ.setdefault("TORCHFERRO_AOT_CUDA", "1")
            import torchferro

            return torchferro.compile
        return torch.compile

    first_loss = {}
    for name in a.only.split(","):
        model = copy.deepcopy(base)
        step = make_step(model, compile_with(name), a.amp)
        torch.cuda.synchronize()
        loss, first_ms = timed(step, *batch)
        first_loss[name] = loss.item()
        for _ in range(3):
            step(*batch)
        torch.cuda.synchronize()
        before = torch.cuda.memory_allocated()
        torch.cuda.reset_peak_memory_stats()
        times = [timed(step, *batch)[1] for _ in range(a.steps)]
        peak = torch.cuda.max_memory_allocated() - before
        if a.profile:
            profile(step, batch, name, a.profile)
        extra = ""
        if name == "torchferro":
            from torchferro import _aot

            extra = f", aot counters {dict(_aot.counters)}, fallbacks {_aot.fallback_reasons}"
        print(
            f"{name}: first step {first_ms:.0f} ms, step median {statistics.median(times):.2f} ms, "
            f"min {min(times):.2f} ms, peak memory of a step {peak / 2**30:.2f} GiB, "
            f"first loss {first_loss[name]:.6f} (eager {first_loss.get('eager', float('nan')):.6f})"
            f"{extra}",
            flush=True,
        )
        del model, step
        torch.cuda.empty_cache()
    sys.stdout.flush()


if __name__ == "__main__":
    main()
