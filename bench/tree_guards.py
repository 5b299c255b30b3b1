"""Per-call guard cost of a module tree: a 72-module model whose forward calls
`next(self.parameters())` (the device/dtype idiom) on a tiny input, so the time per call is
mostly the guards. The walk over the tree guards each yielded parameter and module to stay
distinct objects (tied weights change what `parameters()` yields); this measures what that
check costs per call. Eager, torch.compile(backend="eager") and torchferro(backend="eager"),
interleaved, medians in microseconds and as ratios to eager."""

from __future__ import annotations

import argparse

import torch
from torch import nn

import torchferro

from overhead import interleaved_medians


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.LayerNorm(4)
        self.fc = nn.Linear(4, 4)


class Tower(nn.Module):
    """1 root + 1 ModuleList + 23 blocks × 3 modules + 1 head = 72 modules, 94 parameters."""

    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList(Block() for _ in range(23))
        self.head = nn.Linear(4, 4)

    def forward(self, x):
        p = next(self.parameters())
        return self.head(x.to(p.dtype))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=500)
    ap.add_argument("--repeats", type=int, default=21)
    ap.add_argument(
        "--no-memo",
        action="store_true",
        help="guard walks without their memo (session 27's `guards/memo.rs`): the walk as before",
    )
    args = ap.parse_args()
    torchferro._C._guard_memo(not args.no_memo)
    torch.set_num_threads(1)
    model = Tower().eval()
    assert len(list(model.modules())) == 72
    x = torch.randn(2, 4)
    variants = {
        "eager": model,
        "torch.compile": torch.compile(model, backend="eager", fullgraph=True),
        "torchferro": torchferro.compile(model, backend="eager", fullgraph=True),
    }
    with torch.no_grad():
        for fn in variants.values():
            torch.testing.assert_close(fn(x), model(x))
            for _ in range(50):
                fn(x)
        med = interleaved_medians(variants, x, args.calls, args.repeats)
        variants["torchferro"](x)
        torchferro._C._guard_counts()
        variants["torchferro"](x)
        ev, sk, fe, re_ = torchferro._C._guard_counts()
    print(
        f"torchferro guard checks per call: {ev} run, {sk} skipped; values {fe} fetched, "
        f"{re_} reused (memo {'off' if args.no_memo else 'on'})"
    )
    print(f"{'variant':16s} {'median us/call':>15s} {'vs eager':>9s}")
    for k, v in med.items():
        print(f"{k:16s} {v:15.2f} {v / med['eager']:8.2f}x")


if __name__ == "__main__":
    main()
