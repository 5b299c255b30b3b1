# GPU (session 26): does shard 1's segfault (gpu_session26c.sh) reproduce? Shard 1 of 12 twice,
# side by side, under faulthandler.
set -u
. scripts/gpu_env.sh
O=/tmp/o; mkdir -p $O
FILES="tests/test_cuda.py tests/test_aot_cuda.py tests/test_cuda_dynamic.py tests/test_cuda_models.py tests/test_guards_aliased_getattr.py tests/test_dynamic_int_kernels.py tests/test_inductor_sdpa.py"
for r in a b; do
  ( TORCHFERRO_SHARD=1 TORCHFERRO_NSHARDS=12 OMP_NUM_THREADS=1 exec timeout 95 python3 -X faulthandler -m pytest -q -p no:cacheprovider -p pytest_shard -rfEx $FILES > $O/shard1-$r.log 2>&1 ) &
done
wait
for r in a b; do echo "== $r"; grep -E "passed|failed|Fatal|line [0-9]+ in" $O/shard1-$r.log | head -8; done > $OUT/summary.txt
tar -czf $OUT/all.tgz -C /tmp o
