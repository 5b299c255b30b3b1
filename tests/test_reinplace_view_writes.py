"""Writes through views of a graph input stored in place (session 29, docs/dynamic-shapes.md
"Session 29 (reinplace29)"): the inductor lowers ``view_scatter(x, v, ...)`` of an input whose
write-back it is, and whose old value nothing reads afterwards, as one store of the view's
elements into the input (``inductor/src/lower/reinplace.rs``), where it computed the whole new
input and copied it back. Values, input mutations and version counters are eager's; the
in-place path is asserted from the inductor's log and the kernels' C (no loop over the whole
input), and programs that read the old value after the write (generated) stay correct."""

from __future__ import annotations

import contextlib
import logging

import pytest
import torch
import torch._dynamo
from hypothesis import given, note, strategies as st

import torchferro
import torchferro.compiler
from programs.compare import generated, same


@contextlib.contextmanager
def _fresh():
    torch._dynamo.reset()
    torchferro.compiler.reset()
    try:
        yield
    finally:
        torchferro.compiler.reset()


def _reinplaced(caplog):
    return [
        r.getMessage()
        for r in caplog.records
        if r.name == "torchferro.inductor" and "reinplaced" in r.getMessage()
    ]


def _codes(program):
    entries = torchferro.compiler.cache_entries(program)
    assert entries and {e["runner"] for e in entries} == {"inductor"}, entries
    return [e["output_code"] for e in entries]


def _kv_step(kc, vc, q, k, v, pos):
    n = k.size(0)
    kc[pos : pos + n].copy_(k)
    vc[pos : pos + n].copy_(v)
    keys = kc[: pos + n]
    a = torch.softmax(q @ keys.t() * 0.125, -1)
    return a @ vc[: pos + n]


@pytest.mark.parametrize("dynamic", [None, True])
def test_kv_cache_write_stores_only_the_written_rows(dynamic, caplog):
    """A decode step writing two ``[64, 16]`` caches at ``pos : pos + n``: each write is one
    store of ``n`` rows into the cache (no kernel walks all 64 rows to select old or new and
    copy the result back), and the attention reads the cache itself."""
    gen = torch.Generator().manual_seed(0)
    with _fresh(), caplog.at_level(logging.DEBUG, logger="torchferro.inductor"):
        f = torchferro.compile(_kv_step, dynamic=dynamic)
        ours = (torch.zeros(64, 16), torch.zeros(64, 16))
        eager = (torch.zeros(64, 16), torch.zeros(64, 16))
        pos = 3
        for n in [2, 3, 5, 2, 4, 7]:
            q, k, v = (torch.randn(n, 16, generator=gen) for _ in range(3))
            same(f(*ours, q, k, v, pos), _kv_step(*eager, q, k, v, pos))
            for a, b in zip(ours, eager):
                assert torch.equal(a, b)
                assert a._version == b._version
            pos += n
        codes = _codes(_kv_step)
    done = _reinplaced(caplog)
    assert any("input l_kc" in m for m in done) and any(
        "input l_vc" in m for m in done
    ), done
    for code in codes:
        # 64 * 16 = 1024 elements: the whole cache, which only a functional store would walk.
        assert "< 1024;" not in code and "< 64;" not in code, code


def _mul_slice(x):
    x[2:5].mul_(2)
    return x[3] + 1


def _zero_row(x):
    x[x.size(0) - 1].zero_()
    return x[0] * 1


def _two_writes(x):
    x[1:3].add_(1)
    x[:, 0].fill_(5)


def _columns_of_transpose(x):
    x.t()[1:3].copy_(torch.ones(2, x.size(0)))


@pytest.mark.parametrize("dynamic", [None, True])
@pytest.mark.parametrize(
    "program",
    [_mul_slice, _zero_row, _two_writes, _columns_of_transpose],
    ids=lambda p: p.__name__.strip("_"),
)
def test_writes_into_an_input_are_stored_in_place(program, dynamic, caplog):
    """Every write of these programs is re-inplaced (the log names each), and no kernel walks
    the whole ``[rows, 50]`` input (``rows * 50`` elements, ``s0*50`` in a symbolic entry)."""
    gen = torch.Generator().manual_seed(1)
    with _fresh(), caplog.at_level(logging.DEBUG, logger="torchferro.inductor"):
        f = torchferro.compile(program, dynamic=dynamic)
        for rows in [200, 180, 170]:
            x = torch.randn(rows, 50, generator=gen)
            xe, xf = x.clone(), x.clone()
            want = program(xe)
            got = f(xf)
            if want is not None:
                same(got, want)
            assert torch.equal(xf, xe)
            assert xf._version == xe._version
        codes = _codes(program)
    assert _reinplaced(caplog), caplog.text
    for code in codes:
        # A store of the whole (contiguous) input is one merged loop over all its elements.
        for whole in ["< 10000;", "< 9000;", "< 8500;", "< (s0*50);"]:
            assert whole not in code, (whole, code)


# The class, drawn: an input written through a view (a slice, a row, a column, a shifted copy
# of itself) while its old value is read after the write, by a value made before it (lazy: it
# would be computed after the store) or by a read of the input itself; the old value must be
# the one read. Writes with no such read are drawn too, and two writes in a row.
_BEFORE = [
    "",
    "    y = x * 2\n",
    "    y = x.clone()\n",
    "    y = x.sum(0)\n",
    "    y = x[1:4] + 0\n",
]
_WRITES = [
    "    x[{a}:{b}].add_(1)\n",
    "    x[{a}:{b}] = x[{c}:{c} + ({b}) - ({a})] * 1\n",
    "    x[{a}].zero_()\n",
    "    x[:, {a}:{b}].copy_(torch.full_like(x[:, {a}:{b}], 3.0))\n",
    "    x[{a}:{b}].mul_(x[{a}:{b}])\n",
]
_AFTER = ["x * 1", "x.sum(0)", "None"]


def _program(before, writes, after, bounds):
    a, b, c = bounds
    lines = ["def program(x):\n", _BEFORE[before]]
    for w in writes:
        lines.append(_WRITES[w].format(a=a, b=b, c=c))
    ret = _AFTER[after]
    if before:
        ret = "y" if ret == "None" else f"({ret}, y)"
    lines.append(f"    return {ret}\n")
    src = "".join(lines)
    scope = {"torch": torch}
    exec(compile(src, "<generated>", "exec"), scope)
    return scope["program"], src


@generated(12)
@given(
    before=st.integers(0, len(_BEFORE) - 1),
    writes=st.lists(st.integers(0, len(_WRITES) - 1), min_size=1, max_size=2),
    after=st.integers(0, len(_AFTER) - 1),
    bounds=st.sampled_from(
        [("1", "3", "0"), ("x.size(0) // 2", "x.size(0) - 1", "1"), ("0", "2", "2")]
    ),
    dynamic=st.sampled_from([None, True]),
    rows=st.lists(st.integers(5, 9), min_size=2, max_size=3),
)
def test_generated_writes_with_old_values_read_after(
    before, writes, after, bounds, dynamic, rows
):
    program, src = _program(before, writes, after, bounds)
    note(src)
    gen = torch.Generator().manual_seed(2)
    with _fresh():
        f = torchferro.compile(program, dynamic=dynamic)
        for n in rows:
            x = torch.randn(n, 4, generator=gen)
            xe, xf = x.clone(), x.clone()
            want = program(xe)
            got = f(xf)
            if want is not None:
                same(got, want)
            assert torch.equal(xf, xe), (n, xf, xe)
            assert xf._version == xe._version
