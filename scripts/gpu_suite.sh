#!/usr/bin/env bash
# Runs the pytest suite under the GPU machine's CPython 3.12 with the cp312 extension built here.
#
# Here:   make ext312     (writes build/cp312/torchferro/_C.cpython-312-x86_64-linux-gnu.so)
# There:  the device tool, from the repository root, carrying the extension:
#           run(command="bash scripts/gpu_suite.sh", carry=["build/cp312"])
#         `bash scripts/gpu_suite.sh tests/test_hook.py -x` runs only what follows instead.
#
# The package is staged in a temporary folder (python/torchferro plus the cp312 .so) and put
# first on PYTHONPATH, so the working tree stays untouched. The suite runs as JOBS processes
# (default 8), each keeping every JOBS-th collected test (scripts/pytest_shard.py), because one
# device command may run 10 minutes at most. Logs, junit files and summary.txt go to $OUT (the
# folder the device tool brings back) or to build/cp312/out.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PY="${PYTHON:-python3}"
SO=build/cp312/torchferro/_C.cpython-312-x86_64-linux-gnu.so
OUTDIR="${OUT:-$ROOT/build/cp312/out}"
JOBS="${JOBS:-8}"
mkdir -p "$OUTDIR"

if ! "$PY" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 12))'; then
    echo "gpu_suite.sh: $PY is $("$PY" -V 2>&1), the extension needs CPython 3.12" >&2
    exit 2
fi
if [ ! -f "$SO" ]; then
    echo "gpu_suite.sh: $SO is missing: run 'make ext312' here and carry build/cp312" >&2
    exit 2
fi

STAGE="$(mktemp -d "${TMPDIR:-/tmp}/torchferro-cp312.XXXXXX")"
trap 'rm -rf "$STAGE"' EXIT
cp -r python/torchferro "$STAGE/torchferro"
find "$STAGE/torchferro" -name '*.so' -delete
cp "$SO" "$STAGE/torchferro/"
export PYTHONPATH="$STAGE:$ROOT/scripts${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONDONTWRITEBYTECODE=1

{
    echo "date: $(date -u +%FT%TZ)"
    echo "python: $("$PY" -VV)"
    echo "cc: $( (cc --version 2>/dev/null || echo none) | head -n 1)"
    "$PY" - <<'EOF'
import torch, torchferro
print("torch:", torch.__version__, "cuda:", torch.version.cuda,
      "devices:", [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())])
print("torchferro:", torchferro.__file__)
print("_C:", torchferro._C.__file__)
EOF
} | tee "$OUTDIR/env.txt"
if ! grep -q "^_C: $STAGE/" "$OUTDIR/env.txt"; then
    echo "gpu_suite.sh: torchferro._C was not loaded from the staged package" >&2
    exit 3
fi

PYTEST=("$PY" -m pytest -q -p no:cacheprovider -p pytest_shard)
set +e
if [ "$#" -gt 0 ]; then
    "${PYTEST[@]}" --junitxml="$OUTDIR/junit-0.xml" "$@" 2>&1 | tee "$OUTDIR/pytest-0.log"
    rc=${PIPESTATUS[0]}
else
    # Torch and the inductor's OpenMP kernels would each take every core otherwise.
    export OMP_NUM_THREADS="${OMP_NUM_THREADS:-$(($(nproc) / JOBS > 0 ? $(nproc) / JOBS : 1))}"
    pids=()
    for ((i = 0; i < JOBS; i++)); do
        # A background job of a non-interactive shell starts with SIGINT ignored, and Python
        # then installs no KeyboardInterrupt handler, in the shard or in the children its tests
        # start: `trap - INT` gives each shard the disposition a foreground pytest has (and
        # lets Ctrl-C reach the shards).
        (
            trap - INT
            TORCHFERRO_SHARD=$i TORCHFERRO_NSHARDS=$JOBS exec "${PYTEST[@]}" \
                --junitxml="$OUTDIR/junit-$i.xml" tests bench/test_bench_smoke.py \
                >"$OUTDIR/pytest-$i.log" 2>&1
        ) &
        pids+=("$!")
    done
    rc=0
    for pid in "${pids[@]}"; do
        wait "$pid" || rc=$?
    done
    tail -n 3 "$OUTDIR"/pytest-*.log
fi
set -e

# One summary over every shard: counts, then each failing or erroring test with its message.
"$PY" - "$OUTDIR" <<'EOF' | tee "$OUTDIR/summary.txt"
import glob, sys, xml.etree.ElementTree as ET
out = sys.argv[1]
counts = dict(passed=0, failed=0, errors=0, skipped=0, xfailed=0)
bad = []
for path in sorted(glob.glob(f"{out}/junit-*.xml")):
    for case in ET.parse(path).iter("testcase"):
        name = f"{case.get('classname')}::{case.get('name')}"
        kinds = {child.tag: child for child in case}
        if "failure" in kinds or "error" in kinds:
            tag = "failure" if "failure" in kinds else "error"
            counts["failed" if tag == "failure" else "errors"] += 1
            bad.append(f"{tag.upper()} {name}: {(kinds[tag].get('message') or '')[:300]}")
        elif "skipped" in kinds:
            xfail = kinds["skipped"].get("type") == "pytest.xfail"
            counts["xfailed" if xfail else "skipped"] += 1
        else:
            counts["passed"] += 1
print("CPython 3.12 suite:", ", ".join(f"{v} {k}" for k, v in counts.items()))
print("\n".join(bad))
EOF
exit "$rc"
