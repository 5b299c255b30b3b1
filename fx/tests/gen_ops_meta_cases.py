"""Output metadata of every op in the catalog, from torch: data/ops_meta_cases.json.

For each catalog row (`fx/src/ops/table.rs`) and each way torch exports it (Tensor method,
`torch.X`, `torch.nn.functional.X`), a fixed family of argument recipes is tried on real CPU
tensors: one tensor in several layouts (contiguous, transposed, strided, channels-last, 0-d,
empty) and dtypes, two or three tensors that broadcast and promote (float with int, int with a
Python float, half with float), and dim arguments (negative dims, keepdim). Every recipe torch
accepts is recorded with the sizes, strides, dtype and requires_grad it produced, in the
encoding of `gen_infer_cases.py` (whose helpers this reuses). `fx/tests/ops_torch.rs` replays
them through `fx::infer`: an answer must equal torch's, and every row must either be answered
for some case or be listed as left to meta tensors.

Run: .venv/bin/python fx/tests/gen_ops_meta_cases.py  (from the repository root)
"""

import json
import os
import re
import sys
import warnings

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_infer_cases as g  # noqa: E402

warnings.filterwarnings("ignore")
HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "data", "ops_meta_cases.json")
t = g.t


def one_tensor():
    """(inputs, tag) for one tensor argument."""
    return [
        ([g.inp([2, 3], rg=True)], "contiguous"),
        ([g.transposed([3, 4], rg=True)], "transposed"),
        ([g.sliced([2, 3])], "strided"),
        ([g.channels_last([2, 3, 2, 2], rg=True)], "channels-last"),
        ([g.inp([])], "0-d"),
        ([g.inp([0, 3])], "empty"),
        ([g.inp([2, 3], "int64")], "int64"),
        ([g.inp([2, 3], "bool")], "bool"),
        ([g.inp([2, 3], "float16")], "float16"),
    ]


def two_tensors():
    return [
        ([g.inp([2, 1, 3], rg=True), g.inp([4, 3])], "broadcast"),
        ([g.inp([2, 3], "int64"), g.inp([2, 3])], "int-float"),
        ([g.transposed([3, 3]), g.inp([3, 3], "float64")], "transposed-double"),
        ([g.channels_last([2, 3, 2, 2]), g.inp([3, 1, 1])], "channels-last-broadcast"),
        ([g.inp([2, 3], "float16"), g.inp([], "float32")], "half-0d-float"),
        ([g.inp([2, 3], "int32"), g.inp([2, 3], "int32")], "int32"),
        ([g.inp([3, 3]), g.inp([3, 3])], "square"),
        ([g.inp([2, 3, 4]), g.inp([2, 4, 5])], "batched"),
        ([g.inp([3]), g.inp([3])], "vectors"),
    ]


def recipes():
    """(inputs, args, kwargs, tag): `t(0)` is the tensor the op is called on. Families are
    interleaved, so the first recipes an op accepts already span layouts and argument kinds."""
    families = [[] for _ in range(9)]
    for ins, tag in one_tensor():
        families[0].append((ins, [t(0)], {}, tag))
        families[1].append((ins, [t(0), -1], {}, tag + " dim=-1"))
        families[2].append((ins, [t(0), 0, True], {}, tag + " dim=0 keepdim"))
        families[3].append(
            (ins, [t(0)], {"dim": -1, "keepdim": True}, tag + " kw dim keepdim")
        )
        families[4].append((ins, [t(0), 0, -1], {}, tag + " two dims"))
        families[5].append((ins, [t(0), 2.5], {}, tag + " python float"))
        families[5].append((ins, [t(0), 2], {}, tag + " python int"))
    for ins, tag in two_tensors():
        families[6].append((ins, [t(0), t(1)], {}, tag))
        families[7].append((ins + [g.inp([1])], [t(0), t(1), t(2)], {}, tag + " three"))
    mask = g.inp([2, 3], "bool")
    families[8].append(([g.inp([2, 3]), mask], [t(0), t(1), 1.5], {}, "mask value"))
    families[8].append(
        ([g.inp([4, 3]), g.inp([2], "int64")], [t(0), 0, t(1)], {}, "dim index")
    )
    out = []
    for i in range(max(len(f) for f in families)):
        out.extend(f[i] for f in families if i < len(f))
    return out


def spellings(name):
    """(kind, target) pairs through which torch exports `name`."""
    out = []
    if callable(getattr(torch.Tensor, name, None)):
        out.append(("method", name))
    for prefix, ns in (("torch.", torch), ("torch.nn.functional.", F)):
        v = getattr(ns, name, None)
        if callable(v) and not isinstance(v, (torch.dtype, type)):
            out.append(("function", prefix + name))
    return out


# Rows whose calls would not say anything about metadata (random draws keep shapes but are
# covered by the flags; Python queries return Python values) are still tried: only calls that
# return tensors are kept.
SKIP = {
    "backward",
    "register_hook",
    "retain_grad",
    "numpy",
    "tolist",
    "item",
    "data_ptr",
    "untyped_storage",
    "storage",
    "share_memory",
    "set",
    "resize",
    "resize_as",
    "pin_memory",
    "cuda",
    "__bool__",
    "__int__",
    "__float__",
    "__index__",
}
PER_SPELLING = 16


def main():
    table = open(os.path.join(HERE, "..", "src", "ops", "table.rs")).read()
    names = re.findall(r'(?:row|bare)\("([^"]+)"', table)
    out = []
    torch.manual_seed(0)
    for name in names:
        if name in SKIP:
            continue
        for kind, target in spellings(name):
            kept = 0
            for ins, args, kwargs, tag in recipes():
                c = {
                    "target": [kind, target],
                    "inputs": ins,
                    "args": args,
                    "kwargs": kwargs,
                    "tag": tag,
                    "op": name,
                }
                r = g.run(c, "cpu")
                if "error" in r or not has_tensor(r):
                    continue
                c["expected"] = r
                c["id"] = len(out)
                out.append(c)
                kept += 1
                if kept >= PER_SPELLING:
                    break
    with open(OUT, "w") as f:
        json.dump({"torch": torch.__version__, "cases": out}, f, separators=(",", ":"))
        f.write("\n")
    print(f"{len(out)} cases -> {OUT}", file=sys.stderr)


def has_tensor(r):
    """A result holding a tensor. A negative size (`torch.tensor(1.).expand(0, -1)` is
    accepted by torch and gives sizes [0, -1]) is no tensor to compare against."""
    if "sizes" in r:
        return all(n >= 0 for n in r["sizes"])
    return "tuple" in r and any(has_tensor(x) for x in r["tuple"])


if __name__ == "__main__":
    main()
