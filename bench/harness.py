"""The measuring side of the suite: runs in a fresh subprocess started by ``run.py``.

``python bench/harness.py SPEC_JSON`` reads a spec and prints one line ``BENCH_RESULT <json>``.
Two roles:

- ``compile``: for one compiled variant, the first call (compile included) of each workload in this
  fresh process, then a call at a different shape (the recompile), each checked against eager.
  The parent points ``TORCHINDUCTOR_CACHE_DIR`` / ``TORCHFERRO_CACHE_DIR`` at a new directory for
  the cold-cache run and at the same directory again for the warm-cache run.
- ``measure``: eager, torch.compile and torchferro side by side: first call of each (checked),
  warm-up, interleaved timed repetitions, the extra memory one call needs.

Heavy imports (torch, torchferro) happen inside the functions so that import time is recorded
separately from the first call.
"""

from __future__ import annotations

import gc
import json
import logging
import math
import os
import resource
import statistics
import sys
import time
import traceback

T_START = time.perf_counter()
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

MARKER = "BENCH_RESULT "
# One line before and one after each workload, so that the parent knows which workload a crashed
# process (a native abort, a timeout) was in, and keeps the workloads it finished.
START = "BENCH_WORKLOAD_START "
DONE = "BENCH_WORKLOAD_DONE "


_T_WORKLOAD = [0.0]


def _start(name: str) -> None:
    _T_WORKLOAD[0] = time.perf_counter()
    print(START + name, flush=True)


def _done(name: str, r: dict) -> None:
    r["workload_wall_s"] = time.perf_counter() - _T_WORKLOAD[0]
    print(
        DONE + json.dumps({"name": name, "result": r}, default=_json_default),
        flush=True,
    )


# --- compile functions per variant ---------------------------------------------------------------


def compile_fn_for(variant: str):
    if variant == "eager":
        return lambda m: m
    if variant == "torch.compile":
        import torch

        return torch.compile
    if variant == "torchferro":
        import torchferro

        # Default arguments on purpose: picks up torchferro's default backend (the Rust inductor
        # once it lands).
        return torchferro.compile
    raise ValueError(variant)


# --- what each compiler did ----------------------------------------------------------------------


class TorchferroLog(logging.Handler):
    """Counts torchferro's own log records: compiled frames, frames that fell back to eager
    (graph breaks and compile failures), recompiles. Keyed by logger name, not message text."""

    def __init__(self):
        super().__init__(level=logging.DEBUG)
        self.clear()

    def clear(self):
        self.graphs = 0
        self.ops = 0
        self.breaks = 0
        self.failures = 0
        self.recompiles = 0
        self.recompile_limit = 0
        self.reasons: list[str] = []

    def emit(self, record):
        import re

        name, msg = record.name, record.getMessage()
        if name == "torchferro.graph":
            self.graphs += 1
            m = re.search(r"graph with (\d+) ops", msg)
            if m:
                self.ops += int(m.group(1))
        elif name == "torchferro.graph_breaks":
            self.breaks += 1
            self._reason(msg)
        elif name == "torchferro.recompiles":
            if record.levelno >= logging.WARNING:
                self.recompile_limit += 1
                self._reason(msg.splitlines()[0])
            else:
                self.recompiles += 1
        elif (
            record.levelno >= logging.WARNING
        ):  # "failed while compiling", "internal error", ...
            self.failures += 1
            self._reason(msg)

    def _reason(self, msg: str):
        msg = msg.strip().splitlines()[0][:300]
        if msg not in self.reasons and len(self.reasons) < 5:
            self.reasons.append(msg)

    def snapshot(self) -> dict:
        fell_back = self.breaks + self.failures
        if self.graphs == 0:
            kind = "eager"  # nothing compiled: the whole call ran eagerly
        elif fell_back or self.recompile_limit:
            kind = "partial"
        else:
            kind = "full"
        return {
            "compiled": kind,
            "frames_compiled": self.graphs,
            "ops_in_graphs": self.ops,
            "frames_fell_back": fell_back,
            "graph_breaks": self.breaks,
            "compile_failures": self.failures,
            "recompiles": self.recompiles,
            "recompile_limit_hits": self.recompile_limit,
            "reasons": list(self.reasons),
        }


_TF_LOG: TorchferroLog | None = None
# Seconds torchferro spent compiling (trace, guards, inductor phases, bytecode), per its own
# compile events; the first call's wall time also includes running the graph, which on cold
# memory (fresh pages, huge-page compaction) can take longer than the compile itself.
_TF_COMPILE_S = [0.0]


def _on_tf_event(event: dict) -> None:
    if event.get("kind") == "compile":
        _TF_COMPILE_S[0] += sum((event.get("timings") or {}).values())


def torchferro_log() -> TorchferroLog:
    global _TF_LOG
    if _TF_LOG is None:
        _TF_LOG = TorchferroLog()
        lg = logging.getLogger("torchferro")
        lg.setLevel(logging.DEBUG)
        lg.addHandler(_TF_LOG)
        lg.propagate = False  # keep the per-frame debug records off stderr
        from torchferro import _events

        _events.subscribe(_on_tf_event)
    return _TF_LOG


def dynamo_snapshot() -> dict:
    from torch._dynamo.utils import counters

    graphs = int(counters["stats"].get("unique_graphs", 0))
    breaks = int(sum(counters["graph_break"].values()))
    return {
        "compiled": "eager" if graphs == 0 else ("partial" if breaks else "full"),
        "frames_compiled": graphs,
        "graph_breaks": breaks,
        "reasons": [str(k)[:300] for k in list(counters["graph_break"])[:5]],
    }


def reset_compilers():
    import torch

    if "torchferro" in sys.modules:
        sys.modules["torchferro"].compiler.reset()
    torch._dynamo.reset()
    from torch._dynamo.utils import counters

    counters.clear()
    if _TF_LOG is not None:
        _TF_LOG.clear()


def status_of(variant: str) -> dict | None:
    if variant == "torchferro":
        snap = torchferro_log().snapshot()
        launches = getattr(sys.modules["torchferro"]._C, "_cuda_kernel_launches", None)
        if launches is not None:
            # CUDA kernels of ours launched so far in this process (0: the graphs ran eagerly).
            snap["cuda_kernel_launches"] = launches()
        return snap
    if variant == "torch.compile":
        return dynamo_snapshot()
    return None


# --- correctness ---------------------------------------------------------------------------------


def structure(out):
    import torch

    if isinstance(out, torch.Tensor):
        return "Tensor"
    if isinstance(out, dict):
        return [type(out).__name__, {k: structure(v) for k, v in out.items()}]
    if isinstance(out, (tuple, list)):
        return [type(out).__name__, [structure(v) for v in out]]
    return type(out).__name__


def snapshot_output(out):
    """(structure, cloned tensors): later steps may update tensors in place (training)."""
    from workloads import tensors_of

    return structure(out), [t.detach().clone() for t in tensors_of(out)]


def compare(out, ref, w) -> str | None:
    """None when ``out`` matches the eager reference, else a description of the mismatch."""
    import torch

    s, ts = snapshot_output(out)
    rs, rts = ref
    if s != rs:
        return f"output structure differs: got {s}, eager gave {rs}"
    for i, (a, b) in enumerate(zip(ts, rts)):
        try:
            torch.testing.assert_close(a, b, rtol=w.rtol, atol=w.atol, equal_nan=True)
        except AssertionError as e:
            return f"output tensor {i}: {str(e).strip()[:600]}"
    return None


def sync(device: str):
    if device.startswith("cuda"):
        import torch

        torch.cuda.synchronize()


def set_grad(w):
    import torch

    torch.set_grad_enabled(w.train)


# --- memory --------------------------------------------------------------------------------------


def _status_kib(field: str) -> int | None:
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def _reset_peak_rss() -> bool:
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")  # resets VmHWM to the current RSS (Linux >= 4.0)
        return True
    except OSError:
        return False


def max_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def call_peak_mib(fn, args, device: str) -> dict:
    """Peak memory one call needs above what is resident before it."""
    import torch

    gc.collect()
    if device.startswith("cuda"):
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        base = torch.cuda.memory_allocated()
        fn(*args)
        torch.cuda.synchronize()
        peak = torch.cuda.max_memory_allocated()
        return {
            "kind": "cuda max_memory_allocated",
            "delta_mib": (peak - base) / 2**20,
            "peak_mib": peak / 2**20,
        }
    if not _reset_peak_rss():
        return {"kind": "unavailable (no /proc/self/clear_refs)"}
    base = _status_kib("VmRSS")
    fn(*args)
    peak = _status_kib("VmHWM")
    if base is None or peak is None:
        return {"kind": "unavailable"}
    return {
        "kind": "RSS high-water mark",
        "delta_mib": (peak - base) / 1024,
        "peak_mib": peak / 1024,
    }


# --- timing --------------------------------------------------------------------------------------


def time_calls(fn, args, n: int, device: str) -> float:
    """Seconds per call over ``n`` back-to-back calls."""
    sync(device)
    t0 = time.perf_counter()
    for _ in range(n):
        fn(*args)
    sync(device)
    return (time.perf_counter() - t0) / n


def summarize(samples: list[float]) -> dict:
    qs = statistics.quantiles(samples, n=4) if len(samples) >= 2 else [samples[0]] * 3
    med = statistics.median(samples)
    return {
        "median_s": med,
        "p25_s": qs[0],
        "p75_s": qs[2],
        "min_s": min(samples),
        "max_s": max(samples),
        "iqr_pct": 100.0 * (qs[2] - qs[0]) / med if med > 0 else 0.0,
        "samples_s": samples,
    }


def count_flops(fn, args) -> int | None:
    try:
        from torch.utils.flop_counter import FlopCounterMode

        with FlopCounterMode(display=False) as fc:
            fn(*args)
        return int(fc.get_total_flops()) or None
    except Exception:
        return None


# --- roles ---------------------------------------------------------------------------------------


def run_compile(spec: dict) -> dict:
    """First call and recompile of one compiled variant, per workload, in this fresh process."""
    import torch

    from workloads import by_name

    t_torch = time.perf_counter() - T_START
    variant, device, quick = spec["variant"], spec["device"], spec["quick"]
    t0 = time.perf_counter()
    if variant == "torchferro":
        torchferro_log()
    compile_fn = compile_fn_for(variant)
    import_s = time.perf_counter() - t0
    out = {"import_torch_s": t_torch, "import_compiler_s": import_s, "workloads": {}}
    for i, name in enumerate(spec["workloads"]):
        w = by_name(name)
        r: dict = {}
        _start(name)
        try:
            if i:
                reset_compilers()
            b = w.build(device, quick)
            set_grad(w)
            # Eager references first (this also takes eager's own first-call costs out of the
            # compiled variant's first call).
            eager = b.make(lambda m: m)
            ref1 = snapshot_output(eager(*b.args))
            ref2 = (
                snapshot_output(eager(*b.alt_args))
                if spec.get("recompile", True)
                else None
            )
            sync(device)
            r["process_peak_rss_eager_mib"] = max_rss_mib()
            if device.startswith("cuda"):
                r["cuda_max_allocated_eager_mib"] = (
                    torch.cuda.max_memory_allocated() / 2**20
                )
            fn = b.make(compile_fn)
            sync(device)
            _TF_COMPILE_S[0] = 0.0
            t = time.perf_counter()
            o1 = fn(*b.args)
            sync(device)
            r["first_call_s"] = time.perf_counter() - t
            first_compile_s = _TF_COMPILE_S[0]
            r["process_peak_rss_mib"] = max_rss_mib()
            if device.startswith("cuda"):
                r["cuda_max_allocated_mib"] = torch.cuda.max_memory_allocated() / 2**20
            r["mismatch"] = compare(o1, ref1, w)
            del o1
            if spec.get("recompile", True):
                t = time.perf_counter()
                o2 = fn(*b.alt_args)
                sync(device)
                r["recompile_s"] = time.perf_counter() - t
                r["recompile_mismatch"] = compare(o2, ref2, w)
                del o2
            # One more call at the first shape: the steady-state cost to subtract if wanted.
            t = time.perf_counter()
            fn(*b.args)
            sync(device)
            r["steady_call_s"] = time.perf_counter() - t
            # The compile's share of the first call: torchferro's own phase timings; for
            # torch.compile (no such total) the first call less a steady one.
            if variant == "torchferro":
                r["compile_s"] = first_compile_s
            else:
                r["compile_s"] = max(r["first_call_s"] - r["steady_call_s"], 0.0)
            r["status"] = status_of(variant)
        except Exception as e:
            r["error"] = f"{type(e).__name__}: {e}"[:1000]
            r["traceback"] = traceback.format_exc()[-3000:]
            r["status"] = status_of(variant)
        _done(name, r)
        gc.collect()
    return out


def run_measure(spec: dict) -> dict:
    """Eager, torch.compile and torchferro side by side on each workload."""

    from workloads import by_name

    device, quick = spec["device"], spec["quick"]
    target = spec.get("sample_s", 0.02)
    budget_scale = spec.get("budget_scale", 1.0)
    compilers = {}
    out = {"import_torch_s": time.perf_counter() - T_START, "workloads": {}}
    for v in {v for item in spec["workloads"] for v in item["variants"]}:
        if v == "torchferro":
            torchferro_log()
        compilers[v] = compile_fn_for(v)
    for i, item in enumerate(spec["workloads"]):
        name, variants = item["name"], item["variants"]
        w = by_name(name)
        res: dict = {"variants": {}}
        _start(name)
        try:
            if i:
                reset_compilers()
            b = w.build(device, quick)
            res["size"] = b.size
            res["bytes_per_call"] = b.bytes
            set_grad(w)
            eager = b.make(lambda m: m)
            ref = snapshot_output(eager(*b.args))
            fns = {"eager": eager}
            res["variants"]["eager"] = {}
            # Compiled variants in the order given: the first one's first call is the first
            # compile in this fresh process.
            for v in variants:
                if v == "eager":
                    continue
                r = res["variants"][v] = {}
                try:
                    fn = b.make(compilers[v])
                    sync(device)
                    t = time.perf_counter()
                    o = fn(*b.args)
                    sync(device)
                    r["first_call_s"] = time.perf_counter() - t
                    r["mismatch"] = compare(o, ref, w)
                    del o
                    fns[v] = fn
                except Exception as e:
                    r["error"] = f"{type(e).__name__}: {e}"[:1000]
                    r["traceback"] = traceback.format_exc()[-3000:]
                r["status"] = status_of(v)
            # Warm-up, then the per-variant call count that makes one sample ~target seconds.
            per_call = {}
            for v, fn in fns.items():
                try:
                    t_end = time.perf_counter() + 0.3
                    calls = 0
                    while calls < 3 or (time.perf_counter() < t_end and calls < 1000):
                        fn(*b.args)
                        calls += 1
                    sync(device)
                    m = max(1, min(10, calls // 10))
                    per_call[v] = min(
                        time_calls(fn, b.args, m, device) for _ in range(3)
                    )
                except Exception as e:
                    res["variants"][v]["error"] = f"{type(e).__name__}: {e}"[:1000]
                    res["variants"][v]["traceback"] = traceback.format_exc()[-3000:]
            fns = {v: f for v, f in fns.items() if v in per_call}
            n = {
                v: max(1, min(10000, int(target / max(per_call[v], 1e-9)))) for v in fns
            }
            rep_cost = sum(n[v] * per_call[v] for v in fns)
            budget = w.time_budget_s * budget_scale
            reps = int(
                max(
                    spec.get("min_reps", 5),
                    min(spec.get("max_reps", 41), budget / max(rep_cost, 1e-9)),
                )
            )
            samples = {v: [] for v in fns}
            order = list(fns.items())
            for rep in range(reps):
                # Interleaved, so that drift hits every variant alike, and rotated, so that no
                # variant always runs right after the same one (eager's allocations leave the
                # heap and caches in a state the next variant pays for).
                k = rep % len(order)
                for v, fn in order[k:] + order[:k]:
                    samples[v].append(time_calls(fn, b.args, n[v], device))
            for v in fns:
                r = res["variants"][v]
                r.update(summarize(samples[v]))
                r["calls_per_sample"] = n[v]
                r["reps"] = reps
            for v, fn in fns.items():
                res["variants"][v]["memory"] = call_peak_mib(fn, b.args, device)
            res["flops_per_call"] = (
                count_flops(eager, b.args) if w.compute_bound else None
            )
            # Graph breaks or recompiles that happened during the timed calls, too.
            for v in fns:
                if v != "eager":
                    res["variants"][v]["status"] = status_of(v)
            del fns, eager, b
        except Exception as e:
            res["error"] = f"{type(e).__name__}: {e}"[:1000]
            res["traceback"] = traceback.format_exc()[-3000:]
        _done(name, res)
        gc.collect()
    return out


def run_isa_probe(spec: dict) -> dict:
    """torch.compile's CPU vector-ISA probe, alone: the first inductor compile of every fresh
    process builds a test program per candidate ISA and loads each in a new Python subprocess that
    imports torch. Timed once here so that the other torch.compile processes can skip it
    (``TORCHINDUCTOR_VEC_ISA_OK=1``) when that picks the same ISA."""
    import torch  # noqa: F401
    from torch._inductor import config
    from torch._inductor.cpu_vec_isa import pick_vec_isa, valid_vec_isa_list

    t = time.perf_counter()
    probed = str(pick_vec_isa())
    probe_s = time.perf_counter() - t
    valid_vec_isa_list.cache_clear()
    config.cpp.vec_isa_ok = True
    assumed = str(pick_vec_isa())
    return {"probe_s": probe_s, "isa": probed, "isa_when_skipped": assumed}


def main():
    spec = json.loads(sys.argv[1])
    import torch

    if spec.get("threads"):
        torch.set_num_threads(spec["threads"])
    if spec["role"] == "isa_probe":
        result = run_isa_probe(spec)
    elif spec["role"] == "compile":
        result = run_compile(spec)
    else:
        result = run_measure(spec)
    result["num_threads"] = torch.get_num_threads()
    print(MARKER + json.dumps(result, default=_json_default), flush=True)


def _json_default(o):
    if isinstance(o, float) and (math.isnan(o) or math.isinf(o)):
        return None
    return str(o)


if __name__ == "__main__":
    main()
