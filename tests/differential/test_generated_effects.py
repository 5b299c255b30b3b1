"""Hypothesis-generated programs with side effects (issue 13, "the harness"): the statements of
``programs.test_generated`` (tensor ops, Python values, containers, branches, loops, graph
breaks) plus in-place ops on inputs and on views of inputs, optimizer-like parameter updates
under ``no_grad``, container and attribute mutation of inputs and of a module global, random ops
(``torch.rand`` / ``randn_like`` / dropout after the harness's seed), exceptions raised and caught
in the frame, ``torch.manual_seed`` inside the frame, ``locals()`` reads and ops that fail at run
time inside ``try``. Each program runs eagerly and through torchferro (counting backend) on two
input sets and is compared by ``programs.harness.check_results``: results, inputs after the call
(tensors, lists, dicts, attributes), the global container, stdout, RNG state, modes, aliasing.

The statement classes torchferro gets wrong today are generated behind ``EFFECT_CLASSES`` and
tested by their own xfail(strict) test each, so that a fix turns its test into an XPASS failure
(then the class moves into ``WORKING``). Examples per run: ``TORCHFERRO_GENERATED_EXAMPLES``
(default 1000 for the working classes), with a fixed seed (``derandomize=True``)."""

from __future__ import annotations

import itertools
import os

import hypothesis.strategies as st
import pytest
import torch
from hypothesis import HealthCheck, Phase, event, given, note, settings
from programs.harness import Program, _call, check_results
from programs.test_generated import NAMESPACE, ProgramWriter

from .runner import BUG_TRY

# Statement classes that torchferro gets right today, and those it does not (with the reason).
WORKING = (
    "inplace_input",
    "inplace_view",
    "param_update",
    "rng",
    "container",
    "attr",
    "exception",
    "manual_seed",
    "aliasing",
    "locals",
)
FAILING = {
    "op_error_caught": BUG_TRY,
}
EXAMPLES = int(os.environ.get("TORCHFERRO_GENERATED_EXAMPLES", "1000"))


class Holder:
    """An input object whose attributes the program writes."""

    def __init__(self, t):
        self.t = t
        self.count = 0


class EffectWriter(ProgramWriter):
    """``ProgramWriter`` with side-effect statements of the enabled classes."""

    def __init__(self, data, allow_breaks: bool, classes: tuple[str, ...]):
        super().__init__(data, allow_breaks)
        self.classes = classes
        self.kinds_used: set[str] = set()

    def statement(self, indent: str, depth: int) -> None:
        if not self.draw(st.booleans()):
            super().statement(indent, depth)
            return
        kind = self.draw(st.sampled_from(self.classes))
        self.kinds_used.add(kind)
        emit = lambda line: self.lines.append(indent + line)
        t = self.fresh("t")
        if kind == "inplace_input":
            op = self.draw(st.sampled_from(["mul_(0.5)", "add_(1)", "clamp_(-1, 1)"]))
            emit(f"{self.draw(st.sampled_from(['x', 'y']))}.{op}")
        elif kind == "inplace_view":
            view = self.draw(
                st.sampled_from(["x[1:]", "y.t()[0]", "x.view(-1)[:5]", "y[:, ::2]"])
            )
            op = self.draw(st.sampled_from(["add_(1)", "mul_(-2)", "zero_()"]))
            emit(f"{view}.{op}")
        elif kind == "param_update":
            emit("with torch.no_grad():")
            g = self.tensor_expr()
            emit(f"    p.add_({g}, alpha=-0.1)")
            if self.draw(st.booleans()):
                emit("    p.mul_(0.9)")
        elif kind == "rng":
            expr = self.draw(
                st.sampled_from(
                    [
                        "torch.rand(3, 4)",
                        "torch.randn_like({})",
                        "F.dropout({}, 0.5, training=True)",
                        "torch.empty(3, 4).bernoulli_(0.5)",
                    ]
                )
            )
            emit(f"{t} = {expr.format(self.t())} + {self.t()}")
            self.tensors.append(t)
        elif kind == "container":
            which = self.draw(st.integers(0, 3))
            if which == 0:
                emit(f"ilst.append({self.t()} * 2)")
            elif which == 1:
                emit(f"idct['k{self.draw(st.integers(0, 2))}'] = {self.t()}")
            elif which == 2:
                emit(f"G.append({self.i()})")
            else:
                emit("if ilst:")
                emit(f"    {t} = ilst.pop() + {self.t()}")
                emit("else:")
                emit(f"    {t} = {self.t()}")
                self.tensors.append(t)
        elif kind == "attr":
            emit("obj.count += 1")
            emit(f"obj.t = obj.t + {self.t()}")
            emit(f"{t} = obj.t * obj.count")
            self.tensors.append(t)
        elif kind == "exception":
            c = self.const()
            emit("try:")
            emit(f"    if {self.i()} > {c}:")
            emit(f"        raise ValueError('boom {c}')")
            emit(f"    {t} = {self.t()} + 1")
            emit("except ValueError as e:")
            emit(f"    {t} = {self.t()} - len(str(e))")
            self.tensors.append(t)
        elif kind == "aliasing":
            # Values whose storage relations eager fixes: a clone of an input or of a value also
            # returned, an `out=` result, a view chain.
            src = self.draw(st.sampled_from(["x", "y", self.t()]))
            expr = self.draw(
                st.sampled_from(
                    [
                        "{}.clone()",
                        "{}.clone().clone()",
                        "torch.add({}, 1, out=torch.empty(3, 4))",
                        "{}.view(-1).view(3, 4)",
                        "{}.detach()",
                        "{}.contiguous()",
                    ]
                )
            )
            emit(f"{t} = {expr.format(src)}")
            self.tensors.append(t)
        elif kind == "manual_seed":
            emit(f"torch.manual_seed({self.draw(st.integers(0, 3))})")
            emit(f"{t} = torch.rand(3, 4) + {self.t()}")
            self.tensors.append(t)
        elif kind == "locals":
            n = self.fresh("n")
            emit(f"{n} = len(locals()) + ('x' in locals())")
            self.ints.append(n)
        elif kind == "op_error_caught":
            emit("try:")
            emit(
                f"    {t} = torch.index_select({self.t()}, 0, torch.tensor([{self.i()}]))"
            )
            emit("except (IndexError, RuntimeError):")
            emit(f"    {t} = {self.t()} * 3")
            self.tensors.append(t)

    def source(self, n_statements: int) -> str:
        for _ in range(n_statements):
            self.statement("    ", 0)
        ret = ", ".join(
            [f"{self.tensors[-1]} + 1"] + self.tensors[-3:] + self.ints[-2:]
        )
        body = "\n".join(self.lines)
        return (
            "def generated(x, y, n, flag, buf, p, ilst, idct, obj):\n"
            "    lst = [x]\n"
            "    dct = {'x': y}\n"
            f"{body}\n"
            f"    return ({ret}), lst, dct\n"
        )


def _inputs(n: int, flag: bool):
    def make(r):
        import io

        return (
            r.randn(3, 4),
            r.randn(3, 4),
            n,
            flag,
            io.StringIO(),
            r.randn(3, 4, requires_grad=True),
            [r.randn(3, 4)],
            {"k0": r.randn(3, 4)},
            Holder(r.randn(3, 4)),
        )

    return make


_ids = itertools.count()


def run_generated(data, allow_breaks, n, flag, classes, backend=None) -> None:
    writer = EffectWriter(data, allow_breaks, classes)
    src = writer.source(data.draw(st.integers(3, 10), label="statements"))
    note(src)
    event(f"kinds: {sorted(writer.kinds_used)}")
    ns = dict(NAMESPACE, G=[], Holder=Holder)
    exec(compile(src, f"<effects-{next(_ids)}>", "exec"), ns)  # noqa: S102
    fn = ns["generated"]
    p = Program("generated", fn, _inputs(n, flag), graphs=-1, state=("G",))
    import torchferro
    from conftest import CountingBackend

    torchferro.compiler.reset()
    eager = [_call(p, fn, fn, s) for s in (0, 1)]
    ns["G"].clear()
    compiled = torchferro.compile(fn, backend=backend or CountingBackend())
    try:
        actual = [_call(p, fn, compiled, s) for s in (0, 1)]
    finally:
        torch.set_grad_enabled(True)
        torchferro.compiler.reset()
    check_results(p, eager, actual)


_common = {
    "deadline": None,
    "derandomize": True,
    "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large],
}
_args = {
    "data": st.data(),
    "allow_breaks": st.sampled_from([False, True, True]),
    "n": st.integers(-2, 4),
    "flag": st.booleans(),
}


@settings(max_examples=EXAMPLES, **_common)
@given(**_args)
def test_generated_effects(data, allow_breaks, n, flag):
    run_generated(data, allow_breaks, n, flag, WORKING)


@settings(max_examples=40, **_common)
@given(**_args)
def test_generated_aliasing_through_the_inductor(data, allow_breaks, n, flag):
    # The inductor lowers `clone` to its operand and reuses buffers: the class of bugs where an
    # output shared storage with an input or another output (`x.clone()` returned `x`).
    run_generated(
        data, allow_breaks, n, flag, ("aliasing", "inplace_input"), backend="inductor"
    )


def _failing_class_test(kind: str):
    # A failing class stops at its first failing program: no shrinking, a few examples.
    @settings(max_examples=60, phases=[Phase.explicit, Phase.generate], **_common)
    @given(**_args)
    def test(data, allow_breaks, n, flag):
        run_generated(data, allow_breaks, n, flag, (kind,))

    return test


@pytest.mark.parametrize(
    "kind",
    [
        pytest.param(k, marks=pytest.mark.xfail(strict=True, reason=reason))
        for k, reason in FAILING.items()
    ],
)
def test_generated_failing_class(kind):
    _failing_class_test(kind)()
