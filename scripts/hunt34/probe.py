"""Runs the differential check (tests/differential/runner.py) of every case a probe module
registers, in every mode, and prints one line per (case, mode): ok, XFAIL (breadth) or the
first lines of the difference. Usage (from the worktree root):
PYTHONPATH=python:tests:scripts/hunt34 python scripts/hunt34/probe.py MODULE [name-substring ...]"""

import importlib
import sys
import traceback

import pytest
from differential.runner import CASES, MODES, differential


def main(argv):
    module, *subs = argv
    importlib.import_module(module)
    bad = 0
    for c in CASES:
        if subs and not any(s in c.name for s in subs):
            continue
        for mode in MODES:
            try:
                differential(c, mode)
                line = "ok"
            except pytest.xfail.Exception as e:
                line = f"XFAIL {e}"
            except BaseException as e:  # noqa: BLE001  (reported)
                bad += 1
                tb = traceback.format_exception(e)
                line = "FAIL " + " | ".join(
                    x.strip().replace("\n", " ")[:300] for x in tb[-2:]
                )
            print(f"{c.name:50s} {mode:20s} {line[:900]}", flush=True)
    print(f"{bad} failures")


if __name__ == "__main__":
    main(sys.argv[1:])
