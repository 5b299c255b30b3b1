"""The traceback of an error that an op of a compiled graph raises at run time shows the user's
frames as eager does: the same (file, line, function) entries of user code, in the same order
(the compiled function at the failing op's line, then each inlined function at its line), and
the same exception type and message. torch.compile shows less (the compiled function at its
`def` line, a resume function's own frame, no inlined frames)."""

from __future__ import annotations

import sys
import traceback

import pytest
import torch
import torchferro

from conftest import CountingBackend

HERE = __file__


def user_entries(fn, *args):
    """Calls ``fn(*args)``, which must raise: its type, message, and the traceback entries of
    this file below the calling frame, as ``(lineno, function)``."""
    try:
        fn(*args)
    except Exception as e:  # noqa: BLE001 - every op error is compared
        entries = [
            (f.lineno, f.name)
            for f in traceback.extract_tb(e.__traceback__)
            if f.filename == HERE
        ]
        # The first entry is this function's own frame.
        return type(e), str(e), entries[1:]
    raise AssertionError("no error raised")


def mid_graph(x, idx):
    y = x * 2
    z = y[idx]
    return z + 1


def _gather_rows(y, idx):
    w = y.sin()
    return w[idx]


def inlined(x, idx):
    y = x + 1
    z = _gather_rows(y, idx)
    return z * 2


def after_break(x, idx):
    y = x + 1
    print("", end="")
    z = y.cos()
    return z[idx] - 1


def inlined_after_two_breaks(x, idx):
    y = x + 1
    print("", end="")
    z = _gather_rows(y, idx.clone())
    print("", end="")
    return z + 1


def _bins(v):
    return torch.bincount(v - 3)


def value_checked_runtime_error(x, idx):
    y = x.sum(0)
    counts = _bins(idx)
    return y + counts.sum()


def random_op_error(x, idx):
    p = x.abs() + 1
    q = p - 10
    return torch.multinomial(q, 1) + p.sum().long()


def breaking_instruction_raises(x, idx):
    y = x + 1
    d = {}
    print("", end="")
    q = y * 2
    return q + d[int(idx[0])]


def raises_after_break(x, idx):
    y = x + 1
    print("", end="")
    z = y * 2
    if idx.shape[0] == 2:
        raise IndexError(f"no row {idx.shape[0]} in {tuple(z.shape)}")
    return z


def _refuse(z):
    raise ValueError(f"refused {tuple(z.shape)}")


def helper_raises_after_two_breaks(x, idx):
    y = x + 1
    print("", end="")
    z = y.sin()
    print("", end="")
    return _refuse(z * 2)


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(4, 4)

    def pick(self, y, idx):
        return y[idx]

    def forward(self, x, idx):
        y = self.fc(x)
        return self.pick(y, idx) + 1


PROGRAMS = [
    mid_graph,
    inlined,
    after_break,
    inlined_after_two_breaks,
    value_checked_runtime_error,
    random_op_error,
    breaking_instruction_raises,
    raises_after_break,
    helper_raises_after_two_breaks,
]

BACKENDS = ["counting", "inductor", "eager"]


def _backend(name):
    return CountingBackend() if name == "counting" else name


def _inputs():
    torch.manual_seed(0)
    return torch.randn(4, 4), torch.tensor([0, 7])


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn", PROGRAMS, ids=lambda f: f.__name__)
def test_traceback_matches_eager(fn, backend):
    x, idx = _inputs()
    expected = user_entries(fn, x, idx)
    compiled = torchferro.compile(fn, backend=_backend(backend))
    # The first call compiles, the second runs the cached entry: both show eager's frames.
    assert user_entries(compiled, x, idx) == expected
    assert user_entries(compiled, x, idx) == expected


@pytest.mark.parametrize("backend", BACKENDS)
def test_traceback_in_module_method(backend):
    x, idx = _inputs()
    model = Model()
    expected = user_entries(model, x, idx)
    assert [name for _, name in expected[2]] == ["forward", "pick"]
    compiled = torchferro.compile(model, backend=_backend(backend))
    assert user_entries(compiled, x, idx) == expected
    assert user_entries(compiled, x, idx) == expected


class Named:
    def rest_names(self, x):
        y = x + 1
        print("", end="")
        # Introspection gives the resumed rest up: it runs eagerly, under the user's names.
        code = sys._getframe().f_code
        return y * 2, code.co_name, code.co_qualname


@pytest.mark.parametrize("backend", BACKENDS)
def test_rest_run_eagerly_shows_user_names(backend):
    """A resumed rest that runs eagerly (given up) sees eager's function name and qualified
    name, not the generated resume function's."""
    x = torch.randn(4, 4)
    obj = Named()
    expected = obj.rest_names(x)
    assert expected[1:] == ("rest_names", "Named.rest_names")
    counter = CountingBackend() if backend == "counting" else None
    compiled = torchferro.compile(obj.rest_names, backend=counter or backend)
    for _ in range(2):
        got = compiled(x)
        assert torch.equal(got[0], expected[0])
        assert got[1:] == expected[1:]
    if counter is not None:
        # The graph before the break; the rest runs eagerly both times.
        assert counter.count == 1


@pytest.mark.parametrize("backend", BACKENDS)
def test_traceback_without_direct_call(backend, no_direct_call):
    """Through the transformed code's trampoline: its own entry is not shown."""
    x, idx = _inputs()
    expected = user_entries(inlined, x, idx)
    compiled = torchferro.compile(inlined, backend=_backend(backend))
    assert user_entries(compiled, x, idx) == expected
    assert user_entries(compiled, x, idx) == expected


def test_backend_error_names_the_failing_op():
    """A Python backend whose compiled callable is the `GraphModule` itself: torch.fx drops
    the frames of its `forward` from the traceback, and the op is found by a run on the eager
    runner."""
    x, idx = _inputs()
    expected = user_entries(inlined, x, idx)
    compiled = torchferro.compile(inlined, backend=lambda gm, example_inputs: gm)
    assert user_entries(compiled, x, idx) == expected
