"""Pointing at user code: the text of a ``file:line`` location, the source of a compiled function,
its original code object, and the pieces of the tracer's reason texts. Shared by the log
artifacts, ``explain``, trace files and the HTML report."""

from __future__ import annotations

import dis
import inspect
import io
import linecache
import re
import sys
import tokenize
from dataclasses import dataclass, field

_LOCATION = re.compile(r"^(?P<file>.+):(?P<line>\d+)$")
_REASON_AT = re.compile(r"^(?P<reason>.*) \(at (?P<location>[^()]*)\)$")
_STACK_FRAME = re.compile(r"^\s+(?P<function>\S+) at (?P<location>.+)$")
_STACK_HEADER = "inlined call stack (innermost first):"
_TENSOR_SIZE = re.compile(
    r"^tensor '(?P<tensor>.+)' size mismatch at index (?P<dim>\d+)\. expected (?P<expected>\d+), actual (?P<actual>\d+)$"
)
_GUARD = re.compile(r"^(?P<kind>[A-Z_]+) (?P<body>.*?)(?:  # (?P<origin>.+:\d+))?$")
_SOURCE_HEAD = re.compile(r"^((?:[LG]\[[^\]]+\])(?:\.\w+|\[[^\]]+\])*)")


def split_location(location: str | None) -> tuple[str, int] | None:
    """``"/path/file.py:12"`` as ``("/path/file.py", 12)``; None when it is not a location."""
    if not location:
        return None
    m = _LOCATION.match(location.strip())
    if m is None:
        return None
    return m.group("file"), int(m.group("line"))


def line_text(location: str | None) -> str:
    """The stripped text of the source line at ``file:line`` (empty when unknown)."""
    where = split_location(location)
    if where is None:
        return ""
    return linecache.getline(where[0], where[1]).strip()


def excerpt(location: str | None, context: int = 2) -> list[tuple[int, str, bool]]:
    """``(lineno, text, is_target)`` for the lines around ``file:line``."""
    where = split_location(location)
    if where is None:
        return []
    filename, lineno = where
    lines = linecache.getlines(filename)
    first, last = max(1, lineno - context), min(len(lines), lineno + context)
    return [(n, lines[n - 1].rstrip("\n"), n == lineno) for n in range(first, last + 1)]


def function_source(filename: str, firstlineno: int) -> tuple[int, list[str]]:
    """The lines of the function (or class body) starting at ``firstlineno``, decorators included
    when they sit above it; ``(firstlineno, [])`` when the file cannot be read."""
    lines = linecache.getlines(filename)
    if not lines or firstlineno < 1 or firstlineno > len(lines):
        return firstlineno, []
    start = firstlineno - 1
    try:
        block = inspect.getblock(lines[start:])
    except (SyntaxError, tokenize.TokenError, IndentationError):
        # Odd source: show one line rather than nothing.
        block = lines[start : start + 1]
    return firstlineno, [line.rstrip("\n") for line in block]


def find_code(filename: str, firstlineno: int, name: str):
    """The code object named ``name`` that starts at ``filename:firstlineno``, searched in the
    loaded modules of that file (functions, methods, nested functions); None when not found
    (generated resume functions, code made by ``exec``)."""
    found = []

    def visit(code):
        if (
            code.co_filename == filename
            and code.co_firstlineno == firstlineno
            and code.co_name == name
        ):
            found.append(code)
            return
        for const in code.co_consts:
            if hasattr(const, "co_code") and not found:
                visit(const)

    def visit_object(obj, seen, depth):
        if found or id(obj) in seen or depth > 3:
            return
        seen.add(id(obj))
        try:
            obj = inspect.unwrap(obj) if callable(obj) else obj
            code = getattr(obj, "__code__", None)
        except Exception:  # noqa: BLE001 - objects with odd __getattr__ or __wrapped__ chains
            return
        if code is not None:
            visit(code)
            return
        if isinstance(obj, type):
            for value in list(vars(obj).values()):
                if isinstance(value, (staticmethod, classmethod)):
                    value = value.__func__
                elif isinstance(value, property):
                    value = value.fget
                visit_object(value, seen, depth + 1)

    for module in list(sys.modules.values()):
        if getattr(module, "__file__", None) != filename:
            continue
        seen: set[int] = set()
        for value in list(vars(module).values()):
            visit_object(value, seen, 0)
            if found:
                return found[0]
    return None


def disassemble(code) -> str:
    """``dis`` text of a code object, nested code objects included."""
    out = io.StringIO()
    dis.dis(code, file=out)
    return out.getvalue()


@dataclass
class BreakSite:
    """A graph-break reason text taken apart: what could not be traced, where, and through which
    inlined calls (innermost first, each ``(function, "file:line")``)."""

    reason: str
    location: str | None
    stack: list[tuple[str, str]] = field(default_factory=list)


def parse_break(text: str) -> BreakSite:
    """Takes apart ``"<reason> (at file:line)"`` optionally followed by the tracer's
    ``inlined call stack (innermost first):`` block."""
    head, _, rest = text.partition("\n")
    m = _REASON_AT.match(head)
    site = (
        BreakSite(m.group("reason"), m.group("location"))
        if m
        else BreakSite(head, None)
    )
    if _STACK_HEADER in rest:
        for line in rest.split(_STACK_HEADER, 1)[1].splitlines():
            f = _STACK_FRAME.match(line)
            if f:
                site.stack.append((f.group("function"), f.group("location")))
    return site


@dataclass
class GuardLine:
    """One line of a guard list: ``KIND body  # file:line``."""

    text: str
    kind: str
    body: str
    source: str
    origin: str | None


def parse_guard(text: str) -> GuardLine:
    m = _GUARD.match(text)
    if m is None:
        return GuardLine(text, "", text, "", None)
    body = m.group("body")
    head = _SOURCE_HEAD.match(body)
    return GuardLine(
        text, m.group("kind"), body, head.group(1) if head else "", m.group("origin")
    )


def size_failure(reason: str) -> tuple[str, int, int, int] | None:
    """``(tensor, dim, expected, actual)`` of a ``size mismatch`` guard failure, else None."""
    m = _TENSOR_SIZE.match(reason)
    if m is None:
        return None
    return (
        m.group("tensor"),
        int(m.group("dim")),
        int(m.group("expected")),
        int(m.group("actual")),
    )


_LOCAL = re.compile(r"^L\['([A-Za-z_]\w*)'\]")
_GLOBAL = re.compile(r"^G\['([A-Za-z_]\w*)'\]")


def python_expr(source: str) -> str:
    """A guard source as the user would write it: ``L['xs'][0]`` as ``xs[0]``, ``x`` as ``x``."""
    return _GLOBAL.sub(r"\1", _LOCAL.sub(r"\1", source))
