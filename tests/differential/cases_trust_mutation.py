"""Session 20 hunt, in-place ops on views and aliases of inputs (``x[:, 0] += 1``, ``out=``,
``copy_`` from an alias, ``detach()``/``.data`` writes, shape-changing in-place ops on locals)
and Python state the compiled function writes (globals, closure cells, default arguments,
containers of tensors, attributes)."""

from __future__ import annotations

import torch

from .runner import TC_DIFFERS, case

# Issue 14: more graphs than torch.compile fails unless the case names the gap (breadth=).
STRICT_BREADTH = True


def x34(r):
    return (r.randn(3, 4),)


def x44(r):
    return (r.randn(4, 4),)


def xy34(r):
    return (r.randn(3, 4), r.randn(3, 4))


@case(x34)
def trust_column_iadd_returned(x):
    x[:, 0] += 1
    return x


@case(x34)
def trust_transposed_view_mul_(x):
    y = x.t()
    y.mul_(2)
    return y, x.sum()


@case(x44)
def trust_diagonal_zero_(x):
    x.diagonal().zero_()
    return x.sum(0)


@case(x34)
def trust_strided_view_fill_(x):
    x.view(-1)[::2].fill_(0.5)
    return x * 2


@case(xy34)
def trust_out_into_input(a, b):
    torch.add(a, b, out=b)
    return b


@case(xy34)
def trust_out_into_view_of_input(a, b):
    torch.mul(a[0], 2, out=b[1])
    return b.sum()


@case(lambda r: (r.randn(3, 4), torch.empty(0)))
def trust_out_resized(a, out):
    torch.sin(a, out=out)
    return out.shape, out


@case(x44)
def trust_copy_from_flip_of_self(x):
    x.copy_(x.flip(0))
    return x


@case(x34)
def trust_copy_from_transpose_alias(x):
    y = x[:, :3]
    y.copy_(y.t().clone())
    return x


@case(x34)
def trust_detach_then_mutate(x):
    d = x.detach()
    d.add_(1)
    return x * 1


@case(lambda r: (r.randn(3, 4, requires_grad=True),))
def trust_data_mutated_of_leaf(x):
    x.data.mul_(2)
    return (x * 3).sum()


@case(x34)
def trust_input_returned_twice_after_mutation(x):
    x.add_(1)
    return x, x, x[0]


# torch.compile (2.11) returns the shape before `unsqueeze_` (2 dims, eager 3); torchferro
# traces the method and reads the shape it leaves (eager's).
@case(x34, xfail_tc=TC_DIFFERS)
def trust_unsqueeze_inplace_local(x):
    y = x.clone()
    y.unsqueeze_(0)
    return y.shape, y + 1


@case(x34)
def trust_transpose_inplace_local(x):
    y = x * 2
    y.t_()
    return y @ torch.ones(3, 2)


# The new strides are seen through every name of the tensor: a list item, an alias bound
# before, the result of the in-place call itself. torch.compile (2.11) answers
# `is_contiguous()` from the tensor's old strides (True; eager False).
@case(x34, xfail_tc=TC_DIFFERS)
def trust_transpose_inplace_seen_through_aliases(x):
    y = x * 2
    ys = [y]
    same = y
    r = y.t_()
    return ys[0] @ torch.ones(3, 2), same.is_contiguous(), r is y, torch.cat(ys) + 1


# Only graph ops read the transposed tensor: torch.compile traces it right, in one graph.
@case(x34)
def trust_transpose_inplace_list_item_ops(x):
    y = x * 2
    ys = [y, x.t()]
    y.t_()
    return ys[0] @ torch.ones(3, 2), torch.cat(ys, 1) + 1


def _flip(t):
    t.t_()


# Changed in a helper: the caller's name sees the new shape (torch.compile 2.11 returns the old
# one).
@case(x34, xfail_tc=TC_DIFFERS)
def trust_transpose_inplace_in_helper(x):
    y = x.exp()
    _flip(y)
    return y.shape, y @ torch.ones(3, 1), y.stride()


# The caller's tensor is transposed in place: the compiled call leaves it as eager does.
@case(x34)
def trust_transpose_inplace_input(x):
    x.t_()
    return x + 1, x @ torch.ones(3, 1)


# Shape-dependent Python after the change, then changed back (torch.compile 2.11 reads the
# old number of dims).
@case(x34, xfail_tc=TC_DIFFERS)
def trust_unsqueeze_then_squeeze_inplace(x):
    y = x.clone()
    y.unsqueeze_(1)
    n = y.dim()
    y.squeeze_(1)
    return n, y.shape, y.sum(0) * n


# torch.compile (2.11) reads the size before the in-place transposes.
@case(x34, xfail_tc=TC_DIFFERS)
def trust_transpose_inplace_dims_local(x):
    y = x + 1
    y.transpose_(0, 1)
    y.swapdims_(0, 1)
    y.swapaxes_(1, 0)
    return y.size(0), y * torch.arange(3.0)


@case(x34)
def trust_resize_local(x):
    y = x.clone()
    y.resize_(2, 6)
    return y


@case(x34)
def trust_squeeze_inplace_input(x):
    x.unsqueeze_(1)
    return x.shape, x.sum(1)


@case(lambda r: (r.randn(5, 3), torch.tensor(r.pick([0, 2], [4, 4]))))
def trust_index_add_input(x, idx):
    x.index_add_(0, idx, torch.ones(2, 3))
    return x


@case(lambda r: (r.randn(5, 3), torch.tensor(r.pick([0, 2], [4, 4]))))
def trust_index_put_accumulate(x, idx):
    x.index_put_((idx,), torch.ones(2, 3), accumulate=True)
    return x


@case(lambda r: (r.randn(4, 3), r.bool(4, 3)))
def trust_masked_setitem(x, m):
    x[m] = 0.0
    return x.relu_()


@case(x34)
def trust_as_strided_mutation(x):
    x.as_strided((2, 2), (4, 1), 1).mul_(10)
    return x


@case(lambda r: ([r.randn(3), r.randn(3)],))
def trust_list_of_tensors_mutated(xs):
    xs[0].add_(1)
    xs.append(xs[0] * 2)
    xs.insert(0, xs.pop())
    return xs


@case(lambda r: ({"x": r.randn(3), "w": r.randn(3)},))
def trust_dict_of_tensors_mutated(d):
    d["y"] = d["x"] * d["w"]
    del d["x"]
    d["w"].neg_()
    return d


@case(xy34)
def trust_swap_and_accumulate_alias(a, b):
    v = a[0]
    a, b = b, a
    b[1].add_(v)
    return a, b


@case(x34)
def trust_view_chain_mutated_after_read(x):
    s = x.sum()
    x.view(12)[3] = 100.0
    return s, x.sum()


@case(x34)
def trust_clone_mutated_input_untouched(x):
    y = x.clone()
    y[0] = 7.0
    return y, x


# ---------------------------------------------------------------------------------------------
# Python state

COUNT = 0
SEEN: list = []
STATS: dict = {}
SCALE = 1.0
BUF = torch.zeros(4)
ACC: list = []


@case(x34, state=("COUNT",))
def trust_global_counter(x):
    global COUNT
    COUNT += 1
    return x * COUNT


@case(x34, state=("SEEN",))
def trust_global_list_of_tensors(x):
    SEEN.append(x.sum(0))
    return torch.stack(SEEN).sum(0)


@case(x34, state=("STATS",))
def trust_global_dict_setdefault(x):
    STATS.setdefault("calls", 0)
    STATS["calls"] += 1
    STATS["last"] = x.mean()
    return x + STATS["calls"]


@case(x34, state=("SCALE",))
def trust_global_rebound_then_read(x):
    global SCALE
    SCALE = SCALE * 2
    return x * SCALE


@case(x34, state=("BUF",))
def trust_global_tensor_mutated(x):
    BUF.add_(x.sum(0))
    return BUF * 2


@case(x34, state=("ACC",))
def trust_default_argument_list(x, acc=ACC):
    acc.append(len(acc))
    return x + sum(acc)


@case(x34)
def trust_nonlocal_counter(x):
    n = 0

    def bump(t):
        nonlocal n
        n += 1
        return t * n

    y = bump(x)
    y = bump(y)
    return y, n


@case(x34)
def trust_closure_cell_list(x):
    out = []

    def keep(t):
        out.append(t)
        return t + 1

    keep(keep(x))
    return out


class _Holder:
    def __init__(self):
        self.value = 0
        self.items = []


HOLDER = _Holder()


@case(x34, state=("HOLDER",))
def trust_object_attributes_written(x):
    HOLDER.value += 1
    HOLDER.items.append(x.shape[0])
    HOLDER.last = x.max()
    return x + HOLDER.value


@case(lambda r: (r.randn(3, 4), [1, 2]))
def trust_input_list_extended(x, xs):
    xs.extend([x.shape[0], x.shape[1]])
    xs[0] = -1
    return x * sum(xs)


@case(lambda r: (r.randn(3, 4), {"n": r.pick(1, 2)}))
def trust_input_dict_counter(x, d):
    d["n"] += 1
    d.setdefault("seen", []).append(d["n"])
    return x * d["n"]


@case(x34)
def trust_generator_consumed(x):
    def gen():
        for i in range(3):
            yield x * i

    it = gen()
    first = next(it)
    rest = list(it)
    return first, rest


@case(lambda r: (r.randn(3, 4, requires_grad=True),))
def trust_data_read_of_input(x):
    d = x.data
    return d * 2, d.requires_grad, (x * d).sum()


# `.data` of a local assigned another shape: the tensor's later reads in the frame see it.
@case(x34)
def trust_data_assigned_other_shape(x):
    t = x.clone()
    t.data = torch.zeros(2, 6)
    return t.shape, t + x.reshape(2, 6)


# Session 27 (hunt27): writes through views cut by a size. The second input set has another
# length, so the second call compiles with that dimension symbolic: the bound is a graph value
# and the view was taken for a copy there, its write dropped (the input kept its values).
def rows_8_then_6(r):
    return (r.randn(r.pick(8, 6), 3),)


@case(rows_8_then_6)
def trust_write_through_slice_from_half_the_rows(x):
    x[x.size(0) // 2 :].add_(1)
    return x.sum(0)


@case(rows_8_then_6)
def trust_write_through_last_row_by_size(x):
    x[x.size(0) - 1].zero_()
    return x * 2


@case(rows_8_then_6)
def trust_write_through_sliced_clone(x):
    y = x.clone()
    y[: y.size(0) - 2].mul_(-1)
    return y, x.sum()
