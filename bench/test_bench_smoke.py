"""Smoke test of the benchmark suite: ``bench/run.py --quick`` runs end to end, writes its outputs,
and every compiled output matches eager. Timings are never checked."""

from __future__ import annotations

import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def test_quick_suite_runs_and_every_output_is_correct(tmp_path):
    p = subprocess.run(
        [
            sys.executable,
            os.path.join(HERE, "run.py"),
            "--quick",
            "--no-chart",
            "--out",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    results_path = tmp_path / "results.json"
    assert results_path.exists(), (
        f"no results.json; exit {p.returncode}\n{p.stderr[-4000:]}"
    )
    res = json.loads(results_path.read_text())
    # The suite's own verdict: non-zero exit with the list of wrong results and errors.
    assert p.returncode == 0, (
        "benchmark suite failed:\n"
        + "\n".join(res.get("failures", []))
        + "\n"
        + p.stderr[-3000:]
    )
    assert (tmp_path / "results.md").exists()

    checked = 0
    for name, entry in res["workloads"].items():
        if "skipped" in entry:
            continue
        assert "error" not in entry, f"{name}: {entry['error']}"
        for vname, v in entry["variants"].items():
            if "na" in v:
                continue
            run = v.get("run")
            assert run and run.get("median_s"), f"{name} / {vname} was not timed"
            for phase in ("cold", "warm", "run"):
                ph = v.get(phase)
                if not isinstance(ph, dict):
                    continue
                assert not ph.get("error"), (
                    f"{name} / {vname} ({phase}) raised {ph['error']}"
                )
                for key in ("mismatch", "recompile_mismatch"):
                    if key in ph:
                        assert ph[key] is None, (
                            f"{name} / {vname} ({phase}) {key}: {ph[key]}"
                        )
                        checked += 1
    # Every workload's torchferro output was checked in the cold, warm and timing processes.
    tf = [
        n
        for n, e in res["workloads"].items()
        if "skipped" not in e and "na" not in e["variants"].get("torchferro", {"na": 1})
    ]
    assert tf, "torchferro ran on no workload"
    assert checked >= 5 * len(tf)
