"""``torchferro.compiler.precompile``: capture a computation once, reload it in a fresh process
with no tracing and no compiling.

    with torchferro.compiler.precompile.capture(
        lambda model, x: model(x), artifact_path="m.py", cache_path="m.cache"
    ) as cap:
        y = cap(model, x)

    f = torchferro.compiler.precompile.load("m.py", "m.cache")
    y = f(model, x)

The artifact is a readable Python module (guards as conditions, graph inputs read from the
arguments by attribute path, one call per compiled graph, the result rebuilt); the cache holds
the serialized graphs, their kernels and a manifest of versions and hashes. No weights are
stored: the model is an argument. Format and limits: ``docs/precompile.md``.
"""

from __future__ import annotations

import json
import marshal
import os
import types

from .._precompile._runtime import (
    ArtifactMismatchError,
    CacheIntegrityError,
    CacheMismatchError,
    CaptureError,
    GuardError,
    PrecompileError,
)

__all__ = [
    "ArtifactMismatchError",
    "CacheIntegrityError",
    "CacheMismatchError",
    "Capture",
    "CaptureError",
    "GuardError",
    "PrecompileError",
    "capture",
    "counters",
    "load",
]


def counters() -> dict:
    """What this process has done so far: ``traces`` (frames the tracer traced) and
    ``c_compiles`` (runs of the C compiler). A process that only loads artifacts shows zero."""
    from .. import _C

    traces, cc = _C.precompile_counters()
    return {"traces": traces, "c_compiles": cc}


class Capture:
    """What ``capture`` yields: call it like the function; the calls compile as usual and are
    recorded. The artifact and the cache are written when the ``with`` block ends without an
    exception."""

    def __init__(self, fn, artifact_path: str, cache_path: str, backend, dynamic=None):
        from .. import compile as _compile

        self.fn = fn
        self.artifact_path = os.fspath(artifact_path)
        self.cache_path = os.fspath(cache_path)
        from .._precompile._writer import _params_of

        _params_of(fn)  # refuse unsupported signatures before anything runs
        self._compiled = _compile(fn, backend=backend, dynamic=dynamic)
        self.calls = 0

    def __call__(self, *args):
        self.calls += 1
        return self._compiled(*args)

    def _finish(self, codes):
        from .._precompile import _writer

        if self.calls == 0:
            raise CaptureError(
                "precompile.capture: `cap` was never called inside the block"
            )
        _writer.write(self.fn, codes, self.artifact_path, self.cache_path)


_active: list = []  # the capture in progress (one at a time: recording is process-wide)


class _CaptureContext:
    def __init__(self, cap: Capture):
        self.cap = cap

    def __enter__(self) -> Capture:
        from .. import _C

        if _active:
            raise CaptureError(
                "precompile.capture: another capture is already in progress"
            )
        _active.append(self.cap)
        _C.precompile_record(True)
        return self.cap

    def __exit__(self, exc_type, exc, tb):
        from .. import _C

        codes = _C.precompile_record(False)
        _active.clear()
        if exc_type is None:
            self.cap._finish(codes)
        return False


def capture(fn, *, artifact_path, cache_path, backend="inductor", dynamic=None):
    """Context manager: compile and record the calls made through the yielded ``Capture``;
    on exit write ``artifact_path`` (Python source) and ``cache_path`` (a directory).
    ``backend``: ``"inductor"`` (kernels kept in the cache) or ``"eager"``. ``dynamic``: as
    ``torch.compile``'s; a dimension traced with a symbolic size (``dynamic=True``,
    ``torchferro.mark_dynamic``, automatic dynamic after a size change) stays dynamic in the
    artifact, guarded by its range and the relations the trace relied on."""
    if backend not in ("inductor", "eager"):
        raise CaptureError(
            f"precompile: backend {backend!r} cannot be precompiled (use 'inductor' or 'eager')"
        )
    return _CaptureContext(Capture(fn, artifact_path, cache_path, backend, dynamic))


class Precompiled:
    """A loaded artifact: call it like the captured function. ``artifact`` is the module."""

    def __init__(self, module, fallback):
        self.artifact = module
        self._call = module.call
        self._fallback = fallback

    def __call__(self, *args):
        if self._fallback is None:
            return self._call(*args)
        try:
            return self._call(*args)
        except GuardError as e:
            if e.resumed:
                raise
        return self._fallback(*args)


def load(artifact_path, cache_path, *, recompile=False) -> Precompiled:
    """Loads a precompiled artifact and its cache in this process: the manifest (versions,
    machine) and every member's hash are checked before anything is loaded; then the graphs
    are rebuilt from the cache (kernels loaded, never compiled). A call whose arguments fail
    the guards raises ``GuardError`` naming the guard and the input, unless ``recompile`` is
    true (the captured function, found by its module and name, is compiled with
    ``torchferro.compile`` for such calls) or a callable (compiled instead)."""
    from .. import _C
    from .._precompile import _cache
    from .._precompile import _runtime as _rt
    from .._precompile._runtime import resolve

    artifact_path = os.fspath(artifact_path)
    cache_path = os.fspath(cache_path)
    try:
        with open(artifact_path, "rb") as f:
            artifact = f.read()
    except OSError as e:
        raise ArtifactMismatchError(
            f"cannot read the artifact {artifact_path!r}: {e}"
        ) from None
    manifest, data = _cache.verify(cache_path, artifact)
    module = types.ModuleType(
        "torchferro_precompiled_" + os.path.basename(artifact_path).split(".")[0]
    )
    module.__file__ = artifact_path
    # The capture's compiled artifact (hash checked above; the manifest pins the Python
    # version) saves compiling the source again; an older cache without it compiles.
    code = data.get(_cache.ARTIFACT_CODE)
    code = (
        marshal.loads(code)
        if code is not None
        else compile(artifact, artifact_path, "exec")
    )
    exec(code, module.__dict__)
    if getattr(module, "CACHE_ID", None) != _cache.cache_id(manifest):
        raise ArtifactMismatchError(
            f"the artifact {artifact_path!r} was written for another cache than {cache_path!r}"
        )
    graphs = []
    for member in module.GRAPHS:
        if member not in data:
            raise CacheIntegrityError(
                f"precompile cache {cache_path!r} has no member {member}"
            )
        meta = json.loads(data[member])
        callables = [(pos, resolve(name)) for pos, name in meta["callables"]]
        if meta["library"] is not None and meta["library"] not in data:
            raise CacheIntegrityError(
                f"precompile cache {cache_path!r} has no member {meta['library']}"
            )
        # The library's verified bytes, not its path: the loader opens a sealed copy of
        # exactly what was hashed, so a file swapped after the check changes nothing.
        lib = meta["library"]
        kernels = None if lib is None else [(os.path.basename(lib), data[lib])]
        graphs.append(_C.PrecompiledGraph(data[member].decode(), callables, kernels))
    transformed = {}
    code_globals = _rt.code_globals(module)
    for name, member in module.TRANSFORMED.items():
        if member not in data:
            raise CacheIntegrityError(
                f"precompile cache {cache_path!r} has no member {member}"
            )
        transformed[name] = _rt.load_code(data[member], module, name, code_globals)
    module._bind(graphs, transformed)
    fallback = None
    if recompile is True:
        modname, qualname = module.FUNCTION
        if modname is None or "<" in qualname:
            raise PrecompileError(
                "load(recompile=True) needs the captured function by name, but it was "
                f"{qualname!r}; pass the function itself: recompile=fn"
            )
        from .. import compile as _compile

        fallback = _compile(resolve(f"{modname}.{qualname}"))
    elif callable(recompile):
        from .. import compile as _compile

        fallback = _compile(recompile)
    return Precompiled(module, fallback)
