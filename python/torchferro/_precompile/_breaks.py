"""Graph breaks in an artifact: which resume functions a capture's transformed code tail-calls,
and that code marshalled for the cache with the constants marshal cannot hold (the compiled
graph, the tail-call type, resume functions, named objects) swapped for markers
(``_runtime.load_code`` resolves them)."""

from __future__ import annotations

from ._names import need_name
from ._runtime import MARKER, CaptureError

# Instructions that read or write the frame's globals (or import through them): the code runs
# with the globals of the captured function's module, imported by name in the loading process.
_GLOBAL_OPS = {
    "LOAD_GLOBAL",
    "STORE_GLOBAL",
    "DELETE_GLOBAL",
    "LOAD_NAME",
    "STORE_NAME",
    "DELETE_NAME",
    "IMPORT_NAME",
}
# Closure cells: their contents live in the capturing process only.
_CELL_OPS = {
    "LOAD_DEREF",
    "STORE_DEREF",
    "DELETE_DEREF",
    "LOAD_CLOSURE",
    "LOAD_CLASSDEREF",
    "MAKE_CELL",
    "COPY_FREE_VARS",
}


def _codes(code):
    """``code`` and the code objects nested in its constants (functions it defines)."""
    import types

    yield code
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            yield from _codes(c)


def global_reads(code, what: str) -> list[str]:
    """The globals ``code`` (or a function it defines) uses natively, in order; refuses code
    that uses closure cells, which an artifact cannot carry."""
    import dis

    if code.co_freevars or code.co_cellvars:
        cells = ", ".join(code.co_freevars + code.co_cellvars)
        raise CaptureError(
            f"precompile: {what} uses the closure cells {cells}, which live only in the "
            "capturing process; pass those values as arguments (or define the function at "
            "module level)"
        )
    found = []
    for c in _codes(code):
        for ins in dis.get_instructions(c):
            if ins.opname in _CELL_OPS:
                raise CaptureError(
                    f"precompile: {what} uses closure cells natively ({ins.opname}"
                    f"{' ' + ins.argrepr if ins.argrepr else ''}): a closure cell lives only "
                    "in the capturing process; pass the value as an argument (or define the "
                    "function at module level)"
                )
            if ins.opname in _GLOBAL_OPS and (ins.opname, ins.argval) not in found:
                found.append((ins.opname, ins.argval))
    return found


def importable_module(fn) -> str | None:
    """The name of the module whose globals ``fn`` has, if importing that name in another
    process gives the module (not a script run as ``__main__``)."""
    import sys

    g = fn.__globals__
    modname = g.get("__name__")
    m = sys.modules.get(modname) if isinstance(modname, str) else None
    if modname == "__main__" or m is None or vars(m) is not g:
        return None
    return modname


def globals_module(fn, reads: list) -> str | None:
    """The module whose globals the artifact's native code (graph breaks' transformed code,
    resume functions run natively) runs with: ``None`` when that code needs no global but the
    builtins, else the captured function's module, which must be importable by name."""
    import builtins

    g = fn.__globals__
    needed = [
        (what, op, name)
        for what, op, name in reads
        if op == "IMPORT_NAME" or name in g or not hasattr(builtins, name)
    ]
    if not needed:
        return None
    modname = importable_module(fn)
    if modname is None:
        modname = g.get("__name__")
        what, op, name = needed[0]
        raise CaptureError(
            f"precompile: {what} uses the global {name!r} natively ({op}); the artifact runs "
            "that code with the globals of the captured function's module, but "
            f"{modname!r} cannot be imported by name in another process (a script run as "
            f"__main__, or code without a module): define {fn.__qualname__} in an importable "
            "module"
        )
    return modname


def portable_code(code, what: str, replace=None) -> bytes:
    """``code`` marshalled, with the constants marshal cannot hold swapped for markers the
    loader resolves: ``replace(c)`` first (a marker or None), then objects by importable name."""
    import marshal

    consts = []
    for c in code.co_consts:
        r = replace(c) if replace is not None else None
        if r is not None:
            consts.append(r)
            continue
        try:
            marshal.dumps(c)
            consts.append(c)
        except ValueError:
            consts.append((MARKER, "name", need_name(c, what)))
    return marshal.dumps(code.replace(co_consts=tuple(consts)))


def transformed_code(e: dict, index: int, resume_index: dict) -> bytes:
    """The entry's transformed code, marshalled, with the constants marshal cannot hold
    replaced by markers the loader resolves: the graph (this artifact's ``graph_call_N``), the
    tail-call type, each resume function (the artifact's dispatcher for its code) and other
    objects by importable name."""
    import types

    code = e["transformed_code"]

    def replace(c):
        if c is e["graph_object"]:
            return (MARKER, "artifact", f"graph_call_{index}")
        if (
            isinstance(c, type)
            and c.__qualname__ == "TailCall"
            and c.__module__ == "torchferro._C"
        ):
            return (MARKER, "tailcall")
        if isinstance(c, types.FunctionType) and c.__code__ in resume_index:
            return (MARKER, "artifact", f"resume_{resume_index[c.__code__]}")
        if isinstance(c, types.CodeType) and c in resume_index:
            raise CaptureError(
                "precompile: a graph break in a function with a closure is not supported"
            )
        return None

    return portable_code(code, "the graph break's code", replace)


def _is_resume(code) -> bool:
    """A resume function's code (named by `tracer/src/code.rs`)."""
    return code.co_name.startswith("torchferro_resume_")


def resume_functions(entries_by_code: list) -> dict:
    """Code object -> index of every resume function a transformed code tail-calls."""
    import types

    found = {}
    for _, entries in entries_by_code:
        for e in entries:
            if e["direct"]:
                continue
            for c in e["transformed_code"].co_consts:
                if isinstance(c, types.FunctionType) and _is_resume(c.__code__):
                    found.setdefault(c.__code__, len(found) + 1)
                elif isinstance(c, types.CodeType) and _is_resume(c):
                    found.setdefault(c, len(found) + 1)
    return found
