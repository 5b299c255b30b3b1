# GPU (session 22, third batch): the split column kernels (several sums over the rows) and the
# `.to(device)` fix on a GPU: column/split tests of test_cuda.py, test_aot_cuda.py (GPT-2
# training gradients against eager), test_cuda_dynamic.py, in 12 shards; then the training
# step (eager, torchferro) and a chrome trace of one step with our sources; dynamic_seq last.
# Run: run(command="bash scripts/gpu_session22c.sh", carry=["build/cp312"]).
set -u
. scripts/gpu_env.sh
J=12
pids=()
for ((i = 0; i < J; i++)); do
  ( TORCHFERRO_SHARD=$i TORCHFERRO_NSHARDS=$J OMP_NUM_THREADS=1 timeout 200 python3 -m pytest -q \
      -p no:cacheprovider -p pytest_shard -rfEx tests/test_aot_cuda.py tests/test_cuda_dynamic.py \
      "tests/test_cuda.py::test_column_sums_over_many_rows" \
      "tests/test_cuda.py::test_split_reductions_of_few_long_rows" \
      "tests/test_cuda.py::test_norms_shapes_and_dtypes" > $OUT/pytest-$i.log 2>&1 ) &
  pids+=("$!")
done
for p in "${pids[@]}"; do wait $p; done
for f in $OUT/pytest-*.log; do tail -n 1 $f; done > $OUT/summary.txt
grep -h -E "^(FAILED|ERROR|XPASS)" $OUT/pytest-*.log >> $OUT/summary.txt
( timeout 80 python3 bench/train_cuda.py --amp --steps 5 --only eager,torchferro ) > $OUT/train_amp.txt 2>&1
mkdir -p $OUT/trace
timeout 90 python3 scripts/gpu_train_trace.py $OUT/trace > $OUT/trace/log.txt 2>&1
gzip $OUT/trace/trace.json 2>/dev/null
tar -czf $OUT/trace/cu.tgz -C $OUT/trace cu 2>/dev/null && rm -rf $OUT/trace/cu
( TORCHFERRO_CACHE_DIR=$(mktemp -d) TORCHFERRO_LOGS=torchferro,dynamic timeout 60 python3 bench/dynamic_seq.py \
    --device cuda --config tiny --batch 8 --reps 3 --variants eager,torchferro > $OUT/dynseq.txt 2>&1 )
grep -h "torchferro:" $OUT/train_amp.txt >> $OUT/summary.txt
grep -E "dynamic graph|\| torchferro|\| eager" $OUT/dynseq.txt >> $OUT/summary.txt
# One archive: the device call brings back at most 8 files.
tar -czf /tmp/all22c.tgz -C $OUT . && find $OUT -mindepth 1 -delete && mv /tmp/all22c.tgz $OUT/all.tgz
