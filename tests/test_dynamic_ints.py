"""Int arguments as automatic dynamic (issue 18): an int that changes at a recompile becomes a
symbolic int graph input, as torch.compile's ``specialize_int=False`` makes it, so a frame
compiles twice over many values instead of once per value.

Graph counts are torch.compile's (a counting backend, checked live), values eager's, under a
counting Python backend and the default inductor backend (whose graphs with an int input run on
the eager runner, logged).
"""

from __future__ import annotations

import logging

import pytest
import torch
import torch._dynamo

import torchferro
import torchferro.compiler
from test_dynamic_shapes import Count, _automatic_dynamic, _same, check  # noqa: F401


def arith(x, n):
    return x * n + n, n * 2 + 1, n // 3, -n


def test_an_int_that_changes_becomes_a_graph_input():
    # 0, 1 and negative values reuse the dynamic graph: pure arithmetic needs no range.
    fc = check(
        arith, [(torch.randn(4), n) for n in [8, 9, 10, 11, 1, 0, -3, 13]], expected=2
    )
    code = fc.graphs[-1].code
    assert "l_n" in code and "8" not in code, code


def test_automatic_dynamic_logs_the_int(caplog):
    torchferro.compiler.reset()
    f = torchferro.compile(arith, backend=Count())
    with caplog.at_level(logging.INFO, logger="torchferro.dynamic"):
        for n in (8, 9):
            f(torch.randn(3), n)
    msgs = [r.getMessage() for r in caplog.records if r.name == "torchferro.dynamic"]
    assert any(
        m.startswith("automatic dynamic: L['n'] 8 -> 9 (function arith") for m in msgs
    ), msgs


def test_the_dynamic_entry_guards_the_int_by_type_only():
    torchferro.compiler.reset()
    f = torchferro.compile(arith, backend=Count())
    for n in (8, 9):
        f(torch.randn(3), n)
    guards = torchferro.compiler.cache_entries(f)[0]["guards"]
    assert not any("L['n'] ==" in g or "SHAPE_ENV" in g for g in guards), guards
    assert any("L['n']" in g and "int" in g for g in guards), guards
    # A bool is not an int here (torch's type guard too): it recompiles.
    c = Count()
    torchferro.compiler.reset()
    g = torchferro.compile(arith, backend=c)
    for n in (8, 9, True):
        _same(g(torch.ones(2), n), arith(torch.ones(2), n))
    assert c.n == 3


def slicing(x, n):
    return x[:n] * 2


def test_an_int_used_as_a_size_is_guarded_size_like():
    check(slicing, [(torch.randn(16), n) for n in [8, 9, 10, 11, 2, 3]], expected=2)


def arange(x, n):
    return torch.arange(n) + x.sum()


def test_arange_of_an_int():
    # 1 and 0 fail the size-like guard `L['n'] >= 2`: each specializes, as torch's count.
    check(arange, [(torch.randn(4), n) for n in [8, 9, 10, 11, 2, 3, 1, 0]], expected=4)


def branch(x, n):
    if n > 10:
        return x + 1
    return x - 1


def test_a_branch_on_an_int_is_guarded():
    check(branch, [(torch.randn(4), n) for n in [8, 9, 10, 11, 12, 13]], expected=3)


class State:
    def __init__(self):
        self.length = 0


def grow(x, st):
    st.length += x.shape[0]
    return x * st.length


def test_an_int_attribute_written_back_stays_symbolic():
    """A cache's int length (Mistral's `cumulative_length`): read, increased by a size and
    written back each call; the write-back is this call's value."""
    torch._dynamo.reset()
    torchferro.compiler.reset()
    counts = []
    for compile_ in (torch.compile, torchferro.compile):
        c = Count()
        ours, theirs = State(), State()
        g = compile_(grow, backend=c)
        for t in [3, 5, 2, 7, 4]:
            x = torch.randn(t)
            _same(g(x, ours), grow(x, theirs))
            assert ours.length == theirs.length
        counts.append(c.n)
    assert counts[1] == counts[0] == 2


class Scale(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.k = 3

    def forward(self, x):
        return x * self.k


def test_an_int_attribute_of_a_module_stays_static():
    # torch keeps nn.Module int attributes static (`allow_unspec_int_on_nn_module` off).
    torch._dynamo.reset()
    torchferro.compiler.reset()
    counts = []
    for compile_ in (torch.compile, torchferro.compile):
        c, m = Count(), Scale()
        g = compile_(m, backend=c)
        for k in [3, 4, 5, 6]:
            m.k = k
            x = torch.randn(3)
            assert torch.equal(g(x), x * k)
        counts.append(c.n)
    assert counts[1] == counts[0] == 4


def test_dynamic_false_keeps_ints_static():
    check(arith, [(torch.randn(4), n) for n in [8, 9, 10]], dynamic=False, expected=3)


def clamp_offset(x, n):
    return x * max(n - 10, 0) + min(n, 12)


def test_min_max_of_an_int_compile_as_torch_compile():
    # `max(n - 10, 0)` and `min(n, 12)` are `torch.sym_max`/`sym_min` graph values, as torch
    # makes them: values on both sides of the thresholds share the graph (2, torch.compile's
    # count; 4 before session 14, which decided and guarded each comparison).
    fc = check(
        clamp_offset,
        [(torch.randn(4), n) for n in [8, 9, 10, 11, 12, 13, 14]],
        expected=2,
    )
    code = fc.graphs[-1].code
    assert "sym_max" in code and "sym_min" in code, code


def max_of_sizes(x, y):
    return x[: max(x.size(0), y.size(0)) - 1].sum() + min(x.size(0), 3)


def test_min_max_of_sizes_compile_as_torch_compile():
    check(
        max_of_sizes,
        [
            (torch.randn(n), torch.randn(m))
            for n, m in [(4, 5), (6, 3), (7, 9), (9, 2), (2, 8)]
        ],
    )


def view_by(x, n):
    return x.view(n, -1) + 1


def test_view_by_an_int_compiles_as_torch_compile():
    # `view(n, -1)` of `[s0]` is `[n, s0 // n]`, guarded `s0 % n == 0` as torch; the probe
    # points the op's concrete rules run at keep that divisibility (session 14: the primes
    # broke it and `n` was pinned).
    check(view_by, [(torch.randn(n * 4), n) for n in [8, 9, 10, 2, 3]], expected=2)


INT_CAPTURE = """
def f(x, n):
    return x * n + n

with torch.no_grad(), precompile.capture(
    f, artifact_path="m.py", cache_path="m.cache"
) as cap:
    for n in (8, 9):
        cap(torch.ones(3), n)
print(json.dumps(precompile.counters()))
"""

INT_LOAD = """
f = precompile.load("m.py", "m.cache")
out = {}
with torch.no_grad():
    for n in (8, 9, 12, 0, -3):
        out[str(n)] = f(torch.ones(3), n).tolist()
out.update(precompile.counters())
print(json.dumps(out))
"""


def test_a_precompiled_int_input_takes_any_value(tmp_path):
    from test_precompile import _run

    _run(tmp_path, INT_CAPTURE)
    r = _run(tmp_path, INT_LOAD, loader=True)
    assert r["traces"] == 0, r
    for n in (8, 9, 12, 0, -3):
        assert r[str(n)] == [float(n + n)] * 3, r
    art = (tmp_path / "m.py").read_text()
    assert "L['n'] == 9" not in art, art


def keyed_by_int(x, n):
    table = {n: x * 2}
    return table[n] + 1, n in {3: "three"}, n in table


def test_an_int_hashed_as_a_dict_key_is_specialized():
    # A dict key and a membership test need the int's value: the symbolic int is specialized
    # (guarded to keep its value, torch's guard_int); it broke the graph before and the frame
    # then ran eagerly. The frame's ints come from a graph break's resume function in
    # `tests/differential` (`aliased_arguments_in_a_dict_keyed_by_identity`).
    check(keyed_by_int, [(torch.randn(4), n) for n in [3, 4, 5, 3, 4]])


def affine(x, n):
    return x * n + 1, n - 1


def test_an_int_seen_at_0_then_1_turns_symbolic_at_1():
    # torch does not specialize an unspecialized int at 0 or 1: the recompile at 1 makes it
    # symbolic, and 2 and 3 reuse that graph (2 graphs; 3 when 0 and 1 both stayed constants).
    fc = check(affine, [(torch.randn(4), n) for n in [0, 1, 2, 3]], expected=2)
    code = fc.graphs[-1].code
    assert "l_n" in code, code


def arange_from_zero(x, n):
    return torch.arange(n) + x.sum()


def test_an_int_at_1_that_reaches_a_size_is_traced_again_static():
    # At 1 the symbolic int reaches `arange`'s size, where every symbol is taken to be at least
    # 2: the frame is traced again with n a guarded constant (torch keeps it symbolic there,
    # with the same count). 5 and 6 then share a symbolic graph guarded `L['n'] >= 2`.
    fc = check(
        arange_from_zero, [(torch.randn(3), n) for n in [0, 1, 5, 6]], expected=3
    )
    assert "arange(1" in fc.graphs[1].code.replace(" ", ""), fc.graphs[1].code
    assert "l_n" in fc.graphs[2].code, fc.graphs[2].code


def test_formatting_a_symbolic_int_breaks_with_its_own_reason():
    """An f-string of a symbolic size would pin its value: under ``fullgraph=True`` the error
    names what was formatted (it said "a tensor" for a symbolic int before)."""

    def size_text(x):
        return f"{x.size(0)}", x + 1

    def tensor_text(x):
        return f"{x}"

    torchferro.compiler.reset()
    with pytest.raises(
        torchferro.Unsupported, match="formatting a symbolic int into a string"
    ):
        torchferro.compile(size_text, fullgraph=True, dynamic=True)(torch.randn(4))
    with pytest.raises(
        torchferro.Unsupported, match="formatting a Tensor into a string"
    ):
        torchferro.compile(tensor_text, fullgraph=True)(torch.randn(2))
    # Without fullgraph: a graph break, values eager's.
    text, y = torchferro.compile(size_text, dynamic=True)(x := torch.randn(5))
    assert text == "5"
    torch.testing.assert_close(y, x + 1)
