# On the GPU machine (gcc 13.3): which C flag makes the cumsum-int64 differential case right
# (session 18 found it wrong there, right under gcc 12 here with the same C; docs/cuda.md).
# Run: run(command="OUT=$OUT bash scripts/gpu_probe_cumsum_cflags.sh", carry=["build/cp312"]).
set -u
. scripts/gpu_env.sh
T="tests/test_inductor_differential.py::test_lowering_matches_eager[cumsum-int64]"
gcc --version | head -1 > $OUT/flags.txt
for extra in "" "-fno-tree-vectorize" "-mno-avx512f" "-fno-openmp-simd" "-O2" "-fno-tree-loop-vectorize" "-fno-tree-slp-vectorize"; do
  printf '#!/bin/sh\nexec gcc "$@" %s\n' "$extra" > /tmp/ccw; chmod +x /tmp/ccw
  r=$(CC=/tmp/ccw TORCHFERRO_CACHE_DIR=$(mktemp -d) timeout 40 python3 -m pytest -q -p no:cacheprovider "$T" 2>&1 | tail -1)
  echo "[$extra] $r" >> $OUT/flags.txt
done
