"""Session 20 hunt: module and tensor hooks (added or removed between calls, recording into
Python state, backward hooks), RNG as users touch it (``manual_seed`` inside, ``Generator``
objects, ``fork_rng``, ``get_rng_state``/``set_rng_state``, Python ``random`` interleaved) and
grad-mode / autocast context managers with flags and exceptions."""

from __future__ import annotations

import contextlib
import random

import torch
from torch import nn
from torch.nn import functional as F

from .runner import TC_DIFFERS, case, register

# Issue 14: more graphs than torch.compile fails unless the case names the gap (breadth=).
STRICT_BREADTH = True


def x34(r):
    return (r.randn(3, 4),)


def xg(r):
    return (r.randn(3, 4, requires_grad=True),)


class _Two(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(4, 4)
        self.b = nn.Linear(4, 2)
        self.log = []

    def forward(self, x):
        return self.b(torch.relu(self.a(x)))


def _hook_added_second(m, seed):
    if seed == 1:
        m.a.register_forward_hook(lambda mod, inp, out: out * -1)


# torch.compile (2.11) keeps running the graph traced before the hook was added (no guard on
# a submodule's hook dicts): a stale result. torchferro guards the dict keys and recompiles.
register(
    "trust_hook_forward_added_between_calls",
    _Two,
    x34,
    module=True,
    xfail_tc=TC_DIFFERS,
    prepare=_hook_added_second,
)


def _pre_hook_added_second(m, seed):
    if seed == 1:
        m.b.register_forward_pre_hook(lambda mod, args: (args[0] + 10,))


# torch.compile (2.11) keeps running the graph traced before the hook was added (no guard on
# a submodule's hook dicts): a stale result. torchferro guards the dict keys and recompiles.
register(
    "trust_hook_pre_added_between_calls",
    _Two,
    x34,
    module=True,
    xfail_tc=TC_DIFFERS,
    prepare=_pre_hook_added_second,
)


class _Hooked(_Two):
    def __init__(self):
        super().__init__()
        self._handle = self.a.register_forward_hook(lambda mod, inp, out: out + 100)


def _hook_removed_second(m, seed):
    if seed == 1:
        m._handle.remove()


register(
    "trust_hook_removed_between_calls",
    _Hooked,
    x34,
    module=True,
    prepare=_hook_removed_second,
)


class _Recording(_Two):
    """A forward hook that appends to a list on the module (Python side effect)."""

    def __init__(self):
        super().__init__()
        self.a.register_forward_hook(self._record)

    def _record(self, mod, inp, out):
        self.log.append(out.shape[0])


register("trust_hook_records_into_list", _Recording, x34, module=True)


class _KwargsHook(_Two):
    def __init__(self):
        super().__init__()
        self.b.register_forward_pre_hook(self._pre, with_kwargs=True)

    def _pre(self, mod, args, kwargs):
        return (args[0] * 2,), kwargs


register("trust_hook_pre_with_kwargs", _KwargsHook, x34, module=True)


class _BackwardHook(_Two):
    """``register_full_backward_hook`` recording the grad_output norm; backward in forward."""

    def __init__(self):
        super().__init__()
        self.grads = []
        self.b.register_full_backward_hook(self._bw)

    def _bw(self, mod, grad_in, grad_out):
        self.grads.append(grad_out[0].detach().clone())

    def forward(self, x):
        out = super().forward(x)
        out.sum().backward()
        return out.detach(), self.a.weight.grad.clone()


register("trust_hook_full_backward_in_forward", _BackwardHook, xg, module=True)


class _TensorHook(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        h = self.fc(x)
        h.register_hook(lambda g: g * 3)
        h.sum().backward()
        return self.fc.weight.grad.clone(), x.grad


# The hook's registration is a node of the first graph (torch.compile traces the hook into it);
# both break at backward() only: 2 graphs over 2 calls.
register(
    "trust_tensor_register_hook_backward_inside",
    _TensorHook,
    xg,
    module=True,
)


@case(xg)
def trust_tensor_hook_on_input_backward_outside(x):
    x.register_hook(lambda g: g + 1)
    return (x * 2).sum()


class _ParamHook(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 1)
        self.fc.weight.register_hook(lambda g: g.clamp(-0.1, 0.1))

    def forward(self, x):
        self.fc.zero_grad()
        self.fc(x).pow(2).sum().backward()
        return self.fc.weight.grad.clone()


register("trust_parameter_grad_hook", _ParamHook, x34, module=True)


# ---------------------------------------------------------------------------------------------
# RNG


@case(x34)
def trust_manual_seed_inside(x):
    torch.manual_seed(3)
    a = torch.rand(3, 4)
    b = torch.randn(3, 4)
    return x + a, b


@case(x34)
def trust_manual_seed_then_dropout(x):
    torch.manual_seed(11)
    return F.dropout(x, 0.5, training=True)


@case(lambda r: (r.randn(3, 4), torch.Generator().manual_seed(r.pick(1, 2))))
def trust_generator_argument(x, g):
    return x + torch.rand(3, 4, generator=g), torch.randn(2, generator=g)


@case(x34)
def trust_generator_made_inside(x):
    g = torch.Generator()
    g.manual_seed(5)
    return x * torch.rand(3, 4, generator=g) + torch.rand(3, 4)


@case(x34)
def trust_rng_state_replayed(x):
    s = torch.get_rng_state()
    a = torch.rand(3, 4)
    torch.set_rng_state(s)
    b = torch.rand(3, 4)
    return x + a - b


@case(x34)
def trust_fork_rng(x):
    with torch.random.fork_rng():
        torch.manual_seed(0)
        a = torch.rand(3, 4)
    return x + a, torch.rand(2)


def _seed_python_random(_, seed):
    random.seed(seed)


@case(x34, prepare=_seed_python_random)
def trust_python_random_interleaved(x):
    a = torch.rand(3, 4)
    p = random.random()
    b = torch.rand(3, 4)
    return x + a * p + b


@case(x34)
def trust_random_inplace_on_input(x):
    x.uniform_(-1, 1)
    x[0].normal_()
    return x.bernoulli(0.5), torch.randperm(5)


@case(x34)
def trust_multinomial_and_randint(x):
    p = x.softmax(-1)
    return torch.multinomial(p, 2), torch.randint(0, 10, (3,))


# ---------------------------------------------------------------------------------------------
# Context managers


@case(lambda r: (r.randn(3, 4, requires_grad=True), r.pick(True, False)))
def trust_set_grad_enabled_flag(x, flag):
    with torch.set_grad_enabled(flag):
        y = x * 2
    return y, y.requires_grad


@case(xg)
def trust_exception_inside_no_grad_caught(x):
    try:
        with torch.no_grad():
            y = x * 2
            raise ValueError("boom")
    except ValueError:
        y = x * 3
    return y, torch.is_grad_enabled()


# An exception that reaches the top of the frame: torch.compile (2.11) makes no graph for that
# trace (none for the code before the `raise`) and runs the frame eagerly from then on.
@case(lambda r: (r.randn(3, 4, requires_grad=True), r.pick(0, 1)), raises=True)
def trust_exception_escapes_no_grad(x, n):
    with torch.no_grad():
        y = x * 2
        if n == 1:
            raise RuntimeError("escapes")
    return y


def _raise_if(n):
    if n:
        raise ValueError("helper")


@case(lambda r: (r.randn(3, 4), r.pick(False, True)), raises=True)
def trust_exception_escapes_from_helper(x, n):
    y = x.sin() * 2
    _raise_if(n)
    return y + 1


# The first call raises: the frame is given up, so the second (which returns) runs eagerly too.
@case(lambda r: (r.randn(3, 4), r.pick(1, 0)), raises=True)
def trust_exception_escapes_first_call(x, n):
    y = x.cos()
    if n == 1:
        raise KeyError("first")
    return y * 3


# A graph break before the raise: the graph up to the break stays; the frame's rest (a resume
# function, where the exception escapes) is given up and runs eagerly from then on, as
# torch.compile runs it (under the user's function name: tests/test_tracebacks.py).
@case(lambda r: (r.randn(3, 4), r.pick(0, 1)), raises=True)
def trust_exception_escapes_after_break(x, n):
    y = x * 2
    print("before")
    z = y.exp()
    if n == 1:
        raise RuntimeError(f"after the break {z.shape}")
    return z


# The first call raises after the break: the resumed rest is given up at once, so the second
# call (which returns) runs the graph before the break and the rest eagerly.
@case(lambda r: (r.randn(3, 4), r.pick(1, 0)), raises=True)
def trust_exception_escapes_after_break_first_call(x, n):
    y = x.sin()
    print("before")
    z = y * 3
    if n == 1:
        raise ValueError("first call")
    return z + 1


# Two breaks before the raise: two graphs stay, the second resumed rest is given up.
@case(lambda r: (r.randn(3, 4), r.pick(0, 1)), raises=True)
def trust_exception_escapes_after_two_breaks(x, n):
    y = x + 1
    print("one")
    z = y.cos()
    print("two")
    w = z * y
    if n:
        raise RuntimeError(f"after two breaks {w.dim()}")
    return w


# The resumed rest writes the input in place and appends to a global before the raise: both
# writes must be there after the exception, as in eager.
ESCAPE_LOG = []


@case(lambda r: (r.randn(3, 4), r.pick(0, 1)), raises=True, state=("ESCAPE_LOG",))
def trust_exception_escapes_after_break_effects(x, n):
    y = x * 2
    print("before")
    x.add_(1)
    ESCAPE_LOG.append(("resumed", n))
    if n:
        raise KeyError("after the writes")
    return y + x


def _check_positive(t, n):
    if n:
        raise ValueError(f"not positive: {t.shape}")
    return t


# Raised by a helper called in the resumed rest, in a module's forward (a method: its
# qualified name is the class's).
class _EscapingBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.calls = 0

    def forward(self, x, n):
        h = self.fc(x)
        print("block")
        self.calls += 1
        return _check_positive(h.relu(), n) * 2


@case(lambda r: (r.randn(3, 4), r.pick(0, 1)), module=True, raises=True)
def trust_exception_escapes_after_break_in_method():
    return _EscapingBlock()


# Caught in the frame: traced, a graph per flag, as torch.compile.
@case(lambda r: (r.randn(3, 4), r.pick(False, True)))
def trust_exception_caught_around_helper(x, n):
    y = x * 2
    try:
        _raise_if(n)
    except ValueError as e:
        return y - 1, str(e)
    return y + 1, ""


def _escapes_after_break(x, n):
    y = x * 2
    torch._dynamo.graph_break()
    if n:
        raise RuntimeError("escaped")
    return y.sin()


# Caught by the compiled caller after the callee broke: torch.compile gives the caller up (a
# break inside its `try` block) and compiles the callee's part before the break (1 graph). So do
# we since session 29 (a break inside an inlined call in `try` gives the frame up; it resumed in
# the caller's handler before, 1 graph more). The caught exception's guards (type and `args`,
# not identity) are tested with a break at the caller's own call in tests/test_exception_guards.py.
@case(lambda r: (r.randn(3, 4), r.pick(1, 2)))
def trust_exception_caught_by_caller_after_break(x, n):
    try:
        return _escapes_after_break(x, n) * 2
    except RuntimeError as e:
        return x - 1, str(e)


@contextlib.contextmanager
def _no_grad(seed):
    with torch.no_grad():
        yield


@case(xg, around=_no_grad)
def trust_enable_grad_inside_no_grad(x):
    with torch.enable_grad():
        y = x * 2
    z = x * 2
    return y, z, y.requires_grad


@case(xg)
def trust_inference_mode_inside(x):
    with torch.inference_mode():
        y = x * 2
    return y.is_inference(), y, x + 1


@case(x34)
def trust_autocast_cpu_matmul(x):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        y = x @ x.t()
        with torch.autocast("cpu", enabled=False):
            z = x @ x.t()
    return y.dtype, y.float(), z


@case(lambda r: (r.randn(3, 4), r.pick(torch.bfloat16, torch.float16)))
def trust_autocast_dtype_argument(x, dt):
    with torch.autocast("cpu", dtype=dt):
        return (x @ x.t()).dtype, F.linear(x, x).float()


@case(xg)
def trust_no_grad_decorated_inner(x):
    @torch.no_grad()
    def inner(t):
        return t * 2

    y = inner(x)
    return y, y.requires_grad, (x * y).sum()


@case(xg)
def trust_grad_mode_restored_after_return_inside(x):
    def inner(t):
        with torch.no_grad():
            return t + 1

    y = inner(x)
    return y, x * 2, torch.is_grad_enabled()


class _ScaledBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x, scale=1.0):
        return self.fc(x) * scale


class _KwargsHooks(nn.Module):
    """A pre-hook that rewrites a keyword argument and a forward hook that reads it
    (``with_kwargs=True``), the block called with a keyword."""

    def __init__(self):
        super().__init__()
        self.block = _ScaledBlock()
        self.block.register_forward_pre_hook(self._pre, with_kwargs=True)
        self.block.register_forward_hook(self._post, with_kwargs=True)
        self.seen = []

    def _pre(self, mod, args, kwargs):
        return args, {"scale": kwargs["scale"] * 10}

    def _post(self, mod, args, kwargs, out):
        self.seen.append(kwargs["scale"])
        return out + kwargs["scale"]

    def forward(self, x):
        return self.block(x, scale=0.5)


register("trust_hook_kwargs_rewrite_and_read", _KwargsHooks, x34, module=True)
