"""Times NVRTC on generated CUDA sources (no GPU needed), with the inductor's options and
variants of them, to find where a graph's compile time goes.

    python scripts/gpu_nvrtc_time.py DIR_OR_FILES... [--variants base,aligned,split]

Sources: `.cu` files (the kernel cache keeps each compiled source beside its cubin, in
`<cache>/cuda/`). Variants:
- base: the inductor's options (`--gpu-architecture=sm_90 --std=c++17 --fmad=false`);
- aligned: the source with every chunked kernel's plain (unaligned) instance dropped, as a
  module compiled for aligned pointers only would be;
- split: base plus `--split-compile=0` (NVRTC optimizes a program's functions on all cores).
NVRTC is torch's (`nvidia/cu13/lib/libnvrtc.so.13` under `sys.path`) or `$TORCHFERRO_NVRTC`.
Prints one line per source and variant: kernels, seconds, cubin bytes.
"""

from __future__ import annotations

import ctypes
import glob
import os
import re
import sys
import time

BASE = ["--gpu-architecture=sm_90", "--std=c++17", "--fmad=false"]


def load_nvrtc():
    path = os.environ.get("TORCHFERRO_NVRTC")
    if not path:
        for d in sys.path:
            for c in glob.glob(os.path.join(d, "nvidia/cu*/lib/libnvrtc.so.*")):
                if "builtins" not in c:
                    path = c
                    break
            if path:
                break
    if not path:
        sys.exit("no NVRTC found")
    d = os.path.dirname(path)
    for b in glob.glob(os.path.join(d, "libnvrtc-builtins.so*")):
        ctypes.CDLL(b, mode=ctypes.RTLD_GLOBAL)
    return ctypes.CDLL(path)


def compile_once(lib, src: str, opts: list[str]) -> tuple[float, int]:
    prog = ctypes.c_void_p()
    rc = lib.nvrtcCreateProgram(
        ctypes.byref(prog), src.encode(), b"k.cu", 0, None, None
    )
    assert rc == 0, rc
    arr = (ctypes.c_char_p * len(opts))(*[o.encode() for o in opts])
    t = time.perf_counter()
    rc = lib.nvrtcCompileProgram(prog, len(opts), arr)
    dt = time.perf_counter() - t
    if rc != 0:
        n = ctypes.c_size_t()
        lib.nvrtcGetProgramLogSize(prog, ctypes.byref(n))
        buf = ctypes.create_string_buffer(n.value)
        lib.nvrtcGetProgramLog(prog, buf)
        sys.exit(f"NVRTC failed ({rc}): {buf.value.decode()[:2000]}")
    n = ctypes.c_size_t()
    lib.nvrtcGetCUBINSize(prog, ctypes.byref(n))
    lib.nvrtcDestroyProgram(ctypes.byref(prog))
    return dt, n.value


def aligned_only(src: str) -> str:
    """Drops each wrapper's call of the plain instance (so it is never instantiated)."""
    return re.sub(r"\n\s*\w+_body<false>\([^;]*\);", "\n", src)


def main() -> None:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    variants = "base,aligned,split"
    for a in sys.argv[1:]:
        if a.startswith("--variants="):
            variants = a.split("=", 1)[1]
    files: list[str] = []
    for a in args:
        files += sorted(glob.glob(os.path.join(a, "*.cu"))) if os.path.isdir(a) else [a]
    lib = load_nvrtc()
    totals: dict[str, float] = {}
    for f in files:
        src = open(f).read()
        k = src.count("__global__")
        for v in variants.split(","):
            s, opts = src, list(BASE)
            if v == "aligned":
                s = aligned_only(src)
            elif v == "split":
                opts.append("--split-compile=0")
            elif v == "aligned+split":
                s = aligned_only(src)
                opts.append("--split-compile=0")
            dt, size = compile_once(lib, s, opts)
            totals[v] = totals.get(v, 0.0) + dt
            print(
                f"{os.path.basename(f)[:12]} kernels {k:4d} {v:14s} {dt:7.3f} s  cubin {size} B",
                flush=True,
            )
    for v, t in totals.items():
        print(f"total {v:14s} {t:7.2f} s")


if __name__ == "__main__":
    main()
