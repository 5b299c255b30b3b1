"""The benchmark suite: eager vs torch.compile (inductor) vs torchferro, side by side, in one run.

    python bench/run.py [--quick] [--device cpu|cuda] [--out DIR] [--only a,b] [--skip a,b]

Every measurement that involves compiling runs in a fresh subprocess (``bench/harness.py``):

- cold cache: first call in a new process whose ``TORCHINDUCTOR_CACHE_DIR`` and
  ``TORCHFERRO_CACHE_DIR`` point at a new, empty directory; then a call at another shape
  (the recompile);
- warm cache: the same in a second new process on the same directories. For torch.compile this is
  the first call of the measuring process below (torch.compile runs first there);
- run time: one process per workload runs eager, torch.compile and torchferro interleaved after
  warm-up and records the median and spread, the extra memory one call needs, and checks every
  first output against eager.

Writes ``results.json`` (every figure, the machine), ``results.md`` (the table) and
``results.png`` (speedups; compile times on a log scale) into ``--out`` (default
``bench/results``). Exits non-zero, naming each one, if any compiled result differs from eager or
if torchferro raised on a workload.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import report  # noqa: E402  (light: matplotlib is imported only to draw)
from harness import MARKER  # noqa: E402  (light: no torch import)

VARIANTS = ["eager", "torch.compile", "torchferro"]
COMPILED = ["torch.compile", "torchferro"]


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


# --- the machine ---------------------------------------------------------------------------------


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def mem_total_gib() -> float | None:
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemTotal:"):
                    return round(int(line.split()[1]) / 2**20, 1)
    except OSError:
        pass
    return None


def git_commit() -> str | None:
    try:
        rev = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=HERE,
            capture_output=True,
            text=True,
            timeout=10,
        )
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=HERE,
            capture_output=True,
            text=True,
            timeout=10,
        )
        if rev.returncode == 0:
            return rev.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")
    except Exception:
        pass
    return None


def describe_machine(device: str) -> dict:
    import torch

    gpu = None
    if torch.cuda.is_available():
        gpu = {
            "name": torch.cuda.get_device_name(0),
            "count": torch.cuda.device_count(),
            "cuda": torch.version.cuda,
        }
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:
        cores = os.cpu_count()
    return {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(
            timespec="seconds"
        ),
        "cpu_model": cpu_model(),
        "cpu_cores": cores,
        "memory_gib": mem_total_gib(),
        "gpu": gpu,
        "device": device,
        "torch": torch.__version__,
        "torch_threads": torch.get_num_threads(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "torchferro_commit": git_commit(),
        # Other work on the machine disturbs timings: recorded at the start and the end.
        "load_average_start": list(os.getloadavg()),
    }


def torchferro_available() -> str | None:
    """None when torchferro imports, else why not."""
    try:
        import torchferro  # noqa: F401

        return None
    except Exception as e:
        return f"{type(e).__name__}: {e}"


# --- subprocesses --------------------------------------------------------------------------------


def retry_without_torchferro(results, step, r, spec, env, args, t_start) -> None:
    """A measuring process that died (a native crash) in a workload with torchferro is run
    again without torchferro, so that eager and torch.compile are still measured; the crash is
    then torchferro's and is recorded on its row."""
    retry = [
        i
        for i in step["workloads"]
        if i["name"] in r["crashed"] and "torchferro" in i["variants"]
    ]
    if not retry:
        return
    items = [
        dict(i, variants=[v for v in i["variants"] if v != "torchferro"]) for i in retry
    ]
    names = ", ".join(i["name"] for i in items)
    log(
        f"[{time.perf_counter() - t_start:6.1f}s] run time again without torchferro: {names} ..."
    )
    r2 = run_child(dict(spec, workloads=items), env, args.timeout)
    for i in items:
        if i["name"] in r2["crashed"]:
            continue  # not torchferro's crash: keep the workload's error
        entry = results["workloads"][i["name"]]
        crash = {
            "error": entry.pop("error"),
            "stderr_head": entry.pop("stderr_head", ""),
            "stderr_tail": entry.pop("stderr_tail", ""),
        }
        entry["variants"].setdefault("torchferro", {})["run"] = crash
    merge(results, dict(step, workloads=items), r2)


def _stderr_excerpt(err: str) -> dict:
    # A Rust panic prints its message first and a long backtrace after: keep both ends.
    return {
        "stderr_head": err[:2500],
        "stderr_tail": err[-2500:] if len(err) > 2500 else "",
    }


def run_child(spec: dict, env_dirs: dict, timeout: float) -> dict:
    """Runs harness.py on the spec's workloads. A workload that kills its process (a native abort,
    a timeout) is recorded as crashed, and the workloads after it run in a new process.

    Returns ``{"workloads": {name: result}, "crashed": {name: {...}}, "common": {...}, "wall_s"}``."""
    from harness import DONE, START

    env = dict(os.environ)
    env.update(env_dirs)
    t0 = time.perf_counter()
    out: dict = {"workloads": {}, "crashed": {}, "common": {}}
    items = list(spec["workloads"])
    name_of = (lambda i: i) if spec["role"] == "compile" else (lambda i: i["name"])
    processes = 0
    while items:
        processes += 1
        sub = dict(spec, workloads=items)
        try:
            p = subprocess.run(
                [sys.executable, os.path.join(HERE, "harness.py"), json.dumps(sub)],
                env=env,
                capture_output=True,
                text=True,
                timeout=timeout,
            )
            stdout, stderr, why = (
                p.stdout,
                p.stderr,
                f"exited with status {p.returncode}",
            )
        except subprocess.TimeoutExpired as e:

            def text(b):
                return b.decode(errors="replace") if isinstance(b, bytes) else (b or "")

            stdout, stderr, why = (
                text(e.stdout),
                text(e.stderr),
                f"timed out after {timeout:.0f} s",
            )
        current = None
        for line in stdout.splitlines():
            if line.startswith(START):
                current = line[len(START) :].strip()
            elif line.startswith(DONE):
                d = json.loads(line[len(DONE) :])
                out["workloads"][d["name"]] = d["result"]
                current = None
            elif line.startswith(MARKER):
                out["common"] = json.loads(line[len(MARKER) :])
        done = set(out["workloads"])
        if out["common"] and all(name_of(i) in done for i in items):
            break
        # The process died: blame the workload it was in (or the first not done).
        rest = [i for i in items if name_of(i) not in done]
        culprit = current if current in [name_of(i) for i in rest] else name_of(rest[0])
        out["crashed"][culprit] = {
            "child_error": f"subprocess {why} during this workload",
            **_stderr_excerpt(stderr),
        }
        log(f"    subprocess {why} during {culprit}")
        items = [i for i in rest if name_of(i) != culprit]
    out["wall_s"] = time.perf_counter() - t0
    out["processes"] = processes
    return out


class Dirs:
    """One cache directory per (workload, compiler); the measuring process reuses both."""

    def __init__(self, root: str, name: str):
        self.tc = os.path.join(root, name, "torch.compile")
        self.tf = os.path.join(root, name, "torchferro")
        for d in (self.tc, self.tf):
            os.makedirs(d, exist_ok=True)

    def for_variant(self, variant: str) -> dict:
        d = self.tc if variant == "torch.compile" else self.tf
        return {
            "TORCHINDUCTOR_CACHE_DIR": os.path.join(d, "inductor"),
            "TORCHFERRO_CACHE_DIR": os.path.join(d, "ferro"),
        }

    def for_measure(self) -> dict:
        return {
            "TORCHINDUCTOR_CACHE_DIR": self.for_variant("torch.compile")[
                "TORCHINDUCTOR_CACHE_DIR"
            ],
            "TORCHFERRO_CACHE_DIR": self.for_variant("torchferro")[
                "TORCHFERRO_CACHE_DIR"
            ],
        }


# --- the run -------------------------------------------------------------------------------------


def plan(args, workloads, tf_missing: str | None) -> list[dict]:
    """Steps: (kind, workloads, variant...). Full: everything per workload, each in its own
    processes. Quick: torchferro's cold and warm compiles over all quick workloads in one process
    each, and one measuring process; no torch.compile (its first graph in a fresh process costs
    20-50 s on a 2-core CPU, more than the whole quick budget)."""
    steps = []

    def variants_of(w, with_tc=True):
        vs = ["eager"]
        if with_tc:
            vs.append("torch.compile")
        if w.torchferro and not tf_missing:
            vs.append("torchferro")
        return vs

    if args.quick:
        tf_names = [w.name for w in workloads if w.torchferro]
        if tf_names and not tf_missing:
            steps.append(
                {
                    "role": "compile",
                    "variant": "torchferro",
                    "cache": "cold",
                    "workloads": tf_names,
                    "dirs": "quick",
                }
            )
            steps.append(
                {
                    "role": "compile",
                    "variant": "torchferro",
                    "cache": "warm",
                    "workloads": tf_names,
                    "dirs": "quick",
                }
            )
        steps.append(
            {
                "role": "measure",
                "workloads": [
                    {"name": w.name, "variants": variants_of(w, with_tc=False)}
                    for w in workloads
                ],
                "dirs": "quick",
            }
        )
        return steps
    for w in workloads:
        steps.append(
            {
                "role": "compile",
                "variant": "torch.compile",
                "cache": "cold",
                "workloads": [w.name],
                "dirs": w.name,
            }
        )
        if w.torchferro and not tf_missing:
            steps.append(
                {
                    "role": "compile",
                    "variant": "torchferro",
                    "cache": "cold",
                    "workloads": [w.name],
                    "dirs": w.name,
                }
            )
            steps.append(
                {
                    "role": "compile",
                    "variant": "torchferro",
                    "cache": "warm",
                    "workloads": [w.name],
                    "dirs": w.name,
                }
            )
        # torch.compile goes first here: its first call is the warm-cache figure.
        steps.append(
            {
                "role": "measure",
                "workloads": [{"name": w.name, "variants": variants_of(w)}],
                "dirs": w.name,
                "tc_warm": True,
            }
        )
    return steps


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument(
        "--quick",
        action="store_true",
        help="small sizes, eager vs torchferro only (~1 minute); the smoke test runs it",
    )
    ap.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    ap.add_argument(
        "--out", default=os.path.join(HERE, "results"), help="output directory"
    )
    ap.add_argument("--only", default="", help="comma-separated workload names")
    ap.add_argument("--skip", default="", help="comma-separated workload names")
    ap.add_argument(
        "--timeout", type=float, default=900.0, help="seconds per subprocess"
    )
    ap.add_argument("--no-chart", action="store_true")
    ap.add_argument(
        "--no-recompile",
        action="store_true",
        help="skip the call at a second shape in the compile processes (a GPU run that must "
        "fit a time limit)",
    )
    ap.add_argument(
        "--keep-cache", action="store_true", help="keep the temporary cache directories"
    )
    args = ap.parse_args(argv)
    t_start = time.perf_counter()

    import torch

    from workloads import WORKLOADS

    machine = describe_machine(args.device)
    os.makedirs(args.out, exist_ok=True)
    results: dict = {
        "machine": machine,
        "mode": "quick" if args.quick else "full",
        "workloads": {},
        "notes": [],
    }
    if args.device == "cuda" and not torch.cuda.is_available():
        msg = "--device cuda: no CUDA device available; nothing measured"
        log(msg)
        results["skipped"] = msg
        write_outputs(results, args, [])
        return 0

    only = {s for s in args.only.split(",") if s}
    skip = {s for s in args.skip.split(",") if s}
    unknown = (only | skip) - {w.name for w in WORKLOADS}
    if unknown:
        ap.error(f"unknown workload(s): {', '.join(sorted(unknown))}")
    chosen = []
    for w in WORKLOADS:
        if (
            (only and w.name not in only)
            or w.name in skip
            or (args.quick and not only and not w.in_quick)
            or (not only and args.device not in w.devices)
        ):
            continue
        missing = w.missing()
        entry = results["workloads"][w.name] = {
            "description": w.description,
            "variants": {},
        }
        if missing:
            entry["skipped"] = (
                f"needs {', '.join(missing)} (pip install {' '.join(missing)})"
            )
            log(f"[skip] {w.name}: {entry['skipped']}")
            continue
        entry["train"] = w.train
        entry["memory_bound"] = w.memory_bound
        entry["tolerance"] = {"rtol": w.rtol, "atol": w.atol}
        chosen.append(w)
    tf_missing = torchferro_available()
    if tf_missing:
        results["notes"].append(
            f"torchferro is not importable here ({tf_missing}): its column is empty"
        )
        log(f"[note] torchferro unavailable: {tf_missing}")

    root = tempfile.mkdtemp(prefix="torchferro-bench-")
    dirs: dict[str, Dirs] = {}
    measure_common = {
        "device": args.device,
        "quick": args.quick,
        "sample_s": 0.005 if args.quick else (0.05 if args.device == "cuda" else 0.02),
        "budget_scale": 0.2 if args.quick else 1.0,
        "min_reps": 5,
        "max_reps": 41,
    }
    extra_env: dict[str, str] = {}
    try:
        if not args.quick and chosen and args.device == "cpu":
            extra_env = isa_probe(results, root, args, t_start)
        if args.device == "cuda":
            # CUDA graphs go to torchferro's CUDA kernels (the opt-in, whatever the default).
            extra_env["TORCHFERRO_CUDA"] = "1"
        for step in plan(args, chosen, tf_missing):
            d = dirs.setdefault(step["dirs"], Dirs(root, step["dirs"]))
            if step["role"] == "compile":
                spec = {
                    "role": "compile",
                    "variant": step["variant"],
                    "workloads": step["workloads"],
                    "device": args.device,
                    "quick": args.quick,
                    "recompile": not args.no_recompile,
                }
                what = f"{step['variant']} {step['cache']}-cache compile: {', '.join(step['workloads'])}"
                env = d.for_variant(step["variant"])
            else:
                spec = dict(measure_common, role="measure", workloads=step["workloads"])
                what = f"run time: {', '.join(i['name'] for i in step['workloads'])}"
                env = d.for_measure()
            log(f"[{time.perf_counter() - t_start:6.1f}s] {what} ...")
            r = run_child(spec, {**env, **extra_env}, args.timeout)
            log(f"[{time.perf_counter() - t_start:6.1f}s]   done in {r['wall_s']:.1f}s")
            merge(results, step, r)
            if step["role"] == "measure":
                retry_without_torchferro(
                    results, step, r, spec, {**env, **extra_env}, args, t_start
                )
            # Partial results survive an interrupted run.
            with open(os.path.join(args.out, "results.partial.json"), "w") as fh:
                json.dump(results, fh, indent=1, default=str)
    finally:
        if not args.keep_cache:
            shutil.rmtree(root, ignore_errors=True)
        else:
            results["notes"].append(f"cache directories kept under {root}")
    relative_to_copy(results)
    results["wall_s"] = time.perf_counter() - t_start
    results["machine"]["load_average_end"] = list(os.getloadavg())
    failures = find_failures(results)
    results["failures"] = failures
    write_outputs(results, args, failures)
    log(f"suite finished in {results['wall_s']:.0f} s; outputs in {args.out}")
    if failures:
        print(
            "\nFAILED: compiled results that differ from eager, or errors:",
            file=sys.stderr,
        )
        for f in failures:
            print(f"  - {f}", file=sys.stderr)
        return 1
    return 0


def isa_probe(results: dict, root: str, args, t_start: float) -> dict[str, str]:
    """Times torch.compile's CPU vector-ISA probe once, in a fresh process with an empty cache.
    Every fresh torch.compile process pays it again before its first compile (10-40 s on 2 cores:
    a Python subprocess importing torch per candidate ISA), which would double the suite's wall
    time. When skipping the probe (``TORCHINDUCTOR_VEC_ISA_OK=1``) picks the same ISA, the other
    processes skip it: torch.compile's compile figures then exclude the probe (they are lower
    bounds of what a user sees) and the probe's cost is reported on its own."""
    log(f"[{time.perf_counter() - t_start:6.1f}s] torch.compile vector-ISA probe ...")
    env = dict(os.environ, TORCHINDUCTOR_CACHE_DIR=os.path.join(root, "isa-probe"))
    c: dict = {}
    try:
        p = subprocess.run(
            [sys.executable, os.path.join(HERE, "harness.py"), '{"role": "isa_probe"}'],
            env=env,
            capture_output=True,
            text=True,
            timeout=args.timeout,
        )
        for line in p.stdout.splitlines():
            if line.startswith(MARKER):
                c = json.loads(line[len(MARKER) :])
    except subprocess.TimeoutExpired:
        pass
    log(f"[{time.perf_counter() - t_start:6.1f}s]   done")
    if not c.get("isa") or c.get("isa") != c.get("isa_when_skipped"):
        results["notes"].append(
            "torch.compile's vector-ISA probe could not be skipped safely; its compile figures "
            "include it"
        )
        return {}
    results["torch_compile_isa_probe"] = {"probe_s": c["probe_s"], "isa": c["isa"]}
    results["notes"].append(
        f"torch.compile's compile figures (cold, warm, recompile) exclude its CPU vector-ISA probe, "
        f"which every fresh torch.compile process runs before its first compile: measured once "
        f"here at {c['probe_s']:.1f} s (ISA `{c['isa']}`); the other processes skip it with "
        f"TORCHINDUCTOR_VEC_ISA_OK=1, which picks the same ISA. Add it for the first call a "
        f"user sees."
    )
    return {"TORCHINDUCTOR_VEC_ISA_OK": "1"}


def merge(results: dict, step: dict, r: dict) -> None:
    common = r["common"]
    if step["role"] == "compile":
        for name in step["workloads"]:
            v = results["workloads"][name]["variants"].setdefault(step["variant"], {})
            if name in r["crashed"]:
                c = r["crashed"][name]
                v[step["cache"]] = {
                    "error": c["child_error"],
                    "stderr_head": c["stderr_head"],
                    "stderr_tail": c["stderr_tail"],
                }
                continue
            c = dict(r["workloads"].get(name, {}))
            c["import_torch_s"] = common.get("import_torch_s")
            c["import_compiler_s"] = common.get("import_compiler_s")
            c["process_wall_s"] = r["wall_s"] if len(step["workloads"]) == 1 else None
            v[step["cache"]] = c
        return
    for item in step["workloads"]:
        name = item["name"]
        entry = results["workloads"][name]
        if name in r["crashed"]:
            c = r["crashed"][name]
            entry["error"] = f"measuring {c['child_error']}"
            entry["stderr_head"], entry["stderr_tail"] = (
                c["stderr_head"],
                c["stderr_tail"],
            )
            continue
        m = r["workloads"].get(name, {})
        entry["num_threads"] = common.get("num_threads")
        for k in (
            "size",
            "bytes_per_call",
            "flops_per_call",
            "error",
            "traceback",
            "workload_wall_s",
        ):
            if k in m:
                entry[k] = m[k]
        for vname, vr in m.get("variants", {}).items():
            v = entry["variants"].setdefault(vname, {})
            first = vr.pop("first_call_s", None)
            v["run"] = vr
            if vname == "torch.compile" and step.get("tc_warm") and first is not None:
                # torch.compile ran first in this fresh process, on the cache its cold run filled.
                v["warm"] = {
                    "first_call_s": first,
                    # No steady call in this process before the timed ones: their median.
                    "compile_s": max(first - vr["median_s"], 0.0)
                    if vr.get("median_s")
                    else None,
                    "mismatch": vr.get("mismatch"),
                    "status": vr.get("status"),
                }
            elif first is not None:
                vr["first_call_in_measuring_process_s"] = first
        eager = entry["variants"].get("eager", {}).get("run", {}).get("median_s")
        for vname, v in entry["variants"].items():
            run = v.get("run", {})
            med = run.get("median_s")
            if med:
                if eager:
                    run["speedup"] = eager / med
                if entry.get("bytes_per_call"):
                    run["gb_per_s"] = entry["bytes_per_call"] / med / 1e9
                if entry.get("flops_per_call"):
                    run["gflop_per_s"] = entry["flops_per_call"] / med / 1e9
        for vname in VARIANTS:
            if vname in entry["variants"]:
                continue
            if vname == "torch.compile" and results["mode"] == "quick":
                entry["variants"][vname] = {"na": "not run in --quick"}
            elif vname == "torchferro":
                entry["variants"][vname] = {
                    "na": "n/a: torchferro does not compile backward yet"
                    if entry.get("train")
                    else "n/a"
                }


def relative_to_copy(results: dict) -> None:
    """Each memory-bound run's throughput as a fraction of eager's device copy (the ``copy``
    workload) measured in the same run: ``of_copy`` beside ``gb_per_s``."""
    copy = results["workloads"].get("copy", {}).get("variants", {}).get("eager", {})
    bw = copy.get("run", {}).get("gb_per_s")
    if not bw:
        return
    results["copy_gb_per_s"] = bw
    for entry in results["workloads"].values():
        for v in entry.get("variants", {}).values():
            run = v.get("run", {}) if isinstance(v, dict) else {}
            if run.get("gb_per_s"):
                run["of_copy"] = run["gb_per_s"] / bw


def find_failures(results: dict) -> list[str]:
    out = []
    for name, entry in results["workloads"].items():
        if "skipped" in entry:
            continue
        if "error" in entry:
            out.append(f"{name}: {entry['error']}" + report.panic_line(entry))
        for vname, v in entry["variants"].items():
            for phase in ("cold", "warm", "run"):
                p = v.get(phase)
                if not isinstance(p, dict):
                    continue
                for key, what in (
                    ("mismatch", "first call"),
                    ("recompile_mismatch", "call after the shape change"),
                ):
                    if p.get(key):
                        out.append(
                            f"{name} / {vname} ({phase}): WRONG RESULT on the {what}: {p[key]}"
                        )
                if p.get("error") and vname != "torch.compile":
                    out.append(
                        f"{name} / {vname} ({phase}): {p['error']}"
                        + report.panic_line(p)
                    )
                elif p.get("error"):
                    # torch.compile failing is the reference's problem: reported, not fatal.
                    results["notes"].append(
                        f"{name}: torch.compile ({phase}) raised {p['error']}"
                    )
    return out


def write_outputs(results: dict, args, failures: list[str]) -> None:
    partial = os.path.join(args.out, "results.partial.json")
    if os.path.exists(partial):
        os.remove(partial)
    path_json = os.path.join(args.out, "results.json")
    with open(path_json, "w") as fh:
        json.dump(results, fh, indent=1, default=str)
    md = report.markdown(results)
    with open(os.path.join(args.out, "results.md"), "w") as fh:
        fh.write(md)
    print(md)
    if not args.no_chart and results.get("workloads"):
        try:
            report.chart(results, os.path.join(args.out, "results.png"))
        except ImportError as e:
            log(f"[note] no chart: {e} (pip install matplotlib)")


if __name__ == "__main__":
    sys.exit(main())
