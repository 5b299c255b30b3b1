#!/usr/bin/env bash
# CUDA graphs with symbolic sizes on the GPU machine (issue 18 on issue 16): the tests, then
# bench/dynamic_seq.py on CUDA, automatic dynamic and every length static, each against eager
# and torch.compile in its own run.
#
# Here:   make ext312     (writes build/cp312/torchferro/_C.cpython-312-x86_64-linux-gnu.so)
# There:  run(command="bash scripts/gpu_cuda_dynamic.sh", carry=["build/cp312"])
#
# TESTS=0 skips the tests, BENCH=0 the bench; BENCH_ARGS adds to dynamic_seq.py's (default:
# --config tiny --batch 8 --reps 10). Logs go to $OUT (or build/cp312/out): env.txt,
# pytest.log, bench-auto.log, bench-static.log.
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PY="${PYTHON:-python3}"
SO=build/cp312/torchferro/_C.cpython-312-x86_64-linux-gnu.so
OUTDIR="${OUT:-$ROOT/build/cp312/out}"
mkdir -p "$OUTDIR"
if [ ! -f "$SO" ]; then
    echo "gpu_cuda_dynamic.sh: $SO is missing: run 'make ext312' here and carry build/cp312" >&2
    exit 2
fi

STAGE="$(mktemp -d "${TMPDIR:-/tmp}/torchferro-cudadyn.XXXXXX")"
trap 'rm -rf "$STAGE"' EXIT
cp -r python/torchferro "$STAGE/torchferro"
find "$STAGE/torchferro" -name '*.so' -delete
cp "$SO" "$STAGE/torchferro/"
export PYTHONPATH="$STAGE:$ROOT/tests${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONDONTWRITEBYTECODE=1
"$PY" -c 'import torch, torchferro; print(torch.__version__, torch.cuda.get_device_name(), torchferro._C.__file__)' \
    | tee "$OUTDIR/env.txt"

rc=0
if [ "${TESTS:-1}" != 0 ]; then
    timeout 300 "$PY" -m pytest -q -p no:cacheprovider tests/test_cuda_dynamic.py \
        2>&1 | tail -n 60 | tee "$OUTDIR/pytest.log"
    rc=${PIPESTATUS[0]}
fi
if [ "${BENCH:-1}" != 0 ]; then
    ARGS=(--device cuda ${BENCH_ARGS:---config tiny --batch 8 --reps 10})
    timeout 240 "$PY" bench/dynamic_seq.py "${ARGS[@]}" 2>&1 | tee "$OUTDIR/bench-auto.log"
    timeout 240 "$PY" bench/dynamic_seq.py "${ARGS[@]}" --dynamic false 2>&1 \
        | tee "$OUTDIR/bench-static.log"
fi
exit "$rc"
