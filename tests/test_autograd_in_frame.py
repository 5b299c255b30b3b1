"""Calls into the autograd engine inside a compiled frame (session 26, hunt26b).

`torch.autograd.grad(y, x)` was traced as a graph node whose `meta` run failed (a `meta` tensor
made at trace time has no autograd history to differentiate), which the tracer took for the
user's own error: the frame ran eagerly and, since eager succeeded, was given up with a
"torchferro bug" warning. Now the frame breaks before the engine call
(`tracer/src/interp/calls/mod.rs::autograd_engine_call`), as torch.compile does with
`trace_autograd_ops` off (its default): the graph before it records autograd history through
the backend, the call runs natively, the code after it compiles as a resume function.

Each case compares values, the gradients left on leaves (`.grad`) and the graph count with eager
and torch.compile (a counting backend), on the default backend and the `eager` one, and asserts
no warning was logged.
"""

from __future__ import annotations

import logging

import pytest
import torch
import torchferro
from programs.counting import Count


def grad_of_input(x):
    y = (x * x).sum()
    (g,) = torch.autograd.grad(y, x)
    return g * 2


def grad_of_two_inputs_with_cotangent(x, w):
    y = torch.tanh(x @ w)
    gx, gw = torch.autograd.grad(y, (x, w), torch.ones_like(y))
    return gx.sum() + gw.sum(), y.detach()


def higher_order(x):
    y = (x**3).sum()
    (g,) = torch.autograd.grad(y, x, create_graph=True)
    return (
        g.sum()
    )  # d/dx of this is 6x: the caller's backward goes through the first grad


def backward_inside(x, w):
    loss = (x * w).sum()
    torch.autograd.backward(loss)
    return w.grad.clone() + 1


def tensor_backward_inside(x, w):
    loss = (x.sin() * w).sum()
    loss.backward()
    return loss.detach() * 2


def grad_of_an_intermediate(x):
    h = x.exp()
    y = (h * 3).sum()
    (g,) = torch.autograd.grad(y, h)
    return g + h.detach()


CASES = {
    "grad_of_input": (grad_of_input, lambda: [torch.randn(5, requires_grad=True)]),
    "two_inputs": (
        grad_of_two_inputs_with_cotangent,
        lambda: [
            torch.randn(3, 4, requires_grad=True),
            torch.randn(4, 2, requires_grad=True),
        ],
    ),
    "higher_order": (higher_order, lambda: [torch.randn(4, requires_grad=True)]),
    "backward_inside": (
        backward_inside,
        lambda: [torch.randn(4), torch.randn(4, requires_grad=True)],
    ),
    "tensor_backward_inside": (
        tensor_backward_inside,
        lambda: [torch.randn(6), torch.randn(6, requires_grad=True)],
    ),
    "grad_of_an_intermediate": (
        grad_of_an_intermediate,
        lambda: [torch.randn(5, requires_grad=True)],
    ),
}


def _run(fn, make, seed):
    torch.manual_seed(seed)
    args = make()
    out = fn(*args)
    outs = out if isinstance(out, tuple) else (out,)
    # A result that requires grad is differentiated by the caller too (higher-order grads).
    for o in outs:
        if o.requires_grad:
            o.sum().backward()
    grads = [a.grad.clone() if a.grad is not None else None for a in args]
    return [o.detach() for o in outs], grads


def _same(a, b):
    assert len(a) == len(b)
    for x, y in zip(a, b):
        if x is None or y is None:
            assert x is None and y is None
        else:
            torch.testing.assert_close(x, y, rtol=1e-5, atol=1e-6)


def _graphs(compile_fn, fn, make):
    count = Count()
    compiled = compile_fn(fn, backend=count)
    torch.manual_seed(0)
    compiled(*make())
    return count.n


# Through a training graph compiled with its backward (our inductor, torch.compile's
# aot_autograd), one case raises in torch.compile too: the graph's outputs get their history
# from one autograd node over its inputs, so an intermediate returned by it is no node of the
# autograd graph `grad` walks. Ours raises the same error type, with these words.
RAISE_THROUGH_TRAINING_GRAPH = {
    "grad_of_an_intermediate": "appears to not have been used in the graph",
}
# `create_graph=True` differentiates the results again, which a compiled backward cannot be
# (torch.compile raises "double backward" there): the frame breaks at the call as torch.compile
# does, and the graph before it runs through torch's autograd, so the values are eager's under
# the inductor too (better than torch.compile, which raises).


@pytest.mark.parametrize("name", sorted(RAISE_THROUGH_TRAINING_GRAPH))
def test_what_a_training_graph_cannot_give_raises_as_in_torch_compile(name):
    fn, make = CASES[name]
    words = RAISE_THROUGH_TRAINING_GRAPH[name]
    torch._dynamo.reset()
    with pytest.raises(RuntimeError, match=words):
        _run(torch.compile(fn), make, 0)
    torchferro.compiler.reset()
    with pytest.raises(RuntimeError, match=words):
        _run(torchferro.compile(fn), make, 0)


@pytest.mark.parametrize(
    "name,backend",
    [
        (name, backend)
        for name in sorted(CASES)
        for backend in ("inductor", "eager")
        if backend == "eager" or name not in RAISE_THROUGH_TRAINING_GRAPH
    ],
)
def test_engine_calls_in_the_frame(name, backend, caplog):
    fn, make = CASES[name]
    torchferro.compiler.reset()
    want_out, want_grads = _run(fn, make, 0)
    compiled = torchferro.compile(fn, backend=backend)
    with caplog.at_level(logging.WARNING, logger="torchferro"):
        for seed in (0, 1):
            got_out, got_grads = _run(compiled, make, seed)
            ref_out, ref_grads = _run(fn, make, seed)
            _same(got_out, ref_out)
            _same(got_grads, ref_grads)
    assert not caplog.records, [r.getMessage() for r in caplog.records]
    _same(_run(compiled, make, 0)[0], want_out)
    torch._dynamo.reset()
    torchferro.compiler.reset()
    assert _graphs(torchferro.compile, fn, make) == _graphs(torch.compile, fn, make)


def test_double_backward_through_the_frame_matches_eager_where_torch_compile_raises():
    fn, make = CASES["higher_order"]
    torch._dynamo.reset()
    with pytest.raises(RuntimeError, match="double backward"):
        _run(torch.compile(fn), make, 0)
    torchferro.compiler.reset()
    got_out, got_grads = _run(torchferro.compile(fn), make, 0)
    want_out, want_grads = _run(fn, make, 0)
    _same(got_out, want_out)
    _same(got_grads, want_grads)


def test_the_break_names_the_engine_call():
    torchferro.compiler.reset()
    with pytest.raises(torchferro.Unsupported, match="torch.autograd.grad"):
        torchferro.compile(grad_of_input, fullgraph=True)(
            torch.randn(3, requires_grad=True)
        )
