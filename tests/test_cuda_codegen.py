"""The CUDA code generator over the whole lowering test set, on a machine without a GPU.

``tests/test_inductor_differential.py`` compiles a graph for every lowering of the table, in
every dtype and layout it takes. Run with ``TORCHFERRO_CUDA_CHECK=<file>``, every inductor
compile also lowers the same graph for the CUDA target, prints it as CUDA C and compiles it
with NVRTC (torch's ``nvidia/cu13`` wheel) to an sm_90 cubin, appending one JSON line per graph
to ``<file>``. This test runs that file so, and fails on any graph NVRTC rejects: codegen
errors are caught without a GPU. It skips only when NVRTC is not installed.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def nvrtc_path() -> str | None:
    """Where the inductor will find NVRTC: ``$TORCHFERRO_NVRTC``, or torch's wheel."""
    env = os.environ.get("TORCHFERRO_NVRTC")
    if env and Path(env).is_file():
        return env
    for d in sys.path:
        p = Path(d or ".") / "nvidia" / "cu13" / "lib" / "libnvrtc.so.13"
        if p.is_file():
            return str(p)
    return None


def test_every_lowering_compiles_to_an_sm90_cubin(tmp_path):
    if nvrtc_path() is None:
        pytest.skip(
            "NVRTC not found (no nvidia/cu13/lib/libnvrtc.so.13 on sys.path and no "
            "TORCHFERRO_NVRTC): the generated CUDA C is not compiled"
        )
    log = tmp_path / "cuda.jsonl"
    env = dict(
        os.environ,
        TORCHFERRO_CUDA_CHECK=str(log),
        TORCHFERRO_SITE_DIRS=os.pathsep.join(p for p in sys.path if p),
    )
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            str(ROOT / "tests" / "test_inductor_differential.py"),
        ],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-4000:]
    records = [json.loads(line) for line in log.read_text().splitlines()]
    failed = [x for x in records if x["status"] not in ("ok", "lowering")]
    assert not failed, "\n\n".join(
        f"{x['error']}\n--- source ---\n{x.get('source')}" for x in failed[:3]
    )
    # Every compile of the differential file went through the hook; graphs that do not lower
    # (for the CPU either) run eagerly and are only counted.
    ok = [x for x in records if x["status"] == "ok"]
    assert len(ok) > 100, len(records)
    kernels = sum(x["kernels"] for x in ok)
    cold = [x for x in ok if x["nvrtc_s"] is not None]
    per_graph = [x["nvrtc_s"] for x in cold]
    per_kernel = [x["nvrtc_s"] / x["kernels"] for x in cold]
    print(
        f"\n{len(ok)} graphs ({len(records) - len(ok)} more do not lower), {kernels} kernels "
        f"compiled to sm_90 cubins; NVRTC over {len(cold)} cold compiles: median "
        f"{statistics.median(per_graph) * 1e3:.0f} ms per graph (max "
        f"{max(per_graph) * 1e3:.0f}), {statistics.median(per_kernel) * 1e3:.0f} ms per kernel"
    )


def test_symbolic_graphs_compile_to_an_sm90_cubin(tmp_path):
    """The graphs with symbolic sizes of the dynamic-shape tests (pointwise, broadcasting,
    reductions, rows of symbolic length, views, slices with symbolic bounds, ``cat``,
    matmuls, masks from ``arange``, running sums, convolutions and pooling over symbolic
    sizes): ``TORCHFERRO_CUDA_CHECK`` prints each one lowered symbolically as one CUDA source
    (its kernels take the symbols as parameters) and NVRTC compiles it, as a CUDA graph with
    symbolic sizes is compiled once for every size."""
    if nvrtc_path() is None:
        pytest.skip("NVRTC not found: the generated CUDA C is not compiled")
    log = tmp_path / "cuda.jsonl"
    env = dict(
        os.environ,
        TORCHFERRO_CUDA_CHECK=str(log),
        TORCHFERRO_SITE_DIRS=os.pathsep.join(p for p in sys.path if p),
        TORCHFERRO_CACHE_DIR=str(tmp_path / "kernels"),
    )
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            str(ROOT / "tests" / "test_dynamic_symbolic_lowering.py"),
            str(ROOT / "tests" / "test_dynamic_conv_pool.py"),
        ],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-4000:]
    records = [json.loads(line) for line in log.read_text().splitlines()]
    failed = [x for x in records if x["status"] not in ("ok", "lowering")]
    assert not failed, "\n\n".join(
        f"{x['error']}\n--- source ---\n{x.get('source')}" for x in failed[:3]
    )
    # The symbolic lowering test's programs and the convolution and pooling ones (the one
    # graph that declines, `tril`, does not lower for the CPU either).
    ok = [x for x in records if x["status"] == "ok"]
    assert len(ok) >= 20, records
