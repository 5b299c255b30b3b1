#!/usr/bin/env bash
# Stages what scripts/gpu_cuda_suite.sh needs into DEST (default /work/main/build/cuda2, an ignored
# folder of the checkout the device tool sends): the package without its 3.11 extension, the
# cp312 extension (`make ext312` first), tests, bench, scripts and the lowering table the
# differential cases read. About 31 MiB, under the tool's 64 MiB carry limit.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DEST="${1:-/work/main/build/cuda2}"
rm -rf "$DEST"
mkdir -p "$DEST/python" "$DEST/build/cp312/torchferro" "$DEST/inductor/src"
cp -r "$ROOT/python/torchferro" "$DEST/python/"
find "$DEST/python" -name '*.so' -delete
find "$DEST/python" -name __pycache__ -prune -exec rm -rf {} +
cp "$ROOT/build/cp312/torchferro/_C.cpython-312-x86_64-linux-gnu.so" "$DEST/build/cp312/torchferro/"
cp -r "$ROOT/tests" "$ROOT/bench" "$ROOT/scripts" "$DEST/"
cp -r "$ROOT/inductor/src/lower" "$DEST/inductor/src/"
rm -rf "$DEST/bench/results" "$DEST/tests/.hypothesis"
# Optional: generated CUDA sources to time through NVRTC there (NVRTC_SRC=build/nvsrc).
if [ -n "${NVRTC_SRC:-}" ]; then
    mkdir -p "$DEST/build/nvsrc" && cp "$NVRTC_SRC"/*.cu "$DEST/build/nvsrc/"
fi
find "$DEST" -name __pycache__ -prune -exec rm -rf {} +
du -sh "$DEST"
