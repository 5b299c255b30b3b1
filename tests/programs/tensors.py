"""Tensor attributes and queries, in-place ops on inputs and intermediates, views of inputs and
their bases, and aliasing between inputs and outputs."""

from __future__ import annotations

import torch

from .harness import program


def x34(r):
    return (r.randn(3, 4),)


def xy34(r):
    return (r.randn(3, 4), r.randn(3, 4))


# torch.compile: 1 graphs
@program(x34, 0, fullgraph=True)
def tensor_queries(x):
    return (
        x.shape,
        x.size(),
        x.size(1),
        x.dim(),
        x.ndim,
        x.dtype,
        x.device,
        x.numel(),
        x.is_contiguous(),
        x.t().is_contiguous(),
        x.requires_grad,
        x.is_floating_point(),
        len(x),
        x.stride(),
        x.element_size(),
    )


@program(lambda r: (r.randn(2, 3, 4),), 1, fullgraph=True)
def queries_feed_shapes(x):
    b = x.size(0)
    return (
        x.reshape(b, -1) * x.ndim,
        x.new_zeros(x.shape[1:]),
        x.new_ones((b,)).dtype,
        x.mT.shape,
    )


@program(xy34, 1, fullgraph=True)
def add_mul_on_input(x, y):
    x.add_(y)
    y.mul_(2)
    return x + y


@program(xy34, 1, fullgraph=True)
def copy_into_input(x, y):
    x.copy_(y * 3)
    return None  # noqa: RET501, PLR1711


@program(x34, 1, fullgraph=True)
def setitem_on_input(x):
    x[0] = 1.0
    x[:, 1] = x[:, 2] * 2
    x[1, 1:3] += 5
    return x.sum()


@program(lambda r: (r.randn(3, 4), r.bool(3, 4)), 1, fullgraph=True)
def masked_setitem_on_input(x, m):
    x[m] = 0.0
    return x


@program(lambda r: (r.randn(5, 4), r.randint(0, 5, 3)), 1, fullgraph=True)
def index_tensor_setitem(x, idx):
    x[idx] = -1.0
    return x * 2


@program(x34, 1, fullgraph=True)
def inplace_on_view_of_input(x):
    x[0].mul_(10)
    x.view(-1)[-1] = 99.0
    x.t()[0].zero_()
    return x


@program(x34, 1, fullgraph=True)
def inplace_through_alias_local(x):
    y = x
    y += 1
    z = x.view(4, 3)
    z.mul_(2)
    return x, y is x


@program(x34, 1, fullgraph=True)
def inplace_on_intermediate_keeps_input(x):
    y = x.clone()
    y.clamp_(min=0).sub_(0.5)
    y.fill_diagonal_(7.0)
    return y


@program(x34, 1, fullgraph=True)
def inplace_methods_chain(x):
    x.abs_().sqrt_().neg_()
    return x


@program(lambda r: (r.randn(3, 4),), 1, fullgraph=True)
def returns_view_of_input(x):
    return x.view(4, 3), x[1], x.t(), x.unsqueeze(0)


@program(lambda r: (r.randn(3, 4),), 0, fullgraph=True)
def returns_input_itself(x):
    return x, x.detach() if False else x


@program(lambda r: (r.randn(3, 4), r.randn(4)), 1, fullgraph=True)
def inplace_with_broadcast_operand(x, b):
    x += b
    x /= 2
    return x.mean()


@program(lambda r: (r.randint(0, 10, 3, 4),), 1, fullgraph=True)
def integer_inplace_ops(a):
    a //= 2
    a %= 3
    a <<= 1
    a |= 1
    return a.sum()


@program(lambda r: (r.randn(3, 4),), 1, fullgraph=True)
def index_put_and_scatter_inplace(x):
    x.index_put_((torch.tensor([0, 2]),), torch.tensor(3.0))
    x.scatter_(1, torch.tensor([[0], [1], [2]]), 8.0)
    x.masked_fill_(x < -1, -1.0)
    return x


@program(lambda r: (r.randn(4, 4)[:, :3],), 1, fullgraph=True)
def noncontiguous_input_inplace(x):
    x.mul_(3)
    return x.is_contiguous(), x + 1


@program(lambda r: (r.randn(6),), 1, fullgraph=True)
def chunk_views_mutated(x):
    a, b = x.chunk(2)
    a.add_(1)
    b.mul_(-1)
    return x


@program(lambda r: (r.randn(3, 4),), 1, fullgraph=True)
def detach_and_inplace(x):
    d = x.detach()
    d.add_(1)
    return x


# torch.compile: 1 graphs
@program(lambda r: (r.randn(3, 4, requires_grad=True),), 1, fullgraph=True)
def requires_grad_outputs(x):
    y = x * 2
    return y, y.detach(), y.requires_grad, x.grad is None


@program(lambda r: (r.randn(3, 4),), 1, fullgraph=True)
def dtype_changes(x):
    return (
        x.half().float(),
        x.to(torch.int64),
        x.type(torch.float64),
        (x > 0).int().sum(dim=1),
    )


@program(lambda r: (r.randn(3, 4),), 1, fullgraph=True)
def factories_from_queries(x):
    return (
        torch.arange(x.shape[1], dtype=x.dtype),
        torch.full_like(x, 2.0),
        torch.zeros(x.size(0), 2, device=x.device),
        torch.tensor([1.0, 2.0]) * x.shape[0],
    )


@program(lambda r: (r.randn(3, 4), r.randn(3, 4)), 1, fullgraph=True)
def multiple_mutations_same_input(x, y):
    x.add_(1)
    x.mul_(y)
    x[0] = 0
    return y


@program(lambda r: (r.randn(3, 4),), 1, fullgraph=True)
def inplace_then_view_return(x):
    x.add_(1)
    return x[0]


@program(lambda r: (r.randn(3, 4),), 1, fullgraph=True)
def metadata_mutation_unsqueeze_(x):
    y = x.clone()
    y.unsqueeze_(0)
    return y, y.shape, y.dim()


def _aliased(r):
    t = r.randn(3, 4)
    return (t, t)


@program(_aliased, 1, fullgraph=True)
def same_tensor_passed_twice(x, y):
    x.add_(1)
    return y * 2


def _base_and_view(r):
    t = r.randn(3, 4)
    return (t, t[1])


@program(_base_and_view, 1, fullgraph=True)
def base_and_view_passed_together(base, row):
    row.mul_(10)
    return base.sum(), row


@program(lambda r: (r.randn(3, 4),), 0, fullgraph=True)
def tolist_of_shape_and_sizes(x):
    return list(x.shape), x.size()[::-1], [d * 2 for d in x.shape]


# torch.compile: 1 graphs
@program(x34, 1, fullgraph=True)
def torch_query_of_a_tensor_then_an_op(x):
    """`torch.is_floating_point(x)` is traced as a node and folded to its value, and the node is
    dropped: `torch.relu`'s node takes the freed id and must run relu, not the query."""
    if torch.is_floating_point(x):
        return torch.relu(x) + 1
    return x
