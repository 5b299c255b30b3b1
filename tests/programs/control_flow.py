"""Control flow on Python values: if/while/for (unrolled), break/continue, for-else, try/except
and try/finally where nothing is raised in the traced part, grad-mode and autocast regions,
asserts, early returns, and exceptions raised by the program itself."""

from __future__ import annotations

import torch

from .harness import program


def x34(r):
    return (r.randn(3, 4),)


@program(lambda r: (r.randn(3, 4), r.pick(0, 2)), 2, fullgraph=True)
def if_elif_else_on_int(x, mode):
    if mode == 0:
        y = x.relu()
    elif mode == 1:
        y = x.tanh()
    else:
        y = x.sigmoid()
    return y


@program(x34, 1, fullgraph=True)
def while_loop_counter(x):
    i = 0
    while i < 4:
        x = x * 0.5 + i
        i += 1
    return x, i


@program(x34, 1, fullgraph=True)
def for_with_break(x):
    for i in range(10):
        if i == 3:
            break
        x = x + i
    return x, i


@program(x34, 1, fullgraph=True)
def for_with_continue(x):
    for i in range(6):
        if i % 2:
            continue
        x = x * 2 - i
    return x


@program(x34, 1, fullgraph=True)
def for_else(x):
    for i in range(3):
        if i == 7:
            break
    else:
        x = x + 100
    return x


@program(x34, 1, fullgraph=True)
def nested_loops(x):
    out = torch.zeros_like(x)
    for i in range(3):
        for j in range(i):
            out = out + x * (i - j)
    return out


@program(x34, 1, fullgraph=True)
def while_true_with_break(x):
    n = 0
    while True:
        n += 1
        x = x.cos()
        if n >= 3:
            break
    return x


@program(x34, 1, fullgraph=True)
def early_return_inside_loop(x):
    for i in range(5):
        x = x + 1
        if i == 2:
            return x * 10
    return x


@program(x34, 1, fullgraph=True)
def and_or_short_circuit_on_python_values(x):
    cfg = {"scale": 0, "name": ""}
    scale = cfg["scale"] or 2
    name = cfg["name"] and "x" or "default"
    return x * scale, name, None or 5  # noqa: SIM222


@program(x34, 1, fullgraph=True)
def branch_on_tensor_metadata(x):
    if x.dim() == 2 and x.shape[0] < x.shape[1] and x.dtype == torch.float32:
        x = x.t()
    if x.is_contiguous():
        x = x + 1
    if x.numel() > 100:
        x = x * 0
    return x


@program(x34, 1, fullgraph=True)
def try_except_nothing_raised(x):
    try:
        y = x * 2
    except ValueError:
        y = x
    return y + 1


@program(x34, 1, fullgraph=True)
def try_finally_nothing_raised(x):
    out = []
    try:
        out.append(x + 1)
    finally:
        out.append(x - 1)
    return out


@program(x34, 1, fullgraph=True)
def try_except_else(x):
    try:
        y = x.sin()
    except (KeyError, IndexError):
        y = None
    else:
        y = y * 3
    return y


@program(x34, 1, fullgraph=True)
def try_except_raised_and_caught(x):
    d = {"a": 1}
    try:
        k = d["missing"]
    except KeyError:
        k = 2
    return x * k


@program(lambda r: (r.randn(3, 4, requires_grad=True),), 1, fullgraph=True)
def no_grad_region(x):
    with torch.no_grad():
        y = x * 2
    z = x * 3
    return y, z, y.requires_grad, torch.is_grad_enabled()


@program(lambda r: (r.randn(3, 4, requires_grad=True),), 1, fullgraph=True)
def enable_grad_inside_no_grad(x):
    with torch.no_grad():
        a = x + 1
        with torch.enable_grad():
            b = x * 2
        c = x - 1
    return a, b, c


@program(lambda r: (r.randn(3, 4, requires_grad=True),), 1, fullgraph=True)
def set_grad_enabled_false(x):
    with torch.set_grad_enabled(False):
        y = x.exp()
    return y, x.exp()


@program(lambda r: (r.randn(4, 4), r.randn(4, 4)), 1, fullgraph=True)
def autocast_region(a, b):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        c = a @ b
    return c, c.dtype, (a @ b).dtype


# torch.compile: 1 graphs (torch's decorate_context wrapper is inlined, its no_grad region traced)
@program(lambda r: (r.randn(3, 4, requires_grad=True),), 1)
def no_grad_decorator_on_inlined_function(x):
    return _no_grad_helper(x), x * 2


@torch.no_grad()
def _no_grad_helper(t):
    return t * 5


@program(x34, 1, fullgraph=True)
def assert_on_python_values(x):
    n = x.shape[0]
    assert n == 3, "expects three rows"
    assert isinstance(n, int)
    return x * n


@program(lambda r: (r.randn(3, 4), r.pick(1, -1)), 1, 1, raises=True)
def program_raises_value_error(x, k):
    # Set 1 raises; the exception must be the eager one. The second input set raises
    # before any tensor op, so no second graph. One break record (the f-string of the
    # symbolic `k`); the resume functions after it are torch-free (torch.compile would not
    # trace them) and re-raise without a record of their own.
    if k < 0:
        raise ValueError(f"negative k: {k}")
    return x * k


@program(x34, 0, raises=True)
def program_raises_from_tensor_op(x):
    return x @ x  # shape mismatch: RuntimeError, as in eager


@program(x34, 1, fullgraph=True)
def loop_accumulates_list_then_cat(x):
    parts = []
    for i in range(x.shape[0]):
        parts.append(x[i : i + 1] * (i + 1))
    return torch.cat(parts)


@program(lambda r: ([r.randn(3), r.randn(3), r.randn(3)],), 1, fullgraph=True)
def range_len_indexing(xs):
    out = xs[0]
    for i in range(1, len(xs)):
        out = out + xs[i] * xs[i - 1]
    return out


def _fact(n):
    return 1 if n <= 1 else n * _fact(n - 1)


@program(x34, 1, fullgraph=True)
def recursion_on_python_ints(x):
    return x * _fact(5)


@program(x34, 1, fullgraph=True)
def loop_over_dtypes(x):
    return [x.to(dt).sum() for dt in (torch.float64, torch.int32, torch.bfloat16)]


@program(x34, 1, fullgraph=True)
def conditional_expression_chain(x):
    n = x.shape[1]
    y = x * 2 if n > 10 else (x * 3 if n > 3 else x)
    return y


@program(lambda r: (r.randn(3, 4), r.pick([1, 2], [1, 2])), 1, fullgraph=True)
def loop_over_list_argument_of_ints(x, ks):
    for k in ks:
        x = x.roll(k, dims=1)
    return x


# torch.compile: 0 graphs
@program(x34, 0, 0, eager=1)
def while_loop_with_a_break_inside(x):
    i = 0
    out = x
    while i < 3:
        out = out + i
        if i == 1:
            print("one")
        i += 1
    return out, i


# torch.compile: 0 graphs
@program(lambda r: (r.randn(3), {"a": 1.0, "b": 2.0}), 0, 0, eager=1)
def loop_over_input_dict_items_with_break(x, d):
    out = []
    for k, v in d.items():
        out.append(x * v)
        print(k)
    return out
