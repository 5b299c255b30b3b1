"""Session 26 (hunt26b): Python semantics, RNG and autograd inside traced frames, as a user
writes them. Generators and ``yield from`` consumed in the frame, closures over loop variables,
``nonlocal`` counters, exceptions caught in traced code, ``return`` in ``finally``, context
managers that swallow, grad/autocast modes with an exception escaping (the harness compares the
modes after the call), recursion, mutated default arguments and class attributes, ``global``
writes seen by the next call; random ops (the harness seeds the global RNG before each call and
compares its state after), explicit generators; ``requires_grad_``/``detach``/``retain_grad``/
hooks/custom ``autograd.Function`` inside the frame. Each case is compared with eager (values,
inputs after the call, globals, stdout, RNG state, modes) and torch.compile (graph count)."""

from __future__ import annotations

import contextlib

import torch
import torch.nn.functional as F

from .runner import BUG_ALIASING, TC_DIFFERS, case

STRICT_BREADTH = True


def x4(r):
    return (r.randn(4, 4),)


def xg(r):
    return (r.randn(4, 3).requires_grad_(),)


# --- generators ------------------------------------------------------------------------------


def _inner(x):
    yield x + 1
    yield x * 2


def _outer(x):
    yield x.sin()
    yield from _inner(x)
    r = yield from _inner(x * 3)
    yield r if r is not None else x.cos()


@case(x4)
def yield_from_consumed_in_the_frame(x):
    acc = x * 0
    for v in _outer(x):
        acc = acc + v
    return acc


def _send_gen(x):
    total = x
    while True:
        v = yield total
        if v is None:
            return total
        total = total + v


@case(x4)
def generator_next_and_list(x):
    g = _outer(x)
    first = next(g)
    rest = list(g)
    return first, rest


# --- closures ------------------------------------------------------------------------------


@case(x4)
def closures_over_a_loop_variable_bind_late(x):
    fs = [lambda: x * i for i in range(3)]
    gs = [lambda i=i: x * i for i in range(3)]
    return [f() for f in fs], [g() for g in gs]


@case(x4)
def nonlocal_counter(x):
    n = 0

    def bump(t):
        nonlocal n
        n += 1
        return t + n

    y = bump(x)
    y = bump(y)
    return y * n, n


COUNTER = [0]


def _make_counter():
    count = 0

    def inc(t):
        nonlocal count
        count += 1
        COUNTER[0] = count
        return t * count

    return inc


_INC = _make_counter()


def _reset_inc(target, seed):
    if seed == 0:  # the eager and the compiled runs each start from a fresh count
        _INC.__closure__[0].cell_contents = 0


@case(x4, state=("COUNTER",), prepare=_reset_inc)
def nonlocal_counter_in_a_closure_made_outside(x):
    return _INC(x) + _INC(x)


# --- exceptions ----------------------------------------------------------------------------


class Boom(Exception):
    pass


LOG = []


@case(x4, state=("LOG",))
def state_after_a_caught_exception(x):
    y = x + 1
    try:
        LOG.append("try")
        y = y * 2
        raise Boom("b")
    except Boom as e:
        LOG.append(str(e))
        y = y - 1
    finally:
        LOG.append("finally")
    return y


def _return_in_finally(x):
    try:
        raise ValueError("lost")
    finally:
        return x * 3  # noqa: B012 - swallows the ValueError, as the user wrote


@case(x4)
def return_in_finally_swallows(x):
    return _return_in_finally(x) + 1


class Swallow:
    def __init__(self, log):
        self.log = log

    def __enter__(self):
        self.log.append("enter")
        return self

    def __exit__(self, typ, val, tb):
        self.log.append(typ.__name__ if typ else "none")
        return True


@case(x4, state=("LOG",))
def context_manager_swallows(x):
    y = x
    with Swallow(LOG):
        y = y + 1
        raise KeyError("k")
    return y * 2


@case(x4, raises=True)
def no_grad_with_an_exception_escaping(x):
    with torch.no_grad():
        y = x * 2
        raise Boom("in no_grad")
    return y


@case(xg, raises=True)
def enable_grad_inside_no_grad_with_an_exception(x):
    with torch.no_grad(), torch.enable_grad():
        y = x * 2
        if y.requires_grad:
            raise Boom("inner")
    return y


@case(x4, raises=True)
def autocast_with_an_exception_escaping(x):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        y = x @ x
        raise Boom(str(y.dtype))
    return y


@case(xg)
def no_grad_error_caught_inside(x):
    try:
        with torch.no_grad():
            y = x * 2
            raise Boom("x")
    except Boom:
        y = x * 3
    return y, torch.is_grad_enabled(), y.requires_grad


# --- recursion, defaults, class attributes, globals ------------------------------------------


def _power(x, n):
    if n == 0:
        return torch.ones_like(x)
    return x * _power(x, n - 1)


@case(x4)
def recursion_over_a_python_int(x):
    return _power(x, 4)


ACC = []


def _with_default(x, acc=ACC):
    acc.append(len(acc))
    return x * len(acc)


@case(
    x4,
    state=("ACC",),
    xfail_tc=TC_DIFFERS
    + ": a default list appended to reads as empty (x * 1 twice), and the "
    "appends are lost",
)
def mutable_default_mutated(x):
    return _with_default(x) + _with_default(x)


class Tally:
    calls = 0
    seen = []

    def hit(self, t):
        type(self).calls += 1
        self.seen.append(self.calls)
        return t + self.calls


TALLY = Tally()


def _reset_tally(target, seed):
    if seed == 0:
        Tally.calls = 0
        Tally.seen = []


@case(
    x4,
    state=("TALLY",),
    prepare=_reset_tally,
    xfail_tc=TC_DIFFERS
    + ": `type(self).calls += 1` then read as Tally.calls gives 1, eager 2",
)
def class_attribute_through_instance(x):
    y = TALLY.hit(x)
    TALLY.calls += 10  # an instance attribute now shadows the class's
    return TALLY.hit(y), TALLY.calls, Tally.calls


STEP = 0


@case(x4, state=("STEP",))
def global_write_seen_next_call(x):
    global STEP
    STEP += 1
    return x * STEP


# --- RNG ------------------------------------------------------------------------------------


@case(x4)
def rng_ops_in_one_frame(x):
    a = torch.rand(4, 4)
    b = torch.randn_like(x)
    c = torch.bernoulli(torch.full((4, 4), 0.3))
    d = torch.multinomial(torch.ones(6), 3)
    e = torch.randperm(5)
    f = F.dropout(x, 0.5, training=True)
    return a + b + c, d, e, f


@case(x4)
def rng_across_a_graph_break(x):
    a = torch.randn(3)
    print("between")
    b = torch.randn(3)
    return a, b, x + torch.rand(4, 4)


@case(x4)
def explicit_generator_in_the_frame(x):
    g = torch.Generator().manual_seed(5)
    a = torch.randn(4, 4, generator=g)
    b = torch.rand(4, generator=g)
    return x + a, b, torch.randn(2)


GEN = torch.Generator().manual_seed(11)


def _reseed(target, seed):
    GEN.manual_seed(11 + seed)


@case(x4, prepare=_reseed)
def explicit_generator_passed_in_from_a_global(x):
    return x + torch.randn(4, 4, generator=GEN), torch.rand(2)


@case(xg)
def dropout_in_training_mask_used_by_backward(x):
    y = F.dropout(x, 0.4, training=True)
    loss = (y * y).sum()
    loss.backward()
    return loss.detach(), x.grad


# --- autograd ---------------------------------------------------------------------------------


@case(x4)
def requires_grad_inside_then_backward(x):
    w = x.clone().requires_grad_()
    y = (w * w).sum()
    y.backward()
    return w.grad, y.detach()


@case(xg, xfail_tc=TC_DIFFERS + ": y2.detach_() leaves y2.requires_grad True")
def detach_and_detach_in_place(x):
    y = x * 2
    z = y.detach()
    y2 = x * 3
    y2.detach_()
    return z + y2, y2.requires_grad, z.requires_grad


@case(xg)
def no_grad_region_inside_a_training_forward(x):
    h = x * 2
    with torch.no_grad():
        scale = h.abs().max()
    out = (h / scale).sum()
    out.backward()
    return out.detach(), x.grad


@case(xg)
def output_view_of_an_intermediate(x):
    h = x.exp()
    v = h[1:, :2]
    t = h.t()
    return v, t


@case(xg)
def retain_grad_inside(x):
    h = x * 3
    h.retain_grad()
    loss = (h**2).sum()
    loss.backward()
    return h.grad, x.grad


HOOK_LOG = []


@case(xg, state=("HOOK_LOG",))
def tensor_hook_registered_in_the_frame(x):
    h = x * 2
    h.register_hook(lambda g: g * 10)
    loss = h.sum()
    loss.backward()
    return x.grad


class Cube(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x**3

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return 3 * x * x * g


@case(xg)
def custom_autograd_function(x):
    y = Cube.apply(x * 2)
    loss = y.sum()
    loss.backward()
    return y.detach(), x.grad


# A break at the `autograd.grad` call, as torch.compile's: the graph before it runs through
# torch's autograd (its gradients are differentiated again), so the penalty's double backward
# is eager's under the inductor too (torch.compile's inductor raises there).
@case(xg)
def grad_with_create_graph_then_penalty(x):
    y = (x**3).sum()
    (g,) = torch.autograd.grad(y, x, create_graph=True)
    pen = (g**2).sum()
    pen.backward()
    return pen.detach(), x.grad


@contextlib.contextmanager
def _swallowing():
    try:
        yield
    except Boom:
        pass


@case(x4)
def contextmanager_generator_swallows(x):
    y = x + 1
    with _swallowing():
        y = y * 2
        raise Boom("s")
    return y


# --- second batch ---------------------------------------------------------------------------


def _acc_gen(x):
    total = x * 0
    while True:
        v = yield total
        if v is None:
            return total
        total = total + v


def _ending(x):
    total = 0
    while True:
        v = yield total
        if v is None:
            return total * 10
        total = total + v


@case(x4)
def generator_send_to_its_end(x):
    g = _ending(x)
    g.send(None)
    g.send(3)
    try:
        g.send(None)
    except StopIteration as e:
        return x + e.value
    return x


@case(x4)
def generator_send(x):
    g = _acc_gen(x)
    next(g)
    g.send(x)
    out = g.send(x * 2)
    return out


def _sub():
    yield 1
    yield 2
    return 10


def _deleg(x):
    r = yield from _sub()
    yield x * r


@case(x4, xfail_tc=TC_DIFFERS + ": AssertionError constructing a ConstantVariable")
def yield_from_return_value(x):
    return list(_deleg(x))


@case(x4, state=("LOG",))
def try_else_finally_order(x):
    try:
        y = x + 1
    except ValueError:
        LOG.append("except")
        y = x
    else:
        LOG.append("else")
        y = y * 2
    finally:
        LOG.append("finally")
    return y


@case(x4, raises=True)
def raise_from_inside(x):
    try:
        raise KeyError("inner")
    except KeyError as e:
        raise ValueError("outer") from e
    return x


@case(x4, state=("LOG",))
def swallowing_cm_in_a_loop(x):
    y = x
    for i in range(3):
        with Swallow(LOG):
            y = y + i
            if i == 1:
                raise KeyError(i)
            y = y * 2
    return y


@case(x4)
def nested_def_closing_over_loop_var(x):
    out = []
    for i in range(3):

        def f(t):
            return t * i

        out.append(f)
    return [f(x) for f in out]


@case(
    xg,
    xfail_inductor=BUG_ALIASING
    + ": a gradient eager returns as a view of an autograd-internal "
    "base comes from the compiled backward as a plain tensor (torch.compile's inductor too)",
)
def requires_grad_on_a_fresh_leaf_and_input_grad_mode(x):
    w = torch.ones(3, requires_grad=False)
    w.requires_grad_()
    y = (x * w).sum()
    gx, gw = torch.autograd.grad(y, (x, w))
    return gx, gw, w.requires_grad


@case(xg)
def leaf_hook_registered_in_the_frame(x):
    x.register_hook(lambda g: g * 3)
    loss = (x * x).sum()
    loss.backward()
    return x.grad


class ScaleGrad(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, k):
        ctx.k = k
        return x.clone()

    @staticmethod
    def backward(ctx, g):
        return g * ctx.k, None


@case(xg)
def custom_function_with_a_python_argument(x):
    y = ScaleGrad.apply(x, 5.0)
    (y * x).sum().backward()
    return y.detach(), x.grad


@case(x4)
def randint_and_normal_in_place(x):
    a = torch.randint(0, 10, (4,))
    b = torch.empty(4, 4).normal_(0, 2)
    c = torch.empty(4).uniform_()
    return a, b + x, c


@case(x4)
def generator_state_read_inside(x):
    g = torch.Generator().manual_seed(3)
    s = g.get_state()
    a = torch.rand(4, generator=g)
    g.set_state(s)
    b = torch.rand(4, generator=g)
    return a, b, x + 1


@case(x4)
def rng_in_a_branch_on_a_random_value(x):
    r = torch.rand(1)
    if r.item() > 0.5:
        return x + torch.randn(4, 4)
    return x - torch.randn(4, 4)


@case(xg)
def dropout_functional_twice_training(x):
    a = F.dropout(x, 0.3)
    b = F.dropout(x, 0.3)
    loss = (a * b).sum()
    loss.backward()
    return loss.detach(), x.grad


@case(xg)
def no_grad_decorated_inner(x):
    @torch.no_grad()
    def stat(t):
        return t.mean() * 2

    s = stat(x)
    y = x * s
    return y, s.requires_grad, y.requires_grad


@case(xg)
def set_grad_enabled_false_region_value(x):
    torch.set_grad_enabled(False)
    y = x * 2
    torch.set_grad_enabled(True)
    z = x * 3
    return y.requires_grad, z.requires_grad, y + z
