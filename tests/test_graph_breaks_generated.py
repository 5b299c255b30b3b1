"""Issue 14: hypothesis-generated programs that graph-break and resume (session 16 made a resume
function with no tensor, module or torch global in reach run natively, as torch.compile's frame
filter does: tracer/src/interp/torch_free.rs).

Each example draws a program over ``(x, obj, lst, dct)``: statements before the break (tensor
ops, attribute writes of a user object, list appends, dict stores, some storing tensors), a break
(``torch._dynamo.graph_break()``, a ``print``, a helper that prints between two object
updates, or one returning a ``ModelOutput``-like dict indexed by position after it), and statements after it that touch only Python objects (the resume is torch-free
when no tensor stays live) or tensors too, then a return. It runs eagerly, under torch.compile
and under torchferro (counting backends, ``backend`` drawn as a call sequence of fresh inputs):
results, the objects after each call (attributes, list and dict contents), the printed text
and the graph count must be torch.compile's (values eager's).

Examples per run: ``TORCHFERRO_BREAK_GEN_EXAMPLES`` (default 60).
"""

from __future__ import annotations

import io
import os
import tempfile

import hypothesis.strategies as st
import pytest
import torch
import torch._dynamo
from hypothesis import given, note

import torchferro
import torchferro.compiler
from programs.compare import generated
from programs.counting import Count

EXAMPLES = int(os.environ.get("TORCHFERRO_BREAK_GEN_EXAMPLES", "60"))

BUF = io.StringIO()


class Obj:
    """A user object the program updates: a counter, a name, a list of its own."""

    def __init__(self, count):
        self.count = count
        self.name = "o"
        self.items = []

    def bump(self, k):
        self.count += k
        return self.count


def _noisy(obj, k):
    """A helper that breaks between two updates of `obj` (nothing of torch in reach)."""
    obj.count += k
    print("noisy", obj.count, file=BUF)
    obj.items.append(k)
    return obj.count * 2


def _tnoisy(t, obj):
    """A helper that breaks with a tensor live across the break."""
    u = t * 2
    print("tnoisy", obj.count, file=BUF)
    obj.count += 1
    return u + obj.count


class Tagged(dict):
    """A dict subclass like transformers' `ModelOutput`: an instance attribute, a
    `__reduce__`, and a `__getitem__` that answers an int by position (`r[0]` is no key of the
    underlying dict)."""

    def __init__(self, **fields):
        super().__init__(**fields)
        self.tag = "r"

    def __getitem__(self, k):
        if isinstance(k, str):
            return super().__getitem__(k)
        return tuple(self.values())[k]

    def __reduce__(self):
        # As ModelOutput's: a dunder the user-container tracer does not dispatch, so the
        # tracer holds the object as a Python value and reads `r[0]` by subscription.
        return (type(self), (), None, None, iter(self.items()))


def _tagged(t, obj):
    """A helper that breaks and returns a `Tagged` the caller indexes by position after the
    break: the resume function gets it on its stack (session 25: its item's source read the
    dict raw, a crash)."""
    print("tagged", obj.count, file=BUF)
    return Tagged(h=t * 2, c=obj.count)


# Statements before the break: `t` is a tensor in scope, `v` an int.
PRE = [
    "t = t * 2 + 1",
    "t = t.sin() + x",
    "obj.count += 1",
    "obj.name = obj.name + 'a'",
    "lst.append(obj.count)",
    "lst.append(t.sum())",
    "dct['pre'] = len(lst)",
    "dct['t'] = t * 3",
    "obj.t = t + 1",
    "v = v + obj.bump(2)",
    "obj.items.append(v)",
]
BREAKS = [
    "torch._dynamo.graph_break()",
    "print('between', v, file=BUF)",
    "v = v + _noisy(obj, 3)",
    # In a loop body, under a branch, in a grad-mode block, in a helper holding a tensor, in
    # a `try` with a `finally`.
    "for i in range(2):\n        obj.count += i\n        print('loop', i, file=BUF)",
    "if obj.count > 1:\n        torch._dynamo.graph_break()\n        v = v + 1",
    "with torch.no_grad():\n        t = t * 2\n        print('no_grad', file=BUF)\n        t = t + 1",
    "t = _tnoisy(t, obj)",
    # (Stored in `dct`: a dead sum would be a graph torch.compile makes and torchferro drops.)
    "dct['r'] = _tagged(t, obj)[0] + _tagged(t, obj)[1]",
    "try:\n        print('try', file=BUF)\n    finally:\n        obj.count += 1",
]
# Statements after the break that touch Python objects only.
POST_PY = [
    "obj.count += 2",
    "obj.count = obj.count * 3 - v",
    "lst.append(obj.count)",
    "lst.append(len(dct))",
    "dct['post'] = obj.count",
    "dct.pop('pre', None)",
    "v = v + len(lst) + obj.bump(1)",
    "obj.items = obj.items + [v]",
    "obj.name = obj.name.upper()",
    "v = v + sum(i for i in obj.items if isinstance(i, int))",
    "v = v * 2 if obj.count > 4 else v - 1",
    "lst.extend([v, v + 1])",
]
# Statements after the break that use tensors.
POST_T = [
    "t = t * v + 1",
    "t = t + x.cos()",
    "lst.append(t.mean())",
    "dct['t2'] = t - obj.count",
    "obj.t = t * 2",
]
RETURNS_PY = [
    "return v",
    "return v, obj.count, len(lst)",
    "return [v, obj.name, lst]",
]
# Every return reads `v` (`obj.count` read at the start): an int read and left dead is not
# guarded by torch.compile (its lazy variable is never realized) but is by torchferro (the
# strict xfail below), a difference in recompiles this generator leaves out.
RETURNS_T = [
    "return t + v",
    "return t + v, obj.count",
    "return (t * 2, lst[-1], v)",
]


@st.composite
def programs(draw):
    # `dct['x']`: a live tensor result before the break (a graph of dead ops alone is one
    # torch.compile still compiles and torchferro drops; see the test below), in a dict the
    # resume holds only where the code after the break reads `dct`.
    lines = [
        "def program(x, obj, lst, dct):",
        "    t = x + 1",
        "    dct['x'] = t * 2",
        "    v = obj.count",
    ]
    lines += ["    " + s for s in draw(st.lists(st.sampled_from(PRE), max_size=4))]
    lines.append("    " + draw(st.sampled_from(BREAKS)))
    tensor_after = draw(st.booleans())
    post = POST_PY + POST_T if tensor_after else POST_PY
    lines += ["    " + s for s in draw(st.lists(st.sampled_from(post), max_size=4))]
    lines.append(
        "    " + draw(st.sampled_from(RETURNS_T if tensor_after else RETURNS_PY))
    )
    return "\n".join(lines)


def _snapshot(result, obj, lst, dct):
    """What a call leaves behind, comparable across runs: the result, the object's attributes,
    the list and the dict, and the printed text (taken and cleared)."""
    text = BUF.getvalue()
    BUF.seek(0)
    BUF.truncate()
    return (result, dict(vars(obj)), list(lst), dict(dct), text)


def _same(got, want, path="value"):
    assert type(got) is type(want), (path, got, want)
    if isinstance(want, torch.Tensor):
        torch.testing.assert_close(got, want, msg=path)
    elif isinstance(want, (list, tuple)):
        assert len(got) == len(want), (path, got, want)
        for i, (g, w) in enumerate(zip(got, want)):
            _same(g, w, f"{path}[{i}]")
    elif isinstance(want, dict):
        assert list(got) == list(want), (path, got, want)
        for k in want:
            _same(got[k], want[k], f"{path}[{k!r}]")
    else:
        assert got == want, (path, got, want)


def _inputs(seed, count):
    x = torch.randn(3, generator=torch.Generator().manual_seed(seed))
    # The list and the dict hold the same ints at every call: torch.compile guards a dict's
    # int values it reconstructs at a break (`dct['k'] == 2`), a recompile torchferro does not
    # make (values are compared; only `obj.count` varies).
    return x, Obj(count), [1], {"k": 1}


def _run(program, fn, calls):
    out = []
    for seed, count in calls:
        args = _inputs(seed, count)
        out.append(_snapshot(fn(*args), *args[1:]))
    return out


@generated(EXAMPLES)
@given(
    src=programs(),
    calls=st.lists(
        st.tuples(st.integers(0, 3), st.integers(0, 3)), min_size=1, max_size=3
    ),
)
def test_generated_breaks_and_resumes_match_torch_compile(src, calls):
    note(src)
    note(f"calls (seed, obj.count): {calls}")
    scope = {
        "torch": torch,
        "BUF": BUF,
        "_noisy": _noisy,
        "_tnoisy": _tnoisy,
        "_tagged": _tagged,
    }
    # A real file name: torch.compile wraps a function whose code comes from a `<...>` file in
    # an extra frame (`wrap_inline`), whose breaks and recompiles its counts would then show.
    path = os.path.join(tempfile.mkdtemp(prefix="tf-breakgen-"), "program.py")
    with open(path, "w") as fh:
        fh.write(src)
    exec(compile(src, path, "exec"), scope)  # noqa: S102
    program = scope["program"]
    BUF.seek(0)
    BUF.truncate()
    want = _run(program, program, calls)
    torch._dynamo.reset()
    torchferro.compiler.reset()
    tc, fc = Count(), Count()
    try:
        got_t = _run(program, torch.compile(program, backend=tc), calls)
        got_f = _run(program, torchferro.compile(program, backend=fc), calls)
    finally:
        torch._dynamo.reset()
        torchferro.compiler.reset()
    _same(got_t, want, "torch.compile")
    _same(got_f, want, "torchferro")
    note(f"graphs: torch.compile {tc.n}, torchferro {fc.n}")
    if "try:" in src:
        # A break inside `try` on 3.11: torch.compile gives the frame up (no resume inside a
        # try block: the frame runs eagerly, its graph before the break dropped); torchferro
        # resumes in it. Its values and effects are compared above.
        return
    if len({count for _, count in calls}) > 1:
        # `obj.count` changes between calls: torch.compile guards an int only where its value
        # is used (a lazy variable realized), torchferro where it is read (returned unchanged,
        # `lst[-1]` after `lst.append(obj.count)`: a recompile torch.compile does not make;
        # the strict xfails below). Values and effects are compared above.
        return
    assert fc.n == tc.n, f"torchferro {fc.n} graphs, torch.compile {tc.n}"


def test_a_graph_of_dead_ops_alone_is_not_compiled():
    """torch.compile compiles a graph whose only op is dead (`t = x + 1`, unused: it returns
    ``()``); torchferro drops it and runs nothing (fewer graphs, the same values)."""

    def program(x, obj, lst, dct):
        t = x + 1  # noqa: F841
        return obj.count

    torch._dynamo.reset()
    torchferro.compiler.reset()
    tc, fc = Count(), Count()
    args = _inputs(0, 2)
    assert torch.compile(program, backend=tc)(*args) == 2
    assert torchferro.compile(program, backend=fc)(*args) == 2
    assert (tc.n, fc.n) == (1, 0)


def _dead_read(x, obj, lst, dct):
    t = x + 1
    v = obj.count  # noqa: F841
    return t


@pytest.mark.xfail(
    strict=True,
    reason="an int attribute read into a dead local is guarded at the read (EQUALS_MATCH "
    "obj.count == 2): torch.compile's lazy variable is never realized, so no guard and one "
    "graph over changing counts",
)
def test_an_int_read_and_left_dead_is_not_guarded():
    torch._dynamo.reset()
    torchferro.compiler.reset()
    tc, fc = Count(), Count()
    t = torch.compile(_dead_read, backend=tc)
    f = torchferro.compile(_dead_read, backend=fc)
    for count in (2, 3, 4):
        args = _inputs(0, count)
        torch.testing.assert_close(t(*args), args[0] + 1)
        torch.testing.assert_close(f(*args), args[0] + 1)
    torch._dynamo.reset()
    torchferro.compiler.reset()
    assert tc.n == 1
    assert fc.n == tc.n


def _passed_through(x, obj, lst, dct):
    t = x + 1
    lst.append(obj.count)
    torch._dynamo.graph_break()
    return t * 2, lst[-1]


@pytest.mark.xfail(
    strict=True,
    reason="an int read from a list and only returned is guarded (EQUALS_MATCH L['lst'][1]) in "
    "the resume function: torch.compile does not guard a value it passes through unused",
)
def test_an_int_returned_unchanged_after_a_break_is_not_guarded():
    torch._dynamo.reset()
    torchferro.compiler.reset()
    tc, fc = Count(), Count()
    t = torch.compile(_passed_through, backend=tc)
    f = torchferro.compile(_passed_through, backend=fc)
    for count in (0, 1):
        want = _passed_through(*_inputs(0, count))
        _same(t(*_inputs(0, count)), want)
        _same(f(*_inputs(0, count)), want)
    torch._dynamo.reset()
    torchferro.compiler.reset()
    assert tc.n == 3
    assert fc.n == tc.n
