"""Reading the trace files: one ``Run`` per JSON-lines file, its compiles grouped per user
``Function`` and ``Code`` object, with the breaks, recompiles and guards the page marks."""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field

from .. import _sources

_RESUME = re.compile(r"^torchferro_resume_in_(?P<fn>.+)_at_(?P<line>\d+)$")


@dataclass
class Code:
    """One code object of a function: the function itself or one of its resume functions."""

    name: str
    compiles: list[dict] = field(default_factory=list)

    @property
    def resume_line(self) -> int | None:
        m = _RESUME.match(self.name)
        return int(m.group("line")) if m else None


@dataclass
class Function:
    name: str
    filename: str
    firstlineno: int
    start: int = 0
    lines: list[str] = field(default_factory=list)
    codes: dict[str, Code] = field(default_factory=dict)
    breaks: list[dict] = field(default_factory=list)
    recompiles: list[dict] = field(default_factory=list)
    anchor: str = ""

    @property
    def compiles(self) -> list[dict]:
        return [c for code in self.codes.values() for c in code.compiles]

    @property
    def graph_count(self) -> int:
        return sum(1 for c in self.compiles if c.get("ops"))

    @property
    def compile_seconds(self) -> float:
        return sum(sum((c.get("timings") or {}).values()) for c in self.compiles)


@dataclass
class Run:
    path: str
    start: dict = field(default_factory=dict)
    functions: dict[tuple[str, int], Function] = field(default_factory=dict)
    warnings: list[dict] = field(default_factory=list)
    bad_lines: int = 0


def _read(path: str) -> Run:
    run = Run(path)
    with open(path, encoding="utf-8") as f:
        for raw in f:
            raw = raw.strip()
            if not raw:
                continue
            try:
                rec = json.loads(raw)
            except json.JSONDecodeError:
                run.bad_lines += (
                    1  # a process killed mid-write leaves a partial last line
                )
                continue
            kind = rec.get("kind")
            if kind == "start":
                run.start = rec
                continue
            if kind == "warning":
                run.warnings.append(rec)
                continue
            if "filename" not in rec:
                continue
            key = (rec["filename"], rec.get("firstlineno", 0))
            fn = run.functions.get(key)
            if fn is None:
                m = _RESUME.match(rec.get("function", ""))
                name = m.group("fn") if m else rec.get("function", "?")
                fn = run.functions[key] = Function(name, key[0], key[1])
            if kind == "source":
                fn.start, fn.lines = rec.get("start", key[1]), rec.get("lines") or []
                if not _RESUME.match(rec.get("function", "")):
                    fn.name = rec["function"]
            elif kind == "compile":
                code = fn.codes.setdefault(rec["function"], Code(rec["function"]))
                code.compiles.append(rec)
                if not _RESUME.match(rec["function"]):
                    fn.name = rec["function"]
            elif kind in ("graph_break", "eager"):
                # The same site breaks again in every recompile of the frame: count it once.
                brk = rec.get("break") or {}
                site = (
                    kind,
                    brk.get("reason", rec.get("reason")),
                    _sources.where(brk.get("location")),
                )
                for other in fn.breaks:
                    if other["_site"] == site:
                        other["_times"] += 1
                        break
                else:
                    fn.breaks.append({**rec, "_site": site, "_times": 1})
            elif kind == "recompile":
                fn.recompiles.append(rec)
    for fn in run.functions.values():
        if (
            not fn.lines
        ):  # a trace from an older writer, or an eager-only function: try the file
            fn.start, fn.lines = _sources.function_source(fn.filename, fn.firstlineno)
        # The function's own code first, then its resume functions in source order.
        fn.codes = dict(
            sorted(fn.codes.items(), key=lambda kv: (kv[1].resume_line or 0, kv[0]))
        )
    return run


def load(directory: str) -> list[Run]:
    """Every ``*.jsonl`` trace in ``directory`` (or the one file named), oldest first."""
    if os.path.isfile(directory):
        paths = [directory]
    else:
        paths = sorted(
            (
                os.path.join(directory, n)
                for n in os.listdir(directory)
                if n.endswith(".jsonl")
            ),
            key=os.path.getmtime,
        )
    return [_read(p) for p in paths]
