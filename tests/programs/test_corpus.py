"""Every program of the corpus, compiled and eager on two input sets (see ``harness.check``)."""

from __future__ import annotations

import collections

import pytest

# Each topic module registers its programs when imported.
from . import (
    autocast,
    containers,
    control_flow,
    effects,
    graph_breaks,
    inlining,
    modules,
    python_values,
    side_effects,
    tensors,
)
from .harness import PROGRAMS, check, params

TOPICS = [
    m.__name__.rsplit(".", 1)[-1]
    for m in (
        autocast,
        containers,
        control_flow,
        effects,
        graph_breaks,
        inlining,
        modules,
        python_values,
        side_effects,
        tensors,
    )
]


def test_corpus_size():
    assert len(PROGRAMS) >= 200, len(PROGRAMS)
    by_topic = collections.Counter(p.topic for p in PROGRAMS)
    assert set(by_topic) == set(TOPICS), by_topic


@pytest.mark.parametrize("prog", params(PROGRAMS))
def test_program(prog):
    check(prog)
