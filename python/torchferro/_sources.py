"""Pointing at user code: the text of a location, the source of a compiled function, its
original code object. Shared by the log artifacts, ``explain``, trace files and the HTML report.

A location is the tracer's record ``{"filename": str, "lineno": int}`` (``torchferro._events``
documents the event fields); nothing here parses the tracer's message text."""

from __future__ import annotations

import dis
import inspect
import io
import linecache
import sys
import tokenize


def where(location: dict | None) -> str | None:
    """A location as messages write it, ``"/path/file.py:12"``; None for no location."""
    if not location:
        return None
    return f"{location['filename']}:{location['lineno']}"


def line_text(location: dict | None) -> str:
    """The stripped text of the source line at a location (empty when unknown)."""
    if not location:
        return ""
    return linecache.getline(location["filename"], location["lineno"]).strip()


def excerpt(location: dict | None, context: int = 2) -> list[tuple[int, str, bool]]:
    """``(lineno, text, is_target)`` for the lines around a location."""
    if not location:
        return []
    lineno = location["lineno"]
    lines = linecache.getlines(location["filename"])
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
