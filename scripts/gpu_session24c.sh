# GPU (session 24, third batch): batch norm of bfloat16 activations written out in the joint
# graph (forward statistics ours, backward from the saved statistics): resnet50's bf16 step
# (eager, torchferro, torch.compile) and its kernel table, GPT-2's step (torchferro), then
# test_aot_cuda.py and test_cuda_models.py in 8 shards.
# Run: run(command="bash scripts/gpu_session24c.sh", carry=["build/cp312"]).
set -u
. scripts/gpu_env.sh
O=/tmp/o; mkdir -p $O
( timeout 200 python3 bench/train_cuda.py --model resnet50 --batch 64 --amp --steps 5 ) > $O/train_resnet50.txt 2>&1
grep -h "step median\|Error\|error" $O/train_resnet50.txt | head -5 > $O/summary.txt
( timeout 150 python3 scripts/gpu_train_trace.py $O --resnet50 ) > $O/trace_tf.log 2>&1
python3 scripts/trace_kernels.py $O/trace_r50.json --top 40 > $O/kernels_tf.txt 2>&1
head -45 $O/kernels_tf.txt >> $O/summary.txt
gzip -f $O/trace_r50.json
tar -czf $O/cu.tgz -C $O cu 2>/dev/null && rm -rf $O/cu
( timeout 80 python3 bench/train_cuda.py --amp --steps 5 --only torchferro ) > $O/train_gpt2.txt 2>&1
grep -h "step median" $O/train_gpt2.txt >> $O/summary.txt
J=8
pids=()
for ((i = 0; i < J; i++)); do
  ( TORCHFERRO_SHARD=$i TORCHFERRO_NSHARDS=$J OMP_NUM_THREADS=1 exec timeout 200 python3 -m pytest -q -p no:cacheprovider -p pytest_shard -rfEx tests/test_aot_cuda.py tests/test_cuda_models.py > $O/pytest-$i.log 2>&1 ) &
  pids+=("$!")
done
for p in "${pids[@]}"; do wait $p; done
for f in $O/pytest-*.log; do tail -n 1 $f; done >> $O/summary.txt
grep -h -E "^(FAILED|ERROR|XPASS)" $O/pytest-*.log >> $O/summary.txt
cp $O/summary.txt $OUT/
tar -czf $OUT/all.tgz -C /tmp o
