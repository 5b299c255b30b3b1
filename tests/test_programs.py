"""End-to-end programs: each is compiled with ``fullgraph=True`` and must give eager's results
(outputs, their structure, and mutations of the inputs) for two input sets of the same
metadata, calling the backend exactly once with a graph of the expected size.

The whole frame is one graph in this slice, so the graph counts below are exact. A program's
``ops`` is the number of call_function / call_method nodes the backend must receive.
"""

from __future__ import annotations

import inspect
import math
import operator
from collections.abc import Callable
from dataclasses import dataclass, field

import pytest
import torch
import torch.nn.functional as F
import torchferro
from conftest import CountingBackend, assert_same
from torch import nn

# ---------------------------------------------------------------------------------------------
# Inputs: every program builds its inputs from a seeded generator, so eager and compiled runs get
# equal but distinct tensors (mutations stay separate), and seed 1 gives new values with the same
# shapes, dtypes, strides and requires_grad as seed 0.


def randn(g, *shape, dtype=torch.float32):
    return torch.randn(*shape, generator=g, dtype=dtype)


def randint(g, low, high, *shape):
    return torch.randint(low, high, shape, generator=g, dtype=torch.int64)


def randbool(g, *shape):
    return torch.rand(*shape, generator=g) > 0.5


@dataclass
class Program:
    name: str
    fn: Callable  # the function, or a zero-argument factory of the nn.Module when module=True
    inputs: Callable  # generator -> tuple of args, or (args, kwargs) wrapped by `Call`
    ops: int | None = None
    module: bool = False
    xfail: str | None = None
    tags: set = field(default_factory=set)

    def make(self, seed: int):
        g = torch.Generator().manual_seed(seed)
        r = self.inputs(g)
        if isinstance(r, Call):
            return list(r.args), dict(r.kwargs)
        return list(r), {}

    def target(self):
        """The callable to run eagerly and to compile (a fresh module, seeded, in eval mode)."""
        if not self.module:
            return self.fn
        torch.manual_seed(0)
        return self.fn().eval()


class Call:
    def __init__(self, *args, **kwargs):
        self.args = args
        self.kwargs = kwargs


PROGRAMS: list[Program] = []

# Known torchferro bugs (each program marked with one fails in every test below).


def program(inputs, ops=None, *, name=None, xfail=None, tags=()):
    """Registers a function as a program of the corpus."""

    def deco(fn):
        PROGRAMS.append(
            Program(name or fn.__name__, fn, inputs, ops, xfail=xfail, tags=set(tags))
        )
        return fn

    return deco


def module_program(name, factory, inputs, ops=None, *, xfail=None, tags=()):
    PROGRAMS.append(
        Program(name, factory, inputs, ops, module=True, xfail=xfail, tags=set(tags))
    )


# ---------------------------------------------------------------------------------------------
# Pointwise ops


@program(lambda g: (randn(g, 3, 4),), ops=3)
def inlined_user_function_call(x):
    y = x.cos()
    return _user_helper(y)


@program(lambda g: (randn(g, 4, 5),), ops=3, tags={"direct"})
def sin_plus_cos(x):
    return x.sin() + x.cos()


@program(lambda g: (randn(g, 4, 5), randn(g, 4, 5)), ops=5)
def torch_exp_log_abs(x, y):
    return torch.exp(x) - torch.log(y.abs() + 1)


@program(lambda g: (randn(g, 3, 4), randn(g, 3, 4)), ops=6)
def python_arith_operators(x, y):
    return (x + y) * (x - y) / (y * y + 1)


@program(lambda g: (randn(g, 3, 4) * 3,), ops=3)
def float_floordiv_mod(x):
    return x // 0.3 + x % 0.7


@program(lambda g: (randn(g, 3, 4), randn(g, 3, 4)), ops=6)
def pow_variants(x, y):
    return x**2 + 2**y + x.abs() ** 0.5


@program(lambda g: (randn(g, 3, 4), randn(g, 3, 4)), ops=4)
def unary_negative(x, y):
    return -x * y - (-y)


@program(lambda g: (randn(g, 3, 4), randn(g, 3, 4)), ops=4)
def comparisons_to_bool(x, y):
    return x > y, x <= 0.5, x == y, x != 0


@program(lambda g: (randn(g, 3, 4), randn(g, 3, 4)), ops=3)
def where_with_condition(x, y):
    return torch.where(x > 0, x, y * 0.1)


@program(lambda g: (randbool(g, 3, 4), randn(g, 3, 4)), ops=1)
def where_bool_input_scalar(mask, x):
    return torch.where(mask, x, 0.0)


@program(lambda g: (randn(g, 3, 4), randn(g, 3, 4)), ops=3)
def clamp_variants(x, y):
    return x.clamp(-0.5, 0.5) + torch.clamp(y, min=0.0)


@program(lambda g: (randn(g, 3, 4),), ops=5)
def tanh_sigmoid_relu(x):
    return torch.tanh(x) + torch.sigmoid(x) + torch.relu(x)


@program(lambda g: (randn(g, 3, 4), randn(g, 3, 4)), ops=3)
def functional_gelu(x, y):
    return F.gelu(x) + F.gelu(y, approximate="tanh")


@program(lambda g: (randn(g, 3, 4),), ops=3)
def softmax_family(x):
    return torch.softmax(x, dim=-1), F.log_softmax(x, dim=1), x.softmax(0)


@program(lambda g: (randint(g, -20, 20, 3, 4), randint(g, 1, 9, 3, 4)), ops=5)
def int64_arith(a, b):
    return a * 2 + b // 3 - a % 5


@program(lambda g: (randint(g, -20, 20, 3, 4), randint(g, 1, 9, 3, 4)), ops=1)
def int64_truediv_to_float(a, b):
    return a / b


@program(lambda g: (randbool(g, 3, 4), randbool(g, 3, 4)), ops=4)
def bool_logic(m1, m2):
    return (m1 & m2) | ~m1, m1 ^ m2


@program(lambda g: (randn(g, 3, 4), randint(g, -5, 5, 3, 4)), ops=4)
def dtype_promotion(x, a):
    return x + a, a * 0.5, x.double() + x


@program(lambda g: (randn(g, 3, 4), randbool(g, 3, 4)), ops=1)
def masked_fill_bool(x, m):
    return x.masked_fill(m, -1.0)


# ---------------------------------------------------------------------------------------------
# In-place ops


@program(lambda g: (randn(g, 3, 4),), ops=3)
def inplace_on_intermediate(x):
    y = x * 2
    y.add_(1)
    y.mul_(y)
    return y


@program(lambda g: (randn(g, 3, 4),), ops=2, tags={"direct"})
def inplace_on_input(x):
    x.add_(1)
    return x * 2


@program(lambda g: (randn(g, 3, 4), randn(g, 3, 4)), ops=1)
def inplace_on_input_returns_none(x, y):
    x.mul_(y)


@program(lambda g: (randn(g, 3, 4),), ops=1)
def inplace_relu_returns_input(x):
    return x.relu_()


@program(lambda g: (randn(g, 3, 4),), ops=2)
def setitem_on_intermediate(x):
    y = x.clone()
    y[:, 0] = 0.0
    return y


@program(lambda g: (randn(g, 5, 4).t(),), ops=2)
def inplace_on_transposed_input(x):
    x.mul_(2)
    return x.sum()


# ---------------------------------------------------------------------------------------------
# Reductions


@program(lambda g: (randn(g, 3, 4),), ops=4)
def sum_variants(x):
    return x.sum(), x.sum(1), x.sum(dim=0, keepdim=True), torch.sum(x, (0, 1))


@program(lambda g: (randn(g, 3, 4),), ops=3)
def mean_amax_amin(x):
    return x.mean(-1), x.amax(dim=1), x.amin(0, keepdim=True)


@program(lambda g: (randn(g, 3, 4),), ops=4)
def max_dim_unpacked(x):
    values, indices = x.max(dim=1)
    return values * 2, indices


@program(lambda g: (randn(g, 3, 4),))
def max_dim_returns_named_tuple(x):
    return x.max(dim=-1)


@program(lambda g: (randn(g, 3, 4),))
def max_dim_values_indices_attrs(x):
    r = torch.max(x, 1)
    return r.values + r.indices


@program(lambda g: (randn(g, 3, 4),), ops=3)
def argmax_argmin(x):
    return x.argmax(dim=-1), torch.argmin(x, 0), x.argmax()


@program(lambda g: (randn(g, 3, 4),), ops=2)
def prod_variants(x):
    return x.prod(1), torch.prod(x, 0, keepdim=True)


@program(lambda g: (randn(g, 3, 4, dtype=torch.float64),), ops=4)
def var_std(x):
    return (
        x.var(dim=1),
        x.std(0, keepdim=True),
        torch.var(x, dim=1, unbiased=False),
        x.std(dim=-1, correction=0),
    )


@program(lambda g: (randn(g, 3, 4),), ops=3)
def full_max_minus_min(x):
    return x.max() - x.min()


@program(lambda g: (randint(g, -9, 9, 3, 4), randbool(g, 3, 4)), ops=5)
def int_and_bool_reductions(a, m):
    return a.sum(0), a.max(), m.sum(), m.any(), m.all(1)


@program(lambda g: (randn(g, 3, 4),), ops=1)
def logsumexp_dim(x):
    return torch.logsumexp(x, dim=1)


# ---------------------------------------------------------------------------------------------
# Matmul family


@program(lambda g: (randn(g, 3, 4), randn(g, 4, 5)), ops=3)
def matmul_and_mm(a, b):
    return torch.matmul(a, b) + torch.mm(a, b)


@program(lambda g: (randn(g, 2, 3, 4), randn(g, 2, 4, 5)), ops=1)
def bmm(a, b):
    return torch.bmm(a, b)


@program(lambda g: (randn(g, 2, 3, 4), randn(g, 4, 5)), ops=1)
def matmul_operator_broadcast(a, w):
    return a @ w


@program(lambda g: (randn(g, 3, 4), randn(g, 5, 4), randn(g, 5)), ops=2)
def functional_linear(x, w, b):
    return F.linear(x, w, b), F.linear(x, w)


@program(lambda g: (randn(g, 5), randn(g, 3, 4), randn(g, 4, 5)), ops=1)
def addmm_beta_alpha(bias, a, b):
    return torch.addmm(bias, a, b, beta=0.5, alpha=2.0)


@program(lambda g: (randn(g, 3, 4), randn(g, 4)), ops=2)
def matvec_and_dot(a, v):
    return torch.matmul(a, v), v @ v


# ---------------------------------------------------------------------------------------------
# Views and shape ops


@program(lambda g: (randn(g, 4, 6),), ops=3)
def view_reshape_minus_one(x):
    return x.view(2, -1), x.reshape(-1), x.reshape(x.shape[0], 2, -1)


@program(lambda g: (randn(g, 2, 3, 4), randn(g, 3, 5)), ops=4)
def permute_transpose_T(x3, x2):
    return x3.permute(2, 0, 1), x3.transpose(0, 1), x2.T, x2.t()


@program(lambda g: (randn(g, 4, 3),), ops=5)
def unsqueeze_squeeze(x):
    y = x.unsqueeze(1)
    return y.squeeze(1), x.unsqueeze(-1), x[:, :1].squeeze()


@program(lambda g: (randn(g, 3, 4), randn(g, 2, 3, 4), randn(g, 5)), ops=5)
def flatten_expand(x, x3, v):
    return (
        x.flatten(),
        x3.flatten(1),
        v.unsqueeze(0).expand(3, -1),
        v.expand(2, 3, v.shape[0]),
    )


@program(lambda g: (randn(g, 3, 4),), ops=3)
def contiguous_after_transpose(x):
    return x.t().contiguous().view(-1)


@program(lambda g: (randn(g, 4, 5),), ops=3)
def narrow_slices(x):
    return x.narrow(1, 1, 2) + torch.narrow(x, 1, 3, 2)


@program(lambda g: (randn(g, 4, 6),), ops=4)
def chunk_returns_tuple(x):
    return x.chunk(3, dim=1)


@program(lambda g: (randn(g, 3, 6),), ops=5)
def split_sizes_unpacked(x):
    a, b = x.split([2, 4], dim=1)
    return a.sum(1, keepdim=True) * b


@program(lambda g: (randn(g, 5, 3),), ops=4)
def split_uneven_returns_tuple(x):
    return torch.split(x, 2)


@program(lambda g: (randn(g, 2, 3), randn(g, 2, 3)), ops=3)
def cat_and_stack(x, y):
    return torch.cat([x, y], dim=1), torch.stack((x, y)), torch.cat((x, y))


@program(lambda g: (randn(g, 2, 3),), ops=4)
def cat_of_list_built_in_loop(x):
    parts = []
    for i in range(3):
        parts.append(x * i)
    return torch.cat(parts, -1)


# ---------------------------------------------------------------------------------------------
# Indexing


@program(lambda g: (randn(g, 4, 5),), ops=4)
def index_basic(x):
    return x[0], x[:, 1:3], x[..., None], x[::2]


@program(lambda g: (randn(g, 4, 5),), ops=4)
def index_negative(x):
    return x[-1], x[:, -2:], x[-2:, :-1], x[1, -1]


@program(lambda g: (randn(g, 4, 5), randint(g, 0, 4, 3)), ops=2)
def index_with_int_tensor(x, idx):
    return x[idx], x[:, idx]


@program(lambda g: (randn(g, 4, 5), randn(g, 2, 3, 4)), ops=3)
def index_none_ellipsis(x, x3):
    return x[None, :, None], x3[..., 0], x3[:, None, 1:]


@program(lambda g: (randn(g, 6, 5),), ops=1)
def index_step_slice(x):
    return x[1::2, :3]


# ---------------------------------------------------------------------------------------------
# Tensor metadata used as Python values, and constant folding


@program(lambda g: (randn(g, 3, 4),), ops=1)
def shape_queries(x):
    n = x.shape[0]
    m = x.size(1)
    return x.view(n * m), x.dim(), x.ndim, x.numel()


@program(lambda g: (randn(g, 3, 5, dtype=torch.float64),), ops=3)
def zeros_with_input_dtype_device(x):
    return torch.zeros(x.shape[0], 3, dtype=x.dtype, device=x.device) + x[:, :3]


@program(lambda g: (randn(g, 3, 4),), ops=1)
def return_shape_dtype_device(x):
    return x.shape, x.dtype, x.device, x * 2


@program(lambda g: (randn(g, 3, 4),), ops=2)
def mean_by_numel(x):
    return x.sum() / x.numel()


@program(lambda g: (randn(g, 2, 3, 4, dtype=torch.float64),), ops=2)
def branch_on_metadata(x):
    if x.dim() == 3:
        y = x.sum(0)
    else:
        y = x
    if x.dtype == torch.float64:
        y = y * 2
    else:
        y = y - 1
    if x.shape[-1] > 100:
        y = y.exp()
    return y


@program(lambda g: (randn(g, 2, 4, 8), randn(g, 2, 4, 8), randn(g, 2, 4, 8)), ops=5)
def attention_scale_folded(q, k, v):
    scale = 1.0 / q.shape[-1] ** 0.5
    return torch.softmax((q @ k.transpose(-2, -1)) * scale, dim=-1) @ v


# ---------------------------------------------------------------------------------------------
# Globals and closures

SCALE = 2.5
OFFSET = -1
GLOBAL_W = torch.randn(5, 3, generator=torch.Generator().manual_seed(123))


@program(lambda g: (randn(g, 3, 4),), ops=2)
def global_constants(x):
    return x * SCALE + OFFSET


@program(lambda g: (randn(g, 3, 4),), ops=3)
def global_math_module(x):
    return torch.sin(x * math.pi) + math.sqrt(2.0)


@program(lambda g: (randn(g, 4, 5),), ops=1)
def global_tensor(x):
    return x @ GLOBAL_W


def _make_closure_tensor_float():
    bias = torch.randn(5, generator=torch.Generator().manual_seed(7))
    alpha = 0.5

    def closure_tensor_and_float(x):
        return x * alpha + bias

    return closure_tensor_and_float


def _make_closure_int_loop():
    n = 3

    def closure_int_drives_loop(x):
        for _ in range(n):
            x = x + 1
        return x

    return closure_int_drives_loop


program(lambda g: (randn(g, 3, 5),), ops=2)(_make_closure_tensor_float())
program(lambda g: (randn(g, 3, 5),), ops=3)(_make_closure_int_loop())


# ---------------------------------------------------------------------------------------------
# Signatures: defaults, keyword-only arguments, *args, **kwargs


@program(lambda g: Call(randn(g, 3, 4), shift=0.5), ops=3)
def defaults_and_kwonly(x, y=None, scale=2.0, *, shift=1.0):
    if y is None:
        y = x
    return x * scale + y - shift


@program(lambda g: Call(randn(g, 3, 4), randn(g, 4, 5), bias=randn(g, 5)), ops=3)
def kwonly_tensor_and_string_default(x, w, *, bias, activation="relu"):
    h = x @ w + bias
    if activation == "relu":
        h = h.relu()
    return h


@program(lambda g: (randn(g, 3, 4), randn(g, 3, 4), randn(g, 3, 4)), ops=2)
def star_args(*args):
    out = args[0]
    for a in args[1:]:
        out = out * a
    return out, len(args)


@program(
    lambda g: Call(randn(g, 3, 4), scale=3.0, bias=randn(g, 4)),
    ops=2,
    tags={"direct"},
)
def star_kwargs(x, **kwargs):
    return x * kwargs["scale"] + kwargs["bias"], len(kwargs)


@program(
    lambda g: Call(randn(g, 3, 4), randn(g, 3, 4), alpha=0.25, beta=randn(g, 4)),
    ops=3,
)
def args_kwargs_mixed(x, *rest, alpha=1.0, **extra):
    out = x * alpha
    for r in rest:
        out = out + r
    return out - extra["beta"], alpha


# ---------------------------------------------------------------------------------------------
# Return values


@program(lambda g: (randn(g, 3, 4),), ops=1)
def return_tuple_mixed(x):
    return x + 1, 3, "label", None, 2.5


@program(lambda g: (randn(g, 3, 4),), ops=1)
def return_list_with_input(x):
    return [x, x * 2, x.shape[0]]


@program(lambda g: (randn(g, 3, 4), randn(g, 3, 4)), ops=4, tags={"direct"})
def return_dict_nested(x, y):
    return {
        "sum": x.sum(),
        "n": x.numel(),
        "parts": [x[0], x[1]],
        "pair": (x.dtype, y - x),
    }


@program(lambda g: (randn(g, 3, 4), randn(g, 3, 4)), ops=1)
def return_input_unchanged(x, y):
    return x, y * 2


# ---------------------------------------------------------------------------------------------
# Loops and branches on Python values (unrolled / folded)


@program(lambda g: (randn(g, 3, 4),), ops=6)
def for_range_loop(x):
    for i in range(3):
        x = x * 2 + i
    return x


@program(
    lambda g: ([randn(g, 3, 4), randn(g, 3, 4), randn(g, 3, 4)],),
    ops=7,
    tags={"direct"},
)
def loop_over_list_input(xs):
    acc = torch.zeros_like(xs[0])
    for t in xs:
        acc = acc + t * t
    return acc


@program(lambda g: (randn(g, 3, 4), True), ops=2)
def if_on_python_flag(x, flag, mode="a"):
    if flag:
        x = x + 1
    if mode == "b":
        x = x * 10
    else:
        x = x - 1
    return x


@program(lambda g: ([randn(g, 3), randn(g, 3)], [randn(g, 3), randn(g, 3)]), ops=6)
def enumerate_zip_loop(xs, ys):
    out = 0
    for i, (a, b) in enumerate(zip(xs, ys)):
        out = out + a * b * i
    return out


@program(lambda g: (randn(g, 3, 4),), ops=3)
def while_loop_python_counter(x):
    i = 0
    while i < 3:
        x = x.sin()
        i += 1
    return x


# ---------------------------------------------------------------------------------------------
# Factories


@program(lambda g: (randn(g, 2, 3),), ops=6)
def factories_dtype_kwargs(x):
    return (
        x
        + torch.zeros(2, 3)
        + torch.ones(2, 3, dtype=torch.float64) * torch.full((2, 3), 7.0)
    )


@program(lambda g: (randn(g, 2, 3),), ops=5)
def arange_variants(x):
    return (
        torch.arange(6, dtype=torch.float32).view(2, 3) + x,
        torch.arange(x.shape[1], device=x.device),
        torch.arange(0, 1, 0.25),
    )


@program(lambda g: (randn(g, 2, 3),), ops=4)
def like_factories(x):
    return (
        torch.zeros_like(x),
        torch.ones_like(x, dtype=torch.int64),
        torch.full_like(x, 3.0),
        x.new_ones((2,)),
    )


@program(lambda g: (randn(g, 3, 4, dtype=torch.float64),), ops=3)
def eye_and_linspace(x):
    return torch.eye(3, dtype=x.dtype) @ x, torch.linspace(0, 1, steps=5)


# ---------------------------------------------------------------------------------------------
# Dtype conversions


# `x.float()` of a float32 `x` is `x` itself in eager (session 23: the receiver, no node), so
# the graph has 7 ops where torch.compile's FX graph records 8; the outputs are eager's.
@program(lambda g: (randn(g, 3, 4) * 10,), ops=7)
def dtype_conversion_methods(x):
    return (
        x.float(),
        x.to(torch.float64),
        x.half(),
        x.double(),
        x.long(),
        x.to(dtype=torch.int32),
        x.bool(),
        x.int(),
    )


@program(lambda g: (randint(g, -9, 9, 3, 4), randbool(g, 3, 4)), ops=6)
def int_and_bool_to_float(a, m):
    return a.float() / 3, a.to(torch.float64).mean(), m.long().sum()


@program(lambda g: (randn(g, 3, 4), randn(g, 3, 4, dtype=torch.float64)), ops=3)
def to_other_tensors_dtype(x, y):
    return x.to(y.dtype) + y, x.type_as(y)


@program(lambda g: (randn(g, 3, 4),), ops=3)
def half_round_trip(x):
    return x.half().float() - x


# ---------------------------------------------------------------------------------------------
# requires_grad and non-contiguous inputs


@program(lambda g: (randn(g, 3, 4), randn(g, 4, 5).requires_grad_()), ops=3)
def requires_grad_weight(x, w):
    return torch.tanh(x @ w).sum(0)


@program(lambda g: (randn(g, 3, 4), randn(g, 3, 4).requires_grad_()), ops=3)
def requires_grad_detach(x, w):
    return (x * w).detach() + w


@program(lambda g: (randn(g, 5, 4).t(), randn(g, 4, 5)), ops=3)
def noncontiguous_transposed_input(x, y):
    return x + y, x.sum(0), x.contiguous()


@program(lambda g: (randn(g, 6, 8)[:, ::2],), ops=2)
def noncontiguous_sliced_input(x):
    return x * 2, x.reshape(-1)


# ---------------------------------------------------------------------------------------------
# nn.Module forwards


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.norm = nn.LayerNorm(16)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(16, 4)

    def forward(self, x):
        h = self.act(self.norm(self.fc1(x)))
        return self.fc2(h).softmax(dim=-1)


class RMSNorm(nn.Module):
    def __init__(self, dim=8, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.linspace(0.5, 1.5, dim))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


class ScaleShift(nn.Module):
    """A parameter, a buffer and Python attributes read in forward."""

    def __init__(self):
        super().__init__()
        self.scale = nn.Parameter(torch.randn(8))
        self.register_buffer("offset", torch.arange(8, dtype=torch.float32))
        self.dim = -1

    def forward(self, x):
        return (x * self.scale + self.offset).sum(self.dim)


class ResidualBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln = nn.LayerNorm(8)
        self.fc = nn.Linear(8, 8)
        self.drop = nn.Dropout(0.5)

    def forward(self, x):
        return x + self.drop(self.fc(self.ln(x)))


class Attention(nn.Module):
    def __init__(self, dim=8):
        super().__init__()
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        scale = 1.0 / math.sqrt(q.shape[-1])
        attn = torch.softmax((q @ k.transpose(-2, -1)) * scale, dim=-1)
        return self.proj(attn @ v)


class DictHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 3)

    def forward(self, x):
        return {"logits": self.fc(x), "hidden": x.relu(), "batch": x.shape[0]}


class SharedLayerLoop(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8, bias=False)
        self.act = nn.ReLU()

    def forward(self, x):
        for _ in range(2):
            x = self.act(self.fc(x))
        return x


class KwargForward(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 4)

    def forward(self, x, scale=1.0):
        return self.fc(x) * scale


module_program(
    "mod_linear", lambda: nn.Linear(8, 4), lambda g: (randn(g, 3, 8),), ops=1
)
module_program(
    "mod_sequential_linear_relu",
    lambda: nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4)),
    lambda g: (randn(g, 3, 8),),
    ops=3,
)
module_program(
    "mod_sequential_gelu_layernorm_dropout_eval",
    lambda: nn.Sequential(
        nn.Linear(8, 16), nn.GELU(), nn.LayerNorm(16), nn.Dropout(0.1)
    ),
    lambda g: (randn(g, 3, 8),),
)
module_program(
    "mod_layernorm", lambda: nn.LayerNorm(8), lambda g: (randn(g, 2, 3, 8),), ops=1
)
module_program("mod_user_mlp", MLP, lambda g: (randn(g, 3, 8),), ops=5, tags={"direct"})
module_program("mod_rmsnorm_python_attr", RMSNorm, lambda g: (randn(g, 3, 8),), ops=6)
module_program("mod_param_buffer", ScaleShift, lambda g: (randn(g, 3, 8),), ops=3)
module_program("mod_residual_dropout_eval", ResidualBlock, lambda g: (randn(g, 3, 8),))
module_program(
    "mod_attention",
    Attention,
    lambda g: (randn(g, 2, 5, 8),),
    ops=11,
)
module_program("mod_dict_output", DictHead, lambda g: (randn(g, 3, 8),), ops=2)
module_program(
    "mod_shared_layer_loop", SharedLayerLoop, lambda g: (randn(g, 3, 8),), ops=4
)
module_program(
    "mod_forward_kwarg", KwargForward, lambda g: Call(randn(g, 3, 8), scale=0.5), ops=2
)


# ---------------------------------------------------------------------------------------------
# The tests


def _params(programs):
    out = []
    for p in programs:
        marks = [pytest.mark.xfail(strict=True, reason=p.xfail)] if p.xfail else []
        out.append(pytest.param(p, id=p.name, marks=marks))
    return out


def _run_and_compare(prog: Program, backend, fullgraph=True):
    """Runs ``prog`` eagerly and compiled on two input sets and compares outputs and inputs.
    Returns the compiled callable."""
    target = prog.target()
    compiled = torchferro.compile(target, backend=backend, fullgraph=fullgraph)
    if prog.module:
        assert isinstance(compiled, torch.nn.Module)
    for seed in (0, 1):
        eager_args, eager_kwargs = prog.make(seed)
        comp_args, comp_kwargs = prog.make(seed)
        expected = target(*eager_args, **eager_kwargs)
        actual = compiled(*comp_args, **comp_kwargs)
        assert_same(expected, actual, f"seed {seed}: out")
        assert_same(eager_args, comp_args, f"seed {seed}: args after the call")
        assert_same(eager_kwargs, comp_kwargs, f"seed {seed}: kwargs after the call")
    return compiled


def test_corpus_size():
    assert len(PROGRAMS) >= 70
    assert len({p.name for p in PROGRAMS}) == len(PROGRAMS)


@pytest.mark.parametrize("prog", _params(PROGRAMS))
def test_program(prog: Program, counting_backend: CountingBackend):
    _run_and_compare(prog, counting_backend)
    # One graph for the first input set; the second set (same metadata) hits the cache.
    assert counting_backend.count == 1, [
        counting_backend.describe(i) for i in range(counting_backend.count)
    ]
    # The backend contract: one real tensor per placeholder.
    example_inputs = counting_backend.example_inputs[0]
    assert len(example_inputs) == len(counting_backend.placeholders(0))
    assert all(isinstance(t, torch.Tensor) for t in example_inputs)
    if prog.ops is not None:
        ops = counting_backend.op_nodes(0)
        assert len(ops) == prog.ops, counting_backend.describe(0)


def _code_of(prog: Program, target):
    """The code object whose cache holds the program's compiled entry."""
    return type(target).forward.__code__ if prog.module else prog.fn.__code__


@pytest.mark.parametrize("prog", _params(PROGRAMS))
def test_program_cache_entry(prog: Program, counting_backend: CountingBackend):
    target = prog.target()
    compiled = torchferro.compile(target, backend=counting_backend, fullgraph=True)
    for seed in (0, 1):
        args, kwargs = prog.make(seed)
        compiled(*args, **kwargs)
    _state, entries = torchferro._C.cache_entries(_code_of(prog, target))
    assert len(entries) == 1, entries
    frame_id, frame_compile = entries[0]["compile_id"].split("/")
    assert frame_id.isdigit() and frame_compile == "0"
    guards = entries[0]["guards"]
    assert (
        isinstance(guards, list) and guards and all(isinstance(g, str) for g in guards)
    )
    assert isinstance(entries[0]["graph"], str) and entries[0]["graph"]


def test_reset_restarts_compile_ids(counting_backend: CountingBackend):
    compiled = torchferro.compile(
        sin_plus_cos, backend=counting_backend, fullgraph=True
    )
    compiled(torch.randn(3))
    torchferro.compiler.reset()
    compiled = torchferro.compile(
        global_constants, backend=counting_backend, fullgraph=True
    )
    compiled(torch.randn(3))
    _state, entries = torchferro._C.cache_entries(global_constants.__code__)
    assert [e["compile_id"] for e in entries] == ["0/0"]


@pytest.mark.parametrize("prog", _params(PROGRAMS))
def test_program_eager_backend_string(prog: Program):
    target = prog.target()
    _run_and_compare(prog, "eager")
    # The frame was compiled (once), not run eagerly.
    _state, entries = torchferro._C.cache_entries(_code_of(prog, target))
    assert len(entries) == 1, entries


@pytest.mark.parametrize("prog", _params(PROGRAMS))
def test_program_inductor_backend(prog: Program, tmp_path, monkeypatch):
    """The default backend: graphs run as kernels generated by the Rust inductor (ops it cannot
    lower run through torch), and every result still equals eager."""
    monkeypatch.setenv("TORCHFERRO_CACHE_DIR", str(tmp_path.parent / "inductor-cache"))
    target = prog.target()
    _run_and_compare(prog, "inductor")
    _state, entries = torchferro._C.cache_entries(_code_of(prog, target))
    assert len(entries) == 1, entries


@pytest.mark.parametrize("prog", _params([p for p in PROGRAMS if "direct" in p.tags]))
def test_program_without_direct_call(
    prog: Program, counting_backend: CountingBackend, no_direct_call
):
    assert torchferro.config.direct_call is False
    _run_and_compare(prog, counting_backend)
    assert counting_backend.count == 1
    if prog.ops is not None:
        assert len(counting_backend.op_nodes(0)) == prog.ops, counting_backend.describe(
            0
        )


def test_direct_call_restored():
    assert torchferro.config.direct_call is True


def test_returned_inputs_are_the_same_objects(counting_backend: CountingBackend):
    compiled = torchferro.compile(
        return_input_unchanged, backend=counting_backend, fullgraph=True
    )
    for _ in range(2):
        x, y = torch.randn(3, 4), torch.randn(3, 4)
        out = compiled(x, y)
        assert out[0] is x
    lst = torchferro.compile(
        return_list_with_input, backend=counting_backend, fullgraph=True
    )
    x = torch.randn(3, 4)
    assert lst(x)[0] is x
    relu = torchferro.compile(
        inplace_relu_returns_input, backend=counting_backend, fullgraph=True
    )
    x = torch.randn(3, 4)
    assert relu(x) is x


def identity(x):
    return x


def test_identity_function_returns_its_input():
    compiled = torchferro.compile(identity, backend="eager", fullgraph=True)
    for _ in range(2):
        x = torch.randn(3)
        assert compiled(x) is x


# ---------------------------------------------------------------------------------------------
# Programs that must not compile in this slice. The line marked `# UNSUPPORTED` is the one the
# error must point at.


def unsupported_print(x):
    y = x * 2
    print("value:", y)  # UNSUPPORTED
    return y + 1


def unsupported_data_dependent_branch(x):
    if x.sum() > 0:  # UNSUPPORTED
        return x + 1
    return x - 1


def unsupported_item_in_python_arith(x):
    s = x.sum().item() * 2.0 + 1  # UNSUPPORTED
    return x * s


def _user_helper(t):
    return t * 2 + 1


UNSUPPORTED = [
    unsupported_print,
    unsupported_data_dependent_branch,
    unsupported_item_in_python_arith,
]


def _marked_line(fn) -> int:
    lines, start = inspect.getsourcelines(fn)
    (i,) = [i for i, line in enumerate(lines) if "# UNSUPPORTED" in line]
    return start + i


def _unsupported_inputs():
    # A positive and a negative sum, so the data-dependent branch takes both ways.
    return [
        torch.arange(12, dtype=torch.float32).view(3, 4) / 10,
        -torch.arange(12, dtype=torch.float32).view(3, 4),
    ]


@pytest.mark.parametrize("fn", UNSUPPORTED, ids=lambda f: f.__name__)
def test_unsupported_raises_under_fullgraph(
    fn, counting_backend: CountingBackend, capsys
):
    compiled = torchferro.compile(fn, backend=counting_backend, fullgraph=True)
    where = f"test_programs.py:{_marked_line(fn)}"
    for x in _unsupported_inputs():
        with pytest.raises(torchferro.Unsupported) as info:
            compiled(x.clone())
        assert where in str(info.value), str(info.value)
    assert counting_backend.count == 0
    # Tracing never runs the program's side effects.
    assert capsys.readouterr().out == ""


# Without fullgraph, each program breaks its graph at the marked line: the graph before the
# break runs compiled, the breaking instruction runs natively, and a resume function continues
# (compiled on its own). Expected backend calls over the two input sets:
BREAK_GRAPHS = {
    # x * 2 | print | y + 1 (same metadata both times)
    "unsupported_print": 2,
    # sum > 0 | branch | x + 1 for the first input, x - 1 for the second
    "unsupported_data_dependent_branch": 3,
    # x.sum() | .item() | x * s, specialised on the Python float s (two values)
    "unsupported_item_in_python_arith": 3,
}


@pytest.mark.parametrize(
    "fn",
    [pytest.param(f, id=f.__name__) for f in UNSUPPORTED],
)
def test_unsupported_breaks_the_graph_without_fullgraph(
    fn, counting_backend: CountingBackend, capsys
):
    compiled = torchferro.compile(fn, backend=counting_backend, fullgraph=False)
    for x in _unsupported_inputs():
        expected = fn(x.clone())
        eager_out = capsys.readouterr().out
        actual = compiled(x.clone())
        assert_same(expected, actual)
        # Side effects happen exactly once, as in eager.
        assert capsys.readouterr().out == eager_out
    state, entries = torchferro._C.cache_entries(fn.__code__)
    assert state == "normal"
    assert len(entries) == 1
    graphs = [counting_backend.describe(i) for i in range(counting_backend.count)]
    assert counting_backend.count == BREAK_GRAPHS[fn.__name__], graphs


def test_unsupported_is_an_exception():
    assert issubclass(torchferro.Unsupported, Exception)
