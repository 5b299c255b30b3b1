"""``torchferro.explain(fn)(*args, **kwargs)``: what compiling ``fn`` captures, in one object.

It runs ``fn`` once, compiled with a backend that records each graph it is given, and gathers the
tracer's events meanwhile (graphs, guards, graph breaks, timings). Nothing global is reset: the
frames compiled here get entries of their own, keyed by this call's backend, next to any others.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from . import _events, _sources

# Backends are told apart by identity; keeping each one alive keeps its identity from being
# reused by a later call's backend (which would then find this call's entries and capture nothing).
_KEEP_ALIVE: list = []


@dataclass
class BreakReason:
    """One graph break: ``reason`` (what could not be traced), where in user code (``filename``,
    ``lineno``, ``function``), the stack of inlined calls that led there (``user_stack``, innermost
    first, each ``"function at file:line"``; ``frames`` holds the same as records
    ``{"function", "filename", "lineno"}``), and whether the whole frame ran eagerly instead."""

    reason: str
    function: str
    filename: str | None
    lineno: int | None
    user_stack: list[str] = field(default_factory=list)
    eager: bool = False
    frames: list[dict] = field(default_factory=list)

    @property
    def location(self) -> str | None:
        return f"{self.filename}:{self.lineno}" if self.filename else None

    @property
    def line(self) -> str:
        """The text of the user line where the graph broke."""
        if not self.filename:
            return ""
        return _sources.line_text({"filename": self.filename, "lineno": self.lineno})

    def __str__(self) -> str:
        return f"{self.reason} (at {self.location or '?'})"


@dataclass
class CompiledFrame:
    """One compile of one frame: its graph, guards and timings."""

    function: str
    filename: str
    firstlineno: int
    compile_id: str
    graph: str
    ops: list[str]
    guards: list[str]
    break_reason: str | None
    timings: dict[str, float]
    graph_module: object = None


@dataclass
class ExplainOutput:
    """What ``torchferro.explain`` found. Field names follow ``torch._dynamo.explain``'s.

    - ``graphs``: the readable code (with shapes) of each captured graph that has ops, in compile
      order; ``graph_modules``: the ``torch.fx.GraphModule`` the backend got for each of them.
    - ``graph_count``, ``graph_break_count`` (distinct break sites), ``break_reasons``
      (``BreakReason``, with user locations), ``op_count``, ``ops_per_graph``.
    - ``out_guards``: the guards of every compiled entry, one line each.
    - ``compile_times``: compile id -> {phase: seconds}.
    - ``compiles``: every compile (empty graphs too), as ``CompiledFrame``.
    """

    graphs: list[str]
    graph_count: int
    graph_break_count: int
    break_reasons: list[BreakReason]
    op_count: int
    ops_per_graph: list[list[str]]
    out_guards: list[str]
    compile_times: dict[str, dict[str, float]]
    graph_modules: list = field(default_factory=list)
    compiles: list[CompiledFrame] = field(default_factory=list)
    recompiles: list[str] = field(default_factory=list)

    def __str__(self) -> str:
        out = [
            f"Graph Count: {self.graph_count}",
            f"Graph Break Count: {self.graph_break_count}",
            f"Op Count: {self.op_count}",
            "Break Reasons:",
        ]
        for i, b in enumerate(self.break_reasons, 1):
            out.append(f"  Break Reason {i}:")
            out.append(
                f"    Reason: {b.reason}"
                + ("  (the whole function ran eagerly)" if b.eager else "")
            )
            out.append("    User Stack:")
            for frame, record in zip(b.user_stack, b.frames):
                out.append(f"      {frame}")
                text = _sources.line_text(record)
                if text:
                    out.append(f"        {text}")
        out.append("Ops per Graph:")
        for i, ops in enumerate(self.ops_per_graph, 1):
            out.append(f"  Ops {i}:")
            out.extend(f"    {op}" for op in ops)
        out.append("Out Guards:")
        for i, g in enumerate(self.out_guards, 1):
            out.append(f"  Guard {i}:")
            out.append(f"    {g}")
        out.append("Compile Times:")
        for c in self.compiles:
            t = c.timings
            phases = ", ".join(f"{k} {v * 1e3:.3f} ms" for k, v in t.items())
            out.append(
                f"  {c.compile_id} {c.function}: {phases}, total {sum(t.values()) * 1e3:.3f} ms"
            )
        return "\n".join(out) + "\n"


class _Recorder:
    """A torch.compile-style backend that keeps every graph module it is given, then hands it to
    ``inner`` when there is one (else runs it as it is)."""

    def __init__(self, inner=None) -> None:
        self.graph_modules: list = []
        self.inner = inner

    def __call__(self, gm, example_inputs):
        self.graph_modules.append(gm)
        if self.inner is not None:
            return self.inner(gm, example_inputs)
        return gm.forward


def _break_from(event: dict, eager: bool) -> BreakReason:
    brk = event["break"]
    location = brk["location"]
    frames = _events.user_stack(brk, event["function"])
    return BreakReason(
        reason=brk["reason"],
        function=frames[0]["function"] if frames else event["function"],
        filename=location["filename"] if location else None,
        lineno=location["lineno"] if location else None,
        user_stack=[f"{f['function']} at {_sources.where(f)}" for f in frames],
        eager=eager,
        frames=frames,
    )


def explain(fn, *extra_args, backend=None, **extra_kwargs):
    """``explain(fn)(*args, **kwargs)`` runs ``fn(*args, **kwargs)`` compiled and returns an
    ``ExplainOutput``. ``fn`` may be a function, an ``nn.Module`` or something
    ``torchferro.compile`` returned. (``explain(fn, *args)`` is accepted too, as torch did.)

    By default the graphs go to a backend that only records them. ``backend=`` (keyword only)
    compiles with a real one instead, so that ``compile_times`` shows its phases too: with
    ``"inductor"``, ``lowering``, ``scheduling``, ``codegen``, then ``c_compile`` or only
    ``cache_load`` when the kernels were already built. ``graph_modules`` holds graph modules for
    callable backends only. A named backend (``"inductor"``, ``"eager"``) shares its cache
    entries with ``torchferro.compile``: frames already compiled for it are not compiled again,
    and so not reported (``torchferro.compiler.reset()`` first gives the whole picture)."""
    if extra_args or extra_kwargs:
        return explain(fn, backend=backend)(*extra_args, **extra_kwargs)

    def inner(*args, **kwargs) -> ExplainOutput:
        from . import _C, OptimizedModule
        from . import compile as _compile

        target = fn
        if isinstance(target, OptimizedModule):
            target = target._orig_mod
        elif isinstance(target, _C.CompiledFunction):
            target = target.__wrapped__
        recorder = _Recorder(backend if callable(backend) else None)
        _KEEP_ALIVE.append(recorder)
        events: list[dict] = []
        _events.subscribe(events.append)
        try:
            chosen = recorder if backend is None or callable(backend) else backend
            _compile(target, backend=chosen)(*args, **kwargs)
        finally:
            _events.unsubscribe(events.append)
        return _summarize(events, recorder.graph_modules)

    return inner


def _summarize(events: list[dict], graph_modules: list) -> ExplainOutput:
    compiles: list[CompiledFrame] = []
    breaks: list[BreakReason] = []
    seen_breaks: set[tuple] = set()
    recompiles: list[str] = []
    modules = iter(graph_modules)
    for e in events:
        kind = e.get("kind")
        if kind == "compile":
            ops = list(e.get("ops") or [])
            compiles.append(
                CompiledFrame(
                    function=e["function"],
                    filename=e["filename"],
                    firstlineno=e["firstlineno"],
                    compile_id=e["compile_id"],
                    graph=e.get("graph_code", ""),
                    ops=ops,
                    guards=list(e.get("guards") or []),
                    break_reason=e.get("break_reason"),
                    timings=dict(e.get("timings") or {}),
                    # The backend is called for every graph with ops, before the compile event.
                    graph_module=next(modules, None) if ops else None,
                )
            )
        elif kind in ("graph_break", "eager"):
            b = _break_from(e, eager=kind == "eager")
            # A break inside inlined calls is met again by each caller frame as it runs: one site.
            key = (b.reason, b.location)
            if key not in seen_breaks:
                seen_breaks.add(key)
                breaks.append(b)
        elif kind == "recompile":
            recompiles.append(e["message"])
    with_ops = [c for c in compiles if c.ops]
    return ExplainOutput(
        graphs=[c.graph for c in with_ops],
        graph_count=len(with_ops),
        graph_break_count=len(breaks),
        break_reasons=breaks,
        op_count=sum(len(c.ops) for c in with_ops),
        ops_per_graph=[c.ops for c in with_ops],
        out_guards=[g for c in compiles for g in c.guards],
        compile_times={c.compile_id: c.timings for c in compiles},
        graph_modules=[c.graph_module for c in with_ops],
        compiles=compiles,
        recompiles=recompiles,
    )
