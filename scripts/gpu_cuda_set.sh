# GPU (session 21's batch K): CUDA tests (static, dynamic, AOT, models), the int-input and
# aliased-getattr tests, sharded; beside them the gcc 13 cumsum probe; then the training bench
# (bf16 autocast and float32) and dynamic_seq on CUDA. Everything lands in $OUT/all.tgz.
set -u
# Run: run(command="bash scripts/gpu_cuda_set.sh", carry=["build/cp312"]) after `make ext312`
# and `strip --strip-debug build/cp312/torchferro/*.so` (about 250 s on an H100).
. scripts/gpu_env.sh
O=/tmp/o; mkdir -p $O
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; gcc --version | head -1;
  python3 -c 'import torch, transformers, torchferro; print(torch.__version__, transformers.__version__, torchferro._C.__file__)'; } > $O/env.txt 2>&1
( OUT=$O timeout 280 bash scripts/gpu_probe_cumsum_cflags.sh > $O/probe.log 2>&1 ) &
probe=$!
J=12
export OMP_NUM_THREADS=1
FILES="tests/test_cuda.py tests/test_aot_cuda.py tests/test_cuda_dynamic.py tests/test_cuda_models.py tests/test_guards_aliased_getattr.py tests/test_dynamic_int_kernels.py"
pids=()
for ((i = 0; i < J; i++)); do
  ( trap - INT; TORCHFERRO_SHARD=$i TORCHFERRO_NSHARDS=$J exec timeout 290 python3 -m pytest -q -p no:cacheprovider -p pytest_shard -rfEx $FILES > $O/pytest-$i.log 2>&1 ) &
  pids+=("$!")
done
for p in "${pids[@]}"; do wait $p; done
start=$(date +%s)
wait $probe
unset OMP_NUM_THREADS
( timeout 90 python3 bench/train_cuda.py --amp --steps 5 --only eager,torchferro ) > $O/train_amp.txt 2>&1
( timeout 70 python3 bench/train_cuda.py --steps 5 --batch 4 --only eager,torchferro ) > $O/train_f32.txt 2>&1
( OUT=$O TESTS=0 BENCH_ARGS="--config tiny --batch 8 --reps 5" timeout 90 bash scripts/gpu_cuda_dynamic.sh ) > $O/cudadyn.txt 2>&1
for f in $O/pytest-*.log; do tail -n 1 $f; done > $O/summary.txt
grep -h -E "^(FAILED|ERROR|XPASS)" $O/pytest-*.log >> $O/summary.txt
cat $O/flags.txt >> $O/summary.txt 2>/dev/null
cp $O/summary.txt $OUT/
tar -czf $OUT/all.tgz -C /tmp o
