"""GPT-2 forward over sequence lengths 8..256: eager, torch.compile and torchferro in one run
(issue 18's ``dynamic_seq`` workload).

Each compiled variant (default backends, automatic dynamic: ``dynamic=None``) runs the lengths
in order once, each call timed (the first call at a length includes whatever it compiles), and
reports its compile count. Then every variant's per-call time at each length is measured as the
best of ``--reps`` calls, the variants interleaved so that load on the machine falls on all alike.
Values are checked against eager at every length.

torchferro's inductor lowers a dynamic graph once with symbolic sizes and builds one kernel
library for every length (where that lowering declines: templates fitted over sizes, then
libraries per size up to ``TORCHFERRO_SIZE_VARIANTS``); the "compiles" column gives graphs and
runs of the C compiler, and the entries line which runner ran each graph.

    PYTHONPATH=python python bench/dynamic_seq.py [--config tiny|small] [--reps 20]
    PYTHONPATH=python python bench/dynamic_seq.py --dynamic false   # the static baseline

``--dynamic false`` compiles every length statically (both compilers, recompile limits raised
to 64): issue 18's goal is the dynamic variant's per-call time within 5% of that one's. The two
runs are separate processes (a code object's cache would otherwise hold both kinds of entry);
compare each run's ratio to its own eager column.

``--device cuda`` runs the model and its inputs on the GPU (float32; each timed call ends
with a stream synchronization): torchferro's CUDA inductor lowers the dynamic graph once too,
and the compiles column adds NVRTC's runs (``N nvrtc``: one for every length of a dynamic graph,
plus one per static graph).

    PYTHONPATH=python python bench/dynamic_seq.py --device cuda --config small --batch 8
    PYTHONPATH=python python bench/dynamic_seq.py --device cuda --config small --batch 8 --dynamic false

``--config small`` is GPT-2 small (124M: 12 layers, width 768); ``tiny`` (the default: 2
layers, width 256) keeps the run within minutes on a loaded 2-core machine.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import tempfile
import time
import warnings

# A fresh kernel cache, so that first calls include the C compiles.
os.environ.setdefault(
    "TORCHFERRO_CACHE_DIR", tempfile.mkdtemp(prefix="tf-dynamic-seq-")
)

import torch
import torch._dynamo
import torch._dynamo.utils

import torchferro
import torchferro.compiler

LENGTHS = [8, 9, 16, 33, 64, 100, 128, 200, 256]
CONFIGS = {
    "tiny": dict(n_layer=2, n_embd=256, n_head=4),
    "small": dict(n_layer=12, n_embd=768, n_head=12),
}


def build(config: str):
    import transformers

    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cfg = transformers.GPT2Config(
            vocab_size=50257, n_positions=256, **CONFIGS[config]
        )
        cfg.bos_token_id = cfg.eos_token_id = None
        return transformers.GPT2LMHeadModel(cfg).eval()


def _ids(t: int, batch: int, device: str) -> torch.Tensor:
    return torch.randint(
        0, 50257, (batch, t), generator=torch.Generator().manual_seed(t)
    ).to(device)


def _call(f, ids):
    out = f(input_ids=ids, use_cache=False).logits
    if ids.is_cuda:
        # The call's time is the GPU's too, not only its launches.
        torch.cuda.synchronize(ids.device)
    return out


def _wrapper_code(model):
    """transformers wraps ``forward``: the frame compiled is the wrapper's."""
    import types

    return types.SimpleNamespace(__code__=type(model).forward.__code__)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", choices=sorted(CONFIGS), default="tiny")
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    ap.add_argument(
        "--variants", default="eager,torch.compile,torchferro", help="comma-separated"
    )
    ap.add_argument(
        "--dynamic",
        choices=["auto", "false"],
        default="auto",
        help="auto: dynamic=None (automatic dynamic); false: every length static",
    )
    args = ap.parse_args(argv)
    logging.getLogger("transformers").setLevel(logging.ERROR)
    variants = args.variants.split(",")
    model = build(args.config).to(args.device)
    ids = {t: _ids(t, args.batch, args.device) for t in LENGTHS}
    torch.set_grad_enabled(False)
    want = {t: _call(model, ids[t]) for t in LENGTHS}

    dynamic = None if args.dynamic == "auto" else False
    if dynamic is False:
        torch._dynamo.config.recompile_limit = 64
        torchferro.config.recompile_limit = 64
    fns = {"eager": model}
    if "torch.compile" in variants:
        torch._dynamo.reset()
        fns["torch.compile"] = torch.compile(model, dynamic=dynamic)
    if "torchferro" in variants:
        torchferro.compiler.reset()
        fns["torchferro"] = torchferro.compile(model, dynamic=dynamic)
    fns = {k: v for k, v in fns.items() if k in variants}

    # Pass 1: the lengths in order, each call timed; compiles counted.
    first: dict[str, dict[int, float]] = {}
    compiles: dict[str, int | str] = {}
    for name, f in fns.items():
        first[name] = {}
        cc_before = torchferro._C.precompile_counters()[1]
        nv_before = torchferro._C._nvrtc_compiles()
        t_start = time.perf_counter()
        for t in LENGTHS:
            t0 = time.perf_counter()
            got = _call(f, ids[t])
            first[name][t] = time.perf_counter() - t0
            torch.testing.assert_close(got, want[t], rtol=1e-4, atol=1e-4)
        first[name][0] = time.perf_counter() - t_start
        if name == "torch.compile":
            compiles[name] = torch._dynamo.utils.counters["stats"]["unique_graphs"]
        elif name == "torchferro":
            # Graphs (cache entries) / runs of the C compiler.
            graphs = len(torchferro.compiler.cache_entries(_wrapper_code(model)))
            cc = torchferro._C.precompile_counters()[1] - cc_before
            compiles[name] = f"{graphs} / {cc} C"
            if args.device == "cuda":
                nv = torchferro._C._nvrtc_compiles() - nv_before
                compiles[name] += f" / {nv} nvrtc"

    # Pass 2: per-call time at each length, best of reps, variants interleaved.
    best = {name: {t: float("inf") for t in LENGTHS} for name in fns}
    for t in LENGTHS:
        for _ in range(args.reps):
            for name, f in fns.items():
                t0 = time.perf_counter()
                _call(f, ids[t])
                best[name][t] = min(best[name][t], time.perf_counter() - t0)

    runners = ""
    if "torchferro" in fns:
        entries = torchferro.compiler.cache_entries(_wrapper_code(model))
        runners = ", ".join(f"{e['compile_id']}: {e['runner']}" for e in entries)

    print(
        f"GPT-2 {args.config} {CONFIGS[args.config]}, batch {args.batch}, lengths {LENGTHS}, "
        f"{torch.get_num_threads()} threads, dynamic={args.dynamic}, device {args.device}"
        + (f" ({torch.cuda.get_device_name()})" if args.device == "cuda" else "")
    )
    print()
    print(
        "| variant | compiles | pass 1 total (s) | "
        + " | ".join(f"T={t}" for t in LENGTHS)
        + " |"
    )
    print("| --- | --: | --: | " + " | ".join("--:" for _ in LENGTHS) + " |")
    for name in fns:
        row = " | ".join(f"{first[name][t] * 1e3:.1f}" for t in LENGTHS)
        print(
            f"| {name} first call (ms) | {compiles.get(name, '-')} | "
            f"{first[name][0]:.2f} | {row} |"
        )
    for name in fns:
        row = " | ".join(f"{best[name][t] * 1e3:.2f}" for t in LENGTHS)
        print(f"| {name} per call (ms) | | | {row} |")
    for name in fns:
        # Without the eager variant (``--variants torchferro``) there is no ratio to print.
        if name == "eager" or "eager" not in best:
            continue
        row = " | ".join(f"{best['eager'][t] / best[name][t]:.2f}x" for t in LENGTHS)
        print(f"| {name} speedup vs eager | | | {row} |")
    if runners:
        print(f"\ntorchferro entries: {runners}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
