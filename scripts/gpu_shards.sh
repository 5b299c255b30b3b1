# Sourced by the GPU batch scripts after scripts/gpu_env.sh: `cuda_set DIR TIMEOUT` runs the
# CUDA test set ($FILES, default below) in $J shards (default 12) side by side under
# faulthandler, logs in DIR/pytest-N.log, and writes DIR/tests.txt: each shard's summary line,
# then every failure, error, unexpected pass and fatal error.
CUDA_SET="tests/test_cuda.py tests/test_aot_cuda.py tests/test_cuda_dynamic.py tests/test_cuda_models.py tests/test_guards_aliased_getattr.py tests/test_dynamic_int_kernels.py tests/test_inductor_sdpa.py"

cuda_set() {
  local dir=$1 limit=$2 n=${J:-12} files=${FILES:-$CUDA_SET} pids=() i p
  for ((i = 0; i < n; i++)); do
    ( TORCHFERRO_SHARD=$i TORCHFERRO_NSHARDS=$n OMP_NUM_THREADS=1 exec timeout $limit python3 -X faulthandler -m pytest -q -p no:cacheprovider -p pytest_shard -rfEx $files > $dir/pytest-$i.log 2>&1 ) &
    pids+=("$!")
  done
  for p in "${pids[@]}"; do wait $p; done
  for ((i = 0; i < n; i++)); do tail -n 1 $dir/pytest-$i.log; done > $dir/tests.txt
  grep -h -E "^(FAILED|ERROR|XPASS)|Fatal Python" $dir/pytest-*.log >> $dir/tests.txt
}
