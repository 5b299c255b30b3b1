"""Graph counts of one-op programs over a size sequence: torchferro against torch.compile.

Run: cd scripts/dynrules31 && PYTHONPATH=../../python:../../tests python probe.py [names...]
Each program is called over SIZES (fresh inputs per size, seeded), under both compilers with a
counting backend, for dynamic=None and dynamic=True; values are checked against eager. Prints
one row per (program, policy): torch.compile's graphs, ours, and MORE where ours is above.
"""

from __future__ import annotations

import sys
import traceback

import torch
import torch._dynamo
import torch.nn.functional as F
import torchferro
import torchferro.compiler
from programs.compare import same
from programs.counting import Count

SIZES = [4, 7, 1, 9, 4, 3, 2]


def r(*shape, gen):
    return torch.randn(*shape, generator=gen)


P = {}


def prog(make):
    def deco(f):
        P[f.__name__] = (f, make)
        return f

    return deco


# --- session 30's list -----------------------------------------------------------------------
@prog(lambda n, g: [r(n, 5, gen=g)])
def norm_dim(x):
    return torch.norm(x, dim=1)


@prog(lambda n, g: [r(n, 5, gen=g)])
def norm_p1_dim0(x):
    return torch.norm(x, p=1, dim=0, keepdim=True)


@prog(lambda n, g: [r(n, 5, gen=g)])
def vector_norm_dim(x):
    return torch.linalg.vector_norm(x, dim=-1)


@prog(lambda n, g: [r(n, 5, gen=g)])
def norm_all(x):
    return torch.norm(x)


@prog(lambda n, g: [r(n, 5, 3, gen=g), r(5, 3, 2, gen=g)])
def tensordot2(a, b):
    return torch.tensordot(a, b, dims=2)


@prog(lambda n, g: [r(n, 5, gen=g), r(5, n, gen=g)])
def tensordot_lists(a, b):
    return torch.tensordot(a, b, dims=([1], [0]))


@prog(lambda n, g: [r(n, 4, gen=g), r(3, 4, gen=g)])
def cdist(a, b):
    return torch.cdist(a, b)


@prog(lambda n, g: [r(n, 1, gen=g), r(1, 5, gen=g)])
def broadcast_tensors(a, b):
    x, y = torch.broadcast_tensors(a, b)
    return x + 2 * y


@prog(lambda n, g: [r(n, gen=g), r(5, gen=g)])
def meshgrid_ij(a, b):
    x, y = torch.meshgrid(a, b, indexing="ij")
    return x * y


@prog(lambda n, g: [r(n, gen=g), r(5, gen=g)])
def meshgrid_xy(a, b):
    x, y = torch.meshgrid(a, b, indexing="xy")
    return x - y


@prog(lambda n, g: [r(n, 3, gen=g), r(2, 2, gen=g)])
def block_diag(a, b):
    return torch.block_diag(a, b)


@prog(lambda n, g: [r(n, gen=g)])
def atleast_1d(x):
    return torch.atleast_1d(x) * 2


@prog(lambda n, g: [r(n, gen=g)])
def atleast_2d(x):
    return torch.atleast_2d(x) * 2


@prog(lambda n, g: [r(n, 3, gen=g)])
def atleast_3d(x):
    return torch.atleast_3d(x) * 2


@prog(lambda n, g: [r(n, gen=g)])
def atleast_3d_1d(x):
    return torch.atleast_3d(x) * 2


# --- the wider list --------------------------------------------------------------------------
@prog(lambda n, g: [r(n, 3, gen=g)])
def diff(x):
    return torch.diff(x, dim=0)


@prog(lambda n, g: [r(n, 3, gen=g)])
def roll(x):
    return torch.roll(x, 1, 0)


@prog(lambda n, g: [r(n, 3, gen=g)])
def roll_by_size(x):
    return torch.roll(x, x.size(0) // 2, 0)


@prog(lambda n, g: [r(n, 3, gen=g)])
def flip(x):
    return torch.flip(x, [0])


@prog(lambda n, g: [r(n, n, gen=g)])
def tril_size_diag(x):
    return torch.tril(x, diagonal=-(x.size(0) // 2))


@prog(lambda n, g: [r(n, 6, gen=g)])
def triu_size_diag(x):
    return torch.triu(x, x.size(0) // 3)


@prog(lambda n, g: [r(n, 3, gen=g)])
def repeat_interleave_int(x):
    return torch.repeat_interleave(x, 2, dim=0)


@prog(lambda n, g: [r(n, 3, gen=g)])
def repeat_interleave_flat(x):
    return x.repeat_interleave(3)


@prog(lambda n, g: [r(n, 3, gen=g)])
def pad_by_size(x):
    return F.pad(x, (0, 0, 0, x.size(0)))


@prog(lambda n, g: [r(2, 3, n, gen=g)])
def interpolate_scale(x):
    return F.interpolate(x, scale_factor=2.0, mode="nearest")


@prog(lambda n, g: [r(1, 2, n, 5, gen=g)])
def interpolate_bilinear(x):
    return F.interpolate(x, scale_factor=2, mode="bilinear", align_corners=False)


@prog(lambda n, g: [r(2, 3, n + 2, 5, gen=g)])
def unfold(x):
    return F.unfold(x, kernel_size=2)


@prog(lambda n, g: [r(1, 3 * 4, (n + 1) * 3, gen=g)])
def fold(x):
    return F.fold(x, output_size=(x.size(2) // 3 + 1, 4), kernel_size=2)


@prog(lambda n, g: [r(n, 3, gen=g)])
def stack_rows(x):
    return torch.stack([x[i] for i in range(2)], 0) if x.size(0) >= 2 else x * 2


@prog(lambda n, g: [r(n, 3, gen=g)])
def stack_unbind(x):
    return torch.stack(list(x.unbind(1)), 0)


@prog(lambda n, g: [r(n, 3, gen=g)])
def cumsum(x):
    return torch.cumsum(x, 0)


@prog(lambda n, g: [r(n, 3, gen=g)])
def cumprod(x):
    return torch.cumprod(x, 1)


@prog(lambda n, g: [r(n, 3, gen=g)])
def topk_half(x):
    return torch.topk(x, k=max(x.size(0) // 2, 1), dim=0).values


@prog(lambda n, g: [r(n, 3, gen=g)])
def sort(x):
    return torch.sort(x, dim=0).values


@prog(lambda n, g: [torch.randint(0, n, (n,), generator=g)])
def one_hot_n(x):
    return F.one_hot(x, num_classes=x.size(0))


@prog(lambda n, g: [r(n, 3, gen=g), torch.linspace(-1, 1, 5)])
def bucketize(x, b):
    return torch.bucketize(x, b)


@prog(lambda n, g: [r(n, 3, gen=g)])
def new_full_n(x):
    return x.new_full((x.size(0),), 2.5)


@prog(lambda n, g: [r(n, 3, gen=g)])
def linspace_n(x):
    return x * torch.linspace(0, 1, x.size(0)).unsqueeze(1)


@prog(lambda n, g: [r(n, 3, gen=g)])
def arange_over_n(x):
    n = x.size(0)
    return x * (torch.arange(n).float() / n).unsqueeze(1)


@prog(lambda n, g: [r(n, 3, gen=g), r(4, gen=g)])
def full_float_n(x, m):
    return torch.full((m.size(0),), float(x.size(0)))


@prog(lambda n, g: [r(n, 3, gen=g)])
def full_float_n_rows(x):
    return torch.full((x.size(0),), float(x.size(0)))


# --- more (a third list) ---------------------------------------------------------------------
@prog(lambda n, g: [r(n, 3, gen=g), r(2, 2, gen=g)])
def kron(x, y):
    return torch.kron(x, y)


@prog(lambda n, g: [r(n, gen=g), r(3, gen=g)])
def cartesian_prod(a, b):
    return torch.cartesian_prod(a, b)


@prog(lambda n, g: [r(n, gen=g), r(3, gen=g)])
def outer(a, b):
    return torch.outer(a, b)


@prog(lambda n, g: [r(n, 3, gen=g), r(n, 3, gen=g)])
def cross(a, b):
    return torch.linalg.cross(a, b)


@prog(lambda n, g: [r(n, n, gen=g)])
def trace(x):
    return torch.trace(x)


@prog(lambda n, g: [r(n, 3, gen=g)])
def diag_embed(x):
    return torch.diag_embed(x)


@prog(lambda n, g: [r(n, gen=g)])
def diag(x):
    return torch.diag(x)


@prog(lambda n, g: [r(n, 3, gen=g)])
def tile(x):
    return torch.tile(x, (2, 1))


@prog(lambda n, g: [r(n, 3, gen=g)])
def rot90(x):
    return torch.rot90(x, 1, (0, 1))


@prog(lambda n, g: [r(n, 3, 2, gen=g)])
def movedim(x):
    return torch.movedim(x, 0, -1) * 2


@prog(lambda n, g: [r(n, 3, gen=g)])
def cummax(x):
    return torch.cummax(x, 0).values


@prog(lambda n, g: [r(n, 3, gen=g)])
def logcumsumexp(x):
    return torch.logcumsumexp(x, 0)


@prog(lambda n, g: [r(n, 3, gen=g)])
def kthvalue(x):
    return torch.kthvalue(x, 1, 0).values


@prog(lambda n, g: [r(n, 3, gen=g)])
def median_dim(x):
    return torch.median(x, 0).values


@prog(lambda n, g: [r(n, 4, gen=g)])
def glu(x):
    return F.glu(x, -1)


@prog(lambda n, g: [r(1, 4, n, 3, gen=g)])
def pixel_shuffle(x):
    return F.pixel_shuffle(x, 2)


@prog(lambda n, g: [r(n, 3, gen=g)])
def logsumexp(x):
    return torch.logsumexp(x, 1)


@prog(lambda n, g: [r(n, 3, gen=g)])
def var_mean(x):
    v, m = torch.var_mean(x, 0)
    return v + m


@prog(lambda n, g: [r(n, 3, gen=g)])
def aminmax(x):
    a, b = torch.aminmax(x, dim=0)
    return a + b


@prog(lambda n, g: [r(3, n, gen=g)])
def cov(x):
    return torch.cov(x)


@prog(lambda n, g: [r(n, 3, gen=g), r(3, gen=g)])
def mv(x, v):
    return torch.mv(x, v)


@prog(lambda n, g: [r(n, gen=g), r(n, gen=g)])
def dot(a, b):
    return torch.dot(a, b)


@prog(lambda n, g: [r(n, 3, gen=g), r(2, 3, gen=g)])
def inner(a, b):
    return torch.inner(a, b)


@prog(lambda n, g: [r(n, 3, gen=g), r(3, 4, gen=g), r(4, 2, gen=g)])
def multi_dot(a, b, c):
    return torch.linalg.multi_dot([a, b, c])


@prog(lambda n, g: [r(n, 3, gen=g)])
def take_along_dim(x):
    return torch.take_along_dim(x, x.argsort(0), 0)


@prog(lambda n, g: [r(n, 3, gen=g), torch.linspace(-1, 1, 5)])
def searchsorted(x, b):
    return torch.searchsorted(b, x)


@prog(lambda n, g: [r(n, 3, gen=g)])
def vander(x):
    return torch.vander(x[:, 0], 3)


@prog(lambda n, g: [r(n, 3, gen=g)])
def trapz(x):
    return torch.trapezoid(x, dim=0)


@prog(lambda n, g: [r(n, 3, gen=g)])
def cumulative_trapezoid(x):
    return torch.cumulative_trapezoid(x, dim=0)


@prog(lambda n, g: [r(n, 3, gen=g)])
def renorm(x):
    return torch.renorm(x, 2, 0, 1.0)


@prog(lambda n, g: [r(n, 3, gen=g), r(4, 5, gen=g), r(n, 5, gen=g)])
def addmv_addr(x, m, y):
    return torch.addr(y, x[:, 0], m[0])


@prog(lambda n, g: [r(n, 3, gen=g)])
def softmin(x):
    return F.softmin(x, 0)


@prog(lambda n, g: [r(n, 3, gen=g)])
def nan_to_num(x):
    return torch.nan_to_num(x.log())


@prog(lambda n, g: [r(n, 3, gen=g), r(n, 3, gen=g)])
def clamp_tensor(x, lo):
    return torch.clamp(x, min=lo)


@prog(lambda n, g: [r(n, 3, gen=g)])
def std(x):
    return torch.std(x, 0)


@prog(lambda n, g: [r(n, 3, gen=g)])
def chunk(x):
    return torch.chunk(x, 2, 0)[0] * 2


@prog(lambda n, g: [r(n, 2, gen=g)])
def squeeze_unsqueeze(x):
    return x.unsqueeze(0).squeeze(0).flatten()


@prog(lambda n, g: [r(2, 3, n, n, gen=g), torch.rand(2, 4, 4, 2, generator=g) * 2 - 1])
def grid_sample(x, grid):
    return F.grid_sample(x, grid, align_corners=False)


@prog(lambda n, g: [torch.randint(0, 10, (n, 3), generator=g), r(10, 4, gen=g)])
def embedding_bag(idx, w):
    return F.embedding_bag(idx, w)


def run(name, dynamic):
    f, make = P[name]

    def calls(compiled):
        for s in SIZES:
            a = make(s, torch.Generator().manual_seed(s))
            b = make(s, torch.Generator().manual_seed(s))
            same(compiled(*a), f(*b))

    torch._dynamo.reset()
    torchferro.compiler.reset()
    tc, fc = Count(), Count()
    try:
        calls(torch.compile(f, backend=tc, dynamic=dynamic))
    except Exception as e:  # noqa: BLE001
        tc.n = f"err {type(e).__name__}"
    try:
        calls(torchferro.compile(f, backend=fc, dynamic=dynamic))
    except Exception as e:  # noqa: BLE001
        traceback.print_exc()
        fc.n = f"err {type(e).__name__}: {str(e)[:200]}"
    torch._dynamo.reset()
    torchferro.compiler.reset()
    return tc.n, fc.n


if __name__ == "__main__":
    names = sys.argv[1:] or list(P)
    for name in names:
        for dyn in (None, True):
            tc, fc = run(name, dyn)
            more = isinstance(fc, int) and isinstance(tc, int) and fc > tc
            flag = "MORE" if more or isinstance(fc, str) else ""
            print(
                f"{name:26s} dyn={dyn!s:5s} tc={tc!s:4s} tf={fc!s:4s} {flag}",
                flush=True,
            )
