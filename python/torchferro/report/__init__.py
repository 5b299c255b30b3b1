"""``python -m torchferro.report DIR``: one self-contained HTML page from the JSON-lines traces that
``TORCHFERRO_TRACE_DIR=DIR`` (or ``torchferro.set_trace_dir(DIR)``) wrote.

Per user function: its source with the lines that made guards, graph breaks and recompiles
marked; its graph breaks with the inlined call stack; its recompiles with the failing guards; and
per compile the graph as a picture (Graphviz ``dot -Tsvg`` when ``dot`` is installed, the DOT text
otherwise), the graph's code, its guards, timings and the original and transformed bytecode.
"""

from __future__ import annotations

import os
import shutil
import time

from .. import _sources
from ._html import _bytecode_html, _e, _ms, highlight_python, render_svg
from ._traces import Code, Function, Run, load

__all__ = ["load", "render", "write_report"]


_CSS = """
:root {
  --bg: #f6f7fb; --panel: #ffffff; --ink: #0f172a; --muted: #64748b; --line: #e2e8f0;
  --accent: #4f46e5; --accent-soft: #eef2ff; --red: #dc2626; --red-soft: #fef2f2;
  --amber: #b45309; --amber-soft: #fffbeb; --green: #15803d; --green-soft: #f0fdf4;
  --blue: #0369a1; --blue-soft: #f0f9ff; --code-bg: #0f172a08;
  --mono: "DejaVu Sans Mono", "JetBrains Mono", Menlo, Consolas, monospace;
}
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--ink);
  font: 14px/1.5 "Inter", "DejaVu Sans", "Segoe UI", Helvetica, Arial, sans-serif; }
a { color: var(--accent); text-decoration: none; }
a:hover { text-decoration: underline; }
header.top { background: linear-gradient(120deg, #1e1b4b, #312e81 55%, #4338ca); color: #fff; padding: 22px 32px 20px; }
header.top h1 { margin: 0; font-size: 22px; letter-spacing: .2px; }
header.top h1 .logo { display: inline-block; background: #fff2; border-radius: 8px; padding: 1px 9px; margin-right: 8px; }
header.top .meta { margin-top: 6px; color: #c7d2fe; font-size: 12.5px; font-family: var(--mono); }
.layout { display: grid; grid-template-columns: 260px minmax(0, 1fr); gap: 24px; padding: 24px 32px 60px; }
nav.toc { position: sticky; top: 16px; align-self: start; max-height: calc(100vh - 32px); overflow: auto;
  background: var(--panel); border: 1px solid var(--line); border-radius: 12px; padding: 14px 12px; }
nav.toc h2 { font-size: 11px; text-transform: uppercase; letter-spacing: .08em; color: var(--muted); margin: 4px 8px 8px; }
nav.toc ol { list-style: none; margin: 0; padding: 0; }
nav.toc li a { display: flex; justify-content: space-between; align-items: center; gap: 6px; padding: 6px 8px; border-radius: 8px; color: var(--ink); }
nav.toc li a:hover { background: var(--accent-soft); text-decoration: none; }
nav.toc li a .nm { font-family: var(--mono); font-size: 12.5px; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
nav.toc li.sub a { padding-left: 20px; color: var(--muted); font-size: 12.5px; }
main { min-width: 0; }
.cards { display: grid; grid-template-columns: repeat(auto-fit, minmax(150px, 1fr)); gap: 14px; margin-bottom: 20px; }
.card { background: var(--panel); border: 1px solid var(--line); border-radius: 12px; padding: 14px 16px; }
.card .v { font-size: 26px; font-weight: 700; }
.card .l { color: var(--muted); font-size: 12px; text-transform: uppercase; letter-spacing: .06em; }
.card.bad .v { color: var(--red); } .card.warn .v { color: var(--amber); }
section.panel { background: var(--panel); border: 1px solid var(--line); border-radius: 14px; padding: 18px 22px; margin-bottom: 22px; }
section.panel > h2 { margin: 0 0 2px; font-size: 19px; font-family: var(--mono); }
.where { color: var(--muted); font-family: var(--mono); font-size: 12px; word-break: break-all; }
table.overview { width: 100%; border-collapse: collapse; font-size: 13px; }
table.overview th { text-align: left; color: var(--muted); font-weight: 600; font-size: 11.5px; text-transform: uppercase; letter-spacing: .05em; border-bottom: 1px solid var(--line); padding: 6px 10px; }
table.overview td { border-bottom: 1px solid var(--line); padding: 8px 10px; vertical-align: top; }
table.overview td.num { text-align: right; font-variant-numeric: tabular-nums; }
table.overview tr:last-child td { border-bottom: none; }
.badges { display: flex; flex-wrap: wrap; gap: 6px; margin: 10px 0 4px; }
.badge { display: inline-block; font-size: 11.5px; font-weight: 600; padding: 2px 9px; border-radius: 999px; background: var(--accent-soft); color: var(--accent); white-space: nowrap; }
.badge.red { background: var(--red-soft); color: var(--red); }
.badge.amber { background: var(--amber-soft); color: var(--amber); }
.badge.green { background: var(--green-soft); color: var(--green); }
.badge.gray { background: #f1f5f9; color: var(--muted); }
details { border: 1px solid var(--line); border-radius: 10px; margin: 12px 0; background: #fff; }
details > summary { cursor: pointer; list-style: none; padding: 9px 14px; font-weight: 600; display: flex; align-items: center; gap: 8px; }
details > summary::-webkit-details-marker { display: none; }
details > summary::before { content: "\\25B8"; color: var(--muted); transition: transform .15s; display: inline-block; }
details[open] > summary::before { transform: rotate(90deg); }
details > summary .count { color: var(--muted); font-weight: 500; }
details > .body { padding: 0 14px 14px; }
details.compile { border-left: 4px solid var(--accent); }
details.compile.broken { border-left-color: var(--red); }
pre.code { margin: 0; padding: 10px 12px; background: #f8fafc; border: 1px solid var(--line); border-radius: 8px; overflow: auto;
  font: 12.5px/1.55 var(--mono); }
.src { font: 12.5px/1.6 var(--mono); border: 1px solid var(--line); border-radius: 8px; overflow: auto; background: #f8fafc; }
.src .ln { display: grid; grid-template-columns: 48px minmax(0, 1fr) auto; align-items: baseline; }
.src .ln .no { color: #94a3b8; text-align: right; padding-right: 12px; user-select: none; }
.src .ln .tx { white-space: pre; }
.src .ln .tags { padding: 0 8px; display: flex; gap: 4px; }
.src .ln .tags span { font: 600 10.5px/1.6 "DejaVu Sans", sans-serif; padding: 0 7px; border-radius: 999px; }
.src .ln.brk { background: var(--red-soft); box-shadow: inset 3px 0 var(--red); }
.src .ln.rec { background: var(--amber-soft); box-shadow: inset 3px 0 var(--amber); }
.src .ln.grd { background: var(--blue-soft); }
.tag-brk { background: var(--red); color: #fff; } .tag-rec { background: var(--amber); color: #fff; } .tag-grd { background: #bae6fd; color: #075985; }
.k { color: #7c3aed; font-weight: 600; } .s { color: #047857; } .c { color: #94a3b8; font-style: italic; }
.n { color: #b45309; } .f { color: #2563eb; font-weight: 600; } .b { color: #0e7490; } .d { color: #db2777; }
.bytecode .op { color: #7c3aed; font-weight: 600; } .bytecode .arg { color: #334155; }
.reason { border-left: 4px solid var(--red); background: var(--red-soft); border-radius: 8px; padding: 10px 14px; margin: 10px 0; }
.reason.rec { border-left-color: var(--amber); background: var(--amber-soft); }
.reason .what { font-weight: 600; }
.reason .loc { font-family: var(--mono); font-size: 12px; color: var(--muted); margin-top: 4px; }
.reason code, .stack code { font-family: var(--mono); font-size: 12.5px; background: #ffffffb0; padding: 1px 6px; border-radius: 5px; }
.stack { margin: 8px 0 0; padding: 0; list-style: none; }
.stack li { margin: 4px 0; font-size: 13px; }
.stack li .fn { font-family: var(--mono); font-weight: 600; }
table.guards { width: 100%; border-collapse: collapse; font-size: 12.5px; }
table.guards th { text-align: left; color: var(--muted); font-size: 11px; text-transform: uppercase; letter-spacing: .05em; padding: 5px 8px; border-bottom: 1px solid var(--line); }
table.guards td { padding: 6px 8px; border-bottom: 1px solid var(--line); vertical-align: top; }
table.guards td.kind span { font: 600 10.5px/1.6 var(--mono); background: #f1f5f9; color: #334155; padding: 1px 7px; border-radius: 5px; white-space: nowrap; }
table.guards td.body { font-family: var(--mono); word-break: break-word; }
table.guards td.user { font-family: var(--mono); color: var(--muted); }
table.guards td.user b { color: var(--ink); font-weight: 500; }
table.guards td.user .lno { display: inline-block; min-width: 30px; color: #94a3b8; }
table.guards tr.changed td { background: var(--amber-soft); }
table.guards td.kind .badge { margin-left: 4px; font-size: 10px; padding: 0 6px; }
.graph { display: flex; justify-content: center; padding: 12px; border: 1px solid var(--line); border-radius: 8px; background: #fcfcfd; overflow: auto; max-height: 720px; }
.graph svg { max-width: 100%; height: auto; }
.note { color: var(--muted); font-size: 12.5px; margin: 6px 0; }
.muted { color: var(--muted); }
.timing { display: flex; height: 10px; border-radius: 999px; overflow: hidden; background: #f1f5f9; margin: 6px 0 4px; max-width: 420px; }
.timing span { display: block; height: 100%; }
.legend { display: flex; flex-wrap: wrap; gap: 12px; font-size: 12px; color: var(--muted); margin: 4px 0 8px; }
.legend i { display: inline-block; width: 10px; height: 10px; border-radius: 3px; margin-right: 5px; vertical-align: -1px; }
.grid2 { display: grid; grid-template-columns: minmax(0, 1fr) minmax(0, 1fr); gap: 12px; }
.grid2 h4 { margin: 4px 0 6px; font-size: 12px; color: var(--muted); text-transform: uppercase; letter-spacing: .05em; }
.empty { text-align: center; padding: 60px; color: var(--muted); }
footer { color: var(--muted); font-size: 12px; text-align: center; padding: 0 0 30px; }
"""

_PHASE_COLORS = [
    "#6366f1",
    "#06b6d4",
    "#f59e0b",
    "#10b981",
    "#ef4444",
    "#8b5cf6",
    "#84cc16",
    "#ec4899",
    "#64748b",
]


def _timing_html(timings: dict[str, float], colors: dict[str, str]) -> str:
    total = sum(timings.values()) or 1.0
    bar = "".join(
        f'<span style="width:{v / total * 100:.2f}%;background:{colors.setdefault(k, _PHASE_COLORS[len(colors) % len(_PHASE_COLORS)])}" title="{_e(k)} {_ms(v)}"></span>'
        for k, v in timings.items()
    )
    legend = "".join(
        f'<span><i style="background:{colors[k]}"></i>{_e(k)} {_ms(v)}</span>'
        for k, v in timings.items()
    )
    return f'<div class="timing">{bar}</div><div class="legend">{legend}<span>total <b>{_ms(sum(timings.values()))}</b></span></div>'


def _stack_html(brk: dict | None) -> str:
    if not brk:
        return ""
    frames = brk.get("stack") or []
    if not frames and brk.get("location"):
        frames = [
            {
                "function": None,
                "location": brk["location"],
                "text": brk.get("location_text"),
            }
        ]
    items = []
    for f in frames:
        name = (
            f'<span class="fn">{_e(f["function"])}</span> at '
            if f.get("function")
            else ""
        )
        text = f" <code>{_e(f['text'])}</code>" if f.get("text") else ""
        items.append(
            f'<li>{name}<span class="where">{_e(_sources.where(f["location"]))}</span>{text}</li>'
        )
    head = (
        '<div class="note">inlined call stack, innermost first:</div>'
        if brk.get("stack")
        else ""
    )
    return head + '<ul class="stack">' + "".join(items) + "</ul>"


def _break_html(rec: dict) -> str:
    brk = rec.get("break") or {"reason": rec.get("reason"), "location": None}
    eager = rec["kind"] == "eager"
    title = "whole function runs eagerly" if eager else "graph break"
    times = rec.get("_times", 1)
    again = f' <span class="badge gray">met {times} times</span>' if times > 1 else ""
    return (
        f'<div class="reason"><div class="what"><span class="badge red">{title}</span> {_e(brk.get("reason"))}{again}</div>'
        f"{_stack_html(brk)}</div>"
    )


def _recompile_html(rec: dict) -> str:
    items = []
    for f in rec.get("failures") or []:
        origin = ""
        if f.get("origin"):
            text = (
                f" <code>{_e(f['origin_text'])}</code>" if f.get("origin_text") else ""
            )
            origin = f'<div class="loc">value first used at {_e(_sources.where(f["origin"]))}{text}</div>'
        items.append(
            f'<li><span class="badge amber">{_e(f["compile_id"])}</span> {_e(f["reason"])}{origin}</li>'
        )
    return f'<div class="reason rec"><div class="what">Recompiled because these guards failed:</div><ul class="stack">{"".join(items)}</ul></div>'


def _guards_html(guards: list, previous: list | None = None) -> str:
    """The guard table; with the previous compile's guards, rows that differ are marked."""
    before = (
        {g["text"] if isinstance(g, dict) else g for g in previous}
        if previous is not None
        else None
    )
    rows = []
    for g in guards:
        changed = (
            before is not None
            and (g["text"] if isinstance(g, dict) else g) not in before
        )
        if isinstance(g, str):
            # A trace from an older writer: the line as it is.
            g = {"kind": "", "text": g, "origin": None}
        body = g["text"]
        if g.get("kind") and body.startswith(g["kind"] + " "):
            body = body[len(g["kind"]) + 1 :]
        if g.get("origin"):
            at = _sources.where(g["origin"])
            body = body.removesuffix(f"  # {at}")
            user = f'<span class="lno" title="{_e(at)}">{g["origin"]["lineno"]}</span> <b>{_e(g.get("origin_text"))}</b>'
        else:
            user = '<span class="muted">global state</span>'
        tag = ' <span class="badge amber">changed</span>' if changed else ""
        rows.append(
            f'<tr class="{"changed" if changed else ""}"><td class="kind"><span>{_e(g.get("kind"))}</span>{tag}</td>'
            f'<td class="body">{_e(body)}</td><td class="user">{user}</td></tr>'
        )
    return (
        '<table class="guards"><tr><th>guard</th><th>checks</th><th>user line</th></tr>'
        + "".join(rows)
        + "</table>"
    )


def _source_html(fn: Function) -> str:
    if not fn.lines:
        return '<p class="muted">Source not available.</p>'
    marks: dict[int, set[str]] = {}
    guard_sources: dict[int, set] = {}

    def mark(location: dict | None, cls: str) -> None:
        if location and location["filename"] == fn.filename:
            marks.setdefault(location["lineno"], set()).add(cls)

    for rec in fn.breaks:
        brk = rec.get("break") or {}
        mark(brk.get("location"), "brk")
        for f in brk.get("stack") or []:
            mark(f.get("location"), "brk")
    for rec in fn.recompiles:
        for f in rec.get("failures") or []:
            mark(f.get("origin"), "rec")
    for c in fn.compiles:
        for g in c.get("guards") or []:
            origin = g.get("origin") if isinstance(g, dict) else None
            if origin and origin["filename"] == fn.filename:
                guard_sources.setdefault(origin["lineno"], set()).add(
                    (g.get("kind"), g.get("source") or g.get("text"))
                )
                marks.setdefault(origin["lineno"], set()).add("grd")
    rows = []
    for i, text in enumerate(highlight_python(fn.lines)):
        n = fn.start + i
        cls = marks.get(n, set())
        main = (
            "brk"
            if "brk" in cls
            else "rec"
            if "rec" in cls
            else "grd"
            if "grd" in cls
            else ""
        )
        tags = []
        if "brk" in cls:
            tags.append('<span class="tag-brk">graph break</span>')
        if "rec" in cls:
            tags.append('<span class="tag-rec">recompile</span>')
        if n in guard_sources:
            k = len(guard_sources[n])
            tags.append(
                f'<span class="tag-grd">{k} guard{"s" if k != 1 else ""}</span>'
            )
        rows.append(
            f'<div class="ln {main}"><span class="no">{n}</span><span class="tx">{text or " "}</span><span class="tags">{"".join(tags)}</span></div>'
        )
    legend = (
        '<div class="legend"><span><i style="background:var(--red)"></i>graph break</span>'
        '<span><i style="background:var(--amber)"></i>guard that failed (recompile)</span>'
        '<span><i style="background:#bae6fd"></i>line that made guards</span></div>'
    )
    return legend + '<div class="src">' + "".join(rows) + "</div>"


def _compile_html(
    fn: Function,
    code: Code,
    c: dict,
    dot_path: str | None,
    colors: dict,
    previous: dict | None = None,
) -> str:
    cid = c.get("compile_id", "?")
    ops = c.get("ops") or []
    broken = bool(c.get("break_reason"))
    name = (
        code.name
        if code.resume_line is None
        else f"resume after line {code.resume_line}"
    )
    badges = [f'<span class="badge">{len(ops)} op{"s" if len(ops) != 1 else ""}</span>']
    badges.append(
        f'<span class="badge gray">{len(c.get("guards") or [])} guards</span>'
    )
    if broken:
        badges.append('<span class="badge red">ends in a graph break</span>')
    badges.append(
        f'<span class="badge gray">{_ms(sum((c.get("timings") or {}).values()))}</span>'
    )
    parts = [
        (
            f'<details class="compile{" broken" if broken else ""}" id="{fn.anchor}-c{_e(cid).replace("/", "-")}"{"" if previous else " open"}>'
            f'<summary>Compile {_e(cid)} · <span style="font-family:var(--mono)">{_e(name)}</span> {"".join(badges)}</summary><div class="body">'
        )
    ]
    if c.get("timings"):
        parts.append(_timing_html(c["timings"], colors))
    if broken:
        parts.append(
            _break_html(
                {
                    "kind": "graph_break",
                    "break": c.get("break"),
                    "reason": c.get("break_reason"),
                }
            )
        )
    dot = c.get("graph_dot") or ""
    svg = render_svg(dot, dot_path)
    if svg:
        graph = f'<div class="graph">{svg}</div>'
    else:
        why = (
            "Graphviz <code>dot</code> was not found"
            if not dot_path
            else "Graphviz <code>dot</code> failed"
        )
        graph = f'<p class="note">{why}: the graph is shown as DOT text (install Graphviz, e.g. <code>apt-get install graphviz</code>, for a picture).</p><pre class="code dot">{_e(dot)}</pre>'
    parts.append(
        f'<details open><summary>Graph <span class="count">({len(ops)} op{"s" if len(ops) != 1 else ""})</span></summary><div class="body">{graph}</div></details>'
    )
    code_lines = (c.get("graph_code") or "").rstrip().splitlines()
    parts.append(
        '<details><summary>Graph code</summary><div class="body"><pre class="code">'
        + "\n".join(highlight_python(code_lines))
        + "</pre></div></details>"
    )
    parts.append(
        f'<details open><summary>Guards <span class="count">({len(c.get("guards") or [])})</span></summary><div class="body">{_guards_html(c.get("guards") or [], previous.get("guards") if previous else None)}</div></details>'
    )
    if c.get("output_code"):
        parts.append(
            f'<details><summary>Output code</summary><div class="body"><pre class="code">{_e(c["output_code"])}</pre></div></details>'
        )
    parts.append(
        '<details><summary>Bytecode <span class="count">(original and transformed)</span></summary><div class="body"><div class="grid2">'
        f"<div><h4>original</h4>{_bytecode_html(c.get('original_bytecode'))}</div>"
        f"<div><h4>transformed</h4>{_bytecode_html(c.get('bytecode'))}</div></div></div></details>"
    )
    parts.append("</div></details>")
    return "".join(parts)


def _function_html(fn: Function, dot_path: str | None, colors: dict) -> str:
    n_breaks = len(fn.breaks)
    badges = [
        f'<span class="badge">{fn.graph_count} graph{"s" if fn.graph_count != 1 else ""}</span>',
        f'<span class="badge gray">{len(fn.compiles)} compile{"s" if len(fn.compiles) != 1 else ""}</span>',
    ]
    if n_breaks:
        badges.append(
            f'<span class="badge red">{n_breaks} graph break{"s" if n_breaks != 1 else ""}</span>'
        )
    if fn.recompiles:
        badges.append(
            f'<span class="badge amber">{len(fn.recompiles)} recompile{"s" if len(fn.recompiles) != 1 else ""}</span>'
        )
    badges.append(
        f'<span class="badge green">{_ms(fn.compile_seconds)} compiling</span>'
    )
    out = [
        (
            f'<section class="panel" id="{fn.anchor}"><h2>{_e(fn.name)}</h2>'
            f'<div class="where">{_e(fn.filename)}:{fn.firstlineno}</div><div class="badges">{"".join(badges)}</div>'
        )
    ]
    out.append(
        f'<details open><summary>Source</summary><div class="body">{_source_html(fn)}</div></details>'
    )
    if fn.breaks:
        out.append(
            f'<details open><summary>Graph breaks <span class="count">({n_breaks})</span></summary><div class="body">'
            + "".join(_break_html(b) for b in fn.breaks)
            + "</div></details>"
        )
    if fn.recompiles:
        out.append(
            f'<details open><summary>Recompiles <span class="count">({len(fn.recompiles)})</span></summary><div class="body">'
            + "".join(_recompile_html(r) for r in fn.recompiles)
            + "</div></details>"
        )
    for code in fn.codes.values():
        previous = None
        for c in code.compiles:
            out.append(_compile_html(fn, code, c, dot_path, colors, previous))
            previous = c
    out.append("</section>")
    return "".join(out)


def render(
    runs: list[Run],
    dot_path: str | None = None,
    title: str = "torchferro compile report",
) -> str:
    """The report page for ``runs`` (see ``load``) as one HTML string. ``dot_path`` is the
    Graphviz ``dot`` to draw graphs with (None: show DOT text)."""
    funcs: list[tuple[int, Function]] = []
    for r, run in enumerate(runs):
        for i, fn in enumerate(run.functions.values()):
            fn.anchor = f"r{r}-f{i}"
            funcs.append((r, fn))
    n_graphs = sum(fn.graph_count for _, fn in funcs)
    n_breaks = sum(len(fn.breaks) for _, fn in funcs)
    n_recompiles = sum(len(fn.recompiles) for _, fn in funcs)
    total = sum(fn.compile_seconds for _, fn in funcs)
    warnings = [w for run in runs for w in run.warnings]
    metas = []
    for run in runs:
        s = run.start
        bits = [" ".join(s.get("argv") or []) or os.path.basename(run.path)]
        if s.get("pid"):
            bits.append(f"pid {s['pid']}")
        if s.get("python"):
            bits.append(f"Python {s['python']}")
        if s.get("torch"):
            bits.append(f"torch {s['torch']}")
        if s.get("time"):
            bits.append(time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(s["time"])))
        metas.append(f"<div>{_e(' · '.join(bits))}</div>")

    cards = [
        ("functions", len(funcs), ""),
        ("graphs", n_graphs, ""),
        ("graph breaks", n_breaks, "bad" if n_breaks else ""),
        ("recompiles", n_recompiles, "warn" if n_recompiles else ""),
        ("compile time", _ms(total), ""),
    ]
    if warnings:
        cards.append(("warnings", len(warnings), "bad"))
    cards_html = "".join(
        f'<div class="card {cls}"><div class="v">{_e(v)}</div><div class="l">{_e(label)}</div></div>'
        for label, v, cls in cards
    )

    toc = [
        '<nav class="toc"><h2>Contents</h2><ol>',
        '<li><a href="#overview"><span class="nm">Overview</span></a></li>',
    ]
    if warnings:
        toc.append('<li><a href="#warnings"><span class="nm">Warnings</span></a></li>')
    for _, fn in funcs:
        flag = ""
        if fn.breaks:
            flag = f'<span class="badge red">{len(fn.breaks)}</span>'
        elif fn.recompiles:
            flag = f'<span class="badge amber">{len(fn.recompiles)}</span>'
        toc.append(
            f'<li><a href="#{fn.anchor}"><span class="nm">{_e(fn.name)}</span>{flag}</a></li>'
        )
        for code in fn.codes.values():
            for c in code.compiles:
                cid = c.get("compile_id", "?")
                label = f"{cid}" + (
                    f" · resume @{code.resume_line}" if code.resume_line else ""
                )
                toc.append(
                    f'<li class="sub"><a href="#{fn.anchor}-c{_e(cid).replace("/", "-")}"><span class="nm">{_e(label)}</span></a></li>'
                )
    toc.append("</ol></nav>")

    rows = []
    for _, fn in funcs:
        rows.append(
            f'<tr><td><a href="#{fn.anchor}" style="font-family:var(--mono)">{_e(fn.name)}</a><div class="where">{_e(fn.filename)}:{fn.firstlineno}</div></td>'
            f'<td class="num">{fn.graph_count}</td><td class="num">{len(fn.breaks)}</td><td class="num">{len(fn.recompiles)}</td><td class="num">{_ms(fn.compile_seconds)}</td></tr>'
        )
    overview = (
        f'<section class="panel" id="overview"><div class="cards">{cards_html}</div>'
        '<table class="overview"><tr><th>function</th><th style="text-align:right">graphs</th><th style="text-align:right">breaks</th>'
        f'<th style="text-align:right">recompiles</th><th style="text-align:right">compile time</th></tr>{"".join(rows)}</table></section>'
    )
    body = [overview]
    if warnings:
        body.append(
            '<section class="panel" id="warnings"><h2>Warnings</h2>'
            + "".join(
                f'<div class="reason"><div class="loc">{_e(w.get("logger"))}</div><pre class="code" style="background:transparent;border:0;padding:4px 0;white-space:pre-wrap;word-break:break-word">{_e(w.get("message"))}</pre></div>'
                for w in warnings
            )
            + "</section>"
        )
    colors: dict[str, str] = {}
    body.extend(_function_html(fn, dot_path, colors) for _, fn in funcs)
    if not funcs:
        body.append(
            '<section class="panel empty">No compile events in this trace.</section>'
        )
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta name="viewport" content="width=device-width, initial-scale=1"><title>{_e(title)}</title><style>{_CSS}</style></head><body>'
        f'<header class="top"><h1><span class="logo">⚙</span>{_e(title)}</h1><div class="meta">{"".join(metas)}</div></header>'
        f'<div class="layout">{"".join(toc)}<main>{"".join(body)}</main></div>'
        f"<footer>Generated by torchferro.report on {_e(time.strftime('%Y-%m-%d %H:%M:%S'))}</footer></body></html>\n"
    )


def write_report(
    directory: str, out: str | None = None, dot_path: str | None = "auto"
) -> str:
    """Reads the traces in ``directory`` and writes the page to ``out`` (default
    ``directory/torchferro_report.html``); returns its path. ``dot_path="auto"`` looks for
    Graphviz ``dot`` on ``PATH``; ``None`` shows DOT text instead of pictures."""
    if dot_path == "auto":
        dot_path = shutil.which("dot")
    runs = load(directory)
    if out is None:
        out = os.path.join(
            directory
            if os.path.isdir(directory)
            else os.path.dirname(directory) or ".",
            "torchferro_report.html",
        )
    page = render(runs, dot_path=dot_path)
    with open(out, "w", encoding="utf-8") as f:
        f.write(page)
    return out
