# GPU (session 27, call 3, after the helpers' merges): the CUDA set in 12 shards; the LM head
# probe (whole output); GPT-2's and resnet50's bf16 training steps against eager and
# torch.compile; GPT-2 bf16 and resnet50 inference side by side (bench).
# Run: run(command="bash scripts/gpu_session27c.sh", carry=["build/cp312"]).
set -u
. scripts/gpu_env.sh
. scripts/gpu_shards.sh
O=/tmp/o; mkdir -p $O
nvidia-smi --query-gpu=name --format=csv,noheader > $O/gpu.txt
cuda_set $O 200
( timeout 60 python3 scripts/gpu_lmhead_probe.py ) 2>&1 | grep -v -i warn > $O/lmhead.txt
( timeout 130 python3 bench/train_cuda.py --amp --steps 5 ) > $O/train_gpt2.txt 2>&1
( timeout 130 python3 bench/train_cuda.py --model resnet50 --batch 64 --amp --steps 5 ) > $O/train_r50.txt 2>&1
( timeout 150 python3 bench/run.py --device cuda --no-chart --no-recompile --out $O/bench --only gpt2_amp,resnet50 ) > $O/bench.log 2>&1
{ cat $O/gpu.txt $O/tests.txt $O/lmhead.txt; tail -4 $O/train_gpt2.txt; tail -4 $O/train_r50.txt; grep -E "gpt2_amp|resnet50" $O/bench/results.md; } > $OUT/summary.txt
tar -czf $OUT/all.tgz -C /tmp o
