"""Output aliasing equal to eager's for every kind of view (issue 13 item 8, aliasing): which
input or output each result views, or none, and which share a storage, through the inductor
too. Eager's rules the cases pin down:

- an op that computes a new tensor returns one of its own, even where the inductor wrote it
  through a reshape of its buffer (``sum(keepdim=True)``, a 3-d ``linear``, a 0-d ``matmul``);
- ``split``/``chunk``/``unbind`` pieces are views of their base (a write through one reaches
  the base, a piece of an intermediate is a view of that intermediate);
- ``broadcast_tensors`` hands back an argument that already has the broadcast sizes as that very
  tensor, and ``expand``s the others (views of them);
- ``*_as`` views take only the other tensor's shape (or dtype);
- ``as_tensor``, ``atleast_2d`` of a matrix, ``resolve_conj`` of a real tensor and ``dropout`` out
  of training return their argument itself.

And, found on the way: a recursive local function live at a graph break (its cell holds the
function, whose closure holds the cell) is rebuilt after the graph."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from .runner import case

STRICT_BREADTH = True


def x34(r):
    return (r.randn(3, 4),)


def pair(r):
    return (r.randn(3, 4), r.randn(3, 4))


# ---------------------------------------------------------------------------------------------
# New tensors lowered through a reshape of their buffer


@case(x34)
def keepdim_sum_of_intermediate(x):
    return (x * 2).sum(-1, keepdim=True), x.amax(0, keepdim=True)


@case(lambda r: (r.randn(2, 3, 4), r.randn(5, 4), r.randn(5)))
def linear_3d_output_is_its_own(x, w, b):
    return F.linear(x, w), F.linear(x, w, b), x @ w.t()


@case(pair)
def dot_0d_output_is_its_own(x, y):
    return x[0] @ y[0], torch.matmul(x[1], y[1]) * 1


@case(x34)
def keepdim_output_written_after(x):
    s = x.sum(-1, keepdim=True)
    s.mul_(2)
    return s, x


# ---------------------------------------------------------------------------------------------
# broadcast_tensors


@case(pair)
def broadcast_tensors_same_shape_is_the_input(x, y):
    a, b = torch.broadcast_tensors(x, y)
    return a, b


@case(lambda r: (r.randn(3, 4), r.randn(4)))
def broadcast_tensors_expands_the_smaller(x, y):
    a, b = torch.broadcast_tensors(x, y)
    return a, b, b + 1


@case(pair)
def broadcast_tensors_write_through_an_element(x, y):
    a, b = torch.broadcast_tensors(x, y)
    a.add_(1)
    return x * 1, b


@case(pair)
def broadcast_tensors_of_intermediates(x, y):
    u = x * 2
    a, b = torch.broadcast_tensors(u, y[0])
    return u, a, b


# ---------------------------------------------------------------------------------------------
# Multi-view ops


@case(x34)
def split_piece_write_reaches_input(x):
    p, q = x.split(2, 1)
    p.add_(1)
    return q, x


@case(x34)
def unbind_of_intermediate_views_it(x):
    y = x * 2
    rows = y.unbind(0)
    return y, rows[0], rows[2]


@case(x34)
def chunk_pieces_of_hidden_base(x):
    a, b = (x + 1).chunk(2, 1)
    return a, b


@case(x34)
def split_write_then_read_other_piece(x):
    y = x * 3
    a, b = y.split([1, 2], 0)
    b.mul_(-1)
    return y.sum(0), a


# ---------------------------------------------------------------------------------------------
# Views and maybe-views with a tensor or a same-value argument


@case(pair)
def as_views_of_input(x, o):
    return x.view_as(o), x.expand_as(o), x.reshape_as(o), x.type_as(o)


@case(pair)
def as_views_of_intermediate(x, o):
    y = x * 2
    return y, y.view_as(o), y.expand_as(o), y.type_as(o)


@case(x34)
def same_object_functions(x):
    y = x + 1
    return (
        torch.as_tensor(x),
        torch.atleast_2d(y),
        torch.atleast_3d(x),
        x.resolve_conj(),
        y.resolve_neg(),
        F.dropout(y, 0.5, training=False),
        y,
    )


@case(x34)
def write_through_as_tensor(x):
    torch.as_tensor(x).mul_(2)
    return x + 0


# ---------------------------------------------------------------------------------------------
# A recursive local function live at a graph break


# The local function reaches the resume function new on every call (and in its own closure
# cell): guarded by its code, as torch.compile guards it, so one resume graph serves every call.
@case(x34)
def recursive_closure_live_at_break(x):
    def rec(n):
        return 0 if n == 0 else 1 + rec(n - 1)

    y = x + 1
    print("break")
    return y + rec(3)


@case(x34)
def recursive_closure_in_helper_frame(x):
    def helper():
        def rec(n):
            return 0 if n == 0 else 1 + rec(n - 1)

        print("break")
        return rec(3)

    return x + helper()


def _maxdepth():
    def rec(n):
        return 0 if n == 0 else 1 + rec(n - 1)

    lo, hi = 0, 50
    while lo < hi:
        mid = (lo + hi + 1) // 2
        try:
            rec(mid)
            lo = mid
        except RecursionError:
            hi = mid - 1
    return lo


@case(x34)
def recursion_binary_search(x):
    return x, _maxdepth()


# ---------------------------------------------------------------------------------------------
# Writes found by the hunt (random view/write programs through the inductor)


def sq4(r):
    return (r.randn(4, 4), r.randn(4, 4))


@case(sq4)
def reshape_copy_then_write_to_base(x, y):
    # `x.t().reshape(16)` copies; the later write to `x` must not show in it.
    b = x.t()
    p0 = b.reshape(16)
    torch.add(b[0], 1, out=b[1])
    return b, p0


@case(sq4)
def write_through_overlapping_unfold(x, y):
    b = x.t()
    p0 = b.unfold(0, 2, 1)
    p0.index_fill_(0, torch.tensor([0]), -1.0)
    return b, p0


@case(sq4)
def broadcast_element_is_input_after_write(x, y):
    x[1].clamp_(0, 1)
    p1 = torch.broadcast_tensors(x, y)[0]
    return x, p1


@case(sq4)
def write_through_view_of_contiguous_copy(x, y):
    b = x.t()
    p1 = b.contiguous()
    p1.view(-1).clamp_(0, 1)
    return b, p1
