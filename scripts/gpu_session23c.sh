# GPU (session 23, third batch, on the final merged head): the CUDA set in 12 shards; the GPT-2 124M
# bf16 step and resnet50 batch 64 bf16 step with eager, torchferro and torch.compile; one-step
# trace of GPT-2 for torchferro (session 23r has torch.compile's). One archive plus summary.txt.
# Run: run(command="bash scripts/gpu_session23c.sh", carry=["build/cp312"]).
set -u
. scripts/gpu_env.sh
O=/tmp/o; mkdir -p $O
J=12
FILES="tests/test_guards_hit.py tests/test_cuda.py tests/test_aot_cuda.py tests/test_cuda_dynamic.py tests/test_cuda_models.py tests/test_guards_aliased_getattr.py tests/test_dynamic_int_kernels.py"
pids=()
for ((i = 0; i < J; i++)); do
  ( TORCHFERRO_SHARD=$i TORCHFERRO_NSHARDS=$J OMP_NUM_THREADS=1 exec timeout 200 python3 -m pytest -q -p no:cacheprovider -p pytest_shard -rfEx $FILES > $O/pytest-$i.log 2>&1 ) &
  pids+=("$!")
done
for p in "${pids[@]}"; do wait $p; done
for f in $O/pytest-*.log; do tail -n 1 $f; done > $O/summary.txt
grep -h -E "^(FAILED|ERROR|XPASS)" $O/pytest-*.log >> $O/summary.txt
( timeout 80 python3 bench/train_cuda.py --amp --steps 5 --only eager,torchferro ) > $O/train_gpt2.txt 2>&1
grep -h "step median" $O/train_gpt2.txt >> $O/summary.txt
( timeout 80 python3 bench/train_cuda.py --model resnet50 --batch 64 --amp --steps 5 --only eager,torchferro ) > $O/train_resnet50.txt 2>&1
grep -h "step median\|Error\|error" $O/train_resnet50.txt | head -5 >> $O/summary.txt
mkdir -p $O/trace
( timeout 60 python3 scripts/gpu_train_trace.py $O/trace && python3 scripts/trace_kernels.py $O/trace/trace.json > $O/trace/kernels.txt ) > $O/trace/log.txt 2>&1
gzip $O/trace/*.json 2>/dev/null
tar -czf $O/trace/cu.tgz -C $O/trace cu 2>/dev/null && rm -rf $O/trace/cu
cp $O/summary.txt $OUT/
tar -czf $OUT/all.tgz -C /tmp o
