"""Session 34 hunt: functions that ``functools.wraps`` dressed as a torch function.

``functools.wraps(torch.relu)`` copies ``__module__`` ("torch") and ``__name__`` ("relu")
onto the wrapper. The tracer classified callables by those names, so:

- a user's decorator around a torch function (``@functools.wraps(fn) def w(*a): return
  fn(*a) * 2``) was put in the graph as a call named ``torch.relu``: the eager runner called
  the wrapper (right), the inductor lowered the node as ``relu`` and dropped the wrapper's own
  work (a wrong answer). It is now classified by the module its code was written in and
  inlined as user code (``calls::torch::dressed_user_wrapper``), one graph as torch.compile;
- ``torch.func.vmap(torch.outer)`` (torch's own wrapper, not inlined) was a node named
  ``torch.outer``: fx's code generation (the graph module a Python backend gets) resolved the
  name to ``torch.outer`` and ran it on the unbatched 2-D inputs ("outer: Expected 1-D
  argument"), and the inductor could lower it as ``outer``; its path now names its own code and
  object (``callable_path``), and the graph module calls it through a shim
  (``torchferro._fx._honest``).

The generated test draws a torch function, a wrapper's extra work, and whether the plain
function is called in the same graph: values must be eager's on both backends, in no more
graphs than torch.compile."""

from __future__ import annotations

import functools

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given
from hypothesis import strategies as st

import torchferro
from aot_oracle import torch_compile_graphs
from conftest import CountingBackend
from programs.compare import generated

TORCH_FUNCTIONS = {
    "relu": torch.relu,
    "add": lambda: torch.add,
    "gelu": F.gelu,
    "softmax": F.softmax,
    "matmul": torch.matmul,
    "tanh": torch.tanh,
}
# How each function is called on a (4, 4) tensor.
CALLS = {
    "relu": lambda f, x: f(x),
    "add": lambda f, x: f(x, 1.5),
    "gelu": lambda f, x: f(x, approximate="tanh"),
    "softmax": lambda f, x: f(x, dim=-1),
    "matmul": lambda f, x: f(x, x.t()),
    "tanh": lambda f, x: f(x),
}
EXTRA = {
    "scale": lambda y: y * 2,
    "shift": lambda y: y - 0.25,
    "transpose": lambda y: y.t().contiguous(),
}


def _fn_of(name):
    f = TORCH_FUNCTIONS[name]
    return f() if name == "add" else f


def _wrapped(fn, extra):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return EXTRA[extra](fn(*args, **kwargs))

    return wrapper


def _counted(fn, backend_name):
    if backend_name == "inductor":
        return torchferro.compile(fn, backend="inductor"), None
    backend = CountingBackend()
    return torchferro.compile(fn, backend=backend), backend.graphs


def _check(fn, *args):
    want = fn(*args)
    want = want if isinstance(want, tuple) else (want,)
    tc = torch_compile_graphs(fn, *args, calls=2)  # ours are counted over two calls
    for backend in ("eager", "inductor"):
        torchferro.compiler.reset()
        try:
            f, graphs = _counted(fn, backend)
            for _ in range(2):
                got = f(*args)
                got = got if isinstance(got, tuple) else (got,)
                assert len(got) == len(want)
                for g, w in zip(got, want):
                    torch.testing.assert_close(g, w)
            if graphs is not None:
                assert len(graphs) <= tc, (len(graphs), tc)
        finally:
            torchferro.compiler.reset()


@generated(40)
@given(
    name=st.sampled_from(sorted(TORCH_FUNCTIONS)),
    extra=st.sampled_from(sorted(EXTRA)),
    plain_too=st.booleans(),
)
def test_generated_user_wrapper_of_torch_function(name, extra, plain_too):
    fn = _fn_of(name)
    w = _wrapped(fn, extra)

    def program(x):
        y = CALLS[name](w, x)
        if plain_too:
            y = y + CALLS[name](fn, x)
        return y

    _check(program, torch.randn(4, 4))


def test_decorator_on_a_model_helper():
    """A logging-style decorator applied to ``F.gelu`` at import, used in a block."""
    calls = []

    def traced(fn):
        @functools.wraps(fn)
        def inner(x):
            calls.append(fn.__name__)
            return fn(x) * 0.5

        return inner

    gelu = traced(F.gelu)
    lin = torch.nn.Linear(4, 4)

    def block(x):
        return lin(gelu(x)) + x

    with torch.no_grad():
        _check(block, torch.randn(3, 4))
    # (eager, torch.compile's trace and its call, our two backends' two calls each)
    assert calls and set(calls) == {"gelu"}


@pytest.mark.parametrize(
    "program",
    [
        lambda x: torch.func.vmap(torch.outer)(x, x),
        lambda x: torch.vmap(torch.outer, in_dims=(0, None))(x, x[1]),
        lambda x: (torch.vmap(torch.add)(x, x), torch.vmap(torch.mul)(x, x)),
        lambda x: torch.func.vmap(torch.outer)(x, x).sum(0) + torch.outer(x[0], x[0]),
    ],
    ids=["vmap_outer", "vmap_in_dims", "two_vmaps", "vmap_and_plain"],
)
def test_vmap_of_torch_function(program):
    """``vmap`` of a torch function: the wrapper is not the function it names. (Values only:
    torchferro runs the vmapped call as one node, torch.compile inlines ``vmap``.)"""
    x = torch.randn(3, 4)
    want = program(x)
    want = want if isinstance(want, tuple) else (want,)
    # A Python backend gets an fx GraphModule (its generated code named the wrapper
    # `torch.outer`), the eager runner and the inductor the traced graph.
    for backend in ("eager", "inductor", lambda gm, example_inputs: gm.forward):
        torchferro.compiler.reset()
        try:
            f = torchferro.compile(program, backend=backend)
            got = f(x)
            got = got if isinstance(got, tuple) else (got,)
            for g, w in zip(got, want):
                torch.testing.assert_close(g, w)
        finally:
            torchferro.compiler.reset()
