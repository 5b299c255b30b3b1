"""User idioms from the brief: values vs eager, graph counts vs torch.compile(backend="eager")."""

import contextlib
import dataclasses
import enum
import functools
import logging
import warnings
from typing import NamedTuple

import torch
import torch._dynamo as td
import torchferro
from torch import nn
from torch.utils import _pytree as pytree

log = logging.getLogger("h35")


@dataclasses.dataclass
class Out:
    y: torch.Tensor
    aux: dict


class NT(NamedTuple):
    a: torch.Tensor
    b: torch.Tensor


class Mode(enum.Enum):
    FAST = 1
    SLOW = 2


class Cfg:
    scale = 2.0
    mode = Mode.SLOW


@contextlib.contextmanager
def scaled(holder, s):
    old = holder["s"]
    holder["s"] = s
    try:
        yield holder
    finally:
        holder["s"] = old


@functools.lru_cache(maxsize=None)
def table(n):
    return tuple(range(n))


@torch._dynamo.disable
def dis_helper(x):
    return x.sum().item()


@torch.compiler.disable
def dis2(x):
    return x * 3


class M(nn.Module):
    cfg = Cfg()

    def __init__(self):
        super().__init__()
        for i in range(3):
            setattr(self, f"layer{i}", nn.Linear(4, 4))

    @torch.no_grad()
    def stats(self, x):
        return x.mean(), x.std()

    def forward(self, x):
        assert x.shape[-1] == 4, f"bad {x.shape}"
        if torch.jit.is_scripting():
            return x
        h = x
        for i in range(3):
            h = getattr(self, f"layer{i}")(h)
        log.debug(f"h {h.shape}")
        if torch.compiler.is_compiling():
            h = h + 0.0
        if self.cfg.mode is Mode.SLOW:
            h = h * self.cfg.scale
        holder = {"s": 1.0}
        with scaled(holder, 3.0) as hh:
            h = h * hh["s"]
        m, s = self.stats(h)
        idx = table(3)
        out = Out(h[:, list(idx)], {"m": m, "s": s})
        try:
            z = h.view(-1, 5)
        except RuntimeError:
            z = h.reshape(-1)
        leaves, spec = pytree.tree_flatten((out.y, out.aux, NT(z, m)))
        parts = [t * 2 for t in leaves]
        return pytree.tree_unflatten(parts, spec)


def warn_fn(x):
    if x.shape[0] > 1:
        warnings.warn("big batch")
    return x.relu() + dis2(x)


def dis_fn(x):
    v = dis_helper(x)
    return x * v


def gen_fn(x):
    m = nn.ModuleList(nn.Linear(4, 4) for _ in range(2))
    return sum(l(x).sum() for l in m)


def partial_fn(x):
    f = functools.partial(torch.clamp, min=-0.5, max=0.5)
    return f(x) + functools.reduce(lambda a, b: a + b, [x, x, x])


CASES = [
    ("module", M(), (torch.randn(2, 4),)),
    ("warn", warn_fn, (torch.randn(2, 4),)),
    ("disable", dis_fn, (torch.randn(2, 4),)),
    ("partial", partial_fn, (torch.randn(2, 4),)),
]

for name, fn, args in CASES:
    torch.manual_seed(0)
    ref = fn(*args)
    torchferro.compiler.reset()
    with warnings.catch_warnings(record=True) as w1:
        warnings.simplefilter("always")
        e = torchferro.explain(fn, *args, backend="eager")
    got = torchferro.compile(fn)(*args)
    td.reset()
    with warnings.catch_warnings(record=True) as w2:
        warnings.simplefilter("always")
        try:
            tcg = td.explain(fn)(*args).graph_count
        except Exception as ex:  # noqa: BLE001  (torch.compile's own failure, reported)
            tcg = f"raises {type(ex).__name__}"
    ok = all(
        torch.allclose(a, b)
        for a, b in zip(pytree.tree_leaves(ref), pytree.tree_leaves(got))
    )
    print(
        f"{name:10s} ferro {e.graph_count}g tc {tcg}g values {'ok' if ok else 'MISMATCH'} warns {len(w1)}/{len(w2)}"
    )
    for b in e.break_reasons:
        print("    ", str(b)[:200])
