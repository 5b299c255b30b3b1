"""Graph breaks in an artifact: which resume functions a capture's transformed code tail-calls,
and that code marshalled for the cache with the constants marshal cannot hold (the compiled
graph, the tail-call type, resume functions, named objects) swapped for markers
(``_runtime.load_code`` resolves them)."""

from __future__ import annotations

from ._names import need_name
from ._runtime import MARKER, CaptureError

_GLOBAL_OPS = {
    "LOAD_GLOBAL",
    "STORE_GLOBAL",
    "DELETE_GLOBAL",
    "LOAD_NAME",
    "STORE_NAME",
    "DELETE_NAME",
    "IMPORT_NAME",
    "LOAD_DEREF",
    "STORE_DEREF",
    "LOAD_CLOSURE",
    "LOAD_CLASSDEREF",
}


def transformed_code(e: dict, index: int, resume_index: dict) -> bytes:
    """The entry's transformed code, marshalled, with the constants marshal cannot hold
    replaced by markers the loader resolves: the graph (this artifact's ``graph_call_N``), the
    tail-call type, each resume function (the artifact's dispatcher for its code) and other
    objects by importable name."""
    import marshal
    import types

    code = e["transformed_code"]
    for ins in __import__("dis").get_instructions(code):
        if ins.opname in _GLOBAL_OPS:
            raise CaptureError(
                f"precompile: the graph break of entry {e['compile_id']} runs {ins.opname} "
                f"natively ({ins.argrepr}); an artifact does not carry the function's globals "
                "or closure"
            )
    consts = []
    for c in code.co_consts:
        if c is e["graph_object"]:
            consts.append((MARKER, "artifact", f"graph_call_{index}"))
        elif (
            isinstance(c, type)
            and c.__qualname__ == "TailCall"
            and c.__module__ == "torchferro._C"
        ):
            consts.append((MARKER, "tailcall"))
        elif isinstance(c, types.FunctionType) and c.__code__ in resume_index:
            consts.append((MARKER, "artifact", f"resume_{resume_index[c.__code__]}"))
        elif isinstance(c, types.CodeType) and c in resume_index:
            raise CaptureError(
                "precompile: a graph break in a function with a closure is not supported"
            )
        else:
            try:
                marshal.dumps(c)
                consts.append(c)
            except ValueError:
                consts.append((MARKER, "name", need_name(c, "the graph break's code")))
    return marshal.dumps(code.replace(co_consts=tuple(consts)))


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
