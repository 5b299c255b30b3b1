"""The suite's readable outputs: a Markdown table and a PNG chart, both made from results.json."""

from __future__ import annotations

import json
import sys

VARIANTS = ["eager", "torch.compile", "torchferro"]


def fmt_time(s) -> str:
    if s is None:
        return "—"
    if s < 1e-3:
        return f"{s * 1e6:.1f} µs"
    if s < 1:
        return f"{s * 1e3:.2f} ms"
    return f"{s:.2f} s"


def fmt_mib(x) -> str:
    return "—" if x is None else f"{x:.0f} MiB"


def status_cell(vname: str, v: dict) -> str:
    if vname == "eager":
        return "—"
    st = (v.get("run") or {}).get("status") or (v.get("cold") or {}).get("status")
    if not st:
        return "—"
    kind = st.get("compiled", "?")
    n = st.get("frames_compiled", 0)
    cell = f"{kind}: {n} graph{'s' if n != 1 else ''}"
    fell = st.get("frames_fell_back", st.get("graph_breaks", 0))
    if fell:
        cell += f", {fell} fell back" if vname == "torchferro" else f", {fell} breaks"
    if st.get("recompile_limit_hits"):
        cell += ", recompile limit hit"
    return cell


def correct_cell(v: dict) -> str:
    bad, err, checked = [], [], 0
    for phase in ("cold", "warm", "run"):
        p = v.get(phase)
        if not isinstance(p, dict):
            continue
        if p.get("error"):
            err.append(phase)
        for key in ("mismatch", "recompile_mismatch"):
            if key in p:
                checked += 1
                if p[key]:
                    bad.append(phase)
    if bad:
        return "**WRONG** (" + ", ".join(sorted(set(bad))) + ")"
    if err:
        return "**error** (" + ", ".join(err) + ")"
    return f"ok ({checked} checks)" if checked else "ref"


def markdown(results: dict) -> str:
    m = results["machine"]
    gpu = (
        f", GPU {m['gpu']['name']} ×{m['gpu']['count']}" if m.get("gpu") else ", no GPU"
    )
    lines = [
        f"## torchferro benchmark ({results.get('mode', 'full')} run, {m['date']})",
        "",
        f"Machine: {m['cpu_model']}, {m['cpu_cores']} cores, {m.get('memory_gib')} GiB{gpu}; device `{m['device']}`; "
        f"torch {m['torch']} ({m.get('torch_threads')} threads), Python {m['python']}; torchferro {m.get('torchferro_commit') or '?'}."
        + (
            f" Suite wall time {results['wall_s']:.0f} s."
            if results.get("wall_s")
            else ""
        )
        + (
            f" Load average (1 min) at start {m['load_average_start'][0]:.2f}"
            if m.get("load_average_start")
            else ""
        )
        + (
            f", at end {m['load_average_end'][0]:.2f}."
            if m.get("load_average_end")
            else "."
        ),
        "",
    ]
    if results.get("skipped"):
        return "\n".join(lines + [f"Skipped: {results['skipped']}", ""])
    lines += [
        "| workload | variant | graphs | median | IQR | speedup | throughput | compile, cold (1st call) | compile, warm (1st call) | recompile | call mem | process peak | correct |",
        "|---|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|",
    ]
    notes = list(results.get("notes", []))
    cuda = str(m.get("device", "")).startswith("cuda")
    quick_na = False
    for name, e in results["workloads"].items():
        if "skipped" in e:
            lines.append(
                f"| {name} | — | skipped: {e['skipped']} |  |  |  |  |  |  |  |  |  |  |"
            )
            continue
        if "error" in e:
            lines.append(
                f"| {name} | — | **{e['error'][:120]}** |  |  |  |  |  |  |  |  |  |  |"
            )
        for vname in VARIANTS:
            v = e["variants"].get(vname)
            if v is None:
                continue
            if v.get("na") == "not run in --quick":
                quick_na = True
                continue
            if "na" in v:
                lines.append(
                    f"| {name} | {vname} | {v['na']} |  |  |  |  |  |  |  |  |  |  |"
                )
                continue
            run = v.get("run") or {}
            cold = v.get("cold") or {}
            warm = v.get("warm") or {}
            thr = "—"
            if run.get("gb_per_s"):
                thr = f"{run['gb_per_s']:.1f} GB/s"
            elif run.get("gflop_per_s"):
                thr = f"{run['gflop_per_s']:.1f} GFLOP/s"
            if vname == "eager":
                peak = cold_eager_peak(e, cuda)
            else:
                peak = cold.get(
                    "cuda_max_allocated_mib" if cuda else "process_peak_rss_mib"
                )
            mem = (run.get("memory") or {}).get("delta_mib")
            cells = [
                name,
                vname,
                status_cell(vname, v),
                fmt_time(run.get("median_s")),
                f"±{run['iqr_pct'] / 2:.1f}%"
                if run.get("iqr_pct") is not None
                else "—",
                f"{run['speedup']:.2f}×" if run.get("speedup") else "—",
                thr,
                "—" if vname == "eager" else first_call_cell(cold),
                "—" if vname == "eager" else first_call_cell(warm),
                "—" if vname == "eager" else fmt_time(cold.get("recompile_s")),
                fmt_mib(mem),
                fmt_mib(peak),
                correct_cell(v),
            ]
            lines.append("| " + " | ".join(cells) + " |")
            st = run.get("status") or cold.get("status") or {}
            if vname == "torchferro" and st.get("reasons"):
                notes.append(
                    f"{name} / torchferro fell back: "
                    + "; ".join(r.replace("|", "/") for r in st["reasons"][:3])
                )
    lines += [
        "",
        "Sizes: "
        + "; ".join(
            f"{n} {e['size']}" for n, e in results["workloads"].items() if e.get("size")
        )
        + ".",
    ]
    lines += [
        "",
        "How to read it: median and IQR (half the interquartile range, as ± of the median) of the time per call over "
        "interleaved repetitions (the order rotated each repetition) after warm-up; speedup = eager median / variant median. Throughput: GB/s counts the "
        "ideal traffic of one call (each input read once, each output written once); GFLOP/s counts matmul and "
        "convolution FLOPs (torch.utils.flop_counter). Compile, cold / warm: the compile's share of the first call in a "
        "fresh process with an empty / filled cache directory (TORCHINDUCTOR_CACHE_DIR, TORCHFERRO_CACHE_DIR): for "
        "torchferro the sum of its own compile phases (TORCHFERRO_LOGS=perf: tracing, guards, inductor, C compiler or "
        "cache load, bytecode), for torch.compile the first call less a steady call; in parentheses the first call's "
        "whole wall time, which also runs the graph once on cold memory (import of torch not included). Recompile: the next call at a new shape in the cold process. Call mem: peak "
        "memory a call needs above what was resident before it (RSS high-water mark on CPU, max_memory_allocated on "
        "CUDA). Process peak: peak RSS (CUDA: max_memory_allocated) of the fresh cold-cache process after its first "
        "call (eager: before compiling). "
        "graphs: frames the compiler captured; 'fell back' counts frames torchferro ran eagerly (graph breaks).",
    ]
    if quick_na:
        notes.append(
            "torch.compile is not run in --quick: its first graph in a fresh process "
            "costs 20-50 s on a 2-core CPU."
        )
    if results.get("failures"):
        lines += ["", "**Failures:**", ""] + [f"- {f}" for f in results["failures"]]
    if notes:
        lines += ["", "Notes:", ""] + [f"- {n}" for n in notes]
    return "\n".join(lines) + "\n"


def panic_line(d: dict) -> str:
    """The first telling line of a crashed process's stderr (a Rust panic, a fatal error)."""
    lines = (d.get("stderr_head") or "").splitlines()
    for i, line in enumerate(lines):
        if "panicked" in line:  # the message is on the next line
            return " [" + " ".join(x.strip() for x in lines[i : i + 2])[:400] + "]"
        if "Fatal" in line or "Error" in line:
            return f" [{line.strip()[:400]}]"
    return ""


def na_label(entry: dict, vname: str) -> str:
    v = entry["variants"].get(vname) or {}
    if any(
        isinstance(v.get(p), dict) and v[p].get("error")
        for p in ("cold", "warm", "run")
    ):
        return "error"
    return "n/a"


def first_call_cell(phase: dict) -> str:
    first = phase.get("first_call_s")
    if first is None:
        return "—"
    if phase.get("compile_s") is None:
        return fmt_time(first)
    return f"{fmt_time(phase['compile_s'])} ({fmt_time(first)})"


def cold_eager_peak(e: dict, cuda: bool):
    """Eager's process peak: measured in the cold-cache processes before they compile."""
    key = "cuda_max_allocated_eager_mib" if cuda else "process_peak_rss_eager_mib"
    for vname in ("torch.compile", "torchferro"):
        c = (e["variants"].get(vname) or {}).get("cold") or {}
        if c.get(key):
            return c[key]
    return None


def chart(results: dict, path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    names = [
        n
        for n, e in results["workloads"].items()
        if "skipped" not in e and e.get("variants")
    ]
    if not names:
        return
    fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(max(8, 1.3 * len(names) + 3), 9))
    colors = {"torch.compile": "tab:blue", "torchferro": "tab:orange"}
    x = list(range(len(names)))
    width = 0.38
    for i, vname in enumerate(("torch.compile", "torchferro")):
        vals = [
            (
                (results["workloads"][n]["variants"].get(vname) or {}).get("run") or {}
            ).get("speedup")
            for n in names
        ]
        xs = [xi + (i - 0.5) * width for xi in x]
        if any(vals):
            ax1.bar(
                [a for a, v in zip(xs, vals) if v],
                [v for v in vals if v],
                width,
                label=vname,
                color=colors[vname],
            )
        for n, a, v in zip(names, xs, vals):
            ax1.text(
                a,
                v if v else 1,
                f"{v:.2f}" if v else na_label(results["workloads"][n], vname),
                ha="center",
                va="bottom",
                fontsize=7,
            )
    ax1.axhline(1.0, color="black", lw=0.8)
    ax1.set_yscale("log")
    ax1.set_xticks(x, names, rotation=20)
    ax1.set_ylabel("speedup over eager (×, log)")
    m = results["machine"]
    ax1.set_title(
        f"torchferro bench ({results.get('mode')}) — {m['cpu_model']} ×{m['cpu_cores']}, {m['device']}, torch {m['torch']}, {m['date'][:10]}",
        fontsize=9,
    )
    ax1.legend(fontsize=8)

    series = [
        ("torch.compile", "cold", "", "torch.compile cold"),
        ("torch.compile", "warm", "//", "torch.compile warm"),
        ("torch.compile", "recompile", "..", "torch.compile recompile"),
        ("torchferro", "cold", "", "torchferro cold"),
        ("torchferro", "warm", "//", "torchferro warm"),
        ("torchferro", "recompile", "..", "torchferro recompile"),
    ]
    w2 = 0.8 / len(series)
    for j, (vname, kind, hatch, label) in enumerate(series):
        vals = []
        for n in names:
            v = results["workloads"][n]["variants"].get(vname) or {}
            if kind == "recompile":
                vals.append((v.get("cold") or {}).get("recompile_s"))
            else:
                ph = v.get(kind) or {}
                vals.append(ph.get("compile_s") or ph.get("first_call_s"))
        xs = [xi - 0.4 + (j + 0.5) * w2 for xi in x]
        pts = [(a, b) for a, b in zip(xs, vals) if b]
        if pts:
            ax2.bar(
                [a for a, _ in pts],
                [b for _, b in pts],
                w2,
                color=colors[vname],
                hatch=hatch,
                edgecolor="white",
                label=label,
            )
    ax2.set_yscale("log")
    ax2.set_xticks(x, names, rotation=20)
    ax2.set_ylabel("seconds (log)")
    ax2.set_title(
        "compile time of the first call in a fresh process (cold / warm cache) and recompile after a shape change",
        fontsize=9,
    )
    ax2.legend(fontsize=7, ncol=2)
    plain = matplotlib.ticker.FuncFormatter(lambda y, _: f"{y:g}")
    for ax in (ax1, ax2):
        ax.yaxis.set_major_formatter(plain)
    ax1.yaxis.set_minor_formatter(
        plain
    )  # speedups span a decade or so: label the minor ticks
    ax1.tick_params(axis="y", which="minor", labelsize=7)
    ax2.yaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


if __name__ == "__main__":
    # Re-render from a results.json: python bench/report.py results.json [out.png]
    res = json.load(open(sys.argv[1]))
    print(markdown(res))
    if len(sys.argv) > 2:
        chart(res, sys.argv[2])
