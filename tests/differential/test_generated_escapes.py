"""Hypothesis-generated programs where an exception escapes after 0, 1 or 2 graph breaks (issue
14): the traced part computes tensors, writes its tensor input in place, appends to a module
global, bumps a global counter and an input object's attribute before a `raise` that only some
calls reach (raised directly, by an inlined helper, or inside a `no_grad` block). The compiled
function is called by the test (the exception reaches it) or by an uncompiled caller that
catches it, or a compiled caller catches it (values only: it makes more graphs than
torch.compile, which gives such a caller up). Each program runs eagerly, under ``torch.compile(backend=counting)`` and under
``torchferro.compile(backend=counting)`` on the same three calls with fresh state, and the runs
are compared call by call: the value or the exception (type and message), the input after the
call, the global list and counter, the input object's attributes, and the user frames of the
escaping exception's traceback (the generated file's entries as function names: torchferro's
must be eager's, since a resumed rest it gives up runs under the user's function name, where
torch.compile shows its `torch_dynamo_resume_in_...` frames). Graph counts: torchferro's is at
most torch.compile's (the project's rule) wherever torch.compile's run equals eager's.

Examples per run: ``TORCHFERRO_ESCAPE_EXAMPLES`` (default 25), with a fixed seed
(``derandomize=True``)."""

from __future__ import annotations

import itertools
import os
import traceback

import hypothesis.strategies as st
import torch
from hypothesis import HealthCheck, event, given, note, settings

EXAMPLES = int(os.environ.get("TORCHFERRO_ESCAPE_EXAMPLES", "25"))

_ids = itertools.count()

ERRORS = ("ValueError", "RuntimeError", "KeyError")


class Box:
    """An input object whose attributes the program writes."""

    def __init__(self):
        self.count = 0
        self.items = []


HELPERS = """
def _check(y, bad, msg):
    if bad:
        raise {err}(f"{{msg}}: {{tuple(y.shape)}}")
    return y * 1.5
"""


@st.composite
def programs(draw):
    """The source of ``f(x, n, box)`` (and of a caller catching its exception), who calls it,
    the ``n`` of each call and the number of graph breaks."""
    breaks = draw(st.integers(0, 2), label="breaks")
    raise_in = draw(st.integers(0, breaks), label="segment of the raise")
    err = draw(st.sampled_from(ERRORS), label="exception")
    how = draw(st.sampled_from(["direct", "helper", "no_grad"]), label="raise form")
    cmp, v = draw(st.sampled_from(["==", ">", "<", "!="])), draw(st.integers(0, 2))
    body = ["y = x * 2"]
    for seg in range(breaks + 1):
        for _ in range(draw(st.integers(1, 3))):
            c = draw(st.integers(1, 3))
            body.append(
                draw(
                    st.sampled_from(
                        [
                            f"y = y.sin() + {c}",
                            f"y = y * {c} - x",
                            "y = y.relu().exp()",
                            f"x.add_({c})",
                            f"LOG.append(({seg}, {c}))",
                            "LOG.append(tuple(y.shape))",
                            f"STATE['k'] += {c}",
                            f"box.count += {c}",
                            f"box.items.append({c})",
                        ]
                    )
                )
            )
        if seg == raise_in:
            cond = f"n {cmp} {v}"
            if how == "direct":
                body += [
                    f"if {cond}:",
                    f'    raise {err}(f"at {seg}: {{tuple(y.shape)}}")',
                ]
            elif how == "helper":
                body.append(f'y = _check(y, {cond}, "helper at {seg}")')
            else:
                body += [
                    "with torch.no_grad():",
                    "    z = y * 2",
                    f"    if {cond}:",
                    f'        raise {err}(f"no_grad at {seg}: {{z.dim()}}")',
                    "y = y + 1",
                ]
        if seg < breaks:
            body.append("torch._dynamo.graph_break()")
    body.append("return y + x")
    src = HELPERS.format(err=err) + "\n\ndef f(x, n, box):\n"
    src += "".join(f"    {line}\n" for line in body)
    src += f"""

def catching(compiled):
    def caller(x, n, box):
        try:
            return compiled(x, n, box) * 2
        except {err} as e:
            LOG.append(("caught", str(e)))
            return x - 1

    return caller


def compiled_caller(x, n, box):
    try:
        return f(x, n, box) * 2
    except {err} as e:
        LOG.append(("caught", str(e), f"{{e!r}}"))
        return x - 1
"""
    target = draw(
        st.sampled_from(["f", "caller", "compiled_caller"]), label="called by"
    )
    # Orders that raise on the first, a middle or the last call, or never or always.
    calls = draw(
        st.sampled_from(
            [[0, 1, 2], [2, 1, 0], [1, 0, 1], [0, 2, 0], [2, 2, 1], [1, 1, 1]]
        ),
        label="n per call",
    )
    return src, target, calls, breaks


def _run(src: str, target: str, calls: list[int], mode: str):
    """Runs the program's three calls in ``mode`` with fresh state; returns what each call gave
    and left behind, and the number of graphs compiled."""
    import torchferro
    from conftest import CountingBackend

    ns = {"torch": torch, "LOG": [], "STATE": {"k": 0}}
    filename = f"<escapes-{next(_ids)}>"
    exec(compile(src, filename, "exec"), ns)  # noqa: S102
    fn = ns["compiled_caller" if target == "compiled_caller" else "f"]
    backend = CountingBackend()
    torch._dynamo.reset()
    torchferro.compiler.reset()
    if mode == "torch.compile":
        fn = torch.compile(fn, backend=backend)
    elif mode == "torchferro":
        fn = torchferro.compile(fn, backend=backend)
    if target == "caller":
        fn = ns["catching"](fn)
    box = Box()
    out = []
    try:
        for i, n in enumerate(calls):
            x = torch.randn(3, 4, generator=torch.Generator().manual_seed(i))
            try:
                r = ("ok", fn(x, n, box))
            except Exception as e:  # noqa: BLE001 - every escaping exception is compared
                names = [
                    f.name
                    for f in traceback.extract_tb(e.__traceback__)
                    if f.filename == filename
                ]
                r = ("raised", type(e).__name__, str(e), names)
            out.append(
                (r, x, list(ns["LOG"]), dict(ns["STATE"]), box.count, list(box.items))
            )
    finally:
        torch.set_grad_enabled(True)
        torch._dynamo.reset()
        torchferro.compiler.reset()
    return out, backend.count


def _same(a, b) -> bool:
    if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
        return (
            isinstance(a, torch.Tensor)
            and isinstance(b, torch.Tensor)
            and a.shape == b.shape
            and torch.allclose(a, b, equal_nan=True)
        )
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(map(_same, a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return a == b


def _tc_names_dropped(runs):
    """The runs without the traceback names (torch.compile shows its resume functions)."""
    return [((r[0], r[1], r[2]) if r[0] == "raised" else r, *rest) for r, *rest in runs]


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(program=programs())
def test_generated_escapes(program):
    src, target, calls, breaks = program
    note(src)
    note(f"called by: {target}, n per call: {calls}")
    eager, _ = _run(src, target, calls, "eager")
    ferro, ferro_graphs = _run(src, target, calls, "torchferro")
    tc, tc_graphs = _run(src, target, calls, "torch.compile")
    escaped = sum(
        r[0] == "raised" or bool(log) and log[-1][0] == "caught"
        for r, _, log, *_ in eager
    )
    event(f"breaks {breaks}, {escaped} calls raise, called by {target}")
    for i, (e, a) in enumerate(zip(eager, ferro)):
        assert _same(e, a), f"call {i}: torchferro {a} != eager {e}"
    # A compiled caller resumes in its handler where torch.compile gives the caller up (a
    # break inside a `try` block): more graphs there, counted only
    # (trust_exception_caught_by_caller_after_break names the gap).
    if target != "compiled_caller" and _same(
        _tc_names_dropped(eager), _tc_names_dropped(tc)
    ):
        event("torch.compile equals eager")
        note(f"graphs: torchferro {ferro_graphs}, torch.compile {tc_graphs}")
        assert ferro_graphs <= tc_graphs, (
            f"torchferro made {ferro_graphs} graphs, torch.compile {tc_graphs}"
        )
