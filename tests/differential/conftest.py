"""The differential harness's terminal summary: per topic (cases module) and in total, how many
programs torch.compile captures with eager's values in N graphs, and how many of those torchferro
captures with eager's values in no more than N (issue 14's measure)."""

from __future__ import annotations

import os

from .runner import short_programs, summary_rows


def pytest_configure(config):
    # Each ``cases_*`` module's name is a marker (``test_differential`` marks every case with
    # its topic).
    here = os.path.dirname(os.path.abspath(__file__))
    for f in sorted(os.listdir(here)):
        if f.startswith("cases_") and f.endswith(".py"):
            config.addinivalue_line("markers", f"{f[:-3]}: differential cases of {f}")


def pytest_terminal_summary(terminalreporter):
    rows = summary_rows()
    if not rows:
        return
    tr = terminalreporter
    tr.section("differential: graphs against torch.compile")
    tr.write_line(
        "N: torch.compile's graph count on a program it runs with eager's values; captured: "
        "torchferro gives eager's values in <= N graphs, running no more frames eagerly than "
        "torch.compile"
    )
    tr.write_line(
        f"{'topic':<22} {'programs':>8} {'tc N>=1':>8} {'captured':>8} {'tc N=0':>7} "
        f"{'tf ok':>6}"
    )
    for topic, n, tc, tf, tc0, tf0 in rows:
        tr.write_line(f"{topic:<22} {n:>8} {tc:>8} {tf:>8} {tc0:>7} {tf0:>6}")
    short = short_programs()
    if short:
        tr.write_line(
            "not captured (tc N>=1, torchferro short): name: tc graphs / tf graphs, "
            "frames run eagerly tf / tc, values"
        )
        for topic, names in sorted(short.items()):
            tr.write_line(f"  {topic}:")
            for name, tc, tf, eager, tc_eager, ok in names:
                values = "ok" if ok else "DIFFER"
                tr.write_line(
                    f"    {name}: {tc} / {tf}, eager frames {eager} / {tc_eager}, "
                    f"values {values}"
                )


def pytest_collection_modifyitems(items):
    # `-k builtins` selects the cases of `cases_builtins.py`: each case's topic is a keyword.
    for item in items:
        callspec = getattr(item, "callspec", None)
        case = callspec.params.get("case") if callspec is not None else None
        topic = getattr(getattr(case, "program", None), "topic", None)
        if topic:
            item.extra_keyword_matches.add(topic)
