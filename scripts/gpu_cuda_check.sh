#!/usr/bin/env bash
# The CUDA code generator on the GPU machine (no Rust there): its kernels run on the GPU and
# are compared with the inductor's reference interpreter, and its sources compile with the
# machine's NVRTC for the device's compute capability.
#
# Here:   bash scripts/gpu_cuda_check.sh build
#           builds the inductor's two CUDA test binaries (tests/cuda_codegen.rs, cuda_run.rs)
#           and copies them to build/cuda/ (ignored by git).
# There:  the device tool, from the repository root, carrying the binaries:
#           run(command="bash scripts/gpu_cuda_check.sh", carry=["build/cuda"])
#
# Each binary finds NVRTC in torch's wheel through `$PYTHON -c 'import sys; print(sys.path)'`
# (default python3; torch 2.11.0+cu130 ships nvidia/cu13/lib/libnvrtc.so.13) and the driver
# (libcuda.so.1) on the library path. Without a GPU each test prints "SKIPPED: ..." and passes;
# the run's output (with --nocapture, so skips show) goes to $OUT/cuda_check.txt as well.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
BIN="$ROOT/build/cuda"

if [ "${1:-}" = "build" ]; then
    mkdir -p "$BIN"
    cargo test --release -p inductor --test cuda_codegen --test cuda_run --no-run \
        --message-format=json 2>/dev/null |
        python3 -c '
import json, shutil, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["name"] in ("cuda_codegen", "cuda_run"):
        shutil.copy(m["executable"], sys.argv[1] + "/" + m["target"]["name"])
        print("copied", m["target"]["name"])
' "$BIN"
    exit 0
fi

export PYTHON="${PYTHON:-python3}"
OUTDIR="${OUT:-$BIN/out}"
mkdir -p "$OUTDIR"
for t in cuda_codegen cuda_run; do
    if [ ! -x "$BIN/$t" ]; then
        echo "gpu_cuda_check.sh: $BIN/$t is missing: run 'bash scripts/gpu_cuda_check.sh build' here and carry build/cuda" >&2
        exit 2
    fi
done
{
    nvidia-smi -L || echo "nvidia-smi: not available"
    "$PYTHON" -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "available", torch.cuda.is_available())' || true
    status=0
    for t in cuda_codegen cuda_run; do
        echo "== $t"
        "$BIN/$t" --test-threads 1 --nocapture || status=1
    done
    echo "status $status"
    exit $status
} 2>&1 | tee "$OUTDIR/cuda_check.txt"
