"""Helpers that functionalized graphs call (``fx/src/passes/functionalize.rs``).

A functionalized graph writes no tensor it shares with anything: an in-place op without an
out-of-place twin runs on a fresh clone (:func:`on_clone`), and a write through a view becomes a
clone of the view's base holding the new values (:func:`view_scatter`). Both are pure functions
of their arguments, so every backend may treat them as ordinary ops.
"""

import functools
import importlib


# Callables the tracer recorded under a path torch does not export (see ``register``).
_REGISTERED = {}


def register(path, fn):
    """Makes ``path`` name ``fn`` for :func:`on_clone` and view steps."""
    _REGISTERED[path] = fn


def _resolve(path):
    fn = _REGISTERED.get(path)
    if fn is None:
        fn = _REGISTERED[path] = _import(path)
    return fn


def _import(path):
    parts = path.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for name in parts[i:]:
            obj = getattr(obj, name)
        return obj
    raise ImportError(path)


def on_clone(path, x, *args, **kwargs):
    """``path(x.clone(), *args, **kwargs)`` for an in-place callable; returns the clone."""
    y = x.clone()
    _resolve(path)(y, *args, **kwargs)
    return y


def _apply(v, step):
    kind, name, args, kwargs = step
    kw = dict(kwargs)
    if kind == "m":
        return getattr(v, name)(*args, **kw)
    return _resolve(name)(v, *args, **kw)


def view_scatter(base, src, *steps):
    """A clone of ``base`` whose view reached by ``steps`` (``(kind, name, args, kwargs)``,
    ``kind`` ``"m"`` for a method, ``"f"`` for a function path) holds ``src``."""
    out = base.clone()
    v = out
    for step in steps:
        v = _apply(v, step)
    v.copy_(src)
    return out


def replay(base, *steps):
    """``base`` with view ``steps`` applied (an output that aliases another, rebuilt)."""
    v = base
    for step in steps:
        v = _apply(v, step)
    return v
