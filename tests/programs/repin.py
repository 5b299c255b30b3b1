"""Re-pins the corpus's expected counts to what torchferro does now (a tool, not a test).

    .venv/bin/python tests/programs/repin.py            # report only
    .venv/bin/python tests/programs/repin.py --write    # rewrite the counts in the topic modules
    .venv/bin/python tests/programs/repin.py --write --torch   # also refresh the
                                                        # `# torch.compile: N graphs` comments

For every program it runs ``harness.run_both`` and compares results with eager. A correct program
gets its ``graphs``/``breaks``/``eager`` rewritten to today's numbers; a program declared
``fullgraph=True`` that now raises ``Unsupported`` is re-run without it; a correct program with
no break and no eager frame is promoted to ``fullgraph=True``; an ``xfail`` program that is now
correct loses its mark. Programs with a wrong answer are listed and left alone: mark them by hand
with a ``BUG_*`` reason of ``harness``. Run ``ruff format tests/programs`` afterwards.
"""

from __future__ import annotations

import ast
import contextlib
import io
import logging
import pathlib
import re
import sys
import warnings

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import torchferro
from conftest import CountingBackend

from programs import harness, test_corpus

# Programs kept off fullgraph=True on purpose (see their comments).
NEVER_FULLGRAPH = {"torch_dynamo_graph_break"}


def observe(p, fullgraph: bool) -> dict:
    torchferro.compiler.reset()
    try:
        eager, actual, backend, breaks = harness.run_both(p, fullgraph)
    except Exception as e:  # noqa: BLE001
        return {"status": "CRASH", "msg": f"{type(e).__name__}: {e}"}
    obs = [backend.count, len(breaks.breaks), len(breaks.eager)]
    unsupported = [
        a.exc for a in actual if a.exc and a.exc[0] is torchferro.Unsupported
    ]
    try:
        harness.check_results(p, eager, actual)
        if fullgraph:
            harness.assert_compiled(p)
    except AssertionError as e:
        status = "UNSUPPORTED" if unsupported else "WRONG"
        return {"status": status, "obs": obs, "msg": str(e).splitlines()[0]}
    return {"status": "OK", "obs": obs}


def torch_graphs(p) -> int | None:
    import torch._dynamo

    torch._dynamo.reset()
    harness._reset_state(p)
    target = p.target()
    backend = CountingBackend()
    compiled = torch.compile(target, backend=backend)
    try:
        for seed in (0, 1):
            args, kwargs = p.make(seed)
            if p.prepare is not None:
                p.prepare(target, seed)
            with contextlib.redirect_stdout(io.StringIO()):
                try:
                    compiled(*args, **kwargs)
                except Exception:
                    if not p.raises:
                        raise
    except Exception:  # noqa: BLE001
        return None
    finally:
        harness._reset_state(p)
    return backend.count


def record(p, with_torch: bool) -> dict:
    fullgraph = p.fullgraph and not p.raises and p.name not in NEVER_FULLGRAPH
    r = observe(p, fullgraph)
    if r["status"] == "UNSUPPORTED" and fullgraph:
        fullgraph = False
        r = observe(p, False)
    if (
        r["status"] == "OK"
        and not fullgraph
        and r["obs"][1:] == [0, 0]
        and not p.raises
        and p.name not in NEVER_FULLGRAPH
    ):
        r2 = observe(p, True)
        if r2["status"] == "OK" and r2["obs"] == r["obs"]:
            fullgraph = True
    r["fullgraph"] = fullgraph
    r["torch"] = torch_graphs(p) if with_torch else None
    return r


def rewrite(path: pathlib.Path, results: dict, with_torch: bool) -> None:
    src = path.read_text()
    tree = ast.parse(src)
    lines = src.splitlines(keepends=True)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))

    def pos(lineno, col):
        return offsets[lineno - 1] + col

    calls = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef):
            for d in node.decorator_list:
                if isinstance(d, ast.Call) and getattr(d.func, "id", None) == "program":
                    name = next(
                        (k.value.value for k in d.keywords if k.arg == "name"),
                        node.name,
                    )
                    calls.append((name, d, 1, d.lineno))
        if (
            isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Call)
            and getattr(node.value.func, "id", None) == "module_program"
        ):
            calls.append((node.value.args[0].value, node.value, 3, node.lineno))
    edits = []
    for name, call, npos, lineno in calls:
        r = results.get(name)
        if not r or r["status"] != "OK":
            continue
        graphs, breaks, eager = r["obs"]

        def seg(n):
            return ast.get_source_segment(src, n)

        parts = [seg(a) for a in call.args[:npos]] + [str(graphs)]
        if breaks:
            parts.append(str(breaks))
        for kw in call.keywords:
            if kw.arg in ("eager", "fullgraph", "xfail"):
                continue
            parts.append(f"{kw.arg}={seg(kw.value)}")
        if eager:
            parts.append(f"eager={eager}")
        if r["fullgraph"]:
            parts.append("fullgraph=True")
        text = f"{seg(call.func)}({', '.join(parts)})"
        edits.append(
            (
                pos(call.lineno, call.col_offset),
                pos(call.end_lineno, call.end_col_offset),
                text,
            )
        )
        if with_torch and r["torch"] is not None:
            above = lines[lineno - 2] if lineno >= 2 else ""
            if above.strip().startswith("# torch.compile:"):
                edits.append((offsets[lineno - 2], offsets[lineno - 1], ""))
            if r["torch"] != graphs:
                indent = re.match(r"\s*", lines[lineno - 1]).group(0)
                comment = f"{indent}# torch.compile: {r['torch']} graphs\n"
                edits.append((offsets[lineno - 1], offsets[lineno - 1], comment))
    for start, end, text in sorted(edits, reverse=True):
        src = src[:start] + text + src[end:]
    path.write_text(src)


def main() -> None:
    write, with_torch = "--write" in sys.argv, "--torch" in sys.argv
    warnings.simplefilter("ignore")
    for name in ("torch._dynamo", "torch._subclasses.fake_tensor"):
        logging.getLogger(name).setLevel(logging.CRITICAL)
    results = {}
    for p in harness.PROGRAMS:
        r = results[p.name] = record(p, with_torch)
        expected = [p.graphs, p.breaks, p.eager]
        changed = (
            r["status"] != "OK" or r["obs"] != expected or r["fullgraph"] != p.fullgraph
        )
        if r["status"] == "OK" and p.xfail:
            changed = True
            r["status"] = "OK (was xfail)"
        if changed and not (p.xfail and r["status"] == "WRONG"):
            print(
                f"{p.name:45s} {r['status']:14s} now={r.get('obs')} pinned={expected} "
                f"fullgraph={r['fullgraph']} {r.get('msg', '')}"
            )
        if r["status"] == "OK (was xfail)":
            r["status"] = "OK"
    if write:
        for topic in test_corpus.TOPICS:
            rewrite(HERE / f"{topic}.py", results, with_torch)


if __name__ == "__main__":
    main()
