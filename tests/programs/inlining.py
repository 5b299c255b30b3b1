"""Inlining: user functions, methods, closures (cells and free variables), lambdas,
``functools.partial``, default and keyword-only arguments, ``*args``/``**kwargs`` at call and
definition sites, bounded recursion, decorators and higher-order functions."""

from __future__ import annotations

import functools
import operator

import torch
import torch.nn.functional as F

from .harness import Call, program


def x34(r):
    return (r.randn(3, 4),)


def xy34(r):
    return (r.randn(3, 4), r.randn(3, 4))


def _square_plus(t, c):
    return t * t + c


def _outer(t):
    return _middle(t) * 2


def _middle(t):
    return _inner(t) + 1


def _inner(t):
    return t.sin()


@program(x34, 1, fullgraph=True)
def call_user_function(x):
    return _square_plus(x, 1.0) + _square_plus(x.cos(), 2)


@program(x34, 1, fullgraph=True)
def call_three_levels_deep(x):
    return _outer(x) - _inner(x)


class Scaler:
    def __init__(self, scale):
        self.scale = scale

    def apply(self, t):
        return t * self.scale + self.bias()

    def bias(self):
        return self.scale / 2

    @staticmethod
    def twice(t):
        return t * 2

    @classmethod
    def make(cls, scale):
        return cls(scale)

    @property
    def doubled(self):
        return self.scale * 2

    def __call__(self, t):
        return self.apply(t) - 1


SCALER = Scaler(3.0)


@program(x34, 1, fullgraph=True)
def method_on_global_object(x):
    return SCALER.apply(x)


@program(lambda r: (r.randn(3, 4), Scaler(r.pick(2.0, 5.0))), 2, fullgraph=True)
def method_on_argument_object(x, s):
    # The second input set changes s.scale (a guarded constant): one recompile.
    return s.apply(x) + s.doubled


# torch.compile: 1 graphs
@program(x34, 1, fullgraph=True)
def staticmethod_and_classmethod(x):
    s = Scaler.make(0.5)
    return Scaler.twice(x) + s.apply(x)


# torch.compile: 1 graphs. `SCALER(x)`: a global instance's Python `__call__`, inlined.
@program(x34, 1, fullgraph=True)
def callable_object(x):
    return SCALER(x) + Scaler(2.0)(x)


def _make_adder(c):
    def add(t):
        return t + c

    return add


ADD_SEVEN = _make_adder(7)


@program(x34, 1, fullgraph=True)
def closure_made_outside(x):
    return ADD_SEVEN(x) * 2


def _make_tensor_closure():
    w = torch.linspace(-1, 1, 4)

    def f(t):
        return t * w

    return f


TENSOR_CLOSURE = _make_tensor_closure()


@program(x34, 1, fullgraph=True)
def closure_over_tensor(x):
    return TENSOR_CLOSURE(x).sum(0)


@program(x34, 1, fullgraph=True)
def closure_defined_inside(x):
    y = x.cos()

    def g(t):
        return t + y

    return g(x) * g(y)


@program(x34, 1, fullgraph=True)
def nested_closure_two_levels(x):
    a = x + 1

    def outer(t):
        b = t * 2

        def inner(u):
            return u + a + b

        return inner(t)

    return outer(x)


@program(x34, 1, fullgraph=True)
def nonlocal_write_in_inner_function(x):
    total = x * 0
    count = 0

    def add(t):
        nonlocal total, count
        total = total + t
        count += 1

    add(x)
    add(x.sin())
    return total / count


@program(x34, 1, fullgraph=True)
def closure_returned_from_inner_factory(x):
    def factory(k):
        return lambda t: t * k

    return factory(2)(x) + factory(3)(x)


SQUARE = lambda t: t * t


@program(x34, 1, fullgraph=True)
def lambda_global(x):
    return SQUARE(x) + SQUARE(x + 1)


@program(x34, 1, fullgraph=True)
def lambda_defined_inside(x):
    f = lambda t, k=2: t**k + 1
    return f(x) + f(x, k=3)


@program(x34, 1, fullgraph=True)
def lambda_capturing_local(x):
    y = x.exp()
    g = lambda t: t / (1 + y)
    return g(x)


PARTIAL_ADD = functools.partial(_square_plus, c=0.25)


# torch.compile: 1 graphs
@program(x34, 1, fullgraph=True)
def partial_with_keyword(x):
    return PARTIAL_ADD(x) + functools.partial(_square_plus, x)(c=1)


# torch.compile: 1 graphs
@program(x34, 1, fullgraph=True)
def partial_of_partial(x):
    p = functools.partial(functools.partial(torch.add, alpha=2), x)
    return p(x.cos())


# torch.compile: 1 graphs
@program(x34, 1, fullgraph=True)
def partial_of_torch_functional(x):
    act = functools.partial(F.leaky_relu, negative_slope=0.2)
    return act(x) + act(-x)


def _defaults(t, scale=2.0, shift=None, *, power=1):
    if shift is not None:
        t = t + shift
    return (t * scale) ** power


@program(x34, 1, fullgraph=True)
def default_and_keyword_only_args(x):
    return _defaults(x) + _defaults(x, 3.0, shift=1) + _defaults(x, power=2)


def _kwonly(t, *, alpha, beta=1.0):
    return t * alpha + beta


@program(x34, 1, fullgraph=True)
def keyword_only_required(x):
    return _kwonly(x, alpha=0.5) - _kwonly(x, beta=3.0, alpha=2)


def _star_args(*ts):
    out = ts[0]
    for t in ts[1:]:
        out = out + t
    return out


@program(xy34, 1, fullgraph=True)
def star_args_definition(x, y):
    return _star_args(x, y, x * y)


@program(xy34, 1, fullgraph=True)
def star_args_call_site(x, y):
    parts = [x, y, y.sin()]
    return _star_args(*parts) + _square_plus(*(x, 1))


def _star_kwargs(t, **opts):
    out = t
    for k, v in opts.items():
        out = out * v if k.startswith("mul") else out + v
    return out


@program(x34, 1, fullgraph=True)
def star_kwargs_definition_and_call_site(x):
    opts = {"mul_a": 2.0, "add_b": 1.0}
    return _star_kwargs(x, **opts) + _star_kwargs(x, mul_c=3)


def _everything(a, b=1, *rest, c, d=2, **extra):
    out = a * b + c * d
    for r in rest:
        out = out + r
    for v in extra.values():
        out = out - v
    return out


@program(xy34, 1, fullgraph=True)
def mixed_signature(x, y):
    return _everything(x, 2, y, y, c=3, e=x) + _everything(y, c=x)


@program(
    lambda r: Call(r.randn(3, 4), scale=r.pick(2.0, 2.0), bias=r.randn(4)),
    1,
    fullgraph=True,
)
def top_level_keyword_arguments(x, *, scale, bias=None):
    return x * scale + bias


@program(lambda r: (r.randn(3, 4), r.randn(3, 4), r.randn(3, 4)), 1, fullgraph=True)
def top_level_star_args(*ts):
    return sum(ts[1:], ts[0])


@program(lambda r: Call(r.randn(3, 4), a=r.randn(3, 4), b=2.0), 1, fullgraph=True)
def top_level_star_kwargs(x, **kw):
    return x * kw["b"] + kw["a"]


def _power_rec(t, n):
    if n == 0:
        return torch.ones_like(t)
    return t * _power_rec(t, n - 1)


@program(x34, 1, fullgraph=True)
def bounded_recursion(x):
    return _power_rec(x, 4)


def _tree_sum(items):
    if isinstance(items, torch.Tensor):
        return items
    return functools.reduce(operator.add, [_tree_sum(i) for i in items])


@program(
    lambda r: ([r.randn(2), [r.randn(2), (r.randn(2), r.randn(2))]],), 1, fullgraph=True
)
def recursion_over_nested_containers(tree):
    return _tree_sum(tree)


def _apply_twice(f, t):
    return f(f(t))


@program(x34, 1, fullgraph=True)
def higher_order_function(x):
    return _apply_twice(torch.tanh, x) + _apply_twice(lambda t: t + 1, x)


def _traced(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs) * 2

    return wrapper


@_traced
def _decorated(t, k=1):
    return t + k


@program(x34, 1, fullgraph=True)
def user_decorator(x):
    return _decorated(x) + _decorated(x, k=3)


@program(x34, 1, fullgraph=True)
def operator_module_functions(x):
    return operator.add(operator.mul(x, 2), operator.neg(x)), operator.getitem(x, 0)


@program(x34, 1, fullgraph=True)
def functools_reduce(x):
    return functools.reduce(lambda a, b: a * b + 1, [x, x.cos(), x.sin()])


def _returns_tuple(t):
    return t.max(dim=1).values, t.min(), t.shape[0]


@program(x34, 1, fullgraph=True)
def inlined_function_returning_tuple(x):
    hi, lo, n = _returns_tuple(x)
    return hi - lo * n


@program(x34, 1, fullgraph=True)
def function_passed_through_dict(x):
    table = {"relu": torch.relu, "sq": SQUARE, "neg": operator.neg}
    return [table[k](x) for k in ("relu", "sq", "neg")]


@program(x34, 1, fullgraph=True)
def comprehension_calls_user_function(x):
    return torch.stack([_square_plus(x, float(i)) for i in range(3)])


@program(
    lambda r: ([r.randn(3), r.randn(3), r.randn(3)], r.randn(3)), 1, fullgraph=True
)
def functools_reduce_over_tensors(ts, x):
    a = functools.reduce(torch.add, ts)
    b = functools.reduce(lambda acc, t: acc * t + 1, ts, x)
    c = functools.reduce(operator.mul, [2, 3, 4])
    return a, b * c
