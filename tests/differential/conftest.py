"""Registers each ``cases_*`` module's name as a marker (``test_differential`` marks every case
with its topic, so ``pytest tests/differential -k containers`` selects one topic)."""

import os


def pytest_configure(config):
    here = os.path.dirname(os.path.abspath(__file__))
    for f in sorted(os.listdir(here)):
        if f.startswith("cases_") and f.endswith(".py"):
            config.addinivalue_line("markers", f"{f[:-3]}: differential cases of {f}")
