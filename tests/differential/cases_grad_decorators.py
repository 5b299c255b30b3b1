"""Issue 14, "grad-mode and autocast objects used as decorators": functions decorated with
``@torch.no_grad()``, ``@torch.no_grad``, ``@torch.enable_grad()``, ``@torch.set_grad_enabled(b)``
and ``@torch.inference_mode()``, called from compiled code. torch wraps such a function in
``decorate_context`` (torch/utils/_contextlib.py: ``with ctx_factory(): return func(...)``, the
factory being the decorator object's ``clone``); transformers decorates its rotary embeddings
this way. The region and the decorated function belong in the caller's graph."""

from __future__ import annotations

import torch
from torch import nn

import contextlib

from .runner import TC_DIFFERS, case

# Issue 14: more graphs than torch.compile fails unless the case names the gap (breadth=).
STRICT_BREADTH = True


def xg(r):
    return (r.randn(3, 4, requires_grad=True),)


@torch.no_grad()
def _sin_plus_one(x):
    return x.sin() + 1


@torch.no_grad
def _cos_bare(x):
    return x.cos() * 3


@torch.enable_grad()
def _times_three(x):
    return x * 3


@torch.set_grad_enabled(False)
def _tanh_off(x):
    return x.tanh() - 1


@torch.inference_mode()
def _exp_inference(x):
    return x.exp()


@torch.no_grad()
def _scaled(x, *, scale=2.0, shift=0.0):
    return x * scale + shift, torch.is_grad_enabled()


@torch.no_grad()
def _raises(x):
    y = x.sin()
    if y.shape[0] == 3:
        raise ValueError("three rows")
    return y


@torch.no_grad()
def _outer_no_grad(x):
    inner = _times_three(x)
    return inner + x, inner.requires_grad, torch.is_grad_enabled()


@torch.no_grad()
def _breaks_inside(x):
    y = x.sin()
    torch._dynamo.graph_break()
    return y + 1


@case(xg)
def no_grad_decorated_function(x):
    y = _sin_plus_one(x) * 2
    return y, y.requires_grad, torch.is_grad_enabled()


@case(xg)
def no_grad_bare_decorator(x):
    return _cos_bare(x) + x, torch.is_grad_enabled()


@case(xg)
def enable_grad_decorated_inside_no_grad_block(x):
    with torch.no_grad():
        y = _times_three(x)
        z = x * 2
    return y, z, y.requires_grad, z.requires_grad, torch.is_grad_enabled()


@case(xg)
def set_grad_enabled_false_decorated(x):
    y = _tanh_off(x)
    return y * x, y.requires_grad, torch.is_grad_enabled()


@case(xg)
def no_grad_decorated_with_keywords(x):
    a, mode_inside = _scaled(x, scale=3.0)
    b, _ = _scaled(x, shift=1.0)
    return a + b, mode_inside, (a * x).requires_grad, torch.is_grad_enabled()


@case(xg)
def no_grad_decorated_raise_caught_by_caller(x):
    try:
        _raises(x)
        caught = False
    except ValueError:
        caught = True
    # The decorator's `with` restored grad mode on the way out.
    z = x * 2
    return z, caught, z.requires_grad, torch.is_grad_enabled()


@case(xg)
def no_grad_decorated_calls_enable_grad_decorated(x):
    return _outer_no_grad(x), torch.is_grad_enabled()


@case(xg)
def no_grad_decorated_twice_in_one_frame(x):
    return _sin_plus_one(x) + _sin_plus_one(x * 2), torch.is_grad_enabled()


@case(xg)
def no_grad_decorated_with_a_graph_break_inside(x):
    y = _breaks_inside(x)
    return y * x, y.requires_grad, torch.is_grad_enabled()


@case(xg)
def inference_mode_decorated_function(x):
    y = _exp_inference(x.detach())
    return y.clone() * 2, torch.is_grad_enabled()


class _DecoratedForward(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    @torch.no_grad()
    def forward(self, x):
        return self.lin(x).relu(), torch.is_grad_enabled()


_DECORATED = _DecoratedForward()


@case(xg)
def no_grad_decorated_module_forward(x):
    y, inside = _DECORATED(x)
    return y + x, inside, y.requires_grad, torch.is_grad_enabled()


class _Rotary(nn.Module):
    """As transformers <= 5.17 writes its rotary embeddings: a `@torch.no_grad()` forward."""

    def __init__(self):
        super().__init__()
        self.register_buffer("inv_freq", 1.0 / (10000 ** (torch.arange(0, 4, 2) / 4.0)))

    @torch.no_grad()
    def forward(self, x, position_ids):
        freqs = position_ids[:, None].float() * self.inv_freq[None, :]
        emb = torch.cat((freqs, freqs), dim=-1)
        return emb.cos().to(x.dtype), emb.sin().to(x.dtype)


@case(
    lambda r: (r.randn(3, 4, requires_grad=True),),
    module=False,
)
def rotary_embedding_no_grad_forward(x):
    cos, sin = _ROTARY(x, torch.arange(3))
    return x * cos + x.flip(-1) * sin, cos.requires_grad


_ROTARY = _Rotary()


# A run-time error inside a decorated function (an out-of-range index on input set 1): the
# harness compares the grad mode after the call with eager's (restored by the wrapper's `with`).


def bad_index(r):
    return (r.randn(4, 3), torch.tensor(r.pick([0, 1], [0, 9])))


@torch.no_grad()
def _select_no_grad(x, idx):
    return torch.index_select(x * 2, 0, idx)


@torch.enable_grad()
def _select_enable_grad(x, idx):
    return torch.index_select(x * 2, 0, idx)


@case(bad_index, raises=True, xfail_tc=TC_DIFFERS)
def error_inside_no_grad_decorated(x, idx):
    return _select_no_grad(x, idx) + 1


@contextlib.contextmanager
def _no_grad(seed):
    with torch.no_grad():
        yield


@case(bad_index, raises=True, around=_no_grad)
def error_inside_enable_grad_decorated(x, idx):
    return _select_enable_grad(x, idx) + 1


# `torch.inference_mode(...)` blocks: torch.compile records `_enter_inference_mode` /
# `_exit_inference_mode` nodes around the region. Results made inside are inference tensors, as
# in eager (`is_inference()` is part of each result); grad mode inside follows the mode.


def xplain(r):
    return (r.randn(3, 4),)


@case(xplain)
def inference_mode_block_result_escapes(x):
    with torch.inference_mode():
        y = x * 2
        inside = (torch.is_inference_mode_enabled(), torch.is_grad_enabled())
    z = y + 1
    return (
        y,
        z,
        y.is_inference(),
        z.is_inference(),
        inside,
        torch.is_inference_mode_enabled(),
    )


@case(xg)
def inference_mode_false_inside_true(x):
    with torch.inference_mode():
        y = x.detach() * 2
        with torch.inference_mode(False):
            z = y + 1
            inner = (torch.is_inference_mode_enabled(), torch.is_grad_enabled())
    w = x * 3
    return z, y, w, z.is_inference(), y.is_inference(), w.is_inference(), inner


@case(xg)
def inference_mode_false_outside(x):
    with torch.inference_mode(False):
        y = x * 2
    return y, y.is_inference(), y.requires_grad, torch.is_inference_mode_enabled()


@case(xplain)
def inference_mode_block_with_a_graph_break(x):
    with torch.inference_mode():
        y = x.sin()
        print("inside")
        z = y * 2
        mode = torch.is_inference_mode_enabled()
    return (
        z,
        y.is_inference(),
        z.is_inference(),
        mode,
        torch.is_inference_mode_enabled(),
    )


@torch.inference_mode(False)
def _not_inference(x):
    return x.cos(), torch.is_inference_mode_enabled()


@torch.inference_mode
def _bare_inference(x):
    return x.tanh()


@case(xplain)
def inference_mode_decorators_bare_and_false(x):
    a = _bare_inference(x)
    b, mode = _not_inference(x)
    return a, b, a.is_inference(), b.is_inference(), mode


@case(xplain, around=_no_grad)
def inference_mode_inside_no_grad(x):
    with torch.inference_mode():
        y = x + 1
    return y, y.is_inference(), torch.is_grad_enabled()


@case(bad_index, raises=True)
def error_inside_inference_mode(x, idx):
    with torch.inference_mode():
        y = torch.index_select(x * 2, 0, idx)
    return y + 1


@case(xg)
def inference_mode_nested_levels_with_a_graph_break(x):
    with torch.no_grad():
        with torch.inference_mode():
            a = x * 2
            with torch.inference_mode(False):
                b = a + 1
                print("between")
                c = b * 3
                modes = (torch.is_inference_mode_enabled(), torch.is_grad_enabled())
            d = c - 1
            after = (torch.is_inference_mode_enabled(), torch.is_grad_enabled())
        e = x + d
    return (
        c,
        d,
        e,
        modes,
        after,
        torch.is_inference_mode_enabled(),
        torch.is_grad_enabled(),
    )


@case(xplain)
def inference_mode_block_raise_caught(x):
    try:
        with torch.inference_mode():
            y = x * 2
            if y.shape[0] == 3:
                raise ValueError("three")
    except ValueError:
        y = x - 1
    return y, torch.is_inference_mode_enabled(), torch.is_grad_enabled()


@torch.inference_mode()
def _inference_with_break(x):
    y = x.sin()
    torch._dynamo.graph_break()
    return y * 2, torch.is_inference_mode_enabled()


@case(xplain)
def inference_mode_decorated_with_a_graph_break_inside(x):
    y, mode = _inference_with_break(x)
    return y + 1, mode, torch.is_inference_mode_enabled()
