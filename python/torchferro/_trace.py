"""Structured trace files: ``TORCHFERRO_TRACE_DIR=dir`` (read at import) or
``torchferro.set_trace_dir(dir)`` writes one JSON object per line for every compile event of this
process to ``dir/torchferro_trace_<pid>_<time>.jsonl``; ``python -m torchferro.report dir`` turns
the directory into an HTML page.

Records (each has ``kind``, ``seq`` and ``time``):

- ``start``: ``pid``, ``argv``, ``python``, ``torch``.
- ``source``: ``filename``, ``firstlineno``, ``function``, ``lines`` (the function's source),
  written once per function before its first compile.
A location is ``{"filename", "lineno"}`` (or null), as in the tracer's events
(``torchferro._events``).

- ``compile``: ``function``, ``filename``, ``firstlineno``, ``compile_id``, ``graph_code``,
  ``graph_dot``, ``ops``, ``guards`` (each ``text``, the log line; ``kind``; ``source``;
  ``origin``, a location; ``origin_text``), ``break_reason`` (text) and ``break`` (as below),
  ``timings``, ``bytecode`` (the transformed code, ``dis`` text), ``original_bytecode``,
  ``output_code``.
- ``recompile``: ``message`` and ``failures`` (each ``compile_id``, ``kind``, ``source``,
  ``expr``, ``reason``, ``origin``, ``mismatch`` as in the event, and ``origin_text``).
- ``graph_break`` and ``eager``: ``reason`` (text) and ``break``: ``reason``, ``location``,
  ``location_text``, ``stack`` (inlined calls, innermost first: ``function``, ``location``,
  ``text``; empty when the break is in the compiled frame itself).
- ``warning``: ``logger``, ``message`` (torchferro's warnings, such as the recompile limit).
"""

from __future__ import annotations

import atexit
import json
import logging
import os
import sys
import threading
import time

from . import _events, _sources


def _location(location: dict | None) -> dict | None:
    if not location:
        return None
    return {"filename": location["filename"], "lineno": location["lineno"]}


def _break(brk: dict | None) -> dict | None:
    if not brk:
        return None
    frames = brk.get("frames") or []
    return {
        "reason": brk["reason"],
        "location": _location(brk["location"]),
        "location_text": _sources.line_text(brk["location"]),
        "stack": [
            {
                "function": f["function"],
                "location": _location(f),
                "text": _sources.line_text(f),
            }
            for f in (frames if len(frames) > 1 else [])
        ],
    }


class _WarningHandler(logging.Handler):
    def __init__(self, writer: TraceWriter):
        super().__init__(logging.WARNING)
        self.writer = writer

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self.writer.write(
                {
                    "kind": "warning",
                    "logger": record.name,
                    "message": record.getMessage(),
                }
            )
        except Exception:  # noqa: BLE001 - logging reports its own errors
            self.handleError(record)


class TraceWriter:
    """An event listener that appends each event, made JSON-ready, to one file."""

    def __init__(self, directory: str | os.PathLike):
        os.makedirs(directory, exist_ok=True)
        stamp = time.strftime("%Y%m%d-%H%M%S")
        self.path = os.path.join(
            os.fspath(directory),
            f"torchferro_trace_{os.getpid()}_{stamp}_{id(self) % 10000:04d}.jsonl",
        )
        self._file = open(self.path, "a", encoding="utf-8")  # noqa: SIM115 - open until close()
        self._lock = threading.Lock()
        self._seq = 0
        self._sources: set[tuple[str, int]] = set()
        self._handler = _WarningHandler(self)
        torch = sys.modules.get("torch")
        self.write(
            {
                "kind": "start",
                "pid": os.getpid(),
                "argv": list(sys.argv),
                "python": sys.version.split()[0],
                "torch": getattr(torch, "__version__", None),
            }
        )

    def start(self) -> None:
        _events.subscribe(self)
        logging.getLogger("torchferro").addHandler(self._handler)

    def close(self) -> None:
        _events.unsubscribe(self)
        logging.getLogger("torchferro").removeHandler(self._handler)
        with self._lock:
            if not self._file.closed:
                self._file.close()

    def write(self, record: dict) -> None:
        with self._lock:
            if self._file.closed:
                return
            self._seq += 1
            out = {
                "kind": record["kind"],
                "seq": self._seq,
                "time": time.time(),
                **record,
            }
            self._file.write(json.dumps(out, default=str) + "\n")
            self._file.flush()

    def __call__(self, event: dict) -> None:
        try:
            self.write(self._record(event))
        except Exception as e:  # noqa: BLE001 - tracing must never break the user's program
            logging.getLogger("torchferro").warning(
                "torchferro could not write a trace record: %r", e
            )

    def _record(self, event: dict) -> dict:
        kind = event["kind"]
        base = {k: event[k] for k in ("kind", "function", "filename", "firstlineno")}
        key = (event["filename"], event["firstlineno"])
        if kind == "compile" and key not in self._sources:
            self._sources.add(key)
            start, lines = _sources.function_source(*key)
            self.write({**base, "kind": "source", "start": start, "lines": lines})
        if kind == "compile":
            original = _sources.find_code(
                event["filename"], event["firstlineno"], event["function"]
            )
            code = event.get("transformed_code")
            guards = []
            lines = event.get("guards") or []
            for line, g in zip(lines, event.get("guard_records") or []):
                guards.append(
                    {
                        "text": line,
                        "kind": g["kind"],
                        "source": g["source"],
                        "origin": g["origin"],
                        "origin_text": _sources.line_text(g["origin"]),
                    }
                )
            return {
                **base,
                "compile_id": event["compile_id"],
                "graph_code": event.get("graph_code"),
                "graph_dot": event.get("graph_dot"),
                "ops": list(event.get("ops") or []),
                "guards": guards,
                "break_reason": event.get("break_reason"),
                "break": _break(event.get("break")),
                "timings": dict(event.get("timings") or {}),
                "bytecode": _sources.disassemble(code) if code is not None else None,
                "original_bytecode": _sources.disassemble(original)
                if original is not None
                else None,
                "output_code": event.get("output_code"),
            }
        if kind == "recompile":
            failures = [
                {**f, "origin_text": _sources.line_text(f.get("origin"))}
                for f in event.get("failures") or []
            ]
            return {**base, "message": event.get("message"), "failures": failures}
        if kind in ("graph_break", "eager"):
            return {
                **base,
                "reason": event.get("reason"),
                "break": _break(event.get("break")),
            }
        return {**base, **{k: v for k, v in event.items() if k not in base}}


_writer: TraceWriter | None = None


def set_trace_dir(directory: str | os.PathLike | None) -> str | None:
    """Starts writing a JSON-lines trace of every compile event to a new file in ``directory``
    (``None`` stops); returns the file's path. ``python -m torchferro.report directory`` turns
    the traces there into one HTML page."""
    global _writer
    if _writer is not None:
        _writer.close()
        _writer = None
    if directory is None:
        return None
    _writer = TraceWriter(directory)
    _writer.start()
    return _writer.path


def trace_file() -> str | None:
    """The trace file being written, if any."""
    return _writer.path if _writer is not None else None


def init_from_env() -> None:
    directory = os.environ.get("TORCHFERRO_TRACE_DIR", "").strip()
    if directory:
        set_trace_dir(directory)


@atexit.register
def _close() -> None:
    if _writer is not None:
        _writer.close()
