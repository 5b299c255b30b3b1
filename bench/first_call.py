"""First-call latency of a fresh process (issue 19): eager, torch.compile (cold and warm cache),
torchferro (cold and warm cache) and a torchferro precompiled load, for the zoo's small resnet18
and GPT-2 on CPU.

    .venv/bin/python bench/first_call.py                 # both models, 5 repeats, Markdown table
    .venv/bin/python bench/first_call.py --models gpt2 --repeats 3 --json out.json
    .venv/bin/python bench/first_call.py --models gpt2-dynamic    # four sequence lengths

``gpt2-dynamic``: the same GPT-2 compiled (and captured) with ``dynamic=True`` at length 8;
the timed "first call" is four calls, at lengths 8, 13, 24 and 31 (a precompiled load runs
them all on the one symbolic library of the capture; a live compile traces once and builds its
kernels once; eager just runs).

Every measurement is its own subprocess. The parent takes the wall clock just before starting it;
the child reports the wall clock after its imports (torch, the model library, the compiler) and at
its first result. ``start->result`` is process start to the first result (what a user waits for);
``import`` is process start to the end of the imports; ``first call`` is the rest minus building
the model (compiling, or loading the precompiled artifact, plus the call). Each figure is the
median over the repeats.

Cold runs get a new empty ``TORCHINDUCTOR_CACHE_DIR`` / ``TORCHFERRO_CACHE_DIR`` each; warm runs
share one directory that a first, untimed run filled. The precompiled runs load an artifact and
cache written once by a capture process, with ``CC`` pointing at nothing and an empty
``TORCHFERRO_CACHE_DIR`` (nothing may compile).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

VARIANTS = (
    "eager",
    "torch.compile cold",
    "torch.compile warm",
    "torchferro cold",
    "torchferro warm",
    "torchferro precompiled",
)

FN = {
    "resnet18": "lambda model, x: model(x)",
    "gpt2": "lambda model, ids: model(ids, use_cache=False)",
    "gpt2-dynamic": "lambda model, ids: model(ids, use_cache=False)",
}

_FNS = {
    "resnet18": lambda model, x: model(x),
    "gpt2": lambda model, ids: model(ids, use_cache=False),
    "gpt2-dynamic": lambda model, ids: model(ids, use_cache=False),
}

# The sequence lengths a dynamic model's first calls run at (the first is the capture's).
DYNAMIC_LENGTHS = (8, 13, 24, 31)


def _model_and_input(name):
    """The zoo's small configurations (tests/test_models.py), built under manual_seed(0)."""
    import torch

    torch.manual_seed(0)
    g = torch.Generator().manual_seed(0)
    if name == "resnet18":
        import torchvision

        model = torchvision.models.resnet18(weights=None).eval()
        return model, torch.randn(2, 3, 64, 64, generator=g)
    import transformers

    # gpt2 and gpt2-dynamic: one model.
    config = transformers.GPT2Config(
        n_layer=2, n_embd=64, n_head=4, vocab_size=100, n_positions=32
    )
    model = transformers.GPT2Model(config).eval()
    return model, torch.randint(0, 100, (2, 8), generator=g)


def _child(model_name, variant, spawn_ns, workdir):
    """Runs in the fresh process: imports, builds, first call; prints one JSON line."""
    import torch

    if model_name == "resnet18":
        import torchvision  # noqa: F401
    else:
        import transformers  # noqa: F401
    if variant.startswith("torch.compile"):
        import torch._dynamo
    elif variant == "torchferro precompiled":
        from torchferro.compiler import precompile
    elif variant.startswith("torchferro"):
        import torchferro
    imported_ns = time.time_ns()
    model, x = _model_and_input(model_name)
    fn = _FNS[model_name]
    dynamic = model_name.endswith("-dynamic")
    inputs = [x]
    if dynamic:
        g = torch.Generator().manual_seed(1)
        inputs = [torch.randint(0, 100, (2, n), generator=g) for n in DYNAMIC_LENGTHS]
    built_ns = time.time_ns()
    with torch.no_grad():
        if variant == "eager":
            f = fn
        elif variant.startswith("torch.compile"):
            f = torch.compile(fn, dynamic=True if dynamic else None)
        elif variant == "torchferro precompiled":
            f = precompile.load(
                os.path.join(workdir, f"{model_name}.py"),
                os.path.join(workdir, f"{model_name}.cache"),
            )
        else:
            f = torchferro.compile(fn, dynamic=True if dynamic else None)
        for x in inputs:
            out = f(model, x)
            first = out if isinstance(out, torch.Tensor) else out[0]
            float(first.flatten()[0])  # the result is materialized
    done_ns = time.time_ns()
    extra = {}
    if variant == "torchferro precompiled":
        extra = precompile.counters()
        # How each loaded graph runs ("symbolic": the capture's kernels at every length).
        graphs = range(len(f.artifact.GRAPHS))
        extra["kinds"] = [getattr(f.artifact, f"graph_{i}").kind for i in graphs]
    print(
        json.dumps(
            {
                "import_ms": (imported_ns - spawn_ns) / 1e6,
                "build_ms": (built_ns - imported_ns) / 1e6,
                "call_ms": (done_ns - built_ns) / 1e6,
                "total_ms": (done_ns - spawn_ns) / 1e6,
                **extra,
            }
        )
    )


def _capture(model_name, workdir, env):
    """Writes the artifact and cache the precompiled runs load (untimed)."""
    code = f"""
import sys, torch
sys.path.insert(0, {os.path.dirname(os.path.abspath(__file__))!r})
from first_call import _model_and_input, FN
from torchferro.compiler import precompile
model, x = _model_and_input({model_name!r})
with torch.no_grad(), precompile.capture({FN[model_name]},
        artifact_path={os.path.join(workdir, model_name + ".py")!r},
        cache_path={os.path.join(workdir, model_name + ".cache")!r},
        dynamic={True if model_name.endswith("-dynamic") else None}) as cap:
    cap(model, x)
"""
    script = os.path.join(workdir, f"capture_{model_name}.py")
    with open(script, "w") as f:
        f.write(code)
    subprocess.run([sys.executable, script], env=env, check=True)


def _run_one(model_name, variant, workdir, env):
    spawn_ns = time.time_ns()
    p = subprocess.run(
        [
            sys.executable,
            os.path.abspath(__file__),
            "--child",
            model_name,
            variant,
            str(spawn_ns),
            workdir,
        ],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if p.returncode != 0:
        raise RuntimeError(f"{model_name} / {variant} failed:\n{p.stderr[-3000:]}")
    return json.loads(p.stdout.strip().splitlines()[-1])


def _env(workdir, variant, repeat):
    env = dict(os.environ)
    if variant.endswith("cold"):
        d = os.path.join(workdir, f"cold-{variant.split()[0]}-{repeat}")
    elif variant == "torchferro precompiled":
        d = os.path.join(workdir, f"empty-{repeat}")
        env["CC"] = os.path.join(workdir, "no-such-compiler")
    else:
        d = os.path.join(workdir, f"warm-{variant.split()[0]}")
    env["TORCHINDUCTOR_CACHE_DIR"] = d
    env["TORCHFERRO_CACHE_DIR"] = d
    return env


def measure(models, repeats, variants=VARIANTS):
    results = {}
    with tempfile.TemporaryDirectory(prefix="first_call_") as workdir:
        for m in models:
            if "torchferro precompiled" in variants:
                _capture(m, workdir, _env(workdir, "torchferro cold", "capture"))
            for v in variants:
                if v.endswith("warm"):  # fill the shared cache directory, untimed
                    _run_one(m, v, workdir, _env(workdir, v, 0))
            # Repeats are the outer loop, so every variant of a model sees the same machine
            # load on average (a shared machine's load drifts over minutes).
            runs = {v: [] for v in variants}
            for r in range(repeats):
                for v in variants:
                    runs[v].append(_run_one(m, v, workdir, _env(workdir, v, r)))
            for v in variants:
                row = {
                    k: statistics.median(x[k] for x in runs[v])
                    for k in ("import_ms", "build_ms", "call_ms", "total_ms")
                }
                if v == "torchferro precompiled":
                    row["counters"] = {
                        k: max(x[k] for x in runs[v]) for k in ("traces", "c_compiles")
                    }
                    row["kinds"] = runs[v][0]["kinds"]
                results.setdefault(m, {})[v] = row
                print(f"{m:9s} {v:24s} {row}", file=sys.stderr, flush=True)
    return results


def table(results):
    lines = [
        "| model | variant | start->result (ms) | import (ms) | build model (ms) | first call (ms) |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for m, rows in results.items():
        for v, r in rows.items():
            lines.append(
                f"| {m} | {v} | {r['total_ms']:.0f} | {r['import_ms']:.0f} | "
                f"{r['build_ms']:.0f} | {r['call_ms']:.1f} |"
            )
    return "\n".join(lines)


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        _child(sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5])
        return
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", default="resnet18,gpt2")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--variants", default=",".join(VARIANTS))
    ap.add_argument("--json", help="also write the medians here")
    a = ap.parse_args()
    results = measure(a.models.split(","), a.repeats, tuple(a.variants.split(",")))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=1)
    print(table(results))


if __name__ == "__main__":
    main()
