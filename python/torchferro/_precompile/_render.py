"""The artifact's text around the entries' code: the header (what was captured, for which
environment), the module-level tables the loader reads (``CACHE_ID``, ``GRAPHS``,
``TRANSFORMED``, ``GLOBALS``), the names the guards resolve, ``_bind``, the guard listings, and
one dispatcher per code object (``call``, ``resume_R``) trying its entries in order."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from . import _cache
from ._runtime import CaptureError


def unique(names) -> list[str]:
    """Parameter names for a dispatcher, made distinct (generated resume code can repeat a
    name, such as a stack slot's, which a ``def`` cannot); guards read locals by position."""
    out = []
    for n in names:
        m = n if n.isidentifier() else "p"
        while m in out:
            m = f"{m}_{len(out)}"
        out.append(m)
    return out


@dataclass
class Parts:
    """What the writer gathers for the artifact's text, filled in as it walks the entries."""

    fn: Any
    """The captured function."""
    mod: Any
    """The writer's ``_Module``: the names the guards and results resolve."""
    native: list[str]
    """Frames compiled on their own during the capture, named for the header."""
    code_globals: str | None
    """The module whose globals the natively run code takes (``None``: builtins only)."""
    bodies: list[str] = field(default_factory=list)
    """The lines of the ``_entry_N`` functions."""
    graph_meta: list[tuple] = field(default_factory=list)
    """Per graph: its cache member, compile id, runner and node count."""
    transformed: dict[str, str] = field(default_factory=dict)
    """Artifact global name -> cache member of the code bound to it."""
    dispatchers: list[tuple] = field(default_factory=list)
    """Per code object: its name, parameters, entry indices, code and exported entries."""


def render(parts: Parts, cache_id: str) -> str:
    fn, mod, native, code_globals = (
        parts.fn,
        parts.mod,
        parts.native,
        parts.code_globals,
    )
    bodies, graph_meta = parts.bodies, parts.graph_meta
    transformed, dispatchers = parts.transformed, parts.dispatchers
    env = _cache.environment()
    params = dispatchers[0][1]
    where = f"{fn.__code__.co_filename}:{fn.__code__.co_firstlineno}"
    reserved = set(mod.names.values()) | {"torch", "_rt"}
    for name, ps, *_ in dispatchers:
        clash = reserved.intersection(ps)
        if clash:
            raise CaptureError(
                f"precompile: parameter {sorted(clash)[0]!r} of {name} has the name of one "
                "of the artifact's own globals; rename it"
            )
    out = [
        '"""torchferro precompiled artifact (format 1).',
        "",
        f"Captured from {fn.__qualname__} at {where}, for torchferro {env['torchferro']},",
        f"torch {env['torch']}, Python {env['python']} on {env['machine']}.",
        "",
        "Load it with torchferro.compiler.precompile.load(<this file>, <its cache>): the loader",
        "checks the cache's manifest and hashes, then binds each graph_N below to the graph kept",
        "in the cache (its kernels, or torch calls). Each _entry_N checks its guards as Python",
        "conditions, reads the graph's inputs (parameters and buffers included) from the",
        "arguments by attribute path, runs graph N and rebuilds the result. No weights are",
        "stored: the model passed in is read on every call. At a graph break, the entry runs",
        "its transformed code (kept in the cache), which calls graph_call_N, runs the breaking",
        "instruction natively and tail-calls resume_R, the entries of the code after the break.",
        '"""',
    ]
    if native:
        out.append("")
        out.append(
            "# Frames compiled on their own during the capture, called natively by the"
        )
        out.append("# breaking instruction (they run eagerly here):")
        for n in native:
            out.append(f"#   {n}")
    out += [
        "",
        "import torch",
        "",
        "from torchferro._precompile import _runtime as _rt",
        "",
        f"CACHE_ID = {cache_id!r}",
        f"PARAMS = {tuple(params)!r}",
        f"FUNCTION = {(getattr(fn, '__module__', None), fn.__qualname__)!r}",
        "# The cache member of each graph, in entry order.",
        "GRAPHS = [",
    ]
    for member, cid, runner, n in graph_meta:
        out.append(f"    {member!r},  # entry {cid}: {runner}, {n} nodes")
    out.append("]")
    out.append(
        "# The transformed code of each entry with a graph break (bound by the loader)."
    )
    out.append(f"TRANSFORMED = {transformed!r}")
    out.append(
        "# The module whose globals that code runs with (None: the builtins only)."
    )
    out.append(f"GLOBALS = {code_globals!r}")
    out.append("")
    out.append("# Classes, functions and modules the guards and results refer to.")
    for path, var in mod.names.items():
        out.append(f"{var} = _rt.resolve({path!r})")
    out.append("")
    for i in range(len(graph_meta)):
        out.append(f"graph_{i} = None")
    for name in transformed:
        out.append(f"{name} = None")
    out.append("")
    out.append("")
    out.append("def _bind(graphs, transformed):")
    out.append(
        '    """Called by the loader with the graphs (and transformed code) it built from'
    )
    out.append('    the verified cache."""')
    out.append("    g = globals()")
    out.append("    for i, graph in enumerate(graphs):")
    out.append("        g[f'graph_{i}'] = graph")
    out.append("    g.update(transformed)")
    out.append("")
    out.append("")
    for name, ps, idx, code, entries in dispatchers:
        for i, e in zip(idx, entries):
            out.append(
                f"# Entry {e['compile_id']} ({code.co_name}) was compiled with these guards:"
            )
            for line in e["guard_lines"]:
                out.append(f"#   {line}")
    out.append("")
    out.extend(bodies)
    for k, (name, ps, idx, code, entries) in enumerate(dispatchers):
        if k > 0 and not idx:
            out.append(f"def {name}(*args):")
            out.append(
                f'    """{code.co_name}: the code after a graph break. No frame of it was '
                "compiled during\n    the capture (it ran eagerly), so its code, kept in the "
                'cache, runs natively."""'
            )
            out.append(f"    return native_{name}(*args)")
            out.append("")
            out.append("")
            continue
        if k == 0:
            out.append(f"def call({', '.join(ps)}):")
            out.append(
                '    """The captured computation: the first entry whose guards pass runs."""'
            )
        else:
            out.append(f"def {name}({', '.join(ps)}):")
            out.append(f'    """{code.co_name}: the code after a graph break."""')
        out.append("    failures = []")
        for i in idx:
            out.append(f"    r = _entry_{i}({', '.join(ps)})")
            out.append("    if type(r) is not _rt.Fail:")
            if k == 0 and transformed:
                out.append("        return _rt.finish(r)")
            else:
                out.append("        return r")
            out.append("    failures.append(r)")
        out.append("    raise _rt.GuardError(")
        if k == 0:
            out.append(
                "        'precompiled artifact: the arguments do not match what was captured: '"
            )
        else:
            out.append(
                f"        'precompiled artifact: after a graph break, the values do not match "
                f"what was captured ({code.co_name}): '"
            )
        out.append(
            "        + '; '.join(f'{f.guard} failed, got {f.actual}' for f in failures),"
        )
        out.append("        failures,")
        if k != 0:
            out.append("        resumed=True,")
        out.append("    )")
        out.append("")
        out.append("")
    return "\n".join(out).rstrip("\n") + "\n"
