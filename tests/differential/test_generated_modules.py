"""Hypothesis-generated programs that build `nn.Module` objects inside the compiled frame (issue
14, session 30): module classes with no `__init__`, with attributes, with submodules registered
through `__setattr__`, a torch layer subclass; built, called, switched with `.eval()`/`.train()`,
given and stripped of attributes, wrapped in `nn.Sequential`, walked with `named_children()`,
`named_modules()`, `named_buffers()` and `parameters()`,
live across a graph break or not. Each program runs eagerly, under
``torch.compile(backend=counting)`` and under ``torchferro.compile(backend=counting)`` on two
calls with fresh state; the values (the tensor and a log of Python facts the program reads back)
must be eager's, and torchferro's graph count at most torch.compile's wherever torch.compile's
values are eager's.

Examples per run: ``TORCHFERRO_MODULE_EXAMPLES`` (default 25), with a fixed seed
(``derandomize=True``)."""

from __future__ import annotations

import itertools
import os

import hypothesis.strategies as st
import torch
from hypothesis import HealthCheck, event, given, note, settings

from .test_generated_escapes import _same

EXAMPLES = int(os.environ.get("TORCHFERRO_MODULE_EXAMPLES", "25"))

_ids = itertools.count()

CLASSES = """
class Act(nn.Module):
    def forward(self, x):
        return x.sigmoid() * x


class Sc(nn.Module):
    def __init__(self, s):
        super().__init__()
        self.s = s

    def forward(self, x):
        return x * self.s + (1.0 if self.training else 0.0)


class Pair(nn.Module):
    def __init__(self, s):
        super().__init__()
        self.a = Sc(s)
        self.b = Act()
        self.n = 0

    def forward(self, x):
        self.n += 1
        return self.b(self.a(x)) - self.n


class Buf(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.register_buffer("w", torch.full((3,), float(c)))

    def forward(self, x):
        return x * self.w


class Soft(nn.Softmax):
    def forward(self, x):
        return super().forward(x * 2) + x
"""

MAKERS = ["Act()", "Sc({c})", "Pair({c})", "Soft(dim=-1)", "Buf({c})"]


@st.composite
def programs(draw):
    """The source of ``f(x)`` and whether it has a graph break."""
    body = ["y = x * 1", "log = []"]
    made: list[str] = []
    broke = False
    for i in range(draw(st.integers(1, 7), label="statements")):
        c = draw(st.integers(1, 3))
        kinds = (
            ["make"]
            if not made
            else ["make", "call", "call", "state", "state", "strip", "seq", "walk"]
        )
        if made and not broke:
            kinds.append("break")
        kind = draw(st.sampled_from(kinds))
        if kind == "make":
            name = f"m{len(made)}"
            made.append(name)
            body.append(f"{name} = {draw(st.sampled_from(MAKERS)).format(c=c)}")
            if draw(st.booleans()):
                body.append(f"y = {name}(y)")
            continue
        m = draw(st.sampled_from(made))
        if kind == "call":
            body.append(f"y = {m}(y) + {c}")
        elif kind == "state":
            body.append(
                draw(
                    st.sampled_from(
                        [
                            f"{m}.eval()",
                            f"{m}.train()",
                            f"log.append({m}.training)",
                            f"{m}.tag = {c}",
                            f"log.append(getattr({m}, 'tag', -1))",
                            f"log.append(hasattr({m}, 'tag'))",
                            f"log.append(type({m}).__name__)",
                            f"log.append([n for n, _ in {m}.named_modules()])",
                            f"log.append([n for n, _ in {m}.named_buffers()])",
                            f"log.append(len(list({m}.parameters())))",
                            f"log.append({m}.requires_grad_(False) is {m})",
                        ]
                    )
                )
            )
        elif kind == "strip":
            if draw(st.booleans()):
                body += [f"if hasattr({m}, 'tag'):", f"    del {m}.tag"]
            else:
                body.append(f"log.append({m}.__dict__.pop('tag', None))")
        elif kind == "seq":
            other = draw(st.sampled_from(made))
            body.append(f"y = nn.Sequential({m}, {other})(y)")
        elif kind == "walk":
            body.append(f"log.append([n for n, _ in {m}.named_children()])")
        else:
            body.append("torch._dynamo.graph_break()")
            broke = True
    body.append("return y, log")
    src = "import torch\nfrom torch import nn\n" + CLASSES + "\n\ndef f(x):\n"
    src += "".join(f"    {line}\n" for line in body)
    return src, broke


def _run(src: str, mode: str):
    """Two calls of the program in ``mode``; what each gave, and the graphs compiled."""
    import torchferro
    from conftest import CountingBackend

    ns: dict = {}
    exec(compile(src, f"<modules-{next(_ids)}>", "exec"), ns)  # noqa: S102
    fn = ns["f"]
    backend = CountingBackend()
    torch._dynamo.reset()
    torchferro.compiler.reset()
    if mode == "torch.compile":
        fn = torch.compile(fn, backend=backend)
    elif mode == "torchferro":
        fn = torchferro.compile(fn, backend=backend)
    out = []
    try:
        for i in range(2):
            x = torch.randn(2, 3, generator=torch.Generator().manual_seed(i))
            try:
                out.append(("ok", fn(x)))
            except Exception as e:  # noqa: BLE001 - the exception is compared
                out.append(("raised", type(e).__name__, str(e)))
    finally:
        torch._dynamo.reset()
        torchferro.compiler.reset()
    return out, backend.count


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(program=programs())
def test_generated_modules_built_in_frame(program):
    src, broke = program
    note(src)
    eager, _ = _run(src, "eager")
    ferro, ferro_graphs = _run(src, "torchferro")
    tc, tc_graphs = _run(src, "torch.compile")
    event(f"graph break: {broke}")
    assert _same(eager, ferro), f"torchferro {ferro} != eager {eager}"
    if _same(eager, tc):
        note(f"graphs: torchferro {ferro_graphs}, torch.compile {tc_graphs}")
        assert ferro_graphs <= tc_graphs, (
            f"torchferro made {ferro_graphs} graphs, torch.compile {tc_graphs}"
        )
