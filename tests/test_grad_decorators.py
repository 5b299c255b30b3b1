"""Functions decorated with grad-mode objects (`@torch.no_grad()` and kin) called from compiled
code: inlined through torch's `decorate_context` wrapper into the caller's graph (values and
graph counts against torch.compile are in tests/differential/cases_grad_decorators.py). Here: the
exact reasons given where such a call, or another user-visible function whose code is library
code, is not traced."""

import copy
import re

import pytest
import torch

import torchferro

HERE = __file__


def setup_function():
    torchferro.compiler.reset()


def _unsupported(fn, *args) -> str:
    with pytest.raises(Exception) as info:
        torchferro.compile(fn, backend="eager", fullgraph=True)(*args)
    return str(info.value)


@torch.no_grad()
def _no_grad_sin(x):
    return x.sin() + 1


def test_no_grad_decorated_function_is_one_graph_with_fullgraph():
    def g(x):
        return _no_grad_sin(x) * 2

    x = torch.randn(3, requires_grad=True)
    got = torchferro.compile(g, backend="eager", fullgraph=True)(x)
    torch.testing.assert_close(got, g(x), rtol=0, atol=0)
    assert not got.requires_grad
    assert torch.is_grad_enabled()


@torch.no_grad()
def _no_grad_generator(x):
    yield x.sin()


def test_a_decorated_generator_names_the_wrapper_it_does_not_trace():
    def g(x):
        return next(iter(_no_grad_generator(x))) * 2

    msg = _unsupported(g, torch.randn(3))
    assert msg.startswith(
        f"call to the user function {__name__}._no_grad_generator (a wrapper, "
        "_wrap_generator.<locals>.generator_context in _contextlib.py: code of torch, "
        f"not traced) (at {HERE}:"
    ), msg


def test_a_library_function_called_as_a_user_function_says_whose_code_it_is():
    def g(x):
        return copy.deepcopy(x) + 1

    msg = _unsupported(g, torch.randn(3))
    assert msg.startswith(
        "call to the user function copy.deepcopy (code of the standard library, not traced) "
        f"(at {HERE}:"
    ), msg


@torch.no_grad()
def _prints(x):
    print("inside")
    return x + 1


def test_a_break_inside_a_decorated_function_gives_the_inner_reason_and_stack():
    def g(x):
        return _prints(x) * 2

    msg = _unsupported(g, torch.randn(3))
    assert re.match(
        rf"call to builtins\.print \(at {re.escape(HERE)}:\d+\)\n"
        r"  inlined call stack \(innermost first\):\n"
        rf"    _prints at {re.escape(HERE)}:\d+\n"
        r"    decorate_context at \S+/torch/utils/_contextlib\.py:\d+\n"
        rf"    g at {re.escape(HERE)}:\d+",
        msg,
    ), msg
