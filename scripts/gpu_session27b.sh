# GPU (session 27, call 2): the CUDA set in 12 shards after channels-last CUDA graphs and the
# column-major GEMM padding; the LM head probe; resnet50's channels-last training step against
# eager and torch.compile; GPT-2 bf16 inference side by side (bench gpt2_amp).
# Run: run(command="bash scripts/gpu_session27b.sh", carry=["build/cp312"]).
set -u
. scripts/gpu_env.sh
. scripts/gpu_shards.sh
O=/tmp/o; mkdir -p $O
nvidia-smi --query-gpu=name --format=csv,noheader > $O/gpu.txt
cuda_set $O 200
( timeout 60 python3 scripts/gpu_lmhead_probe.py ) 2>&1 | grep -v Warn | tail -12 > $O/lmhead.txt
( timeout 150 python3 bench/train_cuda.py --model resnet50 --batch 64 --amp --channels-last --steps 5 ) > $O/train_r50cl.txt 2>&1
( timeout 120 python3 bench/run.py --device cuda --no-chart --no-recompile --out $O/bench --only gpt2_amp ) > $O/bench.log 2>&1
{ cat $O/gpu.txt $O/tests.txt; cat $O/lmhead.txt; tail -6 $O/train_r50cl.txt; grep "gpt2_amp" $O/bench/results.md; } > $OUT/summary.txt
tar -czf $OUT/all.tgz -C /tmp o
