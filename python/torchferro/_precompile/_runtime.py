"""Support code for precompiled artifacts: imported by every artifact, so kept small and free
of torchferro's compiler (loading an artifact must not trace or compile anything)."""

from __future__ import annotations

import importlib


class PrecompileError(RuntimeError):
    """Base class of every error ``torchferro.compiler.precompile`` raises."""


class CaptureError(PrecompileError):
    """The captured computation cannot be written as an artifact (the message says why)."""


class CacheMismatchError(PrecompileError):
    """The cache was written by another torchferro, torch or Python version, or for another
    machine."""


class CacheIntegrityError(PrecompileError):
    """The cache is truncated, tampered with or incomplete: a member's hash or size differs
    from its manifest, or a member is missing."""


class ArtifactMismatchError(PrecompileError):
    """The artifact is not the one its cache was written with."""


class GuardError(PrecompileError):
    """A call's arguments are not of the kinds the artifact was captured for. ``failures``
    holds, per captured entry, the first failing guard and the input it read."""

    def __init__(self, message: str, failures: list, resumed: bool = False):
        super().__init__(message)
        self.failures = failures
        # True when the failing guards are those of the code after a graph break: the part
        # before it has run (with its side effects), so falling back to a fresh compile of
        # the whole function would run it twice.
        self.resumed = resumed


class Fail:
    """A failed guard: its text (``TENSOR_MATCH L['x']``) and what the input was."""

    __slots__ = ("actual", "guard")

    def __init__(self, guard: str, actual: str):
        self.guard = guard
        self.actual = actual

    def __str__(self) -> str:
        return f"{self.guard}: {self.actual}"


def describe(v) -> str:
    """A short account of a value for a guard failure: tensors by kind, dtype, shape, stride,
    device and requires_grad; anything else by type and a short repr."""
    import torch

    if isinstance(v, torch.Tensor):
        return (
            f"{type(v).__name__}(dtype={v.dtype}, size={tuple(v.shape)}, "
            f"stride={tuple(v.stride())}, device={v.device}, requires_grad={v.requires_grad})"
        )
    r = repr(v)
    if len(r) > 80:
        r = r[:77] + "..."
    return f"{type(v).__module__}.{type(v).__qualname__} {r}"


def resolve(path: str):
    """The object at ``path``: the longest importable module prefix, then attributes.
    ``module:NAME`` names a module itself."""
    if path.startswith("module:"):
        return importlib.import_module(path[len("module:") :])
    parts = path.split(".")
    for i in range(len(parts), 0, -1):
        name = ".".join(parts[:i])
        try:
            obj = importlib.import_module(name)
        except ImportError:
            continue
        try:
            for p in parts[i:]:
                obj = getattr(obj, p)
        except AttributeError:
            break
        return obj
    raise ArtifactMismatchError(
        f"the artifact needs {path}, which this process cannot import"
    )


def dense(t) -> bool:
    """Whether ``t`` is contiguous for its own sizes (a size-1 dimension's stride is free): the
    layout a graph traced with symbolic sizes assumes of a dynamic input."""
    expected = 1
    for size, stride in zip(reversed(t.shape), reversed(t.stride())):
        if size != 1 and stride != expected:
            return False
        expected *= max(size, 1)
    return True


def dense_order(sizes, strides):
    """The order of dimensions (outermost first) in which ``strides`` are dense for ``sizes``
    (a size-1 dimension's stride is free), the contiguous order where it fits; ``None`` where
    none fits (a column slice). The tensor check's ``layout::dense_order``."""
    n = len(sizes)
    if len(strides) != n:
        return None

    def fits(order):
        acc, want = 1, [0] * n
        for d in reversed(order):
            want[d] = acc
            acc *= max(sizes[d], 1)
        return all(w == a or s == 1 for w, a, s in zip(want, strides, sizes))

    identity = list(range(n))
    if fits(identity):
        return identity
    order = sorted(identity, key=lambda d: (-strides[d], d))
    return order if fits(order) else None


def stride_rules(sizes, strides):
    """Each stride's rule as the tensor check's ``layout::stride_rules``: ``("c", v)`` a
    constant 0 or 1, ``("x", j)`` the size times the stride of dimension ``j``, ``("free",)`` a
    stride symbol of its own."""
    n = len(sizes)
    rules, candidates = [None] * n, []
    for i in sorted(range(n), key=lambda i: (strides[i], -i)):
        v = strides[i]
        next_dense = i + 1 < n and v == sizes[i + 1] * strides[i + 1]
        js = [j for c, j in candidates if c == v]
        if v in (0, 1) and not next_dense:
            rules[i] = ("c", v)
        elif js:
            rules[i] = ("x", js[-1])
        elif v < 2:
            rules[i] = ("c", v)
        else:
            rules[i] = ("free",)
        candidates.append((sizes[i] * v, i))
    return rules


def laid_out_as(t, recorded) -> bool:
    """Whether ``t`` has the layout a dynamic graph's input was traced with, from the
    ``(sizes, strides)`` the check recorded: dense for its own sizes in the recorded order
    (transposed, channels-last), or, recorded dense in no order (a column slice), of the same
    stride rules (a stride symbol's value is a shape guard's)."""
    sizes, strides = recorded
    shape, stride = tuple(t.shape), t.stride()
    if len(shape) != len(sizes):
        return False
    order = dense_order(sizes, strides)
    if order is None:
        # A size-1 dimension's rule may differ unless it is a stride symbol or a product
        # another stride is written with (the tensor check's `rule_mismatch`).
        want, got = stride_rules(sizes, strides), stride_rules(shape, stride)
        return all(
            w == g or (shape[i] == 1 and w != ("free",) and ("x", i) not in want)
            for i, (w, g) in enumerate(zip(want, got))
        )
    acc = 1
    for d in reversed(order):
        if shape[d] != 1 and stride[d] != acc:
            return False
        acc *= max(shape[d], 1)
    return True


def build_named_tuple(ty, items: tuple):
    """A named tuple (``collections.namedtuple``) or a structseq (``torch.return_types``)."""
    make = getattr(ty, "_make", None)
    return make(items) if make is not None else ty(items)


def module_global(module, name: str):
    """``name`` as a function of ``module`` reads it: its global, else the builtin."""
    d = vars(module)
    if name in d:
        return d[name]
    import builtins

    return getattr(builtins, name)


def weakref_referent(ref):
    """``ref()`` for exactly a ``weakref.ref`` (the guard step ``weakref_call``; ``None`` once
    the referent died); any other object fails the guard's read."""
    import weakref

    if type(ref) is not weakref.ref:
        raise TypeError(f"not a weakref.ref: {type(ref).__name__}")
    return ref()


class TailCall:
    """What a graph break's transformed code returns: call ``call[0](*call[1:])`` next (the
    resume function, once the transformed frame is gone, as torchferro's hook does)."""

    __slots__ = ("call",)

    def __init__(self, *call):
        self.call = call


def finish(r):
    """Runs the tail calls a graph break's transformed code leaves, to the final value."""
    while type(r) is TailCall:
        c = r.call
        r = c[0](*c[1:])
    return r


MARKER = "__torchferro_precompile__"


def code_globals(module) -> dict:
    """The globals the artifact's native code runs with: the captured function's module,
    imported by name (``GLOBALS``), or none but the builtins."""
    import builtins

    name = getattr(module, "GLOBALS", None)
    if name is None:
        return {"__builtins__": builtins}
    return vars(importlib.import_module(name))


def load_code(data: bytes, module, name: str, globals_: dict | None = None):
    """The function of a marshalled code (a graph break's transformed code, a resume function
    run natively), its markers resolved (see the writer), run with ``globals_`` (by default
    none but the builtins)."""
    import builtins
    import marshal
    import types

    code = marshal.loads(data)
    consts = []
    for c in code.co_consts:
        if type(c) is tuple and len(c) >= 2 and c[0] == MARKER:
            if c[1] == "artifact":
                c = getattr(module, c[2])
            elif c[1] == "tailcall":
                c = TailCall
            elif c[1] == "name":
                c = resolve(c[2])
            else:
                raise ArtifactMismatchError(
                    f"unknown marker {c[1]!r} in the transformed code"
                )
        consts.append(c)
    if globals_ is None:
        globals_ = {"__builtins__": builtins}
    return types.FunctionType(code.replace(co_consts=tuple(consts)), globals_, name)


def _const_text(c) -> str:
    """A process-independent spelling of a code constant for ``code_key``: nested code by its
    own key, frozensets in sorted order (their iteration order follows string hashes, which
    change per process), everything else by type and repr."""
    import types

    if isinstance(c, types.CodeType):
        return "code:" + code_key(c)
    if isinstance(c, frozenset):
        return "frozenset:" + ",".join(sorted(_const_text(x) for x in c))
    if isinstance(c, tuple):
        return "tuple:(" + ",".join(_const_text(x) for x in c) + ")"
    return f"{type(c).__qualname__}:{c!r}"


def code_key(code) -> str:
    """A structural fingerprint of a code object: its bytecode, exception table, constants (nested
    code included), names, variables, argument counts and flags, hashed. A function made inside a
    frame (a closure, a lambda) is a new object on every call of its maker, and its code object
    has no importable name; the guard on its code, which the compiled entry checks by identity,
    is written into an artifact as this fingerprint. Line numbers and the file name are left
    out: they change no behaviour the trace relied on."""
    import hashlib

    if not hasattr(code, "co_code"):
        return ""
    parts = [
        code.co_name,
        repr(code.co_code),
        "|".join(_const_text(c) for c in code.co_consts),
        repr(code.co_names),
        repr(code.co_varnames),
        repr(code.co_freevars),
        repr(code.co_cellvars),
        # Which instructions a `try` or `with` covers and where its handler is: offsets only,
        # no lines (3.11+). Two codes with one bytecode can differ here alone.
        repr(getattr(code, "co_exceptiontable", b"")),
        repr(
            (
                code.co_argcount,
                code.co_posonlyargcount,
                code.co_kwonlyargcount,
                code.co_flags,
            )
        ),
    ]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()
