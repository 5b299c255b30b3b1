"""A symbolic ``x.shape`` is a ``torch.Size`` (issue 18).

With symbolic sizes, ``x.shape`` / ``x.size()`` is traced as a ``torch.Size`` whose items are
symbolic ints: its type, printing, ``numel()``, slicing, ``+``, equality, unpacking, ``len`` and
indexing behave as eager's, it passes to ``view``/``reshape``/``expand``/``new_zeros`` as graph
values, and at a return or a graph break it is rebuilt as a real ``torch.Size`` of the call's own
sizes. Each program runs through torch.compile and torchferro with the same ``dynamic=``
setting: values equal eager's (a returned size must be a ``torch.Size``), graph counts equal
torch.compile's.
"""

from __future__ import annotations

import logging

import pytest
import torch
import torchferro
import torchferro.compiler
from test_dynamic_shapes import check

# torch.compile's own automatic dynamic rule: these tests pin its counts, logs and guards
# (the session-27 default, which compiles less: tests/test_dynamic_size_oblivious.py).
pytestmark = pytest.mark.usefixtures("torch_rule")


@pytest.fixture(autouse=True)
def _automatic_dynamic():
    old = torchferro.config.automatic_dynamic_shapes
    torchferro.config.automatic_dynamic_shapes = True
    yield
    torchferro.config.automatic_dynamic_shapes = old


def sizes(*shapes):
    return [(torch.randn(*s),) for s in shapes]


def shape_type_and_structure(x):
    s = x.shape
    a, b = s
    return (
        x * len(s),
        isinstance(s, torch.Size),
        isinstance(s, tuple),
        type(s) is torch.Size,
        type(x.size()) is torch.Size,
        x.new_zeros(s) + a,
        x.view(s) * b,
        x.reshape(s[0], -1)[:, : s[-1]],
    )


def test_shape_is_a_size_with_symbolic_items():
    # 3 graphs as torch.compile: static, then size(0) dynamic, then size(1) too.
    check(shape_type_and_structure, sizes((3, 4), (5, 4), (6, 7), (9, 2)), expected=3)


def returned_sizes(x):
    s = x.shape
    return (
        x + 1,
        s,
        s[1:],
        s[:-1] + (7,),
        (7,) + s,
        s * 2,
        s.numel(),
        x.size(),
    )


def test_returned_sizes_are_torch_sizes_of_the_call():
    check(returned_sizes, sizes((3, 4), (5, 4), (6, 7), (9, 2)), expected=3)


def size_equality(x, y):
    s, t = x.shape, y.shape
    eq = s == t
    ne = s != t
    same_as_tuple = s == (x.size(0), x.size(1))
    other_len = s == (x.size(0),)
    return (x * 2 if eq else x - 1), ne, same_as_tuple, other_len


def test_size_equality_compares_items():
    inputs = [
        (torch.randn(3, 4), torch.randn(3, 4)),
        (torch.randn(5, 6), torch.randn(5, 6)),
        (torch.randn(7, 8), torch.randn(7, 8)),
    ]
    check(size_equality, inputs, expected=2)


def expand_to_shape(x, y):
    return y.expand(x.shape) + x, torch.zeros(x.shape).sum(), x.view(*x.shape[:1], -1)


def test_a_size_passed_to_expand_and_factories():
    inputs = [(torch.randn(3, n), torch.randn(1, n)) for n in (4, 5, 9, 17)]
    check(expand_to_shape, inputs, expected=2)


def test_shape_printed_at_a_break_after_automatic_dynamic(capsys):
    torchferro.compiler.reset()

    def f(x):
        s = x.shape
        print(s, s[1:], str(s[0]))
        return x + s[0]

    cf = torchferro.compile(f, backend="eager")
    for n in (3, 4, 5, 6):
        x = torch.randn(n, n + 1)
        torch.testing.assert_close(cf(x), x + n)
        assert capsys.readouterr().out == f"{x.shape} {x.shape[1:]} {n}\n"


def size_across_a_break(x):
    s = x.shape
    torchferro.graph_break()
    return x.view(s[0] * s[1]), s


def test_a_size_live_at_a_graph_break_is_rebuilt_from_the_call():
    torchferro.compiler.reset()
    f = torchferro.compile(size_across_a_break, backend="eager", dynamic=True)
    for n in (3, 5, 9):
        x = torch.randn(n, 2)
        flat, s = f(x)
        torch.testing.assert_close(flat, x.reshape(-1))
        assert type(s) is torch.Size and s == x.shape


_W = torch.randn(8, 4, generator=torch.Generator().manual_seed(7))


def autocast_region(x):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        y = x @ _W
        z = torch.softmax(torch.relu(y) + 1, -1)
        w = z.view(x.size(0) * 2, 2)
    return z, y.dtype, w.float().sum(-1), y.shape


def test_symbolic_ops_under_autocast_take_torch_dtypes():
    # Autocast changes dtypes only: symbolic sizes with torch's autocast dtypes, one dynamic
    # graph (refused before: a break inside the region, values off eager's by 2e-7).
    fc = check(autocast_region, sizes((3, 8), (5, 8), (9, 8), (17, 8)), expected=2)
    assert any("set_autocast" in str(g.code) for g in fc.graphs[1:])


def positives(x):
    keep = torch.where(x > 0)[0]
    return x[keep] * 2


@pytest.mark.parametrize("dynamic", [False, True])
def test_a_data_dependent_op_breaks_with_the_same_reason_on_symbolic_sizes(
    dynamic, caplog
):
    torchferro.compiler.reset()
    f = torchferro.compile(positives, backend="eager", dynamic=dynamic)
    with caplog.at_level(logging.INFO, logger="torchferro.graph_breaks"):
        x = torch.randn(9)
        torch.testing.assert_close(f(x), positives(x))
    msgs = [
        r.getMessage() for r in caplog.records if r.name == "torchferro.graph_breaks"
    ]
    assert msgs, "no graph break logged"
    assert "torch.where: its result depends on tensor data" in msgs[0], msgs
