# GPU (session 23, fourth batch): the float32 attention mask cast in the graph
# (`tracer/src/passes.rs::cast_attention_masks`) and batch_norm left as traced in CUDA autocast
# regions: test_aot_cuda.py's mask tests, the float32-mask probe, resnet50's bf16 step (eager,
# torchferro), GPT-2's (torchferro) and test_aot_cuda.py in full.
# Run: run(command="bash scripts/gpu_session23d.sh", carry=["build/cp312"]).
set -u
. scripts/gpu_env.sh
O=/tmp/o; mkdir -p $O
J=6
pids=()
for ((i = 0; i < J; i++)); do
  ( TORCHFERRO_SHARD=$i TORCHFERRO_NSHARDS=$J OMP_NUM_THREADS=1 exec timeout 150 python3 -m pytest -q -p no:cacheprovider -p pytest_shard -rfEx tests/test_aot_cuda.py tests/test_cuda_models.py > $O/pytest-$i.log 2>&1 ) &
  pids+=("$!")
done
( timeout 60 python3 scripts/gpu_sdpa_f32_mask.py 2>&1 | grep -v Warning ) > $O/f32mask.txt
for p in "${pids[@]}"; do wait $p; done
for f in $O/pytest-*.log; do tail -n 1 $f; done > $O/summary.txt
grep -h -E "^(FAILED|ERROR|XPASS)" $O/pytest-*.log >> $O/summary.txt
cat $O/f32mask.txt >> $O/summary.txt
( timeout 80 python3 bench/train_cuda.py --model resnet50 --batch 64 --amp --steps 5 --only eager,torchferro ) > $O/train_resnet50.txt 2>&1
grep -h "step median\|Error\|error" $O/train_resnet50.txt | head -5 >> $O/summary.txt
( timeout 60 python3 bench/train_cuda.py --amp --steps 5 --only torchferro ) > $O/train_gpt2.txt 2>&1
grep -h "step median" $O/train_gpt2.txt >> $O/summary.txt
cp $O/summary.txt $OUT/
tar -czf $OUT/all.tgz -C /tmp o
