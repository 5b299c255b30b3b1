"""Portable names for the live objects a capture meets (classes, functions, modules, constants):
an artifact refers to them by importable path, and a name is only used if importing it gives
back the very object the capture saw."""

from __future__ import annotations

import math
import sys

from ._runtime import CaptureError, resolve


def _resolves_to(path: str, obj) -> bool:
    try:
        return resolve(path) is obj
    except Exception:  # an import with side effects failing is "not this name"
        return False


def name_of(obj, hint: str | None = None) -> str | None:
    """An importable path that resolves to ``obj`` (``module:NAME`` for a module), or None.
    Canonical spellings (the defining module) come before ``hint``, so a guard on a torch
    attribute compares with where the function was defined, not with itself."""
    if type(obj).__name__ == "module" and hasattr(obj, "__name__"):
        name = obj.__name__
        return f"module:{name}" if sys.modules.get(name) is obj else None
    candidates = []
    import enum

    if isinstance(obj, enum.Enum):
        base = name_of(type(obj))
        if base is not None:
            candidates.append(f"{base}.{obj.name}")
    mod = getattr(obj, "__module__", None)
    qual = getattr(obj, "__qualname__", None)
    nm = getattr(obj, "__name__", None)
    if isinstance(mod, str) and isinstance(qual, str):
        candidates.append(f"{mod}.{qual}")
    if isinstance(mod, str) and isinstance(nm, str):
        candidates.append(f"{mod}.{nm}")
    owner = getattr(obj, "__self__", None)
    if type(owner).__name__ == "module" and isinstance(nm, str):
        candidates.append(f"{owner.__name__}.{nm}")
    objclass = getattr(obj, "__objclass__", None)
    if objclass is not None and isinstance(nm, str):
        base = name_of(objclass)
        if base is not None:
            candidates.append(f"{base}.{nm}")
    if isinstance(obj, type) and mod == "builtins":
        # Interpreter types with no builtins name (`function`, `method`, ...) are named in
        # `types` (a guard on a local function's type names `types.FunctionType`).
        import types

        candidates.extend(f"types.{k}" for k, v in vars(types).items() if v is obj)
    if hint:
        candidates.append(hint)
    for c in candidates:
        if "<" in c:
            continue
        if _resolves_to(c, obj):
            return c
    return None


def need_name(obj, what: str, hint: str | None = None) -> str:
    n = name_of(obj, hint)
    if n is None:
        raise CaptureError(
            f"precompile: {what} refers to {obj!r}, which has no importable name; an artifact "
            "can only refer to module-level classes and functions"
        )
    return n


_PLAIN = (int, str, bytes, bool, type(None))


def literal(v) -> str | None:
    """Python source that evaluates to a value equal to ``v`` and of its type, or None."""
    import torch

    t = type(v)
    if t in _PLAIN:
        return repr(v)
    if t is float:
        return repr(v) if math.isfinite(v) else f"float({str(v)!r})"
    if t in (tuple, list):
        items = [literal(x) for x in v]
        if any(i is None for i in items):
            return None
        if t is tuple:
            return "(" + "".join(i + ", " for i in items) + ")"
        return "[" + ", ".join(items) + "]"
    if t is torch.dtype or t is torch.layout or t is torch.memory_format:
        s = str(v)
        return s if s.startswith("torch.") and _resolves_to(s, v) else None
    if t is torch.device:
        return f"torch.device({str(v)!r})"
    if t is torch.Size and all(type(x) is int for x in v):
        return f"torch.Size({tuple(v)!r})"
    if t is slice:
        parts = [literal(v.start), literal(v.stop), literal(v.step)]
        return None if None in parts else f"slice({', '.join(parts)})"
    if v is Ellipsis:
        return "Ellipsis"
    return None
