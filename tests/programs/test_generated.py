"""Hypothesis-generated programs: random compositions of tensor ops, Python arithmetic,
containers, branches and loops on Python values, and graph-break points (a ``print`` to a
StringIO, ``math.floor`` of a tensor's ``.item()``, a data-dependent branch, a helper function
that prints), written as Python source, exec'd into a function, and run compiled and eager on
two input sets. Programs without a break point must compile under ``fullgraph=True`` to exactly
one graph; the others must give eager's results, prints and container contents."""

from __future__ import annotations

import io
import itertools
import math

import hypothesis.strategies as st
import torch
import torch.nn.functional as F
import torchferro
from conftest import CountingBackend
from hypothesis import HealthCheck, event, given, note, settings

from .harness import assert_equiv

# Whether generated programs may mutate their containers after a graph break (set False to
# narrow a failure down to programs that mutate them only before the first break).
MUTATE_AFTER_BREAK = True

UNARY = [
    "torch.sin({})",
    "torch.cos({})",
    "torch.tanh({})",
    "torch.sigmoid({})",
    "torch.relu({})",
    "{}.abs()",
    "{}.neg()",
    "{}.clamp(-1.5, 1.5)",
    "F.gelu({})",
    "{}.t().contiguous().t()",
]
BINARY = ["+", "-", "*"]


def _helper_print(t, buf):
    """An inlined helper with a graph break inside."""
    u = t * 2
    print("helper", tuple(u.shape), file=buf)
    return u + 1


def _helper_pure(t, k=2):
    return t * k - 1


NAMESPACE = {
    "torch": torch,
    "F": F,
    "math": math,
    "_helper_print": _helper_print,
    "_helper_pure": _helper_pure,
}


class ProgramWriter:
    """Draws statements one at a time; tracks the tensor and int variables in scope."""

    # The generated function's parameters (a subclass drawing over more inputs adds them).
    PARAMS = "x, y, n, flag, buf"

    def __init__(self, data, allow_breaks: bool):
        self.data = data
        self.allow_breaks = allow_breaks
        self.lines: list[str] = []
        self.tensors = ["x", "y"]
        self.ints = ["n"]
        self.counter = itertools.count()
        self.breaks = 0

    def draw(self, strategy):
        return self.data.draw(strategy)

    def t(self) -> str:
        return self.draw(st.sampled_from(self.tensors))

    def i(self) -> str:
        return self.draw(st.sampled_from(self.ints))

    def const(self) -> int:
        return self.draw(st.integers(-3, 3))

    def fresh(self, kind: str) -> str:
        return f"{kind}{next(self.counter)}"

    def tensor_expr(self) -> str:
        kind = self.draw(st.integers(0, 6))
        if kind == 0:
            return self.draw(st.sampled_from(UNARY)).format(self.t())
        if kind == 1:
            return f"{self.t()} {self.draw(st.sampled_from(BINARY))} {self.t()}"
        if kind == 2:
            return (
                f"{self.t()} * ({self.i()} * {self.const()} + 1) + {self.const() / 2}"
            )
        if kind == 3:
            return f"{self.t()} - {self.t()}.mean(dim={self.draw(st.integers(0, 1))}, keepdim=True)"
        if kind == 4:
            return f"({self.t()} @ {self.t()}.t()) @ {self.t()} / 10"
        if kind == 5:
            return f"torch.where({self.t()} > 0, {self.t()}, {self.t()} * 0.5)"
        return f"_helper_pure({self.t()}, k={self.const()})"

    def int_expr(self) -> str:
        kind = self.draw(st.integers(0, 3))
        if kind == 0:
            return f"({self.i()} * {self.const()} + {self.const()}) % 7"
        if kind == 1:
            return f"{self.i()} // 2 + len(lst)"
        if kind == 2:
            return f"max({self.i()}, {self.const()}) - min({self.i()}, 1)"
        return f"{self.t()}.shape[{self.draw(st.integers(0, 1))}] + {self.i()}"

    def statement(self, indent: str, depth: int) -> None:
        kinds = [
            "tensor",
            "tensor",
            "int",
            "container",
            "tuple",
            "inplace",
            "no_grad",
            "closure",
        ]
        if depth < 2:
            kinds += ["if", "loop", "list_loop"]
        if self.allow_breaks:
            kinds += ["break", "break"]
        kind = self.draw(st.sampled_from(kinds))
        emit = lambda line: self.lines.append(indent + line)
        if kind == "tensor":
            v = self.fresh("t")
            emit(f"{v} = {self.tensor_expr()}")
            self.tensors.append(v)
        elif kind == "int":
            v = self.fresh("n")
            emit(f"{v} = {self.int_expr()}")
            self.ints.append(v)
        elif kind == "container":
            if self.breaks and not MUTATE_AFTER_BREAK:
                v = self.fresh("t")
                emit(f"{v} = lst[-1] + dct['x']")
                self.tensors.append(v)
            else:
                op = self.draw(st.integers(0, 2))
                if op == 0:
                    emit(f"lst.append({self.t()})")
                elif op == 1:
                    emit(f"dct['k{self.draw(st.integers(0, 2))}'] = {self.t()}")
                else:
                    v = self.fresh("t")
                    emit(f"{v} = torch.stack(lst).sum(0) + dct['x']")
                    self.tensors.append(v)
        elif kind == "inplace":
            # In place on any tensor, inputs included (mutations are compared after the call).
            op = self.draw(
                st.sampled_from(["mul_(0.5)", "add_(1)", "clamp_(-1, 1)", "[0] = 2.0"])
            )
            emit(f"{self.t()}{'' if op.startswith('[') else '.'}{op}")
        elif kind == "no_grad":
            v = self.fresh("t")
            emit("with torch.no_grad():")
            emit(f"    {v} = {self.tensor_expr()}")
            self.tensors.append(v)
        elif kind == "closure":
            # A function defined in the frame, closing over a tensor: the frame has cells.
            f, v = self.fresh("f"), self.fresh("t")
            emit(f"def {f}(u):")
            emit(f"    return u * {self.const()} + {self.t()}")
            emit(f"{v} = {f}({self.t()})")
            self.tensors.append(v)
        elif kind == "list_loop":
            v, item = self.fresh("t"), self.fresh("u")
            emit(f"{v} = {self.t()} * 0")
            emit(f"for {item} in lst:")
            emit(f"    {v} = {v} + {item}")
            if self.allow_breaks and self.draw(st.booleans()):
                self.breaks += 1
                emit(f"    print('item', tuple({item}.shape), file=buf)")
            self.tensors.append(v)
        elif kind == "tuple":
            a, b = self.fresh("t"), self.fresh("t")
            emit(f"{a}, {b} = ({self.t()}, {self.t()} + {self.const()})")
            self.tensors += [a, b]
        elif kind == "if":
            v = self.fresh("t")
            cond = self.draw(
                st.sampled_from(
                    [
                        f"{self.i()} > {self.const()}",
                        "flag",
                        f"len(lst) > {self.const()}",
                    ]
                )
            )
            emit(f"if {cond}:")
            emit(f"    {v} = {self.tensor_expr()}")
            emit("else:")
            emit(f"    {v} = {self.tensor_expr()}")
            self.tensors.append(v)
        elif kind == "loop":
            v = self.fresh("t")
            emit(f"{v} = {self.t()}")
            it = self.draw(st.sampled_from(["range({})", "range(1, {} + 2)"])).format(
                self.draw(st.integers(0, 3))
            )
            k = self.fresh("k")
            emit(f"for {k} in {it}:")
            emit(f"    {v} = {v} * 0.5 + {k}")
            if self.allow_breaks and self.draw(st.booleans()):
                self.breaks += 1
                emit(f"    print('loop', {k}, file=buf)")
            self.tensors.append(v)
        else:
            self.breaks += 1
            point = self.draw(st.integers(0, 3))
            if point == 0:
                emit(f"print('value', {self.i()}, tuple({self.t()}.shape), file=buf)")
            elif point == 1:
                v = self.fresh("n")
                emit(f"{v} = math.floor({self.t()}.abs().sum().item()) % 5")
                self.ints.append(v)
            elif point == 2:
                v, src = self.fresh("t"), self.t()
                emit(f"if {src}.sum() > 0:")
                emit(f"    {v} = {src} + 1")
                emit("else:")
                emit(f"    {v} = {src} - 1")
                self.tensors.append(v)
            else:
                v = self.fresh("t")
                emit(f"{v} = _helper_print({self.t()}, buf)")
                self.tensors.append(v)

    def source(self, n_statements: int) -> str:
        for _ in range(n_statements):
            self.statement("    ", 0)
        # The first result is a tensor op, so even a program of Python statements has a graph.
        ret = ", ".join(
            [f"{self.tensors[-1]} + 1"] + self.tensors[-3:] + self.ints[-2:]
        )
        body = "\n".join(self.lines)
        return (
            f"def generated({self.PARAMS}):\n"
            "    lst = [x]\n"
            "    dct = {'x': y}\n"
            f"{body}\n"
            f"    return ({ret}), lst, dct\n"
        )


def _inputs(seed: int, n: int, flag: bool):
    g = torch.Generator().manual_seed(seed)
    return [
        torch.randn(3, 4, generator=g),
        torch.randn(3, 4, generator=g),
        n,
        flag,
        io.StringIO(),
    ]


_ids = itertools.count()


@settings(
    max_examples=50,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    data=st.data(),
    allow_breaks=st.sampled_from([False, True, True]),
    n=st.integers(-2, 4),
    flag=st.booleans(),
)
def test_generated_program(data, allow_breaks, n, flag):
    writer = ProgramWriter(data, allow_breaks)
    src = writer.source(data.draw(st.integers(3, 10), label="statements"))
    note(src)
    event(f"break points: {min(writer.breaks, 3)}{'+' if writer.breaks >= 3 else ''}")
    ns = dict(NAMESPACE)
    exec(compile(src, f"<generated-{next(_ids)}>", "exec"), ns)  # noqa: S102
    fn = ns["generated"]

    torchferro.compiler.reset()
    backend = CountingBackend()
    fullgraph = writer.breaks == 0
    compiled = torchferro.compile(fn, backend=backend, fullgraph=fullgraph)
    for seed in (0, 1):
        expected_args = _inputs(seed, n, flag)
        actual_args = _inputs(seed, n, flag)
        expected = fn(*expected_args)
        actual = compiled(*actual_args)
        assert_equiv(expected, actual, f"input set {seed}: out")
        assert_equiv(
            expected_args, actual_args, f"input set {seed}: args after the call"
        )
    if fullgraph:
        assert backend.count == 1, [backend.describe(i) for i in range(backend.count)]
