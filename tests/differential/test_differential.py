"""Every differential case in every mode (see the package docstring)."""

from __future__ import annotations

import os

import pytest

from . import cases  # noqa: F401  (registers the cases)
from .runner import CASES, MODES, differential, differential_in_child

# Set to run every case without its xfail mark (to see what a branch fixes, or to re-derive the
# marks): DIFF_IGNORE_XFAIL=1.
IGNORE_XFAIL = bool(os.environ.get("DIFF_IGNORE_XFAIL"))


def _params():
    out = []
    for c in CASES:
        for mode in MODES:  # torch.compile first: it records the graph count
            reason = None if IGNORE_XFAIL else c.xfail.get(mode)
            if (
                not reason
                and not IGNORE_XFAIL
                and c.breadth
                and mode != "torch.compile"
            ):
                reason = f"breadth: {c.breadth}"
            marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
            # The topic (``cases_containers``) as a marker: ``pytest -k containers`` selects it.
            if c.program.topic.startswith("cases_"):
                marks.append(getattr(pytest.mark, c.program.topic))
            out.append(pytest.param(c, mode, id=f"{c.name}-{mode}", marks=marks))
    return out


def test_corpus_covers_issue_13():
    assert len(CASES) >= 60, len(CASES)


@pytest.mark.parametrize("case,mode", _params())
def test_differential(case, mode):
    if case.child:
        differential_in_child(case, mode)
    else:
        differential(case, mode)
