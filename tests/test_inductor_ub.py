"""The generated C kernels have no undefined behaviour on integers: every `int32`/`int64`
lowering of the differential test runs with kernels built under UBSan's signed-overflow, shift
and division checks, aborting at the first report.

Signed overflow is undefined in C and compilers exploit it: gcc 13 folded `clamp(x, y, y + 1)`
as if `y + 1 > y` held, giving `INT64_MAX` where torch wraps to `INT64_MIN`, while gcc 12 gave
torch's answer. A value test catches such a bug only under the compiler that exploits it; the
sanitizer catches the undefined operation under any compiler."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SANITIZE = [
    "-fsanitize=signed-integer-overflow,shift,integer-divide-by-zero",
    "-fno-sanitize-recover=all",
]


def _sanitizing_cc(tmp_path: Path) -> Path:
    cc = shutil.which(os.environ.get("CC", "cc")) or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler")
    probe = tmp_path / "probe.c"
    probe.write_text("int f(int a) { return a + 1; }\n")
    built = subprocess.run(
        [cc, "-shared", "-fPIC", *SANITIZE, str(probe), "-o", str(tmp_path / "p.so")],
        capture_output=True,
    )
    if built.returncode != 0:
        pytest.skip(f"{cc} cannot build with UBSan: {built.stderr.decode()[:200]}")
    wrapper = tmp_path / "cc"
    wrapper.write_text(f'#!/bin/sh\nexec "{cc}" "$@" {" ".join(SANITIZE)}\n')
    wrapper.chmod(0o755)
    return wrapper


def test_integer_lowerings_have_no_undefined_behaviour(tmp_path):
    env = dict(os.environ)
    env["CC"] = str(_sanitizing_cc(tmp_path))
    env["TORCHFERRO_CACHE_DIR"] = str(tmp_path / "kernels")
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-s",
            "-p",
            "no:cacheprovider",
            str(ROOT / "tests" / "test_inductor_differential.py"),
            "-k",
            "test_lowering_matches_eager and (int32 or int64)",
        ],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    out = run.stdout + run.stderr
    reports = [line for line in out.splitlines() if "runtime error" in line]
    assert reports == [], "\n".join(reports[:10])
    assert run.returncode == 0, out[-3000:]
    assert " passed" in out and " failed" not in out, out[-3000:]
