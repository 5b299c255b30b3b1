"""The Rust `tracing` → Python `logging` bridge, and the compile-phase timings (`perf`).

Rust logs only through `tracing`; every event reaches ``logging.getLogger("torchferro.<name>")``
once, so the configuration of the ``torchferro`` logger tree (levels, handlers, ``propagate``,
filters) decides what is shown."""

from __future__ import annotations

import contextlib
import logging
import os
import random
import re
import sys
import threading

import pytest
import torch
import torchferro
from torchferro import _logging

HERE = os.path.abspath(__file__)
MS = r"\d+\.\d{3} ms"
INDUCTOR_PHASES = [
    "trace",
    "guard_build",
    "lowering",
    "scheduling",
    "codegen",
    "c_compile",
    "cache_load",
    "backend",
    "bytecode",
]


def add_one(x):
    return x + 1


def times_two(x):
    return x * 2


def printing(x):
    y = x * 2
    print("value:", y.shape)
    return y + 1


class Records(logging.Handler):
    def __init__(self, level=logging.NOTSET):
        super().__init__(level)
        self.records: list[logging.LogRecord] = []

    def emit(self, record):
        self.records.append(record)

    def of(self, name: str) -> list[tuple[int, str]]:
        return [(r.levelno, r.getMessage()) for r in self.records if r.name == name]


@contextlib.contextmanager
def configured(logger: str, level: int, handler: logging.Handler | None = None):
    """``handler`` on ``logger`` at ``level``, undone afterwards."""
    lg = logging.getLogger(logger)
    handler = handler or Records()
    old = lg.level
    lg.setLevel(level)
    lg.addHandler(handler)
    try:
        yield handler
    finally:
        lg.removeHandler(handler)
        lg.setLevel(old)


@pytest.fixture(autouse=True)
def _clean():
    torchferro.compiler.reset()
    torchferro.config.recompile_limit = 8
    yield
    torchferro.set_logs()
    torchferro.config.recompile_limit = 8
    for name in ("torchferro.recompiles", "torchferro.graph_breaks"):
        lg = logging.getLogger(name)
        lg.setLevel(logging.NOTSET)
        lg.propagate = True


def recompile_msg(fn, reason: str) -> str:
    code = fn.__code__
    return (
        f"Recompiling function {code.co_name} in {code.co_filename}:{code.co_firstlineno}\n"
        f"    triggered by the following guard failure(s):\n    - 0/0: {reason}"
    )


SIZE_2_TO_3 = "tensor 'x' size mismatch at index 0. expected 2, actual 3"


def recompile_add_one():
    compiled = torchferro.compile(add_one, backend="eager")
    for n in (2, 3):
        x = torch.randn(n)
        assert torch.equal(compiled(x), x + 1)


# ---------------------------------------------------------------------------------------------
# The bridge.


def test_recompile_break_and_warning_reach_the_torchferro_logger_once():
    def failing_backend(gm, example_inputs):
        raise RuntimeError("backend says no")

    with configured("torchferro", logging.DEBUG) as rec:
        recompile_add_one()
        torchferro.compile(printing, backend="eager")(torch.ones(3))
        x = torch.ones(2)
        assert torch.equal(
            torchferro.compile(times_two, backend=failing_backend)(x), x * 2
        )
    code = printing.__code__
    at = f"{code.co_filename}:{code.co_firstlineno + 2}"
    assert rec.of("torchferro.recompiles") == [
        (logging.INFO, recompile_msg(add_one, SIZE_2_TO_3))
    ]
    assert rec.of("torchferro.graph_breaks") == [
        (
            logging.INFO,
            f"Graph break in function printing: call to builtins.print (at {at})",
        )
    ]
    first = add_one.__code__.co_firstlineno
    assert rec.of("torchferro") == [
        (
            logging.WARNING,
            (
                f"torchferro failed while compiling times_two ({HERE}:{times_two.__code__.co_firstlineno}): "
                "RuntimeError: backend says no; running it eagerly"
            ),
        )
    ]
    # DEBUG records come through with DEBUG's number: the captured graph of each compile.
    graphs = rec.of("torchferro.graph")
    assert [level for level, _ in graphs] == [logging.DEBUG] * len(graphs)
    assert graphs[0][1].startswith(f"Compiled add_one ({HERE}:{first}) as ")
    # Nothing arrives twice.
    keys = [(r.name, r.levelno, r.getMessage()) for r in rec.records]
    assert len(keys) == len(set(keys)), keys


def test_the_recompile_limit_is_a_warning_record_and_a_python_warning():
    torchferro.config.recompile_limit = 1
    compiled = torchferro.compile(add_one, backend="eager")
    with configured("torchferro", logging.INFO) as rec:
        compiled(torch.randn(2))
        x = torch.randn(3)
        with pytest.warns(RuntimeWarning, match="hit the recompile limit"):
            out = compiled(x)
        assert torch.equal(out, x + 1)
    code = add_one.__code__
    assert rec.of("torchferro.recompiles") == [
        (
            logging.WARNING,
            (
                f"torchferro hit the recompile limit (1) for function add_one in {code.co_filename}:"
                f"{code.co_firstlineno}; it runs eagerly from now on. Last guard failure(s):\n"
                f"    - 0/0: {SIZE_2_TO_3}"
            ),
        )
    ]


def test_logger_levels_decide():
    # WARNING on the tree silences INFO records.
    with configured("torchferro", logging.WARNING) as rec:
        recompile_add_one()
    assert rec.records == []
    # A child's own level wins over its parent's.
    torchferro.compiler.reset()
    logging.getLogger("torchferro.recompiles").setLevel(logging.WARNING)
    with configured("torchferro", logging.INFO) as rec:
        recompile_add_one()
        torchferro.compile(printing, backend="eager")(torch.ones(3))
    assert rec.of("torchferro.recompiles") == []
    assert len(rec.of("torchferro.graph_breaks")) == 1
    # And lowering it again is seen at once (nothing is cached on the Rust side).
    torchferro.compiler.reset()
    logging.getLogger("torchferro.recompiles").setLevel(logging.INFO)
    with configured("torchferro", logging.WARNING) as rec:
        recompile_add_one()
    assert rec.of("torchferro.recompiles") == [
        (logging.INFO, recompile_msg(add_one, SIZE_2_TO_3))
    ]


def test_logging_disable_is_honoured():
    logging.disable(logging.INFO)
    try:
        with configured("torchferro", logging.DEBUG) as rec:
            recompile_add_one()
    finally:
        logging.disable(logging.NOTSET)
    assert rec.of("torchferro.recompiles") == []


def test_propagate_false_on_a_child_is_honoured():
    child = logging.getLogger("torchferro.recompiles")
    child.propagate = False
    with (
        configured("torchferro", logging.INFO) as tree,
        configured("torchferro.recompiles", logging.INFO) as own,
    ):
        recompile_add_one()
    assert tree.of("torchferro.recompiles") == []
    assert own.of("torchferro.recompiles") == [
        (logging.INFO, recompile_msg(add_one, SIZE_2_TO_3))
    ]


def test_filters_on_a_child_are_honoured():
    child = logging.getLogger("torchferro.graph_breaks")
    drop = logging.Filter("nothing.matches")
    child.addFilter(drop)
    try:
        with configured("torchferro", logging.INFO) as rec:
            recompile_add_one()
            torchferro.compile(printing, backend="eager")(torch.ones(3))
    finally:
        child.removeFilter(drop)
    assert rec.of("torchferro.graph_breaks") == []
    assert len(rec.of("torchferro.recompiles")) == 1


def test_records_from_another_thread():
    out: list = []

    def work():
        try:
            recompile_add_one()
        except BaseException as e:  # noqa: BLE001 - reported below
            out.append(e)

    with configured("torchferro", logging.INFO) as rec:
        t = threading.Thread(target=work, name="compiler-thread")
        t.start()
        t.join()
    assert out == []
    (record,) = [r for r in rec.records if r.name == "torchferro.recompiles"]
    assert record.threadName == "compiler-thread"
    assert record.getMessage() == recompile_msg(add_one, SIZE_2_TO_3)


class Raising(logging.Handler):
    def emit(self, record):
        raise RuntimeError(f"handler broke on {record.name}")


def test_a_handler_that_raises_breaks_nothing(monkeypatch):
    seen: list = []
    monkeypatch.setattr(sys, "unraisablehook", seen.append)
    with (
        configured("torchferro.recompiles", logging.INFO, Raising()),
        configured("torchferro", logging.INFO) as rec,
    ):
        for _ in range(3):
            torchferro.compiler.reset()
            recompile_add_one()
    # Each failure is reported as an unraisable error naming the logger, and compiling carried
    # on: the other loggers' records still arrived (the failed one stops at the raise).
    assert rec.of("torchferro.recompiles") == []
    assert len(rec.of("torchferro.perf")) == 6
    assert len(seen) == 3
    for u in seen:
        assert isinstance(u.exc_value, RuntimeError)
        assert str(u.exc_value) == "handler broke on torchferro.recompiles"
        assert u.object is logging.getLogger("torchferro.recompiles")
    assert sys.exc_info() == (None, None, None)
    # Without the raising handler, records flow again.
    torchferro.compiler.reset()
    with configured("torchferro", logging.INFO) as rec:
        recompile_add_one()
    assert len(rec.of("torchferro.recompiles")) == 1


def test_a_handler_that_compiles_does_not_recurse():
    # A handler that itself runs compiled code: its compiles log nothing back into the handler.
    inner = torchferro.compile(lambda t: t * 3, backend="eager")

    class Compiling(Records):
        def emit(self, record):
            super().emit(record)
            x = torch.randn(len(self.records) + 1)
            assert torch.equal(inner(x), x * 3)

    with configured("torchferro", logging.INFO, Compiling()) as rec:
        recompile_add_one()
    assert rec.of("torchferro.recompiles") == [
        (logging.INFO, recompile_msg(add_one, SIZE_2_TO_3))
    ]


def test_artifacts_replace_the_plain_records_once():
    spec = "recompiles,graph_breaks,perf"
    with configured("torchferro", logging.NOTSET) as rec:
        torchferro.set_logs(spec)
        recompile_add_one()
        torchferro.compile(printing, backend="eager")(torch.ones(3))
    assert len(rec.of("torchferro.recompiles")) == 1
    assert len(rec.of("torchferro.graph_breaks")) == 1
    # add_one twice, printing's two graphs
    assert len(rec.of("torchferro.perf")) == 4
    assert all(getattr(r, "torchferro_artifact", False) for r in rec.records)


# ---------------------------------------------------------------------------------------------
# perf: the phases of each compile.


def unique_scaler():
    """A function whose generated C is new to this process, so that its kernels are built."""
    k = round(random.uniform(1.0, 2.0), 6)

    def scaled_relu(x):
        return (x * k).relu() + 0.5

    return scaled_relu, k


def perf_phases(message: str) -> list[str]:
    m = re.fullmatch(r"Compile time of .*?: (.*), total " + MS, message, re.DOTALL)
    assert m, message
    phases = []
    for part in m.group(1).split(", "):
        name, value = part.split(" ", 1)
        assert re.fullmatch(MS, value), part
        phases.append(name)
    return phases


def test_perf_names_every_inductor_phase_cold_then_warm(tmp_path, monkeypatch):
    monkeypatch.setenv("TORCHFERRO_CACHE_DIR", str(tmp_path))
    fn, k = unique_scaler()
    x = torch.randn(64)
    with configured("torchferro.perf", logging.INFO) as rec:
        assert torch.allclose(torchferro.compile(fn)(x), (x * k).relu() + 0.5)
        torchferro.compiler.reset()
        assert torch.allclose(torchferro.compile(fn)(x), (x * k).relu() + 0.5)
    cold, warm = (msg for _, msg in rec.of("torchferro.perf"))
    assert perf_phases(cold) == INDUCTOR_PHASES
    assert perf_phases(warm) == [p for p in INDUCTOR_PHASES if p != "c_compile"]


def test_perf_artifact_and_explain_show_the_inductor_phases(tmp_path, monkeypatch):
    monkeypatch.setenv("TORCHFERRO_CACHE_DIR", str(tmp_path))
    fn, _ = unique_scaler()
    x = torch.randn(64)
    with configured("torchferro", logging.NOTSET) as rec:
        torchferro.set_logs("perf")
        out = torchferro.explain(fn, backend="inductor")(x)
        torchferro.set_logs()
    (msg,) = [m for _, m in rec.of("torchferro.perf")]
    code = fn.__code__
    assert msg.startswith(
        f"Compile time of scaled_relu (compile {out.compiles[0].compile_id}) in "
        f"{code.co_filename}:{code.co_firstlineno}: trace "
    )
    assert perf_phases(msg) == INDUCTOR_PHASES
    (times,) = out.compile_times.values()
    assert list(times) == INDUCTOR_PHASES
    assert all(v >= 0 for v in times.values())
    assert "Compile Times:\n  " in str(out) and " c_compile " in str(out)
    # Warm: the kernels load from the cache, the compiler does not run.
    torchferro.compiler.reset()
    warm = torchferro.explain(fn, backend="inductor")(x)
    (times,) = warm.compile_times.values()
    assert list(times) == [p for p in INDUCTOR_PHASES if p != "c_compile"]


def test_explain_with_a_callable_backend_still_records_graph_modules():
    calls = []

    def backend(gm, example_inputs):
        calls.append(len(example_inputs))
        return gm.forward

    out = torchferro.explain(add_one, backend=backend)(torch.ones(2))
    assert calls == [1] and len(out.graph_modules) == 1
    (times,) = out.compile_times.values()
    assert list(times) == ["trace", "guard_build", "backend", "bytecode"]


def test_parse_spec_still_knows_perf():
    assert _logging.parse_spec("+perf") == {"perf": logging.DEBUG}


def test_a_cache_hit_asks_logging_nothing(monkeypatch):
    compiled = torchferro.compile(add_one, backend="eager")
    x = torch.randn(4)
    compiled(x)
    asked: list = []
    original = logging.Logger.isEnabledFor

    def counting(self, level):
        asked.append((self.name, level))
        return original(self, level)

    monkeypatch.setattr(logging.Logger, "isEnabledFor", counting)
    with configured("torchferro", logging.DEBUG) as rec:
        for _ in range(50):
            assert torch.equal(compiled(x), x + 1)
        assert asked == [] and rec.records == []
        # A recompile does ask, once per event, before formatting anything.
        compiled(torch.randn(5))
    assert ("torchferro.recompiles", logging.INFO) in asked
    assert len(rec.of("torchferro.recompiles")) == 1
