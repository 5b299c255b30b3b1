"""Structured compile events from the Rust side (compiles, recompiles, graph breaks, eager
fallbacks), fanned out to whoever listens: ``explain``, trace files, log artifacts.

Each event is a dict with ``kind``, ``function``, ``filename`` and ``firstlineno`` (the frame),
plus fixed keys built in Rust from the same typed records as the log text
(``tracer/src/event.rs``), so listeners read fields and never parse messages:

- a *location* is ``{"filename": str, "lineno": int}`` (or None);
- a *break* is ``{"reason": str, "location": location, "frames": [{"function", "filename",
  "lineno"}, ...]}``, the inlined calls innermost first and the compiled frame last;
- ``compile``: ``compile_id``, ``graph_code``, ``graph_dot``, ``ops``, ``guards`` (log lines),
  ``guard_records`` (each ``{"kind", "source", "text", "origin"}``: ``text`` is the line without
  its origin, ``source`` None for process-wide state, ``origin`` a location), ``break_reason``
  (message text or None) and ``break`` (a break or None), ``timings``, ``transformed_code``,
  ``output_code``, ``code``;
- ``recompile``: ``message`` (the log text) and ``failures``, one per cached entry, each
  ``{"compile_id", "kind", "source", "expr", "reason", "origin", "mismatch"}``: the failing
  guard's kind (``TENSOR_MATCH``, ``GRAD_MODE``, ...), the value's source (``L['x']``) and how the
  user writes it (``x``), the log reason, the location that made the guard, and for tensors
  ``{"property", "index", "expected", "actual"}`` (``size``/``stride``/``rank`` values as ints);
- ``graph_break`` and ``eager``: ``reason`` (the message text) and ``break``;
- ``recompile_limit``: ``message``, ``limit`` and ``failures`` (as in ``recompile``).
"""

from __future__ import annotations

_listeners: list = []


def active() -> bool:
    """Whether anyone listens (the Rust side skips building events otherwise)."""
    return bool(_listeners)


def emit(event: dict) -> None:
    for listener in list(_listeners):
        listener(event)


def subscribe(listener) -> None:
    _listeners.append(listener)


def unsubscribe(listener) -> None:
    if listener in _listeners:
        _listeners.remove(listener)


def user_stack(brk: dict | None, function: str) -> list[dict]:
    """The frames to show for a break, innermost first, each ``{"function", "filename",
    "lineno"}``: the inlined calls when the break happened inside some, else the compiled frame
    ``function`` at the break's location (none without a location)."""
    if not brk:
        return []
    frames = brk.get("frames") or []
    if len(frames) > 1:
        return list(frames)
    location = brk.get("location")
    return [{"function": function, **location}] if location else []
