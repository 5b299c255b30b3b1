"""numpy inside compiled code, the ``fullgraph`` half of issue 14's rule: every program of
``cases_numpy.py`` that torch.compile captures with ``fullgraph=True`` (no graph break) must be
captured so by torchferro, with eager's values. (The differential cases bound the number of
graphs only: a program broken at every numpy call makes no more graphs.) The programs that
break show the reason torchferro gives."""

from __future__ import annotations

import pytest
import torch
import torch._dynamo
import torchferro
from programs.harness import assert_equiv, count_breaks

from . import cases_numpy
from .runner import CASES

NUMPY_CASES = [c for c in CASES if c.program.topic == "cases_numpy"]


def _args(c, seed):
    args, kwargs = c.program.make(seed)
    return args, kwargs


def _tc_fullgraph(c) -> bool:
    """Whether torch.compile runs the program with ``fullgraph=True`` and eager's values."""
    torch._dynamo.reset()
    fn = torch.compile(c.program.fn, backend="eager", fullgraph=True)
    try:
        for seed in (0, 1):
            args, kwargs = _args(c, seed)
            out = fn(*args, **kwargs)
            e_args, e_kwargs = _args(c, seed)
            assert_equiv(c.program.fn(*e_args, **e_kwargs), out)
    except Exception:  # noqa: BLE001  (a break, an error, or values that differ from eager)
        return False
    finally:
        torch._dynamo.reset()
    return True


# Where torchferro breaks on purpose although torch.compile captures the program.
FULLGRAPH_GAPS = {
    "python_numbers_divided": "a division of Python numbers computed in the graph breaks: "
    "Python raises ZeroDivisionError on a zero divisor where a graph would give inf",
}


def _params():
    return [
        pytest.param(
            c,
            id=c.name,
            marks=[pytest.mark.xfail(strict=True, reason=FULLGRAPH_GAPS[c.name])]
            if c.name in FULLGRAPH_GAPS
            else [],
        )
        for c in NUMPY_CASES
    ]


@pytest.mark.parametrize("c", _params())
def test_fullgraph_where_torch_compile_is(c):
    if c.program.raises or c.name.startswith("np_random"):
        pytest.skip("raises eagerly, or draws numpy's random stream")
    if not _tc_fullgraph(c):
        pytest.skip(
            "torch.compile does not capture it in one graph with eager's values"
        )
    torchferro.compiler.reset()
    fn = torchferro.compile(c.program.fn, backend="eager", fullgraph=True)
    for seed in (0, 1):
        args, kwargs = _args(c, seed)
        out = fn(*args, **kwargs)
        e_args, e_kwargs = _args(c, seed)
        expected = c.program.fn(*e_args, **e_kwargs)
        assert_equiv(expected, out)
        assert_equiv(e_args, args, "args after the call")
    torchferro.compiler.reset()


# What cannot be traced breaks the graph, with the reason named.
BREAK_REASONS = {
    "branch_on_np_sum": "data-dependent control flow: branching on the value of a numpy array",
    "python_numbers_divided": "operator.truediv on Python numbers computed in the graph",
    "tolist_then_python": "data-dependent: ndarray.tolist() reads the values of a numpy array",
    "np_random_breaks": "numpy.random.seed (numpy's random state is not traced)",
}


@pytest.mark.parametrize("name", sorted(BREAK_REASONS))
def test_break_reason(name):
    c = next(c for c in NUMPY_CASES if c.name == name)
    torchferro.compiler.reset()
    fn = torchferro.compile(c.program.fn, backend="eager")
    args, kwargs = _args(c, 0)
    with count_breaks() as breaks:
        fn(*args, **kwargs)
    torchferro.compiler.reset()
    assert breaks.breaks, "no graph break"
    assert BREAK_REASONS[name] in breaks.breaks[0], breaks.breaks


def test_cases_numpy_has_forty_programs():
    assert len(NUMPY_CASES) >= 40
    assert cases_numpy.STRICT_BREADTH
