"""``torch.ops.aten.*`` calls as libraries write them (session 32): an aliasing or writing aten
op is traced as the user spelling the catalog knows, so its results alias, and its writes land,
as in eager; one the catalog does not know breaks the graph (named in ``breadth=``). Before,
``aten.alias(x)`` came back a fresh tensor on the inductor (a write through it missed ``x``)
and ``aten.add_.Tensor(x, y)`` was dropped as a pure call whose result nobody read."""

from __future__ import annotations

import torch

from .cases_aliasing import pair, x34
from .runner import case

STRICT_BREADTH = True

aten = torch.ops.aten


@case(x34)
def aten_alias_written_through(x):
    y = aten.alias(x)
    y.add_(1)
    return y, x * 2


@case(x34)
def aten_views_returned(x):
    return (
        aten.alias.default(x),
        aten.view(x, [12]),
        aten.detach(x),
        aten.slice.Tensor(x, 1, 1, None, 2),
        aten.select.int(x, 0, -1),
        aten.permute(x, [1, 0]),
        aten.expand(x[:1], [2, 4]),
    )


@case(x34)
def aten_views_of_an_intermediate_written(x):
    h = x * 3
    aten.transpose.int(h, 0, 1)[1].mul_(-1)
    aten.slice(h, 0, 1, 2).fill_(0.5)
    aten._unsafe_view(h, [12])[0:2].zero_()
    return h, aten.narrow(h, 1, 0, 2)


@case(pair)
def aten_in_place_ops_on_inputs(x, y):
    aten.add_.Tensor(x, y, alpha=2)
    aten.mul_.Scalar(y, 0.5)
    aten.copy_(x[0], y[1])
    return x.sum(), y.sum()


@case(pair)
def aten_out_overload_into_an_intermediate(x, y):
    o = torch.empty(3, 4)
    aten.add.out(x, y, out=o)
    aten.index_put_(o, [torch.tensor([0, 2])], torch.tensor(9.0))
    return o, aten.type_as(o, x)


@case(x34)
def aten_split_pieces_are_a_list_of_views(x):
    pieces = aten.split(x, 2, 1)
    pieces[1].add_(1)
    return type(pieces).__name__, len(pieces), pieces[0], x


@case(x34, breadth="aten.lift_fresh is not in the op catalog: the graph breaks at it")
def aten_unknown_aliasing_op_breaks(x):
    h = x + 1
    y = aten.lift_fresh(h)
    y.mul_(2)
    return h, y
