"""The differential harness's terminal summary: per topic (cases module) and in total, how many
programs torch.compile captures with eager's values in N graphs, and how many of those torchferro
captures with eager's values in no more than N (issue 14's measure)."""

from __future__ import annotations

from .runner import summary_rows


def pytest_terminal_summary(terminalreporter):
    rows = summary_rows()
    if not rows:
        return
    tr = terminalreporter
    tr.section("differential: graphs against torch.compile")
    tr.write_line(
        f"{'topic':<24} {'programs':>8} {'torch.compile in N':>19} {'torchferro in <= N':>19}"
    )
    for topic, n, tc, tf in rows:
        tr.write_line(f"{topic:<24} {n:>8} {tc:>19} {tf:>19}")
