"""Programs of the corpus (tests/programs) through precompile: each is captured on its two input
sets and the artifact loaded again (in this process, eager backend: the fresh-process and kernel
paths are tests/test_precompile.py's); the loaded artifact must give eager's results on both.
A program precompile cannot express must be refused at capture with a CaptureError, and the
refused ones are pinned here with the reason, so a newly refused program (or a newly accepted
one) shows up."""

from __future__ import annotations

import contextlib
import io
import sys

import pytest
import torchferro
from conftest import assert_same
from programs import graph_breaks, python_values  # noqa: F401  (register their programs)
from programs.harness import PROGRAMS
from torchferro.compiler import precompile

# Program -> what its refusal says. Closures and objects with no importable name cannot be
# carried to another process; the grad-mode context managers' exit methods and dataclass
# constructors are bound or generated callables the artifact cannot name.
REFUSED = {
    "print_inside_no_grad_block": "set_grad_enabled.__exit__",
    "print_inside_enable_grad_inside_no_grad": "set_grad_enabled.__exit__",
    "print_inside_set_grad_enabled_false": "set_grad_enabled.__exit__",
    "print_inside_user_context_manager": "the capture compiled nothing",
    "break_in_frame_with_closure": "uses closure cells natively (COPY_FREE_VARS)",
    "cell_shared_with_closure_across_a_break": "uses closure cells natively",
    "argument_cell_across_a_break": "uses closure cells natively (COPY_FREE_VARS)",
    "closure_with_free_variables_breaks": "the captured function closes over offset, scale",
    # A function made inside a frame is guarded by its code object (as torch.compile guards
    # it); the artifact checks that code's structure (CODE_MATCH, `_runtime.code_key`). This one
    # returns the code object itself as a constant, which an artifact cannot rebuild.
    "print_inside_lambda": "the return value is the constant <code object <lambda>",
    "store_global_replayed_after_the_graph": "which an artifact cannot spell in source",
    "dataclass_output": "which has no importable name",
    "frozen_dataclass_made_and_returned": "which has no importable name",
    "abc_subclass_made_inside": "which has no importable name",
    "dataclass_replace_of_object_made_inside": "which has no importable name",
}
# A graph break inside a loop gives the frame up, as torch.compile does (`resume::in_loop`): it
# runs eagerly, so a capture of it compiles nothing.
REFUSED |= {
    name: "the capture compiled nothing"
    for name in (
        "print_inside_for_loop_over_range",
        "print_inside_for_loop_over_list",
        "print_inside_for_loop_over_dict_items",
        "break_inside_loop_over_tensor_list",
        "data_dependent_break_inside_loop",
        "print_inside_enumerate_loop",
        "print_inside_zip_loop",
        "print_inside_nested_loops",
        "data_dependent_break_then_continue",
        "loop_resumes_next_to_an_attribute_dict",
    )
}
if sys.version_info >= (3, 12):
    # Laid out with the `return` after the loop's back edge: the frame runs eagerly there.
    REFUSED |= {
        p.name: "the capture compiled nothing"
        for p in PROGRAMS
        if p.py312 is not None and p.py312[0] == 0
    }
if sys.version_info < (3, 12):
    # 3.11 runs the comprehension as its own frame, which reads the cell natively; 3.12
    # inlines it (PEP 709).
    REFUSED["print_inside_list_comprehension"] = (
        "uses closure cells natively (COPY_FREE_VARS)"
    )

CASES = [
    p
    for p in PROGRAMS
    if p.topic in ("graph_breaks", "python_values")
    and not p.module
    and not p.xfail
    and not p.raises
    and not p.state
    and p.prepare is None
    and not p.make(0)[1]
]


def _quiet(f, *args):
    with contextlib.redirect_stdout(io.StringIO()):
        return f(*args)


@pytest.mark.parametrize("prog", CASES, ids=[p.name for p in CASES])
def test_program_loads_like_eager(prog, tmp_path):
    art, cache = tmp_path / "p.py", tmp_path / "p.cache"
    torchferro.compiler.reset()  # what earlier programs compiled is not this capture's
    try:
        with precompile.capture(
            prog.fn, artifact_path=art, cache_path=cache, backend="eager"
        ) as cap:
            for seed in (0, 1):
                _quiet(cap, *prog.make(seed)[0])
    except precompile.CaptureError as e:
        assert prog.name in REFUSED, f"newly refused: {e}"
        assert REFUSED[prog.name] in str(e), str(e)
        assert not art.exists()
        return
    assert prog.name not in REFUSED, "now captured: remove it from REFUSED"
    f = precompile.load(art, cache)
    for seed in (0, 1):
        want = _quiet(prog.fn, *prog.make(seed)[0])
        got = _quiet(f, *prog.make(seed)[0])
        assert_same(want, got)


def _make_scaler(k):
    return lambda t: t * k


def _make_shifter(k):
    return lambda t: t + k


def _apply_twice(x, g):
    print("break")
    return g(g(x))


def test_function_made_in_a_frame_is_matched_by_its_code(tmp_path):
    """A function made inside a frame (new on every call of its maker) is guarded by its code,
    which the artifact checks by structure: another function from the same maker loads; one
    with other code is refused naming CODE_MATCH."""
    import torch

    art, cache = tmp_path / "p.py", tmp_path / "p.cache"
    torchferro.compiler.reset()
    x = torch.randn(3)
    with precompile.capture(
        _apply_twice, artifact_path=art, cache_path=cache, backend="eager"
    ) as cap:
        _quiet(cap, x, _make_scaler(2.0))
    f = precompile.load(art, cache)
    # Same code, another function object (its cell's value is guarded as a constant).
    g = _make_scaler(2.0)
    assert_same(_quiet(_apply_twice, x, g), _quiet(f, x, g))
    with pytest.raises(precompile.GuardError, match="CODE_MATCH"):
        _quiet(f, x, _make_shifter(2.0))
