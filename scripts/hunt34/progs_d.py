"""Probe batch D: data-ish tensor code (indexing writes, reductions with ties, data-dependent
shapes, Python values from tensors)."""

import torch
from differential.runner import case
from torch.nn import functional as F

STRICT_BREADTH = True


@case(lambda r: (r.randn(5, 3), r.randint(0, 5, 7)))
def d_index_put_accumulate_dupes(x, idx):
    y = x.clone()
    y.index_put_((idx,), torch.ones(7, 3), accumulate=True)
    z = torch.zeros(5).index_put((idx,), torch.arange(7.0), accumulate=True)
    return y, z


@case(lambda r: (r.randn(5, 3), r.randint(0, 5, 4)))
def d_advanced_index_add_inplace(x, idx):
    x[idx] += 1.0
    x[:, [0, 2]] *= 2
    return x.sum(0)


@case(lambda r: (r.randn(4, 5),))
def d_where_single_and_masked_scatter(x):
    i, j = torch.where(x > 0)
    src = torch.arange(20.0).view(4, 5)
    y = x.clone().masked_scatter_(x < 0, src)
    return (
        i,
        j,
        y,
        x.masked_fill(x.abs() < 0.5, float("nan")).nan_to_num(0.0, 1.0, -1.0),
    )


@case(lambda r: (r.randn(3, 6), r.randint(0, 6, 3, 2)))
def d_scatter_reduce_kw_gather(x, idx):
    a = torch.zeros(3, 6).scatter_(1, idx, 1.5, reduce="add")
    b = torch.zeros(3, 6).scatter_(1, idx, x[:, :2], reduce="multiply")
    c = x.take(torch.tensor([0, 5, 17]))
    d = x.clone()
    d.put_(torch.tensor([1, 1, 2]), torch.tensor([9.0, 8.0, 7.0]), accumulate=True)
    return a, b, c, d


@case(lambda r: (r.randint(0, 3, 4, 7).float(),))
def d_ties_median_mode_kth(x):
    return (
        x.median(1),
        x.mode(1),
        x.kthvalue(2, 1),
        x.max(1),
        x.argmin(1),
        x.sort(dim=1, stable=True),
        x.argsort(dim=1, stable=True, descending=True),
        x.nanmedian(),
    )


@case(lambda r: (r.randn(4, 6),))
def d_cum_ops(x):
    return (
        x.cummax(1),
        x.cummin(0),
        x.logcumsumexp(1),
        (x > 0).cumsum(1),
        x.cumprod(1),
        torch.diff(x, n=2, dim=1),
        torch.diff(x, prepend=x[:, :1]),
    )


@case(lambda r: (r.randint(0, 4, 6), r.randn(6, 3)))
def d_repeat_interleave_tensor(rep, x):
    return torch.repeat_interleave(x, rep, dim=0), torch.repeat_interleave(rep)


@case(lambda r: (r.randint(0, 5, 8),))
def d_one_hot_inferred(x):
    return F.one_hot(x), F.one_hot(x, 7).sum(0)


@case(lambda r: (r.randn(5),))
def d_tolist_python(x):
    vals = x.tolist()
    s = sum(v for v in vals if v > 0)
    top = max(range(len(vals)), key=lambda i: vals[i])
    return x * s, top, [round(v, 3) for v in vals]


@case(lambda r: (r.randn(5),))
def d_item_branch(x):
    m = x.max().item()
    if m > 1.0:
        return x / m, "big"
    return x * 2, "small"


@case(lambda r: (r.randn(4, 3),))
def d_new_tensor_from_values(x):
    a = x.new_tensor([1.0, 2.0, 3.0])
    b = torch.tensor([x.shape[0], x.shape[1]])
    c = torch.as_tensor([[1, 2], [3, 4]], dtype=x.dtype)
    d = x.new_full((2,), 7.0)
    e = torch.tensor([x[0, 0].item(), 3.0])
    return x + a, b, c, d, e


@case(lambda r: (r.randn(4),))
def d_combinatorics(x):
    return (
        torch.combinations(x, 2),
        torch.cartesian_prod(x[:2], x[2:]),
        torch.tril_indices(3, 3, -1),
        torch.triu_indices(3, 4, 1),
        torch.block_diag(x[:2].diag(), x[2:, None]),
    )


@case(lambda r: (r.randn(3, 4), r.randn(3, 4), r.randn(3, 4)))
def d_tensor_clamp_lerp(x, lo, w):
    return (
        torch.clamp(x, min=lo, max=lo + 1),
        torch.lerp(x, lo, w.sigmoid()),
        x.clamp_(min=-0.5),
        torch.where(x > 0, x, 0.0),
    )


@case(lambda r: (r.randn(8), r.randn(8).sort().values))
def d_searchsorted_sorter(x, b):
    perm = torch.randperm(8, generator=torch.Generator().manual_seed(1))
    unsorted = b[perm]
    sorter = torch.argsort(unsorted)
    return torch.searchsorted(unsorted, x, sorter=sorter), torch.histc(x, 4, -2, 2)


@case(lambda r: (r.randn(6, 4),))
def d_boolean_mask_rows_then_reduce(x):
    keep = x[:, 0] > 0
    rows = x[keep]
    n = rows.shape[0]
    if n == 0:
        return x.sum(), 0
    return rows.mean(0) * n, n


@case(lambda r: (r.randint(0, 3, 6, 2),))
def d_unique_dim1_counts(x):
    return torch.unique(x.t(), dim=1, return_counts=True), torch.unique(x, sorted=False)


@case(lambda r: (r.randn(4, 4),))
def d_inplace_views_of_input(x):
    d = x.diagonal()
    d.zero_()
    x.t()[0].add_(1)
    x[1:3, 1:3].mul_(-1)
    return x.triu(), d


@case(lambda r: (r.randn(2, 3, 4),))
def d_einsum_and_friends(x):
    return (
        torch.einsum("bij,bkj->bik", x, x),
        torch.einsum("bij->j", x),
        torch.tensordot(x, x, dims=([1, 2], [1, 2])),
        torch.kron(x[0, :2, :2], torch.eye(2)),
        x.flip(1).roll(1, 2).rot90(1, (1, 2)),
    )


@case(lambda r: (r.randn(5, 5),))
def d_linalg(x):
    a = x @ x.t() + torch.eye(5)
    return (
        torch.linalg.cholesky(a),
        torch.linalg.solve(a, x),
        torch.linalg.norm(x, dim=1),
        torch.linalg.vector_norm(x, ord=3),
        torch.det(a),
        torch.trace(x),
    )


@case(lambda r: (r.randn(4, 6),))
def d_dtype_mixing(x):
    i = (x * 10).to(torch.int32)
    return (
        i // 3,
        i % 3,
        i / 3,
        torch.div(i, 3, rounding_mode="floor"),
        torch.div(x, 0.3, rounding_mode="trunc"),
        i.float().pow(2) + x.double(),
        (i & 5) | (i >> 1),
        i.to(torch.uint8),
        x.to(torch.float16).sum(),
        x.bool().sum(),
    )
