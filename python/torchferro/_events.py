"""Structured compile events from the Rust side (compiles, recompiles, graph breaks, eager
fallbacks), fanned out to whoever listens: ``explain``, trace files, log artifacts."""

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
