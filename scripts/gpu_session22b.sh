# GPU (session 22, second call): the `.to(device)` fix for symbolic CUDA graphs
# (tests/test_cuda_dynamic.py in 4 shards beside dynamic_seq on CUDA), then a chrome trace of
# one GPT-2 bf16 training step with our kernels' sources (scripts/gpu_train_trace.py).
# Run: run(command="bash scripts/gpu_session22b.sh", carry=["build/cp312"]).
set -u
. scripts/gpu_env.sh
pids=()
for i in 0 1 2 3; do
  ( TORCHFERRO_SHARD=$i TORCHFERRO_NSHARDS=4 OMP_NUM_THREADS=2 timeout 170 python3 -m pytest -q \
      -p no:cacheprovider -p pytest_shard -rfEx tests/test_cuda_dynamic.py > $OUT/cudadyn-$i.log 2>&1 ) &
  pids+=("$!")
done
( TORCHFERRO_CACHE_DIR=$(mktemp -d) TORCHFERRO_LOGS=torchferro,dynamic timeout 120 python3 bench/dynamic_seq.py \
    --device cuda --config tiny --batch 8 --reps 3 --variants eager,torchferro > $OUT/dynseq.txt 2>&1 )
for p in "${pids[@]}"; do wait $p; done
mkdir -p $OUT/trace
timeout 150 python3 scripts/gpu_train_trace.py $OUT/trace > $OUT/trace/log.txt 2>&1
gzip $OUT/trace/trace.json
tar -czf $OUT/trace/cu.tgz -C $OUT/trace cu && rm -rf $OUT/trace/cu
for f in $OUT/cudadyn-*.log; do tail -n 1 $f; done > $OUT/summary.txt
grep -h -E "^(FAILED|ERROR|XPASS)" $OUT/cudadyn-*.log >> $OUT/summary.txt
grep -E "dynamic graph|\| torchferro|\| eager" $OUT/dynseq.txt >> $OUT/summary.txt
