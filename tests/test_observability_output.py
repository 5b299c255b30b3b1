"""Observability, continued (the messages and artifacts are in ``test_observability.py``, whose
programs and helpers this file shares): ``set_logs`` and ``TORCHFERRO_LOGS``,
``torchferro.explain``, trace files and the HTML report (checked in headless Chromium when it is
installed)."""

from __future__ import annotations

import inspect
import json
import logging
import os
import re
import shutil
import subprocess
import sys
import textwrap

import pytest
import torch
import torchferro
from torchferro import _events, _logging

from test_observability import (  # noqa: F401 (the autouse fixture)
    HERE,
    Scaler,
    _at,
    _clean_state,
    _line,
    _loc,
    add_one,
    inner,
    middle,
    outer,
    printing,
    recompile_msg,
)


# ---------------------------------------------------------------------------------------------
# set_logs and TORCHFERRO_LOGS.


def test_parse_spec():
    assert _logging.parse_spec("recompiles, +guards") == {
        "recompiles": logging.INFO,
        "guards": logging.DEBUG,
    }
    assert _logging.parse_spec("all") == {
        name: logging.INFO for name in _logging.ARTIFACTS
    }
    assert _logging.parse_spec("+all,recompiles")["recompiles"] == logging.DEBUG
    assert _logging.parse_spec("+torchferro") == {"torchferro": logging.DEBUG}
    with pytest.raises(
        ValueError,
        match="unknown torchferro log name 'recompile'; valid names: recompiles, guards",
    ):
        _logging.parse_spec("recompile")


def test_set_logs_installs_one_handler_and_restores_the_logger():
    root = logging.getLogger("torchferro")
    handlers, propagate, level = list(root.handlers), root.propagate, root.level
    torchferro.set_logs(recompiles=True, guards=logging.DEBUG)
    assert _logging.get_logs() == {"recompiles": logging.INFO, "guards": logging.DEBUG}
    assert root.propagate is False and len(root.handlers) == len(handlers) + 1
    assert logging.getLogger("torchferro.guards").level == logging.DEBUG
    assert _events.active()
    torchferro.set_logs("graph_breaks")  # replaces, does not add
    assert _logging.get_logs() == {"graph_breaks": logging.INFO}
    assert len(root.handlers) == len(handlers) + 1
    assert logging.getLogger("torchferro.recompiles").level == logging.NOTSET
    torchferro.set_logs()
    assert (
        root.handlers == handlers
        and root.propagate == propagate
        and root.level == level
    )
    assert not _events.active()
    with pytest.raises(TypeError, match="unknown artifact 'nope'"):
        torchferro.set_logs(nope=True)


def test_artifacts_off_leave_plain_records_untouched(caplog):
    # Without set_logs nothing is installed: the tracer's records reach the root logger as they are.
    caplog.set_level(logging.INFO, logger="torchferro")
    compiled = torchferro.compile(add_one, backend="eager")
    compiled(torch.randn(2))
    compiled(torch.randn(3))
    assert [
        r.getMessage() for r in caplog.records if r.name == "torchferro.recompiles"
    ] == [
        recompile_msg(
            add_one,
            ("0/0", "tensor 'x' size mismatch at index 0. expected 2, actual 3"),
        )
    ]


def test_set_logs_prints_to_stderr(capsys):
    torchferro.set_logs("recompiles")
    compiled = torchferro.compile(add_one, backend="eager")
    compiled(torch.randn(2))
    compiled(torch.randn(3))
    err = capsys.readouterr().err
    assert "torchferro.recompiles: [INFO] Recompiling function add_one in " in err
    assert (
        f"        first used at {_at(add_one, 'return x + 1')}\n            return x + 1\n"
        in err
    )


SCRIPT = """
import torch, torchferro

def f(x):
    y = x * 2
    print("hi")
    return y + 1

c = torchferro.compile(f, backend="eager")
c(torch.randn(2))
c(torch.randn(3))
"""


def _run_script(
    tmp_path, env: dict, script: str = SCRIPT
) -> subprocess.CompletedProcess:
    path = tmp_path / "prog.py"
    path.write_text(textwrap.dedent(script))
    full = {**os.environ, **env}
    full.pop("TORCHFERRO_LOGS", None) if "TORCHFERRO_LOGS" not in env else None
    return subprocess.run(
        [sys.executable, str(path)],
        check=False,
        capture_output=True,
        text=True,
        env=full,
        timeout=300,
        cwd=tmp_path,
    )


def _strip_prefixes(err: str) -> str:
    """stderr without the ``[hh:mm:ss.mmm] `` prefix of each record's first line."""

    return re.sub(r"^\[\d\d:\d\d:\d\d\.\d{3}\] ", "", err, flags=re.MULTILINE)


def test_torchferro_logs_environment_variable(tmp_path):
    done = _run_script(tmp_path, {"TORCHFERRO_LOGS": "recompiles,graph_breaks"})
    assert done.returncode == 0, done.stderr
    prog = str(tmp_path / "prog.py")
    err = _strip_prefixes(done.stderr)
    brk = f'torchferro.graph_breaks: [INFO] Graph break in function f: call to builtins.print (at {prog}:6)\n    f at {prog}:6\n        print("hi")\n'
    assert err.count(brk) == 2  # once per compile of f: the second call recompiles it
    assert (
        f"torchferro.recompiles: [INFO] Recompiling function f in {prog}:4\n"
        "    triggered by the following guard failure(s):\n"
        "    - 0/0: tensor 'x' size mismatch at index 0. expected 2, actual 3\n"
        f"        first used at {prog}:5\n"
        "            y = x * 2\n"
    ) in err
    assert done.stdout == "hi\nhi\n"


def test_torchferro_logs_all_and_a_bad_name(monkeypatch, capsys):
    monkeypatch.setenv("TORCHFERRO_LOGS", "all")
    _logging.init_from_env()
    # The `dynamic` artifact logs what automatic dynamic (off by default for now) decides.
    monkeypatch.setattr(torchferro.config, "automatic_dynamic_shapes", True)
    compiled = torchferro.compile(printing, backend="eager")
    compiled(torch.ones(2))
    compiled(torch.ones(3))
    err = capsys.readouterr().err
    for artifact in _logging.ARTIFACTS:
        assert f"torchferro.{artifact}: [INFO] " in err, artifact
    torchferro.set_logs()
    monkeypatch.setenv("TORCHFERRO_LOGS", "recompiles,bogus")
    with pytest.warns(
        RuntimeWarning,
        match="TORCHFERRO_LOGS ignored: unknown torchferro log name 'bogus'",
    ):
        _logging.init_from_env()
    assert _logging.get_logs() == {}


def test_no_torchferro_logs_means_silence(tmp_path):
    done = _run_script(tmp_path, {})
    assert done.returncode == 0 and done.stderr == ""


# ---------------------------------------------------------------------------------------------
# explain.


def test_explain_fields_for_a_graph_break(capsys):
    out = torchferro.explain(printing)(torch.ones(2, 3))
    at = _at(printing, 'print("value:"')
    assert out.graph_count == 2
    assert out.graph_break_count == 1
    assert out.op_count == 2
    assert out.ops_per_graph == [["operator.mul"], ["operator.add"]]
    assert out.graphs == [
        "def forward(self, l_x):\n    # l_x: f32[2, 3]\n    mul = l_x * 2  # f32[2, 3]\n    return (l_x, mul)\n",
        "def forward(self, l_y):\n    # l_y: f32[2, 3]\n    add = l_y + 1  # f32[2, 3]\n    return (add,)\n",
    ]
    assert [type(gm).__name__ for gm in out.graph_modules] == [
        "GraphModule",
        "GraphModule",
    ]
    (b,) = out.break_reasons
    assert (b.reason, b.function, b.filename, b.lineno) == (
        "call to builtins.print",
        "printing",
        HERE,
        _line(printing, 'print("value:"'),
    )
    assert b.user_stack == [f"printing at {at}"]
    assert str(b) == f"call to builtins.print (at {at})"
    assert b.line == 'print("value:", y.shape)'
    meta = "torch.float32, cpu, size=[2, 3], stride=[3, 1], requires_grad=False"
    assert (
        f"TENSOR_MATCH L['x']: {meta}  # {_at(printing, 'y = x * 2')}" in out.out_guards
    )
    assert (
        f"TENSOR_MATCH L['y']: {meta}  # {_at(printing, 'return y + 1')}"
        in out.out_guards
    )
    assert list(out.compile_times) == ["0/0", "1/0"]
    assert all(
        list(t) == ["trace", "guard_build", "backend", "bytecode"]
        for t in out.compile_times.values()
    )
    text = str(out)
    assert text.startswith(
        "Graph Count: 2\nGraph Break Count: 1\nOp Count: 2\nBreak Reasons:\n  Break Reason 1:\n"
        f"    Reason: call to builtins.print\n    User Stack:\n      printing at {at}\n"
        '        print("value:", y.shape)\n'
        "Ops per Graph:\n  Ops 1:\n    operator.mul\n  Ops 2:\n    operator.add\nOut Guards:\n  Guard 1:\n"
        "    GRAD_MODE torch.is_grad_enabled() == True\n"
    )
    assert "\nCompile Times:\n  0/0 printing: trace " in text
    assert capsys.readouterr().out == "value: torch.Size([2, 3])\n"


def test_explain_counts_a_nested_break_once(capsys):
    out = torchferro.explain(outer)(torch.ones(3))
    (b,) = out.break_reasons
    assert b.function == "inner" and b.lineno == _line(inner, 'print("inner")')
    assert b.user_stack == [
        f"inner at {_at(inner, 'print(')}",
        f"middle at {_at(middle, 'return inner')}",
        f"outer at {_at(outer, 'return middle')}",
    ]
    assert out.graph_break_count == 1
    assert out.ops_per_graph == [
        ["operator.mul"],
        ["operator.add"],
        ["operator.mul"],
        ["operator.sub"],
    ]
    assert out.graph_count == 4
    capsys.readouterr()


def test_explain_without_breaks_on_modules_and_compiled_functions():
    out = torchferro.explain(Scaler())(torch.randn(2, 3))
    assert (out.graph_count, out.graph_break_count, out.break_reasons) == (1, 0, [])
    assert out.ops_per_graph == [["torch.linear", "operator.mul", "operator.add"]]
    compiled = torchferro.compile(add_one, backend="eager")
    out = torchferro.explain(compiled)(torch.randn(4))
    assert out.ops_per_graph == [["operator.add"]]
    assert (
        torchferro.explain(add_one, torch.randn(4)).graph_count == 1
    )  # torch's older form


def test_explain_resets_nothing_and_can_run_again():
    compiled = torchferro.compile(add_one, backend="eager")
    compiled(torch.randn(4))
    first = torchferro.explain(add_one)(torch.randn(4))
    second = torchferro.explain(add_one)(torch.randn(4))
    assert first.graphs == second.graphs and first.graph_count == 1
    # The user's entry is still there, next to explain's.
    assert "0/0" in [
        e["compile_id"] for e in torchferro.compiler.cache_entries(add_one)
    ]


def test_explain_unsubscribes_on_error():
    def bad(x):
        return x + torch.ones(5)

    with pytest.raises(RuntimeError):
        torchferro.explain(bad)(torch.ones(3))
    assert not _events.active()


# ---------------------------------------------------------------------------------------------
# Trace files.


def _records(path) -> list[dict]:
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def test_trace_dir_writes_json_lines(tmp_path, capsys):
    path = torchferro.set_trace_dir(tmp_path / "trace")
    compiled = torchferro.compile(printing, backend="eager")
    compiled(torch.ones(2))
    compiled(torch.ones(3))
    torchferro.set_trace_dir(None)
    capsys.readouterr()
    recs = _records(path)
    # The resume function is made once per resume point, so the second input recompiles it
    # rather than tracing a new one.
    assert [r["kind"] for r in recs] == [
        "start",
        "source",
        "compile",
        "graph_break",
        "compile",
        "recompile",
        "compile",
        "graph_break",
        "recompile",
        "compile",
    ]
    assert [r["seq"] for r in recs] == list(range(1, len(recs) + 1))
    source = recs[1]
    assert (source["function"], source["start"]) == (
        "printing",
        printing.__code__.co_firstlineno,
    )
    assert source["lines"] == inspect.getsource(printing).rstrip("\n").split("\n")
    c = recs[2]
    assert c["compile_id"] == "0/0" and c["ops"] == ["operator.mul"]
    assert c["graph_dot"].startswith("digraph fx {")
    assert c["graph_code"].startswith("def forward(self, l_x):")
    assert c["break"] == {
        "reason": "call to builtins.print",
        "location": _loc(printing, 'print("value:"'),
        "location_text": 'print("value:", y.shape)',
        "stack": [],
    }
    assert c["guards"][1] == {
        "text": f"TENSOR_MATCH L['x']: torch.float32, cpu, size=[2], stride=[1], requires_grad=False  # {_at(printing, 'y = x * 2')}",
        "kind": "TENSOR_MATCH",
        "source": "L['x']",
        "origin": _loc(printing, "y = x * 2"),
        "origin_text": "y = x * 2",
    }
    assert list(c["timings"]) == ["trace", "guard_build", "backend", "bytecode"]
    assert "BINARY_OP" in c["original_bytecode"] and "CompiledGraph" in c["bytecode"]
    assert recs[4]["function"] == "torchferro_resume_in_printing_at_" + str(
        _line(printing, 'print("value:"')
    )
    assert recs[4]["original_bytecode"] is None
    r = recs[5]
    assert r["failures"] == [
        {
            "compile_id": "0/0",
            "kind": "TENSOR_MATCH",
            "source": "L['x']",
            "expr": "x",
            "reason": "tensor 'x' size mismatch at index 0. expected 2, actual 3",
            "origin": _loc(printing, "y = x * 2"),
            "mismatch": {"property": "size", "index": 0, "expected": 2, "actual": 3},
            "origin_text": "y = x * 2",
        }
    ]
    assert r["message"] == recompile_msg(
        printing, ("0/0", "tensor 'x' size mismatch at index 0. expected 2, actual 3")
    )


TRACE_SCRIPT = """
import torch, torchferro
torchferro.config.recompile_limit = 2

def helper(t):
    print("checking", t.shape)
    return t * 2

def step(x, y):
    z = x @ y
    z = helper(z)
    return z.relu().sum(-1)

class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(4, 4)

    def forward(self, x):
        h = torch.relu(self.fc(x))
        if h.sum() > 0:
            h = h + 1
        return h.softmax(-1)

# dynamic=False: one compile per size, so the recompile limit is hit (automatic dynamic would
# compile once for all sizes after the second).
f = torchferro.compile(step, backend="eager", dynamic=False)
for n in (2, 3, 5, 7):
    f(torch.randn(n, 4), torch.randn(4, 4))
torchferro.compile(Net(), backend="eager")(torch.randn(3, 4))
"""


@pytest.fixture(scope="module")
def trace_dir(tmp_path_factory):
    """A trace directory written by a separate process through TORCHFERRO_TRACE_DIR."""
    tmp = tmp_path_factory.mktemp("observability")
    (tmp / "prog.py").write_text(TRACE_SCRIPT)
    env = {k: v for k, v in os.environ.items() if k != "TORCHFERRO_LOGS"}
    env["TORCHFERRO_TRACE_DIR"] = str(tmp / "trace")
    done = subprocess.run(
        [sys.executable, str(tmp / "prog.py")],
        check=False,
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return tmp / "trace"


def test_trace_dir_from_the_environment(trace_dir):
    (path,) = list(trace_dir.glob("*.jsonl"))
    recs = _records(path)
    kinds = [r["kind"] for r in recs]
    assert kinds[0] == "start" and kinds.count("recompile") >= 2
    warnings = [r for r in recs if r["kind"] == "warning"]
    assert [w["logger"] for w in warnings] == ["torchferro.recompiles"] * 2
    assert warnings[0]["message"].startswith(
        "torchferro hit the recompile limit (2) for function step in "
    )
    assert warnings[1]["message"].startswith(
        "torchferro hit the recompile limit (2) for function helper in "
    )
    nested = next(
        r for r in recs if r["kind"] == "graph_break" and r["function"] == "step"
    )
    assert [f["function"] for f in nested["break"]["stack"]] == ["helper", "step"]
    assert nested["break"]["stack"][0]["text"] == 'print("checking", t.shape)'


# ---------------------------------------------------------------------------------------------
# The HTML report.


def test_report_page(trace_dir, tmp_path):
    out = tmp_path / "report.html"
    from torchferro.report import write_report

    assert write_report(str(trace_dir), str(out), dot_path=None) == str(out)
    page = out.read_text()
    for text in (
        "step",
        "helper",
        "forward",
        "call to builtins.print",
        "data-dependent control flow",
        "TENSOR_MATCH",
        "Recompiled because these guards failed",
    ):
        assert text in page, text
    # Without Graphviz the graphs are shown as DOT text, with a note that says why.
    assert (
        "digraph fx {" in page
        and "Graphviz <code>dot</code> was not found" in page
        and "<svg" not in page
    )
    assert page.count("<details") > 10 and 'nav class="toc"' in page


def test_report_command(trace_dir, tmp_path):
    out = tmp_path / "page.html"
    done = subprocess.run(
        [sys.executable, "-m", "torchferro.report", str(trace_dir), "-o", str(out)],
        check=False,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(out)
    page = out.read_text()
    if shutil.which("dot"):
        assert "<svg" in page and "digraph fx {" not in page
    else:
        assert "digraph fx {" in page
    done = subprocess.run(
        [sys.executable, "-m", "torchferro.report", str(tmp_path / "missing")],
        check=False,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2 and "no such file or directory" in done.stderr


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def _chromium(*args) -> subprocess.CompletedProcess:
    return subprocess.run(
        [
            CHROMIUM,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--disable-dev-shm-usage",
            *args,
        ],
        check=False,
        capture_output=True,
        text=True,
        timeout=180,
    )


@pytest.mark.skipif(
    CHROMIUM is None,
    reason="headless Chromium is not installed (apt-get install -y chromium)",
)
def test_report_in_a_browser(trace_dir, tmp_path):
    from torchferro.report import write_report

    page = write_report(str(trace_dir), str(tmp_path / "report.html"))
    url = "file://" + page
    dom = _chromium("--dump-dom", url)
    assert dom.returncode == 0, dom.stderr
    html = dom.stdout
    for text in (
        "torchferro compile report",
        "step",
        "helper",
        "forward",
        "call to builtins.print",
        "inlined call stack",
        "TENSOR_MATCH",
    ):
        assert text in html, text
    if shutil.which("dot"):
        assert html.count("<svg") >= 3  # one picture per graph that was drawn
        assert ">matmul<" in html or "matmul</text>" in html
    else:
        assert "digraph fx {" in html
    shot = tmp_path / "report.png"
    done = _chromium(f"--screenshot={shot}", "--window-size=1400,1800", url)
    assert done.returncode == 0, done.stderr
    data = shot.read_bytes()
    assert (
        data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 50_000
    )  # a real picture, not a blank page
