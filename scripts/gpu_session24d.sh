# GPU (session 24, last batch, on the merged head): the CUDA set in 12 shards, resnet50's bf16
# step (eager, torchferro: after the global-average-pool backward) and GPT-2's (torchferro).
# Run: run(command="bash scripts/gpu_session24d.sh", carry=["build/cp312"]).
set -u
. scripts/gpu_env.sh
O=/tmp/o; mkdir -p $O
J=12
FILES="tests/test_cuda.py tests/test_aot_cuda.py tests/test_cuda_dynamic.py tests/test_cuda_models.py tests/test_guards_aliased_getattr.py tests/test_dynamic_int_kernels.py"
pids=()
for ((i = 0; i < J; i++)); do
  ( TORCHFERRO_SHARD=$i TORCHFERRO_NSHARDS=$J OMP_NUM_THREADS=1 exec timeout 240 python3 -m pytest -q -p no:cacheprovider -p pytest_shard -rfEx $FILES > $O/pytest-$i.log 2>&1 ) &
  pids+=("$!")
done
for p in "${pids[@]}"; do wait $p; done
for f in $O/pytest-*.log; do tail -n 1 $f; done > $O/summary.txt
grep -h -E "^(FAILED|ERROR|XPASS)" $O/pytest-*.log >> $O/summary.txt
( timeout 150 python3 bench/train_cuda.py --model resnet50 --batch 64 --amp --steps 5 --only eager,torchferro ) > $O/train_resnet50.txt 2>&1
grep -h "step median\|Error\|error" $O/train_resnet50.txt | head -5 >> $O/summary.txt
( timeout 80 python3 bench/train_cuda.py --amp --steps 5 --only torchferro ) > $O/train_gpt2.txt 2>&1
grep -h "step median" $O/train_gpt2.txt >> $O/summary.txt
cp $O/summary.txt $OUT/
tar -czf $OUT/all.tgz -C /tmp o
