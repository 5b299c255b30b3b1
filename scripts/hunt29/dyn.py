"""Dynamic-shape hunt: programs x dynamic policy over changing sizes; eager vs torchferro vs tc."""

import copy, sys, traceback, warnings
import torch, torch.nn as nn, torch.nn.functional as F
import torchferro, torchferro.compiler

sys.path.insert(
    0,
    __import__("os").path.join(
        __import__("os").path.dirname(__import__("os").path.abspath(__file__)),
        "..",
        "..",
        "tests",
    ),
)
from programs.counting import Count

warnings.filterwarnings("ignore")
torch._dynamo.config.recompile_limit = 64
torch._dynamo.config.cache_size_limit = 64


def clone_args(args):
    return [
        a.detach().clone().requires_grad_(a.requires_grad)
        if isinstance(a, torch.Tensor)
        else copy.deepcopy(a)
        for a in args
    ]


def close(a, b):
    if isinstance(a, torch.Tensor):
        return (
            isinstance(b, torch.Tensor)
            and a.shape == b.shape
            and a.dtype == b.dtype
            and torch.allclose(
                a.detach(), b.detach(), rtol=1e-4, atol=1e-5, equal_nan=True
            )
        )
    if isinstance(a, (list, tuple)):
        return (
            type(a) == type(b)
            and len(a) == len(b)
            and all(close(x, y) for x, y in zip(a, b))
        )
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(close(a[k], b[k]) for k in a)
    return a == b


PROGRAMS = []


def program(name, sizes):
    def deco(make):
        PROGRAMS.append((name, sizes, make))
        return make

    return deco


def snap_module(m):
    d = {k: v.detach().clone() for k, v in m.state_dict().items()}
    d.update(
        {
            "grad." + k: (p.grad.clone() if p.grad is not None else None)
            for k, p in m.named_parameters()
        }
    )
    d.update(
        {
            k: copy.deepcopy(v)
            for k, v in vars(m).items()
            if isinstance(v, (int, float, tuple, list, torch.Size))
            and not k.startswith("_")
        }
    )
    return d


def run(name, sizes, make, mode, policy):
    torch.manual_seed(0)
    P = make()
    fn = P["fn"]
    count = None
    opts = {} if policy == "mark" else {"dynamic": policy}
    if mode == "tf":
        torchferro.compiler.reset()
        g = torchferro.compile(fn, **opts)
    elif mode == "tc":
        torch._dynamo.reset()
        count = Count()
        g = torch.compile(fn, backend=count, **opts)
    else:
        g = fn
    results = []
    for i, s in enumerate(sizes):
        torch.manual_seed(100 + i)
        args = P["args"](s)
        if policy == "mark":
            for a in args:
                if isinstance(a, torch.Tensor) and a.dim() > 0 and a.shape[0] > 1:
                    torch._dynamo.mark_dynamic(a, 0)
        try:
            torch.manual_seed(200 + i)
            out = g(*args)
            if "post" in P:
                P["post"](out)
            snap = P["snap"]() if "snap" in P else {}
            results.append(
                (
                    "ok",
                    out,
                    [
                        a.detach().clone() if isinstance(a, torch.Tensor) else a
                        for a in args
                    ],
                    snap,
                )
            )
        except Exception as e:
            results.append(("err", type(e).__name__ + ": " + str(e)[:200]))
    graphs = None
    if mode == "tf":
        try:
            graphs = len(torchferro.compiler.cache_entries(g))
        except Exception as e:
            graphs = "?"
    elif mode == "tc":
        graphs = count.n
    return results, graphs


def compare(name, sizes, make, policy):
    e, _ = run(name, sizes, make, "eager", policy)
    t, gt = run(name, sizes, make, "tf", policy)
    c, gc = run(name, sizes, make, "tc", policy)
    bad = []
    for i, (re, rt) in enumerate(zip(e, t)):
        if re[0] != rt[0]:
            bad.append(
                f"call {i}: eager {re[0]} {re[1] if re[0] == 'err' else ''} tf {rt[0]} {rt[1] if rt[0] == 'err' else ''}"
            )
        elif re[0] == "ok":
            for what, a, b in (
                ("out", re[1], rt[1]),
                ("args", re[2], rt[2]),
                ("state", re[3], rt[3]),
            ):
                if not close(a, b):
                    bad.append(f"call {i}: {what} differs")
    return bad, gt, gc


def main(mods):
    import importlib

    total = 0
    nbad = 0
    for mod in mods:
        importlib.import_module(mod)
    import dyn

    for name, sizes, make in dyn.PROGRAMS:
        for policy in ("dyn", "none", "mark"):
            pol = {"dyn": True, "none": None, "mark": "mark"}[policy]
            total += 1
            try:
                bad, gt, gc = dyn.compare(name, sizes, make, pol)
            except Exception as e:
                bad, gt, gc = ["harness: " + repr(e)[:200]], None, None
            flag = (
                "BAD "
                if bad
                else (
                    "MORE"
                    if isinstance(gt, int) and isinstance(gc, int) and gt > gc
                    else "ok  "
                )
            )
            if bad:
                nbad += 1
            print(
                f"{flag} {name} [{policy}] graphs tf={gt} tc={gc} sizes={sizes}",
                "; ".join(bad[:3]),
                flush=True,
            )
    print(total, "runs", nbad, "bad")


if __name__ == "__main__":
    main(sys.argv[1:])
