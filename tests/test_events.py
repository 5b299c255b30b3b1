"""The tracer's structured events carry typed fields (tracer/src/event.rs): a recompile names the
failing guard's kind, source and user line, and for tensors the property that changed; a graph
break names its reason, the user's line and the inlined frames. The log text is rendered from the
same records, so each test also checks that the text and the fields agree, and the explain and
report output built from the fields reads as before."""

from __future__ import annotations

import contextlib
import inspect
import logging
import os

import pytest
import torch

import torchferro
from torchferro import _events, _logging

HERE = os.path.abspath(__file__)


def _line(fn, text: str) -> int:
    lines, start = inspect.getsourcelines(fn)
    return start + next(i for i, line in enumerate(lines) if text in line)


def _loc(fn, text: str) -> dict:
    return {"filename": HERE, "lineno": _line(fn, text)}


def scaled(x, k):
    y = x * k
    return y + 1


def helper(t):
    print("checking", t.shape)
    return t * 2


def step(x):
    z = x + 1
    z = helper(z)
    return z.sum()


def introspects(x):
    inspect.currentframe()
    return x + 1


@contextlib.contextmanager
def recorded():
    events: list[dict] = []
    _events.subscribe(events.append)
    try:
        yield events
    finally:
        _events.unsubscribe(events.append)


@pytest.fixture(autouse=True)
def _fresh():
    torchferro.compiler.reset()
    torchferro.config.recompile_limit = 8
    yield
    torchferro.compiler.reset()
    # (A test here sets the limit to 1: later files must not inherit it.)
    torchferro.config.recompile_limit = 8
    assert not _events.active()


def _recompiles(events):
    return [e for e in events if e["kind"] == "recompile"]


def _message_lines(event) -> list[str]:
    """The failure lines of the recompile log text."""
    return event["message"].split("\n")[2:]


def test_recompile_event_names_guard_kind_source_and_tensor_mismatch():
    f = torchferro.compile(scaled, backend="eager")
    with recorded() as events:
        f(torch.ones(2), 2)
        f(torch.ones(3), 2)  # size of x
        f(torch.ones(3, dtype=torch.float64), 2)  # dtype of x
        f(torch.ones(3), 5)  # the int constant k
        with torch.no_grad():
            f(torch.ones(3), 2)  # grad mode
    size, dtype, const, grad = _recompiles(events)
    origin = _loc(scaled, "y = x * k")
    assert size["failures"] == [
        {
            "compile_id": "0/0",
            "kind": "TENSOR_MATCH",
            "source": "L['x']",
            "expr": "x",
            "reason": "tensor 'x' size mismatch at index 0. expected 2, actual 3",
            "origin": origin,
            "mismatch": {"property": "size", "index": 0, "expected": 2, "actual": 3},
        }
    ]
    assert dtype["failures"][0] == {
        "compile_id": "0/1",
        "kind": "TENSOR_MATCH",
        "source": "L['x']",
        "expr": "x",
        "reason": "tensor 'x' dtype mismatch. expected torch.float32, actual torch.float64",
        "origin": origin,
        "mismatch": {
            "property": "dtype",
            "index": None,
            "expected": "torch.float32",
            "actual": "torch.float64",
        },
    }
    (k_fail,) = [f for f in const["failures"] if f["compile_id"] == "0/1"]
    assert k_fail == {
        "compile_id": "0/1",
        "kind": "EQUALS_MATCH",
        "source": "L['k']",
        "expr": "k",
        "reason": "L['k'] == 2 failed. actual 5",
        "origin": origin,
        "mismatch": None,
    }
    assert {
        (f["kind"], f["source"], f["origin"], f["mismatch"]) for f in grad["failures"]
    } == {("GRAD_MODE", None, None, None)}
    assert grad["failures"][0]["reason"] == (
        "grad mode mismatch. expected torch.is_grad_enabled()=True, actual False"
    )
    # The log text is rendered from the same records.
    for e in (size, dtype, const, grad):
        assert _message_lines(e) == [
            f"    - {f['compile_id']}: {f['reason']}" for f in e["failures"]
        ]


def test_recompile_hint_reads_the_size_fields(monkeypatch):
    # The hint is for a dimension that stays static while its size keeps changing: automatic
    # dynamic off (on, the third size reuses the dynamic entry the second compiled, as
    # torch.compile; test_dynamic_shapes.py covers that).
    monkeypatch.setattr(torchferro.config, "automatic_dynamic_shapes", False)
    f = torchferro.compile(scaled, backend="eager")
    with recorded() as events:
        for n in (2, 3, 4):
            f(torch.ones(n), 2)
    last = _recompiles(events)[-1]
    assert [f["mismatch"]["expected"] for f in last["failures"]] == [3, 2]
    assert _logging.recompile_text(last).endswith(
        "    hint: dimension 0 of 'x' keeps changing (sizes 2, 3, 4); "
        "call torchferro.mark_dynamic(x, 0) before calling scaled, or compile with "
        "dynamic=True, to compile one graph for every size"
    )


def test_graph_break_event_names_reason_user_line_and_frames(capsys):
    with recorded() as events:
        torchferro.compile(step, backend="eager")(torch.ones(2))
    capsys.readouterr()
    brk_events = [e for e in events if e["kind"] == "graph_break"]
    outer = next(e for e in brk_events if e["function"] == "step")
    at_print = _loc(helper, "print(")
    assert outer["break"] == {
        "reason": "call to builtins.print",
        "location": at_print,
        "frames": [
            {"function": "helper", **at_print},
            {"function": "step", **_loc(step, "z = helper(z)")},
        ],
    }
    # The message text is the same record rendered.
    assert outer["reason"] == (
        f"call to builtins.print (at {HERE}:{at_print['lineno']})\n"
        "  inlined call stack (innermost first):\n"
        f"    helper at {HERE}:{at_print['lineno']}\n"
        f"    step at {HERE}:{_line(step, 'z = helper(z)')}"
    )
    # The compile that ends at the break carries the same record.
    compile_ = next(
        e for e in events if e["kind"] == "compile" and e["function"] == "step"
    )
    assert compile_["break"] == outer["break"]
    assert compile_["break_reason"] == outer["reason"]
    inner = next(e for e in brk_events if e["function"] == "helper")
    assert inner["break"] == {
        "reason": "call to builtins.print",
        "location": at_print,
        "frames": [{"function": "helper", **at_print}],
    }


def test_eager_event_names_reason_and_user_line():
    with recorded() as events:
        torchferro.compile(introspects, backend="eager")(torch.ones(2))
    (e,) = [e for e in events if e["kind"] == "eager"]
    at = _loc(introspects, "inspect.currentframe()")
    assert e["break"]["reason"] == (
        f"inspect.currentframe() inspects the calling frame (at {HERE}:{at['lineno']})"
    )
    assert e["break"]["location"] == {
        "filename": HERE,
        "lineno": introspects.__code__.co_firstlineno,
    }
    assert e["reason"] == (
        f"{e['break']['reason']} (at {HERE}:{introspects.__code__.co_firstlineno})"
    )


def test_guard_records_are_the_guard_lines():
    with recorded() as events:
        torchferro.compile(scaled, backend="eager")(torch.ones(2), 2)
    (c,) = [e for e in events if e["kind"] == "compile"]
    origin = _loc(scaled, "y = x * k")
    assert [(g["kind"], g["source"], g["origin"]) for g in c["guard_records"]] == [
        ("GRAD_MODE", None, None),
        ("TENSOR_MATCH", "L['x']", origin),
        ("EQUALS_MATCH", "L['k']", origin),
    ]
    assert c["guards"] == [
        g["text"] + (f"  # {HERE}:{g['origin']['lineno']}" if g["origin"] else "")
        for g in c["guard_records"]
    ]
    assert c["guards"][2] == f"EQUALS_MATCH L['k'] == 2  # {HERE}:{origin['lineno']}"


def test_explain_reads_the_break_frames(capsys):
    out = torchferro.explain(step)(torch.ones(2))
    capsys.readouterr()
    (b,) = out.break_reasons
    at_print, at_call = _line(helper, "print("), _line(step, "z = helper(z)")
    assert (b.reason, b.function, b.filename, b.lineno) == (
        "call to builtins.print",
        "helper",
        HERE,
        at_print,
    )
    assert b.user_stack == [f"helper at {HERE}:{at_print}", f"step at {HERE}:{at_call}"]
    assert b.frames == [
        {"function": "helper", "filename": HERE, "lineno": at_print},
        {"function": "step", "filename": HERE, "lineno": at_call},
    ]
    assert (
        "Break Reasons:\n  Break Reason 1:\n    Reason: call to builtins.print\n"
        f"    User Stack:\n      helper at {HERE}:{at_print}\n"
        '        print("checking", t.shape)\n'
        f"      step at {HERE}:{at_call}\n        z = helper(z)\nOps per Graph:\n"
    ) in str(out)


def test_graph_breaks_artifact_reads_the_break_record(capsys):
    root = logging.getLogger("torchferro")
    records: list[logging.LogRecord] = []
    handler = logging.Handler(logging.DEBUG)
    handler.emit = records.append
    torchferro.set_logs("graph_breaks")
    root.addHandler(handler)
    try:
        torchferro.compile(step, backend="eager")(torch.ones(2))
    finally:
        root.removeHandler(handler)
        torchferro.set_logs()
    capsys.readouterr()
    at_print, at_call = _line(helper, "print("), _line(step, "z = helper(z)")
    texts = [r.getMessage() for r in records if r.name == "torchferro.graph_breaks"]
    assert texts[0] == (
        f"Graph break in function step: call to builtins.print (at {HERE}:{at_print})\n"
        "  inlined call stack (innermost first):\n"
        f"    helper at {HERE}:{at_print}\n"
        '        print("checking", t.shape)\n'
        f"    step at {HERE}:{at_call}\n"
        "        z = helper(z)"
    )


def test_report_shows_the_fields(tmp_path, capsys):
    from torchferro.report import write_report

    torchferro.set_trace_dir(tmp_path / "trace")
    try:
        f = torchferro.compile(step, backend="eager")
        f(torch.ones(2))
        f(torch.ones(3))
    finally:
        torchferro.set_trace_dir(None)
    capsys.readouterr()
    page = open(write_report(str(tmp_path / "trace"), str(tmp_path / "r.html"))).read()
    at_print, at_call = _line(helper, "print("), _line(step, "z = helper(z)")
    origin = _line(step, "z = x + 1")
    for fragment in (
        # The inlined stack of the break, each frame with its location and line.
        f'<span class="fn">helper</span> at <span class="where">{HERE}:{at_print}</span>',
        f'<span class="fn">step</span> at <span class="where">{HERE}:{at_call}</span>',
        # A guard row: the check without kind and origin, then the user's line number.
        '<td class="body">L[&#x27;x&#x27;]: torch.float32, cpu, size=[2], stride=[1], requires_grad=False</td>'
        f'<td class="user"><span class="lno" title="{HERE}:{origin}">{origin}</span> <b>z = x + 1</b>',
        # The recompile, with the user's line of the failing guard.
        f"value first used at {HERE}:{origin} <code>z = x + 1</code>",
    ):
        assert fragment in page, fragment


def test_recompile_limit_event_names_the_failing_guards():
    torchferro.config.recompile_limit = 1
    f = torchferro.compile(scaled, backend="eager")
    with recorded() as events, pytest.warns(RuntimeWarning, match="recompile limit"):
        f(torch.ones(2), 2)
        f(torch.ones(3), 2)
    (e,) = [e for e in events if e["kind"] == "recompile_limit"]
    assert e["limit"] == 1
    assert [(f["kind"], f["source"], f["mismatch"]) for f in e["failures"]] == [
        (
            "TENSOR_MATCH",
            "L['x']",
            {"property": "size", "index": 0, "expected": 2, "actual": 3},
        )
    ]
    assert e["message"].endswith(f"\n    - 0/0: {e['failures'][0]['reason']}")
