"""Under ``fullgraph=True`` every kind of graph break raises ``torchferro.Unsupported`` naming
the user's file:line of the breaking instruction (the line marked ``# BREAK``), before any of
the program's side effects run and without calling the backend."""

from __future__ import annotations

import contextlib
import inspect
import io

import pytest
import torchferro
from conftest import CountingBackend

from . import graph_breaks
from .harness import PROGRAMS, params

# Program -> the function whose `# BREAK` line the error must name (the innermost frame).
BREAKING_LINE_IN = {
    "print_in_the_middle": None,
    "explicit_torchferro_graph_break": None,
    "data_dependent_if": None,
    "item_in_python_arithmetic": None,
    "tolist_feeds_control_flow": None,
    "numpy_call": None,
    "c_function_on_python_values": None,
    "print_in_inlined_function": graph_breaks._helper_prints,
    "print_two_levels_deep": graph_breaks._level2,
    "nonzero_dynamic_shape": None,
}


def _marked_line(fn) -> int:
    lines, start = inspect.getsourcelines(fn)
    (i,) = [i for i, line in enumerate(lines) if "# BREAK" in line]
    return start + i


@pytest.mark.parametrize(
    "prog", params([p for p in PROGRAMS if p.name in BREAKING_LINE_IN])
)
def test_fullgraph_raises_at_the_breaking_line(prog):
    assert len(BREAKING_LINE_IN) == len(
        [p for p in PROGRAMS if p.name in BREAKING_LINE_IN]
    )
    where = BREAKING_LINE_IN[prog.name] or prog.fn
    expected = f"graph_breaks.py:{_marked_line(where)}"
    backend = CountingBackend()
    compiled = torchferro.compile(prog.fn, backend=backend, fullgraph=True)
    args, kwargs = prog.make(0)
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(torchferro.Unsupported) as info:
        compiled(*args, **kwargs)
    assert expected in str(info.value), str(info.value)
    assert backend.count == 0
    assert out.getvalue() == ""
