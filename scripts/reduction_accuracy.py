"""How far long reductions land from a float64 reference: torchferro, eager and torch.compile.

    PYTHONPATH=python python scripts/reduction_accuracy.py [--lengths 1e3,1e5,1e7]
        [--kinds sum,mean,...] [--dims whole,inner,outer2,outer16] [--dtypes float32,...]
        [--impls ours,eager,tc]

Each cell is the largest error of one output over the largest magnitude of the float64 answer
(`max|y - ref| / max|ref|`, computed in float64 on the same rounded input), for inputs uniform
in [0, 1): a positive mean makes a long sum grow with its length, so an accumulation whose
error grows linearly shows it. Layouts: `whole` reduces every element of `[n]`, `inner` the
last dim of `[2, n]` (rows along memory), `outer2` the first dim of `[n, 2]` (a strided
reduction over few columns) and `outer16` the first dim of `[n, 16]` (many columns: the
column-blocked kernels). The `x worse` column is ours over eager; `-` where the reference
overflows the dtype. torch.compile compiles each shape afresh (`dynamic=False`).
"""

from __future__ import annotations

import argparse

import torch
import torch.nn.functional as F


def _last(x, d):
    """`x` with its reduced dim last (a view: the kernel still reads it strided)."""
    return x.transpose(d if d is not None else 0, -1)


KINDS = {
    "sum": lambda x, d: x.sum(d) if d is not None else x.sum(),
    "mean": lambda x, d: x.mean(d) if d is not None else x.mean(),
    "var": lambda x, d: x.var(d) if d is not None else x.var(),
    "std": lambda x, d: x.std(d) if d is not None else x.std(),
    "norm": lambda x, d: torch.linalg.vector_norm(x, dim=d),
    "prod": lambda x, d: x.prod(d) if d is not None else x.prod(),
    "logsumexp": lambda x, d: torch.logsumexp(x, d if d is not None else 0),
    "softmax": lambda x, d: torch.softmax(x, d if d is not None else 0),
    "log_softmax": lambda x, d: torch.log_softmax(x, d if d is not None else 0),
    "mse_loss": lambda x, d: F.mse_loss(x, x.flip(0) * 0.5),
    "sq_mean": lambda x, d: (x * x).mean(d) if d is not None else (x * x).mean(),
    "layer_norm": lambda x, d: F.layer_norm(_last(x, d), (_last(x, d).shape[-1],)),
    "rms_norm": lambda x, d: F.rms_norm(_last(x, d), (_last(x, d).shape[-1],)),
}

# name -> (shape for length n, reduced dim or None for all)
DIMS = {
    "whole": (lambda n: (n,), None),
    "inner": (lambda n: (2, n), 1),
    "outer2": (lambda n: (n, 2), 0),
    "outer16": (lambda n: (n, 16), 0),
}

DTYPES = {
    "float32": torch.float32,
    "float16": torch.float16,
    "bfloat16": torch.bfloat16,
}


def data(kind: str, shape, dtype, gen) -> torch.Tensor:
    u = torch.rand(shape, generator=gen, dtype=torch.float64)
    if kind == "prod":
        # Near 1, so a long product stays finite: its rounding still compounds per factor.
        n = max(shape)
        u = 1.0 + (u - 0.5) * (4.0 / n)
    elif kind in ("softmax", "log_softmax", "logsumexp"):
        u = u * 4.0
    return u.to(dtype)


def rel_err(y: torch.Tensor, ref: torch.Tensor) -> float:
    y = y.double()
    scale = ref.abs().max().item()
    if not torch.isfinite(ref).all():
        return float("nan")
    return ((y - ref).abs().max().item()) / (scale if scale > 0 else 1.0)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lengths", default="1e3,1e4,1e5,1e6,1e7")
    ap.add_argument("--kinds", default=",".join(KINDS))
    ap.add_argument("--dims", default=",".join(DIMS))
    ap.add_argument("--dtypes", default="float32")
    ap.add_argument("--impls", default="ours,eager")
    ap.add_argument("--max-elems", type=float, default=2.5e7)
    a = ap.parse_args()
    impls = a.impls.split(",")
    if "ours" in impls:
        import torchferro

        torchferro.config.recompile_limit = 100000
    torch._dynamo.config.recompile_limit = 100000
    gen = torch.Generator().manual_seed(0)
    cols = (
        ["dtype", "kind", "dims", "n"]
        + impls
        + (["x worse"] if "ours" in impls else [])
    )
    print("| " + " | ".join(cols) + " |")
    print("|" + "---|" * len(cols))
    for dname in a.dtypes.split(","):
        dtype = DTYPES[dname]
        for kind in a.kinds.split(","):
            f = KINDS[kind]
            for dims in a.dims.split(","):
                if kind == "mse_loss" and dims != "whole":
                    continue
                shape_of, d = DIMS[dims]
                for n in (int(float(s)) for s in a.lengths.split(",")):
                    shape = shape_of(n)
                    if torch.Size(shape).numel() > a.max_elems:
                        continue
                    x = data(kind, shape, dtype, gen)
                    ref = f(x.double(), d)
                    if not torch.isfinite(ref.to(dtype)).all():
                        print(
                            f"| {dname} | {kind} | {dims} | {n:.0e} |"
                            + " - |" * (len(cols) - 4)
                        )
                        continue
                    errs = {}
                    for impl in impls:
                        g = lambda x, f=f, d=d: f(x, d)  # noqa: E731
                        if impl == "ours":
                            g = torchferro.compile(g, dynamic=False)
                        elif impl == "tc":
                            torch._dynamo.reset()
                            g = torch.compile(g, dynamic=False)
                        errs[impl] = rel_err(g(x), ref)
                    row = [f"{errs[i]:.1e}" for i in impls]
                    if "ours" in impls and "eager" in impls:
                        row.append(f"{errs['ours'] / max(errs['eager'], 1e-300):.1f}")
                    print(
                        f"| {dname} | {kind} | {dims} | {n:.0e} | "
                        + " | ".join(row)
                        + " |",
                        flush=True,
                    )


if __name__ == "__main__":
    main()
