"""``Tensor.register_hook`` on a tensor the compiled frame computes (issue 14, session 24): the
registration is a node of the graph (``torchferro._autograd.register_hook``) when the handle is
dropped and the hook is one object for every call; otherwise it runs natively. Values and
gradients against eager, graph counts, and what must not be baked into the graph."""

from __future__ import annotations

import torch
import torchferro

HOOK_NODE = "torchferro__autograd_register_hook"


def _triple(g):
    return g * 3


def _ten(g):
    return g * 10


HOOK = _triple


def _global_hook(x, w):
    h = (x * w).tanh()
    h.register_hook(HOOK)
    return h.sum()


def _inputs(seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(3, 4, generator=g, requires_grad=True)
    w = torch.randn(4, generator=g, requires_grad=True)
    return x, w


def _grads(fn, seed, *extra):
    x, w = _inputs(seed)
    out = fn(*extra, x, w)
    out.backward()
    return out.detach(), x.grad, w.grad


def _assert_same(a, b):
    for p, q in zip(a, b, strict=True):
        torch.testing.assert_close(p, q)


def test_hook_is_a_graph_node_and_sees_the_gradient(counting_backend):
    compiled = torchferro.compile(_global_hook, backend=counting_backend)
    for seed in range(2):
        _assert_same(_grads(compiled, seed), _grads(_global_hook, seed))
    assert counting_backend.count == 1
    assert HOOK_NODE in counting_backend.describe(0)


def test_rebinding_the_global_hook_is_seen(counting_backend):
    global HOOK
    compiled = torchferro.compile(_global_hook, backend=counting_backend)
    try:
        for hook in (_triple, _ten, _triple):
            HOOK = hook
            _assert_same(_grads(compiled, 0), _grads(_global_hook, 0))
    finally:
        HOOK = _triple
    # One graph per hook object: the registration holds the object read.
    assert counting_backend.count == 2


def test_inductor_runs_the_hook():
    compiled = torchferro.compile(_global_hook)
    for seed in range(2):
        _assert_same(_grads(compiled, seed), _grads(_global_hook, seed))


def _kept_handle(x, w):
    h = x * w
    handle = h.register_hook(lambda g: g * 10)
    handle.remove()
    return h.sum()


def test_a_kept_handle_runs_natively(counting_backend):
    # The handle is used: the registration runs natively, so remove() removes the real hook.
    compiled = torchferro.compile(_kept_handle, backend=counting_backend)
    for seed in range(2):
        _assert_same(_grads(compiled, seed), _grads(_kept_handle, seed))
    assert all(HOOK_NODE not in g.code for g in counting_backend.graphs)


def _closure_over_tensor(x, w):
    mask = (x > 0).float()
    h = x * w
    h.register_hook(lambda g: g * mask)
    return h.sum()


def test_a_closure_over_a_tensor_is_not_baked(counting_backend):
    # Each call's mask differs: a hook baked at the first trace would apply the first call's.
    compiled = torchferro.compile(_closure_over_tensor, backend=counting_backend)
    for seed in range(3):
        _assert_same(_grads(compiled, seed), _grads(_closure_over_tensor, seed))
    assert all(HOOK_NODE not in g.code for g in counting_backend.graphs)


def _input_hook(x, w):
    x.register_hook(_triple)
    return (x * w).sum()


def test_an_input_hook_stays_native(counting_backend):
    compiled = torchferro.compile(_input_hook, backend=counting_backend)
    for seed in range(2):
        _assert_same(_grads(compiled, seed), _grads(_input_hook, seed))
    assert all(HOOK_NODE not in g.code for g in counting_backend.graphs)


class _Saver:
    def __init__(self):
        self.seen = []

    def save(self, g):
        self.seen.append(g.detach().clone())


def _bound_method_hook(saver, x, w):
    h = x * w
    h.register_hook(saver.save)
    return h.sin().sum()


def test_bound_method_of_each_argument(counting_backend):
    # Two savers passed in turn: each call's hook is that call's saver's method.
    compiled = torchferro.compile(_bound_method_hook, backend=counting_backend)
    savers = [_Saver(), _Saver()]
    eager = [_Saver(), _Saver()]
    for i in range(2):
        _assert_same(
            _grads(compiled, i, savers[i]), _grads(_bound_method_hook, i, eager[i])
        )
    for s, e in zip(savers, eager, strict=True):
        assert len(s.seen) == len(e.seen) == 1
        torch.testing.assert_close(s.seen[0], e.seen[0])
