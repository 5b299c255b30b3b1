#!/usr/bin/env bash
# The CUDA launch path on the GPU machine (issue 16): tests/test_cuda.py, then the CUDA bench.
#
# Here:   make ext312, then stage what the command needs in an ignored folder of the checkout
#         the device tool sends (see docs/cuda.md, "session 9 on the H200"):
#           python tests bench scripts + build/cp312/torchferro/_C.cpython-312-x86_64-linux-gnu.so
# There:  run(command="cd build/cuda2 && bash scripts/gpu_cuda_suite.sh", carry=["build/cuda2"])
#
# Arguments (all optional): TESTS=0 skips the tests, BENCH=0 the bench; BENCH_ONLY names the
# bench workloads (default: the memory-bound ones and the copy); PYTEST_ARGS adds to pytest's;
# BENCH_ARGS to bench/run.py's (e.g. --no-recompile); BENCH_TIMEOUT (seconds) stops the bench
# (its partial results stay), BENCH_DEADLINE (epoch seconds) likewise at that time; TEST_TIMEOUT
# stops pytest; NVRTC_SRC, a folder of .cu files, is timed through NVRTC first
# (scripts/gpu_nvrtc_time.py) with NVRTC_VARIANTS.
# Logs go to $OUT (the device tool brings back at most 8 files): env.txt, nvrtc.log, pytest.log,
# bench.log, bench/results{,.partial}.json, bench/results.md.
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PY="${PYTHON:-python3}"
SO=build/cp312/torchferro/_C.cpython-312-x86_64-linux-gnu.so
OUTDIR="${OUT:-$ROOT/build/cuda-out}"
mkdir -p "$OUTDIR"

STAGE="$(mktemp -d "${TMPDIR:-/tmp}/torchferro-cuda.XXXXXX")"
trap 'rm -rf "$STAGE"' EXIT
cp -r python/torchferro "$STAGE/torchferro"
find "$STAGE/torchferro" -name '*.so' -delete
cp "$SO" "$STAGE/torchferro/" || exit 2
export PYTHONPATH="$STAGE:$ROOT/scripts${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1

{
    echo "date: $(date -u +%FT%TZ)"
    "$PY" -VV
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv 2>&1
    "$PY" -c 'import torch, torchferro; print("torch", torch.__version__, torch.version.cuda, torch.cuda.get_device_name(0), torch.cuda.device_count()); print("_C", torchferro._C.__file__)'
} 2>&1 | tee "$OUTDIR/env.txt"

rc=0
if [ -n "${NVRTC_SRC:-}" ]; then
    timeout "${NVRTC_TIMEOUT:-600}" "$PY" scripts/gpu_nvrtc_time.py "$NVRTC_SRC" --variants="${NVRTC_VARIANTS:-base,aligned,split,aligned+split}" 2>&1 \
        | tee "$OUTDIR/nvrtc.log" | tail -n 12
fi
if [ "${TESTS:-1}" != 0 ]; then
    t0=$(date +%s)
    # shellcheck disable=SC2086
    timeout "${TEST_TIMEOUT:-3600}" "$PY" -m pytest -q -p no:cacheprovider -n "${JOBS:-8}" --dist loadgroup \
        tests/test_cuda.py ${PYTEST_ARGS:-} 2>&1 | tee "$OUTDIR/pytest.log" | tail -n 60
    rc=${PIPESTATUS[0]}
    echo "tests: rc=$rc in $(($(date +%s) - t0)) s"
fi
if [ "${BENCH:-1}" != 0 ]; then
    t0=$(date +%s)
    if [ -n "${BENCH_DEADLINE:-}" ]; then
        BENCH_TIMEOUT=$((BENCH_DEADLINE - t0))
        echo "bench: ${BENCH_TIMEOUT} s left"
    fi
    # shellcheck disable=SC2086
    timeout "${BENCH_TIMEOUT:-3600}" "$PY" bench/run.py --device cuda --no-chart --out "$OUTDIR/bench" \
        --only "${BENCH_ONLY:-copy,pointwise,softmax,layer_norm,rms_norm}" ${BENCH_ARGS:-} 2>&1 \
        | tee "$OUTDIR/bench.log" | tail -n 30
    brc=${PIPESTATUS[0]}
    cat "$OUTDIR/bench/results.md" 2>/dev/null
    echo "bench: rc=$brc in $(($(date +%s) - t0)) s"
    [ "$rc" = 0 ] && rc=$brc
fi
exit "$rc"
