"""Log artifacts, as ``TORCH_LOGS`` has them: ``TORCHFERRO_LOGS="recompiles,+guards"`` in the
environment (read at import) or ``torchferro.set_logs("recompiles,+guards")``.

Each artifact is a logger, ``torchferro.<artifact>``, and prints through a handler installed on
the ``torchferro`` logger (which then stops propagating to the root logger, as ``torch`` does), so
``logging.getLogger("torchferro")`` configuration applies to all of them. The Rust side logs its
plain records to the same loggers through its ``tracing`` bridge (``tracer/src/log/bridge.rs``),
which asks these loggers whether they are enabled, so the levels set here are all it needs. The
artifacts are drawn from the tracer's structured events (``torchferro._events``): while
``recompiles``, ``graph_breaks``, ``graph``, ``perf`` or ``output_code`` is on, its richer text
replaces the tracer's plain record.

``+name`` asks for more detail: ``+recompiles`` lists the guards of each failing entry,
``+graph_breaks`` shows the source around each frame of the break, ``+graph`` adds the DOT form,
``+perf`` adds running totals per function.
"""

from __future__ import annotations

import logging
import os
import sys
import warnings

from . import _events, _sources

ARTIFACTS = {
    "recompiles": "why a function recompiles: each failing guard, the user line that made it, and hints",
    "guards": "the guards of each compiled entry, one per line, with the user line that made each",
    "graph_breaks": "each graph break: the reason, the user line and the stack of inlined calls",
    "graph": "each captured graph as a table of nodes (+graph: also its DOT form)",
    "graph_code": "each captured graph as readable Python with shapes",
    "bytecode": "the original and the transformed bytecode of each compiled frame",
    "output_code": "the code the backend generated for each graph",
    "dynamic": "dynamic shapes: each dimension automatic dynamic makes dynamic (`automatic dynamic: L['x'] size(1) 8 -> 9`)",
    "perf": "the wall time of each compile phase, per graph (trace, guard_build, the inductor's lowering, scheduling, codegen, c_compile, cache_load, then backend and bytecode)",
}
COMPONENTS = {"torchferro": "torchferro's own messages (INFO; +torchferro for DEBUG)"}

ROOT = "torchferro"
_FORMAT = "[%(asctime)s.%(msecs)03d] %(name)s: [%(levelname)s] %(message)s"
_DATEFMT = "%H:%M:%S"
_MARK = "torchferro_artifact"

# Artifacts whose text replaces a plain record the tracer logs itself, with that record's level.
_REPLACES = {
    "recompiles": logging.INFO,
    "graph_breaks": logging.INFO,
    "graph": logging.DEBUG,
    "perf": logging.INFO,
    "output_code": logging.DEBUG,
}


def parse_spec(spec: str) -> dict[str, int]:
    """``"recompiles,+guards"`` as ``{"recompiles": INFO, "guards": DEBUG}``; ``all`` names every
    artifact. Raises ``ValueError`` naming the valid choices on an unknown name."""
    levels: dict[str, int] = {}
    for raw in spec.split(","):
        item = raw.strip()
        if not item:
            continue
        level = logging.INFO
        if item.startswith("+"):
            level, item = logging.DEBUG, item[1:].strip()
        if item == "all":
            for name in ARTIFACTS:
                levels[name] = min(level, levels.get(name, level))
        elif item in ARTIFACTS or item in COMPONENTS:
            levels[item] = min(level, levels.get(item, level))
        else:
            raise ValueError(
                f"unknown torchferro log name {item!r}; valid names: {', '.join([*ARTIFACTS, *COMPONENTS, 'all'])} (prefix with + for more detail)"
            )
    return levels


class _StderrHandler(logging.Handler):
    """Writes to whatever ``sys.stderr`` is at the time of the record (pytest's capture included)."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            sys.stderr.write(self.format(record) + "\n")
            sys.stderr.flush()
        except Exception:  # noqa: BLE001 - logging reports its own errors
            self.handleError(record)


class _ReplacedByArtifact(logging.Filter):
    """Drops the tracer's plain record while an artifact logs a richer version of it."""

    def __init__(self, levelno: int):
        super().__init__()
        self.levelno = levelno

    def filter(self, record: logging.LogRecord) -> bool:
        return getattr(record, _MARK, False) or record.levelno != self.levelno


class _State:
    def __init__(self) -> None:
        self.levels: dict[str, int] = {}
        self.handler: logging.Handler | None = None
        self.filters: dict[str, logging.Filter] = {}
        self.saved: dict[str, tuple[int, bool]] = {}
        self.subscribed = False
        # compile_id -> guard lines, for +recompiles
        self.guards: dict[str, list[str]] = {}
        # (filename, firstlineno, function) -> (compiles, seconds), for +perf
        self.perf: dict[tuple, tuple[int, float]] = {}


_state = _State()


def _log(artifact: str, msg: str, level: int = logging.INFO) -> None:
    logging.getLogger(f"{ROOT}.{artifact}").log(level, msg, extra={_MARK: True})


def _detailed(artifact: str) -> bool:
    return _state.levels.get(artifact, logging.INFO) <= logging.DEBUG


def set_logs(
    spec: str | None = None, *, all=None, torchferro=None, **artifacts
) -> None:
    """Chooses what torchferro logs, replacing any earlier choice (as ``torch._logging.set_logs``).

    ``spec`` is a ``TORCHFERRO_LOGS`` string (``"recompiles,+guards"``); keywords take ``True`` or
    ``False``, or a ``logging`` level (``logging.DEBUG`` is the ``+`` form): ``recompiles``,
    ``guards``, ``graph_breaks``, ``graph``, ``graph_code``, ``bytecode``, ``output_code``,
    ``perf``, ``all``, and ``torchferro`` for the package's own messages. ``set_logs()`` turns
    everything off and gives the ``torchferro`` logger back its earlier configuration."""
    levels = parse_spec(spec) if spec else {}

    def level_of(value) -> int | None:
        if value is None or value is False:
            return None
        return logging.INFO if value is True else int(value)

    for name, value in artifacts.items():
        if name not in ARTIFACTS:
            raise TypeError(
                f"set_logs() got an unknown artifact {name!r}; valid: {', '.join(ARTIFACTS)}"
            )
        if (level := level_of(value)) is not None:
            levels[name] = level
    if (level := level_of(all)) is not None:
        for name in ARTIFACTS:
            levels.setdefault(name, level)
    if (level := level_of(torchferro)) is not None:
        levels[ROOT] = level
    _apply(levels)


def _apply(levels: dict[str, int]) -> None:
    _restore()
    _state.levels = dict(levels)
    if not levels:
        return
    root = logging.getLogger(ROOT)
    _save(ROOT)
    root.propagate = False
    root.setLevel(levels.get(ROOT, logging.WARNING))
    if _state.handler is None:
        _state.handler = _StderrHandler()
        _state.handler.setFormatter(logging.Formatter(_FORMAT, _DATEFMT))
    root.addHandler(_state.handler)
    for name, level in levels.items():
        if name == ROOT:
            continue
        logger = logging.getLogger(f"{ROOT}.{name}")
        _save(logger.name)
        logger.setLevel(level)
        if name in _REPLACES:
            f = _ReplacedByArtifact(_REPLACES[name])
            logger.addFilter(f)
            _state.filters[logger.name] = f
    if any(name in ARTIFACTS for name in levels):
        _events.subscribe(_on_event)
        _state.subscribed = True


def _save(name: str) -> None:
    logger = logging.getLogger(name)
    _state.saved.setdefault(name, (logger.level, logger.propagate))


def _restore() -> None:
    if _state.subscribed:
        _events.unsubscribe(_on_event)
        _state.subscribed = False
    for name, f in _state.filters.items():
        logging.getLogger(name).removeFilter(f)
    _state.filters.clear()
    if _state.handler is not None:
        logging.getLogger(ROOT).removeHandler(_state.handler)
    for name, (level, propagate) in _state.saved.items():
        logger = logging.getLogger(name)
        logger.setLevel(level)
        logger.propagate = propagate
    _state.saved.clear()
    _state.levels = {}


def get_logs() -> dict[str, int]:
    """The artifacts on now, with their levels."""
    return dict(_state.levels)


def init_from_env() -> None:
    """Applies ``TORCHFERRO_LOGS`` (called once, at import). A bad value warns and is ignored
    rather than breaking the import."""
    spec = os.environ.get("TORCHFERRO_LOGS", "").strip()
    if not spec:
        return
    try:
        _apply(parse_spec(spec))
    except ValueError as e:
        warnings.warn(f"TORCHFERRO_LOGS ignored: {e}", RuntimeWarning, stacklevel=2)


# ---------------------------------------------------------------------------------------------
# Rendering events as artifact text.


def _on_event(event: dict) -> None:
    try:
        kind = event.get("kind")
        if kind == "compile":
            _on_compile(event)
        elif kind == "recompile" and "recompiles" in _state.levels:
            _log(
                "recompiles",
                recompile_text(
                    event, _state.guards if _detailed("recompiles") else None
                ),
            )
        elif kind in ("graph_break", "eager") and "graph_breaks" in _state.levels:
            _log(
                "graph_breaks",
                break_text(event, context=2 if _detailed("graph_breaks") else 0),
            )
    except Exception as e:  # noqa: BLE001 - a logging problem must never break the user's program
        logging.getLogger(ROOT).warning(
            "torchferro could not render a log artifact: %r", e
        )


def _title(event: dict) -> str:
    return f"{event['function']} (compile {event.get('compile_id', '?')}) in {event['filename']}:{event['firstlineno']}"


def _on_compile(event: dict) -> None:
    levels = _state.levels
    _state.guards[event["compile_id"]] = list(event.get("guards") or [])
    if "guards" in levels:
        _log("guards", guards_text(event))
    if "graph" in levels:
        text = f"TRACED GRAPH of {_title(event)}\n{graph_table(event.get('graph_dot', ''))}"
        if _detailed("graph"):
            text += "\n" + event.get("graph_dot", "").rstrip()
        _log("graph", text)
    if "graph_code" in levels:
        _log(
            "graph_code",
            f"TRACED GRAPH of {_title(event)}\n{event.get('graph_code', '').rstrip()}",
        )
    if "bytecode" in levels:
        _log("bytecode", bytecode_text(event))
    if "output_code" in levels:
        code = event.get("output_code")
        body = (
            code.rstrip()
            if code
            else "(none: the backend runs the captured graph as it is)"
        )
        _log("output_code", f"OUTPUT CODE of {_title(event)}\n{body}")
    if "perf" in levels:
        text = perf_text(event)
        if _detailed("perf"):
            key = (event["filename"], event["firstlineno"], event["function"])
            n, total = _state.perf.get(key, (0, 0.0))
            n, total = n + 1, total + sum((event.get("timings") or {}).values())
            _state.perf[key] = (n, total)
            text += f"\n    {event['function']} so far: {n} compile(s), {total * 1e3:.3f} ms"
        _log("perf", text)


def recompile_text(event: dict, guards: dict | None = None) -> str:
    """The tracer's recompile message with, under each failing guard, the user line where the
    guarded value was first used, and a hint when the same dimension keeps changing. ``guards``
    (compile id -> guard lines), when given, lists the guards of each failing entry.

    The event names the first failing guard of every cached entry, so a dimension that keeps
    changing shows up as one size failure per entry: the sizes compiled so far plus the new one."""
    lines = event["message"].split("\n")[:2]
    failures = event.get("failures") or []
    for failure in failures:
        lines.append(f"    - {failure['compile_id']}: {failure['reason']}")
        origin = failure.get("origin")
        if origin:
            lines.append(f"        first used at {_sources.where(origin)}")
            text = _sources.line_text(origin)
            if text:
                lines.append(f"            {text}")
        if guards is not None and failure["compile_id"] in guards:
            lines.append(f"        guards of {failure['compile_id']}:")
            lines.extend(f"            {g}" for g in guards[failure["compile_id"]])
    # (source, dim) -> the sizes compiled so far, oldest entry first, then the new size.
    sizes: dict[tuple[str, int], list[int]] = {}
    exprs: dict[tuple[str, int], str] = {}
    actual: dict[tuple[str, int], int] = {}
    for failure in reversed(failures):
        m = failure.get("mismatch")
        if m is None or m["property"] != "size":
            continue
        key = (failure["source"], m["index"])
        sizes.setdefault(key, []).append(m["expected"])
        exprs[key] = failure["expr"]
        # The newest entry's failure is listed first: its actual size is the call's.
        actual[key] = m["actual"]
    for (source, dim), seen in sizes.items():
        values = list(dict.fromkeys([*seen, actual[(source, dim)]]))
        if len(values) >= 3:
            expr = exprs[(source, dim)]
            lines.append(
                f"    hint: dimension {dim} of '{expr}' keeps changing (sizes {', '.join(map(str, values))}); "
                f"call torchferro.mark_dynamic({expr}, {dim}) before calling {event['function']}, or compile with "
                f"dynamic=True, to compile one graph for every size"
            )
    return "\n".join(lines)


def break_text(event: dict, context: int = 0) -> str:
    """The tracer's graph-break message with the text of each user line on the way to the break."""
    brk = event["break"]
    if event["kind"] == "eager":
        head = f"Graph break: running function {event['function']} eagerly: "
    else:
        head = f"Graph break in function {event['function']}: "
    lines = [f"{head}{brk['reason']} (at {_sources.where(brk['location']) or '?'})"]
    if len(brk.get("frames") or []) > 1:
        lines.append("  inlined call stack (innermost first):")
    for frame in _events.user_stack(brk, event["function"]):
        lines.append(f"    {frame['function']} at {_sources.where(frame)}")
        if context:
            for n, text, target in _sources.excerpt(frame, context):
                lines.append(f"      {'>' if target else ' '} {n:5d} | {text}")
        else:
            text = _sources.line_text(frame)
            if text:
                lines.append(f"        {text}")
    return "\n".join(lines)


def guards_text(event: dict) -> str:
    lines = [f"GUARDS of {_title(event)}:"]
    for g in event.get("guard_records") or []:
        origin = g["origin"]
        if origin:
            text = _sources.line_text(origin)
            lines.append(
                f"  {g['text']}  # {_sources.where(origin)}"
                + (f": {text}" if text else "")
            )
        else:
            lines.append(f"  {g['text']}")
    return "\n".join(lines)


def graph_table(dot: str) -> str:
    """The graph's nodes, one per row: name, target, inputs, tensor metadata (from its DOT form)."""
    nodes = parse_dot(dot)
    rows = [("name", "target", "inputs", "meta")]
    for n in nodes:
        rows.append((n["name"], n["target"], ", ".join(n["inputs"]), n["meta"]))
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    return "\n".join(
        "  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows
    )


def parse_dot(dot: str) -> list[dict]:
    """The nodes of a graph's DOT text, in order, each with ``name``, ``target``, ``meta`` and
    ``inputs``."""
    import re

    node_re = re.compile(r'^\s*"((?:[^"\\]|\\.)*)" \[label="((?:[^"\\]|\\.)*)"\];$')
    edge_re = re.compile(r'^\s*"((?:[^"\\]|\\.)*)" -> "((?:[^"\\]|\\.)*)";$')
    nodes: dict[str, dict] = {}
    for line in dot.splitlines():
        m = node_re.match(line)
        if m:
            parts = m.group(2).split("\\n")
            nodes[m.group(1)] = {
                "name": parts[0],
                "target": parts[1] if len(parts) > 1 else "",
                "meta": parts[2] if len(parts) > 2 else "",
                "inputs": [],
            }
            continue
        m = edge_re.match(line)
        if m and m.group(2) in nodes:
            nodes[m.group(2)]["inputs"].append(m.group(1))
    return list(nodes.values())


def bytecode_text(event: dict) -> str:
    original = _sources.find_code(
        event["filename"], event["firstlineno"], event["function"]
    )
    text = f"ORIGINAL BYTECODE of {_title(event)}\n"
    text += (
        _sources.disassemble(original).rstrip()
        if original is not None
        else "(no original code object: generated by torchferro)"
    )
    text += f"\nMODIFIED BYTECODE of {_title(event)}\n"
    code = event.get("transformed_code")
    text += _sources.disassemble(code).rstrip() if code is not None else "(none)"
    return text


def perf_text(event: dict) -> str:
    timings = event.get("timings") or {}
    phases = ", ".join(f"{k} {v * 1e3:.3f} ms" for k, v in timings.items())
    return f"Compile time of {_title(event)}: {phases}, total {sum(timings.values()) * 1e3:.3f} ms"
