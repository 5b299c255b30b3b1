"""Every program of the corpus, compiled and eager on two input sets (see ``harness.check``)."""

from __future__ import annotations

import collections
import importlib

import pytest

from .harness import PROGRAMS, check, params

# The corpus's topic modules; each registers its programs when imported.
TOPICS = [
    "autocast",
    "containers",
    "control_flow",
    "effects",
    "graph_breaks",
    "inlining",
    "modules",
    "python_values",
    "side_effects",
    "tensors",
]
for _topic in TOPICS:
    importlib.import_module(f".{_topic}", __package__)


def test_corpus_size():
    assert len(PROGRAMS) >= 200, len(PROGRAMS)
    by_topic = collections.Counter(p.topic for p in PROGRAMS)
    assert set(by_topic) == set(TOPICS), by_topic


@pytest.mark.parametrize("prog", params(PROGRAMS))
def test_program(prog):
    check(prog)
